//! The AVX-512 kernel of [`LocalToModelJob`](super::LocalToModelJob)'s full update, chosen at run time.
//!
//! A model-space `Affine3A` is 16 floats, its three axes and its translation, so one 512-bit register holds a
//! whole joint and one store writes it. Joint `j` is `model[p] * local(j)`: block `c` of the result (column `c`, or
//! the translation for `c = 3`) is `m.x * l[c][0] + m.y * l[c][1] + m.z * l[c][2]` (plus `m.t` for `c = 3`), where
//! `m` is the parent. So the kernel multiplies:
//! - the parent's axis `r` repeated in the four blocks: a broadcast load from memory, or, when the parent is the
//!   previous joint (41 of the default character's 56 joints), a block shuffle of the register just computed;
//! - by row `r` of the four local columns, each element repeated across its block: an in-block shuffle of a
//!   register holding the row for the group's four lanes, built once per group from the portable code's own
//!   `SoaLocals`.
//!
//! It computes `(m.x * l0 + m.y * l1) + (m.z * l2 + m.t)`, with separate multiplies and adds in that order, where the
//! add of `m.t` is masked to block 3 so that the columns are `(m.x * l0 + m.y * l1) + m.z * l2`. These are the portable
//! path's operations on the same operands, so the results are bit for bit the same (NaN payloads aside, which LLVM does
//! not preserve anyway); the unit test below checks it on random hierarchies and bit patterns.
//!
//! Against the portable path it needs a quarter of the multiplies and adds, 3 in-block shuffles and (for a parent
//! in the previous joint's register) 3 block shuffles per joint instead of 12 lane splats, and one store instead
//! of four. The chain from parent to child is then a block shuffle, a multiply and two adds. `benches/README.md`
//! keeps what it measured against the portable path.
//!
//! Intrinsics are safe to call only inside a function compiled with their `#[target_feature]`, so the kernel is
//! one unsafe function, called only after checking the CPU; the other unsafe operations are the loads and stores
//! through a pointer into `output`, whose bounds the comments at each step give.

use std::arch::x86_64::{
    __m512, _mm_loadu_ps, _mm256_castps_pd, _mm256_set_m128, _mm512_add_ps, _mm512_broadcast_f32x4, _mm512_castpd_ps,
    _mm512_castps_pd, _mm512_castps256_ps512, _mm512_insertf64x4, _mm512_loadu_ps, _mm512_mask_add_ps, _mm512_mul_ps,
    _mm512_permute_ps, _mm512_shuffle_f32x4, _mm512_storeu_ps,
};

use glam::Affine3A;

use super::{SoaLocals, soa_to_locals};
use crate::asserts::strict_assert;
use crate::{NO_PARENT, SoaTransform};

const _: () = assert!(
    size_of::<Affine3A>() == 64,
    "an Affine3A is 16 floats: three axes and a translation"
);

/// Converts the joints of the full groups of four (`4 * (output.len() / 4)` joints) when the CPU has AVX-512F,
/// and returns how many it converted: that count, or 0 without AVX-512F. `parents` and `output` have the same
/// length and `input` covers them, as for `convert_all`.
#[inline]
pub(super) fn convert_full_groups(
    parents: &[u16],
    input: &[SoaTransform],
    output: &mut [Affine3A],
    root: &Affine3A,
) -> usize {
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F, checked just above.
        unsafe { convert_full_groups_avx512(parents, input, output, root) }
    } else {
        0
    }
}

