//! Measuring an f16 format's vertex error on a real mesh, against its stated bound.

use glam::{Affine3A, Vec3, Vec3A};

use super::F16Format;
use crate::{Error, Result, SkinInput, skin_positions_reference};

/// The vertex error of one palette encoded in an f16 format, from [`f16_vertex_error`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VertexError {
    /// The largest displacement of any vertex between f32 skinning with the palette and with its decoded f16
    /// encoding, in model units.
    pub displacement: f32,
    /// The largest per-vertex bound: `Σ wₖ · vertex_error_bound(palette[jₖ], origin, |p|)` over the vertex's
    /// influences, maximised over the vertices.
    pub bound: f32,
    /// True when every vertex moved no more than its own bound.
    pub within_bound: bool,
}

/// Scratch space for [`f16_vertex_error`], sized once for a palette length and a vertex count.
#[derive(Clone, Debug)]
pub struct VertexErrorScratch {
    decoded: Vec<Affine3A>,
    bound_terms: Vec<(f64, f64)>,
    skinned: Vec<Vec3>,
    skinned_f16: Vec<Vec3>,
}

impl VertexErrorScratch {
    /// Scratch for palettes of `palette_len` entries and meshes of `vertex_count` vertices.
    pub fn new(palette_len: usize, vertex_count: usize) -> Self {
        Self {
            decoded: vec![Affine3A::IDENTITY; palette_len],
            bound_terms: vec![(0.0, 0.0); palette_len],
            skinned: vec![Vec3::ZERO; vertex_count],
            skinned_f16: vec![Vec3::ZERO; vertex_count],
        }
    }
}

/// Encodes every entry of `palette` as `F` (relative to `origin`), decodes it with [`F16Format::decode`], skins
/// the positions of `input` with both palettes ([`skin_positions_reference`]; normals and tangents are ignored),
/// and compares. It does not allocate.
///
/// The per-vertex bound uses each vertex's own distance `|p|` from the bind-space origin as the radius, and its
/// weights, so it is tighter than the bound for the whole mesh's radius.
///
/// # Errors
///
/// - [`Error::BufferSize`] when `scratch` was made for another palette length or vertex count.
/// - As [`skin_positions_reference`] for the mesh data.
/// - As [`F16Format::check`] for the first palette entry out of range.
pub fn f16_vertex_error<F: F16Format>(
    palette: &[Affine3A],
    origin: Vec3A,
    input: &SkinInput<'_>,
    scratch: &mut VertexErrorScratch,
) -> Result<VertexError> {
    let n = input.positions.len();
    for (what, expected, actual) in [
        ("vertex error scratch (palette)", palette.len(), scratch.decoded.len()),
        ("vertex error scratch (vertices)", n, scratch.skinned.len()),
    ] {
        if expected != actual {
            return Err(Error::BufferSize { what, expected, actual });
        }
    }
    for (i, m) in palette.iter().enumerate() {
        F::check(m, origin, i)?;
    }
    for ((d, t), m) in scratch.decoded.iter_mut().zip(&mut scratch.bound_terms).zip(palette) {
        *d = F::encode(m, origin).decode(origin);
        // The bound is affine in the radius: a + b·r.
        let a = f64::from(F::vertex_error_bound(m, origin, 0.0));
        let b = f64::from(F::vertex_error_bound(m, origin, 1.0)) - a;
        *t = (a, b);
    }
    let (positions, joints, weights) = (input.positions, input.joints, input.weights);
    skin_positions_reference(palette, positions, joints, weights, &mut scratch.skinned)?;
    skin_positions_reference(&scratch.decoded, positions, joints, weights, &mut scratch.skinned_f16)?;
    let mut result = VertexError {
        displacement: 0.0,
        bound: 0.0,
        within_bound: true,
    };
    for v in 0..n {
        let r = f64::from(positions[v].length());
        let bound: f64 = joints[v]
            .iter()
            .zip(&weights[v])
            .map(|(&j, &w)| {
                let (a, b) = scratch.bound_terms[usize::from(j)];
                f64::from(w) * (a + b * r)
            })
            .sum::<f64>()
            // Rounding of the affine split (a, b) and of this sum, far below the bounds' own slack.
            * (1.0 + 1e-6);
        let e = (scratch.skinned[v].as_dvec3() - scratch.skinned_f16[v].as_dvec3()).length();
        result.displacement = result.displacement.max(e as f32);
        result.bound = result.bound.max(bound as f32);
        result.within_bound &= e <= bound;
    }
    Ok(result)
}
