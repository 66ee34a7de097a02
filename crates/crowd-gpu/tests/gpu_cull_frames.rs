//! GPU culling of a real crowd against crowd-cull (lavapipe on CI): the resident state is what `CrowdFrame` packs
//! (not a test's own packing), the clock runs, instances crossfade, the nearest few are drawn by the CPU (their
//! CPU-drawn bit keeps them out of the GPU's lists), and each checked frame culls several views: a perspective main
//! camera, a second camera, an orthographic sun camera, and the sun camera following the main one. Every view's
//! states and lists equal `CullingJob`'s on a copy of the crowd's store with that view's camera (a following view:
//! the main view's levels with its own visibility). A renderer whose device allows only 4 workgroups per dispatch
//! dimension culls its 2,560 slots in a two-dimensional dispatch and decides the same.
//!
//! Each checked view is new (no hysteresis history), as the copy of the store is: both start every instance at
//! `TierState::HIDDEN`. Ties (within a relative 1e-5 of a plane or an edge) are left out, as in `gpu_cull.rs`.

mod common;

use common::cull::{is_tie, read_cull};
use common::driven::{Scene, camera, renderer, scene};
use common::images::{self, PrepareNow};
use crowd_cull::{CullOutput, CullingCache, CullingJob, FrameCamera, Handle, Tier, TierState};
use crowd_frame::{ClipId, CrowdFrame, FrameSettings, RESIDENT_CPU_DRAWN};
use crowd_gpu::headless::Gpu;
use crowd_gpu::{CrowdRenderer, DrawSlot, ViewDesc};
use glam::Vec3;

/// The draws of a GPU-driven view of `scene`'s meshes: per mesh, LOD and tier, as `enable_gpu_driven` makes them.
fn draw_slots(scene: &Scene, lods: usize) -> Vec<DrawSlot> {
    let mut draws = Vec::new();
    for mesh in &scene.meshes {
        for lod in 0..lods {
            for tier in 0..4u32 {
                draws.push(DrawSlot {
                    bucket: lod as u32 * 4 + tier,
                    index_count: mesh.lods[lod].index_count,
                    first_index: mesh.lods[lod].first_index,
                    base_vertex: 0,
                });
            }
        }
    }
    draws
}

/// Culls `crowd` on the CPU (a copy of its store) for `cull_camera`, and compares with `gpu_states` and `lists` of a
/// GPU view: every state (for a following view, against `lead`'s levels), and every list less the CPU-drawn slots.
fn compare(
    crowd: &CrowdFrame,
    cull_camera: &crowd_cull::CullCamera,
    gpu: &common::cull::GpuCull,
    lead: Option<&[(TierState, u32)]>,
    what: &str,
) -> (usize, usize) {
    let mut store = crowd.store().clone();
    let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
    cache.prepare(&store);
    output.prepare(&store);
    CullingJob {
        store: &mut store,
        camera: cull_camera,
        cache: &mut cache,
        output: &mut output,
    }
    .run()
    .expect("the CPU culls");
    let g = crowd.group();
    let desc = store.group_desc(g).expect("the group").clone();
    let cpu = store.group_slots(g).expect("the group").state.to_vec();
    let slots = cpu.len();
    let mut skip = vec![false; slots];
    let mut ties = 0;
    for s in 0..slots {
        let Some(h) = store.handle_at(g, s as u32) else {
            continue;
        };
        let resident = crowd.resident_state(s as u32).expect("a slot");
        skip[s] = resident.clips & RESIDENT_CPU_DRAWN != 0;
        let (c, r) = store.sphere(h).expect("live");
        if is_tie(cull_camera, &desc, c, r) {
            skip[s] = true;
            ties += 1;
            continue;
        }
        let (got, generation) = gpu.states[h.index as usize];
        assert_eq!(
            generation, h.generation,
            "{what}: slot {s}'s state belongs to its handle"
        );
        match lead {
            // A following view: the lead's levels (the lead culled every live instance this frame), its own
            // visibility.
            Some(lead) => {
                let (l, _) = lead[h.index as usize];
                assert_eq!(
                    (got.lod, got.tier, got.flags & TierState::VISIBLE),
                    (l.lod, l.tier, cpu[s].flags & TierState::VISIBLE),
                    "{what}: slot {s}: the following view's LOD and tier are the lead's"
                );
            }
            None => assert_eq!(got, cpu[s], "{what}: slot {s}, handle {h:?}: GPU state vs crowd-cull's"),
        }
    }
    let mut listed = 0;
    if lead.is_none() {
        for lod in 0..=desc.lod_thresholds.len() as u8 {
            for tier in Tier::ALL {
                let b = usize::from(lod) * 4 + tier as usize;
                let keep = |l: &[u32]| -> Vec<u32> { l.iter().copied().filter(|&s| !skip[s as usize]).collect() };
                let mut want = keep(output.list(g, lod, tier));
                want.sort_unstable();
                listed += want.len();
                assert_eq!(keep(&gpu.lists[b]), want, "{what}: the list of LOD {lod}, {tier:?}");
            }
        }
    }
    (listed, ties)
}

/// Culls a new view of `r` for `camera` and reads it back.
fn cull_new_view(gpu: &Gpu, r: &CrowdRenderer, camera: FrameCamera, draws: &[DrawSlot]) -> common::cull::GpuCull {
    let slots = r.resident().expect("GPU-driven").slot_count() as usize;
    let mut view = r.create_view(&gpu.device).expect("a view");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let prepared = r
        .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(camera))
        .expect("the view prepares");
    gpu.queue.submit([encoder.finish()]);
    read_cull(gpu, prepared.cull().expect("GPU-driven"), slots, draws)
}

