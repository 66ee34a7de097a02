// Decoders of the packed mesh vertex attributes (`crowd_gpu::quantize`, whose decode functions mirror these line
// for line; the sizes and error bounds are stated there). Other shaders prepend this file; its bindings and entry
// point exist so that naga validates every decoder. Requires shaders/f16.wgsl.

// An octahedral normal: two snorm16 (x low). Unfolds the lower hemisphere and normalizes.
fn decode_oct_normal(w: u32) -> vec3<f32> {
    let p = unpack2x16snorm(w);
    let z = 1.0 - abs(p.x) - abs(p.y);
    let t = max(-z, 0.0);
    let x = p.x + select(t, -t, p.x >= 0.0);
    let y = p.y + select(t, -t, p.y >= 0.0);
    return normalize(vec3<f32>(x, y, z));
}

// A UV in [0, 1]: two unorm16 (u low).
fn decode_uv_unorm16(w: u32) -> vec2<f32> {
    return unpack2x16unorm(w);
}

// A UV: two f16 (u low), exactly as unpack2x16float decodes them (unpack_halves, from shaders/f16.wgsl).
fn decode_uv_f16(w: u32) -> vec2<f32> {
    return unpack_halves(w);
}

// Four joint indices as u8 (influence 0 low).
fn decode_joints_u8(w: u32) -> vec4<u32> {
    return vec4<u32>(w & 0xffu, (w >> 8u) & 0xffu, (w >> 16u) & 0xffu, w >> 24u);
}

// Four joint indices as u16, two per word (influence 0 low in word 0).
fn decode_joints_u16(w: vec2<u32>) -> vec4<u32> {
    return vec4<u32>(w.x & 0xffffu, w.x >> 16u, w.y & 0xffffu, w.y >> 16u);
}

// Four weights as unorm8 summing to exactly 255 (influence 0 low).
fn decode_weights(w: u32) -> vec4<f32> {
    return unpack4x8unorm(w);
}

// Group 0, binding 0: packed words in: (normal, uv unorm16, uv f16, joints u8, joints u16 low, joints u16 high,
// weights, unused) per element.
@group(0) @binding(0) var<storage, read> packed_in: array<array<u32, 8>>;
// Group 0, binding 1: decoded values out, four vec4 per element: normal, (uv unorm16, uv f16), joints u8 as f32,
// weights.
@group(0) @binding(1) var<storage, read_write> decoded_out: array<vec4<f32>>;

// A compute entry point that runs every decoder, so that naga validates them.
@compute @workgroup_size(64)
fn decode_vertices(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&packed_in)) {
        return;
    }
    let p = packed_in[i];
    let j16 = decode_joints_u16(vec2<u32>(p[4], p[5]));
    decoded_out[4u * i] = vec4<f32>(decode_oct_normal(p[0]), f32(j16.x + j16.w));
    decoded_out[4u * i + 1u] = vec4<f32>(decode_uv_unorm16(p[1]), decode_uv_f16(p[2]));
    decoded_out[4u * i + 2u] = vec4<f32>(decode_joints_u8(p[3]));
    decoded_out[4u * i + 3u] = decode_weights(p[6]);
}
