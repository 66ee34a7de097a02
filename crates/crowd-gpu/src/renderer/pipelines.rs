//! The renderer's render pipelines: the skinned draw pipelines (u8 or u16 joints, colour or depth only) and the
//! palette fetch each palette format composes into the skinning shader.

use crowd_mesh::PaletteKind;

use super::RendererConfig;
use crate::gpu_mesh::{VERTEX_STRIDE_U8, VERTEX_STRIDE_U16, vertex_attributes};
use crate::shaders::{self, ShaderSource};

/// The palette fetch file that reads `kind`'s entries.
pub(super) fn palette_fetch(kind: PaletteKind) -> &'static ShaderSource {
    match kind {
        PaletteKind::F32 => &shaders::PALETTE_FETCH_F32,
        PaletteKind::Mat3x4F16 => &shaders::PALETTE_FETCH_MAT3X4_F16,
        PaletteKind::QtF16 => &shaders::PALETTE_FETCH_QT_F16,
    }
}

/// One skinned render pipeline of `module` with vertex entry point `entry` (u8 or u16 joints), colour and depth
/// as `config` says, or depth only.
pub(super) fn skin_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    config: &RendererConfig,
    layout: &wgpu::PipelineLayout,
    entry: &str,
    joints_u16: bool,
    depth_only: bool,
) -> wgpu::RenderPipeline {
    let attributes = vertex_attributes(joints_u16);
    let stride = if joints_u16 {
        VERTEX_STRIDE_U16
    } else {
        VERTEX_STRIDE_U8
    };
    let vertices = wgpu::VertexBufferLayout {
        array_stride: stride,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &attributes,
    };
    draw_pipeline(device, module, config, layout, entry, vertices, depth_only)
}

/// A render pipeline of the renderer's draws: vertex entry point `entry` reading one vertex buffer of `vertices`,
/// triangle lists drawn two-sided (glTF meshes may be open or mirrored; the fragment shaders flip back faces),
/// colour (`fs_main`), depth and samples as `config` says, or depth only (no fragment stage).
pub(crate) fn draw_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    config: &RendererConfig,
    layout: &wgpu::PipelineLayout,
    entry: &str,
    vertices: wgpu::VertexBufferLayout<'_>,
    depth_only: bool,
) -> wgpu::RenderPipeline {
    let targets = [Some(wgpu::ColorTargetState {
        format: config.color_format,
        blend: None,
        write_mask: wgpu::ColorWrites::ALL,
    })];
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(entry),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            buffers: &[Some(vertices)],
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::TriangleList,
            front_face: wgpu::FrontFace::Ccw,
            cull_mode: None,
            ..Default::default()
        },
        depth_stencil: config.depth_format.map(|format| wgpu::DepthStencilState {
            format,
            depth_write_enabled: Some(config.depth_write),
            depth_compare: Some(config.depth_compare),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: wgpu::MultisampleState {
            count: config.sample_count,
            ..Default::default()
        },
        fragment: (!depth_only).then(|| wgpu::FragmentState {
            module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &targets,
        }),
        multiview_mask: None,
        cache: None,
    })
}
