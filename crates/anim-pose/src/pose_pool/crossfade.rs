//! Crossfade buckets of a [`PosePool`]: [`CrossfadeRef`], the bucket state, [`PosePool::request_crossfade`] and the
//! open-addressing table from (from clip, to clip, weight level) to bucket, and the release of unrequested buckets
//! at each update.

use super::{ClipSlots, POOL, PosePool, SlotRef};
use crate::{Error, Result};

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

/// The state of one crossfade bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Bucket {
    /// The clip crossfaded from.
    pub(super) from: u16,
    /// The clip crossfaded to, or `u16::MAX` when the bucket was never used.
    pub(super) to: u16,
    /// The weight level.
    pub(super) level: u16,
    /// The bucket holds poses (or will at the next update).
    pub(super) active: bool,
    /// The bucket was requested since the last update.
    pub(super) requested: bool,
}

/// An empty entry of the bucket lookup table.
pub(super) const EMPTY: u32 = u32::MAX;

impl PosePool {
    /// Maps a crossfading instance at `to_time` in the clip it crossfades to: `map(cf.track, cf.time(to_time))`.
    ///
    /// # Errors
    ///
    /// As [`PosePool::map`].
    pub fn map_crossfade(&self, cf: &CrossfadeRef, to_time: f32) -> Result<SlotRef> {
        self.map(cf.track, cf.time(to_time))
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
    pub(super) fn bucket_slots(&self, i: usize, to: usize) -> ClipSlots {
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
    pub(super) fn release_unrequested(&mut self) {
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
}
