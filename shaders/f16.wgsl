// f16 codes to f32 with integer operations that give exactly what unpack2x16float gives (no SHADER_F16 and no
// SHADER_FLOAT16_IN_FLOAT32 capability needed). Shaders that decode halves prepend this file.

// One f16 code (the low 16 bits of h) to f32, exactly: unpack2x16float(h).x for every code, including
// subnormals (m * 2^-24, exact in f32), infinities and NaNs. naga validates unpack2x16float only with the
// SHADER_FLOAT16_IN_FLOAT32 capability, which every WebGPU-compliant adapter has but the shader tests do not grant;
// these few integer operations give the same bits on every device and never flush subnormal halves.
fn f16_to_f32(h: u32) -> f32 {
    let bits_sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    let normal = bitcast<f32>(bits_sign | ((e + 112u) << 23u) | (m << 13u));
    let special = bitcast<f32>(bits_sign | 0x7f800000u | (m << 13u));
    let sub = bitcast<f32>(bits_sign | bitcast<u32>(f32(m) * 5.9604644775390625e-8));
    return select(select(normal, special, e == 31u), sub, e == 0u);
}

// unpack2x16float: the low half is component 0, the high half component 1.
fn unpack_halves(w: u32) -> vec2<f32> {
    return vec2<f32>(f16_to_f32(w & 0xffffu), f16_to_f32(w >> 16u));
}
