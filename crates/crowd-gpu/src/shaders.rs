//! The only place that loads WGSL source: every file in `shaders/` is registered here.

/// A WGSL shader module, labelled with its file name.
#[derive(Clone, Copy, Debug)]
pub struct ShaderSource {
    /// The file name in `shaders/`, used as the module's label.
    pub file: &'static str,
    /// The WGSL source.
    pub source: &'static str,
}

/// Declares `PaletteEntry`, the 48-byte 3×4 skinning matrix, and `palette_transform_point`.
/// Other shaders prepend it.
pub const PALETTE: ShaderSource = ShaderSource {
    file: "palette.wgsl",
    source: include_str!("../../../shaders/palette.wgsl"),
};

/// Declares the f16 palette formats `Mat3x4F16` (24 B) and `QtF16` (16 B) and their decoders
/// `mat3x4_f16_rows` and `qt_f16_rows`, which return `PaletteEntry` rows. Other shaders prepend its structs and
/// functions; its bindings and entry point exist so that naga validates the decoders.
pub const PALETTE_F16: ShaderSource = ShaderSource {
    file: "palette_f16.wgsl",
    source: include_str!("../../../shaders/palette_f16.wgsl"),
};

/// Declares `InstanceRecord`, the 32-byte record of each visible pooled or unique instance
/// (`crowd_frame::InstanceRecord`), and its decoders. Other shaders prepend it; its binding exists so that naga checks
/// the array stride.
pub const INSTANCE_RECORD: ShaderSource = ShaderSource {
    file: "instance_record.wgsl",
    source: include_str!("../../../shaders/instance_record.wgsl"),
};

/// Declares the decoders of the packed mesh vertex attributes (`crate::quantize`): octahedral normals, unorm16 and
/// f16 UVs, u8 and u16 joints, unorm8 weights. Other shaders prepend it; its bindings and entry point exist so that
/// naga validates the decoders.
pub const VERTEX_FORMATS: ShaderSource = ShaderSource {
    file: "vertex_formats.wgsl",
    source: include_str!("../../../shaders/vertex_formats.wgsl"),
};

/// Every shader in `shaders/`. A test checks that this list matches the folder.
pub const ALL: &[ShaderSource] = &[PALETTE, PALETTE_F16, INSTANCE_RECORD, VERTEX_FORMATS];
