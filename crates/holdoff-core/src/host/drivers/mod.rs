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
    /// Clean up to `max` received packets of (`at.port`, `at.vector`) into
    /// the stack, delivering each at `at.now` + the cost so far (`cost` on
    /// entry). Returns (cost, packets).
    fn clean_rx(&mut self, at: Poll, max: u32, cost: Nanos, opts: RxOpts) -> (Nanos, u32);
    /// Non-NAPI RX (`netif_rx`): every ready packet of (port, vector) to
    /// this CPU's backlog, then raise NET_RX. Returns (cost, packets).
    fn rx_to_backlog(&mut self, port: u16, vector: u16) -> (Nanos, u32);
    /// Reclaim TX descriptors of (`at.port`, `at.vector`), then move queued
    /// packets (qdisc) onto the ring at `at.now` + the cost so far (`cost`
    /// on entry). Returns (cost, descriptors cleaned).
    fn clean_tx(&mut self, at: Poll, cost: Nanos) -> (Nanos, u32);
    /// Run the moderation algorithm of (port, vector) at `t` if it is
    /// invoked `when`; returns the cost of its register write.
    fn moderate(&mut self, t: SimTime, port: u16, vector: u16, when: Invocation) -> Nanos;
    /// `napi_complete_done` at `t` for a poll that did `work`; true: the
    /// driver must unmask the device IRQ.
    fn napi_complete(&mut self, t: SimTime, port: u16, vector: u16, work: u32) -> bool;
    /// Take the driver lock of `port` (FreeBSD `EM_LOCK`, `host::lock`)
    /// at `at` and hold it for `hold`. Returns how long the caller waited
    /// for it (spinning, or asleep) [ns]. Default: never contended.
    fn lock(&mut self, port: u16, at: SimTime, hold: Nanos) -> Nanos {
        let _ = (port, at, hold);
        Nanos::ZERO
    }
    /// Take the host's I/O APIC spin lock (x86 `icu_lock`, a spin mutex,
    /// `host::lock`) at `at` and hold it for `hold`, to mask or unmask a
    /// line. Returns the CPU time spent spinning for it (handoff included)
    /// [ns]. Default: never contended.
    fn icu_lock(&mut self, at: SimTime, hold: Nanos) -> Nanos {
        let _ = (at, hold);
        Nanos::ZERO
    }
    /// The deferred work of (port, vector) is already listed (a FreeBSD
    /// task with `ta_pending` set): enqueueing it again wakes nobody.
    /// Default: never.
    fn listed(&self, port: u16, vector: u16) -> bool {
        let _ = (port, vector);
        false
    }
    /// `em_txeof` alone: reclaim TX descriptors of (`at.port`,
    /// `at.vector`) without moving the interface queue onto the ring.
    /// Returns (cost, descriptors). Default: `clean_tx`.
    fn reclaim_tx(&mut self, at: Poll, cost: Nanos) -> (Nanos, u32) {
        self.clean_tx(at, cost)
    }
    /// `em_start_locked` alone: move the interface queue of `at.port` onto
    /// its TX ring at `at.now` + `cost`. Returns the cost. Default: nothing.
    fn start_tx(&mut self, at: Poll, cost: Nanos) -> Nanos {
        let _ = at;
        cost
    }
    /// The TSQ handler (Linux `tcp_tsq_handler`, run from softirq after
    /// the NAPI poll): sockets that a TX clean since the last call
    /// unthrottled send what TCP Small Queues now allows, from `at.now` +
    /// `cost`. Returns the cost. Default: nothing.
    fn tsq_run(&mut self, at: Poll, cost: Nanos) -> Nanos {
        let _ = at;
        cost
    }
    /// The driver's progress word for (port, vector) between the segments
    /// of one long pass (0 = at the start of a pass).
    fn slice_state(&mut self, port: u16, vector: u16) -> &mut u32;
}

/// Received packets one segment of a FreeBSD driver pass handles at most:
/// a simulation granularity, not a driver parameter. Lock holds are
/// granted when a segment is computed (`host::lock`), so a segment must
/// not reserve a lock far into its own future (a request from another core
/// waits at most one segment longer than it would on the machine); 4
/// packets at ~1.5-2 us are 6-8 us, small against the ~10 us another
/// thread holds the lock for its TX reclaim.
pub const RX_SLICE: u32 = 4;

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

