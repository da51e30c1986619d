//! Textbook behaviour of the TCP endpoint on an ideal pipe (fixed one-way
//! delay, no serialisation), driven by a tiny event loop.

use super::*;
use std::collections::BTreeMap;

/// Two endpoints joined by a pipe with a fixed one-way delay. Endpoint 0
/// sends `to_send` bytes as fast as its buffer allows; endpoint 1 reads
/// everything as soon as it is readable. `drop` lists data-segment
/// indices (in send order from endpoint 0) that the pipe loses.
struct Pipe {
    ep: [TcpEndpoint; 2],
    delay: Nanos,
    /// (arrival time, order) -> (destination, segment)
    wire: BTreeMap<(u64, u64), (usize, Segment)>,
    order: u64,
    now: SimTime,
    to_send: u64,
    written: u64,
    drop: Vec<u64>,
    data_sent: u64,
    /// (time, destination, segment) of every segment put on the pipe.
    log: Vec<(u64, usize, Segment)>,
    /// Endpoint 1's application reads what arrives (false: never reads).
    reads: bool,
}

impl Pipe {
    fn new(cfg: TcpConfig, delay_us: u64, to_send: u64) -> Pipe {
        Pipe {
            ep: [TcpEndpoint::new(cfg.clone()), TcpEndpoint::new(cfg)],
            delay: Nanos::from_us(delay_us),
            wire: BTreeMap::new(),
            order: 0,
            now: SimTime::ZERO,
            to_send,
            written: 0,
            drop: Vec::new(),
            data_sent: 0,
            log: Vec::new(),
            reads: true,
        }
    }

    fn emit(&mut self, from: usize, out: &mut TcpOut) {
        for s in out.segs.drain(..) {
            self.log.push((self.now.as_ns(), 1 - from, s));
            if from == 0 && s.len > 0 {
                let idx = self.data_sent;
                self.data_sent += 1;
                if self.drop.contains(&idx) {
                    continue;
                }
            }
            self.order += 1;
            self.wire
                .insert(((self.now + self.delay).as_ns(), self.order), (1 - from, s));
        }
    }

    fn pump_app(&mut self) {
        let mut out = TcpOut::default();
        if self.written < self.to_send {
            let n = self.ep[0].app_write(self.now, self.to_send - self.written, &mut out);
            self.written += n;
            self.emit(0, &mut out);
        }
        if !self.reads {
            return;
        }
        let mut out = TcpOut::default();
        let r = self.ep[1].readable() as u64;
        self.ep[1].app_read(self.now, r, &mut out);
        self.emit(1, &mut out);
    }

    /// Run until `until`; returns false if nothing was left to do.
    fn run(&mut self, until: u64) {
        self.pump_app();
        loop {
            let next_wire = self.wire.keys().next().map(|k| k.0);
            let next_timer = self
                .ep
                .iter()
                .filter_map(|e| e.next_timer())
                .map(|t| t.as_ns())
                .min();
            let next = match (next_wire, next_timer) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(x) => x,
                    None => return,
                },
            };
            if next > until {
                self.now = SimTime(until);
                return;
            }
            self.now = SimTime(next);
            if next_wire == Some(next) {
                let k = *self.wire.keys().next().unwrap();
                let (to, s) = self.wire.remove(&k).unwrap();
                let mut out = TcpOut::default();
                self.ep[to].on_segment(self.now, s, &mut out);
                self.emit(to, &mut out);
            } else {
                for i in 0..2 {
                    if self.ep[i].next_timer() == Some(self.now) {
                        let mut out = TcpOut::default();
                        self.ep[i].on_timer(self.now, &mut out);
                        self.emit(i, &mut out);
                    }
                }
            }
            self.pump_app();
        }
    }

    fn delivered(&self) -> u64 {
        self.ep[1].stats.bytes_received
    }

    /// Bytes delivered per second in the second second of the run [B/s]: the
    /// first second is left to slow start and window growth.
    fn steady_rate(&mut self) -> f64 {
        self.run(1_000_000_000);
        let before = self.delivered();
        self.run(2_000_000_000);
        (self.delivered() - before) as f64
    }

    /// (time, segment) of what endpoint 1 sent back (ACKs, window updates).
    fn to_sender(&self) -> impl Iterator<Item = (u64, &Segment)> + '_ {
        self.log
            .iter()
            .filter(|(_, to, _)| *to == 0)
            .map(|(t, _, s)| (*t, s))
    }

    /// (time, segment) of the data segments endpoint 0 sent (lost ones too).
    fn data_segments(&self) -> impl Iterator<Item = (u64, &Segment)> + '_ {
        self.log
            .iter()
            .filter(|(_, to, s)| *to == 1 && s.len > 0)
            .map(|(t, _, s)| (*t, s))
    }

    /// (time, length) of the data segments endpoint 0 sent.
    fn data_lengths(&self) -> Vec<(u64, u32)> {
        self.data_segments().map(|(t, s)| (t, s.len)).collect()
    }
}

