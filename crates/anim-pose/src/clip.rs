//! Animation clips with their exact glTF keys, and the exact evaluator.
//!
//! The evaluator follows the glTF 2.0 specification, appendix C ("Interpolation"):
//! - STEP holds key `k` on `[t_k, t_k+1)`;
//! - LINEAR lerps translations and scales and slerps rotations along the shortest path;
//! - CUBICSPLINE evaluates the cubic Hermite spline with the stored tangents scaled by the key interval;
//! - before the first key the first value is held, and after the last key the last value is held.
//!
//! Rotations are normalized after interpolation, so slightly non-unit keys (common in exported
//! files) still give unit quaternions.

use glam::{Quat, Vec3, Vec4};

use crate::asserts::strict_assert;
use crate::skeleton::check_len;
use crate::{Error, Result, Skeleton, Transform};

/// The joint property a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// Translation, values `(x, y, z, 0)`.
    Translation,
    /// Rotation, values are quaternions `(x, y, z, w)`.
    Rotation,
    /// Scale, values `(x, y, z, 0)`.
    Scale,
}

impl Property {
    /// The glTF name of the property.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Translation => "translation",
            Self::Rotation => "rotation",
            Self::Scale => "scale",
        }
    }
}

/// A glTF sampler interpolation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Hold each key until the next.
    Step,
    /// Linear interpolation; spherical linear for rotations.
    Linear,
    /// Cubic Hermite spline with in and out tangents per key.
    CubicSpline,
}

impl Interpolation {
    /// The glTF name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Step => "STEP",
            Self::Linear => "LINEAR",
            Self::CubicSpline => "CUBICSPLINE",
        }
    }
}

/// Key values of a channel, kept exactly as the file stores them (after dequantization).
///
/// For [`Interpolation::CubicSpline`] there are three values per key, in the glTF order
/// in-tangent, value, out-tangent.
/// Translations and scales have `w = 0`; rotations are `(x, y, z, w)` quaternions.
pub type ChannelValues = Vec<Vec4>;

/// One animated property of one joint.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// The skeleton joint animated.
    pub joint: u16,
    /// The property animated.
    pub property: Property,
    /// The interpolation mode.
    pub interpolation: Interpolation,
    /// Key times in seconds, finite and strictly increasing. Each channel keeps its own.
    pub times: Vec<f32>,
    /// Key values; see [`ChannelValues`].
    pub values: ChannelValues,
}

impl Channel {
    /// The number of keys.
    pub fn key_count(&self) -> usize {
        self.times.len()
    }

