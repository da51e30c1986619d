//! NAPI and softirq: per-core poll lists, `net_rx_action` with its budget,
//! time squeeze, `__do_softirq` restarts and ksoftirqd, the non-NAPI input
//! backlog (`netif_rx` / `process_backlog`), NAPI hrtimers and
//! `napi_complete_done`, and the BSD task/thread passes.
//!
//! Units: times [ns]; budgets [packets].

use super::{Ev, World};
use crate::engine::Timer;
use crate::host::driver::{
    self, CompleteIn, CompleteOut, NapiTimerKind, NapiTimerStart, StackSink,
};
use crate::host::drivers::{Poll, RX_SLICE};
use crate::host::{EndAction, Work, SWI_NET};
use crate::packet::{DropReason, Packet};
use crate::units::{Nanos, SimTime};
use std::collections::VecDeque;

/// State of one NAPI instance (Linux `napi_struct`): the hard-IRQ deferral
/// count, the hrtimer and what it was armed for, `NAPI_STATE_PREFER_BUSY_POLL`,
/// and the application whose busy-poll loop owns it (`NAPI_STATE_IN_BUSY_POLL`).
#[derive(Clone, Copy, Default)]
pub(super) struct NapiState {
    pub(super) defer_count: u32,
    pub(super) timer: Timer,
    pub(super) timer_kind: NapiTimerKind,
    pub(super) prefer_busy_poll: bool,
    pub(super) busy_owner: Option<u16>,
    pub(super) stats: NapiStats,
    /// A BSD driver's progress inside one long pass (`Kernel::slice_state`);
    /// non-zero: the pass goes on at the head of its core's list.
    pub(super) slice: u32,
}

/// Busy-poll and IRQ-suspension counters of one NAPI instance (reported
/// per vector as `ports[].vectors[].napi`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NapiStats {
    /// Driver polls called from busy-poll loops, including the final poll
    /// of `busy_poll_stop` [polls].
    pub busy_polls: u64,
    /// Packets those polls cleaned [packets].
    pub busy_poll_packets: u64,
    /// `napi_suspend_irqs`: epoll reported events and re-armed the suspend
    /// timer [count].
    pub irq_suspends: u64,
    /// `napi_resume_irqs`: busy polling found nothing and scheduled a poll [count].
    pub irq_resumes: u64,
    /// The irq_suspend_timeout timer fired and scheduled a poll (safety net) [count].
    pub suspend_timer_expiries: u64,
    /// The gro_flush_timeout (deferral) timer fired and scheduled a poll [count].
    pub defer_timer_polls: u64,
}

/// Linux `MAX_SOFTIRQ_RESTART`: __do_softirq restarts at most this many
/// times (and for at most `MAX_SOFTIRQ_TIME` = 2 ms) before handing the rest
/// to ksoftirqd.
pub(super) const MAX_SOFTIRQ_RESTART: u32 = 10;
pub(super) const MAX_SOFTIRQ_TIME: Nanos = Nanos::from_ms(2);

/// Per-core softirq (net_rx_action) state.
#[derive(Default)]
pub(super) struct SoftirqState {
    pub(super) poll_list: VecDeque<(u16, u16)>,
    /// A net_rx_action run is in progress (its budget and clock are live).
    pub(super) active: bool,
    pub(super) budget_left: i64,
    pub(super) started: SimTime,
    /// __do_softirq restarts in the current irq-exit run, and when it began.
    pub(super) restarts: u32,
    pub(super) do_started: SimTime,
    pub(super) ksoftirqd_queued: bool,
    pub(super) time_squeeze: u64,
    /// Times the rest of the work was handed to ksoftirqd [count].
    pub(super) ksoftirqd_handoffs: u64,
    /// Non-NAPI input backlog (netif_rx): (port, packet).
    pub(super) backlog: VecDeque<(u16, Packet)>,
}

/// FreeBSD's netisr for IP (`ipintrq` and the `swi:net` thread), used by
/// the FreeBSD drivers when forwarding without fast-forwarding and with
/// `net.isr.direct = 0` (FreeBSD 6 sys/net/netisr.c `netisr_dispatch` ->
/// `netisr_queue`; sys/netinet/ip_input.c `ipintrq`, `ipqmaxlen =
/// IFQ_MAXLEN`).
#[derive(Default)]
pub(super) struct Netisr {
    /// Queue packets instead of forwarding inline.
    pub(super) queued: bool,
    pub(super) maxlen: u32,
    /// (input port, packet).
    pub(super) queue: VecDeque<(u16, Packet)>,
    /// `swi:net` is listed on a core or running.
    pub(super) scheduled: bool,
    /// A segment queued packets and `swi:net` must be listed.
    pub(super) wake: bool,
    pub(super) stats: NetisrStats,
}

