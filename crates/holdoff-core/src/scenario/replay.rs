//! Replay: one moderation algorithm fed a recorded sample sequence alone,
//! without a simulation (`holdoff replay-trace`).
//!
//! Models the driver's side of one vector only: the algorithm is built as a
//! scenario would build it (its `moderation` table, the port's chip, link
//! rate, HZ and vector count), gets each recorded sample in order, and its
//! register writes are returned per call. A work item it queues
//! (`schedule_work`) runs at its time, before the first later sample.
//!
//! Simplified: nothing feeds back. The samples were recorded under another
//! algorithm's registers, so an algorithm that would have changed the
//! traffic sees the traffic it did not cause; replay answers "what would
//! this function decide on these counters", not "what would the run do".
//! The invocation a moderator declares is not checked against the one the
//! trace was recorded with; every sample is one call.
//!
//! Units: time [ns]; registers in their field's units.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::moderation::{ModerationParams, Moderator, Sample};
use crate::scenario::config::moderation::build_ctx;
use crate::scenario::config::ModerationCfg;
use crate::units::{Nanos, SimTime};

/// The port a trace was recorded on (the trace's metadata).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayPort {
    /// Chip preset name (`82599`, `82574` ...).
    pub chip: String,
    /// Link rate [Mb/s].
    pub link_mbps: u32,
    /// The host's timer tick rate [1/s].
    pub hz: u32,
    /// Interrupt vectors of the port.
    pub vectors: u16,
    /// Delay of a queued work item [ns] (the host profile's wake-up plus
    /// context switch in a run).
    #[serde(default)]
    pub work_delay_ns: u64,
}

/// One call of the algorithm in a replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReplayStep {
    /// Index of the sample (None: the initial write, or a work item).
    pub sample: Option<usize>,
    pub t_ns: u64,
    /// "initial", "sample" or "work".
    pub call: &'static str,
    /// Registers written (only those written).
    pub itr_256ns: Option<u32>,
    pub eitr_us: Option<u32>,
    pub rdtr_1024ns: Option<u32>,
    pub radv_1024ns: Option<u32>,
    pub tidv_1024ns: Option<u32>,
    pub tadv_1024ns: Option<u32>,
    /// The algorithm's trace row of the call, as (name, value) pairs.
    pub trace: Vec<(String, i64)>,
}

fn step(
    sample: Option<usize>,
    t_ns: u64,
    call: &'static str,
    p: Option<ModerationParams>,
    m: &dyn Moderator,
) -> ReplayStep {
    let p = p.unwrap_or_default();
    let trace = if call == "initial" {
        Vec::new()
    } else {
        m.last_decision()
            .filter(|r| r.t_ns == t_ns)
            .map(|r| r.values.iter().map(|(k, v)| (k.to_string(), *v)).collect())
            .unwrap_or_default()
    };
    ReplayStep {
        sample,
        t_ns,
        call,
        itr_256ns: p.itr_256ns,
        eitr_us: p.eitr_us,
        rdtr_1024ns: p.rdtr_1024ns,
        radv_1024ns: p.radv_1024ns,
        tidv_1024ns: p.tidv_1024ns,
        tadv_1024ns: p.tadv_1024ns,
        trace,
    }
}

/// Build the algorithm of `table` for vector `vector` of `port`; `base`
/// resolves a `c` kind's relative `source`.
pub fn build(
    table: &ModerationCfg,
    port: &ReplayPort,
    vector: u16,
    base: Option<&Path>,
) -> Result<Box<dyn Moderator>, Error> {
    let chip = crate::nic::chip::by_name(&port.chip).ok_or_else(|| Error::Config {
        field: "chip".into(),
        message: format!("unknown chip preset {:?}", port.chip),
    })?;
    if vector >= port.vectors.max(1) {
        return Err(Error::Config {
            field: "vector".into(),
            message: format!("got {vector}; the port has {} vector(s)", port.vectors),
        });
    }
    table.validate("moderation", chip)?;
    let ctx = build_ctx(
        chip,
        port.link_mbps as u64 * 1_000_000,
        port.hz,
        Nanos(port.work_delay_ns),
        port.vectors.max(1),
        vector,
    );
    match table {
        ModerationCfg::C(c) => c
            .load(base, &ctx)
            .map(|m| Box::new(m) as Box<dyn Moderator>)
            .map_err(|e| Error::Config {
                field: format!("moderation.{}", e.field),
                message: e.message,
            }),
        _ => match table.algo() {
            Ok(a) => Ok(a.build(&ctx)),
            Err(_) => Err(Error::Config {
                field: "moderation.kind".into(),
                message: "a Python moderator is replayed from Python (holdoff.replay)".into(),
            }),
        },
    }
}

/// Feed `samples` (in call order) to `m`: its initial write, then one step
/// per call (samples and the work items they queue). Stops after a call
/// that failed, with the reason.
pub fn replay(m: &mut dyn Moderator, samples: &[Sample]) -> (Vec<ReplayStep>, Option<String>) {
    let mut steps = vec![step(None, 0, "initial", Some(m.initial()), m)];
    let mut work: Option<SimTime> = None;
    for (i, s) in samples.iter().enumerate() {
        if let Some(at) = work.filter(|at| *at <= s.now) {
            work = None;
            let p = m.run_work(at);
            steps.push(step(None, at.as_ns(), "work", p, m));
            if let Some(f) = m.failure() {
                return (steps, Some(f.to_string()));
            }
        }
        let p = m.on_sample(s);
        steps.push(step(Some(i), s.now.as_ns(), "sample", p, m));
        if let Some(f) = m.failure() {
            return (steps, Some(f.to_string()));
        }
        if let Some(at) = m.take_work() {
            work.get_or_insert(at);
        }
    }
    if let Some(at) = work {
        let p = m.run_work(at);
        steps.push(step(None, at.as_ns(), "work", p, m));
    }
    (steps, m.failure().map(str::to_string))
}
