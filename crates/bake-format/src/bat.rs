//! The bone-animation bake (BAT): per clip, per frame, one skinning palette in one of skin-pack's formats.

use glam::{Affine3A, Vec3A, Vec4};
use skin_pack::{F16Format, Mat3x4F16, PaletteEntry, PaletteFormat, QtF16};

use crate::{ClipRecord, Error, Result};

/// The palette entry format of a [`BatData`]: skin-pack's three formats, with their proven error bounds.
///
/// The code is the value stored in bake files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum BatFormat {
    /// [`PaletteEntry`]: the f32 3×4 matrix as three row `vec4<f32>`, 48 B.
    F32 = 0,
    /// [`Mat3x4F16`]: twelve halves in six `u32`, 24 B, any affine matrix.
    Mat3x4F16 = 1,
    /// [`QtF16`]: a quaternion, a translation and a uniform scale as eight halves in four `u32`, 16 B; only for
    /// skeletons with a uniform scale everywhere (`skin_pack::check_uniform_scale`).
    QtF16 = 2,
}

impl BatFormat {
    /// Every format, cheapest first.
    pub const ALL: [BatFormat; 3] = [BatFormat::QtF16, BatFormat::Mat3x4F16, BatFormat::F32];

    /// Bytes per palette entry.
    pub const fn entry_size(self) -> usize {
        match self {
            BatFormat::F32 => 48,
            BatFormat::Mat3x4F16 => 24,
            BatFormat::QtF16 => 16,
        }
    }

    /// `u32` words per palette entry.
    pub const fn entry_words(self) -> usize {
        self.entry_size() / 4
    }

    /// skin-pack's name of the format.
    pub const fn name(self) -> &'static str {
        match self {
            BatFormat::F32 => <PaletteEntry as PaletteFormat>::NAME,
            BatFormat::Mat3x4F16 => <Mat3x4F16 as PaletteFormat>::NAME,
            BatFormat::QtF16 => <QtF16 as PaletteFormat>::NAME,
        }
    }

    /// The format of a file code.
    pub const fn from_code(code: u32) -> Option<Self> {
        match code {
            0 => Some(BatFormat::F32),
            1 => Some(BatFormat::Mat3x4F16),
            2 => Some(BatFormat::QtF16),
            _ => None,
        }
    }

    /// Appends the encoding of `m` (translation origin zero) to `out`, as `entry_words()` words: skin-pack's encoder
    /// of the format, so that [`BatFormat::decode_rows`] gives back `m` within the format's proven error bound.
    ///
    /// The caller checks `m` against the format first, as anim-bake's baker does with skin-pack's
    /// `F16Format::check`: a matrix past an f16 format's range, or with a non-uniform scale in `QtF16`, does not
    /// decode within the bound.
    pub fn encode_into(self, m: &Affine3A, out: &mut Vec<u32>) {
        match self {
            BatFormat::F32 => out.extend_from_slice(bytemuck::cast_slice(&[PaletteEntry::encode(m, Vec3A::ZERO)])),
            BatFormat::Mat3x4F16 => out.extend_from_slice(bytemuck::cast_slice(&[Mat3x4F16::encode(m, Vec3A::ZERO)])),
            BatFormat::QtF16 => out.extend_from_slice(bytemuck::cast_slice(&[QtF16::encode(m, Vec3A::ZERO)])),
        }
    }

    /// The rows of an encoded entry (`entry_words()` words), decoded as the shaders decode them
    /// (`shaders/palette.wgsl`, `shaders/palette_f16.wgsl`), translation origin zero.
    ///
    /// # Panics
    ///
    /// When `words` is not `entry_words()` long.
    pub fn decode_rows(self, words: &[u32]) -> [Vec4; 3] {
        match self {
            BatFormat::F32 => {
                let e: PaletteEntry = bytemuck::pod_read_unaligned(bytemuck::cast_slice(words));
                e.rows.map(Vec4::from)
            }
            BatFormat::Mat3x4F16 => {
                let e: Mat3x4F16 = bytemuck::pod_read_unaligned(bytemuck::cast_slice(words));
                e.decode_rows(Vec3A::ZERO)
            }
            BatFormat::QtF16 => {
                let e: QtF16 = bytemuck::pod_read_unaligned(bytemuck::cast_slice(words));
                e.decode_rows(Vec3A::ZERO)
            }
        }
    }
}

/// A matrix from the three rows of a palette entry (column 3 is the translation).
pub fn affine_from_rows(rows: &[Vec4; 3]) -> Affine3A {
    let [r0, r1, r2] = rows;
    Affine3A::from_cols_array(&[r0.x, r1.x, r2.x, r0.y, r1.y, r2.y, r0.z, r1.z, r2.z, r0.w, r1.w, r2.w])
}

