//! Views of a [`CrowdRenderer`]: [`CrowdView`] (one camera's frame uniform, its cull state on the GPU-driven path,
//! and its bind groups), [`ViewDesc`] (what a frame's view is: a camera, perhaps levels taken from another view),
//! [`PreparedView`] (a view prepared for this frame, the only thing that draws), and [`DrawCrowd`], the draws of a
//! renderer of any palette format.
//!
//! Every draw goes through a view: [`CrowdRenderer::render_view`] records the packet's records (the CPU-culled
//! path's visible instances, the GPU-driven path's few unique ones) and, on the GPU-driven path, one indirect draw
//! per (mesh, LOD, tier). A prepared view borrows its [`CrowdView`] until it is dropped, so one view cannot be
//! prepared twice for passes that are then recorded together (the second camera would win in both): prepare, record
//! its pass, then prepare it again, or use a view per camera.

use crowd_cull::Tier;
use crowd_cull::limits::TIER_COUNT;
use crowd_frame::FrameCamera;
use skin_pack::PaletteFormat;

use super::bind_groups::{entire, frame_group, whole};
use super::{CrowdRenderer, Error, PlannedDraw, Result};
use crate::gpu_cull::{ARGS_SIZE, CullQueries, CullView};
use crate::pipeline_cache::TierPipelines;
use crate::uniforms::{DRAW_UNIFORM_STRIDE, FrameUniform};
use crate::upload::Uploads;

/// One view of a renderer's crowd: its camera's frame uniform, on the GPU-driven path its cull state (hysteresis,
/// visible lists, indirect arguments), and the bind groups and draw plan captured when it was last prepared. Make one
/// per camera that draws the crowd (main, each shadow cascade, a second viewport) with
/// [`CrowdRenderer::create_view`].
#[derive(Debug)]
pub struct CrowdView {
    renderer: u64,
    frame_uniform: wgpu::Buffer,
    cull: Option<CullView>,
    uploads: Uploads,
    /// What the draws read, captured at the last `prepare_view`.
    groups: Option<ViewGroups>,
    /// The record draws of the packet prepared before the last `prepare_view`.
    plan: Vec<PlannedDraw>,
}

/// The bind groups a view draws with, and what they were made for.
#[derive(Debug)]
struct ViewGroups {
    key: [u64; 8],
    frame: wgpu::BindGroup,
    /// The frame group of baked draws: the bake's entries as the pooled palettes.
    baked: Option<wgpu::BindGroup>,
    /// Group 3 of the GPU-driven draws.
    resident: Option<wgpu::BindGroup>,
    /// The record draws' uniforms.
    draws: wgpu::BindGroup,
    /// GPU-driven: the last packet's pose pool was live, and the renderer had a VAT.
    pose_pool: bool,
    vat: bool,
}

/// What a view is for one frame.
#[derive(Clone, Debug)]
pub struct ViewDesc<'a> {
    /// The camera (perspective or orthographic, wgpu's depth range).
    pub camera: FrameCamera,
    /// GPU-driven path: take each instance's LOD, tier and rate from this view (prepared earlier for this frame), as
    /// shadow views do, instead of from this view's camera; visibility is this view's own.
    pub lod_from: Option<&'a PreparedView<'a>>,
    /// Timestamps and statistics on the view's cull pass (GPU-driven path; none by default).
    pub cull_queries: CullQueries<'a>,
}

impl<'a> ViewDesc<'a> {
    /// A view of `camera` with its own levels and no queries.
    pub fn new(camera: FrameCamera) -> Self {
        Self {
            camera,
            lod_from: None,
            cull_queries: CullQueries::default(),
        }
    }

    /// A view of `camera` that takes its levels from `lead`.
    pub fn following(camera: FrameCamera, lead: &'a PreparedView<'a>) -> Self {
        Self {
            camera,
            lod_from: Some(lead),
            cull_queries: CullQueries::default(),
        }
    }
}

