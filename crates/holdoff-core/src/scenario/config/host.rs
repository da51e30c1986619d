//! The `[[hosts]]` tables: a modelled machine (cost profile, clock, cores,
//! driver architecture and its NAPI/BSD parameters, TCP sysctls, forwarding)
//! and its NICs. Each type checks its own fields; errors name the full field
//! path (`hosts[0].nics[1].rx_ring`) and the allowed values. The NIC
//! tables are in `config::nic`.
//!
//! The NAPI and BSD parameter types belong to `host::driver`; their bounds
//! are checked here and added to their JSON Schema here (`napi_schema`,
//! `bsd_schema`) so the schema and the checks agree.
//!
//! Units are in the field names.

use super::{cfg_err, names_list, one, profile_file, range, two};
use crate::error::Error;
use crate::host::driver::{BsdConfig, DriverKind, NapiConfig};
use crate::host::drivers;
use crate::host::kernel::KernelDefaults;
use crate::host::profile::{self, HostProfile};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::OnceLock;

pub use super::nic::{IntModeCfg, LegacyItrCfg, NicCfg, DEFAULT_MTU_BYTES, TCP_IP_HEADER_BYTES};

/// Largest descriptor ring of any chip preset [descriptors].
pub const MAX_RING: u32 = 4096;
/// Most queue pairs of any chip preset [count].
pub const MAX_QUEUES: u32 = 16;
/// Most cores a host may have [count].
pub const MAX_CORES: u32 = 256;
/// Upper bound of the byte-size sysctls (buffers) [bytes]: 1 GiB.
pub const MAX_BUF_BYTES: u32 = 1 << 30;

/// A modelled machine.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostCfg {
    pub name: String,
    /// Cost profile: a preset (ideal, p4-xeon-2004, opteron-2006, apu2,
    /// xeon-modern) or the path of a profile file ending in `.toml` (a preset
    /// with costs replaced, as `holdoff calibrate` writes it), relative to
    /// the scenario file's directory (docs/models/host-profiles.md).
    #[schemars(schema_with = "profile_schema")]
    pub profile: String,
    /// The profile `profile` names, once validation has read it (a preset,
    /// or a profile file loaded against the scenario's directory).
    #[serde(skip)]
    #[schemars(skip)]
    resolved_profile: OnceLock<&'static HostProfile>,
    /// Core clock the host runs at [MHz] (a P-state, e.g. OpenBSD
    /// hw.setperf=0); CPU-bound costs of the profile scale with it. Default:
    /// the profile's nominal clock.
    #[serde(default)]
    #[schemars(range(min = 100, max = 10_000))]
    pub cpu_mhz: Option<u32>,
    /// Costs of the profile replaced, by field name: any cost of a host
    /// profile [ns, or ps per byte for copy_ps_per_byte, at the profile's
    /// nominal clock; `cpu_mhz` scales them as it scales the profile],
    /// applied after a profile file's own costs. For calibration and what-if
    /// runs; the bundled reproduction cases use the presets as they are.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "overrides_schema")]
    pub profile_overrides: BTreeMap<String, u64>,
    /// The kernel's timer tick rate, Linux `CONFIG_HZ` [1/s]: 100, 250, 300
    /// or 1000 (kernel/Kconfig.hz). It clocks the jiffies that Linux ixgbe's
    /// adaptive moderation gates on. Default: the profile kernel's (250 for
    /// a modern Linux host, the Kconfig default; 1000 for Linux 2.6.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "hz_schema")]
    pub hz: Option<u32>,
    /// CPU cores [count].
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 256))]
    pub cores: u32,
    #[serde(default)]
    pub driver: DriverKind,
    #[serde(default)]
    #[schemars(schema_with = "napi_schema")]
    pub napi: NapiConfig,
    /// BSD driver parameters (rx_process_limit, polling clock and burst).
    #[serde(default)]
    #[schemars(schema_with = "bsd_schema")]
    pub bsd: BsdConfig,
    /// IP forwarding: packets received on `from` are sent out of `to`.
    #[serde(default)]
    pub forward: Vec<ForwardRule>,
    /// TCP sysctls of this host (Linux 2.6.6 defaults).
    #[serde(default)]
    pub tcp: TcpSysctls,
    /// Interface queue (qdisc) length in front of each TX ring [packets] (Linux txqueuelen).
    #[serde(default = "default_txqueuelen")]
    #[schemars(range(min = 0, max = 100_000))]
    pub txqueuelen: u32,
    /// Work on the host beside networking (a per-packet hook).
    #[serde(default, skip_serializing_if = "HostLoadCfg::is_none")]
    pub load: HostLoadCfg,
    /// Service-time variance: `profile` (default) uses the profile's
    /// (`host::variance`, docs/models/host-profiles.md); `none` makes every
    /// cost constant, with no timer tick and no wake-up latency.
    #[serde(default, skip_serializing_if = "VarianceUse::is_profile")]
    pub variance: VarianceUse,
    pub nics: Vec<NicCfg>,
}

