//! Skinning palettes in GPU layout, with no GPU dependency.
//!
//! This crate turns model-space poses from `anim-pose` into the bytes the renderer uploads.
//! Its first contract is the palette entry, [`PaletteEntry`]: a 3×4 affine matrix stored as three row
//! `vec4`s (48 B), declared identically in `shaders/palette.wgsl`.
//! [`skin_reference`] and [`SkinningJob`] skin vertices on the CPU (linear-blend skinning of positions, normals and
//! tangents); they are the truth that GPU skinning and baking are tested against.
//! Parallel flattening, f16 formats, dirty ranges and the frame hand-off are built on it in later issues.
//!
//! # Example
//!
//! ```
//! use glam::{Mat4, Vec3};
//! let m = Mat4::from_translation(Vec3::new(1.0, 2.0, 3.0));
//! let entry = skin_pack::PaletteEntry::from_mat4(&m);
//! assert_eq!(entry.transform_point(Vec3::ZERO), Vec3::new(1.0, 2.0, 3.0));
//! ```

mod error;
mod palette_entry;
mod pool_tolerance;
mod skinning;

pub use error::{Error, Result};
pub use palette_entry::{PALETTE_ENTRY_SIZE, PaletteEntry};
pub use pool_tolerance::slots_for_tolerance;
pub use skinning::{
    SKINNING_CHUNK, SkinInput, SkinOutput, SkinningJob, palette_from_model, skin_positions_reference, skin_reference,
};
