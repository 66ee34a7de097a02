//! The GPU-driven path at small, odd storage-binding limits, and the calls it refuses (lavapipe on CI): every buffer
//! bound whole stays within the limit or is an `Error::Limit` (a wgpu validation error inside the error scopes here
//! fails the test), the crowd takes the renderer's slot limit and refuses adds past it, an owner past the store's
//! handle table is refused, a renderer is configured once, a view is used only with its renderer, and renderers that
//! share a pipeline cache compile each pipeline once.

mod common;

use common::cull::cull_now;
use common::images::{self, PrepareNow};
use crowd_cull::ClusterSettings;
use crowd_frame::{ClipId, CrowdFrame, FrameSettings, ResidentInstance, ResidentOwner, Spawn};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{
    AssetOptions, CrowdAsset, CrowdRenderer, Error, PipelineCache, RenderPath, RendererConfig, ResidentBuffer,
    ResidentUpdate, ViewDesc,
};
use glam::Vec3;
use skin_pack::QtF16;

/// RiggedSimple (2 joints, one clip) with 2 pool slots: small enough for bindings of a few hundred bytes.
fn small_asset() -> Option<CrowdAsset> {
    let assets = sample_assets::sample_assets()?;
    let model = anim_pose::import_file(assets.join("gltf/RiggedSimple/RiggedSimple.glb")).expect("imports");
    let options = AssetOptions {
        character: crowd_frame::CharacterOptions {
            slots: crowd_frame::SlotCount::Fixed(2),
            ..Default::default()
        },
        ..AssetOptions::default()
    };
    Some(CrowdAsset::from_model(&model, &options).expect("an asset"))
}

fn config(gpu: &Gpu, binding: u64) -> RendererConfig {
    RendererConfig {
        limits: wgpu::Limits {
            max_storage_buffer_binding_size: binding,
            ..gpu.device.limits()
        },
        ..gpu.offscreen_config()
    }
}

fn settings(asset: &CrowdAsset, max_slots: usize) -> FrameSettings {
    FrameSettings {
        gpu_driven: true,
        cluster: ClusterSettings {
            radius: 2.0,
            capacity: 4,
        },
        pool: anim_pose::PosePoolOptions {
            max_crossfade_buckets: 1,
            ..anim_pose::PosePoolOptions::default()
        },
        max_unique: 1,
        max_slots,
        ..asset.frame_settings()
    }
}

/// Runs `f` inside a validation error scope and fails on any wgpu validation error.
fn no_validation_error<T>(gpu: &Gpu, what: &str, f: impl FnOnce() -> T) -> T {
    let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let out = f();
    if let Some(e) = pollster::block_on(scope.pop()) {
        panic!("{what}: a wgpu validation error: {e}");
    }
    out
}

/// Steps `crowd`, prepares its packet in `r`, and draws a view of it.
fn frame(gpu: &Gpu, crowd: &mut CrowdFrame, r: &mut CrowdRenderer, target: &OffscreenTarget) -> crowd_gpu::Result<()> {
    let cam = common::driven::camera(Vec3::new(0.0, 3.0, 12.0), Vec3::new(0.0, 1.0, 0.0));
    crowd.step(1.0 / 30.0, &cam).expect("steps");
    r.prepare_now(gpu, &crowd.exchange().begin_read().expect("a packet"))?;
    let mut view = r.create_view(&gpu.device)?;
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let prepared = r.prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(cam))?;
    target
        .render_after(gpu, encoder, wgpu::Color::TRANSPARENT, |pass| {
            r.render_view(&prepared, pass)
        })
        .expect("renders");
    Ok(())
}

