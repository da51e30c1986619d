"""The battery's HTML scorecard: the tables of the terminal scorecard and,
per workload and chip, each moderator's decisions on the workload's
timeline (the run of the first seed).

Draws, for the port under test (:attr:`holdoff.battery.Workload.dut`), the
interrupt rate of its vectors against time and the throttle setting as a
rate (1e9 / interval) with each decision of the moderator as a marker: the
built-ins' trace rows with ``rate_per_s``, and for rows without it (Python
and C moderators, which return register values) the rate their register
value means (:func:`holdoff.report.run.decision_rate`).

Simplifies: series are downsampled as in the run report; one figure per
(workload, chip), a colour per moderator. Units: time [ms], rates [1/s].
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from holdoff import _core
from holdoff.battery_run import CellKey, Plan
from holdoff.battery_score import Row, diff_text, letters, mean_text
from holdoff.report.page import CSS, PALETTE, Doc, downsample, esc, fold, rounded, table_html
from holdoff.report.run import decision_rate


def _table(p: Plan, baseline: str, rows: Sequence[Row], workload: str) -> str:
    """Chips x metrics down, a column per moderator (its letter): the mean ±
    half-interval and under it the difference to the baseline, in bold when
    it leaves out zero."""
    names = letters(p)
    header = ["chip", "metric"]
    header += [names[c.label] + (" (base)" if c.label == baseline else "") for c in p.candidates]
    body = []
    for r in (r for r in rows if r.workload.name == workload):
        cells = [esc(r.chip), esc(f"{r.metric.label} [{r.metric.unit}]")]
        for c in p.candidates:
            e = r.entries[c.label]
            if e.skipped:
                text = f'<span class="meta">skipped: {esc(e.skipped)}</span>'
            elif e.error and e.interval is None:
                text = f'<span class="miss">ERROR: {esc(e.error)}</span>'
            else:
                text = esc(mean_text(e.interval)) if e.interval else "-"
                if e.error:
                    text += f' <span class="miss">ERROR: {esc(e.error)}</span>'
            d = e.diff
            if d is not None:
                diff = esc(diff_text(d))
                text += "<br>" + (f"<b>{diff}</b>" if d.marked else diff)
            cells.append(text)
        body.append(cells)
    return table_html(header, body, left=(0, 1))


def _timeline(
    doc: Doc, p: Plan, details: Mapping[CellKey, Mapping[str, Any]], wl: Any, chip: str
) -> str:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=[
            f"{wl.dut}: interrupt rate [1/s]",
            f"{wl.dut}: throttle setting as a rate [1/s]; x = the moderator's decisions",
        ],
    )
    drawn = 0
    for i, cand in enumerate(p.candidates):
        d = details.get(CellKey(cand.label, chip, wl.name))
        if not d:
            continue
        colour = PALETTE[i % len(PALETTE)]
        ts = d.get("timeseries") or {}
        t_ms = [t / 1e6 for t in ts.get("t_ns", [])]
        series = ts.get("series") or {}
        for key, values in sorted(series.items()):
            entity, _, metric = key.rpartition("/")
            if not entity.startswith(f"{wl.dut}.v"):
                continue
            if metric == "interrupts_per_s":
                xs, ys = downsample(t_ms, values)
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=rounded(ys),
                        mode="lines",
                        name=f"{cand.label} {entity}",
                        line={"color": colour},
                        legendgroup=cand.label,
                    ),
                    row=1,
                    col=1,
                )
                drawn += 1
            elif metric == "throttle_interval_ns":
                rates = [1e9 / v if v else None for v in values]
                xs, ys = downsample(t_ms, rates)
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=rounded(ys),
                        mode="lines",
                        name=f"{cand.label} setting",
                        line={"color": colour, "shape": "hv", "dash": "dot"},
                        legendgroup=cand.label,
                        showlegend=False,
                    ),
                    row=2,
                    col=1,
                )
        port = next((q for q in d.get("ports", []) if q.get("port") == wl.dut), None)
        marks: list[tuple[float, float]] = []
        for t in (port or {}).get("moderation_trace", []):
            rate = decision_rate(t.get("values", {}))
            if rate is not None and len(marks) < 5000:
                marks.append((t["t_ns"] / 1e6, rate))
        if marks:
            fig.add_trace(
                go.Scatter(
                    x=[x for x, _ in marks],
                    y=[y for _, y in marks],
                    mode="markers",
                    name=f"{cand.label} decisions",
                    marker={"symbol": "x", "size": 7, "color": colour},
                    legendgroup=cand.label,
                ),
                row=2,
                col=1,
            )
            drawn += 1
    if not drawn:
        return ""
    fig.update_xaxes(title_text="simulated time [ms]", row=2, col=1)
    fig.update_layout(
        title=f"{wl.name} on the {chip}: decisions on the timeline (seed {p.seeds[0]})",
        height=560,
        margin={"l": 60, "r": 20, "t": 80, "b": 50},
    )
    return doc.plot(fig)


def build_html(
    p: Plan,
    baseline: str,
    rows: Sequence[Row],
    details: Mapping[CellKey, Mapping[str, Any]],
    footer: str,
) -> str:
    doc = Doc()
    sections = []
    for wl in p.workloads:
        body = [
            f'<p class="meta">source: {esc(wl.source)}</p>',
            _table(p, baseline, rows, wl.name),
        ]
        for chip in p.chips:
            body.append(_timeline(doc, p, details, wl, chip))
        sections.append(
            f'<section id="{doc.anchor(wl.name)}">'
            + fold(f"<h2>{esc(wl.name)}: {esc(wl.title)}</h2>", "\n".join(b for b in body if b))
            + "</section>"
        )
    mods = ", ".join(esc(c.spec) for c in p.candidates)
    names = letters(p)
    legend = "".join(
        f"<li>{esc(names[c.label])} = {esc(c.spec)}"
        + (" (baseline)" if c.label == baseline else "")
        + "</li>"
        for c in p.candidates
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>holdoff battery</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<h1>holdoff battery: {mods}</h1>\n"
        f'<p class="meta">holdoff {esc(_core.version())}; baseline {esc(baseline)}; seeds '
        f"{esc(', '.join(map(str, p.seeds)))}; each cell: mean ± half its 95 % interval; "
        "difference: mean minus the baseline's, Welch 95 % interval, in bold when it leaves "
        f"out zero (larger than the spread). {esc(footer)}</p>\n"
        f"<ul>{legend}</ul>\n" + "\n".join(sections) + "\n" + doc.scripts() + "</body>\n</html>\n"
    )


def write_html(path: Path, text: str) -> None:
    if path.parent != Path(""):
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
