//! Unit tests of Linux DIM moderation (`moderation::dim`).

use super::*;
use crate::units::Nanos;
use crate::units::SimTime;
use StatsCmp::*;
use TuneState::*;

fn stats(ppms: i32, bpms: i32, epms: i32) -> DimStats {
    DimStats { ppms, bpms, epms }
}

fn core(ix: u8, ts: TuneState, right: u8, left: u8, tired: u8) -> DimCore {
    DimCore {
        tune_state: ts,
        steps_right: right,
        steps_left: left,
        tired,
        ..DimCore::new(ix)
    }
}

#[test]
fn profiles_match_the_kernel_tables() {
    // net_dim.c profile tables, {usec, pkts} per index; default index 1 for both modes.
    let usec = |p: DimProfile| p.table().map(|m| m.usec);
    let pkts = |p: DimProfile| p.table().map(|m| m.pkts);
    assert_eq!(usec(DimProfile::RxEqe), [1, 8, 64, 128, 256]);
    assert_eq!(pkts(DimProfile::RxEqe), [256; 5]);
    assert_eq!(usec(DimProfile::RxCqe), [2, 8, 16, 32, 64]);
    assert_eq!(pkts(DimProfile::RxCqe), [256, 128, 64, 64, 64]);
    assert_eq!(usec(DimProfile::TxEqe), [1, 8, 32, 64, 128]);
    assert_eq!(pkts(DimProfile::TxEqe), [128; 5]);
    assert_eq!(usec(DimProfile::TxCqe), [5, 8, 16, 32, 64]);
    assert_eq!(pkts(DimProfile::TxCqe), [128, 64, 32, 32, 32]);
    for p in [
        DimProfile::RxEqe,
        DimProfile::RxCqe,
        DimProfile::TxEqe,
        DimProfile::TxCqe,
    ] {
        let d = Dim::with_default_start(p);
        assert_eq!(d.core.profile_ix, 1);
        assert_eq!(d.initial().eitr_us, Some(8)); // index 1 is 8 us in all four
        assert_eq!(d.invocation(), Invocation::PerPoll);
    }
    // A start index beyond the table is clamped to the last profile.
    assert_eq!(Dim::new(DimProfile::RxEqe, 9).initial().eitr_us, Some(256));
}

#[test]
fn significance_is_more_than_ten_percent() {
    // IS_SIGNIFICANT_DIFF: (100 * |val - ref|) / ref > 10, integer division.
    let table = [
        (111, 100, true),  // 11 % > 10
        (110, 100, false), // exactly 10 % is not significant
        (89, 100, true),
        (90, 100, false),
        (12, 10, true),  // 100 * 2 / 10 = 20
        (11, 10, false), // 100 * 1 / 10 = 10
        (1, 9, true),    // 100 * 8 / 9 = 88
        (5, 0, false),   // zero reference: never significant
    ];
    for (val, r, want) in table {
        assert_eq!(is_significant_diff(val, r), want, "{val} vs {r}");
    }
}

#[test]
fn counter_gaps_wrap() {
    // dim.h BIT_GAP: ((end - start) + 2^bits) & (2^bits - 1).
    assert_eq!(bit_gap_u16(5, 65530), 11);
    assert_eq!(bit_gap_u32(10, u32::MAX - 9), 20);
    assert_eq!(bit_gap_u16(100, 36), 64);
}

