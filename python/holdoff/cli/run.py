"""`holdoff run`: a scenario, its summary, a what-if with `--set`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from holdoff.cli.common import (
    SeedOption,
    _apply_assignments,
    _Command,
    _fail,
    _interrupted_run,
    _ProgressLine,
    _read,
    _refuse_other_kind,
    _run,
    _stdout,
    app,
)
from holdoff.summary import render_summary


@app.command("run", cls=_Command)
def run_command(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)],
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON on stdout, nothing else.")
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Write report.json, summary.txt, timeseries.csv and perf.json to this folder.",
        ),
    ] = None,
    seed: SeedOption = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            "-s",
            metavar="PATH=VALUE",
            help="Change a field for this run (repeatable): a field path as in sweep files "
            "and a TOML value, e.g. generators[0].rate_pps=150000.",
            show_default=False,
        ),
    ] = None,
    show_progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="A progress line on stderr (simulated time, speed, ETA) for runs longer "
            "than half a second [default: when stderr is a terminal].",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a scenario and print its summary (or its JSON report)."""
    text = _read(file)
    _refuse_other_kind(file, text, want="scenario")
    if assignments:
        text = _apply_assignments(text, assignments)
    if show_progress is None:
        show_progress = sys.stderr.isatty() and not json_output
    progress = _ProgressLine(sys.stderr.isatty()) if show_progress else None
    try:
        result = _run(text, seed, progress, file.resolve().parent)
    except KeyboardInterrupt as err:
        _interrupted_run(err, json_output)
    if out is not None:
        try:
            result.save(out)
        except OSError as err:
            _fail(f"cannot write the results to {out}: {err}", 1)
    if json_output:
        sys.stdout.write(result.to_json() + "\n")
        sys.stdout.flush()
    else:
        console = _stdout()
        console.print(render_summary(result))
        if out is not None:
            console.print(Text(f"wrote {out}/", style="dim"))
