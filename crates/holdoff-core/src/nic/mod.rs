//! NIC port, e1000 family (8254x/8257x, 82574) and igb class (82576, I350,
//! I210/I211): descriptor rings, DMA, the delay timers, interrupt causes and
//! masks, throttling (ITR/EITR) and interrupt delivery modes.
//!
//! Models (8254x SDM §3.2.7, §13.4.18-44; I210 datasheet §7.3, §8.8.14):
//! - RX: a frame fully received enters the on-chip packet buffer
//!   (`rx_fifo_bytes`; overflow drops it as `rx_fifo_overrun` and raises RXO);
//!   the descriptor engine takes at least `rx_desc_min_ns` per frame (the
//!   chip's packet-rate limit) and the frame lands in host memory
//!   `rx_dma_ns` later, where it takes a free descriptor or is dropped
//!   (`rx_ring_full`). RDTR/RADV then decide when RXT0 is raised; RDTR = 0
//!   raises it at once. RXDMT0 is raised when the free descriptors fall to
//!   the threshold (RCTL.RDMTS = 1/2 of the ring by default).
//! - TX: descriptors posted by the driver become visible to the chip at the
//!   TDT write; each is fetched (at most one per `tx_desc_min_ns`), sent at
//!   line rate after `tx_dma_ns`, and written back when its last byte left.
//!   Every packet carries RS (with TSO only the last frame of a send, which
//!   the NIC cuts into frames: `Packet::tso_more`); with IDE the TIDV/TADV pair delays TXDW, without
//!   IDE TXDW is raised at once (`set_ide` is a per-chip/driver switch).
//! - Causes: ICR is read-to-clear, IMS/IMC set and clear mask bits; the
//!   device wants to interrupt while ICR & IMS != 0.
//! - Throttling: ITR (256 ns) or EITR (per vector) is a minimum interval
//!   between assertions. A cause arriving after the interval is signalled at
//!   once; one arriving inside it waits for the interval's end; at the end
//!   the vector asserts only if causes are still pending, otherwise it stays
//!   idle and the next cause asserts at once.
//! - Clock: the throttle counts on the port's own reference clock (a 25 MHz
//!   crystal), which is off nominal by a few tens of ppm (Intel's LAN design
//!   guides: within +-50 ppm to meet IEEE 802.3, +-30 ppm recommended).
//!   `set_clock_error_ppb` sets that error; the interval then lasts
//!   `interval * (1 - error)` of simulated (host) time. Two ports' throttle
//!   windows therefore drift against each other, which decides how often a
//!   request/response exchange takes one interval per round trip rather than
//!   two (docs/models/throttled-rr.md). Registers and reports keep the
//!   nominal interval.
//! - Modes: legacy INTx (a level line, shareable by several ports), MSI (one
//!   message per assertion) and MSI-X (one vector per queue, own EITR; the
//!   delay timers are bypassed as on 82574/82576 in MSI-X mode).
//!
//! Simplifies: descriptor write-back is not batched (visible at DMA
//! completion); the delay timers (RDTR/RADV/TIDV/TADV) run at their nominal
//! rate (at 30 ppm a 65.5 us timer moves by 2 ns); no PCI bus contention model beyond the fixed DMA latencies;
//! EICR per-queue bits are represented by RXT0/TXDW on the queue's vector; no
//! link state changes (LSC) during a run.
//!
//! Register writes (`apply_params`), the registers as the chip holds them
//! (`registers()`) and the record of writes the chip ignores
//! (`ignored_writes()`) live in `registers.rs`; the data path (RX and TX
//! rings, DMA, the delay timers' starts) in `datapath.rs`.
//!
//! Units: register values in hardware units (`itr_256ns`, `eitr_us`,
//! `*_1024ns`), times [ns], sizes [bytes].

pub mod chip;
pub mod cq;
mod cq_chips;
mod datapath;
mod intel_itr_chips;
mod registers;
pub mod rss;
pub mod timers;

pub use registers::{IgnoredWrite, Registers};

use crate::engine::Timer;
use crate::packet::{DropReason, Packet};
use crate::units::{Nanos, SimTime};
use crate::wire::LinkDir;
use chip::{ChipProfile, LegacyItr};
use registers::{DelayRegs, WriteLog};
use timers::{DelayOutcome, DelayPair};

