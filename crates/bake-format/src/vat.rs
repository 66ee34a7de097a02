//! The vertex-animation bake (VAT): per clip, per frame, every vertex's skinned position and normal, quantized,
//! in textures that the GPU reads with `textureLoad`.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use crate::quantize::{
    OCT8_ERROR_BOUND, OCT16_ERROR_BOUND, decode_oct, decode_position, encode_oct8, encode_oct16, encode_position,
    position_error_bound, position_steps,
};
use crate::{ClipRecord, Error, Result};

/// The default largest texture width (and height) of a VAT: wgpu's default `max_texture_dimension_2d`.
pub const DEFAULT_MAX_TEXTURE_WIDTH: u32 = 8192;

/// How a VAT stores one vertex at one frame, in one or two texture planes that share one texel layout.
///
/// Positions are unorm codes relative to the clip's box ([`VatQuant`]); normals are the octahedral map as two unorm
/// codes of `(u + 1) / 2`. The code is the value stored in bake files.
///
/// | format | plane 0 | plane 1 | bytes | position bits | normal bits |
/// | --- | --- | --- | --- | --- | --- |
/// | `Compact` | `R32Uint`: `x \| y << 11 \| z << 22` | `Rg8Uint`: `(u, v)` | 6 | 11, 11, 10 | 2 × 8 |
/// | `Standard` | `Rgba16Uint`: `(x, y, z, u \| v << 8)` | none | 8 | 16, 16, 16 | 2 × 8 |
/// | `Precise` | `Rgba16Uint`: `(x, y, z, u)` | `R16Uint`: `v` | 10 | 16, 16, 16 | 2 × 16 |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum VatFormat {
    /// 6 B: 11-, 11- and 10-bit positions in an `R32Uint` plane, the normal's two 8-bit codes in an `Rg8Uint` plane.
    Compact = 0,
    /// 8 B: three 16-bit positions and the normal's two 8-bit codes in one `Rgba16Uint` plane (the anchor).
    Standard = 1,
    /// 10 B: three 16-bit positions and the normal's first 16-bit code in an `Rgba16Uint` plane, the second code in
    /// an `R16Uint` plane.
    Precise = 2,
}

impl VatFormat {
    /// Every format, cheapest first.
    pub const ALL: [VatFormat; 3] = [VatFormat::Compact, VatFormat::Standard, VatFormat::Precise];

    /// Bytes per vertex per frame, over all planes.
    pub const fn bytes_per_vertex(self) -> usize {
        match self {
            VatFormat::Compact => 6,
            VatFormat::Standard => 8,
            VatFormat::Precise => 10,
        }
    }

    /// Bytes per texel of each plane (the second is 0 when the format has one plane).
    pub const fn plane_texel_sizes(self) -> [usize; 2] {
        match self {
            VatFormat::Compact => [4, 2],
            VatFormat::Standard => [8, 0],
            VatFormat::Precise => [8, 2],
        }
    }

    /// The planes of the format.
    pub const fn plane_count(self) -> usize {
        match self {
            VatFormat::Standard => 1,
            VatFormat::Compact | VatFormat::Precise => 2,
        }
    }

    /// The wgpu texture format name of each plane (`""` for a missing second plane).
    pub const fn plane_texture_formats(self) -> [&'static str; 2] {
        match self {
            VatFormat::Compact => ["R32Uint", "Rg8Uint"],
            VatFormat::Standard => ["Rgba16Uint", ""],
            VatFormat::Precise => ["Rgba16Uint", "R16Uint"],
        }
    }

    /// Bits of each position axis.
    pub const fn position_bits(self) -> [u32; 3] {
        match self {
            VatFormat::Compact => [11, 11, 10],
            VatFormat::Standard | VatFormat::Precise => [16, 16, 16],
        }
    }

    /// Bits of each of the normal's two octahedral codes.
    pub const fn normal_bits(self) -> u32 {
        match self {
            VatFormat::Compact | VatFormat::Standard => 8,
            VatFormat::Precise => 16,
        }
    }

    /// The largest angle between a unit normal and its decoded code, in radians.
    pub const fn normal_error_bound(self) -> f32 {
        match self.normal_bits() {
            8 => OCT8_ERROR_BOUND,
            _ => OCT16_ERROR_BOUND,
        }
    }

