//! The `[[hosts.nics]]` tables: a NIC port of a modelled host (chip, rings,
//! queues, interrupt mode, MTU, BQL and its moderation). It checks its own
//! fields against the chip preset; errors name the full field path
//! (`hosts[0].nics[1].rx_ring`) and the allowed values.
//!
//! Units are in the field names: `_bytes`, ring sizes [descriptors].

use super::moderation::ModerationCfg;
use super::{cfg_err, names_list, one, range, string_enum, two, yes};
use crate::error::Error;
use crate::nic::chip::{self, ChipProfile, LegacyItr};
use crate::nic::rss;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

/// Interrupt delivery mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IntModeCfg {
    Intx,
    Msi,
    Msix,
}

/// What an EITR-class chip does with a legacy ITR (0x000C4) write in
/// INTx/MSI mode (see `nic::chip::LegacyItr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LegacyItrCfg {
    /// The write sets EITR[0] (the i210/i211/i350/82576 default).
    Honoured,
    /// The write is dropped: EITR[0] stays 0, no throttle.
    Ignored,
}

/// One NIC port on a host.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NicCfg {
    pub name: String,
    /// Chip preset: 82540, 82546, 82574, 82576, i350, i210, i211 (1 GbE);
    /// 82599, x540, x550 (10 GbE, Linux ixgbe); x710 (10 GbE), xl710 (40
    /// GbE, Linux i40e); e810-xxv (25 GbE), e810-c (100 GbE, Linux ice).
    #[schemars(schema_with = "chip_schema")]
    pub chip: String,
    /// Interrupt mode; default: msix for chips with MSI-X, intx otherwise.
    /// The drivers linux-isr and openbsd-intr have no MSI-X handler: give
    /// their MSI-X chips msi or intx.
    #[serde(default)]
    pub interrupt_mode: Option<IntModeCfg>,
    /// RX descriptors [count]: a multiple of 8 from the chip's minimum (8;
    /// 64 on the 10 GbE and faster chips) to its maximum (4096; 8160 on the
    /// x710, xl710 and e810). Default: the driver's (256; 512 on the ixgbe
    /// and i40e chips; 2048 on the e810). The schema's range is the
    /// 4096 most chips share; the x710, xl710 and e810 take up to 8160.
    #[serde(default, rename = "rx_ring", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 8, max = 4096), extend("multipleOf" = 8))]
    pub rx_ring_set: Option<u32>,
    /// TX descriptors [count]: as `rx_ring`.
    #[serde(default, rename = "tx_ring", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 8, max = 4096), extend("multipleOf" = 8))]
    pub tx_ring_set: Option<u32>,
    /// RX/TX queue pairs [count], 1 to the chip's maximum; > 1 requires MSI-X.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 64))]
    pub queues: u32,
    /// Whether the driver sets IDE on TX descriptors (TIDV/TADV apply only then).
    #[serde(default = "yes")]
    pub set_ide: bool,
    /// RXDMT0 threshold as a fraction of the ring: 2 (1/2), 4 (1/4) or 8 (1/8).
    #[serde(default = "two")]
    #[schemars(schema_with = "rdmts_schema")]
    pub rdmts_divisor: u32,
    /// INTx only: ports with the same line number on a host share one line (0 to 255).
    #[serde(default)]
    #[schemars(range(min = 0, max = 255))]
    pub irq_line: Option<u32>,
    /// Core that takes this port's interrupts (MSI-X: the first vector's;
    /// others follow round robin); below the host's `cores`.
    #[serde(default)]
    #[schemars(range(min = 0, max = 255))]
    pub irq_core: u32,
    /// EITR-class chips (82576, i350, i210, i211) only: what a write to the
    /// legacy ITR register (0x000C4, given as `itr_256ns`) does in INTx/MSI
    /// mode: "honoured" (sets EITR[0]) or "ignored" (dropped, no throttle).
    /// The datasheet does not settle it; default: the chip's ("honoured").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_itr: Option<LegacyItrCfg>,
    /// EITR-class chips (82576, i350, i210, i211) only: whether the
    /// driver's EITR writes carry CNT_IGNR (bit 31), as Linux igb and
    /// FreeBSD igb write them on these chips: a write leaves the running
    /// countdown alone and the new interval times the next one. false: a
    /// write zeroes the counter and held causes assert at once (I210
    /// datasheet 8.8.14; a driver that writes without the bit). Default true.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub eitr_cnt_ignr: bool,
    /// Interface MTU [bytes], 68 to 9216 (OpenBSD em's hardmtu; Linux
    /// e1000/igb go higher); default 1500. The MAC drops received frames
    /// longer than MTU + 18 (`frame_over_mtu`), and TCP on this port uses
    /// at most MTU - 52 bytes of payload per segment (IPv4 20, TCP 20,
    /// timestamps 12), whatever `tcp.mss_bytes` asks.
    #[serde(default = "default_mtu")]
    #[schemars(range(min = 68, max = 9216))]
    pub mtu_bytes: u32,
    /// TCP segmentation offload (`ethtool -K eth0 tso on`; FreeBSD
    /// `ifconfig em0 tso`, on em after `hw.em.unsupported_tso=1`): the stack
    /// hands the driver up to 64 KiB of consecutive TCP payload as one send,
    /// the NIC cuts the MSS frames and raises one TX completion for the send.
    /// Default off (the 2004 and 2006 cases ran without it).
    #[serde(default, skip_serializing_if = "is_false")]
    pub tso: bool,
    /// Generic receive offload (`ethtool -K eth0 gro on`): in one RX clean
    /// pass, consecutive in-order TCP frames of one connection (up to 17
    /// frames, 64 KiB) go up the stack as one receive: the driver's share
    /// (`rx_driver_ns`) per frame, the rest of `rx_packet_ns` and the TCP
    /// processing (one ACK decision) once. Default off (the 2004 and 2006
    /// cases ran without it).
    #[serde(default, skip_serializing_if = "is_false")]
    pub gro: bool,
    /// Byte queue limits on this NIC's TX ring (Linux BQL,
    /// `lib/dynamic_queue_limits.c`): the driver stops the queue while the
    /// bytes posted and not yet completed exceed a limit that adapts to the
    /// completions. Default: the host kernel's (on for a modern Linux host,
    /// whose e1000, e1000e and igb drivers all implement it; off otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bql: Option<bool>,
    /// The hardware RSS model (`docs/models/rss.md`): frames pick their
    /// queue by the Toeplitz hash of their headers through the chip's
    /// redirection table. Default: on when any `rss_*` or
    /// `rx_flow_hash_udp4` field is given; otherwise off (on every chip,
    /// though the drivers program RSS on every multi-queue port), and the
    /// queue of a frame is its flow index modulo `queues`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss: Option<bool>,
    /// RSS key: 40 bytes in hex, ':' separators optional (`ethtool -X ethX
    /// hkey ...`). Default: the Microsoft RSS specification's verification
    /// key 6d:5a:56:da:... (Linux draws a random one at boot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_key: Option<String>,
    /// Fields hashed for UDP over IP (`ethtool -N ethX rx-flow-hash udp4
    /// ...`): "sd" (addresses, the ixgbe default) or "sdfn" (addresses and
    /// ports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_flow_hash_udp4: Option<String>,
    /// Redirection-table weights, one per queue from queue 0 (`ethtool -X
    /// ethX weight w0 w1 ...`); missing queues get 0. Default: equal
    /// spreading (entry j -> queue j mod queues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_weights: Option<Vec<u32>>,
    /// MSI-X: the core of each queue vector, in vector order
    /// (`/proc/irq/N/smp_affinity_list`, one core per vector); default:
    /// `irq_core` for vector 0 and the next cores round robin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq_cores: Option<Vec<u32>>,
    #[serde(default)]
    pub moderation: ModerationCfg,
}

