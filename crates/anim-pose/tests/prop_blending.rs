//! Property tests of `BlendingJob` against a plain scalar reference over `Transform`s.
//!
//! - SoA blending equals the scalar reference for random layers, weights, masks and additive layers.
//! - Weights that sum to one over copies of one pose reproduce that pose.
//! - A layer whose quaternions are negated gives the same result (hemisphere alignment).
//! - A lower-body mask of zero leaves those joints to the other layer.

use anim_pose::{BlendLayer, BlendingJob, SoaTransform, Transform, num_soa_joints, pack_soa, unpack_soa};
use glam::{Quat, Vec3, Vec4};
use proptest::prelude::*;

/// A layer in plain form: one transform and one mask weight per joint.
#[derive(Clone, Debug)]
struct RefLayer {
    pose: Vec<Transform>,
    weight: f32,
    mask: Option<Vec<f32>>,
}

impl RefLayer {
    fn joint_weight(&self, j: usize) -> f32 {
        self.weight * self.mask.as_ref().map_or(1.0, |m| m[j])
    }
}

/// Weighted sums for one joint.
#[derive(Default)]
struct Sums {
    translation: Vec3,
    scale: Vec3,
    rotation: Vec4,
    total: f32,
    /// The first contributing rotation, against which later ones are aligned.
    reference: Option<Quat>,
}

impl Sums {
    fn add(&mut self, t: &Transform, w: f32) {
        if w <= 0.0 {
            return;
        }
        let reference = *self.reference.get_or_insert(t.rotation);
        let q = if reference.dot(t.rotation) < 0.0 {
            -t.rotation
        } else {
            t.rotation
        };
        self.translation += t.translation * w;
        self.scale += t.scale * w;
        self.rotation += Vec4::from(q) * w;
        self.total += w;
    }
}

/// The scalar reference, joint by joint, following the rules documented on `BlendingJob`.
fn blend_reference(layers: &[RefLayer], additive: &[RefLayer], rest: &[Transform], threshold: f32) -> Vec<Transform> {
    (0..rest.len())
        .map(|j| {
            let mut sums = Sums::default();
            for layer in layers {
                sums.add(&layer.pose[j], layer.joint_weight(j));
            }
            sums.add(&rest[j], (threshold - sums.total).max(0.0));
            let total = sums.total.max(threshold);
            let mut out = Transform {
                translation: sums.translation / total,
                rotation: normalize_or_identity(sums.rotation),
                scale: sums.scale / total,
            };
            for layer in additive {
                let w = layer.joint_weight(j);
                if w <= 0.0 {
                    continue;
                }
                let delta = &layer.pose[j];
                out.translation += delta.translation * w;
                let dq = if delta.rotation.w < 0.0 {
                    -delta.rotation
                } else {
                    delta.rotation
                };
                let partial = normalize_or_identity(Vec4::W + (Vec4::from(dq) - Vec4::W) * w);
                out.rotation *= partial;
                out.scale *= Vec3::ONE + (delta.scale - Vec3::ONE) * w;
            }
            out
        })
        .collect()
}

fn normalize_or_identity(q: Vec4) -> Quat {
    if q.length_squared() > 1e-20 {
        Quat::from_vec4(q.normalize())
    } else {
        Quat::IDENTITY
    }
}

