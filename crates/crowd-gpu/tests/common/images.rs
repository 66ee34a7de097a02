//! Image helpers of the GPU tests: scene building from the default character, differences with stated
//! thresholds, PNG files for failures and the stored reference images.

use std::path::PathBuf;

use crowd_frame::{FrameCamera, InstanceRecord, Packet};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, PipelineCache, PrepareStats, ProceduralRenderer, RendererConfig, ViewDesc};
use crowd_mesh::{Material, PackedMesh};
use glam::Vec3;
use skin_pack::PaletteFormat;

/// The default character in the repository.
pub fn default_character() -> anim_pose::Model {
    let path = default_character_path();
    anim_pose::import_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The workspace's character model's path.
pub fn default_character_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/crowd_character.glb")
}

/// A renderer for the offscreen target's formats with `F` palettes and `limits` (the device's when `None`), with a
/// pipeline cache of its own.
pub fn renderer<F: PaletteFormat + 'static>(gpu: &Gpu, limits: Option<wgpu::Limits>) -> CrowdRenderer<F> {
    renderer_in(gpu, &PipelineCache::new(&gpu.device), limits)
}

/// As [`renderer`], with the pipelines of `cache`.
pub fn renderer_in<F: PaletteFormat + 'static>(
    gpu: &Gpu,
    cache: &PipelineCache,
    limits: Option<wgpu::Limits>,
) -> CrowdRenderer<F> {
    CrowdRenderer::new(
        &gpu.device,
        cache,
        &RendererConfig {
            limits: limits.unwrap_or_else(|| gpu.device.limits()),
            ..gpu.offscreen_config()
        },
    )
    .expect("a renderer")
}

/// Adds every mesh of `meshes` with its material.
pub fn add_meshes<F: PaletteFormat + 'static>(
    gpu: &Gpu,
    renderer: &mut CrowdRenderer<F>,
    meshes: &[PackedMesh],
    materials: &[Material],
) {
    for (m, material) in meshes.iter().zip(materials) {
        renderer
            .add_mesh(&gpu.device, &gpu.queue, m, material)
            .expect("the mesh uploads");
    }
}

/// `prepare` into an encoder of its own, submitted at once.
pub trait PrepareNow<F: PaletteFormat> {
    /// Prepares `packet` and submits what it recorded.
    fn prepare_now(&mut self, gpu: &Gpu, packet: &Packet<F>) -> crowd_gpu::Result<PrepareStats>;
}

impl<F: PaletteFormat + 'static> PrepareNow<F> for CrowdRenderer<F> {
    fn prepare_now(&mut self, gpu: &Gpu, packet: &Packet<F>) -> crowd_gpu::Result<PrepareStats> {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let stats = self.prepare(&gpu.device, &mut encoder, packet)?;
        gpu.queue.submit([encoder.finish()]);
        Ok(stats)
    }
}

/// Prepares `packet` in `renderer`, submitted at once.
pub fn prepare<F: PaletteFormat + 'static>(gpu: &Gpu, renderer: &mut CrowdRenderer<F>, packet: &Packet<F>) {
    renderer.prepare_now(gpu, packet).expect("the packet prepares");
}

/// Something the image tests draw into a target: a crowd renderer (a new view of the camera) or a procedural one.
pub trait TestDraw {
    /// Records what the frame needs into `encoder`, then a pass over `target` (cleared first when `clear`, else
    /// loaded) with the draws.
    fn draw_into(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        target: &OffscreenTarget,
        camera: &FrameCamera,
        clear: bool,
    );
}

impl<F: PaletteFormat + 'static> TestDraw for CrowdRenderer<F> {
    fn draw_into(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        target: &OffscreenTarget,
        camera: &FrameCamera,
        clear: bool,
    ) {
        let mut view = self.create_view(&gpu.device).expect("a view");
        let prepared = self
            .prepare_view(&gpu.device, encoder, &mut view, ViewDesc::new(*camera))
            .expect("the view prepares");
        let mut pass = begin_pass(encoder, target, clear);
        self.render_view(&prepared, &mut pass);
    }
}

impl TestDraw for ProceduralRenderer {
    fn draw_into(
        &self,
        _: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        target: &OffscreenTarget,
        _: &FrameCamera,
        clear: bool,
    ) {
        let mut pass = begin_pass(encoder, target, clear);
        self.draw(&mut pass);
    }
}

/// A pass over `target`'s colour and depth, cleared (transparent, depth 1) or loaded.
pub fn begin_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    target: &OffscreenTarget,
    clear: bool,
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("test"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: &target.color_view,
            resolve_target: None,
            depth_slice: None,
            ops: wgpu::Operations {
                load: if clear {
                    wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT)
                } else {
                    wgpu::LoadOp::Load
                },
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
            view: &target.depth_view,
            depth_ops: Some(wgpu::Operations {
                load: if clear {
                    wgpu::LoadOp::Clear(1.0)
                } else {
                    wgpu::LoadOp::Load
                },
                store: wgpu::StoreOp::Store,
            }),
            stencil_ops: None,
        }),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