    /// A short name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            VatFormat::Compact => "compact (11/11/10 + oct 2x8, 6 B)",
            VatFormat::Standard => "standard (3x16 + oct 2x8, 8 B)",
            VatFormat::Precise => "precise (3x16 + oct 2x16, 10 B)",
        }
    }

    /// The format of a file code.
    pub const fn from_code(code: u32) -> Option<Self> {
        match code {
            0 => Some(VatFormat::Compact),
            1 => Some(VatFormat::Standard),
            2 => Some(VatFormat::Precise),
            _ => None,
        }
    }

    /// Writes the texels of one vertex into `planes[0]` and `planes[1]` (each at least its texel size long).
    pub(crate) fn encode(self, p: Vec3, n: Vec3, quant: &VatQuant, planes: [&mut [u8]; 2]) {
        let [plane0, plane1] = planes;
        let c = encode_position(p, quant.min3(), quant.step3(), self.position_bits());
        match self {
            VatFormat::Compact => {
                let word = c[0] | c[1] << 11 | c[2] << 22;
                plane0[..4].copy_from_slice(&word.to_le_bytes());
                plane1[..2].copy_from_slice(&encode_oct8(n));
            }
            VatFormat::Standard => {
                let [u, v] = encode_oct8(n);
                let halves = [c[0] as u16, c[1] as u16, c[2] as u16, u16::from(u) | u16::from(v) << 8];
                for (d, h) in plane0.chunks_exact_mut(2).zip(halves) {
                    d.copy_from_slice(&h.to_le_bytes());
                }
            }
            VatFormat::Precise => {
                let [u, v] = encode_oct16(n);
                let halves = [c[0] as u16, c[1] as u16, c[2] as u16, u];
                for (d, h) in plane0.chunks_exact_mut(2).zip(halves) {
                    d.copy_from_slice(&h.to_le_bytes());
                }
                plane1[..2].copy_from_slice(&v.to_le_bytes());
            }
        }
    }

    /// Decodes the texels of one vertex (the position, and the unit normal) as the shader does.
    pub fn decode(self, plane0: &[u8], plane1: &[u8], quant: &VatQuant) -> (Vec3, Vec3) {
        let u16_at = |b: &[u8], i: usize| u32::from(u16::from_le_bytes([b[2 * i], b[2 * i + 1]]));
        let (codes, oct) = match self {
            VatFormat::Compact => {
                let w = u32::from_le_bytes([plane0[0], plane0[1], plane0[2], plane0[3]]);
                (
                    [w & 0x7ff, (w >> 11) & 0x7ff, w >> 22],
                    [u32::from(plane1[0]), u32::from(plane1[1])],
                )
            }
            VatFormat::Standard => {
                let n = u16_at(plane0, 3);
                ([0, 1, 2].map(|i| u16_at(plane0, i)), [n & 0xff, n >> 8])
            }
            VatFormat::Precise => (
                [0, 1, 2].map(|i| u16_at(plane0, i)),
                [u16_at(plane0, 3), u16_at(plane1, 0)],
            ),
        };
        (
            decode_position(codes, quant.min3(), quant.step3()),
            decode_oct(oct, self.normal_bits()),
        )
    }
}

/// How one clip's positions are quantized: decoded position `= min.xyz + step.xyz · code` (per axis, codes as f32).
///
/// `min` and `max_corner` are the box of every position of the clip's stored frames; `step` is
/// `(max − min) / (2ᵇ − 1)` per axis for the format's bits ([`VatFormat::position_bits`]). `w` is 0 in both.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct VatQuant {
    /// The box's smallest corner; `w` is 0.
    pub min: [f32; 4],
    /// The size of one code per axis; `w` is 0.
    pub step: [f32; 4],
}

const _: () = assert!(size_of::<VatQuant>() == 32);

impl VatQuant {
    /// The quantization of the box from `min` to `max` with `format`'s bits.
    pub fn new(min: Vec3, max: Vec3, format: VatFormat) -> Self {
        Self {
            min: min.extend(0.0).to_array(),
            step: position_steps(min, max, format.position_bits()).extend(0.0).to_array(),
        }
    }

    /// `min.xyz`.
    pub fn min3(&self) -> Vec3 {
        Vec3::new(self.min[0], self.min[1], self.min[2])
    }

    /// `step.xyz`.
    pub fn step3(&self) -> Vec3 {
        Vec3::new(self.step[0], self.step[1], self.step[2])
    }
}

/// The texel of a vertex at a frame: column `x`, row `y` of array layer `layer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Texel {
    /// The column, below [`VatLayout::width`].
    pub x: u32,
    /// The row, below [`VatLayout::height`].
    pub y: u32,
    /// The array layer, below [`VatLayout::layers`].
    pub layer: u32,
}

