//! Unit tests of FreeBSD AIM moderation (`moderation::freebsd_aim`).

use super::super::testutil::rx;
use super::*;
use crate::units::{ints_per_s_to_itr_256ns, SimTime};
use Latency::*;

#[test]
fn rate_to_register_conversions() {
    // 8254x SDM §13.4.18 and if_em.h: EM_INTS_TO_ITR = 1e9 / (rate * 256), integer.
    for (rate, itr) in [(4000, 976), (8000, 488), (20000, 195), (70000, 55)] {
        assert_eq!(em_ints_to_itr(rate), itr, "rate {rate}");
        // The u32 form agrees with the crate's u64 helper at these rates.
        assert_eq!(ints_per_s_to_itr_256ns(rate), itr);
    }
    // if_igc.h IGC_INTS_TO_EITR: values 4000 -> 1000, 8000 -> 500,
    // 20000 -> 200, 70000 -> 56 (raw, 0.25 us); interval field = raw / 4.
    for (rate, raw, us) in [
        (4000, 1000, 250),
        (8000, 500, 125),
        (20000, 200, 50),
        (70000, 56, 14),
    ] {
        assert_eq!(igb_ints_to_eitr(rate), raw, "rate {rate}");
        assert_eq!(igb_eitr_word(rate, false), raw | 0x8000_0000);
        assert_eq!(
            params_for(AimTarget::IgbEitr, igb_eitr_word(rate, false)).eitr_us,
            Some(us)
        );
    }
    // em_newitr (as Linux igb_write_itr): the 82575 gets the interval
    // replicated into bits 31:16.
    assert_eq!(igb_eitr_word(8000, true), 500 | (500 << 16));
    // if_em.h: IGB_DEFAULT_ITR = (1000000 / 8000) << 2 = 500.
    let m = FreebsdAim::new(AimTarget::IgbEitr, 1);
    assert_eq!(m.register(), 500 | EITR_CNT_IGNR);
    assert_eq!(m.initial().eitr_us, Some(125));
}

#[test]
fn em_interrupt_rate_readback_matches_the_review() {
    // Review D46768: the em sysctl converts ITR back with the same
    // macro, truncating. 488 -> 1e9/124928 = 8004.6 -> 8004 (static
    // 8000); 195 -> 1e9/49920 = 20032.05 -> 20032 (idle, aim=1);
    // 55 -> 1e9/14080 = 71022.7 -> 71022 (idle, aim=2: the review's
    // "71k"; rounding would give 71023, C truncates); 976 -> 4002 ("4k").
    let t = AimTarget::EmItr;
    for (reg, readback) in [(488, 8004), (195, 20032), (55, 71022), (976, 4002)] {
        assert_eq!(interrupt_rate_sysctl(t, reg), readback, "reg {reg}");
        let exact = true_rate_per_s(t, reg);
        assert!(exact >= readback as f64 && exact < readback as f64 + 1.0);
    }
    assert_eq!(interrupt_rate_sysctl(t, 0), 0);
    assert!((true_rate_per_s(t, 55) - 71_022.727).abs() < 0.001);
}

#[test]
fn igb_interrupt_rate_readback_wraps_above_32k() {
    // The 2024 igb/igc interrupt_rate handler re-applies the forward macro:
    // ((1e6 / (reg & 0x7FFC)) << 2) & 0x7FFC. Below 32768 it inverts:
    // 500 -> 2000 << 2 = 8000; 200 -> 5000 << 2 = 20000; 1000 -> 4000.
    // For 70K (raw 56): 1e6 / 56 = 17857, << 2 = 71428 = 0x11704,
    // & 0x7FFC = 0x1704 = 5892, while the true rate is 4e6 / 56 = 71428.
    let t = AimTarget::IgbEitr;
    let table = [
        (igb_eitr_word(8000, false), 8000, 8000),
        (igb_eitr_word(20000, false), 20000, 20000),
        (igb_eitr_word(4000, false), 4000, 4000),
        (igb_eitr_word(70000, false), 5892, 71428),
    ];
    for (reg, sysctl, truth) in table {
        assert_eq!(interrupt_rate_sysctl(t, reg), sysctl, "reg {reg:#x}");
        assert_eq!(igb_eitr_to_ints(reg), truth, "reg {reg:#x}");
        assert_eq!(true_rate_per_s(t, reg) as u32, truth);
    }
    // The mask also removes the 82575 upper copy before converting.
    assert_eq!(interrupt_rate_sysctl(t, igb_eitr_word(8000, true)), 8000);
    // Where the wrap starts: raw 124 (31.0 us) -> 8064 << 2 = 32256 is
    // still exact; raw 120 -> 8333 << 2 = 33332 & 0x7FFC = 564.
    assert_eq!(interrupt_rate_sysctl(t, 124), 32256);
    assert_eq!(interrupt_rate_sysctl(t, 120), 564);
    assert_eq!(igb_eitr_to_ints(120), 33333);
    assert_eq!(interrupt_rate_sysctl(t, 0), 0);
}

