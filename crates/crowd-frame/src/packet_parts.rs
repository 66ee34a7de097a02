//! [`Packet::from_parts`]: a packet built from plain parts, for engines that animate without [`CrowdFrame`]
//! (a tool that renders one exact pose, a test), checked element by element once, where it is built.
//!
//! [`CrowdFrame`]: crate::CrowdFrame

use skin_pack::{ByteRange, PaletteFormat};

use crate::packet::{DirtyRanges, FrameCamera, FrameStats, Packet, PacketDraw, RecordKind};
use crate::record::InstanceRecord;
use crate::{Error, Result};

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
            frame_time: parts.time,
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
mod tests {
    use super::*;
    use crate::record::RecordAnim;
    use crowd_cull::Tier;
    use glam::{Quat, Vec3, Vec4};
    use skin_pack::PaletteEntry;

    fn record(anim: RecordAnim) -> InstanceRecord {
        InstanceRecord::new(Vec3::ZERO, Quat::IDENTITY, 1.0, anim, Vec4::ONE).expect("valid record")
    }

    fn draw(kind: RecordKind, first_instance: u32, instance_count: u32) -> PacketDraw {
        PacketDraw {
            lod: 0,
            tier: Tier::Unique,
            kind,
            first_instance,
            instance_count,
        }
    }

    fn build(records: &[InstanceRecord], draws: &[PacketDraw]) -> Result<Packet> {
        let palettes = vec![PaletteEntry::IDENTITY; 2 * 3];
        Packet::from_parts(&PacketParts {
            time: 0.0,
            camera: FrameCamera::default(),
            skin_joint_count: 3,
            pool_palettes: &palettes,
            unique_palettes: &palettes[..3],
            records,
            draws,
        })
    }

    #[test]
    fn a_valid_packet_keeps_its_parts_and_is_all_dirty() {
        let records = [
            record(RecordAnim::Unique { palette: 0 }),
            record(RecordAnim::Pooled {
                slots: [0, 1],
                fraction: 0.5,
            }),
        ];
        let draws = [draw(RecordKind::Unique, 0, 1), draw(RecordKind::Pooled, 1, 1)];
        let p = build(&records, &draws).expect("valid");
        assert_eq!(p.records(), &records);
        assert_eq!(p.draws(), &draws);
        assert_eq!(p.dirty().records, vec![ByteRange { start: 0, end: 64 }]);
        assert_eq!(p.stats().unique, 1);
        assert_eq!(p.stats().dirty_bytes, 64 + 6 * 48 + 3 * 48);
    }

    #[test]
    fn each_bad_part_is_named() {
        let unique = record(RecordAnim::Unique { palette: 1 });
        let err = build(&[unique], &[draw(RecordKind::Unique, 0, 1)]).expect_err("palette past the buffer");
        assert!(
            matches!(
                err,
                Error::PacketRecordPalette {
                    record: 0,
                    start: 1,
                    end: Some(4),
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string().contains("record 0") && err.to_string().contains("1..4"),
            "{err}"
        );
        let pooled = record(RecordAnim::Pooled {
            slots: [0, 2],
            fraction: 0.0,
        });
        let err = build(&[pooled], &[draw(RecordKind::Pooled, 0, 1)]).expect_err("slot past the buffer");
        assert!(
            matches!(err, Error::PacketRecordSlot { record: 0, slot: 2, .. }),
            "{err}"
        );
        let mut nan = record(RecordAnim::Unique { palette: 0 });
        nan.position[1] = f32::NAN;
        let err = build(&[nan], &[draw(RecordKind::Unique, 0, 1)]).expect_err("NaN position");
        assert!(matches!(err, Error::PacketRecordPosition { record: 0, .. }), "{err}");
        let mut zero_scale = record(RecordAnim::Unique { palette: 0 });
        zero_scale.scale_fraction = 0;
        let err = build(&[zero_scale], &[draw(RecordKind::Unique, 0, 1)]).expect_err("zero scale");
        assert!(matches!(err, Error::PacketRecordScale { record: 0, bits: 0 }), "{err}");
        let ok = record(RecordAnim::Unique { palette: 0 });
        let err = build(&[ok], &[draw(RecordKind::Unique, 0, 2)]).expect_err("draw past the records");
        assert!(
            matches!(
                err,
                Error::PacketDraw {
                    draw: 0,
                    records: 1,
                    ..
                }
            ),
            "{err}"
        );
        let err = build(&[ok, ok], &[draw(RecordKind::Unique, 0, 1)]).expect_err("undrawn record");
        assert!(matches!(err, Error::PacketRecordDraws { record: 1, draws: 0 }), "{err}");
        let err = build(&[ok], &[draw(RecordKind::Unique, 0, 1), draw(RecordKind::Unique, 0, 1)])
            .expect_err("record drawn twice");
        assert!(matches!(err, Error::PacketRecordDraws { record: 0, draws: 2 }), "{err}");
        assert!(err.to_string().contains("two draws"), "{err}");
        assert!(build(&[], &[]).is_ok(), "an empty packet is valid");
    }

    /// Sizes from the caller near `usize::MAX` are refused, never summed until they wrap or panic.
    #[test]
    fn huge_joint_counts_are_refused_without_overflow() {
        let unique = record(RecordAnim::Unique { palette: 0 });
        for s in [usize::MAX, usize::MAX - 1, u32::MAX as usize + 1] {
            let err = Packet::<PaletteEntry>::from_parts(&PacketParts {
                time: 0.0,
                camera: FrameCamera::default(),
                skin_joint_count: s,
                pool_palettes: &[],
                unique_palettes: &[],
                records: &[unique],
                draws: &[draw(RecordKind::Unique, 0, 1)],
            })
            .expect_err("a joint count past u32 with no palettes");
            assert!(matches!(err, Error::PacketJoints { count } if count == s), "{s}: {err}");
        }
        // The largest count a packet holds, with no unique palette behind the record.
        let err = Packet::<PaletteEntry>::from_parts(&PacketParts {
            time: 0.0,
            camera: FrameCamera::default(),
            skin_joint_count: u32::MAX as usize,
            pool_palettes: &[],
            unique_palettes: &[],
            records: &[unique],
            draws: &[draw(RecordKind::Unique, 0, 1)],
        })
        .expect_err("a palette past the unique palettes");
        assert!(matches!(err, Error::PacketRecordPalette { record: 0, .. }), "{err}");
        // A draw whose count would wrap past the records.
        let err = build(&[unique], &[draw(RecordKind::Unique, 1, u32::MAX)]).expect_err("a draw past the records");
        assert!(matches!(err, Error::PacketDraw { draw: 0, .. }), "{err}");
    }
}
