"""Reproduction cases: published measurements re-run by mechanism.

A case is a folder under ``cases/`` holding scenario files and a
``case.toml`` that lists the runs and the published numbers to compare
(each with its source and tolerance). Nothing in a case tunes the model: the
scenarios use the shared host and chip presets.

``run_case`` runs every scenario of a case and evaluates its checks;
``to_json`` gives the machine-readable form printed by
``holdoff reproduce --json``.
"""

from __future__ import annotations

import statistics
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from holdoff.api import run
from holdoff.result import RunResult

_CASES_DIRS = [
    Path(__file__).resolve().parent / "cases",
    Path(__file__).resolve().parent.parent.parent / "cases",
]


class CaseError(ValueError):
    """A case file is missing or malformed."""


@dataclass(frozen=True)
class Check:
    """One published number to compare with the simulation."""

    name: str
    run: str
    metric: str
    unit: str
    published: float
    tolerance_rel: float
    source: str
    bytes: int | None = None
    port: str | None = None
    app: str | None = None
    generator: str | None = None
    host: str | None = None
    # The value is metric(run) / metric(divide_by_run) when set.
    divide_by_run: str | None = None
    # "approx" (|sim - published| <= tolerance), "lt" (sim < published), "gt".
    op: str = "approx"
    note: str | None = None


@dataclass(frozen=True)
class CaseRun:
    id: str
    scenario: Path
    label: str


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    source: str
    folder: Path
    runs: list[CaseRun]
    checks: list[Check]


@dataclass
class CheckResult:
    name: str
    unit: str
    published: float
    simulated: float | None
    tolerance_rel: float
    ok: bool
    source: str
    run: str
    note: str | None = None
    op: str = "approx"

    @property
    def deviation_rel(self) -> float | None:
        if self.simulated is None or self.published == 0:
            return None
        return (self.simulated - self.published) / self.published


@dataclass
class CaseResult:
    case: Case
    checks: list[CheckResult]
    results: dict[str, RunResult] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def cases_dir() -> Path:
    """The folder holding the bundled cases."""
    for d in _CASES_DIRS:
        if d.is_dir():
            return d
    raise CaseError("no cases folder found next to the package or in the repository")


def list_cases() -> list[str]:
    """Ids of every bundled case, sorted."""
    return sorted(p.parent.name for p in cases_dir().glob("*/case.toml"))


def load_case(case_id: str) -> Case:
    """Read and check ``cases/<case_id>/case.toml``."""
    folder = cases_dir() / case_id
    path = folder / "case.toml"
    if not path.is_file():
        raise CaseError(f"unknown case {case_id!r}; available: {', '.join(list_cases())}")
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    try:
        runs = [
            CaseRun(id=r["id"], scenario=folder / r["scenario"], label=r.get("label", r["id"]))
            for r in data["runs"]
        ]
        checks = [Check(**c) for c in data["checks"]]
        case = Case(
            id=data["id"],
            title=data["title"],
            source=data["source"],
            folder=folder,
            runs=runs,
            checks=checks,
        )
    except (KeyError, TypeError) as e:
        raise CaseError(f"{path}: malformed case file: {e}") from e
    run_ids = {r.id for r in runs}
    for c in checks:
        for rid in (c.run, c.divide_by_run):
            if rid is not None and rid not in run_ids:
                raise CaseError(f"{path}: check {c.name!r} names unknown run {rid!r}")
        if c.op not in ("approx", "lt", "gt"):
            raise CaseError(f"{path}: check {c.name!r}: op must be approx, lt or gt")
    return case


