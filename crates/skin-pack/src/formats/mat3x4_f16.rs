//! [`Mat3x4F16`]: the 3×4 skinning matrix in f16, 24 B per joint.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Vec3A, Vec4};

use super::row_fold::RowFold;
#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
use super::row_fold::{FOLD_SAFE_MAX, linear_rows, norm_inf};
use super::sealed::Format;
use super::{
    A, F16_MAX, F16Format, U, check_finite, check_range, encode_halves, evaluation_bound, frobenius, translation_bound,
    translation_vertex_bound, up,
};
use crate::flatten::{CachedPose, poison};
use crate::kernels::Tier;
use crate::quant::{halves_from_f32, pack2x16, unpack_halves, unpack2x16float};
use crate::{PaletteFormat, Result};

/// A 3×4 affine skinning matrix as twelve f16 values in six `u32`s, 24 B (half of `PaletteEntry`).
///
/// Row `i` is `rows[i] = [(Lᵢ₀, Lᵢ₁), (Lᵢ₂, tᵢ − originᵢ)]`, two halves per word with the first in the low 16 bits,
/// so that WGSL decodes a row as `vec4(unpack2x16float(w.x), unpack2x16float(w.y))` (spelled `unpack_halves`)
/// (`struct Mat3x4F16 { rows: array<vec2<u32>, 3> }` in `shaders/palette_f16.wgsl`, 24 B, align 8, so an array
/// of them has the same 24-byte stride as this type).
/// It holds any affine matrix whose elements and translation offsets are within ±65504; the error bounds are in
/// the [module docs](crate::F16Format): per element `u·|Lᵢⱼ| + 2⁻²⁵` (u = 2⁻¹¹) and
/// `(u + 2⁻²³)·|dᵢ| + 2⁻²⁴·|tᵢ| + 2⁻²⁴` for the translation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct Mat3x4F16 {
    /// Three rows, each two words of two halves: `[(r.x, r.y), (r.z, r.w)]`.
    pub rows: [[u32; 2]; 3],
}

const _: () = assert!(size_of::<Mat3x4F16>() == 24);
const _: () = assert!(align_of::<Mat3x4F16>() == 4);

impl PaletteFormat for Mat3x4F16 {
    const NAME: &'static str = "Mat3x4F16";

    /// Stores the rows of `m` with the translation relative to `origin`, each value clamped to ±[`F16_MAX`] and
    /// rounded to the nearest f16 (ties to even) in one batch conversion.
    #[inline]
    fn encode(m: &Affine3A, origin: Vec3A) -> Self {
        let c = &m.matrix3;
        let d = m.translation - origin;
        let rows = [
            Vec4::new(c.x_axis.x, c.y_axis.x, c.z_axis.x, d.x),
            Vec4::new(c.x_axis.y, c.y_axis.y, c.z_axis.y, d.y),
            Vec4::new(c.x_axis.z, c.y_axis.z, c.z_axis.z, d.z),
        ]
        .map(clamp);
        let mut v = [0.0f32; 12];
        for (r, row) in rows.iter().enumerate() {
            v[4 * r..4 * r + 4].copy_from_slice(&row.to_array());
        }
        let h = halves_from_f32(&v);
        Self {
            rows: [0, 1, 2].map(|r| [pack2x16(h[4 * r], h[4 * r + 1]), pack2x16(h[4 * r + 2], h[4 * r + 3])]),
        }
    }
}

/// Clamps every element to ±[`F16_MAX`].
#[inline(always)]
fn clamp(v: Vec4) -> Vec4 {
    v.clamp(Vec4::splat(-F16_MAX), Vec4::splat(F16_MAX))
}

impl Format for Mat3x4F16 {
    /// The rows with the translation made relative to `origin`, clamped as in `encode` and converted in one loop
    /// (the same bits as `encode`).
    #[inline(always)]
    fn encode_rows(tier: Tier, out: &mut [Self], origin: Vec3A, mut row: impl FnMut(usize) -> [Vec4; 3]) -> Vec4 {
        let shift = [0, 1, 2].map(|r| Vec4::new(0.0, 0.0, 0.0, origin[r]));
        let mut acc = Vec4::ZERO;
        encode_halves::<3>(tier, bytemuck::cast_slice_mut(out), |k| {
            let r = row(k);
            acc += poison(r[0]) + poison(r[1]) + poison(r[2]);
            [0, 1, 2].map(|i| clamp(r[i] - shift[i]))
        });
        acc
    }

    /// The instance transform itself.
    type Fold = Affine3A;

    #[inline(always)]
    fn folds(t: [&Affine3A; 4]) -> [Affine3A; 4] {
        t.map(|t| *t)
    }

