//! Moderation algorithms written in C (`kind = "c"`): the loader of the
//! versioned C ABI in `include/holdoff/moderator.h`.
//!
//! Models: a driver's moderation function, compiled from its C source
//! ([`compile`]) and called where the driver calls it. Per call the function
//! gets the [`Sample`] the built-ins get (plus jiffies at the host's HZ and
//! the vector index) and writes registers through a host callback; the
//! writes of one call become one [`ModerationParams`], which the world
//! applies through the port's register model (throttle kind, ranges, write
//! log) as for any built-in. When the driver calls it (per interrupt, per
//! poll, at NAPI completion, periodically) the moderator's descriptor says.
//! `schedule_work` queues the descriptor's work function, run by the
//! simulated kernel worker ([`Moderator::take_work`]).
//!
//! Simplified: register values are the `ModerationParams` fields (ids
//! `HOLDOFF_REG_*`); a value above the register's field is a failure of the
//! moderator, which stops the run with the reason. Only integer `params`.
//!
//! Isolation: C code runs in this process (the FFI, with its watchdog for
//! calls that overrun `call_limit_ms`, is the `holdoff-cabi` crate, so this
//! crate keeps `forbid(unsafe_code)`). A crash or an overrun ends the
//! process; the Python API therefore runs scenarios with a `c` kind in a
//! child process and maps its exit to `ModeratorError`
//! (python/holdoff/cmod.py).
//!
//! Units: time [ns]; register values in their field's units.

pub mod compile;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use holdoff_cabi::{Instance, Outcome, RawPort, RawSample};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    BuildCtx, FieldError, Invocation, ModerationParams, Moderator, ModeratorConfig, PortCaps,
    Sample, Throttle, TraceRow,
};
use crate::units::{Nanos, SimTime};

pub use holdoff_cabi::{ABI_VERSION, CALL_TIMEOUT_EXIT};

/// Register ids (`HOLDOFF_REG_*`): the `ModerationParams` field and the
/// largest value of the register field.
const REGS: [(&str, u32); 6] = [
    ("itr_256ns", 0xFFFF),
    ("eitr_us", 0x1FFF),
    ("rdtr_1024ns", 0xFFFF),
    ("radv_1024ns", 0xFFFF),
    ("tidv_1024ns", 0xFFFF),
    ("tadv_1024ns", 0xFFFF),
];

/// `kind = "c"`: a moderator compiled from a C file.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CCfg {
    /// The C source file, relative to the scenario file's folder.
    pub source: String,
    /// The function the driver calls (declared with `HOLDOFF_MODERATOR`).
    pub entry: String,
    /// Integer parameters, read with `holdoff_param(ctx, "name", default)`.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Wall-clock limit of one call into the C code [ms]; a call that
    /// takes longer ends the process (see docs/models/c-moderators.md).
    #[serde(default = "default_call_limit_ms")]
    #[schemars(range(min = 1, max = 600_000))]
    pub call_limit_ms: u32,
}

