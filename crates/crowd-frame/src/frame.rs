//! [`CrowdFrame`]: a crowd's simulation-side state, its instance API, and the frame step that publishes packets.

use std::sync::Arc;
use std::time::Instant;

use anim_pose::{PoolClip, PosePool, SlotRef, SoaTransform, num_soa_joints};
use crowd_cull::{
    AnimState, CullOutput, CullingCache, CullingJob, GroupDesc, GroupId, Handle, InstanceDesc, InstanceStore, Tier,
};
use glam::{Affine3A, Quat, Vec3, Vec4};
use rayon::prelude::*;
use skin_pack::{FlattenCache, FlattenJob, FrameExchange, PaletteEntry, PaletteFormat, PoolFlattenJob};

use crate::anim::{Spawn, clip_time, start_for, switch};
use crate::character::{Character, ClipId};
use crate::pack::{PACK_CHUNK, PackInput, pack_frame};
use crate::packet::Packet;
use crate::record::{scale_fits, tint_fits};
use crate::unique::{UniqueInput, animate_unique};
use crate::{Error, Result};
use crowd_cull::FrameCamera;

mod clock;
mod fades;
mod gpu_driven;
mod resend;
mod settings;

use clock::Clock;
pub use clock::REBASE_AFTER;
use fades::{FadeSlot, FadeTiming};
use resend::Resend;
pub use resend::ResendRequest;
pub use settings::FrameSettings;

/// Marks a record whose instance is not unique in [`CrowdFrame`]'s per-record unique index.
pub(crate) const NOT_UNIQUE: u32 = u32::MAX;

/// Marks, while tracks are assigned, a record whose instance crossfades; never a pool track (a pool has fewer than
/// `u16::MAX` tracks).
const FADING: u16 = u16::MAX;

/// The simulation side of one crowd of one [`Character`] (shared through an `Arc`): the instance store, the pose
/// pool and its crossfade buckets, the culling caches, the per-record scratch, and the [`FrameExchange`] of
/// [`Packet`]s.
///
/// The game changes instances through the methods below (they apply at once, in O(1) each, or in parallel for bulk
/// moves), then calls [`CrowdFrame::step`] once per frame. The render thread reads packets from
/// [`CrowdFrame::exchange`].
///
/// # Allocation
///
/// Construction sizes everything for the character and the settings. Adding instances grows the store and the
/// per-record buffers (allocating); after that, `step` and the per-instance changes do not allocate, and neither
/// does the render thread's side of the exchange (`tests/two_threads.rs` proves both with a counting
/// allocator). Rayon allocates a small block once every 63 entries from a thread outside its pool: run the
/// simulation loop inside `rayon::ThreadPool::install` where no allocation may happen.
pub struct CrowdFrame<F: PaletteFormat = PaletteEntry> {
    character: Arc<Character>,
    settings: FrameSettings,
    store: InstanceStore,
    group: GroupId,
    pool: PosePool,
    cache: CullingCache,
    cull: CullOutput,
    /// The clock: f64 seconds, and the f32 animation time the instances' states are relative to.
    clock: Clock,
    /// The instances whose state had a crossfade when the game last switched them: the step progresses these
    /// (O(crossfades)) and drops those that no longer fade.
    fading: Vec<Handle>,
    /// Per handle-table index, its place in `fading` and its crossfade's timing. Sized by the store's handle table.
    fade_of: Vec<FadeSlot>,
    /// Per record of the frame: the pool track and time it maps, its slot ref, and its unique index or
    /// [`NOT_UNIQUE`]. Sized by the live instance count.
    tracks: Vec<u16>,
    times: Vec<f32>,
    refs: Vec<SlotRef>,
    unique_of: Vec<u32>,
    /// The store slot of each unique instance of the frame; `max_unique` long.
    unique_slots: Vec<u32>,
    unique_count: usize,
    /// Per unique instance: three local poses (the clip, the fade target, the blend) and the model pose.
    unique_local: Vec<SoaTransform>,
    unique_model: Vec<Affine3A>,
    rest: Vec<SoaTransform>,
    exchange: Arc<FrameExchange<Packet<F>>>,
    spawn_scratch: Vec<InstanceDesc>,
    /// GPU-driven frames: the slot ranges changed this frame, the unique slots of the previous frame (sorted), their
    /// handles (sorted, for the unique pick's hysteresis), and the screen sizes of the unique picks.
    changed: Vec<std::ops::Range<u32>>,
    changed_starts: Vec<u32>,
    changed_slots: Vec<u32>,
    prev_unique: Vec<u32>,
    prev_unique_handles: Vec<Handle>,
    pick_scratch: Vec<f32>,
    /// GPU-driven frames: the resend state (full resends, the epoch, the last published frame).
    resend: Resend,
}

