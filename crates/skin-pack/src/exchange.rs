//! The hand-off of whole frames from the simulation thread to the render thread: [`FrameExchange`].
//!
//! The exchange owns two or three pre-allocated frame packets of the caller's type `P` (palettes, instance records,
//! visible lists, dirty ranges, the camera, stats). Each packet is in exactly one state:
//!
//! ```text
//!            begin_write            publish                   begin_read            drop(ReadGuard)
//!   Free ───────────────► Writing ─────────► Ready(frame) ───────────────► Reading ────────────────► Free
//!     ▲   drop(WriteGuard)   │                  │ dropped (Overrun::DropOldest only)
//!     └──────────────────────┴──────────────────┘
//! ```
//!
//! The simulation thread (the producer) calls [`FrameExchange::begin_write`], fills the packet through the
//! [`WriteGuard`], and calls [`WriteGuard::publish`], which stamps the next frame number (0, 1, 2, ...).
//! The render thread (the consumer) calls [`FrameExchange::begin_read`] and reads through the [`ReadGuard`]; dropping
//! the guard returns the packet to the pool. A packet is never written while it is read: the guards hold it
//! exclusively, so there is no data race and no `unsafe`.
//!
//! `tests/exchange_stress.rs` runs both policies over thousands of frames on two real threads, and
//! `tests/loom_exchange.rs` model-checks the same protocol with loom (built with `--cfg skin_pack_loom`, which swaps in
//! loom's `Mutex` and `Condvar`): every interleaving of a producer and a consumer over a few frames, up to a
//! preemption bound, with no deadlock or lost wake-up, frames in order and intact, and under
//! [`Overrun::DropOldest`] every frame either read or folded into a read frame.
//!
//! # Overrun policy
//!
//! When the producer runs ahead, [`Overrun`] says what happens; it never touches the packet being read.
//! - [`Overrun::Wait`] (two or three packets) is lossless: every published frame is read, in order, and
//!   `begin_write` blocks until a packet is free.
//! - [`Overrun::DropOldest`] (three packets: triple buffering) never blocks the producer: when no packet is free,
//!   `begin_write` reuses the oldest published frame that nobody has started reading, and the consumer always gets
//!   the newest published frame. Frames skipped this way are dropped and counted in [`ExchangeStats::dropped`].
//!   Each dropped frame is first folded into the next newer published frame by [`FramePacket::absorb_dropped`], so
//!   that the dirty ranges the render thread uploads still cover every change.
//!
//! # Latency
//!
//! With [`Overrun::Wait`] and two packets, the render thread reads frame `k` while the simulation fills frame
//! `k + 1`, and the simulation cannot begin frame `k + 2` until the render thread releases frame `k`: the frame on
//! screen is one simulation frame behind, and never more. Three packets under `Wait` let the simulation run up to
//! two frames ahead, absorbing jitter at the cost of up to two frames of latency.
//! With [`Overrun::DropOldest`], the render thread reads the newest frame published when it calls `begin_read`, so
//! what it draws is at most the one frame that the simulation is filling at that moment behind.
//!
//! # Allocation and blocking
//!
//! [`FrameExchange::new`] allocates once; after that, the guards and [`FrameExchange::close`] never allocate (a
//! `std::sync::Mutex` and two `Condvar`s guard the packet states; on Linux they are futexes).
//! `tests/no_alloc_exchange.rs` proves it with a counting allocator. A packet's buffers keep their capacity from frame
//! to frame, because packets are reused; the producer finds in each packet whatever that packet held before, and
//! overwrites it (clearing `Vec`s keeps their capacity).
//!
//! Misuse is an error rather than a deadlock where it can be detected: a second writer or reader gets
//! [`Error::ExchangeBusy`], a closed exchange gives [`Error::ExchangeClosed`], and the `try_` and `_timeout` variants
//! return instead of waiting forever.

use std::ops::{Deref, DerefMut};
use std::sync::PoisonError;
// Under `cfg(skin_pack_loom)` the locks are loom's, so that `tests/loom_exchange.rs` can check every interleaving of
// the producer and the consumer (deadlocks and lost wake-ups included); the code is otherwise the same. The cfg is
// the crate's own rather than the common `loom`, so that an engine running its own loom tests with `--cfg loom` still
// gets the standard locks here (loom's panic outside a loom model).
#[cfg(skin_pack_loom)]
use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(skin_pack_loom))]
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::{Error, Result};

