//! Baking the default character from the default budget (1/1800 of its 1.798 m extent: 0.999 mm): every clip and
//! part within the budget, as measured against CPU reference skinning of the exact clip; the plan's choices; the
//! loop seam; and the segment bounds.

mod common;

use std::sync::OnceLock;

use anim_bake::{Bake, BakeOptions, BakeReport, BatFormat, Plan, bake, plan};
use anim_pose::{Model, Transform};
use glam::{Affine3A, Mat4, Vec3};
use skin_pack::{SkinInput, SkinOutput, palette_from_model, skin_reference};

/// The default character, its plan and its bake at the default options (about 1 mm), made once for every test here.
fn baked() -> &'static (Model, Plan, Bake, BakeReport) {
    static BAKED: OnceLock<(Model, Plan, Bake, BakeReport)> = OnceLock::new();
    BAKED.get_or_init(|| {
        let model = anim_pose::import_file(common::default_character()).expect("the default character imports");
        let options = BakeOptions::default();
        let plan = plan(&model, &options, &|_| {}).expect("the default character plans");
        let (baked, report) = bake(&model, &options, &|_| {}).expect("the default character bakes");
        (model, plan, baked, report)
    })
}

/// Exactly skinned positions of every mesh of skeleton 0 at clip `clip`, time `t`, in instance space.
fn exact_positions(model: &Model, clip: usize, t: f32) -> Vec<Vec3> {
    let skeleton = &model.skeletons[0];
    let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
    let mut m4 = vec![Mat4::IDENTITY; skeleton.joint_count()];
    model.clips[clip].sample_local_pose(skeleton, t, &mut local).unwrap();
    skeleton.local_to_model(&local, &mut m4).unwrap();
    let model_space: Vec<Affine3A> = m4.iter().map(|m| Affine3A::from_mat4(*m)).collect();
    let mut palette = vec![Affine3A::IDENTITY; skeleton.skin_joint_count()];
    let root = Affine3A::from_mat4(skeleton.root_transform);
    palette_from_model(skeleton, &model_space, Some(&root), &mut palette).unwrap();
    skin(model, &palette)
}

/// Every mesh of skeleton 0 skinned with `palette`.
fn skin(model: &Model, palette: &[Affine3A]) -> Vec<Vec3> {
    let mut out = Vec::new();
    for mesh in &model.meshes {
        let mut p = vec![Vec3::ZERO; mesh.positions.len()];
        let input = SkinInput {
            positions: &mesh.positions,
            normals: &[],
            tangents: &[],
            joints: &mesh.joints,
            weights: &mesh.weights,
        };
        let mut output = SkinOutput {
            positions: &mut p,
            normals: &mut [],
            tangents: &mut [],
        };
        skin_reference(palette, &input, &mut output).unwrap();
        out.extend(p);
    }
    out
}

fn largest(a: &[Vec3], b: &[Vec3]) -> f32 {
    a.iter().zip(b).map(|(p, q)| p.distance(*q)).fold(0.0, f32::max)
}

#[test]
fn every_clip_and_part_is_within_the_budget() {
    let (_, _, baked, report) = baked();
    for clip in &report.clips {
        for (part, r) in [("BAT", clip.bat), ("VAT", clip.vat)] {
            let r = r.unwrap();
            eprintln!(
                "{} {part}: {} frames at {:.2} Hz, largest error {:.4} mm at {:.4} s vertex {}, seam jump {:.4} mm",
                clip.name,
                r.frames,
                r.rate_hz,
                r.error.distance * 1e3,
                r.error.time,
                r.error.vertex,
                r.seam_jump * 1e3
            );
        }
        let normal = clip.vat_normal.unwrap();
        eprintln!("{} VAT normal: {:.4} rad", clip.name, normal.distance);
        assert!(clip.within_budget(), "{}: {clip:?}", clip.name);
        assert!(normal.distance <= 0.035);
    }
    assert!(report.within_budget());
    let budget = report.budget.distance;
    assert!(
        (0.99e-3..=1e-3).contains(&budget),
        "1/1800 of the character's 1.798 m: {budget}"
    );
    assert!(report.largest_error() <= budget);
    assert_eq!(report.data_bytes, baked.data_bytes());
}

#[test]
fn the_plan_is_what_was_baked() {
    let (_, plan, baked, report) = baked();
    let bat = baked.bat.as_ref().unwrap();
    let vat = baked.vat.as_ref().unwrap();
    let bat_plan = plan.bat.as_ref().unwrap().chosen();
    let vat_plan = plan.vat.as_ref().unwrap().chosen();
    assert_eq!(bat.format, bat_plan.format);
    assert_eq!(vat.format, vat_plan.format);
    assert!(plan.fits());
    assert!(plan.meets_budget());
    assert_eq!(plan.total_bytes(), baked.data_bytes());
    for (c, clip) in report.clips.iter().enumerate() {
        assert_eq!(bat.clips[c].frame_count, bat_plan.clips[c].intervals + 1);
        assert_eq!(vat.clips[c].frame_count, vat_plan.clips[c].intervals + 1);
        // The plan's measurement is the report's, up to the rounding of mixing rows before or after skinning.
        let predicted = bat_plan.clips[c].predicted.distance;
        assert!(
            (predicted - clip.bat.unwrap().error.distance).abs() < 2e-6,
            "{}",
            clip.name
        );
    }
    // The cheapest format within the budget: every cheaper one misses it somewhere, or costs more.
    for part in &plan.bat.as_ref().unwrap().formats {
        if part.meets_budget {
            assert!(part.bytes >= bat_plan.bytes);
        }
    }
    assert_eq!(
        bat_plan.format,
        BatFormat::F32,
        "f16 palettes cost about 1 mm on the default character"
    );
    // The figure targets of the `baked` bench group.
    assert!(bat.byte_len() <= 1 << 20, "BAT {} bytes", bat.byte_len());
    let vertex_frames = u64::from(vat.layout.vertex_count) * u64::from(vat.layout.frame_count);
    assert!(vat.byte_len() as u64 <= 8 * vertex_frames);
}

