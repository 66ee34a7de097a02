//! `BlendingJob`: N weighted layers to one local pose.
//!
//! The job walks the output one SoA element (four joints) at a time and, for each, accumulates every layer in
//! registers, so it needs no scratch memory at all. Per-joint weights come from the layers' optional masks,
//! one `Vec4` per four joints, and every computation runs on the four lanes at once.

use glam::Vec4;

use crate::{Error, Result, SoaQuat, SoaTransform, SoaVec3};

/// The job's name in errors.
const JOB: &str = "BlendingJob";

/// One input of a [`BlendingJob`].
#[derive(Clone, Copy, Debug)]
pub struct BlendLayer<'a> {
    /// The layer's local pose.
    pub transform: &'a [SoaTransform],
    /// The layer's weight, finite and non-negative.
    pub weight: f32,
    /// Optional per-joint weights (a mask, e.g. upper body), SoA: one `Vec4` per four joints, each lane in
    /// `[0, 1]`; multiplied by `weight`.
    pub joint_weights: Option<&'a [Vec4]>,
}

/// The threshold of [`crossfade`]: its two layer weights sum to one, so the rest pose never fills in, and any
/// positive value below one gives the same result.
const CROSSFADE_THRESHOLD: f32 = 0.1;

/// A crossfade from `from` to `to` into `output`: the two-layer [`BlendingJob`] with weights `1 - weight` and
/// `weight` and a threshold of 0.1 (the weights sum to one, so the rest pose never fills in), as the pose pool's crossfade buckets, crowd-frame's unique
/// instances and its reference blend. Never allocates.
///
/// # Errors
///
/// As [`BlendingJob::validate`]: a layer shorter than `output` or `rest_pose` shorter than `output`, or a `weight`
/// outside `[0, 1]` or not finite (a layer weight that is negative or not finite).
pub fn crossfade(
    from: &[SoaTransform],
    to: &[SoaTransform],
    weight: f32,
    rest_pose: &[SoaTransform],
    output: &mut [SoaTransform],
) -> Result<()> {
    let layers = [
        BlendLayer {
            transform: from,
            weight: 1.0 - weight,
            joint_weights: None,
        },
        BlendLayer {
            transform: to,
            weight,
            joint_weights: None,
        },
    ];
    BlendingJob {
        layers: &layers,
        additive: &[],
        rest_pose,
        threshold: CROSSFADE_THRESHOLD,
        output,
    }
    .run()
}

/// Blends normal layers by weight, falls back to the rest pose where the total weight is under `threshold`,
/// then applies additive layers on top.
///
/// For each joint, the weight of a layer is `weight` times the joint's lane of `joint_weights` (one when the
/// layer has no mask). Layers of weight zero are skipped.
///
/// Normal layers:
/// - translations and scales are weighted sums;
/// - rotations are a weighted sum of quaternions, each negated where its dot product with the joint's first
///   contributing layer (the first of positive weight) is negative, so that all of them lie in the same
///   hemisphere; the sum is normalized at the end;
/// - where the total weight of a joint is below `threshold`, the rest pose fills in with weight
///   `threshold - total`, as in ozz-animation, so that the total becomes `threshold`;
/// - translations and scales are then divided by the total weight.
///
/// With no normal layer of positive weight, the output is therefore the rest pose.
///
/// Additive layers are then applied in order. An additive layer's pose is a delta from the rest pose, as an
/// additive clip stores it: `Δt = t - t_rest`, `Δq = q_rest⁻¹ * q` and `Δs = s / s_rest` (component-wise),
/// so that the identity transform is no change. With the joint's weight `w`:
/// - `translation += w * Δt`;
/// - `rotation = rotation * nlerp(identity, Δq, w)`, with `Δq` negated where `Δq.w < 0` (the shorter path);
/// - `scale *= lerp(1, Δs, w)`.
///
/// Validity rules:
/// - every layer pose and `rest_pose` has at least `output.len()` elements;
/// - every `joint_weights` has at least `output.len()` elements with lanes finite and in `[0, 1]`
///   (all four lanes of the first `output.len()` elements are checked, padding lanes included);
/// - weights are finite and non-negative; `threshold` is finite and positive.
///
/// The same rules hold for normal and additive layers.
/// The length of `output` defines the SoA elements processed: every element of `output` is written, and the
/// elements of the layer poses, masks and `rest_pose` beyond `output.len()` are ignored.
///
/// # Numeric error
///
/// Translations and scales are within a few ulps of the weighted mean (relative to the largest input);
/// rotations are unit quaternions to within about `1e-6`.
///
/// # Example: a crossfade
///
/// A crossfade from pose `a` to pose `b` is a two-layer blend with weights `1 - α` and `α`.
///
/// ```
/// use anim_pose::{BlendLayer, BlendingJob, SoaTransform, SoaVec3};
/// use glam::{Vec3, Vec4};
///
/// let a = [SoaTransform::IDENTITY];
/// let mut b = [SoaTransform::IDENTITY];
/// b[0].translation = SoaVec3::splat(Vec3::new(2.0, 0.0, 0.0));
/// let rest = [SoaTransform::IDENTITY];
/// let alpha = 0.25;
/// let layers = [
///     BlendLayer { transform: &a, weight: 1.0 - alpha, joint_weights: None },
///     BlendLayer { transform: &b, weight: alpha, joint_weights: None },
/// ];
/// let mut output = [SoaTransform::IDENTITY];
/// BlendingJob { layers: &layers, additive: &[], rest_pose: &rest, threshold: 0.1, output: &mut output }.run()?;
/// assert_eq!(output[0].translation.x, Vec4::splat(0.5));
/// # Ok::<(), anim_pose::Error>(())
/// ```
pub struct BlendingJob<'a> {
    /// Normal layers.
    pub layers: &'a [BlendLayer<'a>],
    /// Additive layers: deltas from the rest pose, scaled by weight.
    pub additive: &'a [BlendLayer<'a>],
    /// The rest pose, used where normal layers carry too little weight.
    pub rest_pose: &'a [SoaTransform],
    /// Total weight under which the rest pose fills in.
    pub threshold: f32,
    /// The blended local pose.
    pub output: &'a mut [SoaTransform],
}