/// The most packets a [`FrameExchange`] holds.
///
/// Two packets let the simulation fill one frame while the render thread reads another; a third lets the producer
/// keep going while a published frame waits to be read. More would only add latency: the render thread draws one frame
/// at a time, so a fourth packet would hold a frame that is either stale or not yet needed.
pub const MAX_FRAME_PACKETS: usize = 3;

/// What the producer does when every packet is in use (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overrun {
    /// Block until the render thread releases a packet. Every frame is read, in order. Two or three packets.
    Wait,
    /// Reuse the oldest published frame that nobody is reading, and count it as dropped; the render thread always reads
    /// the newest frame. The producer never blocks. Exactly three packets.
    DropOldest,
}

impl Overrun {
    /// The name used in errors and reports.
    pub fn name(self) -> &'static str {
        match self {
            Overrun::Wait => "wait",
            Overrun::DropOldest => "drop oldest",
        }
    }

    /// The fewest and most packets this policy supports.
    fn packet_limits(self) -> (usize, usize) {
        match self {
            Overrun::Wait => (2, MAX_FRAME_PACKETS),
            // With two packets, one being read and one being written, a dropped frame would have no newer published
            // frame to fold its changes into, and the reader would find nothing to read.
            Overrun::DropOldest => (3, MAX_FRAME_PACKETS),
        }
    }
}

/// A frame packet that a [`FrameExchange`] carries.
pub trait FramePacket: Send {
    /// Folds `dropped`, a published frame that will never be read, into `self`, the next newer published frame.
    ///
    /// It is called only under [`Overrun::DropOldest`], with the exchange locked, so it should be quick and must not
    /// allocate to keep the hand-off allocation-free. A packet that carries dirty state unions it here (for example
    /// with [`DirtyTracker::union_with`](crate::DirtyTracker::union_with)): the render thread uploads only the ranges
    /// of the frames it reads, so without this the changes of a dropped frame would never reach the GPU.
    /// Everything else in `self` is newer than in `dropped`. The default does nothing, which is right for packets that
    /// are always uploaded whole.
    fn absorb_dropped(&mut self, dropped: &Self) {
        let _ = dropped;
    }
}

/// Counters of a [`FrameExchange`], from [`FrameExchange::stats`].
///
/// At any moment `published == read + dropped + (frames published and not yet read)`; once the exchange is closed
/// and the reader has drained it, `published == read + dropped`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExchangeStats {
    /// Frames published; also the number the next frame will get.
    pub published: u64,
    /// Frames handed to the reader.
    pub read: u64,
    /// Published frames that will never be read ([`Overrun::DropOldest`] only).
    pub dropped: u64,
    /// `begin_write` calls that found no free packet and waited ([`Overrun::Wait`] only).
    pub writer_waits: u64,
    /// True while a `begin_write` call is waiting for a free packet: the simulation is blocked on the render thread.
    pub writer_waiting: bool,
    /// The number of the frame most recently handed to the reader.
    pub last_read: Option<u64>,
}

/// The state of one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Nobody holds it; its content is stale.
    Free,
    /// A [`WriteGuard`] holds it.
    Writing,
    /// Published with this frame number, not yet read.
    Ready(u64),
    /// A [`ReadGuard`] holds it.
    Reading,
}

/// The shared state, behind the exchange's lock.
#[derive(Debug)]
struct State {
    /// One entry per packet; entries past the packet count stay `Free` and are never used.
    slots: [Slot; MAX_FRAME_PACKETS],
    /// Set by [`FrameExchange::close`].
    closed: bool,
    /// Threads waiting on `writable`; a state change notifies only when some thread waits, which saves a system call.
    waiting_writers: usize,
    /// Threads waiting on `readable`.
    waiting_readers: usize,
    /// The counters.
    stats: ExchangeStats,
}

/// How long an acquisition may wait.
#[derive(Clone, Copy)]
enum Patience {
    /// Return at once.
    None,
    /// Wait until this instant.
    Until(Instant),
    /// Wait as long as it takes (or until the exchange is closed).
    Forever,
}

