//! Dynamic queue limits (Linux `lib/dynamic_queue_limits.c`), the algorithm
//! behind byte queue limits (BQL) on a TX ring: how many bytes a driver may
//! have posted to the ring and not yet seen completed.
//!
//! Models (Linux 6.12 `dql_queued`, `dql_avail`, `dql_completed`,
//! `dql_reset`; the driver side is `netdev_tx_sent_queue`, which stops the
//! queue when the bytes in flight pass the limit, and
//! `netdev_tx_completed_queue`, which feeds the completions in and wakes the
//! queue when room is back):
//! - the limit starts at 0, so at first every posted packet stops the
//!   queue until its completion;
//! - a completion pass that finds the queue starved (it was over the
//!   limit and is now empty, or it was over the limit the previous time and
//!   everything queued before the previous pass has now completed) raises
//!   the limit by the bytes queued and completed since the previous pass
//!   plus the previous over-limit;
//! - a pass that finds the queue busy for the whole interval records the
//!   slack (the limit plus the previous over-limit, less twice the bytes
//!   completed in the pass, or the part of the last queued object not over
//!   the limit) and, once `slack_hold_time` has passed since the last
//!   change, lowers the limit by the least slack seen;
//! - the limit stays between `min_limit` (0) and `max_limit`
//!   (`DQL_MAX_LIMIT` = UINT_MAX/2 - UINT_MAX/16).
//!
//! Simplifies: counters are 64-bit (Linux wraps 32-bit counters and
//! compares them modulo 2^32, which is the same while fewer than 2^31 bytes
//! are in flight); `slack_hold_time` (HZ, one second in jiffies) is kept
//! in nanoseconds; the stall detector of 6.9+ (`dql_check_stall`, a
//! diagnostic) is left out.
//!
//! Units: bytes, times [ns].

use crate::units::{Nanos, SimTime};

/// `DQL_MAX_LIMIT`: (UINT_MAX / 2) - DQL_MAX_OBJECT (UINT_MAX / 16) [bytes].
pub const DQL_MAX_LIMIT: u32 = (u32::MAX / 2) - (u32::MAX / 16);

/// `slack_hold_time` as netdev queues set it (`dql_init(&q->dql, HZ)`): one
/// second.
pub const SLACK_HOLD: Nanos = Nanos::from_secs(1);

/// What a run's BQL did on one ring (report output).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DqlStats {
    /// The limit at the end of the run [bytes].
    pub limit_bytes: u32,
    /// Most bytes posted and not completed at once [bytes].
    pub inflight_max_bytes: u64,
    /// Times a post stopped the queue.
    pub stops: u64,
}

/// One queue's dynamic limit.
#[derive(Clone, Debug)]
pub struct Dql {
    num_queued: u64,
    /// `limit + num_completed` at the last completion pass.
    adj_limit: u64,
    last_obj_cnt: u32,
    limit: u32,
    num_completed: u64,
    prev_ovlimit: u32,
    prev_num_queued: u64,
    prev_last_obj_cnt: u32,
    lowest_slack: u32,
    slack_start: SimTime,
    slack_hold: Nanos,
    min_limit: u32,
    max_limit: u32,
    /// Most bytes in flight seen after a post [bytes] (a metric).
    pub inflight_max: u64,
    /// Times a post stopped the queue (`__QUEUE_STATE_STACK_XOFF` set).
    pub stops: u64,
}

impl Default for Dql {
    fn default() -> Self {
        Dql::new(SLACK_HOLD)
    }
}

impl Dql {
    /// `dql_init` + `dql_reset` at time 0.
    pub fn new(slack_hold: Nanos) -> Self {
        Dql {
            num_queued: 0,
            adj_limit: 0,
            last_obj_cnt: 0,
            limit: 0,
            num_completed: 0,
            prev_ovlimit: 0,
            prev_num_queued: 0,
            prev_last_obj_cnt: 0,
            lowest_slack: u32::MAX,
            slack_start: SimTime::ZERO,
            slack_hold,
            min_limit: 0,
            max_limit: DQL_MAX_LIMIT,
            inflight_max: 0,
            stops: 0,
        }
    }

