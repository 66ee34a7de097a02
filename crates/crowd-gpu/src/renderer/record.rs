//! Recording a prepared renderer's draws into the engine's render pass ([`CrowdRenderer::render`], depth-only
//! too), and [`DrawCrowd`], the same for renderers of any palette format.

use skin_pack::PaletteFormat;

use super::CrowdRenderer;
use crate::uniforms::DRAW_UNIFORM_STRIDE;

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// Records the draws of the last successful `prepare` into `pass`, whose attachments have the configured
    /// formats. Draws nothing for an empty packet.
    pub fn render(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.record(pass, &self.pipelines);
    }

    /// Records the same draws with the depth-only entry points (the same skinning, no fragment stage), for a
    /// pass with only a depth attachment of the configured depth format; draws nothing when the renderer has no
    /// depth format.
    pub fn render_depth_only(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some(pipelines) = &self.depth_pipelines {
            self.record(pass, pipelines);
        }
    }

    fn record(&self, pass: &mut wgpu::RenderPass<'_>, pipelines: &[wgpu::RenderPipeline; 2]) {
        self.record_with(pass, pipelines, &self.frame_group);
    }

    /// Records the planned draws with `frame_group` (the renderer's, or a view's with its own camera).
    pub(super) fn record_with(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        pipelines: &[wgpu::RenderPipeline; 2],
        frame_group: &wgpu::BindGroup,
    ) {
        let window = self.record_window as u32;
        for (i, d) in self.plan.iter().enumerate() {
            let mesh = &self.meshes[d.mesh as usize];
            pass.set_pipeline(&pipelines[usize::from(mesh.joints_u16)]);
            pass.set_bind_group(0, frame_group, &[d.chunk * window]);
            pass.set_bind_group(1, &self.draw_group, &[(i as u64 * DRAW_UNIFORM_STRIDE) as u32]);
            pass.set_bind_group(2, &mesh.material, &[]);
            pass.set_vertex_buffer(0, mesh.vertices.slice(..));
            pass.set_index_buffer(mesh.indices.slice(..), mesh.index_format);
            pass.draw_indexed(
                d.first_index..d.first_index + d.index_count,
                0,
                d.first_instance..d.first_instance + d.instance_count,
            );
        }
    }
}

/// A prepared renderer's draws, whatever its palette format: for a pass that mixes renderers of several formats
/// (`&[&dyn DrawCrowd]`).
pub trait DrawCrowd {
    /// [`CrowdRenderer::render`].
    fn render(&self, pass: &mut wgpu::RenderPass<'_>);
    /// [`CrowdRenderer::render_depth_only`].
    fn render_depth_only(&self, pass: &mut wgpu::RenderPass<'_>);
}

impl<F: PaletteFormat + 'static> DrawCrowd for CrowdRenderer<F> {
    fn render(&self, pass: &mut wgpu::RenderPass<'_>) {
        CrowdRenderer::render(self, pass);
    }

    fn render_depth_only(&self, pass: &mut wgpu::RenderPass<'_>) {
        CrowdRenderer::render_depth_only(self, pass);
    }
}
