//! The toolkit's demo application, and its reference integration: how an engine drives `crowd-frame` on a
//! simulation thread and draws its packets with `crowd-gpu` on the render thread, through their public API only.
//!
//! `cargo xtask demo [ARGS]` (or `cargo run -p crowd-demo -- [ARGS]`) loads a scene from `assets/scenes/` and shows
//! it in a window, or renders it headless where there is no display (or with `--headless`).
//!
//! - [`scene`]: the RON scene files.
//! - [`assets`]: the model, its packed meshes, its crowd-frame character and the scene's measures.
//! - [`motion`]: each clip's ground speed, so that moving characters keep their feet planted.
//! - [`world`]: the game: the crowd, placed and driven by the scene.
//! - [`sim`]: the simulation thread, and the controls the render thread sends it.
//! - [`stage`]: the render side shared by the window and headless frames; [`sun`]: its shadows and ground.
//! - [`camera`]: the orbit and fly cameras.
//! - [`headless`] and [`window`]: the two ways to run.
//! - [`stats`]: frame times, stage times, the table and the JSON.

pub mod assets;
pub mod camera;
pub mod headless;
pub mod motion;
pub mod scene;
pub mod school;
pub mod sim;
pub mod spear;
pub mod stage;
pub mod stats;
pub mod sun;
pub mod window;
pub mod world;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Parser;
use crowd_frame::{CrowdFrame, FrameSettings};
use crowd_gpu::RenderPath;
use crowd_mesh::lod_thresholds;
use glam::Vec3;

use crate::assets::Assets;
use crate::camera::{Camera, Mode};
use crate::scene::Scene;

/// The demo's command line.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "crowd-demo",
    about = "Animated crowds from RON scenes, in a window or headless."
)]
pub struct Args {
    /// A scene of `assets/scenes/` by name (`army`, `plaza`), or a `.ron` file.
    #[arg(long, default_value = "army")]
    pub scene: String,
    /// The glTF model (default: the generated default character).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Characters, instead of the scene's count.
    #[arg(long)]
    pub count: Option<usize>,
    /// Seconds to run: wall time in a window (default: the scene's, 0 = until closed), simulated time headless
    /// (default 4).
    #[arg(long)]
    pub seconds: Option<f32>,
    /// Render offscreen even where a display exists.
    #[arg(long)]
    pub headless: bool,
    /// Headless: frames rendered, evenly spaced over the run (the first and last are written as PNG).
    #[arg(long, default_value_t = 3)]
    pub frames: usize,
    /// Headless: the image size, `WIDTHxHEIGHT`.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    pub size: (u32, u32),
    /// Headless: the folder for the PNG frames and the JSON figures (default `target/demo/`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Measure: headless, draw every frame, print the frame time percentiles and stage times, and write them as
    /// `bench.json` in the output folder.
    #[arg(long)]
    pub bench: bool,
    /// Force the CPU-culled path (default: GPU-driven where the adapter allows it).
    #[arg(long)]
    pub cpu_culled: bool,
    /// Draw without MSAA (default 4x where the adapter allows it).
    #[arg(long)]
    pub no_msaa: bool,
    /// What the crowd shows at the start (keys 1 to 5 switch it in the window).
    #[arg(long, value_enum, default_value_t = View::Shaded)]
    pub view: View,
    /// LOD levels of the character's meshes: the first N of `crowd_mesh::DEFAULT_LOD_TARGETS` (3 draws no far
    /// level, as before they existed).
    #[arg(long, default_value_t = crowd_mesh::DEFAULT_LOD_TARGETS.len(), value_parser = parse_lod_levels)]
    pub lod_levels: usize,
}

/// `--lod-levels`: 1 to the number of default LOD targets.
fn parse_lod_levels(s: &str) -> std::result::Result<usize, String> {
    let max = crowd_mesh::DEFAULT_LOD_TARGETS.len();
    match s.parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("'{s}': LOD levels are 1 to {max}")),
    }
}

/// The crowd's debug views (`crowd_gpu::DebugView`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// Textured and lit.
    Shaded,
    /// Each instance in its own flat colour.
    Instance,
    /// Each LOD in its own colour.
    Lod,
    /// Each tier in its own colour.
    Tier,
    /// World normals.
    Normals,
}

impl View {
    /// The renderer's view.
    pub fn debug_view(self) -> crowd_gpu::DebugView {
        match self {
            View::Shaded => crowd_gpu::DebugView::Shaded,
            View::Instance => crowd_gpu::DebugView::InstanceId,
            View::Lod => crowd_gpu::DebugView::Lod,
            View::Tier => crowd_gpu::DebugView::Tier,
            View::Normals => crowd_gpu::DebugView::Normals,
        }
    }
}

fn parse_size(s: &str) -> std::result::Result<(u32, u32), String> {
    let (w, h) = s
        .split_once('x')
        .ok_or_else(|| format!("expected WIDTHxHEIGHT, got '{s}'"))?;
    let parse = |v: &str| v.parse::<u32>().map_err(|e| format!("'{v}' in '{s}': {e}"));
    let (w, h) = (parse(w)?, parse(h)?);
    if !(1..=8192).contains(&w) || !(1..=8192).contains(&h) {
        return Err(format!("each side must be 1 to 8192 pixels, got {w}x{h}"));
    }
    Ok((w, h))
}

impl Args {
    /// The output folder.
    pub fn out_dir(&self) -> PathBuf {
        self.out
            .clone()
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/demo"))
    }

