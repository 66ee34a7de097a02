//! The procedural tier on real wgpu (lavapipe on CI): a grid of generated fish at several phases, amplitudes,
//! rotations (not all upright) and scales, rendered (1) undulated on the GPU by `ProceduralRenderer` and (2)
//! undulated on the CPU by `Undulation::displace` and drawn as static meshes with amplitude 0 by the same pipeline,
//! compared pixel by pixel; a CPU reference at another time must fail the same thresholds. Also: the depth-only
//! pass writes the colour pass's depth, the shader's uniforms match their Rust twins, empty frames draw nothing,
//! and limits that are not multiples of 256 are kept to or refused with `Error::Limit` before any upload.
//!
//! Both paths use the same inputs: the phase and amplitude as the GPU decodes them from the record, the same
//! packed rotation, scale and tint; so the images differ only by the GPU's `sin`/`cos` and arithmetic order.
//!
//! Thresholds (set on lavapipe, Mesa's Vulkan on the CPU): mean absolute difference ≤ [`MEAN_LIMIT`] 8-bit
//! steps per channel, at most [`FLIPPED_LIMIT`] of the pixels differ by more than 32 steps (silhouette pixels
//! whose coverage flipped), and no channel differs by more than [`MAX_LIMIT`] unless some pixel flipped.
//! Measured on lavapipe: mean 0.0000 (a few channels one step apart), max 1, no flipped pixel. The limits leave room
//! for GPUs whose `sin` and `cos` are coarser (Vulkan allows 2⁻¹¹ absolute on `[−π, π]`, where the shader keeps
//! the angle: under a hundredth of a pixel here).
//! The CPU reference a quarter of a tail beat later measured mean 2.70, max 255, 2.0% of the pixels flipped:
//! ninety times the mean limit and forty times the flipped one.

mod common;

use common::images::{self, Difference, TestDraw};
use crowd_frame::{FrameCamera, InstanceRecord, RecordAnim};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::shaders::CROWD_PROCEDURAL;
use crowd_gpu::{Error, ProceduralFrame, ProceduralRenderer, RendererConfig};
use crowd_mesh::{ProceduralMesh, Undulation, fish_mesh};
use glam::{EulerRot, Quat, Vec3, Vec4};

const MEAN_LIMIT: f64 = 0.03;
const FLIPPED_LIMIT: f64 = 0.0005;
const MAX_LIMIT: u8 = 40;
const SIZE: (u32, u32) = (384, 256);
const COLS: usize = 4;
const ROWS: usize = 3;
/// The frame's time, in seconds.
const TIME: f64 = 7.37;

/// The fish and its wave: a tail beat of 1.6 Hz, a tail amplitude of 12% of the length.
fn fish() -> (ProceduralMesh, Undulation) {
    let mesh = fish_mesh(1.0).expect("a fish");
    let undulation = Undulation {
        amplitude: 0.12,
        frequency: 1.6,
        ..Undulation::for_mesh(&mesh)
    };
    (mesh, undulation)
}

/// The rotation of a fish swimming along world +X with its back to the camera: mesh +Z (the head) to world +X,
/// mesh +Y (the back) to world +Z, so mesh +X (the wave's direction) to world +Y.
fn swimming_right() -> Quat {
    Quat::from_mat3(&glam::Mat3::from_cols(Vec3::Y, Vec3::Z, Vec3::X))
}

/// The records of the grid: fish swimming along world +X with their backs to the camera (+Z), rolled and yawed
/// differently, at different phases, amplitudes, scales and tints.
fn grid_records() -> Vec<InstanceRecord> {
    let base = swimming_right();
    (0..ROWS * COLS)
        .map(|i| {
            let (row, col) = (i / COLS, i % COLS);
            let position = Vec3::new(
                (col as f32 - (COLS - 1) as f32 * 0.5) * 1.35,
                ((ROWS - 1) as f32 * 0.5 - row as f32) * 0.95,
                0.0,
            );
            let k = i as f32;
            // Roll about the body axis up to 80°, yaw in the picture's plane, pitch towards or away from the camera.
            let turn = Quat::from_euler(EulerRot::ZYX, (k * 0.61).sin() * 0.5, (k * 1.3).cos() * 0.45, 0.0);
            let roll = Quat::from_rotation_z((k * 0.37).fract() * 1.4);
            let rotation = turn * base * roll;
            let scale = 0.75 + 0.3 * (k * 0.77).fract();
            let anim = RecordAnim::Procedural {
                phase: k * 0.29 - 0.6,
                amplitude: [1.0, 0.7, 0.45, 0.0][i % 4],
            };
            let tint = Vec4::new(1.0, 1.0 - 0.1 * (i % 3) as f32, 1.0 - 0.15 * (i % 2) as f32, 1.0);
            InstanceRecord::new(position, rotation, scale, anim, tint).expect("a record")
        })
        .collect()
}

