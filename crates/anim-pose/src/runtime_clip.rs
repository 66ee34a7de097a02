//! Runtime clips: imported clips resampled at uniform frames or at a frame-time table, and stored SoA, four joints
//! per lane set.
//!
//! [`RuntimeClip`] documents the format, the choice of frame times and how the error is measured.

mod layout;
mod model_space;
mod resample;
mod timeline;
mod tracks;

use std::fmt;

use glam::Quat;

pub(crate) use self::timeline::Timeline;
pub(crate) use self::tracks::Tracks;
use self::tracks::pack_tracks;
use crate::{
    Clip, Error, ImportWarning, Property, Result, RootMotion, Skeleton, SoaQuat, SoaVec3, Transform, VirtualVertices,
    num_soa_joints,
};

/// The largest resampling error a runtime clip may have against the exact glTF evaluation; see
/// [`RuntimeClipOptions`] for what it bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ErrorBudget {
    /// The distance budget, in model units (metres in glTF). Default 0.1 mm. It bounds how far any virtual vertex
    /// moves in model space, and each joint's local translation error.
    pub translation: f32,
    /// Largest local rotation error of any joint, in radians. Default 0.001 rad.
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
///
/// # What the budget bounds
///
/// At every test time of the measurement (see "Error measurement" on [`RuntimeClip`]), a runtime clip that builds
/// without a [`RuntimeClip::warning`] holds these against the exact glTF evaluation:
/// - **In model space**, one measure for runtime clips and bakes ([`VirtualVertices`], as ACL measures its error): no
///   virtual vertex moves farther than `budget.translation` (model units) between the pose that the runtime
///   computes and the exact pose, both carried along the skeleton to world space (`root_transform × model`).
///   Errors add up along a chain, and the measure sees the sum, so the budget holds however deep a joint sits.
///   [`RuntimeClip::build`] measures the corners of a cube of half-size [`RuntimeClipOptions::vertex_distance`]
///   around every joint, in the joint's axes: a point within that cube that the joint carries rigidly, and a
///   skinned vertex that blends such points, stays within the budget. [`RuntimeClip::build_with_vertices`] measures
///   the virtual vertices it is given, usually [`VirtualVertices::from_meshes`] of the skinned meshes (as
///   `anim-bake` does), which bound every skinned vertex.
/// - **Per joint**: the local translation error within `budget.translation`, the local rotation error within
///   `budget.rotation` and the relative scale error within [`RuntimeClipOptions::scale_budget`].
///
/// The model-space error is measured with both chains multiplied in f64, so it is the resampling error alone; the
/// f32 jobs that play the clip add their own rounding, which on a chain of 30 joints several units long reaches
/// tens of micrometres, the exact path's as well.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RuntimeClipOptions {
    /// The resampling error budget.
    pub budget: ErrorBudget,
    /// The lowest uniform sampling rate considered, in Hz. Default 15.
    pub min_rate_hz: f32,
    /// The highest uniform sampling rate considered, in Hz, and the size limit of a key-time table: at most the
    /// frames of the uniform grid at this rate. When no layout within it meets the budget, the build keeps the
    /// closest and sets [`RuntimeClip::warning`]. Default 240.
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
    /// The half-size, in model units, of the cube of virtual vertices around each joint that [`RuntimeClip::build`]
    /// measures in model space (ACL's shell distance): the cube spans `±vertex_distance` along the joint's rest-pose
    /// axes, scaled into its frame by the largest scale of its rest world matrix. Default 0.03 (3 cm): a hand's
    /// fingertips or a head's crown reach farther, but the joints beyond a joint already carry most of its lever.
    /// Set it to how far a mesh reaches past its joints, or measure the meshes with
    /// [`RuntimeClip::build_with_vertices`].
    pub vertex_distance: f32,
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
            vertex_distance: 0.03,
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
    /// Largest model-space error over all test times: the largest distance, in model units, between a virtual
    /// vertex carried by the runtime pose and by the exact pose; see [`RuntimeClipOptions`].
    pub model: f32,
}