fn default_call_limit_ms() -> u32 {
    2000
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

impl CCfg {
    /// The source file, resolved against the scenario's folder `base`.
    pub fn source_path(&self, base: Option<&Path>) -> PathBuf {
        let p = Path::new(&self.source);
        match base {
            Some(b) if p.is_relative() => b.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// `file.c:entry`, for messages.
    pub fn label(&self) -> String {
        let file = Path::new(&self.source)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| self.source.clone());
        format!("{file}:{}", self.entry)
    }

    /// Compile (or take from the cache) and load; the moderator of one vector.
    /// Errors name the field (`source`, `entry`) relative to the table.
    pub fn load(&self, base: Option<&Path>, ctx: &BuildCtx) -> Result<CModerator, FieldError> {
        let path = self.source_path(base);
        if !path.is_file() {
            return Err(FieldError::new(
                "source",
                format!(
                    "C source file not found: {} (a relative path is read from the scenario \
                     file's folder)",
                    path.display()
                ),
            ));
        }
        let so = compile::build(&path).map_err(|m| FieldError::new("source", m))?;
        CModerator::new(self, &so, ctx).map_err(|m| FieldError::new("entry", m))
    }
}

impl ModeratorConfig for CCfg {
    fn validate(&self, _port: &PortCaps) -> Result<(), FieldError> {
        if self.source.trim().is_empty() {
            return Err(FieldError::new(
                "source",
                "must name a C file, e.g. source = \"my_itr.c\"",
            ));
        }
        if !is_identifier(&self.entry) {
            return Err(FieldError::new(
                "entry",
                format!(
                    "got {:?}; must be a C function name, e.g. entry = \"my_update_itr\"",
                    self.entry
                ),
            ));
        }
        for (k, v) in &self.params {
            if v.as_i64().is_none() {
                return Err(FieldError::new(
                    format!("params.{k}"),
                    format!("got {v}; C moderator params are integers (read with holdoff_param)"),
                ));
            }
        }
        super::check_range("call_limit_ms", self.call_limit_ms, 1, 600_000, " ms")
    }

    /// Built without the scenario's folder (the world loads `c` kinds with
    /// it through [`CCfg::load`]); an error becomes the moderator's failure.
    fn build(&self, ctx: &BuildCtx) -> Box<dyn Moderator> {
        match self.load(None, ctx) {
            Ok(m) => Box::new(m),
            Err(e) => Box::new(Failed(format!("{}: {}", e.field, e.message))),
        }
    }
}

/// A moderator that could not be built: it fails at its first call.
struct Failed(String);

impl Moderator for Failed {
    fn name(&self) -> &str {
        "c"
    }
    fn initial(&self) -> ModerationParams {
        ModerationParams::default()
    }
    fn invocation(&self) -> Invocation {
        Invocation::PerInterrupt
    }
    fn on_sample(&mut self, _s: &Sample) -> Option<ModerationParams> {
        None
    }
    fn failure(&self) -> Option<&str> {
        Some(&self.0)
    }
}

/// One vector's C moderator.
pub struct CModerator {
    inst: Instance,
    label: String,
    hz: u32,
    vector: u16,
    initial: ModerationParams,
    last: Option<TraceRow>,
    failure: Option<String>,
}

impl CModerator {
    /// Load `so` (built from `cfg.source`) for the vector of `b`; runs the
    /// descriptor's `init`, whose writes are the initial registers.
    pub fn new(cfg: &CCfg, so: &Path, b: &BuildCtx) -> Result<Self, String> {
        let port = RawPort {
            link_mbps: b.link_mbps,
            throttle: match b.throttle {
                Throttle::Itr256ns => 0,
                Throttle::Eitr256ns => 1,
                Throttle::Eitr1us => 2,
                Throttle::Eitr2048ns => 3,
                Throttle::Itr2us { .. } => 4,
                Throttle::Cq { .. } => 5,
            },
            rx_fifo_bytes: b.rx_fifo_bytes,
            vectors: b.vectors as u32,
            vector: b.vector as u32,
            hz: b.hz,
            work_delay_ns: b.work_delay.as_ns(),
        };
        let params = cfg
            .params
            .iter()
            .filter_map(|(k, v)| v.as_i64().map(|i| (k.clone(), i)))
            .collect();
        let label = cfg.label();
        let limit = Duration::from_millis(cfg.call_limit_ms as u64);
        let inst = Instance::load(so, &cfg.entry, &label, port, params, limit)?;
        let mut m = CModerator {
            inst,
            label,
            hz: b.hz,
            vector: b.vector,
            initial: ModerationParams::default(),
            last: None,
            failure: None,
        };
        let out = m.inst.init();
        m.initial = m
            .params(SimTime::ZERO, &out)
            .map_err(|e| format!("init: {e}"))?
            .unwrap_or_default();
        Ok(m)
    }

    /// The registers one call wrote, checked against their fields.
    fn params(&self, now: SimTime, out: &Outcome) -> Result<Option<ModerationParams>, String> {
        let fail = |e: String| format!("{} at t={} ns: {e}", self.label, now.as_ns());
        if let Some(e) = &out.error {
            return Err(fail(e.clone()));
        }
        for (i, &(name, max)) in REGS.iter().enumerate() {
            if let Some(v) = out.writes[i].filter(|&v| v > max) {
                return Err(fail(format!(
                    "wrote {v} to {name}; the register field holds 0 to {max}"
                )));
            }
        }
        let w = out.writes;
        if w.iter().all(Option::is_none) {
            return Ok(None);
        }
        Ok(Some(ModerationParams {
            itr_256ns: w[0],
            eitr_us: w[1],
            rdtr_1024ns: w[2],
            radv_1024ns: w[3],
            tidv_1024ns: w[4],
            tadv_1024ns: w[5],
            // ABI version 1 has no register id for INTRL or the completion
            // queue moderation (docs/models/c-moderators.md).
            ..ModerationParams::default()
        }))
    }

    /// Trace row and checked registers of one call.
    fn finish(
        &mut self,
        t: SimTime,
        input: Option<&Sample>,
        work: i64,
        out: &Outcome,
    ) -> Option<ModerationParams> {
        let mut values: Vec<(&'static str, i64)> = Vec::new();
        if let Some(s) = input {
            values.extend([
                ("rx_packets", s.rx_packets as i64),
                ("rx_bytes", s.rx_bytes as i64),
                ("tx_packets", s.tx_packets as i64),
                ("tx_bytes", s.tx_bytes as i64),
                ("interrupts", s.interrupts as i64),
            ]);
        }
        values.push(("work", work));
        for (i, (name, _)) in REGS.iter().enumerate() {
            if let Some(v) = out.writes[i] {
                values.push((name, v as i64));
            }
        }
        self.last = Some(TraceRow {
            t_ns: t.as_ns(),
            values,
        });
        match self.params(t, out) {
            Ok(p) => p,
            Err(e) => {
                self.failure = Some(e);
                None
            }
        }
    }
}

impl Moderator for CModerator {
    fn name(&self) -> &str {
        "c"
    }
    fn initial(&self) -> ModerationParams {
        self.initial
    }
    fn invocation(&self) -> Invocation {
        let d = self.inst.descriptor();
        match d.invocation {
            1 => Invocation::PerInterrupt,
            2 => Invocation::PerPoll,
            3 => Invocation::NapiComplete,
            4 => Invocation::Periodic {
                period: Nanos(d.period_ns),
                at_start: d.flags & 1 != 0,
            },
            _ => Invocation::Never,
        }
    }
    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        if self.failure.is_some() {
            return None;
        }
        let raw = RawSample {
            now_ns: s.now.as_ns(),
            rx_packets: s.rx_packets,
            rx_bytes: s.rx_bytes,
            tx_packets: s.tx_packets,
            tx_bytes: s.tx_bytes,
            interrupts: s.interrupts,
            now_jiffies: holdoff_cabi::jiffies(s.now.as_ns(), self.hz),
            vector: self.vector as u32,
            reserved: 0,
        };
        let out = self.inst.on_sample(&raw);
        self.finish(s.now, Some(s), 0, &out)
    }
    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
    fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
    fn take_work(&mut self) -> Option<SimTime> {
        let at = self.inst.take_work().map(SimTime);
        if let (Some(_), Some(row)) = (at, self.last.as_mut()) {
            if let Some(w) = row.values.iter_mut().find(|(k, _)| *k == "work") {
                w.1 = 1;
            }
        }
        at
    }
    fn run_work(&mut self, now: SimTime) -> Option<ModerationParams> {
        if self.failure.is_some() {
            return None;
        }
        let out = self.inst.run_work(now.as_ns());
        self.finish(now, None, 2, &out)
    }
}
