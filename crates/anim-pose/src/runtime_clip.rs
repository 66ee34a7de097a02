//! Runtime clips: imported clips resampled at uniform frames or at a frame-time table, and stored SoA, four joints
//! per lane set.
//!
//! [`RuntimeClip`] documents the format, the choice of frame times and how the error is measured.
//! The build options and error budgets live in `options`, the unit tests (and the test clips other modules share)
//! in `tests`.

mod layout;
mod model_space;
mod options;
mod resample;
#[cfg(test)]
pub(crate) mod tests;
mod timeline;
mod tracks;

use std::fmt;
use std::sync::Arc;

use glam::Quat;

pub use self::options::{ErrorBudget, Looping, ResampleError, RuntimeClipOptions};
use self::options::{Limits, RATE_LADDER, check_options};
pub(crate) use self::timeline::Timeline;
use self::tracks::pack_tracks;
pub(crate) use self::tracks::{ClipTracks, Tracks};
use crate::{
    Clip, Error, ImportWarning, Property, Result, RootMotion, Skeleton, Transform, VirtualVertices, num_soa_joints,
};

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
///
/// # Sharing
///
/// A clip is immutable once built, and cloning it is cheap: the tracks (every stored value, mask and group index,
/// and the root-motion track) sit behind one `Arc`, as does a frame-time table, so a clone copies the name, a few
/// numbers and the warning, and bumps reference counts.
/// Clones share the tracks; the memory is not duplicated, and [`RuntimeClip::memory_bytes`] reports the same
/// shared bytes for each clone.
/// A [`crate::PosePool`] keeps such clones of its clips.
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
    /// The stored tracks and the root motion, shared by every clone of the clip.
    pub(crate) tracks: Arc<ClipTracks>,
}

// A clip is cheap to clone and may be shared across threads: pose pools and crowds keep clones of it.
const _: () = {
    const fn shareable<T: Clone + fmt::Debug + Send + Sync>() {}
    shareable::<RuntimeClip>();
};

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
            tracks: Arc::new(ClipTracks {
                translations,
                rotations,
                scales,
                root_motion: resampled.root_motion,
            }),
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
    ///
    /// Clones share these bytes (see "Sharing" on [`RuntimeClip`]): each clone reports them, but they are held
    /// once.
    pub fn memory_bytes(&self) -> usize {
        self.timeline.memory_bytes() + self.tracks.memory_bytes()
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
        self.tracks.root_motion.as_ref()
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
    #[doc(hidden)]
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
        let tracks = &*self.tracks;
        for (joint, o) in out.iter_mut().enumerate() {
            let (group, lane) = (joint / 4, joint % 4);
            let t = tracks
                .translations
                .reference_lane(group, lane, f, u, Property::Translation);
            let r = tracks.rotations.reference_lane(group, lane, f, u, Property::Rotation);
            let s = tracks.scales.reference_lane(group, lane, f, u, Property::Scale);
            *o = Transform {
                translation: t.truncate(),
                rotation: Quat::from_vec4(r),
                scale: s.truncate(),
            };
        }
        Ok(())
    }
}