/// Whether a host runs with its profile's service-time variance.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum VarianceUse {
    /// The profile's variance.
    #[default]
    Profile,
    /// None: every cost constant.
    None,
}

impl VarianceUse {
    pub fn is_profile(&self) -> bool {
        *self == VarianceUse::Profile
    }
}

/// Load on a host beside its networking.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HostLoadCfg {
    /// CPU time of a per-packet hook on every packet the stack receives or
    /// sends (a pfil consumer: siftr, a packet filter) [ns at the profile's
    /// nominal clock; `cpu_mhz` scales it]. A forwarded packet passes two
    /// hooks. 0: none.
    #[serde(default)]
    #[schemars(range(min = 0, max = 1_000_000))]
    pub packet_hook_ns: u64,
    /// CPU-bound processes at application priority, one entry per process:
    /// the core it is pinned to (repeat a core for several). They take the
    /// core's idle time and, by a fair share after Linux CFS, their part of
    /// it from a CPU-bound application; a sleeping application that wakes
    /// preempts them (docs/models/host-load.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_hogs: Vec<u32>,
}

impl HostLoadCfg {
    /// No load configured (the field is then left out of a written scenario).
    pub fn is_none(&self) -> bool {
        *self == HostLoadCfg::default()
    }
}

/// One forwarding rule (NIC names of this host).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ForwardRule {
    pub from: String,
    pub to: String,
}

fn default_txqueuelen() -> u32 {
    1000
}

