//! Two-thread stress tests of [`FrameExchange`]: thousands of frames, each with a payload that is a deterministic
//! function of its frame number, checked word by word by the reader.
//!
//! - `Overrun::Wait` (two and three packets): every frame arrives intact, in order, none lost, and the producer
//!   really blocks (the reader regularly holds a frame until the producer is waiting).
//! - `Overrun::DropOldest`: frames arrive intact and in increasing order; the reader's count of skipped frames equals
//!   the exchange's count of dropped ones; and a "GPU" mirror updated only from each read frame's dirty ranges always
//!   equals the frame's full state, so dropped frames' changes are never lost.
//! - A producer running ahead never overwrites the packet being read: under `Wait` it times out (and a blocked
//!   producer resumes when the reader lets go), under `DropOldest` it keeps publishing into the other packets while
//!   the held packet stays unchanged.
//! - `close` releases a reader blocked on a stopped producer, and a producer blocked on a stopped reader.

use std::time::Duration;

use skin_pack::{ByteRange, DirtyTracker, Error, FrameExchange, FramePacket, Overrun, dirty_ranges_bound};

/// Elements of the simulated state that dirty ranges track.
const STATE_LEN: usize = 300;
/// Bytes per state element.
const STRIDE: usize = 8;

/// A deterministic 64-bit mix of a frame number and an index (splitmix64).
fn mix(frame: u64, i: u64) -> u64 {
    let mut z = frame.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_add(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The test's frame packet.
struct Packet {
    /// The frame number as the producer counted it.
    frame: u64,
    /// `mix(frame, i)` for `i` in `0..len`, with a length that varies by frame.
    words: Vec<u64>,
    /// A checksum of `words`.
    checksum: u64,
    /// A full copy of the simulated state at this frame.
    state: Vec<u64>,
    /// The state elements that changed since the previous frame (plus, after drops, those of dropped frames).
    dirty: DirtyTracker,
}

impl FramePacket for Packet {
    fn absorb_dropped(&mut self, dropped: &Self) {
        self.dirty.union_with(&dropped.dirty);
    }
}

fn packets(n: usize) -> Vec<Packet> {
    (0..n)
        .map(|_| Packet {
            frame: u64::MAX,
            words: Vec::with_capacity(2048),
            checksum: 0,
            state: vec![0; STATE_LEN],
            dirty: DirtyTracker::new(STATE_LEN, STRIDE).expect("layout"),
        })
        .collect()
}

fn checksum(words: &[u64]) -> u64 {
    words.iter().fold(0u64, |acc, w| acc.rotate_left(5) ^ w)
}

/// The simulation side: its state and how frame `k` changes it.
struct Simulation {
    state: Vec<u64>,
}

impl Simulation {
    /// Advances the state to frame `k` and fills `p` with it.
    fn fill(&mut self, k: u64, p: &mut Packet) {
        p.frame = k;
        let len = 1000 + (k % 97) as usize * 10;
        p.words.clear();
        p.words.extend((0..len as u64).map(|i| mix(k, i)));
        p.checksum = checksum(&p.words);
        p.dirty.clear();
        for j in 0..3 {
            let e = (mix(k, 1_000_000 + j) % STATE_LEN as u64) as usize;
            self.state[e] = k + 1;
            p.dirty.mark(e).expect("in range");
        }
        p.state.copy_from_slice(&self.state);
    }
}

/// The render side: a mirror of the state updated only through dirty ranges.
struct Render {
    mirror: Vec<u64>,
    ranges: Vec<ByteRange>,
    frames: u64,
    skipped: u64,
    last: Option<u64>,
}

impl Render {
    fn new() -> Self {
        Self {
            mirror: vec![0; STATE_LEN],
            ranges: vec![ByteRange::default(); dirty_ranges_bound(STATE_LEN)],
            frames: 0,
            skipped: 0,
            last: None,
        }
    }

    /// Checks one read frame and "uploads" its dirty ranges.
    fn consume(&mut self, frame: u64, skipped: u64, p: &Packet) {
        assert_eq!(p.frame, frame, "the packet holds the frame its number says");
        if let Some(last) = self.last {
            assert!(frame > last, "frame {frame} after frame {last}");
            assert_eq!(frame - last - 1, skipped, "skipped count after frame {last}");
        } else {
            assert_eq!(frame, skipped);
        }
        self.last = Some(frame);
        self.frames += 1;
        self.skipped += skipped;
        assert_eq!(p.words.len(), 1000 + (frame % 97) as usize * 10, "frame {frame} length");
        for (i, w) in p.words.iter().enumerate() {
            assert_eq!(*w, mix(frame, i as u64), "frame {frame} word {i} is torn");
        }
        assert_eq!(p.checksum, checksum(&p.words), "frame {frame} checksum");
        let n = p.dirty.ranges(3 * STRIDE, &mut self.ranges).expect("bounded");
        for r in &self.ranges[..n] {
            let (a, b) = (r.start / STRIDE, r.end / STRIDE);
            self.mirror[a..b].copy_from_slice(&p.state[a..b]);
        }
        assert_eq!(self.mirror, p.state, "frame {frame}: dirty ranges missed a change");
    }
}

/// Runs a producer thread over `frames` frames and a reader on this thread; every `hold_every` frames the reader
/// keeps its frame until `hold_until` says the producer has run ahead (or the producer is done).
fn run_two_threads(
    ex: &FrameExchange<Packet>,
    frames: u64,
    hold_every: u64,
    hold_until: impl Fn(&FrameExchange<Packet>) -> bool,
) -> Render {
    let mut render = Render::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut sim = Simulation {
                state: vec![0; STATE_LEN],
            };
            for k in 0..frames {
                let mut w = ex.begin_write().expect("open");
                assert_eq!(w.frame(), k);
                sim.fill(k, &mut w);
                assert_eq!(w.publish(), k);
            }
            ex.close();
        });
        loop {
            let r = match ex.begin_read() {
                Ok(r) => r,
                Err(Error::ExchangeClosed) => break,
                Err(e) => panic!("read failed: {e}"),
            };
            render.consume(r.frame(), r.skipped(), &r);
            if r.frame() % hold_every == 0 {
                while !ex.is_closed() && !hold_until(ex) {
                    std::thread::yield_now();
                }
                // The held packet is unchanged, whatever the producer did meanwhile.
                render.consume_again(r.frame(), &r);
            }
        }
    });
    render
}

