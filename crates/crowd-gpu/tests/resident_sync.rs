//! The resident buffer follows the CPU store through 1,000 frames of random adds, removes, moves, bulk moves,
//! faded and cut clip switches, tint and speed changes, with frames dropped and folded under
//! `Overrun::DropOldest`: read back and decoded at checkpoints and at the end, every slot holds what the store and
//! the crowd's public state say (position, rotation within the snorm16 bound, scale, tint within half a step,
//! clip, start time, speed, crossfade target and a fade timing that gives the store's weight, the owner, and the
//! CPU-drawn bit exactly for the packet's unique records). A renderer that misses packets (one not prepared, a
//! failed `prepare`, a renderer made at frame 500) reports it, and a full resend repairs it.

mod common;

use common::driven::{Rng, camera, renderer, scene};
use common::images::PrepareNow;
use crowd_cull::Handle;
use crowd_frame::{
    ClipId, CrowdFrame, FrameSettings, Packet, ROTATION_ERROR_BOUND, ResidentInstance, ResidentOwner, Spawn,
};
use crowd_gpu::headless::Gpu;
use crowd_gpu::{CrowdRenderer, Error};
use glam::{Quat, Vec3, Vec4};
use skin_pack::Overrun;

/// Reads `r`'s resident buffer back and checks every slot against the store and the crowd's public state, and the
/// CPU-drawn bits against `last`, the packet last prepared.
fn check(gpu: &Gpu, crowd: &CrowdFrame, r: &CrowdRenderer, last: &Packet, frame: usize) {
    let resident = r.resident().expect("GPU-driven");
    let n = resident.slot_count() as usize;
    let slots = crowd.store().group_slot_count(crowd.group()).expect("the group");
    assert_eq!(n, slots, "frame {frame}: the resident buffer covers the store's slots");
    let bytes = gpu
        .read_buffer(resident.buffer(), (n * size_of::<ResidentInstance>()) as u64)
        .expect("reads");
    let got: &[ResidentInstance] = bytemuck::cast_slice(&bytes);
    let bytes = gpu
        .read_buffer(resident.owners_buffer(), (n * size_of::<ResidentOwner>()) as u64)
        .expect("reads");
    let owners: &[ResidentOwner] = bytemuck::cast_slice(&bytes);
    let now = crowd.anim_time();
    let mut cpu_drawn = 0;
    for s in 0..slots {
        let d = got[s].decode();
        let handle = crowd.store().handle_at(crowd.group(), s as u32);
        assert_eq!(
            owners[s],
            ResidentOwner::of(handle),
            "frame {frame}: the owner of slot {s}"
        );
        let Some(h) = handle else {
            assert_eq!(d.clip, None, "frame {frame}: slot {s} is empty");
            continue;
        };
        let want = crowd.store().get(h).expect("live").desc;
        let at = format!("frame {frame}, slot {s}");
        assert_eq!(d.position, want.position, "{at}: position");
        // The quaternion (either sign) within the snorm16 bound: ROTATION_ERROR_BOUND is twice its turn.
        let (q, w) = (glam::Vec4::from(d.rotation), glam::Vec4::from(want.rotation));
        let moved = (q - w).length().min((q + w).length());
        assert!(
            moved <= ROTATION_ERROR_BOUND * 0.5,
            "{at}: rotation {} against {} ({moved})",
            d.rotation,
            want.rotation
        );
        assert_eq!(d.scale, want.scale, "{at}: scale");
        assert!(
            (d.tint - want.custom).abs().max_element() <= 0.5 / 255.0 + 1e-6,
            "{at}: tint"
        );
        let anim = d.anim.expect("a live slot's animation");
        assert_eq!(d.clip, Some(want.anim.clip), "{at}: clip");
        assert_eq!(
            (anim.start_time, anim.speed),
            (want.anim.start_time, want.anim.speed),
            "{at}: start time and speed"
        );
        assert_eq!(anim.fade.map(|f| f.target), want.anim.fade_target, "{at}: fade target");
        if let Some(f) = anim.fade {
            // The GPU computes the weight from the fade's timing: it must give the store's weight now.
            let w = ((now - f.start) / f.length).clamp(0.0, 1.0);
            assert!(
                (w - want.anim.fade_weight).abs() <= 1e-4,
                "{at}: fade weight {w} against {}",
                want.anim.fade_weight
            );
        }
        if d.cpu_drawn {
            cpu_drawn += 1;
            assert!(
                last.records()
                    .iter()
                    .any(|rec| rec.position == want.position.to_array()),
                "{at}: drawn by the CPU, but no unique record is at its position"
            );
        }
    }
    assert_eq!(
        cpu_drawn,
        last.stats().unique,
        "frame {frame}: CPU-drawn bits for every unique record"
    );
}

