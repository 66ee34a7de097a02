//! Frame times of a runtime clip, uniform or from a frame-time table, and the mapping from a sampling time to the
//! frame pair around it.
//!
//! A uniform timeline maps a time to its frame with one multiply. A table maps it with one multiply into a bucket
//! (as many equal buckets as frame intervals) and a search among the few frames that can hold a time of that
//! bucket, so one lookup per pose, shared by every joint, costs the same however long the clip is.

use std::sync::Arc;

/// The frame times of a runtime clip and the mapping from a sampling time to a frame pair.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Timeline {
    /// Duration in seconds.
    duration: f32,
    /// Number of frames, at least one.
    frame_count: usize,
    /// Uniform frames: `(frame_count - 1) / duration`, or 0 for a single frame. A table: its buckets per second.
    time_scale: f32,
    /// True when sampling wraps; never for a zero duration.
    looping: bool,
    /// The frame times, when they are not uniform. Shared with the clip's root-motion track.
    table: Option<Arc<FrameTable>>,
}

/// Non-uniform frame times and the bucket index that finds a time's frame in O(1) on average.
#[derive(Debug, PartialEq)]
struct FrameTable {
    /// Frame times: strictly increasing from exactly 0 to exactly the duration, at least two.
    times: Vec<f32>,
    /// For each bucket `b` (of `times.len() - 1` equal buckets over the duration) and one past the last: the last
    /// frame whose time falls in a bucket before `b`, or 0. The frame of any time in bucket `b` is in
    /// `starts[b]..=starts[b + 1]`, and `starts` ends with the last frame, `n - 1`.
    starts: Vec<u32>,
}

impl FrameTable {
    /// The bucket of time `t`: the same f32 product and truncation at build time and at sampling time, so that the
    /// index is consistent with `starts`, whatever the rounding.
    #[inline]
    fn bucket(t: f32, scale: f32) -> usize {
        // `as` floors the non-negative product (and maps NaN to 0).
        (t * scale) as usize
    }

    /// The bucket index of strictly increasing `times` (at least two) with `scale` buckets per second.
    fn new(times: Vec<f32>, scale: f32) -> Self {
        let last = times.len() - 1;
        let mut starts = Vec::with_capacity(last + 1);
        let mut f = 0usize;
        for b in 0..last {
            // Products and truncation are monotone, so the frames whose bucket is before `b` are a prefix.
            while f < last && Self::bucket(times[f + 1], scale) < b {
                f += 1;
            }
            starts.push(f as u32);
        }
        starts.push(last as u32);
        Self { times, starts }
    }

    /// The frame and fraction of `t` in `[0, duration]`: the last frame at or before `t` (as the exact evaluator
    /// finds a key), and the fraction of the way to the next frame, 0 at the last frame.
    ///
    /// Kept out of line, so that the uniform lookup it sits beside stays a few instructions inlined into the jobs.
    #[inline(never)]
    fn coords(&self, t: f32, scale: f32) -> (usize, f32) {
        let buckets = self.starts.len() - 1;
        let b = Self::bucket(t, scale).min(buckets - 1);
        let (lo, hi) = (self.starts[b] as usize, self.starts[b + 1] as usize);
        // The frames after `lo` whose time is at or before `t`: usually none or one.
        let f = lo + self.times[lo + 1..=hi].partition_point(|&k| k <= t);
        let u = match self.times.get(f + 1) {
            Some(&t1) => ((t - self.times[f]) / (t1 - self.times[f])).clamp(0.0, 1.0),
            None => 0.0,
        };
        (f, u)
    }
}

impl Timeline {
    /// A timeline of `frame_count` uniform frames over `[0, duration]`.
    pub(crate) fn uniform(duration: f32, frame_count: usize, looping: bool) -> Self {
        let frame_count = frame_count.max(1);
        let time_scale = if frame_count > 1 && duration > 0.0 {
            (frame_count - 1) as f32 / duration
        } else {
            0.0
        };
        Self {
            duration,
            frame_count,
            time_scale,
            looping: looping && duration > 0.0,
            table: None,
        }
    }

    /// A timeline over the frame times `times`, which [`FrameTimes`] builds: strictly increasing from 0 to the
    /// duration, at least two. Anything else gives a single frame at 0.
    pub(crate) fn table(times: Vec<f32>, looping: bool) -> Self {
        let valid = times.len() >= 2
            && times.first() == Some(&0.0)
            && times.windows(2).all(|w| w[0] < w[1])
            && times.last().is_some_and(|t| t.is_finite());
        if !valid {
            return Self::uniform(0.0, 1, false);
        }
        let duration = times[times.len() - 1];
        let frame_count = times.len();
        let time_scale = (frame_count - 1) as f32 / duration;
        Self {
            duration,
            frame_count,
            time_scale,
            looping: looping && duration > 0.0,
            table: Some(Arc::new(FrameTable::new(times, time_scale))),
        }
    }

