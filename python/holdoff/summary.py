"""The human-readable summary of a run, for terminals (rich) and text files.

It renders the tables of :mod:`holdoff.tables` (the same the HTML report
shows, built from the run's DataFrames), the warnings about configured
values the chip or driver ignores or clamps (first, in yellow), and the drops,
packet ledger and wall-clock performance lines. Every table fits the width it
is printed at with its numbers whole (:class:`holdoff.termtable.Fitted`:
names wrap, and a table too wide even so is printed stacked).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from holdoff import tables
from holdoff.tables import RunView
from holdoff.termtable import Fitted

#: Width of the plain-text summary (summary.txt) in columns.
SUMMARY_WIDTH = 100


def render_summary(result: RunView) -> Group:
    """The summary as a rich renderable: header, warnings, tables, drops, ledger, performance."""
    parts: list[RenderableType] = [_header(result)]
    if result.warnings:
        parts.append(render_warnings(result.warnings))
    parts.extend(_table(table) for table in tables.run_tables(result))
    parts.append(_drops_line(result.drops))
    parts.append(_ledger_line(result.ledger))
    parts.append(_perf_line(result.perf))
    return Group(*parts)


def summary_text(result: RunView, *, width: int = SUMMARY_WIDTH) -> str:
    """The summary as plain text (no colours), ``width`` columns wide."""
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=width, no_color=True, color_system=None, force_terminal=False
    )
    console.print(render_summary(result))
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())


# -- pieces -------------------------------------------------------------------


def _header(result: RunView) -> Text:
    text = Text()
    for i, (label, value) in enumerate(tables.header_text(result)):
        text.append(f"{'  ' if i else ''}{label} ", style="bold")
        text.append(value, style="cyan" if label == "scenario" else "")
    return text


def render_warnings(warnings: list[dict[str, str]]) -> Fitted:
    """Every warning, one row each: the field, and what is not in effect as
    configured or not simulated as given."""
    table = Table(
        title=f"WARNINGS ({len(warnings)}): what is not in effect as written or not "
        "simulated as given",
        title_justify="left",
        title_style="bold yellow",
        border_style="yellow",
        show_header=False,
    )
    table.add_column("field", style="bold yellow")
    table.add_column("message", style="yellow")
    for field, message in tables.warning_lines(warnings):
        table.add_row(Text(field), Text(message))
    return Fitted(table)


def _table(source: tables.Table) -> RenderableType:
    table = Table(
        title=source.title,
        title_justify="left",
        title_style="bold",
        header_style="bold",
        caption=source.note or None,
        caption_justify="left",
    )
    for column in source.columns:
        # Names wrap (left-aligned), numbers keep their width (right-aligned).
        table.add_column(column.header, justify="left" if column.label else "right")
    for row in source.rows:
        # Text cells: names from the scenario are shown as they are, never as markup.
        table.add_row(*(Text(cell) for cell in row))
    return Fitted(table)


def _drops_line(drops: Mapping[str, int]) -> Text:
    text = Text("drops: ", style="bold")
    shown = tables.drops_text(drops)
    text.append(shown, style="" if shown == "none" else "yellow")
    return text


def _ledger_line(ledger: Mapping[str, Any]) -> Text:
    text = Text("ledger: ", style="bold")
    if ledger.get("balanced"):
        text.append("balanced", style="green")
    else:
        text.append("NOT BALANCED", style="bold red")
    text.append(f"  {tables.ledger_text(ledger)}")
    return text


def _perf_line(perf: Mapping[str, float | int]) -> Text:
    text = Text("performance: ", style="bold")
    text.append(
        f"{tables.count(perf.get('events_processed'))} events in "
        f"{tables.duration(perf.get('wall_time_s'))} wall, "
        f"{tables.si(perf.get('events_per_s'))} events/s\n"
    )
    text.append("speed: ", style="bold")
    text.append(f"{tables.si(perf.get('packets_per_s'))} simulated packets per wall second")
    return text
