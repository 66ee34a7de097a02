//! Criterion benches for `crowd-cull`: culling (with LOD, tiers and list output) at 100,000 and 1,000,000
//! instances, the same cull over a plain scalar reference that tests every instance's sphere, a frame of
//! moves plus maintenance, and single adds and removes.
//!
//! The scenes are those of `cargo xtask bench crowd_cull` (`crowd_benches::groups::crowd_cull::scene`).
//! Everything runs in a rayon pool of 2 threads, except the scalar reference, which is one thread.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use crowd_benches::bench;
use crowd_benches::groups::crowd_cull::scene;
use crowd_cull::{CullOutput, CullingCache, CullingJob, MaintainBudget};
use glam::Vec3;

fn culling(c: &mut Criterion) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a rayon pool");
    for (n, tag) in [(100_000, "100k"), (1_000_000, "1m")] {
        let mut s = scene(n).expect("the scene builds");
        let mut cache = CullingCache::new();
        let mut output = CullOutput::new();
        cache.prepare(&s.store);
        output.prepare(&s.store);
        c.bench_function(&bench!("crowd_cull", "cull", tag), |b| {
            pool.install(|| {
                b.iter(|| {
                    CullingJob {
                        store: &mut s.store,
                        camera: &s.camera,
                        cache: &mut cache,
                        output: &mut output,
                    }
                    .run()
                    .expect("culls")
                })
            })
        });
        // The baseline: a plain sphere test of every instance, one at a time, on one thread.
        c.bench_function(&bench!("crowd_cull", "reference_cull", tag), |b| {
            b.iter(|| crowd_cull::reference::cull_reference_to_vec(black_box(&s.store), &s.camera).len())
        });
        let movers: Vec<_> = s.handles.iter().copied().step_by(10).collect();
        let mut positions: Vec<Vec3> = s.descs.iter().map(|d| d.position).step_by(10).collect();
        c.bench_function(&bench!("crowd_cull", "move_10pct_and_maintain", tag), |b| {
            pool.install(|| {
                b.iter(|| {
                    for p in &mut positions {
                        p.x += 0.02;
                    }
                    s.store.set_positions(&movers, &positions).expect("moves");
                    s.store.maintain(MaintainBudget::default())
                })
            })
        });
        let (h, d) = (s.handles[n / 2], s.descs[n / 2]);
        let mut handle = h;
        c.bench_function(&bench!("crowd_cull", "remove_then_add", tag), |b| {
            b.iter(|| {
                s.store.remove(handle).expect("removes");
                handle = s.store.add(s.group, black_box(&d)).expect("adds");
            })
        });
    }
}

criterion_group!(group, culling);
criterion_main!(group);
