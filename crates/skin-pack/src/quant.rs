//! The scalar quantization every packed GPU format shares, implemented once: round to nearest, snorm16, unorm16
//! and unorm8 codes, RGBA8 and two-per-word packing, f32 ↔ f16, and the WGSL `unpack*` builtins that decode them.
//! The f16 palette formats, crowd-frame's instance record and crowd-mesh's vertex streams all call these.
//!
//! # Rounding
//!
//! Every encoder rounds to nearest, ties to even: the integer codes through [`rounded_bits`] (adding `1.5 · 2²³`
//! rounds in the FPU's default mode), f16 through IEEE 754 conversion. A code is therefore off by at most half a
//! step from the scaled input:
//!
//! | code | step | largest error |
//! | --- | --- | --- |
//! | [`snorm16`] of `x ∈ [-1, 1]` | `1/32767` | `1/65534` |
//! | [`unorm16`] of `x ∈ [0, 1]` | `1/65535` | `1/131070` |
//! | [`unorm8`] of `x ∈ [0, 1]` | `1/255` | `1/510` |
//! | [`halves_from_f32`] of `x` within ±65504 | one f16 ulp | `max(2⁻¹¹·abs(x), 2⁻²⁵)` |
//!
//! The integer decoders ([`unpack2x16snorm`], [`unpack2x16unorm`], [`unpack4x8unorm`]) add at most `2⁻²⁴` for their
//! division (their results are within ±1); the f16 decoders are exact. WGSL's own `pack2x16snorm`, `pack2x16unorm`
//! and `pack4x8unorm` round half up (`⌊0.5 + x⌋`) instead; the two differ only on exact ties, the decoders are the
//! same, and no shader packs these values itself.
//!
//! The integer encoders take values already in range and do not clamp (the record packer's inputs are checked
//! where they enter the crowd, and the mesh quantizers clamp first): out-of-range values give wrong codes, never a
//! panic.

use glam::Vec4;
use half::f16;
use half::slice::HalfFloatSliceExt;

/// `1.5 · 2²³`: any f32 `v` with `|v| < 2²²` added to it gives a sum whose unit is 1 (see [`rounded_bits`]).
const ROUNDING_BIAS: f32 = 12_582_912.0;

/// The bits of `v + 1.5 · 2²³`, lane by lane: for `|v| < 2²²`, the sum's unit is 1, so its low mantissa bits hold
/// `v` rounded to the nearest integer (ties to even), in two's complement for negative `v`; mask the bits of the
/// code you need.
///
/// Baseline x86-64 has no rounding instruction (SSE4.1), so `f32::round` is a library call, and a float-to-integer
/// cast checks for saturation; this is one vector add, and what crowd-frame's record packer runs per instance.
#[inline(always)]
pub fn rounded_bits(v: Vec4) -> [u32; 4] {
    (v + Vec4::splat(ROUNDING_BIAS)).to_array().map(f32::to_bits)
}

/// `round(x · 32767)` lane by lane, as the 16 bits of an `i16` (two's complement), for `x ∈ [-1, 1]`: off by at most
/// half a step, `1/65534`, ties to even. Not clamped.
#[inline(always)]
pub fn snorm16(v: Vec4) -> [u16; 4] {
    rounded_bits(v * 32767.0).map(|b| b as u16)
}

/// `round(x · 65535)` lane by lane, for `x ∈ [0, 1]`: off by at most half a step, `1/131070`, ties to even.
/// Not clamped.
#[inline(always)]
pub fn unorm16(v: Vec4) -> [u16; 4] {
    rounded_bits(v * 65535.0).map(|b| b as u16)
}

/// `round(x · 255)` lane by lane, for `x ∈ [0, 1]`: off by at most half a step, `1/510`, ties to even.
/// Not clamped.
#[inline(always)]
pub fn unorm8(v: Vec4) -> [u8; 4] {
    rounded_bits(v * 255.0).map(|b| b as u8)
}

/// Four components in `[0, 1]` as RGBA8 unorm, `x` (red) in the low byte, as WGSL's `unpack4x8unorm` reads it:
/// [`unorm8`] of each, off by at most `1/510`. Not clamped.
#[inline(always)]
pub fn pack_rgba8(v: Vec4) -> u32 {
    u32::from_le_bytes(unorm8(v))
}

