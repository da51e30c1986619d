//! The port's moderation registers as the chip holds them, and the record of
//! writes the chip (or the driver's descriptor format) ignores.
//!
//! Models: register writes through `NicPort::apply_params` (ITR/EITR,
//! RDTR, RADV, TIDV, TADV) against the chip's `RegisterMap`:
//! - a write to a register the chip lacks (`RegPresence::Absent`, e.g. RADV,
//!   TIDV, TADV on the I210) is dropped;
//! - a write to a register the model keeps as a what-if
//!   (`RegPresence::WhatIf`, RDTR on the I210) acts as on an 8254x;
//! - a delay-timer write that cannot act (MSI-X mode bypasses the delay
//!   timers; TIDV/TADV without IDE on the TX descriptors; RADV with RDTR = 0,
//!   TADV with TIDV = 0) is held but inert;
//! - a throttle value given in the other unit is converted with truncation
//!   (1 us = 1000/256 ITR units);
//! - on an EITR-class chip outside MSI-X mode, a value in 256 ns is a write
//!   to the legacy ITR (0x000C4): applied to EITR[0] or dropped, as the
//!   port's `LegacyItr` says (`chip::LegacyItr`; recorded either way).
//!
//! Each such case is recorded once per register (`IgnoredWrite`), so the
//! record is bounded (at most one entry per register, 7 registers) whatever
//! the run length; the first case seen for a register is the one kept.
//! Zero writes are not recorded: 0 turns a timer off, which is what an
//! absent or inert register amounts to.
//!
//! Simplifies: values wider than the register field are held whole (the
//! scenario layer validates the ranges).
//!
//! - Intel 700/800 Series (`ThrottleKind::Itr2us`): the ITR holds 2 us
//!   counts and the interrupt rate limit (INTRL, `intrl_us`) 4 us counts;
//!   a rate-limit write on a chip without INTRL is dropped and recorded.
//!
//! Units: register values in hardware units (`itr_256ns`, `eitr_us`,
//! `eitr_256ns`, `*_1024ns`, `itr_2us`, `intrl_4us`). Sources: see `chip::RegisterMap`.

use super::chip::{LegacyItr, RegPresence, ThrottleKind, EITR_2048NS_MASK};
use super::{IntMode, NicOut, NicPort};
use crate::moderation::ModerationParams;
use crate::units::{eitr_us_to_nanos, itr_256ns_to_nanos, ticks_1024ns_to_nanos, Nanos, SimTime};
use serde::Serialize;

/// The moderation registers of one port as the chip holds them now, in
/// hardware units. `None` (null in JSON): the chip has no such register (or,
/// for the throttle, the port uses the other throttle register).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Registers {
    /// ITR (0x000C4) interval [256 ns]: 8254x, and the 82574 outside MSI-X mode.
    pub itr_256ns: Option<u32>,
    /// Per-vector EITR interval [256 ns]: the 82574 in MSI-X mode; the
    /// 82599/X540/X550 in every mode (the count as held, bits 11:3, so a
    /// multiple of 8: 2.048 us steps).
    pub eitr_256ns: Option<Vec<u32>>,
    /// Per-vector EITR interval field (bits 14:2) [1 us]: igb class.
    pub eitr_us: Option<Vec<u32>>,
    /// Per-vector ITR interval [2 us]: Intel 700/800 Series (i40e, ice).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub itr_2us: Option<Vec<u32>>,
    /// Per-vector interrupt rate limit INTRL [4 us]; 0 = off: Intel
    /// 700/800 Series.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intrl_4us: Option<Vec<u32>>,
    /// RX packet timer RDTR [1.024 us].
    pub rdtr_1024ns: Option<u32>,
    /// RX absolute timer RADV [1.024 us].
    pub radv_1024ns: Option<u32>,
    /// TX packet timer TIDV [1.024 us].
    pub tidv_1024ns: Option<u32>,
    /// TX absolute timer TADV [1.024 us].
    pub tadv_1024ns: Option<u32>,
    /// The driver sets IDE on TX descriptors (TIDV/TADV act only then).
    pub ide: Option<bool>,
    /// The delay timers act (false in MSI-X mode, which bypasses them).
    pub delay_timers_active: bool,
    /// CQ-moderated chips (`nic::cq`): each RX completion queue's period
    /// [us], count and period mode, by queue (absent on other chips).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cq_rx: Option<Vec<crate::moderation::CqSetting>>,
    /// The same for the TX completion queues.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cq_tx: Option<Vec<crate::moderation::CqSetting>>,
}

