// The skinning palette entry: a 3x4 affine matrix as three row vectors, 48 bytes.
// It matches skin_pack::PaletteEntry; crowd-gpu's tests check the size and offsets with naga.
// A point transforms as p' = (dot(r0, p1), dot(r1, p1), dot(r2, p1)) with p1 = (p, 1).
// mat4x3<f32> is not used because it takes 64 bytes.

struct PaletteEntry {
    rows: array<vec4<f32>, 3>,
}

// The palette of every instance, joint-major within an instance: entry = instance * joint_count + joint.
// Group 0, binding 0: read-only storage, written by the CPU upload (skin-pack's flattened palettes).
@group(0) @binding(0) var<storage, read> palette: array<PaletteEntry>;

// Transforms a point (w = 1) by a palette entry.
fn palette_transform_point(e: PaletteEntry, p: vec3<f32>) -> vec3<f32> {
    let p1 = vec4<f32>(p, 1.0);
    return vec3<f32>(dot(e.rows[0], p1), dot(e.rows[1], p1), dot(e.rows[2], p1));
}

// Transforms a direction (w = 0) by a palette entry.
fn palette_transform_vector(e: PaletteEntry, v: vec3<f32>) -> vec3<f32> {
    let v0 = vec4<f32>(v, 0.0);
    return vec3<f32>(dot(e.rows[0], v0), dot(e.rows[1], v0), dot(e.rows[2], v0));
}

// A compute entry point that skins points by one palette entry each, so that the module has a
// stage that uses the binding and naga validates the whole path.
// Group 0, binding 1: points in, (x, y, z, joint index as f32 bits) per element.
@group(0) @binding(1) var<storage, read> points_in: array<vec4<f32>>;
// Group 0, binding 2: skinned points out, one per input point.
@group(0) @binding(2) var<storage, read_write> points_out: array<vec4<f32>>;

@compute @workgroup_size(64)
fn skin_points(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= arrayLength(&points_in)) {
        return;
    }
    let p = points_in[i];
    let joint = min(bitcast<u32>(p.w), arrayLength(&palette) - 1u);
    points_out[i] = vec4<f32>(palette_transform_point(palette[joint], p.xyz), 1.0);
}
