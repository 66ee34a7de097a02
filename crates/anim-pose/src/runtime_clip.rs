//! Runtime clips: imported clips resampled to a uniform rate and stored SoA, four joints per lane set.
//!
//! [`RuntimeClip`] documents the format, the choice of rate and how the error is measured.

mod resample;

use glam::{Quat, Vec3, Vec4};

use crate::{Clip, Error, Property, Result, RootMotion, Skeleton, SoaQuat, SoaVec3, Transform, num_soa_joints};

/// The largest resampling error a runtime clip may have against the exact glTF evaluation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorBudget {
    /// Largest local translation error, in metres (model units). Default 0.1 mm.
    pub translation: f32,
    /// Largest local rotation error, in radians. Default 0.001 rad.
    pub rotation: f32,
}

impl Default for ErrorBudget {
    fn default() -> Self {
        Self {
            translation: 1e-4,
            rotation: 1e-3,
        }
    }
}

/// Whether a runtime clip loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Looping {
    /// Loops when the clip's first and last poses match within the error budget.
    #[default]
    Auto,
    /// Always loops: sampling at `t` wraps modulo the duration.
    Yes,
    /// Never loops: sampling clamps to `[0, duration]`.
    No,
}

/// How to build a runtime clip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RuntimeClipOptions {
    /// The resampling error budget.
    pub budget: ErrorBudget,
    /// The lowest sampling rate considered, in Hz. Default 15.
    pub min_rate_hz: f32,
    /// The highest sampling rate considered, in Hz; past it the build fails with an error naming the clip and
    /// the error reached. Default 240.
    pub max_rate_hz: f32,
    /// Whether the clip loops.
    pub looping: Looping,
    /// Extract the root joint's horizontal translation and yaw into a [`RootMotion`] track, leaving the clip in
    /// place.
    pub extract_root_motion: bool,
    /// Largest relative local scale error, `|runtime - exact| / max(|exact|, 0.01)`. Default 1e-3, below what
    /// a viewer can see on a bone's length.
    ///
    /// It lives here rather than in [`ErrorBudget`] so that budgets written as struct literals keep compiling.
    pub scale_budget: f32,
}

impl Default for RuntimeClipOptions {
    fn default() -> Self {
        Self {
            budget: ErrorBudget::default(),
            min_rate_hz: 15.0,
            max_rate_hz: 240.0,
            looping: Looping::Auto,
            extract_root_motion: false,
            scale_budget: 1e-3,
        }
    }
}

/// The measured resampling error of a runtime clip against the exact evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct ResampleError {
    /// Largest local translation error over all joints and test times, in metres.
    pub translation: f32,
    /// Largest local rotation error over all joints and test times, in radians.
    pub rotation: f32,
    /// Largest relative local scale error over all joints and test times; see
    /// [`RuntimeClipOptions::scale_budget`].
    pub scale: f32,
}

impl ResampleError {
    /// True when every error is within the budgets of `options`.
    pub fn meets(&self, options: &RuntimeClipOptions) -> bool {
        Limits::new(options).admit(self)
    }
}

/// The three error limits of a build: the [`ErrorBudget`] and the scale budget.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Largest translation error, in model units.
    pub(crate) translation: f32,
    /// Largest rotation error, in radians.
    pub(crate) rotation: f32,
    /// Largest relative scale error.
    pub(crate) scale: f32,
}

impl Limits {
    /// The limits of `options`.
    fn new(options: &RuntimeClipOptions) -> Self {
        Self {
            translation: options.budget.translation,
            rotation: options.budget.rotation,
            scale: options.scale_budget,
        }
    }

    /// True when every error is within its limit (NaN never is).
    fn admit(&self, e: &ResampleError) -> bool {
        e.translation <= self.translation && e.rotation <= self.rotation && e.scale <= self.scale
    }
}

/// The rates tried, in Hz, from `min_rate_hz` up to `max_rate_hz`.
///
/// They include the common authoring rates (24, 30, 60 Hz and their multiples), at which keys baked at those
/// rates fall on frames and resample exactly.
const RATE_LADDER: [f32; 13] = [
    15.0, 20.0, 24.0, 30.0, 40.0, 48.0, 60.0, 80.0, 96.0, 120.0, 160.0, 200.0, 240.0,
];

/// The uniform frame times of a runtime clip and the mapping from a sampling time to a frame pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Timeline {
    /// Duration in seconds.
    duration: f32,
    /// Number of frames, at least one.
    frame_count: usize,
    /// `(frame_count - 1) / duration`, or 0 for a single frame.
    time_scale: f32,
    /// True when sampling wraps; never for a zero duration.
    looping: bool,
}

