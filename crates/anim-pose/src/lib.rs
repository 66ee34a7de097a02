//! Skeletons, animation clips, skinned meshes and the CPU animation runtime for crowds, with no GPU dependency.
//!
//! `anim-pose` is the data crate at the head of the crowd pipeline.
//! It imports skinned, animated glTF 2.0 characters into plain Rust types
//! ([`Model`], [`Skeleton`], [`Clip`], [`SkinnedMesh`]) and evaluates clips exactly as the glTF
//! specification prescribes ([`Clip::sample_channel`], [`Clip::sample_local_pose`]).
//! Later stages (`skin-pack`, `crowd-cull`, `crowd-gpu`) consume these types; this crate never depends
//! on them, nor on wgpu, so an engine can take it alone.
//!
//! The runtime drives a crowd in three ways:
//! - **a pose per instance**: a [`RuntimeClip`] (resampled from an error budget, stored SoA) is sampled by
//!   [`SamplingJob`], mixed by [`BlendingJob`] (masks, additive layers, crossfades), modified by [`ProceduralJob`],
//!   and converted by [`LocalToModelJob`];
//! - **shared pose pools**: a [`PosePool`] samples K phase slots per clip once a frame, and instances map to two
//!   slots and a fraction ([`PosePool::map_instances`]), with crossfade buckets for transitions;
//! - **procedural poses**: [`ProceduralJob`] writes rotations from parameters alone.
//!
//! Every job is a struct of public fields with `validate()` and a `run()` that never allocates.
//!
//! # Example
//!
//! ```no_run
//! # #[cfg(feature = "gltf")]
//! # fn main() -> anim_pose::Result<()> {
//! use anim_pose::{LocalToModelJob, RuntimeClip, RuntimeClipOptions, SamplingJob, SoaTransform};
//!
//! let model = anim_pose::import_file("assets/crowd_character.glb")?;
//! let skeleton = &model.skeletons[0];
//! let clip = RuntimeClip::build(&model.clips[0], skeleton, &RuntimeClipOptions::default())?;
//! // Set up once per instance...
//! let mut local = vec![SoaTransform::IDENTITY; clip.num_soa_joints()];
//! let mut model_space = vec![glam::Affine3A::IDENTITY; skeleton.joint_count()];
//! // ...then every frame, without allocating.
//! SamplingJob { clip: &clip, time: 0.5, output: &mut local }.run()?;
//! LocalToModelJob { skeleton, input: &local, output: &mut model_space, from: None, root: None }.run()?;
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
mod blending_job;
mod clip;
mod error;
#[cfg(feature = "gltf")]
mod import;
mod local_to_model_job;
mod mesh;
mod model;
mod model_error;
mod pose_pool;
mod procedural_job;
mod root_motion;
mod runtime_clip;
mod sampling_job;
mod skeleton;
mod soa;
mod transform;

pub use blending_job::{BlendLayer, BlendingJob, crossfade};
pub use clip::{Channel, ChannelValues, Clip, Interpolation, Property};
pub use error::{Error, Result};
#[cfg(feature = "gltf")]
pub use import::{import_file, import_slice};
pub use local_to_model_job::LocalToModelJob;
pub use mesh::{Indices, Material, SkinnedMesh, TextureImage};
pub use model::{Aabb, ImportWarning, Model, SkinBinding};
pub use model_error::{ModelError, PointError, VirtualVertices, largest_point_distance};
pub use pose_pool::{ClipSlots, CrossfadeRef, MAX_CROSSFADE_LEVELS, MAX_POOL_SLOTS, PoolClip};
pub use pose_pool::{PosePool, PosePoolOptions, SlotRef};
pub use procedural_job::{Procedural, ProceduralJob, SineSway};
pub use root_motion::{RootDisplacement, RootMotion};
pub use runtime_clip::{ErrorBudget, FrameSpacing, Looping, ResampleError, RuntimeClip, RuntimeClipOptions};
pub use sampling_job::SamplingJob;
pub use skeleton::{MAX_JOINTS, NO_PARENT, Skeleton};
pub use soa::{MAX_SOA_JOINTS, SoaQuat, SoaTransform, SoaVec3, num_soa_joints, pack_soa, unpack_soa};
pub use transform::Transform;
