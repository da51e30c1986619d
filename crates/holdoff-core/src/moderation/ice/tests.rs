//! Linux ice moderation against the C source: the `ice_set_rc_coalesce`
//! rules (ice_ethtool.c), `ITR_REG_ALIGN` (ice_txrx.h) and the DIM work
//! items with the profile pairs of commit cdf1f1f16917 (ice_main.c). The
//! DIM arithmetic is lib/dim's (tested in `dim::tests`); here each row
//! says which rule moves the profile index.

use super::*;
use crate::moderation::testutil::sample;

fn port(chip: &'static str, gran: u32) -> PortCaps<'static> {
    PortCaps {
        chip,
        throttle: Throttle::Itr2us {
            intrl_gran_us: gran,
        },
    }
}

fn fixed(rx: u32, high: u32) -> IceCfg {
    IceCfg {
        adaptive_rx: false,
        adaptive_tx: false,
        rx_usecs: rx,
        tx_usecs: rx,
        rx_usecs_high: high,
    }
}

#[test]
fn set_coalesce_refusals_name_the_driver_message() {
    let c = port("e810-c", 4);
    let xxv = port("e810-xxv", 8);
    assert!(IceCfg::default().validate(&c).is_ok());
    assert!(fixed(80, 0).validate(&c).is_ok());
    // INTRL 4 is the 100G part's granularity; the 25G part's is 8.
    assert!(fixed(0, 4).validate(&c).is_ok());
    assert!(fixed(0, 8).validate(&xxv).is_ok());
    let cases: [(IceCfg, PortCaps, &str, &str); 6] = [
        (
            fixed(0, 6),
            xxv,
            "rx_usecs_high",
            "valid values are 0 (disabled), 8-236",
        ),
        (
            fixed(0, 237),
            c,
            "rx_usecs_high",
            "valid values are 0 (disabled), 4-236",
        ),
        (
            IceCfg {
                rx_usecs_high: 100,
                ..IceCfg::default()
            },
            c,
            "rx_usecs_high",
            "cannot be changed if adaptive-tx or adaptive-rx is enabled",
        ),
        (
            IceCfg {
                rx_usecs: 80,
                ..IceCfg::default()
            },
            c,
            "rx_usecs",
            "rx interrupt throttling cannot be changed if adaptive-rx is enabled",
        ),
        (
            IceCfg {
                adaptive_rx: false,
                rx_usecs: 80,
                tx_usecs: 10,
                ..IceCfg::default()
            },
            c,
            "tx_usecs",
            "tx interrupt throttling cannot be changed if adaptive-tx is enabled",
        ),
        (fixed(8162, 0), c, "rx_usecs", "rx-usecs range is 0-8160"),
    ];
    for (cfg, p, field, msg) in cases {
        let e = cfg.validate(&p).unwrap_err();
        assert_eq!(e.field, field);
        assert!(e.message.contains(msg), "{}", e.message);
    }
    let x550 = PortCaps {
        chip: "x550",
        throttle: Throttle::Eitr2048ns,
    };
    assert!(IceCfg::default().validate(&x550).is_err());
}

#[test]
fn static_itr_rounds_odd_values_down() {
    // ITR_REG_ALIGN(81) = 81 & 0x1FFE = 80; INTRL passed as set.
    let m = Ice::new(fixed(81, 100));
    let p = m.initial();
    assert_eq!((p.eitr_us, p.intrl_us), (Some(80), Some(100)));
    assert_eq!(m.invocation(), Invocation::Never);
}

/// A sample of `events` interrupts at `t_us` with RX traffic only.
fn rx_at(t_us: u64, events: u64, pkts: u64) -> Sample {
    Sample {
        interrupts: events,
        ..sample(t_us * 1000, (0, 0), (pkts, pkts * 1518))
    }
}

#[test]
fn first_busy_measurement_moves_rx_to_profile_1_and_writes_its_pair() {
    // Adaptive: ITR starts at the configured 50 us, INTRL 0, both DIMs at
    // index 0 (zeroed struct dim).
    let mut m = Ice::new(IceCfg::default());
    let p = m.initial();
    assert_eq!((p.eitr_us, p.intrl_us), (Some(50), Some(0)));
    assert_eq!(m.invocation(), Invocation::NapiComplete);
    // Call 1 starts both measurements (START_MEASURE): no decision.
    assert_eq!(m.on_sample(&rx_at(100, 1, 10)), None);
    // Call 2, 64 events later: RX has bytes against a zero reference ->
    // BETTER -> leave parking to the right: index 0 -> 1, work item writes
    // rx_profile[1] = {8 us ITR, 16 us INTRL}. TX saw no traffic: SAME
    // everywhere (zero references) -> stays parked at 0, no write.
    let p = m
        .on_sample(&rx_at(1000, 64, 640))
        .expect("a profile change");
    assert_eq!((p.eitr_us, p.intrl_us), (Some(8), Some(16)));
    let (rx, tx) = m.containers();
    assert_eq!((rx.dim.profile_ix, rx.itr_us), (1, 8));
    assert_eq!((tx.dim.profile_ix, tx.itr_us), (0, 50));
    assert_eq!(rx.dim.state, MeasureState::StartMeasure);
}

#[test]
fn a_measurement_older_than_one_second_restarts() {
    // Start at 0.1 ms; the next call with 64 events comes at 1000.1 ms:
    // 1000 ms >= ICE's stale limit -> START_MEASURE, no decision. At
    // 999.1 ms the decision is taken (index 0 -> 1).
    for (t_us, moved) in [(1_000_100u64, false), (999_100, true)] {
        let mut m = Ice::new(IceCfg::default());
        m.on_sample(&rx_at(100, 1, 10));
        let got = m.on_sample(&rx_at(t_us, 64, 640));
        assert_eq!(got.is_some(), moved, "t = {t_us} us");
        let row = m.last_decision().unwrap();
        let stale = row.values.iter().find(|(k, _)| *k == "rx_stale").unwrap().1;
        assert_eq!(stale == 1, !moved, "t = {t_us} us");
    }
}