impl Timeline {
    /// A timeline of `frame_count` uniform frames over `[0, duration]`.
    pub(crate) fn new(duration: f32, frame_count: usize, looping: bool) -> Self {
        let frame_count = frame_count.max(1);
        let time_scale = if frame_count > 1 && duration > 0.0 {
            (frame_count - 1) as f32 / duration
        } else {
            0.0
        };
        Self {
            duration,
            frame_count,
            time_scale,
            looping: looping && duration > 0.0,
        }
    }

    /// Duration in seconds.
    pub(crate) fn duration(&self) -> f32 {
        self.duration
    }

    /// Number of frames.
    pub(crate) fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// True when sampling wraps.
    pub(crate) fn is_looping(&self) -> bool {
        self.looping
    }

    /// The time of frame `i`: `i * duration / (frame_count - 1)`, exactly the duration for the last frame.
    pub(crate) fn frame_time(&self, i: usize) -> f32 {
        if self.frame_count <= 1 {
            0.0
        } else {
            (i as f64 * f64::from(self.duration) / (self.frame_count - 1) as f64) as f32
        }
    }

    /// The frame pair `(f, f + 1)` and the fraction `u` in `[0, 1]` between them for a finite `time`, wrapped
    /// for a looping clip and clamped otherwise. With a single frame, `(0, 0.0)`.
    #[inline]
    pub(crate) fn coords(&self, time: f32) -> (usize, f32) {
        let t = if self.looping {
            time.rem_euclid(self.duration)
        } else {
            time.clamp(0.0, self.duration)
        };
        self.coords_in_range(t)
    }

    /// As [`Timeline::coords`], but always clamping to `[0, duration]`, even for a looping clip.
    #[inline]
    pub(crate) fn coords_clamped(&self, time: f32) -> (usize, f32) {
        self.coords_in_range(time.clamp(0.0, self.duration))
    }

    #[inline]
    fn coords_in_range(&self, t: f32) -> (usize, f32) {
        let x = t * self.time_scale;
        // `as` floors the non-negative x (and maps NaN to 0).
        let f = (x as usize).min(self.frame_count.saturating_sub(2));
        let u = (x - f as f32).min(1.0);
        (f, u)
    }
}

/// The stored tracks of one property (translation, rotation or scale), for every SoA group.
///
/// Every group is either constant (one value in `const_values`) or animated (a column of `frames`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Tracks<T> {
    /// The constant groups, ascending.
    pub(crate) const_groups: Vec<u16>,
    /// The value of each constant group.
    pub(crate) const_values: Vec<T>,
    /// The animated groups, ascending: the order of a frame row.
    pub(crate) anim_groups: Vec<u16>,
    /// Per animated group, the interpolation mask: lane 1.0 interpolates, 0.0 holds frame `f` (STEP).
    pub(crate) masks: Vec<Vec4>,
    /// Frame-major values: row `f` holds frame `f` of every animated group.
    pub(crate) frames: Vec<T>,
}

impl<T> Tracks<T> {
    /// Rows `f` and `f + 1`, or two empty rows when there is no animated group.
    #[inline]
    pub(crate) fn rows(&self, f: usize) -> (&[T], &[T]) {
        let n = self.anim_groups.len();
        self.frames
            .get(f * n..(f + 2) * n)
            .map_or((&[], &[]), |rows| rows.split_at(n))
    }

    /// Heap bytes held.
    fn memory_bytes(&self) -> usize {
        size_of_val(self.const_groups.as_slice())
            + size_of_val(self.const_values.as_slice())
            + size_of_val(self.anim_groups.as_slice())
            + size_of_val(self.masks.as_slice())
            + size_of_val(self.frames.as_slice())
    }
}

/// A SoA value whose lanes can be read as `Vec4`s: `(x, y, z, 0)` for vectors, `(x, y, z, w)` for quaternions.
pub(crate) trait Lanes: Copy {
    /// Builds the value from four lanes.
    fn from_lanes(lanes: [Vec4; 4]) -> Self;
    /// Reads lane `lane` (0 to 3).
    fn lane4(&self, lane: usize) -> Vec4;
}

impl Lanes for SoaVec3 {
    fn from_lanes(l: [Vec4; 4]) -> Self {
        Self {
            x: Vec4::new(l[0].x, l[1].x, l[2].x, l[3].x),
            y: Vec4::new(l[0].y, l[1].y, l[2].y, l[3].y),
            z: Vec4::new(l[0].z, l[1].z, l[2].z, l[3].z),
        }
    }

    fn lane4(&self, lane: usize) -> Vec4 {
        self.lane(lane).extend(0.0)
    }
}

