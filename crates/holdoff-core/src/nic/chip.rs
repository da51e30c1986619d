//! NIC chip presets: what differs between e1000-family controllers.
//!
//! Models: the per-chip facts the simulator needs: which throttle register
//! and unit the chip has (ITR in 256 ns, 82574/82575 EITR in 256 ns,
//! 82576+ EITR in 1 us), which delay-timer registers (RDTR, RADV, TIDV,
//! TADV) and TX descriptor IDE bit it has (`RegisterMap`), what the chip
//! does with a write to the legacy ITR register at 0x000C4 when its
//! moderation register is EITR (`LegacyItr`), how many queues and MSI-X
//! vectors, the on-chip packet buffer sizes, DMA latency and the
//! chip's own descriptor-processing rate limits. The 10 GbE parts (82599,
//! X540, X550; Linux ixgbe) add an EITR whose interval field counts 2.048 us
//! (`ThrottleKind::Eitr2048ns`), ring limits of their own, the RSS
//! redirection table size and the fixed EITR of the non-queue vector. The
//! Intel 700 Series (X710, XL710; Linux i40e) and 800 Series (E810; Linux
//! ice) parts (`nic/intel_itr_chips.rs`) add an ITR counted in 2 us and a
//! per-vector interrupt rate limit (`ThrottleKind::Itr2us`).
//!
//! Simplifies: one fixed DMA latency per frame; rate limits as a minimum time
//! per descriptor.
//!
//! Sources: each preset field carries its source or is marked ASSUMPTION.
//! See `docs/models/nic.md`.

use crate::units::Nanos;
use serde::Serialize;

/// Whether a moderation register (or the TX descriptor IDE bit) exists on a
/// chip, as the model treats it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RegPresence {
    /// In the chip's register map; writes take effect.
    Present,
    /// Not in the chip's register map: writes are ignored (and recorded by
    /// the port as an `IgnoredWrite`).
    Absent,
    /// Not in the chip's datasheet register map, but the model keeps the
    /// 8254x behaviour as a what-if so that delay-timer experiments run on
    /// this chip: a non-zero write takes effect and is recorded as a note
    /// (the real chip would ignore it).
    WhatIf,
}

impl RegPresence {
    /// Whether the model holds and applies writes to this register.
    pub const fn modelled(self) -> bool {
        !matches!(self, RegPresence::Absent)
    }
}

/// The interrupt-moderation registers a chip implements (besides its throttle
/// register, given by `ChipProfile::throttle`: ITR at 0x000C4 in 256 ns, or
/// per-vector EITR at 0x01680 + 4n in 256 ns or 1 us).
///
/// Sources: 8254x SDM §13.4.30 (RDTR, 0x02820), §13.4.31 (RADV, 0x0282C,
/// 82540 and later), §13.4.41 (TIDV, 0x03820: applies to descriptors with
/// RS and IDE set), §13.4.44 (TADV, 0x0382C, 82540 and later); 82574 /
/// 82583V datasheet §9.2.6 (the same delay timers, TADV §9.2.6.12); I210
/// datasheet §7.1.2.2 and §8.10 (the receive queue registers: no RDTR or
/// RADV), §8.8.14 (EITR, the only moderation register), its transmit
/// register descriptions (no TIDV or TADV) and advanced TX descriptor (no
/// IDE bit; OpenBSD if_em.c: the 82575 class "lack the IDE bit").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RegisterMap {
    /// RX packet timer RDTR [1.024 us].
    pub rdtr: RegPresence,
    /// RX absolute timer RADV [1.024 us].
    pub radv: RegPresence,
    /// TX packet timer TIDV [1.024 us].
    pub tidv: RegPresence,
    /// TX absolute timer TADV [1.024 us].
    pub tadv: RegPresence,
    /// The TX descriptor format the drivers use has the IDE bit (TIDV/TADV
    /// act only on descriptors with IDE set).
    pub tx_ide: RegPresence,
}

impl RegisterMap {
    /// 8254x (82540 and later) and 82574: the full legacy delay-timer set.
    pub const E1000: RegisterMap = RegisterMap {
        rdtr: RegPresence::Present,
        radv: RegPresence::Present,
        tidv: RegPresence::Present,
        tadv: RegPresence::Present,
        tx_ide: RegPresence::Present,
    };

    /// igb class (82576, I350, I210, I211): moderation through EITR only.
    /// RADV, TIDV and TADV are absent (writes ignored and recorded): the I210
    /// transmit registers go from TDT straight to TXDCTL, and the advanced TX
    /// descriptor has no IDE bit (OpenBSD if_em.c: the 82575 class "lack the
    /// IDE bit"), so no TX delay timer can act. RDTR is not in the I210
    /// register map either, but the model keeps it as a what-if (ASSUMPTION:
    /// a RDTR write acts in INTx/MSI mode as on an 8254x; RDTR = 0, what
    /// every driver in the cases writes, is the same as no RDTR). For a TX
    /// delay what-if use a chip that has the timers (82574).
    pub const IGB: RegisterMap = RegisterMap {
        rdtr: RegPresence::WhatIf,
        radv: RegPresence::Absent,
        tidv: RegPresence::Absent,
        tadv: RegPresence::Absent,
        tx_ide: RegPresence::Absent,
    };

