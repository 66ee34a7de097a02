//! `InstanceStore`: every instance of every draw group, with generational handles and moving clusters.
//!
//! Insertion follows Unreal 3's foliage: an instance joins the nearest cluster of its group whose centre is
//! within `radius` and which holds fewer than `capacity` instances, or starts a new cluster. Removal is a
//! swap-remove inside the cluster with a handle remap, O(1); an emptied cluster is deleted.
//! Moves grow the cluster's box at once (so culling stays conservative without any maintenance) and queue
//! the cluster for a refit; an instance that drifts further than `radius` from its cluster's centre is queued
//! for reassignment. [`InstanceStore::maintain`] does a bounded amount of both per frame.
//! A large batch of moves ([`InstanceStore::set_positions`] with at least one move per 8 clusters) instead
//! refits every cluster it touches at once, in parallel, and queues their drifting members: its clusters
//! need no refit from `maintain`.

use std::collections::VecDeque;

use glam::{Quat, Vec3, Vec4};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::group::{Cluster, Group, GroupDesc, SoaSphere};
use crate::instance::{AnimState, GroupId, Handle, Instance, InstanceDesc, TierState};
use crate::limits::{MAX_CLUSTER_CAPACITY, MAX_SLOTS};

/// How instances are clustered.
///
/// Both values are in the units of the instance positions. Choose `radius` so that a cluster's box, about
/// `2·radius` across plus one character, is a small part of the view (a few character heights to a few dozen:
/// the default is 16 for characters about 1.8 units tall, that is metres), and `capacity` near the number of
/// instances that fit in a circle of that radius at the crowd's density (`π·radius²·density`, rounded to a power
/// of two): clusters far emptier than their capacity waste slots, fuller ones spill into neighbours. For a model
/// in other units, scale `radius` by the character's height over 1.8 (a character 173 units tall: about 1,500).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClusterSettings {
    /// `R`: an instance joins a cluster whose centre is within this distance, and is reassigned when it
    /// drifts further. Positive and finite.
    pub radius: f32,
    /// `C`: the most instances in a cluster. A power of two in `4..=MAX_CLUSTER_CAPACITY` (a cluster is a block
    /// of slots, and finding a slot's cluster is then a shift).
    pub capacity: u32,
}

impl Default for ClusterSettings {
    /// 256 instances within 16 m: a few square metres per person at crowd densities, for positions in metres.
    fn default() -> Self {
        Self {
            radius: 16.0,
            capacity: 256,
        }
    }
}

/// How much [`InstanceStore::maintain`] may do in one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaintainBudget {
    /// The most instances reassigned to another cluster.
    pub reassign: usize,
    /// The most clusters whose boxes and centres are recomputed from their members.
    pub refit: usize,
}

impl Default for MaintainBudget {
    /// 1,024 reassignments and 1,024 refits (a quarter of the clusters of a million instances in clusters of
    /// 256): well under a millisecond on two cores at the crate's figures.
    fn default() -> Self {
        Self {
            reassign: 1024,
            refit: 1024,
        }
    }
}

/// What one [`InstanceStore::maintain`] call did and left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaintainStats {
    /// Instances moved to another (or a new) cluster.
    pub reassigned: usize,
    /// Clusters refit.
    pub refit: usize,
    /// Reassignments still queued.
    pub reassign_pending: usize,
    /// Refits still queued.
    pub refit_pending: usize,
}

/// Read-only per-slot arrays of one draw group (see [`InstanceStore::group_slots`]). All have the group's slot
/// count as length.
#[derive(Clone, Copy, Debug)]
pub struct GroupSlots<'a> {
    /// Positions.
    pub position: &'a [Vec3],
    /// Rotations (unit length).
    pub rotation: &'a [Quat],
    /// Uniform scales.
    pub scale: &'a [f32],
    /// Animation states.
    pub anim: &'a [AnimState],
    /// Custom data (tint).
    pub custom: &'a [Vec4],
    /// Caller-defined flags.
    pub flags: &'a [u32],
    /// LOD and tier states from the last culling run.
    pub state: &'a [TierState],
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct HandleEntry {
    /// Odd while live, even while free.
    generation: u32,
    group: u32,
    slot: u32,
    /// In the reassignment queue.
    queued: bool,
    /// Scratch mark for duplicate detection in bulk operations (always false between calls).
    mark: bool,
}

/// Every instance of every draw group. See the module docs.
#[derive(Clone, Debug)]
pub struct InstanceStore {
    settings: ClusterSettings,
    pub(crate) groups: Vec<Group>,
    handles: Vec<HandleEntry>,
    free_handles: Vec<u32>,
    reassign: VecDeque<Handle>,
    refit_list: Vec<u32>,
    /// Scratch for bulk moves: each move's slot.
    move_slots: Vec<u32>,
    live: usize,
    slots: usize,
}

fn finite_quat(q: Quat) -> bool {
    q.is_finite()
}

impl InstanceStore {
    /// An empty store. Fails when the settings break their rules.
    pub fn new(settings: ClusterSettings) -> Result<Self> {
        if !settings.radius.is_finite() {
            return Err(Error::NonFinite {
                what: "cluster radius",
                index: 0,
            });
        }
        if settings.radius <= 0.0 {
            return Err(Error::OutOfRange {
                what: "cluster radius (must be > 0)",
                index: 0,
            });
        }
        if settings.capacity < 4 || settings.capacity > MAX_CLUSTER_CAPACITY || !settings.capacity.is_power_of_two() {
            return Err(Error::OutOfRange {
                what: "cluster capacity (a power of two from 4 to MAX_CLUSTER_CAPACITY)",
                index: 0,
            });
        }
        Ok(Self {
            settings,
            groups: Vec::new(),
            handles: Vec::new(),
            free_handles: Vec::new(),
            reassign: VecDeque::new(),
            refit_list: Vec::new(),
            move_slots: Vec::new(),
            live: 0,
            slots: 0,
        })
    }

