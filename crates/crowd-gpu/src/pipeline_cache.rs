//! [`PipelineCache`]: every layout, shader module and pipeline of the crowd renderers, made once per device and
//! shared by every renderer, culler and resident buffer made with it (two characters, or two crowds of one, compile
//! nothing twice). Render pipelines are keyed by the palette format and the pass they draw into (colour and depth
//! formats, depth test and writes, samples); the compute pipelines are the same for every renderer.

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crowd_mesh::PaletteKind;

use crate::gpu_cull::CullViewUniform;
use crate::gpu_mesh::{VERTEX_STRIDE_U8, VERTEX_STRIDE_U16, vertex_attributes};
use crate::renderer::RendererConfig;
use crate::renderer::vat::VAT_UNIFORM_SIZE;
use crate::shaders::{self, ShaderSource};
use crate::uniforms::{DrawUniform, FrameUniform, GpuFrameUniform};

/// The layouts, shader modules and pipelines of the crowd renderers on one device. Cheap to clone (an `Arc`); make
/// one per device and give it to every [`CrowdRenderer`](crate::CrowdRenderer) on that device.
#[derive(Clone, Debug)]
pub struct PipelineCache {
    inner: Arc<Inner>,
}

/// What a [`PipelineCache`] has compiled so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Render pipelines made.
    pub render_pipelines: u32,
    /// Compute pipelines made.
    pub compute_pipelines: u32,
    /// Shader modules made.
    pub shader_modules: u32,
}

#[derive(Debug)]
struct Inner {
    device: wgpu::Device,
    layouts: Layouts,
    skin_modules: Mutex<HashMap<PaletteKind, wgpu::ShaderModule>>,
    draws: Mutex<HashMap<DrawKey, Arc<DrawPipelines>>>,
    cull: OnceLock<CullPipelines>,
    scatter: OnceLock<wgpu::ComputePipeline>,
    render_count: AtomicU32,
    compute_count: AtomicU32,
    module_count: AtomicU32,
}

/// The bind group layouts of the renderers' shaders.
#[derive(Debug)]
pub(crate) struct Layouts {
    /// Group 0 of the draws: frame uniform, record window, pooled and unique palettes.
    pub(crate) frame: wgpu::BindGroupLayout,
    /// Group 1: one draw's uniform, at a dynamic offset.
    pub(crate) draw: wgpu::BindGroupLayout,
    /// Group 2: the mesh's material.
    pub(crate) material: wgpu::BindGroupLayout,
    /// Group 3 of the GPU-driven draws: clock, visible list, counters, resident instances, clips, bakes.
    pub(crate) resident: wgpu::BindGroupLayout,
    /// The cull pass's one group.
    pub(crate) cull: wgpu::BindGroupLayout,
    /// The resident scatter pass's one group.
    pub(crate) scatter: wgpu::BindGroupLayout,
    /// Groups 0 to 2.
    records_pipeline: wgpu::PipelineLayout,
    /// Groups 0 to 3.
    driven_pipeline: wgpu::PipelineLayout,
}

/// What a render pipeline depends on besides its entry point: the palette format and the pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DrawKey {
    pub(crate) kind: PaletteKind,
    pub(crate) color: wgpu::TextureFormat,
    pub(crate) depth: Option<wgpu::TextureFormat>,
    pub(crate) compare: wgpu::CompareFunction,
    pub(crate) depth_write: bool,
    pub(crate) samples: u32,
}

impl DrawKey {
    pub(crate) fn new(kind: PaletteKind, config: &RendererConfig) -> Self {
        Self {
            kind,
            color: config.color_format,
            depth: config.depth_format,
            compare: config.depth_compare,
            depth_write: config.depth_write,
            samples: config.sample_count,
        }
    }
}

/// The render pipelines of one [`DrawKey`], for u8 and u16 joints: the record draws (both paths), their depth-only
/// twins, and the GPU-driven tier draws (made when a renderer first enables the GPU-driven path).
#[derive(Debug)]
pub(crate) struct DrawPipelines {
    pub(crate) records: [wgpu::RenderPipeline; 2],
    pub(crate) records_depth: Option<[wgpu::RenderPipeline; 2]>,
    driven: OnceLock<(TierPipelines, Option<TierPipelines>)>,
}

