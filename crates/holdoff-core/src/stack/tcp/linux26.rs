//! The Linux 2.6.6 rules that decide how many turns a message of a few
//! windows takes (the 2004 kernel's defaults; `host::kernel`). The sender
//! rules (on with `TcpConfig::linux26_sender`):
//!
//! - **cwnd grows only while cwnd-limited.** `tcp_ack` (2.6.6
//!   `net/ipv4/tcp_input.c`) takes `prior_in_flight =
//!   tcp_packets_in_flight(tp)` before processing the ACK and calls
//!   `tcp_cong_avoid` only if `prior_in_flight >= tp->snd_cwnd`: an ACK of
//!   a flight smaller than cwnd (an application- or receiver-limited
//!   sender) does not open cwnd further. Each growth stamps
//!   `snd_cwnd_stamp`.
//! - **RFC 2861 cwnd validation.** After each transmission burst
//!   `tcp_write_xmit` calls `tcp_cwnd_validate` (`tcp_output.c`): when
//!   `packets_out >= snd_cwnd` the network is fed (stamp now, `snd_cwnd_used`
//!   0); otherwise `snd_cwnd_used` keeps the largest `packets_out` seen, and
//!   once an RTO has passed since the stamp `tcp_cwnd_application_limited`
//!   (`tcp_input.c`) runs: in the Open state and unless the writer is
//!   blocked on the send buffer (SOCK_NOSPACE), with `win_used =
//!   max(snd_cwnd_used, 2)`, if win_used < cwnd then ssthresh =
//!   `tcp_current_ssthresh` (max(ssthresh, 3/4 cwnd)) and cwnd = (cwnd +
//!   win_used) / 2; `snd_cwnd_used` = 0 and the stamp is renewed.
//! - **cwnd restart after idle** (RFC 2861, `tcp_event_data_sent` and
//!   `tcp_cwnd_restart`, `tcp_output.c`): a data segment sent with nothing
//!   in flight more than one RTO after the last one sets ssthresh =
//!   `tcp_current_ssthresh` and halves cwnd once per RTO of idle beyond the
//!   first, not below min(initial cwnd, cwnd).
//! - **Send buffer by truesize, grown only after the writer blocked.**
//!   `tcp_sendmsg` (`tcp.c`) allocates a new buffer only while
//!   `sk_wmem_queued < sk_sndbuf`, and every buffer charges its truesize
//!   (an MSS-sized head, `select_size`, plus `MAX_TCP_HEADER`, whatever its
//!   fill); a writer that finds no room sets SOCK_NOSPACE and sleeps. When
//!   an ACK frees buffers of a SOCK_NOSPACE socket (`tcp_check_space`),
//!   `tcp_new_space` grows sndbuf to 2 x max(cwnd, reordering + 1) x
//!   sndmem (sndmem = MSS + MAX_TCP_HEADER + 16 + sizeof(struct sk_buff)),
//!   at most `tcp_wmem[2]`, but only if `packets_out < snd_cwnd`; then
//!   `tcp_write_space` wakes the writer once the free space is at least
//!   half the queued memory (`tcp_min_write_space`).
//!
//! And one receiver rule (on with `TcpConfig::linux26_prequeue`):
//!
//! - **ACK by the read for data copied to a blocked reader.** While the
//!   application sleeps in `tcp_recvmsg` (`tp->ucopy.task` set) and
//!   `sysctl_tcp_low_latency` is 0, `tcp_v4_rcv` puts in-order segments on
//!   the prequeue (`tcp_prequeue`, `include/net/tcp.h`) and the reader
//!   processes them: `tcp_rcv_established`'s fast path copies each to the
//!   user buffer ("eaten") and then sends an ACK at once only in quick-ACK
//!   mode, otherwise `tcp_send_delayed_ack`; the read's `cleanup_rbuf`
//!   (`tcp.c`) sends it once more than one MSS is unacknowledged ("Once-
//!   per-two-segments ACK was not sent by tcp_input.c"). So a burst taken
//!   by one read gets one cumulative ACK, not one per two segments. The
//!   eaten branch is still in 2.6.12-rc4's `tcp_rcv_established` (the
//!   reject of the linux-kernel patch "2.6.12-rc4-tcp3", 24-25 May 2005,
//!   quotes it); the TCP maintainer's explanation, linux-kernel 18 Mar 2003, "Re: 2.4 delayed
//!   acks don't work, fixed", Message-Id
//!   <200303182013.XAA05239@sex.inr.ac.ru>: "'eaten' is special path, it
//!   happens when this function is subroutine of tcp_recvmsg(), where the
//!   same code is executed upon return from the function".
//!
//! Simplifies: a segment counts as eaten when the application is blocked
//! in a read of the socket as the stack takes it (`reader_waiting`, set by
//! the stack), whatever CPU it runs on, and the prequeue's memory bound
//! (`ucopy.memory > rcvbuf`: 37 segments of 2336 bytes in 87380) is not
//! modelled, as no flight of the 24-segment window reaches it; packets in flight and queued buffers are counted as the
//! bytes over MSS rounded up (one buffer per segment, the last one of a
//! message short); `tcp_time_stamp` is jiffies in Linux (HZ 1000), here
//! ns; no memory-pressure or SOCK_SNDBUF_LOCK (NetPIPE sets no buffer
//! sizes by default); `reordering` stays at its default 3.
//!
//! Units: sizes [bytes], cwnd and packets [segments], times [ns].

