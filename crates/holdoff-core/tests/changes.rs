//! Changes during a run (`[[at]]`): validation at load, the instant a change
//! takes effect, what each driver does with it, and the interrupt rate of
//! the bundled FreeBSD AIM example following each `enable_aim` value.
//!
//! Expected values come from the drivers' rules (FreeBSD `em_newitr`, Linux
//! `e1000_set_coalesce`), the register conversions and the generator's
//! schedule, each derived in the test's comment.

mod common;
use common::{run as report, OneHost, TwoHosts};
use holdoff_core::api;
use holdoff_core::error::Error;
use holdoff_core::scenario::Scenario;
use holdoff_core::units::SimTime;

const MS: u64 = 1_000_000;

fn example() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/aim-toggle.toml"
    ))
    .expect("the example")
}

/// Mean of the series `name` over the samples whose interval ends in
/// (`from_ns`, `to_ns`].
fn mean(r: &serde_json::Value, name: &str, from_ns: u64, to_ns: u64) -> f64 {
    let ts = &r["timeseries"];
    let t = ts["t_ns"].as_array().expect("t_ns");
    let v = ts["series"][name].as_array().expect("series");
    let picked: Vec<f64> = t
        .iter()
        .zip(v)
        .filter(|(t, _)| (from_ns + 1..=to_ns).contains(&t.as_u64().unwrap()))
        .map(|(_, v)| v.as_f64().unwrap())
        .collect();
    assert!(!picked.is_empty());
    picked.iter().sum::<f64>() / picked.len() as f64
}

#[test]
fn the_interrupt_rate_follows_each_enable_aim_value() {
    // examples/aim-toggle.toml: 64-byte frames at 30 000/s (one every
    // 33.3 us) into an 82546 with FreeBSD AIM; enable_aim 0, then 1 at
    // 100 ms, 2 at 200 ms, 0 at 300 ms. em_newitr (if_em.c, 2024):
    // - 0: the static max_interrupt_rate 8000 -> ITR 1e9/(8000*256) = 488
    //   (124.928 us). Frames arrive faster than that, so a cause waits at
    //   every interval end: 1e9 / (488 * 256) = 8004.6 interrupts/s.
    // - 1: disabled -> low at the first busy interrupt (20000/s, ITR 195,
    //   49.92 us); with 1 or 2 frames of 64 bytes per interrupt (packets < 3,
    //   bytes < 512) low would become lowest, which mode 1 trims to low:
    //   1e9 / (195 * 256) = 20032.1/s, again throttle-bound.
    // - 2: low -> lowest (70000/s, ITR 55, 14.08 us), shorter than the frame
    //   spacing: every frame is its own interrupt, 30000/s; lowest stays
    //   lowest (1 packet, 64 bytes: not > 512 bytes, bpp not > 8000).
    // - 0 again: 8004.6/s.
    // Each window skips the 10-ms sample that holds its change; the NIC
    // clock (+-30 ppm) and the whole interrupts in a window stay well
    // inside 0.5 %.
    let r = report(&example());
    let name = "dut.em0.v0/interrupts_per_s";
    let itr_rate = |itr: f64| 1e9 / (itr * 256.0);
    let windows = [
        (0, 100, itr_rate(488.0)),
        (100, 200, itr_rate(195.0)),
        (200, 300, 30_000.0),
        (300, 400, itr_rate(488.0)),
    ];
    for (from, to, want) in windows {
        let got = mean(&r, name, (from + 10) * MS, to * MS);
        assert!(
            (got / want - 1.0).abs() < 0.005,
            "{from}..{to} ms: {got:.0}/s, the AIM rules give {want:.0}/s"
        );
    }
    // The report lists the three changes at their instants.
    let changes = r["changes"].as_array().expect("changes");
    let got: Vec<(u64, i64)> = changes
        .iter()
        .map(|c| {
            assert_eq!(c["path"], "hosts[0].nics[0].moderation.enable_aim");
            (c["t_ns"].as_u64().unwrap(), c["value"].as_i64().unwrap())
        })
        .collect();
    assert_eq!(got, vec![(100 * MS, 1), (200 * MS, 2), (300 * MS, 0)]);
}

