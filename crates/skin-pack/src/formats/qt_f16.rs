//! [`QtF16`]: rotation quaternion, translation and uniform scale in f16, 16 B per joint.

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, DMat3, DQuat, Mat3A, Quat, Vec3A, Vec4};

#[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
use super::row_fold::FOLD_SAFE_MAX;
use super::row_fold::{linear_rows, norm_inf};
use super::sealed::Format;
use super::{
    A, F16_MAX, F16Format, QT_F16_SCALE_TOLERANCE, U, check_finite, check_range, encode_halves, evaluation_bound,
    translation_bound, translation_vertex_bound, up,
};
use crate::flatten::{CachedPose, poison};
use crate::kernels::Tier;
use crate::quant::{halves_from_f32, pack2x16, unpack_halves, unpack2x16float};
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
///
/// This is [`decompose_lanes`] on `f32`; the cache uses it on four lanes (`Vec4`), with the same bits (the same
/// IEEE operations in the same order, lane by lane).
#[inline(always)]
fn decompose(l: &Mat3A) -> (Vec4, f32) {
    let cols = [l.x_axis, l.y_axis, l.z_axis].map(|c| [c.x, c.y, c.z]);
    let (q, s) = decompose_lanes(&cols);
    (Vec4::from_array(q), s)
}

/// A number or a vector of lanes that [`decompose_lanes`] computes with: lane-wise IEEE arithmetic and selects.
pub(super) trait Lane:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// The lane mask of a comparison.
    type Mask: Copy;
    fn splat(x: f32) -> Self;
    fn sqrt(self) -> Self;
    fn lt(self, x: f32) -> Self::Mask;
    fn gt(self, x: f32) -> Self::Mask;
    fn le(self, x: f32) -> Self::Mask;
    /// `a` where `mask` is set, `b` elsewhere.
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self;
}

