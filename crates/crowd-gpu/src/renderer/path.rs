//! [`RenderPath`]: which path a renderer draws with, chosen from what the adapter can do (its downlevel flags) and
//! the limits.

use super::RendererConfig;
use super::gpu_driven::GPU_DRIVEN_STORAGE_BUFFERS;

/// Which path a renderer draws with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderPath {
    /// The CPU culls and packs a record per visible instance (every adapter wgpu runs skinning on).
    CpuCulled,
    /// The instances live on the GPU, a compute pass culls them per view, and indirect draws draw them.
    GpuDriven,
}

/// The downlevel flags the GPU-driven path needs: the cull is a compute pass, its draws are indirect, and its vertex
/// shaders read the resident instances and the visible lists from storage buffers. OpenGL ES and WebGL lack some.
pub const GPU_DRIVEN_DOWNLEVEL: wgpu::DownlevelFlags = wgpu::DownlevelFlags::COMPUTE_SHADERS
    .union(wgpu::DownlevelFlags::INDIRECT_EXECUTION)
    .union(wgpu::DownlevelFlags::VERTEX_STORAGE);

impl RenderPath {
    /// The path an adapter with `downlevel` flags and `limits` allows: GPU-driven when it has every flag of
    /// [`GPU_DRIVEN_DOWNLEVEL`], [`GPU_DRIVEN_STORAGE_BUFFERS`] storage buffers per stage (the cull pass and the
    /// GPU-driven vertex stage) and 256 invocations per workgroup; CPU-culled otherwise.
    pub fn choose(downlevel: wgpu::DownlevelFlags, limits: &wgpu::Limits) -> Self {
        if downlevel.contains(GPU_DRIVEN_DOWNLEVEL)
            && limits.max_storage_buffers_per_shader_stage >= GPU_DRIVEN_STORAGE_BUFFERS
            && limits.max_compute_workgroups_per_dimension >= 1
            && limits.max_compute_invocations_per_workgroup >= crate::limits::WORKGROUP
            && limits.max_compute_workgroup_size_x >= crate::limits::WORKGROUP
        {
            Self::GpuDriven
        } else {
            Self::CpuCulled
        }
    }

    /// The path a renderer of `config` can take on `device`: [`RenderPath::choose`] with the config's downlevel
    /// flags and the smaller of its limits and the device's.
    pub fn for_config(device: &wgpu::Device, config: &RendererConfig) -> Self {
        let limits = config.limits.clone().or_worse_values_from(&device.limits());
        Self::choose(config.downlevel, &limits)
    }

    /// A name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Self::CpuCulled => "CPU-culled",
            Self::GpuDriven => "GPU-driven",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_needs_every_capability() {
        let limits = wgpu::Limits::default();
        assert_eq!(
            RenderPath::choose(wgpu::DownlevelFlags::all(), &limits),
            RenderPath::GpuDriven
        );
        for missing in [
            wgpu::DownlevelFlags::COMPUTE_SHADERS,
            wgpu::DownlevelFlags::INDIRECT_EXECUTION,
            wgpu::DownlevelFlags::VERTEX_STORAGE,
        ] {
            assert_eq!(
                RenderPath::choose(wgpu::DownlevelFlags::all() - missing, &limits),
                RenderPath::CpuCulled,
                "without {missing:?}"
            );
        }
        // What wgpu reports for OpenGL ES 3.0 and WebGL 2.
        let gles = wgpu::Limits::downlevel_webgl2_defaults();
        assert_eq!(
            RenderPath::choose(wgpu::DownlevelFlags::empty(), &gles),
            RenderPath::CpuCulled
        );
        for (name, limits) in [
            (
                "storage buffers",
                wgpu::Limits {
                    max_storage_buffers_per_shader_stage: GPU_DRIVEN_STORAGE_BUFFERS - 1,
                    ..wgpu::Limits::default()
                },
            ),
            (
                "workgroups",
                wgpu::Limits {
                    max_compute_workgroups_per_dimension: 0,
                    ..wgpu::Limits::default()
                },
            ),
            (
                "invocations",
                wgpu::Limits {
                    max_compute_invocations_per_workgroup: 128,
                    ..wgpu::Limits::default()
                },
            ),
        ] {
            assert_eq!(
                RenderPath::choose(wgpu::DownlevelFlags::all(), &limits),
                RenderPath::CpuCulled,
                "{name}"
            );
        }
    }
}