#[test]
fn inputs_take_the_larger_direction() {
    // em_newitr: bytes = max, bpp = max of the per-direction averages,
    // packets = max; a direction needs both bytes and packets.
    assert_eq!(aim_inputs(9000, 1, 600, 10), (9000, 9000, 10));
    assert_eq!(aim_inputs(396, 6, 18168, 12), (18168, 1514, 12));
    assert_eq!(aim_inputs(500, 0, 98, 1), (98, 98, 1));
    assert_eq!(aim_inputs(0, 0, 0, 0), (0, 0, 0));
}

#[test]
fn latency_state_machine_transitions() {
    // (from, enable_aim, bytes, bpp, packets, expected), one row per
    // branch and threshold edge of em_newitr (strict > and < as in the source).
    let table = [
        // disabled: bootstrap to low whatever the traffic.
        (Disabled, 2, 98, 98, 1, Low),
        (Disabled, 1, 60_000, 1500, 40, Low),
        // lowest: bpp > 8000 -> bulk (checked first).
        (Lowest, 2, 8001, 8001, 1, Bulk),
        // bpp 8000 is not > 8000; packets 1 < 5 and bytes > 512 -> low.
        (Lowest, 2, 8000, 8000, 1, Low),
        (Lowest, 2, 513, 128, 4, Low),
        // bytes 512 is not > 512 -> stays lowest.
        (Lowest, 2, 512, 128, 4, Lowest),
        // packets 5 is not < 5 -> stays lowest.
        (Lowest, 2, 7570, 1514, 5, Lowest),
        // low, bytes > 10000: bpp > 8000 -> bulk.
        (Low, 2, 10_001, 10_001, 1, Bulk),
        // packets 9 < 10 -> bulk.
        (Low, 2, 10_008, 1112, 9, Bulk),
        // bpp 1201 > 1200 -> bulk.
        (Low, 2, 12_010, 1201, 10, Bulk),
        // bpp 1200, packets 10: no rule fires -> stays low.
        (Low, 2, 12_000, 1200, 10, Low),
        // packets 36 > 35, small packets -> lowest (aim 2) ...
        (Low, 2, 10_800, 300, 36, Lowest),
        // ... trimmed to low with aim 1.
        (Low, 1, 10_800, 300, 36, Low),
        // packets 35 is not > 35 -> stays low.
        (Low, 2, 10_500, 300, 35, Low),
        // low, bytes <= 10000: bpp > 2000 -> bulk.
        (Low, 2, 10_000, 2500, 4, Bulk),
        // bpp 2000 is not > 2000 -> stays low.
        (Low, 2, 10_000, 2000, 5, Low),
        // packets < 3 and bytes < 512 -> lowest / trimmed to low.
        (Low, 2, 511, 255, 2, Lowest),
        (Low, 1, 511, 255, 2, Low),
        (Low, 2, 512, 256, 2, Low),
        (Low, 2, 100, 33, 3, Low),
        // bulk: bytes > 25000 and packets > 35 -> low.
        (Bulk, 2, 25_001, 694, 36, Low),
        (Bulk, 2, 25_001, 714, 35, Bulk),
        // bytes 25000 is not > 25000 and not < 1500 -> stays bulk.
        (Bulk, 2, 25_000, 500, 50, Bulk),
        // bytes < 1500 -> low.
        (Bulk, 2, 1499, 1499, 1, Low),
        (Bulk, 2, 1500, 1500, 1, Bulk),
        // enable_aim values other than 1 do not trim (the code tests == 1).
        (Low, 3, 98, 98, 1, Lowest),
    ];
    for (from, aim, bytes, bpp, packets, want) in table {
        assert_eq!(
            next_latency(from, aim, bytes, bpp, packets),
            want,
            "{from:?} aim={aim} bytes={bytes} bpp={bpp} packets={packets}"
        );
    }
    // em_newitr rate table.
    assert_eq!(latency_rate(Lowest, 8000), 70000);
    assert_eq!(latency_rate(Low, 8000), 20000);
    assert_eq!(latency_rate(Bulk, 8000), 4000);
    assert_eq!(latency_rate(Disabled, 8000), 8000);
}

