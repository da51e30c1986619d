//! Applications and traffic sources: the generator port, the UDP sink and
//! ping.
//!
//! - Generator: an external tester port sending UDP frames at a constant
//!   rate, with Poisson (exponential) inter-arrivals, or on/off bursts; fixed
//!   or weighted frame sizes; never faster than its line (frames wait for the
//!   wire). Constant spacing is carried in picoseconds so long-run rates are
//!   exact.
//! - Replay: a generator whose frames come from a capture file
//!   (`replay`); streamed, one record read ahead.
//! - Open-loop request/response (`rpc_open`): many connections, arrivals
//!   independent of replies.
//! - UdpSink: a socket with a receive-buffer limit, read by an application
//!   thread; records one-way latency (generator emission -> application read).
//! - Ping: sends an ICMP echo request every interval, records the round trip
//!   from the send call to the application reading the reply (as ping(8)).
//!
//! Units: times [ns], rates [frames/s], sizes [bytes].

pub mod generator;
pub mod netpipe;
pub mod replay;
pub mod rpc_open;
pub mod tcp_apps;

use crate::engine::StreamRng;
use crate::metrics::LatencyHist;
use crate::nic::rss::{self, FiveTuple, Rss, PROTO_UDP};
use crate::packet::{Packet, PktKind};
use crate::units::{wire_bytes, Nanos, SimTime};
pub use generator::{GeneratorCfg, Pattern, SizeWeight};
use rand::RngExt;
use std::net::IpAddr;

/// IPv4 (20) + ICMP (8) + Ethernet header and FCS (18) around a ping payload [bytes].
pub const PING_OVERHEAD_BYTES: u32 = 46;

/// State of a generator port.
pub struct Generator {
    pattern: Pattern,
    /// Mean spacing [ps] between frames while sending.
    period_ps: u64,
    /// Weighted sizes: (bytes, cumulative weight).
    sizes: Vec<(u32, u64)>,
    total_weight: u64,
    start: SimTime,
    stop: SimTime,
    on: Nanos,
    off: Nanos,
    flows: u16,
    rng: StreamRng,
    /// Next emission time [ps] (constant/on-off).
    next_ps: u128,
    next_seq: u32,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub offered_bps: f64,
    /// The capture being replayed (`pattern = "replay"`).
    pub replay: Option<Box<replay::Replay>>,
    /// The receiving port's RSS, when it runs the model: a replayed frame
    /// carries the hash of its own headers.
    rss: Option<Box<Rss>>,
    /// The hash tag (`nic::rss::tag`) of each flow's 5-tuple at the
    /// receiving port; empty when that port does not hash.
    flow_tags: Vec<u16>,
}

/// The 5-tuples of a generator's `n` flows, drawn from `rng` (a stream of
/// their own, so the frames' timing draws do not move): UDP from distinct
/// (source address, source port) pairs, the addresses uniform in
/// 198.18.0.0/16 and the ports uniform in 1024-65535, to 198.19.0.1 port 7.
/// 198.18.0.0/15 is the block RFC 2544 (Appendix C.2.6.2) reserves for
/// benchmark tests, port 7 the destination its UDP test frame uses
/// (Appendix C.2.6.4).
pub fn flow_tuples(n: u16, rng: &mut StreamRng) -> Vec<FiveTuple> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n as usize);
    while out.len() < n as usize {
        let host: u16 = rng.random();
        let sport: u16 = rng.random_range(1024..=65535);
        if seen.insert((host, sport)) {
            let [a, b] = host.to_be_bytes();
            out.push(FiveTuple {
                src: IpAddr::from([198, 18, a, b]),
                dst: IpAddr::from([198, 19, 0, 1]),
                proto: PROTO_UDP,
                sport,
                dport: 7,
            });
        }
    }
    out
}

impl Generator {
    /// A generator replaying a capture (opened by the caller).
    pub fn replaying(cfg: &GeneratorCfg, r: replay::Replay, end: SimTime, rng: StreamRng) -> Self {
        let stop = cfg
            .stop_us
            .map(|s| SimTime(s * 1000))
            .unwrap_or(end)
            .min(end);
        Generator {
            pattern: Pattern::Replay,
            period_ps: 1,
            sizes: vec![(64, 1)],
            total_weight: 1,
            start: SimTime::ZERO,
            stop,
            on: Nanos(0),
            off: Nanos(0),
            flows: 1,
            rng,
            next_ps: 0,
            next_seq: 0,
            sent_packets: 0,
            sent_bytes: 0,
            rx_packets: 0,
            rx_bytes: 0,
            offered_bps: 0.0,
            replay: Some(Box::new(r)),
            rss: None,
            flow_tags: Vec::new(),
        }
    }

