//! Chip presets of the Intel 700 Series (X710 10 GbE, XL710 40 GbE; Linux
//! i40e) and 800 Series (E810-XXV 25 GbE, E810-C 100 GbE; Linux ice).
//!
//! Models: what these parts share and how they differ for moderation: a
//! per-vector ITR programmed in 2 us, a per-vector interrupt rate limit
//! (INTRL: ice `GLINT_RATE`, i40e `PFINT_RATEN`) programmed in 4 us whose
//! granularity the ice driver reads per part (`ice_get_itr_intrl_gran`),
//! the drivers' ring limits and defaults, and the link speed.
//!
//! Simplifies: no 8254x delay timers (the drivers program none); a part's
//! second ITR index (TX, index 1) is not a separate throttle in the model
//! (see `docs/models/ice.md`); packet buffer, DMA latency and the queue
//! bound are assumptions (marked).
//!
//! Units: rings [descriptors], buffers [bytes], times [ns], link [Mbit/s].
//!
//! Sources: torvalds/linux `drivers/net/ethernet/intel/ice/` (`ice.h`,
//! `ice_common.c` `ice_get_itr_intrl_gran`, `ice_lib.c` `ice_write_intrl`,
//! `__ice_write_itr`, `ice_txrx.h`) and `drivers/net/ethernet/intel/i40e/`
//! (`i40e.h`, `i40e_txrx.h`); each field says which, or ASSUMPTION.

use super::chip::{ChipProfile, LegacyItr, RegisterMap, ThrottleKind, TEN_GBE_MIN_FRAME_NS};
use crate::units::Nanos;

/// Wire time of a minimum (64-B) frame at 100 Gbit/s: 84 B x 0.08 ns =
/// 6.72 ns, rounded down to whole ns (the 25/40G parts take the same floor:
/// the descriptor engine is assumed never slower than the fastest wire of
/// the family).
const HUNDRED_GBE_MIN_FRAME_NS: Nanos = Nanos(6);

impl ChipProfile {
    /// Intel E810-C (E810-CQDA1/CQDA2): 100 GbE, PCIe 4.0 x16, Linux ice.
    pub const E810_C: ChipProfile = ChipProfile {
        name: "e810-c",
        description: "Intel E810-C 100 GbE, PCIe 4.0 x16, ITR in 2 us + INTRL in 4 us, MSI-X",
        family: "ice",
        // ice_common.c ice_get_itr_intrl_gran(): a part whose maximum
        // aggregate bandwidth (GL_PWR_MODE_CTL) is 50G or more gets
        // ICE_INTRL_GRAN_ABOVE_25 (4 us) and ICE_ITR_GRAN_ABOVE_25 (2 us).
        throttle: ThrottleKind::Itr2us { intrl_gran_us: 4 },
        // No 8254x delay timers: ITR and INTRL are the moderation registers
        // (ice programs nothing else).
        has_abs_timers: false,
        regs: RegisterMap::IXGBE,
        legacy_itr: LegacyItr::Native,
        msix: true,
        // ASSUMPTION: the model's RSS queue ceiling for the PF; the ice PF
        // takes up to one queue pair per online CPU (ice_vsi_alloc_arrays;
        // ethtool -L combined), far beyond the hosts modelled. 64 keeps the
        // scenario's per-queue arrays bounded.
        max_queues: 64,
        link_mbps: 100_000,
        // ice.h: ICE_MAX_NUM_DESC 8160 (ICE_MAX_NUM_DESC_E810),
        // ICE_MIN_NUM_DESC 64, ICE_DFLT_NUM_RX_DESC 2048 (TX 256: the
        // model uses one default for both rings, the RX value).
        max_ring: 8160,
        min_ring: 64,
        default_ring: 2048,
        // ASSUMPTION: 512 entries, the model's RETA bound; the ice PF LUT is
        // 2048 entries (ICE_LUT_PF_SIZE) spread over the same queues, which
        // gives the same queue shares for the queue counts modelled.
        reta_entries: 512,
        other_vector_eitr: None,
        // ASSUMPTION: 2 MB of receive packet buffer per port (no driver
        // constant found; ice leaves the packet buffer to firmware).
        rx_fifo_bytes: 2048 * 1024,
        // ASSUMPTION: ~1 us to descriptor write-back on PCIe, as the 10 GbE
        // parts.
        rx_dma_ns: Nanos(1000),
        tx_dma_ns: Nanos(1000),
        // ASSUMPTION: no documented per-frame limit found; the wire rate of
        // 64-B frames at 100 Gbit/s (6.72 ns, rounded down).
        rx_desc_min_ns: HUNDRED_GBE_MIN_FRAME_NS,
        tx_desc_min_ns: HUNDRED_GBE_MIN_FRAME_NS,
    };

