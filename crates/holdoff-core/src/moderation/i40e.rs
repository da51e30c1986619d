//! Linux i40e interrupt moderation (Intel X710, XL710): `ethtool -C
//! adaptive-rx, adaptive-tx, rx-usecs, tx-usecs, rx-usecs-high` and the
//! adaptive ITR of the 2017 rework (`i40e_update_itr`, deferred
//! `target_itr` / `current_itr`).
//!
//! Models (torvalds/linux `drivers/net/ethernet/intel/i40e/`):
//! - Settings as `__i40e_set_coalesce` (`i40e_ethtool.c`) takes them from
//!   the interface defaults (`I40E_ITR_RX_DEF` = `I40E_ITR_TX_DEF` = 50 us
//!   dynamic, INTRL 0): `rx-usecs-high` 0 to `INTRL_REG_TO_USEC(
//!   I40E_MAX_INTRL)` = 236 ("Invalid value, rx-usecs-high range is
//!   0-236"), rounded down to 4 us ("Interrupt rate limit rounded down to
//!   %d"), independent of adaptive; `rx-usecs` refused while adaptive-rx is
//!   on unless unchanged ("RX interrupt moderation cannot be changed if
//!   adaptive-rx is enabled."), at most `I40E_MAX_ITR` 8160 ("Invalid
//!   value, rx-usecs range is 0-8160"); the stored value is
//!   `ITR_REG_ALIGN(usecs)`, which rounds an odd value *up* to even
//!   (`__ALIGN_MASK(x, ~I40E_ITR_MASK)`); the same for TX.
//! - Registers: the ITR interval in 2 us (`i40e_buildreg_itr`: `itr &
//!   I40E_ITR_MASK` shifted into `INTERVAL` with one bit less), the INTRL in
//!   4 us (`i40e_intrl_usec_to_reg`).
//! - Adaptive (`i40e_update_itr`, `i40e_update_enable_itr`, from "i40e/i40evf:
//!   Add new logic for adaptive ITR", 2017-12, the same family as ixgbe's
//!   b4ded8327fea): when a NAPI poll completes, each dynamic container
//!   (TX, then RX) computes a `target_itr` [us, plus the 0x8000 latency
//!   flag]: more than one jiffy since its last update -> RX `MIN | LATENCY`
//!   (2 us), TX `MAX | LATENCY` (126 us); within 3 polls of an ITR write
//!   (`itr_countdown`) -> unchanged; RX with 1..3 packets and < 9000 bytes
//!   while TX is in latency mode -> latency, sized; TX with < 4 packets and
//!   both at 126 -> `MAX | LATENCY`; TX with > 32 packets drops its latency
//!   flag; < 56 packets -> target + 2 (at most 126, flag kept); 56..112 ->
//!   the smaller current ITR (flag cleared); 113..256 -> half of it (even,
//!   at least 2); more -> bulk, sized. Sizing maps the average size (<= 60:
//!   4096; <= 380: 40x + 1696; <= 1084: 15x + 11452; <= 1980: 5x + 22420;
//!   else 32256), halves it in latency mode and divides by the link's
//!   divisor (`i40e_itr_divisor`: 40G 2048, 25G/20G 1024, 10G and others
//!   512, 1G/100M 64), rounding up, times 2; capped at 126. Then one ITR at
//!   most is written per poll, by priority: RX down, TX down (or TX up more
//!   than RX up), RX up; a write sets `itr_countdown = 3`, a poll without
//!   one counts it down. Jiffies are the host's HZ clock.
//!
//! Simplifies: the vector has one throttle in the model: the RX ITR (index
//! 0) times its interrupts; the TX ITR (index 1) is computed, traced and
//! reported only. Byte counts exclude the FCS (4 bytes per frame).
//!
//! Units: ITR values [us] with the 0x8000 flag; INTRL [us]; jiffies [1/HZ].

