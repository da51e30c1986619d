//! Linux e1000 >= 7.3 and e1000e `InterruptThrottleRate`: off, static, the
//! latency-class dynamic ITR (modes 1 and 3) and the "simplified" goc/dif
//! mode (4).
//!
//! Models (Linux e1000 7.3.21-k8 `e1000_main.c`
//! `e1000_update_itr`/`e1000_set_itr`/watchdog, `e1000_param.c`; e1000e
//! `netdev.c`/`param.c`):
//!
//! - Parameter handling (`e1000_check_options`) gives `itr_setting` (the
//!   mode) and `itr` (the rate in int/s last written): unset -> (3, 20000);
//!   0 -> off; 1 -> (1, 20000); 3 -> (3, 20000); 4 -> (4, 4);
//!   100..=100000 -> (v & !3, v), static. Invalid values: e1000e falls back
//!   to 3 (dynamic conservative); e1000's validation replaces the value by 3
//!   and then clears its low bits, so ITR ends up *off* (see `check_option`).
//! - At configure time ITR = 1e9 / (itr * 256) is written iff
//!   `itr_setting != 0` (195 for the initial 20000).
//! - Modes 1 and 3 (`itr_setting & 3`): after each interrupt's NAPI
//!   completion, `e1000_set_itr` classifies the TX and RX byte/packet totals
//!   cleaned since the interrupt into lowest/low/bulk latency
//!   (`update_itr`), takes the bulkier class, maps it to 70000 / 20000 /
//!   4000 int/s and writes ITR if the rate changed, ramping *up* by a
//!   quarter of the target per decision (`ramp`) and going down at once.
//!   Mode 3 turns a lowest-latency class into low latency (never 70000/s).
//!   Link speed != 1000 Mb/s fixes the rate at 4000/s.
//! - Mode 4: the watchdog (every 2 s, first run right after interface up)
//!   applies the 2004 goc/dif formula (`super::e1000_5x::ditr`) to the 2-s
//!   deltas of the low 32 bits of the good-octets counters and writes ITR
//!   every run. Between configure and the first run the register holds the
//!   low 16 bits of 1e9/(4*256) (`MODE4_CONFIGURE_ITR`, a driver artefact).
//! - Timer defaults (7.x and e1000e): TIDV 8, TADV 32, RDTR 0, RADV 8.
//!
//! Invocation: modes 1/3 `PerInterrupt`. The driver decides at the NAPI
//! completion of interrupt k on the totals cleaned since interrupt k (its ISR
//! zeroes them) and writes ITR before re-enabling interrupts. Here the call
//! at interrupt k+1 sees the traffic since interrupt k (the same packets,
//! give or take those that arrive between completion and the next interrupt)
//! and the returned ITR is written then; an ITR write applies to later
//! countdowns, so the new value takes effect one interrupt later than in the
//! driver. Mode 4 `Periodic` 2 s with `at_start`; static and off `Never`.
//!
//! Simplifies: the MAC-type checks (no ITR before 82540), e1000e's
//! `FLAG2_DISABLE_AIM` and 82574 MSI-X EITR path, and the watchdog's other
//! work are not modelled (the e1000 watchdog also writes `ICS = RXDMT0`
//! every 2 s in every mode; that is the driver model's job).
//! One `Sample` feeds both classes: `tx_*` as the TX totals, `rx_*` as the RX
//! totals. The driver counts RX bytes without FCS and TX bytes as
//! wire-equivalent payload (TSO segments with replicated headers); the
//! thresholds shift by 4 B per packet if the sample counts the FCS.
//!
//! Units: rates [int/s]; ITR [256 ns]; bytes [bytes]; timers [1.024 us].
//! Integer arithmetic is C's (truncating) throughout.