/// `mix(a, b, f)` of WGSL, row by row: `a · (1 − f) + b · f`.
pub fn mix_rows(a: &[Vec4; 3], b: &[Vec4; 3], f: f32) -> [Vec4; 3] {
    [0, 1, 2].map(|r| a[r] * (1.0 - f) + b[r] * f)
}

/// A bone-animation bake: the skinning palette of every frame of every clip, in one format, in one buffer.
///
/// # Layout
///
/// `entries` holds `frame_count() × joint_count` palette entries of `format.entry_words()` little-endian `u32`
/// words each (the format's `#[repr(C)]` `Pod` layout, 4-byte aligned), frame after frame: the entry of skin joint
/// `j` at the part's frame `f` is entry `f · joint_count + j`, at word `(f · joint_count + j) · entry_words`.
/// Clip `c`'s frame `k` is the part's frame `clips[c].first_frame + k` ([`ClipRecord`]).
/// Entries are skinning matrices in instance space, `root_transform × model × inverse_bind`, with translation origin
/// zero for the f16 formats, exactly as skin-pack's `FlattenJob` writes a model-space palette.
///
/// # Playback
///
/// At clip time `t`: `(frame, f) = clips[c].frame_at(t)`, then each joint's rows are
/// `mix(rows(frame, j), rows(frame + 1, j), f)` of the decoded entries; [`BatData::sample_rows`] is the CPU twin.
#[derive(Clone, Debug, PartialEq)]
pub struct BatData {
    /// The entry format.
    pub format: BatFormat,
    /// Entries per frame: the skin's joints (`Skeleton::skin_joint_count`).
    pub joint_count: u32,
    /// One record per clip, in the bake's clip order.
    pub clips: Vec<ClipRecord>,
    /// The entries, as `u32` words (see the layout above).
    pub entries: Vec<u32>,
}

impl BatData {
    /// The frames stored, over all clips.
    pub fn frame_count(&self) -> usize {
        let per_frame = self.joint_count as usize * self.format.entry_words();
        self.entries.len().checked_div(per_frame).unwrap_or(0)
    }

    /// The size of `entries` in bytes.
    pub fn byte_len(&self) -> usize {
        self.entries.len() * 4
    }

    /// The entries as bytes, ready to upload.
    pub fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.entries)
    }

    /// The words of the entry of skin joint `joint` at the part's frame `frame`, or `None` past the end.
    pub fn entry(&self, frame: u32, joint: u32) -> Option<&[u32]> {
        if joint >= self.joint_count {
            return None;
        }
        let words = self.format.entry_words();
        let index = (frame as usize)
            .checked_mul(self.joint_count as usize)?
            .checked_add(joint as usize)?;
        let start = index.checked_mul(words)?;
        self.entries.get(start..start.checked_add(words)?)
    }

    /// The decoded rows of skin joint `joint` at the part's frame `frame`, as the shader decodes them.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidField`] when the entry is past the end of the buffer.
    pub fn rows(&self, frame: u32, joint: u32) -> Result<[Vec4; 3]> {
        match self.entry(frame, joint) {
            Some(words) => Ok(self.format.decode_rows(words)),
            None => Err(Error::InvalidField {
                what: format!("BAT entry of frame {frame} joint {joint}"),
                value: u64::from(frame),
                rule: "is past the end of the entries",
            }),
        }
    }

    /// The rows of skin joint `joint` of clip `clip` at clip time `t`, as the GPU plays them back: the decoded rows
    /// of the two frames around `t`, mixed.
    ///
    /// # Errors
    ///
    /// [`Error::ClipOutOfRange`] for a clip past the table, [`Error::InvalidField`] for a joint or frame past the
    /// buffer.
    pub fn sample_rows(&self, clip: usize, t: f32, joint: u32) -> Result<[Vec4; 3]> {
        let record = self.clips.get(clip).ok_or(Error::ClipOutOfRange {
            clip,
            count: self.clips.len(),
        })?;
        let pair = record.frame_at(t);
        let a = self.rows(pair.frame, joint)?;
        let b = self.rows(pair.frame + 1, joint)?;
        Ok(mix_rows(&a, &b, pair.fraction))
    }

    /// The whole palette of clip `clip` at clip time `t` as the GPU plays it back, into `out` (one matrix per skin
    /// joint).
    ///
    /// # Errors
    ///
    /// As [`BatData::sample_rows`]; [`Error::BufferSize`] when `out` is not `joint_count` long.
    pub fn sample_palette(&self, clip: usize, t: f32, out: &mut [Affine3A]) -> Result<()> {
        if out.len() != self.joint_count as usize {
            return Err(Error::BufferSize {
                what: "BAT palette output (one matrix per skin joint)",
                expected: self.joint_count as usize,
                actual: out.len(),
            });
        }
        for (j, o) in out.iter_mut().enumerate() {
            *o = affine_from_rows(&self.sample_rows(clip, t, j as u32)?);
        }
        Ok(())
    }
}
