//! The configuration of a generator port (a tester, not a modelled host):
//! its arrival pattern, rate or load, frame sizes, on/off periods, start and
//! stop times and flows. Plain data; the scenario format embeds it as
//! `[[generators]]` and checks it (`scenario::config::traffic`).
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
}

/// A weighted frame size.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SizeWeight {
    /// Frame size, destination address to FCS [bytes], 64..=9018.
    #[schemars(range(min = 64, max = 9018))]
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
    /// First frame at [us].
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
}

fn one_u16() -> u16 {
    1
}
