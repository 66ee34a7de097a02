//! The SoA storage of a runtime clip's tracks: constant groups stored once, animated groups frame-major, and the
//! scalar interpolation twin that `SamplingJob`'s kernels match bit for bit.
//!
//! [`ClipTracks`] gathers a clip's tracks behind one `Arc`, so that clones of a clip share them.

use glam::{Quat, Vec3, Vec4};

use super::resample;
use super::timeline::Timeline;
use crate::{Property, RootMotion, SoaQuat, SoaVec3, num_soa_joints};

/// The stored tracks of a runtime clip, the bulk of its memory: translations, rotations, scales and the
/// root-motion track.
///
/// A [`RuntimeClip`](crate::RuntimeClip) holds them behind one `Arc`, so that cloning a clip copies its small
/// fields and bumps a reference count, and every clone reads the same tracks. Code that edits them (tests) goes
/// through `Arc::make_mut`, which copies them only while they are shared.
#[derive(Clone, Debug)]
pub(crate) struct ClipTracks {
    /// Translation tracks.
    pub(crate) translations: Tracks<SoaVec3>,
    /// Rotation tracks.
    pub(crate) rotations: Tracks<SoaQuat>,
    /// Scale tracks.
    pub(crate) scales: Tracks<SoaVec3>,
    /// The extracted root motion, when requested.
    pub(crate) root_motion: Option<RootMotion>,
}

impl ClipTracks {
    /// Heap bytes held by the tracks and the root-motion track (not the `Arc`'s counts).
    pub(super) fn memory_bytes(&self) -> usize {
        self.translations.memory_bytes()
            + self.rotations.memory_bytes()
            + self.scales.memory_bytes()
            + self.root_motion.as_ref().map_or(0, RootMotion::memory_bytes)
    }
}

/// The stored tracks of one property (translation, rotation or scale), for every SoA group.
///
/// Every group is either constant (one value in `const_values`) or animated (a column of `frames`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Tracks<T> {
    /// The constant groups, ascending.
    pub(crate) const_groups: Vec<u16>,
    /// The value of each constant group.
    pub(crate) const_values: Vec<T>,
    /// The animated groups, ascending: the order of a frame row.
    pub(crate) anim_groups: Vec<u16>,
    /// Per animated group, the interpolation mask: lane 1.0 interpolates, 0.0 holds frame `f` (STEP).
    pub(crate) masks: Vec<Vec4>,
    /// Frame-major values: row `f` holds frame `f` of every animated group, and one more row repeats the last
    /// frame, so that rows `f` and `f + 1` exist for every frame `f`.
    pub(crate) frames: Vec<T>,
}

impl<T> Tracks<T> {
    /// Rows `f` and `f + 1` (the repeat of the last frame for the last `f`), or two empty rows when there is no
    /// animated group.
    #[inline]
    pub(crate) fn rows(&self, f: usize) -> (&[T], &[T]) {
        let n = self.anim_groups.len();
        self.frames
            .get(f * n..(f + 2) * n)
            .map_or((&[], &[]), |rows| rows.split_at(n))
    }

    /// Heap bytes held.
    pub(super) fn memory_bytes(&self) -> usize {
        size_of_val(self.const_groups.as_slice())
            + size_of_val(self.const_values.as_slice())
            + size_of_val(self.anim_groups.as_slice())
            + size_of_val(self.masks.as_slice())
            + size_of_val(self.frames.as_slice())
    }
}

/// A SoA value whose lanes can be read as `Vec4`s: `(x, y, z, 0)` for vectors, `(x, y, z, w)` for quaternions.
pub(crate) trait Lanes: Copy {
    /// Builds the value from four lanes.
    fn from_lanes(lanes: [Vec4; 4]) -> Self;
    /// Reads lane `lane` (0 to 3).
    fn lane4(&self, lane: usize) -> Vec4;
}

impl Lanes for SoaVec3 {
    fn from_lanes(l: [Vec4; 4]) -> Self {
        Self {
            x: Vec4::new(l[0].x, l[1].x, l[2].x, l[3].x),
            y: Vec4::new(l[0].y, l[1].y, l[2].y, l[3].y),
            z: Vec4::new(l[0].z, l[1].z, l[2].z, l[3].z),
        }
    }

    fn lane4(&self, lane: usize) -> Vec4 {
        self.lane(lane).extend(0.0)
    }
}

impl Lanes for SoaQuat {
    fn from_lanes(l: [Vec4; 4]) -> Self {
        Self {
            x: Vec4::new(l[0].x, l[1].x, l[2].x, l[3].x),
            y: Vec4::new(l[0].y, l[1].y, l[2].y, l[3].y),
            z: Vec4::new(l[0].z, l[1].z, l[2].z, l[3].z),
            w: Vec4::new(l[0].w, l[1].w, l[2].w, l[3].w),
        }
    }

    fn lane4(&self, lane: usize) -> Vec4 {
        Vec4::from(self.lane(lane))
    }
}

