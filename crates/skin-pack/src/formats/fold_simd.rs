//! AVX-512, AVX, F16C and FMA kernels for [`crate::FlattenJob`]'s cached palettes, chosen at run time.
//!
//! - [`mat3x4_run`]: a whole run of palettes (one rayon task) in one call, each palette's range check inlined and
//!   the instance transform's linear part read straight from the transform (a copy of it on the stack, read back
//!   with a wider load, stalled store forwarding on every palette: about 11% of the job's samples).
//!   - With AVX-512F (`mat3x4_kernel_avx512`): one joint per 512-bit register, its three rows broadcast from
//!     memory to the four 128-bit lanes and multiplied by the fold's coefficients by row (the last lane unused),
//!     one `vcvtps2ph` per joint, and eight joints (192 bytes) packed into three cache lines with two-source
//!     permutes.
//!   - Otherwise (`mat3x4_kernel`): two joints per iteration in 256-bit registers
//!     (`[row r of joint k | row r of joint k+1]`), then `vcvtps2ph` and three 16-byte stores per pair.
//!   - Both compute each row as `e₀·S₀ + (e₁·S₁ + e₂·S₂)` with the outer two operations fused, as the portable
//!     twin does (`Fold::apply_relative` in `flatten.rs`), so the bits are identical.
//! - [`qt`]: sixteen joints per iteration from the cache's structure-of-arrays blocks (see `qt_f16.rs`): the
//!   quaternion product and the translation's rotation with fused multiply-adds, and the scale product, lane-wise
//!   in the order of the scalar twin `QtFold::apply` (whose `mul_add` rounds the same way); then `vcvtps2ph` of each
//!   component and an 8 × 8 transpose of halves in both 128-bit lanes, which leaves two neighbouring entries per
//!   256-bit register. Where the CPU also has AVX-512F, each component of a block's sixteen joints is one 512-bit
//!   register (`qt_kernel_avx512`), with the same single roundings, so the same bits; a whole run of palettes is
//!   then one call ([`qt_run_avx512`]: the instance folds sixteen at a time and the block loop inlined into the
//!   palette loop).
//! - [`entry`] (one palette) and [`entry_run`] (a whole run in one call, like `mat3x4_run`): the f32
//!   [`PaletteEntry`] with the instance transform folded in, each row
//!   `T[r][0]·S₀ + (T[r][1]·S₁ + (T[r][2]·S₂ + t_r))` in three fused multiply-adds, as the twin does
//!   (`Fold::apply_fused` in `flatten.rs`), so the bits are identical.
//!   - With AVX-512F (`entry_kernel_avx512`): one joint per 512-bit register as in the Mat3x4F16 kernel, and four
//!     joints (192 bytes) packed into three cache lines with one permute each.
//!   - Otherwise (`entry_kernel`): two joints (96 bytes, three 256-bit registers) per iteration: each register
//!     holds two rows, and the rows `S_c` are broadcast or paired straight from memory, so it needs no shuffles.
//!
//! Why one joint per 512-bit register: the separate multiplies and adds, and the pairing of rows across joints,
//! made the AVX kernels instruction-bound (about 27 vector instructions per pair of Mat3x4F16 joints, 13.5 per
//! joint, against about 8 per joint here: three broadcast loads, three multiply-adds, one conversion and a share of
//! the packing and stores). On the development VM (Intel, family 6 model 207, 2 vCPUs), in three bench runs
//! alternating the binaries before and after this change, `skin_pack.mat3x4_f16_vs_memcpy` went from 0.69, 0.67
//! and 0.61 to 0.79, 0.97 and 0.94, and `skin_pack.flatten_f32_vs_memcpy` from 1.10, 1.41 and 1.21 to 1.11, 1.32
//! and 1.32. (On two threads in a standalone probe, with its stores going to a scratch line that stays in L1, the
//! f32 kernel took 0.53–0.66 ms for the bench's 10,000 palettes, against 0.82–0.98 ms for 512-bit streaming stores
//! of the same 30.7 MB with no arithmetic, and 1.05–1.23 ms for both: the f32 job is bound by its stores.)
//!
//! `mat3x4_run` and `entry` need AVX, F16C and FMA (and AVX-512F and AVX2 for their wide kernels), and `qt` AVX2,
//! F16C and FMA (and AVX-512F and AVX-512BW for its wide kernel). All write with non-temporal stores when asked and
//! the destination is aligned:
//! - the AVX-512 kernels from the first cache line boundary, reached by storing up to seven (Mat3x4F16) or three
//!   (f32) single joints with masked stores first;
//! - `mat3x4_kernel` from a 16-byte boundary, `qt` from a cache line (its AVX-512 kernel one whole line per store);
//! - `entry_kernel` streams its pairs from a 32-byte boundary and a leading or trailing single joint from a
//!   16-byte one.
//!
//! `entry_kernel` and `qt` avoid 32-byte stores that straddle cache lines with either kind of store (`entry_kernel`
//! writes one joint first from 16 bytes past a 32-byte boundary; `qt` stores single entries there). The callers
//! check [`available`] or [`qt_available`], and that every value is in range (f16 for `mat3x4_run` and `qt`, so no
//! clamp is needed: in range, clamping changes nothing; no overflow for `entry`); `mat3x4_run` checks the range
//! itself, palette by palette.

#![allow(
    unsafe_code,
    reason = "AVX/F16C intrinsics after run-time detection, with loads and stores through checked pointers"
)]

use std::arch::x86_64::{
    __m128, __m128i, __m256, __m256i, __m512, __m512i, __mmask16, _MM_FROUND_TO_NEAREST_INT, _mm_castpd_si128,
    _mm_castsi128_pd, _mm_cvtps_ph, _mm_cvtsi128_si32, _mm_fmadd_ps, _mm_loadu_ps, _mm_mul_ps, _mm_set1_ps,
    _mm_setr_ps, _mm_shuffle_pd, _mm_store_si128, _mm_storel_epi64, _mm_storeu_ps, _mm_storeu_si128, _mm_stream_ps,
    _mm_stream_si128, _mm_unpackhi_epi64, _mm_unpacklo_epi64, _mm256_and_ps, _mm256_broadcast_ps,
    _mm256_castsi256_si128, _mm256_cmpgt_epi32, _mm256_cvtps_ph, _mm256_extracti128_si256, _mm256_fmadd_ps,
    _mm256_loadu_ps, _mm256_loadu2_m128, _mm256_maskstore_epi32, _mm256_mul_ps, _mm256_set_m128i, _mm256_set1_epi16,
    _mm256_set1_epi32, _mm256_set1_ps, _mm256_setr_epi32, _mm256_setr_ps, _mm256_storeu_ps, _mm256_storeu_si256,
    _mm256_stream_ps, _mm256_stream_si256, _mm256_unpackhi_epi16, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64,
    _mm256_unpacklo_epi16, _mm256_unpacklo_epi32, _mm256_unpacklo_epi64, _mm256_xor_ps, _mm512_add_ps,
    _mm512_and_si512, _mm512_broadcast_f32x4, _mm512_castps_si512, _mm512_castps128_ps512, _mm512_castsi256_si512,
    _mm512_castsi512_ps, _mm512_cvtps_ph, _mm512_fmadd_ps, _mm512_fnmadd_ps, _mm512_inserti64x4, _mm512_loadu_ps,
    _mm512_mask_storeu_epi32, _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_maskz_permutexvar_ps, _mm512_max_ps,
    _mm512_mul_ps, _mm512_permutex2var_epi32, _mm512_permutex2var_epi64, _mm512_permutex2var_ps,
    _mm512_permutexvar_epi64, _mm512_permutexvar_ps, _mm512_reduce_add_ps, _mm512_reduce_max_ps, _mm512_set1_epi32,
    _mm512_set1_ps, _mm512_setr_epi32, _mm512_setr_epi64, _mm512_setzero_ps, _mm512_store_ps, _mm512_store_si512,
    _mm512_storeu_ps, _mm512_storeu_si512, _mm512_stream_ps, _mm512_stream_si512, _mm512_ternarylogic_epi32,
    _mm512_unpackhi_epi16, _mm512_unpackhi_epi32, _mm512_unpacklo_epi16, _mm512_unpacklo_epi32,
};

use glam::Vec4;

use super::qt_f16::{QT_BLOCK, QT_BLOCK_FLOATS, QtFold};
use crate::{Mat3x4F16, PaletteEntry, QtF16};

/// Whether the CPU has what [`mat3x4_run`] and [`entry`] use (AVX, F16C and FMA; the detection is cached by the
/// standard library).
#[inline]
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx")
        && std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("fma")
}

/// Whether the CPU has what [`qt`] uses: AVX2, F16C and FMA.
#[inline]
pub fn qt_available() -> bool {
    available() && std::arch::is_x86_feature_detected!("avx2")
}

/// Whether [`mat3x4_run`] and [`entry`] can take their AVX-512 kernels: [`available`], and AVX-512F and AVX2.
#[inline]
fn wide_available() -> bool {
    available() && std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("avx512f")
}

/// Defines `$name(wide, out, skin_joints, order, pose, transforms, stream)`, which runs the palette loop `$body` (an
/// `#[inline(always)]` function generic over `WIDE`) inside a `#[target_feature]` function: with AVX-512F, AVX2,
/// F16C and FMA when `wide`, with AVX, F16C and FMA otherwise, so that the loop and its kernel are compiled, and
/// inlined, with those features.
///
/// `$name` is unsafe: the CPU must have AVX, F16C and FMA, and AVX-512F and AVX2 when `wide`.
macro_rules! run_with_features {
    ($name:ident, $entry:ty, $body:ident) => {
        /// See `run_with_features`.
        unsafe fn $name<'a>(
            wide: bool,
            out: &mut [$entry],
            skin_joints: usize,
            order: &[u16],
            pose: &impl crate::flatten::PoseSource<'a>,
            transforms: &[glam::Affine3A],
            stream: bool,
        ) -> Vec4 {
            #[target_feature(enable = "avx512f,avx2,f16c,fma")]
            unsafe fn wide_loop<'a>(
                out: &mut [$entry],
                skin_joints: usize,
                order: &[u16],
                pose: &impl crate::flatten::PoseSource<'a>,
                transforms: &[glam::Affine3A],
                stream: bool,
            ) -> Vec4 {
                // SAFETY: the CPU has the features this function enables (the caller's contract).
                unsafe { $body::<true>(out, skin_joints, order, pose, transforms, stream) }
            }
            #[target_feature(enable = "avx,f16c,fma")]
            unsafe fn narrow_loop<'a>(
                out: &mut [$entry],
                skin_joints: usize,
                order: &[u16],
                pose: &impl crate::flatten::PoseSource<'a>,
                transforms: &[glam::Affine3A],
                stream: bool,
            ) -> Vec4 {
                // SAFETY: the CPU has the features this function enables (the caller's contract).
                unsafe { $body::<false>(out, skin_joints, order, pose, transforms, stream) }
            }
            // SAFETY: the CPU has what each loop enables (the caller's contract).
            unsafe {
                if wide {
                    wide_loop(out, skin_joints, order, pose, transforms, stream)
                } else {
                    narrow_loop(out, skin_joints, order, pose, transforms, stream)
                }
            }
        }
    };
}

/// Encodes `rows[k]`, or `e × rows[k]` (each row `e[r][0]·S₀ + (e[r][1]·S₁ + e[r][2]·S₂)`, the outer operations
/// fused, `e[r][c]` being row `r` and column `c` of the 3×3 matrix) when `e` is given, into `out[k]` for every
/// `k < out.len()`, with the AVX-512 kernel when `wide`, the AVX one otherwise.
///
/// # Panics
///
/// When the CPU lacks the kernel's features or `rows` is shorter than `out` (both are the caller's bugs).
#[cfg(test)]
pub fn mat3x4(wide: bool, e: Option<&glam::Mat3A>, rows: &[[Vec4; 3]], out: &mut [Mat3x4F16], stream: bool) {
    assert!(available() && rows.len() >= out.len(), "checked by the caller");
    assert!(!wide || wide_available(), "checked by the caller");
    let m = e.unwrap_or(&glam::Mat3A::ZERO);
    // SAFETY: the CPU has AVX, F16C and FMA, and AVX-512F and AVX2 when `wide` (asserted); `rows` covers `out`.
    unsafe {
        match (wide, e.is_some()) {
            (true, true) => mat3x4_kernel_avx512::<true>(m, rows, out, stream),
            (true, false) => mat3x4_kernel_avx512::<false>(m, rows, out, stream),
            (false, true) => mat3x4_kernel::<true>(m, rows, out, stream),
            (false, false) => mat3x4_kernel::<false>(m, rows, out, stream),
        }
    }
}

/// Encodes a run of cached palettes into `out` as [`crate::Mat3x4F16`]'s `encode_cached_run` specifies: palette
/// `i` (`skin_joints` entries) from `pose.pose(i)`, folded by `transforms[i]` when `transforms` is not empty. Each
/// palette whose values stay in the f16 range (`‖L_T‖∞ · max|S| ≤ 65000`, false for NaN) goes through the AVX
/// kernel, inlined here with its setup; the others take the portable path, which clamps and reports. Returns the
/// poison sum of the portable palettes (zero when none).
///
/// # Panics
///
/// When [`available`] is false (the caller's bug).
pub fn mat3x4_run<'a>(
    out: &mut [Mat3x4F16],
    skin_joints: usize,
    order: &[u16],
    pose: &impl crate::flatten::PoseSource<'a>,
    transforms: &[glam::Affine3A],
    stream: bool,
) -> Vec4 {
    assert!(available(), "checked by the caller");
    // SAFETY: the CPU has AVX, F16C and FMA (asserted), and AVX-512F and AVX2 for the wide kernel.
    unsafe { mat3x4_run_loop(wide_available(), out, skin_joints, order, pose, transforms, stream) }
}

run_with_features!(mat3x4_run_loop, Mat3x4F16, mat3x4_run_body);

