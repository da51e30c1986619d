//! The `moderation` table of a NIC: the registry that maps each `kind` to
//! its algorithm's own config type (which lives next to the algorithm in
//! `crate::moderation`, with its `validate()` and `build()`), plus the
//! `python` kind, whose class is loaded by the caller.
//!
//! Adding an algorithm: its config type implements `ModeratorConfig` in its
//! own file; one variant here and one line in [`ModerationCfg::algo`].

use crate::error::Error;
use crate::moderation::{
    BuildCtx, CCfg, DimCfg, E1000ItrCfg, E1000LegacyCfg, EnaCfg, FreebsdAimCfg, I40eCfg, IceCfg,
    IgbCfg, IxgbeCfg, IxlCfg, Mlx5Cfg, ModeratorConfig, PortCaps, StaticCfg, Throttle,
};
use crate::nic::chip::{ChipProfile, ThrottleKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Moderation policy of a port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ModerationCfg {
    /// Registers written once at interface up. Give at most one of
    /// `itr_per_s`, `itr_256ns`, `eitr_us`; none means no throttling.
    Static(StaticCfg),
    /// An algorithm written in Python: `class = "package.module:Class"`,
    /// constructed once per interrupt vector with `params` as keyword
    /// arguments (see docs/models/python-moderators.md). Only runs started
    /// from Python can use it.
    Python(PythonCfg),
    /// An algorithm written in C: `source = "my_itr.c"` (relative to the
    /// scenario file), `entry = "my_update_itr"`, integer `params`; compiled
    /// with the system C compiler and loaded (see docs/models/c-moderators.md).
    C(CCfg),
    /// Linux e1000 >= 7.3 / e1000e `InterruptThrottleRate`: 0 off, 1 dynamic,
    /// 3 dynamic conservative (default), 4 simplified (2-s goc/dif),
    /// 100..100000 static. Timers default to the 7.x values (RDTR 0, RADV 8,
    /// TIDV 8, TADV 32) [1.024 us], each 0..=65535.
    #[serde(rename = "e1000-itr")]
    E1000Itr(E1000ItrCfg),
    /// Linux igb: ethtool rx-usecs 0 (off), 1 (dynamic), 3 (dynamic
    /// conservative, default) or a fixed interval 10..=10000 [us]; the
    /// latency-class path (single vector) or `igb_update_ring_itr`
    /// (multi-vector), written at the next interrupt.
    Igb(IgbCfg),
    /// FreeBSD ixl dynamic ITR (ITR in 2 us units) driving the chip's EITR.
    Ixl(IxlCfg),
    /// Linux ixgbe (82599, x540, x550): `rx_usecs` 0 off, 1 adaptive
    /// (`ixgbe_update_itr` at NAPI completion, the default), 2..=1022
    /// static (EITR = usecs << 2, odd values round down); `tx_usecs` only 0
    /// (the vectors carry RX and TX rings).
    Ixgbe(IxgbeCfg),
    /// Linux ice (e810-c, e810-xxv): `adaptive_rx`/`adaptive_tx` (DIM with
    /// ITR/INTRL profile pairs, default on), `rx_usecs`/`tx_usecs` 0..=8160
    /// [us] (odd round down), `rx_usecs_high` (INTRL) 0 or 4/8..=236 [us],
    /// only with both adaptive modes off.
    Ice(IceCfg),
    /// Linux i40e (x710, xl710): `adaptive_rx`/`adaptive_tx` (the 2017
    /// adaptive ITR, default on), `rx_usecs`/`tx_usecs` 0..=8160 [us] (odd
    /// round up), `rx_usecs_high` (INTRL) 0..=236 [us] (down to 4 us).
    I40e(I40eCfg),
    /// FreeBSD em/igb adaptive interrupt moderation (2024): `enable_aim` 0
    /// (static `max_interrupt_rate`), 1 or 2 (per-interrupt 4K/20K/70K
    /// classes; 2 allows the lowest-latency class). Writes ITR on e1000-family
    /// chips, EITR on igb-class chips.
    #[serde(rename = "freebsd-aim")]
    FreebsdAim(FreebsdAimCfg),
    /// Linux generic DIM (net_dim), called at every NAPI poll; the profile's
    /// `usec` drives the vector's EITR.
    Dim(DimCfg),
    /// Linux e1000 5.x (2004): `InterruptThrottleRate` 1 = dynamic (the 2-s
    /// watchdog goc/dif formula, the default when unset), 0 = off, 100..100000
    /// = static; out-of-range values fall back to 8000 as the driver does.
    /// Timer parameters keep the driver's names and 5.x defaults [1.024 us].
    #[serde(rename = "e1000-5x")]
    E1000Legacy(E1000LegacyCfg),
    /// Linux mlx5 (cx5, cx6): CQ moderation per RX and TX queue,
    /// `adaptive_rx`/`adaptive_tx` (DIM, default on), `cqe_mode_rx` (default
    /// on where the chip has it)/`cqe_mode_tx`, `rx_usecs` 0..4095 (3 in CQE
    /// mode, 16 in EQE mode), `rx_frames` (32), `tx_usecs` (16),
    /// `tx_frames` (32).
    Mlx5(Mlx5Cfg),
    /// Linux ena (chip ena): `tx_usecs` (64), `rx_usecs` (0), `adaptive_rx`
    /// (DIM; default: the device's choice), quantised to the device's delay
    /// unit.
    Ena(EnaCfg),
}

/// `kind = "python"`: a moderator class supplied by the caller.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PythonCfg {
    /// "package.module:ClassName" or a key of the moderators passed to holdoff.run.
    pub class: String,
    /// Keyword arguments of the constructor.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
}

