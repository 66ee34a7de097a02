//! A failed `prepare` changes nothing (lavapipe on CI): for each way a GPU-driven `prepare` can fail (a bake that
//! does not match the packet, a packet without a pose pool and no bake, resident slots past the binding limit, changes
//! that do not build on what the renderer holds, a draw at a LOD the meshes lack), a renderer first prepares a packet
//! that needs larger buffers than it has and fails: it still draws the last good packet's image, bit for bit; then
//! it prepares the next good packet of its own crowd: its image equals a fresh renderer's for that packet. A renderer
//! that grew its buffers or planned its draws before failing would draw stale palettes here.

mod common;

use std::sync::Arc;

use common::driven::{Scene, camera, renderer, scene};
use common::images::{self, PrepareNow};
use crowd_cull::{ClusterSettings, Handle, Tier};
use crowd_frame::{Character, ClipId, CrowdFrame, FrameSettings, Packet, PacketDraw, PacketParts, RecordKind, Spawn};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, Error};
use glam::Vec3;

/// The crowd whose frames the renderer draws: a few unique instances near the camera, the rest pooled.
fn own_settings(scene: &Scene) -> FrameSettings {
    FrameSettings {
        gpu_driven: true,
        tier_thresholds: [0.3, 0.004, 0.001],
        max_unique: 4,
        ..scene.settings.clone()
    }
}

/// A crowd of `character` with `settings`, spawned from `scene` with clip ids folded into the character's clips.
fn crowd(scene: &Scene, character: Arc<Character>, settings: FrameSettings, spread: f32) -> CrowdFrame {
    let clips = character.clips().len() as u16;
    let mut crowd = CrowdFrame::new(character, settings).expect("a crowd");
    let spawns: Vec<Spawn> = scene
        .spawns
        .iter()
        .map(|s| Spawn {
            position: s.position * spread,
            clip: ClipId(s.clip.0 % clips),
            ..*s
        })
        .collect();
    let mut handles = vec![Handle::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles).expect("adds");
    crowd
}

/// The first packet of a crowd that needs larger buffers than the own crowd: 32 unique instances near the camera.
fn big_first_packet(scene: &Scene, character: Arc<Character>, settings: FrameSettings, spread: f32) -> Packet {
    let settings = FrameSettings {
        max_unique: 32,
        tier_thresholds: [0.01, 0.004, 0.001],
        ..settings
    };
    let mut big = crowd(scene, character, settings, spread);
    let cam = camera(Vec3::new(0.0, 1.5, 3.0), Vec3::new(0.0, 0.5, -6.0));
    big.step(1.0 / 30.0, &cam).expect("steps");
    let packet = big.exchange().begin_read().expect("a packet").clone();
    assert!(
        packet.stats().unique >= 16,
        "the failing packet has many unique palettes"
    );
    packet
}

