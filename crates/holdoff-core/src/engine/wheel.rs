//! The hierarchical timing wheel of `WheelQueue` (its long mode): a radix
//! queue in base 64 over event times, with buckets per time and a slab of
//! nodes linked by 32-bit indices. The design and its invariants are in the
//! `engine` module doc.
//!
//! Units: times [ns] (`SimTime`).

use crate::units::SimTime;

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

/// The hierarchical timing wheel (see the module doc). Every queued time is
/// at or after `last`; callers push no time before `last`.
pub(super) struct Wheel {
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
    pub(super) last: SimTime,
    pub(super) len: usize,
    /// The bucket last made for a time, by a hash of the time: an event for
    /// a time that has a bucket joins it (`push`).
    recent: Box<[u32; RECENT]>,
}

impl Wheel {
    pub(super) fn new() -> Self {
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
    pub(super) fn recent_index(at: SimTime) -> usize {
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
    pub(super) fn push(&mut self, at: SimTime, lo: u64, hi: u64) {
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
    pub(super) fn grow_and_push(&mut self, at: SimTime, lo: u64, hi: u64) {
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
    pub(super) fn pop(&mut self, until: SimTime) -> Option<(SimTime, [u64; 2])> {
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
    pub(super) fn link(&mut self, b: u32) {
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
    pub(super) fn refill(&mut self, until: SimTime) -> bool {
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

#[cfg(test)]
impl Wheel {
    /// Nodes heading a bucket (a test's view of the slab).
    pub(super) fn bucket_heads(&self) -> usize {
        self.nodes.iter().filter(|n| n.tail != NIL).count()
    }
    /// Nodes in the slab, free or not.
    pub(super) fn slab_len(&self) -> usize {
        self.nodes.len()
    }
}
