//! A Bevy app with a camera, a sun, a ground plane and `--count` Foxes (default 100,000) drawn by crowd-bevy, each
//! playing a random clip from a random phase. With no display it renders `--frames` frames headless and saves the
//! last to `--out`.
//!
//! `cargo run --release --example bevy_crowd --ignore-rust-version -- --count 100000`

#[path = "common/headless.rs"]
mod headless;

use bevy::core_pipeline::tonemapping::{DebandDither, Tonemapping};
use bevy::prelude::*;
use bevy::render::view::Msaa;
use clap::Parser;
use crowd_bevy::{ClipId, Crowd, CrowdCharacter, CrowdPlugin, Spawn};

#[derive(Parser)]
struct Args {
    /// Foxes.
    #[arg(long, default_value_t = 100_000)]
    count: usize,
    /// The model (default: the sample Fox under $CROWD_SAMPLE_ASSETS).
    #[arg(long)]
    model: Option<String>,
    /// Headless frames to render.
    #[arg(long, default_value_t = 8)]
    frames: usize,
    /// Where headless runs save their last frame.
    #[arg(long, default_value = "target/bevy_crowd.png")]
    out: std::path::PathBuf,
}

#[derive(Resource)]
struct Count(usize);

/// The camera and the ground, placed once the foxes' extent is known.
#[derive(Component)]
struct Framed;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let model = args.model.clone().unwrap_or_else(|| {
        let assets = std::env::var("CROWD_SAMPLE_ASSETS").unwrap_or_else(|_| "../shared/assets".into());
        format!("{assets}/gltf/Fox/Fox.glb")
    });
    let model = std::fs::canonicalize(&model).map_err(|e| anyhow::anyhow!("{model}: {e}"))?;
    let root = model.parent().and_then(|p| p.to_str()).unwrap_or(".").to_owned();
    let file = model
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default()
        .to_owned();
    let windowed = headless::has_display();
    let mut app = App::new();
    app.add_plugins(if windowed {
        headless::window_plugins(&root)
    } else {
        headless::plugins(&root)
    })
    .add_plugins(CrowdPlugin)
    .insert_resource(Count(args.count))
    .insert_resource(ClearColor(Color::srgb(0.42, 0.55, 0.72)))
    .add_systems(Update, spawn_foxes);
    let character: Handle<CrowdCharacter> = app.world().resource::<AssetServer>().load(file);
    app.world_mut().spawn(Crowd::new(character));
    let world = app.world_mut();
    let ground = headless::ground_and_sun(world);
    world.entity_mut(ground).insert(Framed);
    // No tonemapping: the crowd's colours are not tonemapped either (and Bevy's default needs its LUT feature).
    let camera = world
        .spawn((
            Camera3d::default(),
            Msaa::Off,
            Tonemapping::None,
            DebandDither::Disabled,
            Framed,
        ))
        .id();
    if windowed {
        app.run();
        return Ok(());
    }
    let image = headless::image_target(&mut app.world_mut().resource_mut::<Assets<Image>>(), 960, 540);
    app.world_mut()
        .entity_mut(camera)
        .insert(bevy::camera::RenderTarget::Image(image.clone().into()));
    headless::finish(&mut app);
    // The character loads asynchronously: wait until the foxes are in.
    while app.world_mut().query::<&Crowd>().iter(app.world()).all(Crowd::is_empty) {
        app.update();
    }
    let started = std::time::Instant::now();
    for _ in 0..args.frames {
        app.update();
    }
    let ms = started.elapsed().as_secs_f64() * 1e3 / args.frames.max(1) as f64;
    headless::save_png(&args.out, headless::read_image(&mut app, &image)?, 960, 540)?;
    println!(
        "{} foxes, {} headless frames, {ms:.1} ms each; saved {}",
        args.count,
        args.frames,
        args.out.display()
    );
    Ok(())
}

/// Once the character has loaded: the foxes on a square grid with random clips and phases, the camera and the
/// ground sized to them.
fn spawn_foxes(
    mut crowds: Query<&mut Crowd>,
    characters: Res<Assets<CrowdCharacter>>,
    count: Res<Count>,
    mut framed: Query<(&mut Transform, Has<Camera3d>), With<Framed>>,
) {
    let Ok(mut crowd) = crowds.single_mut() else { return };
    let Some(character) = characters.get(crowd.character()) else {
        return;
    };
    if !crowd.is_ready() || !crowd.is_empty() {
        return;
    }
    let (n, clips, spacing) = (count.0, character.clip_count() as u32, character.radius() * 1.5);
    let side = (n as f32).sqrt().ceil().max(1.0) as usize;
    let half = side as f32 * spacing * 0.5;
    let mut seed = 0x9e37_79b9_u32;
    let mut next = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        seed >> 8
    };
    let spawns: Vec<Spawn> = (0..n)
        .map(|i| {
            let at = Vec3::new(
                (i % side) as f32 * spacing - half,
                0.0,
                (i / side) as f32 * spacing - half,
            );
            let mut s = Spawn::at(at, ClipId((next() % clips) as u16));
            s.time = (next() % 1000) as f32 * 0.01;
            s.rotation = Quat::from_rotation_y((next() % 628) as f32 * 0.01);
            s
        })
        .collect();
    let mut handles = vec![Default::default(); n];
    if let Err(e) = crowd.add_many(&spawns, &mut handles) {
        error!("cannot add the foxes: {e}");
    }
    for (mut t, camera) in &mut framed {
        *t = match camera {
            true => Transform::from_xyz(0.0, half * 0.6, half * 1.6).looking_at(Vec3::ZERO, Vec3::Y),
            false => Transform::from_scale(Vec3::new(half * 6.0, 1.0, half * 6.0)),
        };
    }
}
