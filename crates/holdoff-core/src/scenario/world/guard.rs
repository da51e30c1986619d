//! The run guard: limits that stop a run whose event traffic no configured
//! link or timer can explain, before it spins for hours or exhausts memory.
//!
//! Three limits, each a documented model limit derived from the scenario's
//! size (not a tuning knob):
//! 1. **Same instant**: more than [`MAX_EVENTS_SAME_INSTANT`] events at one
//!    simulated instant (time does not advance: a zero-delay loop).
//! 2. **Event rate**: more events per simulated second than the links and
//!    timers can produce, times a generous margin: every link direction
//!    carries at most `rate / 672 bit` frames per second (a 64-byte frame
//!    plus preamble and inter-frame gap, IEEE 802.3 clause 4.4.2), each
//!    frame causes at most [`EVENTS_PER_SOURCE_BOUND`] events, and so does
//!    every timer tick (polling clock, watchdogs, samples); plus a floor of
//!    [`EVENT_RATE_FLOOR_PER_S`] for application timers. Measured over
//!    windows of at least [`RATE_WINDOW_MIN`] of simulated time.
//! 3. **Queue memory**: more pending events than the scenario can hold:
//!    [`EVENTS_PER_SOURCE_BOUND`] per ring slot, qdisc slot and frame in
//!    flight on a wire, plus [`QUEUE_FLOOR`] (lazily cancelled timers leave
//!    stale entries behind until they expire).
//!
//! A tripped limit becomes `Error::Run` naming the limit, the simulated
//! time and the scenario field most likely responsible: the one that feeds
//! the event kind most frequent in the offending window.
//!
//! Units: times [ns], rates [events per simulated second].

use super::{Ev, Progress, RunStats, World};
use crate::error::Error;
use crate::units::{Nanos, SimTime};
use std::time::{Duration, Instant};

/// Limit 1: events at one simulated instant.
pub const MAX_EVENTS_SAME_INSTANT: u64 = 10_000_000;
/// Events one frame or one timer tick may cause (generous: a frame costs
/// about 5 to 10: wire arrival, DMA completion, delay timers, the CPU
/// segment, a wake-up and a TCP timer).
pub const EVENTS_PER_SOURCE_BOUND: f64 = 64.0;
/// Limit 2: a floor on the allowed event rate [events per simulated second].
pub const EVENT_RATE_FLOOR_PER_S: f64 = 10_000_000.0;
/// Limit 2 is measured over at least this much simulated time.
pub const RATE_WINDOW_MIN: Nanos = Nanos(1_000_000);
/// A rate window closes after this much simulated time.
const RATE_WINDOW_MAX: Nanos = Nanos(10_000_000);
/// Limit 3: a floor on the allowed number of pending events.
pub const QUEUE_FLOOR: usize = 4_000_000;
/// Frame on the wire at minimum size: 64 bytes + preamble/SFD 8 + IFG 12 [bit].
const MIN_FRAME_WIRE_BITS: f64 = 84.0 * 8.0;
/// One event in this many is sampled for attribution and the queue peak.
const SAMPLE_EVERY: u64 = 64;
/// Event kinds tracked for attribution (the variants of `Ev`).
const KINDS: usize = 13;

/// The limits of one world (derived from its scenario at build time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    pub max_same_instant: u64,
    pub max_events_per_sim_s: f64,
    pub max_queued_events: usize,
}

/// Which limit was hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    SameInstant,
    EventRate,
    QueueMemory,
}

/// The guard's running state.
pub(super) struct Guard {
    pub(super) limits: Limits,
    instant: SimTime,
    instant_events: u64,
    window_start: SimTime,
    window_events: u64,
    /// Per event kind: events in the window, and the last entity seen.
    kind_events: [u64; KINDS],
    kind_last: [Ev; KINDS],
    peak_queue: usize,
}

impl Guard {
    pub(super) fn new(limits: Limits) -> Self {
        Guard {
            limits,
            instant: SimTime::ZERO,
            instant_events: 0,
            window_start: SimTime::ZERO,
            window_events: 0,
            kind_events: [0; KINDS],
            kind_last: [Ev::Sample; KINDS],
            peak_queue: 0,
        }
    }

    /// The largest event queue seen [events] (sampled: see `count`).
    pub(super) fn peak_queue(&self) -> usize {
        self.peak_queue
    }