/// A view prepared for this frame ([`CrowdRenderer::prepare_view`]): what [`CrowdRenderer::render_view`] draws. It
/// borrows the view, so the view cannot be prepared again (for another camera) while this one may still be drawn.
/// One view may draw several cameras in one submission (shadow cascades): prepare, draw, drop, prepare again into
/// the same encoder after the pass. Preparing it again while the first camera's may still be drawn does not compile:
///
/// ```compile_fail,E0499
/// # use crowd_gpu::{CrowdRenderer, CrowdView, FrameCamera, ViewDesc, wgpu};
/// fn cascades(
///     r: &CrowdRenderer,
///     device: &wgpu::Device,
///     encoder: &mut wgpu::CommandEncoder,
///     pass: &mut wgpu::RenderPass<'_>,
///     view: &mut CrowdView,
///     near: FrameCamera,
///     far: FrameCamera,
/// ) -> crowd_gpu::Result<()> {
///     let first = r.prepare_view(device, encoder, view, ViewDesc::new(near))?;
///     let second = r.prepare_view(device, encoder, view, ViewDesc::new(far))?; // `view` is still borrowed
///     r.render_view(&first, pass);
///     r.render_view(&second, pass);
///     Ok(())
/// }
/// ```
#[derive(Debug)]
pub struct PreparedView<'v> {
    view: &'v CrowdView,
}

impl PreparedView<'_> {
    /// The view's cull state and output on the GPU-driven path (for readback in tests and tools).
    pub fn cull(&self) -> Option<&CullView> {
        self.view.cull.as_ref()
    }

    /// The draw calls [`CrowdRenderer::render_view`] records for this view: the record draws, plus the indirect
    /// draws on the GPU-driven path (meshes × LODs × tiers, each drawing what the cull found, possibly nothing).
    pub fn draw_calls(&self) -> u32 {
        self.view.plan.len() as u32 + self.view.cull.as_ref().map_or(0, CullView::draw_count)
    }
}

impl CrowdView {
    /// The view's cull state and output on the GPU-driven path (for readback in tests and tools).
    pub fn cull(&self) -> Option<&CullView> {
        self.cull.as_ref()
    }
}

