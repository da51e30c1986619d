"""One self-contained HTML report of runs, sweeps and reproduction cases.

The file carries its plotting library inline (no network access is needed to
open it) and has one section per input:

- a reproduction case: every published number against the simulated one with
  pass/MISS (misses are shown, never hidden), the NetPIPE throughput and
  latency curves with the published points, and each run's timelines;
- a sweep table: latency percentiles, throughput, CPU and interrupt rate
  against the swept load (or the first swept field), one line per setting of
  the other swept fields, and the table itself;
- a single run: its summary tables and timelines of interrupt rate, the
  throttle register (as a rate) with the moderation algorithm's decisions,
  RX ring occupancy and CPU time per class.

Inputs are given as objects (:func:`build_report`) or read from files
(:func:`load_inputs`: a run's ``report.json`` or its ``--out`` folder, a
sweep's Parquet table, or the JSON of ``holdoff reproduce --json``).
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from holdoff import _core
from holdoff.result import REPORT_FILE, RunResult

if TYPE_CHECKING:
    from holdoff.reproduce import CaseResult


class ReportInputError(ValueError):
    """A report input is missing or of an unknown kind."""


@dataclass
class ReportInputs:
    """What a report shows: run reports, sweep tables and reproduction cases."""

    runs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    sweeps: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    cases: list[Any] = field(default_factory=list)
    """:class:`~holdoff.reproduce.CaseResult` objects or dicts of ``reproduce --json``."""

    def __bool__(self) -> bool:
        return bool(self.runs or self.sweeps or self.cases)


def load_inputs(paths: Sequence[str | os.PathLike[str]]) -> ReportInputs:
    """Reads report inputs from files; the kind of each is recognised by its content.

    A folder holding ``report.json`` (``holdoff run --out``) or a report JSON
    file is a run; a ``.parquet`` file with ``point`` and ``scenario_hash``
    columns is a sweep table; a JSON file with ``cases`` is the output of
    ``holdoff reproduce --json`` (tables only: its NetPIPE curves need the
    runs, which ``holdoff reproduce --report`` has).
    """
    inputs = ReportInputs()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            if not (path / REPORT_FILE).is_file():
                raise ReportInputError(f"{path} is a folder without {REPORT_FILE}")
            path = path / REPORT_FILE
        if not path.is_file():
            raise FileNotFoundError(f"report input not found: {path}")
        if path.suffix == ".parquet":
            table = pd.read_parquet(path)
            if not {"point", "scenario_hash"} <= set(table.columns):
                raise ReportInputError(f"{path} is not a sweep table (no point/scenario_hash)")
            inputs.sweeps.append((path.stem, table))
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ReportInputError(
                f"{path} is neither a sweep table (.parquet) nor JSON: {err}"
            ) from err
        if isinstance(data, dict) and isinstance(data.get("cases"), list):
            inputs.cases.extend(data["cases"])
        elif isinstance(data, dict) and "summary" in data and "config" in data:
            label = path.parent.name if path.name == REPORT_FILE else path.stem
            inputs.runs.append((f"{data.get('scenario', label)} ({label})", data))
        else:
            raise ReportInputError(
                f"{path}: not a run report, a sweep table or `holdoff reproduce --json` output"
            )
    return inputs


def write_report(
    path: str | os.PathLike[str], inputs: ReportInputs, *, title: str = "holdoff report"
) -> Path:
    """Writes the HTML report of ``inputs`` to ``path`` atomically; returns the path."""
    target = Path(path)
    text = build_report(inputs, title=title)
    if target.parent != Path(""):
        target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def build_report(inputs: ReportInputs, *, title: str = "holdoff report") -> str:
    """The HTML text of the report (deterministic for the same inputs)."""
    import plotly.offline

    doc = _Doc()
    sections: list[str] = []
    toc: list[tuple[str, str]] = []
    for case in inputs.cases:
        anchor, body = _case_section(doc, case)
        sections.append(body)
        toc.append((anchor, _case_dict(case)["case"]))
    for name, table in inputs.sweeps:
        anchor = doc.anchor(f"sweep-{name}")
        sections.append(_sweep_section(doc, anchor, name, table))
        toc.append((anchor, f"sweep {name}"))
    for name, report in inputs.runs:
        anchor = doc.anchor(f"run-{name}")
        sections.append(_run_section(doc, anchor, name, report))
        toc.append((anchor, f"run {name}"))
    if not sections:
        sections.append("<p>Nothing to show: no runs, sweeps or cases were given.</p>")
    nav = "".join(f'<li><a href="#{_e(a)}">{_e(t)}</a></li>' for a, t in toc)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n"
        f'<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script>\n'
        "</head>\n<body>\n"
        f"<h1>{_e(title)}</h1>\n"
        f'<p class="meta">holdoff {_e(_core.version())}; opens offline (plots inline).</p>\n'
        f"{_overview(inputs)}"
        f"<nav><ul>{nav}</ul></nav>\n" + "\n".join(sections) + "\n</body>\n</html>\n"
    )


# -- document helpers ---------------------------------------------------------------


class _Doc:
    """Gives unique ids to anchors and plots, so the HTML is deterministic."""

    def __init__(self) -> None:
        self._anchors: set[str] = set()
        self._plots = 0

    def anchor(self, text: str) -> str:
        base = "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-") or "s"
        candidate, n = base, 1
        while candidate in self._anchors:
            n += 1
            candidate = f"{base}-{n}"
        self._anchors.add(candidate)
        return candidate

    def plot(self, fig: Any) -> str:
        self._plots += 1
        div: str = fig.to_html(
            full_html=False,
            include_plotlyjs=False,
            div_id=f"plot-{self._plots}",
            config={"displaylogo": False, "responsive": True},
        )
        return f'<div class="plot">{div}</div>'


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _int(value: Any) -> str:
    return "–" if _missing(value) else f"{round(float(value)):,}"


def _num(value: Any, digits: int = 2) -> str:
    return "–" if _missing(value) else f"{float(value):,.{digits}f}"


def _pct(value: Any) -> str:
    return "–" if _missing(value) else f"{100.0 * float(value):.1f} %"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], cls: str = "") -> str:
    """An HTML table; cells are already-escaped HTML, headers are escaped here."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    cls_attr = f' class="{cls}"' if cls else ""
    return f"<table{cls_attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# -- overview -------------------------------------------------------------------


