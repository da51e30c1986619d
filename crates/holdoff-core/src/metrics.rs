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

impl LatencyHist {
    pub fn new() -> Self {
        LatencyHist {
            // 1 ns .. 1 hour, 3 significant digits (0.1 % resolution).
            h: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
        }
    }
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // Values above 1 hour are clamped to the top bucket.
        self.h.saturating_record(ns);
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