impl Irq {
    /// This handler's (port, vector) at `now`.
    pub fn at(self, now: SimTime) -> Poll {
        Poll {
            now,
            port: self.port,
            vector: self.vector,
        }
    }
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

impl Pass {
    /// A pass whose CPU time from `held_from` to `cost` ran under `at.port`'s
    /// driver lock: the wait to take the lock (`Kernel::lock`) is added.
    pub fn under_lock(
        k: &mut dyn Kernel,
        at: Poll,
        held_from: Nanos,
        cost: Nanos,
        work: u32,
        more: bool,
    ) -> Pass {
        let wait = k.lock(at.port, at.now + held_from, cost - held_from);
        Pass {
            cost: cost + wait,
            work,
            more,
        }
    }
}

/// A driver architecture. The defaults describe a driver that only reads
/// the cause in its handler and defers nothing.
pub trait DriverArch: Sync {
    /// The architecture's name in a scenario (`hosts[].driver`).
    fn name(&self) -> &'static str;
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
    /// The driver has NAPI instances (so busy polling and IRQ suspension,
    /// which call and park the NAPI poll, apply to it).
    fn napi(&self) -> bool {
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
    /// Driver locks are modelled (`host::lock`): the forwarding path takes
    /// the output port's driver lock to transmit (`em_start`).
    fn locks(&self) -> bool {
        false
    }
    /// The OS masks the line in the I/O APIC for the handler (a threaded
    /// interrupt), under the host's `icu_lock` (reported with the locks).
    fn apic_masks(&self) -> bool {
        false
    }
    /// The driver can run its RX path under the driver lock on request
    /// (`bsd.rx_locked`: the 2006 taskqueue's intermediate step).
    fn rx_lock_option(&self) -> bool {
        false
    }
    /// A Linux driver: the host kernel is Linux, so its profile's Linux
    /// kernel features (TSQ, BQL, receive-buffer autotuning;
    /// `host::kernel`) apply by default.
    fn linux(&self) -> bool {
        false
    }
    /// The handler re-enables an MSI-X vector after the chip's auto-mask
    /// (EIAM). One that does not would take one interrupt per vector and
    /// never another, so the scenario validation refuses MSI-X for it
    /// (`msix_refusal`).
    fn msix(&self) -> bool {
        true
    }
    /// Why the driver runs without MSI-X and what to set instead (for a
    /// driver whose `msix` is false).
    fn msix_refusal(&self) -> &'static str {
        ""
    }
}

impl DriverKind {
    /// The kind's name in a scenario (`hosts[].driver`), as its
    /// architecture gives it.
    pub fn as_str(self) -> &'static str {
        arch(self).name()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::driver::E1000_MAX_INTR;
    use crate::host::profile;

    /// A kernel that records what drivers ask of it. RX/TX cleaning reports
    /// `rx_per_pass` / `tx_per_pass` items at no cost; `complete_says` is
    /// `napi_complete_done`'s answer.
    #[derive(Default)]
    struct Mock {
        rx_per_pass: u32,
        tx_per_pass: u32,
        complete_says: bool,
        listed_on_line: bool,
        scheduled: Vec<(u16, u16)>,
        moderated: Vec<Invocation>,
        completions: u32,
        slice: u32,
        /// `Kernel::listed`'s answer (a task already pending).
        task_listed: bool,
        /// The wait `icu_lock` reports, and the requests it saw (at, hold).
        icu_wait: Nanos,
        icu_requests: Vec<(SimTime, Nanos)>,
        /// A port for drivers that write registers (None: untouched).
        port: Option<NicPort>,
    }

