//! [`QtF16`]: rotation quaternion, translation and uniform scale in f16, 16 B per joint.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, DMat3, DQuat, Mat3A, Quat, Vec3A, Vec4};

use super::batch::encode_halves;
use super::{
    A, F16_MAX, F16Format, QT_F16_SCALE_TOLERANCE, U, check_finite, check_range, evaluation_bound, halves_from_f32,
    pack, translation_bound, translation_vertex_bound, unpack_halves, unpack2x16float, up,
};
use crate::flatten::poison;
use crate::{Error, PaletteFormat, Result};

/// A similarity transform (rotation, uniform scale, translation) as eight f16 values in four `u32`s, 16 B.
///
/// `rotation = [(qx, qy), (qz, qw)]` is a unit quaternion with `qw ≥ 0` (the encoder picks the hemisphere; a
/// `qw` of zero keeps the sign of the extraction), and `translation_scale = [(dx, dy), (dz, s)]` holds
/// `d = t − origin` and the signed uniform scale `s` (negative for a mirroring matrix, `s·R` with `R` a proper
/// rotation). Halves are packed low first, as WGSL's `unpack2x16float` reads them
/// (`struct QtF16 { rotation: vec2<u32>, translation_scale: vec2<u32> }` in `shaders/palette_f16.wgsl`, 16 B).
///
/// The decoder normalises the quaternion (`q · inverseSqrt(max(dot(q, q), 1e-30))`), so its f16 rounding only
/// turns the rotation, and an all-zero entry decodes to the zero matrix rather than NaN.
///
/// **Precondition:** the linear part of the matrix is a uniform scale times a rotation. `encode` replaces any other
/// matrix by its nearest such transform (`s` from the mean squared column length, signed by the determinant), and
/// the error bound grows by the residual `ρ`; check a skeleton once with [`crate::check_uniform_scale`] and fall
/// back to [`crate::Mat3x4F16`] when it fails, or check matrices with [`F16Format::check`].
/// Bounds (see the [module docs](crate::F16Format)): `‖ΔL‖₂ ≤ (3u + 2⁻¹⁶)·|s| + 2⁻²⁵ + ρ` with u = 2⁻¹¹.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
pub struct QtF16 {
    /// The quaternion `[(x, y), (z, w)]`.
    pub rotation: [u32; 2],
    /// The translation offset and the scale `[(dx, dy), (dz, s)]`.
    pub translation_scale: [u32; 2],
}

const _: () = assert!(size_of::<QtF16>() == 16);
const _: () = assert!(align_of::<QtF16>() == 4);

/// The encoder's f32 decomposition of a linear part: `(q, s)` with `q` a quaternion `(x, y, z, w)`, `w ≥ 0`,
/// and `s` the signed uniform scale, so that `L ≈ s·R(q)`.
///
/// `|s| = sqrt((|c₀|² + |c₁|² + |c₂|²) / 3)` over the columns, negative when `det L < 0`; the rotation is extracted
/// from `L / s` with Shepperd's method (the branch picks the largest of `4x², 4y², 4z², 4w²`, which is at least 1 for
/// any matrix whose columns have a mean squared length of 1, so there is no square root of a negative number and
/// `|q| ≥ 1/2`); `q` is unit up to f32 rounding for a rotation and is not renormalised, since the decoder
/// normalises. A zero matrix gives `s = 0` and a half-turn quaternion.
#[inline(always)]
fn decompose(l: &Mat3A) -> (Vec4, f32) {
    let (a, b, c) = (l.x_axis, l.y_axis, l.z_axis);
    let mean_sq = (a.length_squared() + b.length_squared() + c.length_squared()) * (1.0 / 3.0);
    let det = a.dot(b.cross(c));
    let s_abs = mean_sq.sqrt();
    let s = if det < 0.0 { -s_abs } else { s_abs };
    let inv = if s_abs > 0.0 { 1.0 / s } else { 0.0 };
    let (a, b, c) = (a * inv, b * inv, c * inv);
    // Shepperd's method as in DirectXMath's XMQuaternionRotationMatrix (columns a, b, c).
    let (m00, m01, m02) = (a.x, a.y, a.z);
    let (m10, m11, m12) = (b.x, b.y, b.z);
    let (m20, m21, m22) = (c.x, c.y, c.z);
    let q = if m22 <= 0.0 {
        let dif10 = m11 - m00;
        let omm22 = 1.0 - m22;
        if dif10 <= 0.0 {
            let f = omm22 - dif10;
            let k = 0.5 / f.sqrt();
            Vec4::new(f * k, (m01 + m10) * k, (m02 + m20) * k, (m12 - m21) * k)
        } else {
            let f = omm22 + dif10;
            let k = 0.5 / f.sqrt();
            Vec4::new((m01 + m10) * k, f * k, (m12 + m21) * k, (m20 - m02) * k)
        }
    } else {
        let sum10 = m11 + m00;
        let opm22 = 1.0 + m22;
        if sum10 <= 0.0 {
            let f = opm22 - sum10;
            let k = 0.5 / f.sqrt();
            Vec4::new((m02 + m20) * k, (m12 + m21) * k, f * k, (m01 - m10) * k)
        } else {
            let f = opm22 + sum10;
            let k = 0.5 / f.sqrt();
            Vec4::new((m12 - m21) * k, (m20 - m02) * k, (m01 - m10) * k, f * k)
        }
    };
    // No normalisation: for a rotation the result is unit up to f32 rounding, its largest component is
    // `sqrt(f) / 2 ≥ 1/2` in any case, and the decoder normalises (the bound needs only `|q| ≥ 1/2`).
    let q = if q.w < 0.0 { -q } else { q };
    (q, s)
}

