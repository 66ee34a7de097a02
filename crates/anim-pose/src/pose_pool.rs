//! `PosePool`: shared pose slots for pooled crowd instances, with crossfade buckets.
//!
//! A pooled instance costs nothing per frame on the animation side.
//! Each clip of the pool gets `K` phase slots spread evenly over the clip, and every slot is sampled and converted
//! to model space once per frame, in parallel over slots.
//! An instance only maps its (clip, time) to two neighbouring slots and a fraction ([`PosePool::map`],
//! [`PosePool::map_instances`]), and the renderer interpolates the two slot palettes.
//!
//! Instances that crossfade from one clip to another share *crossfade buckets*, keyed by (from clip, to clip,
//! quantized weight), as in Unreal's AnimationSharing: a crowd-wide transition never falls back to sampling each
//! instance.
//!
//! # Layout
//!
//! The model-space matrices of all slots live in one contiguous buffer, [`PosePool::palettes`], indexed
//! `slot * joint_count + joint` (the pooled palette contract of `PIPELINE.md`).
//! Clip slots come first, clip after clip in the order given to [`PosePool::new`]; [`PosePool::clip_table`] gives
//! each clip's first slot and slot count.
//! After them come `max_crossfade_buckets` bucket regions of `max(K)` slots each (the largest slot count of any
//! clip); a bucket crossfading to clip `B` uses the first `K_B` slots of its region.

use glam::Affine3A;
use rayon::prelude::*;

use crate::{
    BlendLayer, BlendingJob, Error, LocalToModelJob, Result, RuntimeClip, SamplingJob, Skeleton, SoaTransform,
    num_soa_joints, pack_soa,
};

#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
#[allow(
    unsafe_code,
    reason = "SSE2 and AVX2 intrinsics, which are unsafe to call before Rust 1.87; stores through a pointer"
)]
mod simd;

/// The most slots a pool may hold, clip slots and crossfade bucket regions together.
///
/// The GPU instance record stores a pooled instance's two slots as `u16`s (see `PIPELINE.md`), so slot indices
/// must fit in 16 bits.
pub const MAX_POOL_SLOTS: usize = 1 << 16;

/// The most crossfade weight levels a pool may have.
///
/// Past 256 levels, neighbouring weights differ by less than 0.4 %, which no viewer can tell apart, while every
/// level may cost a bucket of its own.
pub const MAX_CROSSFADE_LEVELS: usize = 256;

/// The job name used in errors raised by the pool's hot paths.
const POOL: &str = "PosePool";

/// The blending threshold of crossfade buckets.
///
/// A bucket's two layer weights always sum to one, so the rest pose never fills in; any positive value below one
/// works.
const BLEND_THRESHOLD: f32 = 0.1;

/// One clip of a [`PosePool`] and its number of phase slots.
#[derive(Clone, Copy, Debug)]
pub struct PoolClip<'a> {
    /// The clip. It must be built for the pool's skeleton.
    pub clip: &'a RuntimeClip,
    /// The number of phase slots `K`, at least 2.
    ///
    /// More slots give a smaller interpolation error; `skin_pack::slots_for_tolerance` picks `K` from an error
    /// budget in vertex displacement.
    pub slots: usize,
}

/// Construction options of a [`PosePool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PosePoolOptions {
    /// The number of crossfade weight levels `L`, from 2 to [`MAX_CROSSFADE_LEVELS`]. Level `l` has the weight
    /// `l / (L - 1)`, so levels 0 and `L - 1` are the two endpoint clips. Default 8.
    pub crossfade_levels: usize,
    /// The most crossfade buckets that may exist at once, at least 1. Each bucket reserves `max(K)` slots.
    /// Default 32.
    pub max_crossfade_buckets: usize,
    /// Update the slots in parallel with rayon. Default `true`.
    ///
    /// Rayon itself allocates a small queue block (about 1.5 KiB) once every 63 times a thread outside its pool
    /// enters the pool. A caller that must never allocate in steady state calls [`PosePool::update`] from inside
    /// `rayon::ThreadPool::install`, or turns this off.
    pub parallel: bool,
}

impl Default for PosePoolOptions {
    fn default() -> Self {
        Self {
            crossfade_levels: 8,
            max_crossfade_buckets: 32,
            parallel: true,
        }
    }
}

/// A contiguous range of slots: a clip's phase slots or a crossfade bucket's slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct ClipSlots {
    /// The first slot, a global slot index.
    pub first_slot: u32,
    /// The number of slots.
    pub slot_count: u32,
}

/// An instance's place in the pool: two neighbouring slots and the fraction between them.
///
/// The instance's pose is `lerp(palette(slot_a), palette(slot_b), fraction)`, where `palette(s)` is the
/// `joint_count` matrices of slot `s` in [`PosePool::palettes`].
/// Slots are global slot indices; they fit in `u16` because a pool has at most [`MAX_POOL_SLOTS`] slots, which is
/// the GPU instance record's layout.
/// The struct is `repr(C)`, 8 bytes: `slot_a`, `slot_b`, `fraction`.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[repr(C)]
pub struct SlotRef {
    /// The slot at or before the instance's phase.
    pub slot_a: u16,
    /// The next slot, wrapping to the clip's first slot for looping clips. At the very end of a non-looping clip
    /// it equals `slot_a`.
    pub slot_b: u16,
    /// The fraction from `slot_a` to `slot_b`, in `[0, 1)`.
    pub fraction: f32,
}

// The SIMD mapping kernels store slot refs as `[slot_a | slot_b << 16, fraction bits]` words.
const _: () = assert!(size_of::<SlotRef>() == 8 && align_of::<SlotRef>() == 4);
const _: () = assert!(std::mem::offset_of!(SlotRef, slot_b) == 2 && std::mem::offset_of!(SlotRef, fraction) == 4);

impl SlotRef {
    /// The fraction as a unorm16, the GPU instance record's encoding: `round(fraction * 65535)`.
    /// The quantization error is at most `1 / 131070`.
    pub fn fraction_unorm16(&self) -> u16 {
        // The cast saturates, and the fraction is in [0, 1), so the result is in range.
        (self.fraction * 65535.0).round() as u16
    }
}

/// What an instance that crossfades uses instead of a clip: a track of the pool and a time scale.
///
/// The instance maps `(track, time_scale * to_time)`, where `to_time` is its time in the clip it crossfades to,
/// with [`PosePool::map`] or [`PosePool::map_instances`], or calls [`PosePool::map_crossfade`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrossfadeRef {
    /// The track to map: a crossfade bucket's track, or an endpoint clip when the bucket cap was reached.
    pub track: u16,
    /// The factor from the instance's time in the clip it crossfades to, to the time to map with.
    /// It is 1 except when the request snapped to the clip crossfaded from, where it is `D_from / D_to`.
    pub time_scale: f32,
    /// The weight of the clip crossfaded to that the track actually shows: the requested weight quantized to a
    /// level, or 0 or 1 after a snap to an endpoint clip.
    pub weight: f32,
}

impl CrossfadeRef {
    /// The time to map with, for an instance at `to_time` in the clip it crossfades to.
    pub fn time(&self, to_time: f32) -> f32 {
        to_time * self.time_scale
    }
}

/// How one track maps instance times to slots, precomputed for [`PosePool::map_instances`].
///
/// The mapping is fixed-point: `p = clamp(time - origin, lo, hi)`, then the 32-bit phase
/// `phase = round(p * scale) mod 2^32`, computed exactly in `f64` and wrapped by taking the low bits.
/// `phase * mul / 2^32` is the slot position: its integer part `a` is the slot, its low 32 bits the fraction.
/// The slot pair of `a` is read from the pool's pair table at `pairs + a`: the track's region of that table holds,
/// for each of its `K` slots, `slot_a | slot_b << 16`, where `slot_b = slot_a + 1` except after the last slot,
/// where it wraps back to the first slot (looping) or stays on the last slot (non-looping).
///
/// Looping tracks have `origin` the pool time, `scale = 2^32 / D` (one period is the whole phase circle, so the
/// wrap is free), `mul = K`, and `[lo, hi]` wide enough never to clamp within 2^19 periods.
/// Non-looping tracks have `origin = 0`, `[lo, hi] = [0, D]`, `mul = M` a power of two at least `K`, and
/// `scale = P / D` with `P = (K - 1) * 2^32 / M` exact, so that the end of the clip lands exactly on the last slot
/// with fraction 0, whose pair keeps `slot_b` on the last slot.
///
/// The SIMD kernels of [`PosePool::map_instances`] use the same constants, laid out for four- and eight-lane
/// transposes, and compute the slot pair from the track's first slot and slot count instead of reading the table.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
struct TrackMap {
    origin: f32,
    lo: f32,
    hi: f32,
    mul: u32,
    scale: f64,
    /// The index in the pair table of the slot pair of `a = 0`. Index 0 holds the pair `(0, 0)`.
    pairs: u32,
}

