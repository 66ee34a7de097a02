//! Measuring a baked part against the exact clip: the largest distance between played-back and exactly skinned
//! vertices at the key times, the frames, the midpoints between frames and the loop seam.

use glam::Vec3;

use crate::ClipRecord;
use crate::source::Source;

/// The largest error of a baked clip against the exact clip, and where it occurs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ErrorAt {
    /// The largest distance between a played-back and an exactly skinned vertex, in metres (model units).
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

/// The largest distance between the same vertex in two frames (the jump at a loop's seam).
pub(crate) fn largest_distance(a: &[Vec3], b: &[Vec3]) -> (f32, u32) {
    a.iter().zip(b).enumerate().fold((0.0, 0), |(best, at), (v, (p, q))| {
        let d = p.distance(*q);
        if d > best { (d, v as u32) } else { (best, at) }
    })
}
