//! Unit tests of e1000 ITR moderation (`moderation::e1000_itr`).

use super::super::testutil;
use super::LatencyClass::*;
use super::*;

/// One interrupt's sample at `t_us` [us].
fn sample(t_us: u64, tx: (u64, u64), rx: (u64, u64)) -> Sample {
    testutil::sample(t_us * 1000, tx, rx)
}

#[test]
fn option_check_follows_param_c() {
    // e1000_check_options in e1000_param.c@30c0923 (e1000) and
    // e1000e param.c "Interrupt Throttling Rate" blocks.
    use Driver::*;
    let table = [
        (E1000, None, 3, 20_000, ItrMode::DynamicConservative),
        (E1000, Some(0), 0, 0, ItrMode::Off),
        (E1000, Some(1), 1, 20_000, ItrMode::Dynamic),
        (E1000, Some(3), 3, 20_000, ItrMode::DynamicConservative),
        (E1000, Some(4), 4, 4, ItrMode::Simplified),
        // Static: itr_setting = itr & ~3, adapter->itr keeps the value.
        (E1000, Some(8000), 8000, 8000, ItrMode::Static(8000)),
        (E1000, Some(100), 100, 100, ItrMode::Static(100)),
        (
            E1000,
            Some(100_000),
            100_000,
            100_000,
            ItrMode::Static(100_000),
        ),
        (E1000, Some(3001), 3000, 3001, ItrMode::Static(3001)),
        // e1000: invalid -> validate sets 3 -> setting 3 & ~3 = 0 (off).
        (E1000, Some(2), 0, 3, ItrMode::Off),
        (E1000, Some(99), 0, 3, ItrMode::Off),
        (E1000, Some(100_001), 0, 3, ItrMode::Off),
        // e1000e: 2 is "Invalid mode - setting default" -> 3; out of
        // range -> opt.def 3 -> conservative, 20000.
        (E1000e, None, 3, 20_000, ItrMode::DynamicConservative),
        (E1000e, Some(2), 3, 20_000, ItrMode::DynamicConservative),
        (E1000e, Some(99), 3, 20_000, ItrMode::DynamicConservative),
        (
            E1000e,
            Some(100_001),
            3,
            20_000,
            ItrMode::DynamicConservative,
        ),
        (E1000e, Some(4), 4, 4, ItrMode::Simplified),
        (
            E1000e,
            Some(20_000),
            20_000,
            20_000,
            ItrMode::Static(20_000),
        ),
    ];
    for (d, p, setting, itr, mode) in table {
        let o = check_option(d, p);
        assert_eq!(
            (o.setting, o.itr, o.mode()),
            (setting, itr, mode),
            "{d:?} {p:?}"
        );
    }
}

#[test]
fn update_itr_transitions_follow_the_thresholds() {
    // e1000_update_itr (7.3.21-k8), one row per branch (class, packets, bytes).
    let table = [
        // packets == 0: unchanged.
        (Lowest, 0, 0, Lowest),
        (Bulk, 0, 100_000, Bulk),
        // lowest: bytes/packets > 8000 -> bulk (TSO/jumbo).
        (Lowest, 2, 16_002, Bulk),
        (Lowest, 2, 16_000, Low), // bpp 8000 is not > 8000; 2 < 5 and > 512
        // lowest: packets < 5 and bytes > 512 -> low.
        (Lowest, 4, 513, Low),
        (Lowest, 4, 512, Lowest),
        (Lowest, 5, 6000, Lowest),
        // low, bytes > 10000: bpp > 8000 -> bulk.
        (Low, 1, 10_001, Bulk),
        // low, bytes > 10000: packets < 10 -> bulk.
        (Low, 9, 10_800, Bulk),
        // low, bytes > 10000: bpp > 1200 -> bulk.
        (Low, 20, 24_020, Bulk), // bpp 1201
        // low, bytes > 10000: packets > 35 -> lowest (small packets).
        (Low, 36, 10_800, Lowest), // bpp 300
        (Low, 35, 10_800, Low),
        (Low, 20, 24_000, Low), // bpp 1200 not > 1200, 20 not > 35
        // low, bytes <= 10000: bpp > 2000 -> bulk.
        (Low, 4, 8_004, Bulk), // bpp 2001
        (Low, 5, 10_000, Low), // bpp 2000
        // low: packets <= 2 and bytes < 512 -> lowest (ping).
        (Low, 2, 511, Lowest),
        (Low, 2, 512, Low),
        (Low, 3, 200, Low),
        // bulk, bytes > 25000: packets > 35 -> low.
        (Bulk, 36, 25_001, Low),
        (Bulk, 35, 52_500, Bulk),
        // bulk, bytes <= 25000: bytes < 6000 -> low (igb: 1500).
        (Bulk, 1, 5_999, Low),
        (Bulk, 4, 6_000, Bulk),
        (Bulk, 10, 25_000, Bulk),
    ];
    for (c, p, b, want) in table {
        assert_eq!(update_itr(c, p, b), want, "{c:?} {p} pkts {b} B");
    }
    // The igb variant differs only in the bulk -> low byte test.
    assert_eq!(update_class(Bulk, 4, 5_999, 1500), Bulk);
    assert_eq!(update_class(Bulk, 1, 1_499, 1500), Low);
}

