//! Linux lib/dim written in C (moderators/c/net_dim.c), compiled through
//! the `c` kind, against the Rust DIM (`moderation/dim.rs`): the same
//! sample sequences give the same decision at every step: sequences
//! recorded from simulated runs of four workloads and generated sequences
//! that drive the tuner through every state (both replayed alone), and the
//! simulated runs themselves, where the C moderator queues the same
//! work at the same polls, its work writes the same profile at the same
//! instants, and the whole run equals the built-in's. Skipped when no C
//! compiler is installed.

mod common;
use common::{run, OneHost};
use holdoff_core::api;
use holdoff_core::moderation::c_abi::compile;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::Path;

fn net_dim_c() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../moderators/c/net_dim.c")
        .to_string_lossy()
        .into_owned()
}

fn have_cc() -> bool {
    let ok = std::process::Command::new(compile::compiler())
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED: no C compiler (`{}`)", compile::compiler());
    }
    ok
}

/// xeon-modern's work delay: wakeup_ns 500 + context_switch_ns 1000.
const PORT: &str = r#"{"chip":"i210","link_mbps":1000,"hz":1000,"vectors":1,"work_delay_ns":1500}"#;

/// (call, t_ns, eitr_us written) of one step.
type Step = (String, u64, Option<u64>);

/// Every step, and the algorithm's trace of each.
fn replay(table: Value, rows: &[[u64; 6]]) -> (Vec<Step>, Vec<Value>) {
    let out = api::replay_json(&table.to_string(), PORT, 0, None, rows).expect("replays");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["failure"].is_null(), "{}", v["failure"]);
    let steps = v["steps"].as_array().unwrap();
    let calls = steps
        .iter()
        .map(|s| {
            (
                s["call"].as_str().unwrap().to_string(),
                s["t_ns"].as_u64().unwrap(),
                s["eitr_us"].as_u64(),
            )
        })
        .collect();
    (calls, steps.iter().map(|s| s["trace"].clone()).collect())
}

