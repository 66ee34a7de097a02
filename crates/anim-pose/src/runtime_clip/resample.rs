//! Build-time resampling: the exact source pose (in place with root-motion extraction), the frames of a timeline
//! and the error measurement against the exact evaluation.

use glam::{DAffine3, Quat, Vec3, Vec4};

use super::model_space::{Local, ModelSpace};
use super::timeline::Timeline;
use super::tracks::interpolate;
use super::{Limits, ResampleError};
use crate::root_motion::{wrap_angle, yaw_angle, yaw_twist};
use crate::{Channel, Clip, Interpolation, Property, RootMotion, Skeleton};

/// The three properties, in the order of their `as usize` index.
const PROPERTIES: [Property; 3] = [Property::Translation, Property::Rotation, Property::Scale];

/// Scales under this length are measured with this length as the denominator of the relative error.
const SCALE_FLOOR: f32 = 0.01;

/// The resampled values of one (joint, property).
pub(super) enum Track {
    /// The same value at every frame (within a thousandth of the budget).
    Constant(Vec4),
    /// One value per frame.
    Frames(Vec<Vec4>),
}

/// Every joint's tracks at one rate.
pub(super) struct Resampled {
    /// Per joint, the tracks of translation, rotation and scale.
    pub(super) tracks: Vec<[Track; 3]>,
    /// Per joint and property, true when the channel is STEP, so that the lane holds its frame.
    pub(super) step: Vec<[bool; 3]>,
    /// The extracted root motion, when requested.
    pub(super) root_motion: Option<RootMotion>,
}

/// How the poses at 0 and at the duration compare.
pub(super) struct Seam {
    /// True when every (joint, property) matches within the budget, and the two poses within the model budget.
    pub(super) matches: bool,
    /// Per joint and property, true when it does not.
    discontinuous: Vec<[bool; 3]>,
}

/// The largest errors measured, with the joint where each was reached.
#[derive(Default)]
pub(super) struct Measured {
    /// The largest errors.
    pub(super) error: ResampleError,
    /// The joint of each largest error, by property index, then the joint that carries the virtual vertex of the
    /// largest model-space error.
    worst_joint: [usize; 4],
    /// Per frame interval, the largest ratio of an error measured in it to its limit (infinite for NaN): where
    /// frames are missing.
    pub(super) intervals: Vec<f32>,
}

impl Measured {
    /// Records error `e` of `property` at `joint`. A NaN error is kept, so that it fails the budget.
    fn record(&mut self, property: Property, joint: usize, e: f32) {
        let slot = match property {
            Property::Translation => &mut self.error.translation,
            Property::Rotation => &mut self.error.rotation,
            Property::Scale => &mut self.error.scale,
        };
        if e > *slot || e.is_nan() {
            *slot = e;
            self.worst_joint[property as usize] = joint;
        }
    }

    /// Records `ratio`, an error over its limit, against the frame interval of time `t`.
    fn blame(&mut self, timeline: &Timeline, t: f32, ratio: f32) {
        let last = self.intervals.len().saturating_sub(1);
        let (f, _) = timeline.coords_clamped(t);
        if let Some(slot) = self.intervals.get_mut(f.min(last)) {
            let ratio = if ratio.is_nan() { f32::INFINITY } else { ratio };
            *slot = slot.max(ratio);
        }
    }

    /// Records model-space error `e` of a virtual vertex carried by `joint`. A NaN error is kept.
    fn record_model(&mut self, joint: usize, e: f32) {
        if e > self.error.model || e.is_nan() {
            self.error.model = e;
            self.worst_joint[3] = joint;
        }
    }

