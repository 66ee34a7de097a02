//! Flattening model-space poses into GPU-layout palettes: [`FlattenJob`] (`job.rs`), the skin it reads
//! ([`PaletteBinding`], `binding.rs`) and its per-pose scratch ([`FlattenCache`], `cache.rs`).
//!
//! A joint's skinning matrix is `model[joint] × inverse_bind[joint]`; per-instance palettes can fold the instance's
//! world transform in front of it. The job writes the result straight into a caller-provided slice (for example a
//! mapped staging buffer), in parallel over chunks of palettes with rayon, with no intermediate `Vec` and no
//! allocation. [`crate::palette_from_model`] is its plain reference twin.

mod binding;
mod cache;
mod job;
mod pool;

use glam::Vec4;

pub use binding::PaletteBinding;
pub(crate) use cache::CachedPose;
pub use cache::{FLATTEN_WINDOW, FlattenCache, POSE_BUCKETS, group_by_pose};
pub use job::{FLATTEN_CHUNK, FlattenJob};
pub use pool::PoolFlattenJob;

/// `0` for a finite vector and NaN otherwise: `inf × 0` and `NaN × 0` are NaN. Summing these over a pass gives a
/// finiteness check of every value at the cost of one multiply and one add per row.
#[inline(always)]
pub(crate) fn poison(v: Vec4) -> Vec4 {
    v * 0.0
}
