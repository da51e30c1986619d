//! Building a world: hosts, NIC ports and their IRQ lines, moderators,
//! generators, links, applications and TCP connections, from a validated
//! scenario. Endpoint, link and route tables are computed once
//! (`topology::Topology`); the interface-up sequence is `World::init` (in
//! `mod`). Applications and TCP connections are built in `build_apps`.
//!
//! Units: times [ns].

use super::moderation::{build_moderator, ExternalFactory};
use super::napi::{Netisr, SoftirqState};
use super::series::SamplePrev;
use super::topology::Topology;
use super::{Endpoint, Host, World};
use crate::apps::replay::Replay;
use crate::apps::{AppKind, AppSched, Generator};
use crate::engine::rng_stream;
use crate::error::Error;
use crate::host::drivers;
use crate::host::variance::{CoreVariance, Variance};
use crate::host::{Core, IrqLine};
use crate::metrics::{Ledger, TimeSeries};
use crate::moderation::Moderator;
use crate::nic::chip::{self, LegacyItr};
use crate::nic::{rss, IntMode, NicOut, NicPort, PortConfig};
use crate::scenario::config::VarianceUse;
use crate::scenario::config::{parse_rate, traffic, IntModeCfg, LegacyItrCfg, Scenario};
use crate::scenario::netstack::StackOut;
use crate::units::{Nanos, SimTime};
use rand::RngExt;

/// Reference-clock tolerance of a NIC [parts per billion]: Intel's LAN
/// design guides require the 25 MHz reference within +-50 ppm for IEEE 802.3
/// and recommend +-30 ppm (82562EZ/82547GI Dual Footprint Design Guide,
/// appendix A "Measuring LAN Reference Frequency").
pub const NIC_CLOCK_PPB: i32 = 30_000;
use std::collections::VecDeque;

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
            let base = h
                .base_profile()
                .with_overrides(&h.profile_overrides)
                .expect("validated overrides")
                .with_packet_hook(Nanos(h.load.packet_hook_ns));
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
                cores: (0..h.cores)
                    .map(|ci| {
                        let mut c = Core::new();
                        c.hogs = h.load.cpu_hogs.iter().filter(|&&x| x == ci).count() as u32;
                        c
                    })
                    .collect(),
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
                variance: (0..h.cores)
                    .map(|ci| {
                        let v = match h.variance {
                            VarianceUse::Profile => prof.variance,
                            VarianceUse::None => Variance::NONE,
                        };
                        CoreVariance::new(v, s.seed, &h.name, ci)
                    })
                    .collect(),
                deferred_thread: matches!(
                    drivers::arch(h.driver).name(),
                    "freebsd-ithread" | "freebsd-taskqueue"
                ),
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
                    rx_ring: n.rx_ring(),
                    tx_ring: n.tx_ring(),
                    queues: n.queues,
                    mode,
                    set_ide: n.set_ide,
                    rdmts_shift: n.rdmts_divisor.trailing_zeros(),
                    max_frame_bytes: n.mtu_bytes + 18,
                    gro: n.gro,
                    eitr_cnt_ignr: n.eitr_cnt_ignr,
                    legacy_itr: match n.legacy_itr {
                        None => c.legacy_itr,
                        Some(LegacyItrCfg::Honoured) => LegacyItr::Honoured,
                        Some(LegacyItrCfg::Ignored) => LegacyItr::Ignored,
                    },
                };
                let mut port = NicPort::new(c, cfg, egress);
                if let Some(rs) = n.rss_settings() {
                    let reta = rss::fill_reta(c.reta_entries, n.queues, &rs.fill)
                        .expect("validated rss_weights");
                    let fields = rss::HashFields {
                        udp_ports: rs.udp_ports,
                    };
                    port.set_rss(rss::Rss::new(rs.key, fields, reta));
                }
                // Each NIC counts its throttle on its own 25 MHz reference
                // crystal: an error drawn once, uniform within Intel's
                // recommended +-30 ppm (nic/mod.rs, "Clock").
                let mut clock = rng_stream(s.seed, &format!("nic-clock/{name}"));
                port.set_clock_error_ppb(clock.random_range(-NIC_CLOCK_PPB..=NIC_CLOCK_PPB));
                let pidx = ports.len() as u16;
                let mut lines = Vec::new();
                let vector_cores = n.vector_cores(port.num_vectors() as u32, h.cores);
                for v in 0..port.num_vectors() as u16 {
                    let core = vector_cores[v as usize] as u16;
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
                            (h.hz(), super::moderation::work_delay(prof)),
                            &topo.link[pidx as usize].rate,
                            &name,
                            nvec,
                            (hi, ni),
                            v,
                            &mut factory,
                            s.base_dir.as_deref(),
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
        // A generator whose receiving port hashes: each flow gets its
        // 5-tuple (from a stream of its own) and that port's hash of it.
        for (gi, g) in s.generators.iter().enumerate() {
            if let Endpoint::Port(p) = peer[ports.len() + gi] {
                if let Some(r) = ports[p as usize].rss() {
                    let mut frng = rng_stream(s.seed, &format!("generator/{}/flows", g.name));
                    let tuples = crate::apps::flow_tuples(g.flows, &mut frng);
                    gens[gi].set_rss(r, &tuples);
                }
            }
        }
        let (apps, conns) = super::build_apps::build_apps(s, &topo, &mut hosts);
        let netpipes_running = apps
            .iter()
            .filter(|a| matches!(a.kind, AppKind::NetpipeClient(_)))
            .count() as u32;
        let mut w = World {
            scenario: s.clone(),
            q: super::Queue::new(),
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
            busy_owned: 0,
            busy_serve: vec![false; apps.len()],
            pending_dispatch: Vec::new(),
            sending: None,
            qdisc: vec![VecDeque::new(); s.hosts.iter().map(|h| h.nics.len()).sum()],
            bql: s
                .hosts
                .iter()
                .flat_map(|h| {
                    h.nics
                        .iter()
                        .map(move |n| h.bql(n).then(crate::host::dql::Dql::default))
                })
                .collect(),
            tsq_wake: Vec::new(),
            locks: s
                .hosts
                .iter()
                .flat_map(|h| {
                    h.nics.iter().map(move |n| {
                        crate::host::lock::Mutex::new(format!("{}.{}", h.name, n.name))
                    })
                })
                .collect(),
            icu_locks: s
                .hosts
                .iter()
                .map(|h| crate::host::lock::Mutex::spin(format!("{}.icu_lock", h.name)))
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
            sample_log: None,
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
            steps: crate::scenario::config::at::resolve(s)?,
            changes: Vec::new(),
            watchdog_pending: vec![false; s.hosts.iter().map(|h| h.nics.len()).sum()],
            gen_on: s.generators.iter().map(|g| g.enabled).collect(),
            gen_scheduled: vec![false; s.generators.len()],
            train_backoff: vec![(0, 0); s.generators.len()],
            group_sched: super::groups::group_scheduler_from_env(),
            trains: super::trains::trains_from_env(),
            train_arrivals: VecDeque::new(),
            train_virtual: 0,
            train_total: 0,
            pop_limit: end,
            event_log: None,
        };
        w.init();
        Ok(w)
    }
}
