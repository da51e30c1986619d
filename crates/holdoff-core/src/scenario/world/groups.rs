//! The run loop by connected groups: each group of hosts that share links
//! runs for a stretch of simulated time from its own event queue before the
//! next group does, so that its state and its (small) queue stay in the
//! processor's caches (issue 33 item 2; BENCHMARKS.md, 2026-11-26).
//!
//! Models nothing: it changes only the order in which the events of
//! different groups are processed, never a result. Every report, and the
//! event count, is byte-identical to the single queue's (`run` with the
//! scheduler off: `HOLDOFF_GROUP_SCHEDULER=off` or
//! [`World::set_group_scheduler`]); `tests/test_groups.py` compares the two
//! on random multi-group scenarios, and `tests/test_independence.py` shows
//! that a group's results do not depend on the other groups.
//!
//! Groups: a host, its ports, its cores and its applications are one group;
//! a link joins the groups of its two endpoints (a generator is a group of
//! its own until linked), and so does a two-host application (its host and
//! its `to`) and a TCP connection. IP forwarding stays within a host.
//!
//! Global events: the sample clock (`Ev::Sample`) and the `[[at]]` changes
//! (`Ev::Change`) read or write several groups; they wait in a global list.
//! Every other event belongs to the group of its port, endpoint, generator,
//! host, application or connection and waits in that group's queue.
//!
//! Same-instant order, exactly as the single queue: the single queue pops
//! same-instant events in scheduling order, so a group event at the time
//! `T` of a global event runs before it if and only if it was scheduled
//! before it. When a global event is scheduled, a *marker* is queued in
//! every group's queue at the same time: the marker takes the global
//! event's place in each group's scheduling order (the queues pop equal
//! times first in, first out). A round runs each group up to its first
//! marker (every event before `T`, and the events at `T` scheduled before
//! the global event), then the global event; events at `T` scheduled after
//! it (by it, or by a group event at `T`) follow the marker and run in the
//! next round, after it, as in the single queue. Within a group the order
//! is the single queue's; across groups it differs, which no result can see
//! (the groups share no state). Without a global event within the
//! stretch (`stretch_for`: 1 to 16 ms, shorter with more groups), a round
//! runs every group up to a horizon (no marker is needed: no global event
//! lies between).
//!
//! While group `g` runs, its queue is swapped into `World::q`, so every
//! handler's `schedule` reaches it with no routing per event. A global
//! event is handled with an empty staging queue in `World::q`; the events
//! it schedules are then routed to their queues in pop order (which keeps
//! each queue's same-instant order).
//!
//! The single queue is used instead when there is one group, and where a
//! group can change the whole run: NetPIPE (the run ends when the last
//! client finishes), moderators that may fail (Python and C kinds: a failure
//! stops every group) or that the run records in call order
//! (`World::record_samples`), and after a failure or a stop.
//!
//! The resource guard counts every event as before; its rate check runs at
//! round ends (the only times every group has reached the same instant) and
//! its queue check every few thousand events; the control callback is
//! called at round ends. The queue peak counts every queue (markers
//! included), sampled as before.
//!
//! Units: times [ns].

use super::guard::{Guard, Limit, Limits, CHECK_EVERY_EVENTS};
use super::{ep_index, Ev, Progress, Queue, RunStats, World};
use crate::engine::QueueEvent;
use crate::error::Error;
use crate::scenario::config::ModerationCfg;
use crate::units::{Nanos, SimTime};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Tag of a marker in a group's queue (bits 0-7 of word 0): not an `Ev`
/// tag (`Ev::pack` uses 0 to 12).
const TAG_MARKER: u64 = 0xff;
const MARKER: [u64; 2] = [TAG_MARKER, 0];

/// The simulated time one round gives all groups together [ns]: each
/// group's stretch is this shared out among the groups, within
/// [`STRETCH_MIN`, `STRETCH_MAX`]. A round of 1024 saturated 1 GbE hosts
/// at 1 ms each (4.6 M events) reaches the guard and the control callback
/// within a wall second; no round does more work than that one.
pub const ROUND_BUDGET: Nanos = Nanos(1_024_000_000);

/// The shortest stretch a round gives each group [ns] (when no global event
/// comes sooner): a saturated 1 GbE host runs thousands of events in it.
pub const STRETCH_MIN: Nanos = Nanos(1_000_000);