/// The palette loop of [`mat3x4_run`], with the AVX-512 kernel when `WIDE`; inlined into `mat3x4_run_loop`'s two
/// loops (`run_with_features`), which enable the features of their kernel.
///
/// # Safety
///
/// The CPU has AVX, F16C and FMA, and AVX-512F and AVX2 when `WIDE`.
#[inline(always)]
unsafe fn mat3x4_run_body<'a, const WIDE: bool>(
    out: &mut [Mat3x4F16],
    skin_joints: usize,
    order: &[u16],
    pose: &impl crate::flatten::PoseSource<'a>,
    transforms: &[glam::Affine3A],
    stream: bool,
) -> Vec4 {
    let mut acc = Vec4::ZERO;
    if skin_joints == 0 {
        return acc;
    }
    for &i in order {
        let i = usize::from(i);
        let palette = crate::flatten::palette_mut(out, skin_joints, i);
        let pose = pose.pose(i);
        let t = transforms.get(i);
        let rows = &pose.rows[..palette.len()];
        // `‖L_T‖∞ · max|S| ≤ 65000`, false for NaN: a non-finite transform takes the portable path, whose poison
        // reports it. (The kernel reads `T` itself, not these rows.)
        let grow = t.map_or(1.0, |t| super::qt_f16::norm_inf(&super::linear_rows(&t.matrix3)));
        let in_range = grow * pose.max_abs <= super::qt_f16::FOLD_SAFE_MAX;
        if !in_range {
            acc += super::mat3x4_f16::encode_cached_portable(pose, t, palette, stream);
            continue;
        }
        // SAFETY: the CPU has the kernel's features (the caller's contract), and `rows` covers `palette`; the grouped
        // kernel gets a palette on a line and the pose's groups (checked here).
        unsafe {
            match (WIDE, t) {
                (true, None) => mat3x4_kernel_avx512::<false>(&glam::Mat3A::ZERO, rows, palette, stream),
                (true, Some(t))
                    if (palette.as_ptr() as usize).is_multiple_of(64)
                        && pose.aux.len() >= super::mat3x4_cached_floats(palette.len()) =>
                {
                    mat3x4_kernel_grouped(&t.matrix3, pose.aux, rows, palette, stream);
                }
                (true, Some(t)) => mat3x4_kernel_avx512::<true>(&t.matrix3, rows, palette, stream),
                (false, None) => mat3x4_kernel::<false>(&glam::Mat3A::ZERO, rows, palette, stream),
                (false, Some(t)) => mat3x4_kernel::<true>(&t.matrix3, rows, palette, stream),
            }
        }
    }
    acc
}

/// One joint of [`mat3x4_kernel`] with 128-bit registers: three `vcvtps2ph` and three 8-byte stores.
///
/// # Safety
///
/// The CPU has AVX, F16C and FMA; `src` points to 12 readable floats and `dst` to 24 writable bytes.
#[inline]
#[target_feature(enable = "avx,f16c,fma")]
unsafe fn mat3x4_one<const FOLD: bool>(m: &glam::Mat3A, src: *const f32, dst: *mut u8) {
    // SAFETY: as the function's contract states.
    unsafe {
        let s = [_mm_loadu_ps(src), _mm_loadu_ps(src.add(4)), _mm_loadu_ps(src.add(8))];
        for r in 0..3 {
            let e = [m.x_axis[r], m.y_axis[r], m.z_axis[r]];
            let v = if FOLD {
                let c = _mm_mul_ps(_mm_set1_ps(e[2]), s[2]);
                _mm_fmadd_ps(_mm_set1_ps(e[0]), s[0], _mm_fmadd_ps(_mm_set1_ps(e[1]), s[1], c))
            } else {
                s[r]
            };
            let h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v);
            _mm_storel_epi64(dst.add(8 * r).cast::<__m128i>(), h);
        }
    }
}

/// The AVX kernel of [`mat3x4_run`] (and of the test helper `mat3x4`), for CPUs without AVX-512.
///
/// # Safety
///
/// The CPU has AVX, F16C and FMA, and `rows.len() >= out.len()`.
#[inline]
#[target_feature(enable = "avx,f16c,fma")]
unsafe fn mat3x4_kernel<const FOLD: bool>(m: &glam::Mat3A, rows: &[[Vec4; 3]], out: &mut [Mat3x4F16], stream: bool) {
    let n = out.len();
    let src = rows.as_ptr().cast::<f32>();
    let dst = out.as_mut_ptr().cast::<u8>();
    // `eᵣ[c]` is the linear part's row `r`, column `c`, broadcast straight from the matrix (which the caller
    // reads from memory), not through a copy on the stack.
    let splat = |r: usize| [m.x_axis[r], m.y_axis[r], m.z_axis[r]].map(|x| _mm256_set1_ps(x));
    let (e0, e1, e2) = (splat(0), splat(1), splat(2));
    // The twin's order: e₀·S₀ + (e₁·S₁ + e₂·S₂), the outer two fused.
    let row = |e: &[__m256; 3], s0: __m256, s1: __m256, s2: __m256| {
        _mm256_fmadd_ps(e[0], s0, _mm256_fmadd_ps(e[1], s1, _mm256_mul_ps(e[2], s2)))
    };
    let mut k = 0;
    // A destination 8 bytes past a 16-byte boundary becomes aligned after one joint (24 bytes).
    if stream && n > 0 && dst as usize % 16 == 8 {
        // SAFETY: joint 0 exists; its 12 floats and 24 bytes are inside `rows` and `out`.
        unsafe { mat3x4_one::<FOLD>(m, src, dst) };
        k = 1;
    }
    // SAFETY: `k < n`, or `dst + 24·n` is one past the end of `out`.
    let stream = stream && (unsafe { dst.add(24 * k) } as usize).is_multiple_of(16);
    while k + 2 <= n {
        // SAFETY: joints `k` and `k + 1` are inside `rows` (24 floats from `src + 12k`) and `out` (48 bytes from
        // `dst + 24k`, 16-byte aligned when `stream`); the CPU has AVX, F16C and SSE2.
        unsafe {
            let p = src.add(12 * k);
            let s0 = _mm256_loadu2_m128(p.add(12), p);
            let s1 = _mm256_loadu2_m128(p.add(16), p.add(4));
            let s2 = _mm256_loadu2_m128(p.add(20), p.add(8));
            let (r0, r1, r2) = if FOLD {
                (row(&e0, s0, s1, s2), row(&e1, s0, s1, s2), row(&e2, s0, s1, s2))
            } else {
                (s0, s1, s2)
            };
            // Each `hᵣ` is `[row r of joint k | row r of joint k + 1]` as four halves each.
            let h0 = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r0);
            let h1 = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r1);
            let h2 = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(r2);
            let o0 = _mm_unpacklo_epi64(h0, h1);
            let o1 = _mm_castpd_si128(_mm_shuffle_pd::<0b10>(_mm_castsi128_pd(h2), _mm_castsi128_pd(h0)));
            let o2 = _mm_unpackhi_epi64(h1, h2);
            let q = dst.add(24 * k).cast::<__m128i>();
            if stream {
                _mm_stream_si128(q, o0);
                _mm_stream_si128(q.add(1), o1);
                _mm_stream_si128(q.add(2), o2);
            } else {
                _mm_storeu_si128(q, o0);
                _mm_storeu_si128(q.add(1), o1);
                _mm_storeu_si128(q.add(2), o2);
            }
        }
        k += 2;
    }
    if k < n {
        // SAFETY: joint `k` is the last one, inside `rows` and `out`.
        unsafe { mat3x4_one::<FOLD>(m, src.add(12 * k), dst.add(24 * k)) };
    }
}

/// The coefficients of a fold with AVX-512, one joint per 512-bit register: register `c` holds column `c` of the
/// 3×3 matrix `m` by row, `m[r][c]` (row `r`, column `c`) in lanes `4r..4r + 4` (lanes 12 to 15 take the column's
/// padding lane and are never stored). Multiplied by row `c` of a joint broadcast to all four 128-bit lanes, it
/// gives that row's share of the joint's three folded rows at once. Each register is one load and one `vpermps` of
/// the column (building them from the nine scalars took about forty instructions per palette).
///
/// # Safety
///
/// The CPU has AVX-512F. (Not a `#[target_feature]` function, so that it inlines into the kernels.)
#[inline(always)]
unsafe fn columns_by_row(m: &glam::Mat3A) -> [__m512; 3] {
    // SAFETY: the CPU has AVX-512F (the caller's contract).
    unsafe { [spread(&m.x_axis), spread(&m.y_axis), spread(&m.z_axis)] }
}

/// `v`'s lane `r` in lanes `4r..4r + 4` (lanes 12 to 15 take `v`'s padding lane), with one load and one `vpermps`.
///
/// # Safety
///
/// The CPU has AVX-512F. (Not a `#[target_feature]` function, so that it inlines into the kernels.)
#[inline(always)]
unsafe fn spread(v: &glam::Vec3A) -> __m512 {
    // SAFETY: the CPU has AVX-512F (the caller's contract); a `Vec3A` is 16 readable bytes (its fourth lane padding).
    unsafe {
        let spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
        _mm512_permutexvar_ps(
            spread,
            _mm512_castps128_ps512(_mm_loadu_ps(std::ptr::from_ref(v).cast())),
        )
    }
}

/// `(0, 0, 0, t_r)` in lanes `4r..4r + 4` and zero in lanes 12 to 15: the translation's share of a joint's three
/// folded rows, with one load and one zero-masked `vpermps`.
///
/// # Safety
///
/// The CPU has AVX-512F. (Not a `#[target_feature]` function, so that it inlines into the kernels.)
#[inline(always)]
unsafe fn translation_lanes(t: &glam::Vec3A) -> __m512 {
    // SAFETY: the CPU has AVX-512F (the caller's contract); a `Vec3A` is 16 readable bytes.
    unsafe {
        let spread = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
        _mm512_maskz_permutexvar_ps(
            0x0888,
            spread,
            _mm512_castps128_ps512(_mm_loadu_ps(std::ptr::from_ref(t).cast())),
        )
    }
}

/// The four floats at `src` in each of the four 128-bit lanes, with one broadcast load.
///
/// # Safety
///
/// The CPU has AVX-512F; `src` points to 4 readable floats. (Not a `#[target_feature]` function, so that it inlines
/// into the kernels.)
#[inline(always)]
unsafe fn broadcast_row(src: *const f32) -> __m512 {
    // SAFETY: as the function's contract states.
    unsafe { _mm512_broadcast_f32x4(_mm_loadu_ps(src)) }
}

/// One joint's three folded rows, `e[r][0]·S₀ + (e[r][1]·S₁ + (e[r][2]·S₂ + add_r))` in lanes `4r..4r + 4` (the
/// twin's order and roundings; lanes 12 to 15 are `add`'s), from its rows `S` at `src`, broadcast from memory.
///
/// # Safety
///
/// The CPU has AVX-512F and FMA; `src` points to 12 readable floats. (Not a `#[target_feature]` function, so that
/// it inlines into the kernels.)
#[inline(always)]
unsafe fn fold_joint(c: &[__m512; 3], add: __m512, src: *const f32) -> __m512 {
    // SAFETY: as the function's contract states.
    unsafe {
        let (s0, s1, s2) = (broadcast_row(src), broadcast_row(src.add(4)), broadcast_row(src.add(8)));
        _mm512_fmadd_ps(c[0], s0, _mm512_fmadd_ps(c[1], s1, _mm512_fmadd_ps(c[2], s2, add)))
    }
}

/// One [`Mat3x4F16`] entry as six 32-bit words of halves (the low six of the register): the joint's rows at `src`,
/// folded by the coefficients `c` when `FOLD`.
///
/// # Safety
///
/// The CPU has AVX-512F, F16C and FMA; `src` points to 12 readable floats. (Not a `#[target_feature]` function, so
/// that it inlines into the kernel.)
#[inline(always)]
unsafe fn mat3x4_joint<const FOLD: bool>(c: &[__m512; 3], src: *const f32) -> __m256i {
    // SAFETY: as the function's contract states; the masked load reads only the joint's 12 floats.
    unsafe {
        let v = if FOLD {
            // e₀·S₀ + (e₁·S₁ + e₂·S₂): the innermost product alone, as the twin's `e₂ · S₂`.
            let (s0, s1, s2) = (broadcast_row(src), broadcast_row(src.add(4)), broadcast_row(src.add(8)));
            _mm512_fmadd_ps(c[0], s0, _mm512_fmadd_ps(c[1], s1, _mm512_mul_ps(c[2], s2)))
        } else {
            _mm512_maskz_loadu_ps(0x0fff, src)
        };
        _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v)
    }
}

/// Joint `k` on its own: [`mat3x4_joint`] of the rows at `src + 12k`, stored into its 24 bytes at `dst + 24k` with a
/// masked store of the register's low six words (for the joints before a kernel's first line and after its last
/// whole group).
///
/// # Safety
///
/// The CPU has AVX-512F, AVX2, F16C and FMA; joint `k` is inside `src` (12 floats) and `dst` (24 bytes). (Not a
/// `#[target_feature]` function, so that it inlines into the kernels.)
#[inline(always)]
unsafe fn mat3x4_single<const FOLD: bool>(c: &[__m512; 3], src: *const f32, dst: *mut u8, k: usize) {
    // SAFETY: as the function's contract states.
    unsafe {
        let six = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
        _mm256_maskstore_epi32(
            dst.add(24 * k).cast::<i32>(),
            six,
            mat3x4_joint::<FOLD>(c, src.add(12 * k)),
        );
    }
}

