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
        compose(&[self])
    }
}

/// The source of `shaders` in order, each preceded by its requirements; a file required twice appears once.
pub fn compose(shaders: &[&ShaderSource]) -> String {
    let mut files: Vec<&ShaderSource> = Vec::new();
    fn visit<'a>(s: &'a ShaderSource, files: &mut Vec<&'a ShaderSource>) {
        for r in s.requires {
            visit(r, files);
        }
        if !files.iter().any(|f| f.file == s.file) {
            files.push(s);
        }
    }
    for s in shaders {
        visit(s, &mut files);
    }
    files.iter().map(|f| f.source).collect::<Vec<_>>().join("\n")
}

/// Declares `f16_to_f32` and `unpack_halves`: f16 codes to f32 with integer operations, exactly as
/// `unpack2x16float` decodes them but with no capability. Shaders that decode halves require it.
pub const F16: ShaderSource = ShaderSource {
    file: "f16.wgsl",
    source: include_str!("../../../shaders/f16.wgsl"),
    requires: &[],
};

/// Declares `PaletteEntry`, the 48-byte 3×4 skinning matrix (`crowd_skin.wgsl`'s `rows_point` applies its rows).
/// Other shaders prepend it.
pub const PALETTE: ShaderSource = ShaderSource {
    file: "palette.wgsl",
    source: include_str!("../../../shaders/palette.wgsl"),
    requires: &[],
};

/// Declares the f16 palette formats `Mat3x4F16` (24 B) and `QtF16` (16 B) and their decoders
/// `mat3x4_f16_rows` and `qt_f16_rows`, which return `PaletteEntry` rows. Other shaders prepend it.
pub const PALETTE_F16: ShaderSource = ShaderSource {
    file: "palette_f16.wgsl",
    source: include_str!("../../../shaders/palette_f16.wgsl"),
    requires: &[F16],
};

/// Declares `quat_rotate` and `unpack_snorm16_quat`, the one quaternion rotation and the one snorm16 quaternion
/// decoder of every shader. Other shaders prepend it.
pub const QUAT: ShaderSource = ShaderSource {
    file: "quat.wgsl",
    source: include_str!("../../../shaders/quat.wgsl"),
    requires: &[],
};

/// Declares `InstanceRecord`, the 32-byte record of each visible pooled or unique instance
/// (`crowd_frame::InstanceRecord`), and its decoders. Other shaders prepend it.
pub const INSTANCE_RECORD: ShaderSource = ShaderSource {
    file: "instance_record.wgsl",
    source: include_str!("../../../shaders/instance_record.wgsl"),
    requires: &[QUAT],
};

/// Declares `ResidentInstance`, the 48-byte state of an instance slot on the GPU-driven path
/// (`crowd_frame::ResidentInstance`), and its decoders. Other shaders prepend it.
pub const RESIDENT_INSTANCE: ShaderSource = ShaderSource {
    file: "resident_instance.wgsl",
    source: include_str!("../../../shaders/resident_instance.wgsl"),
    requires: &[QUAT],
};

/// The GPU-driven path's upload: compute entry point `scatter_resident` ([`crate::ResidentBuffer`]).
pub const RESIDENT_SCATTER: ShaderSource = ShaderSource {
    file: "resident_scatter.wgsl",
    source: include_str!("../../../shaders/resident_scatter.wgsl"),
    requires: &[QUAT, RESIDENT_INSTANCE],
};

/// The GPU-driven path's culling: compute entry points `classify`, `place` and `scatter` ([`crate::GpuCuller`]).
pub const CROWD_CULL: ShaderSource = ShaderSource {
    file: "crowd_cull.wgsl",
    source: include_str!("../../../shaders/crowd_cull.wgsl"),
    requires: &[QUAT, RESIDENT_INSTANCE],
};

/// Declares the decoders of the packed mesh vertex attributes (`crowd_mesh::quantize`): octahedral normals, unorm16
/// and f16 UVs, u8 and u16 joints, unorm8 weights. Other shaders prepend it.
pub const VERTEX_FORMATS: ShaderSource = ShaderSource {
    file: "vertex_formats.wgsl",
    source: include_str!("../../../shaders/vertex_formats.wgsl"),
    requires: &[F16],
};

