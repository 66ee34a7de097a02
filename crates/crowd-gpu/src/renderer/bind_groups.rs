//! The renderer's bind group layout entries and bind groups: the frame group (frame uniform, record window,
//! pooled and unique palettes) and the draw group (per-draw uniforms at a dynamic offset).

use std::num::NonZeroU64;

use crate::grow_buffer::GrowBuffer;
use crate::uniforms::DrawUniform;

pub(super) fn storage_entry(binding: u32, dynamic: bool, min: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only: true },
            has_dynamic_offset: dynamic,
            min_binding_size: NonZeroU64::new(min),
        },
        count: None,
    }
}

pub(super) fn uniform_entry(binding: u32, dynamic: bool, size: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: dynamic,
            min_binding_size: NonZeroU64::new(size),
        },
        count: None,
    }
}

/// A binding of `buffer` from its start: the whole buffer, at most `window` bytes (a multiple of 4).
pub(super) fn whole(buffer: &GrowBuffer, window: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer: &buffer.buffer,
        offset: 0,
        size: NonZeroU64::new(buffer.size().min(window)),
    })
}

pub(super) fn frame_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    frame: &wgpu::Buffer,
    records: &GrowBuffer,
    pool: &GrowBuffer,
    unique: &GrowBuffer,
    palette_window: u64,
) -> wgpu::BindGroup {
    frame_group_with(
        device,
        layout,
        frame,
        records,
        whole(pool, palette_window),
        whole(unique, palette_window),
    )
}

/// The frame bind group with `pool` bound as the pooled palettes (the pose pool's, or a bake's for baked draws).
pub(super) fn frame_group_with(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    frame: &wgpu::Buffer,
    records: &GrowBuffer,
    pool: wgpu::BindingResource<'_>,
    unique: wgpu::BindingResource<'_>,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("crowd frame"),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: frame.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &records.buffer,
                    offset: 0,
                    size: NonZeroU64::new(records.window()),
                }),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: pool,
            },
            wgpu::BindGroupEntry {
                binding: 3,
                resource: unique,
            },
        ],
    })
}

pub(super) fn draw_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    uniforms: &GrowBuffer,
) -> wgpu::BindGroup {
    draw_group_of(device, layout, &uniforms.buffer)
}

/// The draw bind group over a uniform buffer of [`DrawUniform`]s at the draw stride.
pub(super) fn draw_group_of(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    uniforms: &wgpu::Buffer,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("crowd draw"),
        layout,
        entries: &[wgpu::BindGroupEntry {
            binding: 0,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer: uniforms,
                offset: 0,
                size: NonZeroU64::new(size_of::<DrawUniform>() as u64),
            }),
        }],
    })
}