/// The AVX-512 kernel of [`mat3x4_run`] (and of the test helper `mat3x4`): each joint's three folded rows in one
/// 512-bit register (its rows broadcast from memory to the four 128-bit lanes, the fold's coefficients by row, the
/// last lane unused), converted with one `vcvtps2ph`; eight joints' six words each are then packed into three
/// 512-bit registers (two `vpermt2d` each pair of joints shares), 192 bytes, and stored as three cache lines,
/// streamed when asked. Joints before the first line boundary (when the output is 8-byte aligned, at most seven)
/// and after the last whole group of eight are stored one by one with a masked store.
///
/// The products are the twin's (`Fold::apply_relative` in `flatten.rs`), fused in the same order, so the bits are
/// the same. Without AVX-512, the measured alternative was [`mat3x4_kernel`]: this kernel issues about half its
/// vector instructions per joint. [`mat3x4_run`] takes [`mat3x4_kernel_grouped`] instead for a folded palette that
/// starts on a line (every palette of an output on a line whose palettes are whole lines), and this kernel for the
/// rest: palettes in model space, and placements that the grouped kernel's lines do not fit.
///
/// # Safety
///
/// The CPU has AVX-512F, AVX2, F16C and FMA, and `rows.len() >= out.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx2,f16c,fma")]
unsafe fn mat3x4_kernel_avx512<const FOLD: bool>(
    m: &glam::Mat3A,
    rows: &[[Vec4; 3]],
    out: &mut [Mat3x4F16],
    stream: bool,
) {
    let n = out.len();
    let src = rows.as_ptr().cast::<f32>();
    let dst = out.as_mut_ptr().cast::<u8>();
    // SAFETY: the CPU has AVX-512F (the caller's contract).
    let c = unsafe { columns_by_row(m) };
    // `pair(j)` is `[joint j: words 0..6, junk ×2 | joint j + 1: words 0..6, junk ×2]`; each 16-word line takes its
    // words from two neighbouring pairs.
    let line0 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19);
    let line1 = _mm512_setr_epi32(4, 5, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21, 24, 25);
    let line2 = _mm512_setr_epi32(10, 11, 12, 13, 16, 17, 18, 19, 20, 21, 24, 25, 26, 27, 28, 29);
    let mut k = 0;
    // From a multiple of 8 bytes, at most seven joints (24 bytes each) reach a cache line.
    if (dst as usize).is_multiple_of(8) {
        // SAFETY: `k < n`, so `dst + 24k` is inside `out`.
        while k < n && !(unsafe { dst.add(24 * k) } as usize).is_multiple_of(64) {
            // SAFETY: joint `k` is inside `rows` (12 floats) and `out` (24 bytes); the CPU has the kernel's features.
            unsafe { mat3x4_single::<FOLD>(&c, src, dst, k) };
            k += 1;
        }
    }
    // SAFETY: `k <= n`, so `dst + 24k` is inside `out` or one past its end.
    let aligned = (unsafe { dst.add(24 * k) } as usize).is_multiple_of(64);
    let stream = stream && aligned;
    while k + 8 <= n {
        // SAFETY: joints `k..k + 8` are inside `rows` (96 floats from `src + 12k`) and `out` (192 bytes from
        // `dst + 24k`, 64-byte aligned when `aligned`); the CPU has AVX-512F, F16C and FMA.
        unsafe {
            let p = src.add(12 * k);
            let pair = |j: usize| {
                let lo = mat3x4_joint::<FOLD>(&c, p.add(12 * j));
                let hi = mat3x4_joint::<FOLD>(&c, p.add(12 * (j + 1)));
                _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi)
            };
            let (a, b, d, e) = (pair(0), pair(2), pair(4), pair(6));
            let o = [
                _mm512_permutex2var_epi32(a, line0, b),
                _mm512_permutex2var_epi32(b, line1, d),
                _mm512_permutex2var_epi32(d, line2, e),
            ];
            let q = dst.add(24 * k).cast::<__m512i>();
            for (l, &line) in o.iter().enumerate() {
                if stream {
                    _mm512_stream_si512(q.add(l), line);
                } else if aligned {
                    _mm512_store_si512(q.add(l), line);
                } else {
                    _mm512_storeu_si512(q.add(l), line);
                }
            }
        }
        k += 8;
    }
    while k < n {
        // SAFETY: joint `k` is inside `rows` and `out`; the CPU has the kernel's features.
        unsafe { mat3x4_single::<FOLD>(&c, src, dst, k) };
        k += 1;
    }
}

/// The AVX-512 kernel of [`mat3x4_run`] for a folded palette that starts on a cache line, from the pose's rows
/// regrouped by four joints (`groups`, [`crate::Mat3x4F16`]'s per-pose cache data): each group's folded row `r` is
/// one 512-bit register, `e[r][0]·Z₀ + (e[r][1]·Z₁ + e[r][2]·Z₂)` with `Z_c` row `c` of its four joints (one load)
/// and `e[r][c]` broadcast, so no lane is unused: per eight joints 18 FMAs, 6 `vcvtps2ph`, 3 inserts and 4
/// permutes of 64-bit words into three lines, against 24, 8, 4 and 3 for [`mat3x4_kernel_avx512`]'s joint per
/// register (which wastes a lane). Joints after the last whole group of eight take [`mat3x4_joint`] and a masked
/// store. The products are the twin's, in its order, so the bits are the same. On the development VM (the bench's
/// Mat3x4F16 crowd, streaming, 2 threads, five series of 80 runs alternating in one process) the run took
/// 0.84–0.89 of its time with the joint-per-register kernel.
///
/// # Safety
///
/// The CPU has AVX-512F, AVX2, F16C and FMA; `out` starts on a 64-byte boundary; `rows.len() >= out.len()`, and
/// `groups` holds at least `out.len() / 8 * 8` joints' groups (12 floats per joint).
#[inline]
#[target_feature(enable = "avx512f,avx2,f16c,fma")]
unsafe fn mat3x4_kernel_grouped(
    m: &glam::Mat3A,
    groups: &[f32],
    rows: &[[Vec4; 3]],
    out: &mut [Mat3x4F16],
    stream: bool,
) {
    /// One group's three folded rows `r`, `e[r][0]·Z₀ + (e[r][1]·Z₁ + e[r][2]·Z₂)`, as halves: four joints' row
    /// `r` per 256-bit register, 8 bytes each.
    #[inline(always)]
    unsafe fn group(e: &[[__m512; 3]; 3], z: *const f32) -> [__m256i; 3] {
        // SAFETY: the CPU has AVX-512F, F16C and FMA, and `z` points to a group's 48 floats (the caller's
        // contract).
        unsafe {
            let z = [
                _mm512_loadu_ps(z),
                _mm512_loadu_ps(z.add(16)),
                _mm512_loadu_ps(z.add(32)),
            ];
            let row = |e: &[__m512; 3]| {
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm512_fmadd_ps(
                    e[0],
                    z[0],
                    _mm512_fmadd_ps(e[1], z[1], _mm512_mul_ps(e[2], z[2])),
                ))
            };
            [row(&e[0]), row(&e[1]), row(&e[2])]
        }
    }
    let n = out.len();
    let dst = out.as_mut_ptr().cast::<u8>();
    debug_assert!((dst as usize).is_multiple_of(64), "checked by the caller");
    assert!(
        rows.len() >= n && groups.len() >= n / 8 * 8 * 12,
        "checked by the caller"
    );
    let e = [
        [
            _mm512_set1_ps(m.x_axis.x),
            _mm512_set1_ps(m.y_axis.x),
            _mm512_set1_ps(m.z_axis.x),
        ],
        [
            _mm512_set1_ps(m.x_axis.y),
            _mm512_set1_ps(m.y_axis.y),
            _mm512_set1_ps(m.z_axis.y),
        ],
        [
            _mm512_set1_ps(m.x_axis.z),
            _mm512_set1_ps(m.y_axis.z),
            _mm512_set1_ps(m.z_axis.z),
        ],
    ];
    // With `a` = rows 0 and 1 of joints 0..4 and `b` the same of joints 4..8 (64-bit words 0..4 and 4..8), and `r2`
    // = row 2 of joints 0..4 and 4..8: each line's eight words, from two registers (indices 8.. name the second).
    let line0 = _mm512_setr_epi64(0, 4, 8, 1, 5, 9, 2, 6);
    let line1_r2_a = _mm512_setr_epi64(2, 11, 15, 3, 0, 0, 4, 0);
    let line1_b = _mm512_setr_epi64(0, 1, 2, 3, 8, 12, 6, 9);
    let line2 = _mm512_setr_epi64(5, 13, 2, 6, 14, 3, 7, 15);
    let mut k = 0;
    while k + 8 <= n {
        // SAFETY: joints `k..k + 8` have their groups in `groups` (96 floats from `12k`, `k` a multiple of 8) and
        // their 192 bytes in `out` from `dst + 24k`, on a line (`dst` is); the CPU has AVX-512F, F16C and FMA.
        unsafe {
            let g = groups.as_ptr().add(12 * k);
            let (lo, hi) = (group(&e, g), group(&e, g.add(48)));
            let a = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo[0]), lo[1]);
            let b = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(hi[0]), hi[1]);
            let r2 = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo[2]), hi[2]);
            let o = [
                _mm512_permutex2var_epi64(a, line0, r2),
                _mm512_permutex2var_epi64(_mm512_permutex2var_epi64(r2, line1_r2_a, a), line1_b, b),
                _mm512_permutex2var_epi64(b, line2, r2),
            ];
            let q = dst.add(24 * k).cast::<__m512i>();
            for (l, &line) in o.iter().enumerate() {
                if stream {
                    _mm512_stream_si512(q.add(l), line);
                } else {
                    _mm512_store_si512(q.add(l), line);
                }
            }
        }
        k += 8;
    }
    if k < n {
        // SAFETY: the CPU has AVX-512F (the caller's contract).
        let c = unsafe { columns_by_row(m) };
        let src = rows.as_ptr().cast::<f32>();
        while k < n {
            // SAFETY: joint `k` is inside `rows` (12 floats) and `out` (24 bytes); the CPU has the kernel's features.
            unsafe { mat3x4_single::<true>(&c, src, dst, k) };
            k += 1;
        }
    }
}

/// Writes `T × rows[k]` into `out[k]` for every `k < out.len()`: row `r` of each entry is
/// `T[r][0]·S₀ + (T[r][1]·S₁ + (T[r][2]·S₂ + (0, 0, 0, t_r)))` in three fused multiply-adds, as the portable path
/// (`Fold::apply_fused` in `flatten.rs`) computes it, so the same bits. With AVX-512 where the CPU has it.
///
/// # Panics
///
/// When [`available`] is false or `rows` is shorter than `out` (both are the caller's bugs).
#[inline]
pub fn entry(t: &glam::Affine3A, rows: &[[Vec4; 3]], out: &mut [PaletteEntry], stream: bool) {
    entry_with(wide_available(), t, rows, out, stream);
}

/// [`entry`] with the AVX-512 kernel when `wide`, the AVX one otherwise.
///
/// # Panics
///
/// When the CPU lacks the kernel's features or `rows` is shorter than `out` (both are the caller's bugs).
#[inline]
fn entry_with(wide: bool, t: &glam::Affine3A, rows: &[[Vec4; 3]], out: &mut [PaletteEntry], stream: bool) {
    assert!(available() && rows.len() >= out.len(), "checked by the caller");
    assert!(!wide || wide_available(), "checked by the caller");
    // SAFETY: the CPU has AVX, F16C and FMA, and AVX-512F and AVX2 when `wide` (asserted); `rows` covers `out`.
    unsafe {
        if wide {
            entry_kernel_avx512(t, rows, out, stream);
        } else {
            entry_kernel(&super::linear_rows(&t.matrix3), t.translation.into(), rows, out, stream);
        }
    }
}

/// Whether folding `t` into cached f32 rows whose largest absolute value is `max_abs` cannot overflow:
/// `‖L_T‖∞ · max_abs + Σ|t_T|` at most `f32::MAX / 1024` (each element of `T × S` is at most
/// `‖L_T‖∞ · max|S| + |t|` before rounding, and the few roundings on the way, relative `2⁻²⁴` each, stay far inside
/// the factor of 2¹⁰ left). False for NaN (`norm_inf` is NaN when an element is, and the sum keeps it).
#[inline(always)]
pub fn entry_in_range(t: &glam::Affine3A, max_abs: f32) -> bool {
    let shift = t.translation.abs();
    super::norm_inf(&super::linear_rows(&t.matrix3)) * max_abs + (shift.x + shift.y + shift.z) <= f32::MAX / 1024.0
}

/// Encodes a run of cached palettes with their instance transforms into `out`, as `PaletteEntry`'s
/// `encode_cached_run` specifies: palette `i` (`skin_joints` entries) from `pose.pose(i)`, folded by `transforms[i]`
/// (one per palette). Each palette that passes [`entry_in_range`] goes through the kernel ([`entry`]'s, inlined
/// here with its setup, the CPU's features detected once per run); the others take the portable path, which
/// reports non-finite values. Returns the poison sum of the portable palettes (zero when none).
///
/// # Panics
///
/// When [`available`] is false or `transforms` has fewer than one transform per palette (the caller's bugs).
pub fn entry_run<'a>(
    out: &mut [PaletteEntry],
    skin_joints: usize,
    order: &[u16],
    pose: &impl crate::flatten::PoseSource<'a>,
    transforms: &[glam::Affine3A],
    stream: bool,
) -> Vec4 {
    assert!(available(), "checked by the caller");
    assert!(
        transforms.len() >= out.len().checked_div(skin_joints).unwrap_or(0),
        "one transform per palette"
    );
    // SAFETY: the CPU has AVX, F16C and FMA (asserted), and AVX-512F and AVX2 for the wide kernel.
    unsafe { entry_run_loop(wide_available(), out, skin_joints, order, pose, transforms, stream) }
}

run_with_features!(entry_run_loop, PaletteEntry, entry_run_body);

/// The palette loop of [`entry_run`], with the AVX-512 kernel when `WIDE`; inlined into `entry_run_loop`'s two
/// loops (`run_with_features`).
///
/// # Safety
///
/// The CPU has AVX, F16C and FMA, and AVX-512F and AVX2 when `WIDE`; `transforms` has one transform per palette.
#[inline(always)]
unsafe fn entry_run_body<'a, const WIDE: bool>(
    out: &mut [PaletteEntry],
    skin_joints: usize,
    order: &[u16],
    pose: &impl crate::flatten::PoseSource<'a>,
    transforms: &[glam::Affine3A],
    stream: bool,
) -> Vec4 {
    let mut acc = Vec4::ZERO;
    if skin_joints == 0 {
        return acc;
    }
    for &i in order {
        let i = usize::from(i);
        let (palette, t) = (crate::flatten::palette_mut(out, skin_joints, i), &transforms[i]);
        let pose = pose.pose(i);
        let rows = &pose.rows[..palette.len()];
        if !entry_in_range(t, pose.max_abs) {
            acc += crate::flatten::fold_rows(t, rows, palette, stream);
            continue;
        }
        // SAFETY: the CPU has the kernel's features (the caller's contract), and `rows` covers `palette`.
        unsafe {
            if WIDE {
                entry_kernel_avx512(t, rows, palette, stream);
            } else {
                entry_kernel(
                    &super::linear_rows(&t.matrix3),
                    t.translation.into(),
                    rows,
                    palette,
                    stream,
                );
            }
        }
    }
    acc
}

