//! Draw groups: one (mesh, material) pair, its settings, and the storage of its instances and clusters.
//!
//! Storage is SoA and cluster-major: cluster `k` owns slots `k * C .. k * C + len` of every per-slot array
//! (`C` is the store's cluster capacity), so a cluster's instances are contiguous and culling streams them.
//! Culling spheres are kept as four `Vec4` lane arrays (x, y, z, radius) of four slots each.
//! An empty cluster is deleted: its block goes on a free list and is reused by the next new cluster.

use glam::{Quat, Vec3, Vec4};

use crate::bounds::{Aabb, clip_union, world_sphere};
use crate::cluster_grid::ClusterGrid;
use crate::error::{Error, Result};
use crate::instance::{AnimState, InstanceDesc, TierState};
use crate::limits::{MAX_HYSTERESIS, MAX_LODS, RATE_COUNT, TIER_COUNT};

/// What a draw group is: its mesh and material, its clips' animated bounds, and its LOD and tier thresholds.
///
/// Screen size is the projected diameter of an instance's culling sphere as a fraction of the viewport
/// height: `radius * proj_scale / view_depth` with `proj_scale = 1 / tan(fov_y / 2)`, or `radius * proj_scale`
/// with `proj_scale = 2 / view_height` for an orthographic camera (a sun's), at any distance.
/// All thresholds are screen sizes, positive, finite and strictly decreasing: an instance whose screen size
/// falls below `lod_thresholds[i]` is at LOD `i + 1` or coarser. The same rule picks the tier from
/// `tier_thresholds` (unique, pooled, baked, VAT) and the update-rate divisor from `rate_thresholds`
/// (1, 2, 4, 8). To skip a tier, give it a band that no instance reaches: for example
/// `[f32::MAX, f32::MAX / 4.0, 0.01]` makes every instance at least baked.
///
/// Hysteresis: a level boundary at threshold `t` is crossed towards coarser levels only below
/// `t * (1 - hysteresis)` and towards finer levels only above `t * (1 + hysteresis)`. The bands of adjacent
/// boundaries must not overlap: `t[i] * (1 - h) > t[i + 1] * (1 + h)`.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupDesc {
    /// The caller's mesh id (not interpreted).
    pub mesh: u32,
    /// The caller's material id (not interpreted).
    pub material: u32,
    /// One local-space box per clip: the union of the skinned bounds over all the clip's frames, in the space that
    /// the instance transform places (for glTF models, under the skeleton's root transform).
    /// `skin_pack::animated_bounds` computes it in that space as an `anim_pose::Aabb`, which this crate does not
    /// depend on: hand it over as `Aabb::new(b.min, b.max)`.
    /// At least one clip; every box valid.
    pub clip_bounds: Vec<Aabb>,
    /// LOD thresholds; the group has `lod_thresholds.len() + 1` LODs, at most [`MAX_LODS`].
    pub lod_thresholds: Vec<f32>,
    /// Tier thresholds: below `[0]` pooled, below `[1]` baked, below `[2]` VAT.
    pub tier_thresholds: [f32; TIER_COUNT - 1],
    /// Update-rate thresholds: below `[0]` every 2nd frame, below `[1]` every 4th, below `[2]` every 8th.
    pub rate_thresholds: [f32; RATE_COUNT - 1],
    /// The hysteresis band, a fraction in `[0, MAX_HYSTERESIS)`.
    pub hysteresis: f32,
}

impl GroupDesc {
    /// Checks every rule of the type's docs.
    pub fn validate(&self) -> Result<()> {
        if self.clip_bounds.is_empty() {
            return Err(Error::OutOfRange {
                what: "clip_bounds (at least one clip)",
                index: 0,
            });
        }
        if self.clip_bounds.len() > u32::MAX as usize {
            return Err(Error::Limit {
                what: "clips per group",
                limit: u32::MAX as usize,
            });
        }
        for (i, b) in self.clip_bounds.iter().enumerate() {
            if !(b.min.is_finite() && b.max.is_finite()) {
                return Err(Error::NonFinite {
                    what: "clip bounds",
                    index: i,
                });
            }
            if !b.is_valid() {
                return Err(Error::OutOfRange {
                    what: "clip bounds (min <= max)",
                    index: i,
                });
            }
        }
        if self.lod_thresholds.len() >= MAX_LODS {
            return Err(Error::Limit {
                what: "LODs per group",
                limit: MAX_LODS,
            });
        }
        let h = self.hysteresis;
        if !h.is_finite() {
            return Err(Error::NonFinite {
                what: "hysteresis",
                index: 0,
            });
        }
        if !(0.0..MAX_HYSTERESIS).contains(&h) {
            return Err(Error::OutOfRange {
                what: "hysteresis (0 <= h < MAX_HYSTERESIS)",
                index: 0,
            });
        }
        check_thresholds("lod_thresholds", &self.lod_thresholds, h)?;
        check_thresholds("tier_thresholds", &self.tier_thresholds, h)?;
        check_thresholds("rate_thresholds", &self.rate_thresholds, h)
    }