    /// The counters for the report.
    pub fn stats(&self) -> DqlStats {
        DqlStats {
            limit_bytes: self.limit,
            inflight_max_bytes: self.inflight_max,
            stops: self.stops,
        }
    }

    /// The current limit [bytes].
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Bytes posted and not yet completed.
    pub fn inflight(&self) -> u64 {
        self.num_queued - self.num_completed
    }

    /// `dql_avail`: bytes that may still be queued before the limit; negative
    /// when over it.
    pub fn avail(&self) -> i64 {
        self.adj_limit as i64 - self.num_queued as i64
    }

    /// `netdev_tx_sent_queue`: `bytes` posted to the ring. Returns true when
    /// the queue must stop (over the limit).
    pub fn queued(&mut self, bytes: u32) -> bool {
        self.last_obj_cnt = bytes;
        self.num_queued += bytes as u64;
        self.inflight_max = self.inflight_max.max(self.inflight());
        let stop = self.avail() < 0;
        if stop {
            self.stops += 1;
        }
        stop
    }

    /// `dql_completed`: `count` bytes completed at `now` (one driver TX
    /// clean pass).
    pub fn completed(&mut self, now: SimTime, count: u32) {
        let count = count as u64;
        let num_queued = self.num_queued;
        debug_assert!(count <= num_queued - self.num_completed);
        let completed = self.num_completed + count;
        let mut limit = self.limit as u64;
        let mut ovlimit = posdiff(num_queued - self.num_completed, limit);
        let inprogress = num_queued - completed;
        let prev_inprogress = self.prev_num_queued - self.num_completed;
        let all_prev_completed = completed >= self.prev_num_queued;
        if (ovlimit > 0 && inprogress == 0) || (self.prev_ovlimit > 0 && all_prev_completed) {
            // Starved: grow by what was queued and completed in the last
            // interval, plus the previous over-limit.
            limit += posdiff(completed, self.prev_num_queued) + self.prev_ovlimit as u64;
            self.slack_start = now;
            self.lowest_slack = u32::MAX;
        } else if inprogress > 0 && prev_inprogress > 0 && !all_prev_completed {
            // Busy for the whole interval: the excess is slack.
            let slack = posdiff(
                limit + self.prev_ovlimit as u64,
                2 * (completed - self.num_completed),
            );
            let slack_last_objs = if self.prev_ovlimit > 0 {
                posdiff(self.prev_last_obj_cnt as u64, self.prev_ovlimit as u64)
            } else {
                0
            };
            let slack = slack.max(slack_last_objs).min(u32::MAX as u64) as u32;
            self.lowest_slack = self.lowest_slack.min(slack);
            if now > self.slack_start + self.slack_hold {
                limit = posdiff(limit, self.lowest_slack as u64);
                self.slack_start = now;
                self.lowest_slack = u32::MAX;
            }
        }
        let limit = limit.clamp(self.min_limit as u64, self.max_limit as u64) as u32;
        if limit != self.limit {
            self.limit = limit;
            ovlimit = 0;
        }
        self.adj_limit = limit as u64 + completed;
        self.prev_ovlimit = ovlimit.min(u32::MAX as u64) as u32;
        self.prev_last_obj_cnt = self.last_obj_cnt;
        self.num_completed = completed;
        self.prev_num_queued = num_queued;
    }
}