impl BlendingJob<'_> {
    /// Checks the validity rules (O(layers), plus O(joints) for masks).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Job`] naming the field and layer at fault.
    pub fn validate(&self) -> Result<()> {
        let n = self.output.len();
        if !(self.threshold.is_finite() && self.threshold > 0.0) {
            return Err(Error::job(JOB, "threshold", None, "is not finite and positive"));
        }
        if self.rest_pose.len() < n {
            return Err(Error::job(JOB, "rest_pose", None, "is shorter than output"));
        }
        for (field, layers) in [("layers", self.layers), ("additive", self.additive)] {
            for (i, layer) in layers.iter().enumerate() {
                validate_layer(field, i, layer, n)?;
            }
        }
        Ok(())
    }

    /// Validates, then blends. Never allocates.
    ///
    /// # Errors
    ///
    /// As [`BlendingJob::validate`].
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let threshold = Vec4::splat(self.threshold);
        for (g, (out, rest)) in self.output.iter_mut().zip(self.rest_pose).enumerate() {
            let mut acc = Accumulator::new();
            for layer in self.layers.iter().filter(|layer| layer.weight > 0.0) {
                acc.add(&layer.transform[g], lane_weights(layer, g));
            }
            // The rest pose fills in where the layers carry less than the threshold.
            acc.add(rest, (threshold - acc.total).max(Vec4::ZERO));
            let inv_total = acc.total.max(threshold).recip();
            let mut blended = SoaTransform {
                translation: scale_vec3(&acc.translation, inv_total),
                rotation: acc.rotation.normalize(),
                scale: scale_vec3(&acc.scale, inv_total),
            };
            for layer in self.additive.iter().filter(|layer| layer.weight > 0.0) {
                apply_additive(&mut blended, &layer.transform[g], lane_weights(layer, g));
            }
            *out = blended;
        }
        Ok(())
    }
}

/// Checks one layer of `field` (`"layers"` or `"additive"`) against `n` output elements.
fn validate_layer(field: &'static str, index: usize, layer: &BlendLayer<'_>, n: usize) -> Result<()> {
    let fail = |reason| Err(Error::job(JOB, field, Some(index), reason));
    if !(layer.weight.is_finite() && layer.weight >= 0.0) {
        return fail("has a weight that is not finite and non-negative");
    }
    if layer.transform.len() < n {
        return fail("has a pose shorter than output");
    }
    if let Some(mask) = layer.joint_weights {
        if mask.len() < n {
            return fail("has joint_weights shorter than output");
        }
        // NaN lanes fail both comparisons.
        let in_range = |w: &Vec4| (w.cmpge(Vec4::ZERO) & w.cmple(Vec4::ONE)).all();
        if !mask[..n].iter().all(in_range) {
            return fail("has a joint weight that is not finite and in [0, 1]");
        }
    }
    Ok(())
}

