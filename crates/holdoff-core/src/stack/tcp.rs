//! A Linux-2.6-like TCP endpoint as a pure state machine.
//!
//! Models (Linux 2.6.6 defaults: `net/ipv4/tcp.c` `sysctl_tcp_rmem`/
//! `sysctl_tcp_wmem`, `net/ipv4/tcp_input.c` `sysctl_tcp_adv_win_scale`;
//! RFC 2581/2582/2988/3390):
//! - MSS 1448 (1500-byte MTU with timestamps); frames of `len + 70` bytes
//!   (Ethernet 14 + IPv4 20 + TCP 20 + timestamps 12 + FCS 4);
//! - initial cwnd 3 segments (Linux `tcp_init_cwnd` for 1095 < MSS <= 1460),
//!   slow start (+1 segment per ACK of new data) below ssthresh, congestion
//!   avoidance (+1 segment per cwnd ACKs) above it (Reno, no ABC);
//! - receive window from the socket's free receive buffer and
//!   `tcp_adv_win_scale` (window = space - space/2^scale, rounded down to
//!   MSS multiples): rcvbuf 87380 gives 65535 -> 65160 (45 segments);
//! - with `skb_truesize > 0` (the default), Linux 2.6 receive-buffer
//!   accounting and window growth (2.6.6 `tcp_input.c`/`tcp_output.c`):
//!   every queued segment charges its buffer's truesize, not its payload,
//!   against rcvbuf; the window offered starts at 4 x MSS
//!   (`tcp_select_initial_window`), is clamped to `window_clamp` (full space
//!   minus one MSS, `tcp_init_buffer_space`), and grows through
//!   `rcv_ssthresh` by 2 x MSS per in-order segment of at least 128 bytes
//!   (`tcp_grow_window`). When a buffer's truesize is large against its
//!   payload (`tcp_win_from_space(truesize) > len`), the slow check
//!   (`__tcp_grow_window`) lets rcv_ssthresh grow only while it is at most
//!   half the full space: a 1448-byte segment in a 2 KB receive buffer
//!   (truesize about 2.3 KB) stops the window at 24 segments (34752 B) of
//!   an 87380-byte rcvbuf. The offered window never shrinks
//!   (`tcp_select_window`) and keeps its value while within one MSS of the
//!   free space (`__tcp_select_window`);
//! - send buffer: writes block when queued + unacknowledged bytes exceed the
//!   send buffer, which grows with cwnd as `tcp_new_space` does
//!   (2 x cwnd x MSS, between tcp_wmem[1] = 16384 and tcp_wmem[2] = 131072);
//! - delayed ACK: an ACK when more than one full-sized segment has arrived
//!   since the last ACK, otherwise after the delayed-ACK timer (40 ms,
//!   `TCP_DELACK_MIN`); quick-ack for the first 16 segments; immediate ACK
//!   for out-of-order or duplicate data; data segments carry ACKs
//!   (piggyback); interactive ("pingpong") mode when data is sent within
//!   the ACK timeout of data received, which stops quick-acks until a
//!   delayed ACK has to go out alone; a window update when the application's reads at least
//!   double the advertised window (`tcp_cleanup_rbuf`);
//! - TCP_NODELAY, or Nagle (a short segment only when nothing is in flight);
//! - loss recovery: fast retransmit on 3 duplicate ACKs with NewReno partial
//!   ACKs, and retransmission timeout (RFC 2988 estimator, min 200 ms,
//!   initial 3 s, exponential backoff, go-back-N from snd_una); out-of-order
//!   segments are kept by the receiver.
//!
//! Simplifies: no handshake (connections start established; each side
//! starts with the other's initial window as the SYN exchange would give),
//! no SACK, no timestamps-based RTT (Karn's rule on one probe per window),
//! no cwnd restart after idle, no FIN; no receive-queue collapsing
//! (`tcp_prune_queue`): a segment that would push the charged memory past
//! rcvbuf is dropped; no receive-buffer autotuning (2.6.7 and later); no
//! memory-pressure rules. With `skb_truesize = 0` buffers are accounted by
//! payload and the whole window is offered from the start (the behaviour of
//! stacks without the Linux rule, e.g. BSDs with autotuned buffers).
//!
//! Units: sequence numbers and sizes [bytes] (64-bit internally, 32-bit on the
//! wire), cwnd [segments], times [ns].

