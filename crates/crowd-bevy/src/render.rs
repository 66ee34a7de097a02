//! The render world: crowds and the sun extracted from the main world, one crowd-gpu pipeline cache per render
//! device shared by every crowd, a renderer per crowd whose packets are prepared into an encoder submitted before
//! Bevy's passes, and each camera's view prepared and drawn in its main pass, after Bevy's opaque meshes and against
//! the same depth buffer.

use std::collections::HashMap;

use bevy::ecs::prelude::*;
use bevy::light::DirectionalLight;
use bevy::log::{debug, error, warn};
use bevy::render::Extract;
use bevy::render::camera::ExtractedCamera;
use bevy::render::render_resource::StoreOp;
use bevy::render::renderer::{RenderAdapter, RenderContext, RenderDevice, RenderQueue, ViewQuery};
use bevy::render::view::{ExtractedView, Msaa, ViewDepthStencilTexture, ViewTarget};
use bevy::transform::components::GlobalTransform;
use crowd_frame::{Packet, ResendRequest};
use crowd_gpu::{CrowdRenderer, CrowdView, Lighting, PipelineCache, RenderPath, RendererConfig, ViewDesc};

use crate::crowd::{Crowd, CrowdLink, frame_camera};

/// Bevy's main-pass depth format.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// The illuminance, in lux, that [`Lighting::sun_color`] of 1 stands for: Bevy's default directional light
/// (`light_consts::lux::AMBIENT_DAYLIGHT`).
pub const SUN_LUX_AT_ONE: f32 = 10_000.0;

/// The target the main world configures with to choose a crowd's path and slot limit: any colour format and
/// sample count do, since neither decision depends on them.
pub(crate) const PROBE_TARGET: (wgpu::TextureFormat, u32) = (wgpu::TextureFormat::Rgba8UnormSrgb, 1);

/// The crowd renderers' layouts, shaders and pipelines on Bevy's render device (render world): made once per device
/// (in `RenderStartup`) and shared by every crowd, so that two crowds compile nothing twice. A game that draws its
/// own crowd-gpu renderers on Bevy's device can share it too.
#[derive(Resource, Clone, Debug)]
pub struct CrowdPipelineCache(pub PipelineCache);

/// The crowds of this frame, extracted from the main world (their shared handles only).
#[derive(Resource, Default)]
pub(crate) struct ExtractedCrowds(Vec<(Entity, CrowdLink)>);

/// The crowds' lighting, from the brightest directional light of the main world (the default [`Lighting`] when
/// there is none).
#[derive(Resource, Clone, Copy, Debug, Default)]
pub(crate) struct ExtractedSun(Lighting);

/// One crowd's renderer and its per-camera views.
struct CrowdGpu {
    renderer: CrowdRenderer,
    /// Per render-world camera entity.
    views: HashMap<Entity, CrowdView>,
    /// The colour format and sample count the renderer's pipelines were made for.
    target: (wgpu::TextureFormat, u32),
    /// Whether a packet has been applied (a crowd draws nothing before its first packet).
    fed: bool,
    /// Whether a view of another format was reported.
    warned: bool,
}

/// Every crowd's renderer, by main-world crowd entity.
#[derive(Resource, Default)]
pub(crate) struct CrowdGpus(HashMap<Entity, CrowdGpu>);

/// Makes the pipeline cache of a new render device, and forgets the renderers made on the previous one (a crowd's
/// new renderer asks it for a full resend).
pub(crate) fn init_device(mut commands: Commands, device: Res<RenderDevice>, mut gpus: ResMut<CrowdGpus>) {
    commands.insert_resource(CrowdPipelineCache(PipelineCache::new(device.wgpu_device())));
    gpus.0.clear();
}

/// Copies the ready crowds' handles and the sun into the render world.
pub(crate) fn extract_crowds(
    crowds: Extract<Query<(Entity, &Crowd)>>,
    lights: Extract<Query<(&DirectionalLight, &GlobalTransform)>>,
    mut out: ResMut<ExtractedCrowds>,
    mut sun: ResMut<ExtractedSun>,
) {
    out.0.clear();
    out.0
        .extend(crowds.iter().filter_map(|(e, c)| c.ready().map(|r| (e, r.link()))));
    sun.0 = lights
        .iter()
        .max_by(|a, b| a.0.illuminance.total_cmp(&b.0.illuminance))
        .map_or_else(Lighting::default, |(light, transform)| lighting(light, transform));
}

