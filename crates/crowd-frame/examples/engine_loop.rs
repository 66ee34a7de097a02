//! What an engine writes: import a model, add 10,000 instances with random clips and phases, run 60 frames with
//! clip switches and moves on a simulation thread while a render thread reads the packets, and print stats.

use crowd_frame::{Character, CharacterOptions, ClipId, CrowdFrame, FrameCamera, FrameSettings, Spawn};
use glam::{Quat, Vec3};

/// A tiny deterministic generator in `[0, 1)`, so that the example needs no dependency.
fn random(seed: &mut u32) -> f32 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 17;
    *seed ^= *seed << 5;
    (*seed >> 8) as f32 / (1 << 24) as f32
}

/// Runs the example (also called by `tests/engine_loop.rs`).
pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    let model = anim_pose::import_file(path)?;
    let character = Character::from_model(&model, 0, &CharacterOptions::default())?;
    let clips = character.clips().len();
    let mut crowd: CrowdFrame = CrowdFrame::new(character, FrameSettings::default())?;

    let seed = &mut 2024u32;
    let spawns: Vec<Spawn> = (0..10_000)
        .map(|i| Spawn {
            rotation: Quat::from_rotation_y(random(seed) * std::f32::consts::TAU),
            time: random(seed) * 2.0,
            ..Spawn::at(
                Vec3::new((i % 100) as f32 * 1.5 - 75.0, 0.0, -((i / 100) as f32) * 1.5),
                ClipId((i % clips) as u16),
            )
        })
        .collect();
    let mut handles = vec![Default::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles)?;
    let movers: Vec<_> = handles.iter().copied().step_by(10).collect();
    let mut positions: Vec<Vec3> = spawns.iter().step_by(10).map(|s| s.position).collect();

    let exchange = crowd.exchange().clone();
    let render = std::thread::spawn(move || {
        // The render thread: upload each packet's dirty ranges and draw its draws (here: count them).
        let (mut frames, mut last) = (0, None);
        while let Ok(packet) = exchange.begin_read() {
            frames += 1;
            last = Some((*packet.stats(), packet.draws().len()));
        }
        (frames, last)
    });
    let eye = Vec3::new(0.0, 1.7, 5.0);
    let camera = FrameCamera::perspective(eye, Vec3::new(0.0, 1.0, -50.0), Vec3::Y, 1.0, 16.0 / 9.0, 0.1, 500.0);
    for frame in 0..60 {
        for p in &mut positions {
            *p += Vec3::new(0.0, 0.0, -0.02);
        }
        crowd.set_positions(&movers, &positions)?;
        for k in 0..20 {
            let h = handles[(frame * 131 + k * 977) % handles.len()];
            crowd.play(h, ClipId(((frame + k) % clips) as u16), 0.25)?;
        }
        crowd.step(1.0 / 60.0, &camera)?;
    }
    crowd.exchange().close();
    let (frames, last) = render.join().map_err(|_| "the render thread panicked")?;
    let (stats, draws) = last.ok_or("no frame was drawn")?;
    println!("{} instances, {frames} frames, last frame: {draws} draws", crowd.len());
    println!(
        "  visible {} per tier {:?} unique {} fading {}",
        stats.visible, stats.per_tier, stats.unique, stats.fading
    );
    println!(
        "  live slots {} buckets {} upload {} KiB",
        stats.live_slots,
        stats.crossfade_buckets,
        stats.dirty_bytes / 1024
    );
    println!("  stages {:?}", stats.stages);
    Ok(())
}
