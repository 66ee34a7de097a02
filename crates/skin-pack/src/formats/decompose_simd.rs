//! [`QtF16`](super::QtF16)'s per-frame decompositions with AVX-512F, sixteen at a time: the cached poses'
//! joints ([`qt_prepare`] from the skinning rows, for `QtF16::prepare_cached`, and [`qt_prepare_pose`] straight
//! from the model-space pose, for `QtF16::prepare_pose`) and the instance transforms of a run ([`qt_folds`], for
//! `QtF16::encode_cached_run`).
//!
//! Both run the portable [`decompose_lanes`] on [`Z`], sixteen f32 lanes of a 512-bit register: the same IEEE
//! operations in the same order, lane by lane (no fused multiply-add, `vsqrtps` and `vdivps` round correctly), so
//! the same bits as [`decompose_lanes`] on `f32` or `Vec4` (tested; a NaN result, from a non-finite transform that
//! the job then reports, may carry another payload or sign). The inputs are gathered (`vgatherdps`) straight
//! into that layout: one element of sixteen matrices per gather. Before, the cache prepared four joints per `Vec4`
//! decomposition with 4 × 4 transposes, and the instance transforms were decomposed four at a time and expanded to
//! the sixteen signed entries of `q_T`'s product matrix. On the development VM (Intel, family 6 model 207, 2
//! threads) those two steps took about 100 µs and 90 µs of the bench's 10,000-instance QtF16 crowd run (about
//! 670 µs), measured by skipping each. Here, one thread prepares the bench's 128 poses of 64 joints in 29–41 µs
//! against 71–87 µs for the `Vec4` path, and skipping the instance decomposition no longer changes the run's time
//! measurably.
//!
//! No array `map` or `from_fn` closure computes with [`Z`]: a closure that LLVM leaves out of line runs outside
//! the target-feature function, where the lane operations become calls (in one build, `decompose_lanes`'s final
//! `map` did, and the preparation ran three times slower than in another).

#![allow(
    unsafe_code,
    reason = "AVX-512F intrinsics after run-time detection, with masked gathers inside checked slices"
)]

use std::arch::x86_64::{
    __m512, __mmask16, _CMP_GT_OQ, _CMP_LE_OQ, _CMP_LT_OQ, _CMP_UNORD_Q, _mm512_abs_ps, _mm512_add_epi32,
    _mm512_add_ps, _mm512_castps_si512, _mm512_castsi512_ps, _mm512_cmp_ps_mask, _mm512_cmplt_epi32_mask,
    _mm512_div_ps, _mm512_fmadd_ps, _mm512_loadu_ps, _mm512_loadu_si512, _mm512_mask_blend_ps,
    _mm512_mask_i32gather_ps, _mm512_maskz_mov_ps, _mm512_max_ps, _mm512_min_epu32, _mm512_mul_ps, _mm512_mullo_epi32,
    _mm512_range_ps, _mm512_reduce_max_ps, _mm512_set1_epi32, _mm512_set1_ps, _mm512_setr_epi32, _mm512_setzero_ps,
    _mm512_sqrt_ps, _mm512_storeu_ps, _mm512_sub_ps, _mm512_xor_si512,
};

use glam::{Affine3A, Vec4};

use super::qt_f16::{Lane, QT_BLOCK, QT_BLOCK_FLOATS, QtFold, decompose_lanes};

/// Sixteen f32 lanes for [`decompose_lanes`].
///
/// Only the `#[target_feature(enable = "avx512f")]` functions of this module make or use a `Z` (the type is
/// private to it), so its operations, which are inlined into them, always run where AVX-512F is enabled.
#[derive(Clone, Copy)]
struct Z(__m512);