impl Lanes for SoaQuat {
    fn from_lanes(l: [Vec4; 4]) -> Self {
        Self {
            x: Vec4::new(l[0].x, l[1].x, l[2].x, l[3].x),
            y: Vec4::new(l[0].y, l[1].y, l[2].y, l[3].y),
            z: Vec4::new(l[0].z, l[1].z, l[2].z, l[3].z),
            w: Vec4::new(l[0].w, l[1].w, l[2].w, l[3].w),
        }
    }

    fn lane4(&self, lane: usize) -> Vec4 {
        Vec4::from(self.lane(lane))
    }
}

impl<T: Lanes> Tracks<T> {
    /// The reference value of lane `lane` of group `group` at frame pair `(f, u)`: the constant, or the
    /// interpolation of the two stored frames with the lane's mask applied.
    fn reference_lane(&self, group: usize, lane: usize, f: usize, u: f32, property: Property) -> Vec4 {
        let Ok(group) = u16::try_from(group) else {
            return padding(property);
        };
        if let Ok(i) = self.const_groups.binary_search(&group) {
            return self.const_values[i].lane4(lane);
        }
        let Ok(i) = self.anim_groups.binary_search(&group) else {
            return padding(property);
        };
        let n = self.anim_groups.len();
        let a = self.frames[f * n + i].lane4(lane);
        let b = self.frames[(f + 1) * n + i].lane4(lane);
        interpolate(property, a, b, u * self.masks[i][lane])
    }
}

/// The value of padding lanes, and of joints past the end: the identity.
fn padding(property: Property) -> Vec4 {
    match property {
        Property::Translation => Vec4::ZERO,
        Property::Rotation => Vec4::W,
        Property::Scale => Vec4::new(1.0, 1.0, 1.0, 0.0),
    }
}

/// The scalar twin of the SoA interpolation: `a + (b - a) * u` for vectors, and for rotations the normalized
/// lerp without a hemisphere test (the build made consecutive frames hemisphere-consistent). The arithmetic is
/// the same, in the same order, as the SoA kernel's, so both give the same floats.
pub(crate) fn interpolate(property: Property, a: Vec4, b: Vec4, u: f32) -> Vec4 {
    match property {
        Property::Translation | Property::Scale => lerp3(a.truncate(), b.truncate(), u).extend(0.0),
        Property::Rotation => Vec4::from(nlerp(Quat::from_vec4(a), Quat::from_vec4(b), u)),
    }
}

/// `a + (b - a) * u`, component by component.
fn lerp3(a: Vec3, b: Vec3, u: f32) -> Vec3 {
    Vec3::new(a.x + (b.x - a.x) * u, a.y + (b.y - a.y) * u, a.z + (b.z - a.z) * u)
}

/// `normalize(a + (b - a) * u)` without a hemisphere test; a zero-length result becomes the identity, as in
/// [`SoaQuat::normalize`].
fn nlerp(a: Quat, b: Quat, u: f32) -> Quat {
    let x = a.x + (b.x - a.x) * u;
    let y = a.y + (b.y - a.y) * u;
    let z = a.z + (b.z - a.z) * u;
    let w = a.w + (b.w - a.w) * u;
    let len2 = x * x + y * y + z * z + w * w;
    if len2 > 1e-20 {
        let inv = 1.0 / len2.sqrt();
        Quat::from_xyzw(x * inv, y * inv, z * inv, w * inv)
    } else {
        Quat::IDENTITY
    }
}

