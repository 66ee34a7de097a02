//! Figures of `cargo xtask bench` for `crowd_gpu` (the renderer's CPU side and a small GPU frame) and, with
//! `--gpu`, `crowd_gpu_device` (GPU frame times at 10k, 100k and 1M instances on a real GPU).
//!
//! The scene: the default character on a jittered grid 1.5 m apart, each turned, scaled 0.8 to 1.2, a tenth of
//! them tilted, playing its clips at random phases and speeds, every visible instance pooled, with the three
//! LOD levels chosen for one pixel of error on a 1080-line image; the camera 2.5 m high beside a corner, looking at
//! the centre, so that every LOD is in view. Packets come from `crowd_frame::CrowdFrame::step`.
//!
//! - `crowd_gpu.prepare_100k_ms`: `CrowdRenderer::prepare` of a 100,000-instance packet into an encoder, submitted,
//!   minus the same bytes written by bare wgpu calls (one staging buffer mapped at creation, the ranges written into
//!   it, unmapped and copied into place by an encoder, submitted: what the upload must cost), measured in
//!   alternation;
//! - `crowd_gpu.upload_bytes_per_instance`: the bytes `prepare` writes per frame over the instances;
//! - `crowd_gpu.draws_1k`, `draws_100k`: draw calls per frame;
//! - `crowd_gpu.gpu_ms_1k`: one 1280 × 720 frame of 1,000 instances, from timestamps (skipped without
//!   `TIMESTAMP_QUERY`).

use crowd_cull::Handle;
use std::sync::Arc;

use crowd_frame::{Character, CharacterOptions, CrowdFrame, FrameCamera, FrameSettings};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, PipelineCache, ViewDesc};
use crowd_mesh::{Material, PackedMesh, lod_thresholds};
use glam::Vec3;

use crate::harness::{Effort, Figure, median_paired};

pub(crate) type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;

/// The default character's meshes, packed with their LODs, and the character with those LODs.
pub(crate) struct Scene {
    model: anim_pose::Model,
    pub(crate) packed: Vec<PackedMesh>,
    pub(crate) lod_thresholds: Vec<f32>,
}

impl Scene {
    pub(crate) fn new() -> BenchResult<Self> {
        let model = anim_pose::import_file(crate::default_character())?;
        let binding = &model.bindings[0];
        let joints = model.skeletons[binding.skeleton].skin_joint_count();
        let packed = model.meshes[binding.meshes.clone()]
            .iter()
            .map(|m| PackedMesh::new(m, joints))
            .collect::<crowd_mesh::Result<Vec<_>>>()?;
        let radius = model.bounds().size().length() * 0.5;
        let lod_thresholds = lod_thresholds(
            &packed[0].lods,
            radius,
            1080.0,
            1.0,
            FrameSettings::default().hysteresis,
        );
        Ok(Self {
            model,
            packed,
            lod_thresholds,
        })
    }

    pub(crate) fn character(&self) -> BenchResult<Arc<Character>> {
        let lods = self.packed[0].lods.len();
        Ok(Arc::new(
            Character::from_model(&self.model, 0, &CharacterOptions::default())?.with_lod_count(lods)?,
        ))
    }

    /// Distinct vertices each LOD of every mesh reads: what a frame's vertex shader runs per instance at that LOD.
    fn vertices_per_lod(&self) -> Vec<u64> {
        let lods = self.packed[0].lods.len();
        (0..lods)
            .map(|l| {
                self.packed
                    .iter()
                    .map(|m| {
                        let level = m.lods[l.min(m.lods.len() - 1)];
                        let all = m.indices.to_u32_vec();
                        let range = &all[level.first_index as usize..(level.first_index + level.index_count) as usize];
                        let mut seen = vec![false; m.vertex_count()];
                        range
                            .iter()
                            .filter(|&&i| !std::mem::replace(&mut seen[i as usize], true))
                            .count() as u64
                    })
                    .sum()
            })
            .collect()
    }
}

