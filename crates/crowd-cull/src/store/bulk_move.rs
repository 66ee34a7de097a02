//! Large batches of moves ([`InstanceStore::set_positions`]): a parallel check, a position write split over
//! the rayon pool by slot range, then a parallel refit of every touched cluster.

use glam::Vec3;
use rayon::prelude::*;

use super::maintain::queue_drifters;
use super::refit::move_refit_group;
use super::{HandleEntry, InstanceStore};
use crate::error::{Error, Result};
use crate::group::{Cluster, Group};
use crate::instance::Handle;

impl InstanceStore {
    /// Moves many instances: `positions[i]` for `handles[i]`. Everything is checked first: on error nothing
    /// changes. A handle may appear more than once; the last position wins.
    ///
    /// A small batch (fewer than one move per 8 clusters of the store) moves one instance at a time, as
    /// [`InstanceStore::set_position`] does. A larger one checks the batch in parallel (the first bad index is
    /// reported), writes the positions (in a store with one group, split over the pool by slot range), then
    /// refits every touched cluster at once, in parallel over clusters on the current rayon pool: members' spheres, the box and the
    /// centre are recomputed from the members, the cluster is filed in the grid at its new centre, any queued
    /// refit of it is dropped, and every member further than `R` from the new centre is queued for
    /// reassignment. Either way the boxes hold their members' spheres when it returns.
    pub fn set_positions(&mut self, handles: &[Handle], positions: &[Vec3]) -> Result<()> {
        if positions.len() != handles.len() {
            return Err(Error::BufferSize {
                what: "positions",
                expected: handles.len(),
                actual: positions.len(),
            });
        }
        let clusters: usize = self.groups.iter().map(|g| g.clusters.len()).sum();
        if handles.len() * BULK_MOVES_PER_CLUSTER < clusters {
            for (i, (h, p)) in handles.iter().zip(positions).enumerate() {
                self.check_move(i, h, p)?;
            }
            for (h, p) in handles.iter().zip(positions) {
                let e = self.handles[h.index as usize];
                self.move_unchecked(*h, e, *p);
            }
            return Ok(());
        }
        // A large batch: check in parallel (the first bad index wins, as in the serial loop), write the
        // positions, then refit every touched cluster at once, in parallel over clusters.
        // Each piece also gathers its moves' slots, so that the write need not look the handles up again.
        let table = &self.handles;
        self.move_slots.resize(handles.len(), 0);
        let first_bad = self
            .move_slots
            .par_chunks_mut(BULK_CHECK_CHUNK)
            .zip(handles.par_chunks(BULK_CHECK_CHUNK))
            .zip(positions.par_chunks(BULK_CHECK_CHUNK))
            .enumerate()
            .filter_map(|(c, ((slots, hs), ps))| {
                for (j, ((slot, h), p)) in slots.iter_mut().zip(hs).zip(ps).enumerate() {
                    match table.get(h.index as usize) {
                        Some(e) if e.generation == h.generation && h.generation % 2 == 1 && p.is_finite() => {
                            *slot = e.slot;
                        }
                        _ => return Some(c * BULK_CHECK_CHUNK + j),
                    }
                }
                None
            })
            .min();
        if let Some(i) = first_bad {
            self.check_move(i, &handles[i], &positions[i])?;
        }
        if self.groups.len() == 1 {
            // Every handle is of the one group: write by slot, split over the pool.
            write_positions_split(&mut self.groups[0], &self.move_slots, positions);
            for &s in &self.move_slots {
                self.groups[0].mark_changed(s as usize);
            }
        } else {
            write_positions(&mut self.groups, &self.handles, handles, positions);
            for h in handles {
                let e = self.handles[h.index as usize];
                self.groups[e.group as usize].mark_changed(e.slot as usize);
            }
        }
        let r2 = self.settings.radius * self.settings.radius;
        for grp in &mut self.groups {
            move_refit_group(grp, r2);
            for k in 0..grp.clusters.len() {
                let c = &mut grp.clusters[k];
                if !c.moved {
                    continue;
                }
                c.moved = false;
                // The refit above is complete: a queued refit of this cluster is dropped when popped.
                c.dirty = false;
                let drifters = std::mem::take(&mut c.drifters);
                let centre = grp.file(k as u32);
                if drifters > 0 {
                    queue_drifters(grp, k, centre, r2, &mut self.handles, &mut self.reassign);
                }
            }
        }
        Ok(())
    }
}

