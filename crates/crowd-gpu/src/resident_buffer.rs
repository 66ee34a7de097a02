//! [`ResidentBuffer`]: the GPU-driven path's instances on the device, one [`ResidentInstance`] per slot of the
//! store, in slot order, changed only where a frame says.
//!
//! Beside each slot's state it keeps the slot's [`ResidentOwner`] (the instance's handle), which keys every view's
//! hysteresis state (`CullView`).
//!
//! A frame's changes travel packed: the CPU writes the changed states and their slots and owners into two staging
//! buffers (two `write_buffer` calls, whatever the number of changes), and a compute pass
//! (`shaders/resident_scatter.wgsl`) writes each to its slot. So the upload's CPU cost grows with the changes, never with the crowd, and the number
//! of wgpu calls is fixed.

use std::num::NonZeroU64;
use std::ops::Range;

use bytemuck::{Pod, Zeroable};
use crowd_frame::{RESIDENT_INSTANCE_SIZE, ResidentInstance, ResidentOwner};

use crate::gpu_cull::storage;
use crate::grow_buffer::GrowBuffer;
use crate::shaders;
use crate::{Error, Result};

/// Threads per workgroup of the scatter pass.
const SCATTER_WORKGROUP: u32 = 256;

/// One change's slot and owner: the twin of `SlotUpdate` in `shaders/resident_scatter.wgsl`.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
struct SlotUpdate {
    slot: u32,
    owner: ResidentOwner,
}

/// Bytes of a slot's owner.
const OWNER_SIZE: u64 = size_of::<ResidentOwner>() as u64;

#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
#[repr(C)]
struct ScatterParams {
    count: u32,
    pad: [u32; 3],
}

/// The resident instances on the device: one [`ResidentInstance`] and one [`ResidentOwner`] per slot of the
/// store, in slot order.
///
/// It grows by doubling within `max_buffer_size` and `max_storage_buffer_binding_size` (it is bound whole); a
/// growth keeps every slot (a GPU copy) and gives the new slots [`ResidentInstance::EMPTY`] and
/// [`ResidentOwner::EMPTY`].
#[derive(Debug)]
pub struct ResidentBuffer {
    buffer: wgpu::Buffer,
    owners: wgpu::Buffer,
    slots: u32,
    handle_capacity: u32,
    max_bytes: u64,
    generation: u64,
    updates: GrowBuffer,
    update_slots: GrowBuffer,
    params: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
    group: Option<wgpu::BindGroup>,
    /// Per slot, the index of its last change in the frame being applied (scratch for dropping older duplicates).
    last: Vec<u32>,
    packed: Vec<ResidentInstance>,
    packed_slots: Vec<SlotUpdate>,
}

