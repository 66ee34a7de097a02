//! The GPU-driven step without an adapter: full resends and their epochs, the chain of frames that packets build on
//! (folded under `Overrun::DropOldest` in order), the unique tier's hysteresis and CPU-drawn bits, crossfade
//! timings, the clock's precision after a day and ten days, and the slot limit.

mod common;

use std::sync::Arc;

use crowd_cull::Handle;
use crowd_frame::{
    Character, ClipId, CrowdFrame, Error, FrameCamera, FrameSettings, Packet, REBASE_AFTER, RESIDENT_CPU_DRAWN,
    ResidentInstance, Spawn,
};
use glam::{Vec3, Vec4};
use skin_pack::Overrun;

fn driven() -> FrameSettings {
    FrameSettings {
        gpu_driven: true,
        ..FrameSettings::default()
    }
}

fn character() -> Arc<Character> {
    Arc::new(common::character(8))
}

/// A CPU mirror of a renderer's resident buffer: applies every packet it reads, in order, as `ResidentBuffer` does.
#[derive(Default)]
struct Mirror {
    slots: Vec<ResidentInstance>,
    at: Option<(u32, u64)>,
}

impl Mirror {
    /// Applies `p`'s changes; false when they do not build on what the mirror holds.
    fn apply(&mut self, p: &Packet) -> bool {
        let r = p.resident();
        if !r.full && self.at != Some((r.epoch, r.since)) {
            return false;
        }
        self.slots.resize(r.slot_count as usize, ResidentInstance::EMPTY);
        let mut i = 0;
        for range in &r.ranges {
            for s in range.clone() {
                self.slots[s as usize] = r.instances[i];
                i += 1;
            }
        }
        assert_eq!(i, r.instances.len(), "the ranges cover the states exactly");
        self.at = Some((r.epoch, r.frame));
        true
    }

    fn check(&self, crowd: &CrowdFrame, frame: usize) {
        let slots = crowd.store().group_slot_count(crowd.group()).expect("the group") as u32;
        assert_eq!(self.slots.len() as u32, slots, "frame {frame}: slot count");
        for s in 0..slots {
            assert_eq!(
                self.slots[s as usize],
                crowd.resident_state(s).expect("a slot"),
                "frame {frame}: slot {s}"
            );
        }
    }
}

#[test]
fn the_first_packet_and_every_resend_carry_every_slot() {
    let mut crowd: CrowdFrame = CrowdFrame::new(character(), driven()).expect("builds");
    let exchange = crowd.exchange().clone();
    let mut rng = common::Rng(5);
    let spawns = common::spawns(&mut rng, 60, crowd.character().clips().len());
    let mut handles = vec![Handle::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles).expect("adds");
    let camera = common::camera(0);
    let requester = crowd.resend_requester();
    let mut mirror = Mirror::default();
    let mut epochs = Vec::new();
    for f in 0..8 {
        match f {
            3 => crowd.resend_all(),
            // The render thread's way: a clone of the requester, from another thread.
            5 => std::thread::scope(|s| {
                let r = requester.clone();
                s.spawn(move || r.request());
            }),
            _ => {}
        }
        crowd.step(1.0 / 60.0, &camera).expect("steps");
        let p = exchange.begin_read().expect("a packet");
        let r = p.resident();
        let full = matches!(f, 0 | 3 | 5);
        assert_eq!(r.full, full, "frame {f}");
        assert_eq!(r.frame, f as u64);
        if full {
            assert_eq!(
                r.ranges,
                std::slice::from_ref(&(0..r.slot_count)),
                "frame {f}: a full packet carries every slot"
            );
            epochs.push(r.epoch);
        } else {
            assert_eq!(r.since, f as u64 - 1, "frame {f} builds on the frame before");
            assert!(
                r.instances.len() < 10,
                "frame {f}: only the changes ({})",
                r.instances.len()
            );
        }
        assert!(mirror.apply(&p), "frame {f}: the chain has no gap");
        mirror.check(&crowd, f);
    }
    assert!(
        epochs.windows(2).all(|w| w[1] == w[0] + 1),
        "each resend bumps the epoch: {epochs:?}"
    );
}

#[test]
fn a_skipped_packet_breaks_the_chain_until_a_resend() {
    let mut crowd: CrowdFrame = CrowdFrame::new(character(), driven()).expect("builds");
    let exchange = crowd.exchange().clone();
    let h = crowd
        .add(&Spawn::at(Vec3::new(0.0, 0.0, -30.0), ClipId(0)))
        .expect("adds");
    let camera = common::camera(0);
    let mut mirror = Mirror::default();
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    assert!(mirror.apply(&exchange.begin_read().expect("a packet")));
    // The render thread reads a packet and never applies it (a prepare that failed, a packet dropped on the way).
    crowd.set_position(h, Vec3::new(1.0, 0.0, -30.0)).expect("moves");
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    drop(exchange.begin_read().expect("a packet"));
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    assert!(
        !mirror.apply(&exchange.begin_read().expect("a packet")),
        "the next packet does not build on the mirror's state"
    );
    crowd.resend_requester().request();
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    assert!(
        mirror.apply(&exchange.begin_read().expect("a packet")),
        "a resend repairs it"
    );
    mirror.check(&crowd, 3);
}

