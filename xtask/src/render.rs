//! `cargo xtask render MODEL --clip N --time T [--size PX] [--format f32|mat3x4-f16|qt-f16] --out FILE.png`: every
//! skinned primitive of a glTF model at time `T` of animation `N`, posed exactly and skinned on the GPU through
//! `crowd_gpu::CrowdRenderer`, as one unique-tier instance per skin with the identity instance transform (so world
//! space is the file's world space).
//!
//! - The camera frames the model's skinned bounds at that time, from the front (+Z looking down −Z), 30° high.
//! - `FILE.png` is RGBA8, `PX × PX`, with a fully transparent background (alpha 0), the model opaque, no MSAA.
//! - `FILE.json` beside it holds `{"view_proj": [16 numbers], "width": W, "height": H}`: the column-major matrix
//!   used, from world space to wgpu clip space.
//! - `T` is taken modulo the animation's duration; a skeleton that animation `N` does not animate stands in its
//!   rest pose. It runs on any wgpu adapter, lavapipe included.
//!
//! `--tier baked|vat [--bake FILE]` renders the bake's skeleton through a baked path instead: one GPU-driven
//! instance at the identity transform in the baked tier (the bone-animation bake's two frames around `T`,
//! interpolated, in the bake's entry format) or the VAT tier (the vertex-animation bake's vertices), with the same
//! camera. Without `--bake` the model is baked first with the default 1 mm budget. The palette path's image of the
//! same skin is written beside it (`FILE-palette.png`) and the two are compared pixel by pixel.

use std::path::Path;

use anyhow::{Context, Result, bail};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, PipelineCache, ViewDesc};
use crowd_mesh::posed::{PosedSkin, front_camera, pose_exact, posed_bounds, unique_packet};
use glam::Vec3;
use skin_pack::{Mat3x4F16, PaletteEntry, PaletteFormat, QtF16};

/// The path an image is drawn through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Tier {
    /// The exact pose's palette, CPU-flattened (the unique tier).
    Palette,
    /// The bone-animation bake (the baked tier of the GPU-driven path).
    Baked,
    /// The vertex-animation bake (the VAT tier of the GPU-driven path).
    Vat,
}

/// What `run` draws and where.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The model file.
    pub model: &'a Path,
    /// The glTF animation index.
    pub clip: usize,
    /// The time in seconds.
    pub time: f32,
    /// The image's side in pixels.
    pub size: u32,
    /// The palette format of the palette path.
    pub format: Format,
    /// The path drawn.
    pub tier: Tier,
    /// A bake file for the baked paths (baked afresh when `None`).
    pub bake: Option<&'a Path>,
    /// The PNG written.
    pub out: &'a Path,
}

/// The palette format on the command line.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// f32 3×4, 48 bytes.
    F32,
    /// `Mat3x4F16`, 24 bytes.
    #[value(name = "mat3x4-f16")]
    Mat3x4F16,
    /// `QtF16`, 16 bytes.
    #[value(name = "qt-f16")]
    QtF16,
}

