//! `cargo xtask render ... --tier baked|vat [--bake FILE]`: a model's pose at one time drawn through a baked path
//! of the GPU-driven renderer, beside the palette path's image of the same skin (see `render.rs`).
//!
//! The bake's skeleton is drawn as one instance at the identity transform, in the baked or the VAT tier, at LOD 0,
//! playing the bake's clip of the glTF animation from the requested time. The bone-animation bake is drawn in its
//! own entry format (the renderer's palette format follows it).

use std::path::Path;

use anim_bake::{Bake, BakeOptions, BatFormat};
use anim_pose::Model;
use anyhow::{Context, Result, bail};
use crowd_cull::Handle;
use crowd_frame::{Character, CharacterOptions, ClipId, CrowdFrame, FrameCamera, FrameSettings, Spawn};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, PipelineCache, RenderPath, ViewDesc};
use crowd_mesh::posed::PosedSkin;
use glam::Vec3;
use skin_pack::{Mat3x4F16, PaletteEntry, PaletteFormat, QtF16};

use crate::render::{Request, Tier};

/// Draws `r` through its baked path and the palette path, writes both images, and prints how far apart they are.
pub fn run(gpu: &Gpu, model: &Model, r: &Request<'_>, skins: &[PosedSkin], camera: FrameCamera, t: f32) -> Result<()> {
    let bake = match r.bake {
        Some(path) => Bake::read_file(path).with_context(|| format!("cannot load the bake {}", path.display()))?,
        None => {
            let started = std::time::Instant::now();
            let (bake, report) = anim_bake::bake(model, &BakeOptions::default(), &|_| {})
                .with_context(|| format!("cannot bake {}", r.model.display()))?;
            println!(
                "baked {} clips with the default budget in {:.1} s (largest vertex error {:.3} mm)",
                bake.clips.len(),
                started.elapsed().as_secs_f64(),
                report.largest_error_mm()
            );
            bake
        }
    };
    let Some(skeleton) = model.skeletons.iter().position(|s| s.name == bake.skeleton) else {
        bail!(
            "the bake's skeleton '{}' is not in {}",
            bake.skeleton,
            r.model.display()
        );
    };
    let Some(binding) = model.bindings.iter().find(|b| b.skeleton == skeleton) else {
        bail!("no mesh is bound to the bake's skeleton '{}'", bake.skeleton);
    };
    let meshes: Vec<usize> = binding.meshes.clone().collect();
    let Some(skin) = skins.iter().find(|s| s.meshes == meshes) else {
        bail!("the posed skins have none of skeleton '{}'", bake.skeleton);
    };
    let Some(clip) = model.clips_for(skeleton).position(|c| c.animation == r.clip) else {
        bail!(
            "animation {} does not animate the bake's skeleton '{}'",
            r.clip,
            bake.skeleton
        );
    };
    let first_vertex = bake
        .first_vertices(meshes.iter().copied())
        .context("a bound mesh is missing from the bake")?;
    let format = match (r.tier, &bake.bat) {
        (Tier::Baked, Some(bat)) => bat.format,
        (Tier::Baked, None) => bail!("the bake has no bone animation (BAT) for --tier baked"),
        (_, _) if bake.vat.is_none() => bail!("the bake has no vertex animation (VAT) for --tier vat"),
        _ => BatFormat::F32,
    };
    let scene = Scene {
        model,
        skeleton,
        skin,
        bake: &bake,
        first_vertex: &first_vertex,
        clip,
        time: t,
        camera,
    };
    let (baked, palette) = match format {
        BatFormat::F32 => draw::<PaletteEntry>(gpu, r, &scene)?,
        BatFormat::Mat3x4F16 => draw::<Mat3x4F16>(gpu, r, &scene)?,
        BatFormat::QtF16 => draw::<QtF16>(gpu, r, &scene)?,
    };
    let size = r.size;
    image::save_buffer(r.out, &baked, size, size, image::ExtendedColorType::Rgba8)
        .with_context(|| format!("cannot write {}", r.out.display()))?;
    let palette_path = beside(r.out, "palette");
    image::save_buffer(&palette_path, &palette, size, size, image::ExtendedColorType::Rgba8)
        .with_context(|| format!("cannot write {}", palette_path.display()))?;
    let json = serde_json::json!({
        "view_proj": camera.view_proj().to_cols_array(),
        "width": size,
        "height": size,
    });
    let json_path = r.out.with_extension("json");
    std::fs::write(&json_path, json.to_string()).with_context(|| format!("cannot write {}", json_path.display()))?;
    let covered = |p: &[u8]| p.chunks_exact(4).filter(|p| p[3] != 0).count();
    let (mut differ, mut sum) = (0usize, 0u64);
    for (a, b) in baked.chunks_exact(4).zip(palette.chunks_exact(4)) {
        let d = a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).max().unwrap_or(0);
        sum += u64::from(d);
        differ += usize::from(d > 32);
    }
    println!(
        "wrote {} ({:?} tier, {} pixels covered) and {} (palette path, {} covered): {} pixels differ by more than \
         32 steps, mean difference {:.3}, skin '{}', animation {} at {t:.3} s, on {} ({:?})",
        r.out.display(),
        r.tier,
        covered(&baked),
        palette_path.display(),
        covered(&palette),
        differ,
        sum as f64 / (baked.len() / 4) as f64,
        skin.name,
        r.clip,
        gpu.info.name,
        gpu.info.device_type
    );
    Ok(())
}

