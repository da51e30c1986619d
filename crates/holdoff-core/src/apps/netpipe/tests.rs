//! Unit tests of the NetPIPE model (`apps::netpipe`).

use super::*;

/// Drive a whole run; `t_of(index)` gives the half round trip every trial
/// of that point should measure. Returns all points handed out.
fn drive(cfg: NetpipeConfig, mut t_of: impl FnMut(u32) -> Nanos) -> (Netpipe, Vec<Point>) {
    let mut np = Netpipe::new(cfg);
    let mut points = Vec::new();
    while let Some(p) = np.next_point() {
        points.push(p);
        let elapsed = Nanos(t_of(p.index).0 * 2 * p.nrepeat);
        let mut out = None;
        for _ in 0..cfg.trials {
            out = np.trial_done(elapsed);
        }
        assert!(out.is_some());
        assert!(points.len() < 10_000, "runaway schedule");
    }
    (np, points)
}

fn fast(_: u32) -> Nanos {
    Nanos::from_us(10)
}

#[test]
fn default_size_schedule() {
    let (np, points) = drive(NetpipeConfig::default(), fast);
    let sizes: Vec<(u32, u64)> = points.iter().map(|p| (p.index, p.bytes)).collect();
    // inc: 1 for nq = 0..2, then doubled on odd nq (2 at nq 3, 4 at nq 5,
    // 8 at nq 7, ...). Single points while inc <= DEFPERT + 1 = 4:
    // 1, 2, 3 (inc 1), 4, 6 (inc 2), 8, 12 (inc 4). From len 16 (inc 8 > 4)
    // every size is run at len-3, len, len+3: 16 (inc 8), 24 (8), 32 (16),
    // 48 (16), 64 (32).
    let head = [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 6),
        (5, 8),
        (6, 12),
        (7, 13),
        (8, 16),
        (9, 19),
        (10, 21),
        (11, 24),
        (12, 27),
        (13, 29),
        (14, 32),
        (15, 35),
        (16, 45),
        (17, 48),
        (18, 51),
        (19, 61),
        (20, 64),
        (21, 67),
    ];
    assert_eq!(&sizes[..head.len()], &head);
    // The 2004 post's lines 70-81 and 121-123.
    let seed = [
        (70, 24573),
        (71, 24576),
        (72, 24579),
        (73, 32765),
        (74, 32768),
        (75, 32771),
        (76, 49149),
        (77, 49152),
        (78, 49155),
        (79, 65533),
        (80, 65536),
        (81, 65539),
    ];
    assert_eq!(&sizes[70..82], &seed);
    // Last size 8388608 = 2^23 with inc 2^22: the next len 12582912 is
    // above MAXINT 10000000, so the run ends at index 123 (the 2004 post).
    assert_eq!(
        &sizes[sizes.len() - 3..],
        &[(121, 8388605), (122, 8388608), (123, 8388611)]
    );
    assert_eq!(points.len(), 124);
    assert_eq!(np.results().len(), 124);
    assert!(np.is_finished());
}

#[test]
fn eight_mib_end_gives_the_same_run() {
    let cfg = NetpipeConfig {
        end_bytes: 8_388_608,
        ..NetpipeConfig::default()
    };
    let (_, a) = drive(cfg, fast);
    let (_, b) = drive(NetpipeConfig::default(), fast);
    let sizes = |v: &[Point]| v.iter().map(|p| p.bytes).collect::<Vec<_>>();
    assert_eq!(sizes(&a), sizes(&b));
}

#[test]
fn first_point_uses_the_20us_guess() {
    // RUNTM / (0.000020 + 1/8000) with 1/8000 == 0 in C: the exact
    // quotient of the doubles 0.1 and 0.000020 is 4999.99999999999987,
    // below 5000 by 1.3e-13. x87 keeps that (its ulp near 5000 is 2^-51,
    // 4.4e-16) and truncates to 4999, as the 2004 post prints; IEEE double
    // rounds it to 5000.0 (ulp 2^-40, 9.1e-13).
    let mut np = Netpipe::new(NetpipeConfig::default());
    assert_eq!(
        np.next_point(),
        Some(Point {
            index: 0,
            bytes: 1,
            nrepeat: 4999
        })
    );
    let mut np = Netpipe::new(NetpipeConfig {
        float_eval: FloatEval::Double,
        ..NetpipeConfig::default()
    });
    assert_eq!(np.next_point().unwrap().nrepeat, 5000);
    // start >= 8000: start/8000 >= 1 s of guess, 0.1/1.00002 < 1 -> TRIALS.
    let mut np = Netpipe::new(NetpipeConfig {
        start_bytes: 8000,
        ..NetpipeConfig::default()
    });
    assert_eq!(np.next_point().unwrap().nrepeat, 3);
}

