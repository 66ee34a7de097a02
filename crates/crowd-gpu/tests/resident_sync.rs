//! The resident buffer follows the CPU store through 1,000 frames of random adds, removes, moves, bulk moves,
//! faded and cut clip switches, tint and speed changes, with frames dropped and folded under
//! `Overrun::DropOldest`: read back at checkpoints and at the end, every slot equals the state the crowd computes
//! afresh from its store (`CrowdFrame::resident_state`), bit for bit.

mod common;

use common::driven::{Rng, camera, renderer, scene};
use crowd_cull::Handle;
use crowd_frame::{ClipId, CrowdFrame, FrameSettings, ResidentInstance, ResidentOwner, Spawn};
use crowd_gpu::CrowdRenderer;
use crowd_gpu::headless::Gpu;
use glam::{Quat, Vec3, Vec4};
use skin_pack::Overrun;

fn check(gpu: &Gpu, crowd: &CrowdFrame<'_>, r: &CrowdRenderer, frame: usize) {
    let resident = r.resident().expect("GPU-driven");
    let n = resident.slot_count() as usize;
    let bytes = gpu
        .read_buffer(resident.buffer(), (n * size_of::<ResidentInstance>()) as u64)
        .expect("reads");
    let got: &[ResidentInstance] = bytemuck::cast_slice(&bytes);
    let slots = crowd.store().group_slot_count(crowd.group()).expect("the group");
    assert!(n <= slots, "frame {frame}: {n} resident slots for a store of {slots}");
    let bytes = gpu
        .read_buffer(resident.owners_buffer(), (n * size_of::<ResidentOwner>()) as u64)
        .expect("reads");
    let owners: &[ResidentOwner] = bytemuck::cast_slice(&bytes);
    for s in 0..slots {
        let want = crowd.resident_state(s as u32).expect("a slot");
        let have = got.get(s).copied().unwrap_or(ResidentInstance::EMPTY);
        assert_eq!(have, want, "frame {frame}: slot {s} of {slots} (resident {n})");
        let owner = ResidentOwner::of(crowd.store().handle_at(crowd.group(), s as u32));
        let have = owners.get(s).copied().unwrap_or(ResidentOwner::EMPTY);
        assert_eq!(have, owner, "frame {frame}: the owner of slot {s}");
    }
}

#[test]
fn the_resident_buffer_equals_the_store_after_1000_random_frames() {
    let Some(gpu) = common::gpu() else { return };
    let scene = scene(10, 8);
    let settings = FrameSettings {
        gpu_driven: true,
        packets: 3,
        overrun: Overrun::DropOldest,
        max_unique: 4,
        tier_thresholds: [0.25, 0.004, 0.001],
        ..scene.settings.clone()
    };
    let mut crowd = CrowdFrame::new(&scene.character, settings).expect("a crowd");
    let mut live = vec![Handle::default(); scene.spawns.len()];
    crowd.add_many(&scene.spawns, &mut live).expect("adds");
    let mut r = renderer(&gpu, &scene, &crowd, true);
    let cam = camera(Vec3::new(0.0, 2.0, 4.0), Vec3::new(0.0, 0.5, -8.0));
    let exchange = crowd.exchange().clone();
    let clips = crowd.character().clips().len();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let (mut dropped_frames, mut changed) = (0, 0usize);
    for frame in 0..1000 {
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
                    let h = pick(&mut rng, &live);
                    let p = Vec3::new(rng.next() * 40.0 - 20.0, 0.0, -rng.next() * 30.0);
                    crowd.set_position(h, p).expect("moves");
                }
                3 => {
                    let positions: Vec<Vec3> = live
                        .iter()
                        .map(|_| Vec3::new(rng.next() * 30.0 - 15.0, 0.0, -rng.next() * 20.0))
                        .collect();
                    crowd.set_positions(&live, &positions).expect("bulk moves");
                }
                4 | 5 => {
                    let h = pick(&mut rng, &live);
                    let clip = ClipId((rng.next() * clips as f32) as u16 % clips as u16);
                    let fade = if rng.next() < 0.7 { 0.1 + rng.next() * 0.4 } else { 0.0 };
                    crowd.play(h, clip, fade).expect("plays");
                }
                6 => {
                    let h = pick(&mut rng, &live);
                    crowd
                        .set_tint(h, Vec4::new(rng.next(), rng.next(), rng.next(), 1.0))
                        .expect("tints");
                }
                7 => {
                    let h = pick(&mut rng, &live);
                    crowd.set_speed(h, 0.5 + rng.next()).expect("speeds");
                }
                _ => {
                    let h = pick(&mut rng, &live);
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
        crowd.step(1.0 / 30.0, &cam).expect("steps");
        // Now and then the render thread falls behind: the older frame is dropped and folded into the newer.
        if frame % 9 == 4 {
            dropped_frames += 1;
            continue;
        }
        let packet = exchange.begin_read().expect("a packet");
        changed += packet.resident().instances.len();
        r.prepare(&gpu.device, &gpu.queue, &packet).expect("prepares");
        drop(packet);
        if frame % 100 == 99 {
            check(&gpu, &crowd, &r, frame);
        }
    }
    let stats = exchange.stats();
    eprintln!(
        "1000 frames: {} instances at the end, {changed} resident states uploaded, {dropped_frames} frames left \
         unread, {} dropped and folded",
        live.len(),
        stats.dropped
    );
    assert!(stats.dropped > 50, "frames were dropped and folded: {stats:?}");
    check(&gpu, &crowd, &r, 1000);
}
