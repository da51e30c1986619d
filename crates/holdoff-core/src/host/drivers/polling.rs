//! Polling (`driver = "polling"`, FreeBSD DEVICE_POLLING style): interrupts
//! stay masked (IMS is never written; a handler that runs anyway only reads
//! the cause); every clock tick (`poll_hz`) each device is polled for up to
//! `poll_burst` packets, then TX is cleaned. Source: FreeBSD
//! sys/kern/kern_poll.c (`netisr_poll`), the em driver's `em_poll`.
//!
//! Units: costs [ns]; period [ns]; burst [packets].

use super::{DriverArch, Kernel, Pass, Poll};
use crate::host::driver::{BsdConfig, RxOpts};
use crate::units::Nanos;

/// Clock-driven polling.
pub struct Polling;

impl DriverArch for Polling {
    fn name(&self) -> &'static str {
        "polling"
    }
    fn deferred(&self, k: &mut dyn Kernel, at: Poll, cost: Nanos) -> Pass {
        let burst = k.bsd_config().poll_burst;
        let cost = cost + k.profile().poll_overhead_ns;
        let (cost, work) = k.clean_rx(at, burst, cost, RxOpts::default());
        let (cost, _) = k.clean_tx(at, cost);
        let more = false;
        Pass { cost, work, more }
    }

    fn unmask_at_start(&self) -> bool {
        false
    }

    fn poll_period(&self, bsd: &BsdConfig) -> Option<Nanos> {
        Some(Nanos(1_000_000_000 / bsd.poll_hz as u64))
    }
}