    impl Kernel for Mock {
        fn profile(&self) -> &'static HostProfile {
            profile::by_name("p4-xeon-2004").expect("profile")
        }
        fn napi_config(&self) -> NapiConfig {
            NapiConfig::default()
        }
        fn bsd_config(&self) -> BsdConfig {
            BsdConfig::default()
        }
        fn nic(&mut self, _port: u16) -> &mut NicPort {
            self.port
                .as_mut()
                .expect("a test that touches registers gives a port")
        }
        fn icu_lock(&mut self, at: SimTime, hold: Nanos) -> Nanos {
            self.icu_requests.push((at, hold));
            self.icu_wait
        }
        fn listed(&self, _port: u16, _vector: u16) -> bool {
            self.task_listed
        }
        fn line_of(&self, _port: u16, _vector: u16) -> u16 {
            7
        }
        fn line_handlers(&self, _irq: u16) -> Vec<(u16, u16)> {
            vec![(0, 0), (1, 0)]
        }
        fn apic_mask(&mut self, _irq: u16) {}
        fn line_listed(&self, _irq: u16) -> bool {
            self.listed_on_line
        }
        fn schedule(&mut self, port: u16, vector: u16) {
            self.scheduled.push((port, vector));
        }
        fn busy_owned(&self, _port: u16, _vector: u16) -> bool {
            false
        }
        fn clean_rx(&mut self, _at: Poll, max: u32, cost: Nanos, _o: RxOpts) -> (Nanos, u32) {
            (cost, self.rx_per_pass.min(max))
        }
        fn rx_to_backlog(&mut self, _port: u16, _vector: u16) -> (Nanos, u32) {
            (Nanos::ZERO, self.rx_per_pass)
        }
        fn clean_tx(&mut self, _at: Poll, cost: Nanos) -> (Nanos, u32) {
            (cost, self.tx_per_pass)
        }
        fn moderate(&mut self, _t: SimTime, _port: u16, _vector: u16, when: Invocation) -> Nanos {
            self.moderated.push(when);
            Nanos::ZERO
        }
        fn napi_complete(&mut self, _t: SimTime, _port: u16, _vector: u16, _work: u32) -> bool {
            self.completions += 1;
            self.complete_says
        }
        fn slice_state(&mut self, _port: u16, _vector: u16) -> &mut u32 {
            &mut self.slice
        }
    }

    const AT: Poll = Poll {
        now: SimTime::ZERO,
        port: 0,
        vector: 0,
    };

    fn irq(iter: u8) -> Irq {
        Irq {
            irq: 7,
            handler: 0,
            iter,
            port: 0,
            vector: 0,
            msix: false,
        }
    }

    #[test]
    fn each_architecture_is_named_as_a_scenario_spells_its_kind() {
        // The name comes from the architecture; the spelling a scenario
        // reads comes from serde's kebab-case of the kind: they must agree.
        for kind in [
            DriverKind::LinuxIsr,
            DriverKind::Napi,
            DriverKind::FreebsdIthread,
            DriverKind::FreebsdTaskqueue,
            DriverKind::OpenbsdIntr,
            DriverKind::Polling,
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
        }
    }

    #[test]
    fn registry_polling_alone_keeps_interrupts_masked_and_ticks_at_kern_hz() {
        let bsd = BsdConfig::default();
        for kind in [
            DriverKind::LinuxIsr,
            DriverKind::Napi,
            DriverKind::FreebsdIthread,
            DriverKind::FreebsdTaskqueue,
            DriverKind::OpenbsdIntr,
        ] {
            assert!(arch(kind).unmask_at_start(), "{kind:?}");
            assert_eq!(arch(kind).poll_period(&bsd), None, "{kind:?}");
        }
        let polling = arch(DriverKind::Polling);
        assert!(!polling.unmask_at_start());
        // kern.hz = 1000: one tick per millisecond.
        assert_eq!(polling.poll_period(&bsd), Some(Nanos::from_ms(1)));
    }

    #[test]
    fn only_linux_softirq_work_counts_against_the_net_rx_budget() {
        for kind in [DriverKind::LinuxIsr, DriverKind::Napi] {
            assert!(arch(kind).budgeted(), "{kind:?}");
        }
        for kind in [
            DriverKind::FreebsdIthread,
            DriverKind::FreebsdTaskqueue,
            DriverKind::OpenbsdIntr,
            DriverKind::Polling,
        ] {
            assert!(!arch(kind).budgeted(), "{kind:?}");
        }
    }

