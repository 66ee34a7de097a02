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

use glam::Vec4;
use rayon::prelude::*;

use crate::bounds::Aabb;
use crate::camera::CullCamera;
use crate::error::{Error, Result};
use crate::group::{Cluster, Group, GroupDesc, LevelTable, SoaSphere};
use crate::instance::{GroupId, Tier, TierState};
use crate::limits::{MAX_BUCKETS, MAX_LODS, RATE_COUNT, TIER_COUNT};
use crate::store::InstanceStore;

/// Clusters per parallel work item: enough work (up to 4,096 instances at capacity 256) to amortise rayon's
/// scheduling, and enough items (about 250 at a million instances) to balance two to sixteen cores.
pub const CHUNK_CLUSTERS: usize = 16;

/// The marker for "not visible" in the per-slot bucket codes.
const HIDDEN_CODE: u8 = u8::MAX;

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
    indices: Vec<u32>,
    visible: usize,
    draws: Vec<DrawRange>,
    group_first_draw: Vec<u32>,
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

/// Scratch buffers of [`CullingJob`], kept between frames.
#[derive(Clone, Debug, Default)]
pub struct CullingCache {
    codes: Vec<u8>,
    staging: Vec<u32>,
    counts: Vec<u32>,
}

impl CullingCache {
    /// An empty cache; call [`CullingCache::prepare`] before culling.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the cache for `store`'s largest group, allocating only when it grew. Call it when
    /// [`CullOutput::prepare`] is called: before every run that follows an add or [`InstanceStore::maintain`].
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

fn cache_needs(store: &InstanceStore) -> (usize, usize) {
    let slots = store.groups.iter().map(Group::slot_count).max().unwrap_or(0);
    let chunks = store
        .groups
        .iter()
        .map(|g| g.clusters.len().div_ceil(CHUNK_CLUSTERS))
        .max()
        .unwrap_or(0);
    (slots, chunks)
}

/// Culls every instance of a store against a camera and picks LODs, tiers and update rates.
///
/// Validity rules, checked by [`CullingJob::validate`]: `camera` passes [`CullCamera::validate`] (no NaN or
/// infinite planes); `cache` and `output` were prepared for the store as it is now (after the last add).
///
/// Effects: `output` holds the visible lists and ranges (surplus buffer space past the visible count is left
/// as it was); every instance's [`TierState`] in the store is updated. A visible instance gets its LOD,
/// tier and rate from its screen size with the group's hysteresis, the `VISIBLE` flag, and `INTERPOLATE`
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

/// The camera, splatted for four-lane tests.
struct Planes {
    planes: [Vec4; 6],
    px: [Vec4; 6],
    py: [Vec4; 6],
    pz: [Vec4; 6],
    pw: [Vec4; 6],
    depth: [Vec4; 4],
    depth_plane: Vec4,
    proj_scale: Vec4,
}

impl Planes {
    fn new(cam: &CullCamera) -> Self {
        let p = cam.planes;
        let d = cam.depth_plane;
        Self {
            planes: p,
            px: p.map(|p| Vec4::splat(p.x)),
            py: p.map(|p| Vec4::splat(p.y)),
            pz: p.map(|p| Vec4::splat(p.z)),
            pw: p.map(|p| Vec4::splat(p.w)),
            depth: [Vec4::splat(d.x), Vec4::splat(d.y), Vec4::splat(d.z), Vec4::splat(d.w)],
            depth_plane: d,
            proj_scale: Vec4::splat(cam.proj_scale),
        }
    }
}

struct Levels {
    lod: LevelTable,
    tier: LevelTable,
    rate: LevelTable,
    edges: Edges,
}

/// `2^23`: added to a whole number below it, it leaves that number in the low mantissa bits.
const MAGIC: f32 = 8_388_608.0;

/// A group's LOD, tier and rate boundaries, splatted: the same edges as its [`LevelTable`]s (`t * (1 - h)`
/// and `t * (1 + h)`, computed the same way), for a per-instance path that stays in float lanes.
struct Edges {
    lod_lo: [Vec4; MAX_LODS - 1],
    lod_hi: [Vec4; MAX_LODS - 1],
    lods: usize,
    tier_lo: [Vec4; TIER_COUNT - 1],
    tier_hi: [Vec4; TIER_COUNT - 1],
    rate_lo: [Vec4; RATE_COUNT - 1],
    rate_hi: [Vec4; RATE_COUNT - 1],
}

impl Edges {
    fn new(desc: &GroupDesc) -> Self {
        let h = desc.hysteresis;
        let lo = |t: f32| Vec4::splat(t * (1.0 - h));
        let hi = |t: f32| Vec4::splat(t * (1.0 + h));
        let mut lod_lo = [Vec4::ZERO; MAX_LODS - 1];
        let mut lod_hi = [Vec4::ZERO; MAX_LODS - 1];
        for (i, &t) in desc.lod_thresholds.iter().take(MAX_LODS - 1).enumerate() {
            lod_lo[i] = lo(t);
            lod_hi[i] = hi(t);
        }
        Self {
            lod_lo,
            lod_hi,
            lods: desc.lod_thresholds.len().min(MAX_LODS - 1),
            tier_lo: desc.tier_thresholds.map(lo),
            tier_hi: desc.tier_thresholds.map(hi),
            rate_lo: desc.rate_thresholds.map(lo),
            rate_hi: desc.rate_thresholds.map(hi),
        }
    }

