//! `[[links]]` and `[[generators]]` (the model type lives in
//! `apps::generator`, captures in `apps::replay`): each checks its own
//! fields; errors name the full field path (`generators[0].rate_pps`) and
//! the allowed values. Link rates are parsed here (`parse_rate`).
//!
//! Units are in the field names: `_us`, `_ns`, `_bytes`, `_pps`; rates [bit/s].

use super::{cfg_err, range};
use crate::apps::generator::{
    GeneratorCfg, Pattern, MAX_FRAME, MAX_LOOPS, MAX_RATE_PPS, MAX_SPEED, MAX_TIME_US, MIN_FRAME,
    MIN_SPEED,
};
use crate::apps::replay::{resolve, CaptureReader, OnlyTo, ReplaySettings, Selector};
use crate::error::Error;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A full-duplex link between two ports: "host.nic" or a generator name.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub a: String,
    pub b: String,
    /// Line rate: 10M, 100M, 1G, 2.5G, 10G, 25G, 40G, 100G, or a number of bit/s.
    #[serde(default = "default_rate")]
    pub rate: String,
    /// One-way propagation delay [ns], 0 to 1000000000 (1 s: more than a
    /// geostationary satellite hop).
    #[serde(default)]
    #[schemars(range(min = 0, max = 1_000_000_000u64))]
    pub propagation_ns: u64,
}

fn default_rate() -> String {
    "1G".into()
}

/// Check a generator's own fields; `path` is `generators[i]`.
pub fn validate_generator(g: &GeneratorCfg, path: &str) -> Result<(), Error> {
    let f = |x: &str| format!("{path}.{x}");
    if g.pattern == Pattern::Replay {
        return validate_replay(g, path);
    }
    for (name, set) in [
        ("capture", g.capture.is_some()),
        ("speed", g.speed.is_some()),
        ("loops", g.loops.is_some()),
        ("only_to", g.only_to.is_some()),
        ("latency_of", g.latency_of.is_some()),
        ("mtu_bytes", g.mtu_bytes.is_some()),
    ] {
        if set {
            return Err(cfg_err(
                f(name),
                format!(
                    "only for pattern = \"replay\" (this generator's pattern is {:?})",
                    g.pattern
                ),
            ));
        }
    }
    match (g.rate_pps, g.load) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(cfg_err(
                f("rate_pps"),
                "give exactly one of rate_pps or load",
            ));
        }
        (Some(r), None) if !(r > 0.0 && r <= MAX_RATE_PPS) => {
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
        (Some(_), None) | (None, Some(_)) => {}
    }
    match (&g.frame_bytes, &g.frame_sizes) {
        (Some(_), Some(_)) => {
            return Err(cfg_err(
                f("frame_sizes"),
                "give frame_bytes or frame_sizes, not both",
            ));
        }
        (Some(b), None) => {
            range(
                f("frame_bytes"),
                *b as u64,
                MIN_FRAME as u64,
                MAX_FRAME as u64,
                "",
            )?;
        }
        (None, Some(v)) => {
            if v.is_empty() || v.iter().all(|s| s.weight == 0) {
                return Err(cfg_err(
                    f("frame_sizes"),
                    "needs at least one entry with weight > 0",
                ));
            }
            for (i, s) in v.iter().enumerate() {
                range(
                    f(&format!("frame_sizes[{i}].bytes")),
                    s.bytes as u64,
                    MIN_FRAME as u64,
                    MAX_FRAME as u64,
                    "",
                )?;
            }
        }
        (None, None) => {}
    }
    if let Some(on) = g.on_us {
        range(f("on_us"), on, 1, MAX_TIME_US, " us (1 hour)")?;
    }
    if let Some(off) = g.off_us {
        range(f("off_us"), off, 0, MAX_TIME_US, " us (1 hour)")?;
    }
    if g.pattern == Pattern::OnOff && (g.on_us.unwrap_or(0) == 0 || g.off_us.is_none()) {
        return Err(cfg_err(
            f("on_us"),
            "pattern \"on-off\" needs on_us > 0 and off_us",
        ));
    }
    range(f("start_us"), g.start_us, 0, MAX_TIME_US, " us (1 hour)")?;
    if let Some(stop) = g.stop_us {
        range(f("stop_us"), stop, 1, MAX_TIME_US, " us (1 hour)")?;
        if stop <= g.start_us {
            return Err(cfg_err(
                f("stop_us"),
                format!("got {stop}; must be later than start_us ({})", g.start_us),
            ));
        }
    }
    if g.flows == 0 {
        return Err(cfg_err(f("flows"), "got 0; allowed: 1 to 65535"));
    }
    Ok(())
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

