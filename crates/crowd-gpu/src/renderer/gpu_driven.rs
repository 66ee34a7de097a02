//! The GPU-driven path of [`CrowdRenderer`]: the resident instances on the device, one [`GpuCuller`] for the
//! crowd's draw group, and the indirect draws of every (mesh, LOD, tier); `prepare` checks and stages each packet's
//! resident changes, the pose pool's clips and the clock.

use crowd_cull::GroupDesc;
use crowd_cull::limits::TIER_COUNT;
use crowd_frame::{Packet, ResidentClip};
use skin_pack::PaletteFormat;

use super::baked::DeviceBat;
use super::bind_groups::draw_group;
use super::path::RenderPath;
use super::vat::{DeviceVat, NoVat};
use super::{CrowdRenderer, Error, Result};
use crate::gpu_cull::{DrawSlot, GpuCuller};
use crate::resident_buffer::{Checked, ResidentBuffer, ResidentUpdate};
use crate::uniforms::{DRAW_UNIFORM_STRIDE, DrawUniform, GpuFrameUniform};
use crate::upload::Staging;

/// Storage buffers per stage the GPU-driven path needs: eight in the vertex stage (records, two palettes, the
/// visible list, the counters, the resident instances, the pool's clips and the bake's clips) and eight in the cull
/// pass (the resident instances and their owners, clip bounds, states, counters, visible list, draws and indirect
/// arguments). wgpu's default limits give eight.
pub const GPU_DRIVEN_STORAGE_BUFFERS: u32 = 8;

/// The GPU-driven state of a renderer.
#[derive(Debug)]
pub(crate) struct GpuDriven {
    pub(crate) culler: GpuCuller,
    pub(crate) resident: ResidentBuffer,
    /// The pose pool's clip table, one [`ResidentClip`] per clip, bound whole.
    pub(crate) clips: wgpu::Buffer,
    clip_count: usize,
    /// The clock of the draws ([`GpuFrameUniform`]).
    pub(crate) gpu_frame: wgpu::Buffer,
    /// The bone-animation bake of the baked tier ([`CrowdRenderer::set_bat`]).
    pub(crate) bat: Option<DeviceBat>,
    /// Bound as the bake's clip table while no bake is set.
    pub(crate) no_bat_clips: wgpu::Buffer,
    /// The vertex-animation bake of the VAT tier ([`CrowdRenderer::set_vat`]).
    pub(crate) vat: Option<DeviceVat>,
    /// Bound as the VAT while none is set.
    pub(crate) no_vat: NoVat,
    /// One draw uniform per (mesh, LOD, tier) at the uniform stride, in its bind group.
    pub(crate) draw_group: wgpu::BindGroup,
    pub(crate) draw_slots: Vec<DrawSlot>,
    /// Per draw: its mesh.
    pub(crate) draw_mesh: Vec<u32>,
    /// Bumped whenever a buffer or bake that a view's bind groups hold is replaced.
    pub(crate) generation: u64,
    /// The animation clock of the last packet (the cull's segment bounds need it).
    pub(crate) now: f32,
    /// Whether the last packet's pose pool was live (`ResidentChanges::pose_pool`).
    pub(crate) pose_pool: bool,
    /// The resend epoch and the frame of the resident state held, once a packet was applied.
    held: Option<(u32, u64)>,
}

/// A checked packet's resident part, ready to stage.
#[derive(Debug)]
pub(super) struct CheckedResident {
    resident: Checked,
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// Switches the renderer to the GPU-driven path for the crowd's draw group `desc` (its clip bounds, LOD,
    /// tier and rate thresholds and hysteresis: `CrowdFrame::store().group_desc(..)`). Call it once, after adding
    /// the meshes; packets must then come from a `CrowdFrame` with `FrameSettings::gpu_driven`.
    ///
    /// # Errors
    ///
    /// [`Error::Path`] when the device's path is [`RenderPath::CpuCulled`] ([`RenderPath::for_config`]);
    /// [`Error::Order`] when the path is enabled already (a renderer keeps its draw group: make a new one) or no
    /// mesh was added; [`Error::MissingLod`] when a mesh has fewer LODs than the group; [`Error::Cull`] when the
    /// culler refuses the group; [`Error::Limit`] and [`Error::DeviceLimit`] for buffers past the limits. Nothing
    /// changes on error.
    pub fn enable_gpu_driven(&mut self, device: &wgpu::Device, desc: &GroupDesc) -> Result<()> {
        if self.gpu_driven.is_some() {
            return Err(Error::Order {
                call: "enable_gpu_driven",
                why: "the GPU-driven path is enabled already: a renderer keeps its draw group (make a new renderer)",
            });
        }
        let path = RenderPath::for_config(device, &self.config);
        if path != RenderPath::GpuDriven {
            return Err(Error::Path {
                call: "enable_gpu_driven",
                path,
            });
        }
        if self.meshes.is_empty() {
            return Err(Error::Order {
                call: "enable_gpu_driven",
                why: "no mesh was added",
            });
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
        let culler = GpuCuller::new(device, &self.cache, desc, &self.config.limits)?;
        let resident = ResidentBuffer::new(device, &self.cache, &self.config.limits)?;
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
        if bytes.len() as u64 > self.limits.buffer {
            return Err(Error::Limit {
                buffer: "GPU-driven draw uniforms",
                bytes: bytes.len() as u64,
                limit: "max_buffer_size",
                max: self.limits.buffer,
            });
        }
        // The views' indirect draws are checked against the binding limits when a view is made; the pipelines are
        // compiled once per cache.
        self.cache.driven(self.key, &self.pipelines);
        let draw_uniforms = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("crowd GPU-driven draw uniforms"),
                contents: &bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            },
        );
        let no_bat_clips = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd baked clips (none)"),
            size: bake_format::CLIP_RECORD_SIZE as u64,
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
            resident,
            clips: clip_buffer(device, 1),
            clip_count: 0,
            gpu_frame,
            bat: None,
            no_bat_clips,
            vat: None,
            no_vat: NoVat::new(device),
            draw_group: draw_group(device, &self.cache.layouts().draw, &draw_uniforms),
            draw_slots,
            draw_mesh,
            generation: 0,
            now: 0.0,
            pose_pool: true,
            held: None,
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

