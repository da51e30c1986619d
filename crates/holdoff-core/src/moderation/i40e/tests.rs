//! Linux i40e moderation against the C source. Every expected value was
//! computed by hand from `i40e_update_itr`, `i40e_update_enable_itr`
//! (drivers/net/ethernet/intel/i40e/i40e_txrx.c, the 2017 adaptive ITR),
//! `ITR_REG_ALIGN` (i40e_txrx.h) and `__i40e_set_coalesce`
//! (i40e_ethtool.c); the arithmetic is in each row's comment.

use super::*;
use crate::moderation::Throttle;

const L: u32 = LATENCY;

fn ctx(is_rx: bool, other_target: u32, currents: (u32, u32), divisor: u32) -> Ctx {
    Ctx {
        is_rx,
        jiffies: 6,
        countdown: 0,
        other_target,
        tx_current: currents.0,
        rx_current: currents.1,
        divisor,
    }
}

fn c(target: u32) -> Container {
    Container {
        target,
        current: target,
        next_update: 6,
        dynamic: true,
    }
}

#[test]
fn update_itr_table_covers_every_band() {
    // (case, is_rx, own target, other target, (tx, rx) current, divisor,
    //  packets, bytes, band, new target)
    type Row = (
        &'static str,
        bool,
        u32,
        u32,
        (u32, u32),
        u32,
        u32,
        u32,
        Band,
        u32,
    );
    let rows: &[Row] = &[
        // RX: 2 packets, 1000 bytes, TX in latency mode: avg 500 ->
        // 15 x 500 + 11452 = 18952, halved 9476, DIV_ROUND_UP(9476, 512) =
        // 19, x 2 = 38 -> 0x8000 + 38.
        (
            "rx_latency",
            true,
            50,
            L | 126,
            (50, 50),
            512,
            2,
            1000,
            Band::Latency,
            L + 38,
        ),
        // The same with TX not in latency mode: < 56 packets -> 50 + 2.
        (
            "rx_few_tx_bulk",
            true,
            50,
            50,
            (50, 50),
            512,
            2,
            1000,
            Band::Under56,
            52,
        ),
        // TX: 0 packets, TX at 126 and RX at 126 (flag masked off): MAX |
        // LATENCY.
        (
            "tx_idle",
            false,
            126,
            L | 126,
            (126, 126),
            512,
            0,
            0,
            Band::TxIdle,
            L | 126,
        ),
        // TX: 40 packets (> 32) drops the flag of 0x8000 | 50, then < 56:
        // 50 + 2 = 52.
        (
            "tx_bulk_flag",
            false,
            L | 50,
            50,
            (50, 50),
            512,
            40,
            60_000,
            Band::Under56,
            52,
        ),
        // < 56 at the cap: 0x807E + 2 = 0x8080, & 0x1FFE = 128 > 126 ->
        // (0x8080 & 0x8000) + 126.
        (
            "under56_cap",
            true,
            L | 126,
            50,
            (50, 50),
            512,
            10,
            15_000,
            Band::Under56,
            L | 126,
        ),
        // 100 packets: min(60, 40) & 0x1FFE = 40, kept.
        (
            "goldilocks",
            true,
            50,
            50,
            (60, 40),
            512,
            100,
            150_000,
            Band::Goldilocks,
            40,
        ),
        // 200 packets: 40 / 2 = 20.
        (
            "halve",
            true,
            50,
            50,
            (60, 40),
            512,
            200,
            300_000,
            Band::Halve,
            20,
        ),
        // 200 packets at 2 us: 2 / 2 = 1, & 0x1FFE = 0 -> MIN_USECS 2.
        (
            "halve_floor",
            true,
            50,
            50,
            (2, 2),
            512,
            200,
            300_000,
            Band::Halve,
            2,
        ),
        // 300 x 1500 B, 10G: 5 x 1500 + 22420 = 29920, DIV_ROUND_UP(29920,
        // 512) = 59 (58 x 512 = 29696), x 2 = 118.
        (
            "bulk_10g",
            true,
            50,
            50,
            (50, 50),
            512,
            300,
            450_000,
            Band::Bulk,
            118,
        ),
        // 40G divisor 2048: DIV_ROUND_UP(29920, 2048) = 15, x 2 = 30.
        (
            "bulk_40g",
            true,
            50,
            50,
            (50, 50),
            2048,
            300,
            450_000,
            Band::Bulk,
            30,
        ),
        // 25G divisor 1024: DIV_ROUND_UP(29920, 1024) = 30, x 2 = 60.
        (
            "bulk_25g",
            true,
            50,
            50,
            (50, 50),
            1024,
            300,
            450_000,
            Band::Bulk,
            60,
        ),
        // 64-B frames (60 B counted): 4096 / 512 = 8, x 2 = 16.
        (
            "bulk_small",
            true,
            50,
            50,
            (50, 50),
            512,
            300,
            18_000,
            Band::Bulk,
            16,
        ),
        // 1G divisor 64: DIV_ROUND_UP(29920, 64) = 468, x 2 = 936 > 126 ->
        // 126.
        (
            "bulk_1g_cap",
            true,
            50,
            50,
            (50, 50),
            64,
            300,
            450_000,
            Band::Bulk,
            126,
        ),
    ];
    for &(case, is_rx, own, other, cur, div, pkts, bytes, band, want) in rows {
        let mut rc = c(own);
        let got = update_itr(&mut rc, &ctx(is_rx, other, cur, div), pkts, bytes);
        assert_eq!((got, rc.target), (band, want), "{case}");
        assert_eq!(rc.next_update, 7, "{case}: next update one jiffy on");
    }
}

