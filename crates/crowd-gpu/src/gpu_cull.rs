//! GPU culling of the GPU-driven path: [`GpuCuller`], one draw group's clip bounds and level edges over the three
//! compute pipelines of `shaders/crowd_cull.wgsl` (from a [`PipelineCache`]), culling a [`ResidentBuffer`]; and
//! [`CullView`], one view's hysteresis state (per instance, keyed by its handle, so that it follows the instance from
//! slot to slot), visible lists and indirect arguments. The view is an input at encode time, so several views cull
//! one resident buffer, each with its own state; a view may take its levels from another view (shadow views).
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
use crate::limits::{DeviceLimits, dispatch_size};
use crate::pipeline_cache::PipelineCache;
use crate::resident_buffer::ResidentBuffer;
use crate::upload::Uploads;
use crate::work::StatisticsQuery;
use crate::{Error, Result};

/// Buckets a view counts: every (LOD, tier) of a group, [`MAX_LODS`] × [`TIER_COUNT`]. The shader's
/// `MAX_BUCKETS`.
pub const CULL_BUCKETS: usize = MAX_LODS * TIER_COUNT;

/// The bytes of a view's counters: per bucket a count, a first list index and an append cursor.
const COUNTS_BYTES: u64 = (3 * CULL_BUCKETS * 4) as u64;

/// Bytes of one indirect draw's arguments (`DrawIndexedIndirectArgs`).
pub(crate) const ARGS_SIZE: u64 = 20;

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
    /// The view-depth plane (`(0, 0, 0, 1)` for an orthographic view: every depth is 1).
    pub depth_plane: [f32; 4],
    /// The projection's vertical scale: screen size is `r * proj_scale / depth`.
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
    /// 1 when the view takes its levels from another view's states (copied into its own before the cull).
    pub follow: u32,
    /// Padding.
    pub pad: u32,
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

/// A clip's bounds as the shader reads them (`ClipBounds` in `crowd_cull.wgsl`): the box, and with segment bounds
/// the clip's duration and `first_segment | segment_count << 20 | looping << 31` as an integer. Public only for the
/// layout test: not part of the API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct ClipBoundsGpu {
    /// The box's minimum corner.
    pub min: [f32; 3],
    /// The clip's duration in seconds (segment bounds only).
    pub duration: f32,
    /// The box's maximum corner.
    pub max: [f32; 3],
    /// The clip's segments, packed (segment bounds only).
    pub segments: u32,
}

/// One draw group's GPU culling: its clip bounds, level edges and the compute pipelines.
///
/// With time-segment bounds ([`GpuCuller::set_segments`], a bake's), an instance whose clip's bounds are in view is
/// drawn only when the bounds of the segment its clip time falls in are too (unless it is crossfading): a tighter
/// fit for clips that reach far at some moments. Its state stays crowd-cull's (levels from the clip's bounds,
/// `VISIBLE`), with the GPU's own flag bit 2 ([`OUT_OF_SEGMENT`]) set when its segment is out of view.
#[derive(Debug)]
pub struct GpuCuller {
    cache: PipelineCache,
    clip_bounds: wgpu::Buffer,
    /// The group's clip bounds, as the shader reads them.
    bounds: Vec<ClipBoundsGpu>,
    /// Clips whose segment bounds follow them in `clip_bounds`, 0 without segments.
    segment_clips: u32,
    /// Bumped when `clip_bounds` is recreated (views' bind groups hold it).
    generation: u64,
    edges: CullViewUniform,
    limits: DeviceLimits,
}

/// Bytes of one instance's state in a view: its `TierState` word and its handle's generation.
const STATE_SIZE: u64 = 8;

/// Storage buffers the cull's compute stage binds.
const CULL_STORAGE_BUFFERS: u32 = 8;

/// What a view's cull pass is measured with: timestamps (a device with `TIMESTAMP_QUERY`) and a
/// pipeline-statistics query of its compute invocations ([`crate::WorkQueries::cull`], a device with
/// `PIPELINE_STATISTICS_QUERY`). The default measures nothing.
#[derive(Clone, Debug, Default)]
pub struct CullQueries<'a> {
    /// Timestamps at the pass's start and end.
    pub timestamp_writes: Option<wgpu::ComputePassTimestampWrites<'a>>,
    /// A query counting the pass's compute invocations.
    pub statistics: Option<StatisticsQuery<'a>>,
}