/// The pipelines of the GPU-driven indirect draws, for u8 and u16 joints: the pose pool's (`vs_resident_*`), a
/// bone-animation bake's (`vs_baked_*`) and a vertex-animation bake's (`vs_vat`).
#[derive(Debug)]
pub(crate) struct TierPipelines {
    pub(crate) pooled: [wgpu::RenderPipeline; 2],
    pub(crate) baked: [wgpu::RenderPipeline; 2],
    pub(crate) vat: [wgpu::RenderPipeline; 2],
}

/// The three dispatches of `crowd_cull.wgsl`.
#[derive(Debug)]
pub(crate) struct CullPipelines {
    pub(crate) classify: wgpu::ComputePipeline,
    pub(crate) place: wgpu::ComputePipeline,
    pub(crate) scatter: wgpu::ComputePipeline,
}

impl PipelineCache {
    /// A cache for `device`: its bind group layouts now, shader modules and pipelines when first asked for.
    pub fn new(device: &wgpu::Device) -> Self {
        Self {
            inner: Arc::new(Inner {
                device: device.clone(),
                layouts: Layouts::new(device),
                skin_modules: Mutex::default(),
                draws: Mutex::default(),
                cull: OnceLock::new(),
                scatter: OnceLock::new(),
                render_count: AtomicU32::new(0),
                compute_count: AtomicU32::new(0),
                module_count: AtomicU32::new(0),
            }),
        }
    }

    /// What the cache has compiled so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            render_pipelines: self.inner.render_count.load(Ordering::Relaxed),
            compute_pipelines: self.inner.compute_count.load(Ordering::Relaxed),
            shader_modules: self.inner.module_count.load(Ordering::Relaxed),
        }
    }

    /// True when the cache was made for `device`.
    pub(crate) fn is_for(&self, device: &wgpu::Device) -> bool {
        self.inner.device == *device
    }

    pub(crate) fn layouts(&self) -> &Layouts {
        &self.inner.layouts
    }

    /// The record draws' pipelines of `key` (and the depth-only ones with a depth format).
    pub(crate) fn draws(&self, key: DrawKey) -> Arc<DrawPipelines> {
        let mut draws = self.inner.draws.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = draws.get(&key) {
            return p.clone();
        }
        let module = self.skin_module(key.kind);
        let layout = &self.inner.layouts.records_pipeline;
        let pipeline = |joints_u16: bool, depth_only: bool| {
            let entry = match (depth_only, joints_u16) {
                (false, false) => "vs_joints_u8",
                (false, true) => "vs_joints_u16",
                (true, false) => "vs_depth_joints_u8",
                (true, true) => "vs_depth_joints_u16",
            };
            self.skin_pipeline(&module, key, layout, entry, joints_u16, depth_only)
        };
        let made = Arc::new(DrawPipelines {
            records: [pipeline(false, false), pipeline(true, false)],
            records_depth: key.depth.map(|_| [pipeline(false, true), pipeline(true, true)]),
            driven: OnceLock::new(),
        });
        draws.insert(key, made.clone());
        made
    }

    /// The GPU-driven tier pipelines of `key`, colour and (with a depth format) depth-only.
    pub(crate) fn driven<'p>(
        &self,
        key: DrawKey,
        draws: &'p DrawPipelines,
    ) -> &'p (TierPipelines, Option<TierPipelines>) {
        draws.driven.get_or_init(|| {
            let module = self.skin_module(key.kind);
            let layout = &self.inner.layouts.driven_pipeline;
            let tiers = |depth_only: bool| {
                let pipeline =
                    |entry: &str, u16: bool| self.skin_pipeline(&module, key, layout, entry, u16, depth_only);
                TierPipelines {
                    pooled: [
                        pipeline("vs_resident_joints_u8", false),
                        pipeline("vs_resident_joints_u16", true),
                    ],
                    baked: [
                        pipeline("vs_baked_joints_u8", false),
                        pipeline("vs_baked_joints_u16", true),
                    ],
                    vat: [pipeline("vs_vat", false), pipeline("vs_vat", true)],
                }
            };
            (tiers(false), key.depth.map(|_| tiers(true)))
        })
    }

    /// The cull pass's pipelines.
    pub(crate) fn cull(&self) -> &CullPipelines {
        self.inner.cull.get_or_init(|| {
            let device = &self.inner.device;
            let module = self.module(&shaders::CROWD_CULL, shaders::CROWD_CULL.composed());
            let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("crowd cull"),
                bind_group_layouts: &[Some(&self.inner.layouts.cull)],
                immediate_size: 0,
            });
            CullPipelines {
                classify: self.compute(&module, &layout, "classify"),
                place: self.compute(&module, &layout, "place"),
                scatter: self.compute(&module, &layout, "scatter"),
            }
        })
    }

    /// The resident scatter pass's pipeline.
    pub(crate) fn scatter(&self) -> &wgpu::ComputePipeline {
        self.inner.scatter.get_or_init(|| {
            let module = self.module(&shaders::RESIDENT_SCATTER, shaders::RESIDENT_SCATTER.composed());
            let layout = self
                .inner
                .device
                .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: Some("crowd resident scatter"),
                    bind_group_layouts: &[Some(&self.inner.layouts.scatter)],
                    immediate_size: 0,
                });
            self.compute(&module, &layout, "scatter_resident")
        })
    }

    fn module(&self, file: &ShaderSource, source: String) -> wgpu::ShaderModule {
        self.inner.module_count.fetch_add(1, Ordering::Relaxed);
        self.inner.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(file.file),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        })
    }

    /// The skinning module composed with `kind`'s palette fetch.
    fn skin_module(&self, kind: PaletteKind) -> wgpu::ShaderModule {
        let mut modules = self.inner.skin_modules.lock().unwrap_or_else(PoisonError::into_inner);
        modules
            .entry(kind)
            .or_insert_with(|| self.module(&shaders::CROWD_SKIN, shaders::crowd_skin_source(palette_fetch(kind))))
            .clone()
    }

    fn compute(
        &self,
        module: &wgpu::ShaderModule,
        layout: &wgpu::PipelineLayout,
        entry: &str,
    ) -> wgpu::ComputePipeline {
        self.inner.compute_count.fetch_add(1, Ordering::Relaxed);
        self.inner
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(layout),
                module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
    }

    /// One skinned render pipeline of `module` with vertex entry point `entry` (u8 or u16 joints), colour and
    /// depth as `key` says, or depth only.
    fn skin_pipeline(
        &self,
        module: &wgpu::ShaderModule,
        key: DrawKey,
        layout: &wgpu::PipelineLayout,
        entry: &str,
        joints_u16: bool,
        depth_only: bool,
    ) -> wgpu::RenderPipeline {
        self.inner.render_count.fetch_add(1, Ordering::Relaxed);
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
        draw_pipeline(
            &self.inner.device,
            module,
            &PassState::of(key),
            layout,
            entry,
            vertices,
            depth_only,
        )
    }
}