/// Where each (vertex, frame) of a VAT lives in its textures: 2D array textures of `width × height` texels and
/// `layers` layers, the same layout for every plane.
///
/// Each frame takes `rows_per_frame = ⌈vertex_count / max_width⌉` whole rows of `width = ⌈vertex_count /
/// rows_per_frame⌉ ≤ max_width` texels, and each layer holds `frames_per_layer = ⌊max_height / rows_per_frame⌋`
/// whole frames, so that rows wrap before the width limit and no frame straddles two layers. The texel of vertex
/// `v` at the part's frame `f` (clip `c`'s frame `k` is `f = clips[c].first_frame + k`) is
///
/// ```text
/// layer = f / frames_per_layer
/// y     = (f % frames_per_layer) · rows_per_frame + v / width
/// x     = v % width
/// ```
///
/// (integer division), and its byte offset in a plane is `((layer · height + y) · width + x) · texel_size`, with
/// `height = min(frame_count, frames_per_layer) · rows_per_frame`. Texels past the last vertex of a frame's last
/// row, and past the last frame, are zero. A shader reads them with `textureLoad(plane, vec2(x, y), layer, 0)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VatLayout {
    /// Vertices per frame.
    pub vertex_count: u32,
    /// Frames over all clips.
    pub frame_count: u32,
    /// Texels per row.
    pub width: u32,
    /// Rows per frame.
    pub rows_per_frame: u32,
    /// Whole frames per array layer.
    pub frames_per_layer: u32,
    /// Rows per layer.
    pub height: u32,
    /// Array layers.
    pub layers: u32,
}

impl VatLayout {
    /// The layout of `frame_count` frames of `vertex_count` vertices in textures of at most `max_width` columns and
    /// `max_height` rows (the device's `max_texture_dimension_2d`; pass [`DEFAULT_MAX_TEXTURE_WIDTH`] for wgpu's
    /// default).
    ///
    /// # Errors
    ///
    /// - [`Error::InvalidOption`] when a count or a limit is zero.
    /// - [`Error::DeviceLimit`] when one frame needs more rows than `max_height`.
    pub fn new(vertex_count: u32, frame_count: u32, max_width: u32, max_height: u32) -> Result<Self> {
        for (what, value) in [
            ("VAT vertex count", vertex_count),
            ("VAT frame count", frame_count),
            ("VAT max texture width", max_width),
            ("VAT max texture height", max_height),
        ] {
            if value == 0 {
                return Err(Error::InvalidOption {
                    what,
                    value: 0.0,
                    rule: "must be at least 1",
                });
            }
        }
        let rows_per_frame = vertex_count.div_ceil(max_width);
        if rows_per_frame > max_height {
            return Err(Error::DeviceLimit {
                what: "rows of one VAT frame (max_texture_dimension_2d)",
                needed: u64::from(rows_per_frame),
                limit: u64::from(max_height),
            });
        }
        let width = vertex_count.div_ceil(rows_per_frame);
        let frames_per_layer = max_height / rows_per_frame;
        let layers = frame_count.div_ceil(frames_per_layer);
        let height = frame_count.min(frames_per_layer) * rows_per_frame;
        Ok(Self {
            vertex_count,
            frame_count,
            width,
            rows_per_frame,
            frames_per_layer,
            height,
            layers,
        })
    }

    /// The texel of vertex `vertex` at the part's frame `frame` (the formula in the type's docs).
    pub fn texel(&self, vertex: u32, frame: u32) -> Texel {
        Texel {
            x: vertex % self.width,
            y: (frame % self.frames_per_layer) * self.rows_per_frame + vertex / self.width,
            layer: frame / self.frames_per_layer,
        }
    }

    /// The index of a texel in a plane, `(layer · height + y) · width + x`.
    pub fn texel_index(&self, t: Texel) -> usize {
        (t.layer as usize * self.height as usize + t.y as usize) * self.width as usize + t.x as usize
    }

    /// Texels per plane, `width · height · layers`, or `None` when it overflows.
    pub fn texel_count(&self) -> Option<usize> {
        (self.width as usize)
            .checked_mul(self.height as usize)?
            .checked_mul(self.layers as usize)
    }
}

/// A vertex-animation bake: every vertex of every frame of every clip, quantized ([`VatFormat`]) into one or two
/// texture planes laid out by [`VatLayout`].
///
/// # Playback
///
/// At clip time `t`: `(frame, f) = clips[c].frame_at(t)`; the vertex's position is
/// `mix(p(frame), p(frame + 1), f)` and its normal `normalize(mix(n(frame), n(frame + 1), f))`, each decoded with clip
/// `c`'s [`VatQuant`]; [`VatData::sample`] is the CPU twin. Positions are in instance space (the skeleton's root
/// transform applied), as palettes are.
#[derive(Clone, Debug, PartialEq)]
pub struct VatData {
    /// The texel format.
    pub format: VatFormat,
    /// Where each (vertex, frame) lives.
    pub layout: VatLayout,
    /// One record per clip, in the bake's clip order.
    pub clips: Vec<ClipRecord>,
    /// One quantization box per clip, in clip order.
    pub quant: Vec<VatQuant>,
    /// The planes' texels, little-endian, `layout.texel_count() × plane_texel_sizes()[i]` bytes each; the second is
    /// empty for a one-plane format.
    pub planes: [Vec<u8>; 2],
}

