//! The army's spear: generated geometry, attached to the hand joint that a scene names as one more skinned mesh
//! of the character (`crowd_mesh::attach`), so that every tier poses it with the hand.

use anim_pose::Model;
use anyhow::{Context, Result};
use crowd_mesh::attach::{RigidPart, attach_rigid, joint_bind_transform};
use glam::{Affine3A, Vec3, Vec4};

/// Sides of the shaft's prism.
const SHAFT_SIDES: usize = 6;

/// A spear `length` long along +Y from its butt at the origin: a six-sided wooden shaft and a four-sided steel
/// head over the top tenth, flat-shaded (each face has its own vertices).
pub fn spear(length: f32) -> RigidPart {
    let mut part = RigidPart {
        name: "spear".to_owned(),
        positions: Vec::new(),
        normals: Vec::new(),
        colors: Vec::new(),
        indices: Vec::new(),
        base_color: Vec4::ONE,
    };
    let wood = Vec4::new(0.30, 0.18, 0.09, 1.0);
    let steel = Vec4::new(0.62, 0.64, 0.68, 1.0);
    let r = 0.012 * length;
    let shaft_top = 0.9 * length;
    let ring = |sides: usize, radius: f32, y: f32, turn: f32| -> Vec<Vec3> {
        (0..sides)
            .map(|i| {
                let a = (i as f32 + turn) / sides as f32 * std::f32::consts::TAU;
                Vec3::new(radius * a.cos(), y, radius * a.sin())
            })
            .collect()
    };
    let bottom = ring(SHAFT_SIDES, r, 0.0, 0.0);
    let top = ring(SHAFT_SIDES, r, shaft_top, 0.0);
    for i in 0..SHAFT_SIDES {
        let j = (i + 1) % SHAFT_SIDES;
        quad(&mut part, [bottom[i], top[i], top[j], bottom[j]], wood);
    }
    // The head: a flat diamond (wider across X than Z) from a collar at the shaft's top to the tip.
    let base_y = shaft_top + 0.02 * length;
    let collar = Vec3::new(0.0, shaft_top - 0.01 * length, 0.0);
    let tip = Vec3::new(0.0, length, 0.0);
    let widths = [(2.6 * r, 0.0), (0.0, 1.2 * r), (-2.6 * r, 0.0), (0.0, -1.2 * r)];
    let base: Vec<Vec3> = widths.iter().map(|&(x, z)| Vec3::new(x, base_y, z)).collect();
    for i in 0..4 {
        let j = (i + 1) % 4;
        triangle(&mut part, [base[i], tip, base[j]], steel);
        triangle(&mut part, [base[j], collar, base[i]], steel);
    }
    part
}

/// Attaches a spear for a character `height` units tall to joint `joint` of binding 0 of `model`, upright in the
/// bind pose with the hand a third of the way up the shaft. Returns the new mesh's index.
///
/// # Errors
///
/// When the model has no such skin joint (crowd-mesh's error names it).
pub fn attach_spear(model: &mut Model, joint: &str, height: f32) -> Result<usize> {
    let length = 1.3 * height;
    let hand = joint_bind_transform(model, 0, joint).with_context(|| format!("no spear: no hand joint '{joint}'"))?;
    // Upright in bind space, through the hand (a little in front of the wrist joint, where the fist closes).
    let grip = Vec3::from(hand.translation) + Vec3::new(0.0, -0.04 * height, 0.02 * height);
    let upright = Affine3A::from_translation(grip - Vec3::Y * (0.33 * length));
    let placement = hand.inverse() * upright;
    Ok(attach_rigid(model, 0, joint, &spear(length), placement)?)
}

fn quad(part: &mut RigidPart, [a, b, c, d]: [Vec3; 4], color: Vec4) {
    triangle(part, [a, b, c], color);
    triangle(part, [a, c, d], color);
}

/// One flat triangle; the front face (counter-clockwise seen from outside) faces away from the Y axis.
fn triangle(part: &mut RigidPart, mut v: [Vec3; 3], color: Vec4) {
    let mut n = (v[1] - v[0]).cross(v[2] - v[0]).normalize_or(Vec3::Y);
    let centre = (v[0] + v[1] + v[2]) / 3.0;
    if n.dot(Vec3::new(centre.x, 0.0, centre.z)) < 0.0 {
        v.swap(1, 2);
        n = -n;
    }
    let first = part.positions.len() as u32;
    part.positions.extend_from_slice(&v);
    part.normals.extend_from_slice(&[n; 3]);
    part.colors.extend_from_slice(&[color; 3]);
    part.indices.extend_from_slice(&[first, first + 1, first + 2]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spear_is_upright_closed_and_faces_out() {
        let s = spear(2.0);
        let (lo, hi) = s
            .positions
            .iter()
            .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(a, b), &p| {
                (a.min(p), b.max(p))
            });
        assert!(lo.y.abs() < 1e-6 && (hi.y - 2.0).abs() < 1e-6, "{lo} {hi}");
        assert!(hi.x < 0.07 && hi.z < 0.03, "{hi}");
        assert_eq!(s.indices.len() / 3, 2 * SHAFT_SIDES + 8);
        for t in s.indices.chunks(3) {
            let [a, b, c] = [0, 1, 2].map(|i| s.positions[t[i] as usize]);
            let centre = (a + b + c) / 3.0;
            let out = Vec3::new(centre.x, 0.0, centre.z);
            assert!((b - a).cross(c - a).dot(out) > 0.0, "triangle {t:?} faces in");
        }
    }
}