fn vec3_strategy(lo: f32, hi: f32) -> impl Strategy<Value = Vec3> {
    (lo..hi, lo..hi, lo..hi).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn quat_strategy() -> impl Strategy<Value = Quat> {
    (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
        .prop_filter("non-degenerate", |(x, y, z, w)| x * x + y * y + z * z + w * w > 0.01)
        .prop_map(|(x, y, z, w)| Quat::from_xyzw(x, y, z, w).normalize())
}

fn transform_strategy() -> impl Strategy<Value = Transform> {
    (vec3_strategy(-3.0, 3.0), quat_strategy(), vec3_strategy(0.5, 2.0)).prop_map(|(translation, rotation, scale)| {
        Transform {
            translation,
            rotation,
            scale,
        }
    })
}

fn pose_strategy(n: usize) -> impl Strategy<Value = Vec<Transform>> {
    prop::collection::vec(transform_strategy(), n)
}

/// A weight that is exactly zero a fifth of the time.
fn weight_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![1 => Just(0.0f32), 4 => 0.0f32..2.0]
}

/// A mask lane that is exactly zero or one a third of the time each.
fn mask_lane_strategy() -> impl Strategy<Value = f32> {
    prop_oneof![Just(0.0f32), Just(1.0f32), 0.0f32..=1.0]
}

fn layer_strategy(n: usize) -> impl Strategy<Value = RefLayer> {
    (
        pose_strategy(n),
        weight_strategy(),
        prop::option::of(prop::collection::vec(mask_lane_strategy(), n)),
    )
        .prop_map(|(pose, weight, mask)| RefLayer { pose, weight, mask })
}

/// An additive delta: small translations, rotations and scales near the identity, sometimes far from it.
fn delta_strategy() -> impl Strategy<Value = Transform> {
    (vec3_strategy(-0.5, 0.5), quat_strategy(), vec3_strategy(0.7, 1.4)).prop_map(|(translation, rotation, scale)| {
        Transform {
            translation,
            rotation,
            scale,
        }
    })
}

fn additive_strategy(n: usize) -> impl Strategy<Value = RefLayer> {
    (
        prop::collection::vec(delta_strategy(), n),
        weight_strategy(),
        prop::option::of(prop::collection::vec(mask_lane_strategy(), n)),
    )
        .prop_map(|(pose, weight, mask)| RefLayer { pose, weight, mask })
}

/// A whole blending case: joint count, normal layers, additive layers, rest pose and threshold.
fn case_strategy() -> impl Strategy<Value = (Vec<RefLayer>, Vec<RefLayer>, Vec<Transform>, f32)> {
    (1usize..=13).prop_flat_map(|n| {
        (
            prop::collection::vec(layer_strategy(n), 0..=4),
            prop::collection::vec(additive_strategy(n), 0..=2),
            pose_strategy(n),
            prop_oneof![Just(1.0f32), 0.01f32..1.5],
        )
    })
}

/// SoA buffers for one layer: the packed pose and the packed mask (padding lanes one).
struct SoaLayer {
    pose: Vec<SoaTransform>,
    mask: Option<Vec<Vec4>>,
    weight: f32,
}

fn pack(pose: &[Transform]) -> Vec<SoaTransform> {
    let mut soa = vec![SoaTransform::IDENTITY; num_soa_joints(pose.len())];
    pack_soa(pose, &mut soa).expect("sized");
    soa
}

fn pack_layer(layer: &RefLayer) -> SoaLayer {
    let mask = layer.mask.as_ref().map(|m| {
        let mut soa = vec![Vec4::ONE; num_soa_joints(m.len())];
        for (j, &w) in m.iter().enumerate() {
            soa[j / 4][j % 4] = w;
        }
        soa
    });
    SoaLayer {
        pose: pack(&layer.pose),
        mask,
        weight: layer.weight,
    }
}

fn view(l: &SoaLayer) -> BlendLayer<'_> {
    BlendLayer {
        transform: &l.pose,
        weight: l.weight,
        joint_weights: l.mask.as_deref(),
    }
}

fn run_job(layers: &[RefLayer], additive: &[RefLayer], rest: &[Transform], threshold: f32) -> Vec<Transform> {
    let layers: Vec<SoaLayer> = layers.iter().map(pack_layer).collect();
    let additive: Vec<SoaLayer> = additive.iter().map(pack_layer).collect();
    let layer_views: Vec<BlendLayer<'_>> = layers.iter().map(view).collect();
    let additive_views: Vec<BlendLayer<'_>> = additive.iter().map(view).collect();
    let rest_soa = pack(rest);
    let mut output = vec![SoaTransform::IDENTITY; rest_soa.len()];
    BlendingJob {
        layers: &layer_views,
        additive: &additive_views,
        rest_pose: &rest_soa,
        threshold,
        output: &mut output,
    }
    .run()
    .expect("valid job");
    let mut out = vec![Transform::IDENTITY; rest.len()];
    unpack_soa(&output, &mut out).expect("sized");
    out
}

