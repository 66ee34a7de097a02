//! The AVX-512 kernel of [`SamplingJob`](super::SamplingJob), chosen at run time.
//!
//! A group's rotation (four quaternions, SoA) is 16 floats, so one 512-bit register holds it, and a translation or
//! scale (12 floats) fits a 256-bit and a 128-bit register. The kernel interpolates them with the portable
//! formulas on whole registers: `a + (b - a) * (u * mask)`, the interpolation mask of the group broadcast to every
//! component. For the rotation's normalization it sums the squares in the portable order, `((x² + y²) + z²) + w²`,
//! on the four 128-bit blocks of the squared register, takes the square root and the reciprocal of the four lanes
//! once, and multiplies the whole register by them; a masked move gives `w = 1` in the lanes of zero length. These
//! are the portable path's operations on the same operands, so the results are bit for bit the same, which the
//! unit test below checks, and `sample_reference` equals both.
//!
//! Against the portable path it needs about a third of the arithmetic instructions for the interpolations, and
//! writes a group's rotation with one store instead of four and a translation or scale with two instead of three.
//!
//! Intrinsics are safe to call only inside a function compiled with their `#[target_feature]`, so the kernel is
//! one unsafe function, called only after checking the CPU; the other unsafe operations are loads and stores
//! through pointers to whole `SoaVec3`s and `SoaQuat`s, whose layout `soa.rs` pins.

use std::arch::x86_64::{
    __m128, __m256, __m512, _mm_add_ps, _mm_and_ps, _mm_cmpgt_ps, _mm_div_ps, _mm_loadu_ps, _mm_movemask_ps,
    _mm_mul_ps, _mm_set1_ps, _mm_sqrt_ps, _mm_storeu_ps, _mm_sub_ps, _mm256_add_ps, _mm256_broadcast_ps,
    _mm256_loadu_ps, _mm256_mul_ps, _mm256_set1_ps, _mm256_storeu_ps, _mm256_sub_ps, _mm512_add_ps,
    _mm512_broadcast_f32x4, _mm512_castps512_ps128, _mm512_extractf32x4_ps, _mm512_loadu_ps, _mm512_mask_mov_ps,
    _mm512_mul_ps, _mm512_set1_ps, _mm512_storeu_ps, _mm512_sub_ps,
};

use crate::runtime_clip::Tracks;
use crate::{RuntimeClip, SoaQuat, SoaTransform, SoaVec3};

/// Samples `clip` at frame pair `(f, f + 1)` and fraction `u` into `output` (`clip.num_soa_joints()` long), as
/// the portable passes do, when the CPU has AVX-512F; returns false, having written nothing, without it.
#[inline]
pub(super) fn sample(clip: &RuntimeClip, f: usize, u: f32, output: &mut [SoaTransform]) -> bool {
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F, checked just above.
        unsafe { sample_avx512(clip, f, u, output) };
        true
    } else {
        false
    }
}

/// The kernel of [`sample`].
///
/// # Safety
///
/// The CPU has AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn sample_avx512(clip: &RuntimeClip, f: usize, u: f32, output: &mut [SoaTransform]) {
    let tracks = &*clip.tracks;
    vec3_pass(&tracks.translations, f, u, output, |t| &mut t.translation);
    rotation_pass(&tracks.rotations, f, u, output);
    vec3_pass(&tracks.scales, f, u, output, |t| &mut t.scale);
}

/// Writes one vector property (translation or scale) of every group: constants, then lerped frames, `x` and `y`
/// in a 256-bit register and `z` in a 128-bit one.
#[inline]
#[target_feature(enable = "avx512f")]
fn vec3_pass(
    tracks: &Tracks<SoaVec3>,
    f: usize,
    u: f32,
    output: &mut [SoaTransform],
    field: impl Fn(&mut SoaTransform) -> &mut SoaVec3,
) {
    super::write_constants(tracks, output, &field);
    let (u8, u4) = (_mm256_set1_ps(u), _mm_set1_ps(u));
    let (row0, row1) = tracks.rows(f);
    for (((&group, mask), a), b) in tracks.anim_groups.iter().zip(&tracks.masks).zip(row0).zip(row1) {
        if let Some(out) = output.get_mut(usize::from(group)) {
            let (a, b, out) = (xy_z(a), xy_z(b), std::ptr::from_mut(field(out)).cast::<f32>());
            let t8 = _mm256_mul_ps(u8, _mm256_broadcast_ps(&__m128::from(*mask)));
            let t4 = _mm_mul_ps(u4, __m128::from(*mask));
            let xy = _mm256_add_ps(a.0, _mm256_mul_ps(_mm256_sub_ps(b.0, a.0), t8));
            let z = _mm_add_ps(a.1, _mm_mul_ps(_mm_sub_ps(b.1, a.1), t4));
            // SAFETY: `out` points to a whole `SoaVec3`, 12 floats (layout pinned in `soa.rs`).
            unsafe {
                _mm256_storeu_ps(out, xy);
                _mm_storeu_ps(out.add(8), z);
            }
        }
    }
}

