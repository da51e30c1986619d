"""`holdoff battery`: moderators against the standard battery, with a scorecard."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from holdoff import _core
from holdoff.cli.common import (
    _Command,
    _ExecutorOption,
    _fail,
    _NoStoreOption,
    _stderr,
    _stdout,
    _store_warnings,
    _this_command,
    _WorkersOption,
    app,
)
from holdoff.stats import parse_seeds

DEFAULT_CHIPS = "82546,82574,i210,82599"


@app.command("battery", cls=_Command)
def battery_command(
    moderators: Annotated[
        list[str],
        typer.Argument(
            help="Moderators: KIND[:key=val,...] (built-in with settings), file.py:Class "
            "(Python), file.c:entry (C).",
            show_default=False,
        ),
    ],
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="The moderator the others are compared with.",
            show_default="the first",
        ),
    ] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds (runs) per cell: 1 .. N.")] = 3,
    chips: Annotated[
        str, typer.Option("--chips", help="Comma-separated chips: 82546, 82574, i210, 82599.")
    ] = DEFAULT_CHIPS,
    quick: Annotated[
        bool,
        typer.Option(
            "--quick/--full",
            help="--quick leaves out NetPIPE (3-5 s of wall time a run); --full runs "
            "every workload.",
        ),
    ] = True,
    only: Annotated[
        str | None,
        typer.Option(
            "--workloads",
            help="Comma-separated workloads to run (default: all that --quick/--full select).",
        ),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the scorecard as JSON on stdout, nothing else.")
    ] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Write the HTML scorecard with the timelines.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Folder for scorecard.json (and the traces with --trace).",
            show_default="battery-out with --trace",
        ),
    ] = None,
    trace: Annotated[
        bool,
        typer.Option(
            "--trace",
            help="Record each workload's moderation samples as Parquet (for holdoff replay-trace).",
        ),
    ] = False,
    store: Annotated[
        Path, typer.Option("--store", help="Result store folder (finished runs are reused).")
    ] = Path("runs/store"),
    no_store: _NoStoreOption = False,
    executor: _ExecutorOption = "process",
    workers: _WorkersOption = None,
) -> None:
    """Run moderators against the standard battery and print a scorecard.

    Workloads (each with its source): ping then idle (readback), NetPIPE,
    iperf (also on loaded hosts), open-loop request/response from light load
    to saturation, 64-byte forwarding past saturation, TX with minimum and
    jumbo frames, a mid-run change of the setting; on the 82546, 82574,
    I210 and 82599. Each metric: mean ± half its 95 % interval over the
    seeds; the difference to the baseline with its Welch interval, marked *
    when the interval leaves out zero. Finished runs go to the store, so a
    stopped battery resumes; a moderator that fails gives an error cell and
    exit status 1 once the rest has run.
    """
    from holdoff import battery as bt
    from holdoff import battery_run as br
    from holdoff import battery_score as bs
    from holdoff.store import ResultStore
    from holdoff.sweeps import EXECUTORS

    started = time.perf_counter()
    try:
        parse_seeds(seeds)
    except ValueError as err:
        _fail(str(err), 2)
    if executor not in EXECUTORS:
        _fail(f"--executor: unknown {executor!r}; allowed: {', '.join(EXECUTORS)}", 2)
    chip_list = [c.strip() for c in chips.split(",") if c.strip()]
    unknown = [c for c in chip_list if c not in bt.CHIPS]
    if not chip_list or unknown:
        _fail(
            f"--chips: unknown {', '.join(unknown) or 'empty list'}; "
            f"allowed: {', '.join(bt.CHIPS)}",
            2,
        )
    candidates = []
    for spec in moderators:
        try:
            cand = br.resolve(spec, Path.cwd())
        except (ValueError, OSError, _core.ScenarioError) as err:
            _fail(f"moderator {spec!r}: {err}", 2)
        candidates.append(cand)
    labels = [c.label for c in candidates]
    if len(set(labels)) != len(labels):
        _fail(f"a moderator is named twice: {', '.join(labels)}", 2)
    base = labels[0] if baseline is None else baseline
    if base not in labels:
        try:
            base_label = br.resolve(base, Path.cwd()).label
        except (ValueError, OSError, _core.ScenarioError) as err:
            _fail(f"--baseline {base!r}: {err}", 2)
        if base_label not in labels:
            _fail(f"--baseline {base!r} is not one of the moderators: {', '.join(labels)}", 2)
        base = base_label
    chosen = bt.workloads(quick)
    if only is not None:
        names = [w.strip() for w in only.split(",") if w.strip()]
        bad = [w for w in names if w not in bt.WORKLOADS]
        if not names or bad:
            _fail(
                f"--workloads: unknown {', '.join(bad) or 'empty list'}; "
                f"allowed: {', '.join(bt.WORKLOADS)}",
                2,
            )
        chosen = [bt.WORKLOADS[w] for w in names]
    p = br.plan(candidates, chip_list, chosen, seeds)
    for cand in candidates:
        cells = [c for k, c in p.cells.items() if k.moderator == cand.label]
        if cells and all(c.skipped for c in cells):
            _fail(f"moderator {cand.spec!r} runs nowhere: {cells[0].skipped}", 2)
    result_store = None if no_store else ResultStore(store)
    err_console = _stderr()
    if not json_output:
        err_console.print(
            Text(
                f"battery: {len(candidates)} moderators x {len(chip_list)} chips x "
                f"{len(p.workloads)} workloads x {seeds} seeds = {len(p.points)} runs"
            )
        )

    def on_start(pending: int, cached: int) -> None:
        if cached and not json_output:
            err_console.print(Text(f"{cached} runs from the store {store}, {pending} to run"))

    try:
        with _store_warnings():
            computed, cached = br.run_plan(
                p, result_store, executor=executor, workers=workers, on_start=on_start
            )
            details, detail_notes = (
                br.detail_runs(p, executor=executor, workers=workers)
                if html is not None or trace
                else ({}, [])
            )
    except KeyboardInterrupt as err:
        finished = getattr(err, "finished", 0)
        left = getattr(err, "remaining", "?")
        kept = "not stored (--no-store)" if no_store else f"kept in the store {store}"
        err_console.print(Text(f"interrupted: {finished} runs finished, {left} left; {kept}"))
        if not no_store:
            err_console.print(
                Text(f"resume with the same command: {_this_command()}"), soft_wrap=True
            )
        raise typer.Exit(130) from None
    except OSError as err:
        _fail(f"cannot write to the result store {store}: {err}", 1)
    table = bs.rows(p, base)
    errors = sorted(
        {
            f"{k.moderator} on the {k.chip}, {k.workload}, seed {seed}: {msg}"
            for k, cell in p.cells.items()
            for seed, msg in cell.errors.items()
        }
    )
    skipped = sorted(
        {
            f"{k.moderator} on the {k.chip}, {k.workload}: {cell.skipped}"
            for k, cell in p.cells.items()
            if cell.skipped
        }
    )
    notes: list[str] = list(detail_notes)
    trace_files: list[str] = []
    if trace:
        from holdoff.battery_trace import write_traces

        folder = out if out is not None else Path("battery-out")
        try:
            files, trace_notes = write_traces(p, details, folder)
        except OSError as err:
            _fail(f"cannot write the traces to {folder}: {err}", 1)
        trace_files = [str(f) for f in files]
        notes.extend(trace_notes)
    wall = time.perf_counter() - started
    footer = f"{computed} runs computed, {cached} from the store, {wall:.1f} s of wall time"
    doc = bs.as_json(
        p,
        base,
        table,
        {
            "errors": errors,
            "skipped": skipped,
            "traces": trace_files,
            "notes": notes,
            "runs": {"computed": computed, "stored": cached},
            "wall_time_s": wall,
        },
    )
    if out is not None:
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / "scorecard.json").write_text(json.dumps(doc, indent=2) + "\n")
        except OSError as err:
            _fail(f"cannot write {out / 'scorecard.json'}: {err}", 1)
    if html is not None:
        from holdoff.battery_html import build_html, write_html

        try:
            write_html(html, build_html(p, base, table, details, footer))
        except OSError as err:
            _fail(f"cannot write {html}: {err}", 1)
    if json_output:
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        _print_scorecard(p, base, table, skipped, errors, notes, trace_files, html, footer)
    if errors:
        raise typer.Exit(1)


def _print_scorecard(
    p: Any,
    base: str,
    table: Any,
    skipped: list[str],
    errors: list[str],
    notes: list[str],
    trace_files: list[str],
    html: Path | None,
    footer: str,
) -> None:
    from holdoff import battery_score as bs

    console = _stdout()
    console.print(
        Text(
            f"Scorecard, seeds {', '.join(map(str, p.seeds))}: each cell the mean ± half its 95 % "
            "interval; under it the difference to the baseline's mean ± half its Welch 95 % "
            "interval, * where the interval leaves out zero (larger than the spread)."
        )
    )
    for part in bs.terminal_tables(p, base, table):
        console.print(part)
    for title, lines in (("skipped", skipped), ("errors", errors), ("notes", notes)):
        if lines:
            console.print(Text(f"{title}:"))
            for line in lines:
                console.print(Text(f"  {line}"))
    for f in trace_files:
        console.print(Text(f"trace: {f}"))
    if html is not None:
        console.print(Text(f"HTML scorecard: {html}"))
    console.print(Text(footer))
