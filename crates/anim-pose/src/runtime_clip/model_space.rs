//! The model-space error of a runtime clip: how far a virtual vertex ([`VirtualVertices`]) moves between the pose
//! that the runtime computes from the stored frames and the exact pose, both carried along the skeleton in f64.
//!
//! The chains are multiplied in f64 so that the measure sees the resampling error alone: on a chain of 30 joints
//! the f32 rounding of a model-space pose reaches tens of micrometres, a large part of a 0.1 mm budget, and the
//! runtime's f32 jobs add that rounding whatever the frames hold.

use glam::{Affine3A, DAffine3, DMat3, DQuat, DVec3, Vec3A, Vec4};

use crate::{NO_PARENT, Skeleton, VirtualVertices};

/// The local values of one joint: translation, rotation and scale as the runtime stores them.
pub(super) type Local = [Vec4; 3];

/// The virtual vertices a build measures.
enum Vertices<'a> {
    /// A cube around every joint, of half-size `distance` in model units: `VirtualVertices::cubes` of half-size 1,
    /// scaled per joint by `scales`.
    Joints {
        /// Unit cubes, one per joint.
        cubes: VirtualVertices,
        /// Per joint, the cube's half-size in the joint's own frame: `distance` over the largest scale of the
        /// joint's rest world matrix, so that the cube reaches `distance` in model units.
        scales: Vec<f32>,
    },
    /// The caller's virtual vertices, one set per skin joint, measured on skinning palettes.
    Skin {
        /// The virtual vertices.
        vertices: &'a VirtualVertices,
        /// Per skin joint, its inverse bind matrix.
        inverse_binds: Vec<DAffine3>,
    },
}

/// The model-space measure of one build: the skeleton's hierarchy, its root transform and the virtual vertices.
pub(super) struct ModelSpace<'a> {
    /// The skeleton.
    skeleton: &'a Skeleton,
    /// `Skeleton::root_transform`.
    root: DAffine3,
    /// What is measured.
    vertices: Vertices<'a>,
    /// Per joint, the local errors (translation, rotation, scale) that move no virtual vertex of the joint's
    /// subtree farther than the model budget in the rest pose, each on its own; see [`ModelSpace::new`].
    allowances: Vec<[f32; 3]>,
}

/// The affine part of a `Mat4` in f64.
fn daffine(m: &glam::Mat4) -> DAffine3 {
    DAffine3::from_mat4(m.as_dmat4())
}

/// The largest and smallest column lengths of a linear map.
fn column_lengths(m: &DMat3) -> (f64, f64) {
    let l = [m.x_axis.length(), m.y_axis.length(), m.z_axis.length()];
    (l[0].max(l[1]).max(l[2]), l[0].min(l[1]).min(l[2]))
}

/// `a - b`, entry by entry, rounded to f32: the difference of two poses, which [`VirtualVertices::joint_distance`]
/// against the zero matrix turns into the distance of a virtual vertex.
fn difference(a: &DAffine3, b: &DAffine3) -> Affine3A {
    let m = a.matrix3 - b.matrix3;
    Affine3A {
        matrix3: glam::Mat3A::from_cols(
            Vec3A::from(m.x_axis.as_vec3()),
            Vec3A::from(m.y_axis.as_vec3()),
            Vec3A::from(m.z_axis.as_vec3()),
        ),
        translation: Vec3A::from((a.translation - b.translation).as_vec3()),
    }
}

/// The local matrix of `local`, in f64, as `LocalToModelJob` builds it (the rotation is taken as stored).
fn local_matrix(local: &Local) -> DAffine3 {
    let [t, r, s] = local;
    DAffine3::from_scale_rotation_translation(
        s.truncate().as_dvec3(),
        DQuat::from_vec4(r.as_dvec4()),
        t.truncate().as_dvec3(),
    )
}

