//! Property tests of `PosePool::map_instances` against its plain twin `PosePool::map_instances_scalar`.
//!
//! `map_instances` maps with a SIMD kernel where the target has one (AVX2 or SSE2 on x86_64, unless the `scalar`
//! feature is on) and the scalar kernel for the rest; both must give the same bits for every instance, and the same
//! result, over random pools (looping and non-looping clips of random durations and slot counts, crossfade buckets
//! in every state), random tracks (out-of-range ones too) and random time bits (infinities, NaNs, huge and tiny
//! times, slot boundaries, clip ends), at every batch length and output offset.

use anim_pose::{
    Channel, Clip, ErrorBudget, Interpolation, Looping, NO_PARENT, PoolClip, PosePool, PosePoolOptions, Property,
    RuntimeClip, RuntimeClipOptions, Skeleton, SlotRef, Transform,
};
use glam::{Quat, Vec3, Vec4};
use proptest::prelude::*;

/// A two-joint skeleton: the mapping only depends on the clips' durations and looping.
fn skeleton() -> Skeleton {
    let rest = Transform {
        translation: Vec3::Y,
        ..Transform::IDENTITY
    };
    Skeleton::from_parents("pair", vec![NO_PARENT, 0], vec![rest; 2]).expect("a valid skeleton")
}

/// A clip of `duration` seconds that holds the second joint turned: constant, so that it builds at any duration.
fn clip(skeleton: &Skeleton, duration: f32, looping: bool) -> RuntimeClip {
    let channel = Channel {
        joint: 1,
        property: Property::Rotation,
        interpolation: Interpolation::Linear,
        times: vec![0.0, duration],
        values: vec![Vec4::from(Quat::from_rotation_z(0.5)); 2],
    };
    let clip = Clip {
        name: "clip".into(),
        animation: 0,
        skeleton: 0,
        duration,
        channels: vec![channel],
    };
    let options = RuntimeClipOptions {
        looping: if looping { Looping::Yes } else { Looping::No },
        budget: ErrorBudget {
            translation: 1e-2,
            rotation: 1e-2,
        },
        ..RuntimeClipOptions::default()
    };
    RuntimeClip::build(&clip, skeleton, &options).expect("the clip builds")
}

/// One step of a pool's life before the instances are mapped.
#[derive(Clone, Debug)]
enum Op {
    /// `PosePool::update` at a time.
    Update(f32),
    /// `PosePool::request_crossfade(from, to, weight)`, clips taken modulo the clip count.
    Request(u16, u16, f32),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        (-2.0e4f32..2.0e4).prop_map(Op::Update),
        (0u16..8, 0u16..8, 0.0f32..=1.0).prop_map(|(a, b, w)| Op::Request(a, b, w)),
    ]
}

/// A track: usually in range (taken modulo the track count), sometimes past it or at the end of `u16`.
fn track_strategy() -> impl Strategy<Value = (u8, u16)> {
    (0u8..20, any::<u16>())
}

/// A time: any bit pattern, a time near the pool's range, a boundary-like multiple, or an exact small value.
fn time_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        -1.0e4f32..1.0e4,
        -20.0f32..20.0,
        (-4000i32..4000, 1u32..301).prop_map(|(i, k)| i as f32 / k as f32),
        prop::sample::select(vec![
            0.0,
            -0.0,
            0.25,
            0.5,
            1.0,
            2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            1.0e30,
            -1.0e30,
        ]),
    ]
}

