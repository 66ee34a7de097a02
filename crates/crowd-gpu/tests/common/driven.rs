//! The GPU-driven tests' scene: the default character's crowd on both paths, and a renderer for it.

use crowd_cull::Handle;
use crowd_frame::{Character, CharacterOptions, ClipId, CrowdFrame, FrameCamera, FrameSettings, Spawn};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, RenderPath, ViewDesc};
use crowd_mesh::{Material, PackedMesh, lod_thresholds};
use glam::{Quat, Vec3};

use super::images::{self, PrepareNow};
use std::sync::Arc;

/// The test images' size.
pub const SIZE: (u32, u32) = (320, 240);

/// A deterministic xorshift generator.
pub struct Rng(pub u64);

impl Rng {
    /// A value in [0, 1).
    pub fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// The character, its packed meshes, frame settings and spawns.
pub struct Scene {
    pub character: Arc<Character>,
    pub meshes: Vec<PackedMesh>,
    pub settings: FrameSettings,
    pub spawns: Vec<Spawn>,
}

/// `cols x rows` default characters with random clips, phases, speeds, tints, turns, scales and tilts.
pub fn scene(cols: usize, rows: usize) -> Scene {
    let model = images::default_character();
    let binding = model.bindings.iter().find(|b| b.skeleton == 0).expect("a skinned mesh");
    let skeleton = &model.skeletons[0];
    let meshes: Vec<PackedMesh> = model.meshes[binding.meshes.clone()]
        .iter()
        .map(|m| PackedMesh::new(m, skeleton.skin_joint_count()).expect("packs"))
        .collect();
    let character = Character::from_model(&model, 0, &CharacterOptions::default())
        .expect("a character")
        .with_lod_count(meshes[0].lods.len())
        .expect("LODs");
    let radius = character
        .clip_bounds()
        .iter()
        .map(|b| ((b.max - b.min) * 0.5).length())
        .fold(0.0, f32::max);
    let settings = FrameSettings {
        lod_thresholds: lod_thresholds(&meshes[0].lods, radius, SIZE.1 as f32, 0.5, 0.1),
        // Nothing is unique: both paths draw every instance from the pool.
        tier_thresholds: [50.0, 0.004, 0.001],
        ..FrameSettings::default()
    };
    let clips = character.clips().len();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut spawns = Vec::new();
    for i in 0..cols * rows {
        let (c, r) = ((i % cols) as f32, (i / cols) as f32);
        let tilt = if i % 5 == 0 {
            Quat::from_rotation_x(0.4 * (rng.next() - 0.5))
        } else {
            Quat::IDENTITY
        };
        spawns.push(Spawn {
            rotation: tilt * Quat::from_rotation_y(rng.next() * 6.0),
            scale: 0.8 + 0.4 * rng.next(),
            time: rng.next() * 4.0,
            speed: 0.8 + 0.4 * rng.next(),
            tint: Vec3::new(rng.next(), rng.next(), rng.next())
                .lerp(Vec3::ONE, 0.5)
                .extend(1.0),
            ..Spawn::at(
                Vec3::new((c - cols as f32 * 0.5) * 1.4, 0.0, -r * 1.6),
                ClipId((rng.next() * clips as f32) as u16 % clips as u16),
            )
        });
    }
    Scene {
        character: Arc::new(character),
        meshes,
        settings,
        spawns,
    }
}

/// A 50-degree camera for [`SIZE`].
pub fn camera(eye: Vec3, target: Vec3) -> FrameCamera {
    FrameCamera::perspective(
        eye,
        target,
        Vec3::Y,
        50f32.to_radians(),
        SIZE.0 as f32 / SIZE.1 as f32,
        0.2,
        200.0,
    )
}

/// A renderer with the scene's meshes, GPU-driven for the crowd's group when `gpu_driven`.
pub fn renderer(gpu: &Gpu, scene: &Scene, crowd: &CrowdFrame, gpu_driven: bool) -> CrowdRenderer {
    let mut r = images::renderer(gpu, None);
    let materials = vec![Material::default(); scene.meshes.len()];
    images::add_meshes(gpu, &mut r, &scene.meshes, &materials);
    if gpu_driven {
        let desc = crowd.store().group_desc(crowd.group()).expect("the group");
        r.enable_gpu_driven(&gpu.device, desc).expect("GPU-driven");
        assert_eq!(r.path(), RenderPath::GpuDriven);
    }
    r
}

/// A crowd of the scene's spawns, on the GPU-driven path when `gpu_driven`.
pub fn crowd_of(scene: &Scene, gpu_driven: bool) -> (CrowdFrame, Vec<Handle>) {
    let settings = FrameSettings {
        gpu_driven,
        ..scene.settings.clone()
    };
    let mut crowd = CrowdFrame::new(scene.character.clone(), settings).expect("a crowd");
    let mut handles = vec![Handle::default(); scene.spawns.len()];
    crowd.add_many(&scene.spawns, &mut handles).expect("adds");
    (crowd, handles)
}

/// Steps `crowd` `frames` times at 30 Hz and prepares every packet in `r` (the GPU-driven path needs every packet's
/// resident changes); calls `between` with the frame's index before each step.
pub fn run_frames(
    crowd: &mut CrowdFrame,
    r: &mut CrowdRenderer,
    gpu: &Gpu,
    cam: &FrameCamera,
    frames: usize,
    mut between: impl FnMut(usize, &mut CrowdFrame),
) {
    let exchange = crowd.exchange().clone();
    for f in 0..frames {
        between(f, crowd);
        crowd.step(1.0 / 30.0, cam).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        r.prepare_now(gpu, &packet).expect("prepares");
    }
}

/// The image of `r` from `cam` through a new view (culled on the GPU on the GPU-driven path).
pub fn view_image(gpu: &Gpu, r: &CrowdRenderer, cam: &FrameCamera, target: &OffscreenTarget) -> Vec<u8> {
    let mut view = r.create_view(&gpu.device).expect("a view");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let prepared = r
        .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(*cam))
        .expect("the view prepares");
    target
        .render_after(gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
            r.render_view(&prepared, pass)
        })
        .expect("renders")
}

/// A GPU-driven crowd of `scene` with `tier_thresholds`, and its renderer.
pub fn tiered_crowd(gpu: &Gpu, scene: &Scene, tier_thresholds: [f32; 3]) -> (CrowdFrame, Vec<Handle>, CrowdRenderer) {
    let settings = FrameSettings {
        tier_thresholds,
        ..scene.settings.clone()
    };
    crowd_with(gpu, scene, settings)
}

/// A GPU-driven crowd of `scene` with `settings` (`gpu_driven` set), and its renderer.
pub fn crowd_with(gpu: &Gpu, scene: &Scene, settings: FrameSettings) -> (CrowdFrame, Vec<Handle>, CrowdRenderer) {
    let settings = FrameSettings {
        gpu_driven: true,
        ..settings
    };
    let mut crowd = CrowdFrame::new(scene.character.clone(), settings).expect("a crowd");
    let mut handles = vec![Handle::default(); scene.spawns.len()];
    crowd.add_many(&scene.spawns, &mut handles).expect("adds");
    let r = renderer(gpu, scene, &crowd, true);
    (crowd, handles, r)
}
