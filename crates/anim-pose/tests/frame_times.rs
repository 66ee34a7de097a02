//! Runtime clips against the exact evaluator where a uniform grid of frames cannot follow the keys:
//!
//! - STEP keys between frames, on rotations and translations, one channel starting after t = 0: the runtime path
//!   switches at every key time exactly (it matches the exact path at `t_k` and at `t_k + 1e-4 s`), through a
//!   key-time table and through uniform frames with the STEP key times added;
//! - a capture-like clip (about 37.5 Hz with ±0.2% jitter in its key times, joints turning at up to 25 rad/s),
//!   which no uniform rate up to 240 Hz holds within the budget: it builds, without a warning, and matches the
//!   exact path within the budget at random times (with the 5% slack of `prop_sampling.rs`: the build measures at
//!   eight points per frame interval, and the error can rise slightly between them);
//! - the same with each channel keyed at its own jittered times (a union of key times), and with root motion
//!   extracted from a table clip.

mod common;

use anim_pose::{
    Channel, Clip, FrameSpacing, Interpolation, Looping, NO_PARENT, Property, RuntimeClip, RuntimeClipOptions,
    Skeleton, Transform,
};
use common::{angle, clip_of as clip, sample_soa};
use glam::{Quat, Vec3, Vec4};

/// A chain of `n` joints, each 0.1 above its parent.
fn chain(n: usize) -> Skeleton {
    let parents = (0..n)
        .map(|i| if i == 0 { NO_PARENT } else { (i - 1) as u16 })
        .collect();
    let rest = (0..n)
        .map(|i| Transform {
            translation: Vec3::new(0.0, if i == 0 { 0.0 } else { 0.1 }, 0.0),
            ..Transform::IDENTITY
        })
        .collect();
    Skeleton::from_parents("chain", parents, rest).expect("a valid chain")
}

/// A channel of `joint` over `times`, with the values of `f`.
fn channel(
    joint: u16,
    property: Property,
    interpolation: Interpolation,
    times: &[f32],
    f: impl Fn(f32) -> Vec4,
) -> Channel {
    Channel {
        joint,
        property,
        interpolation,
        times: times.to_vec(),
        values: times.iter().map(|&t| f(t)).collect(),
    }
}

/// The largest translation and rotation error of the runtime clip against the exact clip at `times`.
fn worst_error(rc: &RuntimeClip, c: &Clip, skeleton: &Skeleton, times: &[f32]) -> (f32, f32, f32) {
    let mut exact = vec![Transform::IDENTITY; skeleton.joint_count()];
    let (mut translation, mut rotation, mut at) = (0.0f32, 0.0f32, 0.0f32);
    for &t in times {
        c.sample_local_pose(skeleton, t, &mut exact).expect("a finite time");
        for (r, e) in sample_soa(rc, t).iter().zip(&exact) {
            let (dt, dr) = (r.translation.distance(e.translation), angle(r.rotation, e.rotation));
            if dt > translation || dr > rotation {
                at = t;
            }
            translation = translation.max(dt);
            rotation = rotation.max(dr);
        }
    }
    (translation, rotation, at)
}

/// STEP channels keyed at 0.05, 0.15, 0.45 and 1.3 s (off a 15 Hz grid), on a rotation and a translation, and a
/// STEP rotation whose first key is at 0.32 s, after t = 0.
fn step_channels() -> Vec<Channel> {
    let keys = [0.05, 0.15, 0.45, 1.3];
    let late = [0.32, 0.61, 0.99];
    let mut k = 0.0;
    let mut next = move || {
        k += 1.0;
        k
    };
    let turns: Vec<f32> = (0..4).map(|_| next()).collect();
    vec![
        Channel {
            joint: 1,
            property: Property::Rotation,
            interpolation: Interpolation::Step,
            times: keys.to_vec(),
            values: turns
                .iter()
                .map(|&a| Vec4::from(Quat::from_rotation_z(0.3 * a)))
                .collect(),
        },
        Channel {
            joint: 2,
            property: Property::Translation,
            interpolation: Interpolation::Step,
            times: keys.to_vec(),
            values: turns.iter().map(|&a| Vec4::new(0.1 * a, 0.1, 0.0, 0.0)).collect(),
        },
        channel(3, Property::Rotation, Interpolation::Step, &late, |t| {
            Vec4::from(Quat::from_rotation_x(2.0 * t))
        }),
    ]
}

