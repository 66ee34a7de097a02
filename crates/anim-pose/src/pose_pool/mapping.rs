//! Instance mapping of a [`PosePool`]: [`SlotRef`], the plain reference [`PosePool::map`], and the fixed-point
//! batch mapping [`PosePool::map_instances`] with its per-track constants ([`TrackMap`]), pair table and scalar
//! kernel. The SIMD kernels live in the sibling module `simd`.

use super::{ClipSlots, POOL, PosePool};
use crate::{Error, Result, RuntimeClip};

#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
use super::simd;

/// An instance's place in the pool: two neighbouring slots and the fraction between them.
///
/// The instance's pose is `lerp(palette(slot_a), palette(slot_b), fraction)`, where `palette(s)` is the
/// `joint_count` matrices of slot `s` in [`PosePool::palettes`].
/// Slots are global slot indices; they fit in `u16` because a pool has at most [`MAX_POOL_SLOTS`] slots, which is
/// the GPU instance record's layout.
/// The struct is `repr(C)`, 8 bytes: `slot_a`, `slot_b`, `fraction`.
///
/// [`MAX_POOL_SLOTS`]: super::MAX_POOL_SLOTS
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
pub(super) struct TrackMap {
    pub(super) origin: f32,
    pub(super) lo: f32,
    pub(super) hi: f32,
    pub(super) mul: u32,
    pub(super) scale: f64,
    /// The index in the pair table of the slot pair of `a = 0`. Index 0 holds the pair `(0, 0)`.
    pub(super) pairs: u32,
}

impl TrackMap {
    /// The entry that maps every time to slot 0 (never-used buckets, and the padding past the last track).
    pub(super) const NULL: Self = Self {
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
pub(super) const ROUND_MAGIC_F64: f64 = 6_755_399_441_055_744.0;

/// 2^-24.
pub(super) const TWO_POW_M24: f32 = 1.0 / 16_777_216.0;

/// 2^32.
const TWO_POW_32: f64 = 4_294_967_296.0;

/// How many periods from the pool time a looping track maps exactly: `2^19` periods keep `|p * scale|` below
/// 2^51. Past it, f32 times resolve less than a 32nd of a period anyway.
const LOOP_PERIODS: f64 = 524_288.0;

impl PosePool {
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
            (self.clip_table[t], &self.clips[t])
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
            (slots, &self.clips[to])
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
    /// `PosePool::map_instances_scalar`.
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
    #[doc(hidden)]
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
    pub(super) fn map_scalar(&self, tracks: &[u16], times: &[f32], out: &mut [SlotRef]) {
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

    /// Sets the mapping constants of track `t` at the current pool time, and its region of the pair table.
    ///
    /// A clip maps its own slots. A bucket maps its own slots while active, the clip it last crossfaded to once
    /// released, and slot 0 when never used.
    pub(super) fn set_track(&mut self, t: usize) {
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
                let clip = &self.clips[c];
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
pub(super) struct Scan {
    /// The largest track.
    pub(super) max_track: u16,
    /// A time is infinite or NaN.
    pub(super) non_finite: bool,
}

impl Scan {
    /// The scan of `tracks` and `times`, in a loop that vectorizes.
    pub(super) fn of(tracks: &[u16], times: &[f32]) -> Self {
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
