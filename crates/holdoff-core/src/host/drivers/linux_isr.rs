//! Linux non-NAPI interrupt-handler loop (`driver = "linux-isr"`, the e1000
//! 5.x default build): read ICR (0 = not ours), then loop up to
//! `E1000_MAX_INTR` = 10 times cleaning RX (no budget) into the CPU's
//! backlog (`netif_rx`) and TX, stopping when a pass cleaned nothing; the
//! per-poll moderation call follows the loop. No masking: causes raised
//! meanwhile stay in ICR and interrupt again after the throttle. The NET_RX
//! softirq (`process_backlog`) does the protocol work. Source: Linux e1000
//! 5.2.52-k3 drivers/net/e1000/e1000_main.c `e1000_intr` (non-NAPI).
//!
//! A NAPI instance of such a port can still be scheduled without an
//! interrupt (epoll busy polling, its timers); softirq then polls it the
//! NAPI way.
//!
//! Units: costs [ns].

use super::{entry, napi, DriverArch, Irq, IrqNext, Kernel, Pass, Poll};
use crate::host::driver::E1000_MAX_INTR;
use crate::host::EndAction;
use crate::moderation::Invocation;
use crate::units::{Nanos, SimTime};

/// Linux non-NAPI ISR loop.
pub struct LinuxIsr;

impl DriverArch for LinuxIsr {
    fn name(&self) -> &'static str {
        "linux-isr"
    }
    /// e1000 5.x drives the 8254x chips, which have no MSI-X; its handler
    /// never writes EIMS. Linux's drivers for MSI-X chips (e1000e, igb,
    /// ixgbe) are NAPI.
    fn msix(&self) -> bool {
        false
    }
    fn msix_refusal(&self) -> &'static str {
        "the e1000 5.x non-NAPI handler never re-enables an auto-masked MSI-X vector, \
         so the port would interrupt once; set interrupt_mode = \"msi\" or \"intx\" \
         here, or driver = \"napi\" (Linux's MSI-X drivers are NAPI)"
    }
    fn interrupt(&self, k: &mut dyn Kernel, now: SimTime, i: Irq) -> (Nanos, IrqNext) {
        if i.iter == 0 {
            return entry(self, k, now, i);
        }
        // One loop pass: clean RX (no budget) into the backlog, and TX.
        let (cost, rx) = k.rx_to_backlog(i.port, i.vector);
        let (cost, tx) = k.clean_tx(i.at(now), cost);
        // The TSQ tasklet would run at irq_exit; it runs here, at the end
        // of the pass (TSQ is off on the 2.6 kernels this driver models).
        let cost = k.tsq_run(i.at(now), cost);
        if rx + tx > 0 && i.iter < E1000_MAX_INTR {
            return (cost, IrqNext::Again(i.iter + 1));
        }
        let cost = cost + k.moderate(now + cost, i.port, i.vector, Invocation::PerPoll);
        (cost, IrqNext::NextHandler)
    }

    /// The cause is ours: start the loop.
    fn on_cause(
        &self,
        _k: &mut dyn Kernel,
        _now: SimTime,
        _i: Irq,
        cost: Nanos,
    ) -> (Nanos, IrqNext) {
        (cost, IrqNext::Again(1))
    }

    fn deferred(&self, k: &mut dyn Kernel, at: Poll, cost: Nanos) -> Pass {
        napi::deferred(k, at, cost)
    }

    fn complete(&self, k: &mut dyn Kernel, at: Poll, pass: &Pass) -> (Nanos, EndAction) {
        napi::complete(k, at, pass)
    }

    fn linux(&self) -> bool {
        true
    }
    fn budgeted(&self) -> bool {
        true
    }
}
