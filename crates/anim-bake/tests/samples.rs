//! The sample models bake within the budget, measured against CPU reference skinning of the exact clips.
//!
//! CesiumMan is modelled in metres, so its budget is the default 1 mm. The Fox is modelled in centimetre-sized units
//! (about 150 units from nose to tail), so its budget is 100 units of a thousandth: 1 mm at the fox's own scale.

mod common;

use anim_bake::{BakeOptions, bake};

fn bake_sample(relative: &str, budget_mm: f32, sockets: &[&str]) {
    let Some(path) = common::asset_file(relative) else {
        return;
    };
    let model = anim_pose::import_file(&path).expect("the sample imports");
    let options = BakeOptions {
        budget_mm,
        sockets: sockets.iter().map(|s| (*s).to_owned()).collect(),
        ..BakeOptions::default()
    };
    let (baked, report) = bake(&model, &options, &|_| {}).expect("the sample bakes");
    for clip in &report.clips {
        for (part, r) in [("BAT", clip.bat), ("VAT", clip.vat), ("sockets", clip.sockets)] {
            let Some(r) = r else { continue };
            eprintln!(
                "{relative} {} {part}: {} frames at {:.2} Hz, largest error {:.4} mm ({:.3} of the budget) at {:.4} s \
                 vertex {}, seam jump {:.4} mm",
                clip.name,
                r.frames,
                r.rate_hz,
                r.error.distance * 1e3,
                r.error.distance * 1e3 / budget_mm,
                r.error.time,
                r.error.vertex,
                r.seam_jump * 1e3
            );
        }
        assert!(clip.within_budget(), "{relative} {}: {clip:?}", clip.name);
    }
    eprintln!(
        "{relative}: BAT {:?} {} B, VAT {:?} {} B",
        report.bat_format,
        baked.bat.as_ref().map_or(0, |b| b.byte_len()),
        report.vat_format,
        baked.vat.as_ref().map_or(0, |v| v.byte_len())
    );
    assert_eq!(baked.sockets.is_some(), !sockets.is_empty());
}

#[test]
fn cesium_man_bakes_within_the_budget() {
    bake_sample("gltf/CesiumMan/CesiumMan.glb", 1.0, &["Skeleton_arm_joint_R__3_"]);
}

#[test]
fn fox_bakes_within_the_budget() {
    bake_sample("gltf/Fox/Fox.glb", 100.0, &[]);
}

#[test]
fn rigged_simple_bakes_within_the_budget() {
    bake_sample("gltf/RiggedSimple/RiggedSimple.glb", 1.0, &[]);
}
