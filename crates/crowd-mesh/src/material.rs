//! [`Material`]: what a packed mesh is drawn with, as plain data (a base colour factor and an optional decoded
//! texture); a renderer uploads it.

use crate::texture::TextureData;
use crate::{Error, Result};

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

impl Material {
    /// The material of `model`'s mesh `mesh`: its base colour factor, and its base colour texture decoded.
    ///
    /// # Errors
    ///
    /// [`Error`] when `mesh` is past the model's meshes, its texture is past the model's images, or the image does
    /// not decode.
    pub fn of_mesh(model: &anim_pose::Model, mesh: usize) -> Result<Self> {
        let m = model
            .meshes
            .get(mesh)
            .ok_or_else(|| Error::scene(format!("mesh {mesh} is past the model's {} meshes", model.meshes.len())))?;
        let texture = match m.material.base_color_texture {
            Some(i) => {
                let image = model.images.get(i).ok_or_else(|| {
                    Error::scene(format!("mesh '{}' names image {i}, past the model's images", m.name))
                })?;
                Some(TextureData::decode(&image.name, &image.bytes)?)
            }
            None => None,
        };
        Ok(Self {
            base_color_factor: m.material.base_color_factor.to_array(),
            base_color_texture: texture,
        })
    }
}
