//! GPU culling against crowd-cull (lavapipe on CI): for the same store and camera, the GPU's visible set and
//! every instance's LOD, tier, rate and flags equal `CullingJob`'s, on 100,000 instances of random position,
//! rotation (tilted), scale, clip and crossfade under 20 random cameras, and frame by frame along a camera path
//! that crosses the LOD and tier thresholds back and forth (hysteresis on the GPU's own state), also while
//! instances are removed, added and moved far enough that the store swaps them to other slots (the GPU's state
//! follows each instance by its handle, as crowd-cull's moves with it).
//!
//! The GPU computes the same sphere and edges with the same operations, but may round differently (fused
//! multiply-adds): an instance within a relative 1e-5 of a plane or an edge is a tie, left out of the comparison
//! and counted; the test requires ties to stay under 0.01% of the comparisons, and gives a tied slot the CPU's
//! state afterwards so that one tie does not spread through the hysteresis of later frames.

mod common;

use common::cull::{cull_now, is_tie, read_cull};

use crowd_cull::FrameCamera;
use crowd_cull::reference::sphere_visible;
use crowd_cull::{
    AnimState, ClusterSettings, CullCamera, CullOutput, CullingCache, CullingJob, GroupDesc, GroupId, Handle,
    InstanceDesc, InstanceStore, MaintainBudget, Tier, TierState,
};
use crowd_frame::{ResidentAnim, ResidentFade, ResidentInstance, ResidentOwner};
use crowd_gpu::headless::Gpu;
use crowd_gpu::{CullView, DrawSlot, GpuCuller, PipelineCache, ResidentBuffer, ResidentUpdate};
use glam::{Quat, Vec3, Vec4};

/// A deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
}

fn group_desc() -> GroupDesc {
    GroupDesc {
        mesh: 0,
        material: 0,
        clip_bounds: vec![
            crowd_cull::Aabb::new(Vec3::new(-0.4, 0.0, -0.3), Vec3::new(0.4, 1.8, 0.3)),
            crowd_cull::Aabb::new(Vec3::new(-0.4, 0.0, -0.3), Vec3::new(1.9, 2.2, 0.3)),
            crowd_cull::Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5)),
            crowd_cull::Aabb::new(Vec3::new(-2.0, -0.5, -2.0), Vec3::new(2.0, 3.0, 2.0)),
        ],
        lod_thresholds: vec![0.3, 0.12, 0.05, 0.02],
        tier_thresholds: [0.4, 0.08, 0.015],
        rate_thresholds: [0.2, 0.05, 0.01],
        hysteresis: 0.15,
    }
}

/// `n` instances over a 400 m square: random positions (some floating), rotations (most upright, a quarter
/// tilted), scales 0.3 to 3, clips, and a crossfade on every fifth.
fn instances(rng: &mut Rng, n: usize, clips: u32) -> Vec<InstanceDesc> {
    (0..n)
        .map(|i| {
            let yaw = Quat::from_rotation_y(rng.range(0.0, std::f32::consts::TAU));
            let rotation = if i % 4 == 0 {
                Quat::from_axis_angle(
                    Vec3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)).normalize_or(Vec3::X),
                    rng.range(0.0, 3.0),
                ) * yaw
            } else {
                yaw
            };
            let clip = (rng.next() % u64::from(clips)) as u32;
            let fade_target = (i % 5 == 0).then(|| (clip + 1) % clips);
            InstanceDesc {
                position: Vec3::new(
                    rng.range(-200.0, 200.0),
                    if i % 7 == 0 { rng.range(0.0, 30.0) } else { 0.0 },
                    rng.range(-200.0, 200.0),
                ),
                // The GPU reads the rotation as four snorm16: the store holds the rotation the GPU decodes.
                rotation: ResidentInstance::snap_rotation(rotation),
                scale: if i % 3 == 0 { rng.range(0.3, 3.0) } else { 1.0 },
                anim: AnimState {
                    clip,
                    start_time: rng.range(-10.0, 0.0),
                    speed: rng.range(0.5, 1.5),
                    fade_target,
                    fade_weight: if fade_target.is_some() { 0.5 } else { 0.0 },
                },
                custom: Vec4::new(rng.unit(), rng.unit(), rng.unit(), 1.0),
                flags: 0,
            }
        })
        .collect()
}

