//! The side-by-side bench: N Foxes with random clips and phases, headless (960 × 540, no MSAA), drawn either by
//! Bevy's own glTF scene spawning and `AnimationPlayer`s (`--mode bevy`, as Bevy's `many_foxes` does) or by
//! crowd-bevy (`--mode crowd`), on the same adapter. Pipelined rendering is off, so each update is one whole frame:
//! the main world (simulation, animation, transforms), then extraction and the render world.
//!
//! It prints one line of figures (milliseconds per frame over `--frames` frames after `--warmup`, medians):
//! `foxes_bench mode=.. count=.. adapter=.. frame_ms=.. main_ms=.. render_ms=.. submit_ms=.. cpu_ms=..`, where
//! `main_ms` is the main world's schedules, `submit_ms` the render graph's submission (where a software adapter
//! such as lavapipe runs the frame's GPU work on the CPU), `render_ms` extraction plus the render world's
//! schedules without that submission (both wall time, so on a software adapter they include waits for it), and
//! `cpu_ms` the CPU time per frame (mean) of the app's own threads, the main thread, Bevy's task pools and rayon's
//! pool, without the driver's threads (`/proc/self/task/*/schedstat`, Linux only).
//!
//! `cargo run --release --example foxes_bench --ignore-rust-version -- --mode crowd --count 1000`; `--gpu`
//! refuses a software adapter.

#[path = "common/headless.rs"]
mod headless;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bevy::animation::graph::{AnimationGraph, AnimationGraphHandle, AnimationNodeIndex};
use bevy::app::MainScheduleOrder;
use bevy::core_pipeline::tonemapping::Tonemapping;
use bevy::ecs::schedule::ScheduleLabel;
use bevy::gltf::GltfAssetLabel;
use bevy::prelude::*;
use bevy::render::renderer::{RenderGraph, RenderGraphSystems};
use bevy::render::view::Msaa;
use bevy::render::{Render, RenderApp, RenderScheduleOrder};
use bevy::world_serialization::{WorldAssetRoot, WorldInstanceReady};
use clap::Parser;
use crowd_bevy::{ClipId, Crowd, CrowdCharacter, CrowdPlugin, Spawn};

#[derive(Parser)]
struct Args {
    /// `bevy` (Bevy's skinning and AnimationPlayer), `crowd` (crowd-bevy), or `empty` (the scene without Foxes:
    /// Bevy's own cost per frame).
    #[arg(long)]
    mode: String,
    /// Foxes.
    #[arg(long, default_value_t = 1000)]
    count: usize,
    /// Frames measured.
    #[arg(long, default_value_t = 30)]
    frames: usize,
    /// Frames run before measuring, once every Fox is animating.
    #[arg(long, default_value_t = 5)]
    warmup: usize,
    /// Refuse a software adapter.
    #[arg(long)]
    gpu: bool,
}

const FOX: &str = "Fox.glb";
/// Grid spacing, in the Fox's units.
const SPACING: f32 = 150.0;

/// The frame's timestamps, shared by the main and the render world.
#[derive(Resource, Clone, Default)]
struct Stamps(Arc<Mutex<[Option<Instant>; 5]>>);

#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
struct MainStart;
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
struct MainEnd;
#[derive(ScheduleLabel, Clone, Debug, PartialEq, Eq, Hash)]
struct RenderEnd;

/// CPU nanoseconds so far of the app's own threads: the main thread (which runs both worlds, pipelining being off),
/// Bevy's task pools and rayon's pool (crowd-frame's parallel jobs; named in `main`), but not the threads of the
/// driver (llvmpipe's rasterisers, lavapipe's queue), from `/proc/self/task/*/schedstat` (Linux). Returns the sum
/// and the threads counted.
fn app_cpu_ns() -> (u64, usize) {
    let main = std::process::id().to_string();
    let mut total = (0, 0);
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        let tid = task.file_name().to_string_lossy().into_owned();
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let ours = tid == main
            || ["Compute Task", "Async Compute", "IO Task"]
                .iter()
                .any(|p| comm.starts_with(p));
        let ns = std::fs::read_to_string(task.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()));
        if let (true, Some(ns)) = (ours, ns) {
            total = (total.0 + ns, total.1 + 1);
        }
    }
    total
}