/// TCP settings of a host. Defaults: Linux 2.6.6 (`net/ipv4/tcp.c`
/// `sysctl_tcp_rmem`/`sysctl_tcp_wmem`, `net/ipv4/tcp_input.c`), the kernel
/// of the linux-kernel post "abysmal e1000 performance (DITR)", 25 May 2004.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpSysctls {
    /// Socket receive buffer, tcp_rmem[1] [bytes] (fixed: no receive
    /// autotuning in 2.6.6); at least 2 x mss_bytes, at most 1 GiB.
    #[serde(default = "d_rmem")]
    #[schemars(range(min = 1072, max = 1_073_741_824))]
    pub rmem_default: u32,
    /// Initial send buffer, tcp_wmem[1] [bytes]; at least mss_bytes.
    #[serde(default = "d_wmem")]
    #[schemars(range(min = 536, max = 1_073_741_824))]
    pub wmem_default: u32,
    /// Largest send buffer, tcp_wmem[2] [bytes]; at least wmem_default.
    /// Default: the host kernel's (4194304 on a modern Linux host; 131072,
    /// Linux 2.6.6's, otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 536, max = 1_073_741_824))]
    pub wmem_max: Option<u32>,
    /// tcp_adv_win_scale (1 to 8).
    #[serde(default = "two")]
    #[schemars(range(min = 1, max = 8))]
    pub adv_win_scale: u32,
    /// Delayed-ACK timeout [us] (TCP_DELACK_MIN = 40 ms); at most 1 s (Linux
    /// TCP_DELACK_MAX is 200 ms).
    #[serde(default = "d_delack")]
    #[schemars(range(min = 0, max = 1_000_000))]
    pub delack_us: u64,
    /// Minimum retransmission timeout [ms] (TCP_RTO_MIN = 200 ms); 1 to
    /// 120000 (TCP_RTO_MAX = 120 s).
    #[serde(default = "d_rto_min")]
    #[schemars(range(min = 1, max = 120_000))]
    pub rto_min_ms: u64,
    /// Maximum segment size [bytes] (1500 MTU with timestamps: 1448), 536 to 8960.
    #[serde(default = "d_mss")]
    #[schemars(range(min = 536, max = 8960))]
    pub mss_bytes: u32,
    /// Receive memory charged per received segment, the Linux skb truesize
    /// [bytes]. Default 2336: Linux 2.6.6 with e1000 2048-byte receive
    /// buffers on a P4 kernel; it switches on the Linux 2.6 receive-window
    /// rules (rcv_ssthresh growth, window clamp, initial window of 4 MSS).
    /// 0: payload accounting and the whole window from the start (stacks
    /// without those rules, e.g. FreeBSD and OpenBSD with autotuned buffers).
    /// Otherwise mss_bytes to rmem_default / 2.
    #[serde(default = "d_truesize")]
    #[schemars(range(min = 0, max = 536_870_912))]
    pub skb_truesize_bytes: u32,
    /// TCP Small Queues, `tcp_limit_output_bytes` [bytes]: the most a
    /// socket may have queued below TCP (qdisc and TX ring, counted by
    /// buffer truesize) before it waits for TX completions. 0: off. Default:
    /// the host kernel's (1048576 on a modern Linux host, profile
    /// xeon-modern with a Linux driver; 0 otherwise). At most 1 GiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1_073_741_824))]
    pub limit_output_bytes: Option<u32>,
    /// Receive-buffer autotuning, `tcp_moderate_rcvbuf`: the receiver grows
    /// its buffer (and window) from the bytes read per round trip, up to
    /// rmem_max. Default: the host kernel's (on for a modern Linux host;
    /// off otherwise: Linux 2.6.6 and the BSD models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moderate_rcvbuf: Option<bool>,
    /// Largest receive buffer autotuning may reach, tcp_rmem[2] [bytes];
    /// from rmem_default to 1 GiB. Default: the host kernel's (6291456 on a
    /// modern Linux host), at least rmem_default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1072, max = 1_073_741_824))]
    pub rmem_max: Option<u32>,
    /// Linux 2.6.6 sender rules: cwnd grows only while cwnd-limited, RFC
    /// 2861 cwnd validation and restart after idle, the send buffer charged
    /// by buffer truesize and grown only after the writer blocked
    /// (SOCK_NOSPACE). Default: the host kernel's (on for the 2004 profile
    /// under a Linux driver with the 2.6 receive accounting,
    /// skb_truesize_bytes > 0; off otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linux26_sender: Option<bool>,
    /// Linux 2.6.6 prequeue ACK rule: in-order data that reaches a reader
    /// blocked in recv() is copied to it and acknowledged once per read
    /// (cleanup_rbuf) instead of once per two segments. Default: the host
    /// kernel's (on for the 2004 profile under a Linux driver with the 2.6
    /// receive accounting, skb_truesize_bytes > 0; off otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linux26_prequeue: Option<bool>,
    /// Linux 2.6.6 read timing: the segments a read sends (the prequeue
    /// rule's ACK, a window update) leave after the read has copied its
    /// data to the application (tcp_recvmsg copies, then cleanup_rbuf
    /// sends). Default: the host kernel's (on for the 2004 profile under a
    /// Linux driver with the 2.6 receive accounting, skb_truesize_bytes >
    /// 0; off otherwise: they leave at the start of the read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linux26_ack_after_copy: Option<bool>,
}

