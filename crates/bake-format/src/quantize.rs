//! The vertex-animation quantizers: positions as unorm codes relative to a clip's box, and normals in the
//! octahedral map as two unorm codes. The rounding is `skin_pack::quant`'s (round to nearest, ties to even).
//!
//! # Error bounds
//!
//! A position axis of extent `e = max − min` stored with `b` bits has a step `s = e / (2ᵇ − 1)`. The code is the
//! nearest integer to `(p − min) / s`, whose f32 evaluation is within `3 · 2⁻²⁴ · 65535 < 1/64` of a code unit (the
//! step itself is rounded once), so the code is off by at most `(1/2 + 1/64) · s`; the decode `min + code · s` adds at most
//! `2⁻²² · (|min| + |max|)` of f32 rounding. [`position_error_bound`] is the Euclidean norm of the three axes' bounds.
//!
//! A normal's octahedral point `(u, v) ∈ [−1, 1]²` is stored as two unorm codes of `(u + 1) / 2` with `b` bits,
//! each off by at most half a step, `1 / (2ᵇ − 1)`, so the point moves by at most `√2 / (2ᵇ − 1)`. The unnormalized
//! direction `(u, v, 1 − |u| − |v|)` (folded for the lower hemisphere) has a Jacobian of norm `√3` and a length of at
//! least `1/√3` (crowd-mesh's argument for its snorm16 normals), so the direction turns by at most
//! `asin(3 · √2 / (2ᵇ − 1))`: [`OCT8_ERROR_BOUND`] and [`OCT16_ERROR_BOUND`], with room for the f32 arithmetic.
//! `tests/prop_quantize.rs` checks every bound on random inputs.

use glam::{Vec2, Vec3, Vec4};
use skin_pack::quant::{rounded_bits, unorm8, unorm16};

/// The largest angle, in radians, between a unit normal and its decoded octahedral 2 × 8-bit code:
/// `asin(3√2 / 255) = 0.016637`, plus `2⁻¹⁶` for the f32 arithmetic.
pub const OCT8_ERROR_BOUND: f32 = 0.016_66;

/// The largest angle, in radians, between a unit normal and its decoded octahedral 2 × 16-bit code:
/// `3√2 / 65535 = 6.47e-5`, plus `5e-6` for the f32 arithmetic.
pub const OCT16_ERROR_BOUND: f32 = 7.0e-5;

/// The largest code of `bits` bits, as f32.
fn max_code(bits: u32) -> f32 {
    ((1u32 << bits) - 1) as f32
}

/// The step of one code on each axis of a box from `min` to `max` with `bits` bits per axis: `(max − min) / (2ᵇ − 1)`,
/// zero for a flat axis.
pub fn position_steps(min: Vec3, max: Vec3, bits: [u32; 3]) -> Vec3 {
    let e = (max - min).max(Vec3::ZERO);
    Vec3::new(
        e.x / max_code(bits[0]),
        e.y / max_code(bits[1]),
        e.z / max_code(bits[2]),
    )
}

/// The codes of `p` on each axis with steps `step` from `min` ([`position_steps`]), `bits` bits per axis (at most
/// 16): each `round((p − min) / step)` clamped to `[0, 2ᵇ − 1]`, ties to even; 0 on a flat axis (`step` 0).
pub fn encode_position(p: Vec3, min: Vec3, step: Vec3, bits: [u32; 3]) -> [u32; 3] {
    let scaled = Vec3::new(
        codes(p.x - min.x, step.x, bits[0]),
        codes(p.y - min.y, step.y, bits[1]),
        codes(p.z - min.z, step.z, bits[2]),
    );
    let b = rounded_bits(scaled.extend(0.0));
    [0, 1, 2].map(|i| b[i] & ((1 << bits[i]) - 1))
}

/// `d / step` clamped to `[0, 2ᵇ − 1]`, 0 for a flat or non-finite step.
fn codes(d: f32, step: f32, bits: u32) -> f32 {
    if step > 0.0 && step.is_finite() {
        (d / step).clamp(0.0, max_code(bits))
    } else {
        0.0
    }
}

/// The decoded position of three codes: `min + code · step` per axis, as the shader computes it.
pub fn decode_position(codes: [u32; 3], min: Vec3, step: Vec3) -> Vec3 {
    min + step * Vec3::new(codes[0] as f32, codes[1] as f32, codes[2] as f32)
}

