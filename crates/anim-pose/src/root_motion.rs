//! Root motion: the root joint's horizontal translation and yaw, extracted from a clip.
//!
//! With [`crate::RuntimeClipOptions::extract_root_motion`], the build splits joint 0's motion in two:
//! - the **root motion**: the root's horizontal offset (the XZ plane of the root's parent space, glTF +Y up)
//!   and its yaw (the twist about +Y of a swing-twist decomposition) since time 0, sampled at the clip's frames;
//! - the **in-place clip**: the root keeps its translation's XZ at time 0, and its rotation loses the change of
//!   yaw since time 0 (`twist(0) * twist(t)⁻¹ * q(t)`, where the twist is applied in the parent space).
//!
//! The root-motion frame at time `t` has its origin at the root's horizontal position and its heading turned by
//! the extracted yaw. Moving an entity by [`RootMotion::displacement`] and playing the in-place clip about the
//! root's start position gives back the original motion, within the resampling error.
//!
//! Displacements compose like 2D rigid motions: `a.then(b)` is `a` followed by `b`, with `b` expressed in the
//! frame reached by `a`. A looping clip's displacement over `n` cycles is the cycle displacement composed `n`
//! times, in closed form, so any number of wraps costs the same.

use glam::{Quat, Vec3};

use crate::runtime_clip::Timeline;

/// A root-motion track: horizontal (XZ) translation and yaw about +Y, sampled at the clip's rate.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMotion {
    /// The clip's frame times and looping.
    timeline: Timeline,
    /// Per frame, the root's horizontal offset since time 0, in the root's parent space (y = 0).
    translations: Vec<Vec3>,
    /// Per frame, the root's yaw since time 0, in radians, unwrapped (not limited to a turn).
    yaws: Vec<f32>,
}

/// A displacement between two clip times, in the clip's start frame.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct RootDisplacement {
    /// Horizontal translation (y = 0), in the frame of the root at `t0`.
    pub translation: Vec3,
    /// Yaw about +Y, in radians.
    pub yaw: f32,
}

impl RootDisplacement {
    /// No motion.
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        yaw: 0.0,
    };

    /// `self` followed by `next`, where `next` is expressed in the frame that `self` reaches.
    pub fn then(self, next: Self) -> Self {
        Self {
            translation: self.translation + rotate_y(next.translation, self.yaw),
            yaw: self.yaw + next.yaw,
        }
    }

    /// The displacement that undoes `self`: `self.then(self.inverse())` is the identity.
    pub fn inverse(self) -> Self {
        Self {
            translation: -rotate_y(self.translation, -self.yaw),
            yaw: -self.yaw,
        }
    }

    /// `self` composed `n` times (the inverse composed `-n` times for negative `n`), in closed form:
    /// `sum_k Y(k * yaw) * translation = Y((n - 1) * yaw / 2) * translation * sin(n * yaw / 2) / sin(yaw / 2)`,
    /// evaluated in f64.
    pub fn repeat(self, n: i64) -> Self {
        if n < 0 {
            return self.inverse().repeat(n.saturating_neg());
        }
        let k = n as f64;
        let yaw = f64::from(self.yaw);
        let half = 0.5 * yaw;
        let ratio = if half.sin().abs() < 1e-12 {
            k
        } else {
            (k * half).sin() / half.sin()
        };
        let angle = (k - 1.0) * half;
        let (s, c) = angle.sin_cos();
        let (x, z) = (f64::from(self.translation.x), f64::from(self.translation.z));
        Self {
            translation: Vec3::new(((x * c + z * s) * ratio) as f32, 0.0, ((z * c - x * s) * ratio) as f32),
            yaw: (k * yaw) as f32,
        }
    }
}

/// `v` turned by `yaw` radians about +Y, as `Quat::from_rotation_y(yaw) * v`.
fn rotate_y(v: Vec3, yaw: f32) -> Vec3 {
    let (s, c) = yaw.sin_cos();
    Vec3::new(v.x * c + v.z * s, v.y, v.z * c - v.x * s)
}

