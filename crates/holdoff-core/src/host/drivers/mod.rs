//! Driver architectures, one file each: how an interrupt becomes work.
//!
//! Each architecture implements `DriverArch`: its interrupt entry (the
//! hard-IRQ handler of one (port, vector) of a line), its deferred work (one
//! pass of a NAPI poll in softirq, a taskqueue task, an interrupt thread or a
//! polling tick over one (port, vector) taken from the core's list) and its
//! completion (whether and how interrupts come back after a pass). It acts
//! only through `Kernel`, the narrow set of kernel services the world
//! provides: register access, masking, listing work and raising the softirq,
//! handing packets to the stack, cleaning TX, running the moderator. Every
//! step returns its CPU cost; the world charges it to the running core.
//!
//! The models and their sources are described on `host::driver::DriverKind`
//! and in algorithms.md §2 and §10; `arch` is the one registry that maps a
//! `DriverKind` to its implementation.
//!
//! Units: costs [ns]; budgets and limits [packets].

mod freebsd_ithread;
mod freebsd_taskqueue;
mod linux_isr;
pub mod napi;
mod openbsd_intr;
mod polling;

use super::driver::{self, BsdConfig, DriverKind, NapiConfig, RxOpts};
use super::profile::HostProfile;
use super::EndAction;
use crate::moderation::Invocation;
use crate::nic::NicPort;
use crate::units::{Nanos, SimTime};

/// The kernel services a driver may use, bound to one host and the core the
/// driver runs on.
pub trait Kernel {
    /// The host's cost profile.
    fn profile(&self) -> &'static HostProfile;
    /// The host's NAPI / softirq parameters.
    fn napi_config(&self) -> NapiConfig;
    /// The host's BSD driver and polling parameters.
    fn bsd_config(&self) -> BsdConfig;
    /// A port's registers and rings (reads and writes are charged by the caller).
    fn nic(&mut self, port: u16) -> &mut NicPort;
    /// The IRQ line (host-local index) of (port, vector).
    fn line_of(&self, port: u16, vector: u16) -> u16;
    /// Every handler (port, vector) sharing line `irq`.
    fn line_handlers(&self, irq: u16) -> Vec<(u16, u16)>;
    /// Mask line `irq` in the I/O APIC.
    fn apic_mask(&mut self, irq: u16);
    /// A handler of line `irq` waits on this core's poll/task list.
    fn line_listed(&self, irq: u16) -> bool;
    /// `napi_schedule` / task enqueue / thread wake-up: list (port, vector)
    /// on its core's list and raise the softirq there.
    fn schedule(&mut self, port: u16, vector: u16);
    /// A busy-poll loop owns the NAPI instance of (port, vector), so
    /// `napi_schedule` fails.
    fn busy_owned(&self, port: u16, vector: u16) -> bool;
    /// Clean up to `max` received packets of (port, vector) into the stack,
    /// delivering each at `start` + the cost so far (`cost` on entry).
    /// Returns (cost, packets).
    fn clean_rx(
        &mut self,
        start: SimTime,
        port: u16,
        vector: u16,
        max: u32,
        cost: Nanos,
        opts: RxOpts,
    ) -> (Nanos, u32);
    /// Non-NAPI RX (`netif_rx`): every ready packet of (port, vector) to
    /// this CPU's backlog, then raise NET_RX. Returns (cost, packets).
    fn rx_to_backlog(&mut self, port: u16, vector: u16) -> (Nanos, u32);
    /// Reclaim TX descriptors of (port, vector), then move queued packets
    /// (qdisc) onto the ring at `now` + the cost so far (`cost` on entry).
    /// Returns (cost, descriptors cleaned).
    fn clean_tx(&mut self, now: SimTime, port: u16, vector: u16, cost: Nanos) -> (Nanos, u32);
    /// Run the moderation algorithm of (port, vector) at `t` if it is
    /// invoked `when`; returns the cost of its register write.
    fn moderate(&mut self, t: SimTime, port: u16, vector: u16, when: Invocation) -> Nanos;
    /// `napi_complete_done` at `t` for a poll that did `work`; true: the
    /// driver must unmask the device IRQ.
    fn napi_complete(&mut self, t: SimTime, port: u16, vector: u16, work: u32) -> bool;
}

