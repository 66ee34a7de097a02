//! Every one of the 65,536 f16 codes through every scalar conversion the f16 palette formats rely on:
//! f16 → f32 (exact), f32 → f16 (round trip, and round to nearest even at every rounding boundary, within the
//! stated error), WGSL's `unpack2x16float` and the shader's integer spelling of it as mirrored in Rust, and the
//! batch conversion the encoders use.

use half::f16;
use skin_pack::{F16_MAX, f16_bits_to_f32, halves_from_f32, unpack_halves, unpack2x16float};

/// Every f16 code.
fn codes() -> impl Iterator<Item = u16> {
    0..=u16::MAX
}

fn is_nan_code(c: u16) -> bool {
    (c & 0x7C00) == 0x7C00 && (c & 0x03FF) != 0
}

/// The value of an f16 code from the IEEE 754 definition, independently of `half`.
fn value_of(c: u16) -> f64 {
    let sign = if c & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((c >> 10) & 0x1F);
    let man = f64::from(c & 0x03FF);
    match exp {
        0 => sign * man * 2f64.powi(-24),
        31 if man == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        e => sign * (1.0 + man / 1024.0) * 2f64.powi(e - 15),
    }
}

/// The encoders convert 12 ([`skin_pack::Mat3x4F16`]) and 8 ([`skin_pack::QtF16`]) values at a time.
fn batch(values: &[f32]) -> Vec<u16> {
    let mut out = Vec::with_capacity(values.len());
    let mut chunks12 = values.chunks_exact(12);
    for c in &mut chunks12 {
        out.extend(halves_from_f32::<12>(c.try_into().expect("12 values")));
    }
    for &v in chunks12.remainder() {
        out.extend(halves_from_f32::<1>(&[v]));
    }
    let mut out8 = Vec::with_capacity(values.len());
    let mut chunks8 = values.chunks_exact(8);
    for c in &mut chunks8 {
        out8.extend(halves_from_f32::<8>(c.try_into().expect("8 values")));
    }
    for &v in chunks8.remainder() {
        out8.extend(halves_from_f32::<1>(&[v]));
    }
    assert_eq!(out, out8, "the 12-wide and 8-wide batch conversions disagree");
    out
}

/// The stated f16 rounding error for a value within range: `max(2⁻¹¹·|x|, 2⁻²⁵)`.
fn stated_error(x: f64) -> f64 {
    (x.abs() / 2048.0).max(2f64.powi(-25))
}

#[test]
fn f16_to_f32_is_exact_for_every_code() {
    for c in codes() {
        let f = f16::from_bits(c).to_f32();
        let v = value_of(c);
        if is_nan_code(c) {
            assert!(f.is_nan(), "code {c:#06x} is NaN");
        } else {
            assert_eq!(f64::from(f), v, "code {c:#06x}");
            assert_eq!(f.is_sign_negative(), c & 0x8000 != 0, "sign of code {c:#06x}");
            assert_eq!(
                f16::from_bits(c).to_f32_const().to_bits(),
                f.to_bits(),
                "software path, code {c:#06x}"
            );
        }
    }
}

#[test]
fn shader_integer_decode_is_exact_for_every_code() {
    for c in codes() {
        let got = f16_bits_to_f32(u32::from(c));
        if is_nan_code(c) {
            assert!(got.is_nan(), "code {c:#06x}");
        } else {
            assert_eq!(f64::from(got), value_of(c), "code {c:#06x}");
            assert_eq!(got.to_bits(), f16::from_bits(c).to_f32().to_bits(), "code {c:#06x}");
            // Subnormal halves become normal f32 values, which no GPU flushes.
            assert!(got == 0.0 || got.is_normal() || got.is_infinite(), "code {c:#06x}");
        }
    }
}

#[test]
fn unpack2x16float_matches_the_definition_in_both_halves() {
    for c in codes() {
        // Every code appears once in the low half and once in the high half.
        let other = c.rotate_left(7) ^ 0x5A5A;
        for (word, lo, hi) in [
            (u32::from(c) | (u32::from(other) << 16), c, other),
            (u32::from(other) | (u32::from(c) << 16), other, c),
        ] {
            let [x, y] = unpack2x16float(word);
            // The shader's integer decode (mirrored line for line) gives the same bits.
            let [sx, sy] = unpack_halves(word);
            for (got, code) in [(x, lo), (y, hi), (sx, lo), (sy, hi)] {
                let want = f16::from_bits(code).to_f32();
                if is_nan_code(code) {
                    assert!(got.is_nan(), "word {word:#010x}");
                } else {
                    assert_eq!(got.to_bits(), want.to_bits(), "word {word:#010x}");
                }
            }
        }
    }
}

