//! The GPU-driven path of [`CrowdRenderer`]: the resident instances on the device, one [`GpuCuller`] for the
//! crowd's draw group, and per view ([`CrowdView`]) a cull pass and one indirect draw per (mesh, LOD, tier).
//!
//! `prepare` applies each packet's resident changes and uploads the pose pool's clips and clock; `prepare_view`
//! culls for one view (any camera, given at render time); `render_view` records the view's CPU-drawn unique
//! instances (the packet's records) and its indirect draws. The draw count is meshes × LODs × tiers, whatever the
//! crowd.

use std::num::NonZeroU64;

use crowd_cull::limits::TIER_COUNT;
use crowd_cull::{GroupDesc, Tier};
use crowd_frame::{FrameCamera, Packet, ResidentClip};
use skin_pack::PaletteFormat;

use super::CrowdRenderer;
use super::baked::DeviceBat;
use super::bind_groups::{draw_group_of, frame_group, frame_group_with, storage_entry, uniform_entry, whole};
use super::pipelines::skin_pipeline;
use super::vat::{DeviceVat, NoVat, VAT_UNIFORM_SIZE};
use crate::gpu_cull::{CullView, DrawSlot, GpuCuller};
use crate::resident_buffer::ResidentBuffer;
use crate::uniforms::{DRAW_UNIFORM_STRIDE, DrawUniform, FrameUniform, GpuFrameUniform};
use crate::{Error, Result};

/// Which path a renderer draws with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderPath {
    /// The CPU culls and packs a record per visible instance (every adapter wgpu runs skinning on).
    CpuCulled,
    /// The instances live on the GPU, a compute pass culls them per view, and indirect draws draw them.
    GpuDriven,
}

impl RenderPath {
    /// The path `device` allows: GPU-driven when its limits give the cull pass and the GPU-driven vertex stage
    /// their [`GPU_DRIVEN_STORAGE_BUFFERS`] storage buffers per stage (compute and indirect draws are core in
    /// wgpu's native backends), CPU-culled otherwise.
    pub fn for_device(device: &wgpu::Device) -> Self {
        let limits = device.limits();
        if limits.max_storage_buffers_per_shader_stage >= GPU_DRIVEN_STORAGE_BUFFERS
            && limits.max_compute_workgroups_per_dimension >= 1
            && limits.max_compute_invocations_per_workgroup >= 256
        {
            Self::GpuDriven
        } else {
            Self::CpuCulled
        }
    }

    /// A name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::CpuCulled => "CPU-culled",
            Self::GpuDriven => "GPU-driven",
        }
    }
}

/// Storage buffers per stage the GPU-driven path needs: eight in the vertex stage (records, two palettes, the
/// visible list, the counters, the resident instances, the pool's clips and the bake's clips) and eight in the cull
/// pass (the resident
/// instances and their owners, clip bounds, states, counters, visible list, draws and indirect arguments). wgpu's
/// default limits give eight.
pub const GPU_DRIVEN_STORAGE_BUFFERS: u32 = 8;

/// The GPU-driven state of a renderer.
#[derive(Debug)]
pub(crate) struct GpuDriven {
    pub(crate) culler: GpuCuller,
    resident: ResidentBuffer,
    clips: wgpu::Buffer,
    clip_count: usize,
    gpu_frame: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    /// The colour pipelines of the indirect draws.
    pipelines: TierPipelines,
    /// Their depth-only twins (no fragment stage), when the renderer has a depth format.
    depth_pipelines: Option<TierPipelines>,
    /// The bone-animation bake of the baked tier ([`CrowdRenderer::set_bat`]).
    pub(crate) bat: Option<DeviceBat>,
    /// Bound as the bake's clip table while no bake is set.
    no_bat_clips: wgpu::Buffer,
    /// The vertex-animation bake of the VAT tier ([`CrowdRenderer::set_vat`]).
    pub(crate) vat: Option<DeviceVat>,
    /// Bound as the VAT while none is set.
    no_vat: NoVat,
    /// One draw uniform per (mesh, LOD, tier) at the uniform stride, in its bind group.
    draw_group: wgpu::BindGroup,
    draw_slots: Vec<DrawSlot>,
    /// Per draw: its mesh.
    draw_mesh: Vec<u32>,
    /// Bumped whenever a buffer that a view's bind groups hold is recreated.
    pub(crate) generation: u64,
    /// The animation clock of the last packet (the cull's segment bounds need it).
    now: f32,
    /// Whether the last packet's pose pool was live (`ResidentChanges::pose_pool`).
    pose_pool: bool,
}