use crate::units::{Nanos, SimTime};

/// Header + FCS bytes around a TCP payload with timestamps [bytes].
pub const TCP_FRAME_OVERHEAD: u32 = 70;

/// Per-connection parameters (Linux 2.6.6 defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Maximum segment size [bytes].
    pub mss: u32,
    /// Socket receive buffer [bytes] (tcp_rmem[1] = 87380, fixed in 2.6.6).
    pub rcvbuf: u32,
    /// `tcp_adv_win_scale` (2: a quarter of the buffer is overhead).
    pub adv_win_scale: u32,
    /// Initial / maximum send buffer [bytes] (tcp_wmem[1], tcp_wmem[2]).
    pub sndbuf_init: u32,
    pub sndbuf_max: u32,
    /// TCP_NODELAY set (Nagle off).
    pub nodelay: bool,
    /// Delayed-ACK timeout (TCP_DELACK_MIN = HZ/25).
    pub delack: Nanos,
    /// Quick ACKs at connection start (TCP_MAX_QUICKACKS).
    pub quickacks: u32,
    /// Minimum and initial retransmission timeout.
    pub rto_min: Nanos,
    pub rto_init: Nanos,
    /// Initial congestion window [segments].
    pub init_cwnd: u32,
    /// Receive-buffer memory charged per received segment (Linux skb
    /// truesize) [bytes]; 0: payload accounting and no window growth rule.
    pub skb_truesize: u32,
}

/// Linux 2.6.6 with e1000 5.x receive buffers on a Pentium 4 kernel: the
/// driver allocates `rx_buffer_len` 2048 (+16 headroom, +2 alignment) =
/// 2066 bytes, `alloc_skb` rounds it to the 128-byte L1 line of a P4 build
/// (`SKB_DATA_ALIGN`): 2176, and truesize adds `sizeof(struct sk_buff)`,
/// about 160 bytes on i386 [assumption] -> 2336 bytes. Only the range
/// matters for the window rule: every value from 1932 to 3861 bytes stops a
/// 1448-byte MSS at the same rcv_ssthresh.
pub const LINUX26_E1000_SKB_TRUESIZE: u32 = 2336;

/// Segments shorter than this do not grow the window
/// (`tcp_event_data_recv` calls `tcp_grow_window` only for `len >= 128`) [bytes].
const GROW_MIN_LEN: u32 = 128;

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1448,
            rcvbuf: 87_380,
            adv_win_scale: 2,
            sndbuf_init: 16_384,
            sndbuf_max: 131_072,
            nodelay: true,
            delack: Nanos::from_ms(40),
            quickacks: 16,
            rto_min: Nanos::from_ms(200),
            rto_init: Nanos::from_secs(3),
            init_cwnd: 3,
            skb_truesize: LINUX26_E1000_SKB_TRUESIZE,
        }
    }
}

/// A segment as the peer sees it (sequence numbers wrap at 32 bits on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seq: u32,
    pub len: u32,
    pub ack: u32,
    /// Advertised receive window [bytes].
    pub wnd: u32,
}

impl Segment {
    /// Frame size on the wire [bytes].
    pub fn frame_bytes(&self) -> u32 {
        self.len + TCP_FRAME_OVERHEAD
    }
}

/// What an operation produced.
#[derive(Debug, Default)]
pub struct TcpOut {
    /// Segments to transmit now, in order.
    pub segs: Vec<Segment>,
    /// New bytes became readable.
    pub readable: bool,
    /// Send-buffer space was freed.
    pub writable: bool,
}

impl TcpOut {
    pub fn clear(&mut self) {
        self.segs.clear();
        self.readable = false;
        self.writable = false;
    }
}

/// Counters of one endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpStats {
    pub segs_out: u64,
    pub data_segs_out: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub acks_out: u64,
    pub delayed_acks: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
}