impl Patience {
    /// Waits on `cv` according to the patience; returns the guard and whether time ran out.
    fn wait<'a, T>(self, cv: &Condvar, guard: MutexGuard<'a, T>) -> (MutexGuard<'a, T>, bool) {
        match self {
            Patience::None => (guard, true),
            Patience::Forever => (cv.wait(guard).unwrap_or_else(PoisonError::into_inner), false),
            Patience::Until(deadline) => {
                let now = Instant::now();
                if now >= deadline {
                    return (guard, true);
                }
                let (guard, _) = cv
                    .wait_timeout(guard, deadline - now)
                    .unwrap_or_else(PoisonError::into_inner);
                // A spurious or early wake-up loops back and re-checks; the deadline decides.
                (guard, false)
            }
        }
    }

    /// The patience for a timeout from now.
    fn after(timeout: Duration) -> Self {
        Instant::now()
            .checked_add(timeout)
            .map_or(Patience::Forever, Patience::Until)
    }
}

/// Locks a mutex, ignoring poisoning: every critical section leaves the state consistent, and a packet abandoned by a
/// panicking writer is simply stale content.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The hand-off of frame packets from one producer thread to one consumer thread (see the module docs).
///
/// Share it by reference (`std::thread::scope`) or in an `Arc`. It is `Sync` when `P` is `Send`.
///
/// # Example
///
/// ```
/// use skin_pack::{Error, FrameExchange, FramePacket, Overrun};
///
/// struct Packet {
///     palettes: Vec<u8>,
/// }
/// impl FramePacket for Packet {}
///
/// let packets = (0..2).map(|_| Packet { palettes: Vec::with_capacity(4096) }).collect();
/// let exchange = FrameExchange::new(packets, Overrun::Wait)?;
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         for frame in 0..100u8 {
///             let mut packet = exchange.begin_write().expect("open");
///             packet.palettes.clear(); // keeps the capacity
///             packet.palettes.resize(4096, frame);
///             packet.publish();
///         }
///         exchange.close();
///     });
///     let mut expected = 0;
///     while let Ok(packet) = exchange.begin_read() {
///         assert_eq!(packet.frame(), expected);
///         assert!(packet.palettes.iter().all(|&b| b == expected as u8));
///         expected += 1;
///     }
///     assert_eq!(expected, 100, "Overrun::Wait delivers every frame");
/// });
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug)]
pub struct FrameExchange<P> {
    /// The packets; a guard locks its packet for its whole life (uncontended: the slot state grants it alone).
    packets: Vec<Mutex<P>>,
    /// The packet states and counters.
    state: Mutex<State>,
    /// Signalled when a packet becomes free or the exchange closes.
    writable: Condvar,
    /// Signalled when a frame is published or the exchange closes.
    readable: Condvar,
    /// The overrun policy.
    policy: Overrun,
}

impl<P: FramePacket> FrameExchange<P> {
    /// An exchange over `packets`, pre-allocated by the caller, with the given overrun policy.
    ///
    /// Errors: [`Error::ExchangePacketCount`] unless there are 2 or 3 packets for [`Overrun::Wait`], or exactly 3 for
    /// [`Overrun::DropOldest`].
    pub fn new(packets: Vec<P>, policy: Overrun) -> Result<Self> {
        let (min, max) = policy.packet_limits();
        if !(min..=max).contains(&packets.len()) {
            return Err(Error::ExchangePacketCount {
                policy: policy.name(),
                count: packets.len(),
                min,
                max,
            });
        }
        Ok(Self {
            packets: packets.into_iter().map(Mutex::new).collect(),
            state: Mutex::new(State {
                slots: [Slot::Free; MAX_FRAME_PACKETS],
                closed: false,
                waiting_writers: 0,
                waiting_readers: 0,
                stats: ExchangeStats::default(),
            }),
            writable: Condvar::new(),
            readable: Condvar::new(),
            policy,
        })
    }

    /// The overrun policy.
    pub fn policy(&self) -> Overrun {
        self.policy
    }

    /// The number of packets.
    pub fn packet_count(&self) -> usize {
        self.packets.len()
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> ExchangeStats {
        let state = lock(&self.state);
        ExchangeStats {
            writer_waiting: state.waiting_writers > 0,
            ..state.stats
        }
    }

    /// Closes the exchange: writers get [`Error::ExchangeClosed`] from now on, and so do readers once every published
    /// frame that is still to be read has been read. Wakes every waiting thread. Either side may close it, for
    /// example the render thread when the window closes, to release a producer blocked in `begin_write`.
    pub fn close(&self) {
        lock(&self.state).closed = true;
        self.writable.notify_all();
        self.readable.notify_all();
    }

    /// True once [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        lock(&self.state).closed
    }

