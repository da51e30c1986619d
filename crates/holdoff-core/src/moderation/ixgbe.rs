//! Linux ixgbe interrupt moderation (82599, X540, X550): `ethtool -C
//! rx-usecs` and the adaptive algorithm of the 2017 rewrite,
//! `ixgbe_update_itr` / `ixgbe_set_itr`.
//!
//! Models (Linux `drivers/net/ethernet/intel/ixgbe/`: `ixgbe_main.c`
//! `ixgbe_update_itr`, `ixgbe_set_itr`, `ixgbe_write_eitr`, `ixgbe_poll`;
//! `ixgbe_ethtool.c` `ixgbe_set_coalesce`; `ixgbe_lib.c`
//! `ixgbe_alloc_q_vector`; `ixgbe.h` constants; the rewrite is commit
//! b4ded8327fea "ixgbe: Update adaptive ITR algorithm", 2017):
//! - `rx_usecs` 0: no throttling (EITR 0); 1: adaptive (the driver default,
//!   `rx_itr_setting = 1`); 2 to 1022 (`IXGBE_MAX_EITR >> 2`): static, the
//!   driver stores `usecs << 2` and writes it to EITR, whose interval field
//!   (bits 11:3 of a 256 ns count) drops the low bits, so odd values round
//!   down to the even value below (2.048 us per step of 2 us asked).
//! - `tx_usecs`: `ixgbe_set_coalesce` returns -EINVAL for any non-zero
//!   value while the vectors carry an RX and a TX ring ("reject Tx specific
//!   changes in case of mixed RxTx vectors"), which they do by default and
//!   always in this model; 0 is what `ethtool -c` reports there and is
//!   accepted.
//! - Adaptive: at interface up `q_vector->itr = IXGBE_20K_ITR` (200, 50 us)
//!   and each ring container's 8-bit `itr = IXGBE_ITR_ADAPTIVE_MAX_USECS |
//!   IXGBE_ITR_ADAPTIVE_LATENCY`. When a NAPI poll completes
//!   (`napi_complete_done` returned true) `ixgbe_set_itr` runs
//!   `ixgbe_update_itr` on the TX, then the RX container, takes the smaller
//!   of the two 8-bit values *with* the latency flag (0x80) in them, clears
//!   the flag, shifts by 2 and writes EITR if the value changed.
//!   `ixgbe_update_itr` per container: if more than one jiffy passed since
//!   its last update (`time_after(jiffies, next_update)`) the result is
//!   `MIN_USECS | LATENCY`; no packets: previous EITR usecs + 2 (at most
//!   126) keeping the container's latency flag; < 4 packets and < 9000
//!   bytes: latency mode, sized; < 48 packets: EITR usecs + 2 (at most
//!   126); < 96: EITR usecs; < 256: EITR usecs / 2 (at least 10); else
//!   bulk, sized. Sizing maps the average size piecewise linearly (<= 60:
//!   5120; <= 316: 40x + 2720; <= 1084: 15x + 11452; < 1968: 5x + 22420;
//!   else 32256), halves it in latency mode, and scales by link speed
//!   (10G, 100M and any other: `DIV_ROUND_UP(v, 512) * 2`; 2.5G, 1G, 10M:
//!   `DIV_ROUND_UP(min(v, 8064), 128) * 2`), added to the flag. The result
//!   is stored in the container's `u8` (kept here: `as u8`). The 48..95
//!   band stores `q_vector->itr >> 2` uncapped, so a vector holding more
//!   than 1020 (255 us) would wrap; the adaptive path only ever holds up to
//!   508, where no band exceeds 0x80 + 126 = 254 (a test covers every band
//!   and the wrap; the 2026 intel-wired-lan clamp removes it).
//! - The jiffies clock is the host's `HZ` (`BuildCtx::hz`): jiffies =
//!   floor(now * HZ / 1 s). A container never updated yet has
//!   `next_update = 0` (kzalloc), far behind the jiffies of a running
//!   system, so its first call takes the gate.
//!
//! Invocation: `NapiComplete`. The sample covers the traffic since the
//! previous call (the driver's `total_packets`/`total_bytes`, accumulated by
//! every clean and reset only by `ixgbe_update_itr`).
//!
//! Simplifies: the driver counts bytes without the FCS (the 82599 strips it,
//! `IXGBE_RDRXCTL_CRCSTRIP`; TX `bytecount` is the skb length), so 4 bytes
//! per frame are taken off the sample's frame bytes in both directions;
//! TX-only and RX-only vectors (`tx_itr_setting`, `IXGBE_12K_ITR`) do not
//! exist in the model; a run-time `rx_usecs` change restarts the algorithm
//! (the driver keeps the ring containers' values), and the interface reset
//! that an RSC toggle causes is not modelled (`explain` warns about it).
//!
//! Units: EITR values as the driver holds them, a 256 ns count (`usecs <<
//! 2`, `itr_256ns`); container values [us] plus the 0x80 flag; bytes
//! [bytes]; jiffies [1/HZ].