impl TrackMap {
    /// The entry that maps every time to slot 0 (never-used buckets, and the padding past the last track).
    const NULL: Self = Self {
        origin: 0.0,
        lo: 0.0,
        hi: 0.0,
        mul: 1,
        scale: 0.0,
        pairs: 0,
    };

    /// Maps `time`, without branches, divisions nor float-to-integer conversions (which Rust makes saturating,
    /// at the cost of compares, and which lack a `floor` instruction on baseline x86-64).
    /// Returns the index of the slot pair in the pair table, and the fraction.
    #[inline(always)]
    fn map_pair(&self, time: f32) -> (u32, f32) {
        let p = time - self.origin;
        // Written as selects rather than `max`/`min`, which add NaN handling; a NaN `p` is reported by the caller.
        let p = if p > self.lo { p } else { self.lo };
        let p = if p < self.hi { p } else { self.hi };
        // |p * scale| < 2^51, so adding 1.5 * 2^52 rounds it to an integer held in the low mantissa bits.
        let phase = (f64::from(p) * self.scale + ROUND_MAGIC_F64).to_bits() as u32;
        let position = u64::from(phase) * u64::from(self.mul);
        let a = (position >> 32) as u32;
        // The top 24 bits of the fraction convert exactly, and stay below 1.
        let fraction = ((position as u32) >> 8) as f32 * TWO_POW_M24;
        (a.wrapping_add(self.pairs), fraction)
    }
}

/// 1.5 * 2^52: adding it to an `f64` of magnitude below 2^51 rounds it to an integer held in the low mantissa
/// bits, modulo 2^52.
const ROUND_MAGIC_F64: f64 = 6_755_399_441_055_744.0;

/// 2^-24.
const TWO_POW_M24: f32 = 1.0 / 16_777_216.0;

/// 2^32.
const TWO_POW_32: f64 = 4_294_967_296.0;

/// How many periods from the pool time a looping track maps exactly: `2^19` periods keep `|p * scale|` below
/// 2^51. Past it, f32 times resolve less than a 32nd of a period anyway.
const LOOP_PERIODS: f64 = 524_288.0;

/// The state of one crossfade bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Bucket {
    /// The clip crossfaded from.
    from: u16,
    /// The clip crossfaded to, or `u16::MAX` when the bucket was never used.
    to: u16,
    /// The weight level.
    level: u16,
    /// The bucket holds poses (or will at the next update).
    active: bool,
    /// The bucket was requested since the last update.
    requested: bool,
}

/// An empty entry of the bucket lookup table.
const EMPTY: u32 = u32::MAX;

/// A pool of shared pose slots: `K` phase slots per clip, plus crossfade buckets.
///
/// # Frame protocol
///
/// 1. The game calls [`PosePool::request_crossfade`] for every crossfade it shows this frame.
/// 2. [`PosePool::update`] releases the buckets that were not requested since the previous update, then samples
///    every clip slot and every bucket slot once, and converts them to model space.
/// 3. The game maps its instances with [`PosePool::map_instances`] (or [`PosePool::map`]) and packs the slot refs
///    and [`PosePool::palettes`] for the GPU.
///
/// Neither `update`, the mapping functions nor `request_crossfade` allocate: all storage is sized by
/// [`PosePool::new`] (but see [`PosePoolOptions::parallel`] about rayon).
///
/// # Slots
///
/// Slot `s` of a looping clip of duration `D` with `K` slots holds the pose at `(time + s * D / K) mod D`, where
/// `time` is the pool time given to the last update: slots advance with the pool.
/// Slot `s` of a non-looping clip holds the pose at the fixed time `s * D / (K - 1)`, so the first and last slots
/// are the clip's first and last poses; these slots do not advance, and instances map their own time, clamped to
/// `[0, D]`.
///
/// # Mapping
///
/// An instance of a looping clip at time `t` maps to `offset = (t - time).rem_euclid(D)`, `x = offset * K / D`,
/// `slot_a = first + floor(x) mod K`, `slot_b = first + (floor(x) + 1) mod K`, `fraction = x - floor(x)`.
/// A non-looping clip uses `x = clamp(t, 0, D) * (K - 1) / D`, and `slot_b = slot_a` with fraction 0 at the end.
///
/// # Tracks
///
/// Mapping functions take a *track*: tracks `0..clip_count()` are the clips, in the order given to
/// [`PosePool::new`], and the following `max_crossfade_buckets` tracks are the crossfade buckets, which
/// [`PosePool::request_crossfade`] hands out through [`CrossfadeRef`].
///
/// # Crossfade buckets
///
/// A bucket is keyed by (from clip `A`, to clip `B`, weight level `l` of `L`), shows weight `w = l / (L - 1)` of
/// `B`, and has `K_B` slots in phase with `B`'s slots, like a sync group: bucket slot `s` blends `A` sampled at the
/// normalized phase of `B`'s slot `s` (weight `1 - w`) with `B`'s slot `s` (weight `w`), then converts to model
/// space.
/// An instance maps a bucket with its time in `B`. To continue seamlessly from time `t_A` in `A`, an instance
/// that starts a crossfade takes `t_B = ` [`PosePool::synced_time`]`(A, B, t_A)`; it then ends the crossfade on `B`
/// without a pop.
///
/// When all `max_crossfade_buckets` buckets are in use, a request reuses the existing bucket of the same pair with
/// the nearest level; when the pair has none, the instance snaps to the nearer endpoint clip (the weight decides,
/// `A` below 0.5). Instances are never sampled one by one.
///
/// # Empty pools
///
/// A pool with no clips is valid: [`PosePool::update`] only records the time, and mapping zero instances does
/// nothing.
#[derive(Debug)]
pub struct PosePool<'a> {
    /// The skeleton every clip is built for.
    skeleton: &'a Skeleton,
    /// The clips, indexed by clip track.
    clips: Vec<&'a RuntimeClip>,
    /// Each clip's slot range.
    clip_table: Vec<ClipSlots>,
    /// The clip of each clip slot.
    slot_clip: Vec<u16>,
    /// The number of clip slots (the bucket regions follow them).
    clip_slot_count: usize,
    /// The number of slots reserved per bucket: the largest `K` of any clip.
    bucket_stride: usize,
    /// The crossfade buckets.
    buckets: Vec<Bucket>,
    /// Free bucket indices, used as a stack.
    free: Vec<u16>,
    /// An open-addressing table from (from, to, level) to bucket index; [`EMPTY`] marks empty entries.
    lookup: Vec<u32>,
    /// The number of weight levels.
    levels: usize,
    /// The pool time of the last update.
    time: f32,
    /// The number of joints.
    joint_count: usize,
    /// The number of SoA elements per pose.
    soa_count: usize,
    /// The skeleton's rest pose, SoA, for blending.
    rest: Vec<SoaTransform>,
    /// The local pose of every slot, `soa_count` elements each.
    local: Vec<SoaTransform>,
    /// Per bucket slot, the sample of the clip crossfaded from.
    scratch: Vec<SoaTransform>,
    /// The model-space matrices of every slot, `joint_count` each: the pooled palettes.
    model: Vec<Affine3A>,
    /// Per track, how to map instance times, padded with [`TrackMap::NULL`] to a power of two entries (at least
    /// one past the last track).
    tracks: Vec<TrackMap>,
    /// The slot pairs `slot_a | slot_b << 16` that [`TrackMap::pairs`] indexes: entry 0 is the pair `(0, 0)`, and
    /// entry `1 + s` belongs to the track whose region holds slot `s` (a clip's slots, or a bucket's region), filled
    /// with the pairs that track maps to. Padded with zeros to a power of two entries.
    pairs: Vec<u32>,
    /// Per track, the SIMD kernels' form of [`PosePool::tracks`], with the track's slots instead of its pair table
    /// region; as many entries.
    #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
    rows: Vec<simd::TrackRows>,
    /// Update slots in parallel.
    parallel: bool,
}