/// The kernel of [`convert_full_groups`]; returns the number of joints converted.
///
/// # Safety
///
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn convert_full_groups_avx512(
    parents: &[u16],
    input: &[SoaTransform],
    output: &mut [Affine3A],
    root: &Affine3A,
) -> usize {
    assert!(
        parents.len() == output.len() && input.len() >= output.len().div_ceil(4),
        "the caller slices parents and output to the joint count, and input covers them"
    );
    let groups = output.len() / 4;
    let out = output.as_mut_ptr().cast::<f32>();
    let root = std::ptr::from_ref(root).cast::<f32>();
    // SAFETY: the CPU has AVX-512F (the caller's contract). `root` points at 16 readable floats, and every pointer
    // into `out` is `16 * i` floats past its start for a joint `i` below `j < 4 * groups <= output.len()`, the
    // joint being written, so every load reads a whole matrix already written and every store writes joint `j`.
    unsafe {
        let mut prev = _mm512_loadu_ps(root);
        for (g, (soa, group_parents)) in input.iter().zip(parents.chunks_exact(4)).take(groups).enumerate() {
            let rows = local_rows(&soa_to_locals(soa));
            let base = 4 * g;
            // The four lanes are unrolled, so that each selects its local elements with a constant shuffle.
            let [p0, p1, p2, p3] = group_parents else {
                unreachable!("chunks of four")
            };
            prev = joint::<0x00>(&rows, usize::from(*p0), base, out, root, prev);
            _mm512_storeu_ps(out.add(16 * base), prev);
            prev = joint::<0x55>(&rows, usize::from(*p1), base + 1, out, root, prev);
            _mm512_storeu_ps(out.add(16 * (base + 1)), prev);
            prev = joint::<0xAA>(&rows, usize::from(*p2), base + 2, out, root, prev);
            _mm512_storeu_ps(out.add(16 * (base + 2)), prev);
            prev = joint::<0xFF>(&rows, usize::from(*p3), base + 3, out, root, prev);
            _mm512_storeu_ps(out.add(16 * (base + 3)), prev);
        }
        4 * groups
    }
}

/// Rows 0, 1 and 2 of the four local columns: register `r` holds `[l[0][r] | l[1][r] | l[2][r] | l[3][r]]`, each
/// block the four lanes of one column's row `r` (column 3 being the translation).
#[inline]
#[target_feature(enable = "avx512f")]
fn local_rows(local: &SoaLocals) -> [__m512; 3] {
    let row = |r: usize| {
        let c = &local.cols;
        let low = _mm256_set_m128(c[1][r].into(), c[0][r].into());
        let high = _mm256_set_m128(c[3][r].into(), c[2][r].into());
        _mm512_castpd_ps(_mm512_insertf64x4::<1>(
            _mm512_castps_pd(_mm512_castps256_ps512(low)),
            _mm256_castps_pd(high),
        ))
    };
    [row(0), row(1), row(2)]
}

/// Joint `j`'s model-space matrix, for the lane of `rows` that `LANE` repeats (`0x55` times the lane): its
/// parent `p` is `prev` when `p + 1 == j`, the matrix at `out[16 * p..]` when `p < j`, else `root`.
///
/// # Safety
///
/// The CPU has AVX-512F; `root` points at 16 readable floats, and so does `out.add(16 * p)` when `p < j`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn joint<const LANE: i32>(
    rows: &[__m512; 3],
    p: usize,
    j: usize,
    out: *const f32,
    root: *const f32,
    prev: __m512,
) -> __m512 {
    strict_assert!(
        p == usize::from(NO_PARENT) || p < j,
        "joint {j} has parent {p}, which breaks parent-before-child order"
    );
    // SAFETY: as this function's contract.
    unsafe {
        let l0 = _mm512_permute_ps::<LANE>(rows[0]);
        let l1 = _mm512_permute_ps::<LANE>(rows[1]);
        let l2 = _mm512_permute_ps::<LANE>(rows[2]);
        let (x, y, z, t) = if p + 1 == j {
            (
                _mm512_shuffle_f32x4::<0x00>(prev, prev),
                _mm512_shuffle_f32x4::<0x55>(prev, prev),
                _mm512_shuffle_f32x4::<0xAA>(prev, prev),
                prev,
            )
        } else {
            // The comparison with `j` both selects root joints and bounds the index.
            let a = if p < j { out.add(16 * p) } else { root };
            (
                _mm512_broadcast_f32x4(_mm_loadu_ps(a)),
                _mm512_broadcast_f32x4(_mm_loadu_ps(a.add(4))),
                _mm512_broadcast_f32x4(_mm_loadu_ps(a.add(8))),
                _mm512_broadcast_f32x4(_mm_loadu_ps(a.add(12))),
            )
        };
        // Block 3 of `t` is the parent's translation; a masked add leaves the other blocks of `z * l2` as they are.
        let zl2 = _mm512_mul_ps(z, l2);
        _mm512_add_ps(
            _mm512_add_ps(_mm512_mul_ps(x, l0), _mm512_mul_ps(y, l1)),
            _mm512_mask_add_ps(zl2, 0xF000, zl2, t),
        )
    }
}

