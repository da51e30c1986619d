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

import copy
import json
import math
import os
import signal
import tomllib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import tomli_w

from holdoff import _core
from holdoff.api import run_text, validate_text
from holdoff.sweeps import SweepError, parse_assignment, set_path

#: Measured columns: name -> (unit, what it is).
MEASURED: dict[str, tuple[str, str]] = {
    "throughput_mbps": ("Mb/s", "application goodput"),
    "interrupts_per_s": ("1/s", "interrupts of the host's NICs, all vectors"),
    "cpu_pct": ("%", "busy CPU in percent of one core (summed over cores)"),
    "cpu_pct_all": ("%", "busy CPU in percent of all cores"),
    "rx_pps": ("1/s", "frames received by the host's NICs"),
    "latency_us": ("us", "application latency, median"),
    "latency_p99_us": ("us", "application latency, 99th percentile"),
}
#: Top-level scenario fields a setup column may name without a `.` or `[`.
SETUP_FIELDS: tuple[str, ...] = ("duration_ms", "seed", "sample_interval_us")
#: The other columns.
OTHER_COLUMNS: tuple[str, ...] = ("scenario", "weight", "app", "label")
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


class CalibrationError(ValueError):
    """The rows, the options or the fit cannot give a profile (the message says
    which row, column or cost, and what to change)."""


Progress = Callable[[str], None]


@dataclass
class Row:
    """One measurement: a scenario set up as the machine was, and what was measured."""

    number: int
    label: str
    scenario_file: Path
    doc: dict[str, Any] = field(repr=False)
    host_index: int
    host: str
    app: str | None
    measured: dict[str, float]
    weight: float

    @property
    def base_dir(self) -> str:
        return str(self.scenario_file.resolve().parent)


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
    return out


# -- reading the rows ---------------------------------------------------------------


def known_columns() -> str:
    return (
        f"{', '.join(OTHER_COLUMNS)}, the measured columns {', '.join(MEASURED)}, "
        f"and setup columns: a scenario field path (with `.` or `[`, e.g. "
        f"generators[0].rate_pps) or {', '.join(SETUP_FIELDS)}"
    )


def _is_setup(column: str) -> bool:
    return "." in column or "[" in column or column in SETUP_FIELDS


def _number(cell: str, where: str, *, positive: bool = False) -> float:
    try:
        v = float(cell)
    except ValueError:
        raise CalibrationError(f"{where}: `{cell}` is not a number") from None
    if not math.isfinite(v):
        raise CalibrationError(f"{where}: `{cell}` is not a finite number")
    if v < 0:
        raise CalibrationError(f"{where}: {cell} is negative; measurements and weights are >= 0")
    if positive and v == 0:
        raise CalibrationError(
            f"{where}: 0 gives no relative residual; leave the cell empty if it was not measured"
        )
    return v


