//! Invariants over randomly drawn scenarios (proptest):
//! - interrupt spacing per vector is never below the throttle interval;
//! - simulated time never goes backwards;
//! - the packet ledger balances (the run fails otherwise);
//! - the same seed gives byte-identical JSON, a different seed different JSON;
//! - request/response with server busy polling, prefer_busy_poll, IRQ
//!   suspension and hard-IRQ deferral drawn at random: the ledger balances,
//!   time never goes backwards, and the JSON is byte-identical per seed.

mod common;
use common::{OneHost, TwoHosts};
use holdoff_core::api;
use proptest::prelude::*;

fn scenario() -> impl Strategy<Value = OneHost> {
    (
        prop::sample::select(vec!["ideal", "p4-xeon-2004", "opteron-2006", "apu2", "xeon-modern"]),
        prop::sample::select(vec![
            "napi",
            "linux-isr",
            "freebsd-ithread",
            "freebsd-taskqueue",
            "openbsd-intr",
            "polling",
        ]),
        prop::sample::select(vec!["82540", "82546", "82574", "82576", "i210"]),
        prop::sample::select(vec!["poisson", "constant"]),
        1_000.0f64..1_500_000.0,
        prop::sample::select(vec![64u32, 128, 512, 1518]),
        0u32..2000,   // throttle register
        0u32..100,    // rdtr ticks
        0u32..200,    // radv ticks
        prop::sample::select(vec![64u32, 256, 1024]),
        any::<u64>(),
        0u8..6,
    )
        .prop_map(|(profile, driver, chip, pattern, rate, bytes, itr, rdtr, radv, ring, seed, algo)| {
            let itr_chip = chip == "82540" || chip == "82546";
            let throttle = if itr_chip || chip == "82574" {
                format!("itr_256ns = {itr}")
            } else {
                format!("eitr_us = {}", itr / 4)
            };
            // Adaptive algorithms (each on the register kind it drives);
            // otherwise static settings from the drawn values.
            let moderation = match (algo, itr_chip) {
                (1, true) => "kind = \"e1000-itr\"\ninterrupt_throttle_rate = 1".to_string(),
                (2, true) => "kind = \"freebsd-aim\"\nenable_aim = 2".to_string(),
                (3, true) => "kind = \"e1000-5x\"".to_string(),
                (1, false) => "kind = \"igb\"".to_string(),
                (2, false) => "kind = \"dim\"".to_string(),
                (3, false) => "kind = \"ixl\"".to_string(),
                _ => format!(
                    "kind = \"static\"\n{throttle}\nrdtr_1024ns = {rdtr}\nradv_1024ns = {radv}\ntidv_1024ns = 8\ntadv_1024ns = 32"
                ),
            };
            // The MSI-X chips under a driver with no MSI-X handler
            // (linux-isr, openbsd-intr) run one MSI vector, as the scenario
            // validation asks.
            let no_msix = matches!(driver, "linux-isr" | "openbsd-intr") && !itr_chip;
            OneHost {
                nic_extra: if no_msix { "interrupt_mode = \"msi\"" } else { "" },
                profile,
                driver,
                chip,
                pattern,
                rate_pps: rate,
                frame_bytes: bytes,
                duration_ms: 20,
                seed,
                moderation,
                rx_ring: ring,
                ..OneHost::default()
            }
        })
}

/// Two hosts, rpc between them; the server side draws the NAPI and epoll
/// busy-poll options (valid combinations only).
#[allow(clippy::too_many_arguments)]
fn rpc_toml(
    profile: &str,
    chip: &str,
    busy_us: u64,
    prefer: bool,
    suspend_ns: u64,
    defer: u32,
    gro_ns: u64,
    client_think_us: u64,
    server_think_us: u64,
    budget: u32,
    seed: u64,
) -> String {
    let prefer = prefer && busy_us > 0;
    let suspend_ns = if prefer { suspend_ns } else { 0 };
    TwoHosts {
        head: &format!("name = \"rpc-prop\"\nseed = {seed}\nduration_ms = 10"),
        hosts: ["c", "s"],
        profile,
        chip,
        host_extra: [
            "",
            &format!(
                "[hosts.napi]\ndefer_hard_irqs = {defer}\ngro_flush_timeout_ns = {gro_ns}\nirq_suspend_timeout_ns = {suspend_ns}"
            ),
        ],
        nic_extra: "",
        nic_extra_b: None,
        link_extra: "",
        apps: &format!(
            r#"[[apps]]
kind = "rpc"
name = "rr"
host = "c"
to = "s"
think_us = {client_think_us}
server_think_us = {server_think_us}
server_busy_poll_usecs = {busy_us}
server_busy_poll_budget = {budget}
server_prefer_busy_poll = {prefer}
"#
        ),
    }
    .toml()
}