    /// Intel E810-XXV (E810-XXVDA2/XXVDA4): 25 GbE, Linux ice.
    pub const E810_XXV: ChipProfile = ChipProfile {
        name: "e810-xxv",
        description:
            "Intel E810-XXV 25 GbE, PCIe 4.0 x8, ITR in 2 us + INTRL (8 us granularity), MSI-X",
        // ice_get_itr_intrl_gran(): a 25G part (ICE_MAX_AGG_BW_25G) gets
        // ICE_INTRL_GRAN_MAX_25 (8 us; ITR_GRAN_MAX_25 4 us). The driver
        // still writes ITR in 2 us (ICE_ITR_GRAN_S) and INTRL in 4 us
        // (ice_write_intrl), so the model holds those units; the 8 us
        // granularity shows as ice_set_rc_coalesce refusing rx-usecs-high
        // 1..7.
        throttle: ThrottleKind::Itr2us { intrl_gran_us: 8 },
        link_mbps: 25_000,
        // ASSUMPTION: the wire rate of 64-B frames at 25 Gbit/s (26.88 ns,
        // rounded down), as for every part without a documented limit.
        rx_desc_min_ns: Nanos(26),
        tx_desc_min_ns: Nanos(26),
        // Everything else as the E810-C (ice.h rings; the assumed figures).
        ..ChipProfile::E810_C
    };

    /// Intel X710 (X710-DA2/DA4): 10 GbE, PCIe 3.0 x8, Linux i40e.
    pub const X710: ChipProfile = ChipProfile {
        name: "x710",
        description: "Intel X710 10 GbE, PCIe 3.0 x8, ITR in 2 us + INTRL in 4 us, MSI-X",
        family: "i40e",
        // i40e_txrx.h: I40E_MIN_ITR 2 ("reg uses 2 usec resolution");
        // I40E_MAX_INTRL 0x3B ("reg uses 4 usec resolution"),
        // INTRL_REG_TO_USEC = << 2.
        throttle: ThrottleKind::Itr2us { intrl_gran_us: 4 },
        // i40e.h: I40E_MAX_NUM_DESCRIPTORS_XL710 8160 (the X710 and XL710
        // are both I40E_MAC_XL710), I40E_MIN_NUM_DESCRIPTORS 64,
        // I40E_DEFAULT_NUM_DESCRIPTORS 512.
        max_ring: 8160,
        min_ring: 64,
        default_ring: 512,
        link_mbps: 10_000,
        rx_desc_min_ns: TEN_GBE_MIN_FRAME_NS,
        tx_desc_min_ns: TEN_GBE_MIN_FRAME_NS,
        // ASSUMPTION: 1 MB receive packet buffer per port (not found in the
        // driver; the firmware owns the buffer split).
        rx_fifo_bytes: 1024 * 1024,
        // i40e: the PF RSS table has 512 entries (hw.func_caps.rss_table_size
        // on the XL710 class).
        reta_entries: 512,
        // Everything else as the E810-C (ITR/INTRL vectors, no delay
        // timers, the assumed PCIe figures and queue bound).
        ..ChipProfile::E810_C
    };

    /// Intel XL710 (XL710-QDA1/QDA2): 40 GbE, PCIe 3.0 x8, Linux i40e.
    pub const XL710: ChipProfile = ChipProfile {
        name: "xl710",
        description: "Intel XL710 40 GbE, PCIe 3.0 x8, ITR in 2 us + INTRL in 4 us, MSI-X",
        link_mbps: 40_000,
        // ASSUMPTION: the wire rate of 64-B frames at 40 Gbit/s (16.8 ns,
        // rounded down).
        rx_desc_min_ns: Nanos(16),
        tx_desc_min_ns: Nanos(16),
        // Everything else as the X710 (same MAC type, I40E_MAC_XL710).
        ..ChipProfile::X710
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::chip::by_name;

    #[test]
    fn intel_700_800_parts_carry_their_driver_limits() {
        // ice.h: rings 64..8160, RX default 2048; i40e.h: 64..8160 on the
        // XL710 MAC type, default 512. ice_get_itr_intrl_gran(): INTRL
        // granularity 4 us on 50G+ parts, 8 us on 25G parts; i40e 4 us.
        type Row = (&'static str, u32, u32, u32);
        let rows: [Row; 4] = [
            ("e810-c", 100_000, 2048, 4),
            ("e810-xxv", 25_000, 2048, 8),
            ("x710", 10_000, 512, 4),
            ("xl710", 40_000, 512, 4),
        ];
        for (name, mbps, ring, gran) in rows {
            let c = by_name(name).unwrap();
            assert_eq!(
                (c.link_mbps, c.default_ring, c.min_ring, c.max_ring),
                (mbps, ring, 64, 8160),
                "{name}"
            );
            assert_eq!(
                c.throttle,
                ThrottleKind::Itr2us {
                    intrl_gran_us: gran
                },
                "{name}"
            );
            assert!(!c.has_abs_timers && c.msix, "{name}");
        }
    }
}
