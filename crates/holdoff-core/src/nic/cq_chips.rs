//! Chip presets of the NICs that moderate per completion queue
//! (`ThrottleKind::Cq`, `nic::cq`): NVIDIA ConnectX-5 (25 GbE) and
//! ConnectX-6 (100 GbE) under Linux mlx5, and AWS ENA.
//!
//! Models: the CQ moderation limits (period, count, CQE-based mode, the
//! device's delay unit), rings, queues and RSS table of each driver. The
//! ENA preset is a c5n-class instance (25 Gb/s "up to"; the scenario's link
//! sets the rate actually used, so a larger instance is a link override).
//!
//! Simplifies: no packet-rate limit below the wire (ConnectX-5/6 are
//! specified far above their line rates in 64-B frames; ENA's per-instance
//! packet-per-second allowance is not modelled); one fixed DMA latency.
//!
//! Sources: Linux `drivers/net/ethernet/mellanox/mlx5/core/en.h`
//! (`MLX5E_PARAMS_{MINIMUM,DEFAULT,MAXIMUM}_LOG_{SQ,RQ}_SIZE` 0x6/0xa/0xd),
//! `include/linux/mlx5/cq.h` (`MLX5_MAX_CQ_PERIOD` (1 << 12) - 1,
//! `MLX5_MAX_CQ_COUNT` (1 << 16) - 1), `en_ethtool.c`
//! (`mlx5e_ethtool_set_coalesce`); `drivers/net/ethernet/amazon/ena/`
//! `ena_netdev.h` (`ENA_DEFAULT_RING_SIZE` 1024, `ENA_MIN_RING_SIZE` 256,
//! `ENA_INTR_INITIAL_TX_INTERVAL_USECS` 64), `ena_com.h`
//! (`ENA_DEFAULT_INTR_DELAY_RESOLUTION` 1, `ENA_RX_RSS_TABLE_LOG_SIZE` 7),
//! `ena_eth_io_defs.h` (15-bit RX/TX delay fields of the interrupt
//! register); amzn/amzn-drivers `ENA_Linux_Best_Practices.rst` (rings up
//! to 16K; RX moderation off or adaptive by instance type). Units as in
//! `nic::chip`.

use super::chip::{ChipProfile, CqCaps, LegacyItr, RegPresence, RegisterMap, ThrottleKind};
use crate::units::Nanos;

impl RegisterMap {
    /// CQ-moderated chips: none of the 8254x delay timers.
    pub const CQ: RegisterMap = RegisterMap {
        rdtr: RegPresence::Absent,
        radv: RegPresence::Absent,
        tidv: RegPresence::Absent,
        tadv: RegPresence::Absent,
        tx_ide: RegPresence::Absent,
    };
}

/// mlx5 CQ moderation: period 0..4095 us, count 0..65535, both period
/// modes (`cq_period_start_from_cqe` on ConnectX-5 and later), adaptive
/// RX on (`params->rx_dim_enabled = MLX5_CAP_GEN(mdev, cq_moderation)`).
const MLX5_CQ: CqCaps = CqCaps {
    frames: true,
    cqe_mode: true,
    max_period_us: (1 << 12) - 1,
    max_count: (1 << 16) - 1,
    resolution_us: 1,
    default_adaptive_rx: true,
};

impl ChipProfile {
    /// NVIDIA (Mellanox) ConnectX-5 EN, 25 GbE, Linux mlx5.
    pub const CX5: ChipProfile = ChipProfile {
        name: "cx5",
        description: "NVIDIA ConnectX-5, 25 GbE, PCIe 3.0 x8, CQ moderation (usecs + frames, EQE/CQE period modes), mlx5",
        family: "mlx5",
        throttle: ThrottleKind::Cq(MLX5_CQ),
        has_abs_timers: false,
        regs: RegisterMap::CQ,
        // No legacy ITR: moderation is per CQ in every mode.
        legacy_itr: LegacyItr::Native,
        msix: true,
        // ASSUMPTION: 64 channels. mlx5 opens one channel (RQ + SQ + one
        // completion vector) per CPU up to the device's completion
        // vectors; the host's core count is the usual limit.
        max_queues: 64,
        link_mbps: 25_000,
        // en.h: log SQ/RQ size max 0xd, min 0x6 (SQ), default 0xa.
        max_ring: 8192,
        min_ring: 64,
        default_ring: 1024,
        // en.h MLX5E_INDIR_RQT_SIZE BIT(8) (the table of kernels before
        // 5.16; later kernels size it to the channels, at least 256).
        reta_entries: 256,
        other_vector_eitr: None,
        // ASSUMPTION: 512 KB of port receive buffer (the 82599's figure;
        // the ConnectX buffer is firmware-configured per priority).
        rx_fifo_bytes: 512 * 1024,
        // ASSUMPTION: 1 us from last byte to CQE in host memory (PCIe 3.0).
        rx_dma_ns: Nanos(1000),
        // ASSUMPTION: 1 us from the doorbell to the first byte on the wire.
        tx_dma_ns: Nanos(1000),
        // Wire rate of 64-B frames at 25 Gb/s: 84 x 8 / 25 = 26.88 ns,
        // rounded down (no limit below the wire; see the module doc).
        rx_desc_min_ns: Nanos(26),
        tx_desc_min_ns: Nanos(26),
    };

