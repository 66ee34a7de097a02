//! Budgets follow the model's size. The Fox, about 155 units long, bakes within the default budget (1/1800 of its
//! extent); the same model scaled by 100 and by 0.01 (a uniform scale in front of its root transform, as a scaled
//! parent node would give) gets a budget scaled by the same factor and the same frame counts; no plan lists an error
//! that is not finite, also where no format can meet the budget; a budget no format meets falls back to the least
//! error at the most frames; and bad budgets are refused with an error naming the field.

mod common;

use anim_bake::{
    BakeOptions, BatFormat, Budget, DEFAULT_RELATIVE_BUDGET, Error, FormatPlan, Miss, Parts, Plan, RateChoice, bake,
    plan,
};
use anim_pose::Model;
use glam::{Mat4, Vec3};

const FOX: &str = "gltf/Fox/Fox.glb";

/// A sample model, or `None` where the sample assets are not configured.
fn sample(relative: &str) -> Option<Model> {
    let path = common::asset_file(relative)?;
    Some(anim_pose::import_file(&path).expect("the sample imports"))
}

/// `model` with every skeleton's root transform scaled uniformly by `s`: every skinned vertex, in instance space,
/// scales by `s`.
fn scaled(model: &Model, s: f32) -> Model {
    let mut m = model.clone();
    for skeleton in &mut m.skeletons {
        skeleton.root_transform = Mat4::from_scale(Vec3::splat(s)) * skeleton.root_transform;
    }
    m
}

/// True when `a` and `b` differ by at most `rel` of the larger.
fn close(a: f32, b: f32, rel: f32) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

/// The largest error a format plan lists.
fn worst<F>(f: &FormatPlan<F>) -> f32 {
    f.clips.iter().map(|c| c.predicted.distance).fold(0.0, f32::max)
}

#[test]
fn the_fox_bakes_within_the_default_budget() {
    let Some(fox) = sample(FOX) else { return };
    let (baked, report) = bake(&fox, &BakeOptions::default(), &|_| {}).expect("the Fox bakes");
    let b = report.budget;
    eprintln!(
        "Fox: extent {} units, budget {} units, largest error {}, {} bytes (BAT {:?}, VAT {:?})",
        b.extent,
        b.distance,
        report.largest_error(),
        report.data_bytes,
        report.bat_format,
        report.vat_format
    );
    assert_eq!(b.budget, Budget::Relative(DEFAULT_RELATIVE_BUDGET));
    // The rest pose's longest side: nose to tail.
    assert!((140.0..180.0).contains(&b.extent), "{}", b.extent);
    assert!(close(b.distance, b.extent / 1800.0, 1e-6), "{b:?}");
    for clip in &report.clips {
        assert!(clip.within_budget(), "{}: {clip:?}", clip.name);
    }
    assert!(report.within_budget() && report.largest_error() > 0.0);
    // The bake file keeps the budget in thousandths of a model unit.
    assert!(close(baked.budget_mm, b.distance * 1e3, 1e-6));
    // The demo bakes the BAT in f32, which meets the budget too.
    let demo = BakeOptions {
        bat_format: Some(BatFormat::F32),
        ..BakeOptions::default()
    };
    let p = plan(&fox, &demo, &|_| {}).unwrap();
    assert!(p.meets_budget(), "{p:?}");
}

#[test]
fn a_scaled_fox_gets_a_scaled_budget_and_the_same_frames() {
    let Some(fox) = sample(FOX) else { return };
    let options = BakeOptions::default();
    let reference = plan(&fox, &options, &|_| {}).unwrap();
    // f32 palettes and VAT positions (unorm codes relative to the clip's box) err in proportion to the model's size,
    // so any scale keeps their frame counts. f16 rounds relative to powers of two: a scale by 100 moves every value
    // within its binade and changes its rounding, so the f16 palette formats keep their counts only under a power
    // of two (128 and 1/128 keep every f16 value's significand, but for subnormal halves).
    for (s, f16_too) in [(100.0, false), (0.01, false), (128.0, true), (1.0 / 128.0, true)] {
        let p = plan(&scaled(&fox, s), &options, &|_| {}).unwrap();
        let what = format!("Fox x{s}");
        assert!(
            close(p.budget.extent, s * reference.budget.extent, 1e-5),
            "{what}: {:?}",
            p.budget
        );
        assert!(
            close(p.budget.distance, s * reference.budget.distance, 1e-5),
            "{what}: {:?}",
            p.budget
        );
        assert!(p.meets_budget(), "{what}");
        assert_eq!(
            p.clips.iter().map(|c| c.looping).collect::<Vec<_>>(),
            [true; 3],
            "{what}"
        );
        let bat = (p.bat.as_ref().unwrap(), reference.bat.as_ref().unwrap());
        let vat = (p.vat.as_ref().unwrap(), reference.vat.as_ref().unwrap());
        for (fa, fb) in bat.0.formats.iter().zip(&bat.1.formats) {
            if fa.format == BatFormat::F32 || f16_too {
                same_frames(&what, s, fa, fb);
            }
        }
        for (fa, fb) in vat.0.formats.iter().zip(&vat.1.formats) {
            same_frames(&what, s, fa, fb);
        }
        assert_eq!(vat.0.chosen().format, vat.1.chosen().format, "{what}");
        if f16_too {
            assert_eq!(bat.0.chosen().format, bat.1.chosen().format, "{what}");
            assert_eq!(p.total_bytes(), reference.total_bytes(), "{what}");
        }
    }
}

