//! Polling (`driver = "polling"`, FreeBSD DEVICE_POLLING style): interrupts
//! stay masked (IMS is never written); every clock tick (`poll_hz`) each
//! device is polled for up to `poll_burst` packets, then TX is cleaned.
//! Source: FreeBSD sys/kern/kern_poll.c (`netisr_poll`), the em driver's
//! `em_poll`.
//!
//! Units: costs [ns]; period [ns]; burst [packets].

use super::{read_cause, DriverArch, Irq, IrqNext, Kernel, Pass};
use crate::host::driver::{BsdConfig, RxOpts};
use crate::host::EndAction;
use crate::units::{Nanos, SimTime};

/// Clock-driven polling.
pub struct Polling;

impl DriverArch for Polling {
    /// Interrupts stay masked; a handler that runs anyway only reads the cause.
    fn interrupt(&self, k: &mut dyn Kernel, now: SimTime, i: Irq) -> (Nanos, IrqNext) {
        let (cost, _) = read_cause(k, now, i);
        (cost, IrqNext::NextHandler)
    }

    fn deferred(
        &self,
        k: &mut dyn Kernel,
        now: SimTime,
        port: u16,
        vector: u16,
        cost: Nanos,
    ) -> Pass {
        let prof = k.profile();
        let burst = k.bsd_config().poll_burst;
        let cost = cost + prof.poll_overhead_ns;
        let (cost, work) = k.clean_rx(now, port, vector, burst, cost, RxOpts::default());
        let (cost, _) = k.clean_tx(now, port, vector, cost);
        Pass {
            cost,
            work,
            more: false,
        }
    }

    fn complete(
        &self,
        _k: &mut dyn Kernel,
        _now: SimTime,
        _port: u16,
        _vector: u16,
        _pass: &Pass,
    ) -> (Nanos, EndAction) {
        (Nanos::ZERO, EndAction::None)
    }

    fn budgeted(&self) -> bool {
        false
    }

    fn unmask_at_start(&self) -> bool {
        false
    }

    fn poll_period(&self, bsd: &BsdConfig) -> Option<Nanos> {
        Some(Nanos(1_000_000_000 / bsd.poll_hz as u64))
    }
}
