//! The VAT tier of the GPU-driven path: a vertex-animation bake ([`bake_format::VatData`]) on the device.
//!
//! VAT draws (`vs_vat` in `shaders/crowd_skin.wgsl`) skin nothing: each vertex's position and normal at the
//! instance's clip time are two frames of the bake's texel planes (read with `textureLoad`, no filtering),
//! interpolated, and a crossfade mixes the two clips' vertices. The bake's layout, format, clip table and
//! quantization travel in one uniform; its planes are 2D array textures in the bake's own texel layout.
//!
//! Without a bake, the VAT tier draws from the pose pool, as the pooled tier does.

use bake_format::{CLIP_RECORD_SIZE, ClipRecord, VatData, VatFormat};
use crowd_frame::ResidentClip;
use skin_pack::PaletteFormat;

use super::{CrowdRenderer, RenderPath};
use crate::{Error, Result};

/// The most clips the VAT uniform holds (`VatUniform::clips` in `crowd_skin.wgsl`).
pub(crate) const MAX_VAT_CLIPS: usize = 128;

/// The most meshes the VAT uniform gives a first vertex (`VatUniform::mesh_first_vertex`).
pub(crate) const MAX_VAT_MESHES: usize = 64;

/// Bytes of the VAT uniform: the layout and format (16), the meshes' first vertices, and per clip its record and
/// its quantization (64).
pub(crate) const VAT_UNIFORM_SIZE: u64 = (16 + MAX_VAT_MESHES * 4 + MAX_VAT_CLIPS * 64) as u64;

/// A vertex-animation bake on the device.
#[derive(Debug)]
pub(crate) struct DeviceVat {
    pub(crate) uniform: wgpu::Buffer,
    pub(crate) planes: [wgpu::TextureView; 2],
    records: Vec<ClipRecord>,
}

/// The VAT bindings of a renderer without a bake: a zero uniform and two one-texel planes.
#[derive(Debug)]
pub(crate) struct NoVat {
    pub(crate) uniform: wgpu::Buffer,
    pub(crate) plane: wgpu::TextureView,
}

impl NoVat {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd VAT (none)"),
            size: VAT_UNIFORM_SIZE,
            usage: wgpu::BufferUsages::UNIFORM,
            mapped_at_creation: false,
        });
        let plane = plane_texture(device, wgpu::TextureFormat::R16Uint, (1, 1, 1)).create_view(&view_desc());
        Self { uniform, plane }
    }
}

fn view_desc() -> wgpu::TextureViewDescriptor<'static> {
    wgpu::TextureViewDescriptor {
        dimension: Some(wgpu::TextureViewDimension::D2Array),
        ..Default::default()
    }
}

fn plane_texture(device: &wgpu::Device, format: wgpu::TextureFormat, (w, h, layers): (u32, u32, u32)) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some("crowd VAT plane"),
        size: wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: layers,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    })
}

