//! `LocalToModelJob`: a local SoA pose to model-space matrices, parent before child.
//!
//! This is the crowd hot path. Each SoA element of four local transforms becomes four affine matrices at once:
//! the quaternion-to-rotation terms, the scale and the translation are computed as `Vec4`s over the four lanes,
//! and each joint's matrix is multiplied by its parent's model-space matrix with SIMD, splatting its lane of
//! those `Vec4`s with one shuffle per element and summing in a balanced order that shortens the dependency chain
//! from parent to child. When the parent is the previous joint, its matrix is taken from registers rather than
//! reloaded from the output just stored. Partial updates and the last, partial group transpose the four lanes
//! into per-joint matrices instead.
//!
//! On x86-64 CPUs with AVX-512F, the full groups of a full update go to a kernel (`local_to_model_job/avx512.rs`)
//! that computes a joint's whole matrix in one 512-bit register, with the same operations in the same order, so
//! the results are bit for bit those of the portable code, which a property test checks.

use glam::{Affine3A, Mat3A, Mat4, Vec3A, Vec4, Vec4Swizzles};

use crate::asserts::strict_assert;
use crate::{Error, MAX_JOINTS, NO_PARENT, Result, Skeleton, SoaTransform, num_soa_joints};

/// The job's name in errors.
const JOB: &str = "LocalToModelJob";

#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
#[allow(
    unsafe_code,
    reason = "AVX-512 intrinsics, called after detecting the CPU feature; loads and stores through a pointer"
)]
mod avx512;

/// The number of `u64` words in the "updated" bitset of a partial update: one bit per joint.
const BITSET_WORDS: usize = MAX_JOINTS.div_ceil(64);

/// Converts a local SoA pose to model-space `Affine3A` matrices, parent before child.
///
/// Joint `j`'s model-space matrix is `model[parent(j)] * local(j)`, where `local(j)` is the matrix
/// `T * R * S` of lane `j % 4` of `input[j / 4]`.
/// Root joints (parent [`NO_PARENT`]) get `root * local(j)`, or `local(j)` when `root` is `None`.
///
/// Validity rules:
/// - the skeleton has at most [`MAX_JOINTS`] joints;
/// - `input` has at least `num_soa_joints(skeleton.joint_count())` elements;
/// - `output` has at least `skeleton.joint_count()` elements; surplus is untouched;
/// - `from` is `None` or a joint index below `skeleton.joint_count()`.
///
/// Surplus `input` elements, and the padding lanes of the last used element, are not read.
///
/// With `from = Some(j)`, only `j` and its descendants are updated; the other entries of `output` must already
/// hold model-space matrices (they are read as parents).
/// Descendants need not be contiguous: the job tracks them in a stack bitset of [`MAX_JOINTS`] bits.
///
/// The skeleton's own invariants (parent-before-child order) are trusted, as builders guarantee them; a parent
/// index that is not below its child's index is treated as [`NO_PARENT`], and asserted against in debug builds
/// or with the `strict-asserts` feature.
///
/// # Numeric error
///
/// Each matrix is within a few ulps of `Skeleton::local_to_model`'s result per multiplication level, relative
/// to the magnitude of the matrices involved. Rotations are assumed to be unit quaternions.
///
/// # Example
///
/// ```
/// use anim_pose::{LocalToModelJob, NO_PARENT, Skeleton, SoaTransform, Transform};
/// use glam::{Affine3A, Vec3};
///
/// let skeleton = Skeleton::from_parents("chain", vec![NO_PARENT, 0], vec![Transform::IDENTITY; 2])?;
/// let mut input = [SoaTransform::IDENTITY];
/// let step = Transform { translation: Vec3::X, ..Transform::IDENTITY };
/// input[0].set_lane(0, &step);
/// input[0].set_lane(1, &step);
/// let mut output = [Affine3A::IDENTITY; 2];
/// LocalToModelJob { skeleton: &skeleton, input: &input, output: &mut output, from: None, root: None }.run()?;
/// assert_eq!(output[1].translation, Vec3::new(2.0, 0.0, 0.0).into());
/// # Ok::<(), anim_pose::Error>(())
/// ```
pub struct LocalToModelJob<'a> {
    /// The joint hierarchy.
    pub skeleton: &'a Skeleton,
    /// The local pose.
    pub input: &'a [SoaTransform],
    /// Model-space matrices written, one per joint.
    pub output: &'a mut [Affine3A],
    /// Update only this joint and its descendants.
    pub from: Option<usize>,
    /// A transform applied to root joints (for example the instance's transform); identity when `None`.
    pub root: Option<&'a Affine3A>,
}

