//! The animation clips: `idle`, `walk`, `run` and `wave`, baked at 30 keys per second.
//!
//! Each clip is a function from the loop phase in [0, 1) to a [`Pose`], sampled at `i / 30` seconds.
//! The last key is the phase-0 pose again, so each clip loops exactly: its last key equals its first key bit
//! for bit, and the last key time is the duration.
//! Walk and run are in place: the pelvis bobs and sways, and its height is set each frame so that the lowest
//! point under the shoes touches the ground (except in the flight phases of the run).

use std::f64::consts::TAU;

use glam::{DMat3, DQuat, DVec3};

use super::pose::{Pose, about, pitch, roll, yaw};
use super::rig::{FINGERS, Rig, Side, arm_direction, finger_direction, palm_normal, thumb_direction};

/// Keys per second of every channel.
pub const FRAME_RATE: u32 = 30;

/// The key values of a channel, rounded to the stored `f32`.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Translations.
    Translation(Vec<[f32; 3]>),
    /// Unit quaternions `(x, y, z, w)` with `w >= 0`.
    Rotation(Vec<[f32; 4]>),
}

/// One animated property of one joint, with a key per frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// The animated joint.
    pub joint: usize,
    /// The keys.
    pub values: Values,
}

/// A looping clip.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// The clip's name.
    pub name: &'static str,
    /// The number of frames in one loop; there are `frames + 1` keys.
    pub frames: u32,
    /// The channels: the pelvis translation, then rotations in joint order.
    pub channels: Vec<Channel>,
}

impl Clip {
    /// The time of key `i`, in seconds.
    pub fn key_time(i: u32) -> f32 {
        i as f32 / FRAME_RATE as f32
    }

    /// The duration, in seconds: the time of the last key.
    #[cfg(test)]
    pub fn duration(&self) -> f32 {
        Self::key_time(self.frames)
    }

    /// The key times, shared by all channels.
    pub fn times(&self) -> Vec<f32> {
        (0..=self.frames).map(Self::key_time).collect()
    }
}

/// Builds the clips, in the order `idle`, `walk`, `run`, `wave`.
pub fn build(rig: &Rig) -> Vec<Clip> {
    vec![
        bake(rig, "idle", 120, |phase| idle(rig, phase)),
        bake(rig, "walk", 33, |phase| gait(rig, &WALK, phase)),
        bake(rig, "run", 42, |phase| gait(rig, &RUN, (2.0 * phase).fract())),
        bake(rig, "wave", 60, |phase| wave(rig, phase)),
    ]
}

/// Samples `pose_at` at every frame and keeps the pelvis translation and the rotations that ever leave the rest pose.
fn bake(rig: &Rig, name: &'static str, frames: u32, pose_at: impl Fn(f64) -> Pose) -> Clip {
    // Key `frames` takes the phase-0 pose again, so that the loop closes exactly.
    let poses: Vec<Pose> = (0..=frames)
        .map(|i| pose_at(f64::from(i % frames) / f64::from(frames)))
        .collect();
    let mut channels = vec![Channel {
        joint: 0,
        values: Values::Translation(
            poses
                .iter()
                .map(|p| [p.pelvis.x as f32, p.pelvis.y as f32, p.pelvis.z as f32])
                .collect(),
        ),
    }];
    for joint in 0..rig.len() {
        let keys: Vec<[f32; 4]> = poses
            .iter()
            .map(|p| {
                let q = p.rotations[joint].normalize();
                let q = if q.w < 0.0 { -q } else { q };
                [q.x as f32, q.y as f32, q.z as f32, q.w as f32]
            })
            .collect();
        if keys.iter().any(|k| *k != [0.0, 0.0, 0.0, 1.0]) {
            channels.push(Channel {
                joint,
                values: Values::Rotation(keys),
            });
        }
    }
    Clip { name, frames, channels }
}

/// A periodic bump of height 1 at phase `center`, with standard deviation `width` (both in cycles).
fn bump(phase: f64, center: f64, width: f64) -> f64 {
    let d = phase - center;
    let d = d - d.round();
    (-0.5 * (d / width).powi(2)).exp()
}

