//! Figures of `cargo xtask bench` for `frame`: a whole `CrowdFrame::step` of the default character, with the
//! game's changes, while a render thread drains the packets, at 10,000, 100,000 and 1,000,000 pooled instances.
//!
//! The scene: instances 1.5 m apart on a jittered square grid, each turned, scaled (0.8 to 1.2) and a tenth of
//! them tilted, playing one of the character's clips at a random phase and speed; a camera beside a corner,
//! raised, looking at the centre, seeing most of the crowd. Tier thresholds make every visible instance pooled.
//! Per frame (60 Hz), a tenth of the crowd walks (`set_positions`), and 1% of the crowd per second switches
//! clip with a 0.25 s crossfade. Everything runs in a rayon pool of 2 threads.
//!
//! `frame.pooled_*_ms` is a whole frame: the game's calls (the moves and switches, which apply at once) and the
//! step; `frame.step_only_*_ms` is the step alone and `frame.stage_*_ms` its stages at 100k (medians of the
//! packets' stage times), with `frame.stage_game_calls_ms` the calls. `frame.allocs_per_frame_*` counts the
//! allocations of both threads over 120 frames after the timed ones.

use std::sync::Arc;
use std::time::Instant;

use crowd_cull::Handle;
use crowd_frame::{
    Character, CharacterOptions, ClipId, CrowdFrame, FrameCamera, FrameSettings, INSTANCE_RECORD_SIZE, Packet,
    SlotCount, Spawn, StageTimes,
};
use glam::{Quat, Vec3};
use skin_pack::FrameExchange;

use crate::alloc_count::allocations;
use crate::groups::crowd_cull::hash;
use crate::harness::{Effort, Figure, median_seconds_per_iteration};

/// The frame's settings: every visible instance pooled.
fn settings() -> FrameSettings {
    FrameSettings {
        tier_thresholds: [f32::MAX, 1e-7, 5e-8],
        ..FrameSettings::default()
    }
}

/// `side × side` spawns 1.5 m apart on a jittered grid: each turned, scaled 0.8 to 1.2, a tenth of them tilted,
/// playing one of `clips` clips at a random phase and speed. The crowd of the frame and crowd_gpu groups.
pub(crate) fn grid_spawns(side: u32, clips: usize) -> Vec<Spawn> {
    (0..side * side)
        .map(|i| {
            let (x, z) = ((i % side) as f32, (i / side) as f32);
            let tilt = if i % 10 == 0 { hash(i ^ 0x99) - 0.5 } else { 0.0 };
            Spawn {
                rotation: Quat::from_rotation_y(hash(i ^ 0x1234) * std::f32::consts::TAU) * Quat::from_rotation_x(tilt),
                scale: 0.8 + 0.4 * hash(i ^ 0x777),
                time: hash(i ^ 0x4242) * 3.0,
                speed: 0.9 + 0.2 * hash(i ^ 0x3131),
                ..Spawn::at(
                    Vec3::new(x * 1.5 + hash(i) * 0.5, 0.0, z * 1.5 + hash(i ^ 0xABCD) * 0.5),
                    ClipId((i as usize % clips) as u16),
                )
            }
        })
        .collect()
}

/// A 16:9 camera at `eye` looking at the centre of [`grid_spawns`]'s `side × side` grid, seeing all of it.
pub(crate) fn grid_camera(side: u32, eye: Vec3) -> FrameCamera {
    let l = side as f32 * 1.5;
    FrameCamera::perspective(
        eye,
        Vec3::new(0.5 * l, 0.0, 0.5 * l),
        Vec3::Y,
        1.0,
        16.0 / 9.0,
        0.5,
        4.0 * l,
    )
}

/// The game's side of the scene.
struct Game {
    handles: Vec<Handle>,
    movers: Vec<Handle>,
    positions: Vec<Vec3>,
    directions: Vec<Vec3>,
    camera: FrameCamera,
    /// Switches owed, in instances (1% of the crowd per second, at 60 frames per second).
    owed: f64,
    next: u32,
    clips: usize,
}

