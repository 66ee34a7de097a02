//! Reference linear-blend skinning on the CPU: palettes, a scalar reference and a parallel job.
//!
//! This module is the truth that GPU skinning tests and bakers compare against.
//! Each vertex blends its (up to four) palette matrices with its weights into one affine matrix `M`, then:
//! - the position is `M · (p, 1)`;
//! - the normal is `cof(L) · n`, renormalized, where `L` is the linear part of `M` and `cof(L) = det(L) · L⁻ᵀ`
//!   is its cofactor matrix; the sign of `det(L)` is applied so that the result points along `L⁻ᵀ · n`.
//!   This is the exact normal transform, also under non-uniform scale, and it needs no inverse;
//! - the tangent's `xyz` is `L · t`, renormalized, and its handedness `w` is copied unchanged.
//!
//! A degenerate blend that maps a normal or tangent to zero writes zero rather than NaN.
//! [`skin_reference`] runs one vertex at a time; [`SkinningJob`] runs the same per-vertex code in parallel over
//! vertex chunks with rayon, so the two agree bit for bit.

use anim_pose::Skeleton;
use glam::{Affine3A, Mat3A, Vec3, Vec3A, Vec4};

use crate::{Error, Result};

/// Vertices per rayon task in [`SkinningJob::run`].
///
/// Skinning one vertex costs a few dozen nanoseconds, so chunks of 1,024 vertices keep rayon's per-task overhead
/// (around a microsecond) under a few percent while still splitting a 10k-vertex character over several cores.
pub const SKINNING_CHUNK: usize = 1024;

/// The bind-space vertex data that [`skin_reference`] reads.
///
/// `positions`, `joints` and `weights` have one entry per vertex; `normals` and `tangents` have one entry per
/// vertex or are empty, in which case they are not skinned.
#[derive(Clone, Copy, Debug)]
pub struct SkinInput<'a> {
    /// Bind-space positions.
    pub positions: &'a [Vec3],
    /// Bind-space normals, or empty.
    pub normals: &'a [Vec3],
    /// Bind-space tangents with handedness in `w`, or empty.
    pub tangents: &'a [Vec4],
    /// Up to four palette indices per vertex.
    pub joints: &'a [[u16; 4]],
    /// The weights matching `joints`. They are used as given: they should sum to 1.
    pub weights: &'a [[f32; 4]],
}

/// The skinned vertex data that [`skin_reference`] writes, one entry per input entry.
#[derive(Debug)]
pub struct SkinOutput<'a> {
    /// Skinned positions; as long as the input positions.
    pub positions: &'a mut [Vec3],
    /// Skinned, unit-length normals; as long as the input normals (empty when they are).
    pub normals: &'a mut [Vec3],
    /// Skinned tangents with unit-length `xyz` and the input `w`; as long as the input tangents.
    pub tangents: &'a mut [Vec4],
}

/// Skins every vertex in parallel (linear-blend skinning; see the module docs for the normal and tangent rules).
///
/// Validity rules:
/// - `joints`, `weights` and `out_positions` have `positions.len()` entries;
/// - `normals` is empty or has `positions.len()` entries, and `out_normals` has `normals.len()` entries;
/// - `tangents` is empty or has `positions.len()` entries, and `out_tangents` has `tangents.len()` entries;
/// - every joint index of every vertex, including those of zero-weight influences, is below `palette.len()`.
///
/// Outputs must match their inputs' lengths exactly, so there is no surplus output.
/// [`SkinningJob::validate`] checks the lengths, in O(1). The joint indices are checked for free as the run
/// reads them (an index past the palette contributes nothing, and is remembered), so no call scans the mesh twice:
/// only a run that met one rescans its vertices, to name the first.
/// Weights are not checked: the importer guarantees finite, non-negative weights that sum to 1, and the loop only
/// `debug_assert!`s that they are finite.
#[derive(Debug)]
pub struct SkinningJob<'a> {
    /// The skinning palette, in skin joint order (see [`palette_from_model`]).
    pub palette: &'a [Affine3A],
    /// Bind-space positions.
    pub positions: &'a [Vec3],
    /// Bind-space normals, or empty.
    pub normals: &'a [Vec3],
    /// Bind-space tangents with handedness in `w`, or empty.
    pub tangents: &'a [Vec4],
    /// Up to four palette indices per vertex.
    pub joints: &'a [[u16; 4]],
    /// The weights matching `joints`, used as given.
    pub weights: &'a [[f32; 4]],
    /// Skinned positions written.
    pub out_positions: &'a mut [Vec3],
    /// Skinned normals written; empty when `normals` is.
    pub out_normals: &'a mut [Vec3],
    /// Skinned tangents written; empty when `tangents` is.
    pub out_tangents: &'a mut [Vec4],
}

