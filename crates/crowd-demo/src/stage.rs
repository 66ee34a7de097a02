//! The render side, the same for the window and for headless frames: the crowd renderer with the model's meshes
//! (and its bake on the GPU-driven path), the sun's shadow map and the ground ([`Sun`]), and the MSAA colour and
//! depth attachments, drawn into any colour view (a swapchain image or an offscreen texture). A school's fish are
//! drawn by a `ProceduralRenderer` from the latest records of the world's fish feed, in the same passes.

use std::time::Instant;

use anyhow::{Result, bail};
use crowd_frame::{Packet, ResendRequest};
use crowd_gpu::{
    CrowdRenderer, CrowdView, CullQueries, DebugView, Lighting, PipelineCache, PrepareStats, ProceduralFrame,
    ProceduralRenderer, RenderPath, RendererConfig, ViewDesc, WorkQueries,
};

use glam::Vec3;

use crate::assets::Assets;
use crate::school::{FishFeed, MESH_LENGTH};
use crate::sun::Sun;

/// The depth format of the stage's depth attachment.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// The sky, the colour the frame is cleared to.
pub const SKY: wgpu::Color = wgpu::Color {
    r: 0.42,
    g: 0.55,
    b: 0.72,
    a: 1.0,
};

/// The crowd renderer, the sun and the ground, and the attachments.
pub struct Stage {
    renderer: CrowdRenderer,
    view: CrowdView,
    sun: Sun,
    /// How far from the camera shadows reach.
    shadow_reach: f32,
    path: RenderPath,
    config: RendererConfig,
    /// Asks the crowd for a full resend when the renderer reports that it missed changes.
    resend: Option<ResendRequest>,
    /// The MSAA colour (with more than one sample) and the depth attachment, for `size`.
    attachments: Option<(Option<wgpu::TextureView>, wgpu::TextureView, (u32, u32))>,
    /// A school's fish and the feed of their records.
    fish: Option<(ProceduralRenderer, FishFeed)>,
    /// Counts the main view's crowd draws (render query 0) and its cull (cull query 0), where the device can.
    work: Option<WorkQueries>,
}

