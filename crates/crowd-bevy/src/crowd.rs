//! [`Crowd`]: the component that owns one crowd-frame crowd, and the main-world systems that build and step it.

use std::sync::Arc;

use bevy::asset::{Assets, Handle};
use bevy::camera::{Camera, Camera3d};
use bevy::ecs::prelude::*;
use bevy::log::error;
use bevy::render::renderer::{RenderAdapter, RenderDevice};
use bevy::time::Time;
use bevy::transform::components::GlobalTransform;
use crowd_cull::{GroupDesc, Handle as InstanceHandle};
use crowd_frame::{ClipId, CrowdFrame, FrameCamera, FrameSettings, Packet, ResendRequest, Spawn};
use crowd_gpu::{CrowdAsset, CrowdRenderer, RenderPath};
use glam::{Quat, Vec3, Vec4};
use skin_pack::{FrameExchange, Overrun, PaletteEntry};

use crate::asset::CrowdCharacter;
use crate::error::Error;
use crate::render;

/// How a [`Crowd`] is built once its character has loaded.
#[derive(Clone, Debug, Default)]
pub struct CrowdOptions {
    /// The frame settings. `None` (the default): crowd-frame's defaults with LOD thresholds for half a pixel of
    /// error at 1080 lines, every instance in the pose pool, three packets dropping the oldest (so that the main
    /// world never waits for the render world), and the GPU-driven path where the render device allows it. Given
    /// settings are taken as they are but for `packets` and `overrun`, which the plugin sets as above,
    /// `gpu_driven`, which [`CrowdOptions::path`] decides, and on the GPU-driven path `max_slots`, which the plugin
    /// lowers to what the crowd's renderer holds on Bevy's render device (`CrowdRenderer::max_resident_slots`).
    pub settings: Option<FrameSettings>,
    /// The render path. `None` (the default): [`RenderPath::for_config`] of Bevy's render device and adapter, and
    /// CPU-culled in an app without them.
    pub path: Option<RenderPath>,
}

/// One crowd of one character, drawn by every 3D camera: the game adds, moves, removes and animates instances
/// with crowd-frame's calls, and the plugin steps it once per frame (in `PostUpdate`, after transforms and cameras)
/// and hands its packet to the render world.
///
/// No entity exists per instance. Until the character has loaded, [`Crowd::is_ready`] is false and the calls
/// return [`Error::NotReady`]; a game spawns its instances in a system that waits for it.
#[derive(Component)]
pub struct Crowd {
    character: Handle<CrowdCharacter>,
    options: CrowdOptions,
    state: Option<Ready>,
}

/// A crowd whose character has loaded.
pub(crate) struct Ready {
    pub(crate) frame: CrowdFrame,
    /// The character's asset: the frame shares its character, the renderer uploads its meshes.
    pub(crate) asset: Arc<CrowdAsset>,
    pub(crate) group: Arc<GroupDesc>,
    pub(crate) path: RenderPath,
}

impl Crowd {
    /// A crowd of `character` with the default options.
    pub fn new(character: Handle<CrowdCharacter>) -> Self {
        Self::with_options(character, CrowdOptions::default())
    }

    /// A crowd of `character` built with `options`.
    pub fn with_options(character: Handle<CrowdCharacter>, options: CrowdOptions) -> Self {
        Self {
            character,
            options,
            state: None,
        }
    }

    /// The character's handle.
    pub fn character(&self) -> &Handle<CrowdCharacter> {
        &self.character
    }

    /// Whether the character has loaded and the crowd takes calls.
    pub fn is_ready(&self) -> bool {
        self.state.is_some()
    }

    /// The render path the crowd was built for, once ready.
    pub fn path(&self) -> Option<RenderPath> {
        self.state.as_ref().map(|s| s.path)
    }

    /// The crowd-frame crowd, once ready: its store, stats and every read-only call.
    pub fn frame(&self) -> Option<&CrowdFrame> {
        self.state.as_ref().map(|s| &s.frame)
    }

    /// The crowd-frame crowd, once ready, for calls this type does not forward. Do not call its `step`: the
    /// plugin steps it.
    pub fn frame_mut(&mut self) -> Option<&mut CrowdFrame> {
        self.state.as_mut().map(|s| &mut s.frame)
    }

    pub(crate) fn ready(&self) -> Option<&Ready> {
        self.state.as_ref()
    }

    fn frame_or_err(&mut self) -> Result<&mut CrowdFrame, Error> {
        self.frame_mut().ok_or(Error::NotReady)
    }

    /// Live instances (0 until ready).
    pub fn len(&self) -> usize {
        self.frame().map_or(0, CrowdFrame::len)
    }