impl Lane for f32 {
    type Mask = bool;
    #[inline(always)]
    fn splat(x: f32) -> Self {
        x
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn lt(self, x: f32) -> bool {
        self < x
    }
    #[inline(always)]
    fn gt(self, x: f32) -> bool {
        self > x
    }
    #[inline(always)]
    fn le(self, x: f32) -> bool {
        self <= x
    }
    #[inline(always)]
    fn select(mask: bool, a: Self, b: Self) -> Self {
        if mask { a } else { b }
    }
}

impl Lane for Vec4 {
    type Mask = glam::BVec4A;
    #[inline(always)]
    fn splat(x: f32) -> Self {
        Vec4::splat(x)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        Vec4::sqrt(self)
    }
    #[inline(always)]
    fn lt(self, x: f32) -> Self::Mask {
        self.cmplt(Vec4::splat(x))
    }
    #[inline(always)]
    fn gt(self, x: f32) -> Self::Mask {
        self.cmpgt(Vec4::splat(x))
    }
    #[inline(always)]
    fn le(self, x: f32) -> Self::Mask {
        self.cmple(Vec4::splat(x))
    }
    #[inline(always)]
    fn select(mask: Self::Mask, a: Self, b: Self) -> Self {
        Vec4::select(mask, a, b)
    }
}

/// [`decompose`] lane by lane: `cols[c][r]` holds element (row r, column c). Returns `([qx, qy, qz, qw], s)`.
#[inline(always)]
pub(super) fn decompose_lanes<L: Lane>(cols: &[[L; 3]; 3]) -> ([L; 4], L) {
    let [a, b, c] = cols;
    let len2 = |v: &[L; 3]| (v[0] * v[0] + v[1] * v[1]) + v[2] * v[2];
    let mean_sq = (len2(a) + len2(b) + len2(c)) * L::splat(1.0 / 3.0);
    let cross = [
        b[1] * c[2] - b[2] * c[1],
        b[2] * c[0] - b[0] * c[2],
        b[0] * c[1] - b[1] * c[0],
    ];
    let det = (a[0] * cross[0] + a[1] * cross[1]) + a[2] * cross[2];
    let s_abs = mean_sq.sqrt();
    let s = L::select(det.lt(0.0), -s_abs, s_abs);
    let inv = L::select(s_abs.gt(0.0), L::splat(1.0) / s, L::splat(0.0));
    // Shepperd's method as in DirectXMath's XMQuaternionRotationMatrix (columns a, b, c), with the four branches
    // evaluated side by side and chosen by selects: the choice depends on the rotation, which varies from joint to
    // joint, so branches would mispredict about half the time (and lanes may take different ones).
    let (m00, m01, m02) = (a[0] * inv, a[1] * inv, a[2] * inv);
    let (m10, m11, m12) = (b[0] * inv, b[1] * inv, b[2] * inv);
    let (m20, m21, m22) = (c[0] * inv, c[1] * inv, c[2] * inv);
    let (dif10, sum10) = (m11 - m00, m11 + m00);
    let (omm22, opm22) = (L::splat(1.0) - m22, L::splat(1.0) + m22);
    let (p01, p02, p12) = (m01 + m10, m02 + m20, m12 + m21);
    let (d12, d20, d01) = (m12 - m21, m20 - m02, m01 - m10);
    let (fx, fy, fz, fw) = (omm22 - dif10, omm22 + dif10, opm22 - sum10, opm22 + sum10);
    let (low, x, z) = (m22.le(0.0), dif10.le(0.0), sum10.le(0.0));
    // Branch x: (f, p01, p02, d12); y: (p01, f, p12, d20); z: (p02, p12, f, d01); w: (d12, d20, d01, f).
    let pick = |bx: L, by: L, bz: L, bw: L| L::select(low, L::select(x, bx, by), L::select(z, bz, bw));
    let f = pick(fx, fy, fz, fw);
    let k = L::splat(0.5) / f.sqrt();
    let q = [
        pick(fx, p01, p02, d12) * k,
        pick(p01, fy, p12, d20) * k,
        pick(p02, p12, fz, d01) * k,
        pick(d12, d20, d01, fw) * k,
    ];
    // No normalisation: for a rotation the result is unit up to f32 rounding, its largest component is
    // `sqrt(f) / 2 ≥ 1/2` in any case, and the decoder normalises (the bound needs only `|q| ≥ 1/2`).
    let flip = q[3].lt(0.0);
    let sel = |c: L| L::select(flip, -c, c);
    ([sel(q[0]), sel(q[1]), sel(q[2]), sel(q[3])], s)
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

/// Joints per structure-of-arrays block of the [`QtF16`] flatten cache.
pub(crate) const QT_BLOCK: usize = 16;

/// Floats per block: sixteen lanes each of `qx, qy, qz, qw, tx, ty, tz, s`, component after component; within a
/// component the block's even joints come first, then its odd joints (see [`qt_lane`]), so that the kernel's
/// transpose leaves joints `2j` and `2j + 1` side by side in one 256-bit register.
pub(crate) const QT_BLOCK_FLOATS: usize = 8 * QT_BLOCK;

/// The lane of joint `k` within its block's components: even joints in lanes 0..8, odd ones in 8..16.
#[inline(always)]
pub(crate) fn qt_lane(k: usize) -> usize {
    (k % 2) * (QT_BLOCK / 2) + (k % QT_BLOCK) / 2
}

/// Floats before the blocks in a pose's cached data: `[max |tᵢ|, max |s|]`, padded to a 64-byte line so that
/// every block component (16 floats) of the line-aligned cache is one line.
pub(crate) const QT_HEADER: usize = 16;

/// An instance transform `T`, decomposed once per palette to fold it into cached [`QtF16`] joints:
/// `q = q_T ⊗ q_S`, `d = L_T · t_S` (relative to `T`'s translation) and `s = s_T · s_S`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QtFold {
    /// `q_T = (x, y, z, w)`.
    pub(crate) q: [f32; 4],
    /// `L_T` by rows.
    pub(crate) l: [[f32; 3]; 3],
    /// `s_T`.
    pub(crate) s: f32,
    /// `max_r Σ_c |L_T[r][c]|` (NaN when `L_T` has a NaN): a translation grows by at most this factor.
    pub(crate) norm: f32,
}

impl QtFold {
    /// The identity fold (fills the kernel's unused argument).
    #[cfg_attr(
        not(all(target_arch = "x86_64", not(feature = "portable"))),
        allow(dead_code, reason = "only the SIMD kernel reads it")
    )]
    pub(crate) const IDENTITY: Self = Self {
        q: [0.0, 0.0, 0.0, 1.0],
        l: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        s: 1.0,
        norm: 1.0,
    };

    /// Decomposes four transforms' linear parts as the encoder does (`L_T ≈ s_T·R(q_T)`), in the four lanes of one
    /// [`decompose_lanes`] on `Vec4` (the same bits as one at a time).
    #[inline]
    pub(crate) fn new4(t: [&Affine3A; 4]) -> [Self; 4] {
        // Column c of the four transforms, transposed: lane i of `cols[c][r]` is transform i's element (r, c).
        let col = |c: usize| {
            let v = |i: usize| t[i].matrix3.col(c).extend(0.0);
            let m = glam::Mat4::from_cols(v(0), v(1), v(2), v(3)).transpose();
            [m.x_axis, m.y_axis, m.z_axis]
        };
        let (q, s) = decompose_lanes(&[col(0), col(1), col(2)]);
        std::array::from_fn(|i| Self::from_parts([q[0][i], q[1][i], q[2][i], q[3][i]], s[i], &t[i].matrix3))
    }

    /// The fold of the decomposition `(q_T, s_T)` of `l`.
    #[inline(always)]
    fn from_parts(q: [f32; 4], s: f32, l: &Mat3A) -> Self {
        let l = linear_rows(l);
        Self {
            q,
            l,
            s,
            norm: norm_inf(&l),
        }
    }

    /// The rows of the left-multiplication matrix of `q_T`: row `i` gives component `i` of `q_T ⊗ q` from
    /// `(qx, qy, qz, qw)` (the Hamilton product by components of `q`).
    #[inline(always)]
    pub(crate) fn q_rows(&self) -> [[f32; 4]; 4] {
        let [x, y, z, w] = self.q;
        [[w, -z, y, x], [z, w, -x, y], [-y, x, w, z], [-x, -y, -z, w]]
    }

    /// The portable twin of the SIMD kernel for one joint `(q, t, s)`: the same products and fused multiply-adds
    /// in the same order, innermost first, so the same bits (`f32::mul_add` rounds once, as `vfmadd` does).
    /// Returns `[q, (d, s)]` before the f16 clamp.
    #[inline(always)]
    pub(crate) fn apply(&self, q: [f32; 4], t: [f32; 3], s: f32) -> [Vec4; 2] {
        let m = self.q_rows();
        let quat = |r: &[f32; 4]| r[3].mul_add(q[3], r[2].mul_add(q[2], r[1].mul_add(q[1], r[0] * q[0])));
        let rot = |r: &[f32; 3]| r[2].mul_add(t[2], r[1].mul_add(t[1], r[0] * t[0]));
        let v = Vec4::new(quat(&m[0]), quat(&m[1]), quat(&m[2]), quat(&m[3]));
        // The hemisphere with w ≥ 0, by the sign bit as the kernel does (so −0 flips too).
        let v = if v.w.is_sign_negative() { -v } else { v };
        [
            v,
            Vec4::new(rot(&self.l[0]), rot(&self.l[1]), rot(&self.l[2]), self.s * s),
        ]
    }
}