    /// Takes a packet to fill with the next frame, waiting under [`Overrun::Wait`] until one is free.
    ///
    /// Errors: [`Error::ExchangeClosed`] if the exchange is closed (also while waiting);
    /// [`Error::ExchangeBusy`] if a [`WriteGuard`] is already held.
    pub fn begin_write(&self) -> Result<WriteGuard<'_, P>> {
        self.acquire_write(Patience::Forever)?
            .ok_or(Error::ExchangeTimeout { what: "a free packet" })
    }

    /// Like [`begin_write`](Self::begin_write), but gives up after `timeout` with [`Error::ExchangeTimeout`].
    pub fn begin_write_timeout(&self, timeout: Duration) -> Result<WriteGuard<'_, P>> {
        self.acquire_write(Patience::after(timeout))?
            .ok_or(Error::ExchangeTimeout { what: "a free packet" })
    }

    /// Like [`begin_write`](Self::begin_write), but never waits: `Ok(None)` when no packet is free now.
    pub fn try_begin_write(&self) -> Result<Option<WriteGuard<'_, P>>> {
        self.acquire_write(Patience::None)
    }

    /// Takes the next frame to read, waiting until one is published: under [`Overrun::Wait`] the oldest unread frame,
    /// under [`Overrun::DropOldest`] the newest (older unread frames are dropped).
    ///
    /// Errors: [`Error::ExchangeClosed`] if the exchange is closed and no published frame is left to read;
    /// [`Error::ExchangeBusy`] if a [`ReadGuard`] is already held.
    pub fn begin_read(&self) -> Result<ReadGuard<'_, P>> {
        self.acquire_read(Patience::Forever)?.ok_or(Error::ExchangeTimeout {
            what: "a published frame",
        })
    }

    /// Like [`begin_read`](Self::begin_read), but gives up after `timeout` with [`Error::ExchangeTimeout`].
    pub fn begin_read_timeout(&self, timeout: Duration) -> Result<ReadGuard<'_, P>> {
        self.acquire_read(Patience::after(timeout))?
            .ok_or(Error::ExchangeTimeout {
                what: "a published frame",
            })
    }

    /// Like [`begin_read`](Self::begin_read), but never waits: `Ok(None)` when no frame is waiting now.
    pub fn try_begin_read(&self) -> Result<Option<ReadGuard<'_, P>>> {
        self.acquire_read(Patience::None)
    }

    /// Returns the packets, for reuse or inspection.
    pub fn into_packets(self) -> Vec<P> {
        self.packets
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect()
    }

    /// The used slots.
    fn slots<'s>(&self, state: &'s State) -> &'s [Slot] {
        &state.slots[..self.packets.len()]
    }

    /// The slot of the oldest (`newest == false`) or newest ready frame other than `except`, with its frame number.
    fn ready_slot(&self, state: &State, newest: bool, except: Option<usize>) -> Option<(usize, u64)> {
        let ready = self.slots(state).iter().enumerate().filter_map(|(i, s)| match *s {
            Slot::Ready(frame) if Some(i) != except => Some((i, frame)),
            _ => None,
        });
        if newest {
            ready.max_by_key(|&(_, f)| f)
        } else {
            ready.min_by_key(|&(_, f)| f)
        }
    }

    /// Drops the ready frame in slot `dropped`, folding it into the ready frame in slot `into`, and frees its packet.
    fn drop_into(&self, state: &mut State, dropped: usize, into: usize) {
        {
            // Both packets are `Ready`, so no guard holds them and these locks do not wait.
            let old = lock(&self.packets[dropped]);
            lock(&self.packets[into]).absorb_dropped(&old);
        }
        state.slots[dropped] = Slot::Free;
        state.stats.dropped += 1;
    }

    fn acquire_write(&self, patience: Patience) -> Result<Option<WriteGuard<'_, P>>> {
        let mut state = lock(&self.state);
        let mut waited = false;
        let index = loop {
            if state.closed {
                return Err(Error::ExchangeClosed);
            }
            if self.slots(&state).contains(&Slot::Writing) {
                return Err(Error::ExchangeBusy {
                    what: "the write guard",
                });
            }
            if let Some(i) = self.slots(&state).iter().position(|s| *s == Slot::Free) {
                break i;
            }
            if self.policy == Overrun::DropOldest {
                // No packet is free and none is being written: with three packets, at most one is being read, so at
                // least two hold unread frames. Reuse the oldest after folding it into the next newer one.
                if let Some((oldest, _)) = self.ready_slot(&state, false, None)
                    && let Some((next, _)) = self.ready_slot_after(&state, oldest)
                {
                    self.drop_into(&mut state, oldest, next);
                    break oldest;
                }
            }
            if !waited && !matches!(patience, Patience::None) {
                waited = true;
                state.stats.writer_waits += 1;
            }
            state.waiting_writers += 1;
            let (s, timed_out) = patience.wait(&self.writable, state);
            state = s;
            state.waiting_writers -= 1;
            if timed_out {
                return Ok(None);
            }
        };
        state.slots[index] = Slot::Writing;
        let frame = state.stats.published;
        drop(state);
        Ok(Some(WriteGuard {
            exchange: self,
            index,
            frame,
            packet: Some(lock(&self.packets[index])),
        }))
    }

    /// The ready frame next newer than the one in slot `slot`.
    fn ready_slot_after(&self, state: &State, slot: usize) -> Option<(usize, u64)> {
        let Slot::Ready(frame) = state.slots[slot] else {
            return None;
        };
        self.slots(state)
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match *s {
                Slot::Ready(f) if f > frame => Some((i, f)),
                _ => None,
            })
            .min_by_key(|&(_, f)| f)
    }

    fn acquire_read(&self, patience: Patience) -> Result<Option<ReadGuard<'_, P>>> {
        let mut state = lock(&self.state);
        let (index, frame) = loop {
            if self.slots(&state).contains(&Slot::Reading) {
                return Err(Error::ExchangeBusy { what: "the read guard" });
            }
            let newest = self.policy == Overrun::DropOldest;
            if let Some((index, frame)) = self.ready_slot(&state, newest, None) {
                if newest {
                    // Fold oldest first, each into the next newer ready frame, so that the frames' changes reach the
                    // newest in publication order (a frame folded later must not land in front of an older one).
                    let mut freed = false;
                    while let Some((old, _)) = self.ready_slot(&state, false, Some(index))
                        && let Some((next, _)) = self.ready_slot_after(&state, old)
                    {
                        self.drop_into(&mut state, old, next);
                        freed = true;
                    }
                    if freed && state.waiting_writers > 0 {
                        self.writable.notify_one();
                    }
                }
                break (index, frame);
            }
            if state.closed {
                return Err(Error::ExchangeClosed);
            }
            state.waiting_readers += 1;
            let (s, timed_out) = patience.wait(&self.readable, state);
            state = s;
            state.waiting_readers -= 1;
            if timed_out {
                return Ok(None);
            }
        };
        let expected = state.stats.last_read.map_or(0, |f| f + 1);
        state.slots[index] = Slot::Reading;
        state.stats.read += 1;
        state.stats.last_read = Some(frame);
        drop(state);
        Ok(Some(ReadGuard {
            exchange: self,
            index,
            frame,
            skipped: frame - expected,
            packet: Some(lock(&self.packets[index])),
        }))
    }
}