    /// A replayed frame longer than the link MTU: dropped before it reaches
    /// the receiver (`DropReason::FrameOverMtu`).
    pub fn over_mtu(&self, pkt: &Packet) -> bool {
        self.replay
            .as_ref()
            .is_some_and(|r| pkt.frame_bytes > r.max_frame_bytes())
    }
    /// Build from a validated config; `line_bps` is the link rate.
    pub fn new(cfg: &GeneratorCfg, line_bps: u64, end: SimTime, rng: StreamRng) -> Self {
        let sizes: Vec<(u32, u32)> = match (&cfg.frame_sizes, cfg.frame_bytes) {
            (Some(v), _) => v
                .iter()
                .filter(|s| s.weight > 0)
                .map(|s| (s.bytes, s.weight))
                .collect(),
            (None, b) => vec![(b.unwrap_or(64), 1)],
        };
        let mut cum = 0u64;
        let sizes: Vec<(u32, u64)> = sizes
            .iter()
            .map(|&(b, w)| {
                cum += w as u64;
                (b, cum)
            })
            .collect();
        let (rate_pps, mean_frame_bits) = offered_rate(cfg, line_bps, &sizes);
        let period_ps = (1e12 / rate_pps).round().max(1.0) as u64;
        let start = SimTime(cfg.start_us * 1000);
        let stop = cfg
            .stop_us
            .map(|s| SimTime(s * 1000))
            .unwrap_or(end)
            .min(end);
        let on = Nanos(cfg.on_us.unwrap_or(0) * 1000);
        let off = Nanos(cfg.off_us.unwrap_or(0) * 1000);
        let duty = if cfg.pattern == Pattern::OnOff {
            on.as_ns() as f64 / (on.as_ns() + off.as_ns()) as f64
        } else {
            1.0
        };
        Generator {
            pattern: cfg.pattern,
            period_ps,
            sizes,
            total_weight: cum,
            start,
            stop,
            on,
            off,
            flows: cfg.flows,
            rng,
            next_ps: start.as_ns() as u128 * 1000,
            next_seq: 0,
            sent_packets: 0,
            sent_bytes: 0,
            rx_packets: 0,
            rx_bytes: 0,
            offered_bps: rate_pps * mean_frame_bits * duty,
            replay: None,
            rss: None,
            flow_tags: Vec::new(),
        }
    }

    /// The receiving port hashes with `rss`: each flow (`tuples`, one per
    /// flow; ignored by a replay, whose frames carry their own) gets its
    /// hash tag.
    pub fn set_rss(&mut self, rss: &Rss, tuples: &[FiveTuple]) {
        if self.replay.is_some() {
            self.rss = Some(Box::new(rss.clone()));
        } else {
            self.flow_tags = tuples.iter().map(|t| rss::tag(rss.hash(t))).collect();
        }
    }

    /// A new offered rate (`rate_pps` or `load` of `cfg`) from now on: the
    /// emission already scheduled keeps its time, the spacing after it is
    /// the new one. `offered_bps` stays the offer configured at the start
    /// (the report lists the changes beside it).
    pub fn set_rate(&mut self, cfg: &GeneratorCfg, line_bps: u64) {
        let (rate_pps, _) = offered_rate(cfg, line_bps, &self.sizes);
        self.period_ps = (1e12 / rate_pps).round().max(1.0) as u64;
    }

    /// Switched back on at `now`: the next emission, at `now` (or the start
    /// time, or the next "on" window of an on-off pattern), if before the stop.
    pub fn resume(&mut self, now: SimTime) -> Option<SimTime> {
        let t = self.align(now.max(self.start));
        self.next_ps = t.as_ns() as u128 * 1000;
        (t < self.stop).then_some(t)
    }

