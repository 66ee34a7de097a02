//! The SIMD kernels of [`PosePool::map_instances`](super::PosePool::map_instances): eight instances per step with
//! AVX2 when the CPU has it (chosen at run time), else four per step with SSE2, which every x86_64 CPU has.
//!
//! Both compute the fixed-point mapping of [`TrackMap`] with the same operations in the same order, lane by lane,
//! so that their results are bit for bit those of the scalar kernel
//! (`PosePool::map_instances_scalar`), which `tests/prop_slot_map.rs` and
//! the unit tests here check over random pools, tracks and time bits:
//! - the clamps `p > lo ? p : lo` and `p < hi ? p : hi` are `maxps` and `minps` with `p` first, which return the
//!   second operand on a NaN, as the scalar selects do;
//! - `cvtps2pd`, `mulpd` and `addpd` round as `cvtss2sd`, `mulsd` and `addsd` (no fused multiply-add);
//! - `pmuludq` is exactly the `u32 * u32 -> u64` product;
//! - the slot pair is computed from the track's first slot and slot count instead of read from the pair table;
//!   both give `first + a | (first + b) << 16` for every slot `a` of the track.
//!
//! Intrinsics are safe to call only inside a function compiled with their `#[target_feature]`, so each kernel is
//! one unsafe block: SSE2 is part of x86_64, and the AVX2 kernel (compiled with `#[target_feature]`) is only called
//! after checking the CPU. The other unsafe operations are the stores of the slot refs through a pointer.

use std::arch::x86_64::{
    __m128, __m128i, __m256i, _mm_add_epi16, _mm_add_epi32, _mm_add_pd, _mm_and_si128, _mm_castpd_si128,
    _mm_castps_si128, _mm_castsi128_pd, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_cvtepi32_ps, _mm_cvtps_pd,
    _mm_extract_epi16, _mm_max_epu16, _mm_max_ps, _mm_min_ps, _mm_movehl_ps, _mm_movelh_ps, _mm_movemask_ps,
    _mm_mul_epu32, _mm_mul_pd, _mm_mul_ps, _mm_or_si128, _mm_set_epi16, _mm_set_epi32, _mm_set_ps, _mm_set1_epi32,
    _mm_set1_pd, _mm_set1_ps, _mm_setzero_si128, _mm_shuffle_ps, _mm_slli_epi32, _mm_srli_epi32, _mm_storeu_si128,
    _mm_sub_epi32, _mm_sub_ps, _mm_subs_epu16, _mm_unpackhi_epi32, _mm_unpackhi_epi64, _mm_unpackhi_ps,
    _mm_unpacklo_epi32, _mm_unpacklo_pd, _mm_unpacklo_ps, _mm256_add_epi32, _mm256_add_pd, _mm256_and_si256,
    _mm256_castpd_si256, _mm256_castps_si256, _mm256_castps256_ps128, _mm256_castsi256_pd, _mm256_castsi256_ps,
    _mm256_cmpeq_epi32, _mm256_cvtepi32_ps, _mm256_cvtps_pd, _mm256_extractf128_ps, _mm256_max_ps, _mm256_min_ps,
    _mm256_movemask_ps, _mm256_mul_epu32, _mm256_mul_pd, _mm256_mul_ps, _mm256_or_si256, _mm256_permute4x64_epi64,
    _mm256_set_m128, _mm256_set_m128i, _mm256_set_ps, _mm256_set1_epi32, _mm256_set1_pd, _mm256_set1_ps,
    _mm256_setzero_si256, _mm256_shuffle_ps, _mm256_slli_epi32, _mm256_srli_epi32, _mm256_storeu_si256,
    _mm256_sub_epi32, _mm256_sub_ps, _mm256_unpackhi_epi32, _mm256_unpackhi_epi64, _mm256_unpackhi_ps,
    _mm256_unpacklo_epi32, _mm256_unpacklo_pd, _mm256_unpacklo_ps,
};

use super::SlotRef;
use super::mapping::{ROUND_MAGIC_F64, Scan, TWO_POW_M24, TrackMap};

/// One track's mapping constants as two 16-byte rows, so that four instances gather them with eight aligned
/// loads and a transpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(16))]
pub(super) struct TrackRows {
    /// `[origin, lo, hi, pair0]` (the first three as `f32` bits), where `pair0 = first | (first + 1) << 16` is the
    /// slot pair of slot 0 before the wrap at the end.
    a: [u32; 4],
    /// `[scale (f64, low and high words), mul, last | wrap << 16]`, where `last = K - 1` is the track's last slot
    /// and `wrap` what `slot_b` loses there: `K` (back to the first slot) for looping tracks, 1 (stay on the last
    /// slot) for others.
    b: [u32; 4],
}

