//! Run outputs: the summary, the time series and the latency histograms of a
//! finished world, as stable, documented, deterministic JSON.
//!
//! Every field and its unit is documented in `docs/outputs.md`. Wall-clock
//! measurements are not part of the report (they would break byte-identical
//! output for the same scenario and seed); see `api::Perf`. The warnings
//! are built in `report/warnings.rs`, a capture's summary in
//! `report/capture.rs`.

use super::config::Scenario;
use super::world::{NapiStats, World};
use crate::apps::AppKind;
use crate::error::Error;
use crate::metrics::LatencyHist;
use crate::nic::Registers;
use crate::packet::DropReason;
use capture::{capture_out, selectors};
use serde::Serialize;
use warnings::warnings;

mod capture;
mod replay_checks;
mod warnings;
use std::collections::BTreeMap;

#[derive(Serialize)]
pub struct Report<'a> {
    pub holdoff_version: &'static str,
    pub scenario: &'a str,
    pub seed: u64,
    pub config: &'a Scenario,
    pub summary: Summary,
    /// The `[[at]]` changes applied during the run, in time order (absent
    /// when the scenario has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<ChangeOut<'a>>,
    pub timeseries: Series<'a>,
    /// Per application: (value [ns], count) buckets of its latency histogram.
    pub histograms: BTreeMap<String, Vec<(u64, u64)>>,
}

#[derive(Serialize)]
pub struct Summary {
    pub sim_time_ns: u64,
    /// Set when the run stopped early because a moderation algorithm failed.
    pub aborted: Option<AbortOut>,
    /// Configured values the chip or driver ignores, holds without effect or
    /// converts, and settings that fail the line-rate checks of `holdoff
    /// explain`, each naming the field (see `warnings`).
    pub warnings: Vec<WarningOut>,
    pub events_processed: u64,
    pub ledger: LedgerOut,
    pub drops: BTreeMap<&'static str, u64>,
    pub ports: Vec<PortOut>,
    pub hosts: Vec<HostOut>,
    pub apps: Vec<AppOut>,
    pub generators: Vec<GenOut>,
    pub tcp: Vec<ConnOut>,
}

/// One change applied during the run: when, the path as written in
/// `[[at]]`, and its value.
#[derive(Serialize)]
pub struct ChangeOut<'a> {
    pub t_ns: u64,
    pub path: &'a str,
    pub value: &'a serde_json::Value,
}

/// A configured value that is not in effect as written: the scenario field
/// it came from and why (the chip lacks the register, a mode bypasses it,
/// the driver never sets the bit it needs, a unit conversion truncates it).
#[derive(Serialize)]
pub struct WarningOut {
    pub field: String,
    pub message: String,
}

#[derive(Serialize)]
pub struct AbortOut {
    pub at_ns: u64,
    pub reason: String,
}

#[derive(Serialize)]
pub struct LedgerOut {
    pub injected: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub balanced: bool,
}

#[derive(Serialize)]
pub struct VectorOut {
    pub vector: u16,
    pub interrupts: u64,
    pub interrupts_per_s: f64,
    /// Interrupts asserted with a TX completion (TXDW) pending, and with a
    /// receive cause (RXT0, RXDMT0, RXO) pending; one interrupt may count
    /// in both, and a throttle that held several causes counts once.
    pub interrupts_txdw: u64,
    pub interrupts_rx: u64,
    pub throttle_interval_ns: u64,
    /// Smallest observed spacing between two interrupts of this vector [ns]; null if < 2 interrupts.
    pub min_spacing_ns: Option<u64>,
    /// Raw throttle register value at the end (ITR [256 ns] or EITR interval [us]).
    pub throttle_register: u32,
    /// FreeBSD `dev.em.N.queue_rx_0.interrupt_rate` sysctl as the driver
    /// computes it from the register (freebsd-aim only) [int/s].
    pub freebsd_interrupt_rate: Option<u32>,
    /// The NAPI instance of this vector: busy polling, IRQ suspension and
    /// hrtimer counters (all zero unless the host's driver is napi).
    pub napi: NapiStats,
}