/// Reads joint `k`'s cached `(q, t, s)` from the blocks.
#[inline(always)]
fn cached_joint(blocks: &[f32], k: usize) -> ([f32; 4], [f32; 3], f32) {
    let b = &blocks[k / QT_BLOCK * QT_BLOCK_FLOATS..][..QT_BLOCK_FLOATS];
    let at = |c: usize| b[c * QT_BLOCK + qt_lane(k)];
    ([at(0), at(1), at(2), at(3)], [at(4), at(5), at(6)], at(7))
}

/// The portable twin of the SIMD kernel for a palette of cached joints, folded by `fold` when given, and its slow
/// path for out-of-range values: it clamps the offset and scale to the f16 range, and returns the poison sum.
#[inline(always)]
pub(crate) fn encode_cached_portable(tier: Tier, fold: Option<&QtFold>, blocks: &[f32], out: &mut [QtF16]) -> Vec4 {
    let (lo, hi) = (Vec4::splat(-F16_MAX), Vec4::splat(F16_MAX));
    let mut acc = Vec4::ZERO;
    encode_halves::<2>(tier, bytemuck::cast_slice_mut(out), |k| {
        let (q, t, s) = cached_joint(blocks, k);
        let [q, d] = match fold {
            Some(f) => f.apply(q, t, s),
            None => [Vec4::from_array(q), Vec4::new(t[0], t[1], t[2], s)],
        };
        acc += poison(q) + poison(d);
        [q, d.max(lo).min(hi)]
    });
    acc
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
            rotation: [pack2x16(h[0], h[1]), pack2x16(h[2], h[3])],
            translation_scale: [pack2x16(h[4], h[5]), pack2x16(h[6], h[7])],
        }
    }
}

