"""One self-contained HTML report of runs, sweeps and reproduction cases.

The file carries its plotting library once, gzip-compressed and inline (no
network access is needed to open it; the browser unpacks it with its own
``DecompressionStream``), and has one folding section per input:

- a reproduction case: every published number against the simulated one with
  pass/MISS (misses are shown, never hidden), the NetPIPE throughput and
  latency curves with the published points, and each run's timelines
  (folded);
- a sweep table: latency percentiles, throughput, CPU and interrupt rate
  against the swept load (or the first swept field), one line per setting of
  the other swept fields (a legend titled with the field's short name, lines
  told apart by dash and marker), and the table itself in a scrolling box;
- a single run: its warnings first, the tables of the terminal summary (the
  same :mod:`holdoff.tables`, built from the run's DataFrames) and timelines
  of interrupt rate, the throttle register (as a rate) with the moderation
  algorithm's decisions, RX ring occupancy and CPU time per class.

Plots keep a reader's eye honest: each timeline subplot has its own legend,
a host or vector keeps one colour in every subplot, axes of non-negative
quantities start at zero (so a flat 8000/s throttle does not look like it
moves), and series longer than :data:`MAX_POINTS` are reduced to the minimum
and maximum of each bucket (spikes survive). A plot is drawn when its section
is open.

Inputs are given as objects (:func:`build_report`) or read from files
(:func:`load_inputs`: a run's ``report.json`` or its ``--out`` folder, a
sweep's Parquet table, or the JSON of ``holdoff reproduce --json``).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import gzip
import html
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from holdoff import _core, tables
from holdoff.result import REPORT_FILE, RunResult

if TYPE_CHECKING:
    from holdoff.reproduce import CaseResult

#: Most points drawn per line; longer series keep each bucket's minimum and maximum.
MAX_POINTS = 2000
#: Colours of hosts and vectors, given out in order (no repeat below 24 entities).
PALETTE = (
    "#2E91E5", "#E15F99", "#1CA71C", "#FB0D0D", "#DA16FF", "#222A2A", "#B68100", "#750D86",
    "#EB663B", "#511CFB", "#00A08B", "#FB00D1", "#FC0080", "#B2828D", "#6C7C32", "#778AAE",
    "#862A16", "#A777F1", "#620042", "#1616A7", "#DA60CA", "#6C4516", "#0D2A63", "#AF0038",
)  # fmt: skip
#: Line styles and markers that tell apart sweep lines whose values coincide.
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
MARKERS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross", "triangle-down")


class ReportInputError(ValueError):
    """A report input is missing or of an unknown kind."""


@dataclass
class ReportInputs:
    """What a report shows: run reports, sweep tables and reproduction cases."""

    runs: list[tuple[str, RunResult | Mapping[str, Any]]] = field(default_factory=list)
    """Runs by name: :class:`~holdoff.result.RunResult` objects or parsed report dicts."""
    sweeps: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    cases: list[Any] = field(default_factory=list)
    """:class:`~holdoff.reproduce.CaseResult` objects or dicts of ``reproduce --json``."""
    tunes: list[Mapping[str, Any]] = field(default_factory=list)
    """Tune results: the dicts of ``holdoff tune --json``."""

    def __bool__(self) -> bool:
        return bool(self.runs or self.sweeps or self.cases or self.tunes)


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
            text = path.read_text(encoding="utf-8")
            data = json.loads(text)
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ReportInputError(
                f"{path} is neither a sweep table (.parquet) nor JSON: {err}"
            ) from err
        if isinstance(data, dict) and isinstance(data.get("cases"), list):
            inputs.cases.extend(data["cases"])
        elif isinstance(data, dict) and {"recommended", "default", "front"} <= set(data):
            inputs.tunes.append(data)
        elif isinstance(data, dict) and "summary" in data and "config" in data:
            label = path.parent.name if path.name == REPORT_FILE else path.stem
            inputs.runs.append((f"{data.get('scenario', label)} ({label})", RunResult(text, {})))
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
    from holdoff import reproduce

    doc = _Doc()
    cases = [_as_case(case) for case in inputs.cases]
    sections: list[str] = []
    overview: list[str] = []  # one line per section, linking to it
    for case in cases:
        anchor = doc.anchor(f"case-{case.case.id}")
        sections.append(_case_section(doc, anchor, case))
        misses = reproduce.misses(case)
        verdict = f'<span class="miss">{misses} MISS</span>' if misses else _PASS_ALL
        overview.append(
            f"case {_link(anchor, case.case.id)}: {_e(reproduce.case_score(case))}, {verdict}"
            + _warned(w for r in case.results.values() for w in r.warnings)
        )
    for tune in inputs.tunes:
        anchor = doc.anchor(f"tune-{tune.get('driver', '')}-{tune.get('workload', '')}")
        sections.append(_tune_section(doc, anchor, tune))
        rec = tune.get("recommended")
        choice = (
            "; ".join(rec.get("commands", [])) if rec else '<span class="miss">no setting</span>'
        )
        overview.append(
            f"tune {_link(anchor, str(tune.get('driver')))} on {_e(tune.get('workload'))} "
            f"({_e(tune.get('objective'))}): {choice if not rec else _e(choice)}"
        )
    for name, table in inputs.sweeps:
        anchor = doc.anchor(f"sweep-{name}")
        sections.append(_sweep_section(doc, anchor, name, table))
        overview.append(f"sweep {_link(anchor, name)}: {len(table)} points")
    for name, run in inputs.runs:
        result = _as_result(run)
        anchor = doc.anchor(f"run-{name}")
        sections.append(_run_section(doc, anchor, name, result))
        state = "balanced" if result.ledger.get("balanced") else "NOT balanced"
        overview.append(
            f"run {_link(anchor, name)}: seed {_e(result.seed)}, ledger {state}"
            + _warned(result.warnings)
        )
    if not sections:
        sections.append("<p>Nothing to show: no runs, sweeps or cases were given.</p>")
    score = f'<p class="score">{_e(reproduce.score_line(cases))}</p>\n' if len(cases) > 1 else ""
    items = "".join(f"<li>{item}</li>" for item in overview)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n"
        "</head>\n<body>\n"
        f"<h1>{_e(title)}</h1>\n"
        f'<p class="meta">holdoff {_e(_core.version())}; opens offline (plots inline); '
        "click a heading to fold or unfold its section.</p>\n"
        f"{score}"
        + (f'<nav><ul class="overview">{items}</ul></nav>\n' if items else "")
        + "\n".join(sections)
        + "\n"
        + doc.scripts()
        + "</body>\n</html>\n"
    )


_PASS_ALL = '<span class="pass">all pass</span>'


def _link(anchor: str, text: str) -> str:
    return f'<a href="#{_e(anchor)}"><b>{_e(text)}</b></a>'


def _warned(warnings: Iterable[Mapping[str, Any]]) -> str:
    n = sum(1 for _ in warnings)
    return f', <span class="warn">{n} warning{"s" if n > 1 else ""}</span>' if n else ""


def _as_result(run: RunResult | Mapping[str, Any]) -> RunResult:
    return run if isinstance(run, RunResult) else RunResult.from_report(run)


# -- document helpers ---------------------------------------------------------------


class _Doc:
    """Gives unique ids to anchors and plots (so the HTML is deterministic) and
    carries the plotting library and the figures' shared template once."""

    def __init__(self) -> None:
        self._anchors: set[str] = set()
        self._figures: dict[str, Any] = {}

    def anchor(self, text: str) -> str:
        base = "".join(c if c.isalnum() or c in "-_" else "-" for c in text).strip("-") or "s"
        candidate, n = base, 1
        while candidate in self._anchors:
            n += 1
            candidate = f"{base}-{n}"
        self._anchors.add(candidate)
        return candidate

    def plot(self, fig: Any) -> str:
        """A placeholder; the page's script draws the figure there when it is shown."""
        import plotly.io as pio

        plot_id = f"plot-{len(self._figures) + 1}"
        fig.update_layout(template=None)
        figure = json.loads(pio.to_json(fig, validate=False, remove_uids=True))
        figure["layout"].pop("template", None)
        self._figures[plot_id] = figure
        label = fig.layout.title.text or ""
        return f'<div class="plot" id="{plot_id}" role="figure" aria-label="{_e(label)}"></div>'

    def scripts(self) -> str:
        """The plotting library, the figures with their shared template (both
        gzip-compressed) and the drawing script; nothing when there is no plot."""
        if not self._figures:
            return ""
        import plotly.io as pio

        template = pio.templates[pio.templates.default].to_plotly_json()
        figures = json.dumps(
            {"template": template, "figures": self._figures}, separators=(",", ":")
        )
        return (
            _packed_script("plotly-gz", _plotly_gz())
            + _packed_script("figures-gz", _pack(figures))
            + f"<script>{_DRAW_JS}</script>\n"
        )