use super::{SimTime, TcpEndpoint};

/// `MAX_TCP_HEADER` of a 2.6.6 i386 build: 128 + `MAX_HEADER`, with
/// `MAX_HEADER` = `LL_MAX_HEADER` = 32 (no tunnel or token-ring support
/// built in) [bytes]. ASSUMPTION (kernel configuration not in the source).
pub const LINUX26_MAX_TCP_HEADER: u32 = 160;
/// `sizeof(struct sk_buff)` on i386 2.6 [bytes]; ASSUMPTION, the same
/// figure as `LINUX26_E1000_SKB_TRUESIZE` uses.
pub const LINUX26_SKB_STRUCT: u32 = 160;
/// `SMP_CACHE_BYTES` of a Pentium 4 build (`SKB_DATA_ALIGN`) [bytes].
const L1_LINE: u32 = 128;
/// `tp->reordering` default (`sysctl_tcp_reordering`, 3).
const REORDERING: u32 = 3;

/// Truesize of one transmit buffer for an MSS of `mss` bytes: the head
/// `tcp_alloc_pskb` allocates, `SKB_DATA_ALIGN(mss + MAX_TCP_HEADER) +
/// sizeof(struct sk_buff)` [bytes]. 1824 for MSS 1448.
pub fn linux26_tx_truesize(mss: u32) -> u32 {
    (mss + LINUX26_MAX_TCP_HEADER).div_ceil(L1_LINE) * L1_LINE + LINUX26_SKB_STRUCT
}

/// `tcp_new_space`'s per-segment memory, MSS + MAX_TCP_HEADER + 16 +
/// sizeof(struct sk_buff) [bytes]. 1784 for MSS 1448.
pub fn linux26_sndmem(mss: u32) -> u32 {
    mss + LINUX26_MAX_TCP_HEADER + 16 + LINUX26_SKB_STRUCT
}

