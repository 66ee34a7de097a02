//! Skinning palettes in GPU layout, with no GPU dependency.
//!
//! This crate turns model-space poses from `anim-pose` into the bytes the renderer uploads, and hands them to the
//! render thread.
//! - [`PaletteEntry`] is the palette entry: a 3×4 affine matrix stored as three row `vec4`s (48 B), declared
//!   identically in `shaders/palette.wgsl`.
//! - [`FlattenJob`] writes palettes (`root × model × inverse bind`, optionally with the instance transform folded
//!   in) straight into a caller's slice, in parallel, without allocating; [`palette_from_model`] is its plain twin,
//!   and [`PoolFlattenJob`] runs it over a pose pool's live slots. Hot loops run an AVX2 + FMA + F16C kernel where
//!   the CPU has one and the portable twin otherwise (the `portable` feature forces it), with the same bits.
//! - [`Mat3x4F16`] (24 B) and [`QtF16`] (16 B) are compressed formats with stated, proven error bounds
//!   ([`F16Format`]), decoded in `shaders/palette_f16.wgsl`.
//! - [`DirtyTracker`] turns changed slots and instances into coalesced byte ranges; [`FrameExchange`] passes
//!   pre-allocated frame packets from the simulation thread to the render thread with one frame of latency.
//! - [`skin_reference`] and [`SkinningJob`] skin vertices on the CPU (linear-blend skinning of positions, normals and
//!   tangents); they are the truth that GPU skinning and baking are tested against.
//! - [`quant`] holds the scalar quantization every packed GPU format shares (round to nearest, snorm16, unorm16,
//!   unorm8, RGBA8, f16, and the WGSL `unpack*` decoders), implemented once with stated error bounds; crowd-frame's
//!   instance record and crowd-mesh's vertex streams use it too.
//!
//! # Example
//!
//! ```
//! use anim_pose::{NO_PARENT, Skeleton, Transform};
//! use glam::{Affine3A, Vec3};
//! use skin_pack::{FlattenCache, FlattenJob, PaletteBinding, PaletteEntry};
//!
//! // A two-joint skeleton (identity inverse bind matrices) and one model-space pose.
//! let skeleton = Skeleton::from_parents("arm", vec![NO_PARENT, 0], vec![Transform::IDENTITY; 2])?;
//! let binding = PaletteBinding::new(&skeleton)?;
//! let pose = [Affine3A::IDENTITY, Affine3A::from_translation(Vec3::Y)];
//! // Two instances share the pose, each with its own world transform folded in.
//! let transforms = [Affine3A::from_translation(Vec3::X), Affine3A::from_translation(-Vec3::X)];
//! let mut output = [PaletteEntry::IDENTITY; 4];
//! FlattenJob {
//!     binding: &binding,
//!     poses: &pose,
//!     pose_of: &[0, 0],
//!     transforms: &transforms,
//!     cache: &mut FlattenCache::new(&binding, 1),
//!     output: &mut output,
//!     streaming: false,
//! }
//! .run()?;
//! assert_eq!(output[3].transform_point(Vec3::ZERO), Vec3::new(-1.0, 1.0, 0.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod animated_bounds;
mod dirty;
mod error;
mod exchange;
mod flatten;
mod formats;
mod kernels;
mod palette_entry;
mod pool_tolerance;
pub mod quant;
mod skinning;

pub use animated_bounds::{BOUNDS_SUBSTEPS, animated_bounds};
pub use dirty::{
    ByteRange, DirtyTracker, dirty_ranges_bound, dirty_ranges_reference, split_ranges_at_chunks, split_ranges_bound,
};
pub use error::{Error, Result};
pub use exchange::{ExchangeStats, FrameExchange, FramePacket, MAX_FRAME_PACKETS, Overrun, ReadGuard, WriteGuard};
pub use flatten::{
    FLATTEN_CHUNK, FLATTEN_WINDOW, FlattenCache, FlattenJob, POSE_BUCKETS, PaletteBinding, PoolFlattenJob,
    group_by_pose,
};
pub use formats::{
    F16_MAX, F16Format, F16Kind, Mat3x4F16, PaletteFormat, QT_F16_SCALE_TOLERANCE, QtF16, VertexError,
    VertexErrorScratch, check_palette, check_uniform_scale, choose_f16_format, decode_palette, f16_vertex_error,
    palette_origin,
};
pub use palette_entry::{PALETTE_ENTRY_SIZE, PaletteEntry};
pub use pool_tolerance::slots_for_tolerance;
pub use quant::{f16_bits_to_f32, halves_from_f32, halves_from_f32_scalar, unpack_halves, unpack2x16float};
pub use skinning::{
    SKINNING_CHUNK, SkinInput, SkinOutput, SkinningJob, palette_from_model, skin_positions_reference, skin_reference,
};