/// A sum of periodic bumps, each `(height, center, width)`.
fn bumps(phase: f64, terms: &[(f64, f64, f64)]) -> f64 {
    terms
        .iter()
        .map(|&(height, center, width)| height * bump(phase, center, width))
        .sum()
}

/// The rotation that takes the frame (`from_dir`, `from_up`) to the frame (`to_dir`, `to_up`).
fn frame_rotation(from_dir: DVec3, from_up: DVec3, to_dir: DVec3, to_up: DVec3) -> DQuat {
    let basis = |d: DVec3, u: DVec3| {
        let d = d.normalize();
        let u = (u - d * u.dot(d)).normalize();
        DMat3::from_cols(d, u, d.cross(u))
    };
    DQuat::from_mat3(&(basis(to_dir, to_up) * basis(from_dir, from_up).transpose()))
}

/// Curls the fingers of one hand: `curl` radians at each finger joint (a little more towards the little
/// finger), and `thumb` radians at each thumb joint.
fn curl_fingers(pose: &mut Pose, rig: &Rig, side: Side, curl: f64, thumb: f64) {
    let n = palm_normal();
    for (f, name) in FINGERS.iter().enumerate() {
        let (dir, amount) = if f == 0 {
            (thumb_direction(), thumb)
        } else {
            (finger_direction(f), curl)
        };
        let axis = dir.cross(n);
        let spread = 1.0 + 0.08 * f as f64;
        for (k, share) in [0.9, 1.1, 0.8].iter().enumerate() {
            pose.set_side(
                rig,
                &format!("{name}_{:02}", k + 1),
                side,
                about(axis, amount * share * spread),
            );
        }
    }
}

/// Hangs one arm: `swing` radians forward at the shoulder, lowered `lower` radians from the rest A-pose,
/// with the elbow bent `elbow` radians and the wrist bent `wrist` radians towards the palm.
fn hang_arm(pose: &mut Pose, rig: &Rig, side: Side, swing: f64, lower: f64, elbow: f64, wrist: f64) {
    let n = palm_normal();
    pose.set_side(rig, "upper_arm", side, pitch(-swing) * roll(-lower));
    pose.set_side(rig, "forearm", side, about(n, elbow));
    pose.set_side(rig, "hand", side, about(arm_direction().cross(n), wrist));
}

/// Keeps the head level: the neck and head take the model-space rotation `target` between them.
fn steady_head(pose: &mut Pose, rig: &Rig, target: DQuat) {
    let [chest, neck, head] = ["chest", "neck", "head"].map(|n| rig.index(n));
    let chest_rotation = pose.model_rotation(rig, chest);
    pose.set_model_rotation(rig, neck, chest_rotation.slerp(target, 0.5));
    pose.set_model_rotation(rig, head, target);
}

/// Standing weight shifts and breathing, over one loop of `phase`; also the body of the wave.
fn stand(rig: &Rig, phase: f64) -> Pose {
    let mut pose = Pose::rest(rig);
    let angle = TAU * phase;
    let breath = angle.sin();
    let sway = (angle + 0.3).sin();
    let pelvis = rig.index("pelvis");
    pose.pelvis.x += 0.012 * sway;
    pose.rotations[pelvis] = roll(0.02 * sway) * pitch(0.02);
    let spine = ["spine_01", "spine_02", "spine_03", "chest"].map(|n| rig.index(n));
    pose.rotations[spine[0]] = roll(-0.012 * sway) * pitch(-0.01);
    pose.rotations[spine[1]] = roll(-0.008 * sway) * pitch(-0.006 * breath);
    pose.rotations[spine[2]] = pitch(-0.01 * breath - 0.005);
    pose.rotations[spine[3]] = pitch(-0.014 * breath) * yaw(0.015 * (angle + 1.0).sin());
    steady_head(
        &mut pose,
        rig,
        yaw(0.12 * (angle + 1.0).sin()) * pitch(0.04 + 0.025 * (2.0 * angle).sin()),
    );
    for side in Side::BOTH {
        let lag = if side == Side::Left { 0.0 } else { 0.4 };
        pose.set_side(rig, "clavicle", side, roll(0.012 * (breath + 1.0)));
        hang_arm(
            &mut pose,
            rig,
            side,
            0.04 + 0.02 * (angle + lag).sin(),
            0.63,
            0.3 + 0.03 * breath,
            0.12,
        );
        curl_fingers(&mut pose, rig, side, 0.22, 0.1);
    }
    plant_feet(&mut pose, rig);
    pose.stand(rig, 0.0);
    pose
}

