//! Proves with a counting global allocator that `FlattenJob::run` does not allocate after warm-up, in every mode
//! and format, on a two-thread rayon pool.
//!
//! The allocator counts every thread's allocations (rayon workers included). This file holds a single test, so
//! that no other test of the same process allocates while it measures.

use std::alloc::System;

use anim_pose::{NO_PARENT, Skeleton, Transform};
use glam::{Affine3A, Quat, Vec3};
use skin_pack::{FlattenCache, FlattenJob, Mat3x4F16, PaletteBinding, PaletteEntry, PaletteFormat, QtF16};
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

/// Runs every mode of the job once for format `F`.
fn all_modes<F: PaletteFormat>(
    binding: &PaletteBinding,
    poses: &[Affine3A],
    pose_of: &[u32],
    transforms: &[Affine3A],
    cache: &mut FlattenCache<F>,
    out: &mut [F],
) {
    let pose_count = poses.len() / binding.joint_count();
    for (pose_of, transforms, streaming) in [
        (&[][..], &[][..], false),
        (&[][..], &transforms[..pose_count], true),
        (pose_of, &[][..], true),
        (pose_of, transforms, false),
        (pose_of, transforms, true),
    ] {
        FlattenJob {
            binding,
            poses,
            pose_of,
            transforms,
            cache,
            output: out,
            streaming,
        }
        .run()
        .expect("runs");
    }
}

#[test]
fn flatten_does_not_allocate_after_warm_up() {
    let joints = 40;
    let parents = (0..joints)
        .map(|j| if j == 0 { NO_PARENT } else { j as u16 - 1 })
        .collect();
    let skeleton = Skeleton::from_parents("chain", parents, vec![Transform::IDENTITY; joints]).expect("valid");
    let binding = PaletteBinding::new(&skeleton).expect("binds");
    let pose_count = 8;
    let poses: Vec<Affine3A> = (0..pose_count * joints)
        .map(|i| Affine3A::from_rotation_translation(Quat::from_rotation_y(i as f32 * 0.1), Vec3::Y * i as f32))
        .collect();
    let palettes = 300;
    let pose_of: Vec<u32> = (0..palettes).map(|i| (i * 7 % pose_count) as u32).collect();
    let transforms: Vec<Affine3A> = (0..palettes)
        .map(|i| Affine3A::from_translation(Vec3::new(i as f32, 0.0, -(i as f32))))
        .collect();
    let (mut f32_cache, mut m34_cache, mut qt_cache) = (
        FlattenCache::new(&binding, pose_count),
        FlattenCache::new(&binding, pose_count),
        FlattenCache::new(&binding, pose_count),
    );
    let mut f32_out = vec![PaletteEntry::IDENTITY; palettes * joints];
    let mut m34_out = vec![Mat3x4F16::default(); palettes * joints];
    let mut qt_out = vec![QtF16::default(); palettes * joints];
    let threads = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a thread pool");
    threads.install(|| {
        let mut frame = || {
            all_modes(&binding, &poses, &pose_of, &transforms, &mut f32_cache, &mut f32_out);
            all_modes(&binding, &poses, &pose_of, &transforms, &mut m34_cache, &mut m34_out);
            all_modes(&binding, &poses, &pose_of, &transforms, &mut qt_cache, &mut qt_out);
        };
        // Warm-up: rayon's workers and deques reach their steady state.
        for _ in 0..200 {
            frame();
        }
        let n = allocations(|| {
            for _ in 0..100 {
                frame();
            }
        });
        assert_eq!(n, 0, "100 frames of flattening allocated {n} times");
    });
}
