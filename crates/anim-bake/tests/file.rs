//! The bake file: writer and loader round trips, every truncation length, corrupt headers and tables, and random
//! byte flips (with and without a recomputed checksum): the loader returns an error naming what is wrong, never
//! panics, and a bake it accepts plays back without checks.

mod common;

use anim_bake::{Bake, BakeOptions, FormatError as Error, MAGIC, VERSION, bake};
use proptest::prelude::*;
use std::sync::OnceLock;

/// The tiny model's bake with every part, and its file.
fn tiny() -> &'static (Bake, Vec<u8>) {
    static TINY: OnceLock<(Bake, Vec<u8>)> = OnceLock::new();
    TINY.get_or_init(|| {
        let options = BakeOptions {
            sockets: vec!["tip".into(), "middle".into()],
            ..BakeOptions::default()
        };
        let (baked, report) = bake(&common::tiny_model(), &options, &|_| {}).expect("the tiny model bakes");
        assert!(report.within_budget(), "{report:?}");
        assert!(baked.bat.is_some() && baked.vat.is_some() && baked.sockets.is_some());
        let bytes = baked.to_bytes().expect("the tiny bake writes");
        (baked, bytes)
    })
}

/// `bytes` with the header's length and checksum made to match, so that the loader reaches its deeper checks.
fn resealed(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() >= 28 {
        let len = bytes.len() as u64;
        bytes[16..24].copy_from_slice(&len.to_le_bytes());
        bytes[24..28].fill(0);
        let crc = crc32fast::hash(&bytes);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
    }
    bytes
}

/// Plays every part of a loaded bake at a few times: a bake the loader accepts needs no other check.
fn play(b: &Bake) {
    for c in 0..b.clips.len() {
        let d = b.clips[c].duration;
        for t in [-1.0, 0.0, 0.3 * d, d, 2.5 * d] {
            if let Some(bat) = &b.bat {
                let mut palette = vec![glam::Affine3A::IDENTITY; bat.joint_count as usize];
                bat.sample_palette(c, t, &mut palette).expect("a loaded BAT plays back");
            }
            if let Some(vat) = &b.vat {
                for v in 0..vat.layout.vertex_count {
                    vat.sample(c, t, v).expect("a loaded VAT plays back");
                }
            }
            if let Some(s) = &b.sockets {
                for i in 0..s.socket_count() {
                    s.sample(c, t, i).expect("loaded sockets play back");
                }
            }
        }
    }
}

#[test]
fn round_trip() {
    let (baked, bytes) = tiny();
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(bytes.len() % anim_bake::SECTION_ALIGN, 0);
    let loaded = Bake::from_bytes(bytes).expect("the written bake loads");
    assert_eq!(&loaded, baked);
    play(&loaded);
    // The writer is deterministic.
    assert_eq!(&loaded.to_bytes().unwrap(), bytes);
    let path = std::env::temp_dir().join(format!("anim-bake-round-trip-{}.bake", std::process::id()));
    baked.write_file(&path).unwrap();
    assert_eq!(&Bake::read_file(&path).unwrap(), baked);
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(Bake::read_file(&path), Err(Error::Io { .. })));
}

#[test]
fn the_default_character_round_trips() {
    let model = anim_pose::import_file(common::default_character()).unwrap();
    let options = BakeOptions {
        rate: anim_bake::RateChoice::Fixed(10.0),
        sockets: vec![model.skeletons[0].joint_names[5].clone()],
        ..BakeOptions::default()
    };
    let (baked, _) = bake(&model, &options, &|_| {}).unwrap();
    let bytes = baked.to_bytes().unwrap();
    assert_eq!(Bake::from_bytes(&bytes).unwrap(), baked);
}

#[test]
fn every_truncation_is_an_error() {
    let (_, bytes) = tiny();
    for len in 0..bytes.len() {
        let cut = &bytes[..len];
        let e = Bake::from_bytes(cut).expect_err("a truncated file does not load");
        assert!(
            matches!(e, Error::Truncated { .. }),
            "{len} of {} bytes: {e}",
            bytes.len()
        );
        // With the header patched to the cut length, the table and the sections run past the end instead.
        let e = Bake::from_bytes(&resealed(cut.to_vec())).expect_err("a cut file does not load");
        assert!(
            matches!(e, Error::Truncated { .. } | Error::InvalidField { .. }),
            "{len}: {e}"
        );
    }
    // Trailing bytes are an error too.
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(Bake::from_bytes(&longer), Err(Error::InvalidField { .. })));
}

#[test]
fn corrupt_headers_name_what_is_wrong() {
    let (_, bytes) = tiny();
    let mut b = bytes.clone();
    b[0] = b'X';
    assert!(matches!(Bake::from_bytes(&b), Err(Error::BadMagic { .. })));
    let mut b = bytes.clone();
    b[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    assert!(matches!(Bake::from_bytes(&b), Err(Error::UnsupportedVersion { found, .. }) if found == VERSION + 1));
    let mut b = bytes.clone();
    let last = b.len() - 1;
    b[last] ^= 1;
    assert!(matches!(Bake::from_bytes(&b), Err(Error::Checksum { .. })));
    // An unknown section id, a duplicate, a misaligned offset, a wrong length, a missing required section.
    for (entry_field, value, expected) in [
        (0usize, 99u64, "is not a known section"),
        (0, 1, "appears twice"),
        (8, 50, "aligned"),
        (16, 3, "record count"),
    ] {
        let mut b = bytes.clone();
        let at = 48 + 24 + entry_field; // the second section's entry
        if entry_field == 0 {
            b[at..at + 4].copy_from_slice(&(value as u32).to_le_bytes());
        } else {
            b[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        let e = Bake::from_bytes(&resealed(b)).expect_err("a corrupt table does not load");
        assert!(e.to_string().contains(expected), "{e}");
    }
}

#[test]
fn corrupt_records_name_what_is_wrong() {
    let (baked, _) = tiny();
    // Records the writer refuses (validation runs on both sides).
    let mut b = baked.clone();
    b.bat.as_mut().unwrap().clips[1].first_frame += 1;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = baked.clone();
    b.vat.as_mut().unwrap().planes[0].pop();
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = baked.clone();
    b.bounds.segments[3].min[0] = f32::NAN;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = baked.clone();
    b.sockets.as_mut().unwrap().transforms[2].rows[1][3] = f32::INFINITY;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = baked.clone();
    b.vat.as_mut().unwrap().layout.width += 1;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_byte_flips_are_errors(flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..6)) {
        let (_, bytes) = tiny();
        let mut b = bytes.clone();
        for (i, x) in &flips {
            let at = i.index(b.len());
            b[at] ^= x;
        }
        prop_assert!(Bake::from_bytes(&b).is_err());
    }

    #[test]
    fn resealed_byte_flips_never_panic(
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..6),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let (baked, bytes) = tiny();
        let mut b = bytes.clone();
        for (i, x) in &flips {
            let at = i.index(b.len());
            b[at] ^= x;
        }
        if let Some(cut) = cut {
            b.truncate(cut.index(b.len()));
        }
        match Bake::from_bytes(&resealed(b)) {
            Ok(loaded) => {
                // Flips inside a blob (a texel, a code) give a different but valid bake; it plays back.
                play(&loaded);
                prop_assert_eq!(loaded.clips.len(), baked.clips.len());
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}
