//! [`CrowdRenderer`]: skinned draws of crowd-frame's packets, as middleware: the engine owns the device, the queue,
//! the encoders and the render passes; `prepare` records what a packet changed into the engine's encoder,
//! `prepare_view` records a view's camera and (GPU-driven) its cull pass, and `render_view` records the draws into
//! the engine's pass. Nothing here submits.

pub(crate) mod baked;
mod bind_groups;
mod config;
mod gpu_driven;
pub(crate) mod path;
mod prepare;
pub(crate) mod vat;
mod view;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crowd_frame::INSTANCE_RECORD_SIZE;
use crowd_mesh::{Material, PackedMesh, PaletteKind};
use skin_pack::{PaletteEntry, PaletteFormat};

use crate::debug_view::DebugView;
use crate::gpu_mesh::GpuMesh;
use crate::grow_buffer::GrowBuffer;
use crate::lighting::Lighting;
use crate::limits::DeviceLimits;
use crate::pipeline_cache::{DrawKey, DrawPipelines, PipelineCache};
use crate::upload::Uploads;
use crate::{Error, Result};

pub use config::RendererConfig;
pub use gpu_driven::GPU_DRIVEN_STORAGE_BUFFERS;
pub use path::RenderPath;
pub use prepare::PrepareStats;
pub use view::{CrowdView, DrawCrowd, PreparedView, ViewDesc};

/// A mesh registered with [`CrowdRenderer::add_mesh`]: an opaque token that identifies the mesh among the
/// renderer's (two handles from one renderer are equal only for the same mesh). Meshes stay registered for the
/// renderer's life; no method takes a handle yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MeshHandle(u32);

/// One draw call of the plan: the packet's records `first_instance..` of one mesh and chunk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlannedDraw {
    mesh: u32,
    chunk: u32,
    first_index: u32,
    index_count: u32,
    first_instance: u32,
    instance_count: u32,
}

