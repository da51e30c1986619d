//! Linux mlx5 (NVIDIA ConnectX-4 and later) interrupt moderation: static CQ
//! moderation (`rx-usecs`/`rx-frames`, `tx-usecs`/`tx-frames`, EQE- or
//! CQE-based period per direction) or DIM (`net_dim`) per RX queue and per
//! TX queue, the new profile written by the driver's work item.
//!
//! Models (Linux `drivers/net/ethernet/mellanox/mlx5/core/`):
//! - defaults (`en.h`, `mlx5e_build_nic_params`, `mlx5e_set_rx_cq_mode_params`):
//!   adaptive RX and TX on (`rx_dim_enabled = tx_dim_enabled =
//!   MLX5_CAP_GEN(mdev, cq_moderation)`); RX period mode CQE-based when the
//!   device can (`cq_period_start_from_cqe`), TX EQE-based (48bfc39791b8);
//!   `rx-usecs` 3 in CQE mode (`..._RX_CQ_MODERATION_USEC_FROM_CQE`) and
//!   16 in EQE mode, `rx-frames` 32, `tx-usecs` 16, `tx-frames` 32;
//! - `mlx5e_ethtool_set_coalesce` refuses a time above `MLX5E_MAX_COAL_TIME`
//!   (4095 us, "Max coalesce time ...", -ERANGE), a count above
//!   `MLX5E_MAX_COAL_FRAMES` (65535, "Max coalesce frames ..."), CQE mode
//!   on a device without it ("cqe-mode-rx/tx is not supported on this
//!   device", -EOPNOTSUPP). With adaptive moderation on, the usecs/frames
//!   are stored but DIM's profile is what the CQ holds;
//! - with DIM on, the CQ starts at the profile set's default profile
//!   (`net_dim_get_def_rx_moderation`/`..._tx_...`, index 1) and DIM is
//!   called from `mlx5e_napi_poll` only after `napi_complete_done`
//!   succeeded (`mlx5e_handle_tx_dim` for each SQ, then
//!   `mlx5e_handle_rx_dim`), with the CQ's `event_ctr` (completion
//!   events) and the queue's packet and byte counters; a changed profile is
//!   written by `mlx5e_rx_dim_work` / `mlx5e_tx_dim_work`
//!   (`mlx5_core_modify_cq_moderation`) from the work queue
//!   (`moderation::dim`, `BuildCtx::work_delay`).
//!
//! Simplifies: one TX queue per channel (no traffic classes); the event
//! counter is the vector's interrupt count (one CQ pair per vector); when
//! the TX and RX DIM both queue work in the same call, the trace keeps the
//! RX decision's row (both works run). ASSUMPTION: DIM's own index starts
//! at the default profile with the CQ (the driver does not set
//! `dim->profile_ix`; a zeroed `struct dim` would start at 0).
//!
//! Units: `*_usecs` [us], `*_frames` [completions].

use super::dim::{Dim, DimOut, DimProfile};
use super::{
    BuildCtx, CqSetting, FieldError, Invocation, LiveChange, ModerationParams, Moderator,
    ModeratorConfig, PortCaps, Sample, Throttle, TraceRow,
};
use crate::units::SimTime;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `MLX5E_MAX_COAL_TIME` (`MLX5_MAX_CQ_PERIOD`) [us].
pub const MAX_COAL_TIME: u32 = (1 << 12) - 1;
/// `MLX5E_MAX_COAL_FRAMES` (`MLX5_MAX_CQ_COUNT`).
pub const MAX_COAL_FRAMES: u32 = (1 << 16) - 1;
/// `MLX5E_PARAMS_DEFAULT_RX_CQ_MODERATION_USEC` (EQE mode) [us].
pub const DEFAULT_RX_USEC_EQE: u32 = 0x10;
/// `MLX5E_PARAMS_DEFAULT_RX_CQ_MODERATION_USEC_FROM_CQE` [us].
pub const DEFAULT_RX_USEC_CQE: u32 = 0x3;
/// `MLX5E_PARAMS_DEFAULT_{RX,TX}_CQ_MODERATION_PKTS`.
pub const DEFAULT_FRAMES: u32 = 0x20;
/// `MLX5E_PARAMS_DEFAULT_TX_CQ_MODERATION_USEC` [us].
pub const DEFAULT_TX_USEC: u32 = 0x10;

