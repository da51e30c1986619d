//! Linux e1000 5.x (2004) `InterruptThrottleRate`: static, off, or the
//! watchdog-driven "dynamic ITR" (DITR).
//!
//! Models (Linux e1000 5.2.52-k3 `e1000_main.c` `e1000_watchdog` and
//! `e1000_param.c`): the watchdog runs every 2 s (first run at interface
//! up). In dynamic mode it takes the 2-second deltas of the good-octets
//! counters (low 32 bits, GOTCL/GORCL) and writes
//!
//! ```text
//! goc  = (tx + rx) / 10000                 (u32, units of 10 kB)
//! dif  = |tx - rx| / 10000
//! rate = goc > 0 ? dif * 6000 / goc + 2000 : 8000     (int/s, 2000..8000)
//! ITR  = 1e9 / (rate * 256)
//! ```
//!
//! Symmetric traffic gives 2000/s, one-directional 8000/s, idle 8000/s.
//! In dynamic mode ITR is 0 (unthrottled) until the first watchdog run.
//! Parameter handling: unset -> 1 (dynamic); 0 -> off; 1 -> dynamic; other
//! values range-checked to 100..=100000, invalid ones replaced by 8000.
//! The 5.x timer defaults: TIDV 64, TADV 64, RDTR 0, RADV 128 [1.024 us].
//!
//! Simplifies: nothing else of the watchdog (link checks, IFS tuning, TX-hang
//! detection) is modelled here; its `ICS = RXDMT0` software interrupt every
//! 2 s is done by the driver model.
//!
//! Units: octets [bytes], rates [int/s], ITR [256 ns].

use super::{
    check_range, BuildCtx, FieldError, Invocation, LiveChange, ModerationParams, Moderator,
    ModeratorConfig, PortCaps, Sample, Throttle, TraceRow,
};
use crate::units::{ints_per_s_to_itr_256ns, Nanos};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// e1000 5.x watchdog period.
pub const WATCHDOG: Nanos = Nanos::from_secs(2);
/// `DEFAULT_ITR`, the fallback for out-of-range values.
pub const DEFAULT_ITR: u32 = 8000;

/// The mode an `InterruptThrottleRate` value selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItrMode {
    Off,
    Dynamic,
    Static(u32),
}

/// e1000 5.x option validation of `InterruptThrottleRate` (None = unset).
pub fn itr_mode(param: Option<u32>) -> ItrMode {
    match param {
        None | Some(1) => ItrMode::Dynamic,
        Some(0) => ItrMode::Off,
        Some(v) if (100..=100_000).contains(&v) => ItrMode::Static(v),
        Some(_) => ItrMode::Static(DEFAULT_ITR),
    }
}

/// The DITR formula: (goc, dif, rate [int/s]) from the 2-s octet deltas.
pub fn ditr(tx_octets: u32, rx_octets: u32) -> (u32, u32, u32) {
    let goc = tx_octets.wrapping_add(rx_octets) / 10_000;
    let dif = tx_octets.abs_diff(rx_octets) / 10_000;
    // goc == 0 (idle) -> 8000.
    let rate = (dif * 6000).checked_div(goc).map_or(8000, |r| r + 2000);
    (goc, dif, rate)
}

/// One DITR decision on a sample: the formula on the octet deltas (low 32
/// bits, as GOTCL/GORCL hold them), the ITR to write [256 ns] and its trace
/// row. Shared by the 5.x watchdog in dynamic mode and by e1000 >= 7.3
/// mode 4 (`super::e1000_itr`); they differ only around it: 5.x starts
/// unthrottled (ITR 0) until the first run, 7.3 starts from
/// `MODE4_CONFIGURE_ITR` and leaves `adapter->itr` at 4.
pub fn ditr_step(s: &Sample) -> (u32, TraceRow) {
    let (goc, dif, rate) = ditr(s.tx_bytes as u32, s.rx_bytes as u32);
    let itr = ints_per_s_to_itr_256ns(rate);
    let row = TraceRow::at(
        s,
        vec![
            ("goc", goc as i64),
            ("dif", dif as i64),
            ("rate_per_s", rate as i64),
            ("itr_256ns", itr as i64),
        ],
    );
    (itr, row)
}

