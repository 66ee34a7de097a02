//! [`ResidentInstance`]: the 48-byte state of one instance slot that the GPU-driven path keeps on the device, in
//! the store's slot order. The CPU writes a slot only when its instance changes (added, removed, moved, a clip
//! played, a tint or speed set, or a cluster reshuffled); the GPU derives everything per frame from it and the
//! clock: culling bounds, LOD and tier, and the clip time.
//!
//! `shaders/resident_instance.wgsl` declares the same struct and `ResidentInstance::decode` mirrors its decoders
//! line for line (`crowd-gpu/tests/resident_layout.rs` checks the layouts against naga's).

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3, Vec4};
use skin_pack::quant::{pack_rgba8, unpack4x8unorm};

use crate::record::{pack_rotation, unpack_rotation};
use crate::{Error, Result};

/// The size of a [`ResidentInstance`] in bytes: at most 48 by the GPU-driven path's contract (`PIPELINE.md`).
pub const RESIDENT_INSTANCE_SIZE: usize = 48;

/// The clip field of a slot that holds no instance: the GPU skips it. Clip ids are below it.
pub const RESIDENT_EMPTY_CLIP: u32 = 0x7fff;

/// The fade-target field of an instance that is not crossfading.
pub const RESIDENT_NO_FADE: u32 = 0xffff;

/// The bit of the clip field set on an instance the CPU draws this frame (the unique tier): the GPU pass
/// decides its levels as for any other instance but appends it to no list.
pub const RESIDENT_CPU_DRAWN: u32 = 0x8000;

/// The animation state of a resident instance: clip time is `(now - start_time) * speed`, as in
/// [`crate::clip_time`]; a crossfade to `fade.target` has weight `clamp((now - fade.start) / fade.length, 0, 1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidentAnim {
    /// The clip playing, below [`RESIDENT_EMPTY_CLIP`].
    pub clip: u32,
    /// When the clip started, in the animation clock's seconds.
    pub start_time: f32,
    /// Playback speed, 1 = normal.
    pub speed: f32,
    /// The crossfade in progress, if any.
    pub fade: Option<ResidentFade>,
}

/// A crossfade of a [`ResidentAnim`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidentFade {
    /// The clip faded to, below [`RESIDENT_EMPTY_CLIP`].
    pub target: u32,
    /// When the fade started, in the animation clock's seconds.
    pub start: f32,
    /// How long it lasts, in seconds (positive).
    pub length: f32,
}

/// One instance slot on the GPU.
///
/// | bytes | field | meaning |
/// |---|---|---|
/// | 0..12 | `position` | world position, f32 × 3 |
/// | 12..16 | `scale` | uniform scale, f32, positive |
/// | 16..24 | `rotation` | unit quaternion with `w ≥ 0` as four snorm16, `(x, y)` in word 0 and `(z, w)` in word 1, low half first (as the instance record) |
/// | 24..28 | `tint` | RGBA8 unorm, red in the low byte |
/// | 28..32 | `clips` | the clip in bits 0..15 ([`RESIDENT_EMPTY_CLIP`] for an empty slot), [`RESIDENT_CPU_DRAWN`] in bit 15, the fade target in bits 16..32 ([`RESIDENT_NO_FADE`] when none) |
/// | 32..36 | `start_time` | f32 |
/// | 36..40 | `speed` | f32 |
/// | 40..44 | `fade_start` | f32 (0 without a fade) |
/// | 44..48 | `fade_length` | f32 (0 without a fade) |
///
/// The rotation is the one lossy field, within [`crate::ROTATION_ERROR_BOUND`]; [`ResidentInstance::snap_rotation`]
/// gives the rotation the GPU decodes, so that a CPU store holding it culls the same spheres as the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct ResidentInstance {
    /// World position.
    pub position: [f32; 3],
    /// Uniform scale.
    pub scale: f32,
    /// The rotation as four snorm16.
    pub rotation: [u32; 2],
    /// RGBA8 tint.
    pub tint: u32,
    /// Clip, CPU-drawn bit and fade target.
    pub clips: u32,
    /// When the clip started.
    pub start_time: f32,
    /// Playback speed.
    pub speed: f32,
    /// When the crossfade started.
    pub fade_start: f32,
    /// How long the crossfade lasts.
    pub fade_length: f32,
}