#[test]
fn ramp_matches_the_documented_sequences() {
    // e1000_set_itr ramp min(itr + new/4, new): 4000 -> 20000 goes 9000,
    // 14000, 19000, 20000; 20000 -> 70000 goes 37500, 55000, 70000;
    // decreases are immediate.
    let mut r = 4000;
    let mut seq = vec![];
    while r != 20_000 {
        r = ramp(r, 20_000);
        seq.push((r, ints_per_s_to_itr_256ns(r)));
    }
    assert_eq!(
        seq,
        vec![(9000, 434), (14000, 279), (19000, 205), (20000, 195)]
    );
    let mut r = 20_000;
    let mut seq = vec![];
    while r != 70_000 {
        r = ramp(r, 70_000);
        seq.push((r, ints_per_s_to_itr_256ns(r)));
    }
    assert_eq!(seq, vec![(37_500, 104), (55_000, 71), (70_000, 55)]);
    assert_eq!(ramp(70_000, 4000), 4000);
    assert_eq!(ramp(20_000, 4000), 4000);
}

#[test]
fn initial_registers_and_invocation_per_mode() {
    // e1000_configure_rx: configure writes 1e9/(itr*256) iff itr_setting != 0;
    // timers TIDV 8, TADV 32, RDTR 0, RADV 8.
    let m = E1000Itr::new(Driver::E1000, None);
    let p = m.initial();
    assert_eq!(p.itr_256ns, Some(195));
    assert_eq!(
        (p.rdtr_1024ns, p.radv_1024ns, p.tidv_1024ns, p.tadv_1024ns),
        (Some(0), Some(8), Some(8), Some(32))
    );
    assert_eq!(m.invocation(), Invocation::PerInterrupt);
    assert_eq!(m.name(), "e1000-itr");
    let m = E1000Itr::new(Driver::E1000, Some(0));
    assert_eq!(m.initial().itr_256ns, Some(0));
    assert_eq!(m.invocation(), Invocation::Never);
    let m = E1000Itr::new(Driver::E1000, Some(8000));
    assert_eq!(m.initial().itr_256ns, Some(488));
    assert_eq!(m.invocation(), Invocation::Never);
    // Mode 4: 1e9/1024 = 976562; low 16 bits = 976562 - 14*65536 = 59058.
    let m = E1000Itr::new(Driver::E1000, Some(4));
    assert_eq!(m.initial().itr_256ns, Some(59_058));
    assert_eq!(
        m.invocation(),
        Invocation::Periodic {
            period: WATCHDOG,
            at_start: true
        }
    );
    let m = E1000Itr::new(Driver::E1000, None).with_timers(0, 128, 64, 64);
    assert_eq!(m.initial().radv_1024ns, Some(128));
}

#[test]
fn conservative_mode_never_reaches_70000() {
    // e1000_set_itr: with itr_setting 3 a lowest class is turned into low
    // before the max, so ping traffic (1 packet of 98 B each way: the
    // "packets <= 2 and bytes < 512" test) stays at 20000 = the start
    // value, and nothing is written.
    let mut m = E1000Itr::new(Driver::E1000, Some(3));
    for k in 1..=5 {
        assert_eq!(m.on_sample(&sample(k * 100, (1, 98), (1, 98))), None);
        assert_eq!((m.tx_class, m.rx_class, m.itr), (Low, Low, 20_000));
    }
    // Mode 1 climbs to 70000 in three steps (ITR 104, 71, 55): the first
    // call sees class lowest (initial 0) already.
    let mut m = E1000Itr::new(Driver::E1000, Some(1));
    let regs: Vec<_> = (1..=4)
        .map(|k| {
            m.on_sample(&sample(k * 100, (1, 98), (1, 98)))
                .and_then(|p| p.itr_256ns)
        })
        .collect();
    assert_eq!(regs, vec![Some(104), Some(71), Some(55), None]);
}