/// The resident state of every slot of group `g`, empty slots included.
fn resident_slots(store: &InstanceStore, g: GroupId) -> Vec<ResidentInstance> {
    let slots = store.group_slots(g).expect("the group");
    (0..store.group_slot_count(g).expect("the group"))
        .map(|s| {
            if store.handle_at(g, s as u32).is_none() {
                return ResidentInstance::EMPTY;
            }
            let a = slots.anim[s];
            let anim = ResidentAnim {
                clip: a.clip,
                start_time: a.start_time,
                speed: a.speed,
                fade: a.fade_target.map(|target| ResidentFade {
                    target,
                    start: 0.0,
                    length: 1.0,
                }),
            };
            ResidentInstance::new(
                slots.position[s],
                slots.rotation[s],
                slots.scale[s],
                &anim,
                slots.custom[s],
            )
            .expect("a valid instance")
        })
        .collect()
}

/// The owner of every slot of group `g`.
fn slot_owners(store: &InstanceStore, g: GroupId) -> Vec<ResidentOwner> {
    (0..store.group_slot_count(g).expect("the group"))
        .map(|s| ResidentOwner::of(store.handle_at(g, s as u32)))
        .collect()
}

struct Scene {
    store: InstanceStore,
    g: GroupId,
    desc: GroupDesc,
    cache: CullingCache,
    output: CullOutput,
    culler: GpuCuller,
    resident: ResidentBuffer,
    view: CullView,
    draws: Vec<DrawSlot>,
    ties: usize,
    compared: usize,
}

impl Scene {
    fn new(gpu: &Gpu, descs: &[InstanceDesc]) -> Self {
        let desc = group_desc();
        let mut store = InstanceStore::new(ClusterSettings::default()).expect("settings");
        let g = store.add_group(desc.clone()).expect("a group");
        let mut handles = vec![Handle::default(); descs.len()];
        store.add_many(g, descs, &mut handles).expect("the instances are valid");
        let limits = gpu.device.limits();
        let cache = PipelineCache::new(&gpu.device);
        let culler = GpuCuller::new(&gpu.device, &cache, &desc, &limits).expect("a culler");
        let mut resident = ResidentBuffer::new(&gpu.device, &cache, &limits).expect("a resident buffer");
        common::write_resident(
            gpu,
            &mut resident,
            0,
            &resident_slots(&store, g),
            &slot_owners(&store, g),
        )
        .expect("the slots fit");
        // Everything is uploaded: later frames upload only what changes.
        store.take_changed_slots(g, &mut Vec::new()).expect("the group");
        let buckets = (desc.lod_thresholds.len() + 1) * 4;
        let draws: Vec<DrawSlot> = (0..buckets as u32)
            .map(|b| DrawSlot {
                bucket: b,
                index_count: 3 * (b + 1),
                first_index: 6 * b,
                base_vertex: 0,
            })
            .collect();
        let view = culler.view(&gpu.device, &draws).expect("the draws fit");
        let mut cache = CullingCache::new();
        let mut output = CullOutput::new();
        cache.prepare(&store);
        output.prepare(&store);
        Self {
            store,
            g,
            desc,
            cache,
            output,
            culler,
            resident,
            view,
            draws,
            ties: 0,
            compared: 0,
        }
    }

    /// Ties (left out of the comparisons) stay under 0.01% of the comparisons.
    fn assert_few_ties(&self) {
        assert!(
            self.ties * 10_000 <= self.compared,
            "{} ties in {}",
            self.ties,
            self.compared
        );
    }