/// The AVX-512 kernel of [`entry`]: each joint's three rows in one 512-bit register ([`fold_joint`], the last
/// 128-bit lane unused); four joints are then packed into three 512-bit registers (one `vpermt2ps` each), 192
/// bytes, and stored as three cache lines, streamed when asked. Joints before the first line boundary (when the
/// output is 16-byte aligned, at most three) and after the last whole group of four are stored one by one with a
/// masked store.
///
/// # Safety
///
/// The CPU has AVX-512F and FMA, and `rows.len() >= out.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn entry_kernel_avx512(t: &glam::Affine3A, rows: &[[Vec4; 3]], out: &mut [PaletteEntry], stream: bool) {
    let n = out.len();
    let src = rows.as_ptr().cast::<f32>();
    let dst = out.as_mut_ptr().cast::<f32>();
    // SAFETY: the CPU has AVX-512F (the caller's contract).
    let (c, add) = unsafe { (columns_by_row(&t.matrix3), translation_lanes(&t.translation)) };
    // Lines of four joints `a`, `b`, `c`, `d` (12 floats each): `[a, b 0..4]`, `[b 4..12, c 0..8]`, `[c 8..12, d]`.
    let line0 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19);
    let line1 = _mm512_setr_epi32(4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23);
    let line2 = _mm512_setr_epi32(8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27);
    let mut k = 0;
    // From a multiple of 16 bytes, at most three joints (48 bytes each) reach a cache line.
    if (dst as usize).is_multiple_of(16) {
        // SAFETY: `k < n`, so `dst + 12k` is inside `out`.
        while k < n && !(unsafe { dst.add(12 * k) } as usize).is_multiple_of(64) {
            // SAFETY: joint `k` is inside `rows` and `out` (12 floats each); the CPU has AVX-512F and FMA.
            unsafe { _mm512_mask_storeu_ps(dst.add(12 * k), 0x0fff, fold_joint(&c, add, src.add(12 * k))) };
            k += 1;
        }
    }
    // SAFETY: `k <= n`, so `dst + 12k` is inside `out` or one past its end.
    let aligned = (unsafe { dst.add(12 * k) } as usize).is_multiple_of(64);
    let stream = stream && aligned;
    while k + 4 <= n {
        // SAFETY: joints `k..k + 4` are inside `rows` (48 floats from `src + 12k`) and `out` (48 floats from
        // `dst + 12k`, 64-byte aligned when `aligned`); the CPU has AVX-512F and FMA.
        unsafe {
            let p = src.add(12 * k);
            let j = [
                fold_joint(&c, add, p),
                fold_joint(&c, add, p.add(12)),
                fold_joint(&c, add, p.add(24)),
                fold_joint(&c, add, p.add(36)),
            ];
            let o = [
                _mm512_permutex2var_ps(j[0], line0, j[1]),
                _mm512_permutex2var_ps(j[1], line1, j[2]),
                _mm512_permutex2var_ps(j[2], line2, j[3]),
            ];
            let q = dst.add(12 * k);
            for (l, &line) in o.iter().enumerate() {
                if stream {
                    _mm512_stream_ps(q.add(16 * l), line);
                } else if aligned {
                    _mm512_store_ps(q.add(16 * l), line);
                } else {
                    _mm512_storeu_ps(q.add(16 * l), line);
                }
            }
        }
        k += 4;
    }
    while k < n {
        // SAFETY: joint `k` is inside `rows` and `out`; the CPU has AVX-512F and FMA.
        unsafe { _mm512_mask_storeu_ps(dst.add(12 * k), 0x0fff, fold_joint(&c, add, src.add(12 * k))) };
        k += 1;
    }
}

/// One joint of [`entry_kernel`] with 128-bit registers, streamed when `stream` (then `dst` is 16-byte aligned).
///
/// # Safety
///
/// The CPU has AVX and FMA; `src` points to 12 readable floats and `dst` to 12 writable ones.
#[inline]
#[target_feature(enable = "avx,fma")]
unsafe fn entry_one(e: &[[f32; 3]; 3], t: [f32; 3], src: *const f32, dst: *mut f32, stream: bool) {
    // SAFETY: as the function's contract states.
    unsafe {
        let s = [_mm_loadu_ps(src), _mm_loadu_ps(src.add(4)), _mm_loadu_ps(src.add(8))];
        for (r, e) in e.iter().enumerate() {
            let c = _mm_fmadd_ps(_mm_set1_ps(e[2]), s[2], _mm_setr_ps(0.0, 0.0, 0.0, t[r]));
            let v = _mm_fmadd_ps(_mm_set1_ps(e[0]), s[0], _mm_fmadd_ps(_mm_set1_ps(e[1]), s[1], c));
            if stream {
                _mm_stream_ps(dst.add(4 * r), v);
            } else {
                _mm_storeu_ps(dst.add(4 * r), v);
            }
        }
    }
}

/// The AVX kernel of [`entry`], for CPUs without AVX-512.
///
/// # Safety
///
/// The CPU has AVX and FMA, and `rows.len() >= out.len()`.
#[inline]
#[target_feature(enable = "avx,fma")]
unsafe fn entry_kernel(e: &[[f32; 3]; 3], t: [f32; 3], rows: &[[Vec4; 3]], out: &mut [PaletteEntry], stream: bool) {
    let n = out.len();
    let src = rows.as_ptr().cast::<f32>();
    let dst = out.as_mut_ptr().cast::<f32>();
    // A pair of joints `k`, `k + 1` is written as three registers: `[row 0 | row 1]` of `k`, `[row 2 of k | row 0 of
    // k + 1]` and `[row 1 | row 2]` of `k + 1`. Each needs, per column `c` of `T`, the two rows' elements splat in
    // its halves, and the translations in lane 3 of each half.
    let halves = |a: f32, b: f32| _mm256_setr_ps(a, a, a, a, b, b, b, b);
    let coefficients = |r0: usize, r1: usize| [0, 1, 2].map(|c| halves(e[r0][c], e[r1][c]));
    let (ea, eb, ec) = (coefficients(0, 1), coefficients(2, 0), coefficients(1, 2));
    let shift = |a: f32, b: f32| _mm256_setr_ps(0.0, 0.0, 0.0, a, 0.0, 0.0, 0.0, b);
    let (ta, tb, tc) = (shift(t[0], t[1]), shift(t[2], t[0]), shift(t[1], t[2]));
    // The twin's order: e₀·S₀ + (e₁·S₁ + (e₂·S₂ + t)), all fused.
    let rows_of = |e: &[__m256; 3], s: [__m256; 3], t: __m256| {
        _mm256_fmadd_ps(e[0], s[0], _mm256_fmadd_ps(e[1], s[1], _mm256_fmadd_ps(e[2], s[2], t)))
    };
    let mut k = 0;
    let stream16 = stream && (dst as usize).is_multiple_of(16);
    // A destination 16 bytes past a 32-byte boundary becomes 32-byte aligned after one joint (48 bytes), with
    // either kind of store: otherwise every other 32-byte store would straddle two cache lines (split stores cost
    // about 10% of the crowd run with ordinary stores on the development VM).
    if n > 0 && dst as usize % 32 == 16 {
        // SAFETY: joint 0 exists; its 12 floats are inside `rows` and `out`, and `dst` is 16-byte aligned.
        unsafe { entry_one(e, t, src, dst, stream16) };
        k = 1;
    }
    // SAFETY: `k <= n`, so `dst + 12k` is inside `out` or one past its end.
    let stream32 = stream16 && (unsafe { dst.add(12 * k) } as usize).is_multiple_of(32);
    while k + 2 <= n {
        // SAFETY: joints `k` and `k + 1` are inside `rows` (24 floats from `src + 12k`, each row a 16-byte aligned
        // `Vec4`) and `out` (24 floats from `dst + 12k`, 32-byte aligned when `stream32`); the CPU has AVX.
        unsafe {
            let p = src.add(12 * k);
            let row = |i: usize| &*p.add(4 * i).cast::<__m128>();
            let first = [0, 1, 2].map(|c| _mm256_broadcast_ps(row(c)));
            let second = [0, 1, 2].map(|c| _mm256_broadcast_ps(row(3 + c)));
            let mixed = [0, 1, 2].map(|c| _mm256_loadu2_m128(p.add(4 * (3 + c)), p.add(4 * c)));
            let a = rows_of(&ea, first, ta);
            let b = rows_of(&eb, mixed, tb);
            let c = rows_of(&ec, second, tc);
            let q = dst.add(12 * k);
            if stream32 {
                _mm256_stream_ps(q, a);
                _mm256_stream_ps(q.add(8), b);
                _mm256_stream_ps(q.add(16), c);
            } else {
                _mm256_storeu_ps(q, a);
                _mm256_storeu_ps(q.add(8), b);
                _mm256_storeu_ps(q.add(16), c);
            }
        }
        k += 2;
    }
    if k < n {
        // SAFETY: joint `k` is the last one, inside `rows` and `out`; `dst + 12k` is 16-byte aligned when
        // `stream16` (48 bytes per joint from a 16-byte aligned start).
        unsafe { entry_one(e, t, src.add(12 * k), dst.add(12 * k), stream16) };
    }
}

/// Whether [`skin_rows`] can run: the CPU has AVX-512F.
#[inline]
pub fn skin_rows_available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

/// The [`crate::FlattenCache`]'s skinning rows of one pose: `rows[k]` gets the rows of
/// `pose[joints[k]] × inverse_bind[k]` (given `ibms[k]`, the inverse bind matrix's rows) with the same bits as the
/// portable `skin_rows_into` in `flatten.rs`, each row `(m[r][0]·I₀ + m[r][1]·I₁) + (m[r][2]·I₂ + (0, 0, 0, t_r))`
/// with separate multiplies and adds in that order. Returns the poison sum (`Vec4::ZERO` when every value is
/// finite, NaN otherwise, as `skin_rows_into`'s) and the largest absolute value, as `max_abs_of` (meaningful for
/// finite rows only).
///
/// One joint per 512-bit register, as the f32 fold kernel: the inverse bind rows broadcast from memory to the four
/// 128-bit lanes, the model matrix's columns spread by row (one `vpermps` each) and its translation to lane 3 of
/// each row; the last lane is unused and masked out of the store. About 10 vector instructions per joint, against
/// about 35 for the portable path's splats. The poison and the maximum follow in a second pass over the rows.
///
/// Measured on the development VM (2 threads, a job of 128 instances over the bench's 128 poses of 64 joints, so
/// mostly the cache's preparation; medians of 31 alternating rounds, with a build running beside them):
/// Mat3x4F16 45 µs against 71 µs with the portable rows, QtF16 100 µs against 145 µs. With the poison and maximum
/// folded into the joint loop (18 µs and 30 µs saved), their chains of dependent adds and maxima held the gain to
/// about two thirds of that.
///
/// # Panics
///
/// When [`skin_rows_available`] is false, `joints` or `ibms` is shorter than `rows`, or a joint is outside `pose`
/// (the caller's bugs).
pub fn skin_rows(pose: &[glam::Affine3A], joints: &[u16], ibms: &[[Vec4; 3]], rows: &mut [[Vec4; 3]]) -> (Vec4, f32) {
    assert!(skin_rows_available(), "checked by the caller");
    let (joints, ibms) = (&joints[..rows.len()], &ibms[..rows.len()]);
    // SAFETY: the CPU has AVX-512F (asserted); `joints` and `ibms` cover `rows`.
    unsafe { skin_rows_kernel(pose, joints, ibms, rows) }
}

/// The kernel of [`skin_rows`].
///
/// # Safety
///
/// The CPU has AVX-512F; `joints` and `ibms` are as long as `rows`.
#[target_feature(enable = "avx512f")]
unsafe fn skin_rows_kernel(
    pose: &[glam::Affine3A],
    joints: &[u16],
    ibms: &[[Vec4; 3]],
    rows: &mut [[Vec4; 3]],
) -> (Vec4, f32) {
    for ((row, &joint), ibm) in rows.iter_mut().zip(joints).zip(ibms) {
        let m = &pose[usize::from(joint)];
        // SAFETY: the CPU has AVX-512F (the caller's contract); each inverse bind row is a `Vec4`, 16 readable
        // bytes.
        let (c, t, b) = unsafe {
            let ibm = ibm.as_ptr().cast::<f32>();
            (
                columns_by_row(&m.matrix3),
                translation_lanes(&m.translation),
                [broadcast_row(ibm), broadcast_row(ibm.add(4)), broadcast_row(ibm.add(8))],
            )
        };
        // `(m[r][0]·I₀ + m[r][1]·I₁) + (m[r][2]·I₂ + (0, 0, 0, t_r))`, as `skin_matrix_rows`.
        let v = _mm512_add_ps(
            _mm512_add_ps(_mm512_mul_ps(c[0], b[0]), _mm512_mul_ps(c[1], b[1])),
            _mm512_add_ps(_mm512_mul_ps(c[2], b[2]), t),
        );
        // SAFETY: a row triple is 12 writable floats; the mask stores lanes 0 to 11 only.
        unsafe { _mm512_mask_storeu_ps(std::ptr::from_mut(row).cast(), 0x0fff, v) };
    }
    // The poison and the maximum in a second pass over the rows (in L1 now), with two accumulators each: folded
    // into the loop above, their chains of dependent adds and maxima set its pace.
    // SAFETY: a row triple is 12 floats (three `Vec4`s, no padding).
    let floats: &[f32] = unsafe { std::slice::from_raw_parts(rows.as_ptr().cast::<f32>(), 12 * rows.len()) };
    let zero = _mm512_setzero_ps();
    let magnitude = _mm512_set1_epi32(i32::MAX);
    let abs = |v: __m512| _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), magnitude));
    let (mut poison, mut max) = ([zero; 2], [zero; 2]);
    let mut blocks = floats.chunks_exact(32);
    for block in &mut blocks {
        // SAFETY: a block is 32 readable floats.
        let v = unsafe { [_mm512_loadu_ps(block.as_ptr()), _mm512_loadu_ps(block.as_ptr().add(16))] };
        for i in 0..2 {
            poison[i] = _mm512_add_ps(poison[i], _mm512_mul_ps(v[i], zero));
            max[i] = _mm512_max_ps(max[i], abs(v[i]));
        }
    }
    for part in blocks.remainder().chunks(16) {
        // SAFETY: the mask reads the part's floats only.
        let v = unsafe { _mm512_maskz_loadu_ps((1u32 << part.len()).wrapping_sub(1) as u16, part.as_ptr()) };
        poison[0] = _mm512_add_ps(poison[0], _mm512_mul_ps(v, zero));
        max[0] = _mm512_max_ps(max[0], abs(v));
    }
    let poison = _mm512_add_ps(poison[0], poison[1]);
    // `vmaxps` returns its second operand when one is NaN; the poison reports NaN rows, whose maximum is unused.
    let max = _mm512_max_ps(max[0], max[1]);
    (Vec4::splat(_mm512_reduce_add_ps(poison)), _mm512_reduce_max_ps(max))
}