macro_rules! z_binary {
    ($trait:ident, $method:ident, $intrinsic:ident) => {
        impl std::ops::$trait for Z {
            type Output = Z;
            #[inline(always)]
            fn $method(self, b: Z) -> Z {
                // SAFETY: a `Z` exists only inside AVX-512F functions (see the type).
                Z(unsafe { $intrinsic(self.0, b.0) })
            }
        }
    };
}
z_binary!(Add, add, _mm512_add_ps);
z_binary!(Sub, sub, _mm512_sub_ps);
z_binary!(Mul, mul, _mm512_mul_ps);
z_binary!(Div, div, _mm512_div_ps);

impl std::ops::Neg for Z {
    type Output = Z;
    /// The sign bit flipped, as f32 negation does (exact; `−0` for `0`).
    #[inline(always)]
    fn neg(self) -> Z {
        // SAFETY: a `Z` exists only inside AVX-512F functions (see the type).
        Z(unsafe {
            _mm512_castsi512_ps(_mm512_xor_si512(
                _mm512_castps_si512(self.0),
                _mm512_set1_epi32(i32::MIN),
            ))
        })
    }
}

impl Lane for Z {
    type Mask = __mmask16;
    #[inline(always)]
    fn splat(x: f32) -> Self {
        // SAFETY: called only inside AVX-512F functions (see the type).
        Z(unsafe { _mm512_set1_ps(x) })
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        // SAFETY: a `Z` exists only inside AVX-512F functions (see the type).
        Z(unsafe { _mm512_sqrt_ps(self.0) })
    }
    /// Ordered comparisons, false for NaN as `<` is on `f32`.
    #[inline(always)]
    fn lt(self, x: f32) -> __mmask16 {
        // SAFETY: a `Z` exists only inside AVX-512F functions (see the type).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LT_OQ>(self.0, _mm512_set1_ps(x)) }
    }
    #[inline(always)]
    fn gt(self, x: f32) -> __mmask16 {
        // SAFETY: a `Z` exists only inside AVX-512F functions (see the type).
        unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(self.0, _mm512_set1_ps(x)) }
    }
    #[inline(always)]
    fn le(self, x: f32) -> __mmask16 {
        // SAFETY: a `Z` exists only inside AVX-512F functions (see the type).
        unsafe { _mm512_cmp_ps_mask::<_CMP_LE_OQ>(self.0, _mm512_set1_ps(x)) }
    }
    #[inline(always)]
    fn select(mask: __mmask16, a: Self, b: Self) -> Self {
        // SAFETY: a `Z` exists only inside AVX-512F functions (see the type).
        Z(unsafe { _mm512_mask_blend_ps(mask, b.0, a.0) })
    }
}

/// Whether the CPU has AVX-512F (the detection is cached by the standard library).
#[inline]
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

/// `QtF16::prepare_cached`'s blocks with AVX-512F: block `b` holds joints `16b..16b + 16` of `rows`, lane `L` of
/// each component is joint `2L` (`L < 8`) or `2(L − 8) + 1` (the layout of `qt_lane`), and lanes past the skin
/// are zero. Returns the largest `|tᵢ|` and the largest `|s|`.
///
/// # Panics
///
/// When the CPU lacks AVX-512F or `blocks` is not `rows.len().div_ceil(16)` blocks (the caller's bugs).
pub fn qt_prepare(rows: &[[Vec4; 3]], blocks: &mut [f32]) -> (f32, f32) {
    assert!(
        available() && blocks.len() == rows.len().div_ceil(QT_BLOCK) * QT_BLOCK_FLOATS,
        "checked by the caller"
    );
    // SAFETY: the CPU has AVX-512F (asserted) and `blocks` covers `rows` (asserted).
    unsafe { qt_prepare_kernel(rows, blocks) }
}

