//! The GPU work of `prepare`, `prepare_view` and `render_view` runs in the engine's order of encoders and submits,
//! whatever order the calls are made in (lavapipe on CI):
//! - two `prepare`s of later packets, recorded into the engine's next encoder between a view's cull and its draw,
//!   leave that draw's image equal to the plain order's (prepare, cull, draw, submit);
//! - one view prepared for one camera and drawn, then prepared for another and drawn again in the same submission
//!   (shadow cascades), draws each camera's image;
//! - frames folded under `Overrun::DropOldest` whose changes of the same slots pass the binding limit together, but
//!   whose latest states fit, are taken (the later change of each slot wins before the size is checked).

mod common;

use common::driven::{SIZE, camera, crowd_of, renderer, scene};
use common::images::{self, PrepareNow};
use crowd_cull::{ClusterSettings, Handle};
use crowd_frame::{ClipId, CrowdFrame, FrameCamera, FrameSettings, Spawn};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{AssetOptions, CrowdAsset, CrowdRenderer, ViewDesc};
use glam::Vec3;
use skin_pack::Overrun;

/// Changes every third instance: a move and a cut to another clip, so that the next packets differ visibly.
fn change(crowd: &mut CrowdFrame, handles: &[Handle], k: usize) {
    let clips = crowd.character().clips().len();
    for (i, &h) in handles.iter().enumerate().step_by(3) {
        let p = crowd.store().get(h).expect("live").desc.position;
        crowd.set_position(h, p + Vec3::new(0.35, 0.0, 0.2)).expect("moves");
        crowd.play(h, ClipId(((i + k) % clips) as u16), 0.0).expect("cuts");
    }
}

/// The image of `r` drawn through a new view of `cam` in a pass recorded after `encoder`'s commands.
fn draw_after(gpu: &Gpu, r: &CrowdRenderer, encoder: wgpu::CommandEncoder, cam: crowd_frame::FrameCamera) -> Vec<u8> {
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let mut encoder = encoder;
    let mut view = r.create_view(&gpu.device).expect("a view");
    let prepared = r
        .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(cam))
        .expect("the view prepares");
    target
        .render_after(gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
            r.render_view(&prepared, pass)
        })
        .expect("renders")
}

#[test]
fn prepares_between_a_cull_and_its_draw_change_nothing_it_draws() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(14, 9);
    let cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -10.0));
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let (mut crowd, handles) = crowd_of(&scene, true);
    // Two renderers of the same crowd, given the same packets: `plain` in the plain order, `engine` in an engine's.
    let mut plain = renderer(&gpu, &scene, &crowd, true);
    let mut engine = renderer(&gpu, &scene, &crowd, true);
    let exchange = crowd.exchange().clone();
    for _ in 0..3 {
        crowd.step(1.0 / 30.0, &cam).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        plain.prepare_now(&gpu, &packet).expect("prepares");
        engine.prepare_now(&gpu, &packet).expect("prepares");
    }
    // Frame N in the plain order: prepare, cull, draw, submit.
    change(&mut crowd, &handles, 1);
    crowd.step(1.0 / 30.0, &cam).expect("steps");
    let packet = exchange.begin_read().expect("a packet");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    plain.prepare(&gpu.device, &mut encoder, &packet).expect("prepares");
    let reference = draw_after(&gpu, &plain, encoder, cam);

    // The same frame in an engine's order: the frame's encoder gets the prepare and the cull; the next two packets
    // are prepared into the next frame's encoder before this frame's pass is recorded and submitted.
    let mut frame = gpu.device.create_command_encoder(&Default::default());
    engine.prepare(&gpu.device, &mut frame, &packet).expect("prepares");
    drop(packet);
    let mut view = engine.create_view(&gpu.device).expect("a view");
    let prepared = engine
        .prepare_view(&gpu.device, &mut frame, &mut view, ViewDesc::new(cam))
        .expect("the view prepares");
    let mut next = gpu.device.create_command_encoder(&Default::default());
    for k in 2..4 {
        change(&mut crowd, &handles, k);
        crowd.step(1.0 / 30.0, &cam).expect("steps");
        let later = exchange.begin_read().expect("a packet");
        engine.prepare(&gpu.device, &mut next, &later).expect("prepares");
    }
    let image = target
        .render_after(&gpu, frame, wgpu::Color::TRANSPARENT, |pass| {
            engine.render_view(&prepared, pass)
        })
        .expect("renders");
    gpu.queue.submit([next.finish()]);
    let later_image = common::driven::view_image(&gpu, &engine, &cam, &target);

    let drawn = reference.chunks_exact(4).filter(|p| p[3] != 0).count();
    assert!(drawn > 10_000, "the crowd is drawn: {drawn} pixels");
    let moved = images::difference(&later_image, &reference);
    assert!(moved.flipped > 0.01, "the later packets change the image: {moved:?}");
    if image != reference {
        images::write_failure("engine_order", SIZE, &image, &reference);
        panic!(
            "prepares between a cull and its draw changed the draw: {:?}",
            images::difference(&image, &reference)
        );
    }
}

