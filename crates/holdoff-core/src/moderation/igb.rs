//! Linux igb (82575/82576/I350/I210) interrupt moderation: the latency-class
//! path (`igb_update_itr` + `igb_set_itr`, one q_vector) and the
//! average-wire-size path (`igb_update_ring_itr`, several q_vectors or VFs),
//! plus the static and "off" settings; the EITR write deferred to the next
//! interrupt.
//!
//! Models (I210 datasheet §8.8.14 EITR; Linux `igb_main.c@000ba1f`
//! `igb_ring_irq_enable`,
//! `igb_set_itr`, `igb_update_itr`, `igb_update_ring_itr`, `igb_write_itr`,
//! `igb_assign_vector`, `igb_alloc_q_vector`; `igb_ethtool.c` coalesce):
//!
//! - Setting (`rx_itr_setting`, from ethtool rx-usecs; the upstream driver
//!   has no module parameter): unset -> 3 (`IGB_DEFAULT_ITR`, dynamic
//!   conservative); 1 -> dynamic; 3 -> dynamic conservative; 0 -> off;
//!   10..=10000 us -> static `usecs << 2` (raw EITR units of 0.25 us).
//!   ethtool rejects 2, 4..9 and > 10000 with -EINVAL; here they keep the
//!   default 3 (see `itr_setting`).
//! - State per q_vector: `itr_val` (raw, 0.25 us), `set_itr`, and the TX and
//!   RX container classes. `itr_val` starts at `IGB_START_ITR` (648, 162 us)
//!   for settings 1..=3 and at the setting itself otherwise; `set_itr = 1`
//!   at configure time, so nothing is written at interface up (EITR keeps
//!   its reset value 0) and the first interrupt writes `itr_val`.
//! - At NAPI completion, if `setting & 3`: the latency-class path runs the
//!   e1000 class machine (`super::e1000_itr::update_class`) with a bulk ->
//!   low threshold of 1500 B, takes the bulkier class, applies the
//!   conservative clamp to that *result* only (the containers may stay in
//!   lowest), and maps it to 56 / 196 / 980 raw (70K / 20K / 4K); the
//!   "smoothing" term `max(new * old / (new + old/4), new)` always equals
//!   `new`, so both directions jump. The ring path computes
//!   `max(rx_bytes/rx_packets, tx_bytes/tx_packets) + 24`, caps it at 3000,
//!   divides by 3 for 300 < avg < 1200 (else by 2), and floors the result at
//!   196 in conservative mode. Link speed != 1000 Mb/s gives 980 on both
//!   paths. Both only store `itr_val` and set `set_itr`.
//! - `igb_write_itr` at the start of the next interrupt writes
//!   `raw = itr_val & 0x7FFC` (0 becomes 4) with CNT_IGNR (82576+) or
//!   `raw | raw << 16` (82575).
//!
//! Invocation and the deferred write: `PerInterrupt`. The call at interrupt
//! k first does `igb_write_itr` (returns the value stored by the call at
//! interrupt k-1, or at configure time for k = 1) and then runs the
//! completion-time update on the sample, storing the result for the call at
//! interrupt k+1. So the decision taken from sample k is returned at
//! interrupt k+1, as the driver writes it at the start of the interrupt
//! after the NAPI run that decided it. A call that has nothing pending
//! returns `None`.
//!
//! Output: `eitr_us` = the EITR Interval field, `(raw & 0x7FFC) >> 2` [1 us]
//! (82576/I350/I210). On an 82575 the same raw value is the interval in
//! 256 ns units; the NIC model converts `eitr_us` for such chips.
//!
//! Simplifies: one setting for both directions (the driver uses
//! `tx_itr_setting` for TX-only vectors); the VF condition is folded into
//! the `multi_vector` flag; DMA coalescing and the 82575 counter half are
//! not modelled. The driver's RX byte count excludes the FCS; TX bytes are
//! wire-equivalent payload (TSO segments with replicated headers).
//!
//! Units: `itr_val` raw [0.25 us]; output [1 us]; bytes [bytes].

