// The crowd renderer's skinned draw (crowd_gpu::CrowdRenderer). Each instance reads its record by
// @builtin(instance_index), then its own palette (unique draws) or two slot palettes and a fraction (pooled
// draws), skins position and normal with 4-influence linear blending, and moves them to world and clip space.
// GPU-driven draws (vs_resident_*) read the instance's slot from the view's visible list instead, then its resident
// state, and map its clip time to a slot pair on the GPU (with crossfades). Baked draws (vs_baked_*) do the same
// with a bone-animation bake (anim_bake::BatData), bound where the pooled palettes are: its frames are the slots, and
// its clip table maps a clip time to two frames.
// Requires shaders/frame.wgsl, f16.wgsl, quat.wgsl, instance_record.wgsl, resident_instance.wgsl and vertex_formats.wgsl, and one palette fetch file
// (palette_fetch_f32.wgsl, palette_fetch_mat3x4_f16.wgsl or palette_fetch_qt_f16.wgsl) that declares
// group 0 bindings 2 and 3 and palette_rows(pooled, i).

// One draw: crowd_gpu's DrawUniform, 48 bytes, at a 256-byte stride with a dynamic offset.
struct DrawUniform {
    // The first record of the chunk bound at binding 1: records[instance_index - record_base].
    record_base: u32,
    // 1 when the records are pooled (slot pair and fraction), 0 when unique (first palette entry).
    pooled: u32,
    lod: u32,
    // crowd_cull::Tier as 0 unique, 1 pooled, 2 baked, 3 VAT.
    tier: u32,
    // The material's linear base colour factor.
    base_color: vec4<f32>,
    // 1 when the mesh's UVs are f16, 0 when unorm16.
    uv_f16: u32,
    // The mesh's index in the renderer: the VAT tier's first baked vertex of the mesh is vat.mesh_first_vertex[mesh].
    mesh: u32,
    pad1: u32,
    pad2: u32,
}

// Group 0, binding 0: the frame.
@group(0) @binding(0) var<uniform> frame: FrameUniform;
// Group 0, binding 1: a window of the records (one chunk), with a dynamic offset.
@group(0) @binding(1) var<storage, read> records: array<InstanceRecord>;
// Group 1, binding 0: the draw, with a dynamic offset.
@group(1) @binding(0) var<uniform> draw: DrawUniform;
// Group 2: the mesh's base colour texture (sRGB, mipmapped) and its sampler.
@group(2) @binding(0) var base_color_texture: texture_2d<f32>;
@group(2) @binding(1) var base_color_sampler: sampler;

// The GPU-driven path's clock: crowd_gpu's GpuFrameUniform, 16 bytes.
struct GpuFrame {
    // The animation clock of the frame, in seconds.
    now: f32,
    // The pose pool's time: looping clips' slots are spread from it.
    pool_time: f32,
    pad0: u32,
    pad1: u32,
}

// One pose-pool clip: crowd_frame::ResidentClip.
struct ResidentClip {
    first_slot: u32,
    slot_count: u32,
    duration: f32,
    // 1 when the clip loops.
    looping: u32,
}

// Group 3 (GPU-driven draws only), binding 0: the clock.
@group(3) @binding(0) var<uniform> gpu_frame: GpuFrame;
// Group 3, binding 1: the view's visible slots, bucket after bucket (crowd_cull.wgsl's `visible`).
@group(3) @binding(1) var<storage, read> visible: array<u32>;
// Group 3, binding 2: the view's counters; entry 32 + bucket is the bucket's first index in `visible`.
@group(3) @binding(2) var<storage, read> cull_counts: array<u32>;
// Group 3, binding 3: the resident instances, one per slot.
@group(3) @binding(3) var<storage, read> resident: array<ResidentInstance>;
// Group 3, binding 4: the pose pool's clips, by clip id.
@group(3) @binding(4) var<storage, read> pool_clips: array<ResidentClip>;

// One clip of a bone-animation bake: anim_bake::ClipRecord, 32 bytes.
struct BakedClip {
    // The bake's frame of the clip's frame 0.
    first_frame: u32,
    // Stored frames, at least 2 (the last is the pose at the duration).
    frame_count: u32,
    rate_hz: f32,
    duration: f32,
    // Bit 0: the clip loops.
    flags: u32,
    first_segment: u32,
    segment_count: u32,
    reserved: u32,
}