fn camera() -> FrameCamera {
    common::scenes::plane_camera(COLS as f32 * 1.35, ROWS as f32 * 0.95, SIZE.0 as f32 / SIZE.1 as f32)
}

fn renderer(
    gpu: &Gpu,
    mesh: &ProceduralMesh,
    undulation: Undulation,
    limits: Option<wgpu::Limits>,
) -> ProceduralRenderer {
    let config = RendererConfig {
        limits: limits.unwrap_or_else(|| gpu.device.limits()),
        ..gpu.offscreen_config()
    };
    ProceduralRenderer::new(&gpu.device, &config, mesh, undulation).expect("a procedural renderer")
}

fn frame(records: &[InstanceRecord], time: f64) -> ProceduralFrame<'_> {
    ProceduralFrame {
        camera: camera(),
        depth_camera: None,
        time,
        records,
    }
}

/// One renderer per record, each drawing the fish undulated on the CPU at `time` for that record's decoded phase
/// and amplitude, placed by the same record with amplitude 0.
fn cpu_reference(gpu: &Gpu, records: &[InstanceRecord], time: f64) -> Vec<ProceduralRenderer> {
    let (mesh, undulation) = fish();
    records
        .iter()
        .map(|r| {
            let d = r.decode();
            let displaced = mesh
                .displaced(&undulation, d.phase, d.amplitude, time)
                .expect("the displaced fish is valid");
            let still = InstanceRecord { anim: 0, ..*r };
            assert_eq!(still.decode().amplitude, 0.0);
            let mut cpu = renderer(gpu, &displaced, undulation, None);
            cpu.prepare(&gpu.device, &gpu.queue, &frame(std::slice::from_ref(&still), time))
                .expect("prepares");
            cpu
        })
        .collect()
}

fn within(name: &str, d: Difference) -> bool {
    eprintln!("{name}: mean {:.4}, max {}, flipped {:.5}", d.mean, d.max, d.flipped);
    d.mean <= MEAN_LIMIT && d.flipped <= FLIPPED_LIMIT && (d.max <= MAX_LIMIT || d.flipped > 0.0)
}

fn drawn_pixels(image: &[u8]) -> usize {
    image.chunks_exact(4).filter(|p| p[3] != 0).count()
}

#[test]
fn gpu_undulation_matches_the_cpu_reference() {
    let Some(gpu) = common::gpu() else { return };
    let (mesh, undulation) = fish();
    let records = grid_records();
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");

    let mut on_gpu = renderer(&gpu, &mesh, undulation, None);
    let stats = on_gpu
        .prepare(&gpu.device, &gpu.queue, &frame(&records, TIME))
        .expect("prepares");
    assert_eq!((stats.draws, stats.instances), (1, records.len() as u32));
    assert_eq!(stats.triangles, (mesh.triangle_count() * records.len()) as u64);
    let gpu_image = images::render(&gpu, &target, &camera(), &[&on_gpu]);
    images::write_png(
        &images::reference_dir().join("procedural_fish-actual.png"),
        SIZE,
        &gpu_image,
    );
    let covered = drawn_pixels(&gpu_image);
    assert!(
        covered > (SIZE.0 * SIZE.1 / 25) as usize,
        "the fish cover only {covered} pixels"
    );

    let reference = cpu_reference(&gpu, &records, TIME);
    let cpu_image = images::render(
        &gpu,
        &target,
        &camera(),
        &reference.iter().map(|r| r as &dyn TestDraw).collect::<Vec<_>>(),
    );
    let d = images::difference(&gpu_image, &cpu_image);
    if !within("GPU vs CPU undulation", d) {
        images::write_failure("procedural_fish", SIZE, &gpu_image, &cpu_image);
        panic!("the GPU undulation differs from the CPU reference: {d:?}; see tests/reference/procedural_fish-*.png");
    }

    // The comparison can fail: the CPU reference a quarter of a tail beat later is far past the thresholds.
    let later = TIME + 0.25 / f64::from(undulation.frequency);
    let late = cpu_reference(&gpu, &records, later);
    let late_image = images::render(
        &gpu,
        &target,
        &camera(),
        &late.iter().map(|r| r as &dyn TestDraw).collect::<Vec<_>>(),
    );
    let d = images::difference(&gpu_image, &late_image);
    assert!(
        !within("GPU vs CPU a quarter beat later", d),
        "the comparison cannot tell a quarter of a tail beat apart: {d:?}"
    );
    assert!(d.mean > 10.0 * MEAN_LIMIT && d.flipped > 10.0 * FLIPPED_LIMIT, "{d:?}");
}

