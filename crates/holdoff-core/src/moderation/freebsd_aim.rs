//! FreeBSD e1000 (lem/em/igb) adaptive interrupt moderation as re-added in
//! 2024 ("e1000: Re-add AIM", review D46768), the `enable_aim` sysctl, and
//! the per-queue `interrupt_rate` readback.
//!
//! Models (FreeBSD `sys/dev/e1000/if_em.c` `em_newitr` and its igc twin
//! `sys/dev/igc/if_igc.c` `igc_neweitr`, 2024; `if_em.h`, `if_igc.h`):
//! a per-RX-queue latency class `nextlatency` in {disabled 0, lowest 1,
//! low 2, bulk 3}, updated in the interrupt filter at every interrupt of the
//! vector, before the deferred RX/TX task is scheduled. The inputs are the
//! byte and packet counts of the vector's RX ring and TX ring since the
//! previous interrupt (the driver zeroes them after each call):
//!
//! ```text
//! tx_bytes == 0 and rx_bytes == 0         -> idle: keep the register, no state change
//! enable_aim == 0                         -> class := disabled, rate = max_interrupt_rate
//! link < 1000 Mb/s                        -> rate 4000 (class untouched)
//! 2 * max_frame > PBA (KB << 10)          -> rate = max_interrupt_rate, enable_aim := 0
//! otherwise, with bytes/bpp/packets the larger of the TX and RX figures
//! (a direction counts only if it has both bytes and packets):
//!   disabled: -> low                      (bootstrap)
//!   lowest:   bpp > 8000 -> bulk; else packets < 5 and bytes > 512 -> low
//!   low:      bytes > 10000: bpp > 8000 -> bulk; else packets < 10 or
//!                            bpp > 1200 -> bulk; else packets > 35 -> lowest
//!             else bpp > 2000 -> bulk; else packets < 3 and bytes < 512 -> lowest
//!   bulk:     bytes > 25000: packets > 35 -> low; else bytes < 1500 -> low
//!   enable_aim == 1 and class == lowest -> low  (the "normal" mode caps at 20K)
//! rate = {lowest 70000, low 20000, bulk 4000, disabled max_interrupt_rate}
//! ```
//!
//! There is no smoothing: the class moves at most one step per interrupt and
//! the rate is a pure function of the class. The register is rewritten only
//! when the computed register word differs from the last one written
//! (`itr_setting`).
//!
//! Register conversion, selected by [`AimTarget`]:
//! - lem/em ITR (and 82574 EITR): `EM_INTS_TO_ITR(r) = 1e9 / (r * 256)`,
//!   256 ns units: 8000 -> 488, 20000 -> 195, 70000 -> 55, 4000 -> 976;
//! - igb EITR (82576 and later): `IGB_INTS_TO_EITR(r) = ((1e6 / r) << 2) &
//!   0x7FFC` in 0.25 us raw units (interval field, bits 14:2, in us), written
//!   with `CNT_IGNR` (bit 31): 8000 -> 500 (125 us), 20000 -> 200 (50 us),
//!   70000 -> 56 (14 us), 4000 -> 1000 (250 us). The 82575 variant writes the
//!   value replicated into the upper half instead (`v | v << 16`); it is
//!   available as [`igb_eitr_word`] but not as a target (its EITR counts in
//!   256 ns like ITR).
//!
//! `interrupt_rate` sysctl: the driver reports the programmed cap converted
//! back to a rate, not a measured count ([`interrupt_rate_sysctl`]). For
//! lem/em it applies the same macro to the register (`1e9 / (reg * 256)`,
//! truncating: 488 -> 8004, 195 -> 20032, 55 -> 71022, 976 -> 4002). For
//! igb/igc the 2024 code applied the *forward* macro to the masked register,
//! `((1e6 / (reg & 0x7FFC)) << 2) & 0x7FFC`; the final mask keeps only bits
//! 14:2, so every readback of 32 768/s or more wraps: raw 56 (70K) reads
//! back (17857 << 2) & 0x7FFC = 71428 & 0x7FFC = 5892 instead of 71428.
//! [`igb_eitr_to_ints`] is the later, correct inverse and
//! [`true_rate_per_s`] the exact rate for comparison.
//!
//! Simplifies / resolves:
//! - The initial register is the static default written at interface up:
//!   ITR = EM_INTS_TO_ITR(max_interrupt_rate) (488), or EITR =
//!   (4e6 / max_interrupt_rate) & 0x7FFC | CNT_IGNR (500). `itr_setting`
//!   starts equal to it, so an `enable_aim=0` interrupt does not rewrite the
//!   same value (the later FreeBSD code seeds it the same way).
//! - The 2024 code could use `bytes`/`bpp`/`packets` uninitialised when the
//!   TX direction had no packets; here they start at 0 (the 2025 fix).
//! - The C counters are `u32` (FreeBSD's `max()` takes `u_int`); sample
//!   counts are truncated to 32 bits for the arithmetic. The idle test uses
//!   the untruncated counts, as the C code tests the ring counters.
//! - `enable_aim` values other than 0, 1, 2 behave as 2 (the code tests only
//!   `!= 0` and `== 1`; the test-only "mode 3" was not in the shipped code).
//! - A `max_interrupt_rate` of 0 (a division by zero in C) gives register 0.
//!
//! Units: bytes, packets, rates [int/s]; ITR [256 ns]; EITR raw [0.25 us],
//! `eitr_us` [1 us].