    /// ixgbe class (82599, X540, X550): moderation through EITR only; the
    /// 8254x delay timers and the IDE bit do not exist (writes ignored and
    /// recorded). Sources: Linux ixgbe programs no RDTR/RADV/TIDV/TADV
    /// (ixgbe_type.h has no such registers) and uses advanced descriptors.
    pub const IXGBE: RegisterMap = RegisterMap {
        rdtr: RegPresence::Absent,
        radv: RegPresence::Absent,
        tidv: RegPresence::Absent,
        tadv: RegPresence::Absent,
        tx_ide: RegPresence::Absent,
    };

    /// RADV and TADV both exist (what `ChipProfile::has_abs_timers` says).
    pub const fn has_abs_timers(&self) -> bool {
        self.radv.modelled() && self.tadv.modelled()
    }
}

/// What an EITR-class chip (igb class: 82576, I350, I210, I211) does with a
/// write to the legacy ITR register (0x000C4, 256 ns units) in INTx/MSI
/// mode, the register OpenBSD em(4) writes on every MAC
/// (`em_initialize_receive_unit()`: `ITR = DEFAULT_ITR`, 488 = 8000/s; EITR
/// is written only on the MSI-X path, which `em_enable_msix = 0` disables).
///
/// Sources: the I210 datasheet's table of interrupt modes names EITR[0] as
/// the moderation register in INTx/MSI mode and EITR resets to 0 (no
/// throttle); Linux igb programs `E1000_EITR(0)` in non-MSI-X mode and never
/// 0x000C4. Whether the I210 aliases 0x000C4 to EITR[0] is NOT settled by
/// those sources, so both behaviours run (scenario field `legacy_itr`). The
/// default, `Honoured`, is the one the OpenBSD report's observation supports:
/// about 8000 interrupts/s in `systat vm 1` on a fully loaded em(4)
/// interface (openbsd-tech, 2025-05-19, "em(4) TX interrupt mitigation"),
/// which an unthrottled EITR[0] with RDTR = 0 would far exceed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum LegacyItr {
    /// The chip's throttle register is ITR itself (8254x; the 82574 outside
    /// MSI-X mode): nothing to decide.
    Native,
    /// A 0x000C4 write sets the EITR[0] interval (held in 1 us, truncated)
    /// in INTx/MSI mode, as if the driver had written EITR[0].
    Honoured,
    /// A 0x000C4 write is dropped (recorded in the port's warnings): EITR[0]
    /// keeps its reset value 0, no throttle.
    Ignored,
}

impl LegacyItr {
    /// Scenario spelling (`legacy_itr = "honoured"`).
    pub const fn name(self) -> &'static str {
        match self {
            LegacyItr::Native => "native",
            LegacyItr::Honoured => "honoured",
            LegacyItr::Ignored => "ignored",
        }
    }
}

/// Which throttle register the chip has and its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ThrottleKind {
    /// One ITR register, 256 ns units (8254x, 8257x in legacy/MSI mode).
    Itr256ns,
    /// Per-vector EITR in 256 ns units (82574, 82575).
    Eitr256ns,
    /// Per-vector EITR, interval field bits 14:2 in 1 us (82576, 82580, I350, I210, I211).
    Eitr1us,
    /// Per-vector EITR of the 10 GbE parts (82599, X540, X550): a count of
    /// 256 ns whose bits 11:3 alone are held (`EITR_2048NS_MASK`), i.e. an
    /// interval in 2.048 us steps from 0 to 511 steps (1046.5 us); the
    /// driver writes `CNT_WDIS`, so a rewrite does not restart the running
    /// countdown (the new interval applies from the next one).
    Eitr2048ns,
    /// Intel 700 Series (X710/XL710, Linux i40e) and 800 Series (E810,
    /// Linux ice): a per-vector ITR whose interval field counts 2 us (the
    /// drivers write `usecs >> 1`: i40e `i40e_buildreg_itr`, ice
    /// `__ice_write_itr` with `ICE_ITR_GRAN_S` 1, "ITR granularity is
    /// always 2us"), plus a per-vector interrupt rate limit (INTRL: ice
    /// `GLINT_RATE`, i40e `PFINT_RATEN`) counted in 4 us (`ice_write_intrl`
    /// uses `ICE_INTRL_GRAN_ABOVE_25`; i40e `INTRL_REG_TO_USEC` is `<< 2`).
    /// `intrl_gran_us` is the part's rate-limit granularity as the driver
    /// reads it (`ice_get_itr_intrl_gran`: 4 us on 50G and faster parts,
    /// 8 us on 25G parts; i40e 4 us): `ethtool -C rx-usecs-high` below it
    /// (and above 0) is refused.
    Itr2us { intrl_gran_us: u32 },
    /// No interrupt throttle register: each RX and TX completion queue has
    /// a period and a completion count (`nic::cq`; NVIDIA ConnectX under
    /// mlx5, AWS ENA). The presets are in `nic/cq_chips.rs`.
    Cq(CqCaps),
}

/// What a completion-queue-moderated chip can hold (`ThrottleKind::Cq`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CqCaps {
    /// The CQ holds a completion count (`cq_max_count`).
    pub frames: bool,
    /// The CQE-based period mode exists (mlx5 capability
    /// `cq_period_start_from_cqe`).
    pub cqe_mode: bool,
    /// Largest period [us] (mlx5 `MLX5_MAX_CQ_PERIOD`).
    pub max_period_us: u32,
    /// Largest count (mlx5 `MLX5_MAX_CQ_COUNT`).
    pub max_count: u32,
    /// The unit the device counts the period in [us] (ENA
    /// `intr_delay_resolution`; 1 on mlx5).
    pub resolution_us: u32,
    /// Adaptive RX moderation on when the driver loads (ENA: chosen by the
    /// device per instance type; mlx5: on).
    pub default_adaptive_rx: bool,
}