/// One view's culling state and output: per handle index the instance's `TierState` word and generation
/// (hysteresis), the visible slots bucket after bucket, the counters, and the indirect arguments of its draws.
#[derive(Debug)]
pub struct CullView {
    uniform: wgpu::Buffer,
    states: GrowBuffer,
    state_handles: u32,
    visible: GrowBuffer,
    counts: wgpu::Buffer,
    draw_slots: wgpu::Buffer,
    args: wgpu::Buffer,
    draws: Vec<DrawSlot>,
    group: Option<(wgpu::BindGroup, [u64; 5])>,
    uploads: Uploads,
}

impl GpuCuller {
    /// The culler of draw group `desc` (its clip bounds, LOD, tier and rate thresholds and hysteresis), keeping
    /// to `limits` (each the smaller of it and the device's), with the pipelines of `cache`.
    ///
    /// # Errors
    ///
    /// [`Error::Cull`] when `desc` is invalid (as `GroupDesc::validate` says); [`Error::DeviceLimit`] when the
    /// limits allow fewer than 8 storage buffers per compute stage; [`Error::Limit`] when the clip bounds pass the
    /// storage binding limit.
    pub fn new(device: &wgpu::Device, cache: &PipelineCache, desc: &GroupDesc, limits: &wgpu::Limits) -> Result<Self> {
        desc.validate()?;
        let limits = DeviceLimits::new(limits, &device.limits());
        if limits.storage_buffers < CULL_STORAGE_BUFFERS {
            return Err(Error::DeviceLimit {
                limit: "max_storage_buffers_per_shader_stage",
                have: u64::from(limits.storage_buffers),
                needs: u64::from(CULL_STORAGE_BUFFERS),
            });
        }
        let bounds: Vec<ClipBoundsGpu> = desc
            .clip_bounds
            .iter()
            .map(|b| ClipBoundsGpu {
                min: b.min.to_array(),
                max: b.max.to_array(),
                ..ClipBoundsGpu::default()
            })
            .collect();
        // A validated group has at least one clip.
        let clip_bounds = bounds_buffer(device, &bounds, &limits)?;
        // The pipelines are made (once per cache) before the first cull needs them.
        cache.cull();
        Ok(Self {
            cache: cache.clone(),
            clip_bounds,
            bounds,
            segment_clips: 0,
            generation: 0,
            edges: edges(desc),
            limits,
        })
    }

    /// Culls with time-segment bounds from here on: `clips` are the bake's clip records (one per clip of the
    /// group, in clip order: duration, looping and their segments' range) and `segments` every clip's segment
    /// boxes (`bake_format::BakedBounds::segments`). Replaces any segments set before.
    ///
    /// # Errors
    ///
    /// [`Error::Bake`] naming the clip when the clip count differs from the group's, a clip's segments lie past
    /// `segments` or past the packing's 2^20 first segment and 2047 segments, a duration is not finite, or a box
    /// is not finite with `min <= max`; [`Error::Limit`] when the boxes pass the storage binding limit. Nothing
    /// changes then.
    pub fn set_segments(
        &mut self,
        device: &wgpu::Device,
        clips: &[bake_format::ClipRecord],
        segments: &[bake_format::BoundsRecord],
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
        let valid = |b: &bake_format::BoundsRecord| {
            let (min, max) = (glam::Vec4::from(b.min), glam::Vec4::from(b.max));
            min.is_finite() && max.is_finite() && min.cmple(max).all()
        };
        if !segments.iter().all(valid) {
            return bad(None, "has a segment box that is not finite with min <= max");
        }
        let mut all = self.bounds.clone();
        for (b, r) in all.iter_mut().zip(clips) {
            b.duration = r.duration;
            b.segments = r.first_segment | r.segment_count << 20 | u32::from(r.is_looping()) << 31;
        }
        all.extend(segments.iter().map(|s| ClipBoundsGpu {
            min: [s.min[0], s.min[1], s.min[2]],
            max: [s.max[0], s.max[1], s.max[2]],
            ..ClipBoundsGpu::default()
        }));
        self.clip_bounds = bounds_buffer(device, &all, &self.limits)?;
        self.segment_clips = clips.len() as u32;
        self.generation += 1;
        Ok(())
    }

    /// True when the culler uses time-segment bounds ([`GpuCuller::set_segments`]).
    pub fn has_segments(&self) -> bool {
        self.segment_clips > 0
    }

