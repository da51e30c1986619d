"""`holdoff run`: a scenario, its summary, a what-if with `--set`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from holdoff import stats
from holdoff.cli.common import (
    SeedOption,
    SeedsOption,
    _apply_assignments,
    _check_output_folder,
    _Command,
    _fail,
    _field_set_option,
    _interrupted_run,
    _print_wide,
    _read,
    _refuse_other_kind,
    _run,
    _stderr,
    _stdout,
    app,
)
from holdoff.progress import ProgressLine
from holdoff.seeds_view import (
    scenario_replay_warnings,
    seeds_header,
    seeds_table,
    seeds_warnings,
)
from holdoff.summary import render_summary, render_warnings


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
        _field_set_option(
            "Change a field for this run (repeatable): a field path as in sweep files "
            "and a TOML value, e.g. generators[0].rate_pps=150000."
        ),
    ] = None,
    seeds: SeedsOption = 1,
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
    if out is not None:
        _check_output_folder(out, "--out")
    _refuse_other_kind(file, text, want="scenario")
    if assignments:
        text = _apply_assignments(text, assignments)
    try:
        stats.parse_seeds(seeds)
    except ValueError as err:
        _fail(str(err), 2)
    for warning in scenario_replay_warnings(text, file.resolve().parent):
        _stderr().print(Text(f"warning: {warning}", style="yellow"), soft_wrap=True)
    if seeds > 1:
        _run_seeds(text, seeds, seed, file.resolve().parent, json_output, out)
        return
    if show_progress is None:
        show_progress = sys.stderr.isatty() and not json_output
    progress = ProgressLine(sys.stderr.isatty()) if show_progress else None
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


def _run_seeds(
    text: str, seeds: int, seed: int | None, base: Path, json_output: bool, out: Path | None
) -> None:
    """``run --seeds N``: N runs, then each metric's mean ± half its 95 % interval."""
    from holdoff import _core
    from holdoff.seeds import run_seeds

    try:
        res = run_seeds(text, seeds=seeds, seed=seed, base_dir=base)
    except _core.ScenarioError as err:
        _fail(str(err), 2)
    except _core.SimulationError as err:
        _fail(str(err), 1)
    except KeyboardInterrupt:
        _stderr().print(Text("interrupted"))
        raise typer.Exit(130) from None
    data = res.to_dict()
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / "seeds.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        except OSError as err:
            _fail(f"cannot write the results to {out}: {err}", 1)
    if json_output:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    console = _stdout()
    console.print(Text(seeds_header(res)), soft_wrap=True)
    if res.warnings:
        console.print(render_warnings(seeds_warnings(res)))
    _print_wide(seeds_table(res))
