// The skinning palette entry: a 3x4 affine matrix as three row vectors, 48 bytes.
// It matches skin_pack::PaletteEntry; crowd-gpu's tests check the size and offsets with naga.
// A point transforms as p' = (dot(r0, p1), dot(r1, p1), dot(r2, p1)) with p1 = (p, 1).
// mat4x3<f32> is not used because it takes 64 bytes.

struct PaletteEntry {
    rows: array<vec4<f32>, 3>,
}

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
