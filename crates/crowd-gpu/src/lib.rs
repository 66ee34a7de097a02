//! The wgpu crowd renderer, and the registry of every WGSL shader in `shaders/`.
//!
//! The renderer itself (instanced skinned draws, baked playback, GPU culling, headless images) is being built
//! (issue 21). Today the crate holds:
//! - [`headless`]: a device without a window ([`headless::Gpu`]) and an offscreen RGBA8 target that reads back
//!   ([`headless::OffscreenTarget`]);
//! - [`TextureData`], a material's base colour texture decoded with `image`, with its mip chain;
//! - [`shaders`], the single place that loads WGSL source; its tests validate every shader with naga and check the
//!   GPU layouts of the palette entries and the instance record against their Rust types;
//! - [`PackedMesh`], an imported skinned primitive in the renderer's compact vertex streams, with the quantizers
//!   of [`quantize`] and their stated error bounds, and its LOD levels ([`build_lods`], with meshopt) and the
//!   screen-size thresholds that keep each level's error under a pixel ([`lod_thresholds`]).

mod error;
mod gpu_cull;
mod gpu_mesh;
mod grow_buffer;
pub mod headless;
mod lod;
mod mesh_pack;
pub mod posed;
pub mod quantize;
mod renderer;
mod resident_buffer;
pub mod shaders;
mod texture;
mod uniforms;

pub use error::{Error, Result};
pub use gpu_cull::{CULL_BUCKETS, CULL_WORKGROUP, CullView, CullViewUniform, DrawSlot, GpuCuller, HIDDEN_STATE};
pub use gpu_mesh::{Material, VERTEX_STRIDE_U8, VERTEX_STRIDE_U16};
pub use lod::{DEFAULT_LOD_TARGETS, LodLevel, build_lods, lod_thresholds};
pub use mesh_pack::{PackedJoints, PackedMesh, UvFormat};
pub use renderer::{
    CrowdRenderer, CrowdView, GPU_DRIVEN_STORAGE_BUFFERS, MeshHandle, PaletteKind, PrepareStats, RenderPath,
    RendererConfig,
};
pub use resident_buffer::ResidentBuffer;
pub use texture::{MAX_TEXTURE_SIDE, TextureData};
pub use uniforms::{
    DRAW_UNIFORM_STRIDE, DebugView, DrawUniform, FrameUniform, GpuFrameUniform, Lighting, instance_id_color,
};