#[test]
fn frames_dropped_under_drop_oldest_fold_in_order() {
    let settings = FrameSettings {
        packets: 3,
        overrun: Overrun::DropOldest,
        ..driven()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(character(), settings).expect("builds");
    let exchange = crowd.exchange().clone();
    let a = crowd
        .add(&Spawn::at(Vec3::new(0.0, 0.0, -30.0), ClipId(0)))
        .expect("adds");
    let b = crowd
        .add(&Spawn::at(Vec3::new(3.0, 0.0, -30.0), ClipId(0)))
        .expect("adds");
    let camera = common::camera(0);
    let mut mirror = Mirror::default();
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    assert!(mirror.apply(&exchange.begin_read().expect("a packet")));
    // Three frames while the render thread reads none: the instance moves to x = -1, then to x = -2, then something
    // else changes. The render thread then reads the newest, into which the other two were folded.
    crowd.set_position(a, Vec3::new(-1.0, 0.0, -30.0)).expect("moves");
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    crowd.set_position(a, Vec3::new(-2.0, 0.0, -30.0)).expect("moves");
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    crowd.set_tint(b, Vec4::new(1.0, 0.0, 0.0, 1.0)).expect("tints");
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    let p = exchange.begin_read().expect("a packet");
    assert_eq!((p.resident().since, p.resident().frame), (0, 3));
    assert!(mirror.apply(&p));
    let (_, slot) = crowd.store().slot_of(a).expect("live");
    let x = mirror.slots[slot as usize].position[0];
    assert_eq!(x, -2.0, "the later move wins");
    mirror.check(&crowd, 3);
}

/// The camera at `eye_z` on the z axis, looking down -z.
fn camera_at(eye_z: f32) -> FrameCamera {
    FrameCamera::perspective(
        Vec3::new(0.0, 1.0, eye_z),
        Vec3::new(0.0, 1.0, eye_z - 10.0),
        Vec3::Y,
        1.0,
        1.5,
        0.1,
        500.0,
    )
}

#[test]
fn the_unique_tier_has_hysteresis_and_flips_cpu_drawn_bits() {
    let threshold = 0.3;
    let settings = FrameSettings {
        tier_thresholds: [threshold, 0.1, 0.02],
        hysteresis: 0.1,
        ..driven()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(character(), settings).expect("builds");
    let exchange = crowd.exchange().clone();
    let h = crowd
        .add(&Spawn::at(Vec3::new(0.0, 0.0, -20.0), ClipId(0)))
        .expect("adds");
    let (centre, radius) = crowd.store().sphere(h).expect("live");
    // The eye's z at which the instance's screen size is `size`.
    let eye_for = |size: f32| {
        let scale = camera_at(0.0).cull_camera().proj_scale;
        centre.z + radius * scale / size
    };
    let (_, slot) = crowd.store().slot_of(h).expect("live");
    let mut step = |eye_z: f32| {
        crowd.step(1.0 / 60.0, &camera_at(eye_z)).expect("steps");
        let p = exchange.begin_read().expect("a packet");
        let unique = p.records().len() == 1;
        let r = p.resident();
        // The CPU-drawn bit of the slot in this packet, when the slot changed.
        let mut at = 0;
        let mut changed = None;
        for range in &r.ranges {
            for s in range.clone() {
                if s == slot {
                    changed = Some(r.instances[at].clips & RESIDENT_CPU_DRAWN != 0);
                }
                at += 1;
            }
        }
        (unique, changed)
    };
    let band = eye_for(threshold);
    assert_eq!(
        step(eye_for(threshold * 0.5)),
        (false, Some(false)),
        "far: the first packet, pooled"
    );
    assert_eq!(
        step(band),
        (false, None),
        "inside the band from below: still pooled, nothing sent"
    );
    assert_eq!(
        step(eye_for(threshold * 1.15)),
        (true, Some(true)),
        "past the band: unique"
    );
    assert_eq!(step(band), (true, None), "inside the band from above: still unique");
    assert_eq!(step(eye_for(threshold * 0.95)), (true, None), "still inside the band");
    assert_eq!(
        step(eye_for(threshold * 0.85)),
        (false, Some(false)),
        "below the band: pooled again"
    );
}

#[test]
fn a_crossfade_sends_its_timing() {
    let mut crowd: CrowdFrame = CrowdFrame::new(character(), driven()).expect("builds");
    let exchange = crowd.exchange().clone();
    let h = crowd
        .add(&Spawn::at(Vec3::new(0.0, 0.0, -40.0), ClipId(0)))
        .expect("adds");
    let camera = common::camera(0);
    for _ in 0..3 {
        crowd.step(1.0 / 60.0, &camera).expect("steps");
        drop(exchange.begin_read().expect("a packet"));
    }
    let started = crowd.anim_time();
    crowd.play(h, ClipId(1), 0.5).expect("switches");
    crowd.step(1.0 / 60.0, &camera).expect("steps");
    let p = exchange.begin_read().expect("a packet");
    let (_, slot) = crowd.store().slot_of(h).expect("live");
    let r = p.resident();
    let at = r
        .ranges
        .iter()
        .position(|x| x.contains(&slot))
        .expect("the slot changed");
    let first: u32 = r.ranges[..at].iter().map(|x| x.end - x.start).sum();
    let state = r.instances[(first + slot - r.ranges[at].start) as usize];
    assert_eq!(state.clips >> 16, 1, "fading to clip 1");
    assert_eq!((state.fade_start, state.fade_length), (started, 0.5));
}

/// Per live slot: the clip, its clip time and its speed.
type ClipTimes = Vec<(u32, f64, f64)>;

/// Each live slot's clip time in a packet, `(time - start) * speed`, and the clip it is a time of (the fade target
/// during a crossfade).
fn clip_times(p: &Packet, mirror: &Mirror) -> ClipTimes {
    mirror
        .slots
        .iter()
        .filter(|s| s.clips & 0x7fff != 0x7fff)
        .map(|s| {
            let clip = if s.clips >> 16 != 0xffff {
                s.clips >> 16
            } else {
                s.clips & 0x7fff
            };
            let speed = f64::from(s.speed);
            (clip, (f64::from(p.time()) - f64::from(s.start_time)) * speed, speed)
        })
        .collect()
}

/// The weight of each crossfade in flight in a packet, `(time - fade_start) / fade_length`, by slot.
fn fade_weights(p: &Packet, mirror: &Mirror) -> Vec<f64> {
    mirror
        .slots
        .iter()
        .filter(|s| s.clips & 0x7fff != 0x7fff && s.clips >> 16 != 0xffff && s.fade_length > 0.0)
        .map(|s| (f64::from(p.time()) - f64::from(s.fade_start)) / f64::from(s.fade_length))
        .collect()
}

#[test]
fn clip_times_step_as_near_zero_after_a_day_and_after_ten_days() {
    let c = character();
    let durations: Vec<f64> = c.clips().iter().map(|k| f64::from(k.duration())).collect();
    let mut rng = common::Rng(17);
    let spawns: Vec<Spawn> = common::spawns(&mut rng, 40, durations.len());
    let dt = 1.0 / 60.0;
    let frames = 40;
    // The same crowd, spawned at its clock's start, after one step of a day, and after one of ten days.
    let run = |jump: f32| {
        let mut crowd: CrowdFrame = CrowdFrame::new(c.clone(), driven()).expect("builds");
        let exchange = crowd.exchange().clone();
        let camera = common::camera(0);
        let mut mirror = Mirror::default();
        if jump > 0.0 {
            crowd.step(jump, &camera).expect("steps");
            assert!(mirror.apply(&exchange.begin_read().expect("a packet")));
            assert!(crowd.anim_time() < REBASE_AFTER, "the epoch moved");
        }
        let mut handles = vec![Handle::default(); spawns.len()];
        crowd.add_many(&spawns, &mut handles).expect("adds");
        let mut times = Vec::new();
        for _ in 0..frames {
            crowd.step(dt, &camera).expect("steps");
            let p = exchange.begin_read().expect("a packet");
            assert!(mirror.apply(&p));
            times.push(clip_times(&p, &mirror));
        }
        (crowd.time(), times)
    };
    let (_, near_zero) = run(0.0);
    for jump in [86_400.0f32, 864_000.0] {
        let (clock, later) = run(jump);
        assert!(
            (clock - f64::from(jump) - frames as f64 * f64::from(dt)).abs() < 1e-6,
            "the clock is f64"
        );
        for (f, (a, b)) in near_zero.iter().zip(&later).enumerate() {
            assert_eq!(a.len(), b.len());
            for ((clip, ta, _), (_, tb, _)) in a.iter().zip(b) {
                let d = durations[*clip as usize];
                let diff = (ta - tb).rem_euclid(d).min((tb - ta).rem_euclid(d));
                assert!(
                    diff < 1e-5,
                    "after {jump} s, frame {f}: clip time {tb} against {ta} near zero"
                );
            }
        }
        // Each frame steps every clip time by dt * speed, as near zero.
        for f in 1..frames {
            for ((clip, t1, speed), (_, t0, _)) in later[f].iter().zip(&later[f - 1]) {
                let step = (t1 - t0).rem_euclid(durations[*clip as usize]);
                assert!(
                    (step - f64::from(dt) * speed).abs() < 1e-5,
                    "after {jump} s, frame {f}: a step of {step} s"
                );
            }
        }
    }
}

#[test]
fn the_epoch_moves_without_changing_a_pose() {
    let c = character();
    let mut crowd: CrowdFrame = CrowdFrame::new(c.clone(), driven()).expect("builds");
    let exchange = crowd.exchange().clone();
    let mut rng = common::Rng(3);
    let spawns = common::spawns(&mut rng, 30, c.clips().len());
    let mut handles = vec![Handle::default(); spawns.len()];
    crowd.add_many(&spawns, &mut handles).expect("adds");
    let camera = common::camera(0);
    let mut mirror = Mirror::default();
    let dt = 0.25f32;
    // The previous frame's clip times and crossfade weights.
    let mut last: Option<(ClipTimes, Vec<f64>)> = None;
    let mut rebased = 0;
    let rebase_frame = (REBASE_AFTER / dt) as usize - 1;
    let steps = rebase_frame + 9;
    for f in 0..steps {
        if f + 40 == rebase_frame {
            // Half of them crossfading over 30 s when the epoch moves, 10 s from now.
            for h in handles.iter().step_by(2) {
                crowd.play(*h, ClipId(1), 30.0).expect("switches");
            }
        }
        let before = crowd.anim_time();
        crowd.step(dt, &camera).expect("steps");
        let p = exchange.begin_read().expect("a packet");
        assert!(mirror.apply(&p));
        let times = clip_times(&p, &mirror);
        let weights = fade_weights(&p, &mirror);
        if crowd.anim_time() < before {
            rebased += 1;
            assert_eq!(f, rebase_frame);
            assert!(p.resident().full, "frame {f}: moving the epoch resends every slot");
            // Every crossfade's weight moved on by dt / 30 s across the rebase.
            let (prev, prev_weights) = last.as_ref().expect("a frame before");
            // (Those already playing clip 1 do not fade.)
            assert!(
                weights.len() >= 5 && weights.len() == prev_weights.len(),
                "the crossfades in flight"
            );
            for (w1, w0) in weights.iter().zip(prev_weights) {
                let want = f64::from(dt) / 30.0;
                assert!(
                    (w1 - w0 - want).abs() < 1e-4,
                    "frame {f}: a crossfade's weight stepped from {w0} to {w1} across the rebase"
                );
            }
            // Every clip time moved on by dt * speed, across the rebase, within f32 rounding at REBASE_AFTER.
            for ((clip, t1, speed), (c0, t0, _)) in times.iter().zip(prev) {
                // A clamped clip's time past its end is clamped when the epoch moves (its pose does not change).
                if clip != c0 || !c.clips()[*clip as usize].is_looping() {
                    continue;
                }
                let d = f64::from(c.clips()[*clip as usize].duration());
                let step = (t1 - t0).rem_euclid(d);
                let want = f64::from(dt) * speed;
                assert!(
                    (step - want).abs() < 1e-3,
                    "frame {f}: clip time stepped by {step} across the rebase, not {want}"
                );
            }
        }
        mirror.check(&crowd, f);
        last = Some((times, weights));
    }
    assert_eq!(rebased, 1, "one rebase in {} s", steps as f32 * dt);
}

#[test]
fn the_slot_limit_refuses_adds_until_removals_make_room() {
    let settings = FrameSettings {
        cluster: crowd_cull::ClusterSettings {
            radius: 2.0,
            capacity: 4,
        },
        max_slots: 8,
        ..driven()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(character(), settings).expect("builds");
    // Far apart: each instance needs a cluster of its own, four slots.
    let at = |i: usize| Spawn::at(Vec3::new(100.0 * i as f32, 0.0, -30.0), ClipId(0));
    let a = crowd.add(&at(0)).expect("the first cluster");
    crowd.add(&at(1)).expect("the second cluster");
    let err = crowd.add(&at(2)).expect_err("a third cluster passes 8 slots");
    assert!(
        matches!(err, Error::Cull(crowd_cull::Error::SlotLimit { .. })),
        "a typed error: {err}"
    );
    assert_eq!(crowd.len(), 2, "nothing was added");
    crowd.remove(a).expect("removes");
    crowd.add(&at(3)).expect("the freed cluster is reused");
    assert_eq!(crowd.store().group_slot_count(crowd.group()).expect("the group"), 8);
}