// Group 3, binding 5: the bone-animation bake's clips, by clip id (baked draws; a placeholder without a bake).
@group(3) @binding(5) var<storage, read> baked_clips: array<BakedClip>;

// One clip of a vertex-animation bake: its frames (anim_bake::ClipRecord) and its positions' quantization
// (anim_bake::VatQuant: position = min + step * code).
struct VatClip {
    record: BakedClip,
    quant_min: vec4<f32>,
    quant_step: vec4<f32>,
}

// The vertex-animation bake (crowd_gpu's VAT uniform): its texel layout (anim_bake::VatLayout), its format
// (anim_bake::VatFormat: 0 compact, 1 standard, 2 precise), each mesh's first baked vertex and the clips.
struct VatUniform {
    width: u32,
    rows_per_frame: u32,
    frames_per_layer: u32,
    format: u32,
    // Four meshes per vector, by the draw's mesh index.
    mesh_first_vertex: array<vec4<u32>, 16>,
    clips: array<VatClip, 128>,
}

// Group 3, binding 6: the vertex-animation bake (VAT draws; zeros without a bake).
@group(3) @binding(6) var<uniform> vat: VatUniform;
// Group 3, bindings 7 and 8: the bake's texel planes, read with textureLoad (the second is a placeholder for a
// one-plane format).
@group(3) @binding(7) var vat_plane0: texture_2d_array<u32>;
@group(3) @binding(8) var vat_plane1: texture_2d_array<u32>;

// The interleaved vertex of crowd_gpu's GPU mesh (32 bytes, 36 with u16 joints); joints are location 5.
struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: u32,
    @location(2) uv: u32,
    @location(3) weights: u32,
    @location(4) color: u32,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) uv: vec2<f32>,
    // Vertex colour times the record's tint.
    @location(2) color: vec4<f32>,
    // The debug view's colour (unused when shaded).
    @location(3) @interpolate(flat) debug_color: vec4<f32>,
}

// The sum of weights[k] times palette entry base + joints[k], over the four influences.
fn blend_rows(pooled: bool, base: u32, joints: vec4<u32>, weights: vec4<f32>) -> array<vec4<f32>, 3> {
    let a = palette_rows(pooled, base + joints.x);
    let b = palette_rows(pooled, base + joints.y);
    let c = palette_rows(pooled, base + joints.z);
    let d = palette_rows(pooled, base + joints.w);
    return array<vec4<f32>, 3>(
        weights.x * a[0] + weights.y * b[0] + weights.z * c[0] + weights.w * d[0],
        weights.x * a[1] + weights.y * b[1] + weights.z * c[1] + weights.w * d[1],
        weights.x * a[2] + weights.y * b[2] + weights.z * c[2] + weights.w * d[2],
    );
}

// The blended skinning matrix of a vertex of the instance `r`: its own palette, or the two slot palettes mixed
// by the fraction (the same as mixing each entry, since the blend is linear).
fn skin_rows(r: InstanceRecord, joints: vec4<u32>, weights: vec4<f32>) -> array<vec4<f32>, 3> {
    if (draw.pooled == 0u) {
        return blend_rows(false, record_palette(r), joints, weights);
    }
    let slots = record_slots(r);
    let f = record_fraction(r);
    let s0 = blend_rows(true, slots.x * frame.joint_count, joints, weights);
    let s1 = blend_rows(true, slots.y * frame.joint_count, joints, weights);
    return array<vec4<f32>, 3>(mix(s0[0], s1[0], f), mix(s0[1], s1[1], f), mix(s0[2], s1[2], f));
}

// `x` modulo `d` (positive), as Rust's `rem_euclid` for a positive `d`.
fn rem_euclid(x: f32, d: f32) -> f32 {
    let r = x - d * floor(x / d);
    return select(r, 0.0, r >= d);
}

// anim_pose::PosePool::map for a clip track: slot a, slot b and the fraction between them at clip time `t`.
struct SlotPair {
    a: u32,
    b: u32,
    f: f32,
}