impl Format for QtF16 {
    /// A header and one block per 16 joints, the last one padded.
    fn cached_floats(skin_joints: usize) -> usize {
        QT_HEADER + skin_joints.div_ceil(QT_BLOCK) * QT_BLOCK_FLOATS
    }

    /// Decomposes every joint once per pose (as `encode` does) into the blocks, four joints per `Vec4`
    /// decomposition (the same bits as one at a time), after a header with the largest translation component and
    /// scale.
    fn prepare(rows: &[[Vec4; 3]], cached: &mut [f32]) {
        let (header, blocks) = cached[..Self::cached_floats(rows.len())].split_at_mut(QT_HEADER);
        blocks.fill(0.0);
        let (mut max_t, mut max_s) = (Vec4::ZERO, Vec4::ZERO);
        // Four joints per decomposition: `first`, `first + 2`, `first + 4`, `first + 6` (`first % 16` is 0, 1, 8
        // or 9), which sit in four adjacent lanes of one half of a block. Past the skin, zero matrices (finite)
        // whose decompositions are cleared below.
        for first in (0..rows.len()).filter(|k| k % 8 < 2) {
            // Row r of the four joints, transposed: lane i of column c is joint i's (r, c); column 3 is the
            // translation.
            let row = |r: usize| {
                let at = |i: usize| rows.get(first + 2 * i).map_or(Vec4::ZERO, |m| m[r]);
                glam::Mat4::from_cols(at(0), at(1), at(2), at(3)).transpose()
            };
            let (r0, r1, r2) = (row(0), row(1), row(2));
            let cols = [
                [r0.x_axis, r1.x_axis, r2.x_axis],
                [r0.y_axis, r1.y_axis, r2.y_axis],
                [r0.z_axis, r1.z_axis, r2.z_axis],
            ];
            let t = [r0.w_axis, r1.w_axis, r2.w_axis];
            let (q, s) = decompose_lanes(&cols);
            max_t = max_t.max(t[0].abs()).max(t[1].abs()).max(t[2].abs());
            max_s = max_s.max(s.abs());
            let b = &mut blocks[first / QT_BLOCK * QT_BLOCK_FLOATS..][..QT_BLOCK_FLOATS];
            for (c, v) in [q[0], q[1], q[2], q[3], t[0], t[1], t[2], s].into_iter().enumerate() {
                v.write_to_slice(&mut b[c * QT_BLOCK + qt_lane(first)..][..4]);
            }
        }
        for k in rows.len()..rows.len().next_multiple_of(QT_BLOCK) {
            for c in 0..8 {
                blocks[k / QT_BLOCK * QT_BLOCK_FLOATS + c * QT_BLOCK + qt_lane(k)] = 0.0;
            }
        }
        header.fill(0.0);
        header[0] = max_t.max_element();
        header[1] = max_s.max_element();
    }

