// Decoders of the packed mesh vertex attributes (`crowd_mesh::quantize`, whose decode functions mirror these line
// for line; the sizes and error bounds are stated there). Other shaders prepend this file. Requires shaders/f16.wgsl.

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
