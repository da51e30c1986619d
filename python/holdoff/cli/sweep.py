"""`holdoff sweep`: a base scenario over a grid of fields, into the result store."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from holdoff import _core
from holdoff.cli.common import (
    _LIST_TOTALS,
    _check_output_file,
    _Command,
    _ExecutorOption,
    _fail,
    _fmt_cell,
    _load_sweep_or_exit,
    _NoStoreOption,
    _print_wide,
    _stderr,
    _stdout,
    _store_warnings,
    _this_command,
    _WorkersOption,
    app,
)
from holdoff.inputs import printable
from holdoff.report.page import fold_warnings
from holdoff.stats import parse_seeds
from holdoff.sweep_metrics import warnings_of_runs
from holdoff.sweep_table import replicate_records


@app.command("sweep", cls=_Command)
def sweep_command(
    file: Annotated[Path, typer.Argument(help="Sweep file (TOML).", show_default=False)],
    store: Annotated[
        Path, typer.Option("--store", help="Result store folder (finished points are reused).")
    ] = Path("runs/store"),
    no_store: _NoStoreOption = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Parquet file for the table.",
            show_default="runs/sweeps/NAME.parquet",
        ),
    ] = None,
    executor: _ExecutorOption = "process",
    workers: _WorkersOption = None,
    address: Annotated[
        str | None, typer.Option("--address", help="Ray cluster address (with --executor ray).")
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print a JSON summary on stdout, nothing else.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Validate and list the points; run nothing.")
    ] = False,
    seeds: Annotated[
        int | None,
        typer.Option(
            "--seeds",
            help="Replicates (seeds) per point, replacing the file's `replicates`. With more "
            "than one, the table holds each point's mean and 95 % interval.",
            show_default="the file's replicates, else 1",
        ),
    ] = None,
) -> None:
    """Run a sweep: a base scenario over a grid of fields; write one table (Parquet).

    Points already in the store are not run again, so a sweep that was
    stopped resumes where it stopped (Ctrl-C or SIGTERM keep every finished
    point). Progress goes to stderr. With replicates, the table has one row
    per point: each metric's mean over the seeds and its 95 % interval (m,
    m_ci95_lo, m_ci95_hi, seeds); the per-replicate rows go to
    NAME.replicates.parquet beside it.
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from holdoff import sweeps as sw

    if executor not in sw.EXECUTORS:
        _fail(f"unknown executor {executor!r}; allowed: {', '.join(sw.EXECUTORS)}", 2)
    if workers is not None and workers > sw.max_workers():
        _fail(f"--workers {workers}: at most {sw.max_workers()} (four per core)", 2)
    if seeds is not None:
        try:
            parse_seeds(seeds)
        except ValueError as err:
            _fail(str(err), 2)
    spec = _load_sweep_or_exit(file)
    if seeds is not None:
        spec = dataclasses.replace(spec, replicates=seeds)
    try:
        table_path = out if out is not None else sw.table_path(spec.name)
        points = sw.expand(spec)
    except sw.SweepError as err:
        _fail(f"{file}: {err}", 2)
    _check_outputs(store if not no_store and not dry_run else None, table_path)
    if dry_run:
        listing: list[dict[str, Any]] = [
            {
                "point": p.index,
                "replicate": p.replicate,
                "seed": p.seed,
                "hash": p.key,
                "params": {k: sw.param_label(v) for k, v in p.params.items()},
            }
            for p in points
        ]
        if json_output:
            sys.stdout.write(json.dumps({"sweep": spec.name, "points": listing}, indent=2) + "\n")
        else:
            out_console = _stdout()
            names = sw.short_names(list(dict.fromkeys(k for p in points for k in p.params)))
            for item in listing:
                out_console.print(
                    Text(
                        f"{item['point']:>4}  seed {item['seed']:<20} {item['hash'][:12]}  "
                        + "; ".join(
                            printable(f"{names.get(k, k)}={v}") for k, v in item["params"].items()
                        )
                    )
                )
            out_console.print(f"{len(listing)} points, all valid")
        return
    err_console = _stderr()
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=err_console,
        transient=False,
    )
    task_id = progress.add_task(f"sweep {spec.name}", total=None)

    def on_start(pending: int, cached: int) -> None:
        note = f" ({cached} from the store)" if cached else ""
        progress.update(task_id, total=pending, description=f"sweep {spec.name}{note}")

    def on_progress(done: int, total: int) -> None:
        progress.update(task_id, completed=done, total=total)

    try:
        with progress, _store_warnings():
            result = sw.run_sweep(
                spec,
                store=None if no_store else store,
                executor=executor,  # type: ignore[arg-type]
                workers=workers,
                address=address,
                progress=on_progress,
                on_start=on_start,
            )
    except KeyboardInterrupt as err:
        finished = getattr(err, "finished", 0)
        remaining = getattr(err, "remaining", None)
        left = f", {remaining} left" if remaining is not None else ""
        kept = "not stored (--no-store)" if no_store else f"kept in the store {store}"
        _stderr().print(
            Text(f"interrupted: {finished} points finished{left}; finished points {kept}")
        )
        if not no_store:
            _stderr().print(
                Text(f"resume with the same command: {_this_command()}"), soft_wrap=True
            )
        raise typer.Exit(130) from None
    except sw.SweepError as err:
        _fail(f"{file}: {err}", 2)
    except _core.SimulationError as err:
        _fail(str(err), 1)
    except OSError as err:
        _fail(f"cannot write to the result store {store}: {err}", 1)
    per_run = sw.replicates_path(table_path) if result.summary is not None else None
    try:
        if result.summary is not None and per_run is not None:
            sw.write_table(result.table, per_run)
            sw.write_table(result.summary, table_path)
        else:
            sw.write_table(result.table, table_path)
    except OSError as err:
        _fail(f"cannot write the table to {table_path}: {err}", 1)
    summary: dict[str, Any] = {
        "sweep": spec.name,
        "points": len(result.points),
        "computed": result.computed,
        "cached": result.cached,
        "store": None if no_store else str(store),
        "table": str(table_path),
        "executor": executor,
        "wall_time_s": result.wall_time_s,
        "replicates": result.spec.replicates,
    }
    if result.summary is not None:
        summary["replicates_table"] = str(per_run)
        summary["point_means"] = replicate_records(result.summary)
    table = result.table
    warned = (
        fold_warnings(warnings_of_runs(table["point"], table["warnings"]))
        if "warnings" in table.columns
        else []
    )
    summary["warnings"] = [
        {"field": f, "runs": len(w), "first_message": m, "numbers_differ": v}
        for _, w, f, m, v in warned
    ]
    if json_output:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    _print_wide(_sweep_rich_table(result.summary if result.summary is not None else result.table))
    console = _stdout()
    if warned:
        console.print(_warnings_table(warned, len(result.table)))
    console.print(
        Text(
            f"{summary['points']} runs: {result.computed} computed, {result.cached} from the "
            f"store; table written to {table_path}"
            + (f" (per-replicate rows: {per_run})" if per_run is not None else "")
        )
    )


