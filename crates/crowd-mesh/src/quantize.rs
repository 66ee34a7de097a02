//! The vertex quantizers of packed meshes, each with its stated error bound and its decoder, which mirrors
//! `shaders/vertex_formats.wgsl` line for line.
//!
//! | attribute | packing | size | error |
//! | --- | --- | --- | --- |
//! | normal | octahedral map, two snorm16 (x low) | 4 B | [`OCT_NORMAL_ERROR_BOUND`] radians |
//! | UV in `[0, 1]` | two unorm16 (u low) | 4 B | [`UV_UNORM16_ERROR_BOUND`] |
//! | other UV | two f16 (u low) | 4 B | relative `2⁻¹¹`, at least `2⁻²⁵` ([`uv_f16_error_bound`]) |
//! | joints, all below 256 | four u8 (influence 0 low) | 4 B | exact |
//! | joints | four u16, two per word | 8 B | exact |
//! | weights | four unorm8 summing to exactly 255 | 4 B | [`WEIGHT_ERROR_BOUND`] each |
//! | colour | RGBA8 unorm (red low) | 4 B | `1/510` per channel |

use glam::{Vec2, Vec3, Vec4};
use skin_pack::quant::{
    halves_from_f32_scalar, pack_rgba8, pack2x16, snorm16, unorm16, unpack2x16float, unpack2x16snorm, unpack2x16unorm,
    unpack4x8unorm,
};

/// The largest angle, in radians, between a unit normal and its decoded octahedral snorm16 code.
///
/// Each snorm16 component is off by at most half a step, `1/65534`, so the octahedral point `(u, v)` moves by
/// at most `√2/65534 = 2.16e-5`. The unnormalized direction `(u, v, 1 - |u| - |v|)` (folded for the lower
/// hemisphere, which keeps the bound) has a Jacobian of norm `√3` and a length of at least `1/√3`, so the
/// direction turns by at most `3 · 2.16e-5 = 6.48e-5`; the bound leaves `5e-6` for the f32 arithmetic.
pub const OCT_NORMAL_ERROR_BOUND: f32 = 7.0e-5;

/// The largest error of a decoded unorm16 UV component: half a step, `1/131070`, plus `2⁻²⁴` for the division.
pub const UV_UNORM16_ERROR_BOUND: f32 = 1.0 / 131_070.0 + 1.0 / 16_777_216.0;

/// The largest error of a decoded weight against the normalized input weight: under one step, `1/255`, since the
/// largest-remainder rounding moves each scaled weight by less than one.
pub const WEIGHT_ERROR_BOUND: f32 = 1.0 / 255.0;

/// The largest error of a UV component `x` (finite, `|x| ≤ 65504`) stored as f16: half an ulp, `|x| · 2⁻¹¹` for
/// normal values and `2⁻²⁵` in f16's subnormal range.
pub fn uv_f16_error_bound(x: f32) -> f32 {
    (x.abs() / 2048.0).max(1.0 / 33_554_432.0)
}

/// Encodes a unit normal (any non-zero finite vector; it is normalized) in the octahedral map as two snorm16,
/// x in the low half. A zero or non-finite vector encodes as +Z.
pub fn encode_oct_normal(n: Vec3) -> u32 {
    let n = n.normalize_or(Vec3::Z);
    let p = Vec2::new(n.x, n.y) / (n.x.abs() + n.y.abs() + n.z.abs());
    let p = if n.z < 0.0 {
        // Fold the lower hemisphere over the diagonals.
        (Vec2::ONE - Vec2::new(p.y.abs(), p.x.abs())) * Vec2::new(sign(p.x), sign(p.y))
    } else {
        p
    };
    // Each component rounded to nearest, ties to even (`skin_pack::quant::snorm16`).
    let q = snorm16(Vec4::new(p.x, p.y, 0.0, 0.0).clamp(-Vec4::ONE, Vec4::ONE));
    pack2x16(q[0], q[1])
}

/// The sign of `x` as ±1 (+1 for zero), as WGSL's `select(-1.0, 1.0, x >= 0.0)`.
fn sign(x: f32) -> f32 {
    if x >= 0.0 { 1.0 } else { -1.0 }
}

/// Decodes an octahedral normal as `decode_oct_normal` in `shaders/vertex_formats.wgsl` does.
pub fn decode_oct_normal(w: u32) -> Vec3 {
    let p = Vec2::from(unpack2x16snorm(w));
    let z = 1.0 - p.x.abs() - p.y.abs();
    let t = (-z).max(0.0);
    let x = p.x + if p.x >= 0.0 { -t } else { t };
    let y = p.y + if p.y >= 0.0 { -t } else { t };
    Vec3::new(x, y, z).normalize()
}