/// The longest stretch [ns]. Longer stretches mean fewer switches: a
/// saturated host sweeps its whole receive ring and socket queue (tens of
/// KB) about once a millisecond, and every switch away leaves those lines
/// to be fetched again from outside the core's L2 cache when there are
/// dozens of hosts (BENCHMARKS.md, eighth sitting).
pub const STRETCH_MAX: Nanos = Nanos(16_000_000);

/// The stretch a round gives each of `groups` groups [ns]:
/// `ROUND_BUDGET / groups` within [`STRETCH_MIN`, `STRETCH_MAX`].
pub fn stretch_for(groups: usize) -> Nanos {
    let share = ROUND_BUDGET.as_ns() / (groups.max(1) as u64);
    Nanos(share.clamp(STRETCH_MIN.as_ns(), STRETCH_MAX.as_ns()))
}

/// The environment variable that turns the group scheduler off (`off` or
/// `0`); it is on otherwise.
pub const ENV_GROUP_SCHEDULER: &str = "HOLDOFF_GROUP_SCHEDULER";

/// The scheduler's setting from the environment (see [`ENV_GROUP_SCHEDULER`]).
pub(super) fn group_scheduler_from_env() -> bool {
    !matches!(
        std::env::var(ENV_GROUP_SCHEDULER).as_deref(),
        Ok("off") | Ok("0")
    )
}

/// The connected groups of a world: a dense group number per entity.
pub(super) struct Groups {
    pub(super) n: usize,
    /// Per endpoint (ports first, then generators).
    pub(super) ep: Vec<u32>,
    pub(super) host: Vec<u32>,
    pub(super) app: Vec<u32>,
    pub(super) conn: Vec<u32>,
}

impl Groups {
    /// The group of an event, or None for a global event.
    fn of(&self, nports: usize, w: [u64; 2]) -> Option<usize> {
        let g = match Ev::unpack(w) {
            Ev::GenEmit { gen } => self.ep[nports + gen as usize],
            Ev::Arrive { ep } => self.ep[ep as usize],
            Ev::Nic { port, .. }
            | Ev::Watchdog { port }
            | Ev::NapiTimer { port, .. }
            | Ev::ModWork { port, .. } => self.ep[port as usize],
            Ev::CoreDone { host, .. } | Ev::PollTick { host } => self.host[host as usize],
            Ev::AppTimer { app } | Ev::Wake { app } => self.app[app as usize],
            Ev::TcpTimer { conn, .. } => self.conn[conn as usize],
            Ev::Sample | Ev::Change { .. } => return None,
        };
        Some(g as usize)
    }
}

fn find(uf: &mut [u32], mut x: u32) -> u32 {
    while uf[x as usize] != x {
        let up = uf[uf[x as usize] as usize];
        uf[x as usize] = up;
        x = up;
    }
    x
}

fn union(uf: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(uf, a), find(uf, b));
    if ra != rb {
        uf[ra.max(rb) as usize] = ra.min(rb);
    }
}

/// The queues of a run by groups.
struct GroupRun {
    groups: Groups,
    /// Per group; the slot of the group running holds an empty queue.
    queues: Vec<Queue>,
    /// Global events in pop order: (time, packed event).
    global: VecDeque<(SimTime, [u64; 2])>,
    /// Global events processed.
    global_done: u64,
    /// Events in every queue and the global list (markers included).
    queued: usize,
}

impl GroupRun {
    /// Queue `w` at `at` where it belongs; a global event also queues a
    /// marker in every group's queue.
    fn place(&mut self, nports: usize, at: SimTime, w: [u64; 2]) {
        match self.groups.of(nports, w) {
            Some(g) => {
                self.queues[g].schedule_packed(at, w[0], w[1]);
                self.queued += 1;
            }
            None => {
                let i = self.global.partition_point(|e| e.0 <= at);
                self.global.insert(i, (at, w));
                for q in &mut self.queues {
                    q.schedule_packed(at, MARKER[0], MARKER[1]);
                }
                self.queued += 1 + self.queues.len();
            }
        }
    }

    /// Events processed in every queue (markers excluded).
    fn processed(&self) -> u64 {
        self.queues.iter().map(|q| q.processed()).sum::<u64>() + self.global_done
    }
}

impl World {
    /// Turn the group scheduler on or off for this world's runs (default:
    /// on, unless `HOLDOFF_GROUP_SCHEDULER` is `off` or `0` when the world
    /// is built). Results are the same either way.
    pub fn set_group_scheduler(&mut self, on: bool) {
        self.group_sched = on;
    }

    /// The number of connected groups (see the module doc).
    pub fn connected_group_count(&self) -> usize {
        self.connected_groups().n
    }

