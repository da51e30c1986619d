//! Host profile files (`hosts[].profile = "x.toml"`): a preset with costs
//! replaced, read relative to the scenario file's directory. Checked here:
//! a file that sets no cost runs exactly as its preset; a file's costs act
//! exactly as the same `profile_overrides` do; overrides apply after the
//! file; a receive cost set in a file gives the closed-form CPU time; errors
//! name the field and the file.

mod common;
use common::OneHost;
use holdoff_core::api;
use std::path::{Path, PathBuf};

/// A fresh directory for one test's files.
fn dir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "holdoff-profile-files-{}-{test}",
        std::process::id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The run's outcome: its report without the echo of the scenario
/// (`config`), which spells the profile as the scenario wrote it.
fn report(toml: &str, base: Option<&Path>) -> String {
    let out = api::run_toml_in(toml, None, None, base)
        .unwrap_or_else(|e| panic!("scenario runs: {e}"))
        .report_json;
    let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v.as_object_mut().unwrap().remove("config");
    v.to_string()
}

/// Two outcomes are the same (without printing them whole).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a == b
}

/// 60 kpps of 512-B frames into a p4-xeon-2004 host for 100 ms.
fn scenario(profile: &'static str, host_extra: &'static str) -> String {
    OneHost {
        profile,
        rate_pps: 60_000.0,
        frame_bytes: 512,
        duration_ms: 100,
        moderation: "itr_per_s = 8000".into(),
        host_extra,
        ..OneHost::default()
    }
    .toml()
}

#[test]
fn a_file_without_costs_runs_exactly_as_its_preset() {
    // Same name, no costs: nothing differs, down to the report's bytes.
    let d = dir("nocost");
    std::fs::write(
        d.join("h.toml"),
        "base = \"p4-xeon-2004\"\nname = \"p4-xeon-2004\"\n",
    )
    .unwrap();
    let preset = report(&scenario("p4-xeon-2004", ""), None);
    let file = report(&scenario("h.toml", ""), Some(&d));
    assert!(same(&preset, &file), "file run differs from the preset run");
}

#[test]
fn file_costs_act_as_profile_overrides_and_overrides_apply_after_them() {
    let d = dir("compose");
    std::fs::write(
        d.join("h.toml"),
        "base = \"p4-xeon-2004\"\nname = \"p4-xeon-2004\"\n[costs]\nrx_packet_ns = 5000\n\
         irq_entry_exit_ns = 3000\ncopy_ps_per_byte = 2000\n[fit]\nnote = \"ignored\"\n",
    )
    .unwrap();
    // The file's costs = the same costs as scenario overrides on the preset.
    let by_overrides = report(
        &scenario(
            "p4-xeon-2004",
            "profile_overrides = { rx_packet_ns = 5000, irq_entry_exit_ns = 3000, copy_ps_per_byte = 2000 }",
        ),
        None,
    );
    assert!(same(
        &by_overrides,
        &report(&scenario("h.toml", ""), Some(&d))
    ));
    assert!(!same(
        &by_overrides,
        &report(&scenario("p4-xeon-2004", ""), None)
    ));
    // An override on top of the file wins for the cost it names; the
    // file's other costs stay.
    let on_top = report(
        &scenario("h.toml", "profile_overrides = { rx_packet_ns = 2500 }"),
        Some(&d),
    );
    let expect = report(
        &scenario(
            "p4-xeon-2004",
            "profile_overrides = { rx_packet_ns = 2500, irq_entry_exit_ns = 3000, copy_ps_per_byte = 2000 }",
        ),
        None,
    );
    assert!(same(&on_top, &expect), "overrides on a file differ");
}

#[test]
fn a_receive_cost_from_a_file_gives_the_closed_form_cpu() {
    // An ideal host whose only cost is 10 us per received packet, from a
    // file, fed 20 000 frames/s at a constant rate: busy = 20 000 x 10 us
    // per second = 20 %; at half the clock (cpu_mhz scales file costs as
    // it scales a preset) 40 %. The ideal preset has no clock, so the file
    // sets one through a base that has one: p4-xeon-2004 with every other
    // cost zero.
    let d = dir("closed");
    let mut costs = String::new();
    for c in holdoff_core::host::profile::OVERRIDABLE {
        let v = if c == "rx_packet_ns" { 10_000 } else { 0 };
        costs += &format!("{c} = {v}\n");
    }
    std::fs::write(
        d.join("h.toml"),
        format!("base = \"p4-xeon-2004\"\n[costs]\n{costs}"),
    )
    .unwrap();
    for (extra, want) in [("", 0.20), ("cpu_mhz = 1500", 0.40)] {
        let t = OneHost {
            profile: "h.toml",
            pattern: "constant",
            rate_pps: 20_000.0,
            duration_ms: 200,
            host_extra: extra,
            ..OneHost::default()
        }
        .toml();
        let r: serde_json::Value = serde_json::from_str(&report(&t, Some(&d))).unwrap();
        let h = &r["summary"]["hosts"][0];
        assert_eq!(h["profile"], "h", "default name: the file stem");
        let busy = h["cpu_util"]["busy"].as_f64().unwrap();
        assert!(
            (busy - want).abs() < 0.005,
            "{extra:?}: busy {busy}, want {want}"
        );
    }
}

#[test]
fn profile_file_errors_name_the_field_and_the_file() {
    let d = dir("errors");
    std::fs::write(
        d.join("bad.toml"),
        "base = \"apu2\"\n[costs]\nrx_pkt_ns = 5\n",
    )
    .unwrap();
    let e = |profile: &'static str, base: Option<&Path>| {
        api::validate_toml_in(&scenario(profile, ""), base)
            .unwrap_err()
            .to_string()
    };
    let missing = e("none.toml", Some(&d));
    assert!(missing.contains("hosts[0].profile"), "{missing}");
    assert!(
        missing.contains(&d.join("none.toml").display().to_string()),
        "{missing}"
    );
    let bad = e("bad.toml", Some(&d));
    assert!(bad.contains("hosts[0].profile"), "{bad}");
    assert!(bad.contains("`costs.rx_pkt_ns`"), "{bad}");
    assert!(bad.contains("rx_packet_ns"), "{bad}");
    // Relative to the scenario's directory, not the working directory.
    let here = e("bad.toml", None);
    assert!(here.contains("profile file bad.toml: not found"), "{here}");
    let preset = e("pentium", None);
    assert!(
        preset.contains("apu2") && preset.contains(".toml"),
        "{preset}"
    );
    // The same checks as a file's bound on the scenario override.
    let over = api::validate_toml(&scenario(
        "p4-xeon-2004",
        "profile_overrides = { context_switch_ns = 1000001 }",
    ))
    .unwrap_err()
    .to_string();
    assert!(
        over.contains("profile_overrides.context_switch_ns"),
        "{over}"
    );
}
