//! Epoll busy polling (`napi_busy_loop`, `busy_poll_stop`) and IRQ
//! suspension (`napi_suspend_irqs` / `napi_resume_irqs`) for rpc and
//! rpc_open servers with `busy_poll_usecs`; the decisions are the pure
//! functions of `host::driver` (Linux 6.13 `net/core/dev.c`,
//! `fs/eventpoll.c`; docs/models/napi.md).
//!
//! Simplifies: the spin is event-driven (one segment until the timeout, cut
//! short at the next poll-iteration boundary after a packet lands).
//!
//! Units: times [ns].

use super::{Ev, World};
use crate::apps::tcp_apps::{BusyPoll, Calls, Wait};
use crate::apps::AppKind;
use crate::host::driver::{self, EpollIrq, NapiTimerKind};
use crate::host::drivers::{napi, Poll};
use crate::host::{EndAction, Work};
use crate::units::{Nanos, SimTime};

/// A busy-poll loop in progress (`napi_busy_loop` of one epoll_wait).
#[derive(Clone, Copy, Debug)]
pub(super) struct Spin {
    /// The NAPI instance polled: (port, vector).
    pub(super) napi: (u16, u16),
    /// busy_poll_usecs after the loop began.
    pub(super) deadline: SimTime,
    /// End of the last poll: empty iterations run from here.
    pub(super) since: SimTime,
    /// One empty iteration (the profile's poll_overhead_ns, at least 1 ns).
    pub(super) iter: Nanos,
    /// A packet landed or data arrived: poll at the next iteration boundary.
    pub(super) kicked: bool,
}

/// How one busy-poll step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BusyStep {
    Found,
    Spin,
    Timeout,
}

impl World {
    /// A busy-polling rpc server's slice: a busy-poll step, the end of a
    /// busy-poll loop, or serving requests and then entering a new loop
    /// where it would otherwise sleep (Linux 6.13 `fs/eventpoll.c`
    /// `ep_busy_loop`, `net/core/dev.c` `napi_busy_loop`).
    pub(super) fn run_busy_server(
        &mut self,
        now: SimTime,
        app: u16,
        bp: BusyPoll,
    ) -> (Nanos, Option<Work>, EndAction) {
        let a = app as usize;
        let h = self.apps[a].host;
        let prof = self.hosts[h as usize].profile;
        self.sched[a].runnable = false;
        self.sched[a].waits = None;
        let mut cost = Nanos::ZERO;
        let spin_now = match &mut self.apps[a].kind {
            AppKind::RpcOpenServer(srv) => std::mem::take(&mut srv.spin_next),
            _ => false,
        };
        if spin_now {
            // The previous segment served; the loop starts in its own
            // segment, so a kick cannot shorten the serving CPU time.
        } else if std::mem::take(&mut self.busy_serve[a]) {
            // The busy-poll loop of this slice's predecessor found events.
        } else if self.spin[a].is_some() {
            match self.busy_step(now, app, bp, &mut cost) {
                BusyStep::Spin => {
                    self.sched[a].waits = Some(Wait::Readable);
                    return (cost, Some(Work::App { app }), EndAction::None);
                }
                BusyStep::Found | BusyStep::Timeout => {
                    let (found, on_end) = self.busy_loop_end(now, app, bp, &mut cost);
                    if !found {
                        // ep_poll goes to sleep until the data wakes it.
                        self.sched[a].waits = Some(Wait::Readable);
                        return (cost, None, on_end);
                    }
                    self.busy_serve[a] = true;
                    return (cost, Some(Work::App { app }), on_end);
                }
            }
        } else {
            cost = prof.context_switch_ns;
            // Woken from a sleep: epoll_wait returns events, which suspends
            // IRQs as after a busy loop.
            if self.server_readable(app) {
                self.epoll_events(now + cost, app, bp, true);
            }
        }
        let (mut io, apps) = self.app_io(prof);
        let mut calls = Calls {
            io: &mut io,
            prof,
            now,
        };
        let (cost, w) = match &mut apps[a].kind {
            AppKind::RpcServer(srv) => srv.run(&mut calls, cost),
            AppKind::RpcOpenServer(_) if spin_now => (cost, Wait::Readable),
            AppKind::RpcOpenServer(srv) => {
                let (cost, w, more) = srv.run(&mut calls, cost);
                if more {
                    // Its quantum is used up: serve again when the slice ends.
                    self.busy_serve[a] = true;
                    return (cost, Some(Work::App { app }), EndAction::None);
                }
                if w == Wait::Readable {
                    srv.spin_next = true;
                    return (cost, Some(Work::App { app }), EndAction::None);
                }
                (cost, w)
            }
            _ => unreachable!("busy polling is an rpc or rpc_open server option"),
        };
        if w != Wait::Readable {
            self.sched[a].waits = Some(w);
            return (cost, None, EndAction::None);
        }
        // epoll_wait finds no events: busy-poll instead of sleeping.
        let t = now + cost;
        self.spin[a] = Some(Spin {
            napi: self.server_napi(app),
            deadline: t + bp.spin,
            since: t,
            iter: prof.poll_overhead_ns.max(Nanos(1)),
            kicked: false,
        });
        self.sched[a].waits = Some(Wait::Readable);
        (cost, Some(Work::App { app }), EndAction::None)
    }

