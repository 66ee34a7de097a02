//! [`CrowdRenderer`]: instanced skinned draws of crowd-frame's packet, as a middleware renderer: the engine owns
//! the device, the queue and the render pass; `prepare` uploads what changed and `render` records the draws.

mod baked;
mod bind_groups;
mod config;
mod gpu_driven;
mod pipelines;
mod prepare;
mod record;
mod vat;

use crowd_frame::INSTANCE_RECORD_SIZE;
use crowd_mesh::{Material, PackedMesh, PaletteKind};
use skin_pack::{PaletteEntry, PaletteFormat};

use crate::debug_view::DebugView;
use crate::gpu_mesh::GpuMesh;
use crate::grow_buffer::GrowBuffer;
use crate::lighting::Lighting;
use crate::shaders;
use crate::uniforms::{DrawUniform, FrameUniform};
use crate::{Error, Result};
use bind_groups::{draw_group, frame_group, storage_entry, uniform_entry};
use pipelines::{palette_fetch, skin_pipeline};

pub use config::RendererConfig;
pub use gpu_driven::{CrowdView, GPU_DRIVEN_STORAGE_BUFFERS, RenderPath};
pub(crate) use pipelines::draw_pipeline;
pub use prepare::PrepareStats;
pub use record::DrawCrowd;

/// A mesh registered with [`CrowdRenderer::add_mesh`]: an opaque token that identifies the mesh among the
/// renderer's (two handles from one renderer are equal only for the same mesh). Meshes stay registered for the
/// renderer's life; no method takes a handle yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MeshHandle(u32);

/// One draw call of the plan.
#[derive(Clone, Copy, Debug)]
struct PlannedDraw {
    mesh: u32,
    chunk: u32,
    first_index: u32,
    index_count: u32,
    first_instance: u32,
    instance_count: u32,
}

