//! Error reports of the f16 palette formats: one table row per validity rule of `F16Format::check`, the uniform
//! scale check of a skeleton and its clips, the encoders' clamp instead of infinity, and clean failure of the
//! palette decoder on every truncated input length.

use anim_pose::{Channel, Clip, Interpolation, NO_PARENT, Property, Skeleton, Transform};
use glam::{Affine3A, Mat3, Mat4, Quat, Vec3, Vec3A, Vec4};
use skin_pack::{
    Error, F16_MAX, F16Format, F16Kind, Mat3x4F16, PaletteFormat, QT_F16_SCALE_TOLERANCE, QtF16, check_palette,
    check_uniform_scale, choose_f16_format, decode_palette,
};

fn similarity(s: f32, t: Vec3) -> Affine3A {
    Affine3A::from_scale_rotation_translation(Vec3::splat(s), Quat::from_rotation_y(0.7), t)
}

fn overflow(format: &'static str, magnitude: u32) -> Result<(), Error> {
    Err(Error::F16Overflow {
        format,
        what: "palette entry",
        index: 3,
        magnitude,
    })
}

const NOT_AFFINE: Result<(), Error> = Err(Error::NotAffine {
    what: "palette entry",
    index: 3,
});

#[test]
fn check_rules_mat3x4_f16() {
    let mut nan = Affine3A::IDENTITY;
    nan.matrix3.y_axis.z = f32::NAN;
    let mut big = Affine3A::IDENTITY;
    big.matrix3.x_axis.x = 70000.0;
    let rows: [(&str, Affine3A, Vec3A, Result<(), Error>); 7] = [
        (
            "in range",
            similarity(2.0, Vec3::new(5.0, 1.0, -3.0)),
            Vec3A::ZERO,
            Ok(()),
        ),
        (
            "shear is fine",
            Affine3A::from_mat3(Mat3::from_cols_array(&[1.0, 0.5, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 3.0])),
            Vec3A::ZERO,
            Ok(()),
        ),
        (
            "offset exactly at the limit",
            similarity(1.0, Vec3::new(F16_MAX, 0.0, 0.0)),
            Vec3A::ZERO,
            Ok(()),
        ),
        ("element above 65504", big, Vec3A::ZERO, overflow("Mat3x4F16", 70000)),
        (
            "offset above 65504",
            similarity(1.0, Vec3::new(0.0, 1e5, 0.0)),
            Vec3A::ZERO,
            overflow("Mat3x4F16", 100_000),
        ),
        ("not finite", nan, Vec3A::ZERO, NOT_AFFINE),
        (
            "origin not finite",
            Affine3A::IDENTITY,
            Vec3A::splat(f32::INFINITY),
            NOT_AFFINE,
        ),
    ];
    for (name, m, origin, want) in rows {
        assert_eq!(Mat3x4F16::check(&m, origin, 3), want, "{name}");
    }
}

