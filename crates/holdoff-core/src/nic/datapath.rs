//! The port's data path: frames arriving from the wire into the packet
//! buffer and RX descriptors (DMA, the RX delay timers), the driver taking
//! and refilling them, and the TX ring (post, kick, completion and the TX
//! delay timers, cleaning). The registers and vectors are in `nic`.
//!
//! Units: times [ns] (`SimTime`), sizes [bytes], rings [descriptors].

use super::*;

impl NicPort {
    // ------------------------------------------------------------------- RX

    /// A frame's last byte arrived from the wire.
    pub fn frame_arrived(&mut self, now: SimTime, pkt: Packet, out: &mut NicOut) {
        if let Some((done, queue)) = self.frame_arrived_held(now, pkt, out) {
            out.push_event(done, NicEvent::RxDmaDone { queue });
        }
    }

    /// `frame_arrived` for a caller that holds DMA completions itself (a
    /// frame train): the frame's DMA completion (time, receive queue), due
    /// when the receive buffer was empty, is returned instead of queued in
    /// `out` (it is then the only output).
    #[inline(always)]
    pub fn frame_arrived_held(
        &mut self,
        now: SimTime,
        pkt: Packet,
        out: &mut NicOut,
    ) -> Option<(SimTime, u16)> {
        if pkt.frame_bytes > self.cfg.max_frame_bytes {
            out.drops.push(DropReason::FrameOverMtu);
            return None;
        }
        if self.rx_fifo_used + pkt.frame_bytes > self.chip.rx_fifo_bytes {
            self.stats.rx_missed += 1;
            out.drops.push(DropReason::RxFifoOverrun);
            if self.cq_moderated() {
                // No overrun interrupt cause on a CQ chip.
                return None;
            }
            let q = self.rx_queue_of(&pkt);
            let vec = self.vector_of_queue(q);
            self.raise(now, vec, ICR_RXO, out);
            return None;
        }
        self.rx_fifo_used += pkt.frame_bytes;
        let start = now.max(self.rx_engine_free_at);
        self.rx_engine_free_at = start + self.chip.rx_desc_min_ns;
        let queue = self.rx_queue_of(&pkt);
        let done = start + self.chip.rx_dma_ns;
        let first = self.rx_fifo.is_empty();
        self.rx_fifo.push_back((pkt, done, queue));
        first.then_some((done, queue))
    }

    /// The DMA into host memory of the oldest frame in the receive buffer
    /// completed (`queue` is its receive queue).
    pub fn rx_dma_done(&mut self, now: SimTime, queue: u16, out: &mut NicOut) {
        // The next frame's completion is queued first, before anything
        // this one causes (as it was when queued at the frame's arrival).
        if let Some(&(_, t, q)) = self.rx_fifo.get(1) {
            out.push_event(t, NicEvent::RxDmaDone { queue: q });
        }
        self.rx_dma_complete(now, queue, out);
    }

    /// `rx_dma_done` for a caller that holds the next completion itself
    /// (a frame train): the next frame's completion (time, receive queue)
    /// is returned instead of queued in `out`; it comes before every
    /// output in `out`.
    #[inline(always)]
    pub fn rx_dma_done_held(
        &mut self,
        now: SimTime,
        queue: u16,
        out: &mut NicOut,
    ) -> Option<(SimTime, u16)> {
        let next = self.rx_fifo.get(1).map(|&(_, t, q)| (t, q));
        self.rx_dma_complete(now, queue, out);
        next
    }

    /// The oldest frame's DMA completion, after its successor's completion
    /// was queued (`rx_dma_done`) or handed back (`rx_dma_done_held`).
    #[inline(always)]
    fn rx_dma_complete(&mut self, now: SimTime, queue: u16, out: &mut NicOut) {
        // The frame is copied from the receive buffer straight into its
        // ring slot (not through a temporary: BENCHMARKS.md, second round).
        let frame_bytes = self
            .rx_fifo
            .front()
            .expect("a DMA completion has its frame in the receive buffer")
            .0
            .frame_bytes;
        debug_assert_eq!(
            (self.rx_fifo[0].1, self.rx_queue_of(&self.rx_fifo[0].0)),
            (now, queue)
        );
        self.rx_fifo_used -= frame_bytes;
        let ring = self.cfg.rx_ring;
        let thr = ring >> self.cfg.rdmts_shift;
        let vector = self.vector_of_queue(queue);
        let q = &mut self.rxq[queue as usize];
        if q.hw_free == 0 {
            q.ring_drops += 1;
            self.rx_fifo.pop_front();
            self.stats.rx_missed += 1;
            out.drops.push(DropReason::RxRingFull);
            return;
        }
        let idx = ring_wrap(q.head + q.filled, ring);
        q.slots[idx as usize] = self.rx_fifo[0].0;
        self.rx_fifo.pop_front();
        q.filled += 1;
        q.max_filled = q.max_filled.max(q.filled);
        q.hw_free -= 1;
        q.packets += 1;
        q.bytes += frame_bytes as u64;
        let crossed = q.hw_free == thr;
        self.stats.rx_packets += 1;
        self.stats.rx_bytes += frame_bytes as u64;
        if self.cq_moderated() {
            // The CQE: the queue's CQ moderation decides the event (no
            // descriptor-minimum cause on a CQ chip).
            self.cq_completion(now, queue, false, out);
            return;
        }
        if crossed {
            self.raise(now, vector, ICR_RXDMT0, out);
        }
        if !self.delay_timers_active() {
            self.raise(now, vector, ICR_RXT0, out);
            return;
        }
        let (rdtr, radv) = (self.rdtr, self.radv);
        match self.rxq[queue as usize].timers.on_event(now, rdtr, radv) {
            DelayOutcome::Immediate => self.raise(now, vector, ICR_RXT0, out),
            DelayOutcome::Arm { at, gen } => out.push_event(at, NicEvent::RxDelay { queue, gen }),
            DelayOutcome::Unchanged => {}
        }
    }

