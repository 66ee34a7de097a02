//! A budget that draws less must not look worse: each scene's budgeted frame (the demo's defaults: far LODs, and the
//! baked and VAT tiers on the GPU-driven path) against the same frame with every character at LOD 0 on the mesh tier
//! (the CPU-culled path, which pools everyone, with one LOD level). Sized as `WGPU-NOTES.md` allows: 200 characters
//! at LOD 0, 320 x 180 pixels, one frame each.
//!
//! Thresholds, per scene (sRGB bytes, 0 to 255):
//! - the mean absolute difference over all pixels and channels is at most [`MEAN_DIFF`];
//! - at most [`FLIPPED`] of the pixels differ by more than [`FLIP_LEVEL`] in some channel ("flipped": a pixel that
//!   shows another surface, such as a limb moved or a silhouette grown or shrunk).
//!
//! The budgeted frame must really draw less: fewer triangles, and some characters past LOD 0 or off the mesh tier;
//! otherwise the comparison would prove nothing.

use std::path::{Path, PathBuf};

use common::{have_adapter, headless_args};
use crowd_demo::assets::Assets;
use crowd_demo::scene::{Scene, scene_path};

mod common;

/// The largest mean absolute difference, per channel and pixel.
const MEAN_DIFF: f64 = 3.0;
/// The largest share of flipped pixels.
const FLIPPED: f64 = 0.02;
/// A pixel differing by more than this in some channel is flipped.
const FLIP_LEVEL: u8 = 48;

fn args(scene: &str, out: &Path, reference: bool) -> crowd_demo::Args {
    let mut a = headless_args(scene, 200, "320x180", out);
    if reference {
        a.cpu_culled = true;
        a.lod_levels = 1;
    }
    a
}

fn out_dir(scene: &str, tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("crowd-demo-budget-{scene}-{tag}-{}", std::process::id()))
}

/// The mean absolute difference per channel and the share of flipped pixels of two RGBA8 images.
fn difference(a: &[u8], b: &[u8]) -> (f64, f64) {
    assert_eq!(a.len(), b.len());
    let (mut sum, mut flipped) = (0u64, 0usize);
    for (p, q) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let d = [0, 1, 2].map(|c| p[c].abs_diff(q[c]));
        sum += d.iter().map(|&v| u64::from(v)).sum::<u64>();
        flipped += usize::from(d.iter().any(|&v| v > FLIP_LEVEL));
    }
    let pixels = a.len() / 4;
    (sum as f64 / (pixels * 3) as f64, flipped as f64 / pixels as f64)
}

#[test]
fn the_budgeted_frame_matches_every_character_at_lod_0() {
    if !have_adapter() {
        return;
    }
    for scene in ["army", "plaza"] {
        let s = Scene::load(&scene_path(scene)).expect("scene");
        let model = crowd_demo::assets::default_model();
        let lods = |n| std::sync::Arc::new(Assets::load_with_lods(&model, s.spear.as_deref(), n).expect("model"));
        let budget_args = args(scene, &out_dir(scene, "budget"), false);
        let budget = crowd_demo::headless::render(&budget_args, &s, &lods(budget_args.lod_levels)).expect("budget");
        let reference_args = args(scene, &out_dir(scene, "lod0"), true);
        let reference = crowd_demo::headless::render(&reference_args, &s, &lods(1)).expect("reference");

        let (b, r) = (&budget.report.last_frame, &reference.report.last_frame);
        assert_eq!(
            r.per_lod[0], r.visible,
            "{scene}: the reference draws LOD 0 only: {r:?}"
        );
        assert_eq!(r.per_tier[1], r.visible, "{scene}: the reference pools everyone: {r:?}");
        assert!(
            b.triangles < r.triangles,
            "{scene}: the budget draws fewer triangles: {b:?} {r:?}"
        );
        assert!(
            b.per_lod[0] < b.visible || b.per_tier[1] < b.visible,
            "{scene}: the budget uses a far LOD or a baked tier: {b:?}"
        );
        let (mean, flipped) = difference(&budget.last, &reference.last);
        eprintln!(
            "{scene}: budget {} triangles (LODs {:?}, tiers {:?}) against {} at LOD 0: mean difference {mean:.3}, \
             {:.3}% of pixels flipped",
            b.triangles,
            b.per_lod,
            b.per_tier,
            r.triangles,
            flipped * 100.0
        );
        assert!(mean <= MEAN_DIFF, "{scene}: mean difference {mean} > {MEAN_DIFF}");
        assert!(
            flipped <= FLIPPED,
            "{scene}: {flipped} of the pixels flipped > {FLIPPED}"
        );
        for dir in [budget_args.out, reference_args.out].into_iter().flatten() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[test]
fn the_difference_measures_what_it_says() {
    let grey = vec![100u8; 4 * 100];
    assert_eq!(difference(&grey, &grey), (0.0, 0.0));
    let mut one = grey.clone();
    one[0] = 200; // one channel of one pixel, by 100
    let (mean, flipped) = difference(&grey, &one);
    assert!((mean - 100.0 / 300.0).abs() < 1e-12 && (flipped - 0.01).abs() < 1e-12);
    let mut small = grey.clone();
    small[4] = 100 + FLIP_LEVEL; // not more than the level: not flipped
    assert_eq!(difference(&grey, &small).1, 0.0);
}