fn d_rmem() -> u32 {
    87_380
}
fn d_wmem() -> u32 {
    16_384
}
/// Linux 2.6.6 `sysctl_tcp_wmem[2]` [bytes], the send buffer's ceiling of
/// every kernel that sets none (`KernelDefaults::tcp_wmem_max` 0).
pub const LINUX26_WMEM_MAX: u32 = 131_072;
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
            wmem_max: None,
            adv_win_scale: 2,
            delack_us: d_delack(),
            rto_min_ms: d_rto_min(),
            mss_bytes: d_mss(),
            skb_truesize_bytes: d_truesize(),
            limit_output_bytes: None,
            moderate_rcvbuf: None,
            rmem_max: None,
            linux26_sender: None,
            linux26_prequeue: None,
            linux26_ack_after_copy: None,
        }
    }
}

fn profile_schema(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = profile::presets().iter().map(|p| p.name).collect();
    schemars::json_schema!({
        "type": "string",
        "oneOf": [
            { "enum": names },
            {
                "pattern": "\\.toml$",
                "description": "A profile file (relative to the scenario file's directory)"
            }
        ]
    })
}

fn overrides_schema(_: &mut SchemaGenerator) -> Schema {
    let props: serde_json::Map<String, serde_json::Value> = profile::OVERRIDABLE
        .iter()
        .map(|k| {
            (
                k.to_string(),
                serde_json::json!({
                    "type": "integer",
                    "format": "uint64",
                    "minimum": 0,
                    "maximum": profile::MAX_COST
                }),
            )
        })
        .collect();
    schemars::json_schema!({
        "type": "object",
        "properties": props,
        "additionalProperties": false
    })
}

/// Bounds of the NAPI parameters: (field, min, max). Linux: weight is a
/// per-poll packet count (`netif_napi_add_weight` warns above 64 but
/// accepts more); `netdev_budget` and `netdev_budget_usecs` are positive;
/// `napi_defer_hard_irqs` is capped at S32_MAX; the timeouts are bounded at
/// 10 s (`irq_suspend_timeout` and `gro_flush_timeout` are ns counts; longer
/// would only disable them).
pub const NAPI_BOUNDS: [(&str, u64, u64); 7] = [
    ("weight", 1, 65_535),
    ("budget", 1, 1_000_000),
    ("budget_usecs", 1, 1_000_000),
    ("defer_hard_irqs", 0, 2_147_483_647),
    ("gro_flush_timeout_ns", 0, 10_000_000_000),
    ("netdev_max_backlog", 0, 1_000_000),
    ("irq_suspend_timeout_ns", 0, 10_000_000_000),
];

/// Bounds of the BSD parameters: (field, min, max). `rx_process_limit`: -1
/// (unlimited) or 1 to 1000000 (0 is refused). `poll_hz`: 1 to 100000 ticks
/// per second; FreeBSD polls at kern.hz (100 to 1000 in practice, DragonFly
/// caps its polling frequency at 30000), and 100000 keeps the tick rate at
/// the highest interrupt rate any modelled throttle allows (one per 10 us),
/// so a polling host never costs more events than an interrupting one.
/// `poll_burst`: kern.polling.burst_max, 10 to 20000 (FreeBSD kern_poll.c
/// `MIN_POLL_BURST_MAX`, `MAX_POLL_BURST_MAX`).
/// `ip_intr_queue_maxlen`: 1 to 100000 packets.
pub const BSD_BOUNDS: [(&str, i64, i64); 4] = [
    ("rx_process_limit", -1, 1_000_000),
    ("poll_hz", 1, 100_000),
    ("poll_burst", 10, 20_000),
    ("ip_intr_queue_maxlen", 1, 100_000),
];

