//! Checks the layout of the f16 palette formats in `shaders/palette_f16.wgsl` against their Rust twins
//! `skin_pack::Mat3x4F16` and `skin_pack::QtF16` with naga: struct sizes, member offsets, and the stride of the
//! storage arrays the renderer binds.

mod common;

use crowd_gpu::shaders::{PALETTE_F16, PALETTE_FETCH_MAT3X4_F16, PALETTE_FETCH_QT_F16};

fn module() -> naga::Module {
    common::module(&PALETTE_F16)
}

/// The span and the (offset, type) of each member of the struct named `name`.
fn struct_layout(module: &naga::Module, name: &str) -> (u32, Vec<(u32, naga::TypeInner)>) {
    let (span, members) = common::struct_layout(module, name);
    (span, members.into_iter().map(|(_, offset, ty)| (offset, ty)).collect())
}

use common::global_stride;

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
        global_stride(&common::skin_module(&PALETTE_FETCH_MAT3X4_F16), "pool_palettes") as usize,
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
        global_stride(&common::skin_module(&PALETTE_FETCH_QT_F16), "pool_palettes") as usize,
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
