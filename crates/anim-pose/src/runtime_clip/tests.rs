//! Unit tests of [`RuntimeClip`](super::RuntimeClip) builds (rates, constant tracks, budgets, looping), and the
//! test clips and skeletons the other modules' tests share.

use glam::{Vec3, Vec4};

use super::*;
use crate::{Channel, Interpolation, NO_PARENT, SamplingJob, SoaQuat, SoaTransform};

/// A chain skeleton of `n` joints, each one unit above its parent.
pub(crate) fn chain(n: usize) -> Skeleton {
    let parents = (0..n)
        .map(|i| if i == 0 { NO_PARENT } else { (i - 1) as u16 })
        .collect();
    let rest_pose = (0..n)
        .map(|i| Transform {
            translation: Vec3::new(0.0, i.min(1) as f32, 0.0),
            ..Transform::IDENTITY
        })
        .collect();
    Skeleton::from_parents("chain", parents, rest_pose).expect("valid test skeleton")
}

/// A channel over `times` with values from `f(t)`.
pub(crate) fn channel(
    joint: u16,
    property: Property,
    interpolation: Interpolation,
    times: &[f32],
    f: impl Fn(f32) -> Vec4,
) -> Channel {
    let values = match interpolation {
        Interpolation::CubicSpline => times.iter().flat_map(|&t| [Vec4::ZERO, f(t), Vec4::ZERO]).collect(),
        Interpolation::Step | Interpolation::Linear => times.iter().map(|&t| f(t)).collect(),
    };
    Channel {
        joint,
        property,
        interpolation,
        times: times.to_vec(),
        values,
    }
}

/// A clip named `name` over `channels`, with the duration of the last key.
pub(crate) fn clip(name: &str, channels: Vec<Channel>) -> Clip {
    let duration = channels
        .iter()
        .filter_map(|c| c.times.last().copied())
        .fold(0.0, f32::max);
    Clip {
        name: name.into(),
        animation: 0,
        skeleton: 0,
        duration,
        channels,
    }
}

/// Evenly spaced key times over `[0, duration]`.
pub(crate) fn times(keys: usize, duration: f32) -> Vec<f32> {
    (0..keys).map(|i| i as f32 * duration / (keys - 1) as f32).collect()
}

/// The angle between two rotations, accurate for small angles (unlike `Quat::angle_between`).
pub(crate) fn angle(a: Quat, b: Quat) -> f32 {
    resample::rotation_angle(Vec4::from(a), Vec4::from(b))
}

fn sample(rc: &RuntimeClip, t: f32) -> Vec<SoaTransform> {
    let mut out = vec![SoaTransform::IDENTITY; rc.num_soa_joints()];
    SamplingJob {
        clip: rc,
        time: t,
        output: &mut out,
    }
    .run()
    .expect("valid job");
    out
}

#[test]
fn candidate_rates_follow_the_ladder_between_the_limits() {
    let rates = |lo, hi| {
        layout::candidate_rates(&RuntimeClipOptions {
            min_rate_hz: lo,
            max_rate_hz: hi,
            ..Default::default()
        })
        .collect::<Vec<_>>()
    };
    assert_eq!(rates(15.0, 240.0), RATE_LADDER.to_vec());
    assert_eq!(rates(25.0, 50.0), vec![25.0, 30.0, 40.0, 48.0, 50.0]);
    assert_eq!(rates(30.0, 30.0), vec![30.0]);
}