impl Stage {
    /// A stage drawing `assets` into passes of `config` (its colour format and samples: 1, or 4 where the adapter
    /// allows it) on `path`, with the ground `ground_half` units from `ground_centre` each way. On the GPU-driven
    /// path the renderer takes the crowd's group (`group`) and the model's bake.
    ///
    /// # Errors
    ///
    /// crowd-gpu's errors, and the bake's.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        config: RendererConfig,
        path: RenderPath,
        assets: &Assets,
        group: Option<&crowd_cull::GroupDesc>,
        ground: (Vec3, f32),
    ) -> Result<Self> {
        let cache = PipelineCache::new(device);
        let mut renderer = CrowdRenderer::new(device, &cache, &config)?;
        for (m, material) in assets.packed.iter().zip(&assets.materials) {
            renderer.add_mesh(device, queue, m, material)?;
        }
        if path == RenderPath::GpuDriven {
            let Some(group) = group else {
                bail!("the GPU-driven path needs the crowd's group");
            };
            renderer.enable_gpu_driven(device, group)?;
            bake(device, queue, &mut renderer, assets)?;
        }
        let lighting = Lighting::default();
        renderer.set_lighting(lighting);
        let view = renderer.create_view(device)?;
        let f = assets.framing;
        let ground = (Vec3::new(ground.0.x, f.ground_y, ground.0.z), ground.1);
        let sun = Sun::new(device, &renderer, lighting, &config, ground, 2.0 * f.footprint)?;
        Ok(Self {
            renderer,
            view,
            sun,
            shadow_reach: 60.0 * f.height,
            path,
            config,
            resend: None,
            attachments: None,
            fish: None,
            work: WorkQueries::new(device, 1, 1).ok(),
        })
    }

    /// A stage for `world`'s crowd and model, with the ground reaching well past the layout.
    ///
    /// # Errors
    ///
    /// As [`Stage::new`].
    pub fn for_world(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        config: RendererConfig,
        path: RenderPath,
        world: &crate::world::World,
    ) -> Result<Self> {
        let assets = world.assets();
        let (centre, extent) = world.bounds();
        let group = world.crowd().store().group_desc(world.crowd().group())?.clone();
        let mut stage = Self::new(
            device,
            queue,
            config,
            path,
            assets,
            Some(&group),
            (centre, extent * 2.0 + assets.framing.footprint * 20.0),
        )?;
        stage.resend = Some(world.crowd().resend_requester());
        if let Some(feed) = world.fish_feed() {
            let mesh = crowd_mesh::fish_mesh(MESH_LENGTH)?;
            let undulation = crowd_mesh::Undulation::for_mesh(&mesh);
            let mut fish = ProceduralRenderer::new(device, &stage.config, &mesh, undulation)?;
            fish.set_lighting(Lighting::default());
            stage.fish = Some((fish, feed));
        }
        Ok(stage)
    }

    /// The queries counting the main view's crowd draws and cull, where the device has pipeline statistics; read
    /// them after a frame's submission.
    pub fn work(&self) -> Option<&WorkQueries> {
        self.work.as_ref()
    }

    /// The path the crowd is drawn on.
    pub fn path(&self) -> RenderPath {
        self.path
    }

    /// The renderer (for its stats and its GPU-driven view).
    pub fn renderer(&self) -> &CrowdRenderer {
        &self.renderer
    }

    /// The crowd's view (its cull results on the GPU-driven path).
    pub fn view(&self) -> &CrowdView {
        &self.view
    }

    /// The colour format the stage draws.
    pub fn color_format(&self) -> wgpu::TextureFormat {
        self.config.color_format
    }

    /// MSAA samples.
    pub fn sample_count(&self) -> u32 {
        self.config.sample_count
    }

    /// Turns the crowd's shadows on the ground on or off.
    pub fn set_shadows(&mut self, on: bool) {
        self.sun.shadows = on;
    }

    /// Whether the crowd casts shadows.
    pub fn shadows(&self) -> bool {
        self.sun.shadows
    }

    /// Shows `view` instead of the shaded crowd.
    pub fn set_debug_view(&mut self, view: DebugView) {
        self.renderer.set_debug_view(view);
    }

    /// Applies a packet that will not be drawn (the GPU-driven path needs every packet's resident changes; the
    /// CPU-culled one needs only those it draws), and submits its uploads.
    ///
    /// # Errors
    ///
    /// crowd-gpu's errors.
    pub fn skip(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, packet: &Packet) -> Result<()> {
        if self.path == RenderPath::GpuDriven {
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("crowd-demo skipped frame"),
            });
            self.prepare(device, &mut encoder, packet)?;
            queue.submit([encoder.finish()]);
        }
        Ok(())
    }

    /// Prepares `packet` into `encoder`. A renderer that missed changes (a frame the render thread never read)
    /// asks the crowd for a full resend and keeps drawing what it holds until the resend arrives.
    fn prepare(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        packet: &Packet,
    ) -> Result<PrepareStats> {
        match self.renderer.prepare(device, encoder, packet) {
            Err(crowd_gpu::Error::OutOfStep { .. }) if self.resend.is_some() => {
                if let Some(r) = &self.resend {
                    r.request();
                }
                Ok(self.renderer.stats())
            }
            other => Ok(other?),
        }
    }

    /// Draws `packet` into `target` (`size` pixels, the stage's colour format), clearing it to [`SKY`], and submits.
    /// Returns what `prepare` did and the CPU milliseconds of preparing and of recording.
    ///
    /// # Errors
    ///
    /// crowd-gpu's errors.
    pub fn draw(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        packet: &Packet,
        target: &wgpu::TextureView,
        size: (u32, u32),
    ) -> Result<(PrepareStats, f32, f32)> {
        let started = Instant::now();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("crowd-demo frame"),
        });
        let prepared = self.prepare(device, &mut encoder, packet)?;
        let main = self.renderer.prepare_view(
            device,
            &mut encoder,
            &mut self.view,
            ViewDesc {
                cull_queries: CullQueries {
                    statistics: self.work.as_ref().map(|w| w.cull(0)),
                    ..CullQueries::default()
                },
                ..ViewDesc::new(*packet.camera())
            },
        )?;
        let light = self.sun.light_camera(packet.camera(), self.shadow_reach);
        if let Some((fish, feed)) = &mut self.fish {
            let feed = feed
                .lock()
                .map_err(|_| anyhow::anyhow!("the simulation thread panicked"))?;
            fish.prepare(
                device,
                queue,
                &ProceduralFrame {
                    camera: *packet.camera(),
                    depth_camera: Some(light),
                    time: feed.time,
                    records: &feed.records,
                },
            )?;
        }
        self.sun.prepare(
            device,
            queue,
            &mut encoder,
            (&self.renderer, &main, self.fish.as_ref().map(|f| &f.0)),
            packet.camera(),
            &light,
        )?;
        let prepare_ms = started.elapsed().as_secs_f32() * 1e3;
        let recorded = Instant::now();
        if self.attachments.as_ref().is_none_or(|a| a.2 != size) {
            self.attachments = Some(make_attachments(device, &self.config, size));
        }
        let (msaa, depth, _) = self.attachments.as_ref().expect("made above");
        {
            let (view, resolve_target) = match msaa {
                Some(m) => (m, Some(target)),
                None => (target, None),
            };
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("crowd-demo pass"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view,
                    depth_slice: None,
                    resolve_target,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(SKY),
                        store: if msaa.is_some() {
                            wgpu::StoreOp::Discard
                        } else {
                            wgpu::StoreOp::Store
                        },
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: depth,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            self.sun.render_ground(&mut pass);
            if let Some(w) = &self.work {
                w.begin_render(&mut pass, 0);
            }
            self.renderer.render_view(&main, &mut pass);
            if let Some(w) = &self.work {
                w.end_render(&mut pass);
            }
            if let Some((fish, _)) = &self.fish {
                fish.draw(&mut pass);
            }
        }
        if let Some(w) = &self.work {
            w.resolve(&mut encoder);
        }
        queue.submit([encoder.finish()]);
        Ok((prepared, prepare_ms, recorded.elapsed().as_secs_f32() * 1e3))
    }
}