/// Bits of a 256 ns count an 82599/X540/X550 EITR holds: Linux
/// `ixgbe_type.h` `IXGBE_EITR_ITR_INT_MASK` 0x00000FF8 ("82599 EITR is only
/// 12 bits, with the lower 3 always zero"); `ixgbe.h` `IXGBE_MAX_EITR`.
pub const EITR_2048NS_MASK: u32 = 0x0FF8;

/// Static facts about one controller model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChipProfile {
    /// Preset name as used in scenario files.
    pub name: &'static str,
    pub description: &'static str,
    /// Driver family that normally binds it: "lem", "em" or "igb" (informational).
    pub family: &'static str,
    pub throttle: ThrottleKind,
    /// RADV and TADV registers exist (82540 and later); equals
    /// `regs.has_abs_timers()` (checked by a test).
    pub has_abs_timers: bool,
    /// The delay-timer registers and the IDE bit (see `RegisterMap`).
    pub regs: RegisterMap,
    /// A write to the legacy ITR (0x000C4) on an EITR-class chip in
    /// INTx/MSI mode: the default; a scenario may pick the other behaviour
    /// (`legacy_itr`). `Native` exactly when the chip's throttle is not
    /// `Eitr1us` (checked by a test).
    pub legacy_itr: LegacyItr,
    /// MSI-X supported.
    pub msix: bool,
    /// Maximum RX/TX queue pairs (= MSI-X queue vectors).
    pub max_queues: u32,
    /// The port's link speed [Mbit/s] (informational: the scenario's link
    /// sets the rate the wire runs at).
    pub link_mbps: u32,
    /// Largest descriptor ring [descriptors].
    pub max_ring: u32,
    /// Smallest descriptor ring the driver accepts [descriptors] (the
    /// model's own floor, 8, for the 1 GbE parts).
    pub min_ring: u32,
    /// The driver's default RX and TX ring [descriptors]: what a scenario
    /// gets when it sets no `rx_ring` / `tx_ring`.
    pub default_ring: u32,
    /// RSS redirection table entries (RETA) [count]; 0: the drivers run
    /// one queue on this chip and the model has no RSS table for it.
    pub reta_entries: u32,
    /// The EITR value the driver writes to the non-queue ("other causes":
    /// link, mailbox, ECC) vector at setup [register value, a 256 ns
    /// count], if the chip has such a vector; it carries no queue causes,
    /// so it never moderates traffic (the model keeps it as a fact for the
    /// registers view and the docs; link events are not simulated).
    pub other_vector_eitr: Option<u32>,
    /// On-chip receive packet buffer [bytes]; frames beyond it are dropped (`rx_fifo_overrun`).
    pub rx_fifo_bytes: u32,
    /// Time from the last byte received to descriptor write-back in host memory [ns].
    pub rx_dma_ns: Nanos,
    /// Time from descriptor fetch to first byte on the wire [ns].
    pub tx_dma_ns: Nanos,
    /// Minimum time per received frame the descriptor engine needs [ns] (packet-rate limit).
    pub rx_desc_min_ns: Nanos,
    /// Minimum time per transmitted frame the descriptor engine needs [ns] (packet-rate limit).
    pub tx_desc_min_ns: Nanos,
}

/// Wire time of a minimum (64-B) frame at 1 Gbit/s: 84 B x 8 ns = 672 ns.
/// Used as "no chip limit beyond the wire" for packet-rate limits.
const GBE_MIN_FRAME_NS: Nanos = Nanos(672);

/// Largest legacy/advanced descriptor ring the e1000 (82544 and later), e1000e
/// and igb drivers accept [descriptors]; ixgbe too (`IXGBE_MAX_RXD`).
const MAX_RING_4096: u32 = 4096;

/// The e1000, e1000e and igb drivers' default ring [descriptors].
const DEFAULT_RING_256: u32 = 256;

/// Wire time of a minimum (64-B) frame at 10 Gbit/s: 84 B x 0.8 ns = 67.2 ns,
/// rounded down to whole ns (the model's time unit), so that a descriptor
/// engine given this limit never falls behind a line-rate stream.
pub(super) const TEN_GBE_MIN_FRAME_NS: Nanos = Nanos(67);