    /// Values stored per key: three for cubic splines (in-tangent, value, out-tangent), one otherwise.
    fn values_per_key(&self) -> usize {
        if self.interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        }
    }

    /// The value of key `k` (for cubic splines, the value between the tangents).
    fn key(&self, k: usize) -> Vec4 {
        match self.interpolation {
            Interpolation::CubicSpline => self.values[3 * k + 1],
            Interpolation::Step | Interpolation::Linear => self.values[k],
        }
    }

    /// Evaluates the channel at time `t` with the exact glTF rules, in O(log keys).
    ///
    /// Rotations are returned normalized; translations and scales have `w = 0`.
    /// A NaN `t` holds the first key. The channel must satisfy [`Channel::validate`], which the importer and
    /// [`Clip::validate`] check once, where the data is built; sampling checks only the counts, in O(1), and only
    /// in debug builds or with the `strict-asserts` feature.
    ///
    /// # Panics
    ///
    /// When the value count does not match the key count, like slice indexing.
    pub fn sample(&self, t: f32) -> Vec4 {
        let n = self.times.len();
        strict_assert!(
            n > 0 && self.values.len() == n * self.values_per_key(),
            "sampling a channel of {n} keys with {} values",
            self.values.len()
        );
        // Number of keys at or before t; NaN compares false and holds the first key.
        let after = self.times.partition_point(|&k| k <= t);
        let v = if after == 0 {
            self.key(0)
        } else if after >= n {
            self.key(n - 1)
        } else {
            let k = after - 1;
            let (t0, t1) = (self.times[k], self.times[k + 1]);
            let dt = t1 - t0;
            let u = ((t - t0) / dt).clamp(0.0, 1.0);
            match self.interpolation {
                Interpolation::Step => self.key(k),
                Interpolation::Linear => match self.property {
                    Property::Rotation => slerp_shortest(self.key(k), self.key(k + 1), u),
                    Property::Translation | Property::Scale => self.key(k).lerp(self.key(k + 1), u),
                },
                Interpolation::CubicSpline => {
                    let p0 = self.values[3 * k + 1];
                    let m0 = self.values[3 * k + 2] * dt;
                    let p1 = self.values[3 * (k + 1) + 1];
                    let m1 = self.values[3 * (k + 1)] * dt;
                    let (u2, u3) = (u * u, u * u * u);
                    p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
                        + m0 * (u3 - 2.0 * u2 + u)
                        + p1 * (-2.0 * u3 + 3.0 * u2)
                        + m1 * (u3 - u2)
                }
            }
        };
        match self.property {
            Property::Rotation => normalize_quat(v),
            Property::Translation | Property::Scale => v.truncate().extend(0.0),
        }
    }

    /// Checks key counts, key times and values.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the channel's joint and property, when there are no keys, the value count
    /// does not match the key count (three values per key for cubic splines), a time or value is not finite,
    /// or the times do not strictly increase.
    pub fn validate(&self) -> Result<()> {
        let object = || format!("channel ({} of joint {})", self.property.as_str(), self.joint);
        let n = self.times.len();
        if n == 0 {
            return Err(Error::invalid(object(), "has no keys"));
        }
        let per_key = self.values_per_key();
        if self.values.len() != n * per_key {
            return Err(Error::invalid(
                object(),
                format!(
                    "has {} values for {n} {} keys, expected {}",
                    self.values.len(),
                    self.interpolation.as_str(),
                    n * per_key
                ),
            ));
        }
        if let Some(i) = self.times.iter().position(|t| !t.is_finite()) {
            return Err(Error::invalid(object(), format!("key time {i} is not finite")));
        }
        if let Some(i) = self.times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(Error::invalid(
                object(),
                format!(
                    "key times must strictly increase, but key {} is at {} s after key {i} at {} s",
                    i + 1,
                    self.times[i + 1],
                    self.times[i]
                ),
            ));
        }
        if let Some(i) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(object(), format!("value {i} is not finite")));
        }
        Ok(())
    }
}

/// Spherical linear interpolation along the shortest path, as the glTF specification's appendix C gives it.
fn slerp_shortest(a: Vec4, b: Vec4, u: f32) -> Vec4 {
    let a = normalize_quat(a);
    let mut b = normalize_quat(b);
    let mut d = a.dot(b);
    if d < 0.0 {
        b = -b;
        d = -d;
    }
    if d > 0.9995 {
        // The angle is tiny: sin(θ) vanishes, and lerp is exact to f32 precision.
        return normalize_quat(a.lerp(b, u));
    }
    let theta = d.clamp(-1.0, 1.0).acos();
    let s = theta.sin();
    a * (((1.0 - u) * theta).sin() / s) + b * ((u * theta).sin() / s)
}

fn normalize_quat(q: Vec4) -> Vec4 {
    let len = q.length();
    if len > 0.0 && len.is_finite() {
        q / len
    } else {
        Vec4::new(0.0, 0.0, 0.0, 1.0)
    }
}

/// The animation of one skeleton by one glTF animation.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// The animation's name, or `animation N`.
    pub name: String,
    /// The glTF animation index.
    pub animation: usize,
    /// Index of the skeleton in [`crate::Model::skeletons`].
    pub skeleton: usize,
    /// The largest key time of the glTF animation, over all its channels, in seconds.
    /// All clips made from one animation share it, so characters animated together stay in step.
    pub duration: f32,
    /// The animated properties; at most one per (joint, property).
    pub channels: Vec<Channel>,
}

impl Clip {
    /// Evaluates channel `channel` at time `t`; see [`Channel::sample`].
    ///
    /// # Panics
    ///
    /// When `channel` is out of range, like slice indexing.
    pub fn sample_channel(&self, channel: usize, t: f32) -> Vec4 {
        self.channels[channel].sample(t)
    }

