//! [`OffscreenTarget`]: an offscreen colour and depth target that renders one pass and reads its colour back,
//! optionally timed with GPU timestamps; and the renderer configuration for its formats.

use super::Gpu;
use super::readback::{copy_rgba8, map_for_reading};
use crate::{Error, Result, WorkCounts, WorkQueries};

/// The colour format of [`OffscreenTarget`]: 8-bit RGBA in sRGB, as PNG files store it.
pub const OFFSCREEN_COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;

/// The depth format of [`OffscreenTarget`].
pub const OFFSCREEN_DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// An offscreen colour and depth target of `width × height` pixels, and a buffer to read the colour back.
#[derive(Debug)]
pub struct OffscreenTarget {
    /// The colour texture ([`OFFSCREEN_COLOR_FORMAT`]).
    pub color: wgpu::Texture,
    /// A view of `color` to render into.
    pub color_view: wgpu::TextureView,
    /// The depth texture ([`OFFSCREEN_DEPTH_FORMAT`]).
    pub depth: wgpu::Texture,
    /// A view of `depth`.
    pub depth_view: wgpu::TextureView,
    readback: wgpu::Buffer,
    width: u32,
    height: u32,
    /// Bytes per row in the readback buffer: `4 · width` rounded up to 256, as copies require.
    padded_row: u32,
}