impl crate::scenario::netstack::IpQueue for Netisr {
    fn enqueue(
        &mut self,
        port: u16,
        pkt: Packet,
        prof: &crate::host::profile::HostProfile,
        ledger: &mut crate::metrics::Ledger,
    ) -> Nanos {
        if self.queue.len() as u32 >= self.maxlen {
            // IF_HANDOFF fails: the packet is freed, intr_queue_drops++.
            self.stats.ipintrq_drops += 1;
            ledger.drop(DropReason::BacklogFull);
            return Nanos::ZERO;
        }
        self.queue.push_back((port, pkt));
        self.stats.ipintrq_max = self.stats.ipintrq_max.max(self.queue.len() as u64);
        if self.scheduled {
            return Nanos::ZERO;
        }
        // swi_sched: wake swi:net.
        self.scheduled = true;
        self.wake = true;
        prof.wakeup_ns
    }
}

/// Counters of a host's netisr (reported as `hosts[].netisr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NetisrStats {
    /// Packets dropped because `ipintrq` was full
    /// (`net.inet.ip.intr_queue_drops`) [packets].
    pub ipintrq_drops: u64,
    /// Most packets `ipintrq` held [packets].
    pub ipintrq_max: u64,
    /// Packets `swi:net` forwarded [packets].
    pub swi_net_packets: u64,
}

/// Poll-list entry standing for the backlog (process_backlog).
pub(super) const BACKLOG: (u16, u16) = (u16::MAX, 0);

impl World {
    /// Put (port, vector) on its core's poll/task list and raise the softirq.
    pub(super) fn schedule_poll(&mut self, now: SimTime, h: u16, port: u16, vector: u16) {
        let core = self.queue_poll(h, port, vector);
        if self.hosts[h as usize].cores[core as usize].is_idle() {
            self.dispatch(now, h, core);
        }
    }

    /// The core that polls (port, vector) in softirq (its IRQ line's core).
    pub(super) fn napi_core(&self, port: u16, vector: u16) -> u16 {
        let h = self.port_host[port as usize];
        let li = self.port_vec_line[port as usize][vector as usize];
        self.hosts[h as usize].lines[li as usize].core
    }

    /// `napi_schedule` without dispatching: list the instance and raise the
    /// softirq on its core; returns the core.
    pub(super) fn queue_poll(&mut self, h: u16, port: u16, vector: u16) -> u16 {
        let core = self.napi_core(port, vector);
        self.raise_net_rx(h, core, (port, vector));
        core
    }

    /// List `entry` (a NAPI instance or the backlog) on the poll list of
    /// `core` unless it is there, and raise the softirq on that core.
    fn raise_net_rx(&mut self, h: u16, core: u16, entry: (u16, u16)) {
        let host = &mut self.hosts[h as usize];
        let sq = &mut host.softirq[core as usize];
        if !sq.poll_list.contains(&entry) {
            sq.poll_list.push_back(entry);
        }
        host.cores[core as usize].softirq_pending = true;
    }

    /// The instance is on its core's poll list (NAPI_STATE_SCHED by softirq).
    pub(super) fn napi_listed(&self, port: u16, vector: u16) -> bool {
        let h = self.port_host[port as usize];
        let core = self.napi_core(port, vector);
        self.hosts[h as usize].softirq[core as usize]
            .poll_list
            .contains(&(port, vector))
    }

    /// Start (or restart) the NAPI hrtimer of (port, vector) to fire at `at`.
    pub(super) fn arm_napi_timer(
        &mut self,
        at: SimTime,
        port: u16,
        vector: u16,
        kind: NapiTimerKind,
    ) {
        let st = &mut self.napi_state[port as usize][vector as usize];
        st.timer_kind = kind;
        let gen = st.timer.arm(at);
        self.q.schedule(at, Ev::NapiTimer { port, vector, gen });
    }

    /// `napi_complete_done` for a poll of (port, vector) that did `work`
    /// (less than its weight), decided and applied at `t`. Returns whether
    /// the caller must unmask the device IRQ.
    pub(super) fn complete_poll(
        &mut self,
        t: SimTime,
        h: u16,
        port: u16,
        vector: u16,
        work: u32,
    ) -> bool {
        let napi = self.hosts[h as usize].napi;
        let st = &self.napi_state[port as usize][vector as usize];
        let out = driver::napi_complete_done(
            &napi,
            CompleteIn {
                work_done: work,
                gro_held: false,
                defer_count: st.defer_count,
                prefer_busy_poll: st.prefer_busy_poll,
                busy_polled: false,
            },
        );
        self.apply_completion(t, port, vector, out);
        out.unmask
    }

