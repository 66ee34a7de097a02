//! Conversion of a palette's rows to packed halves for the f16 formats' [`crate::PaletteFormat::encode_each`]: F16C
//! (`vcvtps2ph`, round to nearest even) inlined in a loop compiled with the `f16c` target feature, chosen at run
//! time, with `half`'s conversion one value at a time as the fallback.
//!
//! Both give the same bits as [`super::halves_from_f32_scalar`] for every finite input the encoders pass (clamped to
//! ±65504), which `tests/f16_exhaustive.rs` checks over all 65,536 codes and every rounding boundary.

use glam::Vec4;
use half::f16;

use super::pack;

/// For each entry `k` of `dst` (`N` packed pairs each), converts the `N` vectors `values(k)` to four halves each,
/// packed into two words `[(x, y), (z, w)]` with the first half in the low 16 bits, as WGSL's `unpack2x16float`
/// reads them. With F16C the whole loop, `values` included, runs in one function compiled with F16C.
#[inline]
pub fn encode_halves<const N: usize>(dst: &mut [[u32; 2]], mut values: impl FnMut(usize) -> [Vec4; N]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("f16c") {
        f16c::encode(dst, &mut values);
        return;
    }
    encode_halves_scalar(dst, values);
}

/// The plain twin of [`encode_halves`]: `half::f16::from_f32` one value at a time.
#[inline]
pub fn encode_halves_scalar<const N: usize>(dst: &mut [[u32; 2]], mut values: impl FnMut(usize) -> [Vec4; N]) {
    for (k, d) in dst.chunks_exact_mut(N).enumerate() {
        for (d, v) in d.iter_mut().zip(values(k)) {
            let h = v.to_array().map(|x| f16::from_f32(x).to_bits());
            *d = [pack(h[0], h[1]), pack(h[2], h[3])];
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(
    unsafe_code,
    reason = "calling F16C after run-time detection; loads and stores through references' pointers"
)]
mod f16c {
    use std::arch::x86_64::{__m128i, _MM_FROUND_TO_NEAREST_INT, _mm_cvtps_ph, _mm_loadu_ps, _mm_storel_epi64};

    use glam::Vec4;

    /// Calls [`encode_f16c`]; the caller has checked that the CPU has F16C.
    #[inline]
    pub(super) fn encode<const N: usize, F: FnMut(usize) -> [Vec4; N]>(dst: &mut [[u32; 2]], values: &mut F) {
        // SAFETY: the only caller checks `is_x86_feature_detected!("f16c")` first.
        unsafe { encode_f16c(dst, values) }
    }

    /// The conversion loop, compiled with F16C so that `vcvtps2ph` (and `values`) are inlined.
    #[target_feature(enable = "f16c")]
    unsafe fn encode_f16c<const N: usize, F: FnMut(usize) -> [Vec4; N]>(dst: &mut [[u32; 2]], values: &mut F) {
        for (k, d) in dst.chunks_exact_mut(N).enumerate() {
            for (d, v) in d.iter_mut().zip(values(k)) {
                // SAFETY: the load reads the 16 bytes of `v`, the store writes the 8 bytes of `*d` (a `&mut`;
                // `_mm_storel_epi64` needs no alignment); F16C and SSE2 are enabled on this function, which is only
                // called when the CPU has F16C.
                unsafe {
                    let h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm_loadu_ps(v.as_ref().as_ptr()));
                    _mm_storel_epi64(d.as_mut_ptr().cast::<__m128i>(), h);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{Affine3A, Mat4, Quat, Vec3, Vec3A};

    use super::*;
    use crate::{Mat3x4F16, PaletteFormat, QtF16};

    /// Encodes 150 matrices with `encode_each` (the F16C loop) and one at a time with `encode`.
    fn batch_equals_single<F: PaletteFormat + PartialEq + std::fmt::Debug>() {
        let origin = Vec3A::new(100.0, -3.0, 0.5);
        let matrices: Vec<Affine3A> = (0..150)
            .map(|i| {
                let a = i as f32 * 0.731;
                Affine3A::from_scale_rotation_translation(
                    Vec3::splat(0.5 + (i % 7) as f32 * 0.3),
                    Quat::from_euler(glam::EulerRot::YXZ, a, a.sin(), 2.0 * a.cos()),
                    Vec3::new(100.0 + a.sin() * 3.0, 70_000.0 * (i % 3) as f32, 1e-6 * i as f32),
                )
            })
            .collect();
        let rows: Vec<[Vec4; 3]> = matrices
            .iter()
            .map(|m| {
                let t = Mat4::from(*m).transpose();
                [t.x_axis, t.y_axis, t.z_axis]
            })
            .collect();
        let mut batched = vec![F::zeroed(); rows.len()];
        let poison = F::encode_each(&mut batched, origin, false, |k| rows[k]);
        assert_eq!(poison, Vec4::ZERO);
        for (i, m) in matrices.iter().enumerate() {
            assert_eq!(batched[i], F::encode(m, origin), "{} matrix {i}", F::NAME);
        }
    }

    #[test]
    fn batched_encoders_equal_single_encoders() {
        batch_equals_single::<Mat3x4F16>();
        batch_equals_single::<QtF16>();
    }

    #[test]
    fn fast_path_equals_the_scalar_twin_on_every_code_and_midpoint() {
        let mut values = Vec::new();
        for code in 0..=u16::MAX {
            let x = f16::from_bits(code);
            if x.is_nan() || x.is_infinite() {
                continue;
            }
            let x = x.to_f32();
            values.push(x);
            // The midpoint to the next code up, and one f32 ulp either side of it.
            let next = f16::from_bits(code.wrapping_add(1));
            if next.is_finite() && (next.to_f32() - x).abs() < 1e5 {
                let mid = (x + next.to_f32()) * 0.5;
                values.extend([
                    mid,
                    f32::from_bits(mid.to_bits() + 1),
                    f32::from_bits(mid.to_bits() - 1),
                ]);
            }
        }
        values.resize(values.len().next_multiple_of(4), 0.0);
        let src: Vec<Vec4> = values.chunks_exact(4).map(Vec4::from_slice).collect();
        let mut fast = vec![[0u32; 2]; src.len()];
        let mut plain = vec![[0u32; 2]; src.len()];
        encode_halves::<1>(&mut fast, |k| [src[k]]);
        encode_halves_scalar::<1>(&mut plain, |k| [src[k]]);
        for (i, (f, p)) in fast.iter().zip(&plain).enumerate() {
            assert_eq!(f, p, "vector {i} = {:?}", src[i]);
        }
    }
}
