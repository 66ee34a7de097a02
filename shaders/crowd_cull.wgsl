// The GPU-driven path's culling, one view at a time, in three dispatches over the resident instances:
// `classify` (one thread per slot) tests each instance's animated bounds against the frustum, picks its LOD, tier
// and update rate from its screen size with hysteresis and counts it in its (LOD, tier) bucket (per workgroup
// first, then one global atomic per workgroup and bucket);
// `place` (one workgroup) turns the counts into list offsets and writes the indirect draw arguments (first instance
// 0: the vertex shader reads the bucket's first list index from the counters);
// `scatter` (one thread per slot) appends each visible instance's slot to its bucket's list (a workgroup reserves
// its run of each list with one global atomic).
// The maths is crowd-cull's `CullingJob` per instance (`crowd_cull::reference` is its plain twin): the same
// sphere, plane test, screen size and `prev.clamp(L, H)` level rule, on the same edges `t * (1 -/+ h)`, computed
// on the CPU and passed in. The hysteresis state is kept per instance, keyed by its handle (the slot's owner), so it
// follows an instance the store moves to another slot, as crowd-cull's does.
// `crowd-gpu/tests/gpu_cull.rs` reads the results back and compares them.
// Needs `quat.wgsl` and `resident_instance.wgsl`.

// The bucket count is at most MAX_LODS * TIER_COUNT = 32.
const MAX_BUCKETS: u32 = 32u;
const TIER_COUNT: u32 = 4u;
const VISIBLE: u32 = 1u;
const INTERPOLATE: u32 = 2u;
// The GPU's own flag, beside crowd_cull::TierState's: visible by the clip's bounds, outside its time segment's.
const OUT_OF_SEGMENT: u32 = 4u;
// crowd_cull::TierState::HIDDEN's rate and flags, given to a culled instance (its LOD and tier are kept).
const HIDDEN_RATE: u32 = 3u;
// crowd_cull::TierState::HIDDEN as a word: the state of an instance this view has not seen.
const HIDDEN_STATE: u32 = (HIDDEN_RATE << 16u) | (INTERPOLATE << 24u);

struct CullView {
    // The six frustum planes (n, d), normals inwards: inside when dot(n, p) + d >= 0.
    planes: array<vec4<f32>, 6>,
    // (forward, -forward . eye): a point's view depth.
    depth_plane: vec4<f32>,
    // 1 / tan(fov_y / 2).
    proj_scale: f32,
    // Slots to cull (the store's slot count).
    slot_count: u32,
    // LOD levels of the group, 1 to 8: lod_count - 1 LOD edges are used.
    lod_count: u32,
    // Indirect draws to write in `place`.
    draw_count: u32,
    // Lower and upper LOD edges t * (1 - h) and t * (1 + h), 7 used at most, four per vector.
    lod_lo: array<vec4<f32>, 2>,
    lod_hi: array<vec4<f32>, 2>,
    // The tier edges (3 used) and the rate edges (3 used).
    tier_lo: vec4<f32>,
    tier_hi: vec4<f32>,
    rate_lo: vec4<f32>,
    rate_hi: vec4<f32>,
    // The animation clock of the frame, in seconds (for the segment bounds).
    now: f32,
    // The clips in `clip_bounds` (their time segments follow them), or 0 when there are no segment bounds.
    segment_clips: u32,
    // 1 when the view takes each instance's LOD, tier and rate from another view: that view's states were copied
    // into `states` before this cull (a shadow view following the main camera).
    follow: u32,
    pad: u32,
}

// A clip's animated bounds in instance space (crowd_gpu's ClipBoundsGpu). With segment bounds, a clip's `duration`
// is its duration and `segments` is `first_segment | segment_count << 20 | looping << 31`; a segment's are 0.
struct ClipBounds {
    min: vec3<f32>,
    duration: f32,
    max: vec3<f32>,
    segments: u32,
}

// One indirect draw to write: the bucket it draws and its index range (the mesh's LOD).
struct DrawSlot {
    bucket: u32,
    index_count: u32,
    first_index: u32,
    base_vertex: i32,
}

// wgpu's DrawIndexedIndirectArgs.
struct DrawArgs {
    index_count: u32,
    instance_count: u32,
    first_index: u32,
    base_vertex: i32,
    first_instance: u32,
}

