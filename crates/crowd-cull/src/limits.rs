//! Limit constants. Each one's doc says why it exists.

/// The most LOD levels a draw group can have.
///
/// Per-instance LOD is stored in a `u8`, and each (LOD, tier) pair is one output bucket per group;
/// eight levels times [`TIER_COUNT`] tiers keep a cluster chunk's bucket counts in 32 `u32`s on the stack.
pub const MAX_LODS: usize = 8;

/// The number of representation tiers (unique, pooled, baked, VAT): the tiers of the pipeline design that
/// draw skinned meshes. Procedural instances are a separate draw group with their own shader.
pub const TIER_COUNT: usize = 4;

/// The number of animation update-rate divisors: 1, 2, 4 and 8.
pub const RATE_COUNT: usize = 4;

/// The most output buckets of one draw group: one per (LOD, tier).
pub const MAX_BUCKETS: usize = MAX_LODS * TIER_COUNT;

/// The largest cluster capacity.
///
/// A cluster's instances are one contiguous block of the group's storage, and a cluster is refit and culled
/// by one thread; 1,024 keeps one cluster's sphere data (16 KiB) inside a core's L1 cache.
pub const MAX_CLUSTER_CAPACITY: u32 = 1024;

/// The most instance slots a store can hold (all groups together).
///
/// Visible lists hold `u32` slot indices and handles are `u32`, so a slot index must fit with one value left
/// over for "none"; this also bounds what GPU `first_instance` can address.
pub const MAX_SLOTS: usize = (u32::MAX - 1) as usize;

/// The widest hysteresis band, as a fraction of a threshold.
///
/// Past one half, a band's lower edge falls below zero screen size or overlaps the next level's band, and the
/// level order would no longer be well defined.
pub const MAX_HYSTERESIS: f32 = 0.5;
