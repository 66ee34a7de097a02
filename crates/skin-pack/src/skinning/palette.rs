//! The skinning palette of a skeleton's model-space pose: [`palette_from_model`].

use anim_pose::Skeleton;
use glam::Affine3A;

use super::check_len;
use crate::{Error, Result};

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
