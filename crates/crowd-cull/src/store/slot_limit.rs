//! The store's slot limit ([`InstanceStore::set_max_slots`]) and the exact batch insertion that keeps it: a batch
//! that may reach the limit goes in one instance at a time, and is rolled back whole when one would need a
//! cluster block past it.

use super::InstanceStore;
use crate::error::{Error, Result};
use crate::group::Cluster;
use crate::instance::{GroupId, Handle, InstanceDesc};
use crate::limits::MAX_SLOTS;

/// What a batch insertion changes that a rollback cannot recover from the removals alone.
#[derive(Clone, Copy, Debug)]
struct Before {
    /// The group's cluster blocks.
    clusters: usize,
    /// The length of the group's refit queue (insertions only push to its back).
    dirty: usize,
    /// The size of the handle table.
    handles: usize,
    /// The store's slot count.
    slots: usize,
}

impl InstanceStore {
    /// Sets the most slots the store may hold, all groups together, for example what a renderer can bind: with
    /// one 48-byte record per slot, bound whole, `binding_limit / 48`. The default is [`MAX_SLOTS`].
    ///
    /// [`InstanceStore::slot_count`] never passes the limit: an add that would need a new cluster block past it
    /// fails with [`Error::SlotLimit`] (a batch is rolled back whole, see [`InstanceStore::add_many`]), and
    /// [`InstanceStore::maintain`] leaves a drifting instance in its cluster rather than open such a block.
    /// Removals make room: deleted blocks are reused before any block is added. O(1).
    ///
    /// # Errors
    ///
    /// [`Error::MaxSlots`] when `max` is below the slots the store holds already ([`InstanceStore::slot_count`])
    /// or above [`MAX_SLOTS`]; the limit is then unchanged.
    pub fn set_max_slots(&mut self, max: usize) -> Result<()> {
        if max < self.slots || max > MAX_SLOTS {
            return Err(Error::MaxSlots {
                asked: max,
                min: self.slots,
                max: MAX_SLOTS,
            });
        }
        self.max_slots = max;
        Ok(())
    }

    /// The most slots the store may hold (see [`InstanceStore::set_max_slots`]).
    pub fn max_slots(&self) -> usize {
        self.max_slots
    }

    /// [`InstanceStore::add_many`] of valid descriptions whose worst case (a new block each) passes the slot
    /// limit: one at a time, saving each touched cluster's state first, and rolling everything back when one
    /// would need a block past the limit.
    pub(super) fn add_many_exact(&mut self, g: GroupId, descs: &[InstanceDesc], handles: &mut [Handle]) -> Result<()> {
        let grp = &self.groups[g.0 as usize];
        let before = Before {
            clusters: grp.clusters.len(),
            dirty: grp.dirty.len(),
            handles: self.handles.len(),
            slots: self.slots,
        };
        let mut saved = std::mem::take(&mut self.saved_clusters);
        saved.clear();
        let mut result = Ok(());
        for (i, (d, h)) in descs.iter().zip(handles.iter_mut()).enumerate() {
            match self.insert(g, d, i, Some(&mut saved)) {
                Ok(handle) => *h = handle,
                Err(e) => {
                    result = Err(e);
                    self.roll_back_adds(g, &handles[..i], &saved, before);
                    break;
                }
            }
        }
        if result.is_ok() {
            let grp = &mut self.groups[g.0 as usize];
            for &(k, _) in &saved {
                grp.clusters[k as usize].saved = false;
            }
        }
        saved.clear();
        self.saved_clusters = saved;
        result
    }

    /// Undoes the insertion of `added` into group `g` (in that order, nothing else in between): removes them in
    /// reverse order (each is then its cluster's last member, so no other instance moves), restores every
    /// touched cluster's saved state, drops the cluster blocks and handle-table entries the batch appended, and
    /// the refit-queue entries it pushed.
    fn roll_back_adds(&mut self, g: GroupId, added: &[Handle], saved: &[(u32, Cluster)], before: Before) {
        for h in added.iter().rev() {
            let e = self.handles[h.index as usize];
            if cfg!(debug_assertions) {
                let grp = &self.groups[g.0 as usize];
                let k = grp.cluster_of(e.slot as usize);
                let last = k * grp.cap + grp.clusters[k].len as usize - 1;
                debug_assert_eq!(
                    e.slot as usize, last,
                    "a rolled-back instance is its cluster's last member"
                );
            }
            self.remove_unchecked(h.index, e);
        }
        let grp = &mut self.groups[g.0 as usize];
        grp.dirty.truncate(before.dirty);
        for &(k, c) in saved {
            if (k as usize) < before.clusters {
                grp.clusters[k as usize] = c;
                if c.len > 0 {
                    grp.file(k);
                }
            }
        }
        grp.trim_clusters(before.clusters);
        self.slots = before.slots;
        self.handles.truncate(before.handles);
        self.free_handles.retain(|&i| (i as usize) < before.handles);
    }
}
