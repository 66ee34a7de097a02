//! The bake file: a header, a section table and little-endian sections, with a CRC-32 over everything.
//!
//! # Layout (version 1)
//!
//! All integers and floats are little-endian; every section starts at a multiple of [`SECTION_ALIGN`] (16) bytes
//! from the start of the file, and the bytes between sections are zero.
//!
//! | offset | size | field |
//! | --- | --- | --- |
//! | 0 | 8 | magic [`MAGIC`], `"CRWDBAKE"` |
//! | 8 | 4 | version, [`VERSION`] |
//! | 12 | 4 | section count |
//! | 16 | 8 | file length in bytes |
//! | 24 | 4 | CRC-32 (IEEE, as `crc32fast`) of the whole file with these four bytes taken as zero |
//! | 28 | 4 | zero |
//! | 32 | 4 | budget in millimetres, f32 |
//! | 36 | 4 | clip count |
//! | 40 | 8 | the skeleton's name: a string reference (below) |
//! | 48 | 24 × sections | the section table: `id u32, count u32, offset u64, length u64` per section |
//!
//! A string reference is `offset u32, length u32` into the `STRINGS` section, whose bytes are UTF-8.
//! `count` is the section's number of records, and its length is `count` × the record size.
//!
//! | id | section | record (bytes) |
//! | --- | --- | --- |
//! | 1 | `STRINGS` | one byte |
//! | 2 | `CLIPS` | name (string ref), duration f32, flags u32 (bit 0: loops) (16) |
//! | 3 | `MESHES` | name (string ref), model mesh index, first vertex, vertex count, zero (24) |
//! | 4 | `CLIP_BOUNDS` | `BoundsRecord` (32) |
//! | 5 | `SEGMENT_BOUNDS` | `BoundsRecord` (32) |
//! | 6 | `BAT_INFO` | format code, joint count, frame count, zero (16) |
//! | 7 | `BAT_CLIPS` | `ClipRecord` (32) |
//! | 8 | `BAT_ENTRIES` | one `u32` word of the entries (4) |
//! | 9 | `VAT_INFO` | format code, vertex count, frame count, width, rows per frame, frames per layer, height, layers (32) |
//! | 10 | `VAT_CLIPS` | `ClipRecord` (32) |
//! | 11 | `VAT_QUANT` | `VatQuant` (32) |
//! | 12 | `VAT_PLANE0` | one byte of plane 0's texels |
//! | 13 | `VAT_PLANE1` | one byte of plane 1's texels (count 0 for a one-plane format) |
//! | 14 | `SOCKET_INFO` | socket count, frame count, zero, zero (16) |
//! | 15 | `SOCKET_NAMES` | name (string ref), skeleton joint u32 (12) |
//! | 16 | `SOCKET_CLIPS` | `ClipRecord` (32) |
//! | 17 | `SOCKET_TRANSFORMS` | `PaletteEntry` (48) |
//!
//! Sections 1 to 5 are required; a part (BAT 6–8, VAT 9–13, sockets 14–17) is present whole or not at all. Each id
//! appears at most once, and sections do not overlap the header, the table or each other.
//!
//! # Loading
//!
//! [`Bake::from_bytes`](crate::Bake::from_bytes) checks the header, the length, the checksum, the table and every section's bounds before it
//! reads a record, then every rule of [`Bake::validate`](crate::Bake::validate): playback of a loaded bake needs no checks. A file that is
//! truncated or corrupt gets an [`Error`] naming what is wrong ([`Error::Truncated`], [`Error::BadMagic`],
//! [`Error::UnsupportedVersion`], [`Error::Checksum`], [`Error::InvalidField`]), never a panic, and nothing is read
//! past the end of the bytes.

use std::path::Path;

use skin_pack::PaletteEntry;

use crate::{
    BakedBounds, BakedClip, BakedMesh, BatData, BatFormat, BoundsRecord, Error, Result, SocketData, VatData, VatFormat,
    VatLayout, VatQuant,
};

/// The first eight bytes of a bake file.
pub const MAGIC: [u8; 8] = *b"CRWDBAKE";

/// The file format version this crate writes and reads.
pub const VERSION: u32 = 1;

/// Every section's offset is a multiple of this.
pub const SECTION_ALIGN: usize = 16;

/// The size of the fixed header, before the section table.
const HEADER: usize = 48;

/// The size of one section table entry.
const ENTRY: usize = 24;

