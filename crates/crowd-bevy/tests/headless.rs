//! One Bevy frame on the real adapter (lavapipe in CI) into a 256 × 160 image: three Foxes drawn by the plugin, a
//! Bevy cube in front of the left half of the middle Fox and one behind the right Fox. The crowd's pixels must match
//! crowd-gpu's own render of the same crowd (same camera, same poses, same light) on its own device, and the cubes
//! must occlude as depth says. A second crowd then draws with the pipelines the first one compiled.

#[path = "../examples/common/headless.rs"]
mod headless;

use std::time::Duration;

use bevy::core_pipeline::tonemapping::{DebandDither, Tonemapping};
use bevy::prelude::*;
use bevy::render::RenderApp;
use bevy::render::view::Msaa;
use bevy::time::TimeUpdateStrategy;
use crowd_bevy::render::CrowdPipelineCache;
use crowd_bevy::{ClipId, Crowd, CrowdCamera, CrowdCharacter, CrowdOptions, CrowdPlugin, RenderPath, Spawn};
use crowd_frame::{CrowdFrame, FrameSettings};
use crowd_gpu::headless::{Gpu, OffscreenTarget};
use crowd_gpu::{CrowdRenderer, PipelineCache, RendererConfig, ViewDesc};

const W: u32 = 256;
const H: u32 = 160;
/// The clear colour, linear.
const CLEAR: [f32; 3] = [0.2, 0.3, 0.5];
/// A crowd pixel matches the reference when no channel differs by more than this (Bevy's final blit to the image
/// re-encodes sRGB, which can round a channel by one step).
const CHANNEL_TOLERANCE: u8 = 3;
/// The share of crowd pixels that must match (the rest may differ at silhouette edges by rasterisation order).
const MATCH_SHARE: f64 = 0.99;

/// Where the test's objects are, in the Fox's units.
#[derive(Resource, Clone, Copy)]
struct Layout {
    spacing: f32,
    height: f32,
}

/// The crowd's frame clock when the Foxes were added.
#[derive(Resource, Default)]
struct SpawnedAt(Option<f64>);

fn spawns(layout: Layout) -> Vec<Spawn> {
    (0..3)
        .map(|i| {
            let mut s = Spawn::at(
                Vec3::new((i as f32 - 1.0) * layout.spacing, 0.0, 0.0),
                ClipId(i as u16 % 3),
            );
            s.time = 0.37 * i as f32;
            s.rotation = Quat::from_rotation_y(0.6 + 0.4 * i as f32);
            s
        })
        .collect()
}

/// Every instance unique (exact poses, the same on both sides), three packets dropping the oldest as the plugin
/// sets them.
fn settings(character: &CrowdCharacter) -> FrameSettings {
    FrameSettings {
        lod_thresholds: vec![1e-3; character.meshes()[0].lods.len() - 1]
            .iter()
            .enumerate()
            .map(|(i, t)| t / 4f32.powi(i as i32))
            .collect(),
        tier_thresholds: [1e-6, 1e-7, 1e-8],
        packets: 3,
        overrun: skin_pack::Overrun::DropOldest,
        ..FrameSettings::default()
    }
}

fn add_foxes(mut crowds: Query<&mut Crowd>, layout: Option<Res<Layout>>, mut spawned: ResMut<SpawnedAt>) {
    let (Ok(mut crowd), Some(layout)) = (crowds.single_mut(), layout) else {
        return;
    };
    if !crowd.is_ready() || spawned.0.is_some() {
        return;
    }
    let s = spawns(*layout);
    let mut handles = vec![crowd_cull::Handle::default(); s.len()];
    crowd.add_many(&s, &mut handles).expect("the Foxes are valid");
    spawned.0 = crowd.frame().map(CrowdFrame::time);
}