/// The weights of `layer` for the four joints of SoA element `g`.
#[inline]
fn lane_weights(layer: &BlendLayer<'_>, g: usize) -> Vec4 {
    let weight = Vec4::splat(layer.weight);
    match layer.joint_weights {
        Some(mask) => weight * mask[g],
        None => weight,
    }
}

/// Weighted sums of the normal layers for four joints.
struct Accumulator {
    /// The weighted sum of translations.
    translation: SoaVec3,
    /// The weighted sum of hemisphere-aligned rotations.
    rotation: SoaQuat,
    /// The weighted sum of scales.
    scale: SoaVec3,
    /// The sum of weights.
    total: Vec4,
    /// The first contributing rotation per lane, against which later ones are aligned; zero in the lanes that
    /// have none yet (inputs are unit quaternions, so a set reference is never zero).
    reference: SoaQuat,
}

impl Accumulator {
    /// An empty accumulator: all sums zero, no reference.
    fn new() -> Self {
        let zero_quat = SoaQuat {
            x: Vec4::ZERO,
            y: Vec4::ZERO,
            z: Vec4::ZERO,
            w: Vec4::ZERO,
        };
        Self {
            translation: SoaVec3::ZERO,
            rotation: zero_quat,
            scale: SoaVec3::ZERO,
            total: Vec4::ZERO,
            reference: zero_quat,
        }
    }

    /// Adds `t` with weight `w` per lane.
    #[inline]
    fn add(&mut self, t: &SoaTransform, w: Vec4) {
        let q = &t.rotation;
        // Lanes without a reference have a zero reference, so their dot product is zero and nothing flips.
        let flip = self.reference.dot(q).cmplt(Vec4::ZERO);
        let wq = Vec4::select(flip, -w, w);
        self.rotation.x += q.x * wq;
        self.rotation.y += q.y * wq;
        self.rotation.z += q.z * wq;
        self.rotation.w += q.w * wq;
        let first = w.cmpgt(Vec4::ZERO) & self.reference.dot(&self.reference).cmpeq(Vec4::ZERO);
        self.reference = SoaQuat {
            x: Vec4::select(first, q.x, self.reference.x),
            y: Vec4::select(first, q.y, self.reference.y),
            z: Vec4::select(first, q.z, self.reference.z),
            w: Vec4::select(first, q.w, self.reference.w),
        };
        self.translation = mul_add_vec3(&t.translation, w, &self.translation);
        self.scale = mul_add_vec3(&t.scale, w, &self.scale);
        self.total += w;
    }
}

/// Applies the additive delta `delta` with weight `w` per lane to `pose`.
#[inline]
fn apply_additive(pose: &mut SoaTransform, delta: &SoaTransform, w: Vec4) {
    pose.translation = mul_add_vec3(&delta.translation, w, &pose.translation);
    pose.rotation = quat_mul(&pose.rotation, &SoaQuat::nlerp(&SoaQuat::IDENTITY, &delta.rotation, w));
    let s = SoaVec3::lerp(&SoaVec3::ONE, &delta.scale, w);
    pose.scale = SoaVec3 {
        x: pose.scale.x * s.x,
        y: pose.scale.y * s.y,
        z: pose.scale.z * s.z,
    };
}

/// `v * s + acc` per lane.
#[inline]
fn mul_add_vec3(v: &SoaVec3, s: Vec4, acc: &SoaVec3) -> SoaVec3 {
    SoaVec3 {
        x: v.x * s + acc.x,
        y: v.y * s + acc.y,
        z: v.z * s + acc.z,
    }
}

/// `v * s` per lane.
#[inline]
fn scale_vec3(v: &SoaVec3, s: Vec4) -> SoaVec3 {
    SoaVec3 {
        x: v.x * s,
        y: v.y * s,
        z: v.z * s,
    }
}