/// Section ids.
mod id {
    pub const STRINGS: u32 = 1;
    pub const CLIPS: u32 = 2;
    pub const MESHES: u32 = 3;
    pub const CLIP_BOUNDS: u32 = 4;
    pub const SEGMENT_BOUNDS: u32 = 5;
    pub const BAT_INFO: u32 = 6;
    pub const BAT_CLIPS: u32 = 7;
    pub const BAT_ENTRIES: u32 = 8;
    pub const VAT_INFO: u32 = 9;
    pub const VAT_CLIPS: u32 = 10;
    pub const VAT_QUANT: u32 = 11;
    pub const VAT_PLANE0: u32 = 12;
    pub const VAT_PLANE1: u32 = 13;
    pub const SOCKET_INFO: u32 = 14;
    pub const SOCKET_NAMES: u32 = 15;
    pub const SOCKET_CLIPS: u32 = 16;
    pub const SOCKET_TRANSFORMS: u32 = 17;
    /// The last id.
    pub const LAST: u32 = 17;
}

/// The record size of each section id (index = id).
const RECORD_SIZE: [usize; id::LAST as usize + 1] = [0, 1, 16, 24, 32, 32, 16, 32, 4, 32, 32, 32, 1, 1, 16, 12, 32, 48];

/// The name of each section id, for errors (index = id).
const SECTION_NAME: [&str; id::LAST as usize + 1] = [
    "",
    "STRINGS section",
    "CLIPS section",
    "MESHES section",
    "CLIP_BOUNDS section",
    "SEGMENT_BOUNDS section",
    "BAT_INFO section",
    "BAT_CLIPS section",
    "BAT_ENTRIES section",
    "VAT_INFO section",
    "VAT_CLIPS section",
    "VAT_QUANT section",
    "VAT_PLANE0 section",
    "VAT_PLANE1 section",
    "SOCKET_INFO section",
    "SOCKET_NAMES section",
    "SOCKET_CLIPS section",
    "SOCKET_TRANSFORMS section",
];

/// A `u32` from a count, or [`Error::TooLarge`].
fn u32_of(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::TooLarge { what })
}

/// The section writer: strings and sections, laid out at write time.
#[derive(Default)]
struct Writer {
    strings: Vec<u8>,
    sections: Vec<(u32, u32, Vec<u8>)>,
}

impl Writer {
    /// A string reference to `s`, appended to the strings.
    fn string(&mut self, s: &str) -> Result<[u32; 2]> {
        let offset = u32_of(self.strings.len(), "bake strings")?;
        self.strings.extend_from_slice(s.as_bytes());
        Ok([offset, u32_of(s.len(), "a bake string")?])
    }

    /// Adds a section of `count` records.
    fn section(&mut self, id: u32, count: usize, bytes: Vec<u8>) -> Result<()> {
        debug_assert_eq!(bytes.len(), count * RECORD_SIZE[id as usize]);
        self.sections
            .push((id, u32_of(count, "records of a bake section")?, bytes));
        Ok(())
    }
}

/// Little-endian words to bytes.
fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// Pod records to little-endian bytes (every record here is 4-byte words on a little-endian layout, written word by
/// word so that the file is the same on any host).
fn records<T: bytemuck::Pod>(values: &[T]) -> Vec<u8> {
    let w: &[u32] = bytemuck::cast_slice(values);
    words(w)
}