    /// Time of the first emission, if any.
    pub fn first(&mut self) -> Option<SimTime> {
        if let Some(r) = &mut self.replay {
            let t = SimTime(self.start.as_ns().saturating_add(r.advance()?));
            return (t < self.stop).then_some(t);
        }
        let t = self.align(SimTime(self.start.as_ns()));
        (t < self.stop).then_some(t)
    }

    /// For on/off: move `t` into the next "on" window.
    fn align(&self, t: SimTime) -> SimTime {
        if self.pattern != Pattern::OnOff {
            return t;
        }
        let cycle = self.on.as_ns() + self.off.as_ns();
        let rel = t.as_ns().saturating_sub(self.start.as_ns());
        let pos = rel % cycle;
        if pos < self.on.as_ns() {
            t
        } else {
            SimTime(t.as_ns() + (cycle - pos))
        }
    }

    /// Emit a frame at `now`; returns it and the next emission time.
    /// Inlined into the caller; the replay path is not.
    #[inline(always)]
    pub fn emit(&mut self, now: SimTime) -> (Packet, Option<SimTime>) {
        if self.replay.is_some() {
            return self.emit_replay(now);
        }
        self.emit_generated(now)
    }

    /// `emit` of a replay generator: the next frame read ahead.
    #[inline(never)]
    fn emit_replay(&mut self, now: SimTime) -> (Packet, Option<SimTime>) {
        let r = self.replay.as_mut().expect("a replay generator");
        let (f, rel) = r.take().expect("emit follows a frame read ahead");
        // Sent when the line was free, at or after its capture time.
        r.note_sent(
            now.as_ns()
                .saturating_sub(self.start.as_ns().saturating_add(rel)),
        );
        let mut pkt = Packet::datagram(PktKind::Udp, now, f.frame_bytes(), self.next_seq, f.flow);
        pkt.selected = r.selects(&f);
        if let (Some(h), Some(t)) = (&self.rss, f.tuple()) {
            pkt.rss = rss::tag(h.hash(&t));
        }
        self.next_seq = self.next_seq.wrapping_add(1);
        self.sent_packets += 1;
        self.sent_bytes += pkt.frame_bytes as u64;
        let next = r
            .advance()
            .map(|rel| SimTime(self.start.as_ns().saturating_add(rel)))
            .filter(|t| *t < self.stop);
        (pkt, next)
    }

    /// `emit` of a constant, Poisson or on-off generator.
    #[inline(always)]
    fn emit_generated(&mut self, now: SimTime) -> (Packet, Option<SimTime>) {
        let bytes = self.pick_size();
        // One flow (the common case) needs no division.
        let flow = if self.flows == 1 {
            0
        } else {
            (self.next_seq % self.flows as u32) as u16
        };
        let mut pkt = Packet::datagram(PktKind::Udp, now, bytes, self.next_seq, flow);
        if let Some(&tag) = self.flow_tags.get(flow as usize) {
            pkt.rss = tag;
        }
        self.next_seq = self.next_seq.wrapping_add(1);
        self.sent_packets += 1;
        self.sent_bytes += bytes as u64;
        let next = match self.pattern {
            Pattern::Poisson => {
                // Exponential inter-arrival with mean period; drawn in ps, kept
                // integer. The gap counts from the frame's scheduled time, not
                // from `now`: a frame the busy wire held back queues at the
                // sender (as in a traffic generator's TX queue) and does not
                // delay the ones after it, so the mean rate is the configured
                // one. Counting from `now` lost E[(T - X)+] per frame (frame
                // time T, gap X): 2.0 % of 300 kframes/s of 64-B frames at 1 Gb/s.
                let u: f64 = self.rng.random::<f64>();
                let gap_ps = (-(1.0 - u).ln() * self.period_ps as f64).round() as u128;
                self.next_ps += gap_ps.max(1);
                SimTime::from_ps_floor(self.next_ps)
            }
            Pattern::Constant | Pattern::OnOff | Pattern::Replay => {
                self.next_ps += self.period_ps as u128;
                let t = SimTime::from_ps_floor(self.next_ps);
                let a = self.align(t);
                if a != t {
                    self.next_ps = a.as_ns() as u128 * 1000;
                }
                a
            }
        };
        (pkt, (next < self.stop).then_some(next))
    }

