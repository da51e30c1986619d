//! Scenario files: the TOML schema, its defaults and its validation.
//!
//! A scenario names hosts (cost profile, cores, driver, NICs), traffic
//! generator ports, the links between ports, the applications, the duration
//! and the seed. It is validated once, here; errors name the field path, the
//! bad value and what is allowed. `holdoff schema` prints the JSON Schema
//! derived from these types.
//!
//! Units are in the field names: `_ms`, `_us`, `_ns`, `_bytes`, `_pps`,
//! `_per_s`, `_256ns` (ITR), `_1024ns` (RDTR/RADV/TIDV/TADV), `_us` (EITR).

use crate::error::Error;
use crate::host::driver::{BsdConfig, DriverKind, NapiConfig};
use crate::host::profile;
use crate::nic::chip;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A complete experiment.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short identifier used in outputs.
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Master seed; every random stream derives from it.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time [ms].
    pub duration_ms: u64,
    /// Time-series sampling interval [us].
    #[serde(default = "default_sample_interval_us")]
    pub sample_interval_us: u64,
    pub hosts: Vec<HostCfg>,
    #[serde(default)]
    pub generators: Vec<GeneratorCfg>,
    pub links: Vec<LinkCfg>,
    #[serde(default)]
    pub apps: Vec<AppCfg>,
}

fn default_seed() -> u64 {
    1
}
fn default_sample_interval_us() -> u64 {
    10_000
}

/// A modelled machine.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostCfg {
    pub name: String,
    /// Cost profile preset: ideal, p4-xeon-2004, opteron-2006, apu2, xeon-modern.
    pub profile: String,
    /// Core clock the host runs at [MHz] (a P-state, e.g. OpenBSD
    /// hw.setperf=0); CPU-bound costs of the profile scale with it. Default:
    /// the profile's nominal clock.
    #[serde(default)]
    pub cpu_mhz: Option<u32>,
    /// CPU cores [count].
    #[serde(default = "one")]
    pub cores: u32,
    #[serde(default)]
    pub driver: DriverKind,
    #[serde(default)]
    pub napi: NapiConfig,
    /// BSD driver parameters (rx_process_limit, polling clock and burst).
    #[serde(default)]
    pub bsd: BsdConfig,
    /// IP forwarding: packets received on `from` are sent out of `to`.
    #[serde(default)]
    pub forward: Vec<ForwardRule>,
    /// TCP sysctls of this host (Linux 2.6.6 defaults).
    #[serde(default)]
    pub tcp: TcpSysctls,
    /// Interface queue (qdisc) length in front of each TX ring [packets] (Linux txqueuelen).
    #[serde(default = "default_txqueuelen")]
    pub txqueuelen: u32,
    pub nics: Vec<NicCfg>,
}

/// One forwarding rule (NIC names of this host).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ForwardRule {
    pub from: String,
    pub to: String,
}

fn one() -> u32 {
    1
}
fn default_txqueuelen() -> u32 {
    1000
}

/// TCP settings of a host. Defaults: Linux 2.6.6 (seed-scenarios.md card 1).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpSysctls {
    /// Socket receive buffer, tcp_rmem[1] [bytes] (fixed: no receive autotuning in 2.6.6).
    #[serde(default = "d_rmem")]
    pub rmem_default: u32,
    /// Initial send buffer, tcp_wmem[1] [bytes].
    #[serde(default = "d_wmem")]
    pub wmem_default: u32,
    /// Largest send buffer, tcp_wmem[2] [bytes].
    #[serde(default = "d_wmem_max")]
    pub wmem_max: u32,
    /// tcp_adv_win_scale.
    #[serde(default = "two")]
    pub adv_win_scale: u32,
    /// Delayed-ACK timeout [us] (TCP_DELACK_MIN = 40 ms).
    #[serde(default = "d_delack")]
    pub delack_us: u64,
    /// Minimum retransmission timeout [ms] (TCP_RTO_MIN = 200 ms).
    #[serde(default = "d_rto_min")]
    pub rto_min_ms: u64,
    /// Maximum segment size [bytes] (1500 MTU with timestamps: 1448).
    #[serde(default = "d_mss")]
    pub mss_bytes: u32,
    /// Receive memory charged per received segment, the Linux skb truesize
    /// [bytes]. Default 2336: Linux 2.6.6 with e1000 2048-byte receive
    /// buffers on a P4 kernel; it switches on the Linux 2.6 receive-window
    /// rules (rcv_ssthresh growth, window clamp, initial window of 4 MSS).
    /// 0: payload accounting and the whole window from the start (stacks
    /// without those rules, e.g. FreeBSD and OpenBSD with autotuned buffers).
    #[serde(default = "d_truesize")]
    pub skb_truesize_bytes: u32,
}

fn d_rmem() -> u32 {
    87_380
}
fn d_wmem() -> u32 {
    16_384
}
fn d_wmem_max() -> u32 {
    131_072
}
fn d_delack() -> u64 {
    40_000
}
fn d_rto_min() -> u64 {
    200
}
fn d_mss() -> u32 {
    1448
}
fn d_truesize() -> u32 {
    crate::stack::tcp::LINUX26_E1000_SKB_TRUESIZE
}

impl Default for TcpSysctls {
    fn default() -> Self {
        TcpSysctls {
            rmem_default: d_rmem(),
            wmem_default: d_wmem(),
            wmem_max: d_wmem_max(),
            adv_win_scale: 2,
            delack_us: d_delack(),
            rto_min_ms: d_rto_min(),
            mss_bytes: d_mss(),
            skb_truesize_bytes: d_truesize(),
        }
    }
}

/// Interrupt delivery mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IntModeCfg {
    Intx,
    Msi,
    Msix,
}

