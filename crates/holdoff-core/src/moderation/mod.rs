//! Moderation algorithms: small state machines fed `Sample`s that return
//! register settings (`ModerationParams`).
//!
//! Models: the policy half of interrupt moderation. An algorithm never touches
//! the NIC, the host or the event queue; it sees counters and `now`, and
//! answers with the register values to write. This keeps every algorithm
//! unit-testable on its own (like Linux's lib/dim) and liftable into a driver.
//!
//! Depends on `units` only (plus serde/schemars derives on the plain-data
//! config types). Each algorithm's file also holds its scenario config type,
//! that type's `validate()` and `build()` (the [`ModeratorConfig`] trait);
//! what construction needs to know about the port comes in a [`BuildCtx`],
//! so this module never sees the NIC model or the scenario format.
//!
//! Units: register values keep their hardware units in their names
//! (`itr_256ns`, `eitr_us`, `*_1024ns`).

pub mod c_abi;
pub mod dim;
pub mod e1000_5x;
pub mod e1000_itr;
pub mod ena;
pub mod freebsd_aim;
pub mod i40e;
pub mod ice;
pub mod igb;
pub mod ixgbe;
pub mod ixl;
pub mod mlx5;
pub mod static_policy;
#[cfg(test)]
mod testutil;

use crate::units::SimTime;
pub use c_abi::CCfg;
pub use dim::DimCfg;
pub use e1000_5x::{E1000Legacy, E1000LegacyCfg};
pub use e1000_itr::E1000ItrCfg;
pub use ena::EnaCfg;
pub use freebsd_aim::FreebsdAimCfg;
pub use i40e::I40eCfg;
pub use ice::IceCfg;
pub use igb::IgbCfg;
pub use ixgbe::IxgbeCfg;
pub use ixl::IxlCfg;
pub use mlx5::Mlx5Cfg;
pub use static_policy::{StaticCfg, StaticModerator};

/// The interrupt-throttle register a port's chip has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Throttle {
    /// One ITR register in 256 ns units (8254x; 8257x in legacy/MSI mode).
    Itr256ns,
    /// Per-vector EITR in 256 ns units (82574, 82575).
    Eitr256ns,
    /// Per-vector EITR with the interval in 1 us (82576 and later).
    Eitr1us,
    /// Per-vector EITR of the 10 GbE parts (82599, X540, X550): a 256 ns
    /// count of which bits 11:3 are held (2.048 us steps), written without
    /// restarting the running countdown (`CNT_WDIS`).
    Eitr2048ns,
    /// Per-vector ITR in 2 us plus an interrupt rate limit (INTRL) of the
    /// Intel 700/800 Series (X710, XL710, E810); `intrl_gran_us` is the
    /// part's rate-limit granularity as the driver reads it (4 or 8 us).
    Itr2us { intrl_gran_us: u32 },
    /// No interrupt throttle: each RX and TX completion queue has its own
    /// period and completion count (NVIDIA ConnectX under mlx5, AWS ENA;
    /// `nic::cq`). `frames`: the chip holds a completion count;
    /// `cqe_mode`: it has the CQE-based period mode; `resolution_us`: the
    /// unit the device counts the period in (ENA `intr_delay_resolution`).
    /// `default_adaptive_rx`: adaptive RX moderation is on when the driver
    /// loads (the device's choice on ENA).
    Cq {
        frames: bool,
        cqe_mode: bool,
        resolution_us: u32,
        default_adaptive_rx: bool,
    },
}

/// The moderation of one completion queue as the driver programs it
/// (`nic::cq`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CqSetting {
    /// The period (`cq_period`) [us]; 0: an event per completion.
    pub usec: u32,
    /// The completion count (`cq_max_count`) [completions]; 0: none.
    pub pkts: u32,
    /// CQE-based period mode (restart at each completion) rather than
    /// EQE-based (restart at each event).
    pub cqe_mode: bool,
}

/// What a config's `validate()` may check about the port it moderates.
#[derive(Clone, Copy, Debug)]
pub struct PortCaps<'a> {
    /// Chip preset name, for messages.
    pub chip: &'a str,
    pub throttle: Throttle,
}