def read_rows(
    csv_file: Path,
    *,
    scenario: Path | None = None,
    profile: str,
    host: str | None = None,
    app: str | None = None,
    assignments: Sequence[str] = (),
) -> list[Row]:
    """The rows of ``csv_file``, each with its scenario set up and checked.

    ``profile``: the base profile (a preset name, or a profile file relative to
    the working directory); ``host``: the calibrated host's name (default: the
    one host whose profile is ``profile``). ``assignments``: ``path=value``
    changes applied to every row's scenario before its own setup columns.
    """
    if not csv_file.exists():
        raise CalibrationError(f"rows file not found: {csv_file}")
    if csv_file.is_dir():
        raise CalibrationError(f"rows file is a folder, not a CSV file: {csv_file}")
    try:
        table = pd.read_csv(
            csv_file,
            comment="#",
            dtype=str,
            keep_default_na=False,
            skipinitialspace=True,
            skip_blank_lines=True,
        )
    except pd.errors.EmptyDataError:
        raise CalibrationError(
            f"{csv_file} has no rows: write a header line of column names, then one line per "
            f"measurement (docs/calibrate.md)"
        ) from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        raise CalibrationError(f"{csv_file} is not a CSV file: {err}") from None
    table.columns = [str(c).strip() for c in table.columns]
    for c in table.columns:
        if c.startswith("Unnamed:") or not c:
            raise CalibrationError(f"{csv_file}: a column has no name; name every column")
        if c not in MEASURED and c not in OTHER_COLUMNS and not _is_setup(c):
            raise CalibrationError(
                f"{csv_file}: unknown column `{c}`; the columns are {known_columns()}"
            )
    if table.empty:
        raise CalibrationError(f"{csv_file} has a header but no rows")
    if "scenario" not in table.columns and scenario is None:
        raise CalibrationError(
            f"{csv_file}: no `scenario` column; add one (the scenario file of each row, "
            f"relative to the CSV) or give --scenario FILE for every row"
        )
    global_changes = []
    for item in assignments:
        try:
            global_changes.append(parse_assignment(item))
        except SweepError as err:
            raise CalibrationError(f"--set {err}") from None
    rows = []
    folder = csv_file.resolve().parent
    for i, record in enumerate(table.to_dict(orient="records")):
        rows.append(
            _row(
                i + 1,
                {str(k): str(v).strip() for k, v in record.items()},
                folder,
                scenario=scenario,
                profile=profile,
                host=host,
                app=app,
                changes=global_changes,
            )
        )
    return rows