/// Turns the thighs so that the ankles stay over their rest positions, with the legs straight and the feet flat.
fn plant_feet(pose: &mut Pose, rig: &Rig) {
    for side in Side::BOTH {
        let [thigh, foot] = ["thigh", "foot"].map(|n| rig.side_index(n, side));
        let ankle = rig.joints[foot].position;
        let rest = ankle - rig.joints[thigh].position;
        let now = ankle - pose.joint_position(rig, thigh);
        pose.set_model_rotation(rig, thigh, DQuat::from_rotation_arc(rest.normalize(), now.normalize()));
        pose.set_model_rotation(rig, foot, DQuat::IDENTITY);
    }
}

/// The idle clip's pose: four seconds of breathing and slight swaying.
fn idle(rig: &Rig, phase: f64) -> Pose {
    stand(rig, phase)
}

/// The wave clip's pose: the standing body, with the right hand raised and waving three times.
fn wave(rig: &Rig, phase: f64) -> Pose {
    let mut pose = stand(rig, phase);
    let side = Side::Right;
    let wave = (TAU * 3.0 * phase).sin();
    let lag = (TAU * 3.0 * phase - 0.9).sin();
    // The arm is posed as a left arm and mirrored: the upper arm points out, a little forward and up, and the
    // elbow's hinge axis (the palm normal at rest) turns to face forward, so that the forearm bends upward.
    let raise = 0.2;
    pose.set_side(rig, "clavicle", side, roll(raise));
    let upper = DVec3::new(0.85, 0.08, 0.3).normalize();
    let hinge = (DVec3::Z - upper * upper.z).normalize();
    let upper_rotation = frame_rotation(arm_direction(), palm_normal(), upper, hinge);
    pose.set_side(rig, "upper_arm", side, roll(raise).inverse() * upper_rotation);
    pose.set_side(rig, "forearm", side, about(palm_normal(), 1.8 + 0.35 * wave));
    pose.set_side(rig, "hand", side, about(palm_normal(), 0.2 * lag));
    curl_fingers(&mut pose, rig, side, 0.06, -0.1);
    let [chest, head] = ["chest", "head"].map(|n| rig.index(n));
    let lean = pose.rotations[chest] * roll(0.025);
    pose.rotations[chest] = lean;
    // The head tilts a little towards the raised hand.
    let head_target = pose.model_rotation(rig, head) * roll(0.06);
    steady_head(&mut pose, rig, head_target);
    pose
}

/// The parameters of a walk or run cycle. Angles are in radians and phases in cycles, for the left leg;
/// the right leg runs half a cycle later. Phase 0 is the left foot's strike.
struct Gait {
    /// Mean and amplitude of the hip's forward flexion, and how long before the strike it peaks (in cycles);
    /// the arms swing in time with the hips.
    hip: (f64, f64, f64),
    /// Knee flexion: a constant and bumps `(height, center, width)`.
    knee: (f64, [(f64, f64, f64); 2]),
    /// Foot pitch in model space, positive toes down, as bumps.
    foot: [(f64, f64, f64); 3],
    /// Toe bend relative to the foot, negative up, as a bump.
    toes: (f64, f64, f64),
    /// Shoulder swing amplitude and the arm's lowering from the rest A-pose.
    arm: (f64, f64),
    /// Elbow flexion mean and the extra flexion when the arm swings forward.
    elbow: (f64, f64),
    /// Finger curl.
    curl: f64,
    /// Pelvis yaw, roll and lateral sway amplitudes.
    pelvis: (f64, f64, f64),
    /// Forward lean of the trunk, spread over the spine.
    lean: f64,
    /// Pelvis lift above the ground contact in the flight phases, at the middle of each flight.
    flight: f64,
    /// The phase at which the flight (or the swing of the other leg) peaks, after each strike.
    flight_center: f64,
}

