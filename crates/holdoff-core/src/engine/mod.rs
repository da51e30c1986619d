//! Engine: the event queue, lazy-cancellable timers and seeded RNG streams.
//!
//! Models: a discrete-event clock. Events pop in `(time, sequence)` order:
//! earliest time first, and events scheduled for the same instant in the
//! order they were scheduled, which makes every run deterministic.
//!
//! The simulator's queue is `WheelQueue`: it holds its events in one array
//! sorted latest first (`ShortQueue`) while it is short (at most 32 events:
//! one to four hosts' handful of timers) and in a hierarchical timing wheel
//! while it is long; it moves them over when its length passes 32 and back
//! when it falls below 8 (the gap keeps a length near a threshold from moving them
//! at every event). Both moves keep the `(time, sequence)` order.
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
//! insertion grows with the queue, which is why the array stops at 32
//! events (at 64, seven hosts in step ran 1.25x slower than on the wheel).
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
//! Units: `SimTime` [ns].

use crate::units::{Nanos, SimTime};
use rand::SeedableRng;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

/// Bits of the key per wheel level (64 slots per level).
const SLOT_BITS: u32 = 6;
/// Slots per level.
const SLOTS: usize = 1 << SLOT_BITS;
/// Levels covering a 64-bit key: ceil(64 / 6).
const LEVELS: usize = 11;
/// "No node" in the intrusive lists.
const NIL: u32 = u32::MAX;

/// A queued event in the wheel's slab. The first event queued for a time
/// is also its time's *bucket*: it holds the time, the bucket's last event
/// and the bucket's place in a slot's list; later events of that time hang
/// from it (`next`). A time with one event thus costs one node.
#[derive(Clone, Copy)]
struct Node {
    /// The event, packed (`QueueEvent`); stale once the node is free.
    ev: [u64; 2],
    /// The event's time (read only while the node heads a bucket).
    at: SimTime,
    /// The next event of the bucket, of `ready`, or of the free list.
    next: u32,
    /// Bucket head: the next bucket in its slot's list.
    bnext: u32,
    /// Bucket head: the bucket's last event. `NIL` on every other node,
    /// and on a head once its bucket has joined `ready`.
    tail: u32,
}

impl Node {
    /// A node holding no event (the sentinel, or one on the free list,
    /// chained to `next`).
    const fn free(next: u32) -> Node {
        Node {
            ev: [0, 0],
            at: SimTime::ZERO,
            next,
            bnext: NIL,
            tail: NIL,
        }
    }
}

/// A FIFO list of slab nodes (buckets, through `bnext`, or events, through
/// `next`). Empty when `head` is `NIL`; a slot list's `tail` is `NIL` too
/// then, `ready`'s may be stale (its pop does not reset it).
#[derive(Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
}

impl List {
    const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };
}

/// Node 0 of the wheel's slab: never an event, never a bucket (no tail);
/// the `recent` entries start on it, so that `push` needs no test for an
/// empty entry.
const SENTINEL: u32 = 0;

/// Entries of the wheel's table of recent buckets (`Wheel::recent`).
const RECENT: usize = 1024;