impl SkinningJob<'_> {
    /// Checks the length rules listed on the type, in O(1); the run checks the joint indices.
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] naming the slice whose length is wrong.
    pub fn validate(&self) -> Result<()> {
        check(
            &SkinInput {
                positions: self.positions,
                normals: self.normals,
                tangents: self.tangents,
                joints: self.joints,
                weights: self.weights,
            },
            [
                self.out_positions.len(),
                self.out_normals.len(),
                self.out_tangents.len(),
            ],
        )
    }

    /// Validates, then skins all vertices in parallel over chunks of [`SKINNING_CHUNK`] vertices.
    ///
    /// It allocates nothing itself; rayon's work-stealing queues are rayon's own.
    /// The result is identical, bit for bit, to [`skin_reference`].
    ///
    /// # Errors
    ///
    /// - As [`SkinningJob::validate`], before anything is written.
    /// - [`Error::JointOutOfRange`] naming the first vertex and influence whose joint index is not in the palette;
    ///   the outputs are then written, each vertex blended from its in-range influences only.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let input = SkinInput {
            positions: self.positions,
            normals: self.normals,
            tangents: self.tangents,
            joints: self.joints,
            weights: self.weights,
        };
        let in_range = skin_parallel(
            self.palette,
            &input,
            0,
            SkinOutput {
                positions: self.out_positions,
                normals: self.out_normals,
                tangents: self.out_tangents,
            },
        );
        if in_range {
            Ok(())
        } else {
            Err(first_joint_out_of_range(self.palette.len(), self.joints))
        }
    }
}

/// Skins every vertex of `input` into `output`, one vertex at a time on the calling thread.
///
/// This is the plain twin of [`SkinningJob`], with the same validity rules and the same per-vertex arithmetic.
///
/// # Errors
///
/// As [`SkinningJob::run`].
pub fn skin_reference(palette: &[Affine3A], input: &SkinInput<'_>, output: &mut SkinOutput<'_>) -> Result<()> {
    check(
        input,
        [output.positions.len(), output.normals.len(), output.tangents.len()],
    )?;
    if skin_span(palette, input, 0, output) {
        Ok(())
    } else {
        Err(first_joint_out_of_range(palette.len(), input.joints))
    }
}

/// Skins positions only: the positions part of [`skin_reference`].
///
/// `joints`, `weights` and `out` have one entry per position.
///
/// # Errors
///
/// As [`SkinningJob::run`], with `out` checked as the output positions.
pub fn skin_positions_reference(
    palette: &[Affine3A],
    positions: &[Vec3],
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    out: &mut [Vec3],
) -> Result<()> {
    let input = SkinInput {
        positions,
        normals: &[],
        tangents: &[],
        joints,
        weights,
    };
    let mut output = SkinOutput {
        positions: out,
        normals: &mut [],
        tangents: &mut [],
    };
    skin_reference(palette, &input, &mut output)
}

/// Writes the skinning palette of `skeleton` in skin joint order:
/// `world * model[skin_joints[k]] * inverse_bind_matrices[k]` for each skin joint `k`.
///
/// `model` holds one model-space matrix per skeleton joint (from [`Skeleton::local_to_model`] or
/// `anim_pose::LocalToModelJob`), and `out` one entry per skin joint.
/// For glTF world space, pass `world = Skeleton::root_transform` (as an `Affine3A`); `None` means identity.
/// Inverse bind matrices are taken as affine: their last row is ignored.
///
/// # Errors
///
/// - [`Error::BufferSize`] when `model` does not have `skeleton.joint_count()` entries, `out` does not have
///   `skeleton.skin_joint_count()` entries, or the skeleton has a different number of inverse bind matrices.
/// - [`Error::SkinJointOutOfRange`] when a skin joint maps past the skeleton's joints (a skeleton that does not
///   validate).
pub fn palette_from_model(
    skeleton: &Skeleton,
    model: &[Affine3A],
    world: Option<&Affine3A>,
    out: &mut [Affine3A],
) -> Result<()> {
    check_len("model-space pose", skeleton.joint_count(), model.len())?;
    check_len("palette", skeleton.skin_joint_count(), out.len())?;
    check_len(
        "inverse bind matrices",
        skeleton.skin_joint_count(),
        skeleton.inverse_bind_matrices.len(),
    )?;
    for (k, &joint) in skeleton.skin_joints.iter().enumerate() {
        if usize::from(joint) >= model.len() {
            return Err(Error::SkinJointOutOfRange {
                skin_joint: k,
                joint,
                joint_count: model.len(),
            });
        }
    }
    for ((entry, &joint), ibm) in out
        .iter_mut()
        .zip(&skeleton.skin_joints)
        .zip(&skeleton.inverse_bind_matrices)
    {
        let m = model[usize::from(joint)] * Affine3A::from_mat4(*ibm);
        *entry = match world {
            Some(w) => *w * m,
            None => m,
        };
    }
    Ok(())
}