fn rpc_scenario() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["ideal", "p4-xeon-2004", "apu2", "xeon-modern"]),
        prop::sample::select(vec!["82546", "82574", "82576", "i210"]),
        prop::sample::select(vec![0u64, 20, 200]),
        any::<bool>(),
        prop::sample::select(vec![0u64, 100_000, 20_000_000]),
        0u32..3,
        prop::sample::select(vec![0u64, 5_000, 50_000]),
        prop::sample::select(vec![0u64, 30, 500]),
        prop::sample::select(vec![0u64, 40, 300]),
        prop::sample::select(vec![1u32, 8, 64]),
        any::<u64>(),
    )
        .prop_map(
            |(profile, chip, busy, prefer, suspend, defer, gro, ct, st, budget, seed)| {
                rpc_toml(
                    profile, chip, busy, prefer, suspend, defer, gro, ct, st, budget, seed,
                )
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn busy_poll_and_irq_suspension_keep_the_invariants(text in rpc_scenario()) {
        let mut w = api::build(&text, None).unwrap();
        let mut last = holdoff_core::units::SimTime::ZERO;
        while let Some(t) = w.step() {
            prop_assert!(t >= last, "time went backwards: {} after {}", t.as_ns(), last.as_ns());
            last = t;
        }
        w.finish();
        let json = holdoff_core::scenario::report::to_json(&w);
        prop_assert!(json.is_ok(), "{:?}", json.err());
        let a = api::run_toml(&text, None).unwrap().report_json;
        let b = api::run_toml(&text, None).unwrap().report_json;
        prop_assert_eq!(&a, &b);
    }

    #[test]
    fn interrupt_spacing_never_below_the_throttle(s in scenario()) {
        let mut w = api::build(&s.toml(), None).unwrap();
        let mut last = holdoff_core::units::SimTime::ZERO;
        while let Some(t) = w.step() {
            prop_assert!(t >= last, "time went backwards: {} after {}", t.as_ns(), last.as_ns());
            last = t;
        }
        w.finish();
        for p in w.ports() {
            for v in 0..p.num_vectors() as u16 {
                // Each assertion respects the interval in effect when the
                // previous one started the countdown (an EITR write may reset
                // the counter; adaptive algorithms change the interval).
                prop_assert_eq!(p.spacing_violations(v), 0, "vector {}", v);
                // With static settings the interval never changes: the
                // smallest spacing is at least the final interval as the
                // port's own (slightly fast or slow) clock counts it.
                if !s.moderation.contains("kind =") {
                    let interval = p.throttle_period(v);
                    if let Some(min) = p.min_spacing(v) {
                        prop_assert!(min >= interval, "vector {v}: spacing {} ns < interval {} ns", min.as_ns(), interval.as_ns());
                    }
                }
            }
        }
        // The ledger balances (report generation fails otherwise).
        let json = holdoff_core::scenario::report::to_json(&w);
        prop_assert!(json.is_ok(), "{:?}", json.err());
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes(s in scenario()) {
        let text = s.toml();
        let a = api::run_toml(&text, None).unwrap().report_json;
        let b = api::run_toml(&text, None).unwrap().report_json;
        prop_assert_eq!(&a, &b);
        if s.pattern == "poisson" {
            let c = api::run_toml(&text, Some(s.seed.wrapping_add(1))).unwrap().report_json;
            prop_assert_ne!(&a, &c);
        }
    }
}