#[test]
fn runs_with_changes_are_deterministic() {
    let a = api::run_toml(&example(), None).unwrap().report_json;
    let b = api::run_toml(&example(), None).unwrap().report_json;
    assert_eq!(a, b);
}

#[test]
fn a_change_is_the_first_event_of_its_instant_and_e1000_rewrites_itr_then() {
    // Linux e1000_set_coalesce writes ITR from the ethtool call: static
    // 8000/s (ITR 488) -> 20000/s: 1e9 / (20000 * 256) = 195, at 5 ms exactly.
    let text = OneHost {
        pattern: "constant",
        rate_pps: 100_000.0,
        duration_ms: 20,
        moderation: "kind = \"e1000-itr\"\ninterrupt_throttle_rate = 8000".into(),
        ..OneHost::default()
    }
    .toml()
        + "[[at]]\nt_ms = 5\nset = { \"hosts[0].nics[0].moderation.interrupt_throttle_rate\" = 20000 }\n";
    let mut w = api::build(&text, None).unwrap();
    let mut prev = SimTime::ZERO;
    loop {
        let before = w.ports()[0].registers().itr_256ns;
        let t = w.step().expect("the change comes before the end");
        if !w.changes().is_empty() {
            assert_eq!(t, SimTime(5 * MS));
            assert!(prev < t, "no other event of that instant ran before it");
            assert_eq!(before, Some(488));
            assert_eq!(w.ports()[0].registers().itr_256ns, Some(195));
            assert_eq!(w.changes()[0].t_ns, 5 * MS);
            break;
        }
        prev = t;
    }
}

/// An 82546 with FreeBSD AIM (enable_aim 1) fed 64-byte frames at 1000/s;
/// the generator is switched off at 5 ms, `enable_aim` set to 0 at 10 ms,
/// and `extra` appended.
fn idle_readback(extra: &str) -> serde_json::Value {
    let text = OneHost {
        pattern: "constant",
        rate_pps: 1000.0,
        duration_ms: 20,
        moderation: "kind = \"freebsd-aim\"\nenable_aim = 1".into(),
        ..OneHost::default()
    }
    .toml()
        + "[[at]]\nt_ms = 5\nset = { \"generators[0].enabled\" = false }\n\
           [[at]]\nt_ms = 10\nset = { \"hosts[0].nics[0].moderation.enable_aim\" = 0 }\n"
        + extra;
    report(&text)
}

#[test]
fn enable_aim_on_an_idle_port_changes_nothing_until_traffic() {
    // Review D46768: on an idle port, `sysctl dev.em.2.enable_aim=0` left
    // `interrupt_rate` at 20032. The sysctl only sets the variable; the
    // register is rewritten by em_newitr at the next interrupt with bytes.
    // Before: one 64-byte frame per interrupt -> disabled -> low (20000/s,
    // ITR 195; lowest is trimmed to low in mode 1): readback
    // 1e9 / (195 * 256) = 20032 (truncated).
    let r = idle_readback("");
    let v = &r["summary"]["ports"][0]["vectors"][0];
    assert_eq!(v["freebsd_interrupt_rate"], 20032);
    assert_eq!(v["throttle_register"], 195);
    // Traffic again at 15 ms: the first busy interrupt takes the static
    // rate, ITR 488, read back as 1e9 / (488 * 256) = 8004.
    let r = idle_readback("[[at]]\nt_ms = 15\nset = { \"generators[0].enabled\" = true }\n");
    let v = &r["summary"]["ports"][0]["vectors"][0];
    assert_eq!(v["freebsd_interrupt_rate"], 8004);
    assert_eq!(v["throttle_register"], 488);
}

#[test]
fn a_generator_stops_resumes_and_changes_rate() {
    // Constant 10 000 frames/s (100 us apart) for 100 ms. Off at 20 ms: the
    // change runs before the frame due at 20.0 ms, so frames 0.0 .. 19.9 ms
    // go out (200). On at 50 ms: a frame at once and every 100 us to 69.9
    // ms (200). At 70 ms the rate doubles: the frame already due at 70.0
    // keeps its time, then every 50 us up to 99.95 ms (600). Total 1000.
    let text = OneHost {
        pattern: "constant",
        rate_pps: 10_000.0,
        duration_ms: 100,
        ..OneHost::default()
    }
    .toml()
        + "[[at]]\nt_ms = 20\nset = { \"generators[0].enabled\" = false }\n\
           [[at]]\nt_ms = 50\nset = { \"generators[0].enabled\" = true }\n\
           [[at]]\nt_ms = 70\nset = { \"generators[0].rate_pps\" = 20000 }\n";
    let r = report(&text);
    assert_eq!(r["summary"]["generators"][0]["sent_packets"], 1000);
}

