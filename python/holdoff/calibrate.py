"""Host calibration: fit a host profile's costs to measurements of a real machine.

What it fits: the CPU costs of one host profile (per interrupt, per packet
received and sent, per byte copied, per context switch, or any other cost of
``holdoff.host`` profiles, named with ``--costs``) so that the model, run on
the scenarios that describe the user's measurements, reproduces what the user
measured: throughput, interrupt rate, CPU, received packet rate and latency,
row by row. The result is a profile file (``base`` preset + ``[costs]``) that
scenarios name as ``profile = "my-host.toml"``.

Method: ``scipy.optimize.least_squares`` (trust region, bounds) on the
relative residuals ``model / measured - 1`` of every measured cell, each
multiplied by the square root of its row's ``weight``. The variables are the
logarithms of the costs relative to their start, so every cost stays positive
and steps are relative; costs are rounded to integers (ns, or ps per byte)
before the model sees them, and the Jacobian is taken by forward differences
of 3 % (a step far above the 1-unit rounding). Every evaluation runs each row's
scenario with the candidate costs as ``profile_overrides`` of the calibrated
host, in a process pool; the model is deterministic, so the same inputs give
the same fit and the same file.

Identifiability: before fitting (at the start costs) and after it (at the
fitted costs) each cost is moved by 10 % and every row re-run. A cost that
moves no measured value by 0.1 % is not identified by the rows; two costs
whose columns of the Jacobian are nearly parallel (|cos| > 0.995), or a set
whose normalised Jacobian is ill-conditioned, cannot be told apart; fewer
measured values than costs cannot determine them. Each case is refused with a
message naming the cost(s) and the row that would identify them.

What it simplifies: each measurement is taken as exact up to its weight (no
error model); the costs are constant (the model has no caches or frequency
scaling), so a fit to rows far apart in load shows up as residuals, not as a
better fit; only the calibrated host's costs move (a peer's stay its preset).

Units: costs in ns (``*_ns``) or ps per byte (``copy_ps_per_byte``) at the
base profile's nominal clock; throughput in Mb/s (10^6 bit/s of application
goodput, as iperf prints), interrupts and packets per second, CPU in percent,
latency in microseconds.

The rows (CSV, one measurement per row; ``#`` starts a comment, blank lines
are skipped):

- ``scenario``: the scenario file that sets up the measurement, relative to
  the CSV file (optional when ``--scenario`` gives one for every row);
- setup columns: a scenario field path (a name with ``.`` or ``[``, e.g.
  ``generators[0].rate_pps``, ``hosts[0].nics[0].moderation.itr_per_s``, or
  one of ``duration_ms``, ``seed``, ``sample_interval_us``), set in that
  row's scenario (the ``holdoff run --set`` syntax; empty cell: unchanged);
- measured columns (any subset per row; an empty cell is not measured):
  ``throughput_mbps`` (an application's goodput: iperf's or netperf's
  result), ``interrupts_per_s`` (all interrupts of the calibrated host's
  NICs, all vectors: ``vmstat 1`` in/s minus the idle rate, ``systat vm``,
  or the NIC's lines of ``/proc/interrupts`` differenced over a second),
  ``cpu_pct`` (the calibrated host's busy CPU in percent of ONE core: the
  per-core ``100 - %idle`` of ``mpstat -P ALL 1`` summed over cores, or
  ``top``'s per-process view; 100 = one core fully busy; in the model the
  interrupt, softirq and application time, not ``load.cpu_hogs``), ``cpu_pct_all``
  (busy CPU in percent of ALL cores: ``100 - %idle`` of mpstat's ``all``
  line or ``vmstat``'s ``us + sy``), ``rx_pps`` (frames received by the
  host's NICs per second: ``ip -s link``, ``netstat -i`` differenced,
  ``sar -n DEV``), ``latency_us`` (an application's median latency:
  ``sockperf ping-pong``'s 50th percentile, ping's average) and
  ``latency_p99_us`` (its 99th percentile);
- ``weight`` (optional, > 0, default 1): how much the row's residuals count;
- ``app`` (optional): the application whose throughput or latency the row
  measured (default ``--app``, else the one application that reports it);
- ``label`` (optional): a name for the row in the tables.

Sources: the method is ordinary nonlinear least squares
(``scipy.optimize.least_squares``, SciPy reference); the measurement
commands are those of sysstat (mpstat, sar), procps (vmstat, top), OpenBSD
systat(1), iperf and sockperf.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import tomli_w

from holdoff import _core, inputs
from holdoff.calibrate_model import Model, observe
from holdoff.calibrate_rows import (
    MAX_ROWS,
    MEASURED,
    OTHER_COLUMNS,
    SETUP_FIELDS,
    CalibrationError,
    Row,
    known_columns,
    parse_costs,
    parse_start,
    profile_of_host,
    read_csv,
    read_rows,
    read_rows_head,
)
from holdoff.stats import Interval, ci95, parse_seeds
from holdoff.sweeps import derive_seed

__all__ = [
    "DEFAULT_COSTS",
    "MAX_ROWS",
    "MEASURED",
    "PROGRESS_EVERY_S",
    "OTHER_COLUMNS",
    "SETUP_FIELDS",
    "Calibration",
    "CalibrationError",
    "Model",
    "ProgressLines",
    "Row",
    "calibrate",
    "check_identified",
    "known_columns",
    "observe",
    "parse_costs",
    "parse_start",
    "profile_costs",
    "profile_of_host",
    "read_csv",
    "read_rows",
    "read_rows_head",
    "seed_spread",
]

Progress = Callable[[str], None]

#: Costs fitted unless ``--costs`` names others (the issue's list).
DEFAULT_COSTS: tuple[str, ...] = (
    "irq_entry_exit_ns",
    "rx_packet_ns",
    "tx_packet_ns",
    "copy_ps_per_byte",
    "context_switch_ns",
)
#: Relative step of the fit's finite differences (above integer rounding).
FIT_STEP = 0.03
#: Relative step of the identifiability check.
CHECK_STEP = 0.10
#: A cost is identified when a CHECK_STEP change moves some measured value
#: by more than this fraction.
MIN_EFFECT = 1e-3
#: Two costs cannot be told apart when their Jacobian columns have |cos| above this.
MAX_COS = 0.995
#: ... or when the column-normalised Jacobian's condition number exceeds this.
MAX_CONDITION = 1e3
#: Largest value of a cost (the scenario bound) [ns or ps per byte].
MAX_COST = 1_000_000
#: How far a fitted cost may move from its start (factor, either way).
MAX_FACTOR = 100.0

#: What row identifies each cost (for refusals).
HINTS: dict[str, str] = {
    "irq_entry_exit_ns": (
        "two rows at the same packet rate with different interrupt rates (an ITR column "
        "such as `hosts[0].nics[0].moderation.itr_per_s`), with cpu_pct and interrupts_per_s "
        "measured"
    ),
    "mmio_read_ns": (
        "two rows at the same packet rate with different interrupt rates (each interrupt "
        "reads ICR), with cpu_pct measured"
    ),
    "mmio_write_ns": "rows at different interrupt and packet rates with cpu_pct measured",
    "softirq_entry_ns": (
        "two rows at the same packet rate with different interrupt rates, with cpu_pct measured"
    ),
    "poll_overhead_ns": (
        "two rows at the same packet rate with different interrupt rates, with cpu_pct measured"
    ),
    "rx_packet_ns": (
        "a receive row (traffic into the host, e.g. a generator or iperf to it) with "
        "cpu_pct or throughput_mbps measured"
    ),
    "rx_driver_ns": "a receive row under a driver that does RX work in the interrupt handler",
    "tx_packet_ns": (
        "a send row (the host transmitting: iperf or a udp_send application on it) with "
        "cpu_pct or throughput_mbps measured"
    ),
    "tx_clean_ns": "a send row with cpu_pct measured",
    "forward_packet_ns": "a forwarding row (hosts[].forward) with cpu_pct or rx_pps measured",
    "copy_ps_per_byte": (
        "rows at two frame sizes (a `generators[0].frame_bytes` column) with throughput_mbps "
        "or cpu_pct measured"
    ),
    "wakeup_ns": (
        "a row with a blocking receiver application (request-response: ping, rpc) with "
        "latency_us or cpu_pct measured"
    ),
    "context_switch_ns": (
        "a row with a blocking receiver application (request-response latency: ping, rpc, "
        "sockperf ping-pong) with latency_us or cpu_pct measured"
    ),
    "lock_ns": "a row under a driver with a modelled lock (a FreeBSD driver) with cpu_pct",
    "apic_mask_ns": "a row under a driver that masks its line in the I/O APIC, with cpu_pct",
    "rx_ack_ns": "a TCP send row (the host receiving ACKs: iperf from it) with cpu_pct",
    "tx_ack_ns": "a TCP receive row (the host sending ACKs: iperf to it) with cpu_pct",
    "tx_driver_ns": "a send row under a driver with a modelled lock, with cpu_pct",
    "lock_handoff_ns": "a row with two cores contending for a driver lock, with cpu_pct",
}
#: Rows that separate two costs that often move together.
PAIR_HINTS: dict[frozenset[str], str] = {
    frozenset({"rx_packet_ns", "tx_packet_ns"}): (
        "a receive row and a send row (iperf to the host and iperf from it)"
    ),
    frozenset({"rx_packet_ns", "copy_ps_per_byte"}): (
        "rows at two frame sizes (a `generators[0].frame_bytes` column)"
    ),
    frozenset({"tx_packet_ns", "copy_ps_per_byte"}): (
        "send rows at two frame sizes (e.g. `apps[0].frame_bytes`)"
    ),
    frozenset({"irq_entry_exit_ns", "rx_packet_ns"}): (
        "two rows at the same packet rate with different interrupt rates (ITR)"
    ),
    frozenset({"irq_entry_exit_ns", "tx_packet_ns"}): (
        "two send rows at the same packet rate with different interrupt rates (ITR)"
    ),
    frozenset({"irq_entry_exit_ns", "mmio_read_ns"}): (
        "nothing in the rows separates them: every interrupt pays both; fit only one"
    ),
    frozenset({"context_switch_ns", "wakeup_ns"}): (
        "nothing in common rows separates them: every blocking receive pays both; fit only one"
    ),
}


@dataclass
class Calibration:
    """A finished fit: the profile file's contents and the per-row comparison."""

    base: str
    name: str
    description: str
    profile_costs: dict[str, int]
    fitted: dict[str, int]
    start: dict[str, int]
    #: The fitted costs in the base preset (before any profile file).
    base_costs: dict[str, int]
    rows: list[dict[str, Any]]
    rms_residual_pct: float
    evaluations: int
    status: str
    rows_file: str

    def to_toml(self) -> str:
        """The profile file (deterministic: no date, sorted tables)."""
        doc: dict[str, Any] = {
            "base": self.base,
            "name": self.name,
            "description": self.description,
            "costs": dict(sorted(self.profile_costs.items())),
            "fit": {
                "rows_file": self.rows_file,
                "fitted": list(self.fitted),
                "start": self.start,
                "rms_residual_pct": round(self.rms_residual_pct, 3),
                "evaluations": self.evaluations,
                "rows": [_toml_row(r) for r in self.rows],
            },
        }
        head = (
            "# Host profile written by `holdoff calibrate` (docs/calibrate.md).\n"
            '# Name it in a scenario: [[hosts]] profile = "<this file>" (relative to the\n'
            "# scenario file). [costs] replace the base preset's; [fit] is provenance only.\n"
        )
        return head + tomli_w.dumps(doc)

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": {
                "base": self.base,
                "name": self.name,
                "description": self.description,
                "costs": dict(sorted(self.profile_costs.items())),
            },
            "costs": [
                {
                    "cost": c,
                    "base": self.base_costs[c],
                    "start": self.start[c],
                    "fitted": v,
                    "ratio": v / self.base_costs[c] if self.base_costs[c] else None,
                }
                for c, v in self.fitted.items()
            ],
            "rows": self.rows,
            "rms_residual_pct": self.rms_residual_pct,
            "evaluations": self.evaluations,
            "status": self.status,
            "rows_file": self.rows_file,
        }


