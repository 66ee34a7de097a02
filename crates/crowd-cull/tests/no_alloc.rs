//! Proves with a counting global allocator that `CullingJob::run` never allocates, and that per-frame moves,
//! start-time rebases and `InstanceStore::maintain` do not allocate after warm-up.
//!
//! The allocator counts every thread's allocations (rayon workers included). This file holds a single test,
//! so that no other test of the same process allocates while it measures. The frame runs inside
//! `ThreadPool::install`, as an engine's simulation thread would (entering rayon from outside allocates).

mod common;

use std::alloc::System;

use crowd_cull::FrameCamera;
use crowd_cull::{CullOutput, CullingCache, CullingJob, Handle, InstanceDesc, MaintainBudget};
use glam::{Quat, Vec3};
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
fn culling_and_maintenance_do_not_allocate() {
    let (mut store, g) = common::store(4.0, 64);
    let side = 100;
    let descs: Vec<InstanceDesc> = (0..side * side)
        .map(|i| {
            let (x, z) = ((i % side) as f32, (i / side) as f32);
            InstanceDesc {
                rotation: Quat::from_rotation_y(i as f32),
                ..InstanceDesc::at(Vec3::new(x, 0.0, z), i % 3)
            }
        })
        .collect();
    let mut handles = vec![Handle::default(); descs.len()];
    store.add_many(g, &descs, &mut handles).expect("adds");
    let movers: Vec<Handle> = handles.iter().copied().step_by(10).collect();
    let mut positions: Vec<Vec3> = descs.iter().step_by(10).map(|d| d.position).collect();
    let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a rayon pool");
    threads.install(|| {
        let mut frame = |f: usize| {
            // Walk in a slow circle, so that instances drift out of their clusters and back.
            let step = Vec3::new((f as f32 * 0.05).cos(), 0.0, (f as f32 * 0.05).sin()) * 0.2;
            for p in &mut positions {
                *p += step;
            }
            store.set_positions(&movers, &positions).expect("moves");
            // The animation clock's epoch moves (rarely in a game; every frame here).
            store.rebase_start_times(g, |a| a.start_time - 0.5).expect("rebases");
            store.maintain(MaintainBudget {
                reassign: 256,
                refit: 64,
            });
            let eye = Vec3::new(50.0 + (f as f32 * 0.01).sin() * 30.0, 10.0, -20.0);
            let cam =
                FrameCamera::perspective(eye, Vec3::new(50.0, 0.0, 50.0), Vec3::Y, 1.0, 1.6, 0.1, 500.0).cull_camera();
            // Engines prepare every frame: it allocates only when the store grew.
            cache.prepare(&store);
            output.prepare(&store);
            let visible = CullingJob {
                store: &mut store,
                camera: &cam,
                cache: &mut cache,
                output: &mut output,
            }
            .run()
            .expect("culls");
            assert!(visible > 0);
        };
        // Warm-up: cluster blocks, queues, buffers and rayon's work queues reach their working sizes.
        for f in 0..300 {
            frame(f);
        }
        let n = allocations(|| {
            for f in 300..400 {
                frame(f);
            }
        });
        assert_eq!(
            n, 0,
            "moves, maintenance and culling allocated {n} times in 100 frames after warm-up"
        );
    });
    store.check_invariants().expect("invariants hold");
}