impl ResampleError {
    /// True when every error is within the budgets of `options`.
    pub fn meets(&self, options: &RuntimeClipOptions) -> bool {
        Limits::new(options).admit(self)
    }
}

/// The error limits of a build: the [`ErrorBudget`], the scale budget and the model-space budget (the budget's
/// translation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// Largest translation error, in model units.
    pub(crate) translation: f32,
    /// Largest rotation error, in radians.
    pub(crate) rotation: f32,
    /// Largest relative scale error.
    pub(crate) scale: f32,
    /// Largest model-space distance of a virtual vertex, in model units.
    pub(crate) model: f32,
}

impl Limits {
    /// The limits of `options`.
    fn new(options: &RuntimeClipOptions) -> Self {
        Self {
            translation: options.budget.translation,
            rotation: options.budget.rotation,
            scale: options.scale_budget,
            model: options.budget.translation,
        }
    }

    /// True when every error is within its limit (NaN never is).
    fn admit(&self, e: &ResampleError) -> bool {
        e.translation <= self.translation
            && e.rotation <= self.rotation
            && e.scale <= self.scale
            && e.model <= self.model
    }
}

/// The rates tried, in Hz, from `min_rate_hz` up to `max_rate_hz`.
///
/// They include the common authoring rates (24, 30, 60 Hz and their multiples), at which keys baked at those
/// rates fall on frames and resample exactly.
const RATE_LADDER: [f32; 13] = [
    15.0, 20.0, 24.0, 30.0, 40.0, 48.0, 60.0, 80.0, 96.0, 120.0, 160.0, 200.0, 240.0,
];

/// How a runtime clip's frames are placed in time; see [`RuntimeClip`] for how the build chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameSpacing {
    /// Uniform frames, `duration / (frame_count - 1)` apart, at [`RuntimeClip::rate_hz`].
    Uniform,
    /// A frame-time table: uniform frames at [`RuntimeClip::rate_hz`] with the times of the clip's STEP keys
    /// added, so that STEP values switch exactly at their key times.
    UniformWithStepKeys {
        /// The distinct STEP key times added.
        step_keys: usize,
    },
    /// A frame-time table made of the clip's key times, with 0 and the duration, each key interval cut into
    /// `subdivisions` equal parts, and `refined` frames added where the error missed the budget.
    KeyTimes {
        /// True when every channel has the same key times, what most exporters write; otherwise the table holds
        /// the union of the channels' key times.
        shared: bool,
        /// Equal parts per key interval, 1 for the key times alone.
        subdivisions: usize,
        /// Frames added at the midpoints of the frame intervals where the key times alone missed the budget (in
        /// rounds, each halving the intervals that still missed), 0 for none.
        refined: usize,
    },
}

impl fmt::Display for FrameSpacing {
    /// `uniform`, `uniform + 4 STEP keys`, `shared key times`, `union of key times / 2`,
    /// `shared key times + 6 frames`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Uniform => write!(f, "uniform"),
            Self::UniformWithStepKeys { step_keys } => write!(f, "uniform + {step_keys} STEP keys"),
            Self::KeyTimes {
                shared,
                subdivisions,
                refined,
            } => {
                write!(
                    f,
                    "{}",
                    if shared {
                        "shared key times"
                    } else {
                        "union of key times"
                    }
                )?;
                if subdivisions > 1 {
                    write!(f, " / {subdivisions}")?;
                }
                if refined > 0 {
                    write!(f, " + {refined} frames")?;
                }
                Ok(())
            }
        }
    }
}