#[test]
fn constant_tracks_are_stored_once() {
    let skeleton = chain(8);
    let ts = times(11, 1.0);
    let wave = |t: f32| Vec4::from(Quat::from_rotation_x((6.0 * t).sin()));
    // Only joint 5 is animated: group 0 is constant in every property, group 1 only in translation and scale.
    let sparse = clip(
        "sparse",
        vec![channel(5, Property::Rotation, Interpolation::Linear, &ts, wave)],
    );
    let dense = clip(
        "dense",
        (0..8u16)
            .flat_map(|j| {
                let wobble = move |t: f32| Vec4::new(t * 0.01 + f32::from(j), 0.0, 0.0, 0.0);
                let grow = move |t: f32| Vec4::new(1.0 + t, 1.0, 1.0, 0.0);
                [
                    channel(j, Property::Rotation, Interpolation::Linear, &ts, wave),
                    channel(j, Property::Translation, Interpolation::Linear, &ts, wobble),
                    channel(j, Property::Scale, Interpolation::Linear, &ts, grow),
                ]
            })
            .collect(),
    );
    // A loose budget keeps both on their key times, so that the sizes compare the storage alone (the dense
    // clip's scales compound to 256 along the chain, where 0.1 mm is below the f32 rounding of its poses).
    let options = RuntimeClipOptions {
        budget: ErrorBudget {
            translation: 0.1,
            rotation: 0.01,
        },
        ..Default::default()
    };
    let sparse = RuntimeClip::build(&sparse, &skeleton, &options).expect("builds");
    let dense = RuntimeClip::build(&dense, &skeleton, &options).expect("builds");
    assert_eq!((sparse.frame_count(), dense.frame_count()), (11, 11));
    let (sparse_tracks, dense_tracks) = (&sparse.tracks, &dense.tracks);
    assert_eq!(sparse_tracks.rotations.anim_groups, vec![1]);
    assert_eq!(sparse_tracks.rotations.const_groups, vec![0]);
    assert_eq!(
        sparse_tracks.translations.anim_groups.len() + sparse_tracks.scales.anim_groups.len(),
        0
    );
    assert_eq!(
        sparse_tracks.translations.const_values.len(),
        2,
        "one value per constant (group, property)"
    );
    assert_eq!(
        dense_tracks.translations.anim_groups.len() + dense_tracks.scales.anim_groups.len(),
        4
    );
    assert!(
        sparse.memory_bytes() * 3 < dense.memory_bytes(),
        "sparse {} B vs dense {} B",
        sparse.memory_bytes(),
        dense.memory_bytes()
    );
    let rows = sparse.frame_count() * size_of::<SoaQuat>();
    assert!(sparse.memory_bytes() >= rows && sparse.memory_bytes() < rows + 1024);
}

#[test]
fn rate_rises_until_the_budget_is_met_or_the_closest_is_kept_with_a_warning() {
    let skeleton = chain(2);
    // A 2 Hz sine of 5 cm: lerp error h^2 * a / 8 with a = 0.05 * (4 pi)^2 needs about 100 Hz for 0.1 mm.
    let sine = |t: f32| Vec4::new(0.05 * (4.0 * std::f32::consts::PI * t).sin(), 0.0, 0.0, 0.0);
    let c = clip(
        "sway",
        vec![channel(
            1,
            Property::Translation,
            Interpolation::Linear,
            &times(1001, 1.0),
            sine,
        )],
    );
    let rc = RuntimeClip::build(&c, &skeleton, &RuntimeClipOptions::default()).expect("builds");
    assert!((80.0..=160.0).contains(&rc.rate_hz()), "rate {}", rc.rate_hz());
    assert!(
        rc.error().translation <= 1e-4 && rc.error().translation > 1e-6,
        "{:?}",
        rc.error()
    );
    assert_eq!(rc.frame_count(), (rc.rate_hz() as usize) + 1);

    let capped = RuntimeClipOptions {
        max_rate_hz: 30.0,
        ..Default::default()
    };
    // 30 Hz is not enough, and the 1,001 keys are more frames than the size limit: the clip still builds, with
    // the most faithful layout, its true error and a warning.
    let rc = RuntimeClip::build(&c, &skeleton, &capped).expect("builds without meeting the budget");
    assert_eq!((rc.frame_spacing(), rc.frame_count()), (FrameSpacing::Uniform, 31));
    assert!(rc.error().translation > 1e-4, "{:?}", rc.error());
    assert!(!rc.error().meets(&capped));
    let warning = rc.warning().expect("a warning").to_string();
    assert!(
        warning.starts_with("clip 'sway': no frame layout of at most 31 frames")
            && warning.contains("kept the closest, uniform with 31 frames: ")
            && warning.contains("mm translation error at joint 1 ('joint 1')"),
        "{warning}"
    );
    let met = RuntimeClip::build(&c, &skeleton, &RuntimeClipOptions::default()).expect("builds");
    assert!(met.warning().is_none());
}

#[test]
fn invalid_options_and_clips_are_rejected_with_the_clip_name() {
    let skeleton = chain(2);
    let c = clip(
        "idle",
        vec![channel(
            1,
            Property::Translation,
            Interpolation::Linear,
            &[0.0, 1.0],
            Vec4::splat,
        )],
    );
    for options in [
        RuntimeClipOptions {
            min_rate_hz: 0.0,
            ..Default::default()
        },
        RuntimeClipOptions {
            max_rate_hz: 10.0,
            ..Default::default()
        },
        RuntimeClipOptions {
            budget: ErrorBudget {
                translation: f32::NAN,
                rotation: 1e-3,
            },
            ..Default::default()
        },
        RuntimeClipOptions {
            vertex_distance: -1.0,
            ..Default::default()
        },
    ] {
        let err = RuntimeClip::build(&c, &skeleton, &options)
            .expect_err("invalid options")
            .to_string();
        assert!(err.contains("clip 'idle'"), "{err}");
    }
    let bad = clip(
        "bad",
        vec![channel(7, Property::Translation, Interpolation::Linear, &[0.0], |_| {
            Vec4::ZERO
        })],
    );
    let err = RuntimeClip::build(&bad, &skeleton, &RuntimeClipOptions::default()).expect_err("bad joint");
    assert!(err.to_string().contains("clip 'bad'"), "{err}");
}

