//! [`InstanceStore::maintain`]: per-frame, budgeted cluster maintenance (reassigning drifting instances and
//! refitting dirty clusters), and the reassignment queue it serves.

use std::collections::VecDeque;

use glam::Vec3;

use super::refit::refit_group;
use super::{HandleEntry, InstanceStore, MaintainBudget, MaintainStats};
use crate::group::Group;
use crate::instance::{Handle, InstanceDesc};

impl InstanceStore {
    /// Per-frame cluster maintenance, bounded by `budget`:
    /// 1. up to `budget.reassign` queued instances that are still further than `R` from their cluster's
    ///    centre move to the nearest cluster with room within `R` (or a new one);
    /// 2. up to `budget.refit` dirty clusters get their box and centre recomputed from their members, in
    ///    parallel on the current rayon pool.
    ///
    /// A reassignment may open a cluster and so grow [`InstanceStore::slot_count`]: prepare the culling cache and
    /// output before the next [`crate::CullingJob::run`]. It never opens one past [`InstanceStore::max_slots`]: an
    /// instance that finds no cluster with room within `R` and no deleted block to reuse then stays in its cluster
    /// (it is queued again when it moves, or when a refit of its cluster finds it far from the centre).
    ///
    /// Queues are first in, first out, so every queued item is served within a bounded number of frames.
    /// Culling is correct whether or not this runs (boxes always hold their members' spheres); maintenance keeps
    /// clusters tight. It does not allocate once the store's queues and cluster blocks have reached their
    /// working sizes.
    pub fn maintain(&mut self, budget: MaintainBudget) -> MaintainStats {
        let mut stats = MaintainStats::default();
        let r2 = self.settings.radius * self.settings.radius;
        while stats.reassigned < budget.reassign {
            let Some(h) = self.reassign.pop_front() else { break };
            let Ok(e) = self.entry(h, 0) else { continue };
            self.handles[h.index as usize].queued = false;
            let g = e.group as usize;
            let s = e.slot as usize;
            let grp = &self.groups[g];
            let k = grp.cluster_of(s);
            if grp.clusters[k].centre().distance_squared(grp.position[s]) <= r2 {
                continue;
            }
            if self.reassign_unchecked(h.index, e, k as u32) {
                stats.reassigned += 1;
            }
        }
        for grp in &mut self.groups {
            self.refit_list.clear();
            while stats.refit + self.refit_list.len() < budget.refit {
                let Some(k) = grp.dirty.pop_front() else { break };
                let c = &mut grp.clusters[k as usize];
                c.queued = false;
                if !c.dirty {
                    continue;
                }
                c.dirty = false;
                if c.len > 0 {
                    c.refit = true;
                    self.refit_list.push(k);
                }
            }
            if self.refit_list.is_empty() {
                continue;
            }
            refit_group(grp, r2);
            for &k in &self.refit_list {
                let c = &mut grp.clusters[k as usize];
                let drifters = std::mem::take(&mut c.drifters);
                let centre = grp.file(k);
                if drifters > 0 {
                    // Members that the centre moved away from (other members moved or left): queue them.
                    queue_drifters(grp, k as usize, centre, r2, &mut self.handles, &mut self.reassign);
                }
            }
            stats.refit += self.refit_list.len();
        }
        stats.reassign_pending = self.reassign.len();
        stats.refit_pending = self.groups.iter().map(|g| g.dirty.len()).sum();
        stats
    }

    /// Moves the instance to the nearest other cluster with room within `R`, else a deleted block, else a new
    /// block; returns false, changing nothing, when that block would pass the slot limit.
    fn reassign_unchecked(&mut self, index: u32, e: HandleEntry, from: u32) -> bool {
        let grp = &mut self.groups[e.group as usize];
        let s = e.slot as usize;
        let to = match grp.find_cluster(grp.position[s], from) {
            Some(k) => k,
            None if grp.free_clusters.is_empty() && self.slots + grp.cap > self.max_slots => return false,
            None => {
                let before = grp.slot_count();
                let k = grp.alloc_cluster();
                self.slots += grp.slot_count() - before;
                k
            }
        };
        let desc = InstanceDesc {
            position: grp.position[s],
            rotation: grp.rotation[s],
            scale: grp.scale[s],
            anim: grp.anim[s],
            custom: grp.custom[s],
            flags: grp.flags[s],
        };
        let state = grp.state[s];
        // Insert first, so that a cluster freed by the removal is not handed out as the new one.
        let new_slot = grp.push_member(to, &desc, state, index);
        if let Some(moved) = grp.remove_member(s) {
            self.handles[moved as usize].slot = e.slot;
        }
        self.handles[index as usize].slot = new_slot as u32;
        true
    }
}

/// Queues for reassignment every member of cluster `k` further than `sqrt(r2)` from `centre`.
pub(super) fn queue_drifters(
    grp: &Group,
    k: usize,
    centre: Vec3,
    r2: f32,
    handles: &mut [HandleEntry],
    reassign: &mut VecDeque<Handle>,
) {
    let first = k * grp.cap;
    for s in first..first + grp.clusters[k].len as usize {
        if centre.distance_squared(grp.position[s]) > r2 {
            let owner = grp.owner[s];
            let e = &mut handles[owner as usize];
            if !e.queued {
                e.queued = true;
                reassign.push_back(Handle {
                    index: owner,
                    generation: e.generation,
                });
            }
        }
    }
}
