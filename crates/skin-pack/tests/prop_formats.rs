//! Property tests of the f16 palette formats: on random transforms, `decode(encode(m))` stays within the stated
//! per-element and vertex bounds, the WGSL-mirroring decoders agree with the reference decoders, and the batch
//! f32 → f16 conversion equals the scalar one on arbitrary floats.

use glam::{Affine3A, DVec3, Mat3A, Quat, Vec3, Vec3A, Vec4};
use half::f16;
use proptest::prelude::*;
use skin_pack::{
    F16Format, Mat3x4F16, PaletteFormat, QT_F16_SCALE_TOLERANCE, QtF16, halves_from_f32, halves_from_f32_scalar,
};

fn rotation() -> impl Strategy<Value = Quat> {
    (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
        .prop_filter("a non-degenerate quaternion", |(x, y, z, w)| {
            x * x + y * y + z * z + w * w > 0.01
        })
        .prop_map(|(x, y, z, w)| Quat::from_xyzw(x, y, z, w).normalize())
}

/// A magnitude spread over several orders, with either sign.
fn signed_log(lo: f32, hi: f32) -> impl Strategy<Value = f32> {
    (lo.ln()..hi.ln(), any::<bool>()).prop_map(|(l, neg)| if neg { -l.exp() } else { l.exp() })
}

fn translation() -> impl Strategy<Value = Vec3> {
    prop_oneof![
        (-2.0f32..2.0, -2.0f32..2.0, -2.0f32..2.0).prop_map(Vec3::from),
        (-1e4f32..1e4, -1e4f32..1e4, -1e4f32..1e4).prop_map(Vec3::from),
    ]
}

/// Any affine matrix: rotation · non-uniform scale · rotation (so with shear), or raw elements, some tiny.
fn affine() -> impl Strategy<Value = Affine3A> {
    let svd = (
        rotation(),
        rotation(),
        signed_log(1e-3, 1e2),
        signed_log(1e-3, 1e2),
        signed_log(1e-3, 1e2),
    )
        .prop_map(|(a, b, x, y, z)| {
            Mat3A::from_quat(a) * Mat3A::from_diagonal(Vec3::new(x, y, z)) * Mat3A::from_quat(b)
        });
    let raw =
        prop::array::uniform9(prop_oneof![-100.0f32..100.0, -1e-6f32..1e-6]).prop_map(|e| Mat3A::from_cols_array(&e));
    (prop_oneof![svd, raw], translation()).prop_map(|(l, t)| Affine3A::from_mat3_translation(l.into(), t))
}

/// A similarity transform with a signed uniform scale, optionally perturbed by a non-uniformity below
/// `QT_F16_SCALE_TOLERANCE`.
fn similarity() -> impl Strategy<Value = Affine3A> {
    (
        rotation(),
        signed_log(1e-3, 1e3),
        prop::array::uniform3(-1.0f32..1.0),
        any::<bool>(),
        translation(),
    )
        .prop_map(|(q, s, e, perturb, t)| {
            let k = if perturb { QT_F16_SCALE_TOLERANCE * 0.3 } else { 0.0 };
            let scale = Vec3::new(s * (1.0 + k * e[0]), s * (1.0 + k * e[1]), s * (1.0 + k * e[2]));
            Affine3A::from_scale_rotation_translation(scale, q, t)
        })
}

/// An origin near the translation or anywhere in a 10 km box.
fn origin() -> impl Strategy<Value = Vec3A> {
    prop_oneof![
        Just(Vec3A::ZERO),
        (-3.0f32..3.0, -3.0f32..3.0, -3.0f32..3.0).prop_map(Vec3A::from),
        (-1e4f32..1e4, -1e4f32..1e4, -1e4f32..1e4).prop_map(Vec3A::from),
    ]
}

fn rows(m: &Affine3A) -> [[f64; 4]; 3] {
    let c = m.matrix3.to_cols_array_2d();
    let t = m.translation;
    std::array::from_fn(|i| [c[0][i], c[1][i], c[2][i], t[i]].map(f64::from))
}

/// The exact (f64) image of `p` under `m`.
fn apply(m: &Affine3A, p: Vec3) -> DVec3 {
    let r = rows(m);
    let p = p.as_dvec3();
    DVec3::from_array(std::array::from_fn(|i| {
        r[i][0] * p.x + r[i][1] * p.y + r[i][2] * p.z + r[i][3]
    }))
}

/// Checks the per-element bound, the mirror decoder, and the vertex bound for `points` (exact and f32 skinning).
fn check_format<F: F16Format>(m: &Affine3A, origin: Vec3A, points: &[Vec3]) -> Result<(), TestCaseError> {
    F::check(m, origin, 0).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let e = F::encode(m, origin);
    let d = e.decode(origin);
    prop_assert!(d.is_finite());
    let bound = F::joint_error_bound(m, origin);
    let (want, got) = (rows(m), rows(&d));
    let mirror = e.decode_rows(origin);
    for i in 0..3 {
        for j in 0..4 {
            let err = (got[i][j] - want[i][j]).abs();
            prop_assert!(
                err <= f64::from(bound[i][j]),
                "{} element ({i}, {j}): error {err:e} above bound {:e}; m = {m:?}, origin = {origin:?}",
                F::NAME,
                bound[i][j]
            );
            let mirror_err = (f64::from(mirror[i][j]) - want[i][j]).abs();
            prop_assert!(
                mirror_err <= f64::from(bound[i][j]),
                "{} mirror element ({i}, {j}): error {mirror_err:e} above bound {:e}",
                F::NAME,
                bound[i][j]
            );
        }
    }
    for &p in points {
        let r = p.length();
        let vb = f64::from(F::vertex_error_bound(m, origin, r));
        let exact = (apply(m, p) - apply(&d, p)).length();
        prop_assert!(exact <= vb, "{} vertex {p:?}: {exact:e} above {vb:e}", F::NAME);
        let f32_skinned = (m.transform_point3(p).as_dvec3() - d.transform_point3(p).as_dvec3()).length();
        prop_assert!(
            f32_skinned <= vb,
            "{} vertex {p:?} in f32: {f32_skinned:e} above {vb:e}",
            F::NAME
        );
        let mirrored = Vec3::new(
            mirror[0].dot(p.extend(1.0)),
            mirror[1].dot(p.extend(1.0)),
            mirror[2].dot(p.extend(1.0)),
        );
        let mirror_err = (m.transform_point3(p).as_dvec3() - mirrored.as_dvec3()).length();
        prop_assert!(
            mirror_err <= vb,
            "{} mirror vertex {p:?}: {mirror_err:e} above {vb:e}",
            F::NAME
        );
    }
    Ok(())
}

fn points() -> impl Strategy<Value = Vec<Vec3>> {
    prop::collection::vec(
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, signed_log(1e-2, 20.0))
            .prop_map(|(x, y, z, r)| Vec3::new(x, y, z).normalize_or(Vec3::X) * r.abs()),
        1..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn mat3x4_f16_within_bounds(m in affine(), o in origin(), p in points()) {
        check_format::<Mat3x4F16>(&m, o, &p)?;
        // The linear part decodes bit for bit through the WGSL mirror.
        let e = Mat3x4F16::encode(&m, o);
        let d = e.decode(o);
        let mirror = e.decode_rows(o);
        for (i, row) in mirror.iter().enumerate() {
            let want = Vec4::new(d.matrix3.x_axis[i], d.matrix3.y_axis[i], d.matrix3.z_axis[i], d.translation[i]);
            prop_assert_eq!(*row, want);
        }
    }

    #[test]
    fn mat3x4_f16_reencodes_to_the_same_bits(m in affine()) {
        let e = Mat3x4F16::encode(&m, Vec3A::ZERO);
        prop_assert_eq!(Mat3x4F16::encode(&e.decode(Vec3A::ZERO), Vec3A::ZERO), e);
    }

    #[test]
    fn qt_f16_within_bounds(m in similarity(), o in origin(), p in points()) {
        check_format::<QtF16>(&m, o, &p)?;
    }

    #[test]
    fn qt_f16_bounds_hold_for_any_matrix(m in affine(), o in origin(), p in points()) {
        // Outside the precondition the residual enters the bound, which then still holds.
        prop_assume!(m.matrix3.to_cols_array().iter().all(|x| x.abs() < 1e3));
        let e = QtF16::encode(&m, o);
        let d = e.decode(o);
        for &p in &p {
            let vb = f64::from(QtF16::vertex_error_bound(&m, o, p.length()));
            let err = (apply(&m, p) - apply(&d, p)).length();
            prop_assert!(err <= vb, "vertex {p:?}: {err:e} above {vb:e}");
        }
    }

    #[test]
    fn qt_f16_quaternion_is_canonical(m in similarity()) {
        let e = QtF16::encode(&m, Vec3A::ZERO);
        let w = f16::from_bits((e.rotation[1] >> 16) as u16);
        prop_assert!(w.is_sign_positive(), "w = {w}");
        let s = f16::from_bits((e.translation_scale[1] >> 16) as u16).to_f32();
        prop_assert_eq!(s < 0.0, m.matrix3.determinant() < 0.0);
    }

    #[test]
    fn batch_conversion_equals_scalar(bits in prop::array::uniform12(any::<u32>())) {
        let v = bits.map(f32::from_bits);
        let batch = halves_from_f32(&v);
        let batch8 = halves_from_f32::<8>(v[..8].try_into().expect("8"));
        let scalar = halves_from_f32_scalar(&v);
        for (i, &x) in v.iter().enumerate() {
            let want = f16::from_f32(x);
            if x.is_nan() {
                prop_assert!(f16::from_bits(batch[i]).is_nan());
            } else {
                prop_assert_eq!(batch[i], want.to_bits(), "{:e}", x);
                prop_assert_eq!(scalar[i], want.to_bits(), "{:e}", x);
                prop_assert_eq!(f16::from_f32_const(x).to_bits(), want.to_bits(), "{:e}", x);
                if i < 8 {
                    prop_assert_eq!(batch8[i], want.to_bits());
                }
            }
        }
    }
}