/// The MSAA colour (with more than one sample) and the depth attachment of `config` for `size`.
fn make_attachments(
    device: &wgpu::Device,
    config: &RendererConfig,
    size: (u32, u32),
) -> (Option<wgpu::TextureView>, wgpu::TextureView, (u32, u32)) {
    let texture = |label, format| {
        device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width: size.0,
                    height: size.1,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: config.sample_count,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            })
            .create_view(&wgpu::TextureViewDescriptor::default())
    };
    let msaa = (config.sample_count > 1).then(|| texture("crowd-demo MSAA colour", config.color_format));
    (msaa, texture("crowd-demo depth", DEPTH_FORMAT), size)
}

/// The renderers' configuration on `adapter`'s `device`: `color_format` with `sample_count` samples over
/// [`DEPTH_FORMAT`].
pub fn renderer_config(
    adapter: &wgpu::Adapter,
    device: &wgpu::Device,
    color_format: wgpu::TextureFormat,
    sample_count: u32,
) -> RendererConfig {
    let mut config = RendererConfig::for_device(adapter, device, color_format, Some(DEPTH_FORMAT));
    config.sample_count = sample_count;
    config
}

/// The sample count to use for `format`: 4 where the adapter can multisample and resolve it (and the depth format),
/// else 1.
pub fn msaa_samples(adapter: &wgpu::Adapter, format: wgpu::TextureFormat) -> u32 {
    let color = adapter.get_texture_format_features(format);
    let depth = adapter.get_texture_format_features(DEPTH_FORMAT);
    if color.flags.sample_count_supported(4)
        && color
            .flags
            .contains(wgpu::TextureFormatFeatureFlags::MULTISAMPLE_RESOLVE)
        && depth.flags.sample_count_supported(4)
    {
        4
    } else {
        1
    }
}

/// Bakes the model's clips (bone and vertex animation, within the default budget, 1/1800 of the model's extent) for
/// the baked and VAT tiers.
fn bake(device: &wgpu::Device, queue: &wgpu::Queue, renderer: &mut CrowdRenderer, assets: &Assets) -> Result<()> {
    let started = Instant::now();
    let options = anim_bake::BakeOptions {
        // The renderer's palettes are f32 3x4: the bone-animation bake must be too.
        bat_format: Some(anim_bake::BatFormat::F32),
        // Relative to the model's size (1 mm on a 1.8 m character), so that a model in any units meets it.
        budget: anim_bake::Budget::Relative(anim_bake::DEFAULT_RELATIVE_BUDGET),
        ..anim_bake::BakeOptions::default()
    };
    let (bake, report) = anim_bake::bake(&assets.model, &options, &|_| {})?;
    let (Some(bat), Some(vat)) = (&bake.bat, &bake.vat) else {
        bail!("the bake has no bone or vertex animation");
    };
    renderer.set_bake(device, queue, &bake, &assets.model_meshes)?;
    println!(
        "bake: {} clips in {:.1} s; bone animation {} KiB, vertex animation {} KiB, largest vertex error {:.3e} \
         model units (budget {:.3e}, 1/{:.0} of the model's extent)",
        bake.clips.len(),
        started.elapsed().as_secs_f64(),
        bat.byte_len() / 1024,
        vat.byte_len() / 1024,
        report.largest_error(),
        report.budget.distance,
        report.budget.extent / report.budget.distance
    );
    Ok(())
}