impl LocalToModelJob<'_> {
    /// Checks the validity rules in O(1).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Job`] naming the field at fault.
    pub fn validate(&self) -> Result<()> {
        let n = self.skeleton.joint_count();
        if n > MAX_JOINTS {
            return Err(Error::job(JOB, "skeleton", None, "has more than MAX_JOINTS joints"));
        }
        if self.input.len() < num_soa_joints(n) {
            return Err(Error::job(
                JOB,
                "input",
                None,
                "is shorter than the skeleton's SoA joint count",
            ));
        }
        if self.output.len() < n {
            return Err(Error::job(
                JOB,
                "output",
                None,
                "is shorter than the skeleton's joint count",
            ));
        }
        if let Some(from) = self.from.filter(|&from| from >= n) {
            return Err(Error::job(JOB, "from", Some(from), "is not a joint of the skeleton"));
        }
        Ok(())
    }

    /// Validates, then converts. Never allocates.
    ///
    /// # Errors
    ///
    /// As [`LocalToModelJob::validate`].
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let n = self.skeleton.joint_count();
        let parents = &self.skeleton.parents[..n];
        let input = &self.input[..num_soa_joints(n)];
        let output = &mut self.output[..n];
        let root = self.root.copied().unwrap_or(Affine3A::IDENTITY);
        match self.from {
            None => convert_all(parents, input, output, &root),
            Some(from) => convert_from(parents, input, output, &root, from),
        }
        Ok(())
    }
}

/// Converts every joint. `parents` and `output` have the same length, and `input` covers them.
///
/// The full groups of four joints go to the AVX-512 kernel when the CPU has it (see `avx512.rs`), which gives
/// the same bits; the portable code converts the rest.
fn convert_all(parents: &[u16], input: &[SoaTransform], output: &mut [Affine3A], root: &Affine3A) {
    #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
    let done = avx512::convert_full_groups(parents, input, output, root);
    #[cfg(not(all(target_arch = "x86_64", not(feature = "scalar"))))]
    let done = 0;
    convert_groups(parents, input, output, root, done / 4);
}

/// Converts the joints from group `start` on; the joints before it must already hold model-space matrices.
/// `parents` and `output` have the same length, and `input` covers them.
fn convert_groups(parents: &[u16], input: &[SoaTransform], output: &mut [Affine3A], root: &Affine3A, start: usize) {
    assert_eq!(
        parents.len(),
        output.len(),
        "the caller slices parents and output to the joint count"
    );
    let n = output.len();
    let full_groups = n / 4;
    // The previous joint's model-space matrix, kept in registers: it is the most common parent.
    let mut prev = if start > 0 {
        output[4 * start - 1]
    } else {
        Affine3A::IDENTITY
    };
    for (g, (soa, group_parents)) in input.iter().zip(parents.chunks_exact(4)).enumerate().skip(start) {
        // The parent-independent work of the whole group comes first, so that it overlaps the previous
        // group's dependent products.
        let local = soa_to_locals(soa);
        let base = 4 * g;
        // The four lanes are unrolled, so that lanes are selected with constant shuffles.
        prev = model_lane::<0>(output, base, group_parents[0], root, &prev, &local);
        output[base] = prev;
        prev = model_lane::<1>(output, base + 1, group_parents[1], root, &prev, &local);
        output[base + 1] = prev;
        prev = model_lane::<2>(output, base + 2, group_parents[2], root, &prev, &local);
        output[base + 2] = prev;
        prev = model_lane::<3>(output, base + 3, group_parents[3], root, &prev, &local);
        output[base + 3] = prev;
    }
    // The last, partial group.
    if let Some(soa) = input.get(full_groups) {
        let local = soa_to_affines(soa);
        for j in 4 * full_groups..n {
            output[j] = model_matrix(output, j, parents[j], root, &local[j % 4]);
        }
    }
}

/// The local matrices `T * R * S` of the four lanes of a `SoaTransform`, component by component:
/// `cols[c][r]` holds row `r` of column `c` (column 3 is the translation) for the four lanes.
struct SoaLocals {
    cols: [[Vec4; 3]; 4],
}

