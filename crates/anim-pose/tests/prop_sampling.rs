//! Property tests of runtime clips and `SamplingJob`, and the build of every sample clip.
//!
//! - The SoA `SamplingJob` equals the plain `RuntimeClip::sample_reference` on random skeletons (1 to 70 joints,
//!   sometimes 300) and random clips (LINEAR, STEP and CUBICSPLINE channels over random joints and key times),
//!   with uniform frames or a frame-time table (whichever is smaller), at random times, including negative times,
//!   times past the duration and exact frame times.
//! - On random smooth clips (no STEP), the build meets the default budget, and an independent measurement at
//!   random times against `Clip::sample_local_pose` agrees within 5%: the build measures on a grid of eight
//!   points per frame interval plus the key times and midpoints, and the error can rise slightly between them.
//! - Every clip of the default character, and of every sample model when `CROWD_SAMPLE_ASSETS` is set, builds
//!   with the default options within the budget.

#![cfg(feature = "gltf")]

mod common;

use std::path::Path;

use anim_pose::{
    Channel, Clip, ErrorBudget, FrameSpacing, Interpolation, Looping, NO_PARENT, Property, RuntimeClip,
    RuntimeClipOptions, Skeleton, Transform,
};
use common::{angle, sample_soa};
use glam::{Quat, Vec3, Vec4};
use proptest::prelude::*;
use proptest::sample::Index;

/// A skeleton of `n` joints with random-looking parents and rest poses, derived from the joint index.
fn skeleton(n: usize, seed: u32) -> Skeleton {
    let wave = |i: usize, k: f32| ((i as f32 + 1.0) * k + seed as f32 * 0.37).sin();
    let parents = (0..n)
        .map(|i| {
            if i == 0 {
                NO_PARENT
            } else {
                ((i * 7 + seed as usize) % i) as u16
            }
        })
        .collect();
    let rest_pose = (0..n)
        .map(|i| Transform {
            translation: Vec3::new(wave(i, 1.3), wave(i, 2.1), wave(i, 0.7)) * 0.2,
            rotation: Quat::from_euler(glam::EulerRot::XYZ, wave(i, 0.9), wave(i, 1.7), wave(i, 2.9)),
            scale: Vec3::splat(1.0 + 0.1 * wave(i, 3.1)),
        })
        .collect();
    Skeleton::from_parents(&format!("random {n}"), parents, rest_pose).expect("valid random skeleton")
}

/// A random channel before it is bound to a joint count.
#[derive(Clone, Debug)]
struct ChannelSpec {
    joint: Index,
    property: Property,
    interpolation: Interpolation,
    /// The first key time.
    start: f32,
    /// Gaps between consecutive keys; one key more than gaps.
    gaps: Vec<f32>,
    /// Raw values in [-1, 1], at least one per key.
    values: Vec<[f32; 4]>,
    /// Raw tangents in [-1, 1], at least one per key.
    tangents: Vec<[f32; 4]>,
}

fn property_strategy() -> impl Strategy<Value = Property> {
    prop_oneof![
        Just(Property::Translation),
        Just(Property::Rotation),
        Just(Property::Scale)
    ]
}

fn raw4() -> impl Strategy<Value = [f32; 4]> {
    [-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0]
}

/// Channels with arbitrary interpolation and key times: for comparing the SoA and reference paths.
fn any_channel() -> impl Strategy<Value = ChannelSpec> {
    let interpolation = prop_oneof![
        Just(Interpolation::Step),
        Just(Interpolation::Linear),
        Just(Interpolation::CubicSpline)
    ];
    (
        any::<Index>(),
        property_strategy(),
        interpolation,
        0.0f32..0.5,
        prop::collection::vec(0.005f32..0.4, 0..8),
        prop::collection::vec(raw4(), 9),
        prop::collection::vec(raw4(), 9),
    )
        .prop_map(
            |(joint, property, interpolation, start, gaps, values, tangents)| ChannelSpec {
                joint,
                property,
                interpolation,
                start,
                gaps,
                values,
                tangents,
            },
        )
}