def _toml_row(r: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"row": r["row"], "label": r["label"]}
    for m in r["values"]:
        out[m["column"]] = {
            "measured": m["measured"],
            "model": round(m["model"], 6),
            "residual_pct": round(m["residual_pct"], 3),
        }
        if m.get("model_ci95"):
            out[m["column"]]["model_ci95"] = [round(v, 6) for v in m["model_ci95"]]
            out[m["column"]]["seeds"] = m["seeds"]
    return out


# -- identifiability --------------------------------------------------------------


def _scaled(start: Sequence[int], x: np.ndarray) -> tuple[int, ...]:
    return tuple(
        int(min(MAX_COST, max(1, round(s * math.exp(v))))) for s, v in zip(start, x, strict=True)
    )


def check_identified(model: Model, point: tuple[int, ...], where: str) -> np.ndarray:
    """Refuse (CalibrationError) unless every fitted cost moves some measured
    value and no two cannot be told apart, at ``point``; returns the
    sensitivity matrix (relative change of each cell per relative change of
    each cost)."""
    costs = model.costs
    bumped = [
        tuple(int(round(v * (1 + CHECK_STEP))) if j == k else v for j, v in enumerate(point))
        for k in range(len(costs))
    ]
    outs = model.evaluate([point, *bumped])
    cells = model.values(outs[0])
    for r, col, _, value in cells:
        if math.isnan(value):
            raise CalibrationError(
                f"row {r.number}, column {col}: the model gives no value {where} "
                f"(the application reports none); measure another column or name the app"
            )
    base = np.array([c[3] for c in cells])
    sens = np.zeros((len(cells), len(costs)))
    for k, out in enumerate(outs[1:]):
        vals = np.array([c[3] for c in model.values(out)])
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(base != 0, (vals - base) / np.abs(base), vals - base)
        sens[:, k] = rel / CHECK_STEP
    for k, c in enumerate(costs):
        if np.max(np.abs(sens[:, k])) * CHECK_STEP < MIN_EFFECT:
            raise CalibrationError(
                f"cost `{c}` is not identified by these rows {where}: no row's measurement "
                f"depends on it (a 10 % change moves none by 0.1 %); add "
                f"{HINTS.get(c, 'a row whose measurement depends on it')}, or leave it out of "
                f"--costs"
            )
    w = model.weights()
    jac = sens * w[:, None]
    norms = np.linalg.norm(jac, axis=0)
    unit = jac / norms
    for a in range(len(costs)):
        for b in range(a + 1, len(costs)):
            cos = float(unit[:, a] @ unit[:, b])
            if abs(cos) > MAX_COS:
                pair = frozenset({costs[a], costs[b]})
                hint = PAIR_HINTS.get(
                    pair, f"{HINTS.get(costs[a], '')}; or {HINTS.get(costs[b], '')}"
                )
                raise CalibrationError(
                    f"costs `{costs[a]}` and `{costs[b]}` cannot be told apart by these rows "
                    f"{where}: every measurement moves with both in the same proportion "
                    f"(|cos| = {abs(cos):.4f}); add {hint}"
                )
    if len(costs) > 1:
        _, sv, vt = np.linalg.svd(unit, full_matrices=False)
        if sv[-1] == 0 or sv[0] / sv[-1] > MAX_CONDITION:
            weak = [costs[k] for k in np.argsort(-np.abs(vt[-1])) if abs(vt[-1][k]) > 0.3]
            raise CalibrationError(
                f"costs {', '.join(f'`{c}`' for c in weak)} cannot be told apart by these "
                f"rows {where}: a combination of them leaves every measurement almost "
                f"unchanged (condition number {sv[0] / max(sv[-1], 1e-300):.3g}); add rows that "
                f"move one without the others: "
                + "; ".join(f"for {c}: {HINTS.get(c, 'a row that depends on it')}" for c in weak)
            )
    return sens