#[test]
fn linux_window_for_the_default_rcvbuf() {
    // tcp_rmem[1] = 87380, adv_win_scale 2: 87380 - 21845 = 65535, rounded to
    // whole 1448-B segments: 45 x 1448 = 65160.
    assert_eq!(window_from_space(87_380, 2, 1448), 65_160);
}

#[test]
fn window_limited_throughput_is_window_over_rtt() {
    // RTT 10 ms (5 ms each way), no bandwidth limit: once slow start is over
    // the sender has one advertised window in flight per RTT. The window in
    // each ACK: a window's segments arrive together; the reader takes each
    // one as it arrives, and the ACK goes out (every second segment) while
    // that second segment is still unread, so the free space is
    // 87380 - 1448 = 85932 -> 85932 - 85932/4 = 64449 -> 44 whole segments
    // = 63712 B. Throughput = 63712 B / 10 ms = 6.3712 MB/s. Payload
    // accounting (no Linux truesize rule) so the window is the buffer's.
    let cfg = TcpConfig {
        skb_truesize: 0,
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(cfg, 5_000, u64::MAX / 4);
    let got = p.steady_rate();
    let w = window_from_space(87_380 - 1448, 2, 1448);
    assert_eq!(w, 63_712);
    let want = w as f64 / 0.010;
    assert!((got - want).abs() / want < 0.01, "{got} vs {want}");
}

#[test]
fn delayed_ack_every_second_full_segment() {
    // No quick-acks: 20 full segments sent in one window produce one ACK per
    // two segments (Linux __tcp_ack_snd_check: more than one full-sized
    // segment unacknowledged). Payload accounting: the whole window is open
    // from the start and no window-growth quick-ack intervenes.
    let cfg = TcpConfig {
        quickacks: 0,
        skb_truesize: 0,
        init_cwnd: 20,
        sndbuf_init: 131_072,
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(cfg, 100, 20 * 1448);
    p.run(150_000); // first flight plus its ACKs, before any further send
    let acks = p
        .to_sender()
        .filter(|(t, s)| s.len == 0 && *t < 150_000)
        .count();
    assert_eq!(p.delivered(), 20 * 1448);
    assert_eq!(acks, 10);
}

#[test]
fn a_lone_small_segment_is_acked_by_the_delayed_ack_timer() {
    // One 100-byte segment: not more than one full segment -> no immediate
    // ACK; the delayed-ACK timer (40 ms) sends it.
    let cfg = TcpConfig {
        quickacks: 0,
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(cfg, 100, 100);
    p.run(1_000_000_000);
    let acks: Vec<u64> = p
        .to_sender()
        .filter(|(_, s)| s.len == 0)
        .map(|(t, _)| t)
        .collect();
    assert_eq!(acks, vec![100_000 + 40_000_000]);
    assert_eq!(p.ep[1].stats.delayed_acks, 1);
}

#[test]
fn slow_start_doubles_per_rtt_with_an_ack_per_segment() {
    // Every segment acknowledged (quick-ack throughout), unlimited receive
    // window: each ACK adds one segment, so cwnd doubles per RTT from 3:
    // after k round trips cwnd = 3 * 2^k.
    let cfg = TcpConfig {
        quickacks: u32::MAX,
        rcvbuf: 1 << 30,
        sndbuf_init: 1 << 30,
        sndbuf_max: 1 << 30,
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(cfg, 1_000, u64::MAX / 4);
    for k in 1..=4u32 {
        // Just after the k-th round of ACKs has arrived (RTT = 2 ms).
        p.run(k as u64 * 2_000_000 + 500_000);
        assert_eq!(p.ep[0].cwnd, 3 * 2u32.pow(k), "round {k}");
    }
}

#[test]
fn fast_retransmit_repairs_a_single_loss_without_a_timeout() {
    let mut p = Pipe::new(TcpConfig::default(), 1_000, 200 * 1448);
    p.drop = vec![30];
    p.run(5_000_000_000);
    assert_eq!(p.delivered(), 200 * 1448);
    assert_eq!(p.ep[0].stats.fast_retransmits, 1);
    assert_eq!(p.ep[0].stats.timeouts, 0);
}

#[test]
fn a_lost_tail_segment_needs_the_retransmission_timeout() {
    // The last segment is lost: no later data, no duplicate ACKs; the RTO
    // (at least 200 ms) resends it.
    let mut p = Pipe::new(TcpConfig::default(), 1_000, 10 * 1448);
    p.drop = vec![9];
    p.run(10_000_000_000);
    assert_eq!(p.delivered(), 10 * 1448);
    assert_eq!(p.ep[0].stats.timeouts, 1);
    let last = p.data_segments().map(|(t, _)| t).max().unwrap();
    assert!(last >= 200_000_000, "retransmitted at {last} ns");
}

#[test]
fn nagle_holds_a_short_segment_while_data_is_in_flight() {
    // 1448 + 100 bytes written at once without TCP_NODELAY: the full segment
    // goes, the 100-byte tail waits for the first ACK (one RTT = 2 ms later).
    let cfg = TcpConfig {
        nodelay: false,
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(cfg, 1_000, 1448 + 100);
    p.run(100_000_000);
    assert_eq!(p.data_lengths(), vec![(0, 1448), (2_000_000, 100)]);
    // With TCP_NODELAY both go at once.
    let mut p = Pipe::new(TcpConfig::default(), 1_000, 1448 + 100);
    p.run(100_000_000);
    assert_eq!(p.data_lengths(), vec![(0, 1448), (0, 100)]);
}

#[test]
fn linux_initial_window_is_four_segments_and_the_clamp_reserves_one_mss() {
    // tcp_select_initial_window: MSS <= 1460 -> 4 x 1448 = 5792.
    // tcp_init_buffer_space with tcp_app_win 31: full space 65535, one MSS
    // reserved because 65535 + 1448 > 65535 -> 64087.
    let cfg = TcpConfig::default();
    assert_eq!(initial_rcv_wnd(&cfg), 5792);
    assert_eq!(linux_window_clamp(&cfg), 64_087);
    // Without the Linux rules the whole buffer's window is offered at once.
    let payload = TcpConfig {
        skb_truesize: 0,
        ..TcpConfig::default()
    };
    assert_eq!(initial_rcv_wnd(&payload), 65_160);
}

/// The windows endpoint 1 advertised, in order.
fn advertised(p: &Pipe) -> Vec<u32> {
    p.to_sender().map(|(_, s)| s.wnd).collect()
}

#[test]
fn two_kilobyte_buffers_stop_the_window_at_half_the_full_space() {
    // truesize 2336 for 1448 B: tcp_win_from_space(2336) = 1752 > 1448, so
    // __tcp_grow_window decides: truesize/2 = 876 <= 1448 grows rcv_ssthresh
    // by 2 x 1448 while rcv_ssthresh <= 65535/2 = 32767. From 5792 the
    // steps are 5792 + 2896 k; k = 9 gives 31856 (still <= 32767), k = 10
    // gives 34752, after which the loop body never runs: the window stays at
    // 34752 = 24 segments, about half of what rcvbuf 87380 could offer.
    // The first ACK already carries one step (8688): the segment it
    // acknowledges grew the window before the ACK was built.
    let mut p = Pipe::new(TcpConfig::default(), 1_000, 20_000_000);
    p.run(2_000_000_000);
    assert_eq!(p.ep[1].rcv_ssthresh(), 34_752);
    let w = advertised(&p);
    assert_eq!(w.first(), Some(&8688));
    assert_eq!(w.iter().max(), Some(&34_752));
    assert_eq!(w.last(), Some(&34_752));
}

#[test]
fn small_buffers_grow_the_window_to_the_clamp() {
    // truesize 1900: tcp_win_from_space(1900) = 1425 <= 1448, the fast check
    // of tcp_grow_window passes and rcv_ssthresh climbs to the clamp 64087.
    // With one 1900-byte buffer queued when an ACK goes out the free space
    // is (87380 - 1900) * 3/4 = 64110, so the offer is
    // min(64110, 64087) rounded down to 1448 B: 44 segments = 63712.
    let cfg = TcpConfig {
        skb_truesize: 1900,
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(cfg, 1_000, 20_000_000);
    p.run(2_000_000_000);
    assert_eq!(p.ep[1].rcv_ssthresh(), 64_087);
    assert_eq!(advertised(&p).iter().max(), Some(&63_712));
}

#[test]
fn linux_window_limited_throughput_is_the_grown_window_over_rtt() {
    // As window_limited_throughput_is_window_over_rtt, with the default
    // 2 KB-buffer truesize: one 34752-byte window per 10 ms RTT.
    let mut p = Pipe::new(TcpConfig::default(), 5_000, u64::MAX / 4);
    let got = p.steady_rate();
    let want = 34_752.0 / 0.010;
    assert!((got - want).abs() / want < 0.01, "{got} vs {want}");
}

#[test]
fn an_unread_receive_buffer_closes_the_window_without_shrinking_it() {
    // The reader never reads. Each queued segment charges 2336 B, so the
    // free space falls; tcp_select_window never moves the right edge
    // (ack + window) back, and the sender stops once the rcvbuf is charged:
    // once the free space is below one MSS the offer is only what is left
    // of the window already promised, which then runs down to 0; nothing
    // inside a promised window is dropped. At most rcvbuf / truesize = 37
    // segments plus one full window (24) can arrive.
    let mut p = Pipe::new(TcpConfig::default(), 1_000, 10_000_000);
    p.reads = false;
    p.run(3_000_000_000);
    let edges: Vec<u64> = p
        .to_sender()
        .map(|(_, s)| s.ack as u64 + s.wnd as u64)
        .collect();
    assert!(edges.windows(2).all(|e| e[1] >= e[0]), "{edges:?}");
    let received = p.delivered();
    assert!(received <= (37 + 24) * 1448, "{received}");
    assert_eq!(p.to_sender().last().unwrap().1.wnd, 0);
    assert_eq!(p.ep[0].stats.retransmits, 0);
}

#[test]
fn sequence_numbers_unwrap_across_32_bits() {
    assert_eq!(unwrap_seq(0xFFFF_FF00, 0x0000_0010), 0x1_0000_0010);
    assert_eq!(unwrap_seq(0x1_0000_0010, 0xFFFF_FF00), 0xFFFF_FF00);
}
