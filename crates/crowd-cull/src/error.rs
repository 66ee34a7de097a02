//! The crate's single error type.
//!
//! Every variant is `Copy` and carries only numbers and `&'static str`s, so that reporting an error never
//! allocates and validation can run on the hot path.

/// Everything that can go wrong in `crowd-cull`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A caller-provided buffer has the wrong size.
    #[error("{what}: expected {expected} elements, got {actual}")]
    BufferSize {
        /// Which argument.
        what: &'static str,
        /// The number of elements required.
        expected: usize,
        /// The number of elements given.
        actual: usize,
    },
    /// A value that must be finite is NaN or infinite.
    #[error("{what} of item {index} is NaN or infinite")]
    NonFinite {
        /// Which field, for example `"position"`.
        what: &'static str,
        /// The item's index in the batch (0 for single operations).
        index: usize,
    },
    /// A finite value is outside its documented range.
    #[error("{what} of item {index} is out of range")]
    OutOfRange {
        /// Which field and rule, for example `"scale (must be > 0)"`.
        what: &'static str,
        /// The item's index in the batch (0 for single operations, the threshold's index for settings).
        index: usize,
    },
    /// An animation state names a clip that the draw group has no bounds for.
    #[error("item {index}: clip {clip} is unknown to draw group {group}, which has {clip_count} clips")]
    UnknownClip {
        /// The item's index in the batch (0 for single operations).
        index: usize,
        /// The clip asked for.
        clip: u32,
        /// The draw group.
        group: u32,
        /// How many clips the group knows.
        clip_count: u32,
    },
    /// A draw group id that the store does not hold.
    #[error("item {index}: draw group {group} does not exist (the store has {group_count})")]
    UnknownGroup {
        /// The item's index in the batch (0 for single operations).
        index: usize,
        /// The group asked for.
        group: u32,
        /// How many groups the store holds.
        group_count: u32,
    },
    /// A handle whose instance was removed, or that never belonged to this store.
    #[error("item {index}: handle {handle_index} (generation {generation}) is stale or foreign")]
    StaleHandle {
        /// The item's index in the batch (0 for single operations).
        index: usize,
        /// The handle's slot in the handle table.
        handle_index: u32,
        /// The handle's generation.
        generation: u32,
    },
    /// The same handle appears twice in one bulk removal.
    #[error("item {index}: handle {handle_index} appears twice in the batch")]
    DuplicateHandle {
        /// The item's index in the batch (the second occurrence).
        index: usize,
        /// The handle's slot in the handle table.
        handle_index: u32,
    },
    /// A limit constant would be exceeded.
    #[error("{what}: the limit is {limit}")]
    Limit {
        /// Which limit, for example `"instances per store"`.
        what: &'static str,
        /// The limit's value.
        limit: usize,
    },
    /// A camera plane or parameter is NaN, infinite or degenerate.
    #[error("camera {what} (index {index}) is NaN, infinite or degenerate")]
    Camera {
        /// Which part: `"frustum plane"`, `"depth plane"` or `"projection scale"` of a `CullCamera`, or the
        /// argument of `FrameCamera::orthographic` (for example `"view height (finite, > 0)"`).
        what: &'static str,
        /// The plane's index, or 0.
        index: usize,
    },
    /// Inserting would open a cluster block past the store's slot limit (`InstanceStore::set_max_slots`);
    /// nothing was inserted. Removing instances frees blocks for reuse, or the limit can be raised.
    #[error("item {index} needs a new cluster block: {needed} slots, past the store's slot limit of {max}")]
    SlotLimit {
        /// The item of the batch that needed the block (0 for single operations).
        index: usize,
        /// The store's slot count with that block.
        needed: usize,
        /// The store's slot limit (`InstanceStore::max_slots`).
        max: usize,
    },
    /// A slot limit below the slots the store already holds, or above `MAX_SLOTS`.
    #[error("slot limit {asked} is outside {min}..={max} (the store's slot count ..= MAX_SLOTS)")]
    MaxSlots {
        /// The limit asked for.
        asked: usize,
        /// The store's slot count: the smallest limit it accepts.
        min: usize,
        /// `MAX_SLOTS`: the largest limit it accepts.
        max: usize,
    },
    /// A cache or output was prepared for a different store shape; call `prepare` again.
    #[error("{what} was prepared for a different store (call prepare before run)")]
    NotPrepared {
        /// Which argument.
        what: &'static str,
    },
    /// `InstanceStore::check_invariants` found a broken invariant (a bug, reported rather than panicking).
    #[error("invariant broken in draw group {group}, cluster {cluster}: {what}")]
    Invariant {
        /// What is wrong.
        what: &'static str,
        /// The draw group.
        group: u32,
        /// The cluster (or slot, where the message says so).
        cluster: u32,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