/// What `build()` needs to construct the algorithm for one vector.
#[derive(Clone, Copy, Debug)]
pub struct BuildCtx {
    /// Link speed [Mb/s].
    pub link_mbps: u32,
    pub throttle: Throttle,
    /// The chip's receive packet buffer (PBA) [bytes].
    pub rx_fifo_bytes: u32,
    /// Interrupt vectors of the port [count].
    pub vectors: u16,
    /// The vector this instance moderates.
    pub vector: u16,
    /// The host kernel's timer tick rate (Linux `HZ`, the jiffies clock)
    /// [1/s].
    pub hz: u32,
    /// How long after a driver queues a work item from its NAPI poll
    /// (`schedule_work`) the work runs: the kernel worker thread is woken
    /// and switched to (the host profile's `wakeup_ns +
    /// context_switch_ns`) [ns].
    pub work_delay: crate::units::Nanos,
}

/// A config field that is not valid: `field` is relative to the moderation
/// table (`rx_usecs`); the caller prefixes the full path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// `lo..=hi` or an error naming the field, the value and the range.
pub fn check_range(field: &str, v: u32, lo: u32, hi: u32, why: &str) -> Result<(), FieldError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(FieldError::new(
            field,
            format!("got {v}; allowed: {lo} to {hi}{why}"),
        ))
    }
}

/// The scenario config of one algorithm: checked once, then built once per
/// interrupt vector.
pub trait ModeratorConfig {
    /// Refuse values the model or the real knob does not allow.
    fn validate(&self, port: &PortCaps) -> Result<(), FieldError>;
    /// The algorithm for one vector of a validated config.
    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator>;
    /// The config field (in this kind's table) that sets the register
    /// parameter `param` (a `ModerationParams` field name such as
    /// `radv_1024ns`), if the user sets it directly; `None` when only the
    /// algorithm writes it. Lets a warning about a register name the field.
    fn config_field(&self, param: &str) -> Option<&'static str> {
        let _ = param;
        None
    }
    /// Whether this setting programs one fixed throttle interval (a static
    /// rate, or throttling off) rather than an adaptive mode. The run's
    /// line-rate warnings (`scenario::report`) check a static interval, as
    /// the port's throttle register holds it, against the ring sizes; an
    /// adaptive mode moves its interval with the traffic and is not checked.
    /// Default: adaptive.
    fn interval_is_static(&self) -> bool {
        false
    }
    /// How the driver takes a change of `field` (a field of this kind's
    /// table) made while the interface is up: a sysctl write or `ethtool
    /// -C` (`[[at]]` in a scenario). `Err` explains why the field cannot
    /// change during a run (a load-time tunable, a module parameter). The
    /// default refuses every field; each kind documents its own, with the
    /// driver source.
    fn live_change(&self, field: &str) -> Result<LiveChange, String> {
        Err(format!(
            "`{field}` of this moderation kind has no run-time setting in the model"
        ))
    }
    /// For [`LiveChange::Retune`]: hand the running algorithm of one vector
    /// (of this kind) this new config. Returns the registers the driver
    /// writes at once, if it writes any. An algorithm of another type is
    /// left alone.
    fn retune(&self, m: &mut dyn Moderator) -> Option<ModerationParams> {
        let _ = m;
        None
    }
}

/// What a driver does when a moderation setting changes while the
/// interface is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LiveChange {
    /// The running algorithm keeps its state and takes the new setting
    /// ([`ModeratorConfig::retune`]), with whatever register write the
    /// driver's handler does: none for FreeBSD `enable_aim` (a plain integer
    /// sysctl read at the next interrupt), the next interrupt for Linux igb
    /// (`igb_set_coalesce` sets `set_itr`), at once for Linux e1000
    /// (`e1000_set_coalesce` writes ITR).
    Retune,
    /// A fresh algorithm state from the new config, its initial registers
    /// written at the instant of the change (the `static` kind: a register
    /// write).
    Reprogram,
}

