//! The GPU-driven path end to end on lavapipe: crowd-frame hands over resident changes, the renderer culls each
//! view on the GPU and draws indirectly; the image equals the CPU-culled path's for the same crowd, two views of
//! one packet each equal a render of that camera alone, and the draw count does not depend on the crowd.
//!
//! Thresholds (set on lavapipe, llvmpipe 2 threads): GPU-driven vs CPU-culled, mean ≤ 0.25 steps and at most
//! 0.3% of pixels flipped (off by more than 32). The two paths map (clip, time) to the same slot pair, but the
//! CPU packs the scale as f16 and the fraction as unorm16 and maps with exact fixed-point phases, while the GPU
//! reads f32 and maps in f32: silhouettes move by a fraction of a pixel. Two views against single views: equal
//! images (mean 0, a pixel may flip where two instances' depths tie and the list order differs).

mod common;

use common::driven::{SIZE, camera, crowd_of, renderer, scene};
use common::images;
use crowd_cull::Handle;
use crowd_frame::{ClipId, CrowdFrame, FrameCamera};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, CrowdView};
use glam::Vec3;

/// Steps `crowd` `frames` times, preparing every packet in `renderer` (the GPU-driven path needs every packet's
/// resident changes), with a few crossfades, cuts and moves on the way when `changes`.
fn run(
    crowd: &mut CrowdFrame<'_>,
    renderer: &mut CrowdRenderer,
    gpu: &Gpu,
    camera: &FrameCamera,
    frames: usize,
    handles: &[Handle],
) {
    let exchange = crowd.exchange().clone();
    for f in 0..frames {
        if f == 1 {
            for (k, &h) in handles.iter().enumerate().step_by(7) {
                crowd
                    .set_position(h, crowd.store().get(h).expect("live").desc.position + Vec3::X * 0.3)
                    .expect("moves");
                if k % 3 == 0 {
                    crowd
                        .play(h, ClipId((k % crowd.character().clips().len()) as u16), 0.0)
                        .expect("plays");
                }
            }
        }
        crowd.step(1.0 / 30.0, camera).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        renderer.prepare(&gpu.device, &gpu.queue, &packet).expect("prepares");
    }
}

fn render_view(
    gpu: &Gpu,
    r: &CrowdRenderer,
    view: &mut CrowdView,
    camera: &FrameCamera,
    target: &OffscreenTarget,
) -> Vec<u8> {
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    r.prepare_view(&gpu.device, &gpu.queue, &mut encoder, view, camera)
        .expect("the view prepares");
    gpu.queue.submit([encoder.finish()]);
    target
        .render(gpu, wgpu::Color::TRANSPARENT, |pass| r.render_view(view, pass))
        .expect("renders")
}

fn save(name: &str, pixels: &[u8]) {
    let dir = images::reference_dir();
    images::write_png(&dir.join(format!("{name}-actual.png")), SIZE, pixels);
}

#[test]
fn the_gpu_driven_image_equals_the_cpu_culled_image() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(16, 10);
    let cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -10.0));
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");

    let (mut cpu_crowd, handles) = crowd_of(&scene, false);
    let mut cpu = renderer(&gpu, &scene, &cpu_crowd, false);
    run(&mut cpu_crowd, &mut cpu, &gpu, &cam, 4, &handles);
    let reference = images::render(&gpu, &target, &[&cpu]);

    let (mut gpu_crowd, handles) = crowd_of(&scene, true);
    let mut driven = renderer(&gpu, &scene, &gpu_crowd, true);
    run(&mut gpu_crowd, &mut driven, &gpu, &cam, 4, &handles);
    assert!(
        driven.stats().instances == 0,
        "no CPU-drawn instance: {:?}",
        driven.stats()
    );
    let mut view = driven.create_view(&gpu.device, &gpu.queue).expect("a view");
    let image = render_view(&gpu, &driven, &mut view, &cam, &target);
    save("gpu_driven_cpu_culled", &reference);
    save("gpu_driven", &image);

    let drawn = reference.chunks_exact(4).filter(|p| p[3] != 0).count();
    assert!(drawn > 10_000, "the crowd covers the image: {drawn} pixels");
    let d = images::difference(&image, &reference);
    eprintln!("GPU-driven vs CPU-culled: {d:?}");
    assert!(d.mean <= 0.25 && d.flipped <= 0.003, "GPU-driven vs CPU-culled: {d:?}");
}