/// A register write (or descriptor setting) that the chip or the driver
/// ignores, holds without effect, converts lossily, or that the model applies
/// only as a what-if.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IgnoredWrite {
    /// The register: "ITR", "EITR", "RDTR", "RADV", "TIDV", "TADV" or "IDE".
    pub register: &'static str,
    /// The `ModerationParams` (or `PortConfig`) field the value came in:
    /// "itr_256ns", "eitr_us", "rdtr_1024ns", "radv_1024ns", "tidv_1024ns",
    /// "tadv_1024ns" or "set_ide".
    pub field: &'static str,
    /// The value written, in the field's unit (`set_ide`: 1).
    pub value: u32,
    /// What the register holds after the write, in the register's unit;
    /// `None`: the write was dropped.
    pub held: Option<u32>,
    /// Why, with the source.
    pub reason: String,
}

/// Register slots for the once-per-register record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reg {
    Itr,
    Eitr,
    Rdtr,
    Radv,
    Tidv,
    Tadv,
    Ide,
    Intrl,
}

impl Reg {
    pub(super) const fn name(self) -> &'static str {
        match self {
            Reg::Itr => "ITR",
            Reg::Eitr => "EITR",
            Reg::Rdtr => "RDTR",
            Reg::Radv => "RADV",
            Reg::Tidv => "TIDV",
            Reg::Tadv => "TADV",
            Reg::Ide => "IDE",
            Reg::Intrl => "INTRL",
        }
    }
}

/// Raw delay-timer register values [1.024 us] as written (for `registers()`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DelayRegs {
    pub rdtr: u32,
    pub radv: u32,
    pub tidv: u32,
    pub tadv: u32,
}

/// The once-per-register record of ignored writes.
#[derive(Clone, Debug, Default)]
pub(super) struct WriteLog {
    /// Bit `Reg as u8` set: that register already has an entry.
    seen: u8,
    entries: Vec<IgnoredWrite>,
}

impl WriteLog {
    fn note(
        &mut self,
        reg: Reg,
        field: &'static str,
        value: u32,
        held: Option<u32>,
        reason: impl FnOnce() -> String,
    ) {
        let bit = 1u8 << reg as u8;
        if self.seen & bit == 0 {
            self.seen |= bit;
            self.entries.push(IgnoredWrite {
                register: reg.name(),
                field,
                value,
                held,
                reason: reason(),
            });
        }
    }
}

/// Source of the "delay timers bypassed in MSI-X mode" rule.
const MSIX_BYPASS: &str = "in MSI-X mode the delay timers are bypassed (82574 and 82576 \
     in MSI-X mode raise the queue cause at write-back)";