    /// Uploads the slots the store changed since the last upload, as a GPU-driven frame does.
    fn upload_changes(&mut self, gpu: &Gpu) {
        let mut ranges = Vec::new();
        self.store.take_changed_slots(self.g, &mut ranges).expect("the group");
        let (all, owners) = (resident_slots(&self.store, self.g), slot_owners(&self.store, self.g));
        let slots: Vec<usize> = ranges.iter().flat_map(|r| r.start as usize..r.end as usize).collect();
        let states: Vec<ResidentInstance> = slots.iter().map(|&s| all[s]).collect();
        let owned: Vec<ResidentOwner> = slots.iter().map(|&s| owners[s]).collect();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        self.resident
            .apply(
                &gpu.device,
                &mut encoder,
                ResidentUpdate {
                    slot_count: all.len() as u32,
                    handle_capacity: self.store.handle_capacity() as u32,
                    ranges: &ranges,
                    instances: &states,
                    owners: &owned,
                },
            )
            .expect("the changes fit");
        gpu.queue.submit([encoder.finish()]);
    }

    /// Culls on both sides and compares; returns the number of visible instances.
    fn cull_and_compare(&mut self, gpu: &Gpu, camera: &CullCamera, what: &str) -> usize {
        let visible = CullingJob {
            store: &mut self.store,
            camera,
            cache: &mut self.cache,
            output: &mut self.output,
        }
        .run()
        .expect("the CPU culls");
        cull_now(gpu, &self.culler, &self.resident, &mut self.view, camera, 0.0).expect("the GPU culls");
        let slots = self.resident.slot_count() as usize;
        let got = read_cull(gpu, &self.view, slots, &self.draws);
        let cpu = self.store.group_slots(self.g).expect("the group").state;
        let mut tied = vec![false; slots];
        let mut fix = Vec::new();
        for (s, tie) in tied.iter_mut().enumerate() {
            let Some(h) = self.store.handle_at(self.g, s as u32) else {
                continue;
            };
            let (c, r) = self.store.sphere(h).expect("a live instance");
            self.compared += 1;
            if is_tie(camera, &self.desc, c, r) {
                *tie = true;
                self.ties += 1;
                fix.push(s);
                continue;
            }
            assert_eq!(
                got.states[h.index as usize],
                (cpu[s], h.generation),
                "{what}: slot {s}, handle {h:?} (sphere {c} r {r}, screen size {}): GPU state vs crowd-cull's",
                camera.screen_size(c, r)
            );
        }
        for lod in 0..=self.desc.lod_thresholds.len() as u8 {
            for tier in Tier::ALL {
                let b = usize::from(lod) * 4 + tier as usize;
                let keep = |l: &[u32]| -> Vec<u32> { l.iter().copied().filter(|&s| !tied[s as usize]).collect() };
                let mut want = keep(self.output.list(self.g, lod, tier));
                want.sort_unstable();
                assert_eq!(keep(&got.lists[b]), want, "{what}: the list of LOD {lod}, {tier:?}");
            }
        }
        // A tied slot takes the CPU's state, so that later frames compare from the same previous levels.
        for s in fix {
            let owner = ResidentOwner::of(self.store.handle_at(self.g, s as u32));
            self.view.write_state(&gpu.queue, owner, cpu[s]);
        }
        visible
    }
}

fn random_camera(rng: &mut Rng) -> CullCamera {
    let eye = Vec3::new(rng.range(-220.0, 220.0), rng.range(1.0, 60.0), rng.range(-220.0, 220.0));
    let target = Vec3::new(rng.range(-150.0, 150.0), 0.0, rng.range(-150.0, 150.0));
    let target = if target.distance(eye) < 1.0 {
        eye + Vec3::X * 10.0
    } else {
        target
    };
    FrameCamera::perspective(
        eye,
        target,
        Vec3::Y,
        rng.range(0.4, 1.4),
        rng.range(1.0, 2.0),
        rng.range(0.1, 2.0),
        rng.range(60.0, 600.0),
    )
    .cull_camera()
}

#[test]
fn the_gpu_decides_what_crowd_cull_decides_for_random_cameras() {
    let Some(gpu) = common::gpu() else { return };
    let mut rng = Rng(0x5eed_0001);
    let descs = instances(&mut rng, 100_000, 4);
    let mut scene = Scene::new(&gpu, &descs);
    let mut seen = 0;
    for k in 0..20 {
        let camera = random_camera(&mut rng);
        seen += scene.cull_and_compare(&gpu, &camera, &format!("camera {k}"));
    }
    eprintln!(
        "{} instances x 20 cameras: {seen} visible in all, {} comparisons, {} ties left out",
        descs.len(),
        scene.compared,
        scene.ties
    );
    assert!(seen > 100_000, "the cameras see enough of the crowd: {seen}");
    scene.assert_few_ties();
}

