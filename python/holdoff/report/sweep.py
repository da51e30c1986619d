"""The sweep section of the HTML report: each metric against the swept load
(or the last numeric swept field), one line per setting of the other swept
fields; a categorical axis (a sweep over workloads) as points side by side
per category, never joined by lines. Panel titles in words with their unit,
throughput in SI units (kb/s, Mb/s, Gb/s), category and legend labels without
the parts every category shares, later series drawn smaller on top of earlier
ones (coinciding series stay visible), 95 % error bars from the table's
``m_ci95_lo``/``m_ci95_hi`` columns or, without them, over a point's
replicates (:func:`holdoff.stats.ci95`). A metric that is the same at every
point is one line of text, not a panel. The table itself is in a scrolling box.

Simplifies: replicates of a point are drawn as their mean. Units: latency
[us], throughput [b/s with an SI prefix], CPU [% of the host's cores],
interrupt rate [1/s].
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
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
    warnings_block,
    y_axis,
)
from holdoff.sweep_metrics import warnings_of_runs

# -- sweeps -------------------------------------------------------------------------

#: Per-entity metrics drawn: column suffix, words, the entity's kind, unit kind.
_SWEEP_METRICS = (
    ("latency_us_p99", "latency p99", "app", "us"),
    ("latency_us_p50", "latency p50", "app", "us"),
    ("throughput_bps", "throughput", "app", "bps"),
    ("cpu_util_busy", "CPU busy", "host", "fraction"),
    ("interrupts_per_s", "interrupt rate", "port", "rate"),
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
#: Category labels longer than this [characters] are broken at their commas.
_LABEL_WRAP = 24


def display_unit(kind: str, values: pd.Series) -> tuple[float, str]:
    """(scale, unit) a person reads for a metric's values: throughput in the
    SI prefix of its largest value (``Mb/s``, never a bare ``1B``), CPU in %."""
    if kind == "bps":
        top = float(values.abs().max()) if values.notna().any() else 0.0
        for factor, unit in ((1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s")):
            if top >= factor:
                return 1 / factor, unit
        return 1.0, "b/s"
    if kind == "fraction":
        return 100.0, "% of the host's cores"
    if kind == "rate":
        return 1.0, "interrupts/s"
    return 1.0, "us"


def short_labels(values: Sequence[Any]) -> dict[Any, str]:
    """A short label for each category: the ``, ``-separated parts that every
    category shares are left out, except a leading kind (a part without
    ``=``): ``ping, name=w, host=a, interval_us=1000`` and ``rpc, name=w,
    host=a`` read ``ping, interval_us=1000`` and ``rpc``. Labels stay whole
    when leaving parts out would empty one or make two alike."""
    parts = {v: str(v).split(", ") for v in values}
    if len(parts) < 2:
        return {v: str(v) for v in parts}
    shared = set.intersection(*(set(p) for p in parts.values()))
    out = {}
    for v, p in parts.items():
        kind = p[:1] if "=" not in p[0] else []
        kept = kind + [x for x in p[len(kind) :] if x not in shared]
        out[v] = ", ".join(kept)
    if "" in out.values() or len(set(out.values())) < len(out):
        return {v: str(v) for v in parts}
    return out


def _wrapped(label: str) -> str:
    """A tick label broken at its commas when long (plotly breaks at ``<br>``)."""
    if len(label) <= _LABEL_WRAP:
        return label
    return "<br>".join(label.split(", "))


def _runs_warnings(table: pd.DataFrame) -> str:
    """The runs' report warnings (the table's ``warnings`` column), repeats
    folded with the points that gave them; nothing without any."""
    if "warnings" not in table.columns:
        return ""
    return warnings_block(warnings_of_runs(table["point"], table["warnings"]))


def sweep_section(doc: Doc, anchor: str, name: str, table: pd.DataFrame) -> str:
    from holdoff.sweeps import param_columns, short_names

    params = param_columns(table)
    short = short_names(params)
    varying = [p for p in params if table[p].nunique(dropna=False) > 1]
    numeric = [p for p in varying if is_numeric(table[p])]
    x_col = numeric[-1] if numeric else (varying[-1] if varying else "point")
    groups = [p for p in varying if p != x_col]
    categorical = x_col != "point" and not is_numeric(table[x_col])

    def code(p: str) -> str:
        full = f' title="{esc(p)}"' if short.get(p, p) != p else ""
        return f"<code{full}>{esc(short.get(p, p))}</code>"

    per = "points side by side per " if categorical else "one line per "
    parts = [
        f'<p class="meta">{len(table)} points; swept: '
        + (", ".join(code(p) for p in params) or "nothing")
        + f"; x axis {code(x_col)}"
        + ("" if not categorical else " (categories)")
        + ("; " + per + " × ".join(code(g) for g in groups) if groups else "")
        + "; error bars: 95 % interval over each point's seeds (none for one seed)</p>",
        _runs_warnings(table),
        '<div class="grid">',
    ]
    bars = _percentile_bars(table, [x_col, *groups])
    if not bars:
        parts.insert(
            1,
            '<p class="meta">percentile error bars left out: more than '
            f"{MAX_BOOTSTRAPS} bootstrap intervals to compute; the sweep's replicate "
            "summary table (written with replicates) holds them</p>",
        )
    constant: list[str] = []
    for suffix, words, kind, unit in _SWEEP_METRICS:
        for col in [c for c in table.columns if c.endswith(f"/{suffix}")]:
            values = pd.to_numeric(table[col], errors="coerce")
            entity = col[: -len(suffix) - 1]
            if values.isna().all():
                continue
            if values.nunique(dropna=True) == 1:
                scale, shown = display_unit(unit, values)
                constant.append(
                    f"{esc(words)} of {kind} <code>{esc(entity)}</code> = "
                    f"{num(values.dropna().iloc[0] * scale)} {esc(shown)}"
                    + (" (where defined)" if values.isna().any() else "")
                )
                continue
            title = (words, kind, entity, unit)
            parts.append(
                _sweep_plot(doc, table, x_col, groups, col, title, short, categorical, bars)
            )
    parts.append("</div>")
    if constant:
        parts.append(f'<p class="meta">the same at every point: {"; ".join(constant)}</p>')
    parts.append(_sweep_table(table, params, short))
    body = fold(f"<h2>Sweep: {esc(name)}</h2>", "\n".join(parts))
    return f'<section id="{esc(anchor)}" class="sweep">{body}</section>'


#: Most bootstrap intervals (percentile error bars over replicates) one sweep
#: section computes: each takes about 30 ms.
MAX_BOOTSTRAPS = 300


def _percentile_bars(table: pd.DataFrame, keys: list[str]) -> bool:
    """Whether the percentile panels' error bars over replicates fit in
    :data:`MAX_BOOTSTRAPS` (a table with interval columns needs none)."""
    from holdoff import stats

    columns = [
        c
        for suffix, *_ in _SWEEP_METRICS
        for c in table.columns
        if c.endswith(f"/{suffix}") and stats.is_percentile(c) and f"{c}_ci95_lo" not in table
    ]
    if not columns or keys == ["point"]:
        return True
    cells = table.groupby(keys, dropna=False).size()
    return int((cells > 1).sum()) * len(columns) <= MAX_BOOTSTRAPS


@functools.cache
def _ci95(values: tuple[float, ...], percentile: bool) -> tuple[float | None, float | None]:
    """:func:`holdoff.stats.ci95` of ``values``, computed once per report
    process (a percentile's bootstrap takes tens of milliseconds)."""
    from holdoff import stats

    iv = stats.ci95(values, percentile=percentile)
    return iv.lo, iv.hi


def spread(
    table: pd.DataFrame, x_col: str, col: str, *, percentile_bars: bool = True
) -> pd.DataFrame:
    """Per x value: the mean of ``col`` and its 95 % interval (``lo``, ``hi``;
    NaN without one). The interval is the table's ``col_ci95_lo``/``_hi``
    columns when it has them (a replicate summary), else computed over the
    rows of that x (replicates, :func:`holdoff.stats.ci95`); a percentile's
    bootstrap interval only when ``percentile_bars``."""
    from holdoff import stats

    percentile = stats.is_percentile(col)
    lo_col, hi_col = f"{col}_ci95_lo", f"{col}_ci95_hi"
    rows = []
    for x, sub in table.groupby(x_col, sort=True, dropna=False):
        values = pd.to_numeric(sub[col], errors="coerce").dropna()
        if values.empty:
            continue
        mean, lo, hi = float(values.mean()), math.nan, math.nan
        if lo_col in sub and hi_col in sub:
            lows = pd.to_numeric(sub[lo_col], errors="coerce").dropna()
            highs = pd.to_numeric(sub[hi_col], errors="coerce").dropna()
            if not lows.empty and not highs.empty:
                lo, hi = float(lows.mean()), float(highs.mean())
        elif len(values) > 1 and all(math.isfinite(v) for v in values):
            if percentile_bars or not percentile:
                low, high = _ci95(tuple(float(v) for v in values), percentile)
                if low is not None and high is not None:
                    lo, hi = low, high
        rows.append({"x": x, "mean": mean, "lo": lo, "hi": hi})
    return pd.DataFrame(rows, columns=["x", "mean", "lo", "hi"])


def _sweep_plot(
    doc: Doc,
    table: pd.DataFrame,
    x_col: str,
    groups: list[str],
    col: str,
    title: tuple[str, str, str, str],
    short: Mapping[str, str],
    categorical: bool,
    percentile_bars: bool = True,
) -> str:
    import plotly.graph_objects as go

    words, kind, entity, unit = title
    extra = [c for c in (f"{col}_ci95_lo", f"{col}_ci95_hi") if c in table]
    frame = table[[x_col, *groups, col, *extra]].copy()
    frame[col] = pd.to_numeric(frame[col], errors="coerce")
    scale, shown = display_unit(unit, frame[col])
    keyed = (
        [(key, sub) for key, sub in frame.groupby(groups, sort=False, dropna=False)]
        if groups
        else [(None, frame)]
    )
    names = _group_labels(groups, [key for key, _ in keyed], short)
    ticks = short_labels(sorted(frame[x_col].dropna().unique(), key=str)) if categorical else {}
    fig = go.Figure()
    drawn: list[float] = []
    for i, ((_key, sub), label) in enumerate(zip(keyed, names, strict=True)):
        points = spread(sub, x_col, col, percentile_bars=percentile_bars)
        if points.empty:
            continue
        mean = points["mean"] * scale
        drawn.extend(mean)
        has_bars = bool(points["lo"].notna().any())
        error = (
            {
                "type": "data",
                "symmetric": False,
                "array": list((points["hi"] * scale - mean).fillna(0)),
                "arrayminus": list((mean - points["lo"] * scale).fillna(0)),
                "thickness": 1.5,
                "width": 5,
            }
            if has_bars
            else None
        )
        colour = PALETTE[i % len(PALETTE)]
        # Later series are drawn smaller and thinner on top, so coinciding
        # series stay visible as rings and double lines.
        marker = {
            "symbol": MARKERS[i % len(MARKERS)],
            "size": max(6, 14 - 3 * i),
            "color": colour,
            "line": {"width": 1, "color": "white"},
        }
        xs = [_wrapped(ticks[x]) for x in points["x"]] if categorical else list(points["x"])
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=list(mean),
                mode="markers" if categorical else "lines+markers",
                name=label,
                line={
                    "color": colour,
                    "dash": DASHES[i % len(DASHES)],
                    "width": max(1.5, 4.0 - i),
                },
                marker=marker,
                error_y=error,
                offsetgroup=str(i) if categorical else None,
                hovertext=[str(x) for x in points["x"]],
            )
        )
    legend_title = " × ".join(short.get(g, g) for g in groups) if groups else ""
    fig.update_layout(
        title={"text": f"{words} [{shown}], {kind} {entity}", "font": {"size": 14}},
        height=460,
        margin={"l": 70, "r": 10, "t": 40, "b": 40},
        legend={
            "font": {"size": 11},
            "title": {"text": legend_title},
            "orientation": "h",
            "yanchor": "top",
            "y": -0.22,
            "x": 0,
        },
        showlegend=bool(groups),
        **({"scattermode": "group", "scattergap": 0.5} if categorical else {}),
    )
    axis_title = short.get(x_col, x_col)
    if categorical:
        fig.update_xaxes(type="category", tickangle=0, title_text=axis_title)
    else:
        fig.update_xaxes(title_text=axis_title, exponentformat="none", separatethousands=True)
    fig.update_yaxes(
        title_text=f"{words} [{shown}]",
        exponentformat="none",
        separatethousands=True,
        **y_axis(drawn, log_ratio=_LOG_RATIO),
    )
    return doc.plot(fig)