/// The kernel of [`qt_prepare`].
///
/// # Safety
///
/// The CPU has AVX-512F, and `blocks` holds `rows.len().div_ceil(16)` blocks.
#[target_feature(enable = "avx512f")]
unsafe fn qt_prepare_kernel(rows: &[[Vec4; 3]], blocks: &mut [f32]) -> (f32, f32) {
    let n = rows.len();
    // The joint of each lane within its block, and its first float (12 per joint: three rows of four).
    let joint = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    let floats = _mm512_mullo_epi32(joint, _mm512_set1_epi32(12));
    let (mut max_t, mut max_s) = (_mm512_setzero_ps(), _mm512_setzero_ps());
    for (b, block) in blocks.chunks_exact_mut(QT_BLOCK_FLOATS).enumerate() {
        let first = b * QT_BLOCK;
        let valid = _mm512_cmplt_epi32_mask(joint, _mm512_set1_epi32((n - first) as i32));
        let base = rows[first..].as_ptr().cast::<f32>();
        // Element `e` (row `e / 4`, column `e % 4`) of every joint of the block; zero past the skin.
        // SAFETY: a set mask bit means joint `first + joint[L] < n`, whose 12 floats are inside `rows`; masked
        // lanes are not read.
        let at = |e: i32| unsafe {
            Z(_mm512_mask_i32gather_ps::<4>(
                _mm512_setzero_ps(),
                valid,
                _mm512_add_epi32(floats, _mm512_set1_epi32(e)),
                base,
            ))
        };
        let store = |block: &mut [f32], c: usize, v: __m512| {
            // SAFETY: component `c < 8` is 16 floats inside the block.
            unsafe { _mm512_storeu_ps(block[c * QT_BLOCK..][..QT_BLOCK].as_mut_ptr(), v) }
        };
        // The translation first, stored at once (zero past the skin, as gathered), so that only the linear part
        // stays live through the decomposition: with the translation live too, LLVM spilled registers and
        // reloaded them with masked loads, which do not forward from stores (about 3× slower).
        for r in 0..3 {
            let t = at(4 * r as i32 + 3).0;
            max_t = _mm512_max_ps(max_t, _mm512_abs_ps(t));
            store(block, 4 + r, t);
        }
        // Written out, as in `decompose_lanes`: no array `map`, whose closure may be left out of line.
        let col = |c: i32| [at(c), at(4 + c), at(8 + c)];
        let cols = [col(0), col(1), col(2)];
        let (q, s) = decompose_lanes(&cols);
        // A zero matrix past the skin decomposes to `s = 0` and a half-turn, which is zeroed.
        max_s = _mm512_max_ps(max_s, _mm512_abs_ps(s.0));
        store(block, 7, s.0);
        for (c, v) in q.into_iter().enumerate() {
            store(block, c, _mm512_maskz_mov_ps(valid, v.0));
        }
    }
    (_mm512_reduce_max_ps(max_t), _mm512_reduce_max_ps(max_s))
}

/// The floats per block of a skin's inverse bind rows in [`qt_prepare_pose`]'s lanes: element `(r, c)` of sixteen
/// joints' inverse bind rows at `(4r + c) · 16`, joint `k` of the block in lane `qt_lane(k)`.
pub const IBM_BLOCK_FLOATS: usize = 12 * QT_BLOCK;

/// Whether [`qt_prepare_pose`] can run: the CPU has AVX-512F and AVX-512DQ (cached by the standard library).
#[inline]
pub fn prepare_pose_available() -> bool {
    available() && std::arch::is_x86_feature_detected!("avx512dq")
}