#[test]
fn gate_countdown_and_static_containers() {
    // time_after(7, 6): RX -> MIN | LATENCY = 0x8002, TX -> MAX | LATENCY.
    let mut g = ctx(true, 50, (50, 50), 512);
    g.jiffies = 7;
    let mut rx = c(50);
    assert_eq!(update_itr(&mut rx, &g, 500, 750_000), Band::Gate);
    assert_eq!(rx.target, L | 2);
    g.is_rx = false;
    let mut tx = c(50);
    assert_eq!(update_itr(&mut tx, &g, 500, 750_000), Band::Gate);
    assert_eq!(tx.target, L | 126);
    // itr_countdown set: the target stays.
    let mut cd = ctx(true, 50, (50, 50), 512);
    cd.countdown = 2;
    let mut rx = c(40);
    assert_eq!(update_itr(&mut rx, &cd, 500, 750_000), Band::Countdown);
    assert_eq!(rx.target, 40);
    // A static container is left alone.
    let mut st = Container::new(84, false);
    assert_eq!(update_itr(&mut st, &cd, 500, 750_000), Band::Static);
    assert_eq!((st.target, st.next_update), (84, 1));
}

#[test]
fn one_itr_write_per_poll_by_priority() {
    // (case, rx (target, current), tx (target, current), countdown,
    //  write, rx current, tx current, countdown after)
    type Row = (
        &'static str,
        (u32, u32),
        (u32, u32),
        u8,
        Write,
        u32,
        u32,
        u8,
    );
    let rows: &[Row] = &[
        // RX going down is first.
        ("rx_down", (20, 40), (30, 50), 0, Write::Rx, 20, 50, 3),
        // TX going down next.
        ("tx_down", (40, 40), (30, 50), 0, Write::Tx, 40, 30, 3),
        // Both up, TX more (10 > 2): TX.
        ("tx_up_more", (42, 40), (60, 50), 0, Write::Tx, 40, 60, 3),
        // Both up, RX more: RX (third branch).
        ("rx_up_more", (60, 40), (52, 50), 0, Write::Rx, 60, 50, 3),
        // Nothing to write: the countdown runs down.
        ("none", (40, 40), (50, 50), 2, Write::None, 40, 50, 1),
        // The latency flag is part of the comparison (u16 values): 0x8002
        // is not below 50, RX up by 0x8002 - 50 beats TX's 0 -> RX, and the
        // register gets 0x8002 & 0x1FFE = 2 us.
        ("flag", (L | 2, 50), (50, 50), 0, Write::Rx, L | 2, 50, 3),
    ];
    for &(case, r, t, cd, w, rc, tc, cd2) in rows {
        let mut rx = Container {
            target: r.0,
            current: r.1,
            next_update: 0,
            dynamic: true,
        };
        let mut tx = Container {
            target: t.0,
            current: t.1,
            next_update: 0,
            dynamic: true,
        };
        let mut countdown = cd;
        assert_eq!(choose_write(&mut rx, &mut tx, &mut countdown), w, "{case}");
        assert_eq!((rx.current, tx.current, countdown), (rc, tc, cd2), "{case}");
    }
    assert_eq!((L | 2) & ITR_MASK, 2);
}

