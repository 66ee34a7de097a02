//! Skeletons, animation clips and skinned meshes for crowd rendering, with no GPU dependency.
//!
//! `anim-pose` is the data crate at the head of the crowd pipeline.
//! It imports skinned, animated glTF 2.0 characters into plain Rust types
//! ([`Model`], [`Skeleton`], [`Clip`], [`SkinnedMesh`]) and evaluates clips exactly as the glTF
//! specification prescribes ([`Clip::sample_channel`], [`Clip::sample_local_pose`]).
//! Later stages (`skin-pack`, `crowd-cull`, `crowd-gpu`) consume these types; this crate never depends
//! on them, nor on wgpu, so an engine can take it alone.
//!
//! # Example
//!
//! ```no_run
//! # #[cfg(feature = "gltf")]
//! # fn main() -> anim_pose::Result<()> {
//! let model = anim_pose::import_file("assets/crowd_character.glb")?;
//! let skeleton = &model.skeletons[0];
//! let clip = &model.clips[0];
//! let mut pose = vec![anim_pose::Transform::IDENTITY; skeleton.joint_count()];
//! clip.sample_local_pose(skeleton, 0.5 * clip.duration, &mut pose)?;
//! let mut model_space = vec![glam::Mat4::IDENTITY; skeleton.joint_count()];
//! skeleton.local_to_model(&pose, &mut model_space)?;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "gltf"))]
//! # fn main() {}
//! ```
//!
//! # Features
//!
//! - `gltf` (default): glTF 2.0 import of `.glb` files, `.gltf` files with external `.bin` and image
//!   files, and `data:` URIs.
//! - `strict-asserts`: keeps the `debug_assert!` checks of per-element validity in release builds.
//! - `scalar`: uses glam's scalar math instead of SIMD.

mod asserts;
mod clip;
mod error;
#[cfg(feature = "gltf")]
mod import;
mod mesh;
mod model;
mod skeleton;
mod transform;

pub use clip::{Channel, ChannelValues, Clip, Interpolation, Property};
pub use error::{Error, Result};
#[cfg(feature = "gltf")]
pub use import::{import_file, import_slice};
pub use mesh::{Indices, Material, SkinnedMesh, TextureImage};
pub use model::{Aabb, ImportWarning, Model, SkinBinding};
pub use skeleton::{MAX_JOINTS, NO_PARENT, Skeleton};
pub use transform::Transform;