/// The `x` and `y` components of `v` as one 256-bit register, and `z`.
#[inline]
#[target_feature(enable = "avx512f")]
fn xy_z(v: &SoaVec3) -> (__m256, __m128) {
    let p = std::ptr::from_ref(v).cast::<f32>();
    // SAFETY: `p` points to a whole `SoaVec3`, 12 floats (layout pinned in `soa.rs`).
    unsafe { (_mm256_loadu_ps(p), _mm_loadu_ps(p.add(8))) }
}

/// Writes the rotation of every group: constants, then normalized lerps of frames, a group per 512-bit register.
#[inline]
#[target_feature(enable = "avx512f")]
fn rotation_pass(tracks: &Tracks<SoaQuat>, f: usize, u: f32, output: &mut [SoaTransform]) {
    super::write_constants(tracks, output, |t| &mut t.rotation);
    let u = _mm512_set1_ps(u);
    let (row0, row1) = tracks.rows(f);
    for (((&group, mask), a), b) in tracks.anim_groups.iter().zip(&tracks.masks).zip(row0).zip(row1) {
        if let Some(out) = output.get_mut(usize::from(group)) {
            let q = nlerp(
                quat(a),
                quat(b),
                _mm512_mul_ps(u, _mm512_broadcast_f32x4(__m128::from(*mask))),
            );
            // SAFETY: the pointer is to a whole `SoaQuat`, 16 floats (layout pinned in `soa.rs`).
            unsafe { _mm512_storeu_ps(std::ptr::from_mut(&mut out.rotation).cast::<f32>(), q) };
        }
    }
}

/// The four quaternions of `q` as one register: blocks `x`, `y`, `z`, `w`.
#[inline]
#[target_feature(enable = "avx512f")]
fn quat(q: &SoaQuat) -> __m512 {
    // SAFETY: the pointer is to a whole `SoaQuat`, 16 floats (layout pinned in `soa.rs`).
    unsafe { _mm512_loadu_ps(std::ptr::from_ref(q).cast::<f32>()) }
}

/// `normalize(a + (b - a) * t)` as `nlerp_same_hemisphere` and `SoaQuat::normalize` compute it, on registers of
/// four quaternions.
#[inline]
#[target_feature(enable = "avx512f")]
fn nlerp(a: __m512, b: __m512, t: __m512) -> __m512 {
    let q = _mm512_add_ps(a, _mm512_mul_ps(_mm512_sub_ps(b, a), t));
    let sq = _mm512_mul_ps(q, q);
    let len2 = _mm_add_ps(
        _mm_add_ps(
            _mm_add_ps(_mm512_castps512_ps128(sq), _mm512_extractf32x4_ps::<1>(sq)),
            _mm512_extractf32x4_ps::<2>(sq),
        ),
        _mm512_extractf32x4_ps::<3>(sq),
    );
    let ok = _mm_cmpgt_ps(len2, _mm_set1_ps(1e-20));
    let inv = _mm_and_ps(ok, _mm_div_ps(_mm_set1_ps(1.0), _mm_sqrt_ps(len2)));
    let scaled = _mm512_mul_ps(q, _mm512_broadcast_f32x4(inv));
    // `w = 1` in the lanes of zero length (bits 12 to 15: block 3).
    let zero_length = (!_mm_movemask_ps(ok) & 0xF) as u16;
    _mm512_mask_mov_ps(scaled, zero_length << 12, _mm512_set1_ps(1.0))
}

#[cfg(test)]
mod tests {
    use glam::Vec4;
    use proptest::prelude::*;

    use super::*;
    use crate::runtime_clip::tests::{chain, channel, clip, times};
    use crate::{Interpolation, Property, RuntimeClipOptions};

    /// Equal bits, or both NaN.
    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    fn assert_same(got: &[SoaTransform], want: &[SoaTransform]) -> Result<(), TestCaseError> {
        for (g, (x, y)) in got.iter().zip(want).enumerate() {
            let (x, y) = (flat(x), flat(y));
            prop_assert!(
                x.iter().zip(&y).all(|(&a, &b)| same(a, b)),
                "group {}: {:?} vs {:?}",
                g,
                x,
                y
            );
        }
        Ok(())
    }

    fn flat(t: &SoaTransform) -> Vec<f32> {
        let v = [
            t.translation.x,
            t.translation.y,
            t.translation.z,
            t.rotation.x,
            t.rotation.y,
            t.rotation.z,
            t.rotation.w,
            t.scale.x,
            t.scale.y,
            t.scale.z,
        ];
        v.iter().flat_map(|v| v.to_array()).collect()
    }

