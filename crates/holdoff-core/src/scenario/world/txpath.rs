//! The kernel's side of the TX path between TCP and the ring: buffers freed
//! by the driver's TX clean going back to their sockets (TCP Small Queues,
//! `stack::tcp::tsq`), the TSQ handler that lets throttled sockets send
//! again, and byte queue limits on each port's TX ring (`host::dql`).
//!
//! Models: a TX clean (`driver::clean_tx`) frees each reclaimed packet's
//! buffer: a TCP data segment's truesize returns to its socket (Linux
//! `tcp_wfree`), and a socket TSQ had throttled is queued for the TSQ
//! handler, which runs once the clean is done (the TSQ tasklet, after the
//! NAPI poll in the same softirq pass) and is charged to the same work. The
//! bytes reclaimed from queue 0 feed its BQL (`netdev_tx_completed_queue`);
//! every post to the ring is counted by it (`netdev_tx_sent_queue`), and
//! while it is over its limit the queue is stopped: packets wait in the
//! qdisc until a completion reopens it.
//!
//! Simplifies: hosts transmit on queue 0 only, so BQL is kept for queue 0;
//! a segment dropped before the ring (a full qdisc) frees its truesize at
//! once, and a socket that drop unthrottles waits for the next TX clean's
//! handler; BQL counts the frame without its FCS (`skb->len`).
//!
//! Units: bytes, times [ns].

use super::World;
use crate::host::driver;
use crate::host::profile::HostProfile;
use crate::packet::{Packet, PktKind};
use crate::scenario::netstack::{flush_tcp, TcpConn};
use crate::stack::tcp::TCP_FRAME_OVERHEAD;
use crate::units::{Nanos, SimTime};

/// Ethernet FCS, counted on the wire but not in `skb->len` [bytes].
const FCS_BYTES: u32 = 4;

/// Bytes BQL counts for a packet (`skb->len`: the frame without FCS).
fn bql_bytes(pkt: &Packet) -> u32 {
    pkt.frame_bytes.saturating_sub(FCS_BYTES)
}

/// `tcp_wfree` for a packet sent from `port`: a TCP data segment's truesize
/// goes back to its socket; a socket TSQ had throttled joins `wake`.
fn free_tcp(conns: &mut [TcpConn], wake: &mut Vec<(u16, u8)>, port: u16, pkt: &Packet) {
    if pkt.kind != PktKind::Tcp || pkt.frame_bytes <= TCP_FRAME_OVERHEAD {
        return;
    }
    let Some(c) = conns.get_mut(pkt.flow as usize) else {
        return;
    };
    let Some(side) = c.port.iter().position(|&p| p == port) else {
        return;
    };
    let key = (pkt.flow, side as u8);
    if c.ep[side].tx_freed(pkt.frame_bytes - TCP_FRAME_OVERHEAD) && !wake.contains(&key) {
        wake.push(key);
    }
}

impl World {
    /// Reclaim the completed TX descriptors of (`port`, `vector`) at `now`
    /// and free their buffers (TSQ, BQL; see the module doc). Returns
    /// (cost, descriptors).
    pub(super) fn reclaim_tx(
        &mut self,
        now: SimTime,
        port: u16,
        vector: u16,
        prof: &HostProfile,
    ) -> (Nanos, u32) {
        let conns = &mut self.conns;
        let wake = &mut self.tsq_wake;
        let mut bytes = 0u64;
        let (cost, n) =
            driver::clean_tx_with(&mut self.ports[port as usize], vector, prof, |q, pkt| {
                if q == 0 {
                    bytes += bql_bytes(pkt) as u64;
                }
                free_tcp(conns, wake, port, pkt);
            });
        if let Some(d) = &mut self.bql[port as usize] {
            if bytes > 0 {
                d.completed(now, bytes as u32);
            }
        }
        (cost, n)
    }

    /// The TSQ handler at `t`: each socket a freed buffer unthrottled sends
    /// what its windows and TSQ now allow. Returns the CPU time.
    pub(super) fn tsq_run(&mut self, t: SimTime, prof: &HostProfile) -> Nanos {
        if self.tsq_wake.is_empty() {
            return Nanos::ZERO;
        }
        let mut wake = std::mem::take(&mut self.tsq_wake);
        let mut cost = Nanos::ZERO;
        for &(conn, side) in &wake {
            self.conns[conn as usize].ep[side as usize].tsq_handler(t + cost, &mut self.sout.tcp);
            cost += flush_tcp(
                &self.conns,
                &self.sched,
                conn,
                side,
                t + cost,
                prof,
                &mut self.ledger,
                &mut self.sout,
            );
        }
        wake.clear();
        self.tsq_wake = wake;
        cost
    }

    /// BQL has not stopped `port`'s TX queue (always true without BQL).
    pub(super) fn tx_queue_open(&self, port: u16) -> bool {
        self.bql[port as usize]
            .as_ref()
            .is_none_or(|d| d.avail() >= 0)
    }

    /// A packet was posted to `port`'s ring (`netdev_tx_sent_queue`).
    pub(super) fn bql_sent(&mut self, port: u16, pkt: &Packet) {
        if let Some(d) = &mut self.bql[port as usize] {
            d.queued(bql_bytes(pkt));
        }
    }

    /// A packet from `port` was dropped before the ring: its buffer is freed.
    pub(super) fn tx_dropped(&mut self, port: u16, pkt: &Packet) {
        free_tcp(&mut self.conns, &mut self.tsq_wake, port, pkt);
    }
}
