//! The public entry points used by the CLI and the Python bindings.

use crate::error::Error;
use crate::scenario::world::{ExternalFactory, Progress, SampleRecord};
use crate::scenario::{report, Scenario, World};
use std::path::Path;
use std::time::{Duration, Instant};

pub use crate::VERSION;

/// Wall-clock measurements of a run (not part of the deterministic report).
#[derive(Clone, Copy, Debug)]
pub struct Perf {
    pub wall_time_s: f64,
    pub events_processed: u64,
    /// Packets injected into the model (generators + host sends + replies).
    pub sim_packets: u64,
    pub events_per_s: f64,
    pub packets_per_s: f64,
    /// The longest the event queue grew [events] (the model's largest
    /// queue; its memory is about `peak_queued_events * queued_event_bytes`).
    pub peak_queued_events: u64,
    /// Memory of one queued event [bytes].
    pub queued_event_bytes: u64,
    /// Connected groups the run was scheduled by (each ran from its own
    /// queue for stretches of simulated time); 0 when it took the single
    /// queue (one group, or a scenario the group scheduler does not take).
    pub scheduled_groups: u64,
    /// Frame events (emissions, arrivals, DMA completions) that frame
    /// trains handled outside the event queue (`scenario::world::trains`);
    /// 0 with trains off. Counted in `events_processed` too.
    pub train_events: u64,
}

/// A finished run.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub report_json: String,
    pub perf: Perf,
    /// Why the run stopped early (a moderation algorithm failed), if it did;
    /// the report then covers the run up to that moment.
    pub aborted: Option<String>,
    /// The run was stopped on request (the control callback returned
    /// false) at this simulated time [ns]; the report covers it up to then.
    pub interrupted_at_ns: Option<u64>,
    /// Every moderation call's sample and the count not kept past
    /// `MAX_SAMPLE_RECORDS`, when the run was asked to record them
    /// ([`run_toml_recorded_in`]); None otherwise.
    pub samples: Option<(Vec<SampleRecord>, u64)>,
}

/// How often a controlled run calls its control callback [wall time].
pub const CONTROL_EVERY: Duration = Duration::from_millis(50);

/// Parse, validate and build a world (the seed may be overridden).
pub fn build(text: &str, seed_override: Option<u64>) -> Result<World, Error> {
    build_with(text, seed_override, None)
}

/// As `build`, with a factory for externally supplied moderation algorithms.
pub fn build_with(
    text: &str,
    seed_override: Option<u64>,
    factory: Option<&mut ExternalFactory>,
) -> Result<World, Error> {
    build_in(text, seed_override, factory, None)
}

/// As `build_with`, for a scenario file in `base_dir`: relative `capture`
/// paths are resolved against it (None: the working directory).
pub fn build_in(
    text: &str,
    seed_override: Option<u64>,
    factory: Option<&mut ExternalFactory>,
    base_dir: Option<&Path>,
) -> Result<World, Error> {
    let mut s = Scenario::from_toml_in(text, base_dir)?;
    if let Some(seed) = seed_override {
        s.seed = seed;
    }
    World::build(&s, factory)
}

/// Run a scenario given as TOML text.
pub fn run_toml(text: &str, seed_override: Option<u64>) -> Result<RunOutput, Error> {
    run_toml_with(text, seed_override, None)
}

/// Run a scenario whose moderation may use externally supplied algorithms.
pub fn run_toml_with(
    text: &str,
    seed_override: Option<u64>,
    factory: Option<&mut ExternalFactory>,
) -> Result<RunOutput, Error> {
    run_toml_controlled(text, seed_override, factory, &mut |_| true)
}

/// As `run_toml_with`, for a scenario file in `base_dir` (see `build_in`).
pub fn run_toml_in(
    text: &str,
    seed_override: Option<u64>,
    factory: Option<&mut ExternalFactory>,
    base_dir: Option<&Path>,
) -> Result<RunOutput, Error> {
    run_toml_controlled_in(text, seed_override, factory, &mut |_| true, base_dir)
}