impl ResidentBuffer {
    /// An empty buffer that keeps to `limits` (each taken as the smaller of it and the device's).
    pub fn new(device: &wgpu::Device, limits: &wgpu::Limits) -> Self {
        let device_limits = device.limits();
        let max_bytes = limits.max_buffer_size.min(device_limits.max_buffer_size).min(
            limits
                .max_storage_buffer_binding_size
                .min(device_limits.max_storage_buffer_binding_size),
        );
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("crowd resident scatter"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: NonZeroU64::new(size_of::<ScatterParams>() as u64),
                    },
                    count: None,
                },
                storage(1, true),
                storage(2, true),
                storage(3, false),
                storage(4, false),
            ],
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(shaders::RESIDENT_SCATTER.file),
            source: wgpu::ShaderSource::Wgsl(shaders::RESIDENT_SCATTER.composed().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("scatter_resident"),
            layout: Some(&device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("crowd resident scatter"),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            })),
            module: &module,
            entry_point: Some("scatter_resident"),
            compilation_options: Default::default(),
            cache: None,
        });
        let storage = wgpu::BufferUsages::STORAGE;
        Self {
            buffer: create(device, "crowd resident instances", 48 * 16),
            owners: create(device, "crowd resident owners", 8 * 16),
            slots: 0,
            handle_capacity: 0,
            max_bytes,
            generation: 0,
            updates: GrowBuffer::new(device, "crowd resident updates", storage, u64::MAX / 2),
            update_slots: GrowBuffer::new(device, "crowd resident update slots", storage, u64::MAX / 2),
            params: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("crowd resident scatter params"),
                size: size_of::<ScatterParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            layout,
            pipeline,
            group: None,
            last: Vec::new(),
            packed: Vec::new(),
            packed_slots: Vec::new(),
        }
    }

    /// The slots the buffer holds: the store's slot count of the last frame applied.
    pub fn slot_count(&self) -> u32 {
        self.slots
    }

    /// The most slots the buffer can hold under its limits.
    pub fn max_slots(&self) -> u64 {
        self.max_bytes / RESIDENT_INSTANCE_SIZE as u64
    }

    /// The device buffer (for binding, and for readback in tests and tools).
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// The owners' device buffer: one [`ResidentOwner`] per slot.
    pub fn owners_buffer(&self) -> &wgpu::Buffer {
        &self.owners
    }

    /// One past the largest handle index that has owned a slot: the extent of a view's hysteresis state.
    pub fn handle_capacity(&self) -> u32 {
        self.handle_capacity
    }

    /// Bumped whenever the device buffer is recreated (bind groups holding it must be too).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Writes `instances`, held by `owners`, at slots `first..first + instances.len()` (growing the slot count to
    /// reach them): one frame with a single changed range; see [`ResidentBuffer::apply`].
    ///
    /// # Errors
    ///
    /// As [`ResidentBuffer::apply`].
    pub fn write(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        first: u32,
        instances: &[ResidentInstance],
        owners: &[ResidentOwner],
    ) -> Result<u64> {
        let end = u64::from(first) + instances.len() as u64;
        let Ok(end32) = u32::try_from(end) else {
            return Err(self.limit(end));
        };
        let range = first..end32;
        self.apply(
            device,
            queue,
            self.slots.max(end32),
            std::slice::from_ref(&range),
            instances,
            owners,
        )
    }

    /// Applies one frame's changes: the buffer holds `slot_count` slots (new ones empty), then slot `s` of each
    /// range of `ranges` takes the next state of `instances` and owner of `owners`, ranges in order; where ranges
    /// overlap (a dropped frame folded into the next) the later change wins. Submits one compute pass to `queue`
    /// when anything changed. Returns the bytes written to the device.
    ///
    /// # Errors
    ///
    /// [`Error::Gpu`] when the ranges do not cover `instances` exactly, `owners` is not as long as `instances`,
    /// or a range reaches past `slot_count`;
    /// [`Error::Limit`] when the slots pass `max_buffer_size` or the storage binding limit. Nothing is written
    /// then, and every slot written before is kept.
    pub fn apply(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        slot_count: u32,
        ranges: &[Range<u32>],
        instances: &[ResidentInstance],
        owners: &[ResidentOwner],
    ) -> Result<u64> {
        let mut total = 0u64;
        for r in ranges {
            if r.start > r.end || r.end > slot_count {
                return Err(Error::gpu(format!(
                    "resident change range {}..{} lies past the {slot_count} slots",
                    r.start, r.end
                )));
            }
            total += u64::from(r.end - r.start);
        }
        if total != instances.len() as u64 {
            return Err(Error::gpu(format!(
                "resident changes cover {total} slots but carry {} states",
                instances.len()
            )));
        }
        if owners.len() != instances.len() {
            return Err(Error::gpu(format!(
                "resident changes carry {} states but {} owners",
                instances.len(),
                owners.len()
            )));
        }
        let bytes = u64::from(slot_count) * RESIDENT_INSTANCE_SIZE as u64;
        if bytes > self.max_bytes {
            return Err(self.limit(u64::from(slot_count)));
        }
        let update_bytes = total * RESIDENT_INSTANCE_SIZE as u64;
        if update_bytes > self.updates.size() && self.updates.size_for(update_bytes, self.max_bytes) > self.max_bytes {
            return Err(Error::Limit {
                buffer: "resident updates",
                bytes: update_bytes,
                limit: "max_buffer_size or max_storage_buffer_binding_size",
                max: self.max_bytes,
            });
        }
        let mut written = self.grow(device, queue, slot_count);

        // Later changes of a slot win: keep each slot's last change only, in order.
        if self.last.len() < slot_count as usize {
            self.last.resize(slot_count as usize, 0);
        }
        let mut i = 0u32;
        for r in ranges {
            for s in r.clone() {
                self.last[s as usize] = i;
                i += 1;
            }
        }
        self.packed.clear();
        self.packed_slots.clear();
        let mut i = 0u32;
        let mut at = 0usize;
        for r in ranges {
            for s in r.clone() {
                if self.last[s as usize] == i {
                    let owner = owners[at];
                    self.packed.push(instances[at]);
                    self.packed_slots.push(SlotUpdate { slot: s, owner });
                    if owner != ResidentOwner::EMPTY {
                        self.handle_capacity = self.handle_capacity.max(owner.index.saturating_add(1));
                    }
                }
                i += 1;
                at += 1;
            }
        }
        let n = self.packed.len() as u32;
        if n == 0 {
            return Ok(written);
        }
        let mut rebind = self
            .updates
            .reserve(device, u64::from(n) * RESIDENT_INSTANCE_SIZE as u64, self.max_bytes);
        rebind |= self
            .update_slots
            .reserve(device, u64::from(n) * size_of::<SlotUpdate>() as u64, self.max_bytes);
        if rebind || self.group.is_none() {
            self.group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("crowd resident scatter"),
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: self.params.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: self.updates.buffer.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: self.update_slots.buffer.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 3,
                        resource: self.buffer.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 4,
                        resource: self.owners.as_entire_binding(),
                    },
                ],
            }));
        }
        queue.write_buffer(&self.updates.buffer, 0, bytemuck::cast_slice(&self.packed));
        queue.write_buffer(&self.update_slots.buffer, 0, bytemuck::cast_slice(&self.packed_slots));
        let params = ScatterParams { count: n, pad: [0; 3] };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        written += u64::from(n) * (RESIDENT_INSTANCE_SIZE + size_of::<SlotUpdate>()) as u64
            + size_of::<ScatterParams>() as u64;
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("crowd resident scatter"),
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("crowd resident scatter"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            if let Some(group) = &self.group {
                pass.set_bind_group(0, group, &[]);
            }
            let groups = n.div_ceil(SCATTER_WORKGROUP);
            pass.dispatch_workgroups(groups.min(65_535), groups.div_ceil(65_535), 1);
        }
        queue.submit([encoder.finish()]);
        Ok(written)
    }

    /// Makes the buffer hold `slot_count` slots: slots past the old count are empty. Returns the bytes written.
    fn grow(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, slot_count: u32) -> u64 {
        if slot_count <= self.slots {
            return 0;
        }
        let bytes = u64::from(slot_count) * RESIDENT_INSTANCE_SIZE as u64;
        if bytes > self.buffer.size() {
            let size = crate::grow_buffer::size_within(u64::MAX / 2, bytes, self.max_bytes);
            let slots = size / RESIDENT_INSTANCE_SIZE as u64;
            let old = std::mem::replace(&mut self.buffer, create(device, "crowd resident instances", size));
            let old_owners = std::mem::replace(
                &mut self.owners,
                create(device, "crowd resident owners", slots * OWNER_SIZE),
            );
            let kept = u64::from(self.slots);
            if kept > 0 {
                let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("crowd resident growth"),
                });
                encoder.copy_buffer_to_buffer(&old, 0, &self.buffer, 0, kept * RESIDENT_INSTANCE_SIZE as u64);
                encoder.copy_buffer_to_buffer(&old_owners, 0, &self.owners, 0, kept * OWNER_SIZE);
                queue.submit([encoder.finish()]);
            }
            self.generation += 1;
            self.group = None;
        }
        // Growth only: the new slots hold no instance until a change reaches them.
        let n = (slot_count - self.slots) as usize;
        let empty = vec![ResidentInstance::EMPTY; n];
        let nobody = vec![ResidentOwner::EMPTY; n];
        queue.write_buffer(
            &self.buffer,
            u64::from(self.slots) * RESIDENT_INSTANCE_SIZE as u64,
            bytemuck::cast_slice(&empty),
        );
        queue.write_buffer(
            &self.owners,
            u64::from(self.slots) * OWNER_SIZE,
            bytemuck::cast_slice(&nobody),
        );
        self.slots = slot_count;
        (size_of_val(empty.as_slice()) + size_of_val(nobody.as_slice())) as u64
    }

    fn limit(&self, slots: u64) -> Error {
        Error::Limit {
            buffer: "resident instances",
            bytes: slots.saturating_mul(RESIDENT_INSTANCE_SIZE as u64),
            limit: "max_buffer_size or max_storage_buffer_binding_size",
            max: self.max_bytes,
        }
    }
}

fn create(device: &wgpu::Device, label: &'static str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}