fn assert_close(got: &[Transform], want: &[Transform], tol: f32) -> Result<(), TestCaseError> {
    for (j, (a, b)) in got.iter().zip(want).enumerate() {
        let magnitude = 1.0f32
            .max(b.translation.abs().max_element())
            .max(b.scale.abs().max_element());
        prop_assert!(
            a.translation.abs_diff_eq(b.translation, tol * magnitude),
            "joint {j}: {a:?} vs {b:?}"
        );
        prop_assert!(
            a.scale.abs_diff_eq(b.scale, tol * magnitude),
            "joint {j}: {a:?} vs {b:?}"
        );
        prop_assert!(
            a.rotation.dot(b.rotation).abs() >= 1.0 - tol,
            "joint {j}: {a:?} vs {b:?}"
        );
        prop_assert!((a.rotation.length() - 1.0).abs() <= tol, "joint {j}: {a:?} is not unit");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn soa_blending_matches_scalar_reference((layers, additive, rest, threshold) in case_strategy()) {
        let got = run_job(&layers, &additive, &rest, threshold);
        let want = blend_reference(&layers, &additive, &rest, threshold);
        assert_close(&got, &want, 1e-4)?;
    }

    #[test]
    fn weights_summing_to_one_over_copies_reproduce_the_pose(
        raw_weights in prop::collection::vec(0.05f32..1.0, 1..=5),
        pose_and_rest in (1usize..=13).prop_flat_map(|n| (pose_strategy(n), pose_strategy(n))),
    ) {
        let (pose, rest) = pose_and_rest;
        let sum: f32 = raw_weights.iter().sum();
        let layers: Vec<RefLayer> =
            raw_weights.iter().map(|w| RefLayer { pose: pose.clone(), weight: w / sum, mask: None }).collect();
        let got = run_job(&layers, &[], &rest, 0.5);
        assert_close(&got, &pose, 1e-5)?;
    }

    #[test]
    fn negated_quaternions_give_the_same_result(
        (layers, additive, rest, threshold) in case_strategy(),
        pick in any::<prop::sample::Index>(),
    ) {
        let mut flipped = layers.clone();
        let mut flipped_rest = rest.clone();
        if flipped.is_empty() {
            flipped_rest.iter_mut().for_each(|t| t.rotation = -t.rotation);
        } else {
            let i = pick.index(flipped.len());
            flipped[i].pose.iter_mut().for_each(|t| t.rotation = -t.rotation);
        }
        let mut flipped_additive = additive.clone();
        flipped_additive.iter_mut().flat_map(|l| l.pose.iter_mut()).for_each(|t| t.rotation = -t.rotation);
        let got = run_job(&flipped, &flipped_additive, &flipped_rest, threshold);
        let want = run_job(&layers, &additive, &rest, threshold);
        // Rotations are compared up to sign, so the tolerance covers rounding alone.
        assert_close(&got, &want, 1e-5)?;
    }

    #[test]
    fn zero_lower_body_mask_leaves_those_joints_to_the_other_layer(
        (base, upper, rest) in (2usize..=13).prop_flat_map(|n| (pose_strategy(n), pose_strategy(n), pose_strategy(n))),
        split in any::<prop::sample::Index>(),
        upper_weight in 0.1f32..2.0,
    ) {
        let n = base.len();
        // Joints below `split` are the lower body, which the upper-body layer masks out.
        let split = 1 + split.index(n - 1);
        let mask: Vec<f32> = (0..n).map(|j| if j < split { 0.0 } else { 1.0 }).collect();
        let layers = [
            RefLayer { pose: base.clone(), weight: 1.0, mask: None },
            RefLayer { pose: upper.clone(), weight: upper_weight, mask: Some(mask) },
        ];
        let got = run_job(&layers, &[], &rest, 1.0);
        assert_close(&got[..split], &base[..split], 1e-5)?;
        let want = blend_reference(&layers, &[], &rest, 1.0);
        assert_close(&got[split..], &want[split..], 1e-4)?;
    }
}
