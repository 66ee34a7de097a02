// The 32-byte instance record that the renderer reads for each visible pooled, unique or procedural instance.
// `crowd_frame::InstanceRecord` is its Rust twin (`crowd-gpu/tests/instance_record_layout.rs` checks the layout),
// and `InstanceRecord::decode` mirrors these decoders line for line. It needs `quat.wgsl`; other shaders prepend it.

struct InstanceRecord {
    // World position.
    position: vec3<f32>,
    // Uniform scale as f16 (low 16 bits, a normal positive half); pooled: the weight of slot 1 as unorm16 (high).
    scale_fraction: u32,
    // Unit quaternion (w >= 0) as four snorm16: (x, y) in .x, (z, w) in .y, low half first.
    rotation: vec2<u32>,
    // Pooled: slot 0 (low 16 bits) and slot 1 (high 16 bits); unique: the first palette entry; procedural: the
    // phase in turns (low 16 bits) and the amplitude (high 16 bits), each as unorm16.
    anim: u32,
    // RGBA8 unorm tint, red in the low byte.
    tint: u32,
}

fn record_rotation(r: InstanceRecord) -> vec4<f32> {
    return unpack_snorm16_quat(r.rotation);
}

// A normal positive half to f32: the exponent rebiased from 15 to 127, the significand widened; exact.
fn record_scale(r: InstanceRecord) -> f32 {
    return bitcast<f32>(((r.scale_fraction & 0x7fffu) << 13u) + 0x38000000u);
}

fn record_fraction(r: InstanceRecord) -> f32 {
    return unpack2x16unorm(r.scale_fraction).y;
}

fn record_slots(r: InstanceRecord) -> vec2<u32> {
    return vec2<u32>(r.anim & 0xffffu, r.anim >> 16u);
}

fn record_palette(r: InstanceRecord) -> u32 {
    return r.anim;
}

// Procedural: the phase in turns, in [0, 1] (1 is the same turn as 0).
fn record_phase(r: InstanceRecord) -> f32 {
    return unpack2x16unorm(r.anim).x;
}

// Procedural: the fraction of the mesh's largest amplitude, in [0, 1].
fn record_amplitude(r: InstanceRecord) -> f32 {
    return unpack2x16unorm(r.anim).y;
}

fn record_tint(r: InstanceRecord) -> vec4<f32> {
    return unpack4x8unorm(r.tint);
}

// Model space to world space: rotate by the record's quaternion, scale, then move to its position.
fn record_transform_point(r: InstanceRecord, p: vec3<f32>) -> vec3<f32> {
    return r.position + record_scale(r) * quat_rotate(record_rotation(r), p);
}