#[test]
fn stats_are_rates_rounded_up() {
    // dim_calc_stats: ceil(n * 1000 / delta_us); epms always from 64 events.
    let s = |t_ns, p, b, e| DimSample {
        time_ns: t_ns,
        pkt_ctr: p,
        byte_ctr: b,
        event_ctr: e,
    };
    // 1 ms, 100 packets, 150000 bytes: 100, 150000, 64 per ms.
    assert_eq!(
        calc_stats(&s(0, 0, 0, 0), &s(1_000_000, 100, 150_000, 64)),
        Some(stats(100, 150_000, 64))
    );
    // 3 us, 1 packet of 98 bytes: ceil(1000 / 3) = 334, ceil(98000 / 3)
    // = 32667, ceil(64000 / 3) = 21334.
    assert_eq!(
        calc_stats(&s(0, 0, 0, 0), &s(3_000, 1, 98, 64)),
        Some(stats(334, 32_667, 21_334))
    );
    // 1999 ns truncates to 1 us; 999 ns to 0 us -> no statistics.
    assert_eq!(
        calc_stats(&s(0, 0, 0, 0), &s(1_999, 1, 1, 64))
            .unwrap()
            .ppms,
        1000
    );
    assert_eq!(calc_stats(&s(0, 0, 0, 0), &s(999, 1, 1, 64)), None);
    // Packet counter wrapping past 2^32: 10 packets in 1 ms.
    assert_eq!(
        calc_stats(&s(0, u32::MAX, 0, 0), &s(1_000_000, 9, 0, 64))
            .unwrap()
            .ppms,
        10
    );
}

#[test]
fn compare_orders_bytes_then_packets_then_events() {
    // (curr, prev, expected) for each rule of net_dim_stats_compare in order.
    let table = [
        // 1. prev.bpms 0: better if curr has bytes, else same.
        (stats(1, 5, 1), stats(0, 0, 0), Better),
        (stats(0, 0, 9), stats(0, 0, 5), Same),
        // 2. significant bpms difference decides.
        (stats(10, 1111, 64), stats(10, 1000, 64), Better),
        (stats(99, 889, 1), stats(10, 1000, 64), Worse),
        // bpms within 10 % -> 3. ppms: prev 0 -> better if curr > 0.
        (stats(1, 1100, 64), stats(0, 1000, 64), Better),
        (stats(0, 1100, 64), stats(0, 1000, 64), Same),
        // 4. significant ppms difference.
        (stats(112, 1000, 64), stats(100, 1000, 64), Better),
        (stats(88, 1000, 64), stats(100, 1000, 64), Worse),
        // 5. prev.epms 0 -> same.
        (stats(100, 1000, 9), stats(100, 1000, 0), Same),
        // 6. fewer events per ms is better: 64 -> 50 is 21 %.
        (stats(100, 1000, 50), stats(100, 1000, 64), Better),
        (stats(100, 1000, 80), stats(100, 1000, 64), Worse),
        // 7. 64 -> 70 is 9 % (and bytes, packets 5 %): same.
        (stats(105, 1050, 70), stats(100, 1000, 64), Same),
    ];
    for (i, (c, p, want)) in table.into_iter().enumerate() {
        assert_eq!(stats_compare(&c, &p), want, "row {i}");
    }
}

#[test]
fn step_table() {
    // net_dim step(): (before, result, after).
    let table = [
        // tired == 10 -> TOO_TIRED, nothing changes.
        (
            core(2, GoingRight, 1, 0, 10),
            StepResult::TooTired,
            core(2, GoingRight, 1, 0, 10),
        ),
        // right edge.
        (
            core(4, GoingRight, 1, 0, 3),
            StepResult::OnEdge,
            core(4, GoingRight, 1, 0, 3),
        ),
        (
            core(1, GoingRight, 0, 0, 0),
            StepResult::Stepped,
            core(2, GoingRight, 1, 0, 1),
        ),
        // left edge.
        (
            core(0, GoingLeft, 0, 1, 3),
            StepResult::OnEdge,
            core(0, GoingLeft, 0, 1, 3),
        ),
        (
            core(2, GoingLeft, 2, 0, 2),
            StepResult::Stepped,
            core(1, GoingLeft, 2, 1, 3),
        ),
        // parked: no move, but tired still increments.
        (
            core(3, ParkingOnTop, 0, 0, 0),
            StepResult::Stepped,
            core(3, ParkingOnTop, 0, 0, 1),
        ),
    ];
    for (i, (mut before, want, after)) in table.into_iter().enumerate() {
        assert_eq!(before.step(), want, "row {i}");
        assert_eq!(before, after, "row {i}");
    }
}

