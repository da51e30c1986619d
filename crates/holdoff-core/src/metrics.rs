//! Metrics: passive recorders. Nothing reads them to make decisions.
//!
//! - `Ledger`: every packet injected is delivered, dropped with a named
//!   reason, or still in flight at the end; checked after every run.
//! - `LatencyHist`: HDR histogram of latencies [ns], 3 significant digits.
//! - `TimeSeries`: columnar samples at a fixed interval.
//!
//! Units: latencies [ns]; series values in the unit named by their key.

use crate::packet::DropReason;
use hdrhistogram::Histogram;

/// Packet accounting.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    pub injected: u64,
    pub delivered: u64,
    pub dropped: [u64; DropReason::ALL.len()],
}

impl Ledger {
    #[inline]
    pub fn drop(&mut self, r: DropReason) {
        self.dropped[r.index()] += 1;
    }
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }
    /// Whether `injected == delivered + dropped + in_flight`.
    pub fn balances(&self, in_flight: u64) -> bool {
        self.injected == self.delivered + self.dropped_total() + in_flight
    }
}

/// Latency histogram [ns].
#[derive(Clone, Debug)]
pub struct LatencyHist {
    h: Histogram<u64>,
}

impl Default for LatencyHist {
    fn default() -> Self {
        Self::new()
    }
}

/// The top of the latency range: 1 hour [ns].
const HIGHEST_NS: u64 = 3_600_000_000_000;
/// A histogram of 1 ns to `HIGHEST_NS` at 3 significant digits has buckets
/// up to 2^42 ns (2048 sub-buckets, the power of two above `HIGHEST_NS`);
/// larger values are recorded as `HIGHEST_NS` (the clamp of hdrhistogram's
/// `saturating_record`).
const UNTRACKABLE_NS: u64 = 1 << 42;

impl LatencyHist {
    /// 1 ns .. 1 hour, 3 significant digits (0.1 % resolution). The counts
    /// array starts small and grows to the largest value recorded (a
    /// histogram allocated for the whole hour is 270 KB of zeroed counts,
    /// per application, which made up most of a host's memory); the
    /// buckets, and so every figure read from it, are those of the
    /// full-range histogram (a test compares them).
    pub fn new() -> Self {
        let mut h = Histogram::new_with_bounds(1, 2, 3).expect("valid bounds");
        h.auto(true);
        LatencyHist { h }
    }
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // Values beyond the hour's top bucket are clamped to 1 hour.
        let v = if ns >= UNTRACKABLE_NS { HIGHEST_NS } else { ns };
        self.h
            .record(v)
            .expect("a histogram that grows holds any value below 2^42");
    }
    pub fn count(&self) -> u64 {
        self.h.len()
    }
    pub fn quantile_ns(&self, q: f64) -> u64 {
        self.h.value_at_quantile(q)
    }
    pub fn min_ns(&self) -> u64 {
        self.h.min()
    }
    pub fn max_ns(&self) -> u64 {
        self.h.max()
    }
    pub fn mean_ns(&self) -> f64 {
        self.h.mean()
    }
    /// (value [ns], count) for every recorded bucket, ascending.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.h
            .iter_recorded()
            .map(|v| {
                (
                    self.h.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect()
    }
}

/// Columnar time series.
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    pub t_ns: Vec<u64>,
    pub names: Vec<String>,
    pub values: Vec<Vec<f64>>,
}

impl TimeSeries {
    /// Register a series; returns its column index.
    pub fn add(&mut self, name: String) -> usize {
        self.names.push(name);
        self.values.push(Vec::new());
        self.names.len() - 1
    }
    /// Room for `samples` samples in every column registered so far.
    pub fn reserve(&mut self, samples: usize) {
        self.t_ns.reserve_exact(samples);
        for v in &mut self.values {
            v.reserve_exact(samples);
        }
    }
    pub fn push_time(&mut self, t_ns: u64) {
        self.t_ns.push(t_ns);
    }
    #[inline]
    pub fn push(&mut self, col: usize, v: f64) {
        self.values[col].push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_within_precision() {
        let mut h = LatencyHist::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        // Uniform 1..10000 us: the median is 5000 us within 0.1 %.
        let p50 = h.quantile_ns(0.5) as f64;
        assert!((p50 - 5_000_000.0).abs() / 5_000_000.0 < 1e-3, "{p50}");
        assert_eq!(h.count(), 10_000);
    }

    /// The growing histogram reads like hdrhistogram's full-range one
    /// (1 ns .. 1 hour, 3 digits, `saturating_record`), values beyond the
    /// range included: same count, min, max, mean, quantiles and buckets.
    #[test]
    fn growing_histogram_reads_like_the_full_range_one() {
        let full = |vals: &[u64]| {
            let mut h = Histogram::<u64>::new_with_bounds(1, HIGHEST_NS, 3).expect("bounds");
            for &v in vals {
                h.saturating_record(v);
            }
            h
        };
        let edges = [
            0,
            1,
            2,
            2047,
            2048,
            2049,
            999_999,
            1_000_000,
            HIGHEST_NS - 1,
            HIGHEST_NS,
            HIGHEST_NS + 1,
            UNTRACKABLE_NS - 1,
            UNTRACKABLE_NS,
            u64::MAX,
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut spread = Vec::new();
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Every scale from 1 ns to 2^50 ns.
            spread.push(x >> (14 + x % 50));
        }
        for vals in [
            &edges[..],
            &edges[..8],
            &spread[..],
            &[5u64; 3][..],
            &[][..],
        ] {
            let f = full(vals);
            let mut g = LatencyHist::new();
            for &v in vals {
                g.record(v);
            }
            assert_eq!(g.count(), f.len());
            assert_eq!(g.min_ns(), f.min());
            assert_eq!(g.max_ns(), f.max());
            assert_eq!(g.mean_ns().to_bits(), f.mean().to_bits());
            for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
                assert_eq!(g.quantile_ns(q), f.value_at_quantile(q), "q {q}");
            }
            let fb: Vec<(u64, u64)> = f
                .iter_recorded()
                .map(|v| {
                    (
                        f.highest_equivalent(v.value_iterated_to()),
                        v.count_at_value(),
                    )
                })
                .collect();
            assert_eq!(g.buckets(), fb);
        }
    }

    #[test]
    fn ledger_balance() {
        let mut l = Ledger {
            injected: 10,
            delivered: 6,
            ..Default::default()
        };
        l.drop(DropReason::RxRingFull);
        assert!(l.balances(3));
        assert!(!l.balances(2));
    }
}
