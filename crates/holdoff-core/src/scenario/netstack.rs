//! Where packets meet sockets: the per-host stack glue used by the world
//! during one work segment. UDP goes to the host's sink socket; ICMP echo
//! requests are answered in softirq context; echo replies go to the ping
//! process; TCP segments go to their connection's endpoint, whose output
//! segments are sent and whose readers/writers are woken.
//!
//! Costs charged here (host profile): `tx_packet_ns` (`tx_ack_ns` for a
//! pure ACK where the profile sets it) + one TDT write (`mmio_write_ns`)
//! per packet sent, `wakeup_ns` per application woken. A read's segments
//! go out at the start of the read, or after the copy of the bytes it
//! returns (`copy_ps_per_byte`, charged to the application) when the
//! endpoint has `linux26_ack_after_copy` (2.6.6 `tcp_recvmsg` copies, then
//! `cleanup_rbuf` sends).
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
        // Linux 2.6.6 tcp_recvmsg copies what the read returns
        // (tcp_prequeue_process, skb_copy_datagram_iovec) and only then
        // calls cleanup_rbuf, which sends the read's ACK or window update:
        // with `linux26_ack_after_copy` those segments leave after the copy
        // the application is charged for (`apps::tcp_apps`), not before it.
        let ep = &self.conns[conn as usize].ep[side as usize];
        let at = if ep.cfg.linux26_ack_after_copy {
            let got = u64::from(ep.readable()).min(n);
            t + Nanos(got * self.prof.copy_ps_per_byte / 1000)
        } else {
            t
        };
        self.call(at, conn, side, |ep, out| ep.app_read(at, n, out))
    }

    fn readable(&self, conn: u16, side: u8) -> u64 {
        self.conns[conn as usize].ep[side as usize].readable() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::tcp_apps::TcpIo;
    use crate::apps::AppSched;
    use crate::stack::tcp::TcpConfig;

    const MSS: u64 = 1448;

    /// A connection whose side 1 has taken `n` full in-order segments while
    /// its reader was blocked in recv() (the 2.6.6 prequeue rule: no ACK
    /// yet), with the read-timing rule on or off.
    fn conn_with_unread(n: u64, after_copy: bool) -> TcpConn {
        let cfg = TcpConfig {
            linux26_prequeue: true,
            linux26_ack_after_copy: after_copy,
            ..TcpConfig::default()
        };
        let mut rx = TcpEndpoint::new(cfg.clone());
        rx.set_interactive();
        for i in 0..n {
            let mut out = TcpOut::default();
            rx.reader_waiting = true;
            let seg = Segment {
                seq: (i * MSS) as u32,
                len: MSS as u32,
                ack: 0,
                wnd: 65_160,
            };
            rx.on_segment(SimTime(i * 12_000), seg, &mut out);
            assert!(
                out.segs.is_empty(),
                "eaten data is acknowledged by the read"
            );
        }
        TcpConn {
            ep: [TcpEndpoint::new(cfg), rx],
            host: [0, 1],
            port: [0, 1],
            app: [0, 1],
            timer: [Timer::default(); 2],
            tso: [false; 2],
        }
    }

    /// The read's ACK: (bytes read, time the ACK leaves, acknowledged seq).
    fn read_ack(after_copy: bool, n: u64, prof: &HostProfile, t0: SimTime) -> (u64, SimTime, u32) {
        let mut conns = vec![conn_with_unread(n, after_copy)];
        let sched = [AppSched::default(); 2];
        let mut ledger = Ledger::default();
        let mut out = StackOut::default();
        let mut io = TcpCtx {
            prof,
            sched: &sched,
            conns: &mut conns,
            ledger: &mut ledger,
            out: &mut out,
        };
        let (got, _) = io.read(t0, 0, 1, u64::MAX);
        assert_eq!(out.sends.len(), 1, "one cumulative ACK");
        let (at, _, pkt) = out.sends[0];
        (got, at, pkt.ack)
    }

    #[test]
    fn the_reads_ack_leaves_after_the_copy_of_what_it_read() {
        // 2.6.6 tcp_recvmsg: tcp_prequeue_process copies every prequeued
        // segment to the reader (tcp_rcv_established's direct copy), the
        // loop ends, and only then cleanup_rbuf sends the ACK. So the ACK
        // of n full segments leaves n x 1448 B of copy after the read
        // begins, plus the send of one pure ACK. With the p4-xeon-2004
        // profile (copy 700 ps/B, send 1200 ns + TDT write 100 ns): 12
        // segments are 17376 B = 12163 ns of copy, 24 segments 24326 ns.
        // Rule off: the ACK leaves at the start of the read.
        let prof = &HostProfile::P4_XEON_2004;
        let t0 = SimTime(1_000_000);
        let send = prof.tx_tcp_ns(0) + prof.mmio_write_ns;
        assert_eq!(send, Nanos(1_300));
        for (n, copy_ns) in [(12u64, 12_163u64), (24, 24_326)] {
            assert_eq!(n * MSS * prof.copy_ps_per_byte / 1000, copy_ns);
            let (got, at, ack) = read_ack(true, n, prof, t0);
            assert_eq!((got, ack), (n * MSS, (n * MSS) as u32));
            assert_eq!(at, t0 + Nanos(copy_ns) + send, "{n} segments");
            let (_, at, _) = read_ack(false, n, prof, t0);
            assert_eq!(at, t0 + send, "rule off, {n} segments");
        }
    }
}
