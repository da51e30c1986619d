//! Linux DIM's apply path through the driver's work item (issue 34): a
//! profile change decided in the poll routine is written only when the
//! work runs, `wakeup_ns + context_switch_ns` of the host profile later
//! (xeon-modern: 500 + 1000 ns), and both instants are rows of the
//! moderation trace (`work` = 1 when queued, 2 when it ran).

mod common;
use common::{run, OneHost};
use serde_json::Value;

fn trace(r: &Value) -> Vec<(u64, i64, i64, i64)> {
    r["summary"]["ports"][0]["moderation_trace"]
        .as_array()
        .expect("a trace")
        .iter()
        .map(|row| {
            let v = &row["values"];
            (
                row["t_ns"].as_u64().unwrap(),
                v["work"].as_i64().unwrap(),
                v["eitr_us"].as_i64().unwrap(),
                v["state"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_profile_is_written_by_the_work_item_after_the_host_delay() {
    let s = OneHost {
        profile: "xeon-modern",
        chip: "i210",
        rate_pps: 300_000.0,
        duration_ms: 200,
        moderation: "kind = \"dim\"\nprofile = \"rx-eqe\"".into(),
        ..Default::default()
    };
    let r = run(&s.toml());
    let rows = trace(&r);
    let queued: Vec<_> = rows.iter().filter(|r| r.1 == 1).collect();
    assert!(
        !queued.is_empty(),
        "DIM changed its profile at least once: {rows:?}"
    );
    for (i, row) in rows.iter().enumerate() {
        if row.1 != 1 {
            continue;
        }
        // Decided in state APPLY_NEW_PROFILE (2); the next row of the trace
        // is the work, 1.5 us later, back in START_MEASURE (0) with the same
        // profile (no poll in between can decide: samples are ignored).
        assert_eq!(row.3, 2, "{row:?}");
        let next = rows.get(i + 1).expect("the work ran before the end");
        assert_eq!(next.1, 2, "{next:?}");
        assert_eq!(next.0, row.0 + 1500, "{row:?} -> {next:?}");
        assert_eq!((next.2, next.3), (row.2, 0));
    }
}
