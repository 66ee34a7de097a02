//! The rendered part of `cargo xtask demo`: about 1,000 default characters in four regiments on a ground plane,
//! animated by `crowd_frame::CrowdFrame` in the pooled tier with all four clips at random phases and speeds, drawn
//! headless by `crowd_gpu::CrowdRenderer` with the three LOD levels by distance, written as PNG frames into the
//! output folder, with per-frame stats.

use std::path::Path;
use std::time::Instant;

use anim_pose::{Indices, Model, SkinnedMesh};
use anyhow::{Context, Result, bail};
use crowd_cull::Handle;
use crowd_frame::{Character, CharacterOptions, ClipId, CrowdFrame, FrameCamera, FrameSettings, Packet, Spawn};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CULL_BUCKETS, CrowdRenderer, CrowdView, DebugView, PrepareStats, RenderPath, RendererConfig};
use crowd_mesh::{Material, PackedMesh, TextureData, lod_thresholds};
use glam::{Affine3A, Quat, Vec2, Vec3};

/// Regiments, and ranks and files in each.
const REGIMENTS: usize = 4;
const RANKS: usize = 16;
const FILES: usize = 16;
/// Frames rendered, and simulation steps of 1/60 s between two rendered frames.
const RENDERED: usize = 4;
const STEPS_BETWEEN: usize = 20;
const SIZE: (u32, u32) = (1280, 720);

/// Each regiment's tint, mixed half-way with white so that skin and clothes keep their colours.
const TINTS: [[f32; 3]; REGIMENTS] = [[0.95, 0.45, 0.4], [0.45, 0.6, 1.0], [0.5, 0.9, 0.5], [1.0, 0.85, 0.4]];