/// Proof that the CPU has what [`qt`] uses (AVX2, F16C and FMA), and whether it also has AVX-512F and AVX-512BW: only
/// [`QtKernel::detect`] makes one, so a palette loop detects once.
#[derive(Clone, Copy, Debug)]
pub struct QtKernel {
    /// The CPU has AVX-512F and AVX-512BW: [`qt`] folds a whole block per instruction.
    avx512: bool,
}

impl QtKernel {
    /// `Some` when the CPU has AVX2, F16C and FMA.
    #[inline]
    pub fn detect() -> Option<Self> {
        qt_available().then(|| Self {
            avx512: std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw"),
        })
    }

    /// Whether the CPU has AVX-512F and AVX-512BW (so the sixteen-lane decompositions of `decompose_simd` run too).
    #[inline]
    pub fn avx512(self) -> bool {
        self.avx512
    }

    /// The same CPU without its AVX-512 kernel, so that tests run both kernels.
    #[cfg(test)]
    fn avx2_only(self) -> Self {
        Self { avx512: false }
    }
}

/// Encodes the cached structure-of-arrays joints `blocks` (see `QT_BLOCK_FLOATS`), folded by `fold` when given,
/// into `out`.
///
/// # Panics
///
/// When `blocks` holds fewer than `out.len()` joints (the caller's bug).
#[inline]
pub fn qt(kernel: QtKernel, fold: Option<&QtFold>, blocks: &[f32], out: &mut [QtF16], stream: bool) {
    assert!(
        blocks.len() >= out.len().div_ceil(QT_BLOCK) * QT_BLOCK_FLOATS,
        "checked by the caller"
    );
    let f = fold.unwrap_or(&QtFold::IDENTITY);
    // SAFETY: the CPU has AVX2, F16C and FMA (the `QtKernel` proves it), and AVX-512F and BW when `kernel.avx512` says
    // so; `blocks` covers `out`.
    unsafe {
        match (kernel.avx512, fold.map(QtFold::upright)) {
            (true, Some(false)) => qt_kernel_avx512::<true, false>(f, blocks, out, stream),
            (true, Some(true)) => qt_kernel_avx512::<true, true>(f, blocks, out, stream),
            (true, None) => qt_kernel_avx512::<false, false>(f, blocks, out, stream),
            (false, Some(false)) => qt_kernel::<true, false>(f, blocks, out, stream),
            (false, Some(true)) => qt_kernel::<true, true>(f, blocks, out, stream),
            (false, None) => qt_kernel::<false, false>(f, blocks, out, stream),
        }
    }
}

/// A palette's fold `(q_T, L_T, s_T)` (see [`QtFold`]) in every lane of 512-bit registers, for
/// [`qt_blocks_avx512`], with `−x` and `−y` for the leading negated products of the quaternion's rows 2 and 3
/// (`(−y)·v₀` is `−(y·v₀)` exactly, as the twin's).
///
/// Built from scalars in memory (the run's decomposed folds and the transform itself), each constant is one
/// broadcast load: building a [`QtFold`] first made LLVM gather its fields in registers, store the struct, and
/// broadcast from registers: 28 shuffles per palette in the disassembly, on the port that the transposes need.
#[derive(Clone, Copy)]
struct QtWideFold {
    q: [__m512; 4],
    nq: [__m512; 2],
    l: [[__m512; 3]; 3],
    s: __m512,
}

impl QtWideFold {
    /// `q = (x, y, z, w)`, `l` by rows, and `s`.
    ///
    /// # Safety
    ///
    /// The CPU has AVX-512F.
    #[inline(always)]
    unsafe fn new(q: [f32; 4], l: [[f32; 3]; 3], s: f32) -> Self {
        // SAFETY: the CPU has AVX-512F (the caller's contract).
        unsafe {
            Self {
                q: [
                    _mm512_set1_ps(q[0]),
                    _mm512_set1_ps(q[1]),
                    _mm512_set1_ps(q[2]),
                    _mm512_set1_ps(q[3]),
                ],
                nq: [_mm512_set1_ps(-q[0]), _mm512_set1_ps(-q[1])],
                l: [
                    [
                        _mm512_set1_ps(l[0][0]),
                        _mm512_set1_ps(l[0][1]),
                        _mm512_set1_ps(l[0][2]),
                    ],
                    [
                        _mm512_set1_ps(l[1][0]),
                        _mm512_set1_ps(l[1][1]),
                        _mm512_set1_ps(l[1][2]),
                    ],
                    [
                        _mm512_set1_ps(l[2][0]),
                        _mm512_set1_ps(l[2][1]),
                        _mm512_set1_ps(l[2][2]),
                    ],
                ],
                s: _mm512_set1_ps(s),
            }
        }
    }
}

/// [`qt_kernel`] with AVX-512F: each component of a block's sixteen joints is one 512-bit register (even joints in
/// the low half, odd ones in the high half, as the block stores them), so the fold runs once per block instead of
/// once per half, and one `vcvtps2ph` gives the 256-bit register of halves that the AVX2 kernel assembles from two.
/// The transpose and the stores are the AVX2 kernel's, or a 512-bit transpose and one store per line when the
/// output starts on a line (AVX-512BW too, which [`QtKernel::detect`] requires). The quaternion product uses the four components of `q_T`
/// rather than the sixteen signed entries of [`QtFold::q_rows`] (so that the constants fit in registers): a product
/// with a negated component is `vfnmadd` (`−(a·b) + c`, the single rounding of the twin's `(−a)·b + c`), and a
/// leading negated product is the product with the negated component (`−x`, `−y` of [`QtWideFold`]), whose
/// rounding is the same magnitude with the other sign. Every lane therefore gives the bits of the scalar twin
/// [`QtFold::apply`], as the AVX2 kernel does.
///
/// Measured on the development VM with the two variants alternating run by run in one process (median of the
/// run-by-run time ratios, 80 or 120 pairs per series): reading the fold's constants straight from memory (see
/// [`QtWideFold`]) made the bench's QtF16 crowd (streaming, 2 threads) 1.0–4.8% faster in 5 of 5 series, and a
/// 2,000-instance crowd (ordinary stores, 1 thread) 2.1–6.5% faster in 3 of 3. The 512-bit transpose with one
/// store per line ([`store_block_avx512`], used when the palette starts on a line) did not help while each palette
/// read its pose from L2 (the 256-bit path was as fast or up to 4.8% faster in 7 of 9 series); once the job
/// grouped palettes by pose (`FLATTEN_WINDOW`), it took 0.87–0.97 of the 256-bit path's time in 9 of 9 series
/// (streaming) and 0.96–1.00 in 3 (ordinary stores).
///
/// # Safety
///
/// The CPU has AVX-512F, AVX-512BW, AVX2, F16C and FMA, and `blocks` holds `out.len().div_ceil(16)` whole blocks.
#[target_feature(enable = "avx512f,avx512bw,avx2,f16c,fma")]
unsafe fn qt_kernel_avx512<const FOLD: bool, const UPRIGHT: bool>(
    f: &QtFold,
    blocks: &[f32],
    out: &mut [QtF16],
    stream: bool,
) {
    // SAFETY: as this function's contract.
    unsafe { qt_blocks_avx512::<FOLD, UPRIGHT>(QtWideFold::new(f.q, f.l, f.s), None, blocks, out, stream) }
}

/// The body of [`qt_kernel_avx512`], inlined into it and into [`qt_run_avx512`]'s palette loop.
///
/// # Safety
///
/// As [`qt_kernel_avx512`], and `f` is [`QtFold::upright`] when `UPRIGHT`. With `scale_code`, every joint's
/// folded scale has that f16 code (`uniform_scale_code`), which is stored as it is: no multiply or conversion of
/// the scales. (Not a `#[target_feature]` function, so that it can be `#[inline(always)]`.)
#[inline(always)]
unsafe fn qt_blocks_avx512<const FOLD: bool, const UPRIGHT: bool>(
    f: QtWideFold,
    scale_code: Option<u16>,
    blocks: &[f32],
    out: &mut [QtF16],
    stream: bool,
) {
    /// `a` with its sign bit flipped where `w`'s is set: `a ^ (w & sign)`.
    #[inline(always)]
    unsafe fn flip(a: __m512, w: __m512, sign: __m512i) -> __m512 {
        // SAFETY: the CPU has AVX-512F (the caller's contract).
        unsafe {
            _mm512_castsi512_ps(_mm512_ternarylogic_epi32::<0x78>(
                _mm512_castps_si512(a),
                _mm512_castps_si512(w),
                sign,
            ))
        }
    }
    /// `r₂·v₆ + (r₁·v₅ + r₀·v₄)`: one row of `L_T` times the cached translation, the twin's order.
    #[inline(always)]
    unsafe fn rot(r0: __m512, r1: __m512, r2: __m512, v: &[__m512; 8]) -> __m512 {
        // SAFETY: the CPU has AVX-512F (the caller's contract).
        unsafe { _mm512_fmadd_ps(r2, v[6], _mm512_fmadd_ps(r1, v[5], _mm512_mul_ps(r0, v[4]))) }
    }
    // SAFETY: the CPU has AVX-512F, AVX2, F16C and FMA, and `blocks` holds the palette's whole blocks (the caller's
    // contract). Written without closures or array `map`s, which LLVM may leave out of line (then each intrinsic
    // in them is a call).
    unsafe {
        let n = out.len();
        let dst = out.as_mut_ptr().cast::<__m256i>();
        let stores = QtStores::new(dst, stream);
        let QtWideFold {
            q: [qx, qy, qz, qw],
            nq: [nqx, nqy],
            l,
            s: scale,
        } = f;
        let sign = _mm512_set1_epi32(i32::MIN);
        let code = _mm256_set1_epi16(scale_code.unwrap_or(0) as i16);
        let wide = dst.cast::<__m512i>();
        let aligned = (wide as usize).is_multiple_of(64);
        for b in 0..n.div_ceil(QT_BLOCK) {
            let p = blocks.as_ptr().add(b * QT_BLOCK_FLOATS);
            let v = [
                _mm512_loadu_ps(p),
                _mm512_loadu_ps(p.add(QT_BLOCK)),
                _mm512_loadu_ps(p.add(2 * QT_BLOCK)),
                _mm512_loadu_ps(p.add(3 * QT_BLOCK)),
                _mm512_loadu_ps(p.add(4 * QT_BLOCK)),
                _mm512_loadu_ps(p.add(5 * QT_BLOCK)),
                _mm512_loadu_ps(p.add(6 * QT_BLOCK)),
                _mm512_loadu_ps(p.add(7 * QT_BLOCK)),
            ];
            let folded = if FOLD && UPRIGHT {
                // `x = z = 0`: the rows' nonzero terms only, as the twin's upright chains (14 multiplies and
                // fused multiply-adds, not 26).
                let r0 = _mm512_fmadd_ps(qy, v[2], _mm512_mul_ps(qw, v[0]));
                let r1 = _mm512_fmadd_ps(qy, v[3], _mm512_mul_ps(qw, v[1]));
                let r2 = _mm512_fmadd_ps(qw, v[2], _mm512_mul_ps(nqy, v[0]));
                let r3 = _mm512_fmadd_ps(qw, v[3], _mm512_mul_ps(nqy, v[1]));
                [
                    flip(r0, r3, sign),
                    flip(r1, r3, sign),
                    flip(r2, r3, sign),
                    flip(r3, r3, sign),
                    _mm512_fmadd_ps(l[0][2], v[6], _mm512_mul_ps(l[0][0], v[4])),
                    _mm512_mul_ps(l[1][1], v[5]),
                    _mm512_fmadd_ps(l[2][2], v[6], _mm512_mul_ps(l[2][0], v[4])),
                    _mm512_mul_ps(scale, v[7]),
                ]
            } else if FOLD {
                // Rows `[w, −z, y, x]`, `[z, w, −x, y]`, `[−y, x, w, z]` and `[−x, −y, −z, w]`, innermost first.
                let r0 = _mm512_fmadd_ps(
                    qx,
                    v[3],
                    _mm512_fmadd_ps(qy, v[2], _mm512_fnmadd_ps(qz, v[1], _mm512_mul_ps(qw, v[0]))),
                );
                let r1 = _mm512_fmadd_ps(
                    qy,
                    v[3],
                    _mm512_fnmadd_ps(qx, v[2], _mm512_fmadd_ps(qw, v[1], _mm512_mul_ps(qz, v[0]))),
                );
                let r2 = _mm512_fmadd_ps(
                    qz,
                    v[3],
                    _mm512_fmadd_ps(qw, v[2], _mm512_fmadd_ps(qx, v[1], _mm512_mul_ps(nqy, v[0]))),
                );
                let r3 = _mm512_fmadd_ps(
                    qw,
                    v[3],
                    _mm512_fnmadd_ps(qz, v[2], _mm512_fnmadd_ps(qy, v[1], _mm512_mul_ps(nqx, v[0]))),
                );
                // The hemisphere with w ≥ 0: flip all four when w's sign bit is set (−0 too, as the twin does),
                // `r ^ (r₃ & sign)` in one ternary-logic instruction each.
                [
                    flip(r0, r3, sign),
                    flip(r1, r3, sign),
                    flip(r2, r3, sign),
                    flip(r3, r3, sign),
                    rot(l[0][0], l[0][1], l[0][2], &v),
                    rot(l[1][0], l[1][1], l[1][2], &v),
                    rot(l[2][0], l[2][1], l[2][2], &v),
                    _mm512_mul_ps(scale, v[7]),
                ]
            } else {
                v
            };
            // `h[c]`: component c as halves, the even joints in the low 128 bits and the odd ones in the high 128.
            let h = [
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(folded[0]),
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(folded[1]),
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(folded[2]),
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(folded[3]),
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(folded[4]),
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(folded[5]),
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(folded[6]),
                if FOLD && scale_code.is_some() {
                    code
                } else {
                    _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(folded[7])
                },
            ];
            if aligned {
                // Entries `first..first + 16` are four whole lines inside `out` when the block is whole; the last
                // block stores only its own entries.
                store_block_avx512(h, wide, b * QT_BLOCK, n, stream);
            } else {
                // As in `qt_kernel`: entries `first..first + 16` are inside `out` when the block is whole, the last
                // block stores only its own entries; `stores` was chosen for `dst`.
                store_block(h, dst, b * QT_BLOCK, n, stores);
            }
        }
    }
}

