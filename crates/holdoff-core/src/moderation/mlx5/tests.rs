//! Unit tests of Linux mlx5 moderation (`moderation::mlx5`).

use super::*;
use crate::moderation::dim::{StatsCmp, TuneState};
use crate::units::Nanos;

fn cx5() -> Throttle {
    Throttle::Cq {
        frames: true,
        cqe_mode: true,
        resolution_us: 1,
        default_adaptive_rx: true,
    }
}

fn ctx() -> BuildCtx {
    BuildCtx {
        link_mbps: 25_000,
        throttle: cx5(),
        rx_fifo_bytes: 512 * 1024,
        vectors: 1,
        vector: 0,
        hz: 250,
        // xeon-modern: wakeup 500 + context switch 1000 ns.
        work_delay: Nanos(1500),
    }
}

const fn cqe(usec: u32, pkts: u32) -> CqSetting {
    CqSetting {
        usec,
        pkts,
        cqe_mode: true,
    }
}

fn get(row: &TraceRow, k: &str) -> i64 {
    row.values.iter().find(|(n, _)| *n == k).unwrap().1
}

#[test]
fn defaults_follow_the_driver() {
    // mlx5e_build_nic_params / mlx5e_set_rx_cq_mode_params: DIM on both
    // ways; RX CQE-based on a chip with the mode, rx-usecs 3 there and 16
    // in EQE mode; frames 32; TX EQE, 16 us. With DIM on, the CQs start at
    // the default profile (index 1): RX CQE 8/128, TX EQE 8/128.
    let cfg = Mlx5Cfg::default();
    assert_eq!(
        cfg.static_settings(true),
        (
            cqe(3, 32),
            CqSetting {
                usec: 16,
                pkts: 32,
                cqe_mode: false
            }
        )
    );
    assert_eq!(cfg.static_settings(false).0.usec, 16);
    let m = cfg.build(&ctx());
    assert_eq!(m.invocation(), Invocation::NapiComplete);
    let p = m.initial();
    assert_eq!(p.cq_rx, Some(cqe(8, 128)));
    assert_eq!(
        p.cq_tx,
        Some(CqSetting {
            usec: 8,
            pkts: 128,
            cqe_mode: false
        })
    );
    // Static: the values as given.
    let st = Mlx5Cfg {
        adaptive_rx: false,
        adaptive_tx: false,
        cqe_mode_rx: Some(false),
        rx_usecs: Some(50),
        rx_frames: 64,
        ..Default::default()
    };
    let p = st.build(&ctx()).initial();
    assert_eq!(
        p.cq_rx.map(|c| (c.usec, c.pkts, c.cqe_mode)),
        Some((50, 64, false))
    );
    assert!(st.interval_is_static());
}

#[test]
fn refusals_carry_the_driver_messages() {
    let port = PortCaps {
        chip: "cx5",
        throttle: cx5(),
    };
    let bad_time = Mlx5Cfg {
        rx_usecs: Some(4096),
        ..Default::default()
    };
    let e = bad_time.validate(&port).unwrap_err();
    assert_eq!(e.field, "rx_usecs");
    assert!(
        e.message
            .starts_with("Max coalesce time 4095 usecs, tx-usecs (16) rx-usecs (4096)"),
        "{}",
        e.message
    );
    let bad_frames = Mlx5Cfg {
        tx_frames: 65_536,
        ..Default::default()
    };
    let e = bad_frames.validate(&port).unwrap_err();
    assert_eq!(e.field, "tx_frames");
    assert!(e
        .message
        .starts_with("Max coalesce frames 65535, tx-frames (65536) rx-frames (32)"));
    assert!(Mlx5Cfg {
        rx_usecs: Some(4095),
        tx_frames: 65_535,
        ..Default::default()
    }
    .validate(&port)
    .is_ok());
    // A device without cq_period_start_from_cqe.
    let no_cqe = PortCaps {
        chip: "cx4",
        throttle: Throttle::Cq {
            frames: true,
            cqe_mode: false,
            resolution_us: 1,
            default_adaptive_rx: true,
        },
    };
    let e = Mlx5Cfg {
        cqe_mode_tx: true,
        ..Default::default()
    }
    .validate(&no_cqe)
    .unwrap_err();
    assert_eq!(e.field, "cqe_mode_tx");
    assert!(e
        .message
        .starts_with("cqe-mode-rx/tx is not supported on this device"));
    // Not a CQ chip.
    let e = Mlx5Cfg::default()
        .validate(&PortCaps {
            chip: "82599",
            throttle: Throttle::Eitr2048ns,
        })
        .unwrap_err();
    assert_eq!(e.field, "kind");
}

/// One decision of the recorded trace: (call, ppms, bpms, epms, cmp,
/// tune state, profile index, tired, the RX CQ written by the work).
type Decision = (usize, i64, i64, i64, i64, i64, i64, i64, Option<CqSetting>);

