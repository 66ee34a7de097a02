//! [`CrowdFrame::step`] on the GPU-driven path ([`FrameSettings::gpu_driven`]): the CPU's frame follows what
//! changed, not how many instances exist. It progresses crossfades, maintains clusters, picks the few unique
//! instances from the clusters near the camera (O(clusters)), updates the pose pool and flattens its clip slots
//! (unless [`FrameSettings::pose_pool`] is off: a renderer with a bake needs no pool), animates the unique instances, and hands over the resident instances whose state changed. It culls nothing and
//! packs no record for the rest: a GPU pass culls them per view and draws them from the resident buffer.
//!
//! [`FrameSettings::gpu_driven`]: super::FrameSettings::gpu_driven
//! [`FrameSettings::pose_pool`]: super::FrameSettings::pose_pool

use std::ops::Range;
use std::time::Instant;

use rayon::prelude::*;

use crowd_cull::Tier;
use skin_pack::{ByteRange, PaletteFormat};

use super::CrowdFrame;
use crate::pack::live_slot_ranges;
use crate::packet::{DRAWS_PER_LOD, PacketDraw, RecordKind};
use crate::record::InstanceRecord;
use crate::resident::{RESIDENT_NO_FADE, ResidentInstance, ResidentOwner};
use crate::{Error, INSTANCE_RECORD_SIZE, Result};
use crowd_cull::FrameCamera;

/// Changed slots per parallel task of the encoding: enough to amortise rayon's scheduling.
const ENCODE_CHUNK: usize = 1024;

