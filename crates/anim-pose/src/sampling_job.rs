//! `SamplingJob`: a runtime clip and a time to a local SoA pose.
//!
//! The kernel maps the time to a frame pair `(f, f + 1)` and a fraction `u` once, then makes one pass per
//! property: constant groups are copied, and animated groups are interpolated from two contiguous frame rows
//! (lerp for translation and scale, normalized lerp for rotation, `u` multiplied by the track's interpolation
//! mask so that STEP lanes hold frame `f`). The frame pair is found once per pose, for every joint: one multiply
//! for uniform frames, a bucket and a search among its few frames for a frame-time table. There is no per-joint
//! key search, no allocation and no per-lane branch.
//!
//! On x86-64 CPUs with AVX-512F, `sampling_job/avx512.rs` runs the same passes on whole properties (a group's
//! rotation in one 512-bit register), with the same operations in the same order, so the same bits.

use glam::Vec4;

use crate::runtime_clip::Tracks;

#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
#[allow(
    unsafe_code,
    reason = "AVX-512 intrinsics, called after detecting the CPU feature; loads and stores through a pointer"
)]
mod avx512;
use crate::{Error, Result, RuntimeClip, SoaQuat, SoaTransform, SoaVec3};

/// Samples a [`RuntimeClip`] at `time` into a local SoA pose.
///
/// Validity rules:
/// - `time` is finite;
/// - `output` has at least `clip.num_soa_joints()` elements. Surplus elements are left untouched.
///
/// Padding lanes (past the skeleton's last joint) receive the identity.
/// The result equals `RuntimeClip::sample_reference`, computed with the same floats in the same order.
pub struct SamplingJob<'a> {
    /// The clip.
    pub clip: &'a RuntimeClip,
    /// Time in seconds. Looping clips wrap, other clips clamp.
    pub time: f32,
    /// The local pose written.
    pub output: &'a mut [SoaTransform],
}

impl SamplingJob<'_> {
    /// Checks the validity rules in O(1).
    ///
    /// # Errors
    ///
    /// [`crate::Error::Job`] naming the field at fault.
    pub fn validate(&self) -> Result<()> {
        const JOB: &str = "SamplingJob";
        if !self.time.is_finite() {
            return Err(Error::job(JOB, "time", None, "is not finite"));
        }
        if self.output.len() < self.clip.num_soa_joints() {
            return Err(Error::job(
                JOB,
                "output",
                None,
                "is shorter than the clip's SoA joint count",
            ));
        }
        Ok(())
    }

    /// Validates, then samples. Never allocates.
    ///
    /// # Errors
    ///
    /// As [`SamplingJob::validate`].
    pub fn run(&mut self) -> Result<()> {
        self.validate()?;
        let clip = self.clip;
        let (f, u) = clip.timeline().coords(self.time);
        let output = &mut self.output[..clip.num_soa_joints()];
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        if avx512::sample(clip, f, u, output) {
            return Ok(());
        }
        sample_portable(clip, f, u, output);
        Ok(())
    }
}

/// The portable passes: translations, rotations, scales, each constants then interpolated groups.
fn sample_portable(clip: &RuntimeClip, f: usize, u: f32, output: &mut [SoaTransform]) {
    let u = Vec4::splat(u);
    let tracks = &*clip.tracks;
    sample_vec3(&tracks.translations, f, u, output, |t| &mut t.translation);
    sample_rotations(&tracks.rotations, f, u, output);
    sample_vec3(&tracks.scales, f, u, output, |t| &mut t.scale);
}

/// Writes the constant groups of one property (the field `field` selects) from their stored values.
#[inline(always)]
fn write_constants<T: Copy>(
    tracks: &Tracks<T>,
    output: &mut [SoaTransform],
    field: impl Fn(&mut SoaTransform) -> &mut T,
) {
    for (&group, value) in tracks.const_groups.iter().zip(&tracks.const_values) {
        if let Some(out) = output.get_mut(usize::from(group)) {
            *field(out) = *value;
        }
    }
}

/// Writes one vector property (translation or scale) of every group: constants, then lerped frames.
#[inline(always)]
fn sample_vec3(
    tracks: &Tracks<SoaVec3>,
    f: usize,
    u: Vec4,
    output: &mut [SoaTransform],
    field: impl Fn(&mut SoaTransform) -> &mut SoaVec3,
) {
    write_constants(tracks, output, &field);
    let (row0, row1) = tracks.rows(f);
    for (((&group, mask), a), b) in tracks.anim_groups.iter().zip(&tracks.masks).zip(row0).zip(row1) {
        if let Some(out) = output.get_mut(usize::from(group)) {
            *field(out) = SoaVec3::lerp(a, b, u * *mask);
        }
    }
}

