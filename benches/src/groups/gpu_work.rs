//! Figures of `cargo xtask bench` for the GPU's work (group `gpu_work`): the demo's scenes rendered headless by
//! `crowd-demo`'s own code, one frame each, with the main view's crowd draws and cull counted by pipeline-statistics
//! queries (`crowd_gpu::WorkQueries`). The counts do not depend on the device's speed, so one run of each suffices;
//! they depend on its rasteriser's rules only where stated in `crowd_gpu::GpuWork`.
//!
//! - `gpu_work.army_1m_{primitives,vs_invocations,fs_invocations}`: the army at 1,000,000 soldiers (20,000 with
//!   `--quick`: `army_20k_*`), 1920 × 1080, the scene's camera, with every LOD level; and each `_ratio` to the same
//!   frame drawn with the three levels that existed before the far ones (`--lod-levels 3`), in the same run.
//! - `gpu_work.army_1m_cull_invocations`: the cull's compute invocations for the army's slots.
//! - `gpu_work.plaza_100k_fs_invocations`: the plaza at 100,000 (20,000 with `--quick`), its own camera; and
//!   `gpu_work.plaza_100k_eye_fs_invocations`, the same plaza seen at eye level (the camera 1.5 degrees above the
//!   horizon, amid the crowd), both with frustum culling alone.

use std::sync::Arc;

use clap::Parser;
use crowd_demo::assets::Assets;
use crowd_demo::scene::{Scene, scene_path};
use crowd_gpu::GpuWork;

use crate::harness::Figure;

type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The eye-level camera's pitch, in degrees: at the plaza scene's distance (0.08 crowd radii from the centre, the
/// orbit's target 0.3 heights above the ground), about a character's height above the ground at 100,000.
const EYE_PITCH: f32 = 1.5;

/// One headless frame of `scene` with `count` characters at 1920 × 1080 and `lod_levels` levels, the camera
/// `pitch` degrees above the horizon where given: the counted work.
fn frame_work(scene: &str, count: usize, lod_levels: usize, pitch: Option<f32>) -> BenchResult<GpuWork> {
    let out = std::env::temp_dir().join(format!(
        "crowd-bench-gpu-work-{scene}-{lod_levels}-{}",
        std::process::id()
    ));
    let args = crowd_demo::Args::try_parse_from([
        "crowd-demo",
        "--headless",
        "--scene",
        scene,
        "--count",
        &count.to_string(),
        "--frames",
        "1",
        "--seconds",
        "0.1",
        "--size",
        "1920x1080",
        "--lod-levels",
        &lod_levels.to_string(),
        "--out",
        &out.to_string_lossy(),
    ])?;
    let mut s = Scene::load(&scene_path(scene))?;
    if let Some(p) = pitch {
        s.camera.pitch = p;
    }
    let assets = Arc::new(Assets::load_with_lods(
        &crowd_demo::assets::default_model(),
        s.spear.as_deref(),
        lod_levels,
    )?);
    let outcome = crowd_demo::headless::render(&args, &s, &assets)?;
    let _ = std::fs::remove_dir_all(&out);
    let drawn = outcome.report.last_frame;
    println!(
        "gpu_work: {scene} {count}, {lod_levels} LOD levels, pitch {:.1}: {}",
        s.camera.pitch,
        drawn.summary()
    );
    drawn
        .work
        .ok_or_else(|| "the adapter has no pipeline-statistics queries".into())
}

/// Runs the group.
///
/// # Errors
///
/// No adapter, an adapter without pipeline-statistics queries, or the demo's errors.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> BenchResult<()> {
    let (count, tag) = if quick { (20_000, "20k") } else { (1_000_000, "1m") };
    let (plaza_count, plaza_tag) = if quick { (20_000, "20k") } else { (100_000, "100k") };
    let all = crowd_mesh::DEFAULT_LOD_TARGETS.len();
    let new = frame_work("army", count, all, None)?;
    let old = frame_work("army", count, 3, None)?;
    let plaza = frame_work("plaza", plaza_count, all, None)?;
    let eye = frame_work("plaza", plaza_count, all, Some(EYE_PITCH))?;
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let mut push = |name: String, value: f64, target: &'static str, met: bool| {
        figures.push(Figure {
            name: format!("gpu_work.{name}"),
            value,
            target,
            met,
        });
    };
    push(format!("army_{tag}_primitives"), new.primitives as f64, "report", true);
    let r = ratio(new.primitives, old.primitives);
    push(format!("army_{tag}_primitives_ratio"), r, "<= 0.05", r <= 0.05);
    push(
        format!("army_{tag}_vs_invocations"),
        new.vertex_invocations as f64,
        "report",
        true,
    );
    let r = ratio(new.vertex_invocations, old.vertex_invocations);
    push(format!("army_{tag}_vs_invocations_ratio"), r, "<= 0.05", r <= 0.05);
    push(
        format!("army_{tag}_fs_invocations"),
        new.fragment_invocations as f64,
        "report",
        true,
    );
    let r = ratio(new.fragment_invocations, old.fragment_invocations);
    push(format!("army_{tag}_fs_invocations_ratio"), r, "<= 1.0", r <= 1.0);
    push(
        format!("army_{tag}_cull_invocations"),
        new.compute_invocations as f64,
        "report",
        true,
    );
    push(
        format!("plaza_{plaza_tag}_fs_invocations"),
        plaza.fragment_invocations as f64,
        "report",
        true,
    );
    push(
        format!("plaza_{plaza_tag}_eye_fs_invocations"),
        eye.fragment_invocations as f64,
        "report",
        true,
    );
    Ok(())
}