#[test]
fn first_point_with_a_pretest_uses_the_formula() {
    // NetPIPE 3.6.x: tlast from the pre-test, prev = start = 1, inc = 1:
    // 0.1 / (1/1 * 300 us) = 333.3 -> 333.
    let mut np = Netpipe::new(NetpipeConfig {
        first_tlast: Some(Nanos::from_us(300)),
        ..NetpipeConfig::default()
    });
    assert_eq!(np.next_point().unwrap().nrepeat, 333);
    // A pre-test at or above STOPTM ends the run before it starts.
    let mut np = Netpipe::new(NetpipeConfig {
        first_tlast: Some(STOPTM),
        ..NetpipeConfig::default()
    });
    assert_eq!(np.next_point(), None);
}

#[test]
fn repeats_follow_the_seed_log() {
    // The 2004 post, DITR run. Points 1 and 2 follow t = 250.03 and 250.02 us
    // with prev/(prev-inc+1) = 1/1 and 2/2: 0.1/250.03e-6 = 399.95 and
    // 0.1/250.02e-6 = 399.97 -> 399.
    // Later points: prev is the previous point's size, inc the current one.
    //  71: prev 24573, inc 8192:  24573/16382 = 1.50000; 0.1/(1.5*492.85e-6) = 135.27 -> 135
    //  72: prev 24576, inc 8192:  24576/16385 = 1.49991; 0.1/(1.49991*492.86e-6) = 135.28 -> 135
    //  73: prev 24579, inc 16384: 24579/8196 = 2.99890;  0.1/(2.99890*492.84e-6) = 67.66 -> 67
    //  74: prev 32765, inc 16384: 32765/16382 = 2.00006; 0.1/(2.00006*732.39e-6) = 68.27 -> 68
    //  75: prev 32768: 32768/16385 = 1.99988; 0.1/(1.99988*732.35e-6) = 68.28 -> 68
    //  76: prev 32771: 32771/16388 = 1.99969; 0.1/(1.99969*732.33e-6) = 68.28 -> 68
    //  77: prev 49149: 49149/32766 = 1.50000; 0.1/(1.5*858.04e-6) = 77.70 -> 77
    //  78: prev 49152: 49152/32769 = 1.49989; 0.1/(1.49989*830.77e-6) = 80.25 -> 80
    //  79: prev 49155, inc 32768: 49155/16388 = 2.99945; 0.1/(2.99945*750.69e-6) = 44.41 -> 44
    //  80: prev 65533: 65533/32766 = 2.00003; 0.1/(2.00003*1221.00e-6) = 40.95 -> 40
    //  81: prev 65536: 65536/32769 = 1.99997; 0.1/(1.99997*1221.24e-6) = 40.94 -> 40
    let cases: [(u64, u64, f64, u64); 13] = [
        (1, 1, 250.03e-6, 399),
        (2, 1, 250.02e-6, 399),
        (24573, 8192, 492.85e-6, 135),
        (24576, 8192, 492.86e-6, 135),
        (24579, 16384, 492.84e-6, 67),
        (32765, 16384, 732.39e-6, 68),
        (32768, 16384, 732.35e-6, 68),
        (32771, 16384, 732.33e-6, 68),
        (49149, 16384, 858.04e-6, 77),
        (49152, 16384, 830.77e-6, 80),
        (49155, 32768, 750.69e-6, 44),
        (65533, 32768, 1221.00e-6, 40),
        (65536, 32768, 1221.24e-6, 40),
    ];
    for (prev, inc, tlast, want) in cases {
        for eval in [FloatEval::X87Extended, FloatEval::Double] {
            assert_eq!(repeats(0.1, prev, inc, tlast, 3, eval), want, "prev {prev}");
        }
    }
    // Using the current size instead of the previous one would give a
    // different count at 73: 32765/16382 * 492.84e-6 -> 0.1/9.857e-4 = 101.
    assert_eq!(
        repeats(0.1, 32765, 16384, 492.84e-6, 3, FloatEval::Double),
        101
    );
    // ITR=8000 run, 120 and 121: prev 6291456 / 6291459, inc 2097152,
    // ratio 1.5; 0.1/(1.5*0.05385183) = 1.24 < TRIALS -> 3.
    assert_eq!(
        repeats(0.1, 6291456, 2097152, 0.05385183, 3, FloatEval::X87Extended),
        3
    );
    assert_eq!(
        repeats(0.1, 6291459, 2097152, 0.05385135, 3, FloatEval::X87Extended),
        3
    );
}