/// [`qt_prepare`] straight from a model-space pose, without the skinning rows in memory: lane `L` of block `b` is
/// the skinning matrix of skin joint `k` (`16b + joint of L`), `pose[joints[k]] × inverse_bind[k]`, computed in
/// the lanes with the operations of the portable `skin_rows_into` in its order,
/// `(m[r][0]·I₀ + m[r][1]·I₁) + (m[r][2]·I₂ + (0, 0, 0, t_r))`, so the blocks hold [`qt_prepare`]'s bits for those
/// rows. `joint_lanes` holds `16 · joints[k]` (the first float of the joint's [`Affine3A`]) and `ibm_lanes` the
/// inverse bind rows ([`IBM_BLOCK_FLOATS`] per block), both in the blocks' lanes and zero past the skin's `n`
/// joints.
///
/// Returns the largest absolute element of the skinning matrices (`max_abs_of` of their rows, or NaN when one is
/// not finite), then [`qt_prepare`]'s largest `|tᵢ|` and `|s|`. When the
/// first is not finite, the blocks are unspecified (the job then encodes nothing from them).
///
/// Against `skin_rows` followed by [`qt_prepare`], this skips writing the rows and gathering them back. On the
/// development VM (runs alternating in one process): a 128-instance job over the bench's 128 poses, mostly this
/// preparation, took 53–54 µs against 67–69 µs on one thread, and the bench's 10,000-instance QtF16 crowd (2
/// threads) 0.96–0.975 of the time.
///
/// # Panics
///
/// When [`prepare_pose_available`] is false, `blocks` is not `n.div_ceil(16)` blocks, `joint_lanes` or `ibm_lanes`
/// is short, or `n > 0` and `pose` is empty (the caller's bugs). An offset past `pose` (another bug of the caller's)
/// reads its last transform instead.
pub fn qt_prepare_pose(
    pose: &[Affine3A],
    joint_lanes: &[i32],
    ibm_lanes: &[f32],
    n: usize,
    blocks: &mut [f32],
) -> (f32, f32, f32) {
    let count = n.div_ceil(QT_BLOCK);
    assert!(
        prepare_pose_available()
            && blocks.len() == count * QT_BLOCK_FLOATS
            && ibm_lanes.len() >= count * IBM_BLOCK_FLOATS
            && joint_lanes.len() >= count * QT_BLOCK
            && (n == 0 || !pose.is_empty()),
        "checked by the caller"
    );
    // SAFETY: the CPU has AVX-512F and AVX-512DQ, the lanes cover the blocks (asserted), and the kernel clamps
    // every offset into `pose`, which is not empty when there is a block (asserted).
    unsafe { qt_prepare_pose_kernel(pose, joint_lanes, ibm_lanes, n, blocks) }
}