#[derive(Serialize)]
pub struct PortOut {
    pub port: String,
    pub chip: &'static str,
    pub moderation: String,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_missed: u64,
    pub interrupts: u64,
    pub vectors: Vec<VectorOut>,
    /// The moderation registers as the chip holds them at the end of the
    /// run, in hardware units; null for a register the chip does not have.
    pub registers: Registers,
    pub rx_ring_max_occupancy: u32,
    /// Byte queue limits of the TX ring (absent when BQL is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bql: Option<crate::host::dql::DqlStats>,
    /// Decisions of a periodic or per-interrupt algorithm (empty for static).
    pub moderation_trace: Vec<TraceOut>,
}

#[derive(Serialize)]
pub struct TraceOut {
    pub t_ns: u64,
    pub values: BTreeMap<&'static str, i64>,
}

#[derive(Serialize)]
pub struct CpuNs {
    pub hardirq: u64,
    pub softirq: u64,
    pub app: u64,
    pub idle: u64,
}

#[derive(Serialize)]
pub struct CpuUtil {
    pub hardirq: f64,
    pub softirq: f64,
    pub app: f64,
    pub busy: f64,
}

#[derive(Serialize)]
pub struct HostOut {
    pub host: String,
    pub profile: &'static str,
    pub driver: &'static str,
    pub cores: usize,
    pub cpu_ns: CpuNs,
    pub cpu_util: CpuUtil,
    /// CPU time of the host's busiest core over the run (interrupts,
    /// softirq and applications; not `cpu_hogs`) [ns]. Beside the time the
    /// traffic lasted it says whether that core kept up: a core that needs
    /// more time than the traffic lasted ends with a backlog, which a
    /// finite run (a replayed capture) drains after its last frame but
    /// sustained traffic would not.
    pub busiest_core_ns: u64,
    /// Interrupt deliveries to cores (handler invocations, including spurious/shared).
    pub irq_deliveries: u64,
    pub time_squeeze: u64,
    /// Times net_rx_action handed the rest of its work to ksoftirqd (the
    /// softirq restart limit reached). Absent when it never did.
    #[serde(skip_serializing_if = "is_zero")]
    pub ksoftirqd_handoffs: u64,
    /// Driver locks (FreeBSD `EM_LOCK`, one per port, then the host's I/O
    /// APIC spin lock `icu_lock` where the OS masks the driver's lines)
    /// when the driver models them: acquisitions, contention, spinning
    /// (CPU) and sleeping (latency). Absent for other drivers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub locks: Vec<LockOut>,
    /// FreeBSD netisr counters (`ipintrq` drops, its peak, packets forwarded
    /// by `swi:net`), when forwarding goes through it. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netisr: Option<crate::scenario::world::NetisrStats>,
    /// The CPU-bound processes of `hosts[].load.cpu_hogs`, when there are
    /// any: how many, and the CPU time they got (their slices and their
    /// cores' idle time; not in `cpu_ns`/`cpu_util`). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_hogs: Option<HogOut>,
}

#[derive(Serialize)]
pub struct HogOut {
    pub processes: u32,
    pub cpu_ns: u64,
    /// `cpu_ns` over the run's duration [cores].
    pub cores_used: f64,
}

#[derive(Serialize)]
pub struct LockOut {
    /// The lock: a port's driver lock ("host.nic") or the host's I/O APIC
    /// spin lock ("host.icu_lock").
    pub lock: String,
    #[serde(flatten)]
    pub stats: crate::host::lock::LockStats,
    /// CPU time each core spent spinning for it [ns] (index = core).
    pub spin_ns_by_core: Vec<u64>,
}

