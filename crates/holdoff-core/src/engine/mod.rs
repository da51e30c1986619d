//! Engine: the event queue, lazy-cancellable timers and seeded RNG streams.
//!
//! Models: a discrete-event clock. Events pop in `(time, sequence)` order:
//! earliest time first, and events scheduled for the same instant in the
//! order they were scheduled, which makes every run deterministic.
//!
//! The simulator's queue is `WheelQueue`: it holds its events in one array
//! sorted latest first (`ShortQueue`) while it is short and in a
//! hierarchical timing wheel while it is long. It moves them into the wheel
//! when its length passes 128, or passes 32 while a new event passed more
//! than 48 queued ones (hosts in step, below), and back when it falls below 8
//! (the gap keeps a length near a threshold from moving them at every
//! event). Both moves keep the `(time, sequence)` order.
//! `EventQueue`, a plain `std` binary heap keyed by `(time, sequence)` (the
//! sequence number breaks ties), is the reference order the property test
//! checks it against.
//!
//! The short mode needs no sequence number: the next event is the array's
//! last element (pop is O(1)), and a new event is inserted by shifting the
//! events due at or before it one place (an insertion-sort step from the
//! end), so it lands before the earlier-scheduled events of its own time.
//! The simulator's timers are short, so a new event passes one or two
//! others at one host; far ones (the sample clock, watchdogs) pass the few
//! queued ones. Hosts that run in step queue their events for the same
//! instants, and a new event then passes every host's earlier events: the
//! insertion grows with the queue (at 64 events, seven hosts in step ran
//! 1.25x slower than on the wheel), which is what the second rule catches.
//! A port at 10 GbE line rate (64-byte frames 67.2 ns apart, 8 queues) keeps
//! about 30 events queued (34 at the peak) at distinct times: past 32 it
//! went into the wheel and stayed there until the queue fell below 8, and
//! the wheel's cascade costs each of those events about 180 instructions; a
//! new event passes only the frames in flight before it, and the array runs
//! that scenario 1.3-1.4x faster (BENCHMARKS.md, 2026-11-26, `TO_WHEEL`).
//! Since then a port queues only its oldest frame's DMA completion (`nic`,
//! `RxDmaDone`): the about 15 frames in flight at 10 GbE no longer wait in
//! the queue, which holds about 20 events, and a completion passes one or
//! two instead of 15 (BENCHMARKS.md, 2026-11-26, third sitting).
//! It replaced a binary heap of 16-byte keys with a side table of events
//! (2026-11-23, third round in BENCHMARKS.md): the heap's push and pop took
//! about 150 instructions per event, the sorted array about 45 (instruction
//! counts of the one-host bench), and the one-host bench ran 1.15x faster.
//!
//! The wheel is used as a radix queue, keyed by the event time [ns] in base
//! 64 (6 bits per level, 11 levels cover the whole 64-bit key, so no
//! overflow structure is needed). Its unit is a *bucket*: the events queued
//! for one time, in scheduling order, hanging from the first of them (a
//! time with one event costs one node, as an event did before buckets).
//! - `last` is the time of the events being popped; every queued time is >=
//!   `last`. An event at `last` sits in the `ready` FIFO; any other bucket
//!   sits at level `l` = the highest base-64 digit in which its time differs
//!   from `last`, in slot = its time's digit `l`. All times at level `l` are
//!   then below all times at level `l + 1`, and within a level, slot order is
//!   time order; a level-0 slot holds a single time.
//! - A new event joins the bucket of its time if it has one: a 1024-entry
//!   table (`recent`, by a hash of the time) names the bucket last made for
//!   each time; when the entry names another time's bucket, a new bucket is
//!   made for the event (two buckets of one time then sit in one slot list,
//!   in the order they were made). Hosts that run in step (replicated
//!   hosts, identical generators) queue many events per instant, and the
//!   wheel relinks each instant once instead of each event.
//! - Pop takes the `ready` FIFO's head. When it is empty, the lowest
//!   occupied slot of the lowest occupied level (two bit scans) holds the
//!   next time: the buckets of a level-0 slot, or a slot's single bucket,
//!   join `ready` as they are; the buckets of any other slot are relinked to
//!   lower levels relative to the slot's start (or, if the slot reaches past
//!   the pop horizon, relative to its earliest time, found by a scan).
//! - Ties keep scheduling order: a bucket is a FIFO list of events, each
//!   slot a FIFO list of buckets; a bucket is appended when made, and a slot
//!   is redistributed in list order into lower levels that are empty at that
//!   moment (everything below the lowest occupied level is empty), so equal
//!   times stay in scheduling order. The property test
//!   `queue_pops_like_the_binary_heap` checks the whole `WheelQueue` (short
//!   array, wheel and the moves between them) against the binary heap of
//!   `EventQueue`; `times_sharing_a_recent_entry_keep_scheduling_order`
//!   checks the buckets whose table entry was overwritten.
//!
//! Why this structure: almost every event is a short timer (DMA, wire,
//! ITR/EITR, RDTR/RADV, softirq) within a few ms of now, and their number
//! grows with the host count. A binary heap costs O(log n) moves per pop and
//! spreads them over a large array; in the wheel, schedule is O(1) (a table
//! probe, then one XOR, one bit scan and a list append) and pop is O(1)
//! amortised: a bucket scheduled d ns ahead is relinked at most once per
//! level it descends, i.e. at most ceil(log64(d)) times (4 for d < 16.7 ms),
//! whatever the number of queued events. Relinking moves a 32-bit index,
//! never an event. `pop_until` with a horizon before the next event may scan
//! that event's slot without consuming it (the run loop does this once, at
//! the end). Moving between the structures costs O(n) (array to wheel at
//! 32 events, wheel to array at 8), and at least 24 schedules or pops
//! separate two moves (measured: `benches/queue.rs`, `benches/engine.rs`).
//!
//! Events are stored packed in two 64-bit words (`QueueEvent`), so that the
//! queue stores and loads each as whole words.
//!
//! Memory: the short array holds at most 33 events of 24 bytes; the wheel
//! one 40-byte node per queued event in a slab (`Vec`, freed nodes reused
//! through a free list; the first event of a time is also its bucket). The
//! slab grows only when the free list is empty, by doubling from 64 event
//! nodes (all new nodes join the free list at once, out of line, so that
//! `push` has no growth path and fewer registers to save), so it never
//! exceeds twice the peak queue length or 64 nodes, plus one sentinel node
//! (where `recent` entries start), a fixed 11 x 64
//! table of list heads (5.6 KB) and the 4 KB `recent` table. Stale timer
//! events (lazy cancellation) are queued like any other until their time.
//!
//! Timers are cancelled lazily: a `Timer` holds a generation counter; an event
//! carries the generation it was armed with, and an event whose generation is
//! stale is ignored when it pops. Re-arming or cancelling is O(1) and never
//! searches the queue.
//!
//! RNG: one master seed; each component draws from its own stream, seeded by
//! mixing the master seed with the stream's name (FNV-1a + SplitMix64), so
//! adding a component never perturbs another's numbers. Generator: PCG-64 MCG
//! (`rand_pcg::Pcg64Mcg`), pinned.
//!
//! One queue or many: a run of several connected groups of hosts
//! (`scenario::world::groups`) gives each group its own `WheelQueue` and
//! swaps the running group's into the world, so a group's handful of
//! timers stays in the short array and in cache; global events wait apart,
//! and a marker (a packed word no event uses) queued in each group's queue
//! when a global event is scheduled keeps that event's place in the
//! group's scheduling order. `drain_into` hands a queue's events over in
//! pop order, `schedule_packed` queues a packed word, `uncount` takes a
//! marker back out of the popped count.
//!
//! Sub-modules: `short` (the sorted array of the short mode) and `wheel`
//! (the timing wheel); the tests are in `engine/tests.rs`.
//!
//! Units: `SimTime` [ns].

