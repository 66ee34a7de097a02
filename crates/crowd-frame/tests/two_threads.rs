//! A simulation thread steps a scripted crowd and a render thread reads its packets, for thousands of frames,
//! under both overrun policies. The render thread checks every packet it reads against a recomputation of that
//! frame: a replica of the crowd, driven by the same script on the render thread, stepped to the same frame
//! number. Records, draws, the dirty ranges and what they cover, the unique palettes, the camera and the counts
//! must match bit for bit, so a torn, stale or reused packet fails. A counting allocator shows that neither
//! thread allocates between two barriers placed after warm-up.
//!
//! This file holds one test, so that no other test allocates while it measures. The counter sees every thread of
//! the process, the test harness's too: libtest's "has been running for over 60 seconds" notice allocates, so the
//! test is sized to run in a few seconds (CI does not run it under CPU emulation, where it takes minutes).

mod common;

use std::alloc::System;
use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};

use crowd_frame::{Character, CrowdFrame, FrameSettings, FrameStats, Packet, StageTimes};
use skin_pack::{Error as PaletteError, Overrun};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Instances in the crowd.
const INSTANCES: usize = 600;
/// Frames before the allocation window opens.
const WARM_UP: u64 = 150;
/// Frames in all.
const FRAMES: u64 = 2000;

/// The allocations and reallocations of every thread so far.
fn allocations() -> usize {
    let s = GLOBAL.stats();
    s.allocations + s.reallocations
}

/// Frame `f`'s script, the same on both threads.
fn script_step(crowd: &mut CrowdFrame, script: &mut common::Script, f: u64) {
    script.changes(crowd, f as usize, 4);
}

/// The frame's counts, without the wall-clock times.
fn counts(stats: &FrameStats) -> FrameStats {
    FrameStats {
        stages: StageTimes::default(),
        ..*stats
    }
}

/// Panics unless `got` carries what `want` does.
fn same_frame(got: &Packet, want: &Packet) {
    let frame = got.time();
    assert_eq!(got.time(), want.time());
    assert_eq!(got.camera(), want.camera(), "at {frame}");
    assert!(got.records() == want.records(), "records differ at {frame}");
    assert!(got.draws() == want.draws(), "draws differ at {frame}");
    assert!(got.dirty() == want.dirty(), "dirty ranges differ at {frame}");
    fn bytes(p: &Packet) -> (&[u8], &[u8]) {
        (
            bytemuck::cast_slice(p.pool_palettes()),
            bytemuck::cast_slice(p.unique_palettes()),
        )
    }
    let ((gp, gu), (wp, wu)) = (bytes(got), bytes(want));
    assert!(gu == wu, "unique palettes differ at {frame}");
    for r in &got.dirty().pool_palettes {
        assert!(
            gp[r.as_range()] == wp[r.as_range()],
            "pool palettes differ at {frame} in {r:?}"
        );
    }
    assert_eq!(counts(got.stats()), counts(want.stats()), "stats differ at {frame}");
}

/// Runs both threads under `policy`; returns the frames read and the allocations inside the window.
fn run(character: &std::sync::Arc<Character>, policy: Overrun) -> (u64, usize) {
    let settings = FrameSettings {
        packets: if policy == Overrun::Wait { 2 } else { 3 },
        overrun: policy,
        ..FrameSettings::default()
    };
    let mut crowd: CrowdFrame = CrowdFrame::new(character.clone(), settings.clone()).expect("the crowd builds");
    let mut script = common::Script::new(&mut crowd, 11, INSTANCES);
    let exchange = crowd.exchange().clone();
    let barrier = Barrier::new(2);
    let (opened, closed) = (AtomicUsize::new(0), AtomicUsize::new(0));
    // The leader of each barrier reads the counter while both threads wait at the next one.
    let window = |counter: &AtomicUsize| {
        if barrier.wait().is_leader() {
            counter.store(allocations(), Ordering::SeqCst);
        }
        barrier.wait();
    };
    let read = std::thread::scope(|scope| {
        let sim = scope.spawn(|| {
            let threads = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a pool");
            threads.install(|| {
                for f in 0..FRAMES {
                    script_step(&mut crowd, &mut script, f);
                    let published = crowd.step(1.0 / 60.0, &common::camera(f as usize)).expect("steps");
                    assert_eq!(published, f);
                    if f + 1 == WARM_UP {
                        window(&opened);
                    }
                    if f + 1 == FRAMES {
                        window(&closed);
                    }
                }
                crowd.exchange().close();
            });
        });
        let render = scope.spawn(|| {
            let threads = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a pool");
            threads.install(|| {
                let mut replica: CrowdFrame = CrowdFrame::new(
                    character.clone(),
                    FrameSettings {
                        packets: 2,
                        overrun: Overrun::Wait,
                        ..settings.clone()
                    },
                )
                .expect("the replica builds");
                let mut replica_script = common::Script::new(&mut replica, 11, INSTANCES);
                let replica_exchange = replica.exchange().clone();
                let (mut next, mut read) = (0u64, 0u64);
                loop {
                    let packet = match exchange.begin_read() {
                        Ok(p) => p,
                        Err(PaletteError::ExchangeClosed) => break,
                        Err(e) => panic!("reading: {e}"),
                    };
                    let frame = packet.frame();
                    assert!(frame >= next, "frame {frame} read after {next}");
                    if policy == Overrun::Wait {
                        assert_eq!(frame, next, "a frame was skipped under Wait");
                    }
                    // Step the replica to the frame read, checking its own packets on the way.
                    while next <= frame {
                        script_step(&mut replica, &mut replica_script, next);
                        replica
                            .step(1.0 / 60.0, &common::camera(next as usize))
                            .expect("the replica steps");
                        let want = replica_exchange.begin_read().expect("the replica's packet");
                        if next == frame {
                            same_frame(&packet, &want);
                        }
                        next += 1;
                    }
                    drop(packet);
                    read += 1;
                    if frame + 1 == WARM_UP {
                        window(&opened);
                    }
                    if frame + 1 == FRAMES {
                        window(&closed);
                    }
                }
                read
            })
        });
        sim.join().expect("the simulation thread");
        render.join().expect("the render thread")
    });
    (read, closed.load(Ordering::SeqCst) - opened.load(Ordering::SeqCst))
}

#[test]
fn packets_cross_threads_intact_without_allocating() {
    let character = std::sync::Arc::new(common::character(8));
    for policy in [Overrun::Wait, Overrun::DropOldest] {
        let (read, allocated) = run(&character, policy);
        println!("{policy:?}: {read} of {FRAMES} frames read, {allocated} allocations after warm-up");
        assert!(read > 0);
        if policy == Overrun::Wait {
            assert_eq!(read, FRAMES);
        }
        assert_eq!(allocated, 0, "{policy:?}: allocations in steady state, both threads");
    }
}
