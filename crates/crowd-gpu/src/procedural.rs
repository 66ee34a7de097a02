//! [`ProceduralRenderer`]: the procedural tier (fish, flags, plants) as engine middleware: one
//! `crowd_mesh::ProceduralMesh` drawn instanced from `crowd_frame::InstanceRecord`s whose `anim` is
//! `RecordAnim::Procedural`, each vertex displaced on the GPU by the mesh's `crowd_mesh::Undulation` from the
//! record's phase and amplitude (`shaders/crowd_procedural.wgsl`), with no bones and no per-instance CPU work.

use std::num::NonZeroU64;

use bytemuck::{Pod, Zeroable};
use crowd_frame::{FrameCamera, INSTANCE_RECORD_SIZE, InstanceRecord};
use crowd_mesh::{ProceduralMesh, Undulation};
use wgpu::util::DeviceExt;

use crate::debug_view::DebugView;
use crate::grow_buffer::GrowBuffer;
use crate::lighting::Lighting;
use crate::pipeline_cache::{PassState, draw_pipeline};
use crate::shaders;
use crate::uniforms::FrameUniform;
use crate::{Error, PrepareStats, RendererConfig, Result};

/// Bytes per vertex of a procedural mesh on the GPU: position f32 × 3, unit normal f32 × 3, RGBA8 colour.
pub(crate) const PROCEDURAL_VERTEX_STRIDE: u64 = 28;

/// `WaveUniform` of `crowd_procedural.wgsl`, 32 bytes: a `crowd_mesh::Undulation` as the shader reads it, with
/// the frame's clock (a test checks the layout with naga). Public only for that layout test: not part of the API.
#[doc(hidden)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct WaveUniform {
    /// `Undulation::head_z`.
    pub head_z: f32,
    /// `1 / Undulation::length`, computed as `Undulation::displace_at_cycle` computes it.
    pub inv_length: f32,
    /// `Undulation::amplitude`.
    pub amplitude: f32,
    /// `Undulation::body_waves`.
    pub body_waves: f32,
    /// `Undulation::head`.
    pub head: f32,
    /// `Undulation::cycle` of the frame's time.
    pub cycle: f32,
    /// Padding.
    pub pad: [u32; 2],
}

const _: () = assert!(size_of::<WaveUniform>() == 32);

impl WaveUniform {
    /// The uniform of `undulation` at `time` seconds.
    pub fn new(undulation: &Undulation, time: f64) -> Self {
        Self {
            head_z: undulation.head_z,
            inv_length: 1.0 / undulation.length,
            amplitude: undulation.amplitude,
            body_waves: undulation.body_waves,
            head: undulation.head,
            cycle: undulation.cycle(time),
            pad: [0; 2],
        }
    }
}

/// One frame of a [`ProceduralRenderer`]: its cameras, its time and its instances.
#[derive(Clone, Copy, Debug)]
pub struct ProceduralFrame<'a> {
    /// The camera [`ProceduralRenderer::draw`] draws with.
    pub camera: FrameCamera,
    /// The camera [`ProceduralRenderer::draw_depth_only`] draws with (a shadow map's), or `None` for `camera`.
    pub depth_camera: Option<FrameCamera>,
    /// The time in seconds: the wave's clock is `Undulation::cycle(time)`.
    pub time: f64,
    /// One record per instance, instance `i` at `records[i]`, each with `RecordAnim::Procedural` (the renderer
    /// reads the `anim` word as phase and amplitude whatever was packed; records are checked where they are built,
    /// by `InstanceRecord::new`).
    pub records: &'a [InstanceRecord],
}

