//! Adding, removing and changing instances, one at a time or in checked batches (every item is checked
//! before any is applied). Large batches of moves take the parallel path of `bulk_move`.

use glam::{Vec3, Vec4};

use super::{HandleEntry, InstanceStore};
use crate::error::{Error, Result};
use crate::group::Cluster;
use crate::instance::{AnimState, GroupId, Handle, InstanceDesc, TierState};

impl InstanceStore {
    /// Adds one instance to group `g` and returns its handle. On error nothing changes.
    ///
    /// # Errors
    ///
    /// A bad description (see [`InstanceDesc`]), an unknown group, or [`Error::SlotLimit`] when the instance
    /// would need a new cluster block past [`InstanceStore::max_slots`] (no cluster within the radius has room and
    /// no deleted block is free).
    pub fn add(&mut self, g: GroupId, desc: &InstanceDesc) -> Result<Handle> {
        self.check_desc(g, desc, 0)?;
        self.check_room(1)?;
        self.insert(g, desc, 0, None)
    }

    /// Adds `descs.len()` instances to group `g`, writing their handles to `handles` (the same length).
    /// Every description is checked first: on error nothing is added.
    ///
    /// When even a new cluster block per instance stays within [`InstanceStore::max_slots`], the instances go in
    /// one after the other. Otherwise they still do, and the first that would need a block past the limit fails
    /// the batch with [`Error::SlotLimit`]: everything the batch inserted is rolled back (the live instances,
    /// their slots and data, the slot count, the handle table and its free list, the clusters and their free
    /// list are as before; generations of reused handles advance, and the changed-slot bits of slots the batch
    /// wrote may stay set). So a batch fails only when it really needs more slots than the limit leaves.
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
        if self.fits_worst_case(descs.len()) {
            // The cheap bound: no insertion can reach the limit.
            for (i, (d, h)) in descs.iter().zip(handles.iter_mut()).enumerate() {
                *h = self.insert(g, d, i, None)?;
            }
            return Ok(());
        }
        self.add_many_exact(g, descs, handles)
    }

    /// Inserts one valid description into group `g`: into the nearest cluster within the radius that has room,
    /// else a deleted block, else a new block if the slot limit allows it; past the limit it fails with
    /// [`Error::SlotLimit`] naming item `index`, and nothing changes. With `saved`, the state of the cluster it
    /// joins is pushed there the first time the batch changes it (see [`Cluster::saved`]).
    pub(super) fn insert(
        &mut self,
        g: GroupId,
        desc: &InstanceDesc,
        index: usize,
        saved: Option<&mut Vec<(u32, Cluster)>>,
    ) -> Result<Handle> {
        let desc = InstanceDesc {
            rotation: desc.rotation.normalize(),
            ..*desc
        };
        let grp = &mut self.groups[g.0 as usize];
        let k = match grp.find_cluster(desc.position, u32::MAX) {
            Some(k) => k,
            None => {
                if grp.free_clusters.is_empty() && self.slots + grp.cap > self.max_slots {
                    return Err(Error::SlotLimit {
                        index,
                        needed: self.slots + grp.cap,
                        max: self.max_slots,
                    });
                }
                let before = grp.slot_count();
                let k = grp.alloc_cluster();
                self.slots += grp.slot_count() - before;
                k
            }
        };
        if let Some(saved) = saved {
            let c = &mut grp.clusters[k as usize];
            if !c.saved {
                saved.push((k, *c));
                c.saved = true;
            }
        }
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
        let slot = self.groups[g.0 as usize].push_member(k, &desc, TierState::HIDDEN, index);
        let e = &mut self.handles[index as usize];
        e.generation = e.generation.wrapping_add(1) | 1;
        e.group = g.0;
        e.slot = slot as u32;
        self.live += 1;
        Ok(Handle {
            index,
            generation: e.generation,
        })
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

    pub(super) fn remove_unchecked(&mut self, index: u32, e: HandleEntry) {
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

    pub(super) fn move_unchecked(&mut self, h: Handle, e: HandleEntry, position: Vec3) {
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
}