#[cfg(test)]
mod tests {
    use glam::{Affine3A, Vec4};
    use proptest::prelude::*;

    use super::convert_full_groups_avx512;
    use crate::{NO_PARENT, SoaTransform};

    /// Equal bits, or both NaN.
    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    /// Any f32 bit pattern a quarter of the time, else a value in [-2, 2] (with signed zeros), so that both
    /// ordinary poses and special values (NaN, infinities, subnormals, -0.0) occur.
    fn value() -> impl Strategy<Value = f32> {
        prop_oneof![
            3 => -2.0f32..2.0,
            1 => any::<u32>().prop_map(f32::from_bits),
            1 => Just(-0.0f32),
            1 => Just(0.0f32),
        ]
    }

    fn vec4() -> impl Strategy<Value = Vec4> {
        prop::array::uniform4(value()).prop_map(Vec4::from_array)
    }

    fn soa() -> impl Strategy<Value = SoaTransform> {
        prop::array::uniform10(vec4()).prop_map(|v| SoaTransform {
            translation: crate::SoaVec3 {
                x: v[0],
                y: v[1],
                z: v[2],
            },
            rotation: crate::SoaQuat {
                x: v[3],
                y: v[4],
                z: v[5],
                w: v[6],
            },
            scale: crate::SoaVec3 {
                x: v[7],
                y: v[8],
                z: v[9],
            },
        })
    }

    /// A hierarchy of 1 to 70 joints in parent-before-child order, mostly chains (as skeletons are), with roots
    /// and far parents mixed in, and a local pose covering it.
    fn case() -> impl Strategy<Value = (Vec<u16>, Vec<SoaTransform>, [f32; 16])> {
        (1usize..=70).prop_flat_map(|n| {
            let parents = prop::collection::vec((0u8..8, any::<prop::sample::Index>()), n).prop_map(|picks| {
                picks
                    .iter()
                    .enumerate()
                    .map(|(j, &(kind, far))| match kind {
                        _ if j == 0 => NO_PARENT,
                        0 => NO_PARENT,
                        1 | 2 => far.index(j) as u16,
                        _ => (j - 1) as u16,
                    })
                    .collect::<Vec<u16>>()
            });
            (
                parents,
                prop::collection::vec(soa(), n.div_ceil(4)),
                prop::array::uniform16(value()),
            )
        })
    }

    proptest! {
        /// The kernel's matrices are, bit for bit, those of the portable path, for every joint of the full
        /// groups; the joints after them are left to the portable path and untouched by the kernel.
        #[test]
        fn kernel_equals_the_portable_path((parents, input, root) in case()) {
            if !std::arch::is_x86_feature_detected!("avx512f") {
                eprintln!("SKIP: kernel_equals_the_portable_path: this CPU has no AVX-512F");
                return Ok(());
            }
            let n = parents.len();
            let root = Affine3A::from_cols_array(&root[..12].try_into().expect("12 floats"));
            let mut want = vec![Affine3A::IDENTITY; n];
            super::super::convert_groups(&parents, &input, &mut want, &root, 0);
            let sentinel = Affine3A::from_cols_array(&[7.0; 12]);
            let mut got = vec![sentinel; n];
            // SAFETY: the CPU has AVX-512F, checked above.
            let done = unsafe { convert_full_groups_avx512(&parents, &input, &mut got, &root) };
            prop_assert_eq!(done, n / 4 * 4);
            for (j, (g, w)) in got.iter().zip(&want).enumerate() {
                let (g, w) = (g.to_cols_array(), w.to_cols_array());
                if j < done {
                    prop_assert!(g.iter().zip(&w).all(|(&a, &b)| same(a, b)), "joint {}: {:?} vs {:?}", j, g, w);
                } else {
                    prop_assert_eq!(g, sentinel.to_cols_array(), "joint {} is past the full groups", j);
                }
            }
        }
    }
}
