//! Texture upload: a `crowd_mesh::TextureData` and its whole mip chain into an sRGB device texture, checked
//! against the device's side limit.

use crowd_mesh::TextureData;

use crate::Result;

/// Creates an sRGB texture holding every level of `data`.
pub(crate) fn upload_texture(device: &wgpu::Device, queue: &wgpu::Queue, data: &TextureData) -> Result<wgpu::Texture> {
    let max = device.limits().max_texture_dimension_2d;
    if data.width > max || data.height > max || data.width == 0 || data.height == 0 {
        return Err(crowd_mesh::Error::texture(
            &data.name,
            format!("is {} x {}; each side must be 1 to {max}", data.width, data.height),
        )
        .into());
    }
    let levels = data.mips.len() as u32;
    let full = 32 - data.width.max(data.height).leading_zeros();
    if levels == 0 || levels > full {
        return Err(crowd_mesh::Error::texture(
            &data.name,
            format!(
                "has {levels} mip levels; a {} x {} texture has 1 to {full}",
                data.width, data.height
            ),
        )
        .into());
    }
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some(&data.name),
        size: wgpu::Extent3d {
            width: data.width,
            height: data.height,
            depth_or_array_layers: 1,
        },
        mip_level_count: levels,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (level, texels) in data.mips.iter().enumerate() {
        let (w, h) = ((data.width >> level).max(1), (data.height >> level).max(1));
        if texels.len() != (4 * w * h) as usize {
            return Err(crowd_mesh::Error::texture(
                &data.name,
                format!("mip level {level} holds {} bytes, not {}", texels.len(), 4 * w * h),
            )
            .into());
        }
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &texture,
                mip_level: level as u32,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            texels,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(4 * w),
                rows_per_image: Some(h),
            },
            wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
    }
    Ok(texture)
}
