//! Skeletons: joint hierarchy, rest pose and inverse bind matrices.

use glam::Mat4;

use crate::{Error, Result, SoaTransform, Transform, num_soa_joints, pack_soa};

/// The most joints a skeleton may have.
///
/// Parent indices are stored as `u16`, and GPU palettes of 1,024 joints × 48 B (48 KiB) still fit
/// comfortably in one uniform or storage binding per instance. No production crowd character comes
/// close; the importer rejects larger skins with an error that names the skin.
pub const MAX_JOINTS: usize = 1024;

/// The parent index of a root joint.
pub const NO_PARENT: u16 = u16::MAX;

/// A joint hierarchy imported from one glTF skin.
///
/// # Invariants
///
/// - Joints are in parent-before-child order: `parents[i] < i` or `parents[i] == NO_PARENT`.
/// - Joint 0 is the single root. The importer makes it the highest ancestor of the skin's joints that an
///   animation of the file moves (translation, rotation or scale), or, when no ancestor moves, the lowest common
///   ancestor of the skin's joints. An animated ancestor can be a plain node (a vehicle, a turntable, a rig's
///   offset node) or a joint of another skin.
/// - All per-joint vectors (`joint_names`, `parents`, `rest_pose`, `joint_nodes`) have `joint_count()` entries.
/// - `skin_joints` and `inverse_bind_matrices` are in the glTF skin's joint order, which is the order that
///   mesh `JOINTS_n` attributes index; `skin_joints[k]` is the skeleton joint of skin joint `k`.
/// - Joints that are not in the skin (nodes between two skin joints, between a skin joint and the common
///   ancestor, and from there up to the root) are kept, so that the hierarchy is exact and clips drive everything
///   that moves; they have no skin index.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// The skin's name, or `skin N` when it has none.
    pub name: String,
    /// The glTF skin index this skeleton was built from.
    pub skin: usize,
    /// Joint names (the node names, or `node N`).
    pub joint_names: Vec<String>,
    /// Parent joint index per joint, [`NO_PARENT`] for the root.
    pub parents: Vec<u16>,
    /// The rest pose (the nodes' own TRS, `matrix` nodes decomposed), local to the parent joint.
    pub rest_pose: Vec<Transform>,
    /// The glTF node index of each joint.
    pub joint_nodes: Vec<usize>,
    /// Skeleton joint index for each skin joint, in the skin's order.
    pub skin_joints: Vec<u16>,
    /// Inverse bind matrices in the skin's joint order; identity when the skin gives none.
    pub inverse_bind_matrices: Vec<Mat4>,
    /// The world transform of the root joint's parent node: the product of all the skeleton's ancestors, which
    /// no animation moves (the importer takes animated ancestors in as joints), identity when the root is a
    /// scene root.
    ///
    /// Following the glTF rule, a joint's world matrix is `root_transform * model_space[joint]`,
    /// and the transform of the node that holds the skinned mesh is ignored.
    pub root_transform: Mat4,
}

impl Skeleton {
    /// Builds a skeleton from a hierarchy alone, for procedural rigs and tests: joint `i` is named `joint i`,
    /// maps to node `i` and skin joint `i`, the inverse bind matrices are the identity, and the root transform is
    /// the identity. Set `joint_names` or `inverse_bind_matrices` afterwards when they matter.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] when `parents` and `rest_pose` differ in length, or the result breaks an invariant listed
    /// on the type (see [`Skeleton::validate`]).
    pub fn from_parents(name: &str, parents: Vec<u16>, rest_pose: Vec<Transform>) -> Result<Self> {
        let n = parents.len();
        if rest_pose.len() != n {
            return Err(Error::invalid(
                format!("skeleton '{name}'"),
                format!("{} rest transforms for {n} parents", rest_pose.len()),
            ));
        }
        if n > MAX_JOINTS {
            return Err(Error::invalid(
                format!("skeleton '{name}'"),
                format!("has {n} joints, more than the limit of {MAX_JOINTS}"),
            ));
        }
        let skeleton = Self {
            name: name.to_owned(),
            skin: 0,
            joint_names: (0..n).map(|i| format!("joint {i}")).collect(),
            parents,
            rest_pose,
            joint_nodes: (0..n).collect(),
            skin_joints: (0..n as u16).collect(),
            inverse_bind_matrices: vec![Mat4::IDENTITY; n],
            root_transform: Mat4::IDENTITY,
        };
        skeleton.validate()?;
        Ok(skeleton)
    }