#[test]
fn hysteresis_on_the_gpu_follows_crowd_cull_frame_by_frame() {
    let Some(gpu) = common::gpu() else { return };
    let mut rng = Rng(0x5eed_0002);
    // A dense block ahead of the camera, so that the screen sizes sweep across every threshold.
    let mut descs = instances(&mut rng, 20_000, 4);
    for d in &mut descs {
        d.position = Vec3::new(d.position.x * 0.1, d.position.y * 0.1, d.position.z * 0.1 - 30.0);
    }
    let mut scene = Scene::new(&gpu, &descs);
    // Back and forth along the view axis, crossing the thresholds in both directions, with small steps that stop
    // inside the hysteresis bands.
    let mut levels_changed = 0usize;
    let mut last = Vec::new();
    for frame in 0..40 {
        let t = frame as f32 / 39.0 * std::f32::consts::TAU * 2.0;
        let distance = 25.0 + 200.0 * (0.5 - 0.5 * t.cos());
        let eye = Vec3::new(3.0 * t.sin(), 4.0, -30.0 + distance);
        let camera =
            FrameCamera::perspective(eye, Vec3::new(0.0, 1.0, -30.0), Vec3::Y, 0.9, 1.6, 0.5, 600.0).cull_camera();
        scene.cull_and_compare(&gpu, &camera, &format!("frame {frame}"));
        let states = scene.store.group_slots(scene.g).expect("the group").state.to_vec();
        if !last.is_empty() {
            levels_changed += states
                .iter()
                .zip(&last)
                .filter(|(a, b): &(&TierState, &TierState)| (a.lod, a.tier) != (b.lod, b.tier))
                .count();
        }
        last = states;
    }
    eprintln!(
        "40 frames: {levels_changed} level changes, {} comparisons, {} ties left out",
        scene.compared, scene.ties
    );
    assert!(
        levels_changed > 20_000,
        "the path crosses the thresholds: {levels_changed} changes"
    );
    scene.assert_few_ties();
}

#[test]
fn hysteresis_follows_instances_that_the_store_moves_to_other_slots() {
    let Some(gpu) = common::gpu() else { return };
    let mut rng = Rng(0x5eed_0003);
    let mut descs = instances(&mut rng, 8_000, 4);
    for d in &mut descs {
        d.position = Vec3::new(d.position.x * 0.1, d.position.y * 0.1, d.position.z * 0.1 - 30.0);
    }
    let mut scene = Scene::new(&gpu, &descs);
    let mut live: Vec<Handle> = scene.store.live_handles().collect();
    let (mut removed, mut added, mut moved_slots) = (0usize, 0usize, 0usize);
    let mut spare = instances(&mut rng, 4_000, 4).into_iter();
    for frame in 0..30 {
        let t = frame as f32 / 29.0 * std::f32::consts::TAU * 2.0;
        let distance = 25.0 + 200.0 * (0.5 - 0.5 * t.cos());
        let eye = Vec3::new(3.0 * t.sin(), 4.0, -30.0 + distance);
        let camera =
            FrameCamera::perspective(eye, Vec3::new(0.0, 1.0, -30.0), Vec3::Y, 0.9, 1.6, 0.5, 600.0).cull_camera();
        if frame > 0 {
            // Between culls, as a game frame: removals (whose swaps move the last member of a cluster into the
            // freed slot), additions, and moves across the block that send instances to other clusters.
            let slot_before: Vec<Option<(GroupId, u32)>> = live.iter().map(|&h| scene.store.slot_of(h)).collect();
            for _ in 0..40 {
                let i = (rng.next() % live.len() as u64) as usize;
                scene.store.remove(live.swap_remove(i)).expect("a live handle");
                removed += 1;
            }
            for _ in 0..40 {
                let mut d = spare.next().expect("spare instances");
                d.position = Vec3::new(d.position.x * 0.1, d.position.y * 0.1, d.position.z * 0.1 - 30.0);
                live.push(scene.store.add(scene.g, &d).expect("a valid instance"));
                added += 1;
            }
            for _ in 0..200 {
                let h = live[(rng.next() % live.len() as u64) as usize];
                let p = Vec3::new(rng.range(-20.0, 20.0), 0.0, rng.range(-50.0, -10.0));
                scene.store.set_position(h, p).expect("a live handle");
            }
            scene.store.maintain(MaintainBudget::default());
            moved_slots += live
                .iter()
                .zip(&slot_before)
                .filter(|(h, before)| before.is_some() && scene.store.slot_of(**h) != **before)
                .count();
            scene.upload_changes(&gpu);
        }
        scene.cull_and_compare(&gpu, &camera, &format!("frame {frame}"));
    }
    eprintln!(
        "30 frames: {removed} removed, {added} added, {moved_slots} instances moved to other slots, {} comparisons, \
         {} ties left out",
        scene.compared, scene.ties
    );
    assert!(
        moved_slots > 500,
        "the store moves instances between slots: {moved_slots}"
    );
    scene.assert_few_ties();
}

