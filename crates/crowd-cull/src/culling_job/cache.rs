//! [`CullingCache`]: the culling job's scratch buffers (per-slot bucket codes, staging, per-chunk counts), kept
//! between frames.

use super::{CHUNK_CLUSTERS, HIDDEN_CODE};
use crate::group::Group;
use crate::limits::MAX_BUCKETS;
use crate::store::InstanceStore;

/// Scratch buffers of [`CullingJob`](crate::CullingJob), kept between frames.
#[derive(Clone, Debug, Default)]
pub struct CullingCache {
    pub(super) codes: Vec<u8>,
    pub(super) staging: Vec<u32>,
    pub(super) counts: Vec<u32>,
}

impl CullingCache {
    /// An empty cache; call [`CullingCache::prepare`] before culling.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the cache for `store`'s largest group, allocating only when it grew. Call it when
    /// [`CullOutput::prepare`](crate::CullOutput::prepare) is called: before every run that follows an add or
    /// [`InstanceStore::maintain`].
    pub fn prepare(&mut self, store: &InstanceStore) {
        let (slots, chunks) = cache_needs(store);
        if self.codes.len() < slots {
            self.codes.resize(slots, HIDDEN_CODE);
            self.staging.resize(slots, 0);
        }
        if self.counts.len() < chunks * MAX_BUCKETS {
            self.counts.resize(chunks * MAX_BUCKETS, 0);
        }
    }
}

pub(super) fn cache_needs(store: &InstanceStore) -> (usize, usize) {
    let slots = store.groups.iter().map(Group::slot_count).max().unwrap_or(0);
    let chunks = store
        .groups
        .iter()
        .map(|g| g.clusters.len().div_ceil(CHUNK_CLUSTERS))
        .max()
        .unwrap_or(0);
    (slots, chunks)
}
