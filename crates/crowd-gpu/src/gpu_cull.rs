//! GPU culling of the GPU-driven path: [`GpuCuller`], one draw group's clip bounds and level edges with the three
//! compute pipelines of `shaders/crowd_cull.wgsl`, over a [`ResidentBuffer`]; and [`CullView`], one view's hysteresis
//! state (per instance, keyed by its handle, so that it follows the instance from slot to slot), visible lists and
//! indirect arguments. The view is an input at encode time, so several views cull one
//! resident buffer, each with its own state.
//!
//! What the GPU decides equals what `crowd_cull::CullingJob` decides for the same store and camera (the
//! visible set, and each instance's LOD, tier, rate and flags), up to the rounding of the arithmetic at a
//! decision edge: `tests/gpu_cull.rs` compares them on 100,000 instances.

use std::num::NonZeroU64;

use bytemuck::{Pod, Zeroable};
use crowd_cull::limits::{MAX_LODS, TIER_COUNT};
use crowd_cull::{CullCamera, GroupDesc, TierState};
use crowd_frame::ResidentOwner;

use crate::grow_buffer::GrowBuffer;
use crate::resident_buffer::ResidentBuffer;
use crate::shaders;
use crate::{Error, Result};

/// Threads per workgroup of the per-slot dispatches (`classify`, `scatter`).
pub(crate) const CULL_WORKGROUP: u32 = 256;

/// Buckets a view counts: every (LOD, tier) of a group, [`MAX_LODS`] × [`TIER_COUNT`]. The shader's
/// `MAX_BUCKETS`.
pub const CULL_BUCKETS: usize = MAX_LODS * TIER_COUNT;

/// The bytes of a view's counters: per bucket a count, a first list index and an append cursor.
const COUNTS_BYTES: u64 = (3 * CULL_BUCKETS * 4) as u64;

/// `TierState::HIDDEN` as the shader's state word: the state of an instance the view has not seen.
pub const HIDDEN_STATE: u32 = u32::from_le_bytes([
    TierState::HIDDEN.lod,
    TierState::HIDDEN.tier,
    TierState::HIDDEN.rate_log2,
    TierState::HIDDEN.flags,
]);

/// The flag (in a view's state word, beside `TierState::VISIBLE` and `TierState::INTERPOLATE`) of an instance
/// in view by its clip's bounds and out of view by its time segment's ([`GpuCuller::set_segments`]): listed in no
/// bucket.
pub const OUT_OF_SEGMENT: u8 = 4;

/// The view uniform: the twin of `CullView` in `shaders/crowd_cull.wgsl`. Public only for the layout test: not part
/// of the API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct CullViewUniform {
    /// The frustum planes.
    pub planes: [[f32; 4]; 6],
    /// The view-depth plane.
    pub depth_plane: [f32; 4],
    /// `1 / tan(fov_y / 2)`.
    pub proj_scale: f32,
    /// Slots to cull.
    pub slot_count: u32,
    /// LOD levels of the group.
    pub lod_count: u32,
    /// Indirect draws `place` writes.
    pub draw_count: u32,
    /// Lower LOD edges `t * (1 - h)`.
    pub lod_lo: [[f32; 4]; 2],
    /// Upper LOD edges `t * (1 + h)`.
    pub lod_hi: [[f32; 4]; 2],
    /// Lower tier edges.
    pub tier_lo: [f32; 4],
    /// Upper tier edges.
    pub tier_hi: [f32; 4],
    /// Lower rate edges.
    pub rate_lo: [f32; 4],
    /// Upper rate edges.
    pub rate_hi: [f32; 4],
    /// The animation clock of the frame, in seconds.
    pub now: f32,
    /// The clips of the clip bounds when segment bounds follow them, else 0.
    pub segment_clips: u32,
    /// Padding.
    pub pad: [u32; 2],
}

/// One indirect draw of a view: the bucket `lod * TIER_COUNT + tier` it draws and its index range. The twin of
/// `DrawSlot` in `shaders/crowd_cull.wgsl`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct DrawSlot {
    /// `lod * TIER_COUNT + tier`.
    pub bucket: u32,
    /// Indices of the LOD.
    pub index_count: u32,
    /// First index of the LOD.
    pub first_index: u32,
    /// Added to every index.
    pub base_vertex: i32,
}

/// A clip's bounds as the shader reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
struct ClipBoundsGpu {
    min: [f32; 4],
    max: [f32; 4],
}