    /// The number of LODs.
    pub fn lod_count(&self) -> usize {
        self.lod_thresholds.len() + 1
    }
}

fn check_thresholds(what: &'static str, t: &[f32], h: f32) -> Result<()> {
    for (i, &v) in t.iter().enumerate() {
        if !v.is_finite() {
            return Err(Error::NonFinite { what, index: i });
        }
        if v <= 0.0 {
            return Err(Error::OutOfRange { what, index: i });
        }
        if i > 0 && t[i - 1] * (1.0 - h) <= v * (1.0 + h) {
            return Err(Error::OutOfRange { what, index: i });
        }
    }
    Ok(())
}

/// Level boundaries with their hysteresis edges, padded to [`MAX_LODS`]` - 1`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LevelTable {
    n: usize,
    /// `t * (1 - h)`: the edge for instances at this boundary's finer side.
    lo: [f32; MAX_LODS - 1],
    /// `t * (1 + h)`: the edge for instances at the coarser side.
    hi: [f32; MAX_LODS - 1],
}

impl LevelTable {
    fn new(t: &[f32], h: f32) -> Self {
        let mut lo = [0.0; MAX_LODS - 1];
        let mut hi = [0.0; MAX_LODS - 1];
        for (i, &v) in t.iter().enumerate() {
            lo[i] = v * (1.0 - h);
            hi[i] = v * (1.0 + h);
        }
        Self { n: t.len(), lo, hi }
    }

    /// The levels `(L, H)` of four screen sizes: `L` counts the boundaries whose lower edge lies above the
    /// screen size, `H` those whose upper edge does. An instance previously at level `prev` moves to
    /// `prev.clamp(L, H)`: that is the boundary-by-boundary rule (cross boundary `i` towards coarser levels
    /// only below `t * (1 - h)`, towards finer only above `t * (1 + h)`) in closed form, because the edges
    /// decrease.
    #[inline(always)]
    pub(crate) fn bounds4(&self, s: Vec4) -> (Vec4, Vec4) {
        let mut l = Vec4::ZERO;
        let mut h = Vec4::ZERO;
        for i in 0..self.n {
            l += Vec4::select(s.cmplt(Vec4::splat(self.lo[i])), Vec4::ONE, Vec4::ZERO);
            h += Vec4::select(s.cmplt(Vec4::splat(self.hi[i])), Vec4::ONE, Vec4::ZERO);
        }
        (l, h)
    }

    /// The level of every screen size in `[min(s), max(s)]` whatever the previous level, if there is one: the
    /// lanes of `s` all give the same `L` and `H`, and `L == H`.
    #[inline]
    pub(crate) fn uniform4(&self, s: Vec4) -> Option<u8> {
        let (l, h) = self.bounds4(s);
        let v = Vec4::splat(l.x);
        (l == v && h == v).then_some(l.x as u8)
    }

    /// The new level of one instance with screen size `s` that was at level `prev` (see [`LevelTable::bounds4`]).
    #[cfg(test)]
    pub(crate) fn level(&self, s: f32, prev: u8) -> u8 {
        let (l, h) = self.bounds4(Vec4::splat(s));
        prev.clamp(l.x as u8, h.x as u8)
    }
}

