//! The TX counts the moderation samples read: a post is counted when the
//! driver's CPU reaches it (its stamp), not when the segment that sends it
//! starts, and a preempted segment's later posts wait until it resumes.
//! Table-driven over the posting list's operations.

use super::super::{Posted, TxQueue};
use crate::units::{Nanos, SimTime};

fn queue() -> TxQueue {
    TxQueue {
        slots: Vec::new(),
        clean: 0,
        done: 0,
        in_nic: 0,
        unkicked: 0,
        fetch_free_at: SimTime::ZERO,
        timers: Default::default(),
        cq: Default::default(),
        cq_set: Default::default(),
        packets: 0,
        bytes: 0,
        posting: Default::default(),
    }
}

fn post(at: u64, owner: u64) -> Posted {
    Posted {
        at: SimTime(at),
        frames: 1,
        bytes: 1000,
        owner: Some(owner),
        held: None,
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    /// Post one 1000-byte frame stamped `at` by segment `owner`.
    Post(u64, u64),
    /// Settle at `now`, then expect this many frames counted in total.
    Count(u64, u64),
    /// Segment `owner` preempted at `at`.
    Hold(u64, u64),
    /// Segment `owner` resumed at `at`.
    Resume(u64, u64),
}

fn run(ops: &[Op]) {
    let mut q = queue();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Post(at, o) => q.note_posted(post(at, o)),
            Op::Count(now, want) => {
                q.settle_posted(SimTime(now));
                assert_eq!(q.packets, want, "step {i}: {op:?}");
                assert_eq!(q.bytes, want * 1000, "step {i}: {op:?}");
            }
            Op::Hold(at, o) => q.hold_posted(o, SimTime(at)),
            Op::Resume(at, o) => q.resume_posted(o, SimTime(at)),
        }
    }
}

#[test]
fn posts_count_when_the_cpu_reaches_them() {
    use Op::*;
    let cases: &[(&str, &[Op])] = &[
        (
            "a segment's three posts 10 us apart count one by one",
            &[
                Post(10_000, 1),
                Post(20_000, 1),
                Post(30_000, 1),
                Count(9_999, 0),
                Count(10_000, 1),
                Count(25_000, 2),
                Count(30_000, 3),
            ],
        ),
        (
            "posts from two cores arrive out of order and still count in time order",
            &[
                Post(30_000, 1),
                Post(10_000, 2),
                Count(15_000, 1),
                Count(30_000, 2),
            ],
        ),
        (
            "a preempted segment's posts after the preemption wait for the resume",
            &[
                Post(10_000, 1),
                Post(20_000, 1),
                Post(30_000, 1),
                Hold(15_000, 1),
                Count(100_000, 1),
                // Resumed 100 us later: the posts 5 and 15 us after the
                // preemption are reached 5 and 15 us after the resume.
                Resume(115_000, 1),
                Count(119_999, 1),
                Count(120_000, 2),
                Count(130_000, 3),
            ],
        ),
        (
            "the preempting segment's own posts are not held",
            &[
                Post(20_000, 1),
                Hold(15_000, 1),
                Post(16_000, 2),
                Post(17_000, 2),
                Count(17_000, 2),
                Resume(18_000, 1),
                Count(22_999, 2),
                Count(23_000, 3),
            ],
        ),
        (
            "a second preemption holds what is left of the first resume's posts",
            &[
                Post(20_000, 1),
                Post(40_000, 1),
                Hold(10_000, 1),
                Resume(50_000, 1),
                // now at 60 000 and 80 000
                Hold(70_000, 1),
                Count(75_000, 1),
                Resume(90_000, 1),
                Count(99_999, 1),
                Count(100_000, 2),
            ],
        ),
    ];
    for (name, ops) in cases {
        eprintln!("{name}");
        run(ops);
    }
}

#[test]
fn a_held_post_keeps_its_offset_from_the_preemption() {
    let mut q = queue();
    q.note_posted(post(50_000, 7));
    q.hold_posted(7, SimTime(40_000));
    assert_eq!(q.posting[0].held, Some(Nanos(10_000)));
    assert_eq!(q.posting[0].at, SimTime(u64::MAX));
}