/// `QtF16::encode_cached_run` where the CPU has AVX-512F and AVX-512BW (which `kernel` proves): the run's instance transforms
/// decomposed sixteen at a time (`decompose_simd::qt_folds`), then each palette of `skin_joints` entries from
/// `pose.pose(i)`, folded by `transforms[i]`, through the AVX-512 kernel inlined into this loop (its constants set up
/// once per run, no call per palette) when its values stay in range, through the scalar twin (which clamps and
/// reports) otherwise. Returns the scalar palettes' poison sum (zero when none).
///
/// # Panics
///
/// When `kernel` has no AVX-512F, `transforms` has fewer than one transform per palette, or a pose's data is
/// shorter than its palette needs (the caller's bugs).
pub fn qt_run_avx512<'a>(
    kernel: QtKernel,
    out: &mut [QtF16],
    skin_joints: usize,
    order: &[u16],
    pose: &impl crate::flatten::PoseSource<'a>,
    transforms: &[glam::Affine3A],
    stream: bool,
) -> Vec4 {
    assert!(kernel.avx512, "checked by the caller");
    assert!(
        transforms.len() >= out.len().checked_div(skin_joints).unwrap_or(0),
        "one transform per palette"
    );
    // SAFETY: the CPU has AVX-512F, AVX-512BW, AVX2, F16C and FMA (the `QtKernel` proves it).
    unsafe { qt_run_avx512_kernel(out, skin_joints, order, pose, transforms, stream) }
}

/// The loop of [`qt_run_avx512`].
///
/// # Safety
///
/// The CPU has AVX-512F, AVX-512BW, AVX2, F16C and FMA; `transforms` has one transform per palette.
#[target_feature(enable = "avx512f,avx512bw,avx2,f16c,fma")]
unsafe fn qt_run_avx512_kernel<'a>(
    out: &mut [QtF16],
    skin_joints: usize,
    order: &[u16],
    pose: &impl crate::flatten::PoseSource<'a>,
    transforms: &[glam::Affine3A],
    stream: bool,
) -> Vec4 {
    use super::qt_f16::{FOLD_SAFE_MAX, QT_HEADER, encode_cached_scalar};
    let mut acc = Vec4::ZERO;
    if skin_joints == 0 {
        return acc;
    }
    let mut folds = super::decompose_simd::QtFolds::EMPTY;
    // The transforms of the next sixteen palettes in `order`, side by side for `qt_folds`.
    let mut group = [glam::Affine3A::IDENTITY; 16];
    for ids in order.chunks(16) {
        for (slot, &id) in group.iter_mut().zip(ids) {
            *slot = transforms[usize::from(id)];
        }
        let ts = &group[..ids.len()];
        super::decompose_simd::qt_folds(ts, &mut folds);
        for (i, (&id, t)) in ids.iter().zip(ts).enumerate() {
            let id = usize::from(id);
            let palette = crate::flatten::palette_mut(out, skin_joints, id);
            let pose = pose.pose(id);
            let (header, blocks) = pose.aux.split_at(QT_HEADER);
            assert!(
                blocks.len() >= palette.len().div_ceil(QT_BLOCK) * QT_BLOCK_FLOATS,
                "checked by the caller"
            );
            // False for NaN: a non-finite transform takes the scalar path, whose poison reports it.
            if folds.norm(i) * header[0] <= FOLD_SAFE_MAX && folds.s(i).abs() * header[1] <= FOLD_SAFE_MAX {
                // SAFETY: the CPU has the kernel's features (the caller's contract); `blocks` covers `palette`
                // (asserted).
                unsafe {
                    // `QtFolds::get`'s fields, each broadcast straight from memory.
                    let (q, l) = (folds.q(i), super::linear_rows(&t.matrix3));
                    let fold = QtWideFold::new(q, l, folds.s(i));
                    // `uniform_scale_code`, both products converted at once.
                    let ends = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm_mul_ps(
                        _mm_set1_ps(folds.s(i)),
                        _mm_setr_ps(header[2], header[3], 0.0, 0.0),
                    ));
                    let codes = _mm_cvtsi128_si32(ends) as u32;
                    let code = super::qt_f16::shared_code(codes as u16, (codes >> 16) as u16);
                    if super::qt_f16::upright(q, &l) {
                        qt_blocks_avx512::<true, true>(fold, code, blocks, palette, stream);
                    } else {
                        qt_blocks_avx512::<true, false>(fold, code, blocks, palette, stream);
                    }
                }
            } else {
                acc += encode_cached_scalar(Some(&folds.get(i, t)), blocks, palette);
            }
        }
    }
    acc
}

/// The kernel of [`qt`], one block of 16 joints per iteration: the fold on the block's even and odd joints (eight
/// lanes each), `vcvtps2ph` of every component, and an 8 × 8 transpose of halves in both 128-bit lanes at once, which
/// leaves joints `2j` and `2j + 1` side by side: eight 32-byte stores.
///
/// # Safety
///
/// The CPU has AVX2, F16C and FMA, and `blocks` holds `out.len().div_ceil(16)` whole blocks.
#[target_feature(enable = "avx2,f16c,fma")]
unsafe fn qt_kernel<const FOLD: bool, const UPRIGHT: bool>(
    f: &QtFold,
    blocks: &[f32],
    out: &mut [QtF16],
    stream: bool,
) {
    let n = out.len();
    let dst = out.as_mut_ptr().cast::<__m256i>();
    let stores = QtStores::new(dst, stream);
    let q = f.q_rows().map(|r| r.map(|x| _mm256_set1_ps(x)));
    let l = f.l.map(|r| r.map(|x| _mm256_set1_ps(x)));
    let s = _mm256_set1_ps(f.s);
    let sign = _mm256_set1_ps(-0.0);
    // Fused, innermost first, as the twin's `mul_add` chain: r₃q₃ + (r₂q₂ + (r₁q₁ + r₀q₀)).
    let fold = |v: [__m256; 8]| {
        if !FOLD {
            return v;
        }
        let quat = |r: &[__m256; 4]| {
            _mm256_fmadd_ps(
                r[3],
                v[3],
                _mm256_fmadd_ps(r[2], v[2], _mm256_fmadd_ps(r[1], v[1], _mm256_mul_ps(r[0], v[0]))),
            )
        };
        let rot = |r: &[__m256; 3]| _mm256_fmadd_ps(r[2], v[6], _mm256_fmadd_ps(r[1], v[5], _mm256_mul_ps(r[0], v[4])));
        // Upright (`f` is `QtFold::upright`): the twin's chains over the nonzero terms only, `a` and `a + 2`.
        let two = |r: &[__m256; 4], a: usize| _mm256_fmadd_ps(r[a + 2], v[a + 2], _mm256_mul_ps(r[a], v[a]));
        let (x, y, z, w) = if UPRIGHT {
            (two(&q[0], 0), two(&q[1], 1), two(&q[2], 0), two(&q[3], 1))
        } else {
            (quat(&q[0]), quat(&q[1]), quat(&q[2]), quat(&q[3]))
        };
        let (t0, t1, t2) = if UPRIGHT {
            (
                _mm256_fmadd_ps(l[0][2], v[6], _mm256_mul_ps(l[0][0], v[4])),
                _mm256_mul_ps(l[1][1], v[5]),
                _mm256_fmadd_ps(l[2][2], v[6], _mm256_mul_ps(l[2][0], v[4])),
            )
        } else {
            (rot(&l[0]), rot(&l[1]), rot(&l[2]))
        };
        // The hemisphere with w ≥ 0: flip all four when w's sign bit is set.
        let flip = _mm256_and_ps(w, sign);
        [
            _mm256_xor_ps(x, flip),
            _mm256_xor_ps(y, flip),
            _mm256_xor_ps(z, flip),
            _mm256_xor_ps(w, flip),
            t0,
            t1,
            t2,
            _mm256_mul_ps(s, v[7]),
        ]
    };
    for b in 0..n.div_ceil(QT_BLOCK) {
        let base = b * QT_BLOCK_FLOATS;
        // SAFETY: block `b` is inside `blocks` (the caller's contract); the CPU has AVX.
        let load = |c: usize, half: usize| unsafe {
            _mm256_loadu_ps(blocks.as_ptr().add(base + c * QT_BLOCK + half * (QT_BLOCK / 2)))
        };
        let even = fold(std::array::from_fn(|c| load(c, 0)));
        let odd = fold(std::array::from_fn(|c| load(c, 1)));
        // `h[c]`: component c as halves, the even joints in the low 128 bits and the odd ones in the high 128.
        let h: [__m256i; 8] = std::array::from_fn(|c| {
            _mm256_set_m128i(
                _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(odd[c]),
                _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(even[c]),
            )
        });
        // SAFETY: entries `first..first + 16` are inside `out` when the block is whole, the last block stores only
        // its own entries (the caller's contract); `stores` was chosen for `dst`.
        unsafe { store_block(h, dst, b * QT_BLOCK, n, stores) };
    }
}

/// How the QtF16 kernels store a block's eight pairs of entries, chosen once per palette from the destination's
/// alignment: 32-byte stores when it is 32-byte aligned; 16-byte stores (one entry each) when it is only 16-byte
/// aligned, since a 32-byte store at 16 bytes past a 32-byte boundary straddles two cache lines every other time,
/// and such split stores cost more than the extra store (an output from `Vec<QtF16>`, which glibc's allocator places
/// 16 bytes past a page, took that path with every other store split); unaligned 32-byte stores otherwise.
///
/// Non-temporal only when streaming is asked for and the palette starts on a cache line (64 bytes): then each block
/// writes whole lines. From any other start, the line that a block shares with the next one is written in two
/// parts with the next block's loads in between, and on the development VM (Intel, family 6 model 207) that made
/// streaming slower than from a line: in one series of the bench's QtF16 crowd (2 threads), 0.54–0.56 × memcpy
/// with 32-byte streaming stores from 32 bytes past a line and 0.39–0.50 with 16-byte ones from 16 bytes past a
/// 32-byte boundary, against 0.63–0.69 with 32-byte ones from a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum QtStores {
    /// Aligned 32-byte stores, non-temporal when `true`.
    Pairs(bool),
    /// Aligned 16-byte stores.
    Entries,
    /// Unaligned 32-byte stores.
    Unaligned,
}

impl QtStores {
    /// The stores for a destination `dst`, streamed when `stream`.
    fn new(dst: *mut __m256i, stream: bool) -> Self {
        let at = dst as usize;
        if at.is_multiple_of(64) {
            Self::Pairs(stream)
        } else if at.is_multiple_of(32) {
            Self::Pairs(false)
        } else if at.is_multiple_of(16) {
            Self::Entries
        } else {
            Self::Unaligned
        }
    }
}

/// [`store_block`] with AVX-512 (F and BW) for a destination `dst` on a line boundary: the block's sixteen entries
/// are four lines, each one 512-bit store (non-temporal when `stream`), or masked stores of the entries that exist
/// for the last, partial block.
///
/// The transpose is 12 shuffles instead of the 256-bit one's 24: `z[k]` holds components `k` and `k + 4` (lanes:
/// even joints, odd joints, even, odd), two rounds of unpacks (16-bit, then 32-bit) leave four joints' rotations
/// in lanes 0 and 1 and their offsets in lanes 2 and 3, and a permute of 64-bit words puts each rotation beside
/// its offset in joint order (LLVM merges each 32-bit unpack with its permute into one `vpermt2d`).
///
/// # Safety
///
/// The CPU has AVX-512F and AVX-512BW; `dst` is 64-byte aligned and holds `n` entries; `first < n` is a multiple
/// of 16.
#[inline(always)]
unsafe fn store_block_avx512(h: [__m256i; 8], dst: *mut __m512i, first: usize, n: usize, stream: bool) {
    // SAFETY: the CPU has AVX-512F and AVX-512BW (the caller's contract); entries `first..first + 16` are four
    // aligned lines inside `dst` when the block is whole, and the last, partial block stores only its `n - first`
    // entries (the caller's contract).
    unsafe {
        let z = [
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(h[0]), h[4]),
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(h[1]), h[5]),
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(h[2]), h[6]),
            _mm512_inserti64x4::<1>(_mm512_castsi256_si512(h[3]), h[7]),
        ];
        // Per lane, `a[0]`: (c₀, c₁) (lanes 0, 1) or (c₄, c₅) (lanes 2, 3) of the lane's joints 0..4; `a[1]`: of
        // its joints 4..8; `a[2]`, `a[3]`: (c₂, c₃) or (c₆, c₇).
        let a = [
            _mm512_unpacklo_epi16(z[0], z[1]),
            _mm512_unpackhi_epi16(z[0], z[1]),
            _mm512_unpacklo_epi16(z[2], z[3]),
            _mm512_unpackhi_epi16(z[2], z[3]),
        ];
        // `c[i]`, by 64-bit word: the rotations of joints 4i, 4i + 2, 4i + 1, 4i + 3, then their offsets.
        let c = [
            _mm512_unpacklo_epi32(a[0], a[2]),
            _mm512_unpackhi_epi32(a[0], a[2]),
            _mm512_unpacklo_epi32(a[1], a[3]),
            _mm512_unpackhi_epi32(a[1], a[3]),
        ];
        let order = _mm512_setr_epi64(0, 4, 2, 6, 1, 5, 3, 7);
        let lines = [
            _mm512_permutexvar_epi64(order, c[0]),
            _mm512_permutexvar_epi64(order, c[1]),
            _mm512_permutexvar_epi64(order, c[2]),
            _mm512_permutexvar_epi64(order, c[3]),
        ];
        let p = dst.add(first / 4);
        let left = n - first;
        if left >= QT_BLOCK {
            if stream {
                for (k, &line) in lines.iter().enumerate() {
                    _mm512_stream_si512(p.add(k).cast(), line);
                }
            } else {
                for (k, &line) in lines.iter().enumerate() {
                    _mm512_store_si512(p.add(k).cast(), line);
                }
            }
        } else {
            for (k, &line) in lines.iter().enumerate() {
                // Four 32-bit lanes per entry; the block's entries `4k..left` exist.
                let entries = left.saturating_sub(4 * k).min(4);
                let mask = ((1u32 << (4 * entries)) - 1) as __mmask16;
                _mm512_mask_storeu_epi32(p.add(k).cast(), mask, line);
            }
        }
    }
}