/// Renders what `r` asks for and writes its PNG and `.json` (and, for a baked path, the palette path's image).
pub fn run(r: &Request<'_>) -> Result<()> {
    let (model_path, clip, time, size, format, out) = (r.model, r.clip, r.time, r.size, r.format, r.out);
    if !time.is_finite() {
        bail!("--time {time} is not finite");
    }
    let model =
        anim_pose::import_file(model_path).with_context(|| format!("cannot import {}", model_path.display()))?;
    let Some(first) = model.clips.iter().find(|c| c.animation == clip) else {
        let count = model.clips.iter().map(|c| c.animation + 1).max().unwrap_or(0);
        bail!(
            "--clip {clip} is out of range: {} has {count} animations that animate a skeleton",
            model_path.display()
        );
    };
    let t = crate::skin::wrap_time(time, first.duration);
    let skins = pose_exact(&model, clip, t).context("cannot pose the model")?;
    let bounds = posed_bounds(&model, &skins)?;
    if bounds.is_empty() {
        bail!("{} has no skinned vertex", model_path.display());
    }
    let camera = front_camera(&bounds, 1.0);
    let gpu = Gpu::open(None)?.context("no wgpu adapter: install a Vulkan driver (lavapipe: mesa-vulkan-drivers)")?;
    if r.tier != Tier::Palette {
        return crate::render_baked::run(&gpu, &model, r, &skins, camera, t);
    }
    let target = OffscreenTarget::new(&gpu.device, size, size)?;
    let pixels = match format {
        Format::F32 => render_skins::<PaletteEntry>(&gpu, &skins, camera, &target)?,
        Format::Mat3x4F16 => render_skins::<Mat3x4F16>(&gpu, &skins, camera, &target)?,
        Format::QtF16 => render_skins::<QtF16>(&gpu, &skins, camera, &target)?,
    };
    image::save_buffer(out, &pixels, size, size, image::ExtendedColorType::Rgba8)
        .with_context(|| format!("cannot write {}", out.display()))?;
    let json = serde_json::json!({
        "view_proj": camera.view_proj().to_cols_array(),
        "width": size,
        "height": size,
    });
    let json_path = out.with_extension("json");
    std::fs::write(&json_path, json.to_string()).with_context(|| format!("cannot write {}", json_path.display()))?;
    let covered = pixels.chunks_exact(4).filter(|p| p[3] != 0).count();
    println!(
        "wrote {} and {}: {} skins, animation {clip} '{}' at {t:.3} s, {:?} palettes, {covered} pixels covered, on {} \
         ({:?})",
        out.display(),
        json_path.display(),
        skins.len(),
        first.name,
        format,
        gpu.info.name,
        gpu.info.device_type
    );
    Ok(())
}

