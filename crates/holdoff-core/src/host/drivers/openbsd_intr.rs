//! OpenBSD em (`driver = "openbsd-intr"`): one handler in interrupt context
//! reads ICR, cleans TX, then RX (all ready descriptors), refills; no
//! masking, no loop, no deferred work (a NAPI listing by busy polling or a
//! timer finds nothing to do). Source: OpenBSD sys/dev/pci/if_em.c
//! (`em_intr`).
//!
//! Units: costs [ns].

use super::{DriverArch, Irq, IrqNext, Kernel};
use crate::host::driver::RxOpts;
use crate::units::{Nanos, SimTime};

/// OpenBSD interrupt-context handler.
pub struct OpenbsdIntr;

impl DriverArch for OpenbsdIntr {
    /// One pass in interrupt context: TX clean, then RX, refill.
    fn on_cause(&self, k: &mut dyn Kernel, now: SimTime, i: Irq, cost: Nanos) -> (Nanos, IrqNext) {
        let (cost, _) = k.clean_tx(i.at(now), cost);
        let (cost, _) = k.clean_rx(i.at(now), u32::MAX, cost, RxOpts::default());
        (cost, IrqNext::NextHandler)
    }
}