/// Draws one procedural mesh for every record of a frame: engine middleware, as [`crate::CrowdRenderer`] is (the
/// engine owns the device, the queue and the render pass; formats, depth and MSAA are fixed at construction by a
/// [`RendererConfig`]).
///
/// Buffers: the mesh's vertices (28 bytes each: position, normal, colour) and `u32` indices, written once; the
/// records (storage, bound whole, grown by doubling, so at most `max_storage_buffer_binding_size` bytes and within
/// `max_buffer_size`); the frame uniform (`FrameUniform`, the same struct and [`Lighting`] as the character
/// renderer's, so fish are lit like characters), a second one for the depth camera, and the wave uniform (the
/// mesh's undulation and the frame's clock). `prepare` writes the records and the uniforms and never allocates on
/// the CPU after the records buffer reached its size; `draw` records one instanced indexed draw, or nothing for no
/// instances.
#[derive(Debug)]
pub struct ProceduralRenderer {
    name: String,
    undulation: Undulation,
    /// `max_storage_buffer_binding_size`, the smaller of the config's and the device's.
    binding_limit: u64,
    /// The bytes of the records' binding: `binding_limit` rounded down to whole records (at most `u32::MAX` of
    /// them).
    record_window: u64,
    max_buffer: u64,
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::RenderPipeline,
    depth_pipeline: Option<wgpu::RenderPipeline>,
    frame_uniform: wgpu::Buffer,
    depth_uniform: wgpu::Buffer,
    wave_uniform: wgpu::Buffer,
    records: GrowBuffer,
    group: wgpu::BindGroup,
    depth_group: wgpu::BindGroup,
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    lighting: Lighting,
    stats: PrepareStats,
}

