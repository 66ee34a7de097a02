//! The render world: crowds and the sun extracted from the main world, a crowd-gpu renderer per crowd prepared
//! with Bevy's device and queue, and the draws recorded into each 3D camera's main pass, after Bevy's opaque
//! meshes and against the same depth buffer.

use std::collections::HashMap;

use bevy::ecs::prelude::*;
use bevy::light::DirectionalLight;
use bevy::log::{error, warn};
use bevy::render::Extract;
use bevy::render::camera::ExtractedCamera;
use bevy::render::render_resource::StoreOp;
use bevy::render::renderer::{RenderContext, RenderDevice, RenderQueue, ViewQuery};
use bevy::render::view::{ExtractedView, Msaa, ViewDepthStencilTexture, ViewTarget};
use bevy::transform::components::GlobalTransform;
use crowd_gpu::{CrowdRenderer, CrowdView, Lighting, RenderPath, RendererConfig};

use crate::crowd::{Crowd, CrowdLink, frame_camera};

/// Bevy's main-pass depth format.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// The illuminance, in lux, that [`Lighting::sun_color`] of 1 stands for: Bevy's default directional light
/// (`light_consts::lux::AMBIENT_DAYLIGHT`).
pub const SUN_LUX_AT_ONE: f32 = 10_000.0;

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

/// Creates renderers for new crowds, applies each crowd's newest packet, and prepares each camera's view (its
/// frame uniform and, on the GPU-driven path, its cull pass, submitted before Bevy's passes).
pub(crate) fn prepare_crowds(
    mut gpus: ResMut<CrowdGpus>,
    crowds: Res<ExtractedCrowds>,
    sun: Res<ExtractedSun>,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
    views: Query<(Entity, &ExtractedView, &Msaa), With<ViewTarget>>,
) {
    let device_ref = device.wgpu_device();
    let queue_ref: &wgpu::Queue = &queue;
    gpus.0.retain(|e, _| crowds.0.iter().any(|(c, _)| c == e));
    let Some(first_view) = views.iter().next() else {
        return;
    };
    let first_target = (first_view.1.target_format, first_view.2.samples());
    for (entity, link) in &crowds.0 {
        if !gpus.0.contains_key(entity) {
            match new_renderer(device_ref, queue_ref, link, first_target) {
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
            Ok(Some(packet)) => match gpu.renderer.prepare(device_ref, queue_ref, &packet) {
                Ok(_) => gpu.fed = true,
                Err(e) => error!("crowd {entity}: the packet did not upload: {e}"),
            },
            Ok(None) => {}
            Err(e) => error!("crowd {entity}: cannot read its packet: {e}"),
        }
        if !gpu.fed {
            continue;
        }
        gpu.views.retain(|v, _| views.contains(*v));
        let mut encoder = device_ref.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("crowd-bevy cull"),
        });
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
                match gpu.renderer.create_view(device_ref, queue_ref) {
                    Ok(v) => {
                        gpu.views.insert(view_entity, v);
                    }
                    Err(e) => {
                        error!("crowd {entity}: cannot create a view: {e}");
                        continue;
                    }
                }
            }
            let camera = frame_camera(&view.world_from_view, view.clip_from_view);
            let crowd_view = gpu.views.get_mut(&view_entity).expect("inserted above");
            if let Err(e) = gpu
                .renderer
                .prepare_view(device_ref, queue_ref, &mut encoder, crowd_view, &camera)
            {
                error!("crowd {entity}: cannot prepare camera {view_entity}: {e}");
                gpu.views.remove(&view_entity);
            }
        }
        queue_ref.submit([encoder.finish()]);
    }
}

/// A renderer for `link`'s character drawing into `target` (colour format, samples) over Bevy's depth.
fn new_renderer(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    link: &CrowdLink,
    target: (wgpu::TextureFormat, u32),
) -> crowd_gpu::Result<CrowdGpu> {
    let mut config = RendererConfig::new(target.0, Some(DEPTH_FORMAT), device.limits());
    // Bevy's depth is reversed (1 near, 0 at infinity) and its meshes test GreaterEqual.
    config.depth_compare = wgpu::CompareFunction::GreaterEqual;
    config.sample_count = target.1;
    let mut renderer = CrowdRenderer::new(device, &config)?;
    for (mesh, material) in link.data.packed.iter().zip(&link.data.materials) {
        renderer.add_mesh(device, queue, mesh, material)?;
    }
    if link.path == RenderPath::GpuDriven {
        renderer.enable_gpu_driven(device, &link.group)?;
    }
    Ok(CrowdGpu {
        renderer,
        views: HashMap::new(),
        target,
        fed: false,
        warned: false,
    })
}

/// Records every crowd's draws for the current camera into its main pass, after the opaque meshes.
pub(crate) fn draw_crowds(
    view: ViewQuery<(&ExtractedCamera, &ViewTarget, &ViewDepthStencilTexture)>,
    gpus: Res<CrowdGpus>,
    mut ctx: RenderContext,
) {
    let view_entity = view.entity();
    if !gpus.0.values().any(|g| g.views.contains_key(&view_entity)) {
        return;
    }
    let (camera, target, depth) = view.into_inner();
    let color = [Some(target.get_color_attachment())];
    let desc = wgpu::RenderPassDescriptor {
        label: Some("crowd-bevy main pass"),
        color_attachments: &color,
        depth_stencil_attachment: Some(depth.get_attachment(StoreOp::Store)),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    };
    let mut pass = ctx.command_encoder().begin_render_pass(&desc);
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
    for gpu in gpus.0.values() {
        if let Some(v) = gpu.views.get(&view_entity) {
            gpu.renderer.render_view(v, &mut pass);
        }
    }
}

#[cfg(test)]
mod tests {
    use bevy::color::Color;
    use bevy::math::Vec3;
    use bevy::transform::components::Transform;

    use super::*;

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
