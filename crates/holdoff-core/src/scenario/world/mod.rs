//! The world: every component of a scenario wired together, and the event
//! loop that runs it. This is the only place that connects NICs, links,
//! hosts, drivers, the stack and applications.
//!
//! Event flow of one received frame: generator or peer NIC puts it on the
//! wire -> `Arrive` at the NIC -> `RxDmaDone` -> cause raised (delay timers)
//! -> throttle -> assertion -> IRQ line -> core runs the driver's handler ->
//! (NAPI poll in softirq) -> stack -> socket -> application.
//!
//! NAPI instances keep Linux's per-instance state (`NapiState`): the
//! hard-IRQ deferral count, the hrtimer, `PREFER_BUSY_POLL` and busy-poll
//! ownership. A busy-polling rpc server (epoll `busy_poll_usecs`) spins on
//! its core as application work and calls the NAPI poll itself; the spin is
//! event-driven: one segment until the timeout, cut short when a packet
//! lands on the polled ring (noticed at the next poll-iteration boundary,
//! one iteration = the profile's `poll_overhead_ns`). The decisions of
//! `napi_complete_done`, `busy_poll_stop` and epoll's IRQ suspension are
//! the pure functions of `host::driver` (Linux 6.13 `net/core/dev.c`;
//! docs/models/napi.md). A NAPI hrtimer expiry raises the softirq as its
//! interrupt exits, so it preempts application work on its core.
//!
//! One child module per concern, each an `impl World` block: `build`
//! (topology, construction), `build_apps` (applications and TCP
//! connections), `moderation` (algorithms: construction, sampling,
//! watchdogs), `napi` (poll lists, net_rx_action, backlog, deferred driver
//! work), `busy_poll` (epoll busy polling, IRQ suspension), `cpu` (IRQ
//! delivery, dispatch, segments), `datapath` (stack RX, transmit, qdisc),
//! `series` (sampling), `guard` (the resource limits of a run and the
//! guarded run loop), `groups` (the run loop by connected groups: each
//! group of linked hosts from its own queue for a stretch, same results),
//! `kernel` (the services driver architectures see,
//! `host::drivers::Kernel`) and `outcome` (the read API). The world
//! holds no per-driver branch: it dispatches to `host::drivers`.
//!
//! Same-instant ordering (the rule the golden results depend on):
//! 1. The event queue pops by (time, sequence number): events due at the
//!    same instant run in the order they were scheduled (first in, first
//!    out), whatever their kind.
//! 2. Within one event, NIC interrupt assertions collected by `flush` are
//!    raised after the event's handler, by `process_asserts`, last in, first
//!    out: the assertion queued last raises its IRQ line first. When two
//!    lines meet an idle core, the line raised first is dispatched first and
//!    the other waits in the core's IRQ queue.
//! 3. Cores listed in `pending_dispatch` while a segment ran (busy-poll and
//!    IRQ-resume schedules) are dispatched by `post_segment` last in, first
//!    out, before the segment's sends, then wakes, then TCP timers.
//! 4. A segment's effects happen at its start (per-packet delivery times
//!    inside it are exact); its end action (unmask, EOI) at its end.
//!
//! The tests at the end of this file pin rules 2 and 3. A run by connected
//! groups (`groups`) keeps rule 1 within each group and between a group and
//! the global events (samples, changes); events of different groups never
//! see each other's order.
//!
//! Units: times [ns].

mod build;
mod build_apps;
mod busy_poll;
mod changes;
mod cpu;
mod datapath;
mod groups;
mod guard;
mod kernel;
mod moderation;
mod napi;
mod outcome;
mod series;
mod topology;
mod trains;
mod txpath;

pub use changes::AppliedChange;
pub use groups::{stretch_for, ENV_GROUP_SCHEDULER, ROUND_BUDGET, STRETCH_MAX, STRETCH_MIN};
pub use guard::{Limit, Limits};
pub use moderation::{ExternalFactory, SampleRecord, MAX_SAMPLE_RECORDS};
pub use napi::{NapiStats, NetisrStats};
pub use trains::ENV_TRAINS;

