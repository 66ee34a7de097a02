//! [`FrameStats`] and [`StageTimes`]: what one frame held and did, and how long each stage of the step took.

/// Wall-clock milliseconds of each stage of one [`CrowdFrame::step`](crate::CrowdFrame::step).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct StageTimes {
    /// Fade progress and cluster maintenance (step 1 and 2).
    pub changes_ms: f32,
    /// Tiering and culling (step 3).
    pub cull_ms: f32,
    /// Crossfade requests, the pose pool update and the mapping of pooled instances to slots (step 4).
    pub pool_ms: f32,
    /// Sampling, blending and local-to-model of the unique instances (step 5).
    pub unique_ms: f32,
    /// Waiting for a free packet (the render thread is behind).
    pub wait_ms: f32,
    /// Flattening the live slot palettes and the unique palettes (step 6).
    pub flatten_ms: f32,
    /// Packing the records (step 7) and the draws and dirty ranges (step 8).
    pub pack_ms: f32,
}

/// What one frame held and did.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct FrameStats {
    /// The animation time after the step, in seconds since the clock's epoch (see `CrowdFrame::anim_time`).
    pub time: f32,
    /// The crowd's clock after the step, in seconds since the crowd was made.
    pub clock: f64,
    /// Live instances.
    pub instances: u32,
    /// Instances that culling found visible: the number of records.
    pub visible: u32,
    /// Visible instances in each culling tier (unique, pooled, baked, VAT).
    pub per_tier: [u32; 4],
    /// Visible instances drawn with their own palette.
    pub unique: u32,
    /// Unique-tier instances past the unique cap, packed as pooled.
    pub unique_overflow: u32,
    /// Instances in a crossfade.
    pub fading: u32,
    /// Live pose-pool slots (clip slots and active crossfade buckets).
    pub live_slots: u32,
    /// Active crossfade buckets.
    pub crossfade_buckets: u32,
    /// Bytes in the packet's dirty ranges: what the renderer uploads.
    pub dirty_bytes: u64,
    /// GPU-driven frames: resident slots changed (uploaded) this frame.
    pub resident_changed: u32,
    /// Stage times.
    pub stages: StageTimes,
}