    /// True when the crowd has no instance.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `CrowdFrame::add`.
    ///
    /// # Errors
    ///
    /// [`Error::NotReady`], or crowd-frame's error for the spawn (a clip out of range, a bad scale...).
    pub fn add(&mut self, spawn: &Spawn) -> Result<InstanceHandle, Error> {
        Ok(self.frame_or_err()?.add(spawn)?)
    }

    /// `CrowdFrame::add_many`: `handles` must be as long as `spawns`.
    ///
    /// # Errors
    ///
    /// As [`Crowd::add`]; nothing is added on error.
    pub fn add_many(&mut self, spawns: &[Spawn], handles: &mut [InstanceHandle]) -> Result<(), Error> {
        Ok(self.frame_or_err()?.add_many(spawns, handles)?)
    }

    /// `CrowdFrame::remove`.
    ///
    /// # Errors
    ///
    /// [`Error::NotReady`], or crowd-frame's error for a stale handle.
    pub fn remove(&mut self, handle: InstanceHandle) -> Result<(), Error> {
        Ok(self.frame_or_err()?.remove(handle)?)
    }

    /// `CrowdFrame::set_position`.
    ///
    /// # Errors
    ///
    /// [`Error::NotReady`], or crowd-frame's error for a stale handle or a position that is not finite.
    pub fn set_position(&mut self, handle: InstanceHandle, position: Vec3) -> Result<(), Error> {
        Ok(self.frame_or_err()?.set_position(handle, position)?)
    }

    /// `CrowdFrame::set_positions`, in parallel.
    ///
    /// # Errors
    ///
    /// As [`Crowd::set_position`].
    pub fn set_positions(&mut self, handles: &[InstanceHandle], positions: &[Vec3]) -> Result<(), Error> {
        Ok(self.frame_or_err()?.set_positions(handles, positions)?)
    }

    /// `CrowdFrame::set_transform`.
    ///
    /// # Errors
    ///
    /// As [`Crowd::set_position`], and for a rotation that is not of unit length.
    pub fn set_transform(&mut self, handle: InstanceHandle, position: Vec3, rotation: Quat) -> Result<(), Error> {
        Ok(self.frame_or_err()?.set_transform(handle, position, rotation)?)
    }

    /// `CrowdFrame::set_tint`.
    ///
    /// # Errors
    ///
    /// [`Error::NotReady`], or crowd-frame's error for a stale handle or a tint outside `[0, 1]`.
    pub fn set_tint(&mut self, handle: InstanceHandle, tint: Vec4) -> Result<(), Error> {
        Ok(self.frame_or_err()?.set_tint(handle, tint)?)
    }

    /// `CrowdFrame::set_speed`.
    ///
    /// # Errors
    ///
    /// [`Error::NotReady`], or crowd-frame's error for a stale handle or a speed that is not finite.
    pub fn set_speed(&mut self, handle: InstanceHandle, speed: f32) -> Result<(), Error> {
        Ok(self.frame_or_err()?.set_speed(handle, speed)?)
    }

    /// `CrowdFrame::play`: crossfade to `clip` over `fade` seconds.
    ///
    /// # Errors
    ///
    /// [`Error::NotReady`], or crowd-frame's error for a stale handle, a clip out of range or a bad fade.
    pub fn play(&mut self, handle: InstanceHandle, clip: ClipId, fade: f32) -> Result<(), Error> {
        Ok(self.frame_or_err()?.play(handle, clip, fade)?)
    }
}

impl std::fmt::Debug for Crowd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Crowd")
            .field("character", &self.character.id())
            .field("ready", &self.is_ready())
            .field("instances", &self.len())
            .finish()
    }
}

/// The frame settings of a crowd of `asset` on `path`, from the options; `max_slots` is the most slots the
/// crowd's renderer holds on the GPU-driven path (`None` in an app without a render device).
pub(crate) fn settings_for(
    asset: &CrowdAsset,
    options: &CrowdOptions,
    path: RenderPath,
    max_slots: Option<usize>,
) -> FrameSettings {
    let mut settings = options.settings.clone().unwrap_or_else(|| FrameSettings {
        // Everyone pooled: no baked tiers without a bake, and the pool is shared by all.
        tier_thresholds: [50.0, 1e-6, 1e-7],
        ..asset.frame_settings()
    });
    settings.packets = 3;
    settings.overrun = Overrun::DropOldest;
    settings.gpu_driven = path == RenderPath::GpuDriven;
    if settings.gpu_driven
        && let Some(max) = max_slots
    {
        settings.max_slots = settings.max_slots.min(max);
    }
    settings
}