/// ICR bit: transmit descriptor written back.
pub const ICR_TXDW: u32 = 1 << 0;
/// ICR bit: link status change.
pub const ICR_LSC: u32 = 1 << 2;
/// ICR bit: receive sequence error.
pub const ICR_RXSEQ: u32 = 1 << 3;
/// ICR bit: receive descriptor minimum threshold reached.
pub const ICR_RXDMT0: u32 = 1 << 4;
/// ICR bit: receiver overrun.
pub const ICR_RXO: u32 = 1 << 6;
/// ICR bit: receiver timer interrupt.
pub const ICR_RXT0: u32 = 1 << 7;
/// Causes Linux e1000 enables (`IMS_ENABLE_MASK`).
pub const IMS_ENABLE_MASK: u32 = ICR_RXT0 | ICR_TXDW | ICR_RXDMT0 | ICR_RXSEQ | ICR_LSC;

/// How the port signals interrupts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntMode {
    /// Legacy level-triggered line, possibly shared.
    Intx,
    /// One message per assertion, one vector.
    Msi,
    /// One vector per queue.
    Msix,
}

/// Per-port configuration (validated by `scenario`).
#[derive(Clone, Debug)]
pub struct PortConfig {
    pub rx_ring: u32,
    pub tx_ring: u32,
    pub queues: u32,
    pub mode: IntMode,
    /// Whether the driver sets IDE on TX descriptors (delays TXDW by TIDV/TADV).
    pub set_ide: bool,
    /// RXDMT0 threshold as a right shift of the ring size (1 = 1/2, 2 = 1/4, 3 = 1/8).
    pub rdmts_shift: u32,
    /// What the chip does with a legacy ITR (0x000C4) write in INTx/MSI
    /// mode: the chip's default (`ChipProfile::legacy_itr`) unless the
    /// scenario picks the other behaviour (see `chip::LegacyItr`).
    pub legacy_itr: LegacyItr,
    /// Longest frame the MAC accepts: the interface MTU + 18 (header and
    /// FCS) [bytes]; longer ones are dropped as `frame_over_mtu` (the long
    /// packet enable bit, RCTL.LPE, is set by the drivers when MTU > 1500).
    pub max_frame_bytes: u32,
    /// Generic receive offload in the host's RX clean (`ethtool -K gro`):
    /// consecutive in-order TCP frames of one connection in one pass go up
    /// the stack as one receive (`host::driver::clean_rx_with`).
    pub gro: bool,
    /// EITR-class chips (`ThrottleKind::Eitr1us`): whether the driver's EITR
    /// writes carry CNT_IGNR (bit 31, "don't reset counters on write"), as
    /// Linux `igb_write_itr` and FreeBSD igb write them on the 82576 and
    /// later. Set: a write leaves the running countdown alone and the new
    /// interval times the next one. Clear: the write zeroes the counter and
    /// pending causes assert at once (I210 datasheet §8.8.14).
    pub eitr_cnt_ignr: bool,
}

/// Something the port asks the world to schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NicEvent {
    /// The DMA of the oldest frame in the on-chip receive buffer completed
    /// (completions come in arrival order: one descriptor engine per port,
    /// a fixed DMA latency), so the frame itself stays in the port's buffer
    /// and the event is a few bytes. A port has at most one queued: a
    /// frame's completion is queued when it arrives into an empty buffer,
    /// otherwise when the frame before it completes (first among that
    /// completion's outputs). Its time is fixed at arrival either way; what
    /// the second case moves is its place among other events due at the
    /// same nanosecond, which follows scheduling order: those scheduled
    /// between the frame's arrival and the previous completion now run
    /// before it.
    RxDmaDone {
        queue: u16,
    },
    TxDone {
        queue: u16,
    },
    RxDelay {
        queue: u16,
        gen: u32,
    },
    TxDelay {
        queue: u16,
        gen: u32,
    },
    Throttle {
        vector: u16,
        gen: u32,
    },
}

/// `i % ring` for `i < 2 * ring` (a ring index plus at most a ring's
/// length), without a division.
#[inline(always)]
fn ring_wrap(i: u32, ring: u32) -> u32 {
    debug_assert!(i < 2 * ring);
    if i >= ring {
        i - ring
    } else {
        i
    }
}

