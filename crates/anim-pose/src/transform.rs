//! Translation, rotation and scale (TRS) transforms.

use glam::{Mat4, Quat, Vec3};

/// A joint's local transform as translation, rotation and non-uniform scale.
///
/// The matrix is `T * R * S`, as in glTF.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Translation.
    pub translation: Vec3,
    /// Rotation, a unit quaternion.
    pub rotation: Quat,
    /// Non-uniform scale.
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// The identity transform.
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// The matrix `T * R * S`.
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// Decomposes an affine matrix into TRS.
    ///
    /// glTF requires `matrix` nodes to be decomposable (no shear, no projection).
    /// Returns `None` when the matrix has non-finite elements, a non-affine last row, or a zero scale axis.
    pub fn from_mat4(m: &Mat4) -> Option<Self> {
        if !m.is_finite() {
            return None;
        }
        let row3 = m.row(3);
        if (row3 - glam::Vec4::new(0.0, 0.0, 0.0, 1.0)).abs().max_element() > 1e-5 {
            return None;
        }
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        if !scale.is_finite() || !rotation.is_finite() || scale.abs().min_element() <= f32::EPSILON {
            return None;
        }
        Some(Self {
            translation,
            rotation: rotation.normalize(),
            scale,
        })
    }

    /// True when all components are finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_round_trip() {
        let t = Transform {
            translation: Vec3::new(1.0, -2.0, 3.5),
            rotation: Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
            scale: Vec3::new(0.5, 2.0, 1.5),
        };
        let back = Transform::from_mat4(&t.to_mat4()).expect("decomposable");
        assert!(back.translation.abs_diff_eq(t.translation, 1e-5));
        assert!(back.scale.abs_diff_eq(t.scale, 1e-5));
        assert!(back.rotation.dot(t.rotation).abs() > 1.0 - 1e-6);
    }

    #[test]
    fn rejects_projective_and_non_finite() {
        let mut m = Mat4::IDENTITY;
        m.x_axis.w = 0.5;
        assert!(Transform::from_mat4(&m).is_none());
        let mut m = Mat4::IDENTITY;
        m.w_axis.x = f32::NAN;
        assert!(Transform::from_mat4(&m).is_none());
        assert!(Transform::from_mat4(&Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0))).is_none());
    }
}