#[derive(Serialize)]
pub struct LatencyOut {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

#[derive(Serialize)]
pub struct AppOut {
    pub app: String,
    pub kind: &'static str,
    pub host: String,
    pub sent: u64,
    pub received: u64,
    pub rx_bytes: u64,
    pub throughput_bps: f64,
    pub latency_us: Option<LatencyOut>,
    /// UDP sink of a scenario with a replay `latency_of` selector: the
    /// selected frames' latency (absent without a selector).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_selected: Option<SelectedOut>,
    /// Bytes written to sockets (TCP applications).
    pub tx_bytes: u64,
    /// Completed request/response transactions (rpc).
    pub transactions: u64,
    /// NetPIPE transmitter: one row per measured point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netpipe: Option<Vec<NetpipeRow>>,
    /// NetPIPE transmitter: the NPtcp-style output lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub netpipe_lines: Option<Vec<String>>,
    /// Open-loop request/response client (`rpc_open`) only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpc_open: Option<RpcOpenOut>,
}

/// Latency of the replayed frames a `latency_of` selector picked, at one sink.
#[derive(Serialize)]
pub struct SelectedOut {
    /// The selectors in words ("port 5000"; several generators' joined by "; ").
    pub selector: String,
    /// Selected frames this sink read [count]; 0 when none matched.
    pub packets: u64,
    /// Their latency, as `latency_us` (null when `packets` is 0).
    pub latency_us: Option<LatencyOut>,
}

/// The open-loop load's rates and counts.
#[derive(Serialize)]
pub struct RpcOpenOut {
    /// Target rate [requests/s].
    pub offered_rps: f64,
    /// Completed requests / (end - start) [requests/s].
    pub achieved_rps: f64,
    /// Arrivals accepted into a connection's queue [count].
    pub issued: u64,
    /// Responses read [count].
    pub completed: u64,
    /// Arrivals refused: their connection had `max_outstanding` requests [count].
    pub dropped: u64,
    /// Responses later than `timeout_us` after their intended send time [count].
    pub timeouts: u64,
    /// Requests queued or awaiting a reply at the end [count].
    pub outstanding: u64,
}

#[derive(Serialize)]
pub struct NetpipeRow {
    pub index: u32,
    pub bytes: u64,
    pub nrepeat: u64,
    /// Minimum over trials of half the round trip [us].
    pub t_us: f64,
    /// NetPIPE's Mbps (2^20 bit/s).
    pub np_mbps: f64,
    /// The same in 10^6 bit/s.
    pub mbit_per_s: f64,
}

#[derive(Serialize)]
pub struct TcpSideOut {
    pub host: String,
    pub segs_out: u64,
    pub data_segs_out: u64,
    pub acks_out: u64,
    pub delayed_acks: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    /// Congestion window at the end [segments].
    pub cwnd: u32,
    /// Send buffer at the end [bytes].
    pub sndbuf: u32,
    /// Segments TCP Small Queues held for a TX completion (absent when
    /// TSQ is off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tsq_throttles: Option<u64>,
    /// Receive buffer at the end [bytes] (absent without autotuning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcvbuf: Option<u32>,
}

#[derive(Serialize)]
pub struct ConnOut {
    pub conn: u16,
    pub app: String,
    pub sides: [TcpSideOut; 2],
}

#[derive(Serialize)]
pub struct GenOut {
    pub generator: String,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    pub offered_bps: f64,
    pub rx_packets: u64,
    /// What a replaying generator read from its capture (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureOut>,
}

/// A replayed capture, as read in its first pass (after `start_us` and
/// `only_to`): frames, span, sizes and share of TCP.
#[derive(Serialize)]
pub struct CaptureOut {
    pub file: String,
    /// Frames kept from the file [count].
    pub frames: u64,
    /// Bytes of the kept frames, padded, with FCS [bytes].
    pub bytes: u64,
    /// First to last kept frame, capture time [ns].
    pub duration_ns: u64,
    /// Kept frames by size with padding and FCS (RFC 2819 buckets) [count].
    pub size_histogram: BTreeMap<&'static str, u64>,
    /// Share of kept frames that are TCP [0..1].
    pub tcp_share: f64,
    /// Kept frames longer than the MTU (dropped as `frame_over_mtu`) [count].
    pub over_mtu: u64,
    /// TCP records longer than the MTU cut into wire segments (offload
    /// aggregates of a capture taken on a host) [count], and the segments
    /// they gave, counted in `frames` [count].
    pub cut_records: u64,
    pub cut_segments: u64,
    /// Records stamped before the record ahead of them, replayed at its
    /// time [count], and the largest step back [ns].
    pub reordered: u64,
    pub max_step_back_ns: u64,
    /// Records skipped by `start_us` or `only_to` [count].
    pub skipped: u64,
    /// The run read the whole file (false: the run ended first).
    pub complete: bool,
    /// Bytes of the file the run read, and the file's size [bytes].
    pub read_bytes: u64,
    pub file_bytes: u64,
    /// Frames that left later than their capture time because the line was
    /// still busy [count] (every pass), and the latest by how much [ns].
    pub late_frames: u64,
    pub max_late_ns: u64,
    /// Kept frames matching `latency_of` [count] (absent without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected_frames: Option<u64>,
}

/// Share of TCP frames above which a warning says replay is open loop.
pub const TCP_WARN_SHARE: f64 = 0.5;

#[derive(Serialize)]
pub struct Series<'a> {
    pub interval_ns: u64,
    pub t_ns: &'a [u64],
    pub series: BTreeMap<&'a str, &'a [f64]>,
}