/// Outputs of a port operation, drained by the caller. The buffers keep
/// their capacity, so steady-state operation allocates nothing.
#[derive(Default, Debug)]
pub struct NicOut {
    /// Events to schedule, each packed into one word (`NicEvent::pack`):
    /// the world reads them back right after the port wrote them, and a
    /// word written whole is read back whole without a store-forwarding
    /// stall (an enum written field by field is not).
    events: Vec<(SimTime, u64)>,
    /// Vectors that asserted an interrupt now (MSI/MSI-X message, or INTx line raised).
    pub asserts: Vec<u16>,
    /// Frames put on the wire: arrival time at the far end (the frame
    /// itself stays on the port's egress link until it arrives).
    pub frames: Vec<SimTime>,
    /// Frames the port dropped, by reason (counted by the caller).
    pub drops: Vec<DropReason>,
}

impl NicEvent {
    /// The event as one word: tag (bits 0-7), queue or vector (8-23),
    /// timer generation (32-63).
    #[inline(always)]
    fn pack(self) -> u64 {
        let (tag, a, gen) = match self {
            NicEvent::RxDmaDone { queue } => (0, queue, 0),
            NicEvent::TxDone { queue } => (1, queue, 0),
            NicEvent::RxDelay { queue, gen } => (2, queue, gen),
            NicEvent::TxDelay { queue, gen } => (3, queue, gen),
            NicEvent::Throttle { vector, gen } => (4, vector, gen),
        };
        tag | (a as u64) << 8 | (gen as u64) << 32
    }

    /// The event `pack` made this word from.
    #[inline(always)]
    fn unpack(w: u64) -> Self {
        let a = (w >> 8) as u16;
        let gen = (w >> 32) as u32;
        match w as u8 {
            0 => NicEvent::RxDmaDone { queue: a },
            1 => NicEvent::TxDone { queue: a },
            2 => NicEvent::RxDelay { queue: a, gen },
            3 => NicEvent::TxDelay { queue: a, gen },
            _ => NicEvent::Throttle { vector: a, gen },
        }
    }
}

impl NicOut {
    /// Ask for `ev` at `at`.
    #[inline]
    pub fn push_event(&mut self, at: SimTime, ev: NicEvent) {
        self.events.push((at, ev.pack()));
    }

    /// The events asked for since the last drain, in the order asked.
    #[inline]
    pub fn drain_events(&mut self) -> impl Iterator<Item = (SimTime, NicEvent)> + '_ {
        self.events
            .drain(..)
            .map(|(at, w)| (at, NicEvent::unpack(w)))
    }

    /// The queued events in order (the frequent path: read them, then
    /// `clear_events`, without a drain's bookkeeping).
    #[inline(always)]
    pub fn events(&self) -> impl Iterator<Item = (SimTime, NicEvent)> + '_ {
        self.events.iter().map(|&(at, w)| (at, NicEvent::unpack(w)))
    }

    /// How many events are queued.
    #[inline(always)]
    pub fn event_count(&self) -> usize {
        self.events.len()
    }

    /// The `i`-th queued event.
    #[inline(always)]
    pub fn event(&self, i: usize) -> (SimTime, NicEvent) {
        let (at, w) = self.events[i];
        (at, NicEvent::unpack(w))
    }

    /// Forget the queued events (after `events`).
    #[inline(always)]
    pub fn clear_events(&mut self) {
        self.events.clear();
    }

    /// Whether no event is queued.
    #[inline(always)]
    pub fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    pub fn clear(&mut self) {
        self.events.clear();
        self.asserts.clear();
        self.frames.clear();
        self.drops.clear();
    }
}

/// One interrupt vector: its causes, mask and throttle.
#[derive(Clone, Debug)]
struct Vector {
    icr: u32,
    ims: u32,
    interval: Nanos,
    /// The interval as the port's own clock counts it, in simulated time
    /// [ps]: `interval` corrected by the port's clock error.
    period_ps: u64,
    /// Picoseconds of the last countdown not yet spent (the simulated clock
    /// counts whole ns; the remainder carries to the next countdown so that
    /// a drift below 1 ns per interval still accumulates).
    carry_ps: u64,
    /// Raw register value as written (for outputs).
    reg: u32,
    next_allowed: SimTime,
    timer: Timer,
    interrupts: u64,
    /// Interrupts whose pending causes included a TX completion (TXDW) and
    /// a receive cause (RXT0, RXDMT0 or RXO) when they were asserted.
    interrupts_txdw: u64,
    interrupts_rx: u64,
    line_high: bool,
    last_assert: Option<SimTime>,
    /// Smallest spacing seen between two assertions [ns].
    min_spacing: Option<Nanos>,
    /// The interval that bounds the spacing to the next assertion: the
    /// interval in effect at the last assertion, or zero after an EITR write
    /// reset the counter (which may assert at once).
    spacing_floor: Nanos,
    /// Assertions that came sooner than `spacing_floor` (an invariant: 0).
    spacing_violations: u64,
    /// The interrupt rate limit (Intel 700/800 INTRL) as held [4 us] and
    /// as the port's clock counts it [ps]; 0: off. Assertions are spaced by
    /// at least the larger of the throttle interval and this limit.
    intrl_reg: u32,
    intrl_ps: u64,
}