/// One end of a connection.
#[derive(Clone, Debug)]
pub struct TcpEndpoint {
    pub cfg: TcpConfig,
    // --- send side
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Bytes the application has written (end of the send queue).
    write_seq: u64,
    pub cwnd: u32,
    pub ssthresh: u32,
    cwnd_cnt: u32,
    /// Peer's advertised window [bytes].
    rwnd: u32,
    dupacks: u32,
    recover: Option<u64>,
    srtt: Option<Nanos>,
    rttvar: Nanos,
    rto: Nanos,
    backoff: u32,
    rtt_probe: Option<(u64, SimTime)>,
    rto_deadline: Option<SimTime>,
    sndbuf: u32,
    // --- receive side
    rcv_nxt: u64,
    /// Readable bytes in the socket.
    rcv_queued: u32,
    /// Out-of-order data held: (seq, len), sorted, non-overlapping.
    ooo: Vec<(u64, u32)>,
    /// rcv_nxt when the last ACK was sent.
    rcv_wup: u64,
    /// Right edge of the last advertised window.
    rcv_adv_edge: u64,
    /// Linux receive-window state (used when `skb_truesize > 0`): the window
    /// last offered, its growth threshold and clamp [bytes].
    rcv_wnd: u32,
    rcv_ssthresh: u32,
    window_clamp: u32,
    /// Receive memory charged (truesize per queued segment) [bytes].
    rmem: u32,
    /// Unread bytes of each queued in-order segment, oldest first.
    rcv_segs: std::collections::VecDeque<u32>,
    quickack: u32,
    /// Interactive ("pingpong") mode: data is sent soon after data arrives,
    /// so ACKs are delayed to ride on it (no quick-acks).
    pingpong: bool,
    /// When data last arrived.
    last_data_rcv: Option<SimTime>,
    delack_deadline: Option<SimTime>,
    pub stats: TcpStats,
}

/// Reconstruct a 64-bit sequence number from its low 32 bits, nearest to `near`.
#[inline]
fn unwrap_seq(near: u64, low: u32) -> u64 {
    let diff = low.wrapping_sub(near as u32) as i32 as i64;
    (near as i64 + diff).max(0) as u64
}

impl TcpEndpoint {
    pub fn new(cfg: TcpConfig) -> Self {
        let rwnd_init = initial_rcv_wnd(&cfg);
        let window_clamp = linux_window_clamp(&cfg);
        TcpEndpoint {
            rcv_wnd: rwnd_init,
            rcv_ssthresh: rwnd_init,
            window_clamp,
            rmem: 0,
            rcv_segs: std::collections::VecDeque::new(),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            write_seq: 0,
            cwnd: cfg.init_cwnd,
            ssthresh: u32::MAX,
            cwnd_cnt: 0,
            rwnd: rwnd_init,
            dupacks: 0,
            recover: None,
            srtt: None,
            rttvar: Nanos::ZERO,
            rto: cfg.rto_init,
            backoff: 0,
            rtt_probe: None,
            rto_deadline: None,
            sndbuf: cfg.sndbuf_init,
            rcv_nxt: 0,
            rcv_queued: 0,
            ooo: Vec::new(),
            rcv_wup: 0,
            rcv_adv_edge: rwnd_init as u64,
            quickack: cfg.quickacks,
            pingpong: false,
            last_data_rcv: None,
            delack_deadline: None,
            stats: TcpStats::default(),
            cfg,
        }
    }

    // ------------------------------------------------------------ queries

    /// Bytes written but not yet acknowledged.
    pub fn unacked(&self) -> u64 {
        self.write_seq - self.snd_una
    }

    /// Bytes in flight (sent, not acknowledged).
    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// Free send-buffer space [bytes].
    pub fn send_space(&self) -> u32 {
        (self.sndbuf as u64).saturating_sub(self.unacked()) as u32
    }

    /// Readable bytes.
    pub fn readable(&self) -> u32 {
        self.rcv_queued
    }

    /// Current send buffer size [bytes].
    pub fn sndbuf(&self) -> u32 {
        self.sndbuf
    }