/// One NIC port on a host.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NicCfg {
    pub name: String,
    /// Chip preset: 82540, 82546, 82574, 82576, i350, i210, i211.
    pub chip: String,
    /// Interrupt mode; default: msix for chips with MSI-X, intx otherwise.
    #[serde(default)]
    pub interrupt_mode: Option<IntModeCfg>,
    /// RX descriptors [count].
    #[serde(default = "default_ring")]
    pub rx_ring: u32,
    /// TX descriptors [count].
    #[serde(default = "default_ring")]
    pub tx_ring: u32,
    /// RX/TX queue pairs [count]; > 1 requires MSI-X.
    #[serde(default = "one")]
    pub queues: u32,
    /// Whether the driver sets IDE on TX descriptors (TIDV/TADV apply only then).
    #[serde(default = "yes")]
    pub set_ide: bool,
    /// RXDMT0 threshold as a fraction of the ring: 2 (1/2), 4 (1/4) or 8 (1/8).
    #[serde(default = "two")]
    pub rdmts_divisor: u32,
    /// INTx only: ports with the same line number on a host share one line.
    #[serde(default)]
    pub irq_line: Option<u32>,
    /// Core that takes this port's interrupts (MSI-X: the first vector's; others follow round robin).
    #[serde(default)]
    pub irq_core: u32,
    #[serde(default)]
    pub moderation: ModerationCfg,
}

fn default_ring() -> u32 {
    256
}
fn yes() -> bool {
    true
}
fn two() -> u32 {
    2
}

/// Moderation policy of a port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
#[allow(non_camel_case_types)]
pub enum ModerationCfg {
    /// Registers written once at interface up. Give at most one of
    /// `itr_per_s`, `itr_256ns`, `eitr_us`; none means no throttling.
    Static {
        /// Target maximum interrupt rate [int/s], converted as the driver does.
        #[serde(default)]
        itr_per_s: Option<u32>,
        /// Raw ITR / 82574-82575 EITR interval [256 ns units].
        #[serde(default)]
        itr_256ns: Option<u32>,
        /// 82576+ EITR interval [us].
        #[serde(default)]
        eitr_us: Option<u32>,
        /// RX packet timer [1.024 us]; 0 = interrupt per packet.
        #[serde(default)]
        rdtr_1024ns: u32,
        /// RX absolute timer [1.024 us]; 0 = off.
        #[serde(default)]
        radv_1024ns: u32,
        /// TX packet timer [1.024 us] (descriptors with IDE); 0 = immediate.
        #[serde(default)]
        tidv_1024ns: u32,
        /// TX absolute timer [1.024 us]; 0 = off.
        #[serde(default)]
        tadv_1024ns: u32,
    },
    /// Linux e1000 5.x (2004): `InterruptThrottleRate` 1 = dynamic (the 2-s
    /// watchdog goc/dif formula, the default when unset), 0 = off, 100..100000
    /// = static; out-of-range values fall back to 8000 as the driver does.
    /// Timer parameters keep the driver's names and 5.x defaults [1.024 us].
    /// An algorithm written in Python: `class = "package.module:Class"`,
    /// constructed once per interrupt vector with `params` as keyword
    /// arguments (see docs/models/python-moderators.md). Only runs started
    /// from Python can use it.
    Python {
        class: String,
        #[serde(default)]
        params: std::collections::BTreeMap<String, serde_json::Value>,
    },
    /// Linux e1000 >= 7.3 / e1000e `InterruptThrottleRate`: 0 off, 1 dynamic,
    /// 3 dynamic conservative (default), 4 simplified (2-s goc/dif),
    /// 100..100000 static. Timers default to the 7.x values (RDTR 0, RADV 8,
    /// TIDV 8, TADV 32) [1.024 us].
    #[serde(rename = "e1000-itr")]
    E1000Itr {
        #[serde(default)]
        interrupt_throttle_rate: Option<u32>,
        /// "e1000" (7.3, 8254x) or "e1000e" (8257x); they differ in option validation.
        #[serde(default = "d_e1000_driver")]
        driver: String,
        #[serde(default)]
        rx_int_delay: u32,
        #[serde(default = "d_8")]
        rx_abs_int_delay: u32,
        #[serde(default = "d_8")]
        tx_int_delay: u32,
        #[serde(default = "d_32")]
        tx_abs_int_delay: u32,
    },
    /// Linux igb: ethtool rx-usecs 0 (off), 1 (dynamic), 3 (dynamic
    /// conservative, default) or a fixed interval [us]; the latency-class path
    /// (single vector) or `igb_update_ring_itr` (multi-vector), written at the
    /// next interrupt.
    Igb {
        #[serde(default)]
        rx_usecs: Option<u32>,
        /// Use `igb_update_ring_itr`; default: when the port has several vectors.
        #[serde(default)]
        multi_vector: Option<bool>,
    },
    /// FreeBSD ixl dynamic ITR (ITR in 2 us units) driving the chip's EITR.
    Ixl {
        #[serde(default = "yes")]
        dynamic: bool,
        /// Which ring's algorithm drives the vector: "rx", "tx" or "both".
        #[serde(default = "d_both")]
        rings: String,
        /// Initial RX / TX ITR [2 us units] (driver tunables).
        #[serde(default)]
        rx_itr: Option<u32>,
        #[serde(default)]
        tx_itr: Option<u32>,
    },
    /// FreeBSD em/igb adaptive interrupt moderation (2024): `enable_aim` 0
    /// (static `max_interrupt_rate`), 1 or 2 (per-interrupt 4K/20K/70K
    /// classes; 2 allows the lowest-latency class). Writes ITR on e1000-family
    /// chips, EITR on igb-class chips.
    #[serde(rename = "freebsd-aim")]
    FreebsdAim {
        #[serde(default = "one")]
        enable_aim: u32,
        /// `hw.em.max_interrupt_rate` [int/s].
        #[serde(default = "d_8000")]
        max_interrupt_rate: u32,
    },
    /// Linux generic DIM (net_dim), called at every NAPI poll; the profile's
    /// `usec` drives the vector's EITR.
    Dim {
        /// "rx-eqe" (default), "rx-cqe", "tx-eqe" or "tx-cqe".
        #[serde(default = "d_dim_profile")]
        profile: String,
        /// Starting profile index 0..4 (kernel default 1).
        #[serde(default = "one")]
        start_index: u32,
    },
    #[serde(rename = "e1000-5x")]
    E1000_5x {
        #[serde(default)]
        interrupt_throttle_rate: Option<u32>,
        #[serde(default)]
        rx_int_delay: u32,
        #[serde(default = "d_radv_5x")]
        rx_abs_int_delay: u32,
        #[serde(default = "d_tx_5x")]
        tx_int_delay: u32,
        #[serde(default = "d_tx_5x")]
        tx_abs_int_delay: u32,
    },
}

