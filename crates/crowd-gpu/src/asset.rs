//! [`CrowdAsset`]: what a crowd of one character needs, made from a model in one call (the crowd-frame character,
//! the packed meshes with their LODs, the materials, the LOD thresholds and the culling radius), and the calls that
//! make a renderer for a crowd of it ([`CrowdRenderer::for_crowd`]) and give it a bake ([`CrowdRenderer::set_bake`]).

use std::sync::Arc;

use anim_pose::Model;
use bake_format::Bake;
use crowd_frame::{Character, CharacterOptions, CrowdFrame, FrameSettings};
use crowd_mesh::{Material, PackedMesh};
use skin_pack::PaletteFormat;

use crate::pipeline_cache::PipelineCache;
use crate::renderer::{CrowdRenderer, RenderPath, RendererConfig};
use crate::{Error, Result};

/// How [`CrowdAsset::from_model`] prepares a model.
#[derive(Clone, Copy, Debug)]
pub struct AssetOptions {
    /// The model's skeleton to animate: its bound meshes are the character's.
    pub skeleton: usize,
    /// The character's clips and pool slots.
    pub character: CharacterOptions,
    /// The viewport height the LOD thresholds are made for, in pixels.
    pub viewport_px: f32,
    /// The largest error a LOD may show, in pixels.
    pub max_error_px: f32,
    /// The tier and LOD hysteresis of the crowd (`FrameSettings::hysteresis`).
    pub hysteresis: f32,
}

impl Default for AssetOptions {
    /// Skeleton 0, default clips and slots, LODs within half a pixel on a 1080-pixel viewport, hysteresis 0.1.
    fn default() -> Self {
        Self {
            skeleton: 0,
            character: CharacterOptions::default(),
            viewport_px: 1080.0,
            max_error_px: 0.5,
            hysteresis: FrameSettings::default().hysteresis,
        }
    }
}

/// A character ready for crowds: its crowd-frame character (shared by every crowd of it), its meshes packed with
/// their LOD levels and their materials (what a renderer draws), the screen-size thresholds between the LODs, and the
/// largest clip's culling radius.
#[derive(Debug)]
pub struct CrowdAsset {
    /// The crowd-frame character, shared by every crowd and renderer of it.
    pub character: Arc<Character>,
    /// The skeleton's bound meshes, packed with their LOD levels.
    pub meshes: Vec<PackedMesh>,
    /// Their materials, one per mesh.
    pub materials: Vec<Material>,
    /// The model's mesh index of each packed mesh (a bake's meshes are found by it).
    pub model_meshes: Vec<usize>,
    /// The screen-size thresholds between the LODs (`FrameSettings::lod_thresholds`).
    pub lod_thresholds: Vec<f32>,
    /// The largest clip's culling radius: half the diagonal of its animated bounds.
    pub radius: f32,
    hysteresis: f32,
}

impl CrowdAsset {
    /// Prepares `model`'s skeleton `options.skeleton` for crowds: its character, its bound meshes packed with their
    /// LODs, their materials, and the LOD thresholds that keep each level within `options.max_error_px` pixels.
    ///
    /// # Errors
    ///
    /// [`Error::NoMeshes`] when the skeleton has no bound mesh; [`Error::Frame`] when it cannot make a character (no
    /// skin, no clip, a clip it refuses); [`Error::Mesh`] when a mesh cannot be packed or its material's texture cannot be decoded.
    pub fn from_model(model: &Model, options: &AssetOptions) -> Result<Self> {
        let binding = model
            .bindings
            .iter()
            .find(|b| b.skeleton == options.skeleton)
            .ok_or(Error::NoMeshes {
                skeleton: options.skeleton,
            })?;
        let skeleton = model.skeletons.get(options.skeleton).ok_or(Error::NoMeshes {
            skeleton: options.skeleton,
        })?;
        let model_meshes: Vec<usize> = binding.meshes.clone().collect();
        let meshes = model_meshes
            .iter()
            .map(|&m| PackedMesh::new(&model.meshes[m], skeleton.skin_joint_count()))
            .collect::<crowd_mesh::Result<Vec<_>>>()?;
        let materials = model_meshes
            .iter()
            .map(|&m| Material::of_mesh(model, m))
            .collect::<crowd_mesh::Result<Vec<_>>>()?;
        let lods = meshes.iter().map(|m| m.lods.len()).min().unwrap_or(1);
        let character = Character::from_model(model, options.skeleton, &options.character)?.with_lod_count(lods)?;
        let radius = character
            .clip_bounds()
            .iter()
            .map(|b| ((b.max - b.min) * 0.5).length())
            .fold(0.0, f32::max);
        let lod_thresholds = crowd_mesh::lod_thresholds(
            &meshes[0].lods[..lods],
            radius,
            options.viewport_px,
            options.max_error_px,
            options.hysteresis,
        );
        Ok(Self {
            character: Arc::new(character),
            meshes,
            materials,
            model_meshes,
            lod_thresholds,
            radius,
            hysteresis: options.hysteresis,
        })
    }