use super::{
    check_range, BuildCtx, FieldError, Invocation, LiveChange, ModerationParams, Moderator,
    ModeratorConfig, PortCaps, Sample, Throttle, TraceRow,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `IXGBE_ITR_ADAPTIVE_MIN_INC` [us].
pub const MIN_INC: u32 = 2;
/// `IXGBE_ITR_ADAPTIVE_MIN_USECS` [us].
pub const MIN_USECS: u32 = 10;
/// `IXGBE_ITR_ADAPTIVE_MAX_USECS` [us] (126 since 2017; an
/// intel-wired-lan series of 2026 lowers it to 84).
pub const MAX_USECS: u32 = 126;
/// `IXGBE_ITR_ADAPTIVE_LATENCY`: the container's latency-mode flag.
pub const LATENCY: u32 = 0x80;
/// `IXGBE_ITR_ADAPTIVE_BULK`.
pub const BULK: u32 = 0x00;
/// `IXGBE_20K_ITR`: the EITR value an adaptive vector starts with (50 us
/// << 2) [256 ns].
pub const ITR_20K: u32 = 200;
/// `IXGBE_MAX_EITR` [256 ns]: the largest static setting is `0xFF8 >> 2`.
pub const MAX_EITR: u32 = 0x0FF8;
/// Largest `rx-usecs` / `tx-usecs` `ixgbe_set_coalesce` accepts [us].
pub const MAX_USECS_SETTING: u32 = MAX_EITR >> 2;
/// Bytes of FCS in a frame that the driver's byte counts do not include.
const FCS_BYTES: u64 = 4;

/// Link speeds with a branch of their own in `ixgbe_update_itr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkBranch {
    /// 10G, 100M and every speed without a case (5G): `/ (MIN_INC * 256)`.
    Wide,
    /// 2.5G, 1G, 10M: size capped at 8064, `/ (MIN_INC * 64)`.
    Narrow,
}

impl LinkBranch {
    /// The branch of a link speed [Mbit/s].
    pub fn of_mbps(mbps: u32) -> Self {
        match mbps {
            2500 | 1000 | 10 => LinkBranch::Narrow,
            _ => LinkBranch::Wide,
        }
    }
}

/// Which band of `ixgbe_update_itr` a call took (for traces and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    /// More than one jiffy since the last update.
    Gate,
    NoPackets,
    /// < 4 packets and < 9000 bytes: latency mode, sized.
    Latency,
    /// 4 to 47 packets: EITR usecs + 2.
    Under48,
    /// 48 to 95 packets: keep.
    Goldilocks,
    /// 96 to 255 packets: halve.
    Under256,
    /// >= 256 packets: bulk, sized.
    Bulk,
}

/// The average-size map of `ixgbe_update_itr` ("crude approximation" of a
/// socket buffer's worth of packets per interrupt), 256 times the result.
pub fn size_curve(avg_wire_size: u32) -> u32 {
    match avg_wire_size {
        0..=60 => 5120,
        61..=316 => avg_wire_size * 40 + 2720,
        317..=1084 => avg_wire_size * 15 + 11452,
        1085..=1967 => avg_wire_size * 5 + 22420,
        _ => 32256,
    }
}

/// One ring container (`struct ixgbe_ring_container`): its 8-bit `itr` and
/// the jiffy by which the next update must come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Container {
    pub itr: u8,
    /// `next_update`; `None`: never updated (0 from kzalloc, long past).
    pub next_update: Option<u64>,
}

impl Default for Container {
    /// `ixgbe_alloc_q_vector`: `MAX_USECS | LATENCY`.
    fn default() -> Self {
        Container {
            itr: (MAX_USECS | LATENCY) as u8,
            next_update: None,
        }
    }
}

