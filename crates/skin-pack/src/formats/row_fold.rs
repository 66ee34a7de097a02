//! [`RowFold`]: an instance transform folded in front of skinning matrices given as rows, the portable twin of the
//! f32 and [`crate::Mat3x4F16`] kernels, and the range checks that let those kernels skip clamps and checks.

use glam::{Affine3A, Mat3A, Vec4};

/// Instance values that fold safely into the f16 formats: a folded value whose bound stays under this never
/// overflows f16 after f32 rounding (which adds a relative `4·2⁻²⁴` at most), so no clamp is needed.
#[cfg_attr(
    not(all(target_arch = "x86_64", not(feature = "portable"))),
    allow(dead_code, reason = "the range checks guard the SIMD kernels only")
)]
pub(crate) const FOLD_SAFE_MAX: f32 = 65_000.0;

/// The linear part `m` of a transform by rows: `[r][c]` is element (row r, column c).
#[inline(always)]
pub(crate) fn linear_rows(m: &Mat3A) -> [[f32; 3]; 3] {
    [0, 1, 2].map(|r| [m.x_axis[r], m.y_axis[r], m.z_axis[r]])
}

/// `max_r Σ_c |m[r][c]|`, the infinity norm of a 3 × 3 matrix given by rows; NaN when any element is NaN (so a
/// range check `norm · x ≤ limit` fails for it).
#[inline]
pub(crate) fn norm_inf(m: &[[f32; 3]; 3]) -> f32 {
    let rows = m.map(|r| r[0].abs() + r[1].abs() + r[2].abs());
    if rows.iter().any(|x| x.is_nan()) {
        f32::NAN
    } else {
        rows[0].max(rows[1]).max(rows[2])
    }
}

/// Whether folding `t` into f32 rows whose largest absolute value is `max_abs` cannot overflow:
/// `‖L_T‖∞ · max_abs + Σ|t_T| ≤ f32::MAX / 1024` (each element of `T × S` is at most `‖L_T‖∞ · max|S| + |t|`
/// before rounding, and the few roundings on the way stay far inside the factor of 2¹⁰ left). False for NaN.
#[inline]
#[cfg_attr(
    not(all(target_arch = "x86_64", not(feature = "portable"))),
    allow(dead_code, reason = "the range checks guard the SIMD kernels only")
)]
pub(crate) fn f32_fold_in_range(t: &Affine3A, max_abs: f32) -> bool {
    let shift = t.translation.abs();
    norm_inf(&linear_rows(&t.matrix3)) * max_abs + (shift.x + shift.y + shift.z) <= f32::MAX / 1024.0
}

/// An instance transform `T`, prepared to multiply matrices given as rows: row `r` of `T × S` is
/// `T[r][0] S₀ + T[r][1] S₁ + T[r][2] S₂ + (0, 0, 0, T[r][3])`, so each element of `T` is splat once per palette.
pub(crate) struct RowFold {
    splat: [[Vec4; 3]; 3],
    translation: [Vec4; 3],
}

impl RowFold {
    #[inline(always)]
    pub(crate) fn new(t: &Affine3A) -> Self {
        let e = linear_rows(&t.matrix3);
        Self {
            splat: e.map(|r| r.map(Vec4::splat)),
            translation: [0, 1, 2].map(|r| Vec4::new(0.0, 0.0, 0.0, t.translation[r])),
        }
    }

    /// `T × S` with `T`'s translation left out (the rows relative to the origin `T.translation`), each row
    /// `T[r][0]·S₀ + (T[r][1]·S₁ + T[r][2]·S₂)` with the two outer operations fused: the [`crate::Mat3x4F16`]
    /// kernel's order.
    #[inline(always)]
    pub(crate) fn apply_relative(&self, s: &[Vec4; 3]) -> [Vec4; 3] {
        let row = |e: &[Vec4; 3]| e[0].mul_add(s[0], e[1].mul_add(s[1], e[2] * s[2]));
        [row(&self.splat[0]), row(&self.splat[1]), row(&self.splat[2])]
    }

    /// `T × S`, each row `T[r][0]·S₀ + (T[r][1]·S₁ + (T[r][2]·S₂ + (0, 0, 0, t_r)))` as three fused multiply-adds:
    /// the f32 kernel's order.
    #[inline(always)]
    pub(crate) fn apply_fused(&self, s: &[Vec4; 3]) -> [Vec4; 3] {
        let row = |e: &[Vec4; 3], t: Vec4| e[0].mul_add(s[0], e[1].mul_add(s[1], e[2].mul_add(s[2], t)));
        [
            row(&self.splat[0], self.translation[0]),
            row(&self.splat[1], self.translation[1]),
            row(&self.splat[2], self.translation[2]),
        ]
    }

    /// `T × S`, each row `(T[r][0]·S₀ + T[r][1]·S₁) + (T[r][2]·S₂ + (0, 0, 0, t_r))` with separate multiplies and
    /// adds: the path where each palette reads its own pose, which has no kernel (a fused multiply-add is a call
    /// where the target lacks FMA).
    #[inline(always)]
    pub(crate) fn apply(&self, s: &[Vec4; 3]) -> [Vec4; 3] {
        let row = |e: &[Vec4; 3], t: Vec4| (e[0] * s[0] + e[1] * s[1]) + (e[2] * s[2] + t);
        [
            row(&self.splat[0], self.translation[0]),
            row(&self.splat[1], self.translation[1]),
            row(&self.splat[2], self.translation[2]),
        ]
    }
}
