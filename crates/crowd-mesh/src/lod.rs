//! LOD levels of a mesh: index ranges into one index buffer over the same vertices, simplified with meshopt,
//! each with its triangle count and simplification error, and the screen-size thresholds that keep every level's
//! error under a pixel budget.

use crate::{Error, Result};

/// The default LOD targets: the fraction of the triangles each level keeps (full, a quarter, 6%, and two far
/// levels of 1.5% and 0.4%: the default character's 13,000 triangles become about 800, 200 and 50). The far levels
/// are meant for characters a few dozen pixels tall; [`lod_thresholds`] picks each level only where its error stays
/// under the pixel budget.
pub const DEFAULT_LOD_TARGETS: [f32; 5] = [1.0, 0.25, 0.06, 0.015, 0.004];

/// One LOD level of a mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LodLevel {
    /// The level's first index in the mesh's index buffer.
    pub first_index: u32,
    /// Its number of indices (three per triangle).
    pub index_count: u32,
    /// meshopt's simplification error, in the mesh's position units: how far the simplified surface may lie
    /// from the original (0 for the full level).
    pub error: f32,
}

impl LodLevel {
    /// The number of triangles.
    pub fn triangles(&self) -> u32 {
        self.index_count / 3
    }
}

/// Simplifies the triangle list `indices` over `positions` to each of `targets` (fractions of the triangles,
/// decreasing, the first 1.0), and returns the concatenated index buffer with one [`LodLevel`] per target.
///
/// Every level indexes the same vertices, so skin weights need no work; a level is an index range. Each level
/// is simplified from the full mesh (not from the previous level), over positions only (seam copies of a vertex
/// merge, and the level uses the first copy), with no error limit; where the topology stops the collapses above
/// twice the target, sloppy simplification (which ignores topology) takes over. A level never has more triangles
/// than the one before.
///
/// # Errors
///
/// [`Error::Mesh`] naming `name` when `targets` is empty, does not start at 1.0, or does not decrease within
/// `(0, 1]`.
pub fn build_lods(
    name: &str,
    positions: &[[f32; 3]],
    indices: &[u32],
    targets: &[f32],
) -> Result<(Vec<u32>, Vec<LodLevel>)> {
    if targets.first() != Some(&1.0) || targets.windows(2).any(|w| !(w[1] < w[0] && w[1] > 0.0)) {
        return Err(Error::mesh(
            name,
            format!("LOD targets {targets:?} must start at 1.0 and decrease within (0, 1]"),
        ));
    }
    let scale = meshopt::simplify_scale_decoder(positions);
    // Simplify over positions only: vertices split at UV or normal seams share one position, and would otherwise
    // be borders that no collapse may cross, which stops the simplification of most textured meshes. The levels
    // then reference the first vertex of each position, so coarse levels may show a texture seam.
    let shadow = meshopt::generate_shadow_indices_decoder(indices, positions);
    let mut all = indices.to_vec();
    let mut levels = vec![LodLevel {
        first_index: 0,
        index_count: indices.len() as u32,
        error: 0.0,
    }];
    let triangles = indices.len() / 3;
    for &t in &targets[1..] {
        let target = ((triangles as f32 * t).round() as usize).max(1) * 3;
        let mut relative = 0.0f32;
        let mut level = meshopt::simplify_decoder(
            &shadow,
            positions,
            target,
            f32::MAX,
            meshopt::SimplifyOptions::None,
            Some(&mut relative),
        );
        if level.len() > 2 * target {
            // The topology stopped the collapses far above the target (a low-poly or non-manifold mesh): sloppy
            // simplification ignores topology and reaches it, at a larger error.
            level = meshopt::simplify_sloppy_decoder(&shadow, positions, target, f32::MAX, Some(&mut relative));
        }
        let previous = levels[levels.len() - 1];
        // meshopt's error is relative to the mesh's extent; keep errors monotonic.
        let mut error = (relative * scale).max(previous.error);
        if level.len() > previous.index_count as usize {
            // A level the topology stopped above the previous one repeats it.
            let start = previous.first_index as usize;
            level = all[start..start + previous.index_count as usize].to_vec();
            error = previous.error;
        }
        levels.push(LodLevel {
            first_index: all.len() as u32,
            index_count: level.len() as u32,
            error,
        });
        all.extend_from_slice(&level);
    }
    Ok((all, levels))
}