fn map_clip(c: ResidentClip, t: f32) -> SlotPair {
    let k = c.slot_count;
    if c.looping != 0u {
        let x = rem_euclid(t - gpu_frame.pool_time, c.duration) * f32(k) / c.duration;
        let fl = floor(x);
        let a = u32(fl) % k;
        return SlotPair(c.first_slot + a, c.first_slot + (a + 1u) % k, x - fl);
    }
    let x = clamp(t, 0.0, c.duration) * f32(k - 1u) / c.duration;
    let a = min(u32(floor(x)), k - 1u);
    if a == k - 1u {
        return SlotPair(c.first_slot + a, c.first_slot + a, 0.0);
    }
    return SlotPair(c.first_slot + a, c.first_slot + a + 1u, x - f32(a));
}

// The blended skinning rows of a slot pair.
fn pair_rows(p: SlotPair, joints: vec4<u32>, weights: vec4<f32>) -> array<vec4<f32>, 3> {
    let s0 = blend_rows(true, p.a * frame.joint_count, joints, weights);
    let s1 = blend_rows(true, p.b * frame.joint_count, joints, weights);
    return array<vec4<f32>, 3>(mix(s0[0], s1[0], p.f), mix(s0[1], s1[1], p.f), mix(s0[2], s1[2], p.f));
}

// A resident instance's skinning rows from the pool: its clip's slot pair at its clip time, or during a crossfade
// the target's pair at its clip time mixed with the source's pair at the same phase (crowd_frame's crossfade
// timing: the clock is the target's), by the fade's weight, over all four influences.
fn resident_rows(r: ResidentInstance, joints: vec4<u32>, weights: vec4<f32>) -> array<vec4<f32>, 3> {
    let source = pool_clips[resident_clip(r)];
    let to_id = resident_fade_target(r);
    if to_id == RESIDENT_NO_FADE {
        return pair_rows(map_clip(source, resident_time(r)), joints, weights);
    }
    let to = pool_clips[to_id];
    let f = fade_timing(r, to.duration, to.looping != 0u, source.duration);
    let a = pair_rows(map_clip(source, f.source_t), joints, weights);
    return mix_rows(a, pair_rows(map_clip(to, f.t), joints, weights), f.w);
}

// A resident instance's clip time: `(now - start_time) * speed` (crowd_frame::clip_time).
fn resident_time(r: ResidentInstance) -> f32 {
    return (gpu_frame.now - r.start_time) * r.speed;
}

// A crossfade's timing (crowd-frame's rule: the clock is the target's): the target's clip time `t`, the source's
// time at the same phase of its own duration, and the fade's weight.
struct FadeTiming {
    t: f32,
    source_t: f32,
    w: f32,
}

fn fade_timing(r: ResidentInstance, to_duration: f32, to_looping: bool, source_duration: f32) -> FadeTiming {
    let t = resident_time(r);
    let phase = select(clamp(t / to_duration, 0.0, 1.0), rem_euclid(t, to_duration) / to_duration, to_looping);
    let w = clamp((gpu_frame.now - r.fade_start) / r.fade_length, 0.0, 1.0);
    return FadeTiming(t, phase * source_duration, w);
}

fn mix_rows(a: array<vec4<f32>, 3>, b: array<vec4<f32>, 3>, w: f32) -> array<vec4<f32>, 3> {
    return array<vec4<f32>, 3>(mix(a[0], b[0], w), mix(a[1], b[1], w), mix(a[2], b[2], w));
}

// anim_bake::ClipRecord::frame_at: the two bake frames around clip time `t` and the fraction between them (a
// looping clip wraps `t` over its duration, another clamps it).
fn baked_pair(c: BakedClip, t: f32) -> SlotPair {
    var local = clamp(t, 0.0, c.duration);
    if (c.flags & 1u) != 0u && c.duration > 0.0 {
        local = t - c.duration * floor(t / c.duration);
    }
    let x = local * c.rate_hz;
    let i = min(u32(max(floor(x), 0.0)), c.frame_count - 2u);
    let f = clamp(x - f32(i), 0.0, 1.0);
    return SlotPair(c.first_frame + i, c.first_frame + i + 1u, f);
}