impl NicPort {
    /// The moderation registers as the chip holds them now.
    pub fn registers(&self) -> Registers {
        let regs = &self.chip.regs;
        let opt = |p: RegPresence, v: u32| p.modelled().then_some(v);
        let throttle: Vec<u32> = self.vectors.iter().map(|v| v.reg).collect();
        let (mut itr, mut eitr_256, mut eitr_us) = (None, None, None);
        let (mut itr_2us, mut intrl_4us) = (None, None);
        match (self.chip.throttle, self.cfg.mode) {
            (ThrottleKind::Itr2us { .. }, _) => {
                itr_2us = Some(throttle);
                intrl_4us = Some(self.vectors.iter().map(|v| v.intrl_reg).collect());
            }
            (ThrottleKind::Eitr1us, _) => eitr_us = Some(throttle),
            (ThrottleKind::Eitr256ns, IntMode::Msix) | (ThrottleKind::Eitr2048ns, _) => {
                eitr_256 = Some(throttle)
            }
            // No throttle register: the CQs' moderation below.
            (ThrottleKind::Cq(_), _) => {}
            _ => itr = Some(throttle[0]),
        }
        let cq = matches!(self.chip.throttle, ThrottleKind::Cq(_));
        let cq_rx = cq.then(|| self.rxq.iter().map(|q| q.cq_set).collect());
        let cq_tx = cq.then(|| self.txq.iter().map(|q| q.cq_set).collect());
        Registers {
            itr_256ns: itr,
            eitr_256ns: eitr_256,
            eitr_us,
            itr_2us,
            intrl_4us,
            rdtr_1024ns: opt(regs.rdtr, self.delay_regs.rdtr),
            radv_1024ns: opt(regs.radv, self.delay_regs.radv),
            tidv_1024ns: opt(regs.tidv, self.delay_regs.tidv),
            tadv_1024ns: opt(regs.tadv, self.delay_regs.tadv),
            ide: regs.tx_ide.modelled().then_some(self.cfg.set_ide),
            delay_timers_active: self.delay_timers_active(),
            cq_rx,
            cq_tx,
        }
    }

    /// Writes the chip or driver ignored, held without effect, converted
    /// lossily or applied only as a what-if: at most one entry per register,
    /// in the order first seen.
    pub fn ignored_writes(&self) -> &[IgnoredWrite] {
        &self.write_log.entries
    }

    /// The throttle register this port writes.
    fn throttle_reg(&self) -> Reg {
        match (self.chip.throttle, self.cfg.mode) {
            (ThrottleKind::Itr256ns, _) | (ThrottleKind::Itr2us { .. }, _) => Reg::Itr,
            (ThrottleKind::Eitr256ns, IntMode::Msix)
            | (ThrottleKind::Eitr1us, _)
            | (ThrottleKind::Eitr2048ns, _)
            | (ThrottleKind::Cq(_), _) => Reg::Eitr,
            (ThrottleKind::Eitr256ns, _) => Reg::Itr,
        }
    }

    /// Apply moderation settings (register writes). Values in the unit the
    /// chip does not use are converted (1 us = 1000/256 ITR units, truncated).
    /// Writes to registers the chip lacks are dropped; see `ignored_writes`.
    pub fn apply_params(
        &mut self,
        now: SimTime,
        p: &ModerationParams,
        vector: Option<u16>,
        out: &mut NicOut,
    ) {
        if let Some(v) = p.rdtr_1024ns {
            if self.write_delay(Reg::Rdtr, "rdtr_1024ns", v) {
                self.delay_regs.rdtr = v;
                self.rdtr = ticks_1024ns_to_nanos(v);
            }
        }
        if let Some(v) = p.radv_1024ns {
            if self.write_delay(Reg::Radv, "radv_1024ns", v) {
                self.delay_regs.radv = v;
                self.radv = ticks_1024ns_to_nanos(v);
            }
        }
        if let Some(v) = p.tadv_1024ns {
            if self.write_delay(Reg::Tadv, "tadv_1024ns", v) {
                self.delay_regs.tadv = v;
                self.tadv = ticks_1024ns_to_nanos(v);
            }
        }
        if let Some(v) = p.tidv_1024ns {
            if self.write_delay(Reg::Tidv, "tidv_1024ns", v) {
                self.delay_regs.tidv = v;
                self.tidv = ticks_1024ns_to_nanos(v);
            }
        }
        self.note_inert_absolute_timers(p);
        let range = match vector {
            Some(v) => v as usize..v as usize + 1,
            None => 0..self.vectors.len(),
        };
        if let Some(us) = p.intrl_us {
            if let Some(held) = self.intrl_value(us) {
                for vi in range.clone() {
                    let v = &mut self.vectors[vi];
                    v.intrl_reg = held;
                    v.intrl_ps = super::on_clock_ps(super::intrl_nanos(held), self.clock_error_ppb);
                }
            }
        }
        if p.cq_rx.is_some() || p.cq_tx.is_some() {
            self.write_cq(p, vector);
        }
        if let Some((reg, ns)) = self.throttle_value(p) {
            for vi in range {
                self.write_throttle(now, vi as u16, reg, ns, out);
            }
        }
    }