impl ChipProfile {
    /// Intel 82540EM: single-port PCI (32-bit, 33/66 MHz) GbE, lem/em.
    pub const I82540: ChipProfile = ChipProfile {
        name: "82540",
        description: "Intel 82540EM, PCI 32-bit 33/66 MHz, one ITR, INTx only",
        // FreeBSD: lem(4) since 2010 (em(4) before); Linux e1000.
        family: "lem",
        // 8254x SDM §13.4.18: ITR in 256 ns units, 82540 and later.
        throttle: ThrottleKind::Itr256ns,
        // 8254x SDM §13.4.31/§13.4.44: RADV and TADV "not on 82542/82543/82544".
        has_abs_timers: true,
        regs: RegisterMap::E1000,
        // 8254x SDM §13.4.18: ITR is the chip's own throttle register.
        legacy_itr: LegacyItr::Native,
        // 8254x SDM: PCI/PCI-X parts, INTx only (no MSI-X capability).
        msix: false,
        // 8254x SDM: one RX and one TX descriptor ring.
        max_queues: 1,
        // 1000BASE-T.
        link_mbps: 1000,
        // Linux e1000_param.c: RxDescriptors/TxDescriptors valid range
        // 80-4096 for 82544 and newer.
        max_ring: MAX_RING_4096,
        // The model's floor (the scenario reference); e1000 itself takes 80.
        min_ring: 8,
        // Linux e1000.h: E1000_DEFAULT_RXD / E1000_DEFAULT_TXD 256.
        default_ring: DEFAULT_RING_256,
        // No RSS on the 8254x.
        reta_entries: 0,
        // INTx only: one vector.
        other_vector_eitr: None,
        // Linux e1000_main.c e1000_reset(): default PBA = E1000_PBA_48K
        // ("48K for Rx, 16K for Tx") for 8254x other than 82547, 64 KB total.
        rx_fifo_bytes: 48 * 1024,
        // ASSUMPTION: ~2 us from last byte in to descriptor write-back on a
        // shared 32-bit PCI bus (arbitration + burst + write-back), slower
        // than the PCI-X and PCIe parts.
        rx_dma_ns: Nanos(2000),
        // ASSUMPTION: ~2 us for descriptor fetch + data read + FIFO threshold
        // on 32-bit PCI.
        tx_dma_ns: Nanos(2000),
        // ASSUMPTION: no documented limit found; wire rate for 64-B frames.
        // Bus bandwidth (133/266 MB/s shared) is not modelled.
        rx_desc_min_ns: GBE_MIN_FRAME_NS,
        // ASSUMPTION: no documented limit found; wire rate for 64-B frames.
        tx_desc_min_ns: GBE_MIN_FRAME_NS,
    };

    /// Intel 82546EB/GB: dual-port PCI-X (64-bit, up to 133 MHz) GbE, lem/em.
    /// The NIC of FreeBSD review D46768 (2024 AIM; `pciconf -lv` device
    /// 0x1010) and the likely class of the 2004 LKML "abysmal e1000
    /// performance (DITR)" hosts and the 2006 FreeBSD em fast-interrupt tests.
    pub const I82546: ChipProfile = ChipProfile {
        name: "82546",
        description: "Intel 82546EB/GB dual-port, PCI-X 64-bit up to 133 MHz, one ITR per port",
        // ASSUMPTION: ~1.5 us DMA + write-back through a PCI-X bridge (SDM
        // §13.3: register reads split; DMA bursts are long on PCI-X).
        rx_dma_ns: Nanos(1500),
        // ASSUMPTION: ~1.5 us descriptor fetch + data read on PCI-X.
        tx_dma_ns: Nanos(1500),
        // FreeBSD em(4) fast-interrupt/taskqueue commit text (sys/dev/em/if_em.c
        // revision 1.98, 2006): "the same NIC hardware seems unable to
        // transmit more than 800 kpps" -> 1e9 / 800_000 = 1250 ns per frame.
        // The freebsd-net post of 2006-10-20 suspects chip prefetching was
        // off in that test, so this is a configuration-dependent ceiling.
        // No documented RX packet-rate limit found: wire rate, as the 82540.
        tx_desc_min_ns: Nanos(1250),
        // Everything else as the 82540: the same 8254x register set (ITR in
        // 256 ns units, RADV/TADV, INTx only, one RX and one TX ring per
        // port; 8254x SDM §13.4.18-44), the same driver family (lem(4) since
        // 2010, em(4) in 2006; Linux e1000), ring limit (e1000_param.c: 80-4096
        // for 82544 and newer) and RX packet buffer (e1000_reset():
        // E1000_PBA_48K for standard frames; 40 KB with jumbo frames).
        ..ChipProfile::I82540
    };

    /// Intel 82574L: single-port PCIe 1.1 x1 GbE, em / e1000e.
    pub const I82574: ChipProfile = ChipProfile {
        name: "82574",
        description:
            "Intel 82574L, PCIe x1, EITR in 256 ns units, MSI-X (5 vectors), one queue pair used",
        // FreeBSD em(4); Linux e1000e.
        family: "em",
        // 82574 datasheet: EITR(n) in 256 ns units, like ITR (Linux e1000e
        // `e1000e_write_itr()` writes the same 256-ns value to EITR(n) in
        // MSI-X mode as to ITR otherwise).
        throttle: ThrottleKind::Eitr256ns,
        // 82574 keeps the 8254x delay timers (same register set as 82583V,
        // datasheet §9.2.6.12 TADV).
        has_abs_timers: true,
        regs: RegisterMap::E1000,
        // 82574 datasheet: ITR (0x000C4) is the throttle outside MSI-X mode.
        legacy_itr: LegacyItr::Native,
        // 82574 datasheet: MSI-X with 5 vectors (RX0, RX1, TX0, TX1, other);
        // Linux e1000e FLAG_HAS_MSIX for 82574.
        msix: true,
        // The drivers (Linux e1000e, FreeBSD em) run one RX/TX queue pair on
        // the 82574, although the chip has two of each.
        max_queues: 1,
        // 1000BASE-T.
        link_mbps: 1000,
        // Linux e1000e: E1000_MAX_RXD/E1000_MAX_TXD 4096.
        max_ring: MAX_RING_4096,
        // The model's floor; e1000e: E1000_MIN_RXD 64.
        min_ring: 8,
        // Linux e1000e.h: E1000_DEFAULT_RXD / E1000_DEFAULT_TXD 256.
        default_ring: DEFAULT_RING_256,
        // The drivers run one queue pair: no RSS table in the model.
        reta_entries: 0,
        // ASSUMPTION: the 82574's "other" vector (LSC) is not modelled: the
        // model has no link events; its EITR is left out.
        other_vector_eitr: None,
        // Linux e1000e 82571.c: e1000_82574_info.pba = 32 (KB for RX; older
        // e1000e releases used 20).
        rx_fifo_bytes: 32 * 1024,
        // ASSUMPTION: ~1 us on PCIe (a PCIe register round trip is "usually
        // less than 1 us": "Motivating future interconnects: a differential
        // measurement analysis of PCI latency", ANCS 2009).
        rx_dma_ns: Nanos(1000),
        // ASSUMPTION: ~1 us descriptor + data read round trip on PCIe.
        tx_dma_ns: Nanos(1000),
        // ASSUMPTION: no documented limit found; wire rate for 64-B frames.
        rx_desc_min_ns: GBE_MIN_FRAME_NS,
        // ASSUMPTION: no documented limit found; wire rate for 64-B frames.
        tx_desc_min_ns: GBE_MIN_FRAME_NS,
    };