use super::e1000_itr::{latency_transition, LatencyClass};
use super::{
    check_range, BuildCtx, FieldError, Invocation, LiveChange, ModerationParams, Moderator,
    ModeratorConfig, PortCaps, Sample, Throttle, TraceRow,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `*_INTS_4K`: the bulk class, and the sub-gigabit rate [int/s].
pub const INTS_4K: u32 = 4000;
/// `*_INTS_20K`: the low-latency class [int/s].
pub const INTS_20K: u32 = 20000;
/// `*_INTS_70K`: the lowest-latency class [int/s].
pub const INTS_70K: u32 = 70000;
/// `EM_INTS_DEFAULT` / `IGC_INTS_DEFAULT`: `max_interrupt_rate` [int/s].
pub const INTS_DEFAULT: u32 = 8000;
/// EITR interval mask (bits 14:2), `IGB_QVECTOR_MASK` / `IGC_QVECTOR_MASK`.
pub const EITR_QVECTOR_MASK: u32 = 0x7FFC;
/// EITR bit 31 "counter ignore": a write does not reset the counters.
pub const EITR_CNT_IGNR: u32 = 0x8000_0000;
/// `em_newitr` bulk -> low byte threshold (as igb; Linux e1000: 6000) [bytes].
pub const BULK_TO_LOW_BYTES: u64 = 1_500;

/// Which register the rate is written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AimTarget {
    /// lem/em ITR (or 82574 EITR) in 256 ns units; output `itr_256ns`.
    EmItr,
    /// igb (82576+) EITR in 0.25 us raw units with CNT_IGNR; output `eitr_us`.
    IgbEitr,
}

/// The latency class kept per RX queue (`rx_nextlatency`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    Disabled = 0,
    Lowest = 1,
    Low = 2,
    Bulk = 3,
}

impl Latency {
    /// The Linux class this one stands for; `None` for `disabled`, which
    /// Linux does not have.
    pub const fn class(self) -> Option<LatencyClass> {
        match self {
            Latency::Disabled => None,
            Latency::Lowest => Some(LatencyClass::Lowest),
            Latency::Low => Some(LatencyClass::Low),
            Latency::Bulk => Some(LatencyClass::Bulk),
        }
    }
}

impl From<LatencyClass> for Latency {
    fn from(c: LatencyClass) -> Self {
        match c {
            LatencyClass::Lowest => Latency::Lowest,
            LatencyClass::Low => Latency::Low,
            LatencyClass::Bulk => Latency::Bulk,
        }
    }
}

/// Driver and link settings the algorithm reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AimConfig {
    /// `hw.em.enable_aim` / `dev.em.N.enable_aim`: 0 off, 1 normal, 2 low latency.
    pub enable_aim: u32,
    /// `hw.em.max_interrupt_rate` [int/s]: the static rate and the rate of
    /// the `disabled` class.
    pub max_interrupt_rate: u32,
    /// Negotiated link speed [Mb/s].
    pub link_speed_mbps: u32,
    /// `isc_max_frame_size` [bytes]: MTU + 14 + 4.
    pub max_frame_size: u32,
    /// Receive packet buffer allocation (PBA) [KB].
    pub pba_kb: u32,
}