impl<'a> PosePool<'a> {
    /// Builds a pool for `clips` of `skeleton`, and sizes all its storage.
    ///
    /// The slot poses are valid after the first [`PosePool::update`].
    ///
    /// # Errors
    ///
    /// - [`Error::Invalid`] naming the skeleton, when it does not validate;
    /// - [`Error::Invalid`] naming the clip (`pose pool clip 3 ('walk')`), when its joint count differs from the
    ///   skeleton's, its duration is not finite and positive, or it has fewer than 2 slots;
    /// - [`Error::InvalidArgument`] when `options` has fewer than 2 or more than [`MAX_CROSSFADE_LEVELS`] levels,
    ///   no buckets, or when the clip slots and bucket regions together exceed [`MAX_POOL_SLOTS`].
    pub fn new(skeleton: &'a Skeleton, clips: &[PoolClip<'a>], options: &PosePoolOptions) -> Result<Self> {
        skeleton.validate()?;
        let joint_count = skeleton.joint_count();
        let levels = options.crossfade_levels;
        if !(2..=MAX_CROSSFADE_LEVELS).contains(&levels) {
            return Err(Error::InvalidArgument {
                what: "PosePoolOptions::crossfade_levels",
                message: format!("is {levels}, must be from 2 to {MAX_CROSSFADE_LEVELS}"),
            });
        }
        let cap = options.max_crossfade_buckets;
        if cap == 0 || clips.len().saturating_add(cap) >= usize::from(u16::MAX) {
            return Err(Error::InvalidArgument {
                what: "PosePoolOptions::max_crossfade_buckets",
                message: format!(
                    "is {cap} for {} clips; it must be at least 1, and clips and buckets together fewer than {}",
                    clips.len(),
                    u16::MAX
                ),
            });
        }
        let mut clip_table = Vec::with_capacity(clips.len());
        let mut clip_slot_count = 0usize;
        let mut bucket_stride = 0usize;
        for (i, pc) in clips.iter().enumerate() {
            let object = || format!("pose pool clip {i} ('{}')", pc.clip.name());
            if pc.clip.joint_count() != joint_count {
                return Err(Error::invalid(
                    object(),
                    format!(
                        "has {} joints, but the skeleton '{}' has {joint_count}",
                        pc.clip.joint_count(),
                        skeleton.name
                    ),
                ));
            }
            let duration = pc.clip.duration();
            if !(duration.is_finite() && duration > 0.0) {
                return Err(Error::invalid(
                    object(),
                    format!("has duration {duration} s; a pooled clip needs a finite, positive duration"),
                ));
            }
            if pc.slots < 2 {
                return Err(Error::invalid(
                    object(),
                    format!("has {} slots; a pooled clip needs at least 2", pc.slots),
                ));
            }
            if pc.slots > MAX_POOL_SLOTS {
                return Err(Error::invalid(
                    object(),
                    format!("has {} slots, more than the pool limit of {MAX_POOL_SLOTS}", pc.slots),
                ));
            }
            clip_table.push(ClipSlots {
                first_slot: clip_slot_count as u32,
                slot_count: pc.slots as u32,
            });
            clip_slot_count += pc.slots;
            bucket_stride = bucket_stride.max(pc.slots);
            if clip_slot_count > MAX_POOL_SLOTS {
                return Err(Error::invalid(
                    object(),
                    format!("brings the pool to {clip_slot_count} clip slots, more than the limit of {MAX_POOL_SLOTS}"),
                ));
            }
        }
        let slot_count = clip_slot_count + cap.saturating_mul(bucket_stride);
        if slot_count > MAX_POOL_SLOTS {
            return Err(Error::InvalidArgument {
                what: "PosePoolOptions::max_crossfade_buckets",
                message: format!(
                    "{cap} buckets of {bucket_stride} slots after {clip_slot_count} clip slots make {slot_count} \
                     slots, more than the limit of {MAX_POOL_SLOTS}"
                ),
            });
        }
        let soa_count = num_soa_joints(joint_count);
        let mut rest = vec![SoaTransform::IDENTITY; soa_count];
        pack_soa(&skeleton.rest_pose, &mut rest)
            .ok_or_else(|| Error::invalid(format!("skeleton '{}'", skeleton.name), "rest pose does not pack"))?;
        let slot_clip = clip_table
            .iter()
            .enumerate()
            .flat_map(|(c, t)| std::iter::repeat_n(c as u16, t.slot_count as usize))
            .collect();
        let bucket_slots = cap * bucket_stride;
        let mut pool = Self {
            skeleton,
            clips: clips.iter().map(|pc| pc.clip).collect(),
            clip_table,
            slot_clip,
            clip_slot_count,
            bucket_stride,
            buckets: vec![
                Bucket {
                    to: u16::MAX,
                    ..Bucket::default()
                };
                cap
            ],
            free: (0..cap as u16).rev().collect(),
            lookup: vec![EMPTY; (2 * cap).next_power_of_two()],
            levels,
            time: 0.0,
            joint_count,
            soa_count,
            rest,
            local: vec![SoaTransform::IDENTITY; slot_count * soa_count],
            scratch: vec![SoaTransform::IDENTITY; bucket_slots * soa_count],
            model: vec![Affine3A::IDENTITY; slot_count * joint_count],
            // A power of two, so that `map_instances` indexes it with a mask.
            tracks: vec![TrackMap::NULL; (clips.len() + cap + 1).next_power_of_two()],
            pairs: vec![0; (slot_count + 1).next_power_of_two()],
            #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
            rows: vec![simd::TrackRows::new(&TrackMap::NULL, 0, 1, false); (clips.len() + cap + 1).next_power_of_two()],
            parallel: options.parallel,
        };
        for c in 0..clips.len() {
            pool.set_track(c);
        }
        Ok(pool)
    }

    /// The skeleton the pool animates.
    pub fn skeleton(&self) -> &'a Skeleton {
        self.skeleton
    }

    /// The number of clips.
    pub fn clip_count(&self) -> usize {
        self.clips.len()
    }

    /// The number of tracks: the clips, then the crossfade buckets.
    pub fn track_count(&self) -> usize {
        self.clips.len() + self.buckets.len()
    }

    /// The number of joints per slot palette.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The total number of slots, clip slots and bucket regions together.
    pub fn slot_count(&self) -> usize {
        self.model.len() / self.joint_count
    }

    /// The number of clip slots; bucket regions start at this slot.
    pub fn clip_slot_count(&self) -> usize {
        self.clip_slot_count
    }

    /// The number of crossfade weight levels.
    pub fn crossfade_levels(&self) -> usize {
        self.levels
    }

    /// The most crossfade buckets that may exist at once.
    pub fn max_crossfade_buckets(&self) -> usize {
        self.buckets.len()
    }

    /// The number of crossfade buckets in use.
    pub fn active_crossfade_count(&self) -> usize {
        self.buckets.iter().filter(|b| b.active).count()
    }

    /// The pool time of the last update (0 before the first).
    pub fn time(&self) -> f32 {
        self.time
    }

    /// Each clip's first slot and slot count, in clip order.
    pub fn clip_table(&self) -> &[ClipSlots] {
        &self.clip_table
    }

    /// The slots of `track`: a clip's slots, or the slots of an active crossfade bucket; `None` for an inactive
    /// bucket or an out-of-range track.
    pub fn track_slots(&self, track: u16) -> Option<ClipSlots> {
        let track = usize::from(track);
        if let Some(c) = self.clip_table.get(track) {
            return Some(*c);
        }
        let b = self.buckets.get(track - self.clips.len())?;
        b.active
            .then(|| self.bucket_slots(track - self.clips.len(), usize::from(b.to)))
    }

    /// The live slot ranges after an update: the clip slots (one range, when there are any), then the slots of each
    /// active crossfade bucket, in slot order. Only these hold current poses; the other slots of the bucket regions
    /// hold stale ones. No allocation.
    pub fn live_slots(&self) -> impl Iterator<Item = ClipSlots> + '_ {
        let clips = (self.clip_slot_count > 0).then_some(ClipSlots {
            first_slot: 0,
            slot_count: self.clip_slot_count as u32,
        });
        let buckets = self
            .buckets
            .iter()
            .enumerate()
            .filter(|(_, b)| b.active)
            .map(|(i, b)| self.bucket_slots(i, usize::from(b.to)));
        clips.into_iter().chain(buckets)
    }

    /// The pooled palettes: `slot_count() * joint_count()` model-space matrices, indexed
    /// `slot * joint_count + joint`.
    ///
    /// These are model-space joint matrices, not skinning matrices: the skinning palette multiplies them by the
    /// inverse bind matrices (`skin_pack::palette_from_model`, or `skin_pack::PoolFlattenJob` for the live slots,
    /// which writes slot `s`'s skinning palette at entries `s * skin_joint_count..`, not `s * joint_count..`).
    /// Slots of inactive buckets hold stale poses ([`PosePool::live_slots`] lists the others).
    pub fn palettes(&self) -> &[Affine3A] {
        &self.model
    }

    /// The model-space matrices of `slot`, `joint_count()` of them; `None` when `slot` is out of range.
    pub fn slot_model(&self, slot: usize) -> Option<&[Affine3A]> {
        self.model.get(slot * self.joint_count..(slot + 1) * self.joint_count)
    }

    /// The local SoA pose of `slot`; `None` when `slot` is out of range.
    pub fn slot_local(&self, slot: usize) -> Option<&[SoaTransform]> {
        self.local.get(slot * self.soa_count..(slot + 1) * self.soa_count)
    }

    /// The clip time that slot `index` of `clip` holds after the last update: `(time + index * D / K) mod D` for
    /// looping clips, `index * D / (K - 1)` for other clips.
    ///
    /// # Errors
    ///
    /// [`Error::Job`] when `clip` or `index` is out of range.
    pub fn clip_slot_time(&self, clip: u16, index: usize) -> Result<f32> {
        let c = usize::from(clip);
        let slots = self
            .clip_table
            .get(c)
            .ok_or(Error::job(POOL, "clip", Some(c), "is not a clip of the pool"))?;
        if index >= slots.slot_count as usize {
            return Err(Error::job(
                POOL,
                "slot index",
                Some(index),
                "is not below the clip's slot count",
            ));
        }
        Ok(slot_time(self.clips[c], slots.slot_count as usize, index, self.time))
    }

    /// The time in clip `to` that continues the normalized phase of time `from_time` in clip `from`:
    /// `(from_time / D_from mod 1) * D_to`. An instance entering a crossfade from `from` to `to` maps crossfade
    /// buckets with this time (advanced by its playback from then on), so that the clip it leaves does not jump.
    ///
    /// # Errors
    ///
    /// [`Error::Job`] when `from` or `to` is not a clip of the pool, or `from_time` is not finite.
    pub fn synced_time(&self, from: u16, to: u16, from_time: f32) -> Result<f32> {
        let a = self.clip(from, "from")?;
        let b = self.clip(to, "to")?;
        if !from_time.is_finite() {
            return Err(Error::job(POOL, "from_time", None, "is not finite"));
        }
        let phase = if a.is_looping() {
            from_time.rem_euclid(a.duration()) / a.duration()
        } else {
            (from_time / a.duration()).clamp(0.0, 1.0)
        };
        Ok(phase * b.duration())
    }

    /// Releases the crossfade buckets not requested since the previous update, then samples every clip slot and
    /// every active bucket slot at pool time `time`, and converts them to model space.
    ///
    /// Never allocates (see [`PosePoolOptions::parallel`] about rayon). With no clips it only records the time.
    ///
    /// # Errors
    ///
    /// [`Error::Job`] when `time` is not finite; the pool is then unchanged.
    pub fn update(&mut self, time: f32) -> Result<()> {
        if !time.is_finite() {
            return Err(Error::job(POOL, "time", None, "is not finite"));
        }
        self.time = time;
        self.release_unrequested();
        for t in 0..self.track_count() {
            self.set_track(t);
        }
        if self.clips.is_empty() {
            return Ok(());
        }
        self.update_clip_slots()?;
        if self.buckets.iter().any(|b| b.active) {
            self.update_bucket_slots()?;
        }
        Ok(())
    }

    /// Maps one instance of `track` at `time` to its slots. This is the plain reference of
    /// [`PosePool::map_instances`], written from the formulas on [`PosePool`].
    ///
    /// An inactive bucket's track maps as the clip it last crossfaded to, or to slot 0 when it was never used.
    ///
    /// # Errors
    ///
    /// [`Error::Job`] when `track` is out of range or `time` is not finite.
    pub fn map(&self, track: u16, time: f32) -> Result<SlotRef> {
        let t = usize::from(track);
        if t >= self.track_count() {
            return Err(Error::job(
                POOL,
                "track",
                Some(t),
                "is not a clip or crossfade track of the pool",
            ));
        }
        if !time.is_finite() {
            return Err(Error::job(POOL, "time", None, "is not finite"));
        }
        let (slots, clip) = if t < self.clips.len() {
            (self.clip_table[t], self.clips[t])
        } else {
            let i = t - self.clips.len();
            let b = self.buckets[i];
            if b.to == u16::MAX {
                return Ok(SlotRef::default());
            }
            let to = usize::from(b.to);
            let slots = if b.active {
                self.bucket_slots(i, to)
            } else {
                self.clip_table[to]
            };
            (slots, self.clips[to])
        };
        let k = slots.slot_count;
        let d = clip.duration();
        let (a, b, fraction) = if clip.is_looping() {
            let offset = (time - self.time).rem_euclid(d);
            let x = offset * k as f32 / d;
            let fl = x.floor();
            let a = (fl as u32) % k;
            (a, (a + 1) % k, x - fl)
        } else {
            let x = time.clamp(0.0, d) * (k - 1) as f32 / d;
            let a = (x.floor() as u32).min(k - 1);
            if a == k - 1 {
                (a, a, 0.0)
            } else {
                (a, a + 1, x - a as f32)
            }
        };
        Ok(SlotRef {
            slot_a: (slots.first_slot + a) as u16,
            slot_b: (slots.first_slot + b) as u16,
            fraction,
        })
    }

    /// Maps a crossfading instance at `to_time` in the clip it crossfades to: `map(cf.track, cf.time(to_time))`.
    ///
    /// # Errors
    ///
    /// As [`PosePool::map`].
    pub fn map_crossfade(&self, cf: &CrossfadeRef, to_time: f32) -> Result<SlotRef> {
        self.map(cf.track, cf.time(to_time))
    }

    /// Maps instance `i` of track `tracks[i]` at time `times[i]` into `out[i]`, for every instance.
    ///
    /// This is the batch form of [`PosePool::map`], with per-track constants and slot pairs precomputed at update
    /// and no division nor data-dependent branch per instance: the phase is computed in 32-bit fixed point, where
    /// the wrap of looping tracks is free. Its result matches `map` up to rounding: the continuous slot position
    /// `slot_a + fraction` may differ by a few ulps (the fraction keeps 24 bits), which near a slot boundary can
    /// move an instance to the neighbouring slot pair with a fraction near 0 or 1 (the same pose). This holds for
    /// times within 2^19 periods of the pool time on looping tracks; farther, where an `f32` time resolves less
    /// than a 32nd of a period, the phase is clamped to that range.
    /// Never allocates; zero instances do nothing. Surplus elements of `out` are untouched.
    ///
    /// On x86_64 without the `scalar` feature, it maps eight instances per step with AVX2 when the CPU has it (checked
    /// at each call), else four with SSE2, and the last few with the scalar kernel; every kernel gives the bits of
    /// [`PosePool::map_instances_scalar`].
    ///
    /// # Errors
    ///
    /// [`Error::Job`] when `times` and `tracks` have different lengths or `out` is shorter (nothing is written
    /// then), or when a track is out of range or a time is not finite: `out` is then written, but unspecified
    /// for the faulty instances.
    pub fn map_instances(&self, tracks: &[u16], times: &[f32], out: &mut [SlotRef]) -> Result<()> {
        check_lengths(tracks, times, out)?;
        let out = &mut out[..tracks.len()];
        // The SIMD kernels map a prefix and scan it for faults as they go; the scalar kernel maps the rest, after
        // a scan of its own. Both give the same bits.
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        let (done, scan) = simd::map_instances(&self.rows, tracks, times, out);
        #[cfg(not(all(target_arch = "x86_64", not(feature = "scalar"))))]
        let (done, scan) = (0, Scan::default());
        let scan = scan.merge(Scan::of(&tracks[done..], &times[done..]));
        self.map_scalar(&tracks[done..], &times[done..], &mut out[done..]);
        self.instances_result(scan)
    }

    /// The plain twin of [`PosePool::map_instances`]: the same fixed-point mapping one instance at a time, with the
    /// slot pairs read from the pair table.
    /// `map_instances` gives the same bits on every target and feature set, for any tracks and times (also the
    /// faulty ones it reports), which `tests/prop_slot_map.rs` checks.
    ///
    /// # Errors
    ///
    /// As [`PosePool::map_instances`].
    pub fn map_instances_scalar(&self, tracks: &[u16], times: &[f32], out: &mut [SlotRef]) -> Result<()> {
        check_lengths(tracks, times, out)?;
        let scan = Scan::of(tracks, times);
        self.map_scalar(tracks, times, &mut out[..tracks.len()]);
        self.instances_result(scan)
    }

    /// The result of mapping instances whose scan is `scan`: an error when a track was out of range or a time not
    /// finite.
    fn instances_result(&self, scan: Scan) -> Result<()> {
        if scan.non_finite || usize::from(scan.max_track) >= self.track_count() {
            return Err(Error::job(
                MAP_JOB,
                "clips or times",
                None,
                "hold an out-of-range track or a non-finite time",
            ));
        }
        Ok(())
    }

    /// The scalar kernel of [`PosePool::map_instances`]: maps every instance of `tracks` and `times` into `out`, of
    /// the same length.
    fn map_scalar(&self, tracks: &[u16], times: &[f32], out: &mut [SlotRef]) {
        let mask = self.tracks.len() - 1;
        let table = &self.tracks[..=mask];
        let pair_mask = self.pairs.len() - 1;
        let pairs = &self.pairs[..=pair_mask];
        let map = |track: u16, time: f32, o: &mut SlotRef| {
            let (index, fraction) = table[usize::from(track) & mask].map_pair(time);
            let pair = pairs[index as usize & pair_mask];
            o.slot_a = pair as u16;
            o.slot_b = (pair >> 16) as u16;
            o.fraction = fraction;
        };
        // Two instances per iteration halve the loop overhead.
        let n = tracks.len();
        let (tr2, tr1) = tracks.split_at(n & !1);
        let (ti2, ti1) = times.split_at(n & !1);
        let (o2, o1) = out.split_at_mut(n & !1);
        for ((tr, ti), o) in tr2.chunks_exact(2).zip(ti2.chunks_exact(2)).zip(o2.chunks_exact_mut(2)) {
            if let [o0, o1] = o {
                map(tr[0], ti[0], o0);
                map(tr[1], ti[1], o1);
            }
        }
        for ((&track, &time), o) in tr1.iter().zip(ti1).zip(o1.iter_mut()) {
            map(track, time, o);
        }
    }

    /// Requests the crossfade from clip `from` to clip `to` at `weight` of `to` (clamped to `[0, 1]`) for this
    /// frame, and returns the track its instances map.
    ///
    /// The weight is quantized to the nearest of the pool's levels, and the bucket of (from, to, level) is reused
    /// or created. At the cap, the nearest existing level of the same pair is reused, else the instance snaps to
    /// the nearer endpoint clip. `from == to` returns clip `to`. A bucket's poses are computed at the next
    /// [`PosePool::update`]; buckets not requested between two updates are released at the second.
    /// Never allocates.
    ///
    /// # Errors
    ///
    /// [`Error::Job`] when `from` or `to` is not a clip of the pool, or `weight` is not finite.
    pub fn request_crossfade(&mut self, from: u16, to: u16, weight: f32) -> Result<CrossfadeRef> {
        let a = self.clip(from, "from")?;
        let b = self.clip(to, "to")?;
        if !weight.is_finite() {
            return Err(Error::job(POOL, "weight", None, "is not finite"));
        }
        let to_ref = CrossfadeRef {
            track: to,
            time_scale: 1.0,
            weight: 1.0,
        };
        if from == to {
            return Ok(to_ref);
        }
        let from_ref = CrossfadeRef {
            track: from,
            time_scale: a.duration() / b.duration(),
            weight: 0.0,
        };
        let top = self.levels - 1;
        let level = (weight.clamp(0.0, 1.0) * top as f32).round() as usize;
        if let Some(i) = self.find(from, to, level) {
            return Ok(self.use_bucket(i));
        }
        if let Some(i) = self.free.pop() {
            let i = usize::from(i);
            self.buckets[i] = Bucket {
                from,
                to,
                level: level as u16,
                active: true,
                requested: true,
            };
            self.insert(i);
            self.set_track(self.clips.len() + i);
            return Ok(self.use_bucket(i));
        }
        for d in 1..=top {
            let near = [level.checked_sub(d), Some(level + d).filter(|&l| l <= top)];
            for l in near.into_iter().flatten() {
                if let Some(i) = self.find(from, to, l) {
                    return Ok(self.use_bucket(i));
                }
            }
        }
        Ok(if weight < 0.5 { from_ref } else { to_ref })
    }

    /// Clip `clip`, or an error naming `field`.
    fn clip(&self, clip: u16, field: &'static str) -> Result<&'a RuntimeClip> {
        let c = usize::from(clip);
        self.clips
            .get(c)
            .copied()
            .ok_or(Error::job(POOL, field, Some(c), "is not a clip of the pool"))
    }

    /// Marks bucket `i` requested and returns its ref.
    fn use_bucket(&mut self, i: usize) -> CrossfadeRef {
        let b = &mut self.buckets[i];
        b.requested = true;
        let weight = f32::from(b.level) / (self.levels - 1) as f32;
        CrossfadeRef {
            track: (self.clips.len() + i) as u16,
            time_scale: 1.0,
            weight,
        }
    }

    /// The slots bucket `i` uses while it crossfades to clip `to`.
    fn bucket_slots(&self, i: usize, to: usize) -> ClipSlots {
        ClipSlots {
            first_slot: (self.clip_slot_count + i * self.bucket_stride) as u32,
            slot_count: self.clip_table[to].slot_count,
        }
    }

    /// The lookup table position to start probing at for a key.
    fn hash(&self, from: u16, to: u16, level: usize) -> usize {
        let h = u32::from(from).wrapping_mul(0x9E37_79B1)
            ^ u32::from(to).wrapping_mul(0x85EB_CA77)
            ^ (level as u32).wrapping_mul(0xC2B2_AE3D);
        (h ^ (h >> 15)) as usize & (self.lookup.len() - 1)
    }

    /// The active bucket of (from, to, level), if any.
    fn find(&self, from: u16, to: u16, level: usize) -> Option<usize> {
        let mask = self.lookup.len() - 1;
        let mut p = self.hash(from, to, level);
        // The table has at least twice as many entries as buckets, so probing always reaches an empty entry.
        loop {
            let e = self.lookup[p];
            if e == EMPTY {
                return None;
            }
            let b = &self.buckets[e as usize];
            if b.from == from && b.to == to && usize::from(b.level) == level {
                return Some(e as usize);
            }
            p = (p + 1) & mask;
        }
    }

    /// Inserts active bucket `i` into the lookup table.
    fn insert(&mut self, i: usize) {
        let b = self.buckets[i];
        let mask = self.lookup.len() - 1;
        let mut p = self.hash(b.from, b.to, usize::from(b.level));
        while self.lookup[p] != EMPTY {
            p = (p + 1) & mask;
        }
        self.lookup[p] = i as u32;
    }

    /// Releases the buckets not requested since the last update, clears the request marks and rebuilds the
    /// lookup table.
    fn release_unrequested(&mut self) {
        for (i, b) in self.buckets.iter_mut().enumerate() {
            if b.active && !b.requested {
                b.active = false;
                self.free.push(i as u16);
            }
            b.requested = false;
        }
        self.lookup.fill(EMPTY);
        for i in 0..self.buckets.len() {
            if self.buckets[i].active {
                self.insert(i);
            }
        }
    }

    /// Sets the mapping constants of track `t` at the current pool time, and its region of the pair table.
    ///
    /// A clip maps its own slots. A bucket maps its own slots while active, the clip it last crossfaded to once
    /// released, and slot 0 when never used.
    fn set_track(&mut self, t: usize) {
        let (region, source) = if t < self.clips.len() {
            (self.clip_table[t].first_slot, Some((t, self.clip_table[t])))
        } else {
            let i = t - self.clips.len();
            let b = self.buckets[i];
            let region = (self.clip_slot_count + i * self.bucket_stride) as u32;
            if b.to == u16::MAX {
                (region, None)
            } else {
                let to = usize::from(b.to);
                let slots = if b.active {
                    self.bucket_slots(i, to)
                } else {
                    self.clip_table[to]
                };
                (region, Some((to, slots)))
            }
        };
        self.tracks[t] = match source {
            None => TrackMap::NULL,
            Some((c, slots)) => {
                let clip = self.clips[c];
                let start = region as usize + 1;
                let (first, k) = (slots.first_slot, slots.slot_count);
                let region = &mut self.pairs[start..start + k as usize];
                for (a, pair) in (0..k).zip(region.iter_mut()) {
                    let b = if a + 1 < k {
                        a + 1
                    } else if clip.is_looping() {
                        0
                    } else {
                        a
                    };
                    *pair = (first + a) | (first + b) << 16;
                }
                track_map(clip, slots, self.time, start as u32)
            }
        };
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        {
            self.rows[t] = match source {
                None => simd::TrackRows::new(&TrackMap::NULL, 0, 1, false),
                Some((c, slots)) => simd::TrackRows::new(
                    &self.tracks[t],
                    slots.first_slot,
                    slots.slot_count,
                    self.clips[c].is_looping(),
                ),
            };
        }
    }

    /// Samples every clip slot and converts it to model space.
    fn update_clip_slots(&mut self) -> Result<()> {
        let (soa, joints, time) = (self.soa_count, self.joint_count, self.time);
        let n = self.clip_slot_count;
        let (skeleton, clips, table, slot_clip) = (self.skeleton, &self.clips, &self.clip_table, &self.slot_clip);
        let work = |(slot, (local, model)): (usize, (&mut [SoaTransform], &mut [Affine3A]))| -> Result<()> {
            let c = usize::from(slot_clip[slot]);
            let slots = table[c];
            let clip = clips[c];
            let index = slot - slots.first_slot as usize;
            let t = slot_time(clip, slots.slot_count as usize, index, time);
            SamplingJob {
                clip,
                time: t,
                output: local,
            }
            .run()?;
            LocalToModelJob {
                skeleton,
                input: local,
                output: model,
                from: None,
                root: None,
            }
            .run()
        };
        let local = &mut self.local[..n * soa];
        let model = &mut self.model[..n * joints];
        if self.parallel {
            local
                .par_chunks_mut(soa)
                .zip(model.par_chunks_mut(joints))
                .enumerate()
                .try_for_each(work)
        } else {
            local
                .chunks_mut(soa)
                .zip(model.chunks_mut(joints))
                .enumerate()
                .try_for_each(work)
        }
    }

    /// Blends and converts every slot of the active crossfade buckets. The clip slots must be up to date.
    fn update_bucket_slots(&mut self) -> Result<()> {
        let (soa, joints, time, stride) = (self.soa_count, self.joint_count, self.time, self.bucket_stride);
        let n = self.clip_slot_count;
        let (skeleton, clips, table, buckets, rest, levels) = (
            self.skeleton,
            &self.clips,
            &self.clip_table,
            &self.buckets,
            &self.rest,
            self.levels,
        );
        let (clip_local, bucket_local) = self.local.split_at_mut(n * soa);
        let clip_local: &[SoaTransform] = clip_local;
        let bucket_model = &mut self.model[n * joints..];
        type Item<'s> = (
            usize,
            ((&'s mut [SoaTransform], &'s mut [SoaTransform]), &'s mut [Affine3A]),
        );
        let work = |(g, ((local, scratch), model)): Item<'_>| -> Result<()> {
            let b = buckets[g / stride];
            let s = g % stride;
            let to = usize::from(b.to);
            if !b.active || s >= table[to].slot_count as usize {
                return Ok(());
            }
            let (clip_a, clip_b) = (clips[usize::from(b.from)], clips[to]);
            let k = table[to].slot_count as usize;
            // The normalized phase of the target clip's slot `s`, where the source clip is sampled too.
            let phase = slot_time(clip_b, k, s, time) / clip_b.duration();
            SamplingJob {
                clip: clip_a,
                time: phase * clip_a.duration(),
                output: scratch,
            }
            .run()?;
            let b_slot = table[to].first_slot as usize + s;
            let w = f32::from(b.level) / (levels - 1) as f32;
            let layers = [
                BlendLayer {
                    transform: scratch,
                    weight: 1.0 - w,
                    joint_weights: None,
                },
                BlendLayer {
                    transform: &clip_local[b_slot * soa..(b_slot + 1) * soa],
                    weight: w,
                    joint_weights: None,
                },
            ];
            BlendingJob {
                layers: &layers,
                additive: &[],
                rest_pose: rest,
                threshold: BLEND_THRESHOLD,
                output: local,
            }
            .run()?;
            LocalToModelJob {
                skeleton,
                input: local,
                output: model,
                from: None,
                root: None,
            }
            .run()
        };
        if self.parallel {
            bucket_local
                .par_chunks_mut(soa)
                .zip(self.scratch.par_chunks_mut(soa))
                .zip(bucket_model.par_chunks_mut(joints))
                .enumerate()
                .try_for_each(work)
        } else {
            bucket_local
                .chunks_mut(soa)
                .zip(self.scratch.chunks_mut(soa))
                .zip(bucket_model.chunks_mut(joints))
                .enumerate()
                .try_for_each(work)
        }
    }
}