    /// The error furthest over its budget, for example "0.310 mm translation error at joint 12 ('forearm_l')" or
    /// "0.214 mm model-space error at joint 20 ('hand_l')".
    pub(super) fn describe_worst(&self, skeleton: &Skeleton, budget: &Limits) -> String {
        let e = &self.error;
        let ratios = [
            e.translation / budget.translation,
            e.rotation / budget.rotation,
            e.scale / budget.scale,
            e.model / budget.model,
        ];
        let worst = (0..4).fold(0, |w, i| {
            if ratios[i] > ratios[w] || ratios[i].is_nan() {
                i
            } else {
                w
            }
        });
        let joint = self.worst_joint[worst];
        let name = skeleton.joint_names.get(joint).map_or("", String::as_str);
        let what = match PROPERTIES.get(worst) {
            Some(Property::Translation) => format!("{:.3} mm translation error", e.translation * 1000.0),
            Some(Property::Rotation) => format!("{:.5} rad rotation error", e.rotation),
            Some(Property::Scale) => format!("{:.5} relative scale error", e.scale),
            None => format!("{:.3} mm model-space error", e.model * 1000.0),
        };
        format!("{what} at joint {joint} ('{name}')")
    }
}

/// The root's pose at time 0, the origin of the extracted motion.
#[derive(Clone, Copy)]
struct RootStart {
    /// The root's translation at time 0.
    translation: Vec3,
    /// The twist about +Y of the root's rotation at time 0.
    twist: Quat,
}

/// The exact pose of a clip, joint by joint, with the root in place when root motion is extracted.
pub(super) struct Source<'a> {
    /// The clip.
    clip: &'a Clip,
    /// Its skeleton.
    skeleton: &'a Skeleton,
    /// Per joint, the index of the channel animating each property.
    channels: Vec<[Option<usize>; 3]>,
    /// The root's start pose, when root motion is extracted.
    root: Option<RootStart>,
}

impl<'a> Source<'a> {
    /// The source of a validated `clip` of `skeleton`.
    pub(super) fn new(clip: &'a Clip, skeleton: &'a Skeleton, extract_root_motion: bool) -> Self {
        let mut channels = vec![[None; 3]; skeleton.joint_count()];
        for (i, c) in clip.channels.iter().enumerate() {
            if let Some(slots) = channels.get_mut(usize::from(c.joint)) {
                slots[c.property as usize] = Some(i);
            }
        }
        let mut source = Self {
            clip,
            skeleton,
            channels,
            root: None,
        };
        if extract_root_motion {
            let translation = source.raw(0, Property::Translation, 0.0).truncate();
            let twist = yaw_twist(Quat::from_vec4(source.raw(0, Property::Rotation, 0.0)));
            source.root = Some(RootStart { translation, twist });
        }
        source
    }