fn stamp<const I: usize>(stamps: Res<Stamps>) {
    if let Ok(mut s) = stamps.0.lock() {
        s[I] = Some(Instant::now());
    }
}

/// Bevy mode's animation graph.
#[derive(Resource)]
struct Animations {
    graph: Handle<AnimationGraph>,
    nodes: Vec<AnimationNodeIndex>,
}

/// Foxes that are animating (Bevy mode) or added (crowd mode).
#[derive(Resource, Default)]
struct Ready(usize);

/// Foxes asked for.
#[derive(Resource)]
struct Wanted(usize);

fn position(i: usize, n: usize) -> Vec3 {
    let side = (n as f32).sqrt().ceil() as usize;
    let half = side as f32 * SPACING * 0.5;
    Vec3::new(
        (i % side) as f32 * SPACING - half,
        0.0,
        (i / side) as f32 * SPACING - half,
    )
}

/// The same random clip, phase and heading per Fox in both modes.
fn random(i: usize) -> (u32, f32, f32) {
    let h = (i as u32).wrapping_mul(2_654_435_761).rotate_left(13) ^ 0x5bd1_e995;
    (h % 3, (h >> 4) as f32 % 1000.0 * 0.01, (h >> 14) as f32 % 628.0 * 0.01)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    // Named, so that their CPU time is counted as the app's.
    rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("rayon-{i}"))
        .build_global()?;
    let assets = std::env::var("CROWD_SAMPLE_ASSETS").unwrap_or_else(|_| "../shared/assets".into());
    let root = std::fs::canonicalize(format!("{assets}/gltf/Fox"))?;
    let mut app = App::new();
    app.add_plugins(headless::plugins(root.to_str().unwrap_or(".")))
        .insert_resource(Stamps::default())
        .insert_resource(Wanted(args.count))
        .init_resource::<Ready>();
    app.init_schedule(MainStart).init_schedule(MainEnd);
    {
        let mut order = app.world_mut().resource_mut::<MainScheduleOrder>();
        order.insert_before(First, MainStart);
        order.insert_after(Last, MainEnd);
    }
    app.add_systems(MainStart, stamp::<0>).add_systems(MainEnd, stamp::<1>);
    let stamps = app.world().resource::<Stamps>().clone();
    let render_app = app.sub_app_mut(RenderApp);
    render_app.insert_resource(stamps.clone()).init_schedule(RenderEnd);
    render_app
        .world_mut()
        .resource_mut::<RenderScheduleOrder>()
        .insert_after(Render, RenderEnd);
    render_app.add_systems(RenderEnd, stamp::<4>).add_systems(
        RenderGraph,
        (
            stamp::<2>
                .after(RenderGraphSystems::Render)
                .before(RenderGraphSystems::Submit),
            stamp::<3>.in_set(RenderGraphSystems::Finish),
        ),
    );
    let n = args.count;
    match args.mode.as_str() {
        "bevy" => {
            let server = app.world().resource::<AssetServer>().clone();
            let clips = [0, 1, 2].map(|i| server.load(GltfAssetLabel::Animation(i).from_asset(FOX)));
            let (graph, nodes) = AnimationGraph::from_clips(clips);
            let graph = app.world_mut().resource_mut::<Assets<AnimationGraph>>().add(graph);
            app.insert_resource(Animations { graph, nodes });
            let scene = server.load(GltfAssetLabel::Scene(0).from_asset(FOX));
            for i in 0..n {
                let (_, _, heading) = random(i);
                app.world_mut()
                    .spawn((
                        WorldAssetRoot(scene.clone()),
                        Transform::from_translation(position(i, n)).with_rotation(Quat::from_rotation_y(heading)),
                    ))
                    .observe(start_animation);
            }
        }
        "crowd" => {
            app.add_plugins(CrowdPlugin).add_systems(Update, add_foxes);
            let character: Handle<CrowdCharacter> = app.world().resource::<AssetServer>().load(FOX);
            app.world_mut().spawn(Crowd::new(character));
        }
        "empty" => app.world_mut().insert_resource(Wanted(0)),
        other => anyhow::bail!("--mode {other}: expected bevy, crowd or empty"),
    }
    let world = app.world_mut();
    let extent = position(n.saturating_sub(1), n).abs().max_element() + SPACING;
    let ground = headless::ground_and_sun(world);
    world
        .entity_mut(ground)
        .insert(Transform::from_scale(Vec3::splat(extent * 3.0)));
    let image = headless::image_target(&mut world.resource_mut::<Assets<Image>>(), 960, 540);
    world.spawn((
        Camera3d::default(),
        Msaa::Off,
        Tonemapping::None,
        bevy::camera::RenderTarget::Image(image.into()),
        Transform::from_xyz(0.0, extent * 0.6, extent * 1.4).looking_at(Vec3::ZERO, Vec3::Y),
    ));
    headless::finish(&mut app);
    let adapter = app
        .world()
        .resource::<bevy::render::renderer::RenderAdapterInfo>()
        .clone();
    if args.gpu && adapter.device_type == wgpu::DeviceType::Cpu {
        anyhow::bail!("--gpu: the adapter '{}' is a software rasteriser", adapter.name);
    }
    let started = Instant::now();
    while app.world().resource::<Ready>().0 < app.world().resource::<Wanted>().0 {
        app.update();
        if started.elapsed() > Duration::from_secs(600) {
            anyhow::bail!(
                "only {} of {n} Foxes animating after 10 minutes",
                app.world().resource::<Ready>().0
            );
        }
    }
    for _ in 0..args.warmup {
        app.update();
    }
    let (mut frame, mut main, mut render, mut submit) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
    let (cpu_before, _) = app_cpu_ns();
    for _ in 0..args.frames {
        let t = Instant::now();
        app.update();
        frame.push(ms(t, Instant::now()));
        let s = *stamps.0.lock().map_err(|_| anyhow::anyhow!("a poisoned lock"))?;
        if let [Some(a), Some(b), Some(c), Some(d), Some(e)] = s {
            main.push(ms(a, b));
            submit.push(ms(c, d));
            render.push(ms(b, e) - ms(c, d));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let (cpu_after, threads) = app_cpu_ns();
    let cpu = (cpu_after - cpu_before) as f64 * 1e-6 / args.frames.max(1) as f64;
    let (m, r) = (median(&mut main), median(&mut render));
    println!(
        "foxes_bench mode={} count={n} adapter={:?} frame_ms={:.2} main_ms={m:.2} render_ms={r:.2} \
         submit_ms={:.2} cpu_ms={cpu:.2} cpu_threads={threads}",
        args.mode,
        adapter.name,
        median(&mut frame),
        median(&mut submit),
    );
    Ok(())
}

/// Bevy mode: starts each Fox's player on its clip and phase once its scene is spawned.
fn start_animation(
    ready: On<WorldInstanceReady>,
    children: Query<&Children>,
    mut players: Query<&mut AnimationPlayer>,
    animations: Res<Animations>,
    mut count: ResMut<Ready>,
    mut commands: Commands,
) {
    for e in children.iter_descendants(ready.entity) {
        if let Ok(mut player) = players.get_mut(e) {
            let (clip, phase, _) = random(count.0);
            player.play(animations.nodes[clip as usize]).repeat().seek_to(phase);
            commands
                .entity(e)
                .insert(AnimationGraphHandle(animations.graph.clone()));
            count.0 += 1;
        }
    }
}

/// Crowd mode: adds every Fox once the character has loaded.
fn add_foxes(mut crowds: Query<&mut Crowd>, mut count: ResMut<Ready>, wanted: Res<Wanted>) {
    let Ok(mut crowd) = crowds.single_mut() else { return };
    if !crowd.is_ready() || count.0 > 0 {
        return;
    }
    let total = wanted.0;
    let spawns: Vec<Spawn> = (0..total)
        .map(|i| {
            let (clip, phase, heading) = random(i);
            let mut s = Spawn::at(position(i, total), ClipId(clip as u16));
            s.time = phase;
            s.rotation = Quat::from_rotation_y(heading);
            s
        })
        .collect();
    let mut handles = vec![Default::default(); total];
    match crowd.add_many(&spawns, &mut handles) {
        Ok(()) => count.0 = total,
        Err(e) => error!("cannot add the Foxes: {e}"),
    }
}