/// Draws crowd-frame packets: every mesh added, for every visible instance of the packet.
///
/// A renderer draws one character: its meshes share the packet's skin (a scene with several characters uses a
/// renderer each). Buffers:
/// - records: storage, a window of `max_storage_buffer_binding_size` bytes (rounded down to 256) bound per chunk
///   with a dynamic offset; instance `i` of the packet is record `i - chunk · records_per_chunk` of its chunk's
///   window, and a draw that crosses a chunk boundary is split in two;
/// - pooled and unique palettes: storage, each bound whole, so each must fit one binding;
/// - draw uniforms: one `DrawUniform` per draw call at a 256-byte stride, bound with a dynamic offset.
///
/// All grow by doubling and are written only where the packet's dirty ranges say.
///
/// `F` is the palette format, skin-pack's [`PaletteEntry`] (f32 3×4), [`Mat3x4F16`](skin_pack::Mat3x4F16) or
/// [`QtF16`](skin_pack::QtF16): the renderer draws packets of that format only, checked by the type system.
#[derive(Debug)]
pub struct CrowdRenderer<F: PaletteFormat + 'static = PaletteEntry> {
    format: std::marker::PhantomData<fn() -> F>,
    config: RendererConfig,
    /// The record window in bytes: a multiple of 256 and of the record size.
    record_window: u64,
    /// `max_storage_buffer_binding_size`, the smaller of the config's and the device's.
    binding_limit: u64,
    /// The bytes of a palette binding: `binding_limit` rounded down to 4 (storage bindings are whole words). Both
    /// the size check in `prepare` and the bind group use it, so an accepted palette buffer is bound whole.
    palette_window: u64,
    max_buffer: u64,
    frame_layout: wgpu::BindGroupLayout,
    draw_layout: wgpu::BindGroupLayout,
    material_layout: wgpu::BindGroupLayout,
    module: wgpu::ShaderModule,
    pipelines: [wgpu::RenderPipeline; 2],
    depth_pipelines: Option<[wgpu::RenderPipeline; 2]>,
    sampler: wgpu::Sampler,
    frame_uniform: wgpu::Buffer,
    records: GrowBuffer,
    pool: GrowBuffer,
    unique: GrowBuffer,
    draw_uniforms: GrowBuffer,
    frame_group: wgpu::BindGroup,
    draw_group: wgpu::BindGroup,
    meshes: Vec<GpuMesh>,
    plan: Vec<PlannedDraw>,
    draw_bytes: Vec<u8>,
    lighting: Lighting,
    view: DebugView,
    stats: PrepareStats,
    /// The last packet's palette size (the views' frame uniforms need it).
    joints: u32,
    /// Bumped whenever the records or palette buffers are recreated (the views' bind groups must be too).
    buffers_generation: u64,
    gpu_driven: Option<gpu_driven::GpuDriven>,
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// A renderer for `config`, drawing into passes of its formats on `device`.
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the limits leave no room for one record window (a `max_storage_buffer_binding_size`
    /// under 256 bytes) or allow fewer than 3 bind groups or 3 storage buffers per vertex stage.
    pub fn new(device: &wgpu::Device, config: &RendererConfig) -> Result<Self> {
        let device_limits = device.limits();
        let binding = config
            .limits
            .max_storage_buffer_binding_size
            .min(device_limits.max_storage_buffer_binding_size);
        let record_window = binding / 256 * 256;
        if record_window == 0 {
            return Err(Error::gpu(format!(
                "max_storage_buffer_binding_size is {binding} bytes; the renderer needs at least 256"
            )));
        }
        let bind_groups = config.limits.max_bind_groups.min(device_limits.max_bind_groups);
        let storage = config
            .limits
            .max_storage_buffers_per_shader_stage
            .min(device_limits.max_storage_buffers_per_shader_stage);
        if bind_groups < 3 || storage < 3 {
            return Err(Error::gpu(format!(
                "the limits allow {bind_groups} bind groups and {storage} storage buffers per stage; the renderer \
                 needs 3 of each"
            )));
        }
        let max_buffer = config.limits.max_buffer_size.min(device_limits.max_buffer_size);

        let record = INSTANCE_RECORD_SIZE as u64;
        let entry = size_of::<F>() as u64;
        let frame_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("crowd frame"),
            entries: &[
                uniform_entry(0, false, size_of::<FrameUniform>() as u64),
                storage_entry(1, true, record),
                storage_entry(2, false, entry),
                storage_entry(3, false, entry),
            ],
        });
        let draw_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("crowd draw"),
            entries: &[uniform_entry(0, true, size_of::<DrawUniform>() as u64)],
        });
        let material_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("crowd material"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("crowd"),
            bind_group_layouts: &[Some(&frame_layout), Some(&draw_layout), Some(&material_layout)],
            immediate_size: 0,
        });
        let source = shaders::crowd_skin_source(palette_fetch(PaletteKind::of::<F>()));
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(shaders::CROWD_SKIN.file),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = |joints_u16: bool, depth_only: bool| {
            let entry = match (depth_only, joints_u16) {
                (false, false) => "vs_joints_u8",
                (false, true) => "vs_joints_u16",
                (true, false) => "vs_depth_joints_u8",
                (true, true) => "vs_depth_joints_u16",
            };
            skin_pipeline(device, &module, config, &layout, entry, joints_u16, depth_only)
        };
        let pipelines = [pipeline(false, false), pipeline(true, false)];
        let depth_pipelines = config
            .depth_format
            .map(|_| [pipeline(false, true), pipeline(true, true)]);
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("crowd base colour"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Linear,
            ..Default::default()
        });
        let frame_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd frame uniform"),
            size: size_of::<FrameUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let storage = wgpu::BufferUsages::STORAGE;
        let records = GrowBuffer::new(device, "crowd records", storage, record_window);
        let pool = GrowBuffer::new(device, "crowd pooled palettes", storage, u64::MAX / 2);
        let unique = GrowBuffer::new(device, "crowd unique palettes", storage, u64::MAX / 2);
        let draw_uniforms = GrowBuffer::new(device, "crowd draw uniforms", wgpu::BufferUsages::UNIFORM, u64::MAX / 2);
        let frame_group = frame_group(
            device,
            &frame_layout,
            &frame_uniform,
            &records,
            &pool,
            &unique,
            binding / 4 * 4,
        );
        let draw_group = draw_group(device, &draw_layout, &draw_uniforms);
        Ok(Self {
            format: std::marker::PhantomData,
            config: config.clone(),
            record_window,
            binding_limit: binding,
            palette_window: binding / 4 * 4,
            max_buffer,
            frame_layout,
            draw_layout,
            material_layout,
            module,
            pipelines,
            depth_pipelines,
            sampler,
            frame_uniform,
            records,
            pool,
            unique,
            draw_uniforms,
            frame_group,
            draw_group,
            meshes: Vec::new(),
            plan: Vec::new(),
            draw_bytes: Vec::new(),
            lighting: Lighting::default(),
            view: DebugView::default(),
            stats: PrepareStats::default(),
            joints: 0,
            buffers_generation: 0,
            gpu_driven: None,
        })
    }

    /// Registers `mesh` with `material`; every later `prepare` draws it for every instance.
    ///
    /// # Errors
    ///
    /// As the upload, [`Error::Mesh`] holding `crowd_mesh::Error::Mesh` for a buffer past `max_buffer_size` or a
    /// non-finite factor, or `crowd_mesh::Error::Texture` for a texture past the device's side limit or with a
    /// broken mip chain.
    pub fn add_mesh(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        mesh: &PackedMesh,
        material: &Material,
    ) -> Result<MeshHandle> {
        let gpu = GpuMesh::new(device, queue, mesh, material, &self.material_layout, &self.sampler)?;
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
        (self.record_window / INSTANCE_RECORD_SIZE as u64) as u32
    }

    /// What the last `prepare` set up.
    pub fn stats(&self) -> PrepareStats {
        self.stats
    }
}
