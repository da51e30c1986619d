"""Rich tables that fit the width they are printed at, every number whole.

rich narrows a table that is wider than the terminal by cutting cells with
``…``, numbers included (``149,0…``). :class:`Fitted` wraps a table and
narrows it the way a reader can still use it instead:

* columns of numbers (right-aligned or centred, or ``no_wrap``) keep their
  full width;
* the other columns (names) wrap at spaces, never below their longest word,
  so a number inside a name column is never split either;
* when that does not fit, the outer border goes, then the blanks beside
  the column rules;
* when even that does not fit, the table is printed stacked: its title, then
  one block per row, ``header: value`` on a line each.

:func:`output_width` is the width the command line prints at: the terminal's
width; for piped or redirected output the ``COLUMNS`` environment variable
when it is set, otherwise wide enough that nothing wraps or is cut
(:class:`FittingConsole` measures what it prints).

Simplifications: a column is "numbers" by its alignment (the project's
tables right-align numbers); cells that are not text are measured but printed
as they are in the stacked layout. Widths are terminal cells.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Iterable, Iterator
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

#: Below this many columns a name column is not narrowed further: stacked instead.
MIN_LABEL_WIDTH = 6
#: The width piped output is printed at when ``COLUMNS`` is not set and
#: nothing printed is wider (``summary.txt`` uses the same).
PIPE_MIN_WIDTH = 100


def _keeps_width(column: Column) -> bool:
    """Numbers: right-aligned or centred columns (a left-aligned column wraps, but
    never inside a word, so a number in it stays whole)."""
    return column.justify in ("right", "center")


def _cells(table: Table, column: Column) -> list[RenderableType]:
    header = [column.header] if table.show_header else []
    return [*header, *column._cells]


def _measure(
    console: Console, options: ConsoleOptions, cells: Iterable[RenderableType]
) -> Measurement:
    """The widest longest-word and the widest line of ``cells``."""
    low, high = 0, 0
    for cell in cells:
        m = Measurement.get(console, options, cell)
        low, high = max(low, m.minimum), max(high, m.maximum)
    return Measurement(low, high)


def plan_widths(
    console: Console, options: ConsoleOptions, table: Table, width: int
) -> list[int] | None:
    """Content widths (without padding) that fit ``table`` in ``width`` with
    every number whole, or None when only the stacked layout fits."""
    wide = options.update_width(max(width, 10_000))
    pads = [table._get_padding_width(c._index) for c in table.columns]
    room = width - table._extra_width - sum(pads)
    keep = [_keeps_width(c) for c in table.columns]
    natural: list[int] = []
    least: list[int] = []
    for column, keeps in zip(table.columns, keep, strict=True):
        cells = _measure(console, wide, column._cells)
        header = _measure(console, wide, [column.header] if table.show_header else [])
        if keeps:
            # A number column is as wide as its widest cell; its header may wrap.
            full = max(cells.maximum, header.minimum, 1)
            natural.append(full)
            least.append(full)
        else:
            natural.append(max(cells.maximum, header.maximum, 1))
            least.append(max(cells.minimum, header.minimum, min(MIN_LABEL_WIDTH, cells.maximum), 1))
    if sum(least) > room:
        return None
    widths = list(natural)
    excess = sum(widths) - room
    while excess > 0:
        # Narrow the widest name column that is still above its least width.
        candidates = [i for i, w in enumerate(widths) if not keep[i] and w > least[i]]
        i = max(candidates, key=lambda j: widths[j])
        others = [widths[j] for j in candidates if j != i]
        step = max(1, min(excess, widths[i] - max([least[i], *others])))
        widths[i] -= step
        excess -= step
    return widths


class Fitted:
    """A rich table that fits whatever width it is printed at (see the module doc)."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        natural = Measurement.get(console, options.update_width(10_000), self.table)
        title = Measurement.get(console, options.update_width(10_000), self.table.title or "")
        return Measurement(1, max(natural.maximum, title.maximum)).with_maximum(options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        natural = Measurement.get(console, options.update_width(10_000), self.table).maximum
        if natural <= width:
            yield self.table
            return
        for table in (self.table, compact(self.table), compact(self.table, padding=0)):
            widths = plan_widths(console, options, table, width)
            if widths is not None:
                yield narrowed(table, widths)
                return
        yield from stacked(console, self.table)


def compact(table: Table, padding: int = 1) -> Table:
    """``table`` without its outer border and edge padding (4 columns fewer),
    with ``padding`` blanks each side of a column rule."""
    lean = copy.copy(table)
    lean.show_edge = False
    lean.pad_edge = False
    lean.padding = (0, padding)
    return lean


def narrowed(table: Table, widths: list[int]) -> Table:
    """``table`` with its columns at ``widths``: every cell of a number column
    fits on one line; names and headers wrap at spaces (a longer word folds)."""
    lean = copy.copy(table)
    lean.columns = [
        dataclasses.replace(c, width=w, no_wrap=False, overflow="fold")
        for c, w in zip(table.columns, widths, strict=True)
    ]
    return lean


def _as_text(console: Console, cell: RenderableType) -> Text | None:
    if isinstance(cell, Text):
        return cell
    if isinstance(cell, str):
        return console.render_str(cell)
    return None


def stacked(console: Console, table: Table) -> Iterator[RenderableType]:
    """``table`` as blocks: the title, then per row ``header: value`` for its
    first cell and, indented, for the others; a blank line between rows."""
    if table.title:
        title = _as_text(console, table.title)
        yield Text(title.plain, style="bold") if title is not None else table.title
    # A column without a header (a row label) shows its value alone.
    headers = [
        " ".join((_as_text(console, c.header) or Text(str(c.header))).plain.split())
        for c in table.columns
    ]
    for r in range(table.row_count):
        if r:
            yield Text("")
        for i, column in enumerate(table.columns):
            cell = column._cells[r] if r < len(column._cells) else ""
            value = _as_text(console, cell)
            line = Text("  " if i else "")
            if headers[i]:
                line.append(f"{headers[i]}: ", style="bold")
            if value is None:
                yield line
                yield cell
                continue
            lines = value.split("\n")
            if len(lines) == 1:
                line.append_text(lines[0])
                yield line
            else:
                yield line
                for part in lines:
                    yield Text("    " if i else "  ").append_text(part)
    if table.caption:
        caption = _as_text(console, table.caption)
        yield caption if caption is not None else table.caption


def output_width(console: Console, renderables: Iterable[RenderableType] = ()) -> int:
    """The width to print at: the terminal's; for piped output ``COLUMNS``
    when set, else the widest of ``renderables`` (at least :data:`PIPE_MIN_WIDTH`)."""
    if console.is_terminal:
        return console.width
    if columns_set():
        return int(os.environ["COLUMNS"])
    wide = console.options.update_width(10_000)
    widest = [Measurement.get(console, wide, r).maximum for r in renderables]
    return max([PIPE_MIN_WIDTH, *widest])


def fit(renderable: RenderableType) -> RenderableType:
    """A table wrapped in :class:`Fitted`, a group with its tables wrapped; others as they are."""
    if isinstance(renderable, Table):
        return Fitted(renderable)
    if isinstance(renderable, Group):
        return Group(*(fit(r) for r in renderable.renderables))
    return renderable


def columns_set() -> bool:
    """Whether ``COLUMNS`` names a width (rich then prints at it, piped or not)."""
    columns = os.environ.get("COLUMNS", "")
    return columns.isdigit() and int(columns) > 0


class FittingConsole(Console):
    """A console whose ``print`` fits every table it is given (:func:`fit`)
    and, piped without ``COLUMNS``, first widens to what it prints
    (:func:`output_width`), so that piped output loses nothing."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        fitted = [fit(o) for o in objects]
        if not self.is_terminal and not columns_set():
            self.width = max(self.width, output_width(self, fitted))
        super().print(*fitted, **kwargs)
