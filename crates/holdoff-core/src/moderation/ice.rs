//! Linux ice interrupt moderation (Intel E810): `ethtool -C adaptive-rx,
//! adaptive-tx, rx-usecs, tx-usecs, rx-usecs-high` and the driver's use of
//! the kernel's DIM library with its own ITR/INTRL profile pairs.
//!
//! Models (torvalds/linux `drivers/net/ethernet/intel/ice/`):
//! - Settings as `ice_set_rc_coalesce` (`ice_ethtool.c`) takes them, from
//!   the interface defaults (`ICE_DFLT_RX_ITR` = `ICE_DFLT_TX_ITR` = 50 us,
//!   dynamic on, `ICE_DFLT_INTRL` 0): `rx_usecs`/`tx_usecs` 0 to
//!   `ICE_ITR_MAX` 8160 ("Invalid value, rx-usecs range is 0-8160"),
//!   refused while the container is adaptive unless unchanged ("rx interrupt
//!   throttling cannot be changed if adaptive-rx is enabled"), odd values
//!   rounded down (`ITR_REG_ALIGN` = `& 0x1FFE`; the driver says "device
//!   only supports even values. Rounding down"); `rx_usecs_high` (INTRL) 0
//!   or `intrl_gran` to `ICE_MAX_INTRL` 236 ("Invalid value, rx-usecs-high
//!   valid values are 0 (disabled), 4-236"; the granularity is the part's,
//!   `ice_get_itr_intrl_gran`: 4 us, 8 us on 25G parts), refused when it
//!   changes while adaptive-rx or adaptive-tx is on ("rx-usecs-high cannot
//!   be changed if adaptive-tx or adaptive-rx is enabled").
//! - Registers: `__ice_write_itr` writes `ITR_REG_ALIGN(itr) >> 1` (2 us),
//!   `ice_write_intrl` writes `intrl / 4 | ENA` (4 us); the model passes the
//!   values in us (`eitr_us`, `intrl_us`) and the chip holds those units.
//! - Adaptive (commit cdf1f1f16917 "ice: replace custom AIM algorithm with
//!   kernel's DIM library", 2021): each ring container (RX, TX) runs
//!   `net_dim` (EQE mode, the `dim::DimCore` of this crate) when a NAPI poll
//!   completes (`ice_update_ena_itr` -> `ice_net_dim`, TX first), on the
//!   sample (`q_vector->total_events`, ring packets, ring bytes); the events
//!   are the vector's interrupts (`ice_msix_clean_rings` counts them). A new
//!   profile index runs the container's work item (`ice_rx_dim_work`,
//!   `ice_tx_dim_work`), which writes the profile's pair: ITR of that
//!   container and the vector's INTRL, and restarts the measurement. RX
//!   pairs {2,10} {8,16} {32,0} {96,0} {128,0}, TX pairs {2,10} {8,16}
//!   {64,0} {128,0} {256,0} [us]; the zeroed `struct dim` starts at index 0
//!   while the ITR keeps its configured 50 us until the first change. A
//!   measurement whose start is 1000 ms or more before the sample is
//!   restarted (`__ice_update_sample`: "if dim settings get stale ... force
//!   it to start again", from the 2021-10 rework d8eb7ad5e46c "ice: update
//!   dim usage and moderation"; that rework also replaced the profile
//!   tables and the INTRL pairs by a fixed 4 us INTRL while adaptive,
//!   `ice_set_q_vector_intrl`; the tables of that rework were not read, so
//!   the model keeps cdf1f1f16917's pairs: see docs/models/ice.md).
//!
//! Simplifies: the vector has one throttle in the model: the RX container's
//! ITR (index 0) times its interrupts; the TX container's ITR (index 1) is
//! computed, traced and reported but does not time interrupts. The DIM work
//! item runs before the next poll (no workqueue delay). Per-queue settings
//! (`ethtool --per-queue`) are one setting for every vector. Byte counts
//! exclude the FCS (4 bytes per frame), as the rings count them.
//!
//! Units: ITR and INTRL [us]; events [count]; time [ns in, us in DIM].

