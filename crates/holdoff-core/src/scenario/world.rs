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
//! the pure functions of `host::driver` (algorithms.md §10;
//! docs/models/napi.md). A NAPI hrtimer expiry raises the softirq as its
//! interrupt exits, so it preempts application work on its core.
//!
//! Units: times [ns].

use super::config::moderation::build_ctx;
use super::config::{AppCfg, IntModeCfg, Scenario};
use super::netstack::{flush_tcp, Stack, StackOut, TcpConn, TcpCtx};
use crate::apps::netpipe::{Netpipe, NetpipeConfig};
use crate::apps::tcp_apps::{
    BusyPoll, IperfClient, IperfServer, NetpipeClient, NetpipeServer, RpcClient, RpcServer, Wait,
};
use crate::apps::{App, AppKind, AppSched, Generator, Ping, UdpSink};
use crate::engine::{rng_stream, EventQueue, Timer};
use crate::error::Error;
use crate::host::driver::{
    self, BsdConfig, CompleteIn, CompleteOut, DriverKind, EpollIrq, NapiConfig, NapiTimerKind,
    NapiTimerStart, StackSink,
};
use crate::host::profile::{self, HostProfile};
use crate::host::{Class, Core, EndAction, IrqLine, Next, Work};
use crate::metrics::{Ledger, TimeSeries};
use crate::moderation::{Invocation, Moderator, Sample, TraceRow};
use crate::nic::chip;
use crate::nic::{IntMode, NicEvent, NicOut, NicPort, PortConfig, IMS_ENABLE_MASK};
use crate::packet::{DropReason, Packet, PktKind};
use crate::stack::tcp::{TcpConfig, TcpEndpoint};
use crate::units::{BitsPerSec, Nanos, SimTime};
use crate::wire::LinkDir;
use rand::RngExt;
use std::collections::VecDeque;

/// Every event of the simulation.
#[derive(Clone, Copy, Debug)]
pub enum Ev {
    GenEmit {
        gen: u16,
    },
    Arrive {
        ep: u16,
        pkt: Packet,
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
}

/// Builds externally supplied algorithms: (class, params, "host.nic", vector).
pub type ExternalFactory<'a> = dyn FnMut(
        &str,
        &std::collections::BTreeMap<String, serde_json::Value>,
        &str,
        u16,
    ) -> Result<Box<dyn Moderator>, String>
    + 'a;

/// State of one NAPI instance (Linux `napi_struct`): the hard-IRQ deferral
/// count, the hrtimer and what it was armed for, `NAPI_STATE_PREFER_BUSY_POLL`,
/// and the application whose busy-poll loop owns it (`NAPI_STATE_IN_BUSY_POLL`).
#[derive(Clone, Copy, Default)]
struct NapiState {
    defer_count: u32,
    timer: Timer,
    timer_kind: NapiTimerKind,
    prefer_busy_poll: bool,
    busy_owner: Option<u16>,
    stats: NapiStats,
}

/// Busy-poll and IRQ-suspension counters of one NAPI instance (reported
/// per vector as `ports[].vectors[].napi`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NapiStats {
    /// Driver polls called from busy-poll loops, including the final poll
    /// of `busy_poll_stop` [polls].
    pub busy_polls: u64,
    /// Packets those polls cleaned [packets].
    pub busy_poll_packets: u64,
    /// `napi_suspend_irqs`: epoll reported events and re-armed the suspend
    /// timer [count].
    pub irq_suspends: u64,
    /// `napi_resume_irqs`: busy polling found nothing and scheduled a poll [count].
    pub irq_resumes: u64,
    /// The irq_suspend_timeout timer fired and scheduled a poll (safety net) [count].
    pub suspend_timer_expiries: u64,
    /// The gro_flush_timeout (deferral) timer fired and scheduled a poll [count].
    pub defer_timer_polls: u64,
}

/// A busy-poll loop in progress (`napi_busy_loop` of one epoll_wait).
#[derive(Clone, Copy, Debug)]
struct Spin {
    /// The NAPI instance polled: (port, vector).
    napi: (u16, u16),
    /// busy_poll_usecs after the loop began.
    deadline: SimTime,
    /// End of the last poll: empty iterations run from here.
    since: SimTime,
    /// One empty iteration (the profile's poll_overhead_ns, at least 1 ns).
    iter: Nanos,
    /// A packet landed or data arrived: poll at the next iteration boundary.
    kicked: bool,
}

/// How one busy-poll step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BusyStep {
    Found,
    Spin,
    Timeout,
}

/// Counters at the previous moderation sample of a port.
#[derive(Clone, Copy, Default)]
struct ModPrev {
    rx_packets: u64,
    rx_bytes: u64,
    tx_packets: u64,
    tx_bytes: u64,
    interrupts: u64,
}

/// Linux `MAX_SOFTIRQ_RESTART`: __do_softirq restarts at most this many
/// times (and for at most `MAX_SOFTIRQ_TIME` = 2 ms) before handing the rest
/// to ksoftirqd.
const MAX_SOFTIRQ_RESTART: u32 = 10;
const MAX_SOFTIRQ_TIME: Nanos = Nanos::from_ms(2);

/// Per-core softirq (net_rx_action) state.
#[derive(Default)]
struct SoftirqState {
    poll_list: VecDeque<(u16, u16)>,
    /// A net_rx_action run is in progress (its budget and clock are live).
    active: bool,
    budget_left: i64,
    started: SimTime,
    /// __do_softirq restarts in the current irq-exit run, and when it began.
    restarts: u32,
    do_started: SimTime,
    ksoftirqd_queued: bool,
    time_squeeze: u64,
    /// Non-NAPI input backlog (netif_rx): (port, packet).
    backlog: VecDeque<(u16, Packet)>,
}

/// Poll-list entry standing for the backlog (process_backlog).
const BACKLOG: (u16, u16) = (u16::MAX, 0);

/// A modelled host.
pub struct Host {
    pub name: String,
    pub profile: &'static HostProfile,
    pub driver: DriverKind,
    pub napi: NapiConfig,
    pub bsd: BsdConfig,
    pub cores: Vec<Core>,
    softirq: Vec<SoftirqState>,
    pub lines: Vec<IrqLine>,
    /// Global port indices of this host's NICs.
    pub ports: Vec<u16>,
    /// The UDP sink application on this host, if any.
    pub udp_sink: Option<u16>,
    pub txqueuelen: u32,
}

/// What an endpoint index refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Port(u16),
    Gen(u16),
}

/// Samples kept between two time-series points.
#[derive(Default, Clone)]
struct SamplePrev {
    vec_interrupts: Vec<Vec<u64>>,
    port_rx_bytes: Vec<u64>,
    port_tx_bytes: Vec<u64>,
    host_busy: Vec<[u64; 3]>,
}

/// Everything in a run.
pub struct World {
    pub scenario: Scenario,
    pub q: EventQueue<Ev>,
    pub end: SimTime,
    pub hosts: Vec<Host>,
    pub ports: Vec<NicPort>,
    pub port_names: Vec<String>,
    pub port_host: Vec<u16>,
    /// Per port: per vector: (host-local line index).
    port_vec_line: Vec<Vec<u16>>,
    /// Per port, per vector. Periodic (watchdog) algorithms use vector 0's
    /// instance for the whole port.
    pub moderators: Vec<Vec<Box<dyn Moderator>>>,
    pub gens: Vec<Generator>,
    pub gen_names: Vec<String>,
    pub gen_egress: Vec<LinkDir>,
    /// Peer endpoint of every endpoint (ports first, then generators).
    peer: Vec<Endpoint>,
    pub apps: Vec<App>,
    pub sched: Vec<AppSched>,
    pub conns: Vec<TcpConn>,
    /// Interface queue in front of each port's TX ring.
    pub qdisc: Vec<VecDeque<Packet>>,
    /// IP forwarding: for each port, the port its received packets go out of.
    forward_to: Vec<Option<u16>>,
    /// Moderation decisions per port, in time order.
    pub traces: Vec<Vec<TraceRow>>,
    mod_prev: Vec<Vec<ModPrev>>,
    /// Per port, per vector NAPI state.
    napi_state: Vec<Vec<NapiState>>,
    /// Per application: its busy-poll loop in progress.
    spin: Vec<Option<Spin>>,
    /// Per application: a busy-poll loop found events; serve next.
    busy_serve: Vec<bool>,
    /// Cores to dispatch after the current segment began: (host, core).
    pending_dispatch: Vec<(u16, u16)>,
    /// NetPIPE clients still running (the run ends when they are all done).
    netpipes_running: u32,
    /// The run stopped early: when and why (a moderation algorithm failed).
    pub aborted: Option<(SimTime, String)>,
    pub ledger: Ledger,
    out: NicOut,
    pending_asserts: Vec<(u16, u16)>,
    sout: StackOut,
    pub ts: TimeSeries,
    sample_interval: Nanos,
    prev: SamplePrev,
    ts_cols: Vec<usize>,
}

fn endpoint_index(s: &Scenario, name: &str) -> Endpoint {
    let mut i = 0u16;
    for h in &s.hosts {
        for n in &h.nics {
            if format!("{}.{}", h.name, n.name) == name {
                return Endpoint::Port(i);
            }
            i += 1;
        }
    }
    let g = s
        .generators
        .iter()
        .position(|g| g.name == name)
        .expect("validated endpoint");
    Endpoint::Gen(g as u16)
}