    /// The INTRL register value [4 us] a rate-limit write of `us` sets, or
    /// `None` if the chip has no INTRL (the write is dropped and recorded
    /// unless it is 0). The drivers write `us / 4` (ice
    /// `ice_intrl_usec_to_reg` with 4 us, i40e `i40e_intrl_usec_to_reg`):
    /// a value that is not a multiple of 4 loses its remainder (recorded).
    fn intrl_value(&mut self, us: u32) -> Option<u32> {
        let chip = self.chip.name;
        if !matches!(self.chip.throttle, ThrottleKind::Itr2us { .. }) {
            if us != 0 {
                self.write_log.note(Reg::Intrl, "intrl_us", us, None, || {
                    format!(
                        "{chip} has no interrupt rate limit register (INTRL is an Intel \
                         700/800 Series register); the write is ignored"
                    )
                });
            }
            return None;
        }
        let held = us / 4;
        if held * 4 != us {
            self.write_log
                .note(Reg::Intrl, "intrl_us", us, Some(held), || {
                    format!(
                    "{chip} counts INTRL in 4 us (ice ice_write_intrl, i40e INTRL_REG_TO_USEC): \
                     intrl_us = {us} is held as {held} x 4 us = {} us",
                    held * 4
                )
                });
        }
        Some(held)
    }

    /// Check a delay-timer write against the register map, record it if it is
    /// ignored, inert or a what-if, and say whether the model applies it.
    fn write_delay(&mut self, reg: Reg, field: &'static str, v: u32) -> bool {
        let map = &self.chip.regs;
        let presence = match reg {
            Reg::Rdtr => map.rdtr,
            Reg::Radv => map.radv,
            Reg::Tidv => map.tidv,
            // Only the four delay timers come here.
            _ => map.tadv,
        };
        if v == 0 {
            return presence.modelled();
        }
        let chip = self.chip.name;
        let name = reg.name();
        let tx = matches!(reg, Reg::Tidv | Reg::Tadv);
        if presence == RegPresence::Absent {
            let why = if self.chip.throttle == ThrottleKind::Eitr2048ns {
                "ixgbe class: EITR is its only moderation register (Linux ixgbe_type.h)"
            } else {
                "igb class: the I210 datasheet register map has EITR as its only moderation \
                 register, §8.8.14"
            };
            self.write_log.note(reg, field, v, None, || {
                format!("{chip} has no {name} register ({why}); the write is ignored")
            });
        } else if !self.delay_timers_active() {
            self.write_log.note(reg, field, v, Some(v), || {
                format!("{MSIX_BYPASS}: {name} holds {v} but does not act")
            });
        } else if tx && !self.cfg.set_ide {
            self.write_log.note(reg, field, v, Some(v), || {
                format!(
                    "set_ide = false: the driver's TX descriptors carry no IDE bit, so {name} \
                     never delays TXDW (8254x SDM §13.4.41); {name} holds {v} but does not act"
                )
            });
        } else if presence == RegPresence::WhatIf {
            self.write_log.note(reg, field, v, Some(v), || {
                format!(
                    "{chip} has no {name} register (igb class: EITR is its only moderation \
                     register, I210 datasheet §8.8.14); the model applies {name} = {v} as an \
                     8254x would (a what-if), the real chip would ignore it"
                )
            });
            if tx && self.chip.regs.tx_ide == RegPresence::WhatIf {
                self.write_log.note(Reg::Ide, "set_ide", 1, Some(1), || {
                    format!(
                        "{chip}'s advanced TX descriptors have no IDE bit (OpenBSD if_em.c: \
                         the 82575 class \"lack the IDE bit\"); the model honours set_ide = true \
                         as a what-if so that TIDV acts"
                    )
                });
            }
        }
        presence.modelled()
    }