impl<F: PaletteFormat> std::fmt::Debug for CrowdFrame<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrowdFrame")
            .field("format", &F::NAME)
            .field("instances", &self.store.len())
            .field("clock", &self.clock.seconds())
            .field("fading", &self.fading.len())
            .finish_non_exhaustive()
    }
}

impl<F: PaletteFormat> CrowdFrame<F> {
    /// An empty crowd of `character` (a `Character`, or an `Arc` shared with other crowds and the renderer), with
    /// its pose pool, culling group and exchange.
    ///
    /// # Errors
    ///
    /// - [`Error::LodThresholds`] when the LOD thresholds do not match the character's LODs, [`Error::MaxUnique`]
    ///   when `max_unique` is 0 or above `u32::MAX` palette entries;
    /// - [`Error::Cull`] for invalid cluster settings, thresholds or `max_slots`, [`Error::Pose`] for pool options
    ///   or slot counts the pool rejects, [`Error::Palette`] for the exchange.
    pub fn new(character: impl Into<Arc<Character>>, settings: FrameSettings) -> Result<Self> {
        let character: Arc<Character> = character.into();
        if settings.lod_thresholds.len() + 1 != character.lod_count() {
            return Err(Error::LodThresholds {
                thresholds: settings.lod_thresholds.len(),
                lods: character.lod_count(),
            });
        }
        let s = character.binding().skin_joint_count();
        if settings.max_unique == 0 || settings.max_unique.saturating_mul(s.max(1)) > u32::MAX as usize {
            return Err(Error::MaxUnique {
                max_unique: settings.max_unique,
            });
        }
        if !settings.pose_pool && !settings.gpu_driven {
            return Err(Error::PosePool);
        }
        let mut store = InstanceStore::new(settings.cluster)?;
        store.set_max_slots(settings.max_slots)?;
        let group = store.add_group(GroupDesc {
            mesh: 0,
            material: 0,
            clip_bounds: character.clip_bounds().to_vec(),
            lod_thresholds: settings.lod_thresholds.clone(),
            tier_thresholds: settings.tier_thresholds,
            rate_thresholds: settings.rate_thresholds,
            hysteresis: settings.hysteresis,
        })?;
        let pool_clips: Vec<PoolClip<'_>> = character
            .clips()
            .iter()
            .zip(character.slots())
            .map(|(clip, &slots)| PoolClip { clip, slots })
            .collect();
        let pool = PosePool::new(character.skeleton(), &pool_clips, &settings.pool)?;
        let packets = (0..settings.packets)
            .map(|_| {
                Packet::new(
                    s,
                    pool.slot_count(),
                    settings.max_unique,
                    character.lod_count(),
                    pool.max_crossfade_buckets(),
                )
            })
            .collect();
        let exchange = Arc::new(FrameExchange::new(packets, settings.overrun)?);
        let skeleton = character.skeleton();
        let (j, soa) = (skeleton.joint_count(), num_soa_joints(skeleton.joint_count()));
        let max_unique = settings.max_unique;
        let rest = skeleton.rest_pose_soa();
        Ok(Self {
            store,
            group,
            pool,
            cache: CullingCache::new(),
            cull: CullOutput::new(),
            clock: Clock::default(),
            fading: Vec::new(),
            fade_of: Vec::new(),
            tracks: Vec::new(),
            times: Vec::new(),
            refs: Vec::new(),
            unique_of: Vec::new(),
            unique_slots: vec![0; max_unique],
            unique_count: 0,
            unique_local: vec![SoaTransform::IDENTITY; max_unique * 3 * soa],
            unique_model: vec![Affine3A::IDENTITY; max_unique * j],
            rest,
            exchange,
            spawn_scratch: Vec::new(),
            changed: Vec::new(),
            changed_starts: Vec::new(),
            changed_slots: Vec::new(),
            prev_unique: Vec::with_capacity(max_unique),
            prev_unique_handles: Vec::with_capacity(max_unique),
            pick_scratch: vec![0.0; max_unique],
            resend: Resend::default(),
            settings,
            character,
        })
    }