def _group_labels(groups: list[str], keys: list[Any], short: Mapping[str, str]) -> list[str]:
    """The legend label of each group: its values, shortened as categories are."""
    if not groups:
        return ["all points" for _ in keys]
    tuples = [key if isinstance(key, tuple) else (key,) for key in keys]
    columns = [short_labels([t[j] for t in tuples]) for j in range(len(groups))]
    if len(groups) == 1:
        return [columns[0][t[0]] for t in tuples]
    return [
        " | ".join(f"{short.get(g, g)}={columns[j][t[j]]}" for j, g in enumerate(groups))
        for t in tuples
    ]


def _sweep_table(
    table: pd.DataFrame, params: list[str], short: Mapping[str, str], limit: int = 500
) -> str:
    """The table: one row per run (``replicate``, ``seed``) or, in a replicate
    summary, per parameter set (``seeds``, each total with its interval)."""
    ids = [c for c in ("point", "replicate") if c in table]
    seeds = [c for c in ("seed", "seeds") if c in table]
    totals = [c for c in _SWEEP_TOTALS if c in table]
    cols = [*ids, *params, *seeds, *totals]

    def cell(c: str, value: Any) -> str:
        if c == "cpu_util_busy_max":
            return tables.percent(value)
        if isinstance(value, float):
            return num(value)
        if isinstance(value, int) and not isinstance(value, bool) and c != "seed":
            return tables.count(value)
        return esc(value)

    rows = []
    for record in table.head(limit).to_dict("records"):
        row = []
        for c in cols:
            text = cell(c, record[c])
            lo, hi = record.get(f"{c}_ci95_lo"), record.get(f"{c}_ci95_hi")
            if c in totals and _finite(lo) and _finite(hi) and lo != hi:
                text += f' <span class="meta">({cell(c, lo)} to {cell(c, hi)})</span>'
            row.append(text)
        rows.append(row)
    more = f'<p class="meta">first {limit} of {len(table)} rows</p>' if len(table) > limit else ""
    header = [short.get(c, c) for c in cols]
    left = [i for i, c in enumerate(cols) if c in params and not is_numeric(table[c])]
    return f'<div class="scroll">{table_html(header, rows, "sweep-table", left)}</div>{more}'


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