def _warnings_table(warned: list[tuple[int, list[str], str, str, bool]], runs: int) -> Table:
    """The runs' report warnings, folded as the HTML report folds them (the
    same field and message but for list indices and numbers): in how many
    runs, and the first run's message (the table's ``warnings`` column has
    every run's)."""
    t = Table(
        title="WARNINGS: what is not in effect as written or not simulated as given "
        "(the table's warnings column has each run's)",
        title_justify="left",
        title_style="bold yellow",
        border_style="yellow",
    )
    t.add_column("field", style="bold yellow")
    t.add_column("runs", justify="right")
    t.add_column("first message", style="yellow", overflow="fold")
    for _, wheres, field, message, varies in warned:
        note = " (numbers differ between runs; the first shown)" if varies else ""
        t.add_row(
            Text(printable(field)), f"{len(wheres)} of {runs}", Text(printable(message) + note)
        )
    return t


def _check_outputs(store: Path | None, table: Path) -> None:
    """Refuses (exit 2) a store that is not a folder or a table path that is a folder."""
    if store is not None and store.exists() and not store.is_dir():
        _fail(f"--store {printable(str(store))}: is not a folder; give a folder for the store", 2)
    if table.is_dir():
        _fail(f"--out {printable(str(table))}: is a folder; give a file name (NAME.parquet)", 2)
    # A device or FIFO too: the table is renamed over its path, which would replace it.
    _check_output_file(table, "--out")


def _sweep_rich_table(table: Any, limit: int = 50) -> Table:
    from holdoff.sweeps import param_columns, short_names

    params = param_columns(table)
    names = short_names(params)
    means = "seeds" in table.columns
    title = "sweep points (mean ± 95 % interval over seeds)" if means else "sweep points"
    t = Table(title=title, title_justify="left", header_style="bold")
    t.add_column("point", justify="right")
    for p in params:
        t.add_column(printable(names[p]), overflow="fold")
    if means:
        t.add_column("seeds", justify="right")
    for _, label, _fmt in _LIST_TOTALS:
        t.add_column(label, justify="right")
    for record in table.head(limit).to_dict("records"):
        t.add_row(
            str(record["point"]),
            *(Text(printable(str(record[p]))) for p in params),
            *([str(record["seeds"])] if means else []),
            *(_cell(record, col, fmt) for col, _, fmt in _LIST_TOTALS),
        )
    if len(table) > limit:
        t.caption = f"first {limit} of {len(table)} points"
    return t


def _cell(record: dict[str, Any], col: str, fmt: str) -> str:
    """A total's cell: the value, and ``± half-width`` when the row has an interval."""
    text = _fmt_cell(record.get(col), fmt)
    lo, hi = record.get(f"{col}_ci95_lo"), record.get(f"{col}_ci95_hi")
    if lo is None or hi is None or lo != lo or hi != hi:
        return text
    half = _fmt_cell((hi - lo) / 2, fmt)
    return f"{text} ± {half}"