impl OffscreenTarget {
    /// A target of `width × height` pixels.
    ///
    /// # Errors
    ///
    /// [`Error::TargetSize`] when a side is zero or past the device's `max_texture_dimension_2d`.
    pub fn new(device: &wgpu::Device, width: u32, height: u32) -> Result<Self> {
        let max = device.limits().max_texture_dimension_2d;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(Error::TargetSize { width, height, max });
        }
        let size = wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        };
        let texture = |label, format, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size,
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let color = texture(
            "offscreen colour",
            OFFSCREEN_COLOR_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        );
        let depth = texture(
            "offscreen depth",
            OFFSCREEN_DEPTH_FORMAT,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let padded_row = (4 * width).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("offscreen readback"),
            size: u64::from(padded_row) * u64::from(height),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        Ok(Self {
            color_view: color.create_view(&wgpu::TextureViewDescriptor::default()),
            depth_view: depth.create_view(&wgpu::TextureViewDescriptor::default()),
            color,
            depth,
            readback,
            width,
            height,
            padded_row,
        })
    }

    /// The size in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Clears the target to `clear` (colour) and 1 (depth), lets `draw` record into one render pass over it,
    /// submits, and reads the colour back as [`OffscreenTarget::read_rgba8`] does.
    ///
    /// # Errors
    ///
    /// As [`OffscreenTarget::read_rgba8`].
    pub fn render(
        &self,
        gpu: &Gpu,
        clear: wgpu::Color,
        draw: impl FnOnce(&mut wgpu::RenderPass<'_>),
    ) -> Result<Vec<u8>> {
        let encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("offscreen render"),
        });
        self.render_after(gpu, encoder, clear, draw)
    }

    /// As [`OffscreenTarget::render`], with the pass recorded after what `encoder` holds already (a renderer's
    /// `prepare` and `prepare_view`), and `encoder` submitted.
    ///
    /// # Errors
    ///
    /// As [`OffscreenTarget::read_rgba8`].
    pub fn render_after(
        &self,
        gpu: &Gpu,
        mut encoder: wgpu::CommandEncoder,
        clear: wgpu::Color,
        draw: impl FnOnce(&mut wgpu::RenderPass<'_>),
    ) -> Result<Vec<u8>> {
        {
            let mut pass = self.begin_pass(&mut encoder, clear, None);
            draw(&mut pass);
        }
        gpu.queue.submit([encoder.finish()]);
        self.read_rgba8(gpu)
    }

    /// As [`OffscreenTarget::render_after`], with the pass counted by render query 0 of `queries` and every query of
    /// `queries` resolved after it (cull queries included, when `encoder` holds the culls that wrote them): the
    /// image and the counts.
    ///
    /// # Errors
    ///
    /// As [`OffscreenTarget::read_rgba8`] and [`WorkQueries::read`].
    pub fn render_counted(
        &self,
        gpu: &Gpu,
        mut encoder: wgpu::CommandEncoder,
        clear: wgpu::Color,
        queries: &WorkQueries,
        draw: impl FnOnce(&mut wgpu::RenderPass<'_>),
    ) -> Result<(Vec<u8>, WorkCounts)> {
        {
            let mut pass = self.begin_pass(&mut encoder, clear, None);
            queries.begin_render(&mut pass, 0);
            draw(&mut pass);
            queries.end_render(&mut pass);
        }
        queries.resolve(&mut encoder);
        gpu.queue.submit([encoder.finish()]);
        let pixels = self.read_rgba8(gpu)?;
        Ok((pixels, queries.read(&gpu.device)?))
    }

    /// As [`OffscreenTarget::render`], and the GPU time of the pass in milliseconds from timestamps when the
    /// device has `TIMESTAMP_QUERY` (`None` otherwise).
    ///
    /// # Errors
    ///
    /// As [`OffscreenTarget::read_rgba8`].
    pub fn render_timed(
        &self,
        gpu: &Gpu,
        clear: wgpu::Color,
        draw: impl FnOnce(&mut wgpu::RenderPass<'_>),
    ) -> Result<(Vec<u8>, Option<f64>)> {
        if !gpu.device.features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Ok((self.render(gpu, clear, draw)?, None));
        }
        let queries = gpu.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass time"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pass time resolve"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pass time readback"),
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("offscreen render"),
        });
        {
            let mut pass = self.begin_pass(
                &mut encoder,
                clear,
                Some(wgpu::RenderPassTimestampWrites {
                    query_set: &queries,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                }),
            );
            draw(&mut pass);
        }
        encoder.resolve_query_set(&queries, 0..2, &resolve, 0);
        encoder.copy_buffer_to_buffer(&resolve, 0, &readback, 0, None);
        gpu.queue.submit([encoder.finish()]);
        let pixels = self.read_rgba8(gpu)?;
        map_for_reading(&gpu.device, &readback, "the timestamps")?;
        let ticks: [u64; 2] = {
            let view = readback.get_mapped_range(..).map_err(|source| Error::MapRange {
                what: "the timestamps",
                source,
            })?;
            bytemuck::pod_read_unaligned(&view[..16])
        };
        let ms = ticks[1].saturating_sub(ticks[0]) as f64 * f64::from(gpu.queue.get_timestamp_period()) * 1e-6;
        Ok((pixels, Some(ms)))
    }

    fn begin_pass<'e>(
        &self,
        encoder: &'e mut wgpu::CommandEncoder,
        clear: wgpu::Color,
        timestamp_writes: Option<wgpu::RenderPassTimestampWrites<'e>>,
    ) -> wgpu::RenderPass<'e> {
        encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("offscreen"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &self.color_view,
                resolve_target: None,
                depth_slice: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(clear),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &self.depth_view,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Store,
                }),
                stencil_ops: None,
            }),
            timestamp_writes,
            occlusion_query_set: None,
            multiview_mask: None,
        })
    }

    /// Copies the colour texture back and returns it as tightly packed RGBA8 rows, top row first
    /// (`4 · width · height` bytes), after everything submitted so far.
    ///
    /// # Errors
    ///
    /// [`Error::Poll`], [`Error::Map`] or [`Error::MapRange`] when the device is lost or the mapping fails.
    pub fn read_rgba8(&self, gpu: &Gpu) -> Result<Vec<u8>> {
        copy_rgba8(&gpu.device, &gpu.queue, &self.color, &self.readback, self.padded_row)
    }
}

impl Gpu {
    /// A [`RendererConfig`](crate::RendererConfig) for [`OffscreenTarget`]'s formats, this device's own limits and
    /// the adapter's downlevel flags.
    pub fn offscreen_config(&self) -> crate::RendererConfig {
        crate::RendererConfig::for_device(
            &self.adapter,
            &self.device,
            OFFSCREEN_COLOR_FORMAT,
            Some(OFFSCREEN_DEPTH_FORMAT),
        )
    }
}
