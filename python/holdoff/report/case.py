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
from holdoff.report.page import (
    DASHES,
    MARKERS,
    PALETTE,
    Doc,
    ReportInputError,
    esc,
    fold,
    plural,
    table_html,
    warnings_block,
)
from holdoff.report.run import netpipe_plots, timeline

if TYPE_CHECKING:
    from holdoff.reproduce import CaseResult


# -- reproduction cases -------------------------------------------------------------


#: Fields of a check in ``reproduce --json``: name -> (types accepted, required).
_CHECK_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "name": ((str,), True),
    "unit": ((str,), True),
    "published": ((int, float), True),
    "simulated": ((int, float, type(None)), True),
    "tolerance_rel": ((int, float), True),
    "ok": ((bool,), False),
    "source": ((str,), False),
    "run": ((str,), False),
    "note": ((str, type(None)), False),
    "op": ((str,), False),
    "plumbing": ((str, type(None)), False),
    "evidence": ((str, type(None)), False),
}
_OPS = ("approx", "lt", "gt")


def as_case(case: Any) -> CaseResult:
    """A case result whose pass/MISS marks are recomputed from its numbers
    (:func:`holdoff.reproduce.judge`), not taken from its ``ok`` labels; a dict
    of ``reproduce --json`` is checked field by field and becomes one without
    runs. A label that disagrees with the numbers is said in the check's note.

    Raises :class:`ReportInputError` naming the case, check and field."""
    from holdoff import reproduce

    if not isinstance(case, Mapping):
        if not isinstance(case, reproduce.CaseResult):
            raise ReportInputError(f"a case is {type(case).__name__}, not a JSON object")
        return dataclasses.replace(case, checks=[_rejudged(c) for c in case.checks])
    raw = case.get("checks", [])
    name = str(case.get("case", ""))
    if not isinstance(raw, list):
        raise ReportInputError(f"case {name!r}: checks is {type(raw).__name__}, not a list")
    checks = [_rejudged(_check(name, i, c)) for i, c in enumerate(raw, start=1)]
    meta = reproduce.Case(
        id=name,
        title=str(case.get("title", "")),
        source=str(case.get("source", "")),
        folder=Path(),
        runs=[],
        checks=[],
    )
    return reproduce.CaseResult(meta, checks)


def _check(case: str, i: int, raw: Any) -> Any:
    from holdoff import reproduce

    where = f"case {case!r}, check {i}"
    if not isinstance(raw, Mapping):
        raise ReportInputError(f"{where} is {type(raw).__name__}, not a JSON object")
    values: dict[str, Any] = {}
    for key, (types, required) in _CHECK_FIELDS.items():
        if key not in raw:
            if required:
                raise ReportInputError(f"{where}: no {key!r}")
            continue
        value = raw[key]
        bad_bool = isinstance(value, bool) and bool not in types
        if bad_bool or not isinstance(value, types):
            want = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ReportInputError(f"{where}: {key!r} is {value!r}, expected {want}")
        values[key] = value
    if values.get("op", "approx") not in _OPS:
        raise ReportInputError(f"{where}: 'op' is {values['op']!r}, expected one of {_OPS}")
    values.setdefault("ok", False)
    values.setdefault("source", "")
    values.setdefault("run", "")
    return reproduce.CheckResult(**values)


def _rejudged(c: Any) -> Any:
    """The check with ``ok`` recomputed from its numbers; a disagreeing label is noted."""
    from holdoff import reproduce

    ok = reproduce.judge(c.op, c.published, c.simulated, c.tolerance_rel)
    if ok == c.ok:
        return c
    said = "pass" if c.ok else "MISS"
    note = (
        f"The input marked this check {said}; its numbers say "
        f"{'pass' if ok else 'MISS'}, which is shown."
    )
    return dataclasses.replace(c, ok=ok, note=f"{note} {c.note}" if c.note else note)


def _check_cell(c: Any) -> str:
    """The result cell of a check: pass, MISS, or plumbing (not scored)."""
    if not c.scored:
        word = "plumbing ok" if c.ok else "plumbing BROKEN"
        return f'<span class="plumbing{"" if c.ok else " miss"}">{word}</span>'
    return '<span class="pass">pass</span>' if c.ok else '<span class="miss">MISS</span>'


def verdict(case: CaseResult) -> tuple[str, str]:
    """The case's verdict counted as the score line counts (scored checks
    only) and its plumbing checks apart: (the verdict paragraph, the short form
    for the overview), both HTML."""
    from holdoff import reproduce

    scored = reproduce.scored(case)
    missed = sum(1 for c in scored if not c.ok)
    plumbing = [c for c in case.checks if not c.scored]
    broken = sum(1 for c in plumbing if not c.ok)
    if not scored:
        long = '<p class="verdict">no scored checks: nothing to compare</p>'
        short = '<span class="meta">nothing compared</span>'
    elif not missed:
        long = f'<p class="verdict pass">all {plural(len(scored), "scored check")} pass</p>'
        short = '<span class="pass">all pass</span>'
    else:
        long = (
            f'<p class="verdict miss">{missed} of {plural(len(scored), "scored check")} MISS '
            "the published value or bound; they are listed below with their notes</p>"
        )
        short = f'<span class="miss">{missed} MISS</span>'
    if plumbing:
        state = f'<span class="miss">{broken} BROKEN</span>' if broken else "all wired as expected"
        long += (
            f'<p class="meta">and {plural(len(plumbing), "plumbing check")}, shown and not '
            f'scored ({state}): a <span class="plumbing">plumbing</span> check cannot '
            "fail or cannot tell a match from no match (its note says why)</p>"
        )
        if broken:
            short += f', <span class="miss">{broken} plumbing BROKEN</span>'
    return long, short