#[test]
fn on_top_turn_and_park_helpers() {
    // dim.c on-top, turn and park helpers.
    let table = [
        (core(2, ParkingOnTop, 0, 0, 0), true),
        (core(2, ParkingTired, 0, 0, 5), true),
        (core(2, GoingRight, 1, 2, 0), true), // left > 1 and right == 1
        (core(2, GoingRight, 2, 2, 0), false),
        (core(2, GoingRight, 1, 1, 0), false),
        (core(2, GoingLeft, 2, 1, 0), true), // right > 1 and left == 1
        (core(2, GoingLeft, 1, 1, 0), false),
    ];
    for (i, (c, want)) in table.into_iter().enumerate() {
        assert_eq!(c.on_top(), want, "row {i}");
    }
    let mut c = core(2, GoingRight, 3, 2, 4);
    c.turn();
    assert_eq!(c, core(2, GoingLeft, 3, 0, 4));
    c.turn();
    assert_eq!(c, core(2, GoingRight, 0, 0, 4));
    let mut c = core(2, ParkingTired, 3, 2, 4);
    c.turn();
    assert_eq!(c.tune_state, ParkingTired);
    let mut c = core(2, GoingLeft, 3, 2, 4);
    c.park_tired();
    assert_eq!(c, core(2, ParkingTired, 0, 0, 4));
    c.park_on_top();
    assert_eq!(c, core(2, ParkingOnTop, 0, 0, 0));
    // exit_parking: left from a non-zero index, right from index 0.
    let mut c = core(2, ParkingOnTop, 0, 0, 0);
    c.exit_parking();
    assert_eq!(c, core(1, GoingLeft, 0, 1, 1));
    let mut c = core(0, ParkingTired, 0, 0, 0);
    c.exit_parking();
    assert_eq!(c, core(1, GoingRight, 1, 0, 1));
}

#[test]
fn decision_transitions() {
    // net_dim decision(): (before, curr, changed, after, prev_stats after),
    // every case starting from the reference p.
    let p = stats(100, 1000, 64);
    let same = stats(100, 1000, 64);
    let better = stats(100, 2000, 64);
    let worse = stats(100, 500, 64);
    let table = [
        // Parked on top, same -> stays; reference frozen.
        (
            core(1, ParkingOnTop, 0, 0, 0),
            same,
            false,
            core(1, ParkingOnTop, 0, 0, 0),
            p,
        ),
        // Parked on top, better at ix 1 -> exit: going left, ix 0.
        (
            core(1, ParkingOnTop, 0, 0, 0),
            better,
            true,
            core(0, GoingLeft, 0, 1, 1),
            better,
        ),
        // Parked on top, worse at ix 0 -> exit: going right, ix 1.
        (
            core(0, ParkingOnTop, 0, 0, 0),
            worse,
            true,
            core(1, GoingRight, 1, 0, 1),
            worse,
        ),
        // Parked tired: count down; still tired -> no move, reference updated.
        (
            core(2, ParkingTired, 0, 0, 3),
            worse,
            false,
            core(2, ParkingTired, 0, 0, 2),
            worse,
        ),
        // Last tired measurement -> exit parking (left from ix 2).
        (
            core(2, ParkingTired, 0, 0, 1),
            same,
            true,
            core(1, GoingLeft, 0, 1, 1),
            same,
        ),
        // Going right and better -> keep going.
        (
            core(2, GoingRight, 1, 0, 1),
            better,
            true,
            core(3, GoingRight, 2, 0, 2),
            better,
        ),
        // Going right and worse -> turn (steps_left := 0), not on top, step left.
        (
            core(3, GoingRight, 2, 0, 2),
            worse,
            true,
            core(2, GoingLeft, 2, 1, 3),
            worse,
        ),
        // Going right and same counts as not better -> turn as well.
        (
            core(3, GoingRight, 2, 0, 2),
            same,
            true,
            core(2, GoingLeft, 2, 1, 3),
            same,
        ),
        // Going right, better, left 2 / right 1 -> on top -> park (no move).
        (
            core(2, GoingRight, 1, 2, 3),
            better,
            false,
            core(2, ParkingOnTop, 0, 0, 0),
            better,
        ),
        // Going left, worse, right 2 / left 1: turn right (right := 0), step.
        (
            core(1, GoingLeft, 2, 1, 3),
            worse,
            true,
            core(2, GoingRight, 1, 1, 4),
            worse,
        ),
        // Going right at the right edge, better -> on edge -> park on top.
        (
            core(4, GoingRight, 3, 0, 3),
            better,
            false,
            core(4, ParkingOnTop, 0, 0, 0),
            better,
        ),
        // Going left at index 0, better -> on edge -> park on top.
        (
            core(0, GoingLeft, 0, 1, 1),
            better,
            false,
            core(0, ParkingOnTop, 0, 0, 0),
            better,
        ),
        // Tired 10 -> too tired -> park tired, tired kept.
        (
            core(2, GoingRight, 1, 0, 10),
            better,
            false,
            core(2, ParkingTired, 0, 0, 10),
            better,
        ),
    ];
    for (i, (mut c, curr, changed, after, prev_after)) in table.into_iter().enumerate() {
        c.prev_stats = p;
        let mut want = after;
        want.prev_stats = prev_after;
        assert_eq!(c.decision(&curr).0, changed, "row {i}");
        assert_eq!(c, want, "row {i}");
    }
}