    /// RADV with RDTR = 0, or TADV with TIDV = 0, cannot act: a packet delay
    /// of 0 raises the cause at once and halts the absolute timer (8254x SDM
    /// §13.4.30, §13.4.44). Checked after the writes of one `apply_params`.
    fn note_inert_absolute_timers(&mut self, p: &ModerationParams) {
        if !self.delay_timers_active() {
            return;
        }
        let d = self.delay_regs;
        if p.radv_1024ns.is_some() && self.chip.regs.radv.modelled() && d.radv != 0 && d.rdtr == 0 {
            self.write_log
                .note(Reg::Radv, "radv_1024ns", d.radv, Some(d.radv), || {
                    format!(
                        "RDTR = 0 raises RXT0 for every packet and halts the absolute timer \
                     (8254x SDM §13.4.30), so RADV holds {} but does not act",
                        d.radv
                    )
                });
        }
        if p.tadv_1024ns.is_some()
            && self.chip.regs.tadv.modelled()
            && self.cfg.set_ide
            && d.tadv != 0
            && d.tidv == 0
        {
            self.write_log
                .note(Reg::Tadv, "tadv_1024ns", d.tadv, Some(d.tadv), || {
                    format!(
                        "TIDV = 0 raises TXDW for every descriptor and halts the absolute timer \
                     (8254x SDM §13.4.44), so TADV holds {} but does not act",
                        d.tadv
                    )
                });
        }
    }

    /// The throttle register value and interval a write sets, converting a
    /// value given in the other unit (truncated), or `None` if the write sets
    /// no throttle. Records lossy conversions and a value given in both units.
    fn throttle_value(&mut self, p: &ModerationParams) -> Option<(u32, Nanos)> {
        let reg = self.throttle_reg();
        let chip = self.chip.name;
        if self.chip.throttle == ThrottleKind::Eitr2048ns {
            return self.ixgbe_eitr_value(reg, p);
        }
        if let ThrottleKind::Itr2us { .. } = self.chip.throttle {
            return self.itr_2us_value(reg, p);
        }
        match (self.chip.throttle, p.itr_256ns, p.eitr_us) {
            (ThrottleKind::Eitr1us, itr, Some(us)) => {
                if let Some(itr) = itr {
                    self.write_log.note(reg, "itr_256ns", itr, Some(us), || {
                        format!("{chip} counts EITR in 1 us and eitr_us = {us} was also given; itr_256ns is ignored")
                    });
                }
                Some((us, eitr_us_to_nanos(us)))
            }
            (ThrottleKind::Eitr1us, Some(itr), None) if self.cfg.mode != IntMode::Msix => {
                // A value in 256 ns outside MSI-X mode is a write to the
                // legacy ITR (0x000C4), as OpenBSD em(4) does on every MAC;
                // whether the chip honours it is `LegacyItr`.
                if self.cfg.legacy_itr == LegacyItr::Ignored {
                    self.write_log.note(Reg::Itr, "itr_256ns", itr, None, || {
                        format!(
                            "{chip} has no legacy ITR register (0x000C4) in its datasheet map: \
                             EITR[0] is the moderation register in INTx/MSI mode; with \
                             legacy_itr = \"ignored\" the write of {itr} is dropped and EITR[0] \
                             keeps its reset value 0 (no throttle)"
                        )
                    });
                    return None;
                }
                if itr != 0 {
                    self.write_log
                        .note(Reg::Itr, "itr_256ns", itr, Some(itr), || {
                            format!(
                            "{chip} has no legacy ITR register (0x000C4) in its datasheet map; \
                             with legacy_itr = \"honoured\" (the chip default, not settled by \
                             the datasheet) the model applies the write of {itr} to EITR[0]"
                        )
                        });
                }
                Some(self.itr_as_eitr_us(reg, itr))
            }
            (ThrottleKind::Eitr1us, Some(itr), None) => Some(self.itr_as_eitr_us(reg, itr)),
            (_, Some(itr), eitr) => {
                if let Some(us) = eitr {
                    self.write_log.note(reg, "eitr_us", us, Some(itr), || {
                        format!("{chip} counts its throttle in 256 ns and itr_256ns = {itr} was also given; eitr_us is ignored")
                    });
                }
                Some((itr, itr_256ns_to_nanos(itr)))
            }
            (_, None, Some(us)) => {
                let ns = us as u64 * 1000;
                let itr = (ns / 256) as u32;
                if ns != itr as u64 * 256 {
                    let name = reg.name();
                    self.write_log.note(reg, "eitr_us", us, Some(itr), || {
                        format!(
                            "{chip} counts {name} in 256 ns (8254x SDM §13.4.18): eitr_us = {us} \
                             is held as itr_256ns = {itr} ({} ns, truncated)",
                            itr as u64 * 256
                        )
                    });
                }
                Some((itr, itr_256ns_to_nanos(itr)))
            }
            (_, None, None) => None,
        }
    }