/// The pass a render pipeline draws into.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PassState {
    pub(crate) color: wgpu::TextureFormat,
    pub(crate) depth: Option<wgpu::TextureFormat>,
    pub(crate) compare: wgpu::CompareFunction,
    pub(crate) depth_write: bool,
    pub(crate) samples: u32,
}

impl PassState {
    fn of(key: DrawKey) -> Self {
        Self {
            color: key.color,
            depth: key.depth,
            compare: key.compare,
            depth_write: key.depth_write,
            samples: key.samples,
        }
    }

    pub(crate) fn of_config(config: &RendererConfig) -> Self {
        Self {
            color: config.color_format,
            depth: config.depth_format,
            compare: config.depth_compare,
            depth_write: config.depth_write,
            samples: config.sample_count,
        }
    }
}

/// The palette fetch file that reads `kind`'s entries.
fn palette_fetch(kind: PaletteKind) -> &'static ShaderSource {
    match kind {
        PaletteKind::F32 => &shaders::PALETTE_FETCH_F32,
        PaletteKind::Mat3x4F16 => &shaders::PALETTE_FETCH_MAT3X4_F16,
        PaletteKind::QtF16 => &shaders::PALETTE_FETCH_QT_F16,
    }
}

/// A render pipeline of the renderers' draws: vertex entry point `entry` reading one vertex buffer of `vertices`,
/// triangle lists drawn two-sided (glTF meshes may be open or mirrored; the fragment shaders flip back faces),
/// colour (`fs_main`), depth and samples as `pass` says, or depth only (no fragment stage).
pub(crate) fn draw_pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    pass: &PassState,
    layout: &wgpu::PipelineLayout,
    entry: &str,
    vertices: wgpu::VertexBufferLayout<'_>,
    depth_only: bool,
) -> wgpu::RenderPipeline {
    let targets = [Some(wgpu::ColorTargetState {
        format: pass.color,
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
        depth_stencil: pass.depth.map(|format| wgpu::DepthStencilState {
            format,
            depth_write_enabled: Some(pass.depth_write),
            depth_compare: Some(pass.compare),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: wgpu::MultisampleState {
            count: pass.samples,
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

/// A vertex-stage storage buffer entry of a bind group layout, read only, at least `min` bytes.
pub(crate) fn storage_entry(binding: u32, dynamic: bool, min: u64) -> wgpu::BindGroupLayoutEntry {
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

/// A vertex- and fragment-stage uniform entry of `size` bytes.
pub(crate) fn uniform_entry(binding: u32, dynamic: bool, size: u64) -> wgpu::BindGroupLayoutEntry {
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

/// A compute-stage storage-buffer entry of a bind group layout.
pub(crate) fn compute_storage(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A compute-stage uniform entry of `size` bytes.
fn compute_uniform(binding: u32, size: u64) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: NonZeroU64::new(size),
        },
        count: None,
    }
}

/// A VAT plane of group 3: an unsigned-integer 2D array texture read with `textureLoad`.
fn vat_plane_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Uint,
            view_dimension: wgpu::TextureViewDimension::D2Array,
            multisampled: false,
        },
        count: None,
    }
}

impl Layouts {
    fn new(device: &wgpu::Device) -> Self {
        let layout = |label, entries: &[wgpu::BindGroupLayoutEntry]| {
            device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(label),
                entries,
            })
        };
        // Palette entries are 16 (QtF16) to 48 (f32) bytes: one layout serves every format, its palette bindings
        // checked against the shader's entry size when they are drawn (every palette buffer is at least 256 bytes).
        let frame = layout(
            "crowd frame",
            &[
                uniform_entry(0, false, size_of::<FrameUniform>() as u64),
                storage_entry(1, true, crowd_frame::INSTANCE_RECORD_SIZE as u64),
                storage_entry(2, false, 0),
                storage_entry(3, false, 0),
            ],
        );
        let draw = layout("crowd draw", &[uniform_entry(0, true, size_of::<DrawUniform>() as u64)]);
        let material = layout(
            "crowd material",
            &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        );
        let resident = layout(
            "crowd GPU-driven",
            &[
                uniform_entry(0, false, size_of::<GpuFrameUniform>() as u64),
                storage_entry(1, false, 4),
                storage_entry(2, false, 4),
                storage_entry(3, false, crowd_frame::RESIDENT_INSTANCE_SIZE as u64),
                storage_entry(4, false, size_of::<crowd_frame::ResidentClip>() as u64),
                storage_entry(5, false, bake_format::CLIP_RECORD_SIZE as u64),
                wgpu::BindGroupLayoutEntry {
                    binding: 6,
                    visibility: wgpu::ShaderStages::VERTEX,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: NonZeroU64::new(VAT_UNIFORM_SIZE),
                    },
                    count: None,
                },
                vat_plane_entry(7),
                vat_plane_entry(8),
            ],
        );
        let cull = layout(
            "crowd cull",
            &[
                compute_uniform(0, size_of::<CullViewUniform>() as u64),
                compute_storage(1, true),
                compute_storage(2, true),
                compute_storage(3, false),
                compute_storage(4, false),
                compute_storage(5, false),
                compute_storage(6, true),
                compute_storage(7, false),
                compute_storage(8, true),
            ],
        );
        let scatter = layout(
            "crowd resident scatter",
            &[
                compute_uniform(0, 16),
                compute_storage(1, true),
                compute_storage(2, true),
                compute_storage(3, false),
                compute_storage(4, false),
            ],
        );
        let records_pipeline = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("crowd"),
            bind_group_layouts: &[Some(&frame), Some(&draw), Some(&material)],
            immediate_size: 0,
        });
        let driven_pipeline = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("crowd GPU-driven"),
            bind_group_layouts: &[Some(&frame), Some(&draw), Some(&material), Some(&resident)],
            immediate_size: 0,
        });
        Self {
            frame,
            draw,
            material,
            resident,
            cull,
            scatter,
            records_pipeline,
            driven_pipeline,
        }
    }
}