impl World {
    /// Build a world from a validated scenario.
    pub fn build(s: &Scenario, mut factory: Option<&mut ExternalFactory>) -> Result<World, Error> {
        let end = SimTime(s.duration_ms * 1_000_000);
        let link_of = |ep: &str| {
            s.links
                .iter()
                .find(|l| l.a == ep || l.b == ep)
                .expect("validated: every endpoint linked")
        };
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        let mut port_names = Vec::new();
        let mut port_host = Vec::new();
        let mut port_vec_line = Vec::new();
        let mut moderators = Vec::new();
        for (hi, h) in s.hosts.iter().enumerate() {
            let base = profile::by_name(&h.profile).expect("validated profile");
            let prof = match h.cpu_mhz {
                Some(mhz) => base.at_clock(mhz),
                None => base,
            };
            let mut host = Host {
                name: h.name.clone(),
                profile: prof,
                driver: h.driver,
                napi: h.napi,
                bsd: h.bsd,
                cores: (0..h.cores).map(|_| Core::new()).collect(),
                softirq: (0..h.cores).map(|_| SoftirqState::default()).collect(),
                lines: Vec::new(),
                ports: Vec::new(),
                udp_sink: None,
                txqueuelen: h.txqueuelen,
            };
            let mut shared: Vec<(u32, u16)> = Vec::new();
            for (ni, n) in h.nics.iter().enumerate() {
                let c = chip::by_name(&n.chip).expect("validated chip");
                let mode = match n.interrupt_mode.unwrap_or(if c.msix {
                    IntModeCfg::Msix
                } else {
                    IntModeCfg::Intx
                }) {
                    IntModeCfg::Intx => IntMode::Intx,
                    IntModeCfg::Msi => IntMode::Msi,
                    IntModeCfg::Msix => IntMode::Msix,
                };
                let name = format!("{}.{}", h.name, n.name);
                let l = link_of(&name);
                let egress = LinkDir::new(
                    BitsPerSec(super::config::parse_rate(&l.rate).expect("validated rate")),
                    Nanos(l.propagation_ns),
                );
                let cfg = PortConfig {
                    rx_ring: n.rx_ring,
                    tx_ring: n.tx_ring,
                    queues: n.queues,
                    mode,
                    set_ide: n.set_ide,
                    rdmts_shift: n.rdmts_divisor.trailing_zeros(),
                };
                let port = NicPort::new(c, cfg, egress);
                let pidx = ports.len() as u16;
                let mut lines = Vec::new();
                for v in 0..port.num_vectors() as u16 {
                    let core = ((n.irq_core + v as u32) % h.cores) as u16;
                    let li = match (mode, n.irq_line) {
                        (IntMode::Intx, Some(num)) => {
                            if let Some(&(_, li)) = shared.iter().find(|(x, _)| *x == num) {
                                host.lines[li as usize].handlers.push((pidx, v));
                                li
                            } else {
                                let li = host.lines.len() as u16;
                                shared.push((num, li));
                                host.lines.push(IrqLine {
                                    handlers: vec![(pidx, v)],
                                    core,
                                    level: true,
                                    ..Default::default()
                                });
                                li
                            }
                        }
                        _ => {
                            let li = host.lines.len() as u16;
                            host.lines.push(IrqLine {
                                handlers: vec![(pidx, v)],
                                core,
                                level: mode == IntMode::Intx,
                                ..Default::default()
                            });
                            li
                        }
                    };
                    lines.push(li);
                }
                let nvec = port.num_vectors();
                let link_bps =
                    super::config::parse_rate(&link_of(&name).rate).unwrap_or(1_000_000_000);
                let mut make = |vector: u16| -> Result<Box<dyn Moderator>, Error> {
                    match n.moderation.algo() {
                        Ok(a) => Ok(a.build(&build_ctx(c, link_bps, nvec as u16, vector))),
                        Err(py) => {
                            let field = format!("hosts[{hi}].nics[{ni}].moderation.class");
                            let Some(f) = factory.as_deref_mut() else {
                                return Err(Error::Config {
                                    field,
                                    message: format!(
                                        "{:?} is a Python moderator: run this scenario from Python (holdoff.run) so the class can be loaded",
                                        py.class
                                    ),
                                });
                            };
                            f(&py.class, &py.params, &name, vector)
                                .map_err(|message| Error::Config { field, message })
                        }
                    }
                };
                let m: Vec<Box<dyn Moderator>> =
                    (0..nvec as u16).map(&mut make).collect::<Result<_, _>>()?;
                host.ports.push(pidx);
                ports.push(port);
                port_names.push(name);
                port_host.push(hi as u16);
                port_vec_line.push(lines);
                moderators.push(m);
            }
            hosts.push(host);
        }
        let mut gens = Vec::new();
        let mut gen_egress = Vec::new();
        for g in &s.generators {
            let l = link_of(&g.name);
            let rate = super::config::parse_rate(&l.rate).expect("validated rate");
            gens.push(Generator::new(
                g,
                rate,
                end,
                rng_stream(s.seed, &format!("generator/{}", g.name)),
            ));
            gen_egress.push(LinkDir::new(BitsPerSec(rate), Nanos(l.propagation_ns)));
        }
        let mut peer = Vec::new();
        for name in s.endpoint_names() {
            let l = link_of(&name);
            let other = if l.a == name { &l.b } else { &l.a };
            peer.push(endpoint_index(s, other));
        }
        let mut apps: Vec<App> = Vec::new();
        let mut conns: Vec<TcpConn> = Vec::new();
        let mut servers: Vec<App> = Vec::new();
        let n_cfg_apps = s.apps.len() as u16;
        let host_idx = |name: &str| {
            s.hosts
                .iter()
                .position(|h| h.name == name)
                .expect("validated host") as u16
        };
        let port_idx = |local: &str| match endpoint_index(s, local) {
            Endpoint::Port(p) => p,
            Endpoint::Gen(_) => unreachable!("routes are between host ports"),
        };
        let tcp_cfg = |host: u16, nodelay: bool| {
            let t = &s.hosts[host as usize].tcp;
            TcpConfig {
                mss: t.mss_bytes,
                rcvbuf: t.rmem_default,
                adv_win_scale: t.adv_win_scale,
                sndbuf_init: t.wmem_default,
                sndbuf_max: t.wmem_max,
                nodelay,
                delack: Nanos(t.delack_us * 1000),
                rto_min: Nanos::from_ms(t.rto_min_ms),
                skb_truesize: t.skb_truesize_bytes,
                ..TcpConfig::default()
            }
        };
        // A TCP connection between `host` and `to` for the applications `app`.
        let new_conn =
            |conns: &mut Vec<TcpConn>, host: u16, to: &str, nodelay: bool, app: [u16; 2]| {
                let from = &s.hosts[host as usize].name;
                let (local, remote) = s.route(from, to).expect("validated route");
                let th = host_idx(to);
                let mut ep = [
                    TcpEndpoint::new(tcp_cfg(host, nodelay)),
                    TcpEndpoint::new(tcp_cfg(th, nodelay)),
                ];
                // The handshake tells each side the other's initial window.
                let (w0, w1) = (ep[0].initial_window(), ep[1].initial_window());
                ep[0].set_peer_window(w1);
                ep[1].set_peer_window(w0);
                conns.push(TcpConn {
                    ep,
                    host: [host, th],
                    port: [port_idx(&local), port_idx(&remote)],
                    app,
                    timer: [Timer::default(); 2],
                });
                (conns.len() - 1) as u16
            };
        for a in &s.apps {
            let hi = s
                .hosts
                .iter()
                .position(|h| h.name == a.host())
                .expect("validated host") as u16;
            let kind = match a {
                AppCfg::UdpSink { rcvbuf_bytes, .. } => {
                    hosts[hi as usize].udp_sink = Some(apps.len() as u16);
                    AppKind::UdpSink(UdpSink {
                        rcvbuf_bytes: *rcvbuf_bytes,
                        ..Default::default()
                    })
                }
                AppCfg::Ping {
                    to,
                    interval_us,
                    size_bytes,
                    count,
                    ..
                } => {
                    let (local, _) = s.route(a.host(), to).expect("validated route");
                    let Endpoint::Port(p) = endpoint_index(s, &local) else {
                        unreachable!("route is between host ports")
                    };
                    AppKind::Ping(Ping {
                        interval: Nanos(interval_us * 1000),
                        size_bytes: *size_bytes,
                        count: *count,
                        port: p,
                        ..Default::default()
                    })
                }
                AppCfg::Netpipe {
                    name,
                    to,
                    start_bytes,
                    end_bytes,
                    perturbation_bytes,
                    nodelay,
                    ..
                } => {
                    let th = host_idx(to);
                    let srv_app = n_cfg_apps + servers.len() as u16;
                    let conn = new_conn(&mut conns, hi, to, *nodelay, [apps.len() as u16, srv_app]);
                    servers.push(App {
                        name: format!("{name}.receiver"),
                        host: th,
                        core: 0,
                        kind: AppKind::NetpipeServer {
                            srv: NetpipeServer::new(conn),
                            client: apps.len() as u16,
                        },
                    });
                    let np = Netpipe::new(NetpipeConfig {
                        start_bytes: *start_bytes,
                        end_bytes: *end_bytes,
                        perturbation: *perturbation_bytes,
                        ..NetpipeConfig::default()
                    });
                    AppKind::NetpipeClient(NetpipeClient::new(conn, np))
                }
                AppCfg::Rpc {
                    name,
                    to,
                    request_bytes,
                    response_bytes,
                    think_us,
                    nodelay,
                    server_think_us,
                    server_busy_poll_usecs,
                    server_busy_poll_budget,
                    server_prefer_busy_poll,
                    ..
                } => {
                    let th = host_idx(to);
                    let srv_app = n_cfg_apps + servers.len() as u16;
                    let conn = new_conn(&mut conns, hi, to, *nodelay, [apps.len() as u16, srv_app]);
                    let mut srv = RpcServer::new(conn, *request_bytes, *response_bytes);
                    srv.think = Nanos::from_us(*server_think_us);
                    if *server_busy_poll_usecs > 0 {
                        srv.busy = Some(BusyPoll {
                            spin: Nanos::from_us(*server_busy_poll_usecs),
                            budget: *server_busy_poll_budget,
                            prefer: *server_prefer_busy_poll,
                        });
                    }
                    servers.push(App {
                        name: format!("{name}.server"),
                        host: th,
                        core: 0,
                        kind: AppKind::RpcServer(srv),
                    });
                    AppKind::RpcClient(RpcClient::new(
                        conn,
                        *request_bytes,
                        *response_bytes,
                        Nanos::from_us(*think_us),
                    ))
                }
                AppCfg::Iperf {
                    name,
                    to,
                    streams,
                    write_bytes,
                    nodelay,
                    start_us,
                    ..
                } => {
                    let th = host_idx(to);
                    let srv_app = n_cfg_apps + servers.len() as u16;
                    let cs: Vec<u16> = (0..*streams)
                        .map(|_| {
                            new_conn(&mut conns, hi, to, *nodelay, [apps.len() as u16, srv_app])
                        })
                        .collect();
                    servers.push(App {
                        name: format!("{name}.receiver"),
                        host: th,
                        core: 0,
                        kind: AppKind::IperfServer {
                            srv: IperfServer {
                                conns: cs.clone(),
                                read_bytes: 0,
                            },
                            started: SimTime(start_us * 1000),
                        },
                    });
                    AppKind::IperfClient(IperfClient {
                        conns: cs,
                        write_bytes: *write_bytes,
                        written: 0,
                    })
                }
            };
            apps.push(App {
                name: a.name().to_string(),
                host: hi,
                core: a.core() as u16,
                kind,
            });
        }
        apps.extend(servers);
        let netpipes_running = apps
            .iter()
            .filter(|a| matches!(a.kind, AppKind::NetpipeClient(_)))
            .count() as u32;
        let mut w = World {
            scenario: s.clone(),
            q: EventQueue::new(),
            end,
            hosts,
            ports,
            port_names,
            port_host,
            port_vec_line,
            moderators,
            gens,
            gen_names: s.generators.iter().map(|g| g.name.clone()).collect(),
            gen_egress,
            peer,
            sched: vec![AppSched::default(); apps.len()],
            spin: vec![None; apps.len()],
            busy_serve: vec![false; apps.len()],
            pending_dispatch: Vec::new(),
            qdisc: vec![VecDeque::new(); s.hosts.iter().map(|h| h.nics.len()).sum()],
            forward_to: {
                let mut f = Vec::new();
                for h in &s.hosts {
                    for n in &h.nics {
                        let out =
                            h.forward.iter().find(|r| r.from == n.name).map(
                                |r| match endpoint_index(s, &format!("{}.{}", h.name, r.to)) {
                                    Endpoint::Port(p) => p,
                                    Endpoint::Gen(_) => {
                                        unreachable!("forwarding is between host NICs")
                                    }
                                },
                            );
                        f.push(out);
                    }
                }
                f
            },
            traces: vec![Vec::new(); s.hosts.iter().map(|h| h.nics.len()).sum()],
            mod_prev: Vec::new(),
            napi_state: Vec::new(),
            apps,
            conns,
            netpipes_running,
            aborted: None,
            ledger: Ledger::default(),
            out: NicOut::default(),
            pending_asserts: Vec::new(),
            sout: StackOut::default(),
            ts: TimeSeries::default(),
            sample_interval: Nanos(s.sample_interval_us * 1000),
            prev: SamplePrev::default(),
            ts_cols: Vec::new(),
        };
        w.init();
        Ok(w)
    }