use super::dim::{DimCore, DimSample, MeasureState, NetDimOutcome};
use super::{
    check_range, BuildCtx, FieldError, Invocation, LiveChange, ModerationParams, Moderator,
    ModeratorConfig, PortCaps, Sample, Throttle, TraceRow,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `ICE_ITR_MAX` [us].
pub const ITR_MAX_US: u32 = 8160;
/// `ICE_MAX_INTRL` [us].
pub const MAX_INTRL_US: u32 = 236;
/// `ICE_DFLT_RX_ITR` / `ICE_DFLT_TX_ITR` (`ICE_ITR_20K`) [us].
pub const DFLT_ITR_US: u32 = 50;
/// `ICE_ITR_MASK`: `ITR_REG_ALIGN` keeps these bits (rounds down to even).
pub const ITR_MASK: u32 = 0x1FFE;
/// A DIM measurement older than this restarts (`__ice_update_sample`) [ms].
pub const STALE_MS: u64 = 1000;

/// One `struct ice_dim` slot: (ITR, INTRL) [us].
pub type Pair = (u32, u32);
/// `rx_profile` of commit cdf1f1f16917 (`ice_main.c`).
pub const RX_PROFILE: [Pair; 5] = [(2, 10), (8, 16), (32, 0), (96, 0), (128, 0)];
/// `tx_profile` of commit cdf1f1f16917 (`ice_main.c`).
pub const TX_PROFILE: [Pair; 5] = [(2, 10), (8, 16), (64, 0), (128, 0), (256, 0)];

/// Scenario config of `kind = "ice"`: Linux ice's `ethtool -C` settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IceCfg {
    /// `ethtool -C adaptive-rx` (default on): DIM drives the RX ITR.
    #[serde(default = "on")]
    pub adaptive_rx: bool,
    /// `ethtool -C adaptive-tx` (default on): DIM drives the TX ITR.
    #[serde(default = "on")]
    pub adaptive_tx: bool,
    /// `ethtool -C rx-usecs` [us], 0 to 8160; odd values round down. Only
    /// the default 50 while adaptive-rx is on.
    #[serde(default = "dflt_itr")]
    #[schemars(range(min = 0, max = 8160))]
    pub rx_usecs: u32,
    /// `ethtool -C tx-usecs` [us], as `rx_usecs` for the TX container.
    #[serde(default = "dflt_itr")]
    #[schemars(range(min = 0, max = 8160))]
    pub tx_usecs: u32,
    /// `ethtool -C rx-usecs-high`: the vector's interrupt rate limit
    /// (INTRL) [us], 0 (off) or the part's granularity (4, 8 on 25G parts)
    /// to 236; only 0 while adaptive-rx or adaptive-tx is on.
    #[serde(default)]
    #[schemars(range(min = 0, max = 236))]
    pub rx_usecs_high: u32,
}

fn on() -> bool {
    true
}

fn dflt_itr() -> u32 {
    DFLT_ITR_US
}

impl Default for IceCfg {
    fn default() -> Self {
        IceCfg {
            adaptive_rx: true,
            adaptive_tx: true,
            rx_usecs: DFLT_ITR_US,
            tx_usecs: DFLT_ITR_US,
            rx_usecs_high: 0,
        }
    }
}

/// The part's INTRL granularity, if the port is an Intel 700/800 part.
pub(crate) fn intrl_gran(port: &PortCaps) -> Option<u32> {
    match port.throttle {
        Throttle::Itr2us { intrl_gran_us } => Some(intrl_gran_us),
        _ => None,
    }
}

impl IceCfg {
    fn adaptive(&self) -> bool {
        self.adaptive_rx || self.adaptive_tx
    }
}

