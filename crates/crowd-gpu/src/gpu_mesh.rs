//! A [`PackedMesh`] on the device: one interleaved vertex buffer, one index buffer holding every LOD level, and
//! its material (base colour factor and mipmapped sRGB texture).

use anim_pose::Indices;
use crowd_mesh::{LodLevel, Material, PackedJoints, PackedMesh, TextureData, UvFormat};
use wgpu::util::DeviceExt;

use crate::Result;

/// Bytes per vertex on the GPU with u8 joints: position 12, normal 4, UV 4, weights 4, colour 4, joints 4.
pub const VERTEX_STRIDE_U8: u64 = 32;

/// Bytes per vertex on the GPU with u16 joints (joints take 8).
pub const VERTEX_STRIDE_U16: u64 = 36;

/// The interleaved vertex layout of `crowd_skin.wgsl` (`VertexIn`, joints at location 5).
pub(crate) fn vertex_attributes(joints_u16: bool) -> [wgpu::VertexAttribute; 6] {
    let joints = if joints_u16 {
        wgpu::VertexFormat::Uint32x2
    } else {
        wgpu::VertexFormat::Uint32
    };
    [
        (0, wgpu::VertexFormat::Float32x3, 0),
        (1, wgpu::VertexFormat::Uint32, 12),
        (2, wgpu::VertexFormat::Uint32, 16),
        (3, wgpu::VertexFormat::Uint32, 20),
        (4, wgpu::VertexFormat::Uint32, 24),
        (5, joints, 28),
    ]
    .map(|(shader_location, format, offset)| wgpu::VertexAttribute {
        format,
        offset,
        shader_location,
    })
}

/// The interleaved vertex bytes of `mesh`: per vertex, position, normal, UV, weights, colour (white when the mesh
/// has none) and joints.
pub(crate) fn interleave(mesh: &PackedMesh) -> Vec<u8> {
    let n = mesh.vertex_count();
    let stride = if matches!(mesh.joints, PackedJoints::U16(_)) {
        VERTEX_STRIDE_U16
    } else {
        VERTEX_STRIDE_U8
    } as usize;
    let mut bytes = Vec::with_capacity(n * stride);
    for v in 0..n {
        bytes.extend_from_slice(bytemuck::bytes_of(&mesh.positions[v]));
        let color = mesh.colors.as_ref().map_or(u32::MAX, |c| c[v]);
        for word in [mesh.normals[v], mesh.uvs[v], mesh.weights[v], color] {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        match &mesh.joints {
            PackedJoints::U8(j) => bytes.extend_from_slice(&j[v].to_le_bytes()),
            PackedJoints::U16(j) => bytes.extend_from_slice(bytemuck::bytes_of(&j[v])),
        }
    }
    bytes
}

/// The largest joint index any influence of `mesh` names (unused influences name joint 0).
pub(crate) fn max_joint(mesh: &PackedMesh) -> u32 {
    match &mesh.joints {
        PackedJoints::U8(j) => j.iter().flat_map(|w| w.to_le_bytes()).map(u32::from).max(),
        PackedJoints::U16(j) => j
            .iter()
            .flat_map(|w| [w[0] & 0xffff, w[0] >> 16, w[1] & 0xffff, w[1] >> 16])
            .max(),
    }
    .unwrap_or(0)
}

/// A mesh on the device.
#[derive(Debug)]
pub(crate) struct GpuMesh {
    pub name: String,
    pub vertices: wgpu::Buffer,
    /// The vertices in `vertices`.
    pub vertex_count: u32,
    pub indices: wgpu::Buffer,
    pub index_format: wgpu::IndexFormat,
    pub joints_u16: bool,
    /// The largest joint index the mesh reads: the packet's palettes need more entries than this.
    pub max_joint: u32,
    pub lods: Vec<LodLevel>,
    pub base_color: [f32; 4],
    pub uv_f16: bool,
    pub material: wgpu::BindGroup,
}

impl GpuMesh {
    /// Uploads `mesh` and `material`, with the material bind group of `layout` (texture, sampler).
    ///
    /// # Errors
    ///
    /// [`Error::Mesh`](crate::Error::Mesh) holding `crowd_mesh::Error::Mesh` when the vertex or index buffer is
    /// past the device's `max_buffer_size`, or the base colour factor is not finite, and `crowd_mesh::Error::Texture`
    /// when the texture is past `max_texture_dimension_2d` or its mip chain is not whole.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        mesh: &PackedMesh,
        material: &Material,
        layout: &wgpu::BindGroupLayout,
        sampler: &wgpu::Sampler,
    ) -> Result<Self> {
        let limits = device.limits();
        let vertex_bytes = interleave(mesh);
        let index_bytes: &[u8] = match &mesh.indices {
            Indices::U16(i) => bytemuck::cast_slice(i),
            Indices::U32(i) => bytemuck::cast_slice(i),
        };
        for (what, len) in [("vertex", vertex_bytes.len()), ("index", index_bytes.len())] {
            if len as u64 > limits.max_buffer_size {
                return Err(crowd_mesh::Error::mesh(
                    &mesh.name,
                    format!(
                        "its {what} buffer of {len} bytes is past the device's max_buffer_size of {}",
                        limits.max_buffer_size
                    ),
                )
                .into());
            }
        }
        if !material.base_color_factor.iter().all(|c| c.is_finite()) {
            return Err(crowd_mesh::Error::mesh(&mesh.name, "its base colour factor is not finite").into());
        }
        let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&mesh.name),
            contents: &vertex_bytes,
            usage: wgpu::BufferUsages::VERTEX,
        });
        // A buffer's size must be a multiple of 4: pad an odd number of u16 indices.
        let mut padded = index_bytes.to_vec();
        padded.resize(index_bytes.len().next_multiple_of(4).max(4), 0);
        let indices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(&mesh.name),
            contents: &padded,
            usage: wgpu::BufferUsages::INDEX,
        });
        let white = TextureData::from_rgba8("white", 1, 1, vec![255; 4]);
        let texture = upload_texture(device, queue, material.base_color_texture.as_ref().unwrap_or(&white))?;
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        let material_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&mesh.name),
            layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(sampler),
                },
            ],
        });
        Ok(Self {
            name: mesh.name.clone(),
            vertices,
            vertex_count: mesh.positions.len() as u32,
            indices,
            index_format: match mesh.indices {
                Indices::U16(_) => wgpu::IndexFormat::Uint16,
                Indices::U32(_) => wgpu::IndexFormat::Uint32,
            },
            joints_u16: matches!(mesh.joints, PackedJoints::U16(_)),
            max_joint: max_joint(mesh),
            lods: mesh.lods.clone(),
            base_color: material.base_color_factor,
            uv_f16: mesh.uv_format == UvFormat::F16,
            material: material_group,
        })
    }
}

/// Creates an sRGB texture holding every level of `data`.
fn upload_texture(device: &wgpu::Device, queue: &wgpu::Queue, data: &TextureData) -> Result<wgpu::Texture> {
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
