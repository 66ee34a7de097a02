//! Compressed f16 palette formats: [`Mat3x4F16`] (24 B per joint) and [`QtF16`] (16 B per joint).
//!
//! Both store halves (IEEE 754 binary16) packed two per `u32`, low half first, exactly as WGSL's
//! `unpack2x16float` reads them, so the GPU needs no `SHADER_F16`. `shaders/palette_f16.wgsl` declares the same
//! structs and decoders; it spells `unpack2x16float` as a few integer operations
//! ([`unpack_halves`](crate::quant::unpack_halves), exact for every code) because naga accepts the builtin only with
//! the `SHADER_FLOAT16_IN_FLOAT32` capability, which the shader tests do not grant. [`F16Format::decode_rows`]
//! mirrors the shader line for line. The f16 conversions themselves live in [`crate::quant`].
//! Translations are stored relative to a per-palette origin (`encode(m, origin)` stores `t − origin`), so their
//! precision depends on the distance to the origin, not on the world position; [`palette_origin`] picks the centre
//! of the palette's translations, which the tests and benches use.
//!
//! # Choosing a format
//!
//! [`QtF16`] holds a rotation and a *uniform* scale only. Call [`check_uniform_scale`] (or [`choose_f16_format`])
//! once per skeleton with its clips: when any rest pose, clip key, inverse bind matrix or the root transform has a
//! non-uniform scale, the skeleton falls back to [`Mat3x4F16`], which holds any affine matrix.
//!
//! # Error bounds
//!
//! Round-to-nearest-even to f16 has, for `|x| ≤ 65504`, an error of at most `max(2⁻¹¹·|x|, 2⁻²⁵)`: relative
//! `2⁻¹¹` (half an ulp of an 11-bit significand) for normal values, absolute `2⁻²⁵` (half the subnormal spacing
//! `2⁻²⁴`) below `2⁻¹⁴`. f16 → f32 is exact. `tests/f16_exhaustive.rs` checks both facts for all 65,536 codes.
//! Let `m = [L | t]`, `d = t − origin`, and `u = 2⁻¹¹`. The decoded `m̂` satisfies, per element:
//!
//! - translation (both formats): `|Δtᵢ| ≤ (u + 2⁻²³)·|dᵢ| + 2⁻²⁴·|tᵢ| + 2⁻²⁴`
//!   (f16 rounding of `d`, plus the f32 rounding of `t − origin` and of `origin + d̂`);
//! - [`Mat3x4F16`] linear element: `|ΔLᵢⱼ| ≤ u·|Lᵢⱼ| + 2⁻²⁵`;
//! - [`QtF16`] linear part, as an operator norm (so also per element):
//!   `‖ΔL‖₂ ≤ (3u + 2⁻¹⁶)·|s| + 2⁻²⁵ + ρ`, where `s` is the signed uniform scale and `ρ = ‖L − s·R(q)‖_F` is the
//!   residual of the encoder's own f32 decomposition (zero for an exact similarity up to f32 rounding; the
//!   non-uniformity otherwise). The quaternion's f16 rounding moves it by an angle `θ` with
//!   `sin θ ≤ ‖q̂ − q‖ / |q| ≤ u + 2⁻²⁴/|q| ≤ u + 2⁻²³` (the encoder's `|q| ≥ 1/2`),
//!   which moves the rotation matrix by `2·sin θ` in the operator norm; the scale adds `u·|s| + 2⁻²⁵`; `2⁻¹⁶·|s|`
//!   covers the f32 arithmetic of the decoder (normalisation and the quaternion-to-matrix products).
//!
//! For a vertex `p` with `|p| ≤ r` (a mesh of radius `r` around the bind-space origin), the displacement between
//! skinning with `m` and with `m̂`, both evaluated in f32, is at most
//!
//! - [`Mat3x4F16`]: `r·(u·‖L‖_F + 3·2⁻²⁵) + (u + 2⁻²³)·|d| + 2⁻²⁴·|t| + √3·2⁻²⁴ + E`;
//! - [`QtF16`]: `r·((3u + 2⁻¹⁶)·|s| + 2⁻²⁵ + ρ) + (u + 2⁻²³)·|d| + 2⁻²⁴·|t| + √3·2⁻²⁴ + E`;
//!
//! with `E = 2⁻²⁰·(‖L‖_F·r + |t|)` for the f32 rounding of the two skinning evaluations (blend of four matrices,
//! then the transform: at most 7 roundings each). A vertex blending joints with weights `wₖ ≥ 0` moves by at most
//! `Σ wₖ·boundₖ`. [`F16Format::vertex_error_bound`] evaluates these formulas for one matrix.
//!
//! For a rigid joint (`‖L‖_F = √3`, `s = 1`), `r = 1 m` and `|d| = 1 m`, that is about 1.33 mm for [`Mat3x4F16`]
//! and 1.97 mm for [`QtF16`]; at `|d| = 10 m` the translation term alone is 4.9 mm.
//!
//! # Limits
//!
//! The largest finite f16 is [`F16_MAX`] = 65504: every matrix element, every `|t − origin|` component and the
//! scale must stay within it. `encode` clamps larger values to ±65504 (it never writes infinity), and
//! [`F16Format::check`] reports them as [`Error::F16Overflow`]; the bounds above hold only within range
//! (the bound functions return infinity outside it). The shader's integer decode turns subnormal halves into
//! normal f32 values exactly, so no GPU flushes them; a shader that used the `unpack2x16float` builtin on a GPU
//! that flushes f16 subnormals would add up to `2⁻¹⁴` (6.1e-5) per element instead of `2⁻²⁵`.

