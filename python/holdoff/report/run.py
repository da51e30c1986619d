"""The single-run section of the HTML report: warnings first, the terminal
summary's tables, the packet ledger (recomputed from its numbers), a
NetPIPE application's curves (:func:`netpipe_plots`, shared with the
reproduction cases) and the timelines (interrupt rate, the
throttle setting as a rate with the algorithm's decisions, RX ring
occupancy, CPU per class) with ``[[at]]`` changes marked.

Simplifies: series are downsampled to bucket minima and maxima
(:func:`holdoff.report.page.downsample`). Units: time [ms], rates [1/s],
CPU [fraction of the host's cores].
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from holdoff import tables
from holdoff.plots import bytes_label
from holdoff.report.page import (
    DASHES,
    MARKERS,
    PALETTE,
    Doc,
    downsample,
    esc,
    fold,
    rounded,
    summary_table,
    warnings_block,
    y_axis,
)
from holdoff.result import RunResult


def as_result(run: RunResult | Mapping[str, Any]) -> RunResult:
    return run if isinstance(run, RunResult) else RunResult.from_report(run)


# -- single runs --------------------------------------------------------------------


_LEDGER_KEYS = ("injected", "delivered", "dropped", "in_flight")


def ledger_state(ledger: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the packet account adds up, recomputed from its numbers
    (injected = delivered + dropped + in flight), not read from its
    ``balanced`` label: (balanced, the account as text, with what is wrong)."""
    values = {k: ledger.get(k) for k in _LEDGER_KEYS}
    bad = [
        k
        for k, v in values.items()
        if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0
    ]
    if bad:
        return False, f"incomplete: {', '.join(bad)} missing or not a count"
    out = values["delivered"] + values["dropped"] + values["in_flight"]  # type: ignore[operator]
    ok = values["injected"] == out
    text = tables.ledger_text(ledger)
    if not ok:
        text = text.replace(" = ", " ≠ ", 1) + f" (= {tables.count(out)})"
    label = ledger.get("balanced")
    if isinstance(label, bool) and label != ok:
        said = "balanced" if label else "not balanced"
        text += f"; the input says {said}, the numbers are shown"
    return ok, text


def run_section(doc: Doc, anchor: str, name: str, result: RunResult) -> str:
    ok, account = ledger_state(result.ledger)
    balanced = (
        '<span class="pass">balanced</span>' if ok else '<span class="miss">NOT balanced</span>'
    )
    identity = ", ".join(f"{label} {value}" for label, value in tables.header_text(result))
    parts = [
        f'<p class="meta">{esc(identity)}</p>',
        warnings_block(("", f, m) for f, m in tables.warning_lines(result.warnings)),
        *(summary_table(table) for table in tables.run_tables(result)),
        f"<p>drops: {esc(tables.drops_text(result.drops))}</p>",
        f"<p>ledger: {balanced}: {esc(account)}</p>",
        *netpipe_plots(doc, name, _netpipe_curves(result)),
        timeline(doc, result, name),
    ]
    body = fold(f"<h2>Run: {esc(name)}</h2>", "\n".join(p for p in parts if p))
    return f'<section id="{esc(anchor)}" class="run">{body}</section>'


def netpipe_plots(
    doc: Doc,
    name: str,
    curves: Mapping[str, Sequence[Mapping[str, Any]]],
    published: Mapping[str, Mapping[str, Sequence[Any]]] | None = None,
    *,
    order: Sequence[str] = (),
) -> list[str]:
    """NetPIPE throughput and latency against message size: one simulated
    curve per label (rows with ``bytes``, ``np_mbps``, ``t_us``) and, per
    metric and label, published points (objects with ``bytes``,
    ``published`` and ``name``) as large crosses in the label's colour.
    ``order``: labels in the order their colours are given out."""
    import plotly.graph_objects as go

    if not curves:
        return []
    published = published or {}
    labels = list(dict.fromkeys([*order, *curves]))
    colour = {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}
    has_published = any(published.values())
    out = [
        "<h3>NetPIPE curves (simulated: lines"
        + ("; published: large ×, in the run's colour" if has_published else "")
        + ")</h3>"
    ]
    for metric, unit, title in (
        ("np_mbps", "throughput [NetPIPE Mbps = 2^20 bit/s]", "throughput against message size"),
        ("t_us", "latency [us, half a round trip]", "latency against message size"),
    ):
        fig = go.Figure()
        for i, (label, rows) in enumerate(curves.items()):
            fig.add_trace(
                go.Scatter(
                    x=[row["bytes"] for row in rows],
                    y=[row[metric] for row in rows],
                    mode="lines+markers",
                    name=f"simulated: {label}",
                    line={"color": colour[label], "dash": DASHES[i % len(DASHES)]},
                    marker={"size": 4, "symbol": MARKERS[i % len(MARKERS)]},
                )
            )
        for label, points in published.get(metric, {}).items():
            fig.add_trace(
                go.Scatter(
                    x=[c.bytes for c in points],
                    y=[c.published for c in points],
                    mode="markers",
                    name=f"published: {label}",
                    marker={
                        "symbol": "x",
                        "size": 13,
                        "color": colour.get(label, "black"),
                        "line": {"width": 1, "color": "black"},
                    },
                    text=[c.name for c in points],
                    hoverinfo="text+x+y",
                )
            )
        ticks = [4**k for k in range(13)]
        fig.update_xaxes(
            type="log",
            title_text="message size [bytes]",
            tickvals=ticks,
            ticktext=[bytes_label(t) for t in ticks],
        )
        fig.update_yaxes(title_text=unit, type="log" if metric == "t_us" else "linear")
        fig.update_layout(
            title=f"{name}: NetPIPE {title}",
            height=430,
            margin={"l": 60, "r": 20, "t": 50, "b": 50},
        )
        out.append(doc.plot(fig))
    return out


