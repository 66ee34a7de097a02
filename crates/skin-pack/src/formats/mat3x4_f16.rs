//! [`Mat3x4F16`]: the 3×4 skinning matrix in f16, 24 B per joint.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Vec3A, Vec4};

use super::batch::encode_halves;
use super::{
    A, F16_MAX, F16Format, U, check_finite, check_range, evaluation_bound, frobenius, halves_from_f32, pack,
    translation_bound, translation_vertex_bound, unpack_halves, unpack2x16float, up,
};
use crate::flatten::{CachedPose, poison};
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

/// Joints per group of [`Mat3x4F16`]'s per-pose cache data (see [`mat3x4_cached_floats`]).
pub(crate) const MAT_GROUP: usize = 4;

/// Floats per group of [`MAT_GROUP`] joints in [`Mat3x4F16`]'s per-pose cache data: for each row `c` of the
/// skinning matrix, that row of the group's four joints side by side (16 floats, one 64-byte line).
pub(crate) const MAT_GROUP_FLOATS: usize = 3 * 4 * MAT_GROUP;

/// The floats of [`Mat3x4F16`]'s per-pose cache data for a skin of `skin_joints` joints: the skinning rows again,
/// regrouped by row for every four joints (the last group padded with zeros), so that the AVX-512 kernel loads row
/// `c` of four joints with one 512-bit load.
pub(crate) fn mat3x4_cached_floats(skin_joints: usize) -> usize {
    skin_joints.div_ceil(MAT_GROUP) * MAT_GROUP_FLOATS
}

impl PaletteFormat for Mat3x4F16 {
    const NAME: &'static str = "Mat3x4F16";

    /// Regroups the pose's skinning rows by row for every four joints (`mat3x4_cached_floats`): group `g`'s
    /// line `c` is row `c` of joints `4g..4g + 4`, for the AVX-512 kernel, which then folds four joints' row `r`
    /// in one register with no lane unused.
    fn prepare_cached(rows: &[[Vec4; 3]], aux: &mut [f32]) {
        let aux = &mut aux[..mat3x4_cached_floats(rows.len())];
        for (group, out) in rows.chunks(MAT_GROUP).zip(aux.chunks_exact_mut(MAT_GROUP_FLOATS)) {
            out.fill(0.0);
            for (c, line) in out.chunks_exact_mut(4 * MAT_GROUP).enumerate() {
                for (joint, at) in group.iter().zip(line.chunks_exact_mut(4)) {
                    at.copy_from_slice(&joint[c].to_array());
                }
            }
        }
    }

    /// Stores the rows of `m` with the translation relative to `origin`, each value clamped to ±[`F16_MAX`] and
    /// rounded to the nearest f16 (ties to even) in one batch conversion.
    #[inline]
    fn encode(m: &Affine3A, origin: Vec3A) -> Self {
        let c = &m.matrix3;
        let d = m.translation - origin;
        let lo = Vec4::splat(-F16_MAX);
        let hi = Vec4::splat(F16_MAX);
        let r0 = Vec4::new(c.x_axis.x, c.y_axis.x, c.z_axis.x, d.x).max(lo).min(hi);
        let r1 = Vec4::new(c.x_axis.y, c.y_axis.y, c.z_axis.y, d.y).max(lo).min(hi);
        let r2 = Vec4::new(c.x_axis.z, c.y_axis.z, c.z_axis.z, d.z).max(lo).min(hi);
        let mut v = [0.0f32; 12];
        v[0..4].copy_from_slice(&r0.to_array());
        v[4..8].copy_from_slice(&r1.to_array());
        v[8..12].copy_from_slice(&r2.to_array());
        let h = halves_from_f32(&v);
        Self {
            rows: [
                [pack(h[0], h[1]), pack(h[2], h[3])],
                [pack(h[4], h[5]), pack(h[6], h[7])],
                [pack(h[8], h[9]), pack(h[10], h[11])],
            ],
        }
    }

    const RELATIVE: bool = true;

    /// The rows of every matrix, translation made relative to `origin` and clamped as in `encode`, converted in
    /// one F16C loop (the same bits as `encode`).
    #[inline]
    fn encode_each(out: &mut [Self], origin: Vec3A, _stream: bool, mut row: impl FnMut(usize) -> [Vec4; 3]) -> Vec4 {
        let lo = Vec4::splat(-F16_MAX);
        let hi = Vec4::splat(F16_MAX);
        let shift = [0, 1, 2].map(|r| Vec4::new(0.0, 0.0, 0.0, origin[r]));
        let mut acc = Vec4::ZERO;
        let words: &mut [[u32; 2]] = bytemuck::cast_slice_mut(out);
        encode_halves::<3>(words, |k| {
            let r = row(k);
            acc += poison(r[0]) + poison(r[1]) + poison(r[2]);
            [0, 1, 2].map(|i| (r[i] - shift[i]).max(lo).min(hi))
        });
        acc
    }

    /// The SIMD kernels of `formats/fold_simd.rs` (AVX-512F, or AVX, F16C and FMA) when the CPU has them and no
    /// value can leave the f16 range (`‖L_T‖∞ · max|S| ≤ 65000`, which also excludes non-finite transforms): the
    /// portable path's fused products in its order, so the same bits, without its per-value clamp and poison.
    /// Otherwise the portable path.
    fn encode_cached(pose: CachedPose<'_>, t: Option<&Affine3A>, out: &mut [Self], stream: bool) -> Vec4 {
        #[cfg(target_arch = "x86_64")]
        if super::fold_simd::available() {
            let n = out.len();
            let transforms = t.map(std::slice::from_ref).unwrap_or(&[]);
            return super::fold_simd::mat3x4_run(out, n, &[0], &|_| pose, transforms, stream);
        }
        encode_cached_portable(pose, t, out, stream)
    }

    /// As [`Mat3x4F16::encode_cached`] palette by palette, but in one call of the AVX kernel for the whole run, so
    /// that each palette's range check and setup are a few inlined instructions rather than two calls.
    fn encode_cached_run<'a>(
        out: &mut [Self],
        skin_joints: usize,
        order: &[u16],
        pose: &impl crate::flatten::PoseSource<'a>,
        transforms: &[Affine3A],
        stream: bool,
    ) -> Vec4 {
        #[cfg(target_arch = "x86_64")]
        if super::fold_simd::available() {
            return super::fold_simd::mat3x4_run(out, skin_joints, order, pose, transforms, stream);
        }
        // Without the kernel, `encode_cached` is the portable path.
        crate::flatten::encode_each_palette::<Self>(out, skin_joints, order, pose, transforms, stream)
    }
}

/// The portable path of [`Mat3x4F16::encode_cached`]: clamps, and returns the poison sum.
#[inline]
pub(crate) fn encode_cached_portable(
    pose: CachedPose<'_>,
    t: Option<&Affine3A>,
    out: &mut [Mat3x4F16],
    stream: bool,
) -> Vec4 {
    match t {
        None => crate::flatten::copy_rows(pose.rows, out, stream),
        Some(t) => crate::flatten::fold_rows(t, pose.rows, out, stream),
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
