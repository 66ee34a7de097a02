//! One model-space error measure for everything that approximates a pose: the largest distance that a vertex can
//! move between two skinning palettes, measured on virtual vertices, as ACL measures its compression error.
//!
//! A bake (`anim-bake`) and, later, a runtime clip compare a played-back pose with the exact one. Comparing local
//! rotations and translations says little about what a viewer sees: a small error at the hip moves the hand far
//! more than the same error at the wrist. Comparing vertices does say it, and [`VirtualVertices`] keeps that cheap:
//! per skin joint it holds the eight corners of a box in bind space, and the measure is the largest distance between
//! a corner skinned by one palette and by the other, `max_k max_c |A_k · c − B_k · c|`.
//!
//! # The bound
//!
//! [`VirtualVertices::from_meshes`] gives each skin joint the bind-space box of every vertex that it influences.
//! Then for every such vertex `p` with weights `w_k ≥ 0` summing to 1, its displacement between linear-blend
//! skinning with `A` and with `B` is at most the measure:
//! `|Σ w_k (A_k − B_k) p| ≤ Σ w_k |(A_k − B_k) p| ≤ max_k max_{q ∈ box_k} |(A_k − B_k) q|`, and a convex function
//! (the norm of an affine map) takes its largest value over a box at a corner.
//! [`VirtualVertices::from_distance`] (ACL's shell distance) puts a cube of half-size `d` around each joint's bind
//! position instead, for a skeleton without meshes or for attachments that reach `d` from a joint.
//! [`largest_point_distance`] measures skinned vertices themselves, where a caller has them.

use glam::{Affine3A, Vec3};

use crate::{Error, Result, Skeleton, SkinnedMesh};

/// The largest distance between two poses' virtual vertices, and where it occurs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModelError {
    /// The largest distance, in model units.
    pub distance: f32,
    /// The skin joint (palette entry) whose virtual vertex moved farthest.
    pub skin_joint: usize,
    /// Which of its eight corners: bit 0 set for the box's largest x, bit 1 for y, bit 2 for z.
    pub corner: usize,
}

/// The largest distance between two point sets, and where it occurs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PointError {
    /// The largest distance, in model units (infinite when a distance is NaN).
    pub distance: f32,
    /// The index of the point.
    pub index: usize,
}

/// Per skin joint, the eight corners of a box in bind space (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct VirtualVertices {
    /// Per skin joint, the corners; `None` for a joint that influences no vertex.
    corners: Vec<Option<[Vec3; 8]>>,
}

/// The eight corners of the box from `min` to `max`, bit `i` of the index choosing the largest of axis `i`.
fn corners(min: Vec3, max: Vec3) -> [Vec3; 8] {
    std::array::from_fn(|i| {
        Vec3::new(
            if i & 1 == 0 { min.x } else { max.x },
            if i & 2 == 0 { min.y } else { max.y },
            if i & 4 == 0 { min.z } else { max.z },
        )
    })
}

impl VirtualVertices {
    /// Per skin joint of `skeleton`, the bind-space box of every vertex of `meshes` that it influences with a
    /// non-zero weight. Joints that influence nothing get no corners.
    ///
    /// # Errors
    ///
    /// - [`Error::BufferSize`] when a mesh has fewer joint or weight entries than positions.
    /// - [`Error::InvalidArgument`] when a vertex names a joint outside the skin or a position is not finite.
    pub fn from_meshes(skeleton: &Skeleton, meshes: &[&SkinnedMesh]) -> Result<Self> {
        let n = skeleton.skin_joint_count();
        let mut boxes = vec![(Vec3::INFINITY, Vec3::NEG_INFINITY); n];
        for mesh in meshes {
            for (what, len) in [("mesh joints", mesh.joints.len()), ("mesh weights", mesh.weights.len())] {
                if len < mesh.positions.len() {
                    return Err(Error::BufferSize {
                        what,
                        expected: mesh.positions.len(),
                        actual: len,
                    });
                }
            }
            for (v, ((p, joints), weights)) in mesh.positions.iter().zip(&mesh.joints).zip(&mesh.weights).enumerate() {
                if !p.is_finite() {
                    return Err(Error::InvalidArgument {
                        what: "virtual vertices",
                        message: format!("mesh '{}' vertex {v} is not finite", mesh.name),
                    });
                }
                for (&j, &w) in joints.iter().zip(weights) {
                    if w == 0.0 {
                        continue;
                    }
                    let b = boxes.get_mut(usize::from(j)).ok_or_else(|| Error::InvalidArgument {
                        what: "virtual vertices",
                        message: format!(
                            "mesh '{}' vertex {v} names joint {j}, outside the skin's {n} joints",
                            mesh.name
                        ),
                    })?;
                    *b = (b.0.min(*p), b.1.max(*p));
                }
            }
        }
        Ok(Self {
            corners: boxes
                .into_iter()
                .map(|(lo, hi)| lo.cmple(hi).all().then(|| corners(lo, hi)))
                .collect(),
        })
    }