/// crowd-gpu's lighting for a Bevy directional light: towards the light (its transform's back), its linear colour
/// times its illuminance over [`SUN_LUX_AT_ONE`]; the sky and ground terms stay crowd-gpu's defaults.
pub fn lighting(light: &DirectionalLight, transform: &GlobalTransform) -> Lighting {
    let towards = transform.back();
    let c = light.color.to_linear();
    let k = light.illuminance / SUN_LUX_AT_ONE;
    Lighting {
        sun_direction: [towards.x, towards.y, towards.z],
        sun_color: [c.red * k, c.green * k, c.blue * k],
        ..Lighting::default()
    }
}

/// The configuration of a crowd renderer on Bevy's `device` (its limits, `adapter`'s downlevel flags) drawing into
/// `target` (colour format, samples) over Bevy's reversed-Z depth, which its meshes test `GreaterEqual`.
pub(crate) fn renderer_config(
    adapter: &wgpu::Adapter,
    device: &wgpu::Device,
    target: (wgpu::TextureFormat, u32),
) -> RendererConfig {
    let mut config = RendererConfig::for_device(adapter, device, target.0, Some(DEPTH_FORMAT));
    config.depth_compare = wgpu::CompareFunction::GreaterEqual;
    config.sample_count = target.1;
    config
}

/// Creates renderers for new crowds, prepares each crowd's newest packet into one encoder submitted before Bevy's
/// passes, and makes each crowd a view per camera of its renderer's target.
#[expect(clippy::too_many_arguments, reason = "a Bevy system's resources and queries")]
pub(crate) fn prepare_crowds(
    mut gpus: ResMut<CrowdGpus>,
    crowds: Res<ExtractedCrowds>,
    sun: Res<ExtractedSun>,
    cache: Option<Res<CrowdPipelineCache>>,
    device: Res<RenderDevice>,
    adapter: Res<RenderAdapter>,
    queue: Res<RenderQueue>,
    views: Query<(Entity, &ExtractedView, &Msaa), With<ViewTarget>>,
) {
    let device_ref = device.wgpu_device();
    let queue_ref: &wgpu::Queue = &queue;
    gpus.0.retain(|e, _| crowds.0.iter().any(|(c, _)| c == e));
    let (Some(cache), Some(first_view)) = (cache, views.iter().next()) else {
        return;
    };
    if crowds.0.is_empty() {
        return;
    }
    let first_target = (first_view.1.target_format, first_view.2.samples());
    let mut encoder = device_ref.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("crowd-bevy prepare"),
    });
    for (entity, link) in &crowds.0 {
        if !gpus.0.contains_key(entity) {
            let config = renderer_config(&adapter, device_ref, first_target);
            match new_renderer(device_ref, queue_ref, &cache.0, &config, link) {
                Ok(gpu) => {
                    gpus.0.insert(*entity, gpu);
                }
                Err(e) => {
                    error!("crowd {entity}: cannot create its renderer: {e}");
                    continue;
                }
            }
        }
        let gpu = gpus.0.get_mut(entity).expect("inserted above");
        gpu.renderer.set_lighting(sun.0);
        match link.exchange.try_begin_read() {
            Ok(Some(packet)) => {
                match prepare_packet(&mut gpu.renderer, device_ref, &mut encoder, &packet, &link.resend) {
                    Ok(()) => gpu.fed = true,
                    Err(crowd_gpu::Error::OutOfStep { .. }) => {
                        debug!("crowd {entity}: the renderer is out of step; a full resend is asked for");
                    }
                    Err(e) => error!("crowd {entity}: the packet did not upload: {e}"),
                }
            }
            Ok(None) => {}
            Err(e) => error!("crowd {entity}: cannot read its packet: {e}"),
        }
        if !gpu.fed {
            continue;
        }
        gpu.views.retain(|v, _| views.contains(*v));
        for (view_entity, view, msaa) in &views {
            if (view.target_format, msaa.samples()) != gpu.target {
                if !gpu.warned {
                    warn!(
                        "crowd {entity}: camera {view_entity} draws {:?} with {} samples; the crowd's renderer was \
                         made for {:?} with {} samples and skips it",
                        view.target_format,
                        msaa.samples(),
                        gpu.target.0,
                        gpu.target.1
                    );
                    gpu.warned = true;
                }
                continue;
            }
            if !gpu.views.contains_key(&view_entity) {
                match gpu.renderer.create_view(device_ref) {
                    Ok(v) => {
                        gpu.views.insert(view_entity, v);
                    }
                    Err(e) => error!("crowd {entity}: cannot create a view: {e}"),
                }
            }
        }
    }
    queue_ref.submit([encoder.finish()]);
}