    /// Writes the local pose at time `t`: the skeleton's rest pose with every animated property replaced
    /// by its exact value at `t`.
    ///
    /// # Errors
    ///
    /// - [`Error::BufferSize`] when `out` does not have one entry per skeleton joint.
    /// - [`Error::InvalidArgument`] when `t` is not finite.
    /// - [`Error::Invalid`] when a channel targets a joint past the skeleton's end.
    pub fn sample_local_pose(&self, skeleton: &Skeleton, t: f32, out: &mut [Transform]) -> Result<()> {
        check_len("local pose", skeleton.joint_count(), out.len())?;
        if !t.is_finite() {
            return Err(Error::InvalidArgument {
                what: "sample time",
                message: format!("{t} is not finite"),
            });
        }
        out.copy_from_slice(&skeleton.rest_pose);
        for c in &self.channels {
            let Some(joint) = out.get_mut(usize::from(c.joint)) else {
                return Err(Error::invalid(
                    format!("clip '{}'", self.name),
                    format!(
                        "channel targets joint {}, out of range for skeleton '{}' of {} joints",
                        c.joint,
                        skeleton.name,
                        skeleton.joint_count()
                    ),
                ));
            };
            let v = c.sample(t);
            match c.property {
                Property::Translation => joint.translation = v.truncate(),
                Property::Rotation => joint.rotation = Quat::from_vec4(v),
                Property::Scale => joint.scale = Vec3::new(v.x, v.y, v.z),
            }
        }
        Ok(())
    }