impl QtF16 {
    /// The relative deviation of `m`'s linear part from a uniform scale times a rotation: `ρ / |s|`, with
    /// `ρ = ‖L − s·R(q)‖_F` computed in f64 from the encoder's own f32 decomposition `(q, s)`. Zero for the
    /// zero matrix.
    pub fn scale_deviation(m: &Affine3A) -> f32 {
        let (rho, s) = residual(&m.matrix3);
        if s == 0.0 {
            0.0
        } else {
            (rho / f64::from(s.abs())) as f32
        }
    }

    /// [`F16Format::check`] with a caller-chosen tolerance for [`QtF16::scale_deviation`].
    ///
    /// # Errors
    ///
    /// As [`F16Format::check`], with [`Error::NonUniformScale`] when the deviation exceeds `tolerance`
    /// (`joint` is `index`).
    pub fn check_with_tolerance(m: &Affine3A, origin: Vec3A, index: usize, tolerance: f32) -> Result<()> {
        check_finite(m, origin, index)?;
        for x in (m.translation - origin).to_array() {
            check_range(Self::NAME, index, x)?;
        }
        let (_, s) = decompose(&m.matrix3);
        check_range(Self::NAME, index, s)?;
        let deviation = Self::scale_deviation(m);
        if deviation <= tolerance {
            Ok(())
        } else {
            Err(Error::NonUniformScale {
                what: "palette entry",
                index,
                joint: index,
                deviation_ppm: ppm(deviation),
                tolerance_ppm: ppm(tolerance),
            })
        }
    }
}

/// A deviation in parts per million, saturating; NaN reads as `u32::MAX`.
pub(super) fn ppm(x: f32) -> u32 {
    if x.is_nan() {
        u32::MAX
    } else {
        (f64::from(x) * 1e6).ceil() as u32
    }
}

/// `(ρ, s)`: the residual `‖L − s·R(q)‖_F` in f64 of the encoder's decomposition, and its scale `s`.
fn residual(l: &Mat3A) -> (f64, f32) {
    let (q, s) = decompose(l);
    let q = DQuat::from_xyzw(f64::from(q.x), f64::from(q.y), f64::from(q.z), f64::from(q.w));
    let q = q / q.length();
    let r = DMat3::from_quat(q) * f64::from(s);
    let l = l.to_cols_array();
    let r = r.to_cols_array();
    let rho = (0..9).map(|k| (f64::from(l[k]) - r[k]).powi(2)).sum::<f64>().sqrt();
    (rho, s)
}

impl PaletteFormat for QtF16 {
    const NAME: &'static str = "QtF16";