/// Records `depth_only` into a pass with only `target`'s depth attachment (cleared to 1), then `colour` into a pass
/// over that depth and `target`'s colour attachment (cleared transparent); returns the colour pixels. With the
/// `Less` test, no fragment of `colour` passes where `depth_only` wrote the same surface at the same depth.
pub fn depth_then_colour(
    gpu: &Gpu,
    target: &OffscreenTarget,
    depth_only: impl FnOnce(&mut wgpu::RenderPass<'_>),
    colour: impl FnOnce(&mut wgpu::RenderPass<'_>),
) -> Vec<u8> {
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let depth_attachment = |load| {
        Some(wgpu::RenderPassDepthStencilAttachment {
            view: &target.depth_view,
            depth_ops: Some(wgpu::Operations {
                load,
                store: wgpu::StoreOp::Store,
            }),
            stencil_ops: None,
        })
    };
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("depth only"),
            color_attachments: &[],
            depth_stencil_attachment: depth_attachment(wgpu::LoadOp::Clear(1.0)),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        depth_only(&mut pass);
    }
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("colour over the depth"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &target.color_view,
                resolve_target: None,
                depth_slice: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: depth_attachment(wgpu::LoadOp::Load),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        colour(&mut pass);
    }
    gpu.queue.submit([encoder.finish()]);
    target.read_rgba8(gpu).expect("reads back")
}

/// Renders every drawing of `drawings` (prepared) from `camera` into one image on a transparent background: each in
/// its own pass over the same colour and depth, as one pass would.
pub fn render(gpu: &Gpu, target: &OffscreenTarget, camera: &FrameCamera, drawings: &[&dyn TestDraw]) -> Vec<u8> {
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    if drawings.is_empty() {
        drop(begin_pass(&mut encoder, target, true));
    }
    for (i, d) in drawings.iter().enumerate() {
        d.draw_into(gpu, &mut encoder, target, camera, i == 0);
    }
    gpu.queue.submit([encoder.finish()]);
    target.read_rgba8(gpu).expect("the image reads back")
}

/// A unique record at `position` with the identity rotation and scale, reading the palette at entry `palette`.
pub fn unique_record(position: Vec3, palette: u32) -> InstanceRecord {
    crowd_mesh::posed::unique_record(position, palette).expect("a record")
}

/// How far two RGBA8 images are apart.
#[derive(Clone, Copy, Debug)]
pub struct Difference {
    /// The mean absolute difference over every channel of every pixel, in 8-bit steps.
    pub mean: f64,
    /// The largest absolute difference of any channel.
    pub max: u8,
    /// The fraction of pixels where some channel differs by more than 32 steps (an edge pixel that flipped).
    pub flipped: f64,
}

/// The difference of `a` and `b` (same size).
pub fn difference(a: &[u8], b: &[u8]) -> Difference {
    assert_eq!(a.len(), b.len(), "images of different sizes");
    let mut sum = 0u64;
    let mut max = 0u8;
    let mut flipped = 0usize;
    for (pa, pb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let mut pixel = 0u8;
        for (x, y) in pa.iter().zip(pb) {
            let d = x.abs_diff(*y);
            sum += u64::from(d);
            pixel = pixel.max(d);
        }
        max = max.max(pixel);
        flipped += usize::from(pixel > 32);
    }
    Difference {
        mean: sum as f64 / a.len() as f64,
        max,
        flipped: flipped as f64 / (a.len() / 4) as f64,
    }
}

/// The folder of the stored reference images.
pub fn reference_dir() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference")
}

/// Writes `pixels` as a PNG.
pub fn write_png(path: &std::path::Path, (width, height): (u32, u32), pixels: &[u8]) {
    image::save_buffer(path, pixels, width, height, image::ExtendedColorType::Rgba8)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Writes `NAME-actual.png` and `NAME-difference.png` (each channel's difference × 4, opaque) beside the reference
/// images, for a failing comparison; git ignores both.
pub fn write_failure(name: &str, size: (u32, u32), actual: &[u8], expected: &[u8]) {
    let dir = reference_dir();
    write_png(&dir.join(format!("{name}-actual.png")), size, actual);
    let diff: Vec<u8> = actual
        .chunks_exact(4)
        .zip(expected.chunks_exact(4))
        .flat_map(|(a, e)| {
            let d = |i: usize| a[i].abs_diff(e[i]).saturating_mul(4);
            [d(0).max(d(3)), d(1).max(d(3)), d(2).max(d(3)), 255]
        })
        .collect();
    write_png(&dir.join(format!("{name}-difference.png")), size, &diff);
}

/// The stored reference image `NAME.png`: a missing file is a failure unless `CROWD_BLESS=1`, which writes
/// `pixels` as the new reference (and is never set on CI).
pub fn stored_reference(name: &str, size: (u32, u32), pixels: &[u8]) -> Vec<u8> {
    let path = reference_dir().join(format!("{name}.png"));
    if std::env::var("CROWD_BLESS").as_deref() == Ok("1") {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CROWD_BLESS is not allowed on CI"
        );
        write_png(&path, size, pixels);
    }
    let image = image::open(&path)
        .unwrap_or_else(|e| {
            panic!(
                "the reference image {} is missing or unreadable ({e}); render it with CROWD_BLESS=1 and review it",
                path.display()
            )
        })
        .to_rgba8();
    assert_eq!(image.dimensions(), size, "{} has the wrong size", path.display());
    image.into_raw()
}
