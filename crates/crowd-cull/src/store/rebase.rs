//! [`InstanceStore::rebase_start_times`]: rewrites every animation start time of a group at once (an epoch
//! move of the animation clock), split over the rayon pool by slot range for large groups.

use rayon::prelude::*;

use super::InstanceStore;
use crate::error::Result;
use crate::group::Cluster;
use crate::instance::{AnimState, GroupId};

/// Slots per piece of a parallel rebase: a multiple of 64 (a piece owns whole words of changed-slot bits) and a
/// power of two (so a whole number of clusters); groups with no more slots than this are rebased on one thread.
const REBASE_PIECE_SLOTS: usize = 4096;

impl InstanceStore {
    /// Sets the start time of every live instance of group `g` to `f(&anim)`, its animation state before the
    /// call: for an animation clock that keeps its time in `f64` and start times relative to an epoch, moving the
    /// epoch by `d` seconds is `|a| a.start_time - d`.
    ///
    /// Every live slot of the group is marked changed ([`InstanceStore::take_changed_slots`] reports it); nothing
    /// else changes (spheres, clusters and tiers do not depend on start times), and empty slots keep their data.
    /// `f` must return a finite value (a `debug_assert!` checks it; the store's other writes refuse non-finite
    /// start times).
    ///
    /// O(slots of the group). A group with more than 4,096 slots is split over the current rayon pool by slot
    /// range, so `f` runs on several threads, in no particular order. Allocates nothing (inside
    /// `ThreadPool::install`; entering rayon from outside a pool may allocate).
    ///
    /// # Errors
    ///
    /// [`crate::Error::UnknownGroup`] for a group the store lacks; nothing changes.
    pub fn rebase_start_times(&mut self, g: GroupId, f: impl Fn(&AnimState) -> f32 + Sync) -> Result<()> {
        self.group(g, 0)?;
        let grp = &mut self.groups[g.0 as usize];
        let cap = grp.cap;
        let piece = REBASE_PIECE_SLOTS.max(cap);
        if grp.slot_count() <= piece || rayon::current_num_threads() < 2 {
            rebase_piece(&grp.clusters, &mut grp.anim, &mut grp.changed, cap, &f);
            return Ok(());
        }
        // Pieces of whole clusters and whole 64-slot words, so that no two threads write the same word.
        grp.clusters
            .par_chunks(piece / cap)
            .zip(grp.anim.par_chunks_mut(piece))
            .zip(grp.changed.par_chunks_mut(piece / 64))
            .for_each(|((clusters, anim), changed)| rebase_piece(clusters, anim, changed, cap, &f));
        Ok(())
    }
}

/// Rebases the members of `clusters`, whose slots `anim` holds (`cap` each, from the first cluster's first
/// slot, a multiple of 64) and whose changed bits `changed` holds.
fn rebase_piece(
    clusters: &[Cluster],
    anim: &mut [AnimState],
    changed: &mut [u64],
    cap: usize,
    f: &(impl Fn(&AnimState) -> f32 + Sync),
) {
    for (k, c) in clusters.iter().enumerate() {
        let first = k * cap;
        let end = first + c.len as usize;
        for a in &mut anim[first..end] {
            let t = f(a);
            debug_assert!(
                t.is_finite(),
                "rebase_start_times: f returned {t}, not a finite start time"
            );
            a.start_time = t;
        }
        let mut s = first;
        while s < end {
            let bit = s % 64;
            let run = (64 - bit).min(end - s);
            let mask = if run == 64 { !0 } else { ((1u64 << run) - 1) << bit };
            changed[s / 64] |= mask;
            s += run;
        }
    }
}
