//! [`Packet`]: one frame as the render thread reads it, plain data with no simulation type, and
//! [`Packet::from_parts`]: a packet built from plain parts, for engines that animate without
//! [`CrowdFrame`](crate::CrowdFrame) (a tool that renders one exact pose, a test), checked element by element
//! once, where it is built.

use crowd_cull::Tier;
use skin_pack::{ByteRange, FramePacket, PaletteEntry, PaletteFormat};

use crate::record::InstanceRecord;
use crate::resident::{ResidentClip, ResidentInstance, ResidentOwner};
use crate::stats::FrameStats;
use crate::{Error, Result};
use crowd_cull::FrameCamera;

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
/// every slot in them, range after range.
///
/// A renderer holds the crowd as deltas, so each packet says what its changes build on: a packet that is not
/// [`full`](Self::full) applies only on top of the state after frame [`since`](Self::since) of the same
/// [`epoch`](Self::epoch), and leaves the state of frame [`frame`](Self::frame); a full packet carries every slot and
/// applies whatever the renderer held. A frame dropped under `Overrun::DropOldest` has its changes folded in front of
/// the next frame's (which win) and its base taken over, so the chain has no gap.
#[derive(Clone, Debug, PartialEq)]
pub struct ResidentChanges {
    /// The store's slot count: the resident buffer's extent.
    pub slot_count: u32,
    /// The store's handle-table size: every owner's index is below it (a view's hysteresis state is indexed by it).
    pub handle_capacity: u32,
    /// True when `ranges` cover every slot, `0..slot_count`: a full resend
    /// ([`CrowdFrame::resend_all`](crate::CrowdFrame::resend_all), a
    /// [`ResendRequest`](crate::ResendRequest), the clock's epoch moving, the crowd's first packet).
    pub full: bool,
    /// The resend epoch: bumped by every full resend.
    pub epoch: u32,
    /// The frame whose state these changes build on (ignored when `full`).
    pub since: u64,
    /// The frame these changes lead to: this packet's frame number.
    pub frame: u64,
    /// The changed slot ranges, in the order to apply.
    pub ranges: Vec<std::ops::Range<u32>>,
    /// The new states, `ranges` after one another.
    pub instances: Vec<ResidentInstance>,
    /// The instance holding each slot of `instances` ([`ResidentOwner::EMPTY`] for an empty one), in the same
    /// order.
    pub owners: Vec<ResidentOwner>,
    /// The pose pool's clips, in clip-id order (constant for a crowd).
    pub clips: Vec<ResidentClip>,
    /// The pose pool's time (the animation time of its last update): looping clips' slots are spread from it.
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
            handle_capacity: 0,
            full: false,
            epoch: 0,
            since: 0,
            frame: 0,
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

    /// The animation time of the frame, in seconds since the crowd's clock epoch (the same as [`FrameStats::time`]):
    /// what resident start times, the pool's time and a GPU-driven renderer's clock are relative to.
    pub fn time(&self) -> f32 {
        self.stats.time
    }

    /// The crowd's clock at this frame, in seconds since the crowd was made (the same as [`FrameStats::clock`]).
    pub fn clock(&self) -> f64 {
        self.stats.clock
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
    /// newer and so applied last, and this frame's changes now build on what the dropped frame's built on (a full
    /// dropped frame makes this one full). A full frame needs nothing of an older one. Allocates only when the lists
    /// must grow past their capacity.
    fn absorb_dropped(&mut self, dropped: &Self) {
        let (mine, old) = (&mut self.resident, &dropped.resident);
        if mine.full {
            return;
        }
        mine.since = old.since;
        mine.full = old.full;
        mine.ranges.splice(0..0, old.ranges.iter().cloned());
        mine.instances.splice(0..0, old.instances.iter().copied());
        mine.owners.splice(0..0, old.owners.iter().copied());
    }
}

/// The parts of a [`Packet`]: the same meanings as its accessors.
#[derive(Clone, Copy, Debug)]
pub struct PacketParts<'a, F: PaletteFormat> {
    /// The animation clock, in seconds.
    pub time: f32,
    /// The camera.
    pub camera: FrameCamera,
    /// Entries per palette.
    pub skin_joint_count: usize,
    /// Slot-major pooled palettes (`slot * skin_joint_count + joint`).
    pub pool_palettes: &'a [F],
    /// Unique palettes; a unique record names its first entry.
    pub unique_palettes: &'a [F],
    /// One record per drawn instance.
    pub records: &'a [InstanceRecord],
    /// The draws over `records`.
    pub draws: &'a [PacketDraw],
}