/// The value of a key from raw numbers: translations within 2 units, unit rotations, scales in [0.5, 1.5].
fn value(property: Property, raw: [f32; 4], amplitude: f32) -> Vec4 {
    let v = Vec4::from_array(raw);
    match property {
        Property::Translation => (v * 2.0 * amplitude).truncate().extend(0.0),
        Property::Rotation => {
            let axis = v.truncate();
            if axis.length() < 1e-3 {
                Vec4::W
            } else {
                Vec4::from(Quat::from_axis_angle(
                    axis.normalize(),
                    v.w * std::f32::consts::PI * amplitude,
                ))
            }
        }
        Property::Scale => (Vec3::ONE + v.truncate() * 0.5 * amplitude).extend(0.0),
    }
}

/// Binds channel specs to a skeleton of `n` joints; later specs for an animated (joint, property) are dropped.
/// `amplitude` scales the values and `tangent` the cubic tangents.
fn clip(name: &str, n: usize, specs: &[ChannelSpec], amplitude: f32, tangent: f32) -> Clip {
    let mut channels: Vec<Channel> = Vec::new();
    for spec in specs {
        let joint = spec.joint.index(n) as u16;
        if channels.iter().any(|c| c.joint == joint && c.property == spec.property) {
            continue;
        }
        let mut t = spec.start;
        let mut times = vec![t];
        for gap in &spec.gaps {
            t += gap;
            times.push(t);
        }
        let keys = spec
            .values
            .iter()
            .take(times.len())
            .map(|&raw| value(spec.property, raw, amplitude));
        let values = match spec.interpolation {
            Interpolation::CubicSpline => keys
                .zip(&spec.tangents)
                .flat_map(|(k, &raw)| {
                    let m = Vec4::from_array(raw) * tangent;
                    let m = if spec.property == Property::Rotation {
                        m
                    } else {
                        m.truncate().extend(0.0)
                    };
                    [m, k, m]
                })
                .collect(),
            Interpolation::Step | Interpolation::Linear => keys.collect(),
        };
        channels.push(Channel {
            joint,
            property: spec.property,
            interpolation: spec.interpolation,
            times,
            values,
        });
    }
    common::clip_of(name, channels)
}

/// A sampling time, resolved once the clip's duration and frame count are known.
#[derive(Clone, Copy, Debug)]
enum TimeSpec {
    /// `x` times the duration, from -3 to 4 durations.
    Scaled(f32),
    /// The time of frame `index mod frame_count`.
    Frame(Index),
    /// Seconds, regardless of the duration.
    Seconds(f32),
}

fn time_strategy() -> impl Strategy<Value = TimeSpec> {
    prop_oneof![
        (-3.0f32..4.0).prop_map(TimeSpec::Scaled),
        any::<Index>().prop_map(TimeSpec::Frame),
        prop_oneof![Just(0.0f32), Just(-0.0), Just(1e-7), -100.0f32..100.0].prop_map(TimeSpec::Seconds),
    ]
}