#[test]
fn whole_bindings_stay_within_small_odd_limits() {
    let Some(gpu) = common::gpu() else { return };
    let Some(asset) = small_asset() else { return };
    let target = OffscreenTarget::new(&gpu.device, 64, 64).expect("a target");
    let cache = PipelineCache::new(&gpu.device);

    // 512 bytes: 10 resident slots. An empty crowd draws; the crowd takes the limit and refuses a third cluster.
    let small = config(&gpu, 512);
    let max = CrowdRenderer::<skin_pack::PaletteEntry>::max_resident_slots(&gpu.device, &small);
    assert_eq!(max, 10, "512 bytes hold 10 states of 48 bytes");
    let mut crowd = CrowdFrame::new(asset.character.clone(), settings(&asset, max)).expect("a crowd");
    let mut r: CrowdRenderer = no_validation_error(&gpu, "a renderer at 512 bytes", || {
        CrowdRenderer::for_crowd(&gpu.device, &gpu.queue, &cache, &small, &asset, &crowd).expect("a renderer")
    });
    no_validation_error(&gpu, "an empty crowd at 512 bytes", || {
        frame(&gpu, &mut crowd, &mut r, &target).expect("an empty crowd draws")
    });
    let at = |i: usize| Spawn::at(Vec3::new(i as f32 * 20.0 - 10.0, 0.0, 0.0), ClipId(0));
    crowd.add(&at(0)).expect("a first cluster of 4 slots");
    crowd.add(&at(1)).expect("a second cluster: 8 slots");
    let refused = crowd.add(&at(2)).expect_err("a third cluster passes 10 slots");
    assert!(
        matches!(refused, crowd_frame::Error::Cull(crowd_cull::Error::SlotLimit { .. })),
        "{refused}"
    );
    no_validation_error(&gpu, "two instances at 512 bytes", || {
        frame(&gpu, &mut crowd, &mut r, &target).expect("two instances draw")
    });
    // A crowd that may use more slots than the renderer holds is refused where the renderer is made for it.
    let greedy = CrowdFrame::new(asset.character.clone(), settings(&asset, 11)).expect("a crowd");
    let err =
        CrowdRenderer::<skin_pack::PaletteEntry>::for_crowd(&gpu.device, &gpu.queue, &cache, &small, &asset, &greedy)
            .expect_err("11 slots do not fit");
    assert!(matches!(err, Error::Limit { .. }), "{err}");

    // 1,000 bytes and two meshes of five LODs: 40 indirect draws, their 640 bytes of draw slots and 800 bytes of
    // arguments bound whole (a size rounded up to 1,024 would pass the limit).
    let odd = config(&gpu, 1_000);
    let mut crowd = CrowdFrame::new(asset.character.clone(), settings(&asset, 20)).expect("a crowd");
    crowd.add(&at(0)).expect("adds");
    let mut r: CrowdRenderer = images::renderer_in(&gpu, &cache, Some(odd.limits.clone()));
    assert_eq!((asset.meshes.len(), asset.meshes[0].lods.len()), (1, 5));
    for _ in 0..2 {
        images::add_meshes(&gpu, &mut r, &asset.meshes, &asset.materials);
    }
    r.enable_gpu_driven(&gpu.device, crowd.store().group_desc(crowd.group()).expect("the group"))
        .expect("GPU-driven");
    no_validation_error(&gpu, "two meshes at 1,000 bytes", || {
        frame(&gpu, &mut crowd, &mut r, &target).expect("draws")
    });

    // 300 bytes: the view's 384 bytes of counters do not fit, and the view is refused.
    let tiny = config(&gpu, 300);
    let crowd = CrowdFrame::new(asset.character.clone(), settings(&asset, 4)).expect("a crowd");
    let r: CrowdRenderer =
        CrowdRenderer::for_crowd(&gpu.device, &gpu.queue, &cache, &tiny, &asset, &crowd).expect("a renderer");
    let err = no_validation_error(&gpu, "counters past 300 bytes", || {
        r.create_view(&gpu.device).expect_err("the counters do not fit")
    });
    assert!(
        matches!(
            err,
            Error::Limit {
                buffer: "cull counters",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn an_owner_past_the_handle_table_is_refused_and_later_culls_work() {
    let Some(gpu) = common::gpu() else { return };
    let cache = PipelineCache::new(&gpu.device);
    let limits = gpu.device.limits();
    let mut resident = ResidentBuffer::new(&gpu.device, &cache, &limits).expect("a resident buffer");
    let anim = crowd_frame::ResidentAnim {
        clip: 0,
        start_time: 0.0,
        speed: 1.0,
        fade: None,
    };
    let state = ResidentInstance::new(Vec3::ZERO, glam::Quat::IDENTITY, 1.0, &anim, glam::Vec4::ONE).expect("valid");
    let first_slot = 0..1;
    let apply = |resident: &mut ResidentBuffer, owner: ResidentOwner| {
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        let r = resident.apply(
            &gpu.device,
            &mut encoder,
            ResidentUpdate {
                slot_count: 4,
                handle_capacity: 10,
                ranges: std::slice::from_ref(&first_slot),
                instances: &[state],
                owners: &[owner],
            },
        );
        gpu.queue.submit([encoder.finish()]);
        r
    };
    let bogus = ResidentOwner {
        index: u32::MAX - 1,
        generation: 1,
    };
    let err = apply(&mut resident, bogus).expect_err("an owner past the handle table");
    assert!(matches!(err, Error::ResidentChange { index: 0, .. }), "{err}");
    assert_eq!(
        (resident.slot_count(), resident.handle_capacity()),
        (0, 0),
        "nothing changed"
    );
    apply(
        &mut resident,
        ResidentOwner {
            index: 3,
            generation: 1,
        },
    )
    .expect("a real owner");
    assert_eq!(resident.handle_capacity(), 10);
    // A view culls it: its states are sized by the store's handle table, not by the bogus owner.
    let desc = crowd_cull::GroupDesc {
        mesh: 0,
        material: 0,
        clip_bounds: vec![crowd_cull::Aabb::new(Vec3::splat(-0.5), Vec3::splat(0.5))],
        lod_thresholds: vec![],
        tier_thresholds: [0.3, 0.1, 0.02],
        rate_thresholds: [0.2, 0.05, 0.01],
        hysteresis: 0.1,
    };
    let culler = crowd_gpu::GpuCuller::new(&gpu.device, &cache, &desc, &limits).expect("a culler");
    let mut view = culler.view(&gpu.device, &[]).expect("a view");
    let camera =
        crowd_cull::FrameCamera::perspective(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y, 1.0, 1.0, 0.1, 50.0)
            .cull_camera();
    cull_now(&gpu, &culler, &resident, &mut view, &camera, 0.0).expect("culls");
    assert_eq!(view.state_handles(), 10);
    let counts: Vec<u32> = bytemuck::cast_slice(&gpu.read_buffer(view.counts_buffer(), 4).expect("reads")).to_vec();
    assert_eq!(counts, [1], "the instance is visible at LOD 0, unique");
}

#[test]
fn a_renderer_is_configured_once_and_its_views_are_its_own() {
    let Some(gpu) = common::gpu() else { return };
    let scene = common::driven::scene(2, 2);
    let (crowd, _) = common::driven::crowd_of(&scene, true);
    let desc = crowd.store().group_desc(crowd.group()).expect("the group");
    let mut r = common::driven::renderer(&gpu, &scene, &crowd, true);
    let err = r.enable_gpu_driven(&gpu.device, desc).expect_err("enabled twice");
    assert!(
        matches!(
            err,
            Error::Order {
                call: "enable_gpu_driven",
                ..
            }
        ),
        "{err}"
    );
    let err = r
        .add_mesh(
            &gpu.device,
            &gpu.queue,
            &scene.meshes[0],
            &crowd_mesh::Material::default(),
        )
        .expect_err("a mesh after enable_gpu_driven");
    assert!(matches!(err, Error::Order { call: "add_mesh", .. }), "{err}");
    // An adapter without storage buffers in vertex shaders (OpenGL ES) takes the CPU-culled path.
    let gles = RendererConfig {
        downlevel: wgpu::DownlevelFlags::all() - wgpu::DownlevelFlags::VERTEX_STORAGE,
        ..gpu.offscreen_config()
    };
    assert_eq!(RenderPath::for_config(&gpu.device, &gles), RenderPath::CpuCulled);
    let mut cpu: CrowdRenderer =
        CrowdRenderer::new(&gpu.device, &PipelineCache::new(&gpu.device), &gles).expect("a renderer");
    images::add_meshes(&gpu, &mut cpu, &scene.meshes, &[crowd_mesh::Material::default()]);
    let err = cpu
        .enable_gpu_driven(&gpu.device, desc)
        .expect_err("not on this adapter");
    assert!(
        matches!(
            err,
            Error::Path {
                path: RenderPath::CpuCulled,
                ..
            }
        ),
        "{err}"
    );
    // A view of one renderer is refused by another.
    let other = common::driven::renderer(&gpu, &scene, &crowd, true);
    let mut view = other.create_view(&gpu.device).expect("a view");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    let err = r
        .prepare_view(
            &gpu.device,
            &mut encoder,
            &mut view,
            ViewDesc::new(common::driven::camera(Vec3::Z, Vec3::ZERO)),
        )
        .expect_err("another renderer's view");
    assert!(matches!(err, Error::ForeignView), "{err}");
}

#[test]
fn renderers_that_share_a_cache_compile_each_pipeline_once() {
    let Some(gpu) = common::gpu() else { return };
    let scene = common::driven::scene(2, 2);
    let (crowd, _) = common::driven::crowd_of(&scene, true);
    let desc = crowd.store().group_desc(crowd.group()).expect("the group");
    let cache = PipelineCache::new(&gpu.device);
    let make = || {
        let mut r: CrowdRenderer = images::renderer_in(&gpu, &cache, None);
        images::add_meshes(&gpu, &mut r, &scene.meshes, &[crowd_mesh::Material::default()]);
        r.enable_gpu_driven(&gpu.device, desc).expect("GPU-driven");
        r
    };
    let first = make();
    let after_one = cache.stats();
    eprintln!("one renderer: {after_one:?}");
    assert_eq!(
        after_one.render_pipelines, 16,
        "4 record pipelines and 12 GPU-driven ones"
    );
    assert_eq!(
        after_one.compute_pipelines, 4,
        "3 cull dispatches and the resident scatter"
    );
    let second = make();
    assert_eq!(
        cache.stats(),
        after_one,
        "a second renderer of the same pass compiles nothing"
    );
    // Another palette format compiles its own module and pipelines, and no compute pipeline.
    let mut qt: CrowdRenderer<QtF16> = images::renderer_in(&gpu, &cache, None);
    images::add_meshes(&gpu, &mut qt, &scene.meshes, &[crowd_mesh::Material::default()]);
    qt.enable_gpu_driven(&gpu.device, desc).expect("GPU-driven");
    let after_qt = cache.stats();
    assert_eq!(after_qt.render_pipelines, 32);
    assert_eq!(after_qt.compute_pipelines, 4);
    assert_eq!(after_qt.shader_modules, after_one.shader_modules + 1);
    drop((first, second));
}