use super::e1000_itr::{class_trace, update_class, LatencyClass};
use super::{
    BuildCtx, FieldError, Invocation, LiveChange, ModerationParams, Moderator, ModeratorConfig,
    PortCaps, Sample, Throttle, TraceRow,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `IGB_START_ITR` "~6000 ints/sec" [raw 0.25 us] (162 us).
pub const IGB_START_ITR: u32 = 648;
/// `IGB_4K_ITR` [raw] (245 us).
pub const IGB_4K_ITR: u32 = 980;
/// `IGB_20K_ITR` [raw] (49 us).
pub const IGB_20K_ITR: u32 = 196;
/// `IGB_70K_ITR` [raw] (14 us).
pub const IGB_70K_ITR: u32 = 56;
/// `IGB_DEFAULT_ITR`: setting 3, dynamic conservative.
pub const IGB_DEFAULT_ITR: u32 = 3;
/// ethtool rx-usecs bounds for a static value [us].
pub const IGB_MIN_ITR_USECS: u32 = 10;
pub const IGB_MAX_ITR_USECS: u32 = 10_000;
/// `igb_write_itr` mask: Interval bits 14:2 of the raw value.
pub const EITR_INTERVAL_MASK: u32 = 0x7FFC;
/// `igb_update_itr` bulk -> low byte threshold (e1000: 6000).
pub const BULK_TO_LOW_BYTES: u64 = 1_500;
/// `igb_update_ring_itr`: "CRC, preamble, and gap" [bytes].
pub const WIRE_OVERHEAD_BYTES: u32 = 24;
/// `igb_update_ring_itr`: "Don't starve jumbo frames" [bytes].
pub const MAX_AVG_WIRE_SIZE: u32 = 3_000;

/// Which completion-time update the driver uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IgbPath {
    /// `igb_set_itr`: exactly one q_vector and no VFs.
    LatencyClass,
    /// `igb_update_ring_itr`: several q_vectors (or VFs).
    RingAverage,
}

/// `rx_itr_setting` from ethtool rx-usecs (None = the driver default).
/// Invalid values (2, 3 < v < 10, > 10000) are rejected by ethtool and the
/// setting stays at the default 3.
pub fn itr_setting(rx_usecs: Option<u32>) -> u32 {
    match rx_usecs {
        None => IGB_DEFAULT_ITR,
        Some(v @ (0 | 1 | 3)) => v,
        Some(v) if (IGB_MIN_ITR_USECS..=IGB_MAX_ITR_USECS).contains(&v) => v << 2,
        Some(_) => IGB_DEFAULT_ITR,
    }
}

/// The q_vector's `itr_val` at allocation: `IGB_START_ITR` for the dynamic
/// settings 1..=3, else the setting (0 or a static raw value).
pub fn initial_itr_val(setting: u32) -> u32 {
    if setting == 0 || setting > 3 {
        setting
    } else {
        IGB_START_ITR
    }
}

/// `igb_write_itr`'s raw interval: `itr_val & 0x7FFC`, 0 replaced by 4.
pub fn eitr_raw(itr_val: u32) -> u32 {
    match itr_val & EITR_INTERVAL_MASK {
        0 => 4,
        v => v,
    }
}

/// The EITR Interval field [1 us] of a raw value (82576+: raw / 4).
pub fn eitr_us(itr_val: u32) -> u32 {
    eitr_raw(itr_val) >> 2
}

/// `igb_set_itr`'s class -> raw value map.
pub fn class_itr(class: LatencyClass) -> u32 {
    match class {
        LatencyClass::Lowest => IGB_70K_ITR,
        LatencyClass::Low => IGB_20K_ITR,
        LatencyClass::Bulk => IGB_4K_ITR,
    }
}

/// `igb_set_itr`'s `set_itr_now` step for `new != itr_val`:
/// `new > old ? max(new * old / (new + old/4), new) : new` (u32, C
/// truncation). The first term is below `new` whenever `new > old`, so the
/// result is always `new`.
pub fn set_itr_smoothing(new: u32, old: u32) -> u32 {
    if new > old {
        (new * old / (new + (old >> 2))).max(new)
    } else {
        new
    }
}

