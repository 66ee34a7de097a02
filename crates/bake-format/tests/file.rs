//! The bake file on a bake built by hand, without the baker: two clips (one looping), a `Mat3x4F16` BAT, a
//! two-plane VAT over two meshes, a socket and segment bounds.
//! A round trip compares every field and the decoded values; every truncation length, corrupt headers, tables and
//! records, and random byte flips (with and without a recomputed checksum) are errors naming what is wrong, never
//! panics, and a bake the loader accepts plays back without checks.

use std::sync::OnceLock;

use bake_format::{
    Bake, BakedBounds, BakedClip, BakedMesh, BatData, BatFormat, BoundsRecord, CLIP_LOOPING, ClipRecord, Error, MAGIC,
    SECTION_ALIGN, SocketData, VERSION, VatData, VatFormat, VatLayout, VatQuant, quantize, vat_position_error_bound,
};
use glam::{Affine3A, Quat, Vec3, Vec3A, Vec4};
use proptest::prelude::*;
use skin_pack::{PaletteEntry, PaletteFormat};

/// Time segments per clip.
const SEGMENTS: u32 = 2;

/// Skin joints of the BAT.
const JOINTS: u32 = 2;

/// Vertices of the VAT: mesh "body" has 5, mesh "hat" 3.
const VERTICES: u32 = 8;

/// The BAT's frames per clip.
const BAT_FRAMES: [u32; 2] = [3, 2];

/// The VAT's frames per clip.
const VAT_FRAMES: [u32; 2] = [2, 3];

/// The sockets' frames per clip.
const SOCKET_FRAMES: [u32; 2] = [2, 2];

/// The VAT's texel format: two planes, so that both plane sections are written and read.
const VAT_FORMAT: VatFormat = VatFormat::Compact;

fn clips() -> Vec<BakedClip> {
    vec![
        BakedClip {
            name: "walk".into(),
            duration: 1.0,
            looping: true,
        },
        BakedClip {
            name: "wave".into(),
            duration: 0.5,
            looping: false,
        },
    ]
}

/// One part's clip table for `frames[c]` frames of clip `c`, clip after clip.
fn records(clips: &[BakedClip], frames: &[u32]) -> Vec<ClipRecord> {
    let mut first = 0;
    clips
        .iter()
        .zip(frames)
        .enumerate()
        .map(|(c, (clip, &n))| {
            let r = ClipRecord {
                first_frame: first,
                frame_count: n,
                rate_hz: (n - 1) as f32 / clip.duration,
                duration: clip.duration,
                flags: if clip.looping { CLIP_LOOPING } else { 0 },
                first_segment: c as u32 * SEGMENTS,
                segment_count: SEGMENTS,
                reserved: 0,
            };
            first += n;
            r
        })
        .collect()
}

/// Skin joint `j`'s matrix in clip `c` at time `t`: a scale, a rotation and a translation that change with time.
fn joint(c: usize, t: f32, j: u32) -> Affine3A {
    let j = j as f32;
    Affine3A::from_scale_rotation_translation(
        Vec3::splat(1.0 + 0.1 * j),
        Quat::from_rotation_z(t * (j + 1.0)) * Quat::from_rotation_x(0.3 * c as f32),
        Vec3::new(0.1 * j, t, -0.2 * c as f32),
    )
}

/// Vertex `v`'s position in clip `c` at time `t`.
fn position(c: usize, t: f32, v: u32) -> Vec3 {
    let v = v as f32;
    Vec3::new(0.1 * v, (3.0 * t + v).sin(), c as f32 - 0.5 * t)
}

/// Vertex `v`'s unit normal in clip `c` at time `t`.
fn normal(c: usize, t: f32, v: u32) -> Vec3 {
    Vec3::new((t + v as f32).cos(), 0.5 - c as f32, t.sin()).normalize()
}

/// The box around every position of clip `c` at the frames of `r`.
fn vat_box(c: usize, r: &ClipRecord) -> (Vec3, Vec3) {
    (0..r.frame_count)
        .flat_map(|k| (0..VERTICES).map(move |v| position(c, r.frame_time(k), v)))
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p), hi.max(p))
        })
}

fn bat(clips: &[BakedClip]) -> BatData {
    let format = BatFormat::Mat3x4F16;
    let records = records(clips, &BAT_FRAMES);
    let mut entries = Vec::new();
    for (c, r) in records.iter().enumerate() {
        for k in 0..r.frame_count {
            for j in 0..JOINTS {
                format.encode_into(&joint(c, r.frame_time(k), j), &mut entries);
            }
        }
    }
    BatData {
        format,
        joint_count: JOINTS,
        clips: records,
        entries,
    }
}