/// The length rules of [`SkinningJob`], in one place; `outputs` are the lengths of the three output slices.
fn check(input: &SkinInput<'_>, outputs: [usize; 3]) -> Result<()> {
    let n = input.positions.len();
    check_len("joints", n, input.joints.len())?;
    check_len("weights", n, input.weights.len())?;
    check_len("output positions", n, outputs[0])?;
    if !input.normals.is_empty() {
        check_len("normals", n, input.normals.len())?;
    }
    check_len("output normals", input.normals.len(), outputs[1])?;
    if !input.tangents.is_empty() {
        check_len("tangents", n, input.tangents.len())?;
    }
    check_len("output tangents", input.tangents.len(), outputs[2])
}

/// The error for the first vertex and influence of `joints` whose index is not below `palette_len`; called only
/// after a run met one.
fn first_joint_out_of_range(palette_len: usize, joints: &[[u16; 4]]) -> Error {
    let found = joints.iter().enumerate().find_map(|(vertex, joints)| {
        let influence = joints.iter().position(|&j| usize::from(j) >= palette_len)?;
        Some((vertex, influence, joints[influence]))
    });
    let (vertex, influence, joint) = found.unwrap_or((0, 0, 0));
    Error::JointOutOfRange {
        vertex,
        influence,
        joint,
        palette_len,
    }
}

/// [`Error::BufferSize`] unless `expected == actual`.
fn check_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::BufferSize { what, expected, actual })
    }
}

/// Splits the outputs in halves until they are at most [`SKINNING_CHUNK`] vertices long and skins the halves with
/// `rayon::join`. `first` is the index of the first vertex of `output` in `input`. Returns false when some joint
/// index was past the palette.
fn skin_parallel(palette: &[Affine3A], input: &SkinInput<'_>, first: usize, output: SkinOutput<'_>) -> bool {
    let len = output.positions.len();
    if len <= SKINNING_CHUNK {
        let mut output = output;
        return skin_span(palette, input, first, &mut output);
    }
    let mid = len / 2;
    // Optional attributes are empty or as long as the positions, so they split at the same vertex or not at all.
    let split = |present: bool| if present { mid } else { 0 };
    let (p0, p1) = output.positions.split_at_mut(mid);
    let (n0, n1) = output.normals.split_at_mut(split(!input.normals.is_empty()));
    let (t0, t1) = output.tangents.split_at_mut(split(!input.tangents.is_empty()));
    let (a, b) = rayon::join(
        || {
            let half = SkinOutput {
                positions: p0,
                normals: n0,
                tangents: t0,
            };
            skin_parallel(palette, input, first, half)
        },
        || {
            let half = SkinOutput {
                positions: p1,
                normals: n1,
                tangents: t1,
            };
            skin_parallel(palette, input, first + mid, half)
        },
    );
    a && b
}

/// Skins the vertices `first..first + output.positions.len()` of `input`, whose lengths have been checked.
/// Returns false when some joint index was past the palette.
fn skin_span(palette: &[Affine3A], input: &SkinInput<'_>, first: usize, output: &mut SkinOutput<'_>) -> bool {
    let mut in_range = true;
    for (i, out_position) in output.positions.iter_mut().enumerate() {
        let v = first + i;
        let m = blend(palette, &input.joints[v], &input.weights[v], &mut in_range);
        *out_position = m.transform_point3(input.positions[v]);
        if let Some(out_normal) = output.normals.get_mut(i) {
            *out_normal = transform_normal(&m.matrix3, input.normals[v]);
        }
        if let Some(out_tangent) = output.tangents.get_mut(i) {
            let t = input.tangents[v];
            let xyz = m.matrix3.mul_vec3(t.truncate()).normalize_or_zero();
            *out_tangent = xyz.extend(t.w);
        }
    }
    in_range
}