/// `n` boxes cutting clip `clip`'s reach into time segments: the clip swings an arm out along +x and back, so
/// segment `s`'s box reaches `x = 0.4 + 1.5 * sin(pi * (s + 1) / n)` (the clip's box reaches 1.9, as `group_desc`).
fn segment_boxes(n: u32) -> Vec<bake_format::BoundsRecord> {
    (0..n)
        .map(|s| {
            let reach = 0.4 + 1.5 * (std::f32::consts::PI * (s + 1) as f32 / n as f32).sin().max(0.0);
            bake_format::BoundsRecord {
                min: [-0.4, 0.0, -0.3, 0.0],
                max: [reach.min(1.9), 1.8 + 0.4 * reach / 1.9, 0.3, 0.0],
            }
        })
        .collect()
}

#[test]
fn segment_bounds_cull_instances_whose_time_segment_is_out_of_view() {
    let Some(gpu) = common::gpu() else { return };
    let mut rng = Rng(0x5eed_0004);
    let mut descs = instances(&mut rng, 40_000, 4);
    // Only clip 1 reaches out: every instance plays it, one in five crossfading to clip 2.
    for (i, d) in descs.iter_mut().enumerate() {
        d.anim.clip = 1;
        d.anim.fade_target = (i % 5 == 0).then_some(2);
    }
    let mut scene = Scene::new(&gpu, &descs);
    let n = 8u32;
    let durations = [1.0f32, 2.0, 0.5, 1.5];
    let clips: Vec<bake_format::ClipRecord> = durations
        .iter()
        .enumerate()
        .map(|(c, &duration)| bake_format::ClipRecord {
            first_frame: 0,
            frame_count: 2,
            rate_hz: 1.0 / duration,
            duration,
            flags: if c == 1 { bake_format::CLIP_LOOPING } else { 0 },
            first_segment: c as u32 * n,
            segment_count: n,
            reserved: 0,
        })
        .collect();
    let boxes: Vec<bake_format::BoundsRecord> = (0..4).flat_map(|_| segment_boxes(n)).collect();
    // Bad segment tables are refused.
    let err = scene
        .culler
        .set_segments(&gpu.device, &clips[..3], &boxes)
        .expect_err("three clips for four");
    assert!(matches!(err, crowd_gpu::Error::Bake { clip: None, .. }), "{err}");
    let err = scene
        .culler
        .set_segments(&gpu.device, &clips, &boxes[..30])
        .expect_err("segments past the boxes");
    assert!(matches!(err, crowd_gpu::Error::Bake { clip: Some(3), .. }), "{err}");
    assert!(!scene.culler.has_segments());
    scene
        .culler
        .set_segments(&gpu.device, &clips, &boxes)
        .expect("the segments fit");

    let (mut compared, mut refined, mut ties) = (0usize, 0usize, 0usize);
    for k in 0..6 {
        let camera = random_camera(&mut rng);
        let now = 0.37 + 1.3 * k as f32;
        CullingJob {
            store: &mut scene.store,
            camera: &camera,
            cache: &mut scene.cache,
            output: &mut scene.output,
        }
        .run()
        .expect("the CPU culls");
        cull_now(&gpu, &scene.culler, &scene.resident, &mut scene.view, &camera, now).expect("the GPU culls");
        let slots = scene.resident.slot_count() as usize;
        let got = read_cull(&gpu, &scene.view, slots, &scene.draws);
        // The CPU's lists, less the instances whose segment box is out of view (a crossfade keeps the clip's box).
        let group = scene.store.group_slots(scene.g).expect("the group");
        let mut skip = vec![false; slots];
        let mut culled = vec![false; slots];
        for s in 0..slots {
            let Some(h) = scene.store.handle_at(scene.g, s as u32) else {
                continue;
            };
            let (c, r) = scene.store.sphere(h).expect("live");
            if is_tie(&camera, &scene.desc, c, r) {
                skip[s] = true;
                continue;
            }
            let a = group.anim[s];
            if a.fade_target.is_some() || !sphere_visible(&camera, c, r) {
                continue;
            }
            let record = &clips[a.clip as usize];
            let t = (now - a.start_time) * a.speed;
            let b = boxes[(record.first_segment + record.segment_at(t)) as usize].to_aabb();
            let centre = group.position[s] + group.rotation[s] * ((b.min + b.max) * 0.5 * group.scale[s]);
            let radius = ((b.max - b.min) * 0.5).length() * group.scale[s];
            if is_tie(&camera, &scene.desc, centre, radius) {
                skip[s] = true;
            } else if !sphere_visible(&camera, centre, radius) {
                culled[s] = true;
                refined += 1;
            }
        }
        for lod in 0..=scene.desc.lod_thresholds.len() as u8 {
            for tier in Tier::ALL {
                let b = usize::from(lod) * 4 + tier as usize;
                let keep = |l: &[u32]| -> Vec<u32> { l.iter().copied().filter(|&s| !skip[s as usize]).collect() };
                let mut want: Vec<u32> = keep(scene.output.list(scene.g, lod, tier))
                    .into_iter()
                    .filter(|&s| !culled[s as usize])
                    .collect();
                want.sort_unstable();
                compared += want.len();
                assert_eq!(keep(&got.lists[b]), want, "camera {k}: the list of LOD {lod}, {tier:?}");
            }
        }
        ties += skip.iter().filter(|&&t| t).count();
    }
    eprintln!("6 cameras: {compared} listed, {refined} culled by their time segment, {ties} ties left out");
    assert!(
        refined > 100,
        "the segments cull instances the clip's box keeps: {refined}"
    );
    assert!(ties * 1000 <= compared, "{ties} ties in {compared}");
}

