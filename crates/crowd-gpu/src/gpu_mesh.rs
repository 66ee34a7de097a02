//! A [`PackedMesh`] on the device: one interleaved vertex buffer, one index buffer holding every LOD level, and
//! its material (base colour factor, and the texture `texture_upload` puts on the device).

use anim_pose::Indices;
use crowd_mesh::{LodLevel, Material, PackedJoints, PackedMesh, TextureData, UvFormat};
use wgpu::util::DeviceExt;

use crate::Result;
use crate::texture_upload::upload_texture;

/// Bytes per vertex on the GPU with u8 joints: position 12, normal 4, UV 4, weights 4, colour 4, joints 4.
pub(crate) const VERTEX_STRIDE_U8: u64 = 32;

/// Bytes per vertex on the GPU with u16 joints (joints take 8).
pub(crate) const VERTEX_STRIDE_U16: u64 = 36;

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