    /// An RX delay-timer check fired.
    pub fn rx_delay_expired(&mut self, now: SimTime, queue: u16, gen: u32, out: &mut NicOut) {
        if self.cq_moderated() {
            self.cq_expired(now, queue, false, gen, out);
        } else if self.rxq[queue as usize].timers.on_expiry(gen) {
            let v = self.vector_of_queue(queue);
            self.raise(now, v, ICR_RXT0, out);
        }
    }

    /// Frames in the receive buffer (arrived, their DMA not complete). The
    /// oldest one's completion is queued whenever there is one.
    #[inline(always)]
    pub fn rx_buffer_frames(&self) -> usize {
        self.rx_fifo.len()
    }

    /// Receive descriptors with DD set, waiting for the driver.
    #[inline]
    pub fn rx_ready(&self, queue: u16) -> u32 {
        self.rxq[queue as usize].filled
    }

    /// The driver takes the next received packet (its descriptor is held
    /// until `rx_refill`).
    #[inline]
    pub fn rx_take(&mut self, queue: u16) -> Option<Packet> {
        let ring = self.cfg.rx_ring;
        let q = &mut self.rxq[queue as usize];
        if q.filled == 0 {
            return None;
        }
        let p = q.slots[q.head as usize];
        q.head = ring_wrap(q.head + 1, ring);
        q.filled -= 1;
        q.host_held += 1;
        self.note(RegOp::RxTake);
        Some(p)
    }

    /// RDT write: every descriptor the driver took is given back with a fresh buffer.
    /// Returns how many were returned.
    #[inline]
    pub fn rx_refill(&mut self, queue: u16) -> u32 {
        let q = &mut self.rxq[queue as usize];
        let n = q.host_held;
        q.hw_free += n;
        q.host_held = 0;
        self.note(RegOp::RdtWrite(n));
        n
    }

    /// Descriptors taken by the driver and not yet returned.
    pub fn rx_held(&self, queue: u16) -> u32 {
        self.rxq[queue as usize].host_held
    }

    /// Highest number of filled descriptors seen on a queue.
    pub fn rx_max_filled(&self, queue: u16) -> u32 {
        self.rxq[queue as usize].max_filled
    }

    // ------------------------------------------------------------------- TX

    /// Free TX descriptors the driver may post.
    #[inline]
    pub fn tx_free(&self, queue: u16) -> u32 {
        let q = &self.txq[queue as usize];
        self.cfg.tx_ring - 1 - q.used()
    }

    /// Post one packet (descriptor write in host memory; no MMIO).
    /// Returns false (and takes nothing) if the ring is full.
    #[inline]
    pub fn tx_post(&mut self, queue: u16, pkt: Packet) -> bool {
        if self.tx_free(queue) == 0 {
            return false;
        }
        let ring = self.cfg.tx_ring;
        let q = &mut self.txq[queue as usize];
        let idx = (q.clean + q.used()) % ring;
        q.slots[idx as usize] = pkt;
        q.unkicked += 1;
        true
    }