    /// The store's cluster settings.
    pub fn settings(&self) -> ClusterSettings {
        self.settings
    }

    /// Adds a draw group. Fails when the description breaks its rules.
    pub fn add_group(&mut self, desc: GroupDesc) -> Result<GroupId> {
        desc.validate()?;
        let id = GroupId(self.groups.len() as u32);
        self.groups
            .push(Group::new(desc, self.settings.capacity as usize, self.settings.radius));
        Ok(id)
    }

    /// The description of group `g`.
    pub fn group_desc(&self, g: GroupId) -> Result<&GroupDesc> {
        Ok(&self.group(g, 0)?.desc)
    }

    /// The number of draw groups.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// The number of live instances.
    pub fn len(&self) -> usize {
        self.live
    }

    /// True when no instance lives.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// The number of live instances of group `g`.
    pub fn group_len(&self, g: GroupId) -> Result<usize> {
        Ok(self.group(g, 0)?.live)
    }

    /// The number of live clusters of group `g`.
    pub fn cluster_count(&self, g: GroupId) -> Result<usize> {
        let grp = self.group(g, 0)?;
        Ok(grp.clusters.len() - grp.free_clusters.len())
    }

    /// The number of storage slots of group `g` (clusters, live or deleted, times capacity): the size GPU
    /// instance buffers indexed by slot need.
    pub fn group_slot_count(&self, g: GroupId) -> Result<usize> {
        Ok(self.group(g, 0)?.slot_count())
    }

    /// The number of storage slots of all groups together: clusters times their capacity, about two per instance
    /// in a typical crowd. It only grows, on adds and in [`InstanceStore::maintain`] (see the crate docs on when to
    /// prepare the culling scratch).
    pub fn slot_count(&self) -> usize {
        self.slots
    }

    pub(crate) fn group_ref(&self, g: GroupId) -> Result<&Group> {
        self.group(g, 0)
    }

    fn group(&self, g: GroupId, index: usize) -> Result<&Group> {
        self.groups.get(g.0 as usize).ok_or(Error::UnknownGroup {
            index,
            group: g.0,
            group_count: self.groups.len() as u32,
        })
    }

    fn entry(&self, h: Handle, index: usize) -> Result<HandleEntry> {
        match self.handles.get(h.index as usize) {
            Some(e) if e.generation == h.generation && h.generation % 2 == 1 => Ok(*e),
            _ => Err(Error::StaleHandle {
                index,
                handle_index: h.index,
                generation: h.generation,
            }),
        }
    }