/// Every skin of `skins` drawn from `camera` into `target` in one pass, each by a renderer holding its meshes with
/// one unique instance at the identity transform.
fn render_skins<F: PaletteFormat + 'static>(
    gpu: &Gpu,
    skins: &[PosedSkin],
    camera: crowd_frame::FrameCamera,
    target: &OffscreenTarget,
) -> Result<Vec<u8>> {
    let cache = PipelineCache::new(&gpu.device);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let mut renderers = Vec::new();
    for skin in skins {
        let mut renderer = CrowdRenderer::<F>::new(&gpu.device, &cache, &gpu.offscreen_config())?;
        for (mesh, material) in skin.packed.iter().zip(&skin.materials) {
            renderer.add_mesh(&gpu.device, &gpu.queue, mesh, material)?;
        }
        let record = crowd_mesh::posed::unique_record(Vec3::ZERO, 0)?;
        let packet = unique_packet::<F>(skin.palette.len(), &skin.palette, &[record], camera)
            .with_context(|| format!("skin '{}'", skin.name))?;
        renderer.prepare(&gpu.device, &mut encoder, &packet)?;
        let view = renderer.create_view(&gpu.device)?;
        renderers.push((renderer, view));
    }
    let mut prepared = Vec::new();
    for (renderer, view) in &mut renderers {
        prepared.push((
            &*renderer,
            renderer.prepare_view(&gpu.device, &mut encoder, view, ViewDesc::new(camera))?,
        ));
    }
    Ok(target.render_after(gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
        for (renderer, view) in &prepared {
            renderer.render_view(view, pass);
        }
    })?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rendered PNG and its camera agree with the CPU-skinned vertices: every vertex projected with the
    /// written `view_proj` lands on or next to an opaque pixel, and the background is transparent.
    #[test]
    fn the_image_and_its_camera_match_the_skinned_model() {
        if Gpu::open(None).expect("a device").is_none() {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "no wgpu adapter on CI");
            eprintln!("SKIPPED: no wgpu adapter on this machine; the render test did not run");
            return;
        }
        let root = crate::workspace_root();
        let model_path = root.join(crate::character::CHARACTER_PATH);
        let dir = std::env::temp_dir().join(format!("xtask-render-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let out = dir.join("walk.png");
        run(&Request {
            model: &model_path,
            clip: 1,
            time: 0.6,
            size: 128,
            format: Format::QtF16,
            tier: Tier::Palette,
            bake: None,
            out: &out,
        })
        .expect("renders");
        let image = image::open(&out).expect("a PNG").to_rgba8();
        assert_eq!(image.dimensions(), (128, 128));
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).expect("the JSON"))
                .expect("JSON");
        assert_eq!(
            (json["width"].as_u64(), json["height"].as_u64()),
            (Some(128), Some(128))
        );
        let m: Vec<f32> = json["view_proj"]
            .as_array()
            .expect("an array")
            .iter()
            .map(|v| v.as_f64().expect("a number") as f32)
            .collect();
        let view_proj = glam::Mat4::from_cols_slice(&m);
        for corner in [(0, 0), (127, 0), (0, 127), (127, 127)] {
            assert_eq!(
                image.get_pixel(corner.0, corner.1)[3],
                0,
                "the background is transparent"
            );
        }
        let model = anim_pose::import_file(&model_path).expect("imports");
        let skins = pose_exact(&model, 1, 0.6).expect("poses");
        let (mut hits, mut total) = (0, 0);
        for skin in &skins {
            for &m in &skin.meshes {
                for p in crowd_mesh::posed::skin_on_cpu(&model, m, &skin.palette)
                    .expect("skins")
                    .0
                {
                    let c = view_proj * p.extend(1.0);
                    let (x, y) = ((c.x / c.w * 0.5 + 0.5) * 128.0, (0.5 - c.y / c.w * 0.5) * 128.0);
                    assert!(
                        (0.0..128.0).contains(&x) && (0.0..128.0).contains(&y),
                        "vertex {p} is off the image"
                    );
                    let opaque = (-1..=1).any(|dy: i32| {
                        (-1..=1).any(|dx: i32| {
                            let (px, py) = ((x as i32 + dx).clamp(0, 127), (y as i32 + dy).clamp(0, 127));
                            image.get_pixel(px as u32, py as u32)[3] == 255
                        })
                    });
                    hits += usize::from(opaque);
                    total += 1;
                }
            }
        }
        assert!(
            hits as f64 >= 0.99 * total as f64,
            "{hits} of {total} vertices land on the model"
        );
        std::fs::remove_dir_all(&dir).expect("cleans up");
    }

    /// `--tier baked` and `--tier vat` from a bake file draw the palette path's image, within the bake's error:
    /// at most 1% of the covered pixels differ by more than 32 steps.
    #[test]
    fn the_baked_tiers_draw_the_palette_image_from_a_bake_file() {
        let Some(gpu) = Gpu::open(None).expect("a device") else {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "no wgpu adapter on CI");
            eprintln!("SKIPPED: no wgpu adapter on this machine; the render test did not run");
            return;
        };
        drop(gpu);
        let root = crate::workspace_root();
        let model_path = root.join(crate::character::CHARACTER_PATH);
        let dir = std::env::temp_dir().join(format!("xtask-render-tier-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temp dir");
        let model = anim_pose::import_file(&model_path).expect("imports");
        let options = anim_bake::BakeOptions {
            bat_format: Some(anim_bake::BatFormat::Mat3x4F16),
            budget: anim_bake::Budget::Absolute(2e-3),
            ..anim_bake::BakeOptions::default()
        };
        let (bake, _) = anim_bake::bake(&model, &options, &|_| {}).expect("bakes");
        let bake_path = dir.join("character.bake");
        bake.write_file(&bake_path).expect("writes the bake");
        for tier in [Tier::Baked, Tier::Vat] {
            let out = dir.join(format!("{tier:?}.png"));
            run(&Request {
                model: &model_path,
                clip: 2,
                time: 0.613,
                size: 256,
                format: Format::F32,
                tier,
                bake: Some(&bake_path),
                out: &out,
            })
            .expect("renders");
            let a = image::open(&out).expect("a PNG").to_rgba8();
            let b = image::open(dir.join(format!("{tier:?}-palette.png")))
                .expect("the palette path's PNG")
                .to_rgba8();
            let covered = b.pixels().filter(|p| p[3] != 0).count();
            let differ = a
                .pixels()
                .zip(b.pixels())
                .filter(|(x, y)| x.0.iter().zip(y.0).any(|(u, v)| u.abs_diff(v) > 32))
                .count();
            assert!(covered > 4_000, "{tier:?}: the character is drawn ({covered} pixels)");
            assert!(
                differ * 100 <= covered,
                "{tier:?}: {differ} of {covered} pixels differ from the palette path"
            );
        }
        std::fs::remove_dir_all(&dir).expect("cleans up");
    }
}
