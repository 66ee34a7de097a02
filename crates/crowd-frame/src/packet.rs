//! [`Packet`]: one frame as the render thread reads it, plain data with no simulation type.

use crowd_cull::{CullCamera, Tier};
use glam::{Mat4, Vec3};
use skin_pack::{ByteRange, FramePacket, PaletteEntry, PaletteFormat};

use crate::record::InstanceRecord;
use crate::resident::{ResidentClip, ResidentInstance, ResidentOwner};

/// How the records of a draw are animated: which meaning the record's `anim` word has (see [`InstanceRecord`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// A slot pair and a fraction into [`Packet::pool_palettes`].
    Pooled,
    /// The first entry of the instance's own palette in [`Packet::unique_palettes`].
    Unique,
}

/// One draw of the packet: the records `first_instance..first_instance + instance_count` of
/// [`Packet::records`], all of one LOD, culling tier and record kind. A renderer draws each of its meshes' index
/// range for that LOD (the meshes own the LODs' index ranges; the packet names the LOD only) over those records,
/// reading `records[instance_index]` (crowd-gpu binds the record window of the draw's chunk and issues one
/// instanced draw per mesh and chunk).
///
/// Tiers without a GPU path yet (baked and VAT) are packed as [`RecordKind::Pooled`]; so are the unique-tier
/// instances past [`FrameSettings::max_unique`](crate::FrameSettings::max_unique), in a second draw of the
/// same (LOD, tier). The draw list has a fixed length for a given LOD count, so the number of draws never depends
/// on the crowd: per LOD, in tier order, one draw per tier plus the unique tier's overflow draw (five), empty
/// draws included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketDraw {
    /// The LOD, 0 = finest.
    pub lod: u8,
    /// The tier culling chose for these instances.
    pub tier: Tier,
    /// How their records are animated.
    pub kind: RecordKind,
    /// The first record.
    pub first_instance: u32,
    /// The number of records.
    pub instance_count: u32,
}

/// The camera of a frame: what culling used and what the renderer draws with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameCamera {
    /// World to view.
    pub view: Mat4,
    /// View to clip, with wgpu's depth range `[0, 1]` and y up.
    pub proj: Mat4,
    /// The eye position, in world space.
    pub eye: Vec3,
}

impl FrameCamera {
    /// A perspective camera at `eye` looking at `target`, `fov_y` radians high, `aspect` = width / height, with
    /// depth range `near..far`.
    pub fn perspective(eye: Vec3, target: Vec3, up: Vec3, fov_y: f32, aspect: f32, near: f32, far: f32) -> Self {
        Self {
            view: glam::camera::rh::view::look_at_mat4(eye, target, up),
            // wgpu's clip space is D3D's: depth in [0, 1], y up.
            proj: glam::camera::rh::proj::directx::perspective(fov_y, aspect, near, far),
            eye,
        }
    }

    /// `proj * view`.
    pub fn view_proj(&self) -> Mat4 {
        self.proj * self.view
    }

    /// True when every matrix element and the eye are finite.
    pub fn is_finite(&self) -> bool {
        self.view.is_finite() && self.proj.is_finite() && self.eye.is_finite()
    }

    /// The culling camera: the frustum of `view_proj`, depth along the view direction, and the projection's
    /// vertical scale for screen sizes.
    pub fn cull_camera(&self) -> CullCamera {
        // The view matrix's third row is the negated view direction in a right-handed view space.
        let forward = -self.view.row(2).truncate();
        CullCamera::from_view_proj(self.view_proj(), self.eye, forward, self.proj.y_axis.y.abs())
    }
}

impl Default for FrameCamera {
    fn default() -> Self {
        Self {
            view: Mat4::IDENTITY,
            proj: Mat4::IDENTITY,
            eye: Vec3::ZERO,
        }
    }
}

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
    /// The animation clock after the step, in seconds.
    pub time: f32,
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