// A resident instance's skinning rows from the bake (bound as the pooled palettes): its clip's two frames at its
// clip time, or during a crossfade the two clips' frames mixed by the fade's weight, with the same phase rule as
// `resident_rows`, over all four influences.
fn baked_rows(r: ResidentInstance, joints: vec4<u32>, weights: vec4<f32>) -> array<vec4<f32>, 3> {
    let source = baked_clips[resident_clip(r)];
    let to_id = resident_fade_target(r);
    if to_id == RESIDENT_NO_FADE {
        return pair_rows(baked_pair(source, resident_time(r)), joints, weights);
    }
    let to = baked_clips[to_id];
    let f = fade_timing(r, to.duration, (to.flags & 1u) != 0u, source.duration);
    let a = pair_rows(baked_pair(source, f.source_t), joints, weights);
    return mix_rows(a, pair_rows(baked_pair(to, f.t), joints, weights), f.w);
}

// A VAT vertex: its instance-space position and unit normal.
struct VatVertex {
    p: vec3<f32>,
    n: vec3<f32>,
}

// anim_bake::quantize::decode_oct: an octahedral normal from two codes of `max_code` levels.
fn decode_vat_oct(code: vec2<u32>, max_code: f32) -> vec3<f32> {
    let p = vec2<f32>(code) / max_code * 2.0 - 1.0;
    let z = 1.0 - abs(p.x) - abs(p.y);
    let t = max(-z, 0.0);
    let x = p.x + select(t, -t, p.x >= 0.0);
    let y = p.y + select(t, -t, p.y >= 0.0);
    return normalize(vec3<f32>(x, y, z));
}

// Baked vertex `v` at the bake's frame `f`, decoded with clip `c`'s quantization (anim_bake::VatData::vertex): the
// texel is (v % width, (f % frames_per_layer) * rows_per_frame + v / width) of layer f / frames_per_layer.
fn vat_vertex_at(c: VatClip, v: u32, f: u32) -> VatVertex {
    let xy = vec2<u32>(v % vat.width, (f % vat.frames_per_layer) * vat.rows_per_frame + v / vat.width);
    let layer = f / vat.frames_per_layer;
    let a = textureLoad(vat_plane0, xy, layer, 0);
    var codes = a.xyz;
    var oct = vec2<u32>(a.w & 0xffu, a.w >> 8u);
    var max_code = 255.0;
    if vat.format == 0u {
        codes = vec3<u32>(a.x & 0x7ffu, (a.x >> 11u) & 0x7ffu, a.x >> 22u);
        oct = textureLoad(vat_plane1, xy, layer, 0).xy;
    } else if vat.format == 2u {
        oct = vec2<u32>(a.w, textureLoad(vat_plane1, xy, layer, 0).x);
        max_code = 65535.0;
    }
    return VatVertex(c.quant_min.xyz + c.quant_step.xyz * vec3<f32>(codes), decode_vat_oct(oct, max_code));
}

// Baked vertex `v` of clip `c` at clip time `t`: the two frames around it, mixed (the normal renormalized).
fn vat_sample(c: VatClip, v: u32, t: f32) -> VatVertex {
    let pair = baked_pair(c.record, t);
    let a = vat_vertex_at(c, v, pair.a);
    let b = vat_vertex_at(c, v, pair.b);
    return VatVertex(mix(a.p, b.p, pair.f), normalize(mix(a.n, b.n, pair.f)));
}

// A resident instance's baked vertex `v`: its clip at its clip time, or during a crossfade the two clips' vertices
// mixed by the fade's weight, with the phase rule of `resident_rows`.
fn vat_vertex(r: ResidentInstance, v: u32) -> VatVertex {
    let source = vat.clips[resident_clip(r)];
    let to_id = resident_fade_target(r);
    if to_id == RESIDENT_NO_FADE {
        return vat_sample(source, v, resident_time(r));
    }
    let to = vat.clips[to_id];
    let f = fade_timing(r, to.record.duration, (to.record.flags & 1u) != 0u, source.record.duration);
    let a = vat_sample(source, v, f.source_t);
    let b = vat_sample(to, v, f.t);
    return VatVertex(mix(a.p, b.p, f.w), normalize(mix(a.n, b.n, f.w)));
}

