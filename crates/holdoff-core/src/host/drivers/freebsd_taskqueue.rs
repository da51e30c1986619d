//! FreeBSD 2006 em fast interrupt + taskqueue (`driver =
//! "freebsd-taskqueue"`): the filter reads ICR, masks the NIC (IMC) and
//! enqueues a task; the task cleans up to `rx_process_limit` packets (one
//! RDT write) *without* the driver lock, then under the lock reclaims TX
//! (`em_txeof`) and moves `if_snd` onto the ring (`em_start_locked`),
//! re-enqueues itself while work remains and re-enables interrupts (IMS)
//! after every pass (the 2006 code did so unconditionally: em 5.1.5
//! `em_handle_rxtx` ends with `em_enable_intr` whether or not it re-queued
//! itself, so a busy task still takes interrupts, at most one per ITR
//! interval, each a filter call whose `taskqueue_enqueue` finds the task
//! pending and wakes nobody). With
//! fast-forwarding the RX path still takes the output NIC's lock in
//! `em_start` (modelled by the stack), but that NIC's task holds it only for
//! its TX work. Source: FreeBSD 6.x sys/dev/em/if_em.c (`em_intr_fast`,
//! `em_handle_rxtx`, `em_rxeof`).
//!
//! With `bsd.rx_locked` the task's `em_rxeof` is the interrupt thread's:
//! under `EM_LOCK`, the lock dropped and re-taken and RDT written per
//! packet (the 2006 intermediate step: "Andre measured about a 20% gain
//! with just this. I then took the next step and pushed locking out of the
//! RX path", freebsd-net, 20 Oct 2006).
//!
//! Simplifies: the RX part of a pass is cut into segments of `RX_SLICE`
//! packets (simulation granularity for the lock calendar, `host::lock`);
//! the buffers are returned with one RDT write at the end of the pass's
//! `em_rxeof`, and the task continues at once (no other work of its core
//! runs between the segments of one pass).
//!
//! Units: costs [ns]; limit [packets].

use super::{DriverArch, Irq, IrqNext, Kernel, Pass, Poll, RX_SLICE};
use crate::host::driver::RxOpts;
use crate::host::EndAction;
use crate::units::{Nanos, SimTime};

/// FreeBSD fast interrupt + taskqueue.
pub struct FreebsdTaskqueue;

impl DriverArch for FreebsdTaskqueue {
    fn name(&self) -> &'static str {
        "freebsd-taskqueue"
    }
    /// Fast filter: mask in the NIC, enqueue the task. `taskqueue_enqueue`
    /// of a task already pending (`ta_pending`: the task re-enqueued
    /// itself and has not run since) only counts it and wakes nobody;
    /// otherwise the adapter's taskqueue thread is made runnable
    /// (`wakeup_ns`) and preempts the interrupted thread
    /// (`context_switch_ns`, the switch in).
    fn on_cause(&self, k: &mut dyn Kernel, _now: SimTime, i: Irq, cost: Nanos) -> (Nanos, IrqNext) {
        k.nic(i.port).write_imc(i.vector, u32::MAX);
        let prof = k.profile();
        let wake = if k.listed(i.port, i.vector) {
            Nanos::ZERO
        } else {
            prof.wakeup_ns + prof.context_switch_ns
        };
        k.schedule(i.port, i.vector);
        (cost + prof.mmio_write_ns + wake, IrqNext::NextHandler)
    }

    fn deferred(&self, k: &mut dyn Kernel, at: Poll, cost: Nanos) -> Pass {
        let Poll { now, port, vector } = at;
        let prof = k.profile();
        let limit = u32::try_from(k.bsd_config().rx_process_limit).unwrap_or(u32::MAX);
        // Packets this pass's em_rxeof has cleaned in earlier segments.
        let done = *k.slice_state(port, vector);
        let mut cost = cost;
        if done == 0 {
            cost += prof.poll_overhead_ns;
        }
        let n = RX_SLICE.min(limit - done);
        let rx_locked = k.bsd_config().rx_locked;
        let opts = if rx_locked {
            RxOpts {
                extra_ns: prof.lock_ns,
                rdt_per_packet: true,
                ..RxOpts::default()
            }
        } else {
            RxOpts {
                keep_buffers: true,
                ..RxOpts::default()
            }
        };
        let rx_start = cost;
        let (c, work) = k.clean_rx(at, n, cost, opts);
        cost = c;
        if rx_locked {
            // The RX segment holds this port's EM_LOCK.
            cost += k.lock(port, now + rx_start, cost - rx_start);
        }
        let p = k.nic(port);
        let ready = p.queues_of_vector(vector).any(|q| p.rx_ready(q) > 0);
        if ready && work == n && done + work < limit {
            // Still inside em_rxeof: the next segment goes on with it.
            *k.slice_state(port, vector) = done + work;
            return Pass {
                cost,
                work,
                more: true,
            };
        }
        *k.slice_state(port, vector) = 0;
        // em_rxeof returns: one RDT write for the whole call.
        cost = k.clean_rx(at, 0, cost, RxOpts::default()).0;
        // EM_LOCK; em_txeof; em_start_locked; EM_UNLOCK.
        let locked = cost;
        cost = k.clean_tx(at, cost + prof.lock_ns).0;
        Pass::under_lock(k, at, locked, cost, work, ready)
    }

    /// Interrupts back on after every pass, even when the task re-queued
    /// itself; not between the segments of one pass. A pass that did not
    /// re-queue the task leaves the adapter's taskqueue empty: its thread
    /// sleeps (`taskqueue_thread_loop`, the switch out).
    fn complete(&self, k: &mut dyn Kernel, at: Poll, pass: &Pass) -> (Nanos, EndAction) {
        let Poll { port, vector, .. } = at;
        if *k.slice_state(port, vector) != 0 {
            return (Nanos::ZERO, EndAction::None);
        }
        let prof = k.profile();
        let switch_out = if pass.more {
            Nanos::ZERO
        } else {
            prof.context_switch_ns
        };
        (
            prof.mmio_write_ns + switch_out,
            EndAction::Unmask { port, vector },
        )
    }

    fn locks(&self) -> bool {
        true
    }

    fn rx_lock_option(&self) -> bool {
        true
    }
}
