//! A hashed uniform grid over the centres of the clusters that have room, for the "nearest cluster with room
//! within R" query of insertion.
//!
//! Cells are `2R` wide, so every centre within `R` of a point lies in one of the 2 × 2 × 2 cells around it.
//! Cells are centred on the multiples of `2R` (cell 0 spans `[-R, R)` on each axis). The query walks the
//! layer of cells (along y) that holds the point first, and the other layer only if it lies nearer than the
//! best centre found: a crowd on flat ground at `y = 0` sits in the middle of one layer, and its queries
//! rarely walk the other.
//! The grid is a fixed-size hash table of intrusive doubly-linked lists (the links live here, indexed by
//! cluster), so placing, moving and unlinking a cluster is O(1) and never allocates; the table grows (and
//! rehashes) only when the number of cluster blocks outgrows it. Distinct cells may share a bucket; the query
//! filters candidates by distance.
//!
//! The grid holds only what the query needs, split hot from cold: each filed cluster's centre sits next to
//! its bucket chain's `next` link in one 16-byte node, so that walking a bucket reads one node per candidate
//! and nothing else (no division, no lookup in the cluster table). The cell and the `prev` link, needed only
//! to move or unlink a cluster, live in a separate array, with the cell's span as floats: re-filing a cluster
//! whose centre stayed in its cell (the common case, on every add and remove) compares the scaled centre with
//! the span instead of computing its cell. Callers file only clusters that have room (a full cluster can never
//! take an instance) and re-file a cluster whenever its centre changes.

use glam::{IVec3, Vec3, Vec3A};

const NONE: u32 = u32::MAX;

/// What the query reads: the filed centre and the next cluster of the bucket.
#[derive(Clone, Copy, Debug)]
struct Node {
    centre: Vec3,
    next: u32,
}

/// What filing needs besides: the cell, the previous cluster of the bucket, and whether the cluster is filed;
/// and the cell's span `lo ..= hi` (`cell` and `cell + 1` as floats), against which re-filing tests a new
/// centre without computing its cell (see [`ClusterGrid::place`]). The span is NaN when the cluster is not
/// filed, or when its cell lies too far out for the span to be exact, so that the test fails there.
#[derive(Clone, Copy, Debug)]
struct Link {
    lo: Vec3A,
    hi: Vec3A,
    cell: IVec3,
    prev: u32,
    linked: bool,
}

const UNLINKED: Link = Link {
    lo: Vec3A::NAN,
    hi: Vec3A::NAN,
    cell: IVec3::ZERO,
    prev: NONE,
    linked: false,
};

/// Cells up to this far from the origin (on every axis) have an exact span: `cell` and `cell + 1` are
/// integers below `2^24` in magnitude, so exact as `f32`.
const EXACT_SPAN: u32 = 1 << 23;

/// The span of `cell` (see [`Link`]): `(cell, cell + 1)` as floats, or NaN where that would not be exact.
fn span(cell: IVec3) -> (Vec3A, Vec3A) {
    let far = cell
        .x
        .unsigned_abs()
        .max(cell.y.unsigned_abs())
        .max(cell.z.unsigned_abs());
    if far < EXACT_SPAN {
        let lo = cell.as_vec3();
        (Vec3A::from(lo), Vec3A::from(lo + 1.0))
    } else {
        (Vec3A::NAN, Vec3A::NAN)
    }
}

const NO_NODE: Node = Node {
    centre: Vec3::ZERO,
    next: NONE,
};

/// Buckets per cluster block, at least: keeps chains short, so that a query rarely walks clusters of other
/// cells (a bucket is a 4-byte index; a cluster block holds `C` instances of some hundred bytes each).
const BUCKETS_PER_CLUSTER: usize = 4;

/// The grid. See the module docs.
#[derive(Clone, Debug)]
pub(crate) struct ClusterGrid {
    /// `R`.
    radius: f32,
    /// `1 / 2R`.
    inv_cell: f32,
    heads: Vec<u32>,
    nodes: Vec<Node>,
    links: Vec<Link>,
}