    /// The new levels of four instances with screen sizes `s` whose previous LOD, tier and rate levels are
    /// `prev`: `prev.clamp(L, H)` per table, with `L` and `H` of [`LevelTable::bounds4`] (`max` then `min`, the
    /// closed form of hysteresis). Returns, per lane, the visible instance's new [`TierState`] as a little-endian
    /// `[lod, tier, rate, flags]` word, and the bucket `lod * TIER_COUNT + tier`.
    ///
    /// Levels are counted, clamped and packed in float lanes, all whole numbers far below `2^23`: adding
    /// [`MAGIC`] leaves each in the low mantissa bits, which are read as integers with no float-to-integer
    /// conversion (Rust's saturating `as` costs compares per value).
    #[inline(always)]
    fn levels4(&self, s: Vec4, prev: [Vec4; 3]) -> ([u32; 4], [u32; 4]) {
        #[inline(always)]
        fn clamp(s: Vec4, lo: &[Vec4], hi: &[Vec4], prev: Vec4) -> Vec4 {
            let mut l = Vec4::ZERO;
            let mut h = Vec4::ZERO;
            for (lo, hi) in lo.iter().zip(hi) {
                l += Vec4::select(s.cmplt(*lo), Vec4::ONE, Vec4::ZERO);
                h += Vec4::select(s.cmplt(*hi), Vec4::ONE, Vec4::ZERO);
            }
            prev.max(l).min(h)
        }
        let lod = clamp(s, &self.lod_lo[..self.lods], &self.lod_hi[..self.lods], prev[0]);
        let tier = clamp(s, &self.tier_lo, &self.tier_hi, prev[1]);
        let rate = clamp(s, &self.rate_lo, &self.rate_hi, prev[2]);
        let magic = Vec4::splat(MAGIC);
        let word = lod + tier * 256.0 + rate * 65_536.0 + magic;
        // The flags ride above the bucket: `VISIBLE`, and `INTERPOLATE` when the rate is above 1.
        let visible = f32::from(TierState::VISIBLE);
        let flags = Vec4::select(
            rate.cmpgt(Vec4::ZERO),
            Vec4::splat(visible + f32::from(TierState::INTERPOLATE)),
            Vec4::splat(visible),
        );
        let bucket = lod * TIER_COUNT as f32 + tier + flags * 256.0 + magic;
        let (word, bucket) = (word.to_array(), bucket.to_array());
        let mut states = [0; 4];
        let mut buckets = [0; 4];
        for l in 0..4 {
            let (w, b) = (word[l].to_bits(), bucket[l].to_bits());
            states[l] = (w & 0x00FF_FFFF) | (b & 0xFF00) << 16;
            buckets[l] = b & 0xFF;
        }
        (states, buckets)
    }
}

struct Chunk<'a> {
    clusters: &'a mut [Cluster],
    spheres: &'a [SoaSphere],
    cap: usize,
    base: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Outside,
    Partial,
    Inside,
}

