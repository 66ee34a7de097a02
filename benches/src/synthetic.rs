//! A generated 67-joint humanoid skeleton and a one-second looping clip that animates every joint, for
//! like-for-like figures against ozz-animation's 67-joint reference measurements; and a capture-like clip for any
//! skeleton, keyed at jittered times that only a frame-time table holds.

use anim_pose::{Channel, Clip, Interpolation, NO_PARENT, Property, Skeleton, Transform};
use glam::{Quat, Vec3, Vec4};

/// Joints in [`skeleton_67`].
pub const JOINTS_67: usize = 67;

/// A humanoid-shaped hierarchy of 67 joints, parent before child: pelvis, 4 spine joints, neck, head,
/// 14 face joints, two arms of clavicle, upper arm, forearm, hand and 5 three-joint fingers, and two legs of
/// thigh, shin, foot and toes.
pub fn skeleton_67() -> Skeleton {
    let mut parents: Vec<u16> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut rest: Vec<Transform> = Vec::new();
    let mut add = |name: String, parent: u16, offset: Vec3| -> u16 {
        parents.push(parent);
        names.push(name);
        rest.push(Transform {
            translation: offset,
            ..Transform::IDENTITY
        });
        (parents.len() - 1) as u16
    };
    let pelvis = add("pelvis".into(), NO_PARENT, Vec3::new(0.0, 0.95, 0.0));
    let mut spine = pelvis;
    for i in 0..4 {
        spine = add(format!("spine_{i}"), spine, Vec3::new(0.0, 0.12, 0.0));
    }
    let neck = add("neck".into(), spine, Vec3::new(0.0, 0.1, 0.0));
    let head = add("head".into(), neck, Vec3::new(0.0, 0.1, 0.0));
    for i in 0..14 {
        add(format!("face_{i}"), head, Vec3::new(0.01 * i as f32 - 0.07, 0.08, 0.09));
    }
    for side in [-1.0f32, 1.0] {
        let s = if side < 0.0 { "l" } else { "r" };
        let clavicle = add(format!("clavicle_{s}"), spine, Vec3::new(side * 0.05, 0.08, 0.0));
        let upper = add(format!("upper_arm_{s}"), clavicle, Vec3::new(side * 0.15, 0.0, 0.0));
        let fore = add(format!("forearm_{s}"), upper, Vec3::new(side * 0.28, 0.0, 0.0));
        let hand = add(format!("hand_{s}"), fore, Vec3::new(side * 0.26, 0.0, 0.0));
        for f in 0..5 {
            let mut j = hand;
            for k in 0..3 {
                j = add(
                    format!("finger_{f}_{k}_{s}"),
                    j,
                    Vec3::new(side * 0.03, 0.0, 0.02 * f as f32 - 0.04),
                );
            }
        }
    }
    for side in [-1.0f32, 1.0] {
        let s = if side < 0.0 { "l" } else { "r" };
        let thigh = add(format!("thigh_{s}"), pelvis, Vec3::new(side * 0.1, -0.05, 0.0));
        let shin = add(format!("shin_{s}"), thigh, Vec3::new(0.0, -0.42, 0.0));
        let foot = add(format!("foot_{s}"), shin, Vec3::new(0.0, -0.42, 0.0));
        add(format!("toes_{s}"), foot, Vec3::new(0.0, -0.05, 0.12));
    }
    let n = parents.len();
    assert_eq!(n, JOINTS_67, "the generated skeleton must have 67 joints");
    let mut skeleton = Skeleton::from_parents("synthetic_67", parents, rest).expect("the generated skeleton is valid");
    skeleton.joint_names = names;
    skeleton
}

/// A one-second looping clip of `skeleton` with LINEAR keys at 30 Hz: every joint rotates on a smooth
/// periodic curve of its own phase, and the root also translates.
pub fn clip_for(skeleton: &Skeleton) -> Clip {
    let keys = 31;
    let times: Vec<f32> = (0..keys).map(|i| i as f32 / 30.0).collect();
    let mut channels = Vec::new();
    for j in 0..skeleton.joint_count() {
        let values = (0..keys)
            .map(|i| {
                let phase = std::f32::consts::TAU * (i % (keys - 1)) as f32 / (keys - 1) as f32;
                let a = 0.4 * (phase + j as f32 * 0.37).sin();
                let b = 0.2 * (2.0 * phase + j as f32 * 0.11).cos();
                Vec4::from(Quat::from_euler(glam::EulerRot::XYZ, a, b, 0.5 * a * b))
            })
            .collect();
        channels.push(Channel {
            joint: j as u16,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values,
        });
    }
    let root = (0..keys)
        .map(|i| {
            let phase = std::f32::consts::TAU * (i % (keys - 1)) as f32 / (keys - 1) as f32;
            Vec4::new(0.02 * phase.sin(), 0.95 + 0.03 * (2.0 * phase).cos(), 0.0, 0.0)
        })
        .collect();
    channels.push(Channel {
        joint: 0,
        property: Property::Translation,
        interpolation: Interpolation::Linear,
        times,
        values: root,
    });
    let clip = Clip {
        name: "synthetic".into(),
        animation: 0,
        skeleton: 0,
        duration: 1.0,
        channels,
    };
    clip.validate(skeleton).expect("the generated clip is valid");
    clip
}

/// A capture-like clip of `skeleton` over `seconds`: every joint's rotation keyed at about 37.5 Hz with ±0.2%
/// jitter in each interval (one key list shared by every channel, as motion-capture exporters write), turning at
/// up to 25 rad/s, and the root walking. No uniform rate up to 240 Hz holds it within the default budget, so its
/// runtime clip is a key-time table.
pub fn capture_clip_for(skeleton: &Skeleton, seconds: f32) -> Clip {
    let mut times = vec![0.0f32];
    let mut k = 0u32;
    while times[times.len() - 1] < seconds {
        // A fixed, irregular jitter in [-0.2%, 0.2%] from the golden ratio's fractional multiples.
        k += 1;
        let jitter = 0.004 * ((k as f32 * 0.618_034).fract() - 0.5);
        times.push(times[times.len() - 1] + (1.0 + jitter) / 37.5);
    }
    let mut channels = Vec::new();
    for j in 0..skeleton.joint_count() {
        let amplitude = 0.3 + 0.1 * (j % 5) as f32;
        let omega = (25.0 / amplitude) * (0.4 + 0.6 * ((j as f32 * 0.73).sin().abs()));
        let axis = Vec3::new((j as f32).sin(), 1.0, (j as f32 * 1.7).cos()).normalize();
        let values = times
            .iter()
            .map(|&t| Vec4::from(Quat::from_axis_angle(axis, amplitude * (omega * t + j as f32).sin())))
            .collect();
        channels.push(Channel {
            joint: j as u16,
            property: Property::Rotation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values,
        });
    }
    let root = times
        .iter()
        .map(|&t| Vec4::new(0.2 * (0.7 * t).sin(), 0.95 + 0.03 * (11.0 * t).cos(), 1.3 * t, 0.0))
        .collect();
    channels.push(Channel {
        joint: 0,
        property: Property::Translation,
        interpolation: Interpolation::Linear,
        times: times.clone(),
        values: root,
    });
    let clip = Clip {
        name: "capture".into(),
        animation: 0,
        skeleton: 0,
        duration: times[times.len() - 1],
        channels,
    };
    clip.validate(skeleton).expect("the generated clip is valid");
    clip
}