#[test]
fn state_machine_chains_repeats_from_measured_times() {
    // The 2004 post's times [ns] for points 0-2 and 70-80; others fast.
    let seed_t = |i: u32| -> Option<u64> {
        Some(match i {
            0 => 250_030,
            1 | 2 => 250_020,
            70 => 492_850,
            71 => 492_860,
            72 => 492_840,
            73 => 732_390,
            74 => 732_350,
            75 => 732_330,
            76 => 858_040,
            77 => 830_770,
            78 => 750_690,
            79 => 1_221_000,
            80 => 1_221_240,
            _ => return None,
        })
    };
    let (np, points) = drive(NetpipeConfig::default(), |i| {
        seed_t(i).map_or(Nanos::from_us(10), Nanos)
    });
    // nrepeat printed in the 2004 post for points 0-2 and 71-81.
    let want = [
        (0, 4999),
        (1, 399),
        (2, 399),
        (71, 135),
        (72, 135),
        (73, 67),
        (74, 68),
        (75, 68),
        (76, 68),
        (77, 77),
        (78, 80),
        (79, 44),
        (80, 40),
        (81, 40),
    ];
    for (i, n) in want {
        assert_eq!(points[i].nrepeat, n, "point {i}");
    }
    assert_eq!(np.results()[70].t, Nanos(492_850));
}

#[test]
fn point_keeps_the_minimum_over_trials() {
    let mut np = Netpipe::new(NetpipeConfig::default());
    let p = np.next_point().unwrap();
    assert_eq!(p.nrepeat, 4999);
    // Half round trips 300, 250.03, 280 us -> elapsed = 2 * 4999 * t.
    assert_eq!(np.trial_done(Nanos(2 * 4999 * 300_000)), None);
    // Still the same point while trials are outstanding.
    assert_eq!(np.next_point(), Some(p));
    assert_eq!(np.trial_done(Nanos(2 * 4999 * 250_030)), None);
    let r = np.trial_done(Nanos(2 * 4999 * 280_000)).unwrap();
    assert_eq!(r.t, Nanos(250_030));
    // tlast = that minimum: next count 0.1/250.03e-6 = 399.95 -> 399.
    assert_eq!(np.next_point().unwrap().nrepeat, 399);
}

#[test]
fn zero_time_becomes_one_microsecond() {
    let mut np = Netpipe::new(NetpipeConfig::default());
    np.next_point().unwrap();
    let mut r = None;
    for _ in 0..TRIALS {
        r = np.trial_done(Nanos::ZERO);
    }
    assert_eq!(r.unwrap().t, Nanos::from_us(1));
}

#[test]
fn stop_rule_checks_the_last_point_of_a_size() {
    // Indexes 10-12 are 21/24/27 and 13-15 are 29/32/35 (see the schedule
    // test). A slow point in the middle of a size does not stop the run
    // when the size's last point is fast; the check happens before each new
    // size and uses the last point's time, and stops when tlast >= STOPTM.
    let (np, points) = drive(NetpipeConfig::default(), |i| match i {
        10 => Nanos::from_ms(1_500),
        14 => Nanos::from_ms(2_000),
        15 => STOPTM,
        _ => Nanos::from_us(10),
    });
    assert_eq!(points.last().unwrap().index, 15);
    assert_eq!(points.len(), 16);
    assert!(np.is_finished());
    // A time just below STOPTM does not stop.
    let (_, points) = drive(NetpipeConfig::default(), |i| match i {
        15 => Nanos(STOPTM.0 - 1),
        _ => Nanos::from_us(10),
    });
    assert_eq!(points.len(), 124);
}

#[test]
fn mbps_is_two_to_the_twenty_bits_per_second() {
    // The 2004 post, ITR=8000: 6291456 bytes in 53851.83 us.
    // 6291456 * 8 = 50331648 bits; 0.05385183 s * 1048576 = 56467.74;
    // 50331648 / 56467.74 = 891.3346 -> printed 891.33.
    let m = netpipe_mbps(6_291_456, Nanos(53_851_830));
    assert!((m - 891.335).abs() < 0.005, "{m}");
    assert_eq!(format!("{m:.2}"), "891.33");
    // 1 byte in 250.03 us: 8 / (250.03e-6 * 1048576) = 0.0305 -> 0.03.
    assert_eq!(format!("{:.2}", netpipe_mbps(1, Nanos(250_030))), "0.03");
}

