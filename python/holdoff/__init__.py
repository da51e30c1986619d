"""holdoff: a workbench for NIC interrupt moderation.

Runs the interrupt moderation of real drivers on a deterministic
discrete-event model of e1000/igb-class hardware and of the host that
services it, and reports latency, throughput, CPU, interrupt rate and drops.

    >>> import holdoff
    >>> result = holdoff.run("examples/quickstart.toml")   # doctest: +SKIP
    >>> result.apps[["app", "throughput_bps", "latency_us_p99"]]   # doctest: +SKIP
"""

from holdoff._core import HoldoffError, ScenarioError, SimulationError, __version__
from holdoff.api import examples_dir, run, schema, validate
from holdoff.moderator import Moderator, ModeratorError, Sample
from holdoff.result import RunResult
from holdoff.seeds import SeedsResult, run_seeds
from holdoff.summary import summary_text
from holdoff.sweeps import sweep

__all__ = [
    "HoldoffError",
    "Moderator",
    "ModeratorError",
    "RunResult",
    "SeedsResult",
    "Sample",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "examples_dir",
    "run",
    "run_seeds",
    "schema",
    "summary_text",
    "sweep",
    "validate",
]
