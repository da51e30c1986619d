"""Run, validate and describe scenarios from Python.

A scenario can be given as a path to a ``.toml`` file (``str`` or
:class:`~pathlib.Path`), as TOML text, or as a dict with the same structure as
the file (keys whose value is ``None`` are left out, so the core's default
applies). Validation happens once, in the core; its errors name the field,
the bad value and the allowed values.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import tomli_w

from holdoff import _core, inputs
from holdoff.result import RunResult

Scenario = str | os.PathLike[str] | Mapping[str, Any]
"""A path to a scenario file, TOML text, or a dict shaped like the file."""

_MAX_SEED = 2**64 - 1

ProgressCallback = Callable[[int, int, int], None]
"""Called as ``progress(sim_now_ns, sim_end_ns, events)`` about every 50 ms of a run."""


def scenario_text(scenario: Scenario) -> str:
    """Returns the TOML text of ``scenario`` (see :data:`Scenario`).

    A ``str`` is read as a path when it is a single line that ends in
    ``.toml`` or names an existing file; otherwise it is TOML text.

    Raises:
        FileNotFoundError: a path that does not exist.
        holdoff.inputs.InputError: a path that is not a regular file, is over
            the scenario size limit or is not UTF-8 (:mod:`holdoff.inputs`).
        TypeError: ``scenario`` is of another type, or a dict value has no TOML form.
    """
    if isinstance(scenario, Mapping):
        return tomli_w.dumps(_without_none(scenario))
    if isinstance(scenario, os.PathLike):
        return _read_scenario_file(Path(scenario))
    if isinstance(scenario, str):
        if _looks_like_path(scenario):
            return _read_scenario_file(Path(scenario.strip()))
        return scenario
    raise TypeError(f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}")


def _read_scenario_file(path: Path) -> str:
    """A scenario file's text, read as every command reads one (bounded, regular files only)."""
    if not os.path.lexists(path):
        raise FileNotFoundError(f"scenario file not found: {path}")
    return inputs.read_text(path, "scenario file")


def run(
    scenario: Scenario,
    *,
    seed: int | None = None,
    moderators: Mapping[str, type] | None = None,
    progress: ProgressCallback | None = None,
) -> RunResult:
    """Runs one scenario to completion and returns its result.

    Args:
        scenario: a path, TOML text or dict (see :data:`Scenario`).
        seed: overrides the scenario's ``seed`` (0 ≤ seed < 2**64).
        moderators: for ports with ``moderation.kind = "python"``: the
            classes, keyed by the scenario's ``class`` string (classes not
            given here are imported from their ``"package.module:Class"`` path).
        progress: called as ``progress(sim_now_ns, sim_end_ns, events)``
            about every 50 ms of wall time while the run goes on.

    Raises:
        ScenarioError: the scenario is not valid, or a Python moderation
            class cannot be loaded or constructed.
        ModeratorError: a Python or C moderation algorithm misbehaved during
            the run; its ``result`` holds the run up to that moment, or is
            None when a C moderator crashed or did not return (a scenario
            with ``kind = "c"`` runs in a child process: :mod:`holdoff.cmod`).
        SimulationError: the run failed, or the resource guard stopped it
            (the message names the limit, the simulated time and the likely
            field).
        KeyboardInterrupt: Ctrl-C (SIGINT) during the run, which stops within
            about 50 ms; the exception's ``result`` holds the run up to that
            instant and ``interrupted_at_ns`` the simulated time. The same
            holds for any exception raised by ``progress`` or a signal handler.
        FileNotFoundError: the scenario file does not exist.

    The same scenario and seed always give a byte-identical report. ``perf``
    also holds ``peak_rss_bytes``: the peak resident memory of this process
    so far (which includes earlier runs in the same process).
    """
    return run_text(
        scenario_text(scenario),
        seed=seed,
        moderators=moderators,
        progress=progress,
        base_dir=scenario_dir(scenario),
    )