mod short;
mod wheel;

use crate::units::{Nanos, SimTime};
use rand::SeedableRng;
use short::ShortQueue;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use wheel::Wheel;

/// The pinned random generator of every stream.
pub type StreamRng = rand_pcg::Pcg64Mcg;

/// An event as `WheelQueue` stores it: packed into two 64-bit words, so that
/// the short array and the wheel's slab move every queued event as two
/// aligned 8-byte words. A small enum is otherwise copied field by field
/// into memory and read back as wider, overlapping words, which the
/// processor cannot forward from the stores that wrote it (a stall on every
/// queue operation: BENCHMARKS.md, 2026-11-23, second round).
/// `unpack(pack(e)) == e` for every event.
pub trait QueueEvent: Copy {
    /// The event as two words (low, high).
    fn pack(self) -> [u64; 2];
    /// The event `pack` produced these words from.
    fn unpack(w: [u64; 2]) -> Self;
}

impl QueueEvent for u32 {
    #[inline(always)]
    fn pack(self) -> [u64; 2] {
        [self as u64, 0]
    }
    #[inline(always)]
    fn unpack(w: [u64; 2]) -> Self {
        w[0] as u32
    }
}

impl QueueEvent for u64 {
    #[inline(always)]
    fn pack(self) -> [u64; 2] {
        [self, 0]
    }
    #[inline(always)]
    fn unpack(w: [u64; 2]) -> Self {
        w[0]
    }
}