    /// The exchange the render thread reads packets from (a shared handle; clone it to the render thread).
    pub fn exchange(&self) -> &Arc<FrameExchange<Packet<F>>> {
        &self.exchange
    }

    /// The character (a shared handle: clone it to build a renderer or another crowd of it).
    pub fn character(&self) -> &Arc<Character> {
        &self.character
    }

    /// The settings.
    pub fn settings(&self) -> &FrameSettings {
        &self.settings
    }

    /// The instance store (read-only: change instances through the frame, which validates what the packer
    /// relies on).
    pub fn store(&self) -> &InstanceStore {
        &self.store
    }

    /// The crowd's draw group in the store.
    pub fn group(&self) -> GroupId {
        self.group
    }

    /// The pose pool, as of the last step.
    pub fn pool(&self) -> &PosePool {
        &self.pool
    }

    /// The culling output of the last step: the visible slots, list after list (for the plain reference).
    pub(crate) fn cull_output(&self) -> &CullOutput {
        &self.cull
    }

    /// The clock, in seconds since the crowd was made: the sum of the steps' `dt`, in f64 so that it keeps
    /// sub-microsecond steps for centuries.
    pub fn time(&self) -> f64 {
        self.clock.seconds()
    }

    /// The animation time the instances' states are relative to, in seconds: the clock minus its epoch, which moves
    /// forward every [`REBASE_AFTER`] seconds (see [`crate::anim`]). `clip_time(&anim, crowd.anim_time())` is an
    /// instance's clip time; packets carry it as [`Packet::time`](crate::Packet::time).
    pub fn anim_time(&self) -> f32 {
        self.clock.now()
    }