use super::e1000_5x::{check_delay_timers, delay_timer_params, ditr_step};
use super::{
    BuildCtx, FieldError, Invocation, LiveChange, ModerationParams, Moderator, ModeratorConfig,
    PortCaps, Sample, TraceRow,
};
use crate::units::{ints_per_s_to_itr_256ns, Nanos};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// e1000/e1000e watchdog period.
pub const WATCHDOG: Nanos = Nanos::from_secs(2);
/// `DEFAULT_ITR` of e1000 >= 7.3 / e1000e: mode 3 (dynamic conservative).
pub const DEFAULT_ITR: u32 = 3;
/// `MIN_ITR`, `MAX_ITR`: the static range [int/s].
pub const MIN_ITR: u32 = 100;
pub const MAX_ITR: u32 = 100_000;
/// The rate the dynamic modes start from [int/s].
pub const START_RATE: u32 = 20_000;
/// Class rates of `e1000_set_itr` [int/s].
pub const LOWEST_LATENCY_RATE: u32 = 70_000;
pub const LOW_LATENCY_RATE: u32 = 20_000;
pub const BULK_LATENCY_RATE: u32 = 4_000;
/// "for non-gigabit speeds, just fix the interrupt rate at 4000".
pub const NON_GIGABIT_RATE: u32 = 4_000;
/// e1000 `update_itr` bulk -> low threshold (igb and FreeBSD use 1500).
pub const BULK_TO_LOW_BYTES: u64 = 6_000;
/// ITR.INTERVAL is bits 15:0.
pub const ITR_INTERVAL_MASK: u32 = 0xFFFF;
/// Mode 4 writes 1e9 / (4 * 256) = 976562 at configure time; the 16-bit
/// INTERVAL field keeps 976562 & 0xFFFF = 59058 (15.1 ms) until the first
/// watchdog run.
pub const MODE4_CONFIGURE_ITR: u32 = (1_000_000_000 / (4 * 256)) & ITR_INTERVAL_MASK;
/// 7.x / e1000e timer defaults [1.024 us].
pub const DEFAULT_TIDV: u32 = 8;
pub const DEFAULT_TADV: u32 = 32;
pub const DEFAULT_RDTR: u32 = 0;
pub const DEFAULT_RADV: u32 = 8;

/// Which driver's option handling applies (the algorithms are the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Driver {
    #[default]
    /// Linux e1000 7.3.x (8254x).
    E1000,
    /// Linux e1000e (8257x, 82583, ICH/PCH).
    E1000e,
}

/// `enum latency_range`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LatencyClass {
    Lowest = 0,
    Low = 1,
    Bulk = 2,
}

impl LatencyClass {
    /// The class's target rate in `e1000_set_itr` [int/s].
    pub fn rate(self) -> u32 {
        match self {
            LatencyClass::Lowest => LOWEST_LATENCY_RATE,
            LatencyClass::Low => LOW_LATENCY_RATE,
            LatencyClass::Bulk => BULK_LATENCY_RATE,
        }
    }
}

/// The mode an `itr_setting` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItrMode {
    Off,
    Dynamic,
    DynamicConservative,
    Simplified,
    /// Static rate [int/s] (`adapter->itr`).
    Static(u32),
}

/// Result of the driver's option check: `adapter->itr_setting` and
/// `adapter->itr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItrOption {
    pub setting: u32,
    pub itr: u32,
}

impl ItrOption {
    pub fn mode(self) -> ItrMode {
        match self.setting {
            0 => ItrMode::Off,
            1 => ItrMode::Dynamic,
            3 => ItrMode::DynamicConservative,
            4 => ItrMode::Simplified,
            _ => ItrMode::Static(self.itr),
        }
    }
}