/// The weighted sum of a vertex's four palette matrices. All four influences are summed, as the GPU does;
/// a zero weight adds an exact zero. An influence whose joint is past the palette adds nothing and clears
/// `in_range`.
fn blend(palette: &[Affine3A], joints: &[u16; 4], weights: &[f32; 4], in_range: &mut bool) -> Affine3A {
    debug_assert!(weights.iter().all(|w| w.is_finite()), "non-finite skinning weight");
    let mut matrix3 = Mat3A::ZERO;
    let mut translation = Vec3A::ZERO;
    for (&j, &w) in joints.iter().zip(weights) {
        let Some(m) = palette.get(usize::from(j)) else {
            *in_range = false;
            continue;
        };
        matrix3 += m.matrix3 * w;
        translation += m.translation * w;
    }
    Affine3A { matrix3, translation }
}

/// `normalize(sign(det L) · cof(L) · n)`: the direction of `L⁻ᵀ · n`, computed without an inverse.
///
/// The columns of the cofactor matrix of `L = [a b c]` are `b × c`, `c × a` and `a × b`.
fn transform_normal(l: &Mat3A, n: Vec3) -> Vec3 {
    let (a, b, c) = (l.x_axis, l.y_axis, l.z_axis);
    let cofactor_n = b.cross(c) * n.x + c.cross(a) * n.y + a.cross(b) * n.z;
    let det = a.dot(b.cross(c));
    let signed = if det < 0.0 { -cofactor_n } else { cofactor_n };
    Vec3::from(signed).normalize_or_zero()
}

#[cfg(test)]
mod tests {
    use super::*;
    use anim_pose::{NO_PARENT, Transform};
    use glam::{Mat4, Quat};

    /// A job over `n` vertices, all influenced by palette entry `joint`, with normals and tangents.
    struct Buffers {
        positions: Vec<Vec3>,
        normals: Vec<Vec3>,
        tangents: Vec<Vec4>,
        joints: Vec<[u16; 4]>,
        weights: Vec<[f32; 4]>,
        out_positions: Vec<Vec3>,
        out_normals: Vec<Vec3>,
        out_tangents: Vec<Vec4>,
    }

    impl Buffers {
        fn new(n: usize) -> Self {
            Self {
                positions: vec![Vec3::X; n],
                normals: vec![Vec3::Y; n],
                tangents: vec![Vec4::new(1.0, 0.0, 0.0, -1.0); n],
                joints: vec![[1, 0, 0, 0]; n],
                weights: vec![[1.0, 0.0, 0.0, 0.0]; n],
                out_positions: vec![Vec3::ZERO; n],
                out_normals: vec![Vec3::ZERO; n],
                out_tangents: vec![Vec4::ZERO; n],
            }
        }

        fn job<'a>(&'a mut self, palette: &'a [Affine3A]) -> SkinningJob<'a> {
            SkinningJob {
                palette,
                positions: &self.positions,
                normals: &self.normals,
                tangents: &self.tangents,
                joints: &self.joints,
                weights: &self.weights,
                out_positions: &mut self.out_positions,
                out_normals: &mut self.out_normals,
                out_tangents: &mut self.out_tangents,
            }
        }
    }

