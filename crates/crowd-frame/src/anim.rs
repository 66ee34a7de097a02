//! The one animation state of a crowd instance, and how it maps onto the pose pool.
//!
//! An instance's state is `crowd_cull::AnimState`, stored per slot by the crowd's `InstanceStore` (so that culling
//! covers both clips of a crossfade), with clips in the [`ClipId`] space. crowd-frame gives its fields one meaning:
//!
//! - Without a crossfade (`fade_target == None`), the instance plays `clip`, at clip time
//!   `(now - start_time) * speed`, where `now` is the frame's animation clock. It maps the pool track `clip` at
//!   that time (`anim_pose::PosePool::map`).
//! - In a crossfade from clip `A = clip` to clip `B = fade_target`, `start_time` and `speed` give the instance's
//!   time in `B`, `t_B = (now - start_time) * speed`, and `fade_weight` is `B`'s weight this frame. The pool
//!   blends `A` at `B`'s normalized phase, so the instance maps the crossfade bucket of `(A, B, fade_weight)`
//!   ([`anim_pose::PosePool::request_crossfade`]) at `t_B` scaled by the bucket's time scale. A unique instance
//!   blends `A` at `PosePool::synced_time(B, A, t_B)` with `B` at `t_B` the same way.
//! - A clip switch with a fade ([`CrowdFrame::play`](crate::CrowdFrame::play)) starts such a crossfade from the
//!   clip showing most (`B` from weight 0.5 on) at the phase it shows, so that no clip jumps in time: `B` starts at
//!   `synced_time(A, B, t_A)`. The frame advances `fade_weight` linearly to 1 over the fade, then leaves the
//!   instance on `B` alone, at the same `start_time`. Switching back to `A` during the fade reverses it from its
//!   weight; switching to a third clip starts a new fade from the dominant clip (the other one's share, at most
//!   half, is dropped at once).
//! - A switch without a fade starts the new clip at time 0.
//!
//! `now` and every start time are the crowd's animation time: `f32` seconds since the clock's epoch, which moves
//! forward every [`REBASE_AFTER`](crate::REBASE_AFTER) seconds (rewriting every start time so that no pose changes),
//! so they resolve 61 µs or better however long the crowd runs. The clock itself is `f64` seconds
//! ([`CrowdFrame::time`](crate::CrowdFrame::time)).

use crowd_cull::AnimState;
use glam::{Quat, Vec3, Vec4};

use crate::character::ClipId;

/// A new instance: where it stands and what it plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spawn {
    /// World position.
    pub position: Vec3,
    /// World rotation, of unit length within 1e-3 (it is renormalised).
    pub rotation: Quat,
    /// Uniform scale, within [`SCALE_MIN`](crate::SCALE_MIN)`..=`[`SCALE_MAX`](crate::SCALE_MAX).
    pub scale: f32,
    /// The clip to play.
    pub clip: ClipId,
    /// The clip time at the frame's current clock, in seconds: a phase offset.
    pub time: f32,
    /// Playback speed, 1 = normal; finite.
    pub speed: f32,
    /// The RGBA tint in `[0, 1]`, passed to the record (a game may use it for other data).
    pub tint: Vec4,
}

impl Spawn {
    /// An instance at `position`, unrotated, unit scale, playing `clip` from time 0 at normal speed, white.
    pub fn at(position: Vec3, clip: ClipId) -> Self {
        Self {
            position,
            rotation: Quat::IDENTITY,
            scale: 1.0,
            clip,
            time: 0.0,
            speed: 1.0,
            tint: Vec4::ONE,
        }
    }
}

/// The instance's time in the clip it plays (in a crossfade: in the clip it fades to).
pub fn clip_time(anim: &AnimState, now: f32) -> f32 {
    (now - anim.start_time) * anim.speed
}

/// The `start_time` that puts an instance of playback `speed` at clip time `t` when the clock reads `now`.
pub(crate) fn start_for(t: f32, speed: f32, now: f32) -> f32 {
    if speed == 0.0 { now } else { now - t / speed }
}