    /// Decomposes `m` into a unit quaternion with `w ≥ 0` and a signed uniform scale (see the type's
    /// precondition), stores the translation relative to `origin`, clamps the offset and the scale to
    /// ±[`F16_MAX`], and rounds the eight values to f16 in one batch conversion.
    #[inline]
    fn encode(m: &Affine3A, origin: Vec3A) -> Self {
        let (q, s) = decompose(&m.matrix3);
        let d = (m.translation - origin)
            .extend(s)
            .clamp(Vec4::splat(-F16_MAX), Vec4::splat(F16_MAX));
        let mut v = [0.0f32; 8];
        v[0..4].copy_from_slice(&q.to_array());
        v[4..8].copy_from_slice(&d.to_array());
        let h = halves_from_f32(&v);
        Self {
            rotation: [pack(h[0], h[1]), pack(h[2], h[3])],
            translation_scale: [pack(h[4], h[5]), pack(h[6], h[7])],
        }
    }

    const RELATIVE: bool = true;

    /// Decomposes every matrix as `encode` does and converts the values in one F16C loop (the same bits as
    /// `encode`).
    #[inline]
    fn encode_each(out: &mut [Self], origin: Vec3A, _stream: bool, mut row: impl FnMut(usize) -> [Vec4; 3]) -> Vec4 {
        let lo = Vec4::splat(-F16_MAX);
        let hi = Vec4::splat(F16_MAX);
        let mut acc = Vec4::ZERO;
        let words: &mut [[u32; 2]] = bytemuck::cast_slice_mut(out);
        encode_halves::<2>(words, |k| {
            let r = row(k);
            acc += poison(r[0]) + poison(r[1]) + poison(r[2]);
            let l =
                Mat3A::from_cols(r[0].truncate().into(), r[1].truncate().into(), r[2].truncate().into()).transpose();
            let (q, s) = decompose(&l);
            let t = Vec3A::new(r[0].w, r[1].w, r[2].w);
            [q, (t - origin).extend(s).max(lo).min(hi)]
        });
        acc
    }
}

impl F16Format for QtF16 {
    fn decode(&self, origin: Vec3A) -> Affine3A {
        let [x, y] = unpack2x16float(self.rotation[0]);
        let [z, w] = unpack2x16float(self.rotation[1]);
        let [dx, dy] = unpack2x16float(self.translation_scale[0]);
        let [dz, s] = unpack2x16float(self.translation_scale[1]);
        let q = Vec4::new(x, y, z, w);
        let q = q * (1.0 / q.length_squared().max(1e-30).sqrt());
        let rotation = Mat3A::from_quat(Quat::from_vec4(q));
        Affine3A {
            matrix3: rotation * s,
            translation: Vec3A::new(dx, dy, dz) + origin,
        }
    }

    fn decode_rows(&self, origin: Vec3A) -> [Vec4; 3] {
        // fn qt_f16_rows(e: QtF16, origin: vec3<f32>) -> array<vec4<f32>, 3>
        let e = self;
        // let q0 = vec4<f32>(unpack_halves(e.rotation.x), unpack_halves(e.rotation.y));
        let [a, b] = unpack_halves(e.rotation[0]);
        let [c, d] = unpack_halves(e.rotation[1]);
        let q0 = Vec4::new(a, b, c, d);
        // let ts = vec4<f32>(unpack_halves(e.translation_scale.x), unpack_halves(e.translation_scale.y));
        let [a, b] = unpack_halves(e.translation_scale[0]);
        let [c, d] = unpack_halves(e.translation_scale[1]);
        let ts = Vec4::new(a, b, c, d);
        // let q = q0 * inverseSqrt(max(dot(q0, q0), 1e-30));
        let q = q0 * (1.0 / q0.dot(q0).max(1e-30).sqrt());
        // let q2 = q + q;
        let q2 = q + q;
        // let xx = q.x * q2.x; let yy = q.y * q2.y; let zz = q.z * q2.z;
        let (xx, yy, zz) = (q.x * q2.x, q.y * q2.y, q.z * q2.z);
        // let xy = q.x * q2.y; let xz = q.x * q2.z; let yz = q.y * q2.z;
        let (xy, xz, yz) = (q.x * q2.y, q.x * q2.z, q.y * q2.z);
        // let wx = q.w * q2.x; let wy = q.w * q2.y; let wz = q.w * q2.z;
        let (wx, wy, wz) = (q.w * q2.x, q.w * q2.y, q.w * q2.z);
        // let s = ts.w;
        let s = ts.w;
        // let t = ts.xyz + origin;
        let t = Vec3A::new(ts.x, ts.y, ts.z) + origin;
        // return array<vec4<f32>, 3>(
        //     vec4<f32>(s * (1.0 - (yy + zz)), s * (xy - wz), s * (xz + wy), t.x),
        //     vec4<f32>(s * (xy + wz), s * (1.0 - (xx + zz)), s * (yz - wx), t.y),
        //     vec4<f32>(s * (xz - wy), s * (yz + wx), s * (1.0 - (xx + yy)), t.z));
        [
            Vec4::new(s * (1.0 - (yy + zz)), s * (xy - wz), s * (xz + wy), t.x),
            Vec4::new(s * (xy + wz), s * (1.0 - (xx + zz)), s * (yz - wx), t.y),
            Vec4::new(s * (xz - wy), s * (yz + wx), s * (1.0 - (xx + yy)), t.z),
        ]
    }