impl crate::Bake {
    /// The bake as a file (see the module docs for the layout).
    ///
    /// # Errors
    ///
    /// [`Bake::validate`](crate::Bake::validate)'s errors; [`Error::TooLarge`] when a count does not fit the file's 32-bit fields.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.validate()?;
        let mut w = Writer::default();
        let skeleton = w.string(&self.skeleton)?;
        let mut clips = Vec::with_capacity(self.clips.len() * 4);
        for c in &self.clips {
            let [o, l] = w.string(&c.name)?;
            clips.extend([o, l, c.duration.to_bits(), u32::from(c.looping)]);
        }
        let mut meshes = Vec::with_capacity(self.meshes.len() * 6);
        for m in &self.meshes {
            let [o, l] = w.string(&m.name)?;
            meshes.extend([o, l, m.mesh, m.first_vertex, m.vertex_count, 0]);
        }
        w.section(id::CLIPS, self.clips.len(), words(&clips))?;
        w.section(id::MESHES, self.meshes.len(), words(&meshes))?;
        w.section(id::CLIP_BOUNDS, self.bounds.clips.len(), records(&self.bounds.clips))?;
        w.section(
            id::SEGMENT_BOUNDS,
            self.bounds.segments.len(),
            records(&self.bounds.segments),
        )?;
        if let Some(bat) = &self.bat {
            let frames = u32_of(bat.frame_count(), "BAT frames")?;
            w.section(id::BAT_INFO, 1, words(&[bat.format as u32, bat.joint_count, frames, 0]))?;
            w.section(id::BAT_CLIPS, bat.clips.len(), records(&bat.clips))?;
            w.section(id::BAT_ENTRIES, bat.entries.len(), words(&bat.entries))?;
        }
        if let Some(vat) = &self.vat {
            let l = vat.layout;
            let info = [
                vat.format as u32,
                l.vertex_count,
                l.frame_count,
                l.width,
                l.rows_per_frame,
                l.frames_per_layer,
                l.height,
                l.layers,
            ];
            w.section(id::VAT_INFO, 1, words(&info))?;
            w.section(id::VAT_CLIPS, vat.clips.len(), records(&vat.clips))?;
            w.section(id::VAT_QUANT, vat.quant.len(), records(&vat.quant))?;
            w.section(id::VAT_PLANE0, vat.planes[0].len(), vat.planes[0].clone())?;
            w.section(id::VAT_PLANE1, vat.planes[1].len(), vat.planes[1].clone())?;
        }
        if let Some(s) = &self.sockets {
            let frames = u32_of(s.frame_count(), "socket frames")?;
            let count = u32_of(s.socket_count(), "sockets")?;
            w.section(id::SOCKET_INFO, 1, words(&[count, frames, 0, 0]))?;
            let mut names = Vec::with_capacity(s.names.len() * 3);
            for (name, &joint) in s.names.iter().zip(&s.joints) {
                let [o, l] = w.string(name)?;
                names.extend([o, l, u32::from(joint)]);
            }
            w.section(id::SOCKET_NAMES, s.names.len(), words(&names))?;
            w.section(id::SOCKET_CLIPS, s.clips.len(), records(&s.clips))?;
            w.section(id::SOCKET_TRANSFORMS, s.transforms.len(), records(&s.transforms))?;
        }
        let strings = std::mem::take(&mut w.strings);
        w.sections
            .insert(0, (id::STRINGS, u32_of(strings.len(), "bake strings")?, strings));

        let table_end = HEADER + ENTRY * w.sections.len();
        let mut offset = table_end.next_multiple_of(SECTION_ALIGN);
        let mut table = Vec::with_capacity(ENTRY * w.sections.len());
        for (id, count, bytes) in &w.sections {
            table.extend(id.to_le_bytes());
            table.extend(count.to_le_bytes());
            table.extend((offset as u64).to_le_bytes());
            table.extend((bytes.len() as u64).to_le_bytes());
            offset = offset
                .checked_add(bytes.len())
                .ok_or(Error::TooLarge { what: "bake file" })?
                .next_multiple_of(SECTION_ALIGN);
        }
        let len = offset;
        let mut out = Vec::with_capacity(len);
        out.extend(MAGIC);
        out.extend(VERSION.to_le_bytes());
        out.extend(u32_of(w.sections.len(), "bake sections")?.to_le_bytes());
        out.extend((len as u64).to_le_bytes());
        out.extend([0u8; 8]);
        out.extend(self.budget_mm.to_bits().to_le_bytes());
        out.extend(u32_of(self.clips.len(), "clips")?.to_le_bytes());
        out.extend(skeleton[0].to_le_bytes());
        out.extend(skeleton[1].to_le_bytes());
        out.extend(table);
        for (_, _, bytes) in &w.sections {
            out.resize(out.len().next_multiple_of(SECTION_ALIGN), 0);
            out.extend(bytes);
        }
        out.resize(len, 0);
        let crc = crc32fast::hash(&out);
        out[24..28].copy_from_slice(&crc.to_le_bytes());
        Ok(out)
    }

    /// Writes the bake to `path` ([`Bake::to_bytes`](crate::Bake::to_bytes)).
    ///
    /// # Errors
    ///
    /// As [`Bake::to_bytes`](crate::Bake::to_bytes); [`Error::Io`] when the file cannot be written.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.to_bytes()?).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// Reads and validates a bake file ([`Bake::from_bytes`](crate::Bake::from_bytes)).
    ///
    /// # Errors
    ///
    /// As [`Bake::from_bytes`](crate::Bake::from_bytes); [`Error::Io`] when the file cannot be read.
    pub fn read_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_bytes(&bytes)
    }

    /// Reads a bake from the bytes of a file, checking everything (see the module docs).
    ///
    /// # Errors
    ///
    /// [`Error::Truncated`], [`Error::BadMagic`], [`Error::UnsupportedVersion`], [`Error::Checksum`] or
    /// [`Error::InvalidField`], naming what is wrong.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let file = File::open(bytes)?;
        file.read()
    }
}

