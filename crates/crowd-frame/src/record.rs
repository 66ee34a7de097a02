//! [`InstanceRecord`]: the 32 bytes the renderer reads for each visible pooled, unique or procedural instance.

use bytemuck::{Pod, Zeroable};
use glam::{Quat, Vec3, Vec4};
use skin_pack::quant::{
    f16_bits_normal, pack_rgba8, pack2x16, snorm16, unorm16, unpack2x16snorm, unpack2x16unorm, unpack4x8unorm,
};

use crate::{Error, Result};

/// The size of an [`InstanceRecord`] in bytes.
pub const INSTANCE_RECORD_SIZE: usize = 32;

/// The smallest scale a record holds: `2⁻¹⁴`, the smallest normal f16 (so the shader decodes it with one shift).
pub const SCALE_MIN: f32 = 1.0 / 16384.0;

/// The largest scale a record holds: 65504, the largest finite f16.
pub const SCALE_MAX: f32 = 65504.0;

/// The largest rotation angle, in radians, between a unit quaternion and its decoded record.
///
/// Each of the four snorm16 components is off by at most `1/65534`, so the quaternion moves by at most
/// `2/65534 = 3.06e-5` and turns (as a 4-vector) by an angle `φ` with `sin φ ≤ 3.06e-5`; the rotation it stands for
/// turns by `2φ ≤ 6.11e-5`. The bound leaves `3.9e-6` for the f32 arithmetic of the decoder (the division of each
/// component and the normalisation). For a vertex at distance `r` from the instance origin that is at most
/// `6.5e-5 · r · scale` (0.11 mm at 1.7 m).
pub const ROTATION_ERROR_BOUND: f32 = 6.5e-5;

/// The largest relative error of the decoded scale: `2⁻¹¹`, half an ulp of f16's 11-bit significand (round to
/// nearest; the decode is exact).
pub const SCALE_RELATIVE_ERROR_BOUND: f32 = 1.0 / 2048.0;

/// The largest error of the decoded pooled fraction: half a unorm16 step, `1/131070`, plus `2⁻²⁴` for the f32
/// division of the decoder.
pub const FRACTION_ERROR_BOUND: f32 = 1.0 / 131_070.0 + 1.0 / 16_777_216.0;

/// The largest error of the decoded procedural phase, in turns, measured around the circle (a decoded 1 is the
/// same turn as 0): half a unorm16 step, `1/131070`, plus `2⁻²⁴` for the f32 product and division of the encoder
/// and decoder (as [`FRACTION_ERROR_BOUND`]), plus `2⁻²⁵` for wrapping a negative phase into `[0, 1)` (the
/// remainder is exact; adding one rounds to half an ulp below 1).
pub const PHASE_ERROR_BOUND: f32 = 1.0 / 131_070.0 + 1.0 / 16_777_216.0 + 1.0 / 33_554_432.0;

/// The largest error of the decoded procedural amplitude: the same unorm16 code and decoder as the pooled
/// fraction, so the same bound, [`FRACTION_ERROR_BOUND`].
pub const AMPLITUDE_ERROR_BOUND: f32 = FRACTION_ERROR_BOUND;

/// One visible instance as the renderer reads it, 32 bytes, declared identically in `shaders/instance_record.wgsl`
/// (`struct InstanceRecord`, whose decoders [`InstanceRecord::decode`] mirrors line for line).
///
/// | bytes | field | packing |
/// | --- | --- | --- |
/// | 0..12 | `position` | world position, f32 × 3, exact |
/// | 12..16 | `scale_fraction` | uniform scale as f16 (low 16 bits); pooled: the weight of slot 1 as unorm16 (high 16 bits); otherwise 0 there |
/// | 16..24 | `rotation` | unit quaternion with `w ≥ 0` as four snorm16, `(x, y)` in word 0 and `(z, w)` in word 1, low half first |
/// | 24..28 | `anim` | pooled: slot 0 (low 16 bits) and slot 1 (high 16 bits); unique: the index of the instance's first palette entry; procedural: the phase in turns, wrapped into `[0, 1)`, as unorm16 (low 16 bits) and the amplitude as unorm16 (high 16 bits) |
/// | 28..32 | `tint` | RGBA8 unorm, red in the low byte (WGSL `unpack4x8unorm`); a game may use it for other data |
///
/// Which meaning `anim` and the fraction have is the draw range's tier (or the renderer: `crowd_gpu`'s
/// procedural renderer reads only procedural records), never a flag in the record. The decoded values are within
/// [`ROTATION_ERROR_BOUND`], [`SCALE_RELATIVE_ERROR_BOUND`], [`FRACTION_ERROR_BOUND`], [`PHASE_ERROR_BOUND`],
/// [`AMPLITUDE_ERROR_BOUND`] and half a tint step (`1/510`) of the packed ones (`tests/record_round_trip.rs`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct InstanceRecord {
    /// World position.
    pub position: [f32; 3],
    /// Scale (f16, low half) and pooled fraction (unorm16, high half).
    pub scale_fraction: u32,
    /// The rotation as four snorm16 components.
    pub rotation: [u32; 2],
    /// The slot pair (pooled) or the first palette entry (unique).
    pub anim: u32,
    /// RGBA8 tint.
    pub tint: u32,
}