use super::ice::intrl_gran;
use super::{
    check_range, BuildCtx, FieldError, Invocation, LiveChange, ModerationParams, Moderator,
    ModeratorConfig, PortCaps, Sample, TraceRow,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `I40E_ITR_ADAPTIVE_MIN_INC` [us].
pub const MIN_INC: u32 = 2;
/// `I40E_ITR_ADAPTIVE_MIN_USECS` [us].
pub const MIN_USECS: u32 = 2;
/// `I40E_ITR_ADAPTIVE_MAX_USECS` (0x7e) [us].
pub const MAX_USECS: u32 = 126;
/// `I40E_ITR_ADAPTIVE_LATENCY`.
pub const LATENCY: u32 = 0x8000;
/// `I40E_ITR_ADAPTIVE_BULK`.
pub const BULK: u32 = 0;
/// `I40E_ITR_MASK`.
pub const ITR_MASK: u32 = 0x1FFE;
/// `I40E_MAX_ITR` [us].
pub const MAX_ITR_US: u32 = 8160;
/// `INTRL_REG_TO_USEC(I40E_MAX_INTRL)` = 0x3B << 2 [us].
pub const MAX_INTRL_US: u32 = 236;
/// `I40E_ITR_20K`: the default ITR of both containers [us].
pub const DFLT_ITR_US: u32 = 50;
/// `ITR_COUNTDOWN_START`.
pub const COUNTDOWN_START: u8 = 3;
const FCS_BYTES: u64 = 4;

/// `ITR_REG_ALIGN` of i40e: an odd value rounds up to even.
pub const fn itr_reg_align(us: u32) -> u32 {
    us.wrapping_add(!ITR_MASK) & ITR_MASK
}

/// `i40e_itr_divisor` for a link speed [Mbit/s].
pub const fn itr_divisor(link_mbps: u32) -> u32 {
    match link_mbps {
        40_000 => MIN_INC * 1024,
        25_000 | 20_000 => MIN_INC * 512,
        1_000 | 100 => MIN_INC * 32,
        _ => MIN_INC * 256,
    }
}

/// The average-size map of `i40e_update_itr`, 256 times too large.
pub const fn size_curve(avg: u32) -> u32 {
    match avg {
        0..=60 => 4096,
        61..=380 => avg * 40 + 1696,
        381..=1084 => avg * 15 + 11452,
        1085..=1980 => avg * 5 + 22420,
        _ => 32256,
    }
}

/// Scenario config of `kind = "i40e"`: Linux i40e's `ethtool -C` settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct I40eCfg {
    /// `ethtool -C adaptive-rx` (default on).
    #[serde(default = "on")]
    pub adaptive_rx: bool,
    /// `ethtool -C adaptive-tx` (default on).
    #[serde(default = "on")]
    pub adaptive_tx: bool,
    /// `ethtool -C rx-usecs` [us], 0 to 8160; odd values round up. Only the
    /// default 50 while adaptive-rx is on.
    #[serde(default = "dflt_itr")]
    #[schemars(range(min = 0, max = 8160))]
    pub rx_usecs: u32,
    /// `ethtool -C tx-usecs` [us], as `rx_usecs` for TX.
    #[serde(default = "dflt_itr")]
    #[schemars(range(min = 0, max = 8160))]
    pub tx_usecs: u32,
    /// `ethtool -C rx-usecs-high`: the vector's interrupt rate limit [us],
    /// 0 (off) to 236, rounded down to 4 us; allowed with adaptive on.
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

impl Default for I40eCfg {
    fn default() -> Self {
        I40eCfg {
            adaptive_rx: true,
            adaptive_tx: true,
            rx_usecs: DFLT_ITR_US,
            tx_usecs: DFLT_ITR_US,
            rx_usecs_high: 0,
        }
    }
}

impl ModeratorConfig for I40eCfg {
    fn validate(&self, port: &PortCaps) -> Result<(), FieldError> {
        if intrl_gran(port).is_none() {
            return Err(FieldError::new(
                "",
                format!(
                    "kind \"i40e\" drives the ITR and INTRL of the Intel 700 Series (x710, \
                     xl710); chip {} is not one: pick one of those chips or another kind",
                    port.chip
                ),
            ));
        }
        check_range(
            "rx_usecs_high",
            self.rx_usecs_high,
            0,
            MAX_INTRL_US,
            " us (__i40e_set_coalesce: \"Invalid value, rx-usecs-high range is 0-236\")",
        )?;
        for (field, usecs, adaptive, dir) in [
            ("rx_usecs", self.rx_usecs, self.adaptive_rx, ("RX", "rx")),
            ("tx_usecs", self.tx_usecs, self.adaptive_tx, ("TX", "tx")),
        ] {
            if adaptive && usecs != DFLT_ITR_US {
                return Err(FieldError::new(
                    field,
                    format!(
                        "got {usecs} with adaptive_{} on; __i40e_set_coalesce refuses it: \
                         \"{} interrupt moderation cannot be changed if adaptive-{} is \
                         enabled.\": set adaptive_{} = false (or leave {field} at {DFLT_ITR_US})",
                        dir.1, dir.0, dir.1, dir.1
                    ),
                ));
            }
            check_range(
                field,
                usecs,
                0,
                MAX_ITR_US,
                &format!(
                    " us (__i40e_set_coalesce: \"Invalid value, {}-usecs range is 0-8160\")",
                    dir.1
                ),
            )?;
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        Box::new(I40e::new(self.clone(), ctx.link_mbps, ctx.hz))
    }

    fn config_field(&self, param: &str) -> Option<&'static str> {
        match param {
            "eitr_us" if !self.adaptive_rx => Some("rx_usecs"),
            "intrl_us" => Some("rx_usecs_high"),
            _ => None,
        }
    }

    fn interval_is_static(&self) -> bool {
        !self.adaptive_rx
    }

    fn live_change(&self, field: &str) -> Result<LiveChange, String> {
        match field {
            // i40e_set_itr_per_queue sets target_itr (written at the next
            // interrupt enable) and writes the INTRL at once.
            "adaptive_rx" | "adaptive_tx" | "rx_usecs" | "tx_usecs" | "rx_usecs_high" => {
                Ok(LiveChange::Reprogram)
            }
            _ => Err(format!("`{field}` is not an i40e setting")),
        }
    }
}

/// Which band of `i40e_update_itr` a container took (traces and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Band {
    /// The container is static: no update.
    Static,
    /// More than one jiffy since the last update.
    Gate,
    /// An ITR was written within the last polls (`itr_countdown`).
    Countdown,
    /// TX with < 4 packets and both containers at 126 us.
    TxIdle,
    /// < 56 packets: + 2 us.
    Under56,
    /// 56 to 112 packets: the current ITR.
    Goldilocks,
    /// 113 to 256 packets: half.
    Halve,
    /// RX 1..3 packets, < 9000 bytes, TX in latency mode: sized.
    Latency,
    /// > 256 packets: sized.
    Bulk,
}