use super::config::{AppCfg, Scenario};
use super::netstack::{flush_tcp, StackOut, TcpConn};
use crate::apps::tcp_apps::Wait;
use crate::apps::{App, AppKind, AppSched, Generator};
use crate::engine::rng_stream;
use crate::host::driver::{BsdConfig, DriverKind, NapiConfig, NapiTimerKind};
use crate::host::drivers::DriverArch;
use crate::host::profile::HostProfile;
use crate::host::{Core, IrqLine};
use crate::metrics::{Ledger, TimeSeries};
use crate::moderation::TraceRow;
use crate::nic::{NicEvent, NicOut, NicPort, IMS_ENABLE_MASK};
use crate::packet::Packet;
use crate::units::{Nanos, SimTime};
use crate::wire::LinkDir;
use rand::RngExt;
use std::collections::VecDeque;

use busy_poll::Spin;
use moderation::ModPrev;
use napi::{NapiState, SoftirqState};
use series::SamplePrev;

/// The simulator's event queue (`engine::WheelQueue`: a sorted array while
/// short, a timing wheel of same-time buckets while long; the same pop order
/// as a binary heap).
pub(crate) type Queue = crate::engine::WheelQueue<Ev>;

/// Every event of the simulation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    GenEmit {
        gen: u16,
    },
    /// The oldest frame on the link into endpoint `ep` arrives (the frame
    /// waits on the link, `wire::LinkDir`: links deliver in order).
    Arrive {
        ep: u16,
    },
    Nic {
        port: u16,
        ev: NicEvent,
    },
    CoreDone {
        host: u16,
        core: u16,
        gen: u32,
    },
    AppTimer {
        app: u16,
    },
    Wake {
        app: u16,
    },
    Sample,
    /// A periodic moderation call (driver watchdog) for a port.
    Watchdog {
        port: u16,
    },
    /// Polling clock tick of a host (driver = polling).
    PollTick {
        host: u16,
    },
    /// NAPI hrtimer (gro_flush_timeout re-poll of napi_defer_hard_irqs, or
    /// the irq_suspend_timeout safety net).
    NapiTimer {
        port: u16,
        vector: u16,
        gen: u32,
    },
    TcpTimer {
        conn: u16,
        side: u8,
        gen: u32,
    },
    /// A change of the scenario's `[[at]]` tables (an index of `World::steps`).
    Change {
        step: u16,
    },
    /// A moderation work item queued from the poll routine runs
    /// (`Moderator::run_work`; Linux DIM's profile apply).
    ModWork {
        port: u16,
        vector: u16,
    },
}

/// Tags of the per-frame kinds in an event's first word (`Ev::pack`);
/// `World::handle` dispatches on them without unpacking.
const TAG_GEN_EMIT: u64 = 0;
const TAG_ARRIVE: u64 = 1;
const TAG_NIC: u64 = 2;
/// A NIC event's kind (bits 40-47 of the first word of a `TAG_NIC` event).
const NIC_RX_DMA_DONE: u64 = 0;
const NIC_TX_DONE: u64 = 1;
const NIC_RX_DELAY: u64 = 2;
const NIC_TX_DELAY: u64 = 3;
const NIC_THROTTLE: u64 = 4;

