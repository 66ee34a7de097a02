//! An imported model: skeletons, clips, meshes and how they are bound.

use std::ops::Range;

use glam::Vec3;

use crate::{Clip, Skeleton, SkinnedMesh, TextureImage};

/// An axis-aligned bounding box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Minimum corner.
    pub min: Vec3,
    /// Maximum corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box: `min` is +∞ and `max` is −∞, so that any point extends it.
    pub const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    /// The bounds of `points`, or [`Aabb::EMPTY`] when there are none.
    pub fn from_points(points: &[Vec3]) -> Self {
        points.iter().fold(Self::EMPTY, |b, &p| b.including(p))
    }

    /// This box grown to include `p`.
    pub fn including(self, p: Vec3) -> Self {
        Self {
            min: self.min.min(p),
            max: self.max.max(p),
        }
    }

    /// The union of two boxes.
    pub fn union(self, other: Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// True when the box contains no point.
    pub fn is_empty(&self) -> bool {
        self.min.cmpgt(self.max).any()
    }

    /// `max - min`, or zero for an empty box.
    pub fn size(&self) -> Vec3 {
        if self.is_empty() {
            Vec3::ZERO
        } else {
            self.max - self.min
        }
    }
}

/// A node that draws a skinned mesh with a skin.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinBinding {
    /// The glTF node index.
    pub node: usize,
    /// The node's name, or `node N`.
    pub name: String,
    /// Index into [`Model::skeletons`].
    pub skeleton: usize,
    /// The primitives drawn, as a range of [`Model::meshes`]. Nodes that share a glTF mesh share the range.
    pub meshes: Range<usize>,
}

/// Everything imported from one glTF file.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Model {
    /// One skeleton per glTF skin, in skin order.
    pub skeletons: Vec<Skeleton>,
    /// One clip per (glTF animation, skeleton it animates), in animation order, then skeleton order.
    pub clips: Vec<Clip>,
    /// One entry per primitive of every glTF mesh that a skinned node draws, each mesh imported once.
    pub meshes: Vec<SkinnedMesh>,
    /// The nodes that draw skinned meshes.
    pub bindings: Vec<SkinBinding>,
    /// Encoded images that materials reference.
    pub images: Vec<TextureImage>,
    /// Things that were ignored or repaired on import, for the user to see.
    pub warnings: Vec<ImportWarning>,
    /// glTF node indices of the default scene (scene 0 when the file names none) in depth-first order,
    /// children in the order listed; empty when the file has no scene.
    pub default_scene_nodes: Vec<usize>,
}

impl Model {
    /// The union of all meshes' bind-space bounds.
    pub fn bounds(&self) -> Aabb {
        self.meshes.iter().fold(Aabb::EMPTY, |b, m| b.union(m.bounds))
    }

    /// The clips that animate skeleton `skeleton`.
    pub fn clips_for(&self, skeleton: usize) -> impl Iterator<Item = &Clip> {
        self.clips.iter().filter(move |c| c.skeleton == skeleton)
    }
}

/// Something the importer ignored or repaired, named by the object it concerns.
///
/// Warnings never hide lost data silently: each one says what was dropped or changed and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportWarning {
    /// The object concerned, for example "mesh 'Body' primitive 0".
    pub object: String,
    /// What was ignored or repaired.
    pub message: String,
}

impl std::fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.object, self.message)
    }
}
