//! FreeBSD ixl (Intel X710/XL710) dynamic ITR: `ixl_set_queue_rx_itr` and
//! `ixl_set_queue_tx_itr`, and the static `rx_itr`/`tx_itr` tunables.
//!
//! Models (FreeBSD `sys/dev/ixl/ixl_pf_main.c`
//! `ixl_set_queue_rx_itr`, `ixl_configure_rx_itr`, `ixl_save_pf_tunables`,
//! `ixl.h` constants, iflib-era copies): per ring the driver keeps `itr` (the
//! `PFINT_ITRN` value, 2 us units) and a latency state (LOW 0, AVE 1,
//! BULK 2). At interface up `itr` = the tunable (`hw.ixl.rx_itr`, default
//! `IXL_ITR_8K` = 62 = 124 us; TX `IXL_ITR_4K` = 122) is written and the state
//! is AVE. At each queue interrupt, if the ring moved any bytes since the
//! last call:
//!
//! ```text
//! b = bytes / itr                      (bytes per 2 us of the current interval)
//! LOW:  b > 10            -> AVE,  target IXL_ITR_20K (25)
//! AVE:  b > 20            -> BULK, target IXL_ITR_8K  (62)
//!       b <= 10           -> LOW,  target IXL_ITR_100K (5)
//! BULK: b <= 20           -> AVE,  target IXL_ITR_20K
//! otherwise               -> LOW (!), target = itr (no write)
//! if target != itr: itr = min(10*target*itr / (9*target + itr), IXL_MAX_ITR); write
//! ```
//!
//! The state variable starts each call at 0 (LOW), so a call without a
//! transition resets the state to LOW (a code quirk kept here), and the
//! register only moves on transitions: each step is one 10 % move of the
//! rate towards the target (`1/new = 0.9/old + 0.1/target`), so `itr` does
//! not converge to the targets. With dynamic ITR off the driver writes the
//! tunable if the ring's `itr` differs from it (never, after configure).
//! Idle calls (no bytes) change nothing and keep the counters.
//!
//! Invocation: `PerInterrupt`, from the MSI-X queue handler before the
//! deferred RX/TX work; the sample covers the traffic since the previous
//! interrupt (the ring's `bytes` are reset after each non-idle call). The
//! write takes effect at once (no deferral as in igb). The iflib-era handler
//! calls only the RX function; the pre-iflib `ixl_msix_que` called both.
//! `IxlRings` selects RX, TX, or both.
//!
//! Output: `eitr_us` = `itr` x 2 [us] (ixl ITR register unit 2 us), so the
//! algorithm can drive an igb-class EITR in the simulator. X710 keeps a
//! separate ITR per cause index (RX ITR0, TX ITR1) on one vector; an EITR
//! has one interval, so `IxlRings::Both` outputs the smaller of the two (the
//! vector fires as often as its faster cause allows), documented as an
//! approximation.
//!
//! Simplifies: one queue pair; the sysctl handlers that change the tunables
//! at run time; `IXL_ITR_DYNAMIC` flag handling of older trees, where
//! `rxr->itr` started as `0x8000 | rx_itr` (the first dynamic step then
//! divides by 32830). A zero `itr` in dynamic mode would divide by zero in
//! the driver; here the divisor is taken as 1 (and the smoothing then keeps
//! 0). The driver's RX bytes are the received lengths without FCS.
//!
//! Units: `itr` [2 us]; output [1 us]; bytes [bytes]; `b` [bytes / 2 us].

use super::{
    check_range, BuildCtx, FieldError, Invocation, ModerationParams, Moderator, ModeratorConfig,
    PortCaps, Sample, TraceRow,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// ixl.h ITR values [2 us] ("Multiply ITR values by 2 for real ITR value").
pub const IXL_ITR_100K: u32 = 0x0005;
pub const IXL_ITR_20K: u32 = 0x0019;
pub const IXL_ITR_8K: u32 = 0x003E;
pub const IXL_ITR_4K: u32 = 0x007A;
pub const IXL_ITR_1K: u32 = 0x01F4;
/// `IXL_MAX_ITR` of newer trees (older: 0x07FF) [2 us].
pub const IXL_MAX_ITR: u32 = 0x0FF0;
pub const IXL_MAX_ITR_OLD: u32 = 0x07FF;
/// `b` thresholds [bytes per 2 us].
pub const LOW_TO_AVE_BYTES: u64 = 10;
pub const AVE_TO_BULK_BYTES: u64 = 20;

/// `IXL_LOW_LATENCY`, `IXL_AVE_LATENCY`, `IXL_BULK_LATENCY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    Low = 0,
    Ave = 1,
    Bulk = 2,
}