/// `floor` per axis, as integers, without a libm call (glam's `floor` calls `floorf` on x86-64 without SSE4.1).
/// Values beyond the `i32` range saturate (below it, to `i32::MAX`: the floor wraps), which only makes
/// far-away cells share buckets.
#[inline(always)]
fn floor_cell(v: Vec3) -> IVec3 {
    let t = v.as_ivec3();
    IVec3::new(
        t.x.wrapping_sub((v.x < t.x as f32) as i32),
        t.y.wrapping_sub((v.y < t.y as f32) as i32),
        t.z.wrapping_sub((v.z < t.z as f32) as i32),
    )
}

const HASH_X: u32 = 0x9E37_79B1;
const HASH_Y: u32 = 0x85EB_CA77;
const HASH_Z: u32 = 0xC2B2_AE3D;

/// The bucket of the cell whose per-axis hash terms `x * HASH_X`, `y * HASH_Y` and `z * HASH_Z` are given.
#[inline(always)]
fn mix(hx: u32, hy: u32, hz: u32, mask: usize) -> usize {
    let h = hx ^ hy ^ hz;
    ((h ^ (h >> 15)) as usize) & mask
}

fn hash(c: IVec3, mask: usize) -> usize {
    mix(
        (c.x as u32).wrapping_mul(HASH_X),
        (c.y as u32).wrapping_mul(HASH_Y),
        (c.z as u32).wrapping_mul(HASH_Z),
        mask,
    )
}

impl ClusterGrid {
    /// A grid for clusters of radius `radius` (positive and finite).
    pub(crate) fn new(radius: f32) -> Self {
        Self {
            radius,
            inv_cell: 0.5 / radius,
            heads: vec![NONE; 64],
            nodes: Vec::new(),
            links: Vec::new(),
        }
    }

    fn cell_of(&self, p: Vec3) -> IVec3 {
        floor_cell(p * self.inv_cell + 0.5)
    }

    /// `p * inv_cell + 0.5`, whose floor is the cell of `p` (the operations of [`ClusterGrid::cell_of`], lane by
    /// lane, so the same values).
    #[inline(always)]
    fn scaled(&self, p: Vec3) -> Vec3A {
        Vec3A::from(p) * self.inv_cell + 0.5
    }

    /// Makes room for cluster ids below `count`; rehashes when the table would hold fewer than
    /// [`BUCKETS_PER_CLUSTER`] buckets per cluster.
    pub(crate) fn reserve_clusters(&mut self, count: usize) {
        if self.links.len() < count {
            self.links.resize(count, UNLINKED);
            self.nodes.resize(count, NO_NODE);
        }
        if self.heads.len() < count * BUCKETS_PER_CLUSTER {
            let size = (count * BUCKETS_PER_CLUSTER).next_power_of_two();
            self.heads.clear();
            self.heads.resize(size, NONE);
            for id in 0..self.links.len() {
                if self.links[id].linked {
                    let cell = self.links[id].cell;
                    self.link(id as u32, cell);
                }
            }
        }
    }

    /// Puts cluster `id` (not linked, its node's centre set) at the head of the bucket of `cell`.
    fn link(&mut self, id: u32, cell: IVec3) {
        let b = hash(cell, self.heads.len() - 1);
        let head = self.heads[b];
        if head != NONE {
            self.links[head as usize].prev = id;
        }
        self.nodes[id as usize].next = head;
        let (lo, hi) = span(cell);
        self.links[id as usize] = Link {
            lo,
            hi,
            cell,
            prev: NONE,
            linked: true,
        };
        self.heads[b] = id;
    }

    /// Forgets cluster ids from `count` on (unlinking any that are filed), as if they had never been reserved;
    /// the table keeps its size.
    pub(crate) fn truncate(&mut self, count: usize) {
        for id in count..self.links.len() {
            self.unlink(id as u32);
        }
        self.links.truncate(count);
        self.nodes.truncate(count);
    }