const _: () = assert!(size_of::<InstanceRecord>() == INSTANCE_RECORD_SIZE);
const _: () = assert!(align_of::<InstanceRecord>() == 4);

/// How a record's instance is animated: the tier decides which one the renderer reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RecordAnim {
    /// Between two pose-pool slots (their indices in the pool's slot palettes), `fraction` of the way from slot 0
    /// to slot 1, in `[0, 1]`.
    Pooled {
        /// The two slots.
        slots: [u16; 2],
        /// The weight of slot 1.
        fraction: f32,
    },
    /// Its own palette, starting at palette entry `palette`.
    Unique {
        /// The index of the first palette entry.
        palette: u32,
    },
    /// Procedural (fish, flags, plants): no bones; the shader poses the mesh from the phase and the amplitude
    /// alone (`crowd_mesh::procedural::Undulation`).
    Procedural {
        /// Where the instance is in its cycle, in turns: any finite value, wrapped into `[0, 1)` (a phase of 1.25
        /// packs as 0.25).
        phase: f32,
        /// The fraction of the mesh's largest amplitude, in `[0, 1]`.
        amplitude: f32,
    },
}

/// A record's values as the shader decodes them (see [`InstanceRecord::decode`]); every meaning of `anim` is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecodedRecord {
    /// World position.
    pub position: Vec3,
    /// Unit rotation.
    pub rotation: Quat,
    /// Uniform scale.
    pub scale: f32,
    /// Pooled: the weight of slot 1.
    pub fraction: f32,
    /// Pooled: the two slots.
    pub slots: [u32; 2],
    /// Unique: the first palette entry.
    pub palette: u32,
    /// Procedural: the phase in turns, in `[0, 1]` (1 is the same turn as 0).
    pub phase: f32,
    /// Procedural: the fraction of the mesh's largest amplitude, in `[0, 1]`.
    pub amplitude: f32,
    /// RGBA tint in `[0, 1]`.
    pub tint: Vec4,
}

/// The one rule for an instance's scale, wherever it enters (a spawn, a record): within
/// [`SCALE_MIN`]`..=`[`SCALE_MAX`], which also refuses NaN.
pub(crate) fn scale_fits(scale: f32) -> bool {
    (SCALE_MIN..=SCALE_MAX).contains(&scale)
}

/// The one rule for a tint, wherever it enters (a spawn, `set_tint`, a record): every component within `[0, 1]`,
/// which also refuses NaN.
pub(crate) fn tint_fits(tint: Vec4) -> bool {
    tint.cmpge(Vec4::ZERO).all() && tint.cmple(Vec4::ONE).all()
}

/// [`Error::Record`] for `field`.
fn bad(field: &'static str, reason: &'static str) -> Error {
    Error::Record { field, reason }
}

impl InstanceRecord {
    /// Packs one instance.
    ///
    /// # Errors
    ///
    /// [`Error::Record`] naming the field when `position` is not finite, `rotation` is not finite or has zero
    /// length (it is normalised otherwise), `scale` is not within [`SCALE_MIN`]`..=`[`SCALE_MAX`], a pooled
    /// `fraction` is not within `[0, 1]`, a procedural `phase` is not finite, a procedural `amplitude` is not within
    /// `[0, 1]`, or a `tint` component is not within `[0, 1]`.
    pub fn new(position: Vec3, rotation: Quat, scale: f32, anim: RecordAnim, tint: Vec4) -> Result<Self> {
        if !position.is_finite() {
            return Err(bad("position", "not finite"));
        }
        let q = Vec4::from(rotation);
        let length = q.length();
        if !length.is_finite() || length == 0.0 {
            return Err(bad("rotation", "not finite, or of zero length"));
        }
        if !scale_fits(scale) {
            return Err(bad("scale", "outside SCALE_MIN..=SCALE_MAX, or not finite"));
        }
        if !tint_fits(tint) {
            return Err(bad("tint", "a component outside [0, 1], or not finite"));
        }
        let (fraction, anim) = match anim {
            RecordAnim::Pooled { slots, fraction } => {
                if !(0.0..=1.0).contains(&fraction) {
                    return Err(bad("fraction", "outside [0, 1], or not finite"));
                }
                (fraction, u32::from(slots[0]) | (u32::from(slots[1]) << 16))
            }
            RecordAnim::Unique { palette } => (0.0, palette),
            RecordAnim::Procedural { phase, amplitude } => {
                if !phase.is_finite() {
                    return Err(bad("phase", "not finite"));
                }
                if !(0.0..=1.0).contains(&amplitude) {
                    return Err(bad("amplitude", "outside [0, 1], or not finite"));
                }
                (0.0, pack_procedural(phase, amplitude))
            }
        };
        // A rotation of unit length to within 2^-20 (every stored instance rotation) packs as given, so that the
        // frame packer, which skips this check, writes the same bits; the decoder normalises.
        let q = if (length - 1.0).abs() <= 1.0 / 1_048_576.0 {
            q
        } else {
            q / length
        };
        Ok(Self::pack(position, Quat::from_vec4(q), scale, fraction, anim, tint))
    }

