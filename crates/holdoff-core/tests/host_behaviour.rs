//! End-to-end behaviour of hosts and drivers against exact expectations.

mod common;
use common::{run, OneHost, TwoHosts};
use holdoff_core::nic::chip;

/// Two ideal hosts, 82546 both ends, a ping every 1 ms.
fn ping_toml(itr: &str, prop_ns: u64) -> String {
    TwoHosts {
        head: "name = \"ping\"\nseed = 3\nduration_ms = 100",
        nic_extra: &format!("[hosts.nics.moderation]\nkind = \"static\"\n{itr}"),
        nic_extra_b: None,
        link_extra: &format!("propagation_ns = {prop_ns}"),
        apps: r#"[[apps]]
kind = "ping"
name = "ping"
host = "a"
to = "b"
interval_us = 1000
size_bytes = 56
"#,
        ..TwoHosts::default()
    }
    .toml()
}

#[test]
fn ping_rtt_on_ideal_hosts_follows_the_path_and_the_throttle() {
    // 56-B payload -> 102-B frame -> 122 wire bytes = 976 ns at 1 Gb/s. One
    // way: TX DMA + serialisation + propagation + RX DMA.
    let c = chip::by_name("82546").unwrap();
    let (tx_dma, rx_dma) = (c.tx_dma_ns.as_ns(), c.rx_dma_ns.as_ns());
    let one_way = tx_dma + 976 + 500 + rx_dma;
    let itr_ns = 488 * 256; // ITR 8000/s -> register 488
    let cases: [(&str, &str, u64); 3] = [
        // No throttle: RTT = the path, both ways.
        ("no moderation", "", 2 * one_way),
        // ITR 8000 with TIDV = 0 (immediate TXDW): the request's own TX
        // completion interrupts the sender at tx_dma + 976 ns and opens a
        // 124.928 us throttle interval; the reply lands inside it and waits
        // for its end. RTT = tx_dma + 976 + 124 928 ns.
        (
            "itr, immediate txdw",
            "itr_per_s = 8000",
            tx_dma + 976 + itr_ns,
        ),
        // ITR 8000 with IDE and TIDV = TADV = 64 ticks (e1000 5.x defaults):
        // TXDW comes 65.5 us after the send, after the reply (~9 us), so the
        // reply interrupts at once: RTT = the path again.
        (
            "itr, tidv 64",
            "itr_per_s = 8000\ntidv_1024ns = 64\ntadv_1024ns = 64",
            2 * one_way,
        ),
    ];
    for (case, itr, want_ns) in cases {
        let r = run(&ping_toml(itr, 500));
        let app = &r["summary"]["apps"][0];
        assert_eq!(app["sent"], 100, "{case}");
        assert_eq!(app["received"], 100, "{case}");
        let lat = &app["latency_us"];
        let want_us = want_ns as f64 / 1000.0;
        for q in ["min", "max"] {
            let got = lat[q].as_f64().unwrap();
            // HDR histogram: 3 significant digits.
            assert!(
                (got - want_us).abs() <= want_us * 1e-3,
                "{case} {q}: {got} vs {want_us}"
            );
        }
    }
}