// The view: camera, slot count and level edges.
@group(0) @binding(0) var<uniform> view: CullView;
// The resident instances, one per slot.
@group(0) @binding(1) var<storage, read> instances: array<ResidentInstance>;
// Each clip's animated bounds, indexed by clip id; with segment bounds, the clips' time segments follow, segment
// `s` of a clip at `segment_clips + first_segment + s`.
@group(0) @binding(2) var<storage, read> clip_bounds: array<ClipBounds>;
// Per handle index, the view's crowd_cull::TierState word (lod | tier << 8 | rate << 16 | flags << 24) and the
// generation of the handle it belongs to, kept from frame to frame for hysteresis: the state follows the instance
// when it moves to another slot, and a word of another generation is not the instance's (it starts at HIDDEN).
@group(0) @binding(3) var<storage, read_write> states: array<vec2<u32>>;
// [0, MAX_BUCKETS): instances per bucket (cleared before `classify`); [MAX_BUCKETS, 2 MAX_BUCKETS): each bucket's
// first list index (written by `place`); [2 MAX_BUCKETS, 3 MAX_BUCKETS): append cursors (cleared by `place`).
@group(0) @binding(4) var<storage, read_write> counts: array<atomic<u32>>;
// The visible slots, bucket after bucket.
@group(0) @binding(5) var<storage, read_write> visible: array<u32>;
// The draws `place` writes, one per entry of `args`.
@group(0) @binding(6) var<storage, read> draw_slots: array<DrawSlot>;
// The indirect arguments.
@group(0) @binding(7) var<storage, read_write> args: array<DrawArgs>;
// The instance holding each slot.
@group(0) @binding(8) var<storage, read> owners: array<ResidentOwner>;

// The slot of a thread: the dispatch is `groups.x` workgroups wide (crowd_gpu's dispatch_size), so the shader holds
// no limit of its own.
fn slot_index(id: vec3<u32>, groups: vec3<u32>) -> u32 {
    return id.x + id.y * groups.x * 256u;
}

// The number of edges in `e` (the first `n`) that `s` lies below.
fn below(s: f32, e: vec4<f32>, n: u32) -> u32 {
    var c = 0u;
    for (var i = 0u; i < n; i++) {
        c += select(0u, 1u, s < e[i]);
    }
    return c;
}

fn level(prev: u32, lo: u32, hi: u32) -> u32 {
    return min(max(prev, lo), hi);
}

// Per workgroup and bucket: the slots counted (classify) or appended (scatter), and the workgroup's first index
// in the bucket's list (scatter). One global atomic per workgroup and bucket instead of one per instance.
var<workgroup> local_counts: array<atomic<u32>, 32>;
var<workgroup> local_base: array<u32, 32>;

// The slot's instance's new state word (unused for an empty slot); `bucket` is its list (NO_BUCKET when it is
// culled, empty or drawn by the CPU).
struct Decision {
    state: u32,
    bucket: u32,
}

const NO_BUCKET: u32 = 0xffffffffu;

// crowd_cull::world_sphere: the box `b`'s centre placed by the instance (xyz) and its half diagonal scaled (w).
fn world_sphere(inst: ResidentInstance, b: ClipBounds) -> vec4<f32> {
    let centre_local = (b.min + b.max) * 0.5;
    let half = (b.max - b.min) * 0.5;
    let c = inst.position + quat_rotate(resident_rotation(inst), centre_local * inst.scale);
    return vec4<f32>(c, length(half) * inst.scale);
}

// crowd_cull's plane test: the sphere is inside or crosses every frustum plane.
fn sphere_in_view(s: vec4<f32>) -> bool {
    var inside = true;
    for (var p = 0u; p < 6u; p++) {
        let pl = view.planes[p];
        inside = inside && (pl.x * s.x + pl.y * s.y + pl.z * s.z + pl.w >= -s.w);
    }
    return inside;
}

// True when the bounds of the time segment the instance's clip time falls in (anim_bake::ClipRecord::segment_at)
// are in the frustum.
fn segment_visible(inst: ResidentInstance, clip: u32) -> bool {
    let b = clip_bounds[clip];
    let d = b.duration;
    let packed = b.segments;
    let n = (packed >> 20u) & 0x7ffu;
    if d <= 0.0 || n == 0u {
        return true;
    }
    let t = (view.now - inst.start_time) * inst.speed;
    var local = clamp(t, 0.0, d);
    if (packed >> 31u) != 0u {
        local = t - d * floor(t / d);
    }
    let s = min(u32(max(floor(local / d * f32(n)), 0.0)), n - 1u);
    return sphere_in_view(world_sphere(inst, clip_bounds[view.segment_clips + (packed & 0xfffffu) + s]));
}

