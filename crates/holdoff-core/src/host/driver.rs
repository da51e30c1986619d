//! Driver architectures: how an interrupt becomes work.
//!
//! Models (Linux e1000 5.2.52-k3 drivers/net/e1000/e1000_main.c `e1000_intr`,
//! `e1000_clean`; Linux 6.13 net/core/dev.c `net_rx_action`,
//! `napi_complete_done`, `busy_poll_stop`; Documentation/networking/napi.rst):
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
//!   (net/core/dev.c `napi_complete_done`; commit 6f8b12d661d0 "net: napi:
//!   add hard irqs deferral feature").
//! - NAPI IRQ suspension (Linux >= 6.13, `irq_suspend_timeout_ns`) and epoll
//!   busy polling with `prefer_busy_poll`: the decisions are the pure
//!   functions `napi_complete_done`, `busy_poll_stop` and `epoll_irq_action`
//!   below; the world applies them (see docs/models/napi.md). A busy-polled
//!   instance never completes; epoll that reports events re-arms the NAPI
//!   timer with the suspend timeout (IRQ stays masked); epoll that would
//!   sleep schedules a normal poll (resume); the timer is the safety net.
//!   Simplifies: no GRO, so a completion never holds GRO packets.
//!
//! Every register access costs the profile's MMIO read or write time; RX
//! buffers are returned to the chip with one RDT write per clean pass.
//!
//! Simplifies: RDT is written once per pass rather than every 16 buffers.
//!
//! Units: costs [ns]; weight/budget [packets].

use super::profile::HostProfile;
use crate::nic::NicPort;
use crate::packet::{Packet, GRO_MAX_BYTES, GRO_MAX_FRAMES};
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
    /// `net.inet.ip.fastforwarding` for forwarded packets of the FreeBSD
    /// drivers: route in the receiving thread (`ether_demux` calls
    /// `ip_fastforward` before any queue). The model's default is on, as the
    /// 2006 forwarding tests ran; FreeBSD's own default is 0.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    #[schemars(extend("default" = true))]
    pub ip_fastforwarding: bool,
    /// `net.isr.direct` (FreeBSD 6, default 0): with fast-forwarding off,
    /// 1 runs `ip_input` in the receiving thread; 0 queues the packet on
    /// `ipintrq` for the `swi:net` thread (lower priority than interrupt
    /// and taskqueue threads).
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub isr_direct: bool,
    /// `net.inet.ip.intr_queue_maxlen`: length of `ipintrq` [packets]
    /// (`ipqmaxlen = IFQ_MAXLEN` = 50); overflow counts in
    /// `net.inet.ip.intr_queue_drops` (`hosts[].netisr.ipintrq_drops`).
    #[serde(
        default = "default_ipintrq",
        skip_serializing_if = "is_default_ipintrq"
    )]
    #[schemars(extend("default" = 50))]
    pub ip_intr_queue_maxlen: u32,
    /// `freebsd-taskqueue` only: run the task's `em_rxeof` as the interrupt
    /// thread did, under `EM_LOCK` with the lock dropped and re-taken and
    /// RDT written per packet: the 2006 step between the two designs (the
    /// fast interrupt handler first, the RX path made lock-free after it;
    /// freebsd-net, 20 Oct 2006, "em network issues"). Default false: the
    /// final design.
    #[serde(default, skip_serializing_if = "is_false")]
    #[schemars(extend("default" = false))]
    pub rx_locked: bool,
}

// The three netisr fields are left out of a serialised scenario at their
// defaults, so reports of scenarios that do not set them keep their shape.
fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn is_default_ipintrq(n: &u32) -> bool {
    *n == default_ipintrq()
}
fn default_ipintrq() -> u32 {
    50
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
            ip_fastforwarding: true,
            isr_direct: false,
            ip_intr_queue_maxlen: default_ipintrq(),
            rx_locked: false,
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
    /// `irq_suspend_timeout` [ns] (Linux >= 6.13): while an application
    /// busy-polls with `prefer_busy_poll` and epoll finds events, the device
    /// IRQ stays masked and the NAPI timer is re-armed to this timeout (the
    /// safety net that brings IRQs back). 0 = off.
    #[serde(default)]
    pub irq_suspend_timeout_ns: u64,
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
            irq_suspend_timeout_ns: 0,
        }
    }
}

/// Linux `BUSY_POLL_BUDGET` (include/net/busy_poll.h, `#define
/// BUSY_POLL_BUDGET 8`, used by epoll when `busy_poll_budget` is not set):
/// packets per busy poll [packets].
pub const BUSY_POLL_BUDGET: u32 = 8;