    /// Intel 82576: dual-port PCIe 2.0 x4 GbE, igb.
    pub const I82576: ChipProfile = ChipProfile {
        name: "82576",
        description: "Intel 82576 dual-port, PCIe 2.0, EITR in 1 us, MSI-X, 16 queues",
        // FreeBSD igb (now part of em/iflib); Linux igb.
        family: "igb",
        // 82576/I350/I210 EITR interval bits 14:2 in 1 us (I210 datasheet
        // §8.8.14; Linux igb `igb_write_itr()` writes `itr_val & 0x7FFC`).
        throttle: ThrottleKind::Eitr1us,
        // ASSUMPTION: treated as absent: igb drivers moderate only through
        // EITR, and the advanced TX descriptor has no IDE bit (OpenBSD
        // if_em.c: 82575/6 "lack the IDE bit"), so TIDV/TADV cannot act.
        // OpenBSD if_em.c `em_initialize_transmit_unit()` sets IDE only on
        // pre-82575 MACs.
        has_abs_timers: false,
        regs: RegisterMap::IGB,
        // ASSUMPTION: as the I210 (see `LegacyItr`); no driver of this
        // chip in the cases writes 0x000C4.
        legacy_itr: LegacyItr::Honoured,
        // 82576 datasheet; Linux igb uses MSI-X on it.
        msix: true,
        // 82576 datasheet: 16 RX/16 TX queues. Note: Linux igb caps RSS at
        // IGB_MAX_RX_QUEUES = 8 (igb_get_max_rss_queues).
        max_queues: 16,
        // 1000BASE-T / SerDes.
        link_mbps: 1000,
        // Linux igb: IGB_MAX_RXD/IGB_MAX_TXD 4096.
        max_ring: MAX_RING_4096,
        // The model's floor; igb: IGB_MIN_RXD 64.
        min_ring: 8,
        // Linux igb.h: IGB_DEFAULT_RXD / IGB_DEFAULT_TXD 256.
        default_ring: DEFAULT_RING_256,
        // Linux igb.h: IGB_RETA_SIZE 128.
        reta_entries: 128,
        // ASSUMPTION: igb's other-cause vector (link) is not modelled (no
        // link events in a run).
        other_vector_eitr: None,
        // Linux igb igb_reset() (older releases): pba = E1000_PBA_64K for
        // 82576; newer releases read the same default from RXPBS.
        rx_fifo_bytes: 64 * 1024,
        // ASSUMPTION: the PCIe DMA and descriptor-rate figures of the 82574
        // (~1 us each way; no documented packet-rate limit: wire rate).
        rx_dma_ns: ChipProfile::I82574.rx_dma_ns,
        tx_dma_ns: ChipProfile::I82574.tx_dma_ns,
        rx_desc_min_ns: ChipProfile::I82574.rx_desc_min_ns,
        tx_desc_min_ns: ChipProfile::I82574.tx_desc_min_ns,
    };

    /// Intel I350: 2/4-port PCIe 2.1 x4 GbE, igb (Emulab d430 class hosts).
    pub const I350: ChipProfile = ChipProfile {
        name: "i350",
        description: "Intel I350 2/4-port, PCIe 2.1, EITR in 1 us, MSI-X, 8 queues per port",
        // Linux igb: I350 falls through to IGB_MAX_RX_QUEUES = 8 RSS queues.
        max_queues: 8,
        // ASSUMPTION: 36 KB, the first entry of the 82580/I350 RXPBS size
        // encoding (e1000_82580_rxpbs_table, Linux igb / FreeBSD e1000);
        // the per-port default depends on the number of ports (FreeBSD igb
        // comment) and was not found in a datasheet.
        rx_fifo_bytes: 36 * 1024,
        // Everything else as the 82576: FreeBSD igb / Linux igb; EITR in 1 us
        // (I350 datasheet, as the I210 datasheet §8.8.14); no IDE in advanced
        // TX descriptors (OpenBSD if_em.c `em_initialize_transmit_unit()`);
        // legacy ITR as the I210 (see `LegacyItr`); MSI-X; IGB_MAX_RXD 4096;
        // the PCIe figures.
        ..ChipProfile::I82576
    };