    /// Apply a `napi_complete_done` decision taken at `t`: defer count,
    /// PREFER_BUSY_POLL cleared on completion, hrtimer. The caller unmasks.
    pub(super) fn apply_completion(
        &mut self,
        t: SimTime,
        port: u16,
        vector: u16,
        out: CompleteOut,
    ) {
        let st = &mut self.napi_state[port as usize][vector as usize];
        st.defer_count = out.defer_count;
        if out.completed {
            st.prefer_busy_poll = false;
        }
        if let Some(NapiTimerStart { kind, after }) = out.timer {
            self.arm_napi_timer(t + after, port, vector, kind);
        }
    }

    /// Non-NAPI handler RX: take every ready packet, pay the driver's share,
    /// queue it to this CPU's backlog (or drop it when full), refill with one
    /// RDT write, and raise NET_RX. Returns (cost, packets taken).
    pub(super) fn isr_rx_to_backlog(
        &mut self,
        h: u16,
        core: u16,
        port: u16,
        vector: u16,
    ) -> (Nanos, u32) {
        let host = &mut self.hosts[h as usize];
        let prof = host.profile;
        let max = host.napi.netdev_max_backlog as usize;
        let sq = &mut host.softirq[core as usize];
        let p = &mut self.ports[port as usize];
        let mut cost = Nanos::ZERO;
        let mut n = 0;
        for q in p.queues_of_vector(vector) {
            while let Some(pkt) = p.rx_take(q) {
                cost += prof.rx_driver_ns;
                if sq.backlog.len() < max {
                    sq.backlog.push_back((port, pkt));
                } else {
                    self.ledger.drop(DropReason::BacklogFull);
                }
                n += 1;
            }
            if p.rx_held(q) > 0 {
                p.rx_refill(q);
                cost += prof.mmio_write_ns;
            }
        }
        if !sq.backlog.is_empty() {
            self.raise_net_rx(h, core, BACKLOG);
        }
        (cost, n)
    }

    /// process_backlog: up to the NAPI weight of backlog packets through the
    /// stack (the protocol share of their cost).
    fn run_backlog(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        mut cost: Nanos,
        thread: bool,
    ) -> (Nanos, Option<Work>, EndAction) {
        let prof = self.hosts[h as usize].profile;
        let weight = self.hosts[h as usize].napi.weight;
        cost += prof.poll_overhead_ns;
        let mut backlog =
            std::mem::take(&mut self.hosts[h as usize].softirq[core as usize].backlog);
        let mut work = 0u32;
        let (mut stack, _) = self.stack(h, Some((core, now)));
        while work < weight {
            let Some((port, pkt)) = backlog.pop_front() else {
                break;
            };
            cost += stack
                .rx_cost(port, &pkt, prof)
                .saturating_sub(prof.rx_driver_ns);
            cost += stack.deliver(now + cost, port, pkt);
            work += 1;
        }
        let sq = &mut self.hosts[h as usize].softirq[core as usize];
        // Packets queued by handlers that ran meanwhile stay behind these.
        backlog.append(&mut sq.backlog);
        sq.backlog = backlog;
        let relist = (!sq.backlog.is_empty()).then_some(BACKLOG);
        self.net_rx_tail(now, h, core, cost, work, relist, thread, EndAction::None)
    }

    /// The end of one `net_rx_action` step that processed `work` packets:
    /// charge the budget, list `relist` again, then go on, stop (list
    /// empty), or, out of budget or time, count a time squeeze and restart
    /// (`__do_softirq`, at most `MAX_SOFTIRQ_RESTART` times within
    /// `MAX_SOFTIRQ_TIME`) or hand the rest to ksoftirqd, which shares the
    /// core with applications.
    #[allow(clippy::too_many_arguments)]
    fn net_rx_tail(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        cost: Nanos,
        work: u32,
        relist: Option<(u16, u16)>,
        thread: bool,
        on_end: EndAction,
    ) -> (Nanos, Option<Work>, EndAction) {
        let host = &mut self.hosts[h as usize];
        let budget_time = Nanos::from_us(host.napi.budget_usecs as u64);
        let sq = &mut host.softirq[core as usize];
        sq.budget_left -= work as i64;
        if let Some(entry) = relist {
            sq.poll_list.push_back(entry);
        }
        let end = now + cost;
        if sq.poll_list.is_empty() {
            sq.active = false;
            sq.restarts = 0;
            return (cost, None, on_end);
        }
        if sq.budget_left > 0 && end - sq.started < budget_time {
            return (cost, Some(Work::Softirq { thread }), on_end);
        }
        sq.time_squeeze += 1;
        sq.active = false;
        if !thread {
            if sq.restarts < MAX_SOFTIRQ_RESTART && end - sq.do_started < MAX_SOFTIRQ_TIME {
                sq.restarts += 1;
                return (cost, Some(Work::Softirq { thread: false }), on_end);
            }
            sq.restarts = 0;
        }
        if !sq.ksoftirqd_queued {
            sq.ksoftirqd_queued = true;
            sq.ksoftirqd_handoffs += 1;
            host.cores[core as usize].queue_ksoftirqd();
        }
        (cost, None, on_end)
    }

