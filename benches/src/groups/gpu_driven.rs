//! Figures of `cargo xtask bench` for `gpu_driven`: the CPU's whole frame on the GPU-driven path, and the GPU time
//! of its cull pass.
//!
//! The scene is `crowd_gpu`'s (the default character on a jittered 1.5 m grid, turned, scaled 0.8 to 1.2, a tenth
//! tilted, random clips, phases and speeds, three LODs) at 10,000 and 1,000,000 instances, with the camera high
//! above a corner looking at the centre (it sees about half the crowd), the unique tier for the largest few on
//! screen. Each frame (60 Hz) the CPU runs the game's calls, `CrowdFrame::step`, `CrowdRenderer::prepare` of the
//! packet and `prepare_view` (uploads, the resident scatter and the cull pass recorded into one encoder), and
//! `render_view` recorded into a render pass of another. The render pass is recorded, not submitted: lavapipe would
//! take seconds to draw a million characters, and the figure is the CPU's. The first encoder is submitted, and the
//! GPU's work waited for, after the timed part: lavapipe's threads share the CPU's two cores, so GPU work beside the
//! timed part would count in the CPU's figure.
//!
//! - `gpu_driven.cpu_frame_{10k,1m}_static_ms`: nothing changes, the animation plays (median frame);
//! - `gpu_driven.cpu_frame_1m_moving_ms`: 1% of the crowd moves (`set_positions`) and 0.1% switches clip with a
//!   0.25 s crossfade, every frame;
//! - `gpu_driven.cpu_growth_10k_to_1m_static`: the static frames' ratio, measured in the same run;
//! - `gpu_driven.upload_bytes_static_1m`: what `prepare` wrote in a static frame (the pool's live slot palettes,
//!   the uniforms; no instance state);
//! - `gpu_driven.draws_1k`, `draws_1m`: draw calls a view records (indirect draws plus the unique instances' draws);
//! - `gpu_driven.drawing_draws_1k`, `drawing_draws_1m`, `drawn_instances_1k`, `drawn_instances_1m`: what the indirect
//!   draws draw, read back from their arguments once: the draws with instances, and the instances;
//! - `gpu_driven.visible_fraction_1m`: the fraction of the crowd the GPU found visible (read back once);
//! - `gpu_driven.gpu_cull_ms_{10k,100k,1m}`: the cull pass from timestamps (skipped without `TIMESTAMP_QUERY`).

use std::time::Instant;

use crowd_cull::Handle;
use std::sync::Arc;

use crowd_frame::{Character, ClipId, CrowdFrame, FrameCamera, FrameSettings};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CULL_BUCKETS, CrowdRenderer, CrowdView, CullQueries, PipelineCache, RenderPath, ViewDesc};
use crowd_mesh::Material;
use glam::Vec3;

use crate::groups::crowd_gpu::{BenchResult, Scene};
use crate::harness::Figure;

/// What one size measured.
pub(crate) struct Measured {
    /// The median static frame, in milliseconds.
    pub(crate) static_ms: f64,
    moving_ms: Option<f64>,
    upload_static: u64,
    draws: u32,
    /// Indirect draws that draw instances, and the instances they draw (read back once).
    drawing: u32,
    drawn: u32,
    visible: f64,
    cull_ms: Option<f64>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The frame's work on the CPU for `d`, drawn into `target`; returns its seconds, what `prepare` uploaded and its
/// draws.
pub(crate) fn frame(
    gpu: &Gpu,
    d: &mut Driven,
    target: &OffscreenTarget,
    game: &mut dyn FnMut(&mut CrowdFrame),
) -> BenchResult<(f64, u64, u32)> {
    let Driven {
        crowd, r, view, camera, ..
    } = d;
    let camera = &*camera;
    let (target, depth) = (&target.color_view, &target.depth_view);
    let start = Instant::now();
    game(crowd);
    crowd.step(1.0 / 60.0, camera)?;
    let exchange = crowd.exchange().clone();
    let packet = exchange.begin_read()?;
    let mut cull = gpu.device.create_command_encoder(&Default::default());
    let stats = r.prepare(&gpu.device, &mut cull, &packet)?;
    drop(packet);
    let prepared = r.prepare_view(&gpu.device, &mut cull, view, ViewDesc::new(*camera))?;
    let draws = prepared.draw_calls();
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("recorded, not submitted"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: target,
                resolve_target: None,
                depth_slice: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        r.render_view(&prepared, &mut pass);
    }
    let (cull, recorded) = (cull.finish(), encoder.finish());
    let secs = start.elapsed().as_secs_f64();
    // The uploads and the cull are submitted after the timed part: on lavapipe the GPU's threads share the CPU's two
    // cores, and GPU work running beside the recording would slow the CPU's figure by the GPU's work.
    gpu.queue.submit([cull]);
    drop(recorded);
    let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
    Ok((secs, stats.uploaded_bytes, draws))
}

/// The cull pass's GPU milliseconds for `view`, from timestamps.
pub(crate) fn cull_ms(
    gpu: &Gpu,
    r: &CrowdRenderer,
    view: &mut CrowdView,
    camera: &FrameCamera,
) -> BenchResult<Option<f64>> {
    if !gpu.device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
        return Ok(None);
    }
    let set = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("cull timestamps"),
        ty: wgpu::QueryType::Timestamp,
        count: 2,
    });
    let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("cull timestamps"),
        size: 16,
        usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut runs = Vec::new();
    for _ in 0..7 {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        r.prepare_view(
            &gpu.device,
            &mut encoder,
            view,
            ViewDesc {
                cull_queries: CullQueries {
                    timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                        query_set: &set,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }),
                    statistics: None,
                },
                ..ViewDesc::new(*camera)
            },
        )?;
        encoder.resolve_query_set(&set, 0..2, &resolve, 0);
        gpu.queue.submit([encoder.finish()]);
        let bytes = gpu.read_buffer(&resolve, 16)?;
        let t: &[u64] = bytemuck::cast_slice(&bytes);
        runs.push(t[1].saturating_sub(t[0]) as f64 * f64::from(gpu.queue.get_timestamp_period()) / 1e6);
    }
    Ok(Some(median(&mut runs)))
}

