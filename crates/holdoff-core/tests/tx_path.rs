//! The modern Linux TX path and receive buffer end to end: TCP Small Queues
//! paced by TX completions, byte queue limits on the ring, receive-buffer
//! autotuning. Each expected value comes from a closed form derived in the
//! test's comment.

mod common;
use common::{run, TwoHosts, IPERF_A_TO_B};
use holdoff_core::stack::tcp::tx_truesize;

/// Goodput of a 1448-byte MSS at 1 Gb/s: a 1518-byte frame takes 1538
/// bytes of line time [bit/s].
const LINE_GOODPUT_BPS: f64 = 1448.0 / 1538.0 * 1e9;

/// An iperf flow from host `a` to host `b`, ideal hosts (every CPU cost
/// zero), NAPI, one 82546 each, linked at 1 Gb/s. `a_extra`/`b_extra` are
/// extra lines of each host's `[hosts.tcp]` table, `a_nic` extra lines of
/// a's NIC (before its moderation table), `a_moderation` the body of a's
/// static moderation table.
struct Bulk<'a> {
    duration_ms: u64,
    a_tcp: &'a str,
    b_tcp: &'a str,
    a_nic: &'a str,
    a_moderation: &'a str,
    propagation_ns: u64,
}

impl<'a> Bulk<'a> {
    /// The same TCP settings on both hosts; no NIC or moderation lines, no
    /// propagation delay.
    fn both(duration_ms: u64, tcp: &'a str) -> Self {
        Bulk {
            duration_ms,
            a_tcp: tcp,
            b_tcp: tcp,
            a_nic: "",
            a_moderation: "",
            propagation_ns: 0,
        }
    }

    fn toml(&self) -> String {
        let tcp = |t: &str| format!("driver = \"napi\"\n[hosts.tcp]\n{t}");
        TwoHosts {
            head: &format!(
                "name = \"bulk\"\nseed = 1\nduration_ms = {}",
                self.duration_ms
            ),
            host_extra: [&tcp(self.a_tcp), &tcp(self.b_tcp)],
            nic_extra: &format!(
                "{}\n[hosts.nics.moderation]\nkind = \"static\"\n{}",
                self.a_nic, self.a_moderation
            ),
            nic_extra_b: Some(""),
            link_extra: &format!("rate = \"1G\"\npropagation_ns = {}", self.propagation_ns),
            apps: IPERF_A_TO_B,
            ..TwoHosts::default()
        }
        .toml()
    }
}

