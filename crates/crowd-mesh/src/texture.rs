//! Material textures: a base colour image decoded with the `image` crate into RGBA8 sRGB, with its whole mip
//! chain, each level averaged from the one above in linear light.

use crate::{Error, Result};

/// The largest texture side accepted: 8192 texels, the minimum `max_texture_dimension_2d` of wgpu's default
/// limits, so that every device can create the texture.
pub const MAX_TEXTURE_SIDE: u32 = 8192;

/// A decoded texture: RGBA8 in sRGB, every mip level from full size down to 1 × 1.
#[derive(Clone, Debug, PartialEq)]
pub struct TextureData {
    /// The texture's name, for messages.
    pub name: String,
    /// Level 0's width.
    pub width: u32,
    /// Level 0's height.
    pub height: u32,
    /// The levels, largest first: level `i` is `max(width >> i, 1) × max(height >> i, 1)` texels, rows top first.
    pub mips: Vec<Vec<u8>>,
}

impl TextureData {
    /// Decodes `bytes` (PNG or JPEG; the format is read from the data) and builds the mip chain.
    ///
    /// # Errors
    ///
    /// [`Error::Texture`] naming `name` when the bytes do not decode or a side is past [`MAX_TEXTURE_SIDE`].
    pub fn decode(name: &str, bytes: &[u8]) -> Result<Self> {
        let image = image::load_from_memory(bytes)
            .map_err(|e| Error::texture(name, format!("does not decode: {e}")))?
            .to_rgba8();
        let (width, height) = image.dimensions();
        if width > MAX_TEXTURE_SIDE || height > MAX_TEXTURE_SIDE {
            return Err(Error::texture(
                name,
                format!("is {width} x {height}; a side may be at most {MAX_TEXTURE_SIDE}"),
            ));
        }
        Ok(Self::from_rgba8(name, width, height, image.into_raw()))
    }

    /// The texture of `width × height` RGBA8 sRGB texels `level0` (at least one texel, `4 · width · height`
    /// bytes), with its mip chain.
    pub fn from_rgba8(name: &str, width: u32, height: u32, level0: Vec<u8>) -> Self {
        let mut mips = vec![level0];
        let (mut w, mut h) = (width, height);
        while w > 1 || h > 1 {
            let next = downsample(&mips[mips.len() - 1], w, h);
            w = (w / 2).max(1);
            h = (h / 2).max(1);
            mips.push(next);
        }
        Self {
            name: name.to_owned(),
            width,
            height,
            mips,
        }
    }

    /// The size of level `level`.
    pub fn level_size(&self, level: usize) -> (u32, u32) {
        ((self.width >> level).max(1), (self.height >> level).max(1))
    }
}

/// sRGB to linear light.
fn to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear light to sRGB, rounded.
fn to_srgb(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    let s = if c <= 0.003_130_8 {
        c * 12.92
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0).round() as u8
}

/// The next mip level of a `w × h` RGBA8 sRGB level: each texel the average of up to 2 × 2 texels, colour in
/// linear light, alpha as stored; an odd last row or column folds into its neighbour's average.
fn downsample(level: &[u8], w: u32, h: u32) -> Vec<u8> {
    let (nw, nh) = ((w / 2).max(1), (h / 2).max(1));
    // The source texels of target texel `i` of `n` along a side of `full`: two, and the odd remainder at the end.
    let span = |i: u32, n: u32, full: u32| {
        let end = if i == n - 1 { full } else { 2 * i + 2 };
        2 * i..end.max(2 * i + 1)
    };
    let mut out = Vec::with_capacity((4 * nw * nh) as usize);
    for y in 0..nh {
        for x in 0..nw {
            let (xs, ys) = (span(x, nw, w), span(y, nh, h));
            let mut sum = [0.0f32; 4];
            let mut n = 0.0;
            for sy in ys.clone() {
                for sx in xs.clone() {
                    let i = 4 * (sy * w + sx) as usize;
                    for c in 0..3 {
                        sum[c] += to_linear(level[i + c]);
                    }
                    sum[3] += f32::from(level[i + 3]);
                    n += 1.0;
                }
            }
            out.extend_from_slice(&[
                to_srgb(sum[0] / n),
                to_srgb(sum[1] / n),
                to_srgb(sum[2] / n),
                (sum[3] / n).round() as u8,
            ]);
        }
    }
    out
}
