//! Checks `InstanceRecord` in `shaders/instance_record.wgsl` against its Rust twin `crowd_frame::InstanceRecord`
//! with naga: the struct's size, each member's name, offset and type, and the stride of the storage array.

mod common;

use std::mem::offset_of;

use crowd_frame::InstanceRecord;
use crowd_gpu::shaders::{INSTANCE_RECORD, PALETTE_FETCH_F32};

const fn vector(size: naga::VectorSize, scalar: naga::Scalar) -> naga::TypeInner {
    naga::TypeInner::Vector { size, scalar }
}

#[test]
fn instance_record_matches_crowd_frame() {
    let module = common::module(&INSTANCE_RECORD);
    let (span, members) = common::struct_layout(&module, "InstanceRecord");
    assert_eq!(
        span as usize,
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
    for ((member, offset, inner), (name, want_offset, want_inner)) in members.into_iter().zip(expected) {
        assert_eq!(member.as_deref(), Some(name));
        assert_eq!(offset as usize, want_offset, "{name} offset differs");
        assert_eq!(inner, want_inner, "{name} type differs");
    }
    assert_eq!(
        common::global_stride(&common::skin_module(&PALETTE_FETCH_F32), "records") as usize,
        size_of::<InstanceRecord>()
    );
}