/// One cluster's bookkeeping. Its instances are the slots `id * C .. id * C + len`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cluster {
    /// A conservative box around every member's culling sphere (grown on every single move, recomputed by
    /// refits and bulk moves).
    pub(crate) aabb: Aabb,
    /// The sum of member positions; the centre is `sum / len`.
    pub(crate) sum: Vec3,
    /// The number of members; 0 for a deleted cluster.
    pub(crate) len: u32,
    /// Needs a refit.
    pub(crate) dirty: bool,
    /// In the group's `dirty` queue (once at most: a cluster whose refit a bulk move completed stays queued, and
    /// `maintain` drops the entry when it pops it).
    pub(crate) queued: bool,
    /// Selected for the refit now running.
    pub(crate) refit: bool,
    /// Touched by the bulk move now running (see [`InstanceStore::set_positions`](crate::InstanceStore::set_positions)).
    pub(crate) moved: bool,
    /// Every member's tier state is already the hidden state (the last cull found the cluster outside and no
    /// member joined since), so culling it outside again writes nothing.
    pub(crate) hidden_clean: bool,
    /// The `add_many` now running has saved the cluster's state from before its first change, for a rollback
    /// (always false between calls).
    pub(crate) saved: bool,
    /// Members further than `R` from the centre, counted by the last refit.
    pub(crate) drifters: u32,
}

impl Cluster {
    const EMPTY: Self = Self {
        aabb: Aabb::EMPTY,
        sum: Vec3::ZERO,
        len: 0,
        dirty: false,
        queued: false,
        refit: false,
        moved: false,
        hidden_clean: false,
        saved: false,
        drifters: 0,
    };

    pub(crate) fn centre(&self) -> Vec3 {
        self.sum / self.len.max(1) as f32
    }
}

/// Grows `aabb` to hold the sphere, padded by a few ulps so that the box test stays conservative against the
/// sphere test under rounding.
#[inline]
pub(crate) fn grow(aabb: &mut Aabb, c: Vec3, r: f32) {
    let pad = (r + c.abs().max_element()) * 4e-7;
    aabb.min = aabb.min.min(c - (r + pad));
    aabb.max = aabb.max.max(c + (r + pad));
}

/// Four culling spheres in SoA form: one 64-byte cache line.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct SoaSphere {
    pub(crate) x: Vec4,
    pub(crate) y: Vec4,
    pub(crate) z: Vec4,
    pub(crate) r: Vec4,
}

impl SoaSphere {
    const ZERO: Self = Self {
        x: Vec4::ZERO,
        y: Vec4::ZERO,
        z: Vec4::ZERO,
        r: Vec4::ZERO,
    };

    /// Lane `l % 4`. Reads through arrays rather than `Vec4`'s `Index`, whose `match` compiles to an indirect
    /// jump that mispredicts as the lane changes from call to call.
    #[inline]
    fn get(&self, l: usize) -> (Vec3, f32) {
        let l = l % 4;
        (
            Vec3::new(self.x.as_ref()[l], self.y.as_ref()[l], self.z.as_ref()[l]),
            self.r.as_ref()[l],
        )
    }

    /// Sets lane `l % 4`, branch-free: one scalar store per lane array.
    #[inline]
    fn set(&mut self, l: usize, c: Vec3, r: f32) {
        let l = l % 4;
        self.x.as_mut()[l] = c.x;
        self.y.as_mut()[l] = c.y;
        self.z.as_mut()[l] = c.z;
        self.r.as_mut()[l] = r;
    }
}

/// The storage of one draw group.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub(crate) desc: GroupDesc,
    pub(crate) lod: LevelTable,
    pub(crate) tier: LevelTable,
    pub(crate) rate: LevelTable,
    /// Cluster capacity `C` (a power of two, at least 4).
    pub(crate) cap: usize,
    /// Per clip, the local sphere of its box `(centre, half diagonal)`, the values [`Group::offset_of`] would
    /// compute from it, so that a state without a crossfade need not recompute them.
    clip_sphere: Vec<Vec4>,
    /// World culling spheres, four slots per element.
    pub(crate) spheres: Vec<SoaSphere>,
    /// `(rotation * (centre of the clip box * scale), radius * scale)`: the world sphere minus the position.
    pub(crate) offset: Vec<Vec4>,
    pub(crate) position: Vec<Vec3>,
    pub(crate) rotation: Vec<Quat>,
    pub(crate) scale: Vec<f32>,
    pub(crate) anim: Vec<AnimState>,
    pub(crate) custom: Vec<Vec4>,
    pub(crate) flags: Vec<u32>,
    pub(crate) state: Vec<TierState>,
    /// The handle-table index of each slot's instance.
    pub(crate) owner: Vec<u32>,
    /// One bit per slot, set when what a GPU keeps of the slot changed (its instance, transform, animation state
    /// other than the crossfade weight, or custom data) since [`InstanceStore::take_changed_slots`] last ran.
    ///
    /// [`InstanceStore::take_changed_slots`]: crate::InstanceStore::take_changed_slots
    pub(crate) changed: Vec<u64>,
    pub(crate) clusters: Vec<Cluster>,
    pub(crate) free_clusters: Vec<u32>,
    pub(crate) dirty: std::collections::VecDeque<u32>,
    pub(crate) grid: ClusterGrid,
    pub(crate) live: usize,
}

