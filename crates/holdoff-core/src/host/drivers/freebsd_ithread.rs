//! FreeBSD interrupt thread (`driver = "freebsd-ithread"`, pre-2006 em,
//! `EM_LEGACY_IRQ`): the kernel masks the line in the I/O APIC and wakes the
//! interrupt thread, which runs every handler of the line. Each handler takes
//! the driver lock and loops reading ICR, cleaning RX (no limit, RDT written
//! per packet, the lock dropped around each packet's input) and TX until ICR
//! reads 0; when no handler of the line is left, the line is unmasked.
//! Sources: FreeBSD 5/6 sys/kern/kern_intr.c (`ithread_loop`),
//! sys/dev/em/if_em.c (`em_intr`, `em_process_receive_interrupts`).
//!
//! Units: costs [ns].

use super::{DriverArch, Irq, IrqNext, Kernel, Pass, Poll};
use crate::host::driver::RxOpts;
use crate::host::EndAction;
use crate::units::{Nanos, SimTime};

/// FreeBSD interrupt thread.
pub struct FreebsdIthread;

impl DriverArch for FreebsdIthread {
    fn interrupt(&self, k: &mut dyn Kernel, _now: SimTime, i: Irq) -> (Nanos, IrqNext) {
        let prof = k.profile();
        let cost = prof.irq_entry_exit_ns + prof.apic_mask_ns + prof.wakeup_ns;
        let handlers = k.line_handlers(i.irq);
        k.apic_mask(i.irq);
        for (p, v) in handlers {
            k.schedule(p, v);
        }
        (cost, IrqNext::Eoi)
    }

    fn deferred(&self, k: &mut dyn Kernel, at: Poll, cost: Nanos) -> Pass {
        let Poll { port, vector, .. } = at;
        let prof = k.profile();
        // Driver lock, then read ICR; 0 ends the handler loop.
        let cost = cost + prof.lock_ns + prof.mmio_read_ns;
        if k.nic(port).read_icr(vector) == 0 {
            let (work, more) = (0, false);
            return Pass { cost, work, more };
        }
        // No limit; RDT written and the lock dropped/re-taken per packet.
        let opts = RxOpts {
            extra_ns: prof.lock_ns,
            rdt_per_packet: true,
        };
        let (cost, work) = k.clean_rx(at, u32::MAX, cost, opts);
        let (cost, _) = k.clean_tx(at, cost);
        let more = true;
        Pass { cost, work, more }
    }

    /// The loop ended (ICR read 0): unmask the line in the I/O APIC once no
    /// other handler of the line is left on the list.
    fn complete(&self, k: &mut dyn Kernel, at: Poll, pass: &Pass) -> (Nanos, EndAction) {
        let li = k.line_of(at.port, at.vector);
        if pass.more || k.line_listed(li) {
            return (Nanos::ZERO, EndAction::None);
        }
        (k.profile().apic_mask_ns, EndAction::ApicUnmask { irq: li })
    }
}