    fn check(m: &Affine3A, origin: Vec3A, index: usize) -> Result<()> {
        Self::check_with_tolerance(m, origin, index, QT_F16_SCALE_TOLERANCE)
    }

    fn joint_error_bound(m: &Affine3A, origin: Vec3A) -> [[f32; 4]; 3] {
        let linear = up(linear_bound(&m.matrix3));
        let t = m.translation.to_array();
        let o = origin.to_array();
        std::array::from_fn(|i| {
            let tb = up(translation_bound(f64::from(t[i]), f64::from(o[i])));
            [linear, linear, linear, tb]
        })
    }

    fn vertex_error_bound(m: &Affine3A, origin: Vec3A, radius: f32) -> f32 {
        let r = f64::from(radius);
        up(r * linear_bound(&m.matrix3) + translation_vertex_bound(m, origin) + evaluation_bound(m, r))
    }
}

/// `(3u + 2⁻¹⁶)·|s| + 2⁻²⁵ + ρ`, the operator-norm bound of the linear part; infinite when `|s| > F16_MAX`.
fn linear_bound(l: &Mat3A) -> f64 {
    let (rho, s) = residual(l);
    let s = f64::from(s.abs());
    if s > f64::from(F16_MAX) || rho.is_nan() {
        return f64::INFINITY;
    }
    (3.0 * U + 1.0 / 65536.0) * s + A + rho
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_quaternion_then_translation_and_scale() {
        // A quarter turn about z scaled by 2: q = (0, 0, √½, √½); √½ = 0x39a8, 2.0 = 0x4000, 1.0 = 0x3c00 in f16.
        let m = Affine3A::from_scale_rotation_translation(
            glam::Vec3::splat(2.0),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            glam::Vec3::new(1.0, 2.0, 0.0),
        );
        let e = QtF16::encode(&m, Vec3A::ZERO);
        assert_eq!(e.rotation, [0x0000_0000, 0x39a8_39a8]);
        assert_eq!(e.translation_scale, [0x4000_3c00, 0x4000_0000]);
        let d = e.decode(Vec3A::ZERO);
        assert!(d.abs_diff_eq(m, 2e-3), "{d:?}");
    }

    #[test]
    fn hemisphere_and_mirror() {
        // Near a half turn about -x, Shepperd's x branch returns x > 0 and so w < 0; the encoder flips to w ≥ 0.
        let r = Quat::from_rotation_x(-3.0);
        let (q, s) = decompose(&Mat3A::from_quat(r));
        assert!(q.w >= 0.0 && (s - 1.0).abs() < 1e-6, "{q} {s}");
        assert!(Quat::from_vec4(q).abs_diff_eq(r, 1e-6), "{q} is {r}");
        // A mirror: s < 0 and a proper rotation.
        let (q, s) = decompose(&(Mat3A::from_quat(Quat::from_rotation_x(-2.5)) * -3.0));
        assert!(q.w >= 0.0 && (s + 3.0).abs() < 1e-5, "{q} {s}");
        let (q, s) = decompose(&Mat3A::ZERO);
        assert!(q.is_finite() && s == 0.0);
        assert_eq!(
            QtF16::zeroed().decode(Vec3A::ZERO),
            Affine3A::from_mat3(glam::Mat3::ZERO)
        );
    }
}