    /// Packs values that [`InstanceRecord::new`]'s rules already hold for: `rotation` of unit length (within
    /// 1e-3), `scale` within [`SCALE_MIN`]`..=`[`SCALE_MAX`], `fraction` and `tint` within `[0, 1]`, everything
    /// finite. The frame packer calls it with values checked once where they entered the crowd; out-of-range
    /// values give a wrong record, never a panic.
    #[inline]
    pub(crate) fn pack(position: Vec3, rotation: Quat, scale: f32, fraction: f32, anim: u32, tint: Vec4) -> Self {
        let f = unorm16(Vec4::splat(fraction))[0];
        Self {
            position: position.to_array(),
            scale_fraction: f16_bits_normal(scale) | (u32::from(f) << 16),
            rotation: pack_rotation(rotation),
            anim,
            tint: pack_rgba8(tint),
        }
    }

    /// The record's values computed line for line as `shaders/instance_record.wgsl` does.
    pub fn decode(&self) -> DecodedRecord {
        let r = self;
        let q = unpack_rotation(r.rotation);
        // bitcast<f32>(((r.scale_fraction & 0x7fffu) << 13u) + 0x38000000u)
        let scale = f32::from_bits(((r.scale_fraction & 0x7fff) << 13) + 0x3800_0000);
        // unpack2x16unorm(r.scale_fraction).y
        let fraction = unpack2x16unorm(r.scale_fraction)[1];
        // vec2<u32>(r.anim & 0xffffu, r.anim >> 16u)
        let slots = [r.anim & 0xffff, r.anim >> 16];
        // unpack2x16unorm(r.anim).x and .y
        let [phase, amplitude] = unpack2x16unorm(r.anim);
        // unpack4x8unorm(r.tint)
        let tint = Vec4::from_array(unpack4x8unorm(r.tint));
        DecodedRecord {
            position: Vec3::from_array(r.position),
            rotation: Quat::from_vec4(q),
            scale,
            fraction,
            slots,
            palette: r.anim,
            phase,
            amplitude,
            tint,
        }
    }
}

/// A procedural `anim` word: the finite `phase` wrapped into `[0, 1)` (the remainder is exact; a negative phase
/// adds one, which may round up to 1, the same turn as 0) as unorm16 in the low half, and `amplitude` in `[0, 1]` as
/// unorm16 in the high half, each off by at most half a step ([`PHASE_ERROR_BOUND`], [`AMPLITUDE_ERROR_BOUND`]).
#[inline]
fn pack_procedural(phase: f32, amplitude: f32) -> u32 {
    let [p, a, _, _] = unorm16(Vec4::new(phase.rem_euclid(1.0), amplitude, 0.0, 0.0));
    pack2x16(p, a)
}

/// A rotation of unit length (within 1e-3) as four snorm16 with `w ≥ 0`: `(x, y)` in word 0 and `(z, w)` in
/// word 1, low half first. The record and [`ResidentInstance`](crate::ResidentInstance) share it; each component
/// is off by at most `1/65534` ([`ROTATION_ERROR_BOUND`]), rounded to nearest with ties to even
/// (`skin_pack::quant::snorm16`, four lanes at a time).
#[inline(always)]
pub(crate) fn pack_rotation(rotation: Quat) -> [u32; 2] {
    let q = Vec4::from(rotation);
    let q = snorm16(if q.w < 0.0 { -q } else { q });
    [pack2x16(q[0], q[1]), pack2x16(q[2], q[3])]
}