impl QueueEvent for char {
    #[inline(always)]
    fn pack(self) -> [u64; 2] {
        [self as u64, 0]
    }
    #[inline(always)]
    fn unpack(w: [u64; 2]) -> Self {
        char::from_u32(w[0] as u32).expect("packed from a char")
    }
}

/// Queue length above which `WheelQueue` moves its events into the wheel.
const TO_WHEEL: usize = 128;
/// Queue length below which `WheelQueue` moves its events back to the short array.
const TO_HEAP: usize = 8;

/// A deterministic future-event list with the API and pop order of
/// `EventQueue`: a sorted array while short, a hierarchical timing wheel while
/// long (see the module doc).
pub struct WheelQueue<E, const TO_W: usize = TO_WHEEL, const TO_H: usize = TO_HEAP> {
    /// The events while `in_wheel` is false.
    short: ShortQueue,
    /// The events while `in_wheel` is true.
    wheel: Wheel,
    in_wheel: bool,
    now: SimTime,
    processed: u64,
    /// Events are stored packed (`QueueEvent`).
    kind: std::marker::PhantomData<E>,
}

impl<E: QueueEvent, const TO_W: usize, const TO_H: usize> Default for WheelQueue<E, TO_W, TO_H> {
    fn default() -> Self {
        Self::new()
    }
}

/// `TO_W`, `TO_H`: the queue moves to the wheel above `TO_W` events and back
/// to the short array below `TO_H` (constants, so that the short path tests against
/// an immediate; `TO_WHEEL` and `TO_HEAP` unless a test varies them).
impl<E: QueueEvent, const TO_W: usize, const TO_H: usize> WheelQueue<E, TO_W, TO_H> {
    pub fn new() -> Self {
        debug_assert!(TO_H <= TO_W);
        WheelQueue {
            short: ShortQueue::with_capacity(TO_W.min(1024) + 1),
            wheel: Wheel::new(),
            in_wheel: false,
            now: SimTime::ZERO,
            processed: 0,
            kind: std::marker::PhantomData,
        }
    }

    /// The time of the event being processed (or of the last one popped).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far.
    #[inline]
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events still queued.
    #[inline]
    pub fn len(&self) -> usize {
        // The structure not in use is empty.
        self.short.len() + self.wheel.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedule `ev` at `at`. Scheduling in the past is clamped to `now`
    /// (time never goes backwards).
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, ev: E) {
        // Packed at the call site: the two words reach the queue in
        // registers, not through a temporary in memory.
        let [lo, hi] = ev.pack();
        self.schedule_packed(at, lo, hi);
    }

    /// As `schedule`, the event as the queue stores it (`QueueEvent::pack`).
    #[inline]
    pub fn schedule_packed(&mut self, at: SimTime, lo: u64, hi: u64) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let at = at.max(self.now);
        if self.in_wheel {
            self.wheel.push(at, lo, hi);
        } else {
            let passed = self.short.push(at, lo, hi);
            let len = self.short.len();
            // Above a quarter of `TO_W` events, a new event that passes
            // more than 3/8 of `TO_W` queued ones (48 of 128: hosts in
            // step, whose events share instants) moves the queue too.
            if len > TO_W || (len > TO_W / 4 && passed > TO_W * 3 / 8) {
                self.move_to_wheel();
            }
        }
    }

    /// Schedule `ev` after `delay`.
    #[inline]
    pub fn schedule_in(&mut self, delay: Nanos, ev: E) {
        let at = self.now + delay;
        self.schedule(at, ev);
    }

    /// Pop the next event if it is due at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        self.pop_until_packed(until)
            .map(|(at, w)| (at, E::unpack(w)))
    }

    /// As `pop_until`, the event as the queue stores it (`QueueEvent::pack`),
    /// for a caller that dispatches on the packed words.
    #[inline]
    pub fn pop_until_packed(&mut self, until: SimTime) -> Option<(SimTime, [u64; 2])> {
        let (at, ev) = if self.in_wheel {
            let e = self.wheel.pop(until)?;
            if self.wheel.len < TO_H {
                self.move_to_short();
            }
            e
        } else {
            self.short.pop_until(until)?
        };
        debug_assert!(at >= self.now);
        self.now = at;
        self.processed += 1;
        Some((at, ev))
    }

    /// The next event, without taking it, while the queue is in its short
    /// mode: `Some(None)` when it is empty, `None` in the wheel mode (whose
    /// next event is found only by popping it). Frame trains
    /// (`scenario::world::trains`) compare their own next event with it.
    #[inline(always)]
    pub fn peek_short(&self) -> Option<Option<(SimTime, [u64; 2])>> {
        if self.in_wheel {
            None
        } else {
            Some(self.short.peek())
        }
    }

    /// Advance the clock to `t` without an event (end of run).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Hand every queued event to `f` in pop order (`(time, sequence)`),
    /// leaving the queue empty; the clock and the count of popped events
    /// do not move (the events are moved, not processed). The group
    /// scheduler distributes the events of a queue with it.
    pub fn drain_into(&mut self, mut f: impl FnMut(SimTime, [u64; 2])) {
        let (now, processed) = (self.now, self.processed);
        while let Some((at, w)) = self.pop_until_packed(SimTime(u64::MAX)) {
            f(at, w);
        }
        self.now = now;
        self.processed = processed;
    }

    /// Take back the count of the event just popped: it was a marker of the
    /// group scheduler (`scenario::world::groups`), not a model event.
    #[inline]
    pub fn uncount(&mut self) {
        self.processed -= 1;
    }

    /// Add `n` events processed elsewhere (the other queues of a run by
    /// connected groups) to this queue's count.
    pub fn add_processed(&mut self, n: u64) {
        self.processed += n;
    }

    /// Move every event from the short array into the (empty) wheel, in
    /// pop order, so ties keep their order.
    #[cold]
    #[inline(never)]
    fn move_to_wheel(&mut self) {
        debug_assert_eq!(self.wheel.len, 0);
        let sorted = self.short.take_sorted();
        self.wheel.last = sorted.first().map_or(self.now, |e| e.0.min(self.now));
        for (at, [lo, hi]) in sorted {
            self.wheel.push(at, lo, hi);
        }
        self.in_wheel = true;
    }

    /// Move every event from the wheel back into the (empty) short array, in
    /// pop order, so ties keep their order.
    #[cold]
    #[inline(never)]
    fn move_to_short(&mut self) {
        let wheel = &mut self.wheel;
        self.short
            .fill_sorted(std::iter::from_fn(|| wheel.pop(SimTime(u64::MAX))));
        self.in_wheel = false;
    }
}