fn rows_point(m: array<vec4<f32>, 3>, p: vec3<f32>) -> vec3<f32> {
    let p1 = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(m[0], p1), dot(m[1], p1), dot(m[2], p1));
}

fn rows_vector(m: array<vec4<f32>, 3>, v: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(dot(m[0].xyz, v), dot(m[1].xyz, v), dot(m[2].xyz, v));
}

// An sRGB-encoded value to linear light, so that the sRGB target stores the byte the debug view names.
fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let lo = c / 12.92;
    let hi = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(hi, lo, c <= vec3<f32>(0.04045));
}

// The instance-id colour of record i: three bits per channel, levels l / 7 in sRGB (bytes 0, 36, 73, ... 255),
// red from the lowest bits; crowd_gpu::instance_id_color mirrors it.
fn instance_id_color(i: u32) -> vec4<f32> {
    let l = vec3<f32>(vec3<u32>(i & 7u, (i >> 3u) & 7u, (i >> 6u) & 7u)) / 7.0;
    return vec4<f32>(srgb_to_linear(l), 1.0);
}

fn level_color(level: u32) -> vec4<f32> {
    let colors = array<vec3<f32>, 4>(
        vec3<f32>(0.1, 0.75, 0.2),
        vec3<f32>(0.95, 0.8, 0.1),
        vec3<f32>(0.9, 0.25, 0.1),
        vec3<f32>(0.3, 0.35, 0.95),
    );
    return vec4<f32>(colors[min(level, 3u)], 1.0);
}

// The skinned vertex in clip space, its world normal and its record.
fn skinned(v: VertexIn, joints: vec4<u32>, instance: u32) -> VertexOut {
    let r = records[instance - draw.record_base];
    let m = skin_rows(r, joints, decode_weights(v.weights));
    return placed(v, m, r.position, record_rotation(r), record_scale(r), record_tint(r), instance);
}

// The vertex of a GPU-driven draw: the `instance`-th visible slot of the draw's (LOD, tier) bucket in this view.
fn resident_skinned(v: VertexIn, joints: vec4<u32>, instance: u32) -> VertexOut {
    let slot = visible[cull_counts[32u + draw.lod * 4u + draw.tier] + instance];
    let r = resident[slot];
    let m = resident_rows(r, joints, decode_weights(v.weights));
    return placed(v, m, r.position, resident_rotation(r), r.scale, unpack4x8unorm(r.tint), slot);
}

// The vertex of a baked draw: as `resident_skinned`, posed from the bake.
fn baked_skinned(v: VertexIn, joints: vec4<u32>, instance: u32) -> VertexOut {
    let slot = visible[cull_counts[32u + draw.lod * 4u + draw.tier] + instance];
    let r = resident[slot];
    let m = baked_rows(r, joints, decode_weights(v.weights));
    return placed(v, m, r.position, resident_rotation(r), r.scale, unpack4x8unorm(r.tint), slot);
}

// The vertex of a VAT draw: the `instance`-th visible slot of the draw's bucket, its vertex read from the bake
// (mesh-local vertex index plus the mesh's first baked vertex), with no skinning.
fn vat_placed(v: VertexIn, vertex: u32, instance: u32) -> VertexOut {
    let slot = visible[cull_counts[32u + draw.lod * 4u + draw.tier] + instance];
    let r = resident[slot];
    let base = vat.mesh_first_vertex[draw.mesh / 4u][draw.mesh % 4u];
    let b = vat_vertex(r, base + vertex);
    return placed_at(v, b.p, b.n, r.position, resident_rotation(r), r.scale, unpack4x8unorm(r.tint), slot);
}

// A vertex skinned by rows `m`, placed by an instance transform, with the instance's tint and id.
fn placed(
    v: VertexIn,
    m: array<vec4<f32>, 3>,
    position: vec3<f32>,
    rotation: vec4<f32>,
    scale: f32,
    tint: vec4<f32>,
    instance: u32,
) -> VertexOut {
    let p = rows_point(m, v.position);
    let n = rows_vector(m, decode_oct_normal(v.normal));
    return placed_at(v, p, n, position, rotation, scale, tint, instance);
}