impl Game {
    /// `n` instances (rounded down to a square) in `crowd`.
    fn new(crowd: &mut CrowdFrame, n: usize) -> Result<Self, crowd_frame::Error> {
        let side = (n as f64).sqrt() as u32;
        let clips = crowd.character().clips().len();
        let spawns = grid_spawns(side, clips);
        let mut handles = vec![Handle::default(); spawns.len()];
        crowd.add_many(&spawns, &mut handles)?;
        let movers: Vec<Handle> = handles.iter().copied().step_by(10).collect();
        let positions = spawns.iter().step_by(10).map(|s| s.position).collect();
        let directions = (0..movers.len())
            .map(|i| {
                let a = hash(i as u32 ^ 0x5555) * std::f32::consts::TAU;
                Vec3::new(a.cos(), 0.0, a.sin()) * (1.4 / 60.0)
            })
            .collect();
        let l = side as f32 * 1.5;
        let camera = grid_camera(side, Vec3::new(-0.15 * l, 0.25 * l + 2.0, -0.15 * l));
        Ok(Self {
            handles,
            movers,
            positions,
            directions,
            camera,
            owed: 0.0,
            next: 0,
            clips,
        })
    }

    /// One frame: the changes, then the step. Returns the seconds the changes and the step took.
    fn frame(&mut self, crowd: &mut CrowdFrame) -> (f64, f64) {
        let start = Instant::now();
        for (p, d) in self.positions.iter_mut().zip(&self.directions) {
            *p += *d;
        }
        crowd.set_positions(&self.movers, &self.positions).expect("valid moves");
        self.owed += self.handles.len() as f64 * 0.01 / 60.0;
        while self.owed >= 1.0 {
            self.owed -= 1.0;
            self.next = self.next.wrapping_add(1);
            let h = self.handles[(hash(self.next) * self.handles.len() as f32) as usize % self.handles.len()];
            let clip = ClipId((hash(self.next ^ 0xF00D) * self.clips as f32) as u16 % self.clips as u16);
            crowd.play(h, clip, 0.25).expect("valid switch");
        }
        let stepped = Instant::now();
        crowd.step(1.0 / 60.0, &self.camera).expect("steps");
        ((stepped - start).as_secs_f64(), stepped.elapsed().as_secs_f64())
    }
}

/// What one crowd size measured.
struct Measured {
    step_ms: f64,
    /// The game's calls before the step (moves and clip switches), median.
    game_ms: f64,
    /// The step alone, median.
    step_only_ms: f64,
    stages: StageTimes,
    visible_fraction: f64,
    allocs_per_frame: f64,
}

