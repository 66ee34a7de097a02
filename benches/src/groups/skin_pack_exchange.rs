//! Figures of `cargo xtask bench` for the simulation → render hand-off, `skin_pack::FrameExchange`.
//!
//! - `skin_pack.exchange_allocs_per_frame`: heap allocations per frame in steady state, counted by the bench
//!   binary's global allocator around real two-thread hand-offs (after warm-up), under both overrun policies; the
//!   worse policy is reported. The target is 0.
//! - `skin_pack.exchange_handoff_ns` (reported): the time per frame of a two-thread hand-off of a one-word packet
//!   under `Overrun::Wait` with two packets (the producer publishes as fast as the policy lets it, the reader reads
//!   every frame), median of repeated runs. It is what the hand-off itself costs a frame, wake-ups included; under
//!   0.1 % of a 60 Hz frame (16.7 µs) it is negligible next to the work around it.

use std::time::Instant;

use skin_pack::{ByteRange, DirtyTracker, FrameExchange, FramePacket, Overrun, dirty_ranges_bound};

use crate::alloc_count::allocations;
use crate::harness::{Effort, Figure};

/// Instance records per packet in the allocation run (32 B each, as in `PIPELINE.md`).
const RECORDS: usize = 4096;
/// Bytes per instance record.
const RECORD_SIZE: usize = 32;

/// A frame packet shaped like the renderer's: record bytes, their dirty state and dirty ranges.
struct Packet {
    frame: u64,
    records: Vec<u8>,
    dirty: DirtyTracker,
    ranges: Vec<ByteRange>,
    range_count: usize,
}

impl FramePacket for Packet {
    fn absorb_dropped(&mut self, dropped: &Self) {
        self.dirty.union_with(&dropped.dirty);
    }
}

impl Packet {
    fn new() -> Result<Self, skin_pack::Error> {
        Ok(Self {
            frame: 0,
            records: Vec::with_capacity(RECORDS * RECORD_SIZE),
            dirty: DirtyTracker::new(RECORDS, RECORD_SIZE)?,
            ranges: vec![ByteRange::default(); dirty_ranges_bound(RECORDS)],
            range_count: 0,
        })
    }

    /// The producer's work for frame `k`, in place: every buffer keeps its capacity.
    fn fill(&mut self, k: u64) -> Result<(), skin_pack::Error> {
        self.frame = k;
        self.records.clear();
        self.records.resize(RECORDS * RECORD_SIZE, k as u8);
        self.dirty.clear();
        for j in 0..64 {
            self.dirty.mark((k as usize * 131 + j * 977) % RECORDS)?;
        }
        self.range_count = self.dirty.ranges(256, &mut self.ranges)?;
        Ok(())
    }

    /// The reader's work: touch what it would upload.
    fn consume(&self) -> u64 {
        self.ranges[..self.range_count]
            .iter()
            .map(|r| u64::from(self.records[r.start]) + r.len() as u64)
            .sum::<u64>()
            + self.frame
    }
}

/// Runs two threads until the reader has read `frames` frames and returns the allocations counted from its frame
/// `warmup` on, per frame read.
fn allocs_per_frame(policy: Overrun, frames: u64, warmup: u64) -> Result<f64, Box<dyn std::error::Error>> {
    let packets = (0..3).map(|_| Packet::new()).collect::<Result<Vec<_>, _>>()?;
    let ex = FrameExchange::new(packets, policy)?;
    std::thread::scope(|s| {
        let producer = s.spawn(|| {
            let mut k = 0;
            // The reader closes the exchange when it has read enough; a failing producer closes it for the reader.
            let filled = loop {
                let Ok(mut w) = ex.begin_write() else { break Ok(()) };
                if let Err(e) = w.fill(k) {
                    break Err(e);
                }
                w.publish();
                k += 1;
            };
            ex.close();
            filled
        });
        let mut sum = 0;
        let mut start = 0;
        let read_all = (1..=frames).try_for_each(|read| {
            let r = ex.begin_read()?;
            sum += r.consume();
            drop(r);
            if read == warmup {
                start = allocations();
            }
            Ok::<(), skin_pack::Error>(())
        });
        ex.close();
        // Counted before the scope joins the producer thread (joining frees its resources).
        let counted = allocations() - start;
        std::hint::black_box(sum);
        producer.join().map_err(|_| "the producer thread panicked")??;
        read_all?;
        Ok(counted as f64 / (frames - warmup) as f64)
    })
}

/// Seconds per frame of a two-thread hand-off of a one-word packet under `Overrun::Wait` with two packets.
fn handoff_seconds(frames: u64) -> Result<f64, Box<dyn std::error::Error>> {
    struct Tiny(u64);
    impl FramePacket for Tiny {}
    let ex = FrameExchange::new(vec![Tiny(0), Tiny(0)], Overrun::Wait)?;
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut k = 0;
            while let Ok(mut w) = ex.begin_write() {
                w.0 = k;
                w.publish();
                k += 1;
            }
        });
        // Time from the first frame read, once both threads run.
        let timed = (|| {
            std::hint::black_box(ex.begin_read()?.0);
            let start = Instant::now();
            for _ in 0..frames {
                std::hint::black_box(ex.begin_read()?.0);
            }
            Ok::<f64, skin_pack::Error>(start.elapsed().as_secs_f64())
        })();
        // Closing releases the producer, also when reading failed.
        ex.close();
        Ok(timed? / frames as f64)
    })
}

/// Appends this part's figures to `figures`.
pub fn run(quick: bool, figures: &mut Vec<Figure>) -> Result<(), Box<dyn std::error::Error>> {
    let frames = if quick { 2_000 } else { 20_000 };
    let mut worst: f64 = 0.0;
    for policy in [Overrun::Wait, Overrun::DropOldest] {
        worst = worst.max(allocs_per_frame(policy, frames, 100)?);
    }
    figures.push(Figure {
        name: "skin_pack.exchange_allocs_per_frame".into(),
        value: worst,
        target: "0",
        met: worst == 0.0,
    });

    let effort = Effort::new(quick, 20_000);
    for _ in 0..effort.warmup {
        handoff_seconds(effort.iterations as u64)?;
    }
    let mut samples = (0..effort.runs)
        .map(|_| handoff_seconds(effort.iterations as u64))
        .collect::<Result<Vec<_>, _>>()?;
    samples.sort_by(f64::total_cmp);
    let ns = samples[samples.len() / 2] * 1e9;
    figures.push(Figure {
        name: "skin_pack.exchange_handoff_ns".into(),
        value: ns,
        target: "report",
        met: true,
    });
    Ok(())
}