/// The four delay timers of the e1000 kinds in register order (RDTR, RADV,
/// TIDV, TADV): the `ModerationParams` field and the config field, which
/// takes the Linux e1000 module-parameter name (`RxIntDelay` ... as
/// `rx_int_delay` ...).
pub(crate) const E1000_TIMERS: [(&str, &str); 4] = [
    ("rdtr_1024ns", "rx_int_delay"),
    ("radv_1024ns", "rx_abs_int_delay"),
    ("tidv_1024ns", "tx_int_delay"),
    ("tadv_1024ns", "tx_abs_int_delay"),
];

/// `config_field` of the kinds whose delay timers take the Linux e1000
/// module-parameter names ([`E1000_TIMERS`]).
pub(crate) fn e1000_timer_field(param: &str) -> Option<&'static str> {
    E1000_TIMERS
        .iter()
        .find(|(p, _)| *p == param)
        .map(|(_, field)| *field)
}

/// Counters since the previous call, for one interrupt vector.
///
/// RX counts the frames DMA'd into host memory. TX counts the frames the
/// driver's CPU has posted to the vector's TX queues by `now`: a send is
/// counted at the instant its own send-path work ends, not when the CPU
/// segment that sends it starts, and a preempted segment's later sends
/// only after it resumes (FreeBSD em/igc AIM counts in `*_isc_txd_encap`).
/// Simplifies: the Linux drivers count TX bytes at TX clean
/// (`e1000_clean_tx_irq`, `igb_clean_tx_irq`), which is later; every kind
/// reads the post-time counts here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    pub now: SimTime,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub interrupts: u64,
}

/// Register settings an algorithm asks for. `None` leaves a register as it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModerationParams {
    /// ITR / 82574-82575 EITR interval [256 ns units]; 0 = no throttling.
    pub itr_256ns: Option<u32>,
    /// 82576+ EITR interval field [1 us]; 0 = no throttling.
    pub eitr_us: Option<u32>,
    /// RX packet timer RDTR [1.024 us]; 0 = interrupt per packet, RADV off.
    pub rdtr_1024ns: Option<u32>,
    /// RX absolute timer RADV [1.024 us]; 0 = off.
    pub radv_1024ns: Option<u32>,
    /// TX packet timer TIDV [1.024 us].
    pub tidv_1024ns: Option<u32>,
    /// TX absolute timer TADV [1.024 us]; 0 = off.
    pub tadv_1024ns: Option<u32>,
    /// Interrupt rate limit of the vector (Intel 700/800 Series INTRL,
    /// `ethtool -C rx-usecs-high`) [us]; 0 = off. Only chips with an INTRL
    /// register hold it.
    pub intrl_us: Option<u32>,
    /// The RX completion queues' moderation (CQ chips only).
    pub cq_rx: Option<CqSetting>,
    /// The TX completion queues' moderation (CQ chips only).
    pub cq_tx: Option<CqSetting>,
}

impl ModerationParams {
    /// A write of the ITR interval alone [256 ns]; other registers as they are.
    pub const fn itr(itr_256ns: u32) -> Self {
        ModerationParams {
            itr_256ns: Some(itr_256ns),
            eitr_us: None,
            rdtr_1024ns: None,
            radv_1024ns: None,
            tidv_1024ns: None,
            tadv_1024ns: None,
            intrl_us: None,
            cq_rx: None,
            cq_tx: None,
        }
    }

    /// A write of the EITR interval alone [1 us]; other registers as they are.
    pub const fn eitr(eitr_us: u32) -> Self {
        ModerationParams {
            itr_256ns: None,
            eitr_us: Some(eitr_us),
            rdtr_1024ns: None,
            radv_1024ns: None,
            tidv_1024ns: None,
            tadv_1024ns: None,
            intrl_us: None,
            cq_rx: None,
            cq_tx: None,
        }
    }
}

