//! The plain twins of the fast paths: scalar, one instance at a time, with no clusters.
//! Tests compare [`CullingJob`](crate::CullingJob) against them.

use glam::Vec3;

use crate::bounds::{clip_union, world_sphere};
use crate::camera::CullCamera;
use crate::group::GroupDesc;
use crate::instance::{GroupId, Handle, Tier, TierState};
use crate::store::InstanceStore;

/// One visible instance, as [`cull_reference_to_vec`] finds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReferenceVisible {
    /// The instance.
    pub handle: Handle,
    /// Its group.
    pub group: GroupId,
    /// Its slot in the group's storage.
    pub slot: u32,
    /// Its screen size (infinite when its centre is at or behind the eye).
    pub screen_size: f32,
    /// The new LOD.
    pub lod: u8,
    /// The new tier.
    pub tier: Tier,
    /// The new update-rate divisor's log2.
    pub rate_log2: u8,
}

/// True when the sphere is not wholly outside any of the camera's planes: the test [`CullingJob`]
/// applies to every instance (it may skip it for clusters whose box is wholly inside or outside).
///
/// [`CullingJob`]: crate::CullingJob
pub fn sphere_visible(camera: &CullCamera, centre: Vec3, radius: f32) -> bool {
    camera
        .planes
        .iter()
        .all(|p| p.x * centre.x + p.y * centre.y + p.z * centre.z + p.w >= -radius)
}

/// The level of screen size `s` for an instance previously at `prev`, with hysteresis `h`, by division.
pub fn level_reference(thresholds: &[f32], h: f32, s: f32, prev: u8) -> u8 {
    thresholds
        .iter()
        .enumerate()
        .filter(|&(i, &t)| {
            let edge = if prev as usize <= i {
                t * (1.0 - h)
            } else {
                t * (1.0 + h)
            };
            s < edge
        })
        .count() as u8
}

fn levels(desc: &GroupDesc, s: f32, prev: TierState) -> (u8, u8, u8) {
    let h = desc.hysteresis;
    (
        level_reference(&desc.lod_thresholds, h, s, prev.lod),
        level_reference(&desc.tier_thresholds, h, s, prev.tier),
        level_reference(&desc.rate_thresholds, h, s, prev.rate_log2),
    )
}

/// Every instance the camera may see, with the levels a culling run would give it now (from the store's
/// current tier states), in handle order. Reads the store; changes nothing.
pub fn cull_reference_to_vec(store: &InstanceStore, camera: &CullCamera) -> Vec<ReferenceVisible> {
    let mut out = Vec::new();
    for h in store.live_handles() {
        let Ok(inst) = store.get(h) else { continue };
        let Ok(desc) = store.group_desc(inst.group) else {
            continue;
        };
        let d = inst.desc;
        let (c, r) = world_sphere(clip_union(&desc.clip_bounds, &d.anim), d.position, d.rotation, d.scale);
        if !sphere_visible(camera, c, r) {
            continue;
        }
        let s = camera.screen_size(c, r);
        let (lod, tier, rate_log2) = levels(desc, s, inst.state);
        out.push(ReferenceVisible {
            handle: h,
            group: inst.group,
            slot: inst.slot,
            screen_size: s,
            lod,
            tier: Tier::from_index(tier),
            rate_log2,
        });
    }
    out
}

/// The cluster of group `g` that an instance added at `position` joins now, by a scan of every cluster: the
/// nearest whose centre (the mean of its members' positions) is within [`ClusterSettings::radius`] and which
/// holds fewer than [`ClusterSettings::capacity`] instances, the lowest id of equally near ones; `None` when
/// the instance starts a new cluster (or the group does not exist). Cluster `k` holds slots `k * C ..`, `C`
/// the capacity. Insertion finds the same cluster through a grid.
///
/// [`ClusterSettings::radius`]: crate::ClusterSettings::radius
/// [`ClusterSettings::capacity`]: crate::ClusterSettings::capacity
pub fn join_cluster_reference(store: &InstanceStore, g: GroupId, position: Vec3) -> Option<u32> {
    let grp = store.groups.get(g.0 as usize)?;
    let settings = store.settings();
    let mut best = None;
    let mut best_d = settings.radius * settings.radius;
    for (k, c) in grp.clusters.iter().enumerate() {
        if c.len == 0 || c.len >= settings.capacity {
            continue;
        }
        let d = c.centre().distance_squared(position);
        if d < best_d || (d == best_d && best.is_none()) {
            best_d = d;
            best = Some(k as u32);
        }
    }
    best
}
