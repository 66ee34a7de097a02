//! Axis-aligned boxes and the culling sphere of an instance.
//!
//! Animated bounds contract: for every clip a draw group can play, the caller gives one local-space
//! [`Aabb`] that is the union of the skinned mesh's bounds over all frames of the clip (skin-pack computes it).
//! An instance's culling sphere is the bounding sphere of the union of its current clip's box and its
//! crossfade target's box, scaled and rotated by the instance's transform, so a waving arm is never culled.
//! Per-time-segment bounds can refine this later: [`clip_union`] is the single place that turns an animation
//! state into a local box, and only it needs to learn about segments.

use glam::{Quat, Vec3};

use crate::instance::AnimState;

/// An axis-aligned box. Valid boxes have `min <= max` on every axis and finite values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// The smallest corner.
    pub min: Vec3,
    /// The largest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The empty box: the identity of [`Aabb::union`].
    pub const EMPTY: Self = Self {
        min: Vec3::INFINITY,
        max: Vec3::NEG_INFINITY,
    };

    /// A box from its corners.
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// The smallest box holding both.
    pub fn union(self, other: Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }

    /// The centre.
    pub fn center(self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Half the size on each axis.
    pub fn half_extent(self) -> Vec3 {
        (self.max - self.min) * 0.5
    }

    /// True when both corners are finite and `min <= max` on every axis.
    pub fn is_valid(self) -> bool {
        self.min.is_finite() && self.max.is_finite() && self.min.cmple(self.max).all()
    }

    /// True when the sphere lies inside the box.
    pub fn contains_sphere(self, center: Vec3, radius: f32) -> bool {
        (center - radius).cmpge(self.min).all() && (center + radius).cmple(self.max).all()
    }
}

/// The local box an animation state can cover: its clip's box, united with the crossfade target's box when
/// there is one. Clips must be valid indices into `clip_bounds` (the store checks this before calling).
pub fn clip_union(clip_bounds: &[Aabb], anim: &AnimState) -> Aabb {
    let b = clip_bounds[anim.clip as usize];
    match anim.fade_target {
        Some(t) => b.union(clip_bounds[t as usize]),
        None => b,
    }
}

/// The world-space bounding sphere `(centre, radius)` of a local box under a uniform-scale rigid transform.
///
/// The radius is the half diagonal times the scale, so the sphere covers the box under any rotation.
pub fn world_sphere(local: Aabb, position: Vec3, rotation: Quat, scale: f32) -> (Vec3, f32) {
    let center = position + rotation * (local.center() * scale);
    let radius = local.half_extent().length() * scale;
    (center, radius)
}