#[test]
fn two_views_of_one_packet_each_equal_their_camera_alone() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(12, 8);
    let main_cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -8.0));
    let side_cam = camera(Vec3::new(-14.0, 6.0, -6.0), Vec3::new(0.0, 0.0, -6.0));
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");

    let single = |cam: &FrameCamera| {
        let (mut crowd, handles) = crowd_of(&scene, true);
        let mut r = renderer(&gpu, &scene, &crowd, true);
        run(&mut crowd, &mut r, &gpu, &main_cam, 3, &handles);
        let mut view = r.create_view(&gpu.device, &gpu.queue).expect("a view");
        render_view(&gpu, &r, &mut view, cam, &target)
    };
    let main_alone = single(&main_cam);
    let side_alone = single(&side_cam);

    let (mut crowd, handles) = crowd_of(&scene, true);
    let mut r = renderer(&gpu, &scene, &crowd, true);
    run(&mut crowd, &mut r, &gpu, &main_cam, 3, &handles);
    let mut main_view = r.create_view(&gpu.device, &gpu.queue).expect("a view");
    let mut side_view = r.create_view(&gpu.device, &gpu.queue).expect("a view");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    r.prepare_view(&gpu.device, &gpu.queue, &mut encoder, &mut main_view, &main_cam)
        .expect("prepares");
    r.prepare_view(&gpu.device, &gpu.queue, &mut encoder, &mut side_view, &side_cam)
        .expect("prepares");
    gpu.queue.submit([encoder.finish()]);
    let main = target
        .render(&gpu, wgpu::Color::TRANSPARENT, |pass| r.render_view(&main_view, pass))
        .expect("renders");
    let side = target
        .render(&gpu, wgpu::Color::TRANSPARENT, |pass| r.render_view(&side_view, pass))
        .expect("renders");
    save("gpu_driven_side_view", &side);
    for (what, a, b) in [("main", &main, &main_alone), ("side", &side, &side_alone)] {
        let d = images::difference(a, b);
        assert!(
            d.mean <= 0.01 && d.flipped <= 0.0002,
            "{what} view vs its camera alone: {d:?}"
        );
        assert!(
            a.chunks_exact(4).filter(|p| p[3] != 0).count() > 5_000,
            "{what}: the crowd is drawn"
        );
    }
    let d = images::difference(&main, &side);
    assert!(d.mean > 1.0, "the two views differ: {d:?}");
}

#[test]
fn the_indirect_draw_count_does_not_depend_on_the_crowd() {
    let Some(gpu) = common::gpu() else { return };
    let scene_small = scene(4, 4);
    let scene_big = scene(60, 40);
    let cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -10.0));
    let mut counts = Vec::new();
    for s in [&scene_small, &scene_big] {
        let (mut crowd, handles) = crowd_of(s, true);
        let mut r = renderer(&gpu, s, &crowd, true);
        run(&mut crowd, &mut r, &gpu, &cam, 2, &handles);
        let view = r.create_view(&gpu.device, &gpu.queue).expect("a view");
        counts.push(view.cull().expect("GPU-driven").draw_count());
        // Once cluster upkeep has moved the drifted instances, a frame where nothing changed uploads no resident
        // state.
        let mut changed = Vec::new();
        for _ in 0..6 {
            crowd.step(1.0 / 30.0, &cam).expect("steps");
            let packet = crowd.exchange().begin_read().expect("a packet");
            changed.push(packet.resident().instances.len());
            r.prepare(&gpu.device, &gpu.queue, &packet).expect("prepares");
        }
        assert_eq!(
            changed.last(),
            Some(&0),
            "resident slots changed per static frame: {changed:?}"
        );
    }
    assert_eq!(counts[0], counts[1], "indirect draws for 16 and 2,400 instances");
}
