//! [`RendererConfig`]: the pass a [`CrowdRenderer`](super::CrowdRenderer) draws into (formats, depth test,
//! samples) and the limits it keeps to.

/// How a [`CrowdRenderer`](super::CrowdRenderer) is built: the pass it draws into and the limits it keeps to. (The
/// palette format is the renderer's type parameter, the same as its packets': it is chosen once.)
#[derive(Clone, Debug)]
pub struct RendererConfig {
    /// The colour attachment's format.
    pub color_format: wgpu::TextureFormat,
    /// The depth attachment's format (`None`: no depth test, and no depth-only pipelines).
    pub depth_format: Option<wgpu::TextureFormat>,
    /// The limits to respect, at most the device's (each is taken as the smaller of the two). A smaller
    /// `max_storage_buffer_binding_size` splits the records into more chunks.
    pub limits: wgpu::Limits,
    /// The depth test (with a depth format). [`RendererConfig::DEFAULT_DEPTH_COMPARE`] is `Less`; an engine with
    /// reversed-Z depth gives `Greater`.
    pub depth_compare: wgpu::CompareFunction,
    /// Whether the draws write depth (with a depth format); `true` by default.
    pub depth_write: bool,
    /// The colour and depth attachments' MSAA sample count (1, 2, 4 as the device and formats allow).
    pub sample_count: u32,
    /// What the adapter can do beyond the WebGPU baseline's limits (`adapter.get_downlevel_capabilities().flags`):
    /// the GPU-driven path needs compute shaders, indirect execution and storage buffers in vertex shaders
    /// ([`RenderPath::choose`](super::RenderPath::choose)).
    pub downlevel: wgpu::DownlevelFlags,
}

impl RendererConfig {
    /// The default depth test: `Less`, with depth cleared to 1.
    pub const DEFAULT_DEPTH_COMPARE: wgpu::CompareFunction = wgpu::CompareFunction::Less;

    /// A configuration for passes of `color_format` and `depth_format` within `limits`, on an adapter that can do
    /// `downlevel`: depth test `Less` with writes, no MSAA.
    pub fn new(
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        limits: wgpu::Limits,
        downlevel: wgpu::DownlevelFlags,
    ) -> Self {
        Self {
            color_format,
            depth_format,
            limits,
            depth_compare: Self::DEFAULT_DEPTH_COMPARE,
            depth_write: true,
            sample_count: 1,
            downlevel,
        }
    }

    /// [`RendererConfig::new`] with `device`'s limits and `adapter`'s downlevel flags.
    pub fn for_device(
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
    ) -> Self {
        Self::new(
            color_format,
            depth_format,
            device.limits(),
            adapter.get_downlevel_capabilities().flags,
        )
    }
}
