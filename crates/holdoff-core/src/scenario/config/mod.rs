//! Scenario files: the TOML schema, its defaults and its validation.
//!
//! A scenario names hosts (cost profile, cores, driver, NICs), traffic
//! generator ports, the links between ports, the applications, the duration
//! and the seed. It is validated once; each part checks its own fields
//! (`host`, `moderation`, `traffic`) and this module checks the run-wide
//! fields and the cross-references (unique names, link endpoints, an
//! application's host and peer). Errors name the full field path, the bad
//! value and what is allowed. `holdoff schema` prints the JSON Schema derived
//! from these types; every numeric bound checked here is also written into it
//! (`minimum`/`maximum`), so the two agree.
//!
//! Units are in the field names: `_ms`, `_us`, `_ns`, `_bytes`, `_pps`,
//! `_per_s`, `_256ns` (ITR), `_1024ns` (RDTR/RADV/TIDV/TADV), `_us` (EITR).

pub mod at;
pub mod host;
pub mod links;
mod locate;
pub mod moderation;
pub mod nic;
pub mod profile_file;
pub mod traffic;

use crate::error::Error;
use crate::host::drivers;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

pub use host::{ForwardRule, HostCfg, IntModeCfg, LegacyItrCfg, NicCfg, TcpSysctls, VarianceUse};
pub use moderation::{ModerationCfg, PythonCfg};
pub use traffic::{
    parse_rate, AppCfg, GeneratorCfg, LinkCfg, Pattern, SizeWeight, RATE_MAX_BPS, RATE_MIN_BPS,
};

/// Longest run [ms]: one hour.
pub const MAX_DURATION_MS: u64 = 3_600_000;
/// Most hosts in a scenario. A host costs about 29 KB when built (100 000
/// took 2.9 GB); a 1-ms run of 16 384 one-NIC hosts, each fed by a
/// generator, peaks at 536 MB RSS (the whole Python process, measured
/// with /usr/bin/time -v; 1.9 s).
pub const MAX_HOSTS: usize = 16_384;
/// Most ports (NICs and generators together) and most applications: their
/// indices are 16-bit in the model; half of that leaves room.
pub const MAX_PORTS: usize = 32_768;
pub const MAX_APPS: usize = 32_768;
/// Most time-series values a run keeps: samples (`duration_ms` /
/// `sample_interval_us` + 1) times columns (per host 3, per NIC 3 + 2 per
/// queue, an upper bound of its vectors) [values]; 64 Mi values are
/// 512 MiB of f64 (1 024 hosts sampled every 10 ms for 60 s hold 49 Mi).
pub const MAX_SERIES_VALUES: u64 = 64 << 20;

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
    /// Simulated time [ms], 1 to 3600000 (1 hour).
    #[schemars(range(min = 1, max = 3_600_000))]
    pub duration_ms: u64,
    /// Time-series sampling interval [us], 1 to 3600000000 (1 hour). The
    /// run keeps at most 67108864 values: samples (duration / interval + 1)
    /// times series (per host 3, per NIC 3 + 2 per queue).
    #[serde(default = "default_sample_interval_us")]
    #[schemars(range(min = 1, max = 3_600_000_000u64))]
    pub sample_interval_us: u64,
    /// The modelled machines, 1 to 16384; NICs and generators together
    /// at most 32768, applications at most 32768. Names contain no NUL.
    pub hosts: Vec<HostCfg>,
    #[serde(default)]
    pub generators: Vec<GeneratorCfg>,
    pub links: Vec<LinkCfg>,
    #[serde(default)]
    pub apps: Vec<AppCfg>,
    /// Changes during the run: at `t_ms`, set each path (the `--set`
    /// syntax) to its value (docs/howto-change-mid-run.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("default" = []))]
    pub at: Vec<at::AtCfg>,
    /// The directory of the scenario file, when it was read from a file:
    /// relative `capture` paths and profile files are resolved against it
    /// (not a field of the file).
    #[serde(skip)]
    pub base_dir: Option<std::path::PathBuf>,
}

fn default_seed() -> u64 {
    1
}
fn default_sample_interval_us() -> u64 {
    10_000
}