fn decide(slot: u32) -> Decision {
    let inst = instances[slot];
    let clip = resident_clip(inst);
    if clip == RESIDENT_EMPTY_CLIP {
        return Decision(0u, NO_BUCKET);
    }
    let owner = owners[slot];
    let kept = states[owner.index];
    let prev = select(HIDDEN_STATE, kept.x, kept.y == owner.generation);
    var b = clip_bounds[clip];
    let fade_to = resident_fade_target(inst);
    if fade_to != RESIDENT_NO_FADE {
        let t = clip_bounds[fade_to];
        b = ClipBounds(min(b.min, t.min), 0.0, max(b.max, t.max), 0u);
    }
    let sphere = world_sphere(inst, b);
    let c = sphere.xyz;
    let r = sphere.w;
    if !sphere_in_view(sphere) {
        // Culled: LOD and tier kept, the slowest rate with interpolation.
        return Decision((prev & 0xffffu) | (HIDDEN_RATE << 16u) | (INTERPOLATE << 24u), NO_BUCKET);
    }
    let dp = view.depth_plane;
    let depth = dp.x * c.x + dp.y * c.y + dp.z * c.z + dp.w;
    // At or behind the eye the screen size is infinite (the finest levels): above every edge.
    var s = 3.0e38;
    if depth > 0.0 {
        s = r * view.proj_scale / depth;
    }
    let lod_edges = view.lod_count - 1u;
    let lod_lo = below(s, view.lod_lo[0], min(lod_edges, 4u)) + below(s, view.lod_lo[1], max(lod_edges, 4u) - 4u);
    let lod_hi = below(s, view.lod_hi[0], min(lod_edges, 4u)) + below(s, view.lod_hi[1], max(lod_edges, 4u) - 4u);
    var lod = level(prev & 0xffu, lod_lo, lod_hi);
    var tier = level((prev >> 8u) & 0xffu, below(s, view.tier_lo, 3u), below(s, view.tier_hi, 3u));
    var rate = level((prev >> 16u) & 0xffu, below(s, view.rate_lo, 3u), below(s, view.rate_hi, 3u));
    if view.follow != 0u && kept.y == owner.generation {
        // The followed view's levels for this instance, whatever this view's camera sees of it.
        lod = prev & 0xffu;
        tier = (prev >> 8u) & 0xffu;
        rate = (prev >> 16u) & 0xffu;
    }
    var flags = VISIBLE | select(0u, INTERPOLATE, rate > 0u);
    var bucket = select(lod * TIER_COUNT + tier, NO_BUCKET, resident_cpu_drawn(inst));
    if fade_to == RESIDENT_NO_FADE && clip < view.segment_clips && !segment_visible(inst, clip) {
        // In view by the clip's bounds but not by those of its time segment: its levels are crowd-cull's, and it
        // is drawn in no list.
        flags |= OUT_OF_SEGMENT;
        bucket = NO_BUCKET;
    }
    return Decision(lod | (tier << 8u) | (rate << 16u) | (flags << 24u), bucket);
}

@compute @workgroup_size(256)
fn classify(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    if li < MAX_BUCKETS {
        atomicStore(&local_counts[li], 0u);
    }
    workgroupBarrier();
    let slot = slot_index(id, groups);
    if slot < view.slot_count && resident_clip(instances[slot]) != RESIDENT_EMPTY_CLIP {
        let d = decide(slot);
        let owner = owners[slot];
        states[owner.index] = vec2<u32>(d.state, owner.generation);
        if d.bucket != NO_BUCKET {
            atomicAdd(&local_counts[d.bucket], 1u);
        }
    }
    workgroupBarrier();
    if li < MAX_BUCKETS {
        let n = atomicLoad(&local_counts[li]);
        if n > 0u {
            atomicAdd(&counts[li], n);
        }
    }
}

// One workgroup: each bucket's first list index (a prefix sum of the counts), cursors cleared, and every indirect
// draw's arguments (its bucket's count and first index).
@compute @workgroup_size(64)
fn place(@builtin(local_invocation_index) i: u32) {
    if i == 0u {
        var sum = 0u;
        for (var b = 0u; b < MAX_BUCKETS; b++) {
            atomicStore(&counts[MAX_BUCKETS + b], sum);
            atomicStore(&counts[2u * MAX_BUCKETS + b], 0u);
            sum += atomicLoad(&counts[b]);
        }
    }
    workgroupBarrier();
    storageBarrier();
    for (var d = i; d < view.draw_count; d += 64u) {
        let slot = draw_slots[d];
        let b = slot.bucket % MAX_BUCKETS;
        args[d] = DrawArgs(
            slot.index_count,
            atomicLoad(&counts[b]),
            slot.first_index,
            slot.base_vertex,
            // The vertex shader adds the bucket's first index itself, so no draw needs INDIRECT_FIRST_INSTANCE.
            0u,
        );
    }
}

@compute @workgroup_size(256)
fn scatter(
    @builtin(global_invocation_id) id: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    if li < MAX_BUCKETS {
        atomicStore(&local_counts[li], 0u);
    }
    workgroupBarrier();
    let slot = slot_index(id, groups);
    var b = NO_BUCKET;
    var k = 0u;
    if slot < view.slot_count {
        let inst = instances[slot];
        var listed = false;
        var st = 0u;
        if resident_clip(inst) != RESIDENT_EMPTY_CLIP && !resident_cpu_drawn(inst) {
            st = states[owners[slot].index].x;
            listed = ((st >> 24u) & (VISIBLE | OUT_OF_SEGMENT)) == VISIBLE;
        }
        if listed {
            b = (st & 0xffu) * TIER_COUNT + ((st >> 8u) & 0xffu);
            k = atomicAdd(&local_counts[b], 1u);
        }
    }
    workgroupBarrier();
    if li < MAX_BUCKETS {
        let n = atomicLoad(&local_counts[li]);
        if n > 0u {
            local_base[li] = atomicLoad(&counts[MAX_BUCKETS + li]) + atomicAdd(&counts[2u * MAX_BUCKETS + li], n);
        }
    }
    workgroupBarrier();
    if b != NO_BUCKET {
        visible[local_base[b] + k] = slot;
    }
}
