//! The palette entry: one joint's skinning matrix in GPU layout.

use bytemuck::{Pod, Zeroable};
use glam::{Mat4, Vec3, Vec4};

use crate::{Error, Result};

/// The size of one palette entry in bytes. WGSL's `mat4x3<f32>` would take 64 B; three rows take 48 B.
pub const PALETTE_ENTRY_SIZE: usize = 48;

/// A 3×4 affine matrix stored as three row vectors, 48 B.
///
/// A point transforms as `p' = (dot(r0, p1), dot(r1, p1), dot(r2, p1))` with `p1 = (p, 1)`.
/// `shaders/palette.wgsl` declares the same layout as `struct PaletteEntry { rows: array<vec4<f32>, 3> }`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
pub struct PaletteEntry {
    /// The three rows of the affine matrix; column 3 is the translation.
    pub rows: [[f32; 4]; 3],
}

const _: () = assert!(size_of::<PaletteEntry>() == PALETTE_ENTRY_SIZE);
const _: () = assert!(align_of::<PaletteEntry>() == 4);

impl PaletteEntry {
    /// The identity transform.
    pub const IDENTITY: Self = Self {
        rows: [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]],
    };

    /// The top three rows of `m`. The last row of `m` is assumed to be `(0, 0, 0, 1)`.
    pub fn from_mat4(m: &Mat4) -> Self {
        Self {
            rows: [m.row(0).to_array(), m.row(1).to_array(), m.row(2).to_array()],
        }
    }

    /// Like [`PaletteEntry::from_mat4`], but checks that `m` is finite and affine.
    ///
    /// # Errors
    ///
    /// [`Error::NotAffine`] naming `what` and `index` when it is not.
    pub fn try_from_mat4(m: &Mat4, what: &'static str, index: usize) -> Result<Self> {
        if !m.is_finite() || m.row(3) != Vec4::W {
            return Err(Error::NotAffine { what, index });
        }
        Ok(Self::from_mat4(m))
    }

    /// The full 4×4 matrix.
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_cols_array_2d(&[self.rows[0], self.rows[1], self.rows[2], [0.0, 0.0, 0.0, 1.0]]).transpose()
    }

    /// Transforms a point, exactly as the shader does.
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        let p1 = p.extend(1.0);
        Vec3::new(
            Vec4::from(self.rows[0]).dot(p1),
            Vec4::from(self.rows[1]).dot(p1),
            Vec4::from(self.rows[2]).dot(p1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn matches_mat4() {
        let m = Mat4::from_scale_rotation_translation(
            Vec3::new(1.0, 2.0, 0.5),
            Quat::from_rotation_y(0.7),
            Vec3::new(3.0, -1.0, 2.0),
        );
        let e = PaletteEntry::from_mat4(&m);
        assert_eq!(e.to_mat4(), m);
        let p = Vec3::new(0.3, -4.0, 9.0);
        assert!(e.transform_point(p).abs_diff_eq(m.transform_point3(p), 1e-5));
    }

    #[test]
    fn rejects_projective() {
        let mut m = Mat4::IDENTITY;
        m.x_axis.w = 1.0;
        assert_eq!(
            PaletteEntry::try_from_mat4(&m, "palette", 3),
            Err(Error::NotAffine {
                what: "palette",
                index: 3
            })
        );
        assert!(PaletteEntry::try_from_mat4(&Mat4::IDENTITY, "palette", 0).is_ok());
    }
}