// A vertex at instance-space position `p` with normal `n`, placed by an instance transform, with the instance's
// tint and id.
fn placed_at(
    v: VertexIn,
    p: vec3<f32>,
    n: vec3<f32>,
    position: vec3<f32>,
    rotation: vec4<f32>,
    scale: f32,
    tint: vec4<f32>,
    instance: u32,
) -> VertexOut {
    let world = position + scale * quat_rotate(rotation, p);
    var out: VertexOut;
    out.clip = frame.view_proj * vec4<f32>(world, 1.0);
    out.normal = quat_rotate(rotation, n);
    out.uv = select(decode_uv_unorm16(v.uv), decode_uv_f16(v.uv), draw.uv_f16 != 0u);
    out.color = unpack4x8unorm(v.color) * tint;
    switch frame.view {
        case 1u: {
            out.debug_color = instance_id_color(instance);
        }
        case 2u: {
            out.debug_color = level_color(draw.lod);
        }
        case 3u: {
            out.debug_color = level_color(draw.tier);
        }
        default: {
            out.debug_color = vec4<f32>(1.0);
        }
    }
    return out;
}

@vertex
fn vs_joints_u8(v: VertexIn, @location(5) joints: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    return skinned(v, decode_joints_u8(joints), instance);
}

@vertex
fn vs_joints_u16(v: VertexIn, @location(5) joints: vec2<u32>, @builtin(instance_index) instance: u32) -> VertexOut {
    return skinned(v, decode_joints_u16(joints), instance);
}

@vertex
fn vs_resident_joints_u8(v: VertexIn, @location(5) joints: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    return resident_skinned(v, decode_joints_u8(joints), instance);
}

@vertex
fn vs_resident_joints_u16(
    v: VertexIn,
    @location(5) joints: vec2<u32>,
    @builtin(instance_index) instance: u32,
) -> VertexOut {
    return resident_skinned(v, decode_joints_u16(joints), instance);
}

@vertex
fn vs_baked_joints_u8(v: VertexIn, @location(5) joints: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    return baked_skinned(v, decode_joints_u8(joints), instance);
}

@vertex
fn vs_baked_joints_u16(v: VertexIn, @location(5) joints: vec2<u32>, @builtin(instance_index) instance: u32) -> VertexOut {
    return baked_skinned(v, decode_joints_u16(joints), instance);
}

@vertex
fn vs_vat(v: VertexIn, @builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> VertexOut {
    return vat_placed(v, vertex, instance);
}

// The depth-only seam (shadow maps later): the same skinning of the position, nothing else.
fn skinned_clip(position: vec3<f32>, weights: u32, joints: vec4<u32>, instance: u32) -> vec4<f32> {
    let r = records[instance - draw.record_base];
    let m = skin_rows(r, joints, decode_weights(weights));
    return frame.view_proj * vec4<f32>(record_transform_point(r, rows_point(m, position)), 1.0);
}

@vertex
fn vs_depth_joints_u8(
    @location(0) position: vec3<f32>,
    @location(3) weights: u32,
    @location(5) joints: u32,
    @builtin(instance_index) instance: u32,
) -> @builtin(position) vec4<f32> {
    return skinned_clip(position, weights, decode_joints_u8(joints), instance);
}

@vertex
fn vs_depth_joints_u16(
    @location(0) position: vec3<f32>,
    @location(3) weights: u32,
    @location(5) joints: vec2<u32>,
    @builtin(instance_index) instance: u32,
) -> @builtin(position) vec4<f32> {
    return skinned_clip(position, weights, decode_joints_u16(joints), instance);
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    // Two-sided: a back face is lit as seen.
    let n = normalize(select(-in.normal, in.normal, front));
    if (frame.view == 1u) {
        return in.debug_color;
    }
    if (frame.view == 4u) {
        return vec4<f32>(srgb_to_linear(0.5 + 0.5 * n), 1.0);
    }
    var albedo = vec3<f32>(0.8);
    if (frame.view == 0u) {
        let texel = textureSample(base_color_texture, base_color_sampler, in.uv);
        albedo = texel.rgb * draw.base_color.rgb * in.color.rgb;
    } else {
        albedo = in.debug_color.rgb;
    }
    return vec4<f32>(albedo * frame_light(frame, n), 1.0);
}
