//! Unit tests of the world (`scenario::world`): building, running and the ledger.

use super::*;
use crate::error::Error;
use std::time::Duration;

/// One host with `cores` cores and two NICs on INTx lines of their own,
/// served by cores 0 and `nic1_core`; a generator on each NIC.
fn two_nic_world(cores: u32, nic1_core: u32) -> World {
    let toml = format!(
        r#"
name = "same-instant"
duration_ms = 10
[[hosts]]
name = "dut"
profile = "p4-xeon-2004"
# Constant costs: the ordering tests compare equal-cost handlers.
variance = "none"
cores = {cores}
[[hosts.nics]]
name = "eth0"
chip = "82546"
[hosts.nics.moderation]
kind = "static"
[[hosts.nics]]
name = "eth1"
chip = "82546"
irq_core = {nic1_core}
[hosts.nics.moderation]
kind = "static"
[[generators]]
name = "g0"
rate_pps = 1000
[[generators]]
name = "g1"
rate_pps = 1000
[[links]]
a = "g0"
b = "dut.eth0"
rate = "1G"
[[links]]
a = "g1"
b = "dut.eth1"
rate = "1G"
"#
    );
    let s = Scenario::from_toml(&toml).expect("valid scenario");
    World::build(&s, None).expect("builds")
}

#[test]
fn assertions_of_one_event_are_raised_last_in_first_out() {
    let mut w = two_nic_world(1, 0);
    let (l0, l1) = (w.port_vec_line[0][0], w.port_vec_line[1][0]);
    assert_ne!(l0, l1, "separate lines");
    // Port 0 asserts, then port 1, within one event.
    w.pending_asserts.push((0, 0));
    w.pending_asserts.push((1, 0));
    w.process_asserts(SimTime::ZERO);
    // Rule 2: port 1's line is raised first and takes the idle core;
    // port 0's line waits in the core's IRQ queue.
    let lines = &w.hosts[0].lines;
    assert!(lines[l1 as usize].in_service && !lines[l1 as usize].queued);
    assert!(!lines[l0 as usize].in_service && lines[l0 as usize].queued);
}

#[test]
fn pending_dispatches_run_last_in_first_out() {
    let mut w = two_nic_world(2, 1);
    // An interrupt waits on each (idle) core; core 0 is listed first.
    for port in 0..2u16 {
        let li = w.port_vec_line[port as usize][0];
        let line = &mut w.hosts[0].lines[li as usize];
        line.queued = true;
        let core = line.core;
        assert_eq!(core, port);
        w.hosts[0].cores[core as usize].queue_irq(li);
        w.pending_dispatch.push((0, core));
    }
    w.post_segment(SimTime::ZERO);
    // Rule 3: core 1 was dispatched first, so its segment-end event was
    // scheduled first; both handlers cost the same, and same-instant
    // events pop in scheduling order (rule 1).
    let mut order = Vec::new();
    while let Some((_, ev)) = w.q.pop_until(w.end) {
        if let Ev::CoreDone { core, .. } = ev {
            order.push(core);
            if order.len() == 2 {
                break;
            }
        }
    }
    assert_eq!(order, vec![1, 0]);
}

/// A polling host whose clock ticks `poll_hz` times a second.
fn polling_world(poll_hz: u32) -> World {
    let toml = format!(
        r#"
name = "guard"
duration_ms = 50
[[hosts]]
name = "dut"
profile = "p4-xeon-2004"
driver = "polling"
[hosts.bsd]
poll_hz = {poll_hz}
[[hosts.nics]]
name = "eth0"
chip = "82546"
[hosts.nics.moderation]
kind = "static"
[[generators]]
name = "g0"
rate_pps = 1000
[[links]]
a = "g0"
b = "dut.eth0"
rate = "1G"
"#
    );
    let s = Scenario::from_toml(&toml).expect("valid scenario");
    World::build(&s, None).expect("builds")
}

fn guarded_error(w: &mut World, limits: Limits) -> String {
    match w.run_guarded(Some(limits), &mut |_| true, Duration::ZERO) {
        Err(Error::Run { message }) => message,
        other => panic!("expected the guard to stop the run, got {other:?}"),
    }
}