impl Group {
    pub(crate) fn new(desc: GroupDesc, cap: usize, radius: f32) -> Self {
        let h = desc.hysteresis;
        Self {
            lod: LevelTable::new(&desc.lod_thresholds, h),
            tier: LevelTable::new(&desc.tier_thresholds, h),
            rate: LevelTable::new(&desc.rate_thresholds, h),
            clip_sphere: desc
                .clip_bounds
                .iter()
                .map(|b| b.center().extend(b.half_extent().length()))
                .collect(),
            desc,
            cap,
            spheres: Vec::new(),
            offset: Vec::new(),
            position: Vec::new(),
            rotation: Vec::new(),
            scale: Vec::new(),
            anim: Vec::new(),
            custom: Vec::new(),
            flags: Vec::new(),
            state: Vec::new(),
            owner: Vec::new(),
            changed: Vec::new(),
            clusters: Vec::new(),
            free_clusters: Vec::new(),
            dirty: std::collections::VecDeque::new(),
            grid: ClusterGrid::new(radius),
            live: 0,
        }
    }

    /// The cluster that owns slot `s` (a shift: the capacity is a power of two).
    #[inline(always)]
    pub(crate) fn cluster_of(&self, s: usize) -> usize {
        s >> self.cap.trailing_zeros()
    }

    /// The number of slots, live or not: `clusters * C`.
    pub(crate) fn slot_count(&self) -> usize {
        self.position.len()
    }

    pub(crate) fn sphere(&self, s: usize) -> (Vec3, f32) {
        self.spheres[s / 4].get(s % 4)
    }

    /// The culling sphere of a (valid) description.
    pub(crate) fn sphere_of(&self, position: Vec3, rotation: Quat, scale: f32, anim: &AnimState) -> (Vec3, f32) {
        world_sphere(clip_union(&self.desc.clip_bounds, anim), position, rotation, scale)
    }

    /// Recomputes slot `s`'s sphere offset from its rotation, scale and animation state (after any changed).
    pub(crate) fn refresh_offset(&mut self, s: usize) {
        self.offset[s] = self.offset_of(self.rotation[s], self.scale[s], &self.anim[s]);
    }

    /// The sphere offset of a rotation, scale and animation state: `(rotation * (centre of the clip box *
    /// scale), radius * scale)`, the world sphere minus the position.
    #[inline]
    fn offset_of(&self, rotation: Quat, scale: f32, anim: &AnimState) -> Vec4 {
        let (centre, radius) = match anim.fade_target {
            // One clip: its box's centre and half diagonal, computed once (the same operations on the same box).
            None => {
                let l = self.clip_sphere[anim.clip as usize];
                (l.truncate(), l.w)
            }
            Some(_) => {
                let b = clip_union(&self.desc.clip_bounds, anim);
                (b.center(), b.half_extent().length())
            }
        };
        (rotation * (centre * scale)).extend(radius * scale)
    }

    /// Recomputes slot `s`'s world sphere from its position and sphere offset, and grows its cluster's box to
    /// hold it. Gives the same result as [`Group::sphere_of`] (the same operations in the same order).
    #[inline]
    pub(crate) fn refresh_sphere(&mut self, s: usize) {
        let l = self.offset[s];
        let c = self.position[s] + l.truncate();
        self.spheres[s / 4].set(s % 4, c, l.w);
        let k = self.cluster_of(s);
        grow(&mut self.clusters[k].aabb, c, l.w);
    }

    /// The nearest cluster other than `exclude` whose centre is within `R` of `p` and which has room, if
    /// any; of equally near ones, the lowest id. The grid files exactly the clusters with room, at their
    /// current centres (see [`Group::file`]), so this is the plain scan of
    /// [`join_cluster_reference`](crate::reference::join_cluster_reference), through the grid.
    #[inline]
    pub(crate) fn find_cluster(&self, p: Vec3, exclude: u32) -> Option<u32> {
        self.grid.nearest(p, exclude)
    }