    #[test]
    fn validity_table() {
        let palette = [Affine3A::IDENTITY; 2];
        type Edit = fn(&mut Buffers);
        let rows: [(&str, Edit, Result<()>); 12] = [
            ("valid", |_| {}, Ok(())),
            (
                "no normals or tangents",
                |b| {
                    b.normals.clear();
                    b.out_normals.clear();
                    b.tangents.clear();
                    b.out_tangents.clear();
                },
                Ok(()),
            ),
            (
                "joints length",
                |b| b.joints.truncate(2),
                Err(Error::BufferSize {
                    what: "joints",
                    expected: 3,
                    actual: 2,
                }),
            ),
            (
                "weights length",
                |b| b.weights.push([1.0; 4]),
                Err(Error::BufferSize {
                    what: "weights",
                    expected: 3,
                    actual: 4,
                }),
            ),
            (
                "output positions length",
                |b| {
                    b.out_positions.pop();
                },
                Err(Error::BufferSize {
                    what: "output positions",
                    expected: 3,
                    actual: 2,
                }),
            ),
            (
                "normals length",
                |b| {
                    b.normals.pop();
                },
                Err(Error::BufferSize {
                    what: "normals",
                    expected: 3,
                    actual: 2,
                }),
            ),
            (
                "output normals length",
                |b| b.out_normals.clear(),
                Err(Error::BufferSize {
                    what: "output normals",
                    expected: 3,
                    actual: 0,
                }),
            ),
            (
                "output normals without normals",
                |b| b.normals.clear(),
                Err(Error::BufferSize {
                    what: "output normals",
                    expected: 0,
                    actual: 3,
                }),
            ),
            (
                "tangents length",
                |b| b.tangents.push(Vec4::X),
                Err(Error::BufferSize {
                    what: "tangents",
                    expected: 3,
                    actual: 4,
                }),
            ),
            (
                "output tangents length",
                |b| b.out_tangents.push(Vec4::X),
                Err(Error::BufferSize {
                    what: "output tangents",
                    expected: 3,
                    actual: 4,
                }),
            ),
            (
                "joint out of range",
                |b| b.joints[1] = [0, 0, 2, 0],
                Err(Error::JointOutOfRange {
                    vertex: 1,
                    influence: 2,
                    joint: 2,
                    palette_len: 2,
                }),
            ),
            (
                "zero-weight joint out of range",
                |b| b.joints[2] = [1, 0, 0, 7],
                Err(Error::JointOutOfRange {
                    vertex: 2,
                    influence: 3,
                    joint: 7,
                    palette_len: 2,
                }),
            ),
        ];
        for (name, edit, expected) in rows {
            let mut b = Buffers::new(3);
            edit(&mut b);
            let mut job = b.job(&palette);
            // Lengths are validated in O(1) before the run; joint indices are found by the run itself.
            let joints = matches!(expected, Err(Error::JointOutOfRange { .. }));
            assert_eq!(job.validate(), if joints { Ok(()) } else { expected }, "{name}");
            assert_eq!(job.run(), expected, "{name}: run validates first");
            let input = SkinInput {
                positions: &b.positions,
                normals: &b.normals,
                tangents: &b.tangents,
                joints: &b.joints,
                weights: &b.weights,
            };
            let mut output = SkinOutput {
                positions: &mut b.out_positions,
                normals: &mut b.out_normals,
                tangents: &mut b.out_tangents,
            };
            assert_eq!(
                skin_reference(&palette, &input, &mut output),
                expected,
                "{name}: the reference agrees"
            );
        }
    }

    #[test]
    fn the_parallel_run_names_the_first_joint_out_of_range() {
        // Bad indices in two different rayon tasks: the error names the first, and the other vertices are skinned
        // as they would be without the bad ones.
        let palette = [Affine3A::IDENTITY, Affine3A::from_translation(Vec3::Z)];
        let n = 5 * SKINNING_CHUNK;
        let mut b = Buffers::new(n);
        b.joints[4 * SKINNING_CHUNK + 9] = [0, 9, 0, 0];
        b.joints[SKINNING_CHUNK + 3] = [1, 0, 3, 0];
        let expected = Err(Error::JointOutOfRange {
            vertex: SKINNING_CHUNK + 3,
            influence: 2,
            joint: 3,
            palette_len: 2,
        });
        assert_eq!(b.job(&palette).validate(), Ok(()));
        assert_eq!(b.job(&palette).run(), expected);
        assert_eq!(b.out_positions[0], Vec3::new(1.0, 0.0, 1.0));
        assert_eq!(
            b.out_positions[SKINNING_CHUNK + 3],
            Vec3::new(1.0, 0.0, 1.0),
            "the bad influence adds nothing"
        );
        let mut out = vec![Vec3::ZERO; n];
        assert_eq!(
            skin_positions_reference(&palette, &b.positions, &b.joints, &b.weights, &mut out),
            expected
        );
        assert_eq!(out, b.out_positions, "the reference writes the same");
    }

    #[test]
    fn error_names_the_vertex() {
        let e = Error::JointOutOfRange {
            vertex: 17,
            influence: 2,
            joint: 70,
            palette_len: 19,
        };
        let text = e.to_string();
        assert!(
            text.contains("vertex 17") && text.contains("70") && text.contains("19"),
            "{text}"
        );
    }