    #[test]
    fn e1000_isr_loop_runs_at_most_e1000_max_intr_passes() {
        // Every pass cleans a packet: the loop goes on to pass
        // E1000_MAX_INTR (e1000_intr: `for (i = 0; i < E1000_MAX_INTR; i++)`)
        // and then ends with the per-poll moderation call.
        let d = arch(DriverKind::LinuxIsr);
        let mut k = Mock {
            rx_per_pass: 1,
            ..Mock::default()
        };
        for iter in 1..E1000_MAX_INTR {
            let (_, next) = d.interrupt(&mut k, SimTime::ZERO, irq(iter));
            assert_eq!(next, IrqNext::Again(iter + 1));
        }
        assert!(k.moderated.is_empty());
        let (_, next) = d.interrupt(&mut k, SimTime::ZERO, irq(E1000_MAX_INTR));
        assert_eq!(next, IrqNext::NextHandler);
        assert_eq!(k.moderated, vec![Invocation::PerPoll]);
        // A pass that cleaned nothing ends the loop at once.
        let mut idle = Mock::default();
        let (_, next) = d.interrupt(&mut idle, SimTime::ZERO, irq(1));
        assert_eq!(next, IrqNext::NextHandler);
    }

    #[test]
    fn freebsd_ithread_wakes_every_handler_of_the_line_and_unmasks_when_none_is_left() {
        let d = arch(DriverKind::FreebsdIthread);
        let mut k = Mock::default();
        let (_, next) = d.interrupt(&mut k, SimTime::ZERO, irq(0));
        assert_eq!(next, IrqNext::Eoi);
        assert_eq!(k.scheduled, vec![(0, 0), (1, 0)]);
        let done = Pass {
            cost: Nanos::ZERO,
            work: 0,
            more: false,
        };
        let (_, end) = d.complete(&mut k, AT, &done);
        assert_eq!(end, EndAction::ApicUnmask { irq: 7 });
        // Another handler of the line still runs: the line stays masked.
        k.listed_on_line = true;
        assert_eq!(d.complete(&mut k, AT, &done).1, EndAction::None);
    }

    /// An 82546 port, INTx, as the 2006 FreeBSD case uses.
    fn e1000_port() -> NicPort {
        let chip = crate::nic::chip::by_name("82546").expect("chip");
        let cfg = crate::nic::PortConfig {
            rx_ring: 256,
            tx_ring: 256,
            queues: 1,
            mode: crate::nic::IntMode::Intx,
            set_ide: true,
            rdmts_shift: 1,
            legacy_itr: chip.legacy_itr,
            max_frame_bytes: 1518,
            gro: false,
            eitr_cnt_ignr: true,
        };
        let egress = crate::wire::LinkDir::new(crate::units::BitsPerSec::GIGABIT, Nanos(0));
        NicPort::new(chip, cfg, egress)
    }

    #[test]
    fn freebsd_ithread_masks_and_unmasks_under_the_icu_lock() {
        // intr_execute_handlers masks the threaded source under icu_lock at
        // the handler's start; the thread unmasks it under the same lock
        // when its pass ends. Each hold is one APIC access
        // (apic_mask_ns); a wait for the lock is spun on the CPU, so it
        // adds to the handler's and to the pass's cost, one for one.
        let d = arch(DriverKind::FreebsdIthread);
        let prof = profile::by_name("p4-xeon-2004").expect("profile");
        // Entry, the mask, the wake-up and the switch into the thread.
        let base =
            prof.irq_entry_exit_ns + prof.apic_mask_ns + prof.wakeup_ns + prof.context_switch_ns;
        for wait in [Nanos::ZERO, Nanos(700)] {
            let mut k = Mock {
                icu_wait: wait,
                ..Mock::default()
            };
            let now = SimTime(5_000);
            let (cost, _) = d.interrupt(&mut k, now, irq(0));
            assert_eq!(cost, base + wait, "mask, wait {wait:?}");
            assert_eq!(k.icu_requests, vec![(now, prof.apic_mask_ns)]);
            let done = Pass {
                cost: Nanos(3_000),
                work: 4,
                more: false,
            };
            let at = Poll { now, ..AT };
            let (extra, end) = d.complete(&mut k, at, &done);
            assert_eq!(end, EndAction::ApicUnmask { irq: 7 });
            // The unmask, its wait, and the thread's switch out to sleep.
            let unmask = prof.apic_mask_ns + wait + prof.context_switch_ns;
            assert_eq!(extra, unmask, "unmask, wait {wait:?}");
            assert_eq!(k.icu_requests[1], (now + Nanos(3_000), prof.apic_mask_ns));
            // Still masked (another handler of the line listed): no unmask,
            // no lock.
            k.listed_on_line = true;
            assert_eq!(d.complete(&mut k, at, &done).0, Nanos::ZERO);
            assert_eq!(k.icu_requests.len(), 2);
        }
    }

