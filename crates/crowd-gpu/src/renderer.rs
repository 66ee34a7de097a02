//! [`CrowdRenderer`]: instanced skinned draws of crowd-frame's packet, as a middleware renderer: the engine owns
//! the device, the queue and the render pass; `prepare` uploads what changed and `render` records the draws.

use std::num::NonZeroU64;

use crowd_cull::Tier;
use crowd_frame::{INSTANCE_RECORD_SIZE, Packet, RecordKind};
use crowd_mesh::{Material, PackedMesh, PaletteKind};
use skin_pack::{PaletteEntry, PaletteFormat};

use crate::gpu_mesh::{GpuMesh, VERTEX_STRIDE_U8, VERTEX_STRIDE_U16, vertex_attributes};
use crate::grow_buffer::GrowBuffer;
use crate::shaders::{self, ShaderSource};
use crate::uniforms::{DRAW_UNIFORM_STRIDE, DebugView, DrawUniform, FrameUniform, Lighting};
use crate::{Error, Result};

mod baked;
mod gpu_driven;
mod vat;

pub use gpu_driven::{CrowdView, GPU_DRIVEN_STORAGE_BUFFERS, RenderPath};

/// How a [`CrowdRenderer`] is built: the pass it draws into and the limits it keeps to. (The palette format is the
/// renderer's type parameter, the same as its packets': it is chosen once.)
#[derive(Clone, Debug)]
pub struct RendererConfig {
    /// The colour attachment's format.
    pub color_format: wgpu::TextureFormat,
    /// The depth attachment's format (`None`: no depth test, and no depth-only pipelines).
    pub depth_format: Option<wgpu::TextureFormat>,
    /// The limits to respect, at most the device's (each is taken as the smaller of the two). A smaller
    /// `max_storage_buffer_binding_size` splits the records into more chunks.
    pub limits: wgpu::Limits,
    /// The depth test (with a depth format). [`RendererConfig::DEFAULT_DEPTH_COMPARE`] is `Less`; an engine with
    /// reversed-Z depth gives `Greater`.
    pub depth_compare: wgpu::CompareFunction,
    /// Whether the draws write depth (with a depth format); `true` by default.
    pub depth_write: bool,
    /// The colour and depth attachments' MSAA sample count (1, 2, 4 as the device and formats allow).
    pub sample_count: u32,
}

impl RendererConfig {
    /// The default depth test: `Less`, with depth cleared to 1.
    pub const DEFAULT_DEPTH_COMPARE: wgpu::CompareFunction = wgpu::CompareFunction::Less;

    /// A configuration for passes of `color_format` and `depth_format` within `limits`: depth test `Less` with
    /// writes, no MSAA.
    pub fn new(
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        limits: wgpu::Limits,
    ) -> Self {
        Self {
            color_format,
            depth_format,
            limits,
            depth_compare: Self::DEFAULT_DEPTH_COMPARE,
            depth_write: true,
            sample_count: 1,
        }
    }
}

/// A mesh registered with [`CrowdRenderer::add_mesh`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MeshHandle(pub u32);

/// What one [`CrowdRenderer::prepare`] set up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrepareStats {
    /// Draw calls `render` records.
    pub draws: u32,
    /// Record chunks the instances span.
    pub chunks: u32,
    /// Instances drawn (each counted once, not once per mesh).
    pub instances: u32,
    /// Triangles drawn, over every mesh and instance.
    pub triangles: u64,
    /// Bytes written to the device: the packet's dirty ranges, the draw and frame uniforms.
    pub uploaded_bytes: u64,
}

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
/// - draw uniforms: one [`DrawUniform`] per draw call at a 256-byte stride, bound with a dynamic offset.
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

fn storage_entry(binding: u32, dynamic: bool, min: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: dynamic,
            min_binding_size: NonZeroU64::new(min),
        },
        count: None,
    }
}

