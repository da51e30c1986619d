//! Python bindings for `holdoff-core`, imported as `holdoff._core`.
//!
//! This crate only converts arguments and results, releases the GIL while a
//! simulation runs and maps core errors to Python exceptions. It holds no
//! simulation logic: everything a user sees is decided in `holdoff-core`, and
//! the friendly Python API lives in `python/holdoff`.
//!
//! Nothing here may panic into Python: every call into the core runs inside
//! [`std::panic::catch_unwind`] and a panic becomes `holdoff.SimulationError`
//! whose message says that it is a bug.

use std::panic::{catch_unwind, AssertUnwindSafe};

use holdoff_core::api;
use holdoff_core::scenario::world::Progress;
use pyo3::prelude::*;
use pyo3::types::PyDict;

mod error;
mod moderator;

use error::{core_error, panic_error};
use moderator::PyModerator;

/// The outcome of a core call made under `catch_unwind`: a panic becomes
/// `SimulationError`, a core error the matching Python exception.
fn guarded<T>(
    py: Python<'_>,
    result: std::thread::Result<Result<T, holdoff_core::Error>>,
) -> PyResult<T> {
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(core_error(py, err)),
        Err(payload) => Err(panic_error(py, payload.as_ref())),
    }
}

/// Run one scenario given as TOML text.
///
/// Args:
///     text: the scenario file's contents.
///     seed: overrides the scenario's `seed` when given.
///     classes: for `moderation.kind = "python"` ports: a dict from the
///         scenario's `class` strings to Python classes; classes not in it
///         are imported from their "package.module:Class" path.
///
///     progress: called as `progress(sim_now_ns, sim_end_ns, events)` about
///         every 50 ms of wall time while the run goes on.
///
/// Returns:
///     `(report_json, perf, aborted)`: the deterministic report as a JSON
///     string, a dict of wall-clock performance numbers (`wall_time_s`,
///     `events_processed`, `sim_packets`, `events_per_s`, `packets_per_s`,
///     `peak_queued_events`, `queued_event_bytes`, `scheduled_groups`, `train_events`), and None, or the reason
///     the run stopped early (a Python moderation algorithm misbehaved; the
///     report covers the run up to then).
///
/// Raises:
///     ScenarioError: the text is not valid TOML or not a valid scenario, or
///         a Python moderation class cannot be loaded or constructed.
///     SimulationError: the run failed, the resource guard stopped it (the
///         message names the limit, the time and the likely field), or the
///         core hit a bug.
///     KeyboardInterrupt (or whatever a signal handler or `progress`
///         raised): the run stopped at that instant; the exception carries
///         `holdoff_partial = (report_json, perf, interrupted_at_ns)`.
///
/// The GIL is released while the simulation runs; it is taken back about
/// every 50 ms to run pending signal handlers (`check_signals`) and the
/// progress callback, and for each call into a Python moderation algorithm.
#[pyfunction]
#[pyo3(signature = (text, seed = None, classes = None, progress = None, base_dir = None))]
fn run_toml<'py>(
    py: Python<'py>,
    text: &str,
    seed: Option<u64>,
    classes: Option<Bound<'py, PyDict>>,
    progress: Option<Bound<'py, PyAny>>,
    base_dir: Option<std::path::PathBuf>,
) -> PyResult<(String, Bound<'py, PyDict>, Option<String>)> {
    let (report, perf, aborted, _) = run_inner(py, text, seed, classes, progress, base_dir, false)?;
    Ok((report, perf, aborted))
}

/// As `run_toml`, also recording every sample handed to a moderation
/// algorithm (the run and its report are the same as without).
///
/// Returns:
///     `(report_json, perf, aborted, samples)`: as `run_toml`, and a dict of
///     equal-length lists, one entry per moderation call in call order:
///     `port` (index into the report's ports), `vector`, `t_ns`,
///     `rx_packets`, `rx_bytes`, `tx_packets`, `tx_bytes`, `interrupts`;
///     plus `dropped`, the calls past the core's row limit not kept.
#[pyfunction]
#[pyo3(signature = (text, seed = None, classes = None, base_dir = None))]
fn run_toml_samples<'py>(
    py: Python<'py>,
    text: &str,
    seed: Option<u64>,
    classes: Option<Bound<'py, PyDict>>,
    base_dir: Option<std::path::PathBuf>,
) -> PyResult<SampledRun<'py>> {
    let (report, perf, aborted, samples) =
        run_inner(py, text, seed, classes, None, base_dir, true)?;
    let (rows, dropped) = samples.unwrap_or_default();
    let out = PyDict::new(py);
    let column = |f: &dyn Fn(&holdoff_core::scenario::world::SampleRecord) -> u64| {
        rows.iter().map(f).collect::<Vec<u64>>()
    };
    out.set_item("port", column(&|r| u64::from(r.port)))?;
    out.set_item("vector", column(&|r| u64::from(r.vector)))?;
    out.set_item("t_ns", column(&|r| r.sample.now.as_ns()))?;
    out.set_item("rx_packets", column(&|r| r.sample.rx_packets))?;
    out.set_item("rx_bytes", column(&|r| r.sample.rx_bytes))?;
    out.set_item("tx_packets", column(&|r| r.sample.tx_packets))?;
    out.set_item("tx_bytes", column(&|r| r.sample.tx_bytes))?;
    out.set_item("interrupts", column(&|r| r.sample.interrupts))?;
    out.set_item("dropped", dropped)?;
    Ok((report, perf, aborted, out))
}

