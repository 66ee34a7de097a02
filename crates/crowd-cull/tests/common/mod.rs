//! Shared helpers of the integration tests: a small draw group and a store to put it in.

#![allow(dead_code, reason = "each test file uses a different subset")]

use crowd_cull::{Aabb, ClusterSettings, GroupDesc, GroupId, InstanceStore};
use glam::Vec3;

/// A character-sized group with three clips: idle, waving (the arm reaches 1.5 m to the side), crouching.
pub fn group_desc() -> GroupDesc {
    GroupDesc {
        mesh: 7,
        material: 3,
        clip_bounds: vec![
            Aabb::new(Vec3::new(-0.4, 0.0, -0.3), Vec3::new(0.4, 1.8, 0.3)),
            Aabb::new(Vec3::new(-0.4, 0.0, -0.3), Vec3::new(1.9, 2.2, 0.3)),
            Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.0, 0.5)),
        ],
        lod_thresholds: vec![0.4, 0.1, 0.02],
        tier_thresholds: [0.5, 0.08, 0.01],
        rate_thresholds: [0.2, 0.05, 0.01],
        hysteresis: 0.1,
    }
}

/// A store with one group of [`group_desc`], clusters of `capacity` within `radius`.
pub fn store(radius: f32, capacity: u32) -> (InstanceStore, GroupId) {
    let mut store = InstanceStore::new(ClusterSettings { radius, capacity }).expect("valid settings");
    let g = store.add_group(group_desc()).expect("valid group");
    (store, g)
}
