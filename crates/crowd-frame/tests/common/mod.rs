//! Shared helpers of the integration tests: the default character, a deterministic crowd and a scripted frame.

#![allow(dead_code, reason = "each test file uses a different subset")]

use crowd_cull::Handle;
use crowd_frame::{Character, CharacterOptions, ClipId, CrowdFrame, FrameCamera, SlotCount, Spawn};
use glam::{Quat, Vec3, Vec4};
use skin_pack::PaletteFormat;

/// The default character's model.
pub fn model() -> anim_pose::Model {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/crowd_character.glb");
    anim_pose::import_file(path).expect("the default character imports")
}

/// The default character with `slots` pool slots per clip.
pub fn character(slots: usize) -> Character {
    let options = CharacterOptions {
        slots: SlotCount::Fixed(slots),
        ..CharacterOptions::default()
    };
    Character::from_model(&model(), 0, &options).expect("the default character builds")
}

/// A small deterministic generator (SplitMix64), so that two runs of a script see the same numbers.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A float in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// A float in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// An index below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The camera of the scripts: at head height, looking down the -z axis over the crowd.
pub fn camera(frame: usize) -> FrameCamera {
    let sway = (frame as f32 * 0.01).sin() * 0.3;
    FrameCamera::perspective(
        Vec3::new(0.0, 1.7, 2.0),
        Vec3::new(sway, 1.0, -10.0),
        Vec3::Y,
        1.0,
        16.0 / 9.0,
        0.1,
        400.0,
    )
}

/// `n` spawns over a field in front of the camera, the nearest within a few metres (unique), the farthest past
/// 150 m (VAT), each turned, scaled, tinted and phased differently, some tilted (not all upright).
pub fn spawns(rng: &mut Rng, n: usize, clips: usize) -> Vec<Spawn> {
    (0..n)
        .map(|i| {
            let d = 2.0 + 200.0 * (i as f32 / n as f32).powi(2);
            let x = rng.range(-0.6, 0.6) * d;
            let tilt = if i % 7 == 0 { rng.range(-0.4, 0.4) } else { 0.0 };
            Spawn {
                position: Vec3::new(x, 0.0, -d),
                rotation: Quat::from_rotation_y(rng.range(-3.1, 3.1)) * Quat::from_rotation_x(tilt),
                scale: rng.range(0.7, 1.4),
                clip: ClipId(rng.below(clips) as u16),
                time: rng.range(0.0, 3.0),
                speed: rng.range(0.8, 1.25),
                tint: Vec4::new(rng.unit(), rng.unit(), rng.unit(), 1.0),
            }
        })
        .collect()
}

/// What a script changes per frame, sized once.
pub struct Script {
    pub rng: Rng,
    pub handles: Vec<Handle>,
    pub movers: Vec<Handle>,
    pub positions: Vec<Vec3>,
}

impl Script {
    /// Adds `n` instances to `crowd`; one in ten moves every frame.
    pub fn new<F: PaletteFormat>(crowd: &mut CrowdFrame<F>, seed: u64, n: usize) -> Self {
        let mut rng = Rng(seed);
        let spawns = spawns(&mut rng, n, crowd.character().clips().len());
        let mut handles = vec![Handle::default(); n];
        crowd.add_many(&spawns, &mut handles).expect("spawns are valid");
        let movers: Vec<Handle> = handles.iter().copied().step_by(10).collect();
        let positions = spawns.iter().step_by(10).map(|s| s.position).collect();
        Self {
            rng,
            handles,
            movers,
            positions,
        }
    }

    /// Frame `f`'s changes: the movers walk, and `switches` random instances switch clip with a fade.
    pub fn changes<F: PaletteFormat>(&mut self, crowd: &mut CrowdFrame<F>, f: usize, switches: usize) {
        let step = Vec3::new((f as f32 * 0.05).cos(), 0.0, (f as f32 * 0.05).sin()) * 0.03;
        for p in &mut self.positions {
            *p += step;
        }
        crowd
            .set_positions(&self.movers, &self.positions)
            .expect("moves are valid");
        let clips = crowd.character().clips().len();
        for _ in 0..switches {
            let h = self.handles[self.rng.below(self.handles.len())];
            let clip = ClipId(self.rng.below(clips) as u16);
            let fade = if self.rng.below(4) == 0 { 0.0 } else { 0.3 };
            crowd.play(h, clip, fade).expect("switches are valid");
        }
    }
}