/// Packing of `Ev` into the queue's two words (`engine::QueueEvent`): word 0
/// holds the tag (bits 0-7), the first two 16-bit fields (bits 8-23 and
/// 24-39) and a NIC event's tag or a TCP side (bits 40-47); word 1 the 32-bit
/// timer generation. A test round-trips every variant.
impl crate::engine::QueueEvent for Ev {
    #[inline(always)]
    fn pack(self) -> [u64; 2] {
        let w = |tag: u64, a: u16, b: u16, c: u64, gen: u32| {
            [
                tag | (a as u64) << 8 | (b as u64) << 24 | c << 40,
                gen as u64,
            ]
        };
        match self {
            Ev::GenEmit { gen } => w(TAG_GEN_EMIT, gen, 0, 0, 0),
            Ev::Arrive { ep } => w(TAG_ARRIVE, ep, 0, 0, 0),
            Ev::Nic { port, ev } => match ev {
                NicEvent::RxDmaDone { queue } => w(TAG_NIC, port, queue, NIC_RX_DMA_DONE, 0),
                NicEvent::TxDone { queue } => w(TAG_NIC, port, queue, NIC_TX_DONE, 0),
                NicEvent::RxDelay { queue, gen } => w(TAG_NIC, port, queue, NIC_RX_DELAY, gen),
                NicEvent::TxDelay { queue, gen } => w(TAG_NIC, port, queue, NIC_TX_DELAY, gen),
                NicEvent::Throttle { vector, gen } => w(TAG_NIC, port, vector, NIC_THROTTLE, gen),
            },
            Ev::CoreDone { host, core, gen } => w(3, host, core, 0, gen),
            Ev::AppTimer { app } => w(4, app, 0, 0, 0),
            Ev::Wake { app } => w(5, app, 0, 0, 0),
            Ev::Sample => w(6, 0, 0, 0, 0),
            Ev::Watchdog { port } => w(7, port, 0, 0, 0),
            Ev::PollTick { host } => w(8, host, 0, 0, 0),
            Ev::NapiTimer { port, vector, gen } => w(9, port, vector, 0, gen),
            Ev::TcpTimer { conn, side, gen } => w(10, conn, 0, side as u64, gen),
            Ev::Change { step } => w(11, step, 0, 0, 0),
            Ev::ModWork { port, vector } => w(12, port, vector, 0, 0),
        }
    }

    #[inline(always)]
    fn unpack(w: [u64; 2]) -> Self {
        let a = (w[0] >> 8) as u16;
        let b = (w[0] >> 24) as u16;
        let c = (w[0] >> 40) as u8;
        let gen = w[1] as u32;
        match w[0] & 0xff {
            TAG_GEN_EMIT => Ev::GenEmit { gen: a },
            TAG_ARRIVE => Ev::Arrive { ep: a },
            TAG_NIC => Ev::Nic {
                port: a,
                ev: match c as u64 {
                    NIC_RX_DMA_DONE => NicEvent::RxDmaDone { queue: b },
                    NIC_TX_DONE => NicEvent::TxDone { queue: b },
                    NIC_RX_DELAY => NicEvent::RxDelay { queue: b, gen },
                    NIC_TX_DELAY => NicEvent::TxDelay { queue: b, gen },
                    _ => NicEvent::Throttle { vector: b, gen },
                },
            },
            3 => Ev::CoreDone {
                host: a,
                core: b,
                gen,
            },
            4 => Ev::AppTimer { app: a },
            5 => Ev::Wake { app: a },
            6 => Ev::Sample,
            7 => Ev::Watchdog { port: a },
            8 => Ev::PollTick { host: a },
            9 => Ev::NapiTimer {
                port: a,
                vector: b,
                gen,
            },
            10 => Ev::TcpTimer {
                conn: a,
                side: c,
                gen,
            },
            12 => Ev::ModWork { port: a, vector: b },
            _ => Ev::Change { step: a },
        }
    }
}

/// Where a run stands, given to the control callback of
/// [`World::run_guarded`].
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Simulated time reached.
    pub now: SimTime,
    /// Simulated time the run ends at.
    pub end: SimTime,
    /// Events processed so far.
    pub events: u64,
}

/// How a guarded run ended (besides its report).
#[derive(Clone, Copy, Debug, Default)]
pub struct RunStats {
    /// The control callback asked to stop: the run ends at this instant.
    pub interrupted: Option<SimTime>,
    /// The longest the event queue grew [events] (every queue together
    /// in a run by groups).
    pub peak_queued_events: usize,
    /// Connected groups the run was scheduled by (`groups`); 0 when it
    /// took the single queue.
    pub groups: usize,
}

/// Moderation trace rows kept per port: a per-interrupt algorithm decides
/// thousands of times a second, so an hour-long run would otherwise hold
/// gigabytes of trace (about 0.5 kB a row). Later decisions are counted,
/// not kept, and the report warns.
pub const MAX_TRACE_ROWS_PER_PORT: usize = 100_000;

