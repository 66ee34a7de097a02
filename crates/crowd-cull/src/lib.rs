//! Instance store, moving clusters, frustum culling, LOD and animation-rate tiers for crowds of up to
//! millions of instances, with no GPU dependency.
//!
//! - [`InstanceStore`] holds every instance in SoA arrays per draw group (one (mesh, material) pair), behind
//!   stable generational [`Handle`]s. Adds, removes (swap-remove with handle remap) and moves are O(1), one at a
//!   time or in bulk; bad input (NaN, unknown clips, stale handles) is an [`Error`] and changes nothing.
//! - Instances are grouped into clusters as in Unreal 3's foliage: an instance joins the nearest cluster whose
//!   centre is within [`ClusterSettings::radius`] and which has room, or starts one. A cluster's instances are
//!   contiguous in storage. Moves keep cluster boxes conservative at once (large bulk moves refit the clusters
//!   they touch, in parallel); [`InstanceStore::maintain`] refits boxes and reassigns drifting instances under
//!   a per-frame [`MaintainBudget`].
//! - [`CullingJob`] tests cluster boxes, then instance spheres, against the frustum (SIMD through glam, in
//!   parallel with rayon), picks each visible instance's LOD, [`Tier`] and update-rate divisor from its screen
//!   size with hysteresis, and writes contiguous visible lists per (group, LOD, tier) with indirect-draw
//!   counts ([`DrawRange`]). It never allocates.
//! - [`reference`](mod@reference) holds the plain twins the tests compare the fast paths with.
//!
//! Animated bounds come in as data: [`GroupDesc::clip_bounds`] gives, per clip, the union of the skinned
//! bounds over all frames (see [`bounds`] for the contract).
//!
//! # Example
//!
//! ```
//! use crowd_cull::{
//!     Aabb, ClusterSettings, CullCamera, CullOutput, CullingCache, CullingJob, GroupDesc, InstanceDesc,
//!     InstanceStore, MaintainBudget, Tier,
//! };
//! use glam::Vec3;
//!
//! let mut store = InstanceStore::new(ClusterSettings::default())?;
//! let group = store.add_group(GroupDesc {
//!     mesh: 0,
//!     material: 0,
//!     // One clip whose skinned bounds over all frames fit this box.
//!     clip_bounds: vec![Aabb::new(Vec3::new(-0.5, 0.0, -0.5), Vec3::new(0.5, 1.8, 0.5))],
//!     lod_thresholds: vec![0.2, 0.05],
//!     tier_thresholds: [0.3, 0.1, 0.02],
//!     rate_thresholds: [0.2, 0.05, 0.01],
//!     hysteresis: 0.1,
//! })?;
//! let near = store.add(group, &InstanceDesc::at(Vec3::new(0.0, 0.0, -5.0), 0))?;
//! let behind = store.add(group, &InstanceDesc::at(Vec3::new(0.0, 0.0, 50.0), 0))?;
//!
//! // Per frame: move, maintain, cull.
//! store.set_position(near, Vec3::new(0.1, 0.0, -5.0))?;
//! store.maintain(MaintainBudget::default());
//! let camera = CullCamera::perspective(Vec3::new(0.0, 1.6, 0.0), Vec3::new(0.0, 1.6, -1.0), Vec3::Y, 1.0, 16.0 / 9.0, 0.1, 500.0);
//! let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
//! cache.prepare(&store); // After adding instances, outside the hot path.
//! output.prepare(&store);
//! let visible = CullingJob { store: &mut store, camera: &camera, cache: &mut cache, output: &mut output }.run()?;
//! assert_eq!(visible, 1);
//! let state = store.get(near)?.state;
//! assert!(state.is_visible() && state.tier() == Tier::Unique && state.lod == 0);
//! assert_eq!(output.list(group, 0, Tier::Unique), &[store.get(near)?.slot]);
//! assert!(!store.get(behind)?.state.is_visible());
//! # Ok::<(), crowd_cull::Error>(())
//! ```
//!
//! # Features
//!
//! - `scalar`: glam's scalar math instead of SIMD (CI tests both). The fast paths are written once, over glam
//!   `Vec4` lanes; there are no intrinsics and no `unsafe`.

pub mod bounds;
mod camera;
mod cluster_grid;
mod culling_job;
mod error;
mod group;
mod instance;
pub mod limits;
pub mod reference;
mod store;

pub use bounds::Aabb;
pub use camera::CullCamera;
pub use culling_job::{CHUNK_CLUSTERS, CullOutput, CullingCache, CullingJob, DrawRange};
pub use error::{Error, Result};
pub use group::GroupDesc;
pub use instance::{AnimState, GroupId, Handle, Instance, InstanceDesc, Tier, TierState};
pub use store::{ClusterSettings, GroupSlots, InstanceStore, MaintainBudget, MaintainStats};
