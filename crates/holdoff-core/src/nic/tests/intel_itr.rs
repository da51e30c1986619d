//! The Intel 700/800 Series vector: an ITR held in 2 us counts (i40e
//! `i40e_buildreg_itr`, ice `__ice_write_itr`: `usecs >> 1`) and an
//! interrupt rate limit INTRL in 4 us counts (ice `ice_write_intrl`, i40e
//! `INTRL_REG_TO_USEC`), with assertions spaced by the larger of the two.

use super::*;
use crate::moderation::ModerationParams;

fn rig(name: &str) -> Rig {
    Rig::new(chip::by_name(name).unwrap(), IntMode::Msix, true, 512)
}

fn write(r: &mut Rig, itr_us: Option<u32>, intrl_us: Option<u32>) {
    r.params(ModerationParams {
        eitr_us: itr_us,
        intrl_us,
        ..Default::default()
    });
}

#[test]
fn itr_holds_2us_counts_and_intrl_4us_counts_with_the_losses_recorded() {
    // (itr written [us], held [2 us], intrl written [us], held [4 us]):
    // 84 -> 42; 85 -> 42 (1 us lost); intrl 62 -> 15 (60 us, 2 us lost);
    // intrl 236 -> 59 (0x3B, the largest the drivers write).
    for (itr, itr_held, intrl, intrl_held, lossy) in [
        (84, 42, 100, 25, false),
        (85, 42, 62, 15, true),
        (2, 1, 236, 59, false),
    ] {
        for chip in ["e810-c", "e810-xxv", "x710", "xl710"] {
            let mut r = rig(chip);
            write(&mut r, Some(itr), Some(intrl));
            let regs = r.port.registers();
            assert_eq!(regs.itr_2us, Some(vec![itr_held]), "{chip} {itr}");
            assert_eq!(regs.intrl_4us, Some(vec![intrl_held]), "{chip} {intrl}");
            assert_eq!(r.port.throttle(0).0, Nanos::from_us(itr_held as u64 * 2));
            let noted = !r.port.ignored_writes().is_empty();
            assert_eq!(noted, lossy, "{chip} {itr} {intrl}");
        }
    }
}

#[test]
fn intrl_on_a_chip_without_it_is_dropped_and_recorded() {
    let mut r = rig("82599");
    write(&mut r, None, Some(100));
    let w = &r.port.ignored_writes()[0];
    assert_eq!((w.register, w.held), ("INTRL", None));
    assert_eq!(r.port.registers().intrl_4us, None);
}

#[test]
fn assertions_are_spaced_by_the_larger_of_itr_and_intrl() {
    // ITR 20 us, INTRL 60 us: a cause pending all along asserts at the
    // first arrival, then every 60 us (the rate limit is the larger). The
    // cause is never cleared (nobody reads ICR), so each spacing ends in an
    // assertion.
    let mut r = rig("e810-c");
    write(&mut r, Some(20), Some(60));
    r.rx_at(0);
    let dma = chip::by_name("e810-c").unwrap().rx_dma_ns.as_ns();
    r.run_to(dma + 200_000);
    let t = r.assert_times();
    assert_eq!(t[..4], [dma, dma + 60_000, dma + 120_000, dma + 180_000]);
}
