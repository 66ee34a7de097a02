//! `ProceduralJob`: deterministic joint rotations from parameters.
//!
//! A procedure is a pure function of its parameters and the time: the job keeps no state, so two runs with the
//! same inputs write the same bits, and any instance can be evaluated at any time in any order.

use std::f64::consts::TAU;

use glam::{Quat, Vec3};

use crate::{Error, Result, SoaTransform};

/// The job's name in errors.
const JOB: &str = "ProceduralJob";

/// A sine sway along a chain of joints: joint `i` of the chain rotates about `axis` by
/// `amplitude(i) * sin(2π (frequency * time) - phase_step * i + phase)`, where `amplitude(i)` grows linearly
/// from `amplitude_root` to `amplitude_tip` along the chain. For fish undulation or a wagging tail.
///
/// `amplitude(i) = amplitude_root + (amplitude_tip - amplitude_root) * i / (len - 1)`; a chain of one joint
/// uses `amplitude_root`. With equal amplitudes, joint `i` at time `t + phase_step * i / (2π frequency)` matches
/// joint 0 at time `t`: for a positive `phase_step`, the wave travels from root to tip.
///
/// The sine's argument is computed in `f64`, so that large times keep their phase precision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SineSway {
    /// Rotation axis in each joint's local frame (normalized by the job).
    pub axis: Vec3,
    /// Amplitude at the first joint of the chain, in radians.
    pub amplitude_root: f32,
    /// Amplitude at the last joint of the chain, in radians.
    pub amplitude_tip: f32,
    /// Cycles per second.
    pub frequency: f32,
    /// Phase shift per joint along the chain, in radians.
    pub phase_step: f32,
    /// Phase offset, in radians (per instance, so that a school does not move in lockstep).
    pub phase: f32,
}

/// Procedural pose kinds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Procedural {
    /// A sine sway along a chain.
    SineSway(SineSway),
}

/// Writes joint rotations from parameters, deterministically, into a local SoA pose.
/// The rotation is composed after the joint's existing local rotation (`existing * sway`).
///
/// Validity rules:
/// - every chain joint index is below `4 * output.len()`;
/// - `time` and all parameters are finite;
/// - the axis is not zero (its length can be normalized);
/// - the frequency is not negative.
///
/// Only the rotations of the chain's joints are written; everything else in `output` is untouched.
/// A joint listed twice in the chain is rotated twice.
///
/// # Example
///
/// ```
/// use anim_pose::{Procedural, ProceduralJob, SineSway, SoaTransform};
/// use glam::Vec3;
///
/// let sway = Procedural::SineSway(SineSway {
///     axis: Vec3::Y,
///     amplitude_root: 0.1,
///     amplitude_tip: 0.4,
///     frequency: 1.5,
///     phase_step: 0.8,
///     phase: 0.0,
/// });
/// let mut pose = [SoaTransform::IDENTITY; 2];
/// ProceduralJob { chain: &[1, 2, 3, 4, 5], procedural: &sway, time: 0.3, output: &mut pose }.run()?;
/// # Ok::<(), anim_pose::Error>(())
/// ```
pub struct ProceduralJob<'a> {
    /// The joints the procedure drives, root first.
    pub chain: &'a [u16],
    /// The procedure.
    pub procedural: &'a Procedural,
    /// Time in seconds.
    pub time: f32,
    /// The local pose modified in place.
    pub output: &'a mut [SoaTransform],
}

impl ProceduralJob<'_> {
    /// Checks the validity rules (O(chain)).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Job`] naming the field at fault.
    pub fn validate(&self) -> Result<()> {
        let joints = 4 * self.output.len();
        if let Some(i) = self.chain.iter().position(|&j| usize::from(j) >= joints) {
            return Err(Error::job(
                JOB,
                "chain",
                Some(i),
                "names a joint beyond 4 * output.len()",
            ));
        }
        if !self.time.is_finite() {
            return Err(Error::job(JOB, "time", None, "is not finite"));
        }
        match self.procedural {
            Procedural::SineSway(sway) => sway.validate(),
        }
    }

    /// Validates, then writes the rotations. Never allocates.
    ///
    /// # Errors
    ///
    /// As [`ProceduralJob::validate`].
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        match self.procedural {
            Procedural::SineSway(sway) => {
                let axis = sway.axis.normalize();
                for (i, &joint) in self.chain.iter().enumerate() {
                    let angle = sway.angle(i, self.chain.len(), self.time);
                    let joint = usize::from(joint);
                    let rotation = &mut self.output[joint / 4].rotation;
                    let existing = rotation.lane(joint % 4);
                    rotation.set_lane(joint % 4, existing * Quat::from_axis_angle(axis, angle));
                }
            }
        }
        Ok(())
    }
}

