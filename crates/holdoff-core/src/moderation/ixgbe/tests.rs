//! Linux ixgbe moderation against the C source. Every expected value below
//! was computed by hand from the formulas of `ixgbe_update_itr` /
//! `ixgbe_set_itr` (drivers/net/ethernet/intel/ixgbe/ixgbe_main.c, after
//! commit b4ded8327fea "ixgbe: Update adaptive ITR algorithm") and
//! `ixgbe_set_coalesce` (ixgbe_ethtool.c); the arithmetic is in each row's
//! comment, never taken from a run of the model.

use super::*;
use crate::moderation::testutil::sample;

const W: LinkBranch = LinkBranch::Wide;
const N: LinkBranch = LinkBranch::Narrow;
/// 0x80 | 126, the value `ixgbe_alloc_q_vector` gives each container.
const START: u8 = 0xFE;

/// A container last updated at jiffy 5 with value `itr` (so a call at
/// jiffy 5 or 6 passes the gate).
fn container(itr: u8) -> Container {
    Container {
        itr,
        next_update: Some(6),
    }
}

#[test]
fn update_itr_table_covers_every_band_and_link_branch() {
    // (case, packets, bytes, link, q_vector->itr [usecs << 2], previous
    //  container itr, jiffies now, expected band, expected container itr)
    type Row = (&'static str, u32, u32, LinkBranch, u32, u8, u64, Band, u8);
    let rows: &[Row] = &[
        // time_after(7, 6): more than a jiffy since the last update ->
        // MIN_USECS | LATENCY = 10 + 0x80 = 138.
        ("gate", 500, 750_000, W, 200, START, 7, Band::Gate, 138),
        // jiffies 6 == next_update: not after, so the packets decide.
        // packets 0: (200 >> 2) + 2 = 52, keep flag of 0xFE: 52 + 128 = 180.
        (
            "no_pkts_latency",
            0,
            0,
            W,
            200,
            START,
            6,
            Band::NoPackets,
            180,
        ),
        // previous container 64 (bulk, no flag): 52 + 0 = 52.
        ("no_pkts_bulk", 0, 0, W, 200, 64, 6, Band::NoPackets, 52),
        // q_itr 504 (126 us): 126 + 2 = 128 > 126 -> 126; + 0x80 = 254.
        (
            "no_pkts_capped",
            0,
            0,
            W,
            504,
            START,
            5,
            Band::NoPackets,
            254,
        ),
        // 1 packet of 60 B: latency; avg 60 <= 60 -> 5120; >> 1 = 2560;
        // DIV_ROUND_UP(2560, 512) = 5, * 2 = 10; 0x80 + 10 = 138.
        ("latency_small", 1, 60, W, 200, START, 6, Band::Latency, 138),
        // 3 packets, 4500 B: avg 1500 -> 1500 * 5 + 22420 = 29920; >> 1 =
        // 14960; DIV_ROUND_UP(14960, 512) = 30 (29.2), * 2 = 60; 128 + 60 = 188.
        (
            "latency_1500_10g",
            3,
            4500,
            W,
            200,
            START,
            6,
            Band::Latency,
            188,
        ),
        // Same at 1G: 14960 capped to 8064; DIV_ROUND_UP(8064, 128) = 63,
        // * 2 = 126; 128 + 126 = 254 (the largest value any path stores).
        (
            "latency_1500_1g",
            3,
            4500,
            N,
            200,
            START,
            6,
            Band::Latency,
            254,
        ),
        // 3 packets but 9000 bytes: not latency; < 48: (200 >> 2) + 2 = 52.
        (
            "bytes_9000_under48",
            3,
            9000,
            W,
            200,
            START,
            6,
            Band::Under48,
            52,
        ),
        ("47_pkts", 47, 1000, W, 200, START, 6, Band::Under48, 52),
        // q_itr 504: 126 + 2 -> capped 126.
        (
            "47_pkts_capped",
            47,
            1000,
            W,
            504,
            START,
            6,
            Band::Under48,
            126,
        ),
        // 48..95: keep q_itr >> 2: 200 >> 2 = 50; 336 >> 2 = 84.
        (
            "48_pkts",
            48,
            72_000,
            W,
            200,
            START,
            6,
            Band::Goldilocks,
            50,
        ),
        ("95_pkts", 95, 5_700, W, 336, START, 6, Band::Goldilocks, 84),
        // 96..255: q_itr >> 3: 200 >> 3 = 25 (odd: set_itr writes 100,
        // which the EITR holds as 96); 40 >> 3 = 5 < 10 -> 10.
        ("96_pkts", 96, 144_000, W, 200, START, 6, Band::Under256, 25),
        (
            "255_pkts_floor",
            255,
            15_300,
            W,
            40,
            START,
            6,
            Band::Under256,
            10,
        ),
        // >= 256 packets: bulk (flag 0), sized at 10G (/512, *2).
        // avg 60 -> 5120 -> 10 * 2 = 20.
        ("bulk_60", 256, 256 * 60, W, 200, START, 6, Band::Bulk, 20),
        // avg 61 -> 61 * 40 + 2720 = 5160 -> DIV_ROUND_UP(5160, 512) = 11 -> 22.
        ("bulk_61", 256, 256 * 61, W, 200, START, 6, Band::Bulk, 22),
        // avg 316 -> 12640 + 2720 = 15360 -> 30 (exact) -> 60.
        ("bulk_316", 256, 256 * 316, W, 200, START, 6, Band::Bulk, 60),
        // avg 317 -> 317 * 15 + 11452 = 16207 -> 32 (31.65) -> 64.
        ("bulk_317", 256, 256 * 317, W, 200, START, 6, Band::Bulk, 64),
        // avg 1084 -> 16260 + 11452 = 27712 -> 55 (54.1) -> 110.
        (
            "bulk_1084",
            256,
            256 * 1084,
            W,
            200,
            START,
            6,
            Band::Bulk,
            110,
        ),
        // avg 1085 -> 1085 * 5 + 22420 = 27845 -> 55 (54.4) -> 110.
        (
            "bulk_1085",
            256,
            256 * 1085,
            W,
            200,
            START,
            6,
            Band::Bulk,
            110,
        ),
        // avg 1967 -> 9835 + 22420 = 32255 -> 63 (62.998) -> 126.
        (
            "bulk_1967",
            256,
            256 * 1967,
            W,
            200,
            START,
            6,
            Band::Bulk,
            126,
        ),
        // avg 1968 -> plateau 32256 -> 63 -> 126 (MAX_USECS).
        (
            "bulk_1968",
            256,
            256 * 1968,
            W,
            200,
            START,
            6,
            Band::Bulk,
            126,
        ),
        // 1G/2.5G/10M: min(v, 8064) / 128. avg 1500: 29920 -> 8064 -> 126.
        (
            "bulk_1500_1g",
            300,
            300 * 1500,
            N,
            200,
            START,
            6,
            Band::Bulk,
            126,
        ),
        // avg 100: 100 * 40 + 2720 = 6720 -> DIV_ROUND_UP(6720, 128) = 53 -> 106.
        (
            "bulk_100_1g",
            300,
            30_000,
            N,
            200,
            START,
            6,
            Band::Bulk,
            106,
        ),
        // avg 60 at 10M: 5120 / 128 = 40 -> 80.
        (
            "bulk_60_10m",
            256,
            256 * 60,
            N,
            200,
            START,
            6,
            Band::Bulk,
            80,
        ),
        // 100M shares the 10G case: avg 1500: 29920 -> 59 (58.4) -> 118.
        (
            "bulk_1500_100m",
            300,
            300 * 1500,
            W,
            200,
            START,
            6,
            Band::Bulk,
            118,
        ),
    ];
    for &(case, packets, bytes, link, q_itr, prev, j, band, want) in rows {
        let mut c = container(prev);
        let got = c.update(q_itr, j, packets, bytes, link);
        assert_eq!((got, c.itr), (band, want), "case {case}");
        assert_eq!(c.next_update, Some(j + 1), "case {case}: next update");
    }
}

#[test]
fn link_speeds_map_to_the_driver_branches() {
    // switch (link_speed): 10GB_FULL, 100_FULL and default share the /256
    // branch; 2_5GB_FULL, 1GB_FULL and 10_FULL the capped /64 one. 5G has
    // no case in the 2017 code, so it takes the default.
    for (mbps, want) in [
        (10_000, W),
        (100, W),
        (5_000, W),
        (2_500, N),
        (1_000, N),
        (10, N),
    ] {
        assert_eq!(LinkBranch::of_mbps(mbps), want, "{mbps} Mb/s");
    }
}

#[test]
fn the_8_bit_container_wraps_only_above_what_adaptive_mode_holds() {
    // The container is a u8 holding usecs + 0x80. In adaptive mode
    // q_vector->itr starts at 200 and only ever takes (container & 0x7F) << 2
    // <= 127 << 2 = 508, so over every band, every such q_itr and both link
    // branches the largest value is 126 + 0x80 = 254 (packets 0 with q_itr
    // >= 496, or a latency sample at 1G): nothing wraps.
    for q_itr in (0..=508).step_by(4) {
        for packets in [0, 1, 3, 4, 47, 48, 95, 96, 255, 256, 10_000] {
            for avg in [0, 60, 61, 316, 317, 1084, 1085, 1967, 1968, 9000] {
                for link in [W, N] {
                    for prev in [START, 20] {
                        let c = container(prev);
                        let (v, _) = c.compute(q_itr, 6, packets, packets * avg, link);
                        assert!(v <= 254, "q_itr {q_itr} packets {packets} avg {avg}: {v}");
                    }
                }
            }
        }
    }
    // The 48..95 band stores q_itr >> 2 uncapped: a q_itr of 1024 (256 us,
    // a value only a static setting gives) stores 256, which the u8 wraps to
    // 0, then 1028 -> 257 -> 1: the wrap the 2026 clamp fix removes.
    for (q_itr, stored) in [(1020, 255), (1024, 0), (1028, 1)] {
        let mut c = container(START);
        c.update(q_itr, 6, 60, 60 * 64, W);
        assert_eq!(c.itr, stored, "q_itr {q_itr}");
    }
}

#[test]
fn set_itr_takes_the_smaller_value_with_the_flag_then_clears_it() {
    // (rx container, tx container, EITR written = (min & ~0x80) << 2)
    let rows: &[(&str, u8, u8, u32)] = &[
        // 0x8A (latency, 10 us) vs 64 (bulk): min is 64, the flag makes the
        // latency container the larger one -> 64 << 2 = 256.
        ("flag_loses_min", 0x8A, 64, 256),
        // both latency: 0x8A vs 0xBC -> 0x8A -> 10 << 2 = 40.
        ("both_latency", 0x8A, 0xBC, 40),
        // bulk 20 vs the start value 0xFE -> 20 << 2 = 80.
        ("bulk_vs_start", 20, START, 80),
    ];
    for &(case, rx, tx, want) in rows {
        let (rx, tx) = (container(rx), container(tx));
        assert_eq!(eitr_of(rx, tx), want, "case {case}");
    }
}

/// A sample at `t_ns` with RX and TX (packets, frame bytes with FCS).
fn at(t_ns: u64, rx: (u64, u64), tx: (u64, u64)) -> Sample {
    sample(t_ns, tx, rx)
}

#[test]
fn the_moderator_runs_set_itr_on_driver_byte_counts_and_jiffies() {
    // HZ = 250: one jiffy = 4 ms. The first call finds both containers
    // never updated (next_update 0): gate -> 0x8A each -> EITR 40 (10 us),
    // a change from the initial IXGBE_20K_ITR (200).
    let mut m = Ixgbe::new(IxgbeCfg::default(), 10_000, 250);
    assert_eq!(m.initial(), ModerationParams::itr(ITR_20K));
    assert_eq!(m.invocation(), Invocation::NapiComplete);
    let p = m.on_sample(&at(1_000_000, (10, 10 * 64), (0, 0)));
    assert_eq!(p, Some(ModerationParams::itr(40)));
    // 2 ms later (same jiffy 0): RX 300 frames of 1518 B on the wire =
    // 1514 B as the driver counts them: bulk, avg 1514 -> 1514 * 5 +
    // 22420 = 29990 -> DIV_ROUND_UP(29990, 512) = 59 -> 118. TX: no
    // packets -> (40 >> 2) + 2 = 12, flag kept from 0x8A -> 0x8C (140).
    // min(118, 140) = 118 -> EITR 472.
    let p = m.on_sample(&at(3_000_000, (300, 300 * 1518), (0, 0)));
    assert_eq!(p, Some(ModerationParams::itr(472)));
    assert_eq!(m.containers().0.itr, 118);
    assert_eq!(m.containers().1.itr, 0x8C);
    // At 13 ms (jiffy 3 > next_update 1): the gate for both -> EITR 40.
    let p = m.on_sample(&at(13_000_000, (300, 300 * 1518), (5, 320)));
    assert_eq!(p, Some(ModerationParams::itr(40)));
    // Same jiffy, 48 RX packets: keep 40 >> 2 = 10 -> (10); TX 0x8A + no
    // packets -> 12 | 0x80: min = 10 -> 40: unchanged, no write.
    assert_eq!(m.on_sample(&at(13_100_000, (48, 48 * 64), (0, 0))), None);
}

#[test]
fn static_and_off_settings_write_usecs_shifted_by_two_once() {
    // ixgbe_set_coalesce: rx_itr_setting = usecs << 2 for usecs > 1; the
    // EITR keeps bits 11:3, so 85 (340) is held as 336 like 84.
    for (us, itr) in [(0, 0), (2, 8), (84, 336), (85, 340), (1022, 4088)] {
        let cfg = IxgbeCfg {
            rx_usecs: us,
            tx_usecs: None,
        };
        let m = cfg.build(&BuildCtx {
            link_mbps: 10_000,
            throttle: Throttle::Eitr2048ns,
            rx_fifo_bytes: 512 * 1024,
            vectors: 1,
            vector: 0,
            hz: 250,
            work_delay: crate::units::Nanos::ZERO,
        });
        assert_eq!(m.initial(), ModerationParams::itr(itr), "{us} us");
        assert_eq!(m.invocation(), Invocation::Never, "{us} us");
        assert!(cfg.interval_is_static());
    }
}

#[test]
fn config_table_accepts_and_refuses_as_the_driver_does() {
    let ixgbe = PortCaps {
        chip: "82599",
        throttle: Throttle::Eitr2048ns,
    };
    let i210 = PortCaps {
        chip: "i210",
        throttle: Throttle::Eitr1us,
    };
    // (case, rx_usecs, tx_usecs, port, Err(field) or Ok)
    type Row<'a> = (&'a str, u32, Option<u32>, &'a PortCaps<'a>, Option<&'a str>);
    let rows: &[Row] = &[
        ("off", 0, None, &ixgbe, None),
        ("adaptive", 1, None, &ixgbe, None),
        ("static_min", 2, None, &ixgbe, None),
        ("static_odd", 85, None, &ixgbe, None),
        // IXGBE_MAX_EITR >> 2 = 0xFF8 >> 2 = 1022.
        ("static_max", 1022, None, &ixgbe, None),
        ("above_max", 1023, None, &ixgbe, Some("rx_usecs")),
        // tx-usecs 0 is what get_coalesce reports on RX/TX vectors.
        ("tx_zero", 84, Some(0), &ixgbe, None),
        ("tx_set", 84, Some(84), &ixgbe, Some("tx_usecs")),
        ("tx_adaptive", 1, Some(1), &ixgbe, Some("tx_usecs")),
        ("tx_above_max", 1, Some(2000), &ixgbe, Some("tx_usecs")),
        ("not_ixgbe_chip", 1, None, &i210, Some("")),
    ];
    for &(case, rx, tx, port, want) in rows {
        let cfg = IxgbeCfg {
            rx_usecs: rx,
            tx_usecs: tx,
        };
        let got = cfg.validate(port).map_err(|e| e.field);
        match want {
            None => assert_eq!(got, Ok(()), "case {case}"),
            Some(f) => assert_eq!(got, Err(f.to_string()), "case {case}"),
        }
    }
    // The refusal of tx_usecs says why, as the driver's comment does.
    let e = IxgbeCfg {
        rx_usecs: 1,
        tx_usecs: Some(50),
    }
    .validate(&ixgbe)
    .unwrap_err();
    assert!(e.message.contains("RX and a TX ring"), "{}", e.message);
}

#[test]
fn jiffies_follow_the_hosts_hz() {
    // HZ 1000: jiffy = 1 ms. Updates 1.5 ms apart stay within one jiffy of
    // next_update (jiffies 0 -> 1), 2.5 ms apart do not (0 -> 2 > 1).
    for (hz, dt_ns, gated) in [(1000, 1_500_000, false), (1000, 2_500_000, true)] {
        let mut m = Ixgbe::new(IxgbeCfg::default(), 10_000, hz);
        m.on_sample(&at(0, (0, 0), (0, 0)));
        let s = at(dt_ns, (1, 64), (1, 64));
        m.on_sample(&s);
        let row = m.last_decision().unwrap();
        let band = row.values.iter().find(|(k, _)| *k == "rx_band").unwrap().1;
        assert_eq!(band == Band::Gate as i64, gated, "HZ {hz}, {dt_ns} ns");
    }
}
