//! Test helpers shared by the moderation algorithms' unit tests: building a
//! [`Sample`] from per-direction totals (per-interrupt algorithms) or from
//! 2-s octet deltas (the e1000 watchdog).
//!
//! Models nothing; only the tests use it. Units: time [ns], bytes [bytes].

use super::Sample;
use crate::units::SimTime;

/// One interrupt's sample at `now_ns` with the TX and RX totals given as
/// (packets, bytes).
pub(crate) fn sample(now_ns: u64, tx: (u64, u64), rx: (u64, u64)) -> Sample {
    Sample {
        now: SimTime(now_ns),
        tx_packets: tx.0,
        tx_bytes: tx.1,
        rx_packets: rx.0,
        rx_bytes: rx.1,
        interrupts: 1,
    }
}

/// One interrupt's sample at time 0 with RX traffic only.
pub(crate) fn rx(packets: u64, bytes: u64) -> Sample {
    sample(0, (0, 0), (packets, bytes))
}

/// The first watchdog sample of the e1000 DITR formula: the good-octets
/// deltas of the 2 s since interface up, at t = 2 s.
pub(crate) fn watchdog_octets(tx_bytes: u64, rx_bytes: u64) -> Sample {
    Sample {
        now: SimTime(2_000_000_000),
        tx_bytes,
        rx_bytes,
        ..Sample::default()
    }
}
