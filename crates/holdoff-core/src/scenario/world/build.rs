//! Building a world: hosts, NIC ports and their IRQ lines, moderators,
//! generators, links, applications and TCP connections, from a validated
//! scenario. Endpoint, link and route tables are computed once
//! (`Topology`); the interface-up sequence is `World::init` (in `mod`).
//!
//! Units: times [ns].

use super::moderation::{build_moderator, ExternalFactory};
use super::napi::{Netisr, SoftirqState};
use super::series::SamplePrev;
use super::{Endpoint, Host, World};
use crate::apps::netpipe::{Netpipe, NetpipeConfig};
use crate::apps::replay::Replay;
use crate::apps::rpc_open::{
    Arrivals, RpcOpenClient, RpcOpenParams, RpcOpenServer, Service, Sizes,
};
use crate::apps::tcp_apps::{
    BusyPoll, IperfClient, IperfServer, NetpipeClient, NetpipeServer, RpcClient, RpcServer,
};
use crate::apps::{App, AppKind, AppSched, Generator, Ping, UdpSink};
use crate::engine::{rng_stream, EventQueue, Timer};
use crate::error::Error;
use crate::host::drivers;
use crate::host::profile::{self};
use crate::host::{Core, IrqLine};
use crate::metrics::{Ledger, TimeSeries};
use crate::moderation::Moderator;
use crate::nic::chip::{self, LegacyItr};
use crate::nic::{IntMode, NicOut, NicPort, PortConfig};
use crate::scenario::config::traffic::{ArrivalsCfg, ServiceCfg};
use crate::scenario::config::{
    parse_rate, traffic, AppCfg, IntModeCfg, LegacyItrCfg, LinkCfg, Scenario,
};
use crate::scenario::netstack::{StackOut, TcpConn};
use crate::stack::tcp::{TcpConfig, TcpEndpoint};
use crate::units::{BitsPerSec, Nanos, SimTime};
use crate::wire::LinkDir;
use rand::RngExt;

/// Reference-clock tolerance of a NIC [parts per billion]: Intel's LAN
/// design guides require the 25 MHz reference within +-50 ppm for IEEE 802.3
/// and recommend +-30 ppm (82562EZ/82547GI Dual Footprint Design Guide,
/// appendix A "Measuring LAN Reference Frequency").
pub const NIC_CLOCK_PPB: i32 = 30_000;
use std::collections::{BTreeMap, VecDeque};

/// Endpoint, link and route tables of a scenario, computed once so that
/// building never searches the configuration again.
struct Topology<'s> {
    /// The endpoint of every "host.nic" and generator name.
    index: BTreeMap<String, Endpoint>,
    /// The link of every endpoint (ports first, then generators).
    link: Vec<&'s LinkCfg>,
    /// Host index by name.
    host: BTreeMap<&'s str, u16>,
    /// (from host, to host) -> (local port, remote port): the first link
    /// between the two hosts, in declaration order.
    route: BTreeMap<(&'s str, &'s str), (u16, u16)>,
}

impl<'s> Topology<'s> {
    fn new(s: &'s Scenario) -> Self {
        let names = s.endpoint_names();
        let nports: usize = s.hosts.iter().map(|h| h.nics.len()).sum();
        let index: BTreeMap<String, Endpoint> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let ep = if i < nports {
                    Endpoint::Port(i as u16)
                } else {
                    Endpoint::Gen((i - nports) as u16)
                };
                (n.clone(), ep)
            })
            .collect();
        let link = names
            .iter()
            .map(|ep| {
                s.links
                    .iter()
                    .find(|l| &l.a == ep || &l.b == ep)
                    .expect("validated: every endpoint linked")
            })
            .collect();
        let host = s
            .hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.as_str(), i as u16))
            .collect();
        let mut route = BTreeMap::new();
        for l in &s.links {
            for (x, y) in [(&l.a, &l.b), (&l.b, &l.a)] {
                let (Some((hx, _)), Some((hy, _))) = (x.split_once('.'), y.split_once('.')) else {
                    continue;
                };
                if let (Some(&Endpoint::Port(px)), Some(&Endpoint::Port(py))) =
                    (index.get(x.as_str()), index.get(y.as_str()))
                {
                    if hx != hy {
                        route.entry((hx, hy)).or_insert((px, py));
                    }
                }
            }
        }
        Topology {
            index,
            link,
            host,
            route,
        }
    }

    fn endpoint(&self, name: &str) -> Endpoint {
        *self.index.get(name).expect("validated endpoint")
    }

    fn port(&self, name: &str) -> u16 {
        match self.endpoint(name) {
            Endpoint::Port(p) => p,
            Endpoint::Gen(_) => unreachable!("forwarding is between host NICs"),
        }
    }

    fn host(&self, name: &str) -> u16 {
        *self.host.get(name).expect("validated host")
    }

    /// (local port, remote port) from host `from` to host `to`.
    fn route(&self, from: &str, to: &str) -> (u16, u16) {
        *self.route.get(&(from, to)).expect("validated route")
    }

    /// The egress link direction of endpoint `ep`.
    fn egress(&self, ep: usize) -> LinkDir {
        let l = self.link[ep];
        LinkDir::new(
            BitsPerSec(parse_rate(&l.rate).expect("validated rate")),
            Nanos(l.propagation_ns),
        )
    }
}

