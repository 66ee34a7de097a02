//! Unit tests of CPU skinning: the validity rules, the parallel job against the reference, normals under
//! non-uniform scale and mirroring, and the palette of a model-space pose.

use super::*;
use anim_pose::{NO_PARENT, Skeleton, Transform};
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
    let b =
        Affine3A::from_scale_rotation_translation(Vec3::new(0.2, 2.0, -1.5), Quat::from_rotation_z(0.4), Vec3::ZERO);
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