/// The job name used in the errors of [`PosePool::map_instances`] and its scalar twin.
const MAP_JOB: &str = "PosePool::map_instances";

/// The length checks of [`PosePool::map_instances`].
fn check_lengths(tracks: &[u16], times: &[f32], out: &[SlotRef]) -> Result<()> {
    if times.len() != tracks.len() {
        return Err(Error::job(
            MAP_JOB,
            "times",
            None,
            "does not have one entry per instance of clips",
        ));
    }
    if out.len() < tracks.len() {
        return Err(Error::job(MAP_JOB, "out", None, "is shorter than clips"));
    }
    Ok(())
}

/// What [`PosePool::map_instances`] reports about its instances: the largest track, and whether a time is not
/// finite.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Scan {
    /// The largest track.
    max_track: u16,
    /// A time is infinite or NaN.
    non_finite: bool,
}

impl Scan {
    /// The scan of `tracks` and `times`, in a loop that vectorizes.
    fn of(tracks: &[u16], times: &[f32]) -> Self {
        let mut max_track = 0u16;
        let mut non_finite = false;
        for (&track, &time) in tracks.iter().zip(times) {
            max_track = max_track.max(track);
            non_finite |= time.to_bits() & 0x7F80_0000 == 0x7F80_0000;
        }
        Self { max_track, non_finite }
    }

