//! The renderer's bind groups: a view's frame group (its frame uniform, the record window, pooled and unique
//! palettes), the draw group (per-draw uniforms at a dynamic offset), and the bindings they are made of.

use std::num::NonZeroU64;

use crate::grow_buffer::GrowBuffer;
use crate::uniforms::DrawUniform;

/// A binding of `buffer` from its start: the whole buffer, at most `window` bytes (a multiple of 4).
pub(super) fn whole(buffer: &GrowBuffer, window: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
        buffer: &buffer.buffer,
        offset: 0,
        size: NonZeroU64::new(buffer.size().min(window)),
    })
}

/// A binding of all of `buffer`, whose size the caller kept within the binding limit.
pub(super) fn entire(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset: 0,
            size: NonZeroU64::new(buffer.size()),
        }),
    }
}

/// The frame bind group: `frame` (a view's uniform), the record window of `records`, and `pool` and `unique` as
/// the pooled and unique palettes (the pose pool's, or a bake's for baked draws).
pub(super) fn frame_group(
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
            entire(0, frame),
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

/// The draw bind group over a uniform buffer of [`DrawUniform`]s at the draw stride.
pub(super) fn draw_group(
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