impl Render {
    /// Re-checks a held frame's payload (its dirty ranges were already applied).
    fn consume_again(&self, frame: u64, p: &Packet) {
        assert_eq!(p.frame, frame);
        assert!(p.words.iter().enumerate().all(|(i, w)| *w == mix(frame, i as u64)));
        assert_eq!(self.mirror, p.state);
    }
}

#[test]
fn wait_policy_delivers_every_frame_in_order() {
    const FRAMES: u64 = 3000;
    for n in [2, 3] {
        let ex = FrameExchange::new(packets(n), Overrun::Wait).expect("packets");
        // Every 50th frame, hold it until the producer has blocked waiting for a packet.
        let render = run_two_threads(&ex, FRAMES, 50, |ex| ex.stats().writer_waiting);
        let stats = ex.stats();
        assert_eq!(render.frames, FRAMES, "{n} packets: every frame arrives");
        assert_eq!((stats.published, stats.read, stats.dropped), (FRAMES, FRAMES, 0));
        assert_eq!(render.skipped, 0);
        assert_eq!(render.last, Some(FRAMES - 1));
        assert!(stats.writer_waits >= FRAMES / 50 - 1, "the producer blocked: {stats:?}");
    }
}

#[test]
fn drop_oldest_delivers_newest_frames_and_counts_drops() {
    const FRAMES: u64 = 3000;
    let ex = FrameExchange::new(packets(3), Overrun::DropOldest).expect("packets");
    // Every 20th frame, hold it until the producer has published three more frames: with three packets, at least one
    // of them has to be dropped.
    let render = run_two_threads(&ex, FRAMES, 20, |ex| {
        let stats = ex.stats();
        stats.published >= stats.last_read.unwrap_or(0) + 4
    });
    let stats = ex.stats();
    assert_eq!(stats.published, FRAMES);
    assert_eq!(stats.writer_waits, 0, "the producer never waits under DropOldest");
    assert_eq!(stats.read, render.frames);
    assert_eq!(
        stats.dropped, render.skipped,
        "drops seen by the reader = drops counted by the exchange"
    );
    assert_eq!(stats.read + stats.dropped, FRAMES, "every frame is read or dropped");
    assert!(stats.dropped > 0, "the holds force drops: {stats:?}");
    assert_eq!(render.last, Some(FRAMES - 1), "the newest frame is always delivered");
}