/// [`pack_rotation`]'s words decoded as `shaders/quat.wgsl`'s `unpack_snorm16_quat` does, line for line:
/// `normalize(vec4<f32>(unpack2x16snorm(w.x), unpack2x16snorm(w.y)))`.
pub(crate) fn unpack_rotation(words: [u32; 2]) -> Vec4 {
    let [x, y] = unpack2x16snorm(words[0]);
    let [z, w] = unpack2x16snorm(words[1]);
    Vec4::new(x, y, z, w).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_of_a_known_record() {
        let r = InstanceRecord::new(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::IDENTITY,
            1.0,
            RecordAnim::Pooled {
                slots: [7, 0x1234],
                fraction: 1.0,
            },
            Vec4::new(1.0, 0.0, 0.0, 1.0),
        )
        .expect("packs");
        // f16 1.0 = 0x3c00; unorm16 1.0 = 0xffff; snorm16 1.0 = 0x7fff.
        assert_eq!(r.scale_fraction, 0xffff_3c00);
        assert_eq!(r.rotation, [0, 0x7fff_0000]);
        assert_eq!(r.anim, 0x1234_0007);
        assert_eq!(r.tint, 0xff00_00ff);
        assert_eq!(&bytemuck::bytes_of(&r)[..4], &1.0f32.to_le_bytes());
        let d = r.decode();
        assert_eq!(
            (d.scale, d.fraction, d.slots, d.rotation),
            (1.0, 1.0, [7, 0x1234], Quat::IDENTITY)
        );
    }

    #[test]
    fn procedural_words_pack_phase_low_and_amplitude_high() {
        let record = |phase, amplitude| {
            InstanceRecord::new(
                Vec3::ZERO,
                Quat::IDENTITY,
                1.0,
                RecordAnim::Procedural { phase, amplitude },
                Vec4::ONE,
            )
            .expect("packs")
        };
        let r = record(0.25, 1.0);
        // unorm16: 0.25 · 65535 = 16383.75 rounds to 16384 (0x4000); 1.0 is 0xffff; the fraction half is 0.
        assert_eq!(r.anim, 0xffff_4000);
        assert_eq!(r.scale_fraction, 0x3c00);
        let d = r.decode();
        assert_eq!((d.phase, d.amplitude), (16384.0 / 65535.0, 1.0));
        // Phases wrap: whole turns and negative phases pack as their place in [0, 1).
        assert_eq!(record(3.25, 1.0).anim, r.anim);
        assert_eq!(record(-0.75, 1.0).anim, r.anim);
        assert_eq!(record(0.0, 0.0).anim, 0);
        // A phase a hair below a whole turn rounds to the code of 1, the same turn as 0.
        assert_eq!(record(-1e-9, 0.0).anim, 0xffff);
    }

    #[test]
    fn bad_fields_are_named() {
        let ok = |p: Vec3, q: Quat, s: f32, a: RecordAnim, t: Vec4| InstanceRecord::new(p, q, s, a, t);
        let pooled = RecordAnim::Pooled {
            slots: [0, 1],
            fraction: 0.5,
        };
        let field = |r: Result<InstanceRecord>| match r {
            Err(Error::Record { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        let (p, q, t) = (Vec3::ZERO, Quat::IDENTITY, Vec4::ONE);
        assert_eq!(field(ok(Vec3::NAN, q, 1.0, pooled, t)), "position");
        assert_eq!(
            field(ok(p, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0), 1.0, pooled, t)),
            "rotation"
        );
        assert_eq!(
            field(ok(p, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0), 1.0, pooled, t)),
            "rotation"
        );
        for s in [0.0, 1e-5, 7e4, f32::NAN, f32::INFINITY, -1.0] {
            assert_eq!(field(ok(p, q, s, pooled, t)), "scale", "{s}");
        }
        for f in [-0.1, 1.5, f32::NAN] {
            let a = RecordAnim::Pooled {
                slots: [0, 1],
                fraction: f,
            };
            assert_eq!(field(ok(p, q, 1.0, a, t)), "fraction", "{f}");
        }
        for phase in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let a = RecordAnim::Procedural { phase, amplitude: 0.5 };
            assert_eq!(field(ok(p, q, 1.0, a, t)), "phase", "{phase}");
        }
        for amplitude in [-0.1, 1.5, f32::NAN] {
            let a = RecordAnim::Procedural { phase: 0.5, amplitude };
            assert_eq!(field(ok(p, q, 1.0, a, t)), "amplitude", "{amplitude}");
        }
        assert_eq!(field(ok(p, q, 1.0, pooled, Vec4::splat(2.0))), "tint");
        assert_eq!(field(ok(p, q, 1.0, pooled, Vec4::splat(f32::NAN))), "tint");
        // The limits themselves pack.
        for s in [SCALE_MIN, SCALE_MAX] {
            assert!(ok(p, q, s, pooled, t).is_ok(), "{s}");
        }
    }
}
