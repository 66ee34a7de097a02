//! The GPU's work, counted on lavapipe: pipeline-statistics queries around a GPU-driven view's draws and its cull,
//! against what the draws asked for (the indirect arguments read back) and what the cull dispatched.
//!
//! The counts are exact where the pipeline's stages make them so: every triangle an indirect draw asks for reaches
//! the clipper once, and the cull runs a thread per slot in its two per-slot passes plus one workgroup of 64 in
//! between. Vertex and fragment counts depend on the device's vertex cache and quad shading, so they are bounded.

mod common;

use common::driven::{SIZE, camera, crowd_of, renderer, run_frames, scene};
use crowd_cull::limits::TIER_COUNT;
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CULL_BUCKETS, CullQueries, DrawTally, Error, ViewDesc, WorkQueries};
use glam::Vec3;

/// A device with `PIPELINE_STATISTICS_QUERY`, or a loud skip (a failure on CI, whose lavapipe has it).
fn counting_gpu() -> Option<Gpu> {
    common::gpu()?;
    let gpu = Gpu::open_with(None, wgpu::Features::PIPELINE_STATISTICS_QUERY)
        .expect("a device")
        .expect("an adapter");
    if gpu
        .device
        .features()
        .contains(wgpu::Features::PIPELINE_STATISTICS_QUERY)
    {
        return Some(gpu);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI's adapter {} lacks PIPELINE_STATISTICS_QUERY",
        gpu.info.name
    );
    eprintln!(
        "SKIPPED: the adapter {} has no pipeline-statistics queries",
        gpu.info.name
    );
    None
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytemuck::pod_collect_to_vec(bytes)
}

#[test]
fn counts_match_the_draws_and_the_dispatches() {
    let Some(gpu) = counting_gpu() else { return };
    let scene = scene(12, 8);
    let (mut crowd, _) = crowd_of(&scene, true);
    let mut r = renderer(&gpu, &scene, &crowd, true);
    let target = OffscreenTarget::new(&gpu.device, SIZE.0, SIZE.1).expect("a target");
    let near = camera(Vec3::new(0.0, 3.0, 6.0), Vec3::new(0.0, 0.5, -6.0));
    run_frames(&mut crowd, &mut r, &gpu, &near, 3, |_, _| {});
    let slots = crowd.store().slot_count() as u64;
    // Two render queries, one left unwritten: it reads as zero.
    let queries = WorkQueries::new(&gpu.device, 2, 1).expect("queries");
    let mut view = r.create_view(&gpu.device).expect("a view");

    let mut counted = |camera| {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let prepared = r
            .prepare_view(
                &gpu.device,
                &mut encoder,
                &mut view,
                ViewDesc {
                    cull_queries: CullQueries {
                        statistics: Some(queries.cull(0)),
                        ..CullQueries::default()
                    },
                    ..ViewDesc::new(camera)
                },
            )
            .expect("prepares");
        let (_, counts) = target
            .render_counted(&gpu, encoder, wgpu::Color::TRANSPARENT, &queries, |pass| {
                r.render_view(&prepared, pass)
            })
            .expect("renders");
        let cull = prepared.cull().expect("GPU-driven");
        let args = words(
            &gpu.read_buffer(cull.args_buffer(), u64::from(cull.draw_count()) * 20)
                .expect("args"),
        );
        let buckets = words(
            &gpu.read_buffer(cull.counts_buffer(), CULL_BUCKETS as u64 * 4)
                .expect("counts"),
        );
        let tally = DrawTally::from_args(cull.draw_slots(), &args).expect("a tally");
        (counts, tally, buckets)
    };

    let (counts, tally, buckets) = counted(near);
    let work = counts.render[0];
    assert_eq!(counts.render[1], Default::default(), "an unwritten query reads as zero");
    // Every triangle the indirect draws asked for reaches the clipper once.
    assert!(tally.total_triangles() > 10_000, "{tally:?}");
    assert_eq!(work.clipper_invocations, tally.total_triangles(), "{work:?}");
    assert!(
        work.primitives > 0 && work.primitives <= work.clipper_invocations * 2,
        "{work:?}"
    );
    // Each vertex of each triangle runs at most once, and a shared vertex at least once per instance.
    assert!(
        work.vertex_invocations <= 3 * tally.total_triangles()
            && work.vertex_invocations * 3 >= tally.total_triangles(),
        "{work:?}"
    );
    let pixels = u64::from(SIZE.0 * SIZE.1);
    assert!(work.fragment_invocations > pixels / 20, "{work:?}");
    // The cull: a thread per slot (rounded up to 256) in `classify` and in `scatter`, 64 in `place`.
    let per_slot = slots.div_ceil(256) * 256;
    assert_eq!(counts.cull[0].compute_invocations, 2 * per_slot + 64, "{} slots", slots);
    // The tally's instances per bucket are the cull's counters.
    for (b, &n) in buckets.iter().enumerate() {
        assert_eq!(
            tally.instances[b / TIER_COUNT][b % TIER_COUNT],
            u64::from(n),
            "bucket {b}"
        );
    }
    assert_eq!(counts.total().compute_invocations, 2 * per_slot + 64);

    // Looking away: nothing is drawn, so nothing reaches the rasteriser, while the cull still runs over every slot.
    let away = camera(Vec3::new(0.0, 3.0, 6.0), Vec3::new(0.0, 3.0, 20.0));
    let (counts, tally, _) = counted(away);
    assert_eq!(tally.total_triangles(), 0);
    let work = counts.render[0];
    assert_eq!(
        (
            work.vertex_invocations,
            work.clipper_invocations,
            work.fragment_invocations
        ),
        (0, 0, 0),
        "{work:?}"
    );
    assert_eq!(counts.cull[0].compute_invocations, 2 * per_slot + 64);
}

#[test]
fn queries_need_the_feature_and_a_sane_count() {
    let Some(gpu) = common::gpu() else { return };
    if !gpu
        .device
        .features()
        .contains(wgpu::Features::PIPELINE_STATISTICS_QUERY)
    {
        assert!(matches!(
            WorkQueries::new(&gpu.device, 1, 1),
            Err(Error::MissingFeature {
                feature: "PIPELINE_STATISTICS_QUERY",
                ..
            })
        ));
    }
    let Some(gpu) = counting_gpu() else { return };
    for (render, cull) in [(0, 1), (1, 0), (4097, 1), (1, u32::MAX)] {
        let e = WorkQueries::new(&gpu.device, render, cull).expect_err("refused");
        assert!(matches!(e, Error::QueryCount { .. }), "{e}");
        assert!(e.to_string().contains("queries"), "{e}");
    }
}

#[test]
fn a_tally_needs_five_words_a_draw() {
    let slots = [crowd_gpu::DrawSlot {
        bucket: 2 * TIER_COUNT as u32 + 1,
        index_count: 30,
        first_index: 0,
        base_vertex: 0,
    }; 2];
    assert!(matches!(
        DrawTally::from_args(&slots, &[0; 9]),
        Err(Error::ReadbackRange { .. })
    ));
    let t = DrawTally::from_args(&slots, &[30, 4, 0, 0, 0, 30, 4, 0, 0, 0]).expect("a tally");
    assert_eq!(t.instances[2][1], 4, "two meshes of one bucket draw the same instances");
    assert_eq!(t.triangles[2][1], 80);
    assert_eq!(t.total_triangles(), 80);
    assert_eq!(t.instances_per_lod()[2], 4);
}
