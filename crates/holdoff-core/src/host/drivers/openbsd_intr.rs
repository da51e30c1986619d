//! OpenBSD em (`driver = "openbsd-intr"`): one handler in interrupt context
//! reads ICR, cleans TX (`em_txeof`), then takes every ready RX descriptor
//! (`em_rxeof`, no budget) and refills with one RDT write; no masking, no
//! loop. The received packets go to the interface input queue
//! (`if_input` -> `ifiq_input`), and the protocol work (IP, TCP, the
//! segments TCP sends in reply) runs later in the softnet task, not in the
//! handler. Sources: OpenBSD sys/dev/pci/if_em.c (`em_intr`, `em_txeof`,
//! `em_rxeof`), sys/net/ifq.c (`ifiq_input` queues the mbuf list and adds
//! the input task to the softnet task queue).
//!
//! Simplifies: the softnet task is modelled by the host's backlog service
//! (the one the Linux non-NAPI path uses: `rx_driver_ns` per packet in the
//! handler, the rest of the receive cost when the backlog is served,
//! entered at `softirq_entry_ns`); the input queue's length limit is the
//! backlog's (`netdev_max_backlog`).
//!
//! Units: costs [ns].

use super::{DriverArch, Irq, IrqNext, Kernel};
use crate::units::{Nanos, SimTime};

/// OpenBSD interrupt-context handler.
pub struct OpenbsdIntr;

impl DriverArch for OpenbsdIntr {
    fn name(&self) -> &'static str {
        "openbsd-intr"
    }
    /// `em_intr` is the handler of the MSI or INTx build (`em_enable_msix`
    /// = 0, the default, `em_allocate_legacy`); the MSI-X queue handlers
    /// are not modelled, and this one never writes EIMS.
    fn msix(&self) -> bool {
        false
    }
    fn msix_refusal(&self) -> &'static str {
        "the model runs OpenBSD em's MSI handler (em_enable_msix = 0), which never \
         re-enables an auto-masked MSI-X vector, so the port would interrupt once; set \
         interrupt_mode = \"msi\" or \"intx\" here"
    }
    /// One pass in interrupt context: TX clean, then RX to the input queue
    /// (the driver share of each packet; protocol work deferred).
    fn on_cause(&self, k: &mut dyn Kernel, now: SimTime, i: Irq, cost: Nanos) -> (Nanos, IrqNext) {
        let (cost, _) = k.clean_tx(i.at(now), cost);
        let (rx_cost, _) = k.rx_to_backlog(i.port, i.vector);
        (cost + rx_cost, IrqNext::NextHandler)
    }
}
