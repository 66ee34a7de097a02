//! Every tier against the portable one, bit for bit, for each format's cached encoder and row encoder; and the
//! fence check. Each test runs on every tier the CPU has and prints the tiers it skipped.

use glam::{Affine3A, Quat, Vec3, Vec3A, Vec4};
use proptest::prelude::*;

use super::Tier;
use crate::flatten::CachedPose;
use crate::formats::sealed::Format;
use crate::{Mat3x4F16, PaletteEntry, QtF16};

/// The tiers to compare with [`Tier::Portable`], after printing those skipped (once per test, straight to stderr,
/// which the test harness does not capture).
fn tiers(test: &str) -> Vec<Tier> {
    use std::io::Write;
    static PRINTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let (run, skipped) = Tier::all();
    let mut printed = PRINTED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !printed.iter().any(|t| t == test) {
        printed.push(test.to_owned());
        let names: Vec<&str> = run
            .iter()
            .map(|t| if *t == Tier::Portable { "portable" } else { "avx2" })
            .collect();
        let _ = writeln!(
            std::io::stderr(),
            "{test}: runs tiers {}; skipped: {}",
            names.join(", "),
            if skipped.is_empty() {
                "none".to_owned()
            } else {
                skipped.join(", ")
            }
        );
    }
    run
}

/// A similarity transform with scale in `[0.25, 4]` (signed when `mirror`), any rotation, translation within `t`.
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

/// A cached joint: a similarity near the origin, a quarter turn about an axis (exact zeros), or one far out
/// (beyond the f16 range, which takes the portable fallback).
fn joint() -> impl Strategy<Value = Affine3A> {
    let axes = [Vec3::X, Vec3::Y, Vec3::Z];
    prop_oneof![
        6 => similarity(50.0, true),
        2 => (0usize..3, 0..4, 0usize..3, -50.0f32..50.0).prop_map(move |(axis, k, along, x)| {
            let q = Quat::from_axis_angle(axes[axis], k as f32 * std::f32::consts::FRAC_PI_2);
            Affine3A::from_rotation_translation(q, axes[along] * x)
        }),
        1 => similarity(1e6, false),
    ]
}

/// An instance transform: a similarity (any turn, mirrored or not), one standing upright, or a non-finite or huge
/// one (the fallback).
fn instance() -> impl Strategy<Value = Option<Affine3A>> {
    prop_oneof![
        1 => Just(None),
        6 => similarity(10.0, true).prop_map(Some),
        2 => (0.5f32..2.0, -4.0f32..4.0).prop_map(|(s, a)| {
            Some(Affine3A::from_scale_rotation_translation(Vec3::splat(s), Quat::from_rotation_y(a), Vec3::X))
        }),
        1 => prop_oneof![Just(f32::NAN), Just(f32::INFINITY), Just(1e30f32)]
            .prop_map(|x| Some(Affine3A::from_scale(Vec3::splat(x)))),
    ]
}

fn rows_of(m: &Affine3A) -> [Vec4; 3] {
    let t = glam::Mat4::from(*m).transpose();
    [t.x_axis, t.y_axis, t.z_axis]
}

/// One 64-byte line, so that outputs can be placed anywhere relative to a line.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// Encodes the cached pose of `joints` with `F` on `tier`, the output `offset` bytes (a multiple of 4) past a
/// line in a buffer filled with `0xa5`; returns the whole buffer and the poison sum.
fn cached<F: Format>(
    tier: Tier,
    joints: &[Affine3A],
    t: Option<&Affine3A>,
    offset: usize,
    stream: bool,
) -> (Vec<u8>, Vec4) {
    let rows: Vec<[Vec4; 3]> = joints.iter().map(rows_of).collect();
    let mut aux = vec![Line([0; 64]); F::cached_floats(rows.len()) / 16 + 1];
    let aux: &mut [f32] = &mut bytemuck::cast_slice_mut(&mut aux)[..F::cached_floats(rows.len())];
    F::prepare(&rows, aux);
    let max_abs = rows
        .iter()
        .flat_map(|r| r.iter().map(|v| v.abs().max_element()))
        .fold(0.0f32, f32::max);
    let pose = CachedPose {
        rows: &rows,
        aux,
        max_abs,
    };
    let bytes = rows.len() * size_of::<F>();
    let mut buffer = vec![Line([0xa5; 64]); (offset + bytes + 64).div_ceil(64)];
    let all: &mut [u8] = bytemuck::cast_slice_mut(&mut buffer);
    let out: &mut [F] = bytemuck::cast_slice_mut(&mut all[offset..offset + bytes]);
    let fold = t.map(|t| F::folds([t; 4])[0]);
    let poison = F::encode_cached(tier, pose, fold.as_ref(), out, stream);
    if stream {
        super::stream_fence();
    }
    (all.to_vec(), poison)
}