#[test]
fn net_dim_decisions_on_a_recorded_trace_match_lib_dim() {
    // RX DIM alone (adaptive-tx off), CQE mode: RX CQE profiles
    // {2/256, 8/128, 16/64, 32/64, 64/64}, start index 1. NAPI completes
    // every 100 us (call k at (k + 1) x 100 us), one completion event per
    // call; per call 8 x 1500-B packets (calls 0..=195), 16 (196..=323),
    // then 2 (324..=387). The work runs 1.5 us after each decision, before
    // the next call.
    //
    // Derivation from lib/dim (net_dim, net_dim_decision, dim_calc_stats;
    // windows of 64 events, delta 6400 us each):
    // W1 calls 0 -> 64: 512 pkts, 768000 B: ppms ceil(512000/6400) = 80,
    //    bpms 120000, epms ceil(64000/6400) = 10. Parking on top against a
    //    zero reference: better (2) -> exit parking left (index 1 != 0):
    //    step to 0, tired 1. Work: profile 0 = 2 us / 256.
    // W2 65 -> 129: same stats -> same (1), not better -> turn right
    //    (steps_right = 0); not on top (steps_left 1 is not > 1) -> step
    //    to 1, tired 2. Work: 8 / 128.
    // W3 130 -> 194: same -> turn left (steps_left = 0); not on top
    //    (steps_right 1) -> step to 0, tired 3. Work: 2 / 256.
    // W4 195 -> 259: 16 pkts per call: ppms 160, bpms 240000, epms 10;
    //    bytes more than 10 % up -> better (2), no turn; going left at
    //    index 0 -> on edge -> park on top (tired 0). No change: the
    //    measurement restarts at this call.
    // W5 259 -> 323: same (1): stays parked, the reference frozen.
    // W6 323 -> 387: 2 pkts per call: ppms 20, bpms 30000, epms 10;
    //    against the frozen (160, 240000, 10): worse (0) -> exit parking
    //    right (index 0): step to 1, tired 1. Work: 8 / 128.
    let want: [Decision; 6] = [
        (
            64,
            80,
            120_000,
            10,
            2,
            TuneState::GoingLeft as i64,
            0,
            1,
            Some(cqe(2, 256)),
        ),
        (
            129,
            80,
            120_000,
            10,
            1,
            TuneState::GoingRight as i64,
            1,
            2,
            Some(cqe(8, 128)),
        ),
        (
            194,
            80,
            120_000,
            10,
            1,
            TuneState::GoingLeft as i64,
            0,
            3,
            Some(cqe(2, 256)),
        ),
        (
            259,
            160,
            240_000,
            10,
            2,
            TuneState::ParkingOnTop as i64,
            0,
            0,
            None,
        ),
        (
            323,
            160,
            240_000,
            10,
            1,
            TuneState::ParkingOnTop as i64,
            0,
            0,
            None,
        ),
        (
            387,
            20,
            30_000,
            10,
            StatsCmp::Worse as i64,
            TuneState::GoingRight as i64,
            1,
            1,
            Some(cqe(8, 128)),
        ),
    ];
    let cfg = Mlx5Cfg {
        adaptive_tx: false,
        ..Default::default()
    };
    let mut m = cfg.build(&ctx());
    assert_eq!(m.initial().cq_rx, Some(cqe(8, 128)));
    let mut got: Vec<Decision> = vec![];
    for k in 0..=387usize {
        let pkts = match k {
            0..=195 => 8,
            196..=323 => 16,
            _ => 2,
        };
        let now = SimTime((k as u64 + 1) * 100_000);
        let s = Sample {
            now,
            rx_packets: pkts,
            rx_bytes: pkts * 1500,
            interrupts: 1,
            ..Default::default()
        };
        assert_eq!(m.on_sample(&s), None, "mlx5 writes only from its work");
        let row = m.last_decision().cloned();
        let work = m.take_work();
        let Some(row) = row else { continue };
        // Calls that complete no measurement (ppms -1) decide nothing.
        if row.t_ns != now.as_ns() || get(&row, "ppms") < 0 {
            continue;
        }
        let write = work.map(|at| {
            assert_eq!(at, now + Nanos(1500), "the work runs 1.5 us later");
            let p = m.run_work(at).expect("the work writes the CQ");
            let w = m.last_decision().unwrap();
            assert_eq!((get(w, "work"), get(w, "applied"), get(w, "tx")), (2, 1, 0));
            assert_eq!(p.cq_tx, None, "RX DIM writes the RX CQ only");
            p.cq_rx.unwrap()
        });
        got.push((
            k,
            get(&row, "ppms"),
            get(&row, "bpms"),
            get(&row, "epms"),
            get(&row, "cmp"),
            get(&row, "tune_state"),
            get(&row, "profile_ix"),
            get(&row, "tired"),
            write,
        ));
    }
    assert_eq!(got, want);
}