fn uniform_entry(binding: u32, dynamic: bool, size: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: dynamic,
            min_binding_size: NonZeroU64::new(size),
        },
        count: None,
    }
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

    /// Uploads what changed in `packet` and plans its draws: every mesh for every non-empty packet draw, split at
    /// chunk boundaries. O(draws) checks; the records need none (a [`Packet`] is checked where it is built).
    /// After warm-up (the buffers and the plan at their largest) it allocates nothing itself; wgpu's
    /// `write_buffer` may, a fixed number of times per dirty range.
    ///
    /// # Errors
    ///
    /// [`Error::MeshJoint`] when a mesh
    /// reads a joint at or past the packet's `skin_joint_count`; [`Error::MissingLod`] when a draw names a LOD a
    /// mesh lacks; [`Error::Limit`] when a palette buffer is past `max_storage_buffer_binding_size` (palettes are
    /// bound whole) or any buffer the frame needs (records, palettes, draw uniforms) would be past
    /// `max_buffer_size`. Nothing is uploaded then, and `render` draws nothing until a `prepare` succeeds.
    pub fn prepare(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, packet: &Packet<F>) -> Result<PrepareStats> {
        self.plan.clear();
        self.stats = PrepareStats::default();
        let joints = packet.skin_joint_count();
        for mesh in &self.meshes {
            if mesh.max_joint as usize >= joints {
                return Err(Error::MeshJoint {
                    mesh: mesh.name.clone(),
                    joint: mesh.max_joint,
                    palette_entries: joints,
                });
            }
        }
        let per_chunk = self.records_per_chunk();
        // Draw calls: one per mesh and chunk a non-empty packet draw touches (the plan below makes exactly these).
        let mut calls = 0u64;
        for draw in packet.draws() {
            if draw.instance_count == 0 {
                continue;
            }
            for mesh in &self.meshes {
                if mesh.lods.get(usize::from(draw.lod)).is_none() {
                    return Err(Error::MissingLod {
                        mesh: mesh.name.clone(),
                        lod: draw.lod,
                        levels: mesh.lods.len(),
                        instances: draw.instance_count,
                    });
                }
            }
            let last = u64::from(draw.first_instance) + u64::from(draw.instance_count) - 1;
            calls += last / u64::from(per_chunk) - u64::from(draw.first_instance / per_chunk) + 1;
        }
        let calls = calls.saturating_mul(self.meshes.len() as u64);
        let pool_bytes = size_of_val(packet.pool_palettes()) as u64;
        let unique_bytes = size_of_val(packet.unique_palettes()) as u64;
        let record_bytes = size_of_val(packet.records()) as u64;
        let uniform_bytes = calls.saturating_mul(DRAW_UNIFORM_STRIDE);
        for (buffer, bytes) in [("pooled palettes", pool_bytes), ("unique palettes", unique_bytes)] {
            if bytes > self.palette_window {
                return Err(Error::Limit {
                    buffer,
                    bytes,
                    limit: "max_storage_buffer_binding_size (palettes are bound whole)",
                    max: self.binding_limit,
                });
            }
        }
        // Every buffer that may grow is checked before anything is uploaded: a failed prepare changes nothing.
        let max = self.max_buffer;
        for (buffer, grow, bytes) in [
            ("records", &self.records, record_bytes),
            ("pooled palettes", &self.pool, pool_bytes),
            ("unique palettes", &self.unique, unique_bytes),
            ("draw uniforms", &self.draw_uniforms, uniform_bytes),
        ] {
            let size = grow.size_for(bytes, max);
            if bytes > grow.size() && size > max {
                return Err(Error::Limit {
                    buffer,
                    bytes: size,
                    limit: "max_buffer_size",
                    max,
                });
            }
        }

        let mut rebind = self.records.reserve(device, record_bytes, max);
        rebind |= self.pool.reserve(device, pool_bytes, max);
        rebind |= self.unique.reserve(device, unique_bytes, max);
        let resident_bytes = self.prepare_resident(device, queue, packet)?;
        if rebind {
            self.buffers_generation += 1;
            self.frame_group = frame_group(
                device,
                &self.frame_layout,
                &self.frame_uniform,
                &self.records,
                &self.pool,
                &self.unique,
                self.palette_window,
            );
        }
        let dirty = packet.dirty();
        let mut uploaded = resident_bytes
            + self
                .records
                .write_ranges(queue, bytemuck::cast_slice(packet.records()), &dirty.records);
        uploaded += self.pool.write_ranges(
            queue,
            bytemuck::cast_slice(packet.pool_palettes()),
            &dirty.pool_palettes,
        );
        uploaded += self.unique.write_ranges(
            queue,
            bytemuck::cast_slice(packet.unique_palettes()),
            &dirty.unique_palettes,
        );

        let mut chunks_used = 0u32;
        let mut triangles = 0u64;
        let mut instances = 0u32;
        self.draw_bytes.clear();
        for draw in packet.draws() {
            instances += draw.instance_count;
            let mut first = draw.first_instance;
            let end = draw.first_instance + draw.instance_count;
            while first < end {
                let chunk = first / per_chunk;
                let piece_end = end.min((chunk + 1) * per_chunk);
                chunks_used = chunks_used.max(chunk + 1);
                for (m, mesh) in self.meshes.iter().enumerate() {
                    let lod = mesh.lods[usize::from(draw.lod)];
                    let uniform = DrawUniform {
                        record_base: chunk * per_chunk,
                        pooled: u32::from(draw.kind == RecordKind::Pooled),
                        lod: u32::from(draw.lod),
                        tier: tier_code(draw.tier),
                        base_color: mesh.base_color,
                        uv_f16: u32::from(mesh.uv_f16),
                        mesh: m as u32,
                        pad: [0; 2],
                    };
                    let at = self.draw_bytes.len();
                    self.draw_bytes.resize(at + DRAW_UNIFORM_STRIDE as usize, 0);
                    self.draw_bytes[at..at + size_of::<DrawUniform>()].copy_from_slice(bytemuck::bytes_of(&uniform));
                    self.plan.push(PlannedDraw {
                        mesh: m as u32,
                        chunk,
                        first_index: lod.first_index,
                        index_count: lod.index_count,
                        first_instance: first,
                        instance_count: piece_end - first,
                    });
                    triangles += u64::from(lod.index_count / 3) * u64::from(piece_end - first);
                }
                first = piece_end;
            }
        }
        debug_assert_eq!(self.plan.len() as u64, calls, "the plan makes the draws counted above");
        if self
            .draw_uniforms
            .reserve(device, self.draw_bytes.len() as u64, self.max_buffer)
        {
            self.draw_group = draw_group(device, &self.draw_layout, &self.draw_uniforms);
        }
        if !self.draw_bytes.is_empty() {
            queue.write_buffer(&self.draw_uniforms.buffer, 0, &self.draw_bytes);
        }
        self.joints = joints as u32;
        let frame = FrameUniform::new(packet.camera().view_proj(), &self.lighting, joints as u32, self.view);
        queue.write_buffer(&self.frame_uniform, 0, bytemuck::bytes_of(&frame));
        uploaded += self.draw_bytes.len() as u64 + size_of::<FrameUniform>() as u64;
        self.stats = PrepareStats {
            draws: self.plan.len() as u32,
            chunks: chunks_used,
            instances,
            triangles,
            uploaded_bytes: uploaded,
        };
        Ok(self.stats)
    }

    /// Records the draws of the last successful `prepare` into `pass`, whose attachments have the configured
    /// formats. Draws nothing for an empty packet.
    pub fn render(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.record(pass, &self.pipelines);
    }

    /// Records the same draws with the depth-only entry points (the same skinning, no fragment stage), for a
    /// pass with only a depth attachment of the configured depth format; draws nothing when the renderer has no
    /// depth format.
    pub fn render_depth_only(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some(pipelines) = &self.depth_pipelines {
            self.record(pass, pipelines);
        }
    }

    fn record(&self, pass: &mut wgpu::RenderPass<'_>, pipelines: &[wgpu::RenderPipeline; 2]) {
        self.record_with(pass, pipelines, &self.frame_group);
    }

    /// Records the planned draws with `frame_group` (the renderer's, or a view's with its own camera).
    fn record_with(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        pipelines: &[wgpu::RenderPipeline; 2],
        frame_group: &wgpu::BindGroup,
    ) {
        let window = self.record_window as u32;
        for (i, d) in self.plan.iter().enumerate() {
            let mesh = &self.meshes[d.mesh as usize];
            pass.set_pipeline(&pipelines[usize::from(mesh.joints_u16)]);
            pass.set_bind_group(0, frame_group, &[d.chunk * window]);
            pass.set_bind_group(1, &self.draw_group, &[(i as u64 * DRAW_UNIFORM_STRIDE) as u32]);
            pass.set_bind_group(2, &mesh.material, &[]);
            pass.set_vertex_buffer(0, mesh.vertices.slice(..));
            pass.set_index_buffer(mesh.indices.slice(..), mesh.index_format);
            pass.draw_indexed(
                d.first_index..d.first_index + d.index_count,
                0,
                d.first_instance..d.first_instance + d.instance_count,
            );
        }
    }
}