    /// The number of live instances.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// True when the crowd has no instance.
    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }

    /// The per-record pool tracks and times of the last step (for the plain reference).
    pub(crate) fn pool_inputs(&self) -> (&[u16], &[f32]) {
        let n = self.cull.indices().len();
        (&self.tracks[..n], &self.times[..n])
    }

    /// Checks one spawn and turns it into the store's description.
    fn describe(&self, i: usize, s: &Spawn) -> Result<InstanceDesc> {
        if !self.character.has_clip(s.clip) {
            return Err(Error::SpawnClip {
                spawn: i,
                clip: s.clip.0,
                clips: self.character.clips().len(),
            });
        }
        if !scale_fits(s.scale) {
            return Err(Error::SpawnScale {
                spawn: i,
                scale: s.scale,
            });
        }
        check_tint(Some(i), s.tint)?;
        if !(s.time.is_finite() && s.speed.is_finite()) {
            return Err(Error::SpawnTime {
                spawn: i,
                time: s.time,
                speed: s.speed,
            });
        }
        Ok(InstanceDesc {
            position: s.position,
            rotation: s.rotation,
            scale: s.scale,
            anim: AnimState {
                start_time: start_for(s.time, s.speed, self.clock.now()),
                speed: s.speed,
                ..AnimState::clip(u32::from(s.clip.0))
            },
            custom: s.tint,
            flags: 0,
        })
    }

    /// Adds one instance.
    ///
    /// # Errors
    ///
    /// [`Error::SpawnClip`], [`Error::SpawnScale`], [`Error::Tint`] or [`Error::SpawnTime`] for a bad spawn (see
    /// [`Spawn`]), [`Error::Cull`] for what the store
    /// rejects (a non-finite position, a rotation far from unit length). Nothing changes on error.
    pub fn add(&mut self, spawn: &Spawn) -> Result<Handle> {
        let mut handle = [Handle::default()];
        self.add_many(std::slice::from_ref(spawn), &mut handle)?;
        Ok(handle[0])
    }

    /// Adds `spawns`, writing their handles to `handles` (as long). Grows the per-record buffers.
    ///
    /// # Errors
    ///
    /// As [`CrowdFrame::add`], naming the spawn by index; [`Error::HandleCount`] when the lengths differ. Nothing
    /// changes on error.
    pub fn add_many(&mut self, spawns: &[Spawn], handles: &mut [Handle]) -> Result<()> {
        if spawns.len() != handles.len() {
            return Err(Error::HandleCount {
                handles: handles.len(),
                spawns: spawns.len(),
            });
        }
        let mut descs = std::mem::take(&mut self.spawn_scratch);
        descs.clear();
        let described = spawns.iter().enumerate().try_for_each(|(i, s)| {
            descs.push(self.describe(i, s)?);
            Ok::<(), Error>(())
        });
        let added = described.and_then(|()| Ok(self.store.add_many(self.group, &descs, handles)?));
        self.spawn_scratch = descs;
        added?;
        self.grow();
        Ok(())
    }

    /// Sizes the per-record buffers for the live instance count (every instance visible), once per growth.
    fn grow(&mut self) {
        let n = self.store.len();
        if self.tracks.len() < n {
            self.tracks.resize(n, 0);
            self.times.resize(n, 0.0);
            self.refs.resize(n, SlotRef::default());
            self.unique_of.resize(n, NOT_UNIQUE);
        }
        if self.fading.capacity() < n {
            self.fading.reserve(n - self.fading.len());
        }
        let handles = self.store.handle_capacity();
        if self.fade_of.len() < handles {
            self.fade_of.resize(handles, FadeSlot::NONE);
        }
    }

    /// Removes an instance; its handle goes stale.
    ///
    /// # Errors
    ///
    /// [`Error::Cull`] for a stale handle.
    pub fn remove(&mut self, handle: Handle) -> Result<()> {
        Ok(self.store.remove(handle)?)
    }

    /// Moves an instance.
    ///
    /// # Errors
    ///
    /// [`Error::Cull`] for a stale handle or a non-finite position; nothing changes then.
    pub fn set_position(&mut self, handle: Handle, position: Vec3) -> Result<()> {
        Ok(self.store.set_position(handle, position)?)
    }

    /// Moves many instances at once (in parallel when there are many).
    ///
    /// # Errors
    ///
    /// [`Error::Cull`] naming the bad handle or position; nothing changes then.
    pub fn set_positions(&mut self, handles: &[Handle], positions: &[Vec3]) -> Result<()> {
        Ok(self.store.set_positions(handles, positions)?)
    }

    /// Moves and turns an instance.
    ///
    /// # Errors
    ///
    /// [`Error::Cull`] for a stale handle, a non-finite position or a rotation far from unit length.
    pub fn set_transform(&mut self, handle: Handle, position: Vec3, rotation: Quat) -> Result<()> {
        let mut desc = self.store.get(handle)?.desc;
        desc.position = position;
        desc.rotation = rotation;
        Ok(self.store.update(handle, &desc)?)
    }

    /// Changes an instance's tint.
    ///
    /// # Errors
    ///
    /// [`Error::Tint`] when a component is outside `[0, 1]`; [`Error::Cull`] for a stale handle.
    pub fn set_tint(&mut self, handle: Handle, tint: Vec4) -> Result<()> {
        check_tint(None, tint)?;
        Ok(self.store.set_custom(handle, tint)?)
    }

    /// Changes an instance's playback speed, keeping its current clip time. O(1).
    ///
    /// # Errors
    ///
    /// [`Error::Speed`] when `speed` is not finite; [`Error::Cull`] for a stale handle.
    pub fn set_speed(&mut self, handle: Handle, speed: f32) -> Result<()> {
        if !speed.is_finite() {
            return Err(Error::Speed { speed });
        }
        let mut anim = self.store.get(handle)?.desc.anim;
        let now = self.clock.now();
        let t = clip_time(&anim, now);
        anim.start_time = start_for(t, speed, now);
        anim.speed = speed;
        Ok(self.store.set_animation(handle, &anim)?)
    }

    /// Switches an instance to `clip`. With `fade > 0` seconds this is a crossfade that keeps the phase (see
    /// [`crate::anim`]); with `fade <= 0` the clip starts at time 0. Switching to the clip already playing or
    /// being faded to changes nothing.
    ///
    /// # Errors
    ///
    /// [`Error::PlayClip`] for an unknown clip, [`Error::PlayFade`] for a non-finite fade; [`Error::Cull`] for a
    /// stale handle.
    pub fn play(&mut self, handle: Handle, clip: ClipId, fade: f32) -> Result<()> {
        if !self.character.has_clip(clip) {
            return Err(Error::PlayClip {
                clip: clip.0,
                clips: self.character.clips().len(),
            });
        }
        if !fade.is_finite() {
            return Err(Error::PlayFade { fade });
        }
        let anim = self.store.get(handle)?.desc.anim;
        let pool = &self.pool;
        let synced = |a: u16, b: u16, t: f32| pool.synced_time(a, b, t).unwrap_or(0.0);
        let now = self.clock.now();
        let next = switch(&anim, clip, fade, now, synced);
        if next == anim {
            return Ok(());
        }
        self.store.set_animation(handle, &next)?;
        if next.fade_target.is_some() {
            let timing = FadeTiming {
                fade_start: now - next.fade_weight * fade,
                duration: fade,
            };
            self.start_fade(handle, timing);
        }
        Ok(())
    }

    /// Runs one frame: advances the clock by `dt` seconds, progresses crossfades, maintains clusters, tiers and
    /// culls against `camera`, updates the pose pool's live tracks, animates the unique instances, flattens the
    /// live palettes into the next packet in format `F`, packs one record per visible instance in visible-list
    /// order, and publishes the packet. Returns the published frame number.
    ///
    /// Blocks while the render thread holds every packet (under [`Overrun::Wait`](skin_pack::Overrun::Wait)). Validation is O(1).
    /// Allocates only after the crowd grew (see [`CrowdFrame`]).
    ///
    /// # Errors
    ///
    /// - [`Error::StepDt`] when `dt` is negative or not finite, [`Error::Camera`] when the camera is not finite;
    ///   nothing changes then;
    /// - [`Error::Palette`] with `ExchangeClosed` when the exchange was closed.
    ///
    /// The inner jobs' errors cannot happen with the frame's checked inputs; one would be reported as its crate's
    /// error, with no packet published.
    pub fn step(&mut self, dt: f32, camera: &FrameCamera) -> Result<u64> {
        if self.settings.gpu_driven {
            return self.step_gpu_driven(dt, camera);
        }
        let cull_camera = self.check_step(dt, camera)?;
        let started = Instant::now();
        self.advance_clock(dt)?;
        let now = self.clock.now();
        let fading = self.progress_fades()?;
        self.store.maintain(self.settings.maintain);
        let t_changes = Instant::now();

        self.cache.prepare(&self.store);
        self.cull.prepare(&self.store);
        CullingJob {
            store: &mut self.store,
            camera: &cull_camera,
            cache: &mut self.cache,
            output: &mut self.cull,
        }
        .run()?;
        let t_cull = Instant::now();

        self.assign_tracks(now)?;
        self.pool.update(now)?;
        let n = self.cull.indices().len();
        let t_pool = Instant::now();

        self.animate_uniques(now)?;
        let t_unique = Instant::now();

        let mut packet = self.exchange.begin_write()?;
        let t_wait = Instant::now();
        let s = self.character.binding().skin_joint_count();
        let nu = self.unique_count;
        self.flatten_palettes(&mut packet)?;
        let t_flatten = Instant::now();

        if packet.records.capacity() < self.store.len() {
            let more = self.store.len() - packet.records.len();
            packet.records.reserve(more);
        }
        let slots = self.store.group_slots(self.group)?;
        pack_frame(
            &PackInput {
                slots: &slots,
                cull: &self.cull,
                pool: &self.pool,
                tracks: &self.tracks[..n],
                times: &self.times[..n],
                unique_of: &self.unique_of[..n],
                skin_joint_count: s,
            },
            &mut self.refs[..n],
            &mut packet,
        )?;
        let t_pack = Instant::now();
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f32() * 1e3;
        packet.camera = *camera;
        let stats = &mut packet.stats;
        stats.time = now;
        stats.clock = self.clock.seconds();
        stats.instances = self.store.len() as u32;
        stats.unique = nu as u32;
        stats.fading = fading as u32;
        stats.live_slots = self.pool.live_slots().map(|r| r.slot_count).sum();
        stats.crossfade_buckets = self.pool.active_crossfade_count() as u32;
        stats.stages.changes_ms = ms(started, t_changes);
        stats.stages.cull_ms = ms(t_changes, t_cull);
        stats.stages.pool_ms = ms(t_cull, t_pool);
        stats.stages.unique_ms = ms(t_pool, t_unique);
        stats.stages.wait_ms = ms(t_unique, t_wait);
        stats.stages.flatten_ms = ms(t_wait, t_flatten);
        stats.stages.pack_ms = ms(t_flatten, t_pack);
        Ok(packet.publish())
    }

    /// Checks a step's `dt` and camera (O(1)) and returns the culling camera; nothing changes on error.
    fn check_step(&self, dt: f32, camera: &FrameCamera) -> Result<crowd_cull::CullCamera> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(Error::StepDt { dt });
        }
        if !camera.is_finite() {
            return Err(Error::Camera { what: "step" });
        }
        let cull_camera = camera.cull_camera();
        cull_camera.validate()?;
        Ok(cull_camera)
    }

    /// Samples, blends and converts the frame's `unique_count` unique instances at clock `now`.
    fn animate_uniques(&mut self, now: f32) -> Result<()> {
        let slots = self.store.group_slots(self.group)?;
        let n = self.unique_count;
        animate_unique(
            &UniqueInput {
                character: &self.character,
                pool: &self.pool,
                rest: &self.rest,
                anim: slots.anim,
                slots: &self.unique_slots[..n],
                now,
            },
            &mut self.unique_local,
            &mut self.unique_model,
        )
    }

    /// Flattens the pool's live slots (with [`FrameSettings::pose_pool`]) and the unique poses into `packet`'s palettes in format `F`.
    fn flatten_palettes(&self, packet: &mut Packet<F>) -> Result<()> {
        let s = self.character.binding().skin_joint_count();
        if self.settings.pose_pool {
            PoolFlattenJob {
                binding: self.character.binding(),
                pool: &self.pool,
                output: &mut packet.pool_palettes,
                streaming: self.settings.streaming,
            }
            .run()?;
        }
        let n = self.unique_count;
        packet.unique_palettes.resize(n * s, bytemuck::Zeroable::zeroed());
        FlattenJob {
            binding: self.character.binding(),
            poses: &self.unique_model[..n * self.character.skeleton().joint_count()],
            pose_of: &[],
            transforms: &[],
            cache: &mut FlattenCache::default(),
            output: &mut packet.unique_palettes,
            streaming: self.settings.streaming,
        }
        .run()?;
        Ok(())
    }

    /// Gives every visible instance its pool track and time (in parallel), picks the unique instances (the first
    /// `max_unique` of the unique lists), and requests the crossfade buckets of the fading pooled ones.
    fn assign_tracks(&mut self, now: f32) -> Result<()> {
        let slots = self.store.group_slots(self.group)?;
        let indices = self.cull.indices();
        let n = indices.len();
        self.tracks[..n]
            .par_chunks_mut(PACK_CHUNK)
            .zip(self.times[..n].par_chunks_mut(PACK_CHUNK))
            .zip(self.unique_of[..n].par_chunks_mut(PACK_CHUNK))
            .zip(indices.par_chunks(PACK_CHUNK))
            .for_each(|(((tracks, times), unique_of), indices)| {
                for (k, &slot) in indices.iter().enumerate() {
                    let anim = &slots.anim[slot as usize];
                    times[k] = clip_time(anim, now);
                    tracks[k] = if anim.fade_target.is_some() {
                        FADING
                    } else {
                        anim.clip as u16
                    };
                    unique_of[k] = NOT_UNIQUE;
                }
            });
        let mut unique = 0usize;
        for d in self.cull.draws().iter().filter(|d| d.tier == Tier::Unique) {
            let take = (d.instance_count as usize).min(self.settings.max_unique - unique);
            let first = d.first_instance as usize;
            for (i, &slot) in indices.iter().enumerate().skip(first).take(take) {
                self.unique_slots[unique] = slot;
                self.unique_of[i] = unique as u32;
                unique += 1;
                self.tracks[i] = 0;
                self.times[i] = 0.0;
            }
        }
        self.unique_count = unique;
        for (i, &slot) in indices.iter().enumerate() {
            if self.tracks[i] == FADING {
                let anim = &slots.anim[slot as usize];
                let to = anim.fade_target.unwrap_or(anim.clip);
                let cf = self
                    .pool
                    .request_crossfade(anim.clip as u16, to as u16, anim.fade_weight)?;
                self.tracks[i] = cf.track;
                self.times[i] = cf.time(self.times[i]);
            }
        }
        Ok(())
    }
}

/// Checks that a tint (of spawn `spawn`, or of `set_tint`) is within `[0, 1]`.
fn check_tint(spawn: Option<usize>, tint: Vec4) -> Result<()> {
    if tint_fits(tint) {
        Ok(())
    } else {
        Err(Error::Tint {
            spawn,
            tint: tint.to_array(),
        })
    }
}