def _overview(inputs: ReportInputs) -> str:
    items: list[str] = []
    for case in inputs.cases:
        data = _case_dict(case)
        checks = data["checks"]
        misses = [c for c in checks if not c["ok"]]
        verdict = (
            '<span class="pass">all pass</span>'
            if not misses
            else f'<span class="miss">{len(misses)} MISS</span>'
        )
        items.append(
            f"<li>case <b>{_e(data['case'])}</b>: {len(checks) - len(misses)} of "
            f"{len(checks)} checks pass, {verdict}</li>"
        )
    for name, table in inputs.sweeps:
        items.append(f"<li>sweep <b>{_e(name)}</b>: {len(table)} points</li>")
    for name, report in inputs.runs:
        ledger = report.get("summary", {}).get("ledger", {})
        state = "balanced" if ledger.get("balanced") else "NOT balanced"
        items.append(
            f"<li>run <b>{_e(name)}</b>: seed {_e(report.get('seed'))}, ledger {state}</li>"
        )
    return f'<ul class="overview">{"".join(items)}</ul>\n' if items else ""


# -- reproduction cases -------------------------------------------------------------


def _case_dict(case: Any) -> dict[str, Any]:
    if isinstance(case, Mapping):
        return dict(case)
    from holdoff import reproduce

    cases: list[dict[str, Any]] = reproduce.to_json([case])["cases"]
    return cases[0]