/// Writes the rotation of every group: constants, then normalized lerps of frames.
#[inline(always)]
fn sample_rotations(tracks: &Tracks<SoaQuat>, f: usize, u: Vec4, output: &mut [SoaTransform]) {
    write_constants(tracks, output, |t| &mut t.rotation);
    let (row0, row1) = tracks.rows(f);
    for (((&group, mask), a), b) in tracks.anim_groups.iter().zip(&tracks.masks).zip(row0).zip(row1) {
        if let Some(out) = output.get_mut(usize::from(group)) {
            out.rotation = nlerp_same_hemisphere(a, b, u * *mask);
        }
    }
}

/// `normalize(a + (b - a) * t)` per lane, without [`SoaQuat::nlerp`]'s hemisphere test: the build made
/// consecutive frames hemisphere-consistent.
#[inline(always)]
fn nlerp_same_hemisphere(a: &SoaQuat, b: &SoaQuat, t: Vec4) -> SoaQuat {
    SoaQuat {
        x: a.x + (b.x - a.x) * t,
        y: a.y + (b.y - a.y) * t,
        z: a.z + (b.z - a.z) * t,
        w: a.w + (b.w - a.w) * t,
    }
    .normalize()
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;
    use crate::runtime_clip::tests::{angle, chain, channel, clip, times};
    use crate::{Interpolation, Looping, Property, RuntimeClipOptions, Transform, unpack_soa};

    /// A 6-joint clip over 1.2 s: a rotation cycle on joint 1, a translation sway on joint 5.
    fn cycle(looping: Looping) -> RuntimeClip {
        let skeleton = chain(6);
        let tau = std::f32::consts::TAU / 1.2;
        let rot = move |t: f32| Vec4::from(Quat::from_rotation_z(0.5 * (tau * t).sin()));
        let sway = move |t: f32| Vec4::new(0.1 * (tau * t).sin(), 1.0, 0.0, 0.0);
        let c = clip(
            "cycle",
            vec![
                channel(1, Property::Rotation, Interpolation::Linear, &times(37, 1.2), rot),
                channel(5, Property::Translation, Interpolation::Linear, &times(37, 1.2), sway),
            ],
        );
        let options = RuntimeClipOptions {
            looping,
            ..Default::default()
        };
        RuntimeClip::build(&c, &skeleton, &options).expect("builds")
    }

    fn sample(rc: &RuntimeClip, t: f32) -> Vec<Transform> {
        let mut soa = vec![SoaTransform::IDENTITY; rc.num_soa_joints()];
        SamplingJob {
            clip: rc,
            time: t,
            output: &mut soa,
        }
        .run()
        .expect("valid job");
        let mut out = vec![Transform::IDENTITY; rc.joint_count()];
        unpack_soa(&soa, &mut out).expect("sized");
        out
    }

    fn assert_pose_close(a: &[Transform], b: &[Transform], tolerance: f32, what: &str) {
        for (j, (a, b)) in a.iter().zip(b).enumerate() {
            assert!(
                a.translation.abs_diff_eq(b.translation, tolerance)
                    && a.rotation.abs_diff_eq(b.rotation, tolerance)
                    && a.scale.abs_diff_eq(b.scale, tolerance),
                "{what}: joint {j}: {a:?} vs {b:?}"
            );
        }
    }

    #[test]
    fn validity_rules() {
        let rc = cycle(Looping::Auto);
        let n = rc.num_soa_joints();
        // One row per rule, plus a valid row: (time, output length, field at fault).
        let rows: [(f32, usize, Option<&str>); 5] = [
            (0.5, n, None),
            (f32::NAN, n, Some("time")),
            (f32::INFINITY, n, Some("time")),
            (f32::NEG_INFINITY, n, Some("time")),
            (0.5, n - 1, Some("output")),
        ];
        for (time, len, fault) in rows {
            let mut output = vec![SoaTransform::IDENTITY; len];
            let mut job = SamplingJob {
                clip: &rc,
                time,
                output: &mut output,
            };
            let result = job.run();
            match fault {
                None => assert!(result.is_ok() && job.validate().is_ok(), "time {time}, len {len}"),
                Some(field) => assert!(
                    matches!(result, Err(Error::Job { job: "SamplingJob", field: f, .. }) if f == field),
                    "time {time}, len {len}: {result:?}"
                ),
            }
        }
    }

    #[test]
    fn surplus_output_is_untouched_and_padding_is_identity() {
        let rc = cycle(Looping::Auto);
        let marker = SoaTransform {
            translation: SoaVec3::splat(Vec3::splat(7.0)),
            ..SoaTransform::IDENTITY
        };
        let mut output = vec![marker; rc.num_soa_joints() + 2];
        SamplingJob {
            clip: &rc,
            time: 0.3,
            output: &mut output,
        }
        .run()
        .expect("valid job");
        assert_eq!(&output[rc.num_soa_joints()..], &[marker, marker]);
        assert_eq!(output[1].lane(2), Transform::IDENTITY);
        assert_eq!(output[1].lane(3), Transform::IDENTITY);
    }

    #[test]
    fn looping_clips_wrap() {
        let rc = cycle(Looping::Auto);
        assert!(rc.is_looping());
        let d = rc.duration();
        for t in [0.0, 0.1, 0.55, 1.0, 1.19] {
            let at = sample(&rc, t);
            assert_pose_close(&at, &sample(&rc, t + d), 1e-5, &format!("t = {t} + D"));
            assert_pose_close(&at, &sample(&rc, t - d), 1e-5, &format!("t = {t} - D"));
            assert_pose_close(&at, &sample(&rc, t + 5.0 * d), 1e-4, &format!("t = {t} + 5 D"));
        }
        assert_pose_close(&sample(&rc, d), &sample(&rc, 0.0), 0.0, "the duration wraps to 0");
    }

    #[test]
    fn non_looping_clips_clamp() {
        let rc = cycle(Looping::No);
        assert!(!rc.is_looping());
        let d = rc.duration();
        assert_pose_close(&sample(&rc, -0.5), &sample(&rc, 0.0), 0.0, "before the start");
        assert_pose_close(&sample(&rc, d + 3.0), &sample(&rc, d), 0.0, "after the end");
        for t in [-1.0, 0.0, 0.4, d, d + 1.0] {
            let mut reference = vec![Transform::IDENTITY; 6];
            rc.sample_reference(t, &mut reference).expect("valid");
            assert_pose_close(&sample(&rc, t), &reference, 1e-6, &format!("reference at {t}"));
        }
    }

    #[test]
    fn step_tracks_hold_their_frame() {
        let skeleton = chain(3);
        let keys = [0.0, 0.25, 0.5, 0.75, 1.0];
        let step = channel(2, Property::Translation, Interpolation::Step, &keys, |t| {
            Vec4::new(4.0 * t, 0.0, 0.0, 0.0)
        });
        let ramp = channel(1, Property::Translation, Interpolation::Linear, &keys, |t| {
            Vec4::new(t, 0.0, 0.0, 0.0)
        });
        let c = clip("steps", vec![step, ramp]);
        let rc = RuntimeClip::build(&c, &skeleton, &RuntimeClipOptions::default()).expect("builds");
        assert_eq!(rc.tracks.translations.masks, vec![Vec4::new(1.0, 1.0, 0.0, 1.0)]);
        for t in [0.0, 0.1, 0.2, 0.3, 0.6, 0.74, 0.8, 0.99] {
            let pose = sample(&rc, t);
            let held = (4.0 * t).floor();
            assert_eq!(pose[2].translation.x, held, "STEP holds at t = {t}");
            assert!(
                (pose[1].translation.x - t).abs() < 1e-6,
                "LINEAR interpolates at t = {t}"
            );
        }
    }

    #[test]
    fn hemisphere_flips_between_keys_take_the_short_path() {
        let skeleton = chain(2);
        let keys = times(9, 1.0);
        // Every other key is stored negated: the same rotations, opposite hemispheres.
        let values: Vec<Vec4> = keys
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let q = Vec4::from(Quat::from_rotation_y(1.5 * t));
                if i % 2 == 1 { -q } else { q }
            })
            .collect();
        let c = crate::Channel {
            joint: 1,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: keys,
            values,
        };
        let c = clip("flip", vec![c]);
        let rc = RuntimeClip::build(&c, &skeleton, &RuntimeClipOptions::default()).expect("builds");
        assert!(rc.error().rotation <= 1e-3);
        let rotations = &rc.tracks.rotations;
        let n = rotations.anim_groups.len();
        for f in 1..rc.frame_count() {
            let (a, b) = (rotations.frames[(f - 1) * n].lane(1), rotations.frames[f * n].lane(1));
            assert!(a.dot(b) >= 0.0, "frames {} and {f} are in opposite hemispheres", f - 1);
        }
        for i in 0..=50 {
            let t = i as f32 / 50.0;
            let q = sample(&rc, t)[1].rotation;
            assert!(angle(q, Quat::from_rotation_y(1.5 * t)) < 1e-3, "t = {t}: {q}");
        }
    }
}