    /// Per skin joint of `skeleton`, the corners of a cube of half-size `distance` around the joint, aligned with
    /// the joint's bind-pose axes: the inverse bind matrix's inverse applied to `(±d, ±d, ±d)`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `distance` is not finite and non-negative, or an inverse bind matrix is not
    /// invertible.
    pub fn from_distance(skeleton: &Skeleton, distance: f32) -> Result<Self> {
        if !(distance.is_finite() && distance >= 0.0) {
            return Err(Error::InvalidArgument {
                what: "virtual vertex distance",
                message: format!("{distance} is not finite and non-negative"),
            });
        }
        let cube = corners(Vec3::splat(-distance), Vec3::splat(distance));
        let corners = skeleton
            .inverse_bind_matrices
            .iter()
            .enumerate()
            .map(|(k, ibm)| {
                let bind = Affine3A::from_mat4(*ibm).inverse();
                if !bind.is_finite() {
                    return Err(Error::InvalidArgument {
                        what: "virtual vertices",
                        message: format!(
                            "inverse bind matrix {k} of skeleton '{}' is not invertible",
                            skeleton.name
                        ),
                    });
                }
                Ok(Some(cube.map(|c| bind.transform_point3(c))))
            })
            .collect::<Result<_>>()?;
        Ok(Self { corners })
    }

    /// `count` joints whose virtual vertices are the corners of a cube of half-size `distance` around each joint's
    /// own origin: for comparing joint transforms themselves (sockets, attachments) rather than skinning matrices.
    pub fn cubes(count: usize, distance: f32) -> Self {
        let cube = corners(Vec3::splat(-distance), Vec3::splat(distance));
        Self {
            corners: vec![Some(cube); count],
        }
    }

    /// The number of joints.
    pub fn joint_count(&self) -> usize {
        self.corners.len()
    }

    /// The largest distance between joint `k`'s virtual vertices transformed by `a` and by `b` (0 for a joint without
    /// virtual vertices or past the end; infinite for a NaN distance): one term of
    /// [`VirtualVertices::largest_distance`], for callers that prune per joint.
    pub fn joint_distance(&self, k: usize, a: &Affine3A, b: &Affine3A) -> f32 {
        let Some(Some(corners)) = self.corners.get(k) else {
            return 0.0;
        };
        let d = Affine3A {
            matrix3: a.matrix3 - b.matrix3,
            translation: a.translation - b.translation,
        };
        corners.iter().fold(0.0, |worst, p| {
            let e = d.transform_point3(*p).length();
            if e.is_nan() { f32::INFINITY } else { worst.max(e) }
        })
    }