    /// Count one event (every event, so it stays a few instructions), with
    /// the number of events still queued. Returns the limit it breaks.
    /// Event kinds, their entities and the queue peak are sampled, one event
    /// in [`SAMPLE_EVERY`]: attribution needs a likely field, not a census.
    #[inline(always)]
    pub(super) fn count(&mut self, now: SimTime, ev: [u64; 2], queued: usize) -> Option<Limit> {
        self.window_events += 1;
        if self.window_events.is_multiple_of(SAMPLE_EVERY) {
            self.sample(ev, queued);
        }
        if now == self.instant {
            self.instant_events += 1;
            if self.instant_events > self.limits.max_same_instant {
                return Some(Limit::SameInstant);
            }
        } else {
            self.instant = now;
            self.instant_events = 1;
        }
        None
    }

    #[inline(never)]
    fn sample(&mut self, ev: [u64; 2], queued: usize) {
        use crate::engine::QueueEvent;
        let ev = Ev::unpack(ev);
        self.peak_queue = self.peak_queue.max(queued + 1);
        let k = kind(&ev);
        self.kind_events[k] += 1;
        self.kind_last[k] = ev;
    }

    /// Count `n` events handled outside the queue (frame trains,
    /// `scenario::world::trains`) toward the event-rate limit.
    #[inline]
    pub(super) fn add_events(&mut self, n: u64) {
        self.window_events += n;
    }

    /// The periodic check (every few thousand events): rate and queue.
    pub(super) fn check(&mut self, now: SimTime, queued: usize) -> Option<Limit> {
        if let Some(l) = self.check_queue(queued) {
            return Some(l);
        }
        let dt = now.as_ns().saturating_sub(self.window_start.as_ns());
        // A window without any time advance is limit 1's to judge.
        if dt > 0 {
            let span = dt.max(RATE_WINDOW_MIN.as_ns()) as f64 / 1e9;
            if self.window_events as f64 > self.limits.max_events_per_sim_s * span {
                return Some(Limit::EventRate);
            }
        }
        if dt >= RATE_WINDOW_MAX.as_ns() {
            self.window_start = now;
            self.window_events = 0;
            self.kind_events = [0; KINDS];
        }
        None
    }

    /// The queue part of `check`: the peak, and the queue memory limit.
    pub(super) fn check_queue(&mut self, queued: usize) -> Option<Limit> {
        self.peak_queue = self.peak_queue.max(queued);
        (queued > self.limits.max_queued_events).then_some(Limit::QueueMemory)
    }

    /// The most frequent event kind of the current window and a recent event
    /// of that kind.
    fn dominant(&self) -> Ev {
        let (k, _) = self
            .kind_events
            .iter()
            .enumerate()
            .max_by_key(|(_, n)| **n)
            .expect("KINDS > 0");
        self.kind_last[k]
    }
}

fn kind(ev: &Ev) -> usize {
    match ev {
        Ev::GenEmit { .. } => 0,
        Ev::Arrive { .. } => 1,
        Ev::Nic { .. } => 2,
        Ev::CoreDone { .. } => 3,
        Ev::AppTimer { .. } => 4,
        Ev::Wake { .. } => 5,
        Ev::Sample => 6,
        Ev::Watchdog { .. } => 7,
        Ev::PollTick { .. } => 8,
        Ev::NapiTimer { .. } => 9,
        Ev::TcpTimer { .. } => 10,
        Ev::Change { .. } => 11,
        Ev::ModWork { .. } => 12,
    }
}

impl World {
    /// The guard's limits for this world's scenario (see the module doc).
    pub(super) fn guard_limits(&self) -> Limits {
        let wires = self
            .ports
            .iter()
            .map(|p| &p.egress)
            .chain(self.gen_egress.iter());
        let mut frames_per_s = 0.0;
        let mut frames_in_flight = 0.0;
        for w in wires {
            let fps = w.rate.0 as f64 / MIN_FRAME_WIRE_BITS;
            frames_per_s += fps;
            frames_in_flight += fps * w.propagation.as_ns() as f64 / 1e9 + 1.0;
        }
        let mut ticks_per_s = 1e9 / (self.sample_interval.as_ns().max(1) as f64);
        for h in &self.hosts {
            if let Some(p) = h.arch.poll_period(&h.bsd) {
                ticks_per_s += 1e9 / p.as_ns().max(1) as f64;
            }
        }
        for p in 0..self.ports.len() {
            if let Some((period, _)) = self.watchdog_period(p) {
                ticks_per_s += 1e9 / period.as_ns().max(1) as f64;
            }
        }
        let mut slots = 0.0;
        for h in &self.scenario.hosts {
            slots += h.txqueuelen as f64 * h.nics.len() as f64;
            for n in &h.nics {
                slots += (n.rx_ring() as f64 + n.tx_ring() as f64) * n.queues.max(1) as f64;
            }
        }
        let rate = EVENTS_PER_SOURCE_BOUND * (frames_per_s + ticks_per_s) + EVENT_RATE_FLOOR_PER_S;
        let queued = EVENTS_PER_SOURCE_BOUND * (slots + frames_in_flight);
        Limits {
            max_same_instant: MAX_EVENTS_SAME_INSTANT,
            max_events_per_sim_s: rate,
            max_queued_events: QUEUE_FLOOR.saturating_add(queued.min(1e12) as usize),
        }
    }