/// `igb_update_ring_itr`'s value for one sample: None if no packets (keep
/// `itr_val`), else (avg wire size used, new raw value).
pub fn ring_itr(
    rx_packets: u64,
    rx_bytes: u64,
    tx_packets: u64,
    tx_bytes: u64,
    conservative: bool,
) -> Option<(u32, u32)> {
    // Directions without packets do not count.
    let mut avg = rx_bytes.checked_div(rx_packets).unwrap_or(0) as u32;
    if let Some(tx_avg) = tx_bytes.checked_div(tx_packets) {
        avg = avg.max(tx_avg as u32);
    }
    if avg == 0 {
        return None;
    }
    let avg = (avg + WIRE_OVERHEAD_BYTES).min(MAX_AVG_WIRE_SIZE);
    // "Give a little boost to mid-size frames".
    let mut new = if avg > 300 && avg < 1200 {
        avg / 3
    } else {
        avg / 2
    };
    if new < IGB_20K_ITR && conservative {
        new = IGB_20K_ITR;
    }
    Some((avg, new))
}

/// Scenario config of `kind = "igb"`: Linux igb ethtool rx-usecs 0 (off), 1
/// (dynamic), 3 (dynamic conservative, default) or a fixed interval 10 to
/// 10000 [us]; other values are refused as `igb_set_coalesce` does
/// (-EINVAL for 2, 4..9 and > `IGB_MAX_ITR_USECS`). The latency-class path
/// (single vector) or `igb_update_ring_itr` (multi-vector), written at the
/// next interrupt.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IgbCfg {
    #[serde(default)]
    #[schemars(range(min = 0, max = 10_000))]
    pub rx_usecs: Option<u32>,
    /// Use `igb_update_ring_itr`; default: when the port has several vectors.
    #[serde(default)]
    pub multi_vector: Option<bool>,
}

impl ModeratorConfig for IgbCfg {
    /// Static for `rx_usecs` 0 (off) or a fixed 10 to 10000 us; not for the
    /// dynamic modes 1 and 3 (nor unset, which is 3).
    fn interval_is_static(&self) -> bool {
        self.rx_usecs.is_some_and(|v| !matches!(v, 1 | 3))
    }

    fn validate(&self, port: &PortCaps) -> Result<(), FieldError> {
        if port.throttle == Throttle::Itr256ns {
            return Err(FieldError::new(
                "kind",
                format!("\"igb\" drives a per-vector EITR; chip {} has only ITR: use 82574, 82576, i350, i210 or i211", port.chip),
            ));
        }
        if let Some(v) = self.rx_usecs {
            let ok = matches!(v, 0 | 1 | 3) || (IGB_MIN_ITR_USECS..=IGB_MAX_ITR_USECS).contains(&v);
            if !ok {
                return Err(FieldError::new(
                    "rx_usecs",
                    format!("got {v}; allowed: 0 (off), 1 (dynamic), 3 (dynamic conservative) or 10 to 10000 us (igb_set_coalesce refuses the rest)"),
                ));
            }
        }
        Ok(())
    }

    /// `rx_usecs` changes as `ethtool -C rx-usecs` does (`igb_set_coalesce`,
    /// Linux `igb_ethtool.c`): `rx_itr_setting` and `q_vector->itr_val`
    /// (`IGB_START_ITR` for the dynamic modes) are set and `set_itr` asks
    /// for an EITR write at the vector's next interrupt; the latency
    /// classes are kept. `multi_vector` follows the adapter's vectors.
    fn live_change(&self, field: &str) -> Result<LiveChange, String> {
        match field {
            "rx_usecs" => Ok(LiveChange::Retune),
            _ => Err(format!(
                "`{field}` follows the adapter's vector layout, fixed when the interface \
                 comes up; only rx_usecs changes at run time (ethtool -C)"
            )),
        }
    }

    fn retune(&self, m: &mut dyn Moderator) -> Option<ModerationParams> {
        let q = m.as_any_mut()?.downcast_mut::<Igb>()?;
        q.setting = itr_setting(self.rx_usecs);
        q.itr_val = initial_itr_val(q.setting);
        q.set_itr = true;
        None
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        Box::new(
            Igb::new(self.rx_usecs, self.multi_vector.unwrap_or(ctx.vectors > 1))
                .with_link_mbps(ctx.link_mbps),
        )
    }
}

