//! The renderer on real wgpu (lavapipe on CI): the instance-id view, chunking at a forced small binding limit,
//! the draw count against the instance count, an empty frame, and bad input that must give errors (an uncaptured
//! wgpu validation error panics the test).

mod common;

use common::images::{self, PrepareNow};
use common::scenes::{grid, plane_camera, pooled_packet, pooled_record, two_joint_box};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, DebugView, ViewDesc, instance_id_color};
use crowd_mesh::{Material, PackedMesh};
use glam::{Affine3A, Vec3};
use skin_pack::PaletteEntry;

const SIZE: (u32, u32) = (320, 240);

/// Two slots of a two-joint skin: slot 0 the identity, slot 1 lifts joint 1 by `lift`.
fn pool(lift: f32) -> Vec<PaletteEntry> {
    let up = Affine3A::from_translation(Vec3::Y * lift);
    [Affine3A::IDENTITY, Affine3A::IDENTITY, Affine3A::IDENTITY, up]
        .iter()
        .map(|m| skin_pack::PaletteFormat::encode(m, glam::Vec3A::ZERO))
        .collect()
}

fn box_renderer(gpu: &Gpu, limits: Option<wgpu::Limits>) -> CrowdRenderer {
    let mut r = images::renderer(gpu, limits);
    let mesh = PackedMesh::new(&two_joint_box(0.7), 2).expect("the box packs");
    images::add_meshes(gpu, &mut r, &[mesh], &[Material::default()]);
    r
}

/// `cols × rows` pooled boxes, half-way between the two slots, in draws of `per_draw`.
fn box_grid(cols: usize, rows: usize, per_draw: usize) -> crowd_frame::Packet {
    let records: Vec<_> = grid(cols, rows, 1.0)
        .into_iter()
        .map(|p| pooled_record(p, [0, 1], 0.5))
        .collect();
    let camera = plane_camera(cols as f32, rows as f32, SIZE.0 as f32 / SIZE.1 as f32);
    pooled_packet(2, &pool(0.2), &records, per_draw, camera)
}

/// Limits with `max_storage_buffer_binding_size` forced to `bytes`.
fn small_binding(gpu: &Gpu, bytes: u64) -> wgpu::Limits {
    wgpu::Limits {
        max_storage_buffer_binding_size: bytes,
        ..gpu.device.limits()
    }
}

#[test]
fn every_instance_carries_its_own_id_colour_across_chunks() {
    let Some(gpu) = common::gpu() else { return };
    let (cols, rows) = (16, 12);
    let packet = box_grid(cols, rows, 50);
    // 1 KiB windows: 32 records per chunk, so the 192 boxes span 6 chunks and draws cross chunk boundaries.
    let mut r = box_renderer(&gpu, Some(small_binding(&gpu, 1024)));
    r.set_debug_view(DebugView::InstanceId);
    let stats = r.prepare_now(&gpu, &packet).expect("prepares");
    assert_eq!(r.records_per_chunk(), 32);
    assert_eq!(stats.chunks, 6);
    assert!(stats.draws > 4, "draws crossing chunk boundaries are split: {stats:?}");
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let image = images::render(&gpu, &target, packet.camera(), &[&r]);
    // Each box is drawn in its cell; the cell of instance i is at column i % cols, row i / cols.
    let mut seen = vec![0usize; cols * rows];
    for (p, px) in image.chunks_exact(4).enumerate() {
        if px[3] == 0 {
            continue;
        }
        let (x, y) = ((p as u32 % SIZE.0) as f32 + 0.5, (p as u32 / SIZE.0) as f32 + 0.5);
        // The camera frames the grid of unit cells with a 5% margin: map the pixel back to its cell.
        let margin = 1.05;
        let cx = ((x / SIZE.0 as f32 - 0.5) * cols as f32 * margin + cols as f32 * 0.5).floor() as usize;
        let cy = ((y / SIZE.1 as f32 - 0.5) * rows as f32 * margin + rows as f32 * 0.5).floor() as usize;
        let i = cy.min(rows - 1) * cols + cx.min(cols - 1);
        let want = instance_id_color(i as u32);
        let near = px[..3].iter().zip(want).all(|(a, b)| a.abs_diff(b) <= 4);
        assert!(
            near,
            "pixel ({x}, {y}) in the cell of instance {i} is {px:?}, not its colour {want:?}"
        );
        seen[i] += 1;
    }
    if let Some(i) = seen.iter().position(|&n| n < 20) {
        panic!("instance {i} covers only {} pixels", seen[i]);
    }
}

