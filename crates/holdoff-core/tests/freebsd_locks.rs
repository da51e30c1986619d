//! The FreeBSD 2006 drivers' locks in a forwarding run (the case
//! `freebsd-2006-fastintr`, shortened): who holds which `EM_LOCK`, who
//! waits, and how. Expected values follow from the drivers' code paths
//! (sys/dev/em/if_em.c of 2006), not from earlier runs.

mod common;

fn scenario(driver: &str, load: f64) -> String {
    scenario_with(driver, load, 2, "")
}

fn scenario_with(driver: &str, load: f64, cores: u32, bsd: &str) -> String {
    let em1_core = cores - 1;
    format!(
        r#"
name = "fwd"
seed = 1
duration_ms = 40
[[hosts]]
name = "router"
profile = "opteron-2006"
# Constant costs: the tests check cost sums.
variance = "none"
cores = {cores}
driver = "{driver}"
txqueuelen = 255
forward = [{{ from = "em0", to = "em1" }}]
bsd = {{ {bsd} }}
[[hosts.nics]]
name = "em0"
chip = "82546"
irq_core = 0
[hosts.nics.moderation]
kind = "static"
itr_per_s = 8000
tidv_1024ns = 64
tadv_1024ns = 64
[[hosts.nics]]
name = "em1"
chip = "82546"
irq_core = {em1_core}
[hosts.nics.moderation]
kind = "static"
itr_per_s = 8000
tidv_1024ns = 64
tadv_1024ns = 64
[[generators]]
name = "source"
pattern = "constant"
load = {load}
frame_bytes = 64
[[generators]]
name = "sink"
pattern = "constant"
rate_pps = 1
start_us = 100000000
[[links]]
a = "source"
b = "router.em0"
[[links]]
a = "router.em1"
b = "sink"
"#
    )
}

fn lock<'a>(r: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    r["summary"]["hosts"][0]["locks"]
        .as_array()
        .expect("locks reported for a FreeBSD driver")
        .iter()
        .find(|l| l["lock"] == name)
        .expect("lock present")
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().expect("integer")
}

#[test]
fn overloaded_interrupt_thread_holds_its_lock_and_spins_on_the_other() {
    // Line rate is beyond what one core forwards: em0's thread never finds
    // ICR empty (em_rxeof(-1) has no budget, RDT is returned per packet),
    // so it holds EM_LOCK(em0) for (nearly) the whole run; its forward path
    // takes EM_LOCK(em1) once per packet and must spin whenever em1's
    // thread holds that lock across its ICR reads and TX reclaim.
    let r = common::run(&scenario("freebsd-ithread", 1.0));
    let run_ns = u(&r["summary"]["sim_time_ns"]);
    let em0 = lock(&r, "router.em0");
    assert!(u(&em0["held_ns"]) * 100 >= run_ns * 95, "{em0}");
    assert_eq!(
        u(&em0["contended"]),
        0,
        "nobody else takes an RX port's lock"
    );
    let em1 = lock(&r, "router.em1");
    let fwd = u(&r["summary"]["generators"][1]["rx_packets"]);
    // One acquisition per forwarded packet at least, plus em1's own passes.
    assert!(u(&em1["acquisitions"]) >= fwd, "{em1}");
    assert!(u(&em1["contended"]) > 0, "{em1}");
    // Both threads run on their own cores: owners always run, so every wait
    // is a spin, and the forwarding core (0) spins.
    assert_eq!(u(&em1["sleep_ns"]), 0);
    assert!(u(&em1["spin_ns_by_core"][0]) > 0, "{em1}");
    let by_core: u64 = em1["spin_ns_by_core"]
        .as_array()
        .unwrap()
        .iter()
        .map(u)
        .sum();
    assert_eq!(by_core, u(&em1["spin_ns"]));
}

#[test]
fn taskqueue_runs_rx_without_the_lock() {
    // em_handle_rxtx cleans RX without EM_LOCK and takes it only for
    // em_txeof + em_start_locked; em0 transmits nothing, so its lock is held
    // only for those short (empty) TX passes: a few per cent of the run.
    let r = common::run(&scenario("freebsd-taskqueue", 1.0));
    let run_ns = u(&r["summary"]["sim_time_ns"]);
    let em0 = lock(&r, "router.em0");
    assert!(u(&em0["held_ns"]) * 100 <= run_ns * 5, "{em0}");
    assert_eq!(u(&em0["contended"]), 0);
}