/// The pipelines of the GPU-driven indirect draws, for u8 and u16 joints: the pose pool's (`vs_resident_*`), a
/// bone-animation bake's (`vs_baked_*`, the baked tier while a bake is set) and a vertex-animation bake's
/// (`vs_vat`, the VAT tier while a bake is set).
#[derive(Debug)]
struct TierPipelines {
    pooled: [wgpu::RenderPipeline; 2],
    baked: [wgpu::RenderPipeline; 2],
    vat: [wgpu::RenderPipeline; 2],
}

/// One view of a GPU-driven renderer: its camera's frame uniform, its cull state (hysteresis, visible lists,
/// indirect arguments) and bind groups. Make one per camera that draws the crowd (main, shadow, second viewport)
/// with [`CrowdRenderer::create_view`].
#[derive(Debug)]
pub struct CrowdView {
    cull: Option<CullView>,
    frame_uniform: wgpu::Buffer,
    frame_group: Option<wgpu::BindGroup>,
    /// The frame bind group of baked draws: the bake's entries as the pooled palettes.
    baked_group: Option<wgpu::BindGroup>,
    resident_group: Option<wgpu::BindGroup>,
    /// The renderer's generations and the view's buffer sizes the bind groups were made for.
    bound: (u64, u64, u64, u64),
}