#[test]
fn one_view_drawn_twice_in_one_submission_draws_each_camera() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(12, 8);
    let (first, second) = (
        camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -8.0)),
        camera(Vec3::new(-14.0, 6.0, -6.0), Vec3::new(0.0, 0.0, -6.0)),
    );
    let (mut crowd, _) = crowd_of(&scene, true);
    let mut r = renderer(&gpu, &scene, &crowd, true);
    let exchange = crowd.exchange().clone();
    for _ in 0..2 {
        crowd.step(1.0 / 30.0, &first).expect("steps");
        r.prepare_now(&gpu, &exchange.begin_read().expect("a packet"))
            .expect("prepares");
    }
    let (a, b) = (
        OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target"),
        OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target"),
    );
    // Each camera alone, in its own submission, on a view that culled the cameras before it in the same order (a
    // view keeps its hysteresis from camera to camera: an instance within a band of a level edge keeps the level the
    // previous camera gave it).
    let alone = |cameras: &[FrameCamera]| {
        let mut view = r.create_view(&gpu.device).expect("a view");
        let (last, before) = cameras.split_last().expect("a camera");
        for cam in before {
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            r.prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(*cam))
                .expect("the view prepares");
            gpu.queue.submit([encoder.finish()]);
        }
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let prepared = r
            .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(*last))
            .expect("the view prepares");
        a.render_after(&gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
            r.render_view(&prepared, pass)
        })
        .expect("renders")
    };
    let (first_alone, second_alone) = (alone(&[first]), alone(&[first, second]));
    // One view, two cameras, one encoder: prepare for the first, draw into `a`, prepare for the second, draw into
    // `b`. (Preparing both before drawing either does not compile: a prepared view borrows its view.)
    let mut view = r.create_view(&gpu.device).expect("a view");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    for (cam, target) in [(first, &a), (second, &b)] {
        let prepared = r
            .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(cam))
            .expect("the view prepares");
        let mut pass = images::begin_pass(&mut encoder, target, true);
        r.render_view(&prepared, &mut pass);
    }
    gpu.queue.submit([encoder.finish()]);
    let (got_first, got_second) = (a.read_rgba8(&gpu).expect("reads"), b.read_rgba8(&gpu).expect("reads"));
    for (what, got, want) in [
        ("first", &got_first, &first_alone),
        ("second", &got_second, &second_alone),
    ] {
        let d = images::difference(got, want);
        assert!(d.mean <= 0.01 && d.flipped <= 0.0002, "the {what} camera's pass: {d:?}");
    }
    let d = images::difference(&got_first, &got_second);
    assert!(d.mean > 1.0, "the two cameras differ: {d:?}");
}