/// The byte ranges of each packet buffer that changed since the previous published frame.
///
/// Every range a packet's draws read is dirty in that packet: the live slots' palettes (the pool advances every
/// frame), the used unique palettes, and every record. Slots of inactive crossfade buckets and unused unique
/// entries are never dirty, since no draw reads them. So a frame dropped under `Overrun::DropOldest` needs
/// nothing folded into the next ([`FramePacket::absorb_dropped`] does nothing).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirtyRanges {
    /// In [`Packet::pool_palettes`] as bytes, ascending and disjoint.
    pub pool_palettes: Vec<ByteRange>,
    /// In [`Packet::unique_palettes`] as bytes.
    pub unique_palettes: Vec<ByteRange>,
    /// In [`Packet::records`] as bytes.
    pub records: Vec<ByteRange>,
}

/// The resident instances a GPU-driven frame changed: slot ranges, ascending and disjoint, and the new state of
/// every slot in them, range after range. A renderer applies the changes of every frame it reads, in order; a frame
/// dropped under `Overrun::DropOldest` has its changes folded in front of the next frame's (which win).
#[derive(Clone, Debug, PartialEq)]
pub struct ResidentChanges {
    /// The store's slot count: the resident buffer's extent.
    pub slot_count: u32,
    /// The changed slot ranges, in the order to apply.
    pub ranges: Vec<std::ops::Range<u32>>,
    /// The new states, `ranges` after one another.
    pub instances: Vec<ResidentInstance>,
    /// The instance holding each slot of `instances` ([`ResidentOwner::EMPTY`] for an empty one), in the same
    /// order.
    pub owners: Vec<ResidentOwner>,
    /// The pose pool's clips, in clip-id order (constant for a crowd).
    pub clips: Vec<ResidentClip>,
    /// The pose pool's time: looping clips' slots are spread from it.
    pub pool_time: f32,
    /// Whether the pool's slot palettes are live. `false` under
    /// [`FrameSettings::pose_pool`](crate::FrameSettings::pose_pool) `= false`: the packet's pool palettes are
    /// stale, and the renderer must draw the unique and pooled tiers' GPU-drawn instances from a bake.
    pub pose_pool: bool,
}

impl Default for ResidentChanges {
    fn default() -> Self {
        Self {
            slot_count: 0,
            ranges: Vec::new(),
            instances: Vec::new(),
            owners: Vec::new(),
            clips: Vec::new(),
            pool_time: 0.0,
            pose_pool: true,
        }
    }
}

/// One frame for the render thread, handed over by the crowd's
/// [`FrameExchange`](skin_pack::FrameExchange): palettes in GPU layout in format `F`, one record per visible
/// instance in visible-list order, the draws, the camera, the dirty ranges and stats.
///
/// Packets are reused: their buffers keep their capacity and grow only when the crowd does.
#[derive(Clone, Debug)]
pub struct Packet<F: PaletteFormat = PaletteEntry> {
    pub(crate) frame_time: f32,
    pub(crate) camera: FrameCamera,
    pub(crate) skin_joint_count: u32,
    pub(crate) pool_palettes: Vec<F>,
    pub(crate) unique_palettes: Vec<F>,
    pub(crate) records: Vec<InstanceRecord>,
    pub(crate) draws: Vec<PacketDraw>,
    pub(crate) dirty: DirtyRanges,
    pub(crate) stats: FrameStats,
    pub(crate) resident: ResidentChanges,
}

impl<F: PaletteFormat> Packet<F> {
    /// An empty packet for `pool_slots` slots and `max_unique` unique palettes of `skin_joint_count` entries, and
    /// `lods` LODs.
    pub(crate) fn new(
        skin_joint_count: usize,
        pool_slots: usize,
        max_unique: usize,
        lods: usize,
        buckets: usize,
    ) -> Self {
        Self {
            frame_time: 0.0,
            camera: FrameCamera::default(),
            skin_joint_count: skin_joint_count as u32,
            pool_palettes: vec![bytemuck::Zeroable::zeroed(); pool_slots * skin_joint_count],
            unique_palettes: Vec::with_capacity(max_unique * skin_joint_count),
            records: Vec::new(),
            draws: Vec::with_capacity(lods * DRAWS_PER_LOD),
            dirty: DirtyRanges {
                pool_palettes: Vec::with_capacity(1 + buckets),
                unique_palettes: Vec::with_capacity(1),
                records: Vec::with_capacity(1),
            },
            stats: FrameStats::default(),
            resident: ResidentChanges::default(),
        }
    }