def _case_section(doc: _Doc, case: Any) -> tuple[str, str]:
    data = _case_dict(case)
    anchor = doc.anchor(f"case-{data['case']}")
    checks = data["checks"]
    misses = sum(1 for c in checks if not c["ok"])
    verdict = (
        f'<p class="verdict pass">all {len(checks)} checks pass</p>'
        if not misses
        else f'<p class="verdict miss">{misses} of {len(checks)} checks MISS the published '
        "value (beyond the tolerance); they are listed below with their notes</p>"
    )
    rows = []
    notes = []
    for i, c in enumerate(checks, start=1):
        sim = c.get("simulated")
        dev = None if sim is None or not c["published"] else (sim - c["published"]) / c["published"]
        result = '<span class="pass">pass</span>' if c["ok"] else '<span class="miss">MISS</span>'
        rows.append(
            [
                str(i),
                _e(c["name"]),
                _e(c.get("run", "")),
                f'<span class="num">{_num(c["published"])}</span>',
                f'<span class="num">{"n/a" if sim is None else _num(sim)}</span>',
                _e(c["unit"]),
                f"±{float(c['tolerance_rel']) * 100:.0f} %",
                "–" if dev is None else f"{dev * 100:+.1f} %",
                result,
            ]
        )
        source = f"<li>[{i}] {_e(c.get('source', ''))}"
        if c.get("note"):
            source += f'<br><span class="note">note: {_e(c["note"])}</span>'
        notes.append(source + "</li>")
    parts = [
        f'<section id="{_e(anchor)}" class="case">',
        f"<h2>Reproduction: {_e(data['case'])} — {_e(data.get('title', ''))}</h2>",
        f'<p class="meta">source: {_e(data.get("source", ""))}</p>',
        verdict,
        _table(
            [
                "#",
                "check",
                "run",
                "published",
                "simulated",
                "unit",
                "tolerance",
                "deviation",
                "result",
            ],
            rows,
            "checks",
        ),
        f'<ol class="sources">{"".join(notes)}</ol>',
    ]
    if isinstance(case, Mapping):
        parts.append(
            '<p class="meta">NetPIPE curves and timelines need the runs themselves: '
            "write this report with <code>holdoff reproduce --report FILE</code>.</p>"
        )
    else:
        parts.extend(_netpipe_plots(doc, case))
        for run in case.case.runs:
            run_result: RunResult = case.results[run.id]
            parts.append(f"<h3>Timelines: {_e(run.id)} — {_e(run.label)}</h3>")
            parts.append(_timeline(doc, run_result.report, f"{data['case']} / {run.label}"))
    parts.append("</section>")
    return anchor, "\n".join(parts)


def _netpipe_plots(doc: _Doc, case: CaseResult) -> list[str]:
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


def _bytes_label(n: int) -> str:
    for factor, suffix in ((2**20, " MiB"), (2**10, " KiB")):
        if n >= factor:
            return f"{n // factor}{suffix}"
    return f"{n} B"


# -- single runs --------------------------------------------------------------------


def _run_section(doc: _Doc, anchor: str, name: str, report: Mapping[str, Any]) -> str:
    summary = report.get("summary", {})
    ledger = summary.get("ledger", {})
    ports = [
        [
            _e(p.get("port")),
            _e(p.get("chip", "")),
            _e(p.get("moderation", "")),
            _int(p.get("rx_packets")),
            _int(p.get("tx_packets")),
            _int(p.get("interrupts")),
            ", ".join(
                f"v{v.get('vector')} {_int(v.get('interrupts_per_s'))}"
                for v in p.get("vectors", [])
            ),
            _int(p.get("rx_ring_max_occupancy")),
        ]
        for p in summary.get("ports", [])
    ]
    hosts = [
        [
            _e(h.get("host")),
            _e(h.get("profile")),
            _e(h.get("driver")),
            *(
                _pct((h.get("cpu_util") or {}).get(k))
                for k in ("hardirq", "softirq", "app", "busy")
            ),
        ]
        for h in summary.get("hosts", [])
    ]
    apps = [
        [
            _e(a.get("app")),
            _e(a.get("kind")),
            _int(a.get("received")),
            _num((a.get("throughput_bps") or 0.0) / 1e6),
            *(_num((a.get("latency_us") or {}).get(k), 1) for k in ("p50", "p99", "max")),
        ]
        for a in summary.get("apps", [])
    ]
    drops = {k: v for k, v in summary.get("drops", {}).items() if v}
    drop_text = ", ".join(f"{_e(k)} {_int(v)}" for k, v in drops.items()) or "none"
    balanced = (
        '<span class="pass">balanced</span>'
        if ledger.get("balanced")
        else '<span class="miss">NOT balanced</span>'
    )
    return "\n".join(
        [
            f'<section id="{_e(anchor)}" class="run">',
            f"<h2>Run: {_e(name)}</h2>",
            f'<p class="meta">scenario {_e(report.get("scenario"))}, '
            f"seed {_e(report.get('seed'))}, "
            f"simulated {_num(summary.get('sim_time_ns', 0) / 1e6, 3)} ms, "
            f"holdoff {_e(report.get('holdoff_version', ''))}</p>",
            _table(
                [
                    "port",
                    "chip",
                    "moderation",
                    "rx pkts",
                    "tx pkts",
                    "interrupts",
                    "int/s per vector",
                    "ring max",
                ],
                ports,
                "ports",
            ),
            _table(
                ["host", "profile", "driver", "hardirq", "softirq", "app", "busy"], hosts, "hosts"
            ),
            _table(["app", "kind", "received", "Mb/s", "p50 µs", "p99 µs", "max µs"], apps, "apps"),
            f"<p>drops: {drop_text}</p>",
            f"<p>ledger: {balanced}: injected {_int(ledger.get('injected'))} = delivered "
            f"{_int(ledger.get('delivered'))} + dropped {_int(ledger.get('dropped'))} + in flight "
            f"{_int(ledger.get('in_flight'))}</p>",
            _timeline(doc, report, name),
            "</section>",
        ]
    )