    /// Checks every channel, that channels target joints of `skeleton`, that no (joint, property) is
    /// animated twice, and that the duration covers every key.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the clip and the channel at fault.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<()> {
        let object = |i: usize| format!("clip '{}' channel {i}", self.name);
        if !self.duration.is_finite() || self.duration < 0.0 {
            return Err(Error::invalid(
                format!("clip '{}'", self.name),
                format!("duration {} is not a finite non-negative time", self.duration),
            ));
        }
        for (i, c) in self.channels.iter().enumerate() {
            c.validate().map_err(|e| Error::invalid(object(i), e.to_string()))?;
            if usize::from(c.joint) >= skeleton.joint_count() {
                return Err(Error::invalid(
                    object(i),
                    format!(
                        "targets joint {}, but skeleton '{}' has {} joints",
                        c.joint,
                        skeleton.name,
                        skeleton.joint_count()
                    ),
                ));
            }
            if self.channels[..i]
                .iter()
                .any(|o| o.joint == c.joint && o.property == c.property)
            {
                return Err(Error::invalid(
                    object(i),
                    format!("animates {} of joint {} a second time", c.property.as_str(), c.joint),
                ));
            }
            if c.times.last().is_some_and(|&t| t > self.duration) {
                return Err(Error::invalid(
                    object(i),
                    format!("has a key after the clip's duration of {} s", self.duration),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NO_PARENT;

    fn channel(property: Property, interpolation: Interpolation, times: &[f32], values: &[Vec4]) -> Channel {
        let c = Channel {
            joint: 0,
            property,
            interpolation,
            times: times.to_vec(),
            values: values.to_vec(),
        };
        c.validate().expect("test channel is valid");
        c
    }

    fn close(a: Vec4, b: Vec4) -> bool {
        a.abs_diff_eq(b, 1e-6)
    }

    #[test]
    fn step_holds_each_key_until_the_next() {
        let v = [
            Vec4::new(1.0, 0.0, 0.0, 0.0),
            Vec4::new(2.0, 0.0, 0.0, 0.0),
            Vec4::new(3.0, 0.0, 0.0, 0.0),
        ];
        let c = channel(Property::Translation, Interpolation::Step, &[0.5, 1.0, 2.0], &v);
        for (t, want) in [
            (-1.0, 1.0),
            (0.5, 1.0),
            (0.99, 1.0),
            (1.0, 2.0),
            (1.5, 2.0),
            (2.0, 3.0),
            (9.0, 3.0),
        ] {
            assert_eq!(c.sample(t).x, want, "STEP at t = {t}");
        }
    }

    #[test]
    fn linear_translation_lerps_and_holds_outside_the_keys() {
        let c = channel(
            Property::Translation,
            Interpolation::Linear,
            &[1.0, 3.0],
            &[Vec4::ZERO, Vec4::new(2.0, 4.0, -6.0, 0.0)],
        );
        assert!(close(c.sample(1.5), Vec4::new(0.5, 1.0, -1.5, 0.0)));
        assert!(
            close(c.sample(0.0), Vec4::ZERO),
            "the first key is held before the key range"
        );
        assert!(
            close(c.sample(7.0), Vec4::new(2.0, 4.0, -6.0, 0.0)),
            "the last key is held after it"
        );
        assert!(close(c.sample(f32::NAN), Vec4::ZERO), "NaN time holds the first key");
    }

    #[test]
    fn linear_rotation_slerps_along_the_shortest_path() {
        let s45 = std::f32::consts::FRAC_1_SQRT_2;
        let (s22, c22) = (22.5f32.to_radians().sin(), 22.5f32.to_radians().cos());
        let id = Vec4::new(0.0, 0.0, 0.0, 1.0);
        // 90 degrees about z: halfway is 45 degrees about z.
        let c = channel(
            Property::Rotation,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[id, Vec4::new(0.0, 0.0, s45, s45)],
        );
        assert!(close(c.sample(0.5), Vec4::new(0.0, 0.0, s22, c22)));
        // The same rotation with the opposite sign gives the same result.
        let c = channel(
            Property::Rotation,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[id, Vec4::new(0.0, 0.0, -s45, -s45)],
        );
        let q = c.sample(0.5);
        assert!(
            close(q, Vec4::new(0.0, 0.0, s22, c22)) || close(-q, Vec4::new(0.0, 0.0, s22, c22)),
            "{q}"
        );
        // 270 degrees about z is -90 degrees the short way: halfway is -45 degrees, not +135 degrees.
        let c = channel(
            Property::Rotation,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[id, Vec4::new(0.0, 0.0, s45, -s45)],
        );
        let q = c.sample(0.5);
        assert!(
            close(q, Vec4::new(0.0, 0.0, -s22, c22)) || close(-q, Vec4::new(0.0, 0.0, -s22, c22)),
            "{q}"
        );
        // A quarter of the way through a 90 degree turn is 22.5 degrees: slerp, not nlerp, spacing.
        let c = channel(
            Property::Rotation,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[id, Vec4::new(0.0, 0.0, s45, s45)],
        );
        let (s11, c11) = (11.25f32.to_radians().sin(), 11.25f32.to_radians().cos());
        assert!(
            close(c.sample(0.25), Vec4::new(0.0, 0.0, s11, c11)),
            "{}",
            c.sample(0.25)
        );
    }

    #[test]
    fn linear_rotation_normalizes_slightly_non_unit_keys() {
        let id = Vec4::new(0.0, 0.0, 0.0, 1.00023);
        let c = channel(
            Property::Rotation,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[id, Vec4::new(0.0, 0.3, 0.0, 0.95)],
        );
        for t in [0.0, 0.3, 0.5, 1.0] {
            assert!((c.sample(t).length() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn cubic_spline_is_the_hermite_curve_with_tangents_scaled_by_the_interval() {
        // Keys at t = 0 and t = 2: (in, value, out) = (9, 1, 3) and (-1, 5, 7). The outer tangents are unused.
        let x = |v: f32| Vec4::new(v, 0.0, 0.0, 0.0);
        let c = channel(
            Property::Translation,
            Interpolation::CubicSpline,
            &[0.0, 2.0],
            &[x(9.0), x(1.0), x(3.0), x(-1.0), x(5.0), x(7.0)],
        );
        // u = 0.25: h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875 with dt = 2:
        // 0.84375 * 1 + 2 * 0.140625 * 3 + 0.15625 * 5 + 2 * -0.046875 * -1 = 2.5625.
        assert!((c.sample(0.5).x - 2.5625).abs() < 1e-6, "{}", c.sample(0.5).x);
        // u = 0.5: 0.5 * 1 + 2 * 0.125 * 3 + 0.5 * 5 + 2 * -0.125 * -1 = 4.
        assert!((c.sample(1.0).x - 4.0).abs() < 1e-6, "{}", c.sample(1.0).x);
        assert_eq!(
            c.sample(-1.0).x,
            1.0,
            "before the first key, its value (not a tangent) is held"
        );
        assert_eq!(c.sample(3.0).x, 5.0, "after the last key, its value is held");
        assert_eq!(c.sample(2.0).x, 5.0);
    }

    #[test]
    fn cubic_spline_rotation_is_normalized() {
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let zero = Vec4::ZERO;
        let c = channel(
            Property::Rotation,
            Interpolation::CubicSpline,
            &[0.0, 1.0],
            &[
                zero,
                Vec4::new(0.0, 0.0, 0.0, 1.0),
                zero,
                zero,
                Vec4::new(0.0, s, 0.0, s),
                zero,
            ],
        );
        let q = c.sample(0.5);
        assert!((q.length() - 1.0).abs() < 1e-6);
        // With zero tangents the curve is symmetric: halfway is the normalized average, 45 degrees about y.
        let h = 22.5f32.to_radians();
        assert!(close(q, Vec4::new(0.0, h.sin(), 0.0, h.cos())), "{q}");
    }

    #[test]
    fn validate_rejects_bad_channels() {
        let v = Vec4::ZERO;
        let bad = [
            ("no keys", vec![], vec![], Interpolation::Linear),
            ("value count", vec![0.0, 1.0], vec![v], Interpolation::Linear),
            (
                "cubic value count",
                vec![0.0, 1.0],
                vec![v, v],
                Interpolation::CubicSpline,
            ),
            ("decreasing", vec![1.0, 0.0], vec![v, v], Interpolation::Linear),
            ("repeated", vec![1.0, 1.0], vec![v, v], Interpolation::Step),
            (
                "non-finite time",
                vec![0.0, f32::INFINITY],
                vec![v, v],
                Interpolation::Linear,
            ),
            (
                "non-finite value",
                vec![0.0, 1.0],
                vec![v, Vec4::splat(f32::NAN)],
                Interpolation::Linear,
            ),
        ];
        for (what, times, values, interpolation) in bad {
            let c = Channel {
                joint: 3,
                property: Property::Scale,
                interpolation,
                times,
                values,
            };
            let e = c.validate().expect_err(what);
            assert!(e.to_string().contains("scale of joint 3"), "{what}: {e}");
        }
    }

    #[test]
    fn local_pose_starts_from_the_rest_pose() {
        let rest = Transform {
            translation: Vec3::new(0.0, 1.0, 0.0),
            ..Transform::IDENTITY
        };
        let skeleton =
            Skeleton::from_parents("two", vec![NO_PARENT, 0], vec![Transform::IDENTITY, rest]).expect("valid skeleton");
        let mut scale = channel(
            Property::Scale,
            Interpolation::Linear,
            &[0.0, 1.0],
            &[Vec4::ONE, Vec4::splat(3.0)],
        );
        scale.joint = 1;
        let clip = Clip {
            name: "grow".into(),
            animation: 0,
            skeleton: 0,
            duration: 1.0,
            channels: vec![scale],
        };
        clip.validate(&skeleton).expect("valid clip");
        let mut pose = [Transform::IDENTITY; 2];
        clip.sample_local_pose(&skeleton, 0.5, &mut pose).expect("sampled");
        assert_eq!(pose[0], Transform::IDENTITY);
        assert_eq!(
            pose[1].translation,
            Vec3::new(0.0, 1.0, 0.0),
            "unanimated properties keep the rest pose"
        );
        assert!(pose[1].scale.abs_diff_eq(Vec3::splat(2.0), 1e-6));
        assert!(matches!(
            clip.sample_local_pose(&skeleton, 0.5, &mut [Transform::IDENTITY; 3]),
            Err(Error::BufferSize {
                expected: 2,
                actual: 3,
                ..
            })
        ));
        assert!(matches!(
            clip.sample_local_pose(&skeleton, f32::NAN, &mut pose),
            Err(Error::InvalidArgument { .. })
        ));
    }
}
