//! Reference linear-blend skinning on the CPU: palettes, a scalar reference and a parallel job.
//!
//! This module is the truth that GPU skinning tests and bakers compare against.
//! Each vertex blends its (up to four) palette matrices with its weights into one affine matrix `M`, then:
//! - the position is `M · (p, 1)`;
//! - the normal is `cof(L) · n`, renormalized, where `L` is the linear part of `M` and `cof(L) = det(L) · L⁻ᵀ`
//!   is its cofactor matrix; the sign of `det(L)` is applied so that the result points along `L⁻ᵀ · n`.
//!   This is the exact normal transform, also under non-uniform scale, and it needs no inverse;
//! - the tangent's `xyz` is `L · t`, renormalized, and its handedness `w` is copied unchanged.
//!
//! A degenerate blend that maps a normal or tangent to zero writes zero rather than NaN.
//! [`skin_reference`] runs one vertex at a time; [`SkinningJob`] runs the same per-vertex code in parallel over
//! vertex chunks with rayon, so the two agree bit for bit.
//!
//! [`palette_from_model`], which builds the skinning palette of a skeleton's model-space pose, lives in
//! [`palette`].

mod palette;
#[cfg(test)]
mod tests;

use glam::{Affine3A, Mat3A, Vec3, Vec3A, Vec4};

pub use self::palette::palette_from_model;
use crate::{Error, Result};

/// Vertices per rayon task in [`SkinningJob::run`].
///
/// Skinning one vertex costs a few dozen nanoseconds, so chunks of 1,024 vertices keep rayon's per-task overhead
/// (around a microsecond) under a few percent while still splitting a 10k-vertex character over several cores.
pub const SKINNING_CHUNK: usize = 1024;

/// The bind-space vertex data that [`skin_reference`] reads.
///
/// `positions`, `joints` and `weights` have one entry per vertex; `normals` and `tangents` have one entry per
/// vertex or are empty, in which case they are not skinned.
#[derive(Clone, Copy, Debug)]
pub struct SkinInput<'a> {
    /// Bind-space positions.
    pub positions: &'a [Vec3],
    /// Bind-space normals, or empty.
    pub normals: &'a [Vec3],
    /// Bind-space tangents with handedness in `w`, or empty.
    pub tangents: &'a [Vec4],
    /// Up to four palette indices per vertex.
    pub joints: &'a [[u16; 4]],
    /// The weights matching `joints`. They are used as given: they should sum to 1.
    pub weights: &'a [[f32; 4]],
}

/// The skinned vertex data that [`skin_reference`] writes, one entry per input entry.
#[derive(Debug)]
pub struct SkinOutput<'a> {
    /// Skinned positions; as long as the input positions.
    pub positions: &'a mut [Vec3],
    /// Skinned, unit-length normals; as long as the input normals (empty when they are).
    pub normals: &'a mut [Vec3],
    /// Skinned tangents with unit-length `xyz` and the input `w`; as long as the input tangents.
    pub tangents: &'a mut [Vec4],
}

/// Skins every vertex in parallel (linear-blend skinning; see the module docs for the normal and tangent rules).
///
/// Validity rules:
/// - `joints`, `weights` and `out_positions` have `positions.len()` entries;
/// - `normals` is empty or has `positions.len()` entries, and `out_normals` has `normals.len()` entries;
/// - `tangents` is empty or has `positions.len()` entries, and `out_tangents` has `tangents.len()` entries;
/// - every joint index of every vertex, including those of zero-weight influences, is below `palette.len()`.
///
/// Outputs must match their inputs' lengths exactly, so there is no surplus output.
/// [`SkinningJob::validate`] checks the lengths, in O(1). The joint indices are checked for free as the run
/// reads them (an index past the palette contributes nothing, and is remembered), so no call scans the mesh twice:
/// only a run that met one rescans its vertices, to name the first.
/// Weights are not checked: the importer guarantees finite, non-negative weights that sum to 1, and the loop only
/// `debug_assert!`s that they are finite.
#[derive(Debug)]
pub struct SkinningJob<'a> {
    /// The skinning palette, in skin joint order (see [`palette_from_model`]).
    pub palette: &'a [Affine3A],
    /// Bind-space positions.
    pub positions: &'a [Vec3],
    /// Bind-space normals, or empty.
    pub normals: &'a [Vec3],
    /// Bind-space tangents with handedness in `w`, or empty.
    pub tangents: &'a [Vec4],
    /// Up to four palette indices per vertex.
    pub joints: &'a [[u16; 4]],
    /// The weights matching `joints`, used as given.
    pub weights: &'a [[f32; 4]],
    /// Skinned positions written.
    pub out_positions: &'a mut [Vec3],
    /// Skinned normals written; empty when `normals` is.
    pub out_normals: &'a mut [Vec3],
    /// Skinned tangents written; empty when `tangents` is.
    pub out_tangents: &'a mut [Vec4],
}