/// Encodes a UV with both components in `[0, 1]` (clamped) as two unorm16, u in the low half, each rounded to
/// nearest with ties to even (`skin_pack::quant::unorm16`).
pub fn encode_uv_unorm16(uv: Vec2) -> u32 {
    let q = unorm16(Vec4::new(uv.x, uv.y, 0.0, 0.0).clamp(Vec4::ZERO, Vec4::ONE));
    pack2x16(q[0], q[1])
}

/// Decodes a unorm16 UV (WGSL `unpack2x16unorm`).
pub fn decode_uv_unorm16(w: u32) -> Vec2 {
    Vec2::from(unpack2x16unorm(w))
}

/// Encodes a UV as two f16 (round to nearest even), u in the low half; components past ±65504 become infinite,
/// so callers check the range first.
pub fn encode_uv_f16(uv: Vec2) -> u32 {
    let [u, v] = halves_from_f32_scalar(&uv.to_array());
    pack2x16(u, v)
}

/// Decodes an f16 UV (WGSL `unpack2x16float`).
pub fn decode_uv_f16(w: u32) -> Vec2 {
    Vec2::from(unpack2x16float(w))
}

/// Quantizes four non-negative finite weights (not all zero) to unorm8 that sum to exactly 255, by
/// largest-remainder rounding of the normalized weights: each result is within one step of `255 · w_i / Σw`, and
/// zero weights stay zero. Returns the four bytes, influence 0 in the low byte, or `None` when the weights are
/// negative, not finite, or all zero.
pub fn quantize_weights(w: [f32; 4]) -> Option<u32> {
    if w.iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
        return None;
    }
    let sum: f32 = w.iter().sum();
    if !(sum > 0.0 && sum.is_finite()) {
        return None;
    }
    let scaled = w.map(|x| x / sum * 255.0);
    let mut q = scaled.map(|x| x.floor().min(255.0) as u32);
    let mut left = 255 - q.iter().sum::<u32>().min(255);
    // Hand the missing units to the largest fractional parts (ties to the lower influence index).
    let mut order = [0usize, 1, 2, 3];
    order.sort_by(|&a, &b| (scaled[b] - q[b] as f32).total_cmp(&(scaled[a] - q[a] as f32)));
    for &i in order.iter().cycle().take(8) {
        if left == 0 {
            break;
        }
        if scaled[i] > q[i] as f32 {
            q[i] += 1;
            left -= 1;
        }
    }
    Some(q[0] | (q[1] << 8) | (q[2] << 16) | (q[3] << 24))
}

/// Decodes unorm8 weights (WGSL `unpack4x8unorm`).
pub fn decode_weights(w: u32) -> Vec4 {
    Vec4::from_array(unpack4x8unorm(w))
}

/// Encodes an RGBA colour with components in `[0, 1]` (clamped) as RGBA8 unorm, red in the low byte, each rounded
/// to nearest with ties to even (`skin_pack::quant::pack_rgba8`).
pub fn encode_rgba8(c: Vec4) -> u32 {
    pack_rgba8(c.clamp(Vec4::ZERO, Vec4::ONE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_and_diagonal_normals_round_trip_within_the_bound() {
        let mut normals = vec![Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        for x in [-1.0f32, 0.0, 1.0] {
            for y in [-1.0f32, 0.0, 1.0] {
                for z in [-1.0f32, 0.0, 1.0] {
                    if (x, y, z) != (0.0, 0.0, 0.0) {
                        normals.push(Vec3::new(x, y, z).normalize());
                    }
                }
            }
        }
        for n in normals {
            let d = decode_oct_normal(encode_oct_normal(n));
            // acos loses precision near 1; the cross product's length is the sine of the angle.
            let angle = n.cross(d).length().asin();
            assert!(n.dot(d) > 0.0 && angle <= OCT_NORMAL_ERROR_BOUND, "{n}: {angle}");
        }
        assert_eq!(decode_oct_normal(encode_oct_normal(Vec3::NAN)), Vec3::Z);
    }

    #[test]
    fn weights_sum_to_255_and_zeros_stay_zero() {
        for w in [
            [1.0, 0.0, 0.0, 0.0],
            [0.25; 4],
            [1.0, 1.0, 1.0, 0.0],
            [0.5, 0.3, 0.2, 0.0],
            [1e-9, 1.0, 0.0, 0.0],
        ] {
            let q = quantize_weights(w).expect("valid weights");
            let b = [q & 0xff, (q >> 8) & 0xff, (q >> 16) & 0xff, q >> 24];
            assert_eq!(b.iter().sum::<u32>(), 255, "{w:?} -> {b:?}");
            for i in 0..4 {
                if w[i] == 0.0 {
                    assert_eq!(b[i], 0, "{w:?}");
                }
            }
        }
        assert_eq!(quantize_weights([0.0; 4]), None);
        assert_eq!(quantize_weights([-0.1, 1.0, 0.0, 0.0]), None);
        assert_eq!(quantize_weights([f32::NAN, 1.0, 0.0, 0.0]), None);
    }
}