    /// The scene's name for reports and file names.
    pub fn scene_name(&self) -> String {
        std::path::Path::new(&self.scene)
            .file_stem()
            .map_or_else(|| self.scene.clone(), |s| s.to_string_lossy().into_owned())
    }
}

/// Runs the demo: in a window where a display exists, else (or with `--headless` or `--bench`) offscreen.
///
/// # Errors
///
/// A scene or model that does not load, no wgpu adapter (the message says how to get lavapipe), and the toolkit's
/// errors.
pub fn run(args: &Args) -> Result<()> {
    let scene = Scene::load(&scene::scene_path(&args.scene))?;
    println!("scene: {} ({})", args.scene_name(), scene.description);
    let model = args.model.clone().unwrap_or_else(assets::default_model);
    // The simulation thread shares the model and its character with the render thread.
    let assets = Arc::new(Assets::load_with_lods(&model, scene.spear.as_deref(), args.lod_levels)?);
    if args.headless || args.bench {
        return headless::run(args, &scene, &assets);
    }
    match window::run(args, &scene, assets.clone()) {
        Err(window::NoDisplay(why)) => {
            println!("window: none ({why}); rendering headless instead");
            headless::run(args, &scene, &assets)
        }
        Ok(result) => result,
    }
}

/// The message for a machine without a wgpu adapter.
pub const NO_ADAPTER: &str = "no wgpu adapter: install a Vulkan driver; on a machine without a GPU, Mesa's software \
                              adapter lavapipe (Debian and Ubuntu: `apt-get install mesa-vulkan-drivers libvulkan1`)";

/// The crowd's settings for `assets` on `path`, for a viewport `viewport_h` pixels high and characters `spacing`
/// footprints apart: LOD by half a pixel of error; on the GPU-driven path, nobody unique, the near crowd pooled,
/// from 7 heights baked and from 17 heights VAT, with no pose pool beyond; on the CPU-culled path (no baked tiers)
/// everyone pooled. Clusters are sized by [`cluster_settings`].
pub fn frame_settings(assets: &Assets, path: RenderPath, viewport_h: f32, fov_y: f32, spacing: f32) -> FrameSettings {
    let defaults = FrameSettings::default();
    let f = assets.framing;
    let size_at = |d: f32| f.radius / (d * (fov_y * 0.5).tan());
    let gpu_driven = path == RenderPath::GpuDriven;
    FrameSettings {
        gpu_driven,
        lod_thresholds: lod_thresholds(&assets.packed[0].lods, f.radius, viewport_h, 0.5, defaults.hysteresis),
        tier_thresholds: if gpu_driven {
            [50.0, size_at(7.0 * f.height), size_at(17.0 * f.height)]
        } else {
            [50.0, 1e-6, 1e-7]
        },
        cluster: cluster_settings(assets, spacing),
        ..defaults
    }
}

/// Clusters of the default capacity whose circle holds about 1.5 times that many characters `spacing` footprints
/// apart, and at least 12 footprints across: a cluster's block of store slots is then mostly full (emptier clusters
/// leave empty slots that the GPU's cull still visits), while its box stays a small part of the view.
pub fn cluster_settings(assets: &Assets, spacing: f32) -> crowd_cull::ClusterSettings {
    let defaults = crowd_cull::ClusterSettings::default();
    // A circle of radius R holds pi R^2 / spacing^2 characters: 1.5 times the capacity at this radius.
    let fill = (1.5 * defaults.capacity as f32 / std::f32::consts::PI).sqrt();
    crowd_cull::ClusterSettings {
        radius: assets.framing.footprint * (spacing * fill).max(12.0),
        ..defaults
    }
}

/// The crowd of `scene` for `assets`.
///
/// # Errors
///
/// crowd-frame's errors.
pub fn crowd(assets: &Assets, settings: FrameSettings) -> Result<CrowdFrame> {
    CrowdFrame::new(assets.character.clone(), settings).context("the crowd")
}

/// The count to start with: `--count`, else the scene's.
///
/// # Errors
///
/// A count past [`scene::MAX_COUNT`].
pub fn start_count(args: &Args, scene: &Scene) -> Result<usize> {
    let n = args.count.unwrap_or(scene.count);
    if n > scene::MAX_COUNT {
        bail!("--count {n} is more than the demo's {}", scene::MAX_COUNT);
    }
    Ok(n)
}

/// The scene's starting orbit camera about the crowd of centre `centre` and radius `extent`.
pub fn start_camera(scene: &Scene, assets: &Assets, centre: Vec3, extent: f32) -> Camera {
    let f = assets.framing;
    Camera {
        mode: Mode::Orbit,
        target: centre + Vec3::Y * (f.height * 0.3),
        yaw: scene.camera.yaw.to_radians(),
        pitch: scene.camera.pitch.to_radians(),
        distance: scene.camera.distance * extent,
        fov_y: scene.camera.fov.to_radians(),
        scale: f.height,
        far: extent * 6.0 + f.height * 100.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lod_levels_are_one_to_the_default_targets() {
        let max = crowd_mesh::DEFAULT_LOD_TARGETS.len();
        assert_eq!(Args::parse_from(["crowd-demo"]).lod_levels, max);
        assert_eq!(Args::parse_from(["crowd-demo", "--lod-levels", "3"]).lod_levels, 3);
        let past = (max + 1).to_string();
        for bad in ["0", past.as_str(), "x", "-1"] {
            assert!(
                Args::try_parse_from(["crowd-demo", "--lod-levels", bad]).is_err(),
                "{bad}"
            );
        }
    }
}