#[test]
fn fewer_frames_miss_the_budget() {
    // The plan's counts are the smallest that meet the budget: one interval fewer misses it (measured here
    // independently, at the midpoints of the coarser frames), except where the rate floor stops the search.
    let (model, plan, _, _) = baked();
    let budget = plan.budget.distance;
    let bat_plan = plan.bat.as_ref().unwrap().chosen();
    for (c, cand) in bat_plan.clips.iter().enumerate() {
        let n = cand.intervals;
        if n <= 1 {
            continue;
        }
        let options = BakeOptions {
            rate: anim_bake::RateChoice::Fixed((n - 1) as f32 / model.clips[c].duration),
            parts: anim_bake::Parts { bat: true, vat: false },
            bat_format: Some(bat_plan.format),
            ..BakeOptions::default()
        };
        let coarser = anim_bake::plan(model, &options, &|_| {}).unwrap();
        let coarse = coarser.bat.as_ref().unwrap().chosen().clips[c];
        assert_eq!(coarse.intervals, n - 1);
        eprintln!(
            "{}: {n} intervals {:.4} mm, {} intervals {:.4} mm",
            model.clips[c].name,
            cand.predicted.distance * 1e3,
            n - 1,
            coarse.predicted.distance * 1e3
        );
        assert!(coarse.predicted.distance > budget || !coarse.meets_budget || coarse.seam_jump > budget);
    }
}

#[test]
fn playback_around_the_loop_seam_is_within_the_budget() {
    let (model, _, baked, report) = baked();
    let bat = baked.bat.as_ref().unwrap();
    let vat = baked.vat.as_ref().unwrap();
    let budget = report.budget.distance;
    let mut palette = vec![Affine3A::IDENTITY; bat.joint_count as usize];
    for (c, clip) in report.clips.iter().enumerate() {
        let record = bat.clips[c];
        assert!(clip.looping, "{} loops", clip.name);
        assert!(clip.bat.unwrap().seam_jump <= budget && clip.vat.unwrap().seam_jump <= budget);
        let d = record.duration;
        let h = 1.0 / record.rate_hz;
        // Just before the end, at the end (which wraps to the start), just after it, and a whole loop later.
        for (t, exact_t) in [
            (d - 0.5 * h, d - 0.5 * h),
            (d - 1e-4, d - 1e-4),
            (d, 0.0),
            (d + 0.25 * h, 0.25 * h),
            (3.0 * d + 0.5 * h, 0.5 * h),
        ] {
            let exact = exact_positions(model, c, exact_t);
            bat.sample_palette(c, t, &mut palette).unwrap();
            let e = largest(&skin(model, &palette), &exact);
            let v = (0..exact.len() as u32)
                .map(|i| vat.sample(c, t, i).unwrap().0.distance(exact[i as usize]))
                .fold(0.0, f32::max);
            assert!(e <= budget && v <= budget, "{} at {t}: BAT {e}, VAT {v}", clip.name);
        }
    }
}

#[test]
fn segment_bounds_hold_every_played_back_vertex() {
    let (model, _, baked, _) = baked();
    let bat = baked.bat.as_ref().unwrap();
    let vat = baked.vat.as_ref().unwrap();
    let mut palette = vec![Affine3A::IDENTITY; bat.joint_count as usize];
    for (c, clip) in baked.clips.iter().enumerate() {
        let record = bat.clips[c];
        let union = baked.bounds.clips[c];
        let segments = &baked.bounds.segments
            [record.first_segment as usize..(record.first_segment + record.segment_count) as usize];
        assert!(segments.len() >= 8);
        let mut tighter = false;
        for step in 0..200 {
            let t = clip.duration * step as f32 / 199.0;
            let s = segments[record.segment_at(t) as usize];
            assert_eq!(vat.clips[c].segment_at(t), record.segment_at(t));
            bat.sample_palette(c, t, &mut palette).unwrap();
            let positions = skin(model, &palette);
            let exact = exact_positions(model, c, t);
            for (i, (p, e)) in positions.iter().zip(&exact).enumerate() {
                let (q, _) = vat.sample(c, t, i as u32).unwrap();
                for point in [*p, *e, q] {
                    assert!(
                        s.contains(point),
                        "{} t {t}: vertex {i} at {point} outside {s:?}",
                        clip.name
                    );
                    assert!(union.contains(point));
                }
            }
            tighter |= s != union;
        }
        assert!(tighter, "{}: some segment is tighter than the clip's box", clip.name);
    }
}
