//! The scheduler side of the world: IRQ delivery to a core, dispatch of the
//! highest-priority work, segment execution (interrupt handlers,
//! softirq, applications) and what happens when a segment ends (EOI, unmask).
//! Dispatch, segments and IRQ entry stay together: each calls the others.
//!
//! Units: times [ns].

use super::{Ev, World};
use crate::apps::tcp_apps::{Calls, RpcServer, Wait};
use crate::apps::AppKind;
use crate::host::drivers::{Irq, IrqNext};
use crate::host::{Class, EndAction, Next, Work, HOG, SWI_NET};
use crate::nic::{IntMode, IMS_ENABLE_MASK};
use crate::packet::{Packet, PktKind};
use crate::units::{Nanos, SimTime};

/// Most frames a `udp_send` thread sends in one run before it yields.
const UDP_SEND_BATCH: u32 = 32;

impl World {
    /// An interrupt message or a rising line reached the host.
    pub(super) fn irq_raise(&mut self, now: SimTime, h: u16, li: u16) {
        let host = &mut self.hosts[h as usize];
        let line = &mut host.lines[li as usize];
        if line.apic_masked {
            // Masked in the I/O APIC: a level line is looked at again on unmask.
            return;
        }
        if line.in_service {
            line.replay = true;
            return;
        }
        if line.queued {
            return;
        }
        line.queued = true;
        let core = line.core;
        let c = &mut host.cores[core as usize];
        c.queue_irq(li);
        if c.is_idle() {
            self.dispatch(now, h, core);
        } else if c.should_preempt(Class::HardIrq) {
            c.account(now);
            c.preempt(now);
            self.hold_posts(h, core, now);
            self.dispatch(now, h, core);
        }
    }

    pub(super) fn wake(&mut self, now: SimTime, app: u16) {
        if self.spin[app as usize].is_some() {
            // Busy polling: the loop notices the data at its next iteration.
            self.kick_spin(now, app);
            return;
        }
        let sc = &mut self.sched[app as usize];
        if sc.runnable || sc.waits == Some(Wait::Done) {
            return;
        }
        sc.runnable = true;
        let a = &self.apps[app as usize];
        let (h, core) = (a.host, a.core);
        let c = &mut self.hosts[h as usize].cores[core as usize];
        c.queue_app(app);
        if c.is_idle() {
            self.dispatch(now, h, core);
        }
    }

    /// If the core is idle, start (or resume) its highest-priority work.
    pub(super) fn dispatch(&mut self, now: SimTime, h: u16, core: u16) {
        let c = &mut self.hosts[h as usize].cores[core as usize];
        if !c.is_idle() {
            return;
        }
        c.account(now);
        match c.pick(now) {
            Next::Idle => {}
            Next::Resumed => {
                let end = c.running.expect("resumed").end;
                let gen = c.gen;
                self.q.schedule(end, Ev::CoreDone { host: h, core, gen });
                self.resumed_posts(h, core, now);
            }
            Next::Start(work) => {
                let fresh = c.fresh;
                if fresh && self.wait_for_wakeup(now, h, core, work) {
                    return;
                }
                self.end_own_holds(now, h, core);
                let (cost, next, on_end) = self.run_segment(now, h, core, work);
                let cost = self.vary(now, h, core, work, cost);
                let c = &mut self.hosts[h as usize].cores[core as usize];
                let gen = c.begin(now, work, cost, next, on_end);
                self.q
                    .schedule(now + cost, Ev::CoreDone { host: h, core, gen });
                self.sending = Some((h, core));
                self.post_segment(now);
                self.sending = None;
            }
        }
    }