    /// The channel animating `property` of `joint`, if any.
    fn channel(&self, joint: usize, property: Property) -> Option<&'a Channel> {
        let index = self.channels.get(joint)?[property as usize]?;
        self.clip.channels.get(index)
    }

    /// The exact value of `property` of `joint` at `t`, before root-motion extraction.
    fn raw(&self, joint: usize, property: Property, t: f32) -> Vec4 {
        if let Some(c) = self.channel(joint, property) {
            return c.sample(t);
        }
        let rest = self.skeleton.rest_pose.get(joint).copied().unwrap_or_default();
        match property {
            Property::Translation => rest.translation.extend(0.0),
            Property::Rotation => Vec4::from(rest.rotation),
            Property::Scale => rest.scale.extend(0.0),
        }
    }

    /// The exact value of `property` of `joint` at `t`: with root-motion extraction, the root keeps its
    /// translation's XZ at time 0 and its rotation loses the change of yaw since time 0.
    pub(super) fn exact(&self, joint: usize, property: Property, t: f32) -> Vec4 {
        let v = self.raw(joint, property, t);
        match (self.root, joint, property) {
            (Some(start), 0, Property::Translation) => Vec4::new(start.translation.x, v.y, start.translation.z, 0.0),
            (Some(start), 0, Property::Rotation) => {
                let q = Quat::from_vec4(v);
                Vec4::from((start.twist * yaw_twist(q).inverse() * q).normalize())
            }
            _ => v,
        }
    }

    /// The raw root motion at `t`: the root's horizontal offset from time 0, and its yaw angle (not unwrapped).
    fn root_offset(&self, t: f32) -> (Vec3, f32) {
        let start = self.root.map_or(Vec3::ZERO, |s| s.translation);
        let p = self.raw(0, Property::Translation, t).truncate() - start;
        let yaw = yaw_angle(Quat::from_vec4(self.raw(0, Property::Rotation, t)));
        (Vec3::new(p.x, 0.0, p.z), yaw)
    }

    /// The exact local values of `joint` at `t`.
    fn exact_local(&self, joint: usize, t: f32) -> Local {
        PROPERTIES.map(|p| self.exact(joint, p, t))
    }

    /// Compares the poses at 0 and at the duration, joint by joint and in model space.
    pub(super) fn seam(&self, budget: &Limits, model: &ModelSpace<'_>) -> Seam {
        let duration = self.clip.duration;
        let mut matches = true;
        let discontinuous = (0..self.skeleton.joint_count())
            .map(|joint| {
                PROPERTIES.map(|p| {
                    let e = error(p, self.exact(joint, p, 0.0), self.exact(joint, p, duration));
                    let off = e > limit(p, budget) || e.is_nan();
                    matches &= !off;
                    off
                })
            })
            .collect();
        let (mut first, mut last) = (Vec::new(), Vec::new());
        model.world(|j| self.exact_local(j, 0.0), &mut first);
        model.world(|j| self.exact_local(j, duration), &mut last);
        let (e, _) = model.distance(&first, &last);
        matches &= e <= budget.model;
        Seam { matches, discontinuous }
    }

    /// The times strictly inside `(0, duration)` at which a STEP channel changes its value, ascending and
    /// distinct: the times a timeline must hold as frames for STEP values to switch exactly there.
    pub(super) fn step_changes(&self) -> Vec<f32> {
        let duration = self.clip.duration;
        let mut times: Vec<f32> = self
            .clip
            .channels
            .iter()
            .filter(|c| c.interpolation == Interpolation::Step)
            .flat_map(|c| {
                (1..c.key_count())
                    .filter(|&k| c.values[k] != c.values[k - 1])
                    .map(|k| c.times[k])
            })
            .filter(|&t| t > 0.0 && t < duration)
            .collect();
        times.sort_by(f32::total_cmp);
        times.dedup();
        times
    }

    /// The track of `property` of `joint` at the timeline's frames; `limit` is the error limit of the (joint,
    /// property), which decides whether the track is constant.
    fn track(&self, joint: usize, property: Property, timeline: &Timeline, limit: f32) -> Track {
        if self.channel(joint, property).is_none() {
            return Track::Constant(self.exact(joint, property, 0.0));
        }
        let n = timeline.frame_count();
        let mut frames: Vec<Vec4> = (0..n)
            .map(|i| self.exact(joint, property, timeline.frame_time(i)))
            .collect();
        if property == Property::Rotation {
            for i in 1..n {
                if frames[i].dot(frames[i - 1]) < 0.0 {
                    frames[i] = -frames[i];
                }
            }
        }
        if timeline.is_looping() && n > 1 {
            let first = frames[0];
            let flip = property == Property::Rotation && first.dot(frames[n - 2]) < 0.0;
            frames[n - 1] = if flip { -first } else { first };
        }
        if is_constant(&frames, property, limit) {
            Track::Constant(frames[0])
        } else {
            Track::Frames(frames)
        }
    }

    /// The extracted root motion at the timeline's frames.
    fn root_motion(&self, timeline: &Timeline) -> RootMotion {
        let n = timeline.frame_count();
        let mut translations = Vec::with_capacity(n);
        let mut yaws = Vec::with_capacity(n);
        let (mut yaw, mut previous) = (0.0, self.root_offset(0.0).1);
        for i in 0..n {
            let (offset, angle) = self.root_offset(timeline.frame_time(i));
            yaw += wrap_angle(angle - previous);
            previous = angle;
            translations.push(offset);
            yaws.push(yaw);
        }
        RootMotion::new(timeline.clone(), translations, yaws)
    }
}

/// The budget of `property`.
fn limit(property: Property, budget: &Limits) -> f32 {
    match property {
        Property::Translation => budget.translation,
        Property::Rotation => budget.rotation,
        Property::Scale => budget.scale,
    }
}

