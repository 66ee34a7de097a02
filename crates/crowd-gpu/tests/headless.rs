//! The headless helper on a real adapter (lavapipe on CI): a cleared offscreen target reads back as tightly packed
//! RGBA8 rows of the clear colour, at a width whose rows need padding in the copy; bad sizes are errors.

mod common;

use crowd_gpu::Error;
use crowd_gpu::headless::OffscreenTarget;

#[test]
fn a_cleared_target_reads_back_its_colour() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    // 37 pixels: 148 bytes a row, padded to 256 in the copy.
    let target = OffscreenTarget::new(&gpu.device, 37, 5).expect("a target");
    let mut encoder = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    {
        let _pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("clear"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &target.color_view,
                depth_slice: None,
                resolve_target: None,
                ops: wgpu::Operations {
                    // Linear 0.5 is sRGB 188 (0.7354); 0 and 1 are exact.
                    load: wgpu::LoadOp::Clear(wgpu::Color {
                        r: 1.0,
                        g: 0.5,
                        b: 0.0,
                        a: 1.0,
                    }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
    }
    gpu.queue.submit([encoder.finish()]);
    let pixels = target.read_rgba8(&gpu).expect("reads back");
    assert_eq!(pixels.len(), 37 * 5 * 4);
    for (i, p) in pixels.chunks_exact(4).enumerate() {
        assert!(
            p[0] == 255 && (187..=189).contains(&p[1]) && p[2] == 0 && p[3] == 255,
            "pixel {i}: {p:?}"
        );
    }
}

#[test]
fn bad_target_sizes_are_errors() {
    let Some(gpu) = common::gpu() else {
        return;
    };
    let max = gpu.device.limits().max_texture_dimension_2d;
    for (w, h) in [(0, 4), (4, 0), (max + 1, 4)] {
        assert!(
            matches!(OffscreenTarget::new(&gpu.device, w, h), Err(Error::TargetSize { .. })),
            "{w} x {h}"
        );
    }
}