/// Builds each crowd whose character has loaded (once), for the path and the resident slot limit of Bevy's
/// render device.
pub(crate) fn build_crowds(
    mut crowds: Query<(Entity, &mut Crowd)>,
    characters: Res<Assets<CrowdCharacter>>,
    device: Option<Res<RenderDevice>>,
    adapter: Option<Res<RenderAdapter>>,
) {
    let device = device.as_ref().map(|d| d.wgpu_device());
    // The path and the slot limit depend on the device's limits and the adapter's flags, not on the formats.
    let config = device
        .zip(adapter.as_ref())
        .map(|(d, a)| render::renderer_config(a, d, render::PROBE_TARGET));
    for (entity, mut crowd) in &mut crowds {
        if crowd.state.is_some() {
            continue;
        }
        let Some(character) = characters.get(&crowd.character) else {
            continue;
        };
        let asset = character.data.clone();
        let path = crowd.options.path.unwrap_or_else(|| match device.zip(config.as_ref()) {
            Some((d, c)) => RenderPath::for_config(d, c),
            None => RenderPath::CpuCulled,
        });
        let max_slots = device
            .zip(config.as_ref())
            .map(|(d, c)| CrowdRenderer::<PaletteEntry>::max_resident_slots(d, c));
        let settings = settings_for(&asset, &crowd.options, path, max_slots);
        let built = CrowdFrame::new(asset.character.clone(), settings).and_then(|frame| {
            let group = frame.store().group_desc(frame.group())?.clone();
            Ok((frame, group))
        });
        match built {
            Ok((frame, group)) => {
                crowd.state = Some(Ready {
                    frame,
                    asset,
                    group: Arc::new(group),
                    path,
                });
            }
            Err(e) => {
                error!("crowd {entity}: cannot build the crowd: {e}");
                // Do not retry every frame: forget the character so that the crowd stays empty.
                crowd.character = Handle::default();
            }
        }
    }
}

/// The camera crowds step with (cull, LOD and tiers): the active 3D camera of lowest order, found each frame; an
/// app without one sets it itself.
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq)]
pub struct CrowdCamera(pub Option<FrameCamera>);

/// Finds [`CrowdCamera`]: the active 3D camera of lowest order, as crowd-frame's camera. An app without an active
/// 3D camera (a server, a test) keeps the camera it set itself.
pub(crate) fn find_camera(cameras: Query<(&Camera, &GlobalTransform), With<Camera3d>>, mut out: ResMut<CrowdCamera>) {
    let best = cameras
        .iter()
        .filter(|(c, _)| c.is_active)
        .min_by_key(|(c, _)| c.order)
        .map(|(c, t)| frame_camera(t, c.clip_from_view()));
    if best.is_some() {
        out.0 = best;
    }
}

/// crowd-frame's camera for a Bevy view at `world_from_view` with `clip_from_view` (Bevy's reversed-Z projection).
pub fn frame_camera(world_from_view: &GlobalTransform, clip_from_view: glam::Mat4) -> FrameCamera {
    let world = world_from_view.to_matrix();
    FrameCamera {
        view: world.inverse(),
        proj: clip_from_view,
        eye: world.w_axis.truncate(),
    }
}

/// Steps every ready crowd with the frame's `dt` and [`CrowdCamera`]; errors are logged, never panicked on.
pub(crate) fn step_crowds(mut crowds: Query<(Entity, &mut Crowd)>, time: Res<Time>, camera: Res<CrowdCamera>) {
    let Some(camera) = camera.0 else {
        return;
    };
    let dt = time.delta_secs();
    for (entity, mut crowd) in &mut crowds {
        if let Some(ready) = crowd.state.as_mut()
            && let Err(e) = ready.frame.step(dt, &camera)
        {
            error!("crowd {entity}: the frame step failed: {e}");
        }
    }
}

/// What the render world keeps of a crowd: shared handles only, nothing per instance.
#[derive(Clone)]
pub(crate) struct CrowdLink {
    pub(crate) exchange: Arc<FrameExchange<Packet>>,
    pub(crate) asset: Arc<CrowdAsset>,
    pub(crate) group: Arc<GroupDesc>,
    pub(crate) path: RenderPath,
    /// Asks the crowd for a full resend when its renderer is out of step with the packets.
    pub(crate) resend: ResendRequest,
}

impl Ready {
    pub(crate) fn link(&self) -> CrowdLink {
        CrowdLink {
            exchange: self.frame.exchange().clone(),
            asset: self.asset.clone(),
            group: self.group.clone(),
            path: self.path,
            resend: self.frame.resend_requester(),
        }
    }
}