impl TrackRows {
    /// The rows of a track mapped by `map`, with its `k` slots from `first`; `looping` selects the wrap.
    /// [`TrackMap::NULL`] takes `first = 0`, `k = 1` and `looping = false`: its pair is `(0, 0)`.
    ///
    /// `k` is below 2^16 because a pool's slots, which hold the largest `K` at least twice (a clip and a bucket
    /// region), are at most [`super::MAX_POOL_SLOTS`]. The slot pair arithmetic wraps modulo 2^16 in each half, so
    /// `first + k = 2^16` works too.
    pub(super) fn new(map: &TrackMap, first: u32, k: u32, looping: bool) -> Self {
        debug_assert!((1..1 << 16).contains(&k), "{k} slots");
        let wrap = if looping { k } else { 1 };
        let scale = map.scale.to_bits();
        Self {
            a: [
                map.origin.to_bits(),
                map.lo.to_bits(),
                map.hi.to_bits(),
                first | first.wrapping_add(1) << 16,
            ],
            b: [scale as u32, (scale >> 32) as u32, map.mul, (k - 1) | wrap << 16],
        }
    }
}

/// The signature of the kernels, for the tests.
#[cfg(test)]
pub(super) type Kernel = fn(&[TrackRows], &[u16], &[f32], &mut [SlotRef]) -> (usize, Scan);

/// Maps a prefix of the instances with the best kernel the CPU runs, and returns its length, a multiple of 8 (AVX2)
/// or 4 (SSE2) (the rest is left to the scalar kernel), and its [`Scan`].
/// `rows` has a power of two entries, indexed with the track masked like the scalar kernel; `times` and `out` are
/// at least as long as `tracks`.
#[inline]
pub(super) fn map_instances(rows: &[TrackRows], tracks: &[u16], times: &[f32], out: &mut [SlotRef]) -> (usize, Scan) {
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (and so AVX), checked just above.
        unsafe { map_instances_avx2(rows, tracks, times, out) }
    } else {
        map_instances_sse2(rows, tracks, times, out)
    }
}