#[test]
fn the_default_limits_leave_a_normal_run_alone() {
    let mut w = polling_world(100_000);
    let limits = w.limits();
    // The polling clock alone is 1e5 ticks/s; the 1G wire 1.49e6 frames/s.
    assert!(limits.max_events_per_sim_s > 64.0 * (1e5 + 1e9 / 672.0));
    let stats = w
        .run_guarded(None, &mut |_| true, Duration::ZERO)
        .expect("no limit is hit");
    assert!(stats.interrupted.is_none());
    assert!(stats.peak_queued_events > 0);
}

#[test]
fn the_event_rate_limit_names_the_polling_clock() {
    // A limit of 50 000 events/s against a 100 kHz polling clock (two
    // events per tick at least: the tick and the poll's CPU segment).
    let mut w = polling_world(100_000);
    let limits = Limits {
        max_events_per_sim_s: 50_000.0,
        ..w.limits()
    };
    let msg = guarded_error(&mut w, limits);
    assert!(msg.contains("events per simulated second"), "{msg}");
    assert!(msg.contains("`hosts[0].bsd.poll_hz`"), "{msg}");
    assert!(msg.contains("at t = "), "{msg}");
}

#[test]
fn the_same_instant_limit_trips_when_time_stands_still() {
    // The 10 us polling clock and the 10 ms sample clock meet every
    // 10 ms: two events at one instant, one more than allowed.
    let mut w = polling_world(100_000);
    let limits = Limits {
        max_same_instant: 1,
        ..w.limits()
    };
    let msg = guarded_error(&mut w, limits);
    assert!(msg.contains("at one simulated instant"), "{msg}");
}

#[test]
fn the_queue_limit_trips_above_its_budget() {
    // The polling clock, the sample clock and the generator keep more
    // than one event pending.
    let mut w = polling_world(100_000);
    let limits = Limits {
        max_queued_events: 1,
        ..w.limits()
    };
    let msg = guarded_error(&mut w, limits);
    assert!(msg.contains("pending events"), "{msg}");
}

#[test]
fn a_full_moderation_trace_counts_later_decisions_and_the_report_warns() {
    // DIM decides at every NAPI completion (`net_dim`); with the trace
    // already full, every decision is counted instead of kept.
    let toml = r#"
name = "trace-cap"
duration_ms = 5
[[hosts]]
name = "dut"
profile = "p4-xeon-2004"
driver = "napi"
[[hosts.nics]]
name = "eth0"
chip = "i350"
[hosts.nics.moderation]
kind = "dim"
[[generators]]
name = "g0"
rate_pps = 100000
[[links]]
a = "g0"
b = "dut.eth0"
rate = "1G"
"#;
    let s = Scenario::from_toml(toml).expect("valid scenario");
    let mut w = World::build(&s, None).expect("builds");
    let row = TraceRow {
        t_ns: 0,
        values: vec![],
    };
    w.traces[0] = vec![row; MAX_TRACE_ROWS_PER_PORT];
    w.run();
    assert_eq!(w.trace(0).len(), MAX_TRACE_ROWS_PER_PORT);
    let dropped = w.trace_rows_dropped(0);
    let ints = w.ports[0].interrupts(0);
    assert!(
        dropped > 0 && dropped <= ints,
        "{dropped} dropped, {ints} interrupts"
    );
    let json = crate::scenario::report::to_json(&w).expect("report");
    assert!(json.contains("later ones are not listed"), "warned");
}

#[test]
fn a_ping_socket_holds_at_most_its_buffer_of_unread_replies() {
    use crate::host::driver::StackSink;
    use crate::packet::{DropReason, PktKind};
    use crate::scenario::netstack::{Stack, PING_SOCKET_PACKETS};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/ping.toml"
    ))
    .expect("example");
    let s = Scenario::from_toml(&text).expect("valid scenario");
    let mut w = World::build(&s, None).expect("builds");
    // 300 echo replies reach the ping process (app 0 on host 0) before it
    // runs: the socket keeps 256, the rest are dropped as socket_full.
    let reply = Packet {
        created: SimTime::ZERO,
        frame_bytes: 98,
        seq: 0,
        ack: 0,
        wnd: 0,
        flow: 0,
        rss: 0,
        kind: PktKind::IcmpEchoReply,
        tso_more: false,
        selected: false,
    };
    let before = w.ledger.dropped[DropReason::SocketFull.index()];
    let mut st = Stack {
        host: 0,
        prof: w.hosts[0].profile,
        apps: &mut w.apps,
        sched: &w.sched,
        conns: &mut w.conns,
        udp_sink: None,
        forward_to: &w.forward_to,
        ledger: &mut w.ledger,
        out: &mut w.sout,
        tx_locks: None,
        netisr: None,
    };
    for _ in 0..300 {
        st.deliver(SimTime::ZERO, 0, reply);
    }
    let AppKind::Ping(p) = &w.apps[0].kind else {
        panic!("app 0 is the ping");
    };
    assert_eq!(p.replies.len(), PING_SOCKET_PACKETS);
    let dropped = w.ledger.dropped[DropReason::SocketFull.index()] - before;
    assert_eq!(dropped, (300 - PING_SOCKET_PACKETS) as u64);
}

