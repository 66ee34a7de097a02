//! The `school` scene's fish: a milling school (a torus of fish circling its axis, as real schools mill) on the
//! procedural tier, where each fish is a record with a phase and an amplitude and no bone is sampled.
//!
//! The simulation thread moves the fish and packs their records ([`School::advance`], [`School::publish`]); the
//! render thread takes the latest records from the shared [`FishFeed`] and draws them with
//! `crowd_gpu::ProceduralRenderer`. The two vectors swap places under the feed's lock, so neither thread
//! allocates once both have grown to the count.

use std::f32::consts::{PI, TAU};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use crowd_frame::{InstanceRecord, RecordAnim};
use glam::{Quat, Vec3, Vec4};

use crate::assets::Framing;
use crate::world::Rng;

/// The school's size and swimming, as a scene gives them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SchoolSpec {
    /// Mean distance between neighbours, in fish lengths.
    pub spacing: f32,
    /// Swimming speeds, in fish lengths per second, drawn from this range.
    pub speed: (f32, f32),
    /// The fish the torus is sized for (the scene's count): another count fills the same torus more or less
    /// densely, so the camera keeps its framing.
    pub size: usize,
}

/// The latest fish records and the simulated time they are at, shared by the two threads.
#[derive(Debug, Default)]
pub struct FishFrame {
    /// Simulated seconds (the undulation's clock).
    pub time: f64,
    /// One procedural record per fish.
    pub records: Vec<InstanceRecord>,
}

/// The shared [`FishFrame`].
pub type FishFeed = Arc<Mutex<FishFrame>>;

/// One fish's fixed choices.
#[derive(Clone, Copy, Debug)]
struct Fish {
    /// Angle about the school's axis.
    angle: f32,
    /// Offset from the torus's core circle: outwards and upwards, in units.
    offset: (f32, f32),
    /// Units per second along its circle.
    speed: f32,
    /// The wave's phase at time 0, in turns.
    phase: f32,
    amplitude: f32,
    scale: f32,
    /// Phase of its slow climb and dive.
    bob: f32,
    tint: Vec4,
}

/// The fish of the `school` scene.
#[derive(Debug)]
pub struct School {
    spec: SchoolSpec,
    /// The fish's length in model units, and the speed that beats the undulation at its own frequency.
    length: f32,
    mean_speed: f32,
    centre: Vec3,
    ring: f32,
    tube: f32,
    fish: Vec<Fish>,
    rng: Rng,
    tints: Vec<[f32; 3]>,
    time: f64,
    records: Vec<InstanceRecord>,
    /// Whether `records` were packed since the last publish.
    fresh: bool,
    feed: FishFeed,
}

/// A fish for a character of `framing`: a quarter of its height long, so that a school suits any model's units.
pub fn fish_length(framing: &Framing) -> f32 {
    0.25 * framing.height
}

impl School {
    /// A school of `count` fish `length` units long above ground height `ground_y`, in a torus sized for
    /// `spec.size` fish, tinted by `tints` (mixed half-way with white).
    pub fn new(spec: SchoolSpec, length: f32, ground_y: f32, count: usize, tints: Vec<[f32; 3]>) -> Self {
        let (ring, tube) = torus(spec.size.max(1), spec.spacing * length);
        let mut school = Self {
            spec,
            length,
            mean_speed: 0.5 * (spec.speed.0 + spec.speed.1) * length,
            centre: Vec3::new(0.0, ground_y + tube + 3.0 * length, 0.0),
            ring,
            tube,
            fish: Vec::new(),
            rng: Rng::new(0x2545_f491_4f6c_dd1d),
            tints,
            time: 0.0,
            records: Vec::new(),
            fresh: false,
            feed: Arc::new(Mutex::new(FishFrame::default())),
        };
        school.resize(count);
        school
    }

    /// Fish now.
    pub fn len(&self) -> usize {
        self.fish.len()
    }

    /// True with no fish.
    pub fn is_empty(&self) -> bool {
        self.fish.is_empty()
    }

    /// The school's centre and the radius that holds it.
    pub fn bounds(&self) -> (Vec3, f32) {
        (self.centre, self.ring + self.tube + self.length)
    }

    /// The feed the render thread reads.
    pub fn feed(&self) -> &FishFeed {
        &self.feed
    }

    /// Grows or shrinks the school to `count` fish; new ones fill the torus at random.
    pub fn resize(&mut self, count: usize) {
        self.fish.truncate(count);
        let tints = self.tints.len().max(1);
        while self.fish.len() < count {
            let r = &mut self.rng;
            // Uniform over the tube's disc.
            let (d, a) = (self.tube * r.unit().sqrt(), r.unit() * TAU);
            let speed = (self.spec.speed.0 + (self.spec.speed.1 - self.spec.speed.0) * r.unit()) * self.length;
            let i = self.fish.len();
            let tint = self
                .tints
                .get(i % tints)
                .map_or(Vec4::ONE, |t| (Vec4::new(t[0], t[1], t[2], 1.0) + Vec4::ONE) * 0.5);
            self.fish.push(Fish {
                angle: r.unit() * TAU,
                offset: (d * a.cos(), d * a.sin()),
                speed,
                phase: r.unit(),
                amplitude: 0.6 + 0.4 * r.unit(),
                scale: 0.8 + 0.4 * r.unit(),
                bob: r.unit() * TAU,
                tint,
            });
        }
    }