/// The largest distance between a position inside the box from `min` to `max` and its decoded code with `bits` bits
/// per axis (see the module docs).
pub fn position_error_bound(min: Vec3, max: Vec3, bits: [u32; 3]) -> f32 {
    let step = position_steps(min, max, bits);
    let slack = (min.abs() + max.abs()) * (1.0 / 4_194_304.0);
    let axis = step * (0.5 + 1.0 / 64.0) + slack;
    // Rounded up by a relative 1e-6 for the evaluation of the norm itself.
    axis.length() * (1.0 + 1e-6)
}

/// The octahedral point of a unit normal (any non-zero finite vector; it is normalized), in `[−1, 1]²`; a zero or
/// non-finite vector maps to +Z.
fn oct_point(n: Vec3) -> Vec2 {
    let n = n.normalize_or(Vec3::Z);
    let p = Vec2::new(n.x, n.y) / (n.x.abs() + n.y.abs() + n.z.abs());
    if n.z < 0.0 {
        // Fold the lower hemisphere over the diagonals.
        (Vec2::ONE - Vec2::new(p.y.abs(), p.x.abs())) * Vec2::new(sign(p.x), sign(p.y))
    } else {
        p
    }
}

/// The sign of `x` as ±1 (+1 for zero), as WGSL's `select(-1.0, 1.0, x >= 0.0)`.
fn sign(x: f32) -> f32 {
    if x >= 0.0 { 1.0 } else { -1.0 }
}

/// A normal in the octahedral map as two unorm8 codes of `(u + 1) / 2` and `(v + 1) / 2`, `u` first.
pub fn encode_oct8(n: Vec3) -> [u8; 2] {
    let p = oct_point(n);
    let c = unorm8(((Vec4::new(p.x, p.y, 0.0, 0.0) + Vec4::ONE) * 0.5).clamp(Vec4::ZERO, Vec4::ONE));
    [c[0], c[1]]
}

/// A normal in the octahedral map as two unorm16 codes of `(u + 1) / 2` and `(v + 1) / 2`, `u` first.
pub fn encode_oct16(n: Vec3) -> [u16; 2] {
    let p = oct_point(n);
    let c = unorm16(((Vec4::new(p.x, p.y, 0.0, 0.0) + Vec4::ONE) * 0.5).clamp(Vec4::ZERO, Vec4::ONE));
    [c[0], c[1]]
}

/// Decodes an octahedral normal from its two codes of `bits` bits (8 or 16), as the shader does:
/// `p = code / (2ᵇ − 1) · 2 − 1`, unfolded and normalized.
///
/// ```wgsl
/// fn decode_oct(code: vec2<u32>, max_code: f32) -> vec3<f32> {
///     let p = vec2<f32>(code) / max_code * 2.0 - 1.0;
///     let z = 1.0 - abs(p.x) - abs(p.y);
///     let t = max(-z, 0.0);
///     let x = p.x + select(t, -t, p.x >= 0.0);
///     let y = p.y + select(t, -t, p.y >= 0.0);
///     return normalize(vec3<f32>(x, y, z));
/// }
/// ```
pub fn decode_oct(codes: [u32; 2], bits: u32) -> Vec3 {
    let m = max_code(bits);
    let p = Vec2::new(codes[0] as f32 / m * 2.0 - 1.0, codes[1] as f32 / m * 2.0 - 1.0);
    let z = 1.0 - p.x.abs() - p.y.abs();
    let t = (-z).max(0.0);
    let x = p.x + if p.x >= 0.0 { -t } else { t };
    let y = p.y + if p.y >= 0.0 { -t } else { t };
    Vec3::new(x, y, z).normalize()
}

/// Writes one vertex's texels in `format` (as a bake does) into `planes[0]` and `planes[1]`, each at least the
/// format's texel size long ([`crate::VatFormat::plane_texel_sizes`]).
pub fn encode_texel(format: crate::VatFormat, p: Vec3, n: Vec3, quant: &crate::VatQuant, planes: &mut [&mut [u8]; 2]) {
    let [a, b] = planes;
    format.encode(p, n, quant, [a, b]);
}

/// The angle in radians between two non-zero vectors, accurate for small angles (`atan2(|a × b|, a · b)`).
pub fn angle_between(a: Vec3, b: Vec3) -> f32 {
    a.cross(b).length().atan2(a.dot(b))
}