impl ModeratorConfig for IceCfg {
    fn validate(&self, port: &PortCaps) -> Result<(), FieldError> {
        let Some(gran) = intrl_gran(port) else {
            return Err(FieldError::new(
                "",
                format!(
                    "kind \"ice\" drives the ITR and INTRL of the Intel 800 Series (e810-c, \
                     e810-xxv); chip {} is not one: pick one of those chips or another kind",
                    port.chip
                ),
            ));
        };
        let high = self.rx_usecs_high;
        if high > MAX_INTRL_US || (high != 0 && high < gran) {
            return Err(FieldError::new(
                "rx_usecs_high",
                format!(
                    "got {high}; allowed: 0 (off) or {gran} to {MAX_INTRL_US} us on chip {}: \
                     ice_set_rc_coalesce says \"Invalid value, rx-usecs-high valid values are 0 \
                     (disabled), {gran}-{MAX_INTRL_US}\"",
                    port.chip
                ),
            ));
        }
        if high != 0 && self.adaptive() {
            return Err(FieldError::new(
                "rx_usecs_high",
                format!(
                    "got {high} with adaptive on; ice_set_rc_coalesce refuses it: \"Invalid \
                     value, rx-usecs-high cannot be changed if adaptive-tx or adaptive-rx is \
                     enabled\": set adaptive_rx = false and adaptive_tx = false"
                ),
            ));
        }
        for (field, usecs, adaptive, dir) in [
            ("rx_usecs", self.rx_usecs, self.adaptive_rx, "rx"),
            ("tx_usecs", self.tx_usecs, self.adaptive_tx, "tx"),
        ] {
            if adaptive && usecs != DFLT_ITR_US {
                return Err(FieldError::new(
                    field,
                    format!(
                        "got {usecs} with adaptive_{dir} on; ice_set_rc_coalesce refuses it: \
                         \"{dir} interrupt throttling cannot be changed if adaptive-{dir} is \
                         enabled\": set adaptive_{dir} = false (or leave {field} at \
                         {DFLT_ITR_US})"
                    ),
                ));
            }
            check_range(
                field,
                usecs,
                0,
                ITR_MAX_US,
                &format!(
                    " us (ice_set_rc_coalesce: \"Invalid value, {dir}-usecs range is \
                     0-{ITR_MAX_US}\")"
                ),
            )?;
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        let _ = ctx;
        Box::new(Ice::new(self.clone()))
    }

    fn config_field(&self, param: &str) -> Option<&'static str> {
        match param {
            "eitr_us" if !self.adaptive_rx => Some("rx_usecs"),
            "intrl_us" if !self.adaptive() => Some("rx_usecs_high"),
            _ => None,
        }
    }

    fn interval_is_static(&self) -> bool {
        !self.adaptive_rx
    }

    fn live_change(&self, field: &str) -> Result<LiveChange, String> {
        match field {
            // ice_set_rc_coalesce writes a static ITR at once
            // (ice_write_itr + ice_flush) and the INTRL through
            // ice_set_q_vector_intrl.
            "adaptive_rx" | "adaptive_tx" | "rx_usecs" | "tx_usecs" | "rx_usecs_high" => {
                Ok(LiveChange::Reprogram)
            }
            _ => Err(format!("`{field}` is not an ice setting")),
        }
    }
}

/// One ring container's DIM state and the driver's running counters.
#[derive(Clone, Debug)]
pub struct Container {
    pub dim: DimCore,
    counters: DimSample,
    /// The ITR this container's index holds [us].
    pub itr_us: u32,
}

impl Container {
    fn new(itr_us: u32) -> Self {
        Container {
            // A zeroed `struct dim`: START_MEASURE, profile 0.
            dim: DimCore::new(0),
            counters: DimSample::default(),
            itr_us,
        }
    }

    /// `__ice_update_sample` + `net_dim` for this container: the counters
    /// advance by the sample; a stale measurement restarts. Returns what
    /// `net_dim` did and whether the stale rule fired.
    pub fn net_dim(
        &mut self,
        now_ns: u64,
        events: u64,
        pkts: u64,
        bytes: u64,
    ) -> (NetDimOutcome, bool) {
        let c = &mut self.counters;
        c.time_ns = now_ns;
        c.event_ctr = c.event_ctr.wrapping_add(events as u16);
        c.pkt_ctr = c.pkt_ctr.wrapping_add(pkts as u32);
        c.byte_ctr = c.byte_ctr.wrapping_add(bytes as u32);
        let stale = self.dim.state != MeasureState::StartMeasure
            && now_ns.saturating_sub(self.dim.start_sample.time_ns) / 1_000_000 >= STALE_MS;
        if stale {
            self.dim.state = MeasureState::StartMeasure;
        }
        (self.dim.net_dim(&self.counters), stale)
    }
}

