//! The crowd's clock: seconds since the crowd was made in `f64`, and the `f32` animation time the instances' states
//! hold, relative to an epoch that moves forward every [`REBASE_AFTER`] seconds so that it never loses precision.

use anim_pose::RuntimeClip;
use crowd_cull::AnimState;
use skin_pack::PaletteFormat;

use super::CrowdFrame;
use crate::Result;

/// How far the animation time runs past its epoch before the epoch moves, in seconds.
///
/// Every instance's start time, each crossfade's start, the pose pool's time and the GPU's clock are `f32` seconds
/// relative to the epoch, so they resolve at least `2^-24 · 2 · REBASE_AFTER` = 61 µs (0.4% of a 60 Hz frame), at
/// any age of the crowd. Moving the epoch rewrites every instance's start time (O(instances), in parallel) and makes
/// the next GPU-driven packet a full resend, so it should be rare: once every 8.5 minutes.
pub const REBASE_AFTER: f32 = 512.0;

/// How far outside `[0, duration]` a clamped (non-looping) clip's time is kept when the epoch moves, in seconds: its
/// pose is the same past the ends, and the bound keeps the rewritten start times small.
const CLAMPED_SLACK: f64 = REBASE_AFTER as f64;

/// The crowd's clock.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Clock {
    /// Seconds since the crowd was made: the sum of the steps' `dt`.
    seconds: f64,
    /// The clock reading that animation time 0 stands for.
    epoch: f64,
}

impl Clock {
    /// Seconds since the crowd was made.
    pub(super) fn seconds(&self) -> f64 {
        self.seconds
    }

    /// The animation time: seconds since the epoch, in `f32`.
    pub(super) fn now(&self) -> f32 {
        (self.seconds - self.epoch) as f32
    }

    /// The animation time in `f64`, exact.
    fn now_f64(&self) -> f64 {
        self.seconds - self.epoch
    }
}

impl<F: PaletteFormat> CrowdFrame<F> {
    /// Advances the clock by `dt` (checked finite and non-negative) and moves the epoch to the new reading when the
    /// animation time has run past [`REBASE_AFTER`].
    pub(super) fn advance_clock(&mut self, dt: f32) -> Result<()> {
        self.clock.seconds += f64::from(dt);
        if self.clock.now_f64() >= f64::from(REBASE_AFTER) {
            self.rebase()?;
        }
        Ok(())
    }

    /// Moves the epoch to the clock's reading: the animation time becomes 0, and every instance's start time and
    /// every crossfade's start move back by the old animation time, each clip time computed in `f64` and wrapped
    /// into the clip (looping) or kept within [`CLAMPED_SLACK`] of it (clamped). Poses do not change. The next
    /// GPU-driven packet is a full resend.
    fn rebase(&mut self) -> Result<()> {
        let shift = self.clock.now_f64();
        let clips = self.character.clips();
        self.store
            .rebase_start_times(self.group, |anim| rebased_start(anim, shift, clips))?;
        // Crossfade timings are relative to the epoch too; a fade's length and weight do not change.
        for f in &mut self.fade_of {
            f.shift_start(shift);
        }
        self.clock.epoch = self.clock.seconds;
        self.resend.rebased();
        Ok(())
    }
}

/// The start time, relative to the new epoch, that keeps `anim`'s pose when the epoch moves forward by `shift`
/// seconds (the old animation time).
fn rebased_start(anim: &AnimState, shift: f64, clips: &[RuntimeClip]) -> f32 {
    let speed = f64::from(anim.speed);
    if speed == 0.0 {
        // A paused instance's clip time does not depend on its start time.
        return 0.0;
    }
    let t = (shift - f64::from(anim.start_time)) * speed;
    let clip = anim.fade_target.unwrap_or(anim.clip) as usize;
    let t = match clips.get(clip) {
        Some(c) if c.is_looping() => t.rem_euclid(f64::from(c.duration())),
        Some(c) => t.clamp(-CLAMPED_SLACK, f64::from(c.duration()) + CLAMPED_SLACK),
        None => t,
    };
    (-t / speed) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rebased_start_keeps_the_clip_time() {
        let anim = AnimState {
            start_time: 100.25,
            speed: 1.5,
            ..AnimState::clip(0)
        };
        // No clip table: the time is kept as it is.
        let start = rebased_start(&anim, 600.0, &[]);
        let before = (600.0 - 100.25) * 1.5;
        let after = (0.0 - f64::from(start)) * 1.5;
        assert!((after - before).abs() < 1e-3, "{after} != {before}");
        let paused = AnimState { speed: 0.0, ..anim };
        assert_eq!(rebased_start(&paused, 600.0, &[]), 0.0);
    }
}
