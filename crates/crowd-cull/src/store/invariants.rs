//! [`InstanceStore::check_invariants`]: the O(instances) structural checker the tests and debugging use.

use super::InstanceStore;
use crate::error::{Error, Result};

impl InstanceStore {
    /// Checks every structural invariant in O(instances): every live handle's instance is in exactly one
    /// cluster of its group (the slot's back-reference and the cluster's range agree); live counts match;
    /// every cluster's box holds its members' spheres; spheres match the stored transforms and clips;
    /// centres match members (to rounding); live clusters with room are filed in the grid at exactly their
    /// centre, and full and deleted ones are not. For tests and debugging.
    pub fn check_invariants(&self) -> Result<()> {
        let mut live = 0usize;
        for (i, e) in self.handles.iter().enumerate() {
            if e.generation % 2 == 0 {
                continue;
            }
            live += 1;
            let bad = |what| Error::Invariant {
                what,
                group: e.group,
                cluster: i as u32,
            };
            let grp = self.groups.get(e.group as usize).ok_or(bad("handle names no group"))?;
            let s = e.slot as usize;
            if grp.owner.get(s) != Some(&(i as u32)) {
                return Err(bad(
                    "slot's owner is not the handle (cluster field holds the handle index)",
                ));
            }
            let k = grp.cluster_of(s);
            if (s % grp.cap) as u32 >= grp.clusters[k].len {
                return Err(bad("handle's slot lies outside its cluster's range"));
            }
        }
        if live != self.live {
            return Err(Error::Invariant {
                what: "live count",
                group: 0,
                cluster: 0,
            });
        }
        let mut group_live = 0;
        let mut slots = 0;
        for (g, grp) in self.groups.iter().enumerate() {
            let g = g as u32;
            // The refit queue holds each cluster at most once, exactly those flagged queued, and every dirty
            // cluster is queued: it never outgrows the clusters (no allocation in a steady state).
            let mut in_queue = vec![false; grp.clusters.len()];
            for &k in &grp.dirty {
                let bad = |what| Error::Invariant {
                    what,
                    group: g,
                    cluster: k,
                };
                let seen = in_queue
                    .get_mut(k as usize)
                    .ok_or(bad("refit queue names no cluster"))?;
                if std::mem::replace(seen, true) {
                    return Err(bad("cluster queued for refit twice"));
                }
            }
            for (k, c) in grp.clusters.iter().enumerate() {
                let bad = |what| Error::Invariant {
                    what,
                    group: g,
                    cluster: k as u32,
                };
                if c.queued != in_queue[k] {
                    return Err(bad("cluster's queued flag differs from the refit queue"));
                }
                if c.dirty && !c.queued {
                    return Err(bad("dirty cluster not queued for refit"));
                }
            }
            slots += grp.slot_count();
            let mut members = 0;
            for (k, c) in grp.clusters.iter().enumerate() {
                let bad = |what| Error::Invariant {
                    what,
                    group: g,
                    cluster: k as u32,
                };
                let freed = grp.free_clusters.contains(&(k as u32));
                if c.len == 0 {
                    if !freed || grp.grid.is_linked(k as u32) {
                        return Err(bad("an empty cluster is not deleted"));
                    }
                    continue;
                }
                if freed {
                    return Err(bad("a live cluster is on the free list"));
                }
                if c.len as usize > grp.cap {
                    return Err(bad("cluster over capacity"));
                }
                members += c.len as usize;
                let mut sum = glam::DVec3::ZERO;
                let mut scale = 0.0f64;
                for s in k * grp.cap..k * grp.cap + c.len as usize {
                    let owner = grp.owner[s] as usize;
                    let e = self.handles.get(owner).ok_or(bad("slot owner out of range"))?;
                    if e.generation % 2 == 0 || e.group != g || e.slot as usize != s {
                        return Err(bad("slot's owner handle does not point back at it"));
                    }
                    let (sc, sr) = grp.sphere(s);
                    let (ec, er) = grp.sphere_of(grp.position[s], grp.rotation[s], grp.scale[s], &grp.anim[s]);
                    if sc != ec || sr != er {
                        return Err(bad("stored sphere differs from the instance's transform and clips"));
                    }
                    if !c.aabb.contains_sphere(sc, sr) {
                        return Err(bad("cluster box does not hold a member's sphere"));
                    }
                    sum += grp.position[s].as_dvec3();
                    scale = scale.max(grp.position[s].abs().max_element() as f64);
                }
                let tol = (scale + 1.0) * c.len as f64 * 1e-4;
                if (sum - c.sum.as_dvec3()).abs().max_element() > tol {
                    return Err(bad("cluster position sum drifted from its members"));
                }
                // Every change of a centre or a count re-files the cluster at once.
                if (c.len as usize) < grp.cap {
                    if !grp.grid.is_placed_at(k as u32, c.centre()) {
                        return Err(bad("cluster with room not filed in the grid at its exact centre"));
                    }
                } else if grp.grid.is_linked(k as u32) {
                    return Err(bad("a full cluster is filed in the grid"));
                }
            }
            if members != grp.live {
                return Err(Error::Invariant {
                    what: "group live count differs from its clusters' members",
                    group: g,
                    cluster: 0,
                });
            }
            group_live += members;
        }
        if group_live != self.live || slots != self.slots {
            return Err(Error::Invariant {
                what: "store totals",
                group: 0,
                cluster: 0,
            });
        }
        Ok(())
    }
}