/// States the built-in passed through: (tune_state, cmp) values seen.
fn visited(traces: &[Value], into: &mut BTreeSet<(&'static str, i64)>) {
    for t in traces {
        for pair in t.as_array().into_iter().flatten() {
            let (k, v) = (pair[0].as_str().unwrap(), pair[1].as_i64().unwrap());
            for key in ["tune_state", "cmp", "tired"] {
                if k == key && (key != "tired" || v == 10) {
                    into.insert((key, v));
                }
            }
        }
    }
}

fn compare(profile: &str, rows: &[[u64; 6]], seen: &mut BTreeSet<(&'static str, i64)>) {
    let set = ["rx-eqe", "rx-cqe", "tx-eqe", "tx-cqe"]
        .iter()
        .position(|p| *p == profile)
        .unwrap();
    let (rust, traces) = replay(json!({"kind": "dim", "profile": profile}), rows);
    let (c, _) = replay(
        json!({"kind": "c", "source": net_dim_c(), "entry": "net_dim_poll",
               "params": {"profile": set}}),
        rows,
    );
    assert_eq!(rust.len(), c.len(), "{profile}: step counts");
    for (i, (a, b)) in rust.iter().zip(&c).enumerate() {
        assert_eq!(a, b, "{profile}: step {i}: built-in {a:?}, C {b:?}");
    }
    visited(&traces, seen);
}

fn workload(rate_pps: f64, frame_bytes: u32, moderation: String) -> OneHost {
    OneHost {
        profile: "xeon-modern",
        chip: "i210",
        rate_pps,
        frame_bytes,
        duration_ms: 300,
        moderation,
        ..Default::default()
    }
}

/// A simulated run's summary.
fn summary(s: &OneHost) -> Value {
    run(&s.toml())["summary"].clone()
}

/// The decisions in a run's moderation trace: (t_ns, work, eitr_us when
/// the work wrote it). Rows are traced when a call queued work (1) and
/// when the work ran (2).
fn decisions(summary: &Value) -> Vec<(u64, i64, Option<i64>)> {
    summary["ports"][0]["moderation_trace"]
        .as_array()
        .expect("a trace")
        .iter()
        .map(|row| {
            let v = &row["values"];
            let work = v["work"].as_i64().unwrap();
            let eitr = (work == 2).then(|| v["eitr_us"].as_i64().unwrap());
            (row["t_ns"].as_u64().unwrap(), work, eitr)
        })
        .collect()
}

#[test]
fn c_net_dim_decides_as_the_rust_dim_on_generated_traces() {
    if !have_cc() {
        return;
    }
    let mut seen = BTreeSet::new();
    // Generated: rates that step up and down every few measurements, so the
    // tuner goes right and left, parks on top, and tires out.
    let mut x = 12345u64;
    let mut rows = Vec::new();
    let (mut t, mut level) = (0u64, 100u64);
    for i in 0..20_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if i % 500 == 0 {
            level = [3, 100, 40, 400, 10, 900][(x >> 40) as usize % 6];
        }
        t += 2_000 + (x >> 33) % 9_000;
        let pkts = level / 10 + (x >> 50) % (level / 10 + 1);
        rows.push([
            t,
            pkts,
            pkts * (64 + (x >> 20) % 1400),
            pkts / 2,
            pkts * 80,
            1,
        ]);
    }
    for profile in ["rx-eqe", "rx-cqe", "tx-eqe", "tx-cqe"] {
        compare(profile, &rows, &mut seen);
    }
    for state in [
        ("tune_state", 0),
        ("tune_state", 1),
        ("tune_state", 2),
        ("tune_state", 3),
        ("cmp", 0),
        ("cmp", 1),
        ("cmp", 2),
        ("tired", 10),
    ] {
        assert!(
            seen.contains(&state),
            "no trace reached {state:?}: {seen:?}"
        );
    }
}

#[test]
fn runs_with_c_net_dim_decide_as_runs_with_the_builtin() {
    if !have_cc() {
        return;
    }
    let c = format!(
        "kind = \"c\"\nsource = {:?}\nentry = \"net_dim_poll\"",
        net_dim_c()
    );
    let builtin = "kind = \"dim\"\nprofile = \"rx-eqe\"".to_string();
    for (rate, frame) in [
        (5_000.0, 64),
        (120_000.0, 1500),
        (300_000.0, 64),
        (800_000.0, 64),
    ] {
        let a = summary(&workload(rate, frame, builtin.clone()));
        let b = summary(&workload(rate, frame, c.clone()));
        let (da, db) = (decisions(&a), decisions(&b));
        assert_eq!(da, db, "{rate} pps, {frame} B: decisions");
        assert_eq!(
            a["apps"], b["apps"],
            "{rate} pps: the same decisions, the same run"
        );
        for k in ["rx_packets", "interrupts", "vectors", "registers"] {
            assert_eq!(a["ports"][0][k], b["ports"][0][k], "{rate} pps: {k}");
        }
        if rate >= 120_000.0 {
            assert!(
                da.len() >= 2,
                "{rate} pps: DIM changed its profile ({da:?})"
            );
        }
    }
}

/// The per-poll samples a simulated DIM run handed its moderator (the core's
/// sample recording, as `holdoff battery --trace` writes them).
fn recorded(s: &OneHost) -> Vec<[u64; 6]> {
    let out =
        api::run_toml_recorded_in(&s.toml(), None, None, &mut |_| true, None, true).expect("runs");
    let (rows, dropped) = out.samples.expect("recorded");
    assert_eq!(dropped, 0);
    rows.iter()
        .filter(|r| r.port == 0 && r.vector == 0)
        .map(|r| {
            let x = &r.sample;
            [
                x.now.as_ns(),
                x.rx_packets,
                x.rx_bytes,
                x.tx_packets,
                x.tx_bytes,
                x.interrupts,
            ]
        })
        .collect()
}

#[test]
fn c_net_dim_decides_as_the_rust_dim_on_recorded_traces() {
    if !have_cc() {
        return;
    }
    let mut seen = BTreeSet::new();
    let builtin = "kind = \"dim\"\nprofile = \"rx-eqe\"".to_string();
    for (rate, frame) in [
        (5_000.0, 64),
        (120_000.0, 1500),
        (300_000.0, 64),
        (800_000.0, 64),
    ] {
        let rows = recorded(&workload(rate, frame, builtin.clone()));
        assert!(rows.len() > 100, "{rate} pps: {} polls", rows.len());
        for profile in ["rx-eqe", "rx-cqe", "tx-eqe", "tx-cqe"] {
            compare(profile, &rows, &mut seen);
        }
    }
    // The runs' sequences make the tuner leave parking and move both ways.
    for state in [("tune_state", 2), ("tune_state", 3), ("cmp", 2)] {
        assert!(
            seen.contains(&state),
            "no recorded trace reached {state:?}: {seen:?}"
        );
    }
}

#[test]
fn c_moderators_called_from_several_threads_at_once_decide_as_alone() {
    // A loaded module has one `holdoff_current` (the context the kernel
    // shims read), and the watchdog and crash handler one slot each per
    // process; runs in threads (as this harness runs tests) must not hand
    // each other's context to the shims. Each thread replays the same
    // sequence through the C net_dim; every thread's steps must equal the
    // replay done alone. (Before calls were serialised, the parallel tests
    // of this file failed now and then on "step counts".)
    if !have_cc() {
        return;
    }
    let rows: Vec<[u64; 6]> = (0..3_000u64)
        .map(|i| {
            let pkts = [3, 100, 40, 400, 10, 900][(i / 300) as usize % 6];
            [i * 5_000, pkts, pkts * 800, pkts / 2, pkts * 80, 1]
        })
        .collect();
    let c = || {
        json!({"kind": "c", "source": net_dim_c(), "entry": "net_dim_poll",
               "params": {"profile": 0}})
    };
    let alone = replay(c(), &rows).0;
    assert!(
        alone.iter().any(|s| s.2.is_some()),
        "the work wrote profiles"
    );
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                sc.spawn(|| {
                    (0..5)
                        .map(|_| replay(c(), &rows).0)
                        .collect::<Vec<Vec<Step>>>()
                })
            })
            .collect();
        for h in handles {
            for steps in h.join().expect("thread") {
                assert_eq!(
                    steps, alone,
                    "a replay in a thread differs from the replay alone"
                );
            }
        }
    });
}
