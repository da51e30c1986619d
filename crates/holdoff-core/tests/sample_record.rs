//! Recording the samples handed to the moderation algorithms
//! (`api::run_toml_recorded_in`, used by `holdoff battery --trace`): off by
//! default, it leaves the run's report byte-identical, and the recorded
//! samples add up to the port's own counters (each sample is the change of
//! the vector's counters since the previous call, so their sums telescope to
//! the counters at the last call).

use holdoff_core::api;

fn example() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/aim-toggle.toml"
    ))
    .expect("the example")
}

fn run(record: bool) -> api::RunOutput {
    api::run_toml_recorded_in(&example(), None, None, &mut |_| true, None, record)
        .expect("the example runs")
}

#[test]
fn recording_changes_nothing_in_the_report() {
    let off = run(false);
    let on = run(true);
    assert!(off.samples.is_none(), "recording is off unless asked");
    assert_eq!(off.report_json, on.report_json);
}

#[test]
fn recorded_samples_add_up_to_the_port_counters() {
    let out = run(true);
    let (rows, dropped) = out.samples.expect("recorded");
    assert_eq!(dropped, 0);
    // aim-toggle: one port (dut.em0), one vector, FreeBSD AIM called at every
    // interrupt; 30 000 frames/s for 400 ms, so thousands of calls.
    assert!(rows.len() > 1000, "{} calls", rows.len());
    assert!(rows.iter().all(|r| r.port == 0 && r.vector == 0));
    assert!(rows.windows(2).all(|w| w[0].sample.now <= w[1].sample.now));
    let report: serde_json::Value = serde_json::from_str(&out.report_json).unwrap();
    let port = &report["summary"]["ports"][0];
    let rx: u64 = rows.iter().map(|r| r.sample.rx_packets).sum();
    let irqs: u64 = rows.iter().map(|r| r.sample.interrupts).sum();
    // Frames and interrupts after the last call are not in any sample: at
    // most the last interval's worth (one interrupt, a few frames).
    let port_rx = port["rx_packets"].as_u64().unwrap();
    let port_irqs = port["interrupts"].as_u64().unwrap();
    assert!(rx <= port_rx && port_rx - rx <= 10, "{rx} of {port_rx}");
    assert!(
        irqs <= port_irqs && port_irqs - irqs <= 1,
        "{irqs} of {port_irqs}"
    );
}