    /// The animation clock of the frame, in seconds.
    pub fn time(&self) -> f32 {
        self.frame_time
    }

    /// The camera culling used.
    pub fn camera(&self) -> &FrameCamera {
        &self.camera
    }

    /// Entries per palette: the skin's joint count.
    pub fn skin_joint_count(&self) -> usize {
        self.skin_joint_count as usize
    }

    /// The pooled palettes, slot-major: slot `s`'s palette is `skin_joint_count()` entries from
    /// `s * skin_joint_count()`, in instance space. Only the ranges of [`DirtyRanges::pool_palettes`] hold this
    /// frame's poses; the rest (inactive bucket slots) is stale and unread.
    pub fn pool_palettes(&self) -> &[F] {
        &self.pool_palettes
    }

    /// The unique palettes, instance-major in record order of the unique draws, `skin_joint_count()` entries each,
    /// in instance space.
    pub fn unique_palettes(&self) -> &[F] {
        &self.unique_palettes
    }

    /// One record per visible instance, in the order of the draws.
    pub fn records(&self) -> &[InstanceRecord] {
        &self.records
    }

    /// The draws: five per LOD (see [`PacketDraw`]).
    pub fn draws(&self) -> &[PacketDraw] {
        &self.draws
    }

    /// What changed since the previous published frame.
    pub fn dirty(&self) -> &DirtyRanges {
        &self.dirty
    }

    /// The frame's stats.
    pub fn stats(&self) -> &FrameStats {
        &self.stats
    }

    /// The resident instances this frame changed, for the GPU-driven path (empty on the CPU-culled path, whose
    /// packets carry records instead).
    pub fn resident(&self) -> &ResidentChanges {
        &self.resident
    }
}

/// Draws per LOD: one per tier, plus the unique tier's overflow.
pub const DRAWS_PER_LOD: usize = 5;

impl<F: PaletteFormat> FramePacket for Packet<F> {
    /// Palettes and records need nothing folded: every range a packet reads is dirty in it (see [`DirtyRanges`]).
    /// Resident changes are folded: the dropped frame's ranges and states go in front of this frame's, which are
    /// newer and so applied last. Allocates only when the lists must grow past their capacity.
    fn absorb_dropped(&mut self, dropped: &Self) {
        let (mine, old) = (&mut self.resident, &dropped.resident);
        mine.ranges.splice(0..0, old.ranges.iter().cloned());
        mine.instances.splice(0..0, old.instances.iter().copied());
        mine.owners.splice(0..0, old.owners.iter().copied());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec4;

    #[test]
    fn the_culling_camera_is_the_frustum_of_the_drawing_camera() {
        let (eye, target) = (Vec3::new(3.0, 1.7, 2.0), Vec3::new(-4.0, 0.5, -20.0));
        let frame = FrameCamera::perspective(eye, target, Vec3::Y, 0.9, 1.6, 0.1, 300.0).cull_camera();
        let direct = CullCamera::perspective(eye, target, Vec3::Y, 0.9, 1.6, 0.1, 300.0);
        assert!((frame.proj_scale - direct.proj_scale).abs() < 1e-5);
        assert!(frame.depth_plane.abs_diff_eq(direct.depth_plane, 1e-5));
        // The same set of planes (the two constructions may order them differently). A plane extracted from the
        // matrix loses relative precision in its distance (the far plane's, 297, by about 1e-4).
        let same = |p: Vec4, q: Vec4| {
            p.truncate().abs_diff_eq(q.truncate(), 1e-4) && (p.w - q.w).abs() <= 5e-4 * p.w.abs().max(1.0)
        };
        for p in direct.planes {
            assert!(
                frame.planes.iter().any(|&q| same(p, q)),
                "plane {p} of the direct camera is missing from {:?}",
                frame.planes
            );
        }
    }
}