/// Converts the four lanes of `t` to `SoaLocals`, with the same formula as glam's `Mat3A::from_quat`.
#[inline(always)]
fn soa_to_locals(t: &SoaTransform) -> SoaLocals {
    let q = &t.rotation;
    let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
    let (xx, xy, xz) = (q.x * x2, q.x * y2, q.x * z2);
    let (yy, yz, zz) = (q.y * y2, q.y * z2, q.z * z2);
    let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
    let s = &t.scale;
    let one = Vec4::ONE;
    SoaLocals {
        cols: [
            [(one - (yy + zz)) * s.x, (xy + wz) * s.x, (xz - wy) * s.x],
            [(xy - wz) * s.y, (one - (xx + zz)) * s.y, (yz + wx) * s.y],
            [(xz + wy) * s.z, (yz - wx) * s.z, (one - (xx + yy)) * s.z],
            [t.translation.x, t.translation.y, t.translation.z],
        ],
    }
}

/// Lane `K` of `v`, splat to the three components of a `Vec3A` with a single shuffle.
#[inline(always)]
fn lane<const K: usize>(v: Vec4) -> Vec3A {
    Vec3A::from_vec4(match K {
        0 => v.xxxx(),
        1 => v.yyyy(),
        2 => v.zzzz(),
        _ => v.wwww(),
    })
}

/// Joint `j`'s model-space matrix, where `j`'s local matrix is lane `K` of `local`.
#[inline(always)]
fn model_lane<const K: usize>(
    output: &[Affine3A],
    j: usize,
    parent: u16,
    root: &Affine3A,
    prev: &Affine3A,
    local: &SoaLocals,
) -> Affine3A {
    let p = usize::from(parent);
    strict_assert!(
        parent == NO_PARENT || p < j,
        "joint {j} has parent {p}, which breaks parent-before-child order"
    );
    // The previous joint, just computed, is read from registers rather than through a store and a load.
    // Otherwise the comparison with `j` both selects root joints and bounds the index.
    let a = if p + 1 == j {
        *prev
    } else if p < j {
        output[p]
    } else {
        *root
    };
    let m = &a.matrix3;
    let column = |c: &[Vec4; 3]| (m.x_axis * lane::<K>(c[0]) + m.y_axis * lane::<K>(c[1])) + m.z_axis * lane::<K>(c[2]);
    let t = &local.cols[3];
    Affine3A {
        matrix3: Mat3A::from_cols(column(&local.cols[0]), column(&local.cols[1]), column(&local.cols[2])),
        translation: (m.x_axis * lane::<K>(t[0]) + m.y_axis * lane::<K>(t[1]))
            + (m.z_axis * lane::<K>(t[2]) + a.translation),
    }
}

/// Converts joint `from` and its descendants, reading the other joints of `output` as parents.
fn convert_from(parents: &[u16], input: &[SoaTransform], output: &mut [Affine3A], root: &Affine3A, from: usize) {
    assert_eq!(
        parents.len(),
        output.len(),
        "the caller slices parents and output to the joint count"
    );
    // Bit `j` is set once joint `j` is known to be `from` or one of its descendants.
    // Parents come before children, so a single forward pass from `from` finds every descendant.
    let mut updated = [0u64; BITSET_WORDS];
    let mut local = [Affine3A::IDENTITY; 4];
    let mut converted_group = usize::MAX;
    for (j, &parent) in parents.iter().enumerate().skip(from) {
        let p = usize::from(parent);
        let descends = j == from || (p < j && updated[p / 64] & (1 << (p % 64)) != 0);
        if !descends {
            continue;
        }
        updated[j / 64] |= 1 << (j % 64);
        // Only the groups that hold an updated joint are converted, each once.
        if converted_group != j / 4 {
            converted_group = j / 4;
            local = soa_to_affines(&input[j / 4]);
        }
        output[j] = model_matrix(output, j, parent, root, &local[j % 4]);
    }
}

/// Joint `j`'s model-space matrix: its parent's model-space matrix (or `root`) times `local`.
#[inline(always)]
fn model_matrix(output: &[Affine3A], j: usize, parent: u16, root: &Affine3A, local: &Affine3A) -> Affine3A {
    let p = usize::from(parent);
    strict_assert!(
        parent == NO_PARENT || p < j,
        "joint {j} has parent {p}, which breaks parent-before-child order"
    );
    // The comparison with `j` both selects root joints and bounds the index.
    let parent_model = if p < j { &output[p] } else { root };
    mul(parent_model, local)
}

