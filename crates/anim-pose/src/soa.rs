//! Structure-of-arrays transforms: four joints per lane set, in glam `Vec4` lanes.
//!
//! A local pose of `n` joints is a slice of [`num_soa_joints`]`(n)` [`SoaTransform`]s. Lane `l` of element `g`
//! holds joint `4 * g + l`. The lanes past the last joint are padding and hold the identity.

use glam::{Quat, Vec3, Vec4};

use crate::{MAX_JOINTS, Transform};

/// The most SoA elements a pose can have: [`MAX_JOINTS`] joints, four per element.
/// Jobs size their stack scratch with it, so that `run()` never allocates.
pub const MAX_SOA_JOINTS: usize = MAX_JOINTS / 4;

const _: () = {
    assert!(size_of::<SoaVec3>() == 48 && size_of::<SoaQuat>() == 64 && size_of::<SoaTransform>() == 160);
    assert!(std::mem::offset_of!(SoaVec3, y) == 16 && std::mem::offset_of!(SoaVec3, z) == 32);
    assert!(std::mem::offset_of!(SoaQuat, y) == 16 && std::mem::offset_of!(SoaQuat, w) == 48);
    assert!(std::mem::offset_of!(SoaTransform, rotation) == 48 && std::mem::offset_of!(SoaTransform, scale) == 112);
};

/// The number of SoA elements for `joint_count` joints: `ceil(joint_count / 4)`.
pub const fn num_soa_joints(joint_count: usize) -> usize {
    joint_count.div_ceil(4)
}

/// Four 3-vectors, one per lane.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct SoaVec3 {
    /// The x components of the four lanes.
    pub x: Vec4,
    /// The y components.
    pub y: Vec4,
    /// The z components.
    pub z: Vec4,
}

/// Four quaternions, one per lane.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct SoaQuat {
    /// The x components of the four lanes.
    pub x: Vec4,
    /// The y components.
    pub y: Vec4,
    /// The z components.
    pub z: Vec4,
    /// The w components.
    pub w: Vec4,
}

/// Four joint transforms (translation, rotation, scale), one per lane.
///
/// The layout is pinned (`repr(C)`, checked below): the components of each property are consecutive `Vec4`s, so
/// SIMD kernels may load a whole property, or a whole element, at once.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct SoaTransform {
    /// Translations.
    pub translation: SoaVec3,
    /// Rotations, unit quaternions.
    pub rotation: SoaQuat,
    /// Non-uniform scales.
    pub scale: SoaVec3,
}

impl SoaVec3 {
    /// All lanes zero.
    pub const ZERO: Self = Self::splat(Vec3::ZERO);
    /// All lanes one.
    pub const ONE: Self = Self::splat(Vec3::ONE);

    /// `v` in every lane.
    pub const fn splat(v: Vec3) -> Self {
        Self {
            x: Vec4::splat(v.x),
            y: Vec4::splat(v.y),
            z: Vec4::splat(v.z),
        }
    }

    /// Lane `lane` (0 to 3).
    pub fn lane(&self, lane: usize) -> Vec3 {
        Vec3::new(self.x[lane], self.y[lane], self.z[lane])
    }

    /// Sets lane `lane` (0 to 3).
    pub fn set_lane(&mut self, lane: usize, v: Vec3) {
        self.x[lane] = v.x;
        self.y[lane] = v.y;
        self.z[lane] = v.z;
    }

    /// Per-lane linear interpolation: `a + (b - a) * t`.
    #[inline]
    pub fn lerp(a: &Self, b: &Self, t: Vec4) -> Self {
        Self {
            x: a.x + (b.x - a.x) * t,
            y: a.y + (b.y - a.y) * t,
            z: a.z + (b.z - a.z) * t,
        }
    }
}

impl SoaQuat {
    /// All lanes the identity rotation.
    pub const IDENTITY: Self = Self {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
        w: Vec4::ONE,
    };

    /// `q` in every lane.
    pub fn splat(q: Quat) -> Self {
        Self {
            x: Vec4::splat(q.x),
            y: Vec4::splat(q.y),
            z: Vec4::splat(q.z),
            w: Vec4::splat(q.w),
        }
    }

    /// Lane `lane` (0 to 3).
    pub fn lane(&self, lane: usize) -> Quat {
        Quat::from_xyzw(self.x[lane], self.y[lane], self.z[lane], self.w[lane])
    }

    /// Sets lane `lane` (0 to 3).
    pub fn set_lane(&mut self, lane: usize, q: Quat) {
        self.x[lane] = q.x;
        self.y[lane] = q.y;
        self.z[lane] = q.z;
        self.w[lane] = q.w;
    }

    /// Per-lane dot product.
    #[inline]
    pub fn dot(&self, o: &Self) -> Vec4 {
        self.x * o.x + self.y * o.y + self.z * o.z + self.w * o.w
    }