/// The screen-size thresholds between the levels (`crowd_cull::GroupDesc::lod_thresholds`, one fewer than the
/// levels) that keep each level's error under `max_error_px` pixels on a viewport `viewport_px` pixels high, for
/// an instance whose culling sphere has radius `radius` (in the same units as the errors).
///
/// crowd-cull's screen size is `s = radius · proj_scale / depth`, and a length `e` at that depth covers
/// `e · proj_scale / depth · viewport_px / 2` pixels, that is `e · s · viewport_px / (2 · radius)`. Level `i` is
/// therefore good below `s_i = 2 · radius · max_error_px / (e_i · viewport_px)`.
/// The thresholds are then made to suit crowd-cull's rules: finite, positive, and decreasing fast enough for the
/// `hysteresis` bands not to overlap (`t[i] · (1 - h) > t[i + 1] · (1 + h)`); a level whose threshold had to move
/// down is used only nearer than its error allows, never farther.
pub fn lod_thresholds(
    levels: &[LodLevel],
    radius: f32,
    viewport_px: f32,
    max_error_px: f32,
    hysteresis: f32,
) -> Vec<f32> {
    // The largest screen size a threshold takes: far above any instance that fits on screen.
    const CAP: f32 = 1.0e3;
    let band = (1.0 - hysteresis) / (1.0 + hysteresis) * 0.999;
    let mut out: Vec<f32> = Vec::with_capacity(levels.len().saturating_sub(1));
    for level in levels.iter().skip(1) {
        let raw = if level.error > 0.0 {
            2.0 * radius * max_error_px / (level.error * viewport_px)
        } else {
            CAP
        };
        let limit = out.last().map_or(CAP, |&t| t * band);
        out.push(raw.min(limit).min(CAP));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `n × n` grid of quads in the XY plane, gently curved so that simplification has some error.
    fn grid(n: usize) -> (Vec<[f32; 3]>, Vec<u32>) {
        let mut p = Vec::new();
        for y in 0..=n {
            for x in 0..=n {
                let (fx, fy) = (x as f32 / n as f32, y as f32 / n as f32);
                p.push([fx, fy, 0.1 * (fx * 6.0).sin() * (fy * 4.0).cos()]);
            }
        }
        let mut i = Vec::new();
        let w = (n + 1) as u32;
        for y in 0..n as u32 {
            for x in 0..n as u32 {
                let a = y * w + x;
                i.extend_from_slice(&[a, a + 1, a + w + 1, a, a + w + 1, a + w]);
            }
        }
        (p, i)
    }

    #[test]
    fn levels_shrink_to_their_targets_and_their_errors_grow() {
        let (p, i) = grid(40);
        let (all, levels) = build_lods("grid", &p, &i, &DEFAULT_LOD_TARGETS).expect("builds");
        assert_eq!(levels.len(), 5);
        assert_eq!(levels[0].triangles(), 3200);
        assert!(
            levels[1].triangles() <= 800 && levels[1].triangles() >= 600,
            "{levels:?}"
        );
        assert!(levels[2].triangles() <= 192, "{levels:?}");
        assert!(levels[0].error == 0.0 && levels[1].error > 0.0 && levels[2].error >= levels[1].error);
        // The far levels: a few dozen triangles, sloppy where the topology stops the collapses.
        assert!(levels[4].triangles() <= 26 && levels[4].triangles() >= 1, "{levels:?}");
        assert!(
            levels[4].error >= levels[3].error && levels[3].error >= levels[2].error,
            "{levels:?}"
        );
        for l in &levels {
            let range = l.first_index as usize..(l.first_index + l.index_count) as usize;
            assert!(
                all[range].iter().all(|&x| (x as usize) < p.len()),
                "every level indexes the same vertices"
            );
        }
        let t = lod_thresholds(&levels, 1.0, 1080.0, 1.0, 0.1);
        assert_eq!(t.len(), 4);
        for w in t.windows(2) {
            assert!(
                w[0] > 0.0 && w[0].is_finite() && w[0] * 0.9 > w[1] * 1.1 && w[1] > 0.0,
                "{t:?}"
            );
        }
        // A level's error at its threshold is at most a pixel.
        for (k, &s) in t.iter().enumerate() {
            assert!(levels[k + 1].error * s * 1080.0 / 2.0 <= 1.0 + 1e-4);
        }
    }

    #[test]
    fn bad_targets_are_refused() {
        let (p, i) = grid(2);
        for targets in [
            &[][..],
            &[0.5][..],
            &[1.0, 1.5][..],
            &[1.0, 0.5, 0.5][..],
            &[1.0, 0.0][..],
        ] {
            assert!(build_lods("grid", &p, &i, targets).is_err(), "{targets:?}");
        }
    }
}