impl Vector {
    fn pending(&self) -> u32 {
        self.icr & self.ims
    }
}

#[derive(Clone, Debug)]
struct RxQueue {
    slots: Vec<Packet>,
    head: u32,
    filled: u32,
    hw_free: u32,
    host_held: u32,
    max_filled: u32,
    timers: DelayPair,
    /// CQ-moderated chips: the queue's completion-queue moderation.
    cq: cq::CqTimer,
    cq_set: crate::moderation::CqSetting,
    /// Frames / bytes written to host memory on this queue.
    packets: u64,
    bytes: u64,
    /// Frames of this queue that found no free descriptor (`rx_ring_full`).
    ring_drops: u64,
}

#[derive(Clone, Debug)]
struct TxQueue {
    slots: Vec<Packet>,
    /// Next descriptor to reclaim.
    clean: u32,
    /// Sent and written back, not yet reclaimed.
    done: u32,
    /// Fetched by the chip (TDT written), not yet written back; their
    /// frames are committed to the wire.
    in_nic: u32,
    /// Posted by the driver, TDT not yet written.
    unkicked: u32,
    fetch_free_at: SimTime,
    timers: DelayPair,
    cq: cq::CqTimer,
    cq_set: crate::moderation::CqSetting,
    /// Frames / bytes the driver has posted to this queue by the last
    /// settle (`settle_posted`): the counts the moderation samples read.
    packets: u64,
    bytes: u64,
    /// Posts not yet counted in `packets`/`bytes`, in time order. A
    /// segment's sends are handed to the port when it starts, each stamped
    /// with the instant its own CPU work ends (`World::post_segment`); a
    /// driver that counts at encap (FreeBSD em/igc AIM, `*_isc_txd_encap`:
    /// "Sent data accounting for AIM") has counted only the frames posted by
    /// then, and none of a preempted segment's later ones before it resumes
    /// (`NicPort::shift_posted`).
    posting: std::collections::VecDeque<Posted>,
}

/// A post to a TX queue not yet counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Posted {
    /// When the driver's CPU reaches it.
    at: SimTime,
    frames: u32,
    bytes: u64,
    /// The CPU segment that posts it (`NicPort::set_post_owner`), if any.
    owner: Option<u64>,
    /// While its segment is preempted (`at` is then `SimTime::MAX`): how
    /// long after the preemption its CPU work reaches it [ns].
    held: Option<Nanos>,
}

impl TxQueue {
    fn used(&self) -> u32 {
        self.done + self.in_nic + self.unkicked
    }

    /// Count the posts due by `now`.
    fn settle_posted(&mut self, now: SimTime) {
        while let Some(&p) = self.posting.front() {
            if p.at > now {
                break;
            }
            self.posting.pop_front();
            self.packets += u64::from(p.frames);
            self.bytes += p.bytes;
        }
    }

    /// Record a post, keeping the list in time order (posts from two cores
    /// can arrive out of order).
    fn note_posted(&mut self, p: Posted) {
        let i = self
            .posting
            .iter()
            .rposition(|q| q.at <= p.at)
            .map_or(0, |i| i + 1);
        self.posting.insert(i, p);
    }

    /// Segment `owner` preempted at `at`: its posts after `at` are held
    /// (`at` becomes `SimTime::MAX`, the offset kept in `held`).
    fn hold_posted(&mut self, owner: u64, at: SimTime) {
        let mut moved = false;
        for p in self.posting.iter_mut() {
            if p.owner == Some(owner) && p.held.is_none() && p.at > at {
                p.held = Some(p.at - at);
                p.at = SimTime(u64::MAX);
                moved = true;
            }
        }
        if moved {
            self.posting.make_contiguous().sort_by_key(|p| p.at);
        }
    }