impl<F: PaletteFormat + 'static> CrowdRenderer<F> {
    /// A new view of the crowd (GPU-driven path: its own cull state and indirect draws; either path: its own
    /// camera). On the GPU-driven path, make views after [`CrowdRenderer::enable_gpu_driven`].
    ///
    /// # Errors
    ///
    /// [`Error::Limit`] when the view's counters, draws or indirect arguments pass the storage binding limit or
    /// `max_buffer_size`.
    pub fn create_view(&self, device: &wgpu::Device) -> Result<CrowdView> {
        let frame_uniform = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("crowd view frame uniform"),
            size: size_of::<FrameUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let cull = match &self.gpu_driven {
            Some(g) => Some(g.culler.view(device, &g.draw_slots)?),
            None => None,
        };
        Ok(CrowdView {
            renderer: self.id,
            frame_uniform,
            cull,
            uploads: Uploads::new(4 << 10),
            groups: None,
            plan: Vec::new(),
        })
    }

    /// Prepares `view` for this frame with `desc`: records its frame uniform and, on the GPU-driven path, its cull pass
    /// over the resident instances into `encoder`, and captures what its draws read (the last prepared packet's
    /// buffers, bakes and record draws). Call it after `prepare`, and draw the returned view in a pass recorded after
    /// `encoder`'s commands.
    ///
    /// # Errors
    ///
    /// [`Error::ForeignView`] for a view of another renderer; [`Error::Camera`] for a camera that is not finite,
    /// [`Error::Cull`] for one that gives an invalid frustum; the culler's [`Error::Limit`]s. Nothing is recorded
    /// then.
    pub fn prepare_view<'v>(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        view: &'v mut CrowdView,
        desc: ViewDesc<'_>,
    ) -> Result<PreparedView<'v>> {
        if view.renderer != self.id {
            return Err(Error::ForeignView);
        }
        let camera = &desc.camera;
        if !camera.is_finite() {
            return Err(Error::Camera { what: "the view" });
        }
        let cull_camera = camera.cull_camera();
        cull_camera.validate()?;
        if let (Some(g), Some(cull)) = (&self.gpu_driven, view.cull.as_mut()) {
            let lead = desc.lod_from.and_then(|p| p.view.cull.as_ref());
            g.culler.cull(
                device,
                encoder,
                &g.resident,
                cull,
                &cull_camera,
                g.now,
                lead,
                desc.cull_queries,
            )?;
        }
        let frame = FrameUniform::new(camera.view_proj(), &self.lighting, self.joints, self.view);
        let mut staging = view.uploads.begin(device, encoder);
        staging.push(&view.frame_uniform, 0, bytemuck::bytes_of(&frame));
        staging.finish();
        view.plan.clear();
        view.plan.extend_from_slice(&self.plan);
        let key = self.view_key(view);
        if view.groups.as_ref().is_none_or(|g| g.key != key) {
            view.groups = Some(self.view_groups(device, view, key));
        }
        Ok(PreparedView { view })
    }

    /// What a view's bind groups depend on: every buffer's generation.
    fn view_key(&self, view: &CrowdView) -> [u64; 8] {
        let g = self.gpu_driven.as_ref();
        [
            self.records.generation,
            self.pool.generation,
            self.unique.generation,
            self.draw_uniforms.generation,
            g.map_or(0, |g| g.generation),
            g.map_or(0, |g| g.resident.generation()),
            view.cull.as_ref().map_or(0, CullView::generation),
            // The last packet's pose pool and the VAT decide the pipelines; they are captured with the groups.
            g.map_or(0, |g| u64::from(g.pose_pool) | u64::from(g.vat.is_some()) << 1),
        ]
    }

    fn view_groups(&self, device: &wgpu::Device, view: &CrowdView, key: [u64; 8]) -> ViewGroups {
        let layouts = self.cache.layouts();
        let palette_window = self.limits.palette_window();
        let frame = frame_group(
            device,
            &layouts.frame,
            &view.frame_uniform,
            &self.records,
            whole(&self.pool, palette_window),
            whole(&self.unique, palette_window),
        );
        let g = self.gpu_driven.as_ref();
        let baked = g.and_then(|g| g.bat.as_ref()).map(|bat| {
            frame_group(
                device,
                &layouts.frame,
                &view.frame_uniform,
                &self.records,
                bat.entries.as_entire_binding(),
                whole(&self.unique, palette_window),
            )
        });
        let resident = match (g, &view.cull) {
            (Some(g), Some(cull)) => Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("crowd GPU-driven"),
                layout: &layouts.resident,
                entries: &[
                    entire(0, &g.gpu_frame),
                    entire(1, cull.visible_buffer()),
                    entire(2, cull.counts_buffer()),
                    entire(3, g.resident.buffer()),
                    entire(4, &g.clips),
                    entire(5, g.bat.as_ref().map_or(&g.no_bat_clips, |b| &b.clips)),
                    entire(6, g.vat.as_ref().map_or(&g.no_vat.uniform, |v| &v.uniform)),
                    wgpu::BindGroupEntry {
                        binding: 7,
                        resource: wgpu::BindingResource::TextureView(
                            g.vat.as_ref().map_or(&g.no_vat.plane, |v| &v.planes[0]),
                        ),
                    },
                    wgpu::BindGroupEntry {
                        binding: 8,
                        resource: wgpu::BindingResource::TextureView(
                            g.vat.as_ref().map_or(&g.no_vat.plane, |v| &v.planes[1]),
                        ),
                    },
                ],
            })),
            _ => None,
        };
        ViewGroups {
            key,
            frame,
            baked,
            resident,
            draws: super::bind_groups::draw_group(device, &layouts.draw, &self.draw_uniforms.buffer),
            pose_pool: g.is_none_or(|g| g.pose_pool),
            vat: g.is_some_and(|g| g.vat.is_some()),
        }
    }

    /// Records `view`'s draws into `pass` (attachments of the configured formats): the prepared packet's records
    /// (the unique instances on the GPU-driven path, every visible instance on the CPU-culled path) with the view's
    /// camera, then on the GPU-driven path one indirect draw per (mesh, LOD, tier).
    pub fn render_view(&self, view: &PreparedView<'_>, pass: &mut wgpu::RenderPass<'_>) {
        self.render_view_with(view.view, pass, false);
    }

    /// Records `view`'s draws as [`CrowdRenderer::render_view`] does, with the depth-only entry points (the same
    /// skinning, or the same baked vertices, and no fragment stage): for a pass with only a depth attachment of
    /// the configured depth format, such as a shadow map's. Draws nothing when the renderer has no depth format.
    pub fn render_view_depth_only(&self, view: &PreparedView<'_>, pass: &mut wgpu::RenderPass<'_>) {
        self.render_view_with(view.view, pass, true);
    }

    fn render_view_with(&self, view: &CrowdView, pass: &mut wgpu::RenderPass<'_>, depth_only: bool) {
        let Some(groups) = &view.groups else {
            return;
        };
        if view.renderer != self.id {
            return;
        }
        let records = if depth_only {
            self.pipelines.records_depth.as_ref()
        } else {
            Some(&self.pipelines.records)
        };
        let Some(records) = records else {
            return;
        };
        let window = self.limits.record_window() as u32;
        for (i, d) in view.plan.iter().enumerate() {
            let mesh = &self.meshes[d.mesh as usize];
            pass.set_pipeline(&records[usize::from(mesh.joints_u16)]);
            pass.set_bind_group(0, &groups.frame, &[d.chunk * window]);
            pass.set_bind_group(1, &groups.draws, &[(i as u64 * DRAW_UNIFORM_STRIDE) as u32]);
            pass.set_bind_group(2, &mesh.material, &[]);
            pass.set_vertex_buffer(0, mesh.vertices.slice(..));
            pass.set_index_buffer(mesh.indices.slice(..), mesh.index_format);
            pass.draw_indexed(
                d.first_index..d.first_index + d.index_count,
                0,
                d.first_instance..d.first_instance + d.instance_count,
            );
        }
        let (Some(g), Some(resident), Some(cull)) = (&self.gpu_driven, &groups.resident, &view.cull) else {
            return;
        };
        let (colour, depth) = self.cache.driven(self.key, &self.pipelines);
        let pipelines: &TierPipelines = if depth_only {
            let Some(depth) = depth else {
                return;
            };
            depth
        } else {
            colour
        };
        pass.set_bind_group(3, resident, &[]);
        for (i, &m) in g.draw_mesh.iter().enumerate() {
            let mesh = &self.meshes[m as usize];
            // The baked and VAT tiers draw from their bakes when there are, from the pose pool otherwise; without a
            // pose pool, the unique tier's GPU-drawn overflow and the pooled tier draw from the bone-animation bake.
            let tier = g.draw_slots[i].bucket % TIER_COUNT as u32;
            let joints = usize::from(mesh.joints_u16);
            match (&groups.baked, tier) {
                (Some(baked), _) if draws_from_bake(tier, groups.pose_pool) => {
                    pass.set_bind_group(0, baked, &[0]);
                    pass.set_pipeline(&pipelines.baked[joints]);
                }
                (_, t) if t == Tier::Vat as u32 && groups.vat => {
                    pass.set_bind_group(0, &groups.frame, &[0]);
                    pass.set_pipeline(&pipelines.vat[joints]);
                }
                _ => {
                    pass.set_bind_group(0, &groups.frame, &[0]);
                    pass.set_pipeline(&pipelines.pooled[joints]);
                }
            }
            pass.set_bind_group(1, &g.draw_group, &[(i as u64 * DRAW_UNIFORM_STRIDE) as u32]);
            pass.set_bind_group(2, &mesh.material, &[]);
            pass.set_vertex_buffer(0, mesh.vertices.slice(..));
            pass.set_index_buffer(mesh.indices.slice(..), mesh.index_format);
            pass.draw_indexed_indirect(cull.args_buffer(), i as u64 * ARGS_SIZE);
        }
    }
}

