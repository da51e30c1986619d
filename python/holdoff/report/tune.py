"""The tune section of the HTML report: what of the capture was simulated,
whether the default meets the objective, every setting tried on the latency
(or throughput) / CPU plane with 95 % intervals as error bars, the front, the
driver default and the choice marked, the front as a table (mean ± half the
interval), what the change buys and needs, and only the lines that change.

Simplifies: draws what ``holdoff tune --json`` holds; computes nothing.
Units: latency [us], CPU [%], throughput [Mb/s].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from holdoff.report.page import Doc, esc, fold, table_html


def _tune_point_label(point: Mapping[str, Any]) -> str:
    changed = point.get("changed") or {}
    return ", ".join(f"{k}={v}" for k, v in changed.items()) or "driver defaults"


def _fmt(value: Any, fmt: str, scale: float = 1.0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return fmt.format(float(value) * scale)


def _pm(p: Mapping[str, Any], key: str, fmt: str, scale: float = 1.0) -> str:
    """``mean ± half the 95 % interval`` (just the mean for one seed)."""
    text = _fmt(p.get(key), fmt, scale)
    ci = p.get(f"{key}_ci95")
    if ci and text != "-" and int(p.get("seeds") or 1) > 1:
        text += " ± " + fmt.format((float(ci[1]) - float(ci[0])) / 2 * scale)
    return text


def _bars(pts: Sequence[Mapping[str, Any]], key: str, scale: float) -> dict[str, Any] | None:
    """Plotly error bars from each point's ``key_ci95`` (None without intervals)."""
    plus, minus = [], []
    for p in pts:
        v, ci = p.get(key), p.get(f"{key}_ci95")
        if v is None or not ci:
            plus.append(0.0)
            minus.append(0.0)
            continue
        plus.append(max(0.0, (float(ci[1]) - float(v)) * scale))
        minus.append(max(0.0, (float(v) - float(ci[0])) * scale))
    if not any(plus) and not any(minus):
        return None
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus}


def same_as_default(p: Mapping[str, Any], default: Mapping[str, Any]) -> bool:
    """Whether a point is the driver's default setting."""
    return bool(p.get("settings") == default.get("settings"))