    /// Removes cluster `id` from the grid (no-op when it is not linked).
    pub(crate) fn unlink(&mut self, id: u32) {
        let l = self.links[id as usize];
        if !l.linked {
            return;
        }
        let next = self.nodes[id as usize].next;
        if l.prev == NONE {
            let b = hash(l.cell, self.heads.len() - 1);
            self.heads[b] = next;
        } else {
            self.nodes[l.prev as usize].next = next;
        }
        if next != NONE {
            self.links[next as usize].prev = l.prev;
        }
        self.links[id as usize] = UNLINKED;
        self.nodes[id as usize] = NO_NODE;
    }

    /// Files cluster `id` at `centre`: records the centre, and moves the cluster to the cell of `centre` if
    /// its cell changed (or links it if it was not filed).
    ///
    /// The common case (a filed cluster whose centre stays in its cell) only compares the scaled centre with
    /// the cell's span: `lo <= v < hi` with `lo` and `hi` the exact floats `cell` and `cell + 1` means
    /// `floor(v) == cell`. A NaN span (not filed, or a cell too far out) fails the test and takes the full path.
    #[inline]
    pub(crate) fn place(&mut self, id: u32, centre: Vec3) {
        let v = self.scaled(centre);
        let l = &self.links[id as usize];
        if v.cmpge(l.lo).all() & v.cmplt(l.hi).all() {
            self.nodes[id as usize].centre = centre;
            return;
        }
        self.move_to(id, centre, floor_cell(Vec3::from(v)));
    }

    /// [`ClusterGrid::place`] when the cell of `centre` (`cell`) may differ from the filed one.
    #[cold]
    #[inline(never)]
    fn move_to(&mut self, id: u32, centre: Vec3, cell: IVec3) {
        let l = self.links[id as usize];
        self.nodes[id as usize].centre = centre;
        if l.linked && l.cell == cell {
            return;
        }
        self.unlink(id);
        self.nodes[id as usize].centre = centre;
        self.link(id, cell);
    }

    /// True when cluster `id` is filed at exactly `centre`, under the cell of `centre`, and reachable from that
    /// cell's bucket.
    pub(crate) fn is_placed_at(&self, id: u32, centre: Vec3) -> bool {
        let l = self.links.get(id as usize).copied().unwrap_or(UNLINKED);
        if !l.linked || l.cell != self.cell_of(centre) || self.nodes[id as usize].centre != centre {
            return false;
        }
        let (lo, hi) = span(l.cell);
        let bits = |v: Vec3A| v.to_array().map(f32::to_bits);
        if bits(lo) != bits(l.lo) || bits(hi) != bits(l.hi) {
            return false;
        }
        let mut c = self.heads[hash(l.cell, self.heads.len() - 1)];
        while c != NONE {
            if c == id {
                return true;
            }
            c = self.nodes[c as usize].next;
        }
        false
    }

    /// True when cluster `id` is linked anywhere.
    pub(crate) fn is_linked(&self, id: u32) -> bool {
        self.links.get(id as usize).is_some_and(|l| l.linked)
    }

