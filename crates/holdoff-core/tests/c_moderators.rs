//! C moderators (`kind = "c"`) through the whole path: compile with the
//! system C compiler, load, call through the ABI, and compare decision for
//! decision with the built-in the C file re-implements. Skipped (with a
//! message) when no C compiler is installed.

use holdoff_core::api;
use holdoff_core::moderation::c_abi::compile;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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

/// A deterministic sample sequence that visits every latency class of the
/// e1000 rules: idle gaps, single small packets (lowest), mid-size bursts
/// (low), full-size bursts over 25000 bytes (bulk) and jumbo frames
/// (bytes/packet > 8000), each direction drawn on its own.
fn samples(n: usize, seed: u64) -> Vec<[u64; 6]> {
    let mut x = seed;
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut t = 0u64;
    let mut out = Vec::new();
    for _ in 0..n {
        t += 1_000 + next() % 400_000;
        let mut dir = || -> (u64, u64) {
            let (p, size) = match next() % 6 {
                0 => (0, 0),
                1 => (1 + next() % 2, 60 + next() % 200),
                2 => (3 + next() % 40, 200 + next() % 1300),
                3 => (10 + next() % 60, 1400 + next() % 114),
                4 => (1 + next() % 8, 9000),
                _ => (30 + next() % 20, 64 + next() % 100),
            };
            (p, p * size)
        };
        let (rp, rb) = dir();
        let (tp, tb) = dir();
        out.push([t, rp, rb, tp, tb, 1]);
    }
    out
}

const PORT_1G: &str = r#"{"chip":"82546","link_mbps":1000,"hz":1000,"vectors":1}"#;

fn steps(table: &Value, port: &str, samples: &[[u64; 6]]) -> Vec<Value> {
    let out = api::replay_json(&table.to_string(), port, 0, Some(&repo()), samples)
        .unwrap_or_else(|e| panic!("replay of {table}: {e}"));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["failure"].is_null(), "{table} failed: {}", v["failure"]);
    v["steps"].as_array().unwrap().clone()
}

#[test]
fn e1000_style_c_matches_the_builtin_decision_for_decision() {
    if !have_cc() {
        return;
    }
    for (setting, seed) in [(3, 1), (1, 2), (3, 3)] {
        let s = samples(4000, seed);
        let c = steps(
            &serde_json::json!({"kind": "c", "source": "moderators/c/e1000_style.c",
                "entry": "e1000_style_update", "params": {"itr_setting": setting}}),
            PORT_1G,
            &s,
        );
        let rust = steps(
            &serde_json::json!({"kind": "e1000-itr", "interrupt_throttle_rate": setting}),
            PORT_1G,
            &s,
        );
        assert_eq!(c.len(), rust.len());
        let mut writes = 0;
        for (a, b) in c.iter().zip(&rust) {
            assert_eq!(
                a["itr_256ns"], b["itr_256ns"],
                "setting {setting}: C {a} against built-in {b}"
            );
            writes += a["itr_256ns"].is_number() as usize;
        }
        // The sequence moves the rate many times (not a test of nothing).
        assert!(writes > 100, "only {writes} ITR writes");
    }
}