/// Scenario config of `kind = "e1000-5x"`: Linux e1000 5.x (2004)
/// `InterruptThrottleRate` 1 = dynamic (the 2-s watchdog goc/dif formula,
/// the default when unset), 0 = off, 100..100000 = static; other values fall
/// back to 8000 as the driver does. Timer parameters keep the driver's names
/// and 5.x defaults [1.024 us]; `e1000_param.c` bounds each to 0..=0xFFFF
/// (`MAX_RXDELAY`, `MAX_RXABSDELAY`, `MAX_TXDELAY`, `MAX_TXABSDELAY`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct E1000LegacyCfg {
    #[serde(default)]
    pub interrupt_throttle_rate: Option<u32>,
    #[serde(default)]
    #[schemars(range(min = 0, max = 65_535))]
    pub rx_int_delay: u32,
    #[serde(default = "d_radv_5x")]
    #[schemars(range(min = 0, max = 65_535))]
    pub rx_abs_int_delay: u32,
    #[serde(default = "d_tx_5x")]
    #[schemars(range(min = 0, max = 65_535))]
    pub tx_int_delay: u32,
    #[serde(default = "d_tx_5x")]
    #[schemars(range(min = 0, max = 65_535))]
    pub tx_abs_int_delay: u32,
}

fn d_radv_5x() -> u32 {
    128
}
fn d_tx_5x() -> u32 {
    64
}

impl Default for E1000LegacyCfg {
    fn default() -> Self {
        E1000LegacyCfg {
            interrupt_throttle_rate: None,
            rx_int_delay: 0,
            rx_abs_int_delay: d_radv_5x(),
            tx_int_delay: d_tx_5x(),
            tx_abs_int_delay: d_tx_5x(),
        }
    }
}

/// The four delay timers of e1000/e1000e `e1000_param.c`, in register order
/// (RDTR, RADV, TIDV, TADV): each 0 to 0xFFFF [1.024 us] (16-bit fields);
/// an error names the module-parameter field (`super::E1000_TIMERS`).
/// Shared by `e1000-5x` and `e1000-itr`, whose parameters have the same
/// names and bounds (only the defaults differ).
pub(crate) fn check_delay_timers(timers: [u32; 4]) -> Result<(), FieldError> {
    for ((_, field), v) in super::E1000_TIMERS.iter().zip(timers) {
        check_range(
            field,
            v,
            0,
            0xFFFF,
            " [1.024 us] (16-bit register; e1000_param.c bounds)",
        )?;
    }
    Ok(())
}

/// The register settings of the four delay timers in register order (RDTR,
/// RADV, TIDV, TADV) [1.024 us], ITR left as it is.
pub(crate) fn delay_timer_params([rdtr, radv, tidv, tadv]: [u32; 4]) -> ModerationParams {
    ModerationParams {
        rdtr_1024ns: Some(rdtr),
        radv_1024ns: Some(radv),
        tidv_1024ns: Some(tidv),
        tadv_1024ns: Some(tadv),
        ..Default::default()
    }
}

impl E1000LegacyCfg {
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

impl ModeratorConfig for E1000LegacyCfg {
    /// Static for a fixed `InterruptThrottleRate` or 0 (off); not for the
    /// watchdog's dynamic ITR (1, or unset).
    fn interval_is_static(&self) -> bool {
        !matches!(itr_mode(self.interrupt_throttle_rate), ItrMode::Dynamic)
    }

    fn validate(&self, port: &PortCaps) -> Result<(), FieldError> {
        if port.throttle != Throttle::Itr256ns {
            return Err(FieldError::new(
                "kind",
                format!("\"e1000-5x\" drives the 8254x ITR register; chip {} has EITR: use an e1000-family chip (82540, 82546)", port.chip),
            ));
        }
        check_delay_timers(self.timers())
    }

    /// Nothing changes at run time: e1000 5.x reads `InterruptThrottleRate`
    /// and the delay timers as module parameters at load
    /// (`e1000_param.c`) and has no ethtool coalescing call.
    fn live_change(&self, field: &str) -> Result<LiveChange, String> {
        Err(format!(
            "`{field}` is an e1000 5.x module parameter, read when the driver loads \
             (e1000_param.c); that driver has no ethtool coalescing call"
        ))
    }

    fn config_field(&self, param: &str) -> Option<&'static str> {
        super::e1000_timer_field(param)
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Moderator> {
        let [rdtr, radv, tidv, tadv] = self.timers();
        Box::new(E1000Legacy::new(
            self.interrupt_throttle_rate,
            rdtr,
            radv,
            tidv,
            tadv,
        ))
    }
}

/// The e1000 5.x moderation state.
#[derive(Clone, Debug)]
pub struct E1000Legacy {
    pub mode: ItrMode,
    pub timers: ModerationParams,
    last: Option<TraceRow>,
}

impl E1000Legacy {
    /// `itr_param`: the module parameter (None = unset); timer values in 1.024 us.
    pub fn new(itr_param: Option<u32>, rdtr: u32, radv: u32, tidv: u32, tadv: u32) -> Self {
        E1000Legacy {
            mode: itr_mode(itr_param),
            timers: delay_timer_params([rdtr, radv, tidv, tadv]),
            last: None,
        }
    }
}

impl Moderator for E1000Legacy {
    fn name(&self) -> &'static str {
        "e1000-5x"
    }
    fn watchdog_ics_rxdmt0(&self) -> bool {
        true
    }

