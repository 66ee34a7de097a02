//! `CullingJob`: clusters, then instances, against the frustum; LOD, tier and update rate from screen size
//! with hysteresis; visible lists per (group, LOD, tier) with indirect-draw counts.
//!
//! Per group, clusters are processed in parallel in chunks of [`CHUNK_CLUSTERS`]. A cluster's box is tested
//! against the six planes: outside, the cluster is skipped; fully inside, its instances skip the sphere test;
//! otherwise each instance's sphere is tested, four at a time (glam `Vec4` lanes). Each visible instance gets
//! its levels, and the chunk counts and sorts its visible slots by bucket in its own part of a staging buffer.
//! A fully inside cluster whose screen-size range (smallest radius over the box's far depth to largest radius
//! over its near depth) lies inside one level band of every table, clear of the hysteresis edges, gives all
//! its members the same levels in bulk, and the sort copies its slots as one run.
//! A serial merge then copies each bucket's runs, chunk by chunk, into one contiguous output buffer.

mod cache;
mod chunk;
mod levels;
mod output;

#[cfg(test)]
mod tests;

use rayon::prelude::*;

use crate::camera::CullCamera;
use crate::error::{Error, Result};
use crate::limits::{MAX_BUCKETS, TIER_COUNT};
use crate::store::InstanceStore;
use cache::cache_needs;
use chunk::{Chunk, Planes, cull_chunk};
use levels::{Edges, Levels};

pub use cache::CullingCache;
pub use output::{CullOutput, DrawRange};

/// Clusters per parallel work item: enough work (up to 4,096 instances at capacity 256) to amortise rayon's
/// scheduling, and enough items (about 250 at a million instances) to balance two to sixteen cores.
const CHUNK_CLUSTERS: usize = 16;

/// The marker for "not visible" in the per-slot bucket codes.
const HIDDEN_CODE: u8 = u8::MAX;

/// Culls every instance of a store against a camera and picks LODs, tiers and update rates.
///
/// Validity rules, checked by [`CullingJob::validate`]: `camera` passes [`CullCamera::validate`] (no NaN or
/// infinite planes); `cache` and `output` were prepared for the store as it is now (after the last add).
///
/// Effects: `output` holds the visible lists and ranges (surplus buffer space past the visible count is left
/// as it was); every instance's [`TierState`](crate::TierState) in the store is updated. A visible instance gets
/// its LOD, tier and rate from its screen size with the group's hysteresis, the `VISIBLE` flag, and `INTERPOLATE`
/// when its rate divisor is above 1. A culled instance keeps its LOD and tier, loses `VISIBLE`, and is
/// updated every 8th frame with interpolation.
///
/// Conservative: an instance is dropped only when its culling sphere lies wholly outside one plane.
/// Runs on the current rayon pool and never allocates.
#[derive(Debug)]
pub struct CullingJob<'a> {
    /// The instances; their tier states are written.
    pub store: &'a mut InstanceStore,
    /// The camera.
    pub camera: &'a CullCamera,
    /// Scratch buffers.
    pub cache: &'a mut CullingCache,
    /// The visible lists.
    pub output: &'a mut CullOutput,
}

impl CullingJob<'_> {
    /// Checks the rules of the type's docs, in O(groups).
    pub fn validate(&self) -> Result<()> {
        self.camera.validate()?;
        let (slots, chunks) = cache_needs(self.store);
        if self.cache.codes.len() < slots || self.cache.staging.len() < slots {
            return Err(Error::NotPrepared { what: "cache" });
        }
        if self.cache.counts.len() < chunks * MAX_BUCKETS {
            return Err(Error::NotPrepared { what: "cache" });
        }
        if self.output.indices.len() < self.store.slot_count() {
            return Err(Error::NotPrepared { what: "output" });
        }
        if self.output.group_first_draw.len() != self.store.groups.len() {
            return Err(Error::NotPrepared { what: "output" });
        }
        for (g, grp) in self.store.groups.iter().enumerate() {
            let first = self.output.group_first_draw[g] as usize;
            let end = first + grp.desc.lod_count() * TIER_COUNT;
            let next = self
                .output
                .group_first_draw
                .get(g + 1)
                .map_or(self.output.draws.len(), |&n| n as usize);
            if end != next {
                return Err(Error::NotPrepared { what: "output" });
            }
        }
        Ok(())
    }

    /// Culls; returns the number of visible instances. See the type's docs.
    pub fn run(&mut self) -> Result<usize> {
        self.validate()?;
        let planes = Planes::new(self.camera);
        let mut cursor = 0usize;
        let out = &mut *self.output;
        for (g, grp) in self.store.groups.iter_mut().enumerate() {
            let first_draw = out.group_first_draw[g] as usize;
            let buckets = grp.desc.lod_count() * TIER_COUNT;
            let slots = grp.slot_count();
            let cap = grp.cap;
            let chunk_slots = CHUNK_CLUSTERS * cap;
            let chunks = grp.clusters.len().div_ceil(CHUNK_CLUSTERS);
            let codes = &mut self.cache.codes[..slots];
            let staging = &mut self.cache.staging[..slots];
            let counts = &mut self.cache.counts[..chunks * MAX_BUCKETS];
            let levels = Levels {
                lod: grp.lod,
                tier: grp.tier,
                rate: grp.rate,
                edges: Edges::new(&grp.desc),
            };
            grp.clusters
                .par_chunks_mut(CHUNK_CLUSTERS)
                .zip(grp.spheres.par_chunks(chunk_slots / 4))
                .zip(grp.state.par_chunks_mut(chunk_slots))
                .zip(codes.par_chunks_mut(chunk_slots))
                .zip(staging.par_chunks_mut(chunk_slots))
                .zip(counts.par_chunks_mut(MAX_BUCKETS))
                .enumerate()
                .for_each(|(i, (((((clusters, spheres), states), codes), staging), counts))| {
                    let mut chunk = Chunk {
                        clusters,
                        spheres,
                        cap,
                        base: (i * chunk_slots) as u32,
                    };
                    cull_chunk(&mut chunk, &planes, &levels, states, codes, staging, counts);
                });
            // Merge: bucket-major, chunks in order within a bucket, so that every list ascends.
            let mut start = [0u32; MAX_BUCKETS];
            let mut total = cursor as u32;
            for (b, s) in start.iter_mut().enumerate().take(buckets) {
                *s = total;
                let n: u32 = counts.chunks(MAX_BUCKETS).map(|c| c[b]).sum();
                out.draws[first_draw + b].first_instance = total;
                out.draws[first_draw + b].instance_count = n;
                total += n;
            }
            for (c, chunk_counts) in counts.chunks(MAX_BUCKETS).enumerate() {
                let mut local = c * chunk_slots;
                for b in 0..buckets {
                    let n = chunk_counts[b] as usize;
                    if n > 0 {
                        let dst = start[b] as usize;
                        out.indices[dst..dst + n].copy_from_slice(&staging[local..local + n]);
                        start[b] += n as u32;
                        local += n;
                    }
                }
            }
            cursor = total as usize;
        }
        out.visible = cursor;
        Ok(cursor)
    }
}

const _: () = assert!(CHUNK_CLUSTERS <= 32, "cluster visibility bits fit a u32");
