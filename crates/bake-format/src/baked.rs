//! [`Bake`]: everything a bake holds, as plain data.

use crate::{BakedBounds, BatData, SocketData, VatData};

/// A clip of a bake: what every part's [`crate::ClipRecord`] of the same index describes.
#[derive(Clone, Debug, PartialEq)]
pub struct BakedClip {
    /// The clip's name.
    pub name: String,
    /// Its duration in seconds.
    pub duration: f32,
    /// Whether it loops.
    pub looping: bool,
}

/// A mesh of a bake: its vertices are VAT vertices `first_vertex..first_vertex + vertex_count`, and the errors of
/// a report name vertices in the same concatenated order.
#[derive(Clone, Debug, PartialEq)]
pub struct BakedMesh {
    /// The mesh's name.
    pub name: String,
    /// Its index in `anim_pose::Model::meshes`.
    pub mesh: u32,
    /// Its first vertex in the bake's concatenated vertex order.
    pub first_vertex: u32,
    /// Its vertices.
    pub vertex_count: u32,
}

/// A bake of one skeleton's clips: bone animation, vertex animation, sockets and bounds, each part optional.
///
/// Every part has one [`crate::ClipRecord`] per clip, in the order of `clips`; each part chooses its own frame rate
/// per clip, so their records differ in frames and rates, and agree in duration, looping and segments.
#[derive(Clone, Debug, PartialEq)]
pub struct Bake {
    /// The skeleton's name.
    pub skeleton: String,
    /// The vertex-error budget the bake was made for, in millimetres.
    pub budget_mm: f32,
    /// The clips.
    pub clips: Vec<BakedClip>,
    /// The meshes whose vertices were measured (and baked, in a VAT).
    pub meshes: Vec<BakedMesh>,
    /// The bone-animation bake.
    pub bat: Option<BatData>,
    /// The vertex-animation bake.
    pub vat: Option<VatData>,
    /// The sockets.
    pub sockets: Option<SocketData>,
    /// Per-clip and per-segment bounds.
    pub bounds: BakedBounds,
}

impl Bake {
    /// The first baked vertex of each of `meshes` (indices into `anim_pose::Model::meshes`), in their order: what
    /// a VAT player needs per drawn mesh. `None` when one of them is not in the bake.
    pub fn first_vertices(&self, meshes: impl IntoIterator<Item = usize>) -> Option<Vec<u32>> {
        meshes
            .into_iter()
            .map(|m| {
                self.meshes
                    .iter()
                    .find(|b| b.mesh as usize == m)
                    .map(|b| b.first_vertex)
            })
            .collect()
    }

    /// The bytes of every part's data (BAT entries, VAT texels, socket transforms).
    pub fn data_bytes(&self) -> u64 {
        let bat = self.bat.as_ref().map_or(0, BatData::byte_len);
        let vat = self.vat.as_ref().map_or(0, VatData::byte_len);
        let sockets = self.sockets.as_ref().map_or(0, SocketData::byte_len);
        (bat as u64) + (vat as u64) + (sockets as u64)
    }

    /// The index of the clip named `name`.
    pub fn find_clip(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name == name)
    }
}
