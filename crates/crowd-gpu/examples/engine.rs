//! An engine that owns its device, queue, encoders and pass draws a GPU-driven crowd with a bake: 10,000 characters
//! of the workspace's model in a grid, 30 frames, the last one saved as a PNG. Its only crowd dependency is crowd-gpu.
//!
//! `cargo run --release -p crowd-gpu --example engine -- [--model GLB] [--bake FILE] [--out PNG]`. Without
//! `--bake` the model is baked here with anim-bake (a dev-dependency); an engine loads the file that
//! `cargo xtask bake` wrote offline, and never links the baker.

use std::path::{Path, PathBuf};

use crowd_gpu::glam::{Quat, Vec3};
use crowd_gpu::wgpu;
use crowd_gpu::{
    Bake, ClipId, CrowdAsset, CrowdFrame, CrowdRenderer, Error, FrameCamera, PipelineCache, RendererConfig, Spawn,
    ViewDesc,
};

/// What one run draws.
pub struct Options {
    /// The glTF model.
    pub model: PathBuf,
    /// A bake file of the model, or `None` to bake it here.
    pub bake: Option<PathBuf>,
    /// Characters in the crowd, in rows of 100.
    pub count: usize,
    /// Frames simulated and drawn.
    pub frames: u32,
    /// The image's width and height in pixels.
    pub size: (u32, u32),
}

/// Draws `options`' crowd with the engine's `adapter`, `device` and `queue`; returns the last frame's RGBA8 pixels
/// and its indirect draw calls.
pub fn run(
    adapter: &wgpu::Adapter,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    options: &Options,
) -> Result<(Vec<u8>, u32), Box<dyn std::error::Error>> {
    // Setup: the character, a crowd of it on the GPU-driven path, a renderer for the crowd and its bake.
    let model = crowd_gpu::anim_pose::import_file(&options.model)?;
    let asset = CrowdAsset::from_model(&model, &Default::default())?;
    let bake = match &options.bake {
        Some(path) => Bake::read_file(path)?,
        None => anim_bake::bake(&model, &Default::default(), &|_| {})?.0,
    };
    let (color_format, depth_format) = (wgpu::TextureFormat::Rgba8UnormSrgb, wgpu::TextureFormat::Depth32Float);
    let config = RendererConfig::for_device(adapter, device, color_format, Some(depth_format));
    let mut crowd: CrowdFrame = CrowdFrame::new(asset.character.clone(), asset.frame_settings_for(device, &config))?;
    let clips = asset.character.clips().len();
    let spawns: Vec<Spawn> = (0..options.count)
        .map(|i| Spawn {
            rotation: Quat::from_rotation_y(i as f32 * 2.4),
            time: i as f32 * 0.37,
            ..Spawn::at(
                Vec3::new((i % 100) as f32 * 1.5 - 75.0, 0.0, -((i / 100) as f32) * 1.5),
                ClipId((i % clips) as u16),
            )
        })
        .collect();
    crowd.add_many(&spawns, &mut vec![Default::default(); spawns.len()])?;
    let cache = PipelineCache::new(device);
    let mut renderer: CrowdRenderer = CrowdRenderer::for_crowd(device, queue, &cache, &config, &asset, &crowd)?;
    if crowd.settings().gpu_driven {
        // The bake draws the baked and VAT tiers; a device without the GPU-driven path draws them from the pose pool.
        renderer.set_bake(device, queue, &bake, &asset.model_meshes)?;
    }
    let mut view = renderer.create_view(device)?;

    // The engine's attachments.
    let texture = |format, usage| {
        let size = wgpu::Extent3d {
            width: options.size.0,
            height: options.size.1,
            depth_or_array_layers: 1,
        };
        device.create_texture(&wgpu::TextureDescriptor {
            label: None,
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: usage | wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        })
    };
    let color = texture(color_format, wgpu::TextureUsages::COPY_SRC);
    let depth = texture(depth_format, wgpu::TextureUsages::empty());
    let (color_view, depth_view) = (
        color.create_view(&Default::default()),
        depth.create_view(&Default::default()),
    );

    let aspect = options.size.0 as f32 / options.size.1 as f32;
    let exchange = crowd.exchange().clone();
    let mut draws = 0;
    for frame in 0..options.frames {
        // The simulation's frame; on a thread of its own in an engine, the exchange between them.
        let eye = Vec3::new(frame as f32 * 0.2, 12.0, 24.0);
        let camera = FrameCamera::perspective(eye, Vec3::new(0.0, 0.0, -30.0), Vec3::Y, 0.9, aspect, 0.1, 400.0);
        crowd.step(1.0 / 60.0, &camera)?;
        let packet = exchange.begin_read()?;

        // The render frame: everything goes into the engine's encoder and pass; the engine submits.
        let mut encoder = device.create_command_encoder(&Default::default());
        match renderer.prepare(device, &mut encoder, &packet) {
            // The renderer missed changes (a dropped packet, a new renderer): it keeps its last frame meanwhile.
            Err(Error::OutOfStep { .. }) => crowd.resend_all(),
            other => _ = other?,
        }
        drop(packet);
        let prepared = renderer.prepare_view(device, &mut encoder, &mut view, ViewDesc::new(camera))?;
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &color_view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: 0.5,
                        g: 0.6,
                        b: 0.7,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            ..Default::default()
        });
        renderer.render_view(&prepared, &mut pass);
        drop(pass);
        draws = prepared.draw_calls();
        queue.submit([encoder.finish()]);
    }
    Ok((crowd_gpu::headless::read_texture_rgba8(device, queue, &color)?, draws))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut options = Options {
        model: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/crowd_character.glb"),
        bake: None,
        count: 10_000,
        frames: 30,
        size: (1280, 720),
    };
    let mut out = PathBuf::from("target/engine_example.png");
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--model" => options.model = value.into(),
            "--bake" => options.bake = Some(value.into()),
            "--out" => out = value.into(),
            _ => return Err(format!("unknown argument {flag}").into()),
        }
    }

    // The engine's device: any adapter and device will do.
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        required_limits: adapter.limits(),
        ..Default::default()
    }))?;

    let (pixels, draws) = run(&adapter, &device, &queue, &options)?;
    let (w, h) = options.size;
    image::save_buffer(&out, &pixels, w, h, image::ExtendedColorType::Rgba8)?;
    println!("{}: {w} x {h}, {draws} indirect draws", out.display());
    Ok(())
}