    /// Segment `owner` resumed at `now`: its held posts come `held` after.
    fn resume_posted(&mut self, owner: u64, now: SimTime) {
        let mut moved = false;
        for p in self.posting.iter_mut() {
            if p.owner == Some(owner) {
                if let Some(d) = p.held.take() {
                    p.at = now + d;
                    moved = true;
                }
            }
        }
        if moved {
            self.posting.make_contiguous().sort_by_key(|p| p.at);
        }
    }
}

/// A register access on a port, or a host action concerning it, recorded in
/// order when the port's log is enabled (for event-order tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegOp {
    /// ICR read (and cleared), with the value read.
    IcrRead(u32),
    ImsWrite,
    ImcWrite,
    /// RDT write returning this many descriptors.
    RdtWrite(u32),
    /// TDT write making this many descriptors visible.
    TdtWrite(u32),
    /// The driver took one received packet.
    RxTake,
    /// The host masked / unmasked the port's line in the I/O APIC.
    ApicMask,
    ApicUnmask,
}

/// Counters of one port (MAC statistics registers, read by drivers and outputs).
#[derive(Clone, Copy, Debug, Default)]
pub struct PortStats {
    /// Good packets / octets received into host memory (GPRC / GORC).
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// Good packets / octets transmitted (GPTC / GOTC).
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Missed packets (MPC): RX ring full or FIFO overrun.
    pub rx_missed: u64,
}

/// One NIC port.
#[derive(Clone, Debug)]
pub struct NicPort {
    pub chip: &'static ChipProfile,
    pub cfg: PortConfig,
    pub egress: LinkDir,
    vectors: Vec<Vector>,
    rxq: Vec<RxQueue>,
    txq: Vec<TxQueue>,
    rx_fifo_used: u32,
    /// The CPU segment posting now (`set_post_owner`).
    post_owner: Option<u64>,
    /// Frames in the on-chip receive buffer, oldest first (their DMA
    /// completes in this order), each with its DMA completion time and
    /// receive queue. Only the oldest frame's completion is a queued
    /// event: the engine queues the next one as it completes one
    /// (`rx_dma_done`), so a fast port's frames in flight (about 15 at
    /// 10 GbE) do not all wait in the simulator's event queue.
    rx_fifo: std::collections::VecDeque<(Packet, SimTime, u16)>,
    rx_engine_free_at: SimTime,
    rdtr: Nanos,
    radv: Nanos,
    tidv: Nanos,
    tadv: Nanos,
    /// RDTR/RADV/TIDV/TADV as written [1.024 us] (for `registers()`).
    delay_regs: DelayRegs,
    /// Writes ignored, inert or applied as a what-if (see `registers`).
    write_log: WriteLog,
    pub stats: PortStats,
    log: Option<Vec<RegOp>>,
    /// Error of the port's reference clock [parts per billion]; positive =
    /// fast (its intervals end early). 0 unless set.
    clock_error_ppb: i32,
    /// RSS (key, hashed fields, redirection table) when the scenario turns
    /// the hardware model on; None: the queue is `flow mod queues`.
    rss: Option<Box<rss::Rss>>,
}

impl NicPort {
    /// Start recording register accesses (see `RegOp`).
    pub fn enable_log(&mut self) {
        self.log = Some(Vec::new());
    }

    /// The accesses recorded so far (empty if the log is off).
    pub fn take_log(&mut self) -> Vec<RegOp> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Record a host action concerning this port.
    #[inline]
    pub fn note(&mut self, op: RegOp) {
        if let Some(l) = &mut self.log {
            l.push(op);
        }
    }

