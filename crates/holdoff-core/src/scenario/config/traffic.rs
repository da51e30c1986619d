//! Traffic tables: `[[apps]]` here; `[[generators]]` (the model type lives
//! in `apps::generator`) and `[[links]]` are checked in `links` and
//! re-exported from here.
//! Each checks its own fields; errors name the full field path
//! (`apps[2].streams`) and the allowed values. Cross-references (hosts,
//! peers, ports) are checked by the scenario (`super`).
//!
//! Units are in the field names: `_us`, `_ns`, `_bytes`, `_pps`.

pub use super::links::{
    parse_rate, replay_settings, validate_capture, validate_generator, LinkCfg, RATE_MAX_BPS,
    RATE_MIN_BPS,
};
use super::{cfg_err, range};
use super::{one, yes};
use crate::apps::generator::MAX_TIME_US;
pub use crate::apps::generator::{GeneratorCfg, Pattern, SizeWeight};
use crate::error::Error;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Largest application message or write [bytes]: 1 GiB.
pub const MAX_MESSAGE_BYTES: u64 = 1 << 30;
/// Most parallel iperf connections (iperf -P) [count].
pub const MAX_STREAMS: u32 = 128;

/// An application on a host.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppCfg {
    /// Receives every UDP frame that reaches its host and reads it from the socket.
    UdpSink {
        name: String,
        host: String,
        /// Socket receive buffer [bytes] (Linux default rmem_default 212992), at most 1 GiB.
        #[serde(default = "default_rcvbuf")]
        #[schemars(range(min = 0, max = 1_073_741_824u32))]
        rcvbuf_bytes: u32,
        /// Core the application runs on (below the host's `cores`).
        #[serde(default)]
        #[schemars(range(min = 0, max = 255))]
        core: u32,
    },
    /// ICMP echo requests to another modelled host; records each round trip.
    Ping {
        name: String,
        host: String,
        /// Target host name (must be linked to `host`).
        to: String,
        /// Time between requests [us] (ping -i; default 1 s), 1 to 3600000000.
        #[serde(default = "default_ping_interval")]
        #[schemars(range(min = 1, max = 3_600_000_000u64))]
        interval_us: u64,
        /// ICMP payload [bytes] (ping -s; default 56), 0 to 8972 (9000-byte MTU).
        #[serde(default = "default_ping_size")]
        #[schemars(range(min = 0, max = 8972))]
        size_bytes: u32,
        /// Requests to send; default: until the end of the run.
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        count: Option<u64>,
        /// First request at [us].
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        start_us: u64,
        #[serde(default)]
        #[schemars(range(min = 0, max = 255))]
        core: u32,
    },
    /// A UDP sender (iperf -u, a packet blaster): frames to another modelled
    /// host at a fixed rate, each sent by the application thread (send path,
    /// copy, TDT write). Frames the interface queue cannot hold are dropped
    /// (`tx_ring_full`), as a sender that ignores ENOBUFS; a `udp_sink` on
    /// `to` counts what arrives.
    UdpSend {
        name: String,
        host: String,
        /// Target host name (must be linked to `host`).
        to: String,
        /// Frame size on the wire, without preamble and gap [bytes], 64 to 9018.
        #[serde(default = "default_udp_frame")]
        #[schemars(range(min = 64, max = 9018))]
        frame_bytes: u32,
        /// Frames per second, 1 to 20000000 (14.9 M is 10 Gb/s of 64-byte frames).
        #[schemars(range(min = 1.0, max = 20_000_000.0))]
        rate_pps: f64,
        /// Frames to send; default: until the end of the run.
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        count: Option<u64>,
        /// First frame at [us].
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        start_us: u64,
        #[serde(default)]
        #[schemars(range(min = 0, max = 255))]
        core: u32,
    },
    /// NetPIPE 3.x NPtcp between `host` (transmitter) and `to` (receiver) over
    /// one TCP connection; the run ends when NetPIPE finishes.
    Netpipe {
        name: String,
        host: String,
        to: String,
        /// First message size [bytes] (NPtcp -l; default 1), 1 to `end_bytes`.
        #[serde(default = "d_np_start")]
        #[schemars(range(min = 1, max = 1_073_741_824u64))]
        start_bytes: u64,
        /// Last message size [bytes] (NPtcp -u; default 8388608), at most 1 GiB.
        #[serde(default = "d_np_end")]
        #[schemars(range(min = 1, max = 1_073_741_824u64))]
        end_bytes: u64,
        /// Perturbation [bytes] (NPtcp -p; default 3).
        #[serde(default = "d_np_pert")]
        #[schemars(range(min = 0, max = 1_073_741_824u64))]
        perturbation_bytes: u64,
        /// TCP_NODELAY on both sockets (NPtcp sets it).
        #[serde(default = "yes")]
        nodelay: bool,
        /// NPtcp starts at [us].
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        start_us: u64,
        #[serde(default)]
        #[schemars(range(min = 0, max = 255))]
        core: u32,
    },
    /// Request/response over one TCP connection (netperf TCP_RR-like):
    /// `host` sends a request, `to` answers, one transaction outstanding.
    Rpc {
        name: String,
        host: String,
        to: String,
        /// Request size [bytes], 1 to 1 GiB.
        #[serde(default = "d_rpc")]
        #[schemars(range(min = 1, max = 1_073_741_824u64))]
        request_bytes: u64,
        /// Response size [bytes], 1 to 1 GiB.
        #[serde(default = "d_rpc")]
        #[schemars(range(min = 1, max = 1_073_741_824u64))]
        response_bytes: u64,
        /// Pause between a response and the next request [us] (0 = back to back).
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        think_us: u64,
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        start_us: u64,
        /// TCP_NODELAY (default on, as request/response benchmarks set it).
        #[serde(default = "yes")]
        nodelay: bool,
        #[serde(default)]
        #[schemars(range(min = 0, max = 255))]
        core: u32,
        /// Server CPU time per request between reading it and writing the
        /// response [us] (application class on the server's core; 0 = none; at most 1 s).
        #[serde(default)]
        #[schemars(range(min = 0, max = 1_000_000))]
        server_think_us: u64,
        /// Server epoll busy polling (EPIOCSPARAMS `busy_poll_usecs`) [us]:
        /// instead of sleeping for the next request the server spins on its
        /// core polling its NAPI instance for up to this long (0 = off; at most 1 s).
        #[serde(default)]
        #[schemars(range(min = 0, max = 1_000_000))]
        server_busy_poll_usecs: u64,
        /// Packets per busy poll (EPIOCSPARAMS `busy_poll_budget`; Linux
        /// `BUSY_POLL_BUDGET` = 8 when unset) [packets], 1 to 65535.
        #[serde(default = "d_busy_budget")]
        #[schemars(range(min = 1, max = 65_535))]
        server_busy_poll_budget: u32,
        /// EPIOCSPARAMS `prefer_busy_poll`: the busy-polled NAPI instance
        /// keeps its IRQ masked (needed for `irq_suspend_timeout_ns`).
        #[serde(default)]
        server_prefer_busy_poll: bool,
    },
    /// Open-loop request/response load (memcached-style load generator):
    /// requests arrive at `rate_rps` over `connections` TCP connections from
    /// `host` to `to` whether or not replies have come back; latency is
    /// measured from each request's intended send time.
    RpcOpen {
        name: String,
        host: String,
        to: String,
        /// Target request rate [requests/s], > 0 and at most 10000000.
        #[schemars(range(max = 1.0e7), extend("exclusiveMinimum" = 0))]
        rate_rps: f64,
        /// Arrival process: "poisson" (exponential gaps) or "fixed".
        #[serde(default)]
        arrivals: ArrivalsCfg,
        /// TCP connections, 1 to 4096 (requests are spread round robin).
        #[serde(default = "d_open_conns")]
        #[schemars(range(min = 1, max = 4096))]
        connections: u32,
        /// Request size [bytes], 1 to 1048576.
        #[serde(default = "d_rpc")]
        #[schemars(range(min = 1, max = 1_048_576))]
        request_bytes: u64,
        /// Response size [bytes], 1 to 1048576.
        #[serde(default = "d_rpc")]
        #[schemars(range(min = 1, max = 1_048_576))]
        response_bytes: u64,
        /// Request sizes drawn per request (instead of `request_bytes`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_sizes: Option<Vec<ByteWeight>>,
        /// Response sizes drawn per request (instead of `response_bytes`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response_sizes: Option<Vec<ByteWeight>>,
        /// Mean server CPU time per request [ns], 0 to 1000000000 (1 s).
        #[serde(default)]
        #[schemars(range(min = 0, max = 1_000_000_000u64))]
        service_ns: u64,
        /// Service-time distribution: "fixed" or "exponential".
        #[serde(default)]
        service: ServiceCfg,
        /// Server epoll worker threads, 1 to 64 (connection c is served by thread c mod threads).
        #[serde(default = "one")]
        #[schemars(range(min = 1, max = 64))]
        server_threads: u32,
        /// Core of each server thread (below the server host's `cores`);
        /// default: thread i on core i mod cores.
        #[serde(default)]
        server_cores: Option<Vec<u32>>,
        /// Server epoll busy polling (EPIOCSPARAMS `busy_poll_usecs`) [us]:
        /// each server thread spins polling the NAPI instance of its
        /// connections' queue instead of sleeping (0 = off; at most 1 s).
        /// Give one thread per RX queue so a thread's connections share one
        /// queue (connection c is on queue c mod queues).
        #[serde(default)]
        #[schemars(range(min = 0, max = 1_000_000))]
        server_busy_poll_usecs: u64,
        /// Packets per busy poll (EPIOCSPARAMS `busy_poll_budget`) [packets], 1 to 65535.
        #[serde(default = "d_busy_budget")]
        #[schemars(range(min = 1, max = 65_535))]
        server_busy_poll_budget: u32,
        /// EPIOCSPARAMS `prefer_busy_poll` (needed for `irq_suspend_timeout_ns`).
        #[serde(default)]
        server_prefer_busy_poll: bool,
        /// Requests queued or awaiting a reply per connection, 1 to 65536;
        /// an arrival beyond it is refused and counted as dropped.
        #[serde(default = "d_open_outstanding")]
        #[schemars(range(min = 1, max = 65_536))]
        max_outstanding: u32,
        /// A reply later than this after its intended send time counts as a timeout [us], 1 to 3600000000.
        #[serde(default = "d_open_timeout")]
        #[schemars(range(min = 1, max = 3_600_000_000u64))]
        timeout_us: u64,
        /// First arrival at [us].
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        start_us: u64,
        /// TCP_NODELAY on every connection (default on).
        #[serde(default = "yes")]
        nodelay: bool,
        /// Core of the client (on `host`).
        #[serde(default)]
        #[schemars(range(min = 0, max = 255))]
        core: u32,
    },
    /// iperf-like bulk TCP transfer from `host` to `to`.
    Iperf {
        name: String,
        host: String,
        to: String,
        /// Parallel connections (iperf -P), 1 to 128 (iperf2's and iperf3's own limit is 128).
        #[serde(default = "one")]
        #[schemars(range(min = 1, max = 128))]
        streams: u32,
        /// Bytes per write call (iperf -l; default 128 KiB), 1 to 1 GiB.
        #[serde(default = "d_iperf_len")]
        #[schemars(range(min = 1, max = 1_073_741_824u64))]
        write_bytes: u64,
        /// First write at [us].
        #[serde(default)]
        #[schemars(range(min = 0, max = 3_600_000_000u64))]
        start_us: u64,
        #[serde(default)]
        nodelay: bool,
        #[serde(default)]
        #[schemars(range(min = 0, max = 255))]
        core: u32,
    },
}