impl ProceduralRenderer {
    /// A renderer of `mesh` under `undulation` for passes of `config`'s formats on `device`; the mesh is uploaded
    /// here, once.
    ///
    /// # Errors
    ///
    /// [`Error::Mesh`] holding `crowd_mesh::Error::Mesh` when `undulation` fails `Undulation::validate`, or the
    /// mesh's vertex or index buffer is past `max_buffer_size`; [`Error::DeviceLimit`] when the binding limit holds no
    /// record (a `max_storage_buffer_binding_size` under 32 bytes).
    pub fn new(
        device: &wgpu::Device,
        config: &RendererConfig,
        mesh: &ProceduralMesh,
        undulation: Undulation,
    ) -> Result<Self> {
        undulation.validate()?;
        let device_limits = device.limits();
        let binding_limit = config
            .limits
            .max_storage_buffer_binding_size
            .min(device_limits.max_storage_buffer_binding_size);
        let record = INSTANCE_RECORD_SIZE as u64;
        // Whole records, and no more than a draw's u32 instance range counts.
        let record_window = (binding_limit / record).min(u64::from(u32::MAX)) * record;
        if record_window == 0 {
            return Err(Error::DeviceLimit {
                limit: "max_storage_buffer_binding_size",
                have: binding_limit,
                needs: record,
            });
        }
        let max_buffer = config.limits.max_buffer_size.min(device_limits.max_buffer_size);
        let vertex_bytes = interleave(mesh);
        let index_bytes: &[u8] = bytemuck::cast_slice(mesh.indices());
        for (what, len) in [("vertex", vertex_bytes.len()), ("index", index_bytes.len())] {
            if len as u64 > max_buffer {
                return Err(crowd_mesh::Error::mesh(
                    &format!("procedural mesh '{}'", mesh.name()),
                    format!("its {what} buffer of {len} bytes is past max_buffer_size ({max_buffer} bytes)"),
                )
                .into());
            }
        }
        let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("procedural vertices"),
            contents: &vertex_bytes,
            usage: wgpu::BufferUsages::VERTEX,
        });
        let indices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("procedural indices"),
            contents: index_bytes,
            usage: wgpu::BufferUsages::INDEX,
        });

        let uniform_entry = |binding: u32, size: u64| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: NonZeroU64::new(size),
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("procedural frame"),
            entries: &[
                uniform_entry(0, size_of::<FrameUniform>() as u64),
                uniform_entry(1, size_of::<WaveUniform>() as u64),
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: true },
                        has_dynamic_offset: false,
                        min_binding_size: NonZeroU64::new(record),
                    },
                    count: None,
                },
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("procedural"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(shaders::CROWD_PROCEDURAL.file),
            source: wgpu::ShaderSource::Wgsl(shaders::CROWD_PROCEDURAL.composed().into()),
        });
        let pipeline = procedural_pipeline(device, &module, config, &pipeline_layout, false);
        let depth_pipeline = config
            .depth_format
            .map(|_| procedural_pipeline(device, &module, config, &pipeline_layout, true));
        let uniform = |label| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: size_of::<FrameUniform>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let frame_uniform = uniform("procedural frame uniform");
        let depth_uniform = uniform("procedural depth frame uniform");
        let wave_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("procedural wave uniform"),
            size: size_of::<WaveUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let records = GrowBuffer::new(device, "procedural records", wgpu::BufferUsages::STORAGE, u64::MAX / 2);
        let group = bind_group(device, &layout, &frame_uniform, &wave_uniform, &records, record_window);
        let depth_group = bind_group(device, &layout, &depth_uniform, &wave_uniform, &records, record_window);
        Ok(Self {
            name: mesh.name().to_owned(),
            undulation,
            binding_limit,
            record_window,
            max_buffer,
            layout,
            pipeline,
            depth_pipeline,
            frame_uniform,
            depth_uniform,
            wave_uniform,
            records,
            group,
            depth_group,
            vertices,
            indices,
            index_count: mesh.indices().len() as u32,
            lighting: Lighting::default(),
            stats: PrepareStats::default(),
        })
    }

    /// The wave the renderer applies.
    pub fn undulation(&self) -> &Undulation {
        &self.undulation
    }

    /// Sets the light of the next frames.
    pub fn set_lighting(&mut self, lighting: Lighting) {
        self.lighting = lighting;
    }

    /// The most instances one frame may have: the records' binding over the record size, and no more than
    /// `max_buffer_size` holds.
    pub fn max_instances(&self) -> u64 {
        self.record_window.min(self.max_buffer / 4 * 4) / INSTANCE_RECORD_SIZE as u64
    }

    /// What the last `prepare` set up: one draw of every instance, or nothing.
    pub fn stats(&self) -> PrepareStats {
        self.stats
    }

    /// Uploads `frame`'s records and uniforms for the next `draw` and `draw_depth_only`. O(1) checks; the records
    /// are trusted. After the records buffer reached its size it allocates nothing itself (wgpu's `write_buffer`
    /// may, a fixed number of times per call). An empty `records` slice succeeds and draws nothing.
    ///
    /// # Errors
    ///
    /// [`Error::Limit`] naming `"procedural records"` when the records (`records.len() × 32` bytes, the count
    /// times the record size) are past `max_storage_buffer_binding_size` (they are bound whole) or their buffer
    /// would be past `max_buffer_size`; [`Error::Clock`] when `time` is not finite and [`Error::Camera`] when a
    /// camera is not. Nothing is uploaded then, and the draws draw nothing until a `prepare` succeeds.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        frame: &ProceduralFrame<'_>,
    ) -> Result<PrepareStats> {
        self.stats = PrepareStats::default();
        if !frame.time.is_finite() {
            return Err(Error::Clock { now: frame.time as f32 });
        }
        let depth_camera = frame.depth_camera.unwrap_or(frame.camera);
        if !frame.camera.is_finite() || !depth_camera.is_finite() {
            return Err(Error::Camera {
                what: "the procedural frame",
            });
        }
        let count = frame.records.len() as u64;
        // A slice of records never holds more than isize::MAX bytes; a product past u64 would still be refused.
        let bytes = count.saturating_mul(INSTANCE_RECORD_SIZE as u64);
        if bytes > self.record_window {
            return Err(Error::Limit {
                buffer: "procedural records",
                bytes,
                limit: "max_storage_buffer_binding_size (the procedural records are bound whole)",
                max: self.binding_limit,
            });
        }
        let size = self.records.size_for(bytes, self.max_buffer);
        if bytes > self.records.size() && size > self.max_buffer {
            return Err(Error::Limit {
                buffer: "procedural records",
                bytes: size,
                limit: "max_buffer_size",
                max: self.max_buffer,
            });
        }
        if self.records.reserve(device, bytes, self.max_buffer) {
            self.group = bind_group(
                device,
                &self.layout,
                &self.frame_uniform,
                &self.wave_uniform,
                &self.records,
                self.record_window,
            );
            self.depth_group = bind_group(
                device,
                &self.layout,
                &self.depth_uniform,
                &self.wave_uniform,
                &self.records,
                self.record_window,
            );
        }
        if bytes > 0 {
            queue.write_buffer(&self.records.buffer, 0, bytemuck::cast_slice(frame.records));
        }
        let uniform =
            |camera: &FrameCamera| FrameUniform::new(camera.view_proj(), &self.lighting, 0, DebugView::Shaded);
        queue.write_buffer(&self.frame_uniform, 0, bytemuck::bytes_of(&uniform(&frame.camera)));
        queue.write_buffer(&self.depth_uniform, 0, bytemuck::bytes_of(&uniform(&depth_camera)));
        let wave = WaveUniform::new(&self.undulation, frame.time);
        queue.write_buffer(&self.wave_uniform, 0, bytemuck::bytes_of(&wave));
        let drawn = u32::from(count > 0);
        self.stats = PrepareStats {
            draws: drawn,
            chunks: drawn,
            instances: count as u32,
            triangles: u64::from(self.index_count / 3) * count,
            uploaded_bytes: bytes + 2 * size_of::<FrameUniform>() as u64 + size_of::<WaveUniform>() as u64,
        };
        Ok(self.stats)
    }

    /// The procedural mesh's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Records the last successful `prepare`'s instances into `pass`, whose attachments have the configured
    /// formats: one instanced indexed draw, or nothing for no instances.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.record(pass, &self.pipeline, &self.group);
    }

    /// Records the same draw from the depth camera with the depth-only pipeline (the same displacement and
    /// placement, no fragment stage), for a pass with only a depth attachment of the configured depth format, such
    /// as a shadow map's; draws nothing when the renderer has no depth format.
    pub fn draw_depth_only(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some(pipeline) = &self.depth_pipeline {
            self.record(pass, pipeline, &self.depth_group);
        }
    }

    fn record(&self, pass: &mut wgpu::RenderPass<'_>, pipeline: &wgpu::RenderPipeline, group: &wgpu::BindGroup) {
        if self.stats.instances == 0 {
            return;
        }
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, group, &[]);
        pass.set_vertex_buffer(0, self.vertices.slice(..));
        pass.set_index_buffer(self.indices.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..self.index_count, 0, 0..self.stats.instances);
    }
}

