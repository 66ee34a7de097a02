//! Headless runs: the simulation thread steps the scene at 30 steps per second of simulated time, and this thread
//! applies every packet and draws some of them offscreen, writing the first and last as PNG; `--bench` draws them
//! all and reports the frame times.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use crowd_frame::FrameStats;
use crowd_gpu::RenderPath;
use crowd_gpu::headless::{Gpu, OFFSCREEN_COLOR_FORMAT, OffscreenTarget};

use crate::assets::Assets;
use crate::scene::Scene;
use crate::sim::{Controls, Pace};
use crate::stage::{Stage, msaa_samples};
use crate::stats::{Drawn, RenderStages, RenderTimes, Report, SimStages, add_stages, mean, percentile, settled};
use crate::world::World;
use crate::{Args, NO_ADAPTER};

/// Simulation steps per second of simulated time.
pub const STEPS_PER_SECOND: f32 = 30.0;

/// What a headless run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The figures.
    pub report: Report,
    /// The first and last frames drawn, as tightly packed RGBA8 rows.
    pub first: Vec<u8>,
    /// The last.
    pub last: Vec<u8>,
    /// Where they were written.
    pub files: Vec<PathBuf>,
}

/// Runs `scene` headless and prints its figures.
///
/// # Errors
///
/// No adapter, and the toolkit's errors.
pub fn run(args: &Args, scene: &Scene, assets: &Arc<Assets>) -> Result<()> {
    let outcome = render(args, scene, assets)?;
    outcome.report.print();
    if args.bench {
        outcome.report.write_json(&args.out_dir().join("bench.json"))?;
    }
    Ok(())
}