/// One frame of random game calls on `crowd`.
fn random_calls(crowd: &mut CrowdFrame, live: &mut Vec<Handle>, rng: &mut Rng) {
    let clips = crowd.character().clips().len();
    for _ in 0..(rng.next() * 6.0) as usize {
        let pick = |rng: &mut Rng, live: &[Handle]| live[(rng.next() * live.len() as f32) as usize % live.len()];
        match (rng.next() * 9.0) as u32 {
            0 => {
                let spawn = Spawn {
                    tint: Vec4::new(rng.next(), rng.next(), rng.next(), 1.0),
                    rotation: Quat::from_rotation_y(rng.next() * 6.0),
                    ..Spawn::at(
                        Vec3::new(rng.next() * 30.0 - 15.0, 0.0, -rng.next() * 20.0),
                        ClipId((rng.next() * clips as f32) as u16 % clips as u16),
                    )
                };
                live.push(crowd.add(&spawn).expect("adds"));
            }
            1 if live.len() > 10 => {
                let i = (rng.next() * live.len() as f32) as usize % live.len();
                crowd.remove(live.swap_remove(i)).expect("removes");
            }
            2 => {
                let h = pick(rng, live);
                let p = Vec3::new(rng.next() * 40.0 - 20.0, 0.0, -rng.next() * 30.0);
                crowd.set_position(h, p).expect("moves");
            }
            3 => {
                let positions: Vec<Vec3> = live
                    .iter()
                    .map(|_| Vec3::new(rng.next() * 30.0 - 15.0, 0.0, -rng.next() * 20.0))
                    .collect();
                crowd.set_positions(live, &positions).expect("bulk moves");
            }
            4 | 5 => {
                let h = pick(rng, live);
                let clip = ClipId((rng.next() * clips as f32) as u16 % clips as u16);
                let fade = if rng.next() < 0.7 { 0.1 + rng.next() * 0.4 } else { 0.0 };
                crowd.play(h, clip, fade).expect("plays");
            }
            6 => {
                let h = pick(rng, live);
                crowd
                    .set_tint(h, Vec4::new(rng.next(), rng.next(), rng.next(), 1.0))
                    .expect("tints");
            }
            7 => {
                let h = pick(rng, live);
                crowd.set_speed(h, 0.5 + rng.next()).expect("speeds");
            }
            _ => {
                let h = pick(rng, live);
                crowd
                    .set_transform(
                        h,
                        Vec3::new(rng.next() * 10.0, 0.0, -rng.next() * 10.0),
                        Quat::from_rotation_y(rng.next() * 6.0),
                    )
                    .expect("turns");
            }
        }
    }
}

fn settings(scene: &common::driven::Scene, overrun: Overrun) -> FrameSettings {
    FrameSettings {
        gpu_driven: true,
        packets: 3,
        overrun,
        max_unique: 4,
        tier_thresholds: [0.25, 0.004, 0.001],
        ..scene.settings.clone()
    }
}

#[test]
fn the_resident_buffer_equals_the_store_after_1000_random_frames() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(10, 8);
    let mut crowd = CrowdFrame::new(scene.character.clone(), settings(&scene, Overrun::DropOldest)).expect("a crowd");
    let mut live = vec![Handle::default(); scene.spawns.len()];
    crowd.add_many(&scene.spawns, &mut live).expect("adds");
    let mut r = renderer(&gpu, &scene, &crowd, true);
    let cam = camera(Vec3::new(0.0, 2.0, 4.0), Vec3::new(0.0, 0.5, -8.0));
    let exchange = crowd.exchange().clone();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut dropped_frames, mut changed) = (0, 0usize);
    for frame in 0..1000 {
        random_calls(&mut crowd, &mut live, &mut rng);
        crowd.step(1.0 / 30.0, &cam).expect("steps");
        // Now and then the render thread falls behind: the older frame is dropped and folded into the newer.
        if frame % 9 == 4 {
            dropped_frames += 1;
            continue;
        }
        let packet = exchange.begin_read().expect("a packet");
        changed += packet.resident().instances.len();
        r.prepare_now(&gpu, &packet).expect("prepares");
        if frame % 100 == 99 {
            check(&gpu, &crowd, &r, &packet, frame);
        }
        if frame == 999 {
            let stats = exchange.stats();
            eprintln!(
                "1000 frames: {} instances at the end, {changed} resident states uploaded, {dropped_frames} frames \
                 left unread, {} dropped and folded",
                live.len(),
                stats.dropped
            );
            assert!(stats.dropped > 50, "frames were dropped and folded: {stats:?}");
        }
    }
}

