//! Driver architectures: how an interrupt becomes work.
//!
//! Models (algorithms.md §2 "Interrupt path", §10):
//! - `linux-isr`, the Linux e1000 5.x non-NAPI handler: read ICR (0 = not
//!   ours), then loop up to `E1000_MAX_INTR` = 10 times cleaning RX (no
//!   budget) and TX, stopping when a pass cleaned nothing. No masking: causes
//!   raised meanwhile stay in ICR and interrupt again after the throttle.
//!   Each received packet costs the driver's share (`rx_driver_ns`) in the
//!   handler and is queued (`netif_rx`) to the CPU's backlog
//!   (`netdev_max_backlog`, drops `backlog_full`); the NET_RX softirq
//!   (`process_backlog`, weight 64, the NAPI budget) does the rest. Hard
//!   interrupts preempt that softirq: with no throttle and an offered load
//!   above what the handler alone can take, the softirq starves and output
//!   collapses (receive livelock).
//! - `napi`: the handler reads ICR, masks the device (IMC = all) and
//!   schedules a NAPI poll in softirq context. A poll cleans TX fully and up
//!   to `weight` (64) RX packets; if it did less than `weight` it completes and
//!   unmasks (IMS), otherwise it stays on the poll list. `net_rx_action`
//!   stops after `budget` (300) packets or `budget_usecs` and re-raises the
//!   softirq (time_squeeze).
//! - In MSI-X mode the cause register auto-clears and the vector auto-masks
//!   at assertion (EIAC/EIAM), so the handler does no ICR read.
//!
//! - NAPI hard-IRQ deferral (Linux >= 5.7, per instance since 6.13): with
//!   `defer_hard_irqs` = N > 0 and `gro_flush_timeout_ns` = T > 0, a poll
//!   that completes keeps the IRQ masked and a timer re-polls after T; the
//!   count is re-armed to N after a poll that did work, so the IRQ comes back
//!   after N consecutive empty polls. With T = 0 deferral does nothing
//!   (algorithms.md §10 `napi_complete_done`).
//!
//! Every register access costs the profile's MMIO read or write time; RX
//! buffers are returned to the chip with one RDT write per clean pass.
//!
//! Simplifies: RDT is written once per pass rather than every 16 buffers.
//!
//! Units: costs [ns]; weight/budget [packets].

use super::profile::HostProfile;
use crate::nic::NicPort;
use crate::packet::Packet;
use crate::units::{Nanos, SimTime};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Linux `E1000_MAX_INTR`: passes of the non-NAPI handler loop.
pub const E1000_MAX_INTR: u8 = 10;

/// How the driver turns interrupts into work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "kebab-case")]
pub enum DriverKind {
    /// Linux non-NAPI interrupt-handler loop (e1000 5.x default build).
    LinuxIsr,
    /// Linux NAPI: mask in the handler, poll in softirq, unmask on completion.
    #[default]
    Napi,
    /// FreeBSD interrupt thread (pre-2006 em, `EM_LEGACY_IRQ`): the kernel
    /// masks the line in the I/O APIC and wakes the handler thread, which
    /// takes the driver lock and loops reading ICR, cleaning RX (no limit,
    /// RDT written per packet, the lock dropped around each packet's input)
    /// and TX until ICR reads 0; then the line is unmasked.
    FreebsdIthread,
    /// FreeBSD 2006 em fast interrupt + taskqueue: the filter reads ICR,
    /// masks the NIC (IMC) and enqueues a task; the task cleans up to
    /// `rx_process_limit` packets (one RDT write), TX, re-enqueues itself
    /// while work remains and re-enables interrupts (IMS) after every pass
    /// (the 2006 code did so unconditionally).
    FreebsdTaskqueue,
    /// OpenBSD em: one handler in interrupt context reads ICR, cleans TX,
    /// then RX (all ready descriptors), refills; no masking, no loop.
    OpenbsdIntr,
    /// Polling (FreeBSD DEVICE_POLLING style): interrupts stay masked; every
    /// clock tick each device is polled for up to `poll_burst` packets.
    Polling,
}

impl DriverKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DriverKind::LinuxIsr => "linux-isr",
            DriverKind::Napi => "napi",
            DriverKind::FreebsdIthread => "freebsd-ithread",
            DriverKind::FreebsdTaskqueue => "freebsd-taskqueue",
            DriverKind::OpenbsdIntr => "openbsd-intr",
            DriverKind::Polling => "polling",
        }
    }
}

/// Parameters of the BSD driver architectures and polling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BsdConfig {
    /// `hw.em.rx_process_limit`: packets per task pass (FreeBSD em 2006:
    /// 100; -1 = unlimited).
    #[serde(default = "default_rx_process_limit")]
    pub rx_process_limit: i32,
    /// Polling clock [ticks per second] (kern.hz).
    #[serde(default = "default_poll_hz")]
    pub poll_hz: u32,
    /// Packets polled per device per tick (kern.polling.burst_max).
    #[serde(default = "default_poll_burst")]
    pub poll_burst: u32,
}

fn default_rx_process_limit() -> i32 {
    100
}
fn default_poll_hz() -> u32 {
    1000
}
fn default_poll_burst() -> u32 {
    150
}

impl Default for BsdConfig {
    fn default() -> Self {
        BsdConfig {
            rx_process_limit: default_rx_process_limit(),
            poll_hz: default_poll_hz(),
            poll_burst: default_poll_burst(),
        }
    }
}