    /// Moves every fish on by `dt` seconds and packs its record.
    ///
    /// # Errors
    ///
    /// A record that cannot be packed (a non-finite position), naming the fish.
    pub fn advance(&mut self, dt: f32) -> Result<()> {
        self.time += f64::from(dt);
        let t = self.time as f32;
        self.records.clear();
        for (i, f) in self.fish.iter_mut().enumerate() {
            let radius = (self.ring + f.offset.0).max(self.length);
            f.angle = (f.angle + f.speed / radius * dt) % TAU;
            // A slow climb and dive of 3% of the tube every 10 s, which pitches the fish a little.
            let (bob, bob_rate) = (0.03 * self.tube, 0.1 * TAU);
            let climb = bob * bob_rate * (bob_rate * t + f.bob).cos();
            let y = f.offset.1 + bob * (bob_rate * t + f.bob).sin();
            let (s, c) = f.angle.sin_cos();
            let position = self.centre + Vec3::new(radius * c, y, radius * s);
            // Counter-clockwise seen from above: forward is the circle's tangent. The fish's +Z faces forward, it
            // pitches with its climb and banks a little into the turn.
            let yaw = (-s).atan2(c);
            let pitch = -(climb / f.speed).atan();
            let bank = -0.3;
            let rotation = Quat::from_rotation_y(yaw) * Quat::from_rotation_x(pitch) * Quat::from_rotation_z(bank);
            // Faster fish beat faster: the phase runs ahead by their speed over the mean.
            let beat = (f.speed / self.mean_speed - 1.0) * 2.0 * t;
            let phase = (f.phase + beat).rem_euclid(1.0);
            let record = InstanceRecord::new(
                position,
                rotation,
                f.scale * self.length / MESH_LENGTH,
                RecordAnim::Procedural {
                    phase,
                    amplitude: f.amplitude,
                },
                f.tint,
            )
            .with_context(|| format!("fish {i}"))?;
            self.records.push(record);
        }
        self.fresh = true;
        Ok(())
    }

    /// Hands the records of the last [`School::advance`] to the render thread (nothing when none ran since the
    /// last publish: the feed keeps the latest).
    pub fn publish(&mut self) {
        if !std::mem::take(&mut self.fresh) {
            return;
        }
        if let Ok(mut feed) = self.feed.lock() {
            feed.time = self.time;
            std::mem::swap(&mut feed.records, &mut self.records);
        }
    }
}

/// The length the fish mesh is generated at: records scale it to the school's fish.
pub const MESH_LENGTH: f32 = 1.0;

/// The core circle's radius and the tube's radius of a torus that gives `count` fish a cube of side `spacing`
/// each, with the tube a third of the ring.
fn torus(count: usize, spacing: f32) -> (f32, f32) {
    // Volume 2π² R r² with r = R / 3.
    let volume = count as f32 * spacing.powi(3);
    let ring = (volume / (2.0 * PI * PI / 9.0)).cbrt();
    (ring, ring / 3.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_school_swims_around_its_axis_and_hands_over_its_records() {
        let spec = SchoolSpec {
            spacing: 1.5,
            speed: (1.0, 2.0),
            size: 300,
        };
        let mut school = School::new(spec, 0.5, 0.0, 300, vec![[0.6, 0.7, 0.9]]);
        let (centre, radius) = school.bounds();
        school.advance(0.5).expect("packs");
        school.publish();
        let first: Vec<Vec3> = school
            .feed()
            .lock()
            .expect("feed")
            .records
            .iter()
            .map(|r| r.decode().position)
            .collect();
        assert_eq!(first.len(), 300);
        for p in &first {
            assert!(p.distance(centre) <= radius, "{p} outside {radius} of {centre}");
            assert!(p.y > 0.0, "{p} under the ground");
        }
        school.advance(0.5).expect("packs");
        school.publish();
        let feed = school.feed().lock().expect("feed");
        assert!((feed.time - 1.0).abs() < 1e-9);
        // Each fish moved forward along its circle: counter-clockwise seen from above, about 0.5 to 1 m in 0.5 s.
        for (a, r) in first.iter().zip(&feed.records) {
            let b = r.decode().position;
            let (ra, rb) = (*a - centre, b - centre);
            let turned = ra.x * rb.z - ra.z * rb.x;
            assert!(turned > 0.0, "{a} to {b}");
            let moved = a.distance(b);
            assert!((0.2..1.2).contains(&moved), "{moved}");
        }
        drop(feed);
        school.resize(10);
        assert_eq!(school.len(), 10);
    }
}