/// Where a box lies against the six planes.
fn classify(aabb: &Aabb, planes: &[Vec4; 6]) -> Class {
    let c = aabb.center();
    let e = aabb.half_extent();
    let mut inside = true;
    for p in planes {
        let n = p.truncate();
        let d = n.dot(c) + p.w;
        let r = n.abs().dot(e);
        if d + r < 0.0 {
            return Class::Outside;
        }
        if d - r < 0.0 {
            inside = false;
        }
    }
    if inside { Class::Inside } else { Class::Partial }
}

#[inline(always)]
fn hide(st: &mut TierState) {
    st.rate_log2 = TierState::HIDDEN.rate_log2;
    st.flags = TierState::HIDDEN.flags;
}

fn cull_chunk(
    chunk: &mut Chunk<'_>,
    planes: &Planes,
    levels: &Levels,
    states: &mut [TierState],
    codes: &mut [u8],
    staging: &mut [u32],
    counts: &mut [u32],
) {
    let counts: &mut [u32; MAX_BUCKETS] = counts.try_into().expect("the caller passes MAX_BUCKETS counts");
    counts.fill(0);
    let cap = chunk.cap;
    let mut any_visible = 0u32;
    // Clusters whose members all got one bucket, and that bucket.
    let mut uniform = 0u32;
    let mut uniform_code = [0u8; CHUNK_CLUSTERS];
    for (ci, c) in chunk.clusters.iter_mut().enumerate() {
        let n = c.len as usize;
        if n == 0 {
            continue;
        }
        let off = ci * cap;
        let class = classify(&c.aabb, &planes.planes);
        if class == Class::Outside {
            if !c.hidden_clean {
                for st in &mut states[off..off + n] {
                    hide(st);
                }
                c.hidden_clean = true;
            }
            continue;
        }
        c.hidden_clean = false;
        any_visible |= 1 << ci;
        let lane0 = off / 4;
        if class == Class::Inside
            && let Some(st) = uniform_levels(&c.aabb, &chunk.spheres[lane0..lane0 + n.div_ceil(4)], n, planes, levels)
        {
            // Every member is visible and lands on the same levels whatever its previous ones: write them in
            // bulk, and let the sort below copy the cluster's slots as one run.
            states[off..off + n].fill(st);
            let code = st.lod * TIER_COUNT as u8 + st.tier;
            counts[code as usize % MAX_BUCKETS] += n as u32;
            uniform |= 1 << ci;
            uniform_code[ci] = code;
            continue;
        }
        for k in 0..n.div_ceil(4) {
            let SoaSphere { x, y, z, r } = chunk.spheres[lane0 + k];
            let lanes = (n - 4 * k).min(4);
            let mut mask = (1u32 << lanes) - 1;
            if class == Class::Partial {
                let neg_r = -r;
                let dist = |p: usize| planes.px[p] * x + planes.py[p] * y + planes.pz[p] * z + planes.pw[p];
                let mut m = dist(0).cmpge(neg_r);
                for p in 1..6 {
                    m &= dist(p).cmpge(neg_r);
                }
                mask &= m.bitmask();
            }
            let depth = planes.depth[0] * x + planes.depth[1] * y + planes.depth[2] * z + planes.depth[3];
            // Screen size, one division per four instances; at or behind the eye it is infinite (finest).
            let size = Vec4::select(depth.cmpgt(Vec4::ZERO), r * planes.proj_scale / depth, Vec4::INFINITY);
            let s0 = off + 4 * k;
            let states = &mut states[s0..s0 + lanes];
            let codes = &mut codes[s0..s0 + lanes];
            // The previous levels, in float lanes (lanes past the last member read as 0 and are not written).
            let mut prev = [[0.0f32; 4]; 3];
            for (l, st) in states.iter().enumerate() {
                prev[0][l] = f32::from(st.lod);
                prev[1][l] = f32::from(st.tier);
                prev[2][l] = f32::from(st.rate_log2);
            }
            let (words, bucket) = levels.edges.levels4(size, prev.map(Vec4::from_array));
            for (l, (st, code)) in states.iter_mut().zip(codes.iter_mut()).enumerate() {
                if mask & (1 << l) != 0 {
                    let [lod, tier, rate_log2, flags] = words[l].to_le_bytes();
                    *st = TierState {
                        lod,
                        tier,
                        rate_log2,
                        flags,
                    };
                    let c = bucket[l] as usize;
                    *code = c as u8;
                    counts[c % MAX_BUCKETS] += 1;
                } else {
                    hide(st);
                    *code = HIDDEN_CODE;
                }
            }
        }
    }
    if any_visible == 0 {
        return;
    }
    // Counting sort of the chunk's visible slots by bucket, into the chunk's part of the staging buffer.
    let mut next = [0u32; MAX_BUCKETS];
    let mut sum = 0;
    for (n, &c) in next.iter_mut().zip(counts.iter()) {
        *n = sum;
        sum += c;
    }
    for (ci, c) in chunk.clusters.iter().enumerate() {
        if any_visible & (1 << ci) == 0 {
            continue;
        }
        let off = ci * cap;
        if uniform & (1 << ci) != 0 {
            let n = &mut next[uniform_code[ci] as usize % MAX_BUCKETS];
            let first = chunk.base + off as u32;
            let dst = &mut staging[*n as usize..*n as usize + c.len as usize];
            for (i, d) in dst.iter_mut().enumerate() {
                *d = first + i as u32;
            }
            *n += c.len;
            continue;
        }
        for (i, &code) in codes[off..off + c.len as usize].iter().enumerate() {
            if code != HIDDEN_CODE {
                let n = &mut next[code as usize % MAX_BUCKETS];
                staging[*n as usize] = chunk.base + (off + i) as u32;
                *n += 1;
            }
        }
    }
}