    /// Intel I210: single-port PCIe 2.1 x1 GbE, igb (APU2 c4/d4/e4, the host
    /// of the openbsd-tech post "em(4) TX interrupt mitigation", 2025-05-19).
    pub const I210: ChipProfile = ChipProfile {
        name: "i210",
        description: "Intel I210, PCIe 2.1 x1, EITR in 1 us, MSI-X, 4 queues",
        // NOT SETTLED by the datasheet or the drivers (see `LegacyItr`);
        // default from the ~8000 interrupts/s under OpenBSD em(4) in the
        // openbsd-tech post "em(4) TX interrupt mitigation" (2025-05-19),
        // which writes only 0x000C4. `legacy_itr = "ignored"` runs the other
        // reading.
        legacy_itr: LegacyItr::Honoured,
        // Linux igb: IGB_MAX_RX_QUEUES_82575 = 4 for the I210.
        max_queues: 4,
        // Linux igb: I210_RXPBSIZE_DEFAULT 0xA2 = 34 KB for host RX (+2 KB to
        // the BMC), of the 36 KB on-chip RX buffer the I210 datasheet
        // §7.1.3.2 gives; igb_reset() uses E1000_PBA_34K for I210/I211.
        rx_fifo_bytes: 34 * 1024,
        // Everything else as the 82576: FreeBSD igb, Linux igb (OpenBSD drives
        // it with em(4), em_i210); EITR in 1 us (I210 datasheet §7.3,
        // §8.8.14); no IDE bit (OpenBSD if_em.c does not set IDE on em_i210:
        // "82575/6 need to enable the TX queue and lack the IDE bit");
        // MSI-X (EITR0..EITR4 at 0x01680 + 4n: five vectors, §8.8.14);
        // IGB_MAX_RXD 4096; the PCIe figures (x1 link).
        ..ChipProfile::I82576
    };

    /// Intel I211: single-port PCIe 2.1 x1 GbE, igb (APU2 c0/c2/d2/e2; see
    /// the I210).
    pub const I211: ChipProfile = ChipProfile {
        name: "i211",
        description: "Intel I211, PCIe 2.1 x1, EITR in 1 us, MSI-X, 2 queues",
        // Linux igb: IGB_MAX_RX_QUEUES_I211 = 2 (the datasheet's figure of 4
        // is reported wrong by the teklager.se APU2 pfSense tuning article).
        max_queues: 2,
        // Everything else as the I210: the I211 shares the I210 register set
        // and MSI-X interrupt block (OpenBSD if_em_hw.c maps it to em_i210);
        // igb_reset() uses E1000_PBA_34K for I210 and I211 alike.
        ..ChipProfile::I210
    };
    /// Intel 82599 (82599ES/EB): dual-port 10 GbE, PCIe 2.0 x8, Linux ixgbe.
    pub const I82599: ChipProfile = ChipProfile {
        name: "82599",
        description:
            "Intel 82599 10 GbE, PCIe 2.0 x8, EITR in 2.048 us (CNT_WDIS), MSI-X, 16 RSS queues",
        family: "ixgbe",
        // Linux ixgbe_type.h: IXGBE_EITR_ITR_INT_MASK 0x00000FF8 (interval
        // bits 11:3 of a 256 ns count); ixgbe_main.c ixgbe_write_eitr() sets
        // IXGBE_EITR_CNT_WDIS on the 82599, X540 and X550 "to not clear the
        // timer bits and cause an immediate assertion of the interrupt".
        throttle: ThrottleKind::Eitr2048ns,
        // The 82599 has no 8254x delay timers: the advanced descriptors and
        // EITR are its moderation (ixgbe programs nothing else).
        has_abs_timers: false,
        regs: RegisterMap::IXGBE,
        // EITR is the chip's own throttle in every interrupt mode (ixgbe
        // writes EITR(0) in MSI/INTx mode too): nothing legacy to decide.
        legacy_itr: LegacyItr::Native,
        msix: true,
        // Linux ixgbe.h: IXGBE_MAX_RSS_INDICES 16 (more queues only through
        // Flow Director, which the model does not have).
        max_queues: 16,
        link_mbps: 10_000,
        // Linux ixgbe.h: IXGBE_MAX_RXD / IXGBE_MAX_TXD 4096.
        max_ring: MAX_RING_4096,
        // Linux ixgbe.h: IXGBE_MIN_RXD / IXGBE_MIN_TXD 64.
        min_ring: 64,
        // Linux ixgbe.h: IXGBE_DEFAULT_RXD / IXGBE_DEFAULT_TXD 512.
        default_ring: 512,
        // Linux ixgbe_main.c ixgbe_rss_indir_tbl_entries(): 128 before the
        // X550.
        reta_entries: 128,
        // Linux ixgbe_main.c ixgbe_configure_msix(): EITR(other) = 1950.
        other_vector_eitr: Some(IXGBE_OTHER_EITR),
        // Linux ixgbe_82599.c: IXGBE_82599_RX_PB_SIZE 512 [KB], all of it
        // to one traffic class without DCB (ixgbe_set_rxpba, equal
        // strategy). The Flow Director headroom taken from it is not
        // modelled.
        rx_fifo_bytes: 512 * 1024,
        // ASSUMPTION: ~1 us to descriptor write-back on PCIe, as the 82574.
        rx_dma_ns: Nanos(1000),
        // ASSUMPTION: ~1 us descriptor + data read round trip on PCIe.
        tx_dma_ns: Nanos(1000),
        // ASSUMPTION: no documented per-frame limit found; the wire rate of
        // 64-B frames at 10 Gbit/s (67.2 ns, rounded down).
        rx_desc_min_ns: TEN_GBE_MIN_FRAME_NS,
        tx_desc_min_ns: TEN_GBE_MIN_FRAME_NS,
    };

