//! Linux ena (AWS Elastic Network Adapter) interrupt moderation: a static
//! TX delay (64 us by default), and on RX either a static delay (0 by
//! default) or DIM, in the device's delay unit.
//!
//! Models (Linux `drivers/net/ethernet/amazon/ena/`):
//! - `ena_com_update_nonadaptive_moderation_interval_{rx,tx}`: the driver
//!   keeps `usecs / intr_delay_resolution` (integer division: requested
//!   values are quantised down to the device's unit); a resolution of 0 is
//!   replaced by `ENA_DEFAULT_INTR_DELAY_RESOLUTION` (1 us);
//! - `ena_com_update_intr_reg`: the RX and TX delays go into 15-bit fields
//!   of the interrupt register written with each unmask
//!   (`ENA_ETH_IO_INTR_REG_RX_INTR_DELAY_MASK` GENMASK(14, 0)): a larger
//!   value is masked, not refused;
//! - defaults: `ENA_INTR_INITIAL_TX_INTERVAL_USECS` 64 (05785adf6e57),
//!   `ENA_INTR_INITIAL_RX_INTERVAL_USECS` 0; adaptive RX is off when the
//!   driver loads (78cb421d185c) unless the device enables it ("On some
//!   instance types Rx moderation is disabled by default, on others it is
//!   enabled in adaptive mode", amzn/amzn-drivers
//!   `ENA_Linux_Best_Practices.rst`): the chip's `default_adaptive_rx`;
//! - adaptive RX: lib/dim with the RX EQE profiles
//!   (`DIM_CQ_PERIOD_MODE_START_FROM_EQE`), called from `ena_io_poll` after
//!   `napi_complete_done` (`ena_adjust_adaptive_rx_intr_moderation`);
//!   `ena_dim_work` stores the profile's `usec` as the RX interval, which
//!   is written into the delay field as is (in resolution units);
//! - `supported_coalesce_params` = `ETHTOOL_COALESCE_USECS |
//!   ETHTOOL_COALESCE_USE_ADAPTIVE_RX`: no frames, no adaptive TX, no CQE
//!   mode (netlink ethtool refuses them: "cannot modify an unsupported
//!   parameter").
//!
//! Simplifies: a new DIM interval is written when the work runs (the driver
//! writes it at the next unmask); the event counter is the vector's
//! interrupt count. ASSUMPTION: DIM starts at profile index 0 (the
//! driver's `struct dim` is zeroed), with the static RX interval in force
//! until its first work.
//!
//! Units: `*_usecs` [us]; register values in resolution units.

use super::dim::{Dim, DimOut, DimProfile};
use super::{
    BuildCtx, CqSetting, FieldError, Invocation, LiveChange, ModerationParams, Moderator,
    ModeratorConfig, PortCaps, Sample, Throttle, TraceRow,
};
use crate::units::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `ENA_INTR_INITIAL_TX_INTERVAL_USECS` [us].
pub const DEFAULT_TX_USECS: u32 = 64;
/// The 15-bit delay fields of the interrupt register.
pub const DELAY_MASK: u32 = 0x7fff;

/// Scenario config of `kind = "ena"` (ethtool -C names with underscores).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnaCfg {
    /// `adaptive-rx` (DIM); default: the device's choice (chip preset).
    #[serde(default)]
    pub adaptive_rx: Option<bool>,
    /// `rx-usecs` [us] (default 0), used while adaptive RX is off.
    #[serde(default)]
    pub rx_usecs: u32,
    /// `tx-usecs` [us] (default 64).
    #[serde(default = "tx_default")]
    pub tx_usecs: Option<u32>,
}

fn tx_default() -> Option<u32> {
    Some(DEFAULT_TX_USECS)
}

/// The register value the driver writes for `usecs` at `resolution_us`:
/// `usecs / resolution`, masked to the 15-bit field.
pub fn delay_field(usecs: u32, resolution_us: u32) -> u32 {
    (usecs / resolution_us.max(1)) & DELAY_MASK
}

fn resolution(throttle: Throttle) -> Option<(u32, bool)> {
    match throttle {
        Throttle::Cq {
            frames: false,
            resolution_us,
            default_adaptive_rx,
            ..
        } => Some((resolution_us.max(1), default_adaptive_rx)),
        _ => None,
    }
}

impl EnaCfg {
    fn tx_usecs(&self) -> u32 {
        self.tx_usecs.unwrap_or(DEFAULT_TX_USECS)
    }

    /// The static RX and TX delays as the device runs them [us]:
    /// register value x resolution.
    pub fn static_settings(&self, resolution_us: u32) -> (CqSetting, CqSetting) {
        let set = |us: u32| CqSetting {
            usec: delay_field(us, resolution_us) * resolution_us,
            pkts: 0,
            cqe_mode: false,
        };
        (set(self.rx_usecs), set(self.tx_usecs()))
    }
}