/// A weighted message size of `rpc_open`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ByteWeight {
    /// Message size [bytes], 1 to 1048576.
    #[schemars(range(min = 1, max = 1_048_576))]
    pub bytes: u64,
    /// Relative weight, 0 to 1000000.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub weight: u32,
}

/// Check a weighted size list of `rpc_open`.
fn validate_sizes(field: String, v: &[ByteWeight]) -> Result<(), Error> {
    if v.is_empty() || v.iter().all(|s| s.weight == 0) {
        return Err(cfg_err(field, "needs at least one entry with weight > 0"));
    }
    for (i, s) in v.iter().enumerate() {
        range(
            format!("{field}[{i}].bytes"),
            s.bytes,
            1,
            1 << 20,
            " bytes (1 MiB)",
        )?;
        range(
            format!("{field}[{i}].weight"),
            s.weight as u64,
            0,
            1_000_000,
            "",
        )?;
    }
    Ok(())
}

/// Arrival process of `rpc_open`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArrivalsCfg {
    #[default]
    Poisson,
    Fixed,
}

/// Service-time distribution of `rpc_open`'s server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServiceCfg {
    #[default]
    Fixed,
    Exponential,
}

/// Most `rpc_open` connections.
pub const MAX_OPEN_CONNS: u32 = 4096;

