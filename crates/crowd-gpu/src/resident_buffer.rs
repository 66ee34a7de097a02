//! [`ResidentBuffer`]: the GPU-driven path's instances on the device, one [`ResidentInstance`] per slot of the
//! store, in slot order, changed only where a frame says.
//!
//! Beside each slot's state it keeps the slot's [`ResidentOwner`] (the instance's handle), which keys every view's
//! hysteresis state (`CullView`).
//!
//! A frame's changes travel packed: the later change of a slot wins and the earlier ones are dropped, then the
//! changed states and their slots and owners are staged (two pieces, whatever the number of changes), and a compute
//! pass (`shaders/resident_scatter.wgsl`) writes each to its slot. Everything is recorded into the caller's encoder:
//! nothing is submitted here. So the upload's CPU cost grows with the changes, never with the crowd, and the number
//! of wgpu calls is fixed.

use std::num::NonZeroU64;
use std::ops::Range;

use bytemuck::{Pod, Zeroable};
use crowd_frame::{RESIDENT_INSTANCE_SIZE, ResidentChanges, ResidentInstance, ResidentOwner};

use crate::grow_buffer::GrowBuffer;
use crate::limits::{DeviceLimits, dispatch_size};
use crate::pipeline_cache::PipelineCache;
use crate::upload::{Staging, Uploads};
use crate::{Error, Result};

/// One change's slot and owner: the twin of `SlotUpdate` in `shaders/resident_scatter.wgsl`.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
struct SlotUpdate {
    slot: u32,
    owner: ResidentOwner,
}

/// Bytes of a slot's owner.
const OWNER_SIZE: u64 = size_of::<ResidentOwner>() as u64;

/// Bytes of a state.
const STATE_SIZE: u64 = RESIDENT_INSTANCE_SIZE as u64;

/// Slots of the first buffer: 4 states (192 bytes), within the smallest storage-binding limit a renderer takes
/// (256 bytes).
const FIRST_SLOTS: u64 = 4;

#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
#[repr(C)]
struct ScatterParams {
    count: u32,
    pad: [u32; 3],
}

/// One frame's resident changes as [`ResidentBuffer::apply`] takes them: crowd-frame's [`ResidentChanges`]
/// (`ResidentUpdate::from`), or plain slices.
#[derive(Clone, Copy, Debug)]
pub struct ResidentUpdate<'a> {
    /// The store's slot count: the buffer's extent after the update.
    pub slot_count: u32,
    /// The store's handle-table size: every owner's index must be below it.
    pub handle_capacity: u32,
    /// The changed slot ranges, in the order to apply; a later change of a slot wins.
    pub ranges: &'a [Range<u32>],
    /// The new states, `ranges` after one another.
    pub instances: &'a [ResidentInstance],
    /// The owner of each state's slot ([`ResidentOwner::EMPTY`] for an empty one).
    pub owners: &'a [ResidentOwner],
}

impl<'a> From<&'a ResidentChanges> for ResidentUpdate<'a> {
    fn from(c: &'a ResidentChanges) -> Self {
        Self {
            slot_count: c.slot_count,
            handle_capacity: c.handle_capacity,
            ranges: &c.ranges,
            instances: &c.instances,
            owners: &c.owners,
        }
    }
}

/// The resident instances on the device: one [`ResidentInstance`] and one [`ResidentOwner`] per slot of the
/// store, in slot order.
///
/// It grows by doubling within `max_buffer_size` and `max_storage_buffer_binding_size` (it is bound whole); a
/// growth keeps every slot (a copy recorded into the caller's encoder) and gives the new slots
/// [`ResidentInstance::EMPTY`] and [`ResidentOwner::EMPTY`]. A smaller slot count (a full resend after the store
/// shrank) only shortens the extent that views cull.
#[derive(Debug)]
pub struct ResidentBuffer {
    buffer: wgpu::Buffer,
    owners: wgpu::Buffer,
    slots: u32,
    handle_capacity: u32,
    limits: DeviceLimits,
    generation: u64,
    cache: PipelineCache,
    updates: GrowBuffer,
    update_slots: GrowBuffer,
    params: wgpu::Buffer,
    group: Option<(wgpu::BindGroup, (u64, u64, u64))>,
    /// Per slot, the index of its last change in the frame being applied (scratch for dropping older duplicates).
    last: Vec<u32>,
    packed: Vec<ResidentInstance>,
    packed_slots: Vec<SlotUpdate>,
    uploads: Uploads,
}

