//! The culling output: [`CullOutput`], one visible-index buffer with a [`DrawRange`] per (group, LOD, tier).

use crate::instance::{GroupId, Tier};
use crate::limits::TIER_COUNT;
use crate::store::InstanceStore;

/// One (group, LOD, tier) list of the output: `instance_count` slot indices starting at `first_instance` in
/// [`CullOutput::indices`].
///
/// Maps onto wgpu's `DrawIndexedIndirectArgs` as `{ index_count: <the LOD's index count>, instance_count,
/// first_index: <the LOD's first index>, base_vertex: <the LOD's base vertex>, first_instance }`: with the
/// visible-index buffer bound as a storage buffer, the vertex shader reads
/// `visible[instance_index]` (which starts at `first_instance`) to find the instance's slot, and from it the
/// instance record. Slots index the group's storage (see [`Instance::slot`](crate::Instance::slot)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawRange {
    /// The draw group.
    pub group: GroupId,
    /// The LOD.
    pub lod: u8,
    /// The representation tier.
    pub tier: Tier,
    /// The offset of the list in [`CullOutput::indices`].
    pub first_instance: u32,
    /// The number of visible instances in the list.
    pub instance_count: u32,
}

/// The culling output: one visible-index buffer and one [`DrawRange`] per (group, LOD, tier), in the order
/// group, then LOD, then tier. Within a list, slots ascend.
///
/// Size contract: [`CullOutput::prepare`] sizes the buffer for every slot of the store (the worst case,
/// everything visible) and the ranges for every group's LOD count; `run` checks it and never allocates.
#[derive(Clone, Debug, Default)]
pub struct CullOutput {
    pub(super) indices: Vec<u32>,
    pub(super) visible: usize,
    pub(super) draws: Vec<DrawRange>,
    pub(super) group_first_draw: Vec<u32>,
}

impl CullOutput {
    /// An empty output; call [`CullOutput::prepare`] before culling.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the output for `store` and resets its draw ranges, allocating only when the store grew. Call it
    /// before every run that follows an add or [`InstanceStore::maintain`] (both can grow the store's slots; see
    /// the crate docs), every frame in a frame step.
    pub fn prepare(&mut self, store: &InstanceStore) {
        if self.indices.len() < store.slot_count() {
            self.indices.resize(store.slot_count(), 0);
        }
        self.group_first_draw.clear();
        self.draws.clear();
        for (g, grp) in store.groups.iter().enumerate() {
            self.group_first_draw.push(self.draws.len() as u32);
            for lod in 0..grp.desc.lod_count() {
                for tier in Tier::ALL {
                    self.draws.push(DrawRange {
                        group: GroupId(g as u32),
                        lod: lod as u8,
                        tier,
                        first_instance: 0,
                        instance_count: 0,
                    });
                }
            }
        }
        self.visible = 0;
    }

    /// Every visible slot index of the last run, list after list.
    pub fn indices(&self) -> &[u32] {
        &self.indices[..self.visible]
    }

    /// Every (group, LOD, tier) range.
    pub fn draws(&self) -> &[DrawRange] {
        &self.draws
    }

    /// The range of (group, LOD, tier), if the group and LOD exist.
    pub fn draw(&self, group: GroupId, lod: u8, tier: Tier) -> Option<DrawRange> {
        let first = *self.group_first_draw.get(group.0 as usize)? as usize;
        let d = self.draws.get(first + lod as usize * TIER_COUNT + tier as usize)?;
        (d.group == group && d.lod == lod).then_some(*d)
    }

    /// The visible slots of (group, LOD, tier); empty if the group or LOD does not exist.
    pub fn list(&self, group: GroupId, lod: u8, tier: Tier) -> &[u32] {
        match self.draw(group, lod, tier) {
            Some(d) => &self.indices[d.first_instance as usize..(d.first_instance + d.instance_count) as usize],
            None => &[],
        }
    }
}