impl<F: PaletteFormat> CrowdFrame<F> {
    /// The GPU-driven step; see the module docs and [`CrowdFrame::step`].
    pub(super) fn step_gpu_driven(&mut self, dt: f32, camera: &FrameCamera) -> Result<u64> {
        let cull_camera = self.check_step(dt, camera)?;
        let started = Instant::now();
        self.advance_clock(dt)?;
        let now = self.clock.now();
        let fading = self.progress_fades()?;
        self.store.maintain(self.settings.maintain);
        let t_changes = Instant::now();

        let n = self.pick_uniques(&cull_camera)?;
        let t_cull = Instant::now();

        if self.settings.pose_pool {
            self.pool.update(now)?;
        }
        let t_pool = Instant::now();
        self.animate_uniques(now)?;
        let t_unique = Instant::now();

        let mut packet = self.exchange.begin_write()?;
        let t_wait = Instant::now();
        let frame = packet.frame();
        let group_slots = self.store.group_slot_count(self.group)? as u32;
        // From here until the packet is published a full resend is owed: a step that fails after taking the store's
        // changes makes the next packet carry every slot, so nothing taken is lost.
        let ticket = self.resend.begin(frame);
        self.store.take_changed_slots(self.group, &mut self.changed)?;
        if ticket.full {
            self.changed.clear();
            if group_slots > 0 {
                self.changed.push(0..group_slots);
            }
        } else {
            // A slot that joins or leaves the unique set changes its CPU-drawn bit.
            unique_flips(&self.unique_slots[..n], &self.prev_unique, &mut self.changed);
        }
        self.prev_unique.clear();
        self.prev_unique.extend_from_slice(&self.unique_slots[..n]);
        let s = self.character.binding().skin_joint_count();
        self.flatten_palettes(&mut packet)?;
        let t_flatten = Instant::now();

        // The unique records (LOD 0: they are the nearest), then the resident changes.
        let slots = self.store.group_slots(self.group)?;
        packet.records.clear();
        for (k, &slot) in self.unique_slots[..n].iter().enumerate() {
            let i = slot as usize;
            packet.records.push(InstanceRecord::pack(
                slots.position[i],
                slots.rotation[i],
                slots.scale[i],
                0.0,
                (k * s) as u32,
                slots.custom[i],
            ));
        }
        packet.draws.clear();
        for lod in 0..self.character.lod_count() {
            for (d, kind) in [
                RecordKind::Unique,
                RecordKind::Pooled,
                RecordKind::Pooled,
                RecordKind::Pooled,
                RecordKind::Pooled,
            ]
            .into_iter()
            .enumerate()
            .take(DRAWS_PER_LOD)
            {
                let tier = Tier::from_index(d.saturating_sub(1) as u8);
                let count = if lod == 0 && d == 0 { n as u32 } else { 0 };
                packet.draws.push(PacketDraw {
                    lod: lod as u8,
                    tier,
                    kind,
                    first_instance: 0,
                    instance_count: count,
                });
            }
        }
        let res = &mut packet.resident;
        res.slot_count = group_slots;
        res.handle_capacity = self.store.handle_capacity() as u32;
        res.full = ticket.full;
        res.epoch = ticket.epoch;
        res.since = ticket.since;
        res.frame = frame;
        res.ranges.clear();
        res.ranges.extend_from_slice(&self.changed);
        // Each changed slot's state, in parallel (the reads are scattered over the store's arrays); the unique
        // slots are few and sorted, so each is found by a binary search.
        self.changed_slots.clear();
        for r in &self.changed {
            self.changed_slots.extend(r.clone());
        }
        res.instances.resize(self.changed_slots.len(), ResidentInstance::EMPTY);
        res.owners.resize(self.changed_slots.len(), ResidentOwner::EMPTY);
        let (store, group, unique_slots) = (&self.store, self.group, &self.unique_slots[..n]);
        res.instances
            .par_iter_mut()
            .zip(res.owners.par_iter_mut())
            .zip(self.changed_slots.par_iter())
            .with_min_len(ENCODE_CHUNK)
            .for_each(|((state, owner), &slot)| {
                let unique = unique_slots.binary_search(&slot).is_ok();
                let handle = store.handle_at(group, slot);
                *owner = ResidentOwner::of(handle);
                *state = resident_at(&slots, handle.is_some(), slot, unique, now);
            });
        // Crossfades carry their timing, which only the fade list knows: patch the changed slots of fading instances.
        // `changed_starts[k]` is the index of range k's first state.
        self.changed_starts.clear();
        let mut total = 0u32;
        for r in &self.changed {
            self.changed_starts.push(total);
            total += r.end - r.start;
        }
        for (k, r) in self.changed.iter().enumerate() {
            for slot in r.clone() {
                let at = (self.changed_starts[k] + slot - r.start) as usize;
                if res.instances[at].clips >> 16 == RESIDENT_NO_FADE {
                    continue;
                }
                if let Some(f) = self.store.handle_at(self.group, slot).and_then(|h| self.fade_timing(h)) {
                    res.instances[at].fade_start = f.fade_start;
                    res.instances[at].fade_length = f.duration;
                }
            }
        }
        res.clips.clear();
        for (slots, clip) in self.pool.clip_table().iter().zip(self.character.clips()) {
            res.clips.push(crate::resident::ResidentClip {
                first_slot: slots.first_slot,
                slot_count: slots.slot_count,
                duration: clip.duration(),
                looping: u32::from(clip.is_looping()),
            });
        }
        res.pool_time = self.pool.time();
        res.pose_pool = self.settings.pose_pool;

        let entry = size_of::<F>() * s;
        let dirty = &mut packet.dirty;
        if self.settings.pose_pool {
            live_slot_ranges(&self.pool, entry, &mut dirty.pool_palettes);
        } else {
            dirty.pool_palettes.clear();
        }
        dirty.unique_palettes.clear();
        dirty.records.clear();
        if n > 0 {
            dirty.unique_palettes.push(ByteRange {
                start: 0,
                end: n * entry,
            });
            dirty.records.push(ByteRange {
                start: 0,
                end: n * INSTANCE_RECORD_SIZE,
            });
        }
        let t_pack = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f32() * 1e3;
        packet.camera = *camera;
        let changed = packet.resident.instances.len();
        let dirty_bytes = dirty_of(&packet.dirty.pool_palettes)
            + dirty_of(&packet.dirty.unique_palettes)
            + dirty_of(&packet.dirty.records)
            + (changed * size_of::<ResidentInstance>()) as u64;
        let stats = &mut packet.stats;
        stats.time = now;
        stats.clock = self.clock.seconds();
        stats.instances = self.store.len() as u32;
        stats.visible = n as u32;
        stats.per_tier = [n as u32, 0, 0, 0];
        stats.unique = n as u32;
        stats.unique_overflow = 0;
        stats.fading = fading as u32;
        stats.live_slots = if self.settings.pose_pool {
            self.pool.live_slots().map(|r| r.slot_count).sum()
        } else {
            0
        };
        stats.crossfade_buckets = 0;
        stats.resident_changed = changed as u32;
        stats.dirty_bytes = dirty_bytes;
        stats.stages.changes_ms = ms(started, t_changes);
        stats.stages.cull_ms = ms(t_changes, t_cull);
        stats.stages.pool_ms = ms(t_cull, t_pool);
        stats.stages.unique_ms = ms(t_pool, t_unique);
        stats.stages.wait_ms = ms(t_unique, t_wait);
        stats.stages.flatten_ms = ms(t_wait, t_flatten);
        stats.stages.pack_ms = ms(t_flatten, t_pack);
        let published = packet.publish();
        self.resend.published(published);
        Ok(published)
    }