def _timeline(doc: _Doc, report: Mapping[str, Any], name: str) -> str:
    """Interrupt rate, throttle setting, ring occupancy and CPU against time."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    section = report.get("timeseries") or {}
    t_ms = [t / 1e6 for t in section.get("t_ns", [])]
    series: dict[str, list[float]] = section.get("series", {})
    if not t_ms or not series:
        return '<p class="meta">no time series in this run</p>'
    fig = make_subplots(
        rows=4,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        subplot_titles=(
            "interrupt rate per vector [1/s]",
            "throttle setting as a rate [1/s] (1e9 / interval); × = algorithm decisions",
            "RX ring: descriptors filled and waiting",
            "CPU per class [fraction of the host's cores]",
        ),
    )

    def busy(values: list[float]) -> bool:
        return any(v for v in values if not _missing(v))

    for key, values in series.items():
        entity, _, metric = key.rpartition("/")
        if metric == "interrupts_per_s" and busy(values):
            fig.add_trace(go.Scatter(x=t_ms, y=values, name=f"{entity} int/s"), row=1, col=1)
        elif metric == "throttle_interval_ns":
            rate_key = f"{entity}/interrupts_per_s"
            if not busy(series.get(rate_key, [])):
                continue
            rates = [1e9 / v if v else None for v in values]
            fig.add_trace(
                go.Scatter(x=t_ms, y=rates, name=f"{entity} throttle", line={"shape": "hv"}),
                row=2,
                col=1,
            )
        elif metric == "rx_ring_filled" and busy(values):
            fig.add_trace(go.Scatter(x=t_ms, y=values, name=f"{entity} ring"), row=3, col=1)
        elif metric.startswith("cpu_") and busy(values):
            fig.add_trace(go.Scatter(x=t_ms, y=values, name=f"{entity} {metric}"), row=4, col=1)
    for port in report.get("summary", {}).get("ports", []):
        trace = [
            t for t in port.get("moderation_trace") or [] if "rate_per_s" in t.get("values", {})
        ]
        if trace:
            fig.add_trace(
                go.Scatter(
                    x=[t["t_ns"] / 1e6 for t in trace],
                    y=[t["values"]["rate_per_s"] for t in trace],
                    mode="markers",
                    marker={"symbol": "x", "size": 9},
                    name=f"{port.get('port')} decided rate",
                ),
                row=2,
                col=1,
            )
    fig.update_xaxes(title_text="simulated time [ms]", row=4, col=1)
    fig.update_layout(
        title=f"{name}: timelines", height=950, margin={"l": 60, "r": 20, "t": 80, "b": 50}
    )
    return doc.plot(fig)


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


def _sweep_section(doc: _Doc, anchor: str, name: str, table: pd.DataFrame) -> str:
    from holdoff.sweeps import param_columns

    params = param_columns(table)
    varying = [p for p in params if table[p].nunique(dropna=False) > 1]
    numeric = [p for p in varying if pd.api.types.is_numeric_dtype(table[p])]
    x_col = numeric[-1] if numeric else (varying[-1] if varying else "point")
    groups = [p for p in varying if p != x_col]
    parts = [
        f'<section id="{_e(anchor)}" class="sweep">',
        f"<h2>Sweep: {_e(name)}</h2>",
        f'<p class="meta">{len(table)} points; swept: '
        + (", ".join(f"<code>{_e(p)}</code>" for p in params) or "nothing")
        + f"; x axis <code>{_e(x_col)}</code>"
        + (
            "; one line per " + " × ".join(f"<code>{_e(g)}</code>" for g in groups)
            if groups
            else ""
        )
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
                constant.append(f"<code>{_e(col)}</code> = {_num(values.iloc[0])}")
                continue
            parts.append(_sweep_plot(doc, table, x_col, groups, col, unit))
    parts.append("</div>")
    if constant:
        parts.append(f'<p class="meta">the same at every point: {", ".join(constant)}</p>')
    parts.append(_sweep_table(table, params))
    parts.append("</section>")
    return "\n".join(parts)


def _sweep_plot(
    doc: _Doc, table: pd.DataFrame, x_col: str, groups: list[str], col: str, unit: str
) -> str:
    import plotly.graph_objects as go

    frame = table[[x_col, *groups, col]].copy()
    frame[col] = pd.to_numeric(frame[col], errors="coerce")
    fig = go.Figure()
    keyed = (
        [
            (_group_label(groups, key), sub)
            for key, sub in frame.groupby(groups, sort=False, dropna=False)
        ]
        if groups
        else [("all points", frame)]
    )
    for label, sub in keyed:
        mean = sub.groupby(x_col, sort=True, dropna=False)[col].mean()
        fig.add_trace(
            go.Scatter(x=list(mean.index), y=list(mean.values), mode="lines+markers", name=label)
        )
    fig.update_layout(
        title={"text": col, "font": {"size": 14}},
        height=420,
        margin={"l": 60, "r": 10, "t": 40, "b": 40},
        legend={"font": {"size": 10}, "orientation": "h", "y": -0.25},
    )
    fig.update_xaxes(title_text=x_col)
    fig.update_yaxes(title_text=unit)
    return doc.plot(fig)


def _group_label(groups: list[str], key: Any) -> str:
    values = key if isinstance(key, tuple) else (key,)
    if len(groups) == 1:
        return str(values[0])
    return " | ".join(f"{g}={v}" for g, v in zip(groups, values, strict=True))


def _sweep_table(table: pd.DataFrame, params: list[str], limit: int = 500) -> str:
    cols = ["point", "replicate", *params, "seed"] + [c for c in _SWEEP_TOTALS if c in table]
    rows = []
    for record in table[cols].head(limit).to_dict("records"):
        row = []
        for c in cols:
            value = record[c]
            if c == "cpu_util_busy_max":
                row.append(_pct(value))
            elif isinstance(value, float):
                row.append(_num(value))
            elif isinstance(value, int) and not isinstance(value, bool) and c != "seed":
                row.append(_int(value))
            else:
                row.append(_e(value))
        rows.append(row)
    more = f'<p class="meta">first {limit} of {len(table)} rows</p>' if len(table) > limit else ""
    return _table(cols, rows, "sweep-table") + more


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto;
       max-width: 1280px; padding: 0 16px; color: #1d1d1f; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: 4px; margin-top: 2em; }
table { border-collapse: collapse; margin: 10px 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f2f2f2; } td:first-child, th:first-child { text-align: left; }
table.checks td:nth-child(2) { text-align: left; }
.pass { color: #116611; font-weight: 600; }
.miss { color: #b00020; font-weight: 700; }
p.verdict { font-size: 1.1em; } p.verdict.miss { background: #fde8ea; padding: 6px 10px; }
p.verdict.pass { background: #e6f4e6; padding: 6px 10px; }
.meta { color: #555; font-size: 0.9em; } .note { color: #555; font-size: 0.9em; }
ol.sources { font-size: 0.85em; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 8px; }
.plot { margin: 8px 0; }
nav ul { columns: 2; }
"""