/// The producer's hold on a packet; dereferences to the packet.
///
/// [`publish`](WriteGuard::publish) hands the frame over. Dropping the guard without publishing abandons the frame: the
/// packet goes back to the pool and no frame number is used.
#[derive(Debug)]
pub struct WriteGuard<'a, P: FramePacket> {
    exchange: &'a FrameExchange<P>,
    index: usize,
    frame: u64,
    /// `None` once the guard has published or abandoned the packet.
    packet: Option<MutexGuard<'a, P>>,
}

impl<P: FramePacket> WriteGuard<'_, P> {
    /// The number that [`publish`](WriteGuard::publish) will stamp on this frame.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Which packet (0 to 2) the guard holds; packets are reused in no fixed order.
    pub fn packet_index(&self) -> usize {
        self.index
    }

    /// Publishes the frame for the reader and returns its frame number.
    pub fn publish(mut self) -> u64 {
        self.finish(true);
        self.frame
    }

    fn finish(&mut self, publish: bool) {
        // Unlock the packet before changing its state, so whoever the state hands it to next can lock it at once.
        if self.packet.take().is_none() {
            return;
        }
        let ex = self.exchange;
        let mut state = lock(&ex.state);
        // Waiters are counted under the lock, so a waiter that is not counted yet will see the new state itself.
        if publish {
            state.slots[self.index] = Slot::Ready(self.frame);
            state.stats.published += 1;
            let wake = state.waiting_readers > 0;
            drop(state);
            if wake {
                ex.readable.notify_one();
            }
        } else {
            state.slots[self.index] = Slot::Free;
            let wake = state.waiting_writers > 0;
            drop(state);
            if wake {
                ex.writable.notify_one();
            }
        }
    }
}