/// A depth-only pass of the same frame writes the depth the colour pass draws at, so a colour pass over it with
/// the `Less` test lets (almost) no fragment through; a depth camera elsewhere draws elsewhere.
#[test]
fn the_depth_only_pass_writes_the_colour_pass_depth() {
    let Some(gpu) = common::gpu() else { return };
    let (mesh, undulation) = fish();
    let records = grid_records();
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let mut r = renderer(&gpu, &mesh, undulation, None);
    r.prepare(&gpu.device, &gpu.queue, &frame(&records, TIME))
        .expect("prepares");
    let colour = images::render(&gpu, &target, &camera(), &[&r]);
    let covered = drawn_pixels(&colour);
    assert!(
        covered > (SIZE.0 * SIZE.1 / 25) as usize,
        "the fish cover only {covered} pixels"
    );
    let over = images::depth_then_colour(&gpu, &target, |pass| r.draw_depth_only(pass), |pass| r.draw(pass));
    let passed = drawn_pixels(&over);
    assert!(
        passed <= 20,
        "{passed} colour fragments passed the depth-only pass's depth"
    );

    // With the depth camera looking away, the depth-only pass covers nothing and every fragment passes.
    let away = FrameCamera::perspective(Vec3::Z * 30.0, Vec3::Z * 60.0, Vec3::Y, 0.5, 1.5, 1.0, 100.0);
    r.prepare(
        &gpu.device,
        &gpu.queue,
        &ProceduralFrame {
            depth_camera: Some(away),
            ..frame(&records, TIME)
        },
    )
    .expect("prepares");
    let over = images::depth_then_colour(&gpu, &target, |pass| r.draw_depth_only(pass), |pass| r.draw(pass));
    assert_eq!(over, colour, "a depth camera looking away hides nothing");
}

/// Empty frames draw nothing; limits that are not multiples of 256 hold exactly the records they have room for;
/// one more record is an `Error::Limit` naming the buffer, the bytes (the count times 32) and the limit, and the
/// renderer draws nothing until a frame fits again.
#[test]
fn limits_are_kept_or_refused_before_any_upload() {
    let Some(gpu) = common::gpu() else { return };
    let (mesh, undulation) = fish();
    let target = OffscreenTarget::new(&gpu.device, 64, 64).expect("a target");
    let many = |n: usize| -> Vec<InstanceRecord> {
        (0..n)
            .map(|i| {
                let anim = RecordAnim::Procedural {
                    phase: i as f32 * 0.01,
                    amplitude: 1.0,
                };
                InstanceRecord::new(Vec3::ZERO, swimming_right(), 1.0, anim, Vec4::ONE).expect("a record")
            })
            .collect()
    };

    let mut r = renderer(&gpu, &mesh, undulation, None);
    let stats = r
        .prepare(&gpu.device, &gpu.queue, &frame(&[], TIME))
        .expect("an empty frame prepares");
    assert_eq!((stats.draws, stats.instances), (0, 0));
    assert_eq!(drawn_pixels(&images::render(&gpu, &target, &camera(), &[&r])), 0);

    // 60,003 bytes of binding hold 1,875 records (60,000 bytes).
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 60_003,
        ..gpu.device.limits()
    };
    let mut r = renderer(&gpu, &mesh, undulation, Some(limits));
    assert_eq!(r.max_instances(), 1_875);
    let fits = many(1_875);
    r.prepare(&gpu.device, &gpu.queue, &frame(&fits, TIME))
        .expect("1,875 records fit");
    assert!(drawn_pixels(&images::render(&gpu, &target, &camera(), &[&r])) > 0);
    let err = r
        .prepare(&gpu.device, &gpu.queue, &frame(&many(1_876), TIME))
        .expect_err("1,876 records are past the binding");
    match &err {
        Error::Limit {
            buffer: "procedural records",
            bytes: 60_032,
            limit,
            max: 60_003,
        } if limit.starts_with("max_storage_buffer_binding_size") => {}
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("60032 bytes"), "{err}");
    assert_eq!(r.stats().draws, 0, "a refused frame draws nothing");
    assert_eq!(drawn_pixels(&images::render(&gpu, &target, &camera(), &[&r])), 0);
    r.prepare(&gpu.device, &gpu.queue, &frame(&fits, TIME))
        .expect("fits again");
    assert!(drawn_pixels(&images::render(&gpu, &target, &camera(), &[&r])) > 0);

    // A max_buffer_size of 40,003 bytes holds 1,250 records in a 40,000-byte buffer; 1,251 need 40,192.
    let limits = wgpu::Limits {
        max_buffer_size: 40_003,
        ..gpu.device.limits()
    };
    let mut r = renderer(&gpu, &mesh, undulation, Some(limits));
    assert_eq!(r.max_instances(), 1_250);
    r.prepare(&gpu.device, &gpu.queue, &frame(&many(1_250), TIME))
        .expect("1,250 records fit");
    assert!(drawn_pixels(&images::render(&gpu, &target, &camera(), &[&r])) > 0);
    let err = r
        .prepare(&gpu.device, &gpu.queue, &frame(&many(1_251), TIME))
        .expect_err("1,251 records are past max_buffer_size");
    assert!(
        matches!(
            err,
            Error::Limit {
                buffer: "procedural records",
                bytes: 40_192,
                limit: "max_buffer_size",
                max: 40_003
            }
        ),
        "{err}"
    );

    // A mesh past max_buffer_size is refused where it is uploaded, naming it.
    let limits = wgpu::Limits {
        max_buffer_size: 4_000,
        ..gpu.device.limits()
    };
    let config = RendererConfig {
        limits,
        ..gpu.offscreen_config()
    };
    let err = ProceduralRenderer::new(&gpu.device, &config, &mesh, undulation).expect_err("the fish is too big");
    assert!(
        err.to_string()
            .starts_with("procedural mesh 'fish': its vertex buffer of 7784 bytes"),
        "{err}"
    );
    // So is a broken wave, and a time that is not finite.
    let flat = Undulation {
        length: 0.0,
        ..undulation
    };
    let err = ProceduralRenderer::new(&gpu.device, &gpu.offscreen_config(), &mesh, flat).expect_err("no length");
    assert!(err.to_string().starts_with("undulation: length is 0"), "{err}");
    let mut r = renderer(&gpu, &mesh, undulation, None);
    let err = r
        .prepare(&gpu.device, &gpu.queue, &frame(&[], f64::NAN))
        .expect_err("NaN seconds");
    assert!(matches!(err, Error::Clock { now } if now.is_nan()), "{err}");
}

