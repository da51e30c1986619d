//! Where packets meet sockets: the per-host stack glue used by the world
//! during one work segment. UDP goes to the host's sink socket; ICMP echo
//! requests are answered in softirq context; echo replies go to the ping
//! process; TCP segments go to their connection's endpoint, whose output
//! segments are sent and whose readers/writers are woken.
//!
//! Costs charged here (host profile): `tx_packet_ns` (`tx_ack_ns` for a
//! pure ACK where the profile sets it) + one TDT write (`mmio_write_ns`)
//! per packet sent, `wakeup_ns` per application woken.
//! Receive costs (`rx_packet_ns`, `rx_ack_ns` for a pure ACK) are charged
//! by the driver through `rx_cost`.
//!
//! The ping process's socket holds at most [`PING_SOCKET_PACKETS`] replies
//! not yet read; more are dropped (`socket_full`), as a full receive
//! buffer drops them in the kernel.

use crate::apps::tcp_apps::{TcpIo, Wait};
use crate::apps::{App, AppKind, AppSched};
use crate::engine::Timer;
use crate::host::driver::StackSink;
use crate::host::lock::{LockCosts, Mutex};
use crate::host::profile::HostProfile;
use crate::metrics::Ledger;
use crate::packet::{DropReason, Packet, PktKind};
use crate::stack::tcp::{Segment, TcpEndpoint, TcpOut, TCP_FRAME_OVERHEAD};
use crate::units::{Nanos, SimTime};

/// Echo replies a ping socket queues before dropping: Linux sizes the
/// default receive buffer (`net.core.rmem_default`) for 256 packets
/// (`_SK_MEM_PACKETS` in net/core/sock.c).
pub const PING_SOCKET_PACKETS: usize = 256;

/// One TCP connection between two hosts.
pub struct TcpConn {
    pub ep: [TcpEndpoint; 2],
    pub host: [u16; 2],
    /// Local port (global index) of each side.
    pub port: [u16; 2],
    /// Application on each side.
    pub app: [u16; 2],
    pub timer: [Timer; 2],
    /// TCP segmentation offload on each side's port (`nics[].tso`).
    pub tso: [bool; 2],
}

/// Payload one TSO send may carry [bytes]: Linux `gso_max_size` (64 KiB);
/// the NIC cuts it into MSS-sized frames.
pub const TSO_MAX_BYTES: u32 = 65_536;

/// Buffers a segment's stack work fills, drained by the world afterwards.
#[derive(Default)]
pub struct StackOut {
    /// (time, port, packet) to transmit.
    pub sends: Vec<(SimTime, u16, Packet)>,
    /// (time, app) to wake.
    pub wakes: Vec<(SimTime, u16)>,
    /// (conn, side) whose TCP timer may have changed.
    pub timers: Vec<(u16, u8)>,
    pub tcp: TcpOut,
}

impl StackOut {
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty() && self.wakes.is_empty() && self.timers.is_empty()
    }
}

fn seg_packet(conn: u16, s: &Segment, t: SimTime) -> Packet {
    Packet {
        created: t,
        frame_bytes: s.frame_bytes(),
        seq: s.seq,
        ack: s.ack,
        wnd: s.wnd,
        flow: conn,
        rss: 0,
        kind: PktKind::Tcp,
        tso_more: false,
        selected: false,
    }
}

/// Queue the endpoint's output segments for transmission from `t`, one
/// send cost apart; returns the CPU time spent. Marks readers/writers to
/// wake according to what they wait for.
#[allow(clippy::too_many_arguments)]
pub fn flush_tcp(
    conns: &[TcpConn],
    sched: &[AppSched],
    conn: u16,
    side: u8,
    t: SimTime,
    prof: &HostProfile,
    ledger: &mut Ledger,
    out: &mut StackOut,
) -> Nanos {
    let c = &conns[conn as usize];
    let mut cost = Nanos::ZERO;
    let port = c.port[side as usize];
    let tso = c.tso[side as usize];
    let n = out.tcp.segs.len();
    // With TSO, consecutive data segments of one flush go down the stack as
    // one send of up to TSO_MAX_BYTES: one pass through the send path and one
    // TDT write for the whole send; the NIC cuts the frames, and only the
    // last descriptor carries RS (`tso_more` on the others).
    let mut burst_bytes = 0u32;
    for i in 0..n {
        let s = out.tcp.segs[i];
        let continues = tso
            && i > 0
            && s.len > 0
            && burst_bytes > 0
            && burst_bytes + s.len <= TSO_MAX_BYTES
            && {
                let p = out.tcp.segs[i - 1];
                p.seq.wrapping_add(p.len) == s.seq
            };
        if continues {
            burst_bytes += s.len;
        } else {
            cost += prof.tx_tcp_ns(s.len) + prof.mmio_write_ns;
            burst_bytes = if tso { s.len } else { 0 };
        }
        let more = tso && s.len > 0 && i + 1 < n && {
            let q = out.tcp.segs[i + 1];
            q.len > 0 && q.seq == s.seq.wrapping_add(s.len) && burst_bytes + q.len <= TSO_MAX_BYTES
        };
        ledger.injected += 1;
        let mut pkt = seg_packet(conn, &s, t + cost);
        pkt.tso_more = more;
        out.sends.push((t + cost, port, pkt));
    }
    out.tcp.segs.clear();
    let app = c.app[side as usize];
    let a = &sched[app as usize];
    let want = match a.waits {
        Some(Wait::Readable) => out.tcp.readable,
        Some(Wait::Writable) => out.tcp.writable,
        _ => false,
    };
    out.tcp.readable = false;
    out.tcp.writable = false;
    if want && !a.runnable && !a.wake_pending && !out.wakes.iter().any(|w| w.1 == app) {
        out.wakes.push((t + cost, app));
        cost += prof.wakeup_ns;
    }
    out.timers.push((conn, side));
    cost
}

