//! `PoolFlattenJob` writes each live pose-pool slot's skinning palette at `PaletteBinding::palette_entries(slot)`,
//! on the default character with a skin that leaves joints out (so the pool's stride, `joint_count`, differs from the palettes',
//! `skin_joint_count`), leaves every other slot alone, and allocates nothing after warm-up.
//!
//! This file holds a counting global allocator; its tests run the allocation check inside one test.

use std::alloc::System;

use anim_pose::{NO_PARENT, PoolClip, PosePool, PosePoolOptions, RuntimeClip, RuntimeClipOptions, Skeleton, Transform};
use glam::{Affine3A, Vec3A};
use skin_pack::{Error, PaletteBinding, PaletteEntry, PaletteFormat, PoolFlattenJob, palette_from_model};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The default character's skeleton with a skin of every other joint, in reverse order (so the pool's stride,
/// `joint_count`, differs from the palettes', `skin_joint_count`), and its runtime clips.
fn partial_skin() -> (Skeleton, Vec<RuntimeClip>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    let model = anim_pose::import_file(path).expect("the default character imports");
    let mut skeleton = model.skeletons[0].clone();
    let keep: Vec<usize> = (0..skeleton.skin_joints.len()).step_by(2).rev().collect();
    skeleton.skin_joints = keep.iter().map(|&k| skeleton.skin_joints[k]).collect();
    skeleton.inverse_bind_matrices = keep.iter().map(|&k| skeleton.inverse_bind_matrices[k]).collect();
    let clips = model
        .clips_for(0)
        .take(2)
        .map(|c| RuntimeClip::build(c, &skeleton, &RuntimeClipOptions::default()).expect("builds"))
        .collect();
    (skeleton, clips)
}

/// A recognisable entry that no palette of the test has.
const UNTOUCHED: PaletteEntry = PaletteEntry { rows: [[7.0; 4]; 3] };

#[test]
fn live_slots_land_at_their_palette_entries_and_nothing_else_is_written() {
    let (skeleton, clips) = partial_skin();
    let binding = PaletteBinding::new(&skeleton).expect("binds");
    let (j, s) = (binding.joint_count(), binding.skin_joint_count());
    assert_ne!(j, s, "the test needs a skin that leaves joints out");
    let pool_clips = [
        PoolClip {
            clip: &clips[0],
            slots: 3,
        },
        PoolClip {
            clip: &clips[1],
            slots: 5,
        },
    ];
    let options = PosePoolOptions {
        max_crossfade_buckets: 3,
        ..PosePoolOptions::default()
    };
    let mut pool = PosePool::new(&skeleton, &pool_clips, &options).expect("the pool builds");
    // One bucket crossfading to "walk" (3 of its region's 5 slots live); the other two regions stay inactive.
    pool.request_crossfade(1, 0, 0.5).expect("a bucket");
    pool.update(0.3).expect("updates");
    let live: Vec<usize> = pool
        .live_slots()
        .flat_map(|r| r.first_slot as usize..(r.first_slot + r.slot_count) as usize)
        .collect();
    assert_eq!(
        live,
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        "8 clip slots, then 3 slots of bucket 0's region"
    );
    let mut output = vec![UNTOUCHED; pool.slot_count() * s];
    PoolFlattenJob {
        binding: &binding,
        pool: &pool,
        output: &mut output,
        streaming: true,
    }
    .run()
    .expect("flattens");
    let mut want = vec![Affine3A::IDENTITY; s];
    for slot in 0..pool.slot_count() {
        let entries = &output[binding.palette_entries(slot)];
        if live.contains(&slot) {
            let model = pool.slot_model(slot).expect("a slot");
            palette_from_model(&skeleton, model, None, &mut want).expect("a palette");
            for (k, (e, m)) in entries.iter().zip(&want).enumerate() {
                let m = PaletteEntry::encode(m, Vec3A::ZERO);
                for (a, b) in e.rows.iter().flatten().zip(m.rows.iter().flatten()) {
                    assert!((a - b).abs() <= 1e-5, "slot {slot} entry {k}: {e:?} is not {m:?}");
                }
            }
        } else {
            assert!(
                entries.iter().all(|e| *e == UNTOUCHED),
                "slot {slot} is not live but was written"
            );
        }
    }

    // After warm-up, flattening the live slots allocates nothing.
    let mut job = PoolFlattenJob {
        binding: &binding,
        pool: &pool,
        output: &mut output,
        streaming: true,
    };
    for _ in 0..20 {
        job.run().expect("flattens");
    }
    let region = Region::new(GLOBAL);
    for _ in 0..50 {
        job.run().expect("flattens");
    }
    let change = region.change();
    assert_eq!(
        change.allocations + change.reallocations,
        0,
        "the pool flatten allocated"
    );

    // A binding of another skeleton, and an output too short, are errors before anything is written.
    let other = Skeleton::from_parents("other", vec![NO_PARENT, 0], vec![Transform::IDENTITY; 2]).expect("valid");
    let other = PaletteBinding::new(&other).expect("binds");
    let mut output = vec![UNTOUCHED; pool.slot_count() * s];
    let err = PoolFlattenJob {
        binding: &other,
        pool: &pool,
        output: &mut output,
        streaming: false,
    }
    .run();
    assert!(
        matches!(err, Err(Error::BufferSize { what, .. }) if what.contains("pose pool joints")),
        "{err:?}"
    );
    let mut short = vec![UNTOUCHED; pool.slot_count() * s - 1];
    let err = PoolFlattenJob {
        binding: &binding,
        pool: &pool,
        output: &mut short,
        streaming: false,
    }
    .run();
    assert!(
        matches!(err, Err(Error::BufferSize { what, .. }) if what.contains("pool flatten output")),
        "{err:?}"
    );
    assert!(short.iter().all(|e| *e == UNTOUCHED));
}
