//! What a crowd renderer draws, as plain data, with no GPU dependency: an engine with its own renderer can use it
//! without wgpu, and `crowd-gpu` uploads it.
//!
//! - [`PackedMesh`]: an imported skinned primitive in compact vertex streams, checked once, with the quantizers of
//!   [`quantize`] and their stated error bounds;
//! - its LOD levels ([`build_lods`], with meshopt) and the screen-size thresholds that keep each level's error
//!   under a pixel ([`lod_thresholds`]);
//! - [`Material`] and [`TextureData`], a base colour texture decoded with `image`, with its mip chain;
//! - [`posed`]: a glTF model at one exact pose (palettes, CPU skinning, bounds, a camera, packets of unique
//!   instances), in any [`PaletteKind`];
//! - [`attach`]: rigid attachments (a spear in a hand) as one more mesh of a character, weighted wholly to a joint;
//! - [`procedural`]: the procedural tier's [`ProceduralMesh`] (no bones) and [`Undulation`], the swimming wave
//!   the GPU applies from each instance's phase and amplitude, with its CPU reference; [`fish_mesh`] generates a
//!   fish for it.
//!
//! The crate has no cargo features.
//!
//! # Example
//!
//! ```
//! use crowd_mesh::{PackedMesh, lod_thresholds};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
//! let model = anim_pose::import_file(path)?;
//! let packed = PackedMesh::new(&model.meshes[0], model.skeletons[0].skin_joint_count())?;
//! assert_eq!(packed.lods.len(), 5);
//! // Screen sizes at which to switch levels so that each stays under a pixel at 1080 lines.
//! let thresholds = lod_thresholds(&packed.lods, 1.0, 1080.0, 1.0, 0.1);
//! assert_eq!(thresholds.len(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod attach;
mod error;
mod fish;
mod lod;
mod material;
mod mesh_pack;
mod palette_kind;
pub mod posed;
pub mod procedural;
pub mod quantize;
mod texture;

pub use error::{Error, Result};
pub use fish::{FISH_TRIANGLES, fish_mesh};
pub use lod::{DEFAULT_LOD_TARGETS, LodLevel, build_lods, lod_thresholds};
pub use material::Material;
pub use mesh_pack::{PackedJoints, PackedMesh, UvFormat};
pub use palette_kind::PaletteKind;
pub use procedural::{ProceduralMesh, Undulation};
pub use texture::{MAX_TEXTURE_SIDE, TextureData};