fn d_8000() -> u32 {
    8000
}
fn d_dim_profile() -> String {
    "rx-eqe".into()
}
fn d_e1000_driver() -> String {
    "e1000".into()
}
fn d_8() -> u32 {
    8
}
fn d_32() -> u32 {
    32
}
fn d_both() -> String {
    "both".into()
}
fn d_radv_5x() -> u32 {
    128
}
fn d_tx_5x() -> u32 {
    64
}

impl Default for ModerationCfg {
    fn default() -> Self {
        ModerationCfg::Static {
            itr_per_s: None,
            itr_256ns: None,
            eitr_us: None,
            rdtr_1024ns: 0,
            radv_1024ns: 0,
            tidv_1024ns: 0,
            tadv_1024ns: 0,
        }
    }
}

/// Inter-arrival pattern of a generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    /// Evenly spaced frames.
    #[default]
    Constant,
    /// Exponential inter-arrival times.
    Poisson,
    /// Constant rate during `on_us`, silent during `off_us`, repeated.
    OnOff,
}

/// A weighted frame size.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SizeWeight {
    /// Frame size, destination address to FCS [bytes].
    pub bytes: u32,
    pub weight: u32,
}

/// A traffic generator port (a tester, not a modelled host). It sends UDP
/// frames to the host at the other end of its link and counts what it receives.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeneratorCfg {
    pub name: String,
    #[serde(default)]
    pub pattern: Pattern,
    /// Offered rate [frames/s] (during "on" periods for on-off). Give this or `load`.
    #[serde(default)]
    pub rate_pps: Option<f64>,
    /// Offered load as a fraction of the link's line rate for the mean frame size (0 < load <= 1).
    #[serde(default)]
    pub load: Option<f64>,
    /// Fixed frame size [bytes], 64..=9018. Default 64.
    #[serde(default)]
    pub frame_bytes: Option<u32>,
    /// Frame-size distribution (instead of `frame_bytes`).
    #[serde(default)]
    pub frame_sizes: Option<Vec<SizeWeight>>,
    /// On-off pattern: on period [us].
    #[serde(default)]
    pub on_us: Option<u64>,
    /// On-off pattern: off period [us].
    #[serde(default)]
    pub off_us: Option<u64>,
    /// First frame at [us].
    #[serde(default)]
    pub start_us: u64,
    /// No frames after [us]; default: the end of the run.
    #[serde(default)]
    pub stop_us: Option<u64>,
    /// Number of flows (frames are spread round robin; RSS maps flows to queues).
    #[serde(default = "one_u16")]
    pub flows: u16,
}

fn one_u16() -> u16 {
    1
}

/// A full-duplex link between two ports: "host.nic" or a generator name.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub a: String,
    pub b: String,
    /// Line rate: 10M, 100M, 1G, 2.5G, 10G, 25G, 40G, 100G, or a number of bit/s.
    #[serde(default = "default_rate")]
    pub rate: String,
    /// One-way propagation delay [ns].
    #[serde(default)]
    pub propagation_ns: u64,
}

fn default_rate() -> String {
    "1G".into()
}

/// An application on a host.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppCfg {
    /// Receives every UDP frame that reaches its host and reads it from the socket.
    UdpSink {
        name: String,
        host: String,
        /// Socket receive buffer [bytes] (Linux default rmem_default 212992).
        #[serde(default = "default_rcvbuf")]
        rcvbuf_bytes: u32,
        /// Core the application runs on.
        #[serde(default)]
        core: u32,
    },
    /// ICMP echo requests to another modelled host; records each round trip.
    Ping {
        name: String,
        host: String,
        /// Target host name (must be linked to `host`).
        to: String,
        /// Time between requests [us] (ping -i; default 1 s).
        #[serde(default = "default_ping_interval")]
        interval_us: u64,
        /// ICMP payload [bytes] (ping -s; default 56).
        #[serde(default = "default_ping_size")]
        size_bytes: u32,
        /// Requests to send; default: until the end of the run.
        #[serde(default)]
        count: Option<u64>,
        /// First request at [us].
        #[serde(default)]
        start_us: u64,
        #[serde(default)]
        core: u32,
    },
    /// NetPIPE 3.x NPtcp between `host` (transmitter) and `to` (receiver) over
    /// one TCP connection; the run ends when NetPIPE finishes.
    Netpipe {
        name: String,
        host: String,
        to: String,
        /// First message size [bytes] (NPtcp -l; default 1).
        #[serde(default = "d_np_start")]
        start_bytes: u64,
        /// Last message size [bytes] (NPtcp -u; default 8388608).
        #[serde(default = "d_np_end")]
        end_bytes: u64,
        /// Perturbation [bytes] (NPtcp -p; default 3).
        #[serde(default = "d_np_pert")]
        perturbation_bytes: u64,
        /// TCP_NODELAY on both sockets (NPtcp sets it).
        #[serde(default = "yes")]
        nodelay: bool,
        /// NPtcp starts at [us].
        #[serde(default)]
        start_us: u64,
        #[serde(default)]
        core: u32,
    },
    /// Request/response over one TCP connection (netperf TCP_RR-like):
    /// `host` sends a request, `to` answers, one transaction outstanding.
    Rpc {
        name: String,
        host: String,
        to: String,
        /// Request size [bytes].
        #[serde(default = "d_rpc")]
        request_bytes: u64,
        /// Response size [bytes].
        #[serde(default = "d_rpc")]
        response_bytes: u64,
        /// Pause between a response and the next request [us] (0 = back to back).
        #[serde(default)]
        think_us: u64,
        #[serde(default)]
        start_us: u64,
        /// TCP_NODELAY (default on, as request/response benchmarks set it).
        #[serde(default = "yes")]
        nodelay: bool,
        #[serde(default)]
        core: u32,
        /// Server CPU time per request between reading it and writing the
        /// response [us] (application class on the server's core; 0 = none).
        #[serde(default)]
        server_think_us: u64,
        /// Server epoll busy polling (EPIOCSPARAMS `busy_poll_usecs`) [us]:
        /// instead of sleeping for the next request the server spins on its
        /// core polling its NAPI instance for up to this long (0 = off).
        #[serde(default)]
        server_busy_poll_usecs: u64,
        /// Packets per busy poll (EPIOCSPARAMS `busy_poll_budget`; Linux
        /// `BUSY_POLL_BUDGET` = 8 when unset) [packets].
        #[serde(default = "d_busy_budget")]
        server_busy_poll_budget: u32,
        /// EPIOCSPARAMS `prefer_busy_poll`: the busy-polled NAPI instance
        /// keeps its IRQ masked (needed for `irq_suspend_timeout_ns`).
        #[serde(default)]
        server_prefer_busy_poll: bool,
    },
    /// iperf-like bulk TCP transfer from `host` to `to`.
    Iperf {
        name: String,
        host: String,
        to: String,
        /// Parallel connections (iperf -P).
        #[serde(default = "one")]
        streams: u32,
        /// Bytes per write call (iperf -l; default 128 KiB).
        #[serde(default = "d_iperf_len")]
        write_bytes: u64,
        /// First write at [us].
        #[serde(default)]
        start_us: u64,
        #[serde(default)]
        nodelay: bool,
        #[serde(default)]
        core: u32,
    },
}

