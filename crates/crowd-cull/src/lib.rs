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
//! - `reference` holds the plain twins the tests and benchmarks compare the fast paths with; it is public for
//!   them only (hidden from these docs) and is not part of the API.
//!
//! # Slots and when to prepare
//!
//! Instances live in *slots*: each cluster owns `capacity` contiguous slots, and a group's slots are its clusters'
//! (live or deleted) times the capacity. An instance joins a cluster within the radius that has room, so clusters
//! are rarely full and a crowd typically holds one and a half to two slots per instance; deleted clusters keep
//! their slots for reuse. [`InstanceStore::slot_count`] only grows, and it grows whenever a cluster opens: on
//! [`InstanceStore::add`] and [`InstanceStore::add_many`], and in [`InstanceStore::maintain`], whose
//! reassignments start clusters for instances that moved away from theirs (a large bulk move followed by
//! `maintain` does). Moves themselves never open a cluster.
//! [`InstanceStore::set_max_slots`] caps the slot count (for example at what a renderer can bind): past it an add
//! that needs a new cluster fails with [`Error::SlotLimit`] and changes nothing, and `maintain` leaves a drifting
//! instance where it is; removals free clusters for reuse.
//! [`CullingCache::prepare`] and [`CullOutput::prepare`] must therefore run before every [`CullingJob::run`] that
//! follows any of those; a frame step calls them every frame, since they allocate only when the store grew.
//! `run` reports a missed one as [`Error::NotPrepared`] and changes nothing.
//! Buffers indexed by slot (per-slot GPU data) are sized by `slot_count`; buffers written per visible instance
//! (instance records in visible-list order) by the live instance count ([`InstanceStore::len`]), which bounds
//! every visible list.
//!
//! Animated bounds come in as data: [`GroupDesc::clip_bounds`] gives, per clip, the union of the skinned
//! bounds over all frames (see [`bounds`] for the contract).
//!
//! # Example
//!
//! ```
//! use crowd_cull::{
//!     Aabb, ClusterSettings, CullOutput, CullingCache, CullingJob, FrameCamera, GroupDesc, InstanceDesc,
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
//! // Per frame: move, maintain, prepare, cull. Adds and `maintain` can open clusters, and so grow the store's
//! // slots; `prepare` sizes the scratch for them and allocates only when they grew.
//! let (mut cache, mut output) = (CullingCache::new(), CullOutput::new());
//! store.set_position(near, Vec3::new(0.1, 0.0, -5.0))?;
//! store.maintain(MaintainBudget::default());
//! let camera = FrameCamera::perspective(Vec3::new(0.0, 1.6, 0.0), Vec3::new(0.0, 1.6, -1.0), Vec3::Y, 1.0, 16.0 / 9.0, 0.1, 500.0).cull_camera();
//! cache.prepare(&store);
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
mod frame_camera;
mod group;
mod instance;
pub mod limits;
mod near_pick;
#[doc(hidden)]
pub mod reference;
mod store;

pub use bounds::Aabb;
pub use camera::CullCamera;
pub use culling_job::{CullOutput, CullingCache, CullingJob, DrawRange};
pub use error::{Error, Result};
pub use frame_camera::FrameCamera;
pub use group::GroupDesc;
pub use instance::{AnimState, GroupId, Handle, Instance, InstanceDesc, Tier, TierState};
pub use store::{ClusterSettings, GroupSlots, InstanceStore, MaintainBudget, MaintainStats};
