"""The battery's scorecard: per workload, chip and metric, each moderator's
mean over seeds with its 95 % interval, and its difference to the baseline.

Statistics: a moderator's interval is :func:`holdoff.stats.ci95` (Student t
for means and rates; the seeded bootstrap for percentiles). The difference
to the baseline is the difference of the two means with a Welch interval
(unequal variances, Welch-Satterthwaite degrees of freedom), not paired by
seed: a seed fixes the arrivals, but two moderators move every event after
the first decision that differs, so runs with equal seeds are not matched
pairs. A difference is *marked* when its 95 % interval leaves out zero: the
difference is larger than the run-to-run spread. With one seed there is no
interval and nothing is marked.

Units: each metric's shown unit (:class:`holdoff.battery.Metric`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from holdoff.battery import Metric, Workload
from holdoff.battery_run import CellKey, Plan, values
from holdoff.stats import Interval, ci95, is_percentile


@dataclass(frozen=True)
class Diff:
    """Difference of means (moderator minus baseline) and its Welch 95 % interval."""

    diff: float
    lo: float | None
    hi: float | None

    @property
    def marked(self) -> bool:
        """The interval leaves out zero (larger than the spread)."""
        if self.lo is None or self.hi is None:
            return False
        return self.lo > 0 or self.hi < 0


def welch(a: Sequence[float], b: Sequence[float]) -> Diff:
    """mean(a) - mean(b) with the Welch 95 % interval."""
    na, nb = len(a), len(b)
    ma, mb = math.fsum(a) / na, math.fsum(b) / nb
    d = ma - mb
    if na < 2 or nb < 2:
        return Diff(d, None, None)
    va = math.fsum((x - ma) ** 2 for x in a) / (na - 1)
    vb = math.fsum((x - mb) ** 2 for x in b) / (nb - 1)
    se2 = va / na + vb / nb
    if se2 == 0:
        return Diff(d, d, d)
    df = se2**2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    from scipy import stats as sps

    half = float(sps.t.ppf(0.975, df)) * math.sqrt(se2)
    return Diff(d, d - half, d + half)


@dataclass
class Entry:
    """One moderator's result in one row: an interval, an error or a skip."""

    interval: Interval | None = None
    diff: Diff | None = None
    error: str | None = None
    skipped: str | None = None


@dataclass
class Row:
    workload: Workload
    chip: str
    metric: Metric
    entries: dict[str, Entry]


def rows(p: Plan, baseline: str) -> list[Row]:
    """The scorecard's rows, workload by workload, chip by chip."""
    out: list[Row] = []
    for wl in p.workloads:
        for chip in p.chips:
            for metric in wl.metrics:
                entries: dict[str, Entry] = {}
                base_vals = values(p.cells[CellKey(baseline, chip, wl.name)], metric.key)
                for cand in p.candidates:
                    cell = p.cells[CellKey(cand.label, chip, wl.name)]
                    entry = Entry()
                    if cell.skipped:
                        entry.skipped = cell.skipped
                    elif cell.errors:
                        seed, message = min(cell.errors.items())
                        entry.error = f"{cand.label} failed (seed {seed}): {message}"
                    vals = [v * metric.scale for v in values(cell, metric.key)]
                    if vals and not entry.skipped:
                        entry.interval = ci95(vals, percentile=is_percentile(metric.key))
                        if cand.label != baseline and base_vals:
                            entry.diff = welch(vals, [v * metric.scale for v in base_vals])
                    entries[cand.label] = entry
                out.append(Row(wl, chip, metric, entries))
    return out