/// An immutable, resampled, SoA clip for one skeleton.
///
/// # Frame times
///
/// [`RuntimeClip::build`] evaluates every joint's translation, rotation and scale with the exact glTF evaluator
/// ([`crate::Channel::sample`]) at a list of frame times from 0 to the duration; a clip of duration 0 has one frame.
/// Sampling finds the frame pair around a time once per pose, for every joint: with one multiply for uniform
/// frames, or for a frame-time table with one multiply into a bucket (one per frame interval) and a search among
/// the frames of that bucket, usually none or one.
/// The build tries these layouts, in this order, and keeps the one with the fewest frames whose measured error
/// meets the budget (in model space and per joint; see [`RuntimeClipOptions`]), uniform frames winning a tie:
/// 1. **A key-time table** ([`FrameSpacing::KeyTimes`]): the key times of the clip's channels (one list when they
///    share it, as most exporters write, otherwise their union; times closer than a thousandth of `1 / max_rate_hz`
///    are one frame, the earliest), with 0 and the duration. LINEAR keys then fall on frames, kinks included,
///    whatever their spacing or jitter. When the keys alone miss the budget (the runtime's normalized lerp against
///    the exact slerp, or a cubic spline between keys), the build refines where they miss: it adds the midpoint of
///    every frame interval in which an error passed its limit, and measures again, for up to six rounds. Then each
///    key interval is cut into 2, 3, 4, 6, 8, 12 or 16 equal parts, while that is fewer frames than a table that met
///    the budget, up to the size limit.
/// 2. **Uniform frames**: `F = ceil(duration * rate) + 1` frames `i * duration / (F - 1)` apart, at the rungs of a
///    ladder (15, 20, 24, 30, 40, 48, 60, 80, 96, 120, 160, 200 and 240 Hz, with `min_rate_hz` and `max_rate_hz`
///    added as rungs when they are not on it) from `min_rate_hz` up to `max_rate_hz`, only while they are no more
///    frames than a table that met the budget. When the clip has STEP keys that change the value, their times are
///    added to the uniform frames ([`FrameSpacing::UniformWithStepKeys`], a table; a uniform frame closer than a
///    thousandth of an interval to a STEP key gives way to it).
///
/// STEP tracks hold their frame (interpolation mask 0), and every layout holds the STEP key times as frames, so a
/// STEP value switches exactly at its key time.
///
/// **Size limit:** a key-time table never has more frames than the uniform grid at `max_rate_hz`; a table whose
/// keys alone exceed it is not tried. Uniform frames with STEP keys added have at most that many more frames.
/// When no layout meets the budget, the build does not fail: it keeps the layout with the smallest excess over the
/// budget (the largest ratio of measured error to its limit) and reports it in [`RuntimeClip::warning`] and
/// [`RuntimeClip::error`].
///
/// # Error measurement
///
/// The error of a layout is measured between what [`crate::SamplingJob`] computes from the stored frames and the
/// exact evaluation, for every animated (joint, property), at every key time of the channel, 0.1 ms after each, and
/// at every key midpoint, within `[0, duration]`; at eight evenly spaced points in every frame interval (the frames
/// and the midpoints between frames among them); and at the duration. A STEP key that switched late, or a kink
/// between frames, shows there.
/// - Model-space error is the largest distance between a virtual vertex carried by the runtime's local pose and by
///   the exact one, both multiplied along the skeleton in f64 ([`RuntimeClipOptions`] says which vertices). It is
///   measured on whole poses at the key times of every channel (merged as for the key-time table), 0.1 ms after
///   each and at their midpoints; in every frame interval at its midpoint (where a resampled cubic spline strays
///   most) and at `1/2 ∓ 1/(2√3)` of the way (where a normalized lerp strays most from the slerp, which it matches
///   at the midpoint); and at the duration.
/// - Translation error is the distance, in model units.
/// - Rotation error is the angle between the two rotations, in radians, computed in f64 from the chord
///   `|a - b|` (not from `acos(dot)`, which cannot resolve angles under about 1e-3 rad in f32).
/// - Scale error is relative: `|a - b| / max(|exact|, 0.01)`, within [`RuntimeClipOptions::scale_budget`].
///   The floor of 0.01 keeps scales that collapse to zero from demanding an infinite rate.
/// - A looping clip whose first and last poses differ by more than the budget in some channel or in model space
///   (only possible with [`Looping::Yes`]) has a seam the runtime smooths over the last frame interval; that
///   interval is left out of the measurement for that channel, and of the model-space measurement.
/// - With root-motion extraction, the root's in-place translation and rotation are measured against the exact
///   in-place values, and the root-motion track's translation and yaw against the exact extracted motion.
///
/// # Storage
///
/// Joints are grouped four to a lane set, as in [`crate::SoaTransform`]. For each (group, property), a track whose four
/// lanes are constant over the clip (every frame within a thousandth of the budget of the first, plus two ulps)
/// is stored once; the other tracks store every frame. Along deep or long chains the constant test is also held
/// to a hundredth of the joint's model-space allowance in the rest pose (the budget over its subtree's reach for a
/// rotation, over its parent's scale for a translation), so that constants along a chain of `D` joints move no
/// virtual vertex more than `D / 100` of the budget. Animated tracks are frame-major, one row of
/// consecutive groups per frame, so that sampling one time reads two contiguous rows per property.
/// Consecutive rotation frames are made hemisphere-consistent at build time (`q[f + 1]` is negated when
/// `dot(q[f], q[f + 1]) < 0`), so that the runtime interpolates rotations along the short path without a
/// per-lane sign test. Each animated track keeps an interpolation mask: lane 1.0 interpolates, 0.0 (STEP)
/// holds frame `f`. A frame-time table adds 8 bytes per frame (the time and its bucket's first frame).
///
/// # Looping
///
/// [`Looping::Auto`] loops when the (in-place, with root-motion extraction) poses at 0 and at the duration
/// match within the budget, per joint and in model space. A looping clip stores its last frame equal to its first (a rotation may have its
/// sign flipped, to stay in the previous frame's hemisphere) and wraps the sampling time with
/// `t.rem_euclid(duration)`; a non-looping clip clamps it to `[0, duration]`.
#[derive(Clone, Debug)]
pub struct RuntimeClip {
    /// The clip's name.
    name: String,
    /// The uniform rate chosen, or the mean rate of a table, in Hz.
    rate_hz: f32,
    /// How the frames are placed.
    spacing: FrameSpacing,
    /// Frame times and looping.
    timeline: Timeline,
    /// Joints of the skeleton.
    joint_count: usize,
    /// The measured error.
    error: ResampleError,
    /// Set when no layout met the budget.
    warning: Option<ImportWarning>,
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
    /// A clip that no layout within the size limit holds within the budget still builds: the most faithful
    /// layout is kept, and [`RuntimeClip::warning`] says so.
    ///
    /// # Errors
    ///
    /// When the skeleton or the clip does not validate, or the options' budgets or rates are not finite and
    /// positive (with `min_rate_hz <= max_rate_hz`); each error names the clip.
    pub fn build(clip: &Clip, skeleton: &Skeleton, options: &RuntimeClipOptions) -> Result<Self> {
        Self::build_measured(clip, skeleton, options, None)
    }

