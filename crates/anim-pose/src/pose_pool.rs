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
//!
//! Instance mapping lives in `mapping` (its SIMD kernels in `simd`), the crossfade buckets in `crossfade`; this file
//! holds the pool's types, its construction and the slot updates.

use glam::Affine3A;
use rayon::prelude::*;

use crate::{
    Error, LocalToModelJob, Result, RuntimeClip, SamplingJob, Skeleton, SoaTransform, num_soa_joints, pack_soa,
};

mod crossfade;
mod mapping;
#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
#[allow(
    unsafe_code,
    reason = "SSE2 and AVX2 intrinsics, which are unsafe to call before Rust 1.87; stores through a pointer"
)]
mod simd;
#[cfg(test)]
mod tests;

pub use crossfade::CrossfadeRef;
pub use mapping::SlotRef;

use crossfade::{Bucket, EMPTY};
use mapping::TrackMap;

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

/// One clip of a [`PosePool`] and its number of phase slots: an argument of [`PosePool::new`], which keeps a
/// clone of the clip (sharing its tracks), not the borrow.
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
///
/// # Ownership
///
/// The pool borrows nothing: [`PosePool::new`] keeps its own copy of the skeleton (names, parents, rest pose and
/// matrices, small) and a clone of each clip.
/// A clone of a [`RuntimeClip`] shares the clip's tracks with the original through an `Arc`, so the pool does not
/// duplicate the clips' frames in memory, and it may outlive the skeleton and clips it was built from, or be
/// owned by something that owns them too (through an `Arc`, say).
#[derive(Debug)]
pub struct PosePool {
    /// The pool's copy of the skeleton every clip is built for.
    skeleton: Skeleton,
    /// The clips, indexed by clip track: clones that share their tracks with the clips given to `new`.
    clips: Vec<RuntimeClip>,
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

impl PosePool {
    /// Builds a pool for `clips` of `skeleton`, and sizes all its storage.
    ///
    /// The slot poses are valid after the first [`PosePool::update`].
    ///
    /// The pool keeps a copy of `skeleton` and a clone of each clip, which shares the clip's tracks (see
    /// "Ownership" on [`PosePool`]), so neither borrow outlives this call.
    ///
    /// # Errors
    ///
    /// - [`Error::Invalid`] naming the skeleton, when it does not validate;
    /// - [`Error::Invalid`] naming the clip (`pose pool clip 3 ('walk')`), when its joint count differs from the
    ///   skeleton's, its duration is not finite and positive, or it has fewer than 2 slots;
    /// - [`Error::InvalidArgument`] when `options` has fewer than 2 or more than [`MAX_CROSSFADE_LEVELS`] levels,
    ///   no buckets, or when the clip slots and bucket regions together exceed [`MAX_POOL_SLOTS`].
    pub fn new(skeleton: &Skeleton, clips: &[PoolClip<'_>], options: &PosePoolOptions) -> Result<Self> {
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
            skeleton: skeleton.clone(),
            clips: clips.iter().map(|pc| pc.clip.clone()).collect(),
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

    /// The skeleton the pool animates: the pool's copy of the one given to [`PosePool::new`].
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
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
        Ok(slot_time(&self.clips[c], slots.slot_count as usize, index, self.time))
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

    /// Clip `clip`, or an error naming `field`.
    fn clip(&self, clip: u16, field: &'static str) -> Result<&RuntimeClip> {
        let c = usize::from(clip);
        self.clips
            .get(c)
            .ok_or(Error::job(POOL, field, Some(c), "is not a clip of the pool"))
    }

    /// Samples every clip slot and converts it to model space.
    fn update_clip_slots(&mut self) -> Result<()> {
        let (soa, joints, time) = (self.soa_count, self.joint_count, self.time);
        let n = self.clip_slot_count;
        let (skeleton, clips, table, slot_clip) = (&self.skeleton, &self.clips, &self.clip_table, &self.slot_clip);
        let work = |(slot, (local, model)): (usize, (&mut [SoaTransform], &mut [Affine3A]))| -> Result<()> {
            let c = usize::from(slot_clip[slot]);
            let slots = table[c];
            let clip = &clips[c];
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
            &self.skeleton,
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
            let (clip_a, clip_b) = (&clips[usize::from(b.from)], &clips[to]);
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
            crate::crossfade(scratch, &clip_local[b_slot * soa..(b_slot + 1) * soa], w, rest, local)?;
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

/// The clip time slot `index` of `k` holds at pool time `time`.
fn slot_time(clip: &RuntimeClip, k: usize, index: usize, time: f32) -> f32 {
    let d = clip.duration();
    if clip.is_looping() {
        (time + index as f32 * d / k as f32).rem_euclid(d)
    } else {
        index as f32 * d / (k - 1) as f32
    }
}
