//! The sun's shadows and the ground that receives them.
//!
//! Each frame the crowd is culled a second time for the sun's orthographic view (so that characters outside the
//! main view still cast into it), taking each character's LOD and tier from the main view (a shadow is drawn with
//! the detail the character shows), drawn depth-only into the shadow map with
//! `CrowdRenderer::render_view_depth_only`, and the ground (`shaders/ground_shadowed.wgsl`) reads that map. The
//! characters themselves do not receive shadows: that needs the crowd's own shader to read the map.

use anyhow::Result;
use bytemuck::{Pod, Zeroable};
use crowd_frame::FrameCamera;
use crowd_gpu::{CrowdRenderer, CrowdView, Lighting, PreparedView, ProceduralRenderer, RendererConfig, ViewDesc};
use glam::Vec3;

use crate::stage::DEPTH_FORMAT;

/// The shadow map's side in texels.
pub const SHADOW_MAP_SIZE: u32 = 2048;

/// The ground's uniform, as `GroundUniform` of `shaders/ground_shadowed.wgsl` lays it out (240 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct GroundUniform {
    view_proj: [[f32; 4]; 4],
    light_view_proj: [[f32; 4]; 4],
    sun_direction: [f32; 4],
    sun_color: [f32; 4],
    sky_color: [f32; 4],
    plane: [f32; 4],
    params: [f32; 4],
}

/// The sun's view of the crowd, its shadow map, and the ground.
pub struct Sun {
    lighting: Lighting,
    view: CrowdView,
    /// The shadow map (the crowd renderer's sample count), and its view.
    map: wgpu::TextureView,
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    pipeline: wgpu::RenderPipeline,
    /// The ground's centre (x, z), half size and height.
    plane: [f32; 4],
    /// The checker square's side.
    square: f32,
    /// Whether the crowd casts shadows.
    pub shadows: bool,
}

