//! [`CrowdCharacter`]: a skinned glTF model ready for crowds, and its asynchronous loader.

use std::sync::Arc;

use bevy::asset::io::Reader;
use bevy::asset::{Asset, AssetLoader, LoadContext};
use bevy::reflect::TypePath;
use crowd_frame::{Character, ClipId};
use crowd_gpu::{AssetOptions, CrowdAsset};
use crowd_mesh::{Material, PackedMesh};
use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The viewport height the LOD thresholds are made for, in pixels: a 1080-line screen, the common full-HD height.
const LOD_VIEWPORT_PX: f32 = 1080.0;
/// The largest LOD error the LOD thresholds allow, in pixels at [`LOD_VIEWPORT_PX`]: half a pixel, below what a
/// viewer sees.
const LOD_ERROR_PX: f32 = 0.5;

/// A character for crowds: skeleton `skeleton` of a glTF model with its clips (crowd-frame's [`Character`]), its
/// bound meshes packed with their LODs, and their materials. Loaded by [`CrowdCharacterLoader`] from `.glb` files
/// (and `.gltf` files with embedded buffers) with `AssetServer::load::<CrowdCharacter>`.
///
/// Every crowd of the character and the render world share it through `Arc`s: cloning the asset, building a crowd
/// of it or extracting the crowd copies nothing. The [`Character`] is freed when the asset is reloaded or dropped
/// and the last crowd built from it is gone.
#[derive(Asset, TypePath, Clone)]
pub struct CrowdCharacter {
    pub(crate) data: Arc<CrowdAsset>,
}

impl CrowdCharacter {
    /// Imports a glTF file's bytes (`path` names it in errors): skeleton `skeleton`, its bound meshes and clips, and
    /// LOD thresholds that keep each level within half a pixel on a 1080-line viewport.
    ///
    /// # Errors
    ///
    /// [`Error::Import`] for a file that does not import, [`Error::NoSkin`] for a model without a skinned mesh on
    /// that skeleton, [`Error::NoClip`] for one without clips, [`Error::Mesh`] and [`Error::Frame`] for meshes
    /// or clips that cannot be packed, [`Error::Bounds`] for empty or non-finite animated bounds, [`Error::Asset`]
    /// for anything else crowd-gpu refuses.
    pub fn from_gltf(bytes: &[u8], path: &str, skeleton: usize) -> Result<Self, Error> {
        let model = anim_pose::import_slice(bytes, None).map_err(|source| Error::Import {
            path: path.to_owned(),
            source,
        })?;
        let options = AssetOptions {
            skeleton,
            viewport_px: LOD_VIEWPORT_PX,
            max_error_px: LOD_ERROR_PX,
            ..AssetOptions::default()
        };
        let asset = CrowdAsset::from_model(&model, &options).map_err(|e| asset_error(e, path, skeleton))?;
        let (min, max) = asset
            .character
            .clip_bounds()
            .iter()
            .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), b| {
                (lo.min(b.min), hi.max(b.max))
            });
        if !((max - min).is_finite() && (max - min).max_element() > 0.0) {
            return Err(Error::Bounds { path: path.to_owned() });
        }
        Ok(Self { data: Arc::new(asset) })
    }

    /// The crowd-frame character, shared by every crowd of it (clone the `Arc` to build a crowd or a renderer of
    /// it outside the plugin).
    pub fn character(&self) -> &Arc<Character> {
        &self.data.character
    }

    /// The clips' names, in [`ClipId`] order.
    pub fn clip_names(&self) -> impl Iterator<Item = &str> {
        self.data.character.clips().iter().map(|c| c.name())
    }

    /// The clip called `name` (ignoring case), if any.
    pub fn clip(&self, name: &str) -> Option<ClipId> {
        let lower = name.to_lowercase();
        self.clip_names()
            .position(|n| n.to_lowercase() == lower)
            .map(|i| ClipId(i as u16))
    }

    /// The number of clips.
    pub fn clip_count(&self) -> usize {
        self.data.character.clips().len()
    }

    /// The packed meshes (skeleton's bound meshes, with their LODs).
    pub fn meshes(&self) -> &[PackedMesh] {
        &self.data.meshes
    }

    /// Their materials, one per mesh.
    pub fn materials(&self) -> &[Material] {
        &self.data.materials
    }

    /// The largest clip's bounding radius, in the model's units.
    pub fn radius(&self) -> f32 {
        self.data.radius
    }
}

/// The plugin's error for crowd-gpu's refusal of skeleton `skeleton` of the file at `path`: a skeleton without a
/// bound mesh or without a clip is named as such, the rest keeps crowd-mesh's or crowd-frame's error.
fn asset_error(error: crowd_gpu::Error, path: &str, skeleton: usize) -> Error {
    let path = path.to_owned();
    match error {
        crowd_gpu::Error::NoMeshes { .. }
        | crowd_gpu::Error::Frame(crowd_frame::Error::SkeletonUnused {
            missing: "mesh bound", ..
        }) => Error::NoSkin { path, skeleton },
        crowd_gpu::Error::Frame(crowd_frame::Error::SkeletonUnused {
            missing: "clip animating",
            ..
        }) => Error::NoClip { path },
        crowd_gpu::Error::Mesh(source) => Error::Mesh { path, source },
        crowd_gpu::Error::Frame(source) => Error::Frame { path, source },
        source => Error::Asset { path, source },
    }
}

impl std::fmt::Debug for CrowdCharacter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrowdCharacter")
            .field("joints", &self.data.character.skeleton().joint_count())
            .field("clips", &self.clip_count())
            .field("meshes", &self.data.meshes.len())
            .finish()
    }
}

/// How [`CrowdCharacterLoader`] reads a file.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct CrowdCharacterSettings {
    /// The skeleton to make the character of (default 0).
    pub skeleton: usize,
}

/// Loads [`CrowdCharacter`]s from `.glb` and `.gltf` files, off the main thread (the import, packing and LOD
/// building run in Bevy's asset task pool). A failure is reported as Bevy's `AssetLoadFailedEvent<CrowdCharacter>`
/// and in the asset server's load state, with an [`Error`] that names the file.
#[derive(Default, TypePath)]
pub struct CrowdCharacterLoader;

impl AssetLoader for CrowdCharacterLoader {
    type Asset = CrowdCharacter;
    type Settings = CrowdCharacterSettings;
    type Error = Error;

    async fn load(
        &self,
        reader: &mut dyn Reader,
        settings: &Self::Settings,
        load_context: &mut LoadContext<'_>,
    ) -> Result<Self::Asset, Self::Error> {
        let path = load_context.path().to_string();
        let mut bytes = Vec::new();
        reader.read_to_end(&mut bytes).await.map_err(|e| Error::Read {
            path: path.clone(),
            message: e.to_string(),
        })?;
        CrowdCharacter::from_gltf(&bytes, &path, settings.skeleton)
    }

    fn extensions(&self) -> &[&str] {
        &["glb", "gltf"]
    }
}
