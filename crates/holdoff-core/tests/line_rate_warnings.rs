//! The line-rate warnings of `holdoff explain` repeated in the run summary
//! (issue #17): a static interval or a delay timer longer than the RX ring
//! takes to fill, or the TX ring to drain, with 64-byte frames at line rate,
//! and a TX completion delay longer than a Linux sender's TSQ budget.
//!
//! Expected numbers are closed forms at 1 Gb/s: a 64-byte frame takes
//! (64 + 8 + 12) × 8 = 672 bits = 672 ns on the wire, so 256 descriptors
//! fill (or drain) in 256 × 672 = 172 032 ns = 172.0 us (seed 004's
//! arithmetic); ITR counts 256 ns, TIDV/TADV 1024 ns, igb-class EITR 1 us;
//! TSQ's 1 MiB default (Linux kernel defaults of the modern profile) lasts
//! 1 048 576 × 8 = 8 388 608 ns at 1 Gb/s. The checks are strict (`>`), as
//! in `knobs.py` `check()`.

mod common;
use common::{summary, OneHost};
use serde_json::Value;

/// A light load for 5 ms into one port of `chip`, moderation body `moderation`.
fn run(
    profile: &'static str,
    chip: &'static str,
    moderation: &str,
    host_extra: &'static str,
) -> Value {
    summary(
        &OneHost {
            profile,
            chip,
            pattern: "constant",
            rate_pps: 20_000.0,
            duration_ms: 5,
            seed: 1,
            moderation: moderation.into(),
            host_extra,
            ..OneHost::default()
        }
        .toml(),
    )
}

/// (field, message) of every warning.
fn warnings(s: &Value) -> Vec<(String, String)> {
    s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["field"].as_str().unwrap().to_string(),
                w["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn interval_at_the_fill_time_is_quiet_one_step_longer_warns() {
    // ITR 672 × 256 ns = 172 032 ns: exactly the fill time, not longer.
    let s = run("ideal", "82546", "itr_256ns = 672", "");
    assert_eq!(warnings(&s), vec![]);
    // ITR 673 × 256 ns = 172 288 ns = 172.3 us > 172.0 us: RX fills, and the
    // TX ring (also 256) drains, before the next interrupt.
    let s = run("ideal", "82546", "itr_256ns = 673", "");
    let w = warnings(&s);
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(w[0].0, "hosts[0].nics[0].moderation.itr_256ns");
    assert!(
        w[0].1.contains("the interval (172.3 us)")
            && w[0].1.contains("256-descriptor RX ring")
            && w[0].1.contains("(172.0 us)"),
        "{}",
        w[0].1
    );
    assert_eq!(w[1].0, "hosts[0].nics[0].moderation.itr_256ns");
    assert!(
        w[1].1.contains("172.3 us (the interval)") && w[1].1.contains("drains in 172.0 us"),
        "{}",
        w[1].1
    );
}

#[test]
fn igb_static_interval_warns_adaptive_does_not() {
    // rx_usecs 200: EITR 200 us on the i210 (1 us units) > 172.0 us, for
    // the RX ring and the TX ring. igb's config has no register field, so
    // the warning names the table.
    let s = run("ideal", "i210", "kind = \"igb\"\nrx_usecs = 200", "");
    let w = warnings(&s);
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(w[0].0, "hosts[0].nics[0].moderation");
    assert!(w[0].1.contains("(200.0 us)"), "{}", w[0].1);
    // Mode 3 (dynamic conservative): the interval moves; not checked.
    let s = run("ideal", "i210", "kind = \"igb\"\nrx_usecs = 3", "");
    assert_eq!(warnings(&s), vec![]);
}

#[test]
fn tadv_longer_than_the_tx_ring_warns_on_tadv() {
    // Seed 004: TADV 220 × 1.024 us = 225.28 us > 172.0 us; the 8254x has
    // IDE, TIDV and TADV and no MSI-X, so the timers act. Throttle off.
    let s = run(
        "ideal",
        "82546",
        "itr_256ns = 0\ntidv_1024ns = 220\ntadv_1024ns = 220",
        "",
    );
    let w = warnings(&s);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "hosts[0].nics[0].moderation.tadv_1024ns");
    assert!(
        w[0].1.contains("225.3 us (the TX delay timer)") && w[0].1.contains("drains in 172.0 us"),
        "{}",
        w[0].1
    );
    // TADV 150 × 1.024 = 153.6 us keeps the ring fed (seed 004's good case).
    let s = run(
        "ideal",
        "82546",
        "itr_256ns = 0\ntidv_1024ns = 150\ntadv_1024ns = 150",
        "",
    );
    assert_eq!(warnings(&s), vec![]);
    // TADV off: TIDV 200 × 1.024 = 204.8 us is the delay.
    let s = run("ideal", "82546", "tidv_1024ns = 200", "");
    let w = warnings(&s);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "hosts[0].nics[0].moderation.tidv_1024ns");
    assert!(w[0].1.contains("204.8 us"), "{}", w[0].1);
}

