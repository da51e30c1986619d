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
//! no cwnd restart after idle (unless `linux26_sender`), no FIN; no
//! receive-queue collapsing (`tcp_prune_queue`): a segment that would push the charged memory past
//! rcvbuf is dropped; no memory-pressure rules. Receive-buffer autotuning
//! (2.6.7 and later) and TCP Small Queues (3.6 and later) are off unless
//! configured (`autotune`, `tsq`: Linux 6.12 rules, the defaults of a
//! modern Linux host). With `skb_truesize = 0` buffers are accounted by
//! payload and the whole window is offered from the start (the behaviour of
//! stacks without the Linux rule, e.g. BSDs with autotuned buffers).
//!
//! Units: sequence numbers and sizes [bytes] (64-bit internally, 32-bit on the
//! wire), cwnd [segments], times [ns].
//!
//! Files: this module holds the endpoint's state and configuration;
//! `send` the sending side (writes, output, ACKs, congestion control,
//! timers), `recv` the receiving side (data, ACK decisions, reads),
//! `window` the receive-window rules, `autotune` receive-buffer
//! autotuning, `tsq` TCP Small Queues, `linux26` the Linux 2.6.6 sender
//! rules (cwnd growth while cwnd-limited, RFC 2861 validation, send
//! buffer by truesize grown after the writer blocked) and its prequeue ACK
//! rule (data copied to a blocked reader is acknowledged by the read).

use crate::units::{Nanos, SimTime};

/// Header + FCS bytes around a TCP payload with timestamps [bytes].
pub use crate::packet::TCP_FRAME_OVERHEAD;

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
    /// TCP Small Queues: `tcp_limit_output_bytes` [bytes]; 0: off (`tsq`).
    pub tsq_limit: u32,
    /// Receive-buffer autotuning (`tcp_moderate_rcvbuf`; `autotune`).
    pub moderate_rcvbuf: bool,
    /// The most autotuning may grow the receive buffer to, tcp_rmem[2]
    /// [bytes].
    pub rmem_max: u32,
    /// Linux 2.6.6 sender rules (`linux26`): cwnd grows only while
    /// cwnd-limited, RFC 2861 validation and restart, send buffer charged
    /// by truesize and grown only after the writer blocked. Off: cwnd
    /// grows on every ACK and the send buffer follows cwnd by payload.
    pub linux26_sender: bool,
    /// Linux 2.6.6 prequeue ACK rule (`linux26`): in-order data reaching a
    /// reader blocked in recv() is acknowledged once per read
    /// (`cleanup_rbuf`), not once per two segments. Off: the
    /// once-per-two-segments rule always applies.
    pub linux26_prequeue: bool,
    /// Linux 2.6.6 read timing (`scenario::netstack`, `TcpCtx::read`): the
    /// segments a read sends leave after the read copied its data
    /// (`tcp_recvmsg` copies, then `cleanup_rbuf` sends). Off: they leave
    /// at the start of the read, before the copy.
    pub linux26_ack_after_copy: bool,
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
            tsq_limit: 0,
            moderate_rcvbuf: false,
            rmem_max: 87_380,
            linux26_sender: false,
            linux26_prequeue: false,
            linux26_ack_after_copy: false,
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
    /// Times TCP Small Queues held a segment back until a TX completion.
    pub tsq_throttles: u64,
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
    /// SOCK_NOSPACE: the writer found the send buffer full (`linux26`).
    nospace: bool,
    /// RFC 2861 state (`linux26`): largest packets_out of an
    /// application-limited stretch, when cwnd was last validated or grown,
    /// and when data was last sent.
    cwnd_used: u32,
    cwnd_stamp: SimTime,
    lsndtime: Option<SimTime>,
    // --- receive side
    /// The application is blocked in a read of this socket; set by the
    /// stack before each segment (`linux26_prequeue`).
    pub reader_waiting: bool,
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
    // --- below TCP (TCP Small Queues, `tsq`)
    /// Truesize of this side's data segments handed to the qdisc or the
    /// TX ring and not yet freed by a TX completion [bytes].
    tsq_queued: u64,
    /// TSQ_THROTTLED: a segment waits for a TX completion.
    tsq_throttled: bool,
    // --- receive buffer (autotuning, `autotune`)
    /// Socket receive buffer now [bytes]: `cfg.rcvbuf`, grown by
    /// autotuning.
    rcvbuf: u32,
    /// Receiver's RTT estimate (`rcv_rtt_est`).
    rcv_rtt: Option<Nanos>,
    /// The current RTT measure: (sequence that ends it, when it began).
    rcv_rtt_mark: Option<(u64, SimTime)>,
    /// `rcvq_space`: bytes read in the last measured round trip [bytes],
    /// and the read position and time the current measure began.
    rcvq_space: u32,
    rcvq_seq: u64,
    rcvq_time: Option<SimTime>,
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
            nospace: false,
            cwnd_used: 0,
            cwnd_stamp: SimTime::ZERO,
            lsndtime: None,
            reader_waiting: false,
            rcv_nxt: 0,
            rcv_queued: 0,
            ooo: Vec::new(),
            rcv_wup: 0,
            rcv_adv_edge: rwnd_init as u64,
            quickack: cfg.quickacks,
            pingpong: false,
            last_data_rcv: None,
            delack_deadline: None,
            tsq_queued: 0,
            tsq_throttled: false,
            rcvbuf: cfg.rcvbuf,
            rcv_rtt: None,
            rcv_rtt_mark: None,
            rcvq_space: autotune::initial_space(&cfg, rwnd_init),
            rcvq_seq: 0,
            rcvq_time: None,
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

    /// Current receive buffer size [bytes] (grows with autotuning).
    pub fn rcvbuf(&self) -> u32 {
        self.rcvbuf
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

    /// Past the quick-ACK start, in interactive mode (a NetPIPE peer that
    /// answers each message): for tests outside this module.
    #[cfg(test)]
    pub(crate) fn set_interactive(&mut self) {
        self.quickack = 0;
        self.pingpong = true;
    }
}

pub use linux26::{linux26_sndmem, linux26_tx_truesize};
pub use tsq::{tx_truesize, LINUX_TX_SKB_OVERHEAD};
pub use window::{initial_rcv_wnd, linux_window_clamp, win_from_space, window_from_space};

mod autotune;
mod linux26;
mod recv;
mod send;
mod tsq;
mod window;

#[cfg(test)]
mod linux26_tests;
#[cfg(test)]
mod tests;
