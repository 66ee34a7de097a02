//! The VAT tier on the GPU-driven path, on lavapipe: a vertex-animation bake of the default character, in each of
//! its three texel formats, drawn with `vs_vat` (no skinning: two frames of baked vertices, interpolated) gives
//! the image of the pose pool's path for the same crowd at the same times, also mid-crossfade; and bakes that do
//! not fit the renderer or its limits are refused with errors that name what is wrong.
//!
//! Thresholds (set on lavapipe, llvmpipe 2 threads): VAT vs pooled on the GPU-driven path, mean ≤ 0.8 steps and at
//! most 0.8% of pixels flipped (off by more than 32). The bake keeps every vertex within its 1 mm budget of the
//! exact clip and its normals within 2°, the pool interpolates 32 slots per clip, so silhouettes differ by a
//! fraction of a pixel and shading by a step or two. A crossfade mixes the two clips' vertices, which is the
//! pooled tier's mix of skinning matrices applied to the vertex (skinning is linear in the matrices).

mod common;

use anim_bake::{BakeOptions, Parts, VatData, VatFormat};
use common::driven::{SIZE, camera, crowd_of, renderer, run_frames, scene, tiered_crowd, view_image};
use common::images::{self, PrepareNow};
use crowd_cull::Handle;
use crowd_frame::{ClipId, CrowdFrame, FrameSettings};
use crowd_gpu::headless::OffscreenTarget;
use crowd_gpu::{CrowdRenderer, Error};
use glam::Vec3;

/// Tier thresholds that put every instance of the test scene in the VAT tier.
const ALL_VAT: [f32; 3] = [50.0, 40.0, 30.0];

/// A vertex-animation bake of the default character in `format`, and each scene mesh's first baked vertex.
fn bake(format: VatFormat) -> (VatData, Vec<u32>) {
    let model = images::default_character();
    let options = BakeOptions {
        parts: Parts { bat: false, vat: true },
        vat_format: Some(format),
        ..BakeOptions::default()
    };
    let (bake, report) = anim_bake::bake(&model, &options, &|_| {}).expect("the default character bakes");
    eprintln!(
        "VAT {format:?}: {} bytes, largest error {} mm",
        bake.data_bytes(),
        report.largest_error_mm()
    );
    // The scene's meshes are the skeleton's bound meshes in model order, as the bake's.
    let binding = model.bindings.iter().find(|b| b.skeleton == 0).expect("a skinned mesh");
    let first = bake
        .first_vertices(binding.meshes.clone())
        .expect("every bound mesh is baked");
    (bake.vat.expect("a VAT"), first)
}

#[test]
fn the_vat_tier_draws_the_pooled_image_in_every_format() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(12, 8);
    let cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -8.0));
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let clips = scene.character.clips().len() as u16;
    // Half the crowd fades to the next clip over 0.7 s from frame 2; after 6 more frames the weight is 2/7.
    let fade = |f: usize, crowd: &mut CrowdFrame, handles: &[Handle]| {
        if f == 2 {
            for &h in handles.iter().step_by(2) {
                let clip = crowd.store().get(h).expect("live").desc.anim.clip as u16;
                crowd.play(h, ClipId((clip + 1) % clips), 0.7).expect("a fade");
            }
        }
    };
    let (mut pooled_crowd, handles) = crowd_of(&scene, true);
    let mut pooled = renderer(&gpu, &scene, &pooled_crowd, true);
    run_frames(&mut pooled_crowd, &mut pooled, &gpu, &cam, 8, |f, c| {
        fade(f, c, &handles)
    });
    let reference = view_image(&gpu, &pooled, &cam, &target);
    images::write_png(&images::reference_dir().join("vat_pooled-actual.png"), SIZE, &reference);
    let drawn = reference.chunks_exact(4).filter(|p| p[3] != 0).count();
    assert!(drawn > 10_000, "the crowd covers the image: {drawn} pixels");

    for format in VatFormat::ALL {
        let (vat, first) = bake(format);
        let (mut crowd, handles, mut r) = tiered_crowd(&gpu, &scene, ALL_VAT);
        r.set_vat(&gpu.device, &gpu.queue, &vat, &first).expect("the bake fits");
        assert!(r.has_vat());
        run_frames(&mut crowd, &mut r, &gpu, &cam, 8, |f, c| fade(f, c, &handles));
        let drawn_vat = view_image(&gpu, &r, &cam, &target);
        let name = format!("vat_{format:?}-actual.png").to_lowercase();
        images::write_png(&images::reference_dir().join(name), SIZE, &drawn_vat);
        let d = images::difference(&drawn_vat, &reference);
        eprintln!("VAT {format:?} vs pooled: {d:?}");
        assert!(d.mean <= 0.8 && d.flipped <= 0.008, "VAT {format:?} vs pooled: {d:?}");

        // The VAT draws read the bake: the same bake with its clips' quantization boxes shifted draws elsewhere.
        if format == VatFormat::Standard {
            let mut shifted = vat.clone();
            for q in &mut shifted.quant {
                q.min[1] += 0.5;
            }
            let (mut crowd, handles, mut r) = tiered_crowd(&gpu, &scene, ALL_VAT);
            r.set_vat(&gpu.device, &gpu.queue, &shifted, &first).expect("fits");
            run_frames(&mut crowd, &mut r, &gpu, &cam, 8, |f, c| fade(f, c, &handles));
            let d = images::difference(&view_image(&gpu, &r, &cam, &target), &reference);
            assert!(d.flipped > 0.02, "the VAT tier draws the bake's vertices: {d:?}");
        }
    }
}