/// Transposes a block's components `h` (as halves: the block's even joints in the low 128 bits of each register,
/// its odd joints in the high 128) to entries, with an 8 × 8 transpose of halves in both 128-bit lanes at once
/// that leaves joints `2j` and `2j + 1` side by side, and stores them at entry `first` of `dst` (`n` entries) as
/// `stores` says, or only the block's `n - first` entries for the last, partial block.
///
/// # Safety
///
/// The CPU has AVX2; `dst` holds `n` entries, `first < n`, and `stores` is `QtStores::new(dst, _)`.
///
/// Not a `#[target_feature]` function, so that it can be `#[inline(always)]` into both kernels (which enable
/// AVX2): with `#[inline]`, LLVM left it out of line in the AVX-512 kernel, which then passed the halves through
/// the stack and reloaded its broadcast constants after every call, once per block. For the same reason the pairs
/// are written out rather than made by a closure.
#[inline(always)]
unsafe fn store_block(h: [__m256i; 8], dst: *mut __m256i, first: usize, n: usize, stores: QtStores) {
    // SAFETY: the CPU has AVX2 (the caller's contract); entries `first..first + 16` are inside `dst` when the block
    // is whole (32 bytes per pair, 32-byte aligned for `Pairs`, 16-byte aligned for `Entries`); the last, partial
    // block stores only its `n - first` entries (the caller's contract).
    unsafe {
        // Transpose 8 × 8 halves in each 128-bit lane: component-major to joint-major.
        let a = [
            _mm256_unpacklo_epi16(h[0], h[1]),
            _mm256_unpackhi_epi16(h[0], h[1]),
            _mm256_unpacklo_epi16(h[2], h[3]),
            _mm256_unpackhi_epi16(h[2], h[3]),
            _mm256_unpacklo_epi16(h[4], h[5]),
            _mm256_unpackhi_epi16(h[4], h[5]),
            _mm256_unpacklo_epi16(h[6], h[7]),
            _mm256_unpackhi_epi16(h[6], h[7]),
        ];
        // Per lane, `a[0]`: (x, y) of its joints 0..4, `a[1]`: of its joints 4..8; `a[2]`, `a[3]`: (z, w);
        // `a[4]`..`a[7]`: (dx, dy), (dz, s).
        let rotation = [
            _mm256_unpacklo_epi32(a[0], a[2]),
            _mm256_unpackhi_epi32(a[0], a[2]),
            _mm256_unpacklo_epi32(a[1], a[3]),
            _mm256_unpackhi_epi32(a[1], a[3]),
        ];
        let offset = [
            _mm256_unpacklo_epi32(a[4], a[6]),
            _mm256_unpackhi_epi32(a[4], a[6]),
            _mm256_unpacklo_epi32(a[5], a[7]),
            _mm256_unpackhi_epi32(a[5], a[7]),
        ];
        // Register `j` holds the block's joint `2j` (low lane, its j-th even joint) and `2j + 1` (high lane).
        let pairs = [
            _mm256_unpacklo_epi64(rotation[0], offset[0]),
            _mm256_unpackhi_epi64(rotation[0], offset[0]),
            _mm256_unpacklo_epi64(rotation[1], offset[1]),
            _mm256_unpackhi_epi64(rotation[1], offset[1]),
            _mm256_unpacklo_epi64(rotation[2], offset[2]),
            _mm256_unpackhi_epi64(rotation[2], offset[2]),
            _mm256_unpacklo_epi64(rotation[3], offset[3]),
            _mm256_unpackhi_epi64(rotation[3], offset[3]),
        ];
        let p = dst.add(first / 2);
        if n - first >= QT_BLOCK {
            let e = p.cast::<__m128i>();
            match stores {
                QtStores::Pairs(true) => {
                    for (j, &pair) in pairs.iter().enumerate() {
                        _mm256_stream_si256(p.add(j), pair);
                    }
                }
                QtStores::Pairs(false) | QtStores::Unaligned => {
                    for (j, &pair) in pairs.iter().enumerate() {
                        _mm256_storeu_si256(p.add(j), pair);
                    }
                }
                QtStores::Entries => {
                    for (j, &pair) in pairs.iter().enumerate() {
                        _mm_store_si128(e.add(2 * j), _mm256_castsi256_si128(pair));
                        _mm_store_si128(e.add(2 * j + 1), _mm256_extracti128_si256::<1>(pair));
                    }
                }
            }
        } else {
            // Masked stores of the entries that exist (four 32-bit lanes each), rather than a copy through the
            // stack: a `memcpy` call here made the kernels save their sixteen broadcast constants on the stack at
            // every palette's start, whether or not it had a partial block.
            let left = (n - first) as i32;
            let lane = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
            for (j, &pair) in pairs.iter().enumerate() {
                // Entry `2j + lane` exists when it is below `left`: all ones in those lanes.
                let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(left - 2 * j as i32), lane);
                _mm256_maskstore_epi32(p.add(j).cast::<i32>(), mask, pair);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use bytemuck::Zeroable;
    use glam::{Affine3A, Quat, Vec3, Vec3A};
    use proptest::prelude::*;

    use super::*;
    use crate::PaletteFormat;
    use crate::flatten::{copy_rows, fold_rows};
    use crate::formats::qt_f16::{QtFold, encode_cached_scalar, qt_cached_floats};

    /// Any f32 bit pattern one time in eight (NaN, infinities, subnormals), a moderate value otherwise.
    fn element() -> impl Strategy<Value = f32> {
        prop_oneof![7 => -8.0f32..8.0, 1 => any::<u32>().prop_map(f32::from_bits)]
    }

    /// A similarity transform with scale in `[0.25, 4]` (signed when `mirror`), any rotation, translation within
    /// `t`.
    fn similarity(t: f32, mirror: bool) -> impl Strategy<Value = Affine3A> {
        (
            0.25f32..4.0,
            prop::array::uniform4(-1.0f32..1.0),
            prop::array::uniform3(-t..t),
            any::<bool>(),
        )
            .prop_map(move |(s, q, t, flip)| {
                let q = Quat::from_array(q);
                let q = if q.length() > 1e-3 {
                    q.normalize()
                } else {
                    Quat::IDENTITY
                };
                let s = if mirror && flip { -s } else { s };
                Affine3A::from_scale_rotation_translation(Vec3::splat(s), q, Vec3::from(t))
            })
    }

    /// An instance transform: a [`similarity`], or an upright one ([`QtFold::upright`]: turned about +Y only,
    /// mirrored or not) at any angle or a multiple of a quarter turn (more exact zeros in the fold).
    fn instance(t: f32) -> impl Strategy<Value = Affine3A> {
        let angle = prop_oneof![
            -4.0f32..4.0,
            (0..4).prop_map(|k| k as f32 * std::f32::consts::FRAC_PI_2)
        ];
        prop_oneof![
            similarity(t, true),
            (0.25f32..4.0, angle, prop::array::uniform3(-t..t), any::<bool>()).prop_map(|(s, a, t, flip)| {
                let s = if flip { -s } else { s };
                Affine3A::from_scale_rotation_translation(Vec3::splat(s), Quat::from_rotation_y(a), Vec3::from(t))
            }),
        ]
    }

    /// A cached joint: a [`similarity`], or a quarter turn about an axis at a point on an axis (exact zeros in the
    /// cached values, so that a product left out or not changes the sign of a zero).
    fn joint(t: f32) -> impl Strategy<Value = Affine3A> {
        let axes = [Vec3::X, Vec3::Y, Vec3::Z];
        prop_oneof![
            3 => similarity(t, true),
            1 => (0usize..3, 0..4, 0usize..3, -t..t).prop_map(move |(axis, k, along, x)| {
                let q = Quat::from_axis_angle(axes[axis], k as f32 * std::f32::consts::FRAC_PI_2);
                Affine3A::from_rotation_translation(q, axes[along] * x)
            }),
        ]
    }

    /// `0..n` in an order drawn from `seed`: a Fisher–Yates shuffle driven by a linear congruential generator.
    fn shuffled(n: usize, seed: u64) -> Vec<u16> {
        let mut order: Vec<u16> = (0..n).map(|i| u16::try_from(i).expect("a short run")).collect();
        let mut x = seed;
        for i in (1..n).rev() {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            order.swap(i, (x >> 33) as usize % (i + 1));
        }
        order
    }

    /// The first index of `words` on a 64-byte boundary (`words` holds at least 16).
    fn line_start(words: &[u32]) -> usize {
        let start = words.as_ptr().align_offset(64);
        assert!(start < 16, "a line boundary within the first 16 words");
        start
    }

    fn rows_of(m: &Affine3A) -> [Vec4; 3] {
        let t = glam::Mat4::from(*m).transpose();
        [t.x_axis, t.y_axis, t.z_axis]
    }

    /// Streaming only from a cache line; 16-byte stores where 32-byte ones would straddle lines.
    #[test]
    fn qt_stores_follow_the_alignment() {
        let at = |a: usize| a as *mut __m256i;
        for stream in [false, true] {
            assert_eq!(QtStores::new(at(4096), stream), QtStores::Pairs(stream));
            assert_eq!(QtStores::new(at(4096 + 32), stream), QtStores::Pairs(false));
            assert_eq!(QtStores::new(at(4096 + 16), stream), QtStores::Entries);
            assert_eq!(QtStores::new(at(4096 + 48), stream), QtStores::Entries);
            assert_eq!(QtStores::new(at(4096 + 4), stream), QtStores::Unaligned);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// The AVX-512 and AVX kernels give the portable path's bits (which `prop_flatten` checks against the
        /// exact product), at every length, from every 4-byte placement within a cache line, with both store kinds,
        /// and write nothing outside their output.
        #[test]
        fn mat3x4_kernel_equals_the_portable_path(
            joints in prop::collection::vec(joint(50.0), 0..40),
            t in prop::option::of(instance(10.0)),
            offset in 0usize..16,
            stream in any::<bool>(),
        ) {
            prop_assume!(available());
            let rows: Vec<[Vec4; 3]> = joints.iter().map(rows_of).collect();
            let mut plain = vec![Mat3x4F16::default(); rows.len()];
            let poison = match &t {
                None => copy_rows(&rows, &mut plain, false),
                Some(t) => fold_rows(t, &rows, &mut plain, false),
            };
            prop_assert_eq!(poison, Vec4::ZERO);
            let plain: Vec<u32> = bytemuck::cast_slice(&plain).to_vec();
            for wide in [false, true] {
                if wide && !wide_available() {
                    continue;
                }
                // `offset` words (4 bytes each) past a 64-byte boundary before the output, and a line after.
                let mut words = vec![0u32; 16 + offset + 6 * rows.len() + 16];
                let offset = line_start(&words) + offset;
                let end = offset + 6 * rows.len();
                let fast: &mut [Mat3x4F16] = bytemuck::cast_slice_mut(&mut words[offset..end]);
                mat3x4(wide, t.as_ref().map(|t| &t.matrix3), &rows, fast, stream);
                prop_assert_eq!(&words[offset..end], &plain[..], "wide {}", wide);
                prop_assert!(words[..offset].iter().chain(&words[end..]).all(|&w| w == 0), "wide {}", wide);
            }
            // The grouped kernel (folded palettes from a line boundary), from the rows regrouped by four joints.
            if let Some(t) = t.filter(|_| wide_available()) {
                let mut groups = vec![f32::NAN; crate::formats::mat3x4_cached_floats(rows.len())];
                Mat3x4F16::prepare_cached(&rows, &mut groups);
                let mut words = vec![0u32; 16 + 6 * rows.len() + 16];
                let start = line_start(&words);
                let end = start + 6 * rows.len();
                let fast: &mut [Mat3x4F16] = bytemuck::cast_slice_mut(&mut words[start..end]);
                // SAFETY: the CPU has the kernel's features (checked); `fast` starts on a line; `groups` and
                // `rows` cover it.
                unsafe { mat3x4_kernel_grouped(&t.matrix3, &groups, &rows, fast, stream) };
                prop_assert_eq!(&words[start..end], &plain[..]);
                prop_assert!(words[..start].iter().chain(&words[end..]).all(|&w| w == 0));
            }
        }

        /// A run of palettes through `mat3x4_run` gives, palette by palette, the portable path's bits and poison:
        /// in-range palettes through the kernel, and palettes whose transform is huge (out of the f16 range) or
        /// not finite through the portable path, mixed in one run, with and without transforms.
        #[test]
        fn mat3x4_run_equals_the_portable_path(
            poses in prop::collection::vec(prop::collection::vec(similarity(50.0, true), 17), 1..4),
            palettes in prop::collection::vec((0usize..3, similarity(10.0, true), 0u8..8), 0..12),
            with_transforms in any::<bool>(),
            offset in 0usize..16,
            stream in any::<bool>(),
            seed in any::<u64>(),
        ) {
            prop_assume!(available());
            let rows: Vec<Vec<[Vec4; 3]>> = poses.iter().map(|p| p.iter().map(rows_of).collect()).collect();
            let max_abs: Vec<f32> =
                rows.iter().map(|r| r.iter().flatten().fold(0.0f32, |m, v| m.max(v.abs().max_element()))).collect();
            let pose_of: Vec<usize> = palettes.iter().map(|&(p, _, _)| p % rows.len()).collect();
            // One palette in eight gets a transform that overflows f16, one in eight a NaN.
            let transforms: Vec<Affine3A> = palettes
                .iter()
                .map(|&(_, t, kind)| match kind {
                    0 => Affine3A::from_scale(Vec3::splat(1e6)) * t,
                    1 => Affine3A::from_cols_array(&[f32::NAN; 12]),
                    _ => t,
                })
                .collect();
            let transforms: &[Affine3A] = if with_transforms { &transforms } else { &[] };
            // 17 joints (408 bytes): two groups of eight and a single joint; the palettes that start on a line take
            // the grouped kernel (for an even `offset`, some palette among the first eight does).
            let joints = 17;
            let aux: Vec<Vec<f32>> = rows
                .iter()
                .map(|r| {
                    let mut aux = vec![f32::NAN; crate::formats::mat3x4_cached_floats(joints)];
                    Mat3x4F16::prepare_cached(r, &mut aux);
                    aux
                })
                .collect();
            let pose = |i: usize| crate::flatten::CachedPose {
                rows: &rows[pose_of[i]],
                aux: &aux[pose_of[i]],
                max_abs: max_abs[pose_of[i]],
            };
            // `offset` words past a line boundary, the words around the output left zero.
            let mut words = vec![0u32; 16 + offset + 6 * palettes.len() * joints + 16];
            let start = line_start(&words) + offset;
            let end = start + 6 * palettes.len() * joints;
            let fast: &mut [Mat3x4F16] = bytemuck::cast_slice_mut(&mut words[start..end]);
            let order = shuffled(palettes.len(), seed);
            let acc = mat3x4_run(fast, joints, &order, &pose, transforms, stream);
            let mut plain = vec![Mat3x4F16::default(); palettes.len() * joints];
            let mut want = Vec4::ZERO;
            for (i, palette) in plain.chunks_exact_mut(joints).enumerate() {
                want += crate::formats::mat3x4_f16::encode_cached_portable(pose(i), transforms.get(i), palette, false);
            }
            prop_assert_eq!(&words[start..end], bytemuck::cast_slice::<Mat3x4F16, u32>(&plain));
            prop_assert_eq!(acc.is_finite(), want.is_finite());
            prop_assert!(words[..start].iter().chain(&words[end..]).all(|&w| w == 0));
        }

        /// A run of palettes through `entry_run` gives, palette by palette, the portable path's bits and poison:
        /// in-range palettes through the kernel, and palettes whose transform would overflow or is not finite
        /// through the portable path, mixed in one run.
        #[test]
        fn entry_run_equals_the_portable_path(
            poses in prop::collection::vec(prop::collection::vec(similarity(50.0, true), 5), 1..4),
            palettes in prop::collection::vec((0usize..3, similarity(10.0, true), 0u8..8), 0..12),
            offset in 0usize..4,
            stream in any::<bool>(),
            seed in any::<u64>(),
        ) {
            prop_assume!(available());
            let rows: Vec<Vec<[Vec4; 3]>> = poses.iter().map(|p| p.iter().map(rows_of).collect()).collect();
            let max_abs: Vec<f32> =
                rows.iter().map(|r| r.iter().flatten().fold(0.0f32, |m, v| m.max(v.abs().max_element()))).collect();
            let pose_of: Vec<usize> = palettes.iter().map(|&(p, _, _)| p % rows.len()).collect();
            // One palette in eight gets a transform past the overflow check, one in eight a NaN.
            let transforms: Vec<Affine3A> = palettes
                .iter()
                .map(|&(_, t, kind)| match kind {
                    0 => Affine3A::from_scale(Vec3::splat(1e36)) * t,
                    1 => Affine3A::from_cols_array(&[f32::NAN; 12]),
                    _ => t,
                })
                .collect();
            let joints = 5;
            let pose = |i: usize| crate::flatten::CachedPose { rows: &rows[pose_of[i]], aux: &[], max_abs: max_abs[pose_of[i]] };
            let mut fast = vec![PaletteEntry::zeroed(); palettes.len() * joints + offset];
            let order = shuffled(palettes.len(), seed);
            let acc = entry_run(&mut fast[offset..], joints, &order, &pose, &transforms, stream);
            let mut plain = vec![PaletteEntry::zeroed(); palettes.len() * joints];
            let mut want = Vec4::ZERO;
            for (i, palette) in plain.chunks_exact_mut(joints).enumerate() {
                want += fold_rows(&transforms[i], pose(i).rows, palette, false);
            }
            let bits = |e: &[PaletteEntry]| e.iter().flat_map(|e| e.rows.iter().flatten().map(|x| x.to_bits())).collect::<Vec<_>>();
            prop_assert_eq!(bits(&fast[offset..]), bits(&plain));
            prop_assert_eq!(acc.is_finite(), want.is_finite());
        }

        /// The AVX-512 and AVX f32 kernels give the portable path's bits (`fold_rows`, which `prop_flatten`
        /// checks against the exact product) at every length, from every 4-byte placement within a cache line,
        /// with both store kinds, and write nothing outside their output.
        #[test]
        fn entry_kernel_equals_the_portable_path(
            joints in prop::collection::vec(similarity(50.0, true), 0..40),
            linear in prop::array::uniform9(-4.0f32..4.0),
            translation in prop::array::uniform3(-1000.0f32..1000.0),
            offset in 0usize..16,
            stream in any::<bool>(),
        ) {
            prop_assume!(available());
            // Any affine transform, not only similarities: the kernel does not rely on the format's precondition.
            let t = Affine3A::from_cols_array(&[
                linear[0], linear[1], linear[2], linear[3], linear[4], linear[5], linear[6], linear[7], linear[8],
                translation[0], translation[1], translation[2],
            ]);
            let rows: Vec<[Vec4; 3]> = joints.iter().map(rows_of).collect();
            let mut plain = vec![PaletteEntry::zeroed(); rows.len()];
            let poison = fold_rows(&t, &rows, &mut plain, false);
            prop_assert_eq!(poison, Vec4::ZERO);
            let plain: Vec<u32> = bytemuck::cast_slice(&plain).to_vec();
            for wide in [false, true] {
                if wide && !wide_available() {
                    continue;
                }
                // `offset` words (4 bytes each) past a 64-byte boundary before the output, and a line after.
                let mut words = vec![0u32; 16 + offset + 12 * rows.len() + 16];
                let offset = line_start(&words) + offset;
                let end = offset + 12 * rows.len();
                let fast: &mut [PaletteEntry] = bytemuck::cast_slice_mut(&mut words[offset..end]);
                entry_with(wide, &t, &rows, fast, stream);
                prop_assert_eq!(&words[offset..end], &plain[..], "wide {}", wide);
                prop_assert!(words[..offset].iter().chain(&words[end..]).all(|&w| w == 0), "wide {}", wide);
            }
        }

        /// The AVX-512 skinning rows give the portable path's bits, poison and maximum, for any pose elements
        /// (non-finite ones included, which both report as poison).
        #[test]
        fn skin_rows_equal_the_portable_path(
            pose in prop::collection::vec(prop::array::uniform12(element()), 1..6),
            skin in prop::collection::vec((0usize..6, prop::array::uniform12(-3.0f32..3.0)), 0..20),
        ) {
            prop_assume!(skin_rows_available());
            let pose: Vec<Affine3A> = pose.iter().map(Affine3A::from_cols_array).collect();
            let joints: Vec<u16> = skin.iter().map(|&(j, _)| (j % pose.len()) as u16).collect();
            let ibms: Vec<[Vec4; 3]> = skin
                .iter()
                .map(|(_, e)| [Vec4::from_slice(&e[0..4]), Vec4::from_slice(&e[4..8]), Vec4::from_slice(&e[8..12])])
                .collect();
            let mut fast = vec![[Vec4::splat(7.0); 3]; skin.len()];
            let (poison, max) = skin_rows(&pose, &joints, &ibms, &mut fast);
            let mut plain = vec![[Vec4::ZERO; 3]; skin.len()];
            let want = crate::flatten::skin_rows_with(&pose, &joints, &ibms, &mut plain);
            prop_assert_eq!(poison == Vec4::ZERO, want == Vec4::ZERO);
            if want == Vec4::ZERO {
                let bits = |r: &[[Vec4; 3]]| r.iter().flatten().map(|v| v.to_array().map(f32::to_bits)).collect::<Vec<_>>();
                prop_assert_eq!(bits(&fast), bits(&plain));
                prop_assert_eq!(max.to_bits(), crate::flatten::max_abs_of(&plain).to_bits());
            }
        }

        /// A run through `qt_run_avx512` gives, palette by palette, the scalar twin's bits with the transform's
        /// own fold, and the same finiteness of its poison: in-range palettes through the kernel, and palettes whose
        /// transform leaves the f16 range or is not finite through the twin, mixed in one run of up to forty
        /// palettes (so more than one group of sixteen folds).
        #[test]
        fn qt_run_equals_its_scalar_twin(
            poses in prop::collection::vec((prop::collection::vec(joint(50.0), 5), 0u8..3), 1..4),
            palettes in prop::collection::vec((0usize..3, instance(10.0), 0u8..8), 0..40),
            stream in any::<bool>(),
            offset in 0usize..16,
            seed in any::<u64>(),
        ) {
            let Some(kernel) = QtKernel::detect().filter(|k| k.avx512()) else {
                return Err(TestCaseError::reject("no AVX-512F"));
            };
            let joints = 5;
            // Poses of kind 0 have one scale for all joints (the usual skeleton), whose folded scales share an f16
            // code (`uniform_scale_code`): the kernel then stores the code.
            let poses: Vec<Vec<Affine3A>> = poses
                .into_iter()
                .map(|(p, kind)| {
                    if kind != 0 {
                        return p;
                    }
                    p.iter()
                        .map(|m| {
                            let (_, r, t) = m.to_scale_rotation_translation();
                            Affine3A::from_scale_rotation_translation(Vec3::splat(1.5), r, t)
                        })
                        .collect()
                })
                .collect();
            let rows: Vec<Vec<[Vec4; 3]>> = poses.iter().map(|p| p.iter().map(rows_of).collect()).collect();
            let aux: Vec<Vec<f32>> = rows
                .iter()
                .map(|r| {
                    let mut aux = vec![f32::NAN; qt_cached_floats(joints)];
                    QtF16::prepare_cached(r, &mut aux);
                    aux
                })
                .collect();
            let pose_of: Vec<usize> = palettes.iter().map(|&(p, _, _)| p % rows.len()).collect();
            let transforms: Vec<Affine3A> = palettes
                .iter()
                .map(|&(_, t, kind)| match kind {
                    0 => Affine3A::from_scale(Vec3::splat(1e6)) * t,
                    1 => Affine3A::from_cols_array(&[f32::NAN; 12]),
                    _ => t,
                })
                .collect();
            let pose = |i: usize| crate::flatten::CachedPose { rows: &rows[pose_of[i]], aux: &aux[pose_of[i]], max_abs: 0.0 };
            // `offset` words past a line boundary, the words around the output left zero.
            let mut words = vec![0u32; 16 + offset + 4 * palettes.len() * joints + 16];
            let start = line_start(&words) + offset;
            let end = start + 4 * palettes.len() * joints;
            let fast: &mut [QtF16] = bytemuck::cast_slice_mut(&mut words[start..end]);
            let order = shuffled(palettes.len(), seed);
            let acc = qt_run_avx512(kernel, fast, joints, &order, &pose, &transforms, stream);
            let mut want = Vec4::ZERO;
            for (i, (t, fast)) in transforms.iter().zip(fast.chunks_exact(joints)).enumerate() {
                let mut plain = vec![QtF16::default(); joints];
                let blocks = &aux[pose_of[i]][crate::formats::qt_f16::QT_HEADER..];
                let poison = encode_cached_scalar(Some(&QtFold::new(t)), blocks, &mut plain);
                want += poison;
                // A non-finite fold's NaN payloads may differ between its sixteen-lane and scalar decompositions.
                if t.is_finite() {
                    prop_assert_eq!(fast, &plain[..], "palette {}", i);
                }
            }
            prop_assert_eq!(acc.is_finite(), want.is_finite());
            prop_assert!(words[..start].iter().chain(&words[end..]).all(|&w| w == 0));
        }

        /// Decomposing four instance transforms at once gives the bits of one at a time.
        #[test]
        fn four_folds_equal_single_folds(ts in prop::array::uniform4(similarity(100.0, true))) {
            let four = QtFold::new4([&ts[0], &ts[1], &ts[2], &ts[3]]);
            for (t, f) in ts.iter().zip(&four) {
                prop_assert_eq!(*f, QtFold::new(t));
            }
        }

        /// The AVX QtF16 kernel gives its scalar twin's bits (and the twin, without a transform, gives `encode`'s),
        /// from every 4-byte placement within a cache line (so with each kind of [`QtStores`]), and writes nothing
        /// outside its output.
        #[test]
        fn qt_kernel_equals_its_scalar_twin(
            joints in prop::collection::vec(similarity(50.0, true), 0..40),
            t in prop::option::of(similarity(10.0, true)),
            offset in 0usize..16,
            stream in any::<bool>(),
        ) {
            let Some(kernel) = QtKernel::detect() else {
                return Err(TestCaseError::reject("no AVX2, F16C and FMA"));
            };
            let rows: Vec<[Vec4; 3]> = joints.iter().map(rows_of).collect();
            let mut aux = vec![f32::NAN; qt_cached_floats(rows.len())];
            QtF16::prepare_cached(&rows, &mut aux);
            let blocks = &aux[crate::formats::qt_f16::QT_HEADER..];
            let fold = t.as_ref().map(QtFold::new);
            let mut plain = vec![QtF16::default(); rows.len()];
            let poison = encode_cached_scalar(fold.as_ref(), blocks, &mut plain);
            prop_assert_eq!(poison, Vec4::ZERO);
            // The detected kernel (AVX-512 where the CPU has it) and the AVX2 one.
            for kernel in [kernel, kernel.avx2_only()] {
                // `offset` words (4 bytes each) past a line boundary, with the words before the output and a
                // block's worth after it all left zero.
                let mut words = vec![0u32; 16 + offset + 4 * rows.len() + 64];
                let start = line_start(&words) + offset;
                let end = start + 4 * rows.len();
                let fast: &mut [QtF16] = bytemuck::cast_slice_mut(&mut words[start..end]);
                qt(kernel, fold.as_ref(), blocks, fast, stream);
                prop_assert_eq!(&*fast, &plain[..], "{:?}", kernel);
                prop_assert!(words[..start].iter().chain(&words[end..]).all(|&w| w == 0), "{:?}", kernel);
            }
            if t.is_none() {
                for (k, m) in joints.iter().enumerate() {
                    prop_assert_eq!(plain[k], QtF16::encode(m, Vec3A::ZERO), "joint {}", k);
                }
            }
        }
    }
}
