//! [`PaletteBinding`]: a skeleton's skin prepared once for [`crate::FlattenJob`], and the skinning matrices of a
//! pose in row form.

use anim_pose::Skeleton;
use glam::{Affine3A, Vec4};

use super::poison;
use crate::{Error, Result};

/// A skeleton's skinning binding, prepared once for [`crate::FlattenJob`]: which skeleton joint each palette entry
/// reads, the inverse bind matrices as affine transforms, and the skeleton's root transform.
///
/// Every skinning matrix it produces is `root_transform × model[joint] × inverse_bind[joint]`: glTF places a
/// skeleton under its (static) ancestors, [`anim_pose::Skeleton::root_transform`], so palettes and
/// [`crate::animated_bounds`] are both in that *instance space*, the space an instance transform places.
#[derive(Clone, Debug, PartialEq)]
pub struct PaletteBinding {
    pub(super) joint_count: usize,
    /// The root transform, `None` when it is the identity (then no multiply is spent on it).
    pub(super) root: Option<Affine3A>,
    pub(super) skin_joints: Vec<u16>,
    pub(super) inverse_bind: Vec<Affine3A>,
    /// The rows of each inverse bind matrix, for [`skin_matrix_rows`].
    inverse_bind_rows: Vec<[Vec4; 3]>,
}

impl PaletteBinding {
    /// Prepares `skeleton`'s skin for flattening.
    ///
    /// # Errors
    ///
    /// - [`Error::BufferSize`] when the skeleton does not have one inverse bind matrix per skin joint;
    /// - [`Error::SkinJointOutOfRange`] when a skin joint maps past the skeleton's joints;
    /// - [`Error::NotAffine`] naming the skin joint whose inverse bind matrix is not finite or not affine, or the
    ///   root transform when it is not.
    pub fn new(skeleton: &Skeleton) -> Result<Self> {
        let n = skeleton.skin_joints.len();
        if skeleton.inverse_bind_matrices.len() != n {
            return Err(Error::BufferSize {
                what: "inverse bind matrices (one per skin joint)",
                expected: n,
                actual: skeleton.inverse_bind_matrices.len(),
            });
        }
        let joint_count = skeleton.joint_count();
        if let Some((skin_joint, &joint)) = skeleton
            .skin_joints
            .iter()
            .enumerate()
            .find(|&(_, &j)| usize::from(j) >= joint_count)
        {
            return Err(Error::SkinJointOutOfRange {
                skin_joint,
                joint,
                joint_count,
            });
        }
        let inverse_bind = skeleton
            .inverse_bind_matrices
            .iter()
            .enumerate()
            .map(|(k, m)| {
                if !m.is_finite() || m.row(3) != Vec4::W {
                    return Err(Error::NotAffine {
                        what: "inverse bind matrix of skin joint",
                        index: k,
                    });
                }
                Ok(Affine3A::from_mat4(*m))
            })
            .collect::<Result<_>>()?;
        let r = skeleton.root_transform;
        if !r.is_finite() || r.row(3) != Vec4::W {
            return Err(Error::NotAffine {
                what: "root transform of the skeleton",
                index: 0,
            });
        }
        let root = (r != glam::Mat4::IDENTITY).then(|| Affine3A::from_mat4(r));
        let inverse_bind_rows = skeleton
            .inverse_bind_matrices
            .iter()
            .map(|m| [m.row(0), m.row(1), m.row(2)])
            .collect();
        Ok(Self {
            joint_count,
            root,
            skin_joints: skeleton.skin_joints.clone(),
            inverse_bind,
            inverse_bind_rows,
        })
    }

    /// The number of skeleton joints: each model-space pose has this many matrices.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The skeleton's root transform, folded in front of every skinning matrix.
    pub fn root(&self) -> Affine3A {
        self.root.unwrap_or(Affine3A::IDENTITY)
    }

    /// The number of skin joints: each palette has this many entries.
    pub fn skin_joint_count(&self) -> usize {
        self.skin_joints.len()
    }

    /// The entries of palette `palette` (an instance's, or a pose-pool slot's) in a palette-major buffer:
    /// `palette * skin_joint_count()..(palette + 1) * skin_joint_count()`. Model-space poses are
    /// `joint_count()` matrices each instead; the two strides differ when the skeleton has joints without a skin
    /// index.
    pub fn palette_entries(&self, palette: usize) -> std::ops::Range<usize> {
        let s = self.skin_joint_count();
        palette * s..(palette + 1) * s
    }

    /// The skinning matrices of `pose` (one model-space transform per skeleton joint) for the first `rows.len()`
    /// skin joints, in row form (translation in `w`), into `rows`; returns their poison sum.
    #[inline]
    pub(crate) fn skin_rows(&self, pose: &[Affine3A], rows: &mut [[Vec4; 3]]) -> Vec4 {
        let mut acc = Vec4::ZERO;
        for (k, r) in rows.iter_mut().enumerate() {
            *r = self.skin_row(pose, k);
            acc += poison(r[0]) + poison(r[1]) + poison(r[2]);
        }
        acc
    }

    /// The skinning matrix of skin joint `k` of `pose`, in row form: `root × pose[joint] × inverse_bind[k]`.
    #[inline(always)]
    pub(crate) fn skin_row(&self, pose: &[Affine3A], k: usize) -> [Vec4; 3] {
        let m = &pose[usize::from(self.skin_joints[k])];
        let ibm = &self.inverse_bind_rows[k];
        match &self.root {
            None => skin_matrix_rows(m, ibm),
            Some(root) => skin_matrix_rows(&(*root * *m), ibm),
        }
    }
}

/// The rows of `m × ibm`, given the rows of `ibm`: row `r` is `Σₖ m[r][k] · ibm_row_k + (0, 0, 0, m[r][3])`, with
/// separate multiplies and adds in the order `(m[r][0]·I₀ + m[r][1]·I₁) + (m[r][2]·I₂ + (0, 0, 0, t_r))`.
#[inline(always)]
fn skin_matrix_rows(m: &Affine3A, ibm: &[Vec4; 3]) -> [Vec4; 3] {
    #[inline(always)]
    fn row(x: f32, y: f32, z: f32, t: f32, ibm: &[Vec4; 3]) -> Vec4 {
        (Vec4::splat(x) * ibm[0] + Vec4::splat(y) * ibm[1]) + (Vec4::splat(z) * ibm[2] + Vec4::new(0.0, 0.0, 0.0, t))
    }
    let (c, t) = (&m.matrix3, m.translation);
    [
        row(c.x_axis.x, c.y_axis.x, c.z_axis.x, t.x, ibm),
        row(c.x_axis.y, c.y_axis.y, c.z_axis.y, t.y, ibm),
        row(c.x_axis.z, c.y_axis.z, c.z_axis.z, t.z, ibm),
    ]
}