/// `T`'s schema with `minimum`/`maximum` added to the named properties.
fn with_bounds<T: JsonSchema>(
    gen: &mut SchemaGenerator,
    bounds: impl IntoIterator<Item = (&'static str, serde_json::Value, serde_json::Value)>,
) -> Schema {
    let mut s = T::json_schema(gen);
    if let Some(props) = s
        .as_object_mut()
        .and_then(|o| o.get_mut("properties"))
        .and_then(|p| p.as_object_mut())
    {
        for (field, lo, hi) in bounds {
            if let Some(p) = props.get_mut(field).and_then(|p| p.as_object_mut()) {
                p.insert("minimum".into(), lo);
                p.insert("maximum".into(), hi);
            }
        }
    }
    s
}

/// `CONFIG_HZ` choices of kernel/Kconfig.hz.
pub const HZ_CHOICES: [u32; 4] = [100, 250, 300, 1000];

fn hz_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": "integer", "format": "uint32", "enum": HZ_CHOICES })
}

fn napi_schema(gen: &mut SchemaGenerator) -> Schema {
    with_bounds::<NapiConfig>(
        gen,
        NAPI_BOUNDS
            .iter()
            .map(|(f, lo, hi)| (*f, (*lo).into(), (*hi).into())),
    )
}

fn bsd_schema(gen: &mut SchemaGenerator) -> Schema {
    with_bounds::<BsdConfig>(
        gen,
        BSD_BOUNDS
            .iter()
            .map(|(f, lo, hi)| (*f, (*lo).into(), (*hi).into())),
    )
}

fn check_napi(n: &NapiConfig, path: &str) -> Result<(), Error> {
    let values = [
        n.weight as u64,
        n.budget as u64,
        n.budget_usecs as u64,
        n.defer_hard_irqs as u64,
        n.gro_flush_timeout_ns,
        n.netdev_max_backlog as u64,
        n.irq_suspend_timeout_ns,
    ];
    for ((field, lo, hi), v) in NAPI_BOUNDS.iter().zip(values) {
        let note = match *field {
            "weight" | "budget" | "budget_usecs" => " (Linux: 64, 300, 2000)",
            "irq_suspend_timeout_ns" | "gro_flush_timeout_ns" => " (0 = off; 10 s)",
            _ => "",
        };
        range(format!("{path}.{field}"), v, *lo, *hi, note)?;
    }
    Ok(())
}

fn check_bsd(b: &BsdConfig, path: &str) -> Result<(), Error> {
    let values = [
        b.rx_process_limit as i64,
        b.poll_hz as i64,
        b.poll_burst as i64,
        b.ip_intr_queue_maxlen as i64,
    ];
    for ((field, lo, hi), v) in BSD_BOUNDS.iter().zip(values) {
        range(format!("{path}.{field}"), v, *lo, *hi, "")?;
    }
    if b.rx_process_limit == 0 {
        return Err(cfg_err(
            format!("{path}.rx_process_limit"),
            "got 0; allowed: -1 (unlimited) or 1 to 1000000",
        ));
    }
    Ok(())
}