    /// The resend epoch and the frame of the resident state the renderer holds (GPU-driven path, once a packet was
    /// prepared): a packet that is not full must build on it.
    pub fn resident_frame(&self) -> Option<(u32, u64)> {
        self.gpu_driven.as_ref().and_then(|g| g.held)
    }

    /// Checks the packet's resident part (GPU-driven path): that it builds on what the renderer holds, the bakes'
    /// clips, the clip table's size, and the changes themselves ([`ResidentBuffer`]'s checks, into its scratch).
    pub(super) fn check_resident(&mut self, packet: &Packet<F>) -> Result<Option<CheckedResident>> {
        let Some(g) = self.gpu_driven.as_mut() else {
            return Ok(None);
        };
        let res = packet.resident();
        if !res.full && g.held != Some((res.epoch, res.since)) {
            return Err(Error::OutOfStep {
                held: g.held,
                epoch: res.epoch,
                since: res.since,
            });
        }
        if !res.pose_pool && g.bat.is_none() {
            return Err(Error::Bake {
                clip: None,
                what: "is missing: a frame without a pose pool (FrameSettings::pose_pool) draws its unique and \
                       pooled tiers from a bone-animation bake (set_bat)",
            });
        }
        if let Some(bat) = &g.bat {
            bat.check(&res.clips, packet.skin_joint_count())?;
        }
        if let Some(vat) = &g.vat {
            vat.check(&res.clips)?;
        }
        let clip_bytes = size_of_val(res.clips.as_slice()) as u64;
        if clip_bytes > self.limits.whole() {
            return Err(Error::Limit {
                buffer: "pool clips",
                bytes: clip_bytes,
                limit: "max_buffer_size or max_storage_buffer_binding_size",
                max: self.limits.whole(),
            });
        }
        let resident = g.resident.check(ResidentUpdate::from(res))?;
        Ok(Some(CheckedResident { resident }))
    }

    /// Stages a checked packet's resident part: the resident changes (growth copies recorded into `encoder` now),
    /// the clip table and the clock. Returns true when the resident scatter pass must follow the staged copies.
    pub(super) fn stage_resident(
        &mut self,
        device: &wgpu::Device,
        staging: &mut Staging<'_>,
        packet: &Packet<F>,
        checked: Option<CheckedResident>,
    ) -> bool {
        let (Some(g), Some(checked)) = (self.gpu_driven.as_mut(), checked) else {
            return false;
        };
        let res = packet.resident();
        let scatter = g.resident.stage(device, staging, checked.resident);
        if res.clips.len() != g.clip_count {
            g.clips = clip_buffer(device, res.clips.len());
            g.clip_count = res.clips.len();
            g.generation += 1;
        }
        staging.push(&g.clips, 0, bytemuck::cast_slice(&res.clips));
        let clock = GpuFrameUniform {
            now: packet.time(),
            pool_time: res.pool_time,
            pad: [0; 2],
        };
        staging.push(&g.gpu_frame, 0, bytemuck::bytes_of(&clock));
        g.now = packet.time();
        g.pose_pool = res.pose_pool;
        g.held = Some((res.epoch, res.frame));
        scatter
    }
}

fn clip_buffer(device: &wgpu::Device, clips: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("crowd pool clips"),
        size: (clips.max(1) * size_of::<ResidentClip>()) as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}
