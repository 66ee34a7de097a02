// The 48-byte state of one instance slot on the GPU-driven path, in the store's slot order.
// `crowd_frame::ResidentInstance` is its Rust twin (`crowd-gpu/tests/resident_layout.rs` checks the layout), and
// `ResidentInstance::decode` mirrors these decoders line for line. It needs `quat.wgsl`; other shaders prepend it.

struct ResidentInstance {
    // World position.
    position: vec3<f32>,
    // Uniform scale, positive.
    scale: f32,
    // Unit quaternion (w >= 0) as four snorm16: (x, y) in .x, (z, w) in .y, low half first.
    rotation: vec2<u32>,
    // RGBA8 unorm tint, red in the low byte.
    tint: u32,
    // The clip (bits 0..15; 0x7fff: an empty slot), drawn by the CPU (bit 15), the fade target (bits 16..32;
    // 0xffff: none).
    clips: u32,
    // When the clip started, in the animation clock's seconds.
    start_time: f32,
    // Playback speed.
    speed: f32,
    // When the crossfade started.
    fade_start: f32,
    // How long the crossfade lasts.
    fade_length: f32,
}

// The instance holding a slot, as its store handle (`crowd_frame::ResidentOwner`): index 0xffffffff for an empty
// slot; a live handle's generation is odd, never 0.
struct ResidentOwner {
    index: u32,
    generation: u32,
}

const RESIDENT_EMPTY_CLIP: u32 = 0x7fffu;
const RESIDENT_NO_FADE: u32 = 0xffffu;

fn resident_clip(r: ResidentInstance) -> u32 {
    return r.clips & 0x7fffu;
}

fn resident_fade_target(r: ResidentInstance) -> u32 {
    return r.clips >> 16u;
}

fn resident_cpu_drawn(r: ResidentInstance) -> bool {
    return (r.clips & 0x8000u) != 0u;
}

fn resident_rotation(r: ResidentInstance) -> vec4<f32> {
    return unpack_snorm16_quat(r.rotation);
}