/// The levels every member of a cluster wholly inside the frustum gets, when they are the same for all of them
/// whatever their previous levels; `None` otherwise (the members then take the per-instance path).
///
/// Each member's screen size `r * proj_scale / depth` lies between the smallest radius over the largest depth
/// of the cluster's box and the largest radius over the smallest depth (the box holds every member's centre).
/// Both ends are widened by far more than the rounding of the per-instance arithmetic. When, for each of the
/// LOD, tier and rate tables, both ends give the same lower and upper level bounds `L == H`, every member's
/// bounds are that level too (the bounds decrease with screen size), so `prev.clamp(L, H)` is that level for
/// every previous level: exactly what the per-instance path computes.
#[inline]
fn uniform_levels(aabb: &Aabb, spheres: &[SoaSphere], n: usize, planes: &Planes, levels: &Levels) -> Option<TierState> {
    let dp = planes.depth_plane;
    let normal = dp.truncate();
    let (c, e) = (aabb.center(), aabb.half_extent());
    let mid = normal.dot(c) + dp.w;
    let reach = normal.abs().dot(e);
    let margin = 1e-5 * (normal.abs().dot(c.abs() + e) + dp.w.abs());
    let (near, far) = (mid - reach - margin, mid + reach + margin);
    if near.is_nan() || near <= 0.0 {
        return None;
    }
    let mut r_min = Vec4::INFINITY;
    let mut r_max = Vec4::NEG_INFINITY;
    for (k, sp) in spheres.iter().enumerate() {
        let lanes = (n - 4 * k).min(4);
        // Lanes past the last member hold stale data; lane 0 always holds a member.
        let r = Vec4::select(LANE.cmplt(Vec4::splat(lanes as f32)), sp.r, Vec4::splat(sp.r.x));
        r_min = r_min.min(r);
        r_max = r_max.max(r);
    }
    let s_lo = r_min.min_element() * planes.proj_scale.x / far * (1.0 - 1e-5);
    let s_hi = r_max.max_element() * planes.proj_scale.x / near * (1.0 + 1e-5);
    let s = Vec4::new(s_lo, s_hi, s_lo, s_hi);
    let lod = levels.lod.uniform4(s)?;
    let tier = levels.tier.uniform4(s)?;
    let rate = levels.rate.uniform4(s)?;
    Some(TierState {
        lod,
        tier,
        rate_log2: rate,
        flags: TierState::VISIBLE | if rate > 0 { TierState::INTERPOLATE } else { 0 },
    })
}

