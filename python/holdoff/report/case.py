"""The reproduction-case section of the HTML report: every published number
against the simulated one (pass/MISS, plumbing apart), the NetPIPE curves and
load curves with the published points, and each run's timelines (folded).

Simplifies: a case read from ``reproduce --json`` has no runs, so only its
tables are shown. Units: each check's own (shown as :mod:`holdoff.reproduce`
displays them); NetPIPE throughput in NetPIPE Mbps (2^20 bit/s).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holdoff import tables
from holdoff.report.page import Doc, esc, fold, table_html, warnings_block
from holdoff.report.run import timeline

if TYPE_CHECKING:
    from holdoff.reproduce import CaseResult


# -- reproduction cases -------------------------------------------------------------


def as_case(case: Any) -> CaseResult:
    """A case result; a dict of ``reproduce --json`` becomes one without runs."""
    from holdoff import reproduce

    if not isinstance(case, Mapping):
        result: CaseResult = case
        return result
    known = {f.name for f in dataclasses.fields(reproduce.CheckResult)}
    checks = [
        reproduce.CheckResult(**{k: v for k, v in c.items() if k in known})
        for c in case.get("checks", [])
    ]
    meta = reproduce.Case(
        id=str(case.get("case", "")),
        title=str(case.get("title", "")),
        source=str(case.get("source", "")),
        folder=Path(),
        runs=[],
        checks=[],
    )
    return reproduce.CaseResult(meta, checks)


def _check_cell(c: Any) -> str:
    """The result cell of a check: pass, MISS, or plumbing (not scored)."""
    if not c.scored:
        word = "plumbing ok" if c.ok else "plumbing BROKEN"
        return f'<span class="plumbing{"" if c.ok else " miss"}">{word}</span>'
    return '<span class="pass">pass</span>' if c.ok else '<span class="miss">MISS</span>'


def case_section(doc: Doc, anchor: str, case: CaseResult) -> str:
    from holdoff import reproduce

    checks = case.checks
    misses = reproduce.misses(case)
    verdict = (
        f'<p class="verdict pass">all {len(checks)} checks pass</p>'
        if not misses
        else f'<p class="verdict miss">{misses} of {len(checks)} checks MISS the published '
        "value or bound; they are listed below with their notes</p>"
    )
    if len(reproduce.scored(case)) < len(checks):
        verdict += (
            '<p class="meta">checks marked <span class="plumbing">plumbing</span> cannot '
            "fail or cannot tell a match from no match (their notes say why): they are "
            "shown, not scored</p>"
        )
    notes, refs = reproduce.numbered_notes(case)
    rows = []
    for i, (c, ref) in enumerate(zip(checks, refs, strict=True), start=1):
        dev = c.deviation_rel
        rows.append(
            [
                str(i),
                esc(c.name) + (f' <span class="note">[note {ref}]</span>' if ref else ""),
                esc(c.run),
                f'<span class="num">{esc(reproduce.expected_number(c))}</span>',
                f'<span class="num">{esc(reproduce.display_number(c.simulated, c.unit))}</span>',
                esc(reproduce.display_unit(c.unit)),
                esc(reproduce.tolerance_text(c)),
                "–" if dev is None or c.op != "approx" else f"{dev:+.1%}",
                _check_cell(c),
            ]
        )
    warnings = [
        (run.id, field, message)
        for run in case.case.runs
        for field, message in tables.warning_lines(case.results[run.id].warnings)
    ]
    parts = [
        f'<p class="meta">source: {esc(case.case.source)}</p>',
        warnings_block(warnings),
        verdict,
        table_html(
            ["#", "check", "run", "published", "simulated", "unit", "tolerance", "deviation"]
            + ["result"],
            rows,
            "checks",
            left=(0, 1, 2),
        ),
        '<p class="meta">sources of the published values:</p>'
        + f'<ol class="sources">{"".join(f"<li>{esc(c.source)}</li>" for c in checks)}</ol>',
    ]
    if notes:
        parts.append(
            '<p class="meta">notes:</p><ol class="sources">'
            + "".join(f'<li class="note">{esc(n)}</li>' for n in notes)
            + "</ol>"
        )
    if not case.results:
        parts.append(
            '<p class="meta">NetPIPE curves and timelines need the runs themselves: '
            "write this report with <code>holdoff reproduce --report FILE</code>.</p>"
        )
    else:
        parts.extend(_netpipe_plots(doc, case))
        parts.extend(_load_curves(doc, case))
        for run in case.case.runs:
            plots = timeline(doc, case.results[run.id], f"{case.case.id} / {run.label}")
            parts.append(fold(f"Timelines: {esc(run.id)} — {esc(run.label)}", plots, open_=False))
    heading = f"<h2>Reproduction: {esc(case.case.id)} — {esc(case.case.title)}</h2>"
    body = fold(heading, "\n".join(p for p in parts if p))
    return f'<section id="{esc(anchor)}" class="case">{body}</section>'


def _netpipe_plots(doc: Doc, case: CaseResult) -> list[str]:
    import plotly.graph_objects as go

    curves: dict[str, list[dict[str, Any]]] = {}
    for r in case.case.runs:
        rows = [
            row
            for app in case.results[r.id].report["summary"]["apps"]
            for row in app.get("netpipe") or []
        ]
        if rows:
            curves[r.label] = rows
    if not curves:
        return []
    labels = {r.id: r.label for r in case.case.runs}
    out = ["<h3>NetPIPE curves (simulated lines, published points ×)</h3>"]
    for metric, unit, title in (
        ("np_mbps", "NetPIPE Mbps (2^20 bit/s)", "throughput against message size"),
        ("t_us", "µs (half round trip)", "latency against message size"),
    ):
        fig = go.Figure()
        for label, rows in curves.items():
            fig.add_trace(
                go.Scatter(
                    x=[row["bytes"] for row in rows],
                    y=[row[metric] for row in rows],
                    mode="lines+markers",
                    name=f"simulated: {label}",
                    marker={"size": 4},
                )
            )
        published = [
            c for c in case.case.checks if c.metric == f"netpipe.{metric}" and c.bytes is not None
        ]
        if published:
            fig.add_trace(
                go.Scatter(
                    x=[c.bytes for c in published],
                    y=[c.published for c in published],
                    mode="markers",
                    name="published",
                    marker={"symbol": "x", "size": 12, "color": "black"},
                    text=[f"published ({labels.get(c.run, c.run)}): {c.name}" for c in published],
                    hoverinfo="text+x+y",
                )
            )
        ticks = [4**k for k in range(13)]
        fig.update_xaxes(
            type="log",
            title_text="message size [bytes]",
            tickvals=ticks,
            ticktext=[_bytes_label(t) for t in ticks],
        )
        fig.update_yaxes(title_text=unit, type="log" if metric == "t_us" else "linear")
        fig.update_layout(
            title=f"{case.case.id}: NetPIPE {title}",
            height=430,
            margin={"l": 60, "r": 20, "t": 50, "b": 50},
        )
        out.append(doc.plot(fig))
    return out


def _load_curves(doc: Doc, case: CaseResult) -> list[str]:
    """Delivered against offered load, one plot per curve of the case."""
    import plotly.graph_objects as go

    out: list[str] = []
    for name, series in case.curves.items():
        fig = go.Figure()
        top = 0.0
        for label, rows in series.items():
            fig.add_trace(
                go.Scatter(
                    x=[x / 1e3 for x, _ in rows],
                    y=[y / 1e3 for _, y in rows],
                    mode="lines+markers",
                    name=f"simulated: {label}",
                )
            )
            top = max([top] + [x / 1e3 for x, _ in rows])
        fig.add_trace(
            go.Scatter(
                x=[0, top],
                y=[0, top],
                mode="lines",
                name="delivered = offered",
                line={"dash": "dot", "color": "grey"},
            )
        )
        fig.update_xaxes(title_text="offered [kpackets/s]")
        fig.update_yaxes(title_text="delivered [kpackets/s]")
        fig.update_layout(
            title=f"{case.case.id}: {name}",
            height=430,
            margin={"l": 60, "r": 20, "t": 50, "b": 50},
        )
        out.append(f"<h3>{esc(name)} (simulated)</h3>")
        out.append(doc.plot(fig))
    return out


def _bytes_label(n: int) -> str:
    for factor, suffix in ((2**20, " MiB"), (2**10, " KiB")):
        if n >= factor:
            return f"{n // factor}{suffix}"
    return f"{n} B"
