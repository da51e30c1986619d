//! Unit and property tests of the event queues, timers and RNG streams (`engine`).

use super::*;
use proptest::prelude::*;
use rand::RngExt;

#[test]
fn same_time_events_run_in_scheduling_order() {
    let mut q = EventQueue::new();
    q.schedule(SimTime(10), 'b');
    q.schedule(SimTime(5), 'a');
    q.schedule(SimTime(10), 'c');
    q.schedule(SimTime(10), 'd');
    let order: Vec<char> = std::iter::from_fn(|| q.pop_until(SimTime(100)).map(|x| x.1)).collect();
    assert_eq!(order, vec!['a', 'b', 'c', 'd']);
    assert_eq!(q.now(), SimTime(10));
}

/// One step of a random workload.
#[derive(Clone, Debug)]
enum Op {
    /// Schedule at `now + delta`.
    Schedule(u64),
    /// Pop everything due by `now + delta`.
    PopUntil(u64),
    /// Pop at most one event due by `now + delta`.
    PopOne(u64),
    /// Pop everything due by `now + delta`, then advance the clock to it.
    AdvanceTo(u64),
}

/// Delays of every scale: the same instant (ties), within one level-0
/// slot, a few slots, the few-ms timers of the model, and far events up
/// to the top level of the wheel.
fn delta() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => Just(0u64),
        3 => 0u64..64,
        3 => 0u64..5_000,
        3 => 0u64..5_000_000,
        1 => 0u64..(1u64 << 40),
        1 => 0u64..(1u64 << 62),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => delta().prop_map(Op::Schedule),
        1 => delta().prop_map(Op::PopUntil),
        3 => delta().prop_map(Op::PopOne),
        1 => delta().prop_map(Op::AdvanceTo),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// The wheel pops exactly what the binary heap pops, in the same
    /// order (time, then scheduling order), with the same clock and
    /// counters, for any interleaving of schedule / pop_until /
    /// advance_to; draining both at the end compares the rest.
    #[test]
    fn queue_pops_like_the_binary_heap(
        ops in proptest::collection::vec(op(), 1..400),
        // The thresholds: the default; always the wheel; switching
        // back and forth often.
        thresholds in 0..3usize,
    ) {
        match thresholds {
            0 => pops_like_the_heap(WheelQueue::<u32>::new(), &ops)?,
            1 => pops_like_the_heap(WheelQueue::<u32, 0, 0>::new(), &ops)?,
            _ => pops_like_the_heap(WheelQueue::<u32, 6, 2>::new(), &ops)?,
        }
    }
}

fn pops_like_the_heap<const W: usize, const H: usize>(
    mut new: WheelQueue<u32, W, H>,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    {
        let mut old: EventQueue<u32> = EventQueue::new();
        let mut id = 0u32;
        for op in ops.iter().cloned() {
            let now = old.now().0;
            match op {
                Op::Schedule(d) => {
                    let at = SimTime(now.saturating_add(d));
                    new.schedule(at, id);
                    old.schedule(at, id);
                    id += 1;
                }
                Op::PopUntil(d) => {
                    let until = SimTime(now.saturating_add(d));
                    loop {
                        let (a, b) = (new.pop_until(until), old.pop_until(until));
                        prop_assert_eq!(a, b);
                        if a.is_none() {
                            break;
                        }
                    }
                }
                Op::PopOne(d) => {
                    let until = SimTime(now.saturating_add(d));
                    prop_assert_eq!(new.pop_until(until), old.pop_until(until));
                }
                Op::AdvanceTo(d) => {
                    // As the callers do (end of run, test rigs): pop
                    // everything due by `t`, then move the clock there.
                    let t = SimTime(now.saturating_add(d));
                    loop {
                        let (a, b) = (new.pop_until(t), old.pop_until(t));
                        prop_assert_eq!(a, b);
                        if a.is_none() {
                            break;
                        }
                    }
                    new.advance_to(t);
                    old.advance_to(t);
                }
            }
            prop_assert_eq!(new.now(), old.now());
            prop_assert_eq!(new.len(), old.len());
            prop_assert_eq!(new.processed(), old.processed());
        }
        loop {
            let (a, b) = (
                new.pop_until(SimTime(u64::MAX)),
                old.pop_until(SimTime(u64::MAX)),
            );
            prop_assert_eq!(a, b);
            if a.is_none() {
                break;
            }
        }
        prop_assert!(new.is_empty() && old.is_empty());
    }
    Ok(())
}

#[test]
fn ties_across_levels_keep_scheduling_order() {
    // 'a' goes far up the wheel (scheduled at t = 0 for 1_000_000), 'b'
    // is scheduled for the same instant after the clock moved close to
    // it (it lands at a low level); 'a' was scheduled first, so it pops
    // first, as with the heap.
    let mut q = WheelQueue::<_, 0, 0>::new();
    q.schedule(SimTime(1_000_000), 'a');
    q.schedule(SimTime(999_990), 'x');
    assert_eq!(
        q.pop_until(SimTime(u64::MAX)),
        Some((SimTime(999_990), 'x'))
    );
    q.schedule(SimTime(1_000_000), 'b');
    q.schedule(SimTime(999_995), 'y');
    let order: Vec<char> =
        std::iter::from_fn(|| q.pop_until(SimTime(u64::MAX)).map(|x| x.1)).collect();
    assert_eq!(order, vec!['y', 'a', 'b']);
}

