//! Loom model tests of [`FrameExchange`]: every interleaving of one producer and one consumer, up to loom's
//! preemption bound, over a few frames.
//!
//! Built only with `--cfg skin_pack_loom`, which puts the exchange on loom's locks and condition variables:
//!
//! ```text
//! RUSTFLAGS="--cfg skin_pack_loom" CARGO_TARGET_DIR=target/loom cargo test -p skin-pack --test loom_exchange
//! ```
//!
//! `.ci/run` runs it. Loom fails a model on a deadlock, which is how a lost wake-up shows (the exchange notifies
//! only when its waiter counts say somebody waits), and on a panic in any thread, which is how the checks below
//! report a frame delivered out of order, twice, torn, or overwritten while it was read.
#![cfg(skin_pack_loom)]

use loom::sync::Arc;
use loom::thread;
use skin_pack::{Error, FrameExchange, FramePacket, Overrun, ReadGuard, WriteGuard};

/// A packet whose two words must always agree: a reader that sees them differ saw a torn or overwritten frame.
#[derive(Debug, Default)]
struct Packet {
    frame: u64,
    check: u64,
    /// How many dropped frames were folded into this one, directly or through other dropped frames.
    absorbed: u64,
}

impl FramePacket for Packet {
    fn absorb_dropped(&mut self, dropped: &Self) {
        self.absorbed += 1 + dropped.absorbed;
    }
}

fn packets(n: usize) -> Vec<Packet> {
    (0..n).map(|_| Packet::default()).collect()
}

/// Fills a packet for `frame`; [`check`] finds a packet that holds parts of two fills.
fn fill(p: &mut Packet, frame: u64) {
    p.frame = frame;
    p.absorbed = 0;
    p.check = !frame;
}

/// Checks a packet read as frame `frame`.
fn check(p: &Packet, frame: u64) {
    assert_eq!(p.frame, frame, "the packet holds another frame than its stamp");
    assert_eq!(p.check, !p.frame, "a torn packet");
}

/// A loom model builder with a preemption bound that keeps the runs to seconds.
fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(f);
}

/// Spawns the producer: frames `0..frames`, each taken by `take` (blocking or not), filled and published; then it
/// closes the exchange.
fn produce(
    ex: &Arc<FrameExchange<Packet>>,
    frames: u64,
    take: fn(&FrameExchange<Packet>) -> WriteGuard<'_, Packet>,
) -> thread::JoinHandle<()> {
    let ex = ex.clone();
    thread::spawn(move || {
        for f in 0..frames {
            let mut w = take(&ex);
            fill(&mut w, f);
            assert_eq!(w.publish(), f);
        }
        ex.close();
    })
}

/// Reads frames until the exchange is closed and drained, handing each to `on_frame`; any other error fails.
fn consume(ex: &FrameExchange<Packet>, mut on_frame: impl FnMut(&ReadGuard<'_, Packet>)) {
    loop {
        match ex.begin_read() {
            Ok(r) => on_frame(&r),
            Err(Error::ExchangeClosed) => return,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
}

/// `Overrun::Wait`, two packets: every frame arrives once, in order, intact, and the producer's blocking
/// `begin_write` is always woken (no lost wake-up, no deadlock).
#[test]
fn wait_delivers_every_frame_in_order() {
    const FRAMES: u64 = 3;
    model(|| {
        let ex = Arc::new(FrameExchange::new(packets(2), Overrun::Wait).expect("two packets"));
        let producer = produce(&ex, FRAMES, |ex| ex.begin_write().expect("open"));
        let mut next = 0;
        consume(&ex, |r| {
            assert_eq!(r.frame(), next, "frames arrive in order, none skipped");
            assert_eq!(r.skipped(), 0);
            check(r, next);
            next += 1;
        });
        producer.join().expect("producer");
        assert_eq!(next, FRAMES, "every published frame was read");
        let s = ex.stats();
        assert_eq!((s.published, s.read, s.dropped), (FRAMES, FRAMES, 0));
    });
}

/// `Overrun::DropOldest`, three packets: the producer never blocks, the reader only ever moves forward, never
/// sees a packet change under it, always ends with the newest frame, and every frame is either read or folded
/// into a frame that was read.
#[test]
fn drop_oldest_never_blocks_and_loses_no_change() {
    const FRAMES: u64 = 4;
    model(|| {
        let ex = Arc::new(FrameExchange::new(packets(3), Overrun::DropOldest).expect("three packets"));
        let producer = produce(&ex, FRAMES, |ex| {
            ex.try_begin_write()
                .expect("open")
                .expect("the producer never waits under DropOldest")
        });
        let mut last = None;
        let mut covered = 0;
        consume(&ex, |r| {
            let f = r.frame();
            assert!(last.is_none_or(|l| f > l), "frame {f} after {last:?}");
            assert_eq!(r.skipped(), f - last.map_or(0, |l| l + 1));
            check(r, f);
            // The frames skipped since the last read were all folded into this one.
            assert_eq!(r.absorbed, r.skipped(), "frame {f}");
            // Read the packet again after a possible preemption: the producer must not have reused it.
            thread::yield_now();
            check(r, f);
            covered += 1 + r.absorbed;
            last = Some(f);
        });
        producer.join().expect("producer");
        assert_eq!(last, Some(FRAMES - 1), "the newest frame is always delivered");
        assert_eq!(covered, FRAMES, "every frame is read or folded into a read frame");
        let s = ex.stats();
        assert_eq!(s.published, s.read + s.dropped);
    });
}

/// `Overrun::Wait`: the render thread closes the exchange while the producer is, or is about to be, blocked on a
/// full exchange; the producer is released with `ExchangeClosed` instead of hanging.
#[test]
fn close_from_the_reader_releases_a_blocked_producer() {
    model(|| {
        let ex = Arc::new(FrameExchange::new(packets(2), Overrun::Wait).expect("two packets"));
        let producer = {
            let ex = ex.clone();
            thread::spawn(move || {
                let mut published = 0;
                loop {
                    match ex.begin_write() {
                        Ok(mut w) => {
                            fill(&mut w, published);
                            w.publish();
                            published += 1;
                        }
                        Err(Error::ExchangeClosed) => return published,
                        Err(e) => panic!("unexpected error {e}"),
                    }
                }
            })
        };
        let r = ex.begin_read().expect("the first frame");
        check(&r, 0);
        drop(r);
        ex.close();
        let published = producer.join().expect("producer");
        // Two packets: frame 0 read, and at most two more published before the close was seen.
        assert!((1..=3).contains(&published), "{published} frames published");
    });
}
