//! The read API of a world: what a finished (or stepped) run reports,
//! per component (hosts, ports, moderators, applications, connections,
//! generators, the ledger and the time series). `report` renders from it;
//! nothing here changes the model (except, for tests, switching on a port's
//! register log and pinning a port's clock error).
//!
//! Units: times [ns].

use super::{Endpoint, Host, NapiStats, World};
use crate::apps::{App, Generator};
use crate::host::driver::DriverKind;
use crate::host::profile::HostProfile;
use crate::metrics::{Ledger, TimeSeries};
use crate::moderation::Moderator;
use crate::moderation::TraceRow;
use crate::nic::{NicPort, RegOp};
use crate::scenario::config::Scenario;
use crate::scenario::netstack::TcpConn;
use crate::units::SimTime;

impl World {
    /// The `[[at]]` changes applied so far, in the order applied.
    pub fn changes(&self) -> &[super::AppliedChange] {
        &self.changes
    }
}

/// The read API of a host: what the report shows.
impl Host {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn profile(&self) -> &'static HostProfile {
        self.profile
    }

    pub fn driver(&self) -> DriverKind {
        self.driver
    }

    pub fn num_cores(&self) -> usize {
        self.cores.len()
    }

    /// The CPU-bound processes (`hosts[].load.cpu_hogs`): their number and
    /// the CPU time they got by `end` (their slices plus the idle time of
    /// their cores) [ns]; None without them.
    pub fn hog_cpu(&self, end: SimTime) -> Option<(u32, u64)> {
        let n: u32 = self.cores.iter().map(|c| c.hogs).sum();
        (n > 0).then(|| {
            let ns = self
                .cores
                .iter()
                .filter(|c| c.hogs > 0)
                .map(|c| {
                    let used: u64 = c.busy_ns.iter().sum();
                    c.busy_ns[3] + end.as_ns().saturating_sub(used)
                })
                .sum();
            (n, ns)
        })
    }

    /// CPU time per class over all cores, indexed by `host::Class` [ns]
    /// (interrupts, softirq, applications; not the CPU-bound processes).
    pub fn busy_ns(&self) -> [u64; 3] {
        let mut b = [0u64; 3];
        for c in &self.cores {
            for (x, y) in b.iter_mut().zip(c.busy_ns) {
                *x += y;
            }
        }
        b
    }

    /// CPU time of one core per class, indexed by `host::Class` [ns]
    /// (interrupts, softirq, applications, then the CPU-bound processes).
    pub fn core_busy_ns(&self, core: usize) -> [u64; 4] {
        self.cores[core].busy_ns
    }

    /// CPU time of the busiest core: interrupts, softirq and applications,
    /// not the CPU-bound processes [ns].
    pub fn busiest_core_ns(&self) -> u64 {
        self.cores
            .iter()
            .map(|c| c.busy_ns[..3].iter().sum::<u64>())
            .max()
            .unwrap_or(0)
    }

    /// Deliveries of all its IRQ lines to a core [count].
    pub fn irq_deliveries(&self) -> u64 {
        self.lines.iter().map(|l| l.delivered).sum()
    }

    /// Global indices of its NIC ports.
    pub fn port_indices(&self) -> &[u16] {
        &self.ports
    }

    /// Its driver models its locks (`DriverArch::locks`).
    pub fn models_locks(&self) -> bool {
        self.arch.locks()
    }

    /// The OS masks its driver's lines in the I/O APIC, under `icu_lock`
    /// (`DriverArch::apic_masks`).
    pub fn masks_in_apic(&self) -> bool {
        self.arch.apic_masks()
    }

    /// Counters of its netisr, when forwarded packets are queued to
    /// `ipintrq` (FreeBSD drivers, fast-forwarding off, net.isr.direct 0).
    pub fn netisr(&self) -> Option<super::NetisrStats> {
        self.netisr.queued.then_some(self.netisr.stats)
    }

    /// Times net_rx_action ran out of budget or time [count].
    pub fn time_squeeze(&self) -> u64 {
        self.softirq.iter().map(|s| s.time_squeeze).sum()
    }

    /// Times softirq work was handed to ksoftirqd (`wakeup_softirqd`) [count].
    pub fn ksoftirqd_handoffs(&self) -> u64 {
        self.softirq.iter().map(|s| s.ksoftirqd_handoffs).sum()
    }
}

