//! TCP Small Queues (Linux `net/ipv4/tcp_output.c`
//! `tcp_small_queue_check`, `tcp_wfree`, `tcp_tsq_handler`; TSQ since
//! 46d3ceabd8d9, v3.6): a socket may keep only a limited number of bytes
//! below TCP, in the qdisc and the TX ring, counted by buffer truesize.
//! A segment that would go over waits until a TX completion frees a buffer
//! (the driver's TX clean); the TSQ handler then sends what is allowed. So
//! the TX-completion delay (TIDV/TADV, a throttle, a coalesced TX
//! interrupt) paces a bulk sender.
//!
//! Models (Linux 6.12):
//! - limit = max(2 x truesize of the segment, pacing_rate >> 10), capped at
//!   `tcp_limit_output_bytes` because the default qdisc (pfifo_fast,
//!   fq_codel) does not pace (`sk_pacing_status` = SK_PACING_NONE; the cap
//!   is bypassed only under sch_fq, c73e5807e4f6); doubled for a
//!   retransmission. `sk_pacing_shift` = 10 (about 1 ms at the pacing
//!   rate; 3a9b76fd0db9);
//! - a segment is held when the bytes below TCP exceed the limit, unless
//!   the retransmit queue (sent, unacknowledged) is empty or holds one
//!   segment (f921a4a5bffa, "tcp: tsq: relax tcp_small_queue_check() when
//!   rtx queue contains a single skb", v6.6);
//! - the pacing rate (`tcp_update_pacing_rate`): cwnd x MSS / srtt x 200 %
//!   in slow start (cwnd < ssthresh / 2), x 120 % otherwise; before the
//!   first RTT sample it is unlimited (the cap decides);
//! - a freed buffer of a throttled socket queues it for the TSQ handler,
//!   which runs after the TX clean in the same softirq pass.
//!
//! Simplifies: no TSO/GSO: one buffer per MSS segment; pure ACKs are not
//! counted (Linux charges them 2 bytes: `skb_set_tcp_pure_ack`); the
//! pacing rate uses the congestion window no larger than the peer's window
//! (Linux grows cwnd only while cwnd-limited, `tcp_is_cwnd_limited`; this
//! model's Reno grows it on every ACK); the retransmission of the first
//! unacknowledged segment (fast retransmit, timeout) is not held
//! (`tcp_retransmit_skb` has its own looser rule).
//!
//! Units: bytes, rates [bytes/s], times [ns].

use super::{SimTime, TcpEndpoint, TcpOut};

/// Truesize of a transmitted segment beyond its payload, Linux 6.12 on
/// x86-64 [bytes]. ASSUMPTION, derived: `tcp_stream_alloc_skb` takes an
/// fclone head of `MAX_TCP_HEADER` (320 with the common distribution
/// `LL_MAX_HEADER` of 128) plus `skb_shared_info` (320) from the 1 KB
/// kmalloc bucket and adds the 256-byte aligned `struct sk_buff`: 1280;
/// the payload in page fragments adds its length.
pub const LINUX_TX_SKB_OVERHEAD: u32 = 1280;

/// `sk_pacing_shift` default (`SK_DEFAULT_PACING_SHIFT`).
const PACING_SHIFT: u32 = 10;

/// `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio` [%].
const PACING_SS_RATIO: u128 = 200;
const PACING_CA_RATIO: u128 = 120;

/// Truesize of a transmitted segment of `len` payload bytes [bytes].
pub fn tx_truesize(len: u32) -> u32 {
    len + LINUX_TX_SKB_OVERHEAD
}

impl TcpEndpoint {
    /// `tcp_update_pacing_rate` [bytes/s]; None before the first RTT sample.
    pub fn pacing_rate(&self) -> Option<u64> {
        let srtt = self.srtt?.as_ns().max(1) as u128;
        let mss = self.cfg.mss as u128;
        let ratio = if (self.cwnd as u64) < self.ssthresh as u64 / 2 {
            PACING_SS_RATIO
        } else {
            PACING_CA_RATIO
        };
        let peer_segs = (self.rwnd as u128).div_ceil(mss);
        let flight_segs = (self.in_flight() as u128).div_ceil(mss);
        let cwnd = (self.cwnd as u128).min(peer_segs).max(flight_segs);
        let rate = mss * ratio * cwnd * 1_000_000_000 / 100 / srtt;
        Some(rate.min(u64::MAX as u128) as u64)
    }

    /// The TSQ limit now [bytes] (0 when TSQ is off).
    pub fn tsq_limit(&self) -> u64 {
        if self.cfg.tsq_limit == 0 {
            return 0;
        }
        let floor = 2 * tx_truesize(self.cfg.mss) as u64;
        let paced = self.pacing_rate().map_or(u64::MAX, |r| r >> PACING_SHIFT);
        floor.max(paced).min(self.cfg.tsq_limit as u64)
    }

    /// Bytes this side has below TCP (qdisc and ring) [bytes].
    pub fn tsq_queued(&self) -> u64 {
        self.tsq_queued
    }

    /// A data segment was handed below TCP: charge its truesize.
    pub(super) fn tsq_charge(&mut self, len: u32) {
        self.tsq_queued += tx_truesize(len) as u64;
    }

    /// `tcp_small_queue_check`: true when the next segment must wait for a
    /// TX completion (and the socket is then throttled).
    pub(super) fn tsq_holds(&mut self, retransmit: bool) -> bool {
        if self.cfg.tsq_limit == 0 {
            return false;
        }
        let limit = self.tsq_limit() << u32::from(retransmit);
        if self.tsq_queued <= limit || self.in_flight() <= self.cfg.mss as u64 {
            return false;
        }
        self.tsq_throttled = true;
        self.stats.tsq_throttles += 1;
        true
    }

    /// `tcp_wfree`: a data segment of `len` payload bytes this side sent
    /// was freed below TCP (TX completion, or a drop before the ring). Its
    /// truesize returns to the socket. Returns true when the socket was
    /// throttled: the caller then runs `tsq_handler` once its TX clean is
    /// done.
    pub fn tx_freed(&mut self, len: u32) -> bool {
        self.tsq_queued = self.tsq_queued.saturating_sub(tx_truesize(len) as u64);
        std::mem::take(&mut self.tsq_throttled)
    }

    /// `tcp_tsq_handler`: send what the windows and TSQ now allow.
    pub fn tsq_handler(&mut self, now: SimTime, out: &mut TcpOut) {
        self.try_send(now, out);
    }
}