    fn initial(&self) -> ModerationParams {
        let itr = match self.mode {
            // ITR is written at configure time only if itr > 1.
            ItrMode::Off | ItrMode::Dynamic => 0,
            ItrMode::Static(r) => ints_per_s_to_itr_256ns(r),
        };
        ModerationParams {
            itr_256ns: Some(itr),
            ..self.timers
        }
    }

    fn invocation(&self) -> Invocation {
        Invocation::Periodic {
            period: WATCHDOG,
            at_start: true,
        }
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        if self.mode != ItrMode::Dynamic {
            return None;
        }
        let (itr, row) = ditr_step(s);
        self.last = Some(row);
        Some(ModerationParams::itr(itr))
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil;
    use super::*;

    #[test]
    fn parameter_validation_follows_e1000_param_c() {
        // `e1000_check_options` (5.2.52-k3 `e1000_param.c`).
        let table = [
            (None, ItrMode::Dynamic),
            (Some(1), ItrMode::Dynamic),
            (Some(0), ItrMode::Off),
            (Some(8000), ItrMode::Static(8000)),
            (Some(100), ItrMode::Static(100)),
            (Some(100_000), ItrMode::Static(100_000)),
            (Some(99), ItrMode::Static(8000)),
            (Some(100_001), ItrMode::Static(8000)),
        ];
        for (p, want) in table {
            assert_eq!(itr_mode(p), want, "{p:?}");
        }
    }

    #[test]
    fn ditr_formula_reproduces_the_seed_trace() {
        // Log of the linux-kernel post "abysmal e1000 performance (DITR)",
        // 25 May 2004: goc(10558=5299+5258) dif(41) -> 2023, ritr 1930;
        // goc(9996=5228+4768) dif(459) -> 2275, ritr 1717; goc(0) -> 8000, ritr 488.
        // The counters are in bytes; the log prints them /10000, each part
        // truncated on its own, so the parts (5299 + 5258 = 10557) may sum
        // to one less than goc. Octets 52 995 000 + 52 585 000 = 105 580 000
        // give the logged goc 10558, the parts 5299 and 5258, and a
        // difference of 410 000 -> dif 41.
        let (goc, dif, rate) = ditr(52_995_000, 52_585_000);
        assert_eq!((goc, dif, rate), (10_558, 41, 2023));
        assert_eq!(ints_per_s_to_itr_256ns(rate), 1930);
        // 52 279 999 + 47 685 000 = 99 964 999 -> goc 9996; difference
        // 4 594 999 -> dif 459 (the log's values).
        let (goc, dif, rate) = ditr(52_279_999, 47_685_000);
        assert_eq!((goc, dif, rate), (9996, 459, 2275));
        assert_eq!(ints_per_s_to_itr_256ns(rate), 1717);
        assert_eq!(ditr(0, 0), (0, 0, 8000));
        assert_eq!(ints_per_s_to_itr_256ns(8000), 488);
        // Symmetric traffic -> 2000/s (ITR 1953); one-directional -> 8000/s;
        // 3:1 -> dif/goc = 1/2 -> 5000/s (from the formula).
        assert_eq!(ditr(1_000_000, 1_000_000).2, 2000);
        assert_eq!(ints_per_s_to_itr_256ns(2000), 1953);
        assert_eq!(ditr(1_000_000, 0).2, 8000);
        assert_eq!(ditr(3_000_000, 1_000_000).2, 5000);
    }

    #[test]
    fn dynamic_mode_starts_unthrottled_and_rewrites_itr_each_watchdog() {
        let mut m = E1000Legacy::new(None, 0, 128, 64, 64);
        let p = m.initial();
        assert_eq!(p.itr_256ns, Some(0));
        assert_eq!(
            (p.rdtr_1024ns, p.radv_1024ns, p.tidv_1024ns, p.tadv_1024ns),
            (Some(0), Some(128), Some(64), Some(64))
        );
        assert_eq!(
            m.invocation(),
            Invocation::Periodic {
                period: WATCHDOG,
                at_start: true
            }
        );
        let s = testutil::watchdog_octets(50_000_000, 50_000_000);
        assert_eq!(m.on_sample(&s).unwrap().itr_256ns, Some(1953));
        assert_eq!(m.last_decision().unwrap().values[2], ("rate_per_s", 2000));
    }

    #[test]
    fn static_and_off_modes_never_change_itr() {
        let mut m = E1000Legacy::new(Some(8000), 0, 128, 64, 64);
        assert_eq!(m.initial().itr_256ns, Some(488));
        assert_eq!(m.on_sample(&Sample::default()), None);
        let mut m = E1000Legacy::new(Some(0), 0, 128, 64, 64);
        assert_eq!(m.initial().itr_256ns, Some(0));
        assert_eq!(m.on_sample(&Sample::default()), None);
    }
}