def case_section(doc: Doc, anchor: str, case: CaseResult) -> str:
    from holdoff import reproduce

    checks = case.checks
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
        verdict(case)[0],
        warnings_block(warnings),
        table_html(
            ["#", "check", "run", "published", "simulated", "unit", "tolerance", "deviation"]
            + ["result"],
            rows,
            "checks",
            left=(0, 1, 2),
        )
        if rows
        else "",
        '<p class="meta">sources of the published values:</p>'
        + f'<ol class="sources">{"".join(f"<li>{esc(c.source)}</li>" for c in checks)}</ol>'
        if checks
        else "",
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
    """The case's NetPIPE curves per run with the published points of each."""
    labels = {r.id: r.label for r in case.case.runs}
    curves = {
        r.label: rows
        for r in case.case.runs
        if (
            rows := [
                row
                for app in case.results[r.id].report["summary"]["apps"]
                for row in app.get("netpipe") or []
            ]
        )
    }
    published: dict[str, dict[str, list[Any]]] = {}
    for c in case.case.checks:
        if c.metric.startswith("netpipe.") and c.bytes is not None:
            metric = c.metric.removeprefix("netpipe.")
            published.setdefault(metric, {}).setdefault(labels.get(c.run, c.run), []).append(c)
    return netpipe_plots(doc, case.case.id, curves, published, order=list(labels.values()))


def _curve_published(case: CaseResult, curve: Any) -> tuple[list[tuple[float, Any]], list[Any]]:
    """The published numbers a load curve can show: (offered rate [packets/s]
    of the check's run, check) for each two-sided check of the delivered
    generator's rate, and the one-sided bounds on it (drawn as lines)."""
    points: list[tuple[float, Any]] = []
    bounds: list[Any] = []
    for c in case.case.checks:
        if (
            c.metric != "generator.rx_pps"
            or c.unit != "packets/s"
            or c.generator != curve.delivered
            or c.divide_by_run is not None
            or c.per is not None
            or c.run not in case.results
        ):
            continue
        if c.op != "approx":
            bounds.append(c)
            continue
        summary = case.results[c.run].summary
        secs = float(summary.get("sim_time_ns") or 0) / 1e9
        sent = [
            float(g.get("sent_packets") or 0)
            for g in summary.get("generators", [])
            if g.get("generator") == curve.offered
        ]
        if secs > 0 and sent:
            points.append((sent[0] / secs, c))
    return points, bounds


def _load_curves(doc: Doc, case: CaseResult) -> list[str]:
    """Delivered against offered load, one plot per curve of the case, with
    the published rates at their runs' offered load and published bounds."""
    import plotly.graph_objects as go

    out: list[str] = []
    labels = {r.id: r.label for r in case.case.runs}
    for curve in case.case.curves:
        series = case.curves.get(curve.name)
        if not series:
            continue
        fig = go.Figure()
        top = 0.0
        colour: dict[str, str] = {}
        for i, (label, rows) in enumerate(series.items()):
            scenario = next((s.scenario for s in curve.series if s.label == label), Path())
            colour[Path(scenario).name] = PALETTE[i % len(PALETTE)]
            fig.add_trace(
                go.Scatter(
                    x=[x / 1e3 for x, _ in rows],
                    y=[y / 1e3 for _, y in rows],
                    mode="lines+markers",
                    name=f"simulated: {label}",
                    line={"color": PALETTE[i % len(PALETTE)], "dash": DASHES[i % len(DASHES)]},
                    marker={"symbol": MARKERS[i % len(MARKERS)], "size": 7},
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
        points, bounds = _curve_published(case, curve)
        runs = {r.id: r for r in case.case.runs}
        for offered, c in points:
            fig.add_trace(
                go.Scatter(
                    x=[offered / 1e3],
                    y=[c.published / 1e3],
                    mode="markers",
                    name=f"published: {labels.get(c.run, c.run)}",
                    marker={
                        "symbol": "x",
                        "size": 14,
                        "color": colour.get(Path(runs[c.run].scenario).name, "black"),
                        "line": {"width": 1, "color": "black"},
                    },
                    text=[c.name],
                    hoverinfo="text+x+y",
                )
            )
        for c in bounds:
            sign = "<" if c.op == "lt" else ">"
            fig.add_trace(
                go.Scatter(
                    x=[0, top],
                    y=[c.published / 1e3] * 2,
                    mode="lines",
                    name=f"published bound: {sign} {c.published / 1e3:,.0f} kpackets/s",
                    line={"dash": "dash", "color": "black", "width": 1},
                    text=[c.name] * 2,
                    hoverinfo="text+y",
                )
            )
        fig.update_xaxes(title_text="offered [kpackets/s]", rangemode="tozero")
        fig.update_yaxes(title_text="delivered [kpackets/s]", rangemode="tozero")
        fig.update_layout(
            title=f"{case.case.id}: {curve.name}",
            height=460,
            margin={"l": 60, "r": 20, "t": 50, "b": 50},
        )
        out.append(f"<h3>{esc(curve.name)} (simulated lines, published points and bounds)</h3>")
        out.append(doc.plot(fig))
    return out