/// Two 16-bit codes in one word, `lo` in the low half (component 0 of WGSL's `unpack2x16*`).
#[inline(always)]
pub fn pack2x16(lo: u16, hi: u16) -> u32 {
    u32::from(lo) | (u32::from(hi) << 16)
}

/// WGSL's `unpack2x16snorm`: component `i` is `max(f32(i16 of half i) / 32767, -1)`, the low half first.
#[inline(always)]
pub fn unpack2x16snorm(w: u32) -> [f32; 2] {
    [w as u16, (w >> 16) as u16].map(|h| (f32::from(h as i16) / 32767.0).max(-1.0))
}

/// WGSL's `unpack2x16unorm`: component `i` is `f32(half i) / 65535`, the low half first.
#[inline(always)]
pub fn unpack2x16unorm(w: u32) -> [f32; 2] {
    [w & 0xffff, w >> 16].map(|h| h as f32 / 65535.0)
}

/// WGSL's `unpack4x8unorm`: component `i` is `f32(byte i) / 255`, the low byte first.
#[inline(always)]
pub fn unpack4x8unorm(w: u32) -> [f32; 4] {
    [0, 8, 16, 24].map(|s| ((w >> s) & 0xff) as f32 / 255.0)
}

/// Converts `N` floats to f16 bits (round to nearest even, ±inf above 65520) in one batch.
///
/// This is the conversion every encoder uses: `half`'s slice conversion, which uses F16C when the CPU has it
/// (detected at run time) and a software path otherwise. `tests/f16_exhaustive.rs` checks that it equals
/// `half::f16::from_f32` for every f16 code and at every rounding boundary.
#[inline(always)]
pub fn halves_from_f32<const N: usize>(src: &[f32; N]) -> [u16; N] {
    let mut out = [f16::ZERO; N];
    out.convert_from_f32_slice(src);
    out.map(f16::to_bits)
}

/// The plain twin of [`halves_from_f32`]: `half::f16::from_f32` one value at a time (round to nearest even).
#[doc(hidden)]
#[inline(always)]
pub fn halves_from_f32_scalar<const N: usize>(src: &[f32; N]) -> [u16; N] {
    src.map(|x| f16::from_f32(x).to_bits())
}

/// The f16 bits of `v`, rounded to nearest even, for `v` within `[2⁻¹⁴, 65504]` (f16's positive normal range,
/// where the conversion is a rebias of the exponent and a rounded shift of the significand; a carry out of the
/// significand correctly bumps the exponent): [`halves_from_f32`]'s bits there, in four integer operations with no
/// branch and no F16C, for crowd-frame's record packer. Outside that range the result is meaningless.
#[inline(always)]
pub fn f16_bits_normal(v: f32) -> u32 {
    let b = v.to_bits();
    ((b + 0x0fff + ((b >> 13) & 1)) >> 13) - (112 << 10)
}

/// WGSL's `unpack2x16float`: the low 16 bits are component 0, the high 16 bits component 1, each converted
/// exactly to f32.
#[inline(always)]
pub fn unpack2x16float(word: u32) -> [f32; 2] {
    [
        f16::from_bits(word as u16).to_f32(),
        f16::from_bits((word >> 16) as u16).to_f32(),
    ]
}

/// `f16_to_f32` of `shaders/palette_f16.wgsl`, line for line: one f16 code (the low 16 bits of `h`) to f32 with
/// integer operations only. It equals `unpack2x16float` for every code (`tests/f16_exhaustive.rs`); the shader uses
/// it because naga validates `unpack2x16float` only with the `SHADER_FLOAT16_IN_FLOAT32` capability.
#[inline(always)]
pub fn f16_bits_to_f32(h: u32) -> f32 {
    // let bits_sign = (h & 0x8000u) << 16u;
    let bits_sign = (h & 0x8000) << 16;
    // let e = (h >> 10u) & 0x1fu;
    let e = (h >> 10) & 0x1f;
    // let m = h & 0x3ffu;
    let m = h & 0x3ff;
    // let normal = bitcast<f32>(bits_sign | ((e + 112u) << 23u) | (m << 13u));
    let normal = f32::from_bits(bits_sign | ((e + 112) << 23) | (m << 13));
    // let special = bitcast<f32>(bits_sign | 0x7f800000u | (m << 13u));
    let special = f32::from_bits(bits_sign | 0x7f80_0000 | (m << 13));
    // let sub = bitcast<f32>(bits_sign | bitcast<u32>(f32(m) * 5.9604644775390625e-8));
    let sub = f32::from_bits(bits_sign | (m as f32 * 5.960_464_5e-8).to_bits());
    // return select(select(normal, special, e == 31u), sub, e == 0u);
    if e == 0 {
        sub
    } else if e == 31 {
        special
    } else {
        normal
    }
}