/// The interleaved vertex bytes of `mesh`: per vertex, position, normal and colour.
fn interleave(mesh: &ProceduralMesh) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(mesh.vertex_count() * PROCEDURAL_VERTEX_STRIDE as usize);
    for ((p, n), c) in mesh.positions().iter().zip(mesh.normals()).zip(mesh.colors()) {
        bytes.extend_from_slice(bytemuck::bytes_of(&p.to_array()));
        bytes.extend_from_slice(bytemuck::bytes_of(&n.to_array()));
        bytes.extend_from_slice(&c.to_le_bytes());
    }
    bytes
}

/// The bind group of one camera's frame uniform, the wave and the records (bound whole, at most `window` bytes).
fn bind_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    frame: &wgpu::Buffer,
    wave: &wgpu::Buffer,
    records: &GrowBuffer,
    window: u64,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("procedural frame"),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: frame.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wave.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &records.buffer,
                    offset: 0,
                    size: NonZeroU64::new(records.size().min(window)),
                }),
            },
        ],
    })
}

/// The procedural pipeline of `module`: `vs_main` and `fs_main` with colour and depth as `config` says, or
/// `vs_depth` with no fragment stage. Both sides are drawn (flags and plants are open sheets; the fragment stage
/// lights a back face from behind), as the character renderer does.
fn procedural_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    config: &RendererConfig,
    layout: &wgpu::PipelineLayout,
    depth_only: bool,
) -> wgpu::RenderPipeline {
    let all = [
        (0, wgpu::VertexFormat::Float32x3, 0),
        (1, wgpu::VertexFormat::Float32x3, 12),
        (2, wgpu::VertexFormat::Uint32, 24),
    ]
    .map(|(shader_location, format, offset)| wgpu::VertexAttribute {
        format,
        offset,
        shader_location,
    });
    let attributes = if depth_only { &all[..1] } else { &all[..] };
    let entry = if depth_only { "vs_depth" } else { "vs_main" };
    let vertices = wgpu::VertexBufferLayout {
        array_stride: PROCEDURAL_VERTEX_STRIDE,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes,
    };
    draw_pipeline(
        device,
        module,
        &PassState::of_config(config),
        layout,
        entry,
        vertices,
        depth_only,
    )
}