    #[test]
    fn normals_stay_perpendicular_under_non_uniform_scale() {
        // Two blended joints with different non-uniform scales and rotations, so that the blended linear part
        // is a general matrix.
        let a = Affine3A::from_scale_rotation_translation(
            Vec3::new(3.0, 0.5, 1.0),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -0.8, 1.1),
            Vec3::new(1.0, 2.0, 3.0),
        );
        let b = Affine3A::from_scale_rotation_translation(
            Vec3::new(0.2, 2.0, -1.5),
            Quat::from_rotation_z(0.4),
            Vec3::ZERO,
        );
        let palette = [a, b];
        for (k, n) in [
            Vec3::Y,
            Vec3::new(1.0, 2.0, -0.5).normalize(),
            Vec3::new(-0.3, 0.1, 0.9).normalize(),
        ]
        .into_iter()
        .enumerate()
        {
            // Two tangent-plane directions perpendicular to the normal, and a point on the plane.
            let t1 = n.any_orthonormal_vector();
            let t2 = n.cross(t1);
            let p = Vec3::new(0.5, -0.25, 2.0);
            let weights = [[0.7, 0.3, 0.0, 0.0]; 4];
            let joints = [[0, 1, 0, 0]; 4];
            let positions = [p, p + t1, p + t2, p];
            let normals = [n; 4];
            let tangents = [t1.extend(-1.0); 4];
            let mut out_p = [Vec3::ZERO; 4];
            let mut out_n = [Vec3::ZERO; 4];
            let mut out_t = [Vec4::ZERO; 4];
            let input = SkinInput {
                positions: &positions,
                normals: &normals,
                tangents: &tangents,
                joints: &joints,
                weights: &weights,
            };
            let mut output = SkinOutput {
                positions: &mut out_p,
                normals: &mut out_n,
                tangents: &mut out_t,
            };
            skin_reference(&palette, &input, &mut output).expect("valid");
            let skinned_n = out_n[0];
            assert!(
                (skinned_n.length() - 1.0).abs() < 1e-6,
                "case {k}: the normal is renormalized"
            );
            // The skinned plane is spanned by the skinned tangent and the skinned second direction.
            for edge in [out_p[1] - out_p[0], out_p[2] - out_p[0], out_t[0].truncate()] {
                let cos = skinned_n.dot(edge.normalize());
                assert!(
                    cos.abs() < 1e-5,
                    "case {k}: normal not perpendicular to the tangent plane: cos = {cos}"
                );
            }
            assert!(
                (out_t[0].truncate().length() - 1.0).abs() < 1e-6,
                "case {k}: the tangent is renormalized"
            );
            assert_eq!(out_t[0].w, -1.0, "case {k}: the handedness is kept");
            // The normal points the way the inverse transpose sends it, also when the blend mirrors.
            let l = Mat4::from(Affine3A {
                matrix3: a.matrix3 * 0.7 + b.matrix3 * 0.3,
                translation: Vec3A::ZERO,
            });
            let expected = l.inverse().transpose().transform_vector3(n).normalize();
            assert!(
                skinned_n.abs_diff_eq(expected, 1e-5),
                "case {k}: {skinned_n} vs {expected}"
            );
        }
    }

    #[test]
    fn mirrored_blend_keeps_the_inverse_transpose_direction() {
        let palette = [Affine3A::from_scale(Vec3::new(-2.0, 1.0, 1.0))];
        let n = Vec3::new(1.0, 1.0, 0.0).normalize();
        let mut out = [Vec3::ZERO];
        let input = SkinInput {
            positions: &[Vec3::ZERO],
            normals: &[n],
            tangents: &[],
            joints: &[[0; 4]],
            weights: &[[1.0, 0.0, 0.0, 0.0]],
        };
        let mut output = SkinOutput {
            positions: &mut [Vec3::ZERO],
            normals: &mut out,
            tangents: &mut [],
        };
        skin_reference(&palette, &input, &mut output).expect("valid");
        assert!(
            out[0].abs_diff_eq(Vec3::new(-0.5, 1.0, 0.0).normalize(), 1e-6),
            "{}",
            out[0]
        );
    }

    #[test]
    fn parallel_job_splits_attributes_consistently() {
        // More than two chunks, with normals but no tangents, so that the split handles an empty attribute.
        let n = SKINNING_CHUNK * 3 + 17;
        let mut b = Buffers::new(n);
        for (i, p) in b.positions.iter_mut().enumerate() {
            *p = Vec3::new(i as f32, 1.0, -2.0);
        }
        b.tangents.clear();
        b.out_tangents.clear();
        let palette = [
            Affine3A::IDENTITY,
            Affine3A::from_scale_rotation_translation(Vec3::new(1.0, 2.0, 3.0), Quat::from_rotation_x(0.5), Vec3::ONE),
        ];
        b.job(&palette).run().expect("valid");
        let mut ref_p = vec![Vec3::ZERO; n];
        let mut ref_n = vec![Vec3::ZERO; n];
        let input = SkinInput {
            positions: &b.positions,
            normals: &b.normals,
            tangents: &[],
            joints: &b.joints,
            weights: &b.weights,
        };
        let mut output = SkinOutput {
            positions: &mut ref_p,
            normals: &mut ref_n,
            tangents: &mut [],
        };
        skin_reference(&palette, &input, &mut output).expect("valid");
        assert_eq!(b.out_positions, ref_p);
        assert_eq!(b.out_normals, ref_n);
    }

    fn skeleton() -> Skeleton {
        let rest_pose = vec![
            Transform {
                translation: Vec3::new(0.0, 1.0, 0.0),
                rotation: Quat::from_rotation_y(0.3),
                scale: Vec3::ONE,
            },
            Transform {
                translation: Vec3::new(0.0, 0.5, 0.0),
                rotation: Quat::from_rotation_z(-0.2),
                scale: Vec3::splat(2.0),
            },
            Transform {
                translation: Vec3::new(0.2, 0.0, 0.1),
                rotation: Quat::IDENTITY,
                scale: Vec3::new(1.0, 0.5, 1.0),
            },
        ];
        Skeleton {
            name: "test".to_owned(),
            skin: 0,
            joint_names: vec!["a".to_owned(), "b".to_owned(), "c".to_owned()],
            parents: vec![NO_PARENT, 0, 1],
            rest_pose,
            joint_nodes: vec![0, 1, 2],
            skin_joints: vec![2, 0],
            inverse_bind_matrices: vec![Mat4::IDENTITY; 2],
            root_transform: Mat4::IDENTITY,
        }
    }

    #[test]
    fn palette_with_identity_ibms_is_the_model_pose() {
        let sk = skeleton();
        sk.validate().expect("valid skeleton");
        let mut model = vec![Mat4::IDENTITY; 3];
        sk.local_to_model(&sk.rest_pose, &mut model).expect("sizes match");
        let model: Vec<Affine3A> = model.iter().map(|m| Affine3A::from_mat4(*m)).collect();
        let mut palette = [Affine3A::ZERO; 2];
        palette_from_model(&sk, &model, None, &mut palette).expect("valid");
        assert_eq!(palette, [model[2], model[0]]);
        let world = Affine3A::from_translation(Vec3::new(5.0, 0.0, 0.0));
        palette_from_model(&sk, &model, Some(&world), &mut palette).expect("valid");
        assert_eq!(palette, [world * model[2], world * model[0]]);
    }

    #[test]
    fn palette_applies_inverse_bind_matrices_and_checks_sizes() {
        let mut sk = skeleton();
        let ibm = Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0));
        sk.inverse_bind_matrices[1] = ibm;
        let model = [
            Affine3A::from_rotation_x(0.4),
            Affine3A::IDENTITY,
            Affine3A::from_scale(Vec3::splat(2.0)),
        ];
        let mut palette = [Affine3A::ZERO; 2];
        palette_from_model(&sk, &model, None, &mut palette).expect("valid");
        assert!(palette[1].abs_diff_eq(model[0] * Affine3A::from_mat4(ibm), 1e-7));
        assert_eq!(
            palette_from_model(&sk, &model[..2], None, &mut palette),
            Err(Error::BufferSize {
                what: "model-space pose",
                expected: 3,
                actual: 2
            })
        );
        assert_eq!(
            palette_from_model(&sk, &model, None, &mut palette[..1]),
            Err(Error::BufferSize {
                what: "palette",
                expected: 2,
                actual: 1
            })
        );
        sk.skin_joints[0] = 3;
        assert_eq!(
            palette_from_model(&sk, &model, None, &mut palette),
            Err(Error::SkinJointOutOfRange {
                skin_joint: 0,
                joint: 3,
                joint_count: 3
            })
        );
    }
}