/// The twist of `q` about +Y: `normalize(0, q.y, 0, q.w)`, or the identity when `q` turns +Y upside down and
/// the twist is undefined. `q = twist * swing` and `q = swing' * twist` with both swings about horizontal axes.
pub(crate) fn yaw_twist(q: Quat) -> Quat {
    let len = q.y.hypot(q.w);
    if len > 1e-6 {
        Quat::from_xyzw(0.0, q.y / len, 0.0, q.w / len)
    } else {
        Quat::IDENTITY
    }
}

/// The angle of `q`'s twist about +Y, in `[-2π, 2π]` (a quaternion and its negation differ by a turn).
pub(crate) fn yaw_angle(q: Quat) -> f32 {
    2.0 * q.y.atan2(q.w)
}

/// `a` wrapped into `[-π, π]`.
pub(crate) fn wrap_angle(a: f32) -> f32 {
    let tau = std::f32::consts::TAU;
    a - tau * (a / tau).round()
}

impl RootMotion {
    /// A track over `timeline`'s frames; `translations` and `yaws` have one entry per frame.
    pub(crate) fn new(timeline: Timeline, translations: Vec<Vec3>, yaws: Vec<f32>) -> Self {
        Self {
            timeline,
            translations,
            yaws,
        }
    }

    /// The clip's duration, in seconds.
    pub fn duration(&self) -> f32 {
        self.timeline.duration()
    }

    /// True when the clip loops, so that displacements accumulate cycle after cycle.
    pub fn is_looping(&self) -> bool {
        self.timeline.is_looping()
    }

    /// Heap bytes held by the track.
    pub fn memory_bytes(&self) -> usize {
        size_of_val(self.translations.as_slice()) + size_of_val(self.yaws.as_slice())
    }

    /// The unwrapped yaw of frame `f`, or 0 past the end.
    pub(crate) fn frame_yaw(&self, f: usize) -> f32 {
        self.yaws.get(f).copied().unwrap_or(0.0)
    }

    /// The root-motion frame at clip time `t`, clamped to `[0, duration]` (no wrap), relative to the frame at
    /// time 0: the frames' values interpolated linearly. A NaN `t` gives the frame at time 0.
    pub fn offset_at(&self, t: f32) -> RootDisplacement {
        let (f, u) = self.timeline.coords_clamped(if t.is_nan() { 0.0 } else { t });
        let (Some(&t0), Some(&y0)) = (self.translations.get(f), self.yaws.get(f)) else {
            return RootDisplacement::IDENTITY;
        };
        let t1 = self.translations.get(f + 1).copied().unwrap_or(t0);
        let y1 = self.yaws.get(f + 1).copied().unwrap_or(y0);
        RootDisplacement {
            translation: t0 + (t1 - t0) * u,
            yaw: y0 + (y1 - y0) * u,
        }
    }

    /// The displacement over one whole clip, from time 0 to the duration.
    pub fn cycle_displacement(&self) -> RootDisplacement {
        self.offset_at(self.duration())
    }

    /// The displacement from `t0` to `t1` (seconds, `t1 >= t0`), correct across any number of loop wraps.
    ///
    /// For a looping clip, time `t` is `n` whole cycles plus `r` seconds, and the displacement is
    /// `offset_at(r0)⁻¹ ∘ cycle^(n1 - n0) ∘ offset_at(r1)`, so it stays exact for large times (the split is
    /// computed in f64). A non-looping clip clamps both times to `[0, duration]`. With `t1 < t0` the result is
    /// the inverse motion. A non-finite time gives [`RootDisplacement::IDENTITY`]. Never allocates.
    pub fn displacement(&self, t0: f32, t1: f32) -> RootDisplacement {
        if !(t0.is_finite() && t1.is_finite()) {
            return RootDisplacement::IDENTITY;
        }
        let duration = self.duration();
        if !self.is_looping() || duration <= 0.0 {
            return self.offset_at(t0).inverse().then(self.offset_at(t1));
        }
        let split = |t: f32| {
            let d = f64::from(duration);
            let n = (f64::from(t) / d).floor();
            (n as i64, ((f64::from(t) - n * d) as f32).clamp(0.0, duration))
        };
        let ((n0, r0), (n1, r1)) = (split(t0), split(t1));
        let cycles = self.cycle_displacement().repeat(n1.saturating_sub(n0));
        self.offset_at(r0).inverse().then(cycles).then(self.offset_at(r1))
    }
}