    /// Every live handle, in handle-table order.
    pub fn live_handles(&self) -> impl Iterator<Item = Handle> + '_ {
        self.handles
            .iter()
            .enumerate()
            .filter(|(_, e)| e.generation % 2 == 1)
            .map(|(i, e)| Handle {
                index: i as u32,
                generation: e.generation,
            })
    }

    /// The centre of the cluster that holds the instance (the mean of its members' positions).
    pub fn cluster_centre(&self, h: Handle) -> Result<Vec3> {
        let e = self.entry(h, 0)?;
        let g = &self.groups[e.group as usize];
        Ok(g.clusters[g.cluster_of(e.slot as usize)].centre())
    }

    /// True when `h` refers to a live instance.
    pub fn contains(&self, h: Handle) -> bool {
        self.entry(h, 0).is_ok()
    }

    /// A copy of the instance's data.
    pub fn get(&self, h: Handle) -> Result<Instance> {
        let e = self.entry(h, 0)?;
        let g = &self.groups[e.group as usize];
        let s = e.slot as usize;
        Ok(Instance {
            group: GroupId(e.group),
            slot: e.slot,
            desc: InstanceDesc {
                position: g.position[s],
                rotation: g.rotation[s],
                scale: g.scale[s],
                anim: g.anim[s],
                custom: g.custom[s],
                flags: g.flags[s],
            },
            state: g.state[s],
        })
    }

    /// The handle of the instance in `slot` of group `g`, if that slot holds one (for example an index from a
    /// visible list).
    pub fn handle_at(&self, g: GroupId, slot: u32) -> Option<Handle> {
        let grp = self.groups.get(g.0 as usize)?;
        let owner = *grp.owner.get(slot as usize)?;
        let e = self.handles.get(owner as usize)?;
        (e.generation % 2 == 1 && e.slot == slot && e.group == g.0).then_some(Handle {
            index: owner,
            generation: e.generation,
        })
    }

    /// The size of the handle table: every handle's `index` is below it. It grows with adds only.
    pub fn handle_capacity(&self) -> usize {
        self.handles.len()
    }

    /// The group and slot of a live instance, `None` for a stale handle: [`InstanceStore::get`] without the copy of
    /// the instance's description, O(1).
    pub fn slot_of(&self, h: Handle) -> Option<(GroupId, u32)> {
        let e = self.entry(h, 0).ok()?;
        Some((GroupId(e.group), e.slot))
    }

    /// Read-only views of group `g`'s per-slot arrays, indexed by slot (the numbers visible lists hold), for
    /// packing GPU instance records without handle lookups. Slots past a cluster's members hold stale data:
    /// read only slots from visible lists or those for which [`InstanceStore::handle_at`] is `Some`.
    pub fn group_slots(&self, g: GroupId) -> Result<GroupSlots<'_>> {
        let grp = self.group(g, 0)?;
        Ok(GroupSlots {
            position: &grp.position,
            rotation: &grp.rotation,
            scale: &grp.scale,
            anim: &grp.anim,
            custom: &grp.custom,
            flags: &grp.flags,
            state: &grp.state,
        })
    }

    /// Writes into `out` (cleared first) the slot ranges of group `g` whose GPU-kept data changed since the last
    /// call, ascending, adjacent ranges merged, and forgets them. A slot changes when an instance is added to it,
    /// moved into it (a removal's swap or a cluster reassignment), removed from it (it is then empty:
    /// [`InstanceStore::handle_at`] is `None`), moved, updated, given custom data, or given an animation state
    /// that differs in more than the crossfade weight.
    ///
    /// O(slots / 64) word tests plus O(changed ranges); `out` allocates only when it must grow past its
    /// capacity.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownGroup`] for a group the store lacks.
    pub fn take_changed_slots(&mut self, g: GroupId, out: &mut Vec<std::ops::Range<u32>>) -> Result<()> {
        out.clear();
        self.group(g, 0)?;
        let grp = &mut self.groups[g.0 as usize];
        for (w, word) in grp.changed.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                let start = bits.trailing_zeros();
                let run = (!(bits >> start)).trailing_zeros();
                let first = (w * 64) as u32 + start;
                let end = first + run;
                match out.last_mut() {
                    Some(last) if last.end == first => last.end = end,
                    _ => out.push(first..end),
                }
                bits &= if start + run >= 64 { 0 } else { !0u64 << (start + run) };
            }
        }
        Ok(())
    }

    /// The culling sphere `(centre, radius)` the store keeps for the instance.
    pub fn sphere(&self, h: Handle) -> Result<(Vec3, f32)> {
        let e = self.entry(h, 0)?;
        Ok(self.groups[e.group as usize].sphere(e.slot as usize))
    }

    fn check_anim(g: &Group, group: u32, anim: &AnimState, index: usize) -> Result<()> {
        let clip_count = g.desc.clip_bounds.len() as u32;
        let unknown = |clip| Error::UnknownClip {
            index,
            clip,
            group,
            clip_count,
        };
        if anim.clip >= clip_count {
            return Err(unknown(anim.clip));
        }
        if let Some(t) = anim.fade_target
            && t >= clip_count
        {
            return Err(unknown(t));
        }
        if !(anim.start_time.is_finite() && anim.speed.is_finite() && anim.fade_weight.is_finite()) {
            return Err(Error::NonFinite {
                what: "animation state",
                index,
            });
        }
        if !(0.0..=1.0).contains(&anim.fade_weight) {
            return Err(Error::OutOfRange {
                what: "fade weight (0 to 1)",
                index,
            });
        }
        Ok(())
    }

    fn check_transform(position: Vec3, rotation: Quat, scale: f32, index: usize) -> Result<()> {
        if !position.is_finite() {
            return Err(Error::NonFinite {
                what: "position",
                index,
            });
        }
        if !finite_quat(rotation) {
            return Err(Error::NonFinite {
                what: "rotation",
                index,
            });
        }
        if (rotation.length() - 1.0).abs() > 1e-3 {
            return Err(Error::OutOfRange {
                what: "rotation (must be unit length)",
                index,
            });
        }
        if !scale.is_finite() {
            return Err(Error::NonFinite { what: "scale", index });
        }
        if scale <= 0.0 {
            return Err(Error::OutOfRange {
                what: "scale (must be > 0)",
                index,
            });
        }
        Ok(())
    }

    fn check_desc(&self, g: GroupId, desc: &InstanceDesc, index: usize) -> Result<()> {
        let grp = self.group(g, index)?;
        Self::check_transform(desc.position, desc.rotation, desc.scale, index)?;
        Self::check_anim(grp, g.0, &desc.anim, index)?;
        if !desc.custom.is_finite() {
            return Err(Error::NonFinite {
                what: "custom data",
                index,
            });
        }
        Ok(())
    }

    /// Checks that `extra` more instances fit, even if each started a new cluster (slot indices are `u32`).
    fn check_room(&self, extra: usize) -> Result<()> {
        let cap = self.settings.capacity as usize;
        if self.live + extra > MAX_SLOTS / 2
            || self.handles.len() + extra > MAX_SLOTS / 2
            || self.slots.saturating_add(extra.saturating_mul(cap)) > MAX_SLOTS
        {
            return Err(Error::Limit {
                what: "instance slots per store",
                limit: MAX_SLOTS,
            });
        }
        Ok(())
    }

    /// Adds one instance to group `g` and returns its handle. On error nothing changes.
    pub fn add(&mut self, g: GroupId, desc: &InstanceDesc) -> Result<Handle> {
        self.check_desc(g, desc, 0)?;
        self.check_room(1)?;
        Ok(self.insert_unchecked(g, desc))
    }

    /// Adds `descs.len()` instances to group `g`, writing their handles to `handles` (the same length).
    /// Every description is checked first: on error nothing is added.
    pub fn add_many(&mut self, g: GroupId, descs: &[InstanceDesc], handles: &mut [Handle]) -> Result<()> {
        if handles.len() != descs.len() {
            return Err(Error::BufferSize {
                what: "handles",
                expected: descs.len(),
                actual: handles.len(),
            });
        }
        for (i, d) in descs.iter().enumerate() {
            self.check_desc(g, d, i)?;
        }
        self.check_room(descs.len())?;
        for (d, h) in descs.iter().zip(handles.iter_mut()) {
            *h = self.insert_unchecked(g, d);
        }
        Ok(())
    }

    fn insert_unchecked(&mut self, g: GroupId, desc: &InstanceDesc) -> Handle {
        let desc = InstanceDesc {
            rotation: desc.rotation.normalize(),
            ..*desc
        };
        let index = match self.free_handles.pop() {
            Some(i) => i,
            None => {
                self.handles.push(HandleEntry {
                    generation: 0,
                    group: 0,
                    slot: 0,
                    queued: false,
                    mark: false,
                });
                // Room for one entry per handle in the queues: a handle is freed once and queued for reassignment
                // once until `maintain` pops it (bar a reused handle whose old entry is still queued), so moves and
                // removals in a later frame do not grow them.
                let handles = self.handles.len();
                self.reassign.reserve(handles.saturating_sub(self.reassign.len()));
                self.free_handles
                    .reserve(handles.saturating_sub(self.free_handles.len()));
                (self.handles.len() - 1) as u32
            }
        };
        let grp = &mut self.groups[g.0 as usize];
        let k = match grp.find_cluster(desc.position, u32::MAX) {
            Some(k) => k,
            None => {
                let before = grp.slot_count();
                let k = grp.alloc_cluster();
                self.slots += grp.slot_count() - before;
                k
            }
        };
        let slot = grp.push_member(k, &desc, TierState::HIDDEN, index);
        let e = &mut self.handles[index as usize];
        e.generation = e.generation.wrapping_add(1) | 1;
        e.group = g.0;
        e.slot = slot as u32;
        self.live += 1;
        Handle {
            index,
            generation: e.generation,
        }
    }

    /// Removes one instance. A stale handle is an error and changes nothing.
    pub fn remove(&mut self, h: Handle) -> Result<()> {
        let e = self.entry(h, 0)?;
        self.remove_unchecked(h.index, e);
        Ok(())
    }

    /// Removes every instance of `handles`. Every handle is checked first (live, no duplicates): on error
    /// nothing is removed.
    pub fn remove_many(&mut self, handles: &[Handle]) -> Result<()> {
        let mut bad = None;
        for (i, h) in handles.iter().enumerate() {
            if let Err(e) = self.entry(*h, i) {
                bad = Some(e);
                break;
            }
            let m = &mut self.handles[h.index as usize].mark;
            if *m {
                bad = Some(Error::DuplicateHandle {
                    index: i,
                    handle_index: h.index,
                });
                break;
            }
            *m = true;
        }
        for h in handles {
            if let Some(e) = self.handles.get_mut(h.index as usize) {
                e.mark = false;
            }
        }
        if let Some(e) = bad {
            return Err(e);
        }
        for h in handles {
            let e = self.handles[h.index as usize];
            self.remove_unchecked(h.index, e);
        }
        Ok(())
    }

    fn remove_unchecked(&mut self, index: u32, e: HandleEntry) {
        let grp = &mut self.groups[e.group as usize];
        if let Some(moved) = grp.remove_member(e.slot as usize) {
            self.handles[moved as usize].slot = e.slot;
        }
        let entry = &mut self.handles[index as usize];
        entry.generation = entry.generation.wrapping_add(1);
        // A queued reassignment of this handle is dropped when it is popped (the generation no longer matches);
        // the flag is cleared now so that the reused slot can queue again.
        entry.queued = false;
        self.free_handles.push(index);
        self.live -= 1;
    }

    /// Moves one instance (the common per-frame update of a crowd). On error nothing changes.
    pub fn set_position(&mut self, h: Handle, position: Vec3) -> Result<()> {
        let e = self.entry(h, 0)?;
        if !position.is_finite() {
            return Err(Error::NonFinite {
                what: "position",
                index: 0,
            });
        }
        self.move_unchecked(h, e, position);
        Ok(())
    }

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

    /// Checks move `i` of a batch: a live handle and a finite position.
    fn check_move(&self, i: usize, h: &Handle, p: &Vec3) -> Result<()> {
        self.entry(*h, i)?;
        if !p.is_finite() {
            return Err(Error::NonFinite {
                what: "position",
                index: i,
            });
        }
        Ok(())
    }

    fn move_unchecked(&mut self, h: Handle, e: HandleEntry, position: Vec3) {
        let grp = &mut self.groups[e.group as usize];
        let s = e.slot as usize;
        let k = grp.cluster_of(s);
        let old = grp.position[s];
        grp.position[s] = position;
        grp.refresh_sphere(s);
        grp.mark_changed(s);
        let c = &mut grp.clusters[k];
        c.sum += position - old;
        // Drifted further than R from the centre `sum / len`, without a division.
        let len = c.len as f32;
        let r = self.settings.radius * len;
        let drifted = (position * len - c.sum).length_squared() > r * r;
        grp.mark_dirty(k as u32);
        // The grid keeps every centre current (insertion's nearest-cluster query reads it).
        grp.file(k as u32);
        if drifted {
            let entry = &mut self.handles[h.index as usize];
            if !entry.queued {
                entry.queued = true;
                self.reassign.push_back(h);
            }
        }
    }

    /// Replaces an instance's whole description (transform, animation, custom data, flags). Its group stays;
    /// to change mesh or material, remove it and add it to the other group. On error nothing changes.
    pub fn update(&mut self, h: Handle, desc: &InstanceDesc) -> Result<()> {
        let e = self.entry(h, 0)?;
        self.check_desc(GroupId(e.group), desc, 0)?;
        self.update_unchecked(h, e, desc);
        Ok(())
    }

    /// Replaces many descriptions: `descs[i]` for `handles[i]`. Everything is checked first.
    pub fn update_many(&mut self, handles: &[Handle], descs: &[InstanceDesc]) -> Result<()> {
        if descs.len() != handles.len() {
            return Err(Error::BufferSize {
                what: "descs",
                expected: handles.len(),
                actual: descs.len(),
            });
        }
        for (i, (h, d)) in handles.iter().zip(descs).enumerate() {
            let e = self.entry(*h, i)?;
            self.check_desc(GroupId(e.group), d, i)?;
        }
        for (h, d) in handles.iter().zip(descs) {
            let e = self.handles[h.index as usize];
            self.update_unchecked(*h, e, d);
        }
        Ok(())
    }

    fn update_unchecked(&mut self, h: Handle, e: HandleEntry, desc: &InstanceDesc) {
        let grp = &mut self.groups[e.group as usize];
        let s = e.slot as usize;
        grp.rotation[s] = desc.rotation.normalize();
        grp.scale[s] = desc.scale;
        grp.anim[s] = desc.anim;
        grp.custom[s] = desc.custom;
        grp.flags[s] = desc.flags;
        grp.refresh_offset(s);
        self.move_unchecked(h, e, desc.position);
    }

    /// Changes an instance's animation state (a clip switch, a crossfade's progress). The culling sphere is
    /// recomputed to cover both clips of a crossfade. On error nothing changes.
    pub fn set_animation(&mut self, h: Handle, anim: &AnimState) -> Result<()> {
        let e = self.entry(h, 0)?;
        let grp = &mut self.groups[e.group as usize];
        Self::check_anim(grp, e.group, anim, 0)?;
        let s = e.slot as usize;
        let old = grp.anim[s];
        if (old.clip, old.start_time, old.speed, old.fade_target)
            != (anim.clip, anim.start_time, anim.speed, anim.fade_target)
        {
            // A crossfade's weight alone is not part of what a GPU keeps: it follows from the clock.
            grp.mark_changed(s);
        }
        grp.anim[s] = *anim;
        grp.refresh_offset(s);
        grp.refresh_sphere(s);
        grp.mark_dirty(grp.cluster_of(s) as u32);
        Ok(())
    }

    /// Changes an instance's custom data (tint). On error nothing changes.
    pub fn set_custom(&mut self, h: Handle, custom: Vec4) -> Result<()> {
        let e = self.entry(h, 0)?;
        if !custom.is_finite() {
            return Err(Error::NonFinite {
                what: "custom data",
                index: 0,
            });
        }
        let grp = &mut self.groups[e.group as usize];
        grp.custom[e.slot as usize] = custom;
        grp.mark_changed(e.slot as usize);
        Ok(())
    }

    /// Changes an instance's caller-defined flags.
    pub fn set_flags(&mut self, h: Handle, flags: u32) -> Result<()> {
        let e = self.entry(h, 0)?;
        self.groups[e.group as usize].flags[e.slot as usize] = flags;
        Ok(())
    }

    /// Per-frame cluster maintenance, bounded by `budget`:
    /// 1. up to `budget.reassign` queued instances that are still further than `R` from their cluster's
    ///    centre move to the nearest cluster with room within `R` (or a new one);
    /// 2. up to `budget.refit` dirty clusters get their box and centre recomputed from their members, in
    ///    parallel on the current rayon pool.
    ///
    /// A reassignment may open a cluster and so grow [`InstanceStore::slot_count`]: prepare the culling cache and
    /// output before the next [`crate::CullingJob::run`].
    ///
    /// Queues are first in, first out, so every queued item is served within a bounded number of frames.
    /// Culling is correct whether or not this runs (boxes always hold their members' spheres); maintenance keeps
    /// clusters tight. It does not allocate once the store's queues and cluster blocks have reached their
    /// working sizes.
    pub fn maintain(&mut self, budget: MaintainBudget) -> MaintainStats {
        let mut stats = MaintainStats::default();
        let r2 = self.settings.radius * self.settings.radius;
        let cap = self.settings.capacity as usize;
        // A reassignment may start a cluster; past the slot limit, drifting instances stay where they are.
        while stats.reassigned < budget.reassign && self.slots + cap <= MAX_SLOTS {
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
            self.reassign_unchecked(h.index, e, k as u32);
            stats.reassigned += 1;
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

    fn reassign_unchecked(&mut self, index: u32, e: HandleEntry, from: u32) {
        let grp = &mut self.groups[e.group as usize];
        let s = e.slot as usize;
        let desc = InstanceDesc {
            position: grp.position[s],
            rotation: grp.rotation[s],
            scale: grp.scale[s],
            anim: grp.anim[s],
            custom: grp.custom[s],
            flags: grp.flags[s],
        };
        let state = grp.state[s];
        let to = match grp.find_cluster(desc.position, from) {
            Some(k) => k,
            None => {
                let before = grp.slot_count();
                let k = grp.alloc_cluster();
                self.slots += grp.slot_count() - before;
                k
            }
        };
        // Insert first, so that a cluster freed by the removal is not handed out as the new one.
        let new_slot = grp.push_member(to, &desc, state, index);
        if let Some(moved) = grp.remove_member(s) {
            self.handles[moved as usize].slot = e.slot;
        }
        self.handles[index as usize].slot = new_slot as u32;
    }

    /// Checks every structural invariant in O(instances): every live handle's instance is in exactly one
    /// cluster of its group (the slot's back-reference and the cluster's range agree); live counts match;
    /// every cluster's box holds its members' spheres; spheres match the stored transforms and clips;
    /// centres match members (to rounding); live clusters with room are filed in the grid at exactly their
    /// centre, and full and deleted ones are not. For tests and debugging.
    pub fn check_invariants(&self) -> Result<()> {
        let mut live = 0usize;
        for (i, e) in self.handles.iter().enumerate() {
            if e.generation % 2 == 0 {
                continue;
            }
            live += 1;
            let bad = |what| Error::Invariant {
                what,
                group: e.group,
                cluster: i as u32,
            };
            let grp = self.groups.get(e.group as usize).ok_or(bad("handle names no group"))?;
            let s = e.slot as usize;
            if grp.owner.get(s) != Some(&(i as u32)) {
                return Err(bad(
                    "slot's owner is not the handle (cluster field holds the handle index)",
                ));
            }
            let k = grp.cluster_of(s);
            if (s % grp.cap) as u32 >= grp.clusters[k].len {
                return Err(bad("handle's slot lies outside its cluster's range"));
            }
        }
        if live != self.live {
            return Err(Error::Invariant {
                what: "live count",
                group: 0,
                cluster: 0,
            });
        }
        let mut group_live = 0;
        let mut slots = 0;
        for (g, grp) in self.groups.iter().enumerate() {
            let g = g as u32;
            // The refit queue holds each cluster at most once, exactly those flagged queued, and every dirty
            // cluster is queued: it never outgrows the clusters (no allocation in a steady state).
            let mut in_queue = vec![false; grp.clusters.len()];
            for &k in &grp.dirty {
                let bad = |what| Error::Invariant {
                    what,
                    group: g,
                    cluster: k,
                };
                let seen = in_queue
                    .get_mut(k as usize)
                    .ok_or(bad("refit queue names no cluster"))?;
                if std::mem::replace(seen, true) {
                    return Err(bad("cluster queued for refit twice"));
                }
            }
            for (k, c) in grp.clusters.iter().enumerate() {
                let bad = |what| Error::Invariant {
                    what,
                    group: g,
                    cluster: k as u32,
                };
                if c.queued != in_queue[k] {
                    return Err(bad("cluster's queued flag differs from the refit queue"));
                }
                if c.dirty && !c.queued {
                    return Err(bad("dirty cluster not queued for refit"));
                }
            }
            slots += grp.slot_count();
            let mut members = 0;
            for (k, c) in grp.clusters.iter().enumerate() {
                let bad = |what| Error::Invariant {
                    what,
                    group: g,
                    cluster: k as u32,
                };
                let freed = grp.free_clusters.contains(&(k as u32));
                if c.len == 0 {
                    if !freed || grp.grid.is_linked(k as u32) {
                        return Err(bad("an empty cluster is not deleted"));
                    }
                    continue;
                }
                if freed {
                    return Err(bad("a live cluster is on the free list"));
                }
                if c.len as usize > grp.cap {
                    return Err(bad("cluster over capacity"));
                }
                members += c.len as usize;
                let mut sum = glam::DVec3::ZERO;
                let mut scale = 0.0f64;
                for s in k * grp.cap..k * grp.cap + c.len as usize {
                    let owner = grp.owner[s] as usize;
                    let e = self.handles.get(owner).ok_or(bad("slot owner out of range"))?;
                    if e.generation % 2 == 0 || e.group != g || e.slot as usize != s {
                        return Err(bad("slot's owner handle does not point back at it"));
                    }
                    let (sc, sr) = grp.sphere(s);
                    let (ec, er) = grp.sphere_of(grp.position[s], grp.rotation[s], grp.scale[s], &grp.anim[s]);
                    if sc != ec || sr != er {
                        return Err(bad("stored sphere differs from the instance's transform and clips"));
                    }
                    if !c.aabb.contains_sphere(sc, sr) {
                        return Err(bad("cluster box does not hold a member's sphere"));
                    }
                    sum += grp.position[s].as_dvec3();
                    scale = scale.max(grp.position[s].abs().max_element() as f64);
                }
                let tol = (scale + 1.0) * c.len as f64 * 1e-4;
                if (sum - c.sum.as_dvec3()).abs().max_element() > tol {
                    return Err(bad("cluster position sum drifted from its members"));
                }
                // Every change of a centre or a count re-files the cluster at once.
                if (c.len as usize) < grp.cap {
                    if !grp.grid.is_placed_at(k as u32, c.centre()) {
                        return Err(bad("cluster with room not filed in the grid at its exact centre"));
                    }
                } else if grp.grid.is_linked(k as u32) {
                    return Err(bad("a full cluster is filed in the grid"));
                }
            }
            if members != grp.live {
                return Err(Error::Invariant {
                    what: "group live count differs from its clusters' members",
                    group: g,
                    cluster: 0,
                });
            }
            group_live += members;
        }
        if group_live != self.live || slots != self.slots {
            return Err(Error::Invariant {
                what: "store totals",
                group: 0,
                cluster: 0,
            });
        }
        Ok(())
    }
}

/// Clusters per bulk move from which [`InstanceStore::set_positions`] takes the bulk path: below that, visiting
/// every cluster would cost more than the moves themselves.
const BULK_MOVES_PER_CLUSTER: usize = 8;

/// Moves per piece of the parallel validation of a bulk move.
const BULK_CHECK_CHUNK: usize = 4096;

/// The plain bulk-move write: `positions[i]` to `handles[i]`'s slot, in order (the last position of a repeated
/// handle wins), flagging every touched cluster `moved`. The handles must be live.
fn write_positions(groups: &mut [Group], table: &[HandleEntry], handles: &[Handle], positions: &[Vec3]) {
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
fn write_positions_split(grp: &mut Group, slots: &[u32], positions: &[Vec3]) {
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

/// Queues for reassignment every member of cluster `k` further than `sqrt(r2)` from `centre`.
fn queue_drifters(
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

/// The bulk-move pass: for every cluster of `grp` flagged `moved`, in parallel over clusters, recomputes every
/// member's sphere from its (new) position and sphere offset, then the box and the position sum from the
/// members (a full refit), and counts the members further than `sqrt(r2)` from the new centre.
fn move_refit_group(grp: &mut Group, r2: f32) {
    let cap = grp.cap;
    let lanes = cap / 4;
    grp.clusters
        .par_iter_mut()
        .zip(grp.spheres.par_chunks_mut(lanes))
        .zip(grp.position.par_chunks(cap))
        .zip(grp.offset.par_chunks(cap))
        // Touched clusters bunch together (a marching column is a run of clusters): small pieces let both
        // threads share them (rayon splits a range only so far unless its pieces are stolen).
        .with_max_len(32)
        .for_each(|(((c, spheres), pos), offset)| {
            if !c.moved {
                return;
            }
            let n = c.len as usize;
            let (mut lo, mut hi) = ([Vec4::INFINITY; 3], [Vec4::NEG_INFINITY; 3]);
            let mut sum = Vec3::ZERO;
            for (k, sp) in spheres[..n.div_ceil(4)].iter_mut().enumerate() {
                let lanes = (n - 4 * k).min(4);
                // Four members at a time; lanes past the last member repeat lane 0 (they only feed the box).
                // The same operations as `Group::refresh_sphere`, and the sum in member order.
                let m: [Vec4; 4] = if lanes == 4 {
                    // A full quad (all but a cluster's last): no per-lane tests.
                    let (p, o) = (&pos[4 * k..4 * k + 4], &offset[4 * k..4 * k + 4]);
                    sum += p[0];
                    sum += p[1];
                    sum += p[2];
                    sum += p[3];
                    std::array::from_fn(|l| (p[l] + o[l].truncate()).extend(o[l].w))
                } else {
                    let mut m = [Vec4::ZERO; 4];
                    for (l, m) in m.iter_mut().enumerate() {
                        let i = 4 * k + if l < lanes { l } else { 0 };
                        *m = (pos[i] + offset[i].truncate()).extend(offset[i].w);
                        if l < lanes {
                            sum += pos[i];
                        }
                    }
                    m
                };
                let t = glam::Mat4::from_cols(m[0], m[1], m[2], m[3]).transpose();
                let (x, y, z, r) = (t.x_axis, t.y_axis, t.z_axis, t.w_axis);
                if lanes == 4 {
                    *sp = SoaSphere { x, y, z, r };
                } else {
                    for l in 0..lanes {
                        sp.x[l] = x[l];
                        sp.y[l] = y[l];
                        sp.z[l] = z[l];
                        sp.r[l] = r[l];
                    }
                }
                // `grow` on four lanes: the same operations, lane by lane.
                let pad = (r + x.abs().max(y.abs()).max(z.abs())) * 4e-7;
                let rp = r + pad;
                for (a, v) in [x, y, z].into_iter().enumerate() {
                    lo[a] = lo[a].min(v - rp);
                    hi[a] = hi[a].max(v + rp);
                }
            }
            c.aabb = crate::bounds::Aabb::new(
                Vec3::new(lo[0].min_element(), lo[1].min_element(), lo[2].min_element()),
                Vec3::new(hi[0].max_element(), hi[1].max_element(), hi[2].max_element()),
            );
            c.sum = sum;
            let centre = c.centre();
            c.drifters = pos[..n].iter().filter(|p| centre.distance_squared(**p) > r2).count() as u32;
        });
}

/// The box `grow` builds from the first `n` spheres of `spheres`, four lanes at a time: the same operations,
/// lane by lane, so the same box.
fn fit_spheres(spheres: &[SoaSphere], n: usize) -> crate::bounds::Aabb {
    let (mut lo, mut hi) = ([Vec4::INFINITY; 3], [Vec4::NEG_INFINITY; 3]);
    let lane = Vec4::new(0.0, 1.0, 2.0, 3.0);
    for (k, sp) in spheres.iter().enumerate() {
        // Lanes past the last member repeat lane 0 (stale slots must not widen the box).
        let live = lane.cmplt(Vec4::splat((n - 4 * k) as f32));
        let pick = |v: Vec4| Vec4::select(live, v, Vec4::splat(v.x));
        let (x, y, z, r) = (pick(sp.x), pick(sp.y), pick(sp.z), pick(sp.r));
        let pad = (r + x.abs().max(y.abs()).max(z.abs())) * 4e-7;
        let rp = r + pad;
        for (a, v) in [x, y, z].into_iter().enumerate() {
            lo[a] = lo[a].min(v - rp);
            hi[a] = hi[a].max(v + rp);
        }
    }
    crate::bounds::Aabb::new(
        Vec3::new(lo[0].min_element(), lo[1].min_element(), lo[2].min_element()),
        Vec3::new(hi[0].max_element(), hi[1].max_element(), hi[2].max_element()),
    )
}

/// Refits every cluster of `grp` flagged `refit`, in parallel over clusters, and counts the members further
/// than `sqrt(r2)` from the new centre.
fn refit_group(grp: &mut Group, r2: f32) {
    let cap = grp.cap;
    let lanes = cap / 4;
    grp.clusters
        .par_iter_mut()
        .zip(grp.spheres.par_chunks(lanes))
        .zip(grp.position.par_chunks(cap))
        // Dirty clusters bunch together: small pieces let every thread share them.
        .with_max_len(32)
        .for_each(|((c, spheres), pos)| {
            if !c.refit {
                return;
            }
            c.refit = false;
            let n = c.len as usize;
            c.aabb = fit_spheres(&spheres[..n.div_ceil(4)], n);
            c.sum = pos[..n].iter().fold(Vec3::ZERO, |sum, p| sum + *p);
            let centre = c.centre();
            c.drifters = pos[..n].iter().filter(|p| centre.distance_squared(**p) > r2).count() as u32;
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Aabb;
    use crate::group::grow;

    fn desc() -> GroupDesc {
        GroupDesc {
            mesh: 0,
            material: 0,
            clip_bounds: vec![Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.8, 0.5))],
            lod_thresholds: vec![0.1],
            tier_thresholds: [0.2, 0.05, 0.01],
            rate_thresholds: [0.1, 0.03, 0.008],
            hysteresis: 0.1,
        }
    }

    #[test]
    fn four_lane_fit_is_the_plain_grow() {
        let spheres: Vec<SoaSphere> = (0..8)
            .map(|k| {
                let f =
                    |o: f32| Vec4::from_array(std::array::from_fn(|l| ((k * 4 + l) as f32 * 1.37 + o).sin() * 50.0));
                SoaSphere {
                    x: f(0.0),
                    y: f(1.0),
                    z: f(2.0),
                    r: f(3.0).abs() * 0.01 + 0.5,
                }
            })
            .collect();
        for n in 1..=32 {
            let mut plain = crate::bounds::Aabb::EMPTY;
            for i in 0..n {
                let sp = &spheres[i / 4];
                let l = i % 4;
                grow(&mut plain, Vec3::new(sp.x[l], sp.y[l], sp.z[l]), sp.r[l]);
            }
            assert_eq!(fit_spheres(&spheres[..n.div_ceil(4)], n), plain, "{n} spheres");
        }
    }

    #[test]
    fn split_bulk_write_matches_the_plain_write() {
        let mut store = InstanceStore::new(ClusterSettings {
            radius: 2.0,
            capacity: 16,
        })
        .expect("settings");
        let g = store.add_group(desc()).expect("group");
        let descs: Vec<InstanceDesc> = (0..4000)
            .map(|i| InstanceDesc::at(Vec3::new((i % 64) as f32, 0.0, (i / 64) as f32), 0))
            .collect();
        let mut handles = vec![Handle::default(); descs.len()];
        store.add_many(g, &descs, &mut handles).expect("adds");
        // Every handle moves twice, in a scrambled order: the last position wins.
        let mut movers: Vec<Handle> = (0..2 * handles.len())
            .map(|i| handles[(i * 7919) % handles.len()])
            .collect();
        movers.reverse();
        let positions: Vec<Vec3> = (0..movers.len())
            .map(|i| Vec3::new(i as f32, 1.0, -(i as f32)))
            .collect();
        let slots: Vec<u32> = movers.iter().map(|h| store.handles[h.index as usize].slot).collect();
        let mut plain = store.groups[0].clone();
        write_positions(std::slice::from_mut(&mut plain), &store.handles, &movers, &positions);
        for threads in [1, 2, 3, 5] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a rayon pool");
            let mut split = store.groups[0].clone();
            pool.install(|| write_positions_split(&mut split, &slots, &positions));
            assert_eq!(split.position, plain.position, "{threads} threads");
            assert!(
                split
                    .clusters
                    .iter()
                    .zip(&plain.clusters)
                    .all(|(a, b)| a.moved == b.moved),
                "{threads} threads"
            );
        }
    }

    #[test]
    fn a_bad_bulk_move_reports_the_first_bad_index_and_changes_nothing() {
        let mut store = InstanceStore::new(ClusterSettings {
            radius: 2.0,
            capacity: 16,
        })
        .expect("settings");
        let g = store.add_group(desc()).expect("group");
        let descs: Vec<InstanceDesc> = (0..3 * BULK_CHECK_CHUNK)
            .map(|i| InstanceDesc::at(Vec3::new((i % 64) as f32, 0.0, (i / 64) as f32), 0))
            .collect();
        let mut handles = vec![Handle::default(); descs.len()];
        store.add_many(g, &descs, &mut handles).expect("adds");
        let before = store.groups[0].position.clone();
        let mut positions: Vec<Vec3> = descs.iter().map(|d| d.position + Vec3::ONE).collect();
        // A NaN in a later piece and a stale handle in an earlier one: the earlier index is reported.
        positions[2 * BULK_CHECK_CHUNK + 5] = Vec3::NAN;
        let mut movers = handles.clone();
        movers[BULK_CHECK_CHUNK + 3].generation += 2;
        let err = store.set_positions(&movers, &positions).expect_err("a stale handle");
        assert!(
            matches!(err, Error::StaleHandle { index, .. } if index == BULK_CHECK_CHUNK + 3),
            "{err:?}"
        );
        movers[BULK_CHECK_CHUNK + 3] = handles[BULK_CHECK_CHUNK + 3];
        let err = store.set_positions(&movers, &positions).expect_err("a NaN");
        assert!(
            matches!(err, Error::NonFinite { index, .. } if index == 2 * BULK_CHECK_CHUNK + 5),
            "{err:?}"
        );
        assert_eq!(store.groups[0].position, before, "nothing moved");
        store.check_invariants().expect("invariants hold");
    }

    #[test]
    fn bulk_moves_over_two_groups_refit_at_once_and_the_last_position_wins() {
        let mut store = InstanceStore::new(ClusterSettings {
            radius: 4.0,
            capacity: 8,
        })
        .expect("settings");
        let groups = [
            store.add_group(desc()).expect("group"),
            store.add_group(desc()).expect("group"),
        ];
        let mut handles = Vec::new();
        for i in 0..64 {
            let p = Vec3::new((i % 8) as f32, 0.0, (i / 8) as f32);
            handles.push(store.add(groups[i % 2], &InstanceDesc::at(p, 0)).expect("adds"));
        }
        store.maintain(MaintainBudget {
            reassign: usize::MAX,
            refit: usize::MAX,
        });
        // Every instance moves (a bulk batch), one of them twice, and some far beyond `R`.
        let mut movers = handles.clone();
        let mut positions: Vec<Vec3> = (0..64).map(|i| Vec3::new(i as f32 * 0.7, 1.0, -(i as f32))).collect();
        movers.push(handles[5]);
        positions.push(Vec3::new(100.0, 0.0, 0.0));
        let clusters: usize = store.groups.iter().map(|g| g.clusters.len()).sum();
        assert!(
            movers.len() * BULK_MOVES_PER_CLUSTER >= clusters,
            "the batch takes the bulk path"
        );
        store.set_positions(&movers, &positions).expect("moves");
        store
            .check_invariants()
            .expect("boxes hold spheres, clusters are filed at their centres");
        for (i, h) in handles.iter().enumerate() {
            let want = if i == 5 {
                Vec3::new(100.0, 0.0, 0.0)
            } else {
                positions[i]
            };
            assert_eq!(store.get(*h).expect("live").desc.position, want);
        }
        assert!(
            store
                .groups
                .iter()
                .all(|g| g.clusters.iter().all(|c| !c.moved && !c.dirty))
        );
        assert!(
            !store.reassign.is_empty(),
            "members far from their new centres are queued"
        );
        for _ in 0..16 {
            store.maintain(MaintainBudget {
                reassign: usize::MAX,
                refit: usize::MAX,
            });
        }
        store.check_invariants().expect("after maintenance");
        for h in &handles {
            let d = store
                .cluster_centre(*h)
                .expect("live")
                .distance(store.get(*h).expect("live").desc.position);
            assert!(d <= 4.0 * (1.0 + 1e-4), "{d}");
        }
    }
}