/// One handler of an interrupt line being run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Irq {
    /// Host-local line index.
    pub irq: u16,
    /// Index of this handler among the line's handlers.
    pub handler: u8,
    /// The driver's loop counter (0 on entry).
    pub iter: u8,
    pub port: u16,
    pub vector: u16,
    /// The port runs MSI-X (cause auto-clear, vector auto-mask).
    pub msix: bool,
}

/// How an interrupt handler step ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IrqNext {
    /// Run the line's next handler, or end the interrupt (EOI) after the last.
    NextHandler,
    /// Run this handler again with the loop counter set to this.
    Again(u8),
    /// End the interrupt now (EOI).
    Eoi,
}

/// Deferred work on (port, vector) at `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Poll {
    pub now: SimTime,
    pub port: u16,
    pub vector: u16,
}

/// One pass of deferred work over (port, vector).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pass {
    /// CPU time so far (including what was spent before the pass).
    pub cost: Nanos,
    /// Received packets processed [packets].
    pub work: u32,
    /// Work remains: list (port, vector) again.
    pub more: bool,
}

/// A driver architecture. The defaults describe a driver that only reads
/// the cause in its handler and defers nothing.
pub trait DriverArch: Sync {
    /// The hard-IRQ handler of one (port, vector) of line `i.irq`, at `now`.
    /// Returns its cost and how the handler continues. Default: `entry`.
    fn interrupt(&self, k: &mut dyn Kernel, now: SimTime, i: Irq) -> (Nanos, IrqNext) {
        entry(self, k, now, i)
    }
    /// The handler's work once the cause is ours, `cost` spent so far.
    fn on_cause(&self, k: &mut dyn Kernel, now: SimTime, i: Irq, cost: Nanos) -> (Nanos, IrqNext) {
        let _ = (k, now, i);
        (cost, IrqNext::NextHandler)
    }
    /// One pass of deferred work, `cost` already spent. Default: none.
    fn deferred(&self, k: &mut dyn Kernel, at: Poll, cost: Nanos) -> Pass {
        let _ = (k, at);
        Pass {
            cost,
            work: 0,
            more: false,
        }
    }
    /// After a pass: re-enable interrupts or not. Returns the extra cost and
    /// what to do at the end of the segment. Default: nothing.
    fn complete(&self, k: &mut dyn Kernel, at: Poll, pass: &Pass) -> (Nanos, EndAction) {
        let _ = (k, at, pass);
        (Nanos::ZERO, EndAction::None)
    }
    /// Passes count against `net_rx_action`'s budget and time limit (Linux
    /// softirq); otherwise the list runs until it is empty (default).
    fn budgeted(&self) -> bool {
        false
    }
    /// Interrupts are enabled (IMS written) when the interface comes up.
    fn unmask_at_start(&self) -> bool {
        true
    }
    /// The polling clock period, for a driver that polls.
    fn poll_period(&self, bsd: &BsdConfig) -> Option<Nanos> {
        let _ = bsd;
        None
    }
}

/// The implementation of a driver architecture (the registry).
pub fn arch(kind: DriverKind) -> &'static dyn DriverArch {
    match kind {
        DriverKind::Napi => &napi::Napi,
        DriverKind::LinuxIsr => &linux_isr::LinuxIsr,
        DriverKind::FreebsdIthread => &freebsd_ithread::FreebsdIthread,
        DriverKind::FreebsdTaskqueue => &freebsd_taskqueue::FreebsdTaskqueue,
        DriverKind::OpenbsdIntr => &openbsd_intr::OpenbsdIntr,
        DriverKind::Polling => &polling::Polling,
    }
}

/// The entry of every cause-reading handler: entry (first handler on the
/// line only) and ICR read (`driver::isr_read_cause`); a cause register
/// that reads 0 means a shared line's other device: on to the next handler.
/// Otherwise the per-interrupt moderation call, then the driver's `on_cause`.
pub fn entry<D: DriverArch + ?Sized>(
    d: &D,
    k: &mut dyn Kernel,
    now: SimTime,
    i: Irq,
) -> (Nanos, IrqNext) {
    let prof = k.profile();
    let (cost, icr) = driver::isr_read_cause(k.nic(i.port), i.vector, i.msix, i.handler == 0, prof);
    if icr == 0 {
        return (cost, IrqNext::NextHandler);
    }
    let cost = cost + k.moderate(now + cost, i.port, i.vector, Invocation::PerInterrupt);
    d.on_cause(k, now, i, cost)
}
