//! The simulation: a scene's characters in a `crowd_frame::CrowdFrame`, placed by its layout and driven by its
//! behaviour, through crowd-frame's public calls only (add, remove, play, set_transform, step).

use std::f32::consts::PI;
use std::sync::Arc;

use anyhow::{Result, bail};
use crowd_cull::Handle;
use crowd_frame::{ClipId, CrowdFrame, FrameCamera, Spawn};
use glam::{Quat, Vec3, Vec4};

use crate::assets::Assets;
use crate::scene::{Behaviour, Layout, Scene};
use crate::school::{FishFeed, School, SchoolSpec};

/// A small deterministic generator (xorshift), so that a scene looks the same on every run.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (not 0).
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    /// A number in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// One character's game state.
#[derive(Clone, Debug)]
struct Agent {
    handle: Handle,
    position: Vec3,
    /// Radians about +Y; the character faces its local +Z turned by this.
    heading: f32,
    /// The rank within the regiment (0 = front).
    rank: usize,
    clip: ClipId,
    speed: f32,
    /// The phase index of [`Behaviour::Waves`] last applied, or the time of the next re-pick of
    /// [`Behaviour::Wander`].
    phase: usize,
    next_pick: f32,
    /// Completed cycles of [`Behaviour::Waves`], to turn about after each.
    cycles: i64,
}

/// The scene's crowd and its game state.
pub struct World {
    crowd: CrowdFrame,
    assets: Arc<Assets>,
    scene: Scene,
    agents: Vec<Agent>,
    rng: Rng,
    time: f32,
    /// The layout's centre and radius, in model units.
    centre: Vec3,
    extent: f32,
    /// The count the layout is planned for (the start count): regiments stand in a square of this many soldiers'
    /// regiments, and a crowd grown later continues its rows.
    planned: usize,
    /// A clip that every character plays instead of the behaviour's (the clip-switch key).
    forced: Option<ClipId>,
    /// The behaviour's clips, resolved once: per phase of [`Behaviour::Waves`] (with its seconds), or per clip of
    /// [`Behaviour::Wander`] (with its weight).
    clips: Vec<(ClipId, f32)>,
    /// Scratch for `add_many`.
    handles: Vec<Handle>,
    /// The fish of a [`Layout::School`] (whose crowd of characters stays empty).
    school: Option<School>,
}