/// Checks that `rc` matches `c` at every key time and 0.1 ms after it, within the budget.
fn check_step_keys(rc: &RuntimeClip, c: &Clip, skeleton: &Skeleton) {
    let options = RuntimeClipOptions::default();
    let mut times: Vec<f32> = c.channels.iter().flat_map(|ch| ch.times.iter().copied()).collect();
    times.extend(times.clone().iter().map(|t| t + 1e-4));
    let (translation, rotation, at) = worst_error(rc, c, skeleton, &times);
    assert!(
        translation <= options.budget.translation && rotation <= options.budget.rotation,
        "{} ({}): {translation} m and {rotation} rad at {at} s",
        rc.name(),
        rc.frame_spacing()
    );
    assert!(rc.error().meets(&options) && rc.warning().is_none(), "{:?}", rc.error());
}

#[test]
fn step_keys_switch_at_their_key_times() {
    let skeleton = chain(5);
    let options = RuntimeClipOptions::default();
    // STEP channels alone: the key times are the smallest layout.
    let steps = clip("steps", step_channels());
    let rc = RuntimeClip::build(&steps, &skeleton, &options).expect("builds");
    assert_eq!(
        rc.frame_spacing(),
        FrameSpacing::KeyTimes {
            shared: false,
            subdivisions: 1,
            refined: 0
        }
    );
    check_step_keys(&rc, &steps, &skeleton);
    // With a LINEAR channel of more keys than the size limit, uniform frames hold the STEP key times: the four
    // inside the clip where a value changes (a STEP channel holds its first value before its first key).
    let mut channels = step_channels();
    let dense: Vec<f32> = (0..=2000).map(|i| i as f32 * 1.3 / 2000.0).collect();
    channels.push(channel(4, Property::Translation, Interpolation::Linear, &dense, |t| {
        Vec4::new(0.02 * (3.0 * t).sin(), 0.1, 0.0, 0.0)
    }));
    let mixed = clip("mixed", channels);
    let rc = RuntimeClip::build(&mixed, &skeleton, &options).expect("builds");
    assert!(
        matches!(rc.frame_spacing(), FrameSpacing::UniformWithStepKeys { step_keys: 4 }),
        "{:?}",
        rc.frame_spacing()
    );
    check_step_keys(&rc, &mixed, &skeleton);
    // Looping or not, in a loop's second cycle too.
    let looped = RuntimeClip::build(
        &steps,
        &skeleton,
        &RuntimeClipOptions {
            looping: Looping::Yes,
            ..options
        },
    )
    .expect("builds");
    let d = looped.duration();
    for &k in &[0.05f32, 0.15, 0.45, 0.32, 0.61, 0.99] {
        let (first, second) = (sample_soa(&looped, k + 1e-4), sample_soa(&looped, d + k + 1e-4));
        for (a, b) in first.iter().zip(&second) {
            assert!(angle(a.rotation, b.rotation) < 1e-3 && a.translation.distance(b.translation) < 1e-4);
        }
    }
}

/// A capture-like clip: `joints` joints over `seconds`, keyed at about 37.5 Hz with ±0.2% jitter in every
/// interval, each joint turning about its own axis with an angular speed of up to 25 rad/s, and a root that walks.
/// With `shared`, every channel has the same key times; otherwise the odd joints are keyed at their own times,
/// about 24 Hz with the same jitter, so that the clip's frames must be the union of two lists.
fn capture(joints: usize, seconds: f32, shared: bool) -> Clip {
    // A small deterministic generator: a linear congruential sequence mapped to [-1, 1].
    let mut state = 0x2545_f491_u32;
    let mut noise = move || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (state >> 8) as f32 / (1u32 << 23) as f32 - 1.0
    };
    let key_times = |rate: f32, noise: &mut dyn FnMut() -> f32| {
        let mut times = vec![0.0f32];
        while times.last().copied().unwrap_or(0.0) < seconds {
            let step = (1.0 / rate) * (1.0 + 0.002 * noise());
            times.push(times.last().copied().unwrap_or(0.0) + step);
        }
        times
    };
    let common = key_times(37.5, &mut noise);
    let other = key_times(24.0, &mut noise);
    let mut channels = Vec::new();
    for j in 0..joints {
        let times = if shared || j % 2 == 0 { &common } else { &other };
        let axis = Vec3::new(noise(), noise(), noise() + 1.5).normalize();
        let amplitude = 0.4 + 0.3 * noise().abs();
        // Angular speed amplitude · ω, up to 25 rad/s for the fastest joints.
        let omega = 25.0 / amplitude * (0.55 + 0.45 * (j as f32 * 0.7).sin().abs());
        let phase = 3.0 * noise();
        channels.push(channel(
            j as u16,
            Property::Rotation,
            Interpolation::Linear,
            times,
            |t| Vec4::from(Quat::from_axis_angle(axis, amplitude * (omega * t + phase).sin())),
        ));
    }
    channels.push(channel(0, Property::Translation, Interpolation::Linear, &common, |t| {
        Vec4::new(0.3 * t.sin(), 0.9 + 0.03 * (9.0 * t).sin(), 1.4 * t, 0.0)
    }));
    clip("capture", channels)
}