    /// The connected groups (see the module doc).
    pub(super) fn connected_groups(&self) -> Groups {
        let (nh, ng, np) = (self.hosts.len(), self.gens.len(), self.ports.len());
        let mut uf: Vec<u32> = (0..(nh + ng) as u32).collect();
        let node = |ep: usize| -> u32 {
            if ep < np {
                self.port_host[ep] as u32
            } else {
                (nh + ep - np) as u32
            }
        };
        for ep in 0..np + ng {
            let other = ep_index(self.peer[ep], np) as usize;
            union(&mut uf, node(ep), node(other));
        }
        for c in &self.conns {
            union(&mut uf, c.host[0] as u32, c.host[1] as u32);
        }
        let host_ix: BTreeMap<&str, u32> = self
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.as_str(), i as u32))
            .collect();
        for a in &self.scenario.apps {
            if let Some(peer) = a.peer() {
                if let (Some(&x), Some(&y)) = (host_ix.get(a.host()), host_ix.get(peer)) {
                    union(&mut uf, x, y);
                }
            }
        }
        // Dense numbers, in the order of the lowest host or generator index.
        let mut id = vec![u32::MAX; nh + ng];
        let mut n = 0u32;
        let mut dense = |uf: &mut [u32], x: u32| -> u32 {
            let r = find(uf, x) as usize;
            if id[r] == u32::MAX {
                id[r] = n;
                n += 1;
            }
            id[r]
        };
        let node_group: Vec<u32> = (0..(nh + ng) as u32).map(|x| dense(&mut uf, x)).collect();
        let host: Vec<u32> = node_group[..nh].to_vec();
        Groups {
            n: n as usize,
            ep: (0..np + ng).map(|e| node_group[node(e) as usize]).collect(),
            app: self.apps.iter().map(|a| host[a.host as usize]).collect(),
            conn: self
                .conns
                .iter()
                .map(|c| host[c.host[0] as usize])
                .collect(),
            host,
        }
    }

    /// The groups to run by, or None when this run takes the single queue
    /// (see the module doc).
    fn groups_for_run(&self) -> Option<Groups> {
        if !self.group_sched
            || self.netpipes_running > 0
            || self.sample_log.is_some()
            || self.aborted.is_some()
        {
            return None;
        }
        let may_fail =
            |m: &ModerationCfg| matches!(m, ModerationCfg::Python(_) | ModerationCfg::C(_));
        let nics = self.scenario.hosts.iter().flat_map(|h| &h.nics);
        if nics.clone().any(|n| may_fail(&n.moderation)) {
            return None;
        }
        let changed = self.steps.iter().flat_map(|s| &s.edits);
        if changed.clone().any(|e| {
            matches!(e, crate::scenario::config::at::Edit::Moderation { cfg, .. } if may_fail(cfg))
        }) {
            return None;
        }
        let g = self.connected_groups();
        (g.n >= 2).then_some(g)
    }

    /// Run to the end by groups if this run can (`groups_for_run`); None if
    /// it takes the single queue.
    pub(super) fn try_run_by_groups(
        &mut self,
        guard: &mut Guard,
        control: &mut dyn FnMut(&Progress) -> bool,
        control_every: Duration,
    ) -> Option<Result<RunStats, Error>> {
        let groups = self.groups_for_run()?;
        Some(self.run_by_groups(groups, guard, control, control_every))
    }

    /// `run` by groups, without limits or control.
    pub(super) fn run_unguarded_by_groups(&mut self) -> bool {
        let mut guard = Guard::new(Limits {
            max_same_instant: u64::MAX,
            max_events_per_sim_s: f64::INFINITY,
            max_queued_events: usize::MAX,
        });
        match self.try_run_by_groups(&mut guard, &mut |_| true, Duration::MAX) {
            Some(r) => {
                r.expect("a run without limits cannot trip one");
                true
            }
            None => false,
        }
    }

    fn run_by_groups(
        &mut self,
        groups: Groups,
        guard: &mut Guard,
        control: &mut dyn FnMut(&Progress) -> bool,
        control_every: Duration,
    ) -> Result<RunStats, Error> {
        let nports = self.ports.len();
        let start = self.q.now();
        let fresh = || {
            let mut q = Queue::new();
            q.advance_to(start);
            q
        };
        let mut gr = GroupRun {
            queues: (0..groups.n).map(|_| fresh()).collect(),
            groups,
            global: VecDeque::new(),
            global_done: 0,
            queued: 0,
        };
        // Where a global event's handler schedules (see the module doc).
        let mut staging = fresh();
        // The single queue's events (those `init` and any `step` left), in
        // pop order: each queue keeps their same-instant order.
        self.q.drain_into(|at, w| gr.place(nports, at, w));
        let mut stats = RunStats {
            groups: gr.queues.len(),
            ..RunStats::default()
        };
        let mut last_control = Instant::now();
        let mut since_check = 0u64;
        // Every event before `lo` is processed, in every group.
        let mut lo = start;
        let stretch = stretch_for(gr.queues.len());
        let result = loop {
            let end = self.end;
            let next_global = gr.global.front().map(|e| e.0).filter(|&t| t <= end);
            let horizon = SimTime(lo.as_ns().saturating_add(stretch.as_ns() - 1));
            let (limit, to_global) = match next_global {
                Some(t) if t <= horizon => (t, true),
                _ => (horizon.min(end), false),
            };
            if let Err((l, now)) = self.round(&mut gr, limit, guard, &mut since_check) {
                break Err(self.guard_error(guard, l, now));
            }
            let now = if to_global {
                let (t, w) = gr.global.pop_front().expect("the next global event");
                gr.queued -= 1;
                if let Some(l) = guard.count(t, w, gr.queued) {
                    break Err(self.guard_error(guard, l, t));
                }
                std::mem::swap(&mut self.q, &mut staging);
                self.q.advance_to(t);
                self.pop_limit = t;
                self.handle(t, w);
                self.pop_limit = self.end;
                std::mem::swap(&mut self.q, &mut staging);
                gr.global_done += 1;
                staging.drain_into(|at, w| gr.place(nports, at, w));
                lo = t;
                t
            } else {
                if limit >= end {
                    break Ok(());
                }
                lo = SimTime(limit.as_ns() + 1);
                limit
            };
            guard.add_events(std::mem::take(&mut self.train_virtual));
            if let Some(l) = guard.check(now, gr.queued) {
                break Err(self.guard_error(guard, l, now));
            }
            if last_control.elapsed() >= control_every {
                last_control = Instant::now();
                let progress = Progress {
                    now,
                    end: self.end,
                    events: self.q.processed() + gr.processed(),
                };
                if !control(&progress) {
                    self.interrupt(now);
                    stats.interrupted = Some(now);
                    break Ok(());
                }
            }
        };
        let done = gr.processed();
        self.q.add_processed(done);
        result?;
        stats.peak_queued_events = guard.peak_queue();
        self.finish();
        Ok(stats)
    }

    /// One round: every group's events up to `limit` (and up to its first
    /// marker). Err: a limit the guard found, and when.
    fn round(
        &mut self,
        gr: &mut GroupRun,
        limit: SimTime,
        guard: &mut Guard,
        since_check: &mut u64,
    ) -> Result<(), (Limit, SimTime)> {
        for g in 0..gr.queues.len() {
            std::mem::swap(&mut self.q, &mut gr.queues[g]);
            let others = gr.queued - self.q.len();
            // A train run handles no event past the stretch's end.
            self.pop_limit = limit;
            let r = self.stretch(limit, others, guard, since_check, &gr.groups, g);
            self.pop_limit = self.end;
            gr.queued = others + self.q.len();
            std::mem::swap(&mut self.q, &mut gr.queues[g]);
            r?;
        }
        Ok(())
    }

    /// Group `g`'s events (its queue in `self.q`) up to `limit` and up to
    /// its first marker; `others`: the events queued elsewhere.
    #[inline(never)]
    fn stretch(
        &mut self,
        limit: SimTime,
        others: usize,
        guard: &mut Guard,
        since_check: &mut u64,
        groups: &Groups,
        g: usize,
    ) -> Result<(), (Limit, SimTime)> {
        let _ = (groups, g);
        while let Some((now, w)) = self.q.pop_until_packed(limit) {
            if w[0] & 0xff == TAG_MARKER {
                self.q.uncount();
                return Ok(());
            }
            debug_assert_eq!(
                groups.of(self.ports.len(), w),
                Some(g),
                "an event in another group's queue"
            );
            if let Some(l) = guard.count(now, w, others + self.q.len()) {
                return Err((l, now));
            }
            self.handle(now, w);
            *since_check += 1;
            if *since_check >= CHECK_EVERY_EVENTS {
                *since_check = 0;
                if let Some(l) = guard.check_queue(others + self.q.len()) {
                    return Err((l, now));
                }
            }
        }
        Ok(())
    }
}