def metric(report: dict[str, Any], check: Check) -> float | None:
    """The simulated value a check compares, from a run's report."""
    summary = report["summary"]
    kind, _, what = check.metric.partition(".")
    if kind == "netpipe":
        for app in summary["apps"]:
            for row in app.get("netpipe") or []:
                if row["bytes"] == check.bytes:
                    return float(row[what])
        return None
    if kind == "port":
        for port in summary["ports"]:
            if port["port"] == check.port:
                vals = [v[what] for v in port["vectors"] if v.get(what) is not None]
                return float(vals[0]) if vals else None
        return None
    if kind == "host":
        for h in summary["hosts"]:
            if h["host"] == check.host:
                value: Any = h
                for part in what.split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                return None if value is None else float(value)
        return None
    if kind == "generator":
        secs = float(summary["sim_time_ns"]) / 1e9
        for g in summary["generators"]:
            if g["generator"] == check.generator:
                if what == "rx_pps":
                    return float(g["rx_packets"]) / secs
                return float(g[what])
        return None
    if kind == "app":
        for app in summary["apps"]:
            if app["app"] == check.app:
                value = app
                for part in what.split("."):
                    value = value.get(part) if isinstance(value, dict) else None
                return None if value is None else float(value)
        return None
    if kind == "moderation":
        stat, _, value = what.partition(".")
        for port in summary["ports"]:
            if port["port"] != check.port:
                continue
            # Decisions taken while traffic flowed (goc > 0 for the e1000 DITR).
            vals = [
                float(t["values"][value])
                for t in port["moderation_trace"]
                if t["values"].get("goc", 1) > 0 and value in t["values"]
            ]
            if not vals:
                return None
            if stat == "median":
                return float(statistics.median(vals))
            raise CaseError(f"unknown statistic {stat!r} in metric {check.metric!r}")
        return None
    raise CaseError(f"unknown metric {check.metric!r}")


def run_case(case: Case, *, progress: Callable[[str], None] | None = None) -> CaseResult:
    """Run every scenario of ``case`` and evaluate its checks."""
    results: dict[str, RunResult] = {}
    for r in case.runs:
        if progress:
            progress(f"{case.id}: running {r.id} ({r.label})")
        results[r.id] = run(r.scenario)
    checks = []
    for c in case.checks:
        sim = metric(results[c.run].report, c)
        if c.divide_by_run is not None and sim is not None:
            base = metric(results[c.divide_by_run].report, c)
            sim = None if not base else sim / base
        if sim is None:
            ok = False
        elif c.op == "lt":
            ok = sim < c.published
        elif c.op == "gt":
            ok = sim > c.published
        else:
            ok = abs(sim - c.published) <= c.tolerance_rel * abs(c.published)
        checks.append(
            CheckResult(
                name=c.name,
                unit=c.unit,
                published=c.published,
                simulated=sim,
                tolerance_rel=c.tolerance_rel,
                ok=ok,
                source=c.source,
                run=c.run,
                note=c.note,
                op=c.op,
            )
        )
    return CaseResult(case=case, checks=checks, results=results)


def to_json(results: list[CaseResult]) -> dict[str, Any]:
    """``{"cases": [{"case": ID, "checks": [...]}]}`` as printed by ``--json``."""
    return {
        "cases": [
            {
                "case": r.case.id,
                "title": r.case.title,
                "source": r.case.source,
                "ok": r.ok,
                "checks": [asdict(c) for c in r.checks],
            }
            for r in results
        ]
    }


def netpipe_curves(result: CaseResult) -> dict[str, list[tuple[int, float]]]:
    """Per run label: (message bytes, NetPIPE Mbps) of its NetPIPE points."""
    curves: dict[str, list[tuple[int, float]]] = {}
    for r in result.case.runs:
        rows: list[tuple[int, float]] = []
        for app in result.results[r.id].report["summary"]["apps"]:
            rows.extend((row["bytes"], row["np_mbps"]) for row in app.get("netpipe") or [])
        if rows:
            curves[r.label] = rows
    return curves


def plot_netpipe(result: CaseResult, path: Path) -> Path | None:
    """Save the NetPIPE throughput-vs-size curves of a case as a PNG."""
    curves = netpipe_curves(result)
    if not curves:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    for label, rows in curves.items():
        xs, ys = zip(*rows, strict=True)
        ax.plot(xs, ys, marker=".", label=label)
    published = [
        (c.bytes, c.published, c.run)
        for c in result.case.checks
        if c.metric == "netpipe.np_mbps" and c.bytes is not None
    ]
    labels = {r.id: r.label for r in result.case.runs}
    for b, v, run_id in published:
        ax.plot([b], [v], marker="x", markersize=9, color="black", linestyle="none")
        ax.annotate(
            f"published ({labels[run_id]})",
            (b, v),
            textcoords="offset points",
            xytext=(-6, 8),
            ha="right",
            fontsize=7,
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size [bytes]")
    ax.set_ylabel("throughput [NetPIPE Mbps = 2^20 bit/s]")
    ax.set_title(f"{result.case.id}: NetPIPE (simulated)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