/// Queue length above which `WheelQueue` moves its events into the wheel.
const TO_WHEEL: usize = 32;
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

    #[inline]
    fn schedule_packed(&mut self, at: SimTime, lo: u64, hi: u64) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let at = at.max(self.now);
        if self.in_wheel {
            self.wheel.push(at, lo, hi);
        } else {
            self.short.push(at, lo, hi);
            if self.short.len() > TO_W {
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

    /// Advance the clock to `t` without an event (end of run).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now {
            self.now = t;
        }
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

/// `WheelQueue`'s short mode: the queued events in one array sorted
/// latest first, so that the next event is the last element and pops in
/// O(1). A new event is inserted after every event due later (an insertion
/// sort step from the end: it scans and shifts only the events due at or
/// before it, which for the simulator's short timers is one or two).
/// An event is inserted before the queued events of its own time, so those,
/// scheduled earlier, pop first: `(time, scheduling order)` without a
/// sequence number. Entries are 24 bytes (time and the packed event),
/// moved as whole words.
struct ShortQueue {
    /// Latest first.
    v: Vec<Entry>,
}

/// A queued event of `ShortQueue`.
#[derive(Clone, Copy)]
struct Entry {
    at: SimTime,
    ev: [u64; 2],
}

impl ShortQueue {
    fn with_capacity(n: usize) -> Self {
        ShortQueue {
            v: Vec::with_capacity(n),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.v.len()
    }

    #[inline]
    // The event's words come as two arguments (in registers): an array
    // argument is passed through memory and read back as one 16-byte load,
    // which stalls on the two 8-byte stores that wrote it.
    fn push(&mut self, at: SimTime, lo: u64, hi: u64) {
        let e = Entry { at, ev: [lo, hi] };
        let mut i = self.v.len();
        self.v.push(e);
        let v = self.v.as_mut_slice();
        // Shift the events due at or before `at` (the earlier-scheduled
        // ones of the same time included) one place towards the end.
        while i > 0 {
            let p = v[i - 1];
            if p.at > at {
                break;
            }
            v[i] = p;
            i -= 1;
        }
        v[i] = e;
    }

    /// The earliest entry, if it is due at or before `until`.
    #[inline]
    fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, [u64; 2])> {
        match self.v.last() {
            Some(e) if e.at <= until => {
                let e = self.v.pop().expect("not empty");
                Some((e.at, e.ev))
            }
            _ => None,
        }
    }

    /// Every entry, earliest first; the queue is left empty.
    fn take_sorted(&mut self) -> Vec<(SimTime, [u64; 2])> {
        let all = self.v.iter().rev().map(|e| (e.at, e.ev)).collect();
        self.v.clear();
        all
    }

    /// Fill the (empty) queue from entries in pop order.
    fn fill_sorted(&mut self, sorted: impl Iterator<Item = (SimTime, [u64; 2])>) {
        debug_assert!(self.v.is_empty());
        self.v.extend(sorted.map(|(at, ev)| Entry { at, ev }));
        self.v.reverse();
    }
}

/// The hierarchical timing wheel (see the module doc). Every queued time is
/// at or after `last`; callers push no time before `last`.
struct Wheel {
    /// Slab of queued events (and their buckets, see `Node`); free nodes
    /// are chained through `next`.
    nodes: Vec<Node>,
    free: u32,
    /// `LEVELS * SLOTS` lists of buckets, index `level * SLOTS + slot`.
    slots: Box<[List]>,
    /// Bit `s` of `occupied[l]`: slot `s` of level `l` is not empty.
    occupied: [u64; LEVELS],
    /// Bit `l`: level `l` has an occupied slot.
    levels: u16,
    /// Events at `last`, in scheduling order.
    ready: List,
    /// Time of the `ready` events; no queued event is earlier.
    last: SimTime,
    len: usize,
    /// The bucket last made for a time, by a hash of the time: an event for
    /// a time that has a bucket joins it (`push`).
    recent: Box<[u32; RECENT]>,
}

impl Wheel {
    fn new() -> Self {
        Wheel {
            nodes: vec![Node::free(NIL)],
            free: NIL,
            slots: vec![List::EMPTY; LEVELS * SLOTS].into_boxed_slice(),
            occupied: [0; LEVELS],
            levels: 0,
            ready: List::EMPTY,
            last: SimTime::ZERO,
            len: 0,
            recent: Box::new([SENTINEL; RECENT]),
        }
    }

    /// The `recent` entry of time `at` (Fibonacci hashing: times a constant
    /// apart spread over the table).
    #[inline(always)]
    fn recent_index(at: SimTime) -> usize {
        (at.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - RECENT.trailing_zeros())) as usize
    }

    /// Queue an event at `at`. Events of one time share a bucket, so that
    /// the wheel relinks a time once however many events it holds (hosts
    /// that run in step queue many events for the same instants). The
    /// event joins the bucket `recent` names if that bucket is for `at`:
    /// `recent` is written whenever a bucket is made, so that bucket is the
    /// newest one for `at` and holds the latest-scheduled of its events.
    /// Otherwise (no bucket for `at`, or its entry was overwritten by another
    /// time's) the event heads a new bucket; two buckets for one time sit in
    /// the same slot in the order they were made (see `link`), so the events
    /// still pop in scheduling order. A node that no longer heads a queued
    /// bucket has no `tail` and never matches (its bucket joined `ready`,
    /// or it was freed and reused; its time may be after `last` once the
    /// queue has moved to the short array and back: `last` then starts again
    /// at `now`).
    // Out of line (the short queue's path stays small where `schedule` is
    // inlined), and small: a new bucket is linked out of line.
    #[inline(never)]
    fn push(&mut self, at: SimTime, lo: u64, hi: u64) {
        debug_assert!(at >= self.last);
        if self.free == NIL {
            // Out of line and before anything else, so that no value lives
            // across a call on the frequent path (no registers to save).
            return self.grow_and_push(at, lo, hi);
        }
        let e = self.free;
        self.free = self.nodes[e as usize].next;
        self.nodes[e as usize] = Node {
            ev: [lo, hi],
            at,
            next: NIL,
            bnext: NIL,
            tail: NIL,
        };
        self.len += 1;
        if at == self.last {
            Self::push_back(&mut self.nodes, &mut self.ready, e);
            return;
        }
        let h = Self::recent_index(at);
        // An entry never written names the sentinel, which has no tail.
        let b = self.recent[h];
        let head = self.nodes[b as usize];
        if head.tail != NIL && head.at == at {
            self.nodes[head.tail as usize].next = e;
            self.nodes[b as usize].tail = e;
            return;
        }
        self.recent[h] = e;
        self.nodes[e as usize].tail = e;
        self.link(e);
    }

    /// The slab is full: double it, chain the new nodes into the free list
    /// (lowest index first), then push.
    #[cold]
    #[inline(never)]
    fn grow_and_push(&mut self, at: SimTime, lo: u64, hi: u64) {
        debug_assert_eq!(self.free, NIL);
        // Node 0 is the sentinel; the others hold events.
        let old = self.nodes.len();
        let new = (1 + 2 * (old - 1)).clamp(65, NIL as usize);
        assert!(new > old, "event queue full");
        self.nodes
            .extend((old + 1..=new).map(|i| Node::free(if i < new { i as u32 } else { NIL })));
        self.free = old as u32;
        self.push(at, lo, hi);
    }

    /// Inlined: its frequent path takes `ready`'s head; the refill is out
    /// of line.
    #[inline]
    fn pop(&mut self, until: SimTime) -> Option<(SimTime, [u64; 2])> {
        loop {
            if self.ready.head != NIL {
                if self.last > until {
                    return None;
                }
                let idx = self.ready.head;
                let n = &mut self.nodes[idx as usize];
                // An emptied `ready` keeps a stale tail: its emptiness is
                // read from its head (`push_back`, `link`).
                self.ready.head = n.next;
                let ev = n.ev;
                n.next = self.free;
                self.free = idx;
                self.len -= 1;
                return Some((self.last, ev));
            }
            if !self.refill(until) {
                return None;
            }
        }
    }

    /// Put the bucket headed by node `b` where its time belongs relative to
    /// `last`: at `last`, its events join `ready` and `b` stops heading a
    /// bucket; otherwise it is appended to its slot's list (level: the
    /// highest base-64 digit in which its time differs from `last`).
    #[inline(never)]
    fn link(&mut self, b: u32) {
        let at = self.nodes[b as usize].at.0;
        let diff = at ^ self.last.0;
        if diff == 0 {
            let tail = self.nodes[b as usize].tail;
            // No longer a bucket: a `recent` entry naming it never matches.
            self.nodes[b as usize].tail = NIL;
            if self.ready.head == NIL {
                self.ready.head = b;
            } else {
                self.nodes[self.ready.tail as usize].next = b;
            }
            self.ready.tail = tail;
            return;
        }
        let level = (63 - diff.leading_zeros()) / SLOT_BITS;
        let slot = ((at >> (level * SLOT_BITS)) as usize) & (SLOTS - 1);
        let level = level as usize;
        let list = &mut self.slots[level * SLOTS + slot];
        self.nodes[b as usize].bnext = NIL;
        if list.tail == NIL {
            list.head = b;
        } else {
            self.nodes[list.tail as usize].bnext = b;
        }
        list.tail = b;
        self.occupied[level] |= 1 << slot;
        self.levels |= 1 << level;
    }

    /// Append event node `idx` to `list` (through `next`); the list is
    /// empty when its head is `NIL` (its tail may then be stale).
    #[inline]
    fn push_back(nodes: &mut [Node], list: &mut List, idx: u32) {
        if list.head == NIL {
            list.head = idx;
        } else {
            nodes[list.tail as usize].next = idx;
        }
        list.tail = idx;
    }

    /// With `ready` empty: make the earliest queued time the new `last` and
    /// fill `ready` with its events, if that time is at or before `until`.
    /// Returns false if nothing was due.
    #[inline(never)]
    fn refill(&mut self, until: SimTime) -> bool {
        if self.levels == 0 {
            return false;
        }
        let level = self.levels.trailing_zeros() as usize;
        let slot = self.occupied[level].trailing_zeros() as usize;
        let list = self.slots[level * SLOTS + slot];
        let first = if level == 0 || list.head == list.tail {
            // A level-0 slot holds one time; a single bucket, one time too.
            self.nodes[list.head as usize].at
        } else {
            // The slot's time range: `last`'s digits above `level`, digit
            // `level` = slot, any lower digits.
            let shift = level as u32 * SLOT_BITS;
            let above = shift + SLOT_BITS;
            let high = if above >= 64 {
                0
            } else {
                self.last.0 & !((1u64 << above) - 1)
            };
            let base = high | (slot as u64) << shift;
            let end = base | ((1u64 << shift) - 1);
            if end <= until.0 {
                // Every bucket of the slot is due: relink relative to the
                // slot's start without scanning for its earliest time
                // (`last` may pass `now` here; the pop that follows in this
                // call restores `now >= last`, as no event is before `base`).
                SimTime(base)
            } else {
                let mut m = u64::MAX;
                let mut i = list.head;
                while i != NIL {
                    let b = &self.nodes[i as usize];
                    m = m.min(b.at.0);
                    i = b.bnext;
                }
                SimTime(m)
            }
        };
        if first > until {
            return false;
        }
        self.slots[level * SLOTS + slot] = List::EMPTY;
        self.occupied[level] &= !(1 << slot);
        if self.occupied[level] == 0 {
            self.levels &= !(1 << level);
        }
        self.last = first;
        // Every level below `level` is empty: relinking in list order keeps
        // buckets of one time in the order they were made. Buckets at
        // `first` join `ready` (all of a level-0 slot's, or a single
        // bucket); the next refill finds the earliest of the others.
        let mut i = list.head;
        while i != NIL {
            let next = self.nodes[i as usize].bnext;
            self.link(i);
            i = next;
        }
        true
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
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::RngExt;

    #[test]
    fn same_time_events_run_in_scheduling_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), 'b');
        q.schedule(SimTime(5), 'a');
        q.schedule(SimTime(10), 'c');
        q.schedule(SimTime(10), 'd');
        let order: Vec<char> =
            std::iter::from_fn(|| q.pop_until(SimTime(100)).map(|x| x.1)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), SimTime(10));
    }

    /// One step of a random workload.
    #[derive(Clone, Debug)]
    enum Op {
        /// Schedule at `now + delta`.
        Schedule(u64),
        /// Pop everything due by `now + delta`.
        PopUntil(u64),
        /// Pop at most one event due by `now + delta`.
        PopOne(u64),
        /// Pop everything due by `now + delta`, then advance the clock to it.
        AdvanceTo(u64),
    }

    /// Delays of every scale: the same instant (ties), within one level-0
    /// slot, a few slots, the few-ms timers of the model, and far events up
    /// to the top level of the wheel.
    fn delta() -> impl Strategy<Value = u64> {
        prop_oneof![
            3 => Just(0u64),
            3 => 0u64..64,
            3 => 0u64..5_000,
            3 => 0u64..5_000_000,
            1 => 0u64..(1u64 << 40),
            1 => 0u64..(1u64 << 62),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => delta().prop_map(Op::Schedule),
            1 => delta().prop_map(Op::PopUntil),
            3 => delta().prop_map(Op::PopOne),
            1 => delta().prop_map(Op::AdvanceTo),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// The wheel pops exactly what the binary heap pops, in the same
        /// order (time, then scheduling order), with the same clock and
        /// counters, for any interleaving of schedule / pop_until /
        /// advance_to; draining both at the end compares the rest.
        #[test]
        fn queue_pops_like_the_binary_heap(
            ops in proptest::collection::vec(op(), 1..400),
            // The thresholds: the default; always the wheel; switching
            // back and forth often.
            thresholds in 0..3usize,
        ) {
            match thresholds {
                0 => pops_like_the_heap(WheelQueue::<u32>::new(), &ops)?,
                1 => pops_like_the_heap(WheelQueue::<u32, 0, 0>::new(), &ops)?,
                _ => pops_like_the_heap(WheelQueue::<u32, 6, 2>::new(), &ops)?,
            }
        }
    }

    fn pops_like_the_heap<const W: usize, const H: usize>(
        mut new: WheelQueue<u32, W, H>,
        ops: &[Op],
    ) -> Result<(), TestCaseError> {
        {
            let mut old: EventQueue<u32> = EventQueue::new();
            let mut id = 0u32;
            for op in ops.iter().cloned() {
                let now = old.now().0;
                match op {
                    Op::Schedule(d) => {
                        let at = SimTime(now.saturating_add(d));
                        new.schedule(at, id);
                        old.schedule(at, id);
                        id += 1;
                    }
                    Op::PopUntil(d) => {
                        let until = SimTime(now.saturating_add(d));
                        loop {
                            let (a, b) = (new.pop_until(until), old.pop_until(until));
                            prop_assert_eq!(a, b);
                            if a.is_none() {
                                break;
                            }
                        }
                    }
                    Op::PopOne(d) => {
                        let until = SimTime(now.saturating_add(d));
                        prop_assert_eq!(new.pop_until(until), old.pop_until(until));
                    }
                    Op::AdvanceTo(d) => {
                        // As the callers do (end of run, test rigs): pop
                        // everything due by `t`, then move the clock there.
                        let t = SimTime(now.saturating_add(d));
                        loop {
                            let (a, b) = (new.pop_until(t), old.pop_until(t));
                            prop_assert_eq!(a, b);
                            if a.is_none() {
                                break;
                            }
                        }
                        new.advance_to(t);
                        old.advance_to(t);
                    }
                }
                prop_assert_eq!(new.now(), old.now());
                prop_assert_eq!(new.len(), old.len());
                prop_assert_eq!(new.processed(), old.processed());
            }
            loop {
                let (a, b) = (
                    new.pop_until(SimTime(u64::MAX)),
                    old.pop_until(SimTime(u64::MAX)),
                );
                prop_assert_eq!(a, b);
                if a.is_none() {
                    break;
                }
            }
            prop_assert!(new.is_empty() && old.is_empty());
        }
        Ok(())
    }

    #[test]
    fn ties_across_levels_keep_scheduling_order() {
        // 'a' goes far up the wheel (scheduled at t = 0 for 1_000_000), 'b'
        // is scheduled for the same instant after the clock moved close to
        // it (it lands at a low level); 'a' was scheduled first, so it pops
        // first, as with the heap.
        let mut q = WheelQueue::<_, 0, 0>::new();
        q.schedule(SimTime(1_000_000), 'a');
        q.schedule(SimTime(999_990), 'x');
        assert_eq!(
            q.pop_until(SimTime(u64::MAX)),
            Some((SimTime(999_990), 'x'))
        );
        q.schedule(SimTime(1_000_000), 'b');
        q.schedule(SimTime(999_995), 'y');
        let order: Vec<char> =
            std::iter::from_fn(|| q.pop_until(SimTime(u64::MAX)).map(|x| x.1)).collect();
        assert_eq!(order, vec!['y', 'a', 'b']);
    }

    #[test]
    fn a_bucket_freed_before_the_queue_left_the_wheel_is_not_reused() {
        // Found by the property test: the wheel frees the bucket of a far
        // time `a` as it drains into the short array, its `last` at `a`;
        // back in the wheel, `last` restarts at `now` (before `a`), and a
        // new event at `a` must not join the freed bucket its table entry
        // still names.
        let ops = [
            Op::Schedule(2_972_753_261_165_926_168),
            Op::Schedule(1_019_342_754_212_982_250),
            Op::PopUntil(0),
            Op::Schedule(0),
            Op::Schedule(0),
            Op::Schedule(0),
            Op::Schedule(613_350_256_150_793_621),
            Op::Schedule(0),
            Op::Schedule(0),
            Op::Schedule(0),
            Op::Schedule(0),
            Op::Schedule(0),
            Op::PopUntil(1_019_342_754_212_982_250),
            Op::Schedule(1_953_410_506_952_943_918),
            Op::Schedule(1_953_410_506_952_943_918),
            Op::Schedule(0),
            Op::Schedule(0),
            Op::Schedule(0),
            Op::Schedule(0),
        ];
        pops_like_the_heap(WheelQueue::<u32, 6, 2>::new(), &ops).unwrap();
    }

    #[test]
    fn times_sharing_a_recent_entry_keep_scheduling_order() {
        // Three times whose buckets share one `recent` entry: scheduling
        // them in turn overwrites the entry each time, so a time gets a
        // second and third bucket while its first is still queued. The
        // events must still pop by (time, scheduling order), as the
        // reference heap's do, with the clock moving between schedules.
        let base = 1_000_000u64;
        let h = Wheel::recent_index(SimTime(base));
        let same: Vec<u64> = (base..)
            .filter(|&t| Wheel::recent_index(SimTime(t)) == h)
            .take(3)
            .collect();
        let mut q = WheelQueue::<u32, 0, 0>::new();
        let mut reference = EventQueue::new();
        let mut id = 0u32;
        for round in 0..4u64 {
            for &t in same.iter().rev() {
                for _ in 0..2 {
                    q.schedule(SimTime(t), id);
                    reference.schedule(SimTime(t), id);
                    id += 1;
                }
            }
            // An early event pops between rounds, moving `last` forward.
            let early = SimTime(round * 10 + 1);
            q.schedule(early, id);
            reference.schedule(early, id);
            id += 1;
            assert_eq!(q.pop_until(early), reference.pop_until(early));
        }
        let heads = q.wheel.nodes.iter().filter(|n| n.tail != NIL).count();
        assert!(heads > same.len(), "entries were overwritten");
        loop {
            let (a, b) = (
                q.pop_until(SimTime(u64::MAX)),
                reference.pop_until(SimTime(u64::MAX)),
            );
            assert_eq!(a, b);
            if a.is_none() {
                break;
            }
        }
    }

    #[test]
    fn slab_stays_within_twice_the_peak_queue_length() {
        // Memory bound: popped nodes are reused and the slab grows only when
        // none is free, by doubling from 64 event nodes, so a steady
        // workload of n re-armed timers keeps the smallest 64 * 2^k >= n
        // event nodes (plus the sentinel), however long it runs.
        for (n, slab) in [(64u64, 65), (65, 129), (100, 129), (300, 513)] {
            let mut q = WheelQueue::<_, 0, 0>::new();
            for h in 0..n {
                q.schedule(SimTime(1 + h * 997), h);
            }
            for _ in 0..100_000 {
                let (t, h) = q.pop_until(SimTime(u64::MAX)).unwrap();
                q.schedule(t + Nanos(1 + (h * 7919 + t.0) % 2_000_000), h);
            }
            assert_eq!(q.len(), n as usize);
            assert!(q.in_wheel);
            assert_eq!(q.wheel.nodes.len(), slab, "{n} timers");
        }
    }

    #[test]
    fn pop_until_respects_horizon() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(50), 1);
        assert!(q.pop_until(SimTime(49)).is_none());
        assert_eq!(q.pop_until(SimTime(50)), Some((SimTime(50), 1)));
    }

    #[test]
    fn timer_generations_cancel_lazily() {
        let mut t = Timer::default();
        let g1 = t.arm(SimTime(10));
        let g2 = t.arm(SimTime(20)); // re-arm: g1 stale
        assert!(!t.fire(g1));
        assert!(t.fire(g2));
        assert!(!t.fire(g2), "fires once");
        let g3 = t.arm(SimTime(30));
        t.cancel();
        assert!(!t.fire(g3));
    }

    #[test]
    fn rng_streams_are_independent_and_reproducible() {
        let a1: u64 = rng_stream(7, "gen").random();
        let a2: u64 = rng_stream(7, "gen").random();
        let b: u64 = rng_stream(7, "other").random();
        let c: u64 = rng_stream(8, "gen").random();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }
}
