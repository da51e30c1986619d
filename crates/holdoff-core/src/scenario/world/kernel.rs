//! The kernel services a driver architecture sees (`host::drivers::Kernel`),
//! bound to one host and the core the driver runs on: register access,
//! masking, listing work and raising the softirq, the stack, TX cleaning and
//! the moderator. Costs are returned, never charged here.
//!
//! Units: times [ns].

use super::World;
use crate::host::driver::{BsdConfig, NapiConfig, RxOpts};
use crate::host::drivers::{Kernel, Poll};
use crate::host::lock::LockCosts;
use crate::host::profile::HostProfile;
use crate::moderation::Invocation;
use crate::nic::{NicPort, RegOp};
use crate::units::{Nanos, SimTime};

/// `Kernel` for host `h`, running on `core`.
pub(super) struct HostKernel<'w> {
    pub(super) w: &'w mut World,
    pub(super) h: u16,
    pub(super) core: u16,
}

impl World {
    /// The kernel services of host `h` for a driver running on `core`.
    pub(super) fn kernel(&mut self, h: u16, core: u16) -> HostKernel<'_> {
        HostKernel { w: self, h, core }
    }
}

impl Kernel for HostKernel<'_> {
    fn profile(&self) -> &'static HostProfile {
        self.w.hosts[self.h as usize].profile
    }

    fn napi_config(&self) -> NapiConfig {
        self.w.hosts[self.h as usize].napi
    }

    fn bsd_config(&self) -> BsdConfig {
        self.w.hosts[self.h as usize].bsd
    }

    fn nic(&mut self, port: u16) -> &mut NicPort {
        &mut self.w.ports[port as usize]
    }

    fn line_of(&self, port: u16, vector: u16) -> u16 {
        self.w.port_vec_line[port as usize][vector as usize]
    }

    fn line_handlers(&self, irq: u16) -> Vec<(u16, u16)> {
        self.w.hosts[self.h as usize].lines[irq as usize]
            .handlers
            .clone()
    }

    fn apic_mask(&mut self, irq: u16) {
        let line = &mut self.w.hosts[self.h as usize].lines[irq as usize];
        line.apic_masked = true;
        for &(p, _) in &line.handlers {
            self.w.ports[p as usize].note(RegOp::ApicMask);
        }
    }

    fn line_listed(&self, irq: u16) -> bool {
        let sq = &self.w.hosts[self.h as usize].softirq[self.core as usize];
        sq.poll_list
            .iter()
            .any(|&(p, v)| self.w.port_vec_line[p as usize][v as usize] == irq)
    }

    fn schedule(&mut self, port: u16, vector: u16) {
        self.w.queue_poll(self.h, port, vector);
    }

    fn busy_owned(&self, port: u16, vector: u16) -> bool {
        self.w.napi_state[port as usize][vector as usize]
            .busy_owner
            .is_some()
    }

    fn clean_rx(&mut self, at: Poll, max: u32, cost: Nanos, opts: RxOpts) -> (Nanos, u32) {
        let Poll { now, port, vector } = at;
        let out = self
            .w
            .stack_rx(now, self.h, self.core, port, vector, max, cost, opts);
        self.w.wake_swi_net(self.h, self.core);
        out
    }

    fn rx_to_backlog(&mut self, port: u16, vector: u16) -> (Nanos, u32) {
        self.w.isr_rx_to_backlog(self.h, self.core, port, vector)
    }

    fn clean_tx(&mut self, at: Poll, cost: Nanos) -> (Nanos, u32) {
        let Poll { now, port, vector } = at;
        let prof = self.profile();
        let (tx_cost, n) = self.w.reclaim_tx(now, port, vector, prof);
        let cost = cost + tx_cost;
        (cost + self.w.drain_qdisc(now + cost, port, prof), n)
    }

    fn moderate(&mut self, t: SimTime, port: u16, vector: u16, when: Invocation) -> Nanos {
        let prof = self.profile();
        self.w.moderate(t, port, vector, when, prof)
    }

    /// `napi_complete_done`; when it returns true, a moderation algorithm
    /// that runs at NAPI completion (Linux ixgbe `ixgbe_set_itr`) is called
    /// before the driver re-enables the vector. Its EITR write is a posted
    /// MMIO write whose CPU cost is not charged here (the caller's unmask
    /// write is).
    fn napi_complete(&mut self, t: SimTime, port: u16, vector: u16, work: u32) -> bool {
        let done = self.w.complete_poll(t, self.h, port, vector, work);
        if done {
            let prof = self.profile();
            self.w
                .moderate(t, port, vector, Invocation::NapiComplete, prof);
        }
        done
    }

    fn lock(&mut self, port: u16, at: SimTime, hold: Nanos) -> Nanos {
        let costs = LockCosts::of(self.profile());
        let m = &mut self.w.locks[port as usize];
        m.prune(self.w.q.now());
        m.acquire(at, self.core, hold, &costs).elapsed()
    }

    fn icu_lock(&mut self, at: SimTime, hold: Nanos) -> Nanos {
        let costs = LockCosts::of(self.profile());
        let m = &mut self.w.icu_locks[self.h as usize];
        m.prune(self.w.q.now());
        m.acquire(at, self.core, hold, &costs).elapsed()
    }

    fn listed(&self, port: u16, vector: u16) -> bool {
        self.w.napi_listed(port, vector)
    }

    fn reclaim_tx(&mut self, at: Poll, cost: Nanos) -> (Nanos, u32) {
        let prof = self.profile();
        let (tx_cost, n) = self.w.reclaim_tx(at.now, at.port, at.vector, prof);
        (cost + tx_cost, n)
    }

    fn tsq_run(&mut self, at: Poll, cost: Nanos) -> Nanos {
        let prof = self.profile();
        cost + self.w.tsq_run(at.now + cost, prof)
    }

    fn start_tx(&mut self, at: Poll, cost: Nanos) -> Nanos {
        let prof = self.profile();
        cost + self.w.drain_qdisc(at.now + cost, at.port, prof)
    }

    fn slice_state(&mut self, port: u16, vector: u16) -> &mut u32 {
        &mut self.w.napi_state[port as usize][vector as usize].slice
    }
}