/// `InterruptThrottleRate` option handling (None = unset).
///
/// e1000 (`e1000_param.c@30c0923`): 0/1/3/4 are special; anything else goes
/// through the range check, which replaces an invalid value by the default 3,
/// and then `itr_setting = itr & ~3` = 0: ITR is never written (off) and
/// `itr` stays 3. e1000e (`param.c`): values > 4 are range-checked and an
/// invalid one becomes 3, and 2 is "Invalid mode - setting default"; both end
/// in mode 3 with 20000.
pub fn check_option(driver: Driver, param: Option<u32>) -> ItrOption {
    let Some(v) = param else {
        return ItrOption {
            setting: DEFAULT_ITR,
            itr: START_RATE,
        };
    };
    let valid_static = (MIN_ITR..=MAX_ITR).contains(&v);
    match (driver, v) {
        (_, 0) => ItrOption { setting: 0, itr: 0 },
        (_, 1) | (_, 3) => ItrOption {
            setting: v,
            itr: START_RATE,
        },
        (_, 4) => ItrOption { setting: 4, itr: 4 },
        (_, v) if valid_static => ItrOption {
            setting: v & !3,
            itr: v,
        },
        // e1000: validate -> 3, then 3 & ~3 = 0.
        (Driver::E1000, _) => ItrOption {
            setting: DEFAULT_ITR & !3,
            itr: DEFAULT_ITR,
        },
        (Driver::E1000e, _) => ItrOption {
            setting: DEFAULT_ITR,
            itr: START_RATE,
        },
    }
}

/// `e1000_update_itr` with the bulk -> low byte threshold as a parameter
/// (e1000/e1000e 6000, igb 1500) on one direction's totals: `packets == 0`
/// keeps the class, else `bpp = bytes / packets` and [`latency_transition`].
pub fn update_class(
    class: LatencyClass,
    packets: u64,
    bytes: u64,
    bulk_to_low_bytes: u64,
) -> LatencyClass {
    if packets == 0 {
        return class;
    }
    latency_transition(class, bytes, bytes / packets, packets, bulk_to_low_bytes)
}

/// The latency-class transition table, written once for the three drivers
/// whose arithmetic is the same: Linux e1000/e1000e `e1000_update_itr`, igb
/// `igb_update_itr` and FreeBSD em `em_newitr` / igc `igc_neweitr` (2024).
/// All three compare the same inputs against the same constants with the
/// same strict `<`/`>`; e1000's "packets <= 2" in the low class is FreeBSD's
/// "packets < 3" on integers. What differs is kept by the callers:
///
/// - `bulk_to_low_bytes`: the bulk -> low byte test, 6000 in e1000/e1000e,
///   1500 in igb and FreeBSD.
/// - The inputs: Linux classifies each direction on its own totals after a
///   `packets == 0` guard ([`update_class`]); FreeBSD feeds the larger of
///   the TX and RX figures (`super::freebsd_aim::aim_inputs`, where `bpp`
///   is the larger per-direction average, not `bytes / packets`), with no
///   packet guard, and has a fourth class (`disabled`) handled before this.
/// - What follows: e1000 clamps each direction's class in conservative mode,
///   igb the maximum of both, FreeBSD trims `lowest` when `enable_aim == 1`.
pub fn latency_transition(
    class: LatencyClass,
    bytes: u64,
    bpp: u64,
    packets: u64,
    bulk_to_low_bytes: u64,
) -> LatencyClass {
    use LatencyClass::*;
    match class {
        Lowest => {
            if bpp > 8000 {
                Bulk
            } else if packets < 5 && bytes > 512 {
                Low
            } else {
                Lowest
            }
        }
        Low => {
            if bytes > 10_000 {
                if bpp > 8000 || packets < 10 || bpp > 1200 {
                    Bulk
                } else if packets > 35 {
                    Lowest
                } else {
                    Low
                }
            } else if bpp > 2000 {
                Bulk
            } else if packets <= 2 && bytes < 512 {
                Lowest
            } else {
                Low
            }
        }
        Bulk => {
            if bytes > 25_000 {
                if packets > 35 {
                    Low
                } else {
                    Bulk
                }
            } else if bytes < bulk_to_low_bytes {
                Low
            } else {
                Bulk
            }
        }
    }
}

