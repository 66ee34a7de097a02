//! [`Gpu`]: a wgpu instance, adapter, device and queue opened without a window.

use crate::{Error, Result};

/// A device and queue with no surface, and what the adapter is.
#[derive(Debug)]
pub struct Gpu {
    /// The instance the adapter came from.
    pub instance: wgpu::Instance,
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter's name, backend and device type (`Cpu` for lavapipe).
    pub info: wgpu::AdapterInfo,
}

impl Gpu {
    /// Opens the default adapter (the `WGPU_BACKEND`, `WGPU_ADAPTER_NAME` and other environment variables of
    /// `wgpu::InstanceDescriptor::with_env` apply) and a device with `limits`, or with the adapter's own limits
    /// when `None`. Returns `Ok(None)` when there is no adapter at all.
    ///
    /// # Errors
    ///
    /// [`Error::RequestDevice`] when the adapter refuses the device (for example, limits above its own).
    pub fn open(limits: Option<wgpu::Limits>) -> Result<Option<Self>> {
        Self::open_with(limits, wgpu::Features::empty())
    }

    /// As [`Gpu::open`], also enabling those of `optional` features that the adapter has (for example
    /// `TIMESTAMP_QUERY` for GPU timings); `device.features()` says which it got.
    ///
    /// # Errors
    ///
    /// As [`Gpu::open`].
    pub fn open_with(limits: Option<wgpu::Limits>, optional: wgpu::Features) -> Result<Option<Self>> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let Ok(adapter) = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())) else {
            return Ok(None);
        };
        let info = adapter.get_info();
        let required_limits = limits.unwrap_or_else(|| adapter.limits());
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("crowd-gpu headless"),
            required_features: optional & adapter.features(),
            required_limits,
            ..Default::default()
        }))
        .map_err(|source| Error::RequestDevice {
            adapter: info.name.clone(),
            source,
        })?;
        Ok(Some(Self {
            instance,
            adapter,
            device,
            queue,
            info,
        }))
    }
}
