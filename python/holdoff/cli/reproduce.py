"""`holdoff reproduce`: the bundled reproduction cases, published against simulated."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from holdoff import _core, stats
from holdoff.cli.common import (
    SeedsOption,
    _Command,
    _fail,
    _stderr,
    _stdout,
    _write_report,
    app,
)


@app.command("reproduce", cls=_Command)
def reproduce_command(
    cases: Annotated[
        list[str] | None,
        typer.Argument(help="Case ids (default: every bundled case)."),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the results as JSON on stdout.")
    ] = False,
    plots: Annotated[
        Path,
        typer.Option("--plots", help="Folder for the NetPIPE curve images (one PNG per case)."),
    ] = Path("runs/reproduce"),
    list_only: Annotated[
        bool, typer.Option("--list", help="List the bundled cases and exit.")
    ] = False,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Also write an HTML report (tables, NetPIPE curves, timelines) of every case; "
            "written even when a check misses.",
        ),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit with code 1 when any check misses.")
    ] = False,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            min=0,
            max=2**64 - 1,
            help="Run every scenario with this seed instead of its own.",
            show_default=False,
        ),
    ] = None,
    seeds: SeedsOption = 1,
) -> None:
    """Run bundled reproduction cases and compare with the published numbers.

    For every published number: the published value, its source, the
    simulated value, the tolerance and pass/fail. A miss is reported with its
    explanation; with --strict any miss makes the exit code 1.
    """
    from holdoff import reproduce as rp

    try:
        ids = rp.list_cases()
    except rp.CaseError as err:
        _fail(str(err), 2)
    if list_only:
        for cid in ids:
            _stdout().print(f"{cid}: {rp.load_case(cid).title}")
        return
    try:
        stats.parse_seeds(seeds)
    except ValueError as err:
        _fail(str(err), 2)
    wanted = cases or ids
    unknown = [c for c in wanted if c not in ids]
    if unknown:
        _fail(f"unknown case {', '.join(unknown)}; available: {', '.join(ids)}", 2)
    err_console = _stderr()
    results = []
    cases_to_run = [rp.load_case(cid) for cid in wanted]
    total_runs = sum(len(c.runs) for c in cases_to_run) * seeds
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err_console,
        transient=True,
    )
    try:
        with progress:
            task = progress.add_task("reproduce", total=total_runs)
            for n, case in enumerate(cases_to_run, start=1):

                def on_run(message: str, n: int = n) -> None:
                    progress.update(task, description=f"[{n}/{len(cases_to_run)}] {message}")
                    progress.advance(task)

                t0 = time.perf_counter()
                try:
                    res = rp.run_case(case, progress=on_run, seed=seed, seeds=seeds)
                except (_core.ScenarioError, _core.SimulationError) as err:
                    _fail(f"{case.id}: {err}", 1)
                results.append(res)
                png = rp.plot_netpipe(res, plots / f"{case.id}-netpipe.png")
                line = (
                    f"[{n}/{len(cases_to_run)}] {case.id}: {len(case.runs) * seeds} runs in "
                    f"{time.perf_counter() - t0:.1f} s, {rp.case_score(res)}"
                )
                if png is not None:
                    line += f"; NetPIPE curves saved to {png}"
                progress.console.print(line)
    except KeyboardInterrupt:
        done = [r.case.id for r in results]
        left = [c.id for c in cases_to_run if c.id not in done]
        _stderr().print(
            Text(
                f"interrupted: {len(done)} of {len(cases_to_run)} cases finished"
                + (f" ({', '.join(done)})" if done else "")
            )
        )
        _stderr().print(Text(f"resume with: holdoff reproduce {' '.join(left)}"), soft_wrap=True)
        raise typer.Exit(130) from None
    if json_out:
        sys.stdout.write(json.dumps(rp.to_json(results), indent=2) + "\n")
    else:
        out = _stdout()
        if seed is not None or seeds > 1:
            out.print(Text(rp.seeds_text(seed, seeds)))
        for res in results:
            out.print(_reproduce_table(res))
            out.print(_reproduce_sources(res))
            out.print()
        out.print(_score_table(results, seeds))
        out.print(Text(rp.score_line(results), style="bold"))
    if report is not None:
        from holdoff.report import ReportInputs

        _write_report(report, ReportInputs(cases=list(results)), "holdoff: reproduction cases")
    if strict and not all(r.ok for r in results):
        raise typer.Exit(1)


def _reproduce_table(res: Any) -> Table:
    from holdoff import reproduce as rp

    _, refs = rp.numbered_notes(res)
    t = Table(
        title=f"{res.case.id}: {res.case.title} — {rp.case_score(res)}",
        title_justify="left",
        header_style="bold",
    )
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("check", ratio=1, min_width=24)
    for col in ["published", "simulated", "unit", "tolerance", "result", "note"]:
        t.add_column(
            col, justify="right" if col in ("published", "simulated") else "left", no_wrap=True
        )
    for i, (c, ref) in enumerate(zip(res.checks, refs, strict=True), start=1):
        t.add_row(
            str(i),
            c.name,
            rp.expected_number(c),
            rp.simulated_text(c),
            rp.display_unit(c.unit),
            rp.tolerance_text(c),
            Text(rp.verdict_text(c), style="green" if c.ok else "red"),
            "" if ref is None else f"N{ref}",
        )
    return t


def _reproduce_sources(res: Any) -> str:
    from holdoff import reproduce as rp

    notes, _ = rp.numbered_notes(res)
    lines = [f"source: {res.case.source}", "sources of the checks:"]
    lines += [f"  [{i}] {c.source}" for i, c in enumerate(res.checks, start=1)]
    if notes:
        lines.append("notes:")
        lines += [f"  N{i}. {text}" for i, text in enumerate(notes, start=1)]
    return "\n".join(lines)


def _score_table(results: list[Any], seeds: int) -> Table:
    """Every case's score in one table: scored checks, passes (with several
    seeds, also the range their 95 % intervals allow) and plumbing checks."""
    from holdoff import reproduce as rp

    t = Table(title="score per case", title_justify="left", header_style="bold")
    t.add_column("case", no_wrap=True)
    for col in ("scored", "pass"):
        t.add_column(col, justify="right")
    if seeds > 1:
        t.add_column("pass, whole interval .. somewhere in it", justify="right")
    t.add_column("plumbing (not scored)", justify="right")
    rows = [(r.case.id, rp.score_counts(r)) for r in results]
    total = {k: sum(n[k] for _, n in rows) for k in rows[0][1]} if rows else {}
    for name, n in [*rows, ("all", total)]:
        cells = [name, str(n.get("scored", 0)), str(n.get("passed", 0))]
        if seeds > 1:
            cells.append(
                f"{n.get('passed_whole_interval', 0)} .. {n.get('passed_within_interval', 0)}"
            )
        broken = n.get("plumbing_broken", 0)
        cells.append(f"{n.get('plumbing', 0)}" + (f" ({broken} BROKEN)" if broken else ""))
        t.add_row(*cells, style="bold" if name == "all" else None)
    return t