/// Runs the own crowd for 3 frames in `r`, lets `r` fail on `bad` with an error `check` accepts and checks that `r`
/// still draws the third frame's image, then makes both `r` and a fresh renderer from `fresh` prepare a full resend
/// of the own crowd, and compares their images.
fn fails_then_draws_as_fresh(
    gpu: &Gpu,
    mut own: CrowdFrame,
    mut r: CrowdRenderer,
    fresh: impl Fn(&CrowdFrame) -> CrowdRenderer,
    bad: &Packet,
    check: impl Fn(&Error) -> bool,
    what: &str,
) {
    let cam = camera(Vec3::new(0.5, 2.0, 4.0), Vec3::new(0.0, 0.5, -8.0));
    let target = OffscreenTarget::new(&gpu.device, common::driven::SIZE.0, common::driven::SIZE.1).expect("a target");
    let exchange = own.exchange().clone();
    for _ in 0..3 {
        own.step(1.0 / 30.0, &cam).expect("steps");
        r.prepare_now(gpu, &exchange.begin_read().expect("a packet"))
            .expect("prepares");
    }
    let before = r.stats();
    let last = common::driven::view_image(gpu, &r, &cam, &target);
    let err = r.prepare_now(gpu, bad).expect_err(what);
    assert!(check(&err), "{what}: {err}");
    assert_eq!(r.stats(), before, "{what}: a failed prepare changes nothing");
    let kept = common::driven::view_image(gpu, &r, &cam, &target);
    if kept != last {
        images::write_failure(
            &format!("prepare_failure_kept_{what}"),
            common::driven::SIZE,
            &kept,
            &last,
        );
        panic!("{what}: after a failed prepare the renderer no longer draws the last good packet");
    }
    own.resend_all();
    own.step(1.0 / 30.0, &cam).expect("steps");
    let packet = exchange.begin_read().expect("a packet");
    assert!(packet.resident().full && packet.stats().unique > 0);
    r.prepare_now(gpu, &packet).expect("the good packet prepares");
    let mut clean = fresh(&own);
    clean.prepare_now(gpu, &packet).expect("the fresh renderer prepares");
    drop(packet);
    let (after, reference) = (
        common::driven::view_image(gpu, &r, &cam, &target),
        common::driven::view_image(gpu, &clean, &cam, &target),
    );
    assert!(
        reference.chunks_exact(4).filter(|p| p[3] != 0).count() > 5_000,
        "{what}: the crowd is drawn"
    );
    if after != reference {
        images::write_failure(
            &format!("prepare_failure_{what}"),
            common::driven::SIZE,
            &after,
            &reference,
        );
        panic!("{what}: after a failed prepare the renderer draws another image than a fresh one");
    }
}

/// A bone-animation bake of the default character, f32 entries.
fn bat() -> anim_bake::BatData {
    let options = anim_bake::BakeOptions {
        parts: anim_bake::Parts { bat: true, vat: false },
        bat_format: Some(anim_bake::BatFormat::F32),
        ..anim_bake::BakeOptions::default()
    };
    let (bake, _) = anim_bake::bake(&images::default_character(), &options, &|_| {}).expect("bakes");
    bake.bat.expect("a BAT")
}