fn write_c(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("holdoff-ctest-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn replay_err(dir: &Path, table: Value) -> String {
    match api::replay_json(
        &table.to_string(),
        PORT_1G,
        0,
        Some(dir),
        &[[1, 1, 64, 0, 0, 1]],
    ) {
        Ok(out) => panic!("expected an error, got {out}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_c_tables_name_the_field_file_and_fix() {
    if !have_cc() {
        return;
    }
    let d = tmpdir("bad");
    write_c(&d, "broken.c", "#include \"kernel_shim.h\"\nvoid f(struct holdoff_ctx *c, const struct holdoff_sample *s) { u32 x = ; }\n");
    let e = replay_err(
        &d,
        serde_json::json!({"kind": "c", "source": "broken.c", "entry": "f"}),
    );
    assert!(
        e.contains("moderation.source") && e.contains("broken.c") && e.contains("does not compile"),
        "{e}"
    );
    assert!(e.contains("error"), "the compiler's message is shown: {e}");

    let e = replay_err(
        &d,
        serde_json::json!({"kind": "c", "source": "absent.c", "entry": "f"}),
    );
    assert!(e.contains("not found") && e.contains("absent.c"), "{e}");

    write_c(&d, "nodesc.c", "#include \"kernel_shim.h\"\nvoid f(struct holdoff_ctx *c, const struct holdoff_sample *s) {}\n");
    let e = replay_err(
        &d,
        serde_json::json!({"kind": "c", "source": "nodesc.c", "entry": "f"}),
    );
    assert!(
        e.contains("f_holdoff_desc") && e.contains("HOLDOFF_MODERATOR(f"),
        "{e}"
    );

    let e = replay_err(
        &d,
        serde_json::json!({"kind": "c", "source": "nodesc.c", "entry": "g"}),
    );
    assert!(e.contains("no exported function `g`"), "{e}");

    let e = replay_err(
        &d,
        serde_json::json!({"kind": "c", "source": "nodesc.c", "entry": "f", "params": {"x": "a"}}),
    );
    assert!(e.contains("params.x") && e.contains("integers"), "{e}");
}

#[test]
fn register_writes_are_checked_and_work_items_run_later() {
    if !have_cc() {
        return;
    }
    let d = tmpdir("work");
    write_c(
        &d,
        "w.c",
        r#"#include "kernel_shim.h"
struct st { u32 calls; u64 queued_at; };
static struct work_struct wk;
static void run(struct holdoff_ctx *c) {
    struct st *s = c->state;
    /* the work runs its own delay after it was queued */
    wr32(E1000_ITR, (u32)((ktime_to_ns(ktime_get()) - s->queued_at) / 1000));
}
void f(struct holdoff_ctx *c, const struct holdoff_sample *smp) {
    struct st *s = c->state;
    s->calls++;
    if (s->calls == 2) { s->queued_at = smp->now_ns; schedule_work(&wk); }
    if (s->calls == 4) wr32(E1000_ITR, 70000);
}
HOLDOFF_MODERATOR(f, HOLDOFF_INVOKE_PER_INTERRUPT, 0, struct st, 0, run);
"#,
    );
    let port = r#"{"chip":"82546","link_mbps":1000,"hz":1000,"vectors":1,"work_delay_ns":7000}"#;
    let table = serde_json::json!({"kind": "c", "source": "w.c", "entry": "f"}).to_string();
    let rows = [
        [1000, 1, 64, 0, 0, 1],
        [2000, 1, 64, 0, 0, 1],
        [50_000, 1, 64, 0, 0, 1],
        [60_000, 1, 64, 0, 0, 1],
    ];
    let out: Value =
        serde_json::from_str(&api::replay_json(&table, port, 0, Some(&d), &rows).unwrap()).unwrap();
    let steps = out["steps"].as_array().unwrap();
    // initial, s0, s1 (queues), work at 2000 + 7000 ns, s2, s3 (bad write).
    let calls: Vec<&str> = steps.iter().map(|s| s["call"].as_str().unwrap()).collect();
    assert_eq!(
        calls,
        ["initial", "sample", "sample", "work", "sample", "sample"]
    );
    assert_eq!(steps[3]["t_ns"], 9000);
    assert_eq!(steps[3]["itr_256ns"], 7, "7000 ns after queueing, in us");
    let why = out["failure"].as_str().unwrap();
    assert!(
        why.contains("w.c:f")
            && why.contains("70000")
            && why.contains("itr_256ns")
            && why.contains("t=60000"),
        "{why}"
    );
}

#[test]
fn ixgbe_style_c_matches_the_builtin_decision_for_decision() {
    if !have_cc() {
        return;
    }
    for (link, seed) in [(10_000u32, 5u64), (1000, 6), (10_000, 7)] {
        let port = format!(r#"{{"chip":"82599","link_mbps":{link},"hz":250,"vectors":1}}"#);
        // Calls 0.1 to 6 ms apart (HZ 250: the jiffy gate opens and closes),
        // packet counts across every band (0, <4, <48, <96, <256, more).
        let mut x = seed;
        let mut t = 0u64;
        let rows: Vec<[u64; 6]> = (0..5000)
            .map(|_| {
                let mut r = || {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    x >> 33
                };
                t += 100_000 + r() % 6_000_000 * (r() % 4 == 0) as u64;
                let band = |r: &mut dyn FnMut() -> u64| -> (u64, u64) {
                    let p = [
                        0,
                        1 + r() % 3,
                        4 + r() % 44,
                        48 + r() % 48,
                        96 + r() % 160,
                        256 + r() % 500,
                    ][r() as usize % 6];
                    let size = [64, 300, 1000, 1500, 9018][r() as usize % 5];
                    (p, p * size)
                };
                let (rp, rb) = band(&mut r);
                let (tp, tb) = band(&mut r);
                [t, rp, rb, tp, tb, 1]
            })
            .collect();
        let c = steps(
            &serde_json::json!({"kind": "c", "source": "moderators/c/ixgbe_style.c",
                "entry": "ixgbe_style_poll_done"}),
            &port,
            &rows,
        );
        let rust = steps(
            &serde_json::json!({"kind": "ixgbe", "rx_usecs": 1}),
            &port,
            &rows,
        );
        assert_eq!(c.len(), rust.len());
        let mut writes = 0;
        // The register the port holds: bits 11:3 of the value. The C
        // function masks as ixgbe_write_eitr does (`itr & IXGBE_MAX_EITR`);
        // the built-in hands the register model `q_vector->itr`, whose
        // 82599 EITR keeps the same bits (odd usecs << 2 lose bit 2).
        let reg = |v: &Value| v["itr_256ns"].as_u64().map(|x| x & 0xFF8);
        for (a, b) in c.iter().zip(&rust) {
            assert_eq!(reg(a), reg(b), "{link} Mb/s: C {a} against built-in {b}");
            writes += a["itr_256ns"].is_number() as usize;
        }
        assert!(writes > 100, "only {writes} EITR writes");
    }
}