/// Serde: leave a zero counter out of the report.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn latency(h: &LatencyHist) -> Option<LatencyOut> {
    if h.count() == 0 {
        return None;
    }
    let us = |ns: u64| ns as f64 / 1000.0;
    Some(LatencyOut {
        count: h.count(),
        min: us(h.min_ns()),
        mean: h.mean_ns() / 1000.0,
        p50: us(h.quantile_ns(0.5)),
        p90: us(h.quantile_ns(0.9)),
        p99: us(h.quantile_ns(0.99)),
        p999: us(h.quantile_ns(0.999)),
        max: us(h.max_ns()),
    })
}

/// Build the summary; fails if the packet ledger does not balance.
pub fn summary(w: &World) -> Result<Summary, Error> {
    let secs = w.end().as_ns() as f64 / 1e9;
    let in_flight = w.in_flight();
    let l = w.ledger();
    let ledger = LedgerOut {
        injected: l.injected,
        delivered: l.delivered,
        dropped: l.dropped_total(),
        in_flight,
        balanced: l.balances(in_flight),
    };
    if !ledger.balanced {
        return Err(Error::Run {
            message: format!(
                "packet ledger does not balance: injected {} != delivered {} + dropped {} + in flight {} (a model bug; please report it with the scenario)",
                l.injected,
                l.delivered,
                l.dropped_total(),
                in_flight
            ),
        });
    }
    if let Some((gi, e)) = w
        .generators()
        .iter()
        .enumerate()
        .find_map(|(gi, g)| g.replay.as_ref()?.error.as_ref().map(|e| (gi, e)))
    {
        return Err(Error::Run {
            message: format!("generators[{gi}] ({}): {e}", w.generator_name(gi)),
        });
    }
    // `frame_over_mtu` only exists for replayed captures: it is reported
    // when the scenario replays one (or, never otherwise, when non-zero).
    let replays = w.generators().iter().any(|g| g.replay.is_some());
    let drops = DropReason::ALL
        .iter()
        .filter(|r| replays || **r != DropReason::FrameOverMtu || l.dropped[r.index()] > 0)
        .map(|r| (r.as_str(), l.dropped[r.index()]))
        .collect();
    let ports = w
        .ports()
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let vectors: Vec<VectorOut> = (0..p.num_vectors() as u16)
                .map(|v| VectorOut {
                    vector: v,
                    interrupts: p.interrupts(v),
                    interrupts_per_s: p.interrupts(v) as f64 / secs,
                    interrupts_txdw: p.interrupts_by_cause(v).0,
                    interrupts_rx: p.interrupts_by_cause(v).1,
                    throttle_interval_ns: p.throttle(v).0.as_ns(),
                    min_spacing_ns: p.min_spacing(v).map(|n| n.as_ns()),
                    throttle_register: p.throttle(v).1,
                    freebsd_interrupt_rate: w.moderator(pi, v as usize).interrupt_rate_readback(),
                    napi: w.napi_stats(pi, v as usize),
                })
                .collect();
            PortOut {
                port: w.port_name(pi).to_string(),
                chip: p.chip.name,
                moderation: w.moderator(pi, 0).name().to_string(),
                rx_packets: p.stats.rx_packets,
                rx_bytes: p.stats.rx_bytes,
                tx_packets: p.stats.tx_packets,
                tx_bytes: p.stats.tx_bytes,
                rx_missed: p.stats.rx_missed,
                interrupts: vectors.iter().map(|v| v.interrupts).sum(),
                vectors,
                registers: p.registers(),
                moderation_trace: w
                    .trace(pi)
                    .iter()
                    .map(|r| TraceOut {
                        t_ns: r.t_ns,
                        values: r.values.iter().copied().collect(),
                    })
                    .collect(),
                rx_ring_max_occupancy: (0..p.num_queues() as u16)
                    .map(|q| p.rx_max_filled(q))
                    .max()
                    .unwrap_or(0),
                bql: w.bql(pi).map(|d| d.stats()),
            }
        })
        .collect();
    let hosts = w
        .hosts()
        .iter()
        .enumerate()
        .map(|(hi, h)| {
            let b = h.busy_ns();
            let cap = w.end().as_ns() * h.num_cores() as u64;
            let busy: u64 = b.iter().sum();
            let f = |x: u64| x as f64 / cap as f64;
            HostOut {
                host: h.name().to_string(),
                profile: h.profile().name,
                driver: h.driver().as_str(),
                cores: h.num_cores(),
                cpu_ns: CpuNs {
                    hardirq: b[0],
                    softirq: b[1],
                    app: b[2],
                    idle: cap.saturating_sub(busy),
                },
                cpu_util: CpuUtil {
                    hardirq: f(b[0]),
                    softirq: f(b[1]),
                    app: f(b[2]),
                    busy: f(busy),
                },
                busiest_core_ns: h.busiest_core_ns(),
                irq_deliveries: h.irq_deliveries(),
                time_squeeze: h.time_squeeze(),
                ksoftirqd_handoffs: h.ksoftirqd_handoffs(),
                locks: if h.models_locks() {
                    // Each port's driver lock, then the host's I/O APIC
                    // spin lock where the OS masks the driver's lines.
                    let icu = h.masks_in_apic().then(|| w.icu_lock(hi));
                    h.port_indices()
                        .iter()
                        .map(|&p| w.port_lock(p as usize))
                        .chain(icu)
                        .map(|m| {
                            let mut by_core = m.spin_ns_by_core().to_vec();
                            by_core.resize(h.num_cores(), 0);
                            LockOut {
                                lock: m.name().to_string(),
                                stats: m.stats(),
                                spin_ns_by_core: by_core,
                            }
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                netisr: h.netisr(),
                cpu_hogs: h.hog_cpu(w.end()).map(|(processes, ns)| HogOut {
                    processes,
                    cpu_ns: ns,
                    cores_used: ns as f64 / w.end().as_ns().max(1) as f64,
                }),
            }
        })
        .collect();
    let selector = selectors(w);
    let apps = w
        .apps()
        .iter()
        .map(|a| {
            let host = w.hosts()[a.host as usize].name().to_string();
            let base = AppOut {
                app: a.name.clone(),
                kind: "",
                host,
                sent: 0,
                received: 0,
                rx_bytes: 0,
                throughput_bps: 0.0,
                latency_us: None,
                latency_selected: None,
                tx_bytes: 0,
                transactions: 0,
                netpipe: None,
                netpipe_lines: None,
                rpc_open: None,
            };
            match &a.kind {
                AppKind::UdpSink(s) => AppOut {
                    kind: "udp_sink",
                    received: s.received,
                    rx_bytes: s.rx_bytes,
                    throughput_bps: s.rx_bytes as f64 * 8.0 / secs,
                    latency_us: latency(&s.latency),
                    latency_selected: selector.as_ref().map(|sel| SelectedOut {
                        selector: sel.clone(),
                        packets: s.latency_selected.count(),
                        latency_us: latency(&s.latency_selected),
                    }),
                    ..base
                },
                AppKind::Ping(p) => AppOut {
                    kind: "ping",
                    sent: p.sent,
                    received: p.received,
                    rx_bytes: p.received * p.frame_bytes() as u64,
                    throughput_bps: p.received as f64 * p.frame_bytes() as f64 * 8.0 / secs,
                    latency_us: latency(&p.rtt),
                    ..base
                },
                AppKind::UdpSend(u) => AppOut {
                    kind: "udp_send",
                    sent: u.sent,
                    ..base
                },
                AppKind::NetpipeClient(c) => AppOut {
                    kind: "netpipe",
                    netpipe: Some(
                        c.results()
                            .iter()
                            .map(|r| NetpipeRow {
                                index: r.index,
                                bytes: r.bytes,
                                nrepeat: r.nrepeat,
                                t_us: r.t.as_ns() as f64 / 1000.0,
                                np_mbps: r.mbps,
                                mbit_per_s: r.mbps * 1_048_576.0 / 1e6,
                            })
                            .collect(),
                    ),
                    netpipe_lines: Some(c.lines.clone()),
                    ..base
                },
                AppKind::NetpipeServer { .. } => AppOut {
                    kind: "netpipe_receiver",
                    ..base
                },
                AppKind::IperfClient(c) => AppOut {
                    kind: "iperf",
                    tx_bytes: c.written,
                    ..base
                },
                AppKind::RpcClient(c) => AppOut {
                    kind: "rpc",
                    sent: c.transactions,
                    received: c.transactions,
                    transactions: c.transactions,
                    rx_bytes: c.transactions * c.response_bytes,
                    throughput_bps: (c.transactions * (c.request_bytes + c.response_bytes)) as f64
                        * 8.0
                        / secs,
                    latency_us: latency(&c.latency),
                    ..base
                },
                AppKind::RpcServer(_) => AppOut {
                    kind: "rpc_server",
                    ..base
                },
                AppKind::RpcOpenClient(c) => {
                    let dt =
                        (w.end().as_ns().saturating_sub(c.started.as_ns())).max(1) as f64 / 1e9;
                    AppOut {
                        kind: "rpc_open",
                        sent: c.issued,
                        received: c.completed,
                        transactions: c.completed,
                        rx_bytes: c.rx_bytes,
                        tx_bytes: c.tx_bytes,
                        throughput_bps: c.done_bytes as f64 * 8.0 / dt,
                        latency_us: latency(&c.latency),
                        rpc_open: Some(RpcOpenOut {
                            offered_rps: c.offered_rps,
                            achieved_rps: c.completed as f64 / dt,
                            issued: c.issued,
                            completed: c.completed,
                            dropped: c.dropped,
                            timeouts: c.timeouts,
                            outstanding: c.outstanding(),
                        }),
                        ..base
                    }
                }
                AppKind::RpcOpenServer(srv) => AppOut {
                    kind: "rpc_open_server",
                    transactions: srv.served,
                    ..base
                },
                AppKind::IperfServer { srv, started } => {
                    let dt = (w.end() - *started).as_ns().max(1) as f64 / 1e9;
                    AppOut {
                        kind: "iperf_receiver",
                        rx_bytes: srv.read_bytes,
                        throughput_bps: srv.read_bytes as f64 * 8.0 / dt,
                        ..base
                    }
                }
            }
        })
        .collect();
    let tcp = w
        .conns()
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let side = |i: usize| {
                let st = c.ep[i].stats;
                TcpSideOut {
                    host: w.hosts()[c.host[i] as usize].name().to_string(),
                    segs_out: st.segs_out,
                    data_segs_out: st.data_segs_out,
                    acks_out: st.acks_out,
                    delayed_acks: st.delayed_acks,
                    retransmits: st.retransmits,
                    fast_retransmits: st.fast_retransmits,
                    timeouts: st.timeouts,
                    bytes_acked: st.bytes_acked,
                    bytes_received: st.bytes_received,
                    cwnd: c.ep[i].cwnd,
                    sndbuf: c.ep[i].sndbuf(),
                    tsq_throttles: (c.ep[i].cfg.tsq_limit > 0).then_some(st.tsq_throttles),
                    rcvbuf: c.ep[i].cfg.moderate_rcvbuf.then(|| c.ep[i].rcvbuf()),
                }
            };
            ConnOut {
                conn: ci as u16,
                app: w.apps()[c.app[0] as usize].name.clone(),
                sides: [side(0), side(1)],
            }
        })
        .collect();
    let generators = w
        .generators()
        .iter()
        .enumerate()
        .map(|(gi, g)| GenOut {
            generator: w.generator_name(gi).to_string(),
            sent_packets: g.sent_packets,
            sent_bytes: g.sent_bytes,
            offered_bps: g.replay.as_ref().map_or(g.offered_bps, |r| r.offered_bps()),
            rx_packets: g.rx_packets,
            capture: g.replay.as_ref().map(|r| capture_out(w, gi, r)),
        })
        .collect();
    Ok(Summary {
        sim_time_ns: w.end().as_ns(),
        aborted: w.aborted().map(|(t, r)| AbortOut {
            at_ns: t.as_ns(),
            reason: r.to_string(),
        }),
        warnings: warnings(w),
        events_processed: w.events_processed(),
        ledger,
        drops,
        ports,
        hosts,
        apps,
        generators,
        tcp,
    })
}