/// `run_toml_samples`' result: report, perf, early-stop reason, samples.
type SampledRun<'py> = (
    String,
    Bound<'py, PyDict>,
    Option<String>,
    Bound<'py, PyDict>,
);

/// A run's report, perf numbers, early-stop reason and, with `record`, its
/// recorded moderation samples.
type RunParts<'py> = (
    String,
    Bound<'py, PyDict>,
    Option<String>,
    Option<(Vec<holdoff_core::scenario::world::SampleRecord>, u64)>,
);

fn run_inner<'py>(
    py: Python<'py>,
    text: &str,
    seed: Option<u64>,
    classes: Option<Bound<'py, PyDict>>,
    progress: Option<Bound<'py, PyAny>>,
    base_dir: Option<std::path::PathBuf>,
    record: bool,
) -> PyResult<RunParts<'py>> {
    let classes: Option<Py<PyDict>> = classes.map(|c| c.unbind());
    let progress: Option<Py<PyAny>> = progress.map(|p| p.unbind());
    let mut stop: Option<PyErr> = None;
    let result = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let mut factory =
                |class: &str,
                 params: &std::collections::BTreeMap<String, serde_json::Value>,
                 _port: &str,
                 _vector: u16|
                 -> Result<Box<dyn holdoff_core::moderation::Moderator>, String> {
                    Python::attach(|py| {
                        let cls = classes.as_ref().map(|c| c.bind(py).clone());
                        PyModerator::create(py, cls.as_ref(), class, params)
                            .map(|m| Box::new(m) as Box<dyn holdoff_core::moderation::Moderator>)
                    })
                };
            let mut control = |p: &Progress| -> bool {
                Python::attach(|py| {
                    if let Err(err) = py.check_signals() {
                        stop = Some(err);
                        return false;
                    }
                    if let Some(cb) = &progress {
                        let args = (p.now.as_ns(), p.end.as_ns(), p.events);
                        if let Err(err) = cb.bind(py).call1(args) {
                            stop = Some(err);
                            return false;
                        }
                    }
                    true
                })
            };
            api::run_toml_recorded_in(
                text,
                seed,
                Some(&mut factory),
                &mut control,
                base_dir.as_deref(),
                record,
            )
        }))
    });
    let mut output = guarded(py, result)?;
    let perf = &output.perf;
    let dict = PyDict::new(py);
    dict.set_item("wall_time_s", perf.wall_time_s)?;
    dict.set_item("events_processed", perf.events_processed)?;
    dict.set_item("sim_packets", perf.sim_packets)?;
    dict.set_item("events_per_s", perf.events_per_s)?;
    dict.set_item("packets_per_s", perf.packets_per_s)?;
    dict.set_item("peak_queued_events", perf.peak_queued_events)?;
    dict.set_item("queued_event_bytes", perf.queued_event_bytes)?;
    dict.set_item("scheduled_groups", perf.scheduled_groups)?;
    dict.set_item("train_events", perf.train_events)?;
    if let Some(err) = stop {
        let at = output.interrupted_at_ns.unwrap_or(0);
        let partial = (output.report_json, dict, at);
        err.value(py).setattr("holdoff_partial", partial)?;
        return Err(err);
    }
    let samples = output.samples.take();
    Ok((output.report_json, dict, output.aborted, samples))
}

/// Check a scenario given as TOML text without running it.
///
/// Raises:
///     ScenarioError: the text is not valid TOML or not a valid scenario.
#[pyfunction]
#[pyo3(signature = (text, base_dir = None))]
fn validate_toml(py: Python<'_>, text: &str, base_dir: Option<std::path::PathBuf>) -> PyResult<()> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        api::validate_toml_in(text, base_dir.as_deref())
    }));
    guarded(py, result)
}