/// An immutable, uniformly sampled, SoA clip for one skeleton.
///
/// # Resampling
///
/// [`RuntimeClip::build`] evaluates every joint's translation, rotation and scale with the exact glTF
/// evaluator ([`crate::Channel::sample`]) at `F = ceil(duration * rate) + 1` uniform frame times
/// `i * duration / (F - 1)`, so that the last frame falls on the duration; a clip of duration 0 has one frame.
/// The rate is the first rung of a ladder (15, 20, 24, 30, 40, 48, 60, 80, 96, 120, 160, 200 and 240 Hz, with
/// `min_rate_hz` and `max_rate_hz` added as rungs when they are not on it) from `min_rate_hz` up to
/// `max_rate_hz` whose measured error meets the [`ErrorBudget`].
///
/// # Error measurement
///
/// The error of a rate is measured between what [`crate::SamplingJob`] computes from the stored frames and the
/// exact evaluation, for every animated (joint, property), at every key time and key midpoint of the channel in
/// `[0, duration]`, on a uniform grid of eight points per frame interval, and at the duration.
/// - Translation error is the distance, in model units.
/// - Rotation error is the angle between the two rotations, in radians, computed in f64 from the chord
///   `|a - b|` (not from `acos(dot)`, which cannot resolve angles under about 1e-3 rad in f32).
/// - Scale error is relative: `|a - b| / max(|exact|, 0.01)`, within [`RuntimeClipOptions::scale_budget`].
///   The floor of 0.01 keeps scales that collapse to zero from demanding an infinite rate.
/// - STEP channels are discontinuous, so no uniform rate can follow them exactly. Their lanes hold their frame
///   (interpolation mask 0), and the times from a thousandth of a frame interval before each STEP key that
///   changes the value to one frame interval after it are left out of the measurement: at most one frame
///   interval late is the accepted cost of a STEP key.
/// - A looping clip whose first and last poses differ by more than the budget in some channel
///   (only possible with [`Looping::Yes`]) has a seam the runtime smooths over the last frame interval; that
///   interval is left out of the measurement for that channel.
/// - With root-motion extraction, the root's in-place translation and rotation are measured against the exact
///   in-place values, and the root-motion track's translation and yaw against the exact extracted motion.
///
/// # Storage
///
/// Joints are grouped four to a lane set, as in [`crate::SoaTransform`]. For each (group, property), a track whose four
/// lanes are constant over the clip (every frame within a thousandth of the budget of the first, plus two ulps)
/// is stored once; the other tracks store every frame. Animated tracks are frame-major, one row of
/// consecutive groups per frame, so that sampling one time reads two contiguous rows per property.
/// Consecutive rotation frames are made hemisphere-consistent at build time (`q[f + 1]` is negated when
/// `dot(q[f], q[f + 1]) < 0`), so that the runtime interpolates rotations along the short path without a
/// per-lane sign test. Each animated track keeps an interpolation mask: lane 1.0 interpolates, 0.0 (STEP)
/// holds frame `f`.
///
/// # Looping
///
/// [`Looping::Auto`] loops when the (in-place, with root-motion extraction) poses at 0 and at the duration
/// match within the budget. A looping clip stores its last frame equal to its first (a rotation may have its
/// sign flipped, to stay in the previous frame's hemisphere) and wraps the sampling time with
/// `t.rem_euclid(duration)`; a non-looping clip clamps it to `[0, duration]`.
#[derive(Clone, Debug)]
pub struct RuntimeClip {
    /// The clip's name.
    name: String,
    /// The rate chosen, in Hz.
    rate_hz: f32,
    /// Frame times and looping.
    timeline: Timeline,
    /// Joints of the skeleton.
    joint_count: usize,
    /// The measured error.
    error: ResampleError,
    /// The extracted root motion.
    root_motion: Option<RootMotion>,
    /// Translation tracks.
    pub(crate) translations: Tracks<SoaVec3>,
    /// Rotation tracks.
    pub(crate) rotations: Tracks<SoaQuat>,
    /// Scale tracks.
    pub(crate) scales: Tracks<SoaVec3>,
}

impl RuntimeClip {
    /// Builds a runtime clip from an imported clip of `skeleton`.
    ///
    /// # Errors
    ///
    /// When the clip does not validate against the skeleton, or no rate up to `max_rate_hz` meets the budget.
    pub fn build(clip: &Clip, skeleton: &Skeleton, options: &RuntimeClipOptions) -> Result<Self> {
        skeleton.validate()?;
        clip.validate(skeleton)?;
        check_options(clip, options)?;
        let budget = &Limits::new(options);
        let source = resample::Source::new(clip, skeleton, options.extract_root_motion);
        let duration = clip.duration;
        let seam = source.seam(budget);
        let looping = duration > 0.0
            && match options.looping {
                Looping::Yes => true,
                Looping::No => false,
                Looping::Auto => seam.matches,
            };
        let mut last = None;
        for rate in candidate_rates(options) {
            let timeline = Timeline::new(duration, frame_count(duration, rate), looping);
            let resampled = resample::resample(&source, &timeline, budget);
            let measured = resample::measure(&source, &timeline, &resampled, &seam);
            if budget.admit(&measured.error) {
                return Ok(Self::pack(clip, skeleton, rate, timeline, resampled, measured.error));
            }
            last = Some((rate, measured));
            if duration == 0.0 {
                break;
            }
        }
        let Some((rate, measured)) = last else {
            return Err(Error::invalid(
                format!("clip '{}'", clip.name),
                "no sampling rate to try",
            ));
        };
        Err(Error::invalid(
            format!("clip '{}'", clip.name),
            format!(
                "no rate up to {rate} Hz meets the budget: {}",
                measured.describe_worst(skeleton, budget)
            ),
        ))
    }