impl TcpSysctls {
    fn validate(&self, path: &str) -> Result<(), Error> {
        let f = |x: &str| format!("{path}.{x}");
        range(f("mss_bytes"), self.mss_bytes, 536, 8960, "")?;
        range(
            f("rmem_default"),
            self.rmem_default,
            1072,
            MAX_BUF_BYTES,
            "",
        )?;
        range(f("wmem_default"), self.wmem_default, 536, MAX_BUF_BYTES, "")?;
        if let Some(v) = self.wmem_max {
            range(f("wmem_max"), v, 536, MAX_BUF_BYTES, "")?;
        }
        if self.rmem_default < 2 * self.mss_bytes
            || self.wmem_default < self.mss_bytes
            || self.wmem_max.is_some_and(|v| v < self.wmem_default)
        {
            return Err(cfg_err(
                path,
                "need rmem_default >= 2 x mss_bytes, wmem_default >= mss_bytes and wmem_max >= wmem_default",
            ));
        }
        if self.skb_truesize_bytes != 0
            && !(self.mss_bytes..=self.rmem_default / 2).contains(&self.skb_truesize_bytes)
        {
            return Err(cfg_err(
                f("skb_truesize_bytes"),
                format!(
                    "got {}; allowed: 0 (payload accounting) or mss_bytes ({}) to rmem_default/2 ({})",
                    self.skb_truesize_bytes,
                    self.mss_bytes,
                    self.rmem_default / 2
                ),
            ));
        }
        range(f("adv_win_scale"), self.adv_win_scale, 1, 8, "")?;
        if let Some(v) = self.limit_output_bytes {
            range(f("limit_output_bytes"), v, 0, MAX_BUF_BYTES, " (0 = off)")?;
        }
        if let Some(v) = self.rmem_max {
            range(f("rmem_max"), v, 1072, MAX_BUF_BYTES, "")?;
            if v < self.rmem_default {
                return Err(cfg_err(
                    f("rmem_max"),
                    format!(
                        "got {v}; allowed: rmem_default ({}) to 1073741824",
                        self.rmem_default
                    ),
                ));
            }
        }
        range(f("delack_us"), self.delack_us, 0, 1_000_000, " (1 s)")?;
        range(
            f("rto_min_ms"),
            self.rto_min_ms,
            1,
            120_000,
            " (TCP_RTO_MAX 120 s)",
        )?;
        Ok(())
    }
}

impl HostCfg {
    /// The kernel features this host has unless the scenario sets them:
    /// its profile's, under a Linux driver architecture; none under a BSD
    /// one (`host::kernel`). The host must be validated.
    pub fn kernel_defaults(&self) -> KernelDefaults {
        let prof = self.base_profile();
        if drivers::arch(self.driver).linux() {
            prof.kernel
        } else {
            KernelDefaults::NONE
        }
    }

    /// TCP Small Queues limit in effect [bytes] (0: off).
    pub fn tsq_limit_bytes(&self) -> u32 {
        self.tcp
            .limit_output_bytes
            .unwrap_or(self.kernel_defaults().tcp_limit_output_bytes)
    }

    /// Receive-buffer autotuning in effect.
    pub fn moderate_rcvbuf(&self) -> bool {
        self.tcp
            .moderate_rcvbuf
            .unwrap_or(self.kernel_defaults().moderate_rcvbuf)
    }

    /// Linux 2.6.6 sender rules in effect: the kernel's, and only with the
    /// 2.6 receive accounting (a host given `skb_truesize_bytes = 0` is
    /// declared a stack without the 2.6 rules, `stack::tcp::linux26`).
    pub fn linux26_sender(&self) -> bool {
        self.tcp
            .linux26_sender
            .unwrap_or(self.kernel_defaults().tcp_linux26_sender && self.tcp.skb_truesize_bytes > 0)
    }

    /// Linux 2.6.6 prequeue ACK rule in effect: the kernel's, and only with
    /// the 2.6 receive accounting (as `linux26_sender`).
    pub fn linux26_prequeue(&self) -> bool {
        self.tcp.linux26_prequeue.unwrap_or(
            self.kernel_defaults().tcp_linux26_prequeue && self.tcp.skb_truesize_bytes > 0,
        )
    }

    /// Linux 2.6.6 read timing in effect (ACK after the copy): the
    /// kernel's, and only with the 2.6 receive accounting (as
    /// `linux26_prequeue`).
    pub fn linux26_ack_after_copy(&self) -> bool {
        self.tcp.linux26_ack_after_copy.unwrap_or(
            self.kernel_defaults().tcp_linux26_ack_after_copy && self.tcp.skb_truesize_bytes > 0,
        )
    }

