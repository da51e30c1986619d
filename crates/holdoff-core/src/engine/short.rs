//! The short mode of `WheelQueue`: its events in one array sorted latest
//! first (see the `engine` module doc).
//!
//! Units: times [ns] (`SimTime`).

use crate::units::SimTime;

/// `WheelQueue`'s short mode: the queued events in one array sorted
/// latest first, so that the next event is the last element and pops in
/// O(1). A new event is inserted after every event due later (an insertion
/// sort step from the end: it scans and shifts only the events due at or
/// before it, which for the simulator's short timers is one or two).
/// An event is inserted before the queued events of its own time, so those,
/// scheduled earlier, pop first: `(time, scheduling order)` without a
/// sequence number. Entries are 24 bytes (time and the packed event),
/// moved as whole words.
pub(super) struct ShortQueue {
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
    pub(super) fn with_capacity(n: usize) -> Self {
        ShortQueue {
            v: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub(super) fn len(&self) -> usize {
        self.v.len()
    }

    #[inline]
    // The event's words come as two arguments (in registers): an array
    // argument is passed through memory and read back as one 16-byte load,
    // which stalls on the two 8-byte stores that wrote it.
    /// Returns how many queued events the new one passed (those due at or
    /// before it).
    pub(super) fn push(&mut self, at: SimTime, lo: u64, hi: u64) -> usize {
        let e = Entry { at, ev: [lo, hi] };
        let n = self.v.len();
        let mut i = n;
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
        n - i
    }

    /// The earliest entry, if it is due at or before `until`.
    #[inline]
    pub(super) fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, [u64; 2])> {
        match self.v.last() {
            Some(e) if e.at <= until => {
                let e = self.v.pop().expect("not empty");
                Some((e.at, e.ev))
            }
            _ => None,
        }
    }

    /// The earliest entry, without taking it.
    #[inline(always)]
    pub(super) fn peek(&self) -> Option<(SimTime, [u64; 2])> {
        self.v.last().map(|e| (e.at, e.ev))
    }

    /// Every entry, earliest first; the queue is left empty.
    pub(super) fn take_sorted(&mut self) -> Vec<(SimTime, [u64; 2])> {
        let all = self.v.iter().rev().map(|e| (e.at, e.ev)).collect();
        self.v.clear();
        all
    }

    /// Fill the (empty) queue from entries in pop order.
    pub(super) fn fill_sorted(&mut self, sorted: impl Iterator<Item = (SimTime, [u64; 2])>) {
        debug_assert!(self.v.is_empty());
        self.v.extend(sorted.map(|(at, ev)| Entry { at, ev }));
        self.v.reverse();
    }
}