    #[test]
    fn freebsd_fast_filter_masks_the_nic_and_wakes_the_task_only_when_not_pending() {
        // em_intr_fast: IMC (one posted write), taskqueue_enqueue. A task
        // already pending (it re-enqueued itself) is only counted: no
        // wake-up, no switch. An idle one wakes the adapter's taskqueue
        // thread, which preempts the interrupted thread. Neither case
        // touches the I/O APIC lock.
        let d = arch(DriverKind::FreebsdTaskqueue);
        let prof = profile::by_name("p4-xeon-2004").expect("profile");
        let rows = [
            (
                "task idle: enqueue wakes the taskqueue thread, which switches in",
                false,
                prof.wakeup_ns + prof.context_switch_ns,
            ),
            ("task pending: enqueue only counts it", true, Nanos::ZERO),
        ];
        for (case, pending, wake) in rows {
            let mut port = e1000_port();
            let mut out = crate::nic::NicOut::default();
            port.write_ims(SimTime::ZERO, 0, crate::nic::IMS_ENABLE_MASK, &mut out);
            let mut k = Mock {
                task_listed: pending,
                port: Some(port),
                ..Mock::default()
            };
            let (cost, next) = d.on_cause(&mut k, SimTime::ZERO, irq(0), Nanos::ZERO);
            assert_eq!(cost, prof.mmio_write_ns + wake, "{case}");
            assert_eq!(next, IrqNext::NextHandler, "{case}");
            assert_eq!(k.scheduled, vec![(0, 0)], "{case}");
            assert!(k.icu_requests.is_empty(), "{case}");
            let p = k.port.as_ref().expect("port");
            assert_eq!(p.ims(0), 0, "{case}: IMC masks every cause");
        }
    }

    #[test]
    fn freebsd_task_unmasks_after_every_pass_and_sleeps_only_when_not_requeued() {
        // em_handle_rxtx ends with em_enable_intr (IMS) whether or not it
        // re-enqueued itself; between the segments of one pass nothing
        // happens; a pass that left no work empties the adapter's
        // taskqueue, whose thread then switches out to sleep.
        let d = arch(DriverKind::FreebsdTaskqueue);
        let prof = profile::by_name("p4-xeon-2004").expect("profile");
        let unmask = EndAction::Unmask { port: 0, vector: 0 };
        // (case, mid-pass progress word, task re-queued, expected extra, end)
        let rows = [
            (
                "between segments of one pass",
                4,
                true,
                Nanos::ZERO,
                EndAction::None,
            ),
            (
                "pass ended, task re-queued",
                0,
                true,
                prof.mmio_write_ns,
                unmask,
            ),
            (
                "pass ended, no work left: IMS, then the thread sleeps",
                0,
                false,
                prof.mmio_write_ns + prof.context_switch_ns,
                unmask,
            ),
        ];
        for (case, slice, more, extra, end) in rows {
            let mut k = Mock {
                slice,
                ..Mock::default()
            };
            let pass = Pass {
                cost: Nanos::ZERO,
                work: 1,
                more,
            };
            assert_eq!(d.complete(&mut k, AT, &pass), (extra, end), "{case}");
        }
    }

    #[test]
    fn napi_completes_only_under_its_weight_and_unmasks_when_told() {
        let d = arch(DriverKind::Napi);
        let weight = NapiConfig::default().weight;
        let mut k = Mock {
            rx_per_pass: weight,
            complete_says: true,
            ..Mock::default()
        };
        // A full-weight poll stays listed and does not complete.
        let pass = d.deferred(&mut k, AT, Nanos::ZERO);
        assert!(pass.more);
        assert_eq!(d.complete(&mut k, AT, &pass).1, EndAction::None);
        assert_eq!(k.completions, 0);
        // Under the weight: napi_complete_done decides.
        k.rx_per_pass = weight - 1;
        let pass = d.deferred(&mut k, AT, Nanos::ZERO);
        assert!(!pass.more);
        let end = EndAction::Unmask { port: 0, vector: 0 };
        assert_eq!(d.complete(&mut k, AT, &pass).1, end);
        k.complete_says = false;
        assert_eq!(d.complete(&mut k, AT, &pass).1, EndAction::None);
        assert_eq!(k.completions, 2);
    }
}
