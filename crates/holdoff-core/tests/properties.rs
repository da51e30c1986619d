//! Invariants over randomly drawn scenarios (proptest):
//! - interrupt spacing per vector is never below the throttle interval;
//! - simulated time never goes backwards;
//! - the packet ledger balances (the run fails otherwise);
//! - the same seed gives byte-identical JSON, a different seed different JSON.

mod common;
use common::OneHost;
use holdoff_core::api;
use proptest::prelude::*;

fn scenario() -> impl Strategy<Value = OneHost> {
    (
        prop::sample::select(vec!["ideal", "p4-xeon-2004", "opteron-2006", "apu2", "xeon-modern"]),
        prop::sample::select(vec!["napi", "linux-isr"]),
        prop::sample::select(vec!["82540", "82546", "82574", "82576", "i210"]),
        prop::sample::select(vec!["poisson", "constant"]),
        1_000.0f64..1_500_000.0,
        prop::sample::select(vec![64u32, 128, 512, 1518]),
        0u32..2000,   // throttle register
        0u32..100,    // rdtr ticks
        0u32..200,    // radv ticks
        prop::sample::select(vec![64u32, 256, 1024]),
        any::<u64>(),
    )
        .prop_map(|(profile, driver, chip, pattern, rate, bytes, itr, rdtr, radv, ring, seed)| {
            let throttle = if chip.starts_with("825") && chip != "82576" || chip == "82574" {
                format!("itr_256ns = {itr}")
            } else {
                format!("eitr_us = {}", itr / 4)
            };
            OneHost {
                profile,
                driver,
                chip,
                pattern,
                rate_pps: rate,
                frame_bytes: bytes,
                duration_ms: 20,
                seed,
                moderation: format!("{throttle}\nrdtr_1024ns = {rdtr}\nradv_1024ns = {radv}\ntidv_1024ns = 8\ntadv_1024ns = 32"),
                rx_ring: ring,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn interrupt_spacing_never_below_the_throttle(s in scenario()) {
        let mut w = api::build(&s.toml(), None).unwrap();
        let mut last = holdoff_core::units::SimTime::ZERO;
        while let Some(t) = w.step() {
            prop_assert!(t >= last, "time went backwards: {} after {}", t.as_ns(), last.as_ns());
            last = t;
        }
        w.finish();
        for p in &w.ports {
            for v in 0..p.num_vectors() as u16 {
                let (interval, _) = p.throttle(v);
                if let Some(min) = p.min_spacing(v) {
                    prop_assert!(min >= interval, "vector {v}: spacing {} ns < interval {} ns", min.as_ns(), interval.as_ns());
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