const _: () = assert!(size_of::<ResidentInstance>() == RESIDENT_INSTANCE_SIZE);
const _: () = assert!(align_of::<ResidentInstance>() == 4);

/// The instance that holds a resident slot, as its store handle: the GPU keys each view's hysteresis state by
/// `index` and keeps `generation` with it, so an instance keeps its levels when a removal's swap or a cluster
/// reassignment moves it to another slot, and a new instance in a reused handle starts afresh (as crowd-cull's
/// `TierState` moves with the instance and starts at `TierState::HIDDEN`). 8 bytes; the WGSL twin is
/// `ResidentOwner` in `shaders/resident_instance.wgsl`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct ResidentOwner {
    /// The handle's index, [`ResidentOwner::EMPTY`]'s `u32::MAX` for an empty slot.
    pub index: u32,
    /// The handle's generation: odd for a live handle, never 0.
    pub generation: u32,
}

const _: () = assert!(size_of::<ResidentOwner>() == 8);

impl ResidentOwner {
    /// The owner of a slot that holds no instance.
    pub const EMPTY: Self = Self {
        index: u32::MAX,
        generation: 0,
    };

    /// The owner `handle`, or [`ResidentOwner::EMPTY`] for `None`.
    pub fn of(handle: Option<crowd_cull::Handle>) -> Self {
        handle.map_or(Self::EMPTY, |h| Self {
            index: h.index,
            generation: h.generation,
        })
    }
}

/// One clip of the pose pool as the GPU maps an instance's clip time to a slot pair and a fraction (the twin of
/// `anim_pose::PosePool::map` for a clip track): looping clips wrap `(time - pool_time)` over `slot_count` slots
/// spread evenly over the duration; others clamp `time` to `[0, duration]` over `slot_count - 1` intervals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct ResidentClip {
    /// The clip's first pool slot.
    pub first_slot: u32,
    /// Its slot count (at least 1).
    pub slot_count: u32,
    /// The clip's duration in seconds (positive).
    pub duration: f32,
    /// 1 when the clip loops, 0 when it clamps.
    pub looping: u32,
}

/// A [`ResidentInstance`]'s values, decoded as the shader decodes them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecodedResident {
    /// World position.
    pub position: Vec3,
    /// The normalised rotation.
    pub rotation: Quat,
    /// Uniform scale.
    pub scale: f32,
    /// RGBA tint in `[0, 1]`.
    pub tint: Vec4,
    /// The clip, or `None` for an empty slot.
    pub clip: Option<u32>,
    /// True when the CPU draws the instance this frame.
    pub cpu_drawn: bool,
    /// The animation state.
    pub anim: Option<ResidentAnim>,
}

fn bad(field: &'static str, reason: &'static str) -> Error {
    Error::Resident { field, reason }
}

impl ResidentInstance {
    /// A slot with no instance: the GPU skips it.
    pub const EMPTY: Self = Self {
        position: [0.0; 3],
        scale: 0.0,
        rotation: [0, 0],
        tint: 0,
        clips: RESIDENT_EMPTY_CLIP | (RESIDENT_NO_FADE << 16),
        start_time: 0.0,
        speed: 0.0,
        fade_start: 0.0,
        fade_length: 0.0,
    };

