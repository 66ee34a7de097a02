//! The only place that loads WGSL source: every file in `shaders/` is registered here.

/// A WGSL shader file, labelled with its file name, and the files it needs prepended.
#[derive(Clone, Copy, Debug)]
pub struct ShaderSource {
    /// The file name in `shaders/`, used as the module's label.
    pub file: &'static str,
    /// The WGSL source of the file itself.
    pub source: &'static str,
    /// The files whose declarations it uses, prepended in this order by [`ShaderSource::composed`].
    pub requires: &'static [ShaderSource],
}

impl ShaderSource {
    /// The module's whole source: each required file (with its own requirements, first) and then this file.
    /// A file required twice appears once.
    pub fn composed(&self) -> String {
        let mut files: Vec<&ShaderSource> = Vec::new();
        fn visit<'a>(s: &'a ShaderSource, files: &mut Vec<&'a ShaderSource>) {
            for r in s.requires {
                visit(r, files);
            }
            if !files.iter().any(|f| f.file == s.file) {
                files.push(s);
            }
        }
        visit(self, &mut files);
        files.iter().map(|f| f.source).collect::<Vec<_>>().join("\n")
    }
}

/// Declares `f16_to_f32` and `unpack_halves`: f16 codes to f32 with integer operations, exactly as
/// `unpack2x16float` decodes them but with no capability. Shaders that decode halves require it.
pub const F16: ShaderSource = ShaderSource {
    file: "f16.wgsl",
    source: include_str!("../../../shaders/f16.wgsl"),
    requires: &[],
};

/// Declares `PaletteEntry`, the 48-byte 3×4 skinning matrix, and `palette_transform_point`.
/// Other shaders prepend it.
pub const PALETTE: ShaderSource = ShaderSource {
    file: "palette.wgsl",
    source: include_str!("../../../shaders/palette.wgsl"),
    requires: &[],
};

/// Declares the f16 palette formats `Mat3x4F16` (24 B) and `QtF16` (16 B) and their decoders
/// `mat3x4_f16_rows` and `qt_f16_rows`, which return `PaletteEntry` rows. Other shaders prepend its structs and
/// functions; its bindings and entry point exist so that naga validates the decoders.
pub const PALETTE_F16: ShaderSource = ShaderSource {
    file: "palette_f16.wgsl",
    source: include_str!("../../../shaders/palette_f16.wgsl"),
    requires: &[F16],
};

/// Declares `InstanceRecord`, the 32-byte record of each visible pooled or unique instance
/// (`crowd_frame::InstanceRecord`), and its decoders. Other shaders prepend it; its binding exists so that naga checks
/// the array stride.
pub const INSTANCE_RECORD: ShaderSource = ShaderSource {
    file: "instance_record.wgsl",
    source: include_str!("../../../shaders/instance_record.wgsl"),
    requires: &[],
};

/// Declares the decoders of the packed mesh vertex attributes (`crate::quantize`): octahedral normals, unorm16 and
/// f16 UVs, u8 and u16 joints, unorm8 weights. Other shaders prepend it; its bindings and entry point exist so that
/// naga validates the decoders.
pub const VERTEX_FORMATS: ShaderSource = ShaderSource {
    file: "vertex_formats.wgsl",
    source: include_str!("../../../shaders/vertex_formats.wgsl"),
    requires: &[F16],
};

/// Every shader in `shaders/`. A test checks that this list matches the folder.
pub const ALL: &[ShaderSource] = &[F16, PALETTE, PALETTE_F16, INSTANCE_RECORD, VERTEX_FORMATS];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composed_sources_prepend_each_requirement_once() {
        let composed = PALETTE_F16.composed();
        assert!(composed.starts_with(F16.source));
        assert!(composed.ends_with(PALETTE_F16.source));
        assert_eq!(composed.matches("fn f16_to_f32").count(), 1);
        assert_eq!(PALETTE.composed(), PALETTE.source);
    }
}