/// A checked view of a file's header and section table.
struct File<'a> {
    bytes: &'a [u8],
    /// Per section id, `(count, start, end)` when present.
    sections: [Option<(u32, usize, usize)>; id::LAST as usize + 1],
}

/// The `u32` at `at`, which the caller has checked is inside `bytes`.
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// The `u64` at `at`, which the caller has checked is inside `bytes`.
fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from(u32_at(bytes, at)) | (u64::from(u32_at(bytes, at + 4)) << 32)
}

/// Requires `end ≤ len` for a part of the file.
fn need(what: &'static str, start: u64, end: u64, len: usize) -> Result<()> {
    if end > len as u64 {
        return Err(Error::Truncated {
            what,
            start,
            end,
            len: len as u64,
        });
    }
    Ok(())
}

/// An [`Error::InvalidField`].
fn invalid(what: impl Into<String>, value: u64, rule: &'static str) -> Error {
    Error::InvalidField {
        what: what.into(),
        value,
        rule,
    }
}

impl<'a> File<'a> {
    /// Checks the header, the checksum and the section table.
    fn open(bytes: &'a [u8]) -> Result<Self> {
        need("magic and version", 0, 12, bytes.len())?;
        let mut magic = [0u8; 8];
        magic.copy_from_slice(&bytes[..8]);
        if magic != MAGIC {
            return Err(Error::BadMagic { found: magic });
        }
        let version = u32_at(bytes, 8);
        if version != VERSION {
            return Err(Error::UnsupportedVersion {
                found: version,
                supported: VERSION,
            });
        }
        need("header", 0, HEADER as u64, bytes.len())?;
        let file_len = u64_at(bytes, 16);
        need("the file length the header states", 0, file_len, bytes.len())?;
        if file_len != bytes.len() as u64 {
            return Err(invalid(
                "file length",
                file_len,
                "must equal the number of bytes (trailing bytes follow the file)",
            ));
        }
        let stored = u32_at(bytes, 24);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&bytes[..24]);
        hasher.update(&[0; 4]);
        hasher.update(&bytes[28..]);
        let computed = hasher.finalize();
        if stored != computed {
            return Err(Error::Checksum { stored, computed });
        }
        if u32_at(bytes, 28) != 0 {
            return Err(invalid(
                "header reserved word",
                u64::from(u32_at(bytes, 28)),
                "must be zero",
            ));
        }
        let count = u64::from(u32_at(bytes, 12));
        let table_end = HEADER as u64 + count * ENTRY as u64;
        need("section table", HEADER as u64, table_end, bytes.len())?;
        let mut sections = [None; id::LAST as usize + 1];
        let mut spans: Vec<(u64, u64)> = Vec::with_capacity(count as usize);
        for s in 0..count as usize {
            let at = HEADER + s * ENTRY;
            let (sid, n, offset, len) = (
                u32_at(bytes, at),
                u32_at(bytes, at + 4),
                u64_at(bytes, at + 8),
                u64_at(bytes, at + 16),
            );
            if sid == 0 || sid > id::LAST {
                return Err(invalid(
                    format!("section {s} id"),
                    u64::from(sid),
                    "is not a known section",
                ));
            }
            let name = SECTION_NAME[sid as usize];
            if sections[sid as usize].is_some() {
                return Err(invalid(name, u64::from(sid), "appears twice"));
            }
            if offset % SECTION_ALIGN as u64 != 0 || offset < table_end {
                return Err(invalid(
                    format!("{name} offset"),
                    offset,
                    "must be 16-byte aligned and after the section table",
                ));
            }
            let expected = u64::from(n) * RECORD_SIZE[sid as usize] as u64;
            if len != expected {
                return Err(invalid(
                    format!("{name} length"),
                    len,
                    "must be its record count times the record size",
                ));
            }
            let end = offset.saturating_add(len);
            need(name, offset, end, bytes.len())?;
            if spans.iter().any(|&(a, b)| offset < b && a < end) {
                return Err(invalid(
                    format!("{name} offset"),
                    offset,
                    "must not overlap another section",
                ));
            }
            spans.push((offset, end));
            sections[sid as usize] = Some((n, offset as usize, end as usize));
        }
        for required in [id::STRINGS, id::CLIPS, id::MESHES, id::CLIP_BOUNDS, id::SEGMENT_BOUNDS] {
            if sections[required as usize].is_none() {
                return Err(invalid(SECTION_NAME[required as usize], 0, "is missing"));
            }
        }
        for group in [
            &[id::BAT_INFO, id::BAT_CLIPS, id::BAT_ENTRIES][..],
            &[
                id::VAT_INFO,
                id::VAT_CLIPS,
                id::VAT_QUANT,
                id::VAT_PLANE0,
                id::VAT_PLANE1,
            ],
            &[
                id::SOCKET_INFO,
                id::SOCKET_NAMES,
                id::SOCKET_CLIPS,
                id::SOCKET_TRANSFORMS,
            ],
        ] {
            let present = group.iter().filter(|&&s| sections[s as usize].is_some()).count();
            if present != 0 && present != group.len() {
                let missing = group
                    .iter()
                    .find(|&&s| sections[s as usize].is_none())
                    .copied()
                    .unwrap_or(0);
                return Err(invalid(SECTION_NAME[missing as usize], 0, "is missing from its part"));
            }
        }
        Ok(Self { bytes, sections })
    }

    /// The records of a present section: its count and bytes.
    fn section(&self, sid: u32) -> Option<(u32, &'a [u8])> {
        self.sections[sid as usize].map(|(n, start, end)| (n, &self.bytes[start..end]))
    }

    /// The words of a required section.
    fn words(&self, sid: u32) -> (u32, Vec<u32>) {
        let (n, bytes) = self.section(sid).unwrap_or((0, &[]));
        (n, bytes.chunks_exact(4).map(|w| u32_at(w, 0)).collect())
    }

    /// A string of the strings section.
    fn string(&self, what: impl Into<String>, offset: u32, len: u32) -> Result<String> {
        let (_, strings) = self.section(id::STRINGS).unwrap_or((0, &[]));
        let what = what.into();
        let end = u64::from(offset) + u64::from(len);
        if end > strings.len() as u64 {
            return Err(invalid(
                format!("{what} string"),
                end,
                "must be inside the strings section",
            ));
        }
        std::str::from_utf8(&strings[offset as usize..end as usize])
            .map(str::to_owned)
            .map_err(|_| invalid(format!("{what} string"), u64::from(offset), "must be UTF-8"))
    }

    /// Pod records of a section, read word by word.
    fn records<T: bytemuck::Pod>(&self, sid: u32) -> Vec<T> {
        let (_, w) = self.words(sid);
        let size = size_of::<T>() / 4;
        w.chunks_exact(size)
            .map(|r| bytemuck::pod_read_unaligned(bytemuck::cast_slice(r)))
            .collect()
    }

    /// The whole bake, validated.
    fn read(&self) -> Result<crate::Bake> {
        let b = self.bytes;
        let budget_mm = f32::from_bits(u32_at(b, 32));
        let clip_count = u32_at(b, 36);
        let skeleton = self.string("skeleton name", u32_at(b, 40), u32_at(b, 44))?;
        let (n, clip_words) = self.words(id::CLIPS);
        if n != clip_count {
            return Err(invalid(
                "CLIPS section count",
                u64::from(n),
                "must equal the header's clip count",
            ));
        }
        let clips = clip_words
            .chunks_exact(4)
            .enumerate()
            .map(|(c, r)| {
                if r[3] > 1 {
                    return Err(invalid(format!("clip {c} flags"), u64::from(r[3]), "must be 0 or 1"));
                }
                Ok(BakedClip {
                    name: self.string(format!("clip {c} name"), r[0], r[1])?,
                    duration: f32::from_bits(r[2]),
                    looping: r[3] == 1,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let (_, mesh_words) = self.words(id::MESHES);
        let meshes = mesh_words
            .chunks_exact(6)
            .enumerate()
            .map(|(m, r)| {
                if r[5] != 0 {
                    return Err(invalid(
                        format!("mesh {m} reserved word"),
                        u64::from(r[5]),
                        "must be zero",
                    ));
                }
                Ok(BakedMesh {
                    name: self.string(format!("mesh {m} name"), r[0], r[1])?,
                    mesh: r[2],
                    first_vertex: r[3],
                    vertex_count: r[4],
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let bounds = BakedBounds {
            clips: self.records::<BoundsRecord>(id::CLIP_BOUNDS),
            segments: self.records::<BoundsRecord>(id::SEGMENT_BOUNDS),
        };
        let bat = self.section(id::BAT_INFO).map(|_| self.read_bat()).transpose()?;
        let vat = self.section(id::VAT_INFO).map(|_| self.read_vat()).transpose()?;
        let sockets = self.section(id::SOCKET_INFO).map(|_| self.read_sockets()).transpose()?;
        let bake = crate::Bake {
            skeleton,
            budget_mm,
            clips,
            meshes,
            bat,
            vat,
            sockets,
            bounds,
        };
        bake.validate()?;
        Ok(bake)
    }

    /// The one record of an info section.
    fn info(&self, sid: u32) -> Result<Vec<u32>> {
        let (n, w) = self.words(sid);
        if n != 1 {
            return Err(invalid(
                SECTION_NAME[sid as usize],
                u64::from(n),
                "must hold exactly one record",
            ));
        }
        Ok(w)
    }

    fn read_bat(&self) -> Result<BatData> {
        let info = self.info(id::BAT_INFO)?;
        let format = BatFormat::from_code(info[0])
            .ok_or_else(|| invalid("BAT format code", u64::from(info[0]), "must be 0, 1 or 2"))?;
        if info[3] != 0 {
            return Err(invalid("BAT_INFO reserved word", u64::from(info[3]), "must be zero"));
        }
        let (n, entries) = self.words(id::BAT_ENTRIES);
        let expected = u64::from(info[1]) * u64::from(info[2]) * format.entry_words() as u64;
        if u64::from(n) != expected {
            return Err(invalid(
                "BAT_ENTRIES count",
                u64::from(n),
                "must be frames times joints times the entry's words",
            ));
        }
        Ok(BatData {
            format,
            joint_count: info[1],
            clips: self.records(id::BAT_CLIPS),
            entries,
        })
    }

    fn read_vat(&self) -> Result<VatData> {
        let info = self.info(id::VAT_INFO)?;
        let format = VatFormat::from_code(info[0])
            .ok_or_else(|| invalid("VAT format code", u64::from(info[0]), "must be 0, 1 or 2"))?;
        let layout = VatLayout {
            vertex_count: info[1],
            frame_count: info[2],
            width: info[3],
            rows_per_frame: info[4],
            frames_per_layer: info[5],
            height: info[6],
            layers: info[7],
        };
        let plane = |sid| self.section(sid).map_or(Vec::new(), |(_, bytes)| bytes.to_vec());
        Ok(VatData {
            format,
            layout,
            clips: self.records(id::VAT_CLIPS),
            quant: self.records::<VatQuant>(id::VAT_QUANT),
            planes: [plane(id::VAT_PLANE0), plane(id::VAT_PLANE1)],
        })
    }

    fn read_sockets(&self) -> Result<SocketData> {
        let info = self.info(id::SOCKET_INFO)?;
        if info[2] != 0 || info[3] != 0 {
            return Err(invalid(
                "SOCKET_INFO reserved words",
                u64::from(info[2] | info[3]),
                "must be zero",
            ));
        }
        let (n, name_words) = self.words(id::SOCKET_NAMES);
        if n != info[0] {
            return Err(invalid(
                "SOCKET_NAMES count",
                u64::from(n),
                "must equal the socket count",
            ));
        }
        let mut names = Vec::with_capacity(n as usize);
        let mut joints = Vec::with_capacity(n as usize);
        for (s, r) in name_words.chunks_exact(3).enumerate() {
            names.push(self.string(format!("socket {s} name"), r[0], r[1])?);
            joints.push(
                u16::try_from(r[2])
                    .map_err(|_| invalid(format!("socket {s} joint"), u64::from(r[2]), "must fit u16"))?,
            );
        }
        let transforms: Vec<PaletteEntry> = self.records(id::SOCKET_TRANSFORMS);
        if transforms.len() as u64 != u64::from(info[0]) * u64::from(info[1]) {
            return Err(invalid(
                "SOCKET_TRANSFORMS count",
                transforms.len() as u64,
                "must be frames times sockets",
            ));
        }
        Ok(SocketData {
            names,
            joints,
            clips: self.records(id::SOCKET_CLIPS),
            transforms,
        })
    }
}