def _netpipe_curves(result: RunResult) -> dict[str, list[Mapping[str, Any]]]:
    """Per NetPIPE application of a run: its points."""
    return {
        str(app.get("app")): list(app["netpipe"])
        for app in result.summary.get("apps", [])
        if isinstance(app, Mapping) and app.get("netpipe")
    }


class _Styles:
    """One colour per host and per vector, the same in every subplot of a run.

    Vectors are also told apart by dash and by width, later ones thinner and
    drawn on top (so lines whose values coincide stay visible); a port's own
    series (its ring) take the style of its first vector; a host keeps its
    colour for all its CPU classes, which the dash tells apart.
    """

    def __init__(self, result: RunResult) -> None:
        vectors = result.vectors
        keys = [f"{p}.v{v}" for p, v in zip(vectors["port"], vectors["vector"], strict=True)]
        keys += [str(h) for h in result.hosts["host"]]
        self._index = {k: i for i, k in enumerate(dict.fromkeys(keys))}

    def __call__(self, entity: str, dash: str | None = None) -> dict[str, Any]:
        key = entity if entity in self._index else f"{entity}.v0"
        i = self._index.setdefault(key, len(self._index))
        # Later entities are drawn thinner on top: coinciding lines stay visible.
        return {
            "color": PALETTE[i % len(PALETTE)],
            "dash": dash or DASHES[i % len(DASHES)],
            "width": max(1.2, 3.5 - 0.8 * i),
        }


#: Dash of each CPU class (the host gives the colour).
_CPU_DASH = {"cpu_hardirq": "solid", "cpu_softirq": "dash", "cpu_app": "dot"}


