//! Bone-animation (BAT) and vertex-animation (VAT) bakes of skinned glTF clips, with no GPU dependency.
//!
//! A bake takes one skeleton of an imported [`anim_pose::Model`], evaluates each of its clips exactly
//! (`anim_pose::Clip::sample_local_pose`), skins the meshes it draws with skin-pack's CPU reference skinning, and
//! stores what the GPU needs to play the clips back with no CPU work per instance:
//!
//! - [`BatData`]: per clip and frame, one skinning palette in f32 3×4, `Mat3x4F16` or `QtF16` (skin-pack's formats
//!   and encoders), all clips in one buffer;
//! - [`VatData`]: per clip and frame, every vertex's position (unorm codes relative to the clip's box) and normal
//!   (octahedral codes), in one or two textures laid out by [`VatLayout`];
//! - [`SocketData`]: chosen joints' transforms per frame, for attachments;
//! - [`BakedBounds`]: per clip the box of everything it draws, and per time segment a tighter one.
//!
//! # Rates and formats from an error budget
//!
//! [`BakeOptions::budget`] bounds the distance between every played-back vertex and the same vertex skinned
//! exactly (skin-pack's `skin_reference` on anim-pose's exact evaluation), at every stored frame, every midpoint
//! between frames, every key time and the loop seam. [`plan`] (a dry run) finds, per part, the cheapest format and
//! per clip the fewest uniform frames that keep that error within the budget, with the bytes, the predicted errors
//! and the device limits they need; [`bake`] encodes the plan and measures the result again, literally as the GPU
//! plays it back, in its [`BakeReport`]. `anim_pose::VirtualVertices` (the model-space error measure shared with
//! runtime clips) bounds each joint's share of the error, so only the vertices of joints near the budget are
//! skinned during the search.
//!
//! Distances are in the model's units. The budget is a [`Budget`]: an absolute distance, or (the default,
//! [`DEFAULT_RELATIVE_BUDGET`]) a fraction of the model's extent, or pixels on screen at a given on-screen size, so
//! that a model in centimetres gets the same budget, relative to its size, as one in metres. A plan resolves it once
//! ([`ResolvedBudget`]) and reports every error it lists as a finite distance, or says why a format cannot be used.
//!
//! Every part has a clip table of [`ClipRecord`]s (first frame, frame count, rate, duration, looping, segments),
//! `#[repr(C)]` and `Pod`, whose [`ClipRecord::frame_at`] is the CPU twin of the shader's frame lookup.
//! See [`ClipRecord`] for how a loop's last frame meets its first.
//!
//! # Records and files
//!
//! What a finished bake is (the records above, [`Bake`], the quantizers) and its file format live in the small
//! runtime crate `bake-format`, which a renderer uses without linking the baker; this crate re-exports all of it.
//! [`Bake::to_bytes`] and [`Bake::from_bytes`] (and `write_file`, `read_file`) store a bake as one file: magic,
//! version, a section table, then the clip, mesh and socket tables, the formats, the bounds and the little-endian
//! blobs, each section 16-byte aligned, with a CRC-32 over the whole file. The layout is documented on the constants
//! [`MAGIC`], [`VERSION`] and [`SECTION_ALIGN`] and in bake-format's `src/file.rs`. Loading checks everything once
//! ([`Bake::validate`]), so playback needs no checks; a truncated or corrupt file is a [`FormatError`] naming what
//! is wrong.
//!
//! # Features
//!
//! None: the crate always builds the same, with no GPU and no glTF importer of its own (it takes an imported
//! `anim_pose::Model`).
//!
//! # Example
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use anim_bake::{BakeOptions, RateChoice, bake};
//!
//! let model = anim_pose::import_file("assets/crowd_character.glb")?;
//! let options = BakeOptions { rate: RateChoice::Fixed(30.0), ..BakeOptions::default() };
//! let (baked, report) = bake(&model, &options, &|_| {})?;
//! let bat = baked.bat.as_ref().expect("a BAT was asked for");
//! // The palette of clip 0 at 0.25 s, as the GPU plays it back.
//! let mut palette = vec![glam::Affine3A::IDENTITY; bat.joint_count as usize];
//! bat.sample_palette(0, 0.25, &mut palette)?;
//! println!("largest vertex error: {} of {} model units", report.largest_error(), report.budget.distance);
//! # Ok(())
//! # }
//! ```

mod bake;
mod budget;
mod error;
mod measure;
mod options;
mod plan;
mod report;
mod source;

pub use bake::bake;
/// The error of `bake-format`'s loader, writer, validation and playback lookups, which [`Bake::from_bytes`] and
/// [`Bake::read_file`] return; [`Error::Format`] wraps it where a bake surfaces it.
pub use bake_format::Error as FormatError;
pub use bake_format::{
    BOUNDS_RECORD_SIZE, Bake, BakedBounds, BakedClip, BakedMesh, BatData, BatFormat, BoundsRecord, CLIP_LOOPING,
    CLIP_RECORD_SIZE, ClipRecord, DEFAULT_MAX_TEXTURE_WIDTH, FramePair, MAGIC, SECTION_ALIGN, SocketData, Texel,
    VERSION, VatData, VatFormat, VatLayout, VatQuant, affine_from_rows, mix_rows, quantize, vat_position_error_bound,
};
pub use budget::{Budget, DEFAULT_RELATIVE_BUDGET, ResolvedBudget};
pub use error::{Error, Result};
pub use measure::ErrorAt;
pub use options::{BakeOptions, DeviceLimits, MIN_SEGMENTS, Parts, Progress, RateChoice, Stage};
pub use plan::{ClipCandidate, FormatPlan, LimitCheck, Miss, PartPlan, Plan, PlannedClip, SocketFormat, plan};
pub use report::{BakeReport, ClipReport, PartReport};
