//! Unit tests of [`PosePool`](super::PosePool): construction, slot updates, crossfade buckets, and the mapping
//! kernels against their references.

use std::f32::consts::TAU;

use glam::{Mat4, Quat, Vec3, Vec4};

#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
use super::mapping::Scan;
use super::*;
use crate::{Channel, Clip, ErrorBudget, Interpolation, Looping, NO_PARENT, Property, RuntimeClipOptions, Transform};

/// A chain of `n` joints, each one unit above its parent.
fn chain(n: usize) -> Skeleton {
    let rest = Transform {
        translation: Vec3::Y,
        ..Transform::IDENTITY
    };
    let parents = (0..n).map(|i| if i == 0 { NO_PARENT } else { i as u16 - 1 }).collect();
    Skeleton::from_parents("chain", parents, vec![rest; n]).expect("a valid chain")
}

/// A clip that swings every joint of `skeleton` about z with a phase `offset`, and bobs the root.
fn swing(skeleton: &Skeleton, name: &str, duration: f32, offset: f32, looping: Looping) -> RuntimeClip {
    let keys = 17;
    let times: Vec<f32> = (0..keys).map(|k| k as f32 * duration / (keys - 1) as f32).collect();
    let mut channels: Vec<Channel> = (0..skeleton.joint_count())
        .map(|j| Channel {
            joint: j as u16,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: times
                .iter()
                .map(|t| {
                    let angle = 0.4 * (TAU * t / duration + offset + j as f32).sin();
                    Vec4::from(Quat::from_rotation_z(angle))
                })
                .collect(),
        })
        .collect();
    channels.push(Channel {
        joint: 0,
        property: Property::Translation,
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: times
            .iter()
            .map(|t| Vec4::new(0.0, 0.1 * (TAU * t / duration).cos(), 0.0, 0.0))
            .collect(),
    });
    let clip = Clip {
        name: name.into(),
        animation: 0,
        skeleton: 0,
        duration,
        channels,
    };
    // The keys are piecewise linear, so resampling them needs a budget above the default 0.1 mm.
    let options = RuntimeClipOptions {
        looping,
        budget: ErrorBudget {
            translation: 1e-2,
            rotation: 1e-2,
        },
        ..RuntimeClipOptions::default()
    };
    RuntimeClip::build(&clip, skeleton, &options).expect("the test clip builds")
}

fn max_diff(a: &[Affine3A], b: &[Affine3A]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            (Mat4::from(*x) - Mat4::from(*y))
                .abs()
                .to_cols_array()
                .into_iter()
                .fold(0.0, f32::max)
        })
        .fold(0.0, f32::max)
}

#[test]
fn empty_pool_update_and_mapping_are_no_ops() {
    let skeleton = chain(5);
    let mut pool = PosePool::new(&skeleton, &[], &PosePoolOptions::default()).expect("an empty pool is valid");
    pool.update(1.5).expect("updates");
    pool.update(-3.0).expect("updates");
    assert_eq!(pool.slot_count(), 0);
    assert!(pool.palettes().is_empty());
    pool.map_instances(&[], &[], &mut []).expect("zero instances");
    assert!(pool.map(pool.track_count() as u16, 0.0).is_err());
    assert!(pool.request_crossfade(0, 1, 0.5).is_err());

    let clip = swing(&skeleton, "idle", 2.0, 0.0, Looping::Yes);
    let mut pool = PosePool::new(
        &skeleton,
        &[PoolClip { clip: &clip, slots: 4 }],
        &PosePoolOptions::default(),
    )
    .expect("valid");
    pool.update(0.25).expect("updates");
    pool.map_instances(&[], &[], &mut []).expect("zero instances");
    assert!(pool.update(f32::NAN).is_err());
    assert_eq!(pool.time(), 0.25, "a failed update leaves the pool unchanged");
}