    fn init(&mut self) {
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
            let polling = self.hosts[self.port_host[p] as usize].driver == DriverKind::Polling;
            for v in 0..self.ports[p].num_vectors() as u16 {
                if !polling {
                    self.ports[p].write_ims(SimTime::ZERO, v, IMS_ENABLE_MASK, &mut self.out);
                }
            }
            self.flush(p as u16);
        }
        for (hi, host) in self.hosts.iter().enumerate() {
            if host.driver == DriverKind::Polling {
                let period = Nanos(1_000_000_000 / host.bsd.poll_hz as u64);
                self.q
                    .schedule(SimTime::ZERO + period, Ev::PollTick { host: hi as u16 });
            }
        }
        for g in 0..self.gens.len() {
            if let Some(t) = self.gens[g].first() {
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
                self.q.schedule(first, Ev::Watchdog { port: p as u16 });
            }
        }
        for (ai, a) in self.scenario.apps.iter().enumerate() {
            match a {
                AppCfg::Ping { start_us, .. }
                | AppCfg::Iperf { start_us, .. }
                | AppCfg::Rpc { start_us, .. }
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

    // ------------------------------------------------------------- run loop

    /// Run to the end of the scenario.
    pub fn run(&mut self) {
        while self.step().is_some() {}
        self.finish();
    }

    /// Process the next event due by the end of the run; returns its time.
    pub fn step(&mut self) -> Option<SimTime> {
        let (now, ev) = self.q.pop_until(self.end)?;
        self.handle(now, ev);
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

    fn handle(&mut self, now: SimTime, ev: Ev) {
        match ev {
            Ev::GenEmit { gen } => {
                let (pkt, next) = self.gens[gen as usize].emit(now);
                self.ledger.injected += 1;
                let dep = self.gen_egress[gen as usize].send(now, pkt.frame_bytes);
                let ep = self.peer[self.ports.len() + gen as usize];
                self.q.schedule(
                    dep.arrive,
                    Ev::Arrive {
                        ep: ep_index(ep, self.ports.len()),
                        pkt,
                    },
                );
                if let Some(t) = next {
                    // Never faster than the line: wait for the wire to be free.
                    let t = t.max(self.gen_egress[gen as usize].free_at());
                    if t <= self.end {
                        self.q.schedule(t, Ev::GenEmit { gen });
                    }
                }
            }
            Ev::Arrive { ep, pkt } => {
                let np = self.ports.len() as u16;
                // The frame left the peer's egress link.
                match self.peer[ep as usize] {
                    Endpoint::Port(p) => self.ports[p as usize].egress.arrived(),
                    Endpoint::Gen(g) => self.gen_egress[g as usize].arrived(),
                }
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
            Ev::Nic { port, ev } => {
                let p = &mut self.ports[port as usize];
                match ev {
                    NicEvent::RxDmaDone { queue, pkt } => {
                        p.rx_dma_done(now, queue, pkt, &mut self.out);
                        self.kick_busy_poller(now, port, queue);
                    }
                    NicEvent::TxDone { queue } => p.tx_done(now, queue, &mut self.out),
                    NicEvent::RxDelay { queue, gen } => {
                        p.rx_delay_expired(now, queue, gen, &mut self.out)
                    }
                    NicEvent::TxDelay { queue, gen } => {
                        p.tx_delay_expired(now, queue, gen, &mut self.out)
                    }
                    NicEvent::Throttle { vector, gen } => {
                        p.throttle_expired(now, vector, gen, &mut self.out)
                    }
                }
                self.flush(port);
            }
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
                if let AppKind::Ping(p) = &mut self.apps[app as usize].kind {
                    p.fired += 1;
                    let more = p.count.is_none_or(|c| p.fired < c);
                    p.send_due = true;
                    let next = now + p.interval;
                    if more && next < self.end {
                        self.q.schedule(next, Ev::AppTimer { app });
                    }
                }
                self.wake(now, app);
            }
            Ev::Wake { app } => {
                self.sched[app as usize].wake_pending = false;
                self.wake(now, app);
            }
            Ev::Watchdog { port } => self.watchdog(now, port),
            Ev::PollTick { host } => {
                let hh = &self.hosts[host as usize];
                let period = Nanos(1_000_000_000 / hh.bsd.poll_hz as u64);
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
            Ev::Sample => {
                self.sample(now);
                let next = now + self.sample_interval;
                if next <= self.end {
                    self.q.schedule(next, Ev::Sample);
                }
            }
        }
        self.process_asserts(now);
    }

    /// Drain a port's outputs: schedule its events and frames, book its drops,
    /// and queue its interrupt assertions.
    fn flush(&mut self, port: u16) {
        for (at, ev) in self.out.events.drain(..) {
            self.q.schedule(at, Ev::Nic { port, ev });
        }
        let ep = ep_index(self.peer[port as usize], self.ports.len());
        for (at, pkt) in self.out.frames.drain(..) {
            self.q.schedule(at, Ev::Arrive { ep, pkt });
        }
        for (r, _) in self.out.drops.drain(..) {
            self.ledger.drop(r);
        }
        for v in self.out.asserts.drain(..) {
            self.pending_asserts.push((port, v));
        }
    }

    fn process_asserts(&mut self, now: SimTime) {
        while let Some((port, v)) = self.pending_asserts.pop() {
            let h = self.port_host[port as usize];
            let li = self.port_vec_line[port as usize][v as usize];
            self.irq_raise(now, h, li);
        }
    }

    /// Put (port, vector) on its core's poll/task list and raise the softirq.
    fn schedule_poll(&mut self, now: SimTime, h: u16, port: u16, vector: u16) {
        let core = self.queue_poll(h, port, vector);
        if self.hosts[h as usize].cores[core as usize].is_idle() {
            self.dispatch(now, h, core);
        }
    }

    /// The core that polls (port, vector) in softirq (its IRQ line's core).
    fn napi_core(&self, port: u16, vector: u16) -> u16 {
        let h = self.port_host[port as usize];
        let li = self.port_vec_line[port as usize][vector as usize];
        self.hosts[h as usize].lines[li as usize].core
    }

    /// `napi_schedule` without dispatching: list the instance and raise the
    /// softirq on its core; returns the core.
    fn queue_poll(&mut self, h: u16, port: u16, vector: u16) -> u16 {
        let core = self.napi_core(port, vector);
        let host = &mut self.hosts[h as usize];
        let sq = &mut host.softirq[core as usize];
        if !sq.poll_list.contains(&(port, vector)) {
            sq.poll_list.push_back((port, vector));
        }
        host.cores[core as usize].softirq_pending = true;
        core
    }

    /// The instance is on its core's poll list (NAPI_STATE_SCHED by softirq).
    fn napi_listed(&self, port: u16, vector: u16) -> bool {
        let h = self.port_host[port as usize];
        let core = self.napi_core(port, vector);
        self.hosts[h as usize].softirq[core as usize]
            .poll_list
            .contains(&(port, vector))
    }

    /// Start (or restart) the NAPI hrtimer of (port, vector) to fire at `at`.
    fn arm_napi_timer(&mut self, at: SimTime, port: u16, vector: u16, kind: NapiTimerKind) {
        let st = &mut self.napi_state[port as usize][vector as usize];
        st.timer_kind = kind;
        let gen = st.timer.arm(at);
        self.q.schedule(at, Ev::NapiTimer { port, vector, gen });
    }

    /// `napi_complete_done` for a poll of (port, vector) that did `work`
    /// (less than its weight), decided and applied at `t`. Returns whether
    /// the caller must unmask the device IRQ.
    fn complete_poll(&mut self, t: SimTime, h: u16, port: u16, vector: u16, work: u32) -> bool {
        let napi = self.hosts[h as usize].napi;
        let st = &self.napi_state[port as usize][vector as usize];
        let out = driver::napi_complete_done(
            &napi,
            CompleteIn {
                work_done: work,
                gro_held: false,
                defer_count: st.defer_count,
                prefer_busy_poll: st.prefer_busy_poll,
                busy_polled: false,
            },
        );
        self.apply_completion(t, port, vector, out);
        out.unmask
    }

    /// Apply a `napi_complete_done` decision taken at `t`: defer count,
    /// PREFER_BUSY_POLL cleared on completion, hrtimer. The caller unmasks.
    fn apply_completion(&mut self, t: SimTime, port: u16, vector: u16, out: CompleteOut) {
        let st = &mut self.napi_state[port as usize][vector as usize];
        st.defer_count = out.defer_count;
        if out.completed {
            st.prefer_busy_poll = false;
        }
        if let Some(NapiTimerStart { kind, after }) = out.timer {
            self.arm_napi_timer(t + after, port, vector, kind);
        }
    }

    /// Counters of the NAPI instance of (port, vector).
    pub fn napi_stats(&self, port: usize, vector: usize) -> NapiStats {
        self.napi_state[port][vector].stats
    }

    /// Non-NAPI handler RX: take every ready packet, pay the driver's share,
    /// queue it to this CPU's backlog (or drop it when full), refill with one
    /// RDT write, and raise NET_RX. Returns (cost, packets taken).
    fn isr_rx_to_backlog(&mut self, h: u16, core: u16, port: u16, vector: u16) -> (Nanos, u32) {
        let host = &mut self.hosts[h as usize];
        let prof = host.profile;
        let max = host.napi.netdev_max_backlog as usize;
        let sq = &mut host.softirq[core as usize];
        let p = &mut self.ports[port as usize];
        let mut cost = Nanos::ZERO;
        let mut n = 0;
        for q in p.queues_of_vector(vector) {
            while let Some(pkt) = p.rx_take(q) {
                cost += prof.rx_driver_ns;
                if sq.backlog.len() < max {
                    sq.backlog.push_back((port, pkt));
                } else {
                    self.ledger.drop(DropReason::BacklogFull);
                }
                n += 1;
            }
            if p.rx_held(q) > 0 {
                p.rx_refill(q);
                cost += prof.mmio_write_ns;
            }
        }
        if !sq.backlog.is_empty() {
            if !sq.poll_list.contains(&BACKLOG) {
                sq.poll_list.push_back(BACKLOG);
            }
            host.cores[core as usize].softirq_pending = true;
        }
        (cost, n)
    }

    /// process_backlog: up to the NAPI weight of backlog packets through the
    /// stack (the protocol share of their cost).
    fn run_backlog(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        mut cost: Nanos,
        thread: bool,
    ) -> (Nanos, Option<Work>, EndAction) {
        let prof = self.hosts[h as usize].profile;
        let napi = self.hosts[h as usize].napi;
        cost += prof.poll_overhead_ns;
        let mut backlog =
            std::mem::take(&mut self.hosts[h as usize].softirq[core as usize].backlog);
        let mut work = 0u32;
        {
            let mut stack = Stack {
                host: h,
                prof,
                apps: &mut self.apps,
                sched: &self.sched,
                conns: &mut self.conns,
                udp_sink: self.hosts[h as usize].udp_sink,
                forward_to: &self.forward_to,
                ledger: &mut self.ledger,
                out: &mut self.sout,
            };
            while work < napi.weight {
                let Some((port, pkt)) = backlog.pop_front() else {
                    break;
                };
                cost += stack
                    .rx_cost(port, &pkt, prof)
                    .saturating_sub(prof.rx_driver_ns);
                cost += stack.deliver(now + cost, port, pkt);
                work += 1;
            }
        }
        let sq = &mut self.hosts[h as usize].softirq[core as usize];
        // Packets queued by handlers that ran meanwhile stay behind these.
        backlog.append(&mut sq.backlog);
        sq.backlog = backlog;
        sq.budget_left -= work as i64;
        if !sq.backlog.is_empty() {
            sq.poll_list.push_back(BACKLOG);
        }
        let end = now + cost;
        if sq.poll_list.is_empty() {
            sq.active = false;
            sq.restarts = 0;
            return (cost, None, EndAction::None);
        }
        if sq.budget_left > 0 && end - sq.started < Nanos::from_us(napi.budget_usecs as u64) {
            return (cost, Some(Work::Softirq { thread }), EndAction::None);
        }
        sq.time_squeeze += 1;
        sq.active = false;
        if !thread {
            if sq.restarts < MAX_SOFTIRQ_RESTART && end - sq.do_started < MAX_SOFTIRQ_TIME {
                sq.restarts += 1;
                return (cost, Some(Work::Softirq { thread: false }), EndAction::None);
            }
            sq.restarts = 0;
        }
        if !sq.ksoftirqd_queued {
            sq.ksoftirqd_queued = true;
            self.hosts[h as usize].cores[core as usize].queue_ksoftirqd();
        }
        (cost, None, EndAction::None)
    }

    /// Clean received packets of (port, vector) through the host's stack.
    #[allow(clippy::too_many_arguments)]
    fn stack_rx(
        &mut self,
        now: SimTime,
        h: u16,
        port: u16,
        vector: u16,
        max: u32,
        cost: Nanos,
        opts: driver::RxOpts,
    ) -> (Nanos, u32) {
        let prof = self.hosts[h as usize].profile;
        let mut stack = Stack {
            host: h,
            prof,
            apps: &mut self.apps,
            sched: &self.sched,
            conns: &mut self.conns,
            udp_sink: self.hosts[h as usize].udp_sink,
            forward_to: &self.forward_to,
            ledger: &mut self.ledger,
            out: &mut self.sout,
        };
        driver::clean_rx_with(
            &mut self.ports[port as usize],
            port,
            vector,
            max,
            now,
            cost,
            prof,
            opts,
            &mut stack,
        )
    }

    /// An interrupt message or a rising line reached the host.
    fn irq_raise(&mut self, now: SimTime, h: u16, li: u16) {
        let host = &mut self.hosts[h as usize];
        let line = &mut host.lines[li as usize];
        if line.apic_masked {
            // Masked in the I/O APIC: a level line is looked at again on unmask.
            return;
        }
        if line.in_service {
            line.replay = true;
            return;
        }
        if line.queued {
            return;
        }
        line.queued = true;
        let core = line.core;
        let c = &mut host.cores[core as usize];
        c.queue_irq(li);
        if c.is_idle() {
            self.dispatch(now, h, core);
        } else if c.should_preempt(Class::HardIrq) {
            c.account(now);
            c.preempt(now);
            self.dispatch(now, h, core);
        }
    }

    fn wake(&mut self, now: SimTime, app: u16) {
        if self.spin[app as usize].is_some() {
            // Busy polling: the loop notices the data at its next iteration.
            self.kick_spin(now, app);
            return;
        }
        let sc = &mut self.sched[app as usize];
        if sc.runnable || sc.waits == Some(Wait::Done) {
            return;
        }
        sc.runnable = true;
        let a = &self.apps[app as usize];
        let (h, core) = (a.host, a.core);
        let c = &mut self.hosts[h as usize].cores[core as usize];
        c.queue_app(app);
        if c.is_idle() {
            self.dispatch(now, h, core);
        }
    }

    /// If the core is idle, start (or resume) its highest-priority work.
    fn dispatch(&mut self, now: SimTime, h: u16, core: u16) {
        let c = &mut self.hosts[h as usize].cores[core as usize];
        if !c.is_idle() {
            return;
        }
        c.account(now);
        match c.pick(now) {
            Next::Idle => {}
            Next::Resumed => {
                let end = c.running.expect("resumed").end;
                let gen = c.gen;
                self.q.schedule(end, Ev::CoreDone { host: h, core, gen });
            }
            Next::Start(work) => {
                let (cost, next, on_end) = self.run_segment(now, h, core, work);
                let c = &mut self.hosts[h as usize].cores[core as usize];
                let gen = c.begin(now, work, cost, next, on_end);
                self.q
                    .schedule(now + cost, Ev::CoreDone { host: h, core, gen });
                self.post_segment(now);
            }
        }
    }

    fn end_action(&mut self, now: SimTime, h: u16, action: EndAction) {
        match action {
            EndAction::None => {}
            EndAction::Unmask { port, vector } => {
                self.ports[port as usize].write_ims(now, vector, IMS_ENABLE_MASK, &mut self.out);
                self.flush(port);
            }
            EndAction::ApicUnmask { irq } => {
                let host = &mut self.hosts[h as usize];
                let line = &mut host.lines[irq as usize];
                line.apic_masked = false;
                for &(p, _) in &line.handlers {
                    self.ports[p as usize].note(crate::nic::RegOp::ApicUnmask);
                }
                let high = line.level
                    && line
                        .handlers
                        .iter()
                        .any(|&(p, _)| self.ports[p as usize].line_high());
                if high {
                    self.irq_raise(now, h, irq);
                }
            }
            EndAction::IrqDone { irq } => {
                let host = &mut self.hosts[h as usize];
                let line = &mut host.lines[irq as usize];
                line.in_service = false;
                let again = if line.apic_masked {
                    false
                } else if line.level {
                    line.replay = false;
                    line.handlers
                        .iter()
                        .any(|&(p, _)| self.ports[p as usize].line_high())
                } else {
                    std::mem::take(&mut line.replay)
                };
                if again {
                    line.queued = true;
                    let core = line.core;
                    host.cores[core as usize].queue_irq(irq);
                }
            }
        }
    }

    /// Transmissions, wakes and TCP timers produced by a segment's stack work.
    fn post_segment(&mut self, now: SimTime) {
        while let Some((h, core)) = self.pending_dispatch.pop() {
            if self.hosts[h as usize].cores[core as usize].is_idle() {
                self.dispatch(now, h, core);
            }
        }
        if self.sout.is_empty() {
            return;
        }
        let mut sends = std::mem::take(&mut self.sout.sends);
        for &(t, port, pkt) in &sends {
            self.transmit(t, port, pkt);
        }
        sends.clear();
        self.sout.sends = sends;
        let mut wakes = std::mem::take(&mut self.sout.wakes);
        for &(t, app) in &wakes {
            let a = &mut self.sched[app as usize];
            if !a.runnable && !a.wake_pending {
                a.wake_pending = true;
                self.q.schedule(t, Ev::Wake { app });
            }
        }
        wakes.clear();
        self.sout.wakes = wakes;
        let mut timers = std::mem::take(&mut self.sout.timers);
        for &(conn, side) in &timers {
            let c = &mut self.conns[conn as usize];
            let want = c.ep[side as usize].next_timer();
            let t = &mut c.timer[side as usize];
            if t.deadline() != want {
                match want {
                    Some(at) => {
                        let gen = t.arm(at);
                        self.q.schedule(at, Ev::TcpTimer { conn, side, gen });
                    }
                    None => t.cancel(),
                }
            }
        }
        timers.clear();
        self.sout.timers = timers;
    }

    /// Hand a packet to the driver at `t`: onto the TX ring if the interface
    /// queue is empty and the ring has room, else into the queue, else drop.
    fn transmit(&mut self, t: SimTime, port: u16, pkt: Packet) {
        let q = &mut self.qdisc[port as usize];
        let p = &mut self.ports[port as usize];
        if q.is_empty() && p.tx_post(0, pkt) {
            p.tx_kick(t, 0, &mut self.out);
            self.flush(port);
        } else if (q.len() as u32) < self.hosts[self.port_host[port as usize] as usize].txqueuelen {
            q.push_back(pkt);
        } else {
            self.ledger.drop(DropReason::TxRingFull);
        }
    }

    /// After TX cleaning: move queued packets onto the ring (one TDT write).
    fn drain_qdisc(&mut self, t: SimTime, port: u16, prof: &HostProfile) -> Nanos {
        let q = &mut self.qdisc[port as usize];
        if q.is_empty() {
            return Nanos::ZERO;
        }
        let p = &mut self.ports[port as usize];
        let mut n = 0;
        while let Some(&pkt) = q.front() {
            if !p.tx_post(0, pkt) {
                break;
            }
            q.pop_front();
            n += 1;
        }
        if n == 0 {
            return Nanos::ZERO;
        }
        p.tx_kick(t, 0, &mut self.out);
        self.flush(port);
        prof.mmio_write_ns
    }

    /// If the algorithm of (port, vector) failed, stop the run now.
    fn check_failure(&mut self, now: SimTime, port: u16, vector: u16) -> bool {
        let m = &self.moderators[port as usize][vector as usize];
        let Some(why) = m.failure() else {
            return false;
        };
        if self.aborted.is_none() {
            let msg = format!(
                "moderation algorithm {:?} on {} vector {} failed at {} ns: {}",
                m.name(),
                self.port_names[port as usize],
                vector,
                now.as_ns(),
                why
            );
            self.aborted = Some((now, msg));
            self.end = self.end.min(now);
        }
        true
    }

    /// A per-interrupt or per-poll moderation call for one vector: sample
    /// its queues' counters since the previous call, let the algorithm
    /// decide, write the register. Returns the CPU cost of the write.
    fn moderate(
        &mut self,
        now: SimTime,
        port: u16,
        vector: u16,
        when: Invocation,
        prof: &HostProfile,
    ) -> Nanos {
        let m = &self.moderators[port as usize][vector as usize];
        if m.invocation() != when {
            return Nanos::ZERO;
        }
        let p = &self.ports[port as usize];
        let (rp, rb, tp, tb) = p.vector_counters(vector);
        let cur = ModPrev {
            rx_packets: rp,
            rx_bytes: rb,
            tx_packets: tp,
            tx_bytes: tb,
            interrupts: p.interrupts(vector),
        };
        let prev = std::mem::replace(&mut self.mod_prev[port as usize][vector as usize], cur);
        let sample = Sample {
            now,
            rx_packets: cur.rx_packets - prev.rx_packets,
            rx_bytes: cur.rx_bytes - prev.rx_bytes,
            tx_packets: cur.tx_packets - prev.tx_packets,
            tx_bytes: cur.tx_bytes - prev.tx_bytes,
            interrupts: cur.interrupts - prev.interrupts,
        };
        let m = &mut self.moderators[port as usize][vector as usize];
        let params = m.on_sample(&sample);
        if self.check_failure(now, port, vector) {
            return Nanos::ZERO;
        }
        let m = &mut self.moderators[port as usize][vector as usize];
        if let (Some(_), Some(row)) = (params, m.last_decision()) {
            let mut row = row.clone();
            row.values.push(("vector", vector as i64));
            self.traces[port as usize].push(row);
        }
        match params {
            Some(pr) => {
                self.ports[port as usize].apply_params(now, &pr, Some(vector), &mut self.out);
                self.flush(port);
                prof.mmio_write_ns
            }
            None => Nanos::ZERO,
        }
    }

    /// The driver watchdog of a port, if it has one: the algorithm's own
    /// period, or the Linux e1000 2-s watchdog (which runs in every
    /// `InterruptThrottleRate` mode for its software interrupt).
    fn watchdog_period(&self, port: usize) -> Option<(Nanos, bool)> {
        let m = &self.moderators[port][0];
        match m.invocation() {
            Invocation::Periodic { period, at_start } => Some((period, at_start)),
            _ if m.watchdog_ics_rxdmt0() => Some((crate::moderation::e1000_5x::WATCHDOG, true)),
            _ => None,
        }
    }

    /// A periodic moderation call: sample the port's counters, let the
    /// algorithm decide, write its registers.
    fn watchdog(&mut self, now: SimTime, port: u16) {
        let (period, _) = self
            .watchdog_period(port as usize)
            .expect("scheduled only with a watchdog");
        let periodic = matches!(
            self.moderators[port as usize][0].invocation(),
            Invocation::Periodic { .. }
        );
        if periodic {
            self.watchdog_sample(now, port);
            if self.aborted.is_some() {
                return;
            }
        }
        if self.moderators[port as usize][0].watchdog_ics_rxdmt0() {
            // "Cause software interrupt to ensure rx ring is cleaned".
            self.ports[port as usize].raise(now, 0, crate::nic::ICR_RXDMT0, &mut self.out);
        }
        self.flush(port);
        let next = now + period;
        if next <= self.end {
            self.q.schedule(next, Ev::Watchdog { port });
        }
    }

    fn watchdog_sample(&mut self, now: SimTime, port: u16) {
        let p = &self.ports[port as usize];
        let interrupts: u64 = (0..p.num_vectors() as u16).map(|v| p.interrupts(v)).sum();
        let cur = ModPrev {
            rx_packets: p.stats.rx_packets,
            rx_bytes: p.stats.rx_bytes,
            tx_packets: p.stats.tx_packets,
            tx_bytes: p.stats.tx_bytes,
            interrupts,
        };
        let prev = std::mem::replace(&mut self.mod_prev[port as usize][0], cur);
        let sample = Sample {
            now,
            rx_packets: cur.rx_packets - prev.rx_packets,
            rx_bytes: cur.rx_bytes - prev.rx_bytes,
            tx_packets: cur.tx_packets - prev.tx_packets,
            tx_bytes: cur.tx_bytes - prev.tx_bytes,
            interrupts: cur.interrupts - prev.interrupts,
        };
        let m = &mut self.moderators[port as usize][0];
        let params = m.on_sample(&sample);
        if self.check_failure(now, port, 0) {
            return;
        }
        let m = &mut self.moderators[port as usize][0];
        if let Some(row) = m.last_decision() {
            if params.is_some() {
                self.traces[port as usize].push(row.clone());
            }
        }
        if let Some(pr) = params {
            self.ports[port as usize].apply_params(now, &pr, None, &mut self.out);
        }
    }

    /// Execute one segment of `work`: apply its effects, return its cost,
    /// its continuation and what to do when it ends.
    fn run_segment(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        work: Work,
    ) -> (Nanos, Option<Work>, EndAction) {
        match work {
            Work::Irq { irq, handler, iter } => self.run_irq(now, h, core, irq, handler, iter),
            Work::Softirq { thread } => self.run_softirq(now, h, core, thread),
            Work::App { app } => self.run_app(now, app),
        }
    }

    fn run_irq(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        irq: u16,
        handler: u8,
        iter: u8,
    ) -> (Nanos, Option<Work>, EndAction) {
        let prof = self.hosts[h as usize].profile;
        let driver = self.hosts[h as usize].driver;
        if handler == 0 && iter == 0 {
            let line = &mut self.hosts[h as usize].lines[irq as usize];
            line.queued = false;
            line.in_service = true;
            line.delivered += 1;
        }
        let nh = self.hosts[h as usize].lines[irq as usize].handlers.len() as u8;
        let (port, vector) = self.hosts[h as usize].lines[irq as usize].handlers[handler as usize];
        let msix = self.ports[port as usize].cfg.mode == IntMode::Msix;
        let next_handler = |hnd: u8| -> (Option<Work>, EndAction) {
            if hnd + 1 < nh {
                (
                    Some(Work::Irq {
                        irq,
                        handler: hnd + 1,
                        iter: 0,
                    }),
                    EndAction::None,
                )
            } else {
                (None, EndAction::IrqDone { irq })
            }
        };
        if driver == DriverKind::FreebsdIthread {
            // The kernel masks the line in the I/O APIC and wakes the
            // interrupt thread, which runs every handler of the line.
            let cost = prof.irq_entry_exit_ns + prof.apic_mask_ns + prof.wakeup_ns;
            let handlers = self.hosts[h as usize].lines[irq as usize].handlers.clone();
            self.hosts[h as usize].lines[irq as usize].apic_masked = true;
            for &(p, _) in &handlers {
                self.ports[p as usize].note(crate::nic::RegOp::ApicMask);
            }
            for (p, v) in handlers {
                let sq = &mut self.hosts[h as usize].softirq[core as usize];
                if !sq.poll_list.contains(&(p, v)) {
                    sq.poll_list.push_back((p, v));
                }
            }
            self.hosts[h as usize].cores[core as usize].softirq_pending = true;
            return (cost, None, EndAction::IrqDone { irq });
        }
        if iter == 0 {
            let (mut cost, icr) = driver::isr_read_cause(
                &mut self.ports[port as usize],
                vector,
                msix,
                handler == 0,
                prof,
            );
            if icr == 0 {
                let (n, e) = next_handler(handler);
                return (cost, n, e);
            }
            cost += self.moderate(now + cost, port, vector, Invocation::PerInterrupt, prof);
            match driver {
                DriverKind::Napi => {
                    if !msix {
                        self.ports[port as usize].write_imc(vector, u32::MAX);
                        cost += prof.mmio_write_ns;
                    }
                    // napi_schedule fails while a busy-poll loop owns the
                    // instance (it only sets MISSED): the poller sees the packets.
                    if self.napi_state[port as usize][vector as usize]
                        .busy_owner
                        .is_none()
                    {
                        let s = &mut self.hosts[h as usize];
                        let sq = &mut s.softirq[core as usize];
                        if !sq.poll_list.contains(&(port, vector)) {
                            sq.poll_list.push_back((port, vector));
                        }
                        s.cores[core as usize].softirq_pending = true;
                    }
                    let (n, e) = next_handler(handler);
                    (cost, n, e)
                }
                DriverKind::LinuxIsr => (
                    cost,
                    Some(Work::Irq {
                        irq,
                        handler,
                        iter: 1,
                    }),
                    EndAction::None,
                ),
                DriverKind::FreebsdTaskqueue => {
                    // Fast filter: mask in the NIC, enqueue the task.
                    self.ports[port as usize].write_imc(vector, u32::MAX);
                    cost += prof.mmio_write_ns + prof.wakeup_ns;
                    let sq = &mut self.hosts[h as usize].softirq[core as usize];
                    if !sq.poll_list.contains(&(port, vector)) {
                        sq.poll_list.push_back((port, vector));
                    }
                    self.hosts[h as usize].cores[core as usize].softirq_pending = true;
                    let (n, e) = next_handler(handler);
                    (cost, n, e)
                }
                DriverKind::OpenbsdIntr => {
                    // One pass in interrupt context: TX clean, then RX, refill.
                    let (tx_cost, _) =
                        driver::clean_tx(&mut self.ports[port as usize], vector, prof);
                    cost += tx_cost;
                    cost += self.drain_qdisc(now + cost, port, prof);
                    let (cost, _) = self.stack_rx(
                        now,
                        h,
                        port,
                        vector,
                        u32::MAX,
                        cost,
                        driver::RxOpts::default(),
                    );
                    let (n, e) = next_handler(handler);
                    (cost, n, e)
                }
                DriverKind::Polling | DriverKind::FreebsdIthread => {
                    let (n, e) = next_handler(handler);
                    (cost, n, e)
                }
            }
        } else {
            // Linux e1000 non-NAPI loop pass: clean RX (no budget) into the
            // backlog, and TX.
            let (cost, rx) = self.isr_rx_to_backlog(h, core, port, vector);
            let (tx_cost, tx) = driver::clean_tx(&mut self.ports[port as usize], vector, prof);
            let cost = cost + tx_cost + self.drain_qdisc(now + cost + tx_cost, port, prof);
            if rx + tx > 0 && iter < driver::E1000_MAX_INTR {
                (
                    cost,
                    Some(Work::Irq {
                        irq,
                        handler,
                        iter: iter + 1,
                    }),
                    EndAction::None,
                )
            } else {
                let cost =
                    cost + self.moderate(now + cost, port, vector, Invocation::PerPoll, prof);
                let (n, e) = next_handler(handler);
                (cost, n, e)
            }
        }
    }

    fn run_softirq(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        thread: bool,
    ) -> (Nanos, Option<Work>, EndAction) {
        let host = &mut self.hosts[h as usize];
        let prof = host.profile;
        let napi = host.napi;
        let sq = &mut host.softirq[core as usize];
        let mut cost = Nanos::ZERO;
        if thread {
            sq.ksoftirqd_queued = false;
        }
        if !sq.active {
            sq.active = true;
            sq.budget_left = napi.budget as i64;
            sq.started = now;
            cost += prof.softirq_entry_ns;
            if thread {
                cost += prof.context_switch_ns;
            } else if sq.restarts == 0 {
                sq.do_started = now;
            }
        }
        let Some((port, vector)) = sq.poll_list.pop_front() else {
            sq.active = false;
            sq.restarts = 0;
            return (cost, None, EndAction::None);
        };
        let driver = self.hosts[h as usize].driver;
        if (port, vector) == BACKLOG {
            return self.run_backlog(now, h, core, cost, thread);
        }
        if driver != DriverKind::Napi && driver != DriverKind::LinuxIsr {
            return self.run_bsd_task(now, h, core, port, vector, cost, thread);
        }
        cost += prof.poll_overhead_ns;
        let (tx_cost, _) = driver::clean_tx(&mut self.ports[port as usize], vector, prof);
        cost += tx_cost;
        cost += self.drain_qdisc(now + cost, port, prof);
        let (mut cost, work) = self.stack_rx(
            now,
            h,
            port,
            vector,
            napi.weight,
            cost,
            driver::RxOpts::default(),
        );
        cost += self.moderate(now + cost, port, vector, Invocation::PerPoll, prof);
        let mut on_end = EndAction::None;
        if work < napi.weight {
            // napi_complete_done: with hard-IRQ deferral or IRQ suspension,
            // keep the IRQ masked and poll from the hrtimer; otherwise unmask
            // at the end of the poll.
            if self.complete_poll(now + cost, h, port, vector, work) {
                cost += prof.mmio_write_ns;
                on_end = EndAction::Unmask { port, vector };
            }
        }
        let host = &mut self.hosts[h as usize];
        let sq = &mut host.softirq[core as usize];
        sq.budget_left -= work as i64;
        if work >= napi.weight {
            sq.poll_list.push_back((port, vector));
        }
        let end = now + cost;
        if sq.poll_list.is_empty() {
            sq.active = false;
            sq.restarts = 0;
            return (cost, None, on_end);
        }
        if sq.budget_left > 0 && end - sq.started < Nanos::from_us(napi.budget_usecs as u64) {
            return (cost, Some(Work::Softirq { thread }), on_end);
        }
        // net_rx_action ran out of budget or time: time_squeeze, re-raise.
        sq.time_squeeze += 1;
        sq.active = false;
        if !thread {
            if sq.restarts < MAX_SOFTIRQ_RESTART && end - sq.do_started < MAX_SOFTIRQ_TIME {
                sq.restarts += 1;
                return (cost, Some(Work::Softirq { thread: false }), on_end);
            }
            sq.restarts = 0;
        }
        // Hand the rest to ksoftirqd, which shares the core with applications.
        if !sq.ksoftirqd_queued {
            sq.ksoftirqd_queued = true;
            host.cores[core as usize].queue_ksoftirqd();
        }
        (cost, None, on_end)
    }

    /// One pass of a BSD task (interrupt thread, taskqueue task) or of a
    /// polling tick for (port, vector); see `host::driver::DriverKind`.
    #[allow(clippy::too_many_arguments)]
    fn run_bsd_task(
        &mut self,
        now: SimTime,
        h: u16,
        core: u16,
        port: u16,
        vector: u16,
        mut cost: Nanos,
        thread: bool,
    ) -> (Nanos, Option<Work>, EndAction) {
        let host = &self.hosts[h as usize];
        let prof = host.profile;
        let driver = host.driver;
        let bsd = host.bsd;
        let mut on_end = EndAction::None;
        let mut again = false;
        match driver {
            DriverKind::FreebsdIthread => {
                // Driver lock, then read ICR; 0 ends the handler loop.
                cost += prof.lock_ns + prof.mmio_read_ns;
                let icr = self.ports[port as usize].read_icr(vector);
                if icr == 0 {
                    let li = self.port_vec_line[port as usize][vector as usize];
                    let sq = &self.hosts[h as usize].softirq[core as usize];
                    let others = sq
                        .poll_list
                        .iter()
                        .any(|&(p, v)| self.port_vec_line[p as usize][v as usize] == li);
                    if !others {
                        cost += prof.apic_mask_ns;
                        on_end = EndAction::ApicUnmask { irq: li };
                    }
                } else {
                    // No limit; RDT written and the lock dropped/re-taken per packet.
                    let opts = driver::RxOpts {
                        extra_ns: prof.lock_ns,
                        rdt_per_packet: true,
                    };
                    let (c, _) = self.stack_rx(now, h, port, vector, u32::MAX, cost, opts);
                    let (tx_cost, _) =
                        driver::clean_tx(&mut self.ports[port as usize], vector, prof);
                    cost = c + tx_cost;
                    cost += self.drain_qdisc(now + cost, port, prof);
                    again = true;
                }
            }
            DriverKind::FreebsdTaskqueue => {
                let limit = if bsd.rx_process_limit < 0 {
                    u32::MAX
                } else {
                    bsd.rx_process_limit as u32
                };
                cost += prof.poll_overhead_ns;
                let (c, _) =
                    self.stack_rx(now, h, port, vector, limit, cost, driver::RxOpts::default());
                cost = c + prof.lock_ns;
                let (tx_cost, _) = driver::clean_tx(&mut self.ports[port as usize], vector, prof);
                cost += tx_cost;
                cost += self.drain_qdisc(now + cost, port, prof);
                let p = &self.ports[port as usize];
                again = p.queues_of_vector(vector).any(|q| p.rx_ready(q) > 0);
                // The 2006 task re-enables interrupts after every pass, even
                // when it re-queued itself.
                cost += prof.mmio_write_ns;
                on_end = EndAction::Unmask { port, vector };
            }
            DriverKind::Polling => {
                cost += prof.poll_overhead_ns;
                let (c, _) = self.stack_rx(
                    now,
                    h,
                    port,
                    vector,
                    bsd.poll_burst,
                    cost,
                    driver::RxOpts::default(),
                );
                let (tx_cost, _) = driver::clean_tx(&mut self.ports[port as usize], vector, prof);
                cost = c + tx_cost;
                cost += self.drain_qdisc(now + cost, port, prof);
            }
            DriverKind::Napi | DriverKind::LinuxIsr | DriverKind::OpenbsdIntr => {}
        }
        let sq = &mut self.hosts[h as usize].softirq[core as usize];
        if again {
            sq.poll_list.push_back((port, vector));
        }
        if sq.poll_list.is_empty() {
            sq.active = false;
            return (cost, None, on_end);
        }
        (cost, Some(Work::Softirq { thread }), on_end)
    }

    fn run_app(&mut self, now: SimTime, app: u16) -> (Nanos, Option<Work>, EndAction) {
        if let AppKind::RpcServer(RpcServer { busy: Some(bp), .. }) = self.apps[app as usize].kind {
            return self.run_busy_server(now, app, bp);
        }
        let h = self.apps[app as usize].host;
        let prof = self.hosts[h as usize].profile;
        self.sched[app as usize].runnable = false;
        self.sched[app as usize].waits = None;
        let cost = prof.context_switch_ns;
        // The NetPIPE peer echoes the message size its client is sending now.
        let np_bytes = match &self.apps[app as usize].kind {
            AppKind::NetpipeServer { client, .. } => match &self.apps[*client as usize].kind {
                AppKind::NetpipeClient(c) => c.current_bytes(),
                _ => 0,
            },
            _ => 0,
        };
        let mut io = TcpCtx {
            prof,
            sched: &self.sched,
            conns: &mut self.conns,
            ledger: &mut self.ledger,
            out: &mut self.sout,
        };
        let (cost, wait) = match &mut self.apps[app as usize].kind {
            AppKind::UdpSink(s) => {
                let mut cost = cost;
                while let Some(p) = s.queue.pop_front() {
                    cost += prof.copy_ns(p.frame_bytes);
                    s.queued_bytes -= p.frame_bytes;
                    s.received += 1;
                    s.rx_bytes += p.frame_bytes as u64;
                    s.latency.record(((now + cost) - p.created).as_ns());
                    io.ledger.delivered += 1;
                }
                (cost, None)
            }
            AppKind::Ping(p) => {
                let mut cost = cost;
                if p.send_due {
                    p.send_due = false;
                    cost += prof.tx_packet_ns + prof.copy_ns(p.size_bytes) + prof.mmio_write_ns;
                    let pkt = Packet {
                        created: now,
                        frame_bytes: p.frame_bytes(),
                        seq: p.sent as u32,
                        ack: 0,
                        wnd: 0,
                        flow: app,
                        kind: PktKind::IcmpEchoRequest,
                    };
                    p.sent += 1;
                    io.ledger.injected += 1;
                    io.out.sends.push((now + cost, p.port, pkt));
                }
                while let Some(r) = p.replies.pop_front() {
                    cost += prof.copy_ns(p.size_bytes);
                    p.received += 1;
                    p.rtt.record(((now + cost) - r.created).as_ns());
                    io.ledger.delivered += 1;
                }
                (cost, None)
            }
            AppKind::NetpipeClient(c) => {
                let (cost, w) = c.run(now, cost, prof, &mut io);
                if w == Wait::Done && self.netpipes_running > 0 {
                    self.netpipes_running -= 1;
                    if self.netpipes_running == 0 {
                        // NetPIPE finished: the run ends when this slice does.
                        self.end = self.end.min(now + cost);
                    }
                }
                (cost, Some(w))
            }
            AppKind::NetpipeServer { srv, .. } => {
                let (cost, w) = srv.run(now, cost, prof, np_bytes, &mut io);
                (cost, Some(w))
            }
            AppKind::IperfClient(c) => {
                let (cost, w) = c.run(now, cost, prof, &mut io);
                (cost, Some(w))
            }
            AppKind::IperfServer { srv, .. } => {
                let (cost, w) = srv.run(now, cost, prof, &mut io);
                (cost, Some(w))
            }
            AppKind::RpcServer(srv) => {
                let (cost, w) = srv.run(now, cost, prof, &mut io);
                (cost, Some(w))
            }
            AppKind::RpcClient(c) => {
                let (cost, w, sleep) = c.run(now, cost, prof, &mut io);
                if let Some(t) = sleep {
                    if t <= self.end {
                        self.q.schedule(t, Ev::AppTimer { app });
                    }
                    // Sleeping until the timer, not waiting on the socket.
                    self.sched[app as usize].waits = None;
                    return (cost, None, EndAction::None);
                }
                (cost, Some(w))
            }
        };
        self.sched[app as usize].waits = wait;
        (cost, None, EndAction::None)
    }

    // ------------------------------------------------- busy polling (epoll)

    /// A busy-polling rpc server's slice: a busy-poll step, the end of a
    /// busy-poll loop, or serving requests and then entering a new loop
    /// where it would otherwise sleep (algorithms.md §10).
    fn run_busy_server(
        &mut self,
        now: SimTime,
        app: u16,
        bp: BusyPoll,
    ) -> (Nanos, Option<Work>, EndAction) {
        let a = app as usize;
        let h = self.apps[a].host;
        let prof = self.hosts[h as usize].profile;
        self.sched[a].runnable = false;
        self.sched[a].waits = None;
        let mut cost = Nanos::ZERO;
        if std::mem::take(&mut self.busy_serve[a]) {
            // The busy-poll loop of this slice's predecessor found events.
        } else if self.spin[a].is_some() {
            match self.busy_step(now, app, bp, &mut cost) {
                BusyStep::Spin => {
                    self.sched[a].waits = Some(Wait::Readable);
                    return (cost, Some(Work::App { app }), EndAction::None);
                }
                BusyStep::Found | BusyStep::Timeout => {
                    let (found, on_end) = self.busy_loop_end(now, app, bp, &mut cost);
                    if !found {
                        // ep_poll goes to sleep until the data wakes it.
                        self.sched[a].waits = Some(Wait::Readable);
                        return (cost, None, on_end);
                    }
                    self.busy_serve[a] = true;
                    return (cost, Some(Work::App { app }), on_end);
                }
            }
        } else {
            cost = prof.context_switch_ns;
            // Woken from a sleep: epoll_wait returns events, which suspends
            // IRQs as after a busy loop.
            if self.server_readable(app) {
                self.epoll_events(now + cost, app, bp, true);
            }
        }
        let mut io = TcpCtx {
            prof,
            sched: &self.sched,
            conns: &mut self.conns,
            ledger: &mut self.ledger,
            out: &mut self.sout,
        };
        let AppKind::RpcServer(srv) = &mut self.apps[a].kind else {
            unreachable!("busy polling is an rpc server option")
        };
        let (cost, w) = srv.run(now, cost, prof, &mut io);
        if w != Wait::Readable {
            self.sched[a].waits = Some(w);
            return (cost, None, EndAction::None);
        }
        // epoll_wait finds no events: busy-poll instead of sleeping.
        let t = now + cost;
        self.spin[a] = Some(Spin {
            napi: self.server_napi(app),
            deadline: t + bp.spin,
            since: t,
            iter: prof.poll_overhead_ns.max(Nanos(1)),
            kicked: false,
        });
        self.sched[a].waits = Some(Wait::Readable);
        (cost, Some(Work::App { app }), EndAction::None)
    }

    /// One step of `napi_busy_loop` at `now + *cost`: take the instance
    /// (unless softirq holds it), poll it once with the busy-poll budget,
    /// then stop on events or timeout, or spin until the timeout (cut short
    /// by `kick_spin`).
    fn busy_step(&mut self, now: SimTime, app: u16, bp: BusyPoll, cost: &mut Nanos) -> BusyStep {
        let a = app as usize;
        let mut sp = self.spin[a].expect("a busy-poll loop is running");
        let (port, vector) = sp.napi;
        let (p, v) = (port as usize, vector as usize);
        let t = now + *cost;
        if self.napi_state[p][v].busy_owner != Some(app) {
            if self.napi_listed(port, vector) || self.napi_state[p][v].busy_owner.is_some() {
                // SCHED is held elsewhere: napi_busy_loop only marks
                // PREFER_BUSY_POLL and tries again after one iteration.
                if bp.prefer {
                    self.napi_state[p][v].prefer_busy_poll = true;
                }
                if t >= sp.deadline {
                    return BusyStep::Timeout;
                }
                sp.since = t;
                sp.kicked = false;
                *cost += sp.iter;
                self.spin[a] = Some(sp);
                return BusyStep::Spin;
            }
            let st = &mut self.napi_state[p][v];
            st.busy_owner = Some(app);
            if bp.prefer {
                st.prefer_busy_poll = true;
            }
        }
        if sp.kicked || t < sp.deadline {
            // The driver poll; napi_complete_done returns false (busy-owned).
            let h = self.apps[a].host;
            self.busy_poll_once(now, h, port, vector, bp.budget, cost);
        }
        if self.server_readable(app) {
            return BusyStep::Found;
        }
        let t = now + *cost;
        if t >= sp.deadline {
            return BusyStep::Timeout;
        }
        sp.since = t;
        sp.kicked = false;
        *cost += sp.deadline - t;
        self.spin[a] = Some(sp);
        BusyStep::Spin
    }

    /// The driver's NAPI poll called from process context: TX clean, up to
    /// `budget` RX packets through the stack (same costs as a softirq poll).
    /// Returns the RX packets cleaned.
    fn busy_poll_once(
        &mut self,
        now: SimTime,
        h: u16,
        port: u16,
        vector: u16,
        budget: u32,
        cost: &mut Nanos,
    ) -> u32 {
        let prof = self.hosts[h as usize].profile;
        *cost += prof.poll_overhead_ns;
        let (tx_cost, _) = driver::clean_tx(&mut self.ports[port as usize], vector, prof);
        *cost += tx_cost;
        *cost += self.drain_qdisc(now + *cost, port, prof);
        let (c, work) = self.stack_rx(
            now,
            h,
            port,
            vector,
            budget,
            *cost,
            driver::RxOpts::default(),
        );
        *cost = c + self.moderate(now + c, port, vector, Invocation::PerPoll, prof);
        let st = &mut self.napi_state[port as usize][vector as usize];
        st.stats.busy_polls += 1;
        st.stats.busy_poll_packets += work as u64;
        work
    }

    /// End of a busy-poll loop: `busy_poll_stop` (if the loop owned the
    /// instance) with its final poll and completion, then epoll's return:
    /// events found suspend IRQs, none resume them. Returns (events found,
    /// the IMS write to do at the end of the segment).
    fn busy_loop_end(
        &mut self,
        now: SimTime,
        app: u16,
        bp: BusyPoll,
        cost: &mut Nanos,
    ) -> (bool, EndAction) {
        let a = app as usize;
        let sp = self.spin[a].take().expect("a busy-poll loop is running");
        let (port, vector) = sp.napi;
        let (p, v) = (port as usize, vector as usize);
        let h = self.apps[a].host;
        let prof = self.hosts[h as usize].profile;
        let napi = self.hosts[h as usize].napi;
        let mut on_end = EndAction::None;
        if self.napi_state[p][v].busy_owner == Some(app) {
            let st = &mut self.napi_state[p][v];
            st.busy_owner = None;
            let stop = driver::busy_poll_stop(&napi, bp.prefer, st.defer_count);
            st.defer_count = stop.defer_count;
            if let Some(t) = stop.timer {
                self.arm_napi_timer(now + *cost + t.after, port, vector, t.kind);
            }
            // "rc = napi->poll(napi, budget)": one more poll, no longer
            // busy-owned, so its completion decides about the IRQ.
            let work = self.busy_poll_once(now, h, port, vector, bp.budget, cost);
            if work < bp.budget {
                if self.complete_poll(now + *cost, h, port, vector, work) {
                    *cost += prof.mmio_write_ns;
                    on_end = EndAction::Unmask { port, vector };
                }
            } else if !stop.skip_schedule {
                let core = self.queue_poll(h, port, vector);
                self.pending_dispatch.push((h, core));
            }
        }
        let found = self.server_readable(app);
        self.epoll_events(now + *cost, app, bp, found);
        (found, on_end)
    }

    /// epoll_wait returns at `t` (with events, or about to sleep without):
    /// napi_suspend_irqs / napi_resume_irqs on the server's instance.
    fn epoll_events(&mut self, t: SimTime, app: u16, bp: BusyPoll, found: bool) {
        let (port, vector) = self.server_napi(app);
        let h = self.apps[app as usize].host;
        let napi = self.hosts[h as usize].napi;
        match driver::epoll_irq_action(&napi, bp.prefer, found) {
            EpollIrq::Nothing => {}
            EpollIrq::Suspend(after) => {
                self.napi_state[port as usize][vector as usize]
                    .stats
                    .irq_suspends += 1;
                self.arm_napi_timer(t + after, port, vector, NapiTimerKind::Suspend);
            }
            EpollIrq::Resume => {
                self.napi_state[port as usize][vector as usize]
                    .stats
                    .irq_resumes += 1;
                let core = self.queue_poll(h, port, vector);
                self.pending_dispatch.push((h, core));
            }
        }
    }

    /// A packet landed on `queue` of `port`: a busy-poll loop owning its
    /// instance polls at its next iteration.
    fn kick_busy_poller(&mut self, now: SimTime, port: u16, queue: u16) {
        let v = self.ports[port as usize].vector_of_queue(queue);
        if let Some(app) = self.napi_state[port as usize][v as usize].busy_owner {
            if self.ports[port as usize].rx_ready(queue) > 0 {
                self.kick_spin(now, app);
            }
        }
    }

    /// End the spin of `app` at the first iteration boundary at or after
    /// `now` (iterations of `iter` counted from the last poll).
    fn kick_spin(&mut self, now: SimTime, app: u16) {
        let a = app as usize;
        let Some(sp) = self.spin[a].as_mut() else {
            return;
        };
        if sp.kicked {
            return;
        }
        sp.kicked = true;
        let at = if now <= sp.since {
            sp.since
        } else {
            let k = (now - sp.since).as_ns().div_ceil(sp.iter.as_ns());
            sp.since + Nanos(k * sp.iter.as_ns())
        }
        .min(sp.deadline);
        let iter = sp.iter;
        let (h, core) = (self.apps[a].host, self.apps[a].core);
        let c = &mut self.hosts[h as usize].cores[core as usize];
        if let Some(gen) = c.shorten(Work::App { app }, at.max(now), iter) {
            self.q
                .schedule(at.max(now), Ev::CoreDone { host: h, core, gen });
        }
    }

    /// Data waits in the rpc server's socket.
    fn server_readable(&self, app: u16) -> bool {
        let AppKind::RpcServer(srv) = &self.apps[app as usize].kind else {
            return false;
        };
        self.conns[srv.conn as usize].ep[1].readable() > 0
    }

    /// The NAPI instance (port, vector) the rpc server's connection arrives on.
    fn server_napi(&self, app: u16) -> (u16, u16) {
        let AppKind::RpcServer(srv) = &self.apps[app as usize].kind else {
            unreachable!("busy polling is an rpc server option")
        };
        let port = self.conns[srv.conn as usize].port[1];
        let p = &self.ports[port as usize];
        (port, p.vector_of_queue(p.rx_queue_of_flow(srv.conn)))
    }

    // ------------------------------------------------------------- outputs

    fn init_series(&mut self) {
        let mut cols = Vec::new();
        for (pi, p) in self.ports.iter().enumerate() {
            let name = &self.port_names[pi];
            for v in 0..p.num_vectors() {
                cols.push(self.ts.add(format!("{name}.v{v}/interrupts_per_s")));
                cols.push(self.ts.add(format!("{name}.v{v}/throttle_interval_ns")));
            }
            cols.push(self.ts.add(format!("{name}/rx_bps")));
            cols.push(self.ts.add(format!("{name}/tx_bps")));
            cols.push(self.ts.add(format!("{name}/rx_ring_filled")));
        }
        for h in &self.hosts {
            for class in ["hardirq", "softirq", "app"] {
                cols.push(self.ts.add(format!("{}/cpu_{class}", h.name)));
            }
        }
        self.ts_cols = cols;
        self.prev = SamplePrev {
            vec_interrupts: self
                .ports
                .iter()
                .map(|p| vec![0; p.num_vectors()])
                .collect(),
            port_rx_bytes: vec![0; self.ports.len()],
            port_tx_bytes: vec![0; self.ports.len()],
            host_busy: vec![[0; 3]; self.hosts.len()],
        };
    }

    fn sample(&mut self, now: SimTime) {
        let dt_s = self.sample_interval.as_ns() as f64 / 1e9;
        self.ts.push_time(now.as_ns());
        let mut col = 0;
        for (pi, p) in self.ports.iter().enumerate() {
            for v in 0..p.num_vectors() {
                let n = p.interrupts(v as u16);
                let d = n - self.prev.vec_interrupts[pi][v];
                self.prev.vec_interrupts[pi][v] = n;
                self.ts.push(self.ts_cols[col], d as f64 / dt_s);
                col += 1;
                self.ts
                    .push(self.ts_cols[col], p.throttle(v as u16).0.as_ns() as f64);
                col += 1;
            }
            let rx = p.stats.rx_bytes;
            let tx = p.stats.tx_bytes;
            self.ts.push(
                self.ts_cols[col],
                (rx - self.prev.port_rx_bytes[pi]) as f64 * 8.0 / dt_s,
            );
            col += 1;
            self.ts.push(
                self.ts_cols[col],
                (tx - self.prev.port_tx_bytes[pi]) as f64 * 8.0 / dt_s,
            );
            col += 1;
            self.prev.port_rx_bytes[pi] = rx;
            self.prev.port_tx_bytes[pi] = tx;
            let filled: u32 = (0..p.num_queues() as u16).map(|q| p.rx_ready(q)).sum();
            self.ts.push(self.ts_cols[col], filled as f64);
            col += 1;
        }
        for (hi, h) in self.hosts.iter_mut().enumerate() {
            let mut busy = [0u64; 3];
            for c in &mut h.cores {
                c.account(now);
                for (b, x) in busy.iter_mut().zip(c.busy_ns) {
                    *b += x;
                }
            }
            let cap = self.sample_interval.as_ns() as f64 * h.cores.len() as f64;
            for (b, prev) in busy.iter().zip(self.prev.host_busy[hi]) {
                self.ts.push(self.ts_cols[col], (b - prev) as f64 / cap);
                col += 1;
            }
            self.prev.host_busy[hi] = busy;
        }
    }

    /// Packets present somewhere in the model (not delivered, not dropped).
    pub fn in_flight(&self) -> u64 {
        let wire: u64 = self.ports.iter().map(|p| p.egress.in_flight).sum::<u64>()
            + self.gen_egress.iter().map(|l| l.in_flight).sum::<u64>();
        let nic: u64 = self.ports.iter().map(|p| p.packets_held()).sum::<u64>()
            + self.qdisc.iter().map(|q| q.len() as u64).sum::<u64>();
        let apps: u64 = self.apps.iter().map(|a| a.packets_held()).sum::<u64>()
            + self
                .hosts
                .iter()
                .flat_map(|h| h.softirq.iter())
                .map(|s| s.backlog.len() as u64)
                .sum::<u64>();
        // Replies created by a segment are posted before the segment's event returns.
        wire + nic + apps
    }

    /// Times net_rx_action ran out of budget or time, per host.
    pub fn time_squeeze(&self, h: usize) -> u64 {
        self.hosts[h].softirq.iter().map(|s| s.time_squeeze).sum()
    }
}

fn ep_index(ep: Endpoint, nports: usize) -> u16 {
    match ep {
        Endpoint::Port(p) => p,
        Endpoint::Gen(g) => nports as u16 + g,
    }
}