/// The palette fetch file that reads `kind`'s entries.
fn palette_fetch(kind: PaletteKind) -> &'static ShaderSource {
    match kind {
        PaletteKind::F32 => &shaders::PALETTE_FETCH_F32,
        PaletteKind::Mat3x4F16 => &shaders::PALETTE_FETCH_MAT3X4_F16,
        PaletteKind::QtF16 => &shaders::PALETTE_FETCH_QT_F16,
    }
}

fn tier_code(tier: Tier) -> u32 {
    tier as u32
}

/// A binding of `buffer` from its start: the whole buffer, at most `window` bytes (a multiple of 4).
fn whole(buffer: &GrowBuffer, window: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer: &buffer.buffer,
        offset: 0,
        size: NonZeroU64::new(buffer.size().min(window)),
    })
}

fn frame_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    frame: &wgpu::Buffer,
    records: &GrowBuffer,
    pool: &GrowBuffer,
    unique: &GrowBuffer,
    palette_window: u64,
) -> wgpu::BindGroup {
    frame_group_with(
        device,
        layout,
        frame,
        records,
        whole(pool, palette_window),
        whole(unique, palette_window),
    )
}

/// The frame bind group with `pool` bound as the pooled palettes (the pose pool's, or a bake's for baked draws).
fn frame_group_with(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    frame: &wgpu::Buffer,
    records: &GrowBuffer,
    pool: wgpu::BindingResource<'_>,
    unique: wgpu::BindingResource<'_>,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("crowd frame"),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: frame.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &records.buffer,
                    offset: 0,
                    size: NonZeroU64::new(records.window()),
                }),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: pool,
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: unique,
            },
        ],
    })
}