#[test]
fn a_pool_outlives_the_skeleton_and_clips_it_was_built_from() {
    /// The skeleton and clips of both pools below.
    fn parts() -> (Skeleton, RuntimeClip, RuntimeClip) {
        let skeleton = chain(5);
        let walk = swing(&skeleton, "walk", 1.1, 0.0, Looping::Yes);
        let wave = swing(&skeleton, "wave", 2.0, 0.5, Looping::No);
        (skeleton, walk, wave)
    }
    /// A pool built from locals, which are dropped when it is returned.
    fn detached() -> PosePool {
        let (skeleton, walk, wave) = parts();
        let clips = [PoolClip { clip: &walk, slots: 6 }, PoolClip { clip: &wave, slots: 4 }];
        PosePool::new(&skeleton, &clips, &PosePoolOptions::default()).expect("valid")
    }
    let mut pool = detached();
    // The same pool, built from parts that are still alive, as the reference.
    let (skeleton, walk, wave) = parts();
    let clips = [PoolClip { clip: &walk, slots: 6 }, PoolClip { clip: &wave, slots: 4 }];
    let mut reference = PosePool::new(&skeleton, &clips, &PosePoolOptions::default()).expect("valid");
    assert!(
        std::sync::Arc::ptr_eq(&reference.clips[0].tracks, &walk.tracks),
        "the pool keeps a clone that shares the clip's tracks, not a copy of them"
    );
    assert_eq!(pool.skeleton(), &skeleton);
    assert_eq!((pool.clip_count(), pool.slot_count()), (2, reference.slot_count()));
    let tracks = [0, 1, 0, 1, 0];
    let times = [0.0, 0.3, 0.77, 1.9, -4.2];
    for (frame, time) in [0.0f32, 0.37, 1.9, 5.25].into_iter().enumerate() {
        let fade = pool.request_crossfade(0, 1, 0.5).expect("requests");
        assert_eq!(
            fade,
            reference.request_crossfade(0, 1, 0.5).expect("requests"),
            "frame {frame}"
        );
        pool.update(time).expect("updates");
        reference.update(time).expect("updates");
        assert_eq!(pool.palettes(), reference.palettes(), "frame {frame}");
        let (mut got, mut want) = ([SlotRef::default(); 6], [SlotRef::default(); 6]);
        let tracks = [tracks.as_slice(), &[fade.track]].concat();
        let times = [times.as_slice(), &[0.5]].concat();
        pool.map_instances(&tracks, &times, &mut got).expect("maps");
        reference.map_instances(&tracks, &times, &mut want).expect("maps");
        assert_eq!(got, want, "frame {frame}");
        assert_eq!(
            pool.map(1, 1.0).expect("maps"),
            reference.map(1, 1.0).expect("maps"),
            "frame {frame}"
        );
    }
}