#[test]
fn a_bucket_freed_before_the_queue_left_the_wheel_is_not_reused() {
    // Found by the property test: the wheel frees the bucket of a far
    // time `a` as it drains into the short array, its `last` at `a`;
    // back in the wheel, `last` restarts at `now` (before `a`), and a
    // new event at `a` must not join the freed bucket its table entry
    // still names.
    let ops = [
        Op::Schedule(2_972_753_261_165_926_168),
        Op::Schedule(1_019_342_754_212_982_250),
        Op::PopUntil(0),
        Op::Schedule(0),
        Op::Schedule(0),
        Op::Schedule(0),
        Op::Schedule(613_350_256_150_793_621),
        Op::Schedule(0),
        Op::Schedule(0),
        Op::Schedule(0),
        Op::Schedule(0),
        Op::Schedule(0),
        Op::PopUntil(1_019_342_754_212_982_250),
        Op::Schedule(1_953_410_506_952_943_918),
        Op::Schedule(1_953_410_506_952_943_918),
        Op::Schedule(0),
        Op::Schedule(0),
        Op::Schedule(0),
        Op::Schedule(0),
    ];
    pops_like_the_heap(WheelQueue::<u32, 6, 2>::new(), &ops).unwrap();
}

#[test]
fn times_sharing_a_recent_entry_keep_scheduling_order() {
    // Three times whose buckets share one `recent` entry: scheduling
    // them in turn overwrites the entry each time, so a time gets a
    // second and third bucket while its first is still queued. The
    // events must still pop by (time, scheduling order), as the
    // reference heap's do, with the clock moving between schedules.
    let base = 1_000_000u64;
    let h = Wheel::recent_index(SimTime(base));
    let same: Vec<u64> = (base..)
        .filter(|&t| Wheel::recent_index(SimTime(t)) == h)
        .take(3)
        .collect();
    let mut q = WheelQueue::<u32, 0, 0>::new();
    let mut reference = EventQueue::new();
    let mut id = 0u32;
    for round in 0..4u64 {
        for &t in same.iter().rev() {
            for _ in 0..2 {
                q.schedule(SimTime(t), id);
                reference.schedule(SimTime(t), id);
                id += 1;
            }
        }
        // An early event pops between rounds, moving `last` forward.
        let early = SimTime(round * 10 + 1);
        q.schedule(early, id);
        reference.schedule(early, id);
        id += 1;
        assert_eq!(q.pop_until(early), reference.pop_until(early));
    }
    let heads = q.wheel.bucket_heads();
    assert!(heads > same.len(), "entries were overwritten");
    loop {
        let (a, b) = (
            q.pop_until(SimTime(u64::MAX)),
            reference.pop_until(SimTime(u64::MAX)),
        );
        assert_eq!(a, b);
        if a.is_none() {
            break;
        }
    }
}

#[test]
fn slab_stays_within_twice_the_peak_queue_length() {
    // Memory bound: popped nodes are reused and the slab grows only when
    // none is free, by doubling from 64 event nodes, so a steady
    // workload of n re-armed timers keeps the smallest 64 * 2^k >= n
    // event nodes (plus the sentinel), however long it runs.
    for (n, slab) in [(64u64, 65), (65, 129), (100, 129), (300, 513)] {
        let mut q = WheelQueue::<_, 0, 0>::new();
        for h in 0..n {
            q.schedule(SimTime(1 + h * 997), h);
        }
        for _ in 0..100_000 {
            let (t, h) = q.pop_until(SimTime(u64::MAX)).unwrap();
            q.schedule(t + Nanos(1 + (h * 7919 + t.0) % 2_000_000), h);
        }
        assert_eq!(q.len(), n as usize);
        assert!(q.in_wheel);
        assert_eq!(q.wheel.slab_len(), slab, "{n} timers");
    }
}

#[test]
fn pop_until_respects_horizon() {
    let mut q = EventQueue::new();
    q.schedule(SimTime(50), 1);
    assert!(q.pop_until(SimTime(49)).is_none());
    assert_eq!(q.pop_until(SimTime(50)), Some((SimTime(50), 1)));
}

#[test]
fn timer_generations_cancel_lazily() {
    let mut t = Timer::default();
    let g1 = t.arm(SimTime(10));
    let g2 = t.arm(SimTime(20)); // re-arm: g1 stale
    assert!(!t.fire(g1));
    assert!(t.fire(g2));
    assert!(!t.fire(g2), "fires once");
    let g3 = t.arm(SimTime(30));
    t.cancel();
    assert!(!t.fire(g3));
}

#[test]
fn rng_streams_are_independent_and_reproducible() {
    let a1: u64 = rng_stream(7, "gen").random();
    let a2: u64 = rng_stream(7, "gen").random();
    let b: u64 = rng_stream(7, "other").random();
    let c: u64 = rng_stream(8, "gen").random();
    assert_eq!(a1, a2);
    assert_ne!(a1, b);
    assert_ne!(a1, c);
}
