//! Cluster refits from their members, in parallel over clusters: the full refit after a bulk move (spheres,
//! box and centre) and the box-and-centre refit of `InstanceStore::maintain`.

use glam::{Vec3, Vec4};
use rayon::prelude::*;

use crate::group::{Group, SoaSphere};

/// The bulk-move pass: for every cluster of `grp` flagged `moved`, in parallel over clusters, recomputes every
/// member's sphere from its (new) position and sphere offset, then the box and the position sum from the
/// members (a full refit), and counts the members further than `sqrt(r2)` from the new centre.
pub(super) fn move_refit_group(grp: &mut Group, r2: f32) {
    let cap = grp.cap;
    let lanes = cap / 4;
    grp.clusters
        .par_iter_mut()
        .zip(grp.spheres.par_chunks_mut(lanes))
        .zip(grp.position.par_chunks(cap))
        .zip(grp.offset.par_chunks(cap))
        // Touched clusters bunch together (a marching column is a run of clusters): small pieces let both
        // threads share them (rayon splits a range only so far unless its pieces are stolen).
        .with_max_len(32)
        .for_each(|(((c, spheres), pos), offset)| {
            if !c.moved {
                return;
            }
            let n = c.len as usize;
            let (mut lo, mut hi) = ([Vec4::INFINITY; 3], [Vec4::NEG_INFINITY; 3]);
            let mut sum = Vec3::ZERO;
            for (k, sp) in spheres[..n.div_ceil(4)].iter_mut().enumerate() {
                let lanes = (n - 4 * k).min(4);
                // Four members at a time; lanes past the last member repeat lane 0 (they only feed the box).
                // The same operations as `Group::refresh_sphere`, and the sum in member order.
                let m: [Vec4; 4] = if lanes == 4 {
                    // A full quad (all but a cluster's last): no per-lane tests.
                    let (p, o) = (&pos[4 * k..4 * k + 4], &offset[4 * k..4 * k + 4]);
                    sum += p[0];
                    sum += p[1];
                    sum += p[2];
                    sum += p[3];
                    std::array::from_fn(|l| (p[l] + o[l].truncate()).extend(o[l].w))
                } else {
                    let mut m = [Vec4::ZERO; 4];
                    for (l, m) in m.iter_mut().enumerate() {
                        let i = 4 * k + if l < lanes { l } else { 0 };
                        *m = (pos[i] + offset[i].truncate()).extend(offset[i].w);
                        if l < lanes {
                            sum += pos[i];
                        }
                    }
                    m
                };
                let t = glam::Mat4::from_cols(m[0], m[1], m[2], m[3]).transpose();
                let (x, y, z, r) = (t.x_axis, t.y_axis, t.z_axis, t.w_axis);
                if lanes == 4 {
                    *sp = SoaSphere { x, y, z, r };
                } else {
                    for l in 0..lanes {
                        sp.x[l] = x[l];
                        sp.y[l] = y[l];
                        sp.z[l] = z[l];
                        sp.r[l] = r[l];
                    }
                }
                // `grow` on four lanes: the same operations, lane by lane.
                let pad = (r + x.abs().max(y.abs()).max(z.abs())) * 4e-7;
                let rp = r + pad;
                for (a, v) in [x, y, z].into_iter().enumerate() {
                    lo[a] = lo[a].min(v - rp);
                    hi[a] = hi[a].max(v + rp);
                }
            }
            c.aabb = crate::bounds::Aabb::new(
                Vec3::new(lo[0].min_element(), lo[1].min_element(), lo[2].min_element()),
                Vec3::new(hi[0].max_element(), hi[1].max_element(), hi[2].max_element()),
            );
            c.sum = sum;
            let centre = c.centre();
            c.drifters = pos[..n].iter().filter(|p| centre.distance_squared(**p) > r2).count() as u32;
        });
}

/// The box `grow` builds from the first `n` spheres of `spheres`, four lanes at a time: the same operations,
/// lane by lane, so the same box.
pub(super) fn fit_spheres(spheres: &[SoaSphere], n: usize) -> crate::bounds::Aabb {
    let (mut lo, mut hi) = ([Vec4::INFINITY; 3], [Vec4::NEG_INFINITY; 3]);
    let lane = Vec4::new(0.0, 1.0, 2.0, 3.0);
    for (k, sp) in spheres.iter().enumerate() {
        // Lanes past the last member repeat lane 0 (stale slots must not widen the box).
        let live = lane.cmplt(Vec4::splat((n - 4 * k) as f32));
        let pick = |v: Vec4| Vec4::select(live, v, Vec4::splat(v.x));
        let (x, y, z, r) = (pick(sp.x), pick(sp.y), pick(sp.z), pick(sp.r));
        let pad = (r + x.abs().max(y.abs()).max(z.abs())) * 4e-7;
        let rp = r + pad;
        for (a, v) in [x, y, z].into_iter().enumerate() {
            lo[a] = lo[a].min(v - rp);
            hi[a] = hi[a].max(v + rp);
        }
    }
    crate::bounds::Aabb::new(
        Vec3::new(lo[0].min_element(), lo[1].min_element(), lo[2].min_element()),
        Vec3::new(hi[0].max_element(), hi[1].max_element(), hi[2].max_element()),
    )
}

/// Refits every cluster of `grp` flagged `refit`, in parallel over clusters, and counts the members further
/// than `sqrt(r2)` from the new centre.
pub(super) fn refit_group(grp: &mut Group, r2: f32) {
    let cap = grp.cap;
    let lanes = cap / 4;
    grp.clusters
        .par_iter_mut()
        .zip(grp.spheres.par_chunks(lanes))
        .zip(grp.position.par_chunks(cap))
        // Dirty clusters bunch together: small pieces let every thread share them.
        .with_max_len(32)
        .for_each(|((c, spheres), pos)| {
            if !c.refit {
                return;
            }
            c.refit = false;
            let n = c.len as usize;
            c.aabb = fit_spheres(&spheres[..n.div_ceil(4)], n);
            c.sum = pos[..n].iter().fold(Vec3::ZERO, |sum, p| sum + *p);
            let centre = c.centre();
            c.drifters = pos[..n].iter().filter(|p| centre.distance_squared(**p) > r2).count() as u32;
        });
}