/// One draw group's GPU culling: its clip bounds, level edges and the compute pipelines.
///
/// With time-segment bounds ([`GpuCuller::set_segments`], a bake's), an instance whose clip's bounds are in view is
/// drawn only when the bounds of the segment its clip time falls in are too (unless it is crossfading): a tighter
/// fit for clips that reach far at some moments. Its state stays crowd-cull's (levels from the clip's bounds,
/// `VISIBLE`), with the GPU's own flag bit 2 ([`OUT_OF_SEGMENT`]) set when its segment is out of view.
#[derive(Debug)]
pub struct GpuCuller {
    layout: wgpu::BindGroupLayout,
    classify: wgpu::ComputePipeline,
    place: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    clip_bounds: wgpu::Buffer,
    /// The group's clip bounds, as the shader reads them.
    bounds: Vec<ClipBoundsGpu>,
    /// Clips whose segment bounds follow them in `clip_bounds`, 0 without segments.
    segment_clips: u32,
    /// Bumped when `clip_bounds` is recreated (views' bind groups hold it).
    generation: u64,
    edges: CullViewUniform,
    max_slots: u64,
    max_buffer: u64,
    binding_limit: u64,
}

/// Bytes of one instance's state in a view: its `TierState` word and its handle's generation.
const STATE_SIZE: u64 = 8;

/// Storage buffers the cull's compute stage binds.
const CULL_STORAGE_BUFFERS: u32 = 8;

/// One view's culling state and output: per handle index the instance's `TierState` word and generation
/// (hysteresis), the visible slots bucket after bucket, the counters, and the indirect arguments of its draws.
#[derive(Debug)]
pub struct CullView {
    uniform: wgpu::Buffer,
    states: GrowBuffer,
    state_handles: u32,
    visible: GrowBuffer,
    counts: wgpu::Buffer,
    draw_slots: GrowBuffer,
    args: GrowBuffer,
    draw_count: u32,
    group: Option<(wgpu::BindGroup, (u64, u64, u64))>,
    generation: u64,
}