impl ModeratorConfig for EnaCfg {
    fn validate(&self, port: &PortCaps) -> Result<(), FieldError> {
        if resolution(port.throttle).is_none() {
            return Err(FieldError::new(
                "kind",
                format!(
                    "\"ena\" programs the ENA device's interrupt delay; chip {} is not an ENA: use chip \"ena\"",
                    port.chip
                ),
            ));
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        let (res, default_adaptive) = resolution(ctx.throttle).unwrap_or((1, false));
        let (rx_set, tx_set) = self.static_settings(res);
        let dim = self.adaptive_rx.unwrap_or(default_adaptive).then(|| {
            let mut d = Dim::new(DimProfile::RxEqe, 0);
            d.work_delay = ctx.work_delay;
            d.out = DimOut::Cq {
                tx: false,
                frames: false,
                resolution_us: res,
            };
            d
        });
        Box::new(Ena {
            dim,
            initial: ModerationParams::cq(Some(rx_set), Some(tx_set)),
            last: None,
        })
    }

    fn interval_is_static(&self) -> bool {
        self.adaptive_rx != Some(true)
    }

    /// `ena_set_coalesce` updates the stored intervals (written at the next
    /// unmask) and switches DIM; the model starts the new setting afresh.
    fn live_change(&self, _field: &str) -> Result<LiveChange, String> {
        Ok(LiveChange::Reprogram)
    }
}

/// ena moderation of one queue pair (vector).
#[derive(Clone, Debug)]
pub struct Ena {
    dim: Option<Dim>,
    initial: ModerationParams,
    last: Option<TraceRow>,
}

impl Ena {
    /// The RX DIM, if adaptive RX is on.
    pub fn dim(&self) -> Option<&Dim> {
        self.dim.as_ref()
    }
}

impl Moderator for Ena {
    fn name(&self) -> &'static str {
        "ena"
    }

    fn initial(&self) -> ModerationParams {
        self.initial
    }

    fn invocation(&self) -> Invocation {
        if self.dim.is_some() {
            Invocation::NapiComplete
        } else {
            Invocation::Never
        }
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        let d = self.dim.as_mut()?;
        d.on_sample(s);
        self.last = d.last_decision().cloned();
        None
    }

    fn take_work(&mut self) -> Option<SimTime> {
        self.dim.as_mut()?.take_work()
    }

    fn run_work(&mut self, now: SimTime) -> Option<ModerationParams> {
        let d = self.dim.as_mut()?;
        let p = d.run_work(now);
        self.last = d.last_decision().cloned();
        p
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Nanos;

    fn ctx(resolution_us: u32, default_adaptive_rx: bool) -> BuildCtx {
        BuildCtx {
            link_mbps: 25_000,
            throttle: Throttle::Cq {
                frames: false,
                cqe_mode: false,
                resolution_us,
                default_adaptive_rx,
            },
            rx_fifo_bytes: 512 * 1024,
            vectors: 1,
            vector: 0,
            hz: 250,
            work_delay: Nanos(1500),
        }
    }

    #[test]
    fn requested_values_are_quantised_to_the_device_unit() {
        // usecs / resolution, masked to 15 bits (ena_com.c, ena_eth_com.h).
        for (us, res, field) in [
            (64, 1, 64),
            (256, 1, 256),
            (63, 2, 31),
            (64, 4, 16),
            (7, 8, 0),
            (40_000, 1, 40_000 & 0x7fff),
        ] {
            assert_eq!(delay_field(us, res), field, "{us} us at {res} us");
        }
        // The device then runs field x resolution: 63 us at 2 us -> 62 us.
        let (rx, tx) = EnaCfg {
            rx_usecs: 63,
            ..Default::default()
        }
        .static_settings(2);
        assert_eq!((rx.usec, tx.usec), (62, 64));
        assert_eq!((rx.pkts, rx.cqe_mode), (0, false));
    }

    #[test]
    fn defaults_tx_64_rx_0_and_adaptive_by_device() {
        let cfg = EnaCfg {
            tx_usecs: tx_default(),
            ..Default::default()
        };
        let m = cfg.build(&ctx(1, false));
        assert_eq!(m.invocation(), Invocation::Never);
        let p = m.initial();
        assert_eq!(p.cq_rx.map(|c| c.usec), Some(0));
        assert_eq!(p.cq_tx.map(|c| c.usec), Some(64));
        // A device that turns adaptive RX on: DIM from the first NAPI
        // completion, the static 0 in force until its first work.
        let m = cfg.build(&ctx(1, true));
        assert_eq!(m.invocation(), Invocation::NapiComplete);
        assert_eq!(m.initial().cq_rx.map(|c| c.usec), Some(0));
        // The user's choice wins over the device's.
        let off = EnaCfg {
            adaptive_rx: Some(false),
            ..cfg
        };
        assert_eq!(off.build(&ctx(1, true)).invocation(), Invocation::Never);
    }

    #[test]
    fn only_an_ena_chip_takes_the_kind() {
        let cfg = EnaCfg::default();
        let port = |throttle| PortCaps {
            chip: "x",
            throttle,
        };
        assert!(cfg.validate(&port(ctx(1, false).throttle)).is_ok());
        let e = cfg.validate(&port(Throttle::Eitr1us)).unwrap_err();
        assert_eq!(e.field, "kind");
        let mlx = Throttle::Cq {
            frames: true,
            cqe_mode: true,
            resolution_us: 1,
            default_adaptive_rx: true,
        };
        assert!(cfg.validate(&port(mlx)).is_err());
    }
}
