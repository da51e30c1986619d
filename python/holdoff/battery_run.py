"""Running a battery: moderators x chips x workloads x seeds, through the
sweep executors and the result store.

Models nothing itself: it plans the points (:func:`plan`), runs the ones
the store does not hold on the sweep executors (serial, local processes,
Ray) with :func:`holdoff.battery.battery_point`, stores each finished
point, and collects the records per (moderator, chip, workload). A stopped
battery resumes: the same command finds the finished points in the store.

Store keys are the sweep's (the validated scenario with its seed) plus the
content digest of a moderator's source file (Python or C), so an edited
moderator is run again rather than read back.

Simplifies: a failed run (the moderator raised, crashed or looped) is kept
in memory as an error, never stored, so a rerun tries it again. The first
seed of every cell can be run a second time with its moderation samples and
decisions (:func:`detail_runs`) for the HTML timelines and ``--trace``.

Units: seeds are the scenario ``seed`` values ``1 .. N`` (seed 1 is the
FreeBSD AIM case's).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holdoff import _core
from holdoff.battery import CHIPS, Workload, battery_point
from holdoff.store import ResultStore, Scalar, normalize, normalized_hash
from holdoff.sweep_exec import execute
from holdoff.sweep_paths import SweepPoint


@dataclass(frozen=True)
class Candidate:
    """A moderator under test: its spec as typed, its label and table."""

    spec: str
    label: str
    table: dict[str, Any]
    #: SHA-256 of its source file (Python or C), for the store key.
    digest: str | None = None


def resolve(spec: str, base: Path) -> Candidate:
    """The moderator a command-line spec names (``KIND[:k=v,...]``,
    ``file.py:Class``, ``file.c:entry``), through :mod:`holdoff.modspec`.
    A Python file's folder goes on ``sys.path`` so that its class is imported
    without ``PYTHONPATH`` (the workers inherit it)."""
    from holdoff.modspec import parse_moderator

    mod = parse_moderator(spec, base)
    table = mod.moderation_table()
    digest = None
    source: Path | None = None
    if mod.kind == "c":
        source = Path(str(mod.fields["source"]))
    elif mod.kind == "python":
        source = Path(inspect.getfile(next(iter(mod.classes.values()))))
        # The scenario names the class as "stem:Class": imported from the
        # file's folder, which the worker processes inherit on sys.path.
        if str(source.parent) not in sys.path:
            sys.path.append(str(source.parent))
    if source is not None:
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
    return Candidate(spec, str(mod.label), table, digest)


@dataclass(frozen=True)
class CellKey:
    moderator: str
    chip: str
    workload: str


@dataclass
class Cell:
    """One (moderator, chip, workload): its per-seed records, errors, or why it was skipped."""

    key: CellKey
    scenario: dict[str, Any] | None = None
    skipped: str | None = None
    records: dict[int, dict[str, Scalar]] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)


@dataclass
class Plan:
    candidates: list[Candidate]
    chips: list[str]
    workloads: list[Workload]
    seeds: list[int]
    cells: dict[CellKey, Cell]
    points: list[SweepPoint]
    #: The cell of each point, by point index.
    point_cell: dict[int, CellKey]


def plan(
    candidates: Sequence[Candidate],
    chips: Sequence[str],
    workloads: Sequence[Workload],
    seeds: int,
) -> Plan:
    """Every point of the battery. A moderator a workload refuses, or whose
    scenario does not validate on a chip (its setting does not fit that
    chip's throttle register), is a skipped cell with the reason."""
    version = _core.version()
    seed_values = list(range(1, seeds + 1))
    cells: dict[CellKey, Cell] = {}
    points: list[SweepPoint] = []
    point_cell: dict[int, CellKey] = {}
    for cand in candidates:
        for chip in chips:
            for wl in workloads:
                key = CellKey(cand.label, chip, wl.name)
                cell = cells[key] = Cell(key)
                why = wl.refuse(cand.table)
                if why:
                    cell.skipped = why
                    continue
                scenario = wl.build(CHIPS[chip], cand.table)
                try:
                    normalized = normalize(scenario)
                except _core.ScenarioError as err:
                    cell.skipped = f"not valid on the {chip}: {err}"
                    continue
                cell.scenario = scenario
                if cand.digest:
                    normalized = {**normalized, "moderator_source": cand.digest}
                for replicate, seed in enumerate(seed_values):
                    point = SweepPoint(
                        index=len(points),
                        replicate=replicate,
                        params={"moderator": cand.label, "chip": chip, "workload": wl.name},
                        seed=seed,
                        scenario={**scenario, "seed": seed},
                        key=normalized_hash({**normalized, "seed": seed}, version),
                    )
                    point_cell[point.index] = key
                    points.append(point)
    return Plan(
        list(candidates), list(chips), list(workloads), seed_values, cells, points, point_cell
    )


def run_plan(
    p: Plan,
    store: ResultStore | None,
    *,
    executor: str = "process",
    workers: int | None = None,
    on_start: Callable[[int, int], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[int, int]:
    """Runs the points the store does not hold; fills each cell's records and
    errors. Returns (computed, from the store). Ctrl-C: the exception
    carries ``finished`` and ``remaining``; finished points are stored."""
    pending: list[SweepPoint] = []
    for point in p.points:
        stored = store.read(point.key) if store is not None else None
        if stored is not None:
            p.cells[p.point_cell[point.index]].records[point.seed] = stored
        else:
            pending.append(point)
    cached = len(p.points) - len(pending)
    if on_start is not None:
        on_start(len(pending), cached)
    if store is not None:
        store.cleanup()
    done = 0
    results = execute(pending, executor, workers, None, compute=battery_point)
    try:
        for point, record in results:
            cell = p.cells[p.point_cell[point.index]]
            if "error" in record:
                cell.errors[point.seed] = str(record["error"])
            else:
                full: dict[str, Scalar] = {"scenario_hash": point.key, **record}
                full["scenario_toml"] = point.text
                if store is not None:
                    store.put(point.key, full)
                cell.records[point.seed] = full
            done += 1
            if progress is not None:
                progress(done, len(pending))
    except KeyboardInterrupt as err:
        err.finished = done  # type: ignore[attr-defined]
        err.remaining = len(pending) - done  # type: ignore[attr-defined]
        raise
    finally:
        results.close()
    return len(pending), cached


# -- the first seed again, with its decisions and samples -------------------------------


def detail_point(text: str) -> dict[str, Scalar]:
    """One run with its moderation samples recorded: the report's time series
    and moderation traces and the samples, as one JSON string (not stored)."""
    from holdoff.moderator import import_classes

    try:
        classes = import_classes(text) or None
        report_json, _perf, aborted, samples = _core.run_toml_samples(text, None, classes)
    except _core.HoldoffError as err:
        return {"error": str(err)}
    report = json.loads(report_json)
    summary = report.get("summary", {})
    kept = {
        "timeseries": report.get("timeseries"),
        "ports": [
            {
                "port": port.get("port"),
                "chip": port.get("chip"),
                "vectors": len(port.get("vectors") or []),
                "moderation_trace": port.get("moderation_trace") or [],
            }
            for port in summary.get("ports", [])
        ],
        "changes": report.get("changes"),
        "aborted": aborted,
        "samples": samples,
    }
    return {"detail": json.dumps(kept)}


def detail_runs(
    p: Plan, *, executor: str = "process", workers: int | None = None
) -> tuple[dict[CellKey, dict[str, Any]], list[str]]:
    """The first seed of every cell that ran, again with its samples recorded
    (only runs that succeeded before, so a moderator that fails on that seed
    is not run again). Returns the details and notes: a worker lost on the
    way (a moderator's native code crashed it) ends the detail runs, and
    the timelines and traces then cover the cells done before."""
    from concurrent.futures.process import BrokenProcessPool

    pending = [
        pt
        for pt in p.points
        if pt.replicate == 0 and p.cells[p.point_cell[pt.index]].records.get(pt.seed) is not None
    ]
    out: dict[CellKey, dict[str, Any]] = {}
    notes: list[str] = []
    results = execute(pending, executor, workers, None, compute=detail_point)
    try:
        for point, record in results:
            if "detail" in record:
                out[p.point_cell[point.index]] = json.loads(str(record["detail"]))
            else:
                notes.append(f"no timeline for {point.label}: {record.get('error')}")
    except BrokenProcessPool as err:
        notes.append(f"timelines and traces incomplete: a worker process died ({err})")
    finally:
        results.close()
    return out, notes


def default_store() -> Path:
    return Path(os.environ.get("HOLDOFF_STORE", "runs/store"))


def seeds_of(cell: Cell) -> list[int]:
    return sorted(cell.records)


def values(cell: Cell, key: str) -> list[float]:
    """The finite per-seed values of one record column."""
    out = []
    for seed in seeds_of(cell):
        v = cell.records[seed].get(key)
        if isinstance(v, int | float) and not isinstance(v, bool):
            fv = float(v)
            if fv == fv and fv not in (float("inf"), float("-inf")):
                out.append(fv)
    return out


def by_label(candidates: Sequence[Candidate]) -> Mapping[str, Candidate]:
    return {c.label: c for c in candidates}
