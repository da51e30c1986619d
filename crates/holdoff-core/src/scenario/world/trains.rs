//! Frame trains: a generator's frames into the port at the far end of its
//! link, run outside the event queue while nothing else is due.
//!
//! Models nothing new: it is a way of running the per-frame engine. A
//! generator feeding a port has three kinds of per-frame events, each the
//! child of an earlier one: its emission (`GenEmit`, child of the previous
//! emission), the frame's arrival at the port (`Arrive`, child of its
//! emission) and the DMA completion into the ring (`RxDmaDone`, child of the
//! frame's arrival when the receive buffer was empty, else of the previous
//! completion). When a generator's emission pops, a *train run* keeps these
//! children out of the queue (*virtual*, each with its creation number) and
//! runs them itself, as long as the next one is due before the queue's next
//! event (a tie goes to the queued event, which was scheduled first). Any
//! output that reaches the rest of the world (an interrupt assertion, a
//! throttle or delay timer, a busy poller to wake) first puts every virtual
//! event back into the queue in creation order, exactly as the per-frame
//! engine would have queued them, and is then scheduled as usual. The run
//! also takes over this train's events that were queued before it (the
//! link's frames in flight, the port's pending DMA completion) when they
//! reach the head of the queue. At its end the run queues what is left,
//! again in creation order.
//!
//! Why the order is the per-frame engine's: the queue pops by (time,
//! scheduling order). While a run holds virtual events nothing else is
//! scheduled, so every queued event was scheduled before every virtual one:
//! a queued event pops before a virtual event of its own time, which is the
//! rule the run applies; among themselves the virtual events keep their
//! creation order, which is the order their parents ran in, and their
//! parents ran in the per-frame engine's order. Event counts are kept
//! (every event a run handles counts as processed). `tests/trains.rs`
//! compares the log of every event handled ([`World::log_events`]) with
//! trains on and off over random floods, `tests/test_trains.py` the reports
//! of 500 random multi-group scenarios and of every bundled example;
//! `HOLDOFF_TRAINS=off` (or [`World::set_trains`]) runs the per-frame
//! engine alone.
//!
//! Simplifies: a train is a generator into a port (frames between two
//! ports are not trains); the run needs the queue in its short mode (its
//! next event is then known without popping it) and stops while a busy
//! poller owns a NAPI instance. Results do not depend on either. Where
//! every frame meets an interrupt or another event first, runs hold
//! nothing and only cost their set-up; after such a run the generator's
//! next emissions run without one, for a back-off that doubles up to 1024
//! emissions (`MAX_TRAIN_BACKOFF`).
//!
//! Units: times [ns].

use super::{Endpoint, Ev, World, NIC_RX_DMA_DONE, TAG_ARRIVE, TAG_GEN_EMIT, TAG_NIC};
use crate::nic::NicEvent;
use crate::units::SimTime;

/// The environment variable that turns frame trains off (`off` or `0`);
/// they are on otherwise.
pub const ENV_TRAINS: &str = "HOLDOFF_TRAINS";

/// The trains' setting from the environment (see [`ENV_TRAINS`]).
pub(super) fn trains_from_env() -> bool {
    !matches!(std::env::var(ENV_TRAINS).as_deref(), Ok("off") | Ok("0"))
}

/// Events one run handles at most before it queues what is left (so that
/// the run loop's guard and progress callback are reached).
const MAX_RUN_EVENTS: u32 = 4096;

/// A run that held nothing (every frame met an interrupt, a timer or
/// another host's event first) costs its set-up for nothing: the
/// generator's next emissions run without a train, 1 the first time, twice
/// as many after each further empty run, up to this many; a run that holds
/// events resets it. Whether a run is made never changes an event's order.
const MAX_TRAIN_BACKOFF: u32 = 1024;

/// A held event's order: its due time [ns] in the high 64 bits, its
/// creation number in the low 64, so that one compare orders two events as
/// the queue would.
type Key = u128;

/// No event: after every other.
const NONE: Key = Key::MAX;

fn key(t: SimTime, c: u64) -> Key {
    (Key::from(t.as_ns()) << 64) | Key::from(c)
}

fn key_time(k: Key) -> SimTime {
    SimTime((k >> 64) as u64)
}

