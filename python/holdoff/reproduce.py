"""Reproduction cases: published measurements re-run by mechanism.

A case is a folder under ``cases/`` holding scenario files and a
``case.toml`` that lists the runs and the published numbers to compare
(each with its source and tolerance). Nothing in a case tunes the model: the
scenarios use the shared host and chip presets.

``run_case`` runs every scenario of a case and evaluates its checks;
``to_json`` gives the machine-readable form printed by
``holdoff reproduce --json``. ``display`` and ``expected_text`` put a value in
the unit a person reads (kpps, Mb/s, us, interrupts/s, % of a core) and show a
one-sided check as a bound (``< 800 kpps``); ``score_line`` and
``to_markdown`` give the score and the README's reproduction tables.

A check with ``plumbing = "<why>"`` in its case file is one that cannot fail
or cannot tell a match from no match (its published number is an input of
the model, or the mechanism cannot produce anything else). It is still run
and printed, so a broken wiring shows, but it is not evidence and is left
out of the score; ``why`` says what makes it so.

A check with ``evidence = "<key>"`` names a paragraph of the case's
``[evidence]`` table: why a published number is one the modelled hardware
cannot produce (a register the chip does not have, say). Such a check stays
scored, as the miss it is; the evidence is printed beside it (CLI notes,
``--json``, the HTML report) so that a reader sees why.

With several seeds, :func:`score_range` gives the score the intervals allow:
the checks that pass for every value in their 95 % interval and those that
pass for some value in it.

``python -m holdoff.reproduce --markdown`` prints those tables;
``--update-readme README.md`` rewrites them between the README's
``<!-- reproduce:begin -->`` and ``<!-- reproduce:end -->`` markers.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from holdoff import stats
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
    # The value is divided by this metric of the same run and port (e.g.
    # ``port.tx_packets``: interrupts per transmitted frame).
    per: str | None = None
    # "approx" (|sim - published| <= tolerance), "lt" (sim < published), "gt".
    op: str = "approx"
    note: str | None = None
    # Why this check cannot fail or cannot tell a match from no match; such a
    # check is printed but not scored.
    plumbing: str | None = None
    # Why the modelled hardware cannot produce the published number (the
    # text of the case's ``[evidence]`` entry the check names); still scored.
    evidence: str | None = None


@dataclass(frozen=True)
class CaseRun:
    id: str
    scenario: Path
    label: str


@dataclass(frozen=True)
class CurveSeries:
    label: str
    scenario: Path


@dataclass(frozen=True)
class Curve:
    """Delivered rate against offered load: each series' scenario re-run with
    the offered generator's ``load`` (fraction of line rate) set to each value."""

    name: str
    offered: str
    delivered: str
    loads: list[float]
    series: list[CurveSeries]


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    source: str
    folder: Path
    runs: list[CaseRun]
    checks: list[Check]
    curves: list[Curve] = field(default_factory=list)


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
    plumbing: str | None = None
    #: Why the modelled hardware cannot produce the published number.
    evidence: str | None = None
    #: With several seeds: ``simulated`` is their mean, this its 95 % interval.
    simulated_ci95: list[float] | None = None
    seeds: int = 1

    @property
    def scored(self) -> bool:
        """Whether the check counts in the score (plumbing checks do not)."""
        return self.plumbing is None

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
    # Per curve name, per series label: (offered, delivered) [packets/s].
    curves: dict[str, dict[str, list[tuple[float, float]]]] = field(default_factory=dict)
    #: The seeds each run was run with (run id -> seeds); results hold the first's.
    seeds: dict[str, list[int]] = field(default_factory=dict)

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
        evidence = data.get("evidence", {})
        if not isinstance(evidence, dict) or not all(
            isinstance(v, str) and v.strip() for v in evidence.values()
        ):
            raise CaseError(f"{path}: [evidence] must map names to non-empty texts")
        checks = [_with_evidence(Check(**c), evidence, path) for c in data["checks"]]
        curves = [
            Curve(
                name=c["name"],
                offered=c["offered"],
                delivered=c["delivered"],
                loads=[float(x) for x in c["loads"]],
                series=[
                    CurveSeries(label=s["label"], scenario=folder / s["scenario"])
                    for s in c["series"]
                ],
            )
            for c in data.get("curves", [])
        ]
        case = Case(
            id=data["id"],
            title=data["title"],
            source=data["source"],
            folder=folder,
            runs=runs,
            checks=checks,
            curves=curves,
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
        if c.plumbing is not None and not c.plumbing.strip():
            raise CaseError(
                f"{path}: check {c.name!r}: plumbing must say why the check cannot fail"
            )
    return case


def _with_evidence(check: Check, evidence: dict[str, str], path: Path) -> Check:
    """``check`` with its ``evidence`` key replaced by the text it names."""
    if check.evidence is None:
        return check
    text = evidence.get(check.evidence)
    if text is None:
        known = ", ".join(sorted(evidence)) or "none"
        raise CaseError(
            f"{path}: check {check.name!r}: evidence {check.evidence!r} is not in the "
            f"case's [evidence] table (entries: {known})"
        )
    return replace(check, evidence=" ".join(text.split()))


#: The e1000 5.x watchdog's goc (10 kB units per 2 s) from which a decision
#: counts as "under load": 50 MB in 2 s (200 Mb/s), half the goc of about
#: 10000 that every loaded line of the 2004 post's DITR trace shows.
LOADED_GOC = 5000


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
        # A port field (``rx_missed``), else its first vector's (``interrupts_per_s``).
        for port in summary["ports"]:
            if port["port"] == check.port:
                if isinstance(port.get(what), int | float):
                    return float(port[what])
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
        # moderation.<stat>.<value>: a statistic of one traced value over the
        # port's moderation decisions (``port = "*"``: every port's, pooled).
        # ``median``: decisions taken while traffic flowed (goc > 0 for the
        # e1000 DITR); ``mean_loaded``: decisions with goc >= LOADED_GOC.
        stat, _, value = what.partition(".")
        if stat not in ("median", "mean_loaded"):
            raise CaseError(f"unknown statistic {stat!r} in metric {check.metric!r}")
        floor = LOADED_GOC if stat == "mean_loaded" else 1
        vals = [
            float(t["values"][value])
            for port in summary["ports"]
            if check.port in ("*", port["port"])
            for t in port["moderation_trace"]
            if t["values"].get("goc", floor) >= floor and value in t["values"]
        ]
        if not vals:
            return None
        if stat == "median":
            return float(statistics.median(vals))
        return float(statistics.fmean(vals))
    raise CaseError(f"unknown metric {check.metric!r}")


def run_case(
    case: Case,
    *,
    progress: Callable[[str], None] | None = None,
    seed: int | None = None,
    seeds: int = 1,
) -> CaseResult:
    """Run every scenario of ``case`` and evaluate its checks.

    ``seed`` runs every scenario with that seed instead of its own;
    ``seeds`` > 1 runs each scenario with its seed (or ``seed``) and the
    next ``seeds - 1``, and judges each check on the mean over them, with
    its 95 % interval (:func:`holdoff.stats.ci95`) beside it. Curves run
    with the first seed."""
    all_runs: dict[str, list[RunResult]] = {}
    seed_lists: dict[str, list[int]] = {}
    for r in case.runs:
        runs: list[RunResult] = []
        base = seed
        for k in range(seeds):
            if progress:
                at = "" if seeds == 1 else f", seed {k + 1} of {seeds}"
                progress(f"{case.id}: running {r.id} ({r.label}{at})")
            # The first run takes the scenario's own seed unless one is given.
            runs.append(run(r.scenario, seed=None if base is None else base + k))
            if base is None:
                base = int(runs[0].report.get("seed", 0))
        all_runs[r.id] = runs
        seed_lists[r.id] = [int(base or 0) + k for k in range(seeds)]
    results = {rid: runs[0] for rid, runs in all_runs.items()}
    checks = []
    for c in case.checks:
        values = [
            _check_value(c, {rid: rs[k] for rid, rs in all_runs.items()}) for k in range(seeds)
        ]
        sim: float | None = None
        ci: list[float] | None = None
        if all(v is not None and math.isfinite(v) for v in values):
            iv = stats.ci95(
                [float(v) for v in values if v is not None],
                percentile=stats.is_percentile(c.metric.replace(".", "_")),
            )
            sim, ci = iv.mean, iv.as_list()
        elif seeds == 1:
            sim = values[0]
        ok = judge(c.op, c.published, sim, c.tolerance_rel)
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
                plumbing=c.plumbing,
                evidence=c.evidence,
                simulated_ci95=ci if seeds > 1 else None,
                seeds=seeds,
            )
        )
    curves = {c.name: run_curve(c, progress=progress, seed=seed) for c in case.curves}
    return CaseResult(case=case, checks=checks, results=results, curves=curves, seeds=seed_lists)


