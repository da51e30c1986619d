//! The e1000 delay-timer pair: a packet timer (RDTR / TIDV) restarted by
//! every event and an absolute timer (RADV / TADV) started by the first event
//! and not restarted. Either expiry raises the cause and halts both.
//!
//! Models (8254x SDM §3.2.7.1, §13.4.30-44; 82583V datasheet §9.2.6.12):
//! - packet delay 0 (RDTR = 0, or a TX descriptor without IDE, or TIDV = 0)
//!   means "raise the cause now" and halts both timers (an immediate
//!   interrupt cancels a pending delayed one);
//! - absolute delay 0 disables the absolute timer;
//! - expiry of either timer raises the cause once and halts the other
//!   ("reloaded but halted": no spurious second interrupt).
//!
//! Simplifies: descriptor write-back is not delayed (the host sees a
//! descriptor as soon as its DMA completes); only the cause bit waits.
//!
//! Units: delays are durations [ns]; the register conversion (1.024 us
//! ticks) happens in the caller.

use crate::engine::Timer;
use crate::units::{Nanos, SimTime};

/// State of one packet-timer / absolute-timer pair.
#[derive(Clone, Copy, Debug, Default)]
pub struct DelayPair {
    pkt_deadline: Option<SimTime>,
    abs_deadline: Option<SimTime>,
    timer: Timer,
}

/// What the caller must do after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelayOutcome {
    /// Raise the cause now.
    Immediate,
    /// Schedule a check at `at` carrying `gen` (any earlier check is stale).
    Arm { at: SimTime, gen: u32 },
    /// The earliest deadline did not move; the queued check stays valid.
    Unchanged,
}

impl DelayPair {
    /// A packet/descriptor event at `now` with the current register values.
    pub fn on_event(&mut self, now: SimTime, pkt_delay: Nanos, abs_delay: Nanos) -> DelayOutcome {
        if pkt_delay.is_zero() {
            self.halt();
            return DelayOutcome::Immediate;
        }
        self.pkt_deadline = Some(now + pkt_delay);
        if !abs_delay.is_zero() && self.abs_deadline.is_none() {
            self.abs_deadline = Some(now + abs_delay);
        }
        let next = self.next_deadline().expect("packet deadline set");
        if self.timer.deadline() == Some(next) {
            DelayOutcome::Unchanged
        } else {
            DelayOutcome::Arm {
                at: next,
                gen: self.timer.arm(next),
            }
        }
    }

    /// A scheduled check fired. Returns true if the cause must be raised now.
    pub fn on_expiry(&mut self, gen: u32) -> bool {
        if !self.timer.fire(gen) {
            return false;
        }
        self.pkt_deadline = None;
        self.abs_deadline = None;
        true
    }

    /// Halt both timers (immediate interrupt, or expiry of the other).
    pub fn halt(&mut self) {
        self.pkt_deadline = None;
        self.abs_deadline = None;
        self.timer.cancel();
    }

    /// The earlier of the two deadlines.
    pub fn next_deadline(&self) -> Option<SimTime> {
        match (self.pkt_deadline, self.abs_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn is_running(&self) -> bool {
        self.next_deadline().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: u64 = 1024;

    /// Drive a pair through packet events at the given times and return the
    /// times at which the cause is raised (checks fire at their deadlines).
    fn raises(events_ns: &[u64], pkt_ticks: u64, abs_ticks: u64, horizon: u64) -> Vec<u64> {
        let mut p = DelayPair::default();
        let mut pending: Option<(u64, u32)> = None;
        let mut out = Vec::new();
        let mut evs = events_ns.iter().peekable();
        let mut t = 0u64;
        while t <= horizon {
            if let Some((at, gen)) = pending {
                if at == t {
                    pending = None;
                    if p.on_expiry(gen) {
                        out.push(t);
                    }
                }
            }
            while evs.peek() == Some(&&t) {
                evs.next();
                match p.on_event(SimTime(t), Nanos(pkt_ticks * TICK), Nanos(abs_ticks * TICK)) {
                    DelayOutcome::Immediate => out.push(t),
                    DelayOutcome::Arm { at, gen } => pending = Some((at.0, gen)),
                    DelayOutcome::Unchanged => {}
                }
            }
            t += 1;
        }
        out
    }

    #[test]
    fn table_of_timer_rules() {
        // (case, packet times [ns], RDTR/TIDV ticks, RADV/TADV ticks, expected raise times [ns])
        type Case<'a> = (&'a str, &'a [u64], u64, u64, &'a [u64]);
        let cases: &[Case] = &[
            // RDTR = 0: every packet raises at once, RADV inert (SDM §13.4.30).
            ("rdtr0_immediate", &[100, 200, 300], 0, 8, &[100, 200, 300]),
            // Packet timer alone: restarted by each packet; fires 1 interval after the last.
            (
                "pkt_timer_restarts",
                &[0, 1000, 2000],
                2,
                0,
                &[2000 + 2 * TICK],
            ),
            // Gap longer than the interval: two separate expiries.
            (
                "pkt_timer_gap",
                &[0, 5000],
                2,
                0,
                &[2 * TICK, 5000 + 2 * TICK],
            ),
            // Absolute timer caps the delay from the first packet: 4 ticks after t=0
            // although packets keep restarting the packet timer (SDM §3.2.7.1.2).
            (
                "abs_caps_delay",
                &[0, 1000, 2000, 3000, 4000],
                2,
                4,
                &[4 * TICK],
            ),
            // After the absolute expiry the packet timer is halted: no second raise
            // unless a new packet arrives.
            (
                "no_spurious_second",
                &[0, 1000, 2000, 3000],
                2,
                3,
                &[3 * TICK],
            ),
            // A new packet after an expiry starts both timers again.
            (
                "restart_after_expiry",
                &[0, 10_000],
                2,
                3,
                &[2 * TICK, 10_000 + 2 * TICK],
            ),
        ];
        for (name, evs, pkt, abs, want) in cases {
            let got = raises(evs, *pkt, *abs, 40_000);
            assert_eq!(&got[..], *want, "case {name}");
        }
    }

    #[test]
    fn immediate_event_halts_running_timers() {
        // A TX descriptor without IDE (delay 0) cancels a pending TIDV/TADV
        // interrupt (SDM §13.4.41, 82583V §9.2.6.12).
        let mut p = DelayPair::default();
        let DelayOutcome::Arm { gen, .. } = p.on_event(SimTime(0), Nanos(5000), Nanos(9000)) else {
            panic!("expected arm");
        };
        assert_eq!(
            p.on_event(SimTime(100), Nanos(0), Nanos(9000)),
            DelayOutcome::Immediate
        );
        assert!(!p.is_running());
        assert!(!p.on_expiry(gen), "the old check is stale");
    }
}