#[test]
fn measurement_needs_64_events_and_wraps() {
    // net_dim(): START -> start sample; < 64 events -> nothing.
    let mut c = DimCore::new(1);
    let s = |t_ns, e| DimSample {
        time_ns: t_ns,
        pkt_ctr: 0,
        byte_ctr: 0,
        event_ctr: e,
    };
    let o = c.net_dim(&s(0, 65_500));
    assert!(o.restarted && c.state == MeasureState::MeasureInProgress);
    // 63 events (across the u16 wrap): no decision.
    let o = c.net_dim(&s(1_000_000, 65_500u16.wrapping_add(63)));
    assert_eq!((o.nevents, o.stats), (Some(63), None));
    // 64 events after 2 ms with no traffic: epms ceil(64000 / 2000) = 32;
    // prev all zero -> same -> stays parked, no change, and a new
    // measurement starts here.
    let o = c.net_dim(&s(2_000_000, 65_500u16.wrapping_add(64)));
    assert_eq!(o.stats, Some(stats(0, 0, 32)));
    assert_eq!((o.cmp, o.changed, o.restarted), (Some(Same), false, true));
    assert_eq!(c.start_sample.time_ns, 2_000_000);
    // APPLY_NEW_PROFILE ignores samples.
    c.state = MeasureState::ApplyNewProfile;
    assert_eq!(c.net_dim(&s(9_000_000, 0)), NetDimOutcome::default());
}

/// Feeds `n` identical polls `dt_ns` apart; returns (poll, eitr_us) writes.
fn feed(d: &mut Dim, t: &mut u64, n: usize, dt_ns: u64, s: Sample) -> Vec<(usize, u32)> {
    let mut writes = vec![];
    for i in 0..n {
        *t += dt_ns;
        assert_eq!(
            d.on_sample(&Sample {
                now: SimTime(*t),
                ..s
            }),
            None,
            "DIM writes only from its work item"
        );
        // No work delay: the work runs at the decision, before the next poll.
        if let Some(at) = d.take_work() {
            assert_eq!(at, SimTime(*t));
            let p = d.run_work(at).expect("the work writes the profile");
            writes.push((i, p.eitr_us.unwrap()));
        }
    }
    writes
}

