//! Static moderation: register values set once at interface up and never
//! changed (Linux e1000 `InterruptThrottleRate=N`, FreeBSD `enable_aim=0`,
//! OpenBSD em, ethtool -C with adaptive off).
//!
//! Parameters: any ITR/EITR value and any RDTR/RADV/TIDV/TADV values, in
//! hardware units. Source: 8254x SDM §13.4.18 (ITR), §13.4.30/31
//! (RDTR/RADV), §13.4.41/44 (TIDV/TADV).

use super::{
    check_range, BuildCtx, FieldError, Invocation, LiveChange, ModerationParams, Moderator,
    ModeratorConfig, PortCaps, Sample, Throttle,
};
use crate::units::ints_per_s_to_itr_256ns;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Scenario config of `kind = "static"`: registers written once at interface
/// up. Give at most one of `itr_per_s`, `itr_256ns`, `eitr_us`; none means
/// no throttling.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StaticCfg {
    /// Target maximum interrupt rate [int/s], converted as the driver does:
    /// 0 (off) or 100 to 100000 (Linux e1000 `InterruptThrottleRate` range).
    #[serde(default)]
    #[schemars(range(min = 0, max = 100_000))]
    pub itr_per_s: Option<u32>,
    /// Raw ITR / 82574-82575 EITR interval [256 ns units] (16-bit field).
    #[serde(default)]
    #[schemars(range(min = 0, max = 65_535))]
    pub itr_256ns: Option<u32>,
    /// 82576+ EITR interval [us] (bits 14:2).
    #[serde(default)]
    #[schemars(range(min = 0, max = 8191))]
    pub eitr_us: Option<u32>,
    /// RX packet timer [1.024 us]; 0 = interrupt per packet.
    #[serde(default)]
    #[schemars(range(min = 0, max = 65_535))]
    pub rdtr_1024ns: u32,
    /// RX absolute timer [1.024 us]; 0 = off.
    #[serde(default)]
    #[schemars(range(min = 0, max = 65_535))]
    pub radv_1024ns: u32,
    /// TX packet timer [1.024 us] (descriptors with IDE); 0 = immediate.
    #[serde(default)]
    #[schemars(range(min = 0, max = 65_535))]
    pub tidv_1024ns: u32,
    /// TX absolute timer [1.024 us]; 0 = off.
    #[serde(default)]
    #[schemars(range(min = 0, max = 65_535))]
    pub tadv_1024ns: u32,
}

impl ModeratorConfig for StaticCfg {
    /// The registers are the setting.
    fn interval_is_static(&self) -> bool {
        true
    }

    fn validate(&self, _port: &PortCaps) -> Result<(), FieldError> {
        let given = [
            self.itr_per_s.is_some(),
            self.itr_256ns.is_some(),
            self.eitr_us.is_some(),
        ]
        .iter()
        .filter(|x| **x)
        .count();
        if given > 1 {
            return Err(FieldError::new(
                "",
                "give at most one of itr_per_s, itr_256ns, eitr_us",
            ));
        }
        if let Some(r) = self.itr_per_s {
            if r != 0 && !(100..=100_000).contains(&r) {
                return Err(FieldError::new(
                    "itr_per_s",
                    format!("got {r}; allowed: 0 (off) or 100 to 100000 (Linux e1000 range)"),
                ));
            }
        }
        if let Some(v) = self.itr_256ns {
            check_range(
                "itr_256ns",
                v,
                0,
                0xFFFF,
                " (the INTERVAL field is 16 bits)",
            )?;
        }
        if let Some(v) = self.eitr_us {
            check_range(
                "eitr_us",
                v,
                0,
                0x1FFF,
                " us (the EITR interval field, bits 14:2)",
            )?;
        }
        for (field, v) in [
            ("rdtr_1024ns", self.rdtr_1024ns),
            ("radv_1024ns", self.radv_1024ns),
            ("tidv_1024ns", self.tidv_1024ns),
            ("tadv_1024ns", self.tadv_1024ns),
        ] {
            check_range(field, v, 0, 0xFFFF, " (the register field is 16 bits)")?;
        }
        Ok(())
    }