impl Default for ModerationCfg {
    fn default() -> Self {
        ModerationCfg::Static(StaticCfg::default())
    }
}

impl ModerationCfg {
    /// The registry: the built-in algorithm's config, or the Python class.
    pub fn algo(&self) -> Result<&dyn ModeratorConfig, &PythonCfg> {
        match self {
            ModerationCfg::Static(c) => Ok(c),
            ModerationCfg::E1000Itr(c) => Ok(c),
            ModerationCfg::Igb(c) => Ok(c),
            ModerationCfg::Ixl(c) => Ok(c),
            ModerationCfg::Ixgbe(c) => Ok(c),
            ModerationCfg::Ice(c) => Ok(c),
            ModerationCfg::I40e(c) => Ok(c),
            ModerationCfg::FreebsdAim(c) => Ok(c),
            ModerationCfg::Dim(c) => Ok(c),
            ModerationCfg::E1000Legacy(c) => Ok(c),
            ModerationCfg::Mlx5(c) => Ok(c),
            ModerationCfg::Ena(c) => Ok(c),
            ModerationCfg::C(c) => Ok(c),
            ModerationCfg::Python(p) => Err(p),
        }
    }

    /// Check this table of a NIC with chip `chip`; `path` names the table
    /// (`hosts[0].nics[1].moderation`).
    pub fn validate(&self, path: &str, chip: &ChipProfile) -> Result<(), Error> {
        let cq_kind = matches!(self, ModerationCfg::Mlx5(_) | ModerationCfg::Ena(_));
        if matches!(chip.throttle, ThrottleKind::Cq(_)) && !cq_kind {
            return Err(Error::Config {
                field: format!("{path}.kind"),
                message: format!(
                    "chip {} moderates each completion queue (no ITR/EITR register): use kind = \"{}\"",
                    chip.name,
                    if chip.family == "ena" { "ena" } else { "mlx5" }
                ),
            });
        }
        match self.algo() {
            Ok(a) => a.validate(&port_caps(chip)).map_err(|e| Error::Config {
                field: if e.field.is_empty() {
                    path.to_string()
                } else {
                    format!("{path}.{}", e.field)
                },
                message: e.message,
            }),
            Err(p) if p.class.trim().is_empty() => Err(Error::Config {
                field: format!("{path}.class"),
                message: "must name a class: \"package.module:ClassName\" or a key of the moderators passed to holdoff.run".into(),
            }),
            Err(_) => Ok(()),
        }
    }
}

/// The moderation view of a chip's throttle register.
pub fn throttle(kind: ThrottleKind) -> Throttle {
    match kind {
        ThrottleKind::Itr256ns => Throttle::Itr256ns,
        ThrottleKind::Eitr256ns => Throttle::Eitr256ns,
        ThrottleKind::Eitr1us => Throttle::Eitr1us,
        ThrottleKind::Eitr2048ns => Throttle::Eitr2048ns,
        ThrottleKind::Itr2us { intrl_gran_us } => Throttle::Itr2us { intrl_gran_us },
        ThrottleKind::Cq(c) => Throttle::Cq {
            frames: c.frames,
            cqe_mode: c.cqe_mode,
            resolution_us: c.resolution_us,
            default_adaptive_rx: c.default_adaptive_rx,
        },
    }
}

/// What an algorithm's `validate()` may know about a chip.
pub fn port_caps(chip: &ChipProfile) -> PortCaps<'_> {
    PortCaps {
        chip: chip.name,
        throttle: throttle(chip.throttle),
    }
}

/// What an algorithm's `build()` needs for one vector of a port.
pub fn build_ctx(
    chip: &ChipProfile,
    link_bps: u64,
    hz: u32,
    work_delay: crate::units::Nanos,
    vectors: u16,
    vector: u16,
) -> BuildCtx {
    BuildCtx {
        link_mbps: (link_bps / 1_000_000) as u32,
        throttle: throttle(chip.throttle),
        rx_fifo_bytes: chip.rx_fifo_bytes,
        vectors,
        vector,
        hz,
        work_delay,
    }
}