/// [`cached`] on every tier equals it on the portable tier: the same bytes, in the output and around it, and the
/// same poison.
fn cached_tiers_agree<F: Format>(
    test: &str,
    joints: &[Affine3A],
    t: Option<&Affine3A>,
    offset: usize,
    stream: bool,
) -> Result<(), TestCaseError> {
    let (want, want_poison) = cached::<F>(Tier::Portable, joints, t, offset, false);
    for tier in tiers(test) {
        let (got, poison) = cached::<F>(tier, joints, t, offset, stream);
        prop_assert_eq!(&got, &want, "{:?}, stream {}", tier, stream);
        // Both NaN, or both zero.
        prop_assert_eq!(poison.is_nan(), want_poison.is_nan(), "{:?}", tier);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The f32 kernel gives the portable twin's bits, at every length and 4-byte placement within a cache line,
    /// with both store kinds, and writes nothing outside its output.
    #[test]
    fn f32_cached_tiers_agree(
        joints in prop::collection::vec(joint(), 0..40),
        t in instance(),
        offset in (0usize..16).prop_map(|k| 4 * k),
        stream in any::<bool>(),
    ) {
        cached_tiers_agree::<PaletteEntry>("f32_cached_tiers_agree", &joints, t.as_ref(), offset, stream)?;
    }

    /// The same for the Mat3x4F16 kernel.
    #[test]
    fn mat3x4_cached_tiers_agree(
        joints in prop::collection::vec(joint(), 0..40),
        t in instance(),
        offset in (0usize..16).prop_map(|k| 4 * k),
        stream in any::<bool>(),
    ) {
        cached_tiers_agree::<Mat3x4F16>("mat3x4_cached_tiers_agree", &joints, t.as_ref(), offset, stream)?;
    }

    /// The same for the QtF16 kernel (partial blocks included).
    #[test]
    fn qt_cached_tiers_agree(
        joints in prop::collection::vec(joint(), 0..40),
        t in instance(),
        offset in (0usize..16).prop_map(|k| 4 * k),
        stream in any::<bool>(),
    ) {
        cached_tiers_agree::<QtF16>("qt_cached_tiers_agree", &joints, t.as_ref(), offset, stream)?;
    }

    /// The row encoders (F16C conversion on the SIMD tier) give the portable tier's bits, out-of-range values and
    /// non-finite rows included.
    #[test]
    fn row_encoders_agree(
        joints in prop::collection::vec(joint(), 0..20),
        origin in prop::array::uniform3(-100.0f32..100.0),
        nan_at in prop::option::of(0usize..20),
    ) {
        let mut rows: Vec<[Vec4; 3]> = joints.iter().map(rows_of).collect();
        if let Some(k) = nan_at.filter(|&k| k < rows.len()) {
            rows[k][1].y = f32::NAN;
        }
        let origin = Vec3A::from(origin);
        fn encode<F: Format>(tier: Tier, rows: &[[Vec4; 3]], origin: Vec3A) -> (Vec<F>, bool) {
            let mut out = vec![F::zeroed(); rows.len()];
            let poison = F::encode_rows(tier, &mut out, origin, |k| rows[k]);
            (out, poison.is_nan())
        }
        for tier in tiers("row_encoders_agree") {
            let (a, pa) = encode::<Mat3x4F16>(tier, &rows, origin);
            let (b, pb) = encode::<Mat3x4F16>(Tier::Portable, &rows, origin);
            prop_assert_eq!(bytemuck::cast_slice::<_, u8>(&a), bytemuck::cast_slice::<_, u8>(&b));
            prop_assert_eq!(pa, pb);
            let (a, pa) = encode::<QtF16>(tier, &rows, origin);
            let (b, pb) = encode::<QtF16>(Tier::Portable, &rows, origin);
            prop_assert_eq!(bytemuck::cast_slice::<_, u8>(&a), bytemuck::cast_slice::<_, u8>(&b));
            prop_assert_eq!(pa, pb);
        }
    }
}

/// A kernel that streams leaves the thread unfenced until [`super::stream_fence`], so the job's
/// [`super::assert_fenced`] catches a task that streams without a fence (debug builds).
#[test]
fn streaming_is_caught_until_fenced() {
    let joints: Vec<Affine3A> = (0..32)
        .map(|i| Affine3A::from_translation(Vec3::X * i as f32))
        .collect();
    let t = Affine3A::from_rotation_y(0.3);
    let streamed = tiers("streaming_is_caught_until_fenced")
        .into_iter()
        .filter(|&tier| tier != Tier::Portable)
        .count();
    for tier in Tier::all().0 {
        for format in 0..3 {
            let rows: Vec<[Vec4; 3]> = joints.iter().map(rows_of).collect();
            let mut aux = vec![Line([0; 64]); QtF16::cached_floats(rows.len()) / 16];
            let aux: &mut [f32] = bytemuck::cast_slice_mut(&mut aux);
            let mut buffer = vec![Line([0; 64]); 32];
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buffer);
            let pose = |aux: &'static [f32]| CachedPose {
                rows: &rows,
                aux,
                max_abs: 32.0,
            };
            match format {
                0 => {
                    let out: &mut [PaletteEntry] = bytemuck::cast_slice_mut(&mut bytes[..32 * 48]);
                    PaletteEntry::encode_cached(tier, pose(&[]), Some(&t), out, true);
                }
                1 => {
                    let out: &mut [Mat3x4F16] = bytemuck::cast_slice_mut(&mut bytes[..32 * 24]);
                    Mat3x4F16::encode_cached(tier, pose(&[]), Some(&t), out, true);
                }
                _ => {
                    QtF16::prepare(&rows, aux);
                    let pose = CachedPose {
                        rows: &rows,
                        aux,
                        max_abs: 32.0,
                    };
                    let out: &mut [QtF16] = bytemuck::cast_slice_mut(&mut bytes[..32 * 16]);
                    QtF16::encode_cached(tier, pose, Some(&QtF16::folds([&t; 4])[0]), out, true);
                }
            }
            let simd = tier != Tier::Portable;
            assert_eq!(
                super::unfenced(),
                simd && cfg!(debug_assertions),
                "{tier:?} format {format}"
            );
            super::stream_fence();
            assert!(!super::unfenced());
            super::assert_fenced();
        }
    }
    if streamed == 0 {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "streaming_is_caught_until_fenced: no tier streams on this CPU; checked the portable tier only"
        );
    }
}