    /// Intel X540: dual-port 10GBASE-T, PCIe 2.1 x8, Linux ixgbe.
    pub const X540: ChipProfile = ChipProfile {
        name: "x540",
        description:
            "Intel X540 10GBASE-T, PCIe 2.1 x8, EITR in 2.048 us (CNT_WDIS), MSI-X, 16 RSS queues",
        // Linux ixgbe_x540.c: IXGBE_X540_RX_PB_SIZE 384 [KB].
        rx_fifo_bytes: 384 * 1024,
        // Everything else as the 82599: the same EITR handling
        // (ixgbe_write_eitr), IXGBE_MAX_RSS_INDICES 16, ring limits and
        // default (ixgbe.h), 128 RETA entries, EITR(other) = 1950, and the
        // assumed PCIe figures.
        ..ChipProfile::I82599
    };

    /// Intel X550 (X550-T2/T1): 10GBASE-T, PCIe 3.0 x4, Linux ixgbe.
    pub const X550: ChipProfile = ChipProfile {
        name: "x550",
        description:
            "Intel X550 10GBASE-T, PCIe 3.0 x4, EITR in 2.048 us (CNT_WDIS), MSI-X, 63 RSS queues",
        // Linux ixgbe.h: IXGBE_MAX_RSS_INDICES_X550 63.
        max_queues: 63,
        // Linux ixgbe_main.c ixgbe_rss_indir_tbl_entries(): 512 on the X550
        // and later (without SR-IOV).
        reta_entries: 512,
        // Linux ixgbe_x550.c takes its invariants from
        // ixgbe_get_invariants_X540(): the X540's 384 KB.
        rx_fifo_bytes: 384 * 1024,
        // Everything else as the 82599 (ixgbe_write_eitr sets CNT_WDIS on
        // the X550 family as well).
        ..ChipProfile::I82599
    };
}

/// The EITR value Linux ixgbe writes to the non-queue vector
/// (`ixgbe_configure_msix()`: `IXGBE_WRITE_REG(.., IXGBE_EITR(v_idx), 1950)`):
/// the chip holds 1950 & 0xFF8 = 1944 (243 steps of 2.048 us = 497.7 us).
pub const IXGBE_OTHER_EITR: u32 = 1950;

/// All named presets, in a stable order.
pub fn presets() -> Vec<&'static ChipProfile> {
    vec![
        &ChipProfile::I82540,
        &ChipProfile::I82546,
        &ChipProfile::I82574,
        &ChipProfile::I82576,
        &ChipProfile::I350,
        &ChipProfile::I210,
        &ChipProfile::I211,
        &ChipProfile::I82599,
        &ChipProfile::X540,
        &ChipProfile::X550,
        &ChipProfile::E810_C,
        &ChipProfile::E810_XXV,
        &ChipProfile::X710,
        &ChipProfile::XL710,
        &ChipProfile::CX5,
        &ChipProfile::CX6,
        &ChipProfile::ENA,
    ]
}