    /// TDT write: posted descriptors become visible to the chip. The chip
    /// fetches them one per `tx_desc_min_ns` (pipelined with transmission:
    /// the next frame's DMA overlaps the current frame on the wire); each
    /// frame starts on the wire `tx_dma_ns` after its fetch, or when the line
    /// is free, and its descriptor is written back when its last byte left.
    pub fn tx_kick(&mut self, now: SimTime, queue: u16, out: &mut NicOut) {
        let n = self.txq[queue as usize].unkicked;
        self.note(RegOp::TdtWrite(n));
        let ring = self.cfg.tx_ring;
        let q = &mut self.txq[queue as usize];
        let mut posted_bytes = 0u64;
        for _ in 0..q.unkicked {
            let idx = (q.clean + q.done + q.in_nic) % ring;
            let pkt = q.slots[idx as usize];
            let fetch = now.max(q.fetch_free_at);
            q.fetch_free_at = fetch + self.chip.tx_desc_min_ns;
            let dep = self.egress.send(fetch + self.chip.tx_dma_ns, pkt);
            q.in_nic += 1;
            posted_bytes += pkt.frame_bytes as u64;
            self.stats.tx_packets += 1;
            self.stats.tx_bytes += pkt.frame_bytes as u64;
            out.frames.push(dep.arrive);
            out.push_event(dep.end, NicEvent::TxDone { queue });
        }
        if q.unkicked > 0 {
            q.note_posted(Posted {
                at: now,
                frames: q.unkicked,
                bytes: posted_bytes,
                owner: self.post_owner,
                held: None,
            });
        }
        q.unkicked = 0;
    }

    /// A frame's last byte left the port; its descriptor is written back.
    pub fn tx_done(&mut self, now: SimTime, queue: u16, out: &mut NicOut) {
        let ring = self.cfg.tx_ring;
        let rs = {
            let q = &mut self.txq[queue as usize];
            // Posted before it was sent: its post is due by now.
            q.settle_posted(now);
            let pkt = q.slots[((q.clean + q.done) % ring) as usize];
            q.in_nic -= 1;
            q.done += 1;
            // A TSO send's frames other than its last carry no RS: no
            // write-back cause (the driver reclaims them with the last).
            !pkt.tso_more
        };
        if !rs {
            return;
        }
        let vector = self.vector_of_queue(queue);
        if self.cq_moderated() {
            self.cq_completion(now, queue, true, out);
        } else if !self.delay_timers_active() {
            self.raise(now, vector, ICR_TXDW, out);
        } else {
            // RS on every send's last frame; IDE per driver switch. Without IDE: immediate.
            let (tidv, tadv) = if self.cfg.set_ide {
                (self.tidv, self.tadv)
            } else {
                (Nanos::ZERO, Nanos::ZERO)
            };
            match self.txq[queue as usize].timers.on_event(now, tidv, tadv) {
                DelayOutcome::Immediate => self.raise(now, vector, ICR_TXDW, out),
                DelayOutcome::Arm { at, gen } => {
                    out.push_event(at, NicEvent::TxDelay { queue, gen })
                }
                DelayOutcome::Unchanged => {}
            }
        }
    }

    /// A TX delay-timer check fired.
    pub fn tx_delay_expired(&mut self, now: SimTime, queue: u16, gen: u32, out: &mut NicOut) {
        if self.cq_moderated() {
            self.cq_expired(now, queue, true, gen, out);
        } else if self.txq[queue as usize].timers.on_expiry(gen) {
            let v = self.vector_of_queue(queue);
            self.raise(now, v, ICR_TXDW, out);
        }
    }

    /// Written-back TX descriptors waiting to be reclaimed.
    #[inline]
    pub fn tx_done_count(&self, queue: u16) -> u32 {
        self.txq[queue as usize].done
    }

    /// Reclaim up to `max` completed TX descriptors; returns how many.
    #[inline]
    pub fn tx_clean(&mut self, queue: u16, max: u32) -> u32 {
        self.tx_clean_with(queue, max, |_| {})
    }

    /// Reclaim up to `max` completed TX descriptors, oldest first, showing
    /// each one's packet to `f` (the host frees its buffer); returns how
    /// many.
    #[inline]
    pub fn tx_clean_with(&mut self, queue: u16, max: u32, mut f: impl FnMut(&Packet)) -> u32 {
        let ring = self.cfg.tx_ring;
        let q = &mut self.txq[queue as usize];
        let n = q.done.min(max);
        for i in 0..n {
            f(&q.slots[((q.clean + i) % ring) as usize]);
        }
        q.clean = (q.clean + n) % ring;
        q.done -= n;
        n
    }

    // --------------------------------------------------------------- ledger

    /// Packets held by this port that are not on a wire: in the RX packet
    /// buffer, in filled RX descriptors, or in TX descriptors not yet fetched.
    pub fn packets_held(&self) -> u64 {
        let rx: u64 = self.rxq.iter().map(|q| q.filled as u64).sum();
        // Fetched frames are committed to the wire and counted there.
        let tx: u64 = self.txq.iter().map(|q| q.unkicked as u64).sum();
        self.rx_fifo.len() as u64 + rx + tx
    }
}
