//! The SIMD tier: AVX2, FMA and F16C kernels of [`crate::FlattenJob`]'s shared-pose path, one per format.
//!
//! Each kernel computes the same IEEE operations in the same order as its portable twin, so the two give the same
//! bits (`kernels/tests.rs` checks it):
//! - [`entry`]: the f32 [`PaletteEntry`] folded by `T`, each row `T[r][0]·S₀ + (T[r][1]·S₁ + (T[r][2]·S₂ + t_r))`
//!   in three fused multiply-adds (twin: `RowFold::apply_fused`), two joints (96 bytes) per iteration.
//! - [`mat3x4`]: [`Mat3x4F16`] relative to `T`'s translation, each row `T[r][0]·S₀ + (T[r][1]·S₁ + T[r][2]·S₂)`
//!   with the outer two operations fused (twin: `RowFold::apply_relative`), then `vcvtps2ph`, two joints per
//!   iteration.
//! - [`qt`]: [`QtF16`] from the cache's blocks of sixteen decomposed joints (see `formats/qt_f16.rs`): the
//!   quaternion product and the rotated translation as fused chains and the scale product (twin: `QtFold::apply`),
//!   `vcvtps2ph` of each component, and an 8 × 8 transpose of halves that leaves two entries per 256-bit register.
//! - [`halves`]: the F16C conversion loop of the f16 formats' row encoders (twin: `half::f16::from_f32`).
//!
//! The callers check that no value leaves the range the kernel needs (no f32 overflow for [`entry`], the f16 range
//! for [`mat3x4`] and [`qt`], so that no clamp is needed): a palette outside it takes the portable twin, which
//! clamps and reports non-finite values.
//!
//! Streaming (non-temporal) stores are issued only when asked and the destination is aligned for them (16 bytes for
//! [`entry`] and [`mat3x4`], a cache line for [`qt`]); each kernel that streams calls
//! [`super::note_streaming`], and the job fences every task that streams ([`super::stream_fence`]).

#![allow(
    unsafe_code,
    reason = "AVX2/FMA/F16C intrinsics after run-time detection, with loads and stores through checked pointers"
)]

use std::arch::x86_64::{
    __m128, __m128i, __m256, __m256i, _MM_FROUND_TO_NEAREST_INT, _mm_castpd_si128, _mm_castsi128_pd, _mm_cvtps_ph,
    _mm_fmadd_ps, _mm_loadu_ps, _mm_mul_ps, _mm_set1_ps, _mm_setr_ps, _mm_shuffle_pd, _mm_storel_epi64, _mm_storeu_ps,
    _mm_storeu_si128, _mm_stream_ps, _mm_stream_si128, _mm_unpackhi_epi64, _mm_unpacklo_epi64, _mm256_and_ps,
    _mm256_broadcast_ps, _mm256_cmpgt_epi32, _mm256_cvtps_ph, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_loadu2_m128,
    _mm256_maskstore_epi32, _mm256_mul_ps, _mm256_set_m128i, _mm256_set1_epi32, _mm256_set1_ps, _mm256_setr_epi32,
    _mm256_setr_ps, _mm256_storeu_ps, _mm256_storeu_si256, _mm256_stream_ps, _mm256_stream_si256,
    _mm256_unpackhi_epi16, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpacklo_epi16, _mm256_unpacklo_epi32,
    _mm256_unpacklo_epi64, _mm256_xor_ps,
};

use glam::Vec4;

use crate::formats::qt_f16::{QT_BLOCK, QT_BLOCK_FLOATS, QtFold};
use crate::{Mat3x4F16, PaletteEntry, QtF16};

/// Proof that the CPU has AVX2, FMA and F16C: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Avx2(());