/// Runs `scene` headless and returns its figures and first and last frames (also written as PNG into the output
/// folder).
///
/// # Errors
///
/// As [`run`].
pub fn render(args: &Args, scene: &Scene, assets: &Arc<Assets>) -> Result<Outcome> {
    let gpu = Gpu::open_with(None, wgpu::Features::PIPELINE_STATISTICS_QUERY)?.ok_or_else(|| anyhow!(NO_ADAPTER))?;
    let (width, height) = args.size;
    let path = if args.cpu_culled {
        RenderPath::CpuCulled
    } else {
        RenderPath::for_config(&gpu.device, &gpu.offscreen_config())
    };
    let samples = if args.no_msaa {
        1
    } else {
        msaa_samples(&gpu.adapter, OFFSCREEN_COLOR_FORMAT)
    };
    println!(
        "render: headless on {} ({:?}), {width} x {height}, {} path, {samples}x MSAA",
        gpu.info.name,
        gpu.info.device_type,
        path.name()
    );
    let settings = crate::frame_settings(
        assets,
        path,
        height as f32,
        scene.camera.fov.to_radians(),
        scene.layout.spacing(),
    );
    let crowd = crate::crowd(assets, settings)?;
    let mut world = World::new(crowd, assets.clone(), scene.clone(), crate::start_count(args, scene)?)?;
    let (centre, extent) = world.bounds();
    let camera = crate::start_camera(scene, assets, centre, extent);
    let config = crate::stage::renderer_config(&gpu.adapter, &gpu.device, OFFSCREEN_COLOR_FORMAT, samples);
    let mut stage = Stage::for_world(&gpu.device, &gpu.queue, config, path, &world)?;
    stage.set_debug_view(args.view.debug_view());
    let target = OffscreenTarget::new(&gpu.device, width, height)?;
    let seconds = args.seconds.unwrap_or(4.0);
    if !(seconds.is_finite() && (0.0..=3600.0).contains(&seconds)) {
        bail!("--seconds must be 0 to 3600 headless, got {seconds}");
    }
    let steps = ((seconds * STEPS_PER_SECOND).round() as usize).max(1);
    let drawn_steps: Vec<usize> = if args.bench {
        (0..steps).collect()
    } else {
        let n = args.frames.clamp(1, steps);
        (0..n)
            .map(|i| if n == 1 { steps - 1 } else { i * (steps - 1) / (n - 1) })
            .collect()
    };
    let controls = Arc::new(Mutex::new(Controls::new(
        camera.frame_camera(width as f32 / height as f32),
    )));
    let exchange = world.crowd().exchange().clone();
    let out = args.out_dir();
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let name = args.scene_name();

    let mut times = RenderTimes::default();
    let mut stages = FrameStats::default();
    let mut packets = 0u64;
    let (mut first, mut last, mut files) = (Vec::new(), Vec::new(), Vec::new());
    let mut last_drawn = Drawn::default();
    let started = Instant::now();
    let sim = std::thread::scope(|s| -> Result<_> {
        let controls = &controls;
        let world = &mut world;
        let sim = s.spawn(move || {
            crate::sim::run(
                world,
                controls,
                Pace::Fixed {
                    dt: 1.0 / STEPS_PER_SECOND,
                    steps,
                },
            )
        });
        let result = (|| -> Result<()> {
            let mut frame_start = Instant::now();
            let mut next = 0;
            for step in 0..steps {
                let wait = Instant::now();
                let Ok(packet) = exchange.begin_read() else {
                    break;
                };
                let wait_ms = wait.elapsed().as_secs_f32() * 1e3;
                packets += 1;
                add_stages(&mut stages, packet.stats());
                if drawn_steps.get(next) != Some(&step) {
                    stage.skip(&gpu.device, &gpu.queue, &packet)?;
                    continue;
                }
                next += 1;
                let (prepared, prepare_ms, record_ms) =
                    stage.draw(&gpu.device, &gpu.queue, &packet, &target.color_view, (width, height))?;
                let readback = Instant::now();
                let is_end = next == 1 || next == drawn_steps.len();
                if is_end {
                    let pixels = target.read_rgba8(&gpu)?;
                    let file = out.join(format!("{name}_{}.png", if next == 1 { "first" } else { "last" }));
                    image::save_buffer(&file, &pixels, width, height, image::ExtendedColorType::Rgba8)
                        .with_context(|| format!("cannot write {}", file.display()))?;
                    files.push(file);
                    if next == 1 {
                        first = pixels.clone();
                    }
                    last = pixels;
                } else {
                    gpu.device
                        .poll(wgpu::PollType::wait_indefinitely())
                        .map_err(|e| anyhow!("waiting for the frame: {e}"))?;
                }
                if is_end {
                    last_drawn = Drawn::of(&gpu.device, &gpu.queue, &stage, &packet, &prepared)?;
                }
                times.wait_ms.push(wait_ms);
                times.prepare_ms.push(prepare_ms);
                times.record_ms.push(record_ms);
                times.present_ms.push(readback.elapsed().as_secs_f32() * 1e3);
                times.frame_ms.push(frame_start.elapsed().as_secs_f32() * 1e3);
                frame_start = Instant::now();
            }
            Ok(())
        })();
        // Stop the simulation however the render loop ended.
        exchange.close();
        let sim = sim.join().map_err(|_| anyhow!("the simulation thread panicked"))?;
        result?;
        sim
    })?;
    let settled = settled(&times.frame_ms);
    let p50 = percentile(settled, 50.0);
    let report = Report {
        scene: name,
        model: assets_name(args),
        adapter: format!("{} ({:?})", gpu.info.name, gpu.info.device_type),
        path: stage.path().name().to_owned(),
        target: format!("headless {width} x {height}"),
        msaa: stage.sample_count(),
        instances: sim.count,
        frames: times.frame_ms.len(),
        frame_ms_p50: p50,
        frame_ms_p99: percentile(settled, 99.0),
        fps_p50: if p50 > 0.0 { 1e3 / p50 } else { 0.0 },
        sim_ms: SimStages::of(&sim, &stages, packets),
        render_ms: RenderStages {
            wait: mean(&times.wait_ms),
            prepare: mean(&times.prepare_ms),
            record: mean(&times.record_ms),
            present: mean(&times.present_ms),
        },
        last_frame: last_drawn,
    };
    println!(
        "  {} steps in {:.1} s; frames written: {}",
        steps,
        started.elapsed().as_secs_f64(),
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(Outcome {
        report,
        first,
        last,
        files,
    })
}

/// The model's file name for reports.
pub fn assets_name(args: &Args) -> String {
    args.model
        .as_ref()
        .map_or_else(|| "default character".to_owned(), |p| p.display().to_string())
}
