//! Host-kernel features of the TX path and the receive buffer that depend on
//! the kernel a profile describes, not on the machine's costs: TCP Small
//! Queues, byte queue limits, receive-buffer autotuning.
//!
//! A profile carries the defaults of its kernel (`HostProfile::kernel`);
//! they apply only under a Linux driver architecture
//! (`DriverArch::linux`): a BSD driver on the same machine gets none of
//! them (FreeBSD and OpenBSD have neither TSQ nor BQL). A scenario may set
//! each one per host (`hosts[].tcp.limit_output_bytes`,
//! `hosts[].tcp.moderate_rcvbuf`, `hosts[].tcp.rmem_max`,
//! `hosts[].tcp.wmem_max`) or per NIC
//! (`hosts[].nics[].bql`).
//!
//! Sources, for the modern Linux defaults (Linux 6.12):
//! - `tcp_limit_output_bytes` = 1048576: commit c73e5807e4f6 ("tcp: tsq: no
//!   longer use limit_output_bytes for paced flows", v5.0) raised it from
//!   262144 (c39c4c6abb89, "tcp: double default TSQ output bytes limit")
//!   to 1 MB; 9ea3bfa61b09 (v6.16, 2025) raised it to 4 MB. TSQ itself:
//!   46d3ceabd8d9 ("tcp: TCP Small Queues", v3.6);
//! - BQL: `netdev_sent_queue`/`netdev_completed_queue` in the transmit and
//!   TX-clean paths of e1000 (`e1000_main.c` `e1000_xmit_frame`,
//!   `e1000_clean_tx_irq`), e1000e (`netdev.c`) and igb (`igb_main.c`,
//!   `netdev_tx_sent_queue`/`netdev_tx_completed_queue`): every chip preset
//!   is driven by one of them, so BQL is on for all;
//! - `tcp_rmem` = 4096 131072 6291456 and `tcp_moderate_rcvbuf` = 1
//!   (Documentation/networking/ip-sysctl.rst; tcp_rmem[1] since a337531b942b
//!   "tcp: up initial rmem to 128KB and SYN rwin to around 64KB", v4.20;
//!   tcp_rmem[2] 6 MB since b49960a05e32, v3.4);
//! - `tcp_wmem[2]` = 4194304: `tcp_init` (`net/ipv4/tcp.c`) sets it to
//!   max(64 KB, min(4 MB, free buffer pages x 32 B)), 4 MB on any host
//!   with 512 MB of free memory (ip-sysctl.rst: "between 64K and 4MB,
//!   depending on RAM size"); Linux 2.6.6 fixed it at 128 KB.
//!
//! Linux 2.6.6 (the 2004 profile) has none of them: TSQ came in 3.6, BQL in
//! 3.3, receive-buffer autotuning in 2.6.7. It has its own TCP sender rules
//! instead (`stack::tcp::linux26`, `net/ipv4/tcp_input.c` `tcp_ack`,
//! `tcp_cwnd_application_limited`, `tcp_new_space`; `tcp_output.c`
//! `tcp_cwnd_validate`, `tcp_cwnd_restart`; `tcp.c` `tcp_sendmsg`), which a
//! profile of that kernel turns on (`hosts[].tcp.linux26_sender`).
//!
//! The timer tick rate (`HZ`, `hz`) rides along: a kernel build setting
//! the jiffies clock of the drivers runs on.
//!
//! Units: bytes; `hz` [1/s].

use serde::Serialize;

/// The kernel features a profile's kernel turns on by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct KernelDefaults {
    /// `net.ipv4.tcp_limit_output_bytes` (0: no TCP Small Queues) [bytes].
    pub tcp_limit_output_bytes: u32,
    /// Byte queue limits on every TX ring.
    pub bql: bool,
    /// `net.ipv4.tcp_moderate_rcvbuf`: receive-buffer autotuning.
    pub moderate_rcvbuf: bool,
    /// `tcp_rmem[2]`, the most autotuning may give a socket [bytes]; 0:
    /// the socket keeps `rmem_default`.
    pub tcp_rmem_max: u32,
    /// `tcp_wmem[2]`, the most the send buffer grows to [bytes]; 0: Linux
    /// 2.6.6's 131072 (`scenario::config::host::LINUX26_WMEM_MAX`).
    pub tcp_wmem_max: u32,
    /// The timer tick rate, Linux `HZ` (the jiffies clock) [1/s]: read by
    /// drivers that gate on jiffies (ixgbe's adaptive moderation).
    pub hz: u32,
    /// The Linux 2.6.6 TCP sender rules (`stack::tcp::linux26`): cwnd
    /// growth only while cwnd-limited, RFC 2861 validation, send buffer by
    /// truesize grown only after the writer blocked. Later kernels changed
    /// each (`tcp_is_cwnd_limited`, `tcp_sndbuf_expand`), so the modern
    /// profile keeps its own behaviour.
    pub tcp_linux26_sender: bool,
    /// The Linux 2.6.6 prequeue ACK rule (`stack::tcp::linux26`): data
    /// copied straight to a reader blocked in recv() is acknowledged once
    /// per read. Later kernels removed the prequeue ("tcp: remove prequeue
    /// support", Linux 4.14), so the modern profile keeps its own
    /// behaviour.
    pub tcp_linux26_prequeue: bool,
    /// The read's ACK after the read's copy (`scenario::netstack`): 2.6.6
    /// `tcp_recvmsg` copies what it returns (`tcp_prequeue_process`, or
    /// `skb_copy_datagram_iovec` from the receive queue) before its
    /// `cleanup_rbuf` sends the ACK or window update. On for the 2004
    /// profile, whose reads send the bulk ACKs (the prequeue rule); other
    /// profiles keep the read's segments at the start of the read.
    pub tcp_linux26_ack_after_copy: bool,
}

impl KernelDefaults {
    /// A kernel without any of the features (Linux 2.6.6, the BSDs, the
    /// `ideal` profile).
    pub const NONE: KernelDefaults = KernelDefaults {
        tcp_limit_output_bytes: 0,
        bql: false,
        moderate_rcvbuf: false,
        tcp_rmem_max: 0,
        tcp_wmem_max: 0,
        // Linux 2.6.0 to 2.6.12 on i386: HZ fixed at 1000 (include/asm-i386/
        // param.h); kernel/Kconfig.hz made it a choice in 2.6.13.
        hz: 1000,
        tcp_linux26_sender: false,
        tcp_linux26_prequeue: false,
        tcp_linux26_ack_after_copy: false,
    };

    /// Linux 2.6.6 (the 2004 profile): none of the modern features, the
    /// 2.6.6 TCP sender rules.
    pub const LINUX_2_6_6: KernelDefaults = KernelDefaults {
        tcp_linux26_sender: true,
        tcp_linux26_prequeue: true,
        tcp_linux26_ack_after_copy: true,
        ..KernelDefaults::NONE
    };

    /// Linux 6.12 (see the module doc for sources).
    pub const LINUX_6_12: KernelDefaults = KernelDefaults {
        tcp_limit_output_bytes: 1_048_576,
        bql: true,
        moderate_rcvbuf: true,
        tcp_rmem_max: 6_291_456,
        tcp_wmem_max: 4_194_304,
        // kernel/Kconfig.hz: `default HZ_250` (distributions pick 250 or
        // 1000; `hosts[].hz` sets it).
        hz: 250,
        tcp_linux26_sender: false,
        tcp_linux26_prequeue: false,
        tcp_linux26_ack_after_copy: false,
    };
}