#[test]
fn sequence_idle_ping_bulk() {
    // Hand-derived from the net_dim rules for the RX CQE profiles (usec 2, 8, 16, 32,
    // 64), default index 1 (8 us).
    let mut d = Dim::with_default_start(DimProfile::RxCqe);
    assert_eq!(d.initial().eitr_us, Some(8));
    let mut t = 0u64;
    // Idle: the first poll starts a measurement at t = 1 s; 10 idle
    // polls carry no events -> nothing.
    assert!(feed(&mut d, &mut t, 10, 1_000_000_000, Sample::default()).is_empty());
    assert_eq!(d.core.start_sample.time_ns, 1_000_000_000);
    // Ping: one interrupt, one 98-byte packet per second. The 64th ping
    // (t = 74 s, 73 s after the start) completes the measurement:
    // delta 73e6 us; ppms = ceil(64000 / 73e6) = 1, bpms =
    // ceil(6272000 / 73e6) = 1, epms = 1. Parked on top with a zero
    // reference -> better -> exit parking left: index 0 (2 us).
    let ping = Sample {
        rx_packets: 1,
        rx_bytes: 98,
        interrupts: 1,
        ..Default::default()
    };
    assert_eq!(feed(&mut d, &mut t, 64, 1_000_000_000, ping), vec![(63, 2)]);
    assert_eq!((d.core.tune_state, d.core.tired), (GoingLeft, 1));
    assert_eq!(d.core.prev_stats, stats(1, 1, 1));
    // The next ping restarts the measurement; 64 pings later the same
    // stats -> same, not better -> turn right, not on top (steps_left
    // 1), step to index 1 (8 us), tired 2.
    assert_eq!(feed(&mut d, &mut t, 65, 1_000_000_000, ping), vec![(64, 8)]);
    assert_eq!((d.core.tune_state, d.core.tired), (GoingRight, 2));
    // And back: turn left, step to index 0 (2 us), tired 3.
    assert_eq!(feed(&mut d, &mut t, 65, 1_000_000_000, ping), vec![(64, 2)]);
    assert_eq!((d.core.tune_state, d.core.profile_ix), (GoingLeft, 0));
    assert_eq!(
        (d.core.steps_right, d.core.steps_left, d.core.tired),
        (1, 1, 3)
    );
    // Bulk: a poll every 100 us with one interrupt and 8 x 1514 bytes.
    // The first bulk poll restarts; 64 polls later: delta 6400 us,
    // 512 packets, 775168 bytes -> ppms 80, bpms 121120, epms 10.
    // Versus (1, 1, 1): better -> keep going left, but index 0 is the
    // edge -> park on top, no change (no write).
    let bulk = Sample {
        rx_packets: 8,
        rx_bytes: 12_112,
        interrupts: 1,
        ..Default::default()
    };
    assert!(feed(&mut d, &mut t, 65, 100_000, bulk).is_empty());
    assert_eq!(d.core.tune_state, ParkingOnTop);
    assert_eq!(d.core.prev_stats, stats(80, 121_120, 10));
    assert_eq!(d.core.tired, 0);
    // Steady bulk: the same stats -> same -> stays parked (reference frozen).
    assert!(feed(&mut d, &mut t, 128, 100_000, bulk).is_empty());
    assert_eq!(d.core.tune_state, ParkingOnTop);
    // Twice the bytes per poll: bpms 242240 vs 121120 -> better -> exit
    // parking; index 0 -> going right -> index 1 (8 us), after 64 polls.
    let bulk2 = Sample {
        rx_packets: 16,
        rx_bytes: 24_224,
        ..bulk
    };
    assert!(feed(&mut d, &mut t, 63, 100_000, bulk2).is_empty());
    t += 100_000;
    assert_eq!(
        d.on_sample(&Sample {
            now: SimTime(t),
            ..bulk2
        }),
        None
    );
    assert_eq!(d.current(), CqModer { usec: 8, pkts: 128 });
    let get = |d: &Dim, k: &str| {
        let row = d.last_decision().unwrap();
        row.values.iter().find(|(n, _)| *n == k).unwrap().1
    };
    // The decision's row: the stats, queued work, nothing applied yet.
    assert_eq!(get(&d, "bpms"), 242_240);
    assert_eq!(get(&d, "cmp"), Better as i64);
    assert_eq!(get(&d, "eitr_us"), 8);
    assert_eq!(get(&d, "pkts"), 128);
    assert_eq!((get(&d, "work"), get(&d, "applied")), (1, 0));
    assert_eq!(get(&d, "state"), MeasureState::ApplyNewProfile as i64);
    // The work's row: applied, the measurement restarts.
    let at = d.take_work().unwrap();
    assert_eq!(d.run_work(at).unwrap().eitr_us, Some(8));
    assert_eq!((get(&d, "work"), get(&d, "applied")), (2, 1));
    assert_eq!(get(&d, "state"), MeasureState::StartMeasure as i64);
    assert_eq!(d.take_work(), None, "taken once");
    assert_eq!(d.run_work(at), None, "nothing left to apply");
}