    pub fn new(chip: &'static ChipProfile, cfg: PortConfig, egress: LinkDir) -> Self {
        let nvec = if cfg.mode == IntMode::Msix {
            cfg.queues as usize
        } else {
            1
        };
        let vectors = vec![
            Vector {
                icr: 0,
                ims: 0,
                interval: Nanos::ZERO,
                period_ps: 0,
                carry_ps: 0,
                reg: 0,
                next_allowed: SimTime::ZERO,
                timer: Timer::default(),
                interrupts: 0,
                interrupts_txdw: 0,
                interrupts_rx: 0,
                line_high: false,
                last_assert: None,
                min_spacing: None,
                spacing_floor: Nanos::ZERO,
                spacing_violations: 0,
                intrl_reg: 0,
                intrl_ps: 0,
            };
            nvec
        ];
        let rxq = (0..cfg.queues)
            .map(|_| RxQueue {
                slots: vec![Packet::EMPTY; cfg.rx_ring as usize],
                head: 0,
                filled: 0,
                // One descriptor stays unused so that head == tail means empty.
                hw_free: cfg.rx_ring - 1,
                host_held: 0,
                max_filled: 0,
                timers: DelayPair::default(),
                cq: Default::default(),
                cq_set: Default::default(),
                packets: 0,
                bytes: 0,
                ring_drops: 0,
            })
            .collect();
        let txq = (0..cfg.queues)
            .map(|_| TxQueue {
                slots: vec![Packet::EMPTY; cfg.tx_ring as usize],
                clean: 0,
                done: 0,
                in_nic: 0,
                unkicked: 0,
                fetch_free_at: SimTime::ZERO,
                timers: DelayPair::default(),
                cq: Default::default(),
                cq_set: Default::default(),
                packets: 0,
                bytes: 0,
                posting: Default::default(),
            })
            .collect();
        NicPort {
            chip,
            cfg,
            egress,
            vectors,
            rxq,
            txq,
            rx_fifo_used: 0,
            post_owner: None,
            rx_fifo: std::collections::VecDeque::new(),
            rx_engine_free_at: SimTime::ZERO,
            rdtr: Nanos::ZERO,
            radv: Nanos::ZERO,
            tidv: Nanos::ZERO,
            tadv: Nanos::ZERO,
            delay_regs: DelayRegs::default(),
            write_log: WriteLog::default(),
            stats: PortStats::default(),
            log: None,
            clock_error_ppb: 0,
            rss: None,
        }
    }

    /// Set the error of the port's reference clock [parts per billion;
    /// positive = fast]. The throttle intervals (already written and later
    /// ones) then last `interval * (1 - error)` of simulated time.
    pub fn set_clock_error_ppb(&mut self, ppb: i32) {
        self.clock_error_ppb = ppb;
        for v in &mut self.vectors {
            v.period_ps = on_clock_ps(v.interval, ppb);
            v.intrl_ps = on_clock_ps(intrl_nanos(v.intrl_reg), ppb);
        }
    }

    /// The port's clock error [parts per billion].
    pub fn clock_error_ppb(&self) -> i32 {
        self.clock_error_ppb
    }

    // ---------------------------------------------------------------- topology

    pub fn num_vectors(&self) -> usize {
        self.vectors.len()
    }

    pub fn num_queues(&self) -> usize {
        self.rxq.len()
    }

    /// The vector a queue's causes go to.
    #[inline]
    pub fn vector_of_queue(&self, queue: u16) -> u16 {
        if self.cfg.mode == IntMode::Msix {
            queue
        } else {
            0
        }
    }

    /// Queues served by a vector (inclusive range).
    pub fn queues_of_vector(&self, vector: u16) -> std::ops::Range<u16> {
        if self.cfg.mode == IntMode::Msix {
            vector..vector + 1
        } else {
            0..self.rxq.len() as u16
        }
    }

    /// Turn the RSS model on: frames pick their queue through `rss`'s
    /// redirection table (the caller built it for this port's queues).
    pub fn set_rss(&mut self, rss: rss::Rss) {
        debug_assert!(rss.reta().iter().all(|&q| (q as usize) < self.rxq.len()));
        self.rss = Some(Box::new(rss));
    }

    /// The port's RSS, if the model is on.
    pub fn rss(&self) -> Option<&rss::Rss> {
        self.rss.as_deref()
    }

    /// The receive queue of a frame: with RSS, the redirection-table entry
    /// of its hash (frames from a generator or a capture) or, for a frame
    /// without a 5-tuple (TCP, ICMP and host-sent UDP), of its flow index
    /// (`nic::rss`); without RSS, `flow mod queues`.
    #[inline]
    fn rx_queue_of(&self, pkt: &Packet) -> u16 {
        match &self.rss {
            None => self.rx_queue_of_flow(pkt.flow),
            Some(r) if pkt.rss & rss::HASHED != 0 => r.queue_of_hash(pkt.rss),
            Some(r) => r.queue_of_hash(pkt.flow),
        }
    }

