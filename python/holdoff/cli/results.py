"""`holdoff results` (the result store) and `holdoff report` (one HTML report)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from holdoff.cli.common import (
    _LIST_TOTALS,
    _check_output_file,
    _Command,
    _fail,
    _fmt_cell,
    _print_wide,
    _store_warnings,
    _toml_or_none,
    _write_report,
    app,
)
from holdoff.inputs import printable

#: The prefix of a pseudo-parameter: the contents of a file the runs read.
_CONTENTS = "contents of "


def _differing_files(cells: Any) -> dict[str, list[Any]]:
    """The files (profile files, captures) whose contents differ between
    the listed runs, from the store's ``input_files`` cells (``sha256  path``
    lines): ``"contents of PATH"`` -> each run's digest (12 hex digits; None
    when the run did not read it). Two runs of one scenario whose capture
    was taken again show here, not as identical rows."""
    per_run: list[dict[str, str]] = []
    for cell in cells:
        files: dict[str, str] = {}
        if isinstance(cell, str):
            for line in cell.splitlines():
                digest, _, path = line.partition("  ")
                if path:
                    files[path] = digest[:12]
        per_run.append(files)
    paths = sorted({p for f in per_run for p in f})
    return {
        _CONTENTS + p: [f.get(p) for f in per_run]
        for p in paths
        if len({f.get(p) for f in per_run}) > 1
    }


@app.command("results", cls=_Command)
def results_command(
    store: Annotated[Path, typer.Option("--store", help="Result store folder.")] = Path(
        "runs/store"
    ),
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="SQL (DuckDB) over the stored runs, a view named runs."),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", "-n", help="Only the runs of this scenario name."),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the rows as JSON on stdout.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Rows to print.")] = 100,
) -> None:
    """List and query stored runs: hash, scenario, seed, the parameters that differ, metrics.

    Without --query every stored run is listed (--name keeps one scenario's),
    with a column for every scenario field whose value differs between the
    listed runs.
    """
    import duckdb
    import pandas as pd

    from holdoff.store import ResultStore, differing_parameters
    from holdoff.sweeps import short_names

    rs = ResultStore(store)
    try:
        with _store_warnings():
            frame = rs.query(query)
    except FileNotFoundError as err:
        _fail(str(err), 2)
    except duckdb.Error as err:
        _fail(f"query failed: {err}", 2)
    if name is not None:
        if "scenario" not in frame.columns:
            _fail("--name needs a `scenario` column in the rows", 2)
        frame = frame[frame["scenario"] == name].reset_index(drop=True)
        if frame.empty:
            _fail(f"no stored run of scenario {printable(name)!r} in {store}", 2)
    params: dict[str, list[Any]] = {}
    common: list[str] = []
    if query is None:
        shown = frame.head(limit)
        if "scenario_toml" in shown.columns:
            params = differing_parameters(
                [_toml_or_none(str(s)) or {} for s in shown["scenario_toml"]]
            )
        if "input_files" in shown.columns:
            params.update(_differing_files(shown["input_files"]))
        cols = ["scenario_hash", "scenario", "seed", "holdoff_version", "sim_time_ns"]
        cols += [c for c, _, _ in _LIST_TOTALS]
        frame = frame[[c for c in cols if c in frame.columns]]
        if not json_output and len(frame) > 1:
            # Columns with one value for every listed run go to the title.
            for col, what in (
                ("scenario", "scenario {}"),
                ("holdoff_version", "version {}"),
                ("sim_time_ns", "{} simulated"),
            ):
                if col in frame and frame[col].nunique(dropna=False) == 1:
                    value = frame[col].iloc[0]
                    common.append(
                        what.format(f"{value / 1e6:g} ms" if col == "sim_time_ns" else value)
                    )
                    frame = frame.drop(columns=[col])
        if params:
            insert_at = list(frame.columns).index("seed") + 1 if "seed" in frame else 0
            frame = frame.copy()
            for i, (path, values) in enumerate(params.items()):
                values += [None] * (len(frame) - len(values))
                frame.insert(insert_at + i, path, pd.Series(values, dtype=object))
    if json_output:
        sys.stdout.write(frame.head(limit).to_json(orient="records", indent=2) + "\n")
        return
    # Names come from the stored scenarios: control characters are shown escaped.
    t = Table(
        title=f"{len(frame)} row{'s' if len(frame) != 1 else ''}"
        + ("" if query else f" stored in {printable(str(store))}")
        + (f"; all {printable(', '.join(common))}" if common else ""),
        title_justify="left",
        header_style="bold",
    )
    formats = {c: f for c, _, f in _LIST_TOTALS}
    labels = {c: lbl for c, lbl, _ in _LIST_TOTALS}
    labels.update(short_names([p for p in params if not p.startswith(_CONTENTS)]))
    labels.update(
        {p: f"{Path(p[len(_CONTENTS) :]).name} (sha256)" for p in params if p.startswith(_CONTENTS)}
    )
    if query is None:
        labels.update(scenario_hash="hash", holdoff_version="version", sim_time_ns="simulated")
    for col in frame.columns:
        numeric = frame[col].dtype != object and col not in params
        t.add_column(
            printable(labels.get(col, str(col))),
            justify="right" if numeric else "left",
            overflow="fold",
            no_wrap=col in ("scenario_hash", "seed"),
        )
    for record in frame.head(limit).to_dict("records"):
        cells = []
        for col in frame.columns:
            value = record[col]
            if col == "scenario_hash" and query is None:
                cells.append(str(value)[:12])
            elif col == "sim_time_ns" and query is None:
                cells.append(f"{value / 1e6:g} ms")
            elif col in formats and query is None:
                cells.append(_fmt_cell(value, formats[col]))
            elif value is None:
                cells.append("-")
            else:
                cells.append(str(value))
        t.add_row(*(Text(printable(c)) for c in cells))
    if len(frame) > limit:
        t.caption = f"first {limit} rows"
    elif params and query is None:
        t.caption = "parameters that differ between these runs: " + printable(", ".join(params))
    _print_wide(t)


@app.command("report", cls=_Command)
def report_command(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="Run reports (report.json or a --out folder), sweep tables (.parquet) "
            "or reproduce JSON.",
            show_default=False,
        ),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
    title: Annotated[str, typer.Option("--title", help="Title of the report.")] = (
        "holdoff report"
    ),
) -> None:
    """Write one self-contained HTML report (plots inline, opens offline)."""
    from holdoff import report as rp

    _check_output_file(output, "--output")  # before the inputs are read
    try:
        inputs = rp.load_inputs(results)
    except FileNotFoundError as err:
        _fail(str(err), 2)
    except rp.ReportInputError as err:
        _fail(str(err), 2)
    _write_report(output, inputs, title)