#[test]
fn napi_under_overload_keeps_the_irq_masked_and_ksoftirqd_shares_the_core() {
    // 1.488 Mframes/s into a host whose per-packet RX cost alone exceeds the
    // frame spacing (p4-xeon-2004: rx_packet_ns > 672 ns): NAPI polls never
    // complete, so after the first interrupt the IRQ stays masked; the
    // softirq exhausts its restarts (MAX_SOFTIRQ_RESTART) and hands the rest
    // to ksoftirqd (`ksoftirqd_handoffs`), which runs at application
    // priority, so the sink still gets the core and reads packets. Without
    // the handoff, softirq work would outrank the sink for the whole run.
    let prof = holdoff_core::host::profile::by_name("p4-xeon-2004").unwrap();
    assert!(
        prof.rx_packet_ns.as_ns() > 672,
        "premise: the host cannot keep up"
    );
    let at = |rate_pps: f64| OneHost {
        profile: "p4-xeon-2004",
        pattern: "constant",
        rate_pps,
        duration_ms: 200,
        moderation: "itr_per_s = 8000".into(),
        ..Default::default()
    };
    let r = run(&at(1_488_095.0).toml());
    let port = &r["summary"]["ports"][0];
    assert!(
        port["interrupts"].as_u64().unwrap() < 10,
        "interrupts {}",
        port["interrupts"]
    );
    let host = &r["summary"]["hosts"][0];
    let squeezes = host["time_squeeze"].as_u64().unwrap();
    let handoffs = host["ksoftirqd_handoffs"].as_u64().unwrap_or(0);
    // Handed over again and again over 200 ms, each time after a squeeze
    // (budget or time out) that found the restart limit reached.
    assert!(handoffs > 10, "ksoftirqd handoffs {handoffs}");
    assert!(
        handoffs <= squeezes,
        "{handoffs} handoffs, {squeezes} squeezes"
    );
    // The core is shared: the sink (application class, like ksoftirqd) gets
    // slices and reads packets while the rest are dropped at the ring.
    assert!(r["summary"]["apps"][0]["received"].as_u64().unwrap() > 0);
    assert!(host["cpu_util"]["app"].as_f64().unwrap() > 0.0);
    assert!(r["summary"]["drops"]["rx_ring_full"].as_u64().unwrap() > 0);
    assert!(host["cpu_util"]["busy"].as_f64().unwrap() > 0.99);
    // Contrast: at 10 kpps every poll completes and nothing is handed over
    // (the counter is absent from the report when it is 0).
    let light = run(&at(10_000.0).toml());
    let light_host = &light["summary"]["hosts"][0];
    assert_eq!(light_host["time_squeeze"].as_u64().unwrap(), 0);
    assert!(light_host.get("ksoftirqd_handoffs").is_none());
}

/// Two 82546 ports of one p4-xeon-2004 host with a Linux non-NAPI driver,
/// `eth1` on `eth1_line`; 10 kpps (no throttle) into `eth0` when `to_eth0`,
/// else into `eth1`; the other generator starts after the run ends.
fn two_port_toml(eth1_line: u32, to_eth0: bool) -> String {
    let (r0, r1) = if to_eth0 { (10_000, 1) } else { (1, 10_000) };
    let (s0, s1) = if to_eth0 {
        (0, 10_000_000)
    } else {
        (10_000_000, 0)
    };
    format!(
        r#"
name = "shared"
duration_ms = 50
[[hosts]]
name = "dut"
profile = "p4-xeon-2004"
variance = "none"
driver = "linux-isr"
[[hosts.nics]]
name = "eth0"
chip = "82546"
irq_line = 11
[[hosts.nics]]
name = "eth1"
chip = "82546"
irq_line = {eth1_line}
[[generators]]
name = "g0"
rate_pps = {r0}
start_us = {s0}
[[generators]]
name = "g1"
rate_pps = {r1}
start_us = {s1}
[[links]]
a = "g0"
b = "dut.eth0"
[[links]]
a = "g1"
b = "dut.eth1"
[[apps]]
kind = "udp_sink"
name = "sink"
host = "dut"
"#
    )
}

