//! The records and the file format of finished bone-animation (BAT) and vertex-animation (VAT) bakes: what a
//! runtime needs to load a bake and upload it to a GPU, with no GPU dependency and without the baker.
//!
//! `anim-bake` builds bakes offline (it plans rates and formats from an error budget, samples and skins clips, and
//! measures the result); this crate holds only what a finished bake is, so that a renderer links neither the baker,
//! nor the glTF importer, nor the error-budget search:
//!
//! - [`Bake`], [`BakedClip`], [`BakedMesh`]: a bake as plain data, each part optional;
//! - [`ClipRecord`]: a clip of a part as the GPU reads it (32 bytes, `#[repr(C)]`, `Pod`), whose
//!   [`ClipRecord::frame_at`] is the CPU twin of the shader's frame lookup;
//! - [`BatData`] and [`BatFormat`]: per clip and frame, one skinning palette in f32 3×4, `Mat3x4F16` or `QtF16`
//!   (skin-pack's formats), decoded as the shaders decode them;
//! - [`VatData`], [`VatFormat`], [`VatLayout`], [`VatQuant`]: per clip and frame, every vertex's quantized
//!   position and octahedral normal in one or two textures, and [`quantize`], the quantizers with their error bounds;
//! - [`SocketData`]: chosen joints' transforms per frame;
//! - [`BakedBounds`] and [`BoundsRecord`]: per clip and per time segment, the box of everything a bake draws.
//!
//! # Files
//!
//! [`Bake::to_bytes`] and [`Bake::from_bytes`] (and `write_file`, `read_file`) store a bake as one file: magic,
//! version, a section table, then the clip, mesh and socket tables, the formats, the bounds and the little-endian
//! blobs, each section 16-byte aligned, with a CRC-32 over the whole file. The layout is documented on the constants
//! [`MAGIC`], [`VERSION`] and [`SECTION_ALIGN`] and in `src/file.rs`. Loading checks everything once
//! ([`Bake::validate`]), so playback needs no checks; a truncated or corrupt file is an [`Error`] naming what is
//! wrong, never a panic.
//!
//! # Features
//!
//! None: the crate always builds the same, with no GPU dependency and no glTF importer (it takes anim-pose without
//! default features, for `anim_pose::Aabb` only).
//!
//! # Example
//!
//! A one-joint BAT of one looping clip, written to bytes, loaded back and played as the GPU plays it:
//!
//! ```
//! # fn main() -> Result<(), bake_format::Error> {
//! use bake_format::{
//!     Bake, BakedBounds, BakedClip, BatData, BatFormat, BoundsRecord, CLIP_LOOPING, ClipRecord,
//! };
//!
//! // An f32 entry is three rows of a 3×4 matrix: here the identity, at both frames of the clip.
//! let identity = [1.0f32, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0];
//! let record = ClipRecord {
//!     first_frame: 0,
//!     frame_count: 2,
//!     rate_hz: 1.0,
//!     duration: 1.0,
//!     flags: CLIP_LOOPING,
//!     first_segment: 0,
//!     segment_count: 1,
//!     reserved: 0,
//! };
//! let unit = BoundsRecord { min: [-1.0, -1.0, -1.0, 0.0], max: [1.0, 1.0, 1.0, 0.0] };
//! let bake = Bake {
//!     skeleton: "rig".into(),
//!     budget_mm: 1.0,
//!     clips: vec![BakedClip { name: "idle".into(), duration: 1.0, looping: true }],
//!     meshes: Vec::new(),
//!     bat: Some(BatData {
//!         format: BatFormat::F32,
//!         joint_count: 1,
//!         clips: vec![record],
//!         entries: identity.repeat(2).iter().map(|x| x.to_bits()).collect(),
//!     }),
//!     vat: None,
//!     sockets: None,
//!     bounds: BakedBounds { clips: vec![unit], segments: vec![unit] },
//! };
//! let loaded = Bake::from_bytes(&bake.to_bytes()?)?;
//! assert_eq!(loaded, bake);
//! let mut palette = [glam::Affine3A::ZERO];
//! loaded.bat.as_ref().expect("a BAT").sample_palette(0, 1.25, &mut palette)?;
//! assert_eq!(palette[0], glam::Affine3A::IDENTITY);
//! # Ok(())
//! # }
//! ```

mod baked;
mod bat;
mod bounds;
mod clip_table;
mod error;
mod file;
pub mod quantize;
mod socket;
mod validate;
mod vat;

pub use baked::{Bake, BakedClip, BakedMesh};
pub use bat::{BatData, BatFormat, affine_from_rows, mix_rows};
pub use bounds::{BOUNDS_RECORD_SIZE, BakedBounds, BoundsRecord};
pub use clip_table::{CLIP_LOOPING, CLIP_RECORD_SIZE, ClipRecord, FramePair};
pub use error::{Error, Result};
pub use file::{MAGIC, SECTION_ALIGN, VERSION};
pub use socket::SocketData;
pub use vat::{DEFAULT_MAX_TEXTURE_WIDTH, Texel, VatData, VatFormat, VatLayout, VatQuant, vat_position_error_bound};