    /// NVIDIA ConnectX-6 Dx, 100 GbE, Linux mlx5: the ConnectX-5's CQ
    /// moderation and driver limits at 100 Gb/s.
    pub const CX6: ChipProfile = ChipProfile {
        name: "cx6",
        description: "NVIDIA ConnectX-6 Dx, 100 GbE, PCIe 4.0 x16, CQ moderation (usecs + frames, EQE/CQE period modes), mlx5",
        link_mbps: 100_000,
        // Wire rate of 64-B frames at 100 Gb/s: 6.72 ns, rounded down.
        rx_desc_min_ns: Nanos(6),
        tx_desc_min_ns: Nanos(6),
        ..ChipProfile::CX5
    };

    /// AWS Elastic Network Adapter on a c5n-class instance (25 Gb/s),
    /// Linux ena.
    pub const ENA: ChipProfile = ChipProfile {
        name: "ena",
        description: "AWS ENA (Nitro), c5n class 25 Gb/s, per-queue interrupt delay in intr_delay_resolution units, one vector per queue pair, ena",
        family: "ena",
        throttle: ThrottleKind::Cq(CqCaps {
            // No completion count and no CQE mode: ENA's
            // supported_coalesce_params are ETHTOOL_COALESCE_USECS |
            // ETHTOOL_COALESCE_USE_ADAPTIVE_RX.
            frames: false,
            cqe_mode: false,
            // ena_eth_io_defs.h: RX/TX delay fields of 15 bits (0x7fff
            // units of the resolution).
            max_period_us: 0x7fff,
            max_count: 0,
            // ASSUMPTION: the device reports 1 us (the driver's default
            // ENA_DEFAULT_INTR_DELAY_RESOLUTION; the value a given instance
            // reports is not published). Quantisation: the driver writes
            // usecs / resolution.
            resolution_us: 1,
            // Commit 78cb421d185c disables adaptive moderation by default;
            // the best-practices guide says some instance types enable it.
            default_adaptive_rx: false,
        }),
        has_abs_timers: false,
        regs: RegisterMap::CQ,
        legacy_itr: LegacyItr::Native,
        msix: true,
        // ena_netdev.h ENA_MAX_NUM_IO_QUEUES 32 (2019 kernels); the
        // instance type sets its own count (c5n.xlarge: 4).
        max_queues: 32,
        link_mbps: 25_000,
        // Best-practices guide: RX rings "up to 16K" on instances that
        // allow it; ENA_MIN_RING_SIZE 256; ENA_DEFAULT_RING_SIZE 1024.
        max_ring: 16384,
        min_ring: 256,
        default_ring: 1024,
        // ena_com.h ENA_RX_RSS_TABLE_LOG_SIZE 7: 128 entries.
        reta_entries: 128,
        other_vector_eitr: None,
        // ASSUMPTION: 512 KB of device receive buffer (not published).
        rx_fifo_bytes: 512 * 1024,
        // ASSUMPTION: 2 us from last byte to completion in guest memory
        // (the Nitro card's PCIe path; not published).
        rx_dma_ns: Nanos(2000),
        // ASSUMPTION: 2 us from the doorbell to the first byte.
        tx_dma_ns: Nanos(2000),
        rx_desc_min_ns: Nanos(26),
        tx_desc_min_ns: Nanos(26),
    };
}

#[cfg(test)]
mod tests {
    use super::super::chip::by_name;
    use super::*;

    #[test]
    fn cq_chips_carry_their_driver_limits() {
        // (name, link Mb/s, frames, cqe mode, max period, max count, RETA,
        // rings min/default/max, adaptive RX at load)
        type Row = (&'static str, u32, bool, bool, u32, u32, u32, [u32; 3], bool);
        let rows: [Row; 3] = [
            (
                "cx5",
                25_000,
                true,
                true,
                4095,
                65535,
                256,
                [64, 1024, 8192],
                true,
            ),
            (
                "cx6",
                100_000,
                true,
                true,
                4095,
                65535,
                256,
                [64, 1024, 8192],
                true,
            ),
            (
                "ena",
                25_000,
                false,
                false,
                32767,
                0,
                128,
                [256, 1024, 16384],
                false,
            ),
        ];
        for (name, link, frames, cqe, period, count, reta, rings, adaptive) in rows {
            let c = by_name(name).unwrap();
            let ThrottleKind::Cq(q) = c.throttle else {
                panic!("{name} is CQ-moderated")
            };
            assert_eq!(
                (q.frames, q.cqe_mode, q.max_period_us, q.max_count),
                (frames, cqe, period, count),
                "{name}"
            );
            assert_eq!(q.default_adaptive_rx, adaptive, "{name}");
            assert_eq!((c.link_mbps, c.reta_entries), (link, reta), "{name}");
            assert_eq!([c.min_ring, c.default_ring, c.max_ring], rings, "{name}");
            // No descriptor engine slower than the wire at the port's speed.
            assert!(c.rx_desc_min_ns.as_ns() * link as u64 <= 672_000, "{name}");
        }
    }
}