impl Default for AimConfig {
    /// The FreeBSD defaults on a gigabit link with a 1500-byte MTU:
    /// `enable_aim` 1, 8000/s, 1518-byte frames, a 48 KB receive buffer
    /// (E1000_PBA_48K, the 8254x value; any igb PBA passes the same check
    /// at this frame size).
    fn default() -> Self {
        AimConfig {
            enable_aim: 1,
            max_interrupt_rate: INTS_DEFAULT,
            link_speed_mbps: 1000,
            max_frame_size: 1518,
            pba_kb: 48,
        }
    }
}

/// `EM_INTS_TO_ITR`: `1e9 / (rate * 256)` in C `u32` arithmetic [256 ns].
/// The same expression is the em `interrupt_rate` readback of a register.
/// Rate 0 (a C division by zero) gives 0.
pub const fn em_ints_to_itr(rate: u32) -> u32 {
    match rate.wrapping_mul(256) {
        0 => 0,
        d => 1_000_000_000 / d,
    }
}

/// `IGB_INTS_TO_EITR` (twin of `IGC_INTS_TO_EITR`): `((1e6 / rate) << 2) &
/// 0x7FFC`, the raw EITR interval [0.25 us]. Rate 0 gives 0.
pub const fn igb_ints_to_eitr(rate: u32) -> u32 {
    match 1_000_000u32.checked_div(rate) {
        Some(q) => (q << 2) & EITR_QVECTOR_MASK,
        None => 0,
    }
}

/// `IGB_EITR_TO_INTS` / `IGC_EITR_TO_INTS` (the later, correct inverse):
/// `(1e6 << 2) / (reg & 0x7FFC)` [int/s]; 0 for a zero interval.
pub const fn igb_eitr_to_ints(reg: u32) -> u32 {
    match reg & EITR_QVECTOR_MASK {
        0 => 0,
        v => 4_000_000 / v,
    }
}

/// The full 32-bit igb EITR word the driver writes for `rate`: the raw
/// interval with CNT_IGNR (82576 and later), or the interval replicated into
/// bits 31:16 on the 82575.
pub const fn igb_eitr_word(rate: u32, mac_82575: bool) -> u32 {
    let v = igb_ints_to_eitr(rate);
    if mac_82575 {
        v | (v << 16)
    } else {
        v | EITR_CNT_IGNR
    }
}

/// The `interrupt_rate` sysctl as the 2024 driver computes it from the
/// register word `reg` [int/s].
///
/// EmItr: `reg > 0 ? EM_INTS_TO_ITR(reg) : 0` (exact up to truncation).
/// IgbEitr: `usec = reg & 0x7FFC; usec > 0 ? IGB_INTS_TO_EITR(usec) : 0`,
/// i.e. the forward macro re-applied. Its final `& 0x7FFC` drops every bit
/// above 14, so readbacks of 32 768/s or more wrap (70K: raw 56 -> 5892),
/// and the two low bits are cleared (the result is a multiple of 4).
pub const fn interrupt_rate_sysctl(target: AimTarget, reg: u32) -> u32 {
    match target {
        AimTarget::EmItr => {
            if reg > 0 {
                em_ints_to_itr(reg)
            } else {
                0
            }
        }
        AimTarget::IgbEitr => igb_ints_to_eitr(reg & EITR_QVECTOR_MASK),
    }
}

/// The true maximum interrupt rate a register word allows [int/s], for
/// comparison with the readback: `1e9 / (reg * 256 ns)` for ITR,
/// `4e6 / (reg & 0x7FFC)` for igb EITR. 0 means unthrottled.
pub fn true_rate_per_s(target: AimTarget, reg: u32) -> f64 {
    match target {
        AimTarget::EmItr if reg & 0xFFFF == 0 => 0.0,
        AimTarget::EmItr => 1e9 / ((reg & 0xFFFF) as f64 * 256.0),
        AimTarget::IgbEitr if reg & EITR_QVECTOR_MASK == 0 => 0.0,
        AimTarget::IgbEitr => 4e6 / (reg & EITR_QVECTOR_MASK) as f64,
    }
}