#[test]
fn shared_intx_line_calls_every_handler() {
    // Two ports on one INTx line: each delivery runs both handlers
    // (handle_irq_event walks every action of the line). The handler of the
    // port that did not assert reads ICR = 0 ("not ours") and returns; that
    // read is one MMIO read (`mmio_read_ns`), the only difference from the
    // same host with the ports on two lines, where the quiet port's handler
    // is never called. So, with traffic on one port and no throttle:
    //   hardirq time (shared) - hardirq time (own lines) = deliveries x mmio_read_ns.
    // Both ways round: traffic on eth0 (the line's first handler) and on
    // eth1 (its second), whose interrupts are then serviced through the
    // line eth0 registered, after eth0's handler found nothing.
    let prof = holdoff_core::host::profile::by_name("p4-xeon-2004").unwrap();
    let mmio_read = prof.mmio_read_ns.as_ns();
    for (busy, to_eth0) in [(0usize, true), (1, false)] {
        let shared = run(&two_port_toml(11, to_eth0));
        let apart = run(&two_port_toml(12, to_eth0));
        let ports = &shared["summary"]["ports"];
        let n = ports[busy]["interrupts"].as_u64().unwrap();
        let quiet = ports[1 - busy]["interrupts"].as_u64().unwrap();
        let host = &shared["summary"]["hosts"][0];
        assert_eq!(quiet, 0, "port {busy} busy: the other port never asserts");
        assert!(
            n > 400,
            "port {busy}: 10 kpps for 50 ms with no throttle: ~500 interrupts, got {n}"
        );
        assert_eq!(host["irq_deliveries"].as_u64().unwrap(), n, "port {busy}");
        // Every frame was read: the busy port's interrupts were serviced.
        assert_eq!(
            shared["summary"]["apps"][0]["received"], apart["summary"]["apps"][0]["received"],
            "port {busy}"
        );
        assert!(shared["summary"]["apps"][0]["received"].as_u64().unwrap() >= n);
        assert_eq!(
            apart["summary"]["ports"][busy]["interrupts"]
                .as_u64()
                .unwrap(),
            n,
            "port {busy}: the same interrupts on its own line"
        );
        let hardirq = |r: &serde_json::Value| {
            r["summary"]["hosts"][0]["cpu_ns"]["hardirq"]
                .as_u64()
                .unwrap()
        };
        assert_eq!(
            hardirq(&shared) - hardirq(&apart),
            n * mmio_read,
            "port {busy}: one 'not ours' ICR read per delivery"
        );
    }
}

#[test]
fn bulk_tcp_reaches_the_timestamped_tcp_ceiling_of_gigabit_ethernet() {
    // A 1448-byte payload rides in a 1518-byte frame that occupies 1538
    // bytes of line time: goodput <= 1448 / 1538 x 1 Gb/s = 941.48 Mb/s.
    // Ideal hosts, no moderation: the window (65160 B) far exceeds the
    // bandwidth-delay product, so the wire is the only limit.
    let toml = TwoHosts {
        head: "name = \"iperf\"\nduration_ms = 500",
        apps: common::IPERF_A_TO_B,
        ..TwoHosts::default()
    }
    .toml();
    let r = run(&toml);
    let rx = r["summary"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "iperf_receiver")
        .unwrap()
        .clone();
    let got = rx["throughput_bps"].as_f64().unwrap();
    let want = 1448.0 / 1538.0 * 1e9;
    // Slow start at the beginning costs well under 1 % of 500 ms.
    assert!(got <= want * 1.0001 && got > want * 0.99, "{got} vs {want}");
    assert_eq!(r["summary"]["tcp"][0]["sides"][0]["retransmits"], 0);
}

#[test]
fn napi_defer_hard_irqs_keeps_the_irq_masked_and_polls_from_the_timer() {
    // Two frames, created at 0 and 10 us; ideal host, no ITR. Each lands in
    // memory 672 ns (wire) + RX DMA later. Without deferral each interrupts.
    // With napi_defer_hard_irqs = 3 and gro_flush_timeout = 50 us the first
    // poll (work done) keeps the IRQ masked and arms a 50 us re-poll timer;
    // the second frame raises no interrupt and is picked up by that timer
    // poll: its latency is (t1 + 50 us) - 10 us, where t1 = the first frame's
    // landing time (Linux `net/core/dev.c` napi_complete_done,
    // commit 6f8b12d661d0 "net: napi: add hard irqs deferral feature").
    let dma = chip::by_name("82546").unwrap().rx_dma_ns.as_ns();
    let t1 = 672 + dma;
    let scenario = |napi: &'static str| {
        OneHost {
            pattern: "constant",
            rate_pps: 100_000.0,
            duration_ms: 5,
            seed: 1,
            host_extra: napi,
            generator_extra: "stop_us = 15",
            ..OneHost::default()
        }
        .toml()
    };
    let plain = run(&scenario(""));
    assert_eq!(plain["summary"]["ports"][0]["interrupts"], 2);
    assert_eq!(
        plain["summary"]["ports"][0]["vectors"][0]["min_spacing_ns"],
        10_000
    );
    let deferred = run(&scenario(
        "[hosts.napi]\ndefer_hard_irqs = 3\ngro_flush_timeout_ns = 50000",
    ));
    // Polls at t1 (work), t1+50 (work: count re-armed to 3), +100, +150
    // (empty: 2 -> 1 -> 0), +200 (count 0: unmask). The second frame's RXT0
    // has waited in ICR since it landed, so the unmask asserts at once: the
    // second and last interrupt comes exactly 200 us after the first.
    assert_eq!(deferred["summary"]["ports"][0]["interrupts"], 2);
    assert_eq!(
        deferred["summary"]["ports"][0]["vectors"][0]["min_spacing_ns"],
        200_000
    );
    let lat = &deferred["summary"]["apps"][0]["latency_us"];
    assert_eq!(lat["count"], 2);
    let want_max_us = (t1 + 50_000 - 10_000) as f64 / 1000.0;
    let want_min_us = t1 as f64 / 1000.0;
    for (q, want) in [("max", want_max_us), ("min", want_min_us)] {
        let got = lat[q].as_f64().unwrap();
        assert!((got - want).abs() <= want * 1e-3, "{q}: {got} vs {want}");
    }
}