struct HeapEntry<E> {
    at: SimTime,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for HeapEntry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl<E> Eq for HeapEntry<E> {}
impl<E> PartialOrd for HeapEntry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for HeapEntry<E> {
    // Reversed: BinaryHeap is a max-heap, we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.cmp(&self.at).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// A deterministic future-event list: a binary heap keyed by
/// `(time, sequence)`. The simulator's queue, and the reference order for
/// `WheelQueue`.
pub struct EventQueue<E> {
    heap: BinaryHeap<HeapEntry<E>>,
    seq: u64,
    now: SimTime,
    processed: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
            now: SimTime::ZERO,
            processed: 0,
        }
    }

    /// The time of the event being processed (or of the last one popped).
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Events popped so far.
    #[inline]
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events still queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Schedule `ev` at `at`. Scheduling in the past is clamped to `now`
    /// (time never goes backwards).
    #[inline]
    pub fn schedule(&mut self, at: SimTime, ev: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let at = at.max(self.now);
        self.seq += 1;
        self.heap.push(HeapEntry {
            at,
            seq: self.seq,
            ev,
        });
    }

    /// Schedule `ev` after `delay`.
    #[inline]
    pub fn schedule_in(&mut self, delay: Nanos, ev: E) {
        let at = self.now + delay;
        self.schedule(at, ev);
    }

    /// Pop the next event if it is due at or before `until`.
    #[inline]
    pub fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, E)> {
        match self.heap.peek() {
            Some(e) if e.at <= until => {
                let e = self.heap.pop().expect("peeked");
                debug_assert!(e.at >= self.now);
                self.now = e.at;
                self.processed += 1;
                Some((e.at, e.ev))
            }
            _ => None,
        }
    }

    /// Advance the clock to `t` without an event (end of run).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
    }
}

/// A one-shot timer with lazy cancellation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    gen: u32,
    deadline: Option<SimTime>,
}

impl Timer {
    /// Arm (or re-arm) for `at`; returns the generation the event must carry.
    #[inline]
    pub fn arm(&mut self, at: SimTime) -> u32 {
        self.gen = self.gen.wrapping_add(1);
        self.deadline = Some(at);
        self.gen
    }
    /// Cancel; any event already queued becomes stale.
    #[inline]
    pub fn cancel(&mut self) {
        self.gen = self.gen.wrapping_add(1);
        self.deadline = None;
    }
    /// Whether an event carrying `gen` is the live expiry of this timer; if so
    /// the timer is disarmed.
    #[inline]
    pub fn fire(&mut self, gen: u32) -> bool {
        if self.deadline.is_some() && gen == self.gen {
            self.deadline = None;
            true
        } else {
            false
        }
    }
    #[inline]
    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// The RNG stream named `name` under `master_seed`.
pub fn rng_stream(master_seed: u64, name: &str) -> StreamRng {
    let s = splitmix64(master_seed ^ splitmix64(fnv1a(name)));
    StreamRng::seed_from_u64(s)
}

#[cfg(test)]
mod tests;