/// A row of the QtF16 check table.
type QtRow = (&'static str, Affine3A, Vec3A, Option<Result<(), Error>>);

#[test]
fn check_rules_qt_f16() {
    let non_uniform = Affine3A::from_scale_rotation_translation(Vec3::new(1.0, 1.0, 1.01), Quat::IDENTITY, Vec3::ZERO);
    let shear = Affine3A::from_mat3(Mat3::from_cols_array(&[1.0, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]));
    // (name, matrix, origin, the expected result, or None for a non-uniform scale error)
    let rows: [QtRow; 8] = [
        (
            "uniform",
            similarity(2.0, Vec3::new(5.0, 1.0, -3.0)),
            Vec3A::ONE,
            Some(Ok(())),
        ),
        ("mirror", similarity(-0.5, Vec3::ONE), Vec3A::ZERO, Some(Ok(()))),
        ("zero scale", Affine3A::from_mat3(Mat3::ZERO), Vec3A::ZERO, Some(Ok(()))),
        ("non-uniform scale", non_uniform, Vec3A::ZERO, None),
        ("shear", shear, Vec3A::ZERO, None),
        (
            "scale above 65504",
            similarity(70000.0, Vec3::ZERO),
            Vec3A::ZERO,
            Some(overflow("QtF16", 70000)),
        ),
        (
            "offset above 65504",
            similarity(1.0, Vec3::ZERO),
            Vec3A::new(0.0, 0.0, -70000.5),
            Some(overflow("QtF16", 70001)),
        ),
        (
            "not finite",
            similarity(f32::NAN, Vec3::ZERO),
            Vec3A::ZERO,
            Some(NOT_AFFINE),
        ),
    ];
    for (name, m, origin, want) in rows {
        let got = QtF16::check(&m, origin, 3);
        match want {
            Some(want) => assert_eq!(got, want, "{name}"),
            None => assert!(
                matches!(got, Err(Error::NonUniformScale { what: "palette entry", index: 3, joint: 3, deviation_ppm, tolerance_ppm })
                    if deviation_ppm > tolerance_ppm && tolerance_ppm == 489),
                "{name}: {got:?}"
            ),
        }
    }
    // A looser tolerance accepts the 1 % non-uniform scale (a relative Frobenius deviation of about 0.81 %).
    assert_eq!(QtF16::check_with_tolerance(&non_uniform, Vec3A::ZERO, 0, 0.01), Ok(()));
    let deviation = QtF16::scale_deviation(&non_uniform);
    assert!((0.008..0.0082).contains(&deviation), "{deviation}");
}

#[test]
fn encoders_clamp_instead_of_writing_infinity() {
    let m = similarity(1.0, Vec3::new(1e6, -1e6, 3.0));
    let mut huge = m;
    huge.matrix3.x_axis.x = 1e9;
    for origin in [Vec3A::ZERO, Vec3A::splat(100.0)] {
        let a = Mat3x4F16::encode(&huge, origin).decode(origin);
        assert!(a.is_finite());
        assert_eq!(a.matrix3.x_axis.x, F16_MAX);
        assert_eq!(a.translation.x, F16_MAX + origin.x);
        assert_eq!(a.translation.y, -F16_MAX + origin.y);
        let b = QtF16::encode(&similarity(1e9, Vec3::new(1e6, -1e6, 3.0)), origin).decode(origin);
        assert!(b.is_finite());
        assert_eq!(b.translation.x, F16_MAX + origin.x);
        assert!((b.matrix3.x_axis.length() - F16_MAX).abs() < 64.0);
        // The bounds do not claim anything out of range.
        assert_eq!(Mat3x4F16::vertex_error_bound(&huge, origin, 1.0), f32::INFINITY);
        assert_eq!(QtF16::joint_error_bound(&m, origin)[0][3], f32::INFINITY);
    }
}

#[test]
fn check_palette_names_the_first_entry_at_fault() {
    let mut palette = vec![Affine3A::IDENTITY; 6];
    palette[4].translation.z = 1e6;
    palette[5].matrix3.x_axis.x = 2.0;
    let err = check_palette::<Mat3x4F16>(&palette, Vec3A::ZERO);
    assert_eq!(
        err,
        Err(Error::F16Overflow {
            format: "Mat3x4F16",
            what: "palette entry",
            index: 4,
            magnitude: 1_000_000
        })
    );
    palette[4].translation.z = 0.0;
    assert_eq!(check_palette::<Mat3x4F16>(&palette, Vec3A::ZERO), Ok(()));
    assert!(matches!(
        check_palette::<QtF16>(&palette, Vec3A::ZERO),
        Err(Error::NonUniformScale { index: 5, .. })
    ));
    let text = check_palette::<QtF16>(&palette, Vec3A::ZERO).unwrap_err().to_string();
    assert!(text.contains("palette entry 5") && text.contains("Mat3x4F16"), "{text}");
}

fn decode_every_truncation<F: F16Format>(palette: &[Affine3A], origin: Vec3A) {
    let bytes: Vec<u8> = palette
        .iter()
        .flat_map(|m| bytemuck::bytes_of(&F::encode(m, origin)).to_vec())
        .collect();
    assert_eq!(bytes.len(), palette.len() * size_of::<F>());
    let mut out = vec![Affine3A::IDENTITY; palette.len()];
    for len in 0..bytes.len() {
        let got = decode_palette::<F>(&bytes[..len], origin, &mut out);
        assert_eq!(
            got,
            Err(Error::BufferSize {
                what: "f16 palette bytes",
                expected: bytes.len(),
                actual: len
            }),
            "{} truncated to {len} bytes",
            F::NAME
        );
        assert!(
            out.iter().all(|m| *m == Affine3A::IDENTITY),
            "nothing is written on error"
        );
    }
    // Unaligned input decodes too.
    let mut shifted = vec![0u8; bytes.len() + 1];
    shifted[1..].copy_from_slice(&bytes);
    decode_palette::<F>(&shifted[1..], origin, &mut out).expect("the whole palette decodes");
    for (m, d) in palette.iter().zip(&out) {
        assert_eq!(*d, F::encode(m, origin).decode(origin));
    }
    // One extra byte is an error as well.
    assert!(decode_palette::<F>(&shifted, origin, &mut out).is_err());
}

#[test]
fn decoders_fail_cleanly_on_every_truncated_length() {
    let palette: Vec<Affine3A> = (0..5)
        .map(|i| similarity(1.0 + i as f32 * 0.25, Vec3::new(i as f32, 2.0, -1.0)))
        .collect();
    decode_every_truncation::<Mat3x4F16>(&palette, Vec3A::new(1.0, 1.0, 0.0));
    decode_every_truncation::<QtF16>(&palette, Vec3A::new(1.0, 1.0, 0.0));
}

/// A three-joint chain with uniform scales everywhere, and a clip that scales joint 1 uniformly.
fn rig() -> (Skeleton, Clip) {
    let rest = vec![
        Transform {
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
            scale: Vec3::splat(2.0),
        },
        Transform {
            translation: Vec3::Y,
            rotation: Quat::from_rotation_z(0.3),
            scale: Vec3::ONE,
        },
        Transform {
            translation: Vec3::Y,
            rotation: Quat::IDENTITY,
            scale: Vec3::splat(0.5),
        },
    ];
    let skeleton = Skeleton::from_parents("rig", vec![NO_PARENT, 0, 1], rest).expect("valid rig");
    let clip = Clip {
        name: "grow".into(),
        animation: 0,
        skeleton: 0,
        duration: 1.0,
        channels: vec![Channel {
            joint: 1,
            property: Property::Scale,
            interpolation: Interpolation::CubicSpline,
            times: vec![0.0, 1.0],
            values: vec![
                Vec4::ZERO,
                Vec4::splat(1.0),
                Vec4::splat(0.5),
                Vec4::splat(0.5),
                Vec4::splat(2.0),
                Vec4::ZERO,
            ]
            .into_iter()
            .map(|v| v.truncate().extend(0.0))
            .collect(),
        }],
    };
    (skeleton, clip)
}

/// A row of the uniform-scale table.
type RigRow = (&'static str, (Skeleton, Clip), &'static str, usize, usize);

#[test]
fn uniform_scale_check_rules() {
    let (skeleton, clip) = rig();
    assert_eq!(check_uniform_scale(&skeleton, [&clip], QT_F16_SCALE_TOLERANCE), Ok(()));
    assert_eq!(
        choose_f16_format(&skeleton, [&clip], QT_F16_SCALE_TOLERANCE),
        F16Kind::QtF16
    );

    let rest = {
        let mut s = skeleton.clone();
        s.rest_pose[2].scale = Vec3::new(0.5, 0.5, 0.6);
        (s, clip.clone())
    };
    let ibm = {
        let mut s = skeleton.clone();
        s.inverse_bind_matrices[1] = Mat4::from_cols_array(&[
            1.0, 0.2, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ]);
        (s, clip.clone())
    };
    let root = {
        let mut s = skeleton.clone();
        s.root_transform = Mat4::from_scale(Vec3::new(1.0, 2.0, 1.0));
        (s, clip.clone())
    };
    let key = {
        let mut c = clip.clone();
        c.channels[0].values[1] = Vec4::new(1.0, 1.0, 1.1, 0.0);
        (skeleton.clone(), c)
    };
    let tangent = {
        let mut c = clip.clone();
        c.channels[0].values[2] = Vec4::new(0.5, 0.0, 0.5, 0.0);
        (skeleton.clone(), c)
    };
    // (name, rig, what, index, joint)
    let rows: [RigRow; 5] = [
        ("rest scale", rest, "rest pose of joint", 2, 2),
        ("sheared inverse bind matrix", ibm, "inverse bind matrix", 1, 1),
        ("non-uniform root transform", root, "skeleton root transform", 0, 0),
        ("non-uniform key", key, "clip", 0, 1),
        ("non-uniform out-tangent", tangent, "clip", 0, 1),
    ];
    for (name, (s, c), what, index, joint) in rows {
        let got = check_uniform_scale(&s, [&c], QT_F16_SCALE_TOLERANCE);
        assert!(
            matches!(got, Err(Error::NonUniformScale { what: w, index: i, joint: j, deviation_ppm, tolerance_ppm: 489 })
                if w == what && i == index && j == joint && deviation_ppm > 489),
            "{name}: {got:?}"
        );
        assert_eq!(
            choose_f16_format(&s, [&c], QT_F16_SCALE_TOLERANCE),
            F16Kind::Mat3x4F16,
            "{name}"
        );
        assert!(got.unwrap_err().to_string().contains("use Mat3x4F16"));
    }
}
