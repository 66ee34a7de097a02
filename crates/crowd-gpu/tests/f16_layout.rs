//! Checks the layout of the f16 palette formats in `shaders/palette_f16.wgsl` against their Rust twins
//! `skin_pack::Mat3x4F16` and `skin_pack::QtF16` with naga: struct sizes, member offsets, and the stride of the
//! storage arrays the renderer binds.

use crowd_gpu::shaders::PALETTE_F16;

fn module() -> naga::Module {
    let source = PALETTE_F16.source;
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("palette_f16.wgsl does not parse:\n{}", e.emit_to_string(source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("palette_f16.wgsl does not validate:\n{}", e.emit_to_string(source)));
    module
}

/// The span and the (offset, type) of each member of the struct named `name`.
fn struct_layout(module: &naga::Module, name: &str) -> (u32, Vec<(u32, naga::TypeInner)>) {
    let (_, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("palette_f16.wgsl declares {name}"));
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("{name} is not a struct")
    };
    (
        *span,
        members
            .iter()
            .map(|m| (m.offset, module.types[m.ty].inner.clone()))
            .collect(),
    )
}

/// The array stride of the storage global named `name`.
fn global_stride(module: &naga::Module, name: &str) -> u32 {
    let (_, var) = module
        .global_variables
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some(name))
        .unwrap_or_else(|| panic!("palette_f16.wgsl declares {name}"));
    let naga::TypeInner::Array { stride, .. } = module.types[var.ty].inner else {
        panic!("{name} is not an array")
    };
    stride
}

const VEC2_U32: naga::TypeInner = naga::TypeInner::Vector {
    size: naga::VectorSize::Bi,
    scalar: naga::Scalar::U32,
};

#[test]
fn mat3x4_f16_matches_skin_pack() {
    let module = module();
    let (span, members) = struct_layout(&module, "Mat3x4F16");
    assert_eq!(
        span as usize,
        size_of::<skin_pack::Mat3x4F16>(),
        "Mat3x4F16 size differs"
    );
    assert_eq!(span, 24);
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].0, 0);
    let naga::TypeInner::Array { base, size, stride } = members[0].1 else {
        panic!("Mat3x4F16.rows is not an array")
    };
    assert_eq!(module.types[base].inner, VEC2_U32, "each row is two words");
    assert_eq!(stride, 8);
    assert_eq!(
        size,
        naga::ArraySize::Constant(std::num::NonZeroU32::new(3).expect("3 is non-zero"))
    );
    // An array of them has the Rust type's stride, although WGSL aligns the struct to 8 and Rust to 4.
    assert_eq!(
        global_stride(&module, "palette_mat3x4") as usize,
        size_of::<skin_pack::Mat3x4F16>()
    );
    // The Rust rows have the same shape: three rows of two words.
    let rust = skin_pack::Mat3x4F16::default();
    assert_eq!(rust.rows.len(), 3);
    assert_eq!(rust.rows[0].len(), 2);
}

#[test]
fn qt_f16_matches_skin_pack() {
    let module = module();
    let (span, members) = struct_layout(&module, "QtF16");
    assert_eq!(span as usize, size_of::<skin_pack::QtF16>(), "QtF16 size differs");
    assert_eq!(span, 16);
    assert_eq!(members, vec![(0, VEC2_U32), (8, VEC2_U32)]);
    assert_eq!(std::mem::offset_of!(skin_pack::QtF16, rotation), 0);
    assert_eq!(std::mem::offset_of!(skin_pack::QtF16, translation_scale), 8);
    assert_eq!(
        global_stride(&module, "palette_qt") as usize,
        size_of::<skin_pack::QtF16>()
    );
}

#[test]
fn decoders_return_palette_entry_rows() {
    let module = module();
    for name in ["mat3x4_f16_rows", "qt_f16_rows"] {
        let (_, f) = module
            .functions
            .iter()
            .find(|(_, f)| f.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("palette_f16.wgsl declares {name}"));
        let result = f.result.as_ref().unwrap_or_else(|| panic!("{name} returns a value"));
        let naga::TypeInner::Array { base, size, stride } = module.types[result.ty].inner else {
            panic!("{name} does not return an array")
        };
        assert_eq!(
            module.types[base].inner,
            naga::TypeInner::Vector {
                size: naga::VectorSize::Quad,
                scalar: naga::Scalar::F32
            }
        );
        assert_eq!(stride, 16, "{name}: rows are vec4<f32>, as in PaletteEntry");
        assert_eq!(
            size,
            naga::ArraySize::Constant(std::num::NonZeroU32::new(3).expect("3 is non-zero"))
        );
    }
}