/// Checks that format plan `a`, of a model scaled by `s`, has the frames of `b`, and errors `s` times `b`'s.
fn same_frames<F: PartialEq + std::fmt::Debug>(what: &str, s: f32, a: &FormatPlan<F>, b: &FormatPlan<F>) {
    assert_eq!((&a.format, &a.unusable), (&b.format, &b.unusable), "{what}");
    let counts = |f: &FormatPlan<F>| f.clips.iter().map(|c| c.intervals).collect::<Vec<_>>();
    assert_eq!(counts(a), counts(b), "{what} {:?}", a.format);
    assert_eq!(
        (a.meets_budget, a.bytes),
        (b.meets_budget, b.bytes),
        "{what} {:?}",
        a.format
    );
    for (ca, cb) in a.clips.iter().zip(&b.clips) {
        assert!(
            close(ca.predicted.distance, s * cb.predicted.distance, 1e-3),
            "{what} {:?}: {} vs {} x {s}",
            a.format,
            ca.predicted.distance,
            cb.predicted.distance
        );
    }
}

/// Checks that every error `plan` lists is finite, that every candidate that misses the budget says why (or that
/// the search stopped at a cheaper format's cost), and that every unusable format says why.
fn check_finite(what: &str, plan: &Plan) {
    assert!(plan.budget.distance.is_finite() && plan.budget.distance > 0.0, "{what}");
    fn part<F: std::fmt::Debug>(what: &str, p: &anim_bake::PartPlan<F>) {
        for f in &p.formats {
            if let Some(why) = &f.unusable {
                assert!(!why.is_empty() && f.clips.is_empty(), "{what} {:?}", f.format);
                continue;
            }
            for c in &f.clips {
                let finite = [
                    c.predicted.distance,
                    c.seam_jump,
                    c.predicted_normal.map_or(0.0, |n| n.distance),
                ]
                .iter()
                .all(|x| x.is_finite() && *x >= 0.0);
                assert!(finite, "{what} {:?}: {c:?}", f.format);
                assert_eq!(
                    c.meets_budget,
                    c.miss.is_none() && !c.capped,
                    "{what} {:?}: {c:?}",
                    f.format
                );
            }
        }
        assert!(p.chosen().unusable.is_none() || p.formats.len() == 1, "{what}");
    }
    if let Some(p) = &plan.bat {
        part(what, p);
    }
    if let Some(p) = &plan.vat {
        part(what, p);
    }
    if let Some(p) = &plan.sockets {
        part(what, p);
    }
}

#[test]
fn no_plan_lists_an_error_that_is_not_finite() {
    let mut models = vec![
        ("tiny", common::tiny_model()),
        (
            "default character",
            anim_pose::import_file(common::default_character()).unwrap(),
        ),
    ];
    for relative in [
        FOX,
        "gltf/CesiumMan/CesiumMan.glb",
        "gltf/RiggedSimple/RiggedSimple.glb",
    ] {
        if let Some(m) = sample(relative) {
            models.push((relative, m));
        }
    }
    // The default; 1 mm, which the Fox misses in every format (the VAT formats by their quantization alone); and a
    // budget that nothing meets, at a rate low enough to keep the test quick.
    let budgets = [
        (
            Budget::default(),
            RateChoice::Budget {
                min_hz: 1.0,
                max_hz: 120.0,
            },
        ),
        (
            Budget::Absolute(1e-3),
            RateChoice::Budget {
                min_hz: 1.0,
                max_hz: 120.0,
            },
        ),
        (
            Budget::Relative(1e-7),
            RateChoice::Budget {
                min_hz: 1.0,
                max_hz: 15.0,
            },
        ),
    ];
    for (name, model) in &models {
        for (budget, rate) in budgets {
            let options = BakeOptions {
                budget,
                rate,
                ..BakeOptions::default()
            };
            let p = plan(model, &options, &|_| {}).unwrap_or_else(|e| panic!("{name} {budget:?}: {e}"));
            check_finite(&format!("{name} {budget:?}"), &p);
        }
    }
}