def _row(
    number: int,
    cells: dict[str, str],
    folder: Path,
    *,
    scenario: Path | None,
    profile: str,
    host: str | None,
    app: str | None,
    changes: Sequence[tuple[str, Any]],
) -> Row:
    where = f"row {number}"
    measured: dict[str, float] = {}
    for col in MEASURED:
        cell = cells.get(col, "")
        if cell:
            measured[col] = _number(cell, f"{where}, column {col}", positive=True)
    if not measured:
        raise CalibrationError(
            f"{where}: no measured value; fill at least one of {', '.join(MEASURED)}"
        )
    weight = 1.0
    if cells.get("weight"):
        weight = _number(cells["weight"], f"{where}, column weight", positive=True)
    if cells.get("scenario"):
        path = Path(cells["scenario"])
        scenario_file = path if path.is_absolute() else folder / path
    elif scenario is not None:
        scenario_file = scenario
    else:
        raise CalibrationError(f"{where}, column scenario: empty; name the row's scenario file")
    if not scenario_file.is_file():
        raise CalibrationError(
            f"{where}, column scenario: scenario file not found: {scenario_file}"
        )
    try:
        doc = tomllib.loads(scenario_file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as err:
        raise CalibrationError(
            f"{where}, column scenario: {scenario_file} is not a valid scenario: {err}"
        ) from None
    setup = [(c, v) for c, v in cells.items() if _is_setup(c) and v]
    for field_path, value in changes:
        try:
            set_path(doc, field_path, value)
        except SweepError as err:
            raise CalibrationError(f"{where}: --set {err}") from None
    for col, cell in setup:
        try:
            field_path, value = parse_assignment(f"{col}={cell}")
            set_path(doc, field_path, value)
        except SweepError as err:
            raise CalibrationError(f"{where}, column {col}: {err}") from None
    hosts: list[Any] = doc["hosts"] if isinstance(doc.get("hosts"), list) else []
    index = _host_index(hosts, host, profile, scenario_file, where)
    doc["hosts"][index]["profile"] = _profile_value(profile)
    base_dir = str(scenario_file.resolve().parent)
    try:
        validate_text(tomli_w.dumps(doc), base_dir=base_dir)
    except _core.ScenarioError as err:
        raise CalibrationError(f"{where} (scenario {scenario_file}): {err}") from None
    label = cells.get("label") or ", ".join(
        [scenario_file.stem] + [f"{c.rsplit('.', 1)[-1]}={v}" for c, v in setup]
    )
    return Row(
        number=number,
        label=label,
        scenario_file=scenario_file,
        doc=doc,
        host_index=index,
        host=str(doc["hosts"][index].get("name")),
        app=cells.get("app") or app,
        measured=measured,
        weight=weight,
    )


def _profile_value(profile: str) -> str:
    """A profile as a row's scenario names it: a file absolute (rows live elsewhere)."""
    if profile.endswith(".toml"):
        return str(Path(profile).resolve())
    return profile


def _host_index(
    hosts: list[Any], host: str | None, profile: str, scenario_file: Path, where: str
) -> int:
    names = [str(h.get("name")) for h in hosts if isinstance(h, dict)]
    if host is not None:
        if host not in names:
            raise CalibrationError(
                f"{where}: scenario {scenario_file} has no host {host!r}; "
                f"its hosts: {', '.join(names) or 'none'}"
            )
        return names.index(host)
    want = _profile_value(profile)
    found = []
    for i, h in enumerate(hosts):
        p = str(h.get("profile", ""))
        if p.endswith(".toml") and not Path(p).is_absolute():
            p = str((scenario_file.resolve().parent / p).resolve())
        if p == want:
            found.append(i)
    if len(found) != 1:
        what = "no host" if not found else f"{len(found)} hosts"
        raise CalibrationError(
            f"{where}: {what} of scenario {scenario_file} use profile {profile!r}; name the "
            f"calibrated host with --host (its hosts: {', '.join(names) or 'none'})"
        )
    return found[0]


# -- the model --------------------------------------------------------------------


def observe(summary: Mapping[str, Any], host: str) -> dict[str, Any]:
    """What a row can measure, from a run's summary: the host's interrupt
    rate, busy CPU (percent of one core and of all cores) and received frame
    rate, and each application's goodput [Mb/s] and latency [us]."""
    sim_s = max(int(summary.get("sim_time_ns", 0)), 1) / 1e9
    ports = [p for p in summary.get("ports", []) if str(p.get("port", "")).startswith(host + ".")]
    h: Mapping[str, Any] = next((x for x in summary.get("hosts", []) if x.get("host") == host), {})
    cpu_ns = h.get("cpu_ns") or {}
    busy = sum(float(cpu_ns.get(k, 0)) for k in ("hardirq", "softirq", "app"))
    cores = max(int(h.get("cores", 1)), 1)
    apps: dict[str, dict[str, float]] = {}
    for a in summary.get("apps", []):
        lat = a.get("latency_us") or {}
        apps[str(a.get("app"))] = {
            "throughput_mbps": float(a.get("throughput_bps") or 0.0) / 1e6,
            "latency_us": float(lat["p50"]) if lat.get("p50") is not None else math.nan,
            "latency_p99_us": float(lat["p99"]) if lat.get("p99") is not None else math.nan,
        }
    return {
        "interrupts_per_s": sum(float(p.get("interrupts", 0)) for p in ports) / sim_s,
        "rx_pps": sum(float(p.get("rx_packets", 0)) for p in ports) / sim_s,
        "cpu_pct": 100.0 * busy / (sim_s * 1e9),
        "cpu_pct_all": 100.0 * busy / (sim_s * 1e9) / cores,
        "apps": apps,
    }


def _run_row(task: tuple[dict[str, Any], str, int, str, dict[str, int]]) -> dict[str, Any]:
    """One run of a row with candidate costs (in a worker process)."""
    doc, base_dir, host_index, host, costs = task
    doc = copy.deepcopy(doc)
    h = doc["hosts"][host_index]
    h["profile_overrides"] = {**h.get("profile_overrides", {}), **costs}
    try:
        result = run_text(tomli_w.dumps(doc), base_dir=base_dir)
    except (_core.HoldoffError, ValueError) as err:
        return {"error": str(err)}
    return observe(result.report["summary"], host)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Model:
    """The rows evaluated at candidate costs, with a cache keyed by the
    integer costs and a process pool for the runs."""

    def __init__(self, rows: list[Row], costs: Sequence[str], jobs: int) -> None:
        self.rows = rows
        self.costs = list(costs)
        self.cache: dict[tuple[int, ...], list[dict[str, Any]]] = {}
        self.jobs = max(1, jobs)
        self.pool: ProcessPoolExecutor | None = None
        self.apps: dict[int, dict[str, str]] = {}

    def __enter__(self) -> Model:
        if self.jobs > 1:
            # As sweeps: forked workers (the caller runs no threads: progress
            # is plain writes); Ctrl-C stops the parent, which shuts the pool down.
            self.pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=_ignore_sigint)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def evaluate(self, points: Sequence[tuple[int, ...]]) -> list[list[dict[str, Any]]]:
        """Every row at each of ``points`` (integer costs in ``self.costs`` order)."""
        todo = []
        for p in points:
            if p not in self.cache and p not in todo:
                todo.append(p)
        tasks = [
            (r.doc, r.base_dir, r.host_index, r.host, dict(zip(self.costs, p, strict=True)))
            for p in todo
            for r in self.rows
        ]
        if tasks:
            if self.pool is not None and len(tasks) > 1:
                outs = list(self.pool.map(_run_row, tasks))
            else:
                outs = [_run_row(t) for t in tasks]
            n = len(self.rows)
            for k, p in enumerate(todo):
                got = outs[k * n : (k + 1) * n]
                for r, o in zip(self.rows, got, strict=True):
                    if "error" in o:
                        at = ", ".join(f"{c} = {v}" for c, v in zip(self.costs, p, strict=True))
                        raise CalibrationError(
                            f"row {r.number} ({r.label}): the model cannot run it at {at}: "
                            f"{o['error']}"
                        )
                self.cache[p] = got
        return [self.cache[p] for p in points]

    def choose_apps(self, start: tuple[int, ...]) -> None:
        """Fix, per row, the application each throughput/latency column reads
        (from the run at the start costs)."""
        outs = self.evaluate([start])[0]
        for r, o in zip(self.rows, outs, strict=True):
            chosen: dict[str, str] = {}
            apps: dict[str, dict[str, float]] = o["apps"]
            for col in ("throughput_mbps", "latency_us", "latency_p99_us"):
                if col not in r.measured:
                    continue
                if r.app is not None:
                    if r.app not in apps:
                        raise CalibrationError(
                            f"row {r.number}: no application {r.app!r} in the run; "
                            f"its applications: {', '.join(apps) or 'none'}"
                        )
                    chosen[col] = r.app
                    continue
                if col == "throughput_mbps":
                    what = "throughput"
                    have = [a for a, v in apps.items() if v[col] > 0]
                else:
                    what = "latency"
                    have = [a for a, v in apps.items() if not math.isnan(v[col])]
                if len(have) != 1:
                    raise CalibrationError(
                        f"row {r.number}, column {col}: "
                        + (
                            f"no application reports a {what} in the model"
                            if not have
                            else f"{len(have)} applications report a {what} ({', '.join(have)})"
                        )
                        + "; name the measured one with --app or an `app` column "
                        f"(applications: {', '.join(apps) or 'none'})"
                    )
                chosen[col] = have[0]
            self.apps[r.number] = chosen

    def values(self, outs: list[dict[str, Any]]) -> list[tuple[Row, str, float, float]]:
        """(row, column, measured, model) for every measured cell, in a fixed order."""
        cells = []
        for r, o in zip(self.rows, outs, strict=True):
            for col, meas in r.measured.items():
                if col in ("throughput_mbps", "latency_us", "latency_p99_us"):
                    model = o["apps"][self.apps[r.number][col]][col]
                else:
                    model = o[col]
                cells.append((r, col, meas, float(model)))
        return cells

    def relative(self, outs: list[dict[str, Any]]) -> np.ndarray:
        """model / measured - 1 of every cell (unweighted); a value the model
        does not give at these costs (no latency recorded) counts as 0, -100 %."""
        rel = [model / meas - 1.0 for _, _, meas, model in self.values(outs)]
        return np.array([v if math.isfinite(v) else -1.0 for v in rel])

    def weights(self) -> np.ndarray:
        return np.array([math.sqrt(r.weight) for r in self.rows for _ in r.measured])


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
    doc = tomllib.loads(Path(profile).read_text(encoding="utf-8"))
    return str(doc["base"]), {str(k): int(v) for k, v in (doc.get("costs") or {}).items()}


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
) -> Calibration:
    """Fit ``costs`` of ``profile`` to the rows of ``csv_file``.

    ``start``: start values of some fitted costs (default: the profile's);
    ``name``: the written profile's name (default: ``<base>-calibrated``);
    ``jobs``: worker processes (default: the CPU count). Raises
    :class:`CalibrationError` naming the row, column or cost at fault.
    """
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
    fitted = dict(zip(fitted_names, solution, strict=True))
    by_row: dict[int, dict[str, Any]] = {}
    for r, col, meas, value in cells:
        entry = by_row.setdefault(
            r.number,
            {"row": r.number, "label": r.label, "scenario": str(r.scenario_file), "values": []},
        )
        entry["values"].append(
            {
                "column": col,
                "measured": meas,
                "model": value,
                "residual_pct": 100.0 * (value / meas - 1.0),
            }
        )
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


