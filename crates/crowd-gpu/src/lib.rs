//! The wgpu crowd renderer, and the registry of every WGSL shader in `shaders/`.
//!
//! The crate holds:
//! - [`CrowdRenderer`], engine middleware (the engine owns the device, the queue and the pass) that uploads
//!   crowd-mesh's packed meshes (`crowd_mesh::PackedMesh`, with their `crowd_mesh::Material`) and draws
//!   crowd-frame's packets, skinned on the GPU, on one of two paths ([`RenderPath`]): CPU-culled (one record per
//!   visible instance, instanced draws) or GPU-driven (resident instances, a cull pass per [`CrowdView`], one
//!   indirect draw per mesh, LOD and tier);
//! - [`ProceduralRenderer`], the procedural tier (fish, flags, plants): one `crowd_mesh::ProceduralMesh` drawn
//!   instanced from procedural records, each vertex undulated on the GPU by the record's phase and amplitude as
//!   `crowd_mesh::Undulation::displace` does on the CPU;
//! - [`GpuCuller`] and [`ResidentBuffer`], the GPU-driven path's cull pass and instance state, usable alone;
//! - [`headless`]: a device without a window ([`headless::Gpu`]) and an offscreen RGBA8 target that reads back
//!   ([`headless::OffscreenTarget`]);
//! - [`shaders`], the single place that loads WGSL source; its tests validate every shader with naga and check the
//!   GPU layouts of the palette entries, the instance record, the resident instance and the cull structs against
//!   their Rust types.
//!
//! Baked and VAT playback (`CrowdRenderer::set_bat`, `set_vat`) draw the baked and VAT tiers on the GPU-driven path;
//! on the CPU-culled path those tiers draw through the pose pool.
//!
//! Everything that needs no device (mesh packing, quantizers, LOD levels, textures, exact poses) lives in
//! `crowd-mesh`, which an engine with its own renderer can use without wgpu.

mod debug_view;
mod error;
mod gpu_cull;
mod gpu_mesh;
mod grow_buffer;
pub mod headless;
mod lighting;
mod procedural;
mod renderer;
mod resident_buffer;
pub mod shaders;
mod texture_upload;
mod uniforms;

pub use debug_view::DebugView;
pub use error::{Error, Result};
pub use gpu_cull::{CULL_BUCKETS, CullView, DrawSlot, GpuCuller, HIDDEN_STATE, OUT_OF_SEGMENT};
pub use lighting::Lighting;
pub use procedural::{ProceduralFrame, ProceduralRenderer};
pub use renderer::{
    CrowdRenderer, CrowdView, DrawCrowd, GPU_DRIVEN_STORAGE_BUFFERS, MeshHandle, PrepareStats, RenderPath,
    RendererConfig,
};
pub use resident_buffer::ResidentBuffer;

// GPU layouts and a test helper, public only for this workspace's layout and image tests: not part of the API.
#[doc(hidden)]
pub use debug_view::instance_id_color;
#[doc(hidden)]
pub use gpu_cull::CullViewUniform;
#[doc(hidden)]
pub use procedural::WaveUniform;
#[doc(hidden)]
pub use uniforms::{DRAW_UNIFORM_STRIDE, DrawUniform, FrameUniform};