impl<P: FramePacket> Drop for WriteGuard<'_, P> {
    fn drop(&mut self) {
        self.finish(false);
    }
}

impl<P: FramePacket> Deref for WriteGuard<'_, P> {
    type Target = P;

    fn deref(&self) -> &P {
        // `packet` is only `None` inside `finish`, which consumes or drops the guard.
        self.packet
            .as_deref()
            .unwrap_or_else(|| unreachable!("a live write guard holds its packet"))
    }
}

impl<P: FramePacket> DerefMut for WriteGuard<'_, P> {
    fn deref_mut(&mut self) -> &mut P {
        self.packet
            .as_deref_mut()
            .unwrap_or_else(|| unreachable!("a live write guard holds its packet"))
    }
}

/// The consumer's hold on a published frame; dereferences to the packet. Dropping it returns the packet to the pool.
#[derive(Debug)]
pub struct ReadGuard<'a, P: FramePacket> {
    exchange: &'a FrameExchange<P>,
    index: usize,
    frame: u64,
    skipped: u64,
    /// `None` once the guard has released the packet.
    packet: Option<MutexGuard<'a, P>>,
}

impl<P: FramePacket> ReadGuard<'_, P> {
    /// The frame number stamped by [`WriteGuard::publish`].
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// How many frames were dropped between the previously read frame and this one (0 under [`Overrun::Wait`]).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Which packet (0 to 2) the guard holds.
    pub fn packet_index(&self) -> usize {
        self.index
    }
}

impl<P: FramePacket> Drop for ReadGuard<'_, P> {
    fn drop(&mut self) {
        // Unlock the packet before freeing it (see `WriteGuard::finish`).
        drop(self.packet.take());
        let ex = self.exchange;
        let mut state = lock(&ex.state);
        state.slots[self.index] = Slot::Free;
        let wake = state.waiting_writers > 0;
        drop(state);
        if wake {
            ex.writable.notify_one();
        }
    }
}