def timeline(doc: Doc, result: RunResult, name: str) -> str:
    """Interrupt rate, throttle setting, ring occupancy and CPU against time.

    Each subplot has its own legend beside it; a subplot with nothing to draw
    is left out.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    section = result.report.get("timeseries") or {}
    t_ms = [t / 1e6 for t in section.get("t_ns", [])]
    series: dict[str, list[float | None]] = section.get("series", {})
    if not t_ms or not series:
        return '<p class="meta">no time series in this run</p>'
    style = _Styles(result)

    def busy(values: Sequence[float | None]) -> bool:
        return any(v for v in values if not tables.is_missing(v))

    def line(x: Sequence[float], y: Sequence[float | None], name: str, look: Any) -> Any:
        xs, ys = downsample(x, y)
        return go.Scatter(x=xs, y=rounded(ys), name=name, mode="lines", line=look)

    rows: dict[str, list[Any]] = {"rate": [], "throttle": [], "ring": [], "cpu": []}
    for key, values in series.items():
        entity, _, metric = key.rpartition("/")
        if metric == "interrupts_per_s" and busy(values):
            rows["rate"].append(line(t_ms, values, entity, style(entity)))
        elif metric == "throttle_interval_ns" and busy(
            series.get(f"{entity}/interrupts_per_s", [])
        ):
            rates = [1e9 / v if v else None for v in values]
            rows["throttle"].append(line(t_ms, rates, entity, style(entity) | {"shape": "hv"}))
        elif metric == "rx_ring_filled" and busy(values):
            rows["ring"].append(line(t_ms, values, entity, style(entity)))
        elif metric.startswith("cpu_") and busy(values):
            look = style(entity, _CPU_DASH.get(metric, "longdash"))
            rows["cpu"].append(line(t_ms, values, f"{entity} {metric[4:]}", look))
    decisions = 0
    for port in result.summary.get("ports", []):
        trace = [
            (t["t_ns"], rate)
            for t in port.get("moderation_trace") or []
            if (rate := decision_rate(t.get("values", {}))) is not None
        ]
        if trace:
            decisions += len(trace)
            rows["throttle"].append(
                go.Scatter(
                    x=[t_ns / 1e6 for t_ns, _ in trace],
                    y=[rate for _, rate in trace],
                    mode="markers",
                    marker={"symbol": "x", "size": 8, "color": style(port["port"])["color"]},
                    name=f"{port.get('port')} decisions",
                )
            )
    titles = {
        "rate": "interrupt rate per vector [1/s]",
        "throttle": "throttle setting as a rate [1/s] (1e9 / interval; a gap: no throttle)"
        + ("; × = the algorithm's decisions" if decisions else ""),
        "ring": "RX ring: descriptors filled and waiting",
        "cpu": "CPU per class [fraction of the host's cores]",
    }
    shown = [k for k, traces in rows.items() if traces]
    if not shown:
        return '<p class="meta">nothing moved in this run\'s time series</p>'
    fig = make_subplots(
        rows=len(shown),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.22 / len(shown),
        subplot_titles=[titles[k] for k in shown],
    )
    legends: dict[str, Any] = {}
    for row, key in enumerate(shown, start=1):
        legend = "legend" if row == 1 else f"legend{row}"
        drawn: list[float | None] = []
        # Thickest first: thinner lines are drawn on top of thicker ones.
        for trace in sorted(rows[key], key=lambda tr: -(tr.line.width or 0)):
            trace.legend = legend
            fig.add_trace(trace, row=row, col=1)
            drawn.extend(trace.y)
        fig.update_yaxes(y_axis(drawn), row=row, col=1)
        top = fig.get_subplot(row, 1).yaxis.domain[1]
        legends[legend] = {
            "x": 1.01,
            "xanchor": "left",
            "y": top,
            "yanchor": "top",
            "font": {"size": 11},
        }
    fig.update_xaxes(title_text="simulated time [ms]", row=len(shown), col=1)
    _change_markers(fig, result)
    fig.update_layout(
        title=f"{name}: timelines",
        height=120 + 230 * len(shown),
        margin={"l": 60, "r": 20, "t": 80, "b": 50},
        hovermode="x",
        **legends,
    )
    return doc.plot(fig)


def decision_rate(values: Mapping[str, Any]) -> float | None:
    """The throttle rate one moderation decision asks for [1/s]: the
    built-ins' ``rate_per_s``; else (Python and C moderators, whose trace
    rows are the register values they returned) the rate of the interval
    register written, ``itr_256ns`` as 1e9 / (v * 256 ns) or ``eitr_us`` as
    1e6 / v; None for a decision that writes no interval, or throttling off
    (0)."""
    if "rate_per_s" in values:
        return float(values["rate_per_s"])
    for key, unit_ns in (("itr_256ns", 256.0), ("eitr_us", 1000.0)):
        v = values.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool) and v > 0:
            return 1e9 / (float(v) * unit_ns)
    return None


def change_labels(result: RunResult) -> list[tuple[float, str]]:
    """(time [ms], label) of each instant with ``[[at]]`` changes, in time order;
    the label names each path by its last part: ``enable_aim = 2``."""
    labels: dict[float, list[str]] = {}
    for change in result.changes.to_dict("records"):
        short = str(change["path"]).rsplit(".", 1)[-1]
        labels.setdefault(float(change["t_ms"]), []).append(
            f"{short} = {tables.change_value(change['value'])}"
        )
    return [(t, ", ".join(parts)) for t, parts in labels.items()]


def _change_markers(fig: Any, result: RunResult) -> None:
    """A dotted vertical line through every subplot at each change, labelled
    inside the top of the first subplot, just right of the line."""
    top = fig.get_subplot(1, 1).yaxis.domain[1]
    for t_ms, label in change_labels(result):
        fig.add_shape(
            type="line",
            xref="x",
            x0=t_ms,
            x1=t_ms,
            yref="paper",
            y0=0,
            y1=1,
            line={"color": "#555", "width": 1, "dash": "dot"},
            name=f"change at {t_ms:g} ms",
        )
        fig.add_annotation(
            x=t_ms,
            xref="x",
            y=top,
            yref="paper",
            yanchor="top",
            xanchor="left",
            text=esc(label),
            showarrow=False,
            font={"size": 11},
            bgcolor="rgba(255,255,255,0.75)",
        )