fn vat(clips: &[BakedClip]) -> VatData {
    let records = records(clips, &VAT_FRAMES);
    let frames = VAT_FRAMES.iter().sum();
    // Rows of 3 texels and layers of 8 rows: 3 rows per frame, 2 frames per layer, 3 layers.
    let layout = VatLayout::new(VERTICES, frames, 3, 8).expect("a valid layout");
    assert_eq!((layout.rows_per_frame, layout.layers), (3, 3));
    let [s0, s1] = VAT_FORMAT.plane_texel_sizes();
    let texels = layout.texel_count().expect("a small layout");
    let mut planes = [vec![0u8; texels * s0], vec![0u8; texels * s1]];
    let mut quant = Vec::new();
    for (c, r) in records.iter().enumerate() {
        let (lo, hi) = vat_box(c, r);
        let q = VatQuant::new(lo, hi, VAT_FORMAT);
        for k in 0..r.frame_count {
            let t = r.frame_time(k);
            for v in 0..VERTICES {
                let i = layout.texel_index(layout.texel(v, r.first_frame + k));
                let [p0, p1] = &mut planes;
                let texel = &mut [&mut p0[i * s0..(i + 1) * s0], &mut p1[i * s1..(i + 1) * s1]];
                quantize::encode_texel(VAT_FORMAT, position(c, t, v), normal(c, t, v), &q, texel);
            }
        }
        quant.push(q);
    }
    VatData {
        format: VAT_FORMAT,
        layout,
        clips: records,
        quant,
        planes,
    }
}

fn sockets(clips: &[BakedClip]) -> SocketData {
    let records = records(clips, &SOCKET_FRAMES);
    let transforms = records
        .iter()
        .enumerate()
        .flat_map(|(c, r)| {
            (0..r.frame_count).map(move |k| PaletteEntry::encode(&joint(c, r.frame_time(k), 1), Vec3A::ZERO))
        })
        .collect();
    SocketData {
        names: vec!["hand".into()],
        joints: vec![1],
        clips: records,
        transforms,
    }
}

/// A box record from `min` to `max`.
fn bounds(min: f32, max: f32) -> BoundsRecord {
    BoundsRecord {
        min: [min, min, min, 0.0],
        max: [max, max, max, 0.0],
    }
}