/// Lane indices.
const LANE: Vec4 = Vec4::new(0.0, 1.0, 2.0, 3.0);

const _: () = assert!(CHUNK_CLUSTERS <= 32, "cluster visibility bits fit a u32");

#[cfg(test)]
mod tests {
    use glam::Vec3;

    use super::*;
    use crate::limits::MAX_HYSTERESIS;
    use crate::reference::{cull_reference_to_vec, level_reference};
    use crate::{Aabb, ClusterSettings, GroupDesc, InstanceDesc};

    /// The packed float-lane levels of [`Edges::levels4`] against the plain twin [`level_reference`], exactly:
    /// every table length, every previous level, and screen sizes on, just off and between every edge.
    #[test]
    fn packed_levels_match_the_reference_at_and_around_every_edge() {
        for lods in 1..MAX_LODS {
            for h in [0.0, 0.1, 0.25, MAX_HYSTERESIS] {
                let lod_thresholds: Vec<f32> = (0..lods).map(|i| 0.3 / (1.7f32).powi(i as i32)).collect();
                let desc = GroupDesc {
                    mesh: 0,
                    material: 0,
                    clip_bounds: vec![Aabb::new(Vec3::ZERO, Vec3::ONE)],
                    lod_thresholds,
                    tier_thresholds: [0.2, 0.05, 0.01],
                    rate_thresholds: [0.1, 0.03, 0.008],
                    hysteresis: h,
                };
                let edges = Edges::new(&desc);
                let mut sizes = vec![0.0, 1e-6, 1.0, f32::INFINITY, f32::NAN];
                let all = desc
                    .lod_thresholds
                    .iter()
                    .chain(&desc.tier_thresholds)
                    .chain(&desc.rate_thresholds);
                for &t in all {
                    for e in [t * (1.0 - h), t * (1.0 + h), t] {
                        sizes.extend([e, e.next_down(), e.next_up(), e * 0.97, e * 1.03]);
                    }
                }
                for quad in sizes.chunks(4) {
                    let mut s = [0.5f32; 4];
                    s[..quad.len()].copy_from_slice(quad);
                    for prev_lod in 0..=lods as u8 {
                        for prev_tier in 0..TIER_COUNT as u8 {
                            for prev_rate in 0..RATE_COUNT as u8 {
                                // Different previous levels in each lane.
                                let p = |l: u8, n: u8| (l + n) % (n + 1);
                                let prev = [
                                    Vec4::from_array([0, 1, 2, 3].map(|l| f32::from(p(l + prev_lod, lods as u8)))),
                                    Vec4::from_array([0, 1, 2, 3].map(|l| f32::from(p(l + prev_tier, 3)))),
                                    Vec4::from_array([0, 1, 2, 3].map(|l| f32::from(p(l + prev_rate, 3)))),
                                ];
                                let (words, buckets) = edges.levels4(Vec4::from_array(s), prev);
                                for l in 0..4 {
                                    let (pl, pt, pr) = (prev[0][l] as u8, prev[1][l] as u8, prev[2][l] as u8);
                                    let lod = level_reference(&desc.lod_thresholds, h, s[l], pl);
                                    let tier = level_reference(&desc.tier_thresholds, h, s[l], pt);
                                    let rate = level_reference(&desc.rate_thresholds, h, s[l], pr);
                                    assert_eq!(
                                        (words[l], buckets[l]),
                                        (
                                            u32::from_le_bytes([
                                                lod,
                                                tier,
                                                rate,
                                                TierState::VISIBLE | if rate > 0 { TierState::INTERPOLATE } else { 0 }
                                            ]),
                                            u32::from(lod) * TIER_COUNT as u32 + u32::from(tier)
                                        ),
                                        "lods {lods}, h {h}, s {}, prev {pl} {pt} {pr}",
                                        s[l]
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// A crowd of 16 × 16 instances 1 m apart, in clusters of 64, and a camera looking at it along -z from
    /// `distance` metres (every cluster wholly inside the frustum).
    fn crowd() -> InstanceStore {
        let mut store = InstanceStore::new(ClusterSettings {
            radius: 6.0,
            capacity: 64,
        })
        .expect("settings");
        let g = store
            .add_group(GroupDesc {
                mesh: 0,
                material: 0,
                clip_bounds: vec![Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.8, 0.5))],
                lod_thresholds: vec![0.1, 0.01],
                tier_thresholds: [0.2, 0.05, 0.005],
                rate_thresholds: [0.1, 0.03, 0.004],
                hysteresis: 0.1,
            })
            .expect("group");
        for i in 0..256 {
            let mut d = InstanceDesc::at(Vec3::new((i % 16) as f32 - 8.0, 0.0, (i / 16) as f32 - 8.0), 0);
            d.scale = 0.9 + 0.2 * ((i * 37 % 17) as f32 / 16.0);
            store.add(g, &d).expect("adds");
        }
        store
    }

    fn camera(distance: f32) -> CullCamera {
        let eye = Vec3::new(0.0, 1.0, distance);
        CullCamera::perspective(eye, Vec3::new(0.0, 1.0, 0.0), Vec3::Y, 0.8, 1.0, 0.1, 10_000.0)
    }

    /// Culls with the job and checks every instance's levels against the plain twin.
    fn cull_and_compare(store: &mut InstanceStore, cam: &CullCamera) -> usize {
        let expected = cull_reference_to_vec(store, cam);
        let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
        cache.prepare(store);
        output.prepare(store);
        let visible = CullingJob {
            store,
            camera: cam,
            cache: &mut cache,
            output: &mut output,
        }
        .run()
        .expect("culls");
        assert_eq!(visible, expected.len());
        for r in &expected {
            let st = store.get(r.handle).expect("live").state;
            assert_eq!((st.lod, st.tier(), st.rate_log2), (r.lod, r.tier, r.rate_log2), "{r:?}");
            assert!(output.list(r.group, r.lod, r.tier).contains(&r.slot));
        }
        visible
    }

    /// Which clusters of group 0 take the bulk path of [`uniform_levels`] for `cam`.
    fn uniform_clusters(store: &InstanceStore, cam: &CullCamera) -> Vec<bool> {
        let planes = Planes::new(cam);
        let grp = &store.groups[0];
        let levels = Levels {
            lod: grp.lod,
            tier: grp.tier,
            rate: grp.rate,
            edges: Edges::new(&grp.desc),
        };
        grp.clusters
            .iter()
            .enumerate()
            .filter(|(_, c)| c.len > 0)
            .map(|(k, c)| {
                assert!(classify(&c.aabb, &planes.planes) == Class::Inside);
                let lanes = k * grp.cap / 4..(k * grp.cap + c.len as usize).div_ceil(4);
                uniform_levels(&c.aabb, &grp.spheres[lanes], c.len as usize, &planes, &levels).is_some()
            })
            .collect()
    }

    #[test]
    fn clusters_in_one_level_band_get_their_levels_in_bulk_as_the_reference_does() {
        let mut store = crowd();
        // Near: the crowd spans several bands, and instances get fine levels.
        let near = camera(40.0);
        assert!(
            uniform_clusters(&store, &near).iter().any(|u| !u),
            "some clusters straddle a band edge"
        );
        assert_eq!(cull_and_compare(&mut store, &near), 256);
        // Far, in the band of the coarsest LOD, VAT and rate 8: every cluster takes the bulk path, and every
        // instance crosses every boundary at once, as the reference's rule says.
        let far = camera(3_000.0);
        assert!(
            uniform_clusters(&store, &far).iter().all(|&u| u),
            "every cluster is in one band"
        );
        assert_eq!(cull_and_compare(&mut store, &far), 256);
        // A middle band (LOD 1, baked, rate 4), reached from the coarsest levels.
        let mid = camera(200.0);
        assert!(
            uniform_clusters(&store, &mid).iter().any(|&u| u),
            "a cluster is in one band"
        );
        assert_eq!(cull_and_compare(&mut store, &mid), 256);
        let st = store
            .get(store.live_handles().next().expect("live"))
            .expect("live")
            .state;
        assert_eq!((st.lod, st.tier(), st.rate_log2), (1, crate::Tier::Baked, 2));
    }
}
