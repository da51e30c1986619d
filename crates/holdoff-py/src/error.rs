//! The exception hierarchy and the one place where core errors become Python
//! exceptions.
//!
//! ```text
//! HoldoffError(Exception)
//! ├── ScenarioError(HoldoffError, ValueError)     Error::Parse, Error::Config (`.field`)
//! └── SimulationError(HoldoffError, RuntimeError) Error::Run, and panics (bugs)
//! ```
//!
//! `create_exception!` makes single-base classes only, so the two subclasses
//! are built once at import with `type(name, bases, namespace)` and kept in
//! [`PyOnceLock`]s. The message of every exception is the core error's
//! `Display`, which names the field, the bad value and what is allowed.

use std::any::Any;

use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    holdoff,
    HoldoffError,
    PyException,
    "Base class of every error raised by holdoff."
);

static SCENARIO_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static SIMULATION_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

const SCENARIO_DOC: &str = "The scenario is not valid TOML or not a valid scenario.\n\n\
`field` is the dotted path of the offending field (e.g. `hosts[0].nics[0].chip`) \
when known, else None.";
const SIMULATION_DOC: &str = "A valid scenario failed while running, or the core hit a bug.";

/// `type(name, bases, {"__module__": "holdoff", "__doc__": doc, **extra})`.
fn make_type(
    py: Python<'_>,
    name: &str,
    bases: Bound<'_, PyTuple>,
    doc: &str,
    with_field: bool,
) -> PyResult<Py<PyType>> {
    let namespace = PyDict::new(py);
    namespace.set_item("__module__", "holdoff")?;
    namespace.set_item("__doc__", doc)?;
    if with_field {
        namespace.set_item("field", py.None())?;
    }
    let class = py.get_type::<PyType>().call1((name, bases, namespace))?;
    Ok(class.cast_into::<PyType>()?.unbind())
}

fn scenario_error_type(py: Python<'_>) -> PyResult<&Py<PyType>> {
    SCENARIO_ERROR.get_or_try_init(py, || {
        let bases = PyTuple::new(
            py,
            [py.get_type::<HoldoffError>(), py.get_type::<PyValueError>()],
        )?;
        make_type(py, "ScenarioError", bases, SCENARIO_DOC, true)
    })
}

fn simulation_error_type(py: Python<'_>) -> PyResult<&Py<PyType>> {
    SIMULATION_ERROR.get_or_try_init(py, || {
        let bases = PyTuple::new(
            py,
            [
                py.get_type::<HoldoffError>(),
                py.get_type::<PyRuntimeError>(),
            ],
        )?;
        make_type(py, "SimulationError", bases, SIMULATION_DOC, false)
    })
}

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("HoldoffError", py.get_type::<HoldoffError>())?;
    m.add("ScenarioError", scenario_error_type(py)?.bind(py))?;
    m.add("SimulationError", simulation_error_type(py)?.bind(py))?;
    Ok(())
}

/// An instance of `class(message)`, with `.field` set when given.
fn instantiate(
    py: Python<'_>,
    class: PyResult<&Py<PyType>>,
    message: String,
    field: Option<String>,
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let value = class?.bind(py).call1((message.clone(),))?;
        if let Some(field) = field {
            value.setattr("field", field)?;
        }
        Ok(PyErr::from_value(value))
    };
    // Building the exception can only fail if the interpreter is in trouble
    // (e.g. out of memory); fall back to the base class with the same message.
    build().unwrap_or_else(|_| HoldoffError::new_err(message))
}

/// Maps a core error to its Python exception. Exhaustive on purpose: a new
/// core variant must be given a Python class here.
pub(crate) fn core_error(py: Python<'_>, err: holdoff_core::Error) -> PyErr {
    let message = err.to_string();
    match err {
        holdoff_core::Error::Parse { .. } => {
            instantiate(py, scenario_error_type(py), message, None)
        }
        holdoff_core::Error::Config { field, .. } => {
            instantiate(py, scenario_error_type(py), message, Some(field))
        }
        holdoff_core::Error::Run { .. } => {
            instantiate(py, simulation_error_type(py), message, None)
        }
    }
}

/// Maps a panic caught at the boundary to `SimulationError`.
pub(crate) fn panic_error(py: Python<'_>, payload: &(dyn Any + Send)) -> PyErr {
    let detail = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    };
    let message = format!(
        "internal error in the holdoff core (this is a bug, please report it together with \
         the scenario and seed): panic: {detail}"
    );
    instantiate(py, simulation_error_type(py), message, None)
}