/// Each tier's row encoders give `encode`'s bits, one matrix at a time, for 150 matrices of mixed scale, some with
/// translations beyond the f16 range (clamped alike).
#[test]
fn row_encoders_equal_single_encoders() {
    fn check<F: crate::PaletteFormat + PartialEq + std::fmt::Debug>(tier: Tier) {
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
        let rows: Vec<[Vec4; 3]> = matrices.iter().map(rows_of).collect();
        let mut batched = vec![F::zeroed(); rows.len()];
        assert_eq!(F::encode_rows(tier, &mut batched, origin, |k| rows[k]), Vec4::ZERO);
        for (i, m) in matrices.iter().enumerate() {
            assert_eq!(batched[i], F::encode(m, origin), "{} matrix {i} on {tier:?}", F::NAME);
        }
    }
    for tier in tiers("row_encoders_equal_single_encoders") {
        check::<Mat3x4F16>(tier);
        check::<QtF16>(tier);
    }
}

/// Each tier's f16 conversion gives `half::f16::from_f32`'s bits for every finite f16 value, every midpoint between
/// two neighbours, and one f32 ulp either side of each midpoint.
#[test]
fn halves_equal_half_on_every_code_and_midpoint() {
    let mut values = Vec::new();
    for code in 0..=u16::MAX {
        let x = half::f16::from_bits(code);
        if !x.is_finite() {
            continue;
        }
        let x = x.to_f32();
        values.push(x);
        let next = half::f16::from_bits(code.wrapping_add(1));
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
    for tier in tiers("halves_equal_half_on_every_code_and_midpoint") {
        let mut words = vec![[0u32; 2]; src.len()];
        crate::formats::encode_halves::<1>(tier, &mut words, |k| [src[k]]);
        for (i, (w, v)) in words.iter().zip(&src).enumerate() {
            let h = v.to_array().map(|x| u32::from(half::f16::from_f32(x).to_bits()));
            assert_eq!(
                *w,
                [h[0] | (h[1] << 16), h[2] | (h[3] << 16)],
                "vector {i} = {v:?} on {tier:?}"
            );
        }
    }
}