    /// [`RuntimeClip::build`], with the model-space error measured on `vertices` (one set per skin joint, usually
    /// [`VirtualVertices::from_meshes`] of the meshes the skeleton skins) instead of cubes around the joints: the
    /// budget then bounds how far any skinned vertex moves, at the test times.
    ///
    /// # Errors
    ///
    /// As [`RuntimeClip::build`], and when `vertices` does not have one set per skin joint of `skeleton`.
    pub fn build_with_vertices(
        clip: &Clip,
        skeleton: &Skeleton,
        options: &RuntimeClipOptions,
        vertices: &VirtualVertices,
    ) -> Result<Self> {
        if vertices.joint_count() != skeleton.skin_joint_count() {
            return Err(Error::invalid(
                format!("clip '{}'", clip.name),
                format!(
                    "the virtual vertices have {} sets, but skeleton '{}' has {} skin joints",
                    vertices.joint_count(),
                    skeleton.name,
                    skeleton.skin_joint_count()
                ),
            ));
        }
        Self::build_measured(clip, skeleton, options, Some(vertices))
    }

    /// Builds the clip, measuring the model-space error on `vertices`, or on cubes around the joints for `None`.
    fn build_measured(
        clip: &Clip,
        skeleton: &Skeleton,
        options: &RuntimeClipOptions,
        vertices: Option<&VirtualVertices>,
    ) -> Result<Self> {
        skeleton.validate()?;
        clip.validate(skeleton)?;
        check_options(clip, options)?;
        let budget = &Limits::new(options);
        let model = model_space::ModelSpace::new(skeleton, options.vertex_distance, vertices, budget.model);
        let source = resample::Source::new(clip, skeleton, options.extract_root_motion);
        let seam = source.seam(budget, &model);
        let keys = layout::Search::key_times(clip, options);
        let poses = resample::PoseCheck::new(&source, model, &keys);
        let looping = clip.duration > 0.0
            && match options.looping {
                Looping::Yes => true,
                Looping::No => false,
                Looping::Auto => seam.matches,
            };
        let search = layout::Search {
            clip,
            skeleton,
            options,
            source: &source,
            seam: &seam,
            looping,
            budget,
            poses: &poses,
            keys: &keys,
        };
        let Some((trial, warning)) = search.choose() else {
            return Err(Error::invalid(
                format!("clip '{}'", clip.name),
                "no frame layout to try",
            ));
        };
        Ok(Self::pack(clip, skeleton, trial, warning))
    }