    /// Picks the frame's unique instances into `unique_slots` (sorted) and returns how many: the largest on screen,
    /// at most `max_unique`, with the unique tier's hysteresis (crowd-cull's band around the first tier threshold
    /// `t`): an instance becomes unique at a screen size of `t * (1 + h)` and stays unique down to `t * (1 - h)`, so
    /// that one at the edge does not switch between the unique and the pooled draws every frame. O(clusters) for the
    /// pick plus O(max_unique log max_unique).
    fn pick_uniques(&mut self, camera: &crowd_cull::CullCamera) -> Result<usize> {
        let max = self.settings.max_unique;
        let (t, h) = (self.settings.tier_thresholds[0], self.settings.hysteresis);
        let (lo, hi) = (t * (1.0 - h), t * (1.0 + h));
        let m = self.store.pick_nearest(
            self.group,
            camera,
            lo,
            &mut self.unique_slots[..max],
            &mut self.pick_scratch[..max],
        )?;
        let mut n = 0;
        for i in 0..m {
            let slot = self.unique_slots[i];
            let was_unique = || {
                self.store.handle_at(self.group, slot).is_some_and(|h| {
                    self.prev_unique_handles
                        .binary_search_by_key(&key(h), |&p| key(p))
                        .is_ok()
                })
            };
            if self.pick_scratch[i] >= hi || was_unique() {
                self.unique_slots[n] = slot;
                n += 1;
            }
        }
        self.unique_slots[..n].sort_unstable();
        self.unique_count = n;
        self.prev_unique_handles.clear();
        for &slot in &self.unique_slots[..n] {
            if let Some(h) = self.store.handle_at(self.group, slot) {
                self.prev_unique_handles.push(h);
            }
        }
        self.prev_unique_handles.sort_unstable_by_key(|&h| key(h));
        Ok(n)
    }
}

/// A handle's sort key: index, then generation.
fn key(h: crowd_cull::Handle) -> (u32, u32) {
    (h.index, h.generation)
}

/// Adds to `changed` (merged) the slots that join (in `now` but not `was`) or leave (in `was` but not `now`) the
/// unique set; both are sorted.
fn unique_flips(now: &[u32], was: &[u32], changed: &mut Vec<Range<u32>>) {
    let before = changed.len();
    for &s in now.iter().filter(|s| was.binary_search(s).is_err()) {
        changed.push(s..s + 1);
    }
    for &s in was.iter().filter(|s| now.binary_search(s).is_err()) {
        changed.push(s..s + 1);
    }
    if changed.len() > before {
        merge_ranges(changed);
    }
}

impl<F: PaletteFormat> CrowdFrame<F> {
    /// The resident state of `slot` as the last GPU-driven step handed it over, computed afresh from the store, the
    /// crossfades and the unique picks: what a renderer's resident buffer holds at that slot once it applied every
    /// packet. O(1); for tests that check a renderer's resident buffer, hidden from the docs.
    ///
    /// # Errors
    ///
    /// [`Error::Slot`] for a slot past the store's slots.
    #[doc(hidden)]
    pub fn resident_state(&self, slot: u32) -> Result<ResidentInstance> {
        let slots = self.store.group_slot_count(self.group)?;
        if slot as usize >= slots {
            return Err(Error::Slot {
                what: "resident_state",
                slot,
                slots,
            });
        }
        let unique = self.prev_unique.binary_search(&slot).is_ok();
        let mut r = resident_of(&self.store, self.group, slot, unique, self.clock.now())?;
        if let Some(f) = self.store.handle_at(self.group, slot).and_then(|h| self.fade_timing(h)) {
            r.fade_start = f.fade_start;
            r.fade_length = f.duration;
        }
        Ok(r)
    }
}

