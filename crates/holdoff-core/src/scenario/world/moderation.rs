//! Moderation: the algorithm attached to each vector, the per-interrupt and
//! per-poll calls, and the periodic (driver watchdog) calls. An algorithm
//! sees only a `Sample` (counter deltas since its previous call) and returns
//! register settings, which are written to the NIC here.
//!
//! On request ([`World::record_samples`], off by default so that a run's
//! report does not change) every call's `Sample` is also kept with its port
//! and vector: the input sequence a moderator saw, to replay it to another
//! moderator without the simulation (`holdoff battery --trace`). At most
//! [`MAX_SAMPLE_RECORDS`] calls are kept; later ones are counted.
//!
//! Units: times [ns].

use super::{Ev, World};
use crate::error::Error;
use crate::host::profile::HostProfile;
use crate::moderation::{Invocation, ModerationParams, Moderator, Sample};
use crate::nic::chip::ChipProfile;
use crate::scenario::config::moderation::build_ctx;
use crate::scenario::config::{parse_rate, NicCfg};
use crate::units::{Nanos, SimTime};

/// Builds externally supplied algorithms: (class, params, "host.nic", vector).
pub type ExternalFactory<'a> = dyn FnMut(
        &str,
        &std::collections::BTreeMap<String, serde_json::Value>,
        &str,
        u16,
    ) -> Result<Box<dyn Moderator>, String>
    + 'a;

/// Build the moderation algorithm of one vector of a port: the NIC's config
/// (`hosts[hi].nics[ni]`), its chip, the host's HZ and work-item delay
/// ([`work_delay`]), the rate of its link,
/// its "host.nic" name and vector count.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_moderator(
    n: &NicCfg,
    c: &ChipProfile,
    (hz, work_delay): (u32, Nanos),
    link_rate: &str,
    name: &str,
    nvec: usize,
    (hi, ni): (usize, usize),
    vector: u16,
    factory: &mut Option<&mut ExternalFactory>,
    base: Option<&std::path::Path>,
) -> Result<Box<dyn Moderator>, Error> {
    let link_bps = parse_rate(link_rate).unwrap_or(1_000_000_000);
    if let crate::scenario::config::ModerationCfg::C(cfg) = &n.moderation {
        let ctx = build_ctx(c, link_bps, hz, work_delay, nvec as u16, vector);
        return match cfg.load(base, &ctx) {
            Ok(m) => Ok(Box::new(m)),
            Err(e) => Err(Error::Config {
                field: format!("hosts[{hi}].nics[{ni}].moderation.{}", e.field),
                message: e.message,
            }),
        };
    }
    match n.moderation.algo() {
        Ok(a) => Ok(a.build(&build_ctx(c, link_bps, hz, work_delay, nvec as u16, vector))),
        Err(py) => {
            let field = format!("hosts[{hi}].nics[{ni}].moderation.class");
            let Some(f) = factory.as_deref_mut() else {
                return Err(Error::Config {
                    field,
                    message: format!(
                        "{:?} is a Python moderator: run this scenario from Python (holdoff.run) so the class can be loaded",
                        py.class
                    ),
                });
            };
            f(&py.class, &py.params, name, vector)
                .map_err(|message| Error::Config { field, message })
        }
    }
}

/// How long a work item queued from the poll routine waits before it runs
/// on a host with profile `prof`: `queue_work` wakes the CPU's kernel
/// worker thread, which then runs after a context switch (the profile's
/// `wakeup_ns + context_switch_ns`). ASSUMPTION: the worker is the next
/// thread to run once the softirq returns; the softirq's own remaining work
/// and other runnable threads are not added.
pub(super) fn work_delay(prof: &HostProfile) -> Nanos {
    prof.wakeup_ns + prof.context_switch_ns
}

/// One moderation call's input: the port, the vector (0 for the periodic
/// whole-port call) and the sample handed to the algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleRecord {
    pub port: u16,
    pub vector: u16,
    pub sample: Sample,
}

/// Recorded samples kept per run: a per-interrupt algorithm is called tens
/// of thousands of times a second; 1 000 000 rows (about 64 MB) cover a
/// 10-second run at 100 000 calls/s. Later calls are counted, not kept.
pub const MAX_SAMPLE_RECORDS: usize = 1_000_000;