    /// A new view that writes `draws`, in order: argument `i` draws `draws[i]`'s bucket with its index range,
    /// starting at the bucket's first list index.
    ///
    /// # Errors
    ///
    /// [`Error::Limit`] when the counters, the draws or their arguments (20 bytes a draw) pass the storage binding
    /// limit or `max_buffer_size` (each is bound whole).
    pub fn view(&self, device: &wgpu::Device, draws: &[DrawSlot]) -> Result<CullView> {
        let max = self.limits.whole();
        let draw_bytes = size_of_val(draws) as u64;
        let args_bytes = draws.len() as u64 * ARGS_SIZE;
        for (buffer, bytes) in [
            ("cull counters", COUNTS_BYTES),
            ("cull draws", draw_bytes),
            ("indirect arguments", args_bytes),
        ] {
            if bytes > max {
                return Err(Error::Limit {
                    buffer,
                    bytes,
                    limit: "max_buffer_size or max_storage_buffer_binding_size",
                    max,
                });
            }
        }
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
        // Draw slots and arguments are sized exactly (at least one word, so that a binding is valid).
        let draw_slots = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("crowd cull draws"),
                contents: if draws.is_empty() {
                    &[0; 16]
                } else {
                    bytemuck::cast_slice(draws)
                },
                usage: wgpu::BufferUsages::STORAGE,
            },
        );
        let args = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd cull indirect"),
            size: args_bytes.max(ARGS_SIZE),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::INDIRECT | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        Ok(CullView {
            uniform,
            states: GrowBuffer::new(device, "crowd cull states", storage, u64::MAX / 2),
            state_handles: 0,
            visible: GrowBuffer::new(device, "crowd cull visible", storage, u64::MAX / 2),
            counts,
            draw_slots,
            args,
            draws: draws.to_vec(),
            group: None,
            uploads: Uploads::new(4 << 10),
        })
    }

    /// Culls every slot of `instances` for `camera` at animation time `now` into `view`, recording into `encoder`
    /// the view's uniform, a clear of the counters and the three dispatches (with `timestamp_writes` on the pass,
    /// on a device with `TIMESTAMP_QUERY`). An instance the view has not seen (a handle index it holds no state
    /// for, or another generation of it) starts at `TierState::HIDDEN`; every other instance's state carries over
    /// from the view's last cull (hysteresis), whichever slot it is in now.
    ///
    /// With `follow`, a view culled earlier in the encoder (a shadow view following the main camera), the view takes
    /// each instance's LOD, tier and rate from that view's state (its visibility is its own); an instance the other
    /// view has not seen gets its levels from this view's camera, as a new instance would.
    ///
    /// # Errors
    ///
    /// [`Error::Cull`] for a camera that fails `CullCamera::validate`, [`Error::Clock`] for a clock that is not
    /// finite; [`Error::Limit`] when the view's per-slot or per-handle buffers would pass `max_buffer_size` or the
    /// storage binding limit. Nothing is recorded then.
    #[expect(
        clippy::too_many_arguments,
        reason = "the device, the encoder, the instances, the view, the camera, the clock, the view followed and the queries"
    )]
    pub fn cull(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        instances: &ResidentBuffer,
        view: &mut CullView,
        camera: &CullCamera,
        now: f32,
        follow: Option<&CullView>,
        queries: CullQueries<'_>,
    ) -> Result<()> {
        camera.validate()?;
        if !now.is_finite() {
            return Err(Error::Clock { now });
        }
        let slots = instances.slot_count();
        let bytes = u64::from(slots) * 4;
        let handles = instances.handle_capacity();
        let state_bytes = u64::from(handles) * STATE_SIZE;
        let max = self.limits.whole();
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
        view.grow_states(device, encoder, handles, max);
        view.visible.reserve(device, bytes, max);
        let follow = follow.filter(|leader| leader.state_handles > 0 && !std::ptr::eq(*leader, &*view));
        if let Some(leader) = follow {
            // The leader's states replace the view's own: what the leader has not seen keeps the view's state.
            let n = u64::from(leader.state_handles.min(handles));
            encoder.copy_buffer_to_buffer(&leader.states.buffer, 0, &view.states.buffer, 0, n * STATE_SIZE);
        }
        let key = [
            instances.generation(),
            view.states.generation,
            view.visible.generation,
            self.generation,
            // The culler's identity: a view moved to another culler rebuilds its group.
            std::ptr::from_ref(self) as u64,
        ];
        if view.group.as_ref().is_none_or(|g| g.1 != key) {
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("crowd cull"),
                layout: &self.cache.layouts().cull,
                entries: &[
                    whole(0, &view.uniform),
                    whole(1, instances.buffer()),
                    whole(2, &self.clip_bounds),
                    whole(3, &view.states.buffer),
                    whole(4, &view.counts),
                    whole(5, &view.visible.buffer),
                    whole(6, &view.draw_slots),
                    whole(7, &view.args),
                    whole(8, instances.owners_buffer()),
                ],
            });
            view.group = Some((group, key));
        }
        let mut uniform = self.edges;
        uniform.planes = camera.planes.map(|p| p.to_array());
        uniform.depth_plane = camera.depth_plane.to_array();
        uniform.proj_scale = camera.proj_scale;
        uniform.slot_count = slots;
        uniform.draw_count = view.draw_count();
        uniform.now = now;
        uniform.segment_clips = self.segment_clips;
        uniform.follow = u32::from(follow.is_some());
        let mut staging = view.uploads.begin(device, encoder);
        staging.push(&view.uniform, 0, bytemuck::bytes_of(&uniform));
        staging.finish();
        encoder.clear_buffer(&view.counts, 0, None);
        let Some((group, ..)) = &view.group else {
            return Ok(());
        };
        let (x, y) = dispatch_size(slots, self.limits.workgroups);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("crowd cull"),
            timestamp_writes: queries.timestamp_writes,
        });
        if let Some(q) = queries.statistics {
            pass.begin_pipeline_statistics_query(q.query_set, q.index);
        }
        let pipelines = self.cache.cull();
        pass.set_bind_group(0, group, &[]);
        if x > 0 {
            pass.set_pipeline(&pipelines.classify);
            pass.dispatch_workgroups(x, y, 1);
        }
        pass.set_pipeline(&pipelines.place);
        pass.dispatch_workgroups(1, 1, 1);
        if x > 0 {
            pass.set_pipeline(&pipelines.scatter);
            pass.dispatch_workgroups(x, y, 1);
        }
        if queries.statistics.is_some() {
            pass.end_pipeline_statistics_query();
        }
        Ok(())
    }
}