    /// The earliest pending timer (RTO or delayed ACK).
    pub fn next_timer(&self) -> Option<SimTime> {
        match (self.rto_deadline, self.delack_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The window the peer starts with (what this side's SYN would offer).
    pub fn initial_window(&self) -> u32 {
        initial_rcv_wnd(&self.cfg)
    }

    /// Set the peer's window as the handshake would have announced it.
    pub fn set_peer_window(&mut self, wnd: u32) {
        self.rwnd = wnd;
    }

    /// The Linux growth threshold of the offered window [bytes].
    pub fn rcv_ssthresh(&self) -> u32 {
        self.rcv_ssthresh
    }

    fn linux_rules(&self) -> bool {
        self.cfg.skb_truesize > 0
    }

    /// `tcp_space`: the window the free receive memory could back [bytes].
    fn tcp_space(&self) -> u32 {
        let used = if self.linux_rules() {
            self.rmem
        } else {
            self.rcv_queued + self.ooo_bytes()
        };
        win_from_space(self.cfg.rcvbuf.saturating_sub(used), self.cfg.adv_win_scale)
    }

    /// The window to offer now, before the never-shrink rule.
    fn adv_window(&self) -> u32 {
        let mss = self.cfg.mss;
        let free = self.tcp_space();
        if !self.linux_rules() {
            return (free / mss) * mss;
        }
        // __tcp_select_window
        let full = self
            .window_clamp
            .min(win_from_space(self.cfg.rcvbuf, self.cfg.adv_win_scale));
        let mss = mss.min(full);
        if free < full / 2 && free < mss {
            return 0;
        }
        let free = free.min(self.rcv_ssthresh);
        let w = self.rcv_wnd;
        if w + mss <= free || w > free {
            (free / mss) * mss
        } else {
            w
        }
    }

    /// `tcp_grow_window` for an in-order segment of `len` payload bytes.
    fn grow_window(&mut self, len: u32) {
        let ts = self.cfg.skb_truesize;
        let scale = self.cfg.adv_win_scale;
        if self.rcv_ssthresh >= self.window_clamp || self.rcv_ssthresh >= self.tcp_space() {
            return;
        }
        let incr = if win_from_space(ts, scale) <= len {
            2 * self.cfg.mss
        } else {
            // __tcp_grow_window: the window may grow past a fraction of
            // the full space only if a halved truesize still fits the payload.
            let mut truesize = win_from_space(ts, scale) / 2;
            let mut window = win_from_space(self.cfg.rcvbuf, scale) / 2;
            let mut incr = 0;
            while self.rcv_ssthresh <= window {
                if truesize <= len {
                    incr = 2 * self.cfg.mss;
                    break;
                }
                truesize >>= 1;
                window >>= 1;
            }
            incr
        };
        if incr > 0 {
            self.rcv_ssthresh = (self.rcv_ssthresh + incr).min(self.window_clamp);
            // tp->ack.quick |= 1
            self.quickack = self.quickack.max(1);
        }
    }

    fn ooo_bytes(&self) -> u32 {
        self.ooo.iter().map(|x| x.1).sum()
    }

    // ------------------------------------------------------------ application

    /// The application writes up to `bytes`; returns how many were accepted.
    pub fn app_write(&mut self, now: SimTime, bytes: u64, out: &mut TcpOut) -> u64 {
        let n = bytes.min(self.send_space() as u64);
        self.write_seq += n;
        self.try_send(now, out);
        n
    }

    /// The application reads up to `max` bytes; returns how many it got.
    pub fn app_read(&mut self, now: SimTime, max: u64, out: &mut TcpOut) -> u64 {
        let n = (self.rcv_queued as u64).min(max);
        if n == 0 {
            return 0;
        }
        self.rcv_queued -= n as u32;
        if self.linux_rules() {
            // Free each buffer once it has been read completely.
            let mut left = n as u32;
            while left > 0 {
                let head = self
                    .rcv_segs
                    .front_mut()
                    .expect("queued bytes have segments");
                let take = (*head).min(left);
                *head -= take;
                left -= take;
                if *head == 0 {
                    self.rcv_segs.pop_front();
                    self.rmem -= self.cfg.skb_truesize;
                }
            }
        }
        // tcp_cleanup_rbuf: announce a window that at least doubled.
        let now_wnd = self.rcv_adv_edge.saturating_sub(self.rcv_nxt);
        let new_wnd = self.adv_window() as u64;
        let clamp = if self.linux_rules() {
            self.window_clamp as u64
        } else {
            window_from_space(self.cfg.rcvbuf, self.cfg.adv_win_scale, self.cfg.mss) as u64
        };
        if 2 * now_wnd <= clamp && new_wnd >= 2 * now_wnd.max(1) {
            self.send_ack(now, out);
        }
        n
    }

    // ------------------------------------------------------------ sending

    fn push_seg(&mut self, now: SimTime, seq: u64, len: u32, out: &mut TcpOut) {
        let mut wnd = self.adv_window();
        if self.linux_rules() {
            // tcp_select_window: never shrink the window already offered.
            let cur = self.rcv_adv_edge.saturating_sub(self.rcv_nxt) as u32;
            wnd = wnd.max(cur);
            self.rcv_wnd = wnd;
        }
        out.segs.push(Segment {
            seq: seq as u32,
            len,
            ack: self.rcv_nxt as u32,
            wnd,
        });
        self.rcv_wup = self.rcv_nxt;
        self.rcv_adv_edge = self.rcv_adv_edge.max(self.rcv_nxt + wnd as u64);
        self.delack_deadline = None;
        self.stats.segs_out += 1;
        if len == 0 {
            self.stats.acks_out += 1;
        } else {
            // tcp_event_data_sent: data sent within the ACK timeout of the
            // last data received makes the connection interactive.
            if self
                .last_data_rcv
                .is_some_and(|t| now - t < self.cfg.delack)
            {
                self.pingpong = true;
            }
            self.stats.data_segs_out += 1;
            if self.rto_deadline.is_none() {
                self.rto_deadline = Some(now + self.rto);
            }
        }
    }

    /// Send what the windows allow.
    pub fn try_send(&mut self, now: SimTime, out: &mut TcpOut) {
        let mss = self.cfg.mss as u64;
        loop {
            let unsent = self.write_seq - self.snd_nxt;
            if unsent == 0 {
                return;
            }
            let mut cwnd_bytes = self.cwnd as u64 * mss;
            if self.recover.is_some() {
                cwnd_bytes += self.dupacks.saturating_sub(3) as u64 * mss;
            }
            let wnd = cwnd_bytes.min(self.rwnd as u64);
            let room = wnd.saturating_sub(self.in_flight());
            let len = unsent.min(mss).min(room);
            if len == 0 {
                return;
            }
            if len < mss && len < unsent {
                // Window-limited short segment: wait (sender-side SWS avoidance).
                return;
            }
            if len < mss && !self.cfg.nodelay && self.in_flight() > 0 {
                return; // Nagle
            }
            let seq = self.snd_nxt;
            if seq < self.snd_max {
                self.stats.retransmits += 1;
            } else if self.rtt_probe.is_none() {
                self.rtt_probe = Some((seq + len, now));
            }
            self.push_seg(now, seq, len as u32, out);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
    }

    fn send_ack(&mut self, now: SimTime, out: &mut TcpOut) {
        self.push_seg(now, self.snd_nxt, 0, out);
    }

    fn retransmit_head(&mut self, now: SimTime, out: &mut TcpOut) {
        let len = (self.snd_max - self.snd_una).min(self.cfg.mss as u64) as u32;
        if len == 0 {
            return;
        }
        self.rtt_probe = None; // Karn
        self.stats.retransmits += 1;
        self.push_seg(now, self.snd_una, len, out);
        self.snd_nxt = self.snd_nxt.max(self.snd_una + len as u64);
    }

    // ------------------------------------------------------------ receiving

    /// A segment arrived from the peer.
    pub fn on_segment(&mut self, now: SimTime, seg: Segment, out: &mut TcpOut) {
        self.on_ack(now, &seg, out);
        if seg.len > 0 {
            self.on_data(now, &seg, out);
        }
        self.try_send(now, out);
    }

    fn on_ack(&mut self, now: SimTime, seg: &Segment, out: &mut TcpOut) {
        let ack = unwrap_seq(self.snd_una, seg.ack);
        let window_changed = seg.wnd != self.rwnd;
        self.rwnd = seg.wnd;
        if ack > self.snd_max {
            return; // acknowledges data never sent: ignore
        }
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.stats.bytes_acked += acked;
            self.backoff = 0;
            if let Some((probe, sent)) = self.rtt_probe {
                if ack >= probe {
                    self.rtt_sample(now - sent);
                    self.rtt_probe = None;
                }
            }
            match self.recover {
                Some(rec) if ack < rec => {
                    // NewReno partial ACK: retransmit the next hole, stay in recovery.
                    self.dupacks = 3;
                    self.retransmit_head(now, out);
                }
                Some(_) => {
                    self.recover = None;
                    self.dupacks = 0;
                    self.cwnd = self.ssthresh.max(1);
                }
                None => {
                    self.dupacks = 0;
                    if self.cwnd < self.ssthresh {
                        self.cwnd += 1;
                    } else {
                        self.cwnd_cnt += 1;
                        if self.cwnd_cnt >= self.cwnd {
                            self.cwnd += 1;
                            self.cwnd_cnt = 0;
                        }
                    }
                }
            }
            // tcp_new_space: the send buffer follows cwnd.
            let want =
                (2 * self.cwnd as u64 * self.cfg.mss as u64).min(self.cfg.sndbuf_max as u64) as u32;
            self.sndbuf = self.sndbuf.max(want);
            self.rto_deadline = (self.snd_una < self.snd_nxt).then(|| now + self.rto);
            out.writable = true;
        } else if ack == self.snd_una
            && seg.len == 0
            && !window_changed
            && self.snd_una < self.snd_nxt
        {
            self.dupacks += 1;
            if self.dupacks == 3 && self.recover.is_none() {
                self.stats.fast_retransmits += 1;
                let flight = (self.in_flight() / self.cfg.mss as u64) as u32;
                self.ssthresh = (flight / 2).max(2);
                self.cwnd = self.ssthresh;
                self.recover = Some(self.snd_max);
                self.retransmit_head(now, out);
            }
        }
    }

    fn rtt_sample(&mut self, r: Nanos) {
        // RFC 2988 with alpha 1/8, beta 1/4, K = 4; Linux min RTO 200 ms.
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Nanos(r.as_ns() / 2);
            }
            Some(s) => {
                let diff = s.as_ns().abs_diff(r.as_ns());
                self.rttvar = Nanos((3 * self.rttvar.as_ns() + diff) / 4);
                self.srtt = Some(Nanos((7 * s.as_ns() + r.as_ns()) / 8));
            }
        }
        let srtt = self.srtt.expect("set").as_ns();
        self.rto = Nanos(srtt + 4 * self.rttvar.as_ns()).max(self.cfg.rto_min);
    }

    fn on_data(&mut self, now: SimTime, seg: &Segment, out: &mut TcpOut) {
        let seq = unwrap_seq(self.rcv_nxt, seg.seq);
        // Room for the segment: payload against the free buffer, or (Linux
        // rules) the charged memory not yet above rcvbuf (tcp_data_queue).
        let room = if self.linux_rules() {
            // Inside the window already offered Linux makes room by
            // collapsing the queue (tcp_prune_queue); beyond it, only while
            // the charged memory is not above rcvbuf.
            self.rmem <= self.cfg.rcvbuf || seq + seg.len as u64 <= self.rcv_adv_edge
        } else {
            seg.len
                <= self
                    .cfg
                    .rcvbuf
                    .saturating_sub(self.rcv_queued + self.ooo_bytes())
        };
        if seq == self.rcv_nxt {
            if !room {
                self.send_ack(now, out); // no room: drop, re-announce the window
                return;
            }
            self.rcv_nxt += seg.len as u64;
            self.rcv_queued += seg.len;
            self.stats.bytes_received += seg.len as u64;
            if self.linux_rules() {
                self.rmem += self.cfg.skb_truesize;
                self.rcv_segs.push_back(seg.len);
            }
            let had_ooo = !self.ooo.is_empty();
            // Pull in queued out-of-order data that is now contiguous.
            while let Some(&(s, l)) = self.ooo.first() {
                if s > self.rcv_nxt {
                    break;
                }
                self.ooo.remove(0);
                let end = s + l as u64;
                if end > self.rcv_nxt {
                    let add = (end - self.rcv_nxt) as u32;
                    self.rcv_nxt = end;
                    self.rcv_queued += add;
                    self.stats.bytes_received += add as u64;
                    if self.linux_rules() {
                        self.rcv_segs.push_back(add);
                    }
                } else if self.linux_rules() {
                    self.rmem -= self.cfg.skb_truesize; // wholly duplicate: freed
                }
            }
            if self.linux_rules() && seg.len >= GROW_MIN_LEN {
                self.grow_window(seg.len);
            }
            out.readable = true;
            self.last_data_rcv = Some(now);
            let full_since_ack = self.rcv_nxt - self.rcv_wup > self.cfg.mss as u64;
            let quick = self.quickack > 0 && !self.pingpong;
            if had_ooo || quick || full_since_ack {
                if quick {
                    self.quickack -= 1;
                }
                self.send_ack(now, out);
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + self.cfg.delack);
            }
        } else if seq > self.rcv_nxt {
            // Out of order: keep it if there is room; duplicate ACK at once.
            if room && !self.ooo.iter().any(|&(s, _)| s == seq) {
                let pos = self.ooo.partition_point(|&(s, _)| s < seq);
                self.ooo.insert(pos, (seq, seg.len));
                if self.linux_rules() {
                    self.rmem += self.cfg.skb_truesize;
                }
            }
            self.send_ack(now, out);
        } else {
            // Old data (a retransmission we already have): ACK at once.
            self.send_ack(now, out);
        }
    }