impl World {
    /// The crowd of `scene` with `count` characters.
    ///
    /// # Errors
    ///
    /// crowd-frame's errors for the spawns.
    pub fn new(crowd: CrowdFrame, assets: Arc<Assets>, scene: Scene, count: usize) -> Result<Self> {
        let mut world = Self {
            crowd,
            assets: assets.clone(),
            agents: Vec::new(),
            rng: Rng::new(0x9e37_79b9_7f4a_7c15),
            time: 0.0,
            centre: Vec3::ZERO,
            extent: 1.0,
            planned: count.max(1),
            forced: None,
            clips: match &scene.behaviour {
                Behaviour::Waves { cycle, .. } => cycle
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (assets.clip(&p.clip, i), p.seconds))
                    .collect(),
                Behaviour::Wander { clips, .. } => clips
                    .iter()
                    .enumerate()
                    .map(|(i, (name, weight))| (assets.clip(name, i), *weight))
                    .collect(),
                Behaviour::Swim { .. } => Vec::new(),
            },
            handles: Vec::new(),
            school: match (&scene.layout, &scene.behaviour) {
                (Layout::School { spacing }, Behaviour::Swim { speed }) => Some(School::new(
                    SchoolSpec {
                        spacing: *spacing,
                        speed: *speed,
                        size: scene.count,
                    },
                    crate::school::fish_length(&assets.framing),
                    assets.framing.ground_y,
                    count,
                    scene.tints.clone(),
                )),
                _ => None,
            },
            scene,
        };
        if let Some(school) = &world.school {
            (world.centre, world.extent) = school.bounds();
            return Ok(world);
        }
        let (centre, extent) = world.layout_extent(count.max(1));
        world.centre = centre;
        world.extent = extent;
        world.resize(count)?;
        Ok(world)
    }

    /// The crowd.
    pub fn crowd(&self) -> &CrowdFrame {
        &self.crowd
    }

    /// The model the crowd is made of.
    pub fn assets(&self) -> &Assets {
        &self.assets
    }

    /// Characters (or fish) now.
    pub fn len(&self) -> usize {
        self.school.as_ref().map_or(self.agents.len(), School::len)
    }

    /// True with no characters (or fish).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The feed of a school's fish records, for the render thread.
    pub fn fish_feed(&self) -> Option<FishFeed> {
        self.school.as_ref().map(|s| s.feed().clone())
    }

    /// The centre of the layout at the start and its radius.
    pub fn bounds(&self) -> (Vec3, f32) {
        (self.centre, self.extent)
    }

    /// The centre and radius that `count` characters of this layout fill.
    fn layout_extent(&self, count: usize) -> (Vec3, f32) {
        let f = self.assets.framing;
        let ground = Vec3::new(0.0, f.ground_y, 0.0);
        match self.scene.layout {
            Layout::Regiments { .. } => {
                let (min, max) = (0..count).fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), i| {
                    let (p, _, _) = self.regiment_slot(i);
                    (lo.min(p), hi.max(p))
                });
                ((min + max) * 0.5, ((max - min) * 0.5).length().max(f.footprint))
            }
            Layout::Scatter { spacing } => (ground, (count as f32 / PI).sqrt() * spacing * f.footprint + f.footprint),
            Layout::School { .. } => self.school.as_ref().map_or((ground, f.footprint), School::bounds),
        }
    }

    /// Where soldier `i` of a [`Layout::Regiments`] stands: position, regiment, rank.
    fn regiment_slot(&self, i: usize) -> (Vec3, usize, usize) {
        let f = self.assets.framing;
        let (p, regiment, rank) = regiment_place(&self.scene.layout, self.planned, i);
        (p * f.footprint + Vec3::new(0.0, f.ground_y, 0.0), regiment, rank)
    }

    /// Grows or shrinks the crowd to `count` characters: new ones continue the layout, and the last added go first.
    ///
    /// # Errors
    ///
    /// crowd-frame's errors for the spawns or removals.
    pub fn resize(&mut self, count: usize) -> Result<()> {
        if count > crate::scene::MAX_COUNT {
            bail!("{count} characters is more than the demo's {}", crate::scene::MAX_COUNT);
        }
        if let Some(school) = &mut self.school {
            school.resize(count);
            return Ok(());
        }
        while self.agents.len() > count {
            let agent = self.agents.pop().expect("len > count >= 0");
            self.crowd.remove(agent.handle)?;
        }
        let first = self.agents.len();
        if count == first {
            return Ok(());
        }
        let f = self.assets.framing;
        let tints = self.scene.tints.len().max(1);
        let mut spawns = Vec::with_capacity(count - first);
        let mut agents = Vec::with_capacity(count - first);
        let behaviour = self.scene.behaviour.clone();
        for i in first..count {
            let (position, group, rank, heading) = match self.scene.layout {
                Layout::Regiments { .. } => {
                    let (mut p, regiment, rank) = self.regiment_slot(i);
                    p += Vec3::new(self.rng.unit() - 0.5, 0.0, self.rng.unit() - 0.5) * 0.15 * f.footprint;
                    (p, regiment, rank, (self.rng.unit() - 0.5) * 0.1)
                }
                Layout::Scatter { .. } => {
                    // Uniform over the disc of the current count, so that a grown crowd keeps its density.
                    let (_, radius) = self.layout_extent(count);
                    let r = radius * self.rng.unit().sqrt();
                    let a = self.rng.unit() * 2.0 * PI;
                    let p = self.centre + Vec3::new(r * a.cos(), 0.0, r * a.sin());
                    (p, i % tints, 0, self.rng.unit() * 2.0 * PI)
                }
                Layout::School { .. } => unreachable!("a school's fish are not characters"),
            };
            let (clip, speed, next_pick) = match &behaviour {
                Behaviour::Waves { .. } => (self.clips[0].0, 1.0, 0.0),
                Behaviour::Swim { .. } => unreachable!("a school's fish are not characters"),
                Behaviour::Wander { speed, retarget, .. } => {
                    let clip = pick(&mut self.rng, &self.clips);
                    let s = speed.0 + (speed.1 - speed.0) * self.rng.unit();
                    (clip, s, self.time + retarget * (0.5 + self.rng.unit()))
                }
            };
            let clip = self.forced.unwrap_or(clip);
            let tint = self
                .scene
                .tints
                .get(group % tints)
                .map_or(Vec4::ONE, |t| Vec3::from_array(*t).lerp(Vec3::ONE, 0.3).extend(1.0));
            spawns.push(Spawn {
                rotation: Quat::from_rotation_y(heading),
                time: self.rng.unit() * 8.0,
                speed,
                tint,
                ..Spawn::at(position, clip)
            });
            agents.push(Agent {
                handle: Handle::default(),
                position,
                heading,
                rank,
                clip,
                speed,
                phase: 0,
                next_pick,
                cycles: 0,
            });
        }
        self.handles.clear();
        self.handles.resize(spawns.len(), Handle::default());
        self.crowd.add_many(&spawns, &mut self.handles)?;
        for (a, &h) in agents.iter_mut().zip(&self.handles) {
            a.handle = h;
        }
        self.agents.extend(agents);
        Ok(())
    }

    /// Makes every character play `clip` (crossfading over `fade` seconds), or go back to the scene's behaviour.
    ///
    /// # Errors
    ///
    /// crowd-frame's errors for `play`.
    pub fn force_clip(&mut self, clip: Option<ClipId>, fade: f32) -> Result<()> {
        self.forced = clip;
        if let Some(c) = clip {
            for a in &mut self.agents {
                a.clip = c;
                self.crowd.play(a.handle, c, fade)?;
            }
        } else {
            // The behaviour picks again at the next step.
            for a in &mut self.agents {
                a.phase = usize::MAX;
                a.next_pick = self.time;
            }
        }
        Ok(())
    }

    /// The clip forced on every character, if any.
    pub fn forced(&self) -> Option<ClipId> {
        self.forced
    }

    /// Advances the game by `dt` seconds: the behaviour's clip changes and moves (nothing with `dt` = 0).
    ///
    /// # Errors
    ///
    /// crowd-frame's errors.
    pub fn advance(&mut self, dt: f32) -> Result<()> {
        if dt > 0.0 {
            self.time += dt;
            if let Some(school) = &mut self.school {
                school.advance(dt)?;
            } else {
                self.behave(dt)?;
            }
        }
        Ok(())
    }

    /// Steps the crowd by `dt` seconds for `camera` and publishes its packet (0 while paused: the crowd is culled
    /// again for the camera and nothing animates).
    ///
    /// # Errors
    ///
    /// crowd-frame's errors.
    pub fn step(&mut self, dt: f32, camera: &FrameCamera) -> Result<u64> {
        let frame = self.crowd.step(dt, camera)?;
        if let Some(school) = &mut self.school {
            school.publish();
        }
        Ok(frame)
    }

    fn behave(&mut self, dt: f32) -> Result<()> {
        let time = self.time;
        let forced = self.forced;
        let (centre, extent) = (self.centre, self.extent);
        match &self.scene.behaviour {
            Behaviour::Waves {
                cycle,
                rank_delay,
                fade,
            } => {
                let period: f32 = cycle.iter().map(|p| p.seconds).sum();
                for a in &mut self.agents {
                    let local = time - a.rank as f32 * rank_delay;
                    let cycles = (local / period).floor() as i64;
                    let mut at = local - cycles as f32 * period;
                    let mut phase = 0;
                    while phase + 1 < cycle.len() && at >= cycle[phase].seconds {
                        at -= cycle[phase].seconds;
                        phase += 1;
                    }
                    let mut turned = false;
                    if local >= 0.0 && cycles > a.cycles {
                        a.cycles = cycles;
                        a.heading += PI;
                        turned = true;
                    }
                    if forced.is_none() && local >= 0.0 && phase != a.phase {
                        a.phase = phase;
                        let clip = self.clips[phase].0;
                        if clip != a.clip {
                            a.clip = clip;
                            self.crowd.play(a.handle, clip, *fade)?;
                        }
                    }
                    let marching = forced.is_some() || (local >= 0.0 && cycle[a.phase.min(cycle.len() - 1)].march);
                    let moved = marching && Self::walk(&self.assets, a, dt);
                    if forced.is_some() {
                        Self::keep_inside(a, centre, extent * 1.5);
                    }
                    if moved || turned {
                        self.crowd
                            .set_transform(a.handle, a.position, Quat::from_rotation_y(a.heading))?;
                    }
                }
            }
            Behaviour::Wander {
                speed, retarget, fade, ..
            } => {
                let (lo, hi, retarget, fade) = (speed.0, speed.1, *retarget, *fade);
                for i in 0..self.agents.len() {
                    let mut turned = false;
                    if forced.is_none() && self.agents[i].next_pick <= time {
                        let clip = pick(&mut self.rng, &self.clips);
                        let s = lo + (hi - lo) * self.rng.unit();
                        let heading = self.rng.unit() * 2.0 * PI;
                        let next = time + retarget * (0.5 + self.rng.unit());
                        let a = &mut self.agents[i];
                        a.next_pick = next;
                        a.heading = heading;
                        turned = true;
                        if clip != a.clip || (s - a.speed).abs() > 1e-3 {
                            a.clip = clip;
                            a.speed = s;
                            self.crowd.play(a.handle, clip, fade)?;
                            self.crowd.set_speed(a.handle, s)?;
                        }
                    }
                    let a = &mut self.agents[i];
                    let moved = Self::walk(&self.assets, a, dt);
                    turned |= Self::keep_inside(a, centre, extent);
                    if moved || turned {
                        self.crowd
                            .set_transform(a.handle, a.position, Quat::from_rotation_y(a.heading))?;
                    }
                }
            }
            // The school moves in `advance`.
            Behaviour::Swim { .. } => {}
        }
        Ok(())
    }

    /// Moves `a` at its clip's ground speed; true when it moved.
    fn walk(assets: &Assets, a: &mut Agent, dt: f32) -> bool {
        let v = assets.ground_velocity[usize::from(a.clip.0)];
        if v == Vec3::ZERO {
            return false;
        }
        a.position += Quat::from_rotation_y(a.heading) * v * (a.speed * dt);
        true
    }

    /// Turns `a` back towards `centre` when it is past `radius` and heading out; true when it turned.
    fn keep_inside(a: &mut Agent, centre: Vec3, radius: f32) -> bool {
        let out = a.position - centre;
        let forward = Quat::from_rotation_y(a.heading) * Vec3::Z;
        if out.length() > radius && out.dot(forward) > 0.0 {
            // Face the centre: +Z turned by the heading points along -out.
            a.heading = (-out.x).atan2(-out.z);
            return true;
        }
        false
    }
}