impl CrowdView {
    /// The view's cull state and output on the GPU-driven path (for readback in tests and tools).
    pub fn cull(&self) -> Option<&CullView> {
        self.cull.as_ref()
    }
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// Switches the renderer to the GPU-driven path for the crowd's draw group `desc` (its clip bounds, LOD,
    /// tier and rate thresholds and hysteresis: `CrowdFrame::store().group_desc(..)`). Call it after adding the
    /// meshes; packets must then come from a `CrowdFrame` with `FrameSettings::gpu_driven`.
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the device's path is [`RenderPath::CpuCulled`], no mesh was added, a mesh has fewer
    /// LODs than the group, or the culler refuses the group; [`Error::Limit`] for draw uniforms past
    /// `max_buffer_size`.
    pub fn enable_gpu_driven(&mut self, device: &wgpu::Device, desc: &GroupDesc) -> Result<()> {
        if RenderPath::for_device(device) != RenderPath::GpuDriven {
            return Err(Error::gpu(
                "the device's limits allow only the CPU-culled path (RenderPath::for_device)",
            ));
        }
        if self.meshes.is_empty() {
            return Err(Error::gpu("enable_gpu_driven needs the meshes added first"));
        }
        let lods = desc.lod_count();
        for mesh in &self.meshes {
            if mesh.lods.len() < lods {
                return Err(Error::MissingLod {
                    mesh: mesh.name.clone(),
                    lod: (lods - 1) as u8,
                    levels: mesh.lods.len(),
                    instances: 0,
                });
            }
        }
        let culler = GpuCuller::new(device, desc, &self.config.limits)?;
        let mut draw_slots = Vec::new();
        let mut draw_mesh = Vec::new();
        let mut bytes = Vec::new();
        for (m, mesh) in self.meshes.iter().enumerate() {
            for lod in 0..lods {
                let level = mesh.lods[lod];
                for tier in 0..TIER_COUNT as u32 {
                    draw_slots.push(DrawSlot {
                        bucket: lod as u32 * TIER_COUNT as u32 + tier,
                        index_count: level.index_count,
                        first_index: level.first_index,
                        base_vertex: 0,
                    });
                    draw_mesh.push(m as u32);
                    let uniform = DrawUniform {
                        record_base: 0,
                        pooled: 1,
                        lod: lod as u32,
                        tier,
                        base_color: mesh.base_color,
                        uv_f16: u32::from(mesh.uv_f16),
                        mesh: m as u32,
                        pad: [0; 2],
                    };
                    let at = bytes.len();
                    bytes.resize(at + DRAW_UNIFORM_STRIDE as usize, 0);
                    bytes[at..at + size_of::<DrawUniform>()].copy_from_slice(bytemuck::bytes_of(&uniform));
                }
            }
        }
        if bytes.len() as u64 > self.max_buffer {
            return Err(Error::Limit {
                buffer: "GPU-driven draw uniforms",
                bytes: bytes.len() as u64,
                limit: "max_buffer_size",
                max: self.max_buffer,
            });
        }
        let draw_uniforms = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("crowd GPU-driven draw uniforms"),
                contents: &bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            },
        );
        let draw_group = draw_group_of(device, &self.draw_layout, &draw_uniforms);
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("crowd GPU-driven"),
            entries: &[
                uniform_entry(0, false, size_of::<GpuFrameUniform>() as u64),
                storage_entry(1, false, 4),
                storage_entry(2, false, 4),
                storage_entry(3, false, size_of::<crowd_frame::ResidentInstance>() as u64),
                storage_entry(4, false, size_of::<ResidentClip>() as u64),
                storage_entry(5, false, anim_bake::CLIP_RECORD_SIZE as u64),
                wgpu::BindGroupLayoutEntry {
                    binding: 6,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: NonZeroU64::new(VAT_UNIFORM_SIZE),
                    },
                    count: None,
                },
                vat_plane_entry(7),
                vat_plane_entry(8),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("crowd GPU-driven"),
            bind_group_layouts: &[
                Some(&self.frame_layout),
                Some(&self.draw_layout),
                Some(&self.material_layout),
                Some(&layout),
            ],
            immediate_size: 0,
        });
        let tier_pipelines = |depth_only: bool| {
            let pipeline = |entry: &str, joints_u16: bool| {
                skin_pipeline(
                    device,
                    &self.module,
                    &self.config,
                    &pipeline_layout,
                    entry,
                    joints_u16,
                    depth_only,
                )
            };
            TierPipelines {
                pooled: [false, true].map(|u16| {
                    pipeline(
                        if u16 {
                            "vs_resident_joints_u16"
                        } else {
                            "vs_resident_joints_u8"
                        },
                        u16,
                    )
                }),
                baked: [false, true].map(|u16| {
                    pipeline(
                        if u16 {
                            "vs_baked_joints_u16"
                        } else {
                            "vs_baked_joints_u8"
                        },
                        u16,
                    )
                }),
                vat: [false, true].map(|u16| pipeline("vs_vat", u16)),
            }
        };
        let pipelines = tier_pipelines(false);
        let depth_pipelines = self.config.depth_format.map(|_| tier_pipelines(true));
        let no_bat_clips = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd baked clips (none)"),
            size: anim_bake::CLIP_RECORD_SIZE as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let gpu_frame = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd GPU frame"),
            size: size_of::<GpuFrameUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.gpu_driven = Some(GpuDriven {
            culler,
            resident: ResidentBuffer::new(device, &self.config.limits),
            clips: clip_buffer(device, 1),
            clip_count: 0,
            gpu_frame,
            layout,
            pipelines,
            depth_pipelines,
            bat: None,
            no_bat_clips,
            vat: None,
            no_vat: NoVat::new(device),
            draw_group,
            draw_slots,
            draw_mesh,
            generation: 0,
            now: 0.0,
            pose_pool: true,
        });
        Ok(())
    }

    /// The path the renderer draws with.
    pub fn path(&self) -> RenderPath {
        if self.gpu_driven.is_some() {
            RenderPath::GpuDriven
        } else {
            RenderPath::CpuCulled
        }
    }

    /// The resident instances on the device (GPU-driven path only).
    pub fn resident(&self) -> Option<&ResidentBuffer> {
        self.gpu_driven.as_ref().map(|g| &g.resident)
    }

    /// Applies the packet's resident changes, clips and clock (GPU-driven path; called by `prepare`). The changes
    /// are checked against the packet's slot count before anything is written ([`ResidentBuffer::apply`]).
    pub(super) fn prepare_resident(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        packet: &Packet<F>,
    ) -> Result<u64> {
        let Some(g) = self.gpu_driven.as_mut() else {
            return Ok(0);
        };
        let res = packet.resident();
        if !res.pose_pool && g.bat.is_none() {
            return Err(Error::Bake {
                clip: None,
                what: "is missing: a frame without a pose pool (FrameSettings::pose_pool) draws its unique and \
                       pooled tiers from a bone-animation bake (set_bat)",
            });
        }
        g.pose_pool = res.pose_pool;
        if let Some(bat) = &g.bat {
            bat.check(&res.clips, packet.skin_joint_count())?;
        }
        if let Some(vat) = &g.vat {
            vat.check(&res.clips)?;
        }
        let before = g.resident.generation();
        let uploaded = g
            .resident
            .apply(device, queue, res.slot_count, &res.ranges, &res.instances, &res.owners)?;
        if g.resident.generation() != before {
            g.generation += 1;
        }
        if res.clips.len() != g.clip_count {
            g.clips = clip_buffer(device, res.clips.len());
            g.clip_count = res.clips.len();
            g.generation += 1;
        }
        if !res.clips.is_empty() {
            queue.write_buffer(&g.clips, 0, bytemuck::cast_slice(&res.clips));
        }
        let clock = GpuFrameUniform {
            now: packet.time(),
            pool_time: res.pool_time,
            pad: [0; 2],
        };
        queue.write_buffer(&g.gpu_frame, 0, bytemuck::bytes_of(&clock));
        g.now = packet.time();
        Ok(uploaded + size_of_val(res.clips.as_slice()) as u64 + size_of::<GpuFrameUniform>() as u64)
    }

    /// A new view of the crowd (GPU-driven path: its own cull state; either path: its own camera).
    ///
    /// # Errors
    ///
    /// [`Error::Limit`] when the view's indirect arguments pass `max_buffer_size`.
    pub fn create_view(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<CrowdView> {
        let frame_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd view frame uniform"),
            size: size_of::<FrameUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let cull = match &self.gpu_driven {
            Some(g) => {
                let mut v = g.culler.view(device);
                v.set_draws(device, queue, &g.draw_slots, self.max_buffer)?;
                Some(v)
            }
            None => None,
        };
        Ok(CrowdView {
            cull,
            frame_uniform,
            frame_group: None,
            baked_group: None,
            resident_group: None,
            bound: (u64::MAX, 0, 0, 0),
        })
    }

    /// Prepares `view` for drawing this frame with `camera`: its frame uniform and, on the GPU-driven path, the cull
    /// pass over the resident instances, encoded into `encoder` (submit it before the render pass that draws the
    /// view). Call it after `prepare`.
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] for a camera that is not finite or gives an invalid frustum; the culler's [`Error::Limit`]s.
    pub fn prepare_view(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        view: &mut CrowdView,
        camera: &FrameCamera,
    ) -> Result<()> {
        self.prepare_view_with(device, queue, encoder, view, camera, None)
    }

    /// [`CrowdRenderer::prepare_view`], with `timestamp_writes` on the cull pass (GPU-driven path, a device with
    /// `TIMESTAMP_QUERY`): the GPU time of the view's culling.
    ///
    /// # Errors
    ///
    /// As [`CrowdRenderer::prepare_view`].
    pub fn prepare_view_with(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        view: &mut CrowdView,
        camera: &FrameCamera,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()> {
        if !camera.is_finite() {
            return Err(Error::gpu("the view's camera is not finite"));
        }
        let frame = FrameUniform::new(camera.view_proj(), &self.lighting, self.joints, self.view);
        queue.write_buffer(&view.frame_uniform, 0, bytemuck::bytes_of(&frame));
        if let (Some(g), Some(cull)) = (&self.gpu_driven, view.cull.as_mut()) {
            g.culler.cull_with(
                device,
                queue,
                encoder,
                &g.resident,
                cull,
                &camera.cull_camera(),
                g.now,
                timestamp_writes,
            )?;
        }
        let key = (
            self.gpu_driven.as_ref().map_or(0, |g| g.generation),
            self.buffers_generation,
            view.cull.as_ref().map_or(0, |c| c.visible_buffer().size()),
            view.cull.as_ref().map_or(0, |c| c.generation()),
        );
        if view.bound != key || view.frame_group.is_none() {
            view.frame_group = Some(frame_group(
                device,
                &self.frame_layout,
                &view.frame_uniform,
                &self.records,
                &self.pool,
                &self.unique,
                self.palette_window,
            ));
            view.baked_group = self.gpu_driven.as_ref().and_then(|g| g.bat.as_ref()).map(|bat| {
                frame_group_with(
                    device,
                    &self.frame_layout,
                    &view.frame_uniform,
                    &self.records,
                    bat.entries.as_entire_binding(),
                    whole(&self.unique, self.palette_window),
                )
            });
            view.resident_group = match (&self.gpu_driven, &view.cull) {
                (Some(g), Some(cull)) => Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("crowd GPU-driven"),
                    layout: &g.layout,
                    entries: &[
                        whole_entry(0, &g.gpu_frame),
                        whole_entry(1, cull.visible_buffer()),
                        whole_entry(2, cull.counts_buffer()),
                        whole_entry(3, g.resident.buffer()),
                        whole_entry(4, &g.clips),
                        whole_entry(5, g.bat.as_ref().map_or(&g.no_bat_clips, |b| &b.clips)),
                        whole_entry(6, g.vat.as_ref().map_or(&g.no_vat.uniform, |v| &v.uniform)),
                        wgpu::BindGroupEntry {
                            binding: 7,
                            resource: wgpu::BindingResource::TextureView(
                                g.vat.as_ref().map_or(&g.no_vat.plane, |v| &v.planes[0]),
                            ),
                        },
                        wgpu::BindGroupEntry {
                            binding: 8,
                            resource: wgpu::BindingResource::TextureView(
                                g.vat.as_ref().map_or(&g.no_vat.plane, |v| &v.planes[1]),
                            ),
                        },
                    ],
                })),
                _ => None,
            };
            view.bound = key;
        }
        Ok(())
    }

    /// Records `view`'s draws into `pass`: the packet's CPU-drawn records (the unique instances on the GPU-driven
    /// path, every visible instance on the CPU-culled path) with the view's camera, then on the GPU-driven path one
    /// indirect draw per (mesh, LOD, tier). Needs a `prepare_view` of this view since the last `prepare`.
    pub fn render_view(&self, view: &CrowdView, pass: &mut wgpu::RenderPass<'_>) {
        self.render_view_with(view, pass, false);
    }

    /// Records `view`'s draws as [`CrowdRenderer::render_view`] does, with the depth-only entry points (the same
    /// skinning, or the same baked vertices, and no fragment stage): for a pass with only a depth attachment of
    /// the configured depth format, such as a shadow map's. Draws nothing when the renderer has no depth format.
    pub fn render_view_depth_only(&self, view: &CrowdView, pass: &mut wgpu::RenderPass<'_>) {
        self.render_view_with(view, pass, true);
    }

    fn render_view_with(&self, view: &CrowdView, pass: &mut wgpu::RenderPass<'_>, depth_only: bool) {
        let Some(frame_group) = &view.frame_group else {
            return;
        };
        let records = if depth_only {
            self.depth_pipelines.as_ref()
        } else {
            Some(&self.pipelines)
        };
        let Some(records) = records else {
            return;
        };
        self.record_with(pass, records, frame_group);
        let (Some(g), Some(resident_group), Some(cull)) = (&self.gpu_driven, &view.resident_group, &view.cull) else {
            return;
        };
        let pipelines = if depth_only {
            g.depth_pipelines.as_ref()
        } else {
            Some(&g.pipelines)
        };
        let Some(pipelines) = pipelines else {
            return;
        };
        pass.set_bind_group(3, resident_group, &[]);
        for (i, &m) in g.draw_mesh.iter().enumerate() {
            let mesh = &self.meshes[m as usize];
            // The baked and VAT tiers draw from their bakes when there are, from the pose pool otherwise; without a
            // pose pool, the unique tier's GPU-drawn overflow and the pooled tier draw from the bone-animation bake.
            let tier = g.draw_slots[i].bucket % TIER_COUNT as u32;
            let joints = usize::from(mesh.joints_u16);
            let from_bake = draws_from_bake(tier, g.pose_pool);
            match (&view.baked_group, tier) {
                (Some(baked_group), _) if from_bake => {
                    pass.set_bind_group(0, baked_group, &[0]);
                    pass.set_pipeline(&pipelines.baked[joints]);
                }
                (_, t) if t == Tier::Vat as u32 && g.vat.is_some() => {
                    pass.set_bind_group(0, frame_group, &[0]);
                    pass.set_pipeline(&pipelines.vat[joints]);
                }
                _ => {
                    pass.set_bind_group(0, frame_group, &[0]);
                    pass.set_pipeline(&pipelines.pooled[joints]);
                }
            }
            pass.set_bind_group(1, &g.draw_group, &[(i as u64 * DRAW_UNIFORM_STRIDE) as u32]);
            pass.set_bind_group(2, &mesh.material, &[]);
            pass.set_vertex_buffer(0, mesh.vertices.slice(..));
            pass.set_index_buffer(mesh.indices.slice(..), mesh.index_format);
            pass.draw_indexed_indirect(cull.args_buffer(), i as u64 * 20);
        }
    }
}

/// Whether a bucket of `tier` draws from the bone-animation bake (when the renderer has one).
fn draws_from_bake(tier: u32, pose_pool: bool) -> bool {
    tier == Tier::Baked as u32 || (!pose_pool && tier <= Tier::Pooled as u32)
}

fn clip_buffer(device: &wgpu::Device, clips: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("crowd pool clips"),
        size: (clips.max(1) * size_of::<ResidentClip>()) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A VAT plane of group 3: an unsigned-integer 2D array texture read with `textureLoad`.
fn vat_plane_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Uint,
            view_dimension: wgpu::TextureViewDimension::D2Array,
            multisampled: false,
        },
        count: None,
    }
}

fn whole_entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset: 0,
            size: NonZeroU64::new(buffer.size()),
        }),
    }
}