    /// After stack work on `core` of host `h` queued IP packets: make
    /// `swi:net` runnable (an idle core takes it, else it waits on this one).
    pub(super) fn wake_swi_net(&mut self, h: u16, core: u16) {
        let host = &mut self.hosts[h as usize];
        if !std::mem::take(&mut host.netisr.wake) {
            return;
        }
        // One swi:net thread on a global run queue: an idle core takes it;
        // else another core than the one whose thread queued the packets
        // (that thread outranks swi:net there); else this one.
        let n = host.cores.len() as u16;
        let target = (0..n)
            .find(|&c| c != core && host.cores[c as usize].is_idle())
            .or_else(|| (0..n).find(|&c| c != core))
            .unwrap_or(core);
        host.cores[target as usize].queue_app(SWI_NET);
        self.pending_dispatch.push((h, target));
    }

    /// One segment of `swi:net`: forward up to `RX_SLICE` packets of
    /// `ipintrq` (ip_input, ip_forward, the output driver); listed again
    /// while the queue is not empty.
    pub(super) fn run_swi_net(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
    ) -> (Nanos, Option<Work>, EndAction) {
        let host = &mut self.hosts[h as usize];
        let prof = host.profile;
        let mut cost = prof.context_switch_ns;
        let n = (RX_SLICE as usize).min(host.netisr.queue.len());
        let batch: Vec<(u16, Packet)> = host.netisr.queue.drain(..n).collect();
        host.netisr.stats.swi_net_packets += batch.len() as u64;
        let (mut stack, _) = self.stack(h, Some((core, now)));
        for (port, pkt) in batch {
            // The protocol share the receiving thread did not pay.
            cost += prof.forward_packet_ns.saturating_sub(prof.rx_driver_ns);
            cost += stack.forward_now(now + cost, port, pkt);
        }
        let host = &mut self.hosts[h as usize];
        if host.netisr.queue.is_empty() {
            host.netisr.scheduled = false;
        } else {
            host.cores[core as usize].queue_app(SWI_NET);
        }
        (cost, None, EndAction::None)
    }

    pub(super) fn run_softirq(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        thread: bool,
    ) -> (Nanos, Option<Work>, EndAction) {
        let host = &mut self.hosts[h as usize];
        let prof = host.profile;
        let napi = host.napi;
        let sq = &mut host.softirq[core as usize];
        let mut cost = Nanos::ZERO;
        if thread {
            sq.ksoftirqd_queued = false;
        }
        if !sq.active {
            sq.active = true;
            sq.budget_left = napi.budget as i64;
            sq.started = now;
            cost += prof.softirq_entry_ns;
            if thread {
                cost += prof.context_switch_ns;
            } else if sq.restarts == 0 {
                sq.do_started = now;
            }
        }
        let Some((port, vector)) = sq.poll_list.pop_front() else {
            sq.active = false;
            sq.restarts = 0;
            return (cost, None, EndAction::None);
        };
        if (port, vector) == BACKLOG {
            return self.run_backlog(now, h, core, cost, thread);
        }
        // The driver's deferred work: a NAPI poll, a task or thread pass, a
        // polling tick; then its completion.
        let arch = self.hosts[h as usize].arch;
        let mut k = self.kernel(h, core);
        let at = Poll { now, port, vector };
        let pass = arch.deferred(&mut k, at, cost);
        let (extra, on_end) = arch.complete(&mut k, at, &pass);
        let cost = pass.cost + extra;
        let relist = pass.more.then_some((port, vector));
        if arch.budgeted() {
            return self.net_rx_tail(now, h, core, cost, pass.work, relist, thread, on_end);
        }
        // A task queue or interrupt thread runs until its list is empty; a
        // pass cut into segments goes on before anything else.
        let mid_pass = self.napi_state[port as usize][vector as usize].slice != 0;
        let sq = &mut self.hosts[h as usize].softirq[core as usize];
        if let Some(entry) = relist {
            if mid_pass {
                sq.poll_list.push_front(entry);
            } else {
                sq.poll_list.push_back(entry);
            }
        }
        if sq.poll_list.is_empty() {
            sq.active = false;
            return (cost, None, on_end);
        }
        (cost, Some(Work::Softirq { thread }), on_end)
    }
}
