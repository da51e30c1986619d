//! Registers in effect: each chip preset's register set, writes shown in
//! hardware units, writes the chip ignores or holds without effect recorded
//! once, and legacy ITR writes on EITR-class chips.

use super::*;

// ------------------------------------------------ registers in effect

fn chip_named(name: &str) -> &'static ChipProfile {
    chip::by_name(name).unwrap()
}

/// Entries of the ignored-write record for one register.
fn ignored<'a>(port: &'a NicPort, register: &str) -> Vec<&'a IgnoredWrite> {
    port.ignored_writes()
        .iter()
        .filter(|w| w.register == register)
        .collect()
}

#[test]
fn each_preset_has_the_registers_of_its_datasheet() {
    use chip::RegPresence::{Absent, Present, WhatIf};
    // (chip, throttle, RDTR, RADV, TIDV, TADV, IDE). 8254x SDM §13.4.18
    // (ITR), §13.4.30/31 (RDTR, RADV), §13.4.41/44 (TIDV, TADV); 82574:
    // EITR in 256 ns and the same delay timers (82574/82583V datasheet
    // §9.2.6); igb class: EITR in 1 us is the only moderation register (I210
    // datasheet §8.8.14), RADV, TIDV, TADV and the IDE bit absent (no TIDV
    // or TADV between TDT and TXDCTL; advanced descriptors without IDE);
    // RDTR kept as a what-if; ixgbe class (82599, X540, X550): EITR in
    // 2.048 us steps only (Linux ixgbe programs nothing else); Intel
    // 700/800 Series (x710, xl710, e810): ITR in 2 us plus INTRL, nothing
    // else (i40e and ice program no 8254x timers); INTRL granularity as
    // ice_get_itr_intrl_gran reads it.
    // 2.048 us steps only (Linux ixgbe programs nothing else); CQ chips
    // (cx5, cx6, ena): no throttle register and no delay timer.
    type Row = (&'static str, ThrottleKind, [chip::RegPresence; 5]);
    let e1000 = [Present; 5];
    let igb = [WhatIf, Absent, Absent, Absent, Absent];
    let ixgbe = [Absent; 5];
    let table: [Row; 17] = [
        ("82540", ThrottleKind::Itr256ns, e1000),
        ("82546", ThrottleKind::Itr256ns, e1000),
        ("82574", ThrottleKind::Eitr256ns, e1000),
        ("82576", ThrottleKind::Eitr1us, igb),
        ("i350", ThrottleKind::Eitr1us, igb),
        ("i210", ThrottleKind::Eitr1us, igb),
        ("i211", ThrottleKind::Eitr1us, igb),
        ("82599", ThrottleKind::Eitr2048ns, ixgbe),
        ("x540", ThrottleKind::Eitr2048ns, ixgbe),
        ("x550", ThrottleKind::Eitr2048ns, ixgbe),
        ("e810-c", ThrottleKind::Itr2us { intrl_gran_us: 4 }, ixgbe),
        ("e810-xxv", ThrottleKind::Itr2us { intrl_gran_us: 8 }, ixgbe),
        ("x710", ThrottleKind::Itr2us { intrl_gran_us: 4 }, ixgbe),
        ("xl710", ThrottleKind::Itr2us { intrl_gran_us: 4 }, ixgbe),
        ("cx5", chip::ChipProfile::CX5.throttle, ixgbe),
        ("cx6", chip::ChipProfile::CX6.throttle, ixgbe),
        ("ena", chip::ChipProfile::ENA.throttle, ixgbe),
    ];
    assert_eq!(table.len(), chip::presets().len());
    for (name, throttle, [rdtr, radv, tidv, tadv, ide]) in table {
        let c = chip_named(name);
        assert_eq!(c.throttle, throttle, "{name}");
        let r = c.regs;
        assert_eq!(
            [r.rdtr, r.radv, r.tidv, r.tadv, r.tx_ide],
            [rdtr, radv, tidv, tadv, ide],
            "{name}"
        );
        // The older flag is derived from the map, not a second source of truth.
        assert_eq!(c.has_abs_timers, r.has_abs_timers(), "{name}");
    }
}

#[test]
fn registers_show_each_chips_registers_and_null_for_missing_ones() {
    // A fresh port holds zeros in every register it has (reset values: 8254x
    // SDM register tables, I210 datasheet §8.8.14 "initial value 0x0").
    // (chip, mode, expected registers)
    // The e1000/e1000e register set throttling through ITR: every register
    // present, delay timers in effect.
    let e1000_itr = Registers {
        itr_256ns: Some(0),
        eitr_256ns: None,
        eitr_us: None,
        itr_2us: None,
        intrl_4us: None,
        rdtr_1024ns: Some(0),
        radv_1024ns: Some(0),
        tidv_1024ns: Some(0),
        tadv_1024ns: Some(0),
        ide: Some(true),
        delay_timers_active: true,
        cq_rx: None,
        cq_tx: None,
    };
    let cases: [(&str, IntMode, Registers); 4] = [
        ("82546", IntMode::Intx, e1000_itr.clone()),
        (
            // 82574 in MSI-X mode: per-vector EITR in 256 ns; delay timers bypassed.
            "82574",
            IntMode::Msix,
            Registers {
                itr_256ns: None,
                eitr_256ns: Some(vec![0]),
                delay_timers_active: false,
                ..e1000_itr.clone()
            },
        ),
        // The same chip in MSI mode throttles through ITR.
        ("82574", IntMode::Msi, e1000_itr.clone()),
        (
            // igb class: EITR in 1 us, no RADV/TIDV/TADV/IDE (null).
            "i210",
            IntMode::Msi,
            Registers {
                itr_256ns: None,
                eitr_us: Some(vec![0]),
                radv_1024ns: None,
                tidv_1024ns: None,
                tadv_1024ns: None,
                ide: None,
                ..e1000_itr
            },
        ),
    ];
    for (name, mode, want) in cases {
        let r = Rig::new(chip_named(name), mode, true, 256);
        assert_eq!(r.port.registers(), want, "{name} {mode:?}");
        assert!(r.port.ignored_writes().is_empty(), "{name}");
    }
    // JSON: a missing register is null.
    let r = Rig::new(chip_named("i210"), IntMode::Msi, true, 256);
    let j = serde_json::to_value(r.port.registers()).unwrap();
    assert!(j["radv_1024ns"].is_null());
    assert_eq!(j["eitr_us"], serde_json::json!([0]));
}

#[test]
fn registers_reflect_writes_in_hardware_units() {
    // 82546: every register holds the value written, in its own unit.
    let mut r = Rig::e1000();
    r.params(ModerationParams {
        itr_256ns: Some(488),
        rdtr_1024ns: Some(8),
        radv_1024ns: Some(32),
        tidv_1024ns: Some(16),
        tadv_1024ns: Some(64),
        ..Default::default()
    });
    let g = r.port.registers();
    assert_eq!(g.itr_256ns, Some(488));
    assert_eq!(
        (g.rdtr_1024ns, g.radv_1024ns, g.tidv_1024ns, g.tadv_1024ns),
        (Some(8), Some(32), Some(16), Some(64))
    );
    assert_eq!(r.port.throttle(0), (Nanos(488 * 256), 488));
    assert!(r.port.ignored_writes().is_empty());

    // i210, EITR in 1 us: 125 us is held as 125.
    let mut r = Rig::new(chip_named("i210"), IntMode::Msi, true, 256);
    r.set_eitr_us(125);
    assert_eq!(r.port.registers().eitr_us, Some(vec![125]));
    assert!(r.port.ignored_writes().is_empty());

    // i210 given ITR units: 488 x 256 ns = 124 928 ns, truncated to 124 us
    // (the 1-us EITR granularity, I210 datasheet §8.8.14), and recorded.
    r.set_itr_256ns(488);
    assert_eq!(r.port.registers().eitr_us, Some(vec![124]));
    let w = ignored(&r.port, "EITR");
    assert_eq!(w.len(), 1);
    assert_eq!(
        (w[0].field, w[0].value, w[0].held),
        ("itr_256ns", 488, Some(124))
    );

    // 82546 given microseconds: 125 us = 125 000 / 256 = 488.28 -> 488.
    let mut r = Rig::e1000();
    r.set_eitr_us(125);
    assert_eq!(r.port.registers().itr_256ns, Some(488));
    let w = ignored(&r.port, "ITR");
    assert_eq!(
        (w[0].field, w[0].value, w[0].held),
        ("eitr_us", 125, Some(488))
    );
    // 256 us = 1000 ITR units exactly: no loss, nothing more recorded.
    let mut r = Rig::e1000();
    r.set_eitr_us(256);
    assert_eq!(r.port.registers().itr_256ns, Some(1000));
    assert!(r.port.ignored_writes().is_empty());
}

/// Assertion times on an i210 in MSI mode, RDTR = 10 ticks, the given RADV,
/// frames every 5 us from 0 to 35 us.
fn i210_rx_asserts(radv: u32) -> (Vec<u64>, NicPort) {
    let mut r = Rig::new(chip_named("i210"), IntMode::Msi, true, 256);
    r.auto_service = true;
    r.params(ModerationParams {
        rdtr_1024ns: Some(10),
        radv_1024ns: Some(radv),
        ..Default::default()
    });
    for i in 0..8 {
        r.rx_at(i * 5_000);
    }
    r.run_to(200_000);
    (r.assert_times(), r.port)
}

#[test]
fn radv_on_i210_is_ignored_recorded_once_and_rx_runs_as_with_radv_zero() {
    // The I210 has no RADV (its only moderation register is EITR, datasheet
    // §8.8.14): the write is dropped. The RDTR packet timer (kept as a
    // what-if) is restarted by every frame, so the only interrupt comes
    // 10.24 us after the last frame landed (35 us + DMA); with an 82546 the
    // same RADV = 20 would have fired at 20.48 us after the first frame.
    let dma = chip_named("i210").rx_dma_ns.as_ns();
    let (with_radv, port) = i210_rx_asserts(20);
    let (without, _) = i210_rx_asserts(0);
    assert_eq!(with_radv, vec![35_000 + dma + 10_240]);
    assert_eq!(with_radv, without);
    let w = ignored(&port, "RADV");
    assert_eq!(w.len(), 1);
    assert_eq!(
        (w[0].field, w[0].value, w[0].held),
        ("radv_1024ns", 20, None)
    );
    assert!(w[0].reason.contains("no RADV"), "{}", w[0].reason);
    assert_eq!(port.registers().radv_1024ns, None);

    // Written again and again (an adaptive moderator at every interrupt):
    // still one entry, the record stays bounded.
    let mut r = Rig::new(chip_named("i210"), IntMode::Msi, true, 256);
    for v in 1..=10_000 {
        r.params(ModerationParams {
            radv_1024ns: Some(v),
            tadv_1024ns: Some(v),
            ..Default::default()
        });
    }
    assert_eq!(ignored(&r.port, "RADV").len(), 1);
    assert_eq!(
        ignored(&r.port, "RADV")[0].value,
        1,
        "the first write is kept"
    );
    assert_eq!(ignored(&r.port, "TADV").len(), 1);
    assert_eq!(r.port.ignored_writes().len(), 2);
}

#[test]
fn zero_writes_to_missing_registers_are_not_recorded() {
    // 0 turns a delay timer off, which is what a missing register amounts to
    // (a static policy writes every timer, 0 by default).
    let mut r = Rig::new(chip_named("i210"), IntMode::Msi, true, 256);
    r.params(ModerationParams {
        eitr_us: Some(0),
        rdtr_1024ns: Some(0),
        radv_1024ns: Some(0),
        tidv_1024ns: Some(0),
        tadv_1024ns: Some(0),
        ..Default::default()
    });
    assert!(r.port.ignored_writes().is_empty());
}

#[test]
fn held_but_inert_writes_are_recorded_with_the_register_value() {
    // (case, chip, mode, set_ide, params, register, held): each value is held
    // by the register but cannot act.
    type Case = (
        &'static str,
        &'static str,
        IntMode,
        bool,
        ModerationParams,
        &'static str,
        Option<u32>,
    );
    let cases: [Case; 5] = [
        (
            // MSI-X bypasses the delay timers (82576 in MSI-X mode).
            "msix_bypass",
            "82576",
            IntMode::Msix,
            true,
            ModerationParams {
                rdtr_1024ns: Some(50),
                ..Default::default()
            },
            "RDTR",
            Some(50),
        ),
        (
            // Without IDE on the descriptors TIDV never delays TXDW (SDM §13.4.41).
            "no_ide",
            "82546",
            IntMode::Intx,
            false,
            ModerationParams {
                tidv_1024ns: Some(8),
                ..Default::default()
            },
            "TIDV",
            Some(8),
        ),
        (
            // RDTR = 0 raises RXT0 per packet and halts RADV (SDM §13.4.30).
            "radv_with_rdtr_zero",
            "82546",
            IntMode::Intx,
            true,
            ModerationParams {
                rdtr_1024ns: Some(0),
                radv_1024ns: Some(32),
                ..Default::default()
            },
            "RADV",
            Some(32),
        ),
        (
            // TIDV = 0 raises TXDW per descriptor and halts TADV (SDM §13.4.44).
            "tadv_with_tidv_zero",
            "82546",
            IntMode::Intx,
            true,
            ModerationParams {
                tadv_1024ns: Some(64),
                ..Default::default()
            },
            "TADV",
            Some(64),
        ),
        (
            // RADV on an igb chip in MSI-X mode: the missing register wins.
            "absent_beats_msix",
            "i210",
            IntMode::Msix,
            true,
            ModerationParams {
                radv_1024ns: Some(32),
                ..Default::default()
            },
            "RADV",
            None,
        ),
    ];
    for (case, chip, mode, ide, p, reg, held) in cases {
        let mut r = Rig::new(chip_named(chip), mode, ide, 256);
        r.params(p);
        let w = ignored(&r.port, reg);
        assert_eq!(w.len(), 1, "{case}: {:?}", r.port.ignored_writes());
        assert_eq!(w[0].held, held, "{case}");
        assert_eq!(r.port.ignored_writes().len(), 1, "{case}");
    }
}

#[test]
fn tidv_on_i210_is_ignored_and_tx_completions_are_immediate() {
    // The I210 has no TIDV (its transmit registers go from TDT to TXDCTL)
    // and its advanced descriptors no IDE bit: a TIDV write is dropped and
    // recorded, and TXDW is raised at write-back whatever set_ide says: one
    // 64-B frame, TX DMA + 672 ns on the wire, then the cause at once
    // (on an 82546 with IDE it would wait 8 x 1.024 us more).
    let c = chip_named("i210");
    let mut r = Rig::new(c, IntMode::Msi, true, 256);
    r.params(ModerationParams {
        tidv_1024ns: Some(8),
        tadv_1024ns: Some(8),
        ..Default::default()
    });
    assert!(r.port.tx_post(0, pkt(0)));
    r.port.tx_kick(SimTime(0), 0, &mut r.out);
    r.drain();
    r.run_to(1_000_000);
    let done = c.tx_dma_ns.as_ns() + 672;
    assert_eq!(r.assert_times(), vec![done]);
    let regs: Vec<_> = r
        .port
        .ignored_writes()
        .iter()
        .map(|w| (w.register, w.field, w.held))
        .collect();
    assert_eq!(
        regs,
        vec![("TADV", "tadv_1024ns", None), ("TIDV", "tidv_1024ns", None)]
    );
    assert_eq!(r.port.registers().tidv_1024ns, None);
    assert_eq!(r.port.registers().ide, None);
}

// ------------------------------------------------ legacy ITR on EITR chips

#[test]
fn legacy_itr_write_is_honoured_or_ignored_as_the_port_says() {
    use chip::LegacyItr::{Honoured, Ignored, Native};
    // OpenBSD em(4) writes only the legacy ITR (0x000C4) = 488 (8000/s).
    // Table: (chip, mode, chip default, behaviour run, EITR/ITR interval in
    // effect [ns], ITR warning: None = no entry, Some(held) = entry holding
    // `held` (None inside = dropped)), then the interrupts taken by 200
    // frames 5 us apart (1 ms) with RDTR = 0 (every frame an immediate
    // cause) and an instant driver.
    // - 82546 (8254x SDM §13.4.18): ITR is native, 488 x 256 ns = 124.928 us.
    //   A throttled vector asserts at d, d + I, d + 2I, ... (d = DMA) while
    //   causes are pending; the last frame lands at 995 us + d, so the
    //   assertions are k = 0 ..= ceil(995 us / I): ceil(995 / I) + 1.
    // - i210 honoured: EITR[0] = 488 x 256 ns held in 1 us, truncated to
    //   124 us (I210 datasheet §8.8.14: 1 us granularity); same count.
    // - i210 ignored: EITR[0] keeps its reset value 0: no throttle, so every
    //   frame is its own interrupt: 200.
    // - in MSI-X mode the write is an EITR value in the other unit
    //   (converted, as before), whatever `legacy_itr` says.
    type Row = (
        &'static str,
        IntMode,
        LegacyItr,
        LegacyItr,
        u64,
        Option<Option<u32>>,
    );
    let rows: [Row; 6] = [
        ("82546", IntMode::Intx, Native, Native, 124_928, None),
        (
            "i210",
            IntMode::Msi,
            Honoured,
            Honoured,
            124_000,
            Some(Some(488)),
        ),
        ("i210", IntMode::Msi, Honoured, Ignored, 0, Some(None)),
        ("i211", IntMode::Intx, Honoured, Ignored, 0, Some(None)),
        (
            "i350",
            IntMode::Msi,
            Honoured,
            Honoured,
            124_000,
            Some(Some(488)),
        ),
        ("i210", IntMode::Msix, Honoured, Ignored, 124_000, None),
    ];
    for (name, mode, default, run, interval, itr_note) in rows {
        // 124.928 us -> 9 interrupts, 124 us -> 10, no throttle -> 200.
        let ints = match interval {
            0 => 200,
            i => 995_000u64.div_ceil(i) + 1,
        };
        let c = chip_named(name);
        assert_eq!(c.legacy_itr, default, "{name} default");
        let mut r = Rig::new(c, mode, false, 256);
        r.port.cfg.legacy_itr = run;
        r.auto_service = true;
        r.params(ModerationParams {
            itr_256ns: Some(488),
            rdtr_1024ns: Some(0),
            ..Default::default()
        });
        let what = format!("{name} {mode:?} {}", run.name());
        assert_eq!(r.port.throttle(0).0.as_ns(), interval, "{what}: interval");
        let itr = ignored(&r.port, "ITR");
        match itr_note {
            None => assert!(itr.is_empty(), "{what}: {itr:?}"),
            Some(held) => {
                assert_eq!(itr.len(), 1, "{what}");
                assert_eq!((itr[0].field, itr[0].value), ("itr_256ns", 488), "{what}");
                assert_eq!(itr[0].held, held, "{what}");
                assert!(
                    itr[0].reason.contains(run.name()),
                    "{what}: {}",
                    itr[0].reason
                );
            }
        }
        for i in 0..200 {
            r.rx_at(i * 5_000);
        }
        r.run_to(1_200_000);
        assert_eq!(r.port.interrupts(0), ints, "{what}: interrupts");
    }
}

#[test]
fn every_eitr_class_preset_has_a_legacy_itr_choice_and_no_other_does() {
    // The property is meaningful exactly where the throttle is EITR in 1 us
    // (igb class); the 8254x and the 82574 have ITR at 0x000C4 themselves.
    for c in chip::presets() {
        let native = c.legacy_itr == chip::LegacyItr::Native;
        assert_eq!(native, c.throttle != ThrottleKind::Eitr1us, "{}", c.name);
    }
    // Seed 004's ~8000 interrupts/s under OpenBSD em(4), which writes only
    // 0x000C4, is what the APU2 chips' default must reproduce.
    for name in ["i210", "i211"] {
        assert_eq!(chip_named(name).legacy_itr, chip::LegacyItr::Honoured);
    }
}
