//! The renderer at device limits that are small and not multiples of 256 (lavapipe on CI): what `prepare`
//! accepts is drawn whole, and what cannot be drawn is an [`Error::Limit`] before any upload (the last prepared
//! frame stays drawable), never a wgpu validation error (which panics these tests) or a silently missing instance.

mod common;

use common::images::{self, PrepareNow};
use common::scenes::{plane_camera, pooled_packet, pooled_record, two_joint_box};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, Error};
use crowd_mesh::{Material, PackedMesh};
use glam::Vec3;
use skin_pack::PaletteEntry;

/// `slots` pooled two-joint palettes, all the identity: `slots * 2 * 48` bytes.
fn identity_pool(slots: usize) -> Vec<PaletteEntry> {
    vec![PaletteEntry::IDENTITY; slots * 2]
}

fn box_renderer(gpu: &Gpu, limits: wgpu::Limits, meshes: usize) -> CrowdRenderer {
    let mut r = images::renderer(gpu, Some(limits));
    let mesh = PackedMesh::new(&two_joint_box(0.7), 2).expect("the box packs");
    for _ in 0..meshes {
        images::add_meshes(gpu, &mut r, std::slice::from_ref(&mesh), &[Material::default()]);
    }
    r
}

fn drawn_pixels(image: &[u8]) -> usize {
    image.chunks_exact(4).filter(|p| p[3] != 0).count()
}

/// A binding limit of 60,000 bytes is not a multiple of 256. Palettes of exactly 60,000 bytes (1,250 f32 entries)
/// are accepted, so the last slot must be bound and drawn; today's main bound only 59,904 bytes and the record at
/// slot 624 drew nothing.
#[test]
fn palettes_at_an_odd_binding_limit_are_bound_whole_or_refused() {
    let Some(gpu) = common::gpu() else { return };
    let camera = plane_camera(1.0, 1.0, 1.0);
    let pool = identity_pool(625);
    assert_eq!(size_of_val(pool.as_slice()), 60_000);
    let packet = pooled_packet(2, &pool, &[pooled_record(Vec3::ZERO, [624, 624], 0.0)], 1, camera);
    let target = OffscreenTarget::new(&gpu.device, 64, 64).expect("a target");

    let mut full = box_renderer(&gpu, gpu.device.limits(), 1);
    full.prepare_now(&gpu, &packet).expect("prepares at full limits");
    let reference = drawn_pixels(&images::render(&gpu, &target, &camera, &[&full]));
    assert!(reference > 100, "the box is drawn at full limits: {reference} pixels");

    for binding in [60_000u64, 60_001, 60_003] {
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: binding,
            ..gpu.device.limits()
        };
        let mut r = box_renderer(&gpu, limits, 1);
        r.prepare_now(&gpu, &packet)
            .unwrap_or_else(|e| panic!("binding limit {binding}: the palettes fit, yet {e}"));
        let drawn = drawn_pixels(&images::render(&gpu, &target, &camera, &[&r]));
        assert_eq!(
            drawn, reference,
            "binding limit {binding}: the instance at the last slot covers {drawn} pixels, {reference} at full limits"
        );
    }

    // Below the palettes' size: refused, naming the buffer and the limit, and nothing is drawn.
    for binding in [59_999u64, 1_000] {
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: binding,
            ..gpu.device.limits()
        };
        let mut r = box_renderer(&gpu, limits, 1);
        let err = r
            .prepare_now(&gpu, &packet)
            .expect_err("palettes past the binding limit");
        assert!(
            matches!(
                err,
                Error::Limit {
                    buffer: "pooled palettes",
                    bytes: 60_000,
                    ..
                }
            ),
            "binding limit {binding}: {err}"
        );
        assert_eq!(r.stats().draws, 0);
        assert_eq!(drawn_pixels(&images::render(&gpu, &target, &camera, &[&r])), 0);
    }
}

/// `max_buffer_size` 32,768 with two meshes: 64 one-record draws need 128 draw uniforms (32,768 bytes at the
/// 256-byte stride) and fit; 65 need 33,280 bytes and are refused before anything is uploaded. Today's main
/// accepted them and wgpu then refused to create the 33,280-byte uniform buffer.
#[test]
fn draw_uniforms_never_grow_past_max_buffer_size() {
    let Some(gpu) = common::gpu() else { return };
    let limits = wgpu::Limits {
        max_buffer_size: 32_768,
        ..gpu.device.limits()
    };
    let camera = plane_camera(8.0, 8.0, 1.0);
    let pool = identity_pool(1);
    let records = |n: usize| -> Vec<_> {
        (0..n)
            .map(|i| pooled_record(Vec3::new((i % 9) as f32 - 4.0, (i / 9) as f32 - 4.0, 0.0), [0, 0], 0.0))
            .collect()
    };
    let target = OffscreenTarget::new(&gpu.device, 64, 64).expect("a target");
    let mut r = box_renderer(&gpu, limits, 2);

    let fits = pooled_packet(2, &pool, &records(64), 1, camera);
    let stats = r.prepare_now(&gpu, &fits).expect("128 draws fit");
    assert_eq!(stats.draws, 128);
    let image = images::render(&gpu, &target, &camera, &[&r]);
    assert!(drawn_pixels(&image) > 0);

    let past = pooled_packet(2, &pool, &records(65), 1, camera);
    let err = r
        .prepare_now(&gpu, &past)
        .expect_err("130 draw uniforms past max_buffer_size");
    assert!(
        matches!(
            err,
            Error::Limit {
                buffer: "draw uniforms",
                bytes: 33_280,
                limit: "max_buffer_size",
                max: 32_768
            }
        ),
        "{err}"
    );
    // A failed prepare changes nothing: the last prepared frame is what the renderer still draws.
    assert_eq!(r.stats().draws, 128, "a refused frame changes nothing");
    assert_eq!(images::render(&gpu, &target, &camera, &[&r]), image);

    // The renderer keeps working: the frame that fits prepares and draws again.
    r.prepare_now(&gpu, &fits).expect("fits again");
    assert_eq!(images::render(&gpu, &target, &camera, &[&r]), image);

    // Records past the limit are refused the same way (32,768 bytes hold 1,024 records).
    let many = pooled_packet(2, &pool, &records(1_025), usize::MAX, camera);
    let err = r.prepare_now(&gpu, &many).expect_err("records past max_buffer_size");
    assert!(matches!(err, Error::Limit { buffer: "records", .. }), "{err}");
}