    // ------------------------------------------------------------ timers

    /// A timer may have expired at `now`.
    pub fn on_timer(&mut self, now: SimTime, out: &mut TcpOut) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            self.stats.delayed_acks += 1;
            // tcp_delack_timer: a delayed ACK that had to be sent on its own
            // ends interactive mode.
            self.pingpong = false;
            self.send_ack(now, out);
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.rto_deadline = None;
            if self.snd_una < self.snd_max {
                self.stats.timeouts += 1;
                let flight = ((self.snd_max - self.snd_una) / self.cfg.mss as u64) as u32;
                self.ssthresh = (flight / 2).max(2);
                self.cwnd = 1;
                self.cwnd_cnt = 0;
                self.recover = None;
                self.dupacks = 0;
                self.backoff += 1;
                self.rto = Nanos((self.rto.as_ns() * 2).min(120_000_000_000));
                self.snd_nxt = self.snd_una; // go back N
                self.rtt_probe = None;
                self.retransmit_head(now, out);
                self.try_send(now, out);
            }
        }
    }
}

/// Advertised window for `space` free bytes: space - space/2^scale, rounded
/// down to whole MSS (Linux `tcp_win_from_space`, `__tcp_select_window`).
pub fn window_from_space(space: u32, adv_win_scale: u32, mss: u32) -> u32 {
    (win_from_space(space, adv_win_scale) / mss) * mss
}