impl VatData {
    /// The bytes of every plane.
    pub fn byte_len(&self) -> usize {
        self.planes[0].len() + self.planes[1].len()
    }

    /// The decoded position and unit normal of vertex `vertex` at the part's frame `frame`, with clip `clip`'s
    /// quantization.
    ///
    /// # Errors
    ///
    /// [`Error::ClipOutOfRange`] for a clip past the table; [`Error::InvalidField`] for a vertex or frame past the
    /// layout.
    pub fn vertex(&self, clip: usize, vertex: u32, frame: u32) -> Result<(Vec3, Vec3)> {
        let quant = self.quant.get(clip).ok_or(Error::ClipOutOfRange {
            clip,
            count: self.quant.len(),
        })?;
        if vertex >= self.layout.vertex_count || frame >= self.layout.frame_count {
            return Err(Error::InvalidField {
                what: format!("VAT vertex {vertex} at frame {frame}"),
                value: u64::from(frame),
                rule: "is outside the layout",
            });
        }
        let i = self.layout.texel_index(self.layout.texel(vertex, frame));
        let [s0, s1] = self.format.plane_texel_sizes();
        let (t0, t1) = (
            texel_bytes(&self.planes[0], i, s0)?,
            texel_bytes(&self.planes[1], i, s1)?,
        );
        Ok(self.format.decode(t0, t1, quant))
    }

    /// The position and unit normal of vertex `vertex` of clip `clip` at clip time `t`, as the GPU plays them back.
    ///
    /// # Errors
    ///
    /// As [`VatData::vertex`].
    pub fn sample(&self, clip: usize, t: f32, vertex: u32) -> Result<(Vec3, Vec3)> {
        let record = self.clips.get(clip).ok_or(Error::ClipOutOfRange {
            clip,
            count: self.clips.len(),
        })?;
        let pair = record.frame_at(t);
        let (p0, n0) = self.vertex(clip, vertex, pair.frame)?;
        let (p1, n1) = self.vertex(clip, vertex, pair.frame + 1)?;
        let f = pair.fraction;
        Ok((p0 * (1.0 - f) + p1 * f, (n0 * (1.0 - f) + n1 * f).normalize_or(n1)))
    }
}

/// Texel `i` of a plane of `size`-byte texels (empty for a missing plane).
fn texel_bytes(plane: &[u8], i: usize, size: usize) -> Result<&[u8]> {
    if size == 0 {
        return Ok(&[]);
    }
    i.checked_mul(size)
        .and_then(|start| plane.get(start..start.checked_add(size)?))
        .ok_or_else(|| Error::InvalidField {
            what: format!("VAT texel {i}"),
            value: i as u64,
            rule: "is past the end of its plane",
        })
}

/// The largest distance between a position in `quant`'s box and its decoded code in `format` (see
/// `crate::quantize`'s bounds).
pub fn vat_position_error_bound(format: VatFormat, min: Vec3, max: Vec3) -> f32 {
    position_error_bound(min, max, format.position_bits())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_formula_places_every_vertex_frame_once() {
        for (vertices, frames, width, height) in [(6652, 260, 8192, 8192), (10, 7, 4, 6), (9, 5, 3, 100), (1, 1, 1, 1)]
        {
            let l = VatLayout::new(vertices, frames, width, height).unwrap();
            assert!(l.width <= width && l.height <= height);
            assert_eq!(l.rows_per_frame, vertices.div_ceil(width));
            let mut seen = vec![false; l.texel_count().unwrap()];
            for f in 0..frames {
                for v in 0..vertices {
                    let t = l.texel(v, f);
                    assert!(t.x < l.width && t.y < l.height && t.layer < l.layers);
                    let i = l.texel_index(t);
                    assert!(!seen[i], "{vertices} {frames}: texel {i} twice");
                    seen[i] = true;
                }
            }
        }
        let l = VatLayout::new(10, 7, 4, 6).unwrap();
        // 10 vertices in rows of at most 4: 3 rows of 4 texels (the last row half empty), 2 frames per layer.
        assert_eq!(
            (l.width, l.rows_per_frame, l.frames_per_layer, l.height, l.layers),
            (4, 3, 2, 6, 4)
        );
        assert_eq!(l.texel(9, 5), Texel { x: 1, y: 5, layer: 2 });
        assert!(matches!(VatLayout::new(10, 1, 2, 4), Err(Error::DeviceLimit { .. })));
        assert!(matches!(VatLayout::new(0, 1, 2, 4), Err(Error::InvalidOption { .. })));
    }
}