    fn config_field(&self, param: &str) -> Option<&'static str> {
        match param {
            // The throttle value came from whichever of the three was given.
            "itr_256ns" | "eitr_us" => match (self.itr_per_s, self.itr_256ns, self.eitr_us) {
                (Some(_), _, _) => Some("itr_per_s"),
                (None, Some(_), _) => Some("itr_256ns"),
                (None, None, Some(_)) => Some("eitr_us"),
                (None, None, None) => None,
            },
            "rdtr_1024ns" => Some("rdtr_1024ns"),
            "radv_1024ns" => Some("radv_1024ns"),
            "tidv_1024ns" => Some("tidv_1024ns"),
            "tadv_1024ns" => Some("tadv_1024ns"),
            _ => None,
        }
    }

    /// Every field: the registers are rewritten at the instant of the
    /// change, as a driver's coalescing call does (Linux e1000e
    /// `e1000e_set_coalesce` -> `e1000e_write_itr`).
    fn live_change(&self, _field: &str) -> Result<LiveChange, String> {
        Ok(LiveChange::Reprogram)
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        let (itr, eitr) = match (self.itr_per_s, self.itr_256ns, self.eitr_us) {
            (Some(r), _, _) => match ctx.throttle {
                Throttle::Eitr1us | Throttle::Itr2us { .. } => {
                    (None, Some(1_000_000u32.checked_div(r).unwrap_or(0)))
                }
                // A CQ chip is refused before build (`scenario::config`).
                Throttle::Itr256ns
                | Throttle::Eitr256ns
                | Throttle::Eitr2048ns
                | Throttle::Cq { .. } => (Some(ints_per_s_to_itr_256ns(r)), None),
            },
            (None, Some(v), _) => (Some(v), None),
            (None, None, Some(v)) => (None, Some(v)),
            (None, None, None) => (Some(0), None),
        };
        Box::new(StaticModerator::new(ModerationParams {
            itr_256ns: itr,
            eitr_us: eitr,
            rdtr_1024ns: Some(self.rdtr_1024ns),
            radv_1024ns: Some(self.radv_1024ns),
            tidv_1024ns: Some(self.tidv_1024ns),
            tadv_1024ns: Some(self.tadv_1024ns),
            intrl_us: None,
            cq_rx: None,
            cq_tx: None,
        }))
    }
}

/// Fixed settings, written once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticModerator {
    pub params: ModerationParams,
}

impl StaticModerator {
    pub fn new(params: ModerationParams) -> Self {
        StaticModerator { params }
    }
}

impl Moderator for StaticModerator {
    fn name(&self) -> &'static str {
        "static"
    }
    fn initial(&self) -> ModerationParams {
        self.params
    }
    fn invocation(&self) -> Invocation {
        Invocation::Never
    }
    fn on_sample(&mut self, _sample: &Sample) -> Option<ModerationParams> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(throttle: Throttle) -> BuildCtx {
        BuildCtx {
            link_mbps: 1000,
            throttle,
            rx_fifo_bytes: 48 * 1024,
            vectors: 1,
            vector: 0,
            hz: 250,
            work_delay: crate::units::Nanos::ZERO,
        }
    }

    #[test]
    fn itr_per_s_is_written_in_the_chips_unit() {
        // 8000 int/s: ITR = 1e9 / (8000 x 256) = 488 (truncated, as the
        // Linux e1000 driver computes it); EITR in 1 us = 1e6 / 8000 = 125.
        let cfg = StaticCfg {
            itr_per_s: Some(8000),
            ..Default::default()
        };
        let itr = cfg.build(&ctx(Throttle::Itr256ns)).initial();
        assert_eq!((itr.itr_256ns, itr.eitr_us), (Some(488), None));
        let eitr = cfg.build(&ctx(Throttle::Eitr1us)).initial();
        assert_eq!((eitr.itr_256ns, eitr.eitr_us), (None, Some(125)));
    }

    #[test]
    fn at_most_one_throttle_field_and_16_bit_timers() {
        let port = PortCaps {
            chip: "82546",
            throttle: Throttle::Itr256ns,
        };
        let two = StaticCfg {
            itr_per_s: Some(8000),
            itr_256ns: Some(488),
            ..Default::default()
        };
        assert_eq!(two.validate(&port).unwrap_err().field, "");
        let radv = StaticCfg {
            radv_1024ns: 65_536,
            ..Default::default()
        };
        assert_eq!(radv.validate(&port).unwrap_err().field, "radv_1024ns");
        let rate = StaticCfg {
            itr_per_s: Some(99),
            ..Default::default()
        };
        assert_eq!(rate.validate(&port).unwrap_err().field, "itr_per_s");
    }

    #[test]
    fn static_policy_never_changes_its_settings() {
        let p = ModerationParams {
            itr_256ns: Some(488),
            tidv_1024ns: Some(64),
            ..Default::default()
        };
        let mut m = StaticModerator::new(p);
        assert_eq!(m.initial(), p);
        assert_eq!(m.invocation(), Invocation::Never);
        let s = Sample {
            rx_packets: 1_000_000,
            interrupts: 8000,
            ..Default::default()
        };
        assert_eq!(m.on_sample(&s), None);
        assert_eq!(m.initial(), p);
    }
}