/// The recorded samples of a run and how many did not fit.
#[derive(Default)]
pub(super) struct SampleLog {
    rows: Vec<SampleRecord>,
    dropped: u64,
}

/// Counters at the previous moderation sample of a port.
#[derive(Clone, Copy, Default)]
pub(super) struct ModPrev {
    pub(super) rx_packets: u64,
    pub(super) rx_bytes: u64,
    pub(super) tx_packets: u64,
    pub(super) tx_bytes: u64,
    pub(super) interrupts: u64,
}

impl World {
    /// Keep every moderation call's sample from now on (see
    /// [`World::take_samples`]); off unless asked for.
    pub fn record_samples(&mut self) {
        self.sample_log.get_or_insert_with(SampleLog::default);
    }

    /// The samples recorded so far, in call order, and the count of calls
    /// past [`MAX_SAMPLE_RECORDS`] that were not kept; None when recording
    /// is off. Recording stops.
    pub fn take_samples(&mut self) -> Option<(Vec<SampleRecord>, u64)> {
        self.sample_log.take().map(|log| (log.rows, log.dropped))
    }

    /// If the algorithm of (port, vector) failed, stop the run now.
    pub(super) fn check_failure(&mut self, now: SimTime, port: u16, vector: u16) -> bool {
        let m = &self.moderators[port as usize][vector as usize];
        let Some(why) = m.failure() else {
            return false;
        };
        if self.aborted.is_none() {
            let msg = format!(
                "moderation algorithm {:?} on {} vector {} failed at {} ns: {}",
                m.name(),
                self.port_names[port as usize],
                vector,
                now.as_ns(),
                why
            );
            self.aborted = Some((now, msg));
            self.end = self.end.min(now);
        }
        true
    }

    /// A per-interrupt or per-poll moderation call for one vector: sample
    /// its queues' counters since the previous call, let the algorithm
    /// decide, write the register. Returns the CPU cost of the write.
    pub(super) fn moderate(
        &mut self,
        now: SimTime,
        port: u16,
        vector: u16,
        when: Invocation,
        prof: &HostProfile,
    ) -> Nanos {
        let m = &self.moderators[port as usize][vector as usize];
        if m.invocation() != when {
            return Nanos::ZERO;
        }
        let (rx_packets, rx_bytes, tx_packets, tx_bytes) =
            self.ports[port as usize].vector_counters(vector, now);
        let p = &self.ports[port as usize];
        let cur = ModPrev {
            rx_packets,
            rx_bytes,
            tx_packets,
            tx_bytes,
            interrupts: p.interrupts(vector),
        };
        let Some(params) = self.decide(now, port, vector, cur, true) else {
            return Nanos::ZERO;
        };
        self.ports[port as usize].apply_params(now, &params, Some(vector), &mut self.out);
        self.flush(port);
        prof.mmio_write_ns
    }

    /// One moderation call of the algorithm of (port, vector) on the
    /// counters `cur`: the sample is their change since its previous call.
    /// A decision is traced (with the vector when `per_vector`); returns the
    /// registers to write, or None (no change, or the algorithm failed).
    fn decide(
        &mut self,
        now: SimTime,
        port: u16,
        vector: u16,
        cur: ModPrev,
        per_vector: bool,
    ) -> Option<ModerationParams> {
        let (p, v) = (port as usize, vector as usize);
        let prev = std::mem::replace(&mut self.mod_prev[p][v], cur);
        let sample = Sample {
            now,
            rx_packets: cur.rx_packets - prev.rx_packets,
            rx_bytes: cur.rx_bytes - prev.rx_bytes,
            tx_packets: cur.tx_packets - prev.tx_packets,
            tx_bytes: cur.tx_bytes - prev.tx_bytes,
            interrupts: cur.interrupts - prev.interrupts,
        };
        if let Some(log) = &mut self.sample_log {
            if log.rows.len() < MAX_SAMPLE_RECORDS {
                log.rows.push(SampleRecord {
                    port,
                    vector,
                    sample,
                });
            } else {
                log.dropped += 1;
            }
        }
        let params = self.moderators[p][v].on_sample(&sample);
        if self.check_failure(now, port, vector) {
            return None;
        }
        // A queued work item (DIM's profile apply): its decision is traced
        // now, its write when it runs.
        let work = self.moderators[p][v].take_work();
        if let Some(at) = work {
            self.q.schedule(at.max(now), Ev::ModWork { port, vector });
        }
        if params.is_none() && work.is_none() {
            return None;
        }
        self.trace_last(port, vector, per_vector);
        params
    }

