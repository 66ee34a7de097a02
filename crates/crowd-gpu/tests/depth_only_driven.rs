//! The GPU-driven path's depth-only pass (a shadow map's), on lavapipe: with the pooled, baked and VAT tiers all
//! in view, a depth-only pass of a view writes the depth its colour pass draws at, so a colour pass over that
//! depth with the `Less` test lets (almost) no fragment through. Each tier's depth-only entry point poses its
//! vertices exactly as its colour entry point does.

mod common;

use anim_bake::{BakeOptions, BatFormat, Parts};
use common::driven::{SIZE, camera, renderer, scene};
use common::images;
use crowd_cull::Handle;
use crowd_frame::{CrowdFrame, FrameSettings};
use crowd_gpu::CULL_BUCKETS;
use crowd_gpu::headless::OffscreenTarget;
use glam::Vec3;

#[test]
fn the_depth_only_view_pass_writes_the_depth_of_every_tier() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(16, 10);
    let model = images::default_character();
    let options = BakeOptions {
        parts: Parts { bat: true, vat: true },
        bat_format: Some(BatFormat::F32),
        ..BakeOptions::default()
    };
    let (bake, _) = anim_bake::bake(&model, &options, &|_| {}).expect("the default character bakes");
    let binding = model.bindings.iter().find(|b| b.skeleton == 0).expect("a skinned mesh");
    let first = bake.first_vertices(binding.meshes.clone()).expect("baked");

    // Near instances pooled, the middle rows baked, the far rows VAT.
    let settings = FrameSettings {
        gpu_driven: true,
        tier_thresholds: [50.0, 0.3, 0.16],
        ..scene.settings.clone()
    };
    let mut crowd = CrowdFrame::new(&scene.character, settings).expect("a crowd");
    let mut handles = vec![Handle::default(); scene.spawns.len()];
    crowd.add_many(&scene.spawns, &mut handles).expect("adds");
    let mut r = renderer(&gpu, &scene, &crowd, true);
    r.set_bat(&gpu.device, &gpu.queue, bake.bat.as_ref().expect("a BAT"))
        .expect("the BAT fits");
    r.set_vat(&gpu.device, &gpu.queue, bake.vat.as_ref().expect("a VAT"), &first)
        .expect("the VAT fits");
    let cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -10.0));
    let exchange = crowd.exchange().clone();
    for _ in 0..3 {
        crowd.step(1.0 / 30.0, &cam).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        r.prepare(&gpu.device, &gpu.queue, &packet).expect("prepares");
    }
    let mut view = r.create_view(&gpu.device, &gpu.queue).expect("a view");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    r.prepare_view(&gpu.device, &gpu.queue, &mut encoder, &mut view, &cam)
        .expect("the view prepares");
    gpu.queue.submit([encoder.finish()]);
    let counts: Vec<u32> = bytemuck::cast_slice(
        &gpu.read_buffer(
            view.cull().expect("GPU-driven").counts_buffer(),
            4 * CULL_BUCKETS as u64,
        )
        .expect("reads"),
    )
    .to_vec();
    let per_tier: Vec<u32> = (0..4).map(|t| counts.iter().skip(t).step_by(4).sum()).collect();
    eprintln!("visible per tier (unique, pooled, baked, VAT): {per_tier:?}");
    assert!(
        per_tier[1] > 10 && per_tier[2] > 10 && per_tier[3] > 10,
        "every GPU tier is in view: {per_tier:?}"
    );

    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let colour = target
        .render(&gpu, wgpu::Color::TRANSPARENT, |pass| r.render_view(&view, pass))
        .expect("renders");
    images::write_png(
        &images::reference_dir().join("depth_only_driven-actual.png"),
        SIZE,
        &colour,
    );
    assert!(
        colour.chunks_exact(4).filter(|p| p[3] != 0).count() > 10_000,
        "the crowd is drawn"
    );

    let over = images::depth_then_colour(
        &gpu,
        &target,
        |pass| r.render_view_depth_only(&view, pass),
        |pass| r.render_view(&view, pass),
    );
    let passed = over.chunks_exact(4).filter(|p| p[3] != 0).count();
    assert!(
        passed <= 20,
        "{passed} colour fragments passed the depth-only pass's depth"
    );
}