    /// Files live cluster `k` in the grid at its current centre if it has room, or takes it out if it is full,
    /// and returns the centre. Called whenever a cluster's position sum or member count changes, so that the
    /// grid's copy of every centre is always current.
    #[inline]
    pub(crate) fn file(&mut self, k: u32) -> Vec3 {
        let c = &self.clusters[k as usize];
        Self::file_cluster(&mut self.grid, self.cap, k, c)
    }

    /// [`Group::file`] for cluster `k`, whose bookkeeping is `c`.
    #[inline(always)]
    fn file_cluster(grid: &mut ClusterGrid, cap: usize, k: u32, c: &Cluster) -> Vec3 {
        let centre = c.centre();
        if (c.len as usize) < cap {
            grid.place(k, centre);
        } else {
            grid.unlink(k);
        }
        centre
    }

    /// A new, empty cluster: a freed block or a new one at the end.
    pub(crate) fn alloc_cluster(&mut self) -> u32 {
        if let Some(id) = self.free_clusters.pop() {
            return id;
        }
        let id = self.clusters.len();
        let n = (id + 1) * self.cap;
        self.clusters.push(Cluster::EMPTY);
        self.spheres.resize(n / 4, SoaSphere::ZERO);
        self.offset.resize(n, Vec4::ZERO);
        self.position.resize(n, Vec3::ZERO);
        self.rotation.resize(n, Quat::IDENTITY);
        self.scale.resize(n, 0.0);
        self.anim.resize(n, AnimState::clip(0));
        self.custom.resize(n, Vec4::ZERO);
        self.flags.resize(n, 0);
        self.state.resize(n, TierState::HIDDEN);
        self.owner.resize(n, u32::MAX);
        self.changed.resize(n.div_ceil(64), 0);
        self.grid.reserve_clusters(id + 1);
        // Room for one entry per cluster in the queues: a cluster is queued at most once (`Cluster::queued`) and
        // freed at most once, so a later frame that dirties more clusters than any before grows neither queue.
        let clusters = self.clusters.len();
        self.dirty.reserve(clusters.saturating_sub(self.dirty.len()));
        self.free_clusters
            .reserve(clusters.saturating_sub(self.free_clusters.len()));
        id as u32
    }

    /// Drops the cluster blocks from `count` on, which must be empty (deleted): the inverse of the
    /// [`Group::alloc_cluster`] calls that appended them. They leave the free list and the grid (the caller
    /// takes them out of the refit queue), every per-slot array is cut to `count * C` slots, and the changed-slot
    /// bits past the last slot are cleared.
    pub(crate) fn trim_clusters(&mut self, count: usize) {
        debug_assert!(
            self.clusters[count.min(self.clusters.len())..]
                .iter()
                .all(|c| c.len == 0)
        );
        if count >= self.clusters.len() {
            return;
        }
        let n = count * self.cap;
        self.clusters.truncate(count);
        self.free_clusters.retain(|&k| (k as usize) < count);
        debug_assert!(self.dirty.iter().all(|&k| (k as usize) < count));
        self.grid.truncate(count);
        self.spheres.truncate(n / 4);
        self.offset.truncate(n);
        self.position.truncate(n);
        self.rotation.truncate(n);
        self.scale.truncate(n);
        self.anim.truncate(n);
        self.custom.truncate(n);
        self.flags.truncate(n);
        self.state.truncate(n);
        self.owner.truncate(n);
        self.changed.truncate(n.div_ceil(64));
        if !n.is_multiple_of(64)
            && let Some(last) = self.changed.last_mut()
        {
            *last &= (1u64 << (n % 64)) - 1;
        }
    }