/// The Hamilton product `a * b` per lane (rotate by `b`, then by `a`), as glam's `Quat` product.
#[inline]
fn quat_mul(a: &SoaQuat, b: &SoaQuat) -> SoaQuat {
    SoaQuat {
        x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
        y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
        z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
        w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::Transform;

    fn pose(seed: f32) -> [SoaTransform; 2] {
        let mut pose = [SoaTransform::IDENTITY; 2];
        for j in 0..8 {
            let s = seed + j as f32;
            let t = Transform {
                translation: Vec3::new(s, -0.5 * s, 0.25),
                rotation: Quat::from_euler(glam::EulerRot::XYZ, 0.3 * s, -0.2, 0.1 * s),
                scale: Vec3::new(1.0 + 0.1 * s, 0.9, 1.2),
            };
            pose[j / 4].set_lane(j % 4, &t);
        }
        pose
    }

    fn assert_pose_close(got: &[SoaTransform], want: &[SoaTransform]) {
        for (g, (a, b)) in got.iter().zip(want).enumerate() {
            for lane in 0..4 {
                let (a, b) = (a.lane(lane), b.lane(lane));
                assert!(
                    a.translation.abs_diff_eq(b.translation, 1e-5),
                    "joint {}: {a:?} vs {b:?}",
                    4 * g + lane
                );
                assert!(
                    a.scale.abs_diff_eq(b.scale, 1e-5),
                    "joint {}: {a:?} vs {b:?}",
                    4 * g + lane
                );
                assert!(
                    a.rotation.dot(b.rotation).abs() > 1.0 - 1e-6,
                    "joint {}: {a:?} vs {b:?}",
                    4 * g + lane
                );
            }
        }
    }

    #[test]
    fn validity_rules() {
        let p = pose(0.0);
        let short = &p[..1];
        let mask = [Vec4::ONE; 2];
        let mask_short = [Vec4::ONE; 1];
        let mask_high = [Vec4::ONE, Vec4::new(1.0, 1.5, 1.0, 1.0)];
        let mask_low = [Vec4::new(-0.1, 1.0, 1.0, 1.0), Vec4::ONE];
        let mask_nan = [Vec4::ONE, Vec4::new(1.0, 1.0, 1.0, f32::NAN)];
        let layer = |transform, weight, joint_weights| BlendLayer {
            transform,
            weight,
            joint_weights,
        };
        let ok = layer(&p[..], 1.0, Some(&mask[..]));
        // Each row: normal layers, additive layers, rest pose, threshold, and the expected (field, index) at
        // fault, or None when valid.
        type Row<'a> = (
            Vec<BlendLayer<'a>>,
            Vec<BlendLayer<'a>>,
            &'a [SoaTransform],
            f32,
            Option<(&'a str, Option<usize>)>,
        );
        let rows: Vec<Row<'_>> = vec![
            (vec![ok, ok], vec![ok], &p, 0.1, None),
            (vec![], vec![], &p, 0.1, None),
            (vec![layer(&p, 0.0, None)], vec![], &p, 1e-3, None),
            (
                vec![ok, layer(&p, f32::NAN, None)],
                vec![],
                &p,
                0.1,
                Some(("layers", Some(1))),
            ),
            (vec![layer(&p, -0.5, None)], vec![], &p, 0.1, Some(("layers", Some(0)))),
            (
                vec![layer(&p, f32::INFINITY, None)],
                vec![],
                &p,
                0.1,
                Some(("layers", Some(0))),
            ),
            (
                vec![ok],
                vec![layer(&p, -1.0, None)],
                &p,
                0.1,
                Some(("additive", Some(0))),
            ),
            (
                vec![layer(&p, 1.0, Some(&mask_short))],
                vec![],
                &p,
                0.1,
                Some(("layers", Some(0))),
            ),
            (
                vec![layer(&p, 1.0, Some(&mask_high))],
                vec![],
                &p,
                0.1,
                Some(("layers", Some(0))),
            ),
            (
                vec![layer(&p, 1.0, Some(&mask_low))],
                vec![],
                &p,
                0.1,
                Some(("layers", Some(0))),
            ),
            (
                vec![ok],
                vec![layer(&p, 1.0, Some(&mask_nan))],
                &p,
                0.1,
                Some(("additive", Some(0))),
            ),
            (
                vec![ok, ok, layer(short, 1.0, None)],
                vec![],
                &p,
                0.1,
                Some(("layers", Some(2))),
            ),
            (
                vec![ok],
                vec![ok, layer(short, 1.0, None)],
                &p,
                0.1,
                Some(("additive", Some(1))),
            ),
            (vec![ok], vec![], short, 0.1, Some(("rest_pose", None))),
            (vec![ok], vec![], &p, f32::NAN, Some(("threshold", None))),
            (vec![ok], vec![], &p, f32::INFINITY, Some(("threshold", None))),
            (vec![ok], vec![], &p, 0.0, Some(("threshold", None))),
            (vec![ok], vec![], &p, -1.0, Some(("threshold", None))),
        ];
        for (row, (layers, additive, rest_pose, threshold, fault)) in rows.into_iter().enumerate() {
            let mut output = [SoaTransform::IDENTITY; 2];
            let mut job = BlendingJob {
                layers: &layers,
                additive: &additive,
                rest_pose,
                threshold,
                output: &mut output,
            };
            match (fault, job.run()) {
                (None, Ok(())) => {}
                (
                    Some((field, index)),
                    Err(Error::Job {
                        job,
                        field: got,
                        index: got_index,
                        ..
                    }),
                ) => {
                    assert_eq!((job, got, got_index), (JOB, field, index), "row {row}");
                }
                (fault, result) => panic!("row {row}: expected fault {fault:?}, got {result:?}"),
            }
        }
    }

    #[test]
    fn crossfade_end_points_reproduce_each_input() {
        let (a, b, rest) = (pose(0.0), pose(3.0), pose(-7.0));
        for (alpha, want) in [(0.0, &a), (1.0, &b)] {
            let layers = [
                BlendLayer {
                    transform: &a,
                    weight: 1.0 - alpha,
                    joint_weights: None,
                },
                BlendLayer {
                    transform: &b,
                    weight: alpha,
                    joint_weights: None,
                },
            ];
            let mut output = [SoaTransform::IDENTITY; 2];
            BlendingJob {
                layers: &layers,
                additive: &[],
                rest_pose: &rest,
                threshold: 0.1,
                output: &mut output,
            }
            .run()
            .expect("valid job");
            assert_pose_close(&output, want);
        }
    }

    /// `crossfade` is the two-layer job, bit for bit, at the ends and in between; a weight past `[0, 1]` or NaN is
    /// refused as a layer weight.
    #[test]
    fn crossfade_is_the_two_layer_job_and_refuses_weights_past_one() {
        let (a, b, rest) = (pose(0.0), pose(3.0), pose(-7.0));
        for w in [0.0, 0.3, 0.5, 1.0] {
            let layers = [
                BlendLayer {
                    transform: &a,
                    weight: 1.0 - w,
                    joint_weights: None,
                },
                BlendLayer {
                    transform: &b,
                    weight: w,
                    joint_weights: None,
                },
            ];
            let mut want = [SoaTransform::IDENTITY; 2];
            BlendingJob {
                layers: &layers,
                additive: &[],
                rest_pose: &rest,
                threshold: 0.1,
                output: &mut want,
            }
            .run()
            .expect("valid job");
            let mut got = [SoaTransform::IDENTITY; 2];
            crossfade(&a, &b, w, &rest, &mut got).expect("valid crossfade");
            assert_eq!(got, want, "weight {w}");
        }
        let mut out = [SoaTransform::IDENTITY; 2];
        for w in [1.5, -0.5, f32::NAN] {
            let err = crossfade(&a, &b, w, &rest, &mut out).expect_err("a weight outside [0, 1]");
            assert!(err.to_string().contains("layers"), "{w}: {err}");
        }
    }

    #[test]
    fn no_weight_gives_the_rest_pose_and_surplus_inputs_are_ignored() {
        let (a, rest) = (pose(0.0), pose(-7.0));
        let layers = [BlendLayer {
            transform: &a,
            weight: 0.0,
            joint_weights: None,
        }];
        let mut output = [SoaTransform::IDENTITY; 1];
        BlendingJob {
            layers: &layers,
            additive: &[],
            rest_pose: &rest,
            threshold: 0.5,
            output: &mut output,
        }
        .run()
        .expect("valid job");
        assert_pose_close(&output, &rest[..1]);
    }

    #[test]
    fn additive_delta_from_the_rest_pose_restores_the_pose() {
        // A delta computed from the rest pose, applied at weight one on top of the rest pose, gives the pose.
        let (target, rest) = (pose(2.0), pose(-1.0));
        let mut delta = [SoaTransform::IDENTITY; 2];
        for j in 0..8 {
            let (t, r) = (target[j / 4].lane(j % 4), rest[j / 4].lane(j % 4));
            let d = Transform {
                translation: t.translation - r.translation,
                rotation: r.rotation.inverse() * t.rotation,
                scale: t.scale / r.scale,
            };
            delta[j / 4].set_lane(j % 4, &d);
        }
        let additive = [BlendLayer {
            transform: &delta,
            weight: 1.0,
            joint_weights: None,
        }];
        let mut output = [SoaTransform::IDENTITY; 2];
        BlendingJob {
            layers: &[],
            additive: &additive,
            rest_pose: &rest,
            threshold: 1.0,
            output: &mut output,
        }
        .run()
        .expect("valid job");
        assert_pose_close(&output, &target);
    }
}