/// A small deterministic generator (xorshift), for phases, speeds and clips.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Renders the crowd of skeleton 0 of `model` into `out`.
pub fn run(model: &Model, out: &Path, cpu_culled: bool) -> Result<()> {
    let Some(binding) = model.bindings.iter().find(|b| b.skeleton == 0) else {
        bail!("the model has no mesh bound to skeleton 0");
    };
    let skeleton = &model.skeletons[0];
    let packed: Vec<PackedMesh> = model.meshes[binding.meshes.clone()]
        .iter()
        .map(|m| PackedMesh::new(m, skeleton.skin_joint_count()))
        .collect::<crowd_mesh::Result<_>>()?;
    let materials: Vec<Material> = model.meshes[binding.meshes.clone()]
        .iter()
        .map(|m| -> Result<Material> {
            let texture = match m.material.base_color_texture {
                Some(i) => Some(TextureData::decode(&model.images[i].name, &model.images[i].bytes)?),
                None => None,
            };
            Ok(Material {
                base_color_factor: m.material.base_color_factor.to_array(),
                base_color_texture: texture,
            })
        })
        .collect::<Result<_>>()?;
    let character =
        Character::from_model(model, 0, &CharacterOptions::default())?.with_lod_count(packed[0].lods.len())?;
    let radius = character
        .clip_bounds()
        .iter()
        .map(|b| ((b.max - b.min) * 0.5).length())
        .fold(0.0, f32::max);
    let gpu = Gpu::open_with(None, wgpu::Features::TIMESTAMP_QUERY)?
        .context("no wgpu adapter: install a Vulkan driver (lavapipe: mesa-vulkan-drivers)")?;
    println!(
        "render: headless (no window yet) on {} ({:?}), {} x {}, GPU timings {}",
        gpu.info.name,
        gpu.info.device_type,
        SIZE.0,
        SIZE.1,
        if gpu.device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            "from timestamps"
        } else {
            "unavailable (no TIMESTAMP_QUERY)"
        }
    );
    // The GPU-driven path where the adapter allows it: the GPU keeps the instances, culls them per view and draws
    // them indirectly; the CPU hands over only what changed.
    let render_path = if cpu_culled {
        RenderPath::CpuCulled
    } else {
        RenderPath::for_device(&gpu.device)
    };
    println!(
        "render path: {} ({})",
        render_path.name(),
        match render_path {
            RenderPath::GpuDriven => "resident instances, GPU culling per view, indirect draws",
            RenderPath::CpuCulled if cpu_culled => "forced by --cpu-culled",
            RenderPath::CpuCulled => "the adapter's limits allow only CPU culling and instanced draws",
        }
    );
    let hysteresis = FrameSettings::default().hysteresis;
    // The screen size (crowd-cull's: bounding radius over view depth, times the projection's scale) of a
    // character `d` metres away.
    let fov_y = 55f32.to_radians();
    let size_at = |d: f32| radius / (d * (fov_y * 0.5).tan());
    let gpu_driven = render_path == RenderPath::GpuDriven;
    let settings = FrameSettings {
        gpu_driven,
        // Half a pixel of simplification error at most: on this 720-line image LOD 0 is used within about 4 m,
        // LOD 1 to about 14 m.
        lod_thresholds: lod_thresholds(&packed[0].lods, radius, SIZE.1 as f32, 0.5, hysteresis),
        // Nobody is near enough to be unique. On the GPU-driven path the near ranks are pooled, the crowd from
        // 12 m baked (bone animation) and from 30 m VAT (vertex animation): the CPU does nothing for either. On
        // the CPU-culled path, which has no baked tiers, everyone is pooled.
        tier_thresholds: if gpu_driven {
            [50.0, size_at(12.0), size_at(30.0)]
        } else {
            [50.0, 0.004, 0.001]
        },
        ..FrameSettings::default()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(&character, settings)?;
    let clips = character.clips().len();
    let spacing = 1.3;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut spawns = Vec::with_capacity(REGIMENTS * RANKS * FILES);
    for (r, regiment_tint) in TINTS.iter().enumerate() {
        let origin = Vec3::new((r % 2) as f32 * 23.0 - 11.5, 0.0, -((r / 2) as f32) * 23.0);
        let tint = Vec3::from_array(*regiment_tint).lerp(Vec3::ONE, 0.5).extend(1.0);
        for i in 0..RANKS * FILES {
            let (file, rank) = ((i % FILES) as f32, (i / FILES) as f32);
            let jitter = Vec3::new(rng.next() - 0.5, 0.0, rng.next() - 0.5) * 0.3;
            let pick = rng.next();
            // Idle 30%, walk 30%, run 15%, wave 25% (clips in file order: idle, walk, run, wave).
            let clip = [0.3, 0.6, 0.75, 1.0]
                .iter()
                .position(|&p| pick < p)
                .unwrap_or(0)
                .min(clips - 1);
            spawns.push(Spawn {
                rotation: Quat::from_rotation_y((rng.next() - 0.5) * 0.5),
                time: rng.next() * 4.0,
                speed: 0.8 + 0.4 * rng.next(),
                tint,
                ..Spawn::at(
                    origin + Vec3::new(file - FILES as f32 * 0.5, 0.0, -rank) * spacing + jitter,
                    ClipId(clip as u16),
                )
            });
        }
    }
    let mut handles = vec![Handle::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles)?;
    // Low and close to the front rank, so that the nearest soldiers are at LOD 0, the next ranks at LOD 1 and
    // the far ones at LOD 2.
    let camera = FrameCamera::perspective(
        Vec3::new(1.0, 2.2, 3.2),
        Vec3::new(-1.0, 0.2, -26.0),
        Vec3::Y,
        55f32.to_radians(),
        SIZE.0 as f32 / SIZE.1 as f32,
        0.2,
        250.0,
    );

    let config = gpu.offscreen_config();
    let mut renderer = CrowdRenderer::new(&gpu.device, &config)?;
    for (m, material) in packed.iter().zip(&materials) {
        renderer.add_mesh(&gpu.device, &gpu.queue, m, material)?;
    }
    if render_path == RenderPath::GpuDriven {
        renderer.enable_gpu_driven(&gpu.device, crowd.store().group_desc(crowd.group())?)?;
        bake_tiers(&gpu, &mut renderer, model)?;
    }
    let mut view = renderer.create_view(&gpu.device, &gpu.queue)?;
    let mut ground = ground_renderer(&gpu, &config, camera)?;
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let sky = wgpu::Color {
        r: 0.42,
        g: 0.55,
        b: 0.72,
        a: 1.0,
    };

    let exchange = crowd.exchange().clone();
    let started = Instant::now();
    for frame in 0..RENDERED {
        for step in 0..STEPS_BETWEEN {
            if frame > 0 && step == 0 {
                // A few soldiers change what they do at every rendered frame: crossfades in the pool.
                for k in 0..40 {
                    let h = handles[(frame * 7919 + k * 104_729) % handles.len()];
                    crowd.play(h, ClipId(((frame + k) % clips) as u16), 0.3)?;
                }
            }
            crowd.step(1.0 / 60.0, &camera)?;
            let packet = exchange.begin_read()?;
            // The GPU-driven path applies every packet's resident changes; the CPU-culled one needs only the
            // packets it draws.
            if step + 1 < STEPS_BETWEEN {
                if render_path == RenderPath::GpuDriven {
                    renderer.prepare(&gpu.device, &gpu.queue, &packet)?;
                }
                continue;
            }
            let prepare_start = Instant::now();
            let prepared = renderer.prepare(&gpu.device, &gpu.queue, &packet)?;
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            renderer.prepare_view(&gpu.device, &gpu.queue, &mut encoder, &mut view, packet.camera())?;
            gpu.queue.submit([encoder.finish()]);
            let prepare_ms = prepare_start.elapsed().as_secs_f64() * 1e3;
            ground.prepare_for(&gpu, packet.camera())?;
            let (pixels, gpu_ms) = target.render_timed(&gpu, sky, |pass| {
                ground.renderer.render(pass);
                renderer.render_view(&view, pass);
            })?;
            let drawn = Drawn::of(&gpu, &renderer, &view, &packet, &prepared)?;
            let path = out.join(format!("frame_{frame}.png"));
            image::save_buffer(&path, &pixels, SIZE.0, SIZE.1, image::ExtendedColorType::Rgba8)
                .with_context(|| format!("cannot write {}", path.display()))?;
            print_frame(frame, &packet, &drawn, prepare_ms, gpu_ms, &path);
        }
    }
    // The same last frame by LOD, to show where each level is used.
    renderer.set_debug_view(DebugView::Lod);
    let packet = {
        crowd.step(1.0 / 60.0, &camera)?;
        exchange.begin_read()?
    };
    renderer.prepare(&gpu.device, &gpu.queue, &packet)?;
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    renderer.prepare_view(&gpu.device, &gpu.queue, &mut encoder, &mut view, packet.camera())?;
    gpu.queue.submit([encoder.finish()]);
    let pixels = target.render(&gpu, sky, |pass| {
        ground.renderer.render(pass);
        renderer.render_view(&view, pass);
    })?;
    let path = out.join("lod_view.png");
    image::save_buffer(&path, &pixels, SIZE.0, SIZE.1, image::ExtendedColorType::Rgba8)
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("  {} written (LOD 0 green, 1 yellow, 2 red)", path.display());
    // And by tier, to show where the pooled, baked and VAT tiers draw.
    renderer.set_debug_view(DebugView::Tier);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    renderer.prepare_view(&gpu.device, &gpu.queue, &mut encoder, &mut view, packet.camera())?;
    gpu.queue.submit([encoder.finish()]);
    let pixels = target.render(&gpu, sky, |pass| {
        ground.renderer.render(pass);
        renderer.render_view(&view, pass);
    })?;
    let path = out.join("tier_view.png");
    image::save_buffer(&path, &pixels, SIZE.0, SIZE.1, image::ExtendedColorType::Rgba8)
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!(
        "  {} written (unique green, pooled yellow, baked red, VAT blue); rendering took {:.1} s",
        path.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Bakes the model's clips (bone and vertex animation, within the default 1 mm budget) and hands them to the
/// renderer's baked and VAT tiers.
fn bake_tiers(gpu: &Gpu, renderer: &mut CrowdRenderer, model: &Model) -> Result<()> {
    let started = Instant::now();
    let options = anim_bake::BakeOptions {
        // The renderer's palettes are f32 3x4: the bone-animation bake must be too.
        bat_format: Some(anim_bake::BatFormat::F32),
        ..anim_bake::BakeOptions::default()
    };
    let (bake, report) = anim_bake::bake(model, &options, &|_| {})?;
    let (Some(bat), Some(vat)) = (&bake.bat, &bake.vat) else {
        bail!("the bake has no bone or vertex animation");
    };
    let Some(binding) = model.bindings.iter().find(|b| b.skeleton == 0) else {
        bail!("the model has no mesh bound to skeleton 0");
    };
    let first_vertex = bake
        .first_vertices(binding.meshes.clone())
        .context("a bound mesh is missing from the bake")?;
    renderer.set_bat(&gpu.device, &gpu.queue, bat)?;
    renderer.set_vat(&gpu.device, &gpu.queue, vat, &first_vertex)?;
    // Cull with the bake's time-segment bounds too: a tighter fit than each clip's whole reach.
    renderer.set_segment_bounds(&gpu.device, &bat.clips, &bake.bounds)?;
    println!(
        "bake: {} clips in {:.1} s; bone animation {} KiB, vertex animation {} KiB ({:?}), largest vertex error \
         {:.2} mm",
        bake.clips.len(),
        started.elapsed().as_secs_f64(),
        bat.byte_len() / 1024,
        vat.byte_len() / 1024,
        vat.format,
        report.largest_error_mm()
    );
    Ok(())
}

/// What a frame drew: per LOD the instances, the draw calls, the triangles and the bytes uploaded. On the GPU-driven
/// path the GPU decided the lists: they are read back from the view's counters and indirect arguments.
struct Drawn {
    per_lod: [u32; 3],
    /// Per tier (unique, pooled, baked, VAT).
    per_tier: [u32; 4],
    visible: u32,
    draws: u32,
    triangles: u64,
    uploaded_bytes: u64,
}

impl Drawn {
    fn of(
        gpu: &Gpu,
        renderer: &CrowdRenderer,
        view: &CrowdView,
        packet: &Packet,
        prepared: &PrepareStats,
    ) -> Result<Self> {
        let mut d = Self {
            per_lod: [0; 3],
            per_tier: [0; 4],
            visible: 0,
            draws: prepared.draws,
            triangles: prepared.triangles,
            uploaded_bytes: prepared.uploaded_bytes,
        };
        for draw in packet.draws() {
            d.per_lod[usize::from(draw.lod).min(2)] += draw.instance_count;
            d.per_tier[draw.tier as usize] += draw.instance_count;
            d.visible += draw.instance_count;
        }
        if let (RenderPath::GpuDriven, Some(cull)) = (renderer.path(), view.cull()) {
            let counts = gpu.read_buffer(cull.counts_buffer(), (CULL_BUCKETS * 4) as u64)?;
            for (b, &n) in words(&counts).iter().enumerate() {
                d.per_lod[(b / 4).min(2)] += n;
                d.per_tier[b % 4] += n;
                d.visible += n;
            }
            let args = gpu.read_buffer(cull.args_buffer(), u64::from(cull.draw_count()) * 20)?;
            for a in words(&args).chunks_exact(5) {
                d.triangles += u64::from(a[0] / 3) * u64::from(a[1]);
            }
            d.draws += cull.draw_count();
        }
        Ok(d)
    }
}

/// Little-endian `u32` words of a readback.
fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

fn print_frame(frame: usize, packet: &Packet, drawn: &Drawn, prepare_ms: f64, gpu_ms: Option<f64>, path: &Path) {
    let s = packet.stats();
    let t = s.stages;
    println!(
        "frame {frame} (t = {:.2} s): {} instances, {} visible (LOD 0/1/2: {}/{}/{}), {} draws, {:.2} M triangles, \
         {} KiB uploaded ({} resident states)",
        s.time,
        s.instances,
        drawn.visible,
        drawn.per_lod[0],
        drawn.per_lod[1],
        drawn.per_lod[2],
        drawn.draws,
        drawn.triangles as f64 / 1e6,
        drawn.uploaded_bytes / 1024,
        s.resident_changed,
    );
    println!(
        "  tiers: {} unique, {} pooled, {} baked, {} VAT",
        drawn.per_tier[0], drawn.per_tier[1], drawn.per_tier[2], drawn.per_tier[3]
    );
    println!(
        "  CPU ms: changes {:.3}, cull {:.3}, pool {:.3}, unique {:.3}, flatten {:.3}, pack {:.3}, prepare {prepare_ms:.3}; \
         GPU ms: {}; {}",
        t.changes_ms,
        t.cull_ms,
        t.pool_ms,
        t.unique_ms,
        t.flatten_ms,
        t.pack_ms,
        gpu_ms.map_or_else(|| "n/a".to_owned(), |ms| format!("{ms:.1}")),
        path.display()
    );
}

/// The ground: a 160 m square with a tiled checker texture, drawn by its own renderer as one unique instance of a
/// one-joint mesh.
struct Ground {
    renderer: CrowdRenderer,
}

impl Ground {
    fn prepare_for(&mut self, gpu: &Gpu, camera: &FrameCamera) -> Result<()> {
        let record = crowd_mesh::posed::unique_record(Vec3::ZERO, 0)?;
        let packet =
            crowd_mesh::posed::unique_packet::<skin_pack::PaletteEntry>(1, &[Affine3A::IDENTITY], &[record], *camera)?;
        self.renderer.prepare(&gpu.device, &gpu.queue, &packet)?;
        Ok(())
    }
}

fn ground_renderer(gpu: &Gpu, config: &RendererConfig, camera: FrameCamera) -> Result<Ground> {
    let half = 80.0;
    let positions = vec![
        Vec3::new(-half, 0.0, -half),
        Vec3::new(half, 0.0, -half),
        Vec3::new(half, 0.0, half),
        Vec3::new(-half, 0.0, half),
    ];
    let tiles = 80.0;
    let mesh = SkinnedMesh {
        name: "ground".to_owned(),
        mesh: 0,
        primitive: 0,
        normals: vec![Vec3::Y; 4],
        tangents: vec![],
        uvs: vec![
            Vec2::ZERO,
            Vec2::new(tiles, 0.0),
            Vec2::new(tiles, tiles),
            Vec2::new(0.0, tiles),
        ],
        colors: vec![],
        joints: vec![[0; 4]; 4],
        weights: vec![[1.0, 0.0, 0.0, 0.0]; 4],
        indices: Indices::U16(vec![0, 2, 1, 0, 3, 2]),
        max_influences: 1,
        source_max_influences: 1,
        material: anim_pose::Material::default(),
        bounds: anim_pose::Aabb::from_points(&positions),
        positions,
    };
    let packed = PackedMesh::with_lods(&mesh, 1, &[1.0])?;
    let side = 64u32;
    let texels: Vec<u8> = (0..side * side)
        .flat_map(|i| {
            let (x, y) = (i % side, i / side);
            let light = ((x / 32) + (y / 32)) % 2 == 0;
            let grain = ((x * 7 + y * 13) % 11) as u8;
            if light {
                [150 + grain, 160 + grain, 120, 255]
            } else {
                [120 + grain, 132 + grain, 98, 255]
            }
        })
        .collect();
    let material = Material {
        base_color_factor: [1.0; 4],
        base_color_texture: Some(TextureData::from_rgba8("ground checker", side, side, texels)),
    };
    let mut renderer = CrowdRenderer::new(&gpu.device, config)?;
    renderer.add_mesh(&gpu.device, &gpu.queue, &packed, &material)?;
    let mut ground = Ground { renderer };
    ground.prepare_for(gpu, &camera)?;
    Ok(ground)
}
