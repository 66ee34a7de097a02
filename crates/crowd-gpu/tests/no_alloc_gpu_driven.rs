//! Proves with a counting global allocator that on the GPU-driven path, after warm-up, `CrowdFrame::step`
//! allocates nothing (with 1% of the crowd moving and a few clip switches each frame), and that the render side
//! (`prepare`, `prepare_view`, `render_view`) allocates the same small number of times every frame for 400 and for
//! 2,400 instances: only wgpu's own staging and command recording, nothing per instance.
//!
//! This file holds a single test, so that no other test of the same process allocates while it measures.

mod common;

use std::alloc::System;

use common::driven::{camera, crowd_of, renderer, scene};
use crowd_frame::ClipId;
use crowd_gpu::headless::OffscreenTarget;
use glam::Vec3;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn the_gpu_driven_frame_allocates_nothing_per_instance() {
    let Some(gpu) = common::gpu() else { return };
    let cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -10.0));
    let target = OffscreenTarget::new(&gpu.device, 64, 64).expect("a target");
    let mut render_counts = Vec::new();
    // One rayon pool for the whole run, entered once: entering rayon from outside allocates now and then.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a pool");
    for (cols, rows) in [(20, 20), (60, 40)] {
        let scene = scene(cols, rows);
        let (mut crowd, handles) = crowd_of(&scene, true);
        let mut r = renderer(&gpu, &scene, &crowd, true);
        let mut view = r.create_view(&gpu.device, &gpu.queue).expect("a view");
        let exchange = crowd.exchange().clone();
        let clips = crowd.character().clips().len();
        let mut step_allocs = Vec::new();
        let mut render_allocs = Vec::new();
        pool.install(|| {
            for frame in 0..80 {
                let region = Region::new(GLOBAL);
                for k in 0..handles.len() / 100 {
                    let h = handles[(frame * 37 + k * 101) % handles.len()];
                    let p = crowd.store().get(h).expect("live").desc.position;
                    let step = if frame % 2 == 0 { 0.05 } else { -0.05 };
                    crowd.set_position(h, p + Vec3::X * step).expect("moves");
                }
                if frame % 4 == 0 {
                    let h = handles[(frame * 13) % handles.len()];
                    crowd.play(h, ClipId(((frame / 4) % clips) as u16), 0.2).expect("plays");
                }
                crowd.step(1.0 / 60.0, &cam).expect("steps");
                let step = region.change();
                let packet = exchange.begin_read().expect("a packet");
                let region = Region::new(GLOBAL);
                r.prepare(&gpu.device, &gpu.queue, &packet).expect("prepares");
                let mut encoder = gpu.device.create_command_encoder(&Default::default());
                r.prepare_view(&gpu.device, &gpu.queue, &mut encoder, &mut view, &cam)
                    .expect("the view");
                gpu.queue.submit([encoder.finish()]);
                let render = region.change();
                drop(packet);
                // Rendering into the target reads back (allocating a Vec for the pixels): outside the count.
                if frame % 20 == 0 {
                    target
                        .render(&gpu, wgpu::Color::TRANSPARENT, |pass| r.render_view(&view, pass))
                        .expect("renders");
                } else {
                    let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
                }
                if frame >= 40 {
                    step_allocs.push(step.allocations + step.reallocations);
                    render_allocs.push(render.allocations + render.reallocations);
                }
            }
        });
        eprintln!(
            "{} instances: step allocations after warm-up {step_allocs:?}; prepare + prepare_view + submit {render_allocs:?}",
            handles.len()
        );
        assert!(
            step_allocs.iter().all(|&a| a == 0),
            "the GPU-driven step allocates: {step_allocs:?}"
        );
        render_allocs.sort_unstable();
        render_counts.push(render_allocs[render_allocs.len() / 2]);
    }
    assert!(
        render_counts[0].abs_diff(render_counts[1]) <= 2,
        "render-side allocations per frame depend on the crowd: {render_counts:?}"
    );
}