    /// The number of joints, including joints that are not in the skin.
    pub fn joint_count(&self) -> usize {
        self.parents.len()
    }

    /// The number of skin joints: the length of a skinning palette.
    pub fn skin_joint_count(&self) -> usize {
        self.skin_joints.len()
    }

    /// The rest pose in SoA form, `num_soa_joints(joint_count())` elements with identity padding lanes: the
    /// `rest_pose` that [`crate::BlendingJob`] fills unweighted joints from. Allocates; call it once at setup.
    pub fn rest_pose_soa(&self) -> Vec<SoaTransform> {
        let mut out = vec![SoaTransform::IDENTITY; num_soa_joints(self.rest_pose.len())];
        // The length is right by construction.
        let _ = pack_soa(&self.rest_pose, &mut out);
        out
    }

    /// The index of the joint named `name`, if any.
    pub fn find_joint(&self, name: &str) -> Option<usize> {
        self.joint_names.iter().position(|n| n == name)
    }

    /// Depth of each joint below the root (the root has depth 0), written into `out`.
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] when `out` does not have `joint_count()` entries.
    pub fn depths(&self, out: &mut [u16]) -> Result<()> {
        check_len("joint depths", self.joint_count(), out.len())?;
        for (i, &p) in self.parents.iter().enumerate() {
            out[i] = if p == NO_PARENT { 0 } else { out[usize::from(p)] + 1 };
        }
        Ok(())
    }

    /// Converts a local pose to model space (relative to the skeleton root's parent; multiply by
    /// [`Skeleton::root_transform`] for world space).
    ///
    /// This is the plain reference implementation; the SoA job for crowds lives in the runtime.
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] when `local` or `model` does not have `joint_count()` entries.
    pub fn local_to_model(&self, local: &[Transform], model: &mut [Mat4]) -> Result<()> {
        check_len("local pose", self.joint_count(), local.len())?;
        check_len("model-space pose", self.joint_count(), model.len())?;
        for (i, &p) in self.parents.iter().enumerate() {
            let m = local[i].to_mat4();
            model[i] = if p == NO_PARENT { m } else { model[usize::from(p)] * m };
        }
        Ok(())
    }

    /// Writes the skinning palette, in skin joint order: `model[skin_joints[k]] * inverse_bind_matrices[k]`.
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] when `model` does not have `joint_count()` entries or `palette` does not
    /// have `skin_joint_count()` entries.
    pub fn palette(&self, model: &[Mat4], palette: &mut [Mat4]) -> Result<()> {
        check_len("model-space pose", self.joint_count(), model.len())?;
        check_len("palette", self.skin_joint_count(), palette.len())?;
        for ((out, &joint), ibm) in palette
            .iter_mut()
            .zip(&self.skin_joints)
            .zip(&self.inverse_bind_matrices)
        {
            *out = model[usize::from(joint)] * *ibm;
        }
        Ok(())
    }

    /// Checks the invariants listed on the type. Importers and generators call this before
    /// handing a skeleton out.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the skeleton and the joint at fault.
    pub fn validate(&self) -> Result<()> {
        let object = || format!("skeleton '{}'", self.name);
        let n = self.joint_count();
        if n == 0 {
            return Err(Error::invalid(object(), "has no joints"));
        }
        if n > MAX_JOINTS {
            return Err(Error::invalid(
                object(),
                format!("has {n} joints, more than the limit of {MAX_JOINTS}"),
            ));
        }
        for (what, len) in [
            ("joint_names", self.joint_names.len()),
            ("rest_pose", self.rest_pose.len()),
            ("joint_nodes", self.joint_nodes.len()),
        ] {
            if len != n {
                return Err(Error::invalid(
                    object(),
                    format!("{what} has {len} entries for {n} joints"),
                ));
            }
        }
        if self.inverse_bind_matrices.len() != self.skin_joints.len() {
            return Err(Error::invalid(
                object(),
                format!(
                    "{} inverse bind matrices for {} skin joints",
                    self.inverse_bind_matrices.len(),
                    self.skin_joints.len()
                ),
            ));
        }
        for (i, &p) in self.parents.iter().enumerate() {
            let root = i == 0;
            if root != (p == NO_PARENT) || (!root && usize::from(p) >= i) {
                return Err(Error::invalid(
                    object(),
                    format!(
                        "joint {i} ('{}') has parent {p}, which breaks parent-before-child order with a single root",
                        self.joint_names[i]
                    ),
                ));
            }
            if !self.rest_pose[i].is_finite() {
                return Err(Error::invalid(
                    object(),
                    format!("joint {i} ('{}') has a non-finite rest pose", self.joint_names[i]),
                ));
            }
        }
        for (k, &j) in self.skin_joints.iter().enumerate() {
            if usize::from(j) >= n {
                return Err(Error::invalid(
                    object(),
                    format!("skin joint {k} maps to joint {j}, out of range for {n} joints"),
                ));
            }
            if !self.inverse_bind_matrices[k].is_finite() {
                return Err(Error::invalid(
                    object(),
                    format!("inverse bind matrix {k} is not finite"),
                ));
            }
        }
        if !self.root_transform.is_finite() {
            return Err(Error::invalid(object(), "root transform is not finite"));
        }
        Ok(())
    }
}