/// The hand-made bake with every part, and its file.
fn hand_made() -> &'static (Bake, Vec<u8>) {
    static BAKE: OnceLock<(Bake, Vec<u8>)> = OnceLock::new();
    BAKE.get_or_init(|| {
        let clips = clips();
        let bake = Bake {
            skeleton: "rig".into(),
            budget_mm: 1.0,
            meshes: vec![
                BakedMesh {
                    name: "body".into(),
                    mesh: 0,
                    first_vertex: 0,
                    vertex_count: 5,
                },
                BakedMesh {
                    name: "hat".into(),
                    mesh: 2,
                    first_vertex: 5,
                    vertex_count: 3,
                },
            ],
            bat: Some(bat(&clips)),
            vat: Some(vat(&clips)),
            sockets: Some(sockets(&clips)),
            bounds: BakedBounds {
                clips: vec![bounds(-3.0, 3.0), bounds(-2.0, 2.0)],
                segments: vec![
                    bounds(-3.0, 2.0),
                    bounds(-2.0, 3.0),
                    bounds(-2.0, 1.0),
                    bounds(-1.0, 2.0),
                ],
            },
            clips,
        };
        let bytes = bake.to_bytes().expect("the hand-made bake writes");
        (bake, bytes)
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
        for t in [-1.0, 0.0, 0.3 * d, d, 2.5 * d, f32::NAN] {
            if let Some(bat) = &b.bat {
                let mut palette = vec![Affine3A::IDENTITY; bat.joint_count as usize];
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

/// The largest difference between the rows of two matrices.
fn row_distance(a: &[Vec4; 3], m: &Affine3A) -> f32 {
    let b = bake_format::affine_from_rows(a);
    (b.matrix3.x_axis - m.matrix3.x_axis)
        .abs()
        .max((b.matrix3.y_axis - m.matrix3.y_axis).abs())
        .max((b.matrix3.z_axis - m.matrix3.z_axis).abs())
        .max((b.translation - m.translation).abs())
        .max_element()
}

#[test]
fn round_trip() {
    let (bake, bytes) = hand_made();
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(bytes.len() % SECTION_ALIGN, 0);
    let loaded = Bake::from_bytes(bytes).expect("the written bake loads");
    assert_eq!(&loaded, bake);
    play(&loaded);
    // The writer is deterministic.
    assert_eq!(&loaded.to_bytes().unwrap(), bytes);
    let path = std::env::temp_dir().join(format!("bake-format-round-trip-{}.bake", std::process::id()));
    bake.write_file(&path).unwrap();
    assert_eq!(&Bake::read_file(&path).unwrap(), bake);
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(Bake::read_file(&path), Err(Error::Io { .. })));

    // The tables.
    assert_eq!(loaded.find_clip("wave"), Some(1));
    assert_eq!(loaded.find_clip("run"), None);
    assert_eq!(loaded.first_vertices([2, 0]), Some(vec![5, 0]));
    assert_eq!(loaded.first_vertices([1]), None);
    let vat = loaded.vat.as_ref().unwrap();
    assert_eq!(loaded.data_bytes(), (5 * 2 * 24 + vat.byte_len() + 4 * 48) as u64);

    // The decoded values: BAT entries within f16 rounding of the matrices (every entry is below 2 in magnitude, so
    // it rounds to within 2⁻¹¹ of itself), VAT texels within the quantizers' bounds, sockets exact at a frame.
    let bat = loaded.bat.as_ref().unwrap();
    for (c, r) in bat.clips.iter().enumerate() {
        for k in 0..r.frame_count {
            for j in 0..JOINTS {
                let rows = bat.rows(r.first_frame + k, j).unwrap();
                let d = row_distance(&rows, &joint(c, r.frame_time(k), j));
                assert!(d <= 1e-3, "clip {c} frame {k} joint {j}: {d}");
            }
        }
    }
    for (c, r) in vat.clips.iter().enumerate() {
        let (lo, hi) = vat_box(c, r);
        let bound = vat_position_error_bound(VAT_FORMAT, lo, hi);
        for k in 0..r.frame_count {
            let t = r.frame_time(k);
            for v in 0..VERTICES {
                let (p, n) = vat.vertex(c, v, r.first_frame + k).unwrap();
                assert!(p.distance(position(c, t, v)) <= bound, "clip {c} frame {k} vertex {v}");
                let angle = quantize::angle_between(n, normal(c, t, v));
                assert!(
                    angle <= VAT_FORMAT.normal_error_bound(),
                    "clip {c} frame {k} vertex {v}: {angle}"
                );
            }
        }
    }
    let sockets = loaded.sockets.as_ref().unwrap();
    for (c, r) in sockets.clips.iter().enumerate() {
        let m = sockets.sample(c, 0.0, 0).unwrap();
        assert!(m.abs_diff_eq(joint(c, r.frame_time(0), 1), 1e-6), "clip {c}: {m:?}");
    }

    // A bake with no part: only the required sections.
    let bare = Bake {
        bat: None,
        vat: None,
        sockets: None,
        meshes: Vec::new(),
        ..bake.clone()
    };
    let bare_bytes = bare.to_bytes().unwrap();
    assert!(bare_bytes.len() < bytes.len());
    assert_eq!(Bake::from_bytes(&bare_bytes).unwrap(), bare);
}

#[test]
fn every_truncation_is_an_error() {
    let (_, bytes) = hand_made();
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
    let (_, bytes) = hand_made();
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
    let mut b = bytes.clone();
    b[28] = 1;
    let e = Bake::from_bytes(&resealed(b)).expect_err("a reserved word that is not zero does not load");
    assert!(e.to_string().contains("reserved"), "{e}");
    // An unknown section id, a duplicate, a misaligned offset, a wrong length.
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
    let (bake, _) = hand_made();
    // Records the writer refuses (validation runs on both sides).
    let mut b = bake.clone();
    b.bat.as_mut().unwrap().clips[1].first_frame += 1;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = bake.clone();
    b.bat.as_mut().unwrap().entries.pop();
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = bake.clone();
    b.vat.as_mut().unwrap().planes[1].pop();
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = bake.clone();
    b.vat.as_mut().unwrap().clips[0].segment_count = 1;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = bake.clone();
    b.bounds.segments[3].min[0] = f32::NAN;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = bake.clone();
    b.sockets.as_mut().unwrap().transforms[2].rows[1][3] = f32::INFINITY;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = bake.clone();
    b.vat.as_mut().unwrap().layout.width += 1;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = bake.clone();
    b.meshes[1].first_vertex += 1;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
    let mut b = bake.clone();
    b.clips[1].duration = -1.0;
    assert!(matches!(b.to_bytes(), Err(Error::InvalidField { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_byte_flips_are_errors(flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..6)) {
        let (_, bytes) = hand_made();
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
        let (bake, bytes) = hand_made();
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
                prop_assert_eq!(loaded.clips.len(), bake.clips.len());
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}
