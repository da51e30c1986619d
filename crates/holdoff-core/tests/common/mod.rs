//! Helpers shared by the integration tests: a scenario builder for one
//! generator feeding one host, and one for two linked hosts.
#![allow(dead_code)]

pub mod capture;

/// The `[[hosts]]` table of host `name` with `host_extra` lines, then the
/// `[[hosts.nics]]` table of its NIC `nic` up to the `chip` line (the
/// caller adds the NIC's other lines).
pub fn host_with_nic(
    name: &str,
    profile: &str,
    driver: &str,
    host_extra: &str,
    nic: &str,
    chip: &str,
) -> String {
    format!(
        "[[hosts]]\nname = \"{name}\"\nprofile = \"{profile}\"\ndriver = \"{driver}\"\n{host_extra}\n\
         [[hosts.nics]]\nname = \"{nic}\"\nchip = \"{chip}\"\n"
    )
}

/// One Poisson/constant generator -> one host NIC (82546 by default) -> UDP sink.
#[derive(Debug, Clone)]
pub struct OneHost {
    pub profile: &'static str,
    pub driver: &'static str,
    pub chip: &'static str,
    pub pattern: &'static str,
    pub rate_pps: f64,
    pub frame_bytes: u32,
    pub duration_ms: u64,
    pub seed: u64,
    /// The `[hosts.nics.moderation]` body; without a `kind` line it is static.
    pub moderation: String,
    pub rx_ring: u32,
    /// Extra lines of the host (e.g. a `[hosts.napi]` table).
    pub host_extra: &'static str,
    /// Extra lines of the generator (e.g. `stop_us`).
    pub generator_extra: &'static str,
    /// Extra lines of the NIC (e.g. `interrupt_mode`).
    pub nic_extra: &'static str,
}

impl Default for OneHost {
    fn default() -> Self {
        OneHost {
            profile: "ideal",
            driver: "napi",
            chip: "82546",
            pattern: "poisson",
            rate_pps: 20_000.0,
            frame_bytes: 64,
            duration_ms: 10_000,
            seed: 7,
            moderation: String::new(),
            rx_ring: 256,
            host_extra: "",
            generator_extra: "",
            nic_extra: "",
        }
    }
}

impl OneHost {
    pub fn toml(&self) -> String {
        format!(
            r#"
name = "one-host"
seed = {seed}
duration_ms = {dur}
sample_interval_us = 100000

{host}rx_ring = {ring}
{nic_extra}
[hosts.nics.moderation]
{moderation}

[[generators]]
name = "gen"
pattern = "{pattern}"
rate_pps = {rate}
frame_bytes = {bytes}
{generator_extra}

[[links]]
a = "gen"
b = "dut.eth0"
rate = "1G"

[[apps]]
kind = "udp_sink"
name = "sink"
host = "dut"
"#,
            seed = self.seed,
            dur = self.duration_ms,
            nic_extra = self.nic_extra,
            host = host_with_nic(
                "dut",
                self.profile,
                self.driver,
                self.host_extra,
                "eth0",
                self.chip
            ),
            ring = self.rx_ring,
            moderation = if self.moderation.contains("kind =") {
                self.moderation.clone()
            } else {
                format!("kind = \"static\"\n{}", self.moderation)
            },
            pattern = self.pattern,
            rate = self.rate_pps,
            bytes = self.frame_bytes,
            generator_extra = self.generator_extra,
        )
    }
}

/// Two hosts with one NIC `eth0` each, linked back to back at 1 Gb/s.
#[derive(Debug, Clone)]
pub struct TwoHosts<'a> {
    /// Top-level lines (`name`, `seed`, `duration_ms`, ...).
    pub head: &'a str,
    /// Host names.
    pub hosts: [&'a str; 2],
    pub profile: &'a str,
    pub chip: &'a str,
    /// Extra tables of each host (e.g. a `[hosts.napi]` section).
    pub host_extra: [&'a str; 2],
    /// Extra lines of each NIC (e.g. a `[hosts.nics.moderation]` section).
    pub nic_extra: &'a str,
    /// Extra lines of the second host's NIC, when they differ from `nic_extra`.
    pub nic_extra_b: Option<&'a str>,
    /// Extra lines of the link (e.g. `propagation_ns`).
    pub link_extra: &'a str,
    /// Appended: the applications.
    pub apps: &'a str,
}

impl Default for TwoHosts<'_> {
    fn default() -> Self {
        TwoHosts {
            head: "name = \"two-hosts\"",
            hosts: ["a", "b"],
            profile: "ideal",
            chip: "82546",
            host_extra: ["", ""],
            nic_extra: "",
            nic_extra_b: None,
            link_extra: "",
            apps: "",
        }
    }
}

impl TwoHosts<'_> {
    pub fn toml(&self) -> String {
        let mut t = format!("{}\n", self.head);
        let nics = [self.nic_extra, self.nic_extra_b.unwrap_or(self.nic_extra)];
        for ((name, extra), nic) in self.hosts.iter().zip(self.host_extra).zip(nics) {
            t += &format!(
                "[[hosts]]\nname = \"{name}\"\nprofile = \"{}\"\n{extra}\n[[hosts.nics]]\nname = \"eth0\"\nchip = \"{}\"\n{nic}\n",
                self.profile, self.chip
            );
        }
        t += &format!(
            "[[links]]\na = \"{}.eth0\"\nb = \"{}.eth0\"\n{}\n{}",
            self.hosts[0], self.hosts[1], self.link_extra, self.apps
        );
        t
    }
}

/// An iperf flow from host `a` to host `b` (an `[[apps]]` table).
pub const IPERF_A_TO_B: &str =
    "[[apps]]\nkind = \"iperf\"\nname = \"iperf\"\nhost = \"a\"\nto = \"b\"\n";

/// The report of an iperf bulk transfer a -> b between two ideal hosts for
/// 200 ms (seed 1): `host_extra` and `nic` as in `TwoHosts`.
pub fn bulk_iperf(name: &str, host_extra: [&str; 2], nic: &str) -> serde_json::Value {
    run(&TwoHosts {
        head: &format!("name = \"{name}\"\nseed = 1\nduration_ms = 200"),
        host_extra,
        nic_extra: nic,
        apps: IPERF_A_TO_B,
        ..TwoHosts::default()
    }
    .toml())
}

/// Run and parse the report.
pub fn run(toml: &str) -> serde_json::Value {
    let out = holdoff_core::api::run_toml(toml, None).expect("scenario runs");
    serde_json::from_str(&out.report_json).expect("report is JSON")
}

/// Run and return the report's `summary`.
pub fn summary(toml: &str) -> serde_json::Value {
    run(toml)["summary"].take()
}