#[cfg(test)]
mod tests {
    use glam::Vec4;

    use super::*;
    use crate::runtime_clip::tests::{angle, chain, channel, clip, times};
    use crate::{Interpolation, Looping, Property, RuntimeClip, RuntimeClipOptions, SamplingJob, SoaTransform};

    const YAW_RATE: f32 = 0.5;
    const TILT: f32 = 0.1;

    /// A 1 s clip whose root walks +Z at 1 m/s from x = 0.3 while yawing at 0.5 rad/s, tilted about X, and
    /// bobs up and down once per cycle.
    fn walk_and_turn(looping: Looping) -> RuntimeClip {
        let skeleton = chain(3);
        let ts = times(5, 1.0);
        let walk = |t: f32| Vec4::new(0.3, 1.0 + 0.02 * (std::f32::consts::TAU * t).cos(), t, 0.0);
        let turn = |t: f32| Vec4::from(Quat::from_rotation_y(YAW_RATE * t) * Quat::from_rotation_x(TILT));
        let c = clip(
            "walk",
            vec![
                channel(0, Property::Translation, Interpolation::Linear, &times(41, 1.0), walk),
                channel(0, Property::Rotation, Interpolation::Linear, &ts, turn),
            ],
        );
        let options = RuntimeClipOptions {
            extract_root_motion: true,
            looping,
            ..Default::default()
        };
        RuntimeClip::build(&c, &skeleton, &options).expect("builds")
    }

    /// Composes cycle pieces one by one, the slow way.
    fn compose(pieces: &[RootDisplacement]) -> RootDisplacement {
        let (mut p, mut yaw) = (Vec3::ZERO, 0.0);
        for piece in pieces {
            p += Quat::from_rotation_y(yaw) * piece.translation;
            yaw += piece.yaw;
        }
        RootDisplacement { translation: p, yaw }
    }

    fn assert_close(a: RootDisplacement, b: RootDisplacement, what: &str) {
        assert!(
            a.translation.abs_diff_eq(b.translation, 1e-4) && (a.yaw - b.yaw).abs() < 1e-4,
            "{what}: {a:?} vs {b:?}"
        );
    }

    #[test]
    fn displacement_over_fractions_and_multiples_of_a_cycle() {
        let rc = walk_and_turn(Looping::Auto);
        assert!(rc.is_looping(), "the in-place clip loops");
        let motion = rc.root_motion().expect("extracted");
        let half = RootDisplacement {
            translation: Vec3::new(0.0, 0.0, 0.5),
            yaw: 0.5 * YAW_RATE,
        };
        let cycle = RootDisplacement {
            translation: Vec3::Z,
            yaw: YAW_RATE,
        };
        assert_close(motion.cycle_displacement(), cycle, "cycle");
        assert_close(motion.displacement(0.0, 0.5), half, "0.5 cycles");
        assert_close(motion.displacement(0.0, 1.0), cycle, "1 cycle");
        assert_close(
            motion.displacement(0.0, 2.5),
            compose(&[cycle, cycle, half]),
            "2.5 cycles",
        );
        let many = compose(&[[cycle; 10].as_slice(), &[half]].concat());
        assert_close(motion.displacement(0.0, 10.5), many, "10.5 cycles");
        // From mid-cycle: back from 0.25 to the cycle start, then on to 2.75, all in the frame at 0.25.
        let part = |t: f32| RootDisplacement {
            translation: Vec3::new(0.0, 0.0, t),
            yaw: t * YAW_RATE,
        };
        let expect = part(0.25).inverse().then(compose(&[cycle, cycle, part(0.75)]));
        assert_close(motion.displacement(0.25, 2.75), expect, "0.25 to 2.75");
        assert_close(motion.displacement(-1.0, 0.0), cycle, "negative times wrap too");
    }

