//! Bad input gets an error naming what is wrong, never a panic: no skin, no clips, no meshes, NaN anywhere, joints
//! outside the skin, unknown sockets, options out of range, and formats that cannot hold the palettes.

mod common;

use anim_bake::{BakeOptions, BatFormat, Budget, Error, Parts, RateChoice, bake, plan};
use anim_pose::Model;
use glam::Vec3;

fn model() -> Model {
    anim_pose::import_file(common::default_character()).expect("the default character imports")
}

/// A cheap bake: the BAT alone at a fixed rate.
fn quick() -> BakeOptions {
    BakeOptions {
        parts: Parts { bat: true, vat: false },
        rate: RateChoice::Fixed(10.0),
        ..BakeOptions::default()
    }
}

fn bake_err(model: &Model, options: &BakeOptions) -> Error {
    let planned = plan(model, options, &|_| {});
    let baked = bake(model, options, &|_| {});
    match (planned, baked) {
        (_, Err(e)) => e,
        (_, Ok(_)) => panic!("the bake was expected to fail"),
    }
}

#[test]
fn no_skin() {
    let e = bake_err(&Model::default(), &quick());
    assert!(matches!(e, Error::NoSkin { skeleton: 0, count: 0 }), "{e}");
    let e = bake_err(&model(), &BakeOptions { skeleton: 3, ..quick() });
    assert!(matches!(e, Error::NoSkin { skeleton: 3, count: 1 }), "{e}");
}

#[test]
fn no_clips_and_no_meshes() {
    let mut m = model();
    m.clips.clear();
    assert!(matches!(bake_err(&m, &quick()), Error::NoClips { .. }));
    let mut m = model();
    m.bindings.clear();
    assert!(matches!(bake_err(&m, &quick()), Error::NoMeshes { .. }));
}

#[test]
fn nan_anywhere() {
    let mut m = model();
    m.meshes[0].positions[17] = Vec3::new(0.0, f32::NAN, 0.0);
    let e = bake_err(&m, &quick());
    assert!(
        matches!(
            e,
            Error::NotFinite {
                what: "vertex position",
                index: 17
            }
        ),
        "{e}"
    );

    let mut m = model();
    m.meshes[0].normals[3] = Vec3::INFINITY;
    assert!(matches!(
        bake_err(&m, &quick()),
        Error::NotFinite {
            what: "vertex normal",
            index: 3
        }
    ));

    let mut m = model();
    m.meshes[0].weights[5][0] = f32::NAN;
    assert!(matches!(
        bake_err(&m, &quick()),
        Error::NotFinite {
            what: "vertex weight",
            index: 5
        }
    ));

    let mut m = model();
    m.clips[1].channels[0].values[2] = glam::Vec4::NAN;
    let e = bake_err(&m, &quick());
    assert!(matches!(e, Error::Pose(_)), "{e}");
    assert!(e.to_string().contains("not finite"), "{e}");

    let mut m = model();
    m.skeletons[0].root_transform.w_axis.x = f32::NAN;
    assert!(matches!(
        bake_err(&m, &quick()),
        Error::NotFinite {
            what: "root transform of skeleton",
            ..
        } | Error::Pose(_)
    ));
}

#[test]
fn joints_outside_the_skin() {
    let mut m = model();
    m.meshes[0].joints[9][1] = 200;
    let e = bake_err(&m, &quick());
    assert!(
        matches!(
            e,
            Error::JointOutOfRange {
                vertex: 9,
                joint: 200,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn unknown_socket() {
    let options = BakeOptions {
        sockets: vec!["no such joint".into()],
        ..quick()
    };
    let e = bake_err(&model(), &options);
    assert!(
        matches!(&e, Error::UnknownSocket { name, .. } if name == "no such joint"),
        "{e}"
    );
}

#[test]
fn options_out_of_range() {
    let m = model();
    for options in [
        BakeOptions {
            budget: Budget::Absolute(f32::NAN),
            ..quick()
        },
        BakeOptions {
            budget: Budget::Relative(0.0),
            ..quick()
        },
        BakeOptions {
            normal_budget_rad: -1.0,
            ..quick()
        },
        BakeOptions {
            rate: RateChoice::Fixed(f32::INFINITY),
            ..quick()
        },
        BakeOptions {
            rate: RateChoice::Budget {
                min_hz: 60.0,
                max_hz: 30.0,
            },
            ..quick()
        },
        BakeOptions { segments: 7, ..quick() },
        BakeOptions {
            vat_max_width: 0,
            ..quick()
        },
        BakeOptions {
            parts: Parts { bat: false, vat: false },
            ..quick()
        },
    ] {
        assert!(
            matches!(bake_err(&m, &options), Error::InvalidOption { .. }),
            "{options:?}"
        );
    }
}

#[test]
fn formats_that_cannot_hold_the_palettes() {
    // A non-uniform rest scale: QtF16 cannot be used, and forcing it is an error that names the scale.
    let mut m = model();
    m.skeletons[0].rest_pose[0].scale = Vec3::new(1.0, 2.0, 1.0);
    let options = BakeOptions {
        bat_format: Some(BatFormat::QtF16),
        ..quick()
    };
    let planned = plan(&m, &options, &|_| {}).unwrap();
    let bat = planned.bat.as_ref().unwrap();
    assert!(bat.chosen().unusable.is_some() && !planned.meets_budget());
    let e = bake_err(&m, &options);
    assert!(
        matches!(e, Error::Skin(skin_pack::Error::NonUniformScale { .. })),
        "{e}"
    );

    // Translations past the f16 range: Mat3x4F16 cannot hold them, and the cheapest choice falls back to f32.
    let mut m = model();
    m.skeletons[0].root_transform = glam::Mat4::from_translation(Vec3::new(1e6, 0.0, 0.0));
    let forced = BakeOptions {
        bat_format: Some(BatFormat::Mat3x4F16),
        ..quick()
    };
    let e = bake_err(&m, &forced);
    assert!(matches!(e, Error::Skin(skin_pack::Error::F16Overflow { .. })), "{e}");
    let (baked, _) = bake(&m, &quick(), &|_| {}).unwrap();
    assert_eq!(baked.bat.unwrap().format, BatFormat::F32);
}

#[test]
fn a_still_clip_bakes_two_identical_frames() {
    let mut m = model();
    m.clips.truncate(1);
    m.clips[0].duration = 0.0;
    for ch in &mut m.clips[0].channels {
        let per_key = ch.values.len() / ch.times.len();
        ch.times.truncate(1);
        ch.times[0] = 0.0;
        ch.values.truncate(per_key);
    }
    let (baked, report) = bake(
        &m,
        &BakeOptions {
            parts: Parts { bat: true, vat: true },
            ..quick()
        },
        &|_| {},
    )
    .unwrap();
    let bat = baked.bat.unwrap();
    assert_eq!(bat.clips[0].frame_count, 2);
    assert_eq!(bat.clips[0].rate_hz, 0.0);
    assert!(!report.clips[0].looping);
    assert!(report.within_budget(), "{report:?}");
}
