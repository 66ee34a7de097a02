//! The sample models bake within the default budget, 1/1800 of each model's extent, measured against CPU reference
//! skinning of the exact clips. (The Fox, modelled in other units, is baked in `budget_scale.rs`.)

mod common;

use anim_bake::{BakeOptions, bake};

fn bake_sample(relative: &str, sockets: &[&str]) {
    let Some(path) = common::asset_file(relative) else {
        return;
    };
    let model = anim_pose::import_file(&path).expect("the sample imports");
    let options = BakeOptions {
        sockets: sockets.iter().map(|s| (*s).to_owned()).collect(),
        ..BakeOptions::default()
    };
    let (baked, report) = bake(&model, &options, &|_| {}).expect("the sample bakes");
    for clip in &report.clips {
        for (part, r) in [("BAT", clip.bat), ("VAT", clip.vat), ("sockets", clip.sockets)] {
            let Some(r) = r else { continue };
            eprintln!(
                "{relative} {} {part}: {} frames at {:.2} Hz, largest error {:.3e} ({:.3} of the budget) at {:.4} s \
                 vertex {}, seam jump {:.3e}",
                clip.name,
                r.frames,
                r.rate_hz,
                r.error.distance,
                r.error.distance / clip.budget,
                r.error.time,
                r.error.vertex,
                r.seam_jump
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
    bake_sample("gltf/CesiumMan/CesiumMan.glb", &["Skeleton_arm_joint_R__3_"]);
}

#[test]
fn rigged_simple_bakes_within_the_budget() {
    bake_sample("gltf/RiggedSimple/RiggedSimple.glb", &[]);
}
