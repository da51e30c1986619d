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

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from holdoff import _core
from holdoff.inputs import (
    InputError,
    loads_json,
    printable,
    read_parquet,
    read_text,
    shorten,
)
from holdoff.report.case import as_case, case_section, verdict
from holdoff.report.page import (
    CSS,
    DASHES,
    MARKERS,
    MAX_POINTS,
    PALETTE,
    Doc,
    ReportInputError,
    downsample,
    esc,
    y_axis,
)
from holdoff.report.run import as_result, change_labels, ledger_state, run_section
from holdoff.report.sweep import sweep_section
from holdoff.report.tune import tune_section
from holdoff.result import REPORT_FILE, RunResult

__all__ = [
    "DASHES",
    "MARKERS",
    "MAX_POINTS",
    "PALETTE",
    "ReportInputError",
    "ReportInputs",
    "build_report",
    "change_labels",
    "downsample",
    "load_inputs",
    "write_report",
    "y_axis",
]


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


#: Exceptions a damaged input can raise while its section is drawn.
_DAMAGE = (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError)


def load_inputs(paths: Sequence[str | os.PathLike[str]]) -> ReportInputs:
    """Reads report inputs from files; the kind of each is recognised by its content.

    A folder holding ``report.json`` (``holdoff run --out``) or a report JSON
    file is a run; a ``.parquet`` file with ``point`` and ``scenario_hash``
    columns is a sweep table (one row per run), with ``point`` and ``seeds`` a
    sweep's replicate summary (one row per parameter set, with intervals); a
    JSON file with ``cases`` is the output of ``holdoff reproduce --json``
    (tables only: its NetPIPE curves need the runs, which ``holdoff reproduce
    --report`` has); the JSON of ``holdoff tune --json`` is a tune.

    Files are opened through :mod:`holdoff.inputs` (regular files only, size
    and JSON nesting limits checked before parsing). A missing, damaged or
    unknown input raises :class:`ReportInputError` naming the file (a missing
    one says ``not found``).
    """
    inputs = ReportInputs()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            if not (path / REPORT_FILE).is_file():
                raise ReportInputError(f"{path} is a folder without {REPORT_FILE}")
            path = path / REPORT_FILE
        try:
            _load_one(path, inputs)
        except InputError as err:
            raise ReportInputError(str(err)) from None
    return inputs


def _load_one(path: Path, inputs: ReportInputs) -> None:
    what = "report input"
    if path.suffix == ".parquet":
        table = read_parquet(path, what)
        columns = set(table.columns)
        if "point" not in columns or not columns & {"scenario_hash", "seeds"}:
            raise ReportInputError(
                f"{path} is not a sweep table (no point and scenario_hash or seeds columns)"
            )
        _trial(path, lambda: sweep_section(Doc(), "s", path.stem, table))
        inputs.sweeps.append((path.stem, table))
        return
    text = read_text(path, what)
    data = loads_json(text, what, path)
    if not isinstance(data, dict):
        raise ReportInputError(
            f"{path} holds a JSON {type(data).__name__}, not a run report, a sweep table "
            "(.parquet), `holdoff reproduce --json` or `holdoff tune --json` output"
        )
    if isinstance(data.get("cases"), list):
        for i, case in enumerate(data["cases"], start=1):
            if not isinstance(case, dict):
                raise ReportInputError(f"{path}: case {i} is not a JSON object")
            try:
                as_case(case)  # checked here, where the file can be named
            except ReportInputError as err:
                raise ReportInputError(f"{path}: {err}") from None
        inputs.cases.extend(data["cases"])
    elif {"recommended", "default", "front"} <= set(data):
        _trial(path, lambda: tune_section(Doc(), "t", data))
        inputs.tunes.append(data)
    elif "summary" in data and "config" in data:
        label = path.parent.name if path.name == REPORT_FILE else path.stem
        result = RunResult(text, {})
        _trial(path, lambda: run_section(Doc(), "r", label, result))
        inputs.runs.append((f"{data.get('scenario', label)} ({label})", result))
    else:
        raise ReportInputError(
            f"{path}: not a run report, a sweep table or `holdoff reproduce --json` output"
        )


def _trial(path: Path, draw: Callable[[], str]) -> None:
    """Draws an input's section once, so that a damaged input is refused
    with its file named rather than failing midway through the report."""
    try:
        draw()
    except _DAMAGE as err:
        raise ReportInputError(
            f"{printable(str(path))}: its contents cannot be shown "
            f"({type(err).__name__}: {shorten(printable(str(err)))}); "
            "the file is damaged or was not written by holdoff"
        ) from None


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

    doc = Doc()
    cases = [as_case(case) for case in inputs.cases]
    sections: list[str] = []
    overview: list[str] = []  # one line per section, linking to it
    for case in cases:
        anchor = doc.anchor(f"case-{case.case.id}")
        sections.append(case_section(doc, anchor, case))
        overview.append(
            f"case {_link(anchor, case.case.id)}: {esc(reproduce.case_score(case))}, "
            + verdict(case)[1]
            + _warned(w for r in case.results.values() for w in r.warnings)
        )
    for tune in inputs.tunes:
        anchor = doc.anchor(f"tune-{tune.get('driver', '')}-{tune.get('workload', '')}")
        sections.append(tune_section(doc, anchor, tune))
        rec = tune.get("recommended")
        choice = (
            "; ".join(rec.get("commands", [])) if rec else '<span class="miss">no setting</span>'
        )
        overview.append(
            f"tune {_link(anchor, str(tune.get('driver')))} on {esc(tune.get('workload'))} "
            f"({esc(tune.get('objective'))}): {choice if not rec else esc(choice)}"
        )
    for name, table in inputs.sweeps:
        anchor = doc.anchor(f"sweep-{name}")
        sections.append(sweep_section(doc, anchor, name, table))
        overview.append(f"sweep {_link(anchor, name)}: {len(table)} points")
    for name, run in inputs.runs:
        result = as_result(run)
        anchor = doc.anchor(f"run-{name}")
        sections.append(run_section(doc, anchor, name, result))
        balanced, _ = ledger_state(result.ledger)
        state = "balanced" if balanced else '<span class="miss">NOT balanced</span>'
        overview.append(
            f"run {_link(anchor, name)}: seed {esc(result.seed)}, ledger {state}"
            + _warned(result.warnings)
        )
    if not sections:
        sections.append("<p>Nothing to show: no runs, sweeps or cases were given.</p>")
    score = f'<p class="score">{esc(reproduce.score_line(cases))}</p>\n' if len(cases) > 1 else ""
    items = "".join(f"<li>{item}</li>" for item in overview)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n"
        "</head>\n<body>\n"
        f"<h1>{esc(title)}</h1>\n"
        f'<p class="meta">holdoff {esc(_core.version())}; opens offline (plots inline); '
        "click a heading to fold or unfold its section.</p>\n"
        f"{score}"
        + (f'<nav><ul class="overview">{items}</ul></nav>\n' if items else "")
        + "\n".join(sections)
        + "\n"
        + doc.scripts()
        + "</body>\n</html>\n"
    )


def _link(anchor: str, text: str) -> str:
    return f'<a href="#{esc(anchor)}"><b>{esc(text)}</b></a>'


def _warned(warnings: Iterable[Mapping[str, Any]]) -> str:
    n = sum(1 for _ in warnings)
    return f', <span class="warn">{n} warning{"s" if n > 1 else ""}</span>' if n else ""