def _pack(text: str) -> str:
    """gzip (mtime 0: the same bytes every time), then base64."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), 9, mtime=0)).decode("ascii")


@functools.cache
def _plotly_gz() -> str:
    """plotly.js, packed once per process."""
    import plotly.offline

    return _pack(plotly.offline.get_plotlyjs())


def _packed_script(element_id: str, packed: str) -> str:
    return f'<script type="application/octet-stream" id="{element_id}">{packed}</script>\n'


#: Unpacks plotly.js and the figures, then draws every plot whose section is
#: open, and the plots of a section when it is unfolded.
_DRAW_JS = """
(function () {
  async function unpack(id) {
    var packed = atob(document.getElementById(id).textContent);
    var bytes = new Uint8Array(packed.length);
    for (var i = 0; i < packed.length; i++) bytes[i] = packed.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return await new Response(stream).text();
  }
  function draw(data) {
    document.querySelectorAll('div.plot').forEach(function (el) {
      if (el.dataset.drawn || el.closest('details:not([open])')) return;
      el.dataset.drawn = '1';
      var fig = data.figures[el.id];
      fig.layout.template = data.template;
      Plotly.newPlot(el, fig.data, fig.layout, {displaylogo: false, responsive: true});
    });
  }
  Promise.all([unpack('plotly-gz'), unpack('figures-gz')]).then(function (texts) {
    var script = document.createElement('script');
    script.textContent = texts[0];
    document.head.appendChild(script);
    var data = JSON.parse(texts[1]);
    draw(data);
    document.querySelectorAll('details').forEach(function (d) {
      d.addEventListener('toggle', function () { if (d.open) draw(data); });
    });
  }).catch(function (err) {
    var p = document.createElement('p');
    p.className = 'miss';
    p.textContent = 'The plots could not be drawn: ' + err;
    document.body.insertBefore(p, document.body.firstChild);
  });
})();
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _lines(value: str) -> str:
    """Escaped text whose line breaks are kept."""
    return "<br>".join(_e(line) for line in value.split("\n"))