/// `a * b`, as glam's `Affine3A` product, but with balanced sums: the dependency chain through `a` (the
/// parent, just computed) is one multiplication and two additions deep instead of three additions.
#[inline(always)]
fn mul(a: &Affine3A, b: &Affine3A) -> Affine3A {
    let m = &a.matrix3;
    let column =
        |c: Vec3A| (m.x_axis * Vec3A::splat(c.x) + m.y_axis * Vec3A::splat(c.y)) + m.z_axis * Vec3A::splat(c.z);
    let t = b.translation;
    Affine3A {
        matrix3: Mat3A::from_cols(
            column(b.matrix3.x_axis),
            column(b.matrix3.y_axis),
            column(b.matrix3.z_axis),
        ),
        translation: (m.x_axis * Vec3A::splat(t.x) + m.y_axis * Vec3A::splat(t.y))
            + (m.z_axis * Vec3A::splat(t.z) + a.translation),
    }
}

/// Converts the four lanes of `t` to the affine matrices `T * R * S`, with the same formula as glam's
/// `Mat3A::from_quat`, computing each term for four lanes at once.
#[inline(always)]
fn soa_to_affines(t: &SoaTransform) -> [Affine3A; 4] {
    let q = &t.rotation;
    let (x2, y2, z2) = (q.x + q.x, q.y + q.y, q.z + q.z);
    let (xx, xy, xz) = (q.x * x2, q.x * y2, q.x * z2);
    let (yy, yz, zz) = (q.y * y2, q.y * z2, q.z * z2);
    let (wx, wy, wz) = (q.w * x2, q.w * y2, q.w * z2);
    let s = &t.scale;
    let one = Vec4::ONE;
    // Each axis of the rotation-scale matrix, component by component, for four lanes, then per lane.
    let x_axis = transpose3((one - (yy + zz)) * s.x, (xy + wz) * s.x, (xz - wy) * s.x);
    let y_axis = transpose3((xy - wz) * s.y, (one - (xx + zz)) * s.y, (yz + wx) * s.y);
    let z_axis = transpose3((xz + wy) * s.z, (yz - wx) * s.z, (one - (xx + yy)) * s.z);
    let w_axis = transpose3(t.translation.x, t.translation.y, t.translation.z);
    [0, 1, 2, 3].map(|lane| Affine3A {
        matrix3: Mat3A::from_cols(x_axis[lane], y_axis[lane], z_axis[lane]),
        translation: w_axis[lane],
    })
}

/// Transposes three component vectors (x, y and z for four lanes) into four per-lane 3-vectors.
#[inline(always)]
fn transpose3(x: Vec4, y: Vec4, z: Vec4) -> [Vec3A; 4] {
    let m = Mat4::from_cols(x, y, z, Vec4::ZERO).transpose();
    [
        Vec3A::from_vec4(m.x_axis),
        Vec3A::from_vec4(m.y_axis),
        Vec3A::from_vec4(m.z_axis),
        Vec3A::from_vec4(m.w_axis),
    ]
}

#[cfg(test)]
mod tests {
    use glam::{Mat4, Quat, Vec3};

    use super::*;
    use crate::{Transform, pack_soa};

    fn chain_skeleton(n: usize) -> Skeleton {
        let parents = (0..n)
            .map(|i| if i == 0 { NO_PARENT } else { (i - 1) as u16 })
            .collect();
        Skeleton::from_parents("chain", parents, vec![Transform::IDENTITY; n]).expect("a valid chain")
    }