/// The kernel of [`qt_prepare_pose`].
///
/// # Safety
///
/// The CPU has AVX-512F and AVX-512DQ; `blocks` holds `n.div_ceil(16)` blocks, `joint_lanes` and `ibm_lanes` cover
/// them, and `pose` is not empty when `n > 0`.
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn qt_prepare_pose_kernel(
    pose: &[Affine3A],
    joint_lanes: &[i32],
    ibm_lanes: &[f32],
    n: usize,
    blocks: &mut [f32],
) -> (f32, f32, f32) {
    const _: () = assert!(
        size_of::<Affine3A>() == 64,
        "four 16-byte columns: x, y, z axes and translation"
    );
    let joint = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    let zero = _mm512_setzero_ps();
    let (mut max_t, mut max_s) = (zero, zero);
    // Three running maxima and poison sums (`Σ x·0`, NaN once an element is NaN or infinite, which `vrangeps`
    // does not always keep), so that a block's twelve of each are three short chains.
    let mut max_abs = [zero; 3];
    let mut poison = [zero; 3];
    let base = pose.as_ptr().cast::<f32>();
    // The first float of the last transform (not read when there is no block).
    let last = _mm512_set1_epi32((16 * pose.len().saturating_sub(1)) as i32);
    for (b, block) in blocks.chunks_exact_mut(QT_BLOCK_FLOATS).enumerate() {
        let first = b * QT_BLOCK;
        let valid = _mm512_cmplt_epi32_mask(joint, _mm512_set1_epi32((n - first) as i32));
        // SAFETY: the lanes cover the block (the caller's contract). The offsets, clamped to the last transform's
        // first float (unsigned, so a negative one is clamped too), stay inside `pose`.
        let offsets = _mm512_min_epu32(
            unsafe { _mm512_loadu_si512(joint_lanes[first..][..QT_BLOCK].as_ptr().cast()) },
            last,
        );
        let ibm = &ibm_lanes[b * IBM_BLOCK_FLOATS..][..IBM_BLOCK_FLOATS];
        // Float `e` of every lane's model-space transform; zero past the skin.
        // SAFETY: each offset names a transform of `pose` (clamped above), whose 16 floats are readable;
        // masked lanes are not read.
        let at = |e: i32| unsafe {
            _mm512_mask_i32gather_ps::<4>(zero, valid, _mm512_add_epi32(offsets, _mm512_set1_epi32(e)), base)
        };
        // Element `(r, c)` of the inverse bind rows (zero past the skin).
        // SAFETY: 16 floats of the block's `IBM_BLOCK_FLOATS`.
        let inv = |r: usize, c: usize| unsafe { _mm512_loadu_ps(ibm[(4 * r + c) * QT_BLOCK..][..QT_BLOCK].as_ptr()) };
        // `m[r][k]`: component `r` of the linear part's column `k`.
        let m = [[at(0), at(4), at(8)], [at(1), at(5), at(9)], [at(2), at(6), at(10)]];
        // Element `(r, c)` of the skinning matrix, `t` the translation for `c = 3` and zero otherwise (added all the
        // same, as the rows' `(0, 0, 0, t_r)`: it turns a `-0` product into `+0`).
        let element = |r: usize, c: usize, t: __m512| {
            _mm512_add_ps(
                _mm512_add_ps(_mm512_mul_ps(m[r][0], inv(0, c)), _mm512_mul_ps(m[r][1], inv(1, c))),
                _mm512_add_ps(_mm512_mul_ps(m[r][2], inv(2, c)), t),
            )
        };
        let store = |block: &mut [f32], c: usize, v: __m512| {
            // SAFETY: component `c < 8` is 16 floats inside the block.
            unsafe { _mm512_storeu_ps(block[c * QT_BLOCK..][..QT_BLOCK].as_mut_ptr(), v) }
        };
        // The translation first, stored at once, as in `qt_prepare_kernel`.
        for r in 0..3 {
            let t = element(r, 3, at(12 + r as i32));
            // The larger magnitude, sign cleared.
            max_abs[r] = _mm512_range_ps::<0b1011>(max_abs[r], t);
            poison[r] = _mm512_fmadd_ps(t, zero, poison[r]);
            max_t = _mm512_max_ps(max_t, _mm512_abs_ps(t));
            store(block, 4 + r, t);
        }
        // Written out: no array `map`, whose closure may be left out of line (see `qt_prepare_kernel`).
        let cols = [
            [Z(element(0, 0, zero)), Z(element(1, 0, zero)), Z(element(2, 0, zero))],
            [Z(element(0, 1, zero)), Z(element(1, 1, zero)), Z(element(2, 1, zero))],
            [Z(element(0, 2, zero)), Z(element(1, 2, zero)), Z(element(2, 2, zero))],
        ];
        for col in &cols {
            for (r, v) in col.iter().enumerate() {
                max_abs[r] = _mm512_range_ps::<0b1011>(max_abs[r], v.0);
                poison[r] = _mm512_fmadd_ps(v.0, zero, poison[r]);
            }
        }
        let (q, s) = decompose_lanes(&cols);
        max_s = _mm512_max_ps(max_s, _mm512_abs_ps(s.0));
        store(block, 7, s.0);
        for (c, v) in q.into_iter().enumerate() {
            store(block, c, _mm512_maskz_mov_ps(valid, v.0));
        }
    }
    let max_abs = _mm512_range_ps::<0b1011>(_mm512_range_ps::<0b1011>(max_abs[0], max_abs[1]), max_abs[2]);
    let poison = _mm512_add_ps(_mm512_add_ps(poison[0], poison[1]), poison[2]);
    let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(poison, poison) != 0;
    let max_abs = if nan { f32::NAN } else { _mm512_reduce_max_ps(max_abs) };
    (max_abs, _mm512_reduce_max_ps(max_t), _mm512_reduce_max_ps(max_s))
}

