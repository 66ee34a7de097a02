//! Proves with a counting global allocator that no job's `run()` allocates (sampling both uniform frames and a
//! frame-time table), and that the pose pool's `update` and instance mapping do not allocate after warm-up.
//!
//! The allocator counts every thread's allocations (rayon workers included). This file holds a single test,
//! so that no other test of the same process allocates while it measures.

use std::alloc::System;

use anim_pose::{
    BlendLayer, BlendingJob, FrameSpacing, LocalToModelJob, PoolClip, PosePool, PosePoolOptions, Procedural,
    ProceduralJob, RuntimeClip, RuntimeClipOptions, SamplingJob, SineSway, SlotRef, SoaTransform, pack_soa,
};
use glam::{Affine3A, Vec3, Vec4};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Runs `f` and returns how many allocations and reallocations it made.
fn allocations(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    let change = region.change();
    change.allocations + change.reallocations
}

#[test]
fn hot_paths_do_not_allocate() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    let model = anim_pose::import_file(path).expect("the default character imports");
    let skeleton = &model.skeletons[0];
    let clips: Vec<RuntimeClip> = model
        .clips_for(0)
        .map(|c| RuntimeClip::build(c, skeleton, &RuntimeClipOptions::default()).expect("builds"))
        .collect();
    // The walk with every fifth key kept: fewer keys than any uniform rate's frames, so a key-time table.
    let mut sparse = model.clips_for(0).nth(1).expect("a second clip").clone();
    for channel in &mut sparse.channels {
        let keep: Vec<usize> = (0..channel.key_count())
            .filter(|&k| k % 5 == 0 || k + 1 == channel.key_count())
            .collect();
        let per_key = channel.values.len() / channel.key_count();
        channel.values = keep
            .iter()
            .flat_map(|&k| channel.values[k * per_key..(k + 1) * per_key].to_vec())
            .collect();
        channel.times = keep.iter().map(|&k| channel.times[k]).collect();
    }
    let table = RuntimeClip::build(&sparse, skeleton, &RuntimeClipOptions::default()).expect("builds");
    assert!(
        matches!(table.frame_spacing(), FrameSpacing::KeyTimes { .. }),
        "{}",
        table.frame_spacing()
    );
    let soa = clips[0].num_soa_joints();
    let mut pose_a = vec![SoaTransform::IDENTITY; soa];
    let mut pose_b = vec![SoaTransform::IDENTITY; soa];
    let mut blended = vec![SoaTransform::IDENTITY; soa];
    let mut rest = vec![SoaTransform::IDENTITY; soa];
    pack_soa(&skeleton.rest_pose, &mut rest).expect("sized");
    let mut model_space = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    let mask = vec![Vec4::splat(0.5); soa];
    let chain: Vec<u16> = (0..8).collect();
    let sway = Procedural::SineSway(SineSway {
        axis: Vec3::Y,
        amplitude_root: 0.1,
        amplitude_tip: 0.4,
        frequency: 1.5,
        phase_step: 0.6,
        phase: 0.0,
    });

    let n = allocations(|| {
        for frame in 0..100 {
            let t = frame as f32 / 60.0;
            SamplingJob {
                clip: &clips[1],
                time: t,
                output: &mut pose_a,
            }
            .run()
            .expect("samples");
            SamplingJob {
                clip: &table,
                time: t,
                output: &mut pose_b,
            }
            .run()
            .expect("samples a table");
            SamplingJob {
                clip: &clips[2],
                time: t,
                output: &mut pose_b,
            }
            .run()
            .expect("samples");
            let layers = [
                BlendLayer {
                    transform: &pose_a,
                    weight: 0.7,
                    joint_weights: None,
                },
                BlendLayer {
                    transform: &pose_b,
                    weight: 0.3,
                    joint_weights: Some(&mask),
                },
            ];
            let additive = [BlendLayer {
                transform: &rest,
                weight: 0.2,
                joint_weights: None,
            }];
            BlendingJob {
                layers: &layers,
                additive: &additive,
                rest_pose: &rest,
                threshold: 0.1,
                output: &mut blended,
            }
            .run()
            .expect("blends");
            ProceduralJob {
                chain: &chain,
                procedural: &sway,
                time: t,
                output: &mut blended,
            }
            .run()
            .expect("sways");
            LocalToModelJob {
                skeleton,
                input: &blended,
                output: &mut model_space,
                from: None,
                root: None,
            }
            .run()
            .expect("converts");
            LocalToModelJob {
                skeleton,
                input: &blended,
                output: &mut model_space,
                from: Some(11),
                root: None,
            }
            .run()
            .expect("converts from a joint");
        }
    });
    assert_eq!(n, 0, "the jobs' run() allocated {n} times in 100 frames");

    // The pose pool (the four clips and the table), updated in parallel on a rayon pool of 2 threads, with
    // crossfades and batch mapping.
    // Entering rayon from outside its pool allocates a queue block now and then, so the frame runs inside
    // `install`, as an engine's simulation thread would. Rayon's work queues grow during the first frames
    // (seen here: 2 allocations in frames 10 to 110, none after 2,000 frames), so warm-up is 2,000 frames.
    let pool_clips: Vec<PoolClip> = clips
        .iter()
        .chain([&table])
        .map(|clip| PoolClip { clip, slots: 8 })
        .collect();
    let mut pool = PosePool::new(skeleton, &pool_clips, &PosePoolOptions::default()).expect("the pool builds");
    let instances = 1000;
    let tracks: Vec<u16> = (0..instances).map(|i| (i % 4) as u16).collect();
    let times: Vec<f32> = (0..instances).map(|i| i as f32 * 0.01).collect();
    let mut slots = vec![SlotRef::default(); instances];
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a rayon pool");
    threads.install(|| {
        let mut frame = |f: usize| {
            let t = f as f32 / 60.0;
            let fade = pool.request_crossfade(1, 2, (f % 10) as f32 / 10.0).expect("requests");
            let _ = pool.request_crossfade(0, 3, 0.5).expect("requests");
            pool.update(t).expect("updates");
            pool.map_instances(&tracks, &times, &mut slots).expect("maps");
            pool.map_crossfade(&fade, t).expect("maps a crossfade");
        };
        for f in 0..2000 {
            frame(f);
        }
        let n = allocations(|| {
            for f in 2000..3000 {
                frame(f);
            }
        });
        assert_eq!(n, 0, "the pose pool allocated {n} times in 1,000 frames after warm-up");
    });

    // An empty pool is a no-op.
    let mut empty = PosePool::new(skeleton, &[], &PosePoolOptions::default()).expect("an empty pool builds");
    empty.update(1.0).expect("updating an empty pool does nothing");
    empty
        .map_instances(&[], &[], &mut [])
        .expect("mapping nothing does nothing");
}