/// The median of each stage over `stages`.
fn median_stages(stages: &[StageTimes]) -> StageTimes {
    let median = |f: fn(&StageTimes) -> f32| {
        let mut v: Vec<f32> = stages.iter().map(f).collect();
        v.sort_by(f32::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    StageTimes {
        changes_ms: median(|s| s.changes_ms),
        cull_ms: median(|s| s.cull_ms),
        pool_ms: median(|s| s.pool_ms),
        unique_ms: median(|s| s.unique_ms),
        wait_ms: median(|s| s.wait_ms),
        flatten_ms: median(|s| s.flatten_ms),
        pack_ms: median(|s| s.pack_ms),
    }
}

/// Measures `n` instances: the step's median, its stages, and the allocations of 120 further frames.
fn measure(
    quick: bool,
    character: &std::sync::Arc<Character>,
    n: usize,
    iterations: usize,
    pool: &rayon::ThreadPool,
) -> Result<Measured, Box<dyn std::error::Error>> {
    let mut crowd: CrowdFrame = CrowdFrame::new(character.clone(), settings())?;
    let mut game = Game::new(&mut crowd, n)?;
    let exchange: Arc<FrameExchange<Packet>> = crowd.exchange().clone();
    std::thread::scope(|scope| {
        let render = scope.spawn(move || {
            // The render thread: read every packet and keep its stage times (in reserved room: no allocation).
            let mut stages = Vec::with_capacity(1 << 16);
            let mut visible = 0;
            while let Ok(packet) = exchange.begin_read() {
                if stages.len() < stages.capacity() {
                    stages.push(packet.stats().stages);
                }
                visible = packet.stats().visible;
            }
            (stages, visible)
        });
        let (mut game_s, mut step_s) = (Vec::with_capacity(1 << 12), Vec::with_capacity(1 << 12));
        let (frame_s, allocs) = pool.install(|| {
            let frame_s = median_seconds_per_iteration(Effort::new(quick, iterations), || {
                let (g, s) = game.frame(&mut crowd);
                if game_s.len() < game_s.capacity() {
                    game_s.push(g);
                    step_s.push(s);
                }
            });
            let before = allocations();
            for _ in 0..120 {
                game.frame(&mut crowd);
            }
            let allocs = allocations() - before;
            crowd.exchange().close();
            (frame_s, allocs)
        });
        let (stages, visible) = render.join().map_err(|_| "the render thread panicked")?;
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied().unwrap_or(0.0) * 1e3
        };
        Ok(Measured {
            step_ms: frame_s * 1e3,
            game_ms: median(&mut game_s),
            step_only_ms: median(&mut step_s),
            stages: median_stages(&stages),
            visible_fraction: f64::from(visible) / crowd.len() as f64,
            allocs_per_frame: allocs as f64 / 120.0,
        })
    })
}

/// Runs the group.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build()?;
    let model = anim_pose::import_file(crate::default_character())?;
    let options = CharacterOptions {
        slots: SlotCount::Fixed(32),
        ..CharacterOptions::default()
    };
    let character = std::sync::Arc::new(Character::from_model(&model, 0, &options)?);
    let mut push = |name: String, value: f64, target: &'static str, met: bool| {
        figures.push(Figure {
            name,
            value,
            target,
            met,
        })
    };
    let mut at = Vec::new();
    for (n, tag, iterations) in [(10_000, "10k", 40), (100_000, "100k", 10), (1_000_000, "1m", 2)] {
        if std::env::var("FRAME_ONLY").is_ok_and(|v| v != tag) {
            continue;
        }
        let m = measure(quick, &character, n, iterations, &pool)?;
        let (target, met) = if n == 100_000 {
            ("<= 2", m.step_ms <= 2.0)
        } else {
            ("report", true)
        };
        push(format!("frame.pooled_{tag}_ms"), m.step_ms, target, met);
        push(format!("frame.step_only_{tag}_ms"), m.step_only_ms, "report", true);
        push(
            format!("frame.visible_fraction_{tag}"),
            m.visible_fraction,
            "report",
            true,
        );
        if n == 100_000 {
            let s = m.stages;
            push("frame.stage_game_calls_ms".into(), m.game_ms, "part", true);
            for (stage, v) in [
                ("changes", s.changes_ms),
                ("cull", s.cull_ms),
                ("pool", s.pool_ms),
                ("unique", s.unique_ms),
                ("wait", s.wait_ms),
                ("flatten", s.flatten_ms),
                ("pack", s.pack_ms),
            ] {
                push(format!("frame.stage_{stage}_ms"), f64::from(v), "part", true);
            }
        }
        let allocs = m.allocs_per_frame;
        push(format!("frame.allocs_per_frame_{tag}"), allocs, "0", allocs == 0.0);
        at.push(m.step_ms);
    }
    // Linear growth from 100k to 1m is a ratio of 10; below it is better than linear.
    if at.len() < 3 {
        return Ok(());
    }
    let growth = at[2] / at[1];
    push("frame.growth_100k_to_1m".into(), growth, "<= 10", growth <= 10.0);
    push(
        "frame.record_bytes".into(),
        INSTANCE_RECORD_SIZE as f64,
        "<= 32",
        INSTANCE_RECORD_SIZE <= 32,
    );
    Ok(())
}
