//! Moderation algorithms: small state machines fed `Sample`s that return
//! register settings (`ModerationParams`).
//!
//! Models: the policy half of interrupt moderation. An algorithm never touches
//! the NIC, the host or the event queue; it sees counters and `now`, and
//! answers with the register values to write. This keeps every algorithm
//! unit-testable on its own (like Linux's lib/dim) and liftable into a driver.
//!
//! Depends on `units` only.
//!
//! Units: register values keep their hardware units in their names
//! (`itr_256ns`, `eitr_us`, `*_1024ns`).

pub mod dim;
pub mod e1000_5x;
pub mod e1000_itr;
pub mod freebsd_aim;
pub mod igb;
pub mod ixl;
pub mod static_policy;

use crate::units::SimTime;
pub use e1000_5x::E1000Legacy;
pub use static_policy::StaticModerator;

/// Counters since the previous call, for one interrupt vector.
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
}