/// `struct i40e_ring_container`'s adaptive state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Container {
    /// `target_itr` [us | 0x8000].
    pub target: u32,
    /// `current_itr` [us | 0x8000].
    pub current: u32,
    /// `next_update` [jiffies].
    pub next_update: u64,
    pub dynamic: bool,
}

impl Container {
    /// `i40e_vsi_configure_msix`: target = current = the setting, next
    /// update one jiffy after interface up (jiffy 0 in the model).
    pub fn new(itr_us: u32, dynamic: bool) -> Self {
        Container {
            target: itr_us,
            current: itr_us,
            next_update: 1,
            dynamic,
        }
    }
}

/// The inputs `i40e_update_itr` reads besides the container itself.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    pub is_rx: bool,
    pub jiffies: u64,
    pub countdown: u8,
    /// The other container's `target_itr` (RX reads TX's latency flag; TX
    /// reads RX's value) and both `current_itr`s.
    pub other_target: u32,
    pub tx_current: u32,
    pub rx_current: u32,
    pub divisor: u32,
}

/// `i40e_update_itr` for one container with its packet/byte totals since
/// its last update. Updates `target_itr` and `next_update`.
pub fn update_itr(rc: &mut Container, c: &Ctx, packets: u32, bytes: u32) -> Band {
    if !rc.dynamic {
        return Band::Static;
    }
    let (itr, band) = compute(rc, c, packets, bytes);
    rc.target = itr;
    rc.next_update = c.jiffies + 1;
    band
}

fn cap(itr: u32) -> u32 {
    if itr & ITR_MASK > MAX_USECS {
        (itr & LATENCY) + MAX_USECS
    } else {
        itr
    }
}

fn compute(rc: &mut Container, c: &Ctx, packets: u32, bytes: u32) -> (u32, Band) {
    let idle = if c.is_rx {
        MIN_USECS | LATENCY
    } else {
        MAX_USECS | LATENCY
    };
    if c.jiffies > rc.next_update {
        return (idle, Band::Gate);
    }
    if c.countdown > 0 {
        return (rc.target, Band::Countdown);
    }
    let sized = |mode: u32, band: Band| {
        let mut avg = size_curve(bytes / packets.max(1));
        if mode & LATENCY != 0 {
            avg /= 2;
        }
        (cap(mode + avg.div_ceil(c.divisor) * MIN_INC), band)
    };
    if c.is_rx {
        if packets > 0 && packets < 4 && bytes < 9000 && c.other_target & LATENCY != 0 {
            return sized(LATENCY, Band::Latency);
        }
    } else if packets < 4 {
        if rc.target == MAX_USECS && c.other_target & ITR_MASK == MAX_USECS {
            return (idle, Band::TxIdle);
        }
    } else if packets > 32 {
        rc.target &= !LATENCY;
    }
    if packets < 56 {
        return (cap(rc.target + MIN_INC), Band::Under56);
    }
    if packets <= 256 {
        let itr = c.tx_current.min(c.rx_current) & ITR_MASK;
        if packets <= 112 {
            return (itr, Band::Goldilocks);
        }
        return (((itr / 2) & ITR_MASK).max(MIN_USECS), Band::Halve);
    }
    sized(BULK, Band::Bulk)
}