#[test]
fn constructor_validity() {
    let skeleton = chain(5);
    let other = chain(9);
    let walk = swing(&skeleton, "walk", 1.1, 0.0, Looping::Yes);
    let once = swing(&skeleton, "wave", 2.0, 0.0, Looping::No);
    let foreign = swing(&other, "foreign", 1.0, 0.0, Looping::Yes);
    let ok = PosePoolOptions::default();
    let clip = |clip, slots| PoolClip { clip, slots };
    #[rustfmt::skip]
    let rows: [(&str, Vec<PoolClip<'_>>, PosePoolOptions, Option<&str>); 9] = [
        ("valid", vec![clip(&walk, 8), clip(&once, 2)], ok, None),
        ("one looping slot", vec![clip(&walk, 8), clip(&walk, 1)], ok, Some("pose pool clip 1 ('walk')")),
        ("zero slots", vec![clip(&once, 0)], ok, Some("pose pool clip 0 ('wave')")),
        ("other skeleton", vec![clip(&foreign, 4)], ok, Some("'foreign'")),
        ("too many slots", vec![clip(&walk, MAX_POOL_SLOTS + 1)], ok, Some("'walk'")),
        ("too many slots in total", vec![clip(&walk, 40_000), clip(&once, 40_000)], ok, Some("'wave'")),
        ("one level", vec![clip(&walk, 4)], PosePoolOptions { crossfade_levels: 1, ..ok }, Some("crossfade_levels")),
        ("no buckets", vec![clip(&walk, 4)], PosePoolOptions { max_crossfade_buckets: 0, ..ok }, Some("max_crossfade_buckets")),
        ("buckets past the slot limit", vec![clip(&walk, 1000)], PosePoolOptions { max_crossfade_buckets: 66, ..ok }, Some("max_crossfade_buckets")),
    ];
    for (name, clips, options, expected) in rows {
        match (PosePool::new(&skeleton, &clips, &options), expected) {
            (Ok(_), None) => {}
            (Err(e), Some(needle)) => assert!(e.to_string().contains(needle), "{name}: {e} lacks {needle}"),
            (Ok(_), Some(_)) => panic!("{name}: accepted"),
            (Err(e), None) => panic!("{name}: rejected: {e}"),
        }
    }
}

#[test]
fn crossfade_endpoints_equal_the_endpoint_clips() {
    let skeleton = chain(6);
    // Equal durations and slot counts put the two clips' slots at the same phases.
    let a = swing(&skeleton, "a", 1.2, 0.0, Looping::Yes);
    let b = swing(&skeleton, "b", 1.2, 2.0, Looping::Yes);
    let clips = [PoolClip { clip: &a, slots: 6 }, PoolClip { clip: &b, slots: 6 }];
    let mut pool = PosePool::new(&skeleton, &clips, &PosePoolOptions::default()).expect("valid");
    for frame in 0..3 {
        let time = 0.37 * frame as f32;
        let w0 = pool.request_crossfade(0, 1, 0.01).expect("requests");
        let w1 = pool.request_crossfade(0, 1, 0.99).expect("requests");
        assert_eq!((w0.weight, w1.weight), (0.0, 1.0));
        pool.update(time).expect("updates");
        let (s0, s1) = (
            pool.track_slots(w0.track).expect("active"),
            pool.track_slots(w1.track).expect("active"),
        );
        for s in 0..6 {
            let slot = |c: ClipSlots| c.first_slot as usize + s;
            let bucket0 = pool.slot_model(slot(s0)).expect("slot");
            let bucket1 = pool.slot_model(slot(s1)).expect("slot");
            let clip_a = pool.slot_model(slot(pool.clip_table()[0])).expect("slot");
            let clip_b = pool.slot_model(slot(pool.clip_table()[1])).expect("slot");
            assert!(
                max_diff(bucket0, clip_a) < 1e-4,
                "frame {frame} slot {s}: weight 0 is not clip a"
            );
            assert!(
                max_diff(bucket1, clip_b) < 1e-4,
                "frame {frame} slot {s}: weight 1 is not clip b"
            );
        }
        // An instance in the bucket maps like an instance of the target clip, shifted to the bucket's slots.
        let t = 0.8 + time;
        let in_bucket = pool.map_crossfade(&w1, t).expect("maps");
        let in_b = pool.map(1, t).expect("maps");
        let shift = s1.first_slot - pool.clip_table()[1].first_slot;
        assert_eq!(u32::from(in_bucket.slot_a), u32::from(in_b.slot_a) + shift);
        assert_eq!(in_bucket.fraction, in_b.fraction);
    }
}

#[test]
fn bucket_cap_reuses_the_nearest_level_then_snaps() {
    let skeleton = chain(4);
    let a = swing(&skeleton, "a", 1.0, 0.0, Looping::Yes);
    let b = swing(&skeleton, "b", 2.0, 1.0, Looping::Yes);
    let clips = [PoolClip { clip: &a, slots: 4 }, PoolClip { clip: &b, slots: 8 }];
    let options = PosePoolOptions {
        crossfade_levels: 5,
        max_crossfade_buckets: 2,
        parallel: false,
    };
    let mut pool = PosePool::new(&skeleton, &clips, &options).expect("valid");
    assert_eq!(pool.track_count(), 4);
    let low = pool.request_crossfade(0, 1, 0.2).expect("requests");
    assert_eq!((low.track, low.weight), (2, 0.25));
    assert_eq!(
        pool.request_crossfade(0, 1, 0.3).expect("requests"),
        low,
        "the same level shares the bucket"
    );
    let high = pool.request_crossfade(0, 1, 0.9).expect("requests");
    assert_eq!((high.track, high.weight), (3, 1.0));
    assert_eq!(pool.active_crossfade_count(), 2);
    // At the cap: the nearest existing level of the pair.
    assert_eq!(pool.request_crossfade(0, 1, 0.6).expect("requests"), low);
    assert_eq!(pool.request_crossfade(0, 1, 0.7).expect("requests"), high);
    // At the cap with no bucket of the pair: snap to the nearer endpoint clip.
    let snap_from = pool.request_crossfade(1, 0, 0.3).expect("requests");
    assert_eq!(
        snap_from,
        CrossfadeRef {
            track: 1,
            time_scale: 2.0,
            weight: 0.0
        }
    );
    let snap_to = pool.request_crossfade(1, 0, 0.7).expect("requests");
    assert_eq!(
        snap_to,
        CrossfadeRef {
            track: 0,
            time_scale: 1.0,
            weight: 1.0
        }
    );
    assert_eq!(pool.request_crossfade(1, 1, 0.5).expect("requests").track, 1);
    assert!(pool.request_crossfade(0, 2, 0.5).is_err());
    assert!(pool.request_crossfade(0, 1, f32::NAN).is_err());
    pool.update(0.0).expect("updates");
    assert_eq!(pool.active_crossfade_count(), 2);
    // Only the high bucket is requested for the next frame; the low one is released at the update.
    pool.request_crossfade(0, 1, 1.0).expect("requests");
    pool.update(0.1).expect("updates");
    assert_eq!(pool.active_crossfade_count(), 1);
    assert_eq!(pool.track_slots(2), None);
    // A released bucket maps as the clip it crossfaded to.
    assert_eq!(pool.map(2, 0.3).expect("maps"), pool.map(1, 0.3).expect("maps"));
    let fresh = pool.request_crossfade(1, 0, 0.5).expect("requests");
    assert_eq!(fresh.track, 2, "the released bucket is free again");
    pool.update(0.2).expect("updates");
    pool.update(0.3).expect("updates");
    assert_eq!(pool.active_crossfade_count(), 0);
}

#[test]
fn non_looping_slots_are_fixed_and_mapping_clamps() {
    let skeleton = chain(3);
    let wave = swing(&skeleton, "wave", 2.0, 0.0, Looping::No);
    let mut pool = PosePool::new(
        &skeleton,
        &[PoolClip { clip: &wave, slots: 5 }],
        &PosePoolOptions::default(),
    )
    .expect("valid");
    pool.update(7.3).expect("updates");
    for s in 0..5 {
        assert_eq!(pool.clip_slot_time(0, s).expect("in range"), s as f32 * 0.5);
    }
    let r = pool.map(0, 1.25).expect("maps");
    assert_eq!((r.slot_a, r.slot_b, r.fraction), (2, 3, 0.5));
    assert_eq!(
        pool.map(0, -1.0).expect("maps"),
        SlotRef {
            slot_a: 0,
            slot_b: 1,
            fraction: 0.0
        }
    );
    assert_eq!(
        pool.map(0, 9.0).expect("maps"),
        SlotRef {
            slot_a: 4,
            slot_b: 4,
            fraction: 0.0
        }
    );
    let mut out = [SlotRef::default(); 3];
    pool.map_instances(&[0, 0, 0], &[1.25, -1.0, 9.0], &mut out)
        .expect("maps");
    assert_eq!(out[0], r);
    assert_eq!(
        out[2],
        SlotRef {
            slot_a: 4,
            slot_b: 4,
            fraction: 0.0
        }
    );
    assert!(pool.map_instances(&[0, 1000], &[0.0, 0.0], &mut out).is_err());
    assert!(pool.map_instances(&[0], &[f32::INFINITY], &mut out).is_err());
    assert!(pool.map_instances(&[0], &[0.0, 1.0], &mut out).is_err());
}

#[test]
fn batch_mapping_matches_the_reference_up_to_1e4_seconds() {
    let skeleton = chain(3);
    let walk = swing(&skeleton, "walk", 1.1, 0.0, Looping::Yes);
    let run = swing(&skeleton, "run", 0.7, 1.0, Looping::Yes);
    let wave = swing(&skeleton, "wave", 2.0, 0.0, Looping::No);
    let clips = [
        PoolClip { clip: &walk, slots: 7 },
        PoolClip { clip: &run, slots: 32 },
        PoolClip { clip: &wave, slots: 5 },
        PoolClip { clip: &wave, slots: 2 },
        PoolClip {
            clip: &walk,
            slots: 300,
        },
    ];
    let mut pool = PosePool::new(&skeleton, &clips, &PosePoolOptions::default()).expect("valid");
    for pool_time in [0.0, 3.7, -812.25, 9_000.5] {
        pool.update(pool_time).expect("updates");
        let mut tracks = Vec::new();
        let mut times = Vec::new();
        for (track, c) in clips.iter().enumerate() {
            let d = c.clip.duration();
            // Slot boundaries, clip ends, and scattered times up to 1e4 s.
            for i in 0..400 {
                let boundary = pool_time + i as f32 * d / c.slots as f32;
                for t in [boundary, -boundary, i as f32 * 25.1 - 5_000.0, d, 0.0, d * (1.0 - 1e-7)] {
                    tracks.push(track as u16);
                    times.push(t);
                }
            }
        }
        let mut out = vec![SlotRef::default(); tracks.len()];
        pool.map_instances(&tracks, &times, &mut out).expect("maps");
        for ((&track, &time), &batch) in tracks.iter().zip(&times).zip(&out) {
            let single = pool.map(track, time).expect("maps");
            assert!((0.0..1.0).contains(&batch.fraction), "{batch:?}");
            let same = batch.slot_a == single.slot_a
                && batch.slot_b == single.slot_b
                && (batch.fraction - single.fraction).abs() < 1e-4;
            let k = clips[usize::from(track)].slots as u16;
            let first = pool.clip_table()[usize::from(track)].first_slot as u16;
            let next = |s: u16| first + (s - first + 1) % k;
            let neighbour =
                (next(batch.slot_a) == single.slot_a && batch.fraction > 1.0 - 1e-4 && single.fraction < 1e-4)
                    || (next(single.slot_a) == batch.slot_a && single.fraction > 1.0 - 1e-4 && batch.fraction < 1e-4);
            assert!(
                same || neighbour,
                "track {track} at {time} (pool {pool_time}): batch {batch:?}, single {single:?}"
            );
        }
    }
    // The end of a non-looping clip is exactly its last slot.
    let mut out = [SlotRef::default(); 2];
    pool.map_instances(&[2, 3], &[2.0, 2.0], &mut out).expect("maps");
    let last = |t: usize| (pool.clip_table()[t].first_slot + pool.clip_table()[t].slot_count - 1) as u16;
    assert_eq!(
        out[0],
        SlotRef {
            slot_a: last(2),
            slot_b: last(2),
            fraction: 0.0
        }
    );
    assert_eq!(
        out[1],
        SlotRef {
            slot_a: last(3),
            slot_b: last(3),
            fraction: 0.0
        }
    );
    // Out-of-range tracks past the padded table, and NaN times, are reported.
    let bad = pool.track_count() as u16;
    for track in [bad, u16::MAX] {
        assert!(pool.map_instances(&[0, track], &[0.0, 0.0], &mut out).is_err());
    }
    assert!(pool.map_instances(&[0, 1], &[0.0, f32::NAN], &mut out).is_err());
}

#[test]
fn fraction_unorm16_rounds() {
    assert_eq!(
        SlotRef {
            slot_a: 0,
            slot_b: 1,
            fraction: 0.0
        }
        .fraction_unorm16(),
        0
    );
    assert_eq!(
        SlotRef {
            slot_a: 0,
            slot_b: 1,
            fraction: 0.5
        }
        .fraction_unorm16(),
        32768
    );
    assert_eq!(
        SlotRef {
            slot_a: 0,
            slot_b: 1,
            fraction: 0.99999
        }
        .fraction_unorm16(),
        65534
    );
}

/// Both SIMD kernels, called directly (the CPU picks one in `map_instances`), against the scalar kernel: the
/// same bits and the same scan, for every track (past the padded table too) and for time bits of every kind.
#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
#[test]
fn simd_kernels_match_the_scalar_kernel() {
    let skeleton = chain(2);
    let clips = [
        swing(&skeleton, "walk", 1.1, 0.0, Looping::Yes),
        swing(&skeleton, "run", 0.13, 1.0, Looping::Yes),
        swing(&skeleton, "wave", 2.0, 0.0, Looping::No),
        swing(&skeleton, "blink", 17.5, 0.0, Looping::No),
    ];
    let pool_clips = [
        PoolClip {
            clip: &clips[0],
            slots: 7,
        },
        PoolClip {
            clip: &clips[1],
            slots: 300,
        },
        PoolClip {
            clip: &clips[2],
            slots: 2,
        },
        PoolClip {
            clip: &clips[3],
            slots: 33,
        },
    ];
    let options = PosePoolOptions {
        max_crossfade_buckets: 5,
        parallel: false,
        ..PosePoolOptions::default()
    };
    let mut pool = PosePool::new(&skeleton, &pool_clips, &options).expect("valid");
    // A xorshift generator: tracks over the whole u16 range, times from random bits and from scaled integers.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let special = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN,
        1e-40,
    ];
    for (frame, time) in [0.0, 3.7, -812.25, 9_000.5, 1.0e6].into_iter().enumerate() {
        // Buckets in every state: requested, released (mapping their last clip) and never used.
        if frame < 3 {
            pool.request_crossfade(0, 1 + frame as u16, 0.3).expect("requests");
        }
        pool.update(time).expect("updates");
        let n = 2003;
        let tracks: Vec<u16> = (0..n)
            .map(|_| {
                let r = next();
                match r % 8 {
                    0 => r as u16 >> 4,
                    1 => (r >> 8) as u16 % 16,
                    _ => (r >> 8) as u16 % pool.track_count() as u16,
                }
            })
            .collect();
        let times: Vec<f32> = (0..n)
            .map(|i| {
                let r = next();
                match r % 6 {
                    0 => f32::from_bits((r >> 16) as u32),
                    1 => special[(r >> 8) as usize % special.len()],
                    2 => time + ((r >> 8) % 4000) as f32 * 0.0275 - 50.0,
                    _ => (i as f32 * 0.618_034).fract() * 40.0 - 20.0 + (r >> 60) as f32 * 1e3,
                }
            })
            .collect();
        let mut plain = vec![SlotRef::default(); n];
        pool.map_scalar(&tracks, &times, &mut plain);
        let mut kernels: Vec<(&str, super::simd::Kernel)> = vec![("sse2", |rows, tracks, times, out| {
            super::simd::map_instances_sse2(rows, tracks, times, out)
        })];
        if std::arch::is_x86_feature_detected!("avx2") {
            kernels.push(("avx2", |rows, tracks, times, out| {
                // SAFETY: the CPU has AVX2, checked just above.
                #[allow(unsafe_code, reason = "calling the AVX2 kernel after detecting AVX2")]
                unsafe {
                    super::simd::map_instances_avx2(rows, tracks, times, out)
                }
            }));
        }
        for (name, kernel) in kernels {
            let mut fast = vec![SlotRef::default(); n];
            let (done, scan) = kernel(&pool.rows, &tracks, &times, &mut fast);
            assert!(done > n - 8 && done <= n, "{name}: {done} of {n}");
            assert_eq!(scan, Scan::of(&tracks[..done], &times[..done]), "{name}");
            for i in 0..done {
                let (f, p) = (fast[i], plain[i]);
                assert_eq!(
                    (f.slot_a, f.slot_b, f.fraction.to_bits()),
                    (p.slot_a, p.slot_b, p.fraction.to_bits()),
                    "{name}, frame {frame}, instance {i}: track {}, time {}",
                    tracks[i],
                    times[i]
                );
            }
        }
    }
}