/// The bits of a slot ref, so that fractions compare bit for bit.
fn bits(r: &SlotRef) -> (u16, u16, u32) {
    (r.slot_a, r.slot_b, r.fraction.to_bits())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn simd_and_scalar_kernels_give_the_same_bits(
        specs in prop::collection::vec((0.01f32..30.0, any::<bool>(), 2usize..301), 1..6),
        cap in 1usize..5,
        levels in 2usize..7,
        ops in prop::collection::vec(op_strategy(), 0..12),
        instances in prop::collection::vec((track_strategy(), time_strategy()), 0..80),
        offset in 0usize..4,
    ) {
        let skeleton = skeleton();
        let clips: Vec<RuntimeClip> = specs.iter().map(|&(d, looping, _)| clip(&skeleton, d, looping)).collect();
        let pool_clips: Vec<PoolClip<'_>> =
            clips.iter().zip(&specs).map(|(clip, &(_, _, slots))| PoolClip { clip, slots }).collect();
        let options = PosePoolOptions { crossfade_levels: levels, max_crossfade_buckets: cap, parallel: false };
        let mut pool = PosePool::new(&skeleton, &pool_clips, &options).expect("valid");
        let n_clips = clips.len() as u16;
        for op in ops {
            match op {
                Op::Update(time) => pool.update(time).expect("updates"),
                Op::Request(from, to, weight) => {
                    pool.request_crossfade(from % n_clips, to % n_clips, weight).expect("requests");
                }
            }
        }
        let count = pool.track_count() as u16;
        let tracks: Vec<u16> = instances
            .iter()
            .map(|&((kind, raw), _)| match kind {
                0 => raw,
                1 => u16::MAX,
                2 => count,
                _ => raw % count,
            })
            .collect();
        let times: Vec<f32> = instances.iter().map(|&(_, t)| t).collect();
        let n = tracks.len();
        let mut fast = vec![SlotRef::default(); n + 4];
        let mut plain = vec![SlotRef::default(); n + 4];
        let fast_result = pool.map_instances(&tracks, &times, &mut fast[offset..]);
        let plain_result = pool.map_instances_scalar(&tracks, &times, &mut plain[offset..]);
        prop_assert_eq!(fast_result.is_ok(), plain_result.is_ok());
        for (i, (f, p)) in fast.iter().zip(&plain).enumerate() {
            prop_assert_eq!(
                bits(f),
                bits(p),
                "instance {} of {} (offset {}): track {:?}, time {:?}",
                i as isize - offset as isize,
                n,
                offset,
                tracks.get(i.wrapping_sub(offset)),
                times.get(i.wrapping_sub(offset))
            );
        }
        // Surplus elements are untouched.
        prop_assert!(fast[..offset].iter().chain(&fast[offset + n..]).all(|r| bits(r) == bits(&SlotRef::default())));
    }
}

/// Long batches of every track at dense times: both kernels' main loops, and the scalar tail, at every length
/// modulo 8.
#[test]
fn long_batches_give_the_same_bits() {
    let skeleton = skeleton();
    let clips = [
        clip(&skeleton, 1.1, true),
        clip(&skeleton, 0.7, true),
        clip(&skeleton, 2.0, false),
        clip(&skeleton, 0.3, false),
    ];
    let slots = [7, 32, 5, 300];
    let pool_clips: Vec<PoolClip<'_>> = clips
        .iter()
        .zip(slots)
        .map(|(clip, slots)| PoolClip { clip, slots })
        .collect();
    let options = PosePoolOptions {
        max_crossfade_buckets: 3,
        parallel: false,
        ..PosePoolOptions::default()
    };
    let mut pool = PosePool::new(&skeleton, &pool_clips, &options).expect("valid");
    pool.request_crossfade(0, 1, 0.4).expect("requests");
    pool.request_crossfade(2, 3, 0.6).expect("requests");
    pool.update(3.7).expect("updates");
    let tracks: Vec<u16> = (0..4099u32)
        .map(|i| ((i * 5 + i / 3) % pool.track_count() as u32) as u16)
        .collect();
    let times: Vec<f32> = (0..4099).map(|i| i as f32 * 0.013_7 - 20.0).collect();
    for len in [4099, 4098, 4097, 4096, 4095, 4094, 4093, 4092, 9, 8, 7, 3, 1, 0] {
        let mut fast = vec![SlotRef::default(); len];
        let mut plain = vec![SlotRef::default(); len];
        pool.map_instances(&tracks[..len], &times[..len], &mut fast)
            .expect("maps");
        pool.map_instances_scalar(&tracks[..len], &times[..len], &mut plain)
            .expect("maps");
        for (i, (f, p)) in fast.iter().zip(&plain).enumerate() {
            assert_eq!(bits(f), bits(p), "length {len}, instance {i}");
        }
    }
}