fn d_np_start() -> u64 {
    1
}
fn d_np_end() -> u64 {
    8_388_608
}
fn d_np_pert() -> u64 {
    3
}
fn d_rpc() -> u64 {
    64
}
fn d_busy_budget() -> u32 {
    crate::host::driver::BUSY_POLL_BUDGET
}
fn d_iperf_len() -> u64 {
    131_072
}

fn default_rcvbuf() -> u32 {
    212_992
}
fn default_ping_interval() -> u64 {
    1_000_000
}
fn default_ping_size() -> u32 {
    56
}

impl AppCfg {
    pub fn name(&self) -> &str {
        match self {
            AppCfg::UdpSink { name, .. }
            | AppCfg::Ping { name, .. }
            | AppCfg::Netpipe { name, .. }
            | AppCfg::Iperf { name, .. }
            | AppCfg::Rpc { name, .. } => name,
        }
    }
    pub fn host(&self) -> &str {
        match self {
            AppCfg::UdpSink { host, .. }
            | AppCfg::Ping { host, .. }
            | AppCfg::Netpipe { host, .. }
            | AppCfg::Iperf { host, .. }
            | AppCfg::Rpc { host, .. } => host,
        }
    }
    pub fn core(&self) -> u32 {
        match self {
            AppCfg::UdpSink { core, .. }
            | AppCfg::Ping { core, .. }
            | AppCfg::Netpipe { core, .. }
            | AppCfg::Iperf { core, .. }
            | AppCfg::Rpc { core, .. } => *core,
        }
    }
    /// The peer host of a two-host application.
    pub fn peer(&self) -> Option<&str> {
        match self {
            AppCfg::Ping { to, .. }
            | AppCfg::Netpipe { to, .. }
            | AppCfg::Iperf { to, .. }
            | AppCfg::Rpc { to, .. } => Some(to),
            AppCfg::UdpSink { .. } => None,
        }
    }
    pub fn kind(&self) -> &'static str {
        match self {
            AppCfg::UdpSink { .. } => "udp_sink",
            AppCfg::Ping { .. } => "ping",
            AppCfg::Netpipe { .. } => "netpipe",
            AppCfg::Iperf { .. } => "iperf",
            AppCfg::Rpc { .. } => "rpc",
        }
    }
}

/// Parse a link rate: "10M", "1G", "2.5G", "100G" or plain bit/s.
pub fn parse_rate(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'G' | 'g' => (&s[..s.len() - 1], 1_000_000_000u64),
        'M' | 'm' => (&s[..s.len() - 1], 1_000_000),
        'K' | 'k' => (&s[..s.len() - 1], 1_000),
        _ => (s, 1),
    };
    // Allow one decimal point ("2.5G") with exact integer arithmetic.
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mut v: u64 = int.parse().ok()?;
    v = v.checked_mul(mult)?;
    let mut scale = mult;
    for d in frac.bytes() {
        scale /= 10;
        if scale == 0 {
            return None;
        }
        v = v.checked_add((d - b'0') as u64 * scale)?;
    }
    Some(v)
}

/// The allowed range of link rates [bit/s]: 10 Mbit/s to 100 Gbit/s.
pub const RATE_MIN_BPS: u64 = 10_000_000;
pub const RATE_MAX_BPS: u64 = 100_000_000_000;

fn cfg_err(field: impl Into<String>, message: impl Into<String>) -> Error {
    Error::Config {
        field: field.into(),
        message: message.into(),
    }
}

fn names_list(v: &[&str]) -> String {
    v.join(", ")
}

impl Scenario {
    /// Parse TOML text and validate it.
    pub fn from_toml(text: &str) -> Result<Scenario, Error> {
        let s: Scenario = toml::from_str(text).map_err(|e| Error::Parse {
            message: e.to_string().trim_end().to_string(),
        })?;
        s.validate()?;
        Ok(s)
    }

