"""Shared pieces of the HTML report: the page (its plotting library and figures,
packed once), HTML helpers (escaping, tables, folding sections, warnings) and
plot helpers (colours, dashes, markers, downsampling, axes that do not
magnify a flat signal).

Simplifies: a figure is a plotly figure serialised to JSON; the page draws it
when its section is open. Units: whatever each caller's data carries.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from holdoff import tables

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
    """A report input is missing, damaged or of an unknown kind."""


# -- document helpers ---------------------------------------------------------------


class Doc:
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
        return f'<div class="plot" id="{plot_id}" role="figure" aria-label="{esc(label)}"></div>'

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


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def text_lines(value: str) -> str:
    """Escaped text whose line breaks are kept."""
    return "<br>".join(esc(line) for line in value.split("\n"))


def table_html(
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

    head = "".join(cell("th", i, text_lines(h)) for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>" for row in rows
    )
    cls_attr = f' class="{cls}"' if cls else ""
    return f"<table{cls_attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def summary_table(table: tables.Table) -> str:
    """A table of :mod:`holdoff.tables`, with its title and note."""
    rows = [[text_lines(cell) for cell in row] for row in table.rows]
    left = [i for i, column in enumerate(table.columns) if column.label]
    note = f'<p class="meta">{esc(table.note)}</p>' if table.note else ""
    return f"<h3>{esc(table.title)}</h3>" + table_html(table.headers, rows, table.name, left) + note


def fold(summary: str, body: str, *, open_: bool = True, cls: str = "") -> str:
    """A section that folds: ``summary`` is its always-visible heading (HTML)."""
    attrs = (" open" if open_ else "") + (f' class="{cls}"' if cls else "")
    return f"<details{attrs}><summary>{summary}</summary>\n{body}\n</details>"


def plural(n: int, noun: str) -> str:
    """``1 warning``, ``2 warnings``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


_INDEX = re.compile(r"\[\d+\]")
_INDEX_SPLIT = re.compile(r"(\[\d+\])")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def fold_warnings(
    warnings: Iterable[tuple[str, str, str]],
) -> list[tuple[int, list[str], str, str, bool]]:
    """Warnings as (where, field, message) folded into groups that differ only
    in list indices of the field or in numbers of the message: per group, in
    first-seen order, (count, the distinct wheres, the field with indices as
    ``[*]`` when they vary, the first message, whether the messages vary)."""
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for where, field, message in warnings:
        key = (_INDEX.sub("[*]", field), _NUMBER.sub("#", message))
        groups.setdefault(key, []).append((where, field, message))
    out = []
    for members in groups.values():
        wheres = list(dict.fromkeys(w for w, _, _ in members if w))
        messages = {m for _, _, m in members}
        field = _common_field([f for _, f, _ in members])
        out.append((len(members), wheres, field, members[0][2], len(messages) > 1))
    return out


def _common_field(fields: list[str]) -> str:
    """The field path with ``[*]`` for each list index that differs among
    ``fields`` (which differ only in their indices): ``hosts[0].nics[*].x``."""
    pieces = [_INDEX_SPLIT.split(f) for f in fields]
    first = pieces[0]
    return "".join(
        part if all(p[i] == part for p in pieces) else "[*]" for i, part in enumerate(first)
    )


def warnings_block(warnings: Iterable[tuple[str, str, str]]) -> str:
    """Warnings as (where, field, message), repeated ones folded to one line
    with their count (:func:`fold_warnings`); nothing when there are none."""
    groups = fold_warnings(warnings)
    if not groups:
        return ""
    items = []
    for count, wheres, field, message, varies in groups:
        lead = f"<b>{count}×</b> " if count > 1 else ""
        where = ""
        if count == 1 and wheres:
            where = f"{esc(wheres[0])}: "
        elif wheres:
            runs = f"{plural(len(wheres), 'run')}: {', '.join(wheres)}"
            where = f' <span class="meta">({esc(runs)})</span>'
        vary = (
            ' <span class="meta">(numbers differ between them; the first shown)</span>'
            if varies
            else ""
        )
        if count == 1:
            items.append(f"<li>{where}<code>{esc(field)}</code>: {esc(message)}</li>")
        else:
            items.append(f"<li>{lead}<code>{esc(field)}</code>: {esc(message)}{vary}{where}</li>")
    total = sum(g[0] for g in groups)
    kinds = f" of {plural(len(groups), 'kind')}" if len(groups) < total else ""
    return (
        f'<div class="warnings"><b>{plural(total, "warning")}{kinds}: '
        "what is not in effect as written or not simulated as given</b>"
        f"<ul>{''.join(items)}</ul></div>"
    )


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


def rounded(values: Iterable[float | None], digits: int = 5) -> list[float | None]:
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


num = tables.fixed(2)


def is_numeric(column: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(column))


CSS = """
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
table.checks td:nth-child(3), table.checks td:last-child { white-space: nowrap; }
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