/// Which ITR `i40e_update_enable_itr` writes after both updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Write {
    Rx,
    Tx,
    None,
}

/// `i40e_update_enable_itr`'s choice: at most one ITR per poll, by
/// priority; updates `current_itr` and the countdown.
pub fn choose_write(rx: &mut Container, tx: &mut Container, countdown: &mut u8) -> Write {
    // u16 operands promote to int in C: the differences are signed.
    let rx_up = rx.target as i32 - rx.current as i32;
    let tx_up = tx.target as i32 - tx.current as i32;
    let w = if rx.target < rx.current {
        rx.current = rx.target;
        Write::Rx
    } else if tx.target < tx.current || rx_up < tx_up {
        tx.current = tx.target;
        Write::Tx
    } else if rx.current != rx.target {
        rx.current = rx.target;
        Write::Rx
    } else {
        *countdown = countdown.saturating_sub(1);
        return Write::None;
    };
    *countdown = COUNTDOWN_START;
    w
}

/// Linux i40e moderation of one vector.
pub struct I40e {
    cfg: I40eCfg,
    divisor: u32,
    hz: u32,
    pub rx: Container,
    pub tx: Container,
    pub countdown: u8,
    last: Option<TraceRow>,
}

impl I40e {
    pub fn new(cfg: I40eCfg, link_mbps: u32, hz: u32) -> Self {
        I40e {
            rx: Container::new(itr_reg_align(cfg.rx_usecs), cfg.adaptive_rx),
            tx: Container::new(itr_reg_align(cfg.tx_usecs), cfg.adaptive_tx),
            cfg,
            divisor: itr_divisor(link_mbps),
            hz: hz.max(1),
            countdown: 0,
            last: None,
        }
    }

    fn jiffies(&self, s: &Sample) -> u64 {
        (s.now.as_ns() as u128 * self.hz as u128 / 1_000_000_000) as u64
    }
}

impl Moderator for I40e {
    fn name(&self) -> &str {
        "i40e"
    }

    fn initial(&self) -> ModerationParams {
        ModerationParams {
            eitr_us: Some(self.rx.current & ITR_MASK),
            // i40e_intrl_usec_to_reg: rounded down to 4 us (the chip holds
            // 4 us counts, so the model passes the value as set).
            intrl_us: Some(self.cfg.rx_usecs_high),
            ..ModerationParams::default()
        }
    }

    fn invocation(&self) -> Invocation {
        if self.cfg.adaptive_rx || self.cfg.adaptive_tx {
            Invocation::NapiComplete
        } else {
            Invocation::Never
        }
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        let j = self.jiffies(s);
        let bytes = |b: u64, p: u64| b.saturating_sub(FCS_BYTES * p) as u32;
        let mut ctx = Ctx {
            is_rx: false,
            jiffies: j,
            countdown: self.countdown,
            other_target: self.rx.target,
            tx_current: self.tx.current,
            rx_current: self.rx.current,
            divisor: self.divisor,
        };
        let tx_band = update_itr(
            &mut self.tx,
            &ctx,
            s.tx_packets as u32,
            bytes(s.tx_bytes, s.tx_packets),
        );
        ctx.is_rx = true;
        ctx.other_target = self.tx.target;
        let rx_band = update_itr(
            &mut self.rx,
            &ctx,
            s.rx_packets as u32,
            bytes(s.rx_bytes, s.rx_packets),
        );
        let w = choose_write(&mut self.rx, &mut self.tx, &mut self.countdown);
        self.last = Some(TraceRow::at(
            s,
            vec![
                ("rx_packets", s.rx_packets as i64),
                ("tx_packets", s.tx_packets as i64),
                ("jiffies", j as i64),
                ("rx_band", rx_band as i64),
                ("tx_band", tx_band as i64),
                ("rx_target", self.rx.target as i64),
                ("tx_target", self.tx.target as i64),
                ("rx_itr_us", (self.rx.current & ITR_MASK) as i64),
                ("tx_itr_us", (self.tx.current & ITR_MASK) as i64),
                ("write", w as i64),
                ("countdown", self.countdown as i64),
            ],
        ));
        (w == Write::Rx).then(|| ModerationParams::eitr(self.rx.current & ITR_MASK))
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests;