/// What a NIC's RSS settings resolve to (`NicCfg::rss_settings`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RssSettings {
    pub key: [u8; rss::KEY_BYTES],
    pub udp_ports: bool,
    pub fill: rss::RetaFill,
}

/// Ethernet MTU [bytes].
pub const DEFAULT_MTU_BYTES: u32 = 1500;
/// IPv4 + TCP headers and the timestamp option: MTU - payload per segment [bytes].
pub const TCP_IP_HEADER_BYTES: u32 = 52;

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_true(b: &bool) -> bool {
    *b
}

fn default_mtu() -> u32 {
    DEFAULT_MTU_BYTES
}

fn chip_schema(_: &mut SchemaGenerator) -> Schema {
    string_enum(chip::presets().iter().map(|c| c.name).collect())
}

fn rdmts_schema(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": "integer", "format": "uint32", "enum": [2, 4, 8] })
}

impl NicCfg {
    /// The chip preset (validated).
    pub fn chip(&self) -> Option<&'static ChipProfile> {
        chip::by_name(&self.chip)
    }

    /// Whether the RSS model runs on this port.
    pub fn rss_on(&self) -> bool {
        self.rss.unwrap_or(
            self.rss_key.is_some()
                || self.rx_flow_hash_udp4.is_some()
                || self.rss_weights.is_some(),
        )
    }

    /// The RSS key, hashed fields and table fill, when RSS is on (the
    /// fields validated).
    pub fn rss_settings(&self) -> Option<RssSettings> {
        if !self.rss_on() {
            return None;
        }
        Some(RssSettings {
            key: match &self.rss_key {
                Some(k) => rss::parse_key(k).ok()?,
                None => rss::MS_VERIFICATION_KEY,
            },
            udp_ports: self.rx_flow_hash_udp4.as_deref() == Some("sdfn"),
            fill: match &self.rss_weights {
                Some(w) => rss::RetaFill::Weights(w.clone()),
                None => rss::RetaFill::Equal,
            },
        })
    }

    /// The core of each vector of this port (`vectors` of them) on a host
    /// with `cores` cores: `irq_cores`, or round robin from `irq_core`.
    pub fn vector_cores(&self, vectors: u32, cores: u32) -> Vec<u32> {
        match &self.irq_cores {
            Some(c) => c.clone(),
            None => (0..vectors).map(|v| (self.irq_core + v) % cores).collect(),
        }
    }

    fn validate_rss(
        &self,
        path: &str,
        c: &ChipProfile,
        cores: u32,
        msix: bool,
    ) -> Result<(), Error> {
        let f = |x: &str| format!("{path}.{x}");
        if let Some(list) = &self.irq_cores {
            let vectors = if msix { self.queues } else { 1 };
            if list.len() != vectors as usize {
                return Err(cfg_err(
                    f("irq_cores"),
                    format!(
                        "got {} core(s) for {vectors} vector(s); give one core per vector \
                         (the port has one vector per queue in MSI-X mode, one otherwise)",
                        list.len()
                    ),
                ));
            }
            if let Some(&bad) = list.iter().find(|&&x| x >= cores) {
                return Err(cfg_err(
                    f("irq_cores"),
                    format!(
                        "core {bad} is not on the host: it has {cores} core(s), allowed 0 to {}",
                        cores - 1
                    ),
                ));
            }
        }
        if self.rss == Some(false)
            && (self.rss_key.is_some()
                || self.rx_flow_hash_udp4.is_some()
                || self.rss_weights.is_some())
        {
            return Err(cfg_err(
                f("rss"),
                "got false with rss_key, rx_flow_hash_udp4 or rss_weights set; remove them or set rss = true",
            ));
        }
        if !self.rss_on() {
            return Ok(());
        }
        if c.reta_entries == 0 {
            return Err(cfg_err(
                f("rss"),
                format!(
                    "chip {} has no RSS redirection table in the model (its drivers run one \
                     queue); remove the rss fields or pick a multi-queue chip",
                    c.name
                ),
            ));
        }
        if let Some(k) = &self.rss_key {
            rss::parse_key(k).map_err(|m| cfg_err(f("rss_key"), m))?;
        }
        if let Some(h) = &self.rx_flow_hash_udp4 {
            if h != "sd" && h != "sdfn" {
                return Err(cfg_err(
                    f("rx_flow_hash_udp4"),
                    format!(
                        "got {h:?}; allowed: \"sd\" (addresses), \"sdfn\" (addresses and ports)"
                    ),
                ));
            }
        }
        if let Some(w) = &self.rss_weights {
            rss::fill_reta(
                c.reta_entries,
                self.queues,
                &rss::RetaFill::Weights(w.clone()),
            )
            .map_err(|e| cfg_err(f("rss_weights"), e.to_string()))?;
        }
        Ok(())
    }

    /// RX descriptors in effect: as set, or the chip's default ring.
    pub fn rx_ring(&self) -> u32 {
        self.rx_ring_set.unwrap_or_else(|| self.default_ring())
    }

    /// TX descriptors in effect: as set, or the chip's default ring.
    pub fn tx_ring(&self) -> u32 {
        self.tx_ring_set.unwrap_or_else(|| self.default_ring())
    }

    fn default_ring(&self) -> u32 {
        self.chip().map_or(256, |c| c.default_ring)
    }

    /// Write the chip's default ring into the ring fields the file left
    /// out, so that the scenario as run (the report's `config`) states the
    /// sizes in effect.
    pub fn fill_ring_defaults(&mut self) {
        let d = self.default_ring();
        self.rx_ring_set.get_or_insert(d);
        self.tx_ring_set.get_or_insert(d);
    }

    /// Check this NIC on a host with `cores` cores; `path` is `hosts[i].nics[j]`.
    /// The NIC runs in MSI-X mode: `interrupt_mode`, else MSI-X on a chip
    /// that has it (false for an unknown chip, which `validate` refuses).
    pub fn msix_mode(&self) -> bool {
        self.chip().is_some_and(|c| {
            self.interrupt_mode.unwrap_or(if c.msix {
                IntModeCfg::Msix
            } else {
                IntModeCfg::Intx
            }) == IntModeCfg::Msix
        })
    }

    pub fn validate(&self, path: &str, cores: u32) -> Result<(), Error> {
        let f = |x: &str| format!("{path}.{x}");
        let Some(c) = self.chip() else {
            let chips: Vec<&str> = chip::presets().iter().map(|c| c.name).collect();
            return Err(cfg_err(
                f("chip"),
                format!("got {:?}; allowed: {}", self.chip, names_list(&chips)),
            ));
        };
        range(f("mtu_bytes"), self.mtu_bytes, 68, 9216, " bytes")?;
        for (field, v) in [("rx_ring", self.rx_ring()), ("tx_ring", self.tx_ring())] {
            if v < c.min_ring || v > c.max_ring || v % 8 != 0 {
                return Err(cfg_err(
                    f(field),
                    format!(
                        "got {v}; allowed: a multiple of 8 from {} to {} for chip {}",
                        c.min_ring, c.max_ring, c.name
                    ),
                ));
            }
        }
        if self.queues == 0 || self.queues > c.max_queues {
            return Err(cfg_err(
                f("queues"),
                format!(
                    "got {}; allowed: 1 to {} for chip {}",
                    self.queues, c.max_queues, c.name
                ),
            ));
        }
        let mode = self.interrupt_mode.unwrap_or(if c.msix {
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
        if self.queues > 1 && mode != IntModeCfg::Msix {
            return Err(cfg_err(
                f("queues"),
                format!(
                    "got {}; more than one queue needs interrupt_mode = \"msix\"",
                    self.queues
                ),
            ));
        }
        if let Some(line) = self.irq_line {
            if mode != IntModeCfg::Intx {
                return Err(cfg_err(f("irq_line"), "only legacy INTx lines can be shared; remove irq_line or set interrupt_mode = \"intx\""));
            }
            range(f("irq_line"), line, 0, 255, "")?;
        }
        if self.legacy_itr.is_some() && c.legacy_itr == LegacyItr::Native {
            return Err(cfg_err(
                f("legacy_itr"),
                format!(
                    "chip {} has no legacy ITR choice (ITR at 0x000C4 is its own throttle \
                     register, or it is a 10 GbE part whose EITR serves every mode); \
                     legacy_itr applies only to the igb-class chips: 82576, i350, i210, i211",
                    c.name
                ),
            ));
        }
        if ![2, 4, 8].contains(&self.rdmts_divisor) {
            return Err(cfg_err(
                f("rdmts_divisor"),
                format!("got {}; allowed: 2, 4, 8", self.rdmts_divisor),
            ));
        }
        if self.irq_core >= cores {
            return Err(cfg_err(
                f("irq_core"),
                format!(
                    "got {}; the host has {} core(s): allowed 0 to {}",
                    self.irq_core,
                    cores,
                    cores - 1
                ),
            ));
        }
        self.validate_rss(path, c, cores, mode == IntModeCfg::Msix)?;
        self.moderation.validate(&f("moderation"), c)
    }
}
