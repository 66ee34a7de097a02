//! The simulation thread and what the render thread tells it.
//!
//! Pacing: the crowd's exchange holds two packets under `Overrun::Wait`, so the simulation runs at most one frame
//! ahead of the render thread. When rendering is slower, `step` blocks until the render thread releases a packet,
//! and each step advances the game by the wall time since the last (at most [`MAX_DT`], so a slow frame slows the
//! game rather than making it jump). When the simulation is slower, the render thread waits for the next packet, and
//! the frame rate is the simulation's. Every packet is drawn or at least applied, in order, as the GPU-driven path
//! needs.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::Result;
use crowd_frame::{ClipId, FrameCamera};

use crate::world::World;

/// The longest step of a windowed run, in seconds.
pub const MAX_DT: f32 = 0.05;

/// Per-step samples kept for the report.
const KEPT: usize = 1 << 16;

/// How the simulation advances.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// `steps` steps of `dt` seconds each, then the exchange closes (headless runs, benchmarks, tests).
    Fixed {
        /// Seconds per step.
        dt: f32,
        /// Steps to run.
        steps: usize,
    },
    /// Wall-clock steps until [`Controls::quit`].
    Wall,
}

/// What the render thread asks of the simulation; it reads them before each step.
#[derive(Clone, Debug)]
pub struct Controls {
    /// The camera to cull for.
    pub camera: FrameCamera,
    /// Paused: steps of 0 s (the crowd is still culled for the moving camera).
    pub paused: bool,
    /// Single steps of 1/60 s to run while paused.
    pub single_steps: u32,
    /// The animation and game speed.
    pub speed: f32,
    /// `Some(clip)`: every character plays `clip`; `Some(None)`: back to the scene's behaviour.
    pub force_clip: Option<Option<ClipId>>,
    /// A new character count.
    pub resize: Option<usize>,
    /// Stop.
    pub quit: bool,
}

impl Controls {
    /// Controls for `camera`, running at speed 1.
    pub fn new(camera: FrameCamera) -> Self {
        Self {
            camera,
            paused: false,
            single_steps: 0,
            speed: 1.0,
            force_clip: None,
            resize: None,
            quit: false,
        }
    }
}

/// What the simulation thread measured.
#[derive(Clone, Debug, Default)]
pub struct SimReport {
    /// Steps run.
    pub steps: u64,
    /// Per step: the game logic's milliseconds (behaviour, resizes, clip switches).
    pub game_ms: Vec<f32>,
    /// `CrowdFrame::step`'s milliseconds, waiting for a free packet included.
    pub step_ms: Vec<f32>,
    /// Characters at the end.
    pub count: usize,
}

/// Runs the simulation of `world` with `pace`, reading `controls` before each step, until the pace ends or
/// `quit`; closes the exchange when done (also on error), so that the render thread never waits forever.
///
/// # Errors
///
/// The world's errors; a closed exchange (the render thread stopped) ends the run without error.
pub fn run(world: &mut World, controls: &Arc<Mutex<Controls>>, pace: Pace) -> Result<SimReport> {
    let exchange = world.crowd().exchange().clone();
    let result = run_inner(world, controls, pace);
    exchange.close();
    result
}

fn run_inner(world: &mut World, controls: &Arc<Mutex<Controls>>, pace: Pace) -> Result<SimReport> {
    let mut report = SimReport::default();
    let mut last = Instant::now();
    loop {
        let started = Instant::now();
        let (camera, dt) = {
            let mut c = controls
                .lock()
                .map_err(|_| anyhow::anyhow!("the render thread panicked"))?;
            if c.quit {
                break;
            }
            if let Some(n) = c.resize.take() {
                world.resize(n)?;
            }
            if let Some(clip) = c.force_clip.take() {
                world.force_clip(clip, 0.25)?;
            }
            let dt = match pace {
                Pace::Fixed { dt, steps } => {
                    if report.steps >= steps as u64 {
                        break;
                    }
                    dt
                }
                Pace::Wall => {
                    let wall = last.elapsed().as_secs_f32().min(MAX_DT);
                    last = Instant::now();
                    if c.paused {
                        if c.single_steps > 0 {
                            c.single_steps -= 1;
                            1.0 / 60.0
                        } else {
                            0.0
                        }
                    } else {
                        wall * c.speed
                    }
                }
            };
            (c.camera, dt)
        };
        world.advance(dt)?;
        let step_start = Instant::now();
        let game_ms = (step_start - started).as_secs_f32() * 1e3;
        match world.step(dt, &camera) {
            Ok(_) => {}
            // The render thread closed the exchange: it has stopped reading.
            Err(_) if world.crowd().exchange().is_closed() => break,
            Err(e) => return Err(e),
        }
        if report.game_ms.len() >= KEPT {
            // A long windowed run keeps its last samples only.
            report.game_ms.drain(..KEPT / 2);
            report.step_ms.drain(..KEPT / 2);
        }
        report.game_ms.push(game_ms);
        report.step_ms.push(step_start.elapsed().as_secs_f32() * 1e3);
        report.steps += 1;
    }
    report.count = world.len();
    Ok(report)
}