impl Container {
    /// `ixgbe_update_itr` for this container: `q_itr` is the vector's
    /// current EITR value (`q_vector->itr`, usecs << 2), `jiffies` now,
    /// `packets`/`bytes` the container's totals since its last update (as
    /// the driver counts them). Stores and returns the band taken.
    pub fn update(
        &mut self,
        q_itr: u32,
        jiffies: u64,
        packets: u32,
        bytes: u32,
        link: LinkBranch,
    ) -> Band {
        let (itr, band) = self.compute(q_itr, jiffies, packets, bytes, link);
        // `ring_container->itr = itr;` into a u8.
        self.itr = itr as u8;
        self.next_update = Some(jiffies + 1);
        band
    }

    fn compute(
        &self,
        q_itr: u32,
        jiffies: u64,
        packets: u32,
        bytes: u32,
        link: LinkBranch,
    ) -> (u32, Band) {
        let gate = self.next_update.is_none_or(|n| jiffies > n);
        if gate {
            return (MIN_USECS | LATENCY, Band::Gate);
        }
        let cur_us = q_itr >> 2;
        if packets == 0 {
            let itr = (cur_us + MIN_INC).min(MAX_USECS) + (self.itr as u32 & LATENCY);
            return (itr, Band::NoPackets);
        }
        let (mode, band) = if packets < 4 && bytes < 9000 {
            (LATENCY, Band::Latency)
        } else if packets < 48 {
            return ((cur_us + MIN_INC).min(MAX_USECS), Band::Under48);
        } else if packets < 96 {
            return (cur_us, Band::Goldilocks);
        } else if packets < 256 {
            return ((q_itr >> 3).max(MIN_USECS), Band::Under256);
        } else {
            (BULK, Band::Bulk)
        };
        let mut size = size_curve(bytes / packets);
        if mode & LATENCY != 0 {
            size >>= 1;
        }
        let steps = match link {
            LinkBranch::Wide => size.div_ceil(MIN_INC * 256),
            LinkBranch::Narrow => size.min(8064).div_ceil(MIN_INC * 64),
        };
        (mode + steps * MIN_INC, band)
    }
}

/// `ixgbe_set_itr` after both containers were updated: the EITR value
/// (`usecs << 2`) from the smaller container value, flag included in the
/// comparison and cleared after it.
pub fn eitr_of(rx: Container, tx: Container) -> u32 {
    let new_itr = rx.itr.min(tx.itr) as u32;
    (new_itr & !LATENCY) << 2
}

/// Scenario config of `kind = "ixgbe"`: Linux ixgbe's `ethtool -C` settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IxgbeCfg {
    /// `ethtool -C rx-usecs`: 0 off, 1 adaptive (default), 2 to 1022
    /// static [us] (programmed as `usecs << 2`: odd values round down).
    #[serde(default = "adaptive")]
    #[schemars(range(min = 0, max = 1022))]
    pub rx_usecs: u32,
    /// `ethtool -C tx-usecs`: only 0 is accepted while the vectors carry an
    /// RX and a TX ring (the default, and the model's only layout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 0))]
    pub tx_usecs: Option<u32>,
}

fn adaptive() -> u32 {
    1
}

impl Default for IxgbeCfg {
    fn default() -> Self {
        IxgbeCfg {
            rx_usecs: 1,
            tx_usecs: None,
        }
    }
}

impl IxgbeCfg {
    /// The EITR value the driver writes for this setting at interface up
    /// (`q_vector->itr`) [256 ns]: 0, `IXGBE_20K_ITR` (adaptive) or `usecs << 2`.
    pub fn initial_itr(&self) -> u32 {
        match self.rx_usecs {
            0 => 0,
            1 => ITR_20K,
            us => us << 2,
        }
    }
}

