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

mod bulk_move;
mod crud;
mod invariants;
mod maintain;
mod rebase;
mod refit;
mod slot_limit;
mod validation;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use glam::{Quat, Vec3, Vec4};

use crate::error::{Error, Result};
use crate::group::{Cluster, Group, GroupDesc};
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
    /// Scratch for an `add_many` that may have to roll back: each touched cluster's state before the batch.
    saved_clusters: Vec<(u32, Cluster)>,
    live: usize,
    slots: usize,
    /// The most slots the store may hold (see [`InstanceStore::set_max_slots`]).
    max_slots: usize,
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
            saved_clusters: Vec::new(),
            live: 0,
            slots: 0,
            max_slots: MAX_SLOTS,
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
    /// prepare the culling scratch), and never past [`InstanceStore::max_slots`].
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
}