#[test]
fn a_stop_request_ends_the_run_at_that_instant() {
    // 5000 polling ticks alone: past the first control call (every
    // CHECK_EVERY_EVENTS events at most).
    let mut w = polling_world(100_000);
    let mut calls = 0;
    let stats = w
        .run_guarded(
            None,
            &mut |p| {
                calls += 1;
                assert!(p.now <= p.end);
                false
            },
            Duration::ZERO,
        )
        .expect("no limit is hit");
    let t = stats.interrupted.expect("stopped on request");
    assert_eq!(calls, 1);
    assert_eq!(w.end(), t);
    assert!(t < SimTime(50_000_000), "stopped before the 50 ms end");
    let (at, why) = w.aborted().expect("marked in the report");
    assert_eq!(at, t);
    assert!(why.starts_with("interrupted"));
}

#[test]
fn events_round_trip_through_the_queue_words() {
    use crate::engine::QueueEvent;
    // Every variant with every field at a distinct value, including the
    // largest of each width (a field that spilled into its neighbour
    // would change another field).
    let g = u32::MAX - 5;
    let all = [
        Ev::GenEmit { gen: u16::MAX },
        Ev::Arrive { ep: 7 },
        Ev::Nic {
            port: u16::MAX,
            ev: NicEvent::RxDmaDone { queue: 3 },
        },
        Ev::Nic {
            port: 1,
            ev: NicEvent::TxDone { queue: u16::MAX },
        },
        Ev::Nic {
            port: 2,
            ev: NicEvent::RxDelay { queue: 4, gen: g },
        },
        Ev::Nic {
            port: 3,
            ev: NicEvent::TxDelay { queue: 5, gen: 9 },
        },
        Ev::Nic {
            port: 4,
            ev: NicEvent::Throttle { vector: 6, gen: g },
        },
        Ev::CoreDone {
            host: u16::MAX,
            core: u16::MAX - 1,
            gen: u32::MAX,
        },
        Ev::AppTimer { app: 11 },
        Ev::Wake { app: 12 },
        Ev::Sample,
        Ev::Watchdog { port: 13 },
        Ev::PollTick { host: 14 },
        Ev::NapiTimer {
            port: 15,
            vector: u16::MAX,
            gen: g,
        },
        Ev::TcpTimer {
            conn: 16,
            side: 1,
            gen: u32::MAX,
        },
        Ev::Change { step: u16::MAX },
    ];
    for e in all {
        let back = Ev::unpack(e.pack());
        assert_eq!(format!("{back:?}"), format!("{e:?}"));
    }
}

#[test]
fn events_are_small() {
    // Every queued event is moved several times by the queue; frames
    // wait on their link and in the NIC's receive buffer, not in events,
    // so no variant carries a packet record. Largest variant: an index
    // pair and a timer generation (2 + 2 + 4 bytes) behind a tag.
    assert!(
        std::mem::size_of::<Ev>() <= 12,
        "{}",
        std::mem::size_of::<Ev>()
    );
}

/// `n` copies of a host fed by a generator (names suffixed by the index),
/// sampled every `interval_us`, plus `extra` TOML.
fn replicated(n: usize, interval_us: u64, extra: &str) -> String {
    let mut t = format!(
        "name = \"groups\"\nduration_ms = 4\nsample_interval_us = {interval_us}\n{extra}\n"
    );
    for i in 0..n {
        t.push_str(&format!(
            r#"
[[hosts]]
name = "h{i}"
profile = "xeon-modern"
driver = "napi"
[[hosts.nics]]
name = "eth0"
chip = "82546"
[hosts.nics.moderation]
kind = "static"
itr_per_s = 8000
[[generators]]
name = "g{i}"
rate_pps = {rate}
[[links]]
a = "g{i}"
b = "h{i}.eth0"
rate = "1G"
[[apps]]
kind = "udp_sink"
name = "sink{i}"
host = "h{i}"
"#,
            rate = 100_000 + 50_000 * i
        ));
    }
    t
}