#[test]
fn a_small_binding_limit_gives_chunks_and_the_same_image() {
    let Some(gpu) = common::gpu() else { return };
    let packet = box_grid(20, 15, 1000);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let mut whole = box_renderer(&gpu, None);
    let one = whole.prepare_now(&gpu, &packet).expect("prepares");
    let reference = images::render(&gpu, &target, packet.camera(), &[&whole]);
    // 4 KiB: 128 records per chunk, 300 records in 3 chunks.
    let mut chunked = box_renderer(&gpu, Some(small_binding(&gpu, 4096)));
    let three = chunked.prepare_now(&gpu, &packet).expect("prepares");
    let image = images::render(&gpu, &target, packet.camera(), &[&chunked]);
    assert_eq!((one.chunks, one.draws), (1, 1));
    assert_eq!((three.chunks, three.draws), (3, 3));
    assert_eq!(one.instances, three.instances);
    let d = images::difference(&image, &reference);
    assert!(d.max == 0, "chunked and whole images differ: {d:?}");
    assert!(
        reference.chunks_exact(4).filter(|p| p[3] == 255).count() > 10_000,
        "the boxes are drawn"
    );
}

#[test]
fn the_draw_count_does_not_depend_on_the_instance_count() {
    let Some(gpu) = common::gpu() else { return };
    let target = OffscreenTarget::new(&gpu.device, 64, 64).expect("a target");
    let mut counts = Vec::new();
    for (cols, rows) in [(40, 25), (400, 250)] {
        let packet = box_grid(cols, rows, usize::MAX);
        let mut r = box_renderer(&gpu, None);
        let stats = r.prepare_now(&gpu, &packet).expect("prepares");
        assert_eq!(stats.instances as usize, cols * rows);
        assert_eq!(stats.triangles, 12 * (cols * rows) as u64);
        let image = images::render(&gpu, &target, packet.camera(), &[&r]);
        assert!(
            image.chunks_exact(4).any(|p| p[3] == 255),
            "{cols} x {rows}: nothing drawn"
        );
        counts.push(stats.draws);
    }
    assert_eq!(counts[0], counts[1], "draws for 1,000 and 100,000 instances");
    assert_eq!(counts[0], 1);
}

#[test]
fn an_empty_frame_is_valid_and_draws_nothing() {
    let Some(gpu) = common::gpu() else { return };
    let camera = plane_camera(1.0, 1.0, 1.0);
    let packet = pooled_packet(2, &pool(0.0), &[], 1, camera);
    let mut r = box_renderer(&gpu, None);
    let stats = r.prepare_now(&gpu, &packet).expect("an empty packet prepares");
    assert_eq!((stats.draws, stats.instances), (0, 0));
    let target = OffscreenTarget::new(&gpu.device, 32, 32).expect("a target");
    let image = images::render(&gpu, &target, packet.camera(), &[&r]);
    assert!(image.iter().all(|&b| b == 0), "an empty frame leaves the target clear");
}