    /// Frame settings for crowds of the asset: its LOD thresholds and hysteresis, and everything else default (the
    /// CPU-culled path).
    pub fn frame_settings(&self) -> FrameSettings {
        FrameSettings {
            lod_thresholds: self.lod_thresholds.clone(),
            hysteresis: self.hysteresis,
            ..FrameSettings::default()
        }
    }

    /// [`CrowdAsset::frame_settings`] for crowds drawn by renderers of `config` on `device`: the GPU-driven path
    /// where [`RenderPath::for_config`] allows it, with `max_slots` lowered to what such a renderer holds
    /// ([`CrowdRenderer::max_resident_slots`]), so that adds past it are refused where they are made.
    pub fn frame_settings_for(&self, device: &wgpu::Device, config: &RendererConfig) -> FrameSettings {
        let mut settings = self.frame_settings();
        if RenderPath::for_config(device, config) == RenderPath::GpuDriven {
            settings.gpu_driven = true;
            let max = CrowdRenderer::<skin_pack::PaletteEntry>::max_resident_slots(device, config);
            settings.max_slots = settings.max_slots.min(max);
        }
        settings
    }
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// A renderer that draws `crowd`, a crowd of `asset`: [`CrowdRenderer::new`], every mesh of the asset added,
    /// and on a crowd with `FrameSettings::gpu_driven` the GPU-driven path enabled with the crowd's own draw group.
    ///
    /// # Errors
    ///
    /// As [`CrowdRenderer::new`], [`CrowdRenderer::add_mesh`] and [`CrowdRenderer::enable_gpu_driven`];
    /// [`Error::Limit`] when the crowd may use more slots (`FrameSettings::max_slots`) than the renderer's resident
    /// buffer holds ([`CrowdRenderer::max_resident_slots`]): set the crowd's limit to it.
    pub fn for_crowd(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        cache: &PipelineCache,
        config: &RendererConfig,
        asset: &CrowdAsset,
        crowd: &CrowdFrame<F>,
    ) -> Result<Self> {
        let mut renderer = Self::new(device, cache, config)?;
        for (mesh, material) in asset.meshes.iter().zip(&asset.materials) {
            renderer.add_mesh(device, queue, mesh, material)?;
        }
        if crowd.settings().gpu_driven {
            let max = Self::max_resident_slots(device, config);
            if crowd.settings().max_slots > max {
                return Err(Error::Limit {
                    buffer: "resident instances (FrameSettings::max_slots)",
                    bytes: crowd.settings().max_slots as u64 * crowd_frame::RESIDENT_INSTANCE_SIZE as u64,
                    limit: "max_storage_buffer_binding_size",
                    max: max as u64 * crowd_frame::RESIDENT_INSTANCE_SIZE as u64,
                });
            }
            renderer.enable_gpu_driven(device, crowd.store().group_desc(crowd.group())?)?;
        }
        Ok(renderer)
    }

    /// Draws the baked and VAT tiers from `bake` (GPU-driven path): its bone animation ([`CrowdRenderer::set_bat`]),
    /// its vertex animation ([`CrowdRenderer::set_vat`]) and its time-segment bounds
    /// ([`CrowdRenderer::set_segment_bounds`]), whichever parts it has. `model_meshes` is the model's mesh index of
    /// each of the renderer's meshes, in the order they were added ([`CrowdAsset::model_meshes`]): the VAT finds
    /// each mesh's baked vertices by it.
    ///
    /// # Errors
    ///
    /// [`Error::Path`] on the CPU-culled path; [`Error::Bake`] when a mesh is missing from the bake; the errors of the
    /// three calls. A part already set stays set when a later one fails.
    pub fn set_bake(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        bake: &Bake,
        model_meshes: &[usize],
    ) -> Result<()> {
        if self.path() != RenderPath::GpuDriven {
            return Err(Error::Path {
                call: "set_bake",
                path: self.path(),
            });
        }
        if let Some(bat) = &bake.bat {
            self.set_bat(device, bat)?;
            self.set_segment_bounds(device, &bat.clips, &bake.bounds)?;
        }
        if let Some(vat) = &bake.vat {
            let first = bake.first_vertices(model_meshes.iter().copied()).ok_or(Error::Bake {
                clip: None,
                what: "lacks a mesh the renderer draws",
            })?;
            self.set_vat(device, queue, vat, &first)?;
        }
        Ok(())
    }
}