/// A crowd of `n` instances (rounded down to a square) of `character`, and its camera.
fn crowd(scene: &Scene, character: &Arc<Character>, n: usize) -> BenchResult<(CrowdFrame, FrameCamera)> {
    let settings = FrameSettings {
        lod_thresholds: scene.lod_thresholds.clone(),
        tier_thresholds: [f32::MAX, 1e-7, 5e-8],
        ..FrameSettings::default()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(character.clone(), settings)?;
    let side = (n as f64).sqrt() as u32;
    let spawns = crate::groups::frame::grid_spawns(side, character.clips().len());
    let mut handles = vec![Handle::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles)?;
    // Near the corner and low, so that the nearest instances are at LOD 0 and 1 and the rest at LOD 2.
    let camera = crate::groups::frame::grid_camera(side, Vec3::new(-3.0, 2.5, -3.0));
    Ok((crowd, camera))
}

fn renderer(gpu: &Gpu, scene: &Scene) -> BenchResult<CrowdRenderer> {
    let mut r = CrowdRenderer::new(&gpu.device, &PipelineCache::new(&gpu.device), &gpu.offscreen_config())?;
    for m in &scene.packed {
        r.add_mesh(&gpu.device, &gpu.queue, m, &Material::default())?;
    }
    Ok(r)
}

/// One frame of `n` instances rendered: its GPU milliseconds (None without timestamps), vertex-instances, draws.
fn gpu_frame(gpu: &Gpu, scene: &Scene, character: &Arc<Character>, n: usize) -> BenchResult<(Option<f64>, u64, u32)> {
    let (mut crowd, camera) = crowd(scene, character, n)?;
    let mut r = renderer(gpu, scene)?;
    crowd.step(1.0 / 60.0, &camera)?;
    let packet = crowd.exchange().begin_read()?;
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let stats = r.prepare(&gpu.device, &mut encoder, &packet)?;
    let mut view = r.create_view(&gpu.device)?;
    let prepared = r.prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(camera))?;
    gpu.queue.submit([encoder.finish()]);
    let per_lod = scene.vertices_per_lod();
    let vertices: u64 = packet
        .draws()
        .iter()
        .map(|d| per_lod[usize::from(d.lod).min(per_lod.len() - 1)] * u64::from(d.instance_count))
        .sum();
    let target = OffscreenTarget::new(&gpu.device, 1280, 720)?;
    // The first frame compiles the pipeline; time the second.
    target.render(gpu, wgpu::Color::BLACK, |pass| r.render_view(&prepared, pass))?;
    let (_, ms) = target.render_timed(gpu, wgpu::Color::BLACK, |pass| r.render_view(&prepared, pass))?;
    Ok((ms, vertices, stats.draws))
}

fn open() -> BenchResult<Option<Gpu>> {
    let gpu = Gpu::open_with(None, wgpu::Features::TIMESTAMP_QUERY)?;
    if gpu.is_none() {
        eprintln!("crowd_gpu: no wgpu adapter; the GPU figures are skipped");
    }
    Ok(gpu)
}

/// Runs the `crowd_gpu` group.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> BenchResult<()> {
    let Some(gpu) = open()? else { return Ok(()) };
    let scene = Scene::new()?;
    let character = scene.character()?;
    let mut push = |name: &str, value: f64, target: &'static str, met: bool| {
        figures.push(Figure {
            name: name.to_owned(),
            value,
            target,
            met,
        })
    };

    let (mut crowd100k, camera) = crowd(&scene, &character, 100_000)?;
    crowd100k.step(1.0 / 60.0, &camera)?;
    let packet = crowd100k.exchange().begin_read()?;
    let mut r = renderer(&gpu, &scene)?;
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let stats = r.prepare(&gpu.device, &mut encoder, &packet)?;
    gpu.queue.submit([encoder.finish()]);
    // The same bytes as prepare's uploads, into buffers of the same sizes.
    let dirty = packet.dirty();
    let sources: Vec<(&[u8], Vec<skin_pack::ByteRange>)> = vec![
        (bytemuck::cast_slice(packet.records()), dirty.records.clone()),
        (
            bytemuck::cast_slice(packet.pool_palettes()),
            dirty.pool_palettes.clone(),
        ),
        (
            bytemuck::cast_slice(packet.unique_palettes()),
            dirty.unique_palettes.clone(),
        ),
    ];
    let buffers: Vec<wgpu::Buffer> = sources
        .iter()
        .map(|(bytes, _)| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bare copy"),
                size: (bytes.len() as u64).max(256).next_multiple_of(256),
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        })
        .collect();
    let uniforms = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bare uniforms"),
        size: 64 * 1024,
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::UNIFORM,
        mapped_at_creation: false,
    });
    let uniform_bytes = vec![0u8; (stats.uploaded_bytes - dirty_bytes(&sources)) as usize];
    let paired = median_paired(
        Effort::new(quick, 20),
        || {
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            r.prepare(&gpu.device, &mut encoder, &packet).expect("prepares");
            gpu.queue.submit([encoder.finish()]);
        },
        || bare_upload(&gpu, &sources, &buffers, (&uniforms, &uniform_bytes)),
    );
    let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
    let own_ms = (paired.a - paired.b).max(0.0) * 1e3;
    push("crowd_gpu.prepare_100k_ms", own_ms, "<= 1", own_ms <= 1.0);
    push("crowd_gpu.prepare_100k_with_copy_ms", paired.a * 1e3, "report", true);
    let per_instance = stats.uploaded_bytes as f64 / f64::from(stats.instances.max(1));
    push(
        "crowd_gpu.upload_bytes_per_instance",
        per_instance,
        "<= 32",
        per_instance <= 32.0,
    );
    let draws_100k = stats.draws;
    drop(packet);

    let (ms_1k, _, draws_1k) = gpu_frame(&gpu, &scene, &character, 1_000)?;
    push(
        "crowd_gpu.draws_1k",
        f64::from(draws_1k),
        "== draws_100k",
        draws_1k == draws_100k,
    );
    push(
        "crowd_gpu.draws_100k",
        f64::from(draws_100k),
        "== draws_1k",
        draws_1k == draws_100k,
    );
    match ms_1k {
        Some(ms) => push("crowd_gpu.gpu_ms_1k", ms, "report", true),
        None => eprintln!("crowd_gpu.gpu_ms_1k: the adapter has no TIMESTAMP_QUERY; skipped"),
    }
    Ok(())
}

