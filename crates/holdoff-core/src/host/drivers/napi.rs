//! Linux NAPI (`driver = "napi"`): the handler reads ICR, masks the device
//! (IMC = all; MSI-X auto-masks) and schedules a poll in softirq context. A
//! poll cleans TX fully and up to `weight` RX packets; a poll that did less
//! than `weight` completes (`napi_complete_done`: unmask, or keep the IRQ
//! masked with hard-IRQ deferral / IRQ suspension), otherwise it stays
//! listed. Sources: Linux `e1000_intr` / `e1000_clean` (NAPI build),
//! net/core/dev.c `net_rx_action`, `napi_complete_done` (Linux 6.13);
//! Documentation/networking/napi.rst.
//!
//! Units: costs [ns]; weight [packets].

use super::{DriverArch, Irq, IrqNext, Kernel, Pass, Poll};
use crate::host::driver::RxOpts;
use crate::host::EndAction;
use crate::moderation::Invocation;
use crate::units::{Nanos, SimTime};

/// Linux NAPI.
pub struct Napi;

/// The driver's NAPI poll, `cost` already spent: poll overhead, TX clean
/// (and qdisc), up to `budget` RX packets through the stack, the TSQ
/// handler for sockets the TX clean unthrottled (the TSQ tasklet runs after
/// NET_RX in the same softirq pass), then the per-poll moderation call. Used by softirq and by busy polling. Returns
/// (cost, RX packets).
pub fn poll(k: &mut dyn Kernel, at: Poll, budget: u32, cost: Nanos) -> (Nanos, u32) {
    let Poll { now, port, vector } = at;
    let cost = cost + k.profile().poll_overhead_ns;
    let (cost, _) = k.clean_tx(at, cost);
    let (cost, work) = k.clean_rx(at, budget, cost, RxOpts::default());
    let cost = k.tsq_run(at, cost);
    let cost = cost + k.moderate(now + cost, port, vector, Invocation::PerPoll);
    (cost, work)
}

/// One softirq poll with the NAPI weight; listed again if it used it all.
pub fn deferred(k: &mut dyn Kernel, at: Poll, cost: Nanos) -> Pass {
    let weight = k.napi_config().weight;
    let (cost, work) = poll(k, at, weight, cost);
    let more = work >= weight;
    Pass { cost, work, more }
}

/// NAPI completion after a softirq poll: a poll under its weight calls
/// `napi_complete_done`, which may unmask (one IMS write at the segment's end).
pub fn complete(k: &mut dyn Kernel, at: Poll, pass: &Pass) -> (Nanos, EndAction) {
    let Poll { now, port, vector } = at;
    if !pass.more && k.napi_complete(now + pass.cost, port, vector, pass.work) {
        return (
            k.profile().mmio_write_ns,
            EndAction::Unmask { port, vector },
        );
    }
    (Nanos::ZERO, EndAction::None)
}

impl DriverArch for Napi {
    fn name(&self) -> &'static str {
        "napi"
    }
    fn napi(&self) -> bool {
        true
    }
    fn on_cause(&self, k: &mut dyn Kernel, _now: SimTime, i: Irq, cost: Nanos) -> (Nanos, IrqNext) {
        let mut cost = cost;
        if !i.msix {
            k.nic(i.port).write_imc(i.vector, u32::MAX);
            cost += k.profile().mmio_write_ns;
        }
        // napi_schedule fails while a busy-poll loop owns the instance (it
        // only sets MISSED): the poller sees the packets.
        if !k.busy_owned(i.port, i.vector) {
            k.schedule(i.port, i.vector);
        }
        (cost, IrqNext::NextHandler)
    }

    fn deferred(&self, k: &mut dyn Kernel, at: Poll, cost: Nanos) -> Pass {
        deferred(k, at, cost)
    }

    fn complete(&self, k: &mut dyn Kernel, at: Poll, pass: &Pass) -> (Nanos, EndAction) {
        complete(k, at, pass)
    }

    fn linux(&self) -> bool {
        true
    }
    fn budgeted(&self) -> bool {
        true
    }
}