impl<P: FramePacket> Deref for ReadGuard<'_, P> {
    type Target = P;

    fn deref(&self) -> &P {
        // `packet` is only `None` inside `drop`.
        self.packet
            .as_deref()
            .unwrap_or_else(|| unreachable!("a live read guard holds its packet"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A packet that records which frames it absorbed, and in which order their changes now apply: like
    /// crowd-frame's resident changes, a dropped frame's changes go in front of the absorbing frame's.
    #[derive(Debug, Default)]
    struct Packet {
        value: u64,
        absorbed: u64,
        changes: Vec<u64>,
    }

    impl FramePacket for Packet {
        fn absorb_dropped(&mut self, dropped: &Self) {
            self.absorbed += 1 + dropped.absorbed;
            self.changes.splice(0..0, dropped.changes.iter().copied());
        }
    }

    fn packets(n: usize) -> Vec<Packet> {
        (0..n).map(|_| Packet::default()).collect()
    }

    #[test]
    fn packet_counts_are_checked() {
        for (n, policy, ok) in [
            (1, Overrun::Wait, false),
            (2, Overrun::Wait, true),
            (3, Overrun::Wait, true),
            (4, Overrun::Wait, false),
            (2, Overrun::DropOldest, false),
            (3, Overrun::DropOldest, true),
            (0, Overrun::DropOldest, false),
        ] {
            let r = FrameExchange::new(packets(n), policy);
            assert_eq!(r.is_ok(), ok, "{n} packets, {policy:?}");
            if !ok {
                assert!(matches!(r, Err(Error::ExchangePacketCount { count, .. }) if count == n));
            }
        }
    }

    #[test]
    fn wait_policy_delivers_in_order_and_blocks_when_full() {
        let ex = FrameExchange::new(packets(2), Overrun::Wait).expect("two packets");
        for v in [10, 11] {
            let mut w = ex.try_begin_write().expect("open").expect("a free packet");
            w.value = v;
            w.publish();
        }
        assert!(
            ex.try_begin_write().expect("open").is_none(),
            "both packets hold unread frames"
        );
        assert!(matches!(
            ex.begin_write_timeout(Duration::from_millis(1)),
            Err(Error::ExchangeTimeout { .. })
        ));
        let r = ex.try_begin_read().expect("open").expect("a frame");
        assert_eq!((r.frame(), r.value, r.skipped()), (0, 10, 0));
        assert!(matches!(ex.try_begin_read(), Err(Error::ExchangeBusy { .. })));
        drop(r);
        let r = ex.try_begin_read().expect("open").expect("a frame");
        assert_eq!((r.frame(), r.value), (1, 11));
        assert_eq!(ex.stats().writer_waits, 1);
    }

    #[test]
    fn misuse_and_close_are_errors() {
        let ex = FrameExchange::new(packets(3), Overrun::Wait).expect("three packets");
        let w = ex.begin_write().expect("free");
        assert!(matches!(ex.try_begin_write(), Err(Error::ExchangeBusy { .. })));
        drop(w); // abandoned: no frame number used
        assert_eq!(ex.stats().published, 0);
        assert!(ex.try_begin_read().expect("open").is_none());
        ex.begin_write().expect("free").publish();
        ex.close();
        assert!(ex.is_closed());
        assert_eq!(ex.begin_write().err(), Some(Error::ExchangeClosed));
        assert_eq!(ex.begin_read().expect("one frame left").frame(), 0);
        assert_eq!(ex.begin_read().err(), Some(Error::ExchangeClosed));
        assert_eq!(ex.into_packets().len(), 3);
    }

    #[test]
    fn drop_oldest_folds_dropped_frames_into_the_next() {
        let ex = FrameExchange::new(packets(3), Overrun::DropOldest).expect("three packets");
        for v in 0..5 {
            let mut w = ex.try_begin_write().expect("open").expect("never blocks");
            w.value = v;
            w.absorbed = 0;
            w.publish();
        }
        // Frames 3 and 4 reused the packets of frames 0 and 1, which were folded into frames 1 and 2.
        let s = ex.stats();
        assert_eq!((s.published, s.dropped), (5, 2));
        let r = ex.begin_read().expect("a frame");
        assert_eq!((r.frame(), r.value, r.skipped()), (4, 4, 4));
        // Frame 4 absorbed frame 3, which had absorbed 2, which had absorbed 1, which had absorbed 0.
        assert_eq!(r.absorbed, 4);
        assert_eq!(ex.stats().dropped, 4);
    }

    #[test]
    fn frames_dropped_by_a_read_fold_in_publication_order() {
        // Three frames wait unread; the reader takes the newest and drops the two older ones. Their changes must
        // reach it oldest first, so that a later change of the same thing wins (frame 1 moves an instance to
        // x = -1, frame 2 to x = -2: the GPU must end at -2).
        let ex = FrameExchange::new(packets(3), Overrun::DropOldest).expect("three packets");
        for v in 0..3 {
            let mut w = ex.try_begin_write().expect("open").expect("never blocks");
            w.value = v;
            w.absorbed = 0;
            w.changes.clear();
            w.changes.push(v);
            w.publish();
        }
        let r = ex.begin_read().expect("a frame");
        assert_eq!((r.frame(), r.skipped()), (2, 2));
        assert_eq!(r.changes, [0, 1, 2], "the dropped frames' changes, oldest first");
        drop(r);
        // The same when the writer drops (a full exchange) and the reader drops afterwards.
        for v in 3..8 {
            let mut w = ex.try_begin_write().expect("open").expect("never blocks");
            w.absorbed = 0;
            w.changes.clear();
            w.changes.push(v);
            w.publish();
        }
        let r = ex.begin_read().expect("a frame");
        assert_eq!(r.frame(), 7);
        assert_eq!(r.changes, [3, 4, 5, 6, 7]);
    }
}