    fn pick_size(&mut self) -> u32 {
        if self.sizes.len() == 1 {
            return self.sizes[0].0;
        }
        let r = self.rng.random_range(0..self.total_weight);
        self.sizes
            .iter()
            .find(|(_, c)| r < *c)
            .map(|s| s.0)
            .unwrap_or(self.sizes[0].0)
    }
}

/// The offered rate [frames/s] of a rate or load configuration with the
/// weighted sizes `sizes` (bytes, cumulative weight), and the mean frame
/// size [bits].
fn offered_rate(cfg: &GeneratorCfg, line_bps: u64, sizes: &[(u32, u64)]) -> (f64, f64) {
    let cum = sizes.last().map_or(1, |s| s.1.max(1));
    let mean = |bits: &dyn Fn(u32) -> f64| {
        sizes
            .iter()
            .scan(0u64, |prev, &(b, c)| {
                let w = c - *prev;
                *prev = c;
                Some(bits(b) * w as f64)
            })
            .sum::<f64>()
            / cum as f64
    };
    let mean_wire_bits = mean(&|b| wire_bytes(b) as f64 * 8.0);
    let mean_frame_bits = mean(&|b| b as f64 * 8.0);
    let rate_pps = match (cfg.rate_pps, cfg.load) {
        (Some(r), _) => r,
        (None, Some(l)) => l * line_bps as f64 / mean_wire_bits,
        (None, None) => unreachable!("validated: one of rate_pps/load"),
    };
    (rate_pps, mean_frame_bits)
}

/// A UDP receive socket and the thread reading it.
#[derive(Default)]
pub struct UdpSink {
    pub rcvbuf_bytes: u32,
    pub queued_bytes: u32,
    /// Datagrams waiting to be read: (creation time, frame size [bytes],
    /// selected by a replay's `latency_of`), all the reader uses of a
    /// packet (the socket holds up to 4096 64-byte frames at the default
    /// buffer, so a smaller record keeps the host's memory traffic down).
    pub queue: std::collections::VecDeque<(SimTime, u32, bool)>,
    pub received: u64,
    pub rx_bytes: u64,
    pub latency: LatencyHist,
    /// Latency of the frames a replay's `latency_of` selected (a subset of
    /// `latency`); their count is its count.
    pub latency_selected: LatencyHist,
}

/// A ping(8) process.
#[derive(Default)]
pub struct Ping {
    pub interval: Nanos,
    pub size_bytes: u32,
    pub count: Option<u64>,
    pub sent: u64,
    pub received: u64,
    /// Send timers fired so far.
    pub fired: u64,
    pub send_due: bool,
    pub replies: std::collections::VecDeque<Packet>,
    pub rtt: LatencyHist,
    /// (local port index, peer host index)
    pub port: u16,
}

impl Ping {
    /// Frame size of a request/reply [bytes].
    pub fn frame_bytes(&self) -> u32 {
        (self.size_bytes + PING_OVERHEAD_BYTES).max(64)
    }
}

/// A UDP sender at a fixed rate (iperf -u, a packet blaster).
#[derive(Default)]
pub struct UdpSend {
    /// Time between frames [ps] (kept in ps so that 1.488 Mframes/s is exact
    /// over a run).
    pub period_ps: u64,
    /// Next send time [ps].
    pub next_ps: u128,
    pub frame_bytes: u32,
    pub count: Option<u64>,
    /// Send timers fired so far.
    pub fired: u64,
    /// Frames due and not yet sent (the thread sends them all when it runs).
    pub due: u64,
    pub sent: u64,
    /// Local port index.
    pub port: u16,
}

impl UdpSend {
    /// UDP payload of a frame [bytes]: the frame less Ethernet (14), IPv4
    /// (20), UDP (8) headers and the FCS (4).
    pub fn payload_bytes(&self) -> u32 {
        self.frame_bytes.saturating_sub(46)
    }
}

