//! Figures of `cargo xtask bench` for `anim-bake`: the sizes of the default character's bone-animation (BAT) and
//! vertex-animation (VAT) bakes at the 1 mm vertex-error budget, and the wall time of the whole bake (plan, encode,
//! measure), both parts, on 2 threads.
//!
//! `baked.cpu_frame_1m_static_ms` is the CPU's whole frame (`step`, `prepare`, the cull pass encoded and the draws
//! recorded, as `gpu_driven` measures it) for 1M instances of which all but the 16 unique ones are in the baked
//! tier, drawn from a bake of the default character (f32 entries, the renderer's format), nothing changing and the
//! animation playing, the crowd without a pose pool (`FrameSettings::pose_pool` off: the bake draws the pooled tier
//! and the unique tier's overflow). It needs a wgpu adapter with the GPU-driven path, and is skipped without one.
//!
//! `baked_device` (with `--gpu`, or named): `baked.gpu_ms_{10k,100k,1m}` and `baked.vat_gpu_ms_{10k,100k,1m}`, the
//! GPU time of one 1280 × 720 frame (the cull pass plus the render pass, from timestamps) of the bench's grid with
//! every instance in the baked tier, then in the VAT tier; on a CPU adapter (lavapipe) only the 10k cases.

use std::time::Instant;

use anim_bake::{BakeOptions, bake};

use crate::harness::Figure;

/// Bakes the default character at the default options (1 mm, both parts, rates and formats from the budget) on a
/// 2-thread pool: once with `--quick`, otherwise three times, reporting the median time.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let model = anim_pose::import_file(crate::default_character())?;
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let options = BakeOptions::default();
    let runs = if quick { 1 } else { 3 };
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let baked = pool.install(|| bake(&model, &options, &|_| {}))?;
        times.push(start.elapsed().as_secs_f64());
        last = Some(baked);
    }
    times.sort_by(f64::total_cmp);
    let (baked, report) = last.ok_or("no bake ran")?;
    let bat = baked.bat.as_ref().ok_or("the default bake has a BAT")?;
    let vat = baked.vat.as_ref().ok_or("the default bake has a VAT")?;
    let vertex_frames = f64::from(vat.layout.vertex_count) * f64::from(vat.layout.frame_count);
    let per_vertex_frame = vat.byte_len() as f64 / vertex_frames;
    let within = report.within_budget();
    figures.push(Figure {
        name: "baked.bat_bytes_default".into(),
        value: bat.byte_len() as f64,
        target: "<= 1 MB",
        met: bat.byte_len() <= 1_000_000 && within,
    });
    figures.push(Figure {
        name: "baked.vat_bytes_per_vertex_frame".into(),
        value: per_vertex_frame,
        target: "<= 8",
        met: per_vertex_frame <= 8.0 && within,
    });
    figures.push(Figure {
        name: "baked.vat_bytes_default".into(),
        value: vat.byte_len() as f64,
        target: "report",
        met: within,
    });
    figures.push(Figure {
        name: "baked.bake_s_default".into(),
        value: times[times.len() / 2],
        target: "report",
        met: true,
    });
    cpu_frame(quick, &model, figures)
}

/// The default character's bake in the renderer's format (f32 entries), and the first baked vertex of each mesh of
/// its first binding.
fn renderer_bake(model: &anim_pose::Model) -> Result<(anim_bake::Bake, Vec<u32>), Box<dyn std::error::Error>> {
    let options = BakeOptions {
        bat_format: Some(anim_bake::BatFormat::F32),
        ..BakeOptions::default()
    };
    let (baked, _) = bake(model, &options, &|_| {})?;
    let first_vertex = baked
        .first_vertices(model.bindings[0].meshes.clone())
        .ok_or("a bound mesh is missing from the bake")?;
    Ok((baked, first_vertex))
}