/// The SSE2 kernel: maps and scans the first `tracks.len() / 4 * 4` instances, four at a time, and returns how many,
/// and their scan.
#[inline]
pub(super) fn map_instances_sse2(
    rows: &[TrackRows],
    tracks: &[u16],
    times: &[f32],
    out: &mut [SlotRef],
) -> (usize, Scan) {
    // SAFETY: SSE and SSE2 are part of x86_64, so every CPU this code runs on has them; `store_sse2` gets
    // chunks of four slot refs.
    unsafe {
        let mask = rows.len() - 1;
        let rows = &rows[..=mask];
        let n = tracks.len() & !3;
        let magic = _mm_set1_pd(ROUND_MAGIC_F64);
        let two_pow_m24 = _mm_set1_ps(TWO_POW_M24);
        let low16 = _mm_set1_epi32(0xFFFF);
        let high16 = _mm_set1_epi32(!0xFFFF);
        let exponent = _mm_set1_epi32(0x7F80_0000);
        let mut max_track = _mm_setzero_si128();
        let mut non_finite = _mm_setzero_si128();
        for ((tr, ti), o) in tracks[..n]
            .chunks_exact(4)
            .zip(times[..n].chunks_exact(4))
            .zip(out[..n].chunks_exact_mut(4))
        {
            let row = |i: usize| load_rows(&rows[usize::from(tr[i]) & mask]);
            let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
            // Rows a, transposed: origin, lo, hi and pair0 of the four instances.
            let t0 = _mm_unpacklo_ps(r0.a, r1.a);
            let t1 = _mm_unpacklo_ps(r2.a, r3.a);
            let t2 = _mm_unpackhi_ps(r0.a, r1.a);
            let t3 = _mm_unpackhi_ps(r2.a, r3.a);
            let origin = _mm_movelh_ps(t0, t1);
            let lo = _mm_movehl_ps(t1, t0);
            let hi = _mm_movelh_ps(t2, t3);
            let pair0 = _mm_castps_si128(_mm_movehl_ps(t3, t2));
            // Rows b: the scales of instances 0, 1 and 2, 3; `[mul, last | wrap << 16]` of 0, 1 and 2, 3.
            let s01 = _mm_unpacklo_pd(_mm_castsi128_pd(r0.b), _mm_castsi128_pd(r1.b));
            let s23 = _mm_unpacklo_pd(_mm_castsi128_pd(r2.b), _mm_castsi128_pd(r3.b));
            let m01 = _mm_unpackhi_epi64(r0.b, r1.b);
            let m23 = _mm_unpackhi_epi64(r2.b, r3.b);

            let t = _mm_set_ps(ti[3], ti[2], ti[1], ti[0]);
            // The scan: `max(x, y) = (x - y, saturated) + y` for u16 lanes; all exponent bits set for infinities and NaNs.
            let tr4 = _mm_set_epi16(0, 0, 0, 0, tr[3] as i16, tr[2] as i16, tr[1] as i16, tr[0] as i16);
            max_track = _mm_add_epi16(_mm_subs_epu16(max_track, tr4), tr4);
            let e = _mm_and_si128(_mm_castps_si128(t), exponent);
            non_finite = _mm_or_si128(non_finite, _mm_cmpeq_epi32(e, exponent));
            let p = _mm_sub_ps(t, origin);
            let p = _mm_min_ps(_mm_max_ps(p, lo), hi);
            // The phases, in the low 32 bits of each f64 lane.
            let y01 = _mm_add_pd(_mm_mul_pd(_mm_cvtps_pd(p), s01), magic);
            let y23 = _mm_add_pd(_mm_mul_pd(_mm_cvtps_pd(_mm_movehl_ps(p, p)), s23), magic);
            // `phase * mul` of each instance; `pmuludq` reads lanes 0 and 2, which hold the phases and the `mul`s.
            let q01 = _mm_castsi128_ps(_mm_mul_epu32(_mm_castpd_si128(y01), m01));
            let q23 = _mm_castsi128_ps(_mm_mul_epu32(_mm_castpd_si128(y23), m23));
            let a = _mm_castps_si128(_mm_shuffle_ps::<0b11_01_11_01>(q01, q23));
            let low = _mm_castps_si128(_mm_shuffle_ps::<0b10_00_10_00>(q01, q23));
            let last_wrap = _mm_castps_si128(_mm_shuffle_ps::<0b11_01_11_01>(
                _mm_castsi128_ps(m01),
                _mm_castsi128_ps(m23),
            ));
            let fraction = _mm_castps_si128(_mm_mul_ps(_mm_cvtepi32_ps(_mm_srli_epi32::<8>(low)), two_pow_m24));
            // `first + a | (first + a + 1) << 16`, less `wrap << 16` on the last slot.
            let at_last = _mm_cmpeq_epi32(a, _mm_and_si128(last_wrap, low16));
            let wrap = _mm_and_si128(at_last, _mm_and_si128(last_wrap, high16));
            let pair = _mm_add_epi32(_mm_or_si128(a, _mm_slli_epi32::<16>(a)), pair0);
            let pair = _mm_sub_epi32(pair, wrap);
            store_sse2(
                o,
                _mm_unpacklo_epi32(pair, fraction),
                _mm_unpackhi_epi32(pair, fraction),
            );
        }
        (
            n,
            scan_result(max_track, _mm_movemask_ps(_mm_castsi128_ps(non_finite)) != 0),
        )
    }
}