#[test]
fn guards_before_the_state_machine() {
    // Idle (no bytes either way): nothing written, class unchanged.
    let mut m = FreebsdAim::new(AimTarget::EmItr, 2);
    assert_eq!(m.on_sample(&rx(3, 0)), None);
    assert_eq!(m.latency(), Disabled);
    assert_eq!(m.last_decision().unwrap().values[8], ("path", 0));
    // Sub-gigabit link: 4000/s (ITR 976), class untouched.
    let mut m = FreebsdAim::with_config(
        AimTarget::EmItr,
        AimConfig {
            link_speed_mbps: 100,
            ..AimConfig::default()
        },
    );
    assert_eq!(m.on_sample(&rx(1, 98)).unwrap().itr_256ns, Some(976));
    assert_eq!(m.latency(), Disabled);
    // Jumbo frames, buffer < 2 frames: 2 * 9018 = 18036 > 16 << 10 =
    // 16384 -> the static rate (ITR 488 = already written: no write)
    // and AIM switched off for good.
    let mut m = FreebsdAim::with_config(
        AimTarget::EmItr,
        AimConfig {
            max_frame_size: 9018,
            pba_kb: 16,
            ..AimConfig::default()
        },
    );
    assert_eq!(m.on_sample(&rx(1, 98)), None);
    assert_eq!(m.cfg.enable_aim, 0);
    assert_eq!(m.last_decision().unwrap().values[8], ("path", 4));
    assert_eq!(m.register(), 488);
    // enable_aim 0: class disabled, static rate on every busy interrupt.
    let mut m = FreebsdAim::new(AimTarget::EmItr, 0);
    assert_eq!(m.initial().itr_256ns, Some(488));
    assert_eq!(m.invocation(), Invocation::PerInterrupt);
    assert_eq!(m.on_sample(&rx(40, 60_560)), None);
    assert_eq!(m.latency(), Disabled);
    assert_eq!(m.interrupt_rate(), 8004);
}

/// Drives one `FreebsdAim` through `steps` of (sample, expected write,
/// expected class).
fn run(m: &mut FreebsdAim, steps: &[(Sample, Option<u32>, Latency)]) {
    for (i, (s, want, lat)) in steps.iter().enumerate() {
        let mut s = *s;
        s.now = SimTime(i as u64 * 1_000_000);
        let got = m.on_sample(&s).map(|p| match m.target {
            AimTarget::EmItr => p.itr_256ns.unwrap(),
            AimTarget::IgbEitr => p.eitr_us.unwrap(),
        });
        assert_eq!(got, *want, "step {i}");
        assert_eq!(m.latency(), *lat, "step {i}");
    }
}

#[test]
fn sequence_idle_ping_bulk_em_aim2() {
    // Hand-derived from em_newitr (enable_aim=2, lem/em ITR):
    let idle = Sample::default();
    let ping = rx(1, 98); // 98-byte echo frame
    let start = rx(3, 4542); // first bulk interrupt: 3 x 1514
    let bulk = Sample {
        tx_packets: 6,
        tx_bytes: 396,    // 6 ACKs of 66 bytes
        ..rx(12, 18_168)  // 12 x 1514
    };
    let burst = rx(40, 60_560); // 40 x 1514
    let mut m = FreebsdAim::new(AimTarget::EmItr, 2);
    assert_eq!(m.initial().itr_256ns, Some(488));
    run(
        &mut m,
        &[
            // idle: no bytes -> nothing.
            (idle, None, Disabled),
            // bootstrap disabled -> low: 20K -> ITR 195.
            (ping, Some(195), Low),
            // low: 1 packet < 3, 98 bytes < 512 -> lowest: 70K -> 55.
            (ping, Some(55), Lowest),
            // idle keeps 55 (the review's idle 71k).
            (idle, None, Lowest),
            // lowest: 3 packets < 5 and 4542 > 512 -> low: 195.
            (start, Some(195), Low),
            // low: 18168 > 10000, bpp 1514 > 1200 -> bulk: 4K -> 976.
            (bulk, Some(976), Bulk),
            // bulk: 1500 <= 18168 <= 25000 -> stays bulk, no write.
            (bulk, None, Bulk),
            // bulk: 60560 > 25000 and 40 > 35 -> low: 195.
            (burst, Some(195), Low),
            // traffic stops, a ping: low -> lowest: 55.
            (ping, Some(55), Lowest),
        ],
    );
    assert_eq!(m.interrupt_rate(), 71022);
}