/// `unpack_halves` of `shaders/palette_f16.wgsl`: [`f16_bits_to_f32`] of the low half, then of the high half.
#[inline(always)]
pub fn unpack_halves(w: u32) -> [f32; 2] {
    [f16_bits_to_f32(w & 0xffff), f16_bits_to_f32(w >> 16)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every f32 in `lo..=hi` in steps of `step` ulps, and the ends.
    fn sweep(lo: f32, hi: f32, step: usize) -> impl Iterator<Item = f32> {
        let (a, b) = (lo.to_bits(), hi.to_bits());
        (a..=b).step_by(step).chain([a, b]).map(f32::from_bits)
    }

    #[test]
    fn rounded_bits_round_to_nearest_even() {
        let mut values: Vec<f32> = (-2000..=2000).map(|k| k as f32 * 0.25).collect();
        values.extend([-4_194_303.5, 4_194_303.5, -0.0, 1e-30, -1e-30, 2.5, -2.5, 3.5]);
        for v in values {
            let want = v.round_ties_even() as i32;
            let got = rounded_bits(Vec4::splat(v))[0] as i32 - ROUNDING_BIAS.to_bits() as i32;
            assert_eq!(got, want, "{v}");
        }
    }

    #[test]
    fn the_codes_are_within_half_a_step() {
        for x in sweep(0.0, 1.0, 4099) {
            let v = Vec4::new(x, -x, x, -x);
            let s = snorm16(v);
            let d = [
                unpack2x16snorm(pack2x16(s[0], s[1])),
                unpack2x16snorm(pack2x16(s[2], s[3])),
            ];
            assert!((d[0][0] - x).abs() <= 1.0 / 65534.0 + 1e-7 && (d[0][1] + x).abs() <= 1.0 / 65534.0 + 1e-7);
            assert_eq!(i32::from(s[0] as i16), (x * 32767.0).round_ties_even() as i32, "{x}");
            assert_eq!(d[1], d[0]);
            let u = unorm16(v);
            let d = unpack2x16unorm(pack2x16(u[0], u[2]));
            assert!(d.iter().all(|d| (d - x).abs() <= 1.0 / 131_070.0 + 1e-7), "{x}: {d:?}");
            let c = pack_rgba8(Vec4::splat(x));
            assert!(
                unpack4x8unorm(c).iter().all(|d| (d - x).abs() <= 1.0 / 510.0 + 1e-7),
                "{x}"
            );
            assert_eq!(c & 0xff, u32::from(unorm8(Vec4::splat(x))[0]));
        }
        assert_eq!(snorm16(Vec4::new(1.0, -1.0, 0.0, -0.0)), [0x7fff, 0x8001, 0, 0]);
        assert_eq!(unorm16(Vec4::new(1.0, 0.0, 0.5, 0.5 / 65535.0)), [0xffff, 0, 0x8000, 0]);
        assert_eq!(pack_rgba8(Vec4::new(1.0, 0.0, 0.5, 1.0)), 0xff80_00ff);
        assert_eq!(unpack2x16snorm(0x8000), [-1.0, 0.0], "-32768 decodes as -1");
    }

    #[test]
    fn the_normal_f16_conversion_matches_half_over_the_whole_range() {
        // Every f32 from 2^-14 to 65504 in steps of 37 ulps (ties and carries included: the step is odd).
        let (lo, hi) = (1.0f32 / 16384.0, 65504.0f32);
        let mut checked = 0;
        for v in sweep(lo, hi, 37).chain([0x3f80_1000, 0x3f80_3000, 0x3fff_f000].map(f32::from_bits)) {
            assert_eq!(
                f16_bits_normal(v),
                u32::from(halves_from_f32_scalar(&[v])[0]),
                "{v:e} ({:#x})",
                v.to_bits()
            );
            checked += 1;
        }
        assert!(checked > 1_000_000);
    }
}