/// Serialise the whole report.
pub fn to_json(w: &World) -> Result<String, Error> {
    let summary = summary(w)?;
    let histograms = w
        .apps()
        .iter()
        .filter_map(|a| {
            let h = match &a.kind {
                AppKind::UdpSink(s) => &s.latency,
                AppKind::Ping(p) => &p.rtt,
                AppKind::RpcClient(c) => &c.latency,
                AppKind::RpcOpenClient(c) => &c.latency,
                _ => return None,
            };
            Some((a.name.clone(), h.buckets()))
        })
        .collect();
    let r = Report {
        holdoff_version: crate::VERSION,
        scenario: &w.scenario().name,
        seed: w.scenario().seed,
        config: w.scenario(),
        summary,
        changes: w
            .changes()
            .iter()
            .map(|c| ChangeOut {
                t_ns: c.t_ns,
                path: &c.path,
                value: &c.value,
            })
            .collect(),
        timeseries: Series {
            interval_ns: w.scenario().sample_interval_us * 1000,
            t_ns: &w.series().t_ns,
            series: w
                .series()
                .names
                .iter()
                .map(|s| s.as_str())
                .zip(w.series().values.iter().map(|v| v.as_slice()))
                .collect(),
        },
        histograms,
    };
    serde_json::to_string(&r).map_err(|e| Error::Run {
        message: format!("could not serialise the report: {e}"),
    })
}
