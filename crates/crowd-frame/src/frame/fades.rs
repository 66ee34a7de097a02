//! The crossfades of a [`CrowdFrame`]: the list of fading instances, each one's timing (what the instance's
//! `AnimState` does not hold), and their progress at each step.

use crowd_cull::{AnimState, Handle};
use skin_pack::PaletteFormat;

use super::CrowdFrame;
use crate::Result;

/// Marks a handle with no crossfade in [`CrowdFrame`]'s per-handle fade index.
const NO_FADE: u32 = u32::MAX;

/// What a crossfade adds to the instance's `AnimState` (which holds the clips and the weight): the clock time at
/// which the weight is 0, and the fade's length in seconds.
#[derive(Clone, Copy, Debug)]
pub(super) struct FadeTiming {
    pub(super) fade_start: f32,
    pub(super) duration: f32,
}

/// Per handle-table index: where the handle is in [`CrowdFrame`]'s list of fading instances ([`NO_FADE`] when it
/// is not), and the timing of its latest crossfade.
#[derive(Clone, Copy, Debug)]
pub(super) struct FadeSlot {
    at: u32,
    timing: FadeTiming,
}

impl FadeSlot {
    pub(super) const NONE: Self = Self {
        at: NO_FADE,
        timing: FadeTiming {
            fade_start: 0.0,
            duration: 0.0,
        },
    };

    /// Moves the fade's start back by `shift` seconds: the clock's epoch moved forward by as much.
    pub(super) fn shift_start(&mut self, shift: f64) {
        self.timing.fade_start = (f64::from(self.timing.fade_start) - shift) as f32;
    }
}

impl<F: PaletteFormat> CrowdFrame<F> {
    /// The timing of `handle`'s crossfade, if it is in the fading list.
    pub(super) fn fade_timing(&self, handle: Handle) -> Option<FadeTiming> {
        let f = self.fade_of.get(handle.index as usize)?;
        (f.at != NO_FADE && self.fading.get(f.at as usize) == Some(&handle)).then_some(f.timing)
    }

    /// Records the timing of `handle`'s new crossfade, adding it to the fading list unless it is there.
    pub(super) fn start_fade(&mut self, handle: Handle, timing: FadeTiming) {
        let listed = self.fade_timing(handle).is_some();
        if let Some(f) = self.fade_of.get_mut(handle.index as usize) {
            f.timing = timing;
            if !listed {
                f.at = self.fading.len() as u32;
                self.fading.push(handle);
            }
        }
    }

    /// Drops entry `i` of the fading list (a swap removal), keeping `fade_of` in step.
    pub(super) fn remove_fade(&mut self, i: usize) {
        let last = self.fading.len() - 1;
        let removed = self.fading.swap_remove(i);
        if let Some(f) = self.fade_of.get_mut(removed.index as usize)
            && f.at == i as u32
        {
            f.at = NO_FADE;
        }
        if i < last
            && let Some(f) = self.fade_of.get_mut(self.fading[i].index as usize)
            && f.at == last as u32
        {
            f.at = i as u32;
        }
    }

    /// Advances every crossfade's weight to the clock, ends the finished ones, and drops the entries of removed
    /// instances and of instances switched to a clip without a fade. Returns the number of crossfades still running.
    pub(super) fn progress_fades(&mut self) -> Result<usize> {
        let now = self.clock.now();
        let mut i = 0;
        while i < self.fading.len() {
            let handle = self.fading[i];
            let current = self.store.get(handle).ok().map(|inst| inst.desc.anim);
            let (Some(mut anim), Some(f)) = (current, self.fade_of.get(handle.index as usize).map(|f| f.timing)) else {
                self.remove_fade(i);
                continue;
            };
            let Some(to) = anim.fade_target else {
                self.remove_fade(i);
                continue;
            };
            let w = ((now - f.fade_start) / f.duration).clamp(0.0, 1.0);
            if w >= 1.0 {
                anim = AnimState {
                    clip: to,
                    fade_target: None,
                    fade_weight: 0.0,
                    ..anim
                };
                self.store.set_animation(handle, &anim)?;
                self.remove_fade(i);
                continue;
            }
            anim.fade_weight = w;
            self.store.set_animation(handle, &anim)?;
            i += 1;
        }
        Ok(self.fading.len())
    }
}
