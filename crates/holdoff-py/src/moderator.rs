//! Moderation algorithms written in Python, run inside the simulation.
//!
//! A scenario port with `moderation.kind = "python"` names a class
//! (`"package.module:Class"`); the class is taken from the `classes` dict the
//! caller passed, or imported. One instance is made per interrupt vector with
//! the scenario's `params` as keyword arguments. Its attributes `name`,
//! `invocation` ("never", "per_interrupt", "per_poll", "periodic") and
//! `period_us` are read once; `initial()` is called once; `on_sample(sample)`
//! is called at every invocation with a `holdoff.moderator.Sample` and must
//! return None or a dict of register values (`itr_256ns`, `eitr_us`,
//! `rdtr_1024ns`, `radv_1024ns`, `tidv_1024ns`, `tadv_1024ns`).
//!
//! A misbehaving class (an exception, a wrong return type, an unknown key, a
//! value out of range) does not crash the run: the core stops the run at
//! that moment and reports what it had, with the reason.
//!
//! The simulation runs with the GIL released; each call into Python takes it
//! back for the duration of the call.

use std::collections::BTreeMap;

use holdoff_core::moderation::{Invocation, ModerationParams, Moderator, Sample, TraceRow};
use holdoff_core::units::Nanos;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

/// Register fields a Python algorithm may set, with their largest value.
const FIELDS: [(&str, u32); 6] = [
    ("itr_256ns", 0xFFFF),
    ("eitr_us", 0x1FFF),
    ("rdtr_1024ns", 0xFFFF),
    ("radv_1024ns", 0xFFFF),
    ("tidv_1024ns", 0xFFFF),
    ("tadv_1024ns", 0xFFFF),
];

fn describe(err: &PyErr, py: Python<'_>) -> String {
    let ty = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    format!("{ty}: {}", err.value(py))
}

/// Parse the value an algorithm returned: None or a dict of register values.
fn parse_params(
    py: Python<'_>,
    what: &str,
    value: &Bound<'_, PyAny>,
) -> Result<Option<ModerationParams>, String> {
    if value.is_none() {
        return Ok(None);
    }
    let Ok(dict) = value.cast::<PyDict>() else {
        let ty = value
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        return Err(format!(
            "{what} returned a {ty}; expected None or a dict with keys among {}",
            FIELDS.iter().map(|f| f.0).collect::<Vec<_>>().join(", ")
        ));
    };
    let mut p = ModerationParams::default();
    for (k, v) in dict.iter() {
        let key: String = k
            .cast::<PyString>()
            .map_err(|_| format!("{what} returned a dict with a non-string key"))?
            .to_string();
        let Some(&(_, max)) = FIELDS.iter().find(|f| f.0 == key) else {
            return Err(format!(
                "{what} returned unknown key {key:?}; allowed: {}",
                FIELDS.iter().map(|f| f.0).collect::<Vec<_>>().join(", ")
            ));
        };
        let val: i64 = v.extract().map_err(|_| {
            format!(
                "{what} returned {key} = {}; expected an integer",
                v.repr().map(|r| r.to_string()).unwrap_or_default()
            )
        })?;
        if val < 0 || val > max as i64 {
            return Err(format!("{what} returned {key} = {val}; allowed 0 to {max}"));
        }
        let val = val as u32;
        match key.as_str() {
            "itr_256ns" => p.itr_256ns = Some(val),
            "eitr_us" => p.eitr_us = Some(val),
            "rdtr_1024ns" => p.rdtr_1024ns = Some(val),
            "radv_1024ns" => p.radv_1024ns = Some(val),
            "tidv_1024ns" => p.tidv_1024ns = Some(val),
            _ => p.tadv_1024ns = Some(val),
        }
    }
    let _ = py;
    Ok(Some(p))
}

fn trace_values(p: &ModerationParams) -> Vec<(&'static str, i64)> {
    let mut v = Vec::new();
    for (k, x) in [
        ("itr_256ns", p.itr_256ns),
        ("eitr_us", p.eitr_us),
        ("rdtr_1024ns", p.rdtr_1024ns),
        ("radv_1024ns", p.radv_1024ns),
        ("tidv_1024ns", p.tidv_1024ns),
        ("tadv_1024ns", p.tadv_1024ns),
    ] {
        if let Some(x) = x {
            v.push((k, x as i64));
        }
    }
    v
}

/// One Python algorithm instance.
pub struct PyModerator {
    obj: Py<PyAny>,
    sample_cls: Py<PyAny>,
    name: String,
    invocation: Invocation,
    initial: ModerationParams,
    last: Option<TraceRow>,
    failure: Option<String>,
}