#[test]
fn work_delay_ignores_polls_until_the_work_runs() {
    // lib/dim net_dim: in DIM_APPLY_NEW_PROFILE the call returns at once;
    // the driver's work (mlx5e_rx_dim_work) writes the profile and sets
    // DIM_START_MEASURE, so the next call after it starts the measurement.
    // Polls every 10 us with 1 event, 2 TX packets, 132 bytes (TX EQE);
    // the work runs 25 us after it is queued.
    let mut d = Dim::with_default_start(DimProfile::TxEqe);
    d.work_delay = Nanos(25_000);
    let s = Sample {
        tx_packets: 2,
        tx_bytes: 132,
        interrupts: 1,
        ..Default::default()
    };
    let poll = |d: &mut Dim, t_us: u64| {
        let out = d.on_sample(&Sample {
            now: SimTime(t_us * 1000),
            ..s
        });
        assert_eq!(out, None);
        d.take_work()
    };
    // Start at 10 us; the poll at 650 us has 64 events (640 us): ppms 200,
    // bpms 13200, epms 100, better than the zero reference -> index 0,
    // work queued for 650 + 25 = 675 us.
    for k in 1..65 {
        assert_eq!(poll(&mut d, k * 10), None, "poll at {} us", k * 10);
    }
    assert_eq!(poll(&mut d, 650), Some(SimTime(675_000)));
    assert_eq!(d.core.state, MeasureState::ApplyNewProfile);
    // Polls at 660 and 670 us come before the work: ignored.
    for t_us in [660, 670] {
        assert_eq!(poll(&mut d, t_us), None);
        assert_eq!(d.core.state, MeasureState::ApplyNewProfile);
        let row = d.last_decision().unwrap();
        assert!(row.values.contains(&("nevents", -1)), "{row:?}");
        assert!(row.values.contains(&("work", 0)));
    }
    // The work at 675 us writes TX EQE profile 0 (1 us).
    assert_eq!(d.run_work(SimTime(675_000)).unwrap().eitr_us, Some(1));
    // The poll at 680 us starts the next measurement (without the delay
    // it would have started at 660 us).
    assert_eq!(poll(&mut d, 680), None);
    assert_eq!(d.core.state, MeasureState::MeasureInProgress);
    assert_eq!(d.core.start_sample.time_ns, 680_000);
    // ... and it completes 64 events later, at 1320 us, not at 1300 us.
    for k in 69..132 {
        assert_eq!(poll(&mut d, k * 10), None);
    }
    assert_eq!(d.core.state, MeasureState::MeasureInProgress);
    poll(&mut d, 1320);
    let row = d.last_decision().unwrap();
    assert!(row.values.contains(&("nevents", 64)), "{row:?}");
}

#[test]
fn tx_profiles_use_tx_counters() {
    // TX sets measure TX traffic; RX packets do not count.
    let mut d = Dim::with_default_start(DimProfile::TxEqe);
    let mut t = 0;
    let s = Sample {
        rx_packets: 10,
        rx_bytes: 15_140,
        tx_packets: 2,
        tx_bytes: 132,
        interrupts: 1,
        ..Default::default()
    };
    // First poll starts; 64 polls 10 us apart later: 640 us, 128 TX
    // packets, 8448 bytes -> ppms ceil(128000/640) = 200, bpms 13200,
    // epms 100. Better than zero -> left from index 1 -> index 0 (1 us).
    assert_eq!(feed(&mut d, &mut t, 65, 10_000, s), vec![(64, 1)]);
    assert_eq!(d.core.prev_stats, stats(200, 13_200, 100));
    assert_eq!(d.current().usec, 1);
    assert_eq!(d.name(), "dim");
}
