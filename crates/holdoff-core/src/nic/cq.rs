//! Completion-queue (CQ) event moderation: the NICs that moderate each
//! completion queue with a period and a completion count instead of an
//! interrupt throttle register (NVIDIA ConnectX-5/6 under Linux mlx5, AWS
//! ENA).
//!
//! Models (Linux `drivers/net/ethernet/mellanox/mlx5/core`: commits
//! 9908aa292971 "mlx5e: Support CQE based moderation" and 0088cbbc4b66 /
//! 48bfc39791b8 on the TX CQ, `mlx5_core_modify_cq_moderation(dev, cq,
//! cq_period, cq_max_count)`; the NVIDIA MLNX_OFED "Ethtool" page on the
//! usec fields):
//! - each RX and TX completion queue has a period (`cq_period` [us]) and a
//!   count (`cq_max_count` [completions]; 0: no count). A completion
//!   event (the queue's cause on its vector) is generated when the count
//!   is reached, or when the period has run;
//! - EQE-based period mode (`MLX5_CQ_PERIOD_MODE_START_FROM_EQE`): the
//!   period restarts when an event is generated. A completion arriving
//!   when the period since the last event has run raises the event at
//!   once; one inside the period waits for its end;
//! - CQE-based mode (`START_FROM_CQE`): "the moderation timer will restart
//!   upon new completion (CQE) generation rather than upon interrupt
//!   generation ... for bursty traffic the period timer will never expire
//!   and thus only the moderation frames counter will dictate interrupt
//!   generation. If the burst ceases for 'moderation period' time then an
//!   interrupt will be issued" (9908aa292971);
//! - period 0: an event per completion.
//!
//! AWS ENA's device delays a queue's interrupt by the interval the driver
//! writes with each unmask (`ena_com_update_intr_reg`, in units of the
//! device's `intr_delay_resolution`); it has no completion count. The model
//! treats it as an EQE-mode CQ with count 0 (ASSUMPTION: the interval runs
//! from the queue's previous interrupt rather than from the unmask; both
//! give the same ceiling of one interrupt per interval at saturation).
//!
//! Simplifies: the moderation runs whether or not the driver has armed the
//! CQ; its event sets the queue's cause on the vector, and a masked vector
//! (NAPI running) delivers it at the unmask, as for the Intel parts.
//!
//! Units: periods [us] as the driver programs them, times [ns].

use super::chip::ThrottleKind;
use super::timers::DelayOutcome;
use super::{NicEvent, NicOut, NicPort, ICR_RXT0, ICR_TXDW};
use crate::engine::Timer;
use crate::moderation::{CqSetting, ModerationParams};
use crate::units::{Nanos, SimTime};

impl NicPort {
    /// The port moderates per completion queue (`ThrottleKind::Cq`).
    #[inline]
    pub(super) fn cq_moderated(&self) -> bool {
        matches!(self.chip.throttle, ThrottleKind::Cq(_))
    }

    /// A completion on RX (or TX) queue `queue` at `now`: its CQ decides
    /// when the queue's cause (RXT0 / TXDW) is raised on its vector.
    pub(super) fn cq_completion(&mut self, now: SimTime, queue: u16, tx: bool, out: &mut NicOut) {
        let q = queue as usize;
        let outcome = if tx {
            let t = &mut self.txq[q];
            t.cq.on_completion(now, &t.cq_set)
        } else {
            let r = &mut self.rxq[q];
            r.cq.on_completion(now, &r.cq_set)
        };
        match outcome {
            DelayOutcome::Immediate => self.cq_raise(now, queue, tx, out),
            DelayOutcome::Arm { at, gen } => out.push_event(
                at,
                if tx {
                    NicEvent::TxDelay { queue, gen }
                } else {
                    NicEvent::RxDelay { queue, gen }
                },
            ),
            DelayOutcome::Unchanged => {}
        }
    }

    /// A CQ's period check fired (the RX/TX delay event of a CQ chip).
    pub(super) fn cq_expired(
        &mut self,
        now: SimTime,
        queue: u16,
        tx: bool,
        gen: u32,
        out: &mut NicOut,
    ) {
        let q = queue as usize;
        let fire = if tx {
            self.txq[q].cq.on_expiry(now, gen)
        } else {
            self.rxq[q].cq.on_expiry(now, gen)
        };
        if fire {
            self.cq_raise(now, queue, tx, out);
        }
    }

    fn cq_raise(&mut self, now: SimTime, queue: u16, tx: bool, out: &mut NicOut) {
        let v = self.vector_of_queue(queue);
        self.raise(now, v, if tx { ICR_TXDW } else { ICR_RXT0 }, out);
    }

    /// The driver writes CQ moderation (mlx5 `mlx5_core_modify_cq_moderation`,
    /// ENA's interval with the unmask) for the queues of `vector`, or of
    /// every vector. The count is dropped on a chip without one; a period
    /// beyond the chip's largest is clamped (the drivers refuse it first).
    pub(super) fn write_cq(&mut self, p: &ModerationParams, vector: Option<u16>) {
        let ThrottleKind::Cq(caps) = self.chip.throttle else {
            return;
        };
        let fit = |m: CqSetting| CqSetting {
            usec: m.usec.min(caps.max_period_us),
            pkts: if caps.frames {
                m.pkts.min(caps.max_count)
            } else {
                0
            },
            cqe_mode: m.cqe_mode && caps.cqe_mode,
        };
        let queues = match vector {
            Some(v) => self.queues_of_vector(v),
            None => 0..self.rxq.len() as u16,
        };
        for q in queues {
            if let Some(m) = p.cq_rx {
                self.rxq[q as usize].cq_set = fit(m);
            }
            if let Some(m) = p.cq_tx {
                self.txq[q as usize].cq_set = fit(m);
            }
        }
    }
}

