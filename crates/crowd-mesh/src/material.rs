//! [`Material`]: what a packed mesh is drawn with, as plain data (a base colour factor and an optional decoded
//! texture); a renderer uploads it.

use crate::texture::TextureData;

/// A mesh's material: what the fragment shader multiplies with the vertex colour and the record's tint.
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// The base colour factor, linear RGBA.
    pub base_color_factor: [f32; 4],
    /// The base colour texture; white when `None`.
    pub base_color_texture: Option<TextureData>,
}

impl Default for Material {
    fn default() -> Self {
        Self {
            base_color_factor: [1.0; 4],
            base_color_texture: None,
        }
    }
}