impl<T: Lanes> Tracks<T> {
    /// The reference value of lane `lane` of group `group` at frame pair `(f, u)`: the constant, or the
    /// interpolation of the two stored frames with the lane's mask applied.
    pub(super) fn reference_lane(&self, group: usize, lane: usize, f: usize, u: f32, property: Property) -> Vec4 {
        let Ok(group) = u16::try_from(group) else {
            return padding(property);
        };
        if let Ok(i) = self.const_groups.binary_search(&group) {
            return self.const_values[i].lane4(lane);
        }
        let Ok(i) = self.anim_groups.binary_search(&group) else {
            return padding(property);
        };
        let n = self.anim_groups.len();
        let a = self.frames[f * n + i].lane4(lane);
        let b = self.frames[(f + 1) * n + i].lane4(lane);
        interpolate(property, a, b, u * self.masks[i][lane])
    }
}

/// The value of padding lanes, and of joints past the end: the identity.
pub(super) fn padding(property: Property) -> Vec4 {
    match property {
        Property::Translation => Vec4::ZERO,
        Property::Rotation => Vec4::W,
        Property::Scale => Vec4::new(1.0, 1.0, 1.0, 0.0),
    }
}

/// The scalar twin of the SoA interpolation: `a + (b - a) * u` for vectors, and for rotations the normalized
/// lerp without a hemisphere test (the build made consecutive frames hemisphere-consistent). The arithmetic is
/// the same, in the same order, as the SoA kernel's, so both give the same floats.
pub(crate) fn interpolate(property: Property, a: Vec4, b: Vec4, u: f32) -> Vec4 {
    match property {
        Property::Translation | Property::Scale => lerp3(a.truncate(), b.truncate(), u).extend(0.0),
        Property::Rotation => Vec4::from(nlerp(Quat::from_vec4(a), Quat::from_vec4(b), u)),
    }
}

/// `a + (b - a) * u`, component by component.
fn lerp3(a: Vec3, b: Vec3, u: f32) -> Vec3 {
    Vec3::new(a.x + (b.x - a.x) * u, a.y + (b.y - a.y) * u, a.z + (b.z - a.z) * u)
}

/// `normalize(a + (b - a) * u)` without a hemisphere test; a zero-length result becomes the identity, as in
/// [`SoaQuat::normalize`].
fn nlerp(a: Quat, b: Quat, u: f32) -> Quat {
    let x = a.x + (b.x - a.x) * u;
    let y = a.y + (b.y - a.y) * u;
    let z = a.z + (b.z - a.z) * u;
    let w = a.w + (b.w - a.w) * u;
    let len2 = x * x + y * y + z * z + w * w;
    if len2 > 1e-20 {
        let inv = 1.0 / len2.sqrt();
        Quat::from_xyzw(x * inv, y * inv, z * inv, w * inv)
    } else {
        Quat::IDENTITY
    }
}

/// Packs one property of the per-joint tracks into SoA groups.
pub(super) fn pack_tracks<T: Lanes>(
    resampled: &resample::Resampled,
    property: Property,
    timeline: &Timeline,
) -> Tracks<T> {
    let joint_count = resampled.tracks.len();
    let groups = num_soa_joints(joint_count);
    let mut tracks = Tracks {
        const_groups: Vec::new(),
        const_values: Vec::new(),
        anim_groups: Vec::new(),
        masks: Vec::new(),
        frames: Vec::new(),
    };
    let lane_track = |group: usize, lane: usize| resampled.tracks.get(4 * group + lane).map(|t| &t[property as usize]);
    let value = |group: usize, lane: usize, frame: usize| match lane_track(group, lane) {
        None => padding(property),
        Some(resample::Track::Constant(v)) => *v,
        Some(resample::Track::Frames(frames)) => frames[frame],
    };
    for group in 0..groups {
        // Group indices fit in u16: the skeleton has at most MAX_JOINTS joints.
        let index = group as u16;
        let animated = (0..4).any(|lane| matches!(lane_track(group, lane), Some(resample::Track::Frames(_))));
        if animated {
            tracks.anim_groups.push(index);
            let mask = |lane: usize| {
                let step = resampled
                    .step
                    .get(4 * group + lane)
                    .is_some_and(|s| s[property as usize]);
                if step { 0.0 } else { 1.0 }
            };
            tracks.masks.push(Vec4::new(mask(0), mask(1), mask(2), mask(3)));
        } else {
            tracks.const_groups.push(index);
            tracks
                .const_values
                .push(T::from_lanes([0, 1, 2, 3].map(|lane| value(group, lane, 0))));
        }
    }
    let frames = timeline.frame_count();
    tracks.frames.reserve_exact((frames + 1) * tracks.anim_groups.len());
    for frame in (0..frames).chain([frames - 1]) {
        for &group in &tracks.anim_groups {
            let group = usize::from(group);
            tracks
                .frames
                .push(T::from_lanes([0, 1, 2, 3].map(|lane| value(group, lane, frame))));
        }
    }
    tracks
}