    /// Packs one instance.
    ///
    /// # Errors
    ///
    /// [`Error::Resident`] naming the field when: `position`, `rotation`, `scale` or a time is not finite; the
    /// rotation's length is not within 1e-3 of 1; `scale` is not positive; a tint component is outside `[0, 1]`;
    /// a clip is at or past [`RESIDENT_EMPTY_CLIP`]; a fade's length is not positive.
    pub fn new(position: Vec3, rotation: Quat, scale: f32, anim: &ResidentAnim, tint: Vec4) -> Result<Self> {
        if !position.is_finite() {
            return Err(bad("position", "not finite"));
        }
        if !rotation.is_finite() || (rotation.length() - 1.0).abs() > 1e-3 {
            return Err(bad("rotation", "not finite, or not of unit length (within 1e-3)"));
        }
        if !(scale.is_finite() && scale > 0.0) {
            return Err(bad("scale", "not finite and positive"));
        }
        if !(tint.cmpge(Vec4::ZERO).all() && tint.cmple(Vec4::ONE).all()) {
            return Err(bad("tint", "a component outside [0, 1], or not finite"));
        }
        if anim.clip >= RESIDENT_EMPTY_CLIP {
            return Err(bad("clip", "at or past RESIDENT_EMPTY_CLIP"));
        }
        if !(anim.start_time.is_finite() && anim.speed.is_finite()) {
            return Err(bad("start_time or speed", "not finite"));
        }
        let (target, fade_start, fade_length) = match anim.fade {
            None => (RESIDENT_NO_FADE, 0.0, 0.0),
            Some(f) => {
                if f.target >= RESIDENT_EMPTY_CLIP {
                    return Err(bad("fade target", "at or past RESIDENT_EMPTY_CLIP"));
                }
                if !f.start.is_finite() {
                    return Err(bad("fade start", "not finite"));
                }
                if !(f.length.is_finite() && f.length > 0.0) {
                    return Err(bad("fade length", "not finite and positive"));
                }
                (f.target, f.start, f.length)
            }
        };
        Ok(Self::pack(
            position,
            rotation.normalize(),
            scale,
            anim.clip,
            anim.start_time,
            anim.speed,
            (target, fade_start, fade_length),
            tint,
        ))
    }

    /// Packs values that [`ResidentInstance::new`]'s rules already hold for (the frame calls it with values
    /// checked where they entered the crowd): `rotation` of unit length, clips below [`RESIDENT_EMPTY_CLIP`] (the
    /// fade target [`RESIDENT_NO_FADE`] without a fade), finite times. Out-of-range values give a wrong state,
    /// never a panic.
    #[expect(clippy::too_many_arguments, reason = "the fields of the state")]
    #[inline]
    pub(crate) fn pack(
        position: Vec3,
        rotation: Quat,
        scale: f32,
        clip: u32,
        start_time: f32,
        speed: f32,
        (target, fade_start, fade_length): (u32, f32, f32),
        tint: Vec4,
    ) -> Self {
        Self {
            position: position.to_array(),
            scale,
            rotation: pack_rotation(rotation),
            tint: pack_rgba8(tint),
            clips: clip | (target << 16),
            start_time,
            speed,
            fade_start,
            fade_length,
        }
    }

    /// The rotation the GPU decodes for `rotation` (unit length within 1e-3): a CPU store that holds it culls the
    /// same sphere as the GPU pass, to the rounding of the arithmetic.
    pub fn snap_rotation(rotation: Quat) -> Quat {
        Quat::from_vec4(unpack_rotation(pack_rotation(rotation.normalize())))
    }

    /// The same instance with [`RESIDENT_CPU_DRAWN`] set to `drawn`.
    pub fn with_cpu_drawn(self, drawn: bool) -> Self {
        let clips = self.clips & !RESIDENT_CPU_DRAWN;
        Self {
            clips: if drawn { clips | RESIDENT_CPU_DRAWN } else { clips },
            ..self
        }
    }