def _table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    cls: str = "",
    left: Iterable[int] = (0,),
) -> str:
    """An HTML table; cells are already-escaped HTML, headers are escaped here.

    Columns ``left`` (names) are left-aligned, the others (numbers) right-aligned.
    """
    align = set(left)

    def cell(tag: str, i: int, content: str) -> str:
        return f'<{tag} class="l">{content}</{tag}>' if i in align else f"<{tag}>{content}</{tag}>"

    head = "".join(cell("th", i, _lines(h)) for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in rows
    )
    cls_attr = f' class="{cls}"' if cls else ""
    return f"<table{cls_attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_table(table: tables.Table) -> str:
    """A table of :mod:`holdoff.tables`, with its title and note."""
    rows = [[_lines(cell) for cell in row] for row in table.rows]
    left = [i for i, column in enumerate(table.columns) if column.label]
    note = f'<p class="meta">{_e(table.note)}</p>' if table.note else ""
    return f"<h3>{_e(table.title)}</h3>" + _table(table.headers, rows, table.name, left) + note


def _fold(summary: str, body: str, *, open_: bool = True, cls: str = "") -> str:
    """A section that folds: ``summary`` is its always-visible heading (HTML)."""
    attrs = (" open" if open_ else "") + (f' class="{cls}"' if cls else "")
    return f"<details{attrs}><summary>{summary}</summary>\n{body}\n</details>"


def _warnings_block(warnings: Iterable[tuple[str, str, str]]) -> str:
    """Warnings as (where, field, message); nothing when there are none."""
    items = [
        f"<li>{_e(where) + ': ' if where else ''}<code>{_e(f)}</code>: {_e(m)}</li>"
        for where, f, m in warnings
    ]
    if not items:
        return ""
    return (
        f'<div class="warnings"><b>{len(items)} warning{"s" if len(items) > 1 else ""}: '
        f"configured values not in effect as written</b><ul>{''.join(items)}</ul></div>"
    )


# -- reproduction cases -------------------------------------------------------------


def _as_case(case: Any) -> CaseResult:
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