/// `e1000_update_itr` (e1000/e1000e thresholds).
pub fn update_itr(class: LatencyClass, packets: u64, bytes: u64) -> LatencyClass {
    update_class(class, packets, bytes, BULK_TO_LOW_BYTES)
}

/// The trace columns the Linux latency-class drivers share (e1000
/// `e1000_set_itr`, igb `igb_set_itr`/`igb_update_ring_itr`): the sample's
/// per-direction totals and the two direction classes, in this order.
pub fn class_trace(s: &Sample, tx: LatencyClass, rx: LatencyClass) -> Vec<(&'static str, i64)> {
    vec![
        ("tx_packets", s.tx_packets as i64),
        ("tx_bytes", s.tx_bytes as i64),
        ("rx_packets", s.rx_packets as i64),
        ("rx_bytes", s.rx_bytes as i64),
        ("tx_class", tx as i64),
        ("rx_class", rx as i64),
    ]
}

/// The `set_itr_now` step: an increase goes up by a quarter of the target
/// (`target >> 2`) at most; a decrease is applied at once [int/s].
pub fn ramp(current: u32, target: u32) -> u32 {
    if target > current {
        (current + (target >> 2)).min(target)
    } else {
        target
    }
}

/// Scenario config of `kind = "e1000-itr"`: Linux e1000 >= 7.3 / e1000e
/// `InterruptThrottleRate` 0 off, 1 dynamic, 3 dynamic conservative
/// (default), 4 simplified (2-s goc/dif), 100..100000 static (other values
/// are handled as each driver's option check does). Timers default to the
/// 7.x values (RDTR 0, RADV 8, TIDV 8, TADV 32) [1.024 us] and are bounded
/// like the driver's module parameters (`e1000_param.c`: `MIN_RXDELAY` 0 ..
/// `MAX_RXDELAY` 0xFFFF, and likewise RxAbsIntDelay, TxIntDelay,
/// TxAbsIntDelay).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct E1000ItrCfg {
    #[serde(default)]
    pub interrupt_throttle_rate: Option<u32>,
    /// Which driver: e1000 (7.3, 8254x) or e1000e (8257x); they differ in option validation.
    #[serde(default)]
    pub driver: Driver,
    #[serde(default)]
    #[schemars(range(min = 0, max = 65_535))]
    pub rx_int_delay: u32,
    #[serde(default = "d_radv")]
    #[schemars(range(min = 0, max = 65_535))]
    pub rx_abs_int_delay: u32,
    #[serde(default = "d_tidv")]
    #[schemars(range(min = 0, max = 65_535))]
    pub tx_int_delay: u32,
    #[serde(default = "d_tadv")]
    #[schemars(range(min = 0, max = 65_535))]
    pub tx_abs_int_delay: u32,
}

fn d_radv() -> u32 {
    DEFAULT_RADV
}
fn d_tidv() -> u32 {
    DEFAULT_TIDV
}
fn d_tadv() -> u32 {
    DEFAULT_TADV
}

impl Default for E1000ItrCfg {
    fn default() -> Self {
        E1000ItrCfg {
            interrupt_throttle_rate: None,
            driver: Driver::E1000,
            rx_int_delay: DEFAULT_RDTR,
            rx_abs_int_delay: DEFAULT_RADV,
            tx_int_delay: DEFAULT_TIDV,
            tx_abs_int_delay: DEFAULT_TADV,
        }
    }
}

impl E1000ItrCfg {
    /// RxIntDelay, RxAbsIntDelay, TxIntDelay, TxAbsIntDelay [1.024 us].
    fn timers(&self) -> [u32; 4] {
        [
            self.rx_int_delay,
            self.rx_abs_int_delay,
            self.tx_int_delay,
            self.tx_abs_int_delay,
        ]
    }
}