    /// One step of `napi_busy_loop` at `now + *cost`: take the instance
    /// (unless softirq holds it), poll it once with the busy-poll budget,
    /// then stop on events or timeout, or spin until the timeout (cut short
    /// by `kick_spin`).
    pub(super) fn busy_step(
        &mut self,
        now: SimTime,
        app: u16,
        bp: BusyPoll,
        cost: &mut Nanos,
    ) -> BusyStep {
        let a = app as usize;
        let mut sp = self.spin[a].expect("a busy-poll loop is running");
        let (port, vector) = sp.napi;
        let (p, v) = (port as usize, vector as usize);
        let t = now + *cost;
        if self.napi_state[p][v].busy_owner != Some(app) {
            if self.napi_listed(port, vector) || self.napi_state[p][v].busy_owner.is_some() {
                // SCHED is held elsewhere: napi_busy_loop only marks
                // PREFER_BUSY_POLL and tries again after one iteration.
                if bp.prefer {
                    self.napi_state[p][v].prefer_busy_poll = true;
                }
                if t >= sp.deadline {
                    return BusyStep::Timeout;
                }
                sp.since = t;
                sp.kicked = false;
                *cost += sp.iter;
                self.spin[a] = Some(sp);
                return BusyStep::Spin;
            }
            let st = &mut self.napi_state[p][v];
            if st.busy_owner.is_none() {
                self.busy_owned += 1;
            }
            st.busy_owner = Some(app);
            if bp.prefer {
                st.prefer_busy_poll = true;
            }
        }
        if sp.kicked || t < sp.deadline {
            // The driver poll; napi_complete_done returns false (busy-owned).
            self.busy_poll_once(now, app, port, vector, bp.budget, cost);
        }
        if self.server_readable(app) {
            return BusyStep::Found;
        }
        let t = now + *cost;
        if t >= sp.deadline {
            return BusyStep::Timeout;
        }
        sp.since = t;
        sp.kicked = false;
        *cost += sp.deadline - t;
        self.spin[a] = Some(sp);
        BusyStep::Spin
    }

    /// The driver's NAPI poll called from the process context of `app`: TX
    /// clean, up to `budget` RX packets through the stack (the same poll as
    /// in softirq). Returns the RX packets cleaned.
    pub(super) fn busy_poll_once(
        &mut self,
        now: SimTime,
        app: u16,
        port: u16,
        vector: u16,
        budget: u32,
        cost: &mut Nanos,
    ) -> u32 {
        let (h, core) = (self.apps[app as usize].host, self.apps[app as usize].core);
        let at = Poll { now, port, vector };
        let (c, work) = napi::poll(&mut self.kernel(h, core), at, budget, *cost);
        *cost = c;
        let st = &mut self.napi_state[port as usize][vector as usize];
        st.stats.busy_polls += 1;
        st.stats.busy_poll_packets += work as u64;
        work
    }

    /// End of a busy-poll loop: `busy_poll_stop` (if the loop owned the
    /// instance) with its final poll and completion, then epoll's return:
    /// events found suspend IRQs, none resume them. Returns (events found,
    /// the IMS write to do at the end of the segment).
    pub(super) fn busy_loop_end(
        &mut self,
        now: SimTime,
        app: u16,
        bp: BusyPoll,
        cost: &mut Nanos,
    ) -> (bool, EndAction) {
        let a = app as usize;
        let sp = self.spin[a].take().expect("a busy-poll loop is running");
        let (port, vector) = sp.napi;
        let (p, v) = (port as usize, vector as usize);
        let h = self.apps[a].host;
        let prof = self.hosts[h as usize].profile;
        let napi = self.hosts[h as usize].napi;
        let mut on_end = EndAction::None;
        if self.napi_state[p][v].busy_owner == Some(app) {
            let st = &mut self.napi_state[p][v];
            st.busy_owner = None;
            self.busy_owned -= 1;
            let stop = driver::busy_poll_stop(&napi, bp.prefer, st.defer_count);
            st.defer_count = stop.defer_count;
            if let Some(t) = stop.timer {
                self.arm_napi_timer(now + *cost + t.after, port, vector, t.kind);
            }
            // "rc = napi->poll(napi, budget)": one more poll, no longer
            // busy-owned, so its completion decides about the IRQ.
            let work = self.busy_poll_once(now, app, port, vector, bp.budget, cost);
            if work < bp.budget {
                if self.complete_poll(now + *cost, h, port, vector, work) {
                    *cost += prof.mmio_write_ns;
                    on_end = EndAction::Unmask { port, vector };
                }
            } else if !stop.skip_schedule {
                let core = self.queue_poll(h, port, vector);
                self.pending_dispatch.push((h, core));
            }
        }
        let found = self.server_readable(app);
        self.epoll_events(now + *cost, app, bp, found);
        (found, on_end)
    }

