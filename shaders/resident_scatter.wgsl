// The GPU-driven path's upload: one frame's changed resident instances, packed one after another, are written to
// their slots of the resident buffer (crowd_gpu::ResidentBuffer) with their owners. One thread per change; the CPU
// leaves at most one change per slot, so no two threads write the same slot. Needs `quat.wgsl` and
// `resident_instance.wgsl`.

struct ScatterParams {
    // The number of changes.
    count: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

// One change's slot and the instance that now holds it.
struct SlotUpdate {
    slot: u32,
    owner: ResidentOwner,
}

// The number of changes.
@group(0) @binding(0) var<uniform> params: ScatterParams;
// The changed states, packed.
@group(0) @binding(1) var<storage, read> updates: array<ResidentInstance>;
// The slot and owner of each change.
@group(0) @binding(2) var<storage, read> update_slots: array<SlotUpdate>;
// The resident instances, one per slot.
@group(0) @binding(3) var<storage, read_write> resident_out: array<ResidentInstance>;
// The owner of each slot.
@group(0) @binding(4) var<storage, read_write> owners_out: array<ResidentOwner>;

@compute @workgroup_size(256)
fn scatter_resident(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    // The dispatch is `groups.x` workgroups wide (crowd_gpu's dispatch_size).
    let i = id.x + id.y * groups.x * 256u;
    if i >= params.count {
        return;
    }
    let u = update_slots[i];
    resident_out[u.slot] = updates[i];
    owners_out[u.slot] = u.owner;
}