fn draw_group(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, uniforms: &GrowBuffer) -> wgpu::BindGroup {
    draw_group_of(device, layout, &uniforms.buffer)
}

/// The draw bind group over a uniform buffer of [`DrawUniform`]s at the draw stride.
fn draw_group_of(device: &wgpu::Device, layout: &wgpu::BindGroupLayout, uniforms: &wgpu::Buffer) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("crowd draw"),
        layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: uniforms,
                offset: 0,
                size: NonZeroU64::new(size_of::<DrawUniform>() as u64),
            }),
        }],
    })
}

/// One skinned render pipeline of `module` with vertex entry point `entry` (u8 or u16 joints), colour and depth
/// as `config` says, or depth only.
fn skin_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    config: &RendererConfig,
    layout: &wgpu::PipelineLayout,
    entry: &str,
    joints_u16: bool,
    depth_only: bool,
) -> wgpu::RenderPipeline {
    let attributes = vertex_attributes(joints_u16);
    let stride = if joints_u16 {
        VERTEX_STRIDE_U16
    } else {
        VERTEX_STRIDE_U8
    };
    let vertices = wgpu::VertexBufferLayout {
        array_stride: stride,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &attributes,
    };
    draw_pipeline(device, module, config, layout, entry, vertices, depth_only)
}

/// A render pipeline of the renderer's draws: vertex entry point `entry` reading one vertex buffer of `vertices`,
/// triangle lists drawn two-sided (glTF meshes may be open or mirrored; the fragment shaders flip back faces),
/// colour (`fs_main`), depth and samples as `config` says, or depth only (no fragment stage).
pub(crate) fn draw_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    config: &RendererConfig,
    layout: &wgpu::PipelineLayout,
    entry: &str,
    vertices: wgpu::VertexBufferLayout<'_>,
    depth_only: bool,
) -> wgpu::RenderPipeline {
    let targets = [Some(wgpu::ColorTargetState {
        format: config.color_format,
        blend: None,
        write_mask: wgpu::ColorWrites::ALL,
    })];
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(entry),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            buffers: &[Some(vertices)],
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::TriangleList,
            front_face: wgpu::FrontFace::Ccw,
            cull_mode: None,
            ..Default::default()
        },
        depth_stencil: config.depth_format.map(|format| wgpu::DepthStencilState {
            format,
            depth_write_enabled: Some(config.depth_write),
            depth_compare: Some(config.depth_compare),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: wgpu::MultisampleState {
            count: config.sample_count,
            ..Default::default()
        },
        fragment: (!depth_only).then(|| wgpu::FragmentState {
            module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &targets,
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// A prepared renderer's draws, whatever its palette format: for a pass that mixes renderers of several formats
/// (`&[&dyn DrawCrowd]`).
pub trait DrawCrowd {
    /// [`CrowdRenderer::render`].
    fn render(&self, pass: &mut wgpu::RenderPass<'_>);
    /// [`CrowdRenderer::render_depth_only`].
    fn render_depth_only(&self, pass: &mut wgpu::RenderPass<'_>);
}

impl<F: PaletteFormat + 'static> DrawCrowd for CrowdRenderer<F> {
    fn render(&self, pass: &mut wgpu::RenderPass<'_>) {
        CrowdRenderer::render(self, pass);
    }

    fn render_depth_only(&self, pass: &mut wgpu::RenderPass<'_>) {
        CrowdRenderer::render_depth_only(self, pass);
    }
}