/// The application variants.
pub enum AppKind {
    UdpSink(UdpSink),
    Ping(Ping),
    UdpSend(UdpSend),
    NetpipeClient(tcp_apps::NetpipeClient),
    /// The echoing side; `client` is the application index of its client.
    NetpipeServer {
        srv: tcp_apps::NetpipeServer,
        client: u16,
    },
    IperfClient(tcp_apps::IperfClient),
    IperfServer {
        srv: tcp_apps::IperfServer,
        started: SimTime,
    },
    RpcClient(tcp_apps::RpcClient),
    RpcServer(tcp_apps::RpcServer),
    /// Open-loop request/response client (many connections).
    RpcOpenClient(rpc_open::RpcOpenClient),
    /// One worker thread of the open-loop load's server.
    RpcOpenServer(rpc_open::RpcOpenServer),
}

/// One application instance.
pub struct App {
    pub name: String,
    pub host: u16,
    pub core: u16,
    pub kind: AppKind,
}

/// Scheduling state of an application (kept apart from `App` so the stack
/// can consult it while an application runs).
#[derive(Clone, Copy, Debug, Default)]
pub struct AppSched {
    /// Queued on its core or running.
    pub runnable: bool,
    /// A wake event is scheduled.
    pub wake_pending: bool,
    /// What the application is blocked on (TCP applications); None = any wake.
    pub waits: Option<tcp_apps::Wait>,
}

impl App {
    /// Packets this application holds (socket queues) — for the ledger.
    pub fn packets_held(&self) -> u64 {
        match &self.kind {
            AppKind::UdpSink(s) => s.queue.len() as u64,
            AppKind::Ping(p) => p.replies.len() as u64,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng_stream;

    fn gen_cfg(pattern: Pattern, rate: f64) -> GeneratorCfg {
        GeneratorCfg {
            name: "g".into(),
            pattern,
            rate_pps: Some(rate),
            load: None,
            frame_bytes: Some(64),
            frame_sizes: None,
            on_us: Some(100),
            off_us: Some(300),
            start_us: 0,
            stop_us: None,
            flows: 1,
            capture: None,
            speed: None,
            loops: None,
            only_to: None,
            latency_of: None,
            mtu_bytes: None,
            enabled: true,
        }
    }

    fn count(mut g: Generator) -> u64 {
        let mut n = 0;
        let mut t = g.first();
        while let Some(now) = t {
            let (_, next) = g.emit(now);
            n += 1;
            t = next;
        }
        n
    }

    #[test]
    fn constant_rate_is_exact() {
        // 3e6 frames/s: the 333.33 ns period is not a whole ns; it is carried in
        // ps (333 333 ps), so 1 s holds floor(1e12 / 333 333) + 1 = 3 000 004
        // frames (the +1 is the frame at t = 0), i.e. within 1.5e-6 of 3e6.
        let g = Generator::new(
            &gen_cfg(Pattern::Constant, 3.0e6),
            1_000_000_000_000,
            SimTime(1_000_000_000),
            rng_stream(1, "g"),
        );
        assert_eq!(count(g), 3_000_004);
    }

    #[test]
    fn on_off_duty_cycle() {
        // 1 Mpps during 100 us of every 400 us over 4 ms: 10 windows x 100 frames.
        let g = Generator::new(
            &gen_cfg(Pattern::OnOff, 1.0e6),
            1_000_000_000_000,
            SimTime(4_000_000),
            rng_stream(1, "g"),
        );
        assert_eq!(count(g), 1000);
    }

    #[test]
    fn poisson_mean_rate() {
        // Poisson count over 1 s at 1e5/s: mean 1e5, sd ~316; allow 5 sd.
        let g = Generator::new(
            &gen_cfg(Pattern::Poisson, 1.0e5),
            1_000_000_000_000,
            SimTime(1_000_000_000),
            rng_stream(9, "g"),
        );
        let n = count(g) as f64;
        assert!((n - 1.0e5).abs() < 5.0 * 316.0, "{n}");
    }

    #[test]
    fn load_converts_through_wire_size() {
        // load 1.0 of 1 Gb/s with 64-B frames: one frame per 672 ns of wire time
        // (84 B); frames at 0, 672, ... < 1e9 ns: floor((1e9 - 1) / 672) + 1 = 1 488 096.
        let mut c = gen_cfg(Pattern::Constant, 1.0);
        c.rate_pps = None;
        c.load = Some(1.0);
        let g = Generator::new(
            &c,
            1_000_000_000,
            SimTime(1_000_000_000),
            rng_stream(1, "g"),
        );
        assert_eq!(count(g), 1_488_096);
    }
}
