//! Figures of `cargo xtask bench` for `anim-bake`: the sizes of the default character's bone-animation (BAT) and
//! vertex-animation (VAT) bakes at the 1 mm vertex-error budget, and the wall time of the whole bake (plan, encode,
//! measure), both parts, on 2 threads.
//!
//! `baked.cpu_frame_1m_static_ms` is the CPU's whole frame (`step`, `prepare`, the cull pass encoded and the draws
//! recorded, as `gpu_driven` measures it) for 1M instances of which all but the 16 unique ones are in the baked
//! tier, drawn from a bake of the default character (f32 entries, the renderer's format), nothing changing and the
//! animation playing. It needs a wgpu adapter with the GPU-driven path, and is skipped without one.

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
    if crowd_gpu::RenderPath::for_device(&gpu.device) != crowd_gpu::RenderPath::GpuDriven {
        eprintln!("baked: the adapter allows only the CPU-culled path; baked.cpu_frame_1m_static_ms is skipped");
        return Ok(());
    }
    let options = BakeOptions {
        bat_format: Some(anim_bake::BatFormat::F32),
        ..BakeOptions::default()
    };
    let (baked, _) = bake(model, &options, &|_| {})?;
    let scene = crate::groups::crowd_gpu::Scene::new()?;
    let binding = &model.bindings[0];
    let first_vertex: Vec<u32> = binding
        .meshes
        .clone()
        .map(|m| {
            baked
                .meshes
                .iter()
                .find(|b| b.mesh as usize == m)
                .map(|b| b.first_vertex)
                .ok_or("a bound mesh is missing from the bake")
        })
        .collect::<Result<_, _>>()?;
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