    /// Duration in seconds.
    pub(crate) fn duration(&self) -> f32 {
        self.duration
    }

    /// Number of frames.
    pub(crate) fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// True when sampling wraps.
    pub(crate) fn is_looping(&self) -> bool {
        self.looping
    }

    /// Heap bytes of the frame-time table, 0 for uniform frames.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.table.as_ref().map_or(0, |t| {
            size_of_val(t.times.as_slice()) + size_of_val(t.starts.as_slice())
        })
    }

    /// The time of frame `i`: for uniform frames `i * duration / (frame_count - 1)`, exactly the duration for the
    /// last frame; the table's entry otherwise. Past the last frame, the duration.
    pub(crate) fn frame_time(&self, i: usize) -> f32 {
        if i + 1 >= self.frame_count {
            return if self.frame_count <= 1 { 0.0 } else { self.duration };
        }
        match &self.table {
            Some(table) => table.times[i],
            None => (i as f64 * f64::from(self.duration) / (self.frame_count - 1) as f64) as f32,
        }
    }

    /// The length of the last frame interval, 0 for a single frame.
    pub(crate) fn last_interval(&self) -> f32 {
        if self.frame_count <= 1 {
            0.0
        } else {
            self.duration - self.frame_time(self.frame_count - 2)
        }
    }

    /// The frame `f` and the fraction `u` in `[0, 1]` of the way to frame `f + 1` for a finite `time`, wrapped
    /// for a looping clip and clamped otherwise. The last frame's time (the duration, for a clip that clamps) gives
    /// `(frame_count - 1, 0.0)`, so that STEP lanes, which hold frame `f`, show the last frame there; the stored
    /// tracks repeat the last frame once, so frame `f + 1` always exists. With a single frame, `(0, 0.0)`.
    #[inline]
    pub(crate) fn coords(&self, time: f32) -> (usize, f32) {
        let t = if self.looping {
            time.rem_euclid(self.duration)
        } else {
            time.clamp(0.0, self.duration)
        };
        self.coords_in_range(t)
    }

    /// As [`Timeline::coords`], but always clamping to `[0, duration]`, even for a looping clip.
    #[inline]
    pub(crate) fn coords_clamped(&self, time: f32) -> (usize, f32) {
        self.coords_in_range(time.clamp(0.0, self.duration))
    }

    #[inline]
    fn coords_in_range(&self, t: f32) -> (usize, f32) {
        if let Some(table) = &self.table {
            return table.coords(t, self.time_scale);
        }
        let x = t * self.time_scale;
        // `as` floors the non-negative x (and maps NaN to 0).
        let f = (x as usize).min(self.frame_count - 1);
        let u = if f + 1 < self.frame_count {
            (x - f as f32).min(1.0)
        } else {
            0.0
        };
        (f, u)
    }
}

/// `ceil(duration * rate) + 1` frames, or 1 for a zero duration. A product within a thousandth of an integer
/// counts as that integer, so that a 1.1 s clip at 30 Hz gets 34 frames, not 35, despite the f32 rounding of
/// the duration (the frames are then at most a thousandth of an interval further apart than `1 / rate`).
pub(crate) fn frame_count(duration: f32, rate: f32) -> usize {
    if duration <= 0.0 {
        return 1;
    }
    let intervals = (f64::from(duration) * f64::from(rate) - 1e-3).ceil().max(1.0);
    intervals as usize + 1
}

/// Builders of frame-time lists for [`Timeline::table`]: each returns times strictly increasing from exactly 0 to
/// exactly `duration` (`duration > 0`).
pub(crate) struct FrameTimes;