impl ModeratorConfig for IxgbeCfg {
    fn validate(&self, port: &PortCaps) -> Result<(), FieldError> {
        if port.throttle != Throttle::Eitr2048ns {
            return Err(FieldError::new(
                "",
                format!(
                    "kind \"ixgbe\" drives the EITR of the Linux ixgbe chips (82599, x540, x550); \
                     chip {} is not one: pick one of those chips or another kind",
                    port.chip
                ),
            ));
        }
        check_range(
            "rx_usecs",
            self.rx_usecs,
            0,
            MAX_USECS_SETTING,
            " (0 off, 1 adaptive, 2 to 1022 us static: ixgbe_set_coalesce refuses values \
             above IXGBE_MAX_EITR >> 2)",
        )?;
        if let Some(tx) = self.tx_usecs {
            check_range("tx_usecs", tx, 0, MAX_USECS_SETTING, " us")?;
            if tx != 0 {
                return Err(FieldError::new(
                    "tx_usecs",
                    format!(
                        "got {tx}; allowed: 0 only. Each vector serves an RX and a TX ring, and \
                         ixgbe_set_coalesce rejects TX-specific settings on such vectors \
                         (-EINVAL): rx_usecs moderates both directions; remove tx_usecs"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        Box::new(Ixgbe::new(self.clone(), ctx.link_mbps, ctx.hz))
    }

    fn config_field(&self, param: &str) -> Option<&'static str> {
        (param == "itr_256ns").then_some("rx_usecs")
    }

    fn interval_is_static(&self) -> bool {
        self.rx_usecs != 1
    }

    fn live_change(&self, field: &str) -> Result<LiveChange, String> {
        match field {
            // ixgbe_set_coalesce writes every vector's EITR at once.
            "rx_usecs" => Ok(LiveChange::Reprogram),
            _ => Err(format!(
                "`{field}` cannot change: only 0 is accepted on RX/TX vectors; change rx_usecs"
            )),
        }
    }
}

/// Linux ixgbe moderation of one vector.
pub struct Ixgbe {
    cfg: IxgbeCfg,
    link: LinkBranch,
    hz: u32,
    /// `q_vector->itr`: the EITR value written last [256 ns].
    q_itr: u32,
    rx: Container,
    tx: Container,
    last: Option<TraceRow>,
}

impl Ixgbe {
    pub fn new(cfg: IxgbeCfg, link_mbps: u32, hz: u32) -> Self {
        Ixgbe {
            q_itr: cfg.initial_itr(),
            cfg,
            link: LinkBranch::of_mbps(link_mbps),
            hz: hz.max(1),
            rx: Container::default(),
            tx: Container::default(),
            last: None,
        }
    }

    /// The EITR value the driver holds now (`q_vector->itr`) [256 ns].
    pub fn itr(&self) -> u32 {
        self.q_itr
    }

    /// The two ring containers (RX, TX).
    pub fn containers(&self) -> (Container, Container) {
        (self.rx, self.tx)
    }

    fn jiffies(&self, s: &Sample) -> u64 {
        (s.now.as_ns() as u128 * self.hz as u128 / 1_000_000_000) as u64
    }
}

/// The driver's count of bytes for `frames` frames of `frame_bytes` in all
/// (FCS off), truncated to its `unsigned int`.
fn driver_bytes(frame_bytes: u64, frames: u64) -> u32 {
    frame_bytes.saturating_sub(FCS_BYTES * frames) as u32
}

impl Moderator for Ixgbe {
    fn name(&self) -> &str {
        "ixgbe"
    }

    fn initial(&self) -> ModerationParams {
        ModerationParams::itr(self.q_itr)
    }

    fn invocation(&self) -> Invocation {
        if self.cfg.rx_usecs == 1 {
            Invocation::NapiComplete
        } else {
            Invocation::Never
        }
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        let j = self.jiffies(s);
        let (q, link) = (self.q_itr, self.link);
        let tx_band = self.tx.update(
            q,
            j,
            s.tx_packets as u32,
            driver_bytes(s.tx_bytes, s.tx_packets),
            link,
        );
        let rx_band = self.rx.update(
            q,
            j,
            s.rx_packets as u32,
            driver_bytes(s.rx_bytes, s.rx_packets),
            link,
        );
        let new_itr = eitr_of(self.rx, self.tx);
        self.last = Some(TraceRow::at(
            s,
            vec![
                ("rx_packets", s.rx_packets as i64),
                ("rx_bytes", s.rx_bytes as i64),
                ("tx_packets", s.tx_packets as i64),
                ("tx_bytes", s.tx_bytes as i64),
                ("jiffies", j as i64),
                ("rx_band", rx_band as i64),
                ("tx_band", tx_band as i64),
                ("rx_itr", self.rx.itr as i64),
                ("tx_itr", self.tx.itr as i64),
                ("itr_256ns", new_itr as i64),
            ],
        ));
        if new_itr == self.q_itr {
            return None;
        }
        self.q_itr = new_itr;
        Some(ModerationParams::itr(new_itr))
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests;
