//! The 82599/X540/X550 EITR as the part holds it: bits 11:3 of a 256 ns
//! count (2.048 us steps), and CNT_WDIS (Linux ixgbe_write_eitr sets it on
//! these parts: a rewrite leaves the running countdown alone), against the
//! igb class, whose EITR write restarts the counter.

use super::*;

fn rig(name: &str) -> Rig {
    Rig::new(chip::by_name(name).unwrap(), IntMode::Msix, true, 512)
}

#[test]
fn eitr_holds_bits_11_to_3_and_records_the_loss() {
    // (value written as usecs << 2, held count, interval [ns]). 84 us -> 336
    // = 42 x 8: held whole, 42 x 2.048 us = 86 016 ns. 85 us -> 340: bit 2
    // dropped -> 336. 5 us -> 20 -> 16 (4.096 us). 1022 us -> 4088 = 0xFF8,
    // the largest: 511 x 2.048 us = 1 046 528 ns. 0x1000 is above the field:
    // nothing of it is held (0, no throttle).
    for (written, held, ns, lossy) in [
        (336, 336, 86_016, false),
        (340, 336, 86_016, true),
        (20, 16, 4_096, true),
        (4088, 4088, 1_046_528, false),
        (0x1000, 0, 0, true),
    ] {
        for chip in ["82599", "x540", "x550"] {
            let mut r = rig(chip);
            r.set_itr_256ns(written);
            assert_eq!(r.port.throttle(0), (Nanos(ns), held), "{chip} {written}");
            assert_eq!(r.port.registers().eitr_256ns, Some(vec![held]), "{chip}");
            assert_eq!(r.port.registers().itr_256ns, None);
            let noted = r.port.ignored_writes().iter().any(|w| w.register == "EITR");
            assert_eq!(noted, lossy, "{chip} {written}");
        }
    }
}

#[test]
fn eitr_in_1us_is_converted_to_the_2048ns_field() {
    // eitr_us = 100 -> 100 000 / 256 = 390 (truncated) -> & 0xFF8 = 384 ->
    // 384 x 256 = 98 304 ns (48 steps of 2.048 us).
    let mut r = rig("82599");
    r.set_eitr_us(100);
    assert_eq!(r.port.throttle(0), (Nanos(98_304), 384));
}

#[test]
fn a_rewrite_does_not_restart_the_running_countdown() {
    // 82599 with CNT_WDIS: cause at 0 asserts at once (t = DMA) and starts
    // a 336 x 256 = 86 016 ns countdown; a second cause is held. Rewriting
    // EITR (to the same or another value) before the countdown ends does not
    // assert it: it waits for the countdown's end, DMA + 86 016 ns; the new
    // interval (200 x 256 = 51 200 ns) times the countdown after that (the
    // cause stays pending: nobody reads ICR).
    let mut r = rig("82599");
    r.set_itr_256ns(336);
    r.rx_at(0);
    r.service_at(5_000);
    r.rx_at(10_000);
    let land = 10_000 + chip::by_name("82599").unwrap().rx_dma_ns.as_ns();
    r.run_to(land);
    assert_eq!(r.asserts.len(), 1);
    let first = r.asserts[0].0;
    r.set_itr_256ns(200);
    assert_eq!(r.asserts.len(), 1, "CNT_WDIS: no assertion at the write");
    r.run_to(first + 86_016 + 51_200);
    assert_eq!(
        r.assert_times(),
        vec![first, first + 86_016, first + 86_016 + 51_200]
    );
    // The igb class written without CNT_IGNR, same sequence: the write
    // zeroes the counter and the held cause asserts at the write (I210
    // datasheet §8.8.14).
    let mut r = Rig::new(chip::by_name("i210").unwrap(), IntMode::Msix, true, 256);
    r.port.cfg.eitr_cnt_ignr = false;
    r.set_eitr_us(84);
    r.rx_at(0);
    r.service_at(5_000);
    r.rx_at(10_000);
    let land = 10_000 + chip::by_name("i210").unwrap().rx_dma_ns.as_ns();
    r.run_to(land);
    r.set_eitr_us(50);
    assert_eq!(r.asserts.len(), 2);
    assert_eq!(r.asserts[1].0, land);
}

#[test]
fn the_ixgbe_parts_have_no_delay_timers() {
    // Linux ixgbe programs only EITR; an RDTR/RADV/TIDV/TADV write is
    // dropped and recorded, naming the ixgbe class.
    let mut r = rig("82599");
    r.params(ModerationParams {
        rdtr_1024ns: Some(8),
        ..Default::default()
    });
    let regs = r.port.registers();
    assert_eq!(regs.rdtr_1024ns, None);
    let w = &r.port.ignored_writes()[0];
    assert_eq!((w.register, w.held), ("RDTR", None));
    assert!(w.reason.contains("ixgbe class"), "{}", w.reason);
}