/// Every problem of a scenario given as TOML text, as messages (the first
/// is what `validate_toml` raises; empty for a valid scenario): a TOML or
/// type error alone, else one per host, generator, link or application of
/// the first stage with any (at most 50).
#[pyfunction]
#[pyo3(signature = (text, base_dir = None))]
fn validate_problems(
    py: Python<'_>,
    text: &str,
    base_dir: Option<std::path::PathBuf>,
) -> PyResult<Vec<String>> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        Ok(api::problems_toml_in(text, base_dir.as_deref())
            .into_iter()
            .map(|e| e.to_string())
            .collect())
    }));
    guarded(py, result)
}

/// The scenario as the core reads it (validated, every default filled in),
/// as compact JSON text.
///
/// Raises:
///     ScenarioError: the text is not valid TOML or not a valid scenario.
#[pyfunction]
fn normalize_toml(py: Python<'_>, text: &str) -> PyResult<String> {
    let result = catch_unwind(AssertUnwindSafe(|| api::normalize_toml(text)));
    guarded(py, result)
}

/// The scenario in effect after every `[[at]]` change (validated, defaults
/// filled in, without its `[[at]]` tables), as compact JSON text.
///
/// Raises:
///     ScenarioError: the text is not valid TOML or not a valid scenario.
#[pyfunction]
fn normalize_toml_after_changes(py: Python<'_>, text: &str) -> PyResult<String> {
    let result = catch_unwind(AssertUnwindSafe(|| api::normalize_toml_after_changes(text)));
    guarded(py, result)
}

/// The host profile a `hosts[].profile` value names (a preset, or a profile
/// file relative to `base_dir`), as JSON text: name, description, cpu_mhz
/// and every cost by field name.
///
/// Raises:
///     ScenarioError: no such preset, or the profile file is missing or invalid.
#[pyfunction]
#[pyo3(signature = (profile, base_dir = None))]
fn host_profile_json(
    py: Python<'_>,
    profile: &str,
    base_dir: Option<std::path::PathBuf>,
) -> PyResult<String> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        api::host_profile_json(profile, base_dir.as_deref())
    }));
    guarded(py, result)
}

/// The JSON Schema of the scenario file, as pretty-printed JSON text.
#[pyfunction]
fn schema_json(py: Python<'_>) -> PyResult<String> {
    let result = catch_unwind(|| Ok(api::schema_json()));
    guarded(py, result)
}

/// Replay one moderator over a recorded sample sequence (no simulation).
///
/// Args:
///     table_json: the moderator's scenario `moderation` table as JSON.
///     port_json: the trace's port: `{"chip", "link_mbps", "hz", "vectors",
///         "work_delay_ns"}`.
///     vector: the vector the moderator is built for.
///     samples: `(t_ns, rx_packets, rx_bytes, tx_packets, tx_bytes,
///         interrupts)` rows in call order (as recorded).
///     base_dir: where a relative C `source` is read from.
///
/// Returns:
///     JSON text `{"steps": [...], "failure": null or the reason}`; a step
///     has `sample` (index or null), `t_ns`, `call` ("initial", "sample",
///     "work"), the registers written and the algorithm's `trace` pairs.
///
/// Raises:
///     ScenarioError: a bad table, port or sample order, or a C file that
///         does not build or load.
#[pyfunction]
#[pyo3(signature = (table_json, port_json, vector, samples, base_dir = None))]
fn replay(
    py: Python<'_>,
    table_json: &str,
    port_json: &str,
    vector: u16,
    samples: Vec<[u64; 6]>,
    base_dir: Option<std::path::PathBuf>,
) -> PyResult<String> {
    let result = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            api::replay_json(table_json, port_json, vector, base_dir.as_deref(), &samples)
        }))
    });
    guarded(py, result)
}

/// The version of the simulation core.
#[pyfunction]
fn version() -> &'static str {
    api::VERSION
}

/// How this extension was built, as the installer named it when compiling
/// (`HOLDOFF_BUILD`: `profile-guided` from `scripts/pgo-install.sh`),
/// `plain` otherwise. Benchmarks quote it with their figures.
#[pyfunction]
fn build() -> &'static str {
    match option_env!("HOLDOFF_BUILD") {
        Some(kind) if !kind.is_empty() => kind,
        _ => "plain",
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", api::VERSION)?;
    error::register(m)?;
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(run_toml_samples, m)?)?;
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_problems, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_toml, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_toml_after_changes, m)?)?;
    m.add_function(wrap_pyfunction!(schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(host_profile_json, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    Ok(())
}
