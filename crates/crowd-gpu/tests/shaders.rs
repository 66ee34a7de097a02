//! Validates every WGSL shader with naga, checks that the registry matches `shaders/`, and checks the GPU
//! layout of shared structs against their Rust twins.

mod common;

use crowd_gpu::shaders::{ALL, CROWD_SKIN, PALETTE, PALETTE_FETCH_F32, PALETTE_FETCHES};

#[test]
fn every_shader_parses_and_validates() {
    assert!(!ALL.is_empty(), "no shaders are registered");
    for s in ALL {
        if s.file == CROWD_SKIN.file {
            // The renderer's module needs a palette fetch file: validate it with each.
            for fetch in &PALETTE_FETCHES {
                let module = common::skin_module(fetch);
                for entry in [
                    "vs_joints_u8",
                    "vs_joints_u16",
                    "vs_depth_joints_u8",
                    "vs_depth_joints_u16",
                    "fs_main",
                ] {
                    assert!(
                        module.entry_points.iter().any(|e| e.name == entry),
                        "crowd_skin.wgsl with {} lacks {entry}",
                        fetch.file
                    );
                }
            }
        } else {
            common::module(s);
        }
    }
}

#[test]
fn registry_matches_the_shader_folder() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shaders");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{} must exist: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wgsl"))
        .collect();
    on_disk.sort();
    let mut registered: Vec<String> = ALL.iter().map(|s| s.file.to_owned()).collect();
    registered.sort();
    assert!(!on_disk.is_empty(), "{} holds no shaders", dir.display());
    assert_eq!(registered, on_disk, "crowd-gpu/src/shaders.rs and shaders/ disagree");
    for s in ALL {
        let text = std::fs::read_to_string(dir.join(s.file)).expect("registered shader exists");
        assert_eq!(text, s.source, "{} is registered under the wrong file name", s.file);
    }
}

#[test]
fn palette_entry_matches_skin_pack() {
    let module = common::module(&PALETTE);
    let (span, members) = common::struct_layout(&module, "PaletteEntry");
    assert_eq!(
        span as usize,
        size_of::<skin_pack::PaletteEntry>(),
        "PaletteEntry size differs between WGSL and Rust"
    );
    assert_eq!(span as usize, skin_pack::PALETTE_ENTRY_SIZE);
    assert_eq!(
        common::global_stride(&common::skin_module(&PALETTE_FETCH_F32), "pool_palettes") as usize,
        skin_pack::PALETTE_ENTRY_SIZE
    );
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].1, 0);
    let naga::TypeInner::Array { stride, size, .. } = members[0].2 else {
        panic!("PaletteEntry.rows is not an array")
    };
    assert_eq!(stride, 16, "each row is one vec4<f32>");
    assert_eq!(
        size,
        naga::ArraySize::Constant(std::num::NonZeroU32::new(3).expect("3 is non-zero"))
    );
}

#[test]
fn renderer_uniforms_match_their_rust_twins() {
    use std::mem::offset_of;
    let module = common::skin_module(&PALETTE_FETCH_F32);
    let (span, members) = common::struct_layout(&module, "FrameUniform");
    assert_eq!(span as usize, size_of::<crowd_gpu::FrameUniform>());
    let offsets: Vec<(String, u32)> = members.iter().map(|m| (m.0.clone().unwrap_or_default(), m.1)).collect();
    let want = [
        ("view_proj", offset_of!(crowd_gpu::FrameUniform, view_proj)),
        ("sun_direction", offset_of!(crowd_gpu::FrameUniform, sun_direction)),
        ("sun_color", offset_of!(crowd_gpu::FrameUniform, sun_color)),
        ("sky_color", offset_of!(crowd_gpu::FrameUniform, sky_color)),
        ("ground_color", offset_of!(crowd_gpu::FrameUniform, ground_color)),
        ("joint_count", offset_of!(crowd_gpu::FrameUniform, joint_count)),
        ("view", offset_of!(crowd_gpu::FrameUniform, view)),
        ("pad", offset_of!(crowd_gpu::FrameUniform, pad)),
    ];
    assert_eq!(offsets.len(), want.len());
    for ((name, offset), (want_name, want_offset)) in offsets.iter().zip(want) {
        assert_eq!((name.as_str(), *offset as usize), (want_name, want_offset));
    }
    let (span, members) = common::struct_layout(&module, "DrawUniform");
    assert_eq!(span as usize, size_of::<crowd_gpu::DrawUniform>());
    let want = [
        offset_of!(crowd_gpu::DrawUniform, record_base),
        offset_of!(crowd_gpu::DrawUniform, pooled),
        offset_of!(crowd_gpu::DrawUniform, lod),
        offset_of!(crowd_gpu::DrawUniform, tier),
        offset_of!(crowd_gpu::DrawUniform, base_color),
        offset_of!(crowd_gpu::DrawUniform, uv_f16),
        offset_of!(crowd_gpu::DrawUniform, mesh),
    ];
    for (m, want) in members.iter().zip(want) {
        assert_eq!(m.1 as usize, want, "DrawUniform.{:?}", m.0);
    }
    assert!(size_of::<crowd_gpu::DrawUniform>() as u64 <= crowd_gpu::DRAW_UNIFORM_STRIDE);
}