/// A modelled host.
pub struct Host {
    name: String,
    profile: &'static HostProfile,
    driver: DriverKind,
    /// The driver architecture's implementation (`host::drivers::arch`).
    arch: &'static dyn DriverArch,
    napi: NapiConfig,
    bsd: BsdConfig,
    cores: Vec<Core>,
    softirq: Vec<SoftirqState>,
    lines: Vec<IrqLine>,
    /// Global port indices of this host's NICs.
    ports: Vec<u16>,
    /// The UDP sink application on this host, if any.
    udp_sink: Option<u16>,
    txqueuelen: u32,
    /// FreeBSD netisr (`ipintrq`, `swi:net`).
    netisr: napi::Netisr,
    /// Per core: its service-time variance state; `None` when nothing
    /// varies (`host::variance`).
    variance: Vec<Option<crate::host::variance::CoreVariance>>,
    /// Deferred work runs in a thread that is woken (FreeBSD interrupt
    /// thread and taskqueue), not on interrupt exit.
    deferred_thread: bool,
}

/// What an endpoint index refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Port(u16),
    Gen(u16),
}

/// Everything in a run.
pub struct World {
    scenario: Scenario,
    q: Queue,
    end: SimTime,
    hosts: Vec<Host>,
    ports: Vec<NicPort>,
    port_names: Vec<String>,
    port_host: Vec<u16>,
    /// Per port: per vector: (host-local line index).
    port_vec_line: Vec<Vec<u16>>,
    /// Per port, per vector. Periodic (watchdog) algorithms use vector 0's
    /// instance for the whole port.
    moderators: Vec<Vec<Box<dyn crate::moderation::Moderator>>>,
    gens: Vec<Generator>,
    /// Per generator: switched on (`enabled`; `[[at]]` may switch it).
    gen_on: Vec<bool>,
    /// Per generator: an emission event is pending.
    gen_scheduled: Vec<bool>,
    gen_names: Vec<String>,
    gen_egress: Vec<LinkDir>,
    /// Peer endpoint of every endpoint (ports first, then generators).
    peer: Vec<Endpoint>,
    apps: Vec<App>,
    sched: Vec<AppSched>,
    conns: Vec<TcpConn>,
    /// Interface queue in front of each port's TX ring.
    qdisc: Vec<VecDeque<Packet>>,
    /// Byte queue limits of each port's TX ring (queue 0), where on.
    bql: Vec<Option<crate::host::dql::Dql>>,
    /// Sockets a TX clean unthrottled (TCP Small Queues): (conn, side).
    tsq_wake: Vec<(u16, u8)>,
    /// Each port's driver lock (FreeBSD `EM_LOCK`; taken only by drivers
    /// whose locks are modelled, `DriverArch::locks`).
    locks: Vec<crate::host::lock::Mutex>,
    /// Each host's I/O APIC spin lock (x86 `icu_lock`; taken only by
    /// drivers whose interrupts the OS masks in the APIC,
    /// `DriverArch::apic_masks`).
    icu_locks: Vec<crate::host::lock::Mutex>,
    /// IP forwarding: for each port, the port its received packets go out of.
    forward_to: Vec<Option<u16>>,
    /// Moderation decisions per port, in time order (the first
    /// `MAX_TRACE_ROWS_PER_PORT`; the rest are counted in `traces_dropped`).
    traces: Vec<Vec<TraceRow>>,
    traces_dropped: Vec<u64>,
    /// Every moderation call's sample, when the run asked for them
    /// ([`World::record_samples`]; off by default).
    sample_log: Option<moderation::SampleLog>,
    mod_prev: Vec<Vec<ModPrev>>,
    /// Per port, per vector NAPI state.
    napi_state: Vec<Vec<NapiState>>,
    /// Per application: its busy-poll loop in progress.
    spin: Vec<Option<Spin>>,
    /// NAPI instances a busy-poll loop owns now (`NapiState::busy_owner`
    /// set), so that a frame's DMA completion skips the owner lookup when
    /// there is none.
    busy_owned: u32,
    /// Per application: a busy-poll loop found events; serve next.
    busy_serve: Vec<bool>,
    /// Cores to dispatch after the current segment began: (host, core).
    pending_dispatch: Vec<(u16, u16)>,
    /// The segment whose sends `post_segment` is transmitting: (host, core).
    sending: Option<(u16, u16)>,
    /// NetPIPE clients still running (the run ends when they are all done).
    netpipes_running: u32,
    /// The run stopped early: when and why (a moderation algorithm failed).
    aborted: Option<(SimTime, String)>,
    ledger: Ledger,
    out: NicOut,
    pending_asserts: Vec<(u16, u16)>,
    sout: StackOut,
    ts: TimeSeries,
    sample_interval: Nanos,
    prev: SamplePrev,
    ts_cols: Vec<usize>,
    /// The scenario's `[[at]]` changes, in the order they happen.
    steps: Vec<crate::scenario::config::at::Step>,
    /// The changes applied so far.
    changes: Vec<AppliedChange>,
    /// Per port: a watchdog event is pending.
    watchdog_pending: Vec<bool>,
    /// Runs go by connected groups where they can (`groups`).
    group_sched: bool,
    /// Generator emissions run as frame trains (`trains`).
    trains: bool,
    /// Per generator: emissions left to run without a train, and the
    /// current back-off (`trains::MAX_TRAIN_BACKOFF`).
    train_backoff: Vec<(u32, u32)>,
    /// A train run's frames on the link whose arrival it holds, oldest
    /// first, by key (`trains::Key`: due at, creation number; kept here to
    /// reuse its memory).
    train_arrivals: VecDeque<u128>,
    /// Events train runs handled outside the queue since the run loop's
    /// guard last took them (its event-rate limit counts them).
    train_virtual: u64,
    /// Events train runs handled outside the queue, in the whole run.
    train_total: u64,
    /// The latest time the run loop pops events up to now (the end of the
    /// run, or of a group's stretch): a train run goes no further.
    pop_limit: SimTime,
    /// Every event handled, in order, when asked for ([`World::log_events`]).
    event_log: Option<Vec<(SimTime, [u64; 2])>>,
}