    /// The error for a tripped limit: which limit, when, the likely field.
    pub(super) fn guard_error(&self, g: &Guard, limit: Limit, now: SimTime) -> Error {
        let field = self.likely_field(&g.dominant());
        let what = match limit {
            Limit::SameInstant => format!(
                "more than {} events at one simulated instant (time does not advance)",
                g.limits.max_same_instant
            ),
            Limit::EventRate => format!(
                "more than {:.3e} events per simulated second, beyond what the scenario's links \
                 and timers can produce",
                g.limits.max_events_per_sim_s
            ),
            Limit::QueueMemory => format!(
                "more than {} pending events (the model's queue memory budget for this scenario)",
                g.limits.max_queued_events
            ),
        };
        Error::Run {
            message: format!(
                "run stopped by the resource guard at t = {} ns simulated: {what}; most events \
                 come from `{field}`: check its value",
                now.as_ns()
            ),
        }
    }

    /// The scenario field that feeds an event kind (best effort).
    fn likely_field(&self, ev: &Ev) -> String {
        let nic = |port: u16| -> String {
            let h = self.port_host[port as usize];
            let n = self.hosts[h as usize]
                .ports
                .iter()
                .position(|&p| p == port)
                .unwrap_or(0);
            format!("hosts[{h}].nics[{n}]")
        };
        let app = |a: u16| -> String {
            if (a as usize) < self.scenario.apps.len() {
                format!("apps[{a}]")
            } else {
                "apps".to_string()
            }
        };
        match *ev {
            Ev::GenEmit { gen } => format!("generators[{gen}].rate_pps"),
            Ev::Arrive { ep, .. } => {
                if (ep as usize) < self.ports.len() {
                    format!("links (to {})", nic(ep))
                } else {
                    format!("links (to generators[{}])", ep as usize - self.ports.len())
                }
            }
            Ev::Nic { port, .. } | Ev::Watchdog { port } | Ev::ModWork { port, .. } => {
                format!("{}.moderation", nic(port))
            }
            Ev::CoreDone { host, .. } => format!("hosts[{host}].profile"),
            Ev::AppTimer { app: a } | Ev::Wake { app: a } => app(a),
            Ev::Sample => "sample_interval_us".to_string(),
            Ev::PollTick { host } => format!("hosts[{host}].bsd.poll_hz"),
            Ev::NapiTimer { port, .. } => {
                format!("hosts[{}].napi", self.port_host[port as usize])
            }
            Ev::TcpTimer { conn, side, .. } => {
                let h = self.conns[conn as usize].host[side as usize];
                format!("hosts[{h}].tcp")
            }
            Ev::Change { step } => format!("at[{}]", self.steps[step as usize].at),
        }
    }
}

/// The guard's rate and queue checks (and the wall clock read for the
/// control callback) run once per this many events.
pub(super) const CHECK_EVERY_EVENTS: u64 = 4096;

/// The guarded run loop.
impl World {
    /// Memory of one queued event [bytes] (its entry in the event heap).
    pub fn queued_event_bytes() -> usize {
        std::mem::size_of::<(SimTime, u64, Ev)>()
    }

    /// The resource limits `run_guarded` applies by default.
    pub fn limits(&self) -> Limits {
        self.guard_limits()
    }

    /// Run to the end of the scenario under the resource guard (`limits`,
    /// default [`World::limits`]), calling `control` about every
    /// `control_every` of wall time (checked every few thousand events):
    /// it gets the progress and returns `false` to stop the run at the
    /// current instant (the world is then closed there, as if the scenario
    /// ended, and the report covers the run up to it).
    ///
    /// Errors: `Error::Run` when a limit is hit (see `guard`), naming the
    /// limit, the simulated time and the likely scenario field.
    pub fn run_guarded(
        &mut self,
        limits: Option<Limits>,
        control: &mut dyn FnMut(&Progress) -> bool,
        control_every: Duration,
    ) -> Result<RunStats, Error> {
        let mut guard = Guard::new(limits.unwrap_or_else(|| self.guard_limits()));
        if let Some(r) = self.try_run_by_groups(&mut guard, control, control_every) {
            return r;
        }
        let mut stats = RunStats::default();
        let mut last_control = Instant::now();
        let mut since_check = 0u64;
        while let Some((now, ev)) = self.q.pop_until_packed(self.end) {
            if let Some(limit) = guard.count(now, ev, self.q.len()) {
                return Err(self.guard_error(&guard, limit, now));
            }
            self.handle(now, ev);
            since_check += 1;
            if since_check < CHECK_EVERY_EVENTS {
                continue;
            }
            since_check = 0;
            // A train run may have handled events past the popped one.
            let now = self.q.now();
            guard.add_events(std::mem::take(&mut self.train_virtual));
            if let Some(limit) = guard.check(now, self.q.len()) {
                return Err(self.guard_error(&guard, limit, now));
            }
            if last_control.elapsed() >= control_every {
                last_control = Instant::now();
                let progress = Progress {
                    now,
                    end: self.end,
                    events: self.q.processed(),
                };
                if !control(&progress) {
                    self.interrupt(now);
                    stats.interrupted = Some(now);
                    break;
                }
            }
        }
        stats.peak_queued_events = guard.peak_queue();
        self.finish();
        Ok(stats)
    }