    /// epoll_wait returns at `t` (with events, or about to sleep without):
    /// napi_suspend_irqs / napi_resume_irqs on the server's instance.
    pub(super) fn epoll_events(&mut self, t: SimTime, app: u16, bp: BusyPoll, found: bool) {
        let (port, vector) = self.server_napi(app);
        let h = self.apps[app as usize].host;
        let napi = self.hosts[h as usize].napi;
        match driver::epoll_irq_action(&napi, bp.prefer, found) {
            EpollIrq::Nothing => {}
            EpollIrq::Suspend(after) => {
                self.napi_state[port as usize][vector as usize]
                    .stats
                    .irq_suspends += 1;
                self.arm_napi_timer(t + after, port, vector, NapiTimerKind::Suspend);
            }
            EpollIrq::Resume => {
                self.napi_state[port as usize][vector as usize]
                    .stats
                    .irq_resumes += 1;
                let core = self.queue_poll(h, port, vector);
                self.pending_dispatch.push((h, core));
            }
        }
    }

    /// A packet landed on `queue` of `port`: a busy-poll loop owning its
    /// instance polls at its next iteration.
    pub(super) fn kick_busy_poller(&mut self, now: SimTime, port: u16, queue: u16) {
        if self.busy_owned == 0 {
            return; // no instance is busy-owned (checked once per frame)
        }
        let v = self.ports[port as usize].vector_of_queue(queue);
        if let Some(app) = self.napi_state[port as usize][v as usize].busy_owner {
            if self.ports[port as usize].rx_ready(queue) > 0 {
                self.kick_spin(now, app);
            }
        }
    }

    /// End the spin of `app` at the first iteration boundary at or after
    /// `now` (iterations of `iter` counted from the last poll).
    pub(super) fn kick_spin(&mut self, now: SimTime, app: u16) {
        let a = app as usize;
        let Some(sp) = self.spin[a].as_mut() else {
            return;
        };
        if sp.kicked {
            return;
        }
        sp.kicked = true;
        let at = if now <= sp.since {
            sp.since
        } else {
            let k = (now - sp.since).as_ns().div_ceil(sp.iter.as_ns());
            sp.since + Nanos(k * sp.iter.as_ns())
        }
        .min(sp.deadline);
        let iter = sp.iter;
        let (h, core) = (self.apps[a].host, self.apps[a].core);
        let c = &mut self.hosts[h as usize].cores[core as usize];
        if let Some(gen) = c.shorten(Work::App { app }, at.max(now), iter) {
            self.q
                .schedule(at.max(now), Ev::CoreDone { host: h, core, gen });
        }
    }

    /// Data waits in the rpc server's socket.
    pub(super) fn server_readable(&self, app: u16) -> bool {
        match &self.apps[app as usize].kind {
            AppKind::RpcServer(srv) => self.conns[srv.conn as usize].ep[1].readable() > 0,
            AppKind::RpcOpenServer(srv) => srv
                .conns
                .iter()
                .any(|&c| self.conns[c as usize].ep[1].readable() > 0),
            _ => false,
        }
    }

    /// The NAPI instance (port, vector) the rpc server's connection arrives on.
    pub(super) fn server_napi(&self, app: u16) -> (u16, u16) {
        let conn = match &self.apps[app as usize].kind {
            AppKind::RpcServer(srv) => srv.conn,
            // The NAPI id of the thread's epoll: its first connection's queue.
            AppKind::RpcOpenServer(srv) => srv.conns[0],
            _ => unreachable!("busy polling is an rpc or rpc_open server option"),
        };
        let port = self.conns[conn as usize].port[1];
        let p = &self.ports[port as usize];
        (port, p.vector_of_queue(p.rx_queue_of_flow(conn)))
    }
}
