// The skinning palette entry: a 3x4 affine matrix as three row vectors, 48 bytes.
// It matches skin_pack::PaletteEntry; crowd-gpu's tests check the size and offsets with naga.
// A point transforms as p' = (dot(r0, p1), dot(r1, p1), dot(r2, p1)) with p1 = (p, 1).
// mat4x3<f32> is not used because it takes 64 bytes.

struct PaletteEntry {
    rows: array<vec4<f32>, 3>,
}
