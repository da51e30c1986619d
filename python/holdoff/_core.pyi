"""Native core of holdoff (Rust, PyO3). Private: use the ``holdoff`` package instead."""

from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "__version__",
    "build",
    "HoldoffError",
    "ScenarioError",
    "SimulationError",
    "host_profile_json",
    "replay",
    "normalize_toml",
    "normalize_toml_after_changes",
    "run_toml",
    "run_toml_samples",
    "schema_json",
    "validate_toml",
    "validate_problems",
    "version",
]

__version__: Final[str]

class HoldoffError(Exception):
    """Base class of every error raised by holdoff."""

class ScenarioError(HoldoffError, ValueError):
    """The scenario is not valid TOML or not a valid scenario."""

    field: str | None

class SimulationError(HoldoffError, RuntimeError):
    """A valid scenario failed while running, or the core hit a bug."""

def run_toml(
    text: str,
    seed: int | None = None,
    classes: dict[str, type] | None = None,
    progress: Callable[[int, int, int], object] | None = None,
    base_dir: str | None = None,
) -> tuple[str, dict[str, float | int], str | None]:
    """Run a scenario given as TOML text; returns ``(report_json, perf, aborted)``.

    ``progress(sim_now_ns, sim_end_ns, events)`` is called about every 50 ms;
    a pending signal (Ctrl-C) or an exception from ``progress`` stops the run
    and is raised with ``holdoff_partial = (report_json, perf, interrupted_at_ns)``.
    ``base_dir``: the scenario file's directory; relative ``capture`` paths
    and profile files are resolved against it (None: the working directory).
    """

def run_toml_samples(
    text: str,
    seed: int | None = None,
    classes: dict[str, type] | None = None,
    base_dir: str | None = None,
) -> tuple[str, dict[str, float | int], str | None, dict[str, Any]]:
    """As ``run_toml``, also recording every sample handed to a moderation
    algorithm: returns ``(report_json, perf, aborted, samples)``, ``samples``
    a dict of equal-length lists (``port`` index, ``vector``, ``t_ns``,
    ``rx_packets``, ``rx_bytes``, ``tx_packets``, ``tx_bytes``,
    ``interrupts``) and ``dropped`` (calls past the core's limit)."""

def validate_toml(text: str, base_dir: str | None = None) -> None:
    """Check a scenario given as TOML text without running it."""

def validate_problems(text: str, base_dir: str | None = None) -> list[str]:
    """Every problem of a scenario given as TOML text, as messages (the first is
    what ``validate_toml`` raises; empty for a valid scenario)."""

def normalize_toml(text: str) -> str:
    """The scenario as the core reads it (validated, defaults filled in), as JSON."""

def normalize_toml_after_changes(text: str) -> str:
    """The scenario in effect after every ``[[at]]`` change, without them, as JSON."""

def host_profile_json(profile: str, base_dir: str | None = None) -> str:
    """The host profile a ``hosts[].profile`` value names (a preset or a
    profile file relative to ``base_dir``) as JSON: name, description,
    cpu_mhz and ``costs`` (every cost by field name)."""

def schema_json() -> str:
    """The JSON Schema of the scenario file, as pretty-printed JSON."""

def version() -> str:
    """The version of the simulation core."""

def build() -> str:
    """How the extension was built: ``profile-guided`` (``make install``) or ``plain``."""

def replay(
    table_json: str,
    port_json: str,
    vector: int,
    samples: list[tuple[int, int, int, int, int, int]],
    base_dir: str | None = None,
) -> str:
    """Replays one moderator over a sample sequence; JSON ``{"steps": [...], "failure": ...}``."""