impl World {
    /// Interface up and the first events: moderation registers, then IMS
    /// (unless the driver polls), the polling clock, generators, watchdogs
    /// (each with its own phase), applications, the first sample.
    pub(super) fn init(&mut self) {
        self.schedule_changes();
        self.napi_state = self
            .ports
            .iter()
            .map(|p| vec![NapiState::default(); p.num_vectors()])
            .collect();
        self.mod_prev = self
            .ports
            .iter()
            .map(|p| vec![ModPrev::default(); p.num_vectors()])
            .collect();
        // Interface up: moderation registers, then IMS.
        for p in 0..self.ports.len() {
            for v in 0..self.ports[p].num_vectors() {
                let params = self.moderators[p][v].initial();
                if self.check_failure(SimTime::ZERO, p as u16, v as u16) {
                    return;
                }
                self.ports[p].apply_params(SimTime::ZERO, &params, Some(v as u16), &mut self.out);
            }
            if self.hosts[self.port_host[p] as usize]
                .arch
                .unmask_at_start()
            {
                for v in 0..self.ports[p].num_vectors() as u16 {
                    self.ports[p].write_ims(SimTime::ZERO, v, IMS_ENABLE_MASK, &mut self.out);
                }
            }
            self.flush(p as u16);
        }
        for (hi, host) in self.hosts.iter().enumerate() {
            if let Some(period) = host.arch.poll_period(&host.bsd) {
                self.q
                    .schedule(SimTime::ZERO + period, Ev::PollTick { host: hi as u16 });
            }
        }
        for g in 0..self.gens.len() {
            if !self.gen_on[g] {
                continue;
            }
            if let Some(t) = self.gens[g].first() {
                self.gen_scheduled[g] = true;
                self.q.schedule(t, Ev::GenEmit { gen: g as u16 });
            }
        }
        for p in 0..self.ports.len() {
            if let Some((period, at_start)) = self.watchdog_period(p) {
                // Hosts boot independently: each port's periodic timer has its
                // own phase, drawn once from its RNG stream.
                let mut rng = rng_stream(
                    self.scenario.seed,
                    &format!("watchdog/{}", self.port_names[p]),
                );
                let phase = Nanos(rng.random_range(0..period.as_ns().max(1)));
                let first = if at_start {
                    SimTime::ZERO + phase
                } else {
                    SimTime::ZERO + period + phase
                };
                self.watchdog_pending[p] = true;
                self.q.schedule(first, Ev::Watchdog { port: p as u16 });
            }
        }
        for (ai, a) in self.scenario.apps.iter().enumerate() {
            match a {
                AppCfg::Ping { start_us, .. }
                | AppCfg::UdpSend { start_us, .. }
                | AppCfg::Iperf { start_us, .. }
                | AppCfg::Rpc { start_us, .. }
                | AppCfg::RpcOpen { start_us, .. }
                | AppCfg::Netpipe { start_us, .. } => {
                    self.q
                        .schedule(SimTime(start_us * 1000), Ev::AppTimer { app: ai as u16 });
                }
                AppCfg::UdpSink { .. } => {}
            }
        }
        // Receivers of two-host applications start blocked in a read call.
        for (ai, a) in self.apps.iter().enumerate().skip(self.scenario.apps.len()) {
            let _ = a;
            self.sched[ai].waits = Some(Wait::Readable);
        }
        self.init_series();
        self.q
            .schedule(SimTime::ZERO + self.sample_interval, Ev::Sample);
    }