    /// Per-lane normalization. Lanes of zero length become the identity.
    #[inline]
    pub fn normalize(&self) -> Self {
        let len2 = self.dot(self);
        let ok = len2.cmpgt(Vec4::splat(1e-20));
        let inv = Vec4::select(ok, len2.sqrt().recip(), Vec4::ZERO);
        Self {
            x: self.x * inv,
            y: self.y * inv,
            z: self.z * inv,
            w: Vec4::select(ok, self.w * inv, Vec4::ONE),
        }
    }

    /// Per-lane normalized linear interpolation along the shortest path: `b` is negated in the lanes where
    /// `dot(a, b) < 0` (the hemisphere flip), then `normalize(a + (b - a) * t)`.
    #[inline]
    pub fn nlerp(a: &Self, b: &Self, t: Vec4) -> Self {
        let sign = Vec4::select(a.dot(b).cmplt(Vec4::ZERO), Vec4::NEG_ONE, Vec4::ONE);
        Self {
            x: a.x + (b.x * sign - a.x) * t,
            y: a.y + (b.y * sign - a.y) * t,
            z: a.z + (b.z * sign - a.z) * t,
            w: a.w + (b.w * sign - a.w) * t,
        }
        .normalize()
    }
}

impl SoaTransform {
    /// All lanes the identity transform.
    pub const IDENTITY: Self = Self {
        translation: SoaVec3::ZERO,
        rotation: SoaQuat::IDENTITY,
        scale: SoaVec3::ONE,
    };

    /// Lane `lane` (0 to 3) as a [`Transform`].
    pub fn lane(&self, lane: usize) -> Transform {
        Transform {
            translation: self.translation.lane(lane),
            rotation: self.rotation.lane(lane),
            scale: self.scale.lane(lane),
        }
    }

    /// Sets lane `lane` (0 to 3).
    pub fn set_lane(&mut self, lane: usize, t: &Transform) {
        self.translation.set_lane(lane, t.translation);
        self.rotation.set_lane(lane, t.rotation);
        self.scale.set_lane(lane, t.scale);
    }
}

/// Packs `joints` into SoA form. `out` must have `num_soa_joints(joints.len())` elements; padding lanes
/// become the identity. Returns the number of elements written, or `None` when `out` has the wrong length.
pub fn pack_soa(joints: &[Transform], out: &mut [SoaTransform]) -> Option<usize> {
    let n = num_soa_joints(joints.len());
    if out.len() != n {
        return None;
    }
    for (g, soa) in out.iter_mut().enumerate() {
        *soa = SoaTransform::IDENTITY;
        for lane in 0..4 {
            if let Some(t) = joints.get(4 * g + lane) {
                soa.set_lane(lane, t);
            }
        }
    }
    Some(n)
}

/// Unpacks a SoA pose into `out`, one [`Transform`] per joint. Returns `None` when `pose` is too short for
/// `out.len()` joints.
pub fn unpack_soa(pose: &[SoaTransform], out: &mut [Transform]) -> Option<usize> {
    if pose.len() < num_soa_joints(out.len()) {
        return None;
    }
    for (j, t) in out.iter_mut().enumerate() {
        *t = pose[j / 4].lane(j % 4);
    }
    Some(out.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_and_unpack_round_trip_with_identity_padding() {
        let joints: Vec<Transform> = (0..6)
            .map(|i| Transform {
                translation: Vec3::splat(i as f32),
                rotation: Quat::from_rotation_y(i as f32 * 0.1),
                scale: Vec3::splat(1.0 + i as f32),
            })
            .collect();
        let mut soa = [SoaTransform::IDENTITY; 2];
        assert_eq!(pack_soa(&joints, &mut soa), Some(2));
        assert_eq!(soa[1].lane(2), Transform::IDENTITY);
        assert_eq!(soa[1].lane(3), Transform::IDENTITY);
        let mut back = vec![Transform::IDENTITY; 6];
        assert_eq!(unpack_soa(&soa, &mut back), Some(6));
        assert_eq!(back, joints);
        assert_eq!(pack_soa(&joints, &mut [SoaTransform::IDENTITY; 3]), None);
    }

    #[test]
    fn nlerp_flips_hemisphere_per_lane() {
        let a = SoaQuat::IDENTITY;
        let mut b = SoaQuat::splat(Quat::from_rotation_z(0.5));
        // Lane 1 holds the same rotation with the opposite sign.
        b.set_lane(1, -Quat::from_rotation_z(0.5));
        let r = SoaQuat::nlerp(&a, &b, Vec4::splat(0.5));
        let expect = Quat::from_rotation_z(0.25);
        for lane in 0..4 {
            let q = r.lane(lane);
            assert!(q.dot(expect).abs() > 1.0 - 1e-4, "lane {lane}: {q}");
            assert!(q.w > 0.0, "lane {lane} took the long way: {q}");
        }
    }
}
