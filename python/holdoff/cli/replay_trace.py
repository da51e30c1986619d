"""`holdoff replay-trace`: one moderator's decisions on a recorded sample
trace, beside another's, without a simulation (:mod:`holdoff.trace_replay`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from holdoff import _core
from holdoff.cli.common import _check_file, _Command, _fail, _stdout, app
from holdoff.moderator import ModeratorError
from holdoff.modspec import ModSpec, ModSpecError, parse_moderator
from holdoff.trace_replay import REGISTERS, TraceError, effective, read_trace, replay_series

_SPEC_HELP = (
    "KIND[:key=val,...] (a built-in: ixgbe:rx_usecs=1), file.py:Class[:key=val] or "
    "file.c:entry[:key=val]"
)


def _replay_all(spec: ModSpec, trace: Any, only: str | None) -> list[dict[str, Any]]:
    out = []
    for (workload, vector), rows in trace.series.items():
        if only is not None and workload != only:
            continue
        try:
            res = replay_series(spec, trace.port, vector, rows)
        except ModeratorError as err:
            _fail(str(err), 1)
        except _core.ScenarioError as err:
            _fail(f"{spec.label}: {err}", 2)
        out.append({"workload": workload, "vector": vector, "rows": rows, **res})
    return out


def _shown(a: list[dict[str, Any]], b: list[dict[str, Any]] | None) -> list[str]:
    """The registers any of the moderators wrote."""
    used = [r for r in REGISTERS if any(s.get(r) is not None for s in a)]
    if b is not None:
        used += [r for r in REGISTERS if r not in used and any(s.get(r) is not None for s in b)]
    return used or ["itr_256ns"]


@app.command("replay-trace", cls=_Command)
def replay_trace_command(
    moderator: Annotated[str, typer.Argument(help=f"The moderator: {_SPEC_HELP}.")],
    trace_file: Annotated[
        Path, typer.Argument(help="Trace (Parquet) from `holdoff battery --trace`.")
    ],
    against: Annotated[
        str | None, typer.Option("--against", help=f"A second moderator beside it: {_SPEC_HELP}.")
    ] = None,
    workload: Annotated[
        str | None, typer.Option("--workload", help="Only this workload of the trace.")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="Rows printed per series (--json: all).")
    ] = 40,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print every step as JSON on stdout, nothing else.")
    ] = False,
) -> None:
    """Run a moderator over a recorded sample trace (no simulation) and print its
    register decisions per call, beside another moderator's with --against."""
    _check_file(trace_file, "trace file", 0)
    base = Path.cwd()
    try:
        specs = [parse_moderator(moderator, base)]
        if against is not None:
            specs.append(parse_moderator(against, base))
    except ModSpecError as err:
        _fail(str(err), 2)
    try:
        trace = read_trace(trace_file)
    except TraceError as err:
        _fail(str(err), 2)
    if workload is not None and workload not in {w for w, _ in trace.series}:
        names = ", ".join(sorted({w for w, _ in trace.series}))
        _fail(f"--workload {workload!r} is not in the trace; it has: {names}", 2)
    results = [_replay_all(s, trace, workload) for s in specs]
    series = []
    for i, first in enumerate(results[0]):
        other = results[1][i] if len(results) > 1 else None
        eff_a = effective(first["steps"])
        eff_b = effective(other["steps"]) if other else None
        series.append((first, other, eff_a, eff_b))
    if json_output:
        doc = {
            "trace": str(trace_file),
            "port": trace.port,
            "moderators": [s.label for s in specs],
            "series": [
                {
                    "workload": a["workload"],
                    "vector": a["vector"],
                    "samples": [list(r) for r in a["rows"]],
                    "steps": [a["steps"]] + ([b["steps"]] if b else []),
                    "in_force": [ea] + ([eb] if eb is not None else []),
                    "failure": [a["failure"]] + ([b["failure"]] if b else []),
                }
                for a, b, ea, eb in series
            ],
        }
        sys.stdout.write(json.dumps(doc) + "\n")
        if any(f for a, b, _, _ in series for f in (a["failure"], b and b["failure"])):
            raise typer.Exit(1)
        return
    console = _stdout()
    for a, b, ea, eb in series:
        regs = _shown(a["steps"], b["steps"] if b else None)
        table = Table(
            title=f"{a['workload']} vector {a['vector']} ({trace.port['chip']}, "
            f"{trace.port['link_mbps']} Mb/s): registers in force after each call",
            title_justify="left",
        )
        for col in ("t [us]", "rx pkts", "rx bytes", "tx pkts", "tx bytes"):
            table.add_column(col, justify="right")
        for s in specs:
            for r in regs:
                table.add_column(f"{s.label}\n{r}", justify="right")
        differ = 0
        for k, row in enumerate(a["rows"]):
            if k >= len(ea):
                break
            va = [ea[k][r] for r in regs]
            vb = [eb[k][r] for r in regs] if eb is not None and k < len(eb) else None
            if vb is not None and va != vb:
                differ += 1
            if k >= limit:
                continue
            cells = [f"{row[0] / 1000:.1f}", *(str(x) for x in row[1:5])]
            style = "bold" if vb is not None and va != vb else ""
            cells += ["-" if v is None else str(v) for v in va]
            if vb is not None:
                cells += ["-" if v is None else str(v) for v in vb]
            table.add_row(*cells, style=style)
        console.print(table)
        line = f"{len(a['rows'])} calls"
        if eb is not None:
            line += f"; the two differ after {differ} of them"
        for res, s in ((a, specs[0]), (b, specs[-1])):
            if res is not None and res["failure"]:
                line += f"; {s.label} failed: {res['failure']}"
        console.print(Text(line))
        if len(a["rows"]) > limit:
            console.print(Text(f"(first {limit} calls shown; --limit N or --json for more)"))
    if any(f for a, b, _, _ in series for f in (a["failure"], b and b["failure"])):
        raise typer.Exit(1)