    /// Run to the end of the scenario (unguarded; tests and benchmarks), by
    /// connected groups where the run can (`groups`).
    pub fn run(&mut self) {
        if self.run_unguarded_by_groups() {
            return;
        }
        while self.step().is_some() {}
        self.finish();
    }

    /// Process the next event due by the end of the run; returns its time.
    /// (The single queue: a run by groups starts from the events left.)
    pub fn step(&mut self) -> Option<SimTime> {
        let (now, w) = self.q.pop_until_packed(self.end)?;
        self.handle(now, w);
        Some(now)
    }

    /// Close the run at its end time (CPU accounting up to the end).
    pub fn finish(&mut self) {
        self.q.advance_to(self.end);
        let end = self.end;
        for h in &mut self.hosts {
            for c in &mut h.cores {
                c.account(end);
            }
        }
    }

    /// One event, as the queue stores it (packed, `Ev::pack`). The per-frame kinds (emission,
    /// arrival, NIC events) are dispatched on their packed tags and handled
    /// here (unpacking into `Ev` first and matching that again took two
    /// jumps an event); the rest are unpacked and handled out of line
    /// (`handle_other`), so that the frequent path does not pay for the
    /// others' stack frame.
    #[inline]
    fn handle(&mut self, now: SimTime, w: [u64; 2]) {
        if let Some(log) = &mut self.event_log {
            log.push((now, w));
        }
        let a = (w[0] >> 8) as u16;
        match w[0] & 0xff {
            TAG_GEN_EMIT => {
                if !(self.trains && self.train_run(now, a)) {
                    self.gen_emit(now, a)
                }
            }
            TAG_ARRIVE => self.arrive(now, a),
            TAG_NIC => {
                let port = a;
                let b = (w[0] >> 24) as u16;
                let gen = w[1] as u32;
                let p = &mut self.ports[port as usize];
                match (w[0] >> 40) & 0xff {
                    NIC_RX_DMA_DONE => {
                        p.rx_dma_done(now, b, &mut self.out);
                        self.kick_busy_poller(now, port, b);
                    }
                    NIC_TX_DONE => p.tx_done(now, b, &mut self.out),
                    NIC_RX_DELAY => p.rx_delay_expired(now, b, gen, &mut self.out),
                    NIC_TX_DELAY => p.tx_delay_expired(now, b, gen, &mut self.out),
                    _ => p.throttle_expired(now, b, gen, &mut self.out),
                }
                self.flush(port);
            }
            _ => {
                use crate::engine::QueueEvent;
                self.handle_other(now, Ev::unpack(w))
            }
        }
        if !self.pending_asserts.is_empty() {
            self.process_asserts(now);
        }
    }

    /// A generator's emission: the frame goes on its link, the next
    /// emission is scheduled.
    #[inline(always)]
    fn gen_emit(&mut self, now: SimTime, gen: u16) {
        let (arrive, next) = self.emit_frame(now, gen);
        if let Some(at) = arrive {
            let ep = self.peer[self.ports.len() + gen as usize];
            self.q.schedule(
                at,
                Ev::Arrive {
                    ep: ep_index(ep, self.ports.len()),
                },
            );
        }
        if let Some(t) = next {
            self.q.schedule(t, Ev::GenEmit { gen });
        }
    }

