// A ground plane lit by the sun and the sky, with the shadows of a depth map rendered from the sun: the demo's
// ground, and an example of reading a shadow map that `CrowdRenderer::render_view_depth_only` wrote.
//
// The shadow map has the crowd renderer's sample count. This file declares it multisampled; a user with one sample
// replaces `texture_depth_multisampled_2d` by `texture_depth_2d` (the third argument of `textureLoad` is then the
// mip level, 0). Each fragment takes the 3 x 3 texels around it (percentage-closer filtering over sample 0).

struct GroundUniform {
    // World to clip space of the main view.
    view_proj: mat4x4<f32>,
    // World to clip space of the sun's (orthographic) view, as the shadow map was rendered.
    light_view_proj: mat4x4<f32>,
    // xyz: the unit direction towards the sun.
    sun_direction: vec4<f32>,
    // rgb: the sun's linear colour times intensity.
    sun_color: vec4<f32>,
    // rgb: the light from the sky.
    sky_color: vec4<f32>,
    // x, y: the plane's centre (world x and z); z: its half size; w: its height.
    plane: vec4<f32>,
    // x: the checker square's side; y: the depth bias; z: 1 with a shadow map, 0 without.
    params: vec4<f32>,
};

@group(0) @binding(0) var<uniform> ground: GroundUniform;
@group(0) @binding(1) var shadow_map: texture_depth_multisampled_2d;

struct GroundOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
};

@vertex
fn vs_ground(@builtin(vertex_index) index: u32) -> GroundOut {
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(1.0, -1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(-1.0, 1.0), vec2<f32>(1.0, 1.0),
    );
    let c = corners[index];
    let world = vec3<f32>(
        ground.plane.x + c.x * ground.plane.z,
        ground.plane.w,
        ground.plane.y + c.y * ground.plane.z,
    );
    var out: GroundOut;
    out.clip = ground.view_proj * vec4<f32>(world, 1.0);
    out.world = world;
    return out;
}

// The share of the sun that reaches `world`: 1 in full light, 0 in full shadow.
fn sunlight(world: vec3<f32>) -> f32 {
    if (ground.params.z == 0.0) {
        return 1.0;
    }
    let p = ground.light_view_proj * vec4<f32>(world, 1.0);
    let ndc = p.xyz / p.w;
    let uv = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    if (any(uv < vec2<f32>(0.0)) || any(uv >= vec2<f32>(1.0)) || ndc.z >= 1.0) {
        return 1.0;
    }
    let size = vec2<i32>(textureDimensions(shadow_map));
    let texel = vec2<i32>(uv * vec2<f32>(size));
    var lit = 0.0;
    for (var dy = -1; dy <= 1; dy++) {
        for (var dx = -1; dx <= 1; dx++) {
            let t = clamp(texel + vec2<i32>(dx, dy), vec2<i32>(0), size - vec2<i32>(1));
            let depth = textureLoad(shadow_map, t, 0);
            lit += select(0.0, 1.0, ndc.z - ground.params.y <= depth);
        }
    }
    return lit / 9.0;
}

@fragment
fn fs_ground(in: GroundOut) -> @location(0) vec4<f32> {
    // A checker of two greens, fading to their mean where a square is smaller than a few pixels.
    let square = ground.params.x;
    let cell = floor(in.world.xz / square);
    let odd = (i32(cell.x) + i32(cell.y)) & 1;
    let blur = clamp(max(fwidth(in.world.x), fwidth(in.world.z)) / square * 2.0, 0.0, 1.0);
    let light_green = vec3<f32>(0.31, 0.36, 0.19);
    let dark_green = vec3<f32>(0.2, 0.24, 0.12);
    let checker = select(light_green, dark_green, odd == 1);
    let albedo = mix(checker, 0.5 * (light_green + dark_green), blur);
    let sun = max(ground.sun_direction.y, 0.0) * ground.sun_color.rgb * sunlight(in.world);
    return vec4<f32>(albedo * (sun + ground.sky_color.rgb), 1.0);
}