#[test]
fn tcp_timers_change_on_every_connection_of_the_host() {
    // Two ideal hosts, an iperf flow a -> b; b's timers change at 10 ms.
    let text = TwoHosts {
        head: "name = \"tcp-at\"\nduration_ms = 20",
        link_extra: "rate = \"1G\"",
        apps: "[[apps]]\nkind = \"iperf\"\nname = \"bulk\"\nhost = \"a\"\nto = \"b\"\n\
               [[at]]\nt_ms = 10\n\
               set = { \"hosts[1].tcp.delack_us\" = 1000, \"hosts[1].tcp.rto_min_ms\" = 5 }\n",
        ..TwoHosts::default()
    }
    .toml();
    let mut w = api::build(&text, None).unwrap();
    w.run();
    assert_eq!(w.changes().len(), 2);
    let c = &w.conns()[0];
    for side in 0..2 {
        let cfg = &c.ep[side].cfg;
        if c.host[side] == 1 {
            assert_eq!(
                (cfg.delack.as_ns(), cfg.rto_min.as_ns()),
                (1_000_000, 5 * MS)
            );
        } else {
            // Host a keeps the Linux defaults: 40 ms, 200 ms.
            assert_eq!(
                (cfg.delack.as_ns(), cfg.rto_min.as_ns()),
                (40 * MS, 200 * MS)
            );
        }
    }
}

/// The error of the example with `at` in place of its `[[at]]` tables.
fn error(at: &str) -> (String, String) {
    let base = example();
    let base = &base[..base.find("[[at]]").unwrap()];
    match Scenario::from_toml(&format!("{base}{at}")) {
        Err(Error::Config { field, message }) => (field, message),
        other => panic!("expected a config error for {at:?}, got {other:?}"),
    }
}

#[test]
fn changes_are_validated_at_load_with_the_path_named() {
    let m = "hosts[0].nics[0].moderation";
    let table = [
        // At or after the end of the run.
        (
            "[[at]]\nt_ms = 400\nset = { \"generators[0].rate_pps\" = 1 }".to_string(),
            "at[0].t_ms",
            "allowed: 0 to 399",
        ),
        (
            "[[at]]\nt_ms = 1\nset = {}".into(),
            "at[0].set",
            "at least one",
        ),
        // A bad path, a missing index.
        (
            "[[at]]\nt_ms = 1\nset = { \"hosts[0]..x\" = 1 }".into(),
            "at[0].set.\"hosts[0]..x\"",
            "is not a field path",
        ),
        (
            "[[at]]\nt_ms = 1\nset = { \"hosts[3].cores\" = 2 }".into(),
            "at[0].set.\"hosts[3].cores\"",
            "index 3 is out of range",
        ),
        // A value the kind refuses: the inner field is named too.
        (
            format!("[[at]]\nt_ms = 1\nset = {{ \"{m}.enable_aim\" = 3 }}"),
            "at[0].set.\"hosts[0].nics[0].moderation.enable_aim\"",
            "after this change, hosts[0].nics[0].moderation.enable_aim: got 3; allowed: 0, 1, 2",
        ),
        // A field that does not exist.
        (
            format!("[[at]]\nt_ms = 1\nset = {{ \"{m}.enable_aimm\" = 1 }}"),
            "enable_aimm",
            "unknown field",
        ),
        // Fixed when the interface comes up: the message lists what can change.
        (
            "[[at]]\nt_ms = 1\nset = { \"hosts[0].nics[0].rx_ring\" = 512 }".into(),
            "at[0].set.\"hosts[0].nics[0].rx_ring\"",
            "cannot change during a run",
        ),
        (
            "[[at]]\nt_ms = 1\nset = { \"hosts[0].tcp.mss_bytes\" = 1000 }".into(),
            "hosts[0].tcp.mss_bytes",
            "generators[i].enabled",
        ),
        // A loader tunable (CTLFLAG_RDTUN).
        (
            format!("[[at]]\nt_ms = 1\nset = {{ \"{m}.max_interrupt_rate\" = 4000 }}"),
            "max_interrupt_rate",
            "loader tunable",
        ),
        // Another algorithm is another driver.
        (
            format!("[[at]]\nt_ms = 1\nset = {{ \"{m}\" = {{ kind = \"static\" }} }}"),
            "at[0].set.\"hosts[0].nics[0].moderation\"",
            "cannot change its kind",
        ),
    ];
    for (at, field, msg) in table {
        let (f, m) = error(&at);
        assert!(f.contains(field), "{at}: field {f}");
        assert!(m.contains(msg), "{at}: {m}");
    }
}