def _check_value(c: Check, results: dict[str, RunResult]) -> float | None:
    """A check's simulated value from one seed's runs."""
    sim = metric(results[c.run].report, c)
    if c.per is not None and sim is not None:
        base = metric(results[c.run].report, replace(c, metric=c.per))
        sim = None if not base else sim / base
    if c.divide_by_run is not None and sim is not None:
        base = metric(results[c.divide_by_run].report, c)
        sim = None if not base else sim / base
    return sim


def judge(op: str, published: float, simulated: float | None, tolerance_rel: float) -> bool:
    """Whether a simulated value meets its published one: ``lt``/``gt`` a strict
    bound, ``approx`` within ``tolerance_rel`` of it; no value (or NaN) never does."""
    if simulated is None or math.isnan(simulated):
        return False
    if op == "lt":
        return simulated < published
    if op == "gt":
        return simulated > published
    return abs(simulated - published) <= tolerance_rel * abs(published)


def run_curve(
    curve: Curve, *, progress: Callable[[str], None] | None = None, seed: int | None = None
) -> dict[str, list[tuple[float, float]]]:
    """Per series label: (offered, delivered) rates [packets/s], one point per load."""
    out: dict[str, list[tuple[float, float]]] = {}
    for s in curve.series:
        if progress:
            progress(f"curve {curve.name!r}: {s.label}")
        base = tomllib.loads(s.scenario.read_text(encoding="utf-8"))
        rows = []
        for load in curve.loads:
            scenario = dict(base)
            scenario["generators"] = [
                {**g, "load": load} if g["name"] == curve.offered else g for g in base["generators"]
            ]
            summary = run(scenario, seed=seed).summary
            secs = float(summary["sim_time_ns"]) / 1e9
            gens = {g["generator"]: g for g in summary["generators"]}
            rows.append(
                (
                    float(gens[curve.offered]["sent_packets"]) / secs,
                    float(gens[curve.delivered]["rx_packets"]) / secs,
                )
            )
        out[s.label] = rows
    return out