#[test]
fn request_response_latency_on_ideal_hosts_is_two_one_way_paths() {
    // 64-byte request and response over TCP with NODELAY: each is one
    // 134-byte frame (64 + 70) = 154 wire bytes = 1232 ns at 1 Gb/s; the
    // ACKs ride on the next message. Ideal hosts, no moderation: one
    // transaction = 2 x (TX DMA + 1232 ns + RX DMA), back to back.
    let c = chip::by_name("82546").unwrap();
    let one_way = c.tx_dma_ns.as_ns() + 1232 + c.rx_dma_ns.as_ns();
    let toml = TwoHosts {
        head: "name = \"rr\"\nduration_ms = 20",
        apps: r#"[[apps]]
kind = "rpc"
name = "rr"
host = "a"
to = "b"
"#,
        ..TwoHosts::default()
    }
    .toml();
    let r = run(&toml);
    let app = &r["summary"]["apps"][0];
    assert_eq!(app["kind"], "rpc");
    let want_us = 2.0 * one_way as f64 / 1000.0;
    let lat = &app["latency_us"];
    for q in ["min", "p50"] {
        let got = lat[q].as_f64().unwrap();
        assert!(
            (got - want_us).abs() <= want_us * 1e-3,
            "{q}: {got} vs {want_us}"
        );
    }
    // Only the first two transactions are slower: a side that has not yet
    // answered data with data quick-acks with a pure ACK that occupies the
    // line ahead of its next message. The server does so for request 1
    // (ahead of response 1), the client for response 1 (ahead of request 2);
    // from then on both sides are interactive (pingpong) and ACKs ride on data.
    let slow: u64 = r["histograms"]["rr"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b[0].as_f64().unwrap() > want_us * 1000.0 * 1.001)
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    assert_eq!(slow, 2);
    // Closed loop: transactions = duration / transaction time (+-1).
    let n = app["transactions"].as_u64().unwrap() as f64;
    let want_n = 20e6 / (2.0 * one_way as f64);
    assert!((n - want_n).abs() <= 1.0, "{n} vs {want_n}");
}

#[test]
fn poisson_generator_keeps_its_rate_when_frames_wait_for_the_wire() {
    // 300 kframes/s of 64-B frames (672 ns of wire each) for 2 s: a Poisson
    // count with mean 600 000 and sd sqrt(600 000) = 775. About 18 % of the
    // gaps are shorter than one frame time; those frames wait for the wire and
    // must not push back the frames after them (a sender's queue, not a lost
    // gap). Allow 5 sd.
    let t = OneHost {
        rate_pps: 300_000.0,
        duration_ms: 2_000,
        seed: 11,
        moderation: "itr_per_s = 8000".into(),
        ..OneHost::default()
    }
    .toml();
    let r = run(&t);
    let injected = r["summary"]["ledger"]["injected"].as_f64().unwrap();
    assert!(
        (injected - 600_000.0).abs() < 5.0 * 775.0,
        "injected {injected}, expected 600000 +- 3875"
    );
}