impl TcpEndpoint {
    /// Segments of `bytes` (MSS-sized, the last one short).
    fn segs(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.cfg.mss as u64)
    }

    /// `packets_out`: segments sent and not yet acknowledged.
    pub fn packets_out(&self) -> u32 {
        self.segs(self.in_flight()).min(u32::MAX as u64) as u32
    }

    /// `sk_wmem_queued`: truesize of the buffers written and not yet
    /// acknowledged [bytes].
    pub fn wmem_queued(&self) -> u64 {
        self.segs(self.unacked()) * linux26_tx_truesize(self.cfg.mss) as u64
    }

    /// Bytes `tcp_sendmsg` accepts of a write of `want` bytes now: a new
    /// buffer (up to one MSS) while the queued memory is below sndbuf. Sets
    /// SOCK_NOSPACE when it cannot take all.
    pub(super) fn linux26_write_room(&mut self, want: u64) -> u64 {
        let ts = linux26_tx_truesize(self.cfg.mss) as u64;
        let queued = self.wmem_queued();
        let room = (self.sndbuf as u64)
            .saturating_sub(queued)
            .div_ceil(ts)
            .saturating_mul(self.cfg.mss as u64);
        let n = want.min(room);
        if n < want {
            self.nospace = true;
        }
        n
    }

    /// `tcp_current_ssthresh` in the Open state.
    fn current_ssthresh(&self) -> u32 {
        self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
    }

    /// `tcp_event_data_sent`: a data segment leaves at `now`.
    pub(super) fn linux26_data_sent(&mut self, now: SimTime) {
        if let Some(last) = self.lsndtime {
            if self.packets_out() == 0 && (now - last) > self.rto {
                self.cwnd_restart(now, last);
            }
        }
        self.lsndtime = Some(now);
    }

    /// `tcp_cwnd_restart` after an idle period since `last`.
    fn cwnd_restart(&mut self, now: SimTime, last: SimTime) {
        let restart = self.cfg.init_cwnd.min(self.cwnd);
        self.ssthresh = self.current_ssthresh();
        let mut idle = (now - last).as_ns() as i64;
        let rto = self.rto.as_ns() as i64;
        let mut cwnd = self.cwnd;
        loop {
            idle -= rto;
            if idle <= 0 || cwnd <= restart {
                break;
            }
            cwnd >>= 1;
        }
        self.cwnd = cwnd.max(restart);
        self.cwnd_stamp = now;
        self.cwnd_used = 0;
    }

    /// `tcp_cwnd_validate`, after a burst that sent at least one segment.
    pub(super) fn cwnd_validate(&mut self, now: SimTime) {
        let packets_out = self.packets_out();
        if packets_out >= self.cwnd {
            self.cwnd_used = 0;
            self.cwnd_stamp = now;
            return;
        }
        self.cwnd_used = self.cwnd_used.max(packets_out);
        if now - self.cwnd_stamp >= self.rto {
            self.cwnd_application_limited(now);
        }
    }

    /// `tcp_cwnd_application_limited` (RFC 2861, the slow part).
    fn cwnd_application_limited(&mut self, now: SimTime) {
        let open = self.recover.is_none() && self.dupacks == 0;
        if open && !self.nospace {
            let win_used = self.cwnd_used.max(2);
            if win_used < self.cwnd {
                self.ssthresh = self.current_ssthresh();
                self.cwnd = (self.cwnd + win_used) >> 1;
            }
            self.cwnd_used = 0;
        }
        self.cwnd_stamp = now;
    }

    /// `tcp_ack`'s growth gate: cwnd may grow on this ACK only if the
    /// packets in flight before it filled cwnd.
    pub(super) fn linux26_may_grow(&self, prior_in_flight: u32) -> bool {
        prior_in_flight >= self.cwnd
    }

    /// `tcp_rcv_established`'s direct copy (`linux26_prequeue`): an
    /// in-order segment that reaches a reader blocked in recv() (through
    /// the prequeue) is copied to it ("eaten"), and then only a quick-ACK
    /// goes out at once; otherwise the ACK is delayed for the read to send.
    /// Out-of-order data just filled in takes the normal path.
    pub(super) fn linux26_eaten(&self, had_ooo: bool) -> bool {
        self.cfg.linux26_prequeue && self.reader_waiting && !had_ooo
    }

    /// `cleanup_rbuf` after a read: with an ACK scheduled and more than one
    /// full segment unacknowledged ("Once-per-two-segments ACK was not sent
    /// by tcp_input.c"), the read sends it.
    pub(super) fn linux26_read_acks(&self) -> bool {
        self.cfg.linux26_prequeue
            && self.delack_deadline.is_some()
            && self.rcv_nxt - self.rcv_wup > self.cfg.mss as u64
    }

    /// `tcp_check_space` / `tcp_new_space` / `tcp_write_space` after an
    /// ACK freed buffers at `now`; returns whether the writer is woken.
    pub(super) fn linux26_new_space(&mut self, now: SimTime) -> bool {
        if !self.nospace {
            return true;
        }
        if self.packets_out() < self.cwnd {
            let demanded = self.cwnd.max(REORDERING + 1) as u64;
            let want = 2 * demanded * linux26_sndmem(self.cfg.mss) as u64;
            let want = want.min(self.cfg.sndbuf_max as u64) as u32;
            self.sndbuf = self.sndbuf.max(want);
            self.cwnd_stamp = now;
        }
        let queued = self.wmem_queued();
        let free = (self.sndbuf as u64).saturating_sub(queued);
        if free >= queued / 2 {
            self.nospace = false;
            return true;
        }
        false
    }
}