    #[test]
    fn validity_rules() {
        let skeleton = chain_skeleton(6);
        let input = [SoaTransform::IDENTITY; 2];
        // One joint past the limit: `from_parents` refuses it, so a valid chain is grown by hand.
        let mut oversized = chain_skeleton(MAX_JOINTS);
        oversized.parents.push(MAX_JOINTS as u16 - 1);
        oversized.rest_pose.push(Transform::IDENTITY);
        oversized.joint_names.push("extra".into());
        oversized.joint_nodes.push(MAX_JOINTS);
        oversized.skin_joints.push(MAX_JOINTS as u16);
        oversized.inverse_bind_matrices.push(Mat4::IDENTITY);
        let big_input = vec![SoaTransform::IDENTITY; num_soa_joints(MAX_JOINTS + 1)];
        // Each row: skeleton, input length, output length, from, the field expected at fault (None when valid).
        type Row<'a> = (&'a Skeleton, usize, usize, Option<usize>, Option<&'a str>);
        let rows: [Row<'_>; 8] = [
            (&skeleton, 2, 6, None, None),
            (&skeleton, 3, 7, Some(5), None),
            (&oversized, usize::MAX, MAX_JOINTS + 1, None, Some("skeleton")),
            (&skeleton, 1, 6, None, Some("input")),
            (&skeleton, 0, 6, None, Some("input")),
            (&skeleton, 2, 5, None, Some("output")),
            (&skeleton, 2, 6, Some(6), Some("from")),
            (&skeleton, 2, 6, Some(usize::MAX), Some("from")),
        ];
        for (row, &(skeleton, input_len, output_len, from, fault)) in rows.iter().enumerate() {
            let long = [SoaTransform::IDENTITY; 3];
            let input: &[SoaTransform] = match input_len {
                usize::MAX => &big_input,
                3 => &long,
                len => &input[..len],
            };
            let mut output = vec![Affine3A::IDENTITY; output_len];
            let mut job = LocalToModelJob {
                skeleton,
                input,
                output: &mut output,
                from,
                root: None,
            };
            let result = job.run();
            match (fault, result) {
                (None, Ok(())) => {}
                (Some(field), Err(Error::Job { job, field: got, .. })) => {
                    assert_eq!((job, got), (JOB, field), "row {row}");
                }
                (fault, result) => panic!("row {row}: expected fault {fault:?}, got {result:?}"),
            }
        }
    }

    #[test]
    fn matches_skeleton_reference_and_leaves_surplus_untouched() {
        let n = 7;
        let skeleton = Skeleton {
            parents: vec![NO_PARENT, 0, 1, 0, 3, 1, 4],
            ..chain_skeleton(n)
        };
        skeleton.validate().expect("valid skeleton");
        let local: Vec<Transform> = (0..n)
            .map(|i| Transform {
                translation: Vec3::new(i as f32, 1.0, -0.5 * i as f32),
                rotation: Quat::from_euler(glam::EulerRot::XYZ, 0.3 * i as f32, -0.2, 0.1 * i as f32),
                scale: Vec3::new(1.0 + 0.1 * i as f32, 0.9, 1.2),
            })
            .collect();
        let mut soa = vec![SoaTransform::IDENTITY; num_soa_joints(n)];
        pack_soa(&local, &mut soa).expect("sized");
        let mut expected = vec![Mat4::IDENTITY; n];
        skeleton.local_to_model(&local, &mut expected).expect("sized");
        let sentinel = Affine3A::from_translation(Vec3::splat(42.0));
        let mut output = vec![sentinel; n + 2];
        let root = Affine3A::from_rotation_translation(Quat::from_rotation_y(0.7), Vec3::new(3.0, 0.0, 1.0));
        LocalToModelJob {
            skeleton: &skeleton,
            input: &soa,
            output: &mut output,
            from: None,
            root: Some(&root),
        }
        .run()
        .expect("valid job");
        for (j, e) in expected.iter().enumerate() {
            let want = Mat4::from(root) * *e;
            assert!(
                Mat4::from(output[j]).abs_diff_eq(want, 1e-4),
                "joint {j}: {:?} vs {want:?}",
                output[j]
            );
        }
        assert_eq!(&output[n..], &[sentinel; 2]);
    }

    #[test]
    fn partial_update_leaves_other_branches_untouched() {
        // Joint 0 has children 1 and 2; joint 3 is a child of 1, joint 4 a child of 2.
        let skeleton = Skeleton {
            parents: vec![NO_PARENT, 0, 0, 1, 2],
            ..chain_skeleton(5)
        };
        let mut input = [SoaTransform::IDENTITY; 2];
        let step = Transform {
            translation: Vec3::Y,
            ..Transform::IDENTITY
        };
        for j in 0..5 {
            input[j / 4].set_lane(j % 4, &step);
        }
        let sentinel = Affine3A::from_translation(Vec3::splat(-9.0));
        let mut output = [sentinel; 5];
        output[0] = Affine3A::from_translation(Vec3::X);
        LocalToModelJob {
            skeleton: &skeleton,
            input: &input,
            output: &mut output,
            from: Some(2),
            root: None,
        }
        .run()
        .expect("valid job");
        assert_eq!(output[1], sentinel);
        assert_eq!(output[3], sentinel);
        assert_eq!(output[2].translation, Vec3A::new(1.0, 1.0, 0.0));
        assert_eq!(output[4].translation, Vec3A::new(1.0, 2.0, 0.0));
    }
}