/// The stack of one host during one segment.
pub struct Stack<'a> {
    pub host: u16,
    pub prof: &'a HostProfile,
    pub apps: &'a mut [App],
    pub sched: &'a [AppSched],
    pub conns: &'a mut [TcpConn],
    pub udp_sink: Option<u16>,
    /// For each port, where IP forwarding sends what it receives.
    pub forward_to: &'a [Option<u16>],
    pub ledger: &'a mut Ledger,
    pub out: &'a mut StackOut,
    /// When the host's driver models its locks (`DriverArch::locks`): every
    /// port's driver lock, the core this stack work runs on and the current
    /// time. The forwarding path then takes the output port's lock to
    /// transmit, as FreeBSD's `em_start` does (`EM_LOCK`).
    pub tx_locks: Option<TxLocks<'a>>,
    /// FreeBSD netisr when forwarded packets are queued (fast-forwarding
    /// off, `net.isr.direct = 0`): received packets to forward go to
    /// `ipintrq` for `swi:net` instead.
    pub netisr: Option<&'a mut dyn IpQueue>,
}

/// A protocol input queue the stack can hand packets to (FreeBSD `ipintrq`).
pub trait IpQueue {
    /// Queue `pkt` received on `port`, or drop it when full (booked in
    /// `ledger`). Returns the CPU time of the hand-off.
    fn enqueue(&mut self, port: u16, pkt: Packet, prof: &HostProfile, ledger: &mut Ledger)
        -> Nanos;
}

/// The driver locks the forwarding path takes (see `Stack::tx_locks`).
pub struct TxLocks<'a> {
    pub locks: &'a mut [Mutex],
    pub core: u16,
    pub now: SimTime,
}

impl Stack<'_> {
    /// The socket-call context over this stack's connections.
    fn tcp(&mut self) -> TcpCtx<'_> {
        TcpCtx {
            prof: self.prof,
            sched: self.sched,
            conns: self.conns,
            ledger: self.ledger,
            out: self.out,
        }
    }

    fn wake(&mut self, t: SimTime, app: u16) -> Nanos {
        let a = &self.sched[app as usize];
        if a.runnable || a.wake_pending || self.out.wakes.iter().any(|w| w.1 == app) {
            Nanos::ZERO
        } else {
            self.out.wakes.push((t, app));
            self.prof.wakeup_ns
        }
    }
}

impl Stack<'_> {
    /// IP forwarding of `pkt` received on `port`, at `t`: the profile's
    /// forward cost covers the whole path from RX descriptor to TX
    /// descriptor and the receive side already charged all of it
    /// (`rx_cost` returns `forward_packet_ns` for a forwarded packet); what
    /// is left is the output driver's start (TDT write; under the output
    /// port's lock when the driver's locks are modelled).
    pub fn forward_now(&mut self, t: SimTime, port: u16, pkt: Packet) -> Nanos {
        let out = self.forward_to[port as usize].expect("a forwarded port");
        let mut cost = Nanos::ZERO;
        if let Some(tl) = &mut self.tx_locks {
            // em_start(out): EM_LOCK; em_start_locked (if_snd dequeue,
            // em_encap, TDT write); EM_UNLOCK. Waiting for the lock (the
            // other NIC's thread may hold it) delays this thread.
            let hold = self.prof.tx_driver_ns + self.prof.mmio_write_ns;
            let m = &mut tl.locks[out as usize];
            m.prune(tl.now);
            let g = m.acquire(t + cost, tl.core, hold, &LockCosts::of(self.prof));
            cost += g.elapsed() + self.prof.lock_ns + hold;
        } else {
            cost += self.prof.mmio_write_ns;
        }
        self.out.sends.push((t + cost, out, pkt));
        cost
    }
}