/// Which ring functions the queue interrupt calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IxlRings {
    /// iflib-era `ixl_msix_que`: `ixl_set_queue_rx_itr` only.
    Rx,
    /// `ixl_set_queue_tx_itr` only.
    Tx,
    /// Pre-iflib: both; output the smaller interval.
    #[default]
    Both,
}

/// The latency transition for `b` bytes per 2 us: (new state, target ITR;
/// None = keep the current value). No transition yields LOW (the
/// driver's `rx_latency = 0` default).
pub fn next_latency(latency: Latency, b: u64) -> (Latency, Option<u32>) {
    match latency {
        Latency::Low if b > LOW_TO_AVE_BYTES => (Latency::Ave, Some(IXL_ITR_20K)),
        Latency::Ave if b > AVE_TO_BULK_BYTES => (Latency::Bulk, Some(IXL_ITR_8K)),
        Latency::Ave if b <= LOW_TO_AVE_BYTES => (Latency::Low, Some(IXL_ITR_100K)),
        Latency::Bulk if b <= AVE_TO_BULK_BYTES => (Latency::Ave, Some(IXL_ITR_20K)),
        _ => (Latency::Low, None),
    }
}

/// The "exponential smoothing": `min(10*target*old / (9*target + old),
/// max_itr)`, C int arithmetic truncated to the driver's u16.
pub fn smooth(target: u32, old: u32, max_itr: u32) -> u32 {
    let t = target as u64;
    let o = old as u64;
    let v = (10 * t * o).checked_div(9 * t + o).unwrap_or(0) as u16;
    (v as u32).min(max_itr)
}

/// A ring's moderation state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingItr {
    /// `ring->itr`: the register value [2 us].
    pub itr: u32,
    pub latency: Latency,
    /// The static setting (`vsi->rx_itr_setting`) [2 us].
    pub setting: u32,
}

impl RingItr {
    pub fn new(setting: u32) -> Self {
        RingItr {
            itr: setting,
            latency: Latency::Ave,
            setting,
        }
    }

    /// One `ixl_set_queue_{rx,tx}_itr` call; returns (b, new register value
    /// if written). `b` is -1 when not computed.
    pub fn step(&mut self, bytes: u64, dynamic: bool, max_itr: u32) -> (i64, Option<u32>) {
        if bytes == 0 {
            return (-1, None); // "Idle, do nothing"
        }
        if dynamic {
            let b = bytes / (self.itr.max(1) as u64);
            let (lat, target) = next_latency(self.latency, b);
            self.latency = lat;
            let target = target.unwrap_or(self.itr);
            if target != self.itr {
                self.itr = smooth(target, self.itr, max_itr);
                return (b as i64, Some(self.itr));
            }
            (b as i64, None)
        } else if self.itr != self.setting {
            self.itr = self.setting;
            (-1, Some(self.itr))
        } else {
            (-1, None)
        }
    }
}

/// Tunable check (`ixl_save_pf_tunables`): values above `IXL_MAX_ITR` are
/// replaced by the default.
pub fn check_itr_tunable(value: u32, default: u32) -> u32 {
    if value > IXL_MAX_ITR {
        default
    } else {
        value
    }
}

