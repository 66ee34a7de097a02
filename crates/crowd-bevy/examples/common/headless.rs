//! Bevy frames without a window, shared by the examples and the tests (each includes this file with `#[path]`): an
//! app with Bevy's default plugins but no window, a 3D camera that renders into an image, updates run by hand,
//! and the image read back; and the examples' ground and sun.

#![allow(dead_code, reason = "each includer uses part of it")]

use bevy::app::{App, PluginGroup, PluginGroupBuilder, PluginsState};
use bevy::asset::{AssetPlugin, Assets, Handle, UnapprovedPathMode};
use bevy::image::Image;
use bevy::render::RenderApp;
use bevy::render::RenderPlugin;
use bevy::render::render_asset::RenderAssets;
use bevy::render::render_resource::{TextureFormat, TextureUsages};
use bevy::render::renderer::{RenderDevice, RenderQueue};
use bevy::render::settings::{Backends, WgpuSettings};
use bevy::render::texture::GpuImage;
use bevy::window::{ExitCondition, WindowPlugin};

/// Bevy's default plugins for frames without a window: no primary window, no winit, Vulkan, pipelines compiled
/// before the frame that needs them, and assets read from `asset_root` (absolute paths allowed).
pub fn plugins(asset_root: &str) -> PluginGroupBuilder {
    bevy::DefaultPlugins
        .build()
        .set(WindowPlugin {
            primary_window: None,
            exit_condition: ExitCondition::DontExit,
            ..Default::default()
        })
        .set(RenderPlugin {
            render_creation: WgpuSettings {
                backends: Some(Backends::VULKAN),
                ..Default::default()
            }
            .into(),
            synchronous_pipeline_compilation: true,
            ..Default::default()
        })
        .set(asset_plugin(asset_root))
        .disable::<bevy::winit::WinitPlugin>()
        // Each update then renders its own frame, so that a read after it sees that frame.
        .disable::<bevy::render::pipelined_rendering::PipelinedRenderingPlugin>()
}

/// Bevy's default plugins for a window, reading assets from `asset_root`.
pub fn window_plugins(asset_root: &str) -> PluginGroupBuilder {
    bevy::DefaultPlugins.build().set(asset_plugin(asset_root))
}

/// Bevy's asset plugin reading from `asset_root` (absolute paths allowed).
pub fn asset_plugin(asset_root: &str) -> AssetPlugin {
    AssetPlugin {
        file_path: asset_root.to_owned(),
        unapproved_path_mode: UnapprovedPathMode::Allow,
        ..Default::default()
    }
}

/// Bevy's minimal plugins (no rendering) with assets from `asset_root`.
pub fn minimal_plugins(asset_root: &str) -> (bevy::MinimalPlugins, AssetPlugin) {
    (bevy::MinimalPlugins, asset_plugin(asset_root))
}

/// The shared sample assets (`CROWD_SAMPLE_ASSETS`); without them, a test fails when `CI=true` and otherwise
/// prints a loud skip and gets `None`.
pub fn sample_assets() -> Option<std::path::PathBuf> {
    match std::env::var_os("CROWD_SAMPLE_ASSETS") {
        Some(root) => Some(root.into()),
        None => {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "CROWD_SAMPLE_ASSETS is not set"
            );
            eprintln!("SKIPPED: set CROWD_SAMPLE_ASSETS to the shared sample assets");
            None
        }
    }
}

/// A green ground plane of 1 × 1 units (scale it) and Bevy's default sun, low from the front left; returns the
/// ground.
pub fn ground_and_sun(world: &mut bevy::ecs::world::World) -> bevy::ecs::entity::Entity {
    use bevy::prelude::*;
    let ground = world
        .resource_mut::<Assets<Mesh>>()
        .add(Plane3d::default().mesh().size(1.0, 1.0));
    let green = world
        .resource_mut::<Assets<StandardMaterial>>()
        .add(Color::srgb(0.3, 0.45, 0.25));
    world.spawn((
        DirectionalLight::default(),
        Transform::default().looking_to(Vec3::new(0.4, -0.8, -0.5), Vec3::Y),
    ));
    world.spawn((Mesh3d(ground), MeshMaterial3d(green))).id()
}

/// Whether a display server is there to open a window on.
pub fn has_display() -> bool {
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Whether wgpu finds a Vulkan adapter (Bevy panics without one).
pub fn has_adapter() -> bool {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle_from_env()
    });
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())).is_ok()
}

/// Finishes building `app` as Bevy's runners do, so that `app.update()` can be called by hand.
pub fn finish(app: &mut App) {
    while app.plugins_state() == PluginsState::Adding {
        bevy::tasks::tick_global_task_pools_on_main_thread();
    }
    app.finish();
    app.cleanup();
}

/// An RGBA8 sRGB image of `width × height` pixels that a camera renders into and that reads back.
pub fn image_target(images: &mut Assets<Image>, width: u32, height: u32) -> Handle<Image> {
    let mut image = Image::new_target_texture(width, height, TextureFormat::Rgba8UnormSrgb, None);
    image.texture_descriptor.usage |= TextureUsages::COPY_SRC;
    images.add(image)
}

/// The pixels of `image` as the last update rendered them: tightly packed RGBA8 rows, top row first.
pub fn read_image(app: &mut App, image: &Handle<Image>) -> anyhow::Result<Vec<u8>> {
    let world = app.sub_app_mut(RenderApp).world();
    let gpu_images = world.resource::<RenderAssets<GpuImage>>();
    let gpu_image = gpu_images
        .get(image)
        .ok_or_else(|| anyhow::anyhow!("the image target is not on the GPU yet"))?;
    let device = world.resource::<RenderDevice>();
    let queue = world.resource::<RenderQueue>();
    Ok(crowd_gpu::headless::read_texture_rgba8(
        device.wgpu_device(),
        queue,
        &gpu_image.texture,
    )?)
}

/// Writes tightly packed RGBA8 rows as a PNG file.
pub fn save_png(path: &std::path::Path, pixels: Vec<u8>, width: u32, height: u32) -> anyhow::Result<()> {
    image::RgbaImage::from_raw(width, height, pixels)
        .ok_or_else(|| anyhow::anyhow!("the pixels do not fill {width} x {height}"))?
        .save(path)?;
    Ok(())
}