/// Linux ice moderation of one vector.
pub struct Ice {
    cfg: IceCfg,
    rx: Container,
    tx: Container,
    /// The vector's INTRL as last written [us].
    intrl_us: u32,
    last: Option<TraceRow>,
}

/// Bytes of FCS the rings' byte counts leave out.
const FCS_BYTES: u64 = 4;

impl Ice {
    pub fn new(cfg: IceCfg) -> Self {
        let rx_itr = cfg.rx_usecs & ITR_MASK;
        let tx_itr = cfg.tx_usecs & ITR_MASK;
        let intrl_us = if cfg.adaptive() { 0 } else { cfg.rx_usecs_high };
        Ice {
            cfg,
            rx: Container::new(rx_itr),
            tx: Container::new(tx_itr),
            intrl_us,
            last: None,
        }
    }

    /// The RX and TX containers.
    pub fn containers(&self) -> (&Container, &Container) {
        (&self.rx, &self.tx)
    }

    /// The vector's INTRL [us].
    pub fn intrl_us(&self) -> u32 {
        self.intrl_us
    }

    fn params(&self) -> ModerationParams {
        ModerationParams {
            eitr_us: Some(self.rx.itr_us),
            intrl_us: Some(self.intrl_us),
            ..ModerationParams::default()
        }
    }
}

impl Moderator for Ice {
    fn name(&self) -> &str {
        "ice"
    }

    fn initial(&self) -> ModerationParams {
        self.params()
    }

    fn invocation(&self) -> Invocation {
        if self.cfg.adaptive() {
            Invocation::NapiComplete
        } else {
            Invocation::Never
        }
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        let now = s.now.as_ns();
        let before = (self.rx.itr_us, self.intrl_us);
        let mut values = vec![("events", s.interrupts as i64)];
        // ice_net_dim: the TX container first, then RX; a changed index
        // runs that container's work item (ITR of the container + INTRL).
        for (is_rx, on, table) in [
            (false, self.cfg.adaptive_tx, &TX_PROFILE),
            (true, self.cfg.adaptive_rx, &RX_PROFILE),
        ] {
            if !on {
                continue;
            }
            let (pkts, bytes) = if is_rx {
                (s.rx_packets, s.rx_bytes)
            } else {
                (s.tx_packets, s.tx_bytes)
            };
            let bytes = bytes.saturating_sub(FCS_BYTES * pkts);
            let c = if is_rx { &mut self.rx } else { &mut self.tx };
            let (o, stale) = c.net_dim(now, s.interrupts, pkts, bytes);
            if o.changed {
                let (itr, intrl) = table[c.dim.profile_ix as usize];
                c.itr_us = itr;
                c.dim.state = MeasureState::StartMeasure;
                self.intrl_us = intrl;
            }
            let ix = c.dim.profile_ix as i64;
            if is_rx {
                values.extend([
                    ("rx_packets", pkts as i64),
                    ("rx_stale", stale as i64),
                    ("rx_profile_ix", ix),
                    ("rx_changed", o.changed as i64),
                ]);
            } else {
                values.extend([
                    ("tx_packets", pkts as i64),
                    ("tx_stale", stale as i64),
                    ("tx_profile_ix", ix),
                    ("tx_changed", o.changed as i64),
                ]);
            }
        }
        values.extend([
            ("rx_itr_us", self.rx.itr_us as i64),
            ("tx_itr_us", self.tx.itr_us as i64),
            ("intrl_us", self.intrl_us as i64),
        ]);
        self.last = Some(TraceRow::at(s, values));
        // Only the registers a work item wrote: a TX work item writes the TX
        // ITR (index 1, not a throttle in the model) and the INTRL.
        let p = ModerationParams {
            eitr_us: (self.rx.itr_us != before.0).then_some(self.rx.itr_us),
            intrl_us: (self.intrl_us != before.1).then_some(self.intrl_us),
            ..ModerationParams::default()
        };
        (p != ModerationParams::default()).then_some(p)
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests;