/// The shader's structs match their Rust twins, and its entry points exist.
#[test]
fn the_procedural_uniforms_match_their_rust_twins() {
    use std::mem::offset_of;
    let module = common::module(&CROWD_PROCEDURAL);
    for entry in ["vs_main", "vs_depth", "fs_main"] {
        assert!(
            module.entry_points.iter().any(|e| e.name == entry),
            "crowd_procedural.wgsl lacks {entry}"
        );
    }
    let (span, members) = common::struct_layout(&module, "WaveUniform");
    assert_eq!(span as usize, size_of::<crowd_gpu::WaveUniform>());
    let want = [
        ("head_z", offset_of!(crowd_gpu::WaveUniform, head_z)),
        ("inv_length", offset_of!(crowd_gpu::WaveUniform, inv_length)),
        ("amplitude", offset_of!(crowd_gpu::WaveUniform, amplitude)),
        ("body_waves", offset_of!(crowd_gpu::WaveUniform, body_waves)),
        ("head", offset_of!(crowd_gpu::WaveUniform, head)),
        ("cycle", offset_of!(crowd_gpu::WaveUniform, cycle)),
        ("pad0", offset_of!(crowd_gpu::WaveUniform, pad)),
    ];
    for (m, (name, offset)) in members.iter().zip(want) {
        assert_eq!((m.0.as_deref(), m.1 as usize), (Some(name), offset));
    }
    let (span, members) = common::struct_layout(&module, "FrameUniform");
    assert_eq!(span as usize, size_of::<crowd_gpu::FrameUniform>());
    let offsets: Vec<u32> = members.iter().map(|m| m.1).collect();
    let skin = common::skin_module(&crowd_gpu::shaders::PALETTE_FETCH_F32);
    let (_, skin_members) = common::struct_layout(&skin, "FrameUniform");
    assert_eq!(
        offsets,
        skin_members.iter().map(|m| m.1).collect::<Vec<_>>(),
        "the procedural and skinned FrameUniforms differ"
    );
    // The record's procedural decoders are declared where the record is.
    let record = common::module(&crowd_gpu::shaders::INSTANCE_RECORD);
    for f in ["record_phase", "record_amplitude"] {
        assert!(
            record.functions.iter().any(|(_, g)| g.name.as_deref() == Some(f)),
            "instance_record.wgsl lacks {f}"
        );
    }
}