impl Avx2 {
    /// `Some` when the CPU has AVX2, FMA and F16C (the standard library caches the detection).
    #[inline]
    pub fn detect() -> Option<Self> {
        (std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c"))
        .then_some(Self(()))
    }
}

/// Writes `T × rows[k]` into `out[k]` for every `k < out.len()` (`e` is `T`'s linear part by rows, `t` its
/// translation), streamed when `stream` and `out` is 16-byte aligned.
///
/// # Panics
///
/// When `rows` is shorter than `out` (the caller's bug).
#[inline]
pub fn entry(_: Avx2, e: &[[f32; 3]; 3], t: [f32; 3], rows: &[[Vec4; 3]], out: &mut [PaletteEntry], stream: bool) {
    assert!(rows.len() >= out.len(), "checked by the caller");
    // SAFETY: the token proves AVX2 and FMA; `rows` covers `out`.
    unsafe { entry_kernel(e, t, rows, out, stream) }
}

/// One joint of [`entry_kernel`] in 128-bit registers, streamed when `stream` (then `dst` is 16-byte aligned).
///
/// # Safety
///
/// The CPU has AVX and FMA; `src` points to 12 readable floats and `dst` to 12 writable ones.
#[inline]
#[target_feature(enable = "avx2,fma")]
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

/// The kernel of [`entry`]: two joints per iteration as three 256-bit registers, `[row 0 | row 1]` of joint `k`,
/// `[row 2 of k | row 0 of k + 1]` and `[row 1 | row 2]` of `k + 1`, each from rows broadcast or paired straight from
/// memory, so no shuffles. A destination 16 bytes past a 32-byte boundary gets one single joint first, so that no
/// 32-byte store straddles two cache lines.
///
/// # Safety
///
/// The CPU has AVX2 and FMA, and `rows.len() >= out.len()`.
#[target_feature(enable = "avx2,fma")]
unsafe fn entry_kernel(e: &[[f32; 3]; 3], t: [f32; 3], rows: &[[Vec4; 3]], out: &mut [PaletteEntry], stream: bool) {
    let n = out.len();
    let src = rows.as_ptr().cast::<f32>();
    let dst = out.as_mut_ptr().cast::<f32>();
    let halves = |a: f32, b: f32| _mm256_setr_ps(a, a, a, a, b, b, b, b);
    let coefficients = |r0: usize, r1: usize| [0, 1, 2].map(|c| halves(e[r0][c], e[r1][c]));
    let (ea, eb, ec) = (coefficients(0, 1), coefficients(2, 0), coefficients(1, 2));
    let shift = |a: f32, b: f32| _mm256_setr_ps(0.0, 0.0, 0.0, a, 0.0, 0.0, 0.0, b);
    let (ta, tb, tc) = (shift(t[0], t[1]), shift(t[2], t[0]), shift(t[1], t[2]));
    // The twin's order: e₀·S₀ + (e₁·S₁ + (e₂·S₂ + t)), all fused.
    let rows_of = |e: &[__m256; 3], s: [__m256; 3], t: __m256| {
        _mm256_fmadd_ps(e[0], s[0], _mm256_fmadd_ps(e[1], s[1], _mm256_fmadd_ps(e[2], s[2], t)))
    };
    let stream16 = stream && (dst as usize).is_multiple_of(16);
    if stream16 && n > 0 {
        super::note_streaming();
    }
    let mut k = 0;
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

/// Encodes `rows[k]`, or `e × rows[k]` relative to `T`'s translation when `e` (`T`'s linear part by rows) is given,
/// into `out[k]` for every `k < out.len()`, streamed when `stream` and the pairs of joints are 16-byte aligned.
/// Every value must be within the f16 range (the kernel does not clamp).
///
/// # Panics
///
/// When `rows` is shorter than `out` (the caller's bug).
#[inline]
pub fn mat3x4(_: Avx2, e: Option<&[[f32; 3]; 3]>, rows: &[[Vec4; 3]], out: &mut [Mat3x4F16], stream: bool) {
    assert!(rows.len() >= out.len(), "checked by the caller");
    // SAFETY: the token proves AVX2, FMA and F16C; `rows` covers `out`.
    unsafe {
        match e {
            Some(e) => mat3x4_kernel::<true>(e, rows, out, stream),
            None => mat3x4_kernel::<false>(&[[0.0; 3]; 3], rows, out, stream),
        }
    }
}

/// One joint of [`mat3x4_kernel`] in 128-bit registers: three `vcvtps2ph` and three 8-byte stores.
///
/// # Safety
///
/// The CPU has AVX2, F16C and FMA; `src` points to 12 readable floats and `dst` to 24 writable bytes.
#[inline]
#[target_feature(enable = "avx2,f16c,fma")]
unsafe fn mat3x4_one<const FOLD: bool>(e: &[[f32; 3]; 3], src: *const f32, dst: *mut u8) {
    // SAFETY: as the function's contract states.
    unsafe {
        let s = [_mm_loadu_ps(src), _mm_loadu_ps(src.add(4)), _mm_loadu_ps(src.add(8))];
        for (r, e) in e.iter().enumerate() {
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

/// The kernel of [`mat3x4`]: two joints per iteration in 256-bit registers (`[row r of joint k | row r of joint
/// k + 1]`), then `vcvtps2ph` and three 16-byte stores per pair. A destination 8 bytes past a 16-byte boundary gets
/// one single joint first.
///
/// # Safety
///
/// The CPU has AVX2, F16C and FMA, and `rows.len() >= out.len()`.
#[target_feature(enable = "avx2,f16c,fma")]
unsafe fn mat3x4_kernel<const FOLD: bool>(e: &[[f32; 3]; 3], rows: &[[Vec4; 3]], out: &mut [Mat3x4F16], stream: bool) {
    let n = out.len();
    let src = rows.as_ptr().cast::<f32>();
    let dst = out.as_mut_ptr().cast::<u8>();
    let splat = |r: usize| e[r].map(|x| _mm256_set1_ps(x));
    let (e0, e1, e2) = (splat(0), splat(1), splat(2));
    // The twin's order: e₀·S₀ + (e₁·S₁ + e₂·S₂), the outer two fused.
    let row = |e: &[__m256; 3], s0: __m256, s1: __m256, s2: __m256| {
        _mm256_fmadd_ps(e[0], s0, _mm256_fmadd_ps(e[1], s1, _mm256_mul_ps(e[2], s2)))
    };
    let mut k = 0;
    if n > 0 && dst as usize % 16 == 8 {
        // SAFETY: joint 0 exists; its 12 floats and 24 bytes are inside `rows` and `out`.
        unsafe { mat3x4_one::<FOLD>(e, src, dst) };
        k = 1;
    }
    // SAFETY: `k <= n`, so `dst + 24k` is inside `out` or one past its end.
    let stream = stream && (unsafe { dst.add(24 * k) } as usize).is_multiple_of(16);
    if stream && k + 2 <= n {
        super::note_streaming();
    }
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
        unsafe { mat3x4_one::<FOLD>(e, src.add(12 * k), dst.add(24 * k)) };
    }
}

/// Encodes the cached blocks of decomposed joints (see `QT_BLOCK_FLOATS`), folded by `fold` when given, into
/// `out`, streamed when `stream` and `out` starts on a cache line. Every value must be within the f16 range.
///
/// # Panics
///
/// When `blocks` holds fewer than `out.len()` joints (the caller's bug).
#[inline]
pub fn qt(_: Avx2, fold: Option<&QtFold>, blocks: &[f32], out: &mut [QtF16], stream: bool) {
    assert!(
        blocks.len() >= out.len().div_ceil(QT_BLOCK) * QT_BLOCK_FLOATS,
        "checked by the caller"
    );
    // SAFETY: the token proves AVX2, F16C and FMA; `blocks` covers `out`.
    unsafe {
        match fold {
            Some(f) => qt_kernel::<true>(f, blocks, out, stream),
            None => qt_kernel::<false>(&QtFold::IDENTITY, blocks, out, stream),
        }
    }
}

/// The kernel of [`qt`], one block of 16 joints per iteration: the fold on the block's even and odd joints (eight
/// lanes each), `vcvtps2ph` of every component, and [`store_block`].
///
/// # Safety
///
/// The CPU has AVX2, F16C and FMA, and `blocks` holds `out.len().div_ceil(16)` whole blocks.
#[target_feature(enable = "avx2,f16c,fma")]
unsafe fn qt_kernel<const FOLD: bool>(f: &QtFold, blocks: &[f32], out: &mut [QtF16], stream: bool) {
    let n = out.len();
    let dst = out.as_mut_ptr().cast::<__m256i>();
    // Streaming only from a cache line, so that every whole block writes whole lines; 32-byte stores otherwise.
    let stream = stream && (dst as usize).is_multiple_of(64);
    if stream && n > 0 {
        super::note_streaming();
    }
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
        let (x, y, z, w) = (quat(&q[0]), quat(&q[1]), quat(&q[2]), quat(&q[3]));
        // The hemisphere with w ≥ 0: flip all four when w's sign bit is set.
        let flip = _mm256_and_ps(w, sign);
        [
            _mm256_xor_ps(x, flip),
            _mm256_xor_ps(y, flip),
            _mm256_xor_ps(z, flip),
            _mm256_xor_ps(w, flip),
            rot(&l[0]),
            rot(&l[1]),
            rot(&l[2]),
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
        // SAFETY: the block's entries from `16b` are inside `out` (the last block stores only those that exist).
        unsafe { store_block(h, dst, b * QT_BLOCK, n, stream) };
    }
}

/// Transposes a block's components `h` (as halves: the block's even joints in the low 128 bits of each register,
/// its odd joints in the high 128) to entries, with an 8 × 8 transpose of halves in both 128-bit lanes at once
/// that leaves joints `2j` and `2j + 1` side by side, and stores them at entry `first` of `dst` (`n` entries),
/// streamed when `stream`, or, for the last, partial block, only its `n - first` entries with masked stores.
///
/// # Safety
///
/// The CPU has AVX2; `dst` holds `n` entries, `first < n`, and `dst` is 64-byte aligned when `stream`.
#[inline(always)]
unsafe fn store_block(h: [__m256i; 8], dst: *mut __m256i, first: usize, n: usize, stream: bool) {
    // SAFETY: the CPU has AVX2 (the caller's contract); entries `first..first + 16` are inside `dst` when the block
    // is whole (32 bytes per pair, 32-byte aligned when `stream`); the last, partial block stores only its
    // `n - first` entries.
    unsafe {
        // Per lane, `a[0]`: (x, y) of its joints 0..4, `a[1]`: of its joints 4..8; `a[2]`, `a[3]`: (z, w);
        // `a[4]`..`a[7]`: (dx, dy), (dz, s).
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
            for (j, &pair) in pairs.iter().enumerate() {
                if stream {
                    _mm256_stream_si256(p.add(j), pair);
                } else {
                    _mm256_storeu_si256(p.add(j), pair);
                }
            }
        } else {
            // Entry `2j + lane` exists when it is below `left`: all ones in its four 32-bit lanes.
            let left = (n - first) as i32;
            let lane = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
            for (j, &pair) in pairs.iter().enumerate() {
                let mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(left - 2 * j as i32), lane);
                _mm256_maskstore_epi32(p.add(j).cast::<i32>(), mask, pair);
            }
        }
    }
}

/// For each entry `k` of `dst` (`N` packed pairs each), converts the `N` vectors `values(k)` to four halves each
/// with `vcvtps2ph` (round to nearest even), packed `[(x, y), (z, w)]` with the first half in the low 16 bits. The
/// whole loop, `values` included, is compiled with F16C.
#[inline]
pub fn halves<const N: usize>(_: Avx2, dst: &mut [[u32; 2]], mut values: impl FnMut(usize) -> [Vec4; N]) {
    // SAFETY: the token proves F16C.
    unsafe { halves_f16c(dst, &mut values) }
}

/// The loop of [`halves`].
///
/// # Safety
///
/// The CPU has F16C.
#[target_feature(enable = "avx2,f16c,fma")]
unsafe fn halves_f16c<const N: usize, F: FnMut(usize) -> [Vec4; N]>(dst: &mut [[u32; 2]], values: &mut F) {
    for (k, d) in dst.chunks_exact_mut(N).enumerate() {
        for (d, v) in d.iter_mut().zip(values(k)) {
            // SAFETY: the load reads the 16 bytes of `v`, the store writes the 8 bytes of `*d` (a `&mut`;
            // `_mm_storel_epi64` needs no alignment); the CPU has F16C.
            unsafe {
                let h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm_loadu_ps(v.as_ref().as_ptr()));
                _mm_storel_epi64(d.as_mut_ptr().cast::<__m128i>(), h);
            }
        }
    }
}