def to_json(results: list[CaseResult]) -> dict[str, Any]:
    """``{"cases": [{"case": ID, "score": {...}, "checks": [...]}]}`` as printed
    by ``--json``; ``score`` counts the scored checks, their passes (and, with
    several seeds, the range the intervals allow) and the plumbing checks."""
    return {
        "cases": [
            {
                "case": r.case.id,
                "title": r.case.title,
                "source": r.case.source,
                "ok": r.ok,
                "score": score_counts(r),
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
    """Save the NetPIPE throughput-vs-size curves of a case, with its published
    points, as a PNG (:func:`holdoff.plots.netpipe_png`)."""
    from holdoff import plots

    curves = netpipe_curves(result)
    if not curves:
        return None
    labels = {r.id: r.label for r in result.case.runs}
    published: dict[str, list[tuple[int, float]]] = {}
    for c in result.case.checks:
        if c.metric == "netpipe.np_mbps" and c.bytes is not None:
            published.setdefault(labels[c.run], []).append((c.bytes, c.published))
    title = f"{result.case.id}: NetPIPE, simulated curves and published points"
    return plots.netpipe_png(path, title=title, curves=curves, published=published)


# -- presentation: units a person reads, bounds, scores, Markdown ----------------------

# Case-file unit -> (scale divisor, format, display unit).
_DISPLAY: dict[str, tuple[float, str, str]] = {
    "packets/s": (1e3, "{:,.0f}", "kpps"),
    "bit/s": (1e6, "{:,.0f}", "Mb/s"),
    "int/s": (1.0, "{:,.0f}", "interrupts/s"),
    "interrupts/s": (1.0, "{:,.0f}", "interrupts/s"),
    "usec": (1.0, "{:,.2f}", "us"),
    "NP-Mbps (2^20 bit/s)": (1.0, "{:,.2f}", "NP-Mbps"),
    "fraction of 1 core": (0.01, "{:,.0f}", "% of a core"),
    "ratio": (1.0, "{:.3f}", ""),
}

_OPS = {"lt": "<", "gt": ">"}


def display_number(value: float | None, unit: str) -> str:
    """``value`` (in the case file's ``unit``) scaled to :func:`display_unit`."""
    if value is None:
        return "n/a"
    scale, fmt, _ = _DISPLAY.get(unit, (1.0, "{:,.4g}", unit))
    return fmt.format(value / scale)


def simulated_text(check: CheckResult) -> str:
    """The simulated number; over several seeds ``mean ± half its 95 % interval``."""
    text = display_number(check.simulated, check.unit)
    ci = check.simulated_ci95
    if ci is not None and check.simulated is not None:
        half = (ci[1] - ci[0]) / 2
        text += " ± " + display_number(half, check.unit).strip()
    return text


def seeds_text(seed: int | None, seeds: int) -> str:
    """Which seeds ran, in words."""
    first = "each scenario's own seed" if seed is None else f"seed {seed}"
    if seeds == 1:
        return f"every scenario run with {first}"
    return (
        f"every scenario run {seeds} times: {first} and the next {seeds - 1}; each check is "
        "judged on the mean, shown ± half its 95 % interval"
    )


def display_unit(unit: str) -> str:
    """The unit a person reads for a case-file unit: ``bit/s`` -> ``Mb/s``."""
    return _DISPLAY.get(unit, (1.0, "", unit))[2]


def display(value: float | None, unit: str) -> str:
    """``value`` as a person reads it, with its unit: ``748 kpps``, ``95 % of a core``."""
    number = display_number(value, unit)
    shown = display_unit(unit)
    return f"{number} {shown}" if shown and value is not None else number


def _bound(check: CheckResult) -> str:
    return f"{_OPS[check.op]} " if check.op in _OPS else ""


def expected_number(check: CheckResult) -> str:
    """The published number without its unit, a bound as ``< 800``."""
    return _bound(check) + display_number(check.published, check.unit)


def expected_text(check: CheckResult) -> str:
    """The published side of a check: ``750 kpps``, or a bound ``< 800 kpps``."""
    return _bound(check) + display(check.published, check.unit)


def verdict_text(check: CheckResult) -> str:
    """``pass (-0.2 %)`` / ``MISS (+19.8 %)``; bounds say only pass or MISS;
    a plumbing check says so: ``plumbing ok`` / ``plumbing BROKEN``."""
    if not check.scored:
        return "plumbing ok" if check.ok else "plumbing BROKEN"
    word = "pass" if check.ok else "MISS"
    dev = check.deviation_rel
    if check.op in _OPS or dev is None:
        return word
    return f"{word} ({dev:+.1%})"


def tolerance_text(check: CheckResult) -> str:
    """``±15 %`` for a comparison, ``bound`` for a one-sided check."""
    return "bound" if check.op in _OPS else f"±{check.tolerance_rel:.0%}"


def scored(result: CaseResult) -> list[CheckResult]:
    """The checks of ``result`` that count in the score (not plumbing)."""
    return [c for c in result.checks if c.scored]


def passed(result: CaseResult) -> int:
    """Number of scored checks of ``result`` that pass."""
    return sum(1 for c in scored(result) if c.ok)


def misses(result: CaseResult) -> int:
    """Number of checks of ``result`` that fail, plumbing included."""
    return sum(1 for c in result.checks if not c.ok)


def passes_somewhere(check: CheckResult) -> tuple[bool, bool]:
    """Whether ``check`` passes for every value of its 95 % interval, and for
    some value of it; without an interval, both are its verdict."""
    ci = check.simulated_ci95
    if ci is None or check.simulated is None:
        return check.ok, check.ok
    lo, hi = ci
    p, band = check.published, check.tolerance_rel * abs(check.published)
    if check.op == "lt":
        return hi < p, lo < p
    if check.op == "gt":
        return lo > p, hi > p
    return (p - band <= lo and hi <= p + band), (lo <= p + band and hi >= p - band)


def score_range(result: CaseResult) -> tuple[int, int]:
    """Scored checks of ``result`` that pass across their whole 95 % interval,
    and those that pass somewhere in it (both :func:`passed` with one seed)."""
    pairs = [passes_somewhere(c) for c in scored(result)]
    return sum(1 for every, _ in pairs if every), sum(1 for _, some in pairs if some)


def score_counts(result: CaseResult) -> dict[str, int]:
    """A case's counts: scored checks, passes, the range its intervals allow,
    plumbing checks (and how many of them are broken)."""
    low, high = score_range(result)
    plumbing = [c for c in result.checks if not c.scored]
    return {
        "scored": len(scored(result)),
        "passed": passed(result),
        "passed_whole_interval": low,
        "passed_within_interval": high,
        "plumbing": len(plumbing),
        "plumbing_broken": sum(1 for c in plumbing if not c.ok),
    }


def _plumbing_suffix(result: CaseResult) -> str:
    n = len(result.checks) - len(scored(result))
    return f" (+{n} plumbing, not scored)" if n else ""


def case_score(result: CaseResult) -> str:
    """``4 of 5 checks pass`` (``(+1 plumbing, not scored)`` when there is some)."""
    if not scored(result):
        return "no scored checks" + _plumbing_suffix(result)
    return f"{passed(result)} of {len(scored(result))} checks pass" + _plumbing_suffix(result)


def score_line(results: list[CaseResult]) -> str:
    """``16 of 25 checks pass (linux-2004-ditr 4/5, ...)``: scored checks only."""
    total = sum(len(scored(r)) for r in results)
    ok = sum(passed(r) for r in results)
    per_case = ", ".join(f"{r.case.id} {passed(r)}/{len(scored(r))}" for r in results)
    plumbing = sum(len(r.checks) - len(scored(r)) for r in results)
    noun = "check" if plumbing == 1 else "checks"
    extra = f"; {plumbing} plumbing {noun} printed, not scored" if plumbing else ""
    return f"{ok} of {total} checks pass ({per_case}{extra})"


def note_text(check: CheckResult) -> str | None:
    """A check's note, led by why it is plumbing when it is and by the
    evidence that the hardware cannot produce its number when there is some."""
    parts = []
    if check.plumbing:
        parts.append(f"Plumbing, not scored: {check.plumbing}")
    if check.evidence:
        parts.append(f"Why the model cannot match it (scored all the same): {check.evidence}")
    if check.note:
        parts.append(check.note)
    return " ".join(parts) or None


def numbered_notes(result: CaseResult) -> tuple[list[str], list[int | None]]:
    """Distinct notes of a case in order of first use, and each check's note number."""
    notes: list[str] = []
    refs: list[int | None] = []
    for c in result.checks:
        full = note_text(c)
        if not full:
            refs.append(None)
            continue
        text = " ".join(full.split())
        if text not in notes:
            notes.append(text)
        refs.append(notes.index(text) + 1)
    return notes, refs


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(results: list[CaseResult]) -> str:
    """The README's reproduction tables: one per case, then the score line."""
    parts: list[str] = []
    for r in results:
        parts.append(f"**{r.case.id}** — {r.case.title}: {case_score(r)}.")
        parts.append("")
        parts.append(f"Source: {r.case.source}.")
        parts.append("")
        parts.append("| check | published | simulated | result |")
        parts.append("| --- | ---: | ---: | --- |")
        for c in r.checks:
            verdict = verdict_text(c)
            if not c.ok:
                verdict = "**" + verdict.replace(" (", "** (", 1)
                if not verdict.endswith(")"):
                    verdict += "**"
            parts.append(
                f"| {_md_cell(c.name)} | {_md_cell(expected_text(c))} | "
                f"{_md_cell(display(c.simulated, c.unit))} | {verdict} |"
            )
        parts.append("")
        for c in r.checks:
            if not c.scored:
                parts.append(
                    f"Plumbing, not scored: *{c.name}*: {' '.join(str(c.plumbing).split())}"
                )
                parts.append("")
        for text in dict.fromkeys(c.evidence for c in r.checks if c.evidence):
            names = ", ".join(f"*{c.name}*" for c in r.checks if c.evidence == text)
            parts.append(f"Scored misses the hardware explains ({names}): {text}")
            parts.append("")
    parts.append(f"In all: {score_line(results)}.")
    return "\n".join(parts) + "\n"


README_BEGIN = (
    "<!-- reproduce:begin (generated by python -m holdoff.reproduce --update-readme README.md) -->"
)
README_END = "<!-- reproduce:end -->"


def replace_between_markers(text: str, generated: str) -> str:
    """``text`` with everything between the README markers replaced by ``generated``."""
    begin = text.find(README_BEGIN)
    end = text.find(README_END)
    if begin < 0 or end < begin:
        raise CaseError(f"the README has no {README_BEGIN!r} ... {README_END!r} markers")
    head = text[: begin + len(README_BEGIN)]
    return head + "\n\n" + generated + "\n" + text[end:]


def run_all(
    ids: list[str] | None = None, *, seed: int | None = None, seeds: int = 1
) -> list[CaseResult]:
    """Run the cases ``ids`` (default: every bundled case); see :func:`run_case`."""
    return [run_case(load_case(cid), seed=seed, seeds=seeds) for cid in (ids or list_cases())]


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m holdoff.reproduce",
        description="Run every bundled case and print the README's reproduction tables.",
    )
    parser.add_argument("--markdown", action="store_true", help="print the Markdown tables")
    parser.add_argument(
        "--update-readme",
        metavar="README",
        type=Path,
        help="rewrite the tables between the markers of this file",
    )
    args = parser.parse_args(argv)
    if not args.markdown and args.update_readme is None:
        parser.error("give --markdown or --update-readme README")
    generated = to_markdown(run_all())
    if args.markdown:
        sys.stdout.write(generated)
    if args.update_readme is not None:
        path: Path = args.update_readme
        path.write_text(
            replace_between_markers(path.read_text(encoding="utf-8"), generated),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(_main())
