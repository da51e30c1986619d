//! Packets and drop reasons: what moves through the model and why it may die.
//!
//! Models: a packet is a small `Copy` record (no payload bytes): its frame
//! size on the wire, what it is (UDP, ICMP echo request/reply), which flow or
//! application it belongs to, the low bits of its RSS hash, a sequence
//! number and its creation time. Being
//! `Copy` and fixed-size, packets live in preallocated ring slots and in
//! events; nothing is allocated per packet.
//!
//! Units: `frame_bytes` is destination address to FCS [bytes].

use crate::units::SimTime;
use serde::Serialize;

/// What a packet is, as far as the stack cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PktKind {
    Udp,
    IcmpEchoRequest,
    IcmpEchoReply,
    /// A TCP segment: `seq`, `ack`, `wnd` are its header fields, the payload
    /// length is `frame_bytes - 70`, `flow` is the connection.
    Tcp,
}

/// One frame.
/// Header + FCS bytes around a TCP payload with timestamps [bytes]:
/// Ethernet 14, IPv4 20, TCP 20, timestamp option 12, FCS 4.
pub const TCP_FRAME_OVERHEAD: u32 = 70;

/// Most frames GRO merges into one receive (Linux `MAX_GRO_SKBS` is per
/// NAPI instance; a merged skb holds at most 64 KiB and `MAX_SKB_FRAGS`
/// = 17 page fragments, which bounds it to 17 full frames).
pub const GRO_MAX_FRAMES: u32 = 17;
/// Most payload one GRO receive holds [bytes] (64 KiB).
pub const GRO_MAX_BYTES: u32 = 65_536;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// When the sender created it (generator emission or host send call).
    pub created: SimTime,
    /// Frame length, destination address to FCS [bytes].
    pub frame_bytes: u32,
    /// Sequence number within its flow (TCP: sequence number, low 32 bits).
    pub seq: u32,
    /// TCP acknowledgement number (low 32 bits); 0 otherwise.
    pub ack: u32,
    /// TCP advertised window [bytes]; 0 otherwise.
    pub wnd: u32,
    /// Flow id: the generator's flow (0 to `flows - 1`), the TCP connection
    /// or the ping application that owns the exchange.
    pub flow: u16,
    /// The RSS hash the receiving port computes over the frame's headers,
    /// precomputed by the sender from the flow's 5-tuple (`nic::rss::tag`:
    /// bit 15 set, bits 0-14 the hash's low bits); 0 when the frame carries
    /// no 5-tuple (TCP segments, ICMP and UDP sent by modelled hosts) or
    /// the receiving port does not hash.
    pub rss: u16,
    pub kind: PktKind,
    /// TCP segmentation offload: this frame is not the last one the NIC
    /// cut from one TSO send (its descriptor carries no RS, so its
    /// write-back raises no TX completion).
    pub tso_more: bool,
    /// A replayed frame matching its generator's `latency_of` selector:
    /// the sink that reads it records its latency apart as well.
    pub selected: bool,
}

impl Packet {
    /// TCP payload [bytes] (0 for a pure ACK or a non-TCP packet).
    pub fn tcp_payload(&self) -> u32 {
        if self.kind == PktKind::Tcp {
            self.frame_bytes.saturating_sub(TCP_FRAME_OVERHEAD)
        } else {
            0
        }
    }

    /// A packet without TCP header fields (UDP, ICMP): `ack` and `wnd` 0,
    /// not part of a TSO send.
    pub const fn datagram(
        kind: PktKind,
        created: SimTime,
        frame_bytes: u32,
        seq: u32,
        flow: u16,
    ) -> Packet {
        Packet {
            created,
            frame_bytes,
            seq,
            ack: 0,
            wnd: 0,
            flow,
            rss: 0,
            kind,
            tso_more: false,
            selected: false,
        }
    }

    pub const EMPTY: Packet = Packet {
        created: SimTime::ZERO,
        frame_bytes: 0,
        seq: 0,
        ack: 0,
        wnd: 0,
        flow: 0,
        rss: 0,
        kind: PktKind::Udp,
        tso_more: false,
        selected: false,
    };
}

/// Why a packet was dropped. Every reason is reported, zero or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The NIC's on-chip receive buffer was full (packet-rate limit exceeded).
    RxFifoOverrun,
    /// A received frame found no free RX descriptor.
    RxRingFull,
    /// The driver found its TX ring full.
    TxRingFull,
    /// The destination socket's receive buffer was full.
    SocketFull,
    /// No application listens for this packet on the receiving host.
    NoListener,
    /// The per-CPU input backlog of a non-NAPI driver was full (netdev_max_backlog).
    BacklogFull,
    /// A replayed frame was longer than the link MTU (+ 18 bytes of header
    /// and FCS): the receiving MAC counts it as oversize and drops it.
    FrameOverMtu,
}

impl DropReason {
    pub const ALL: [DropReason; 7] = [
        DropReason::RxFifoOverrun,
        DropReason::RxRingFull,
        DropReason::TxRingFull,
        DropReason::SocketFull,
        DropReason::NoListener,
        DropReason::BacklogFull,
        DropReason::FrameOverMtu,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::RxFifoOverrun => "rx_fifo_overrun",
            DropReason::RxRingFull => "rx_ring_full",
            DropReason::TxRingFull => "tx_ring_full",
            DropReason::SocketFull => "socket_full",
            DropReason::NoListener => "no_listener",
            DropReason::BacklogFull => "backlog_full",
            DropReason::FrameOverMtu => "frame_over_mtu",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}