/// The decompositions of up to sixteen instance transforms, by lane: [`QtFolds::get`] gives transform `i`'s
/// [`QtFold`].
///
/// Structure of arrays, read one fold at a time just before its palette: when [`qt_folds`] wrote sixteen
/// [`QtFold`]s at once, LLVM turned the writes into 15 scatters, which took about 8% of a QtF16 crowd run.
#[derive(Clone, Copy, Debug)]
pub struct QtFolds {
    /// `q_T`'s components.
    q: [[f32; 16]; 4],
    /// `s_T`.
    s: [f32; 16],
    /// `max_r Σ_c |L_T[r][c]|`, NaN when a row sum is NaN.
    norm: [f32; 16],
}

impl QtFolds {
    /// Nothing decomposed yet.
    pub const EMPTY: Self = Self {
        q: [[0.0; 16]; 4],
        s: [0.0; 16],
        norm: [0.0; 16],
    };

    /// `q_T` of transform `i` of the last [`qt_folds`] call.
    #[inline(always)]
    pub fn q(&self, i: usize) -> [f32; 4] {
        [self.q[0][i], self.q[1][i], self.q[2][i], self.q[3][i]]
    }

    /// `s_T` of transform `i` of the last [`qt_folds`] call.
    #[inline(always)]
    pub fn s(&self, i: usize) -> f32 {
        self.s[i]
    }

    /// The row-sum norm of transform `i` of the last [`qt_folds`] call (NaN when it has a NaN).
    #[inline(always)]
    pub fn norm(&self, i: usize) -> f32 {
        self.norm[i]
    }

    /// The fold of transform `i` of the last [`qt_folds`] call, which was `t`: [`QtFold::new`]`(t)`'s bits.
    #[inline(always)]
    pub fn get(&self, i: usize, t: &Affine3A) -> QtFold {
        QtFold {
            q: self.q(i),
            l: super::linear_rows(&t.matrix3),
            s: self.s(i),
            norm: self.norm(i),
        }
    }
}

/// Decomposes each of `ts` (at most sixteen) into `out` with one sixteen-lane decomposition: the same bits as
/// [`QtFold::new`] (see [`QtFolds::get`]). Lanes past `ts.len()` hold the decomposition of a zero matrix.
///
/// # Panics
///
/// When the CPU lacks AVX-512F or `ts` has more than sixteen transforms (the caller's bugs).
pub fn qt_folds(ts: &[Affine3A], out: &mut QtFolds) {
    assert!(available() && ts.len() <= 16, "checked by the caller");
    // SAFETY: the CPU has AVX-512F (asserted) and `ts` has at most 16 transforms (asserted).
    unsafe { qt_folds_kernel(ts, out) }
}