/// `out` with `-suffix` before its extension.
fn beside(out: &Path, suffix: &str) -> std::path::PathBuf {
    let stem = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.with_file_name(format!("{stem}-{suffix}.png"))
}

/// What both paths draw.
struct Scene<'a> {
    model: &'a Model,
    skeleton: usize,
    skin: &'a PosedSkin,
    bake: &'a Bake,
    first_vertex: &'a [u32],
    /// The bake's (and the character's) clip.
    clip: usize,
    time: f32,
    camera: FrameCamera,
}

/// The baked path's image and the palette path's, both with palettes in `F`.
fn draw<F: PaletteFormat + 'static>(gpu: &Gpu, r: &Request<'_>, s: &Scene<'_>) -> Result<(Vec<u8>, Vec<u8>)> {
    let target = OffscreenTarget::new(&gpu.device, r.size, r.size)?;
    if RenderPath::for_config(&gpu.device, &gpu.offscreen_config()) != RenderPath::GpuDriven {
        bail!(
            "{} allows only the CPU-culled path, which has no baked tiers",
            gpu.info.name
        );
    }
    let character = Character::from_model(s.model, s.skeleton, &CharacterOptions::default())?.with_lod_count(1)?;
    // One instance, at LOD 0, in the requested tier whatever its size on screen.
    let tier_thresholds = match r.tier {
        Tier::Vat => [1e6, 1e5, 1e4],
        _ => [1e6, 1e5, 1e-6],
    };
    let settings = FrameSettings {
        gpu_driven: true,
        lod_thresholds: Vec::new(),
        tier_thresholds,
        ..FrameSettings::default()
    };
    let mut crowd: CrowdFrame<F> = CrowdFrame::new(character, settings)?;
    let spawn = Spawn {
        time: s.time,
        ..Spawn::at(Vec3::ZERO, ClipId(s.clip as u16))
    };
    let mut handle = [Handle::default()];
    crowd.add_many(std::slice::from_ref(&spawn), &mut handle)?;
    let cache = PipelineCache::new(&gpu.device);
    let mut renderer = CrowdRenderer::<F>::new(&gpu.device, &cache, &gpu.offscreen_config())?;
    for (mesh, material) in s.skin.packed.iter().zip(&s.skin.materials) {
        renderer.add_mesh(&gpu.device, &gpu.queue, mesh, material)?;
    }
    renderer.enable_gpu_driven(&gpu.device, crowd.store().group_desc(crowd.group())?)?;
    match r.tier {
        Tier::Vat => {
            let vat = s.bake.vat.as_ref().context("the bake has no VAT")?;
            renderer.set_vat(&gpu.device, &gpu.queue, vat, s.first_vertex)?;
        }
        _ => {
            let bat = s.bake.bat.as_ref().context("the bake has no BAT")?;
            renderer.set_bat(&gpu.device, bat)?;
        }
    }
    crowd.step(0.0, &s.camera)?;
    let exchange = crowd.exchange().clone();
    let packet = exchange.begin_read()?;
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    renderer.prepare(&gpu.device, &mut encoder, &packet)?;
    let mut view = renderer.create_view(&gpu.device)?;
    let prepared = renderer.prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(s.camera))?;
    let baked = target.render_after(gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
        renderer.render_view(&prepared, pass)
    })?;

    let mut palette = CrowdRenderer::<F>::new(&gpu.device, &cache, &gpu.offscreen_config())?;
    for (mesh, material) in s.skin.packed.iter().zip(&s.skin.materials) {
        palette.add_mesh(&gpu.device, &gpu.queue, mesh, material)?;
    }
    let record = crowd_mesh::posed::unique_record(Vec3::ZERO, 0)?;
    let packet = crowd_mesh::posed::unique_packet::<F>(s.skin.palette.len(), &s.skin.palette, &[record], s.camera)?;
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    palette.prepare(&gpu.device, &mut encoder, &packet)?;
    let mut view = palette.create_view(&gpu.device)?;
    let prepared = palette.prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(s.camera))?;
    let exact = target.render_after(gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
        palette.render_view(&prepared, pass)
    })?;
    Ok((baked, exact))
}