#[test]
fn vat_bakes_that_do_not_fit_are_refused() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(2, 2);
    let (vat, first) = bake(VatFormat::Standard);

    let (crowd, _) = crowd_of(&scene, false);
    let mut cpu = renderer(&gpu, &scene, &crowd, false);
    let err = cpu
        .set_vat(&gpu.device, &gpu.queue, &vat, &first)
        .expect_err("CPU-culled");
    assert!(matches!(err, Error::Path { .. }), "{err}");

    let (_, _, mut r) = tiered_crowd(&gpu, &scene, ALL_VAT);
    let err = r
        .set_vat(&gpu.device, &gpu.queue, &vat, &[])
        .expect_err("no first vertices");
    assert!(matches!(err, Error::Bake { clip: None, .. }), "{err}");
    let past: Vec<u32> = first.iter().map(|_| vat.layout.vertex_count - 1).collect();
    let err = r
        .set_vat(&gpu.device, &gpu.queue, &vat, &past)
        .expect_err("meshes past the vertices");
    assert!(matches!(err, Error::Bake { clip: None, .. }), "{err}");
    let mut short = vat.clone();
    short.planes[0].pop();
    let err = r
        .set_vat(&gpu.device, &gpu.queue, &short, &first)
        .expect_err("a plane a byte short");
    assert!(matches!(err, Error::Bake { .. }), "{err}");
    let mut one = vat.clone();
    one.clips[2].frame_count = 1;
    let err = r.set_vat(&gpu.device, &gpu.queue, &one, &first).expect_err("one frame");
    assert!(matches!(err, Error::Bake { clip: Some(2), .. }), "{err}");
    assert!(!r.has_vat(), "nothing changes on error");

    // Planes past an odd texture limit.
    let small = wgpu::Limits {
        max_texture_dimension_2d: vat.layout.width.max(vat.layout.height) - 3,
        ..gpu.device.limits()
    };
    let settings = FrameSettings {
        gpu_driven: true,
        ..scene.settings.clone()
    };
    let limited_crowd: CrowdFrame = CrowdFrame::new(scene.character.clone(), settings).expect("a crowd");
    let mut limited: CrowdRenderer = images::renderer(&gpu, Some(small));
    let materials = vec![crowd_mesh::Material::default(); scene.meshes.len()];
    images::add_meshes(&gpu, &mut limited, &scene.meshes, &materials);
    let desc = limited_crowd
        .store()
        .group_desc(limited_crowd.group())
        .expect("a group");
    limited.enable_gpu_driven(&gpu.device, desc).expect("GPU-driven");
    let err = limited
        .set_vat(&gpu.device, &gpu.queue, &vat, &first)
        .expect_err("past the texture limit");
    assert!(
        matches!(
            err,
            Error::Limit {
                limit: "max_texture_dimension_2d",
                ..
            }
        ),
        "{err}"
    );

    // A bake whose clips differ from the crowd's: refused at prepare, naming the clip.
    let mut clamped = vat.clone();
    clamped.clips[0].flags ^= anim_bake::CLIP_LOOPING;
    let (mut crowd, _, mut r) = tiered_crowd(&gpu, &scene, ALL_VAT);
    r.set_vat(&gpu.device, &gpu.queue, &clamped, &first).expect("fits");
    let cam = camera(Vec3::new(0.0, 2.0, 4.0), Vec3::new(0.0, 0.5, -2.0));
    crowd.step(1.0 / 30.0, &cam).expect("steps");
    let exchange = crowd.exchange().clone();
    let packet = exchange.begin_read().expect("a packet");
    let err = r.prepare_now(&gpu, &packet).expect_err("another looping");
    assert!(matches!(err, Error::Bake { clip: Some(0), .. }), "{err}");
}