/// A compute-stage storage-buffer entry of a bind group layout.
pub(crate) fn storage(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

impl GpuCuller {
    /// The culler of draw group `desc` (its clip bounds, LOD, tier and rate thresholds and hysteresis), keeping
    /// to `limits` (each the smaller of it and the device's).
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when `desc` is invalid (as `GroupDesc::validate` says) or the limits allow fewer than 8
    /// storage buffers per compute stage.
    pub fn new(device: &wgpu::Device, desc: &GroupDesc, limits: &wgpu::Limits) -> Result<Self> {
        desc.validate()
            .map_err(|e| Error::gpu(format!("the draw group cannot be culled: {e}")))?;
        let device_limits = device.limits();
        let storage_buffers = limits
            .max_storage_buffers_per_shader_stage
            .min(device_limits.max_storage_buffers_per_shader_stage);
        if storage_buffers < CULL_STORAGE_BUFFERS {
            return Err(Error::gpu(format!(
                "the limits allow {storage_buffers} storage buffers per stage; GPU culling needs {CULL_STORAGE_BUFFERS}"
            )));
        }
        let binding_limit = limits
            .max_storage_buffer_binding_size
            .min(device_limits.max_storage_buffer_binding_size);
        let max_buffer = limits.max_buffer_size.min(device_limits.max_buffer_size);
        let groups = u64::from(
            limits
                .max_compute_workgroups_per_dimension
                .min(device_limits.max_compute_workgroups_per_dimension),
        );
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("crowd cull"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: NonZeroU64::new(size_of::<CullViewUniform>() as u64),
                    },
                    count: None,
                },
                storage(1, true),
                storage(2, true),
                storage(3, false),
                storage(4, false),
                storage(5, false),
                storage(6, true),
                storage(7, false),
                storage(8, true),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("crowd cull"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(shaders::CROWD_CULL.file),
            source: wgpu::ShaderSource::Wgsl(shaders::CROWD_CULL.composed().into()),
        });
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let bounds: Vec<ClipBoundsGpu> = desc
            .clip_bounds
            .iter()
            .map(|b| ClipBoundsGpu {
                min: b.min.extend(0.0).to_array(),
                max: b.max.extend(0.0).to_array(),
            })
            .collect();
        // A validated group has at least one clip.
        let clip_bounds = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("crowd clip bounds"),
                contents: bytemuck::cast_slice(&bounds),
                usage: wgpu::BufferUsages::STORAGE,
            },
        );
        Ok(Self {
            classify: pipeline("classify"),
            place: pipeline("place"),
            scatter: pipeline("scatter"),
            layout,
            clip_bounds,
            bounds,
            segment_clips: 0,
            generation: 0,
            edges: edges(desc),
            max_slots: groups * groups * u64::from(CULL_WORKGROUP),
            max_buffer,
            binding_limit,
        })
    }

    /// Culls with time-segment bounds from here on: `clips` are the bake's clip records (one per clip of the
    /// group, in clip order: duration, looping and their segments' range) and `segments` every clip's segment
    /// boxes (`anim_bake::BakedBounds::segments`). Replaces any segments set before.
    ///
    /// # Errors
    ///
    /// [`Error::Bake`] naming the clip when the clip count differs from the group's, a clip's segments lie past
    /// `segments` or past the packing's 2^20 first segment and 2047 segments, a duration is not finite, or a box
    /// is not finite with `min <= max`. Nothing changes then.
    pub fn set_segments(
        &mut self,
        device: &wgpu::Device,
        clips: &[anim_bake::ClipRecord],
        segments: &[anim_bake::BoundsRecord],
    ) -> Result<()> {
        let bad = |clip: Option<usize>, what: &'static str| Err(Error::Bake { clip, what });
        if clips.len() != self.bounds.len() {
            return bad(None, "has another clip count than the culled group");
        }
        for (c, r) in clips.iter().enumerate() {
            let end = u64::from(r.first_segment) + u64::from(r.segment_count);
            if end > segments.len() as u64 || r.first_segment >= 1 << 20 || r.segment_count >= 1 << 11 {
                return bad(Some(c), "has segments past the segment boxes or past their packing");
            }
            if !(r.duration.is_finite() && r.duration >= 0.0) {
                return bad(Some(c), "has a duration that is not finite");
            }
        }
        let valid = |b: &anim_bake::BoundsRecord| {
            let (min, max) = (glam::Vec4::from(b.min), glam::Vec4::from(b.max));
            min.is_finite() && max.is_finite() && min.cmple(max).all()
        };
        if !segments.iter().all(valid) {
            return bad(None, "has a segment box that is not finite with min <= max");
        }
        let mut all = self.bounds.clone();
        for (b, r) in all.iter_mut().zip(clips) {
            let packed = r.first_segment | r.segment_count << 20 | u32::from(r.is_looping()) << 31;
            b.min[3] = r.duration;
            b.max[3] = f32::from_bits(packed);
        }
        all.extend(segments.iter().map(|s| ClipBoundsGpu {
            min: [s.min[0], s.min[1], s.min[2], 0.0],
            max: [s.max[0], s.max[1], s.max[2], 0.0],
        }));
        self.clip_bounds = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("crowd clip and segment bounds"),
                contents: bytemuck::cast_slice(&all),
                usage: wgpu::BufferUsages::STORAGE,
            },
        );
        self.segment_clips = clips.len() as u32;
        self.generation += 1;
        Ok(())
    }

    /// True when the culler uses time-segment bounds ([`GpuCuller::set_segments`]).
    pub fn has_segments(&self) -> bool {
        self.segment_clips > 0
    }

    /// A new view with no slots and no draws.
    pub fn view(&self, device: &wgpu::Device) -> CullView {
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd cull view"),
            size: size_of::<CullViewUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let counts = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd cull counts"),
            size: COUNTS_BYTES,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        CullView {
            uniform,
            states: GrowBuffer::new(device, "crowd cull states", storage, u64::MAX / 2),
            state_handles: 0,
            visible: GrowBuffer::new(device, "crowd cull visible", storage, u64::MAX / 2),
            counts,
            draw_slots: GrowBuffer::new(device, "crowd cull draws", wgpu::BufferUsages::STORAGE, u64::MAX / 2),
            args: GrowBuffer::new(
                device,
                "crowd cull indirect",
                storage | wgpu::BufferUsages::INDIRECT,
                u64::MAX / 2,
            ),
            draw_count: 0,
            group: None,
            generation: 0,
        }
    }

    /// Culls every slot of `instances` for `camera` at animation time `now` into `view`: encodes a clear of the
    /// counters and the three dispatches into `encoder`, after writing the view's uniform. An instance the view has not seen (a handle
    /// index it holds no state for, or another generation of it) starts at `TierState::HIDDEN`; every other
    /// instance's state carries over from the view's last cull (hysteresis), whichever slot it is in now.
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] for a camera that fails `CullCamera::validate` or a clock that is not finite;
    /// [`Error::Limit`] when the view's per-slot buffers would pass `max_buffer_size` or the storage binding
    /// limit, or the slots need more workgroups than two dispatch dimensions hold. Nothing is encoded then.
    #[expect(
        clippy::too_many_arguments,
        reason = "the devices, the encoder, the instances, the view and the clock"
    )]
    pub fn cull(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        instances: &ResidentBuffer,
        view: &mut CullView,
        camera: &CullCamera,
        now: f32,
    ) -> Result<()> {
        self.cull_with(device, queue, encoder, instances, view, camera, now, None)
    }

    /// [`GpuCuller::cull`], with `timestamp_writes` on its compute pass (a device with `TIMESTAMP_QUERY`).
    ///
    /// # Errors
    ///
    /// As [`GpuCuller::cull`].
    #[expect(clippy::too_many_arguments, reason = "cull's arguments and the pass's timestamps")]
    pub fn cull_with(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        instances: &ResidentBuffer,
        view: &mut CullView,
        camera: &CullCamera,
        now: f32,
        timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<()> {
        camera
            .validate()
            .map_err(|e| Error::gpu(format!("the cull camera: {e}")))?;
        if !now.is_finite() {
            return Err(Error::gpu(format!("the cull clock is {now}")));
        }
        let slots = instances.slot_count();
        if u64::from(slots) > self.max_slots {
            return Err(Error::Limit {
                buffer: "cull dispatch",
                bytes: u64::from(slots),
                limit: "max_compute_workgroups_per_dimension (squared, times 256 slots)",
                max: self.max_slots,
            });
        }
        let bytes = u64::from(slots) * 4;
        let handles = instances.handle_capacity();
        let state_bytes = u64::from(handles) * STATE_SIZE;
        let max = self.max_buffer.min(self.binding_limit);
        for (buffer, b) in [("cull visible lists", bytes), ("cull states", state_bytes)] {
            if b > max {
                return Err(Error::Limit {
                    buffer,
                    bytes: b,
                    limit: "max_buffer_size or max_storage_buffer_binding_size",
                    max,
                });
            }
        }
        view.grow_states(device, queue, handles, max);
        if view.visible.size() < bytes {
            view.visible.reserve(device, bytes, max);
            view.generation += 1;
        }
        let key = (instances.generation(), view.generation, self.generation);
        if view.group.as_ref().is_none_or(|g| g.1 != key) {
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("crowd cull"),
                layout: &self.layout,
                entries: &[
                    entry(0, &view.uniform),
                    entry(1, instances.buffer()),
                    entry(2, &self.clip_bounds),
                    entry(3, &view.states.buffer),
                    entry(4, &view.counts),
                    entry(5, &view.visible.buffer),
                    entry(6, &view.draw_slots.buffer),
                    entry(7, &view.args.buffer),
                    entry(8, instances.owners_buffer()),
                ],
            });
            view.group = Some((group, key));
        }
        let mut uniform = self.edges;
        uniform.planes = camera.planes.map(|p| p.to_array());
        uniform.depth_plane = camera.depth_plane.to_array();
        uniform.proj_scale = camera.proj_scale;
        uniform.slot_count = slots;
        uniform.draw_count = view.draw_count;
        uniform.now = now;
        uniform.segment_clips = self.segment_clips;
        queue.write_buffer(&view.uniform, 0, bytemuck::bytes_of(&uniform));
        let Some((group, ..)) = &view.group else {
            return Err(Error::gpu("the cull bind group is missing"));
        };
        encoder.clear_buffer(&view.counts, 0, None);
        let workgroups = slots.div_ceil(CULL_WORKGROUP);
        let (x, y) = if workgroups <= 65_535 {
            (workgroups, 1)
        } else {
            (65_535, workgroups.div_ceil(65_535))
        };
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("crowd cull"),
            timestamp_writes,
        });
        pass.set_bind_group(0, group, &[]);
        if x > 0 {
            pass.set_pipeline(&self.classify);
            pass.dispatch_workgroups(x, y, 1);
        }
        pass.set_pipeline(&self.place);
        pass.dispatch_workgroups(1, 1, 1);
        if x > 0 {
            pass.set_pipeline(&self.scatter);
            pass.dispatch_workgroups(x, y, 1);
        }
        Ok(())
    }
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// The edges `t * (1 - h)` and `t * (1 + h)` of every table, computed as crowd-cull computes them.
fn edges(desc: &GroupDesc) -> CullViewUniform {
    let h = desc.hysteresis;
    let lo = |t: f32| t * (1.0 - h);
    let hi = |t: f32| t * (1.0 + h);
    let mut u = CullViewUniform {
        lod_count: desc.lod_thresholds.len() as u32 + 1,
        ..CullViewUniform::default()
    };
    for (i, &t) in desc.lod_thresholds.iter().take(MAX_LODS - 1).enumerate() {
        u.lod_lo[i / 4][i % 4] = lo(t);
        u.lod_hi[i / 4][i % 4] = hi(t);
    }
    for i in 0..TIER_COUNT - 1 {
        u.tier_lo[i] = lo(desc.tier_thresholds[i]);
        u.tier_hi[i] = hi(desc.tier_thresholds[i]);
        u.rate_lo[i] = lo(desc.rate_thresholds[i]);
        u.rate_hi[i] = hi(desc.rate_thresholds[i]);
    }
    u
}

