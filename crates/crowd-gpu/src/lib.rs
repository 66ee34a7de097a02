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
//!
//! # An engine's frame
//!
//! The engine owns the device, the queue, the encoders and the passes; the renderer records into them and never
//! submits (`examples/engine.rs` is this program whole, with its device and attachments):
//!
//! ```no_run
//! use crowd_gpu::glam::Vec3;
//! use crowd_gpu::{
//!     Bake, ClipId, CrowdAsset, CrowdFrame, CrowdRenderer, Error, FrameCamera, PipelineCache, RendererConfig,
//!     Spawn, ViewDesc, wgpu,
//! };
//! # fn frame(
//! #     adapter: &wgpu::Adapter,
//! #     device: &wgpu::Device,
//! #     queue: &wgpu::Queue,
//! #     color: &wgpu::TextureView,
//! #     depth: &wgpu::TextureView,
//! # ) -> Result<(), Box<dyn std::error::Error>> {
//!
//! // Once: the character, a crowd of it, a renderer for the crowd and its bake (written by `cargo xtask bake`).
//! let model = crowd_gpu::anim_pose::import_file("character.glb")?;
//! let asset = CrowdAsset::from_model(&model, &Default::default())?;
//! let (color_format, depth_format) = (wgpu::TextureFormat::Rgba8UnormSrgb, wgpu::TextureFormat::Depth32Float);
//! let config = RendererConfig::for_device(adapter, device, color_format, Some(depth_format));
//! let mut crowd: CrowdFrame = CrowdFrame::new(asset.character.clone(), asset.frame_settings_for(device, &config))?;
//! crowd.add(&Spawn::at(Vec3::new(0.0, 0.0, -5.0), ClipId(0)))?;
//! let cache = PipelineCache::new(device);
//! let mut renderer: CrowdRenderer = CrowdRenderer::for_crowd(device, queue, &cache, &config, &asset, &crowd)?;
//! renderer.set_bake(device, queue, &Bake::read_file("character.bake")?, &asset.model_meshes)?;
//! let mut view = renderer.create_view(device)?;
//! let exchange = crowd.exchange().clone();
//!
//! // Each frame: the simulation steps (on its own thread in an engine); the render side prepares the packet and the
//! // view into the engine's encoder, draws in the engine's pass, and the engine submits.
//! let camera = FrameCamera::perspective(Vec3::new(0.0, 1.7, 3.0), Vec3::ZERO, Vec3::Y, 0.9, 16.0 / 9.0, 0.1, 500.0);
//! crowd.step(1.0 / 60.0, &camera)?;
//! let mut encoder = device.create_command_encoder(&Default::default());
//! let packet = exchange.begin_read()?;
//! match renderer.prepare(device, &mut encoder, &packet) {
//!     Err(Error::OutOfStep { .. }) => crowd.resend_all(), // it missed changes: the next packet carries all
//!     other => _ = other?,
//! }
//! drop(packet);
//! let prepared = renderer.prepare_view(device, &mut encoder, &mut view, ViewDesc::new(camera))?;
//! let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
//!     color_attachments: &[Some(wgpu::RenderPassColorAttachment {
//!         view: color,
//!         depth_slice: None,
//!         resolve_target: None,
//!         ops: wgpu::Operations::default(),
//!     })],
//!     depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
//!         view: depth,
//!         depth_ops: Some(wgpu::Operations::default()),
//!         stencil_ops: None,
//!     }),
//!     ..Default::default()
//! });
//! renderer.render_view(&prepared, &mut pass);
//! drop(pass);
//! queue.submit([encoder.finish()]);
//! # Ok(())
//! # }
//! ```

mod asset;
mod debug_view;
mod error;
mod gpu_cull;
mod gpu_mesh;
mod grow_buffer;
pub mod headless;
mod lighting;
mod limits;
mod pipeline_cache;
mod procedural;
mod renderer;
mod resident_buffer;
pub mod shaders;
mod texture_upload;
mod uniforms;
mod upload;
mod work;

pub use asset::{AssetOptions, CrowdAsset};
pub use debug_view::DebugView;
pub use error::{Error, Result};
pub use gpu_cull::{CULL_BUCKETS, CullQueries, CullView, DrawSlot, GpuCuller, HIDDEN_STATE, OUT_OF_SEGMENT};
pub use lighting::Lighting;
pub use pipeline_cache::{CacheStats, PipelineCache};
pub use procedural::{ProceduralFrame, ProceduralRenderer};
pub use renderer::path::GPU_DRIVEN_DOWNLEVEL;
pub use renderer::{
    CrowdRenderer, CrowdView, DrawCrowd, GPU_DRIVEN_STORAGE_BUFFERS, MeshHandle, PrepareStats, PreparedView,
    RenderPath, RendererConfig, ViewDesc,
};
pub use resident_buffer::{ResidentBuffer, ResidentUpdate};
pub use work::{DrawTally, GpuWork, RENDER_STATISTICS, StatisticsQuery, WorkCounts, WorkQueries};

// The crates whose types an engine names, so that it can depend on this crate alone (wgpu and glam at the versions
// this crate uses).
pub use {anim_pose, bake_format, crowd_cull, crowd_frame, crowd_mesh, glam, skin_pack, wgpu};
/// The types of a frame loop: the crowd and its settings, spawns, clips, cameras and handles, a bake.
pub use {
    bake_format::Bake,
    crowd_cull::Handle,
    crowd_frame::{Character, ClipId, CrowdFrame, FrameCamera, FrameSettings, Packet, ResendRequest, Spawn},
};

// GPU layouts and a test helper, public only for this workspace's layout and image tests: not part of the API.
#[doc(hidden)]
pub use debug_view::instance_id_color;
#[doc(hidden)]
pub use gpu_cull::{ClipBoundsGpu, CullViewUniform};
#[doc(hidden)]
pub use procedural::WaveUniform;
#[doc(hidden)]
pub use uniforms::{DRAW_UNIFORM_STRIDE, DrawUniform, FrameUniform};
