//! Checks the GPU-driven path's structs in `shaders/resident_instance.wgsl` and `shaders/crowd_cull.wgsl` against
//! their Rust twins with naga: each struct's size and each member's name, offset (and for the segment word, type),
//! and the storage strides.

mod common;

use std::mem::offset_of;

use crowd_frame::{ResidentInstance, ResidentOwner};
use crowd_gpu::shaders::{CROWD_CULL, RESIDENT_INSTANCE};
use crowd_gpu::{ClipBoundsGpu, CullViewUniform, DrawSlot};

/// Asserts that struct `name` of `module` has `size` bytes and exactly the members `(name, offset)` of `want`.
fn check(module: &naga::Module, name: &str, size: usize, want: &[(&str, usize)]) {
    let (span, members) = common::struct_layout(module, name);
    assert_eq!(span as usize, size, "{name} size differs");
    let got: Vec<(String, usize)> = members
        .into_iter()
        .map(|(n, o, _)| (n.unwrap_or_default(), o as usize))
        .collect();
    let want: Vec<(String, usize)> = want.iter().map(|&(n, o)| (n.to_owned(), o)).collect();
    assert_eq!(got, want, "{name} members differ");
}

#[test]
fn resident_instance_matches_crowd_frame() {
    let module = common::module(&RESIDENT_INSTANCE);
    check(
        &module,
        "ResidentInstance",
        size_of::<ResidentInstance>(),
        &[
            ("position", offset_of!(ResidentInstance, position)),
            ("scale", offset_of!(ResidentInstance, scale)),
            ("rotation", offset_of!(ResidentInstance, rotation)),
            ("tint", offset_of!(ResidentInstance, tint)),
            ("clips", offset_of!(ResidentInstance, clips)),
            ("start_time", offset_of!(ResidentInstance, start_time)),
            ("speed", offset_of!(ResidentInstance, speed)),
            ("fade_start", offset_of!(ResidentInstance, fade_start)),
            ("fade_length", offset_of!(ResidentInstance, fade_length)),
        ],
    );
    check(
        &module,
        "ResidentOwner",
        size_of::<ResidentOwner>(),
        &[
            ("index", offset_of!(ResidentOwner, index)),
            ("generation", offset_of!(ResidentOwner, generation)),
        ],
    );
    assert_eq!(size_of::<ResidentInstance>(), crowd_frame::RESIDENT_INSTANCE_SIZE);
}

#[test]
fn the_cull_shader_structs_match_crowd_gpu() {
    let module = common::module(&CROWD_CULL);
    check(
        &module,
        "CullView",
        size_of::<CullViewUniform>(),
        &[
            ("planes", offset_of!(CullViewUniform, planes)),
            ("depth_plane", offset_of!(CullViewUniform, depth_plane)),
            ("proj_scale", offset_of!(CullViewUniform, proj_scale)),
            ("slot_count", offset_of!(CullViewUniform, slot_count)),
            ("lod_count", offset_of!(CullViewUniform, lod_count)),
            ("draw_count", offset_of!(CullViewUniform, draw_count)),
            ("lod_lo", offset_of!(CullViewUniform, lod_lo)),
            ("lod_hi", offset_of!(CullViewUniform, lod_hi)),
            ("tier_lo", offset_of!(CullViewUniform, tier_lo)),
            ("tier_hi", offset_of!(CullViewUniform, tier_hi)),
            ("rate_lo", offset_of!(CullViewUniform, rate_lo)),
            ("rate_hi", offset_of!(CullViewUniform, rate_hi)),
            ("now", offset_of!(CullViewUniform, now)),
            ("segment_clips", offset_of!(CullViewUniform, segment_clips)),
            ("follow", offset_of!(CullViewUniform, follow)),
            ("pad", offset_of!(CullViewUniform, pad)),
        ],
    );
    // Segment metadata is an integer in an integer field (a bit pattern in a float lane would be a denormal or a
    // NaN for some counts, which a backend may flush).
    check(
        &module,
        "ClipBounds",
        size_of::<ClipBoundsGpu>(),
        &[
            ("min", offset_of!(ClipBoundsGpu, min)),
            ("duration", offset_of!(ClipBoundsGpu, duration)),
            ("max", offset_of!(ClipBoundsGpu, max)),
            ("segments", offset_of!(ClipBoundsGpu, segments)),
        ],
    );
    let (_, members) = common::struct_layout(&module, "ClipBounds");
    assert_eq!(
        members[3].2,
        naga::TypeInner::Scalar(naga::Scalar::U32),
        "the segment word is a u32"
    );
    check(
        &module,
        "DrawSlot",
        size_of::<DrawSlot>(),
        &[
            ("bucket", offset_of!(DrawSlot, bucket)),
            ("index_count", offset_of!(DrawSlot, index_count)),
            ("first_index", offset_of!(DrawSlot, first_index)),
            ("base_vertex", offset_of!(DrawSlot, base_vertex)),
        ],
    );
    // wgpu's DrawIndexedIndirectArgs: five words.
    assert_eq!(common::global_stride(&module, "args"), 20);
    assert_eq!(
        common::global_stride(&module, "instances") as usize,
        size_of::<ResidentInstance>()
    );
    assert_eq!(common::global_stride(&module, "clip_bounds"), 32);
}