    /// The largest distance between a virtual vertex transformed by `a[k]` and by `b[k]`, over every joint `k` and
    /// corner. `a` and `b` are skinning palettes (`root × model × inverse_bind`, in skin order) or, for
    /// [`VirtualVertices::cubes`], joint transforms. A NaN distance counts as infinite.
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] when `a` or `b` does not have one matrix per joint.
    pub fn largest_distance(&self, a: &[Affine3A], b: &[Affine3A]) -> Result<ModelError> {
        for (what, len) in [("first palette", a.len()), ("second palette", b.len())] {
            if len != self.corners.len() {
                return Err(Error::BufferSize {
                    what,
                    expected: self.corners.len(),
                    actual: len,
                });
            }
        }
        let mut worst = ModelError::default();
        for (k, ((corners, a), b)) in self.corners.iter().zip(a).zip(b).enumerate() {
            let Some(corners) = corners else { continue };
            // (A − B)·c, with the difference taken once per joint.
            let d = Affine3A {
                matrix3: a.matrix3 - b.matrix3,
                translation: a.translation - b.translation,
            };
            for (c, p) in corners.iter().enumerate() {
                let e = d.transform_point3(*p).length();
                let e = if e.is_nan() { f32::INFINITY } else { e };
                if e > worst.distance {
                    worst = ModelError {
                        distance: e,
                        skin_joint: k,
                        corner: c,
                    };
                }
            }
        }
        Ok(worst)
    }

    /// [`VirtualVertices::largest_distance`] of two model-space poses of `skeleton` (one matrix per skeleton joint,
    /// as `LocalToModelJob` writes them), each turned into the palette `root × model[skin_joints[k]] ×
    /// inverse_bind[k]` on the fly; `root` is `Skeleton::root_transform` as an `Affine3A`, or `None` for identity.
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] when a pose does not have one matrix per skeleton joint, or this measure was built for
    /// another skin.
    pub fn largest_model_distance(
        &self,
        skeleton: &Skeleton,
        a: &[Affine3A],
        b: &[Affine3A],
        root: Option<&Affine3A>,
    ) -> Result<ModelError> {
        for (what, expected, len) in [
            ("first model-space pose", skeleton.joint_count(), a.len()),
            ("second model-space pose", skeleton.joint_count(), b.len()),
            (
                "virtual vertices (one set per skin joint)",
                skeleton.skin_joint_count(),
                self.corners.len(),
            ),
        ] {
            if len != expected {
                return Err(Error::BufferSize {
                    what,
                    expected,
                    actual: len,
                });
            }
        }
        let root = root.copied().unwrap_or(Affine3A::IDENTITY);
        let mut worst = ModelError::default();
        for (k, (&joint, ibm)) in skeleton
            .skin_joints
            .iter()
            .zip(&skeleton.inverse_bind_matrices)
            .enumerate()
        {
            let j = usize::from(joint);
            let (Some(ma), Some(mb)) = (a.get(j), b.get(j)) else {
                return Err(Error::BufferSize {
                    what: "model-space pose (a skin joint maps past it)",
                    expected: j + 1,
                    actual: a.len(),
                });
            };
            let ibm = Affine3A::from_mat4(*ibm);
            let pa = [root * *ma * ibm];
            let pb = [root * *mb * ibm];
            let one = Self {
                corners: vec![self.corners[k]],
            };
            let e = one.largest_distance(&pa, &pb)?;
            if e.distance > worst.distance {
                worst = ModelError { skin_joint: k, ..e };
            }
        }
        Ok(worst)
    }
}