    /// Packs resampled per-joint tracks into SoA storage.
    fn pack(
        clip: &Clip,
        skeleton: &Skeleton,
        rate_hz: f32,
        timeline: Timeline,
        resampled: resample::Resampled,
        error: ResampleError,
    ) -> Self {
        let joint_count = skeleton.joint_count();
        let translations = pack_tracks(&resampled, Property::Translation, &timeline);
        let rotations = pack_tracks(&resampled, Property::Rotation, &timeline);
        let scales = pack_tracks(&resampled, Property::Scale, &timeline);
        Self {
            name: clip.name.clone(),
            rate_hz,
            timeline,
            joint_count,
            error,
            root_motion: resampled.root_motion,
            translations,
            rotations,
            scales,
        }
    }

    /// The clip's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Duration in seconds.
    pub fn duration(&self) -> f32 {
        self.timeline.duration()
    }

    /// The sampling rate chosen, in Hz. Frames are `duration / (frame_count() - 1)` apart, which is at most
    /// `1 / rate_hz()` (give or take a thousandth of an interval; see [`RuntimeClip::frame_count`]).
    pub fn rate_hz(&self) -> f32 {
        self.rate_hz
    }

    /// The number of uniform frames: `ceil(duration * rate_hz) + 1`, or 1 for a clip of duration 0. A product
    /// `duration * rate_hz` within a thousandth of an integer counts as that integer, so that the f32 rounding
    /// of a duration such as 1.1 s does not add a frame.
    pub fn frame_count(&self) -> usize {
        self.timeline.frame_count()
    }

    /// True when sampling wraps.
    pub fn is_looping(&self) -> bool {
        self.timeline.is_looping()
    }

    /// Joints of the skeleton the clip was built for.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// `num_soa_joints(joint_count())`: the length a sampling output needs.
    pub fn num_soa_joints(&self) -> usize {
        num_soa_joints(self.joint_count)
    }

    /// Heap bytes held by the clip's keys: constant values, animated frames, interpolation masks, group
    /// indices and the root-motion track (the name is not counted).
    pub fn memory_bytes(&self) -> usize {
        self.translations.memory_bytes()
            + self.rotations.memory_bytes()
            + self.scales.memory_bytes()
            + self.root_motion.as_ref().map_or(0, RootMotion::memory_bytes)
    }

    /// The measured resampling error.
    pub fn error(&self) -> ResampleError {
        self.error
    }

    /// The extracted root motion, when requested.
    pub fn root_motion(&self) -> Option<&RootMotion> {
        self.root_motion.as_ref()
    }

    /// The frame timeline.
    pub(crate) fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// The plain per-joint reference twin of [`crate::SamplingJob`]: samples the same stored frames at `time`
    /// (wrapped or clamped in the same way, with the same interpolation and STEP hold) one joint at a time,
    /// into `out[..joint_count()]`. Surplus entries are left untouched. Not for the hot path; tests compare the
    /// two.
    ///
    /// # Errors
    ///
    /// [`Error::Job`] when `time` is not finite or `out` has fewer than `joint_count()` entries.
    pub fn sample_reference(&self, time: f32, out: &mut [Transform]) -> Result<()> {
        const JOB: &str = "RuntimeClip::sample_reference";
        if !time.is_finite() {
            return Err(Error::job(JOB, "time", None, "is not finite"));
        }
        let Some(out) = out.get_mut(..self.joint_count) else {
            return Err(Error::job(
                JOB,
                "out",
                None,
                "has fewer entries than the clip's joint count",
            ));
        };
        let (f, u) = self.timeline.coords(time);
        for (joint, o) in out.iter_mut().enumerate() {
            let (group, lane) = (joint / 4, joint % 4);
            let t = self
                .translations
                .reference_lane(group, lane, f, u, Property::Translation);
            let r = self.rotations.reference_lane(group, lane, f, u, Property::Rotation);
            let s = self.scales.reference_lane(group, lane, f, u, Property::Scale);
            *o = Transform {
                translation: t.truncate(),
                rotation: Quat::from_vec4(r),
                scale: s.truncate(),
            };
        }
        Ok(())
    }
}

/// Checks the options' numbers.
fn check_options(clip: &Clip, options: &RuntimeClipOptions) -> Result<()> {
    let object = || format!("runtime clip options for clip '{}'", clip.name);
    let b = &options.budget;
    let positive = |x: f32| x.is_finite() && x > 0.0;
    if !(positive(b.translation) && positive(b.rotation) && positive(options.scale_budget)) {
        return Err(Error::invalid(
            object(),
            format!(
                "the budgets ({} m, {} rad, {} relative scale) must be finite and positive",
                b.translation, b.rotation, options.scale_budget
            ),
        ));
    }
    let (lo, hi) = (options.min_rate_hz, options.max_rate_hz);
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && hi >= lo) {
        return Err(Error::invalid(
            object(),
            format!("the rates must be finite with 0 < min_rate_hz ({lo}) <= max_rate_hz ({hi})"),
        ));
    }
    Ok(())
}