/// The error of `runtime` against `exact`, in the property's metric.
pub(super) fn error(property: Property, runtime: Vec4, exact: Vec4) -> f32 {
    match property {
        Property::Translation => (runtime - exact).truncate().length(),
        Property::Rotation => rotation_angle(runtime, exact),
        Property::Scale => (runtime - exact).truncate().length() / exact.truncate().length().max(SCALE_FLOOR),
    }
}

/// The angle between two unit quaternions, in radians: `4 asin(|a - b| / 2)` with `b` in `a`'s hemisphere,
/// computed in f64, which stays accurate for small angles where `acos(dot)` does not.
pub(super) fn rotation_angle(a: Vec4, b: Vec4) -> f32 {
    let (a, b) = (a.as_dvec4(), b.as_dvec4());
    let b = if a.dot(b) < 0.0 { -b } else { b };
    (4.0 * ((a - b).length() / 2.0).min(1.0).asin()) as f32
}

/// True when every frame is within a thousandth of `limit`, the error limit of the (joint, property) (plus two ulps
/// of the value), of the first.
fn is_constant(frames: &[Vec4], property: Property, limit: f32) -> bool {
    let Some(&first) = frames.first() else {
        return true;
    };
    let magnitude = first.abs().max_element();
    let tolerance = match property {
        Property::Translation => limit * 1e-3,
        // A component difference of d moves the rotation by at most about 2d radians.
        Property::Rotation => limit * 0.5e-3,
        Property::Scale => limit * 1e-3 * magnitude.max(SCALE_FLOOR),
    } + 2.0 * f32::EPSILON * magnitude;
    frames.iter().all(|v| (*v - first).abs().max_element() <= tolerance)
}

/// How much of a joint's model-space allowance ([`ModelSpace::allowances`]) a constant track may use, against the
/// thousandth of the property's limit: a hundredth, so that the constants along a chain of `D` joints move no
/// virtual vertex more than `D / 100` of the budget in the rest pose, while a track does not have to be constant
/// to the last bit (a thousandth of the root's allowance in a 1.5 m character is 3e-8, below an f32 quaternion's
/// resolution). The measurement sees what the constants cost, whatever the chain.
const ALLOWANCE_SHARE: f32 = 10.0;

/// Resamples every joint at the timeline's frames. A track is constant when its frames stay within a thousandth of
/// its property's limit and a hundredth of the joint's model-space allowance (see [`ALLOWANCE_SHARE`]).
pub(super) fn resample(source: &Source<'_>, timeline: &Timeline, budget: &Limits, model: &ModelSpace<'_>) -> Resampled {
    let joints = source.skeleton.joint_count();
    let tracks = (0..joints)
        .map(|joint| {
            let allowances = model.allowances(joint);
            PROPERTIES.map(|p| {
                let limit = limit(p, budget).min(ALLOWANCE_SHARE * allowances[p as usize]);
                source.track(joint, p, timeline, limit)
            })
        })
        .collect();
    let step = (0..joints)
        .map(|joint| {
            PROPERTIES.map(|p| {
                source
                    .channel(joint, p)
                    .is_some_and(|c| c.interpolation == Interpolation::Step)
            })
        })
        .collect();
    let root_motion = source.root.map(|_| source.root_motion(timeline));
    Resampled {
        tracks,
        step,
        root_motion,
    }
}

/// How long after each key time the measurement looks again, in seconds: a STEP key that switches late, or a kink
/// that the frames miss, shows there.
const AFTER_KEY: f32 = 1e-4;

/// Points per frame interval at which the measurement samples (the frame times, the midpoints between frames, and
/// six more).
const POINTS_PER_INTERVAL: usize = 8;

/// The test times of a channel: its key times, a time [`AFTER_KEY`] after each, and the midpoints between keys,
/// within `[0, duration]`; [`POINTS_PER_INTERVAL`] evenly spaced points in every frame interval of the timeline;
/// and the duration.
fn dense_times(keys: &[f32], timeline: &Timeline, out: &mut Vec<f32>) {
    out.clear();
    let duration = timeline.duration();
    key_times(keys, duration, out);
    for f in 0..timeline.frame_count().saturating_sub(1) {
        let (a, b) = (f64::from(timeline.frame_time(f)), f64::from(timeline.frame_time(f + 1)));
        out.extend((0..POINTS_PER_INTERVAL).map(|i| (a + (b - a) * i as f64 / POINTS_PER_INTERVAL as f64) as f32));
    }
    out.push(duration);
}

