//! [`DeviceLimits`]: the one place where the limits a renderer keeps to are taken from the configured and the
//! device's `wgpu::Limits`, and [`dispatch_size`]: the one split of a long 1D dispatch into two dimensions.

/// Threads per workgroup of the per-slot compute passes (the cull's `classify` and `scatter`, the resident scatter):
/// `@workgroup_size(256)` in `crowd_cull.wgsl` and `resident_scatter.wgsl`, whose threads find their index from the
/// dispatch's own size (`@builtin(num_workgroups)`), so that the shaders hold no limit of their own.
pub(crate) const WORKGROUP: u32 = 256;

/// The largest dynamic offset window: dynamic offsets are `u32`, and windows start at multiples of 256.
const MAX_WINDOW: u64 = (u32::MAX as u64) / 256 * 256;

/// The limits a renderer keeps to: each the smaller of the configured and the device's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceLimits {
    /// `max_storage_buffer_binding_size`.
    pub(crate) binding: u64,
    /// `max_buffer_size`.
    pub(crate) buffer: u64,
    /// `max_compute_workgroups_per_dimension`.
    pub(crate) workgroups: u32,
    /// `max_storage_buffers_per_shader_stage`.
    pub(crate) storage_buffers: u32,
    /// `max_bind_groups`.
    pub(crate) bind_groups: u32,
    /// `max_texture_dimension_2d`.
    pub(crate) texture_2d: u32,
    /// `max_texture_array_layers`.
    pub(crate) texture_layers: u32,
}

impl DeviceLimits {
    /// The smaller of `config` and `device` for each limit.
    pub(crate) fn new(config: &wgpu::Limits, device: &wgpu::Limits) -> Self {
        Self {
            binding: config
                .max_storage_buffer_binding_size
                .min(device.max_storage_buffer_binding_size),
            buffer: config.max_buffer_size.min(device.max_buffer_size),
            workgroups: config
                .max_compute_workgroups_per_dimension
                .min(device.max_compute_workgroups_per_dimension),
            storage_buffers: config
                .max_storage_buffers_per_shader_stage
                .min(device.max_storage_buffers_per_shader_stage),
            bind_groups: config.max_bind_groups.min(device.max_bind_groups),
            texture_2d: config.max_texture_dimension_2d.min(device.max_texture_dimension_2d),
            texture_layers: config.max_texture_array_layers.min(device.max_texture_array_layers),
        }
    }

    /// The most bytes of a buffer that is bound whole as storage: within both `max_buffer_size` and the binding
    /// limit, in whole words.
    pub(crate) fn whole(&self) -> u64 {
        self.buffer.min(self.binding) / 4 * 4
    }

    /// The record window: the binding limit rounded down to 256 bytes (dynamic offsets are multiples of 256) and to
    /// what a `u32` dynamic offset reaches (a binding limit of 4 GiB or more, as Metal reports, would truncate).
    pub(crate) fn record_window(&self) -> u64 {
        self.binding.min(MAX_WINDOW) / 256 * 256
    }

    /// The bytes of a palette binding: the binding limit in whole words.
    pub(crate) fn palette_window(&self) -> u64 {
        self.binding / 4 * 4
    }

    /// The most threads a per-slot pass reaches: two dispatch dimensions of `workgroups` workgroups of
    /// [`WORKGROUP`] threads.
    pub(crate) fn max_threads(&self) -> u64 {
        u64::from(self.workgroups) * u64::from(self.workgroups) * u64::from(WORKGROUP)
    }
}

/// The workgroups `(x, y)` of a dispatch of `threads` threads in workgroups of [`WORKGROUP`], with at most `max` per
/// dimension: `x * y` workgroups cover the threads, and a shader's thread index is
/// `id.x + id.y * num_workgroups.x * WORKGROUP`. The caller keeps `threads` within [`DeviceLimits::max_threads`].
pub(crate) fn dispatch_size(threads: u32, max: u32) -> (u32, u32) {
    let groups = threads.div_ceil(WORKGROUP);
    let max = max.max(1);
    if groups <= max {
        (groups, 1)
    } else {
        (max, groups.div_ceil(max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatches_cover_every_thread_within_the_limit() {
        for (threads, max) in [
            (0, 65_535),
            (1, 65_535),
            (256, 65_535),
            (257, 65_535),
            (65_535 * 256, 65_535),
            (65_535 * 256 + 1, 65_535),
            (1_000_000, 100),
            (256 * 9, 3),
            (u32::MAX, 65_535),
        ] {
            let (x, y) = dispatch_size(threads, max);
            assert!(x <= max && y <= max, "{threads}, {max}: {x} x {y}");
            assert!(
                u64::from(x) * u64::from(y) * u64::from(WORKGROUP) >= u64::from(threads),
                "{threads}, {max}"
            );
            if threads > 0 {
                // No whole row of workgroups is spare.
                assert!(u64::from(x) * u64::from(y - 1) * u64::from(WORKGROUP) < u64::from(threads));
            }
        }
    }

    #[test]
    fn windows_fit_u32_offsets_and_binding_limits() {
        let mut limits = wgpu::Limits::default();
        for (binding, window) in [
            (128 << 20, 128 << 20),
            (1000, 768),
            (256, 256),
            (4 << 30, MAX_WINDOW),
            (8 << 30, MAX_WINDOW),
        ] {
            limits.max_storage_buffer_binding_size = binding;
            limits.max_buffer_size = 16 << 30;
            let l = DeviceLimits::new(&limits, &limits);
            assert_eq!(l.record_window(), window, "binding {binding}");
            assert!(l.record_window() <= u64::from(u32::MAX) && l.record_window().is_multiple_of(256));
        }
        limits.max_storage_buffer_binding_size = 1003;
        limits.max_buffer_size = 700;
        assert_eq!(DeviceLimits::new(&limits, &limits).whole(), 700);
        limits.max_buffer_size = 2000;
        assert_eq!(DeviceLimits::new(&limits, &limits).whole(), 1000);
    }
}
