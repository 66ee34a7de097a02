//! A Bevy 0.20 plugin that draws crowd-frame crowds with crowd-gpu inside Bevy's 3D pass.
//!
//! - [`CrowdPlugin`] registers the [`CrowdCharacter`] asset and its loader, steps every [`Crowd`] in the main world
//!   (`PostUpdate`, after transforms and cameras), extracts each crowd's packet exchange and the sun to the render
//!   world (shared handles: nothing is copied per instance), and draws each crowd in every 3D camera's main pass,
//!   after Bevy's opaque meshes and against the same depth buffer, with Bevy's `RenderDevice` and `RenderQueue`.
//! - The render world keeps one crowd-gpu pipeline cache per render device ([`render::CrowdPipelineCache`]), which
//!   every crowd's renderer shares. Each frame it prepares every crowd's newest packet into one encoder, submitted
//!   before Bevy's passes, and each camera's view of each crowd (its camera and, on the GPU-driven path, its cull
//!   pass) into that camera's encoder just before the crowd's draws. A renderer out of step with its crowd's
//!   packets asks the crowd for a full resend and draws what it holds until the resend arrives.
//! - A game loads a character with `AssetServer::load::<CrowdCharacter>("Fox.glb")`, spawns an entity with
//!   [`Crowd::new`], and once [`Crowd::is_ready`] adds, moves, removes and animates instances with crowd-frame's
//!   calls ([`Crowd::add`], [`Crowd::set_position`], [`Crowd::play`]...). No entity exists per instance.
//! - The crowd follows the brightest `DirectionalLight` (direction and colour; see [`render::lighting`]).
//!
//! Add the plugin after Bevy's `DefaultPlugins`: Bevy's core 3D plugin replaces the camera schedule the draws are
//! added to. Cameras must share one colour format and MSAA sample count (the first camera's); a crowd skips other
//! cameras with a warning. On the GPU-driven path each camera culls the crowd on the GPU; on the CPU-culled path
//! (adapters without the storage buffers it needs) the crowd is culled, tiered and LOD-ed for [`CrowdCamera`] only,
//! and other cameras draw that selection.
//!
//! Not followed yet: Bevy's shadow maps (the crowd neither casts into them nor receives them), its tonemapping
//! and post-processing of non-HDR cameras (the crowd writes linear colour; give the camera `Tonemapping::None` for
//! matching colours), its ambient light and environment maps (the crowd keeps crowd-gpu's sky and ground terms).

mod asset;
mod crowd;
mod error;
pub mod render;

use bevy::app::{App, Plugin, PostUpdate};
use bevy::asset::AssetApp;
use bevy::camera::CameraUpdateSystems;
use bevy::core_pipeline::Core3d;
use bevy::core_pipeline::Core3dSystems;
use bevy::core_pipeline::core_3d::{main_opaque_pass_3d, main_transparent_pass_3d};
use bevy::ecs::prelude::*;
use bevy::render::{ExtractSchedule, Render, RenderApp, RenderStartup, RenderSystems};
use bevy::transform::TransformSystems;

pub use asset::{CrowdCharacter, CrowdCharacterLoader, CrowdCharacterSettings};
pub use crowd::{Crowd, CrowdCamera, CrowdOptions, frame_camera};
pub use crowd_frame::{ClipId, Spawn};
pub use crowd_gpu::RenderPath;
pub use error::Error;

/// The system set in `PostUpdate` in which crowds are built and stepped.
#[derive(SystemSet, Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CrowdStep;

/// Draws [`Crowd`]s in Bevy (see the crate docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct CrowdPlugin;

impl Plugin for CrowdPlugin {
    fn build(&self, app: &mut App) {
        app.init_asset::<CrowdCharacter>()
            .init_asset_loader::<CrowdCharacterLoader>()
            .init_resource::<CrowdCamera>()
            .configure_sets(
                PostUpdate,
                CrowdStep.after(TransformSystems::Propagate).after(CameraUpdateSystems),
            )
            .add_systems(
                PostUpdate,
                (crowd::build_crowds, crowd::find_camera, crowd::step_crowds)
                    .chain()
                    .in_set(CrowdStep),
            );
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .init_resource::<render::ExtractedCrowds>()
            .init_resource::<render::ExtractedSun>()
            .init_resource::<render::CrowdGpus>()
            .add_systems(RenderStartup, render::init_device)
            .add_systems(ExtractSchedule, render::extract_crowds)
            .add_systems(Render, render::prepare_crowds.in_set(RenderSystems::PrepareResources))
            .add_systems(
                Core3d,
                render::draw_crowds
                    .after(main_opaque_pass_3d)
                    .before(main_transparent_pass_3d)
                    .in_set(Core3dSystems::MainPass),
            );
    }
}