/// Appends the key times, a time [`AFTER_KEY`] after each and the midpoints between keys, within `[0, duration]`.
fn key_times(keys: &[f32], duration: f32, out: &mut Vec<f32>) {
    let within = |t: &f32| (0.0..=duration).contains(t);
    for (i, &k) in keys.iter().enumerate() {
        let midpoint = keys.get(i + 1).map(|&next| 0.5 * (k + next));
        out.extend([k, k + AFTER_KEY].into_iter().chain(midpoint).filter(within));
    }
}

/// The value the runtime computes for one (joint, property) at `t`, as `SamplingJob` does.
fn runtime_value(track: &Track, property: Property, mask: f32, timeline: &Timeline, t: f32) -> Vec4 {
    match track {
        Track::Constant(v) => *v,
        Track::Frames(frames) => {
            let (f, u) = timeline.coords(t);
            let next = frames.get(f + 1).unwrap_or(&frames[f]);
            interpolate(property, frames[f], *next, u * mask)
        }
    }
}

/// The model-space measurement of one build: the measure, and the exact poses at the times that do not depend on
/// the layout, computed once.
pub(super) struct PoseCheck<'a> {
    /// The measure.
    pub(super) model: ModelSpace<'a>,
    /// The key times of every channel, merged (`FrameTimes::key_union`), a time [`AFTER_KEY`] after each and the
    /// midpoints between them, within `[0, duration]`, ascending.
    times: Vec<f32>,
    /// The exact world pose at each of `times`, `joint_count` matrices per time.
    exact: Vec<DAffine3>,
}

impl<'a> PoseCheck<'a> {
    /// The check of `source` with `model`, whose layout-independent test times come from `keys`, the merged key
    /// times of the clip with 0 and the duration.
    pub(super) fn new(source: &Source<'_>, model: ModelSpace<'a>, keys: &[f32]) -> Self {
        let mut times = Vec::new();
        key_times(keys, source.clip.duration, &mut times);
        times.sort_by(f32::total_cmp);
        times.dedup();
        let joints = source.skeleton.joint_count();
        let mut exact = Vec::with_capacity(times.len() * joints);
        let mut pose = Vec::with_capacity(joints);
        for &t in &times {
            model.world(|j| source.exact_local(j, t), &mut pose);
            exact.extend_from_slice(&pose);
        }
        Self { model, times, exact }
    }
}

/// Measures the resampled tracks against the exact evaluation, joint by joint and in model space; see
/// [`crate::RuntimeClip`] for the test times and the intervals left out.
pub(super) fn measure(
    source: &Source<'_>,
    timeline: &Timeline,
    resampled: &Resampled,
    seam: &Seam,
    poses: &PoseCheck<'_>,
    budget: &Limits,
) -> Measured {
    let mut measured = Measured {
        intervals: vec![0.0; timeline.frame_count().saturating_sub(1)],
        ..Measured::default()
    };
    let duration = timeline.duration();
    let last = timeline.last_interval();
    let mut times = Vec::new();
    for (joint, tracks) in resampled.tracks.iter().enumerate() {
        for p in PROPERTIES {
            let Some(c) = source.channel(joint, p) else {
                continue;
            };
            let seam_cut = timeline.is_looping() && seam.discontinuous[joint][p as usize];
            dense_times(&c.times, timeline, &mut times);
            let mask = if c.interpolation == Interpolation::Step {
                0.0
            } else {
                1.0
            };
            let track = &tracks[p as usize];
            for &t in times.iter().filter(|&&t| !(seam_cut && t >= duration - 1.001 * last)) {
                let e = error(p, runtime_value(track, p, mask, timeline, t), source.exact(joint, p, t));
                measured.record(p, joint, e);
                measured.blame(timeline, t, e / limit(p, budget));
            }
        }
    }
    measure_model_space(source, timeline, resampled, seam, poses, budget.model, &mut measured);
    if let Some(motion) = &resampled.root_motion {
        measure_root_motion(source, timeline, motion, budget, &mut measured);
    }
    measured
}

