//! Checks `InstanceRecord` in `shaders/instance_record.wgsl` against its Rust twin `crowd_frame::InstanceRecord`
//! with naga: the struct's size, each member's offset and type, and the stride of the storage array.

use std::mem::offset_of;

use crowd_frame::InstanceRecord;
use crowd_gpu::shaders::INSTANCE_RECORD;

fn module() -> naga::Module {
    let source = INSTANCE_RECORD.source;
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("instance_record.wgsl does not parse:\n{}", e.emit_to_string(source)));
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
        .validate(&module)
        .unwrap_or_else(|e| panic!("instance_record.wgsl does not validate:\n{}", e.emit_to_string(source)));
    module
}

const fn vector(size: naga::VectorSize, scalar: naga::Scalar) -> naga::TypeInner {
    naga::TypeInner::Vector { size, scalar }
}

#[test]
fn instance_record_matches_crowd_frame() {
    let module = module();
    let (_, ty) = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some("InstanceRecord"))
        .expect("instance_record.wgsl declares InstanceRecord");
    let naga::TypeInner::Struct { members, span } = &ty.inner else {
        panic!("InstanceRecord is not a struct")
    };
    assert_eq!(
        *span as usize,
        size_of::<InstanceRecord>(),
        "InstanceRecord size differs"
    );
    let u32_ = naga::TypeInner::Scalar(naga::Scalar::U32);
    let expected = [
        (
            "position",
            offset_of!(InstanceRecord, position),
            vector(naga::VectorSize::Tri, naga::Scalar::F32),
        ),
        (
            "scale_fraction",
            offset_of!(InstanceRecord, scale_fraction),
            u32_.clone(),
        ),
        (
            "rotation",
            offset_of!(InstanceRecord, rotation),
            vector(naga::VectorSize::Bi, naga::Scalar::U32),
        ),
        ("anim", offset_of!(InstanceRecord, anim), u32_.clone()),
        ("tint", offset_of!(InstanceRecord, tint), u32_),
    ];
    assert_eq!(members.len(), expected.len());
    for (m, (name, offset, inner)) in members.iter().zip(expected) {
        assert_eq!(m.name.as_deref(), Some(name));
        assert_eq!(m.offset as usize, offset, "{name} offset differs");
        assert_eq!(module.types[m.ty].inner, inner, "{name} type differs");
    }
    let (_, var) = module
        .global_variables
        .iter()
        .find(|(_, v)| v.name.as_deref() == Some("instance_records"))
        .expect("instance_record.wgsl declares instance_records");
    let naga::TypeInner::Array { stride, .. } = module.types[var.ty].inner else {
        panic!("instance_records is not an array")
    };
    assert_eq!(stride as usize, size_of::<InstanceRecord>());
}