    /// tcp_wmem[2] in effect [bytes]: the host kernel's unless given, never
    /// below wmem_default.
    pub fn wmem_max(&self) -> u32 {
        let kernel = match self.kernel_defaults().tcp_wmem_max {
            0 => LINUX26_WMEM_MAX,
            v => v,
        };
        self.tcp
            .wmem_max
            .unwrap_or(kernel)
            .max(self.tcp.wmem_default)
    }

    /// tcp_rmem[2] in effect [bytes]: never below rmem_default.
    pub fn rmem_max(&self) -> u32 {
        self.tcp
            .rmem_max
            .unwrap_or(self.kernel_defaults().tcp_rmem_max)
            .max(self.tcp.rmem_default)
    }

    /// The timer tick rate in effect (Linux `HZ`) [1/s].
    pub fn hz(&self) -> u32 {
        self.hz.unwrap_or(self.base_profile().kernel.hz)
    }

    /// Byte queue limits on `nic`'s TX ring in effect.
    pub fn bql(&self, nic: &NicCfg) -> bool {
        nic.bql.unwrap_or(self.kernel_defaults().bql)
    }

    /// The profile `profile` names, before `profile_overrides`, `load` and
    /// `cpu_mhz` apply: a preset or the profile file's. The host must be
    /// validated (a file is read then).
    pub fn base_profile(&self) -> &'static HostProfile {
        match self.resolved_profile.get() {
            Some(p) => p,
            None => profile::by_name(&self.profile).expect("validated profile"),
        }
    }

    /// Find the profile `profile` names: a preset, or a profile file read
    /// relative to `base` (the scenario file's directory); `path` is
    /// `hosts[i]`.
    pub fn resolve_profile(&self, path: &str, base: Option<&Path>) -> Result<(), Error> {
        let field = format!("{path}.profile");
        let p = if profile_file::is_file(&self.profile) {
            profile_file::load(&self.profile, base, &field)?
        } else if let Some(p) = profile::by_name(&self.profile) {
            p
        } else {
            let profiles: Vec<&str> = profile::presets().iter().map(|p| p.name).collect();
            return Err(cfg_err(
                field,
                format!(
                    "got {:?}; allowed: {}, or the path of a profile file ending in .toml",
                    self.profile,
                    names_list(&profiles)
                ),
            ));
        };
        // A validated scenario is not revalidated against another directory,
        // so a value set once stays right.
        let _ = self.resolved_profile.set(p);
        Ok(())
    }

    /// Check this host's own fields and its NICs; `path` is `hosts[i]`,
    /// `base` the scenario file's directory (profile files are read from it).
    pub fn validate(&self, path: &str, base: Option<&Path>) -> Result<(), Error> {
        let f = |x: &str| format!("{path}.{x}");
        self.resolve_profile(path, base)?;
        if let Some(mhz) = self.cpu_mhz {
            range(f("cpu_mhz"), mhz, 100, 10_000, "")?;
        }
        for (k, &v) in &self.profile_overrides {
            if !profile::OVERRIDABLE.contains(&k.as_str()) {
                return Err(cfg_err(
                    f("profile_overrides"),
                    format!(
                        "unknown cost {k:?}; allowed: {}",
                        profile::OVERRIDABLE.join(", ")
                    ),
                ));
            }
            range(
                f(&format!("profile_overrides.{k}")),
                v,
                0,
                profile::MAX_COST,
                "",
            )?;
        }
        range(f("cores"), self.cores, 1, MAX_CORES, "")?;
        range(
            f("load.packet_hook_ns"),
            self.load.packet_hook_ns,
            0,
            1_000_000,
            " ns",
        )?;
        if self.load.cpu_hogs.len() > 1024 {
            return Err(cfg_err(
                f("load.cpu_hogs"),
                format!("got {} processes; at most 1024", self.load.cpu_hogs.len()),
            ));
        }
        for (i, &c) in self.load.cpu_hogs.iter().enumerate() {
            if c >= self.cores {
                return Err(cfg_err(
                    f(&format!("load.cpu_hogs[{i}]")),
                    format!(
                        "core {c} does not exist: the host has {} cores (0 to {})",
                        self.cores,
                        self.cores - 1
                    ),
                ));
            }
        }
        check_napi(&self.napi, &f("napi"))?;
        if let Some(hz) = self.hz {
            if !HZ_CHOICES.contains(&hz) {
                return Err(cfg_err(
                    f("hz"),
                    format!("got {hz}; allowed: 100, 250, 300, 1000 (the CONFIG_HZ choices)"),
                ));
            }
        }
        // Without an application that busy-polls with prefer_busy_poll
        // irq_suspend_timeout is accepted and does nothing, as in Linux (a
        // sweep may turn busy polling on and off under one host setup).
        if self.bsd.rx_locked && !drivers::arch(self.driver).rx_lock_option() {
            return Err(cfg_err(
                f("bsd.rx_locked"),
                format!(
                    "applies to driver \"freebsd-taskqueue\" only (got {:?}); remove it or set that driver",
                    self.driver.as_str()
                ),
            ));
        }
        if self.napi.irq_suspend_timeout_ns > 0 && !drivers::arch(self.driver).napi() {
            return Err(cfg_err(
                f("napi.irq_suspend_timeout_ns"),
                format!(
                    "IRQ suspension is a NAPI feature; driver is {:?}: set driver = \"napi\" or irq_suspend_timeout_ns = 0",
                    self.driver.as_str()
                ),
            ));
        }
        if self.nics.is_empty() {
            return Err(cfg_err(f("nics"), "a host needs at least one NIC"));
        }
        self.tcp.validate(&f("tcp"))?;
        // TSQ and BQL live in the Linux softirq and driver paths.
        if !drivers::arch(self.driver).linux() {
            let why = |what: &str| {
                format!(
                    "{what} is a Linux feature; driver is {:?}: set driver = \"napi\" or \"linux-isr\", or turn it off",
                    self.driver.as_str()
                )
            };
            if self.tcp.limit_output_bytes.is_some_and(|v| v > 0) {
                return Err(cfg_err(
                    f("tcp.limit_output_bytes"),
                    why("TCP Small Queues"),
                ));
            }
            if let Some(ni) = self.nics.iter().position(|n| n.bql == Some(true)) {
                return Err(cfg_err(f(&format!("nics[{ni}].bql")), why("BQL")));
            }
        }
        for (fi, r) in self.forward.iter().enumerate() {
            for (side, nic) in [("from", &r.from), ("to", &r.to)] {
                if !self.nics.iter().any(|n| &n.name == nic) {
                    return Err(cfg_err(
                        f(&format!("forward[{fi}].{side}")),
                        format!(
                            "got {nic:?}; allowed: a NIC of this host: {}",
                            self.nics
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
        check_bsd(&self.bsd, &f("bsd"))?;
        range(f("txqueuelen"), self.txqueuelen, 0, 100_000, "")?;
        let mut nic_names = BTreeSet::new();
        for (ni, nic) in self.nics.iter().enumerate() {
            let np = format!("{path}.nics[{ni}]");
            if !nic_names.insert(nic.name.clone()) || nic.name.contains('.') || nic.name.is_empty()
            {
                return Err(cfg_err(
                    format!("{np}.name"),
                    format!(
                        "got {:?}; NIC names must be unique on a host, non-empty, without '.'",
                        nic.name
                    ),
                ));
            }
            nic.validate(&np, self.cores)?;
            let arch = drivers::arch(self.driver);
            if !arch.msix() && nic.msix_mode() {
                let what = if nic.interrupt_mode.is_some() {
                    "got \"msix\""
                } else {
                    "MSI-X (the chip's default)"
                };
                return Err(cfg_err(
                    format!("{np}.interrupt_mode"),
                    format!(
                        "{what} with driver {:?}: {}",
                        self.driver.as_str(),
                        arch.msix_refusal()
                    ),
                ));
            }
        }
        Ok(())
    }
}