def _case_section(doc: _Doc, anchor: str, case: CaseResult) -> str:
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
                _e(c.name) + (f' <span class="note">[note {ref}]</span>' if ref else ""),
                _e(c.run),
                f'<span class="num">{_e(reproduce.expected_number(c))}</span>',
                f'<span class="num">{_e(reproduce.display_number(c.simulated, c.unit))}</span>',
                _e(reproduce.display_unit(c.unit)),
                _e(reproduce.tolerance_text(c)),
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
        f'<p class="meta">source: {_e(case.case.source)}</p>',
        _warnings_block(warnings),
        verdict,
        _table(
            ["#", "check", "run", "published", "simulated", "unit", "tolerance", "deviation"]
            + ["result"],
            rows,
            "checks",
            left=(0, 1, 2),
        ),
        '<p class="meta">sources of the published values:</p>'
        + f'<ol class="sources">{"".join(f"<li>{_e(c.source)}</li>" for c in checks)}</ol>',
    ]
    if notes:
        parts.append(
            '<p class="meta">notes:</p><ol class="sources">'
            + "".join(f'<li class="note">{_e(n)}</li>' for n in notes)
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
            timeline = _timeline(doc, case.results[run.id], f"{case.case.id} / {run.label}")
            parts.append(_fold(f"Timelines: {_e(run.id)} — {_e(run.label)}", timeline, open_=False))
    heading = f"<h2>Reproduction: {_e(case.case.id)} — {_e(case.case.title)}</h2>"
    body = _fold(heading, "\n".join(p for p in parts if p))
    return f'<section id="{_e(anchor)}" class="case">{body}</section>'


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


def _load_curves(doc: _Doc, case: CaseResult) -> list[str]:
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
        out.append(f"<h3>{_e(name)} (simulated)</h3>")
        out.append(doc.plot(fig))
    return out


def _bytes_label(n: int) -> str:
    for factor, suffix in ((2**20, " MiB"), (2**10, " KiB")):
        if n >= factor:
            return f"{n // factor}{suffix}"
    return f"{n} B"


# -- single runs --------------------------------------------------------------------


def _run_section(doc: _Doc, anchor: str, name: str, result: RunResult) -> str:
    ledger = result.ledger
    balanced = (
        '<span class="pass">balanced</span>'
        if ledger.get("balanced")
        else '<span class="miss">NOT balanced</span>'
    )
    identity = ", ".join(f"{label} {value}" for label, value in tables.header_text(result))
    parts = [
        f'<p class="meta">{_e(identity)}</p>',
        _warnings_block(("", f, m) for f, m in tables.warning_lines(result.warnings)),
        *(_html_table(table) for table in tables.run_tables(result)),
        f"<p>drops: {_e(tables.drops_text(result.drops))}</p>",
        f"<p>ledger: {balanced}: {_e(tables.ledger_text(ledger))}</p>",
        _timeline(doc, result, name),
    ]
    body = _fold(f"<h2>Run: {_e(name)}</h2>", "\n".join(p for p in parts if p))
    return f'<section id="{_e(anchor)}" class="run">{body}</section>'


def downsample(
    x: Sequence[float], y: Sequence[float | None], limit: int = MAX_POINTS
) -> tuple[list[float], list[float | None]]:
    """At most about ``limit`` points: per bucket of samples, its minimum and its
    maximum in time order (a spike survives; a gap, None, is kept as one)."""
    if len(x) <= limit:
        return list(x), list(y)
    size = math.ceil(2 * len(x) / limit)
    xs: list[float] = []
    ys: list[float | None] = []
    for start in range(0, len(x), size):
        bucket = [
            (i, float(v))
            for i in range(start, min(start + size, len(x)))
            if (v := y[i]) is not None and not tables.is_missing(v)
        ]
        if not bucket:
            xs.append(x[start])
            ys.append(None)
            continue
        low = min(bucket, key=lambda iv: iv[1])
        high = max(bucket, key=lambda iv: iv[1])
        for i, v in sorted({low, high}):
            xs.append(x[i])
            ys.append(v)
    return xs, ys


def _rounded(values: Iterable[float | None], digits: int = 5) -> list[float | None]:
    """Values to ``digits`` significant digits: what a plot can show, in fewer bytes."""
    return [None if v is None else float(f"{v:.{digits}g}") for v in values]


def y_axis(values: Iterable[float | None], *, log_ratio: float | None = None) -> dict[str, Any]:
    """Axis settings that do not magnify a flat signal.

    A non-negative quantity starts at zero (a static 8000/s stays a flat line
    at 8000, not noise between 8004 and 8005.5); one that spans more than
    ``log_ratio`` (max/min, all positive) is drawn on a log axis; any other
    whose range is under 10 % of its level is padded to ±10 % of the level.
    """
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite:
        return {}
    low, high = min(finite), max(finite)
    if log_ratio is not None and low > 0 and high / low >= log_ratio:
        return {"type": "log", "dtick": 1}
    if low >= 0:
        return {"rangemode": "tozero"}
    level = max(abs(low), abs(high))
    if high - low < 0.1 * level:
        return {"range": [low - 0.1 * level, high + 0.1 * level]}
    return {}


class _Styles:
    """One colour per host and per vector, the same in every subplot of a run.

    Vectors are also told apart by dash (so lines whose values coincide stay
    visible); a port's own series (its ring) take the style of its first
    vector; a host keeps its colour for all its CPU classes, which the dash
    tells apart.
    """

    def __init__(self, result: RunResult) -> None:
        vectors = result.vectors
        keys = [f"{p}.v{v}" for p, v in zip(vectors["port"], vectors["vector"], strict=True)]
        keys += [str(h) for h in result.hosts["host"]]
        self._index = {k: i for i, k in enumerate(dict.fromkeys(keys))}

    def __call__(self, entity: str, dash: str | None = None) -> dict[str, str]:
        key = entity if entity in self._index else f"{entity}.v0"
        i = self._index.setdefault(key, len(self._index))
        return {"color": PALETTE[i % len(PALETTE)], "dash": dash or DASHES[i % len(DASHES)]}


#: Dash of each CPU class (the host gives the colour).
_CPU_DASH = {"cpu_hardirq": "solid", "cpu_softirq": "dash", "cpu_app": "dot"}


def _timeline(doc: _Doc, result: RunResult, name: str) -> str:
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
        return go.Scatter(x=xs, y=_rounded(ys), name=name, mode="lines", line=look)

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
            t for t in port.get("moderation_trace") or [] if "rate_per_s" in t.get("values", {})
        ]
        if trace:
            decisions += len(trace)
            rows["throttle"].append(
                go.Scatter(
                    x=[t["t_ns"] / 1e6 for t in trace],
                    y=[t["values"]["rate_per_s"] for t in trace],
                    mode="markers",
                    marker={"symbol": "x", "size": 8, "color": style(port["port"])["color"]},
                    name=f"{port.get('port')} decisions",
                )
            )
    titles = {
        "rate": "interrupt rate per vector [1/s]",
        "throttle": "throttle setting as a rate [1/s] (1e9 / interval)"
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
        for trace in rows[key]:
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
            text=_e(label),
            showarrow=False,
            font={"size": 11},
            bgcolor="rgba(255,255,255,0.75)",
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


def _tune_point_label(point: Mapping[str, Any]) -> str:
    changed = point.get("changed") or {}
    return ", ".join(f"{k}={v}" for k, v in changed.items()) or "driver defaults"


def _fmt(value: Any, fmt: str, scale: float = 1.0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return fmt.format(float(value) * scale)


def _tune_section(doc: _Doc, anchor: str, tune: Mapping[str, Any]) -> str:
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
        return go.Scatter(
            x=[None if p.get("cpu_util") is None else p["cpu_util"] * 100 for p in pts],
            y=[None if p.get(y_key) is None else p[y_key] * y_scale for p in pts],
            name=name,
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

    def row(p: Mapping[str, Any], mark: str = "") -> list[str]:
        return [
            _e(mark + _tune_point_label(p)),
            _e(p.get("mode", "")),
            _e(_fmt(p.get("p50_us"), "{:.1f}")),
            _e(_fmt(p.get("p99_us"), "{:.1f}")),
            _e(_fmt(p.get("cpu_util"), "{:.2f}", 100)),
            _e(_fmt(p.get("interrupts_per_s"), "{:,.0f}")),
            _e(_fmt(p.get("throughput_bps"), "{:.1f}", 1e-6)),
            _e(p.get("drops", "")),
        ]

    compare = [row(default, "default: ")] + ([row(rec, "recommended: ")] if rec else [])
    front_rows = [row(p) for p in front]
    commands = (
        '<pre class="commands">' + _e("\n".join(rec.get("commands", []))) + "</pre>"
        if rec
        else f'<p class="miss">{_e(tune.get("reason", ""))}</p>'
    )
    notes = list(tune.get("not_searched") or []) + list(tune.get("notes") or [])
    notes_html = "<ul>" + "".join(f"<li>{_e(n)}</li>" for n in notes) + "</ul>" if notes else ""
    body = (
        f"<p>Workload: {_e(tune.get('workload_description') or tune.get('workload'))}; chip "
        f"{_e(tune.get('chip'))}; objective <b>{_e(tune.get('objective'))}</b>; search "
        f"{_e(tune.get('search'))}, {_e(tune.get('evaluated'))} distinct settings run.</p>"
        f"<p>{_e(tune.get('reason', ''))}</p>"
        + commands
        + _table(header, compare, cls="tune-compare")
        + doc.plot(fig)
        + _fold(
            f"Pareto front of p99, CPU, interrupt rate and throughput ({len(front)} points)",
            _table(header, front_rows, cls="tune-front"),
            open_=False,
        )
        + notes_html
    )
    return (
        f'<section id="{_e(anchor)}" class="tune">'
        + _fold(f"tune: {tune.get('driver')} on {tune.get('workload')}", body)
        + "</section>"
    )


def _sweep_section(doc: _Doc, anchor: str, name: str, table: pd.DataFrame) -> str:
    from holdoff.sweeps import param_columns, short_names

    params = param_columns(table)
    short = short_names(params)
    varying = [p for p in params if table[p].nunique(dropna=False) > 1]
    numeric = [p for p in varying if _is_numeric(table[p])]
    x_col = numeric[-1] if numeric else (varying[-1] if varying else "point")
    groups = [p for p in varying if p != x_col]

    def code(p: str) -> str:
        full = f' title="{_e(p)}"' if short.get(p, p) != p else ""
        return f"<code{full}>{_e(short.get(p, p))}</code>"

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
                constant.append(f"<code>{_e(col)}</code> = {_num(values.iloc[0])}")
                continue
            parts.append(_sweep_plot(doc, table, x_col, groups, col, unit, short))
    parts.append("</div>")
    if constant:
        parts.append(f'<p class="meta">the same at every point: {", ".join(constant)}</p>')
    parts.append(_sweep_table(table, params, short))
    body = _fold(f"<h2>Sweep: {_e(name)}</h2>", "\n".join(parts))
    return f'<section id="{_e(anchor)}" class="sweep">{body}</section>'


def _sweep_plot(
    doc: _Doc,
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
                row.append(_num(value))
            elif isinstance(value, int) and not isinstance(value, bool) and c != "seed":
                row.append(tables.count(value))
            else:
                row.append(_e(value))
        rows.append(row)
    more = f'<p class="meta">first {limit} of {len(table)} rows</p>' if len(table) > limit else ""
    header = [short.get(c, c) for c in cols]
    left = [i for i, c in enumerate(cols) if c in params and not _is_numeric(table[c])]
    return f'<div class="scroll">{_table(header, rows, "sweep-table", left)}</div>{more}'


_num = tables.fixed(2)


def _is_numeric(column: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(column))


_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto;
       max-width: 1280px; padding: 0 16px; color: #1d1d1f; }
h1 { font-size: 1.6em; } h2 { display: inline; font-size: 1.35em; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.2em; }
section { margin-top: 1.6em; }
details > summary { cursor: pointer; border-bottom: 2px solid #ddd; padding-bottom: 4px; }
details details > summary { border-bottom: 1px solid #eee; font-weight: 600; margin-top: 0.8em; }
table { border-collapse: collapse; margin: 6px 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; vertical-align: top; }
th { background: #f2f2f2; }
th.l, td.l { text-align: left; }
table.checks td:nth-child(3) { white-space: nowrap; }
.pass { color: #116611; font-weight: 600; }
.miss { color: #b00020; font-weight: 700; }
.plumbing { color: #555; font-style: italic; }
.warn { color: #8a5a00; font-weight: 600; }
div.warnings { background: #fff6d6; border: 1px solid #e0b000; padding: 6px 12px; margin: 8px 0; }
div.warnings ul { margin: 4px 0; }
p.verdict, p.score { font-size: 1.1em; } p.score { font-weight: 600; }
p.verdict.miss { background: #fde8ea; padding: 6px 10px; }
p.verdict.pass { background: #e6f4e6; padding: 6px 10px; }
.meta { color: #555; font-size: 0.9em; } .note { color: #555; font-size: 0.9em; }
ol.sources { font-size: 0.85em; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 8px; }
.plot { margin: 8px 0; min-height: 60px; }
.scroll { overflow: auto; max-height: 520px; max-width: 100%; border: 1px solid #ddd; }
.scroll table { margin: 0; } .scroll th { position: sticky; top: 0; }
.scroll td { white-space: nowrap; }
"""