mod entry_f32;
mod mat3x4_f16;
pub(crate) mod qt_f16;
pub(crate) mod row_fold;
mod uniform_scale;
mod vertex_error;

use glam::{Affine3A, Mat3A, Vec3A, Vec4};

use crate::quant::{halves_from_f32_scalar, pack2x16};
use crate::{Error, Result};

pub use mat3x4_f16::Mat3x4F16;
pub use qt_f16::QtF16;
pub use uniform_scale::{F16Kind, QT_F16_SCALE_TOLERANCE, check_uniform_scale, choose_f16_format};
pub use vertex_error::{VertexError, VertexErrorScratch, f16_vertex_error};

/// A palette entry format that [`crate::FlattenJob`] writes: [`crate::PaletteEntry`] (f32, 48 B), [`Mat3x4F16`]
/// (24 B) or [`QtF16`] (16 B). The trait is sealed: its hot-path hooks are the crate's own.
pub trait PaletteFormat: sealed::Format {
    /// A short name for reports and errors, for example `"f32 3x4"`.
    const NAME: &'static str;

    /// Encodes one skinning matrix, with its translation relative to `origin` for the f16 formats (the f32 entry
    /// stores the absolute matrix and ignores `origin`). The input must be finite.
    fn encode(m: &Affine3A, origin: Vec3A) -> Self;
}

/// The hooks of [`PaletteFormat`] that [`crate::FlattenJob`] calls, in a private module so that no other crate can
/// implement or call them.
pub(crate) mod sealed {
    use glam::{Affine3A, Vec3A, Vec4};

    use crate::flatten::CachedPose;
    use crate::kernels::Tier;

    /// See [`super::PaletteFormat`].
    pub trait Format: bytemuck::Pod + Send + Sync {
        /// The floats of this format's own per-pose data in a [`crate::FlattenCache`] for a skin of `skin_joints`
        /// joints, a multiple of 16 (whole 64-byte lines).
        fn cached_floats(skin_joints: usize) -> usize {
            let _ = skin_joints;
            0
        }

        /// Fills a pose's own data ([`Format::cached_floats`] long) from its finite skinning rows (translation in
        /// `w`), once per pose and frame.
        fn prepare(rows: &[[Vec4; 3]], cached: &mut [f32]) {
            let _ = (rows, cached);
        }

        /// Encodes `out.len()` entries whose rows (translation in `w`) `row(k)` computes, relative to `origin`;
        /// returns the poison sum of the rows (NaN when one was not finite, zero otherwise).
        fn encode_rows(tier: Tier, out: &mut [Self], origin: Vec3A, row: impl FnMut(usize) -> [Vec4; 3]) -> Vec4;

        /// What [`Format::encode_cached`] reads of an instance transform, prepared once per palette.
        type Fold: Copy;

        /// The folds of four instance transforms (four at a time, so that [`crate::QtF16`] decomposes them in
        /// four lanes at once).
        fn folds(t: [&Affine3A; 4]) -> [Self::Fold; 4];

        /// Encodes one palette from a cached pose, folded by the instance transform `t` when given (the f16 formats
        /// then store translations relative to `t`'s), streamed where the tier's kernel can; returns the poison sum
        /// of what it computed, as [`Format::encode_rows`].
        fn encode_cached(
            tier: Tier,
            pose: CachedPose<'_>,
            t: Option<&Self::Fold>,
            out: &mut [Self],
            stream: bool,
        ) -> Vec4;
    }
}