/// A clip of `clips` drawn by weight (the weights add up to more than 0, as the scene's check makes sure).
fn pick(rng: &mut Rng, clips: &[(ClipId, f32)]) -> ClipId {
    let total: f32 = clips.iter().map(|(_, w)| w).sum();
    let mut x = rng.unit() * total;
    for &(clip, w) in clips {
        if x < w {
            return clip;
        }
        x -= w;
    }
    clips[0].0
}

/// Where soldier `i` of `layout` (a [`Layout::Regiments`]; other layouts give the origin) stands, in footprints on
/// the ground, with its regiment and rank, for a crowd planned for `planned` soldiers: the regiments stand in a
/// square of regiments, so a million soldiers make a block, not a line.
fn regiment_place(layout: &Layout, planned: usize, i: usize) -> (Vec3, usize, usize) {
    let Layout::Regiments {
        files,
        per_regiment,
        spacing,
        gap,
    } = *layout
    else {
        return (Vec3::ZERO, 0, 0);
    };
    let total_regiments = planned.div_ceil(per_regiment).max(1);
    let across = (total_regiments as f32).sqrt().ceil() as usize;
    let ranks = per_regiment.div_ceil(files);
    let (regiment, within) = (i / per_regiment, i % per_regiment);
    let (file, rank) = (within % files, within / files);
    let width = files as f32 * spacing + gap;
    let depth = ranks as f32 * spacing + gap;
    let origin = Vec3::new(
        (regiment % across) as f32 * width,
        0.0,
        (regiment / across) as f32 * depth,
    );
    // Soldiers face +Z (their local forward); the front rank is the one with the largest z.
    let p = origin + Vec3::new(file as f32, 0.0, (ranks - 1 - rank) as f32) * spacing;
    (p, regiment, rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARMY: Layout = Layout::Regiments {
        files: 25,
        per_regiment: 625,
        spacing: 1.6,
        gap: 6.0,
    };

    /// The extent of the first `n` soldiers planned for `planned`: (width, depth) in footprints.
    fn extent(planned: usize, n: usize) -> (f32, f32) {
        let (lo, hi) = (0..n).fold((Vec3::MAX, Vec3::MIN), |(lo, hi), i| {
            let p = regiment_place(&ARMY, planned, i).0;
            (lo.min(p), hi.max(p))
        });
        (hi.x - lo.x, hi.z - lo.z)
    }

    #[test]
    fn a_large_army_stands_in_a_square_block() {
        for planned in [10_000, 250_000, 1_000_000] {
            let (w, d) = extent(planned, planned);
            assert!((0.5..=2.0).contains(&(w / d)), "{planned}: {w} x {d}");
        }
    }

    #[test]
    fn a_grown_army_keeps_its_soldiers_in_place() {
        let first: Vec<_> = (0..2000).map(|i| regiment_place(&ARMY, 1000, i)).collect();
        // Soldiers past the planned count continue the rows; the planned ones do not move.
        assert_eq!(
            first[..1000],
            (0..1000).map(|i| regiment_place(&ARMY, 1000, i)).collect::<Vec<_>>()[..]
        );
        assert_ne!(first[1500].0, first[500].0);
    }
}