    /// Writes a new member into cluster `k` and returns its slot. The description must be valid and the
    /// cluster must have room.
    ///
    /// The sphere offset and the sphere are computed from the description (the operations of
    /// [`Group::refresh_offset`] and [`Group::refresh_sphere`], in the same order), not read back from the slot.
    pub(crate) fn push_member(&mut self, k: u32, desc: &InstanceDesc, state: TierState, owner: u32) -> usize {
        let offset = self.offset_of(desc.rotation, desc.scale, &desc.anim);
        let centre = desc.position + offset.truncate();
        let c = &mut self.clusters[k as usize];
        let s = k as usize * self.cap + c.len as usize;
        c.len += 1;
        c.sum += desc.position;
        c.hidden_clean = false;
        grow(&mut c.aabb, centre, offset.w);
        let queue = !c.queued;
        c.dirty = true;
        c.queued = true;
        Self::file_cluster(&mut self.grid, self.cap, k, c);
        if queue {
            self.dirty.push_back(k);
        }
        self.position[s] = desc.position;
        self.rotation[s] = desc.rotation;
        self.scale[s] = desc.scale;
        self.anim[s] = desc.anim;
        self.custom[s] = desc.custom;
        self.flags[s] = desc.flags;
        self.state[s] = state;
        self.owner[s] = owner;
        self.offset[s] = offset;
        self.spheres[s / 4].set(s % 4, centre, offset.w);
        self.mark_changed(s);
        self.live += 1;
        s
    }

    /// Marks slot `s` changed (see [`Group::changed`]).
    #[inline(always)]
    pub(crate) fn mark_changed(&mut self, s: usize) {
        self.changed[s / 64] |= 1 << (s % 64);
    }

    /// Moves slot `from`'s instance to slot `to` (the cluster's last member into a removed member's place).
    fn copy_slot(&mut self, from: usize, to: usize) {
        self.position[to] = self.position[from];
        self.rotation[to] = self.rotation[from];
        self.scale[to] = self.scale[from];
        self.anim[to] = self.anim[from];
        self.custom[to] = self.custom[from];
        self.flags[to] = self.flags[from];
        self.state[to] = self.state[from];
        self.owner[to] = self.owner[from];
        self.offset[to] = self.offset[from];
        let (c, r) = self.sphere(from);
        self.spheres[to / 4].set(to % 4, c, r);
        self.mark_changed(to);
    }

    /// Removes slot `s` from its cluster by moving the cluster's last member into it. Returns the handle
    /// index of the moved member (whose slot is now `s`), if one moved. Deletes the cluster when it empties.
    pub(crate) fn remove_member(&mut self, s: usize) -> Option<u32> {
        let k = self.cluster_of(s);
        let p = self.position[s];
        let c = &mut self.clusters[k];
        c.len -= 1;
        let len = c.len;
        if len == 0 {
            // A queued entry stays in the queue: the cluster keeps the flag so that it is never queued twice.
            *c = Cluster {
                queued: c.queued,
                ..Cluster::EMPTY
            };
            self.grid.unlink(k as u32);
            self.free_clusters.push(k as u32);
        } else {
            c.sum -= p;
            let queue = !c.queued;
            c.dirty = true;
            c.queued = true;
            Self::file_cluster(&mut self.grid, self.cap, k as u32, c);
            if queue {
                self.dirty.push_back(k as u32);
            }
        }
        self.live -= 1;
        let last = k * self.cap + len as usize;
        // `s <= last` (a member's slot): `<` rather than `!=` tells the compiler that every index check of
        // `last` covers `s` too.
        let moved = if s < last {
            self.copy_slot(last, s);
            Some(self.owner[s])
        } else {
            None
        };
        self.owner[last] = u32::MAX;
        self.mark_changed(last);
        moved
    }