fn goodput_bps(r: &serde_json::Value) -> f64 {
    r["summary"]["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "iperf_receiver")
        .expect("an iperf receiver")["throughput_bps"]
        .as_f64()
        .unwrap()
}

/// Both hosts: the whole window from the start (payload accounting) and a
/// 256 KB receive buffer (a 192 KB window), so the window never limits a
/// flow whose round trip is one throttle interval.
const WIDE: &str = "skb_truesize_bytes = 0\nrmem_default = 262144";

/// ITR 2000/s: register 1e9 / (2000 x 256) = 1953, a minimum interval of
/// 1953 x 256 = 499 968 ns between the sender's interrupts.
const ITR_2000: &str = "itr_per_s = 2000";
const D_NS: f64 = 1953.0 * 256.0;

/// 1 s of iperf a -> b, both WIDE, a's ITR 2000/s and TSQ limit
/// `limit_output_bytes` (0: TSQ off).
fn tsq_run(limit_output_bytes: u32) -> serde_json::Value {
    let a_tcp = format!("{WIDE}\nlimit_output_bytes = {limit_output_bytes}");
    run(&Bulk {
        duration_ms: 1000,
        a_tcp: &a_tcp,
        b_tcp: WIDE,
        a_nic: "",
        a_moderation: ITR_2000,
        propagation_ns: 0,
    }
    .toml())
}

#[test]
fn tsq_limits_a_bulk_sender_to_its_budget_per_tx_completion_interval() {
    // The sender's interrupts come once per D (ITR 2000/s, TXDW and the
    // ACKs' RX causes are always pending by then), and each NAPI poll
    // reclaims every descriptor the wire finished. TSQ lets a segment go
    // while the truesize already below TCP is at most the limit L, so after
    // a poll has freed everything it sends N = floor(L / T) + 1 segments
    // (T = truesize of a 1448-byte segment, 1448 + 1280) and then waits for
    // the next TX completion: a poll, D later. The ACKs of the N segments
    // are in by then (the receiver is not throttled), so the retransmit-
    // queue exemption (at most one segment unacknowledged) does not fire
    // before the N are out, and the window (192 KB) never binds. The pacing
    // term (rate >> 10, about 150 KB at a 0.5 ms RTT) exceeds L, so the
    // sysctl decides. Goodput = N x 1448 x 8 / D while the N frames take
    // less than D on the wire (N x 12.3 us).
    let t = tx_truesize(1448) as f64;
    for limit in [8192u32, 32768] {
        let n = (limit as f64 / t).floor() + 1.0;
        let want = n * 1448.0 * 8.0 / (D_NS / 1e9);
        let r = tsq_run(limit);
        let got = goodput_bps(&r);
        assert!(
            (got - want).abs() <= want * 0.02,
            "limit {limit}: {got} vs {want} (N = {n})"
        );
        let side = &r["summary"]["tcp"][0]["sides"][0];
        assert!(side["tsq_throttles"].as_u64().unwrap() > 1000, "{side}");
        assert_eq!(side["retransmits"], 0);
    }
    // TSQ off, the same interrupts: nothing waits for TX completions and
    // the window covers a round trip, so the flow moves line rate.
    let r = tsq_run(0);
    let got = goodput_bps(&r);
    assert!(
        got > LINE_GOODPUT_BPS * 0.99 && got <= LINE_GOODPUT_BPS * 1.0001,
        "{got}"
    );
    assert!(r["summary"]["tcp"][0]["sides"][0]
        .get("tsq_throttles")
        .is_none());
}

#[test]
fn bql_keeps_the_ring_near_twice_the_bytes_completed_per_poll() {
    // TSQ off, BQL on, ITR 2000/s (D = 499 968 ns), a window (768 KB) and
    // send buffer (1 MB) far above the ring's share, so the qdisc always
    // holds more. Each poll completes what the wire sent in D: k = D /
    // 12 304 ns = 40.6 frames of S = 1514 bytes (skb->len, no FCS), 40 or
    // 41. By the DQL rules (host::dql tests: a queue refilled right after
    // each completion pass converges to twice the bytes completed per pass,
    // dipping by one object after each one-second hold) the limit ends
    // between 2 x 40 x S - S and 2 x 41 x S + S, and a refill leaves at
    // most one packet over the limit in flight. The wire never idles:
    // line rate.
    let s = 1514u64;
    let tcp = "skb_truesize_bytes = 0\nrmem_default = 1048576\nwmem_max = 1048576\nlimit_output_bytes = 0";
    let r = run(&Bulk {
        a_nic: "bql = true",
        a_moderation: ITR_2000,
        ..Bulk::both(500, tcp)
    }
    .toml());
    let bql = &r["summary"]["ports"][0]["bql"];
    let limit = bql["limit_bytes"].as_u64().unwrap();
    assert!((79 * s..=83 * s).contains(&limit), "{bql}");
    let inflight = bql["inflight_max_bytes"].as_u64().unwrap();
    assert!(inflight <= 83 * s + s, "{bql}");
    let got = goodput_bps(&r);
    assert!(got > LINE_GOODPUT_BPS * 0.99, "{got}");
    // The receiver's ring has BQL off (the scenario sets it on a only).
    assert!(r["summary"]["ports"][1].get("bql").is_none());
}

#[test]
fn autotuning_opens_the_window_past_64_kb_on_a_long_path() {
    // 5 ms each way: RTT 10 ms, a bandwidth-delay product of 1.18 MB. A
    // fixed receive buffer (tcp_rmem[1] 87380) offers the free space less
    // a quarter, in whole segments; each ACK goes out while the segment it
    // answers is still unread, so the offer is (87380 - 1448) x 3/4 ->
    // 44 x 1448 = 63712 bytes (as in the stack::tcp test
    // window_limited_throughput_is_window_over_rtt), and the flow moves one
    // window per round trip: 63712 x 8 / 10 ms = 51.0 Mb/s. The round trip
    // adds about 15 us of serialisation and DMA to the 10 ms, and slow start
    // from 3 segments costs about 3 of the 300 round trips of a 3 s run:
    // within 2 %. With autotuning (tcp_rmem[2] = 2 MB) the receiver grows
    // its buffer from the bytes read per round trip: the window (3/4 of
    // 2 MB = 1.5 MB at most) passes the BDP and the flow reaches line rate
    // after slow start; over 3 s the ramp costs under 10 %. The sender's
    // send buffer (4 MB, Linux tcp_wmem[2]) does not bind.
    let prop = 5_000_000;
    let fixed = "skb_truesize_bytes = 0\nwmem_max = 4194304\nmoderate_rcvbuf = false";
    let r = run(&Bulk {
        propagation_ns: prop,
        ..Bulk::both(3000, fixed)
    }
    .toml());
    let want = 63712.0 * 8.0 / (2.0 * prop as f64 / 1e9);
    let got = goodput_bps(&r);
    assert!((got - want).abs() <= want * 0.02, "fixed: {got} vs {want}");
    let tuned =
        "skb_truesize_bytes = 0\nwmem_max = 4194304\nmoderate_rcvbuf = true\nrmem_max = 2097152";
    let r = run(&Bulk {
        propagation_ns: prop,
        ..Bulk::both(3000, tuned)
    }
    .toml());
    let got = goodput_bps(&r);
    assert!(got > LINE_GOODPUT_BPS * 0.9, "autotuned: {got}");
    let rcvbuf = r["summary"]["tcp"][0]["sides"][1]["rcvbuf"]
        .as_u64()
        .unwrap();
    // Window from the buffer: rcvbuf - rcvbuf/4 > 64 KB.
    assert!(rcvbuf - rcvbuf / 4 > 65_535, "{rcvbuf}");
    assert_eq!(r["summary"]["tcp"][0]["sides"][0]["retransmits"], 0);
}

/// Two hosts of `profile` with `driver`, an iperf flow a -> b (50 ms).
fn defaults_toml(profile: &str, driver: &str, a_tcp: &str, a_nic: &str) -> String {
    // OpenBSD em runs one MSI vector (em_enable_msix = 0); the model has no
    // MSI-X handler for it.
    let msi = if driver == "openbsd-intr" {
        "interrupt_mode = \"msi\"\n"
    } else {
        ""
    };
    let a_nic = format!("{msi}{a_nic}");
    TwoHosts {
        head: "name = \"defaults\"\nduration_ms = 50",
        profile,
        chip: "82574",
        host_extra: [
            &format!("driver = \"{driver}\"\n[hosts.tcp]\n{a_tcp}"),
            &format!("driver = \"{driver}\""),
        ],
        nic_extra: &a_nic,
        nic_extra_b: Some(msi),
        link_extra: "rate = \"1G\"",
        apps: IPERF_A_TO_B,
        ..TwoHosts::default()
    }
    .toml()
}

#[test]
fn the_features_follow_the_profile_kernel_under_a_linux_driver_only() {
    // xeon-modern describes Linux 6.12: under a Linux driver TSQ, BQL and
    // autotuning are on (the report shows their fields); the same machine
    // under OpenBSD's driver, and the 2004 Linux 2.6.6 profile, have none.
    let on = run(&defaults_toml("xeon-modern", "napi", "", ""));
    let side = &on["summary"]["tcp"][0]["sides"][0];
    assert!(side.get("tsq_throttles").is_some(), "{side}");
    assert!(side.get("rcvbuf").is_some(), "{side}");
    assert!(on["summary"]["ports"][0].get("bql").is_some());
    for (profile, driver) in [("xeon-modern", "openbsd-intr"), ("p4-xeon-2004", "napi")] {
        let off = run(&defaults_toml(profile, driver, "", ""));
        let side = &off["summary"]["tcp"][0]["sides"][0];
        assert!(side.get("tsq_throttles").is_none(), "{profile} {driver}");
        assert!(side.get("rcvbuf").is_none(), "{profile} {driver}");
        assert!(off["summary"]["ports"][0].get("bql").is_none());
    }
    // A scenario setting overrides the default either way.
    let set = run(&defaults_toml(
        "p4-xeon-2004",
        "napi",
        "limit_output_bytes = 65536\nmoderate_rcvbuf = true",
        "bql = true",
    ));
    let side = &set["summary"]["tcp"][0]["sides"][0];
    assert!(side.get("tsq_throttles").is_some() && side.get("rcvbuf").is_some());
    assert!(set["summary"]["ports"][0].get("bql").is_some());
}

#[test]
fn linux_only_features_are_refused_under_a_bsd_driver() {
    use holdoff_core::api::validate_toml;
    for (tcp, nic, field) in [
        (
            "limit_output_bytes = 65536",
            "",
            "hosts[0].tcp.limit_output_bytes",
        ),
        ("", "bql = true", "hosts[0].nics[0].bql"),
        ("rmem_max = 4096", "", "hosts[0].tcp.rmem_max"),
    ] {
        let err = validate_toml(&defaults_toml(
            "opteron-2006",
            "freebsd-taskqueue",
            tcp,
            nic,
        ))
        .expect_err(field)
        .to_string();
        assert!(err.contains(field), "{err}");
    }
    // Turning them off is accepted anywhere.
    validate_toml(&defaults_toml(
        "opteron-2006",
        "freebsd-taskqueue",
        "limit_output_bytes = 0\nmoderate_rcvbuf = true",
        "bql = false",
    ))
    .unwrap();
}

#[test]
fn the_send_buffer_ceiling_is_the_kernels() {
    // 5 ms each way at 1 Gb/s: RTT 10 ms, a bandwidth-delay product of
    // 1.18 MB. The receiver autotunes (xeon-modern: tcp_rmem[2] 6 MB), so
    // its window passes the BDP; what bounds the sender is its send
    // buffer, which follows cwnd (2 x cwnd x MSS, tcp_new_space) up to
    // tcp_wmem[2] and holds every byte not yet acknowledged. A modern
    // Linux tcp_init sets tcp_wmem[2] to 4 MB: past the BDP, so the flow
    // reaches line rate after slow start (the ramp costs under 10 % of 3
    // s). Linux 2.6.6's 131072 holds 90 segments of 1448 bytes (130320
    // bytes) per round trip: 130320 x 8 / 10 ms = 104.3 Mb/s, within 3 %
    // (the ramp and the 15 us of serialisation per round trip).
    let prop = 5_000_000;
    let two_hosts = |a_tcp: &str| {
        TwoHosts {
            head: "name = \"wmem\"\nseed = 1\nduration_ms = 3000",
            profile: "xeon-modern",
            chip: "82574",
            host_extra: [
                &format!("driver = \"napi\"\n[hosts.tcp]\nskb_truesize_bytes = 0\n{a_tcp}"),
                "driver = \"napi\"\n[hosts.tcp]\nskb_truesize_bytes = 0",
            ],
            link_extra: &format!("rate = \"1G\"\npropagation_ns = {prop}"),
            apps: IPERF_A_TO_B,
            ..TwoHosts::default()
        }
        .toml()
    };
    let modern = goodput_bps(&run(&two_hosts("")));
    assert!(modern > LINE_GOODPUT_BPS * 0.9, "modern default: {modern}");
    let old = goodput_bps(&run(&two_hosts("wmem_max = 131072")));
    let want = 130_320.0 * 8.0 / (2.0 * prop as f64 / 1e9);
    assert!((old - want).abs() <= want * 0.03, "131072: {old} vs {want}");
}