/// Random times over `[0, duration]`, from a fixed seed.
fn random_times(duration: f32, count: usize) -> Vec<f32> {
    let mut state = 0x9e37_79b9_u32;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            duration * (state as f32 / u32::MAX as f32)
        })
        .collect()
}

#[test]
fn capture_clips_build_and_match_the_exact_path_within_the_budget() {
    let skeleton = chain(12);
    let options = RuntimeClipOptions::default();
    for (shared, seconds) in [(true, 35.0), (false, 6.0)] {
        let c = capture(12, seconds, shared);
        let rc = RuntimeClip::build(&c, &skeleton, &options).expect("a capture always builds");
        let what = format!(
            "{seconds} s, shared {shared}: {} with {} frames",
            rc.frame_spacing(),
            rc.frame_count()
        );
        assert!(rc.warning().is_none(), "{what}: {:?}", rc.warning());
        assert!(
            matches!(rc.frame_spacing(), FrameSpacing::KeyTimes { shared: s, .. } if s == shared),
            "{what}"
        );
        assert!(rc.error().meets(&options), "{what}: {:?}", rc.error());
        let (translation, rotation, at) = worst_error(&rc, &c, &skeleton, &random_times(c.duration, 4000));
        assert!(
            translation <= 1.05 * options.budget.translation && rotation <= 1.05 * options.budget.rotation,
            "{what}: {translation} m, {rotation} rad at {at} s"
        );
        eprintln!(
            "{what}: {} B, measured {:.5} rad, {:.5} rad at random times",
            rc.memory_bytes(),
            rc.error().rotation,
            rotation
        );
    }
    // With a size limit below the key count (30 Hz), only uniform frames are left, and they cannot follow the
    // jittered kinks: the build keeps the closest, reports the error it reached with a warning, and the clip plays.
    let c = capture(12, 35.0, true);
    let capped = RuntimeClipOptions {
        max_rate_hz: 30.0,
        ..options
    };
    let rc = RuntimeClip::build(&c, &skeleton, &capped).expect("still builds");
    assert_eq!(rc.frame_spacing(), FrameSpacing::Uniform);
    assert!(!rc.error().meets(&capped), "{:?}", rc.error());
    let warning = rc.warning().expect("a warning").to_string();
    assert!(
        warning.starts_with(&format!(
            "clip 'capture': no frame layout of at most {} frames",
            rc.frame_count()
        )) && warning.contains(" error at joint"),
        "{warning}"
    );
    let (_, rotation, _) = worst_error(&rc, &c, &skeleton, &random_times(c.duration, 500));
    assert!(
        rotation <= 1.05 * rc.error().rotation,
        "the reported error is the true one: {rotation} rad"
    );
}

#[test]
fn root_motion_extracts_from_a_frame_time_table() {
    let skeleton = chain(6);
    let c = capture(6, 4.0, true);
    let options = RuntimeClipOptions {
        extract_root_motion: true,
        ..RuntimeClipOptions::default()
    };
    let rc = RuntimeClip::build(&c, &skeleton, &options).expect("builds");
    assert!(
        matches!(rc.frame_spacing(), FrameSpacing::KeyTimes { .. }),
        "{}",
        rc.frame_spacing()
    );
    assert!(rc.error().meets(&options), "{:?}", rc.error());
    let motion = rc.root_motion().expect("extracted");
    // The root walks 1.4 m/s along +Z from x = 0 and sways in x: the extracted offset follows it.
    let mut exact = vec![Transform::IDENTITY; skeleton.joint_count()];
    c.sample_local_pose(&skeleton, 0.0, &mut exact).expect("valid");
    let start = exact[0].translation;
    for t in random_times(c.duration, 200) {
        c.sample_local_pose(&skeleton, t, &mut exact).expect("valid");
        let moved = exact[0].translation - start;
        let offset = motion.offset_at(t);
        assert!(
            (offset.translation - Vec3::new(moved.x, 0.0, moved.z)).length() < 2e-4,
            "at {t} s: {offset:?} vs {moved}"
        );
        let root = sample_soa(&rc, t)[0].translation;
        assert!(
            (root.x - start.x).abs() < 1e-5 && (root.z - start.z).abs() < 1e-5,
            "in place at {t} s"
        );
    }
}
