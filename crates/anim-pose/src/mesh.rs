//! Skinned mesh primitives and their materials.

use glam::{Vec2, Vec3, Vec4};

use crate::Aabb;

/// One skinned glTF mesh primitive, as triangle lists.
///
/// # Invariants
///
/// - `positions`, `joints` and `weights` have one entry per vertex; `normals`, `tangents`, `uvs` and
///   `colors` have one entry per vertex or are empty when the primitive has no such attribute.
/// - `joints` index the skin's joint list ([`crate::Skeleton::skin_joints`] order), never past it for any
///   skin bound to this mesh.
/// - Each vertex's weights are finite, non-negative, sorted in decreasing order and sum to 1 within 1e-5;
///   unused influences have weight 0 and joint 0. More than four influences were reduced to the four largest
///   and renormalized.
/// - `indices` has a multiple of 3 entries, each less than the vertex count.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinnedMesh {
    /// `mesh 'Name' primitive P`, for messages.
    pub name: String,
    /// The glTF mesh index.
    pub mesh: usize,
    /// The primitive index within the glTF mesh.
    pub primitive: usize,
    /// Vertex positions in bind space.
    pub positions: Vec<Vec3>,
    /// Vertex normals, or empty.
    pub normals: Vec<Vec3>,
    /// Vertex tangents with handedness in `w`, or empty.
    pub tangents: Vec<Vec4>,
    /// First texture coordinate set (`TEXCOORD_0`), or empty.
    pub uvs: Vec<Vec2>,
    /// First vertex colour set (`COLOR_0`) as linear RGBA, or empty.
    pub colors: Vec<Vec4>,
    /// Up to four joint influences per vertex, in skin joint order.
    pub joints: Vec<[u16; 4]>,
    /// Influence weights matching `joints`.
    pub weights: Vec<[f32; 4]>,
    /// Triangle list indices.
    pub indices: Indices,
    /// The most non-zero influences on any vertex (0 to 4).
    pub max_influences: u8,
    /// The most influences any vertex had in the file, before reduction to four.
    pub source_max_influences: u8,
    /// The material.
    pub material: Material,
    /// Bounds of `positions`.
    pub bounds: Aabb,
}

impl SkinnedMesh {
    /// The number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// The normals every consumer of the mesh uses (the packed GPU mesh, bakes): the file's when it has them,
    /// else the area-weighted normals of the triangles around each vertex (+Z for a vertex of no triangle, or of
    /// degenerate ones only). Triangles naming a vertex past `positions` are skipped.
    pub fn normals_to_vec(&self) -> Vec<Vec3> {
        if !self.normals.is_empty() {
            return self.normals.clone();
        }
        let n = self.positions.len();
        let mut sum = vec![Vec3::ZERO; n];
        let indices = self.indices.to_u32_vec();
        for t in indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| i as usize);
            if a >= n || b >= n || c >= n {
                continue;
            }
            let p = &self.positions;
            // The cross product's length is twice the area: larger triangles weigh more.
            let normal = (p[b] - p[a]).cross(p[c] - p[a]);
            for v in [a, b, c] {
                sum[v] += normal;
            }
        }
        sum.iter().map(|v| v.normalize_or(Vec3::Z)).collect()
    }

    /// The number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }
}

/// Triangle list indices, kept at the width the file used.
#[derive(Clone, Debug, PartialEq)]
pub enum Indices {
    /// 16-bit indices.
    U16(Vec<u16>),
    /// 32-bit indices.
    U32(Vec<u32>),
}

impl Indices {
    /// The number of indices.
    pub fn len(&self) -> usize {
        match self {
            Self::U16(v) => v.len(),
            Self::U32(v) => v.len(),
        }
    }

    /// True when there are no indices.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Index `i` widened to `u32`, or `None` past the end.
    pub fn get(&self, i: usize) -> Option<u32> {
        match self {
            Self::U16(v) => v.get(i).map(|&x| u32::from(x)),
            Self::U32(v) => v.get(i).copied(),
        }
    }

    /// All indices widened to `u32`.
    pub fn to_u32_vec(&self) -> Vec<u32> {
        match self {
            Self::U16(v) => v.iter().map(|&x| u32::from(x)).collect(),
            Self::U32(v) => v.clone(),
        }
    }
}

/// The part of a glTF material that crowd rendering uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// The material's name, or `material N`, or `default` for primitives without one.
    pub name: String,
    /// Linear RGBA base colour factor.
    pub base_color_factor: Vec4,
    /// Index into [`crate::Model::images`] of the base colour texture's image, if any.
    pub base_color_texture: Option<usize>,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            name: "default".to_owned(),
            base_color_factor: Vec4::ONE,
            base_color_texture: None,
        }
    }
}

/// An encoded image (PNG or JPEG bytes, not decoded).
#[derive(Clone, Debug, PartialEq)]
pub struct TextureImage {
    /// `image N` or the image's name.
    pub name: String,
    /// The MIME type, for example `image/png`, when known.
    pub mime_type: Option<String>,
    /// The encoded bytes.
    pub bytes: Vec<u8>,
}