/// What [`ResidentBuffer::check`] found: the changes to stage, deduplicated into the buffer's scratch.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checked {
    slot_count: u32,
    handle_capacity: u32,
}

impl ResidentBuffer {
    /// An empty buffer that keeps to `limits` (each taken as the smaller of it and the device's), with the scatter
    /// pipeline of `cache`.
    ///
    /// # Errors
    ///
    /// [`Error::DeviceLimit`] when the storage-binding limit or `max_buffer_size` is under 256 bytes.
    pub fn new(device: &wgpu::Device, cache: &PipelineCache, limits: &wgpu::Limits) -> Result<Self> {
        let limits = DeviceLimits::new(limits, &device.limits());
        if limits.whole() < 256 {
            return Err(Error::DeviceLimit {
                limit: "max_storage_buffer_binding_size and max_buffer_size",
                have: limits.whole(),
                needs: 256,
            });
        }
        let storage = wgpu::BufferUsages::STORAGE;
        // The scatter pipeline is made (once per cache) before the first frame needs it.
        cache.scatter();
        Ok(Self {
            buffer: create(device, "crowd resident instances", FIRST_SLOTS * STATE_SIZE),
            owners: create(device, "crowd resident owners", FIRST_SLOTS * OWNER_SIZE),
            slots: 0,
            handle_capacity: 0,
            limits,
            generation: 0,
            cache: cache.clone(),
            updates: GrowBuffer::new(device, "crowd resident updates", storage, u64::MAX / 2),
            update_slots: GrowBuffer::new(device, "crowd resident update slots", storage, u64::MAX / 2),
            params: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("crowd resident scatter params"),
                size: size_of::<ScatterParams>() as u64,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            group: None,
            last: Vec::new(),
            packed: Vec::new(),
            packed_slots: Vec::new(),
            uploads: Uploads::new(1 << 20),
        })
    }

    /// The slots the buffer holds: the store's slot count of the last frame applied.
    pub fn slot_count(&self) -> u32 {
        self.slots
    }

    /// The most slots the buffer can hold under its limits: what `FrameSettings::max_slots` of its crowd should be.
    pub fn max_slots(&self) -> u64 {
        max_slots(&self.limits)
    }