#[test]
fn tx_timers_bypassed_in_msix_mode_give_no_warning() {
    // The 82574 defaults to MSI-X, which bypasses the delay timers: the
    // same TADV 220 cannot delay a completion. The only warnings are the
    // register ones saying TIDV and TADV are held but do not act.
    let s = run(
        "ideal",
        "82574",
        "itr_256ns = 0\ntidv_1024ns = 220\ntadv_1024ns = 220",
        "",
    );
    let w = warnings(&s);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w.iter().all(|(_, m)| m.contains("does not act")), "{w:?}");
}

#[test]
fn rx_delay_timer_longer_than_the_fill_time_warns_on_radv() {
    // RDTR 8 (RADV can act) and RADV 200 × 1.024 = 204.8 us > 172.0 us.
    let s = run("ideal", "82546", "rdtr_1024ns = 8\nradv_1024ns = 200", "");
    let w = warnings(&s);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, "hosts[0].nics[0].moderation.radv_1024ns");
    assert!(
        w[0].1.contains("the RX delay timer (204.8 us)"),
        "{}",
        w[0].1
    );
}

#[test]
fn tsq_budget_at_the_boundary_and_past_it() {
    // Modern Linux host: tcp_limit_output_bytes 1 MiB = 8 388 608 ns at
    // 1 Gb/s. TADV 8192 × 1024 ns = 8 388 608 ns: equal, no TSQ warning
    // (the TX-ring one stays).
    let body = |tadv: u32| format!("itr_256ns = 0\ntidv_1024ns = 8\ntadv_1024ns = {tadv}");
    let s = run("xeon-modern", "82546", &body(8192), "");
    let w = warnings(&s);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].1.contains("drains in 172.0 us"), "{}", w[0].1);
    // TADV 8193: 8 389 632 ns = 8389.6 us > 8388.6 us.
    let s = run("xeon-modern", "82546", &body(8193), "");
    let w = warnings(&s);
    assert_eq!(w.len(), 2, "{w:?}");
    assert_eq!(w[1].0, "hosts[0].nics[0].moderation.tadv_1024ns");
    assert!(
        w[1].1.contains("8389.6 us")
            && w[1].1.contains("8388.6 us")
            && w[1].1.contains("1048576 B"),
        "{}",
        w[1].1
    );
    // TSQ off on the host: only the TX-ring warning.
    let s = run(
        "xeon-modern",
        "82546",
        &body(8193),
        "[hosts.tcp]\nlimit_output_bytes = 0",
    );
    assert_eq!(warnings(&s).len(), 1);
    // The ideal profile's kernel has no TSQ.
    let s = run("ideal", "82546", &body(8193), "");
    assert_eq!(warnings(&s).len(), 1);
}

#[test]
fn default_settings_give_no_warning() {
    // 82546 static with no throttle and no timers; igb on the i210 in its
    // default dynamic mode.
    assert_eq!(warnings(&run("ideal", "82546", "", "")), vec![]);
    assert_eq!(
        warnings(&run("xeon-modern", "i210", "kind = \"igb\"", "")),
        vec![]
    );
}

#[test]
fn a_link_faster_than_the_chips_port_is_named() {
    // The 82546 is a 1000 Mb/s part (chip.rs `link_mbps`): on a 10 Gb/s
    // link the wire delivers frames ten times faster than the port runs.
    let one = OneHost {
        moderation: "itr_256ns = 488".into(),
        duration_ms: 5,
        ..OneHost::default()
    };
    let fast = one.toml().replace("rate = \"1G\"", "rate = \"10G\"");
    let w = warnings(&summary(&fast));
    let chip: Vec<_> = w
        .iter()
        .filter(|(f, _)| f == "hosts[0].nics[0].chip")
        .collect();
    assert_eq!(chip.len(), 1, "{w:?}");
    assert!(
        chip[0]
            .1
            .starts_with("the 82546's port runs at 1000 Mb/s and its link at 10000 Mb/s"),
        "{}",
        chip[0].1
    );
    // At its own speed: not named.
    let w = warnings(&summary(&one.toml()));
    assert!(w.iter().all(|(f, _)| f != "hosts[0].nics[0].chip"), "{w:?}");
}