/// Which job an armed NAPI hrtimer does when it fires (both schedule a poll
/// without an interrupt, `napi_watchdog`); kept apart for the counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum NapiTimerKind {
    /// `gro_flush_timeout` re-poll of hard-IRQ deferral.
    #[default]
    Defer,
    /// `irq_suspend_timeout` safety net of IRQ suspension.
    Suspend,
}

/// An hrtimer (re)start: what for and after how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NapiTimerStart {
    pub kind: NapiTimerKind,
    pub after: Nanos,
}

/// Inputs of `napi_complete_done` for one NAPI instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CompleteIn {
    /// Packets the poll processed [packets].
    pub work_done: u32,
    /// GRO still holds packets (never in this model: no GRO).
    pub gro_held: bool,
    /// `defer_hard_irqs_count` before the call.
    pub defer_count: u32,
    /// `NAPI_STATE_PREFER_BUSY_POLL`: an application promised to busy-poll.
    pub prefer_busy_poll: bool,
    /// The instance is owned by a busy-poll loop (`NAPI_STATE_IN_BUSY_POLL`).
    pub busy_polled: bool,
}

/// What `napi_complete_done` decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompleteOut {
    /// The return value: true = the driver unmasks the device IRQ now.
    pub unmask: bool,
    /// The hrtimer to start (None: none).
    pub timer: Option<NapiTimerStart>,
    /// `defer_hard_irqs_count` after the call.
    pub defer_count: u32,
    /// The instance completed (SCHED and PREFER_BUSY_POLL cleared); false
    /// when busy poll owns it and will poll again.
    pub completed: bool,
}

/// Linux `napi_complete_done` with hard-IRQ deferral and IRQ suspension
/// (net/core/dev.c `napi_complete_done`, Linux >= 6.13; commit 5dc51ec86df6
/// "net: Add napi_struct parameter irq_suspend_timeout").
pub fn napi_complete_done(cfg: &NapiConfig, inp: CompleteIn) -> CompleteOut {
    // "if n is owned by netpoll or busy-poll: return false"
    if inp.busy_polled {
        return CompleteOut {
            unmask: false,
            timer: None,
            defer_count: inp.defer_count,
            completed: false,
        };
    }
    let mut timeout = NapiTimerStart {
        kind: NapiTimerKind::Defer,
        after: Nanos::ZERO,
    };
    let mut ret = true;
    let mut defer_count = inp.defer_count;
    if inp.work_done > 0 {
        if inp.gro_held {
            timeout.after = Nanos(cfg.gro_flush_timeout_ns);
        }
        defer_count = cfg.defer_hard_irqs;
    }
    if inp.prefer_busy_poll {
        timeout = NapiTimerStart {
            kind: NapiTimerKind::Suspend,
            after: Nanos(cfg.irq_suspend_timeout_ns),
        };
        if !timeout.after.is_zero() {
            ret = false;
        }
    }
    if ret && defer_count > 0 {
        defer_count -= 1;
        timeout = NapiTimerStart {
            kind: NapiTimerKind::Defer,
            after: Nanos(cfg.gro_flush_timeout_ns),
        };
        if !timeout.after.is_zero() {
            ret = false;
        }
    }
    CompleteOut {
        unmask: ret,
        timer: (!timeout.after.is_zero()).then_some(timeout),
        defer_count,
        completed: true,
    }
}

/// What `busy_poll_stop` decided at the end of a busy-poll loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusyPollStopOut {
    /// The hrtimer started before the final poll (None: none).
    pub timer: Option<NapiTimerStart>,
    /// Do not reschedule the instance if the final poll used its whole
    /// budget (IRQs stay masked, the timer polls).
    pub skip_schedule: bool,
    /// `defer_hard_irqs_count` after the call.
    pub defer_count: u32,
}

/// Linux `busy_poll_stop` (net/core/dev.c, Linux >= 6.13: the end of a
/// busy-poll loop with prefer_busy_poll); without prefer_busy_poll it
/// changes nothing.
pub fn busy_poll_stop(
    cfg: &NapiConfig,
    prefer_busy_poll: bool,
    defer_count: u32,
) -> BusyPollStopOut {
    let none = BusyPollStopOut {
        timer: None,
        skip_schedule: false,
        defer_count,
    };
    if !prefer_busy_poll {
        return none;
    }
    let mut defer_count = defer_count;
    let mut timer = NapiTimerStart {
        kind: NapiTimerKind::Suspend,
        after: Nanos(cfg.irq_suspend_timeout_ns),
    };
    if timer.after.is_zero() {
        defer_count = cfg.defer_hard_irqs;
        if defer_count > 0 {
            timer = NapiTimerStart {
                kind: NapiTimerKind::Defer,
                after: Nanos(cfg.gro_flush_timeout_ns),
            };
        }
    }
    if timer.after.is_zero() {
        return BusyPollStopOut {
            defer_count,
            ..none
        };
    }
    BusyPollStopOut {
        timer: Some(timer),
        skip_schedule: true,
        defer_count,
    }
}

