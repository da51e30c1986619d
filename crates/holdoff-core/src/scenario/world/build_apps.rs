//! Building a world's applications: each configured application, the peer
//! of every two-host application (appended after the configured ones) and
//! their TCP connections, each endpoint configured from its host's TCP
//! sysctls. Called by `World::build` (`build`).
//!
//! Units: times [ns].

use super::topology::Topology;
use super::Host;
use crate::apps::netpipe::{Netpipe, NetpipeConfig};
use crate::apps::rpc_open::{
    Arrivals, RpcOpenClient, RpcOpenParams, RpcOpenServer, Service, Sizes,
};
use crate::apps::tcp_apps::{
    BusyPoll, IperfClient, IperfServer, NetpipeClient, NetpipeServer, RpcClient, RpcServer,
};
use crate::apps::{App, AppKind, Ping, UdpSend, UdpSink};
use crate::engine::{rng_stream, Timer};
use crate::scenario::config::host::TCP_IP_HEADER_BYTES;
use crate::scenario::config::traffic::{ArrivalsCfg, ServiceCfg};
use crate::scenario::config::{traffic, AppCfg, Scenario};
use crate::scenario::netstack::TcpConn;
use crate::stack::tcp::{TcpConfig, TcpEndpoint};
use crate::units::{Nanos, SimTime};
use rand::RngExt;

/// The applications of a scenario, each two-host application with its peer
/// (appended after the configured ones) and its TCP connections.
pub(super) fn build_apps(
    s: &Scenario,
    topo: &Topology,
    hosts: &mut [Host],
) -> (Vec<App>, Vec<TcpConn>) {
    let mut apps: Vec<App> = Vec::new();
    let mut conns: Vec<TcpConn> = Vec::new();
    let mut servers: Vec<App> = Vec::new();
    let n_cfg_apps = s.apps.len() as u16;
    let host_idx = |name: &str| topo.host(name);
    let tcp_cfg = |host: u16, nodelay: bool| {
        let h = &s.hosts[host as usize];
        let t = &h.tcp;
        TcpConfig {
            mss: t.mss_bytes,
            rcvbuf: t.rmem_default,
            adv_win_scale: t.adv_win_scale,
            sndbuf_init: t.wmem_default,
            sndbuf_max: h.wmem_max(),
            nodelay,
            delack: Nanos(t.delack_us * 1000),
            rto_min: Nanos::from_ms(t.rto_min_ms),
            skb_truesize: t.skb_truesize_bytes,
            tsq_limit: h.tsq_limit_bytes(),
            moderate_rcvbuf: h.moderate_rcvbuf(),
            rmem_max: h.rmem_max(),
            linux26_sender: h.linux26_sender(),
            linux26_prequeue: h.linux26_prequeue(),
            linux26_ack_after_copy: h.linux26_ack_after_copy(),
            ..TcpConfig::default()
        }
    };
    // Interface MTU of each port (ports are numbered host by host, NIC by NIC).
    let port_mtu: Vec<u32> = s
        .hosts
        .iter()
        .flat_map(|h| h.nics.iter().map(|n| n.mtu_bytes))
        .collect();
    let port_tso: Vec<bool> = s
        .hosts
        .iter()
        .flat_map(|h| h.nics.iter().map(|n| n.tso))
        .collect();
    // A TCP connection between `host` and `to` for the applications `app`.
    let new_conn = |conns: &mut Vec<TcpConn>, host: u16, to: &str, nodelay: bool, app: [u16; 2]| {
        let from = &s.hosts[host as usize].name;
        let (local, remote) = topo.route(from, to);
        let th = host_idx(to);
        // Each side advertises MTU - 52 (its MSS option, timestamps on); a
        // segment carries at most the smaller of the two and of the host's
        // own setting.
        let path_mss =
            port_mtu[local as usize].min(port_mtu[remote as usize]) - TCP_IP_HEADER_BYTES;
        let ends = [host, th].map(|h| {
            let mut c = tcp_cfg(h, nodelay);
            c.mss = c.mss.min(path_mss);
            c
        });
        let mut ep = ends.map(TcpEndpoint::new);
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
            tso: [port_tso[local as usize], port_tso[remote as usize]],
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
            AppCfg::UdpSend {
                to,
                frame_bytes,
                rate_pps,
                count,
                start_us,
                ..
            } => {
                let (p, _) = topo.route(a.host(), to);
                AppKind::UdpSend(UdpSend {
                    period_ps: (1e12 / rate_pps).round().max(1.0) as u64,
                    next_ps: *start_us as u128 * 1_000_000,
                    frame_bytes: *frame_bytes,
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
                    .map(|_| new_conn(&mut conns, hi, to, *nodelay, [apps.len() as u16, srv_app]))
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
    (apps, conns)
}