impl<'a> ModelSpace<'a> {
    /// The measure of a validated `skeleton`: cubes of half-size `distance` (model units) around every joint, or
    /// `vertices` (one set per skin joint, checked by the caller) on skinning palettes.
    ///
    /// The allowances come from the rest pose: a rotation error `e` at joint `j` moves the points of its subtree by
    /// at most `e · κ · r`, with `r` the largest distance from the joint to a joint of its subtree plus `distance`,
    /// and `κ` the ratio of the largest to the smallest column length of the parent's world matrix; a translation
    /// error moves them by `e · s`, `s` the parent's largest column length; a relative scale error by `e · r`.
    /// Each allowance is `model_budget` over that factor.
    pub(super) fn new(
        skeleton: &'a Skeleton,
        distance: f32,
        vertices: Option<&'a VirtualVertices>,
        model_budget: f32,
    ) -> Self {
        let root = daffine(&skeleton.root_transform);
        let n = skeleton.joint_count();
        let mut world = Vec::with_capacity(n);
        for (j, &p) in skeleton.parents.iter().enumerate() {
            let rest = &skeleton.rest_pose[j];
            let local = [
                rest.translation.extend(0.0),
                Vec4::from(rest.rotation),
                rest.scale.extend(0.0),
            ];
            let parent = if p == NO_PARENT { root } else { world[usize::from(p)] };
            world.push(parent * local_matrix(&local));
        }
        // The reach of each joint's subtree, children before parents (parents come first in joint order).
        let mut reach = vec![f64::from(distance); n];
        for j in (1..n).rev() {
            let p = skeleton.parents[j];
            if p == NO_PARENT {
                continue;
            }
            let p = usize::from(p);
            let span = world[j].translation.distance(world[p].translation) + reach[j];
            reach[p] = reach[p].max(span);
        }
        let budget = f64::from(model_budget);
        let allowances = (0..n)
            .map(|j| {
                let p = skeleton.parents[j];
                let parent = if p == NO_PARENT { root } else { world[usize::from(p)] };
                let (largest, smallest) = column_lengths(&parent.matrix3);
                let kappa = if smallest > 0.0 {
                    largest / smallest
                } else {
                    f64::INFINITY
                };
                let r = reach[j].max(f64::MIN_POSITIVE);
                let allow = |factor: f64| {
                    let a = budget / factor;
                    if a.is_finite() { a as f32 } else { f32::MAX }
                };
                [allow(largest), allow(kappa * r), allow(r)]
            })
            .collect();
        let vertices = match vertices {
            Some(vertices) => Vertices::Skin {
                vertices,
                inverse_binds: skeleton.inverse_bind_matrices.iter().map(daffine).collect(),
            },
            None => Vertices::Joints {
                cubes: VirtualVertices::cubes(n, 1.0),
                scales: world
                    .iter()
                    .map(|w| {
                        let s = f64::from(distance) / column_lengths(&w.matrix3).0;
                        if s.is_finite() { s as f32 } else { distance }
                    })
                    .collect(),
            },
        };
        Self {
            skeleton,
            root,
            vertices,
            allowances,
        }
    }

    /// Per joint, the allowances of [`ModelSpace::new`]: translation, rotation and relative scale.
    pub(super) fn allowances(&self, joint: usize) -> [f32; 3] {
        self.allowances.get(joint).copied().unwrap_or([f32::MAX; 3])
    }

    /// Carries a local pose (one [`Local`] per joint, from `local`) to world space (`root × model`) in f64.
    pub(super) fn world(&self, local: impl Fn(usize) -> Local, out: &mut Vec<DAffine3>) {
        out.clear();
        for (j, &p) in self.skeleton.parents.iter().enumerate() {
            let parent = if p == NO_PARENT { self.root } else { out[usize::from(p)] };
            out.push(parent * local_matrix(&local(j)));
        }
    }

    /// The largest distance a virtual vertex moves between world poses `a` and `b`, and the skeleton joint that
    /// carries it. A NaN distance counts as infinite.
    pub(super) fn distance(&self, a: &[DAffine3], b: &[DAffine3]) -> (f32, usize) {
        let mut worst = (0.0, 0);
        let mut keep = |e: f32, joint: usize| {
            if e > worst.0 {
                worst = (e, joint);
            }
        };
        match &self.vertices {
            Vertices::Joints { cubes, scales } => {
                for (j, (a, b)) in a.iter().zip(b).enumerate() {
                    let mut d = difference(a, b);
                    d.matrix3 *= scales[j];
                    keep(cubes.joint_distance(j, &d, &Affine3A::ZERO), j);
                }
            }
            Vertices::Skin {
                vertices,
                inverse_binds,
            } => {
                for (k, (&joint, ibm)) in self.skeleton.skin_joints.iter().zip(inverse_binds).enumerate() {
                    let j = usize::from(joint);
                    let (Some(a), Some(b)) = (a.get(j), b.get(j)) else {
                        continue;
                    };
                    // (A − B) · IBM, the difference of the two palette entries.
                    let d = DAffine3 {
                        matrix3: a.matrix3 - b.matrix3,
                        translation: a.translation - b.translation,
                    } * *ibm;
                    let zero = DAffine3 {
                        matrix3: DMat3::ZERO,
                        translation: DVec3::ZERO,
                    };
                    keep(vertices.joint_distance(k, &difference(&d, &zero), &Affine3A::ZERO), j);
                }
            }
        }
        worst
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::runtime_clip::tests::chain;

    /// The local values of the rest pose of `skeleton`, with joint `turned` turned by `angle` about +Z.
    fn pose(skeleton: &Skeleton, turned: usize, angle: f32) -> impl Fn(usize) -> Local + '_ {
        move |j| {
            let rest = &skeleton.rest_pose[j];
            let extra = if j == turned {
                Quat::from_rotation_z(angle)
            } else {
                Quat::IDENTITY
            };
            [
                rest.translation.extend(0.0),
                Vec4::from(rest.rotation * extra),
                rest.scale.extend(0.0),
            ]
        }
    }