    /// A thread just taken from a run queue waits out its wake-up latency
    /// (`host::variance`) if its host has one: the core holds it in a wait
    /// and starts it when the wait ends. Returns whether it waits.
    fn wait_for_wakeup(&mut self, now: SimTime, h: u16, core: u16, work: Work) -> bool {
        let host = &mut self.hosts[h as usize];
        let Some(v) = host.variance[core as usize].as_mut() else {
            return false;
        };
        let thread = match work {
            Work::App { app } => app != HOG,
            Work::Softirq { thread } => thread || host.deferred_thread,
            Work::Irq { .. } => false,
        };
        if !thread {
            return false;
        }
        let delay = v.wake_delay(now);
        if delay.is_zero() {
            return false;
        }
        let c = &mut host.cores[core as usize];
        let gen = c.begin_wait(now, work, delay);
        self.q
            .schedule(now + delay, Ev::CoreDone { host: h, core, gen });
        true
    }

    /// A core with variance starts a fresh segment with nothing of its own
    /// suspended: the lock holds its earlier segments reserved end now
    /// (`Mutex::end_own_holds`; a segment drawn shorter than its profile
    /// cost must not leave its core waiting for itself).
    fn end_own_holds(&mut self, now: SimTime, h: u16, core: u16) {
        let host = &self.hosts[h as usize];
        if !host.arch.locks()
            || host.variance[core as usize].is_none()
            || host.cores[core as usize].has_preempted()
        {
            return;
        }
        for &p in &host.ports {
            self.locks[p as usize].end_own_holds(core, now);
        }
        self.icu_locks[h as usize].end_own_holds(core, now);
    }

    /// The duration of a segment of profile cost `cost` that `work` starts
    /// at `now` on `core`: the cost itself, or with the host's variance its
    /// dispersion and the timer ticks that land in it.
    fn vary(&mut self, now: SimTime, h: u16, core: u16, work: Work, cost: Nanos) -> Nanos {
        match self.hosts[h as usize].variance[core as usize].as_mut() {
            Some(v) if work != (Work::App { app: HOG }) => v.segment(now, cost),
            _ => cost,
        }
    }

    pub(super) fn end_action(&mut self, now: SimTime, h: u16, action: EndAction) {
        match action {
            EndAction::None => {}
            EndAction::Unmask { port, vector } => {
                self.ports[port as usize].write_ims(now, vector, IMS_ENABLE_MASK, &mut self.out);
                self.flush(port);
            }
            EndAction::ApicUnmask { irq } => {
                let host = &mut self.hosts[h as usize];
                let line = &mut host.lines[irq as usize];
                line.apic_masked = false;
                for &(p, _) in &line.handlers {
                    self.ports[p as usize].note(crate::nic::RegOp::ApicUnmask);
                }
                let high = line.level
                    && line
                        .handlers
                        .iter()
                        .any(|&(p, _)| self.ports[p as usize].line_high());
                if high {
                    self.irq_raise(now, h, irq);
                }
            }
            EndAction::IrqDone { irq } => {
                let host = &mut self.hosts[h as usize];
                let line = &mut host.lines[irq as usize];
                line.in_service = false;
                let again = if line.apic_masked {
                    false
                } else if line.level {
                    line.replay = false;
                    line.handlers
                        .iter()
                        .any(|&(p, _)| self.ports[p as usize].line_high())
                } else {
                    std::mem::take(&mut line.replay)
                };
                if again {
                    line.queued = true;
                    let core = line.core;
                    host.cores[core as usize].queue_irq(irq);
                }
            }
        }
    }

    /// Execute one segment of `work`: apply its effects, return its cost,
    /// its continuation and what to do when it ends.
    pub(super) fn run_segment(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        work: Work,
    ) -> (Nanos, Option<Work>, EndAction) {
        match work {
            Work::Irq { irq, handler, iter } => self.run_irq(now, h, core, irq, handler, iter),
            Work::Softirq { thread } => self.run_softirq(now, h, core, thread),
            Work::App { app: SWI_NET } => self.run_swi_net(now, h, core),
            Work::App { app: HOG } => {
                // The CPU-bound processes' slice: what they are owed now.
                let c = &mut self.hosts[h as usize].cores[core as usize];
                (c.hog_owed(now).max(Nanos(1)), None, EndAction::None)
            }
            Work::App { app } => self.run_app(now, app),
        }
    }