fn d_open_conns() -> u32 {
    16
}
fn d_open_outstanding() -> u32 {
    1024
}
fn d_open_timeout() -> u64 {
    1_000_000
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
fn default_udp_frame() -> u32 {
    64
}

/// The request/response servers' busy-poll settings (`rpc`, `rpc_open`):
/// SO_BUSY_POLL time, its budget, and SO_PREFER_BUSY_POLL, which needs it.
fn check_server_busy_poll(
    f: &dyn Fn(&str) -> String,
    usecs: u64,
    budget: u32,
    prefer: bool,
) -> Result<(), Error> {
    range(
        f("server_busy_poll_usecs"),
        usecs,
        0,
        1_000_000,
        " (0 = off; 1 s)",
    )?;
    range(
        f("server_busy_poll_budget"),
        budget as u64,
        1,
        65_535,
        " (Linux default 8)",
    )?;
    if prefer && usecs == 0 {
        return Err(cfg_err(
            f("server_prefer_busy_poll"),
            "prefer_busy_poll needs busy polling: set server_busy_poll_usecs > 0",
        ));
    }
    Ok(())
}

impl AppCfg {
    pub fn name(&self) -> &str {
        match self {
            AppCfg::UdpSink { name, .. }
            | AppCfg::Ping { name, .. }
            | AppCfg::UdpSend { name, .. }
            | AppCfg::Netpipe { name, .. }
            | AppCfg::Iperf { name, .. }
            | AppCfg::Rpc { name, .. }
            | AppCfg::RpcOpen { name, .. } => name,
        }
    }
    pub fn host(&self) -> &str {
        match self {
            AppCfg::UdpSink { host, .. }
            | AppCfg::Ping { host, .. }
            | AppCfg::UdpSend { host, .. }
            | AppCfg::Netpipe { host, .. }
            | AppCfg::Iperf { host, .. }
            | AppCfg::Rpc { host, .. }
            | AppCfg::RpcOpen { host, .. } => host,
        }
    }
    pub fn core(&self) -> u32 {
        match self {
            AppCfg::UdpSink { core, .. }
            | AppCfg::Ping { core, .. }
            | AppCfg::UdpSend { core, .. }
            | AppCfg::Netpipe { core, .. }
            | AppCfg::Iperf { core, .. }
            | AppCfg::Rpc { core, .. }
            | AppCfg::RpcOpen { core, .. } => *core,
        }
    }
    /// The peer host of a two-host application.
    pub fn peer(&self) -> Option<&str> {
        match self {
            AppCfg::Ping { to, .. }
            | AppCfg::UdpSend { to, .. }
            | AppCfg::Netpipe { to, .. }
            | AppCfg::Iperf { to, .. }
            | AppCfg::Rpc { to, .. }
            | AppCfg::RpcOpen { to, .. } => Some(to),
            AppCfg::UdpSink { .. } => None,
        }
    }
    pub fn kind(&self) -> &'static str {
        match self {
            AppCfg::UdpSink { .. } => "udp_sink",
            AppCfg::Ping { .. } => "ping",
            AppCfg::UdpSend { .. } => "udp_send",
            AppCfg::Netpipe { .. } => "netpipe",
            AppCfg::Iperf { .. } => "iperf",
            AppCfg::Rpc { .. } => "rpc",
            AppCfg::RpcOpen { .. } => "rpc_open",
        }
    }

    /// Check this application's own fields (not its references to hosts);
    /// `path` is `apps[i]`.
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        let f = |x: &str| format!("{path}.{x}");
        let time = |field: &str, v: u64| range(f(field), v, 0, MAX_TIME_US, " us (1 hour)");
        let size = |field: &str, v: u64| range(f(field), v, 1, MAX_MESSAGE_BYTES, " bytes (1 GiB)");
        match self {
            AppCfg::UdpSink { rcvbuf_bytes, .. } => {
                range(
                    f("rcvbuf_bytes"),
                    *rcvbuf_bytes as u64,
                    0,
                    1 << 30,
                    " bytes (1 GiB)",
                )?;
            }
            AppCfg::Ping {
                interval_us,
                size_bytes,
                count,
                start_us,
                ..
            } => {
                range(
                    f("interval_us"),
                    *interval_us,
                    1,
                    MAX_TIME_US,
                    " us (1 hour)",
                )?;
                range(f("size_bytes"), *size_bytes as u64, 0, 8972, "")?;
                if let Some(c) = count {
                    range(f("count"), *c, 0, MAX_TIME_US, "")?;
                }
                time("start_us", *start_us)?;
            }
            AppCfg::UdpSend {
                frame_bytes,
                rate_pps,
                count,
                start_us,
                ..
            } => {
                range(f("frame_bytes"), *frame_bytes as u64, 64, 9018, " bytes")?;
                if !(rate_pps.is_finite() && (1.0..=20_000_000.0).contains(rate_pps)) {
                    return Err(cfg_err(
                        f("rate_pps"),
                        format!("got {rate_pps}; must be between 1 and 20000000 frames/s"),
                    ));
                }
                if let Some(c) = count {
                    range(f("count"), *c, 0, MAX_TIME_US, "")?;
                }
                time("start_us", *start_us)?;
            }
            AppCfg::Netpipe {
                start_bytes,
                end_bytes,
                perturbation_bytes,
                start_us,
                ..
            } => {
                size("start_bytes", *start_bytes)?;
                size("end_bytes", *end_bytes)?;
                if end_bytes < start_bytes {
                    return Err(cfg_err(
                        f("end_bytes"),
                        format!("got {end_bytes}; must be at least start_bytes ({start_bytes}): NetPIPE refuses an empty size range"),
                    ));
                }
                range(
                    f("perturbation_bytes"),
                    *perturbation_bytes,
                    0,
                    MAX_MESSAGE_BYTES,
                    " bytes (1 GiB)",
                )?;
                time("start_us", *start_us)?;
            }
            AppCfg::Rpc {
                request_bytes,
                response_bytes,
                think_us,
                start_us,
                server_think_us,
                server_busy_poll_usecs,
                server_busy_poll_budget,
                server_prefer_busy_poll,
                ..
            } => {
                size("request_bytes", *request_bytes)?;
                size("response_bytes", *response_bytes)?;
                time("think_us", *think_us)?;
                time("start_us", *start_us)?;
                range(
                    f("server_think_us"),
                    *server_think_us,
                    0,
                    1_000_000,
                    " (1 s)",
                )?;
                check_server_busy_poll(
                    &f,
                    *server_busy_poll_usecs,
                    *server_busy_poll_budget,
                    *server_prefer_busy_poll,
                )?;
            }
            AppCfg::RpcOpen {
                rate_rps,
                connections,
                request_bytes,
                response_bytes,
                service_ns,
                server_threads,
                server_cores,
                max_outstanding,
                timeout_us,
                start_us,
                server_busy_poll_usecs,
                server_busy_poll_budget,
                server_prefer_busy_poll,
                request_sizes,
                response_sizes,
                ..
            } => {
                if let Some(v) = request_sizes {
                    validate_sizes(f("request_sizes"), v)?;
                }
                if let Some(v) = response_sizes {
                    validate_sizes(f("response_sizes"), v)?;
                }
                check_server_busy_poll(
                    &f,
                    *server_busy_poll_usecs,
                    *server_busy_poll_budget,
                    *server_prefer_busy_poll,
                )?;
                if !(*rate_rps > 0.0 && *rate_rps <= 1.0e7) {
                    return Err(cfg_err(
                        f("rate_rps"),
                        format!("got {rate_rps}; allowed: > 0 and <= 1e7 requests/s"),
                    ));
                }
                range(
                    f("connections"),
                    *connections as u64,
                    1,
                    MAX_OPEN_CONNS as u64,
                    "",
                )?;
                range(
                    f("request_bytes"),
                    *request_bytes,
                    1,
                    1 << 20,
                    " bytes (1 MiB)",
                )?;
                range(
                    f("response_bytes"),
                    *response_bytes,
                    1,
                    1 << 20,
                    " bytes (1 MiB)",
                )?;
                range(f("service_ns"), *service_ns, 0, 1_000_000_000, " ns (1 s)")?;
                range(f("server_threads"), *server_threads as u64, 1, 64, "")?;
                if server_threads > connections {
                    return Err(cfg_err(
                        f("server_threads"),
                        format!("got {server_threads}; at most one thread per connection ({connections})"),
                    ));
                }
                if let Some(cores) = server_cores {
                    if cores.len() != *server_threads as usize {
                        return Err(cfg_err(
                            f("server_cores"),
                            format!(
                                "got {} cores; give one per server thread ({server_threads})",
                                cores.len()
                            ),
                        ));
                    }
                }
                range(f("max_outstanding"), *max_outstanding as u64, 1, 65_536, "")?;
                range(f("timeout_us"), *timeout_us, 1, MAX_TIME_US, " us (1 hour)")?;
                time("start_us", *start_us)?;
            }
            AppCfg::Iperf {
                streams,
                write_bytes,
                start_us,
                ..
            } => {
                range(
                    f("streams"),
                    *streams as u64,
                    1,
                    MAX_STREAMS as u64,
                    " (iperf -P)",
                )?;
                size("write_bytes", *write_bytes)?;
                time("start_us", *start_us)?;
            }
        }
        Ok(())
    }
}
