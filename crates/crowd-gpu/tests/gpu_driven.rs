//! The GPU-driven path end to end on lavapipe: crowd-frame hands over resident changes, the renderer culls each
//! view on the GPU and draws indirectly; the image equals the CPU-culled path's for the same crowd, two views of
//! one packet each equal a render of that camera alone, and the draw calls do not depend on the crowd while what
//! they draw (the indirect arguments, read back) does: the instances the CPU-culled path finds visible.
//!
//! Thresholds (set on lavapipe, llvmpipe 2 threads): GPU-driven vs CPU-culled, mean ≤ 0.25 steps and at most
//! 0.3% of pixels flipped (off by more than 32). The two paths map (clip, time) to the same slot pair, but the
//! CPU packs the scale as f16 and the fraction as unorm16 and maps with exact fixed-point phases, while the GPU
//! reads f32 and maps in f32: silhouettes move by a fraction of a pixel. Two views against single views: equal
//! images (mean 0, a pixel may flip where two instances' depths tie and the list order differs).

mod common;

use common::driven::{SIZE, camera, crowd_of, renderer, scene};
use common::images::{self, PrepareNow};
use crowd_cull::Handle;
use crowd_frame::{ClipId, CrowdFrame, FrameCamera};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, CrowdView, ViewDesc};
use glam::Vec3;

/// Steps `crowd` `frames` times, preparing every packet in `renderer` (the GPU-driven path needs every packet's
/// resident changes), with a few crossfades, cuts and moves on the way when `changes`.
fn run(
    crowd: &mut CrowdFrame,
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
        renderer.prepare_now(gpu, &packet).expect("prepares");
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
    let prepared = r
        .prepare_view(&gpu.device, &mut encoder, view, ViewDesc::new(*camera))
        .expect("the view prepares");
    target
        .render_after(gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
            r.render_view(&prepared, pass)
        })
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
    let reference = images::render(&gpu, &target, &cam, &[&cpu]);

    let (mut gpu_crowd, handles) = crowd_of(&scene, true);
    let mut driven = renderer(&gpu, &scene, &gpu_crowd, true);
    run(&mut gpu_crowd, &mut driven, &gpu, &cam, 4, &handles);
    assert!(
        driven.stats().instances == 0,
        "no CPU-drawn instance: {:?}",
        driven.stats()
    );
    let mut view = driven.create_view(&gpu.device).expect("a view");
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
        let mut view = r.create_view(&gpu.device).expect("a view");
        render_view(&gpu, &r, &mut view, cam, &target)
    };
    let main_alone = single(&main_cam);
    let side_alone = single(&side_cam);

    let (mut crowd, handles) = crowd_of(&scene, true);
    let mut r = renderer(&gpu, &scene, &crowd, true);
    run(&mut crowd, &mut r, &gpu, &main_cam, 3, &handles);
    let mut main_view = r.create_view(&gpu.device).expect("a view");
    let mut side_view = r.create_view(&gpu.device).expect("a view");
    // Both views culled before either draws.
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let main_prepared = r
        .prepare_view(&gpu.device, &mut encoder, &mut main_view, ViewDesc::new(main_cam))
        .expect("prepares");
    let side_prepared = r
        .prepare_view(&gpu.device, &mut encoder, &mut side_view, ViewDesc::new(side_cam))
        .expect("prepares");
    let main = target
        .render_after(&gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
            r.render_view(&main_prepared, pass)
        })
        .expect("renders");
    let side = target
        .render(&gpu, wgpu::Color::TRANSPARENT, |pass| {
            r.render_view(&side_prepared, pass)
        })
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

/// The instances each indirect draw draws, read back from the view's arguments (`instance_count`, the second word
/// of each 20-byte `DrawIndexedIndirectArgs`).
fn drawn_instances(gpu: &Gpu, view: &crowd_gpu::PreparedView<'_>) -> Vec<u32> {
    let cull = view.cull().expect("GPU-driven");
    let words: Vec<u32> = bytemuck::cast_slice(
        &gpu.read_buffer(cull.args_buffer(), u64::from(cull.draw_count()) * 20)
            .expect("reads the arguments"),
    )
    .to_vec();
    words.chunks_exact(5).map(|a| a[1]).collect()
}