def tune_section(doc: Doc, anchor: str, tune: Mapping[str, Any]) -> str:
    """A tune: the latency/CPU plane of every setting tried, the front, the
    driver default and the choice marked; the front as a table; the lines
    to paste."""
    import plotly.graph_objects as go

    points = list(tune.get("points") or [])
    front = list(tune.get("front") or [])
    default = tune.get("default") or {}
    rec = tune.get("recommended")
    has_latency = any(p.get("p99_us") is not None for p in points)
    y_key, y_title = (
        ("p99_us", "p99 latency [us]")
        if has_latency
        else (
            "throughput_bps",
            "throughput [Mb/s]",
        )
    )
    y_scale = 1.0 if has_latency else 1e-6

    def trace(pts: Sequence[Mapping[str, Any]], name: str, **style: Any) -> Any:
        """One group of settings on the latency (or throughput) / CPU plane."""
        bars = {}
        ex, ey = _bars(pts, "cpu_util", 100), _bars(pts, y_key, y_scale)
        if ex is not None:
            bars["error_x"] = {**ex, "thickness": 1}
        if ey is not None:
            bars["error_y"] = {**ey, "thickness": 1}
        return go.Scatter(
            x=[None if p.get("cpu_util") is None else p["cpu_util"] * 100 for p in pts],
            y=[None if p.get(y_key) is None else p[y_key] * y_scale for p in pts],
            name=name,
            **bars,
            text=[_tune_point_label(p) for p in pts],
            hovertemplate="%{text}<br>CPU %{x:.2f} %<br>%{y:.1f}<extra></extra>",
            **{"mode": "markers", **style},
        )

    fig = go.Figure()
    fig.add_trace(trace(points, "settings tried", marker={"color": "#B0B0B0", "size": 6}))
    fig.add_trace(
        trace(
            list(tune.get("front_2d") or front),
            "Pareto front",
            mode="lines+markers",
            line={"color": "#2E91E5", "shape": "hv"},
            marker={"color": "#2E91E5", "size": 9},
        )
    )
    fig.add_trace(
        trace([default], "driver default", marker={"color": "#222A2A", "size": 15, "symbol": "x"})
    )
    if rec:
        fig.add_trace(
            trace([rec], "recommended", marker={"color": "#1CA71C", "size": 16, "symbol": "star"})
        )
    alt = tune.get("alternative")
    if alt:
        fig.add_trace(trace([alt], "a trade (not chosen)", marker={"color": "#FB8C00", "size": 13}))
    fig.update_layout(
        title={"text": f"{tune.get('driver')} on {tune.get('workload')}: {y_title} against CPU"},
        xaxis={"title": {"text": "CPU busy [% of the tuned host's cores]"}, "rangemode": "tozero"},
        yaxis={"title": {"text": y_title}, "rangemode": "tozero"},
        height=460,
    )
    header = [
        "setting",
        "mode",
        "p50 [us]",
        "p99 [us]",
        "CPU [%]",
        "interrupts/s",
        "throughput [Mb/s]",
        "drops",
    ]

    header.insert(2, "applies")

    def row(p: Mapping[str, Any], mark: str = "") -> list[str]:
        return [
            esc(mark + _tune_point_label(p)),
            esc(p.get("mode", "")),
            esc(p.get("needs") or "at once"),
            esc(_pm(p, "p50_us", "{:.1f}")),
            esc(_pm(p, "p99_us", "{:.1f}")),
            esc(_pm(p, "cpu_util", "{:.2f}", 100)),
            esc(_pm(p, "interrupts_per_s", "{:,.0f}")),
            esc(_pm(p, "throughput_bps", "{:.2f}", 1e-6)),
            esc(_pm(p, "drops", "{:g}")),
        ]

    compare = (
        [row(default, "default: ")]
        + ([row(rec, "recommended: ")] if rec and not same_as_default(rec, default) else [])
        + ([row(alt, "a trade: ")] if alt else [])
    )
    front_rows = [row(p) for p in front]
    from holdoff.tune import view

    same = rec is not None and same_as_default(rec, default)
    if rec is None:
        commands = f'<p class="miss">{esc(tune.get("reason", ""))}</p>'
    elif same:
        commands = "<p>Nothing to change: the driver's default is the recommendation.</p>"
        if alt:
            commands += (
                "<p>A trade on the front (its point nearest the ideal corner of p99 and "
                f"CPU): against the default it {esc(tune.get('alternative_difference') or '')}"
                ".</p><p>To take that trade instead:</p>"
                '<pre class="commands">'
                + esc("\n".join(tune.get("alternative_paste") or []))
                + "</pre>"
            )
    else:
        lines = tune.get("paste")
        if lines is None:  # a tune written before the paste block
            lines = rec.get("commands", [])
        commands = (
            (
                f"<p>Against the default it {esc(tune['difference'])}.</p>"
                if tune.get("difference")
                else ""
            )
            + (f"<p>Applying it needs {esc(tune['needs'])}.</p>" if tune.get("needs") else "")
            + (f"<p>Note: {esc(tune['iface_note'])}.</p>" if tune.get("iface_note") else "")
            + "<p>Paste (only what changes from the current setting):</p>"
            + '<pre class="commands">'
            + esc("\n".join(lines))
            + "</pre>"
            + _forms_html(tune.get("persistent") or [])
        )
    try:
        head = view.header_lines(tune)[1:]
    except (KeyError, TypeError):  # a tune written before these fields
        head = []
    notes = list(tune.get("not_searched") or []) + list(tune.get("notes") or [])
    notes_html = "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>" if notes else ""
    body = (
        f"<p>Workload: {esc(tune.get('workload_description') or tune.get('workload'))}; chip "
        f"{esc(tune.get('chip'))}; objective <b>{esc(tune.get('objective'))}</b>; search "
        f"{esc(tune.get('search'))}, {esc(tune.get('evaluated'))} distinct settings run.</p>"
        + "".join(f'<p class="tune-head">{esc(line)}</p>' for line in head)
        + f"<p>{esc(tune.get('reason', ''))}</p>"
        + commands
        + table_html(header, compare, cls="tune-compare")
        + doc.plot(fig)
        + fold(
            f"Pareto front of p99, CPU, interrupt rate and throughput ({len(front)} points)",
            table_html(header, front_rows, cls="tune-front"),
            open_=False,
        )
        + notes_html
    )
    return (
        f'<section id="{esc(anchor)}" class="tune">'
        + fold(f"tune: {tune.get('driver')} on {tune.get('workload')}", body)
        + "</section>"
    )


def _forms_html(forms: list[dict[str, Any]]) -> str:
    """The persistent forms: where each goes, what it needs and leaves out, its
    text and its note (what it matches on, what else to know)."""
    if not forms:
        return ""
    out = ["<p>To keep it after a reboot (one of these, for your system):</p>"]
    for f in forms:
        where = f" &rarr; <code>{esc(f['path'])}</code>" if f.get("path") else ""
        left = f.get("left_out") or []
        without = f"; <b>leaves out {esc(', '.join(left))}</b>" if left else ""
        out.append(
            f'<p class="form">{esc(f["kind"])}{where}; needs {esc(f["needs"])}{without}</p>'
            f'<pre class="commands">{esc(str(f["text"]).rstrip())}</pre>'
        )
        if f.get("note"):
            out.append(f'<p class="note">{esc(f["note"])}</p>')
    return "".join(out)