    /// The filed cluster other than `exclude` whose centre is nearest to `p` and at most `R` away, if any; of
    /// equally near ones, the lowest id. Walks the buckets of the 2 × 2 × 2 cells that can hold such a centre
    /// (a cluster may be seen twice when two of them share a bucket, which changes nothing): first the four of
    /// the point's own y layer, then the four of the other layer unless that layer lies further than the best
    /// centre so far. The layer's distance is shrunk by a slack of many ulps of the coordinates, so that
    /// rounding never skips a centre as near as the best. (Skipping x and z cells the same way cost more
    /// instructions and mispredictions than it saved on the benchmark crowds.)
    #[inline]
    pub(crate) fn nearest(&self, p: Vec3, exclude: u32) -> Option<u32> {
        // Centres within `R` have `v' = centre / 2R` in `v ± 0.5`, so cells `floor(v' + 0.5)` in
        // `base ..= base + 1`. Along y the two layers meet at `base + 0.5`: `p` is in the lower one when
        // `fy < 0.5`, and the other lies `|fy - 0.5|` cells (of `2R`) away.
        let v = p * self.inv_cell;
        let base = floor_cell(v);
        let mask = self.heads.len() - 1;
        let hx = [base.x as u32, base.x.wrapping_add(1) as u32].map(|v| v.wrapping_mul(HASH_X));
        let hz = [base.z as u32, base.z.wrapping_add(1) as u32].map(|v| v.wrapping_mul(HASH_Z));
        let fy = v.y - base.y as f32;
        // Saturating, so that past the `i32` range (where every centre saturates to one cell) the own layer
        // is that cell's.
        let (own, other) = if fy < 0.5 {
            (base.y, base.y.saturating_add(1))
        } else {
            (base.y.saturating_add(1), base.y)
        };
        let slack = (p.abs().max_element() + self.radius) * 4e-6;
        let gap = ((fy - 0.5).abs() * (2.0 * self.radius) - slack).max(0.0);
        let mut best = NONE;
        let mut best_d = self.radius * self.radius;
        for (layer, y) in [own, other].into_iter().enumerate() {
            if layer == 1 && gap * gap > best_d {
                break;
            }
            let y = (y as u32).wrapping_mul(HASH_Y);
            for z in hz {
                for x in hx {
                    let mut c = self.heads.get(mix(x, y, z, mask)).copied().unwrap_or(NONE);
                    while let Some(n) = self.nodes.get(c as usize) {
                        let d = n.centre.distance_squared(p);
                        if (d < best_d || (d == best_d && c < best)) && c != exclude {
                            best_d = d;
                            best = c;
                        }
                        c = n.next;
                    }
                }
            }
        }
        (best != NONE).then_some(best)
    }

    /// Every filed cluster as `(id, filed centre)`, in id order (for tests).
    #[cfg(test)]
    pub(crate) fn filed(&self) -> impl Iterator<Item = (u32, Vec3)> + '_ {
        self.links
            .iter()
            .zip(&self.nodes)
            .enumerate()
            .filter(|(_, (l, _))| l.linked)
            .map(|(i, (_, n))| (i as u32, n.centre))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

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

    /// The plain twin of [`ClusterGrid::nearest`]: every filed cluster, one at a time.
    fn nearest_reference(g: &ClusterGrid, p: Vec3, exclude: u32) -> Option<u32> {
        let mut best = None;
        let mut best_d = g.radius * g.radius;
        for (id, centre) in g.filed() {
            let d = centre.distance_squared(p);
            if id != exclude && d <= best_d && (d < best_d || best.is_none()) {
                best_d = d;
                best = Some(id);
            }
        }
        best
    }