/// The register word the driver writes for `rate` on `target`.
pub const fn register_word(target: AimTarget, rate: u32) -> u32 {
    match target {
        AimTarget::EmItr => em_ints_to_itr(rate),
        AimTarget::IgbEitr => igb_eitr_word(rate, false),
    }
}

/// The register settings a register word stands for.
pub const fn params_for(target: AimTarget, reg: u32) -> ModerationParams {
    match target {
        AimTarget::EmItr => ModerationParams::itr(reg),
        AimTarget::IgbEitr => ModerationParams::eitr((reg & EITR_QVECTOR_MASK) >> 2),
    }
}

/// `(bytes, bytes_per_packet, packets)`: the larger of the TX and RX figures,
/// each direction counted only if it has both bytes and packets.
pub fn aim_inputs(
    tx_bytes: u32,
    tx_packets: u32,
    rx_bytes: u32,
    rx_packets: u32,
) -> (u32, u32, u32) {
    let (mut bytes, mut bpp, mut packets) = (0u32, 0u32, 0u32);
    if tx_bytes != 0 && tx_packets != 0 {
        bytes = tx_bytes;
        bpp = tx_bytes / tx_packets;
        packets = tx_packets;
    }
    if rx_bytes != 0 && rx_packets != 0 {
        bytes = bytes.max(rx_bytes);
        bpp = bpp.max(rx_bytes / rx_packets);
        packets = packets.max(rx_packets);
    }
    (bytes, bpp, packets)
}

/// One step of the latency state machine (AIM enabled), including the
/// `enable_aim == 1` trim of `lowest` to `low`. The lowest/low/bulk
/// transitions are Linux e1000's table with igb's 1500-byte bulk -> low test
/// ([`latency_transition`], where the shared arithmetic is documented);
/// FreeBSD adds the `disabled` bootstrap, feeds it the larger direction's
/// figures ([`aim_inputs`]) and runs it even when `packets` is 0.
pub fn next_latency(cur: Latency, enable_aim: u32, bytes: u32, bpp: u32, packets: u32) -> Latency {
    let next = match cur.class() {
        None => Latency::Low,
        Some(class) => Latency::from(latency_transition(
            class,
            u64::from(bytes),
            u64::from(bpp),
            u64::from(packets),
            BULK_TO_LOW_BYTES,
        )),
    };
    if enable_aim == 1 && next == Latency::Lowest {
        Latency::Low
    } else {
        next
    }
}

/// The rate of a latency class [int/s].
pub const fn latency_rate(l: Latency, max_interrupt_rate: u32) -> u32 {
    match l {
        Latency::Lowest => INTS_70K,
        Latency::Low => INTS_20K,
        Latency::Bulk => INTS_4K,
        Latency::Disabled => max_interrupt_rate,
    }
}

/// Which branch of the handler decided (trace field `path`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AimPath {
    /// No bytes in either direction: nothing done.
    Idle = 0,
    /// The latency state machine ran.
    StateMachine = 1,
    /// `enable_aim == 0`: the static rate.
    Static = 2,
    /// Link below 1000 Mb/s: 4000/s.
    SubGig = 3,
    /// Packet buffer smaller than two frames: static rate, AIM switched off.
    SmallBuffer = 4,
}

/// Scenario config of `kind = "freebsd-aim"`: FreeBSD em/igb adaptive
/// interrupt moderation (2024): `enable_aim` 0 (static
/// `max_interrupt_rate`), 1 or 2 (per-interrupt 4K/20K/70K classes; 2 allows
/// the lowest-latency class). Writes ITR on e1000-family chips, EITR on
/// igb-class chips.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FreebsdAimCfg {
    /// `hw.em.enable_aim`: 0, 1 or 2.
    #[serde(default = "one")]
    #[schemars(range(min = 0, max = 2))]
    pub enable_aim: u32,
    /// `hw.em.max_interrupt_rate` [int/s], 100 to 100000.
    #[serde(default = "d_8000")]
    #[schemars(range(min = 100, max = 100_000))]
    pub max_interrupt_rate: u32,
}

