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
    // = 63712 B. Throughput = 63712 B / 10 ms = 6.3712 MB/s.
    let mut p = Pipe::new(TcpConfig::default(), 5_000, u64::MAX / 4);
    p.run(1_000_000_000);
    let before = p.delivered();
    p.run(2_000_000_000);
    let got = (p.delivered() - before) as f64; // bytes in one second
    let w = window_from_space(87_380 - 1448, 2, 1448);
    assert_eq!(w, 63_712);
    let want = w as f64 / 0.010;
    assert!((got - want).abs() / want < 0.01, "{got} vs {want}");
}

#[test]
fn delayed_ack_every_second_full_segment() {
    // No quick-acks: 20 full segments sent in one window produce one ACK per
    // two segments (Linux __tcp_ack_snd_check: more than one full-sized
    // segment unacknowledged).
    let cfg = TcpConfig {
        quickacks: 0,
        init_cwnd: 20,
        sndbuf_init: 131_072,
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(cfg, 100, 20 * 1448);
    p.run(150_000); // first flight plus its ACKs, before any further send
    let acks = p
        .log
        .iter()
        .filter(|(t, to, s)| *to == 0 && s.len == 0 && *t < 150_000)
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
        .log
        .iter()
        .filter(|(_, to, s)| *to == 0 && s.len == 0)
        .map(|x| x.0)
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
    let last = p
        .log
        .iter()
        .filter(|(_, to, s)| *to == 1 && s.len > 0)
        .map(|x| x.0)
        .max()
        .unwrap();
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
    let data: Vec<(u64, u32)> = p
        .log
        .iter()
        .filter(|(_, to, s)| *to == 1 && s.len > 0)
        .map(|x| (x.0, x.2.len))
        .collect();
    assert_eq!(data, vec![(0, 1448), (2_000_000, 100)]);
    // With TCP_NODELAY both go at once.
    let mut p = Pipe::new(TcpConfig::default(), 1_000, 1448 + 100);
    p.run(100_000_000);
    let data: Vec<(u64, u32)> = p
        .log
        .iter()
        .filter(|(_, to, s)| *to == 1 && s.len > 0)
        .map(|x| (x.0, x.2.len))
        .collect();
    assert_eq!(data, vec![(0, 1448), (0, 100)]);
}

#[test]
fn sequence_numbers_unwrap_across_32_bits() {
    assert_eq!(unwrap_seq(0xFFFF_FF00, 0x0000_0010), 0x1_0000_0010);
    assert_eq!(unwrap_seq(0x1_0000_0010, 0xFFFF_FF00), 0xFFFF_FF00);
}