fn resolve(spec: TimeSpec, rc: &RuntimeClip) -> f32 {
    let d = rc.duration();
    match spec {
        TimeSpec::Scaled(x) => x * d,
        TimeSpec::Frame(i) => rc.frame_time(i.index(rc.frame_count())),
        TimeSpec::Seconds(t) => t,
    }
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

fn close_transforms(a: &Transform, b: &Transform) -> bool {
    let va = [a.translation.to_array(), a.scale.to_array()].concat();
    let vb = [b.translation.to_array(), b.scale.to_array()].concat();
    va.iter().zip(&vb).all(|(x, y)| close(*x, *y))
        && a.rotation
            .to_array()
            .iter()
            .zip(&b.rotation.to_array())
            .all(|(x, y)| close(*x, *y))
}

/// The largest (translation, rotation, relative scale) error of `rc` against the exact `clip` at `times`.
fn measure(rc: &RuntimeClip, clip: &Clip, skeleton: &Skeleton, times: &[f32]) -> [f32; 3] {
    let mut exact = vec![Transform::IDENTITY; skeleton.joint_count()];
    let mut worst = [0.0f32; 3];
    for &t in times {
        clip.sample_local_pose(skeleton, t, &mut exact).expect("valid time");
        for (a, b) in sample_soa(rc, t).iter().zip(&exact) {
            worst[0] = worst[0].max(a.translation.distance(b.translation));
            worst[1] = worst[1].max(angle(a.rotation, b.rotation));
            worst[2] = worst[2].max(a.scale.distance(b.scale) / b.scale.length().max(0.01));
        }
    }
    worst
}

/// Smooth channels: LINEAR and CUBICSPLINE, key times on a 1/30 s grid 0.2 to 0.5 s apart, small tangents.
fn smooth_channel() -> impl Strategy<Value = ChannelSpec> {
    let interpolation = prop_oneof![Just(Interpolation::Linear), Just(Interpolation::CubicSpline)];
    (
        any::<Index>(),
        property_strategy(),
        interpolation,
        0u32..6,
        prop::collection::vec(6u32..15, 1..6),
        prop::collection::vec(raw4(), 7),
        prop::collection::vec(raw4(), 7),
    )
        .prop_map(
            |(joint, property, interpolation, start, gaps, values, tangents)| ChannelSpec {
                joint,
                property,
                interpolation,
                start: start as f32 / 30.0,
                gaps: gaps.iter().map(|&g| g as f32 / 30.0).collect(),
                values,
                tangents,
            },
        )
}

fn joint_count_strategy() -> impl Strategy<Value = usize> {
    prop_oneof![12 => 1usize..=70, 1 => Just(300usize)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn soa_sampling_equals_the_reference(
        n in joint_count_strategy(),
        seed in 0u32..1000,
        specs in prop::collection::vec(any_channel(), 0..24),
        looping in prop_oneof![Just(Looping::Auto), Just(Looping::Yes), Just(Looping::No)],
        min_rate in prop_oneof![Just(7.5f32), Just(15.0), Just(24.0), Just(30.0), Just(60.0)],
        times in prop::collection::vec(time_strategy(), 1..12),
    ) {
        let skeleton = skeleton(n, seed);
        let clip = clip("random", n, &specs, 1.0, 1.0);
        // A budget every layout meets, so that the smallest is chosen: the key times alone, or uniform frames at the
        // random rate (with any STEP key times added), whichever has fewer frames.
        let options = RuntimeClipOptions {
            budget: ErrorBudget { translation: 1e6, rotation: 10.0 },
            scale_budget: 1e6,
            min_rate_hz: min_rate,
            looping,
            ..RuntimeClipOptions::default()
        };
        let rc = RuntimeClip::build(&clip, &skeleton, &options).expect("builds");
        match rc.frame_spacing() {
            FrameSpacing::KeyTimes { subdivisions, .. } => prop_assert_eq!(subdivisions, 1),
            _ => prop_assert_eq!(rc.rate_hz(), min_rate),
        }
        prop_assert_eq!(rc.joint_count(), n);
        let mut reference = vec![Transform::IDENTITY; n];
        for spec in times {
            let t = resolve(spec, &rc);
            rc.sample_reference(t, &mut reference).expect("valid time");
            let soa = sample_soa(&rc, t);
            for (j, (a, b)) in soa.iter().zip(&reference).enumerate() {
                prop_assert!(
                    close_transforms(a, b),
                    "t = {} ({:?}), joint {}: SoA {:?} vs reference {:?}", t, spec, j, a, b
                );
            }
        }
    }

    #[test]
    fn smooth_clips_meet_the_budget_when_measured_independently(
        n in 1usize..=20,
        seed in 0u32..1000,
        specs in prop::collection::vec(smooth_channel(), 1..10),
        times in prop::collection::vec(0.0f32..1.0, 64),
    ) {
        let skeleton = skeleton(n, seed);
        let clip = clip("smooth", n, &specs, 0.03, 0.1);
        let options = RuntimeClipOptions::default();
        let rc = RuntimeClip::build(&clip, &skeleton, &options).expect("a smooth clip meets the budget");
        prop_assert!(rc.error().meets(&options), "{:?}", rc.error());
        let times: Vec<f32> = times.iter().map(|x| x * clip.duration).collect();
        let [t, r, s] = measure(&rc, &clip, &skeleton, &times);
        let slack = 1.05;
        prop_assert!(t <= options.budget.translation * slack, "translation {} at {} Hz", t, rc.rate_hz());
        prop_assert!(r <= options.budget.rotation * slack, "rotation {} at {} Hz", r, rc.rate_hz());
        prop_assert!(s <= options.scale_budget * slack, "scale {} at {} Hz", s, rc.rate_hz());
    }
}

/// Builds every clip of the model at `path` with the default options, prints its figures and checks the budget.
fn build_all(path: &Path) {
    let model = anim_pose::import_file(path).unwrap_or_else(|e| panic!("{} failed to import: {e}", path.display()));
    let options = RuntimeClipOptions::default();
    let file = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    for clip in &model.clips {
        let skeleton = &model.skeletons[clip.skeleton];
        let rc = RuntimeClip::build(clip, skeleton, &options).unwrap_or_else(|e| panic!("{file}: {e}"));
        let e = rc.error();
        eprintln!(
            "{file} '{}': {} joints, {:.3} s, {} Hz, {} frames, {} B, looping {}, error {:.4} mm {:.5} rad {:.6} scale",
            rc.name(),
            rc.joint_count(),
            rc.duration(),
            rc.rate_hz(),
            rc.frame_count(),
            rc.memory_bytes(),
            rc.is_looping(),
            e.translation * 1000.0,
            e.rotation,
            e.scale
        );
        assert!(e.meets(&options), "{file} '{}': {e:?}", rc.name());
        // A spot check, independent of the build's own measurement.
        let times: Vec<f32> = (0..=200).map(|i| i as f32 * 0.005 * clip.duration).collect();
        let [t, r, s] = measure(&rc, clip, skeleton, &times);
        assert!(
            t <= options.budget.translation * 1.05 && r <= options.budget.rotation * 1.05 && s <= 1.05e-3,
            "{file} '{}': measured {t} m, {r} rad, {s} scale",
            rc.name()
        );
    }
}

#[test]
fn default_character_clips_build_within_the_budget() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    build_all(Path::new(path));
    // With root motion extracted, every clip still meets the budget, and the in-place root stays put.
    let model = anim_pose::import_file(path).expect("the default character imports");
    let skeleton = &model.skeletons[0];
    let options = RuntimeClipOptions {
        extract_root_motion: true,
        ..RuntimeClipOptions::default()
    };
    for clip in model.clips_for(0) {
        let rc = RuntimeClip::build(clip, skeleton, &options).unwrap_or_else(|e| panic!("{e}"));
        let motion = rc.root_motion().expect("extracted");
        let cycle = motion.cycle_displacement();
        eprintln!(
            "crowd_character.glb '{}' in place: {} Hz, {} B, looping {}, cycle {:.3} m at yaw {:.4} rad",
            rc.name(),
            rc.rate_hz(),
            rc.memory_bytes(),
            rc.is_looping(),
            cycle.translation,
            cycle.yaw
        );
        assert!(rc.error().meets(&options), "'{}': {:?}", rc.name(), rc.error());
        let start = sample_soa(&rc, 0.0)[0].translation;
        for i in 0..=20 {
            let root = sample_soa(&rc, i as f32 * 0.05 * rc.duration())[0].translation;
            assert!(
                (root.x - start.x).abs() < 1e-6 && (root.z - start.z).abs() < 1e-6,
                "'{}'",
                rc.name()
            );
        }
    }
}

#[test]
fn sample_model_clips_build_within_the_budget() {
    let Some(dir) = common::asset_dir("gltf") else {
        return;
    };
    let files = common::files_with_extensions(&dir, &[".glb", ".gltf"]);
    assert!(!files.is_empty(), "no sample models under {}", dir.display());
    for path in files {
        build_all(&path);
    }
}