/// The largest distance between `a[i]` and `b[i]` over the common length of the two slices (skinned vertices of a
/// played-back and an exact pose, for example). A NaN distance counts as infinite.
pub fn largest_point_distance(a: &[Vec3], b: &[Vec3]) -> PointError {
    let mut worst = PointError::default();
    for (i, (p, q)) in a.iter().zip(b).enumerate() {
        let d = p.distance(*q);
        let d = if d.is_nan() { f32::INFINITY } else { d };
        if d > worst.distance {
            worst = PointError { distance: d, index: i };
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Indices, Material, NO_PARENT, Transform};
    use glam::{Mat4, Quat};

    /// A three-joint chain and a mesh of vertices blending random pairs of joints.
    fn rig(seed: u32) -> (Skeleton, SkinnedMesh) {
        let mut s = seed;
        let mut rnd = move || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32) * 2.0 - 1.0
        };
        let rest = vec![
            Transform::IDENTITY,
            Transform {
                translation: Vec3::Y,
                ..Transform::IDENTITY
            },
            Transform {
                translation: Vec3::Y,
                ..Transform::IDENTITY
            },
        ];
        let mut skeleton = Skeleton::from_parents("chain", vec![NO_PARENT, 0, 1], rest).unwrap();
        skeleton.inverse_bind_matrices = (0..3).map(|j| Mat4::from_translation(-Vec3::Y * j as f32)).collect();
        let n = 200;
        let positions: Vec<Vec3> = (0..n)
            .map(|_| Vec3::new(rnd() * 0.3, rnd() + 1.0, rnd() * 0.3))
            .collect();
        let joints: Vec<[u16; 4]> = (0..n).map(|i| [(i % 3) as u16, ((i + 1) % 3) as u16, 0, 0]).collect();
        let weights: Vec<[f32; 4]> = (0..n)
            .map(|_| {
                let w = (rnd() + 1.0) / 2.0;
                [w, 1.0 - w, 0.0, 0.0]
            })
            .collect();
        let mesh = SkinnedMesh {
            name: "blob".into(),
            mesh: 0,
            primitive: 0,
            normals: Vec::new(),
            tangents: Vec::new(),
            uvs: Vec::new(),
            colors: Vec::new(),
            indices: Indices::U32(Vec::new()),
            max_influences: 2,
            source_max_influences: 2,
            material: Material::default(),
            bounds: crate::Aabb::from_points(&positions),
            positions,
            joints,
            weights,
        };
        (skeleton, mesh)
    }

    fn skin(palette: &[Affine3A], mesh: &SkinnedMesh) -> Vec<Vec3> {
        mesh.positions
            .iter()
            .zip(&mesh.joints)
            .zip(&mesh.weights)
            .map(|((p, j), w)| {
                (0..4)
                    .map(|i| palette[usize::from(j[i])].transform_point3(*p) * w[i])
                    .sum()
            })
            .collect()
    }

    #[test]
    fn virtual_vertices_bound_the_skinned_displacement() {
        for seed in 1..40u32 {
            let (skeleton, mesh) = rig(seed.wrapping_mul(2_654_435_761) | 1);
            let vv = VirtualVertices::from_meshes(&skeleton, &[&mesh]).unwrap();
            let f = seed as f32 * 0.37;
            let a: Vec<Affine3A> = (0..3)
                .map(|j| Affine3A::from_rotation_translation(Quat::from_rotation_z(f * j as f32), Vec3::X * f))
                .collect();
            let b: Vec<Affine3A> = (0..3)
                .map(|j| {
                    Affine3A::from_scale_rotation_translation(
                        Vec3::splat(1.0 + 0.01 * f),
                        Quat::from_rotation_x(0.1 * f * j as f32),
                        Vec3::Y * 0.1,
                    )
                })
                .collect();
            let bound = vv.largest_distance(&a, &b).unwrap();
            let actual = largest_point_distance(&skin(&a, &mesh), &skin(&b, &mesh));
            assert!(
                actual.distance <= bound.distance * (1.0 + 1e-5) + 1e-6,
                "seed {seed}: {actual:?} > {bound:?}"
            );
            // The bound is attained by some corner, which is near a vertex: it is not wildly loose.
            assert!(
                bound.distance < actual.distance * 3.0 + 1e-3,
                "seed {seed}: {actual:?} vs {bound:?}"
            );
            // Identical palettes are at distance zero.
            assert_eq!(vv.largest_distance(&a, &a).unwrap().distance, 0.0);
        }
    }

    #[test]
    fn model_space_poses_and_distances() {
        let (skeleton, mesh) = rig(7);
        let vv = VirtualVertices::from_meshes(&skeleton, &[&mesh]).unwrap();
        let a = vec![Affine3A::IDENTITY; 3];
        let mut b = a.clone();
        b[2] = Affine3A::from_translation(Vec3::X * 0.25);
        let e = vv.largest_model_distance(&skeleton, &a, &b, None).unwrap();
        assert!((e.distance - 0.25).abs() < 1e-6);
        assert_eq!(e.skin_joint, 2);
        // Cubes around joint origins: a rotation of 0.01 rad about z moves the corners, 0.5·√2 from the axis, by
        // 2·sin(0.005)·0.5·√2.
        let r = vec![Affine3A::from_rotation_z(0.01); 3];
        let e = VirtualVertices::cubes(3, 0.5)
            .largest_distance(&r, &[Affine3A::IDENTITY; 3])
            .unwrap();
        assert!(
            (e.distance - 2.0 * 0.005f32.sin() * 0.5 * 2f32.sqrt()).abs() < 1e-6,
            "{e:?}"
        );
        // ACL's shell around each joint's bind position: joint 2 sits at y = 2, so a rotation about the origin
        // moves its corners farthest.
        let shell = VirtualVertices::from_distance(&skeleton, 0.5).unwrap();
        let e = shell.largest_distance(&r, &[Affine3A::IDENTITY; 3]).unwrap();
        assert_eq!(e.skin_joint, 2);
        assert!(e.distance > 0.02 && e.distance < 0.03, "{e:?}");
        assert!(matches!(
            vv.largest_distance(&a[..2], &b),
            Err(Error::BufferSize { .. })
        ));
        assert!(VirtualVertices::from_distance(&skeleton, f32::NAN).is_err());
        let p = largest_point_distance(&[Vec3::ZERO, Vec3::X], &[Vec3::ZERO, Vec3::NAN]);
        assert_eq!(
            p,
            PointError {
                distance: f32::INFINITY,
                index: 1
            }
        );
    }
}