impl StackSink for Stack<'_> {
    fn gro_merged(&mut self, frames: u32) {
        // The stack counted the merged receive once; the ledger counts frames.
        self.ledger.delivered += u64::from(frames.saturating_sub(1));
    }

    fn rx_cost(&self, port: u16, pkt: &Packet, prof: &HostProfile) -> Nanos {
        if pkt.kind == PktKind::Udp && self.forward_to[port as usize].is_some() {
            if self.netisr.is_some() {
                // Driver and ether_input up to netisr_queue; swi:net does the rest.
                return prof.rx_driver_ns;
            }
            prof.forward_packet_ns
        } else if pkt.kind == PktKind::Tcp {
            prof.rx_tcp_ns(pkt.frame_bytes.saturating_sub(TCP_FRAME_OVERHEAD))
        } else {
            prof.rx_packet_ns
        }
    }

    fn deliver(&mut self, t: SimTime, port: u16, pkt: Packet) -> Nanos {
        if pkt.kind == PktKind::Udp && self.forward_to[port as usize].is_some() {
            if let Some(n) = &mut self.netisr {
                return n.enqueue(port, pkt, self.prof, self.ledger);
            }
            return self.forward_now(t, port, pkt);
        }
        match pkt.kind {
            PktKind::Udp => {
                let Some(app) = self.udp_sink else {
                    self.ledger.drop(DropReason::NoListener);
                    return Nanos::ZERO;
                };
                let AppKind::UdpSink(s) = &mut self.apps[app as usize].kind else {
                    unreachable!("udp_sink index points at a sink")
                };
                if s.queued_bytes + pkt.frame_bytes > s.rcvbuf_bytes {
                    self.ledger.drop(DropReason::SocketFull);
                    return Nanos::ZERO;
                }
                s.queued_bytes += pkt.frame_bytes;
                s.queue
                    .push_back((pkt.created, pkt.frame_bytes, pkt.selected));
                self.wake(t, app)
            }
            PktKind::IcmpEchoRequest => {
                // Answered in softirq context: the request is consumed, a reply is sent.
                self.ledger.delivered += 1;
                self.ledger.injected += 1;
                let reply = Packet {
                    kind: PktKind::IcmpEchoReply,
                    ..pkt
                };
                let cost = self.prof.tx_packet_ns + self.prof.mmio_write_ns;
                self.out.sends.push((t + cost, port, reply));
                cost
            }
            PktKind::IcmpEchoReply => {
                let app = pkt.flow;
                match self.apps.get_mut(app as usize) {
                    Some(App {
                        kind: AppKind::Ping(p),
                        host,
                        ..
                    }) if *host == self.host => {
                        if p.replies.len() >= PING_SOCKET_PACKETS {
                            self.ledger.drop(DropReason::SocketFull);
                            return Nanos::ZERO;
                        }
                        p.replies.push_back(pkt);
                        self.wake(t, app)
                    }
                    _ => {
                        self.ledger.drop(DropReason::NoListener);
                        Nanos::ZERO
                    }
                }
            }
            PktKind::Tcp => {
                let conn = pkt.flow;
                let Some(c) = self.conns.get(conn as usize) else {
                    self.ledger.drop(DropReason::NoListener);
                    return Nanos::ZERO;
                };
                let side = if c.host[1] == self.host { 1u8 } else { 0u8 };
                // Whether the reader sleeps in a read of this socket (the
                // 2.6.6 prequeue rule, `stack::tcp::linux26`).
                let a = &self.sched[c.app[side as usize] as usize];
                let waiting = a.waits == Some(Wait::Readable) && !a.runnable;
                self.conns[conn as usize].ep[side as usize].reader_waiting = waiting;
                self.ledger.delivered += 1;
                let seg = Segment {
                    seq: pkt.seq,
                    len: pkt.frame_bytes - TCP_FRAME_OVERHEAD,
                    ack: pkt.ack,
                    wnd: pkt.wnd,
                };
                let (_, cost) = self.tcp().call(t, conn, side, |ep, out| {
                    ep.on_segment(t, seg, out);
                    0
                });
                cost
            }
        }
    }
}

/// Socket calls of applications, as `TcpIo`.
pub struct TcpCtx<'a> {
    pub prof: &'a HostProfile,
    pub sched: &'a [AppSched],
    pub conns: &'a mut [TcpConn],
    pub ledger: &'a mut Ledger,
    pub out: &'a mut StackOut,
}

impl TcpCtx<'_> {
    /// One socket call on `side` of `conn` at `t`: the endpoint's part, then
    /// the segments it produced sent (their cost returned with its result).
    fn call(
        &mut self,
        t: SimTime,
        conn: u16,
        side: u8,
        f: impl FnOnce(&mut TcpEndpoint, &mut TcpOut) -> u64,
    ) -> (u64, Nanos) {
        let n = f(
            &mut self.conns[conn as usize].ep[side as usize],
            &mut self.out.tcp,
        );
        let cost = flush_tcp(
            self.conns,
            self.sched,
            conn,
            side,
            t,
            self.prof,
            self.ledger,
            self.out,
        );
        (n, cost)
    }
}

impl TcpIo for TcpCtx<'_> {
    fn write(&mut self, t: SimTime, conn: u16, side: u8, n: u64) -> (u64, Nanos) {
        self.call(t, conn, side, |ep, out| ep.app_write(t, n, out))
    }

    fn read(&mut self, t: SimTime, conn: u16, side: u8, n: u64) -> (u64, Nanos) {
        self.call(t, conn, side, |ep, out| ep.app_read(t, n, out))
    }

    fn readable(&self, conn: u16, side: u8) -> u64 {
        self.conns[conn as usize].ep[side as usize].readable() as u64
    }
}