#[test]
fn empty_and_fully_culled_views_draw_nothing_and_growth_keeps_slots() {
    let Some(gpu) = common::gpu() else { return };
    let desc = group_desc();
    let limits = gpu.device.limits();
    let cache = PipelineCache::new(&gpu.device);
    let culler = GpuCuller::new(&gpu.device, &cache, &desc, &limits).expect("a culler");
    let mut resident = ResidentBuffer::new(&gpu.device, &cache, &limits).expect("a resident buffer");
    let draws = [DrawSlot {
        bucket: 0,
        index_count: 36,
        first_index: 0,
        base_vertex: 0,
    }];
    let mut view = culler.view(&gpu.device, &draws).expect("fits");
    let camera =
        FrameCamera::perspective(Vec3::new(0.0, 2.0, 10.0), Vec3::ZERO, Vec3::Y, 1.0, 1.0, 0.1, 100.0).cull_camera();
    // No slots at all.
    cull_now(&gpu, &culler, &resident, &mut view, &camera, 0.0).expect("an empty crowd culls");
    let args: Vec<u32> = bytemuck::cast_slice(&gpu.read_buffer(view.args_buffer(), 20).expect("reads")).to_vec();
    assert_eq!(args, [36, 0, 0, 0, 0]);

    // Ten instances behind the camera, written in two pieces with a gap, then a write far past the buffer that
    // grows it: the slots written before are kept.
    let anim = ResidentAnim {
        clip: 0,
        start_time: 0.0,
        speed: 1.0,
        fade: None,
    };
    let behind: Vec<ResidentInstance> = (0..10)
        .map(|i| ResidentInstance::new(Vec3::new(i as f32, 0.0, 50.0), Quat::IDENTITY, 1.0, &anim, Vec4::ONE))
        .collect::<Result<_, _>>()
        .expect("valid");
    let owners: Vec<ResidentOwner> = (0..10).map(|index| ResidentOwner { index, generation: 1 }).collect();
    common::write_resident(&gpu, &mut resident, 0, &behind[..4], &owners[..4]).expect("fits");
    common::write_resident(&gpu, &mut resident, 6, &behind[6..], &owners[6..]).expect("fits");
    common::write_resident(&gpu, &mut resident, 5000, &behind[..1], &owners[..1]).expect("fits");
    assert_eq!(resident.slot_count(), 5001);
    let back: Vec<ResidentInstance> =
        bytemuck::cast_slice(&gpu.read_buffer(resident.buffer(), 5001 * 48).expect("reads")).to_vec();
    assert_eq!(&back[..4], &behind[..4]);
    assert_eq!(&back[4..6], &[ResidentInstance::EMPTY; 2], "the gap holds no instance");
    assert_eq!(&back[6..10], &behind[6..]);
    assert_eq!(back[5000], behind[0]);
    let back: Vec<ResidentOwner> =
        bytemuck::cast_slice(&gpu.read_buffer(resident.owners_buffer(), 5001 * 8).expect("reads")).to_vec();
    assert_eq!(&back[..4], &owners[..4]);
    assert_eq!(&back[4..6], &[ResidentOwner::EMPTY; 2], "the gap has no owner");
    assert_eq!((&back[6..10], back[5000]), (&owners[6..], owners[0]));
    // States and owners must agree in length.
    let err = common::write_resident(&gpu, &mut resident, 0, &behind[..2], &owners[..1]).expect_err("one owner short");
    assert!(
        matches!(err, crowd_gpu::Error::ResidentChange { .. }) && err.to_string().contains("owner"),
        "{err}"
    );
    cull_now(&gpu, &culler, &resident, &mut view, &camera, 0.0).expect("culls");
    let counts: Vec<u32> = bytemuck::cast_slice(&gpu.read_buffer(view.counts_buffer(), 128).expect("reads")).to_vec();
    assert!(
        counts.iter().all(|&c| c == 0),
        "everything is behind the camera: {counts:?}"
    );

    // A resident buffer past a small, odd max_buffer_size: an error naming it, and the slots written are kept.
    let small = wgpu::Limits {
        max_buffer_size: 48 * 100 + 5,
        ..limits.clone()
    };
    let mut resident = ResidentBuffer::new(&gpu.device, &cache, &small).expect("a resident buffer");
    common::write_resident(&gpu, &mut resident, 0, &behind, &owners).expect("fits");
    common::write_resident(&gpu, &mut resident, 90, &behind, &owners).expect("exactly 100 slots fit");
    let err = common::write_resident(&gpu, &mut resident, 91, &behind, &owners).expect_err("101 slots do not");
    assert!(
        matches!(
            err,
            crowd_gpu::Error::Limit {
                buffer: "resident instances",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(resident.slot_count(), 100);
    let back: Vec<ResidentInstance> =
        bytemuck::cast_slice(&gpu.read_buffer(resident.buffer(), 100 * 48).expect("reads")).to_vec();
    assert_eq!(&back[..10], &behind[..]);

    // A NaN position never reaches the buffer: the instance is refused where it is packed.
    let err = ResidentInstance::new(Vec3::NAN, Quat::IDENTITY, 1.0, &anim, Vec4::ONE).expect_err("NaN");
    assert!(err.to_string().contains("position"), "{err}");
}
