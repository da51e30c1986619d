//! FreeBSD interrupt thread (`driver = "freebsd-ithread"`, pre-2006 em,
//! `EM_LEGACY_IRQ`): the kernel masks the line in the I/O APIC and wakes the
//! interrupt thread, which runs every handler of the line. The em handler
//! takes the driver lock (`EM_LOCK`) and, holding it, loops: read ICR, stop
//! when it reads 0; `em_rxeof(sc, -1)` (no budget: until no descriptor is
//! done; RDT written per packet and the lock dropped and re-taken around each
//! packet's `if_input`); `em_txeof` (reclaim). Only after the loop does it
//! move `if_snd` onto the TX ring (`em_start_locked`) and drop the lock. When
//! no handler of the line is left, the line is unmasked in the I/O APIC.
//! Masking and unmasking take the host's one I/O APIC spin lock
//! (`icu_lock`, `host::lock`): CPUs masking different lines serialise.
//! With fast-forwarding the packet is forwarded inside `if_input`, in this
//! thread, and the output NIC's `em_start` takes *that* NIC's lock
//! (modelled by the stack, `scenario::netstack`), so one NIC's RX path
//! contends with the other NIC's interrupt thread, which holds its own lock
//! across its whole loop, ICR reads included.
//!
//! Sources: FreeBSD 6 sys/kern/kern_intr.c (`ithread_loop`);
//! sys/{i386,amd64}/{i386,amd64}/intr_machdep.c (`intr_execute_handlers`:
//! "For stray and threaded interrupts, we mask and EOI the source") and
//! io_apic.c (`ioapic_disable_source` under `icu_lock`); sys/dev/em/
//! if_em.c (`em_intr` under `EM_LOCK`, `em_rxeof(adapter, -1)`,
//! `em_process_receive_interrupts` in 5.x); the em fast-interrupt commit
//! (if_em.c 1.98, 2006) names the per-packet lock drop/re-take and RDT
//! write; freebsd-net "em network issues" (2006-10-20) the contention
//! between one driver's RX path and the other's TX path.
//!
//! Simplifies: the lock is held for each segment of the loop as a whole (its
//! per-packet drop lets nobody in: no other path takes an RX port's lock in
//! a one-way forwarding test); the unbounded `em_rxeof` is cut into
//! segments of `RX_SLICE` packets (granularity only: no ICR read between
//! them); a wait for the lock delays the segment's end, not the timestamps
//! computed inside it.
//!
//! Units: costs [ns].

use super::{DriverArch, Irq, IrqNext, Kernel, Pass, Poll, RX_SLICE};
use crate::host::driver::RxOpts;
use crate::host::EndAction;
use crate::units::{Nanos, SimTime};

/// FreeBSD interrupt thread.
pub struct FreebsdIthread;

/// `slice_state` values: at the loop head (read ICR next), or inside
/// `em_rxeof(-1)`.
const LOOP_HEAD: u32 = 0;
const IN_RXEOF: u32 = 1;

impl DriverArch for FreebsdIthread {
    fn name(&self) -> &'static str {
        "freebsd-ithread"
    }
    /// `intr_execute_handlers` for a threaded source: mask and EOI it in
    /// the I/O APIC (`pic_disable_source(isrc, PIC_EOI)`, under the host's
    /// `icu_lock`), then `ithread_schedule`: the thread is made runnable
    /// (`wakeup_ns`) and preempts the interrupted one when the handler
    /// leaves its critical section (`context_switch_ns`, the switch in).
    /// The lock is asked for at the handler's start (the profile does not
    /// split the entry cost).
    fn interrupt(&self, k: &mut dyn Kernel, now: SimTime, i: Irq) -> (Nanos, IrqNext) {
        let prof = k.profile();
        let spin = k.icu_lock(now, prof.apic_mask_ns);
        let cost = prof.irq_entry_exit_ns
            + spin
            + prof.apic_mask_ns
            + prof.wakeup_ns
            + prof.context_switch_ns;
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
        let entry = cost;
        let mut cost = cost;
        if *k.slice_state(port, vector) == LOOP_HEAD {
            // Loop head, under EM_LOCK: read ICR; 0 ends the loop, then
            // em_start_locked moves if_snd onto the ring and the lock is
            // dropped (lock_ns: the lock + unlock pair of the handler).
            cost += prof.mmio_read_ns;
            if k.nic(port).read_icr(vector) == 0 {
                cost = k.start_tx(at, cost) + prof.lock_ns;
                return Pass::under_lock(k, at, entry, cost, 0, false);
            }
        }
        // em_rxeof(-1): no limit; RDT written and the lock dropped/re-taken
        // per packet.
        let opts = RxOpts {
            extra_ns: prof.lock_ns,
            rdt_per_packet: true,
            ..RxOpts::default()
        };
        let (c, work) = k.clean_rx(at, RX_SLICE, cost, opts);
        cost = c;
        let p = k.nic(port);
        let ready = p.queues_of_vector(vector).any(|q| p.rx_ready(q) > 0);
        if work == RX_SLICE && ready {
            *k.slice_state(port, vector) = IN_RXEOF;
        } else {
            // em_rxeof returned: em_txeof, then back to the loop head.
            cost = k.reclaim_tx(at, cost).0;
            *k.slice_state(port, vector) = LOOP_HEAD;
        }
        Pass::under_lock(k, at, entry, cost, work, true)
    }

    /// The loop ended (ICR read 0): unmask the line in the I/O APIC
    /// (`pic_enable_source`, under `icu_lock`) once no other handler of the
    /// line is left on the list; the thread then sleeps until the next
    /// interrupt (`ithread_loop`: `mi_switch`, the switch out).
    fn complete(&self, k: &mut dyn Kernel, at: Poll, pass: &Pass) -> (Nanos, EndAction) {
        let li = k.line_of(at.port, at.vector);
        if pass.more || k.line_listed(li) {
            return (Nanos::ZERO, EndAction::None);
        }
        let unmask = k.profile().apic_mask_ns;
        let spin = k.icu_lock(at.now + pass.cost, unmask);
        let switch_out = k.profile().context_switch_ns;
        (
            spin + unmask + switch_out,
            EndAction::ApicUnmask { irq: li },
        )
    }

    fn locks(&self) -> bool {
        true
    }

    fn apic_masks(&self) -> bool {
        true
    }
}