/// Converts `values(k)`, `N` vectors per entry of `dst` (`N` pairs of words each), to halves packed
/// `[(x, y), (z, w)]` with the first half in the low 16 bits, as WGSL's `unpack2x16float` reads them: with F16C on
/// the SIMD tier, `half::f16::from_f32` one value at a time otherwise (the same bits, `tests/f16_exhaustive.rs`).
#[inline(always)]
pub(crate) fn encode_halves<const N: usize>(
    tier: crate::kernels::Tier,
    dst: &mut [[u32; 2]],
    mut values: impl FnMut(usize) -> [Vec4; N],
) {
    #[cfg(all(target_arch = "x86_64", not(feature = "portable")))]
    if let crate::kernels::Tier::Avx2(token) = tier {
        crate::kernels::avx2::halves(token, dst, values);
        return;
    }
    let _ = tier;
    for (k, d) in dst.chunks_exact_mut(N).enumerate() {
        for (d, v) in d.iter_mut().zip(values(k)) {
            let h = halves_from_f32_scalar(&v.to_array());
            *d = [pack2x16(h[0], h[1]), pack2x16(h[2], h[3])];
        }
    }
}

/// The largest finite f16, 65504.
///
/// Encoders clamp to it so that they never write infinity; values beyond it are an [`Error::F16Overflow`] in
/// [`F16Format::check`]. For a translation it is the largest offset from the palette origin, in model units.
pub const F16_MAX: f32 = 65504.0;

/// `u = 2⁻¹¹`, the relative rounding error of f16 round-to-nearest for normal values.
const U: f64 = 1.0 / 2048.0;
/// `2⁻²⁵`, the absolute rounding error of f16 round-to-nearest for subnormal values.
const A: f64 = 1.0 / 33_554_432.0;
/// `2⁻²⁴`, the unit roundoff of f32.
const U32: f64 = 1.0 / 16_777_216.0;
/// `2⁻²³`.
const U23: f64 = 1.0 / 8_388_608.0;

/// A palette format with f16 storage: the [`PaletteFormat`] encoder plus its decoders, range check and error
/// bounds (the formulas are below).
///
/// ```
/// use glam::{Affine3A, Vec3, Vec3A};
/// use skin_pack::{F16Format, Mat3x4F16, PaletteFormat};
///
/// // A joint 100 m from the world origin, encoded relative to the instance position.
/// let m = Affine3A::from_translation(Vec3::new(100.0, 0.0, 0.5));
/// let origin = Vec3A::new(100.0, 0.0, 0.0);
/// Mat3x4F16::check(&m, origin, 0)?;
/// let decoded = Mat3x4F16::encode(&m, origin).decode(origin);
/// let moved = (decoded.translation - m.translation).length();
/// assert!(moved <= Mat3x4F16::vertex_error_bound(&m, origin, 0.0));
/// assert!(moved < 1e-3);
/// # Ok::<(), skin_pack::Error>(())
/// ```
pub trait F16Format: PaletteFormat {
    /// The reference decoder: the matrix that `encode(m, origin)` stands for, with `origin` added back.
    fn decode(&self, origin: Vec3A) -> Affine3A;

    /// The three rows of the decoded matrix, computed line for line as `shaders/palette_f16.wgsl` does
    /// (the `PaletteEntry` layout: `p' = (dot(r0, p1), dot(r1, p1), dot(r2, p1))`).
    fn decode_rows(&self, origin: Vec3A) -> [Vec4; 3];

    /// Checks that `encode(m, origin)` is within range (and, for [`QtF16`], that `m` has a uniform scale within
    /// [`QT_F16_SCALE_TOLERANCE`]), so that the error bounds hold.
    ///
    /// # Errors
    ///
    /// - [`Error::NotAffine`] naming palette entry `index` when `m` or `origin` is not finite.
    /// - [`Error::F16Overflow`] when an element, a translation offset or the scale exceeds [`F16_MAX`].
    /// - [`Error::NonUniformScale`] ([`QtF16`] only) when the scale is not uniform.
    fn check(m: &Affine3A, origin: Vec3A, index: usize) -> Result<()>;

    /// The largest error of each decoded element, in the row layout of `PaletteEntry::rows` (column 3 is the
    /// translation). Infinite when `m` is out of range (see [`F16Format::check`]).
    fn joint_error_bound(m: &Affine3A, origin: Vec3A) -> [[f32; 4]; 3];

    /// The largest displacement of a vertex within `radius` of the bind-space origin skinned by the decoded
    /// matrix instead of `m`, both in f32 (see the module docs). Infinite when `m` is out of range.
    fn vertex_error_bound(m: &Affine3A, origin: Vec3A, radius: f32) -> f32;
}

