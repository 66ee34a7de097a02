//! Tests of [`Packet::from_parts`].
use super::*;
use crate::record::RecordAnim;
use crowd_cull::FrameCamera;
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