impl ModeratorConfig for E1000ItrCfg {
    /// Static for an `InterruptThrottleRate` the option check turns into a
    /// fixed rate or into off (0, or an invalid e1000 value); not for the
    /// dynamic modes 1, 3 and 4 (nor unset, which is 3).
    fn interval_is_static(&self) -> bool {
        matches!(
            check_option(self.driver, self.interrupt_throttle_rate).mode(),
            ItrMode::Off | ItrMode::Static(_)
        )
    }

    fn validate(&self, _port: &PortCaps) -> Result<(), FieldError> {
        check_delay_timers(self.timers())
    }

    fn config_field(&self, param: &str) -> Option<&'static str> {
        super::e1000_timer_field(param)
    }

    /// `interrupt_throttle_rate` changes as `ethtool -C rx-usecs` does
    /// (`e1000_set_coalesce`, Linux `e1000_ethtool.c`; e1000e alike): the
    /// new `itr_setting` and `itr` (20000 for the dynamic modes) and an ITR
    /// write at once; the latency classes are kept. The path keeps the
    /// module-parameter name and its values (0, 1, 3, 4, 100 to 100000).
    /// The delay timers and `driver` are module parameters read at load.
    fn live_change(&self, field: &str) -> Result<LiveChange, String> {
        match field {
            "interrupt_throttle_rate" => Ok(LiveChange::Retune),
            _ => Err(format!(
                "`{field}` is a module parameter (e1000_param.c) read when the driver \
                 loads; only the throttle rate changes at run time (ethtool -C)"
            )),
        }
    }

    fn retune(&self, m: &mut dyn Moderator) -> Option<ModerationParams> {
        let e = m.as_any_mut()?.downcast_mut::<E1000Itr>()?;
        let opt = check_option(e.driver, self.interrupt_throttle_rate);
        e.itr_setting = opt.setting;
        e.itr = opt.itr;
        // `if (adapter->itr_setting != 0) ew32(ITR, 1e9 / (itr * 256)) else
        // ew32(ITR, 0)`: the register `initial()` computes for the mode.
        e.initial().itr_256ns.map(ModerationParams::itr)
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        let [rdtr, radv, tidv, tadv] = self.timers();
        Box::new(
            E1000Itr::new(self.driver, self.interrupt_throttle_rate)
                .with_timers(rdtr, radv, tidv, tadv)
                .with_link_mbps(ctx.link_mbps),
        )
    }
}

/// The e1000 >= 7.3 / e1000e moderation state.
#[derive(Clone, Debug)]
pub struct E1000Itr {
    pub driver: Driver,
    /// `adapter->itr_setting`.
    pub itr_setting: u32,
    /// `adapter->itr`: the rate last written [int/s] (static value, or 4 in
    /// mode 4).
    pub itr: u32,
    pub tx_class: LatencyClass,
    pub rx_class: LatencyClass,
    /// Link speed [Mb/s]; anything but 1000 pins the dynamic rate at 4000.
    pub link_mbps: u32,
    pub timers: ModerationParams,
    last: Option<TraceRow>,
}

impl E1000Itr {
    /// `itr_param`: the `InterruptThrottleRate` module parameter (None =
    /// unset); timers at their 7.x defaults, link at 1000 Mb/s.
    pub fn new(driver: Driver, itr_param: Option<u32>) -> Self {
        let opt = check_option(driver, itr_param);
        E1000Itr {
            driver,
            itr_setting: opt.setting,
            itr: opt.itr,
            // The adapter is zero-initialised: lowest_latency.
            tx_class: LatencyClass::Lowest,
            rx_class: LatencyClass::Lowest,
            link_mbps: 1000,
            timers: delay_timer_params([DEFAULT_RDTR, DEFAULT_RADV, DEFAULT_TIDV, DEFAULT_TADV]),
            last: None,
        }
    }