def run_text(
    text: str,
    *,
    seed: int | None = None,
    moderators: Mapping[str, type] | None = None,
    progress: ProgressCallback | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Like :func:`run`, for a scenario that is TOML text (never read as a path).

    ``base_dir`` is the directory relative ``capture`` paths are resolved
    against (default: the working directory), and where a Python moderation
    class's module is looked for when it is not on Python's path (then the
    working directory; see :func:`holdoff.moderator.import_classes`).
    """
    from holdoff.moderator import ModeratorError, import_classes

    base = None if base_dir is None else os.fspath(base_dir)
    # "package.module:Class" paths: also from the scenario's folder and the working directory.
    classes = {**import_classes(text, base, moderators), **(moderators or {})} or None
    from holdoff import cmod

    try:
        if cmod.has_c(text):
            # C code runs in a child process: a crash or a loop ends that run only.
            report_json, perf, aborted = cmod.run_in_child(text, _check_seed(seed), base)
        else:
            report_json, perf, aborted = _core.run_toml(
                text, _check_seed(seed), classes, progress, base
            )
    except BaseException as err:
        partial = getattr(err, "holdoff_partial", None)
        if partial is not None:
            partial_json, partial_perf, at_ns = partial
            partial_perf["peak_rss_bytes"] = peak_rss_bytes()
            err.result = RunResult(partial_json, partial_perf)  # type: ignore[attr-defined]
            err.interrupted_at_ns = at_ns  # type: ignore[attr-defined]
            delattr(err, "holdoff_partial")
        raise
    perf["peak_rss_bytes"] = peak_rss_bytes()
    result = RunResult(report_json, perf)
    if aborted is not None:
        raise ModeratorError(aborted, result)
    return result


def peak_rss_bytes() -> int:
    """The peak resident set size of this process so far [bytes] (0 where unknown)."""
    try:
        import resource
    except ImportError:  # not on this platform
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kibibytes, macOS bytes.
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def validate(scenario: Scenario) -> None:
    """Checks a scenario without running it; raises :class:`ScenarioError` if invalid."""
    validate_text(scenario_text(scenario), base_dir=scenario_dir(scenario))


def validate_text(text: str, *, base_dir: str | os.PathLike[str] | None = None) -> None:
    """Like :func:`validate`, for a scenario that is TOML text (never read as a path)."""
    _core.validate_toml(text, None if base_dir is None else os.fspath(base_dir))


def scenario_dir(scenario: Scenario) -> str | None:
    """The directory of a scenario given as a path (relative ``capture``
    paths in it are resolved against it); None for TOML text and dicts,
    whose relative paths are resolved against the working directory."""
    if isinstance(scenario, os.PathLike):
        return str(Path(scenario).resolve().parent)
    if isinstance(scenario, str) and _looks_like_path(scenario):
        return str(Path(scenario.strip()).resolve().parent)
    return None


def schema() -> dict[str, Any]:
    """The JSON Schema of scenario files, as a dict."""
    parsed: dict[str, Any] = json.loads(_core.schema_json())
    return parsed


def examples_dir() -> Path:
    """The folder with the example scenarios shipped with holdoff.

    Installed packages carry them in ``holdoff/examples``; in a source checkout
    that is a link to the repository's ``examples/`` folder.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / "examples", here.parents[1] / "examples"):
        if candidate.is_dir() and any(candidate.glob("*.toml")):
            return candidate
    raise FileNotFoundError(
        "the example scenarios were not found (looked in "
        f"{here / 'examples'} and {here.parents[1] / 'examples'})"
    )


def _looks_like_path(text: str) -> bool:
    if "\n" in text:
        return False
    candidate = text.strip()
    if candidate.endswith(".toml"):
        return True
    try:
        return Path(candidate).is_file()
    except (OSError, ValueError):
        return False


def _check_seed(seed: int | None) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, not {type(seed).__name__}")
    if not 0 <= seed <= _MAX_SEED:
        raise ValueError(f"seed must be between 0 and 2**64-1, got {seed}")
    return seed


def _without_none(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_without_none(v) for v in value]
    return value