/// `baked.cpu_frame_1m_static_ms` (see the module docs).
fn cpu_frame(
    quick: bool,
    model: &anim_pose::Model,
    figures: &mut Vec<Figure>,
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = crowd_gpu::headless::Gpu::open_with(None, wgpu::Features::empty())? else {
        eprintln!("baked: no wgpu adapter; baked.cpu_frame_1m_static_ms is skipped");
        return Ok(());
    };
    if crowd_gpu::RenderPath::for_config(&gpu.device, &gpu.offscreen_config()) != crowd_gpu::RenderPath::GpuDriven {
        eprintln!("baked: the adapter allows only the CPU-culled path; baked.cpu_frame_1m_static_ms is skipped");
        return Ok(());
    }
    let (baked, first_vertex) = renderer_bake(model)?;
    let scene = crate::groups::crowd_gpu::Scene::new()?;
    let frames = if quick { 15 } else { 41 };
    let m = crate::groups::gpu_driven::measure(&gpu, &scene, 1000, frames, false, Some((&baked, &first_vertex)))?;
    figures.push(Figure {
        name: "baked.cpu_frame_1m_static_ms".into(),
        value: m.static_ms,
        target: "<= 0.5",
        met: m.static_ms <= 0.5,
    });
    Ok(())
}

/// Runs the `baked_device` group: `baked.gpu_ms_*` and `baked.vat_gpu_ms_*` (see the module docs).
pub fn run_device(figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let Some(gpu) = crowd_gpu::headless::Gpu::open_with(None, wgpu::Features::TIMESTAMP_QUERY)? else {
        eprintln!("baked_device: no wgpu adapter; the figures are skipped");
        return Ok(());
    };
    if crowd_gpu::RenderPath::for_config(&gpu.device, &gpu.offscreen_config()) != crowd_gpu::RenderPath::GpuDriven
        || !gpu.device.features().contains(wgpu::Features::TIMESTAMP_QUERY)
    {
        eprintln!("baked_device: the adapter has no GPU-driven path or no TIMESTAMP_QUERY; the figures are skipped");
        return Ok(());
    }
    let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
    if cpu {
        eprintln!(
            "baked_device: {} is a CPU adapter; only the 10k cases run (100k and 1M take minutes there)",
            gpu.info.name
        );
    }
    let model = anim_pose::import_file(crate::default_character())?;
    let (baked, first_vertex) = renderer_bake(&model)?;
    let scene = crate::groups::crowd_gpu::Scene::new()?;
    let character = scene.character()?;
    let target = crowd_gpu::headless::OffscreenTarget::new(&gpu.device, 1280, 720)?;
    for (side, tag) in [(100, "10k"), (316, "100k"), (1000, "1m")] {
        if cpu && side > 100 {
            continue;
        }
        // Every instance in the baked tier (no unique or pooled one), then every one in the VAT tier.
        for (name, tiers) in [("gpu_ms", [50.0, 40.0, 1e-12]), ("vat_gpu_ms", [50.0, 40.0, 30.0])] {
            let mut d = crate::groups::gpu_driven::driven(
                &gpu,
                &scene,
                &character,
                side,
                tiers,
                Some((&baked, &first_vertex)),
            )?;
            for _ in 0..3 {
                crate::groups::gpu_driven::frame(&gpu, &mut d, &target, &mut |_| {})?;
            }
            let cull =
                crate::groups::gpu_driven::cull_ms(&gpu, &d.r, &mut d.view, &d.camera)?.ok_or("no timestamps")?;
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            let prepared = d.r.prepare_view(
                &gpu.device,
                &mut encoder,
                &mut d.view,
                crowd_gpu::ViewDesc::new(d.camera),
            )?;
            gpu.queue.submit([encoder.finish()]);
            // The first render compiles the pipelines; the median of the next three is timed.
            target.render(&gpu, wgpu::Color::BLACK, |pass| d.r.render_view(&prepared, pass))?;
            let mut draws = Vec::with_capacity(3);
            for _ in 0..3 {
                let (_, ms) = target.render_timed(&gpu, wgpu::Color::BLACK, |pass| d.r.render_view(&prepared, pass))?;
                draws.push(ms.ok_or("no timestamps")?);
            }
            draws.sort_by(f64::total_cmp);
            figures.push(Figure {
                name: format!("baked.{name}_{tag}"),
                value: cull + draws[1],
                target: "report",
                met: true,
            });
        }
    }
    Ok(())
}
