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

/// Every shader in `shaders/`. A test checks that this list matches the folder.
pub const ALL: &[ShaderSource] = &[PALETTE];