#[test]
fn a_packet_hook_costs_its_time_once_per_received_packet() {
    // The ideal profile costs nothing, so the only CPU time is the hook's:
    // a constant 50 kframes/s for 1 s, each frame through one inbound hook of
    // 4 us, gives 50 000 x 4 us = 0.2 s of CPU on the one core (busy 0.2).
    let t = OneHost {
        pattern: "constant",
        rate_pps: 50_000.0,
        duration_ms: 1_000,
        moderation: "itr_per_s = 8000".into(),
        host_extra: "[hosts.load]\npacket_hook_ns = 4000",
        ..OneHost::default()
    }
    .toml();
    let r = run(&t);
    let busy = r["summary"]["hosts"][0]["cpu_util"]["busy"]
        .as_f64()
        .unwrap();
    assert!((busy - 0.2).abs() < 0.002, "busy {busy}, expected 0.2");
}

#[test]
fn interrupts_are_counted_by_cause() {
    // A receive-only port (UDP into a sink; the host sends nothing): every
    // interrupt has a receive cause and none a TX completion.
    let t = OneHost {
        duration_ms: 200,
        moderation: "itr_per_s = 8000".into(),
        ..OneHost::default()
    }
    .toml();
    let r = run(&t);
    let v = &r["summary"]["ports"][0]["vectors"][0];
    let ints = v["interrupts"].as_u64().unwrap();
    assert!(ints > 0);
    assert_eq!(v["interrupts_rx"].as_u64().unwrap(), ints);
    assert_eq!(v["interrupts_txdw"].as_u64().unwrap(), 0);
}

#[test]
fn udp_send_sends_at_its_rate_and_the_sink_counts_them() {
    // 100 000 frames/s for 100 ms from an ideal host: 10 000 frames sent
    // (timers at 0, 10 us, ..., 99.99 ms); all but the last few in flight at
    // the end reach the sink on the other host.
    let t = TwoHosts {
        head: "name = \"udp-send\"\nseed = 1\nduration_ms = 100",
        nic_extra: "[hosts.nics.moderation]\nkind = \"static\"\nitr_per_s = 8000",
        nic_extra_b: None,
        apps: r#"[[apps]]
kind = "udp_send"
name = "blast"
host = "a"
to = "b"
frame_bytes = 128
rate_pps = 100000

[[apps]]
kind = "udp_sink"
name = "sink"
host = "b"
"#,
        ..TwoHosts::default()
    }
    .toml();
    let r = run(&t);
    let apps = r["summary"]["apps"].as_array().unwrap();
    let sent = apps[0]["sent"].as_u64().unwrap();
    let got = apps[1]["received"].as_u64().unwrap();
    assert_eq!(sent, 10_000);
    // At most one 125 us throttle interval of frames (13) is still on its way.
    assert!(
        got <= sent && sent - got <= 13,
        "sent {sent}, received {got}"
    );
}

#[test]
fn frames_longer_than_the_mtu_are_dropped_and_jumbo_mtu_accepts_them() {
    // 9018-byte frames (a 9000-byte MTU's) into a port: with the default
    // MTU 1500 the MAC drops every one (frame_over_mtu); with mtu_bytes =
    // 9000 it takes them all (1000 frames/s for 1 s, a constant pattern).
    let run_with = |mtu_line: &str| {
        let t = OneHost {
            pattern: "constant",
            rate_pps: 1000.0,
            frame_bytes: 9018,
            duration_ms: 1_000,
            moderation: "itr_per_s = 8000".into(),
            ..OneHost::default()
        }
        .toml()
        .replace("rx_ring = 256", &format!("rx_ring = 256\n{mtu_line}"));
        run(&t)
    };
    let small = run_with("");
    assert_eq!(
        small["summary"]["drops"]["frame_over_mtu"]
            .as_u64()
            .unwrap(),
        1000
    );
    assert_eq!(small["summary"]["apps"][0]["received"].as_u64().unwrap(), 0);
    let jumbo = run_with("mtu_bytes = 9000");
    assert_eq!(
        jumbo["summary"]["drops"]["frame_over_mtu"]
            .as_u64()
            .unwrap_or(0),
        0
    );
    assert_eq!(
        jumbo["summary"]["apps"][0]["received"].as_u64().unwrap(),
        1000
    );
}