    /// Check every cross-reference and range; the first problem is returned.
    pub fn validate(&self) -> Result<(), Error> {
        if self.name.trim().is_empty() {
            return Err(cfg_err("name", "must not be empty"));
        }
        if self.duration_ms == 0 || self.duration_ms > 3_600_000 {
            return Err(cfg_err(
                "duration_ms",
                format!("got {}; allowed: 1 to 3600000 (1 hour)", self.duration_ms),
            ));
        }
        if self.sample_interval_us == 0 {
            return Err(cfg_err("sample_interval_us", "got 0; must be at least 1"));
        }
        if self.hosts.is_empty() {
            return Err(cfg_err("hosts", "at least one host is required"));
        }
        let mut names = BTreeSet::new();
        let profiles: Vec<&str> = profile::presets().iter().map(|p| p.name).collect();
        let chips: Vec<&str> = chip::presets().iter().map(|c| c.name).collect();
        for (hi, h) in self.hosts.iter().enumerate() {
            let f = |x: &str| format!("hosts[{hi}].{x}");
            if !names.insert(h.name.clone()) || h.name.contains('.') || h.name.is_empty() {
                return Err(cfg_err(
                    f("name"),
                    format!(
                        "got {:?}; names must be unique, non-empty and contain no '.'",
                        h.name
                    ),
                ));
            }
            if profile::by_name(&h.profile).is_none() {
                return Err(cfg_err(
                    f("profile"),
                    format!("got {:?}; allowed: {}", h.profile, names_list(&profiles)),
                ));
            }
            if let Some(mhz) = h.cpu_mhz {
                if !(100..=10_000).contains(&mhz) {
                    return Err(cfg_err(
                        f("cpu_mhz"),
                        format!("got {mhz}; allowed: 100 to 10000"),
                    ));
                }
            }
            if h.cores == 0 || h.cores > 256 {
                return Err(cfg_err(
                    f("cores"),
                    format!("got {}; allowed: 1 to 256", h.cores),
                ));
            }
            let n = &h.napi;
            if n.weight == 0 || n.budget == 0 || n.budget_usecs == 0 {
                return Err(cfg_err(
                    f("napi"),
                    "weight, budget and budget_usecs must be at least 1 (Linux: 64, 300, 2000)",
                ));
            }
            if n.irq_suspend_timeout_ns > 10_000_000_000 {
                return Err(cfg_err(
                    f("napi.irq_suspend_timeout_ns"),
                    format!(
                        "got {}; allowed: 0 (off) to 10000000000 (10 s)",
                        n.irq_suspend_timeout_ns
                    ),
                ));
            }
            // Without an application that busy-polls with prefer_busy_poll
            // irq_suspend_timeout is accepted and does nothing, as in Linux (a
            // sweep may turn busy polling on and off under one host setup).
            if n.irq_suspend_timeout_ns > 0 && h.driver != DriverKind::Napi {
                return Err(cfg_err(
                    f("napi.irq_suspend_timeout_ns"),
                    format!(
                        "IRQ suspension is a NAPI feature; driver is {:?}: set driver = \"napi\" or irq_suspend_timeout_ns = 0",
                        h.driver.as_str()
                    ),
                ));
            }
            if h.nics.is_empty() {
                return Err(cfg_err(f("nics"), "a host needs at least one NIC"));
            }
            let t = &h.tcp;
            if !(536..=8960).contains(&t.mss_bytes) {
                return Err(cfg_err(
                    f("tcp.mss_bytes"),
                    format!("got {}; allowed: 536 to 8960", t.mss_bytes),
                ));
            }
            if t.rmem_default < 2 * t.mss_bytes
                || t.wmem_default < t.mss_bytes
                || t.wmem_max < t.wmem_default
            {
                return Err(cfg_err(
                    f("tcp"),
                    "need rmem_default >= 2 x mss_bytes, wmem_default >= mss_bytes and wmem_max >= wmem_default",
                ));
            }
            if t.skb_truesize_bytes != 0
                && !(t.mss_bytes..=t.rmem_default / 2).contains(&t.skb_truesize_bytes)
            {
                return Err(cfg_err(
                    f("tcp.skb_truesize_bytes"),
                    format!(
                        "got {}; allowed: 0 (payload accounting) or mss_bytes ({}) to rmem_default/2 ({})",
                        t.skb_truesize_bytes,
                        t.mss_bytes,
                        t.rmem_default / 2
                    ),
                ));
            }
            if t.adv_win_scale == 0 || t.adv_win_scale > 8 {
                return Err(cfg_err(
                    f("tcp.adv_win_scale"),
                    format!("got {}; allowed: 1 to 8", t.adv_win_scale),
                ));
            }
            for (fi, r) in h.forward.iter().enumerate() {
                for (side, nic) in [("from", &r.from), ("to", &r.to)] {
                    if !h.nics.iter().any(|n| &n.name == nic) {
                        return Err(cfg_err(
                            f(&format!("forward[{fi}].{side}")),
                            format!(
                                "got {nic:?}; allowed: a NIC of this host: {}",
                                h.nics
                                    .iter()
                                    .map(|n| n.name.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                }
                if r.from == r.to {
                    return Err(cfg_err(
                        f(&format!("forward[{fi}]")),
                        "from and to must differ",
                    ));
                }
            }
            if h.bsd.poll_hz == 0
                || h.bsd.poll_burst == 0
                || h.bsd.rx_process_limit == 0
                || h.bsd.rx_process_limit < -1
            {
                return Err(cfg_err(
                    f("bsd"),
                    "poll_hz and poll_burst must be at least 1; rx_process_limit -1 (unlimited) or at least 1",
                ));
            }
            if h.txqueuelen > 100_000 {
                return Err(cfg_err(
                    f("txqueuelen"),
                    format!("got {}; allowed: 0 to 100000", h.txqueuelen),
                ));
            }
            let mut nic_names = BTreeSet::new();
            for (ni, nic) in h.nics.iter().enumerate() {
                let f = |x: &str| format!("hosts[{hi}].nics[{ni}].{x}");
                if !nic_names.insert(nic.name.clone())
                    || nic.name.contains('.')
                    || nic.name.is_empty()
                {
                    return Err(cfg_err(
                        f("name"),
                        format!(
                            "got {:?}; NIC names must be unique on a host, non-empty, without '.'",
                            nic.name
                        ),
                    ));
                }
                let Some(c) = chip::by_name(&nic.chip) else {
                    return Err(cfg_err(
                        f("chip"),
                        format!("got {:?}; allowed: {}", nic.chip, names_list(&chips)),
                    ));
                };
                for (field, v) in [("rx_ring", nic.rx_ring), ("tx_ring", nic.tx_ring)] {
                    if v < 8 || v > c.max_ring || v % 8 != 0 {
                        return Err(cfg_err(
                            f(field),
                            format!(
                                "got {v}; allowed: a multiple of 8 from 8 to {} for chip {}",
                                c.max_ring, c.name
                            ),
                        ));
                    }
                }
                if nic.queues == 0 || nic.queues > c.max_queues {
                    return Err(cfg_err(
                        f("queues"),
                        format!(
                            "got {}; allowed: 1 to {} for chip {}",
                            nic.queues, c.max_queues, c.name
                        ),
                    ));
                }
                let mode = nic.interrupt_mode.unwrap_or(if c.msix {
                    IntModeCfg::Msix
                } else {
                    IntModeCfg::Intx
                });
                if mode == IntModeCfg::Msix && !c.msix {
                    return Err(cfg_err(
                        f("interrupt_mode"),
                        format!(
                            "got \"msix\"; chip {} has no MSI-X: allowed: intx, msi",
                            c.name
                        ),
                    ));
                }
                if nic.queues > 1 && mode != IntModeCfg::Msix {
                    return Err(cfg_err(
                        f("queues"),
                        format!(
                            "got {}; more than one queue needs interrupt_mode = \"msix\"",
                            nic.queues
                        ),
                    ));
                }
                if nic.irq_line.is_some() && mode != IntModeCfg::Intx {
                    return Err(cfg_err(f("irq_line"), "only legacy INTx lines can be shared; remove irq_line or set interrupt_mode = \"intx\""));
                }
                if ![2, 4, 8].contains(&nic.rdmts_divisor) {
                    return Err(cfg_err(
                        f("rdmts_divisor"),
                        format!("got {}; allowed: 2, 4, 8", nic.rdmts_divisor),
                    ));
                }
                if nic.irq_core >= h.cores {
                    return Err(cfg_err(
                        f("irq_core"),
                        format!(
                            "got {}; the host has {} core(s): allowed 0 to {}",
                            nic.irq_core,
                            h.cores,
                            h.cores - 1
                        ),
                    ));
                }
                let itr_chip = c.throttle == chip::ThrottleKind::Itr256ns;
                match &nic.moderation {
                    ModerationCfg::E1000Itr { driver, .. } => {
                        if !["e1000", "e1000e"].contains(&driver.as_str()) {
                            return Err(cfg_err(
                                f("moderation.driver"),
                                format!("got {driver:?}; allowed: e1000, e1000e"),
                            ));
                        }
                    }
                    ModerationCfg::Igb { .. } => {
                        if itr_chip {
                            return Err(cfg_err(
                                f("moderation.kind"),
                                format!("\"igb\" drives a per-vector EITR; chip {} has only ITR: use 82574, 82576, i350, i210 or i211", c.name),
                            ));
                        }
                    }
                    ModerationCfg::FreebsdAim {
                        enable_aim,
                        max_interrupt_rate,
                    } => {
                        if *enable_aim > 2 {
                            return Err(cfg_err(
                                f("moderation.enable_aim"),
                                format!("got {enable_aim}; allowed: 0, 1, 2"),
                            ));
                        }
                        if !(100..=100_000).contains(max_interrupt_rate) {
                            return Err(cfg_err(
                                f("moderation.max_interrupt_rate"),
                                format!("got {max_interrupt_rate}; allowed: 100 to 100000"),
                            ));
                        }
                    }
                    ModerationCfg::Dim {
                        profile,
                        start_index,
                    } => {
                        if !["rx-eqe", "rx-cqe", "tx-eqe", "tx-cqe"].contains(&profile.as_str()) {
                            return Err(cfg_err(
                                f("moderation.profile"),
                                format!("got {profile:?}; allowed: rx-eqe, rx-cqe, tx-eqe, tx-cqe"),
                            ));
                        }
                        if *start_index > 4 {
                            return Err(cfg_err(
                                f("moderation.start_index"),
                                format!("got {start_index}; allowed: 0 to 4"),
                            ));
                        }
                        if itr_chip {
                            return Err(cfg_err(
                                f("moderation.kind"),
                                format!("\"dim\" sets a per-vector interval in us; chip {} has only ITR: use an igb-class chip", c.name),
                            ));
                        }
                    }
                    ModerationCfg::Ixl { rings, .. } => {
                        if !["rx", "tx", "both"].contains(&rings.as_str()) {
                            return Err(cfg_err(
                                f("moderation.rings"),
                                format!("got {rings:?}; allowed: rx, tx, both"),
                            ));
                        }
                    }
                    ModerationCfg::Python { class, .. } => {
                        if class.trim().is_empty() {
                            return Err(cfg_err(
                                f("moderation.class"),
                                "must name a class: \"package.module:ClassName\" or a key of the moderators passed to holdoff.run",
                            ));
                        }
                    }
                    ModerationCfg::E1000_5x {
                        rx_int_delay,
                        rx_abs_int_delay,
                        tx_int_delay,
                        tx_abs_int_delay,
                        ..
                    } => {
                        if c.throttle != chip::ThrottleKind::Itr256ns {
                            return Err(cfg_err(
                                f("moderation.kind"),
                                format!("\"e1000-5x\" drives the 8254x ITR register; chip {} has EITR: use an e1000-family chip (82540, 82546)", c.name),
                            ));
                        }
                        for (field, v) in [
                            ("rx_int_delay", rx_int_delay),
                            ("rx_abs_int_delay", rx_abs_int_delay),
                            ("tx_int_delay", tx_int_delay),
                            ("tx_abs_int_delay", tx_abs_int_delay),
                        ] {
                            if *v > 0xFFFF {
                                return Err(cfg_err(
                                    format!("hosts[{hi}].nics[{ni}].moderation.{field}"),
                                    format!("got {v}; allowed 0 to 65535 (1.024 us units)"),
                                ));
                            }
                        }
                    }
                    ModerationCfg::Static {
                        itr_per_s,
                        itr_256ns,
                        eitr_us,
                        rdtr_1024ns,
                        radv_1024ns,
                        tidv_1024ns,
                        tadv_1024ns,
                    } => {
                        let given = [itr_per_s.is_some(), itr_256ns.is_some(), eitr_us.is_some()]
                            .iter()
                            .filter(|x| **x)
                            .count();
                        if given > 1 {
                            return Err(cfg_err(
                                f("moderation"),
                                "give at most one of itr_per_s, itr_256ns, eitr_us",
                            ));
                        }
                        if let Some(r) = itr_per_s {
                            if *r != 0 && !(100..=100_000).contains(r) {
                                return Err(cfg_err(
                                    f("moderation.itr_per_s"),
                                    format!("got {r}; allowed: 0 (off) or 100 to 100000 (Linux e1000 range)"),
                                ));
                            }
                        }
                        if let Some(v) = itr_256ns {
                            if *v > 0xFFFF {
                                return Err(cfg_err(
                                    f("moderation.itr_256ns"),
                                    format!("got {v}; the INTERVAL field is 16 bits: allowed 0 to 65535"),
                                ));
                            }
                        }
                        if let Some(v) = eitr_us {
                            if *v > 0x1FFF {
                                return Err(cfg_err(
                                    f("moderation.eitr_us"),
                                    format!("got {v}; the EITR interval field (bits 14:2) allows 0 to 8191 us"),
                                ));
                            }
                        }
                        for (field, v) in [
                            ("rdtr_1024ns", rdtr_1024ns),
                            ("radv_1024ns", radv_1024ns),
                            ("tidv_1024ns", tidv_1024ns),
                            ("tadv_1024ns", tadv_1024ns),
                        ] {
                            if *v > 0xFFFF {
                                return Err(cfg_err(
                                    format!("hosts[{hi}].nics[{ni}].moderation.{field}"),
                                    format!("got {v}; the register field is 16 bits: allowed 0 to 65535"),
                                ));
                            }
                        }
                    }
                }
            }
        }
        for (gi, g) in self.generators.iter().enumerate() {
            let f = |x: &str| format!("generators[{gi}].{x}");
            if !names.insert(g.name.clone()) || g.name.contains('.') || g.name.is_empty() {
                return Err(cfg_err(
                    f("name"),
                    format!("got {:?}; generator names must be unique among hosts and generators, without '.'", g.name),
                ));
            }
            match (g.rate_pps, g.load) {
                (Some(_), Some(_)) | (None, None) => {
                    return Err(cfg_err(
                        f("rate_pps"),
                        "give exactly one of rate_pps or load",
                    ));
                }
                (Some(r), None) if !(r > 0.0 && r <= 1.0e9) => {
                    return Err(cfg_err(
                        f("rate_pps"),
                        format!("got {r}; allowed: > 0 and <= 1e9"),
                    ));
                }
                (None, Some(l)) if !(l > 0.0 && l <= 1.0) => {
                    return Err(cfg_err(
                        f("load"),
                        format!("got {l}; allowed: > 0 and <= 1 (fraction of line rate)"),
                    ));
                }
                _ => {}
            }
            match (&g.frame_bytes, &g.frame_sizes) {
                (Some(_), Some(_)) => {
                    return Err(cfg_err(
                        f("frame_sizes"),
                        "give frame_bytes or frame_sizes, not both",
                    ));
                }
                (Some(b), None) if !(64..=9018).contains(b) => {
                    return Err(cfg_err(
                        f("frame_bytes"),
                        format!("got {b}; allowed: 64 to 9018"),
                    ));
                }
                (None, Some(v)) => {
                    if v.is_empty() || v.iter().all(|s| s.weight == 0) {
                        return Err(cfg_err(
                            f("frame_sizes"),
                            "needs at least one entry with weight > 0",
                        ));
                    }
                    for (i, s) in v.iter().enumerate() {
                        if !(64..=9018).contains(&s.bytes) {
                            return Err(cfg_err(
                                format!("generators[{gi}].frame_sizes[{i}].bytes"),
                                format!("got {}; allowed: 64 to 9018", s.bytes),
                            ));
                        }
                    }
                }
                _ => {}
            }
            if g.pattern == Pattern::OnOff && (g.on_us.unwrap_or(0) == 0 || g.off_us.is_none()) {
                return Err(cfg_err(
                    f("on_us"),
                    "pattern \"on-off\" needs on_us > 0 and off_us",
                ));
            }
            if g.flows == 0 {
                return Err(cfg_err(f("flows"), "got 0; allowed: 1 to 65535"));
            }
        }
        // Links: endpoints exist, each port used once.
        let mut used = BTreeSet::new();
        for (li, l) in self.links.iter().enumerate() {
            for (side, ep) in [("a", &l.a), ("b", &l.b)] {
                let field = format!("links[{li}].{side}");
                if !self.endpoint_exists(ep) {
                    return Err(cfg_err(
                        field,
                        format!(
                            "got {ep:?}; allowed: a generator name or \"host.nic\": {}",
                            self.endpoint_names().join(", ")
                        ),
                    ));
                }
                if !used.insert(ep.clone()) {
                    return Err(cfg_err(
                        field,
                        format!("{ep:?} is already linked; a port takes one link"),
                    ));
                }
            }
            match parse_rate(&l.rate) {
                Some(r) if (RATE_MIN_BPS..=RATE_MAX_BPS).contains(&r) => {}
                _ => {
                    return Err(cfg_err(
                        format!("links[{li}].rate"),
                        format!("got {:?}; allowed: 10M to 100G, e.g. \"10M\", \"1G\", \"2.5G\", \"100G\"", l.rate),
                    ));
                }
            }
        }
        for ep in self.endpoint_names() {
            if !used.contains(&ep) {
                return Err(cfg_err(
                    "links",
                    format!("port {ep:?} has no link; every NIC and generator needs one"),
                ));
            }
        }
        for (ai, a) in self.apps.iter().enumerate() {
            let f = |x: &str| format!("apps[{ai}].{x}");
            if !names.insert(a.name().to_string()) {
                return Err(cfg_err(
                    f("name"),
                    format!("got {:?}; names must be unique", a.name()),
                ));
            }
            let Some(h) = self.hosts.iter().find(|h| h.name == a.host()) else {
                return Err(cfg_err(
                    f("host"),
                    format!(
                        "got {:?}; allowed: {}",
                        a.host(),
                        self.host_names().join(", ")
                    ),
                ));
            };
            if a.core() >= h.cores {
                return Err(cfg_err(
                    f("core"),
                    format!(
                        "got {}; host {:?} has {} core(s)",
                        a.core(),
                        h.name,
                        h.cores
                    ),
                ));
            }
            // Every two-host application needs a direct link to its peer.
            if let Some(to) = a.peer() {
                if self.route(a.host(), to).is_none() {
                    return Err(cfg_err(
                        f("to"),
                        format!(
                            "got {to:?}; must be another host directly linked to {:?}",
                            a.host()
                        ),
                    ));
                }
            }
            if let AppCfg::Ping {
                interval_us,
                size_bytes,
                ..
            } = a
            {
                if *interval_us == 0 {
                    return Err(cfg_err(f("interval_us"), "got 0; must be at least 1"));
                }
                if *size_bytes > 8972 {
                    return Err(cfg_err(
                        f("size_bytes"),
                        format!("got {size_bytes}; allowed: 0 to 8972"),
                    ));
                }
            }
            if let AppCfg::Rpc {
                to,
                server_think_us,
                server_busy_poll_usecs,
                server_busy_poll_budget,
                server_prefer_busy_poll,
                ..
            } = a
            {
                if *server_think_us > 1_000_000 {
                    return Err(cfg_err(
                        f("server_think_us"),
                        format!("got {server_think_us}; allowed: 0 to 1000000 (1 s)"),
                    ));
                }
                if *server_busy_poll_usecs > 1_000_000 {
                    return Err(cfg_err(
                        f("server_busy_poll_usecs"),
                        format!("got {server_busy_poll_usecs}; allowed: 0 (off) to 1000000 (1 s)"),
                    ));
                }
                if !(1..=65_535).contains(server_busy_poll_budget) {
                    return Err(cfg_err(
                        f("server_busy_poll_budget"),
                        format!(
                            "got {server_busy_poll_budget}; allowed: 1 to 65535 (Linux default 8)"
                        ),
                    ));
                }
                if *server_prefer_busy_poll && *server_busy_poll_usecs == 0 {
                    return Err(cfg_err(
                        f("server_prefer_busy_poll"),
                        "prefer_busy_poll needs busy polling: set server_busy_poll_usecs > 0",
                    ));
                }
                if *server_busy_poll_usecs > 0 {
                    let server = self.hosts.iter().find(|h| h.name == *to);
                    if let Some(sh) = server.filter(|sh| sh.driver != DriverKind::Napi) {
                        return Err(cfg_err(
                            f("server_busy_poll_usecs"),
                            format!(
                                "busy polling calls the NAPI poll; host {:?} uses driver {:?}: set driver = \"napi\" there",
                                sh.name,
                                sh.driver.as_str()
                            ),
                        ));
                    }
                }
            }
        }
        let sinks: Vec<&str> = self
            .apps
            .iter()
            .filter(|a| matches!(a, AppCfg::UdpSink { .. }))
            .map(|a| a.host())
            .collect();
        let uniq: BTreeSet<&str> = sinks.iter().copied().collect();
        if uniq.len() != sinks.len() {
            return Err(cfg_err("apps", "at most one udp_sink per host"));
        }
        Ok(())
    }

    fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.name.clone()).collect()
    }

    /// Every port name: "host.nic" and generator names, in declaration order.
    pub fn endpoint_names(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for h in &self.hosts {
            for n in &h.nics {
                v.push(format!("{}.{}", h.name, n.name));
            }
        }
        for g in &self.generators {
            v.push(g.name.clone());
        }
        v
    }

    fn endpoint_exists(&self, ep: &str) -> bool {
        self.endpoint_names().iter().any(|e| e == ep)
    }

    /// The (local port, remote port) names linking host `from` to host `to`.
    pub fn route(&self, from: &str, to: &str) -> Option<(String, String)> {
        if from == to {
            return None;
        }
        for l in &self.links {
            for (x, y) in [(&l.a, &l.b), (&l.b, &l.a)] {
                if x.split_once('.').map(|p| p.0) == Some(from)
                    && y.split_once('.').map(|p| p.0) == Some(to)
                {
                    return Some((x.clone(), y.clone()));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_exactly() {
        assert_eq!(parse_rate("10M"), Some(10_000_000));
        assert_eq!(parse_rate("1G"), Some(1_000_000_000));
        assert_eq!(parse_rate("2.5G"), Some(2_500_000_000));
        assert_eq!(parse_rate("100G"), Some(100_000_000_000));
        assert_eq!(parse_rate("123456"), Some(123_456));
        assert_eq!(parse_rate("fast"), None);
        assert_eq!(parse_rate("G"), None);
    }

    /// Three hosts in a line a - b - c: a and c are not directly linked.
    fn line_of_three(app: &str) -> String {
        let host = |n: &str, nics: &[&str]| {
            let mut t = format!("[[hosts]]\nname = \"{n}\"\nprofile = \"ideal\"\n");
            for nic in nics {
                t += &format!("[[hosts.nics]]\nname = \"{nic}\"\nchip = \"82546\"\n");
            }
            t
        };
        format!(
            "name = \"line\"\nduration_ms = 1\n{}{}{}\
             [[links]]\na = \"a.eth0\"\nb = \"b.eth0\"\nrate = \"1G\"\n\
             [[links]]\na = \"b.eth1\"\nb = \"c.eth0\"\nrate = \"1G\"\n\
             [[apps]]\n{app}\n",
            host("a", &["eth0"]),
            host("b", &["eth0", "eth1"]),
            host("c", &["eth0"]),
        )
    }

    #[test]
    fn every_two_host_app_needs_a_direct_link_to_its_peer() {
        // Without the check, building the world would fail on a missing
        // route; each kind must be refused with the field named instead.
        for kind in ["ping", "netpipe", "iperf", "rpc"] {
            let bad = line_of_three(&format!(
                "kind = \"{kind}\"\nname = \"x\"\nhost = \"a\"\nto = \"c\""
            ));
            let err = Scenario::from_toml(&bad).expect_err(kind).to_string();
            assert!(err.contains("apps[0].to"), "{kind}: {err}");
            assert!(err.contains("directly linked"), "{kind}: {err}");
            let good = line_of_three(&format!(
                "kind = \"{kind}\"\nname = \"x\"\nhost = \"a\"\nto = \"b\""
            ));
            Scenario::from_toml(&good).unwrap_or_else(|e| panic!("{kind}: {e}"));
        }
    }
}
