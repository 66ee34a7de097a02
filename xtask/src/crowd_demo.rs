//! The crowd part of `cargo xtask demo`: 10,000 instances of a model's first skeleton through
//! `crowd_frame::CrowdFrame` for 120 frames, with moves and clip switches, while a render thread reads the packets.

use anim_pose::Model;
use anyhow::{Context, Result, anyhow};
use crowd_cull::Handle;
use crowd_frame::{Character, CharacterOptions, ClipId, CrowdFrame, FrameCamera, FrameSettings, FrameStats, Spawn};
use glam::{Quat, Vec3};

/// Instances on a square grid.
const SIDE: usize = 100;
/// Frames to run.
const FRAMES: usize = 120;

/// Runs the crowd on skeleton 0 of `model` and prints what the last packet held.
pub fn run(model: &Model) -> Result<()> {
    let character = Character::from_model(model, 0, &CharacterOptions::default())
        .context("the model's first skeleton cannot make a crowd")?;
    let size = model.bounds().size();
    // Space instances by the model's footprint, so that models in other units spread alike.
    let spacing = size.x.max(size.z).max(size.y * 0.4).max(1e-3) * 1.5;
    let settings = FrameSettings {
        cluster: crowd_cull::ClusterSettings {
            radius: spacing * 10.0,
            ..crowd_cull::ClusterSettings::default()
        },
        ..FrameSettings::default()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(&character, settings)?;
    let clips = character.clips().len();
    let spawns: Vec<Spawn> = (0..SIDE * SIDE)
        .map(|i| Spawn {
            rotation: Quat::from_rotation_y(i as f32 * 2.4),
            time: (i % 17) as f32 * 0.13,
            ..Spawn::at(
                Vec3::new((i % SIDE) as f32 - SIDE as f32 / 2.0, 0.0, -((i / SIDE) as f32)) * spacing,
                ClipId((i % clips) as u16),
            )
        })
        .collect();
    let mut handles = vec![Handle::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles)?;
    let movers: Vec<Handle> = handles.iter().copied().step_by(10).collect();
    let mut positions: Vec<Vec3> = spawns.iter().step_by(10).map(|s| s.position).collect();
    let eye = Vec3::new(0.0, size.y, 3.0 * spacing);
    let camera = FrameCamera::perspective(
        eye,
        Vec3::new(0.0, 0.0, -(SIDE as f32) * spacing * 0.5),
        Vec3::Y,
        1.0,
        16.0 / 9.0,
        spacing * 0.05,
        SIDE as f32 * spacing * 4.0,
    );
    let exchange = crowd.exchange().clone();
    let render = std::thread::spawn(move || {
        let mut last: Option<(FrameStats, usize)> = None;
        while let Ok(packet) = exchange.begin_read() {
            last = Some((*packet.stats(), packet.draws().len()));
        }
        last
    });
    let mut step_ms = 0.0;
    for frame in 0..FRAMES {
        for p in &mut positions {
            *p += Vec3::new(0.0, 0.0, -0.01 * spacing);
        }
        crowd.set_positions(&movers, &positions)?;
        for k in 0..(SIDE * SIDE / 600) {
            let h = handles[(frame * 7919 + k * 104_729) % handles.len()];
            crowd.play(h, ClipId(((frame + k) % clips) as u16), 0.25)?;
        }
        let start = std::time::Instant::now();
        crowd.step(1.0 / 60.0, &camera)?;
        step_ms += start.elapsed().as_secs_f64() * 1e3;
    }
    crowd.exchange().close();
    let (stats, draws) = render
        .join()
        .map_err(|_| anyhow!("the render thread panicked"))?
        .context("the render thread read no packet")?;
    println!(
        "crowd: {} instances, {FRAMES} frames, {:.3} ms per step on average",
        crowd.len(),
        step_ms / FRAMES as f64
    );
    println!(
        "  last packet: {} visible (unique {}, pooled {}, baked {}, VAT {}; baked and VAT drawn pooled), {draws} draws",
        stats.visible, stats.per_tier[0], stats.per_tier[1], stats.per_tier[2], stats.per_tier[3]
    );
    println!(
        "  {} unique palettes, {} fading, {} live pool slots ({} crossfade buckets), {} KiB to upload",
        stats.unique,
        stats.fading,
        stats.live_slots,
        stats.crossfade_buckets,
        stats.dirty_bytes / 1024
    );
    Ok(())
}