#[test]
fn tcp_segments_fit_the_path_mtu_and_a_too_large_mss_is_warned() {
    // tcp.mss_bytes = 8948 asks for 9018-byte frames, but both NICs keep
    // the default 1500-byte MTU: TCP carries at most 1500 - 52 = 1448 bytes
    // per segment (frames of 1518), and the run says why.
    let t = TwoHosts {
        head: "name = \"mss\"\nseed = 1\nduration_ms = 50",
        host_extra: [
            "[hosts.tcp]\nmss_bytes = 8948\nskb_truesize_bytes = 0",
            "[hosts.tcp]\nmss_bytes = 8948\nskb_truesize_bytes = 0",
        ],
        apps: common::IPERF_A_TO_B,
        ..TwoHosts::default()
    }
    .toml();
    let r = run(&t);
    let port = &r["summary"]["ports"][0];
    let (pkts, bytes) = (
        port["tx_packets"].as_u64().unwrap(),
        port["tx_bytes"].as_u64().unwrap(),
    );
    assert!(pkts > 100);
    assert!(bytes <= pkts * 1518, "{bytes} bytes in {pkts} frames");
    let warnings = r["summary"]["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w["field"] == "hosts[0].tcp.mss_bytes"),
        "{warnings:?}"
    );
}

/// A udp_send app asking for 100 000 frames/s on host a, whose send path
/// costs 20 us (so one core sends at most 50 000/s), with `hogs` CPU-bound
/// processes on a's only core.
fn blast_with_hogs(hogs: &str) -> serde_json::Value {
    let t = TwoHosts {
        head: "name = \"hogs\"\nseed = 1\nduration_ms = 500",
        host_extra: [
            &format!("profile_overrides = {{ tx_packet_ns = 20000 }}\n[hosts.load]\ncpu_hogs = [{hogs}]"),
            "",
        ],
        nic_extra: "[hosts.nics.moderation]\nkind = \"static\"\nitr_per_s = 8000",
        nic_extra_b: None,
        apps: "[[apps]]\nkind = \"udp_send\"\nname = \"blast\"\nhost = \"a\"\nto = \"b\"\nrate_pps = 100000\n\n[[apps]]\nkind = \"udp_sink\"\nname = \"sink\"\nhost = \"b\"\n",
        ..TwoHosts::default()
    }
    .toml();
    run(&t)
}

#[test]
fn cpu_bound_processes_take_their_fair_share_from_a_cpu_bound_application() {
    // Alone, the sender uses the whole core: 0.5 s / 20 us = 25 000 frames.
    // With k CPU-bound processes at its priority it gets 1/(k + 1) of the
    // core: 12 500 frames with one, 8 333 with two (within 3 %; the share
    // is settled in slices of about 1 ms).
    for (hogs, share) in [("", 1.0), ("0", 0.5), ("0, 0", 1.0 / 3.0)] {
        let r = blast_with_hogs(hogs);
        let sent = r["summary"]["apps"][0]["sent"].as_f64().unwrap();
        let want = 25_000.0 * share;
        assert!(
            (sent - want).abs() < 0.03 * want,
            "hogs [{hogs}]: sent {sent}, expected {want}"
        );
        if !hogs.is_empty() {
            let got = r["summary"]["hosts"][0]["cpu_hogs"]["cores_used"]
                .as_f64()
                .unwrap();
            assert!(
                (got - (1.0 - share)).abs() < 0.03,
                "hogs [{hogs}]: {got} cores"
            );
        }
    }
}

#[test]
fn a_sleeping_application_wakes_ahead_of_cpu_bound_processes() {
    // A ping every 1 ms from a to b: the pinging thread sleeps between
    // requests, so a CPU-bound process on its core never delays it (CFS
    // wake-up preemption); every round trip is what it is without one.
    let ping = |hogs: &str| {
        let t = TwoHosts {
            head: "name = \"ping-hog\"\nseed = 1\nduration_ms = 100",
            host_extra: [&format!("[hosts.load]\ncpu_hogs = [{hogs}]"), ""],
            nic_extra: "[hosts.nics.moderation]\nkind = \"static\"\nitr_per_s = 8000",
            nic_extra_b: None,
            apps: "[[apps]]\nkind = \"ping\"\nname = \"ping\"\nhost = \"a\"\nto = \"b\"\ninterval_us = 1000\n",
            ..TwoHosts::default()
        }
        .toml();
        run(&t)["summary"]["apps"][0]["latency_us"].clone()
    };
    assert_eq!(ping(""), ping("0"));
}
