//! The clip table: where each clip's frames sit in a part's shared frame sequence, and how a clip time maps to the
//! two frames the GPU interpolates.

use bytemuck::{Pod, Zeroable};

/// The size of a [`ClipRecord`] in bytes: eight 4-byte scalars, so that a WGSL `array<ClipRecord>` has a 32-byte
/// stride in both storage and uniform buffers.
pub const CLIP_RECORD_SIZE: usize = 32;

/// [`ClipRecord::flags`] bit 0: the clip loops (the time wraps modulo the duration); otherwise it clamps.
pub const CLIP_LOOPING: u32 = 1;

/// One clip of one baked part (bone animation, vertex animation or sockets), as the GPU reads it.
///
/// Every part stores its clips' frames one after another in one frame sequence: clip `c`'s frame `k` is the part's
/// frame `first_frame + k`. Frames are uniform in time, `1 / rate_hz` apart, from time 0 to the duration: a clip
/// of `n` intervals stores `frame_count = n + 1` frames, and frame `n` is the pose at the duration.
/// So every frame `i < frame_count − 1` has a frame `i + 1` to interpolate towards, looping or not.
///
/// # Loops
///
/// Frame 0 is not stored twice. The last frame is the clip's own pose at its duration, which for a looping glTF
/// clip is the seam pose: exporters key the first pose again at the end, and `Looping::Auto` loops a clip only
/// when its poses at 0 and at the duration are within the vertex-error budget of each other. A looping clip's
/// time wraps modulo the duration, so after the last interval (frame `n − 1` towards frame `n`) playback
/// continues from frame 0; the jump there is the seam distance that `BakeReport` measures (at most the budget
/// when the clip was found to loop). A non-looping clip clamps its time to `[0, duration]`.
///
/// # Shader
///
/// [`ClipRecord::frame_at`] is the CPU twin of this WGSL, which a shader should spell the same way:
///
/// ```wgsl
/// struct ClipRecord {
///     first_frame: u32, frame_count: u32, rate_hz: f32, duration: f32,
///     flags: u32, first_segment: u32, segment_count: u32, reserved: u32,
/// }
/// // The part's frame index of the first of the two frames at clip time `t`, and the fraction towards the next.
/// fn clip_frame(c: ClipRecord, t: f32) -> vec2<f32> /* (bitcast<f32>(frame), fraction) */ {
///     var local = clamp(t, 0.0, c.duration);
///     if ((c.flags & 1u) != 0u && c.duration > 0.0) { local = t - c.duration * floor(t / c.duration); }
///     let x = local * c.rate_hz;
///     let i = min(u32(max(floor(x), 0.0)), c.frame_count - 2u);
///     let f = clamp(x - f32(i), 0.0, 1.0);
///     return vec2<f32>(bitcast<f32>(c.first_frame + i), f);
/// }
/// ```
///
/// The value at `t` is then `mix(value[frame], value[frame + 1], f)`: the decoded rows of two palette entries,
/// two decoded vertex positions (normals are mixed, then normalized), or two socket transforms.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ClipRecord {
    /// The part's frame index of the clip's frame 0.
    pub first_frame: u32,
    /// The clip's stored frames, at least 2: the intervals plus one.
    pub frame_count: u32,
    /// Frames per second: `(frame_count − 1) / duration`, or 0 for a clip of zero duration.
    pub rate_hz: f32,
    /// The clip's duration in seconds.
    pub duration: f32,
    /// [`CLIP_LOOPING`] or 0.
    pub flags: u32,
    /// The index of the clip's first time segment in `BakedBounds::segments`.
    pub first_segment: u32,
    /// The clip's time segments, at least 1 (see `BakedBounds`).
    pub segment_count: u32,
    /// Zero.
    pub reserved: u32,
}

const _: () = assert!(size_of::<ClipRecord>() == CLIP_RECORD_SIZE);
const _: () = assert!(align_of::<ClipRecord>() == 4);

/// The two frames around a clip time and the fraction between them, from [`ClipRecord::frame_at`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FramePair {
    /// The part's frame index of the first frame; the second is `frame + 1`.
    pub frame: u32,
    /// The weight of the second frame, in `[0, 1]`.
    pub fraction: f32,
}

impl ClipRecord {
    /// True when the clip loops.
    pub fn is_looping(&self) -> bool {
        self.flags & CLIP_LOOPING != 0
    }

    /// The clip time the GPU plays at time `t`: `t` wrapped modulo the duration for a looping clip, clamped to
    /// `[0, duration]` otherwise (the `local` of the shader in the type's docs).
    pub fn local_time(&self, t: f32) -> f32 {
        if self.is_looping() && self.duration > 0.0 {
            t - self.duration * (t / self.duration).floor()
        } else {
            t.clamp(0.0, self.duration)
        }
    }