impl CullView {
    /// Sets the indirect draws the view writes each cull, in order: `args` entry `i` draws `draws[i]`'s bucket
    /// with its index range, starting at the bucket's first list index.
    ///
    /// # Errors
    ///
    /// [`Error::Limit`] when the arguments would pass `max_buffer_size` (20 bytes a draw); nothing changes then.
    pub fn set_draws(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        draws: &[DrawSlot],
        max: u64,
    ) -> Result<()> {
        let bytes = size_of_val(draws) as u64;
        let args_bytes = draws.len() as u64 * 20;
        for (buffer, grow, b) in [
            ("cull draws", &self.draw_slots, bytes),
            ("indirect arguments", &self.args, args_bytes),
        ] {
            if b > grow.size() && grow.size_for(b, max) > max {
                return Err(Error::Limit {
                    buffer,
                    bytes: b,
                    limit: "max_buffer_size",
                    max,
                });
            }
        }
        if self.draw_slots.reserve(device, bytes, max) | self.args.reserve(device, args_bytes, max) {
            self.generation += 1;
        }
        queue.write_buffer(&self.draw_slots.buffer, 0, bytemuck::cast_slice(draws));
        self.draw_count = draws.len() as u32;
        Ok(())
    }

    /// Writes `state` as the view's hysteresis state of the instance `owner` (for example, the CPU's state when a
    /// view takes over from CPU culling). An owner past the view's states, or empty, is ignored: the view starts it
    /// at `TierState::HIDDEN` when it first culls it.
    pub fn write_state(&self, queue: &wgpu::Queue, owner: ResidentOwner, state: TierState) {
        if owner.index < self.state_handles {
            let word = [u32::from_le_bytes(bytemuck::cast(state)), owner.generation];
            queue.write_buffer(
                &self.states.buffer,
                u64::from(owner.index) * STATE_SIZE,
                bytemuck::cast_slice(&word),
            );
        }
    }