def profile_of_host(csv_file: Path, host: str, scenario: Path | None) -> str:
    """The profile ``host`` has in the first row's scenario (the default
    ``--profile``); a profile file comes back relative to the working
    directory."""
    rows = read_rows_head(csv_file)
    cell = rows.get("scenario", "")
    if cell:
        path = Path(cell)
        scenario_file = path if path.is_absolute() else csv_file.resolve().parent / path
    elif scenario is not None:
        scenario_file = scenario
    else:
        raise CalibrationError("row 1, column scenario: empty; name the row's scenario file")
    try:
        doc = tomllib.loads(scenario_file.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise CalibrationError(f"row 1, column scenario: {scenario_file}: {err}") from None
    for h in doc.get("hosts") or []:
        if isinstance(h, dict) and h.get("name") == host:
            p = str(h.get("profile", ""))
            if p.endswith(".toml") and not Path(p).is_absolute():
                return str(scenario_file.resolve().parent / p)
            return p
    raise CalibrationError(f"row 1: scenario {scenario_file} has no host {host!r}")


def read_rows_head(csv_file: Path) -> dict[str, str]:
    """The first row's cells (for defaults), or an error naming the file."""
    if not csv_file.is_file():
        raise CalibrationError(f"rows file not found: {csv_file}")
    try:
        table = pd.read_csv(csv_file, comment="#", dtype=str, keep_default_na=False, nrows=1)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError, ValueError):
        raise CalibrationError(f"{csv_file} is not a CSV file with a header and rows") from None
    if table.empty:
        raise CalibrationError(f"{csv_file} has a header but no rows")
    return {str(k).strip(): str(v).strip() for k, v in table.iloc[0].items()}


def parse_costs(text: str | None) -> list[str] | None:
    """``a,b,c`` as a list (None: the default costs)."""
    if text is None:
        return None
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise CalibrationError("--costs: name at least one cost, e.g. --costs rx_packet_ns")
    return names


def parse_start(items: Sequence[str]) -> dict[str, int]:
    """``cost=value`` items (``--start``) as a dict."""
    out: dict[str, int] = {}
    for item in items:
        for part in item.split(","):
            name, sep, value = part.partition("=")
            if not sep or not name.strip():
                raise CalibrationError(
                    f"--start `{part}`: expected cost=value, e.g. rx_packet_ns=2000"
                )
            try:
                out[name.strip()] = int(value)
            except ValueError:
                raise CalibrationError(
                    f"--start {name.strip()}: `{value}` is not an integer"
                ) from None
    return out