/// The igb per-q_vector moderation state.
#[derive(Clone, Debug)]
pub struct Igb {
    pub path: IgbPath,
    /// `rx_itr_setting`: 0, 1, 3, or a static raw value (usecs << 2).
    pub setting: u32,
    /// `q_vector->itr_val` [raw 0.25 us].
    pub itr_val: u32,
    /// `q_vector->set_itr`: write `itr_val` at the next interrupt.
    pub set_itr: bool,
    pub tx_class: LatencyClass,
    pub rx_class: LatencyClass,
    /// Link speed [Mb/s]; anything but 1000 gives `IGB_4K_ITR`.
    pub link_mbps: u32,
    last: Option<TraceRow>,
}

impl Igb {
    /// `rx_usecs`: ethtool rx-usecs (None = driver default 3);
    /// `multi_vector`: the adapter has more than one q_vector (or VFs), so
    /// the driver uses `igb_update_ring_itr`.
    pub fn new(rx_usecs: Option<u32>, multi_vector: bool) -> Self {
        let setting = itr_setting(rx_usecs);
        Igb {
            path: if multi_vector {
                IgbPath::RingAverage
            } else {
                IgbPath::LatencyClass
            },
            setting,
            itr_val: initial_itr_val(setting),
            // `igb_assign_vector`: "configure q_vector to set itr on first
            // interrupt".
            set_itr: true,
            // Zero-allocated containers: lowest_latency.
            tx_class: LatencyClass::Lowest,
            rx_class: LatencyClass::Lowest,
            link_mbps: 1000,
            last: None,
        }
    }

    /// Set the link speed [Mb/s].
    pub fn with_link_mbps(mut self, mbps: u32) -> Self {
        self.link_mbps = mbps;
        self
    }

    fn dynamic(&self) -> bool {
        self.setting & 3 != 0
    }

    fn conservative(&self) -> bool {
        self.setting == 3
    }

    /// `igb_set_itr`: returns (class used, avg = -1).
    fn set_itr_path(&mut self, s: &Sample) -> (i64, i64) {
        let new = if self.link_mbps != 1000 {
            IGB_4K_ITR
        } else {
            self.tx_class =
                update_class(self.tx_class, s.tx_packets, s.tx_bytes, BULK_TO_LOW_BYTES);
            self.rx_class =
                update_class(self.rx_class, s.rx_packets, s.rx_bytes, BULK_TO_LOW_BYTES);
            let mut current = self.rx_class.max(self.tx_class);
            // Conservative mode eliminates lowest latency (on the result).
            if current == LatencyClass::Lowest && self.conservative() {
                current = LatencyClass::Low;
            }
            let new = class_itr(current);
            if new != self.itr_val {
                self.store(set_itr_smoothing(new, self.itr_val));
            }
            return (current as i64, -1);
        };
        if new != self.itr_val {
            self.store(new);
        }
        (-1, -1)
    }

    /// `igb_update_ring_itr`: returns (class = -1, avg wire size or 0).
    fn ring_path(&mut self, s: &Sample) -> (i64, i64) {
        if self.link_mbps != 1000 {
            if IGB_4K_ITR != self.itr_val {
                self.store(IGB_4K_ITR);
            }
            return (-1, 0);
        }
        match ring_itr(
            s.rx_packets,
            s.rx_bytes,
            s.tx_packets,
            s.tx_bytes,
            self.conservative(),
        ) {
            None => (-1, 0),
            Some((avg, new)) => {
                if new != self.itr_val {
                    self.store(new);
                }
                (-1, avg as i64)
            }
        }
    }

    fn store(&mut self, new: u32) {
        self.itr_val = new;
        self.set_itr = true;
    }
}

impl Moderator for Igb {
    fn name(&self) -> &'static str {
        "igb"
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn initial(&self) -> ModerationParams {
        // Nothing is written at configure time: EITR keeps its reset value 0
        // until the first interrupt writes `itr_val`.
        ModerationParams::eitr(0)
    }