/// Run a scenario under the resource guard, calling `control` about every
/// [`CONTROL_EVERY`] of wall time with the run's progress; when it returns
/// false the run stops at that simulated instant and its report covers the
/// run up to then (`RunOutput::interrupted_at_ns`).
///
/// Errors: `Error::Run` when the resource guard stops the run (the message
/// names the limit, the simulated time and the likely scenario field).
pub fn run_toml_controlled(
    text: &str,
    seed_override: Option<u64>,
    factory: Option<&mut ExternalFactory>,
    control: &mut dyn FnMut(&Progress) -> bool,
) -> Result<RunOutput, Error> {
    run_toml_controlled_in(text, seed_override, factory, control, None)
}

/// As `run_toml_controlled`, for a scenario file in `base_dir`: relative
/// `capture` paths are resolved against it (None: the working directory).
pub fn run_toml_controlled_in(
    text: &str,
    seed_override: Option<u64>,
    factory: Option<&mut ExternalFactory>,
    control: &mut dyn FnMut(&Progress) -> bool,
    base_dir: Option<&Path>,
) -> Result<RunOutput, Error> {
    run_toml_recorded_in(text, seed_override, factory, control, base_dir, false)
}

/// As `run_toml_controlled_in`; with `record_samples` the output also holds
/// every sample handed to a moderation algorithm (`RunOutput::samples`).
/// Recording does not change the run or its report.
pub fn run_toml_recorded_in(
    text: &str,
    seed_override: Option<u64>,
    factory: Option<&mut ExternalFactory>,
    control: &mut dyn FnMut(&Progress) -> bool,
    base_dir: Option<&Path>,
    record_samples: bool,
) -> Result<RunOutput, Error> {
    let mut w = build_in(text, seed_override, factory, base_dir)?;
    if record_samples {
        w.record_samples();
    }
    let t0 = Instant::now();
    let stats = w.run_guarded(None, control, CONTROL_EVERY)?;
    let wall = t0.elapsed().as_secs_f64();
    let report_json = report::to_json(&w)?;
    let events = w.events_processed();
    let pkts = w.ledger().injected;
    let wall_nz = wall.max(1e-9);
    Ok(RunOutput {
        aborted: match stats.interrupted {
            Some(_) => None,
            None => w.aborted().map(|(_, r)| r.to_string()),
        },
        interrupted_at_ns: stats.interrupted.map(|t| t.as_ns()),
        samples: w.take_samples(),
        report_json,
        perf: Perf {
            wall_time_s: wall,
            events_processed: events,
            sim_packets: pkts,
            events_per_s: events as f64 / wall_nz,
            packets_per_s: pkts as f64 / wall_nz,
            peak_queued_events: stats.peak_queued_events as u64,
            queued_event_bytes: World::queued_event_bytes() as u64,
            scheduled_groups: stats.groups as u64,
            train_events: w.train_events(),
        },
    })
}

/// Validate a scenario without running it.
pub fn validate_toml(text: &str) -> Result<(), Error> {
    validate_toml_in(text, None)
}

/// As `validate_toml`, for a scenario file in `base_dir` (see `build_in`).
pub fn validate_toml_in(text: &str, base_dir: Option<&Path>) -> Result<(), Error> {
    Scenario::from_toml_in(text, base_dir).map(|_| ())
}

/// Every problem of a scenario, as `holdoff validate` lists them: a TOML or
/// type error alone (the parser stops at it), else `Scenario::problems`
/// (empty for a valid scenario; its first is `validate_toml_in`'s error).
pub fn problems_toml_in(text: &str, base_dir: Option<&Path>) -> Vec<Error> {
    match Scenario::parse_in(text, base_dir) {
        Ok(s) => s.problems(),
        Err(e) => vec![e],
    }
}