    /// A clip of `n` joints in which the first joint of each property's kind is constant (`kinds[j] == 0`) or
    /// animated (linear or step keys), built so that its groups are a mix of constant and animated ones.
    fn mixed_clip(n: usize, kinds: &[u8]) -> RuntimeClip {
        let skeleton = chain(n);
        let mut channels = Vec::new();
        for joint in 0..n {
            for (p, property) in [Property::Translation, Property::Rotation, Property::Scale]
                .into_iter()
                .enumerate()
            {
                let interpolation = match kinds[(3 * joint + p) % kinds.len()] % 3 {
                    0 => continue,
                    1 => Interpolation::Linear,
                    _ => Interpolation::Step,
                };
                channels.push(channel(joint as u16, property, interpolation, &times(4, 1.0), |t| {
                    Vec4::new(t, 1.0 - t, 0.5, 1.0)
                }));
            }
        }
        RuntimeClip::build(&clip("mixed", channels), &skeleton, &RuntimeClipOptions::default()).expect("a valid clip")
    }

    /// A value in [-2, 2], a signed zero, a tiny value or any f32 bit pattern, so that ordinary values and special
    /// ones (NaN, infinities, subnormals, zero-length and nearly zero-length quaternions) occur.
    fn value() -> impl Strategy<Value = f32> {
        prop_oneof![
            4 => -2.0f32..2.0,
            2 => Just(0.0f32),
            1 => Just(-0.0f32),
            1 => Just(1e-11f32),
            1 => any::<u32>().prop_map(f32::from_bits),
        ]
    }

    /// Overwrites every stored value of `clip` (constants, frames, interpolation masks) from `values`, cycling, so
    /// that the kernels see arbitrary data and masks of any lane pattern.
    fn overwrite(clip: &mut RuntimeClip, values: &[f32], masks: &[bool]) {
        let mut v = values.iter().copied().cycle();
        let mut m = masks.iter().copied().cycle();
        let mut vec4 = || {
            Vec4::new(
                v.next().unwrap_or(0.0),
                v.next().unwrap_or(0.0),
                v.next().unwrap_or(0.0),
                v.next().unwrap_or(0.0),
            )
        };
        let mut mask = || Vec4::from_array([0; 4].map(|_| if m.next().unwrap_or(true) { 1.0 } else { 0.0 }));
        // The clip is not shared, so this edits its tracks in place.
        let all = std::sync::Arc::make_mut(&mut clip.tracks);
        for tracks in [&mut all.translations, &mut all.scales] {
            for x in tracks.const_values.iter_mut().chain(tracks.frames.iter_mut()) {
                *x = SoaVec3 {
                    x: vec4(),
                    y: vec4(),
                    z: vec4(),
                };
            }
            tracks.masks.iter_mut().for_each(|x| *x = mask());
        }
        let tracks = &mut all.rotations;
        for x in tracks.const_values.iter_mut().chain(tracks.frames.iter_mut()) {
            *x = SoaQuat {
                x: vec4(),
                y: vec4(),
                z: vec4(),
                w: vec4(),
            };
        }
        tracks.masks.iter_mut().for_each(|x| *x = mask());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The kernel writes, bit for bit, what the portable passes write: clips that mix constant and animated
        /// groups, their stored values overwritten with arbitrary ones (zero-length and non-unit quaternions,
        /// NaN, infinities, signed zeros) and their interpolation masks with any lane pattern, at any time.
        #[test]
        fn kernel_equals_the_portable_path(
            n in 1usize..24,
            kinds in prop::collection::vec(any::<u8>(), 1..16),
            values in prop::collection::vec(value(), 1..64),
            masks in prop::collection::vec(any::<bool>(), 1..16),
            time in -2.0f32..3.0,
        ) {
            if !std::arch::is_x86_feature_detected!("avx512f") {
                eprintln!("SKIP: kernel_equals_the_portable_path: this CPU has no AVX-512F");
                return Ok(());
            }
            let mut clip = mixed_clip(n, &kinds);
            overwrite(&mut clip, &values, &masks);
            let (f, u) = clip.timeline().coords(time);
            let mut want = vec![SoaTransform::IDENTITY; clip.num_soa_joints()];
            super::super::sample_portable(&clip, f, u, &mut want);
            let mut got = vec![SoaTransform::IDENTITY; clip.num_soa_joints()];
            // SAFETY: the CPU has AVX-512F, checked above.
            unsafe { sample_avx512(&clip, f, u, &mut got) };
            assert_same(&got, &want)?;
        }
    }
}