pub(crate) fn check_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::BufferSize { what, expected, actual })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SoA rest pose unpacks to the rest pose, with identity in the padding lanes.
    #[test]
    fn rest_pose_soa_packs_the_rest_pose() {
        let rest: Vec<Transform> = (0..6)
            .map(|j| Transform {
                translation: glam::Vec3::new(j as f32, 0.5, -1.0),
                rotation: glam::Quat::from_rotation_z(0.1 * j as f32),
                scale: glam::Vec3::splat(1.0 + 0.1 * j as f32),
            })
            .collect();
        let s = Skeleton::from_parents("chain", vec![NO_PARENT, 0, 1, 2, 3, 4], rest.clone()).expect("valid");
        let soa = s.rest_pose_soa();
        assert_eq!(soa.len(), num_soa_joints(6));
        let mut out = vec![Transform::IDENTITY; 8];
        crate::unpack_soa(&soa, &mut out).expect("sized");
        assert_eq!(&out[..6], &rest[..]);
        assert_eq!(&out[6..], &[Transform::IDENTITY; 2]);
    }

    #[test]
    fn from_parents_builds_a_valid_skeleton_or_names_the_fault() {
        let s = Skeleton::from_parents("arm", vec![NO_PARENT, 0, 1], vec![Transform::IDENTITY; 3]).expect("valid");
        assert_eq!(s.joint_count(), 3);
        assert_eq!(s.skin_joints, vec![0, 1, 2]);
        assert_eq!(s.joint_names[2], "joint 2");
        assert_eq!(s.inverse_bind_matrices, vec![Mat4::IDENTITY; 3]);
        let rows: [(Vec<u16>, usize, &str); 4] = [
            (vec![NO_PARENT, 0], 3, "3 rest transforms for 2 parents"),
            (vec![], 0, "has no joints"),
            (vec![NO_PARENT, 2, 0], 3, "parent-before-child"),
            (vec![NO_PARENT, NO_PARENT], 2, "single root"),
        ];
        for (parents, rest, expected) in rows {
            let e = Skeleton::from_parents("bad", parents, vec![Transform::IDENTITY; rest]).expect_err(expected);
            let message = e.to_string();
            assert!(
                message.contains("skeleton 'bad'") && message.contains(expected),
                "{message}"
            );
        }
    }
}