/// `POSDIFF(a, b)`: a - b if positive, else 0.
fn posdiff(a: u64, b: u64) -> u64 {
    a.saturating_sub(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u32 = 1514;

    /// A driver that, right after each completion pass, posts packets of
    /// `S` bytes while the queue is not stopped (the qdisc always has more),
    /// and a wire that completes `k` packets per pass (all of them if fewer
    /// are in flight), one pass every `period`. Returns the limit after each
    /// pass and the in-flight bytes after each refill.
    fn steady(k: u64, passes: usize, period: Nanos) -> Vec<(u32, u64)> {
        let mut d = Dql::default();
        let mut out = Vec::new();
        let mut now = SimTime::ZERO;
        let refill = |d: &mut Dql| while !d.queued(S) {};
        refill(&mut d);
        for _ in 0..passes {
            now += period;
            let n = (d.inflight() / S as u64).min(k);
            d.completed(now, (n * S as u64) as u32);
            refill(&mut d);
            out.push((d.limit(), d.inflight()));
        }
        out
    }

    #[test]
    fn the_limit_doubles_plus_one_packet_while_the_queue_starves() {
        // Limit L = m x S: the refill posts while avail >= 0, so m + 1
        // packets are in flight. While all of them complete in one pass the
        // queue is starved (over the limit, now empty): the limit grows by
        // the bytes queued and completed since the previous pass, m + 1
        // packets, plus the previous over-limit, 0 because the limit has
        // just changed. m: 0 -> 1 -> 3 -> 7 -> 15 (2^j - 1).
        let rows = steady(1000, 5, Nanos::from_us(100));
        let limits: Vec<u32> = rows.iter().map(|r| r.0).collect();
        assert_eq!(limits, [S, 3 * S, 7 * S, 15 * S, 31 * S]);
        for (l, inflight) in rows {
            assert_eq!(inflight, (l + S) as u64);
        }
    }

    #[test]
    fn a_steady_completion_pattern_converges_to_twice_the_bytes_per_pass() {
        // k = 10 packets complete per pass (one pass per 100 us). Growth as
        // above while all m + 1 in flight complete: 0, S, 3S, 7S, 15S. With
        // 15S, 16 are in flight and 10 complete: not empty, and the limit just
        // changed (previous over-limit 0): no change; the refill tops up to 16
        // again. Next pass: over the limit the previous time (16S > 15S:
        // ovlimit S) and all 16 queued before that pass are now completed (6
        // left + 10 done), so the second starvation rule adds the bytes queued
        // after the previous pass and completed in this one (4 of the 10; the
        // other 6 were queued before) plus the previous over-limit S: 15S + 5S
        // = 20S = 2kS. From then on 21 are in flight and 11 stay after each
        // pass, so part of what was queued before the previous pass is still
        // in flight (busy the whole interval): slack = (20S + S) - 2 x 10S = S each pass. One
        // second (10000 passes) after the last change the limit drops by the
        // least slack, S, to 19S; with 20S = 2kS in flight the second rule
        // holds again two passes later and adds S back. So the limit stays in
        // [2kS - S, 2kS], at 2kS all but two passes in 10000, and a refill
        // leaves limit + S (one packet over) in flight.
        let rows = steady(10, 30_000, Nanos::from_us(100));
        let tail = &rows[rows.len() - 20_000..];
        for &(l, inflight) in tail {
            assert!((19 * S..=20 * S).contains(&l), "limit {l}");
            assert_eq!(inflight, (l + S) as u64);
        }
        // It sits at the top (20S) except just after a one-second drop.
        let below = tail.iter().filter(|r| r.0 == 19 * S).count();
        assert_eq!(below, 2 * 2, "two passes below the top per second");
    }

    #[test]
    fn a_post_over_the_limit_stops_the_queue_and_a_completion_reopens_it() {
        let mut d = Dql::default();
        assert!(d.queued(S), "limit 0: the first packet stops the queue");
        assert_eq!(d.stops, 1);
        d.completed(SimTime(1000), S);
        assert_eq!(d.limit(), S);
        assert!(d.avail() >= 0);
        assert_eq!(d.inflight(), 0);
    }
}