    /// A generator's emission, without scheduling: the frame goes on the
    /// link. Returns when it arrives at the far end (none when the
    /// generator is off or the frame is over the MTU) and when the next
    /// emission is due (none when the generator stops).
    #[inline(always)]
    fn emit_frame(&mut self, now: SimTime, gen: u16) -> (Option<SimTime>, Option<SimTime>) {
        self.gen_scheduled[gen as usize] = false;
        if !self.gen_on[gen as usize] {
            // Switched off by a change: the emission is skipped and the
            // generator stops until switched on again.
            return (None, None);
        }
        let (pkt, next) = self.gens[gen as usize].emit(now);
        self.ledger.injected += 1;
        let arrive = if self.gens[gen as usize].over_mtu(&pkt) {
            self.ledger.drop(crate::packet::DropReason::FrameOverMtu);
            None
        } else {
            Some(self.gen_egress[gen as usize].send(now, pkt).arrive)
        };
        let next = next.and_then(|t| {
            // Never faster than the line: wait for the wire to be free.
            let t = t.max(self.gen_egress[gen as usize].free_at());
            (t <= self.end).then_some(t)
        });
        self.gen_scheduled[gen as usize] = next.is_some();
        (arrive, next)
    }

    /// The oldest frame on the link into endpoint `ep` arrives.
    #[inline(always)]
    fn arrive(&mut self, now: SimTime, ep: u16) {
        let np = self.ports.len() as u16;
        // The frame leaves the peer's egress link (the oldest on it: a link
        // delivers in order).
        let pkt = match self.peer[ep as usize] {
            Endpoint::Port(p) => self.ports[p as usize].egress.arrived(),
            Endpoint::Gen(g) => self.gen_egress[g as usize].arrived(),
        };
        if ep < np {
            self.ports[ep as usize].frame_arrived(now, pkt, &mut self.out);
            self.flush(ep);
        } else {
            let g = &mut self.gens[(ep - np) as usize];
            g.rx_packets += 1;
            g.rx_bytes += pkt.frame_bytes as u64;
            self.ledger.delivered += 1;
        }
    }

