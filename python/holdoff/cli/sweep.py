"""`holdoff sweep`: a base scenario over a grid of fields, into the result store."""

from __future__ import annotations

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
) -> None:
    """Run a sweep: a base scenario over a grid of fields; write one table (Parquet).

    Points already in the store are not run again, so a sweep that was
    stopped resumes where it stopped. Progress goes to stderr.
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
    spec = _load_sweep_or_exit(file)
    try:
        points = sw.expand(spec)
    except sw.SweepError as err:
        _fail(f"{file}: {err}", 2)
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
                    f"{item['point']:>4}  seed {item['seed']:<20} {item['hash'][:12]}  "
                    + "; ".join(f"{names.get(k, k)}={v}" for k, v in item["params"].items())
                )
            out_console.print(f"{len(listing)} points, all valid")
        return
    table_path = out if out is not None else Path("runs/sweeps") / f"{spec.name}.parquet"
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
    try:
        sw.write_table(result.table, table_path)
    except OSError as err:
        _fail(f"cannot write the table to {table_path}: {err}", 1)
    summary = {
        "sweep": spec.name,
        "points": len(result.points),
        "computed": result.computed,
        "cached": result.cached,
        "store": None if no_store else str(store),
        "table": str(table_path),
        "executor": executor,
        "wall_time_s": result.wall_time_s,
    }
    if json_output:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        return
    _print_wide(_sweep_rich_table(result.table))
    console = _stdout()
    console.print(
        f"{summary['points']} points: {result.computed} computed, {result.cached} from the "
        f"store; table written to {table_path}"
    )


def _sweep_rich_table(table: Any, limit: int = 50) -> Table:
    from holdoff.sweeps import param_columns, short_names

    params = param_columns(table)
    names = short_names(params)
    t = Table(title="sweep points", title_justify="left", header_style="bold")
    t.add_column("point", justify="right")
    for p in params:
        t.add_column(names[p], overflow="fold")
    for _, label, _fmt in _LIST_TOTALS:
        t.add_column(label, justify="right")
    for record in table.head(limit).to_dict("records"):
        t.add_row(
            str(record["point"]),
            *(Text(str(record[p])) for p in params),
            *(_fmt_cell(record.get(col), fmt) for col, _, fmt in _LIST_TOTALS),
        )
    if len(table) > limit:
        t.caption = f"first {limit} of {len(table)} points"
    return t