fn dirty_bytes(sources: &[(&[u8], Vec<skin_pack::ByteRange>)]) -> u64 {
    sources.iter().flat_map(|(_, r)| r.iter()).map(|r| r.len() as u64).sum()
}

/// The least an upload of `sources`' dirty ranges and `uniforms` can cost through wgpu: one staging buffer mapped at
/// creation, each range written into it once, unmapped, and copied into place by an encoder, submitted.
fn bare_upload(
    gpu: &Gpu,
    sources: &[(&[u8], Vec<skin_pack::ByteRange>)],
    buffers: &[wgpu::Buffer],
    (uniforms, uniform_bytes): (&wgpu::Buffer, &[u8]),
) {
    let total = dirty_bytes(sources) + uniform_bytes.len() as u64;
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bare staging"),
        size: total.max(4).next_multiple_of(4),
        usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: true,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut view = staging.get_mapped_range_mut(..).expect("mapped at creation");
        let mut at = 0usize;
        for ((bytes, ranges), buffer) in sources.iter().zip(buffers) {
            for range in ranges {
                view.slice(at..at + range.len())
                    .copy_from_slice(&bytes[range.as_range()]);
                encoder.copy_buffer_to_buffer(&staging, at as u64, buffer, range.start as u64, range.len() as u64);
                at += range.len();
            }
        }
        view.slice(at..at + uniform_bytes.len()).copy_from_slice(uniform_bytes);
        encoder.copy_buffer_to_buffer(&staging, at as u64, uniforms, 0, uniform_bytes.len() as u64);
    }
    staging.unmap();
    gpu.queue.submit([encoder.finish()]);
}

/// Runs the `crowd_gpu_device` group: GPU milliseconds per frame and vertex-instances per second at 10k, 100k
/// and 1M instances with LOD; on a CPU adapter (lavapipe) only the 10k case.
pub fn run_device(figures: &mut Vec<Figure>) -> BenchResult<()> {
    let Some(gpu) = open()? else { return Ok(()) };
    let scene = Scene::new()?;
    let character = scene.character()?;
    let cpu = gpu.info.device_type == wgpu::DeviceType::Cpu;
    if cpu {
        eprintln!(
            "crowd_gpu_device: {} is a CPU adapter; only the 10k case runs (100k and 1M take minutes there)",
            gpu.info.name
        );
    }
    for (n, tag) in [(10_000, "10k"), (100_000, "100k"), (1_000_000, "1m")] {
        if cpu && n > 10_000 {
            continue;
        }
        let (ms, vertices, _) = gpu_frame(&gpu, &scene, &character, n)?;
        let Some(ms) = ms else {
            eprintln!("crowd_gpu_device: the adapter has no TIMESTAMP_QUERY; skipped");
            return Ok(());
        };
        figures.push(Figure {
            name: format!("crowd_gpu_device.gpu_ms_{tag}"),
            value: ms,
            target: "report",
            met: true,
        });
        figures.push(Figure {
            name: format!("crowd_gpu_device.vertices_per_s_{tag}"),
            value: vertices as f64 / (ms * 1e-3),
            target: "report",
            met: true,
        });
    }
    Ok(())
}