/// The renderer's palette bindings (group 0, bindings 2 and 3) in the f32 3×4 format, and `palette_rows`.
pub const PALETTE_FETCH_F32: ShaderSource = ShaderSource {
    file: "palette_fetch_f32.wgsl",
    source: include_str!("../../../shaders/palette_fetch_f32.wgsl"),
    requires: &[PALETTE],
};

/// The renderer's palette bindings in the `Mat3x4F16` format, and `palette_rows`.
pub const PALETTE_FETCH_MAT3X4_F16: ShaderSource = ShaderSource {
    file: "palette_fetch_mat3x4_f16.wgsl",
    source: include_str!("../../../shaders/palette_fetch_mat3x4_f16.wgsl"),
    requires: &[PALETTE_F16],
};

/// The renderer's palette bindings in the `QtF16` format, and `palette_rows`.
pub const PALETTE_FETCH_QT_F16: ShaderSource = ShaderSource {
    file: "palette_fetch_qt_f16.wgsl",
    source: include_str!("../../../shaders/palette_fetch_qt_f16.wgsl"),
    requires: &[PALETTE_F16],
};

/// Declares `FrameUniform`, the frame uniform of the renderer's draws, and `frame_light`, the sun and sky light it
/// describes. The skinned and procedural draws require it.
pub const FRAME: ShaderSource = ShaderSource {
    file: "frame.wgsl",
    source: include_str!("../../../shaders/frame.wgsl"),
    requires: &[],
};

/// The renderer's skinned draw: vertex entry points `vs_joints_u8`, `vs_joints_u16`, the depth-only
/// `vs_depth_joints_u8` and `vs_depth_joints_u16`, and `fs_main`. It needs one of the three palette fetch files
/// prepended ([`crowd_skin_source`]).
pub const CROWD_SKIN: ShaderSource = ShaderSource {
    file: "crowd_skin.wgsl",
    source: include_str!("../../../shaders/crowd_skin.wgsl"),
    requires: &[FRAME, F16, QUAT, INSTANCE_RECORD, RESIDENT_INSTANCE, VERTEX_FORMATS],
};

/// The procedural tier's draw (`vs_main`, the depth-only `vs_depth`, `fs_main`): one mesh instanced from
/// procedural records, undulated per vertex by the record's phase and amplitude ([`crate::ProceduralRenderer`]).
pub const CROWD_PROCEDURAL: ShaderSource = ShaderSource {
    file: "crowd_procedural.wgsl",
    source: include_str!("../../../shaders/crowd_procedural.wgsl"),
    requires: &[FRAME, QUAT, INSTANCE_RECORD],
};

/// A ground plane under the sun and the sky with a shadow map's shadows (`vs_ground`, `fs_ground`): the demo's
/// ground, and an example of reading the depth that [`crate::CrowdRenderer::render_view_depth_only`] wrote.
pub const GROUND_SHADOWED: ShaderSource = ShaderSource {
    file: "ground_shadowed.wgsl",
    source: include_str!("../../../shaders/ground_shadowed.wgsl"),
    requires: &[],
};

/// The palette fetch files, one per palette format: f32 3×4, `Mat3x4F16`, `QtF16`.
pub const PALETTE_FETCHES: [ShaderSource; 3] = [PALETTE_FETCH_F32, PALETTE_FETCH_MAT3X4_F16, PALETTE_FETCH_QT_F16];

/// The whole source of the renderer's module with the palette fetch file `fetch`.
pub fn crowd_skin_source(fetch: &ShaderSource) -> String {
    compose(&[fetch, &CROWD_SKIN])
}

/// Every shader in `shaders/`. A test checks that this list matches the folder.
pub const ALL: &[ShaderSource] = &[
    F16,
    PALETTE,
    PALETTE_F16,
    QUAT,
    INSTANCE_RECORD,
    RESIDENT_INSTANCE,
    RESIDENT_SCATTER,
    CROWD_CULL,
    VERTEX_FORMATS,
    PALETTE_FETCH_F32,
    PALETTE_FETCH_MAT3X4_F16,
    PALETTE_FETCH_QT_F16,
    FRAME,
    CROWD_SKIN,
    CROWD_PROCEDURAL,
    GROUND_SHADOWED,
];

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