    pub(crate) fn mark_dirty(&mut self, k: u32) {
        let c = &mut self.clusters[k as usize];
        c.dirty = true;
        if !c.queued {
            c.queued = true;
            self.dirty.push_back(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_table_applies_hysteresis_on_both_sides() {
        let t = LevelTable::new(&[0.5, 0.1], 0.1);
        // Screen size 0.47: below 0.5 but inside the band [0.45, 0.55].
        assert_eq!(t.level(0.47, 0), 0, "a finer instance stays finer inside the band");
        assert_eq!(t.level(0.47, 1), 1, "a coarser instance stays coarser inside the band");
        assert_eq!(t.level(0.47, 2), 1, "an instance two levels coarser comes back one");
        assert_eq!(t.level(0.44, 0), 1, "below the band it goes coarser");
        assert_eq!(t.level(0.56, 1), 0, "above the band it goes finer");
        assert_eq!(t.level(0.01, 0), 2, "a big jump crosses two boundaries at once");
        assert_eq!(t.level(5.0, 2), 0);
        assert_eq!(t.level(f32::INFINITY, 2), 0, "behind the eye is as close as it gets");
    }

    #[test]
    fn cached_clip_spheres_give_the_plain_offsets() {
        let desc = GroupDesc {
            mesh: 0,
            material: 0,
            clip_bounds: vec![
                Aabb::new(Vec3::new(-0.4, 0.0, -0.3), Vec3::new(0.4, 1.8, 0.3)),
                Aabb::new(Vec3::new(-0.4, 0.1, -0.3), Vec3::new(1.9, 2.2, 0.35)),
                Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5)),
            ],
            lod_thresholds: vec![0.5],
            tier_thresholds: [0.4, 0.1, 0.02],
            rate_thresholds: [0.3, 0.1, 0.03],
            hysteresis: 0.1,
        };
        let g = Group::new(desc, 16, 2.0);
        let bits = |v: Vec4| v.to_array().map(f32::to_bits);
        for clip in 0..3 {
            for fade_target in [None, Some(0), Some(1), Some(2)] {
                for (yaw, scale) in [(0.0f32, 1.0f32), (0.7, 0.93), (2.9, 1.37), (-1.3, 0.5)] {
                    let rotation = Quat::from_rotation_y(yaw) * Quat::from_rotation_x(yaw * 0.3);
                    let anim = AnimState {
                        clip,
                        fade_target,
                        fade_weight: 0.5,
                        ..AnimState::clip(0)
                    };
                    // The plain twin: the union of the clips' boxes, then its centre and half diagonal.
                    let b = clip_union(&g.desc.clip_bounds, &anim);
                    let want = (rotation * (b.center() * scale)).extend(b.half_extent().length() * scale);
                    assert_eq!(
                        bits(g.offset_of(rotation, scale, &anim)),
                        bits(want),
                        "{clip} {fade_target:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn descriptions_are_validated() {
        let ok = GroupDesc {
            mesh: 0,
            material: 0,
            clip_bounds: vec![Aabb::new(Vec3::ZERO, Vec3::ONE)],
            lod_thresholds: vec![0.5, 0.2],
            tier_thresholds: [0.4, 0.1, 0.02],
            rate_thresholds: [0.3, 0.1, 0.03],
            hysteresis: 0.1,
        };
        assert_eq!(ok.validate(), Ok(()));
        let cases: Vec<(GroupDesc, &str)> = vec![
            (
                GroupDesc {
                    clip_bounds: vec![],
                    ..ok.clone()
                },
                "no clips",
            ),
            (
                GroupDesc {
                    clip_bounds: vec![Aabb::new(Vec3::ONE, Vec3::ZERO)],
                    ..ok.clone()
                },
                "inverted box",
            ),
            (
                GroupDesc {
                    clip_bounds: vec![Aabb::new(Vec3::ZERO, Vec3::NAN)],
                    ..ok.clone()
                },
                "NaN box",
            ),
            (
                GroupDesc {
                    lod_thresholds: vec![0.1; 8],
                    ..ok.clone()
                },
                "too many LODs",
            ),
            (
                GroupDesc {
                    lod_thresholds: vec![0.2, 0.5],
                    ..ok.clone()
                },
                "increasing",
            ),
            (
                GroupDesc {
                    lod_thresholds: vec![0.5, 0.48],
                    ..ok.clone()
                },
                "overlapping bands",
            ),
            (
                GroupDesc {
                    lod_thresholds: vec![f32::NAN],
                    ..ok.clone()
                },
                "NaN threshold",
            ),
            (
                GroupDesc {
                    tier_thresholds: [0.4, 0.1, 0.0],
                    ..ok.clone()
                },
                "zero threshold",
            ),
            (
                GroupDesc {
                    rate_thresholds: [0.3, 0.1, f32::INFINITY],
                    ..ok.clone()
                },
                "inf",
            ),
            (
                GroupDesc {
                    hysteresis: 0.5,
                    ..ok.clone()
                },
                "hysteresis too wide",
            ),
            (
                GroupDesc {
                    hysteresis: -0.1,
                    ..ok.clone()
                },
                "negative hysteresis",
            ),
            (
                GroupDesc {
                    hysteresis: f32::NAN,
                    ..ok.clone()
                },
                "NaN hysteresis",
            ),
        ];
        for (desc, why) in cases {
            assert!(desc.validate().is_err(), "{why} was accepted");
        }
    }
}