impl Sun {
    /// The sun of `lighting` over a ground `half` units each way about `centre`, with squares of `square` units,
    /// for a renderer drawing passes of `config` (its colour format and sample count).
    ///
    /// # Errors
    ///
    /// crowd-gpu's errors creating the sun's view.
    pub fn new(
        device: &wgpu::Device,
        renderer: &CrowdRenderer,
        lighting: Lighting,
        config: &RendererConfig,
        (centre, half): (Vec3, f32),
        square: f32,
    ) -> Result<Self> {
        let (color_format, sample_count) = (config.color_format, config.sample_count);
        let view = renderer.create_view(device)?;
        let map = device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("crowd-demo shadow map"),
                size: wgpu::Extent3d {
                    width: SHADOW_MAP_SIZE,
                    height: SHADOW_MAP_SIZE,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count,
                dimension: wgpu::TextureDimension::D2,
                format: DEPTH_FORMAT,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
                view_formats: &[],
            })
            .create_view(&wgpu::TextureViewDescriptor::default());
        let mut source = crowd_gpu::shaders::GROUND_SHADOWED.composed();
        if sample_count == 1 {
            // The file's documented switch to a single-sampled map.
            source = source.replace("texture_depth_multisampled_2d", "texture_depth_2d");
        }
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(crowd_gpu::shaders::GROUND_SHADOWED.file),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd-demo ground uniform"),
            size: size_of::<GroundUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("crowd-demo ground"),
            layout: None,
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_ground"),
                compilation_options: Default::default(),
                buffers: &[],
            },
            primitive: wgpu::PrimitiveState::default(),
            depth_stencil: Some(wgpu::DepthStencilState {
                format: DEPTH_FORMAT,
                depth_write_enabled: Some(true),
                depth_compare: Some(wgpu::CompareFunction::Less),
                stencil: Default::default(),
                bias: Default::default(),
            }),
            multisample: wgpu::MultisampleState {
                count: sample_count,
                ..Default::default()
            },
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_ground"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: color_format,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("crowd-demo ground"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&map),
                },
            ],
        });
        Ok(Self {
            lighting,
            view,
            map,
            uniform,
            bind_group,
            pipeline,
            plane: [centre.x, centre.z, half, centre.y],
            square,
            shadows: true,
        })
    }

    /// The sun's orthographic camera for a frame seen by `camera`: a square box about the point the camera looks
    /// at on the ground (or `reach` ahead of it), `reach` wide, looking along the sun's rays.
    pub fn light_camera(&self, camera: &FrameCamera, reach: f32) -> FrameCamera {
        let inverse = camera.view.inverse();
        let eye = inverse.w_axis.truncate();
        let forward = -inverse.z_axis.truncate().normalize_or(Vec3::NEG_Z);
        let height = self.plane[3];
        // Where the view ray meets the ground, or a point `reach` ahead when it does not (or too far away).
        let t = if forward.y < -1e-3 {
            ((height - eye.y) / forward.y).min(reach)
        } else {
            reach
        };
        let focus = eye + forward * t.max(0.0);
        let half = (t.max(0.0) * 0.9).clamp(reach * 0.05, reach);
        let sun = Vec3::from_array(self.lighting.sun_direction).normalize_or(Vec3::Y);
        let up = if sun.y.abs() > 0.99 { Vec3::Z } else { Vec3::Y };
        let distance = half * 4.0 + reach;
        let light_eye = focus + sun * distance;
        FrameCamera {
            view: glam::camera::rh::view::look_at_mat4(light_eye, focus, up),
            proj: glam::camera::rh::proj::directx::orthographic(-half, half, -half, half, 0.0, distance * 2.0),
            eye: light_eye,
        }
    }

    /// Culls the crowd of `renderer` for `light` (encoded into `encoder`) with the LODs and tiers of `main` (the main
    /// view, prepared for this frame), draws it and `fish` (prepared with `light` as its depth camera) depth-only into
    /// the shadow map, and writes the ground's uniform for the main `camera`. Call after the renderers' `prepare`.
    ///
    /// # Errors
    ///
    /// crowd-gpu's errors.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        (renderer, main, fish): (&CrowdRenderer, &PreparedView<'_>, Option<&ProceduralRenderer>),
        camera: &FrameCamera,
        light: &FrameCamera,
    ) -> Result<()> {
        if self.shadows {
            let shadow = renderer.prepare_view(device, encoder, &mut self.view, ViewDesc::following(*light, main))?;
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("crowd-demo shadow map"),
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.map,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            renderer.render_view_depth_only(&shadow, &mut pass);
            if let Some(fish) = fish {
                fish.draw_depth_only(&mut pass);
            }
        }
        let l = self.lighting;
        let uniform = GroundUniform {
            view_proj: camera.view_proj().to_cols_array_2d(),
            light_view_proj: light.view_proj().to_cols_array_2d(),
            sun_direction: Vec3::from_array(l.sun_direction)
                .normalize_or(Vec3::Y)
                .extend(0.0)
                .to_array(),
            sun_color: [l.sun_color[0], l.sun_color[1], l.sun_color[2], 0.0],
            sky_color: [l.sky_color[0], l.sky_color[1], l.sky_color[2], 0.0],
            plane: self.plane,
            // A depth bias of a thousandth of the sun's depth range: the ground is not in the map, so no acne.
            params: [self.square, 1e-3, if self.shadows { 1.0 } else { 0.0 }, 0.0],
        };
        queue.write_buffer(&self.uniform, 0, bytemuck::bytes_of(&uniform));
        Ok(())
    }

    /// Draws the ground into `pass`.
    pub fn render_ground(&self, pass: &mut wgpu::RenderPass<'_>) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.draw(0..6, 0..1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The WGSL struct is 7 × 16 + 2 × 64 bytes; a mismatch would read the plane and parameters from the wrong place.
    #[test]
    fn the_ground_uniform_matches_its_wgsl_size() {
        let module = naga::front::wgsl::parse_str(&crowd_gpu::shaders::GROUND_SHADOWED.composed()).expect("parses");
        let ty = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some("GroundUniform"))
            .expect("GroundUniform")
            .1;
        let naga::TypeInner::Struct { span, .. } = ty.inner else {
            panic!("GroundUniform is not a struct");
        };
        assert_eq!(span as usize, size_of::<GroundUniform>());
    }
}