/// Scenario config of `kind = "mlx5"` (ethtool -C names with underscores).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mlx5Cfg {
    /// `adaptive-rx`: DIM on the RX CQ (default on).
    #[serde(default = "yes")]
    pub adaptive_rx: bool,
    /// `adaptive-tx`: DIM on the TX CQ (default on).
    #[serde(default = "yes")]
    pub adaptive_tx: bool,
    /// `cqe-mode-rx`: RX period restarts at each completion (default: on
    /// when the chip has the mode).
    #[serde(default)]
    pub cqe_mode_rx: Option<bool>,
    /// `cqe-mode-tx` (default off).
    #[serde(default)]
    pub cqe_mode_tx: bool,
    /// `rx-usecs` [us], 0..4095 (default 3 in CQE mode, 16 in EQE mode).
    #[serde(default)]
    #[schemars(range(max = 4095))]
    pub rx_usecs: Option<u32>,
    /// `rx-frames`, 0..65535 (default 32).
    #[serde(default = "frames")]
    #[schemars(range(max = 65535))]
    pub rx_frames: u32,
    /// `tx-usecs` [us], 0..4095 (default 16).
    #[serde(default = "tx_usec")]
    #[schemars(range(max = 4095))]
    pub tx_usecs: u32,
    /// `tx-frames`, 0..65535 (default 32).
    #[serde(default = "frames")]
    #[schemars(range(max = 65535))]
    pub tx_frames: u32,
}

fn yes() -> bool {
    true
}
fn frames() -> u32 {
    DEFAULT_FRAMES
}
fn tx_usec() -> u32 {
    DEFAULT_TX_USEC
}

impl Default for Mlx5Cfg {
    fn default() -> Self {
        Mlx5Cfg {
            adaptive_rx: true,
            adaptive_tx: true,
            cqe_mode_rx: None,
            cqe_mode_tx: false,
            rx_usecs: None,
            rx_frames: DEFAULT_FRAMES,
            tx_usecs: DEFAULT_TX_USEC,
            tx_frames: DEFAULT_FRAMES,
        }
    }
}

impl Mlx5Cfg {
    /// The RX period mode on a chip that has (or lacks) CQE mode.
    pub fn rx_cqe(&self, chip_has_cqe: bool) -> bool {
        self.cqe_mode_rx.unwrap_or(chip_has_cqe)
    }

    /// The static RX and TX CQ settings (what the CQs hold without DIM).
    pub fn static_settings(&self, chip_has_cqe: bool) -> (CqSetting, CqSetting) {
        let cqe = self.rx_cqe(chip_has_cqe);
        let rx_usec = self.rx_usecs.unwrap_or(if cqe {
            DEFAULT_RX_USEC_CQE
        } else {
            DEFAULT_RX_USEC_EQE
        });
        (
            CqSetting {
                usec: rx_usec,
                pkts: self.rx_frames,
                cqe_mode: cqe,
            },
            CqSetting {
                usec: self.tx_usecs,
                pkts: self.tx_frames,
                cqe_mode: self.cqe_mode_tx,
            },
        )
    }
}

fn chip_cqe(throttle: Throttle) -> Option<bool> {
    match throttle {
        Throttle::Cq {
            frames: true,
            cqe_mode,
            ..
        } => Some(cqe_mode),
        _ => None,
    }
}