fn world_of(toml: &str) -> World {
    World::build(&Scenario::from_toml(toml).expect("valid scenario"), None).expect("builds")
}

#[test]
fn connected_groups_join_linked_hosts_and_two_host_applications() {
    // Three flooded hosts: three groups.
    assert_eq!(
        world_of(&replicated(3, 1000, "")).connected_group_count(),
        3
    );
    // A TCP application between two more hosts joins them: four groups.
    let mut t = replicated(3, 1000, "");
    t.push_str(
        r#"
[[hosts]]
name = "a"
profile = "xeon-modern"
[[hosts.nics]]
name = "eth0"
chip = "82546"
[[hosts]]
name = "b"
profile = "xeon-modern"
[[hosts.nics]]
name = "eth0"
chip = "82546"
[[links]]
a = "a.eth0"
b = "b.eth0"
[[apps]]
kind = "iperf"
name = "ip"
host = "a"
to = "b"
"#,
    );
    let w = world_of(&t);
    assert_eq!(w.connected_group_count(), 4);
    let g = w.connected_groups();
    assert_eq!(g.host[3], g.host[4], "a and b are one group");
    assert_eq!(g.conn, vec![g.host[3]], "the connection is theirs");
    assert_ne!(g.host[0], g.host[1]);
}

/// A run's report and event count, by groups or by the single queue.
fn report_of(toml: &str, by_groups: bool) -> (String, u64, usize) {
    let mut w = world_of(toml);
    w.set_group_scheduler(by_groups);
    let stats = w
        .run_guarded(None, &mut |_| true, Duration::from_secs(3600))
        .expect("runs");
    let json = crate::scenario::report::to_json(&w).expect("a report");
    (json, w.events_processed(), stats.groups)
}

#[test]
fn the_group_scheduler_gives_the_single_queue_report() {
    // Samples every 100 us and a change at 1 ms (switching a generator
    // off) and 2 ms (on again, and a new rate for another): global events
    // among the groups' events.
    let at = r#"
[[at]]
t_ms = 1
set = { "generators[1].enabled" = false }
[[at]]
t_ms = 2
set = { "generators[1].enabled" = true, "generators[2].rate_pps" = 400000 }
"#;
    let toml = replicated(3, 100, at);
    let (single, n1, g1) = report_of(&toml, false);
    let (grouped, n2, g2) = report_of(&toml, true);
    assert_eq!((g1, g2), (0, 3), "the second run went by groups");
    assert_eq!(n1, n2, "event counts");
    assert!(single == grouped, "the reports differ");
    // `run` (unguarded) goes by groups too, with the same count.
    let mut w = world_of(&toml);
    w.run();
    assert_eq!(w.events_processed(), n1);
    assert_eq!(
        crate::scenario::report::to_json(&w).expect("a report"),
        single
    );
}

#[test]
fn the_guard_stops_a_run_by_groups() {
    let mut w = world_of(&replicated(2, 1000, ""));
    let limits = Limits {
        max_events_per_sim_s: 50_000.0,
        ..w.limits()
    };
    let msg = guarded_error(&mut w, limits);
    assert!(msg.contains("events per simulated second"), "{msg}");
}

#[test]
fn a_run_by_groups_stops_at_a_round_end_on_request() {
    let mut w = world_of(&replicated(2, 1000, ""));
    let mut calls = 0;
    let stats = w
        .run_guarded(
            None,
            &mut |p| {
                calls += 1;
                p.now < SimTime(1_500_000)
            },
            Duration::ZERO,
        )
        .expect("runs");
    assert_eq!(stats.groups, 2);
    let at = stats.interrupted.expect("stopped");
    // Rounds end at most a stretch apart (two groups: the longest,
    // `STRETCH_MAX`); the first at or past 1.5 ms.
    assert_eq!(stretch_for(2), STRETCH_MAX);
    assert!(at >= SimTime(1_500_000) && at < SimTime(1_500_000) + STRETCH_MAX);
    assert_eq!(w.end(), at);
    assert!(calls >= 2);
}
