//! FreeBSD 2006 em fast interrupt + taskqueue (`driver =
//! "freebsd-taskqueue"`): the filter reads ICR, masks the NIC (IMC) and
//! enqueues a task; the task cleans up to `rx_process_limit` packets (one
//! RDT write), TX, re-enqueues itself while work remains and re-enables
//! interrupts (IMS) after every pass (the 2006 code did so
//! unconditionally). Source: FreeBSD 6.x sys/dev/em/if_em.c
//! (`em_intr_fast`, `em_handle_rxtx`).
//!
//! Units: costs [ns]; limit [packets].

use super::{DriverArch, Irq, IrqNext, Kernel, Pass, Poll};
use crate::host::driver::RxOpts;
use crate::host::EndAction;
use crate::units::{Nanos, SimTime};

/// FreeBSD fast interrupt + taskqueue.
pub struct FreebsdTaskqueue;

impl DriverArch for FreebsdTaskqueue {
    /// Fast filter: mask in the NIC, enqueue the task.
    fn on_cause(&self, k: &mut dyn Kernel, _now: SimTime, i: Irq, cost: Nanos) -> (Nanos, IrqNext) {
        k.nic(i.port).write_imc(i.vector, u32::MAX);
        let prof = k.profile();
        k.schedule(i.port, i.vector);
        (
            cost + prof.mmio_write_ns + prof.wakeup_ns,
            IrqNext::NextHandler,
        )
    }

    fn deferred(&self, k: &mut dyn Kernel, at: Poll, cost: Nanos) -> Pass {
        let Poll { port, vector, .. } = at;
        let prof = k.profile();
        let limit = u32::try_from(k.bsd_config().rx_process_limit).unwrap_or(u32::MAX);
        let cost = cost + prof.poll_overhead_ns;
        let (cost, work) = k.clean_rx(at, limit, cost, RxOpts::default());
        let (cost, _) = k.clean_tx(at, cost + prof.lock_ns);
        let p = k.nic(port);
        let more = p.queues_of_vector(vector).any(|q| p.rx_ready(q) > 0);
        Pass { cost, work, more }
    }

    /// Interrupts back on after every pass, even when the task re-queued itself.
    fn complete(&self, k: &mut dyn Kernel, at: Poll, _pass: &Pass) -> (Nanos, EndAction) {
        let Poll { port, vector, .. } = at;
        (
            k.profile().mmio_write_ns,
            EndAction::Unmask { port, vector },
        )
    }
}
