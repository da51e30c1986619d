//! Frame trains handle the per-frame engine's events in the per-frame
//! engine's order (`scenario::world::trains`).
//!
//! The property: for random generator-into-host scenarios, the log of every
//! event handled (time and event, `World::log_events`) is the same with
//! trains on and off, and so is the report. The report comparison alone
//! (`tests/test_trains.py` does it over 500 random multi-group scenarios)
//! cannot see a reordering that happens to change no result, such as two
//! frame events of one instant put back into the queue in the wrong order;
//! the log can. Mutation tried once, by hand: putting a run's held emission
//! and DMA completion back after its held arrivals instead of in creation
//! order passes the report test and fails this one.
//!
//! The scenarios reach a run's edges: propagation delays that keep up to
//! 150 frames on the wire (arrivals queued before a run), small rings and
//! full-size frames at line rate (drops inside a run), every driver
//! architecture, static throttles with and without delay timers, and the
//! adaptive kinds (interrupt assertions and timers that end runs).

mod common;
use common::host_with_nic;
use holdoff_core::api;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct Flood {
    driver: &'static str,
    chip: &'static str,
    moderation: String,
    pattern: &'static str,
    load: f64,
    frame_bytes: u32,
    propagation_ns: u64,
    rx_ring: u32,
    sample_us: u64,
    seed: u64,
}

impl Flood {
    fn toml(&self) -> String {
        let msix = !matches!(self.chip, "82540" | "82546");
        let nic_extra = if msix && matches!(self.driver, "linux-isr" | "openbsd-intr") {
            "interrupt_mode = \"msi\"\n"
        } else {
            ""
        };
        let onoff = if self.pattern == "on-off" {
            "on_us = 200\noff_us = 300\n"
        } else {
            ""
        };
        format!(
            "name = \"trains\"\nseed = {seed}\nduration_ms = 3\nsample_interval_us = {sample}\n\n\
             {host}rx_ring = {ring}\n{nic_extra}[hosts.nics.moderation]\n{moderation}\n\n\
             [[generators]]\nname = \"gen\"\npattern = \"{pattern}\"\nload = {load}\nframe_bytes = {bytes}\n{onoff}\n\
             [[links]]\na = \"gen\"\nb = \"dut.eth0\"\nrate = \"1G\"\npropagation_ns = {prop}\n\n\
             [[apps]]\nkind = \"udp_sink\"\nname = \"sink\"\nhost = \"dut\"\n",
            seed = self.seed,
            sample = self.sample_us,
            host = host_with_nic("dut", "xeon-modern", self.driver, "", "eth0", self.chip),
            ring = self.rx_ring,
            moderation = self.moderation,
            pattern = self.pattern,
            load = self.load,
            bytes = self.frame_bytes,
            prop = self.propagation_ns,
        )
    }
}

fn flood() -> impl Strategy<Value = Flood> {
    (
        prop::sample::select(vec![
            "napi",
            "linux-isr",
            "freebsd-ithread",
            "freebsd-taskqueue",
            "openbsd-intr",
            "polling",
        ]),
        prop::sample::select(vec!["82546", "82540", "82576", "i210"]),
        0u8..5,
        prop::sample::select(vec![0u32, 1_000, 8_000, 100_000]),
        prop::sample::select(vec!["constant", "poisson", "on-off"]),
        prop::sample::select(vec![0.3f64, 0.9, 1.0]),
        prop::sample::select(vec![64u32, 512, 1518]),
        prop::sample::select(vec![0u64, 1, 700, 10_000, 100_000]),
        prop::sample::select(vec![64u32, 256, 1024]),
        prop::sample::select(vec![100u64, 1000]),
        any::<u64>(),
    )
        .prop_map(
            |(driver, chip, algo, rate, pattern, load, bytes, prop, ring, sample, seed)| {
                let itr_chip = matches!(chip, "82540" | "82546");
                let moderation = match (algo, itr_chip) {
                    (1, true) => "kind = \"e1000-5x\"".to_string(),
                    (2, true) => "kind = \"freebsd-aim\"\nenable_aim = 2".to_string(),
                    (1, false) => "kind = \"igb\"".to_string(),
                    (2, false) => "kind = \"dim\"".to_string(),
                    // Static with RX delay timers (RDTR restarts at every
                    // frame: a timer per frame ends each run).
                    (3, _) => format!(
                        "kind = \"static\"\nitr_per_s = {rate}\nrdtr_1024ns = 8\nradv_1024ns = 32"
                    ),
                    _ => format!("kind = \"static\"\nitr_per_s = {rate}"),
                };
                Flood {
                    driver,
                    chip,
                    moderation,
                    pattern,
                    load,
                    frame_bytes: bytes,
                    propagation_ns: prop,
                    rx_ring: ring,
                    sample_us: sample,
                    seed,
                }
            },
        )
}

/// The event log and report of one run, trains on or off.
fn run(text: &str, trains: bool) -> (Vec<(holdoff_core::units::SimTime, [u64; 2])>, String, u64) {
    let mut w = api::build(text, None).expect("a valid scenario");
    w.set_trains(trains);
    w.set_group_scheduler(false);
    w.log_events();
    w.run();
    let log = w.take_event_log().expect("logging was on");
    // Every event handled, queued or held by a train, counts once as
    // processed: the count is the log's length either way.
    assert_eq!(w.events_processed(), log.len() as u64, "events processed");
    let json = holdoff_core::scenario::report::to_json(&w).expect("the report");
    (log, json, w.train_events())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn trains_handle_the_per_frame_events_in_the_per_frame_order(f in flood()) {
        let text = f.toml();
        let (log_off, json_off, held_off) = run(&text, false);
        let (log_on, json_on, _) = run(&text, true);
        prop_assert_eq!(held_off, 0);
        prop_assert_eq!(log_on.len(), log_off.len());
        if let Some(i) = (0..log_on.len()).find(|&i| log_on[i] != log_off[i]) {
            prop_assert!(false, "event {} differs: trains {:?}, per frame {:?}", i, log_on[i], log_off[i]);
        }
        prop_assert_eq!(json_on, json_off);
    }
}

#[test]
fn a_line_rate_flood_into_a_throttled_napi_host_runs_as_trains() {
    // The 1 GbE bench's shape: 64-byte frames at line rate, NAPI, 8000/s.
    // Between interrupts, polls and samples nothing else is due, so almost
    // every frame event (three per frame) is held by a train run.
    let f = Flood {
        driver: "napi",
        chip: "82546",
        moderation: "kind = \"static\"\nitr_per_s = 8000".into(),
        pattern: "constant",
        load: 1.0,
        frame_bytes: 64,
        propagation_ns: 0,
        rx_ring: 1024,
        sample_us: 1000,
        seed: 1,
    };
    let (log_off, json_off, _) = run(&f.toml(), false);
    let (log_on, json_on, held) = run(&f.toml(), true);
    assert_eq!(log_on, log_off);
    assert_eq!(json_on, json_off);
    // 3 ms at 1,488,095 frames/s (IEEE 802.3 minimum frames at 1 Gb/s).
    let frame_events = 3 * 4464;
    assert!(
        held as f64 > 0.9 * frame_events as f64,
        "held {held} of about {frame_events}"
    );
}
