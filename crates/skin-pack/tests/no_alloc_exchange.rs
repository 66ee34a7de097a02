//! Proves with a counting global allocator that the frame hand-off does not allocate after warm-up: `FrameExchange`
//! with both overrun policies, between two threads and alternating on one, with packets that carry dirty trackers and
//! dirty ranges (so `mark`, `clear`, `ranges` and `union_with` are covered too).
//!
//! The allocator counts every thread's allocations. This file holds a single test, so that no other test of the same
//! process allocates while it measures.

use std::alloc::System;

use skin_pack::{ByteRange, DirtyTracker, FrameExchange, FramePacket, Overrun, dirty_ranges_bound};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Elements tracked per packet.
const LEN: usize = 500;

/// A frame packet shaped like the renderer's: bytes, dirty state and dirty ranges.
struct Packet {
    frame: u64,
    bytes: Vec<u8>,
    dirty: DirtyTracker,
    ranges: Vec<ByteRange>,
    range_count: usize,
}

impl FramePacket for Packet {
    fn absorb_dropped(&mut self, dropped: &Self) {
        self.dirty.union_with(&dropped.dirty);
    }
}

fn packets(n: usize) -> Vec<Packet> {
    (0..n)
        .map(|_| Packet {
            frame: 0,
            bytes: Vec::with_capacity(LEN * 32),
            dirty: DirtyTracker::new(LEN, 32).expect("layout"),
            ranges: vec![ByteRange::default(); dirty_ranges_bound(LEN)],
            range_count: 0,
        })
        .collect()
}

/// The producer's work for frame `k`: overwrite the packet in place, keeping every buffer's capacity.
fn fill(k: u64, p: &mut Packet) {
    p.frame = k;
    p.bytes.clear();
    p.bytes.resize(LEN * 32, k as u8);
    p.dirty.clear();
    for j in 0..8 {
        p.dirty.mark((k as usize * 37 + j * 61) % LEN).expect("in range");
    }
    p.range_count = p.dirty.ranges(64, &mut p.ranges).expect("bounded");
}

/// The consumer's work: read what it would upload.
fn consume(p: &Packet) -> u64 {
    p.ranges[..p.range_count]
        .iter()
        .map(|r| u64::from(p.bytes[r.start]) + r.len() as u64)
        .sum::<u64>()
        + p.frame
}

/// Runs a producer thread and the reader on this thread until the reader has read `frames` frames; returns the
/// allocations counted from the reader's frame `warmup` to its last one, and the number of frames published.
fn two_threads(policy: Overrun, n: usize, frames: u64, warmup: u64) -> (usize, u64) {
    let ex = FrameExchange::new(packets(n), policy).expect("packets");
    let mut allocations = 0;
    std::thread::scope(|s| {
        s.spawn(|| {
            // The reader closes the exchange when it has read enough.
            let mut k = 0;
            while let Ok(mut w) = ex.begin_write() {
                fill(k, &mut w);
                w.publish();
                k += 1;
            }
        });
        let mut sum = 0;
        let mut region = None;
        for read in 1..=frames {
            let r = ex
                .begin_read()
                .expect("the producer runs until the reader closes the exchange");
            sum += consume(&r);
            drop(r);
            if read == warmup {
                region = Some(Region::new(GLOBAL));
            }
        }
        ex.close();
        // The count stops before the scope joins the producer thread (joining frees its resources).
        let change = region.expect("warm-up is shorter than the run").change();
        allocations = change.allocations + change.reallocations;
        std::hint::black_box(sum);
    });
    (allocations, ex.stats().published)
}

#[test]
fn the_hand_off_does_not_allocate_after_warm_up() {
    // Two threads, both policies and packet counts.
    for (policy, n) in [(Overrun::Wait, 2), (Overrun::Wait, 3), (Overrun::DropOldest, 3)] {
        let (allocations, published) = two_threads(policy, n, 2000, 50);
        assert!(published >= 2000, "{policy:?}: only {published} frames published");
        assert_eq!(
            allocations, 0,
            "{policy:?} with {n} packets allocated while 1,950 frames were read"
        );
    }

    // One thread alternating, including drops and the try_ and timeout variants.
    let ex = FrameExchange::new(packets(3), Overrun::DropOldest).expect("packets");
    let mut sum = 0;
    let mut step = |k: u64| {
        for j in 0..3 {
            let mut w = ex.try_begin_write().expect("open").expect("never blocks");
            fill(3 * k + j, &mut w);
            w.publish();
        }
        let r = ex
            .begin_read_timeout(std::time::Duration::from_millis(10))
            .expect("a frame");
        sum += consume(&r) + r.skipped();
    };
    for k in 0..10 {
        step(k);
    }
    let region = Region::new(GLOBAL);
    for k in 10..1000 {
        step(k);
    }
    let change = region.change();
    std::hint::black_box(sum);
    assert!(ex.stats().dropped > 1000, "the single-thread loop exercises drops");
    assert_eq!(
        change.allocations + change.reallocations,
        0,
        "one-thread hand-off allocated"
    );
}