#[test]
fn line_format_matches_nptcp() {
    // C: "%3d: %7d bytes %6d times --> " then " %8.2lf Mbps in %10.2lf usec".
    let r = PointResult {
        index: 0,
        bytes: 1,
        nrepeat: 4999,
        t: Nanos(250_030),
        mbps: netpipe_mbps(1, Nanos(250_030)),
    };
    assert_eq!(
        format_line(&r),
        "  0:       1 bytes   4999 times -->      0.03 Mbps in     250.03 usec"
    );
    // The 2004 post's lines (its whitespace is collapsed, so compare word by word);
    // index, bytes, nrepeat and usec are taken from each line, Mbps is
    // recomputed from bytes and time.
    let seed = "\
0: 1 bytes 4999 times --> 0.03 Mbps in 250.03 usec
1: 2 bytes 399 times --> 0.06 Mbps in 250.02 usec
2: 3 bytes 399 times --> 0.09 Mbps in 250.02 usec
70: 24573 bytes 121 times --> 380.39 Mbps in 492.85 usec
71: 24576 bytes 135 times --> 380.43 Mbps in 492.86 usec
72: 24579 bytes 135 times --> 380.49 Mbps in 492.84 usec
73: 32765 bytes 67 times --> 341.32 Mbps in 732.39 usec
74: 32768 bytes 68 times --> 341.37 Mbps in 732.35 usec
75: 32771 bytes 68 times --> 341.41 Mbps in 732.33 usec
76: 49149 bytes 68 times --> 437.02 Mbps in 858.04 usec
77: 49152 bytes 77 times --> 451.39 Mbps in 830.77 usec
78: 49155 bytes 80 times --> 499.57 Mbps in 750.69 usec
79: 65533 bytes 44 times --> 409.48 Mbps in 1221.00 usec
80: 65536 bytes 40 times --> 409.42 Mbps in 1221.24 usec
81: 65539 bytes 40 times --> 409.43 Mbps in 1221.28 usec
121: 8388605 bytes 3 times --> 379.88 Mbps in 168474.49 usec
122: 8388608 bytes 3 times --> 411.24 Mbps in 155625.68 usec
123: 8388611 bytes 3 times --> 395.81 Mbps in 161693.50 usec
119: 6291456 bytes 3 times --> 891.33 Mbps in 53851.83 usec
120: 6291459 bytes 3 times --> 891.34 Mbps in 53851.35 usec
121: 8388605 bytes 3 times --> 895.99 Mbps in 71429.49 usec
122: 8388608 bytes 3 times --> 881.12 Mbps in 72634.50 usec
123: 8388611 bytes 3 times --> 885.65 Mbps in 72263.48 usec";
    for line in seed.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let usec = w[9];
        let (whole, frac) = usec.split_once('.').unwrap();
        let t = Nanos(whole.parse::<u64>().unwrap() * 1_000 + frac.parse::<u64>().unwrap() * 10);
        let bytes = w[1].parse().unwrap();
        let r = PointResult {
            index: w[0].trim_end_matches(':').parse().unwrap(),
            bytes,
            nrepeat: w[3].parse().unwrap(),
            t,
            mbps: netpipe_mbps(bytes, t),
        };
        let ours = format_line(&r);
        assert_eq!(ours.split_whitespace().collect::<Vec<_>>(), w, "{line}");
    }
}

#[test]
fn x87_emulation_rounds_like_extended_precision() {
    // 1/3 to 64 bits: significand 0xAAAA_AAAA_AAAA_AAAB (rounded up), 2^-65.
    let third = Ext::from_u64(1).div(Ext::from_u64(3));
    assert_eq!(
        third,
        Ext {
            sig: 0xAAAA_AAAA_AAAA_AAAB,
            exp: -65
        }
    );
    // Exact products and quotients stay exact.
    let six = Ext::from_u64(2).mul(Ext::from_u64(3));
    assert_eq!(six.trunc(), 6);
    assert_eq!(Ext::from_u64(12).div(Ext::from_u64(4)).trunc(), 3);
    assert_eq!(Ext::from_f64(0.5).trunc(), 0);
    assert_eq!(Ext::from_f64(4999.75).trunc(), 4999);
    // The 2004 post's first point.
    assert_eq!(
        Ext::from_f64(0.1).div(Ext::from_f64(0.000020)).trunc(),
        4999
    );
}