/// The rates to try, ascending: `min_rate_hz`, the ladder's rungs between the two limits, and `max_rate_hz`.
fn candidate_rates(options: &RuntimeClipOptions) -> impl Iterator<Item = f32> {
    let (lo, hi) = (options.min_rate_hz, options.max_rate_hz);
    let ladder = RATE_LADDER.into_iter().filter(move |&r| r > lo && r < hi);
    std::iter::once(lo).chain(ladder).chain((hi > lo).then_some(hi))
}

/// `ceil(duration * rate) + 1` frames, or 1 for a zero duration. A product within a thousandth of an integer
/// counts as that integer, so that a 1.1 s clip at 30 Hz gets 34 frames, not 35, despite the f32 rounding of
/// the duration (the frames are then at most a thousandth of an interval further apart than `1 / rate`).
fn frame_count(duration: f32, rate: f32) -> usize {
    if duration <= 0.0 {
        return 1;
    }
    let intervals = (f64::from(duration) * f64::from(rate) - 1e-3).ceil().max(1.0);
    intervals as usize + 1
}

/// Packs one property of the per-joint tracks into SoA groups.
fn pack_tracks<T: Lanes>(resampled: &resample::Resampled, property: Property, timeline: &Timeline) -> Tracks<T> {
    let joint_count = resampled.tracks.len();
    let groups = num_soa_joints(joint_count);
    let mut tracks = Tracks {
        const_groups: Vec::new(),
        const_values: Vec::new(),
        anim_groups: Vec::new(),
        masks: Vec::new(),
        frames: Vec::new(),
    };
    let lane_track = |group: usize, lane: usize| resampled.tracks.get(4 * group + lane).map(|t| &t[property as usize]);
    let value = |group: usize, lane: usize, frame: usize| match lane_track(group, lane) {
        None => padding(property),
        Some(resample::Track::Constant(v)) => *v,
        Some(resample::Track::Frames(frames)) => frames[frame],
    };
    for group in 0..groups {
        // Group indices fit in u16: the skeleton has at most MAX_JOINTS joints.
        let index = group as u16;
        let animated = (0..4).any(|lane| matches!(lane_track(group, lane), Some(resample::Track::Frames(_))));
        if animated {
            tracks.anim_groups.push(index);
            let mask = |lane: usize| {
                let step = resampled
                    .step
                    .get(4 * group + lane)
                    .is_some_and(|s| s[property as usize]);
                if step { 0.0 } else { 1.0 }
            };
            tracks.masks.push(Vec4::new(mask(0), mask(1), mask(2), mask(3)));
        } else {
            tracks.const_groups.push(index);
            tracks
                .const_values
                .push(T::from_lanes([0, 1, 2, 3].map(|lane| value(group, lane, 0))));
        }
    }
    tracks
        .frames
        .reserve_exact(timeline.frame_count() * tracks.anim_groups.len());
    for frame in 0..timeline.frame_count() {
        for &group in &tracks.anim_groups {
            let group = usize::from(group);
            tracks
                .frames
                .push(T::from_lanes([0, 1, 2, 3].map(|lane| value(group, lane, frame))));
        }
    }
    tracks
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{Channel, Interpolation, NO_PARENT, SamplingJob, SoaTransform};

    /// A chain skeleton of `n` joints, each one unit above its parent.
    pub(crate) fn chain(n: usize) -> Skeleton {
        let parents = (0..n)
            .map(|i| if i == 0 { NO_PARENT } else { (i - 1) as u16 })
            .collect();
        let rest_pose = (0..n)
            .map(|i| Transform {
                translation: Vec3::new(0.0, i.min(1) as f32, 0.0),
                ..Transform::IDENTITY
            })
            .collect();
        Skeleton::from_parents("chain", parents, rest_pose).expect("valid test skeleton")
    }

    /// A channel over `times` with values from `f(t)`.
    pub(crate) fn channel(
        joint: u16,
        property: Property,
        interpolation: Interpolation,
        times: &[f32],
        f: impl Fn(f32) -> Vec4,
    ) -> Channel {
        let values = match interpolation {
            Interpolation::CubicSpline => times.iter().flat_map(|&t| [Vec4::ZERO, f(t), Vec4::ZERO]).collect(),
            Interpolation::Step | Interpolation::Linear => times.iter().map(|&t| f(t)).collect(),
        };
        Channel {
            joint,
            property,
            interpolation,
            times: times.to_vec(),
            values,
        }
    }

    /// A clip named `name` over `channels`, with the duration of the last key.
    pub(crate) fn clip(name: &str, channels: Vec<Channel>) -> Clip {
        let duration = channels
            .iter()
            .filter_map(|c| c.times.last().copied())
            .fold(0.0, f32::max);
        Clip {
            name: name.into(),
            animation: 0,
            skeleton: 0,
            duration,
            channels,
        }
    }

    /// Evenly spaced key times over `[0, duration]`.
    pub(crate) fn times(keys: usize, duration: f32) -> Vec<f32> {
        (0..keys).map(|i| i as f32 * duration / (keys - 1) as f32).collect()
    }

    /// The angle between two rotations, accurate for small angles (unlike `Quat::angle_between`).
    pub(crate) fn angle(a: Quat, b: Quat) -> f32 {
        resample::rotation_angle(Vec4::from(a), Vec4::from(b))
    }

    fn sample(rc: &RuntimeClip, t: f32) -> Vec<SoaTransform> {
        let mut out = vec![SoaTransform::IDENTITY; rc.num_soa_joints()];
        SamplingJob {
            clip: rc,
            time: t,
            output: &mut out,
        }
        .run()
        .expect("valid job");
        out
    }

    #[test]
    fn frame_count_covers_the_duration_with_uniform_frames() {
        assert_eq!(frame_count(0.0, 30.0), 1);
        assert_eq!(frame_count(1.1, 30.0), 34);
        assert_eq!(frame_count(1.0, 15.0), 16);
        assert_eq!(frame_count(1e-4, 15.0), 2);
        let timeline = Timeline::new(1.1, 34, false);
        assert_eq!(timeline.frame_time(33), 1.1);
        assert_eq!(timeline.coords(1.1), (32, 1.0));
        assert_eq!(timeline.coords(-3.0), (0, 0.0));
        assert_eq!(Timeline::new(0.0, 1, true).coords(5.0), (0, 0.0));
    }

    #[test]
    fn candidate_rates_follow_the_ladder_between_the_limits() {
        let rates = |lo, hi| {
            candidate_rates(&RuntimeClipOptions {
                min_rate_hz: lo,
                max_rate_hz: hi,
                ..Default::default()
            })
            .collect::<Vec<_>>()
        };
        assert_eq!(rates(15.0, 240.0), RATE_LADDER.to_vec());
        assert_eq!(rates(25.0, 50.0), vec![25.0, 30.0, 40.0, 48.0, 50.0]);
        assert_eq!(rates(30.0, 30.0), vec![30.0]);
    }

    #[test]
    fn constant_tracks_are_stored_once() {
        let skeleton = chain(8);
        let ts = times(11, 1.0);
        let wave = |t: f32| Vec4::from(Quat::from_rotation_x((6.0 * t).sin()));
        // Only joint 5 is animated: group 0 is constant in every property, group 1 only in translation and scale.
        let sparse = clip(
            "sparse",
            vec![channel(5, Property::Rotation, Interpolation::Linear, &ts, wave)],
        );
        let dense = clip(
            "dense",
            (0..8u16)
                .flat_map(|j| {
                    let wobble = move |t: f32| Vec4::new(t * 0.01 + f32::from(j), 0.0, 0.0, 0.0);
                    let grow = move |t: f32| Vec4::new(1.0 + t, 1.0, 1.0, 0.0);
                    [
                        channel(j, Property::Rotation, Interpolation::Linear, &ts, wave),
                        channel(j, Property::Translation, Interpolation::Linear, &ts, wobble),
                        channel(j, Property::Scale, Interpolation::Linear, &ts, grow),
                    ]
                })
                .collect(),
        );
        let options = RuntimeClipOptions::default();
        let sparse = RuntimeClip::build(&sparse, &skeleton, &options).expect("builds");
        let dense = RuntimeClip::build(&dense, &skeleton, &options).expect("builds");
        assert_eq!(sparse.rotations.anim_groups, vec![1]);
        assert_eq!(sparse.rotations.const_groups, vec![0]);
        assert_eq!(
            sparse.translations.anim_groups.len() + sparse.scales.anim_groups.len(),
            0
        );
        assert_eq!(
            sparse.translations.const_values.len(),
            2,
            "one value per constant (group, property)"
        );
        assert_eq!(dense.translations.anim_groups.len() + dense.scales.anim_groups.len(), 4);
        assert!(
            sparse.memory_bytes() * 3 < dense.memory_bytes(),
            "sparse {} B vs dense {} B",
            sparse.memory_bytes(),
            dense.memory_bytes()
        );
        let rows = sparse.frame_count() * size_of::<SoaQuat>();
        assert!(sparse.memory_bytes() >= rows && sparse.memory_bytes() < rows + 1024);
    }

    #[test]
    fn rate_rises_until_the_budget_is_met_and_the_error_is_reported() {
        let skeleton = chain(2);
        // A 2 Hz sine of 5 cm: lerp error h^2 * a / 8 with a = 0.05 * (4 pi)^2 needs about 100 Hz for 0.1 mm.
        let sine = |t: f32| Vec4::new(0.05 * (4.0 * std::f32::consts::PI * t).sin(), 0.0, 0.0, 0.0);
        let c = clip(
            "sway",
            vec![channel(
                1,
                Property::Translation,
                Interpolation::Linear,
                &times(1001, 1.0),
                sine,
            )],
        );
        let rc = RuntimeClip::build(&c, &skeleton, &RuntimeClipOptions::default()).expect("builds");
        assert!((80.0..=160.0).contains(&rc.rate_hz()), "rate {}", rc.rate_hz());
        assert!(
            rc.error().translation <= 1e-4 && rc.error().translation > 1e-6,
            "{:?}",
            rc.error()
        );
        assert_eq!(rc.frame_count(), (rc.rate_hz() as usize) + 1);

        let capped = RuntimeClipOptions {
            max_rate_hz: 30.0,
            ..Default::default()
        };
        let err = RuntimeClip::build(&c, &skeleton, &capped)
            .expect_err("30 Hz is not enough")
            .to_string();
        assert!(
            err.starts_with("clip 'sway': no rate up to 30 Hz meets the budget: ")
                && err.contains("joint 1 ('joint 1')"),
            "{err}"
        );
        assert!(err.contains("mm translation error"), "{err}");
    }

    #[test]
    fn invalid_options_and_clips_are_rejected_with_the_clip_name() {
        let skeleton = chain(2);
        let c = clip(
            "idle",
            vec![channel(
                1,
                Property::Translation,
                Interpolation::Linear,
                &[0.0, 1.0],
                Vec4::splat,
            )],
        );
        for options in [
            RuntimeClipOptions {
                min_rate_hz: 0.0,
                ..Default::default()
            },
            RuntimeClipOptions {
                max_rate_hz: 10.0,
                ..Default::default()
            },
            RuntimeClipOptions {
                budget: ErrorBudget {
                    translation: f32::NAN,
                    rotation: 1e-3,
                },
                ..Default::default()
            },
        ] {
            let err = RuntimeClip::build(&c, &skeleton, &options)
                .expect_err("invalid options")
                .to_string();
            assert!(err.contains("clip 'idle'"), "{err}");
        }
        let bad = clip(
            "bad",
            vec![channel(7, Property::Translation, Interpolation::Linear, &[0.0], |_| {
                Vec4::ZERO
            })],
        );
        let err = RuntimeClip::build(&bad, &skeleton, &RuntimeClipOptions::default()).expect_err("bad joint");
        assert!(err.to_string().contains("clip 'bad'"), "{err}");
    }

    #[test]
    fn zero_duration_clips_have_one_frame() {
        let skeleton = chain(3);
        let c = clip(
            "pose",
            vec![channel(2, Property::Translation, Interpolation::Linear, &[0.0], |_| {
                Vec4::X
            })],
        );
        let rc = RuntimeClip::build(&c, &skeleton, &RuntimeClipOptions::default()).expect("builds");
        assert_eq!((rc.frame_count(), rc.duration(), rc.is_looping()), (1, 0.0, false));
        for t in [-1.0, 0.0, 3.0] {
            assert_eq!(sample(&rc, t)[0].translation.lane(2), Vec3::X);
        }
    }

    #[test]
    fn auto_looping_follows_the_end_poses() {
        let skeleton = chain(2);
        let ts = times(31, 1.0);
        let cycle = |t: f32| Vec4::from(Quat::from_rotation_z(0.3 * (std::f32::consts::TAU * t).sin()));
        let ramp = |t: f32| Vec4::from(Quat::from_rotation_z(0.3 * t));
        let looped = clip(
            "cycle",
            vec![channel(1, Property::Rotation, Interpolation::Linear, &ts, cycle)],
        );
        let open = clip(
            "ramp",
            vec![channel(1, Property::Rotation, Interpolation::Linear, &ts, ramp)],
        );
        let options = RuntimeClipOptions::default();
        assert!(
            RuntimeClip::build(&looped, &skeleton, &options)
                .expect("builds")
                .is_looping()
        );
        assert!(
            !RuntimeClip::build(&open, &skeleton, &options)
                .expect("builds")
                .is_looping()
        );
        let forced = RuntimeClipOptions {
            looping: Looping::Yes,
            ..options
        };
        let rc = RuntimeClip::build(&open, &skeleton, &forced).expect("the seam is left out of the measurement");
        assert!(rc.is_looping());
        // The last frame equals the first, so sampling just before the duration approaches the first pose.
        let q = sample(&rc, 1.0 - 1e-6)[0].rotation.lane(1);
        assert!(angle(q, Quat::IDENTITY) < 1e-4, "{q}");
    }
}
