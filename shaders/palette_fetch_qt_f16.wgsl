// The renderer's palette bindings in skin-pack's QtF16 format (16 bytes), and the one function crowd_skin.wgsl
// reads them through. The packet's palettes are in instance space with translation origin zero.
// Requires shaders/palette_f16.wgsl.

// Group 0, binding 2: the pooled slot palettes, slot-major (entry = slot * joint_count + joint).
@group(0) @binding(2) var<storage, read> pool_palettes: array<QtF16>;
// Group 0, binding 3: the unique palettes; a unique record names its first entry.
@group(0) @binding(3) var<storage, read> unique_palettes: array<QtF16>;

// The rows of entry i of the pooled (pooled = true) or unique palettes.
fn palette_rows(pooled: bool, i: u32) -> array<vec4<f32>, 3> {
    if (pooled) {
        return qt_f16_rows(pool_palettes[i], vec3<f32>(0.0));
    }
    return qt_f16_rows(unique_palettes[i], vec3<f32>(0.0));
}