impl FrameTimes {
    /// `frame_count` uniform frames with the times of `steps` added (STEP keys, any order, duplicates allowed;
    /// those outside `(0, duration)` are already frames). A uniform frame closer than a thousandth of an interval
    /// to an added time gives way to it, so a key on a uniform frame still gives a table. `None` when `steps` has
    /// no time inside: the frames stay uniform.
    pub(crate) fn uniform_with(duration: f32, frame_count: usize, steps: &[f32]) -> Option<Vec<f32>> {
        let mut extra: Vec<f32> = steps.iter().copied().filter(|&t| t > 0.0 && t < duration).collect();
        if extra.is_empty() {
            return None;
        }
        extra.sort_by(f32::total_cmp);
        extra.dedup();
        let uniform = Timeline::uniform(duration, frame_count, false);
        let n = uniform.frame_count();
        let tolerance = 1e-3 * uniform.last_interval();
        let mut out = Vec::with_capacity(n + extra.len());
        let mut e = 0;
        for i in 0..n {
            let t = uniform.frame_time(i);
            let end = i == 0 || i + 1 == n;
            // The added times before this frame; the first and last frames never give way.
            while e < extra.len() && (extra[e] < t - tolerance || (end && extra[e] < t)) {
                out.push(extra[e]);
                e += 1;
            }
            let gives_way = !end && e < extra.len() && extra[e] <= t + tolerance;
            if !gives_way {
                out.push(t);
            }
        }
        Some(strictly_increasing(out))
    }

    /// The union of every list in `keys` (key times within `[0, duration]`), with 0 and `duration`; times closer
    /// than `tolerance` to the previous one kept are merged into it (the earliest stays, so that a STEP key never
    /// switches late).
    pub(crate) fn key_union<'k>(duration: f32, keys: impl Iterator<Item = &'k [f32]>, tolerance: f32) -> Vec<f32> {
        let mut all: Vec<f32> = keys.flatten().copied().filter(|&t| t > 0.0 && t < duration).collect();
        all.sort_by(f32::total_cmp);
        let mut out = Vec::with_capacity(all.len() + 2);
        out.push(0.0);
        for t in all {
            if out.last().is_some_and(|&last| t - last > tolerance) {
                out.push(t);
            }
        }
        if out.last().is_some_and(|&last| duration - last <= tolerance) && out.len() > 1 {
            out.pop();
        }
        out.push(duration);
        out
    }

    /// Every interval of `times` cut into `parts` equal parts (computed in f64; parts that round onto a
    /// neighbour in f32 are dropped).
    pub(crate) fn subdivided(times: &[f32], parts: usize) -> Vec<f32> {
        if parts <= 1 {
            return times.to_vec();
        }
        let mut out = Vec::with_capacity((times.len().max(1) - 1) * parts + 1);
        for pair in times.windows(2) {
            let (a, b) = (f64::from(pair[0]), f64::from(pair[1]));
            out.extend((0..parts).map(|j| (a + (b - a) * j as f64 / parts as f64) as f32));
        }
        out.extend(times.last());
        strictly_increasing(out)
    }

    /// `times` with the midpoint of interval `i` (from `times[i]` to `times[i + 1]`) added for every `i` in `split`
    /// (ascending; computed in f64, and dropped when it rounds onto a neighbour in f32).
    pub(crate) fn split(times: &[f32], split: &[usize]) -> Vec<f32> {
        let mut out = Vec::with_capacity(times.len() + split.len());
        let mut next = split.iter().copied().peekable();
        for (i, &t) in times.iter().enumerate() {
            out.push(t);
            if next.next_if_eq(&i).is_some()
                && let Some(&b) = times.get(i + 1)
            {
                out.push((0.5 * (f64::from(t) + f64::from(b))) as f32);
            }
        }
        strictly_increasing(out)
    }
}

