//! Every named scene renders one small headless frame on a real adapter (lavapipe on machines without a GPU),
//! sized as `WGPU-NOTES.md` allows: a few dozen characters, 256 x 160 pixels. The frame is drawn in the instance
//! view, where each character is one flat, unlit colour: those pixels must cover part of the image and leave sky and
//! ground around them, which fails when the camera is framed for another unit (inside a character, or too far away
//! to see one). The school, whose fish have no instance view, is compared with its frame without fish.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use common::{have_adapter, headless_args};
use crowd_demo::View;
use crowd_demo::assets::Assets;
use crowd_demo::scene::{Scene, scene_path};

mod common;

fn args(scene: &str, count: usize, model: Option<PathBuf>, out: &Path, view: View) -> crowd_demo::Args {
    let mut a = headless_args(scene, count, "256x160", out);
    a.model = model;
    a.view = view;
    a
}

/// Renders `scene` with `count` characters of `model`; returns the share of pixels that show a character.
fn crowd_cover(scene: &str, count: usize, model: Option<PathBuf>) -> f32 {
    let tag = model.as_ref().map_or("default", |_| "model");
    let out = std::env::temp_dir().join(format!("crowd-demo-test-{scene}-{tag}-{}", std::process::id()));
    let s = Scene::load(&scene_path(scene)).expect("scene");
    let assets = std::sync::Arc::new(
        Assets::load(
            &model.clone().unwrap_or_else(crowd_demo::assets::default_model),
            s.spear.as_deref(),
        )
        .expect("model"),
    );
    let frame =
        crowd_demo::headless::render(&args(scene, count, model, &out, View::Instance), &s, &assets).expect("render");
    assert_eq!(frame.report.instances, count);
    let drawn = frame.report.last_frame;
    assert!(drawn.visible > 0, "{drawn:?}");
    // The stats' counted work: every triangle the crowd's draws asked for reached the clipper, and some were
    // rasterised (lavapipe has pipeline-statistics queries).
    if let Some(work) = drawn.work {
        assert_eq!(work.clipper_invocations, drawn.triangles, "{drawn:?}");
        assert!(work.primitives > 0 && work.fragment_invocations > 0, "{drawn:?}");
    } else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI's lavapipe counts the GPU's work"
        );
        eprintln!("SKIPPED: the adapter has no pipeline-statistics queries; the work counts were not checked");
    }
    assert_eq!(frame.files.len(), 1, "one frame drawn: written once");
    let colours: HashSet<[u8; 3]> = (0..512).map(crowd_gpu::instance_id_color).collect();
    let covered = frame
        .last
        .chunks_exact(4)
        .filter(|p| colours.contains(&[p[0], p[1], p[2]]))
        .count();
    covered as f32 / (frame.last.len() / 4) as f32
}

#[test]
fn each_scene_renders_a_headless_frame_with_its_crowd_in_view() {
    if !have_adapter() {
        return;
    }
    for scene in ["army", "plaza"] {
        let cover = crowd_cover(scene, 48, None);
        eprintln!("{scene}: the crowd covers {:.1}% of the frame", cover * 100.0);
        assert!(cover > 0.005 && cover < 0.6, "{scene}: {cover}");
    }
}

#[test]
fn a_model_in_other_units_is_framed_by_its_own_bounds() {
    let Some(dir) = sample_assets::sample_assets() else {
        return;
    };
    if !have_adapter() {
        return;
    }
    // The Fox is about 100 units long: framed for metres, the camera would sit inside it.
    let fox = dir.join("gltf/Fox/Fox.glb");
    let cover = crowd_cover("army", 100, Some(fox));
    eprintln!("army with the Fox: the crowd covers {:.1}% of the frame", cover * 100.0);
    assert!(cover > 0.005 && cover < 0.6, "{cover}");
}

/// The school's fish are on the procedural tier, which has no instance view: its frame with `count` fish is
/// compared with the same frame without any, and the share of pixels that got brighter (shadows only darken) is
/// the fish's cover.
fn school_cover(count: usize) -> f32 {
    let out = std::env::temp_dir().join(format!("crowd-demo-test-school-{}", std::process::id()));
    // The torus is sized for the scene's count, so both frames have the same camera.
    let mut s = Scene::load(&scene_path("school")).expect("scene");
    s.count = count;
    let assets = std::sync::Arc::new(Assets::load(&crowd_demo::assets::default_model(), None).expect("model"));
    let frame = |n: usize| {
        let r =
            crowd_demo::headless::render(&args("school", n, None, &out, View::Shaded), &s, &assets).expect("render");
        assert_eq!(r.report.instances, n);
        r.last
    };
    let (fish, empty) = (frame(count), frame(0));
    let changed = fish
        .chunks_exact(4)
        .zip(empty.chunks_exact(4))
        // Brighter in some channel: the fish's shadows on the ground only ever darken it.
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| *x > y.saturating_add(24)))
        .count();
    changed as f32 / (fish.len() / 4) as f32
}

#[test]
fn the_school_renders_its_fish_in_view() {
    if !have_adapter() {
        return;
    }
    let cover = school_cover(300);
    eprintln!("school: 300 fish cover {:.1}% of the frame", cover * 100.0);
    assert!(cover > 0.02 && cover < 0.8, "{cover}");
}
