//! The build options of a runtime clip and what they bound: [`ErrorBudget`], [`Looping`], [`RuntimeClipOptions`]
//! and its checks, the measured [`ResampleError`], the error [`Limits`] a build holds, and the ladder of uniform
//! rates tried.

use crate::{Clip, Error, Result};

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
///
/// [`RuntimeClip`]: crate::RuntimeClip
/// [`RuntimeClip::warning`]: crate::RuntimeClip::warning
/// [`VirtualVertices`]: crate::VirtualVertices
/// [`RuntimeClip::build`]: crate::RuntimeClip::build
/// [`RuntimeClip::build_with_vertices`]: crate::RuntimeClip::build_with_vertices
/// [`VirtualVertices::from_meshes`]: crate::VirtualVertices::from_meshes
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RuntimeClipOptions {
    /// The resampling error budget.
    pub budget: ErrorBudget,
    /// The lowest uniform sampling rate considered, in Hz. Default 15.
    pub min_rate_hz: f32,
    /// The highest uniform sampling rate considered, in Hz, and the size limit of a key-time table: at most the
    /// frames of the uniform grid at this rate. When no layout within it meets the budget, the build keeps the
    /// closest and sets [`RuntimeClip::warning`]. Default 240.
    ///
    /// [`RuntimeClip::warning`]: crate::RuntimeClip::warning
    pub max_rate_hz: f32,
    /// Whether the clip loops.
    pub looping: Looping,
    /// Extract the root joint's horizontal translation and yaw into a [`RootMotion`] track, leaving the clip in
    /// place.
    ///
    /// [`RootMotion`]: crate::RootMotion
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
    ///
    /// [`RuntimeClip::build`]: crate::RuntimeClip::build
    /// [`RuntimeClip::build_with_vertices`]: crate::RuntimeClip::build_with_vertices
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
    pub(super) fn new(options: &RuntimeClipOptions) -> Self {
        Self {
            translation: options.budget.translation,
            rotation: options.budget.rotation,
            scale: options.scale_budget,
            model: options.budget.translation,
        }
    }

    /// True when every error is within its limit (NaN never is).
    pub(super) fn admit(&self, e: &ResampleError) -> bool {
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
pub(super) const RATE_LADDER: [f32; 13] = [
    15.0, 20.0, 24.0, 30.0, 40.0, 48.0, 60.0, 80.0, 96.0, 120.0, 160.0, 200.0, 240.0,
];

/// Checks the options' numbers.
pub(super) fn check_options(clip: &Clip, options: &RuntimeClipOptions) -> Result<()> {
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
