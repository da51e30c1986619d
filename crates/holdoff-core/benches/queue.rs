//! Criterion micro-benchmark of the event queues, in one sitting, on a
//! workload shaped like the simulator's: `WheelQueue` (a sorted array while short,
//! a timing wheel while long; ids `queue/wheel/N`) against the reference
//! binary heap `EventQueue` (ids `queue/heap/N`). With 8 timers per host,
//! 1 host keeps `WheelQueue` in its short array (at most 32 events); 4
//! hosts (32 timers and the stale entries) and more run its wheel.
//!
//! Workload: N independent hosts, each with 8 short timers in flight (the
//! DMA, wire, ITR, RDTR/RADV and softirq events of one port). Every popped
//! event re-arms its timer 0.5 us to 2 ms ahead (a fixed pseudo-random
//! sequence, the same for both queues); one pop in four also re-arms a
//! second timer early, leaving a stale entry behind as lazy cancellation
//! does. The event packs into two words, as the simulator's does
//! (`QueueEvent`). Throughput is reported in popped events per second.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use holdoff_core::engine::{EventQueue, QueueEvent, WheelQueue};
use holdoff_core::units::SimTime;

/// Timers in flight per host.
const TIMERS: u64 = 8;
/// Events popped per iteration.
const POPS: u64 = 200_000;

#[derive(Clone, Copy)]
struct Ev {
    host: u32,
    payload: [u32; 2],
}

impl QueueEvent for Ev {
    #[inline(always)]
    fn pack(self) -> [u64; 2] {
        [
            self.host as u64 | (self.payload[0] as u64) << 32,
            self.payload[1] as u64,
        ]
    }
    #[inline(always)]
    fn unpack(w: [u64; 2]) -> Self {
        Ev {
            host: w[0] as u32,
            payload: [(w[0] >> 32) as u32, w[1] as u32],
        }
    }
}

/// The queue operations the workload uses (both queues have them).
trait Queue: Default {
    fn schedule(&mut self, at: SimTime, ev: Ev);
    fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Ev)>;
}

impl Queue for WheelQueue<Ev> {
    #[inline]
    fn schedule(&mut self, at: SimTime, ev: Ev) {
        WheelQueue::schedule(self, at, ev)
    }
    #[inline]
    fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Ev)> {
        WheelQueue::pop_until(self, until)
    }
}

impl Queue for EventQueue<Ev> {
    #[inline]
    fn schedule(&mut self, at: SimTime, ev: Ev) {
        EventQueue::schedule(self, at, ev)
    }
    #[inline]
    fn pop_until(&mut self, until: SimTime) -> Option<(SimTime, Ev)> {
        EventQueue::pop_until(self, until)
    }
}

/// xorshift64: a fixed delay sequence, identical for both queues.
#[inline]
fn next(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// A delay of 0.5 us to 2 ms [ns].
#[inline]
fn delay(s: &mut u64) -> u64 {
    500 + next(s) % 2_000_000
}

/// Run the workload for `hosts`; returns a checksum so nothing is optimised away.
fn run<Q: Queue>(hosts: u32) -> u64 {
    let mut q = Q::default();
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    for h in 0..hosts {
        for _ in 0..TIMERS {
            q.schedule(
                SimTime(delay(&mut s)),
                Ev {
                    host: h,
                    payload: [h; 2],
                },
            );
        }
    }
    let mut sum = 0u64;
    for i in 0..POPS {
        let (t, ev) = q.pop_until(SimTime(u64::MAX)).expect("never empty");
        sum = sum.wrapping_add(t.0 ^ ev.payload[0] as u64);
        q.schedule(SimTime(t.0 + delay(&mut s)), ev);
        if i % 4 == 0 {
            // An early re-arm: the old entry stays queued, stale.
            q.schedule(
                SimTime(t.0 + delay(&mut s)),
                Ev {
                    host: ev.host,
                    ..ev
                },
            );
            let (t2, ev2) = q.pop_until(SimTime(u64::MAX)).expect("never empty");
            sum = sum.wrapping_add(t2.0 ^ ev2.host as u64);
        }
    }
    sum
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("queue");
    g.sample_size(10);
    g.throughput(Throughput::Elements(POPS + POPS / 4));
    for hosts in [1u32, 4, 8, 16, 64, 256, 1024] {
        assert_eq!(run::<EventQueue<Ev>>(hosts), run::<WheelQueue<Ev>>(hosts));
        g.bench_with_input(BenchmarkId::new("heap", hosts), &hosts, |b, &h| {
            b.iter(|| std::hint::black_box(run::<EventQueue<Ev>>(h)))
        });
        g.bench_with_input(BenchmarkId::new("wheel", hosts), &hosts, |b, &h| {
            b.iter(|| std::hint::black_box(run::<WheelQueue<Ev>>(h)))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
