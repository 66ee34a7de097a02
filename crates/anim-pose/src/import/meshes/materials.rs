//! The materials of imported primitives, and their base colour images, imported once each.

use std::collections::HashMap;

use glam::Vec4;

use crate::import::Source;
use crate::import::buffers::view_bytes;
use crate::{Error, Material, Result, TextureImage};

/// Images imported so far, deduplicated by glTF image index.
#[derive(Default)]
pub(super) struct Images {
    /// The images, in import order.
    pub(super) list: Vec<TextureImage>,
    /// The index in `list` of each glTF image imported.
    by_gltf_index: HashMap<usize, usize>,
}

/// The material of a primitive, importing its base colour image.
pub(super) fn build_material(src: &Source<'_>, material: Option<usize>, images: &mut Images) -> Result<Material> {
    let Some(index) = material else {
        return Ok(Material::default());
    };
    let root = &src.root;
    let object = || format!("material {index}");
    let mat = root
        .materials
        .get(index)
        .ok_or_else(|| Error::invalid(object(), "does not exist"))?;
    let pbr = &mat.pbr_metallic_roughness;
    let base_color_texture = match &pbr.base_color_texture {
        Some(info) => {
            let t = info.index.value();
            let texture = root
                .textures
                .get(t)
                .ok_or_else(|| Error::invalid(object(), format!("refers to texture {t}, which does not exist")))?;
            Some(import_image(src, texture.source.value(), images)?)
        }
        None => None,
    };
    Ok(Material {
        name: mat.name.clone().unwrap_or_else(|| format!("material {index}")),
        base_color_factor: Vec4::from_array(pbr.base_color_factor.0),
        base_color_texture,
    })
}

/// Imports glTF image `index` once, returning its index in the model's image list.
fn import_image(src: &Source<'_>, index: usize, images: &mut Images) -> Result<usize> {
    if let Some(&i) = images.by_gltf_index.get(&index) {
        return Ok(i);
    }
    let root = &src.root;
    let image = root
        .images
        .get(index)
        .ok_or_else(|| Error::invalid(format!("image {index}"), "does not exist"))?;
    let object = match &image.name {
        Some(name) => format!("image {index} ('{name}')"),
        None => format!("image {index}"),
    };
    let (bytes, uri_mime) = match (&image.uri, image.buffer_view) {
        (Some(uri), None) => {
            let data = src.resolver.read(uri, &object)?;
            (data.bytes, data.mime_type)
        }
        (None, Some(view)) => {
            if image.mime_type.is_none() {
                return Err(Error::invalid(&object, "has a bufferView but no mimeType"));
            }
            let bytes =
                view_bytes(root, &src.buffers, view.value()).map_err(|e| Error::invalid(&object, e.to_string()))?;
            (bytes.to_vec(), None)
        }
        _ => return Err(Error::invalid(&object, "must have exactly one of uri and bufferView")),
    };
    let sniffed = if bytes.starts_with(&[0x89, b'P', b'N', b'G']) {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else {
        None
    };
    let mime_type = image
        .mime_type
        .as_ref()
        .map(|m| m.0.clone())
        .or(uri_mime)
        .or_else(|| sniffed.map(str::to_owned));
    let name = image.name.clone().unwrap_or_else(|| format!("image {index}"));
    images.list.push(TextureImage { name, mime_type, bytes });
    let i = images.list.len() - 1;
    images.by_gltf_index.insert(index, i);
    Ok(i)
}