    /// Override the delay timers (RxIntDelay, RxAbsIntDelay, TxIntDelay,
    /// TxAbsIntDelay) [1.024 us].
    pub fn with_timers(mut self, rdtr: u32, radv: u32, tidv: u32, tadv: u32) -> Self {
        self.timers = delay_timer_params([rdtr, radv, tidv, tadv]);
        self
    }

    /// Set the link speed [Mb/s].
    pub fn with_link_mbps(mut self, mbps: u32) -> Self {
        self.link_mbps = mbps;
        self
    }

    pub fn mode(&self) -> ItrMode {
        ItrOption {
            setting: self.itr_setting,
            itr: self.itr,
        }
        .mode()
    }

    /// `e1000_set_itr`: returns the new rate if ITR is written.
    fn set_itr(&mut self, s: &Sample) -> Option<u32> {
        let conservative = self.itr_setting == 3;
        let current;
        let new_itr;
        if self.link_mbps != 1000 {
            current = LatencyClass::Lowest; // `current_itr = 0`
            new_itr = NON_GIGABIT_RATE;
        } else {
            self.tx_class = update_itr(self.tx_class, s.tx_packets, s.tx_bytes);
            if conservative && self.tx_class == LatencyClass::Lowest {
                self.tx_class = LatencyClass::Low;
            }
            self.rx_class = update_itr(self.rx_class, s.rx_packets, s.rx_bytes);
            if conservative && self.rx_class == LatencyClass::Lowest {
                self.rx_class = LatencyClass::Low;
            }
            current = self.rx_class.max(self.tx_class);
            new_itr = current.rate();
        }
        let written = if new_itr != self.itr {
            let r = ramp(self.itr, new_itr);
            self.itr = r;
            Some(r)
        } else {
            None
        };
        let itr_reg = ints_per_s_to_itr_256ns(self.itr);
        let mut values = class_trace(s, self.tx_class, self.rx_class);
        values.extend([
            ("class", current as i64),
            ("target_per_s", new_itr as i64),
            ("rate_per_s", self.itr as i64),
            ("itr_256ns", itr_reg as i64),
            ("written", written.is_some() as i64),
        ]);
        self.last = Some(TraceRow::at(s, values));
        written
    }

    /// The mode-4 watchdog step (the 2004 formula, `ditr_step`): the ITR
    /// written [256 ns].
    fn simplified(&mut self, s: &Sample) -> u32 {
        let (itr, row) = ditr_step(s);
        self.last = Some(row);
        // `adapter->itr` is not updated by the watchdog (it stays 4).
        itr
    }
}

impl Moderator for E1000Itr {
    fn name(&self) -> &'static str {
        "e1000-itr"
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }
    fn watchdog_ics_rxdmt0(&self) -> bool {
        true
    }

    fn initial(&self) -> ModerationParams {
        // `e1000_configure_rx`: ITR written iff itr_setting != 0.
        let itr = match self.mode() {
            ItrMode::Off => 0,
            ItrMode::Simplified => MODE4_CONFIGURE_ITR,
            _ => ints_per_s_to_itr_256ns(self.itr) & ITR_INTERVAL_MASK,
        };
        ModerationParams {
            itr_256ns: Some(itr),
            ..self.timers
        }
    }

    fn invocation(&self) -> Invocation {
        match self.mode() {
            ItrMode::Dynamic | ItrMode::DynamicConservative => Invocation::PerInterrupt,
            ItrMode::Simplified => Invocation::Periodic {
                period: WATCHDOG,
                at_start: true,
            },
            ItrMode::Off | ItrMode::Static(_) => Invocation::Never,
        }
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        let itr = match self.mode() {
            ItrMode::Dynamic | ItrMode::DynamicConservative => {
                ints_per_s_to_itr_256ns(self.set_itr(s)?)
            }
            ItrMode::Simplified => self.simplified(s),
            ItrMode::Off | ItrMode::Static(_) => return None,
        };
        Some(ModerationParams::itr(itr))
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests;