/// Where in each frame interval whole poses are measured: the midpoint, where a resampled cubic spline strays
/// most, and `1/2 ∓ 1/(2√3)`, where a normalized lerp strays most from the slerp between the same two rotations
/// (it matches it at the midpoint).
const POSE_POINTS: [f64; 3] = [0.211_324_865_405_187_1, 0.5, 0.788_675_134_594_812_9];

/// Measures whole poses in model space: the runtime's local values at every joint against the exact ones, carried
/// along the skeleton in f64, at the check's key-derived times, at [`POSE_POINTS`] of every frame interval and at
/// the duration. A looping clip whose seam does not match leaves out its last frame interval.
fn measure_model_space(
    source: &Source<'_>,
    timeline: &Timeline,
    resampled: &Resampled,
    seam: &Seam,
    poses: &PoseCheck<'_>,
    limit: f32,
    measured: &mut Measured,
) {
    let duration = timeline.duration();
    let cut = if timeline.is_looping() && !seam.matches {
        duration - 1.001 * timeline.last_interval()
    } else {
        f32::INFINITY
    };
    let masks: Vec<[f32; 3]> = resampled
        .step
        .iter()
        .map(|s| s.map(|step| if step { 0.0 } else { 1.0 }))
        .collect();
    let joints = source.skeleton.joint_count();
    let (mut exact, mut runtime) = (Vec::with_capacity(joints), Vec::with_capacity(joints));
    let mut compare = |t: f32, exact: &[DAffine3]| {
        poses.model.world(
            |j| {
                let tracks = &resampled.tracks[j];
                PROPERTIES.map(|p| runtime_value(&tracks[p as usize], p, masks[j][p as usize], timeline, t))
            },
            &mut runtime,
        );
        let (e, joint) = poses.model.distance(&runtime, exact);
        measured.record_model(joint, e);
        measured.blame(timeline, t, e / limit);
    };
    for (i, &t) in poses.times.iter().enumerate() {
        if t < cut {
            compare(t, &poses.exact[i * joints..(i + 1) * joints]);
        }
    }
    let between = (0..timeline.frame_count().saturating_sub(1)).flat_map(|f| {
        let (a, b) = (f64::from(timeline.frame_time(f)), f64::from(timeline.frame_time(f + 1)));
        POSE_POINTS.map(|u| (a + (b - a) * u) as f32)
    });
    for t in between.chain([duration]).filter(|&t| t < cut) {
        poses.model.world(|j| source.exact_local(j, t), &mut exact);
        compare(t, &exact);
    }
}

/// Measures the root-motion track against the exact extracted motion, as joint 0's translation and rotation.
fn measure_root_motion(
    source: &Source<'_>,
    timeline: &Timeline,
    motion: &RootMotion,
    budget: &Limits,
    measured: &mut Measured,
) {
    let mut keys: Vec<f32> = [Property::Translation, Property::Rotation]
        .into_iter()
        .filter_map(|p| source.channel(0, p))
        .flat_map(|c| c.times.iter().copied())
        .collect();
    keys.sort_by(f32::total_cmp);
    let mut times = Vec::new();
    dense_times(&keys, timeline, &mut times);
    for t in times {
        let (offset, angle) = source.root_offset(t);
        let (f, _) = timeline.coords_clamped(t);
        // Unwrap the exact yaw against the nearest earlier frame, whose yaw is already unwrapped.
        let frame_angle = source.root_offset(timeline.frame_time(f)).1;
        let yaw = motion.frame_yaw(f) + wrap_angle(angle - frame_angle);
        let runtime = motion.offset_at(t);
        let (et, er) = ((runtime.translation - offset).length(), (runtime.yaw - yaw).abs());
        measured.record(Property::Translation, 0, et);
        measured.record(Property::Rotation, 0, er);
        measured.blame(timeline, t, (et / budget.translation).max(er / budget.rotation));
    }
}