#[test]
fn every_code_round_trips_through_f32_scalar_and_batch() {
    let values: Vec<f32> = codes().map(|c| f16::from_bits(c).to_f32()).collect();
    let batched = batch(&values);
    for c in codes() {
        let f = values[usize::from(c)];
        let scalar = f16::from_f32(f).to_bits();
        let b = batched[usize::from(c)];
        if is_nan_code(c) {
            assert!(
                f16::from_bits(scalar).is_nan() && f16::from_bits(b).is_nan(),
                "code {c:#06x}"
            );
        } else {
            assert_eq!(scalar, c, "scalar f32 -> f16 of code {c:#06x}");
            assert_eq!(b, c, "batch f32 -> f16 of code {c:#06x}");
            assert_eq!(
                f16::from_f32_const(f).to_bits(),
                c,
                "software f32 -> f16 of code {c:#06x}"
            );
        }
    }
}

/// For every pair of adjacent finite codes of the same sign, the midpoint (exact in f32) rounds to the even
/// code, and the f32 values one ulp either side round to the nearer code; each result is within the stated error.
/// Rounding is monotonic, so these are the worst cases of every interval.
#[test]
fn rounding_is_to_nearest_even_within_the_stated_error_at_every_boundary() {
    let mut points = Vec::new();
    let mut expected = Vec::new();
    for c in codes() {
        let next = c.wrapping_add(1);
        // Adjacent finite magnitudes: c and c + 1 within one sign, below the infinity code.
        if c & 0x7FFF >= 0x7BFF {
            continue;
        }
        let (a, b) = (f16::from_bits(c).to_f32(), f16::from_bits(next).to_f32());
        let mid = ((f64::from(a) + f64::from(b)) / 2.0) as f32;
        assert_eq!(
            f64::from(mid),
            (f64::from(a) + f64::from(b)) / 2.0,
            "midpoint of {c:#06x} is exact"
        );
        let even = if c & 1 == 0 { c } else { next };
        // One f32 ulp towards a and towards b (magnitudes grow with the code within one sign).
        let toward_a = f32::from_bits(mid.to_bits() - 1);
        let toward_b = f32::from_bits(mid.to_bits() + 1);
        points.extend([mid, toward_a, toward_b]);
        expected.extend([even, c, next]);
    }
    let batched = batch(&points);
    for ((&x, &want), &b) in points.iter().zip(&expected).zip(&batched) {
        let scalar = f16::from_f32(x).to_bits();
        assert_eq!(scalar, want, "scalar rounding of {x:e}");
        // `from_f32_const` is `half`'s software path, the one CPUs without F16C take.
        assert_eq!(f16::from_f32_const(x).to_bits(), want, "software rounding of {x:e}");
        assert_eq!(b, want, "batch rounding of {x:e}");
        let err = (value_of(want) - f64::from(x)).abs();
        assert!(
            err <= stated_error(f64::from(x)),
            "rounding {x:e} to {want:#06x} errs by {err:e}, above max(2^-11 |x|, 2^-25)"
        );
    }
    // Each direction and each sign was covered: 2 × (0x7BFF) intervals, three points each.
    assert_eq!(points.len(), 2 * 0x7BFF * 3);
}

/// Above the largest finite half, values round to 65504 up to (not including) 65520 and to infinity from there:
/// this is why the encoders clamp to `F16_MAX` first.
#[test]
fn overflow_boundary() {
    assert_eq!(F16_MAX, f16::MAX.to_f32());
    let below = f32::from_bits(65520f32.to_bits() - 1);
    for x in [F16_MAX, below, -below] {
        let h = f16::from_f32(x);
        assert_eq!(h.to_f32().abs(), F16_MAX, "{x}");
        assert_eq!(halves_from_f32(&[x]), [h.to_bits()]);
    }
    for x in [65520.0f32, 1e6, -65520.0] {
        assert!(f16::from_f32(x).is_infinite(), "{x}");
        assert!(f16::from_bits(halves_from_f32(&[x])[0]).is_infinite(), "{x}");
    }
}