/// The AVX2 kernel: maps and scans the first `tracks.len() / 8 * 8` instances, eight at a time, and returns how
/// many, and their scan.
///
/// It is the SSE2 kernel on 256-bit registers, whose shuffles stay within 128-bit lanes: rows a of instances `i`
/// and `i + 4` share a register, so that their transpose gives `origin`, `lo`, `hi` and `pair0` in instance order;
/// rows b of instances `i` and `i + 2` share a register, so that the scales and `mul`s line up with the phases
/// that `vcvtps2pd` widens from instances 0 to 3 and 4 to 7. The slot positions then come out in the order
/// 0, 1, 4, 5, 2, 3, 6, 7, so `pair0` is permuted to it, and the final interleave with the fractions puts instances
/// 0 to 3 in the first store and 4 to 7 in the second.
///
/// # Safety
///
/// The CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn map_instances_avx2(
    rows: &[TrackRows],
    tracks: &[u16],
    times: &[f32],
    out: &mut [SlotRef],
) -> (usize, Scan) {
    // SAFETY: the caller checked that the CPU has AVX2 (and so AVX, SSE4.1 and SSE2); `store_avx` gets
    // chunks of eight slot refs.
    unsafe {
        let mask = rows.len() - 1;
        let rows = &rows[..=mask];
        let n = tracks.len() & !7;
        let magic = _mm256_set1_pd(ROUND_MAGIC_F64);
        let two_pow_m24 = _mm256_set1_ps(TWO_POW_M24);
        let low16 = _mm256_set1_epi32(0xFFFF);
        let high16 = _mm256_set1_epi32(!0xFFFF);
        let exponent = _mm256_set1_epi32(0x7F80_0000);
        let mut max_track = _mm_setzero_si128();
        let mut non_finite = _mm256_setzero_si256();
        for ((tr, ti), o) in tracks[..n]
            .chunks_exact(8)
            .zip(times[..n].chunks_exact(8))
            .zip(out[..n].chunks_exact_mut(8))
        {
            let row = |i: usize| load_rows(&rows[usize::from(tr[i]) & mask]);
            let r = [row(0), row(1), row(2), row(3), row(4), row(5), row(6), row(7)];
            // Rows a of instances i and i + 4, transposed: origin, lo, hi and pair0 of instances 0 to 7.
            let a = |i: usize| _mm256_set_m128(r[i + 4].a, r[i].a);
            let (a0, a1, a2, a3) = (a(0), a(1), a(2), a(3));
            let t0 = _mm256_unpacklo_ps(a0, a1);
            let t1 = _mm256_unpacklo_ps(a2, a3);
            let t2 = _mm256_unpackhi_ps(a0, a1);
            let t3 = _mm256_unpackhi_ps(a2, a3);
            let origin = _mm256_shuffle_ps::<0b01_00_01_00>(t0, t1);
            let lo = _mm256_shuffle_ps::<0b11_10_11_10>(t0, t1);
            let hi = _mm256_shuffle_ps::<0b01_00_01_00>(t2, t3);
            let pair0 = _mm256_castps_si256(_mm256_shuffle_ps::<0b11_10_11_10>(t2, t3));
            // Rows b of instances i and i + 2: the scales of instances 0 to 3 and 4 to 7, and their
            // `[mul, last | wrap << 16]` pairs in the same order.
            let b = |i: usize| _mm256_set_m128i(r[i + 2].b, r[i].b);
            let (b0, b1, b4, b5) = (b(0), b(1), b(4), b(5));
            let s0 = _mm256_unpacklo_pd(_mm256_castsi256_pd(b0), _mm256_castsi256_pd(b1));
            let s4 = _mm256_unpacklo_pd(_mm256_castsi256_pd(b4), _mm256_castsi256_pd(b5));
            let m0 = _mm256_unpackhi_epi64(b0, b1);
            let m4 = _mm256_unpackhi_epi64(b4, b5);

            let t = _mm256_set_ps(ti[7], ti[6], ti[5], ti[4], ti[3], ti[2], ti[1], ti[0]);
            let tr8 = _mm_set_epi16(
                tr[7] as i16,
                tr[6] as i16,
                tr[5] as i16,
                tr[4] as i16,
                tr[3] as i16,
                tr[2] as i16,
                tr[1] as i16,
                tr[0] as i16,
            );
            max_track = _mm_max_epu16(max_track, tr8);
            let e = _mm256_and_si256(_mm256_castps_si256(t), exponent);
            non_finite = _mm256_or_si256(non_finite, _mm256_cmpeq_epi32(e, exponent));
            let p = _mm256_sub_ps(t, origin);
            let p = _mm256_min_ps(_mm256_max_ps(p, lo), hi);
            // The phases, in the low 32 bits of each f64 lane.
            let y0 = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(p)), s0), magic);
            let y4 = _mm256_add_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(p)), s4), magic);
            let q0 = _mm256_castsi256_ps(_mm256_mul_epu32(_mm256_castpd_si256(y0), m0));
            let q4 = _mm256_castsi256_ps(_mm256_mul_epu32(_mm256_castpd_si256(y4), m4));
            // Instances 0, 1, 4, 5, 2, 3, 6, 7.
            let a = _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(q0, q4));
            let low = _mm256_castps_si256(_mm256_shuffle_ps::<0b10_00_10_00>(q0, q4));
            let last_wrap = _mm256_castps_si256(_mm256_shuffle_ps::<0b11_01_11_01>(
                _mm256_castsi256_ps(m0),
                _mm256_castsi256_ps(m4),
            ));
            let pair0 = _mm256_permute4x64_epi64::<0b11_01_10_00>(pair0);
            let fraction = _mm256_castps_si256(_mm256_mul_ps(
                _mm256_cvtepi32_ps(_mm256_srli_epi32::<8>(low)),
                two_pow_m24,
            ));
            let at_last = _mm256_cmpeq_epi32(a, _mm256_and_si256(last_wrap, low16));
            let wrap = _mm256_and_si256(at_last, _mm256_and_si256(last_wrap, high16));
            let pair = _mm256_add_epi32(_mm256_or_si256(a, _mm256_slli_epi32::<16>(a)), pair0);
            let pair = _mm256_sub_epi32(pair, wrap);
            // Instances 0, 1, 2, 3 and 4, 5, 6, 7.
            store_avx(
                o,
                _mm256_unpacklo_epi32(pair, fraction),
                _mm256_unpackhi_epi32(pair, fraction),
            );
        }
        (
            n,
            scan_result(max_track, _mm256_movemask_ps(_mm256_castsi256_ps(non_finite)) != 0),
        )
    }
}

