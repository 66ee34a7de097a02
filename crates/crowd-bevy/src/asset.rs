//! [`CrowdCharacter`]: a skinned glTF model ready for crowds, and its asynchronous loader.

use std::sync::Arc;

use bevy::asset::io::Reader;
use bevy::asset::{Asset, AssetLoader, LoadContext};
use bevy::reflect::TypePath;
use crowd_frame::{Character, CharacterOptions, ClipId};
use crowd_mesh::{Material, PackedMesh};
use glam::Vec3;
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// A character for crowds: skeleton `skeleton` of a glTF model with its clips (crowd-frame's [`Character`]), its
/// bound meshes packed with their LODs, and their materials. Loaded by [`CrowdCharacterLoader`] from `.glb` files
/// (and `.gltf` files with embedded buffers) with `AssetServer::load::<CrowdCharacter>`.
///
/// The character lives until the process exits: a `CrowdFrame` borrows its character for its whole life, and a
/// Bevy component must be `'static`, so the loader leaks one [`Character`] per load (a few megabytes for a
/// typical model; reloading the file leaks another).
#[derive(Asset, TypePath, Clone)]
pub struct CrowdCharacter {
    pub(crate) data: Arc<CharacterData>,
}

/// What a crowd and its renderer share of a character; immutable once loaded.
pub(crate) struct CharacterData {
    pub(crate) character: &'static Character,
    pub(crate) packed: Vec<PackedMesh>,
    pub(crate) materials: Vec<Material>,
    /// The largest clip's bounding radius, in the model's units (for LOD thresholds).
    pub(crate) radius: f32,
}

impl CrowdCharacter {
    /// Imports a glTF file's bytes (`path` names it in errors): skeleton `skeleton`, its bound meshes and clips.
    ///
    /// # Errors
    ///
    /// [`Error::Import`] for a file that does not import, [`Error::NoSkin`] for a model without a skinned mesh on
    /// that skeleton, [`Error::NoClip`] for one without clips, [`Error::Mesh`] and [`Error::Frame`] for meshes
    /// or clips that cannot be packed, [`Error::Bounds`] for empty or non-finite animated bounds.
    pub fn from_gltf(bytes: &[u8], path: &str, skeleton: usize) -> Result<Self, Error> {
        let model = anim_pose::import_slice(bytes, None).map_err(|source| Error::Import {
            path: path.to_owned(),
            source,
        })?;
        let no_skin = || Error::NoSkin {
            path: path.to_owned(),
            skeleton,
        };
        let binding = model
            .bindings
            .iter()
            .find(|b| b.skeleton == skeleton)
            .ok_or_else(no_skin)?;
        let sk = model.skeletons.get(skeleton).ok_or_else(no_skin)?;
        let meshes = &model.meshes[binding.meshes.clone()];
        let packed = meshes
            .iter()
            .map(|m| PackedMesh::new(m, sk.skin_joint_count()))
            .collect::<crowd_mesh::Result<Vec<_>>>()
            .map_err(|source| Error::Mesh {
                path: path.to_owned(),
                source,
            })?;
        if packed.is_empty() {
            return Err(no_skin());
        }
        let materials = binding
            .meshes
            .clone()
            .map(|i| Material::of_mesh(&model, i))
            .collect::<crowd_mesh::Result<Vec<_>>>()
            .map_err(|source| Error::Mesh {
                path: path.to_owned(),
                source,
            })?;
        let frame_error = |source| Error::Frame {
            path: path.to_owned(),
            source,
        };
        let character = Character::from_model(&model, skeleton, &CharacterOptions::default())
            .and_then(|c| c.with_lod_count(packed[0].lods.len()))
            .map_err(frame_error)?;
        if character.clips().is_empty() {
            return Err(Error::NoClip { path: path.to_owned() });
        }
        let (min, max) = character
            .clip_bounds()
            .iter()
            .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), b| {
                (lo.min(b.min), hi.max(b.max))
            });
        if !((max - min).is_finite() && (max - min).max_element() > 0.0) {
            return Err(Error::Bounds { path: path.to_owned() });
        }
        let radius = character
            .clip_bounds()
            .iter()
            .map(|b| ((b.max - b.min) * 0.5).length())
            .fold(0.0, f32::max);
        Ok(Self {
            data: Arc::new(CharacterData {
                character: Box::leak(Box::new(character)),
                packed,
                materials,
                radius,
            }),
        })
    }

    /// The crowd-frame character.
    pub fn character(&self) -> &'static Character {
        self.data.character
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
        &self.data.packed
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

impl std::fmt::Debug for CrowdCharacter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrowdCharacter")
            .field("joints", &self.data.character.skeleton().joint_count())
            .field("clips", &self.clip_count())
            .field("meshes", &self.data.packed.len())
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