/// The moderation state of one completion queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct CqTimer {
    /// Completions since the last event.
    count: u32,
    /// When the last event was generated.
    last_event: Option<SimTime>,
    timer: Timer,
}

impl CqTimer {
    /// A completion at `now` under setting `m`.
    pub fn on_completion(&mut self, now: SimTime, m: &CqSetting) -> DelayOutcome {
        if m.usec == 0 {
            self.fire(now);
            return DelayOutcome::Immediate;
        }
        self.count += 1;
        if m.pkts > 0 && self.count >= m.pkts {
            self.fire(now);
            return DelayOutcome::Immediate;
        }
        let period = Nanos(m.usec as u64 * 1000);
        let at = if m.cqe_mode {
            now + period
        } else {
            match self.last_event {
                Some(t) if t + period > now => t + period,
                _ => {
                    self.fire(now);
                    return DelayOutcome::Immediate;
                }
            }
        };
        if self.timer.deadline() == Some(at) {
            DelayOutcome::Unchanged
        } else {
            DelayOutcome::Arm {
                at,
                gen: self.timer.arm(at),
            }
        }
    }

    /// A scheduled check fired at `now`: true if the event is generated.
    pub fn on_expiry(&mut self, now: SimTime, gen: u32) -> bool {
        if !self.timer.fire(gen) || self.count == 0 {
            return false;
        }
        self.fire(now);
        true
    }

    fn fire(&mut self, now: SimTime) {
        self.count = 0;
        self.last_event = Some(now);
        self.timer.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Completions at `evs` [us] under `m`; returns the event times [us]
    /// (checks fire at their deadlines).
    fn events(evs: &[u64], m: CqSetting, horizon_us: u64) -> Vec<u64> {
        let mut q = CqTimer::default();
        let mut pending: Option<(u64, u32)> = None;
        let mut out = vec![];
        for t in 0..=horizon_us * 1000 {
            if let Some((at, gen)) = pending {
                if at == t {
                    pending = None;
                    if q.on_expiry(SimTime(t), gen) {
                        out.push(t / 1000);
                    }
                }
            }
            for _ in evs.iter().filter(|&&e| e * 1000 == t) {
                match q.on_completion(SimTime(t), &m) {
                    DelayOutcome::Immediate => out.push(t / 1000),
                    DelayOutcome::Arm { at, gen } => pending = Some((at.0, gen)),
                    DelayOutcome::Unchanged => {}
                }
            }
        }
        out
    }

    const fn set(usec: u32, pkts: u32, cqe_mode: bool) -> CqSetting {
        CqSetting {
            usec,
            pkts,
            cqe_mode,
        }
    }

    #[test]
    fn table_of_period_modes() {
        // (case, completions [us], setting, expected events [us])
        type Case<'a> = (&'a str, &'a [u64], CqSetting, &'a [u64]);
        let cases: &[Case] = &[
            // Period 0: an event per completion.
            ("period_0", &[1, 2, 3], set(0, 32, false), &[1, 2, 3]),
            // EQE mode, first completion after a long quiet time: at once
            // (the period since the last event has run); the next ones
            // inside the 16 us window wait for its end (1 + 16 = 17).
            ("eqe_first_at_once", &[1, 5, 9], set(16, 0, false), &[1, 17]),
            // EQE mode at a steady 1 per us to 40 us: one event per period
            // (the last one at 49 us for the completions of 34..40 us).
            (
                "eqe_saturation",
                &(1..=40).collect::<Vec<_>>(),
                set(16, 0, false),
                &[1, 17, 33, 49],
            ),
            // CQE mode: the period restarts at each completion; the event
            // comes 3 us after the last of a burst.
            ("cqe_after_burst", &[1, 2, 3, 4], set(3, 0, true), &[7]),
            // CQE mode with a count: a continuous burst is cut by the count
            // only (4 completions per event).
            (
                "cqe_count_cuts_burst",
                &(1..=10).collect::<Vec<_>>(),
                set(3, 4, true),
                &[4, 8, 13],
            ),
            // EQE mode with a count of 2: 0 us at once (quiet before); 1 and
            // 2 us reach the count inside the window (event at 2 us, before
            // its end at 16 us); 3 us waits for the window from 2 us (18 us).
            ("eqe_count", &[0, 1, 2, 3], set(16, 2, false), &[0, 2, 18]),
        ];
        for (name, evs, m, want) in cases {
            assert_eq!(&events(evs, *m, 60)[..], *want, "case {name}");
        }
    }

    #[test]
    fn a_static_period_caps_the_event_rate() {
        // ENA with rx-usecs 256 at a completion every 100 ns: events 256 us
        // apart, i.e. at most 1e6 / 256 = 3906.25 per second.
        let mut q = CqTimer::default();
        let m = set(256, 0, false);
        let mut pending: Option<(u64, u32)> = None;
        let mut last: Option<u64> = None;
        let mut n = 0;
        for t in (0..10_000_000u64).step_by(100) {
            if let Some((at, gen)) = pending {
                if at <= t && q.on_expiry(SimTime(at), gen) {
                    pending = None;
                    if let Some(l) = last {
                        assert!(at - l >= 256_000, "{l} -> {at}");
                    }
                    last = Some(at);
                    n += 1;
                }
            }
            match q.on_completion(SimTime(t), &m) {
                DelayOutcome::Immediate => {
                    last = Some(t);
                    n += 1
                }
                DelayOutcome::Arm { at, gen } => pending = Some((at.0, gen)),
                DelayOutcome::Unchanged => {}
            }
        }
        // 10 ms: events at 0, 256, ..., 9984 us: 40.
        assert_eq!(n, 40);
    }
}
