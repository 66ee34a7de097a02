//! The wgpu crowd renderer, and the registry of every WGSL shader in `shaders/`.
//!
//! The renderer itself (instanced skinned draws, baked playback, GPU culling, headless images) is being built
//! (issue 21). Today the crate holds:
//! - [`CrowdRenderer`], which uploads crowd-mesh's packed meshes (`crowd_mesh::PackedMesh`, with their
//!   `crowd_mesh::Material`) and draws crowd-frame's packets, skinned on the GPU;
//! - [`GpuCuller`], the GPU-driven culling pass over resident instances;
//! - [`headless`]: a device without a window ([`headless::Gpu`]) and an offscreen RGBA8 target that reads back
//!   ([`headless::OffscreenTarget`]);
//! - [`shaders`], the single place that loads WGSL source; its tests validate every shader with naga and check the
//!   GPU layouts of the palette entries and the instance record against their Rust types.
//!
//! Everything that needs no device (mesh packing, quantizers, LOD levels, textures, exact poses) lives in
//! `crowd-mesh`, which an engine with its own renderer can use without wgpu.

mod error;
mod gpu_cull;
mod gpu_mesh;
mod grow_buffer;
pub mod headless;
mod renderer;
mod resident_buffer;
pub mod shaders;
mod uniforms;

pub use error::{Error, Result};
pub use gpu_cull::{CULL_BUCKETS, CULL_WORKGROUP, CullView, CullViewUniform, DrawSlot, GpuCuller, HIDDEN_STATE};
pub use gpu_mesh::{VERTEX_STRIDE_U8, VERTEX_STRIDE_U16};
pub use renderer::{
    CrowdRenderer, CrowdView, DrawCrowd, GPU_DRIVEN_STORAGE_BUFFERS, MeshHandle, PrepareStats, RenderPath,
    RendererConfig,
};
pub use resident_buffer::ResidentBuffer;
pub use uniforms::{
    DRAW_UNIFORM_STRIDE, DebugView, DrawUniform, FrameUniform, GpuFrameUniform, Lighting, instance_id_color,
};