fn one() -> u32 {
    1
}
fn d_8000() -> u32 {
    8000
}

impl Default for FreebsdAimCfg {
    fn default() -> Self {
        FreebsdAimCfg {
            enable_aim: 1,
            max_interrupt_rate: 8000,
        }
    }
}

impl ModeratorConfig for FreebsdAimCfg {
    /// Static with `enable_aim = 0`: the driver writes `max_interrupt_rate`
    /// and leaves it.
    fn interval_is_static(&self) -> bool {
        self.enable_aim == 0
    }

    fn validate(&self, _port: &PortCaps) -> Result<(), FieldError> {
        if self.enable_aim > 2 {
            return Err(FieldError::new(
                "enable_aim",
                format!("got {}; allowed: 0, 1, 2", self.enable_aim),
            ));
        }
        check_range(
            "max_interrupt_rate",
            self.max_interrupt_rate,
            100,
            100_000,
            "",
        )
    }

    /// `enable_aim` is a plain read-write integer sysctl
    /// (`dev.em.N.enable_aim`, `SYSCTL_ADD_INT(..., CTLFLAG_RW,
    /// &sc->enable_aim, ...)` in `if_em.c`, 2024): the write changes only
    /// the variable. The next busy interrupt's `em_newitr` reads it; the
    /// latency class and the register stay as they are until then (the
    /// review's idle readback of 20032 after `enable_aim=0`).
    /// `max_interrupt_rate` is the loader tunable `hw.em.max_interrupt_rate`
    /// (`CTLFLAG_RDTUN`): read-only while the system runs.
    fn live_change(&self, field: &str) -> Result<LiveChange, String> {
        match field {
            "enable_aim" => Ok(LiveChange::Retune),
            "max_interrupt_rate" => Err(
                "hw.em.max_interrupt_rate is a loader tunable (CTLFLAG_RDTUN in if_em.c): \
                 read-only once the system runs; set it in the scenario itself"
                    .into(),
            ),
            _ => Err(format!(
                "`{field}` is not a run-time setting of freebsd-aim"
            )),
        }
    }

    fn retune(&self, m: &mut dyn Moderator) -> Option<ModerationParams> {
        if let Some(aim) = m.as_any_mut().and_then(|a| a.downcast_mut::<FreebsdAim>()) {
            aim.set_enable_aim(self.enable_aim);
        }
        None
    }

    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        let target = match ctx.throttle {
            Throttle::Itr256ns => AimTarget::EmItr,
            // A CQ chip is refused before build (`scenario::config`).
            Throttle::Eitr256ns
            | Throttle::Eitr1us
            | Throttle::Eitr2048ns
            | Throttle::Itr2us { .. }
            | Throttle::Cq { .. } => AimTarget::IgbEitr,
        };
        Box::new(FreebsdAim::with_config(
            target,
            AimConfig {
                enable_aim: self.enable_aim,
                max_interrupt_rate: self.max_interrupt_rate,
                link_speed_mbps: ctx.link_mbps,
                pba_kb: ctx.rx_fifo_bytes / 1024,
                ..AimConfig::default()
            },
        ))
    }
}

/// The FreeBSD e1000 AIM state of one RX queue / vector.
#[derive(Clone, Debug)]
pub struct FreebsdAim {
    pub target: AimTarget,
    pub cfg: AimConfig,
    next_latency: Latency,
    itr_setting: u32,
    last: Option<TraceRow>,
}

impl FreebsdAim {
    /// Defaults of [`AimConfig`] with the given `enable_aim`.
    pub fn new(target: AimTarget, enable_aim: u32) -> Self {
        Self::with_config(
            target,
            AimConfig {
                enable_aim,
                ..AimConfig::default()
            },
        )
    }

    pub fn with_config(target: AimTarget, cfg: AimConfig) -> Self {
        FreebsdAim {
            target,
            cfg,
            next_latency: Latency::Disabled,
            itr_setting: Self::initial_word(target, cfg.max_interrupt_rate),
            last: None,
        }
    }

