//! The slot-growth contract: a bulk move followed by `maintain` can open clusters and grow the store's slots;
//! culling then reports `NotPrepared` until the cache and output are prepared again, and a frame that prepares
//! every time culls every frame.

mod common;

use crowd_cull::FrameCamera;
use crowd_cull::{CullOutput, CullingCache, CullingJob, Error, Handle, InstanceDesc, MaintainBudget};
use glam::Vec3;

#[test]
fn maintain_can_grow_the_slots_and_prepare_keeps_culling_running() {
    let (mut store, g) = common::store(4.0, 64);
    let side = 100;
    let descs: Vec<InstanceDesc> = (0..side * side)
        .map(|i| InstanceDesc::at(Vec3::new((i % side) as f32, 0.0, (i / side) as f32), i % 3))
        .collect();
    let mut handles = vec![Handle::default(); descs.len()];
    store.add_many(g, &descs, &mut handles).expect("adds");
    let cam = FrameCamera::perspective(
        Vec3::new(50.0, 10.0, -20.0),
        Vec3::new(50.0, 0.0, 50.0),
        Vec3::Y,
        1.0,
        1.6,
        0.1,
        2000.0,
    )
    .cull_camera();
    let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
    let cull = |store: &mut crowd_cull::InstanceStore, cache: &mut CullingCache, output: &mut CullOutput| {
        CullingJob {
            store,
            camera: &cam,
            cache,
            output,
        }
        .run()
    };
    cache.prepare(&store);
    output.prepare(&store);
    cull(&mut store, &mut cache, &mut output).expect("culls");
    let before = store.slot_count();
    eprintln!("{} instances in {before} slots", store.len());

    // A fifth of the crowd walks 300 m away in one bulk move: moves open no cluster...
    let movers: Vec<Handle> = handles.iter().copied().step_by(5).collect();
    let moved: Vec<Vec3> = descs
        .iter()
        .step_by(5)
        .map(|d| d.position + Vec3::new(300.0, 0.0, 0.0))
        .collect();
    store.set_positions(&movers, &moved).expect("moves");
    assert_eq!(store.slot_count(), before, "a move alone opened a cluster");
    cull(&mut store, &mut cache, &mut output).expect("culls after a move without preparing");
    // ...but maintenance reassigns the drifters into new clusters.
    store.maintain(MaintainBudget {
        reassign: descs.len(),
        refit: descs.len(),
    });
    let after = store.slot_count();
    assert!(after > before, "maintenance opened no cluster ({before} slots)");
    eprintln!("after the move and maintenance: {after} slots");
    let err = cull(&mut store, &mut cache, &mut output);
    assert!(matches!(err, Err(Error::NotPrepared { .. })), "{err:?}");
    cache.prepare(&store);
    output.prepare(&store);
    let visible = cull(&mut store, &mut cache, &mut output).expect("culls once prepared");
    assert!(visible > 0);
    store.check_invariants().expect("invariants hold");
}