    #[test]
    fn displacements_add_up() {
        let motion = walk_and_turn(Looping::Auto).root_motion().expect("extracted").clone();
        for (t0, t1, t2) in [(0.0, 0.3, 1.0), (0.3, 1.7, 3.2), (0.9, 0.95, 7.4), (-2.2, 0.1, 0.6)] {
            let whole = motion.displacement(t0, t2);
            let parts = motion.displacement(t0, t1).then(motion.displacement(t1, t2));
            assert_close(
                whole,
                parts,
                &format!("d({t0}, {t2}) vs d({t0}, {t1}) then d({t1}, {t2})"),
            );
        }
        assert_close(
            motion.displacement(2.0, 0.5),
            motion.displacement(0.5, 2.0).inverse(),
            "backwards",
        );
        let c = motion.cycle_displacement();
        assert_close(c.repeat(3), c.then(c).then(c), "repeat");
        assert_close(c.repeat(-2), c.inverse().then(c.inverse()), "negative repeat");
        assert_close(c.repeat(0), RootDisplacement::IDENTITY, "zero repeat");
    }

    #[test]
    fn non_looping_clips_clamp_and_nan_gives_no_motion() {
        let motion = walk_and_turn(Looping::No).root_motion().expect("extracted").clone();
        assert!(!motion.is_looping());
        assert_close(motion.displacement(0.0, 5.0), motion.cycle_displacement(), "clamped");
        assert_close(
            motion.displacement(-3.0, 0.5),
            motion.displacement(0.0, 0.5),
            "clamped below",
        );
        for (t0, t1) in [
            (f32::NAN, 1.0),
            (0.0, f32::NAN),
            (f32::INFINITY, 1.0),
            (0.0, f32::NEG_INFINITY),
        ] {
            assert_eq!(motion.displacement(t0, t1), RootDisplacement::IDENTITY);
        }
        assert_eq!(motion.offset_at(f32::NAN), RootDisplacement::IDENTITY);
    }

    #[test]
    fn the_in_place_clip_has_no_root_drift_or_yaw() {
        let rc = walk_and_turn(Looping::Auto);
        let mut pose = [SoaTransform::IDENTITY; 1];
        for i in 0..=40 {
            let t = i as f32 * 0.0625 - 0.3;
            SamplingJob {
                clip: &rc,
                time: t,
                output: &mut pose,
            }
            .run()
            .expect("valid job");
            let root = pose[0].lane(0);
            assert!(
                (root.translation.x - 0.3).abs() < 1e-6 && root.translation.z.abs() < 1e-6,
                "t = {t}: {root:?}"
            );
            assert!((root.translation.y - 1.0).abs() <= 0.021, "the bob is kept: {root:?}");
            let expect = Quat::from_rotation_x(TILT);
            assert!(angle(root.rotation, expect) < 1e-4, "t = {t}: {:?}", root.rotation);
        }
        assert!(
            rc.error().translation <= 1e-4 && rc.error().rotation <= 1e-3,
            "{:?}",
            rc.error()
        );
    }

    #[test]
    fn swing_twist_keeps_the_swing_and_extracts_the_yaw() {
        let q = Quat::from_rotation_y(1.2) * Quat::from_rotation_z(0.4);
        let twist = yaw_twist(q);
        assert!(angle(twist, Quat::from_rotation_y(1.2)) < 1e-5);
        assert!((yaw_angle(q) - 1.2).abs() < 1e-5);
        assert!(angle(twist.inverse() * q, Quat::from_rotation_z(0.4)) < 1e-5);
        assert_eq!(yaw_twist(Quat::from_rotation_x(std::f32::consts::PI)), Quat::IDENTITY);
        let pi = std::f32::consts::PI;
        assert!((wrap_angle(2.5 * pi) - 0.5 * pi).abs() < 1e-5 && (wrap_angle(-2.5 * pi) + 0.5 * pi).abs() < 1e-5);
        assert!((wrap_angle(3.0 * pi).abs() - pi).abs() < 1e-5);
    }
}