    /// Makes the view hold states for `handles` handle indices, keeping the old ones. New states are zero:
    /// generation 0 is never a live handle's, so their instances start at `TierState::HIDDEN`.
    fn grow_states(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, handles: u32, max: u64) {
        if handles <= self.state_handles {
            return;
        }
        let bytes = u64::from(handles) * STATE_SIZE;
        if bytes > self.states.size() {
            let size = self.states.size_for(bytes, max);
            // wgpu zero-fills a new buffer.
            let old = std::mem::replace(
                &mut self.states.buffer,
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("crowd cull states"),
                    size,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                }),
            );
            if self.state_handles > 0 {
                let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("crowd cull state growth"),
                });
                encoder.copy_buffer_to_buffer(
                    &old,
                    0,
                    &self.states.buffer,
                    0,
                    u64::from(self.state_handles) * STATE_SIZE,
                );
                queue.submit([encoder.finish()]);
            }
            self.generation += 1;
        }
        self.state_handles = handles;
    }

    /// The indirect draws the view writes each cull ([`CullView::set_draws`]).
    pub fn draw_count(&self) -> u32 {
        self.draw_count
    }

    /// Bumped whenever one of the view's buffers is recreated (its bind groups must be too).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Handle indices the view holds states for.
    pub fn state_handles(&self) -> u32 {
        self.state_handles
    }

    /// The state buffer: per handle index, the instance's `TierState` word and its handle's generation.
    pub fn states_buffer(&self) -> &wgpu::Buffer {
        &self.states.buffer
    }

    /// The visible slots, bucket after bucket.
    pub fn visible_buffer(&self) -> &wgpu::Buffer {
        &self.visible.buffer
    }

    /// The counters: per bucket a count, then per bucket a first list index, then the append cursors.
    pub fn counts_buffer(&self) -> &wgpu::Buffer {
        &self.counts
    }

    /// The indirect arguments, one `DrawIndexedIndirectArgs` (20 bytes) per draw of [`CullView::set_draws`].
    pub fn args_buffer(&self) -> &wgpu::Buffer {
        &self.args.buffer
    }
}
