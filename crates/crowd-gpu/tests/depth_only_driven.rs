//! The GPU-driven path's depth-only pass (a shadow map's), on lavapipe: with the pooled, baked and VAT tiers all
//! in view, a depth-only pass of a view writes, pixel for pixel, the depth that its colour pass writes (both depth
//! buffers are read back and compared). Each tier's depth-only entry point poses its vertices exactly as its colour
//! entry point does.

mod common;

use anim_bake::{BakeOptions, BatFormat, Parts};
use common::driven::{SIZE, camera, renderer, scene};
use common::images::{self, PrepareNow};
use crowd_cull::Handle;
use crowd_frame::{CrowdFrame, FrameSettings};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CULL_BUCKETS, ViewDesc};
use glam::Vec3;

/// A depth attachment of the offscreen target's format and size that can be read back.
fn depth_texture(gpu: &Gpu) -> wgpu::Texture {
    gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("depth for readback"),
        size: wgpu::Extent3d {
            width: SIZE.0,
            height: SIZE.1,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Depth32Float,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    })
}

/// The depths of `texture`, row by row.
fn read_depth(gpu: &Gpu, texture: &wgpu::Texture) -> Vec<f32> {
    let bytes = 4 * SIZE.0 * SIZE.1;
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("depth readback"),
        size: u64::from(bytes),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        wgpu::TexelCopyTextureInfo {
            texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::DepthOnly,
        },
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                // 4 × 320 bytes: a multiple of 256.
                bytes_per_row: Some(4 * SIZE.0),
                rows_per_image: Some(SIZE.1),
            },
        },
        texture.size(),
    );
    gpu.queue.submit([encoder.finish()]);
    bytemuck::cast_slice(&gpu.read_buffer(&buffer, u64::from(bytes)).expect("reads")).to_vec()
}

#[test]
fn the_depth_only_view_pass_writes_the_depth_of_every_tier() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(16, 10);
    let model = images::default_character();
    let options = BakeOptions {
        parts: Parts { bat: true, vat: true },
        bat_format: Some(BatFormat::F32),
        ..BakeOptions::default()
    };
    let (bake, _) = anim_bake::bake(&model, &options, &|_| {}).expect("the default character bakes");
    let binding = model.bindings.iter().find(|b| b.skeleton == 0).expect("a skinned mesh");
    let first = bake.first_vertices(binding.meshes.clone()).expect("baked");

    // Near instances pooled, the middle rows baked, the far rows VAT.
    let settings = FrameSettings {
        gpu_driven: true,
        tier_thresholds: [50.0, 0.3, 0.16],
        ..scene.settings.clone()
    };
    let mut crowd = CrowdFrame::new(scene.character.clone(), settings).expect("a crowd");
    let mut handles = vec![Handle::default(); scene.spawns.len()];
    crowd.add_many(&scene.spawns, &mut handles).expect("adds");
    let mut r = renderer(&gpu, &scene, &crowd, true);
    r.set_bat(&gpu.device, bake.bat.as_ref().expect("a BAT"))
        .expect("the BAT fits");
    r.set_vat(&gpu.device, &gpu.queue, bake.vat.as_ref().expect("a VAT"), &first)
        .expect("the VAT fits");
    let cam = camera(Vec3::new(0.5, 3.0, 6.0), Vec3::new(0.0, 0.5, -10.0));
    let exchange = crowd.exchange().clone();
    for _ in 0..3 {
        crowd.step(1.0 / 30.0, &cam).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        r.prepare_now(&gpu, &packet).expect("prepares");
    }
    let mut view = r.create_view(&gpu.device).expect("a view");
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let (colour_depth, shadow_depth) = (depth_texture(&gpu), depth_texture(&gpu));
    let (colour_view, shadow_view) = (
        colour_depth.create_view(&Default::default()),
        shadow_depth.create_view(&Default::default()),
    );
    let depth_attachment = |view| {
        Some(wgpu::RenderPassDepthStencilAttachment {
            view,
            depth_ops: Some(wgpu::Operations {
                load: wgpu::LoadOp::Clear(1.0),
                store: wgpu::StoreOp::Store,
            }),
            stencil_ops: None,
        })
    };
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let prepared = r
        .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(cam))
        .expect("the view prepares");
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("depth only"),
            color_attachments: &[],
            depth_stencil_attachment: depth_attachment(&shadow_view),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        r.render_view_depth_only(&prepared, &mut pass);
    }
    {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("colour"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &target.color_view,
                resolve_target: None,
                depth_slice: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: depth_attachment(&colour_view),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        r.render_view(&prepared, &mut pass);
    }
    gpu.queue.submit([encoder.finish()]);
    let counts: Vec<u32> = bytemuck::cast_slice(
        &gpu.read_buffer(
            prepared.cull().expect("GPU-driven").counts_buffer(),
            4 * CULL_BUCKETS as u64,
        )
        .expect("reads"),
    )
    .to_vec();
    let per_tier: Vec<u32> = (0..4).map(|t| counts.iter().skip(t).step_by(4).sum()).collect();
    eprintln!("visible per tier (unique, pooled, baked, VAT): {per_tier:?}");
    assert!(
        per_tier[1] > 10 && per_tier[2] > 10 && per_tier[3] > 10,
        "every GPU tier is in view: {per_tier:?}"
    );
    let colour = target.read_rgba8(&gpu).expect("reads back");
    images::write_png(
        &images::reference_dir().join("depth_only_driven-actual.png"),
        SIZE,
        &colour,
    );
    let drawn = colour.chunks_exact(4).filter(|p| p[3] != 0).count();
    assert!(drawn > 10_000, "the crowd is drawn: {drawn} pixels");

    let (colour_depths, shadow_depths) = (read_depth(&gpu, &colour_depth), read_depth(&gpu, &shadow_depth));
    let covered = shadow_depths.iter().filter(|&&d| d < 1.0).count();
    let differ = colour_depths
        .iter()
        .zip(&shadow_depths)
        .filter(|(a, b)| (*a - *b).abs() > 1e-6)
        .count();
    eprintln!("{covered} pixels covered by the depth-only pass, {differ} differ from the colour pass's depth");
    assert_eq!(
        covered, drawn,
        "the depth-only pass covers exactly the colour pass's pixels"
    );
    assert_eq!(differ, 0, "the depth-only pass writes the colour pass's depths");
}
