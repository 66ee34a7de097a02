// The frame uniform that the crowd renderer's draws share (crowd_gpu's FrameUniform, 144 bytes; a test checks the
// layout), and the light it describes. crowd_skin.wgsl and crowd_procedural.wgsl require it.

struct FrameUniform {
    view_proj: mat4x4<f32>,
    // xyz: the unit direction towards the sun.
    sun_direction: vec4<f32>,
    // rgb: the sun's linear colour times intensity.
    sun_color: vec4<f32>,
    // rgb: the hemisphere light from above and from below.
    sky_color: vec4<f32>,
    ground_color: vec4<f32>,
    // Entries per palette (skinned draws).
    joint_count: u32,
    // 0 shaded, 1 instance id, 2 LOD, 3 tier, 4 normals (crowd_gpu::DebugView; procedural draws are always shaded).
    view: u32,
    pad: vec2<u32>,
}

// The light that reaches a surface of unit normal `n` under frame `f`: the sun (Lambert) plus the hemisphere
// light, mixed from the ground's colour below to the sky's above.
fn frame_light(f: FrameUniform, n: vec3<f32>) -> vec3<f32> {
    let sun = max(dot(n, f.sun_direction.xyz), 0.0) * f.sun_color.rgb;
    return sun + mix(f.ground_color.rgb, f.sky_color.rgb, 0.5 + 0.5 * n.y);
}