/// `times` (ascending) without the entries that do not exceed the one before.
fn strictly_increasing(mut times: Vec<f32>) -> Vec<f32> {
    times.dedup_by(|next, kept| *next <= *kept);
    times
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_adds_the_midpoints_of_the_intervals_named() {
        assert_eq!(
            FrameTimes::split(&[0.0, 1.0, 2.0, 4.0], &[0, 2]),
            [0.0, 0.5, 1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(FrameTimes::split(&[0.0, 1.0], &[]), [0.0, 1.0]);
        // A midpoint that rounds onto a neighbour in f32 is dropped.
        let next = f32::from_bits(1.0f32.to_bits() + 1);
        assert_eq!(FrameTimes::split(&[0.0, 1.0, next], &[0, 1]), [0.0, 0.5, 1.0, next]);
    }

    #[test]
    fn frame_count_covers_the_duration_with_uniform_frames() {
        assert_eq!(frame_count(0.0, 30.0), 1);
        assert_eq!(frame_count(1.1, 30.0), 34);
        assert_eq!(frame_count(1.0, 15.0), 16);
        assert_eq!(frame_count(1e-4, 15.0), 2);
        let timeline = Timeline::uniform(1.1, 34, false);
        assert_eq!(timeline.frame_time(33), 1.1);
        assert_eq!(timeline.coords(1.1), (33, 0.0));
        let (f, u) = timeline.coords(1.1f32.next_down());
        assert!(f == 32 && u > 0.9999, "just before the end: ({f}, {u})");
        assert_eq!(timeline.coords(-3.0), (0, 0.0));
        assert_eq!(Timeline::uniform(0.0, 1, true).coords(5.0), (0, 0.0));
    }

    /// The frame and fraction of `t` by a plain scan, the twin of the bucket search.
    fn scan(times: &[f32], t: f32) -> (usize, f32) {
        let f = (0..times.len()).rev().find(|&f| times[f] <= t).unwrap_or(0);
        let u = times
            .get(f + 1)
            .map_or(0.0, |&t1| ((t - times[f]) / (t1 - times[f])).clamp(0.0, 1.0));
        (f, u)
    }

    #[test]
    fn tables_find_the_frame_of_every_time_as_a_scan_does() {
        // Clustered frames (many in one bucket), long gaps (empty buckets), and times a few ulps apart.
        let mut times = vec![0.0f32, 0.001, 0.0010001, 0.0010002, 0.5, 0.50001, 3.0];
        times.extend((1..40).map(|i| 3.0 + i as f32 * 0.013));
        times.push(10.0);
        let timeline = Timeline::table(times.clone(), false);
        assert_eq!(timeline.frame_count(), times.len());
        let mut probes: Vec<f32> = times.clone();
        for &t in &times {
            probes.extend([t.next_up(), t.next_down(), t + 1e-4, t - 1e-4]);
        }
        probes.extend((0..=2000).map(|i| i as f32 * 0.005));
        for t in probes.into_iter().filter(|t| (0.0..=10.0).contains(t)) {
            assert_eq!(timeline.coords(t), scan(&times, t), "t = {t}");
        }
        assert_eq!(timeline.coords(-1.0), (0, 0.0));
        assert_eq!(timeline.coords(11.0), (times.len() - 1, 0.0));
        assert_eq!(timeline.frame_time(3), 0.0010002);
        assert_eq!(timeline.last_interval(), 10.0 - times[times.len() - 2]);
        let looping = Timeline::table(times.clone(), true);
        assert_eq!(looping.coords(10.5), scan(&times, 0.5));
    }

    #[test]
    fn tables_reject_what_is_not_strictly_increasing_from_zero() {
        for bad in [
            vec![],
            vec![0.0],
            vec![0.5, 1.0],
            vec![0.0, 1.0, 1.0],
            vec![0.0, f32::INFINITY],
        ] {
            let t = Timeline::table(bad.clone(), false);
            assert_eq!((t.frame_count(), t.duration()), (1, 0.0), "{bad:?}");
        }
    }

    #[test]
    fn uniform_frames_take_in_step_keys() {
        // 1 s at 10 frames per second, STEP keys off the grid, one on it, one within a thousandth of an interval
        // of a frame, and some outside the open interval.
        let steps = [0.05, 0.45, 0.3, 0.6000001, 0.45, 0.0, 1.0, 1.3];
        let times = FrameTimes::uniform_with(1.0, 11, &steps).expect("keys added");
        let expected = [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.6000001, 0.7, 0.8, 0.9, 1.0];
        assert_eq!(times, expected);
        // A STEP key on a uniform frame still makes a table, whose lookup compares times exactly as the exact
        // evaluator does (the uniform lookup's product can round a frame's own time into the interval before it).
        let on_grid = FrameTimes::uniform_with(1.0, 11, &[0.0, 1.0, 0.2]).expect("a key inside");
        assert_eq!(on_grid.len(), 11);
        assert_eq!(FrameTimes::uniform_with(1.0, 11, &[0.0, 1.0]), None);
    }

    #[test]
    fn key_unions_merge_close_times_and_subdivide() {
        let a = [0.1f32, 0.5, 1.0];
        let b = [0.1f32, 0.3, 0.500001, 0.99999];
        let union = FrameTimes::key_union(1.0, [&a[..], &b[..]].into_iter(), 1e-4);
        assert_eq!(union, [0.0, 0.1, 0.3, 0.5, 1.0]);
        assert_eq!(
            FrameTimes::subdivided(&union, 2),
            [0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0]
        );
        let tight = [0.0, 1.0, 1.0f32.next_up()];
        assert_eq!(
            FrameTimes::subdivided(&tight, 4),
            [0.0, 0.25, 0.5, 0.75, 1.0, 1.0f32.next_up()]
        );
    }
}