/// Prepares `packet` into `encoder`. A renderer out of step with the packets (made after the crowd's first packet,
/// or after a packet it did not take) asks the crowd for a full resend through `resend`, which the crowd's next
/// packet brings, and draws what it holds until then.
fn prepare_packet(
    renderer: &mut CrowdRenderer,
    device: &wgpu::Device,
    encoder: &mut wgpu::CommandEncoder,
    packet: &Packet,
    resend: &ResendRequest,
) -> crowd_gpu::Result<()> {
    let prepared = renderer.prepare(device, encoder, packet);
    if let Err(crowd_gpu::Error::OutOfStep { .. }) = prepared {
        resend.request();
    }
    prepared.map(drop)
}

/// A renderer of `config` from `cache` for `link`'s character, with the crowd's group on the GPU-driven path.
fn new_renderer(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    cache: &PipelineCache,
    config: &RendererConfig,
    link: &CrowdLink,
) -> crowd_gpu::Result<CrowdGpu> {
    let mut renderer = CrowdRenderer::new(device, cache, config)?;
    for (mesh, material) in link.asset.meshes.iter().zip(&link.asset.materials) {
        renderer.add_mesh(device, queue, mesh, material)?;
    }
    if link.path == RenderPath::GpuDriven {
        renderer.enable_gpu_driven(device, &link.group)?;
    }
    Ok(CrowdGpu {
        renderer,
        views: HashMap::new(),
        target: (config.color_format, config.sample_count),
        fed: false,
        warned: false,
    })
}

/// Prepares every crowd's view of the current camera into the camera's encoder (its camera and, on the GPU-driven
/// path, its cull pass), then records their draws into its main pass, after the opaque meshes.
pub(crate) fn draw_crowds(
    view: ViewQuery<(&ExtractedCamera, &ExtractedView, &ViewTarget, &ViewDepthStencilTexture)>,
    mut gpus: ResMut<CrowdGpus>,
    device: Res<RenderDevice>,
    mut ctx: RenderContext,
) {
    let view_entity = view.entity();
    if !gpus.0.values().any(|g| g.views.contains_key(&view_entity)) {
        return;
    }
    let (camera, extracted, target, depth) = view.into_inner();
    let frame = frame_camera(&extracted.world_from_view, extracted.clip_from_view);
    let encoder = ctx.command_encoder();
    let mut prepared = Vec::with_capacity(gpus.0.len());
    for (entity, gpu) in &mut gpus.0 {
        let Some(crowd_view) = gpu.views.get_mut(&view_entity) else {
            continue;
        };
        match gpu
            .renderer
            .prepare_view(device.wgpu_device(), encoder, crowd_view, ViewDesc::new(frame))
        {
            Ok(p) => prepared.push((&gpu.renderer, p)),
            Err(e) => error!("crowd {entity}: cannot prepare camera {view_entity}: {e}"),
        }
    }
    let color = [Some(target.get_color_attachment())];
    let desc = wgpu::RenderPassDescriptor {
        label: Some("crowd-bevy main pass"),
        color_attachments: &color,
        depth_stencil_attachment: Some(depth.get_attachment(StoreOp::Store)),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    };
    let mut pass = encoder.begin_render_pass(&desc);
    if let Some(vp) = &camera.viewport {
        pass.set_viewport(
            vp.physical_position.x as f32,
            vp.physical_position.y as f32,
            vp.physical_size.x as f32,
            vp.physical_size.y as f32,
            vp.depth.start,
            vp.depth.end,
        );
    }
    for (renderer, view) in &prepared {
        renderer.render_view(view, &mut pass);
    }
}

#[cfg(test)]
mod tests {
    use bevy::color::Color;
    use bevy::math::Vec3;
    use bevy::transform::components::Transform;
    use crowd_frame::{ClipId, CrowdFrame, Spawn};
    use crowd_gpu::headless::Gpu;