impl LinkCfg {
    /// Check the link's own fields; `path` is `links[i]`.
    pub fn validate(&self, path: &str) -> Result<(), Error> {
        match parse_rate(&self.rate) {
            Some(r) if (RATE_MIN_BPS..=RATE_MAX_BPS).contains(&r) => {}
            _ => {
                return Err(cfg_err(
                    format!("{path}.rate"),
                    format!(
                        "got {:?}; allowed: 10M to 100G, e.g. \"10M\", \"1G\", \"2.5G\", \"100G\"",
                        self.rate
                    ),
                ));
            }
        }
        range(
            format!("{path}.propagation_ns"),
            self.propagation_ns,
            0,
            1_000_000_000,
            " ns (1 s)",
        )
    }
}

/// Check a replaying generator's own fields (not the file; see `validate_capture`).
fn validate_replay(g: &GeneratorCfg, path: &str) -> Result<(), Error> {
    let f = |x: &str| format!("{path}.{x}");
    if g.capture.as_deref().is_none_or(|c| c.trim().is_empty()) {
        return Err(cfg_err(
            f("capture"),
            "pattern \"replay\" needs capture = \"path/to/file.pcapng\" (pcap or pcapng)",
        ));
    }
    for (name, set) in [
        ("rate_pps", g.rate_pps.is_some()),
        ("load", g.load.is_some()),
        ("frame_bytes", g.frame_bytes.is_some()),
        ("frame_sizes", g.frame_sizes.is_some()),
        ("on_us", g.on_us.is_some()),
        ("off_us", g.off_us.is_some()),
    ] {
        if set {
            return Err(cfg_err(
                f(name),
                "not used by pattern \"replay\": rates, sizes and times come from the capture",
            ));
        }
    }
    if let Some(v) = g.speed {
        if !(MIN_SPEED..=MAX_SPEED).contains(&v) {
            return Err(cfg_err(
                f("speed"),
                format!("got {v}; allowed: 0.001 to 1000 (a multiple of real time)"),
            ));
        }
    }
    if let Some(l) = g.loops {
        range(f("loops"), l as u64, 1, MAX_LOOPS as u64, "")?;
    }
    if let Some(m) = g.mtu_bytes {
        range(f("mtu_bytes"), m as u64, 68, 9000, " bytes")?;
    }
    if let Some(o) = &g.only_to {
        if OnlyTo::parse(o).is_none() {
            return Err(cfg_err(
                f("only_to"),
                format!("got {o:?}; allowed: an IPv4 or IPv6 address or a MAC address (00:1b:21:aa:bb:cc)"),
            ));
        }
    }
    if let Some(l) = &g.latency_of {
        Selector::from_cfg(l).map_err(|(key, what)| {
            let field = if key.is_empty() {
                f("latency_of")
            } else {
                f(&format!("latency_of.{key}"))
            };
            cfg_err(field, what)
        })?;
    }
    range(f("start_us"), g.start_us, 0, MAX_TIME_US, " us (1 hour)")?;
    if let Some(stop) = g.stop_us {
        range(f("stop_us"), stop, 1, MAX_TIME_US, " us (1 hour)")?;
    }
    Ok(())
}

/// The replay settings of a replaying generator (None for other patterns);
/// `base` is the scenario file's directory.
pub fn replay_settings(g: &GeneratorCfg, base: Option<&Path>) -> Option<ReplaySettings> {
    if g.pattern != Pattern::Replay {
        return None;
    }
    Some(ReplaySettings {
        path: resolve(g.capture.as_deref()?, base),
        speed_milli: (g.speed.unwrap_or(1.0) * 1000.0).round().max(1.0) as u64,
        loops: g.loops.unwrap_or(1),
        skip_ns: g.start_us * 1000,
        only_to: g.only_to.as_deref().and_then(OnlyTo::parse),
        latency_of: g
            .latency_of
            .as_ref()
            .and_then(|l| Selector::from_cfg(l).ok()),
        max_frame_bytes: g.mtu_bytes.unwrap_or(1500) + 18,
    })
}

/// A replaying generator's capture: the file exists and its header reads.
/// Record errors are found as the run reads them.
pub fn validate_capture(g: &GeneratorCfg, path: &str, base: Option<&Path>) -> Result<(), Error> {
    let Some(set) = replay_settings(g, base) else {
        return Ok(());
    };
    CaptureReader::open(&set.path)
        .map(|_| ())
        .map_err(|e| cfg_err(format!("{path}.capture"), e.to_string()))
}