/// The [`Scan`] of the u16 lanes of `max_track`, the largest tracks of their lanes, and `non_finite`.
#[inline(always)]
fn scan_result(max_track: __m128i, non_finite: bool) -> Scan {
    // SAFETY: SSE2 is part of x86_64.
    let lanes = unsafe {
        [
            _mm_extract_epi16::<0>(max_track),
            _mm_extract_epi16::<1>(max_track),
            _mm_extract_epi16::<2>(max_track),
            _mm_extract_epi16::<3>(max_track),
            _mm_extract_epi16::<4>(max_track),
            _mm_extract_epi16::<5>(max_track),
            _mm_extract_epi16::<6>(max_track),
            _mm_extract_epi16::<7>(max_track),
        ]
    };
    Scan {
        max_track: lanes.into_iter().max().unwrap_or(0) as u16,
        non_finite,
    }
}

/// The two rows of `rows`, as SSE registers.
#[inline(always)]
fn load_rows(rows: &TrackRows) -> Rows {
    let (a, b) = (rows.a, rows.b);
    // SAFETY: SSE2 is part of x86_64.
    unsafe {
        Rows {
            a: _mm_castsi128_ps(_mm_set_epi32(a[3] as i32, a[2] as i32, a[1] as i32, a[0] as i32)),
            b: _mm_set_epi32(b[3] as i32, b[2] as i32, b[1] as i32, b[0] as i32),
        }
    }
}

/// The rows of a [`TrackRows`] in registers.
#[derive(Clone, Copy)]
struct Rows {
    /// [`TrackRows::a`].
    a: __m128,
    /// [`TrackRows::b`].
    b: __m128i,
}

/// Writes `lo` to `out[0..2]` and `hi` to `out[2..4]`, each lane pair as `[slot_a | slot_b << 16, fraction]`.
#[inline(always)]
fn store_sse2(out: &mut [SlotRef], lo: __m128i, hi: __m128i) {
    assert!(out.len() == 4);
    let p = out.as_mut_ptr().cast::<__m128i>();
    // SAFETY: `out` is four `SlotRef`s, 32 writable bytes: `SlotRef` is `repr(C)` `{u16, u16, f32}` with no
    // padding (8 bytes, asserted next to it), so every 32-bit lane is a valid `u16` pair (little-endian) or `f32`.
    // `_mm_storeu_si128` needs no alignment, and SSE2 is part of x86_64.
    unsafe {
        _mm_storeu_si128(p, lo);
        _mm_storeu_si128(p.add(1), hi);
    }
}

/// Writes `lo` to `out[0..4]` and `hi` to `out[4..8]`, each lane pair as `[slot_a | slot_b << 16, fraction]`.
///
/// # Safety
///
/// The CPU has AVX. Only inlined into the AVX2 kernel.
#[inline(always)]
unsafe fn store_avx(out: &mut [SlotRef], lo: __m256i, hi: __m256i) {
    assert!(out.len() == 8);
    let p = out.as_mut_ptr().cast::<__m256i>();
    // SAFETY: `out` is eight `SlotRef`s, 64 writable bytes, of the layout described in `store_sse2`;
    // `_mm256_storeu_si256` needs no alignment, and the caller's CPU has AVX.
    unsafe {
        _mm256_storeu_si256(p, lo);
        _mm256_storeu_si256(p.add(1), hi);
    }
}