    #[test]
    fn finds_the_nearest_centre_within_r_and_survives_rehash() {
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
            let want = centres
                .iter()
                .enumerate()
                .filter(|(i, c)| *i != 7 && c.distance(*probe) <= r * 0.999)
                .min_by(|a, b| a.1.distance_squared(*probe).total_cmp(&b.1.distance_squared(*probe)))
                .map(|(i, _)| i as u32);
            assert_eq!(g.nearest(*probe, NONE), want, "probe {probe}");
            assert_eq!(g.nearest(*probe, NONE), nearest_reference(&g, *probe, NONE));
        }
        for (i, c) in centres.iter().enumerate() {
            assert_eq!(g.is_placed_at(i as u32, *c), i != 7);
        }
    }

    #[test]
    fn far_away_centres_are_found() {
        let mut g = ClusterGrid::new(2.0);
        g.reserve_clusters(8);
        let far = [1e12f32, -1e12, 3e9, -3e9, f32::MAX / 2.0, -f32::MAX / 2.0];
        for (i, &x) in far.iter().enumerate() {
            g.place(i as u32, Vec3::new(x, -x, 0.0));
        }
        for (i, &x) in far.iter().enumerate() {
            let p = Vec3::new(x, -x, 0.0);
            assert_eq!(g.nearest(p, NONE), Some(i as u32), "{x}");
            assert_eq!(g.nearest(p, NONE), nearest_reference(&g, p, NONE));
        }
    }

    #[test]
    fn refiling_across_cells_and_far_out_keeps_the_cell_exact() {
        let r = 2.0;
        let mut g = ClusterGrid::new(r);
        g.reserve_clusters(2);
        g.place(1, Vec3::new(0.5, 0.0, 0.5));
        // Small steps across cell faces (cell faces lie at odd multiples of R), then far out and back.
        let mut path: Vec<Vec3> = (0..400)
            .map(|i| Vec3::new(i as f32 * 0.05 - 10.0, 0.0, 3.0 - i as f32 * 0.02))
            .collect();
        path.extend([
            Vec3::new(-2.0, 2.0, 6.0),
            Vec3::new(2.0, -2.0, -6.0),
            Vec3::new(1.999_999_9, 0.0, 0.0),
            Vec3::new(3e7, 0.0, 0.0),
            Vec3::new(3e7 + 4.0, 0.0, 0.0),
            Vec3::new(1e12, -1e12, 0.0),
            Vec3::new(f32::MAX / 2.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(-3.0, 0.0, 1.0),
        ]);
        for p in path {
            g.place(0, p);
            assert!(g.is_placed_at(0, p), "{p}");
            assert!(g.is_placed_at(1, Vec3::new(0.5, 0.0, 0.5)));
            assert_eq!(g.nearest(p, 1), Some(0), "{p}");
        }
    }

    #[derive(Clone, Debug)]
    enum GridOp {
        Place(u32, Vec3),
        Unlink(u32),
        Grow(usize),
    }

    fn point() -> impl Strategy<Value = Vec3> {
        prop_oneof![
            (-30.0f32..30.0, -3.0f32..3.0, -30.0f32..30.0).prop_map(|(x, y, z)| Vec3::new(x, y, z)),
            // On a few planes, as crowds on flat ground are, including cell faces.
            (
                -30.0f32..30.0,
                prop::sample::select(vec![0.0f32, 0.5, 1.0, 2.0, -4.0]),
                -30.0f32..30.0
            )
                .prop_map(|(x, y, z)| Vec3::new(x, y, z)),
        ]
    }

    fn grid_op() -> impl Strategy<Value = GridOp> {
        prop_oneof![
            6 => (0u32..48, point()).prop_map(|(id, p)| GridOp::Place(id, p)),
            2 => (0u32..48).prop_map(GridOp::Unlink),
            1 => (1usize..200).prop_map(GridOp::Grow),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// The bucket walk finds exactly what a scan of every filed cluster finds, whatever was placed, moved,
        /// unlinked and rehashed before.
        #[test]
        fn nearest_is_the_plain_scan(
            radius in 0.5f32..8.0,
            ops in prop::collection::vec(grid_op(), 1..120),
            probes in prop::collection::vec((point(), 0u32..50), 1..40),
        ) {
            let mut g = ClusterGrid::new(radius);
            g.reserve_clusters(48);
            let mut filed = vec![None; 48];
            for op in ops {
                match op {
                    GridOp::Place(id, p) => {
                        g.place(id, p);
                        filed[id as usize] = Some(p);
                    }
                    GridOp::Unlink(id) => {
                        g.unlink(id);
                        filed[id as usize] = None;
                    }
                    GridOp::Grow(n) => g.reserve_clusters(n),
                }
                for (id, f) in filed.iter().enumerate() {
                    match f {
                        Some(p) => prop_assert!(g.is_placed_at(id as u32, *p)),
                        None => prop_assert!(!g.is_linked(id as u32)),
                    }
                }
            }
            for (p, exclude) in probes {
                // Probes at filed centres give ties and zero distances too.
                let q = filed.iter().flatten().nth(exclude as usize).copied().unwrap_or(p);
                // And probes on cell faces and half-way between them.
                let snapped = (p / radius).round() * radius;
                for probe in [p, q, snapped, snapped + Vec3::new(1e-6, -1e-6, 0.0)] {
                    prop_assert_eq!(
                        g.nearest(probe, exclude),
                        nearest_reference(&g, probe, exclude)
                    );
                }
            }
        }
    }
}