/// A run's state: which of the train's pending events are queued and which
/// it holds (by `Key`); a queued one is marked `*_real`.
pub(super) struct Train {
    gen: u16,
    port: u16,
    /// The next creation number.
    cseq: u64,
    /// The generator's next emission, if held (`NONE`: not held).
    emit: Key,
    /// The next emission is queued.
    emit_real: bool,
    /// Frames at the head of the link whose arrival is queued (those after
    /// them are held: the oldest here, the rest in `World::train_arrivals`).
    arrive_real: u64,
    /// The oldest held arrival (`NONE`: none held).
    arrive: Key,
    /// The port's oldest DMA completion, if held, and its receive queue.
    dma: Key,
    dma_queue: u16,
    /// The oldest DMA completion is queued.
    dma_real: bool,
    /// Something was scheduled since the queue's head was last read.
    dirty: bool,
}

/// Which of a train's events comes next.
#[derive(Clone, Copy)]
enum Next {
    Emit,
    Arrive,
    Dma,
}

impl World {
    /// Turn frame trains on or off for this world's runs (default: on,
    /// unless `HOLDOFF_TRAINS` is `off` or `0` when the world is built).
    /// Results are the same either way.
    pub fn set_trains(&mut self, on: bool) {
        self.trains = on;
    }

    /// Log every event handled from now on, in the order handled (a train
    /// run's held events as the queue would have held them); see
    /// [`World::take_event_log`]. For tests: the log grows with the run.
    pub fn log_events(&mut self) {
        self.event_log.get_or_insert_with(Vec::new);
    }

    /// The events handled since [`World::log_events`]: (time [ns], the
    /// event as the queue stores it). Logging stops.
    pub fn take_event_log(&mut self) -> Option<Vec<(SimTime, [u64; 2])>> {
        self.event_log.take()
    }

    /// Log a held event the run handles.
    #[inline(always)]
    fn train_log(&mut self, t: SimTime, ev: Ev) {
        if let Some(log) = &mut self.event_log {
            log.push((t, crate::engine::QueueEvent::pack(ev)));
        }
    }

    /// Events train runs handled outside the queue so far.
    pub fn train_events(&self) -> u64 {
        self.train_total
    }

    /// A generator's emission popped at `now`: run it as a train when its
    /// link ends at a port, else as one event. Returns false when no run
    /// was made (the caller handles the emission).
    #[inline]
    pub(super) fn train_run(&mut self, now: SimTime, gen: u16) -> bool {
        let skip = &mut self.train_backoff[gen as usize].0;
        if *skip > 0 {
            *skip -= 1;
            return false;
        }
        let np = self.ports.len();
        let Endpoint::Port(port) = self.peer[np + gen as usize] else {
            return false;
        };
        if self.busy_owned != 0 || self.q.peek_short().is_none() {
            return false;
        }
        let mut tr = Train {
            gen,
            port,
            cseq: 0,
            emit: NONE,
            emit_real: false,
            arrive_real: self.gen_egress[gen as usize].in_flight(),
            arrive: NONE,
            dma: NONE,
            dma_queue: 0,
            dma_real: self.ports[port as usize].rx_buffer_frames() > 0,
            dirty: false,
        };
        self.train_arrivals.clear();
        self.train_emit(now, &mut tr);
        let held = self.train_loop(&mut tr);
        // Every held event the run handled counts as processed (the queue
        // counted the events it popped).
        self.q.add_processed(held);
        self.train_virtual += held;
        self.train_total += held;
        let (skip, backoff) = &mut self.train_backoff[gen as usize];
        if held == 0 {
            *backoff = (*backoff * 2).clamp(1, MAX_TRAIN_BACKOFF);
            *skip = *backoff;
        } else {
            *backoff = 0;
        }
        self.train_materialize(&mut tr);
        true
    }

    /// The run: held events while they come before the queue's head, the
    /// head while it is one of the train's. Returns how many held events it
    /// handled.
    #[inline(always)]
    fn train_loop(&mut self, tr: &mut Train) -> u64 {
        let until = self.pop_limit.as_ns();
        // Logging is turned on only between runs (tests).
        let logging = self.event_log.is_some();
        let mut handled = 1u32;
        let mut held = 0u64;
        loop {
            let Some(head) = self.q.peek_short() else {
                return held;
            };
            // Held events strictly before the head run first (a tie goes
            // to the queued event: it was scheduled before every held one).
            let bound = match head {
                Some((at, _)) => at.as_ns().min(until.saturating_add(1)),
                None => until.saturating_add(1),
            };
            let bound = Key::from(bound) << 64;
            tr.dirty = false;
            while !tr.dirty {
                let (k, kind) = self.train_next(tr);
                if k >= bound {
                    break;
                }
                let t = key_time(k);
                self.q.advance_to(t);
                held += 1;
                match kind {
                    Next::Emit => {
                        if logging {
                            self.train_log(t, Ev::GenEmit { gen: tr.gen });
                        }
                        self.train_emit(t, tr)
                    }
                    Next::Arrive => {
                        if logging {
                            self.train_log(t, Ev::Arrive { ep: tr.port });
                        }
                        tr.arrive = self.train_arrivals.pop_front().unwrap_or(NONE);
                        self.train_arrive(t, tr);
                    }
                    Next::Dma => {
                        tr.dma = NONE;
                        let q = tr.dma_queue;
                        let ev = NicEvent::RxDmaDone { queue: q };
                        if logging {
                            self.train_log(t, Ev::Nic { port: tr.port, ev });
                        }
                        self.train_dma(t, q, tr);
                    }
                }
                handled += 1;
                if handled >= MAX_RUN_EVENTS {
                    return held;
                }
            }
            if tr.dirty {
                // Something was scheduled: read the head again.
                if self.busy_owned != 0 {
                    return held;
                }
                continue;
            }
            match head {
                Some((at, w)) if at.as_ns() <= until && self.train_owns(tr, w) => {
                    let (t, w) = self.q.pop_until_packed(at).expect("the head is due");
                    self.train_handle_queued(t, w, tr);
                    handled += 1;
                    if handled >= MAX_RUN_EVENTS || self.busy_owned != 0 {
                        return held;
                    }
                }
                _ => return held,
            }
        }
    }