    use super::*;
    use crate::CrowdCharacter;
    use crate::crowd::{CrowdOptions, settings_for};

    /// Skips a test loudly without what it needs, and fails it on CI (`CI=true`).
    fn skip(what: &str) {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "{what}");
        eprintln!("SKIPPED: {what}");
    }

    #[test]
    fn a_renderer_out_of_step_asks_its_crowd_for_a_full_resend() {
        let Some(root) = std::env::var_os("CROWD_SAMPLE_ASSETS") else {
            return skip("CROWD_SAMPLE_ASSETS is not set");
        };
        let Some(gpu) = Gpu::open(None).expect("a device") else {
            return skip("no adapter: install Mesa's lavapipe (mesa-vulkan-drivers)");
        };
        let config = renderer_config(&gpu.adapter, &gpu.device, PROBE_TARGET);
        if RenderPath::for_config(&gpu.device, &config) != RenderPath::GpuDriven {
            return skip("the adapter has no GPU-driven path");
        }
        let path = std::path::Path::new(&root).join("gltf/Fox/Fox.glb");
        let bytes = std::fs::read(&path).expect("the Fox reads");
        let character = CrowdCharacter::from_gltf(&bytes, "Fox.glb", 0).expect("the Fox loads");
        let max_slots = CrowdRenderer::<skin_pack::PaletteEntry>::max_resident_slots(&gpu.device, &config);
        let settings = settings_for(
            &character.data,
            &CrowdOptions::default(),
            RenderPath::GpuDriven,
            Some(max_slots),
        );
        let mut crowd: CrowdFrame = CrowdFrame::new(character.character().clone(), settings).expect("the crowd");
        let eye = GlobalTransform::from(Transform::from_xyz(0.0, 200.0, 600.0).looking_at(Vec3::ZERO, Vec3::Y));
        let proj = glam::camera::rh::proj::directx::perspective_infinite_reverse(0.8, 1.6, 0.1);
        let camera = frame_camera(&eye, proj);
        let fox = crowd.add(&Spawn::at(Vec3::ZERO, ClipId(0))).expect("a Fox");
        crowd.step(0.02, &camera).expect("the first step");
        // The render world never prepares the crowd's first packet: its renderer is made after it.
        drop(crowd.exchange().begin_read().expect("the first packet"));
        let cache = PipelineCache::new(&gpu.device);
        let mut renderer = CrowdRenderer::for_crowd(&gpu.device, &gpu.queue, &cache, &config, &character.data, &crowd)
            .expect("the renderer");
        let resend = crowd.resend_requester();
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        crowd.set_position(fox, Vec3::X).expect("a live Fox");
        crowd.step(0.02, &camera).expect("the second step");
        {
            let packet = crowd.exchange().begin_read().expect("the second packet");
            assert!(!packet.resident().full, "the second packet holds changes only");
            let e = prepare_packet(&mut renderer, &gpu.device, &mut encoder, &packet, &resend)
                .expect_err("changes on top of a packet the renderer never had");
            assert!(matches!(e, crowd_gpu::Error::OutOfStep { .. }), "{e}");
        }
        crowd.step(0.02, &camera).expect("the third step");
        {
            let packet = crowd.exchange().begin_read().expect("the third packet");
            assert!(
                packet.resident().full,
                "the crowd resends every slot on the renderer's request"
            );
            prepare_packet(&mut renderer, &gpu.device, &mut encoder, &packet, &resend).expect("the resend applies");
        }
        gpu.queue.submit([encoder.finish()]);
    }

    #[test]
    fn the_sun_points_towards_the_light_with_its_colour_times_its_lux() {
        let light = DirectionalLight {
            color: Color::linear_rgb(1.0, 0.5, 0.25),
            illuminance: 2.0 * SUN_LUX_AT_ONE,
            ..Default::default()
        };
        // A light shining straight down: towards it is up.
        let t = GlobalTransform::from(Transform::default().looking_to(Vec3::NEG_Y, Vec3::Z));
        let l = lighting(&light, &t);
        let d = Vec3::from(l.sun_direction);
        assert!((d - Vec3::Y).length() < 1e-5, "{d}");
        assert_eq!(l.sun_color, [2.0, 1.0, 0.5]);
        assert_eq!(l.sky_color, Lighting::default().sky_color);
    }
}