#[test]
fn the_draw_calls_do_not_depend_on_the_crowd_but_what_they_draw_does() {
    let Some(gpu) = common::gpu() else { return };
    let cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -10.0));
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let mut calls = Vec::new();
    let mut drawn = Vec::new();
    for (cols, rows) in [(4, 4), (60, 40)] {
        let s = scene(cols, rows);
        // The CPU-culled path's visible count for the same crowd, camera and frames: crowd-cull's answer.
        let (mut cpu_crowd, handles) = crowd_of(&s, false);
        let mut cpu = renderer(&gpu, &s, &cpu_crowd, false);
        run(&mut cpu_crowd, &mut cpu, &gpu, &cam, 2, &handles);
        let visible = cpu.stats().instances;

        let (mut crowd, handles) = crowd_of(&s, true);
        let mut r = renderer(&gpu, &s, &crowd, true);
        run(&mut crowd, &mut r, &gpu, &cam, 2, &handles);
        let mut view = r.create_view(&gpu.device).expect("a view");
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let prepared = r
            .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(cam))
            .expect("prepares");
        target
            .render_after(&gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
                r.render_view(&prepared, pass)
            })
            .expect("renders");
        calls.push(prepared.draw_calls());
        // One mesh: every instance the GPU found visible is drawn by exactly one of the indirect draws.
        let per_draw = drawn_instances(&gpu, &prepared);
        let total: u32 = per_draw.iter().sum();
        eprintln!(
            "{} instances: {visible} visible on the CPU, {total} drawn by the GPU ({per_draw:?})",
            cols * rows
        );
        assert!(
            total.abs_diff(visible) <= visible / 200 + 1,
            "the GPU draws {total} instances, the CPU finds {visible} visible"
        );
        drawn.push(total);
        // Once cluster upkeep has moved the drifted instances, a frame where nothing changed uploads no resident
        // state.
        let mut changed = Vec::new();
        for _ in 0..6 {
            crowd.step(1.0 / 30.0, &cam).expect("steps");
            let packet = crowd.exchange().begin_read().expect("a packet");
            changed.push(packet.resident().instances.len());
            r.prepare_now(&gpu, &packet).expect("prepares");
        }
        assert_eq!(
            changed.last(),
            Some(&0),
            "resident slots changed per static frame: {changed:?}"
        );
    }
    assert_eq!(calls[0], calls[1], "draw calls for 16 and 2,400 instances");
    let s = scene(4, 4);
    let indirect = (s.meshes.len() * s.meshes[0].lods.len() * crowd_cull::limits::TIER_COUNT) as u32;
    assert_eq!(calls[0], indirect, "nothing is unique: the indirect draws alone");

    // With the nearest instances unique, the CPU-drawn records add one draw per non-empty packet draw and mesh.
    let (mut crowd, _, mut r) = common::driven::tiered_crowd(&gpu, &s, [0.3, 0.004, 0.001]);
    let exchange = crowd.exchange().clone();
    let mut record_draws = 0;
    for _ in 0..2 {
        crowd.step(1.0 / 30.0, &cam).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        record_draws = packet.draws().iter().filter(|d| d.instance_count > 0).count() as u32;
        r.prepare_now(&gpu, &packet).expect("prepares");
    }
    assert!(record_draws > 0, "some instances are unique");
    let mut view = r.create_view(&gpu.device).expect("a view");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let prepared = r
        .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(cam))
        .expect("prepares");
    assert_eq!(
        prepared.draw_calls(),
        indirect + record_draws * s.meshes.len() as u32,
        "{record_draws} record draws"
    );
    assert!(
        drawn[1] > 10 * drawn[0],
        "what they draw grows with the crowd: {drawn:?}"
    );
}
