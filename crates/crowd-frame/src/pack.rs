//! Packing a frame's records, draws, dirty ranges and counts into its [`Packet`]: a linear pass over the visible
//! list, since everything a record needs is in the store's slot order or in arrays parallel to the visible list.

use anim_pose::{PosePool, SlotRef};
use crowd_cull::{CullOutput, GroupSlots, Tier};
use rayon::prelude::*;
use skin_pack::{ByteRange, PaletteFormat};

use crate::Result;
use crate::frame::NOT_UNIQUE;
use crate::packet::{Packet, PacketDraw, RecordKind};
use crate::record::{INSTANCE_RECORD_SIZE, InstanceRecord};

/// Records per parallel work item: enough packing per item to amortise rayon's scheduling.
pub(crate) const PACK_CHUNK: usize = 4096;

/// What [`pack_frame`] reads.
pub(crate) struct PackInput<'a> {
    /// The crowd group's per-slot arrays.
    pub slots: &'a GroupSlots<'a>,
    /// This frame's visible lists.
    pub cull: &'a CullOutput,
    /// The pose pool, after its update.
    pub pool: &'a PosePool,
    /// Per record: the pool track and time to map (anything for unique instances).
    pub tracks: &'a [u16],
    /// See `tracks`.
    pub times: &'a [f32],
    /// Per record: the unique index, or [`NOT_UNIQUE`].
    pub unique_of: &'a [u32],
    /// Entries per palette.
    pub skin_joint_count: usize,
}

/// The record of visible instance `first + k`, whose slot ref is `refs[k]`.
#[inline]
fn record_of(input: &PackInput<'_>, refs: &[SlotRef], first: usize, k: usize) -> InstanceRecord {
    let i = first + k;
    let slot = input.cull.indices()[i] as usize;
    let s = input.slots;
    let (fraction, anim) = match input.unique_of[i] {
        NOT_UNIQUE => {
            let r = refs[k];
            (r.fraction, u32::from(r.slot_a) | (u32::from(r.slot_b) << 16))
        }
        k => (0.0, k * input.skin_joint_count as u32),
    };
    InstanceRecord::pack(
        s.position[slot],
        s.rotation[slot],
        s.scale[slot],
        fraction,
        anim,
        s.custom[slot],
    )
}

/// Writes into `out` (cleared first) the byte ranges of the pool's live slots in a palette buffer of `entry`
/// bytes a slot, adjacent ones merged: what a frame's pooled palettes have dirty.
pub(crate) fn live_slot_ranges(pool: &PosePool, entry: usize, out: &mut Vec<ByteRange>) {
    out.clear();
    for r in pool.live_slots() {
        let range = ByteRange {
            start: r.first_slot as usize * entry,
            end: (r.first_slot + r.slot_count) as usize * entry,
        };
        match out.last_mut() {
            Some(last) if last.end == range.start => last.end = range.end,
            _ => out.push(range),
        }
    }
}

/// Maps the pooled instances to slot refs (into `refs`, one per record) and writes the records, chunk by chunk in
/// parallel, then the draws, the dirty ranges and the per-tier counts into `packet`.
/// Allocates nothing when the packet's record buffer holds the visible count.
///
/// # Errors
///
/// The pool's mapping errors, which tracks and times assigned by the frame do not cause.
pub(crate) fn pack_frame<F: PaletteFormat>(
    input: &PackInput<'_>,
    refs: &mut [SlotRef],
    packet: &mut Packet<F>,
) -> Result<()> {
    let n = input.cull.indices().len();
    packet.records.resize(n, InstanceRecord::default());
    packet
        .records
        .par_chunks_mut(PACK_CHUNK)
        .zip(refs.par_chunks_mut(PACK_CHUNK))
        .enumerate()
        .try_for_each(|(c, (out, refs))| {
            let first = c * PACK_CHUNK;
            let range = first..first + out.len();
            input
                .pool
                .map_instances(&input.tracks[range.clone()], &input.times[range], refs)?;
            for (k, r) in out.iter_mut().enumerate() {
                *r = record_of(input, refs, first, k);
            }
            Ok::<(), anim_pose::Error>(())
        })?;

    packet.draws.clear();
    let mut per_tier = [0u32; 4];
    let mut overflow = 0;
    for d in input.cull.draws() {
        let draw = |kind, first_instance, instance_count| PacketDraw {
            lod: d.lod,
            tier: d.tier,
            kind,
            first_instance,
            instance_count,
        };
        per_tier[d.tier as usize] += d.instance_count;
        if d.tier == Tier::Unique {
            // The frame picked this list's unique instances from its front (`assign_tracks`); the rest overflow.
            let list = &input.unique_of[d.first_instance as usize..(d.first_instance + d.instance_count) as usize];
            let take = list.iter().take_while(|&&u| u != NOT_UNIQUE).count() as u32;
            overflow += d.instance_count - take;
            packet.draws.push(draw(RecordKind::Unique, d.first_instance, take));
            packet.draws.push(draw(
                RecordKind::Pooled,
                d.first_instance + take,
                d.instance_count - take,
            ));
        } else {
            packet
                .draws
                .push(draw(RecordKind::Pooled, d.first_instance, d.instance_count));
        }
    }

    let entry = size_of::<F>() * input.skin_joint_count;
    let dirty = &mut packet.dirty;
    live_slot_ranges(input.pool, entry, &mut dirty.pool_palettes);
    dirty.unique_palettes.clear();
    if !packet.unique_palettes.is_empty() {
        dirty.unique_palettes.push(ByteRange {
            start: 0,
            end: packet.unique_palettes.len() * size_of::<F>(),
        });
    }
    dirty.records.clear();
    if n > 0 {
        dirty.records.push(ByteRange {
            start: 0,
            end: n * INSTANCE_RECORD_SIZE,
        });
    }
    let stats = &mut packet.stats;
    stats.visible = n as u32;
    stats.per_tier = per_tier;
    stats.unique_overflow = overflow;
    stats.dirty_bytes = [&dirty.pool_palettes, &dirty.unique_palettes, &dirty.records]
        .iter()
        .flat_map(|v| v.iter())
        .map(|r| r.len() as u64)
        .sum();
    Ok(())
}