    /// The events other than frame emission, arrival and NIC events.
    #[inline(never)]
    fn handle_other(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::CoreDone { host, core, gen } => {
                let c = &mut self.hosts[host as usize].cores[core as usize];
                if c.gen != gen || c.running.is_none() {
                    return; // stale: the segment was preempted
                }
                c.account(now);
                let action = c.finish();
                self.end_action(now, host, action);
                self.dispatch(now, host, core);
            }
            Ev::AppTimer { app } => {
                match &mut self.apps[app as usize].kind {
                    AppKind::Ping(p) => {
                        p.fired += 1;
                        let more = p.count.is_none_or(|c| p.fired < c);
                        p.send_due = true;
                        let next = now + p.interval;
                        if more && next < self.end {
                            self.q.schedule(next, Ev::AppTimer { app });
                        }
                    }
                    AppKind::UdpSend(u) => {
                        u.fired += 1;
                        u.due += 1;
                        let more = u.count.is_none_or(|c| u.fired < c);
                        u.next_ps += u.period_ps as u128;
                        let next = SimTime::from_ps_floor(u.next_ps);
                        if more && next < self.end {
                            self.q.schedule(next, Ev::AppTimer { app });
                        }
                    }
                    _ => {}
                }
                self.wake(now, app);
            }
            Ev::Wake { app } => {
                self.sched[app as usize].wake_pending = false;
                self.wake(now, app);
            }
            Ev::Watchdog { port } => self.watchdog(now, port),
            Ev::ModWork { port, vector } => self.mod_work(now, port, vector),
            Ev::PollTick { host } => {
                let hh = &self.hosts[host as usize];
                let period = hh.arch.poll_period(&hh.bsd).expect("a polling host");
                let ports = hh.ports.clone();
                for p in ports {
                    for v in 0..self.ports[p as usize].num_vectors() as u16 {
                        self.schedule_poll(now, host, p, v);
                    }
                }
                let next = now + period;
                if next <= self.end {
                    self.q.schedule(next, Ev::PollTick { host });
                }
            }
            Ev::NapiTimer { port, vector, gen } => {
                let st = &mut self.napi_state[port as usize][vector as usize];
                // napi_watchdog: schedule a poll without an interrupt, unless
                // the instance is scheduled already (a busy-poll loop owns it).
                if st.timer.fire(gen) && st.busy_owner.is_none() {
                    st.prefer_busy_poll = false;
                    match st.timer_kind {
                        NapiTimerKind::Suspend => st.stats.suspend_timer_expiries += 1,
                        NapiTimerKind::Defer => st.stats.defer_timer_polls += 1,
                    }
                    let h = self.port_host[port as usize];
                    self.schedule_poll(now, h, port, vector);
                    // The softirq runs as the timer interrupt exits: it
                    // preempts application work on that core.
                    let core = self.napi_core(port, vector);
                    let c = &mut self.hosts[h as usize].cores[core as usize];
                    if c.runs_app() {
                        c.account(now);
                        c.preempt(now);
                        self.hold_posts(h, core, now);
                        self.dispatch(now, h, core);
                    }
                }
            }
            Ev::TcpTimer { conn, side, gen } => {
                let c = &mut self.conns[conn as usize];
                if c.timer[side as usize].fire(gen) {
                    c.ep[side as usize].on_timer(now, &mut self.sout.tcp);
                    let h = c.host[side as usize];
                    let prof = self.hosts[h as usize].profile;
                    // Timer softirq work: its send costs are not charged to a core.
                    flush_tcp(
                        &self.conns,
                        &self.sched,
                        conn,
                        side,
                        now,
                        prof,
                        &mut self.ledger,
                        &mut self.sout,
                    );
                    self.post_segment(now);
                }
            }
            Ev::Change { step } => self.apply_change(now, step),
            Ev::Sample => {
                self.sample(now);
                let next = now + self.sample_interval;
                if next <= self.end {
                    self.q.schedule(next, Ev::Sample);
                }
            }
            Ev::GenEmit { .. } | Ev::Arrive { .. } | Ev::Nic { .. } => {
                unreachable!("handled by `handle`")
            }
        }
    }

    /// Drain a port's outputs: schedule its events and frames, book its drops,
    /// and queue its interrupt assertions.
    /// Each list is checked before it is walked: most calls have one event
    /// and nothing else, and an empty list then costs one compare. Inlined:
    /// called twice a frame, its call frame cost as much as its work.
    #[inline(always)]
    fn flush(&mut self, port: u16) {
        if self.out.has_events() {
            for (at, ev) in self.out.events() {
                self.q.schedule(at, Ev::Nic { port, ev });
            }
            self.out.clear_events();
        }
        self.flush_frames(port);
        self.flush_drops_and_asserts(port);
    }

    /// `flush`'s frames: each one's arrival at the far end is scheduled.
    #[inline(always)]
    fn flush_frames(&mut self, port: u16) {
        if !self.out.frames.is_empty() {
            let ep = ep_index(self.peer[port as usize], self.ports.len());
            for &at in &self.out.frames {
                self.q.schedule(at, Ev::Arrive { ep });
            }
            self.out.frames.clear();
        }
    }

    /// `flush`'s drops (booked) and interrupt assertions (queued for
    /// `process_asserts`).
    #[inline(always)]
    fn flush_drops_and_asserts(&mut self, port: u16) {
        if !self.out.drops.is_empty() {
            for &r in &self.out.drops {
                self.ledger.drop(r);
            }
            self.out.drops.clear();
        }
        if !self.out.asserts.is_empty() {
            for &v in &self.out.asserts {
                self.pending_asserts.push((port, v));
            }
            self.out.asserts.clear();
        }
    }

    fn process_asserts(&mut self, now: SimTime) {
        while let Some((port, v)) = self.pending_asserts.pop() {
            let h = self.port_host[port as usize];
            let li = self.port_vec_line[port as usize][v as usize];
            self.irq_raise(now, h, li);
        }
    }
}

fn ep_index(ep: Endpoint, nports: usize) -> u16 {
    match ep {
        Endpoint::Port(p) => p,
        Endpoint::Gen(g) => nports as u16 + g,
    }
}

#[cfg(test)]
mod tests;