impl SkinningJob<'_> {
    /// Checks the length rules listed on the type, in O(1); the run checks the joint indices.
    ///
    /// # Errors
    ///
    /// [`Error::BufferSize`] naming the slice whose length is wrong.
    pub fn validate(&self) -> Result<()> {
        check(
            &SkinInput {
                positions: self.positions,
                normals: self.normals,
                tangents: self.tangents,
                joints: self.joints,
                weights: self.weights,
            },
            [
                self.out_positions.len(),
                self.out_normals.len(),
                self.out_tangents.len(),
            ],
        )
    }

    /// Validates, then skins all vertices in parallel over chunks of [`SKINNING_CHUNK`] vertices.
    ///
    /// It allocates nothing itself; rayon's work-stealing queues are rayon's own.
    /// The result is identical, bit for bit, to [`skin_reference`].
    ///
    /// # Errors
    ///
    /// - As [`SkinningJob::validate`], before anything is written.
    /// - [`Error::JointOutOfRange`] naming the first vertex and influence whose joint index is not in the palette;
    ///   the outputs are then written, each vertex blended from its in-range influences only.
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let input = SkinInput {
            positions: self.positions,
            normals: self.normals,
            tangents: self.tangents,
            joints: self.joints,
            weights: self.weights,
        };
        let in_range = skin_parallel(
            self.palette,
            &input,
            0,
            SkinOutput {
                positions: self.out_positions,
                normals: self.out_normals,
                tangents: self.out_tangents,
            },
        );
        if in_range {
            Ok(())
        } else {
            Err(first_joint_out_of_range(self.palette.len(), self.joints))
        }
    }
}

/// Skins every vertex of `input` into `output`, one vertex at a time on the calling thread.
///
/// This is the plain twin of [`SkinningJob`], with the same validity rules and the same per-vertex arithmetic.
///
/// # Errors
///
/// As [`SkinningJob::run`].
pub fn skin_reference(palette: &[Affine3A], input: &SkinInput<'_>, output: &mut SkinOutput<'_>) -> Result<()> {
    check(
        input,
        [output.positions.len(), output.normals.len(), output.tangents.len()],
    )?;
    if skin_span(palette, input, 0, output) {
        Ok(())
    } else {
        Err(first_joint_out_of_range(palette.len(), input.joints))
    }
}

/// Skins positions only: the positions part of [`skin_reference`].
///
/// `joints`, `weights` and `out` have one entry per position.
///
/// # Errors
///
/// As [`SkinningJob::run`], with `out` checked as the output positions.
pub fn skin_positions_reference(
    palette: &[Affine3A],
    positions: &[Vec3],
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
    out: &mut [Vec3],
) -> Result<()> {
    let input = SkinInput {
        positions,
        normals: &[],
        tangents: &[],
        joints,
        weights,
    };
    let mut output = SkinOutput {
        positions: out,
        normals: &mut [],
        tangents: &mut [],
    };
    skin_reference(palette, &input, &mut output)
}

/// The length rules of [`SkinningJob`], in one place; `outputs` are the lengths of the three output slices.
fn check(input: &SkinInput<'_>, outputs: [usize; 3]) -> Result<()> {
    let n = input.positions.len();
    check_len("joints", n, input.joints.len())?;
    check_len("weights", n, input.weights.len())?;
    check_len("output positions", n, outputs[0])?;
    if !input.normals.is_empty() {
        check_len("normals", n, input.normals.len())?;
    }
    check_len("output normals", input.normals.len(), outputs[1])?;
    if !input.tangents.is_empty() {
        check_len("tangents", n, input.tangents.len())?;
    }
    check_len("output tangents", input.tangents.len(), outputs[2])
}

