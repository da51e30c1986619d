"""The sweep section of the HTML report: each metric against the swept load
(or the first numeric swept field), one line per setting of the other swept
fields, and the table itself in a scrolling box.

Simplifies: replicates of a point are drawn as their mean. Units: latency
[us], throughput [bit/s], CPU [fraction], interrupt rate [1/s].
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from holdoff import tables
from holdoff.report.page import (
    DASHES,
    MARKERS,
    PALETTE,
    Doc,
    esc,
    fold,
    is_numeric,
    num,
    table_html,
    y_axis,
)

# -- sweeps -------------------------------------------------------------------------

_SWEEP_METRICS = (
    ("latency_us_p99", "latency p99 [µs]"),
    ("latency_us_p50", "latency p50 [µs]"),
    ("throughput_bps", "throughput [bit/s]"),
    ("cpu_util_busy", "CPU busy [fraction]"),
    ("interrupts_per_s", "interrupt rate [1/s]"),
)
_SWEEP_TOTALS = (
    "interrupts_per_s_total",
    "cpu_util_busy_max",
    "throughput_bps_total",
    "latency_us_p99_max",
    "dropped",
)
#: A sweep metric spanning more than this ratio (max/min) is drawn on a log axis.
_LOG_RATIO = 30.0


def sweep_section(doc: Doc, anchor: str, name: str, table: pd.DataFrame) -> str:
    from holdoff.sweeps import param_columns, short_names

    params = param_columns(table)
    short = short_names(params)
    varying = [p for p in params if table[p].nunique(dropna=False) > 1]
    numeric = [p for p in varying if is_numeric(table[p])]
    x_col = numeric[-1] if numeric else (varying[-1] if varying else "point")
    groups = [p for p in varying if p != x_col]

    def code(p: str) -> str:
        full = f' title="{esc(p)}"' if short.get(p, p) != p else ""
        return f"<code{full}>{esc(short.get(p, p))}</code>"

    parts = [
        f'<p class="meta">{len(table)} points; swept: '
        + (", ".join(code(p) for p in params) or "nothing")
        + f"; x axis {code(x_col)}"
        + ("; one line per " + " × ".join(code(g) for g in groups) if groups else "")
        + "</p>",
        '<div class="grid">',
    ]
    constant: list[str] = []
    for suffix, unit in _SWEEP_METRICS:
        for col in [c for c in table.columns if c.endswith(f"/{suffix}")]:
            values = pd.to_numeric(table[col], errors="coerce")
            if values.isna().all():
                continue
            if values.nunique(dropna=False) == 1:
                constant.append(f"<code>{esc(col)}</code> = {num(values.iloc[0])}")
                continue
            parts.append(_sweep_plot(doc, table, x_col, groups, col, unit, short))
    parts.append("</div>")
    if constant:
        parts.append(f'<p class="meta">the same at every point: {", ".join(constant)}</p>')
    parts.append(_sweep_table(table, params, short))
    body = fold(f"<h2>Sweep: {esc(name)}</h2>", "\n".join(parts))
    return f'<section id="{esc(anchor)}" class="sweep">{body}</section>'


def _sweep_plot(
    doc: Doc,
    table: pd.DataFrame,
    x_col: str,
    groups: list[str],
    col: str,
    unit: str,
    short: Mapping[str, str],
) -> str:
    import plotly.graph_objects as go

    frame = table[[x_col, *groups, col]].copy()
    frame[col] = pd.to_numeric(frame[col], errors="coerce")
    fig = go.Figure()
    keyed = (
        [
            (_group_label(groups, key, short), sub)
            for key, sub in frame.groupby(groups, sort=False, dropna=False)
        ]
        if groups
        else [("all points", frame)]
    )
    for i, (label, sub) in enumerate(keyed):
        mean = sub.groupby(x_col, sort=True, dropna=False)[col].mean()
        fig.add_trace(
            go.Scatter(
                x=list(mean.index),
                y=list(mean.values),
                mode="lines+markers",
                name=label,
                line={"color": PALETTE[i % len(PALETTE)], "dash": DASHES[i % len(DASHES)]},
                marker={"symbol": MARKERS[i % len(MARKERS)], "size": 8},
            )
        )
    legend_title = " × ".join(short.get(g, g) for g in groups) if groups else ""
    fig.update_layout(
        title={"text": col, "font": {"size": 14}},
        height=420,
        margin={"l": 60, "r": 10, "t": 40, "b": 40},
        legend={"font": {"size": 10}, "title": {"text": legend_title}},
    )
    fig.update_xaxes(title_text=short.get(x_col, x_col))
    fig.update_yaxes(title_text=unit, **y_axis(frame[col], log_ratio=_LOG_RATIO))
    return doc.plot(fig)


def _group_label(groups: list[str], key: Any, short: Mapping[str, str]) -> str:
    values = key if isinstance(key, tuple) else (key,)
    if len(groups) == 1:
        return str(values[0])
    return " | ".join(f"{short.get(g, g)}={v}" for g, v in zip(groups, values, strict=True))


def _sweep_table(
    table: pd.DataFrame, params: list[str], short: Mapping[str, str], limit: int = 500
) -> str:
    cols = ["point", "replicate", *params, "seed"] + [c for c in _SWEEP_TOTALS if c in table]
    rows = []
    for record in table[cols].head(limit).to_dict("records"):
        row = []
        for c in cols:
            value = record[c]
            if c == "cpu_util_busy_max":
                row.append(tables.percent(value))
            elif isinstance(value, float):
                row.append(num(value))
            elif isinstance(value, int) and not isinstance(value, bool) and c != "seed":
                row.append(tables.count(value))
            else:
                row.append(esc(value))
        rows.append(row)
    more = f'<p class="meta">first {limit} of {len(table)} rows</p>' if len(table) > limit else ""
    header = [short.get(c, c) for c in cols]
    left = [i for i, c in enumerate(cols) if c in params and not is_numeric(table[c])]
    return f'<div class="scroll">{table_html(header, rows, "sweep-table", left)}</div>{more}'