#[test]
fn crowd_pixels_match_crowd_gpu_and_bevy_cubes_occlude_by_depth() {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let Some(root) = headless::sample_assets() else {
        return;
    };
    let fox = root.join("gltf/Fox/Fox.glb");
    if !headless::has_adapter() {
        assert!(!ci, "no Vulkan adapter: install Mesa's lavapipe (mesa-vulkan-drivers)");
        eprintln!("SKIPPED: no Vulkan adapter; install Mesa's lavapipe (mesa-vulkan-drivers libvulkan1)");
        return;
    }
    // The character, loaded here too, to lay the scene out in its units before the app starts.
    let bytes = std::fs::read(&fox).expect("the Fox reads");
    let character = CrowdCharacter::from_gltf(&bytes, "Fox.glb", 0).expect("the Fox loads");
    let layout = Layout {
        spacing: character.radius() * 1.6,
        height: character.radius(),
    };

    let mut app = App::new();
    app.add_plugins(headless::plugins(
        fox.parent().and_then(|p| p.to_str()).expect("a UTF-8 path"),
    ))
    .add_plugins(CrowdPlugin)
    .insert_resource(ClearColor(Color::linear_rgb(CLEAR[0], CLEAR[1], CLEAR[2])))
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(40)))
    .insert_resource(layout)
    .init_resource::<SpawnedAt>()
    .add_systems(Update, add_foxes);
    let handle: Handle<CrowdCharacter> = app.world().resource::<AssetServer>().load("Fox.glb");
    let options = CrowdOptions {
        settings: Some(settings(&character)),
        path: None,
    };
    let crowd = app.world_mut().spawn(Crowd::with_options(handle, options)).id();
    let image = headless::image_target(&mut app.world_mut().resource_mut::<Assets<Image>>(), W, H);
    let world = app.world_mut();
    let cube = world.resource_mut::<Assets<Mesh>>().add(Cuboid::from_length(1.0));
    let red = world.resource_mut::<Assets<StandardMaterial>>().add(StandardMaterial {
        base_color: Color::linear_rgb(1.0, 0.0, 0.0),
        unlit: true,
        ..Default::default()
    });
    let (s, h) = (layout.spacing, layout.height);
    // In front of the middle Fox's left half, and behind the right Fox.
    let front = Transform::from_xyz(-0.3 * s, 0.6 * h, 0.9 * h).with_scale(Vec3::new(0.6 * s, 1.2 * h, 0.1 * h));
    let back = Transform::from_xyz(s, 0.8 * h, -1.5 * h).with_scale(Vec3::new(1.2 * s, 1.6 * h, 0.1 * h));
    world.spawn((Mesh3d(cube.clone()), MeshMaterial3d(red.clone()), front));
    world.spawn((Mesh3d(cube), MeshMaterial3d(red), back));
    let light = (
        DirectionalLight {
            illuminance: 8_000.0,
            ..Default::default()
        },
        Transform::default().looking_to(Vec3::new(0.3, -0.7, -0.6), Vec3::Y),
    );
    world.spawn(light);
    world.spawn((
        Camera3d::default(),
        Msaa::Off,
        Tonemapping::None,
        DebandDither::Disabled,
        bevy::camera::RenderTarget::Image(image.clone().into()),
        Transform::from_xyz(0.0, 1.2 * h, 3.2 * s).looking_at(Vec3::new(0.0, 0.5 * h, 0.0), Vec3::Y),
    ));
    headless::finish(&mut app);

    // Load the character (asynchronously), add the Foxes, then two frames of them.
    let mut updates = 0;
    while app.world().resource::<SpawnedAt>().0.is_none() {
        app.update();
        updates += 1;
        assert!(updates < 600, "the Fox never loaded");
        std::thread::sleep(Duration::from_millis(5));
    }
    app.update();
    app.update();
    let pixels = headless::read_image(&mut app, &image).expect("the image reads back");
    let t0 = app.world().resource::<SpawnedAt>().0.expect("spawned");
    let crowd_ref = app.world().get::<Crowd>(crowd).expect("the crowd");
    let now = crowd_ref.frame().expect("ready").time();
    let path = crowd_ref.path().expect("ready");
    let camera = app.world().resource::<CrowdCamera>().0.expect("a camera");
    let lighting = {
        let mut q = app.world_mut().query::<(&DirectionalLight, &GlobalTransform)>();
        let (l, t) = q.single(app.world()).expect("one light");
        crowd_bevy::render::lighting(l, t)
    };

    // crowd-gpu's own render of the same crowd: the same settings, spawns, clock, camera and light.
    let gpu = Gpu::open(None).expect("a device").expect("an adapter");
    let mut frame: CrowdFrame = CrowdFrame::new(character.character().clone(), {
        let mut s = settings(&character);
        s.gpu_driven = path == RenderPath::GpuDriven;
        s
    })
    .expect("the reference crowd");
    frame.step(t0 as f32, &camera).expect("the first step");
    let foxes = spawns(layout);
    let mut handles = vec![crowd_cull::Handle::default(); foxes.len()];
    frame.add_many(&foxes, &mut handles).expect("the Foxes");
    frame.step((now - t0) as f32, &camera).expect("the step");
    let target = OffscreenTarget::new(&gpu.device, W, H).expect("the target");
    let config: RendererConfig = gpu.offscreen_config();
    let cache = PipelineCache::new(&gpu.device);
    let mut renderer = CrowdRenderer::new(&gpu.device, &cache, &config).expect("the renderer");
    for (m, material) in character.meshes().iter().zip(character.materials()) {
        renderer
            .add_mesh(&gpu.device, &gpu.queue, m, material)
            .expect("the mesh");
    }
    if path == RenderPath::GpuDriven {
        let group = frame.store().group_desc(frame.group()).expect("the group").clone();
        renderer.enable_gpu_driven(&gpu.device, &group).expect("GPU-driven");
    }
    renderer.set_lighting(lighting);
    let packet = frame.exchange().begin_read().expect("the packet");
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    renderer.prepare(&gpu.device, &mut encoder, &packet).expect("prepare");
    // The reference renders with ordinary depth (less, cleared to 1) and a finite projection of the same frustum
    // sides: the colours do not depend on the depth convention.
    let mut view = renderer.create_view(&gpu.device).expect("the view");
    let (sx, sy) = (camera.proj.x_axis.x, camera.proj.y_axis.y);
    let far = crowd_frame::FrameCamera {
        proj: glam::camera::rh::proj::directx::perspective(2.0 * (1.0 / sy).atan(), sy / sx, 0.05 * h, 1e3 * s),
        ..camera
    };
    let prepared = renderer
        .prepare_view(&gpu.device, &mut encoder, &mut view, ViewDesc::new(far))
        .expect("the view prepares");
    let clear = wgpu::Color {
        r: f64::from(CLEAR[0]),
        g: f64::from(CLEAR[1]),
        b: f64::from(CLEAR[2]),
        a: 1.0,
    };
    let reference = target
        .render_after(&gpu, encoder, clear, |pass| renderer.render_view(&prepared, pass))
        .expect("the reference renders");
    drop(packet);

    // Compare. A reference pixel is crowd when it is not the clear colour.
    let out = std::env::temp_dir();
    headless::save_png(&out.join("crowd_bevy_headless.png"), pixels.clone(), W, H).ok();
    headless::save_png(&out.join("crowd_bevy_reference.png"), reference.clone(), W, H).ok();
    let clear8 = &reference[..4];
    let px = |buf: &[u8], i: usize| [buf[4 * i], buf[4 * i + 1], buf[4 * i + 2]];
    let is_red = |p: [u8; 3]| p[0] > 200 && p[1] < 40 && p[2] < 40;
    let close = |a: [u8; 3], b: [u8; 3]| a.iter().zip(&b).all(|(x, y)| x.abs_diff(*y) <= CHANNEL_TOLERANCE);
    let ndc_x = |p: Vec3| {
        let c = camera.view_proj() * p.extend(1.0);
        ((c.x / c.w) * 0.5 + 0.5) * W as f32
    };
    // The front cube's right edge and the middle Fox's span on screen (at the Fox's depth).
    let front_right = ndc_x(Vec3::new(0.0, 0.6 * h, 0.9 * h));
    let (mut crowd_px, mut matched, mut hidden, mut hidden_outside, mut shown_before_back) = (0, 0, 0, 0, 0);
    for i in 0..(W * H) as usize {
        let (r, b) = (px(&reference, i), px(&pixels, i));
        if r == [clear8[0], clear8[1], clear8[2]] {
            continue;
        }
        crowd_px += 1;
        let x = (i % W as usize) as f32;
        if is_red(b) {
            hidden += 1;
            if x > front_right + 1.0 {
                hidden_outside += 1;
            }
        } else if close(r, b) {
            matched += 1;
            if x > ndc_x(Vec3::new(0.5 * s, 0.0, 0.0)) {
                shown_before_back += 1;
            }
        }
    }
    let visible = crowd_px - hidden;
    println!(
        "{path:?}: {crowd_px} crowd pixels in the reference, {hidden} hidden by the front cube, {matched} of the \
         {visible} others within {CHANNEL_TOLERANCE} per channel; {shown_before_back} right-Fox pixels drawn over \
         the back cube"
    );
    assert!(crowd_px > 500, "the reference shows the Foxes ({crowd_px} pixels)");
    assert!(
        hidden > 50,
        "the front cube hides part of the middle Fox ({hidden} pixels)"
    );
    assert_eq!(hidden_outside, 0, "no crowd pixel right of the front cube is red");
    assert!(
        matched as f64 >= MATCH_SHARE * visible as f64,
        "{matched} of {visible} visible crowd pixels match crowd-gpu's render"
    );
    assert!(
        shown_before_back > 100,
        "the right Fox is drawn over the cube behind it ({shown_before_back} pixels)"
    );

    // A second crowd of the character: its renderer takes every pipeline from the render device's one cache.
    let compiled = |app: &App| {
        app.sub_app(RenderApp)
            .world()
            .resource::<CrowdPipelineCache>()
            .0
            .stats()
    };
    let before = compiled(&app);
    assert!(
        before.render_pipelines > 0,
        "the first crowd's renderer compiled into the shared cache: {before:?}"
    );
    let handle = app.world().get::<Crowd>(crowd).expect("the crowd").character().clone();
    let options = CrowdOptions {
        settings: Some(settings(&character)),
        path: None,
    };
    let second = app.world_mut().spawn(Crowd::with_options(handle, options)).id();
    app.update();
    let mut c = app.world_mut().get_mut::<Crowd>(second).expect("the second crowd");
    c.add(&spawns(layout)[0]).expect("a Fox");
    app.update();
    app.update();
    let c = app.world().get::<Crowd>(second).expect("the second crowd");
    let read = c.frame().expect("ready").exchange().stats().read;
    assert!(read > 0, "the second crowd's renderer took its packets ({read})");
    assert_eq!(compiled(&app), before, "the second crowd compiled nothing");
}