/// The wgpu formats of a VAT format's planes (the second `None` for a one-plane format).
fn plane_formats(format: VatFormat) -> [Option<wgpu::TextureFormat>; 2] {
    use wgpu::TextureFormat as T;
    match format {
        VatFormat::Compact => [Some(T::R32Uint), Some(T::Rg8Uint)],
        VatFormat::Standard => [Some(T::Rgba16Uint), None],
        VatFormat::Precise => [Some(T::Rgba16Uint), Some(T::R16Uint)],
    }
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// Draws the VAT tier of the GPU-driven path from `vat`, a bake of the crowd's character (the same clips in the
    /// same order). `mesh_first_vertex[m]` is the bake's first vertex of the renderer's mesh `m` (added `m`-th):
    /// `bake_format::BakedMesh::first_vertex` of the same mesh. Uploads the planes and the uniform once; each
    /// `prepare` then checks the packet's clips against the bake's in O(clips).
    ///
    /// # Errors
    ///
    /// - [`Error::Path`] when the GPU-driven path is not enabled;
    /// - [`Error::Bake`] when the bake has no clip or more than 128 (`MAX_VAT_CLIPS`), a clip with fewer than two
    ///   frames or frames past the layout, planes that do not hold the layout's texels, or when
    ///   `mesh_first_vertex` does not give each mesh (at most 64, `MAX_VAT_MESHES`) a range of baked vertices;
    /// - [`Error::Limit`] when the planes pass `max_texture_dimension_2d` or `max_texture_array_layers`.
    ///
    /// Nothing changes on error.
    pub fn set_vat(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        vat: &VatData,
        mesh_first_vertex: &[u32],
    ) -> Result<()> {
        if self.gpu_driven.is_none() {
            return Err(Error::Path {
                call: "set_vat",
                path: RenderPath::CpuCulled,
            });
        }
        let bad = |clip: Option<usize>, what: &'static str| Err(Error::Bake { clip, what });
        if vat.clips.is_empty() || vat.clips.len() > MAX_VAT_CLIPS || vat.quant.len() != vat.clips.len() {
            return bad(
                None,
                "has no clip, more than MAX_VAT_CLIPS, or not one quantization per clip",
            );
        }
        let layout = vat.layout;
        for (c, r) in vat.clips.iter().enumerate() {
            if r.frame_count < 2 || u64::from(r.first_frame) + u64::from(r.frame_count) > u64::from(layout.frame_count)
            {
                return bad(Some(c), "has fewer than two frames or frames past the VAT layout");
            }
        }
        if mesh_first_vertex.len() != self.meshes.len() || self.meshes.len() > MAX_VAT_MESHES {
            return bad(None, "gives no first vertex to each of the renderer's meshes");
        }
        for (mesh, &first) in self.meshes.iter().zip(mesh_first_vertex) {
            if u64::from(first) + u64::from(mesh.vertex_count) > u64::from(layout.vertex_count) {
                return bad(None, "has fewer vertices than a mesh reads");
            }
        }
        let texels = layout.texel_count();
        let sizes = vat.format.plane_texel_sizes();
        let formats = plane_formats(vat.format);
        for (plane, size) in vat.planes.iter().zip(sizes) {
            let want = texels.and_then(|t| t.checked_mul(size));
            if want != Some(plane.len()) || layout.width == 0 || layout.frames_per_layer == 0 {
                return bad(None, "has planes that do not hold the layout's texels");
            }
        }
        let (max_2d, max_layers) = (self.limits.texture_2d, self.limits.texture_layers);
        for (what, value, max) in [
            ("max_texture_dimension_2d", layout.width.max(layout.height), max_2d),
            ("max_texture_array_layers", layout.layers, max_layers),
        ] {
            if value > max {
                return Err(Error::Limit {
                    buffer: "VAT planes",
                    bytes: vat.byte_len() as u64,
                    limit: what,
                    max: u64::from(max),
                });
            }
        }
        let size = (layout.width, layout.height, layout.layers);
        let view = |p: usize| -> Option<wgpu::TextureView> {
            let format = formats[p]?;
            let texture = wgpu::util::DeviceExt::create_texture_with_data(
                device,
                queue,
                &wgpu::TextureDescriptor {
                    label: Some("crowd VAT plane"),
                    size: wgpu::Extent3d {
                        width: size.0,
                        height: size.1,
                        depth_or_array_layers: size.2,
                    },
                    mip_level_count: 1,
                    sample_count: 1,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage: wgpu::TextureUsages::TEXTURE_BINDING,
                    view_formats: &[],
                },
                wgpu::util::TextureDataOrder::LayerMajor,
                &vat.planes[p],
            );
            Some(texture.create_view(&view_desc()))
        };
        let plane0 = view(0).ok_or(Error::Bake {
            clip: None,
            what: "has no first plane",
        })?;
        let plane1 = view(1).unwrap_or_else(|| {
            plane_texture(device, wgpu::TextureFormat::R16Uint, (1, 1, 1)).create_view(&view_desc())
        });
        let mut bytes = Vec::with_capacity(VAT_UNIFORM_SIZE as usize);
        for word in [
            layout.width,
            layout.rows_per_frame,
            layout.frames_per_layer,
            vat.format as u32,
        ] {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        for m in 0..MAX_VAT_MESHES {
            bytes.extend_from_slice(&mesh_first_vertex.get(m).copied().unwrap_or(0).to_le_bytes());
        }
        for c in 0..MAX_VAT_CLIPS {
            match (vat.clips.get(c), vat.quant.get(c)) {
                (Some(r), Some(q)) => {
                    bytes.extend_from_slice(bytemuck::bytes_of(r));
                    bytes.extend_from_slice(bytemuck::bytes_of(q));
                }
                _ => bytes.resize(bytes.len() + CLIP_RECORD_SIZE + 32, 0),
            }
        }
        debug_assert_eq!(bytes.len() as u64, VAT_UNIFORM_SIZE);
        let uniform = wgpu::util::DeviceExt::create_buffer_init(
            device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("crowd VAT"),
                contents: &bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            },
        );
        if let Some(g) = self.gpu_driven.as_mut() {
            g.vat = Some(DeviceVat {
                uniform,
                planes: [plane0, plane1],
                records: vat.clips.clone(),
            });
            g.generation += 1;
        }
        Ok(())
    }

    /// Stops drawing the VAT tier from a bake: it draws from the pose pool again.
    pub fn clear_vat(&mut self) {
        if let Some(g) = self.gpu_driven.as_mut()
            && g.vat.take().is_some()
        {
            g.generation += 1;
        }
    }

    /// True when the VAT tier draws from a bake ([`CrowdRenderer::set_vat`]).
    pub fn has_vat(&self) -> bool {
        self.gpu_driven.as_ref().is_some_and(|g| g.vat.is_some())
    }
}

impl DeviceVat {
    /// Checks a packet's clips against the bake's: count, durations and looping (as the baked tier's check).
    pub(crate) fn check(&self, clips: &[ResidentClip]) -> Result<()> {
        super::baked::check_clips(&self.records, clips)
    }
}