#[test]
fn a_budget_no_format_meets_falls_back_to_the_least_error() {
    // The case: 1 mm on the Fox, which is about 155 units long. Every format misses, and the plan used to
    // bake at the first guess (30 Hz) in a format that only bounded its stored frames, 2.6 units off.
    let Some(fox) = sample(FOX) else { return };
    let options = BakeOptions {
        budget: Budget::Absolute(1e-3),
        ..BakeOptions::default()
    };
    let p = plan(&fox, &options, &|_| {}).unwrap();
    check_finite("Fox at 1 mm", &p);
    assert!(!p.meets_budget());
    let hi: Vec<u32> = fox
        .clips
        .iter()
        .map(|c| (c.duration * 120.0 * (1.0 - 1e-6)).ceil() as u32)
        .collect();
    fn fallback<F: std::fmt::Debug>(part: &anim_bake::PartPlan<F>, hi: &[u32]) -> f32 {
        let chosen = part.chosen();
        for f in part.formats.iter().filter(|f| f.unusable.is_none()) {
            assert!(!f.meets_budget, "{:?}", f.format);
            // No rate helps, so every format is at its most frames, where it errs least.
            let counts: Vec<u32> = f.clips.iter().map(|c| c.intervals).collect();
            assert_eq!(counts, hi, "{:?}", f.format);
            assert!(f.clips.iter().all(|c| c.miss.is_some()), "{:?}", f.format);
            // The chosen format's measured error is within every other's upper bound.
            assert!(worst(chosen) <= worst(f) * 1.001, "{:?}: {}", f.format, worst(f));
        }
        worst(chosen)
    }
    let bat = fallback(p.bat.as_ref().unwrap(), &hi);
    let vat = fallback(p.vat.as_ref().unwrap(), &hi);
    eprintln!(
        "Fox at 1 mm: BAT {:?} {bat}, VAT {:?} {vat}",
        p.bat.as_ref().unwrap().chosen().format,
        p.vat.as_ref().unwrap().chosen().format
    );
    assert!(
        bat < 0.2 && vat < 0.2,
        "BAT {bat}, VAT {vat}: the least error is under a tenth of the old fallback's"
    );
    // The VAT formats miss by their quantization alone, which the plan says, with a finite bound.
    for f in &p.vat.as_ref().unwrap().formats {
        for c in &f.clips {
            assert!(
                matches!(c.miss, Some(Miss::Quantization { bound }) if bound >= 1e-3 && bound.is_finite()),
                "{:?}: {c:?}",
                f.format
            );
            assert!(c.predicted.distance >= 1e-3);
        }
    }
}

#[test]
fn bad_budgets_are_refused_naming_the_field() {
    let model = common::tiny_model();
    let rows = [
        (Budget::Absolute(0.0), "budget (Absolute distance)"),
        (Budget::Absolute(f32::NAN), "budget (Absolute distance)"),
        (Budget::Relative(-1.0), "budget (Relative fraction)"),
        (Budget::Relative(f32::INFINITY), "budget (Relative fraction)"),
        (
            Budget::Pixels {
                error_px: 0.0,
                extent_px: 500.0,
            },
            "budget (Pixels error_px)",
        ),
        (
            Budget::Pixels {
                error_px: 1.0,
                extent_px: -500.0,
            },
            "budget (Pixels extent_px)",
        ),
    ];
    for (budget, field) in rows {
        let options = BakeOptions {
            budget,
            parts: Parts { bat: true, vat: false },
            ..BakeOptions::default()
        };
        for e in [
            options.validate().unwrap_err(),
            plan(&model, &options, &|_| {}).unwrap_err(),
            bake(&model, &options, &|_| {}).unwrap_err(),
        ] {
            assert!(
                matches!(&e, Error::InvalidOption { what, .. } if *what == field),
                "{budget:?}: {e}"
            );
            assert!(e.to_string().contains(field), "{e}");
        }
    }
    // A pixel budget is the same share of the model as the relative one it equals.
    let px = BakeOptions {
        budget: Budget::Pixels {
            error_px: 1.0,
            extent_px: 1800.0,
        },
        ..BakeOptions::default()
    };
    let (a, b) = (
        plan(&model, &px, &|_| {}).unwrap(),
        plan(&model, &BakeOptions::default(), &|_| {}).unwrap(),
    );
    assert!(close(a.budget.distance, b.budget.distance, 1e-6));
}

#[test]
fn a_model_without_extent_needs_an_absolute_budget() {
    // Every vertex at the origin: the rest pose has no extent, so a relative budget is no distance at all.
    let mut model = common::tiny_model();
    for p in &mut model.meshes[0].positions {
        *p = Vec3::ZERO;
    }
    let e = plan(&model, &BakeOptions::default(), &|_| {}).unwrap_err();
    assert!(matches!(e, Error::BudgetResolution { extent: 0.0, .. }), "{e}");
    assert!(e.to_string().contains("absolute budget"), "{e}");
    let absolute = BakeOptions {
        budget: Budget::Absolute(1e-3),
        ..BakeOptions::default()
    };
    let p = plan(&model, &absolute, &|_| {}).unwrap();
    assert_eq!((p.budget.distance, p.budget.extent), (1e-3, 0.0));
}
