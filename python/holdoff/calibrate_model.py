"""The calibration model: each row's scenario run at candidate costs, cached, in worker processes.

:func:`observe` reads from one run what a row can measure (interrupt rate,
CPU, received frame rate, each application's goodput and latency);
:class:`Model` runs every row at a set of integer costs (as
``profile_overrides`` of the calibrated host) and keeps the results by those
costs. Simplifies: the model is deterministic given the row's seed, so one
run per row and cost point. Units: as :data:`holdoff.calibrate_rows.MEASURED`.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import tomli_w

from holdoff import _core
from holdoff.api import run_text
from holdoff.calibrate_rows import CalibrationError, Row
from holdoff.sweep_exec import terminate_workers, worker_signals

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
            # is plain writes); Ctrl-C or SIGTERM stops the parent, which ends them.
            self.pool = ProcessPoolExecutor(
                max_workers=self.jobs, initializer=worker_signals, initargs=(os.getpid(),)
            )
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if self.pool is not None:
            if kind is not None:
                # Interrupted or failed: end the running rows now, not after them.
                terminate_workers(self.pool)
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