    /// Stop the run at `now` on request: it ends here, marked in the report.
    pub(super) fn interrupt(&mut self, now: SimTime) {
        if self.aborted.is_none() {
            self.aborted = Some((
                now,
                format!(
                    "interrupted at {} ns simulated (stop requested)",
                    now.as_ns()
                ),
            ));
        }
        self.end = self.end.min(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::QueueEvent;

    fn guard() -> Guard {
        Guard::new(Limits {
            max_same_instant: 100,
            max_events_per_sim_s: 1e6,
            max_queued_events: 1000,
        })
    }

    #[test]
    fn same_instant_trips_after_the_limit_and_resets_when_time_advances() {
        let mut g = guard();
        let t = SimTime(5);
        for _ in 0..100 {
            assert_eq!(g.count(t, Ev::Sample.pack(), 0), None);
        }
        // The 101st event at the same instant is one too many.
        assert_eq!(g.count(t, Ev::Sample.pack(), 0), Some(Limit::SameInstant));
        // Time advancing restarts the count.
        let mut g = guard();
        for i in 0..1000u64 {
            assert_eq!(g.count(SimTime(i / 50), Ev::Sample.pack(), 0), None);
        }
    }

    #[test]
    fn event_rate_is_judged_over_at_least_the_minimum_window() {
        // Table: (events, simulated ns since the window start, tripped?).
        // Limit 1e6/s over max(dt, 1 ms): 1000 events allowed below 1 ms,
        // 5000 over 5 ms.
        let cases = [
            (1000u64, 1u64, false),
            (1001, 1, true),
            (1001, 0, false), // no time advance: limit 1's case
            (5000, 5_000_000, false),
            (5001, 5_000_000, true),
        ];
        for (events, dt, tripped) in cases {
            let mut g = guard();
            for _ in 0..events {
                g.count(SimTime::ZERO, Ev::Sample.pack(), 0);
            }
            let got = g.check(SimTime(dt), 0);
            assert_eq!(
                got == Some(Limit::EventRate),
                tripped,
                "{events} in {dt} ns"
            );
        }
    }

    #[test]
    fn queue_memory_trips_above_its_budget_and_records_the_peak() {
        let mut g = guard();
        assert_eq!(g.check(SimTime(1), 1000), None);
        assert_eq!(g.check(SimTime(2), 1001), Some(Limit::QueueMemory));
        assert_eq!(g.peak_queue(), 1001);
        // Sampled events count the popped event with those still queued.
        let mut g = guard();
        for i in 0..SAMPLE_EVERY {
            g.count(SimTime(i), Ev::Sample.pack(), 6);
        }
        assert_eq!(g.peak_queue(), 7);
    }

    #[test]
    fn window_resets_after_its_maximum_span() {
        let mut g = guard();
        for _ in 0..9000 {
            g.count(SimTime::ZERO, Ev::Sample.pack(), 0);
        }
        // 9000 events over 10 ms: 0.9e6/s, allowed; the window closes.
        assert_eq!(g.check(SimTime(10_000_000), 0), None);
        for _ in 0..900 {
            g.count(SimTime(10_000_000), Ev::Sample.pack(), 0);
        }
        // 900 new events in the next 1 ms window: allowed (the old 9000
        // no longer count).
        assert_eq!(g.check(SimTime(11_000_000), 0), None);
    }

    #[test]
    fn the_dominant_kind_names_its_field() {
        let mut g = guard();
        for _ in 0..SAMPLE_EVERY {
            g.count(SimTime(1), Ev::Sample.pack(), 0);
        }
        for _ in 0..3 * SAMPLE_EVERY {
            g.count(SimTime(2), Ev::PollTick { host: 1 }.pack(), 0);
        }
        assert!(matches!(g.dominant(), Ev::PollTick { host: 1 }));
    }
}