/// Whether a bucket of `tier` draws from the bone-animation bake (when the renderer has one).
fn draws_from_bake(tier: u32, pose_pool: bool) -> bool {
    tier == Tier::Baked as u32 || (!pose_pool && tier <= Tier::Pooled as u32)
}

/// A prepared renderer's draws, whatever its palette format: for a pass that mixes renderers of several formats
/// (`&[&dyn DrawCrowd]`), each with its own prepared view.
pub trait DrawCrowd {
    /// [`CrowdRenderer::render_view`].
    fn render_view(&self, view: &PreparedView<'_>, pass: &mut wgpu::RenderPass<'_>);
    /// [`CrowdRenderer::render_view_depth_only`].
    fn render_view_depth_only(&self, view: &PreparedView<'_>, pass: &mut wgpu::RenderPass<'_>);
}

impl<F: PaletteFormat + 'static> DrawCrowd for CrowdRenderer<F> {
    fn render_view(&self, view: &PreparedView<'_>, pass: &mut wgpu::RenderPass<'_>) {
        CrowdRenderer::render_view(self, view, pass);
    }

    fn render_view_depth_only(&self, view: &PreparedView<'_>, pass: &mut wgpu::RenderPass<'_>) {
        CrowdRenderer::render_view_depth_only(self, view, pass);
    }
}
