//! Reading GPU data back to the CPU after everything submitted so far: RGBA8 textures as tightly packed rows, and
//! buffers ([`Gpu::read_buffer`]). Each call waits for the mapping.

use super::Gpu;
use crate::{Error, Result};

/// Reads back a 2D texture of 4 bytes per texel (such as an engine's RGBA8 render target, which needs `COPY_SRC`
/// usage) as tightly packed rows, top row first (`4 · width · height` bytes), after everything submitted so far.
/// Allocates a staging buffer per call: for tests and tools.
///
/// # Errors
///
/// [`Error::ReadbackFormat`] for a texture whose format is not 4 bytes per texel; [`Error::Poll`],
/// [`Error::Map`] or [`Error::MapRange`] for a lost device or a failed mapping.
pub fn read_texture_rgba8(device: &wgpu::Device, queue: &wgpu::Queue, texture: &wgpu::Texture) -> Result<Vec<u8>> {
    if texture.format().block_copy_size(None) != Some(4) {
        return Err(Error::ReadbackFormat {
            format: texture.format(),
        });
    }
    let padded_row = (4 * texture.width()).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let readback = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("texture readback"),
        size: u64::from(padded_row) * u64::from(texture.height()),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    copy_rgba8(device, queue, texture, &readback, padded_row)
}

/// Copies `texture` (4 bytes per texel) into `readback` (rows of `padded_row` bytes), maps it and returns the
/// tightly packed rows.
pub(super) fn copy_rgba8(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
    readback: &wgpu::Buffer,
    padded_row: u32,
) -> Result<Vec<u8>> {
    let (width, height) = (texture.width(), texture.height());
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("readback"),
    });
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded_row),
                rows_per_image: Some(height),
            },
        },
        wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
    );
    queue.submit([encoder.finish()]);
    map_for_reading(device, readback, "the readback")?;
    let mut pixels = Vec::with_capacity((4 * width * height) as usize);
    {
        let view = readback.get_mapped_range(..).map_err(|source| Error::MapRange {
            what: "the readback",
            source,
        })?;
        for row in view.chunks_exact(padded_row as usize) {
            pixels.extend_from_slice(&row[..(4 * width) as usize]);
        }
    }
    readback.unmap();
    Ok(pixels)
}

/// Maps `buffer` for reading and waits until it is mapped, after everything submitted so far; `what` names it in
/// errors.
pub(crate) fn map_for_reading(device: &wgpu::Device, buffer: &wgpu::Buffer, what: &'static str) -> Result<()> {
    let (sender, receiver) = std::sync::mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |r| drop(sender.send(r)));
    device.poll(wgpu::PollType::wait_indefinitely())?;
    // A callback that never ran (its sender dropped) is a failed mapping too.
    receiver
        .recv()
        .unwrap_or(Err(wgpu::BufferAsyncError))
        .map_err(|source| Error::Map { what, source })
}

impl Gpu {
    /// The first `bytes` bytes of `buffer` (which has `COPY_SRC` usage), after everything submitted so far: a test
    /// and tool helper that allocates a staging buffer per call.
    ///
    /// # Errors
    ///
    /// [`Error::ReadbackRange`] when `bytes` is past the buffer or not a multiple of 4; [`Error::Poll`],
    /// [`Error::Map`] or [`Error::MapRange`] when the mapping fails.
    pub fn read_buffer(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>> {
        if bytes > buffer.size() || !bytes.is_multiple_of(4) {
            return Err(Error::ReadbackRange {
                bytes,
                size: buffer.size(),
            });
        }
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("buffer readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("buffer readback"),
        });
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes);
        self.queue.submit([encoder.finish()]);
        map_for_reading(&self.device, &staging, "the buffer readback")?;
        let out = staging
            .get_mapped_range(..)
            .map_err(|source| Error::MapRange {
                what: "the buffer readback",
                source,
            })?
            .to_vec();
        staging.unmap();
        Ok(out)
    }
}