/// The kernel of [`qt_folds`].
///
/// # Safety
///
/// The CPU has AVX-512F, and `ts.len() <= 16`.
#[target_feature(enable = "avx512f")]
unsafe fn qt_folds_kernel(ts: &[Affine3A], out: &mut QtFolds) {
    const _: () = assert!(
        size_of::<Affine3A>() == 64,
        "four 16-byte columns: x, y, z axes and translation"
    );
    let lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let valid = _mm512_cmplt_epi32_mask(lane, _mm512_set1_epi32(ts.len() as i32));
    let floats = _mm512_mullo_epi32(lane, _mm512_set1_epi32(16));
    let base = ts.as_ptr().cast::<f32>();
    // Element (r, c) of the linear part (column c's component r) of every transform; zero past `ts`.
    // SAFETY: a set mask bit means transform `L < ts.len()`, whose 16 floats are inside `ts`; masked lanes are not
    // read.
    let at = |r: i32, c: i32| unsafe {
        Z(_mm512_mask_i32gather_ps::<4>(
            _mm512_setzero_ps(),
            valid,
            _mm512_add_epi32(floats, _mm512_set1_epi32(4 * c + r)),
            base,
        ))
    };
    // Written out: no array `map`, whose closure may be left out of line (see `qt_prepare_kernel`).
    let col = |c: i32| [at(0, c), at(1, c), at(2, c)];
    let cols = [col(0), col(1), col(2)];
    let (q, s) = decompose_lanes(&cols);
    // `norm_inf`: the largest row sum `(|l_r0| + |l_r1|) + |l_r2|`, NaN when any row sum is NaN.
    let row = |r: usize| {
        let a = |c: usize| _mm512_abs_ps(cols[c][r].0);
        _mm512_add_ps(_mm512_add_ps(a(0), a(1)), a(2))
    };
    let rows = [row(0), row(1), row(2)];
    let nan = _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(rows[0], rows[0])
        | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(rows[1], rows[1])
        | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(rows[2], rows[2]);
    let norm = _mm512_mask_blend_ps(
        nan,
        _mm512_max_ps(_mm512_max_ps(rows[0], rows[1]), rows[2]),
        _mm512_set1_ps(f32::NAN),
    );
    // SAFETY: 16 floats each.
    unsafe {
        _mm512_storeu_ps(out.q[0].as_mut_ptr(), q[0].0);
        _mm512_storeu_ps(out.q[1].as_mut_ptr(), q[1].0);
        _mm512_storeu_ps(out.q[2].as_mut_ptr(), q[2].0);
        _mm512_storeu_ps(out.q[3].as_mut_ptr(), q[3].0);
        _mm512_storeu_ps(out.s.as_mut_ptr(), s.0);
        _mm512_storeu_ps(out.norm.as_mut_ptr(), norm);
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};
    use proptest::prelude::*;

    use super::*;
    use crate::formats::qt_f16::prepare_cached_portable;

    /// Any f32 bit pattern one time in eight (NaN, infinities, subnormals), a moderate value otherwise.
    fn element() -> impl Strategy<Value = f32> {
        prop_oneof![7 => -8.0f32..8.0, 1 => any::<u32>().prop_map(f32::from_bits)]
    }

    /// A similarity transform (scale in `[0.25, 4]`, negated when `mirror`), or any twelve elements.
    fn transform() -> impl Strategy<Value = Affine3A> {
        prop_oneof![
            (
                0.25f32..4.0,
                any::<bool>(),
                prop::array::uniform4(-1.0f32..1.0),
                prop::array::uniform3(-100.0f32..100.0)
            )
                .prop_map(|(s, mirror, q, t)| {
                    let q = Quat::from_array(q);
                    let q = if q.length() > 1e-3 {
                        q.normalize()
                    } else {
                        Quat::IDENTITY
                    };
                    Affine3A::from_scale_rotation_translation(Vec3::splat(if mirror { -s } else { s }), q, t.into())
                }),
            prop::array::uniform12(element()).prop_map(|e| Affine3A::from_cols_array(&e)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Sixteen lanes give `QtFold::new`'s bits for every transform, infinities included; where a value is NaN
        /// (a non-finite transform, which the job reports), it is NaN in both, though the payload and sign may
        /// differ (the vector and scalar operations propagate different operands' NaNs).
        #[test]
        fn folds_equal_single_folds(ts in prop::collection::vec(transform(), 0..=16)) {
            prop_assume!(available());
            let mut out = QtFolds::EMPTY;
            qt_folds(&ts, &mut out);
            let bits = |f: &QtFold| {
                let canonical = |x: &f32| if x.is_nan() { f32::NAN.to_bits() } else { x.to_bits() };
                let mut v: Vec<u32> = f.q.iter().map(canonical).collect();
                v.extend(f.l.iter().flatten().map(canonical));
                v.extend([canonical(&f.s), canonical(&f.norm)]);
                v
            };
            for (i, t) in ts.iter().enumerate() {
                prop_assert_eq!(bits(&out.get(i, t)), bits(&QtFold::new(t)), "transform {}", i);
            }
        }

        /// The one-pass preparation from a model-space pose writes what the skinning rows (`skin_rows_with`, the
        /// portable twin) followed by the portable preparation write, header included, and the rows' largest absolute
        /// element, for any joint map and skin size; when an element of a skinning matrix is not finite (from a NaN
        /// or infinite pose, or an overflow), both report it: the rows' poison sum is NaN and the largest element
        /// is not finite.
        #[test]
        fn prepare_from_the_pose_equals_rows_then_prepare(
            pose in prop::collection::vec(transform(), 1..40),
            skin in prop::collection::vec((any::<prop::sample::Index>(), transform()), 0..50),
            offset in 0usize..16,
        ) {
            prop_assume!(prepare_pose_available());
            let joints: Vec<u16> = skin.iter().map(|(i, _)| i.index(pose.len()) as u16).collect();
            // Affine inverse bind matrices, finite as `PaletteBinding::new` requires.
            let ibms: Vec<[Vec4; 3]> = skin
                .iter()
                .map(|(_, m)| {
                    let t = glam::Mat4::from(*m).transpose();
                    [t.x_axis, t.y_axis, t.z_axis].map(|r| if r.is_finite() { r } else { Vec4::ONE })
                })
                .collect();
            let n = joints.len();
            let mut rows = vec![[Vec4::ZERO; 3]; n];
            let poison = crate::flatten::skin_rows_with(&pose, &joints, &ibms, &mut rows);
            let (joint_lanes, ibm_lanes) = crate::flatten::skin_lanes(&joints, &ibms);
            let floats = super::super::qt_cached_floats(n);
            // The blocks at every 4-byte offset from a line, as the cache's 64-byte lines and other placements.
            let mut storage = vec![f32::NAN; floats + 32];
            let start = storage.as_ptr().align_offset(64) + offset;
            let fast = &mut storage[start..start + floats];
            let (header, blocks) = fast.split_at_mut(crate::formats::qt_f16::QT_HEADER);
            let (max_abs, t, s) = qt_prepare_pose(&pose, &joint_lanes, &ibm_lanes, n, blocks);
            prop_assert_eq!(poison == Vec4::ZERO, max_abs.is_finite(), "poison {} against {}", poison, max_abs);
            if poison == Vec4::ZERO {
                crate::formats::qt_f16::write_header(header, t, s, blocks, n);
                let mut plain = vec![f32::NAN; floats];
                prepare_cached_portable(&rows, &mut plain);
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                prop_assert_eq!(bits(fast), bits(&plain));
                prop_assert_eq!(max_abs.to_bits(), crate::flatten::max_abs_of(&rows).to_bits());
            }
        }

        /// The sixteen-lane cache preparation writes the portable preparation's bits, header included, at every
        /// skin size (whole and partial blocks).
        #[test]
        fn prepare_equals_the_portable_path(
            joints in prop::collection::vec(transform(), 0..50),
        ) {
            prop_assume!(available());
            // Finite rows only: the flatten job prepares a pose only when all its rows are finite.
            let rows: Vec<[Vec4; 3]> = joints
                .iter()
                .map(|m| {
                    let t = glam::Mat4::from(*m).transpose();
                    [t.x_axis, t.y_axis, t.z_axis].map(|r| if r.is_finite() { r } else { Vec4::ONE })
                })
                .collect();
            let floats = super::super::qt_cached_floats(rows.len());
            let mut plain = vec![f32::NAN; floats];
            prepare_cached_portable(&rows, &mut plain);
            let mut fast = vec![f32::NAN; floats];
            let (header, blocks) = fast.split_at_mut(crate::formats::qt_f16::QT_HEADER);
            let (t, s) = qt_prepare(&rows, blocks);
            crate::formats::qt_f16::write_header(header, t, s, blocks, rows.len());
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            prop_assert_eq!(bits(&fast), bits(&plain));
        }
    }
}