    /// The 82599/X540/X550 EITR: a 256 ns count of which bits 11:3 are held
    /// (`EITR_2048NS_MASK`). A value in 1 us is first converted to 256 ns
    /// (truncated); bits outside 11:3 are dropped and the loss recorded
    /// (an odd `rx-usecs` shifted by 2 loses bit 2: 85 us is held as 84).
    fn ixgbe_eitr_value(&mut self, reg: Reg, p: &ModerationParams) -> Option<(u32, Nanos)> {
        let chip = self.chip.name;
        let (field, given, count) = match (p.itr_256ns, p.eitr_us) {
            (Some(itr), eitr) => {
                if let Some(us) = eitr {
                    self.write_log.note(reg, "eitr_us", us, Some(itr & EITR_2048NS_MASK), || {
                        format!("{chip} counts EITR in 256 ns and itr_256ns = {itr} was also given; eitr_us is ignored")
                    });
                }
                ("itr_256ns", itr, itr)
            }
            (None, Some(us)) => (
                "eitr_us",
                us,
                (us as u64 * 1000 / 256).min(u32::MAX as u64) as u32,
            ),
            (None, None) => return None,
        };
        let held = count & EITR_2048NS_MASK;
        if held != count || (field == "eitr_us" && held as u64 * 256 != given as u64 * 1000) {
            self.write_log.note(reg, field, given, Some(held), || {
                format!(
                    "{chip} holds bits 11:3 of the EITR count (Linux ixgbe_type.h \
                     IXGBE_EITR_ITR_INT_MASK 0xFF8: 2.048 us steps): {field} = {given} is held \
                     as {held} x 256 ns = {} ns",
                    held as u64 * 256
                )
            });
        }
        Some((held, itr_256ns_to_nanos(held)))
    }