#[test]
fn sequence_idle_ping_bulk_em_aim1() {
    // Same traffic, enable_aim=1: lowest is trimmed to low (cap 20K).
    let ping = rx(1, 98);
    let bulk = Sample {
        tx_packets: 6,
        tx_bytes: 396,
        ..rx(12, 18_168)
    };
    let mut m = FreebsdAim::new(AimTarget::EmItr, 1);
    run(
        &mut m,
        &[
            (Sample::default(), None, Disabled),
            (ping, Some(195), Low),
            // would be lowest, trimmed to low: same register, no write.
            (ping, None, Low),
            // low: 4542 <= 10000, bpp 1514 <= 2000, 3 packets not < 3.
            (rx(3, 4542), None, Low),
            (bulk, Some(976), Bulk),
            (bulk, None, Bulk),
            (rx(40, 60_560), Some(195), Low),
        ],
    );
    assert_eq!(m.interrupt_rate(), 20032);
}

#[test]
fn sequence_idle_ping_bulk_igb() {
    // igb EITR (82576+): eitr_us = raw / 4; readbacks by the 2024 handler.
    let mut m = FreebsdAim::new(AimTarget::IgbEitr, 2);
    assert_eq!(m.initial().eitr_us, Some(125));
    assert_eq!(m.interrupt_rate(), 8000);
    run(
        &mut m,
        &[
            (Sample::default(), None, Disabled),
            (rx(1, 98), Some(50), Low),    // 20K: raw 200
            (rx(1, 98), Some(14), Lowest), // 70K: raw 56
        ],
    );
    assert_eq!(m.register(), 56 | EITR_CNT_IGNR);
    // The overflowed readback beside the true value.
    assert_eq!(m.interrupt_rate(), 5892);
    assert_eq!(igb_eitr_to_ints(m.register()), 71428);
    run(
        &mut m,
        &[
            (rx(3, 4542), Some(50), Low),
            (rx(12, 18_168), Some(250), Bulk), // 4K: raw 1000
        ],
    );
    assert_eq!(m.interrupt_rate(), 4000);
}

#[test]
fn review_d46768_readings() {
    // Review D46768: the tester booted with the default (aim=1), saw 20032 for
    // every enable_aim value with no traffic, then 8k with aim=0 and 4k
    // with aim=1/2 under iperf, and idle 20k (aim=1) / 71k (aim=2).
    let mut m = FreebsdAim::new(AimTarget::EmItr, 1);
    m.on_sample(&rx(2, 180)); // boot-time chatter: disabled -> low
    assert_eq!(m.interrupt_rate(), 20032);
    for aim in [0, 1, 2] {
        m.set_enable_aim(aim);
        m.on_sample(&Sample::default()); // no traffic: nothing changes
        assert_eq!(m.interrupt_rate(), 20032, "aim {aim}");
    }
    let iperf = rx(12, 18_168);
    m.set_enable_aim(0);
    m.on_sample(&iperf);
    assert_eq!(m.interrupt_rate(), 8004);
    m.set_enable_aim(1);
    m.on_sample(&iperf); // disabled -> low (bootstrap)
    m.on_sample(&iperf); // low -> bulk
    assert_eq!(m.interrupt_rate(), 4002);
    m.on_sample(&rx(1, 98)); // bulk: 98 < 1500 -> low
    m.on_sample(&rx(1, 98)); // low -> lowest, trimmed -> low
    assert_eq!(m.interrupt_rate(), 20032);
    m.set_enable_aim(2);
    m.on_sample(&rx(1, 98)); // low -> lowest
    assert_eq!(m.interrupt_rate(), 71022);
}

#[test]
fn trace_row_records_inputs_and_outputs() {
    let mut m = FreebsdAim::new(AimTarget::EmItr, 2);
    let s = Sample {
        now: SimTime(5_000),
        ..rx(1, 98)
    };
    m.on_sample(&s);
    let row = m.last_decision().unwrap();
    assert_eq!(row.t_ns, 5_000);
    let get = |k: &str| row.values.iter().find(|(n, _)| *n == k).unwrap().1;
    assert_eq!(get("bytes"), 98);
    assert_eq!(get("latency_before"), 0);
    assert_eq!(get("latency"), 2);
    assert_eq!(get("rate_per_s"), 20000);
    assert_eq!(get("itr_256ns"), 195);
    assert_eq!(get("interrupt_rate"), 20032);
    assert_eq!(get("written"), 1);
    assert_eq!(m.name(), "freebsd-aim");
}
