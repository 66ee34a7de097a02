//! Criterion benches for dirty ranges and the frame hand-off of `skin-pack`.
//!
//! - `skin_pack/dirty_ranges/<case>`: word-scanning `DirtyTracker::ranges` over 100k instance records, next to the
//!   per-element reference twin measured in the same run (the baseline).
//! - `skin_pack/exchange_cycle/<policy>`: one write, publish, read and release on one thread (the uncontended cost of
//!   the locks and state changes).
//! - `skin_pack/exchange_two_threads/wait2`: frames handed from a producer thread to a reader under `Overrun::Wait`
//!   with two packets; the time per frame.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use crowd_benches::bench;
use skin_pack::{
    ByteRange, DirtyTracker, FrameExchange, FramePacket, Overrun, dirty_ranges_bound, dirty_ranges_reference,
};

/// Instance records tracked.
const RECORDS: usize = 100_000;
/// Bytes per instance record.
const RECORD_SIZE: usize = 32;

/// A named dirty pattern: whether record `i` is dirty.
type Pattern = (&'static str, fn(usize) -> bool);

fn dirty_ranges(c: &mut Criterion) {
    // Sparse: 1 % of records scattered; clustered: runs of 64 records every 1,000; dense: 90 %.
    let cases: [Pattern; 3] = [
        ("sparse", |i| (i.wrapping_mul(2_654_435_761) >> 7) % 100 == 0),
        ("clustered", |i| i % 1000 < 64),
        ("dense", |i| (i.wrapping_mul(2_654_435_761) >> 7) % 10 != 0),
    ];
    for (name, is_dirty) in cases {
        let flags: Vec<bool> = (0..RECORDS).map(is_dirty).collect();
        let mut tracker = DirtyTracker::new(RECORDS, RECORD_SIZE).expect("layout");
        for (i, _) in flags.iter().enumerate().filter(|(_, d)| **d) {
            tracker.mark(i).expect("in range");
        }
        let mut out = vec![ByteRange::default(); dirty_ranges_bound(RECORDS)];
        c.bench_function(&bench!("skin_pack", "dirty_ranges", name), |b| {
            b.iter(|| black_box(tracker.ranges(black_box(256), &mut out).expect("bounded")))
        });
        let mut reference = Vec::with_capacity(dirty_ranges_bound(RECORDS));
        c.bench_function(&bench!("skin_pack", "dirty_ranges_reference", name), |b| {
            b.iter(|| {
                dirty_ranges_reference(black_box(&flags), RECORD_SIZE, black_box(256), &mut reference).expect("layout");
                black_box(reference.len())
            })
        });
    }
}

/// A one-word packet: the benches measure the hand-off, not the payload.
struct Tiny(u64);

impl FramePacket for Tiny {}

fn exchange(c: &mut Criterion) {
    for (name, policy, n) in [("wait2", Overrun::Wait, 2), ("drop3", Overrun::DropOldest, 3)] {
        let ex = FrameExchange::new((0..n).map(|_| Tiny(0)).collect(), policy).expect("packets");
        c.bench_function(&bench!("skin_pack", "exchange_cycle", name), |b| {
            b.iter(|| {
                let mut w = ex.try_begin_write().expect("open").expect("a free packet");
                w.0 += 1;
                w.publish();
                black_box(ex.try_begin_read().expect("open").expect("a frame").0)
            })
        });
    }

    c.bench_function(&bench!("skin_pack", "exchange_two_threads", "wait2"), |b| {
        b.iter_custom(|iters| {
            let ex = FrameExchange::new(vec![Tiny(0), Tiny(0)], Overrun::Wait).expect("packets");
            std::thread::scope(|s| {
                s.spawn(|| {
                    while let Ok(mut w) = ex.begin_write() {
                        w.0 += 1;
                        w.publish();
                    }
                });
                let mut elapsed = Duration::ZERO;
                if let Ok(first) = ex.begin_read() {
                    black_box(first.0);
                    drop(first);
                    let start = Instant::now();
                    for _ in 0..iters {
                        match ex.begin_read() {
                            Ok(r) => black_box(r.0),
                            Err(_) => break,
                        };
                    }
                    elapsed = start.elapsed();
                }
                ex.close();
                elapsed
            })
        })
    });
}

criterion_group!(group, dirty_ranges, exchange);
criterion_main!(group);
