//! The configuration of a generator port (a tester, not a modelled host):
//! its arrival pattern, rate or load, frame sizes, on/off periods, start and
//! stop times and flows. Plain data; the scenario format embeds it as
//! `[[generators]]` and checks it (`scenario::config::traffic`).
//!
//! A generator may also replay a capture (`pattern = "replay"`, the model in
//! `apps::replay`): sizes and times then come from the file.
//!
//! Units are in the field names: `_pps` [frames/s], `_bytes`, `_us`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Smallest and largest frame a generator sends, destination address to FCS
/// [bytes]: the Ethernet minimum and a 9000-byte jumbo MTU + 18.
pub const MIN_FRAME: u32 = 64;
pub const MAX_FRAME: u32 = 9018;
/// Latest time a generator may start or stop [us]: the longest run (1 h).
pub const MAX_TIME_US: u64 = 3_600_000_000;
/// Highest offered rate [frames/s] (above 100GbE line rate at 64 bytes).
pub const MAX_RATE_PPS: f64 = 1.0e9;

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
    /// The frames of a pcap or pcapng file (`capture`), with its sizes and
    /// inter-arrival times.
    Replay,
}

/// Replay speed bounds (a multiple of real time).
pub const MIN_SPEED: f64 = 0.001;
pub const MAX_SPEED: f64 = 1000.0;
/// Most passes over a capture.
pub const MAX_LOOPS: u32 = 1_000_000;

/// A weighted frame size.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SizeWeight {
    /// Frame size, destination address to FCS [bytes], 64..=9018.
    #[schemars(range(min = 64, max = 9018))]
    pub bytes: u32,
    pub weight: u32,
}

/// Replay: which frames' latency to measure apart. Every key given must
/// match; at least one is needed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencyOf {
    /// UDP or TCP port, source or destination, 0 to 65535.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 65_535))]
    pub port: Option<u64>,
    /// IPv4 or IPv6 address, source or destination ("10.0.0.2", "fe80::1").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// DSCP value of the IP header (RFC 2474), 0 to 63 (46 = EF).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 63))]
    pub dscp: Option<u64>,
    /// Frame length range, low and high, inclusive [bytes], as the capture
    /// records it (without the 4-byte FCS, as packet analysers show it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 2, max = 2))]
    pub size: Option<Vec<u64>>,
}

/// A traffic generator port (a tester, not a modelled host). It sends UDP
/// frames to the host at the other end of its link and counts what it receives.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeneratorCfg {
    pub name: String,
    #[serde(default)]
    pub pattern: Pattern,
    /// Offered rate [frames/s] (during "on" periods for on-off), > 0 and
    /// <= 1e9. Give this or `load`.
    #[serde(default)]
    #[schemars(range(max = 1.0e9), extend("exclusiveMinimum" = 0))]
    pub rate_pps: Option<f64>,
    /// Offered load as a fraction of the link's line rate for the mean frame size (0 < load <= 1).
    #[serde(default)]
    #[schemars(range(max = 1.0), extend("exclusiveMinimum" = 0))]
    pub load: Option<f64>,
    /// Fixed frame size [bytes], 64..=9018. Default 64.
    #[serde(default)]
    #[schemars(range(min = 64, max = 9018))]
    pub frame_bytes: Option<u32>,
    /// Frame-size distribution (instead of `frame_bytes`).
    #[serde(default)]
    pub frame_sizes: Option<Vec<SizeWeight>>,
    /// On-off pattern: on period [us], >= 1.
    #[serde(default)]
    #[schemars(range(min = 1, max = 3_600_000_000u64))]
    pub on_us: Option<u64>,
    /// On-off pattern: off period [us].
    #[serde(default)]
    #[schemars(range(min = 0, max = 3_600_000_000u64))]
    pub off_us: Option<u64>,
    /// First frame at [us]. For `pattern = "replay"`: the capture time
    /// skipped from the capture's first record [us].
    #[serde(default)]
    #[schemars(range(min = 0, max = 3_600_000_000u64))]
    pub start_us: u64,
    /// No frames after [us], later than `start_us`; default: the end of the run.
    #[serde(default)]
    #[schemars(range(min = 1, max = 3_600_000_000u64))]
    pub stop_us: Option<u64>,
    /// Number of flows (frames are spread round robin; RSS maps flows to queues).
    #[serde(default = "one_u16")]
    #[schemars(range(min = 1, max = 65_535))]
    pub flows: u16,
    /// Replay: the capture file (pcap or pcapng), relative to the scenario
    /// file's directory (or the working directory for TOML text and dicts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<String>,
    /// Replay: speed as a multiple of real time, 0.001 to 1000 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.001, max = 1000.0))]
    pub speed: Option<f64>,
    /// Replay: passes over the capture, 1 to 1000000 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub loops: Option<u32>,
    /// Replay: keep only frames to this IPv4/IPv6 address or MAC address
    /// ("10.0.0.2", "00:1b:21:aa:bb:cc").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_to: Option<String>,
    /// Replay: frames whose latency the report also gives apart (as
    /// `latency_selected` of the sink that reads them), e.g.
    /// `latency_of = { port = 5000 }`; every key given must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_of: Option<Box<LatencyOf>>,
    /// Replay: the link MTU [bytes], 68 to 9000 (default 1500); longer
    /// frames are dropped as `frame_over_mtu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 68, max = 9000))]
    pub mtu_bytes: Option<u32>,
    /// Sending (true) or switched off (false); a change during the run (an
    /// `at` table) can switch it. Switched back on, it sends a frame at once.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[schemars(extend("default" = true))]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

fn one_u16() -> u16 {
    1
}
