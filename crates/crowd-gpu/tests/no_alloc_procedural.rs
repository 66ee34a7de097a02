//! Proves with a counting global allocator that after warm-up `ProceduralRenderer::prepare` allocates a fixed
//! number of times per call, the same for 1,000 and 10,000 instances, and no more than its four `write_buffer`
//! calls (records, two frame uniforms, the wave) allocate inside wgpu-core: nothing per instance.
//!
//! This file holds a single test, so that no other test of the same process allocates while it measures.

mod common;

use std::alloc::System;

use crowd_frame::{InstanceRecord, RecordAnim};
use crowd_gpu::{ProceduralFrame, ProceduralRenderer};
use crowd_mesh::{Undulation, fish_mesh};
use glam::{Quat, Vec4};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn procedural_prepare_allocates_a_fixed_amount_after_warm_up() {
    let Some(gpu) = common::gpu() else { return };
    let mesh = fish_mesh(1.0).expect("a fish");
    let mut r = ProceduralRenderer::new(&gpu.device, &gpu.offscreen_config(), &mesh, Undulation::for_mesh(&mesh))
        .expect("a renderer");
    let camera = common::scenes::plane_camera(100.0, 100.0, 1.0);
    let median = |v: &[usize]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    let mut per_call = Vec::new();
    for side in [32, 100] {
        let records: Vec<InstanceRecord> = common::scenes::grid(side, side, 1.0)
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let anim = RecordAnim::Procedural {
                    phase: i as f32 * 0.1,
                    amplitude: 1.0,
                };
                InstanceRecord::new(p, Quat::IDENTITY, 0.5, anim, Vec4::ONE).expect("a record")
            })
            .collect();
        let mut counts = Vec::new();
        for frame in 0..8 {
            let f = ProceduralFrame {
                camera,
                depth_camera: None,
                time: f64::from(frame) / 60.0,
                records: &records,
            };
            let region = Region::new(GLOBAL);
            r.prepare(&gpu.device, &gpu.queue, &f).expect("prepares");
            let change = region.change();
            if frame >= 3 {
                counts.push(change.allocations + change.reallocations);
            }
            gpu.queue.submit([]);
            let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
        }
        eprintln!(
            "{} instances: allocations per prepare after warm-up {counts:?}",
            records.len()
        );
        per_call.push(counts);
    }
    assert_eq!(
        median(&per_call[0]),
        median(&per_call[1]),
        "prepare allocates more for more instances: {per_call:?}"
    );
    // Four bare writes of the same sizes to four distinct buffers, as prepare makes.
    let scratch: Vec<wgpu::Buffer> = (0..4)
        .map(|_| {
            gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("scratch"),
                size: 1 << 19,
                usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        })
        .collect();
    let bytes = vec![0u8; 1 << 19];
    let mut bare = Vec::new();
    for frame in 0..8 {
        let region = Region::new(GLOBAL);
        for (buffer, size) in scratch.iter().zip([320_000, 144, 144, 32]) {
            gpu.queue.write_buffer(buffer, 0, &bytes[..size]);
        }
        let change = region.change();
        if frame >= 3 {
            bare.push(change.allocations + change.reallocations);
        }
        gpu.queue.submit([]);
        let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
    }
    eprintln!("four bare write_buffer calls: {bare:?}");
    let least = per_call.iter().flatten().copied().min().expect("counts");
    assert!(
        least <= median(&bare) + 4,
        "prepare allocates {least} times, four bare writes {bare:?}"
    );
}