/// NAPI parameters (Linux defaults: weight 64, netdev_budget 300,
/// netdev_budget_usecs 2 jiffies = 2000 us at HZ=1000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NapiConfig {
    /// Packets one poll may process [packets].
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// Packets one net_rx_action run may process over all polls [packets].
    #[serde(default = "default_budget")]
    pub budget: u32,
    /// Time one net_rx_action run may take [us].
    #[serde(default = "default_budget_usecs")]
    pub budget_usecs: u32,
    /// `napi_defer_hard_irqs`: empty polls before the IRQ is re-enabled (0 = off).
    #[serde(default)]
    pub defer_hard_irqs: u32,
    /// `gro_flush_timeout` [ns]: with deferral, the re-poll timer (0 = off).
    #[serde(default)]
    pub gro_flush_timeout_ns: u64,
    /// `netdev_max_backlog`: per-CPU input queue of non-NAPI drivers [packets].
    #[serde(default = "default_backlog")]
    pub netdev_max_backlog: u32,
}

fn default_backlog() -> u32 {
    1000
}

fn default_weight() -> u32 {
    64
}
fn default_budget() -> u32 {
    300
}
fn default_budget_usecs() -> u32 {
    2000
}

impl Default for NapiConfig {
    fn default() -> Self {
        NapiConfig {
            weight: default_weight(),
            budget: default_budget(),
            budget_usecs: default_budget_usecs(),
            defer_hard_irqs: 0,
            gro_flush_timeout_ns: 0,
            netdev_max_backlog: default_backlog(),
        }
    }
}

/// Where received packets go: the stack. Returns the extra CPU time the
/// stack spent on the packet at time `t` (e.g. sending an ICMP reply).
pub trait StackSink {
    fn deliver(&mut self, t: SimTime, port: u16, pkt: Packet) -> Nanos;
    /// CPU time to receive `pkt` on `port` up to its hand-off to the stack
    /// (the profile's `rx_packet_ns`; for a forwarded packet the whole
    /// forwarding path, `forward_packet_ns`).
    fn rx_cost(&self, port: u16, pkt: &Packet, prof: &HostProfile) -> Nanos {
        let _ = (port, pkt);
        prof.rx_packet_ns
    }
}

/// Cost of an interrupt handler's first step for one (port, vector): entry
/// (first handler on the line only), ICR read unless MSI-X auto-clear.
/// Returns (cost, icr).
pub fn isr_read_cause(
    port: &mut NicPort,
    vector: u16,
    msix: bool,
    first: bool,
    prof: &HostProfile,
) -> (Nanos, u32) {
    let mut cost = if first {
        prof.irq_entry_exit_ns
    } else {
        Nanos::ZERO
    };
    let icr = if msix {
        let icr = port.read_icr(vector);
        port.write_imc(vector, u32::MAX); // EIAM auto-mask
        icr | 1 // an MSI-X vector is always "ours"
    } else {
        cost += prof.mmio_read_ns;
        port.read_icr(vector)
    };
    (cost, icr)
}

/// Clean up to `max` received packets of a vector's queues, delivering each
/// at its exact time; then return the buffers with one RDT write per queue
/// (or, with `per_packet_overhead`, that much extra per packet, e.g. an RDT
/// write and a lock drop/re-acquire per packet). Returns (cost, packets).
#[allow(clippy::too_many_arguments)]
pub fn clean_rx<S: StackSink>(
    port: &mut NicPort,
    port_idx: u16,
    vector: u16,
    max: u32,
    start: SimTime,
    cost: Nanos,
    prof: &HostProfile,
    stack: &mut S,
) -> (Nanos, u32) {
    clean_rx_with(
        port,
        port_idx,
        vector,
        max,
        start,
        cost,
        prof,
        RxOpts::default(),
        stack,
    )
}

/// How a driver's RX clean differs from the batch default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxOpts {
    /// Extra CPU time per packet (e.g. a driver-lock drop/re-acquire) [ns].
    pub extra_ns: Nanos,
    /// Return each buffer with its own RDT write (older BSD em) instead of
    /// one write per pass.
    pub rdt_per_packet: bool,
}

/// `clean_rx` with driver-specific per-packet work.
#[allow(clippy::too_many_arguments)]
pub fn clean_rx_with<S: StackSink>(
    port: &mut NicPort,
    port_idx: u16,
    vector: u16,
    max: u32,
    start: SimTime,
    mut cost: Nanos,
    prof: &HostProfile,
    opts: RxOpts,
    stack: &mut S,
) -> (Nanos, u32) {
    let mut n = 0;
    for q in port.queues_of_vector(vector) {
        while n < max {
            let Some(p) = port.rx_take(q) else { break };
            cost += stack.rx_cost(port_idx, &p, prof) + opts.extra_ns;
            cost += stack.deliver(start + cost, port_idx, p);
            if opts.rdt_per_packet {
                port.rx_refill(q);
                cost += prof.mmio_write_ns;
            }
            n += 1;
        }
        if port.rx_held(q) > 0 {
            port.rx_refill(q);
            cost += prof.mmio_write_ns;
        }
    }
    (cost, n)
}

/// Reclaim every completed TX descriptor of a vector's queues. Returns (cost, descriptors).
pub fn clean_tx(port: &mut NicPort, vector: u16, prof: &HostProfile) -> (Nanos, u32) {
    let mut n = 0;
    for q in port.queues_of_vector(vector) {
        n += port.tx_clean(q, u32::MAX);
    }
    (Nanos(prof.tx_clean_ns.as_ns() * n as u64), n)
}