#[test]
fn itr_reg_align_rounds_odd_values_up() {
    // __ALIGN_MASK(x, ~0x1FFE) = (x + 0xFFFFE001) & 0x1FFE.
    for (us, held) in [(0, 0), (1, 2), (50, 50), (51, 52), (83, 84), (8159, 8160)] {
        assert_eq!(itr_reg_align(us), held, "{us}");
    }
}

#[test]
fn set_coalesce_refusals_name_the_driver_message() {
    let x710 = PortCaps {
        chip: "x710",
        throttle: Throttle::Itr2us { intrl_gran_us: 4 },
    };
    let static_cfg = |rx: u32, high: u32| I40eCfg {
        adaptive_rx: false,
        adaptive_tx: false,
        rx_usecs: rx,
        tx_usecs: rx,
        rx_usecs_high: high,
    };
    assert!(I40eCfg::default().validate(&x710).is_ok());
    assert!(static_cfg(84, 236).validate(&x710).is_ok());
    // rx-usecs-high with adaptive on is accepted (independent of adaptive).
    let adaptive_high = I40eCfg {
        rx_usecs_high: 100,
        ..I40eCfg::default()
    };
    assert!(adaptive_high.validate(&x710).is_ok());
    let cases: [(I40eCfg, &str, &str); 4] = [
        (
            I40eCfg {
                rx_usecs: 84,
                ..I40eCfg::default()
            },
            "rx_usecs",
            "RX interrupt moderation cannot be changed if adaptive-rx is enabled.",
        ),
        (
            I40eCfg {
                adaptive_rx: false,
                tx_usecs: 10,
                ..I40eCfg::default()
            },
            "tx_usecs",
            "TX interrupt moderation cannot be changed if adaptive-tx is enabled.",
        ),
        (static_cfg(8162, 0), "rx_usecs", "rx-usecs range is 0-8160"),
        (
            static_cfg(84, 240),
            "rx_usecs_high",
            "rx-usecs-high range is 0-236",
        ),
    ];
    for (cfg, field, msg) in cases {
        let e = cfg.validate(&x710).unwrap_err();
        assert_eq!(e.field, field);
        assert!(e.message.contains(msg), "{}", e.message);
    }
    let i210 = PortCaps {
        chip: "i210",
        throttle: Throttle::Eitr1us,
    };
    assert!(I40eCfg::default().validate(&i210).is_err());
}

#[test]
fn static_setting_programs_aligned_itr_and_intrl() {
    // rx-usecs 83 -> ITR_REG_ALIGN 84; rx-usecs-high 62 passes as 62 (the
    // chip holds 15 x 4 us).
    let m = I40e::new(
        I40eCfg {
            adaptive_rx: false,
            adaptive_tx: false,
            rx_usecs: 83,
            tx_usecs: 83,
            rx_usecs_high: 62,
        },
        10_000,
        250,
    );
    let p = m.initial();
    assert_eq!((p.eitr_us, p.intrl_us), (Some(84), Some(62)));
    assert_eq!(m.invocation(), Invocation::Never);
}