impl World {
    /// Build a world from a validated scenario.
    pub fn build(s: &Scenario, mut factory: Option<&mut ExternalFactory>) -> Result<World, Error> {
        let end = SimTime(s.duration_ms * 1_000_000);
        let topo = Topology::new(s);
        let mut hosts = Vec::new();
        let mut ports = Vec::new();
        let mut port_names = Vec::new();
        let mut port_host = Vec::new();
        let mut port_vec_line = Vec::new();
        let mut moderators = Vec::new();
        for (hi, h) in s.hosts.iter().enumerate() {
            // Overrides are costs at the profile's nominal clock; the P-state
            // (cpu_mhz) then scales them with the rest of the profile.
            let base = profile::by_name(&h.profile)
                .expect("validated profile")
                .with_overrides(&h.profile_overrides)
                .expect("validated overrides");
            let prof = match h.cpu_mhz {
                Some(mhz) => base.at_clock(mhz),
                None => base,
            };
            let mut host = Host {
                name: h.name.clone(),
                profile: prof,
                driver: h.driver,
                arch: drivers::arch(h.driver),
                napi: h.napi,
                bsd: h.bsd,
                cores: (0..h.cores).map(|_| Core::new()).collect(),
                softirq: (0..h.cores).map(|_| SoftirqState::default()).collect(),
                lines: Vec::new(),
                ports: Vec::new(),
                udp_sink: None,
                txqueuelen: h.txqueuelen,
                netisr: Netisr {
                    queued: drivers::arch(h.driver).locks()
                        && !h.bsd.ip_fastforwarding
                        && !h.bsd.isr_direct,
                    maxlen: h.bsd.ip_intr_queue_maxlen,
                    ..Netisr::default()
                },
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
                let egress = topo.egress(ports.len());
                let cfg = PortConfig {
                    rx_ring: n.rx_ring,
                    tx_ring: n.tx_ring,
                    queues: n.queues,
                    mode,
                    set_ide: n.set_ide,
                    rdmts_shift: n.rdmts_divisor.trailing_zeros(),
                    legacy_itr: match n.legacy_itr {
                        None => c.legacy_itr,
                        Some(LegacyItrCfg::Honoured) => LegacyItr::Honoured,
                        Some(LegacyItrCfg::Ignored) => LegacyItr::Ignored,
                    },
                };
                let mut port = NicPort::new(c, cfg, egress);
                // Each NIC counts its throttle on its own 25 MHz reference
                // crystal: an error drawn once, uniform within Intel's
                // recommended +-30 ppm (nic/mod.rs, "Clock").
                let mut clock = rng_stream(s.seed, &format!("nic-clock/{name}"));
                port.set_clock_error_ppb(clock.random_range(-NIC_CLOCK_PPB..=NIC_CLOCK_PPB));
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
                let m: Vec<Box<dyn Moderator>> = (0..nvec as u16)
                    .map(|v| {
                        build_moderator(
                            n,
                            c,
                            &topo.link[pidx as usize].rate,
                            &name,
                            nvec,
                            (hi, ni),
                            v,
                            &mut factory,
                        )
                    })
                    .collect::<Result<_, _>>()?;
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
        for (gi, g) in s.generators.iter().enumerate() {
            let ep = ports.len() + gi;
            let rate = parse_rate(&topo.link[ep].rate).expect("validated rate");
            let rng = rng_stream(s.seed, &format!("generator/{}", g.name));
            if let Some(set) = traffic::replay_settings(g, s.base_dir.as_deref()) {
                let r = Replay::open(set).map_err(|e| Error::Config {
                    field: format!("generators[{gi}].capture"),
                    message: e.to_string(),
                })?;
                gens.push(Generator::replaying(g, r, end, rng));
            } else {
                gens.push(Generator::new(g, rate, end, rng));
            }
            gen_egress.push(topo.egress(ep));
        }
        let peer: Vec<Endpoint> = s
            .endpoint_names()
            .iter()
            .zip(&topo.link)
            .map(|(name, l)| topo.endpoint(if &l.a == name { &l.b } else { &l.a }))
            .collect();
        let mut apps: Vec<App> = Vec::new();
        let mut conns: Vec<TcpConn> = Vec::new();
        let mut servers: Vec<App> = Vec::new();
        let n_cfg_apps = s.apps.len() as u16;
        let host_idx = |name: &str| topo.host(name);
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
                let (local, remote) = topo.route(from, to);
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
                    port: [local, remote],
                    app,
                    timer: [Timer::default(); 2],
                });
                (conns.len() - 1) as u16
            };
        for a in &s.apps {
            let hi = host_idx(a.host());
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
                    let (p, _) = topo.route(a.host(), to);
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
                AppCfg::RpcOpen {
                    name,
                    to,
                    rate_rps,
                    arrivals,
                    connections,
                    request_bytes,
                    response_bytes,
                    service_ns,
                    service,
                    server_threads,
                    server_cores,
                    max_outstanding,
                    timeout_us,
                    start_us,
                    nodelay,
                    server_busy_poll_usecs,
                    server_busy_poll_budget,
                    server_prefer_busy_poll,
                    request_sizes,
                    response_sizes,
                    ..
                } => {
                    let weighted = |v: &Option<Vec<traffic::ByteWeight>>, fixed: u64| {
                        v.as_ref().map_or(vec![(fixed, 1)], |v| {
                            v.iter().map(|s| (s.bytes, s.weight)).collect()
                        })
                    };
                    let sizes = Sizes::new(
                        &weighted(request_sizes, *request_bytes),
                        &weighted(response_sizes, *response_bytes),
                        rng_stream(s.seed, &format!("app/{name}/sizes")).random::<u64>(),
                    );
                    let busy = (*server_busy_poll_usecs > 0).then(|| BusyPoll {
                        spin: Nanos::from_us(*server_busy_poll_usecs),
                        budget: *server_busy_poll_budget,
                        prefer: *server_prefer_busy_poll,
                    });
                    let th = host_idx(to);
                    let first_srv = n_cfg_apps + servers.len() as u16;
                    let threads = *server_threads as u16;
                    let cs: Vec<u16> = (0..*connections as u16)
                        .map(|c| {
                            new_conn(
                                &mut conns,
                                hi,
                                to,
                                *nodelay,
                                [apps.len() as u16, first_srv + c % threads],
                            )
                        })
                        .collect();
                    let host_cores = s.hosts[th as usize].cores;
                    for t in 0..threads {
                        let mine: Vec<u16> = cs
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| *i as u16 % threads == t)
                            .map(|(_, c)| *c)
                            .collect();
                        let core = server_cores
                            .as_ref()
                            .map_or(t as u32 % host_cores, |v| v[t as usize]);
                        servers.push(App {
                            name: format!("{name}.server{t}"),
                            host: th,
                            core: core as u16,
                            kind: AppKind::RpcOpenServer(RpcOpenServer::new(
                                mine,
                                sizes.clone(),
                                Nanos(*service_ns),
                                match service {
                                    ServiceCfg::Fixed => Service::Fixed,
                                    ServiceCfg::Exponential => Service::Exponential,
                                },
                                rng_stream(s.seed, &format!("app/{name}/server{t}")),
                                busy,
                            )),
                        });
                    }
                    AppKind::RpcOpenClient(RpcOpenClient::new(
                        cs,
                        &RpcOpenParams {
                            rate_rps: *rate_rps,
                            arrivals: match arrivals {
                                ArrivalsCfg::Poisson => Arrivals::Poisson,
                                ArrivalsCfg::Fixed => Arrivals::Fixed,
                            },
                            sizes,
                            max_outstanding: *max_outstanding,
                            timeout: Nanos::from_us(*timeout_us),
                            start: SimTime(start_us * 1000),
                        },
                        rng_stream(s.seed, &format!("app/{name}/arrivals")),
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
            sending: None,
            qdisc: vec![VecDeque::new(); s.hosts.iter().map(|h| h.nics.len()).sum()],
            locks: s
                .hosts
                .iter()
                .flat_map(|h| {
                    h.nics.iter().map(move |n| {
                        crate::host::lock::Mutex::new(format!("{}.{}", h.name, n.name))
                    })
                })
                .collect(),
            forward_to: {
                let mut f = Vec::new();
                for h in &s.hosts {
                    for n in &h.nics {
                        let out = h
                            .forward
                            .iter()
                            .find(|r| r.from == n.name)
                            .map(|r| topo.port(&format!("{}.{}", h.name, r.to)));
                        f.push(out);
                    }
                }
                f
            },
            traces: vec![Vec::new(); s.hosts.iter().map(|h| h.nics.len()).sum()],
            traces_dropped: vec![0; s.hosts.iter().map(|h| h.nics.len()).sum()],
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
}
