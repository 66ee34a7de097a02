//! The per-chunk cull kernel: the camera's planes splatted for four-lane tests, box classification, sphere
//! tests, level picks and the counting sort of a chunk's visible slots by bucket.

use glam::Vec4;

use super::levels::{Levels, uniform_levels};
use super::{CHUNK_CLUSTERS, HIDDEN_CODE};
use crate::bounds::Aabb;
use crate::camera::CullCamera;
use crate::group::{Cluster, SoaSphere};
use crate::instance::TierState;
use crate::limits::{MAX_BUCKETS, TIER_COUNT};

/// The camera, splatted for four-lane tests.
pub(super) struct Planes {
    pub(super) planes: [Vec4; 6],
    px: [Vec4; 6],
    py: [Vec4; 6],
    pz: [Vec4; 6],
    pw: [Vec4; 6],
    depth: [Vec4; 4],
    pub(super) depth_plane: Vec4,
    pub(super) proj_scale: Vec4,
}

impl Planes {
    pub(super) fn new(cam: &CullCamera) -> Self {
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
pub(super) struct Chunk<'a> {
    pub(super) clusters: &'a mut [Cluster],
    pub(super) spheres: &'a [SoaSphere],
    pub(super) cap: usize,
    pub(super) base: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    Outside,
    Partial,
    Inside,
}

/// Where a box lies against the six planes.
pub(super) fn classify(aabb: &Aabb, planes: &[Vec4; 6]) -> Class {
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

pub(super) fn cull_chunk(
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