/// The error for the first vertex and influence of `joints` whose index is not below `palette_len`; called only
/// after a run met one.
fn first_joint_out_of_range(palette_len: usize, joints: &[[u16; 4]]) -> Error {
    let found = joints.iter().enumerate().find_map(|(vertex, joints)| {
        let influence = joints.iter().position(|&j| usize::from(j) >= palette_len)?;
        Some((vertex, influence, joints[influence]))
    });
    let (vertex, influence, joint) = found.unwrap_or((0, 0, 0));
    Error::JointOutOfRange {
        vertex,
        influence,
        joint,
        palette_len,
    }
}

/// [`Error::BufferSize`] unless `expected == actual`.
fn check_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::BufferSize { what, expected, actual })
    }
}

/// Splits the outputs in halves until they are at most [`SKINNING_CHUNK`] vertices long and skins the halves with
/// `rayon::join`. `first` is the index of the first vertex of `output` in `input`. Returns false when some joint
/// index was past the palette.
fn skin_parallel(palette: &[Affine3A], input: &SkinInput<'_>, first: usize, output: SkinOutput<'_>) -> bool {
    let len = output.positions.len();
    if len <= SKINNING_CHUNK {
        let mut output = output;
        return skin_span(palette, input, first, &mut output);
    }
    let mid = len / 2;
    // Optional attributes are empty or as long as the positions, so they split at the same vertex or not at all.
    let split = |present: bool| if present { mid } else { 0 };
    let (p0, p1) = output.positions.split_at_mut(mid);
    let (n0, n1) = output.normals.split_at_mut(split(!input.normals.is_empty()));
    let (t0, t1) = output.tangents.split_at_mut(split(!input.tangents.is_empty()));
    let (a, b) = rayon::join(
        || {
            let half = SkinOutput {
                positions: p0,
                normals: n0,
                tangents: t0,
            };
            skin_parallel(palette, input, first, half)
        },
        || {
            let half = SkinOutput {
                positions: p1,
                normals: n1,
                tangents: t1,
            };
            skin_parallel(palette, input, first + mid, half)
        },
    );
    a && b
}

/// Skins the vertices `first..first + output.positions.len()` of `input`, whose lengths have been checked.
/// Returns false when some joint index was past the palette.
fn skin_span(palette: &[Affine3A], input: &SkinInput<'_>, first: usize, output: &mut SkinOutput<'_>) -> bool {
    let mut in_range = true;
    for (i, out_position) in output.positions.iter_mut().enumerate() {
        let v = first + i;
        let m = blend(palette, &input.joints[v], &input.weights[v], &mut in_range);
        *out_position = m.transform_point3(input.positions[v]);
        if let Some(out_normal) = output.normals.get_mut(i) {
            *out_normal = transform_normal(&m.matrix3, input.normals[v]);
        }
        if let Some(out_tangent) = output.tangents.get_mut(i) {
            let t = input.tangents[v];
            let xyz = m.matrix3.mul_vec3(t.truncate()).normalize_or_zero();
            *out_tangent = xyz.extend(t.w);
        }
    }
    in_range
}

/// The weighted sum of a vertex's four palette matrices. All four influences are summed, as the GPU does;
/// a zero weight adds an exact zero. An influence whose joint is past the palette adds nothing and clears
/// `in_range`.
fn blend(palette: &[Affine3A], joints: &[u16; 4], weights: &[f32; 4], in_range: &mut bool) -> Affine3A {
    debug_assert!(weights.iter().all(|w| w.is_finite()), "non-finite skinning weight");
    let mut matrix3 = Mat3A::ZERO;
    let mut translation = Vec3A::ZERO;
    for (&j, &w) in joints.iter().zip(weights) {
        let Some(m) = palette.get(usize::from(j)) else {
            *in_range = false;
            continue;
        };
        matrix3 += m.matrix3 * w;
        translation += m.translation * w;
    }
    Affine3A { matrix3, translation }
}

/// `normalize(sign(det L) · cof(L) · n)`: the direction of `L⁻ᵀ · n`, computed without an inverse.
///
/// The columns of the cofactor matrix of `L = [a b c]` are `b × c`, `c × a` and `a × b`.
fn transform_normal(l: &Mat3A, n: Vec3) -> Vec3 {
    let (a, b, c) = (l.x_axis, l.y_axis, l.z_axis);
    let cofactor_n = b.cross(c) * n.x + c.cross(a) * n.y + a.cross(b) * n.z;
    let det = a.dot(b.cross(c));
    let signed = if det < 0.0 { -cofactor_n } else { cofactor_n };
    Vec3::from(signed).normalize_or_zero()
}