    /// The train's earliest held event (`NONE` when it holds none) and its
    /// kind.
    #[inline(always)]
    fn train_next(&self, tr: &Train) -> (Key, Next) {
        // Branches rather than conditional moves of 128-bit keys: the
        // three kinds come round in a pattern the predictor learns.
        let (e, a, d) = (tr.emit, tr.arrive, tr.dma);
        if a < e {
            if d < a {
                (d, Next::Dma)
            } else {
                (a, Next::Arrive)
            }
        } else if d < e {
            (d, Next::Dma)
        } else {
            (e, Next::Emit)
        }
    }

    /// Whether queued event `w` is one of this train's (queued before the
    /// run or put back by it).
    #[inline(always)]
    fn train_owns(&self, tr: &Train, w: [u64; 2]) -> bool {
        let a = (w[0] >> 8) as u16;
        match w[0] & 0xff {
            TAG_GEN_EMIT => a == tr.gen && tr.emit_real,
            TAG_ARRIVE => a == tr.port && tr.arrive_real > 0,
            TAG_NIC => a == tr.port && (w[0] >> 40) & 0xff == NIC_RX_DMA_DONE && tr.dma_real,
            _ => false,
        }
    }

    /// A queued event of the train, popped at its turn.
    fn train_handle_queued(&mut self, t: SimTime, w: [u64; 2], tr: &mut Train) {
        if let Some(log) = &mut self.event_log {
            log.push((t, w));
        }
        match w[0] & 0xff {
            TAG_GEN_EMIT => {
                tr.emit_real = false;
                self.train_emit(t, tr);
            }
            TAG_ARRIVE => {
                tr.arrive_real -= 1;
                self.train_arrive(t, tr);
            }
            _ => {
                tr.dma_real = false;
                self.train_dma(t, (w[0] >> 24) as u16, tr);
            }
        }
    }

    /// The generator's emission (`gen_emit`, its children held).
    #[inline(always)]
    fn train_emit(&mut self, now: SimTime, tr: &mut Train) {
        let (arrive, next) = self.emit_frame(now, tr.gen);
        if let Some(at) = arrive {
            let k = key(at, tr.cseq);
            if tr.arrive == NONE {
                tr.arrive = k;
            } else {
                self.train_arrivals.push_back(k);
            }
            tr.cseq += 1;
        }
        tr.emit = match next {
            Some(t) => {
                tr.cseq += 1;
                key(t, tr.cseq - 1)
            }
            None => NONE,
        };
    }

    /// The oldest frame on the link arrives at the port (`arrive`).
    #[inline(always)]
    fn train_arrive(&mut self, now: SimTime, tr: &mut Train) {
        let pkt = self.gen_egress[tr.gen as usize].arrived();
        let dma = self.ports[tr.port as usize].frame_arrived_held(now, pkt, &mut self.out);
        if let Some((at, queue)) = dma {
            // The frame found the receive buffer empty, so no completion
            // was pending (each has its frame in the buffer): this one is
            // the port's only one, held as `train_flush` would hold it.
            debug_assert!(tr.dma == NONE && !tr.dma_real);
            tr.dma = key(at, tr.cseq);
            tr.dma_queue = queue;
            tr.cseq += 1;
        }
        self.train_flush(now, tr);
    }