fn sun() -> FrameCamera {
    FrameCamera::orthographic(
        Vec3::new(20.0, 40.0, 10.0),
        Vec3::new(0.0, 0.0, -12.0),
        Vec3::Y,
        40.0,
        1.0,
        -80.0,
        120.0,
    )
    .expect("a sun camera")
}

#[test]
fn every_view_of_a_real_crowd_decides_what_crowd_cull_decides() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(40, 25);
    let settings = FrameSettings {
        gpu_driven: true,
        tier_thresholds: [0.45, 0.12, 0.03],
        max_unique: 12,
        ..scene.settings.clone()
    };
    let mut crowd = CrowdFrame::new(scene.character.clone(), settings).expect("a crowd");
    let mut handles = vec![Handle::default(); scene.spawns.len()];
    crowd.add_many(&scene.spawns, &mut handles).expect("adds");
    let mut r = renderer(&gpu, &scene, &crowd, true);
    let draws = draw_slots(&scene, scene.meshes[0].lods.len());
    let main = camera(Vec3::new(0.5, 2.5, 5.0), Vec3::new(0.0, 0.5, -12.0));
    let side = camera(Vec3::new(-20.0, 8.0, -10.0), Vec3::new(0.0, 0.0, -15.0));
    let clips = crowd.character().clips().len() as u16;
    let (mut listed, mut ties, mut unique) = (0, 0, 0);
    for frame in 0..24 {
        // The game: a few crossfades, and walkers, while the clock runs.
        if frame % 3 == 0 {
            for (k, &h) in handles.iter().enumerate().skip(frame).step_by(23) {
                crowd
                    .play(h, ClipId((k as u16 + frame as u16) % clips), 0.4)
                    .expect("a fade");
                let p = crowd.store().get(h).expect("live").desc.position;
                crowd.set_position(h, p + Vec3::new(0.2, 0.0, -0.1)).expect("moves");
            }
        }
        crowd.step(1.0 / 20.0, &main).expect("steps");
        let packet = crowd.exchange().begin_read().expect("a packet");
        r.prepare_now(&gpu, &packet).expect("prepares");
        unique = packet.stats().unique;
        drop(packet);
        if frame % 6 != 5 {
            continue;
        }
        let slots = r.resident().expect("GPU-driven").slot_count() as usize;
        for (what, cam) in [("main", main), ("side", side), ("sun", sun())] {
            let got = cull_new_view(&gpu, &r, cam, &draws);
            let (l, t) = compare(
                &crowd,
                &cam.cull_camera(),
                &got,
                None,
                &format!("frame {frame}, {what}"),
            );
            listed += l;
            ties += t;
        }
        // The sun following the main camera: the main view's levels, the sun's visibility.
        let mut lead_view = r.create_view(&gpu.device).expect("a view");
        let mut follower = r.create_view(&gpu.device).expect("a view");
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let lead = r
            .prepare_view(&gpu.device, &mut encoder, &mut lead_view, ViewDesc::new(main))
            .expect("the main view");
        let shadow = r
            .prepare_view(
                &gpu.device,
                &mut encoder,
                &mut follower,
                ViewDesc::following(sun(), &lead),
            )
            .expect("the sun view");
        gpu.queue.submit([encoder.finish()]);
        let lead_got = read_cull(&gpu, lead.cull().expect("GPU-driven"), slots, &draws);
        let shadow_got = read_cull(&gpu, shadow.cull().expect("GPU-driven"), slots, &draws);
        compare(
            &crowd,
            &sun().cull_camera(),
            &shadow_got,
            Some(&lead_got.states),
            &format!("frame {frame}, sun following main"),
        );
    }
    eprintln!("4 checked frames x 3 views: {listed} listed, {ties} ties left out; {unique} unique in the last frame");
    assert!(unique > 0, "some instances are drawn by the CPU");
    assert!(listed > 3000, "the views see the crowd: {listed}");
    assert!(ties * 1000 <= listed, "{ties} ties in {listed}");
}

#[test]
fn a_small_workgroup_limit_culls_in_two_dimensions() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(40, 25);
    let (mut crowd, _) = common::driven::crowd_of(&scene, true);
    // 4 workgroups of 256 per dimension: at most 4,096 slots, culled in a dispatch 4 workgroups wide.
    let limits = wgpu::Limits {
        max_compute_workgroups_per_dimension: 4,
        ..gpu.device.limits()
    };
    let mut r = images::renderer(&gpu, Some(limits));
    let materials = vec![crowd_mesh::Material::default(); scene.meshes.len()];
    images::add_meshes(&gpu, &mut r, &scene.meshes, &materials);
    r.enable_gpu_driven(&gpu.device, crowd.store().group_desc(crowd.group()).expect("the group"))
        .expect("GPU-driven");
    let main = camera(Vec3::new(0.5, 2.5, 5.0), Vec3::new(0.0, 0.5, -12.0));
    crowd.step(1.0 / 20.0, &main).expect("steps");
    r.prepare_now(&gpu, &crowd.exchange().begin_read().expect("a packet"))
        .expect("prepares");
    let slots = r.resident().expect("GPU-driven").slot_count();
    assert!(
        slots > 4 * 256,
        "the slots need more than one row of workgroups: {slots}"
    );
    let draws = draw_slots(&scene, scene.meshes[0].lods.len());
    let got = cull_new_view(&gpu, &r, main, &draws);
    let (listed, _) = compare(&crowd, &main.cull_camera(), &got, None, "4 workgroups per dimension");
    assert!(listed > 300, "the view sees the crowd: {listed}");
}