/// A translation origin for a palette: the centre of the bounding box of its translations, which minimises the
/// largest per-component offset `|t − origin|`. The origin of an empty palette is zero.
pub fn palette_origin(palette: &[Affine3A]) -> Vec3A {
    let Some(first) = palette.first() else {
        return Vec3A::ZERO;
    };
    let (lo, hi) = palette
        .iter()
        .fold((first.translation, first.translation), |(lo, hi), m| {
            (lo.min(m.translation), hi.max(m.translation))
        });
    (lo + hi) * 0.5
}

/// Checks every entry of `palette` with [`F16Format::check`].
///
/// # Errors
///
/// The first entry's error, naming its index.
pub fn check_palette<F: F16Format>(palette: &[Affine3A], origin: Vec3A) -> Result<()> {
    palette.iter().enumerate().try_for_each(|(i, m)| F::check(m, origin, i))
}

/// Decodes a palette of `F` from raw bytes (as uploaded), one matrix per `size_of::<F>()` bytes, into `out`.
///
/// # Errors
///
/// [`Error::BufferSize`] (`"f16 palette bytes"`) when `bytes` is not exactly `out.len() * size_of::<F>()` long;
/// nothing is written then.
pub fn decode_palette<F: F16Format>(bytes: &[u8], origin: Vec3A, out: &mut [Affine3A]) -> Result<()> {
    let size = size_of::<F>();
    let expected = out.len() * size;
    if bytes.len() != expected {
        return Err(Error::BufferSize {
            what: "f16 palette bytes",
            expected,
            actual: bytes.len(),
        });
    }
    for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(size)) {
        *o = bytemuck::pod_read_unaligned::<F>(chunk).decode(origin);
    }
    Ok(())
}

/// The translation part of the joint bound, per component: `(u + 2⁻²³)·|dᵢ| + 2⁻²⁴·|tᵢ| + 2⁻²⁴`.
fn translation_bound(t: f64, origin: f64) -> f64 {
    let d = (t - origin).abs();
    if d > f64::from(F16_MAX) {
        return f64::INFINITY;
    }
    (U + U23) * d + U32 * t.abs() + U32
}

/// The translation part of the vertex bound: `(u + 2⁻²³)·|d| + 2⁻²⁴·|t| + √3·2⁻²⁴`.
fn translation_vertex_bound(m: &Affine3A, origin: Vec3A) -> f64 {
    let t = m.translation.to_array().map(f64::from);
    let o = origin.to_array().map(f64::from);
    if (0..3).any(|i| (t[i] - o[i]).abs() > f64::from(F16_MAX)) {
        return f64::INFINITY;
    }
    let d = norm3([t[0] - o[0], t[1] - o[1], t[2] - o[2]]);
    (U + U23) * d + U32 * norm3(t) + 3f64.sqrt() * U32
}

/// `E = 2⁻²⁰·(‖L‖_F·r + |t|)`: the f32 rounding of two skinning evaluations.
fn evaluation_bound(m: &Affine3A, radius: f64) -> f64 {
    let t = m.translation.to_array().map(f64::from);
    (frobenius(&m.matrix3) * radius + norm3(t)) / 1_048_576.0
}

/// `‖L‖_F` in f64.
fn frobenius(l: &Mat3A) -> f64 {
    l.to_cols_array()
        .iter()
        .map(|&x| f64::from(x).powi(2))
        .sum::<f64>()
        .sqrt()
}

fn norm3(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Rounds a non-negative f64 bound up to an f32 that is at least as large.
fn up(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) < x && f.is_finite() {
        // For a non-negative finite f32, the next representable value up has the next bit pattern.
        f32::from_bits(f.to_bits() + 1)
    } else {
        f
    }
}

/// [`Error::F16Overflow`] unless `|x| ≤ F16_MAX`.
fn check_range(format: &'static str, index: usize, x: f32) -> Result<()> {
    if x.abs() <= F16_MAX {
        Ok(())
    } else {
        Err(Error::F16Overflow {
            format,
            what: "palette entry",
            index,
            magnitude: x.abs().ceil() as u32,
        })
    }
}

/// [`Error::NotAffine`] unless `m` and `origin` are finite.
fn check_finite(m: &Affine3A, origin: Vec3A, index: usize) -> Result<()> {
    if m.is_finite() && origin.is_finite() {
        Ok(())
    } else {
        Err(Error::NotAffine {
            what: "palette entry",
            index,
        })
    }
}