    /// The port's oldest DMA completion (`handle`'s `RxDmaDone`).
    #[inline(always)]
    fn train_dma(&mut self, now: SimTime, queue: u16, tr: &mut Train) {
        let next = self.ports[tr.port as usize].rx_dma_done_held(now, queue, &mut self.out);
        // No busy poller owns an instance while a run goes on
        // (`kick_busy_poller` would find none).
        debug_assert_eq!(self.busy_owned, 0);
        if let Some((at, q)) = next {
            // The next frame's completion, created before anything this
            // one caused (`rx_dma_done` queues it first): held, as
            // `train_flush` holds a first completion (the one being
            // handled was this train's only one, held or queued).
            debug_assert!(tr.dma == NONE && !tr.dma_real);
            tr.dma = key(at, tr.cseq);
            tr.dma_queue = q;
            tr.cseq += 1;
        }
        self.train_flush(now, tr);
    }

    /// The port's outputs (`flush`): its DMA completion is held; anything
    /// else puts the held events back first and is then scheduled as
    /// `flush` and `handle` would.
    #[inline(always)]
    fn train_flush(&mut self, now: SimTime, tr: &mut Train) {
        let port = tr.port;
        let quiet = self.out.frames.is_empty()
            && self.out.drops.is_empty()
            && self.out.asserts.is_empty()
            && self.pending_asserts.is_empty();
        if quiet {
            // The frequent cases: nothing, or only the next DMA completion.
            match self.out.event_count() {
                0 => return,
                1 => {
                    if let (at, NicEvent::RxDmaDone { queue }) = self.out.event(0) {
                        if tr.dma == NONE && !tr.dma_real {
                            tr.dma = key(at, tr.cseq);
                            tr.dma_queue = queue;
                            tr.cseq += 1;
                            self.out.clear_events();
                            return;
                        }
                    }
                }
                _ => {}
            }
        }
        if self.out.has_events() {
            let mut external = false;
            for i in 0..self.out.event_count() {
                let (at, ev) = self.out.event(i);
                match ev {
                    NicEvent::RxDmaDone { queue }
                        if !external && tr.dma == NONE && !tr.dma_real =>
                    {
                        tr.dma = key(at, tr.cseq);
                        tr.dma_queue = queue;
                        tr.cseq += 1;
                    }
                    _ => {
                        if !external {
                            external = true;
                            self.train_materialize(tr);
                        }
                        if let NicEvent::RxDmaDone { .. } = ev {
                            tr.dma_real = true;
                        }
                        self.q.schedule(at, Ev::Nic { port, ev });
                    }
                }
            }
            self.out.clear_events();
        }
        if !self.out.frames.is_empty() {
            self.train_materialize(tr);
            self.flush_frames(port);
        }
        self.flush_drops_and_asserts(port);
        if !self.pending_asserts.is_empty() {
            self.train_materialize(tr);
            self.process_asserts(now);
        }
    }

    /// Queue every held event in creation order.
    fn train_materialize(&mut self, tr: &mut Train) {
        tr.dirty = true;
        // The held emission and DMA completion, by creation number (the low
        // 64 bits of their keys).
        let mut held: [(u64, Key, Next); 2] = [(0, NONE, Next::Emit); 2];
        let mut n = 0;
        if tr.emit != NONE {
            held[n] = (tr.emit as u64, tr.emit, Next::Emit);
            n += 1;
            tr.emit = NONE;
            tr.emit_real = true;
        }
        if tr.dma != NONE {
            held[n] = (tr.dma as u64, tr.dma, Next::Dma);
            n += 1;
            tr.dma = NONE;
            tr.dma_real = true;
        }
        let held = &mut held[..n];
        held.sort_unstable_by_key(|h| h.0);
        let mut hi = 0;
        let (gen, port, queue) = (tr.gen, tr.port, tr.dma_queue);
        while tr.arrive != NONE {
            let a = tr.arrive;
            while hi < held.len() && held[hi].0 < a as u64 {
                self.train_schedule(key_time(held[hi].1), held[hi].2, gen, port, queue);
                hi += 1;
            }
            tr.arrive = self.train_arrivals.pop_front().unwrap_or(NONE);
            self.q.schedule(key_time(a), Ev::Arrive { ep: port });
            tr.arrive_real += 1;
        }
        for h in &held[hi..] {
            self.train_schedule(key_time(h.1), h.2, gen, port, queue);
        }
    }

    fn train_schedule(&mut self, t: SimTime, k: Next, gen: u16, port: u16, queue: u16) {
        match k {
            Next::Emit => self.q.schedule(t, Ev::GenEmit { gen }),
            Next::Dma => self.q.schedule(
                t,
                Ev::Nic {
                    port,
                    ev: NicEvent::RxDmaDone { queue },
                },
            ),
            Next::Arrive => unreachable!("arrivals are queued from the list"),
        }
    }
}