impl<F: PaletteFormat> Packet<F> {
    /// A packet holding copies of `parts`, with every buffer dirty (a first frame).
    ///
    /// Checks once here what a frame built by [`CrowdFrame`](crate::CrowdFrame) holds by construction, so that a
    /// renderer can trust each record without checking it per frame.
    ///
    /// # Errors
    ///
    /// An error naming the draw or record at fault: [`Error::PacketJoints`] when `skin_joint_count` is zero or
    /// past `u32::MAX`; [`Error::PacketPalettes`] when a palette buffer is not a whole number of palettes;
    /// [`Error::PacketDraw`] when a draw's records lie past `records`; [`Error::PacketRecordDraws`] when two draws
    /// share a record or a record is drawn by no draw; [`Error::PacketRecordPosition`],
    /// [`Error::PacketRecordScale`], [`Error::PacketRecordSlot`] and [`Error::PacketRecordPalette`] for a record's
    /// non-finite position, a scale that is not a normal positive f16, a pooled slot past the pooled palettes or a
    /// unique palette past the unique palettes; [`Error::Camera`] when the camera is not finite.
    pub fn from_parts(parts: &PacketParts<'_, F>) -> Result<Self> {
        let s = parts.skin_joint_count;
        if s == 0 {
            return Err(Error::PacketJoints { count: s });
        }
        // The packet stores the count as a `u32`, and the shader indexes palettes with `u32`s.
        let Ok(s32) = u32::try_from(s) else {
            return Err(Error::PacketJoints { count: s });
        };
        if !parts.camera.is_finite() {
            return Err(Error::Camera { what: "packet" });
        }
        for (what, buffer) in [
            ("pool_palettes", parts.pool_palettes),
            ("unique_palettes", parts.unique_palettes),
        ] {
            if !buffer.len().is_multiple_of(s) {
                return Err(Error::PacketPalettes {
                    buffer: what,
                    entries: buffer.len(),
                    skin_joints: s,
                });
            }
        }
        let pool_slots = parts.pool_palettes.len() / s;
        let n = parts.records.len();
        let mut drawn = vec![false; n];
        for (d, draw) in parts.draws.iter().enumerate() {
            let first = draw.first_instance as usize;
            let end = first.checked_add(draw.instance_count as usize);
            let Some(end) = end.filter(|&end| end <= n) else {
                return Err(Error::PacketDraw {
                    draw: d,
                    first: draw.first_instance,
                    count: draw.instance_count,
                    records: n,
                });
            };
            for (i, r) in parts.records[first..end].iter().enumerate() {
                let i = first + i;
                if std::mem::replace(&mut drawn[i], true) {
                    return Err(Error::PacketRecordDraws { record: i, draws: 2 });
                }
                check_record(r, i, draw.kind, s, pool_slots, parts.unique_palettes.len())?;
            }
        }
        if let Some(i) = drawn.iter().position(|&d| !d) {
            return Err(Error::PacketRecordDraws { record: i, draws: 0 });
        }
        let whole = |bytes: usize| {
            if bytes == 0 {
                vec![]
            } else {
                vec![ByteRange { start: 0, end: bytes }]
            }
        };
        let dirty = DirtyRanges {
            pool_palettes: whole(size_of_val(parts.pool_palettes)),
            unique_palettes: whole(size_of_val(parts.unique_palettes)),
            records: whole(size_of_val(parts.records)),
        };
        let stats = FrameStats {
            time: parts.time,
            instances: n as u32,
            visible: n as u32,
            unique: parts
                .draws
                .iter()
                .filter(|d| d.kind == RecordKind::Unique)
                .map(|d| d.instance_count)
                .sum(),
            dirty_bytes: [&dirty.pool_palettes, &dirty.unique_palettes, &dirty.records]
                .iter()
                .flat_map(|r| r.iter())
                .map(|r| r.len() as u64)
                .sum(),
            ..FrameStats::default()
        };
        Ok(Self {
            camera: parts.camera,
            skin_joint_count: s32,
            pool_palettes: parts.pool_palettes.to_vec(),
            unique_palettes: parts.unique_palettes.to_vec(),
            records: parts.records.to_vec(),
            draws: parts.draws.to_vec(),
            dirty,
            stats,
            resident: Default::default(),
        })
    }
}

/// Checks record `i` as drawn by a draw of `kind`.
fn check_record(
    r: &InstanceRecord,
    i: usize,
    kind: RecordKind,
    skin_joint_count: usize,
    pool_slots: usize,
    unique_entries: usize,
) -> Result<()> {
    if !r.position.iter().all(|c| c.is_finite()) {
        return Err(Error::PacketRecordPosition {
            record: i,
            position: r.position,
        });
    }
    // A normal positive half: exponent field 1..=30, sign clear.
    let scale = r.scale_fraction & 0xffff;
    if !(0x0400..0x7c00).contains(&scale) {
        return Err(Error::PacketRecordScale { record: i, bits: scale });
    }
    match kind {
        RecordKind::Pooled => {
            for slot in [r.anim & 0xffff, r.anim >> 16] {
                if slot as usize >= pool_slots {
                    return Err(Error::PacketRecordSlot {
                        record: i,
                        slot,
                        slots: pool_slots,
                    });
                }
            }
        }
        RecordKind::Unique => {
            // Checked: the count comes from the caller (a sum that wraps would accept a palette past the buffer).
            let end = (r.anim as usize).checked_add(skin_joint_count);
            if end.is_none_or(|end| end > unique_entries) {
                return Err(Error::PacketRecordPalette {
                    record: i,
                    start: r.anim,
                    end,
                    entries: unique_entries,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