#[test]
fn zero_duration_clips_have_one_frame() {
    let skeleton = chain(3);
    let c = clip(
        "pose",
        vec![channel(2, Property::Translation, Interpolation::Linear, &[0.0], |_| {
            Vec4::X
        })],
    );
    let rc = RuntimeClip::build(&c, &skeleton, &RuntimeClipOptions::default()).expect("builds");
    assert_eq!((rc.frame_count(), rc.duration(), rc.is_looping()), (1, 0.0, false));
    for t in [-1.0, 0.0, 3.0] {
        assert_eq!(sample(&rc, t)[0].translation.lane(2), Vec3::X);
    }
}

/// A chain of `n` joints `spacing` apart, each turning 0.3 rad about its own axis and back over 2 s, LINEAR
/// keys at 0, 1 and 2 s: RecursiveSkeletons' shape, where the normalized lerp's small error at every joint adds
/// up along the chain.
fn turning_chain(n: usize, spacing: f32) -> (Skeleton, Clip) {
    let mut skeleton = chain(n);
    for t in &mut skeleton.rest_pose[1..] {
        t.translation = Vec3::new(0.0, spacing, 0.0);
    }
    let channels = (0..n as u16)
        .map(|j| {
            let axis = Vec3::new(1.0, f32::from(j % 3), f32::from(j % 2)).normalize();
            channel(
                j,
                Property::Rotation,
                Interpolation::Linear,
                &[0.0, 1.0, 2.0],
                move |t| Vec4::from(Quat::from_axis_angle(axis, 0.3 * (1.0 - (t - 1.0).abs()))),
            )
        })
        .collect();
    (skeleton, clip("turn", channels))
}

/// The world position of every joint of `skeleton` posed by `local`, multiplied in f64.
fn joint_positions(skeleton: &Skeleton, local: &[Transform]) -> Vec<glam::DVec3> {
    let mut world: Vec<glam::DAffine3> = Vec::with_capacity(local.len());
    for (l, &p) in local.iter().zip(&skeleton.parents) {
        let m = glam::DAffine3::from_scale_rotation_translation(
            l.scale.as_dvec3(),
            glam::DQuat::from_vec4(Vec4::from(l.rotation).as_dvec4()),
            l.translation.as_dvec3(),
        );
        let parent = if p == crate::NO_PARENT {
            glam::DAffine3::IDENTITY
        } else {
            world[usize::from(p)]
        };
        world.push(parent * m);
    }
    world.iter().map(|w| w.translation).collect()
}

#[test]
fn deep_chains_hold_the_budget_in_model_space() {
    let (skeleton, c) = turning_chain(30, 0.3);
    let options = RuntimeClipOptions::default();
    // With a distance budget of 1 m, the key times alone pass: every joint is within the default local budget
    // (about 1e-4 rad), yet the chain's far end strays about 10 mm from the exact pose.
    let loose = RuntimeClipOptions {
        budget: ErrorBudget {
            translation: 1.0,
            ..options.budget
        },
        ..options
    };
    let keys = RuntimeClip::build(&c, &skeleton, &loose).expect("builds");
    assert_eq!(keys.frame_count(), 3);
    let local = keys.error();
    assert!(local.translation <= 1e-4 && local.rotation <= 1e-3, "{local:?}");
    assert!(local.model > 1e-3, "{local:?}");
    // With the default budget, the build refines until the chain holds 0.1 mm in model space.
    let rc = RuntimeClip::build(&c, &skeleton, &options).expect("builds");
    assert!(rc.warning().is_none(), "{:?}", rc.warning());
    assert!(rc.error().meets(&options), "{:?}", rc.error());
    assert!(
        matches!(rc.frame_spacing(), FrameSpacing::KeyTimes { .. }),
        "{}",
        rc.frame_spacing()
    );
    // Joint origins are virtual vertices too (the centres of the cubes): at the points where the normalized
    // lerp strays most, they stay within the budget of the exact pose, and the reported error is the largest.
    let (mut exact, mut runtime) = (vec![Transform::IDENTITY; 30], vec![Transform::IDENTITY; 30]);
    let mut worst = 0.0f64;
    for f in 0..rc.frame_count() - 1 {
        let (a, b) = (rc.frame_time(f), rc.frame_time(f + 1));
        for u in [0.211_324_87, 0.5, 0.788_675_1] {
            let t = a + (b - a) * u;
            c.sample_local_pose(&skeleton, t, &mut exact).expect("valid");
            rc.sample_reference(t, &mut runtime).expect("valid");
            let (e, r) = (joint_positions(&skeleton, &exact), joint_positions(&skeleton, &runtime));
            worst = e.iter().zip(&r).map(|(p, q)| p.distance(*q)).fold(worst, f64::max);
        }
    }
    assert!(
        worst <= f64::from(rc.error().model) && rc.error().model <= 1e-4,
        "{worst} m, reported {:?}, with {} frames",
        rc.error(),
        rc.frame_count()
    );
}

