//! Baked bounds: per clip, the box around every skinned position over the whole clip, and one box per time
//! segment for tighter culling.

use anim_pose::Aabb;
use bytemuck::{Pod, Zeroable};
use glam::Vec3;

/// The size of a [`BoundsRecord`] in bytes: two `vec4<f32>`.
pub const BOUNDS_RECORD_SIZE: usize = 32;

/// An axis-aligned box as the GPU reads it: `min.xyz` and `max.xyz`, each padded to a `vec4<f32>` (`w` is 0).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BoundsRecord {
    /// The smallest corner; `w` is 0.
    pub min: [f32; 4],
    /// The largest corner; `w` is 0.
    pub max: [f32; 4],
}

const _: () = assert!(size_of::<BoundsRecord>() == BOUNDS_RECORD_SIZE);

impl BoundsRecord {
    /// The record of `b`.
    pub fn from_aabb(b: Aabb) -> Self {
        Self {
            min: b.min.extend(0.0).to_array(),
            max: b.max.extend(0.0).to_array(),
        }
    }

    /// The box.
    pub fn to_aabb(&self) -> Aabb {
        Aabb {
            min: Vec3::new(self.min[0], self.min[1], self.min[2]),
            max: Vec3::new(self.max[0], self.max[1], self.max[2]),
        }
    }

    /// True when `p` is inside the box (borders included).
    pub fn contains(&self, p: Vec3) -> bool {
        let b = self.to_aabb();
        p.cmpge(b.min).all() && p.cmple(b.max).all()
    }
}

/// The bounds of a bake, in instance space (the skeleton's root transform applied, as in the palettes and as
/// `skin_pack::animated_bounds` does), so that an instance transform places them in the world.
///
/// - `clips[c]` holds every skinned position of clip `c`, sampled or played back from any part of the bake.
/// - Clip `c`'s time segments are `segments[first_segment..first_segment + segment_count]` (the numbers of every
///   part's [`crate::ClipRecord`] of clip `c`): segment `s` covers clip times
///   `[s · duration / segment_count, (s + 1) · duration / segment_count]`, and [`crate::ClipRecord::segment_at`]
///   picks the segment of a time.
///
/// anim-bake makes each box the union of the exact skinned positions at every stored frame of every part, at the
/// midpoints between frames and at the clip's key times inside it, grown by the bake's largest measured vertex
/// error, so it holds what every baked part draws: playback interpolates between two stored frames, which stay
/// inside the box of their decoded positions, and each decoded position is within the measured error of the exact
/// one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BakedBounds {
    /// One box per clip, in clip order.
    pub clips: Vec<BoundsRecord>,
    /// Every clip's time-segment boxes, clip after clip.
    pub segments: Vec<BoundsRecord>,
}