impl ModerationParams {
    /// A write of the CQ moderation alone (either direction may be None).
    pub const fn cq(cq_rx: Option<CqSetting>, cq_tx: Option<CqSetting>) -> Self {
        ModerationParams {
            itr_256ns: None,
            eitr_us: None,
            rdtr_1024ns: None,
            radv_1024ns: None,
            tidv_1024ns: None,
            tadv_1024ns: None,
            intrl_us: None,
            cq_rx,
            cq_tx,
        }
    }
}

/// When the driver calls the algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Invocation {
    /// Only once, at interface up.
    Never,
    /// At every interrupt of the vector, before processing (Linux e1000
    /// `e1000_set_itr`, igb, FreeBSD AIM, ixl). The sample covers the
    /// traffic since the previous interrupt.
    PerInterrupt,
    /// At the end of every NAPI poll (or driver clean pass) of the vector,
    /// after processing (Linux DIM: `net_dim` from the poll routine). The
    /// sample covers the traffic since the previous call; `interrupts`
    /// counts the polls/events.
    PerPoll,
    /// Only when a NAPI poll completes (`napi_complete_done` returned true,
    /// the poll did less than its budget), before the driver re-enables
    /// the vector (Linux ixgbe `ixgbe_poll`: `ixgbe_set_itr` inside
    /// `if (likely(napi_complete_done(..)))`). The sample covers the
    /// traffic since the previous call, polls that stayed listed included.
    NapiComplete,
    /// From a periodic timer (watchdog): every `period`, the first call at
    /// interface up if `at_start`, else one period later.
    Periodic {
        period: crate::units::Nanos,
        at_start: bool,
    },
}

/// One decision of an algorithm, for the run's moderation trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRow {
    /// When the decision was taken [ns].
    pub t_ns: u64,
    /// Named integer values (inputs and outputs), in a fixed order.
    pub values: Vec<(&'static str, i64)>,
}

impl TraceRow {
    /// A decision taken on sample `s`, with its `values`.
    pub fn at(s: &Sample, values: Vec<(&'static str, i64)>) -> Self {
        TraceRow {
            t_ns: s.now.as_ns(),
            values,
        }
    }
}

/// A moderation algorithm.
pub trait Moderator {
    /// Stable name used in scenario files and outputs.
    fn name(&self) -> &str;
    /// The settings written at interface up.
    fn initial(&self) -> ModerationParams;
    /// When the driver calls `on_sample`.
    fn invocation(&self) -> Invocation;
    /// Feed one sample; return new settings or `None` to keep the current ones.
    fn on_sample(&mut self, sample: &Sample) -> Option<ModerationParams>;
    /// The last decision, for the trace (algorithms that have none return None).
    fn last_decision(&self) -> Option<&TraceRow> {
        None
    }
    /// Set when the algorithm misbehaved (an externally written algorithm
    /// raised or returned something invalid); the run stops and reports it.
    fn failure(&self) -> Option<&str> {
        None
    }
    /// Whether the driver's periodic watchdog also writes ICS = RXDMT0
    /// ("cause software interrupt to ensure rx ring is cleaned"; Linux e1000
    /// and e1000e `e1000_watchdog`, every 2 s in every ITR mode).
    fn watchdog_ics_rxdmt0(&self) -> bool {
        false
    }
    /// The driver's interrupt-rate readback for this vector, if it has one
    /// (FreeBSD em/igb `dev.em.N.queue_rx_M.interrupt_rate`) [int/s].
    fn interrupt_rate_readback(&self) -> Option<u32> {
        None
    }
    /// The algorithm as `Any`, so that its own config's
    /// [`ModeratorConfig::retune`] can reach its state; None for algorithms
    /// that cannot be retuned.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
    /// A work item the last `on_sample` queued (Linux `schedule_work` from
    /// the poll routine): when it runs. Taken once; the caller schedules
    /// [`Moderator::run_work`] at that time.
    fn take_work(&mut self) -> Option<SimTime> {
        None
    }
    /// The queued work item runs at `now`: the registers it writes, if any
    /// (its trace row is `last_decision`).
    fn run_work(&mut self, now: SimTime) -> Option<ModerationParams> {
        let _ = now;
        None
    }
}
