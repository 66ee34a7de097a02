//! A hashed uniform grid over cluster centres, for the "nearest cluster within R" query of insertion.
//!
//! Cells are `2R` wide, so every centre within `R` of a point lies in one of the 2 × 2 × 2 cells around it.
//! The grid is a fixed-size hash table of intrusive doubly-linked lists (the links live here, indexed by
//! cluster), so placing, moving and unlinking a cluster is O(1) and never allocates; the table grows (and
//! rehashes) only when the number of cluster blocks outgrows it. Distinct cells may share a bucket; callers
//! filter candidates by distance.

use glam::{IVec3, Vec3};

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Link {
    cell: IVec3,
    prev: u32,
    next: u32,
    linked: bool,
}

const UNLINKED: Link = Link {
    cell: IVec3::ZERO,
    prev: NONE,
    next: NONE,
    linked: false,
};

/// The grid. See the module docs.
#[derive(Clone, Debug)]
pub(crate) struct ClusterGrid {
    inv_cell: f32,
    heads: Vec<u32>,
    links: Vec<Link>,
}

/// `floor` per axis, as integers, without a libm call (glam's `floor` calls `floorf` on x86-64 without SSE4.1).
/// Values beyond the `i32` range saturate, which only makes far-away cells share buckets.
#[inline(always)]
fn floor_cell(v: Vec3) -> IVec3 {
    let t = v.as_ivec3();
    t - IVec3::new(
        (v.x < t.x as f32) as i32,
        (v.y < t.y as f32) as i32,
        (v.z < t.z as f32) as i32,
    )
}

fn hash(c: IVec3, mask: usize) -> usize {
    let h = (c.x as u32).wrapping_mul(0x9E37_79B1)
        ^ (c.y as u32).wrapping_mul(0x85EB_CA77)
        ^ (c.z as u32).wrapping_mul(0xC2B2_AE3D);
    ((h ^ (h >> 15)) as usize) & mask
}

impl ClusterGrid {
    /// A grid for clusters of radius `radius` (positive and finite).
    pub(crate) fn new(radius: f32) -> Self {
        Self {
            inv_cell: 0.5 / radius,
            heads: vec![NONE; 64],
            links: Vec::new(),
        }
    }

    fn cell_of(&self, p: Vec3) -> IVec3 {
        floor_cell(p * self.inv_cell)
    }

    /// Makes room for cluster ids below `count`; rehashes when the table would be more than half full.
    pub(crate) fn reserve_clusters(&mut self, count: usize) {
        if self.links.len() < count {
            self.links.resize(count, UNLINKED);
        }
        if self.heads.len() < count * 2 {
            let size = (count * 2).next_power_of_two();
            self.heads.clear();
            self.heads.resize(size, NONE);
            let linked: Vec<(u32, IVec3)> = self
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.linked)
                .map(|(i, l)| (i as u32, l.cell))
                .collect();
            for l in &mut self.links {
                *l = UNLINKED;
            }
            for (id, cell) in linked {
                self.link(id, cell);
            }
        }
    }

    fn link(&mut self, id: u32, cell: IVec3) {
        let b = hash(cell, self.heads.len() - 1);
        let head = self.heads[b];
        if head != NONE {
            self.links[head as usize].prev = id;
        }
        self.links[id as usize] = Link {
            cell,
            prev: NONE,
            next: head,
            linked: true,
        };
        self.heads[b] = id;
    }

    /// Removes cluster `id` from the grid (no-op when it is not linked).
    pub(crate) fn unlink(&mut self, id: u32) {
        let l = self.links[id as usize];
        if !l.linked {
            return;
        }
        if l.prev == NONE {
            let b = hash(l.cell, self.heads.len() - 1);
            self.heads[b] = l.next;
        } else {
            self.links[l.prev as usize].next = l.next;
        }
        if l.next != NONE {
            self.links[l.next as usize].prev = l.prev;
        }
        self.links[id as usize] = UNLINKED;
    }

    /// Files cluster `id` under the cell of `centre`, moving it if its cell changed.
    pub(crate) fn place(&mut self, id: u32, centre: Vec3) {
        let cell = self.cell_of(centre);
        let l = self.links[id as usize];
        if l.linked && l.cell == cell {
            return;
        }
        self.unlink(id);
        self.link(id, cell);
    }

    /// True when cluster `id` is filed under the cell of `centre`.
    pub(crate) fn is_placed_at(&self, id: u32, centre: Vec3) -> bool {
        let l = self.links.get(id as usize).copied().unwrap_or(UNLINKED);
        if !l.linked || l.cell != self.cell_of(centre) {
            return false;
        }
        // The cluster must also be reachable from its bucket.
        let mut c = self.heads[hash(l.cell, self.heads.len() - 1)];
        while c != NONE {
            if c == id {
                return true;
            }
            c = self.links[c as usize].next;
        }
        false
    }

    /// True when cluster `id` is linked anywhere.
    pub(crate) fn is_linked(&self, id: u32) -> bool {
        self.links.get(id as usize).is_some_and(|l| l.linked)
    }

    /// Calls `f` with every cluster filed in the 2 × 2 × 2 cells that can hold a centre within `R` of `p`
    /// (and possibly others that share their buckets; a cluster may be seen more than once).
    pub(crate) fn for_each_near(&self, p: Vec3, mut f: impl FnMut(u32)) {
        let base = floor_cell(p * self.inv_cell - 0.5);
        let mask = self.heads.len() - 1;
        for dz in 0..2 {
            for dy in 0..2 {
                for dx in 0..2 {
                    let mut c = self.heads[hash(base + IVec3::new(dx, dy, dz), mask)];
                    while c != NONE {
                        f(c);
                        c = self.links[c as usize].next;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_cell_is_floor() {
        for v in [
            -2.5f32,
            -2.0,
            -1.0,
            -0.5,
            -1e-7,
            0.0,
            1e-7,
            0.5,
            1.0,
            2.5,
            1e6 + 0.5,
            -1e6 - 0.5,
        ] {
            let c = floor_cell(Vec3::new(v, -v, v * 0.5));
            assert_eq!(c, Vec3::new(v, -v, v * 0.5).floor().as_ivec3(), "{v}");
        }
    }

    #[test]
    fn finds_every_centre_within_r_and_survives_rehash() {
        let r = 1.5;
        let mut g = ClusterGrid::new(r);
        let centres: Vec<Vec3> = (0..200)
            .map(|i| {
                let f = i as f32;
                Vec3::new(
                    (f * 0.731).sin() * 20.0,
                    (f * 0.377).cos() * 3.0,
                    (f * 1.13).sin() * 20.0,
                )
            })
            .collect();
        for (i, c) in centres.iter().enumerate() {
            g.reserve_clusters(i + 1);
            g.place(i as u32, *c);
        }
        g.unlink(7);
        for probe in &centres {
            let mut seen = vec![false; centres.len()];
            g.for_each_near(*probe, |id| seen[id as usize] = true);
            for (i, c) in centres.iter().enumerate() {
                if i != 7 && c.distance(*probe) <= r * 0.999 {
                    assert!(seen[i], "centre {i} within R of {probe} was not found");
                }
            }
            assert!(!seen[7], "an unlinked cluster was found");
        }
        for (i, c) in centres.iter().enumerate() {
            assert_eq!(g.is_placed_at(i as u32, *c), i != 7);
        }
    }
}