    fn invocation(&self) -> Invocation {
        Invocation::PerInterrupt
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        // 1. `igb_write_itr` at the start of this interrupt.
        let written = if self.set_itr {
            self.set_itr = false;
            Some(eitr_us(self.itr_val))
        } else {
            None
        };
        // 2. The NAPI completion of this interrupt (on the sample's totals);
        //    its result waits for the next interrupt.
        let (class, avg) = if !self.dynamic() {
            (-1, -1)
        } else {
            match self.path {
                IgbPath::LatencyClass => self.set_itr_path(s),
                IgbPath::RingAverage => self.ring_path(s),
            }
        };
        let mut values = class_trace(s, self.tx_class, self.rx_class);
        values.extend([
            ("class", class),
            ("avg_wire_size", avg),
            ("itr_val_raw", self.itr_val as i64),
            ("pending", self.set_itr as i64),
            ("eitr_us_written", written.map_or(-1, |v| v as i64)),
        ]);
        self.last = Some(TraceRow::at(s, values));
        written.map(ModerationParams::eitr)
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::sample;
    use super::LatencyClass::*;
    use super::*;

    #[test]
    fn config_refuses_what_igb_set_coalesce_refuses() {
        // igb_set_coalesce returns -EINVAL for 2, 4..9 and above
        // IGB_MAX_ITR_USECS (10000); 0, 1, 3 and 10..=10000 pass.
        let port = PortCaps {
            chip: "82576",
            throttle: Throttle::Eitr1us,
        };
        let cfg = |v| IgbCfg {
            rx_usecs: Some(v),
            multi_vector: None,
        };
        for ok in [0, 1, 3, 10, 10_000] {
            assert!(cfg(ok).validate(&port).is_ok(), "{ok}");
        }
        for bad in [2, 4, 5, 9, 10_001] {
            assert_eq!(cfg(bad).validate(&port).unwrap_err().field, "rx_usecs");
        }
        // An ITR-only chip has no per-vector EITR for igb to drive.
        let itr_port = PortCaps {
            chip: "82546",
            throttle: Throttle::Itr256ns,
        };
        assert_eq!(cfg(3).validate(&itr_port).unwrap_err().field, "kind");
    }

    /// One interrupt's traffic: ((tx packets, tx bytes), (rx packets, rx bytes)).
    type Step = ((u64, u64), (u64, u64));

    fn run(m: &mut Igb, steps: &[Step]) -> Vec<Option<u32>> {
        steps
            .iter()
            .enumerate()
            .map(|(k, &(tx, rx))| {
                m.on_sample(&sample(k as u64 * 100_000, tx, rx))
                    .and_then(|p| p.eitr_us)
            })
            .collect()
    }

    #[test]
    fn settings_follow_ethtool_coalesce() {
        // igb_set_coalesce / igb_alloc_q_vector: 1 or 3 -> dynamic, else usecs << 2;
        // 0 -> 0; valid static 10..10000 us; default IGB_DEFAULT_ITR 3.
        // itr_val starts at IGB_START_ITR for 1..3, else the setting;
        // igb_write_itr writes itr_val & 0x7FFC, 0 -> 4 (1 us).
        let table = [
            (None, 3, 648, 162),
            (Some(3), 3, 648, 162),
            (Some(1), 1, 648, 162),
            (Some(0), 0, 0, 1),
            (Some(10), 40, 40, 10),
            (Some(125), 500, 500, 125),
            (Some(8191), 32_764, 32_764, 8191),
            // usecs << 2 overflows the 13-bit Interval field: 8192 << 2 =
            // 0x8000, & 0x7FFC = 0 -> 4 (1 us); 10000 << 2 = 40000, & 0x7FFC =
            // 7232 -> 1808 us.
            (Some(8192), 32_768, 32_768, 1),
            (Some(10_000), 40_000, 40_000, 1808),
            // Rejected by ethtool: the default stays.
            (Some(2), 3, 648, 162),
            (Some(9), 3, 648, 162),
            (Some(10_001), 3, 648, 162),
        ];
        for (usecs, setting, itr_val, us) in table {
            let s = itr_setting(usecs);
            assert_eq!(s, setting, "{usecs:?}");
            assert_eq!(initial_itr_val(s), itr_val, "{usecs:?}");
            assert_eq!(eitr_us(initial_itr_val(s)), us, "{usecs:?}");
        }
    }

    #[test]
    fn constants_match_the_section_1_6_table() {
        // I210 datasheet §8.8.14: raw / 4 = interval [us] on 82576+: 56 -> 14, 196 -> 49,
        // 648 -> 162, 980 -> 245.
        let table = [
            (IGB_70K_ITR, 14),
            (IGB_20K_ITR, 49),
            (IGB_START_ITR, 162),
            (IGB_4K_ITR, 245),
        ];
        for (raw, us) in table {
            assert_eq!(eitr_us(raw), us);
        }
        assert_eq!(class_itr(Lowest), 56);
        assert_eq!(class_itr(Low), 196);
        assert_eq!(class_itr(Bulk), 980);
    }

    #[test]
    fn set_itr_smoothing_is_a_no_op() {
        // igb_set_itr: for new > old, new*old/(new + old/4) < new, so the
        // max is new; decreases are direct.
        let table = [
            (980, 196, 980), // 192080 / 1029 = 186 -> 980
            (980, 56, 980),  // 54880 / 994 = 55 -> 980
            (196, 56, 196),  // 10976 / 210 = 52 -> 196
            (196, 648, 196),
            (56, 196, 56),
            (980, 648, 980), // 635040 / 1142 = 556 -> 980
        ];
        for (new, old, want) in table {
            assert_eq!(set_itr_smoothing(new, old), want, "{new} from {old}");
        }
    }

    #[test]
    fn ring_itr_follows_the_average_wire_size_rule() {
        // igb_update_ring_itr by hand: 64 B -> avg 88 -> 44 (mode 3: 196); 576 B -> 600/3
        // = 200; 1500 B -> 1524/2 = 762 (written 760, 190 us); >= 2976 B ->
        // 3000/2 = 1500; no packets -> None (keep). (rx, tx) each as
        // (packets, bytes).
        let table = [
            ((10, 640), (0, 0), false, Some((88, 44))),
            ((10, 640), (0, 0), true, Some((88, 196))),
            ((10, 5_760), (0, 0), false, Some((600, 200))),
            ((10, 15_000), (0, 0), false, Some((1524, 762))),
            ((1, 9_000), (0, 0), false, Some((3000, 1500))),
            ((0, 0), (0, 0), true, None),
            // TX bigger average wins: max(64, 1500) -> 1524 -> 762.
            ((10, 640), (2, 3_000), true, Some((1524, 762))),
            // Boundaries of the mid-size boost: avg 300 -> /2, 301 -> /3,
            // 1199 -> /3, 1200 -> /2.
            ((1, 276), (0, 0), false, Some((300, 150))),
            ((1, 277), (0, 0), false, Some((301, 100))),
            ((1, 1175), (0, 0), false, Some((1199, 399))),
            ((1, 1176), (0, 0), false, Some((1200, 600))),
        ];
        for (rx, tx, cons, want) in table {
            assert_eq!(
                ring_itr(rx.0, rx.1, tx.0, tx.1, cons),
                want,
                "{rx:?} {tx:?}"
            );
        }
        assert_eq!(eitr_us(762), 190);
        assert_eq!(eitr_us(1500), 375);
    }

    #[test]
    fn nothing_at_up_first_interrupt_writes_itr_val() {
        // igb_assign_vector: set_itr = 1 at configure; the register is
        // written at the first interrupt. Static 125 us: written once.
        let mut m = Igb::new(Some(125), false);
        assert_eq!(m.initial().eitr_us, Some(0));
        assert_eq!(m.invocation(), Invocation::PerInterrupt);
        assert_eq!(m.name(), "igb");
        let ping = ((1, 98), (1, 98));
        assert_eq!(
            run(&mut m, &[ping, ping, ping]),
            vec![Some(125), None, None]
        );
        // Off (0): written once as raw 4 = 1 us.
        let mut m = Igb::new(Some(0), true);
        assert_eq!(run(&mut m, &[ping, ping]), vec![Some(1), None]);
    }

    #[test]
    fn non_gigabit_link_uses_4k() {
        // igb_set_itr / igb_update_ring_itr: speed != 1000 -> 980 (245 us), both paths.
        for multi in [false, true] {
            let mut m = Igb::new(None, multi).with_link_mbps(100);
            let ping = ((1, 98), (1, 98));
            assert_eq!(
                run(&mut m, &[ping, ping, ping]),
                vec![Some(162), Some(245), None]
            );
        }
    }

    #[test]
    fn latency_path_sequence_mode_3() {
        // Single vector, default setting 3; hand-derived from igb_set_itr and
        // igb_update_itr (1500 in the bulk test). Row k returns what
        // call k-1 stored (row 1: IGB_START_ITR from configure).
        //  1 idle: write 648 (162 us). 0 packets: classes stay lowest;
        //    current lowest -> clamp low -> 196 != 648: store 196.
        //  2 ping 1x98: write 196 (49 us). lowest stays lowest (98 <= 512);
        //    clamp -> 196 = itr_val: nothing.
        //  3 RX 4x1514 = 6056, TX 2x66: no write. RX lowest, 4 < 5 packets
        //    and > 512 B -> low; TX lowest. low -> 196: nothing.
        //  4 RX 8x1514 = 12112, TX 4x66: RX low, > 10000 B, 8 < 10 packets
        //    -> bulk -> 980: store.
        //  5 same: write 980 (245 us). RX bulk, <= 25000 and >= 1500 B ->
        //    bulk: nothing.
        //  6 ping: no write. RX bulk, 98 < 1500 -> low -> 196: store.
        //  7 ping: write 196 (49 us). RX low -> lowest; clamp -> 196.
        //  8 ping: nothing.
        let idle = ((0, 0), (0, 0));
        let ping = ((1, 98), (1, 98));
        let small_bulk = ((2, 132), (4, 6_056));
        let bulk = ((4, 264), (8, 12_112));
        let mut m = Igb::new(None, false);
        let got = run(
            &mut m,
            &[idle, ping, small_bulk, bulk, bulk, ping, ping, ping],
        );
        assert_eq!(
            got,
            vec![
                Some(162),
                Some(49),
                None,
                None,
                Some(245),
                None,
                Some(49),
                None
            ]
        );
        // In mode 3 the RX container really is in lowest now (the clamp
        // acts on the result only).
        assert_eq!(m.rx_class, Lowest);
        // Mode 1: ping from the start -> lowest -> 56 (14 us) one interrupt
        // later.
        let mut m = Igb::new(Some(1), false);
        assert_eq!(
            run(&mut m, &[ping, ping, ping]),
            vec![Some(162), Some(14), None]
        );
    }

    #[test]
    fn latency_path_keeps_lowest_under_many_full_frames() {
        // igb_update_itr lowest branch: only bpp > 8000 or (< 5 packets and > 512 B)
        // leave lowest, so 40 full frames per interrupt keep igb at 20K in
        // mode 3 (70K in mode 1).
        let bulk = ((20, 1_320), (40, 60_560));
        let mut m = Igb::new(None, false);
        assert_eq!(
            run(&mut m, &[bulk, bulk, bulk]),
            vec![Some(162), Some(49), None]
        );
        let mut m = Igb::new(Some(1), false);
        assert_eq!(
            run(&mut m, &[bulk, bulk, bulk]),
            vec![Some(162), Some(14), None]
        );
    }

    #[test]
    fn ring_path_sequence_mode_3() {
        // Multi-vector, setting 3; hand-derived from igb_update_ring_itr.
        //  1 idle: write 648 (162 us); avg 0 -> keep.
        //  2 ping 98 B: (98+24)/2 = 61 < 196 -> 196: store.
        //  3 RX 40x1514, TX 20x66: write 196 (49 us); avg 1538 -> 769: store.
        //  4 same: write 769 & 0x7FFC = 768 (192 us); 769 = itr_val.
        //  5 RX 20x576, TX 10x66: avg 600 -> 200: store.
        //  6 same: write 200 (50 us).
        //  7 ping: 196: store.   8 ping: write 196 (49 us).
        let idle = ((0, 0), (0, 0));
        let ping = ((1, 98), (1, 98));
        let bulk = ((20, 1_320), (40, 60_560));
        let mid = ((10, 660), (20, 11_520));
        let mut m = Igb::new(None, true);
        let got = run(&mut m, &[idle, ping, bulk, bulk, mid, mid, ping, ping]);
        assert_eq!(
            got,
            vec![
                Some(162),
                None,
                Some(49),
                Some(192),
                None,
                Some(50),
                None,
                Some(49)
            ]
        );
        assert_eq!(m.last_decision().unwrap().values[7], ("avg_wire_size", 122));
        // Mode 1, 64 B frames: (64+24)/2 = 44 -> 11 us.
        let mut m = Igb::new(Some(1), true);
        let small = ((0, 0), (10, 640));
        assert_eq!(
            run(&mut m, &[small, small, small]),
            vec![Some(162), Some(11), None]
        );
    }
}