impl ModeratorConfig for Mlx5Cfg {
    fn validate(&self, port: &PortCaps) -> Result<(), FieldError> {
        let Some(has_cqe) = chip_cqe(port.throttle) else {
            return Err(FieldError::new(
                "kind",
                format!(
                    "\"mlx5\" programs completion-queue moderation (usecs and frames); chip {} has none: use chip \"cx5\" or \"cx6\"",
                    port.chip
                ),
            ));
        };
        let rx_usecs = self.static_settings(has_cqe).0.usec;
        for (field, v) in [("rx_usecs", rx_usecs), ("tx_usecs", self.tx_usecs)] {
            if v > MAX_COAL_TIME {
                return Err(FieldError::new(
                    field,
                    format!(
                        "Max coalesce time {MAX_COAL_TIME} usecs, tx-usecs ({}) rx-usecs ({rx_usecs}) (mlx5e_ethtool_set_coalesce, -ERANGE)",
                        self.tx_usecs
                    ),
                ));
            }
        }
        for (field, v) in [("rx_frames", self.rx_frames), ("tx_frames", self.tx_frames)] {
            if v > MAX_COAL_FRAMES {
                return Err(FieldError::new(
                    field,
                    format!(
                        "Max coalesce frames {MAX_COAL_FRAMES}, tx-frames ({}) rx-frames ({}) (mlx5e_ethtool_set_coalesce, -ERANGE)",
                        self.tx_frames, self.rx_frames
                    ),
                ));
            }
        }
        if !has_cqe && (self.cqe_mode_rx == Some(true) || self.cqe_mode_tx) {
            let field = if self.cqe_mode_tx {
                "cqe_mode_tx"
            } else {
                "cqe_mode_rx"
            };
            return Err(FieldError::new(
                field,
                format!(
                    "cqe-mode-rx/tx is not supported on this device (chip {})",
                    port.chip
                ),
            ));
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        let has_cqe = chip_cqe(ctx.throttle).unwrap_or(false);
        let (rx_set, tx_set) = self.static_settings(has_cqe);
        let dim = |profile: DimProfile, tx: bool| {
            let mut d = Dim::with_default_start(profile);
            d.work_delay = ctx.work_delay;
            d.out = DimOut::Cq {
                tx,
                frames: true,
                resolution_us: 1,
            };
            d
        };
        let rx = self.adaptive_rx.then(|| {
            dim(
                if rx_set.cqe_mode {
                    DimProfile::RxCqe
                } else {
                    DimProfile::RxEqe
                },
                false,
            )
        });
        let tx = self.adaptive_tx.then(|| {
            dim(
                if tx_set.cqe_mode {
                    DimProfile::TxCqe
                } else {
                    DimProfile::TxEqe
                },
                true,
            )
        });
        let initial = ModerationParams::cq(
            Some(rx.as_ref().map_or(rx_set, |d| d.params().cq_rx.unwrap())),
            Some(tx.as_ref().map_or(tx_set, |d| d.params().cq_tx.unwrap())),
        );
        Box::new(Mlx5 {
            dims: [tx, rx],
            initial,
            due: [None; 2],
            fresh: None,
            last: None,
        })
    }

    fn interval_is_static(&self) -> bool {
        !self.adaptive_rx
    }

    /// `ethtool -C` on a running mlx5 interface: the driver writes the CQs
    /// (`mlx5e_set_priv_channels_*_coalesce`), or resets the channels when
    /// the period mode or DIM changes; the model starts the new setting's
    /// algorithm afresh and writes its CQs at the change.
    fn live_change(&self, _field: &str) -> Result<LiveChange, String> {
        Ok(LiveChange::Reprogram)
    }
}

/// mlx5 moderation of one channel (vector): a TX and an RX DIM, each
/// present when its adaptive mode is on.
#[derive(Clone, Debug)]
pub struct Mlx5 {
    /// [TX, RX] (the driver's call order).
    dims: [Option<Dim>; 2],
    initial: ModerationParams,
    /// When each DIM's queued work runs.
    due: [Option<SimTime>; 2],
    /// A work queued by the last call, not yet taken.
    fresh: Option<SimTime>,
    last: Option<TraceRow>,
}

impl Mlx5 {
    /// The RX DIM, if adaptive RX is on.
    pub fn rx_dim(&self) -> Option<&Dim> {
        self.dims[1].as_ref()
    }

    /// The TX DIM, if adaptive TX is on.
    pub fn tx_dim(&self) -> Option<&Dim> {
        self.dims[0].as_ref()
    }

    fn row_of(d: &Dim, tx: bool) -> Option<TraceRow> {
        let mut row = d.last_decision()?.clone();
        row.values.push(("tx", i64::from(tx)));
        Some(row)
    }
}

impl Moderator for Mlx5 {
    fn name(&self) -> &'static str {
        "mlx5"
    }

    fn initial(&self) -> ModerationParams {
        self.initial
    }

    fn invocation(&self) -> Invocation {
        Invocation::NapiComplete
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        // The row of this call: a DIM's that queued work (RX's if both
        // did), else the last DIM's.
        let (mut queued, mut any) = (None, None);
        for (i, slot) in self.dims.iter_mut().enumerate() {
            let Some(d) = slot else { continue };
            d.on_sample(s);
            let row = Self::row_of(d, i == 0);
            if let Some(at) = d.take_work() {
                self.due[i] = Some(at);
                self.fresh = Some(self.fresh.map_or(at, |f| f.min(at)));
                queued = row.clone();
            }
            any = row;
        }
        self.last = queued.or(any);
        None
    }

    fn take_work(&mut self) -> Option<SimTime> {
        self.fresh.take()
    }

    fn run_work(&mut self, now: SimTime) -> Option<ModerationParams> {
        let mut out: Option<ModerationParams> = None;
        for (i, slot) in self.dims.iter_mut().enumerate() {
            let (Some(d), Some(at)) = (slot, self.due[i]) else {
                continue;
            };
            if at > now {
                continue;
            }
            self.due[i] = None;
            if let Some(p) = d.run_work(now) {
                self.last = Self::row_of(d, i == 0);
                let o = out.get_or_insert(ModerationParams::cq(None, None));
                o.cq_rx = o.cq_rx.or(p.cq_rx);
                o.cq_tx = o.cq_tx.or(p.cq_tx);
            }
        }
        out
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests;
