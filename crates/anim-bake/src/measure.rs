//! Measuring a baked part against the exact clip: the largest distance between played-back and exactly skinned
//! vertices at the key times, the frames, the midpoints between frames and the loop seam.

use glam::Vec3;
use rayon::prelude::*;

use crate::quantize::angle_between;
use crate::source::Source;
use crate::{ClipRecord, Error, Result};

/// The largest error of a baked clip against the exact clip, and where it occurs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ErrorAt {
    /// The largest distance between a played-back and an exactly skinned vertex, in model units: finite.
    pub distance: f32,
    /// The clip time where it occurs, in seconds.
    pub time: f32,
    /// The vertex (in the bake's concatenated vertex order, `Bake::meshes`).
    pub vertex: u32,
}

impl ErrorAt {
    /// The larger of two errors (the earlier one on a tie).
    pub fn max(self, other: Self) -> Self {
        if other.distance > self.distance { other } else { self }
    }
}

/// The decoded vertices of a candidate bake of one clip at each stored frame, which playback mixes.
#[derive(Clone, Debug, Default)]
pub(crate) struct FrameVertices {
    /// Positions per frame.
    pub positions: Vec<Vec<Vec3>>,
    /// Unit normals per frame, or empty when normals are not measured.
    pub normals: Vec<Vec<Vec3>>,
}

/// The errors of a candidate against the exact clip.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Measured {
    /// The largest position error.
    pub position: ErrorAt,
    /// The largest normal angle in radians (as `distance`), when normals were measured.
    pub normal: ErrorAt,
}

impl Measured {
    fn max(self, o: Self) -> Self {
        Self {
            position: self.position.max(o.position),
            normal: self.normal.max(o.normal),
        }
    }
}

/// The largest error of playing back `frames` with `record` (`first_frame` 0) against the exact clip at `times`,
/// in parallel. Playback at `t` mixes the two frames around `t`; the exact clip is evaluated at the same clip time
/// (wrapped or clamped as the GPU does).
///
/// # Errors
///
/// [`Error::NotFinite`] naming a played-back vertex whose distance is not finite; the source's errors.
pub(crate) fn playback_error(
    source: &Source<'_>,
    clip: usize,
    record: &ClipRecord,
    frames: &FrameVertices,
    times: &[f32],
) -> Result<Measured> {
    times
        .par_iter()
        .map_init(
            || (source.pose_scratch(), source.skinned()),
            |(pose, skinned), &t| -> Result<Measured> {
                let local = record.local_time(t);
                source.pose(clip, local, pose)?;
                source.skin(&pose.palette, skinned)?;
                let pair = record.frame_at(t);
                let (i, f) = (pair.frame as usize, pair.fraction);
                let mut m = Measured::default();
                let (a, b) = (&frames.positions[i], &frames.positions[i + 1]);
                for (v, exact) in skinned.positions.iter().enumerate() {
                    let d = (a[v] * (1.0 - f) + b[v] * f).distance(*exact);
                    if !d.is_finite() {
                        return Err(Error::NotFinite {
                            what: "played-back vertex",
                            index: v,
                        });
                    }
                    if d > m.position.distance {
                        m.position = ErrorAt {
                            distance: d,
                            time: local,
                            vertex: v as u32,
                        };
                    }
                }
                if !frames.normals.is_empty() {
                    let (a, b) = (&frames.normals[i], &frames.normals[i + 1]);
                    for (v, exact) in skinned.normals.iter().enumerate() {
                        if *exact == Vec3::ZERO {
                            continue;
                        }
                        let n = (a[v] * (1.0 - f) + b[v] * f).normalize_or_zero();
                        let d = angle_between(n, *exact);
                        if d > m.normal.distance {
                            m.normal = ErrorAt {
                                distance: d,
                                time: local,
                                vertex: v as u32,
                            };
                        }
                    }
                }
                Ok(m)
            },
        )
        .try_reduce(Measured::default, |a, b| Ok(a.max(b)))
}

/// The clip times at which a candidate of `intervals` intervals is measured, in `[0, duration]`: every frame, the
/// midpoint of every interval, every key time of every channel, and for a looping clip the last time before the
/// duration (the end of the last interval, before playback wraps).
pub(crate) fn check_times(source: &Source<'_>, clip: usize, record: &ClipRecord) -> Vec<f32> {
    let c = source.clips[clip];
    let intervals = record.frame_count - 1;
    let mut times: Vec<f32> = (0..=intervals).map(|k| record.frame_time(k)).collect();
    times.extend((0..intervals).map(|k| 0.5 * (record.frame_time(k) + record.frame_time(k + 1))));
    times.extend(
        c.channels
            .iter()
            .flat_map(|ch| ch.times.iter().copied())
            .filter(|t| (0.0..=c.duration).contains(t)),
    );
    if record.is_looping() && c.duration > 0.0 {
        times.push(c.duration.next_down());
    }
    times.sort_by(f32::total_cmp);
    times.dedup();
    times
}

/// The largest distance between the same vertex in two frames (the jump at a loop's seam), and the vertex.
///
/// # Errors
///
/// [`Error::NotFinite`] naming the first vertex whose distance is not finite.
pub(crate) fn largest_distance(a: &[Vec3], b: &[Vec3]) -> Result<(f32, u32)> {
    let mut best = (0.0, 0);
    for (v, (p, q)) in a.iter().zip(b).enumerate() {
        let d = p.distance(*q);
        if !d.is_finite() {
            return Err(Error::NotFinite {
                what: "played-back vertex",
                index: v,
            });
        }
        if d > best.0 {
            best = (d, v as u32);
        }
    }
    Ok(best)
}