fn dirty_of(ranges: &[ByteRange]) -> u64 {
    ranges.iter().map(|r| r.len() as u64).sum()
}

/// Sorts `ranges` and merges overlapping or adjacent ones, in place.
fn merge_ranges(ranges: &mut Vec<Range<u32>>) {
    ranges.sort_unstable_by_key(|r| r.start);
    let mut w = 0;
    for i in 0..ranges.len() {
        let r = ranges[i].clone();
        if w > 0 && ranges[w - 1].end >= r.start {
            ranges[w - 1].end = ranges[w - 1].end.max(r.end);
        } else {
            ranges[w] = r;
            w += 1;
        }
    }
    ranges.truncate(w);
}

/// The resident state of `slot` of group `g`, as the step packs it: [`ResidentInstance::EMPTY`] when it holds no
/// instance. A crossfade gets the clock as its start and a unit length until the fade list patches its timing.
fn resident_of(
    store: &crowd_cull::InstanceStore,
    g: crowd_cull::GroupId,
    slot: u32,
    unique: bool,
    now: f32,
) -> Result<ResidentInstance> {
    let live = store.handle_at(g, slot).is_some();
    Ok(resident_at(&store.group_slots(g)?, live, slot, unique, now))
}

/// [`resident_of`] from the group's slot arrays, `live` when the slot holds an instance.
#[inline]
fn resident_at(slots: &crowd_cull::GroupSlots<'_>, live: bool, slot: u32, unique: bool, now: f32) -> ResidentInstance {
    if !live {
        return ResidentInstance::EMPTY;
    }
    let i = slot as usize;
    let a = slots.anim[i];
    let fade = a.fade_target.map_or((RESIDENT_NO_FADE, 0.0, 0.0), |t| (t, now, 1.0));
    ResidentInstance::pack(
        slots.position[i],
        slots.rotation[i],
        slots.scale[i],
        a.clip,
        a.start_time,
        a.speed,
        fade,
        slots.custom[i],
    )
    .with_cpu_drawn(unique)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot range as a `(start, end)` pair.
    type Pair = (u32, u32);

    /// `(start, end)` pairs as slot ranges.
    fn ranges(pairs: &[Pair]) -> Vec<Range<u32>> {
        pairs.iter().map(|&(a, b)| a..b).collect()
    }

    #[test]
    fn ranges_merge_when_they_overlap_or_touch() {
        let rows: [(&[Pair], &[Pair]); 6] = [
            (&[], &[]),
            (&[(3, 4)], &[(3, 4)]),
            (&[(5, 6), (3, 4), (4, 5)], &[(3, 6)]),
            (&[(0, 10), (2, 3), (9, 12)], &[(0, 12)]),
            (&[(7, 8), (1, 2), (3, 4)], &[(1, 2), (3, 4), (7, 8)]),
            (&[(4, 6), (4, 6), (0, 1)], &[(0, 1), (4, 6)]),
        ];
        for (input, want) in rows {
            let mut got = ranges(input);
            merge_ranges(&mut got);
            assert_eq!(got, ranges(want), "{input:?}");
        }
    }

    #[test]
    fn joining_and_leaving_the_unique_set_changes_the_slots() {
        // Slot 9 joins, slot 2 leaves, slot 5 stays; slot 3 was changed by the store already.
        let mut changed = ranges(&[(3, 4)]);
        unique_flips(&[5, 9], &[2, 5], &mut changed);
        assert_eq!(changed, ranges(&[(2, 4), (9, 10)]));
        // No flip: the store's ranges are left as they are.
        let mut same = vec![0..2, 7..8];
        unique_flips(&[1, 4], &[1, 4], &mut same);
        assert_eq!(same, [0..2, 7..8]);
    }
}