    /// The values as `shaders/resident_instance.wgsl` decodes them.
    pub fn decode(&self) -> DecodedResident {
        let r = self;
        // resident_clip(r): r.clips & 0x7fffu
        let clip = r.clips & 0x7fff;
        // resident_fade_target(r): r.clips >> 16u
        let target = r.clips >> 16;
        let empty = clip == RESIDENT_EMPTY_CLIP;
        let anim = (!empty).then_some(ResidentAnim {
            clip,
            start_time: r.start_time,
            speed: r.speed,
            fade: (target != RESIDENT_NO_FADE).then_some(ResidentFade {
                target,
                start: r.fade_start,
                length: r.fade_length,
            }),
        });
        DecodedResident {
            position: Vec3::from_array(r.position),
            // unpack_snorm16_quat(r.rotation)
            rotation: Quat::from_vec4(unpack_rotation(r.rotation)),
            scale: r.scale,
            // unpack4x8unorm(r.tint)
            tint: Vec4::from_array(unpack4x8unorm(r.tint)),
            clip: (!empty).then_some(clip),
            cpu_drawn: r.clips & RESIDENT_CPU_DRAWN != 0,
            anim,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anim() -> ResidentAnim {
        ResidentAnim {
            clip: 3,
            start_time: -1.5,
            speed: 1.25,
            fade: Some(ResidentFade {
                target: 7,
                start: 2.0,
                length: 0.25,
            }),
        }
    }

    #[test]
    fn an_instance_round_trips_within_the_rotation_bound() {
        let q = Quat::from_euler(glam::EulerRot::YXZ, 2.5, -0.4, 0.3);
        let tint = Vec4::new(1.0, 0.5, 0.0, 1.0);
        let r = ResidentInstance::new(Vec3::new(1.0, -2.0, 3.5), q, 0.75, &anim(), tint).expect("valid");
        let d = r.decode();
        assert_eq!(d.position, Vec3::new(1.0, -2.0, 3.5));
        assert_eq!(d.scale, 0.75);
        assert_eq!(d.clip, Some(3));
        assert_eq!(d.anim, Some(anim()));
        assert!(!d.cpu_drawn && r.with_cpu_drawn(true).decode().cpu_drawn);
        assert_eq!(r.with_cpu_drawn(true).with_cpu_drawn(false), r);
        assert!((d.tint - Vec4::new(1.0, 128.0 / 255.0, 0.0, 1.0)).abs().max_element() < 1e-6);
        // The sign of q is free: the decoded rotation is q or -q, within the bound.
        let dq = Vec4::from(d.rotation);
        let e = (dq - Vec4::from(q))
            .abs()
            .max_element()
            .min((dq + Vec4::from(q)).abs().max_element());
        assert!(e <= crate::ROTATION_ERROR_BOUND, "{e}");
        assert_eq!(ResidentInstance::snap_rotation(q), d.rotation);
        assert_eq!(ResidentInstance::EMPTY.decode().clip, None);
    }

    #[test]
    fn bad_fields_are_named() {
        let ok = (Vec3::ZERO, Quat::IDENTITY, 1.0, anim(), Vec4::ONE);
        let field = |r: Result<ResidentInstance>| match r {
            Err(Error::Resident { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        let new = |p: Vec3, q: Quat, s: f32, a: ResidentAnim, t: Vec4| ResidentInstance::new(p, q, s, &a, t);
        assert_eq!(field(new(Vec3::NAN, ok.1, ok.2, ok.3, ok.4)), "position");
        assert_eq!(
            field(new(ok.0, Quat::from_xyzw(0.0, 0.0, 0.0, 2.0), ok.2, ok.3, ok.4)),
            "rotation"
        );
        assert_eq!(field(new(ok.0, ok.1, 0.0, ok.3, ok.4)), "scale");
        assert_eq!(field(new(ok.0, ok.1, ok.2, ok.3, Vec4::splat(1.5))), "tint");
        let mut a = anim();
        a.clip = RESIDENT_EMPTY_CLIP;
        assert_eq!(field(new(ok.0, ok.1, ok.2, a, ok.4)), "clip");
        let mut a = anim();
        a.speed = f32::INFINITY;
        assert_eq!(field(new(ok.0, ok.1, ok.2, a, ok.4)), "start_time or speed");
        let mut a = anim();
        a.fade = Some(ResidentFade {
            target: 1,
            start: 0.0,
            length: 0.0,
        });
        assert_eq!(field(new(ok.0, ok.1, ok.2, a, ok.4)), "fade length");
    }
}
