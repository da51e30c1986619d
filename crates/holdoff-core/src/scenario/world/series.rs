//! Time-series sampling: per-vector interrupt rates and throttle intervals,
//! per-port throughput and RX ring fill, per-host CPU use per class.
//!
//! Units: rates [1/s], [bit/s]; times [ns]; CPU use [fraction].

use super::World;
use crate::units::SimTime;

/// Samples kept between two time-series points.
#[derive(Default, Clone)]
pub(super) struct SamplePrev {
    pub(super) vec_interrupts: Vec<Vec<u64>>,
    pub(super) port_rx_bytes: Vec<u64>,
    pub(super) port_tx_bytes: Vec<u64>,
    pub(super) host_busy: Vec<[u64; 3]>,
}

/// The most memory [bytes] `init_series` reserves for the time series:
/// all a validated scenario may keep (`MAX_SERIES_VALUES` f64 values).
const RESERVE_BYTES: u64 = crate::scenario::config::MAX_SERIES_VALUES * 8;

impl World {
    pub(super) fn init_series(&mut self) {
        let mut cols = Vec::new();
        for (pi, p) in self.ports.iter().enumerate() {
            let name = &self.port_names[pi];
            for v in 0..p.num_vectors() {
                cols.push(self.ts.add(format!("{name}.v{v}/interrupts_per_s")));
                cols.push(self.ts.add(format!("{name}.v{v}/throttle_interval_ns")));
            }
            cols.push(self.ts.add(format!("{name}/rx_bps")));
            cols.push(self.ts.add(format!("{name}/tx_bps")));
            cols.push(self.ts.add(format!("{name}/rx_ring_filled")));
        }
        for h in &self.hosts {
            for class in ["hardirq", "softirq", "app"] {
                cols.push(self.ts.add(format!("{}/cpu_{class}", h.name)));
            }
        }
        self.ts_cols = cols;
        // Room for every sample of the run up front: a column grown by
        // doubling holds up to twice its samples, plus the blocks it grew
        // out of (measured: 0.82 MB a host per simulated minute against
        // 0.38 MB of samples). Up to a bound (RESERVE_BYTES), so that a long
        // run that is stopped early has not claimed its whole series.
        let samples = self.end.as_ns() / self.sample_interval.as_ns().max(1) + 1;
        let cols = self.ts.values.len() as u64 + 1;
        if samples.saturating_mul(cols).saturating_mul(8) <= RESERVE_BYTES {
            self.ts.reserve(samples as usize);
        }
        self.prev = SamplePrev {
            vec_interrupts: self
                .ports
                .iter()
                .map(|p| vec![0; p.num_vectors()])
                .collect(),
            port_rx_bytes: vec![0; self.ports.len()],
            port_tx_bytes: vec![0; self.ports.len()],
            host_busy: vec![[0; 3]; self.hosts.len()],
        };
    }

    pub(super) fn sample(&mut self, now: SimTime) {
        let dt_s = self.sample_interval.as_ns() as f64 / 1e9;
        self.ts.push_time(now.as_ns());
        let mut col = 0;
        for (pi, p) in self.ports.iter().enumerate() {
            for v in 0..p.num_vectors() {
                let n = p.interrupts(v as u16);
                let d = n - self.prev.vec_interrupts[pi][v];
                self.prev.vec_interrupts[pi][v] = n;
                self.ts.push(self.ts_cols[col], d as f64 / dt_s);
                col += 1;
                self.ts
                    .push(self.ts_cols[col], p.throttle(v as u16).0.as_ns() as f64);
                col += 1;
            }
            let rx = p.stats.rx_bytes;
            let tx = p.stats.tx_bytes;
            self.ts.push(
                self.ts_cols[col],
                (rx - self.prev.port_rx_bytes[pi]) as f64 * 8.0 / dt_s,
            );
            col += 1;
            self.ts.push(
                self.ts_cols[col],
                (tx - self.prev.port_tx_bytes[pi]) as f64 * 8.0 / dt_s,
            );
            col += 1;
            self.prev.port_rx_bytes[pi] = rx;
            self.prev.port_tx_bytes[pi] = tx;
            let filled: u32 = (0..p.num_queues() as u16).map(|q| p.rx_ready(q)).sum();
            self.ts.push(self.ts_cols[col], filled as f64);
            col += 1;
        }
        for (hi, h) in self.hosts.iter_mut().enumerate() {
            let mut busy = [0u64; 3];
            for c in &mut h.cores {
                c.account(now);
                for (b, x) in busy.iter_mut().zip(c.busy_ns) {
                    *b += x;
                }
            }
            let cap = self.sample_interval.as_ns() as f64 * h.cores.len() as f64;
            for (b, prev) in busy.iter().zip(self.prev.host_busy[hi]) {
                self.ts.push(self.ts_cols[col], (b - prev) as f64 / cap);
                col += 1;
            }
            self.prev.host_busy[hi] = busy;
        }
    }
}
