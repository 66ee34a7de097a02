//! [`PackedMesh`]: an imported skinned primitive in the renderer's compact vertex streams, checked once.

use anim_pose::{Indices, SkinnedMesh};
use glam::Vec2;

use crate::lod::{DEFAULT_LOD_TARGETS, LodLevel, build_lods};
use crate::quantize::{encode_oct_normal, encode_rgba8, encode_uv_f16, encode_uv_unorm16, quantize_weights};
use crate::{Error, Result};

/// How a mesh's UVs are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UvFormat {
    /// Two unorm16, when every UV component is within `[0, 1]`.
    Unorm16,
    /// Two f16, for UVs outside `[0, 1]` (tiling), within ±65504.
    F16,
}

/// A mesh's joint indices: u8 when every joint index is below 256, else u16.
#[derive(Clone, Debug, PartialEq)]
pub enum PackedJoints {
    /// Four u8 per vertex in one word, influence 0 low.
    U8(Vec<u32>),
    /// Four u16 per vertex in two words, influence 0 low in word 0.
    U16(Vec<[u32; 2]>),
}

/// One skinned primitive in the renderer's vertex streams (see [`crate::quantize`] for each packing and its
/// error):
///
/// | stream | per vertex |
/// | --- | --- |
/// | `positions` | f32 × 3, 12 B, exact |
/// | `normals` | octahedral snorm16 × 2, 4 B (generated, area-weighted, when the mesh has none) |
/// | `uvs` | unorm16 × 2 or f16 × 2 ([`UvFormat`]), 4 B (zero when the mesh has none) |
/// | `joints` | u8 × 4 (4 B) or u16 × 4 (8 B) ([`PackedJoints`]); unused influences have joint 0 |
/// | `weights` | unorm8 × 4 summing to exactly 255, 4 B |
/// | `colors` | RGBA8, 4 B, only when the mesh has vertex colours |
///
/// 28 to 36 bytes per vertex, against 76 for the same attributes in f32 and u16.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedMesh {
    /// The source mesh's name.
    pub name: String,
    /// Bind-space positions.
    pub positions: Vec<[f32; 3]>,
    /// Octahedral normals.
    pub normals: Vec<u32>,
    /// UVs in `uv_format`.
    pub uvs: Vec<u32>,
    /// How `uvs` is stored.
    pub uv_format: UvFormat,
    /// Joint indices (skin joint order).
    pub joints: PackedJoints,
    /// Weights.
    pub weights: Vec<u32>,
    /// Vertex colours, when the mesh has them.
    pub colors: Option<Vec<u32>>,
    /// Triangle indices, u16 when the vertex count allows (at most 65,536 vertices), else u32: every LOD level's,
    /// one after another.
    pub indices: Indices,
    /// The LOD levels, finest first: index ranges of `indices` over the same vertices.
    pub lods: Vec<LodLevel>,
}

impl PackedMesh {
    /// Packs `mesh`, whose joints index a skin of `skin_joint_count` joints, with the [`DEFAULT_LOD_TARGETS`]
    /// levels. Runs once per mesh, at load.
    ///
    /// # Errors
    ///
    /// As [`PackedMesh::with_lods`].
    pub fn new(mesh: &SkinnedMesh, skin_joint_count: usize) -> Result<Self> {
        Self::with_lods(mesh, skin_joint_count, &DEFAULT_LOD_TARGETS)
    }