/// The read API of a world: what a finished (or stepped) run reports.
impl World {
    /// The scenario it was built from.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The end of the run (earlier than the scenario's duration when NetPIPE
    /// finished or an algorithm failed).
    pub fn end(&self) -> SimTime {
        self.end
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.q.processed()
    }

    /// The packet ledger.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// When and why the run stopped early (a moderation algorithm failed).
    pub fn aborted(&self) -> Option<(SimTime, &str)> {
        self.aborted.as_ref().map(|(t, r)| (*t, r.as_str()))
    }

    /// The sampled time series.
    pub fn series(&self) -> &TimeSeries {
        &self.ts
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// The NIC ports, in declaration order.
    pub fn ports(&self) -> &[NicPort] {
        &self.ports
    }

    /// "host.nic" of a port.
    pub fn port_name(&self, port: usize) -> &str {
        &self.port_names[port]
    }

    /// The moderation algorithm of (port, vector).
    pub fn moderator(&self, port: usize, vector: usize) -> &dyn Moderator {
        self.moderators[port][vector].as_ref()
    }

    /// Moderation decisions of a port, in time order (at most
    /// `MAX_TRACE_ROWS_PER_PORT`).
    pub fn trace(&self, port: usize) -> &[TraceRow] {
        &self.traces[port]
    }

    /// Moderation decisions of a port made after its trace was full.
    pub fn trace_rows_dropped(&self, port: usize) -> u64 {
        self.traces_dropped[port]
    }

    /// Counters of the NAPI instance of (port, vector).
    pub fn napi_stats(&self, port: usize, vector: usize) -> NapiStats {
        self.napi_state[port][vector].stats
    }

    pub fn apps(&self) -> &[App] {
        &self.apps
    }

    pub fn conns(&self) -> &[TcpConn] {
        &self.conns
    }

    pub fn generators(&self) -> &[Generator] {
        &self.gens
    }

    /// The host whose port generator `gen` is linked to (None: it is linked
    /// to another generator or to nothing).
    pub fn generator_host(&self, gen: usize) -> Option<usize> {
        match self.peer.get(self.ports.len() + gen)? {
            Endpoint::Port(p) => Some(self.port_host[*p as usize] as usize),
            Endpoint::Gen(_) => None,
        }
    }

    pub fn generator_name(&self, gen: usize) -> &str {
        &self.gen_names[gen]
    }

    /// The byte queue limits of a port's TX ring, where BQL is on.
    pub fn bql(&self, port: usize) -> Option<&crate::host::dql::Dql> {
        self.bql[port].as_ref()
    }

    /// The driver lock of a port (`host::lock`).
    pub fn port_lock(&self, port: usize) -> &crate::host::lock::Mutex {
        &self.locks[port]
    }

    /// The I/O APIC spin lock of a host (`icu_lock`, `host::lock`).
    pub fn icu_lock(&self, host: usize) -> &crate::host::lock::Mutex {
        &self.icu_locks[host]
    }

    /// Record every register access of a port (for tests of driver order).
    pub fn log_registers(&mut self, port: usize) {
        self.ports[port].enable_log();
    }

    /// Set the reference-clock error of a port [parts per billion; positive
    /// = fast] in place of the one drawn from the seed (for tests that need
    /// identical or known clocks; see `NicPort::set_clock_error_ppb`).
    pub fn set_clock_error_ppb(&mut self, port: usize, ppb: i32) {
        self.ports[port].set_clock_error_ppb(ppb);
    }

    /// The register accesses of a port recorded since `log_registers`.
    pub fn take_register_log(&mut self, port: usize) -> Vec<RegOp> {
        self.ports[port].take_log()
    }

    /// Packets present somewhere in the model (not delivered, not dropped).
    pub fn in_flight(&self) -> u64 {
        let wire: u64 = self.ports.iter().map(|p| p.egress.in_flight()).sum::<u64>()
            + self.gen_egress.iter().map(|l| l.in_flight()).sum::<u64>();
        let nic: u64 = self.ports.iter().map(|p| p.packets_held()).sum::<u64>()
            + self.qdisc.iter().map(|q| q.len() as u64).sum::<u64>();
        let apps: u64 = self.apps.iter().map(|a| a.packets_held()).sum::<u64>()
            + self
                .hosts
                .iter()
                .flat_map(|h| h.softirq.iter())
                .map(|s| s.backlog.len() as u64)
                .sum::<u64>()
            + self
                .hosts
                .iter()
                .map(|h| h.netisr.queue.len() as u64)
                .sum::<u64>();
        // Replies created by a segment are posted before the segment's event returns.
        wire + nic + apps
    }
}