def fmt(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def mean_text(iv: Interval) -> str:
    hw = iv.half_width
    return fmt(iv.mean) if hw is None else f"{fmt(iv.mean)} ± {fmt(hw)}"


def diff_text(d: Diff) -> str:
    hw = None if d.lo is None or d.hi is None else (d.hi - d.lo) / 2
    sign = "+" if d.diff > 0 else ""
    text = f"{sign}{fmt(d.diff)}" + ("" if hw is None else f" ± {fmt(hw)}")
    return text + (" *" if d.marked else "")


def entry_text(e: Entry, notes: list[str]) -> str:
    """The cell's text; a skip or an error becomes a numbered note under the
    table (reasons are long, and a number column is never narrowed)."""

    def note(text: str) -> str:
        if text not in notes:
            notes.append(text)
        return f"[{notes.index(text) + 1}]"

    if e.skipped:
        return f"skipped {note(e.skipped)}"
    if e.error and e.interval is None:
        return f"ERROR {note(e.error)}"
    text = mean_text(e.interval) if e.interval else "-"
    return text + (f" ERROR {note(e.error)}" if e.error else "")


def as_json(p: Plan, baseline: str, table: list[Row], extra: dict[str, Any]) -> dict[str, Any]:
    """The scorecard as JSON: identity, one object per row, errors and skips."""

    def entry(e: Entry) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if e.interval is not None:
            out.update(mean=e.interval.mean, ci95=e.interval.as_list(), seeds=e.interval.n)
        if e.diff is not None:
            lo_hi = None if e.diff.lo is None else [e.diff.lo, e.diff.hi]
            out["diff"] = {"value": e.diff.diff, "ci95": lo_hi, "marked": e.diff.marked}
        if e.error:
            out["error"] = e.error
        if e.skipped:
            out["skipped"] = e.skipped
        return out

    return {
        "moderators": [{"spec": c.spec, "label": c.label} for c in p.candidates],
        "baseline": baseline,
        "seeds": p.seeds,
        "chips": p.chips,
        "difference": "mean minus the baseline's mean, Welch 95 % interval (not paired by seed); "
        "marked when the interval leaves out zero",
        "workloads": [{"name": w.name, "title": w.title, "source": w.source} for w in p.workloads],
        "rows": [
            {
                "workload": r.workload.name,
                "chip": r.chip,
                "metric": r.metric.key,
                "label": r.metric.label,
                "unit": r.metric.unit,
                "better": r.metric.better or None,
                "results": {label: entry(e) for label, e in r.entries.items()},
            }
            for r in table
        ],
        **extra,
    }


def letters(p: Plan) -> dict[str, str]:
    """A short column name per moderator (A, B, ...), in command-line order."""
    return {
        c.label: chr(ord("A") + i) if i < 26 else f"M{i + 1}" for i, c in enumerate(p.candidates)
    }


def terminal_tables(p: Plan, baseline: str, table: list[Row]) -> list[Any]:
    """The legend, then one rich table per workload (chips x metrics down, a
    column per moderator: its mean ± half-interval and, on a second line,
    its difference to the baseline), fitted to the terminal: numbers are
    never cut; too narrow, the table stacks."""
    from rich.table import Table
    from rich.text import Text

    from holdoff.termtable import Fitted

    names = letters(p)
    out: list[Any] = [
        Text(f"  {names[c.label]} = {c.label}" + (" (baseline)" if c.label == baseline else ""))
        for c in p.candidates
    ]
    for wl in p.workloads:
        notes: list[str] = []
        t = Table(
            title=f"{wl.name}: {wl.title}",
            title_justify="left",
            caption=f"source: {wl.source}",
            caption_justify="left",
        )
        t.add_column("chip")
        t.add_column("metric")
        for c in p.candidates:
            t.add_column(
                names[c.label] + (" (base)" if c.label == baseline else ""), justify="right"
            )
        for r in (r for r in table if r.workload is wl):
            cells = [r.chip, f"{r.metric.label} [{r.metric.unit}]"]
            for c in p.candidates:
                e = r.entries[c.label]
                text = entry_text(e, notes)
                if e.diff is not None:
                    text += "\n" + diff_text(e.diff)
                cells.append(text)
            t.add_row(*cells)
        out.append(Fitted(t))
        out.extend(Text(f"  [{i}] {n}") for i, n in enumerate(notes, start=1))
    return out
