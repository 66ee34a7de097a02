//! Poses of the rig in f64: local joint rotations and the pelvis translation, with forward kinematics.
//!
//! Clips are written as functions from the cycle phase to a [`Pose`], built with the helpers here.
//! Left-side rotations are mirrored onto the right side with [`mirror`].

use glam::{DQuat, DVec3};

use super::rig::{Rig, Side};

/// A pose: the local rotation of every joint and the model-space translation of the pelvis (the root).
#[derive(Clone, Debug)]
pub struct Pose {
    /// The local rotation of each joint, relative to its parent's frame.
    pub rotations: Vec<DQuat>,
    /// The pelvis translation.
    pub pelvis: DVec3,
}

/// Mirrors a left-side rotation onto the right side, through the plane x = 0.
pub fn mirror(q: DQuat) -> DQuat {
    DQuat::from_xyzw(q.x, -q.y, -q.z, q.w)
}

/// A rotation of `angle` radians about the unit vector `axis`.
pub fn about(axis: DVec3, angle: f64) -> DQuat {
    DQuat::from_axis_angle(axis.normalize(), angle)
}

/// A rotation of `angle` radians about X: positive pitches forward-pointing things down and
/// downward-pointing things back.
pub fn pitch(angle: f64) -> DQuat {
    DQuat::from_rotation_x(angle)
}

/// A rotation of `angle` radians about Y: positive turns +Z towards +X.
pub fn yaw(angle: f64) -> DQuat {
    DQuat::from_rotation_y(angle)
}

/// A rotation of `angle` radians about Z: positive raises +X towards +Y.
pub fn roll(angle: f64) -> DQuat {
    DQuat::from_rotation_z(angle)
}

/// The points under each shoe that can touch the ground, as (joint, rest position) on the left side.
const SOLE: [(&str, [f64; 3]); 4] = [
    ("foot", [0.1, 0.0, -0.08]),
    ("foot", [0.1, 0.0, 0.05]),
    ("toes", [0.1, 0.0, 0.115]),
    ("toes", [0.105, 0.0, 0.19]),
];

impl Pose {
    /// The rest pose.
    pub fn rest(rig: &Rig) -> Self {
        Self {
            rotations: vec![DQuat::IDENTITY; rig.len()],
            pelvis: rig.joints[0].position,
        }
    }

    /// Sets the local rotation of the joint `base` on `side`, given as the left-side rotation.
    pub fn set_side(&mut self, rig: &Rig, base: &str, side: Side, left: DQuat) {
        let q = if side == Side::Left { left } else { mirror(left) };
        self.rotations[rig.side_index(base, side)] = q;
    }

    /// The model-space rotation of joint `j`.
    pub fn model_rotation(&self, rig: &Rig, j: usize) -> DQuat {
        match rig.joints[j].parent {
            Some(p) => self.model_rotation(rig, p) * self.rotations[j],
            None => self.rotations[j],
        }
    }

    /// Sets the local rotation of joint `j` so that its model-space rotation is `q`, given its parents' rotations.
    pub fn set_model_rotation(&mut self, rig: &Rig, j: usize, q: DQuat) {
        let parent = rig.joints[j]
            .parent
            .map_or(DQuat::IDENTITY, |p| self.model_rotation(rig, p));
        self.rotations[j] = parent.inverse() * q;
    }

    /// The model-space position of joint `j`.
    pub fn joint_position(&self, rig: &Rig, j: usize) -> DVec3 {
        match rig.joints[j].parent {
            Some(p) => {
                let offset = rig.joints[j].position - rig.joints[p].position;
                self.joint_position(rig, p) + self.model_rotation(rig, p) * offset
            }
            None => self.pelvis,
        }
    }

    /// Where the rest-pose point `point`, carried by joint `j`, is in this pose.
    pub fn carried_point(&self, rig: &Rig, j: usize, point: DVec3) -> DVec3 {
        self.joint_position(rig, j) + self.model_rotation(rig, j) * (point - rig.joints[j].position)
    }

    /// The height of the lowest point under either shoe.
    pub fn lowest_sole(&self, rig: &Rig) -> f64 {
        let mut lowest = f64::INFINITY;
        for side in Side::BOTH {
            for (joint, point) in SOLE {
                let p = self.carried_point(rig, rig.side_index(joint, side), side.mirror(DVec3::from_array(point)));
                lowest = lowest.min(p.y);
            }
        }
        lowest
    }

    /// Moves the pelvis up or down so that the lowest point under the shoes is `height` above the ground.
    pub fn stand(&mut self, rig: &Rig, height: f64) {
        self.pelvis.y += height - self.lowest_sole(rig);
    }
}