    /// Packs a measured layout's per-joint tracks into SoA storage.
    fn pack(clip: &Clip, skeleton: &Skeleton, trial: layout::Trial, warning: Option<ImportWarning>) -> Self {
        let layout::Trial {
            timeline,
            spacing,
            rate_hz,
            resampled,
            measured,
        } = trial;
        let translations = pack_tracks(&resampled, Property::Translation, &timeline);
        let rotations = pack_tracks(&resampled, Property::Rotation, &timeline);
        let scales = pack_tracks(&resampled, Property::Scale, &timeline);
        Self {
            name: clip.name.clone(),
            rate_hz,
            spacing,
            timeline,
            joint_count: skeleton.joint_count(),
            error: measured.error,
            warning,
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

    /// The sampling rate, in Hz: the rung chosen for uniform frames (and for uniform frames with STEP keys added),
    /// the mean rate `(frame_count() - 1) / duration()` of a key-time table, 0 for a single frame. Uniform frames
    /// are `duration / (frame_count() - 1)` apart, which is at most `1 / rate_hz()` (give or take a thousandth of
    /// an interval; see [`RuntimeClip::frame_count`]).
    pub fn rate_hz(&self) -> f32 {
        self.rate_hz
    }

    /// How the frames are placed in time.
    pub fn frame_spacing(&self) -> FrameSpacing {
        self.spacing
    }

    /// The number of frames. For uniform frames, `ceil(duration * rate_hz) + 1`, or 1 for a clip of duration 0;
    /// a product `duration * rate_hz` within a thousandth of an integer counts as that integer, so that the f32
    /// rounding of a duration such as 1.1 s does not add a frame.
    pub fn frame_count(&self) -> usize {
        self.timeline.frame_count()
    }

    /// The time of frame `frame`, in seconds: 0 for the first, exactly the duration for the last (and past it).
    pub fn frame_time(&self, frame: usize) -> f32 {
        self.timeline.frame_time(frame)
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
    /// indices, the frame-time table and the root-motion track (the name and the warning are not counted).
    pub fn memory_bytes(&self) -> usize {
        self.timeline.memory_bytes()
            + self.translations.memory_bytes()
            + self.rotations.memory_bytes()
            + self.scales.memory_bytes()
            + self.root_motion.as_ref().map_or(0, RootMotion::memory_bytes)
    }

    /// The measured resampling error.
    pub fn error(&self) -> ResampleError {
        self.error
    }

    /// Set when no layout within the size limit meets the budget: names the clip, the layout kept and its worst
    /// error (the one furthest over its limit, per joint or `mm model-space error at joint ...`), for example `clip 'mocap': no frame layout of at most 8401 frames ... meets the error budget; kept the
    /// closest, shared key times / 6 with 7873 frames: 0.00131 rad rotation error at joint 5 ('forearm_l')`.
    pub fn warning(&self) -> Option<&ImportWarning> {
        self.warning.as_ref()
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
    let d = options.vertex_distance;
    if !(d.is_finite() && d >= 0.0) {
        return Err(Error::invalid(
            object(),
            format!("the vertex distance ({d}) must be finite and non-negative"),
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

#[cfg(test)]
pub(crate) mod tests {
    use glam::{Vec3, Vec4};

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
    fn candidate_rates_follow_the_ladder_between_the_limits() {
        let rates = |lo, hi| {
            layout::candidate_rates(&RuntimeClipOptions {
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
        // A loose budget keeps both on their key times, so that the sizes compare the storage alone (the dense
        // clip's scales compound to 256 along the chain, where 0.1 mm is below the f32 rounding of its poses).
        let options = RuntimeClipOptions {
            budget: ErrorBudget {
                translation: 0.1,
                rotation: 0.01,
            },
            ..Default::default()
        };
        let sparse = RuntimeClip::build(&sparse, &skeleton, &options).expect("builds");
        let dense = RuntimeClip::build(&dense, &skeleton, &options).expect("builds");
        assert_eq!((sparse.frame_count(), dense.frame_count()), (11, 11));
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
    fn rate_rises_until_the_budget_is_met_or_the_closest_is_kept_with_a_warning() {
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
        // 30 Hz is not enough, and the 1,001 keys are more frames than the size limit: the clip still builds, with
        // the most faithful layout, its true error and a warning.
        let rc = RuntimeClip::build(&c, &skeleton, &capped).expect("builds without meeting the budget");
        assert_eq!((rc.frame_spacing(), rc.frame_count()), (FrameSpacing::Uniform, 31));
        assert!(rc.error().translation > 1e-4, "{:?}", rc.error());
        assert!(!rc.error().meets(&capped));
        let warning = rc.warning().expect("a warning").to_string();
        assert!(
            warning.starts_with("clip 'sway': no frame layout of at most 31 frames")
                && warning.contains("kept the closest, uniform with 31 frames: ")
                && warning.contains("mm translation error at joint 1 ('joint 1')"),
            "{warning}"
        );
        let met = RuntimeClip::build(&c, &skeleton, &RuntimeClipOptions::default()).expect("builds");
        assert!(met.warning().is_none());
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
            RuntimeClipOptions {
                vertex_distance: -1.0,
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

    /// A chain of `n` joints `spacing` apart, each turning 0.3 rad about its own axis and back over 2 s, LINEAR
    /// keys at 0, 1 and 2 s: RecursiveSkeletons' shape, where the normalized lerp's small error at every joint adds
    /// up along the chain.
    fn turning_chain(n: usize, spacing: f32) -> (Skeleton, Clip) {
        let mut skeleton = chain(n);
        for t in &mut skeleton.rest_pose[1..] {
            t.translation = Vec3::new(0.0, spacing, 0.0);
        }
        let channels = (0..n as u16)
            .map(|j| {
                let axis = Vec3::new(1.0, f32::from(j % 3), f32::from(j % 2)).normalize();
                channel(
                    j,
                    Property::Rotation,
                    Interpolation::Linear,
                    &[0.0, 1.0, 2.0],
                    move |t| Vec4::from(Quat::from_axis_angle(axis, 0.3 * (1.0 - (t - 1.0).abs()))),
                )
            })
            .collect();
        (skeleton, clip("turn", channels))
    }

    /// The world position of every joint of `skeleton` posed by `local`, multiplied in f64.
    fn joint_positions(skeleton: &Skeleton, local: &[Transform]) -> Vec<glam::DVec3> {
        let mut world: Vec<glam::DAffine3> = Vec::with_capacity(local.len());
        for (l, &p) in local.iter().zip(&skeleton.parents) {
            let m = glam::DAffine3::from_scale_rotation_translation(
                l.scale.as_dvec3(),
                glam::DQuat::from_vec4(Vec4::from(l.rotation).as_dvec4()),
                l.translation.as_dvec3(),
            );
            let parent = if p == crate::NO_PARENT {
                glam::DAffine3::IDENTITY
            } else {
                world[usize::from(p)]
            };
            world.push(parent * m);
        }
        world.iter().map(|w| w.translation).collect()
    }

    #[test]
    fn deep_chains_hold_the_budget_in_model_space() {
        let (skeleton, c) = turning_chain(30, 0.3);
        let options = RuntimeClipOptions::default();
        // With a distance budget of 1 m, the key times alone pass: every joint is within the default local budget
        // (about 1e-4 rad), yet the chain's far end strays about 10 mm from the exact pose.
        let loose = RuntimeClipOptions {
            budget: ErrorBudget {
                translation: 1.0,
                ..options.budget
            },
            ..options
        };
        let keys = RuntimeClip::build(&c, &skeleton, &loose).expect("builds");
        assert_eq!(keys.frame_count(), 3);
        let local = keys.error();
        assert!(local.translation <= 1e-4 && local.rotation <= 1e-3, "{local:?}");
        assert!(local.model > 1e-3, "{local:?}");
        // With the default budget, the build refines until the chain holds 0.1 mm in model space.
        let rc = RuntimeClip::build(&c, &skeleton, &options).expect("builds");
        assert!(rc.warning().is_none(), "{:?}", rc.warning());
        assert!(rc.error().meets(&options), "{:?}", rc.error());
        assert!(
            matches!(rc.frame_spacing(), FrameSpacing::KeyTimes { .. }),
            "{}",
            rc.frame_spacing()
        );
        // Joint origins are virtual vertices too (the centres of the cubes): at the points where the normalized
        // lerp strays most, they stay within the budget of the exact pose, and the reported error is the largest.
        let (mut exact, mut runtime) = (vec![Transform::IDENTITY; 30], vec![Transform::IDENTITY; 30]);
        let mut worst = 0.0f64;
        for f in 0..rc.frame_count() - 1 {
            let (a, b) = (rc.frame_time(f), rc.frame_time(f + 1));
            for u in [0.211_324_87, 0.5, 0.788_675_1] {
                let t = a + (b - a) * u;
                c.sample_local_pose(&skeleton, t, &mut exact).expect("valid");
                rc.sample_reference(t, &mut runtime).expect("valid");
                let (e, r) = (joint_positions(&skeleton, &exact), joint_positions(&skeleton, &runtime));
                worst = e.iter().zip(&r).map(|(p, q)| p.distance(*q)).fold(worst, f64::max);
            }
        }
        assert!(
            worst <= f64::from(rc.error().model) && rc.error().model <= 1e-4,
            "{worst} m, reported {:?}, with {} frames",
            rc.error(),
            rc.frame_count()
        );
    }

    #[test]
    fn virtual_vertices_must_cover_the_skin() {
        let (skeleton, c) = turning_chain(4, 0.3);
        let options = RuntimeClipOptions::default();
        let cubes = crate::VirtualVertices::cubes(4, 0.05);
        let rc = RuntimeClip::build_with_vertices(&c, &skeleton, &options, &cubes).expect("one set per skin joint");
        assert!(rc.error().meets(&options), "{:?}", rc.error());
        let err = RuntimeClip::build_with_vertices(&c, &skeleton, &options, &crate::VirtualVertices::cubes(3, 0.05))
            .expect_err("one set short")
            .to_string();
        assert!(err.contains("clip 'turn'") && err.contains("3 sets"), "{err}");
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
