//! Long clips cost time in proportion to their keys in every build profile, the test profile's debug assertions
//! included: sampling a channel is a binary search (its keys are validated once, where they are built, never per
//! sample), and building a runtime clip measures each channel at a bounded number of times per frame interval.
//!
//! The test times a 60 s clip of 20 joints and 38,000 keys against the same clip cut to 6 s, in the same run, and
//! bounds the ratios: building is linear in the keys (about 10×; it was about 100× while every sample validated its
//! whole channel), and one exact sample grows with the logarithm of the keys (about 1.5×; it was about 10×).
//! The bounds are three times the linear and logarithmic ratios, far from the quadratic ones, so that a noisy
//! machine cannot fail the test and a per-sample O(keys) check cannot pass it.

use std::time::Instant;

use anim_pose::{
    Channel, Clip, Interpolation, NO_PARENT, Property, RuntimeClip, RuntimeClipOptions, Skeleton, Transform,
};
use glam::{Quat, Vec3, Vec4};

/// Joints of the test clips.
const JOINTS: usize = 20;

/// Keys per second of every channel: 38,000 keys over 60 s and 20 joints.
const KEYS_PER_SECOND: f32 = 1900.0 / 60.0;

/// A chain of [`JOINTS`] joints.
fn skeleton() -> Skeleton {
    let parents = (0..JOINTS)
        .map(|i| if i == 0 { NO_PARENT } else { (i - 1) as u16 })
        .collect();
    let rest = Transform {
        translation: Vec3::new(0.0, 0.1, 0.0),
        ..Transform::IDENTITY
    };
    Skeleton::from_parents("chain", parents, vec![rest; JOINTS]).expect("a valid chain")
}

/// A clip of `seconds` with one LINEAR rotation channel per joint, keyed [`KEYS_PER_SECOND`] times a second.
fn clip(seconds: f32) -> Clip {
    let keys = (seconds * KEYS_PER_SECOND).round() as usize;
    let times: Vec<f32> = (0..keys).map(|k| k as f32 * seconds / (keys - 1) as f32).collect();
    let channels = (0..JOINTS)
        .map(|j| Channel {
            joint: j as u16,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            values: times
                .iter()
                .map(|&t| Vec4::from(Quat::from_rotation_z(0.5 * (2.0 * t + j as f32).sin())))
                .collect(),
            times: times.clone(),
        })
        .collect();
    Clip {
        name: format!("{seconds} s"),
        animation: 0,
        skeleton: 0,
        duration: seconds,
        channels,
    }
}

/// The shortest of three timings of `f`, in seconds.
fn fastest_of_three(mut f: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Seconds per exact sample of `clip`'s channels at scattered times.
fn exact_sample_seconds(clip: &Clip) -> f64 {
    let samples = 20_000u32;
    let mut sum = Vec4::ZERO;
    let seconds = fastest_of_three(|| {
        for i in 0..samples {
            let t = (i as f32 * 0.618_034).fract() * clip.duration;
            sum += clip.sample_channel(i as usize % clip.channels.len(), t);
        }
    });
    assert!(sum.is_finite());
    seconds / f64::from(samples)
}

#[test]
fn building_and_sampling_scale_with_the_keys_not_their_square() {
    let skeleton = skeleton();
    let (short, long) = (clip(6.0), clip(60.0));
    let keys: usize = long.channels.iter().map(Channel::key_count).sum();
    assert_eq!(keys, 38_000);
    let options = RuntimeClipOptions::default();
    let build = |c: &Clip| {
        let mut frames = 0;
        let seconds = fastest_of_three(|| {
            let rc = RuntimeClip::build(c, &skeleton, &options).expect("builds");
            assert!(rc.warning().is_none());
            frames = rc.frame_count();
        });
        (seconds, frames)
    };
    let ((short_build, short_frames), (long_build, long_frames)) = (build(&short), build(&long));
    let build_ratio = long_build / short_build;
    let sample_ratio = exact_sample_seconds(&long) / exact_sample_seconds(&short);
    eprintln!(
        "runtime clip build: {short_build:.4} s for 6 s ({short_frames} frames), {long_build:.4} s for 60 s \
         ({long_frames} frames), ratio {build_ratio:.1}; exact sample ratio {sample_ratio:.2}"
    );
    assert!(
        build_ratio <= 30.0,
        "building 10 times the keys took {build_ratio:.1} times as long"
    );
    assert!(
        sample_ratio <= 4.5,
        "sampling 10 times the keys took {sample_ratio:.2} times as long"
    );
}
