//! Wire: one direction of a full-duplex Ethernet link.
//!
//! Models: a frame occupies the line for `max(len, 64) + 8 + 12` bytes
//! (preamble+SFD, inter-frame gap) at the link rate, then propagates for a
//! fixed delay. Frames are serialised back to back in order. Rates from
//! 10 Mbit/s to 100 Gbit/s; serialisation times that are not whole
//! nanoseconds are carried exactly by a remainder (Bresenham), so the
//! long-run rate is exact.
//!
//! Frames on the line are kept by the link itself, oldest first: they
//! arrive in the order they were sent (serialised back to back, one fixed
//! propagation delay), so the arrival event needs no copy of the frame.
//!
//! Simplifies: the receiver sees a frame when its last wire byte (including
//! the IFG) has arrived; no bit errors, no PAUSE frames, no collisions.
//!
//! Units: rate [bit/s], times [ns]. Source: IEEE 802.3 framing (§4.4.2:
//! preamble + SFD 8 bytes, inter-frame gap 96 bit times, minimum frame 64
//! bytes).

use crate::packet::Packet;
use crate::units::{wire_bytes, BitsPerSec, Nanos, SimTime};
use std::collections::VecDeque;

/// Transmit direction of a link.
#[derive(Clone, Debug)]
pub struct LinkDir {
    pub rate: BitsPerSec,
    pub propagation: Nanos,
    free_at: SimTime,
    /// Remainder of `bits * 1e9 / rate` carried between back-to-back frames.
    rem: u64,
    /// Frames on the wire (sent, not yet arrived), oldest first.
    frames: VecDeque<Packet>,
    /// (rate [bit/s], ns per wire byte) when 8e9 / rate is a whole number
    /// (1 Gb/s: 8 ns, 100 Mb/s: 80 ns): serialisation is then a multiply and
    /// no remainder arises. (0, 0) otherwise. Kept with the rate it was
    /// computed for, so that a changed `rate` falls back to the division.
    whole_ns_per_byte: (u64, u64),
}

/// When a frame occupies the line and when it reaches the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    pub start: SimTime,
    /// Last wire byte (incl. IFG) leaves the sender.
    pub end: SimTime,
    /// Last wire byte arrives at the receiver.
    pub arrive: SimTime,
}

impl LinkDir {
    pub fn new(rate: BitsPerSec, propagation: Nanos) -> Self {
        LinkDir {
            rate,
            propagation,
            free_at: SimTime::ZERO,
            rem: 0,
            frames: VecDeque::new(),
            whole_ns_per_byte: if rate.0 > 0 && 8_000_000_000 % rate.0 == 0 {
                (rate.0, 8_000_000_000 / rate.0)
            } else {
                (0, 0)
            },
        }
    }

    /// Earliest time the line is free.
    #[inline]
    pub fn free_at(&self) -> SimTime {
        self.free_at
    }

    /// Serialisation time of one frame if sent now from an idle line [ns].
    pub fn serialisation(&self, frame_bytes: u32) -> Nanos {
        Nanos(wire_bytes(frame_bytes) as u64 * 8 * 1_000_000_000 / self.rate.0)
    }

    /// Frames on the wire (sent, not yet arrived), for the ledger.
    #[inline]
    pub fn in_flight(&self) -> u64 {
        self.frames.len() as u64
    }

    /// Put a frame on the line no earlier than `ready`; it is kept until
    /// `arrived` takes it.
    #[inline]
    pub fn send(&mut self, ready: SimTime, pkt: Packet) -> Departure {
        let frame_bytes = pkt.frame_bytes;
        let start = if ready > self.free_at {
            self.rem = 0; // line was idle: no fractional carry
            ready
        } else {
            self.free_at
        };
        let ns = if self.rem == 0 && self.whole_ns_per_byte.0 == self.rate.0 {
            // The division below, exactly: `total` is a multiple of the rate.
            wire_bytes(frame_bytes) as u64 * self.whole_ns_per_byte.1
        } else {
            let total = wire_bytes(frame_bytes) as u64 * 8_000_000_000 + self.rem;
            self.rem = total % self.rate.0;
            total / self.rate.0
        };
        let end = start + Nanos(ns);
        self.free_at = end;
        self.frames.push_back(pkt);
        Departure {
            start,
            end,
            arrive: end + self.propagation,
        }
    }

    /// The oldest frame on the wire reached the far end: it leaves the link.
    #[inline]
    pub fn arrived(&mut self) -> Packet {
        self.frames
            .pop_front()
            .expect("an arrival has its frame on the wire")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(bytes: u32) -> Packet {
        Packet {
            frame_bytes: bytes,
            ..Packet::EMPTY
        }
    }

    #[test]
    fn gigabit_min_frames_take_672ns() {
        let mut l = LinkDir::new(BitsPerSec::GIGABIT, Nanos(500));
        let d = l.send(SimTime(0), frame(64));
        assert_eq!(d.end, SimTime(672));
        assert_eq!(d.arrive, SimTime(1172));
        let d2 = l.send(SimTime(0), frame(64)); // queued behind the first
        assert_eq!(d2.start, SimTime(672));
    }

    #[test]
    fn ten_gigabit_carries_fractions_exactly() {
        // 84 B at 10 Gb/s = 67.2 ns; 1000 back-to-back frames = 67 200 ns exactly.
        let mut l = LinkDir::new(BitsPerSec(10_000_000_000), Nanos(0));
        let mut last = SimTime::ZERO;
        for _ in 0..1000 {
            last = l.send(SimTime(0), frame(64)).end;
        }
        assert_eq!(last, SimTime(67_200));
    }

    #[test]
    fn whole_nanosecond_rates_match_the_division() {
        // 100 Mb/s (80 ns a byte) takes the multiply; 3 Gb/s (8/3 ns a byte)
        // divides and carries. Each frame's end is the exact running sum
        // of its wire bytes * 8e9 / rate, rounded down.
        for rate in [100_000_000u64, 1_000_000_000, 3_000_000_000] {
            let mut l = LinkDir::new(BitsPerSec(rate), Nanos(0));
            let mut bits_ns = 0u64;
            for i in 0..200u32 {
                let bytes = 64 + (i * 37) % 1455;
                bits_ns += wire_bytes(bytes) as u64 * 8_000_000_000;
                let d = l.send(SimTime(0), frame(bytes));
                assert_eq!(d.end, SimTime(bits_ns / rate), "rate {rate} frame {i}");
            }
        }
    }

    #[test]
    fn max_frame_rate_matches_802_3() {
        // 1518-B frames at 1 Gb/s: 12.304 us each -> 81 274 frames/s.
        let l = LinkDir::new(BitsPerSec::GIGABIT, Nanos(0));
        assert_eq!(l.serialisation(1518), Nanos(12_304));
        // 10 Mb/s: 84 B -> 67.2 us.
        let s = LinkDir::new(BitsPerSec(10_000_000), Nanos(0));
        assert_eq!(s.serialisation(64), Nanos(67_200));
    }
}