/// The scenario as the core reads it, validated, with every default filled
/// in, as compact JSON. Two files that differ only in spelling out a default
/// give the same text (the result store keys runs by it).
pub fn normalize_toml(text: &str) -> Result<String, Error> {
    let s = Scenario::from_toml(text)?;
    Ok(serde_json::to_string(&s).expect("a validated scenario always serialises"))
}

/// The scenario in effect once every `[[at]]` change has been applied (in
/// time order), without its `[[at]]` tables, as `normalize_toml` writes it:
/// a file with `[[at]] t_ms = 0, set = {path = value}` gives the same text
/// as the file without it after `holdoff run --set path=value`.
pub fn normalize_toml_after_changes(text: &str) -> Result<String, Error> {
    let s = Scenario::from_toml(text)?;
    let after = crate::scenario::config::at::after_all(&s)?;
    Ok(serde_json::to_string(&after).expect("a validated scenario always serialises"))
}

/// The host profile a `hosts[].profile` value names (a preset, or a profile
/// file relative to `base_dir`), as JSON: `name`, `description`, `cpu_mhz`
/// and `costs` (every field of
/// `profile::OVERRIDABLE`, pure-ACK costs resolved to the data cost they
/// fall back to). For calibration, which starts from these costs.
pub fn host_profile_json(profile: &str, base_dir: Option<&Path>) -> Result<String, Error> {
    use crate::host::profile::{self, OVERRIDABLE};
    use crate::scenario::config::profile_file;
    let field = "profile";
    let p = if profile_file::is_file(profile) {
        profile_file::load(profile, base_dir, field)?
    } else {
        profile::by_name(profile).ok_or_else(|| Error::Config {
            field: field.to_string(),
            message: format!(
                "got {profile:?}; allowed: {}, or the path of a profile file ending in .toml",
                profile::presets()
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })?
    };
    let costs: serde_json::Map<String, serde_json::Value> = OVERRIDABLE
        .iter()
        .map(|k| (k.to_string(), p.cost(k).unwrap_or(0).into()))
        .collect();
    Ok(serde_json::json!({
        "name": p.name,
        "description": p.description,
        "cpu_mhz": p.cpu_mhz,
        "costs": costs,
    })
    .to_string())
}

/// The JSON Schema of scenario files.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("a schema always serialises")
}

/// Replay one moderator over a recorded sample sequence alone
/// (`scenario::replay`): `table_json` is its `moderation` table, `port_json`
/// the trace's port (`ReplayPort`: chip, link_mbps, hz, vectors,
/// work_delay_ns), `samples` rows of `[t_ns, rx_packets, rx_bytes,
/// tx_packets, tx_bytes, interrupts]` in call order, as recorded. Returns JSON
/// `{"steps": [ReplayStep...], "failure": null or the reason}`.
pub fn replay_json(
    table_json: &str,
    port_json: &str,
    vector: u16,
    base_dir: Option<&Path>,
    samples: &[[u64; 6]],
) -> Result<String, Error> {
    use crate::scenario::config::ModerationCfg;
    use crate::scenario::replay::{self, ReplayPort};
    let bad = |field: &str, e: serde_json::Error| Error::Config {
        field: field.into(),
        message: e.to_string(),
    };
    let table: ModerationCfg =
        serde_json::from_str(table_json).map_err(|e| bad("moderation", e))?;
    let port: ReplayPort = serde_json::from_str(port_json).map_err(|e| bad("port", e))?;
    let samples: Vec<crate::moderation::Sample> = samples
        .iter()
        .map(|r| crate::moderation::Sample {
            now: crate::units::SimTime(r[0]),
            rx_packets: r[1],
            rx_bytes: r[2],
            tx_packets: r[3],
            tx_bytes: r[4],
            interrupts: r[5],
        })
        .collect();
    let mut m = replay::build(&table, &port, vector, base_dir)?;
    let (steps, failure) = replay::replay(m.as_mut(), &samples);
    Ok(serde_json::json!({ "steps": steps, "failure": failure }).to_string())
}