    /// The receive queue of flow `flow` (a TCP connection's index).
    #[inline]
    pub fn rx_queue_of_flow(&self, flow: u16) -> u16 {
        match &self.rss {
            // One queue (the common case) needs no division.
            None if self.rxq.len() == 1 => 0,
            None => (flow as usize % self.rxq.len()) as u16,
            Some(r) => r.queue_of_hash(flow),
        }
    }

    fn delay_timers_active(&self) -> bool {
        self.cfg.mode != IntMode::Msix
    }

    // ------------------------------------------------------------- registers

    /// Read ICR of a vector (read-to-clear). Drops an INTx line.
    pub fn read_icr(&mut self, vector: u16) -> u32 {
        let v = &mut self.vectors[vector as usize];
        let icr = v.icr;
        v.icr = 0;
        v.line_high = false;
        self.note(RegOp::IcrRead(icr));
        icr
    }

    /// Peek at ICR without clearing (for tests and outputs).
    pub fn icr(&self, vector: u16) -> u32 {
        self.vectors[vector as usize].icr
    }

    /// Write IMS (enable causes). Pending causes assert subject to throttling.
    pub fn write_ims(&mut self, now: SimTime, vector: u16, bits: u32, out: &mut NicOut) {
        self.note(RegOp::ImsWrite);
        let v = &mut self.vectors[vector as usize];
        let was = v.pending();
        v.ims |= bits;
        if was == 0 && v.pending() != 0 {
            Self::try_assert(v, vector, now, out);
        }
    }

    /// Write IMC (disable causes).
    pub fn write_imc(&mut self, vector: u16, bits: u32) {
        self.note(RegOp::ImcWrite);
        let v = &mut self.vectors[vector as usize];
        v.ims &= !bits;
        if v.pending() == 0 {
            v.line_high = false;
        }
    }

    pub fn ims(&self, vector: u16) -> u32 {
        self.vectors[vector as usize].ims
    }

    /// Set cause bits (hardware event or ICS write).
    #[inline]
    pub fn raise(&mut self, now: SimTime, vector: u16, bits: u32, out: &mut NicOut) {
        let v = &mut self.vectors[vector as usize];
        let was = v.pending();
        v.icr |= bits;
        if was == 0 && v.pending() != 0 {
            Self::try_assert(v, vector, now, out);
        }
    }

    #[inline(never)]
    fn try_assert(v: &mut Vector, vector: u16, now: SimTime, out: &mut NicOut) {
        if now >= v.next_allowed {
            Self::assert(v, vector, now, out);
        } else if v.timer.deadline() != Some(v.next_allowed) {
            let gen = v.timer.arm(v.next_allowed);
            out.push_event(v.next_allowed, NicEvent::Throttle { vector, gen });
        }
    }

    fn assert(v: &mut Vector, vector: u16, now: SimTime, out: &mut NicOut) {
        if let Some(last) = v.last_assert {
            let gap = now - last;
            v.min_spacing = Some(v.min_spacing.map_or(gap, |m| m.min(gap)));
            if gap < v.spacing_floor {
                v.spacing_violations += 1;
            }
        }
        v.last_assert = Some(now);
        // The rate limit (0 unless the chip has INTRL and it is set) bounds
        // the spacing with the throttle interval: the larger one holds.
        let total_ps = v.period_ps.max(v.intrl_ps) + v.carry_ps;
        let period = Nanos(total_ps / 1000);
        v.carry_ps = total_ps % 1000;
        v.spacing_floor = period;
        v.interrupts += 1;
        let causes = v.pending();
        v.interrupts_txdw += u64::from(causes & ICR_TXDW != 0);
        v.interrupts_rx += u64::from(causes & (ICR_RXT0 | ICR_RXDMT0 | ICR_RXO) != 0);
        v.line_high = true;
        v.next_allowed = now + period;
        out.asserts.push(vector);
        if !v.interval.is_zero() || v.intrl_ps != 0 {
            // The countdown runs; at its end pending causes assert again.
            let gen = v.timer.arm(v.next_allowed);
            out.push_event(v.next_allowed, NicEvent::Throttle { vector, gen });
        } else {
            v.timer.cancel();
        }
    }

    /// The throttle countdown of `vector` reached zero.
    pub fn throttle_expired(&mut self, now: SimTime, vector: u16, gen: u32, out: &mut NicOut) {
        let v = &mut self.vectors[vector as usize];
        if v.timer.fire(gen) && v.pending() != 0 {
            Self::assert(v, vector, now, out);
        }
    }