    #[test]
    fn an_error_near_the_root_moves_the_whole_chain() {
        // Ten joints one unit apart along +Y: turning the root by e moves joint 9's cube corners, at (±d, 9 ± d, ±d),
        // by 2 sin(e / 2) times their distance from the Z axis, the farthest sqrt(d² + (9 + d)²).
        let skeleton = chain(10);
        let (d, e) = (0.03f32, 1e-3f32);
        let model = ModelSpace::new(&skeleton, d, None, 1e-4);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        model.world(pose(&skeleton, 0, 0.0), &mut a);
        model.world(pose(&skeleton, 0, e), &mut b);
        let (distance, joint) = model.distance(&a, &b);
        let expected = 2.0 * (f64::from(e) / 2.0).sin() * (f64::from(d).powi(2) + (9.0 + f64::from(d)).powi(2)).sqrt();
        assert_eq!(joint, 9);
        assert!(
            (f64::from(distance) - expected).abs() < 1e-6 * expected,
            "{distance} vs {expected}"
        );
        // The same error at the last joint moves only its own cube.
        model.world(pose(&skeleton, 9, e), &mut b);
        let (distance, joint) = model.distance(&a, &b);
        assert_eq!(joint, 9);
        let expected = 2.0 * (f64::from(e) / 2.0).sin() * (2.0 * f64::from(d).powi(2)).sqrt();
        assert!(
            (f64::from(distance) - expected).abs() < 1e-3 * expected,
            "{distance} vs {expected}"
        );
        // A joint's allowances shrink with the reach of its subtree: the root's rotation allowance is the budget
        // over 9 + d, the last joint's over d.
        let root = model.allowances(0)[1];
        let tip = model.allowances(9)[1];
        assert!(
            (root - 1e-4 / (9.0 + d)).abs() < 1e-9 && (tip - 1e-4 / d).abs() < 1e-7,
            "{root} {tip}"
        );
    }

    #[test]
    fn cubes_are_sized_in_model_units_and_skins_measure_palettes() {
        // A root scaled by 100 (a rig in centimetres under a scaled node): the cube still reaches d in model units.
        let mut skeleton = chain(3);
        skeleton.root_transform = glam::Mat4::from_scale(Vec3::splat(100.0));
        let model = ModelSpace::new(&skeleton, 0.03, None, 1e-4);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        model.world(pose(&skeleton, 2, 0.0), &mut a);
        model.world(pose(&skeleton, 2, 1e-3), &mut b);
        let (distance, _) = model.distance(&a, &b);
        let expected = 2.0 * (0.5e-3f64).sin() * (2.0 * 0.03f64.powi(2)).sqrt();
        assert!(
            (f64::from(distance) - expected).abs() < 1e-3 * expected,
            "{distance} vs {expected}"
        );
        // Virtual vertices of a skin, measured on palettes (model × inverse bind): ACL's shell of size 0 around each
        // joint's bind position, which the inverse bind matrices put at y = j.
        skeleton.root_transform = glam::Mat4::IDENTITY;
        skeleton.inverse_bind_matrices = (0..3)
            .map(|j| glam::Mat4::from_translation(-Vec3::Y * j as f32))
            .collect();
        let vertices = VirtualVertices::from_distance(&skeleton, 0.0).expect("invertible");
        let skin = ModelSpace::new(&skeleton, 0.03, Some(&vertices), 1e-4);
        skin.world(pose(&skeleton, 0, 0.0), &mut a);
        skin.world(pose(&skeleton, 0, 1e-3), &mut b);
        // Joint 2's bind position, at distance 2 from the turned root, moves farthest.
        let (distance, joint) = skin.distance(&a, &b);
        assert_eq!(joint, 2);
        assert!(
            (f64::from(distance) - 2.0 * 2.0 * (0.5e-3f64).sin()).abs() < 1e-8,
            "{distance}"
        );
    }
}