/// Look a preset up by name.
pub fn by_name(name: &str) -> Option<&'static ChipProfile> {
    presets().into_iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{wire_bytes, MIN_FRAME_BYTES};

    /// Line time of a minimum frame at 1 Gbit/s [ns] (8 ns per byte).
    fn min_frame_wire_ns() -> u64 {
        wire_bytes(MIN_FRAME_BYTES) as u64 * 8
    }

    #[test]
    fn names_are_unique_and_found_by_name() {
        // Scenario files refer to chips by name; a duplicate would shadow one.
        let all = presets();
        assert_eq!(all.len(), 17);
        for (i, c) in all.iter().enumerate() {
            assert!(
                all[i + 1..].iter().all(|d| d.name != c.name),
                "duplicate {}",
                c.name
            );
            assert_eq!(by_name(c.name), Some(*c));
        }
        for name in [
            "82540", "82546", "82574", "82576", "i350", "i210", "i211", "82599", "x540", "x550",
            "e810-c", "e810-xxv", "x710", "xl710", "cx5", "cx6", "ena",
        ] {
            assert!(by_name(name).is_some(), "{name} missing");
        }
        assert_eq!(by_name("82598"), None);
    }

    #[test]
    fn the_82546_transmits_at_most_800_kpps() {
        // FreeBSD em commit text (2006): the NIC "seems unable to transmit
        // more than 800 kpps"; the preset must encode exactly that rate.
        let c = by_name("82546").unwrap();
        assert_eq!(1_000_000_000 / c.tx_desc_min_ns.as_ns(), 800_000);
    }

    #[test]
    fn rate_limits_are_never_faster_than_the_wire() {
        // A GbE chip cannot be specified faster than 1,488,095 frames/s of
        // 64-B frames; a smaller value would mean a unit slip (e.g. 67 ns on
        // a GbE part). A 10 GbE part's floor is a tenth of that (67.2 ns,
        // 14,880,952 frames/s), rounded down to whole ns.
        assert_eq!(min_frame_wire_ns(), GBE_MIN_FRAME_NS.as_ns());
        for c in presets() {
            let floor = min_frame_wire_ns() * 1000 / c.link_mbps as u64;
            assert!(c.rx_desc_min_ns.as_ns() >= floor, "{}", c.name);
            assert!(c.tx_desc_min_ns.as_ns() >= floor, "{}", c.name);
            // ... and never slower than the wire at the chip's own speed:
            // the 10 GbE parts must take 64-B frames at line rate.
            if c.link_mbps > 1000 {
                assert!(
                    c.rx_desc_min_ns.as_ns() * c.link_mbps as u64 <= 672_000,
                    "{}",
                    c.name
                );
            }
        }
    }

    #[test]
    fn ten_gbe_parts_carry_the_ixgbe_limits() {
        // Linux ixgbe.h: rings 64 to 4096 descriptors, 512 by default;
        // IXGBE_MAX_RSS_INDICES 16, IXGBE_MAX_RSS_INDICES_X550 63;
        // ixgbe_rss_indir_tbl_entries(): 128, 512 on the X550; the other
        // vector's EITR 1950 held as 1944 (bits 11:3). The 1 GbE parts keep
        // the e1000/igb default ring of 256.
        type Row = (&'static str, u32, u32, u32, u32);
        let rows: [Row; 3] = [
            ("82599", 16, 128, 512, 512 * 1024),
            ("x540", 16, 128, 512, 384 * 1024),
            ("x550", 63, 512, 512, 384 * 1024),
        ];
        for (name, queues, reta, ring, pb) in rows {
            let c = by_name(name).unwrap();
            assert_eq!(
                (
                    c.max_queues,
                    c.reta_entries,
                    c.default_ring,
                    c.rx_fifo_bytes
                ),
                (queues, reta, ring, pb),
                "{name}"
            );
            assert_eq!((c.min_ring, c.max_ring, c.link_mbps), (64, 4096, 10_000));
            assert_eq!(c.throttle, ThrottleKind::Eitr2048ns);
            assert_eq!(
                c.other_vector_eitr.map(|v| v & EITR_2048NS_MASK),
                Some(1944)
            );
        }
        let gbe = |c: &&ChipProfile| matches!(c.family, "lem" | "em" | "igb");
        for c in presets().into_iter().filter(gbe) {
            assert_eq!((c.default_ring, c.min_ring), (256, 8), "{}", c.name);
            assert_eq!(c.link_mbps, 1000, "{}", c.name);
        }
    }

    #[test]
    fn throttle_unit_matches_driver_family() {
        // I210 datasheet §8.8.14, 8254x SDM §13.4.18: the igb parts (82576,
        // I350, I210, I211) count
        // EITR in 1 us; the lem/em parts count ITR/EITR in 256 ns.
        for c in presets() {
            match c.family {
                "igb" => assert_eq!(c.throttle, ThrottleKind::Eitr1us, "{}", c.name),
                "lem" => assert_eq!(c.throttle, ThrottleKind::Itr256ns, "{}", c.name),
                "em" => assert_ne!(c.throttle, ThrottleKind::Eitr1us, "{}", c.name),
                "ixgbe" => assert_eq!(c.throttle, ThrottleKind::Eitr2048ns, "{}", c.name),
                "ice" | "i40e" => {
                    assert!(
                        matches!(c.throttle, ThrottleKind::Itr2us { .. }),
                        "{}",
                        c.name
                    )
                }
                // Moderation per completion queue (nic::cq).
                "mlx5" | "ena" => assert!(matches!(c.throttle, ThrottleKind::Cq(_)), "{}", c.name),
                other => panic!("{}: unknown family {other}", c.name),
            }
        }
    }

    #[test]
    fn queues_need_msix() {
        // Without MSI-X there is one interrupt and the drivers run one queue
        // pair; more than one queue implies per-queue vectors.
        for c in presets() {
            assert!(c.max_queues >= 1, "{}", c.name);
            if !c.msix {
                assert_eq!(c.max_queues, 1, "{}", c.name);
            }
        }
    }

    #[test]
    fn buffers_and_rings_are_hardware_shaped() {
        // PBA/RXPBS are programmed in 1 KB units; the RX buffer must hold
        // at least two 1522-B frames (the drivers put the flow-control
        // high-water mark one full frame below its top). Ring lengths are
        // multiples of 8 descriptors (RDLEN/TDLEN are 128-byte multiples).
        for c in presets() {
            assert_eq!(c.rx_fifo_bytes % 1024, 0, "{}", c.name);
            assert!(c.rx_fifo_bytes >= 2 * 1522, "{}", c.name);
            assert_eq!(c.max_ring % 8, 0, "{}", c.name);
            assert_eq!(c.min_ring % 8, 0, "{}", c.name);
            assert_eq!(c.default_ring % 8, 0, "{}", c.name);
            assert!(
                c.min_ring <= c.default_ring && c.default_ring <= c.max_ring,
                "{}: the default ring is within the limits",
                c.name
            );
        }
    }

    #[test]
    fn dma_latency_is_a_few_microseconds_at_most() {
        // The fixed DMA latency stands for a bus round trip plus a burst; it
        // must stay well below one full-size frame time (12.3 us), otherwise
        // it would dominate the wire and hide the moderation timers.
        for c in presets() {
            assert!(
                c.rx_dma_ns > Nanos::ZERO && c.rx_dma_ns < Nanos::from_us(5),
                "{}",
                c.name
            );
            assert!(
                c.tx_dma_ns > Nanos::ZERO && c.tx_dma_ns < Nanos::from_us(5),
                "{}",
                c.name
            );
        }
    }
}