/// What epoll does to the NAPI instance of its sockets on return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpollIrq {
    /// Nothing (no prefer_busy_poll, or no irq_suspend_timeout).
    Nothing,
    /// `napi_suspend_irqs`: (re)arm the hrtimer with this timeout.
    Suspend(Nanos),
    /// `napi_resume_irqs`: schedule a NAPI poll (softirq) now.
    Resume,
}

/// epoll's IRQ-suspension step (fs/eventpoll.c, Linux >= 6.13; commit
/// 8a6de2627fd3 "eventpoll: Control irq suspension for prefer_busy_poll"): events
/// reported with prefer_busy_poll suspend IRQs; no events and about to sleep
/// resume them. Both act only with `irq_suspend_timeout` > 0.
pub fn epoll_irq_action(cfg: &NapiConfig, prefer_busy_poll: bool, found_events: bool) -> EpollIrq {
    if !prefer_busy_poll || cfg.irq_suspend_timeout_ns == 0 {
        return EpollIrq::Nothing;
    }
    if found_events {
        EpollIrq::Suspend(Nanos(cfg.irq_suspend_timeout_ns))
    } else {
        EpollIrq::Resume
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
    /// GRO delivered `frames` received frames as one packet (the ledger
    /// counts frames).
    fn gro_merged(&mut self, frames: u32) {
        let _ = frames;
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
    /// Keep the cleaned buffers: no RDT write at the end of this call (a
    /// pass cut into several calls writes RDT once, in its last call).
    pub keep_buffers: bool,
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
    let gro = port.cfg.gro;
    // GRO: the receive being built (merged packet, frames in it).
    let mut held: Option<(Packet, u32)> = None;
    for q in port.queues_of_vector(vector) {
        while n < max {
            let Some(p) = port.rx_take(q) else { break };
            let len = p.tcp_payload();
            let merges = gro
                && len > 0
                && held.is_some_and(|(g, k)| {
                    g.flow == p.flow
                        && g.seq.wrapping_add(g.tcp_payload()) == p.seq
                        && g.tcp_payload() + len <= GRO_MAX_BYTES
                        && k < GRO_MAX_FRAMES
                });
            if merges {
                // napi_gro_receive: the driver's share for this frame; its
                // payload joins the held receive, its ACK/window are newer.
                let (g, k) = held.as_mut().expect("merges into a held receive");
                g.frame_bytes += len;
                g.ack = p.ack;
                g.wnd = p.wnd;
                *k += 1;
                cost += prof.rx_driver_ns + opts.extra_ns;
            } else {
                if let Some((g, k)) = held.take() {
                    cost += stack.deliver(start + cost, port_idx, g);
                    stack.gro_merged(k);
                }
                cost += stack.rx_cost(port_idx, &p, prof) + opts.extra_ns;
                if gro && len > 0 {
                    held = Some((p, 1));
                } else {
                    cost += stack.deliver(start + cost, port_idx, p);
                }
            }
            if opts.rdt_per_packet {
                port.rx_refill(q);
                cost += prof.mmio_write_ns;
            }
            n += 1;
        }
        if port.rx_held(q) > 0 && !opts.keep_buffers {
            port.rx_refill(q);
            cost += prof.mmio_write_ns;
        }
    }
    // napi_gro_flush at the end of the pass.
    if let Some((g, k)) = held.take() {
        cost += stack.deliver(start + cost, port_idx, g);
        stack.gro_merged(k);
    }
    (cost, n)
}

/// Reclaim every completed TX descriptor of a vector's queues. Returns (cost, descriptors).
pub fn clean_tx(port: &mut NicPort, vector: u16, prof: &HostProfile) -> (Nanos, u32) {
    clean_tx_with(port, vector, prof, |_, _| {})
}

/// `clean_tx`, showing each reclaimed (queue, packet) to `f`: the kernel
/// frees its buffer (TCP Small Queues) and counts its bytes (BQL).
pub fn clean_tx_with(
    port: &mut NicPort,
    vector: u16,
    prof: &HostProfile,
    mut f: impl FnMut(u16, &Packet),
) -> (Nanos, u32) {
    let mut n = 0;
    for q in port.queues_of_vector(vector) {
        n += port.tx_clean_with(q, u32::MAX, |p| f(q, p));
    }
    (Nanos(prof.tx_clean_ns.as_ns() * n as u64), n)
}

#[cfg(test)]
mod tests;