/// A GPU-driven crowd of `side²` instances of the scene's character on the bench's grid, its renderer, a view and
/// the camera high above a corner.
pub(crate) struct Driven {
    pub(crate) crowd: CrowdFrame,
    pub(crate) handles: Vec<Handle>,
    pub(crate) r: CrowdRenderer,
    pub(crate) view: CrowdView,
    pub(crate) camera: FrameCamera,
}

/// [`Driven`] with `tier_thresholds` (16 unique at most). With `bake` (bone and vertex animation of the scene's
/// character, and its meshes' first baked vertices) the renderer draws the baked and VAT tiers from it and the crowd
/// has no pose pool (the bake draws the pooled tier too).
pub(crate) fn driven(
    gpu: &Gpu,
    scene: &Scene,
    character: &Arc<Character>,
    side: u32,
    tier_thresholds: [f32; 3],
    bake: Option<(&anim_bake::Bake, &[u32])>,
) -> BenchResult<Driven> {
    let settings = FrameSettings {
        gpu_driven: true,
        lod_thresholds: scene.lod_thresholds.clone(),
        tier_thresholds,
        max_unique: 16,
        pose_pool: bake.is_none(),
        ..FrameSettings::default()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(character.clone(), settings)?;
    let spawns = crate::groups::frame::grid_spawns(side, character.clips().len());
    let mut handles = vec![Handle::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles)?;
    let l = side as f32 * 1.5;
    let camera = crate::groups::frame::grid_camera(side, Vec3::new(-0.1 * l, 0.35 * l, -0.1 * l));
    let mut r = CrowdRenderer::new(&gpu.device, &PipelineCache::new(&gpu.device), &gpu.offscreen_config())?;
    for m in &scene.packed {
        r.add_mesh(&gpu.device, &gpu.queue, m, &Material::default())?;
    }
    r.enable_gpu_driven(&gpu.device, crowd.store().group_desc(crowd.group())?)?;
    if let Some((bake, first_vertex)) = bake {
        r.set_bat(&gpu.device, bake.bat.as_ref().ok_or("the bake has a BAT")?)?;
        r.set_vat(
            &gpu.device,
            &gpu.queue,
            bake.vat.as_ref().ok_or("the bake has a VAT")?,
            first_vertex,
        )?;
    }
    let view = r.create_view(&gpu.device)?;
    Ok(Driven {
        crowd,
        handles,
        r,
        view,
        camera,
    })
}

/// Measures `side²` instances for `frames` frames, the moving frames too when `moving`. With `bake` every instance
/// but the unique few is drawn from the bake (see [`driven`]: baked above screen size 5e-8, VAT below); otherwise
/// they are pooled.
pub(crate) fn measure(
    gpu: &Gpu,
    scene: &Scene,
    side: u32,
    frames: usize,
    moving: bool,
    bake: Option<(&anim_bake::Bake, &[u32])>,
) -> BenchResult<Measured> {
    let character = scene.character()?;
    let tiers = if bake.is_some() {
        [0.3, 0.2, 5e-8]
    } else {
        [0.3, 1e-7, 5e-8]
    };
    let mut d = driven(gpu, scene, &character, side, tiers, bake)?;
    let target = OffscreenTarget::new(&gpu.device, 1280, 720)?;
    let n = d.handles.len();

    // The first 10 frames (warm-up) upload the whole crowd and compile the pipelines; the rest are timed.
    let mut still = |_: &mut CrowdFrame| {};
    let mut static_runs = Vec::new();
    let mut upload_static = 0;
    let mut draws = 0;
    for i in 0..10 + frames {
        let (s, up, recorded) = frame(gpu, &mut d, &target, &mut still)?;
        if i >= 10 {
            static_runs.push(s * 1e3);
            upload_static = up;
            draws = recorded;
        }
    }
    let cull = d.view.cull().ok_or("the view culls on the GPU")?;
    let counts: Vec<u32> =
        bytemuck::cast_slice(&gpu.read_buffer(cull.counts_buffer(), (CULL_BUCKETS * 4) as u64)?).to_vec();
    let visible = f64::from(counts.iter().sum::<u32>()) / n as f64;
    let args: Vec<u32> =
        bytemuck::cast_slice(&gpu.read_buffer(cull.args_buffer(), u64::from(cull.draw_count()) * 20)?).to_vec();
    let instances = args.chunks_exact(5).map(|a| a[1]);
    let (drawing, drawn) = (instances.clone().filter(|&n| n > 0).count() as u32, instances.sum());
    let cull = cull_ms(gpu, &d.r, &mut d.view, &d.camera)?;

    let moving_ms = if moving {
        let movers: Vec<Handle> = d.handles.iter().copied().step_by(100).collect();
        let mut positions: Vec<Vec3> = movers
            .iter()
            .map(|&h| d.crowd.store().get(h).map(|i| i.desc.position))
            .collect::<Result<_, _>>()?;
        let switchers: Vec<Handle> = d.handles.iter().copied().skip(7).step_by(1000).collect();
        let clips = character.clips().len();
        let mut tick = 0usize;
        let mut game = |crowd: &mut CrowdFrame| {
            tick += 1;
            let step = if tick.is_multiple_of(2) { 0.02 } else { -0.02 };
            for p in &mut positions {
                p.x += step;
            }
            crowd.set_positions(&movers, &positions).expect("moves");
            for (k, &h) in switchers.iter().enumerate() {
                crowd.play(h, ClipId(((tick + k) % clips) as u16), 0.25).expect("plays");
            }
        };
        let mut runs = Vec::new();
        for i in 0..frames + 10 {
            let (s, ..) = frame(gpu, &mut d, &target, &mut game)?;
            if i >= 10 {
                runs.push(s * 1e3);
            }
        }
        Some(median(&mut runs))
    } else {
        None
    };
    Ok(Measured {
        static_ms: median(&mut static_runs),
        moving_ms,
        upload_static,
        draws,
        drawing,
        drawn,
        visible,
        cull_ms: cull,
    })
}

/// Runs the `gpu_driven` group.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> BenchResult<()> {
    let Some(gpu) = Gpu::open_with(None, wgpu::Features::TIMESTAMP_QUERY)? else {
        eprintln!("gpu_driven: no wgpu adapter; the figures are skipped");
        return Ok(());
    };
    if RenderPath::for_config(&gpu.device, &gpu.offscreen_config()) != RenderPath::GpuDriven {
        eprintln!("gpu_driven: the adapter allows only the CPU-culled path; the figures are skipped");
        return Ok(());
    }
    let scene = Scene::new()?;
    let frames = if quick { 15 } else { 41 };
    let small = measure(&gpu, &scene, 100, frames, false, None)?;
    let one_k = measure(&gpu, &scene, 32, 3, false, None)?;
    let hundred_k = measure(&gpu, &scene, 316, 3, false, None)?;
    let big = measure(&gpu, &scene, 1000, frames, true, None)?;
    let mut push = |name: &str, value: f64, target: &'static str, met: bool| {
        figures.push(Figure {
            name: format!("gpu_driven.{name}"),
            value,
            target,
            met,
        })
    };
    push("cpu_frame_10k_static_ms", small.static_ms, "report", true);
    push("cpu_frame_1m_static_ms", big.static_ms, "<= 0.5", big.static_ms <= 0.5);
    let moving = big.moving_ms.unwrap_or(f64::NAN);
    push("cpu_frame_1m_moving_ms", moving, "<= 2", moving <= 2.0);
    let growth = big.static_ms / small.static_ms;
    push("cpu_growth_10k_to_1m_static", growth, "<= 1.5", growth <= 1.5);
    push(
        "upload_bytes_static_1m",
        big.upload_static as f64,
        "independent of N",
        true,
    );
    push("upload_bytes_static_10k", small.upload_static as f64, "report", true);
    push(
        "draws_1k",
        f64::from(one_k.draws),
        "= draws_1m",
        one_k.draws == big.draws,
    );
    push("draws_1m", f64::from(big.draws), "= draws_1k", one_k.draws == big.draws);
    push("drawing_draws_1k", f64::from(one_k.drawing), "report", true);
    push("drawing_draws_1m", f64::from(big.drawing), "report", true);
    push("drawn_instances_1k", f64::from(one_k.drawn), "report", true);
    push("drawn_instances_1m", f64::from(big.drawn), "report", true);
    push("visible_fraction_1m", big.visible, ">= 0.3", big.visible >= 0.3);
    if let Some(ms) = small.cull_ms {
        push("gpu_cull_ms_10k", ms, "report", true);
    }
    if let Some(ms) = hundred_k.cull_ms {
        push("gpu_cull_ms_100k", ms, "report", true);
    }
    if let Some(ms) = big.cull_ms {
        push("gpu_cull_ms_1m", ms, "report", true);
    }
    Ok(())
}
