//! The character's skeleton: joint names, hierarchy and rest positions.
//!
//! The rig is Y-up with the character facing +Z, so its left side is +X, and lengths are in metres.
//! Every joint's rest rotation is the identity, so a joint's frame at rest is the model frame and the bind
//! pose is the rest pose: an inverse bind matrix is a translation by minus the joint's rest position.
//! The right side is the mirror image of the left side through the plane x = 0.

use glam::DVec3;

/// A side of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The character's left side, towards +X.
    Left,
    /// The character's right side, towards −X.
    Right,
}

impl Side {
    /// Both sides, left first; this is also the order of the side joints in the rig.
    pub const BOTH: [Side; 2] = [Side::Left, Side::Right];

    /// The suffix of the side's joint names.
    pub fn suffix(self) -> &'static str {
        match self {
            Side::Left => "l",
            Side::Right => "r",
        }
    }

    /// +1 for the left side and −1 for the right side: the sign of X on this side.
    pub fn sign(self) -> f64 {
        match self {
            Side::Left => 1.0,
            Side::Right => -1.0,
        }
    }

    /// Mirrors a left-side point or direction onto this side.
    pub fn mirror(self, v: DVec3) -> DVec3 {
        DVec3::new(v.x * self.sign(), v.y, v.z)
    }
}

/// The names of the finger chains, from the thumb to the little finger.
pub const FINGERS: [&str; 5] = ["thumb", "index", "middle", "ring", "pinky"];

/// The angle of the upper arms below the horizontal in the rest pose (an A-pose), in radians.
///
/// An A-pose rather than a T-pose keeps the armpits open without stretching them much when the arms hang down.
pub const ARM_REST_ANGLE: f64 = std::f64::consts::FRAC_PI_4;

/// One joint of the rig.
#[derive(Clone, Debug)]
pub struct Joint {
    /// The human-readable name, for example `thigh_l`.
    pub name: String,
    /// The parent joint's index, `None` for the root.
    pub parent: Option<usize>,
    /// The rest position in model space.
    pub position: DVec3,
}

/// The skeleton, in parent-before-child order.
#[derive(Clone, Debug)]
pub struct Rig {
    /// The joints; joint 0 is the root (the pelvis).
    pub joints: Vec<Joint>,
}

/// The direction of the left arm in the rest pose, from the shoulder towards the hand.
pub fn arm_direction() -> DVec3 {
    DVec3::new(ARM_REST_ANGLE.cos(), -ARM_REST_ANGLE.sin(), 0.0)
}

/// The direction the left palm faces in the rest pose: down and towards the body.
///
/// It is also the elbow's hinge axis: a positive rotation about it bends the forearm forward.
pub fn palm_normal() -> DVec3 {
    DVec3::new(-ARM_REST_ANGLE.sin(), -ARM_REST_ANGLE.cos(), 0.0)
}

/// The rest direction of the left thumb, from its first joint towards its tip.
pub fn thumb_direction() -> DVec3 {
    (arm_direction() * 0.8 + DVec3::Z * 0.45 + palm_normal() * 0.35).normalize()
}

/// The rest direction of a left finger (not the thumb), spread slightly away from the middle finger.
pub fn finger_direction(finger: usize) -> DVec3 {
    let spread = [0.0, 0.08, 0.0, -0.07, -0.15][finger];
    (arm_direction() + DVec3::Z * spread).normalize()
}

/// The lengths of the three segments of each finger, from the knuckle (or the thumb's base) to the tip.
pub const FINGER_SEGMENTS: [[f64; 3]; 5] = [
    [0.042, 0.034, 0.028],
    [0.043, 0.026, 0.021],
    [0.046, 0.029, 0.022],
    [0.043, 0.027, 0.021],
    [0.034, 0.021, 0.019],
];

/// The position of a left finger's first joint relative to the wrist.
pub fn finger_base(finger: usize) -> DVec3 {
    let d = arm_direction();
    let n = palm_normal();
    match finger {
        0 => d * 0.026 + DVec3::Z * 0.021 + n * 0.012,
        _ => {
            let along = [0.0, 0.092, 0.096, 0.092, 0.085][finger];
            let across = [0.0, 0.027, 0.008, -0.011, -0.028][finger];
            d * along + DVec3::Z * across
        }
    }
}

impl Rig {
    /// The index of the joint named `name`.
    ///
    /// # Panics
    ///
    /// When there is no such joint; the generator only asks for joints it created.
    pub fn index(&self, name: &str) -> usize {
        self.joints
            .iter()
            .position(|j| j.name == name)
            .unwrap_or_else(|| panic!("the rig has no joint named '{name}'"))
    }