#[test]
fn the_interrupt_thread_masks_and_unmasks_each_interrupt_under_the_icu_lock() {
    // intr_execute_handlers masks a threaded source (and EOIs it) under the
    // host's one I/O APIC spin lock, and the thread unmasks it under the
    // same lock when it has run: two acquisitions per interrupt delivered,
    // less one per line whose thread was still running when the run ended.
    // A spin mutex never sleeps. Below saturation (20 % of line rate) both
    // threads finish their loops.
    let r = common::run(&scenario("freebsd-ithread", 0.2));
    let h = &r["summary"]["hosts"][0];
    let icu = lock(&r, "router.icu_lock");
    let delivered = u(&h["irq_deliveries"]);
    assert!(delivered > 100, "{h}");
    let acq = u(&icu["acquisitions"]);
    assert!(
        acq <= 2 * delivered && acq + 2 >= 2 * delivered,
        "{acq} acquisitions for {delivered} interrupts"
    );
    assert_eq!(u(&icu["sleep_ns"]), 0, "{icu}");
    let by_core: u64 = icu["spin_ns_by_core"]
        .as_array()
        .unwrap()
        .iter()
        .map(u)
        .sum();
    assert_eq!(by_core, u(&icu["spin_ns"]));
    // The fast filter masks in the NIC: no APIC lock to report.
    let t = common::run(&scenario("freebsd-taskqueue", 0.2));
    let locks = t["summary"]["hosts"][0]["locks"].as_array().unwrap();
    assert_eq!(locks.len(), 2, "one EM_LOCK per port only");
    assert!(locks.iter().all(|l| l["lock"] != "router.icu_lock"));
}

#[test]
fn other_drivers_report_no_locks() {
    // Locks are modelled only for the FreeBSD drivers; other drivers'
    // summaries keep their shape.
    let toml = scenario("napi", 0.2);
    let r = common::run(&toml);
    assert!(r["summary"]["hosts"][0].get("locks").is_none());
}

fn forwarded(r: &serde_json::Value) -> u64 {
    u(&r["summary"]["generators"][1]["rx_packets"])
}

#[test]
fn one_cpu_without_fast_forwarding_livelocks_the_interrupt_thread() {
    // net.isr.direct = 0, fast-forwarding off: the receiving thread queues
    // each packet on ipintrq (50) for swi:net, which runs below interrupt
    // threads. On one CPU an overloaded interrupt thread never leaves its
    // loop (em_rxeof(-1), ICR never empty), so swi:net never runs: ipintrq
    // overflows and almost nothing is forwarded (receive livelock, "Eliminating
    // receive livelock in an interrupt-driven kernel", 1997). At 20 % of line rate the thread finishes
    // its loops and swi:net keeps up.
    let bsd = "ip_fastforwarding = false, isr_direct = false";
    let light = common::run(&scenario_with("freebsd-ithread", 0.2, 1, bsd));
    let full = common::run(&scenario_with("freebsd-ithread", 1.0, 1, bsd));
    assert!(
        forwarded(&full) * 20 < forwarded(&light),
        "{} vs {}",
        forwarded(&full),
        forwarded(&light)
    );
    let n = &full["summary"]["hosts"][0]["netisr"];
    assert!(u(&n["ipintrq_drops"]) > 0, "{n}");
    assert_eq!(
        u(&n["ipintrq_max"]),
        50,
        "net.inet.ip.intr_queue_maxlen default"
    );
    // net.isr.direct = 1 runs ip_input inline: no queue, no livelock.
    let direct = common::run(&scenario_with(
        "freebsd-ithread",
        1.0,
        1,
        "ip_fastforwarding = false, isr_direct = true",
    ));
    assert!(direct["summary"]["hosts"][0].get("netisr").is_none());
    assert!(forwarded(&direct) > forwarded(&light));
}

#[test]
fn a_locked_rx_path_costs_a_lock_pair_and_an_rdt_write_per_packet() {
    // bsd.rx_locked runs the taskqueue's em_rxeof as the interrupt thread's:
    // per packet one more lock + unlock pair (opteron-2006 lock_ns = 60 ns)
    // and its own RDT write (mmio_write_ns = 100 ns) where the lock-free
    // task writes RDT once per pass. Below saturation (20 % of line rate,
    // 297 619 frames/s for 40 ms = 11 905 frames) em0's core spends
    // 11 905 x 160 ns = 1.905 ms more, less the lock-free run's one RDT
    // write per pass (at most one per throttle interval: 320 passes x 100 ns
    // = 0.032 ms); allow 10 %.
    let core0_busy_ns = |bsd: &str| {
        let r = common::run(&scenario_with("freebsd-taskqueue", 0.2, 2, bsd));
        let h = &r["summary"]["hosts"][0];
        h["cpu_ns"]["softirq"].as_u64().unwrap() + h["cpu_ns"]["hardirq"].as_u64().unwrap()
    };
    let free = core0_busy_ns("");
    let locked = core0_busy_ns("rx_locked = true");
    let extra = locked as f64 - free as f64;
    let want = 11_905.0 * 160.0 - 32_000.0;
    assert!(
        (extra - want).abs() < 0.1 * want,
        "extra {extra} ns, expected about {want}"
    );
}

#[test]
fn rx_locked_is_refused_for_other_drivers() {
    let t = scenario_with("freebsd-ithread", 0.2, 2, "rx_locked = true");
    let Err(err) = holdoff_core::api::run_toml(&t, None) else {
        panic!("bsd.rx_locked under freebsd-ithread was accepted");
    };
    assert!(err.to_string().contains("hosts[0].bsd.rx_locked"), "{err}");
}
