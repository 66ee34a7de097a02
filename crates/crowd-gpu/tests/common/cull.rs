//! Helpers of the GPU culling tests: a cull submitted, a view's cull read back, and the ties the comparisons leave
//! out.

use crowd_cull::reference::sphere_visible;
use crowd_cull::{CullCamera, GroupDesc, TierState};
use crowd_gpu::headless::Gpu;
use crowd_gpu::{CULL_BUCKETS, CullView, DrawSlot, GpuCuller, ResidentBuffer};
use glam::Vec3;

/// Culls `resident` for `view` with `camera` at animation time `now` (its own levels, no timestamps), submitted.
pub fn cull_now(
    gpu: &Gpu,
    culler: &GpuCuller,
    resident: &ResidentBuffer,
    view: &mut CullView,
    camera: &CullCamera,
    now: f32,
) -> crowd_gpu::Result<()> {
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    culler.cull(
        &gpu.device,
        &mut encoder,
        resident,
        view,
        camera,
        now,
        None,
        Default::default(),
    )?;
    gpu.queue.submit([encoder.finish()]);
    Ok(())
}

/// Everything a view's cull produced, read back.
pub struct GpuCull {
    /// Per handle index: the state and the generation it belongs to.
    pub states: Vec<(TierState, u32)>,
    /// Per bucket: the visible slots, sorted.
    pub lists: Vec<Vec<u32>>,
}

pub fn read_cull(gpu: &Gpu, view: &CullView, slots: usize, draws: &[DrawSlot]) -> GpuCull {
    let words = |buffer: &wgpu::Buffer, n: usize| -> Vec<u32> {
        bytemuck::cast_slice(&gpu.read_buffer(buffer, n as u64 * 4).expect("reads back")).to_vec()
    };
    let states = words(view.states_buffer(), 2 * view.state_handles() as usize);
    let counts = words(view.counts_buffer(), 3 * CULL_BUCKETS);
    let visible = words(view.visible_buffer(), slots);
    let args = words(view.args_buffer(), draws.len() * 5);
    let mut lists = Vec::new();
    for b in 0..CULL_BUCKETS {
        let (n, first) = (counts[b] as usize, counts[CULL_BUCKETS + b] as usize);
        assert_eq!(
            counts[2 * CULL_BUCKETS + b] as usize,
            n,
            "bucket {b}: every counted slot was appended"
        );
        let mut list = visible[first..first + n].to_vec();
        list.sort_unstable();
        lists.push(list);
    }
    for (d, slot) in draws.iter().enumerate() {
        // Draw d draws its bucket: its index range and count, from instance 0 (the vertex shader adds the bucket's
        // first list index, so no draw needs INDIRECT_FIRST_INSTANCE).
        assert_eq!(
            &args[d * 5..d * 5 + 5],
            &[
                slot.index_count,
                counts[slot.bucket as usize],
                slot.first_index,
                slot.base_vertex as u32,
                0
            ],
            "the arguments of draw {d}"
        );
    }
    GpuCull {
        states: states.chunks_exact(2).map(|w| (bytemuck::cast(w[0]), w[1])).collect(),
        lists,
    }
}

/// True when the instance lies within a relative 1e-5 of a frustum plane or a level edge of `desc`: the GPU and
/// the CPU may round it to either side.
pub fn is_tie(camera: &CullCamera, desc: &GroupDesc, centre: Vec3, r: f32) -> bool {
    let scale = centre.abs().max_element() + r + 1.0;
    for p in camera.planes {
        let d = p.truncate().dot(centre) + p.w + r;
        if d.abs() <= 1e-5 * scale {
            return true;
        }
    }
    if !sphere_visible(camera, centre, r) {
        return false;
    }
    let s = camera.screen_size(centre, r);
    let h = desc.hysteresis;
    let edges = desc
        .lod_thresholds
        .iter()
        .chain(&desc.tier_thresholds)
        .chain(&desc.rate_thresholds)
        .flat_map(|&t| [t * (1.0 - h), t * (1.0 + h)]);
    s.is_finite() && edges.into_iter().any(|e| (s - e).abs() <= 1e-5 * e)
}
