//! The data path between the driver and the stack: received packets
//! cleaned into the stack, the outputs of a segment's stack work (sends,
//! wakes, TCP timers), transmit and the interface queue (qdisc).
//!
//! Units: times [ns].

use super::{Ev, World};
use crate::apps::App;
use crate::host::driver::{self};
use crate::host::profile::HostProfile;
use crate::nic::NicPort;
use crate::packet::{DropReason, Packet};
use crate::scenario::netstack::{Stack, TcpCtx, TxLocks};
use crate::units::{Nanos, SimTime};

impl World {
    /// Clean received packets of (port, vector) through the host's stack.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn stack_rx(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        port: u16,
        vector: u16,
        max: u32,
        cost: Nanos,
        opts: driver::RxOpts,
    ) -> (Nanos, u32) {
        let prof = self.hosts[h as usize].profile;
        let (mut stack, ports) = self.stack(h, Some((core, now)));
        driver::clean_rx_with(
            &mut ports[port as usize],
            port,
            vector,
            max,
            now,
            cost,
            prof,
            opts,
            &mut stack,
        )
    }

    /// The stack of host `h`, and the ports (borrowed beside it). With
    /// `on` = (core, now) and a driver whose locks are modelled, the stack
    /// takes driver locks to transmit.
    pub(super) fn stack(
        &mut self,
        h: u16,
        on: Option<(u16, SimTime)>,
    ) -> (Stack<'_>, &mut [NicPort]) {
        let host = &mut self.hosts[h as usize];
        let (prof, udp_sink) = (host.profile, host.udp_sink);
        let tx_locks = match on {
            Some((core, now)) if host.arch.locks() => Some(TxLocks {
                locks: &mut self.locks,
                core,
                now,
            }),
            _ => None,
        };
        let netisr: Option<&mut dyn crate::scenario::netstack::IpQueue> = if host.netisr.queued {
            Some(&mut host.netisr)
        } else {
            None
        };
        let stack = Stack {
            host: h,
            prof,
            apps: &mut self.apps,
            sched: &self.sched,
            conns: &mut self.conns,
            udp_sink,
            forward_to: &self.forward_to,
            ledger: &mut self.ledger,
            out: &mut self.sout,
            tx_locks,
            netisr,
        };
        (stack, &mut self.ports)
    }

    /// The socket-level context applications run against, and the
    /// applications (borrowed beside it).
    pub(super) fn app_io(&mut self, prof: &'static HostProfile) -> (TcpCtx<'_>, &mut [App]) {
        let io = TcpCtx {
            prof,
            sched: &self.sched,
            conns: &mut self.conns,
            ledger: &mut self.ledger,
            out: &mut self.sout,
        };
        (io, &mut self.apps)
    }

    /// Transmissions, wakes and TCP timers produced by a segment's stack work.
    pub(super) fn post_segment(&mut self, now: SimTime) {
        while let Some((h, core)) = self.pending_dispatch.pop() {
            if self.hosts[h as usize].cores[core as usize].is_idle() {
                self.dispatch(now, h, core);
            }
        }
        if self.sout.is_empty() {
            return;
        }
        let mut sends = std::mem::take(&mut self.sout.sends);
        for &(t, port, pkt) in &sends {
            self.transmit(t, port, pkt);
        }
        sends.clear();
        self.sout.sends = sends;
        let mut wakes = std::mem::take(&mut self.sout.wakes);
        for &(t, app) in &wakes {
            let a = &mut self.sched[app as usize];
            if !a.runnable && !a.wake_pending {
                a.wake_pending = true;
                self.q.schedule(t, Ev::Wake { app });
            }
        }
        wakes.clear();
        self.sout.wakes = wakes;
        let mut timers = std::mem::take(&mut self.sout.timers);
        for &(conn, side) in &timers {
            let c = &mut self.conns[conn as usize];
            let want = c.ep[side as usize].next_timer();
            let t = &mut c.timer[side as usize];
            if t.deadline() != want {
                match want {
                    Some(at) => {
                        let gen = t.arm(at);
                        self.q.schedule(at, Ev::TcpTimer { conn, side, gen });
                    }
                    None => t.cancel(),
                }
            }
        }
        timers.clear();
        self.sout.timers = timers;
    }

    /// Hand a packet to the driver at `t`: onto the TX ring if the interface
    /// queue is empty, BQL has not stopped it and the ring has room, else
    /// into the queue, else drop.
    pub(super) fn transmit(&mut self, t: SimTime, port: u16, pkt: Packet) {
        let h = self.port_host[port as usize] as usize;
        if self.hosts[h].arch.locks() {
            // FreeBSD em_encap: "Force a cleanup if number of TX descriptors
            // available hits the threshold" (EM_TX_CLEANUP_THRESHOLD =
            // num_tx_desc / 8): em_txeof from the transmit path, charged to
            // the segment that sent (its end moves later).
            let p = &self.ports[port as usize];
            if p.tx_free(0) <= p.cfg.tx_ring / 8 {
                let prof = self.hosts[h].profile;
                let (cost, _) = self.reclaim_tx(t, port, 0, prof);
                self.charge_sender(cost);
            }
        }
        let open = self.tx_queue_open(port);
        let q = &mut self.qdisc[port as usize];
        let p = &mut self.ports[port as usize];
        if q.is_empty() && open && p.tx_post(0, pkt) {
            self.bql_sent(port, &pkt);
            let owner = self.sending.and_then(|(h, c)| {
                self.hosts[h as usize].cores[c as usize]
                    .running
                    .map(|r| post_owner(c, r.seg))
            });
            let p = &mut self.ports[port as usize];
            p.set_post_owner(owner);
            p.tx_kick(t, 0, &mut self.out);
            p.set_post_owner(None);
            self.flush(port);
        } else if (q.len() as u32) < self.hosts[h].txqueuelen {
            q.push_back(pkt);
        } else {
            self.ledger.drop(DropReason::TxRingFull);
            self.tx_dropped(port, &pkt);
        }
    }

    /// The running segment of (`h`, `core`) was preempted at `now`: its
    /// later posts wait for it (the moderation samples' TX counts; the
    /// frames keep their stamped times).
    pub(super) fn hold_posts(&mut self, h: u16, core: u16, now: SimTime) {
        let seg = self.hosts[h as usize].cores[core as usize].preempted.take();
        self.for_host_ports(h, core, seg, |p, owner| p.hold_posted(owner, now));
    }

    /// A preempted segment of (`h`, `core`) resumed at `now`: its held
    /// posts follow.
    pub(super) fn resumed_posts(&mut self, h: u16, core: u16, now: SimTime) {
        let seg = self.hosts[h as usize].cores[core as usize].resumed.take();
        self.for_host_ports(h, core, seg, |p, owner| p.resume_posted(owner, now));
    }

    /// `f` on each port of host `h` with the post owner of segment `seg` of
    /// `core` (nothing when there is no segment).
    fn for_host_ports(
        &mut self,
        h: u16,
        core: u16,
        seg: Option<u32>,
        mut f: impl FnMut(&mut NicPort, u64),
    ) {
        let Some(seg) = seg else {
            return;
        };
        let owner = post_owner(core, seg);
        for &port in &self.hosts[h as usize].ports {
            f(&mut self.ports[port as usize], owner);
        }
    }

    /// Charge `cost` to the segment whose sends are being transmitted: it
    /// ends that much later.
    fn charge_sender(&mut self, cost: Nanos) {
        let Some((h, core)) = self.sending else {
            return;
        };
        let c = &mut self.hosts[h as usize].cores[core as usize];
        if let Some(r) = &mut c.running {
            r.end += cost;
            c.gen = c.gen.wrapping_add(1);
            let (end, gen) = (r.end, c.gen);
            self.q.schedule(end, Ev::CoreDone { host: h, core, gen });
        }
    }

    /// After TX cleaning: move queued packets onto the ring (one TDT write)
    /// while the ring has room and BQL keeps the queue open.
    pub(super) fn drain_qdisc(&mut self, t: SimTime, port: u16, prof: &HostProfile) -> Nanos {
        let q = &mut self.qdisc[port as usize];
        if q.is_empty() {
            return Nanos::ZERO;
        }
        let p = &mut self.ports[port as usize];
        let mut bql = self.bql[port as usize].as_mut();
        let mut n = 0;
        while let Some(&pkt) = q.front() {
            if bql.as_ref().is_some_and(|d| d.avail() < 0) || !p.tx_post(0, pkt) {
                break;
            }
            q.pop_front();
            n += 1;
            if let Some(d) = bql.as_mut() {
                d.queued(pkt.frame_bytes.saturating_sub(4));
            }
        }
        if n == 0 {
            return Nanos::ZERO;
        }
        p.tx_kick(t, 0, &mut self.out);
        self.flush(port);
        prof.mmio_write_ns
    }
}

/// The id a NIC keeps for the CPU segment that posted a send: its core and
/// the segment's `seg` (unique per core).
fn post_owner(core: u16, seg: u32) -> u64 {
    (u64::from(core) << 32) | u64::from(seg)
}