#[test]
fn a_failed_prepare_changes_nothing() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(12, 8);
    let settings = own_settings(&scene);
    let own = || crowd(&scene, scene.character.clone(), settings.clone(), 1.0);

    // 1. A bake that does not match the packet: the packet's crowd has one clip fewer than the bake.
    let bat = bat();
    let c = &scene.character;
    let n = c.clips().len() - 1;
    let fewer = Arc::new(
        Character::new(
            c.skeleton().clone(),
            c.clips()[..n].to_vec(),
            c.slots()[..n].to_vec(),
            c.clip_bounds()[..n].to_vec(),
            c.lod_count(),
        )
        .expect("a character of fewer clips"),
    );
    let baked = |crowd: &CrowdFrame| {
        let mut r = renderer(&gpu, &scene, crowd, true);
        r.set_bat(&gpu.device, &bat).expect("the bake fits");
        r
    };
    let a = own();
    let r = baked(&a);
    let bad = big_first_packet(&scene, fewer, settings.clone(), 1.0);
    fails_then_draws_as_fresh(&gpu, a, r, baked, &bad, |e| matches!(e, Error::Bake { .. }), "bake");

    // 2. A packet without a pose pool, and no bake.
    let plain = |crowd: &CrowdFrame| renderer(&gpu, &scene, crowd, true);
    let no_pool = FrameSettings {
        pose_pool: false,
        ..settings.clone()
    };
    let bad = big_first_packet(&scene, scene.character.clone(), no_pool, 1.0);
    let a = own();
    let r = plain(&a);
    fails_then_draws_as_fresh(
        &gpu,
        a,
        r,
        plain,
        &bad,
        |e| matches!(e, Error::Bake { clip: None, .. }),
        "pool",
    );

    // 3. Resident slots past the binding limit. A character with a small pool (2 slots a clip, 1 crossfade bucket),
    //    so that 128 KiB holds its palettes and the own crowd's slots, but not the 2,880 slots of 720 instances
    //    each in a cluster of its own (clusters of 4).
    let small = Arc::new(
        Character::new(
            c.skeleton().clone(),
            c.clips().to_vec(),
            vec![2; c.clips().len()],
            c.clip_bounds().to_vec(),
            c.lod_count(),
        )
        .expect("a character with a small pool"),
    );
    let small_settings = FrameSettings {
        pool: anim_pose::PosePoolOptions {
            max_crossfade_buckets: 1,
            ..anim_pose::PosePoolOptions::default()
        },
        ..settings.clone()
    };
    let limits = wgpu::Limits {
        max_storage_buffer_binding_size: 128 << 10,
        ..gpu.device.limits()
    };
    let limited = |crowd: &CrowdFrame| {
        let mut r: CrowdRenderer = images::renderer(&gpu, Some(limits.clone()));
        let materials = vec![crowd_mesh::Material::default(); scene.meshes.len()];
        images::add_meshes(&gpu, &mut r, &scene.meshes, &materials);
        r.enable_gpu_driven(&gpu.device, crowd.store().group_desc(crowd.group()).expect("the group"))
            .expect("GPU-driven");
        r
    };
    let sparse = FrameSettings {
        cluster: ClusterSettings {
            radius: 0.5,
            capacity: 4,
        },
        ..small_settings.clone()
    };
    let wide = common::driven::scene(30, 24);
    let bad = big_first_packet(&wide, small.clone(), sparse, 1.0);
    assert!(
        u64::from(bad.resident().slot_count) * 48 > 128 << 10,
        "the sparse crowd's slots pass the limit"
    );
    let a = crowd(&scene, small, small_settings, 1.0);
    let r = limited(&a);
    fails_then_draws_as_fresh(
        &gpu,
        a,
        r,
        limited,
        &bad,
        |e| {
            matches!(
                e,
                Error::Limit {
                    buffer: "resident instances",
                    ..
                }
            )
        },
        "limit",
    );

    // 4. Changes that build on a frame the renderer never saw: the second packet of another crowd.
    let mut other = crowd(&scene, scene.character.clone(), settings.clone(), 1.0);
    let cam = camera(Vec3::new(0.0, 1.5, 3.0), Vec3::new(0.0, 0.5, -6.0));
    other.step(1.0 / 30.0, &cam).expect("steps");
    drop(other.exchange().begin_read().expect("a packet"));
    other.step(1.0 / 30.0, &cam).expect("steps");
    let bad = other.exchange().begin_read().expect("a packet").clone();
    let a = own();
    let r = plain(&a);
    fails_then_draws_as_fresh(
        &gpu,
        a,
        r,
        plain,
        &bad,
        |e| matches!(e, Error::OutOfStep { .. }),
        "step",
    );

    // 5. A draw at a LOD the meshes lack.
    let joints = scene.character.binding().skin_joint_count();
    let pool = vec![skin_pack::PaletteEntry::IDENTITY; joints * 40];
    let records: Vec<_> = (0..200)
        .map(|i| common::scenes::pooled_record(Vec3::new(i as f32, 0.0, 0.0), [0, 1], 0.5))
        .collect();
    let draw = PacketDraw {
        lod: 7,
        tier: Tier::Pooled,
        kind: RecordKind::Pooled,
        first_instance: 0,
        instance_count: records.len() as u32,
    };
    let bad = Packet::from_parts(&PacketParts {
        time: 0.0,
        camera: cam,
        skin_joint_count: joints,
        pool_palettes: &pool,
        unique_palettes: &[],
        records: &records,
        draws: &[draw],
    })
    .expect("a packet");
    let a = own();
    let r = plain(&a);
    fails_then_draws_as_fresh(
        &gpu,
        a,
        r,
        plain,
        &bad,
        |e| matches!(e, Error::MissingLod { .. }),
        "lod",
    );
}