/// Scenario config of `kind = "ixl"`: FreeBSD ixl dynamic ITR (ITR in 2 us
/// units) driving the chip's EITR.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IxlCfg {
    /// `hw.ixl.dynamic_rx_itr` / `dynamic_tx_itr`.
    #[serde(default = "yes")]
    pub dynamic: bool,
    /// Which ring's algorithm drives the vector: rx, tx or both.
    #[serde(default)]
    pub rings: IxlRings,
    /// Initial RX ITR, `hw.ixl.rx_itr` [2 us units], 0 to `IXL_MAX_ITR`
    /// (4080); default `IXL_ITR_8K`.
    #[serde(default)]
    #[schemars(range(min = 0, max = 4080))]
    pub rx_itr: Option<u32>,
    /// Initial TX ITR, `hw.ixl.tx_itr` [2 us units], 0 to 4080; default `IXL_ITR_4K`.
    #[serde(default)]
    #[schemars(range(min = 0, max = 4080))]
    pub tx_itr: Option<u32>,
}

fn yes() -> bool {
    true
}

impl Default for IxlCfg {
    fn default() -> Self {
        IxlCfg {
            dynamic: true,
            rings: IxlRings::Both,
            rx_itr: None,
            tx_itr: None,
        }
    }
}

impl ModeratorConfig for IxlCfg {
    fn validate(&self, _port: &PortCaps) -> Result<(), FieldError> {
        // `ixl_save_pf_tunables` replaces values above IXL_MAX_ITR by the
        // default; refused here so the value in effect is the one given.
        for (field, v) in [("rx_itr", self.rx_itr), ("tx_itr", self.tx_itr)] {
            if let Some(v) = v {
                check_range(field, v, 0, IXL_MAX_ITR, " [2 us] (IXL_MAX_ITR)")?;
            }
        }
        Ok(())
    }

    fn build(&self, _ctx: &BuildCtx) -> Box<dyn Moderator> {
        Box::new(Ixl::new(self.dynamic, self.rings).with_itr(
            self.rx_itr.unwrap_or(IXL_ITR_8K),
            self.tx_itr.unwrap_or(IXL_ITR_4K),
        ))
    }
}

/// The ixl moderation state of one queue pair.
#[derive(Clone, Debug)]
pub struct Ixl {
    /// `hw.ixl.dynamic_rx_itr` / `dynamic_tx_itr`.
    pub dynamic: bool,
    pub rings: IxlRings,
    pub rx: RingItr,
    pub tx: RingItr,
    pub max_itr: u32,
    last: Option<TraceRow>,
}

impl Ixl {
    /// `dynamic`: the dynamic ITR tunable; `rings`: which ring functions
    /// run; ITR tunables at their defaults (RX `IXL_ITR_8K`, TX `IXL_ITR_4K`).
    pub fn new(dynamic: bool, rings: IxlRings) -> Self {
        Ixl {
            dynamic,
            rings,
            rx: RingItr::new(IXL_ITR_8K),
            tx: RingItr::new(IXL_ITR_4K),
            max_itr: IXL_MAX_ITR,
            last: None,
        }
    }

    /// Set `hw.ixl.rx_itr` / `hw.ixl.tx_itr` [2 us]; out-of-range values
    /// fall back to the defaults like the driver.
    pub fn with_itr(mut self, rx_itr: u32, tx_itr: u32) -> Self {
        self.rx = RingItr::new(check_itr_tunable(rx_itr, IXL_ITR_8K));
        self.tx = RingItr::new(check_itr_tunable(tx_itr, IXL_ITR_4K));
        self
    }

    /// The register value that drives the EITR [2 us].
    fn effective_itr(&self) -> u32 {
        match self.rings {
            IxlRings::Rx => self.rx.itr,
            IxlRings::Tx => self.tx.itr,
            IxlRings::Both => self.rx.itr.min(self.tx.itr),
        }
    }
}

/// ixl register value [2 us] -> EITR interval [1 us].
pub fn ixl_itr_to_us(itr_2us: u32) -> u32 {
    itr_2us * 2
}