/// A TOML error: a syntax error stays a parse error (it names the line); a
/// value of the wrong type or an unknown name becomes a field error naming
/// the field path (found from the error's position) and keeping the line.
fn type_error(text: &str, e: toml::de::Error) -> Error {
    let parse = |e: &toml::de::Error| Error::Parse {
        message: short_lines(e.to_string().trim_end()),
    };
    if text.parse::<toml::Table>().is_err() {
        return parse(&e);
    }
    let Some(span) = e.span() else {
        return parse(&e);
    };
    let Some(field) = locate::field_at(text, span.clone(), quoted_value(e.message())) else {
        return parse(&e);
    };
    let span = locate::offset_of(text, &field).unwrap_or(span.start)..span.end;
    let line = text[..span.start].matches('\n').count() + 1;
    let column = span.start - text[..span.start].rfind('\n').map_or(0, |i| i + 1) + 1;
    Error::Config {
        field,
        message: format!(
            "{} (line {line}, column {column})",
            plain_type_message(e.message())
        ),
    }
}

/// Longest line of the input a parse error quotes back [characters].
const MAX_QUOTED_CHARS: usize = 160;

/// A parse error's text with each quoted line cut to `MAX_QUOTED_CHARS`
/// (a 40 000-character line is not echoed back whole).
fn short_lines(m: &str) -> String {
    m.lines()
        .map(|l| match l.char_indices().nth(MAX_QUOTED_CHARS) {
            Some((at, _)) => format!(
                "{}... ({} more characters)",
                &l[..at],
                l[at..].chars().count()
            ),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The value a serde message quotes: "invalid value: integer `-5`, ..." or
/// "unknown variant `rx`, ...".
fn quoted_value(m: &str) -> Option<&str> {
    let (_, rest) = m.split_once('`')?;
    Some(rest.split_once('`')?.0)
}

/// serde's "invalid value: integer `-5`, expected u32" as "got -5;
/// expected an integer from 0 to 4294967295".
fn plain_type_message(m: &str) -> String {
    let ranges: [(&str, &str); 6] = [
        ("u8", "0 to 255"),
        ("u16", "0 to 65535"),
        ("u32", "0 to 4294967295"),
        ("u64", "0 to 18446744073709551615"),
        ("i32", "-2147483648 to 2147483647"),
        ("i64", "-9223372036854775808 to 9223372036854775807"),
    ];
    for prefix in ["invalid value: integer `", "invalid type: integer `"] {
        if let Some(rest) = m.strip_prefix(prefix) {
            if let Some((v, expected)) = rest.split_once("`, expected ") {
                if let Some((_, r)) = ranges.iter().find(|(t, _)| *t == expected) {
                    return format!("got {v}; expected an integer from {r}");
                }
            }
        }
    }
    m.to_string()
}

/// Serde defaults and schema helpers shared by the config tables.
pub(crate) fn one() -> u32 {
    1
}

pub(crate) fn two() -> u32 {
    2
}

pub(crate) fn yes() -> bool {
    true
}

pub(crate) fn string_enum(names: Vec<&str>) -> schemars::Schema {
    schemars::json_schema!({ "type": "string", "enum": names })
}

/// A name with a NUL character is refused: it would end the name early in
/// any C string (a file name, a terminal) and forge what follows.
pub(crate) fn no_nul(field: &str, name: &str) -> Result<(), Error> {
    match name.find('\0') {
        Some(at) => Err(cfg_err(
            field,
            format!("contains a NUL character (\\0) at byte {at}; names must not contain NUL"),
        )),
        None => Ok(()),
    }
}

pub(crate) fn cfg_err(field: impl Into<String>, message: impl Into<String>) -> Error {
    Error::Config {
        field: field.into(),
        message: message.into(),
    }
}

/// `lo..=hi` or an error naming the field (`note` follows the bounds, e.g. a unit).
pub(crate) fn range<T: PartialOrd + std::fmt::Display>(
    field: String,
    v: T,
    lo: T,
    hi: T,
    note: &str,
) -> Result<(), Error> {
    if v < lo || v > hi {
        return Err(cfg_err(
            field,
            format!("got {v}; allowed: {lo} to {hi}{note}"),
        ));
    }
    Ok(())
}

pub(crate) fn names_list(v: &[&str]) -> String {
    v.join(", ")
}

/// The most problems `Scenario::problems` lists.
pub const MAX_PROBLEMS: usize = 50;

impl Scenario {
    /// Parse TOML text and validate it.
    pub fn from_toml(text: &str) -> Result<Scenario, Error> {
        Self::from_toml_in(text, None)
    }

    /// As `from_toml`, for a file in `base_dir` (relative capture paths and
    /// profile files are resolved against it; None: the working directory).
    pub fn from_toml_in(text: &str, base_dir: Option<&std::path::Path>) -> Result<Scenario, Error> {
        let s = Self::parse_in(text, base_dir)?;
        s.validate()?;
        Ok(s)
    }

    /// Parse TOML text into a scenario with its defaults filled in, not yet
    /// validated (`validate`, `problems`); a TOML or type error is the only
    /// problem the parser reports.
    pub fn parse_in(text: &str, base_dir: Option<&std::path::Path>) -> Result<Scenario, Error> {
        let mut s: Scenario = toml::from_str(text).map_err(|e| type_error(text, e))?;
        s.base_dir = base_dir.map(|p| p.to_path_buf());
        for n in s.hosts.iter_mut().flat_map(|h| h.nics.iter_mut()) {
            n.fill_ring_defaults();
        }
        Ok(s)
    }

    /// Check every field and cross-reference; the first problem is returned
    /// (the first of `problems`).
    pub fn validate(&self) -> Result<(), Error> {
        match self.problems().into_iter().next() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Every problem of the first stage that has any, in order: the run's
    /// fields; then each host; each generator; each link and unlinked port;
    /// each application; the sinks; the `[[at]]` changes. One problem per
    /// host, generator, link or application (its first), at most
    /// `MAX_PROBLEMS`. A later stage reads what the earlier ones checked, so
    /// it runs only when they found nothing.
    pub fn problems(&self) -> Vec<Error> {
        let mut out = Vec::new();
        if let Err(e) = self.validate_run() {
            return vec![e];
        }
        let mut names = BTreeSet::new();
        out.extend(self.validate_hosts(&mut names));
        if out.is_empty() {
            out.extend(self.validate_generators(&mut names));
        }
        if out.is_empty() {
            out.extend(self.validate_links());
        }
        if out.is_empty() {
            out.extend(self.validate_apps(&mut names));
        }
        if out.is_empty() {
            out.extend(self.validate_sinks().err());
        }
        if out.is_empty() {
            out.extend(at::resolve(self).err());
        }
        out.truncate(MAX_PROBLEMS);
        out
    }

    /// The run-wide fields, and the sizes checked before anything else.
    fn validate_run(&self) -> Result<(), Error> {
        if self.name.trim().is_empty() {
            return Err(cfg_err("name", "must not be empty"));
        }
        no_nul("name", &self.name)?;
        self.validate_sizes()?;
        if self.duration_ms == 0 || self.duration_ms > MAX_DURATION_MS {
            return Err(cfg_err(
                "duration_ms",
                format!("got {}; allowed: 1 to 3600000 (1 hour)", self.duration_ms),
            ));
        }
        if self.sample_interval_us == 0 || self.sample_interval_us > MAX_DURATION_MS * 1000 {
            return Err(cfg_err(
                "sample_interval_us",
                format!(
                    "got {}; allowed: 1 to 3600000000 (1 hour)",
                    self.sample_interval_us
                ),
            ));
        }
        if self.hosts.is_empty() {
            return Err(cfg_err("hosts", "at least one host is required"));
        }
        Ok(())
    }

    /// Counts the model holds in bounded memory: hosts, ports, applications,
    /// time-series values.
    fn validate_sizes(&self) -> Result<(), Error> {
        let nics: usize = self.hosts.iter().map(|h| h.nics.len()).sum();
        let ports = nics.saturating_add(self.generators.len());
        for (field, n, max, what) in [
            ("hosts", self.hosts.len(), MAX_HOSTS, "hosts"),
            (
                "hosts[].nics",
                ports,
                MAX_PORTS,
                "ports (NICs and generators)",
            ),
            ("apps", self.apps.len(), MAX_APPS, "applications"),
        ] {
            if n > max {
                return Err(cfg_err(field, format!("{n} {what}; the limit is {max}")));
            }
        }
        let cols: u64 = self
            .hosts
            .iter()
            .map(|h| {
                3 + h
                    .nics
                    .iter()
                    .map(|n| 3 + 2 * n.queues.min(host::MAX_QUEUES) as u64)
                    .sum::<u64>()
            })
            .sum();
        let samples = (self.duration_ms.saturating_mul(1000) / self.sample_interval_us.max(1))
            .saturating_add(1);
        let values = samples.saturating_mul(cols.max(1));
        if values > MAX_SERIES_VALUES {
            // The shortest interval that fits: samples <= MAX / cols.
            let most_samples = MAX_SERIES_VALUES / cols.max(1);
            let least_us = (self.duration_ms.saturating_mul(1000))
                .div_ceil(most_samples.saturating_sub(1).max(1))
                .max(1);
            return Err(cfg_err(
                "sample_interval_us",
                format!(
                    "{samples} samples of {cols} time series ({values} values); the limit is \
                     {MAX_SERIES_VALUES} values: give sample_interval_us = \
                     {least_us} or more, or a shorter duration_ms"
                ),
            ));
        }
        Ok(())
    }

    /// Each host's first problem.
    fn validate_hosts(&self, names: &mut BTreeSet<String>) -> Vec<Error> {
        let one = |hi: usize, h: &HostCfg, names: &mut BTreeSet<String>| -> Result<(), Error> {
            no_nul(&format!("hosts[{hi}].name"), &h.name)?;
            for (ni, n) in h.nics.iter().enumerate() {
                no_nul(&format!("hosts[{hi}].nics[{ni}].name"), &n.name)?;
            }
            if !names.insert(h.name.clone()) || h.name.contains('.') || h.name.is_empty() {
                return Err(cfg_err(
                    format!("hosts[{hi}].name"),
                    format!(
                        "got {:?}; names must be unique, non-empty and contain no '.'",
                        h.name
                    ),
                ));
            }
            h.validate(&format!("hosts[{hi}]"), self.base_dir.as_deref())
        };
        let mut out = Vec::new();
        for (hi, h) in self.hosts.iter().enumerate() {
            out.extend(one(hi, h, names).err());
        }
        out
    }

    /// Each generator's first problem.
    fn validate_generators(&self, names: &mut BTreeSet<String>) -> Vec<Error> {
        let one = |gi: usize,
                   g: &GeneratorCfg,
                   names: &mut BTreeSet<String>|
         -> Result<(), Error> {
            no_nul(&format!("generators[{gi}].name"), &g.name)?;
            if !names.insert(g.name.clone()) || g.name.contains('.') || g.name.is_empty() {
                return Err(cfg_err(
                    format!("generators[{gi}].name"),
                    format!("got {:?}; generator names must be unique among hosts and generators, without '.'", g.name),
                ));
            }
            traffic::validate_generator(g, &format!("generators[{gi}]"))?;
            traffic::validate_capture(g, &format!("generators[{gi}]"), self.base_dir.as_deref())
        };
        let mut out = Vec::new();
        for (gi, g) in self.generators.iter().enumerate() {
            out.extend(one(gi, g, names).err());
        }
        out
    }

    /// Links: endpoints exist, each port used once, every port linked. Each
    /// link's first problem; then the ports left without a link (at most
    /// one problem naming them all).
    fn validate_links(&self) -> Vec<Error> {
        // Built once and looked up per link end, so that validation stays
        // O(links log ports) for rack-sized scenarios.
        let names = self.endpoint_names();
        let endpoints: BTreeSet<&str> = names.iter().map(String::as_str).collect();
        let mut used: BTreeSet<&str> = BTreeSet::new();
        let mut out = Vec::new();
        for (li, l) in self.links.iter().enumerate() {
            let mut one = || -> Result<(), Error> {
                for (side, ep) in [("a", &l.a), ("b", &l.b)] {
                    let field = || format!("links[{li}].{side}");
                    no_nul(&field(), ep)?;
                    if !endpoints.contains(ep.as_str()) {
                        return Err(cfg_err(
                            field(),
                            format!(
                                "got {ep:?}; allowed: a generator name or \"host.nic\": {}",
                                names.join(", ")
                            ),
                        ));
                    }
                    if !used.insert(ep.as_str()) {
                        return Err(cfg_err(
                            field(),
                            format!("{ep:?} is already linked; a port takes one link"),
                        ));
                    }
                }
                l.validate(&format!("links[{li}]"))
            };
            out.extend(one().err());
        }
        if out.is_empty() {
            let unlinked: Vec<&str> = names
                .iter()
                .map(String::as_str)
                .filter(|ep| !used.contains(ep))
                .collect();
            if let Some(ep) = unlinked.first() {
                let others = match unlinked.len() {
                    1 => String::new(),
                    n => format!(" ({} ports in all: {})", n, unlinked.join(", ")),
                };
                out.push(cfg_err(
                    "links",
                    format!("port {ep:?} has no link; every NIC and generator needs one{others}"),
                ));
            }
        }
        out
    }

    /// Each application's first problem.
    fn validate_apps(&self, names: &mut BTreeSet<String>) -> Vec<Error> {
        let one = |ai: usize, a: &AppCfg, names: &mut BTreeSet<String>| -> Result<(), Error> {
            let f = |x: &str| format!("apps[{ai}].{x}");
            no_nul(&f("name"), a.name())?;
            no_nul(&f("host"), a.host())?;
            if let Some(peer) = a.peer() {
                no_nul(&f("to"), peer)?;
            }
            if !names.insert(a.name().to_string()) {
                return Err(cfg_err(
                    f("name"),
                    format!("got {:?}; names must be unique", a.name()),
                ));
            }
            a.validate(&format!("apps[{ai}]"))?;
            self.validate_app_refs(a, &f)
        };
        let mut out = Vec::new();
        for (ai, a) in self.apps.iter().enumerate() {
            out.extend(one(ai, a, names).err());
        }
        out
    }

    /// An application's host, core and peer.
    fn validate_app_refs(&self, a: &AppCfg, f: &dyn Fn(&str) -> String) -> Result<(), Error> {
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
        if let AppCfg::RpcOpen {
            to,
            server_cores: Some(cores),
            ..
        } = a
        {
            let n = self
                .hosts
                .iter()
                .find(|h| h.name == *to)
                .map_or(0, |h| h.cores);
            if let Some((i, c)) = cores.iter().enumerate().find(|(_, c)| **c >= n) {
                return Err(cfg_err(
                    f(&format!("server_cores[{i}]")),
                    format!("got {c}; host {to:?} has {n} core(s)"),
                ));
            }
        }
        if let AppCfg::Rpc {
            to,
            server_busy_poll_usecs,
            ..
        }
        | AppCfg::RpcOpen {
            to,
            server_busy_poll_usecs,
            ..
        } = a
        {
            if *server_busy_poll_usecs > 0 {
                let server = self.hosts.iter().find(|h| h.name == *to);
                if let Some(sh) = server.filter(|sh| !drivers::arch(sh.driver).napi()) {
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
        Ok(())
    }

    fn validate_sinks(&self) -> Result<(), Error> {
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

    #[test]
    fn type_errors_name_the_field_path() {
        let text =
            line_of_three("kind = \"rpc\"\nname = \"x\"\nhost = \"a\"\nto = \"b\"\nthink_us = -5");
        let line = text.lines().position(|l| l == "think_us = -5").unwrap() + 1;
        match Scenario::from_toml(&text) {
            Err(Error::Config { field, message }) => {
                assert_eq!(field, "apps[0].think_us");
                assert!(message.contains("got -5"), "{message}");
                assert!(message.contains(&format!("line {line}")), "{message}");
            }
            other => panic!("{other:?}"),
        }
        // The third host's NIC: counters of nested arrays restart per host.
        let text = line_of_three("kind = \"udp_sink\"\nname = \"s\"\nhost = \"a\"");
        // (the last NIC written is host c's eth0)
        let bad = {
            let mut parts: Vec<&str> = text.rsplitn(2, "chip = \"82546\"").collect();
            parts.reverse();
            parts.join("chip = \"82546\"\nrx_ring = \"big\"")
        };
        match Scenario::from_toml(&bad) {
            Err(Error::Config { field, .. }) => assert_eq!(field, "hosts[2].nics[0].rx_ring"),
            other => panic!("{other:?}"),
        }
        // A syntax error stays a parse error naming the line.
        let err = Scenario::from_toml("name = = 1").unwrap_err();
        assert!(matches!(err, Error::Parse { .. }), "{err:?}");
    }

    /// A host whose driver never re-enables an MSI-X vector after the
    /// chip's auto-mask (linux-isr, openbsd-intr) is refused MSI-X, named at
    /// the NIC's interrupt_mode, by default (an i210 is MSI-X unless told)
    /// and when asked; MSI, or a NAPI driver, is accepted. The run it
    /// refuses took one interrupt and then dropped every frame.
    #[test]
    fn drivers_without_msix_handlers_are_refused_msix() {
        let one = |driver: &str, mode: &str| {
            format!(
                "name = \"x\"\nduration_ms = 1\n[[hosts]]\nname = \"h\"\nprofile = \"xeon-modern\"\n\
                 driver = \"{driver}\"\n[[hosts.nics]]\nname = \"eth0\"\nchip = \"i210\"\n{mode}\n\
                 [[generators]]\nname = \"g\"\nrate_pps = 1000\n[[links]]\na = \"g\"\nb = \"h.eth0\"\n"
            )
        };
        for driver in ["linux-isr", "openbsd-intr"] {
            for mode in ["", "interrupt_mode = \"msix\""] {
                match Scenario::from_toml(&one(driver, mode)) {
                    Err(Error::Config { field, message }) => {
                        assert_eq!(field, "hosts[0].nics[0].interrupt_mode", "{driver} {mode}");
                        assert!(message.contains("interrupt_mode = \"msi\""), "{message}");
                    }
                    other => panic!("{driver} {mode}: {other:?}"),
                }
            }
            Scenario::from_toml(&one(driver, "interrupt_mode = \"msi\"")).unwrap();
            Scenario::from_toml(&one(driver, "interrupt_mode = \"intx\"")).unwrap();
        }
        Scenario::from_toml(&one("napi", "")).unwrap();
        // An 8254x has no MSI-X: linux-isr takes it as it is.
        let e1000 = one("linux-isr", "").replace("i210", "82546");
        Scenario::from_toml(&e1000).unwrap();
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

    #[test]
    fn link_ends_must_name_existing_ports_each_linked_once() {
        // (edit of the a - b - c line, field named, words of the message)
        let cases: [(&str, &str, &str, &str); 3] = [
            (
                "b = \"c.eth0\"",
                "b = \"c.eth9\"",
                "links[1].b",
                "allowed: a generator name or \"host.nic\": a.eth0, b.eth0, b.eth1, c.eth0",
            ),
            (
                "b = \"c.eth0\"",
                "b = \"b.eth0\"",
                "links[1].b",
                "already linked",
            ),
            (
                "a = \"b.eth1\"",
                "a = \"c.eth0\"",
                "links[1].b",
                "already linked",
            ),
        ];
        let good = line_of_three("kind = \"udp_sink\"\nname = \"s\"\nhost = \"a\"");
        Scenario::from_toml(&good).expect("the line of three is valid");
        for (from, to, field, words) in cases {
            let bad = good.replacen(from, to, 1);
            assert_ne!(bad, good, "{from} -> {to} changed nothing");
            let err = Scenario::from_toml(&bad).expect_err(to).to_string();
            assert!(err.contains(field), "{to}: {err}");
            assert!(err.contains(words), "{to}: {err}");
        }
        // A port that no link names.
        let extra = good.replacen(
            "[[links]]",
            "[[hosts]]\nname = \"d\"\nprofile = \"ideal\"\n\
             [[hosts.nics]]\nname = \"eth0\"\nchip = \"82546\"\n[[links]]",
            1,
        );
        let err = Scenario::from_toml(&extra)
            .expect_err("d.eth0 unlinked")
            .to_string();
        assert!(err.contains("\"d.eth0\" has no link"), "{err}");
    }
}