    /// One step of the interrupt handler `handler` of line `irq`: the
    /// host's driver architecture runs it; the world only keeps the line's
    /// books and walks its handlers.
    pub(super) fn run_irq(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        irq: u16,
        handler: u8,
        iter: u8,
    ) -> (Nanos, Option<Work>, EndAction) {
        let host = &mut self.hosts[h as usize];
        let line = &mut host.lines[irq as usize];
        if handler == 0 && iter == 0 {
            line.queued = false;
            line.in_service = true;
            line.delivered += 1;
        }
        let nh = line.handlers.len() as u8;
        let (port, vector) = line.handlers[handler as usize];
        let arch = host.arch;
        let i = Irq {
            irq,
            handler,
            iter,
            port,
            vector,
            msix: self.ports[port as usize].cfg.mode == IntMode::Msix,
        };
        let (cost, next) = arch.interrupt(&mut self.kernel(h, core), now, i);
        match next {
            IrqNext::NextHandler if handler + 1 < nh => {
                let next = Work::Irq {
                    irq,
                    handler: handler + 1,
                    iter: 0,
                };
                (cost, Some(next), EndAction::None)
            }
            IrqNext::NextHandler | IrqNext::Eoi => (cost, None, EndAction::IrqDone { irq }),
            IrqNext::Again(iter) => (
                cost,
                Some(Work::Irq { irq, handler, iter }),
                EndAction::None,
            ),
        }
    }