#[test]
fn a_waiting_producer_never_overwrites_the_frame_being_read() {
    for n in [2, 3] {
        let ex = FrameExchange::new(packets(n), Overrun::Wait).expect("packets");
        let mut sim = Simulation {
            state: vec![0; STATE_LEN],
        };
        let mut w = ex.begin_write().expect("free");
        sim.fill(0, &mut w);
        w.publish();
        let held = ex.begin_read().expect("frame 0");
        let mut render = Render::new();
        render.consume(held.frame(), held.skipped(), &held);
        std::thread::scope(|s| {
            let producer = s.spawn(|| {
                let mut sim = Simulation {
                    state: sim.state.clone(),
                };
                // The free packets fill up; then the producer times out instead of touching the held packet.
                for k in 1..n as u64 {
                    let mut w = ex.begin_write_timeout(Duration::from_secs(10)).expect("a free packet");
                    sim.fill(k, &mut w);
                    w.publish();
                }
                assert!(matches!(
                    ex.begin_write_timeout(Duration::from_millis(20)),
                    Err(Error::ExchangeTimeout { .. })
                ));
                assert!(ex.try_begin_write().expect("open").is_none());
                // Now block for real; the reader releases the held frame once it sees this thread waiting.
                let mut w = ex.begin_write().expect("released");
                sim.fill(n as u64, &mut w);
                w.publish()
            });
            // The timed-out call was the first wait; the blocking call is the second.
            while !(ex.stats().writer_waits == 2 && ex.stats().writer_waiting) {
                std::thread::yield_now();
            }
            render.consume_again(0, &held);
            drop(held);
            assert_eq!(producer.join().expect("producer"), n as u64);
        });
        for k in 1..=n as u64 {
            let r = ex.try_begin_read().expect("open").expect("published");
            render.consume(r.frame(), r.skipped(), &r);
            assert_eq!(r.frame(), k);
        }
    }
}

#[test]
fn a_dropping_producer_never_overwrites_the_frame_being_read() {
    let ex = FrameExchange::new(packets(3), Overrun::DropOldest).expect("packets");
    let mut sim = Simulation {
        state: vec![0; STATE_LEN],
    };
    let mut w = ex.begin_write().expect("free");
    sim.fill(0, &mut w);
    w.publish();
    let held = ex.begin_read().expect("frame 0");
    let held_index = held.packet_index();
    let mut render = Render::new();
    render.consume(held.frame(), held.skipped(), &held);
    std::thread::scope(|s| {
        s.spawn(|| {
            for k in 1..=1000 {
                let mut w = ex.try_begin_write().expect("open").expect("never blocks");
                assert_ne!(
                    w.packet_index(),
                    held_index,
                    "frame {k} would overwrite the packet being read"
                );
                sim.fill(k, &mut w);
                w.publish();
            }
        });
    });
    render.consume_again(0, &held);
    drop(held);
    let stats = ex.stats();
    assert_eq!((stats.published, stats.dropped), (1001, 998));
    let r = ex.begin_read().expect("newest");
    assert_eq!((r.frame(), r.skipped()), (1000, 999));
    render.consume(r.frame(), r.skipped(), &r);
    assert_eq!(ex.stats().dropped, 999);
}

#[test]
fn close_releases_blocked_threads() {
    let ex = FrameExchange::new(packets(2), Overrun::Wait).expect("packets");
    std::thread::scope(|s| {
        let reader = s.spawn(|| ex.begin_read().err());
        // The reader may or may not be waiting yet; either way it must return once the exchange is closed.
        ex.close();
        assert_eq!(reader.join().expect("reader"), Some(Error::ExchangeClosed));
    });

    let ex = FrameExchange::new(packets(2), Overrun::Wait).expect("packets");
    ex.begin_write().expect("free").publish();
    ex.begin_write().expect("free").publish();
    std::thread::scope(|s| {
        let writer = s.spawn(|| ex.begin_write().err());
        while ex.stats().writer_waits == 0 {
            std::thread::yield_now();
        }
        ex.close();
        assert_eq!(writer.join().expect("writer"), Some(Error::ExchangeClosed));
    });
    // Frames published before the close can still be read.
    assert_eq!(ex.begin_read().expect("frame 0").frame(), 0);
}