#[test]
fn non_gigabit_link_pins_4000() {
    // e1000_set_itr: speed != 1000 -> new_itr 4000 (a decrease: at once).
    let mut m = E1000Itr::new(Driver::E1000, Some(1)).with_link_mbps(100);
    let p = m.on_sample(&sample(100, (1, 98), (1, 98))).unwrap();
    assert_eq!(p.itr_256ns, Some(976));
    assert_eq!(m.on_sample(&sample(200, (1, 98), (1, 98))), None);
}

#[test]
fn simplified_mode_uses_the_goc_dif_formula_every_watchdog() {
    // Mode 4 -> the 5.x e1000_watchdog formula; symmetric 2-s traffic -> 2000/s (1953),
    // idle -> 8000/s (488); written on every run.
    let mut m = E1000Itr::new(Driver::E1000, Some(4));
    let s = testutil::watchdog_octets(50_000_000, 50_000_000);
    assert_eq!(m.on_sample(&s).unwrap().itr_256ns, Some(1953));
    assert_eq!(
        m.on_sample(&Sample::default()).unwrap().itr_256ns,
        Some(488)
    );
    assert_eq!(
        m.on_sample(&Sample::default()).unwrap().itr_256ns,
        Some(488)
    );
    assert_eq!(m.last_decision().unwrap().values[2], ("rate_per_s", 8000));
}

#[test]
fn static_and_off_never_change_itr() {
    let mut m = E1000Itr::new(Driver::E1000e, Some(3000));
    assert_eq!(m.initial().itr_256ns, Some(1302));
    assert_eq!(
        m.on_sample(&sample(1, (100, 150_000), (100, 150_000))),
        None
    );
    let mut m = E1000Itr::new(Driver::E1000, Some(50));
    assert_eq!(m.initial().itr_256ns, Some(0));
    assert_eq!(m.on_sample(&sample(1, (100, 150_000), (0, 0))), None);
}

#[test]
fn idle_ping_bulk_ping_sequence_mode_3() {
    // Default (mode 3), hand-derived from e1000_update_itr/e1000_set_itr. Each row: the
    // interrupt's TX and RX totals -> the ITR written (None = no write).
    //  1 idle (0 packets): classes stay 0, clamped to low -> 20000 = itr.
    //  2 ping 1x98 B each way: low, "<= 2 pkts, < 512 B" -> lowest -> low.
    //  3 bulk RX 40 x 1514 B = 60560 B, TX 20 ACKs x 66 B = 1320 B:
    //    RX low, > 10000 B, bpp 1514 > 1200 -> bulk; TX low -> low
    //    (bytes 1320 <= 10000, bpp 66, 20 packets). max = bulk -> 4000,
    //    a decrease -> at once: ITR 976.
    //  4 same bulk: RX bulk, bytes > 25000 and 40 > 35 packets -> low
    //    (many full frames per interrupt leave bulk); TX low -> 20000,
    //    an increase: ramp 4000 + 20000/4 = 9000 (434).
    //  5 same bulk: RX low -> bulk again (bpp 1514 > 1200) -> 4000 (976).
    //  6 ping: RX bulk, bytes 98 < 6000 -> low; TX low -> low -> 20000:
    //    ramp 4000 + 5000 = 9000 (434).
    //  7 ping: RX low -> lowest -> low; -> 14000 (279).
    //  8 ping: -> 19000 (205).  9 ping: -> 20000 (195).  10 ping: none.
    let bulk = ((20, 1320), (40, 60_560));
    let ping = ((1, 98), (1, 98));
    let idle = ((0, 0), (0, 0));
    let steps = [
        (idle, None),
        (ping, None),
        (bulk, Some(976)),
        (bulk, Some(434)),
        (bulk, Some(976)),
        (ping, Some(434)),
        (ping, Some(279)),
        (ping, Some(205)),
        (ping, Some(195)),
        (ping, None),
    ];
    let mut m = E1000Itr::new(Driver::E1000e, None);
    for (k, ((tx, rx), want)) in steps.into_iter().enumerate() {
        let got = m
            .on_sample(&sample(k as u64 * 100, tx, rx))
            .and_then(|p| p.itr_256ns);
        assert_eq!(got, want, "step {}", k + 1);
    }
}