impl Moderator for Ixl {
    fn name(&self) -> &'static str {
        "ixl"
    }

    fn initial(&self) -> ModerationParams {
        // `ixl_configure_{rx,tx}_itr` writes the tunables.
        ModerationParams::eitr(ixl_itr_to_us(self.effective_itr()))
    }

    fn invocation(&self) -> Invocation {
        Invocation::PerInterrupt
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        let (rx_b, rx_w) = if self.rings != IxlRings::Tx {
            self.rx.step(s.rx_bytes, self.dynamic, self.max_itr)
        } else {
            (-1, None)
        };
        let (tx_b, tx_w) = if self.rings != IxlRings::Rx {
            self.tx.step(s.tx_bytes, self.dynamic, self.max_itr)
        } else {
            (-1, None)
        };
        let written = rx_w.is_some() || tx_w.is_some();
        let us = ixl_itr_to_us(self.effective_itr());
        self.last = Some(TraceRow::at(
            s,
            vec![
                ("rx_bytes", s.rx_bytes as i64),
                ("rx_b_per_2us", rx_b),
                ("rx_latency", self.rx.latency as i64),
                ("rx_itr_2us", self.rx.itr as i64),
                ("tx_bytes", s.tx_bytes as i64),
                ("tx_b_per_2us", tx_b),
                ("tx_latency", self.tx.latency as i64),
                ("tx_itr_2us", self.tx.itr as i64),
                ("eitr_us", us as i64),
                ("written", written as i64),
            ],
        ));
        written.then_some(ModerationParams::eitr(us))
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil;
    use super::Latency::*;
    use super::*;

    /// Interrupt `k` (100 us apart) with `bytes` of RX in full 1514-B frames.
    fn rx(k: u64, bytes: u64) -> Sample {
        testutil::sample(k * 100_000, (0, 0), (bytes.div_ceil(1514), bytes))
    }

    #[test]
    fn constants_and_units() {
        // ixl.h constants in 2 us units: 100K = 10 us, 20K = 50 us, 8K = 124 us,
        // 4K = 244 us, 1K = 1000 us.
        let table = [
            (IXL_ITR_100K, 10),
            (IXL_ITR_20K, 50),
            (IXL_ITR_8K, 124),
            (IXL_ITR_4K, 244),
            (IXL_ITR_1K, 1000),
            (IXL_MAX_ITR, 8160),
        ];
        for (reg, us) in table {
            assert_eq!(ixl_itr_to_us(reg), us);
        }
    }

    #[test]
    fn latency_transitions_follow_the_thresholds() {
        // ixl_set_queue_rx_itr switch: LOW b > 10 -> AVE/20K; AVE b > 20 -> BULK/8K, b <= 10 ->
        // LOW/100K; BULK b <= 20 -> AVE/20K; otherwise the state becomes LOW
        // (rx_latency starts at 0) and the target is the current itr.
        let table = [
            (Low, 11, Ave, Some(IXL_ITR_20K)),
            (Low, 10, Low, None),
            (Low, 0, Low, None),
            (Ave, 21, Bulk, Some(IXL_ITR_8K)),
            (Ave, 20, Low, None), // quirk: 10 < b <= 20 resets to LOW
            (Ave, 11, Low, None),
            (Ave, 10, Low, Some(IXL_ITR_100K)),
            (Bulk, 20, Ave, Some(IXL_ITR_20K)),
            (Bulk, 21, Low, None), // quirk: staying bulk resets to LOW
        ];
        for (lat, b, want_lat, want_target) in table {
            assert_eq!(
                next_latency(lat, b),
                (want_lat, want_target),
                "{lat:?} b={b}"
            );
        }
    }

    #[test]
    fn smoothing_is_a_tenth_in_the_rate_domain() {
        // ixl_set_queue_rx_itr: v = 10*target*old / (9*target + old), integer; 1/v = 0.9/old +
        // 0.1/target. Hand values: (5, 62) -> 3100/107 = 28; (25, 28) ->
        // 7000/253 = 27; (62, 27) -> 16740/585 = 28; (5, 27) -> 1350/72 = 18;
        // (25, 62) -> 15500/287 = 54; (62, 25) -> 15500/583 = 26; clamp:
        // (4000, 65535) -> 2621400000/101535 = 25817 -> IXL_MAX_ITR 4080.
        let table = [
            (5, 62, 28),
            (25, 28, 27),
            (62, 27, 28),
            (5, 27, 18),
            (25, 62, 54),
            (62, 25, 26),
            (4000, 65_535, IXL_MAX_ITR),
        ];
        for (target, old, want) in table {
            assert_eq!(
                smooth(target, old, IXL_MAX_ITR),
                want,
                "{target} from {old}"
            );
        }
    }

    #[test]
    fn tunables_are_range_checked() {
        // ixl_save_pf_tunables: 0..=IXL_MAX_ITR accepted, else the default.
        let m = Ixl::new(false, IxlRings::Rx).with_itr(0x1000, 0x0FF0);
        assert_eq!((m.rx.itr, m.tx.itr), (IXL_ITR_8K, IXL_MAX_ITR));
        let m = Ixl::new(false, IxlRings::Rx).with_itr(0, 5);
        assert_eq!((m.rx.itr, m.tx.itr), (0, 5));
    }

    #[test]
    fn initial_and_static_mode() {
        // ixl_configure_rx_itr writes rx_itr (62 -> 124 us); without dynamic
        // ITR the register already equals the setting: no further writes.
        let mut m = Ixl::new(false, IxlRings::Rx);
        assert_eq!(m.initial().eitr_us, Some(124));
        assert_eq!(m.invocation(), Invocation::PerInterrupt);
        assert_eq!(m.name(), "ixl");
        assert_eq!(m.on_sample(&rx(1, 100_000)), None);
        assert_eq!(m.on_sample(&rx(2, 98)), None);
        // Both rings: the smaller of 8K (124 us) and 4K (244 us).
        assert_eq!(Ixl::new(true, IxlRings::Both).initial().eitr_us, Some(124));
        assert_eq!(Ixl::new(true, IxlRings::Tx).initial().eitr_us, Some(244));
    }

    #[test]
    fn idle_ping_bulk_ping_sequence() {
        // Dynamic RX, defaults (itr 62, AVE). Hand-derived from ixl_set_queue_rx_itr:
        //  1 idle: nothing.
        //  2 ping 98 B: b = 98/62 = 1 <= 10 -> LOW, target 5: 28 (56 us).
        //  3 ping: b = 98/28 = 3; LOW stays (no transition): no write.
        //  4 bulk 60560 B: b = 60560/28 = 2162 > 10 -> AVE, 25: 27 (54 us).
        //  5 bulk: b = 2242 > 20 -> BULK, 62: 16740/585 = 28 (56 us).
        //  6 bulk: BULK, b > 20: no transition -> LOW, no write.
        //  7 bulk: LOW, b > 10 -> AVE, 25: 27 (54 us).
        //  8 ping: AVE, b = 98/27 = 3 <= 10 -> LOW, 5: 1350/72 = 18 (36 us).
        //  9 ping: LOW, no transition: no write.
        let steps = [
            (0, None),
            (98, Some(56)),
            (98, None),
            (60_560, Some(54)),
            (60_560, Some(56)),
            (60_560, None),
            (60_560, Some(54)),
            (98, Some(36)),
            (98, None),
        ];
        let mut m = Ixl::new(true, IxlRings::Rx);
        for (k, (bytes, want)) in steps.into_iter().enumerate() {
            let got = m.on_sample(&rx(k as u64, bytes)).and_then(|p| p.eitr_us);
            assert_eq!(got, want, "step {}", k + 1);
        }
        assert_eq!(m.rx.latency, Low);
        assert_eq!(m.last_decision().unwrap().values[1], ("rx_b_per_2us", 5));
        // TX bytes are ignored by the RX-only handler.
        let mut m = Ixl::new(true, IxlRings::Rx);
        let s = Sample {
            tx_bytes: 100_000,
            ..Default::default()
        };
        assert_eq!(m.on_sample(&s), None);
    }

    #[test]
    fn both_rings_output_the_smaller_interval() {
        // TX ring (itr 122, AVE) with 98 B: b = 0 -> LOW, target 5:
        // 10*5*122/(45+122) = 6100/167 = 36; RX idle stays 62. min(62, 36)
        // = 36 -> 72 us.
        let mut m = Ixl::new(true, IxlRings::Both);
        let s = Sample {
            tx_bytes: 98,
            tx_packets: 1,
            ..Default::default()
        };
        assert_eq!(m.on_sample(&s).unwrap().eitr_us, Some(72));
        assert_eq!((m.rx.itr, m.tx.itr), (62, 36));
    }
}