#[test]
fn virtual_vertices_must_cover_the_skin() {
    let (skeleton, c) = turning_chain(4, 0.3);
    let options = RuntimeClipOptions::default();
    let cubes = crate::VirtualVertices::cubes(4, 0.05);
    let rc = RuntimeClip::build_with_vertices(&c, &skeleton, &options, &cubes).expect("one set per skin joint");
    assert!(rc.error().meets(&options), "{:?}", rc.error());
    let err = RuntimeClip::build_with_vertices(&c, &skeleton, &options, &crate::VirtualVertices::cubes(3, 0.05))
        .expect_err("one set short")
        .to_string();
    assert!(err.contains("clip 'turn'") && err.contains("3 sets"), "{err}");
}

#[test]
fn auto_looping_follows_the_end_poses() {
    let skeleton = chain(2);
    let ts = times(31, 1.0);
    let cycle = |t: f32| Vec4::from(Quat::from_rotation_z(0.3 * (std::f32::consts::TAU * t).sin()));
    let ramp = |t: f32| Vec4::from(Quat::from_rotation_z(0.3 * t));
    let looped = clip(
        "cycle",
        vec![channel(1, Property::Rotation, Interpolation::Linear, &ts, cycle)],
    );
    let open = clip(
        "ramp",
        vec![channel(1, Property::Rotation, Interpolation::Linear, &ts, ramp)],
    );
    let options = RuntimeClipOptions::default();
    assert!(
        RuntimeClip::build(&looped, &skeleton, &options)
            .expect("builds")
            .is_looping()
    );
    assert!(
        !RuntimeClip::build(&open, &skeleton, &options)
            .expect("builds")
            .is_looping()
    );
    let forced = RuntimeClipOptions {
        looping: Looping::Yes,
        ..options
    };
    let rc = RuntimeClip::build(&open, &skeleton, &forced).expect("the seam is left out of the measurement");
    assert!(rc.is_looping());
    // The last frame equals the first, so sampling just before the duration approaches the first pose.
    let q = sample(&rc, 1.0 - 1e-6)[0].rotation.lane(1);
    assert!(angle(q, Quat::IDENTITY) < 1e-4, "{q}");
}

#[test]
fn clones_share_the_tracks() {
    let skeleton = chain(6);
    let ts = times(21, 1.0);
    let stride = |t: f32| Vec4::new(1.5 * t, 0.0, 0.5 * t, 0.0);
    let bend = |t: f32| Vec4::from(Quat::from_rotation_x((6.0 * t).sin()));
    let walk = clip(
        "walk",
        vec![
            channel(0, Property::Translation, Interpolation::Linear, &ts, stride),
            channel(4, Property::Rotation, Interpolation::Linear, &ts, bend),
        ],
    );
    let options = RuntimeClipOptions {
        extract_root_motion: true,
        ..Default::default()
    };
    let original = RuntimeClip::build(&walk, &skeleton, &options).expect("builds");
    let copy = original.clone();
    assert!(Arc::ptr_eq(&original.tracks, &copy.tracks), "a clone shares the tracks");
    assert_eq!(Arc::strong_count(&original.tracks), 2);
    // The clone reads the very same frames and root-motion track, at the same addresses.
    let frames = |rc: &RuntimeClip| rc.tracks.rotations.frames.as_ptr();
    assert!(!original.tracks.rotations.frames.is_empty());
    assert!(std::ptr::eq(frames(&original), frames(&copy)));
    let motion = original.root_motion().expect("the clip has root motion");
    assert!(std::ptr::eq(motion, copy.root_motion().expect("so does its clone")));
    assert_eq!(copy.memory_bytes(), original.memory_bytes());
    assert_eq!(copy.name(), "walk");
    for t in [0.0, 0.37, 1.0] {
        assert_eq!(sample(&copy, t), sample(&original, t), "t = {t}");
    }
    drop(original);
    assert_eq!(
        Arc::strong_count(&copy.tracks),
        1,
        "the last clone owns the tracks alone"
    );
}
