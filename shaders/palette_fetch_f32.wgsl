// The renderer's palette bindings in skin-pack's f32 3x4 format (PaletteEntry, 48 bytes), and the one function
// crowd_skin.wgsl reads them through. Requires shaders/palette.wgsl.

// Group 0, binding 2: the pooled slot palettes, slot-major (entry = slot * joint_count + joint).
@group(0) @binding(2) var<storage, read> pool_palettes: array<PaletteEntry>;
// Group 0, binding 3: the unique palettes; a unique record names its first entry.
@group(0) @binding(3) var<storage, read> unique_palettes: array<PaletteEntry>;

// The rows of entry i of the pooled (pooled = true) or unique palettes.
fn palette_rows(pooled: bool, i: u32) -> array<vec4<f32>, 3> {
    if (pooled) {
        return pool_palettes[i].rows;
    }
    return unique_palettes[i].rows;
}
