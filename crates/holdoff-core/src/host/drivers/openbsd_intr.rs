//! OpenBSD em (`driver = "openbsd-intr"`): one handler in interrupt context
//! reads ICR, cleans TX, then RX (all ready descriptors), refills; no
//! masking, no loop, no deferred work. Source: OpenBSD sys/dev/pci/if_em.c
//! (`em_intr`).
//!
//! Units: costs [ns].

use super::{read_cause, DriverArch, Irq, IrqNext, Kernel, Pass};
use crate::host::driver::RxOpts;
use crate::host::EndAction;
use crate::units::{Nanos, SimTime};

/// OpenBSD interrupt-context handler.
pub struct OpenbsdIntr;

impl DriverArch for OpenbsdIntr {
    fn interrupt(&self, k: &mut dyn Kernel, now: SimTime, i: Irq) -> (Nanos, IrqNext) {
        let (cost, ours) = read_cause(k, now, i);
        if !ours {
            return (cost, IrqNext::NextHandler);
        }
        // One pass in interrupt context: TX clean, then RX, refill.
        let (cost, _) = k.clean_tx(now, i.port, i.vector, cost);
        let (cost, _) = k.clean_rx(now, i.port, i.vector, u32::MAX, cost, RxOpts::default());
        (cost, IrqNext::NextHandler)
    }

    /// Nothing is deferred (a busy-poll or timer listing does nothing).
    fn deferred(
        &self,
        _k: &mut dyn Kernel,
        _now: SimTime,
        _port: u16,
        _vector: u16,
        cost: Nanos,
    ) -> Pass {
        Pass {
            cost,
            work: 0,
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
}