/// The clip an instance shows most, and its time in that clip: `(clip, t)` without a crossfade; in a crossfade,
/// the target from weight 0.5 on, the source below (at the source's synced time, from `synced`).
pub(crate) fn dominant(anim: &AnimState, now: f32, synced: impl Fn(u16, u16, f32) -> f32) -> (u16, f32) {
    let t = clip_time(anim, now);
    match anim.fade_target {
        Some(to) if anim.fade_weight >= 0.5 => (to as u16, t),
        Some(to) => (anim.clip as u16, synced(to as u16, anim.clip as u16, t)),
        None => (anim.clip as u16, t),
    }
}

/// The state after switching to `to` when the clock reads `now`, given the state before; its `fade_weight` is
/// the weight the crossfade starts from.
///
/// With `fade > 0` it starts a crossfade (see the module docs); `synced(a, b, t)` is `PosePool::synced_time`.
/// Switching back to the source of a running crossfade reverses it from where it is (weight `1 - w`). With
/// `fade <= 0` it plays `to` from time 0. Switching to the clip already playing alone, or already faded to,
/// changes nothing.
pub(crate) fn switch(
    anim: &AnimState,
    to: ClipId,
    fade: f32,
    now: f32,
    synced: impl Fn(u16, u16, f32) -> f32,
) -> AnimState {
    let to32 = u32::from(to.0);
    if anim.fade_target == Some(to32) || (anim.fade_target.is_none() && anim.clip == to32) {
        return *anim;
    }
    if fade <= 0.0 {
        return AnimState {
            clip: to32,
            start_time: now,
            speed: anim.speed,
            fade_target: None,
            fade_weight: 0.0,
        };
    }
    let t = clip_time(anim, now);
    let (from, t_from, weight) = match anim.fade_target {
        // Reversing: fade from the target back to the source, from the weight it has reached.
        Some(b) if anim.clip == to32 => (b as u16, t, 1.0 - anim.fade_weight),
        _ => {
            let (from, t_from) = dominant(anim, now, &synced);
            (from, t_from, 0.0)
        }
    };
    AnimState {
        clip: u32::from(from),
        start_time: start_for(synced(from, to.0, t_from), anim.speed, now),
        speed: anim.speed,
        fade_target: Some(to32),
        fade_weight: weight,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Phase sync between clips of durations 1 s (clip 0) and 2 s (clip 1).
    fn synced(a: u16, b: u16, t: f32) -> f32 {
        let d = |c: u16| if c == 0 { 1.0 } else { 2.0 };
        (t / d(a)).rem_euclid(1.0) * d(b)
    }

    #[test]
    fn a_faded_switch_continues_the_phase() {
        let anim = AnimState {
            speed: 2.0,
            ..AnimState::clip(0)
        };
        // At now = 0.2 the instance is 0.4 s into clip 0 (phase 0.4); clip 1 continues at 0.8 s.
        let next = switch(&anim, ClipId(1), 0.25, 0.2, synced);
        assert_eq!((next.clip, next.fade_target, next.fade_weight), (0, Some(1), 0.0));
        assert!((clip_time(&next, 0.2) - 0.8).abs() < 1e-6);
        // Half way, the target dominates and a switch back fades from it.
        let half = AnimState {
            fade_weight: 0.6,
            ..next
        };
        let back = switch(&half, ClipId(0), 0.25, 0.3, synced);
        assert_eq!((back.clip, back.fade_target), (1, Some(0)));
        assert!(
            (back.fade_weight - 0.4).abs() < 1e-6,
            "a reversal starts where the fade was"
        );
        assert!((clip_time(&back, 0.3) - synced(1, 0, clip_time(&half, 0.3))).abs() < 1e-6);
    }

    #[test]
    fn unfaded_switches_and_repeats() {
        let anim = AnimState::clip(0);
        let cut = switch(&anim, ClipId(1), 0.0, 5.0, synced);
        assert_eq!((cut.clip, cut.fade_target, cut.start_time), (1, None, 5.0));
        assert_eq!(switch(&cut, ClipId(1), 0.3, 6.0, synced), cut);
        assert_eq!(switch(&cut, ClipId(1), 0.0, 6.0, synced), cut);
        let fading = switch(&anim, ClipId(1), 0.3, 1.0, synced);
        assert_eq!(switch(&fading, ClipId(1), 0.3, 1.1, synced), fading);
    }
}