/// Linux `tcp_win_from_space`: the part of `space` bytes of buffer memory
/// that may be offered as window (the rest is overhead) [bytes].
pub fn win_from_space(space: u32, adv_win_scale: u32) -> u32 {
    space - (space >> adv_win_scale)
}

/// The window of the first segment (the SYN's): with the Linux rules,
/// `tcp_select_initial_window` offers at most 4 x MSS (RFC 1414 note in
/// 2.6.6; 3 x or 2 x for larger MSS); without them the whole window.
pub fn initial_rcv_wnd(cfg: &TcpConfig) -> u32 {
    let full = window_from_space(cfg.rcvbuf, cfg.adv_win_scale, cfg.mss);
    if cfg.skb_truesize == 0 {
        return full;
    }
    let init_segs = match cfg.mss {
        m if m > 1460 * 3 => 2,
        m if m > 1460 => 3,
        _ => 4,
    };
    full.min(init_segs * cfg.mss)
}

/// `tcp_init_buffer_space` with `tcp_app_win` 31: the clamp is the full
/// space, less one MSS reserved when the full space would leave none [bytes].
pub fn linux_window_clamp(cfg: &TcpConfig) -> u32 {
    let maxwin = win_from_space(cfg.rcvbuf, cfg.adv_win_scale);
    if maxwin > 2 * cfg.mss {
        maxwin.saturating_sub(cfg.mss).max(2 * cfg.mss)
    } else {
        maxwin
    }
}

#[cfg(test)]
mod tests;