# -- the fit ----------------------------------------------------------------------


def profile_costs(profile: str) -> dict[str, int]:
    """Every cost of ``profile`` (a preset name or a profile file) by name."""
    base_dir = None
    if profile.endswith(".toml"):
        base_dir = str(Path(profile).resolve().parent)
        profile = Path(profile).name
    try:
        data = _core.host_profile_json(profile, base_dir)
    except _core.ScenarioError as err:
        raise CalibrationError(f"--profile: {err}") from None
    return {k: int(v) for k, v in json.loads(data)["costs"].items()}


def _base_preset(profile: str) -> tuple[str, dict[str, int]]:
    """The preset a profile starts from and the costs a profile file sets."""
    if not profile.endswith(".toml"):
        return profile, {}
    try:
        doc = inputs.read_toml(profile, "profile file")
    except inputs.InputError as err:
        raise CalibrationError(f"--profile: {err}") from None
    return str(doc["base"]), {str(k): int(v) for k, v in (doc.get("costs") or {}).items()}


#: Seconds between progress lines when stderr is not a terminal (a log file,
#: a CI job): often enough to show a long fit is alive, rare enough to read.
PROGRESS_EVERY_S = 5.0


class ProgressLines:
    """A fit's progress on ``stream``: on a terminal one line rewritten in
    place; elsewhere a plain line at most every ``every_s`` seconds (the
    first message at once)."""

    def __init__(
        self,
        stream: IO[str],
        *,
        terminal: bool,
        every_s: float = PROGRESS_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
        prefix: str = "calibrating: ",
    ) -> None:
        self.stream, self.terminal, self.every_s = stream, terminal, every_s
        self.clock, self.prefix = clock, prefix
        self.shown = False
        self.last: float | None = None

    def __call__(self, message: str) -> None:
        if self.terminal:
            self.stream.write(f"\r{self.prefix}{message}\x1b[K")
        else:
            now = self.clock()
            if self.last is not None and now - self.last < self.every_s:
                return
            self.last = now
            self.stream.write(f"{self.prefix}{message}\n")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Removes the rewritten line (a terminal) before the results print."""
        if self.terminal and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


#: Most runs of a ``--seeds`` spread (rows x seeds): as a sweep's run limit.
MAX_SEED_RUNS = 100_000


def seed_spread(
    model: Model,
    solution: tuple[int, ...],
    cells: Sequence[tuple[Row, str, float, float]],
    seeds: int,
    say: Progress,
) -> list[Interval]:
    """Each measured cell's model value at ``solution`` over ``seeds`` seeds:
    the fit's own run (the row's seed) and ``seeds - 1`` more, each seed
    derived from (the row's seed, the row's number, the replicate) as a
    sweep's; the mean with its 95 % interval (:func:`holdoff.stats.ci95`, a
    bootstrap for the latency percentiles), in the order of ``cells``."""
    rows = model.rows
    if len(rows) * seeds > MAX_SEED_RUNS:
        raise CalibrationError(
            f"--seeds {seeds} with {len(rows)} rows is {len(rows) * seeds:,} runs; the limit "
            f"is {MAX_SEED_RUNS:,}: use fewer seeds"
        )
    say(f"running the fitted costs at {seeds} seeds per row")
    extra = [
        dataclasses.replace(
            r,
            doc={
                **r.doc,
                "seed": derive_seed(int(r.doc.get("seed", 0)), {"row": r.number}, k),
            },
        )
        for k in range(1, seeds)
        for r in rows
    ]
    # The fit's worker processes run these rows too (no second pool).
    others = Model(extra, model.costs, 1)
    others.pool, others.apps = model.pool, model.apps
    more = others.values(others.evaluate([solution])[0])
    values: list[list[float]] = [[v] for _, _, _, v in cells]
    for k, (_, _, _, v) in enumerate(more):
        values[k % len(cells)].append(v)
    out: list[Interval] = []
    for (_, col, _, _), vs in zip(cells, values, strict=True):
        finite = [v for v in vs if math.isfinite(v)]
        if not finite:
            out.append(Interval(math.nan, None, None, len(vs)))
            continue
        out.append(ci95(finite, percentile=col in ("latency_us", "latency_p99_us")))
    return out


def calibrate(
    csv_file: Path,
    *,
    profile: str,
    costs: Sequence[str] | None = None,
    scenario: Path | None = None,
    host: str | None = None,
    app: str | None = None,
    start: Mapping[str, int] | None = None,
    assignments: Sequence[str] = (),
    name: str | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    seeds: int = 1,
) -> Calibration:
    """Fit ``costs`` of ``profile`` to the rows of ``csv_file``.

    ``start``: start values of some fitted costs (default: the profile's);
    ``name``: the written profile's name (default: ``<base>-calibrated``);
    ``jobs``: worker processes (default: the CPU count); ``seeds``: after the
    fit (which runs each row at its own seed), run the fitted costs at this
    many seeds per row and report each model value as their mean with its 95 %
    interval, and the residual with its interval (:func:`seed_spread`).
    Raises :class:`CalibrationError` naming the row, column or cost at fault.
    """
    try:
        parse_seeds(seeds)
    except ValueError as err:
        raise CalibrationError(str(err)) from None
    say = progress or (lambda _msg: None)
    base_costs = profile_costs(profile)
    fitted_names = list(costs) if costs else list(DEFAULT_COSTS)
    for c in fitted_names:
        if c not in base_costs:
            raise CalibrationError(
                f"--costs: `{c}` is not a cost of a host profile; allowed: {', '.join(base_costs)}"
            )
    if len(set(fitted_names)) != len(fitted_names):
        raise CalibrationError("--costs: a cost is named twice")
    start_costs = {c: base_costs[c] for c in fitted_names}
    for c, v in (start or {}).items():
        if c not in start_costs:
            raise CalibrationError(
                f"--start: `{c}` is not one of the fitted costs ({', '.join(fitted_names)})"
            )
        if not 1 <= int(v) <= MAX_COST:
            raise CalibrationError(f"--start: {c} = {v} is out of range; allowed: 1 to {MAX_COST}")
        start_costs[c] = int(v)
    for c, v in start_costs.items():
        if v <= 0:
            raise CalibrationError(
                f"cost `{c}` is 0 in profile {profile!r}: a fit cannot scale it; give a start "
                f"value with --start {c}=VALUE"
            )
    rows = read_rows(
        csv_file, scenario=scenario, profile=profile, host=host, app=app, assignments=assignments
    )
    n_cells = sum(len(r.measured) for r in rows)
    if n_cells < len(fitted_names):
        raise CalibrationError(
            f"{n_cells} measured value(s) cannot determine {len(fitted_names)} costs "
            f"({', '.join(fitted_names)}); measure at least {len(fitted_names)} values "
            f"(more rows or more columns per row), or fit fewer costs with --costs"
        )
    x_start = tuple(start_costs[c] for c in fitted_names)
    n_jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    with Model(rows, fitted_names, min(n_jobs, len(rows) * (len(fitted_names) + 1))) as model:
        say(f"{len(rows)} rows, {n_cells} measured values, fitting {', '.join(fitted_names)}")
        model.choose_apps(x_start)
        check_identified(model, x_start, "at the start costs")
        weights = model.weights()
        step = math.log1p(FIT_STEP)

        def residuals(x: np.ndarray) -> np.ndarray:
            res: np.ndarray = model.relative(model.evaluate([_scaled(x_start, x)])[0]) * weights
            say(
                f"evaluation {len(model.cache)}: rms residual "
                f"{100 * math.sqrt(float(np.mean(res**2))):.2f} %"
            )
            return res

        def jacobian(x: np.ndarray) -> np.ndarray:
            here = _scaled(x_start, x)
            moved = []
            for k in range(len(x)):
                xk = x.copy()
                xk[k] += step if xk[k] + step <= upper[k] else -step
                moved.append(xk)
            outs = model.evaluate([here] + [_scaled(x_start, xk) for xk in moved])
            f0 = model.relative(outs[0]) * weights
            jac = np.zeros((len(f0), len(x)))
            for k, xk in enumerate(moved):
                fk = model.relative(outs[k + 1]) * weights
                jac[:, k] = (fk - f0) / (xk[k] - x[k])
            return jac

        from scipy.optimize import least_squares

        lower = np.array([math.log(max(1.0, s / MAX_FACTOR) / s) for s in x_start])
        upper = np.array([math.log(min(MAX_COST, s * MAX_FACTOR) / s) for s in x_start])
        fit = least_squares(
            residuals,
            np.zeros(len(x_start)),
            jac=jacobian,
            bounds=(lower, upper),
            x_scale=1.0,
            xtol=1e-4,
            ftol=1e-8,
            gtol=1e-8,
            max_nfev=100,
        )
        solution = _scaled(x_start, fit.x)
        check_identified(model, solution, "at the fitted costs")
        outs = model.evaluate([solution])[0]
        cells = model.values(outs)
        evaluations = len(model.cache)
        spread = seed_spread(model, solution, cells, seeds, say) if seeds > 1 else None
    fitted = dict(zip(fitted_names, solution, strict=True))
    by_row: dict[int, dict[str, Any]] = {}
    for k, (r, col, meas, value) in enumerate(cells):
        entry = by_row.setdefault(
            r.number,
            {"row": r.number, "label": r.label, "scenario": str(r.scenario_file), "values": []},
        )
        item: dict[str, Any] = {"column": col, "measured": meas, "model": value}
        if spread is not None:
            iv = spread[k]
            item["model"] = iv.mean
            item["model_ci95"] = iv.as_list()
            item["seeds"] = iv.n
        item["residual_pct"] = 100.0 * (item["model"] / meas - 1.0)
        if spread is not None:
            ci = item["model_ci95"]
            item["residual_pct_ci95"] = (
                None if ci is None else [100.0 * (v / meas - 1.0) for v in ci]
            )
        entry["values"].append(item)
        cells[k] = (r, col, meas, item["model"])
    res = np.array([value / meas - 1.0 for _, _, meas, value in cells]) * weights
    base_name, file_costs = _base_preset(profile)
    preset_costs = profile_costs(base_name)
    return Calibration(
        base=base_name,
        name=name or f"{base_name}-calibrated",
        description=(
            f"{base_name} with {', '.join(fitted_names)} fitted by holdoff calibrate to "
            f"{csv_file.name} ({len(rows)} rows)"
        ),
        profile_costs={**file_costs, **fitted},
        fitted=fitted,
        start=dict(zip(fitted_names, x_start, strict=True)),
        base_costs={c: preset_costs[c] for c in fitted_names},
        rows=list(by_row.values()),
        rms_residual_pct=100.0 * math.sqrt(float(np.mean(res**2))),
        evaluations=evaluations,
        status=str(fit.message),
        rows_file=csv_file.name,
    )