    /// Append the last decision of the algorithm of (port, vector) to the
    /// port's trace (with the vector when `per_vector`).
    fn trace_last(&mut self, port: u16, vector: u16, per_vector: bool) {
        let (p, v) = (port as usize, vector as usize);
        if let Some(row) = self.moderators[p][v].last_decision() {
            let mut row = row.clone();
            if per_vector {
                row.values.push(("vector", vector as i64));
            }
            if self.traces[p].len() < super::MAX_TRACE_ROWS_PER_PORT {
                self.traces[p].push(row);
            } else {
                self.traces_dropped[p] += 1;
            }
        }
    }

    /// A work item of the algorithm of (port, vector) runs: write what it
    /// programs and trace it.
    pub(super) fn mod_work(&mut self, now: SimTime, port: u16, vector: u16) {
        let params = self.moderators[port as usize][vector as usize].run_work(now);
        if self.check_failure(now, port, vector) {
            return;
        }
        self.trace_last(port, vector, true);
        if let Some(params) = params {
            self.ports[port as usize].apply_params(now, &params, Some(vector), &mut self.out);
            self.flush(port);
        }
    }

    /// The driver watchdog of a port, if it has one: the algorithm's own
    /// period, or the Linux e1000 2-s watchdog (which runs in every
    /// `InterruptThrottleRate` mode for its software interrupt).
    pub(super) fn watchdog_period(&self, port: usize) -> Option<(Nanos, bool)> {
        let m = &self.moderators[port][0];
        match m.invocation() {
            Invocation::Periodic { period, at_start } => Some((period, at_start)),
            _ if m.watchdog_ics_rxdmt0() => Some((crate::moderation::e1000_5x::WATCHDOG, true)),
            _ => None,
        }
    }

    /// A periodic moderation call: sample the port's counters, let the
    /// algorithm decide, write its registers.
    pub(super) fn watchdog(&mut self, now: SimTime, port: u16) {
        // A change during the run may have left the port without one.
        let Some((period, _)) = self.watchdog_period(port as usize) else {
            self.watchdog_pending[port as usize] = false;
            return;
        };
        let periodic = matches!(
            self.moderators[port as usize][0].invocation(),
            Invocation::Periodic { .. }
        );
        if periodic {
            self.watchdog_sample(now, port);
            if self.aborted.is_some() {
                return;
            }
        }
        if self.moderators[port as usize][0].watchdog_ics_rxdmt0() {
            // "Cause software interrupt to ensure rx ring is cleaned".
            self.ports[port as usize].raise(now, 0, crate::nic::ICR_RXDMT0, &mut self.out);
        }
        self.flush(port);
        let next = now + period;
        if next <= self.end {
            self.q.schedule(next, Ev::Watchdog { port });
        } else {
            self.watchdog_pending[port as usize] = false;
        }
    }

    /// The periodic call's sample: the whole port's counters.
    fn watchdog_sample(&mut self, now: SimTime, port: u16) {
        let p = &self.ports[port as usize];
        let interrupts: u64 = (0..p.num_vectors() as u16).map(|v| p.interrupts(v)).sum();
        let cur = ModPrev {
            rx_packets: p.stats.rx_packets,
            rx_bytes: p.stats.rx_bytes,
            tx_packets: p.stats.tx_packets,
            tx_bytes: p.stats.tx_bytes,
            interrupts,
        };
        if let Some(params) = self.decide(now, port, 0, cur, false) {
            self.ports[port as usize].apply_params(now, &params, None, &mut self.out);
        }
    }
}