#[test]
fn folded_frames_are_checked_after_the_later_change_of_each_slot_wins() {
    let Some(gpu) = common::gpu() else { return };
    let Some(assets) = sample_assets::sample_assets() else {
        return;
    };
    // RiggedSimple: 2 joints and one clip, so that every buffer fits a binding of 4,040 bytes.
    let model = anim_pose::import_file(assets.join("gltf/RiggedSimple/RiggedSimple.glb")).expect("imports");
    let asset = CrowdAsset::from_model(
        &model,
        &AssetOptions {
            character: crowd_frame::CharacterOptions {
                slots: crowd_frame::SlotCount::Fixed(2),
                ..Default::default()
            },
            ..AssetOptions::default()
        },
    )
    .expect("an asset");
    let config = crowd_gpu::RendererConfig {
        limits: wgpu::Limits {
            max_storage_buffer_binding_size: 4_040,
            ..gpu.device.limits()
        },
        ..gpu.offscreen_config()
    };
    // 60 instances in 5 clusters of 16 slots: 80 slots, 3,840 bytes of resident states.
    let settings = FrameSettings {
        max_slots: CrowdRenderer::<skin_pack::PaletteEntry>::max_resident_slots(&gpu.device, &config),
        gpu_driven: true,
        packets: 3,
        overrun: Overrun::DropOldest,
        cluster: ClusterSettings {
            radius: 4.0,
            capacity: 16,
        },
        pool: anim_pose::PosePoolOptions {
            max_crossfade_buckets: 1,
            ..anim_pose::PosePoolOptions::default()
        },
        max_unique: 4,
        ..asset.frame_settings()
    };
    let mut crowd = CrowdFrame::new(asset.character.clone(), settings).expect("a crowd");
    let spawns: Vec<Spawn> = (0..60)
        .map(|i| {
            Spawn::at(
                Vec3::new((i % 12) as f32 * 0.5 - 3.0, 0.0, -((i / 12) as f32) * 20.0 - 10.0),
                ClipId(0),
            )
        })
        .collect();
    let mut handles = vec![Handle::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles).expect("adds");
    assert_eq!(crowd.store().group_slot_count(crowd.group()).expect("the group"), 80);
    let cache = crowd_gpu::PipelineCache::new(&gpu.device);
    let mut r: CrowdRenderer = CrowdRenderer::for_crowd(&gpu.device, &gpu.queue, &cache, &config, &asset, &crowd)
        .expect("a renderer for the crowd");
    let far = camera(Vec3::new(0.0, 20.0, 200.0), Vec3::new(0.0, 0.5, -50.0));
    let exchange = crowd.exchange().clone();
    crowd.step(1.0 / 30.0, &far).expect("steps");
    r.prepare_now(&gpu, &exchange.begin_read().expect("a packet"))
        .expect("prepares");
    // Two bulk moves of all 60 in two frames the render thread does not read, then a third frame: the render thread
    // reads the newest, into which the other two were folded (120 changes of 60 slots, 5,760 bytes before the later
    // change of each slot wins, 2,880 after).
    for k in 1..=2 {
        let positions: Vec<Vec3> = spawns.iter().map(|s| s.position + Vec3::X * 0.1 * k as f32).collect();
        crowd.set_positions(&handles, &positions).expect("bulk moves");
        crowd.step(1.0 / 30.0, &far).expect("steps");
    }
    crowd.step(1.0 / 30.0, &far).expect("steps");
    let packet = exchange.begin_read().expect("a packet");
    assert_eq!(packet.resident().instances.len(), 120, "two frames' moves were folded");
    r.prepare_now(&gpu, &packet).expect("the latest states fit");
    let back = gpu
        .read_buffer(r.resident().expect("GPU-driven").buffer(), 80 * 48)
        .expect("reads");
    let got: &[crowd_frame::ResidentInstance] = bytemuck::cast_slice(&back);
    for s in 0..80u32 {
        assert_eq!(got[s as usize], crowd.resident_state(s).expect("a slot"), "slot {s}");
    }
}