    /// The two frames to interpolate at clip time `t` and the fraction between them, computed as the shader in the
    /// type's docs computes them. The frame is always below `first_frame + frame_count − 1`, so the second frame
    /// exists; a non-finite `t` gives frame 0 of the clip (a NaN converts to 0).
    ///
    /// `frame_count` must be at least 2 (every record of a validated bake's has it).
    pub fn frame_at(&self, t: f32) -> FramePair {
        let x = self.local_time(t) * self.rate_hz;
        let last = self.frame_count.saturating_sub(2);
        // `as` saturates and maps NaN to 0, as the shader's `u32(max(floor(x), 0.0))` does for finite `x`.
        let i = (x.floor().max(0.0) as u32).min(last);
        let fraction = (x - i as f32).clamp(0.0, 1.0);
        FramePair {
            frame: self.first_frame.wrapping_add(i),
            fraction: if fraction.is_nan() { 0.0 } else { fraction },
        }
    }

    /// The time of the clip's frame `k` (`k / rate_hz`, or 0 for a clip of zero duration), exactly as the bake
    /// sampled it: `duration · k / (frame_count − 1)`.
    pub fn frame_time(&self, k: u32) -> f32 {
        frame_time(self.duration, self.frame_count.saturating_sub(1), k)
    }

    /// The index of the time segment that holds clip time `t` (wrapped or clamped as [`ClipRecord::local_time`]),
    /// relative to `first_segment`: `min(floor(local / duration · segment_count), segment_count − 1)`, 0 for a clip
    /// of zero duration.
    pub fn segment_at(&self, t: f32) -> u32 {
        let n = self.segment_count.max(1);
        if self.duration <= 0.0 {
            return 0;
        }
        let s = (self.local_time(t) / self.duration * n as f32).floor().max(0.0) as u32;
        s.min(n - 1)
    }
}

/// The time of frame `k` of a clip of `duration` seconds cut into `intervals` equal intervals.
fn frame_time(duration: f32, intervals: u32, k: u32) -> f32 {
    if intervals == 0 {
        return 0.0;
    }
    if k >= intervals {
        return duration;
    }
    (f64::from(duration) * f64::from(k) / f64::from(intervals)) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(frames: u32, duration: f32, looping: bool) -> ClipRecord {
        ClipRecord {
            first_frame: 10,
            frame_count: frames,
            rate_hz: (frames - 1) as f32 / duration,
            duration,
            flags: if looping { CLIP_LOOPING } else { 0 },
            first_segment: 0,
            segment_count: 8,
            reserved: 0,
        }
    }

    #[test]
    fn frames_cover_the_clip_and_the_next_frame_exists() {
        for looping in [false, true] {
            let c = record(31, 1.0, looping);
            for step in -200..=400 {
                let t = step as f32 / 137.0;
                let p = c.frame_at(t);
                assert!(p.frame >= 10 && p.frame < 10 + 30, "t {t}: frame {}", p.frame);
                assert!((0.0..=1.0).contains(&p.fraction));
            }
            assert_eq!(
                c.frame_at(0.0),
                FramePair {
                    frame: 10,
                    fraction: 0.0
                }
            );
            // The duration itself is frame 30 (the seam frame) when clamped, and frame 0 when wrapped.
            let end = c.frame_at(1.0);
            if looping {
                assert_eq!(
                    end,
                    FramePair {
                        frame: 10,
                        fraction: 0.0
                    }
                );
            } else {
                assert_eq!(
                    end,
                    FramePair {
                        frame: 39,
                        fraction: 1.0
                    }
                );
            }
            assert_eq!(c.frame_at(f32::NAN).frame, 10);
        }
    }

    #[test]
    fn frame_times_match_the_lookup() {
        let c = record(34, 1.1, true);
        for k in 0..33 {
            let p = c.frame_at(c.frame_time(k));
            let x = p.frame - 10;
            // A frame's own time maps to that frame, or to the end of the previous interval.
            assert!(
                (x == k && p.fraction < 1e-4) || (x + 1 == k && p.fraction > 1.0 - 1e-4),
                "{k}: {p:?}"
            );
        }
        assert_eq!(c.frame_time(33), 1.1);
    }

    #[test]
    fn segments() {
        let c = record(31, 2.0, false);
        assert_eq!(c.segment_at(-1.0), 0);
        assert_eq!(c.segment_at(0.26), 1);
        assert_eq!(c.segment_at(2.0), 7);
        assert_eq!(c.segment_at(9.0), 7);
        let still = ClipRecord {
            duration: 0.0,
            rate_hz: 0.0,
            ..c
        };
        assert_eq!(still.segment_at(1.0), 0);
        assert_eq!(
            still.frame_at(1.0),
            FramePair {
                frame: 10,
                fraction: 0.0
            }
        );
    }
}