/// A buffer of clip (and segment) bounds, within the storage binding limit.
fn bounds_buffer(device: &wgpu::Device, bounds: &[ClipBoundsGpu], limits: &DeviceLimits) -> Result<wgpu::Buffer> {
    let bytes = size_of_val(bounds) as u64;
    if bytes > limits.whole() {
        return Err(Error::Limit {
            buffer: "clip bounds",
            bytes,
            limit: "max_buffer_size or max_storage_buffer_binding_size",
            max: limits.whole(),
        });
    }
    Ok(wgpu::util::DeviceExt::create_buffer_init(
        device,
        &wgpu::util::BufferInitDescriptor {
            label: Some("crowd clip bounds"),
            contents: bytemuck::cast_slice(bounds),
            usage: wgpu::BufferUsages::STORAGE,
        },
    ))
}

/// A binding of all of `buffer` (whose size the caller kept within the binding limit).
fn whole(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset: 0,
            size: NonZeroU64::new(buffer.size()),
        }),
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
    /// Writes `state` as the view's hysteresis state of the instance `owner` (for example, the CPU's state when a
    /// view takes over from CPU culling), with `queue.write_buffer`: it takes effect at the next submit, before its
    /// command buffers. An owner past the view's states, or empty, is ignored: the view starts it at
    /// `TierState::HIDDEN` when it first culls it.
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

    /// Makes the view hold states for `handles` handle indices, keeping the old ones (a copy recorded into
    /// `encoder`). New states are zero: generation 0 is never a live handle's, so their instances start at
    /// `TierState::HIDDEN`.
    fn grow_states(&mut self, device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder, handles: u32, max: u64) {
        if handles <= self.state_handles {
            return;
        }
        let bytes = u64::from(handles) * STATE_SIZE;
        if bytes > self.states.size() {
            // wgpu zero-fills a new buffer.
            let old = self.states.buffer.clone();
            self.states.reserve(device, bytes, max);
            if self.state_handles > 0 {
                encoder.copy_buffer_to_buffer(
                    &old,
                    0,
                    &self.states.buffer,
                    0,
                    u64::from(self.state_handles) * STATE_SIZE,
                );
            }
        }
        self.state_handles = handles;
    }

    /// The indirect draws the view writes each cull.
    pub fn draw_count(&self) -> u32 {
        self.draws.len() as u32
    }

    /// The view's draws, in the order of their indirect arguments.
    pub fn draw_slots(&self) -> &[DrawSlot] {
        &self.draws
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

    /// The indirect arguments, one `DrawIndexedIndirectArgs` (20 bytes) per draw of the view.
    pub fn args_buffer(&self) -> &wgpu::Buffer {
        &self.args
    }

    /// Bumped whenever one of the view's buffers that the draws bind is recreated.
    pub(crate) fn generation(&self) -> u64 {
        self.visible.generation
    }
}