    /// The SIMD tier's kernel when no value can leave the f16 range (`‖L_T‖∞ · max|S| ≤ 65000`, which also
    /// excludes non-finite transforms); otherwise the portable twin ([`RowFold::apply_relative`], the same bits),
    /// which clamps.
    #[inline(always)]
    fn encode_cached(tier: Tier, pose: CachedPose<'_>, t: Option<&Affine3A>, out: &mut [Self], stream: bool) -> Vec4 {
        let rows = &pose.rows[..out.len()];
        #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
        if let Tier::Avx2(token) = tier {
            let e = t.map(|t| linear_rows(&t.matrix3));
            if e.as_ref().map_or(1.0, norm_inf) * pose.max_abs <= FOLD_SAFE_MAX {
                crate::kernels::avx2::mat3x4(token, e.as_ref(), rows, out, stream);
                return Vec4::ZERO;
            }
        }
        let _ = stream;
        match t {
            None => Self::encode_rows(tier, out, Vec3A::ZERO, |k| rows[k]),
            Some(t) => {
                let fold = RowFold::new(t);
                Self::encode_rows(tier, out, Vec3A::ZERO, |k| fold.apply_relative(&rows[k]))
            }
        }
    }
}

impl F16Format for Mat3x4F16 {
    fn decode(&self, origin: Vec3A) -> Affine3A {
        let r = self.rows.map(|[a, b]| {
            let [x, y] = unpack2x16float(a);
            let [z, w] = unpack2x16float(b);
            [x, y, z, w]
        });
        Affine3A::from_cols(
            Vec3A::new(r[0][0], r[1][0], r[2][0]),
            Vec3A::new(r[0][1], r[1][1], r[2][1]),
            Vec3A::new(r[0][2], r[1][2], r[2][2]),
            Vec3A::new(r[0][3], r[1][3], r[2][3]) + origin,
        )
    }

    fn decode_rows(&self, origin: Vec3A) -> [Vec4; 3] {
        // fn mat3x4_f16_rows(e: Mat3x4F16, origin: vec3<f32>) -> array<vec4<f32>, 3>
        let e = self;
        // let r0 = vec4<f32>(unpack_halves(e.rows[0].x), unpack_halves(e.rows[0].y));
        let [a, b] = unpack_halves(e.rows[0][0]);
        let [c, d] = unpack_halves(e.rows[0][1]);
        let r0 = Vec4::new(a, b, c, d);
        // let r1 = vec4<f32>(unpack_halves(e.rows[1].x), unpack_halves(e.rows[1].y));
        let [a, b] = unpack_halves(e.rows[1][0]);
        let [c, d] = unpack_halves(e.rows[1][1]);
        let r1 = Vec4::new(a, b, c, d);
        // let r2 = vec4<f32>(unpack_halves(e.rows[2].x), unpack_halves(e.rows[2].y));
        let [a, b] = unpack_halves(e.rows[2][0]);
        let [c, d] = unpack_halves(e.rows[2][1]);
        let r2 = Vec4::new(a, b, c, d);
        // return array<vec4<f32>, 3>(r0 + vec4(0, 0, 0, origin.x), r1 + ..., r2 + ...);
        [
            r0 + Vec4::new(0.0, 0.0, 0.0, origin.x),
            r1 + Vec4::new(0.0, 0.0, 0.0, origin.y),
            r2 + Vec4::new(0.0, 0.0, 0.0, origin.z),
        ]
    }

    fn check(m: &Affine3A, origin: Vec3A, index: usize) -> Result<()> {
        check_finite(m, origin, index)?;
        for x in m.matrix3.to_cols_array() {
            check_range(Self::NAME, index, x)?;
        }
        for x in (m.translation - origin).to_array() {
            check_range(Self::NAME, index, x)?;
        }
        Ok(())
    }

    fn joint_error_bound(m: &Affine3A, origin: Vec3A) -> [[f32; 4]; 3] {
        let c = m.matrix3.to_cols_array_2d();
        let t = m.translation.to_array();
        let o = origin.to_array();
        std::array::from_fn(|i| {
            std::array::from_fn(|j| {
                if j == 3 {
                    up(translation_bound(f64::from(t[i]), f64::from(o[i])))
                } else {
                    let x = f64::from(c[j][i]);
                    if x.abs() > f64::from(F16_MAX) {
                        f32::INFINITY
                    } else {
                        up(U * x.abs() + A)
                    }
                }
            })
        })
    }

    fn vertex_error_bound(m: &Affine3A, origin: Vec3A, radius: f32) -> f32 {
        if m.matrix3.to_cols_array().iter().any(|x| x.abs() > F16_MAX) {
            return f32::INFINITY;
        }
        let r = f64::from(radius);
        let linear = U * frobenius(&m.matrix3) + 3.0 * A;
        up(r * linear + translation_vertex_bound(m, origin) + evaluation_bound(m, r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_rows_of_halves_low_first() {
        // 1.0 = 0x3c00, 2.0 = 0x4000, 3.0 = 0x4200, -0.5 = 0xb800 in f16.
        let m = Affine3A::from_translation(glam::Vec3::new(1.5, 2.0, 3.0));
        let e = Mat3x4F16::encode(&m, Vec3A::new(0.5, 0.0, 3.5));
        assert_eq!(
            e.rows,
            [
                [0x0000_3c00, 0x3c00_0000],
                [0x3c00_0000, 0x4000_0000],
                [0x0000_0000, 0xb800_3c00]
            ]
        );
        assert_eq!(e.decode(Vec3A::new(0.5, 0.0, 3.5)), m);
        assert_eq!(bytemuck::bytes_of(&e)[..4], [0x00, 0x3c, 0x00, 0x00]);
    }
}