    /// Whether the INTx line of this port is asserted.
    pub fn line_high(&self) -> bool {
        self.vectors.iter().any(|v| v.line_high && v.pending() != 0)
    }

    pub fn interrupts(&self, vector: u16) -> u64 {
        self.vectors[vector as usize].interrupts
    }

    /// Interrupts of `vector` asserted with a TX completion (TXDW) among
    /// their causes, and with a receive cause (RXT0, RXDMT0, RXO).
    pub fn interrupts_by_cause(&self, vector: u16) -> (u64, u64) {
        let v = &self.vectors[vector as usize];
        (v.interrupts_txdw, v.interrupts_rx)
    }

    /// The CPU segment whose sends the next TDT writes post (an opaque id
    /// from the host: core and segment), or `None` outside one.
    pub fn set_post_owner(&mut self, owner: Option<u64>) {
        self.post_owner = owner;
    }

    /// The segment `owner` was preempted at `at`: its posts after `at` wait
    /// until it resumes (`resume_posted`).
    pub fn hold_posted(&mut self, owner: u64, at: SimTime) {
        for q in &mut self.txq {
            q.hold_posted(owner, at);
        }
    }

    /// The segment `owner` resumed at `now`: its held posts are reached as
    /// long after `now` as they were after its preemption.
    pub fn resume_posted(&mut self, owner: u64, now: SimTime) {
        for q in &mut self.txq {
            q.resume_posted(owner, now);
        }
    }

    /// Traffic counters of the queues a vector serves at `now`:
    /// (rx packets, rx bytes, tx packets, tx bytes) since the start. TX
    /// counts the frames the driver's CPU has posted by `now`.
    pub fn vector_counters(&mut self, vector: u16, now: SimTime) -> (u64, u64, u64, u64) {
        let mut c = (0, 0, 0, 0);
        for q in self.queues_of_vector(vector) {
            self.txq[q as usize].settle_posted(now);
            let (r, t) = (&self.rxq[q as usize], &self.txq[q as usize]);
            c.0 += r.packets;
            c.1 += r.bytes;
            c.2 += t.packets;
            c.3 += t.bytes;
        }
        c
    }

    /// Frames received into host memory on RX queue `queue`, and the frames
    /// of that queue dropped for want of a free descriptor.
    pub fn rx_queue_counters(&self, queue: u16) -> (u64, u64) {
        let q = &self.rxq[queue as usize];
        (q.packets, q.ring_drops)
    }

    /// Assertions of a vector that came sooner than the throttle interval in
    /// effect (zero unless the throttle is broken).
    pub fn spacing_violations(&self, vector: u16) -> u64 {
        self.vectors[vector as usize].spacing_violations
    }

    /// Smallest spacing between two assertions of a vector so far [ns].
    pub fn min_spacing(&self, vector: u16) -> Option<Nanos> {
        self.vectors[vector as usize].min_spacing
    }

    /// Current throttle interval of a vector [ns] and its raw register value.
    pub fn throttle(&self, vector: u16) -> (Nanos, u32) {
        let v = &self.vectors[vector as usize];
        (v.interval, v.reg)
    }

    /// The throttle interval of a vector as the port's clock counts it, in
    /// simulated time [ns] (the interval corrected by the clock error).
    pub fn throttle_period(&self, vector: u16) -> Nanos {
        Nanos(self.vectors[vector as usize].period_ps / 1000)
    }
}

/// The interval an INTRL register value gives: 4 us per count (ice
/// `ice_write_intrl` with `ICE_INTRL_GRAN_ABOVE_25`; i40e
/// `INTRL_REG_TO_USEC`).
fn intrl_nanos(reg: u32) -> Nanos {
    Nanos::from_us(reg as u64 * 4)
}

/// A duration counted by a clock that is `ppb` parts per billion fast, in
/// true time [ps]: `d * (1 - ppb / 1e9)`, rounded to the nearest ps.
fn on_clock_ps(d: Nanos, ppb: i32) -> u64 {
    let ps = d.as_ns() as i128 * 1000;
    let x = ps * ppb as i128;
    let half = 500_000_000i128 * x.signum();
    let corr = (x + half) / 1_000_000_000;
    (ps - corr).max(0) as u64
}

#[cfg(test)]
mod tests;