/// Clusters per bulk move from which [`InstanceStore::set_positions`] takes the bulk path: below that, visiting
/// every cluster would cost more than the moves themselves.
pub(super) const BULK_MOVES_PER_CLUSTER: usize = 8;

/// Moves per piece of the parallel validation of a bulk move.
pub(super) const BULK_CHECK_CHUNK: usize = 4096;

/// The plain bulk-move write: `positions[i]` to `handles[i]`'s slot, in order (the last position of a repeated
/// handle wins), flagging every touched cluster `moved`. The handles must be live.
pub(super) fn write_positions(groups: &mut [Group], table: &[HandleEntry], handles: &[Handle], positions: &[Vec3]) {
    for (h, p) in handles.iter().zip(positions) {
        let e = table[h.index as usize];
        let grp = &mut groups[e.group as usize];
        let s = e.slot as usize;
        grp.position[s] = *p;
        let k = grp.cluster_of(s);
        grp.clusters[k].moved = true;
    }
}

/// [`write_positions`] for a store with one group, given each move's slot (`slots[i]` for `positions[i]`), split
/// over the current rayon pool: the group's clusters are cut into one run per thread at quantiles of a sample
/// of the moved slots, and each thread scans every move and writes those that land in its run, in order (so
/// the last position of a repeated slot still wins).
pub(super) fn write_positions_split(grp: &mut Group, slots: &[u32], positions: &[Vec3]) {
    let cap = grp.cap;
    let parts = rayon::current_num_threads().min(MAX_WRITE_PARTS);
    if parts < 2 || slots.len() < 2 * BULK_CHECK_CHUNK {
        return write_range(&mut grp.position, &mut grp.clusters, 0, cap, slots, positions);
    }
    // A sorted sample of the moved clusters, to cut where the moves split evenly.
    let mut sample = [0usize; WRITE_SAMPLES];
    for (j, v) in sample.iter_mut().enumerate() {
        *v = grp.cluster_of(slots[j * slots.len() / WRITE_SAMPLES] as usize);
    }
    sample.sort_unstable();
    let mut cuts = [0usize; MAX_WRITE_PARTS + 1];
    for i in 1..parts {
        cuts[i] = sample[i * WRITE_SAMPLES / parts].max(cuts[i - 1]);
    }
    cuts[parts] = grp.clusters.len();
    split_write(
        &mut grp.position,
        &mut grp.clusters,
        cap,
        &cuts[..=parts],
        slots,
        positions,
    );
}

/// The most pieces [`write_positions_split`] cuts a group into.
const MAX_WRITE_PARTS: usize = 16;

/// Moves sampled by [`write_positions_split`] to place its cuts.
const WRITE_SAMPLES: usize = 64;

/// Writes the moves that land in clusters `cuts[0]..cuts[last]` (`position` and `clusters` start at cluster
/// `cuts[0]`), one rayon task per run between consecutive cuts.
fn split_write(
    position: &mut [Vec3],
    clusters: &mut [Cluster],
    cap: usize,
    cuts: &[usize],
    slots: &[u32],
    positions: &[Vec3],
) {
    if cuts.len() <= 2 {
        return write_range(position, clusters, cuts[0] * cap, cap, slots, positions);
    }
    let mid = cuts.len() / 2;
    let at = cuts[mid] - cuts[0];
    let (pa, pb) = position.split_at_mut(at * cap);
    let (ca, cb) = clusters.split_at_mut(at);
    rayon::join(
        || split_write(pa, ca, cap, &cuts[..=mid], slots, positions),
        || split_write(pb, cb, cap, &cuts[mid..], slots, positions),
    );
}

/// Writes, in order, the moves whose slot lies in `first..first + position.len()` (`clusters` holds the
/// clusters of those slots), flagging their clusters `moved`.
fn write_range(
    position: &mut [Vec3],
    clusters: &mut [Cluster],
    first: usize,
    cap: usize,
    slots: &[u32],
    positions: &[Vec3],
) {
    let shift = cap.trailing_zeros();
    for (s, p) in slots.iter().zip(positions) {
        let i = (*s as usize).wrapping_sub(first);
        if let Some(d) = position.get_mut(i) {
            *d = *p;
            clusters[i >> shift].moved = true;
        }
    }
}
