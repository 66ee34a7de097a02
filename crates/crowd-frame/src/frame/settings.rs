//! [`FrameSettings`]: how a crowd tiers, animates and hands over its instances.

use anim_pose::PosePoolOptions;
use crowd_cull::{ClusterSettings, MaintainBudget};
use skin_pack::Overrun;

/// How a [`CrowdFrame`](crate::CrowdFrame) tiers, animates and hands over its crowd.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameSettings {
    /// The store's clusters, in the positions' units (see `crowd_cull::ClusterSettings`).
    pub cluster: ClusterSettings,
    /// Screen-size thresholds between LODs: one fewer than the character's LODs (`crowd_cull::GroupDesc`).
    pub lod_thresholds: Vec<f32>,
    /// Screen-size thresholds below which an instance is pooled, baked, VAT. Default `[0.3, 0.1, 0.02]`: with a
    /// 60° lens, a 1.8 m character is unique within about 6 m, pooled to 17 m and baked to 90 m.
    pub tier_thresholds: [f32; 3],
    /// Screen-size thresholds of the update-rate divisors 2, 4 and 8. Default `[0.2, 0.05, 0.01]`. The frame
    /// animates every visible instance every frame (pooled instances cost nothing per frame, and unique ones are
    /// few), so only a renderer that interpolates reads them.
    pub rate_thresholds: [f32; 3],
    /// The tier hysteresis band. Default 0.1.
    pub hysteresis: f32,
    /// The pose pool: crossfade levels and buckets.
    pub pool: PosePoolOptions,
    /// The most unique palettes per frame. Unique-tier instances past it (in visible-list order) are packed as
    /// pooled, in a second draw. Default 256.
    pub max_unique: usize,
    /// The store's per-frame cluster upkeep.
    pub maintain: MaintainBudget,
    /// Packets in the exchange: 2 or 3. Default 2.
    pub packets: usize,
    /// What the step does when the render thread holds every packet. Default [`Overrun::Wait`].
    pub overrun: Overrun,
    /// Write palettes with streaming stores (see `skin_pack::FlattenJob::streaming`). Default `false`.
    pub streaming: bool,
    /// The GPU-driven path: `step` culls nothing and packs no record per instance; it hands over the changed
    /// resident instances ([`Packet::resident`](crate::Packet::resident)), the pool's clip slots and the few unique instances nearest the
    /// camera, and a GPU pass culls and draws the rest. Default `false` (the CPU-culled path).
    pub gpu_driven: bool,
    /// Whether the step keeps the shared pose pool. `false` is for GPU-driven crowds whose renderer has a
    /// bone-animation bake: the step then neither updates nor flattens the pool, the packet says so
    /// ([`ResidentChanges::pose_pool`](crate::ResidentChanges::pose_pool)), and the renderer draws the GPU-drawn
    /// instances of the unique and pooled tiers from the bake. Needs `gpu_driven`. Default `true`.
    pub pose_pool: bool,
    /// The most store slots the crowd may use (`crowd_cull::InstanceStore::set_max_slots`): adds that would need
    /// more are refused with `crowd_cull::Error::SlotLimit`, and cluster upkeep opens no cluster past it. A
    /// GPU-driven renderer holds one resident state per slot, bound whole: give it the renderer's limit
    /// (`crowd_gpu::CrowdRenderer::max_resident_slots`). Default `crowd_cull::limits::MAX_SLOTS`.
    pub max_slots: usize,
}

impl Default for FrameSettings {
    fn default() -> Self {
        Self {
            cluster: ClusterSettings::default(),
            lod_thresholds: Vec::new(),
            tier_thresholds: [0.3, 0.1, 0.02],
            rate_thresholds: [0.2, 0.05, 0.01],
            hysteresis: 0.1,
            pool: PosePoolOptions::default(),
            max_unique: 256,
            maintain: MaintainBudget::default(),
            packets: 2,
            overrun: Overrun::Wait,
            streaming: false,
            gpu_driven: false,
            pose_pool: true,
            max_slots: crowd_cull::limits::MAX_SLOTS,
        }
    }
}