    /// Packs `mesh` with LOD levels keeping the fractions `targets` of its triangles (see [`build_lods`]).
    ///
    /// # Errors
    ///
    /// [`Error::Mesh`] naming the mesh and the vertex, influence or index at fault when: the mesh has no vertex,
    /// an attribute's length differs from the vertex count, a position is not finite, a weighted influence names a
    /// joint at or past `skin_joint_count`, a vertex's weights are negative, not finite or all zero, a UV is not
    /// finite or past ±65504, the index count is not a multiple of 3, an index is past the vertices, or the
    /// targets are not a decreasing list from 1.0.
    pub fn with_lods(mesh: &SkinnedMesh, skin_joint_count: usize, targets: &[f32]) -> Result<Self> {
        let name = mesh.name.as_str();
        let n = mesh.vertex_count();
        if n == 0 {
            return Err(Error::mesh(name, "has no vertex"));
        }
        let same = |what: &str, len: usize, optional: bool| {
            if len == n || (optional && len == 0) {
                Ok(())
            } else {
                Err(Error::mesh(name, format!("has {len} {what} for {n} vertices")))
            }
        };
        same("normals", mesh.normals.len(), true)?;
        same("UVs", mesh.uvs.len(), true)?;
        same("colours", mesh.colors.len(), true)?;
        same("joint sets", mesh.joints.len(), false)?;
        same("weight sets", mesh.weights.len(), false)?;
        if let Some(v) = mesh.positions.iter().position(|p| !p.is_finite()) {
            return Err(Error::mesh(name, format!("vertex {v}: the position is not finite")));
        }
        let indices = mesh.indices.to_u32_vec();
        if !indices.len().is_multiple_of(3) {
            return Err(Error::mesh(
                name,
                format!("has {} indices, not whole triangles", indices.len()),
            ));
        }
        if let Some(i) = indices.iter().position(|&x| x as usize >= n) {
            return Err(Error::mesh(
                name,
                format!("index {i} is {}, past the {n} vertices", indices[i]),
            ));
        }

        let normals = mesh.normals_to_vec();
        let normals = normals.iter().map(|&v| encode_oct_normal(v)).collect();

        if let Some(v) = mesh
            .uvs
            .iter()
            .position(|uv| !(uv.is_finite() && uv.abs().max_element() <= 65504.0))
        {
            return Err(Error::mesh(
                name,
                format!("vertex {v}: the UV is not finite or past ±65504"),
            ));
        }
        let in_unit = mesh
            .uvs
            .iter()
            .all(|uv| uv.cmpge(Vec2::ZERO).all() && uv.cmple(Vec2::ONE).all());
        let uv_format = if in_unit { UvFormat::Unorm16 } else { UvFormat::F16 };
        let uvs = if mesh.uvs.is_empty() {
            vec![0; n]
        } else {
            mesh.uvs
                .iter()
                .map(|&uv| match uv_format {
                    UvFormat::Unorm16 => encode_uv_unorm16(uv),
                    UvFormat::F16 => encode_uv_f16(uv),
                })
                .collect()
        };

        let mut weights = Vec::with_capacity(n);
        let mut joints = Vec::with_capacity(n);
        let mut max_joint = 0u16;
        for (v, (j, w)) in mesh.joints.iter().zip(&mesh.weights).enumerate() {
            let q = quantize_weights(*w).ok_or_else(|| {
                Error::mesh(
                    name,
                    format!("vertex {v}: weights {w:?} are negative, not finite or all zero"),
                )
            })?;
            let mut kept = [0u16; 4];
            for k in 0..4 {
                if (q >> (8 * k)) & 0xff != 0 {
                    if usize::from(j[k]) >= skin_joint_count {
                        return Err(Error::mesh(
                            name,
                            format!(
                                "vertex {v} influence {k}: joint {} is past the skin's {skin_joint_count} joints",
                                j[k]
                            ),
                        ));
                    }
                    kept[k] = j[k];
                    max_joint = max_joint.max(j[k]);
                }
            }
            weights.push(q);
            joints.push(kept);
        }
        let joints = if max_joint < 256 {
            PackedJoints::U8(
                joints
                    .iter()
                    .map(|j| j.iter().enumerate().map(|(k, &x)| u32::from(x) << (8 * k)).sum())
                    .collect(),
            )
        } else {
            PackedJoints::U16(
                joints
                    .iter()
                    .map(|j| {
                        [
                            u32::from(j[0]) | (u32::from(j[1]) << 16),
                            u32::from(j[2]) | (u32::from(j[3]) << 16),
                        ]
                    })
                    .collect(),
            )
        };
        let colors = (!mesh.colors.is_empty()).then(|| mesh.colors.iter().map(|&c| encode_rgba8(c)).collect());
        let positions: Vec<[f32; 3]> = mesh.positions.iter().map(|p| p.to_array()).collect();
        let (indices, lods) = build_lods(name, &positions, &indices, targets)?;
        let indices = if n <= 1 << 16 {
            Indices::U16(indices.iter().map(|&i| i as u16).collect())
        } else {
            Indices::U32(indices)
        };
        Ok(Self {
            name: name.to_owned(),
            positions,
            normals,
            uvs,
            uv_format,
            joints,
            weights,
            colors,
            indices,
            lods,
        })
    }

    /// The number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.positions.len()
    }

    /// Bytes per index: 2 or 4.
    pub fn index_size(&self) -> usize {
        match self.indices {
            Indices::U16(_) => 2,
            Indices::U32(_) => 4,
        }
    }

    /// Bytes per vertex over all streams.
    pub fn vertex_bytes(&self) -> usize {
        let joints = match self.joints {
            PackedJoints::U8(_) => 4,
            PackedJoints::U16(_) => 8,
        };
        12 + 4 + 4 + joints + 4 + if self.colors.is_some() { 4 } else { 0 }
    }
}