#[test]
fn bad_input_gets_errors_not_device_errors() {
    let Some(gpu) = common::gpu() else { return };
    let camera = plane_camera(1.0, 1.0, 1.0);
    let record = pooled_record(Vec3::ZERO, [0, 1], 0.5);

    // A mesh reading joint 1 against one-entry palettes.
    let one_joint = [PaletteEntry::IDENTITY; 2];
    let packet = pooled_packet(1, &one_joint, &[record], 1, camera);
    let mut r = box_renderer(&gpu, None);
    let err = r.prepare_now(&gpu, &packet).expect_err("more joints than the palette");
    assert!(
        err.to_string().contains("joint 1") && err.to_string().contains("box"),
        "{err}"
    );
    assert_eq!(
        r.stats().draws,
        0,
        "a failed prepare changes nothing (nothing was prepared)"
    );

    // A packet in another palette format than the renderer's does not compile: the format is the renderer's
    // type parameter (`CrowdRenderer<F>` prepares `Packet<F>` only).

    // Pooled palettes past the binding limit (they are bound whole).
    let mut small = box_renderer(&gpu, Some(small_binding(&gpu, 1024)));
    let big = vec![PaletteEntry::IDENTITY; 2 * 20];
    let packet = pooled_packet(2, &big, &[record], 1, camera);
    let err = small.prepare_now(&gpu, &packet).expect_err("palettes past the limit");
    assert!(err.to_string().contains("max_storage_buffer_binding_size"), "{err}");

    // A draw at a LOD the mesh lacks.
    let mut one_lod = images::renderer(&gpu, None);
    let mesh = PackedMesh::with_lods(&two_joint_box(0.5), 2, &[1.0]).expect("packs");
    images::add_meshes(&gpu, &mut one_lod, &[mesh], &[Material::default()]);
    let mut draw = *pooled_packet(2, &pool(0.0), &[record], 1, camera)
        .draws()
        .first()
        .expect("a draw");
    draw.lod = 1;
    let packet = crowd_frame::Packet::from_parts(&crowd_frame::PacketParts {
        time: 0.0,
        camera,
        skin_joint_count: 2,
        pool_palettes: &pool(0.0),
        unique_palettes: &[],
        records: &[record],
        draws: &[draw],
    })
    .expect("a packet");
    let err = one_lod.prepare_now(&gpu, &packet).expect_err("a missing LOD");
    assert!(err.to_string().contains("LOD 1"), "{err}");

    // Records whose slot or palette lies past the buffers, or with NaN: the packet refuses them where it is built.
    let past = pooled_record(Vec3::ZERO, [0, 2], 0.5);
    let parts = |records: &[crowd_frame::InstanceRecord]| {
        let draws = [crowd_frame::PacketDraw {
            instance_count: records.len() as u32,
            ..draw
        }];
        crowd_frame::Packet::<PaletteEntry>::from_parts(&crowd_frame::PacketParts {
            time: 0.0,
            camera,
            skin_joint_count: 2,
            pool_palettes: &pool(0.0),
            unique_palettes: &[],
            records,
            draws: &draws,
        })
        .map(|_| ())
    };
    let err = parts(&[past]).expect_err("a slot past the pool");
    assert!(err.to_string().contains("slot 2"), "{err}");
    let mut nan = record;
    nan.position[0] = f32::NAN;
    let err = parts(&[nan]).expect_err("NaN in a record");
    assert!(err.to_string().contains("not finite"), "{err}");
    let err = crowd_mesh::posed::unique_packet::<PaletteEntry>(
        2,
        &[Affine3A::IDENTITY; 2],
        &[images::unique_record(Vec3::ZERO, 1)],
        camera,
    )
    .expect_err("a palette past the unique palettes");
    assert!(err.to_string().contains("1..3"), "{err}");

    // A texture that does not decode, and one whose mip chain is broken.
    let err = crowd_mesh::TextureData::decode("broken.png", b"\x89PNG\r\n\x1a\nnot a png").expect_err("bad bytes");
    assert!(err.to_string().contains("broken.png"), "{err}");
    let mut texture = crowd_mesh::TextureData::from_rgba8("cut", 4, 4, vec![255; 64]);
    texture.mips[1].truncate(3);
    let material = Material {
        base_color_texture: Some(texture),
        ..Material::default()
    };
    let mesh = PackedMesh::new(&two_joint_box(0.5), 2).expect("packs");
    let err = r
        .add_mesh(&gpu.device, &gpu.queue, &mesh, &material)
        .expect_err("a broken mip chain");
    assert!(
        err.to_string().contains("cut") && err.to_string().contains("mip level 1"),
        "{err}"
    );
}

#[test]
fn the_depth_only_pass_writes_the_depth_of_the_colour_pass() {
    let Some(gpu) = common::gpu() else { return };
    let packet = box_grid(6, 4, 5);
    let mut r = box_renderer(&gpu, None);
    r.prepare_now(&gpu, &packet).expect("prepares");
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let plain = images::render(&gpu, &target, packet.camera(), &[&r]);
    assert!(
        plain.chunks_exact(4).filter(|p| p[3] == 255).count() > 10_000,
        "the boxes are drawn"
    );
    // A depth-only pass, then the colour pass over its depth: with the `Less` test, no fragment of the colour pass
    // passes where the depth-only pass skinned the same surface to the same depth.
    let mut view = r.create_view(&gpu.device).expect("a view");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let prepared = r
        .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(*packet.camera()))
        .expect("the view prepares");
    gpu.queue.submit([encoder.finish()]);
    let over = images::depth_then_colour(
        &gpu,
        &target,
        |pass| r.render_view_depth_only(&prepared, pass),
        |pass| r.render_view(&prepared, pass),
    );
    let drawn = over.chunks_exact(4).filter(|p| p[3] != 0).count();
    assert!(
        drawn <= 20,
        "{drawn} colour fragments passed the depth-only pass's depth"
    );
}