    /// The index of the joint `base` on `side`, for example `("hand", Left)` gives `hand_l`.
    pub fn side_index(&self, base: &str, side: Side) -> usize {
        self.index(&format!("{base}_{}", side.suffix()))
    }

    /// The number of joints.
    pub fn len(&self) -> usize {
        self.joints.len()
    }

    /// The rest translation of joint `j` relative to its parent, rounded to the `f32` stored in the file.
    pub fn local_translation(&self, j: usize) -> [f32; 3] {
        let joint = &self.joints[j];
        let parent = joint.parent.map_or(DVec3::ZERO, |p| self.joints[p].position);
        let t = joint.position - parent;
        [t.x as f32, t.y as f32, t.z as f32]
    }

    /// The model-space rest position of joint `j` as the file stores it: the sum of the stored local
    /// translations along the chain.
    pub fn stored_position(&self, j: usize) -> DVec3 {
        let t = self.local_translation(j);
        let own = DVec3::new(f64::from(t[0]), f64::from(t[1]), f64::from(t[2]));
        match self.joints[j].parent {
            Some(p) => self.stored_position(p) + own,
            None => own,
        }
    }

    /// The children of joint `j`, in index order.
    pub fn children(&self, j: usize) -> Vec<usize> {
        (0..self.len()).filter(|&c| self.joints[c].parent == Some(j)).collect()
    }

    /// Adds a joint and returns its index.
    fn push(&mut self, name: String, parent: Option<usize>, position: DVec3) -> usize {
        debug_assert!(
            parent.is_none_or(|p| p < self.joints.len()),
            "parents come before children"
        );
        self.joints.push(Joint { name, parent, position });
        self.joints.len() - 1
    }
}

/// Builds the rig: 10 spine and head joints, 19 joints per arm and 4 per leg, 56 in all.
pub fn build() -> Rig {
    let mut rig = Rig { joints: Vec::new() };
    let v = DVec3::new;
    let pelvis = rig.push("pelvis".into(), None, v(0.0, 0.96, 0.0));
    let spine_01 = rig.push("spine_01".into(), Some(pelvis), v(0.0, 1.03, -0.005));
    let spine_02 = rig.push("spine_02".into(), Some(spine_01), v(0.0, 1.13, -0.01));
    let spine_03 = rig.push("spine_03".into(), Some(spine_02), v(0.0, 1.23, -0.01));
    let chest = rig.push("chest".into(), Some(spine_03), v(0.0, 1.33, 0.0));
    let neck = rig.push("neck".into(), Some(chest), v(0.0, 1.49, -0.01));
    let head = rig.push("head".into(), Some(neck), v(0.0, 1.58, 0.0));
    rig.push("jaw".into(), Some(head), v(0.0, 1.625, 0.02));
    for side in Side::BOTH {
        rig.push(
            format!("eye_{}", side.suffix()),
            Some(head),
            side.mirror(v(0.033, 1.69, 0.1)),
        );
    }
    for side in Side::BOTH {
        let s = side.suffix();
        let clavicle = rig.push(format!("clavicle_{s}"), Some(chest), side.mirror(v(0.025, 1.45, 0.03)));
        let shoulder = v(0.175, 1.435, -0.01);
        let d = arm_direction();
        let upper_arm = rig.push(format!("upper_arm_{s}"), Some(clavicle), side.mirror(shoulder));
        let elbow = shoulder + d * 0.28;
        let forearm = rig.push(format!("forearm_{s}"), Some(upper_arm), side.mirror(elbow));
        let wrist = elbow + d * 0.25;
        let hand = rig.push(format!("hand_{s}"), Some(forearm), side.mirror(wrist));
        for (f, name) in FINGERS.iter().enumerate() {
            let dir = if f == 0 { thumb_direction() } else { finger_direction(f) };
            let mut at = wrist + finger_base(f);
            let mut parent = hand;
            for (k, len) in FINGER_SEGMENTS[f].iter().enumerate() {
                parent = rig.push(format!("{name}_{:02}_{s}", k + 1), Some(parent), side.mirror(at));
                at += dir * *len;
            }
        }
    }
    for side in Side::BOTH {
        let s = side.suffix();
        let thigh = rig.push(format!("thigh_{s}"), Some(pelvis), side.mirror(v(0.09, 0.92, 0.0)));
        let shin = rig.push(format!("shin_{s}"), Some(thigh), side.mirror(v(0.095, 0.50, 0.012)));
        let foot = rig.push(format!("foot_{s}"), Some(shin), side.mirror(v(0.10, 0.085, -0.02)));
        rig.push(format!("toes_{s}"), Some(foot), side.mirror(v(0.10, 0.025, 0.115)));
    }
    rig
}