    /// The scan of both parts.
    fn merge(self, other: Self) -> Self {
        Self {
            max_track: self.max_track.max(other.max_track),
            non_finite: self.non_finite || other.non_finite,
        }
    }
}

/// The clip time slot `index` of `k` holds at pool time `time`.
fn slot_time(clip: &RuntimeClip, k: usize, index: usize, time: f32) -> f32 {
    let d = clip.duration();
    if clip.is_looping() {
        (time + index as f32 * d / k as f32).rem_euclid(d)
    } else {
        index as f32 * d / (k - 1) as f32
    }
}

/// The mapping constants of a track showing `clip` in `slots` at pool time `time`, whose slot pairs start at index
/// `pairs` of the pair table.
fn track_map(clip: &RuntimeClip, slots: ClipSlots, time: f32, pairs: u32) -> TrackMap {
    let k = slots.slot_count;
    let d = clip.duration();
    if clip.is_looping() {
        // Rounded inwards, so that |p * scale| stays below 2^51.
        let span = (f64::from(d) * LOOP_PERIODS * 0.999) as f32;
        TrackMap {
            origin: time,
            lo: -span,
            hi: span,
            mul: k,
            scale: TWO_POW_32 / f64::from(d),
            pairs,
        }
    } else {
        let m = k.next_power_of_two();
        // Exact: M divides 2^32. `D * scale` rounds to exactly `end` because the error is far below one half.
        let end = f64::from(k - 1) * (TWO_POW_32 / f64::from(m));
        TrackMap {
            origin: 0.0,
            lo: 0.0,
            hi: d,
            mul: m,
            scale: end / f64::from(d),
            pairs,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::f32::consts::TAU;

    use glam::{Mat4, Quat, Vec3, Vec4};

    use super::*;
    use crate::{
        Channel, Clip, ErrorBudget, Interpolation, Looping, NO_PARENT, Property, RuntimeClipOptions, Transform,
    };

    /// A chain of `n` joints, each one unit above its parent.
    fn chain(n: usize) -> Skeleton {
        let rest = Transform {
            translation: Vec3::Y,
            ..Transform::IDENTITY
        };
        let parents = (0..n).map(|i| if i == 0 { NO_PARENT } else { i as u16 - 1 }).collect();
        Skeleton::from_parents("chain", parents, vec![rest; n]).expect("a valid chain")
    }

    /// A clip that swings every joint of `skeleton` about z with a phase `offset`, and bobs the root.
    fn swing(skeleton: &Skeleton, name: &str, duration: f32, offset: f32, looping: Looping) -> RuntimeClip {
        let keys = 17;
        let times: Vec<f32> = (0..keys).map(|k| k as f32 * duration / (keys - 1) as f32).collect();
        let mut channels: Vec<Channel> = (0..skeleton.joint_count())
            .map(|j| Channel {
                joint: j as u16,
                property: Property::Rotation,
                interpolation: Interpolation::Linear,
                times: times.clone(),
                values: times
                    .iter()
                    .map(|t| {
                        let angle = 0.4 * (TAU * t / duration + offset + j as f32).sin();
                        Vec4::from(Quat::from_rotation_z(angle))
                    })
                    .collect(),
            })
            .collect();
        channels.push(Channel {
            joint: 0,
            property: Property::Translation,
            interpolation: Interpolation::Linear,
            times: times.clone(),
            values: times
                .iter()
                .map(|t| Vec4::new(0.0, 0.1 * (TAU * t / duration).cos(), 0.0, 0.0))
                .collect(),
        });
        let clip = Clip {
            name: name.into(),
            animation: 0,
            skeleton: 0,
            duration,
            channels,
        };
        // The keys are piecewise linear, so resampling them needs a budget above the default 0.1 mm.
        let options = RuntimeClipOptions {
            looping,
            budget: ErrorBudget {
                translation: 1e-2,
                rotation: 1e-2,
            },
            ..RuntimeClipOptions::default()
        };
        RuntimeClip::build(&clip, skeleton, &options).expect("the test clip builds")
    }

    fn max_diff(a: &[Affine3A], b: &[Affine3A]) -> f32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| {
                (Mat4::from(*x) - Mat4::from(*y))
                    .abs()
                    .to_cols_array()
                    .into_iter()
                    .fold(0.0, f32::max)
            })
            .fold(0.0, f32::max)
    }

    #[test]
    fn empty_pool_update_and_mapping_are_no_ops() {
        let skeleton = chain(5);
        let mut pool = PosePool::new(&skeleton, &[], &PosePoolOptions::default()).expect("an empty pool is valid");
        pool.update(1.5).expect("updates");
        pool.update(-3.0).expect("updates");
        assert_eq!(pool.slot_count(), 0);
        assert!(pool.palettes().is_empty());
        pool.map_instances(&[], &[], &mut []).expect("zero instances");
        assert!(pool.map(pool.track_count() as u16, 0.0).is_err());
        assert!(pool.request_crossfade(0, 1, 0.5).is_err());

        let clip = swing(&skeleton, "idle", 2.0, 0.0, Looping::Yes);
        let mut pool = PosePool::new(
            &skeleton,
            &[PoolClip { clip: &clip, slots: 4 }],
            &PosePoolOptions::default(),
        )
        .expect("valid");
        pool.update(0.25).expect("updates");
        pool.map_instances(&[], &[], &mut []).expect("zero instances");
        assert!(pool.update(f32::NAN).is_err());
        assert_eq!(pool.time(), 0.25, "a failed update leaves the pool unchanged");
    }

    #[test]
    fn constructor_validity() {
        let skeleton = chain(5);
        let other = chain(9);
        let walk = swing(&skeleton, "walk", 1.1, 0.0, Looping::Yes);
        let once = swing(&skeleton, "wave", 2.0, 0.0, Looping::No);
        let foreign = swing(&other, "foreign", 1.0, 0.0, Looping::Yes);
        let ok = PosePoolOptions::default();
        let clip = |clip, slots| PoolClip { clip, slots };
        #[rustfmt::skip]
        let rows: [(&str, Vec<PoolClip<'_>>, PosePoolOptions, Option<&str>); 9] = [
            ("valid", vec![clip(&walk, 8), clip(&once, 2)], ok, None),
            ("one looping slot", vec![clip(&walk, 8), clip(&walk, 1)], ok, Some("pose pool clip 1 ('walk')")),
            ("zero slots", vec![clip(&once, 0)], ok, Some("pose pool clip 0 ('wave')")),
            ("other skeleton", vec![clip(&foreign, 4)], ok, Some("'foreign'")),
            ("too many slots", vec![clip(&walk, MAX_POOL_SLOTS + 1)], ok, Some("'walk'")),
            ("too many slots in total", vec![clip(&walk, 40_000), clip(&once, 40_000)], ok, Some("'wave'")),
            ("one level", vec![clip(&walk, 4)], PosePoolOptions { crossfade_levels: 1, ..ok }, Some("crossfade_levels")),
            ("no buckets", vec![clip(&walk, 4)], PosePoolOptions { max_crossfade_buckets: 0, ..ok }, Some("max_crossfade_buckets")),
            ("buckets past the slot limit", vec![clip(&walk, 1000)], PosePoolOptions { max_crossfade_buckets: 66, ..ok }, Some("max_crossfade_buckets")),
        ];
        for (name, clips, options, expected) in rows {
            match (PosePool::new(&skeleton, &clips, &options), expected) {
                (Ok(_), None) => {}
                (Err(e), Some(needle)) => assert!(e.to_string().contains(needle), "{name}: {e} lacks {needle}"),
                (Ok(_), Some(_)) => panic!("{name}: accepted"),
                (Err(e), None) => panic!("{name}: rejected: {e}"),
            }
        }
    }

    #[test]
    fn crossfade_endpoints_equal_the_endpoint_clips() {
        let skeleton = chain(6);
        // Equal durations and slot counts put the two clips' slots at the same phases.
        let a = swing(&skeleton, "a", 1.2, 0.0, Looping::Yes);
        let b = swing(&skeleton, "b", 1.2, 2.0, Looping::Yes);
        let clips = [PoolClip { clip: &a, slots: 6 }, PoolClip { clip: &b, slots: 6 }];
        let mut pool = PosePool::new(&skeleton, &clips, &PosePoolOptions::default()).expect("valid");
        for frame in 0..3 {
            let time = 0.37 * frame as f32;
            let w0 = pool.request_crossfade(0, 1, 0.01).expect("requests");
            let w1 = pool.request_crossfade(0, 1, 0.99).expect("requests");
            assert_eq!((w0.weight, w1.weight), (0.0, 1.0));
            pool.update(time).expect("updates");
            let (s0, s1) = (
                pool.track_slots(w0.track).expect("active"),
                pool.track_slots(w1.track).expect("active"),
            );
            for s in 0..6 {
                let slot = |c: ClipSlots| c.first_slot as usize + s;
                let bucket0 = pool.slot_model(slot(s0)).expect("slot");
                let bucket1 = pool.slot_model(slot(s1)).expect("slot");
                let clip_a = pool.slot_model(slot(pool.clip_table()[0])).expect("slot");
                let clip_b = pool.slot_model(slot(pool.clip_table()[1])).expect("slot");
                assert!(
                    max_diff(bucket0, clip_a) < 1e-4,
                    "frame {frame} slot {s}: weight 0 is not clip a"
                );
                assert!(
                    max_diff(bucket1, clip_b) < 1e-4,
                    "frame {frame} slot {s}: weight 1 is not clip b"
                );
            }
            // An instance in the bucket maps like an instance of the target clip, shifted to the bucket's slots.
            let t = 0.8 + time;
            let in_bucket = pool.map_crossfade(&w1, t).expect("maps");
            let in_b = pool.map(1, t).expect("maps");
            let shift = s1.first_slot - pool.clip_table()[1].first_slot;
            assert_eq!(u32::from(in_bucket.slot_a), u32::from(in_b.slot_a) + shift);
            assert_eq!(in_bucket.fraction, in_b.fraction);
        }
    }

    #[test]
    fn bucket_cap_reuses_the_nearest_level_then_snaps() {
        let skeleton = chain(4);
        let a = swing(&skeleton, "a", 1.0, 0.0, Looping::Yes);
        let b = swing(&skeleton, "b", 2.0, 1.0, Looping::Yes);
        let clips = [PoolClip { clip: &a, slots: 4 }, PoolClip { clip: &b, slots: 8 }];
        let options = PosePoolOptions {
            crossfade_levels: 5,
            max_crossfade_buckets: 2,
            parallel: false,
        };
        let mut pool = PosePool::new(&skeleton, &clips, &options).expect("valid");
        assert_eq!(pool.track_count(), 4);
        let low = pool.request_crossfade(0, 1, 0.2).expect("requests");
        assert_eq!((low.track, low.weight), (2, 0.25));
        assert_eq!(
            pool.request_crossfade(0, 1, 0.3).expect("requests"),
            low,
            "the same level shares the bucket"
        );
        let high = pool.request_crossfade(0, 1, 0.9).expect("requests");
        assert_eq!((high.track, high.weight), (3, 1.0));
        assert_eq!(pool.active_crossfade_count(), 2);
        // At the cap: the nearest existing level of the pair.
        assert_eq!(pool.request_crossfade(0, 1, 0.6).expect("requests"), low);
        assert_eq!(pool.request_crossfade(0, 1, 0.7).expect("requests"), high);
        // At the cap with no bucket of the pair: snap to the nearer endpoint clip.
        let snap_from = pool.request_crossfade(1, 0, 0.3).expect("requests");
        assert_eq!(
            snap_from,
            CrossfadeRef {
                track: 1,
                time_scale: 2.0,
                weight: 0.0
            }
        );
        let snap_to = pool.request_crossfade(1, 0, 0.7).expect("requests");
        assert_eq!(
            snap_to,
            CrossfadeRef {
                track: 0,
                time_scale: 1.0,
                weight: 1.0
            }
        );
        assert_eq!(pool.request_crossfade(1, 1, 0.5).expect("requests").track, 1);
        assert!(pool.request_crossfade(0, 2, 0.5).is_err());
        assert!(pool.request_crossfade(0, 1, f32::NAN).is_err());
        pool.update(0.0).expect("updates");
        assert_eq!(pool.active_crossfade_count(), 2);
        // Only the high bucket is requested for the next frame; the low one is released at the update.
        pool.request_crossfade(0, 1, 1.0).expect("requests");
        pool.update(0.1).expect("updates");
        assert_eq!(pool.active_crossfade_count(), 1);
        assert_eq!(pool.track_slots(2), None);
        // A released bucket maps as the clip it crossfaded to.
        assert_eq!(pool.map(2, 0.3).expect("maps"), pool.map(1, 0.3).expect("maps"));
        let fresh = pool.request_crossfade(1, 0, 0.5).expect("requests");
        assert_eq!(fresh.track, 2, "the released bucket is free again");
        pool.update(0.2).expect("updates");
        pool.update(0.3).expect("updates");
        assert_eq!(pool.active_crossfade_count(), 0);
    }

    #[test]
    fn non_looping_slots_are_fixed_and_mapping_clamps() {
        let skeleton = chain(3);
        let wave = swing(&skeleton, "wave", 2.0, 0.0, Looping::No);
        let mut pool = PosePool::new(
            &skeleton,
            &[PoolClip { clip: &wave, slots: 5 }],
            &PosePoolOptions::default(),
        )
        .expect("valid");
        pool.update(7.3).expect("updates");
        for s in 0..5 {
            assert_eq!(pool.clip_slot_time(0, s).expect("in range"), s as f32 * 0.5);
        }
        let r = pool.map(0, 1.25).expect("maps");
        assert_eq!((r.slot_a, r.slot_b, r.fraction), (2, 3, 0.5));
        assert_eq!(
            pool.map(0, -1.0).expect("maps"),
            SlotRef {
                slot_a: 0,
                slot_b: 1,
                fraction: 0.0
            }
        );
        assert_eq!(
            pool.map(0, 9.0).expect("maps"),
            SlotRef {
                slot_a: 4,
                slot_b: 4,
                fraction: 0.0
            }
        );
        let mut out = [SlotRef::default(); 3];
        pool.map_instances(&[0, 0, 0], &[1.25, -1.0, 9.0], &mut out)
            .expect("maps");
        assert_eq!(out[0], r);
        assert_eq!(
            out[2],
            SlotRef {
                slot_a: 4,
                slot_b: 4,
                fraction: 0.0
            }
        );
        assert!(pool.map_instances(&[0, 1000], &[0.0, 0.0], &mut out).is_err());
        assert!(pool.map_instances(&[0], &[f32::INFINITY], &mut out).is_err());
        assert!(pool.map_instances(&[0], &[0.0, 1.0], &mut out).is_err());
    }

    #[test]
    fn batch_mapping_matches_the_reference_up_to_1e4_seconds() {
        let skeleton = chain(3);
        let walk = swing(&skeleton, "walk", 1.1, 0.0, Looping::Yes);
        let run = swing(&skeleton, "run", 0.7, 1.0, Looping::Yes);
        let wave = swing(&skeleton, "wave", 2.0, 0.0, Looping::No);
        let clips = [
            PoolClip { clip: &walk, slots: 7 },
            PoolClip { clip: &run, slots: 32 },
            PoolClip { clip: &wave, slots: 5 },
            PoolClip { clip: &wave, slots: 2 },
            PoolClip {
                clip: &walk,
                slots: 300,
            },
        ];
        let mut pool = PosePool::new(&skeleton, &clips, &PosePoolOptions::default()).expect("valid");
        for pool_time in [0.0, 3.7, -812.25, 9_000.5] {
            pool.update(pool_time).expect("updates");
            let mut tracks = Vec::new();
            let mut times = Vec::new();
            for (track, c) in clips.iter().enumerate() {
                let d = c.clip.duration();
                // Slot boundaries, clip ends, and scattered times up to 1e4 s.
                for i in 0..400 {
                    let boundary = pool_time + i as f32 * d / c.slots as f32;
                    for t in [boundary, -boundary, i as f32 * 25.1 - 5_000.0, d, 0.0, d * (1.0 - 1e-7)] {
                        tracks.push(track as u16);
                        times.push(t);
                    }
                }
            }
            let mut out = vec![SlotRef::default(); tracks.len()];
            pool.map_instances(&tracks, &times, &mut out).expect("maps");
            for ((&track, &time), &batch) in tracks.iter().zip(&times).zip(&out) {
                let single = pool.map(track, time).expect("maps");
                assert!((0.0..1.0).contains(&batch.fraction), "{batch:?}");
                let same = batch.slot_a == single.slot_a
                    && batch.slot_b == single.slot_b
                    && (batch.fraction - single.fraction).abs() < 1e-4;
                let k = clips[usize::from(track)].slots as u16;
                let first = pool.clip_table()[usize::from(track)].first_slot as u16;
                let next = |s: u16| first + (s - first + 1) % k;
                let neighbour = (next(batch.slot_a) == single.slot_a
                    && batch.fraction > 1.0 - 1e-4
                    && single.fraction < 1e-4)
                    || (next(single.slot_a) == batch.slot_a && single.fraction > 1.0 - 1e-4 && batch.fraction < 1e-4);
                assert!(
                    same || neighbour,
                    "track {track} at {time} (pool {pool_time}): batch {batch:?}, single {single:?}"
                );
            }
        }
        // The end of a non-looping clip is exactly its last slot.
        let mut out = [SlotRef::default(); 2];
        pool.map_instances(&[2, 3], &[2.0, 2.0], &mut out).expect("maps");
        let last = |t: usize| (pool.clip_table()[t].first_slot + pool.clip_table()[t].slot_count - 1) as u16;
        assert_eq!(
            out[0],
            SlotRef {
                slot_a: last(2),
                slot_b: last(2),
                fraction: 0.0
            }
        );
        assert_eq!(
            out[1],
            SlotRef {
                slot_a: last(3),
                slot_b: last(3),
                fraction: 0.0
            }
        );
        // Out-of-range tracks past the padded table, and NaN times, are reported.
        let bad = pool.track_count() as u16;
        for track in [bad, u16::MAX] {
            assert!(pool.map_instances(&[0, track], &[0.0, 0.0], &mut out).is_err());
        }
        assert!(pool.map_instances(&[0, 1], &[0.0, f32::NAN], &mut out).is_err());
    }

    #[test]
    fn fraction_unorm16_rounds() {
        assert_eq!(
            SlotRef {
                slot_a: 0,
                slot_b: 1,
                fraction: 0.0
            }
            .fraction_unorm16(),
            0
        );
        assert_eq!(
            SlotRef {
                slot_a: 0,
                slot_b: 1,
                fraction: 0.5
            }
            .fraction_unorm16(),
            32768
        );
        assert_eq!(
            SlotRef {
                slot_a: 0,
                slot_b: 1,
                fraction: 0.99999
            }
            .fraction_unorm16(),
            65534
        );
    }

    /// Both SIMD kernels, called directly (the CPU picks one in `map_instances`), against the scalar kernel: the
    /// same bits and the same scan, for every track (past the padded table too) and for time bits of every kind.
    #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
    #[test]
    fn simd_kernels_match_the_scalar_kernel() {
        let skeleton = chain(2);
        let clips = [
            swing(&skeleton, "walk", 1.1, 0.0, Looping::Yes),
            swing(&skeleton, "run", 0.13, 1.0, Looping::Yes),
            swing(&skeleton, "wave", 2.0, 0.0, Looping::No),
            swing(&skeleton, "blink", 17.5, 0.0, Looping::No),
        ];
        let pool_clips = [
            PoolClip {
                clip: &clips[0],
                slots: 7,
            },
            PoolClip {
                clip: &clips[1],
                slots: 300,
            },
            PoolClip {
                clip: &clips[2],
                slots: 2,
            },
            PoolClip {
                clip: &clips[3],
                slots: 33,
            },
        ];
        let options = PosePoolOptions {
            max_crossfade_buckets: 5,
            parallel: false,
            ..PosePoolOptions::default()
        };
        let mut pool = PosePool::new(&skeleton, &pool_clips, &options).expect("valid");
        // A xorshift generator: tracks over the whole u16 range, times from random bits and from scaled integers.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let special = [
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN,
            1e-40,
        ];
        for (frame, time) in [0.0, 3.7, -812.25, 9_000.5, 1.0e6].into_iter().enumerate() {
            // Buckets in every state: requested, released (mapping their last clip) and never used.
            if frame < 3 {
                pool.request_crossfade(0, 1 + frame as u16, 0.3).expect("requests");
            }
            pool.update(time).expect("updates");
            let n = 2003;
            let tracks: Vec<u16> = (0..n)
                .map(|_| {
                    let r = next();
                    match r % 8 {
                        0 => r as u16 >> 4,
                        1 => (r >> 8) as u16 % 16,
                        _ => (r >> 8) as u16 % pool.track_count() as u16,
                    }
                })
                .collect();
            let times: Vec<f32> = (0..n)
                .map(|i| {
                    let r = next();
                    match r % 6 {
                        0 => f32::from_bits((r >> 16) as u32),
                        1 => special[(r >> 8) as usize % special.len()],
                        2 => time + ((r >> 8) % 4000) as f32 * 0.0275 - 50.0,
                        _ => (i as f32 * 0.618_034).fract() * 40.0 - 20.0 + (r >> 60) as f32 * 1e3,
                    }
                })
                .collect();
            let mut plain = vec![SlotRef::default(); n];
            pool.map_scalar(&tracks, &times, &mut plain);
            let mut kernels: Vec<(&str, super::simd::Kernel)> = vec![("sse2", |rows, tracks, times, out| {
                super::simd::map_instances_sse2(rows, tracks, times, out)
            })];
            if std::arch::is_x86_feature_detected!("avx2") {
                kernels.push(("avx2", |rows, tracks, times, out| {
                    // SAFETY: the CPU has AVX2, checked just above.
                    #[allow(unsafe_code, reason = "calling the AVX2 kernel after detecting AVX2")]
                    unsafe {
                        super::simd::map_instances_avx2(rows, tracks, times, out)
                    }
                }));
            }
            for (name, kernel) in kernels {
                let mut fast = vec![SlotRef::default(); n];
                let (done, scan) = kernel(&pool.rows, &tracks, &times, &mut fast);
                assert!(done > n - 8 && done <= n, "{name}: {done} of {n}");
                assert_eq!(scan, Scan::of(&tracks[..done], &times[..done]), "{name}");
                for i in 0..done {
                    let (f, p) = (fast[i], plain[i]);
                    assert_eq!(
                        (f.slot_a, f.slot_b, f.fraction.to_bits()),
                        (p.slot_a, p.slot_b, p.fraction.to_bits()),
                        "{name}, frame {frame}, instance {i}: track {}, time {}",
                        tracks[i],
                        times[i]
                    );
                }
            }
        }
    }
}