    /// The Intel 700/800 ITR: an interval in 2 us (the drivers write
    /// `usecs >> 1`). A value in 1 us (`eitr_us`) is held as `us / 2`; one
    /// in 256 ns is converted (truncated). Losses are recorded.
    fn itr_2us_value(&mut self, reg: Reg, p: &ModerationParams) -> Option<(u32, Nanos)> {
        let chip = self.chip.name;
        let (field, given, ns) = match (p.eitr_us, p.itr_256ns) {
            (Some(us), itr) => {
                if let Some(itr) = itr {
                    self.write_log.note(reg, "itr_256ns", itr, Some(us / 2), || {
                        format!("{chip} counts ITR in 2 us and eitr_us = {us} was also given; itr_256ns is ignored")
                    });
                }
                ("eitr_us", us, us as u64 * 1000)
            }
            (None, Some(itr)) => ("itr_256ns", itr, itr as u64 * 256),
            (None, None) => return None,
        };
        let held = (ns / 2000).min(u32::MAX as u64) as u32;
        if held as u64 * 2000 != ns {
            self.write_log.note(reg, field, given, Some(held), || {
                format!(
                    "{chip} counts ITR in 2 us (i40e i40e_buildreg_itr, ice __ice_write_itr): \
                     {field} = {given} is held as {held} x 2 us = {} us",
                    held * 2
                )
            });
        }
        Some((held, Nanos::from_us(held as u64 * 2)))
    }

    /// An ITR value [256 ns] held in the 1 us EITR field (truncated), with
    /// the lossy conversion recorded. Returns (eitr_us, interval).
    fn itr_as_eitr_us(&mut self, reg: Reg, itr: u32) -> (u32, Nanos) {
        let chip = self.chip.name;
        let ns = itr as u64 * 256;
        let us = (ns / 1000) as u32;
        if ns != us as u64 * 1000 {
            self.write_log.note(reg, "itr_256ns", itr, Some(us), || {
                format!(
                    "{chip} counts EITR in 1 us (I210 datasheet §8.8.14): itr_256ns = \
                     {itr} ({ns} ns) is held as eitr_us = {us} (truncated)"
                )
            });
        }
        (us, eitr_us_to_nanos(us))
    }

    /// Write the throttle register of one vector. ITR: the new interval
    /// applies to later countdowns. EITR (igb class): written with CNT_IGNR
    /// (`PortConfig::eitr_cnt_ignr`, the drivers' way), likewise; with
    /// CNT_IGNR clear the write also zeroes the counter, so pending causes
    /// assert at once (I210 datasheet §8.8.14). EITR of the 82599/X540/X550: the driver
    /// sets CNT_WDIS, so the running countdown is left alone and the new
    /// interval applies from the next one (Linux ixgbe_write_eitr: "set the
    /// WDIS bit to not clear the timer bits and cause an immediate
    /// assertion of the interrupt").
    fn write_throttle(
        &mut self,
        now: SimTime,
        vector: u16,
        reg: u32,
        interval: Nanos,
        out: &mut NicOut,
    ) {
        // Intel 700/800: a new ITR written with the interrupt enable
        // restarts the countdown ("The act of updating the ITR will cause
        // it to immediately trigger", Linux i40e/ice before their DIM
        // rework), but the rate limit still spaces the next assertion.
        let intel = matches!(self.chip.throttle, ThrottleKind::Itr2us { .. });
        let resets_counter =
            (self.chip.throttle == ThrottleKind::Eitr1us && !self.cfg.eitr_cnt_ignr) || intel;
        let period_ps = super::on_clock_ps(interval, self.clock_error_ppb);
        let v = &mut self.vectors[vector as usize];
        v.reg = reg;
        v.interval = interval;
        v.period_ps = period_ps;
        if resets_counter && intel {
            let limit = Nanos(v.intrl_ps / 1000);
            v.next_allowed = v.last_assert.map_or(now, |t| (t + limit).max(now));
            v.spacing_floor = limit;
            v.timer.cancel();
            if v.pending() != 0 {
                Self::try_assert(v, vector, now, out);
            }
        } else if resets_counter {
            v.next_allowed = now;
            v.spacing_floor = Nanos::ZERO;
            v.timer.cancel();
            if v.pending() != 0 {
                Self::assert(v, vector, now, out);
            }
        }
    }
}
