"""The tuner: which setting of *this* driver meets *this* budget on *this* traffic.

``holdoff tune`` takes a workload (a capture replayed into the host, an
open-loop request/response, bulk or forwarding mix, or any scenario file), a
host profile, a chip and a driver, and searches the moderation knobs that
driver really exposes (:mod:`holdoff.knobs`: static rates and ``rx-usecs``,
adaptive modes, FreeBSD ``enable_aim`` and ``max_interrupt_rate``,
RDTR/RADV/TIDV/TADV, the NAPI ``gro_flush_timeout``,
``napi_defer_hard_irqs`` and ``irq_suspend_timeout``). Every candidate is
decoded into the registers and the simulator table the driver would write,
run on the model, and scored:

- ``p99<=100us`` (or ``p50<=...``): least CPU among the settings whose
  latency is within the budget, with no drops and within 2 % of the best
  throughput such settings reach (so a setting cannot save CPU by doing
  less work);
- ``cpu<=30%``: least p99 among the settings within the CPU budget, no
  drops, within 2 % of the best throughput;
- ``max-throughput``: the most throughput (no drops), then least CPU among
  the settings within 0.5 % of it;
- ``pareto``: the whole front of (p99, CPU, interrupt rate, throughput); the
  recommendation is the front point nearest the ideal corner in p99 and CPU,
  each scaled to the front's range.

Candidates whose knobs decode to the same registers are run once (the
others are listed as equivalent). Small grids are run exhaustively; larger
ones by Optuna (TPE for the budget objectives, NSGA-II for the front),
seeded, so a tune is reproducible. Points run on the sweep executors and
land in the result store, so a killed tune run again resumes where it
stopped (the sampler replays the same sequence and finds its points stored).

Measured quantities (what ``--json`` and the report call them):
``p50_us``/``p99_us`` -- the latency application's percentiles (a NetPIPE
run: the median and the largest of its small-message times, sizes up to
64 B, as NetPIPE prints them); ``cpu_util`` -- busy fraction of the tuned
hosts' cores (the busiest tuned host; ``mpstat``'s ``all`` line);
``interrupts_per_s`` -- all vectors of the tuned hosts' ports;
``throughput_bps`` -- the applications' goodput (NetPIPE: the mean over its
sizes of 1 KiB and more; forwarding: frames out of the router);
``drops`` -- frames lost to a setting-dependent cause (rings, backlog,
socket buffers; not frames over the MTU or to no listener).

Each setting runs ``--seeds`` times (the scenario's seed and the next ones;
every setting the same seeds, so differences are paired); each metric is the
mean with a 95 % interval, and the choice treats settings within each other's
interval as ties, keeping the one closest to the current setting and the
driver's default (:mod:`holdoff.tune.decide`). A capture workload simulates
the capture's whole span read from the file (:mod:`holdoff.capture`), or the
part asked for, and says which.

Simplifies: one setting for every tuned port (as ``ethtool -C`` sets one
interface); the workload's own traffic is fixed (a capture cannot react to
the setting; TCP in a scenario does); the intervals are the model's
run-to-run spread, not the machine's. The recommendation inherits every
model error (``holdoff reproduce`` lists the published checks the model
misses).
"""

from holdoff.tune.choose import (
    FRONT_THROUGHPUT_RESOLUTION,
    Point,
    choose,
    pareto_front,
)
from holdoff.tune.decide import Decision, settle
from holdoff.tune.search import TuneProgress, TuneResult, tune
from holdoff.tune.search import _Evaluator as _Evaluator  # the tests drive it
from holdoff.tune.space import (
    METRICS,
    Candidate,
    PointMetrics,
    aggregate,
    candidate,
    canonical_settings,
    grid_points,
    grid_size,
    point_metrics,
    space,
)
from holdoff.tune.workloads import (
    DEFAULT_SEEDS,
    DEFAULT_TRIALS,
    GRID_MAX,
    HOST_DRIVER,
    LATENCY_APPS,
    MAX_TRIALS,
    MIXES,
    STATIC_DROPS,
    THROUGHPUT_FLOOR,
    THROUGHPUT_TIE,
    Objective,
    TuneError,
    Workload,
    capture_workload,
    check_driver,
    mix_workload,
    parse_latency_of,
    parse_objective,
    parse_span,
    scenario_workload,
)

__all__ = [
    "DEFAULT_SEEDS",
    "MAX_TRIALS",
    "METRICS",
    "Decision",
    "aggregate",
    "parse_latency_of",
    "parse_span",
    "settle",
    "DEFAULT_TRIALS",
    "FRONT_THROUGHPUT_RESOLUTION",
    "GRID_MAX",
    "HOST_DRIVER",
    "LATENCY_APPS",
    "MIXES",
    "STATIC_DROPS",
    "THROUGHPUT_FLOOR",
    "THROUGHPUT_TIE",
    "Candidate",
    "Objective",
    "Point",
    "PointMetrics",
    "TuneError",
    "TuneProgress",
    "TuneResult",
    "Workload",
    "candidate",
    "canonical_settings",
    "capture_workload",
    "check_driver",
    "choose",
    "grid_points",
    "grid_size",
    "mix_workload",
    "parse_objective",
    "pareto_front",
    "point_metrics",
    "scenario_workload",
    "space",
    "tune",
]