impl PyModerator {
    /// Instantiate `class_path` for one vector; errors name what is wrong.
    pub fn create(
        py: Python<'_>,
        classes: Option<&Bound<'_, PyDict>>,
        class_path: &str,
        params: &BTreeMap<String, serde_json::Value>,
    ) -> Result<PyModerator, String> {
        let cls = match classes.and_then(|d| d.get_item(class_path).ok().flatten()) {
            Some(c) => c,
            None => {
                let (module, name) = class_path.split_once(':').ok_or_else(|| {
                    format!("{class_path:?}: expected \"package.module:ClassName\"")
                })?;
                let m = py
                    .import(module)
                    .map_err(|e| format!("cannot import {module:?}: {}", describe(&e, py)))?;
                m.getattr(name)
                    .map_err(|_| format!("module {module:?} has no class {name:?}"))?
            }
        };
        let json = serde_json::to_string(params).map_err(|e| e.to_string())?;
        let kwargs = py
            .import("json")
            .and_then(|j| j.call_method1("loads", (json,)))
            .map_err(|e| describe(&e, py))?;
        let kwargs = kwargs
            .cast::<PyDict>()
            .map_err(|_| "params must be a table".to_string())?;
        let obj = cls
            .call((), Some(kwargs))
            .map_err(|e| format!("{class_path}(**params) raised {}", describe(&e, py)))?;
        let name: String = obj
            .getattr("name")
            .and_then(|n| n.extract())
            .unwrap_or_else(|_| class_path.to_string());
        let inv: String = obj
            .getattr("invocation")
            .and_then(|n| n.extract())
            .map_err(|_| format!("{class_path}: attribute `invocation` must be a string"))?;
        let invocation = match inv.as_str() {
            "never" => Invocation::Never,
            "per_interrupt" => Invocation::PerInterrupt,
            "per_poll" => Invocation::PerPoll,
            "periodic" => {
                let us: u64 = obj
                    .getattr("period_us")
                    .and_then(|n| n.extract())
                    .map_err(|_| format!("{class_path}: invocation \"periodic\" needs an integer `period_us`"))?;
                if us == 0 {
                    return Err(format!("{class_path}: period_us must be at least 1"));
                }
                Invocation::Periodic {
                    period: Nanos::from_us(us),
                    at_start: false,
                }
            }
            other => {
                return Err(format!(
                    "{class_path}: invocation {other:?} is not one of \"never\", \"per_interrupt\", \"per_poll\", \"periodic\""
                ))
            }
        };
        let what = format!("{class_path}.initial()");
        let init = obj
            .call_method0("initial")
            .map_err(|e| format!("{what} raised {}", describe(&e, py)))?;
        let initial = parse_params(py, &what, &init)?.unwrap_or_default();
        let sample_cls = py
            .import("holdoff.moderator")
            .and_then(|m| m.getattr("Sample"))
            .map_err(|e| describe(&e, py))?;
        Ok(PyModerator {
            obj: obj.unbind(),
            sample_cls: sample_cls.unbind(),
            name,
            invocation,
            initial,
            last: None,
            failure: None,
        })
    }
}

impl Moderator for PyModerator {
    fn name(&self) -> &str {
        &self.name
    }
    fn initial(&self) -> ModerationParams {
        self.initial
    }
    fn invocation(&self) -> Invocation {
        self.invocation
    }
    fn on_sample(&mut self, s: &Sample) -> Option<ModerationParams> {
        if self.failure.is_some() {
            return None;
        }
        let result = Python::attach(|py| -> Result<Option<ModerationParams>, String> {
            let kw = PyDict::new(py);
            let set = |k: &str, v: u64| kw.set_item(k, v).map_err(|e| describe(&e, py));
            set("now_ns", s.now.as_ns())?;
            set("rx_packets", s.rx_packets)?;
            set("rx_bytes", s.rx_bytes)?;
            set("tx_packets", s.tx_packets)?;
            set("tx_bytes", s.tx_bytes)?;
            set("interrupts", s.interrupts)?;
            let sample = self
                .sample_cls
                .bind(py)
                .call((), Some(&kw))
                .map_err(|e| describe(&e, py))?;
            let out = self
                .obj
                .bind(py)
                .call_method1("on_sample", (sample,))
                .map_err(|e| format!("on_sample raised {}", describe(&e, py)))?;
            parse_params(py, "on_sample", &out)
        });
        match result {
            Ok(p) => {
                if let Some(pp) = &p {
                    self.last = Some(TraceRow {
                        t_ns: s.now.as_ns(),
                        values: trace_values(pp),
                    });
                }
                p
            }
            Err(e) => {
                self.failure = Some(e);
                None
            }
        }
    }
    fn last_decision(&self) -> Option<&TraceRow> {
        self.last.as_ref()
    }
    fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }
}