#[test]
fn changes_apply_cumulatively_in_time_order() {
    // Static moderation without a throttle field: itr_256ns at 10 ms is
    // valid alone, and so is itr_per_s at 20 ms alone; applied in time order
    // (the later table is written first) the second leaves both set, which
    // the static kind refuses ("at most one of").
    let base = OneHost {
        duration_ms: 50,
        ..OneHost::default()
    }
    .toml();
    let p = "hosts[0].nics[0].moderation";
    let text = format!(
        "{base}[[at]]\nt_ms = 20\nset = {{ \"{p}.itr_per_s\" = 8000 }}\n\
         [[at]]\nt_ms = 10\nset = {{ \"{p}.itr_256ns\" = 100 }}\n"
    );
    match Scenario::from_toml(&text) {
        Err(Error::Config { field, message }) => {
            assert_eq!(field, format!("at[0].set.\"{p}.itr_per_s\""));
            assert!(message.contains("at most one of"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // Each alone is fine.
    for (t, f, v) in [(20, "itr_per_s", 8000), (10, "itr_256ns", 100)] {
        let one = format!("{base}[[at]]\nt_ms = {t}\nset = {{ \"{p}.{f}\" = {v} }}\n");
        Scenario::from_toml(&one).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
}

#[test]
fn a_change_at_zero_gives_the_scenario_of_set() {
    // `[[at]] t_ms = 0` with a path means the scenario `--set` makes: the
    // scenario in effect after it is the file with the value written in.
    let at = "[[at]]\nt_ms = 0\nset = { \"hosts[*].nics[0].moderation.enable_aim\" = 2, \
              \"generators[0].rate_pps\" = 1000 }\n";
    let base = example();
    let base = &base[..base.find("[[at]]").unwrap()];
    let after = api::normalize_toml_after_changes(&format!("{base}{at}")).unwrap();
    let written = base
        .replace("enable_aim = 0", "enable_aim = 2")
        .replace("rate_pps = 30000", "rate_pps = 1000");
    assert_eq!(after, api::normalize_toml(&written).unwrap());
}

#[test]
fn igb_writes_the_new_interval_at_the_next_interrupt() {
    // igb_set_coalesce sets q_vector->itr_val = rx_usecs << 2 and set_itr;
    // igb_write_itr writes EITR at the vector's next interrupt. rx-usecs
    // 100 -> 50 at 5 ms under 100 000 frames/s (10 us apart): EITR still
    // reads 100 us after the change event, 50 us after the next interrupt,
    // which comes within one old interval (100 us) and a frame.
    let text = OneHost {
        chip: "i350",
        pattern: "constant",
        rate_pps: 100_000.0,
        duration_ms: 10,
        moderation: "kind = \"igb\"\nrx_usecs = 100".into(),
        ..OneHost::default()
    }
    .toml()
        + "[[at]]\nt_ms = 5\nset = { \"hosts[0].nics[0].moderation.rx_usecs\" = 50 }\n";
    let mut w = api::build(&text, None).unwrap();
    let eitr = |w: &holdoff_core::scenario::World| w.ports()[0].registers().eitr_us.unwrap()[0];
    while w.changes().is_empty() {
        w.step().unwrap();
    }
    assert_eq!(eitr(&w), 100, "not written by the ethtool call itself");
    let written_at = loop {
        let t = w.step().unwrap();
        if eitr(&w) == 50 {
            break t;
        }
    };
    assert!(
        written_at > SimTime(5 * MS) && written_at <= SimTime(5 * MS + 110_000),
        "{written_at:?}"
    );
}