    /// Decomposes every matrix as `encode` does and converts the values in one loop (the same bits as `encode`).
    #[inline(always)]
    fn encode_rows(tier: Tier, out: &mut [Self], origin: Vec3A, mut row: impl FnMut(usize) -> [Vec4; 3]) -> Vec4 {
        let (lo, hi) = (Vec4::splat(-F16_MAX), Vec4::splat(F16_MAX));
        let mut acc = Vec4::ZERO;
        encode_halves::<2>(tier, bytemuck::cast_slice_mut(out), |k| {
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

    type Fold = QtFold;

    /// [`QtFold::new4`].
    #[inline(always)]
    fn folds(t: [&Affine3A; 4]) -> [QtFold; 4] {
        QtFold::new4(t)
    }

    /// Composes the instance transform with the pose's cached decomposition instead of decomposing every product:
    /// `q = q_T ⊗ q_S` (hemisphere `w ≥ 0`), `d = L_T · t_S`, `s = s_T · s_S`. For similarity transforms (this
    /// format's precondition, for instance transforms too) that is the decomposition of `T × S` up to a few f32
    /// roundings (`< 2⁻²⁰` in the quaternion), far inside the `2⁻¹⁶·|s|` the bound reserves for f32 arithmetic;
    /// `prop_flatten` checks the decoded entries against the exact product with the format's bound. Without `t`,
    /// the entries are the cached decomposition as it is: the same bits as `encode`.
    ///
    /// The SIMD tier's kernel when every value is in the f16 range, the portable twin (the same bits, and it
    /// clamps and checks) otherwise.
    #[inline(always)]
    fn encode_cached(tier: Tier, pose: CachedPose<'_>, fold: Option<&QtFold>, out: &mut [Self], stream: bool) -> Vec4 {
        let (header, blocks) = pose.aux.split_at(QT_HEADER);
        #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
        if let Tier::Avx2(token) = tier {
            let (grow, scale) = fold.map_or((1.0, 1.0), |f| (f.norm, f.s.abs()));
            // False for NaN: a non-finite transform takes the portable twin, whose poison reports it.
            if grow * header[0] <= FOLD_SAFE_MAX && scale * header[1] <= FOLD_SAFE_MAX {
                crate::kernels::avx2::qt(token, fold, blocks, out, stream);
                return Vec4::ZERO;
            }
        }
        let _ = (stream, header);
        encode_cached_portable(tier, fold, blocks, out)
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

    /// Similarities and a few non-uniform, mirrored, zero and near-half-turn matrices.
    fn matrices() -> Vec<Affine3A> {
        let mut m: Vec<Affine3A> = (0..37)
            .map(|i| {
                let a = i as f32 * 0.913;
                Affine3A::from_scale_rotation_translation(
                    glam::Vec3::splat(if i % 5 == 0 { -0.7 } else { 0.4 + (i % 4) as f32 * 0.6 }),
                    Quat::from_euler(glam::EulerRot::ZXY, a, 2.0 * a.cos(), a.sin()),
                    glam::Vec3::new(a.sin(), -1.5 * a, 0.25),
                )
            })
            .collect();
        m.push(Affine3A::from_scale(glam::Vec3::new(1.0, 2.0, 3.0)));
        m.push(Affine3A::from_mat3(glam::Mat3::ZERO));
        m.push(Affine3A::from_quat(Quat::from_rotation_x(-3.1)));
        m
    }

    /// Four transforms decomposed in the lanes of one decomposition give the bits of one at a time.
    #[test]
    fn four_lane_folds_equal_single_decompositions() {
        let m = matrices();
        for group in m.chunks(4) {
            let at = |k: usize| group.get(k).unwrap_or(&Affine3A::IDENTITY);
            let folds = QtFold::new4([at(0), at(1), at(2), at(3)]);
            for (t, f) in group.iter().zip(&folds) {
                let (q, s) = decompose(&t.matrix3);
                assert_eq!(f.q.map(f32::to_bits), q.to_array().map(f32::to_bits), "{t:?}");
                assert_eq!(f.s.to_bits(), s.to_bits(), "{t:?}");
                assert_eq!(f.l, linear_rows(&t.matrix3));
            }
        }
    }

    /// A pose prepared four joints per decomposition and encoded without a fold gives `encode`'s bits per joint,
    /// partial blocks included.
    #[test]
    fn prepared_pose_encodes_as_encode() {
        let m = matrices();
        let rows: Vec<[Vec4; 3]> = m
            .iter()
            .map(|m| {
                let t = glam::Mat4::from(*m).transpose();
                [t.x_axis, t.y_axis, t.z_axis]
            })
            .collect();
        let mut cached = vec![0.0; QtF16::cached_floats(rows.len())];
        QtF16::prepare(&rows, &mut cached);
        let mut out = vec![QtF16::default(); rows.len()];
        let pose = CachedPose {
            rows: &rows,
            aux: &cached,
            max_abs: 0.0,
        };
        assert_eq!(
            QtF16::encode_cached(Tier::Portable, pose, None, &mut out, false),
            Vec4::ZERO
        );
        for (k, (e, m)) in out.iter().zip(&m).enumerate() {
            assert_eq!(*e, QtF16::encode(m, Vec3A::ZERO), "joint {k}");
        }
    }

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