    /// The device buffer (for binding, and for readback in tests and tools).
    pub fn buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }

    /// The owners' device buffer: one [`ResidentOwner`] per slot.
    pub fn owners_buffer(&self) -> &wgpu::Buffer {
        &self.owners
    }

    /// The store's handle-table size as of the last frame applied: the extent of a view's hysteresis state.
    pub fn handle_capacity(&self) -> u32 {
        self.handle_capacity
    }

    /// Bumped whenever the device buffers are recreated (bind groups holding them must be too).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Applies one frame's changes (see [`ResidentBuffer::check`] for the rules), recording the copies and the
    /// scatter pass into `encoder`. Returns the bytes uploaded.
    ///
    /// # Errors
    ///
    /// As [`ResidentBuffer::check`]; nothing is recorded and nothing changes then.
    pub fn apply(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        update: ResidentUpdate<'_>,
    ) -> Result<u64> {
        let checked = self.check(update)?;
        let mut uploads = std::mem::replace(&mut self.uploads, Uploads::new(0));
        let mut staging = uploads.begin(device, encoder);
        let scatter = self.stage(device, &mut staging, checked);
        let written = staging.finish();
        self.uploads = uploads;
        if scatter {
            self.record_scatter(device, encoder);
        }
        Ok(written)
    }

    /// Checks one frame's changes before anything is staged: the buffer will hold `slot_count` slots, and slot `s`
    /// of each range takes the next state of `instances` and owner of `owners`, ranges in order; where ranges
    /// overlap (a dropped frame folded into the next) the later change wins. Deduplicates the changes into scratch
    /// (the buffer's device state does not change). O(changes).
    ///
    /// # Errors
    ///
    /// - [`Error::ResidentChange`] naming the change when a range reaches past `slot_count` or is reversed, the
    ///   ranges do not cover `instances` exactly, `owners` is not as long, or an owner's index is at or past
    ///   `handle_capacity` (owners come from the caller: a bogus one would size every view's state for it);
    /// - [`Error::Limit`] when the slots, or the deduplicated changes, pass `max_buffer_size` or the storage binding
    ///   limit (both are bound whole), or the slots need more cull threads than two dispatch dimensions hold.
    pub(crate) fn check(&mut self, u: ResidentUpdate<'_>) -> Result<Checked> {
        let mut total = 0u64;
        for (i, r) in u.ranges.iter().enumerate() {
            if r.start > r.end || r.end > u.slot_count {
                return Err(Error::ResidentChange {
                    index: i,
                    what: "the range is reversed or reaches past the slot count",
                });
            }
            total += u64::from(r.end - r.start);
        }
        if total != u.instances.len() as u64 {
            return Err(Error::ResidentChange {
                index: u.ranges.len(),
                what: "the ranges do not cover the states exactly",
            });
        }
        if u.owners.len() != u.instances.len() {
            return Err(Error::ResidentChange {
                index: u.owners.len().min(u.instances.len()),
                what: "there is not one owner per state",
            });
        }
        let bytes = u64::from(u.slot_count) * STATE_SIZE;
        if bytes > self.limits.whole() {
            return Err(Error::Limit {
                buffer: "resident instances",
                bytes,
                limit: "max_buffer_size or max_storage_buffer_binding_size",
                max: self.limits.whole(),
            });
        }
        if u64::from(u.slot_count) > self.limits.max_threads() {
            return Err(Error::Limit {
                buffer: "cull dispatch",
                bytes: u64::from(u.slot_count),
                limit: "max_compute_workgroups_per_dimension (squared, times 256 slots)",
                max: self.limits.max_threads(),
            });
        }
        // Later changes of a slot win: keep each slot's last change only, in order.
        if self.last.len() < u.slot_count as usize {
            self.last.resize(u.slot_count as usize, 0);
        }
        let mut i = 0u32;
        for r in u.ranges {
            for s in r.clone() {
                self.last[s as usize] = i;
                i += 1;
            }
        }
        self.packed.clear();
        self.packed_slots.clear();
        let mut i = 0u32;
        for r in u.ranges {
            for s in r.clone() {
                if self.last[s as usize] == i {
                    let owner = u.owners[i as usize];
                    if owner != ResidentOwner::EMPTY && owner.index >= u.handle_capacity {
                        return Err(Error::ResidentChange {
                            index: i as usize,
                            what: "the owner's index is past the store's handle table",
                        });
                    }
                    self.packed.push(u.instances[i as usize]);
                    self.packed_slots.push(SlotUpdate { slot: s, owner });
                }
                i += 1;
            }
        }
        // The deduplicated changes are bound whole by the scatter pass: checked after dropping the older duplicates,
        // so that frames folded under `Overrun::DropOldest` fit whenever their latest states do.
        let update_bytes = self.packed.len() as u64 * STATE_SIZE;
        let max = self.limits.whole();
        if update_bytes > self.updates.size() && self.updates.size_for(update_bytes, max) > max {
            return Err(Error::Limit {
                buffer: "resident updates",
                bytes: update_bytes,
                limit: "max_buffer_size or max_storage_buffer_binding_size",
                max,
            });
        }
        Ok(Checked {
            slot_count: u.slot_count,
            handle_capacity: u.handle_capacity,
        })
    }

    /// Stages a checked frame: grows the buffers (the copy of the kept slots recorded into `encoder` now, the empty
    /// new slots staged), and stages the deduplicated changes and the scatter's parameters. Returns true when a
    /// scatter pass must follow the staged copies ([`ResidentBuffer::record_scatter`]).
    pub(crate) fn stage(&mut self, device: &wgpu::Device, staging: &mut Staging<'_>, checked: Checked) -> bool {
        self.grow(device, staging, checked.slot_count);
        self.slots = checked.slot_count;
        self.handle_capacity = self.handle_capacity.max(checked.handle_capacity);
        let n = self.packed.len() as u64;
        if n == 0 {
            return false;
        }
        let max = self.limits.whole();
        self.updates.reserve(device, n * STATE_SIZE, max);
        self.update_slots
            .reserve(device, n * size_of::<SlotUpdate>() as u64, max);
        staging.push(&self.updates.buffer, 0, bytemuck::cast_slice(&self.packed));
        staging.push(&self.update_slots.buffer, 0, bytemuck::cast_slice(&self.packed_slots));
        let params = ScatterParams {
            count: n as u32,
            pad: [0; 3],
        };
        staging.push(&self.params, 0, bytemuck::bytes_of(&params));
        true
    }

    /// Records the scatter pass of the last staged frame into `encoder`: after the staged copies.
    pub(crate) fn record_scatter(&mut self, device: &wgpu::Device, encoder: &mut wgpu::CommandEncoder) {
        let key = (self.generation, self.updates.generation, self.update_slots.generation);
        if self.group.as_ref().is_none_or(|g| g.1 != key) {
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("crowd resident scatter"),
                layout: &self.cache.layouts().scatter,
                entries: &[
                    entry(0, &self.params, self.params.size()),
                    entry(1, &self.updates.buffer, self.updates.size()),
                    entry(2, &self.update_slots.buffer, self.update_slots.size()),
                    entry(3, &self.buffer, self.buffer.size()),
                    entry(4, &self.owners, self.owners.size()),
                ],
            });
            self.group = Some((group, key));
        }
        let Some((group, _)) = &self.group else {
            return;
        };
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("crowd resident scatter"),
            timestamp_writes: None,
        });
        pass.set_pipeline(self.cache.scatter());
        pass.set_bind_group(0, group, &[]);
        let (x, y) = dispatch_size(self.packed.len() as u32, self.limits.workgroups);
        pass.dispatch_workgroups(x, y, 1);
    }

    /// Makes the buffer hold `slot_count` slots: slots past the old count are empty (staged), and a recreated
    /// buffer keeps the old slots (a copy recorded into `encoder`).
    fn grow(&mut self, device: &wgpu::Device, staging: &mut Staging<'_>, slot_count: u32) {
        if slot_count <= self.slots {
            return;
        }
        let bytes = u64::from(slot_count) * STATE_SIZE;
        if bytes > self.buffer.size() {
            // A size within the binding limit that holds the slots (checked); owners follow in proportion.
            let size =
                crate::grow_buffer::size_within(u64::MAX / 2, bytes, self.limits.whole()) / STATE_SIZE * STATE_SIZE;
            let size = size.max(bytes);
            let slots = size / STATE_SIZE;
            let old = std::mem::replace(&mut self.buffer, create(device, "crowd resident instances", size));
            let old_owners = std::mem::replace(
                &mut self.owners,
                create(device, "crowd resident owners", slots * OWNER_SIZE),
            );
            let kept = u64::from(self.slots);
            if kept > 0 {
                let encoder = staging.encoder();
                encoder.copy_buffer_to_buffer(&old, 0, &self.buffer, 0, kept * STATE_SIZE);
                encoder.copy_buffer_to_buffer(&old_owners, 0, &self.owners, 0, kept * OWNER_SIZE);
            }
            self.generation += 1;
        }
        // Growth only: the new slots hold no instance until a change reaches them.
        let n = (slot_count - self.slots) as usize;
        let from = u64::from(self.slots);
        push_repeated(staging, &self.buffer, from * STATE_SIZE, &ResidentInstance::EMPTY, n);
        push_repeated(staging, &self.owners, from * OWNER_SIZE, &ResidentOwner::EMPTY, n);
    }
}

/// The most slots a resident buffer holds under `limits`: its states are bound whole, and the cull runs a thread per
/// slot.
pub(crate) fn max_slots(limits: &DeviceLimits) -> u64 {
    (limits.whole() / STATE_SIZE).min(limits.max_threads())
}

/// Stages `n` copies of `value` for `target` at `offset`, in pieces of at most 64 KiB of repeats.
fn push_repeated<T: Pod>(staging: &mut Staging<'_>, target: &wgpu::Buffer, offset: u64, value: &T, n: usize) {
    const PIECE: usize = 1024;
    let piece = [*value; PIECE];
    let mut done = 0;
    while done < n {
        let k = (n - done).min(PIECE);
        staging.push(
            target,
            offset + (done * size_of::<T>()) as u64,
            bytemuck::cast_slice(&piece[..k]),
        );
        done += k;
    }
}

fn entry(binding: u32, buffer: &wgpu::Buffer, size: u64) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset: 0,
            size: NonZeroU64::new(size),
        }),
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