    pub(super) fn run_app(&mut self, now: SimTime, app: u16) -> (Nanos, Option<Work>, EndAction) {
        if let AppKind::RpcServer(RpcServer { busy: Some(bp), .. }) = self.apps[app as usize].kind {
            return self.run_busy_server(now, app, bp);
        }
        if let AppKind::RpcOpenServer(srv) = &self.apps[app as usize].kind {
            if let Some(bp) = srv.busy {
                return self.run_busy_server(now, app, bp);
            }
        }
        let h = self.apps[app as usize].host;
        let prof = self.hosts[h as usize].profile;
        self.sched[app as usize].runnable = false;
        self.sched[app as usize].waits = None;
        let cost = prof.context_switch_ns;
        // The NetPIPE peer echoes the message size its client is sending now.
        let np_bytes = match &self.apps[app as usize].kind {
            AppKind::NetpipeServer { client, .. } => match &self.apps[*client as usize].kind {
                AppKind::NetpipeClient(c) => c.current_bytes(),
                _ => 0,
            },
            _ => 0,
        };
        let end = self.end;
        let (mut io, apps) = self.app_io(prof);
        let mut calls = Calls {
            io: &mut io,
            prof,
            now,
        };
        let (cost, wait) = match &mut apps[app as usize].kind {
            AppKind::UdpSink(s) => {
                let mut cost = cost;
                while let Some((created, frame_bytes, selected)) = s.queue.pop_front() {
                    cost += prof.copy_ns(frame_bytes);
                    s.queued_bytes -= frame_bytes;
                    s.received += 1;
                    s.rx_bytes += frame_bytes as u64;
                    let lat_ns = ((now + cost) - created).as_ns();
                    s.latency.record(lat_ns);
                    if selected {
                        s.latency_selected.record(lat_ns);
                    }
                    calls.io.ledger.delivered += 1;
                }
                (cost, None)
            }
            AppKind::Ping(p) => {
                let mut cost = cost;
                if p.send_due {
                    p.send_due = false;
                    cost += prof.tx_packet_ns + prof.copy_ns(p.size_bytes) + prof.mmio_write_ns;
                    let pkt = Packet::datagram(
                        PktKind::IcmpEchoRequest,
                        now,
                        p.frame_bytes(),
                        p.sent as u32,
                        app,
                    );
                    p.sent += 1;
                    calls.io.ledger.injected += 1;
                    calls.io.out.sends.push((now + cost, p.port, pkt));
                }
                while let Some(r) = p.replies.pop_front() {
                    cost += prof.copy_ns(p.size_bytes);
                    p.received += 1;
                    p.rtt.record(((now + cost) - r.created).as_ns());
                    calls.io.ledger.delivered += 1;
                }
                (cost, None)
            }
            AppKind::UdpSend(u) => {
                // The thread sends the frames that fell due since it last
                // ran (a blaster's send loop), each through the send path,
                // at most UDP_SEND_BATCH per run; then it yields and runs
                // again at once if more are due (so a sender slower than
                // its rate is one runnable thread, not one ever longer run).
                let mut cost = cost;
                let mut batch = 0;
                while u.due > 0 && batch < UDP_SEND_BATCH {
                    batch += 1;
                    u.due -= 1;
                    cost +=
                        prof.tx_packet_ns + prof.copy_ns(u.payload_bytes()) + prof.mmio_write_ns;
                    let pkt = Packet::datagram(
                        PktKind::Udp,
                        now + cost,
                        u.frame_bytes,
                        u.sent as u32,
                        app,
                    );
                    u.sent += 1;
                    calls.io.ledger.injected += 1;
                    calls.io.out.sends.push((now + cost, u.port, pkt));
                }
                if u.due > 0 {
                    calls.io.out.wakes.push((now + cost, app));
                }
                (cost, None)
            }
            AppKind::NetpipeClient(c) => {
                let (cost, w) = c.run(&mut calls, cost);
                if w == Wait::Done && self.netpipes_running > 0 {
                    self.netpipes_running -= 1;
                    if self.netpipes_running == 0 {
                        // NetPIPE finished: the run ends when this slice does.
                        self.end = self.end.min(now + cost);
                    }
                }
                (cost, Some(w))
            }
            AppKind::NetpipeServer { srv, .. } => {
                let (cost, w) = srv.run(&mut calls, cost, np_bytes);
                (cost, Some(w))
            }
            AppKind::IperfClient(c) => {
                let (cost, w) = c.run(&mut calls, cost);
                (cost, Some(w))
            }
            AppKind::IperfServer { srv, .. } => {
                let (cost, w) = srv.run(&mut calls, cost);
                (cost, Some(w))
            }
            AppKind::RpcServer(srv) => {
                let (cost, w) = srv.run(&mut calls, cost);
                (cost, Some(w))
            }
            AppKind::RpcOpenServer(srv) => {
                let (cost, w, more) = srv.run(&mut calls, cost);
                if more && now + cost <= end {
                    // Its quantum is used up: run again when the slice ends.
                    self.sched[app as usize].wake_pending = true;
                    self.q.schedule(now + cost, Ev::Wake { app });
                }
                (cost, Some(w))
            }
            AppKind::RpcOpenClient(c) => {
                let (cost, w, next) = c.run(&mut calls, cost);
                // Woken by its sockets or at the next arrival, whichever first.
                let due = c.timer_at != Some(next) && next <= end;
                if due {
                    c.timer_at = Some(next);
                    self.q.schedule(next, Ev::AppTimer { app });
                }
                (cost, Some(w))
            }
            AppKind::RpcClient(c) => {
                let (cost, w, sleep) = c.run(&mut calls, cost);
                if let Some(t) = sleep {
                    if t <= self.end {
                        self.q.schedule(t, Ev::AppTimer { app });
                    }
                    // Sleeping until the timer, not waiting on the socket.
                    self.sched[app as usize].waits = None;
                    return (cost, None, EndAction::None);
                }
                (cost, Some(w))
            }
        };
        self.sched[app as usize].waits = wait;
        (cost, None, EndAction::None)
    }
}