#[cfg(test)]
mod tests {
    use super::super::timeline::frame_count;
    use super::*;
    use crate::runtime_clip::tests::{chain, channel, clip};

    #[test]
    fn the_measurement_sees_step_keys_and_kinks_between_uniform_frames() {
        // On a 15 Hz grid over 1.3 s, STEP keys at 0.05, 0.15, 0.45 and 1.3 s and a LINEAR spike at 0.1 s fall
        // between frames: the measurement at the key times and 0.1 ms after them sees both.
        let skeleton = chain(3);
        let keys = [0.05, 0.15, 0.45, 1.3];
        let step = channel(1, Property::Translation, Interpolation::Step, &keys, |t| {
            Vec4::new(10.0 * t, 0.0, 0.0, 0.0)
        });
        let spike = channel(2, Property::Translation, Interpolation::Linear, &[0.0, 0.1, 0.2], |t| {
            Vec4::new(0.0, if t == 0.1 { 0.01 } else { 0.0 }, 0.0, 0.0)
        });
        let c = clip("steps", vec![step, spike]);
        let timeline = Timeline::uniform(c.duration, frame_count(c.duration, 15.0), false);
        let measured = measure_on(&c, &skeleton, &timeline);
        // The STEP jump of 3 m at 0.45 s shows up to a frame late (the one at 1.3 s falls on the last frame); the
        // spike's top is missed by the frames on either side of it. In model space, the jump moves joint 1 and
        // its child by 3 m too, and the frame interval around 0.45 s takes the blame.
        assert!((measured.error.translation - 3.0).abs() < 1e-4, "{:?}", measured.error);
        assert!((measured.error.model - 3.0).abs() < 1e-4, "{:?}", measured.error);
        assert!(measured.intervals[6] > 1e4, "{:?}", measured.intervals);
        let spike_only = clip("spike", vec![c.channels[1].clone()]);
        let measured = measure_on(&spike_only, &skeleton, &timeline);
        assert!(measured.error.translation > 3e-3, "{:?}", measured.error);
        assert!(measured.error.model > 3e-3, "{:?}", measured.error);
    }

    /// Resamples `c` at `timeline` and measures it with the default limits and 3 cm cubes around the joints.
    fn measure_on(c: &Clip, skeleton: &Skeleton, timeline: &Timeline) -> Measured {
        let budget = Limits {
            translation: 1e-4,
            rotation: 1e-3,
            scale: 1e-3,
            model: 1e-4,
        };
        let model = ModelSpace::new(skeleton, 0.03, None, budget.model);
        let source = Source::new(c, skeleton, false);
        let seam = source.seam(&budget, &model);
        let keys = crate::runtime_clip::layout::Search::key_times(c, &crate::RuntimeClipOptions::default());
        let poses = PoseCheck::new(&source, model, &keys);
        let resampled = resample(&source, timeline, &budget, &poses.model);
        measure(&source, timeline, &resampled, &seam, &poses, &budget)
    }

    #[test]
    fn rotation_angle_is_accurate_for_small_angles() {
        for angle in [0.0, 1e-5, 1e-3, 0.5, 3.0] {
            let a = Vec4::from(Quat::from_rotation_y(0.3));
            let b = Vec4::from(Quat::from_rotation_y(0.3 + angle));
            assert!((rotation_angle(a, b) - angle).abs() <= 1e-6 + angle * 1e-5, "{angle}");
            assert!(
                (rotation_angle(a, -b) - angle).abs() <= 1e-6 + angle * 1e-5,
                "{angle} flipped"
            );
        }
    }

    #[test]
    fn scale_error_is_relative_above_the_floor() {
        let e = error(
            Property::Scale,
            Vec4::new(2.002, 0.0, 0.0, 0.0),
            Vec4::new(2.0, 0.0, 0.0, 0.0),
        );
        assert!((e - 1e-3).abs() < 1e-5, "{e}");
        let e = error(Property::Scale, Vec4::new(1e-4, 0.0, 0.0, 0.0), Vec4::ZERO);
        assert!((e - 1e-2).abs() < 1e-6, "{e}");
    }
}