#[test]
fn missed_packets_are_reported_and_a_resend_repairs_them() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(10, 8);
    let mut crowd = CrowdFrame::new(scene.character.clone(), settings(&scene, Overrun::Wait)).expect("a crowd");
    let mut live = vec![Handle::default(); scene.spawns.len()];
    crowd.add_many(&scene.spawns, &mut live).expect("adds");
    let mut r = renderer(&gpu, &scene, &crowd, true);
    let cam = camera(Vec3::new(0.0, 2.0, 4.0), Vec3::new(0.0, 0.5, -8.0));
    let exchange = crowd.exchange().clone();
    let requester = crowd.resend_requester();
    let mut rng = Rng(0x0fed_cba9_8765_4321);
    let mut late: Option<CrowdRenderer> = None;
    let (mut refused, mut repaired) = (Vec::new(), 0);
    for frame in 0..520 {
        random_calls(&mut crowd, &mut live, &mut rng);
        crowd.step(1.0 / 30.0, &cam).expect("steps");
        let packet = exchange.begin_read().expect("a packet");
        // Frame 100: a packet is read and never prepared (dropped on the way).
        if frame == 100 {
            continue;
        }
        // Frame 200: a prepare fails (here, of a packet that names a LOD the meshes lack: refused before anything
        // changes), and the frame's own changes never reach the GPU.
        let result = if frame == 200 {
            r.prepare_now(&gpu, &missing_lod(&crowd, &packet)).map(|_| ())
        } else {
            r.prepare_now(&gpu, &packet).map(|_| ())
        };
        match result {
            Ok(()) => {}
            Err(Error::MissingLod { .. }) if frame == 200 => refused.push(frame),
            Err(Error::OutOfStep { .. }) => {
                refused.push(frame);
                requester.request();
            }
            Err(e) => panic!("frame {frame}: {e}"),
        }
        // Frame 500: a second renderer (a second window, a render world rebuilt after device loss) attaches.
        if frame == 500 {
            late = Some(renderer(&gpu, &scene, &crowd, true));
        }
        if let Some(l) = late.as_mut() {
            match l.prepare_now(&gpu, &packet) {
                Ok(_) => repaired += 1,
                Err(Error::OutOfStep { held: None, .. }) => requester.request(),
                Err(e) => panic!("frame {frame}, the late renderer: {e}"),
            }
        }
        if frame == 519 {
            check(&gpu, &crowd, &r, &packet, frame);
            check(&gpu, &crowd, late.as_ref().expect("attached"), &packet, frame);
        }
    }
    eprintln!("refused at frames {refused:?}; the late renderer applied {repaired} packets");
    // The frame after the skipped one and the one after the failed one are refused; each asks for a resend, which
    // the next frame carries. The late renderer's first packet is refused the same way.
    assert_eq!(refused, [101, 200, 201], "the frames refused");
    assert_eq!(
        repaired, 19,
        "the late renderer applies every packet after the resend it asked for"
    );
}

/// A packet of one pooled record at LOD 7, which no mesh has, for `crowd`'s palettes: a prepare of it fails its
/// checks.
fn missing_lod(crowd: &CrowdFrame, packet: &Packet) -> Packet {
    let joints = crowd.character().binding().skin_joint_count();
    let pool = vec![skin_pack::PaletteEntry::IDENTITY; joints];
    let record = common::scenes::pooled_record(Vec3::ZERO, [0, 0], 0.0);
    let draw = crowd_frame::PacketDraw {
        lod: 7,
        tier: crowd_cull::Tier::Pooled,
        kind: crowd_frame::RecordKind::Pooled,
        first_instance: 0,
        instance_count: 1,
    };
    Packet::from_parts(&crowd_frame::PacketParts {
        time: packet.time(),
        camera: *packet.camera(),
        skin_joint_count: joints,
        pool_palettes: &pool,
        unique_palettes: &[],
        records: &[record],
        draws: &[draw],
    })
    .expect("a packet")
}
