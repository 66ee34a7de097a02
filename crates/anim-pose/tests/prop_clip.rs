//! Property tests of the exact evaluator and the reference local-to-model conversion.
//!
//! - Every interpolation mode reproduces its key values at the key times.
//! - STEP is piecewise constant; LINEAR translations stay inside the segment's box; rotations are unit.
//! - `Skeleton::local_to_model` on random hierarchies matches a walk up each joint's parent chain.

use anim_pose::{Channel, Interpolation, NO_PARENT, Property, Skeleton, Transform};
use glam::{Mat4, Quat, Vec3, Vec4};
use proptest::prelude::*;

fn times_strategy() -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec(0.01f32..1.0, 2..12).prop_map(|gaps| {
        let mut t = 0.0;
        gaps.iter()
            .map(|g| {
                t += g;
                t
            })
            .collect()
    })
}

fn vec_strategy() -> impl Strategy<Value = Vec4> {
    (-10.0f32..10.0, -10.0f32..10.0, -10.0f32..10.0).prop_map(|(x, y, z)| Vec4::new(x, y, z, 0.0))
}

fn quat_strategy() -> impl Strategy<Value = Vec4> {
    (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
        .prop_filter("non-degenerate", |(x, y, z, w)| x * x + y * y + z * z + w * w > 0.01)
        .prop_map(|(x, y, z, w)| Vec4::new(x, y, z, w).normalize())
}

fn interpolation_strategy() -> impl Strategy<Value = Interpolation> {
    prop_oneof![
        Just(Interpolation::Step),
        Just(Interpolation::Linear),
        Just(Interpolation::CubicSpline)
    ]
}

fn channel(
    property: Property,
    interpolation: Interpolation,
    times: Vec<f32>,
    keys: &[Vec4],
    tangents: &[Vec4],
) -> Channel {
    let values = if interpolation == Interpolation::CubicSpline {
        keys.iter()
            .zip(tangents.iter().cycle())
            .flat_map(|(&k, &t)| [t, k, -t])
            .collect()
    } else {
        keys.to_vec()
    };
    Channel {
        joint: 0,
        property,
        interpolation,
        times,
        values,
    }
}

proptest! {
    #[test]
    fn keys_are_reproduced_at_key_times(
        (times, keys) in times_strategy().prop_flat_map(|t| {
            let n = t.len();
            (Just(t), prop::collection::vec(vec_strategy(), n))
        }),
        tangents in prop::collection::vec(vec_strategy(), 1..4),
        interpolation in interpolation_strategy(),
    ) {
        let c = channel(Property::Translation, interpolation, times.clone(), &keys, &tangents);
        c.validate().expect("valid");
        for (t, k) in times.iter().zip(&keys) {
            let v = c.sample(*t);
            prop_assert!(v.abs_diff_eq(*k, 1e-4), "{:?} at {t}: {v} != {k}", interpolation);
        }
        prop_assert!(c.sample(times[0] - 5.0).abs_diff_eq(keys[0], 1e-6));
        prop_assert!(c.sample(times[times.len() - 1] + 5.0).abs_diff_eq(keys[keys.len() - 1], 1e-6));
    }

    #[test]
    fn step_and_linear_stay_within_their_segment(
        (times, keys) in times_strategy().prop_flat_map(|t| {
            let n = t.len();
            (Just(t), prop::collection::vec(vec_strategy(), n))
        }),
        u in 0.0f32..1.0,
        segment in 0usize..16,
    ) {
        let k = segment % (times.len() - 1);
        let t = times[k] + u * (times[k + 1] - times[k]);
        let step = channel(Property::Translation, Interpolation::Step, times.clone(), &keys, &[]);
        if t < times[k + 1] {
            prop_assert_eq!(step.sample(t), keys[k]);
        }
        let linear = channel(Property::Translation, Interpolation::Linear, times.clone(), &keys, &[]);
        let v = linear.sample(t);
        let lo = keys[k].min(keys[k + 1]) - Vec4::splat(1e-4);
        let hi = keys[k].max(keys[k + 1]) + Vec4::splat(1e-4);
        prop_assert!(v.cmpge(lo).all() && v.cmple(hi).all(), "{v} outside [{lo}, {hi}]");
    }

    #[test]
    fn rotations_are_unit_and_linear_rotation_takes_the_short_way(
        (times, keys) in times_strategy().prop_flat_map(|t| {
            let n = t.len();
            (Just(t), prop::collection::vec(quat_strategy(), n))
        }),
        tangents in prop::collection::vec(quat_strategy(), 1..4),
        interpolation in interpolation_strategy(),
        u in 0.0f32..1.0,
    ) {
        let c = channel(Property::Rotation, interpolation, times.clone(), &keys, &tangents);
        let t = times[0] + u * (times[times.len() - 1] - times[0]);
        let q = c.sample(t);
        prop_assert!((q.length() - 1.0).abs() < 1e-5, "|q| = {}", q.length());
        if interpolation == Interpolation::Linear {
            // On the shortest arc, the angle to either end is at most the angle between the ends.
            let k = times.partition_point(|&x| x <= t).clamp(1, times.len() - 1) - 1;
            let (a, b) = (Quat::from_vec4(keys[k]), Quat::from_vec4(keys[k + 1]));
            let q = Quat::from_vec4(q);
            let total = a.angle_between(b);
            prop_assert!(a.angle_between(q) <= total + 1e-3 && q.angle_between(b) <= total + 1e-3);
        }
    }

    #[test]
    fn local_to_model_matches_parent_chain_products(
        parents_raw in prop::collection::vec(any::<u16>(), 1..40),
        seed in prop::collection::vec((-2.0f32..2.0, -3.0f32..3.0, 0.5f32..2.0), 40),
    ) {
        let n = parents_raw.len();
        let parents: Vec<u16> = parents_raw
            .iter()
            .enumerate()
            .map(|(i, &r)| if i == 0 { NO_PARENT } else { r % i as u16 })
            .collect();
        let rest_pose: Vec<Transform> = (0..n)
            .map(|i| {
                let (a, b, s) = seed[i];
                Transform {
                    translation: Vec3::new(a, b, a - b),
                    rotation: Quat::from_euler(glam::EulerRot::YXZ, a, b, a * b),
                    scale: Vec3::splat(s),
                }
            })
            .collect();
        let skeleton =
            Skeleton::from_parents("random", parents.clone(), rest_pose.clone()).expect("valid random skeleton");
        let mut model = vec![Mat4::IDENTITY; n];
        skeleton.local_to_model(&rest_pose, &mut model).expect("sizes match");
        for (i, got) in model.iter().enumerate() {
            let mut m = Mat4::IDENTITY;
            let mut j = i;
            loop {
                m = rest_pose[j].to_mat4() * m;
                if parents[j] == NO_PARENT {
                    break;
                }
                j = usize::from(parents[j]);
            }
            let scale = m.abs().to_cols_array().iter().fold(1.0f32, |a, &b| a.max(b));
            prop_assert!(got.abs_diff_eq(m, 1e-4 * scale), "joint {i}");
        }
    }
}