/// Renderer identities, so that a view is never used with a renderer that did not make it.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Draws crowd-frame packets of one character: every mesh added, for every instance the packet or the GPU draws.
///
/// Per frame: [`prepare`](CrowdRenderer::prepare) records the packet's uploads (and on the GPU-driven path the
/// resident scatter) into the engine's encoder; per view, [`prepare_view`](CrowdRenderer::prepare_view) records its
/// camera and (GPU-driven) its cull pass, and [`render_view`](CrowdRenderer::render_view) records its draws into a
/// render pass of the configured formats. A renderer draws one character: its meshes share the packet's skin.
///
/// Buffers, each grown by doubling within the device's limits and written only where the packet's dirty ranges say:
/// - records: storage, a window of `max_storage_buffer_binding_size` bytes (rounded down to 256) bound per chunk
///   with a dynamic offset; instance `i` of the packet is record `i - chunk · records_per_chunk` of its chunk's
///   window, and a draw that crosses a chunk boundary is split in two;
/// - pooled and unique palettes: storage, each bound whole, so each must fit one binding;
/// - draw uniforms: one `DrawUniform` per draw call at a 256-byte stride, bound with a dynamic offset.
///
/// `F` is the palette format, skin-pack's [`PaletteEntry`] (f32 3×4), [`Mat3x4F16`](skin_pack::Mat3x4F16) or
/// [`QtF16`](skin_pack::QtF16): the renderer draws packets of that format only, checked by the type system.
#[derive(Debug)]
pub struct CrowdRenderer<F: PaletteFormat + 'static = PaletteEntry> {
    format: std::marker::PhantomData<fn() -> F>,
    id: u64,
    config: RendererConfig,
    limits: DeviceLimits,
    cache: PipelineCache,
    pipelines: Arc<DrawPipelines>,
    key: DrawKey,
    sampler: wgpu::Sampler,
    records: GrowBuffer,
    pool: GrowBuffer,
    unique: GrowBuffer,
    draw_uniforms: GrowBuffer,
    meshes: Vec<GpuMesh>,
    plan: Vec<PlannedDraw>,
    draw_bytes: Vec<u8>,
    uploads: Uploads,
    lighting: Lighting,
    view: DebugView,
    stats: PrepareStats,
    /// The last packet's palette size (the views' frame uniforms need it).
    joints: u32,
    gpu_driven: Option<gpu_driven::GpuDriven>,
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// A renderer for `config`, drawing into passes of its formats on `device`, with the layouts and pipelines of
    /// `cache` (made for `device`; renderers that share a cache compile each pipeline once).
    ///
    /// # Errors
    ///
    /// [`Error::DeviceLimit`] when the limits leave no room for one record window (a
    /// `max_storage_buffer_binding_size` or `max_buffer_size` under 256 bytes) or allow fewer than 3 bind groups or
    /// 3 storage buffers per vertex stage; [`Error::Order`] when `cache` was made for another device.
    pub fn new(device: &wgpu::Device, cache: &PipelineCache, config: &RendererConfig) -> Result<Self> {
        if !cache.is_for(device) {
            return Err(Error::Order {
                call: "CrowdRenderer::new",
                why: "the pipeline cache was made for another device",
            });
        }
        let limits = DeviceLimits::new(&config.limits, &device.limits());
        for (limit, have, needs) in [
            (
                "max_storage_buffer_binding_size",
                limits.record_window(),
                INSTANCE_RECORD_SIZE as u64 * 8,
            ),
            ("max_buffer_size", limits.buffer, 256),
            ("max_bind_groups", u64::from(limits.bind_groups), 3),
            (
                "max_storage_buffers_per_shader_stage",
                u64::from(limits.storage_buffers),
                3,
            ),
        ] {
            if have < needs {
                return Err(Error::DeviceLimit { limit, have, needs });
            }
        }
        let key = DrawKey::new(PaletteKind::of::<F>(), config);
        let pipelines = cache.draws(key);
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("crowd base colour"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Linear,
            ..Default::default()
        });
        let storage = wgpu::BufferUsages::STORAGE;
        Ok(Self {
            format: std::marker::PhantomData,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            config: config.clone(),
            limits,
            cache: cache.clone(),
            pipelines,
            key,
            sampler,
            records: GrowBuffer::new(device, "crowd records", storage, limits.record_window()),
            pool: GrowBuffer::new(device, "crowd pooled palettes", storage, u64::MAX / 2),
            unique: GrowBuffer::new(device, "crowd unique palettes", storage, u64::MAX / 2),
            draw_uniforms: GrowBuffer::new(device, "crowd draw uniforms", wgpu::BufferUsages::UNIFORM, u64::MAX / 2),
            meshes: Vec::new(),
            plan: Vec::new(),
            draw_bytes: Vec::new(),
            uploads: Uploads::new(1 << 20),
            lighting: Lighting::default(),
            view: DebugView::default(),
            stats: PrepareStats::default(),
            joints: 0,
            gpu_driven: None,
        })
    }

    /// Registers `mesh` with `material`; every later `prepare` draws it for every instance. Meshes are added
    /// before [`CrowdRenderer::enable_gpu_driven`], whose indirect draws are made for the meshes it finds.
    ///
    /// # Errors
    ///
    /// [`Error::Order`] after `enable_gpu_driven`. As the upload, [`Error::Mesh`] holding `crowd_mesh::Error::Mesh`
    /// for a buffer past `max_buffer_size` or a non-finite factor, or `crowd_mesh::Error::Texture` for a texture past
    /// the device's side limit or with a broken mip chain.
    pub fn add_mesh(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        mesh: &PackedMesh,
        material: &Material,
    ) -> Result<MeshHandle> {
        if self.gpu_driven.is_some() {
            return Err(Error::Order {
                call: "add_mesh",
                why: "the GPU-driven path is enabled: its indirect draws are made for the meshes added before",
            });
        }
        let gpu = GpuMesh::new(
            device,
            queue,
            mesh,
            material,
            &self.cache.layouts().material,
            &self.sampler,
        )?;
        self.meshes.push(gpu);
        Ok(MeshHandle(self.meshes.len() as u32 - 1))
    }

    /// Sets the light of the next frames.
    pub fn set_lighting(&mut self, lighting: Lighting) {
        self.lighting = lighting;
    }

    /// Sets what the next frames show.
    pub fn set_debug_view(&mut self, view: DebugView) {
        self.view = view;
    }

    /// The records one chunk holds: the record window over the record size.
    pub fn records_per_chunk(&self) -> u32 {
        (self.limits.record_window() / INSTANCE_RECORD_SIZE as u64) as u32
    }

    /// What the last successful `prepare` set up.
    pub fn stats(&self) -> PrepareStats {
        self.stats
    }

    /// The configuration the renderer was made with.
    pub fn config(&self) -> &RendererConfig {
        &self.config
    }

    /// The most store slots a GPU-driven renderer of `config` holds on `device`: its resident states (48 bytes a
    /// slot) are bound whole, and its cull runs a thread per slot. Give it to the crowd
    /// (`FrameSettings::max_slots`), so that adds past it are refused where they are made.
    pub fn max_resident_slots(device: &wgpu::Device, config: &RendererConfig) -> usize {
        let limits = DeviceLimits::new(&config.limits, &device.limits());
        usize::try_from(crate::resident_buffer::max_slots(&limits)).unwrap_or(usize::MAX)
    }
}