    /// The static default written at interface up (see the module doc).
    fn initial_word(target: AimTarget, max_rate: u32) -> u32 {
        match target {
            AimTarget::EmItr => em_ints_to_itr(max_rate),
            AimTarget::IgbEitr => {
                let v = 4_000_000u32.checked_div(max_rate).unwrap_or(0);
                (v & EITR_QVECTOR_MASK) | EITR_CNT_IGNR
            }
        }
    }

    /// The run-time `enable_aim` sysctl write (takes effect at the next
    /// interrupt with traffic).
    pub fn set_enable_aim(&mut self, enable_aim: u32) {
        self.cfg.enable_aim = enable_aim;
    }

    /// The current latency class (`rx_nextlatency`).
    pub fn latency(&self) -> Latency {
        self.next_latency
    }

    /// The last register word written (`itr_setting`).
    pub fn register(&self) -> u32 {
        self.itr_setting
    }

    /// The `interrupt_rate` sysctl of this queue now.
    pub fn interrupt_rate(&self) -> u32 {
        interrupt_rate_sysctl(self.target, self.itr_setting)
    }
}

impl Moderator for FreebsdAim {
    fn name(&self) -> &'static str {
        "freebsd-aim"
    }
    fn interrupt_rate_readback(&self) -> Option<u32> {
        Some(self.interrupt_rate())
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn initial(&self) -> ModerationParams {
        params_for(
            self.target,
            Self::initial_word(self.target, self.cfg.max_interrupt_rate),
        )
    }

    fn invocation(&self) -> Invocation {
        Invocation::PerInterrupt
    }

    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        // The ring counters are u32 in the arithmetic (see the module doc).
        let (txb, txp) = (s.tx_bytes as u32, s.tx_packets as u32);
        let (rxb, rxp) = (s.rx_bytes as u32, s.rx_packets as u32);
        let before = self.next_latency;
        let (bytes, bpp, packets) = aim_inputs(txb, txp, rxb, rxp);
        let enable_aim = self.cfg.enable_aim;

        let (path, rate) = if s.tx_bytes == 0 && s.rx_bytes == 0 {
            (AimPath::Idle, None)
        } else if enable_aim == 0 {
            self.next_latency = Latency::Disabled;
            (AimPath::Static, Some(self.cfg.max_interrupt_rate))
        } else if self.cfg.link_speed_mbps < 1000 {
            (AimPath::SubGig, Some(INTS_4K))
        } else if self.cfg.max_frame_size.wrapping_mul(2) > self.cfg.pba_kb << 10 {
            self.cfg.enable_aim = 0;
            (AimPath::SmallBuffer, Some(self.cfg.max_interrupt_rate))
        } else {
            self.next_latency = next_latency(before, enable_aim, bytes, bpp, packets);
            (
                AimPath::StateMachine,
                Some(latency_rate(self.next_latency, self.cfg.max_interrupt_rate)),
            )
        };

        let (reg, written) = match rate {
            Some(r) => {
                let reg = register_word(self.target, r);
                let written = reg != self.itr_setting;
                self.itr_setting = reg;
                (reg, written)
            }
            None => (self.itr_setting, false),
        };
        let out = params_for(self.target, reg);
        let (out_name, out_val) = match self.target {
            AimTarget::EmItr => ("itr_256ns", out.itr_256ns.unwrap_or(0)),
            AimTarget::IgbEitr => ("eitr_us", out.eitr_us.unwrap_or(0)),
        };
        self.last = Some(TraceRow::at(
            s,
            vec![
                ("tx_bytes", txb as i64),
                ("tx_packets", txp as i64),
                ("rx_bytes", rxb as i64),
                ("rx_packets", rxp as i64),
                ("bytes", bytes as i64),
                ("bpp", bpp as i64),
                ("packets", packets as i64),
                ("enable_aim", enable_aim as i64),
                ("path", path as i64),
                ("latency_before", before as i64),
                ("latency", self.next_latency as i64),
                ("rate_per_s", rate.map_or(-1, |r| r as i64)),
                ("reg", reg as i64),
                (out_name, out_val as i64),
                (
                    "interrupt_rate",
                    interrupt_rate_sysctl(self.target, reg) as i64,
                ),
                ("written", written as i64),
            ],
        ));
        written.then_some(out)
    }

    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
}

#[cfg(test)]
mod tests;