/// The walk: a 1.1 s cycle of two steps.
const WALK: Gait = Gait {
    hip: (0.1, 0.34, 0.0),
    knee: (0.07, [(0.18, 0.1, 0.06), (1.05, 0.7, 0.11)]),
    foot: [(-0.22, 0.0, 0.05), (0.5, 0.57, 0.06), (-0.08, 0.86, 0.07)],
    toes: (-0.45, 0.56, 0.05),
    arm: (0.3, 0.62),
    elbow: (0.3, 0.15),
    curl: 0.25,
    pelvis: (0.07, 0.04, 0.016),
    lean: 0.06,
    flight: 0.0,
    flight_center: 0.0,
};

/// The run: two 0.7 s cycles, so that the clip lasts 1.4 s.
const RUN: Gait = Gait {
    hip: (0.2, 0.55, 0.08),
    knee: (0.18, [(0.3, 0.14, 0.07), (1.55, 0.66, 0.12)]),
    foot: [(-0.1, 0.0, 0.04), (0.6, 0.33, 0.06), (0.15, 0.6, 0.1)],
    toes: (-0.45, 0.31, 0.05),
    arm: (0.55, 0.5),
    elbow: (1.35, 0.2),
    curl: 0.85,
    pelvis: (0.1, 0.05, 0.01),
    lean: 0.14,
    flight: 0.03,
    flight_center: 0.42,
};

/// The walk or run pose at `phase` of one cycle.
fn gait(rig: &Rig, g: &Gait, phase: f64) -> Pose {
    let mut pose = Pose::rest(rig);
    let angle = TAU * phase;
    let (c, s) = (angle.cos(), angle.sin());
    let (yaw_amp, roll_amp, sway) = g.pelvis;
    pose.pelvis.x += sway * s;
    pose.rotations[0] = yaw(-yaw_amp * c) * roll(roll_amp * s) * pitch(0.3 * g.lean);
    let spine = ["spine_01", "spine_02", "spine_03", "chest"].map(|n| rig.index(n));
    for (k, &j) in spine.iter().enumerate() {
        let twist = if k == 0 { 0.0 } else { 0.55 * yaw_amp * c };
        pose.rotations[j] = yaw(twist) * roll(-0.3 * roll_amp * s) * pitch(0.7 * g.lean / 4.0);
    }
    steady_head(&mut pose, rig, pitch(0.02 + 0.015 * (2.0 * angle).cos()));
    for side in Side::BOTH {
        let own = if side == Side::Left {
            phase
        } else {
            (phase + 0.5).fract()
        };
        let oc = (TAU * (own + g.hip.2)).cos();
        let hip = g.hip.0 + g.hip.1 * oc;
        let knee = g.knee.0 + bumps(own, &g.knee.1);
        let foot = bumps(own, &g.foot);
        let toes = g.toes.0 * bump(own, g.toes.1, g.toes.2);
        let [thigh, foot_joint] = ["thigh", "foot"].map(|n| rig.side_index(n, side));
        pose.set_model_rotation(rig, thigh, pitch(-hip));
        pose.set_side(rig, "shin", side, pitch(knee));
        pose.set_model_rotation(rig, foot_joint, pitch(foot));
        pose.set_side(rig, "toes", side, pitch(toes));
        // The arm swings against the leg on the same side.
        let swing = -g.arm.0 * oc;
        hang_arm(&mut pose, rig, side, swing, g.arm.1, g.elbow.0 - g.elbow.1 * oc, 0.1);
        pose.set_side(rig, "clavicle", side, yaw(-0.04 * g.arm.0 * oc));
        curl_fingers(&mut pose, rig, side, g.curl, 0.3 * g.curl);
    }
    let lift = g.flight * (bump(phase, g.flight_center, 0.06) + bump(phase, g.flight_center + 0.5, 0.06));
    pose.stand(rig, lift);
    pose
}