impl SineSway {
    /// Checks that the parameters are finite, the axis is not zero and the frequency is not negative.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Job`] naming the parameter at fault.
    pub fn validate(&self) -> Result<()> {
        let fail = |field| Err(Error::job(JOB, field, None, "is not finite"));
        if !self.axis.is_finite() {
            return fail("axis");
        }
        if self.axis.try_normalize().is_none() {
            return Err(Error::job(JOB, "axis", None, "is zero"));
        }
        for (field, value) in [
            ("amplitude_root", self.amplitude_root),
            ("amplitude_tip", self.amplitude_tip),
            ("frequency", self.frequency),
            ("phase_step", self.phase_step),
            ("phase", self.phase),
        ] {
            if !value.is_finite() {
                return fail(field);
            }
        }
        if self.frequency < 0.0 {
            return Err(Error::job(JOB, "frequency", None, "is negative"));
        }
        Ok(())
    }

    /// The amplitude of joint `i` of a chain of `len` joints, in radians.
    pub fn amplitude(&self, i: usize, len: usize) -> f32 {
        if len <= 1 {
            self.amplitude_root
        } else {
            let t = i as f32 / (len - 1) as f32;
            self.amplitude_root + (self.amplitude_tip - self.amplitude_root) * t
        }
    }

    /// The rotation angle of joint `i` of a chain of `len` joints at `time`, in radians.
    pub fn angle(&self, i: usize, len: usize, time: f32) -> f32 {
        let argument = TAU * f64::from(self.frequency) * f64::from(time) - f64::from(self.phase_step) * i as f64
            + f64::from(self.phase);
        self.amplitude(i, len) * argument.sin() as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transform;

    const SWAY: SineSway = SineSway {
        axis: Vec3::new(0.0, 2.0, 0.0),
        amplitude_root: 0.2,
        amplitude_tip: 0.6,
        frequency: 1.5,
        phase_step: 0.7,
        phase: 0.3,
    };

    fn run(chain: &[u16], sway: SineSway, time: f32, output: &mut [SoaTransform]) -> Result<()> {
        ProceduralJob {
            chain,
            procedural: &Procedural::SineSway(sway),
            time,
            output,
        }
        .run()
    }

    /// A pose whose joints all have distinct, non-identity rotations.
    fn pose() -> [SoaTransform; 2] {
        let mut pose = [SoaTransform::IDENTITY; 2];
        for j in 0..8 {
            let t = Transform {
                rotation: Quat::from_rotation_x(0.1 * j as f32 + 0.05),
                ..Transform::IDENTITY
            };
            pose[j / 4].set_lane(j % 4, &t);
        }
        pose
    }

    fn rotation(pose: &[SoaTransform], joint: usize) -> Quat {
        pose[joint / 4].rotation.lane(joint % 4)
    }

    #[test]
    fn validity_rules() {
        let with = |f: fn(&mut SineSway)| {
            let mut sway = SWAY;
            f(&mut sway);
            sway
        };
        // Each row: chain, parameters, time, and the field expected at fault (None when valid).
        let rows: [(&[u16], SineSway, f32, Option<&str>); 14] = [
            (&[0, 3, 7], SWAY, 1.0, None),
            (&[], with(|s| s.frequency = 0.0), 0.0, None),
            (&[0, 8], SWAY, 1.0, Some("chain")),
            (&[0, 1], SWAY, f32::NAN, Some("time")),
            (&[0, 1], SWAY, f32::INFINITY, Some("time")),
            (
                &[0, 1],
                with(|s| s.amplitude_root = f32::NAN),
                1.0,
                Some("amplitude_root"),
            ),
            (
                &[0, 1],
                with(|s| s.amplitude_tip = f32::NAN),
                1.0,
                Some("amplitude_tip"),
            ),
            (&[0, 1], with(|s| s.frequency = f32::NAN), 1.0, Some("frequency")),
            (&[0, 1], with(|s| s.phase_step = f32::INFINITY), 1.0, Some("phase_step")),
            (&[0, 1], with(|s| s.phase = f32::NAN), 1.0, Some("phase")),
            (
                &[0, 1],
                with(|s| s.axis = Vec3::new(0.0, f32::NAN, 1.0)),
                1.0,
                Some("axis"),
            ),
            (&[0, 1], with(|s| s.axis = Vec3::ZERO), 1.0, Some("axis")),
            (&[0, 1], with(|s| s.axis = Vec3::splat(1e-30)), 1.0, Some("axis")),
            (&[0, 1], with(|s| s.frequency = -1.0), 1.0, Some("frequency")),
        ];
        for (row, &(chain, sway, time, fault)) in rows.iter().enumerate() {
            let mut output = pose();
            match (fault, run(chain, sway, time, &mut output)) {
                (None, Ok(())) => {}
                (Some(field), Err(Error::Job { job, field: got, .. })) => {
                    assert_eq!((job, got), (JOB, field), "row {row}");
                    assert_eq!(output, pose(), "row {row}: an invalid job wrote its output");
                }
                (fault, result) => panic!("row {row}: expected fault {fault:?}, got {result:?}"),
            }
        }
    }

    #[test]
    fn deterministic_and_composed_after_the_existing_rotation() {
        let chain = [6, 2, 5, 1];
        let mut a = pose();
        let mut b = pose();
        run(&chain, SWAY, 12.345, &mut a).expect("valid job");
        // Another time first, on another buffer, does not change the result: the job has no state.
        run(&chain, SWAY, 3.0, &mut pose()).expect("valid job");
        run(&chain, SWAY, 12.345, &mut b).expect("valid job");
        assert_eq!(a, b);
        let axis = SWAY.axis.normalize();
        for (i, &joint) in chain.iter().enumerate() {
            let joint = usize::from(joint);
            let want = rotation(&pose(), joint) * Quat::from_axis_angle(axis, SWAY.angle(i, chain.len(), 12.345));
            assert!(rotation(&a, joint).abs_diff_eq(want, 1e-6), "joint {joint}");
        }
        // Joints outside the chain are untouched.
        for joint in [0, 3, 4, 7] {
            assert_eq!(a[joint / 4].lane(joint % 4), pose()[joint / 4].lane(joint % 4));
        }
    }

    #[test]
    fn zero_angle_where_the_sine_is_zero() {
        // At time zero with no phase, the first joint's sine is zero; at a quarter period it is one.
        let sway = SineSway { phase: 0.0, ..SWAY };
        let mut output = pose();
        run(&[3, 4], sway, 0.0, &mut output).expect("valid job");
        assert!(rotation(&output, 3).abs_diff_eq(rotation(&pose(), 3), 1e-7));
        assert!(!rotation(&output, 4).abs_diff_eq(rotation(&pose(), 4), 1e-3));
        assert_eq!(sway.angle(0, 2, 0.25 / sway.frequency), sway.amplitude_root);
        // A chain of one joint uses the root amplitude.
        assert_eq!(sway.amplitude(0, 1), sway.amplitude_root);
        assert_eq!(sway.amplitude(4, 5), sway.amplitude_tip);
    }

    #[test]
    fn phase_travels_along_the_chain() {
        let sway = SineSway {
            amplitude_root: 0.5,
            amplitude_tip: 0.5,
            ..SWAY
        };
        let chain = [0, 1, 2, 3, 4, 5, 6];
        let t = 0.8;
        let mut now = [SoaTransform::IDENTITY; 2];
        run(&chain, sway, t, &mut now).expect("valid job");
        for i in 0..chain.len() {
            // Joint `i` does what joint 0 did `delay` seconds earlier.
            let delay = sway.phase_step * i as f32 / (std::f32::consts::TAU * sway.frequency);
            let mut later = [SoaTransform::IDENTITY; 2];
            run(&chain, sway, t + delay, &mut later).expect("valid job");
            let (got, want) = (rotation(&later, i), rotation(&now, 0));
            assert!(got.abs_diff_eq(want, 1e-5), "joint {i}: {got} vs {want}");
        }
    }
}
