"""`holdoff livelock` and `holdoff experiment`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from holdoff.cli.common import (
    _check_output_file,
    _check_output_folder,
    _Command,
    _ExecutorOption,
    _fail,
    _stderr,
    _stdout,
    _WorkersOption,
    app,
)

# --duration-ms of the bundled experiments (each gives its own default).
_PointDurationOption = Annotated[
    int, typer.Option("--duration-ms", min=10, max=10_000, help="Simulated time per point.")
]


@app.command("livelock", cls=_Command)
def livelock_command(
    out: Annotated[
        Path, typer.Option("-o", "--out", help="PNG file for the delivered-vs-offered plot.")
    ] = Path("runs/livelock.png"),
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the curves as JSON on stdout.")
    ] = False,
    duration_ms: _PointDurationOption = 100,
) -> None:
    """Receive livelock: forwarded rate against offered load for four designs.

    Interrupt per packet, static ITR, fast interrupt + taskqueue and polling
    with a quota, on one 2006 Opteron core forwarding 64-byte frames between
    two 82546 ports; the plot is saved as a PNG.
    """
    from holdoff import livelock

    _check_output_file(out, "--out")  # a folder, a FIFO, a path under a file
    with _stderr().status("livelock: running 4 designs x 12 loads"):
        data = livelock.curves(duration_ms=duration_ms)
    png = livelock.plot(data, out)
    if json_out:
        sys.stdout.write(json.dumps({k: [list(r) for r in v] for k, v in data.items()}) + "\n")
        return
    t = Table(title="forwarded kpackets/s by offered load")
    t.add_column("offered kpps", justify="right")
    for design in data:
        t.add_column(design, justify="right")
    first = next(iter(data.values()))
    for i, (offered, _) in enumerate(first):
        t.add_row(
            f"{offered / 1000:,.0f}", *[f"{rows[i][1] / 1000:,.0f}" for rows in data.values()]
        )
    _stdout().print(t)
    _stderr().print(f"plot saved to {png}")


@app.command("experiment", cls=_Command)
def experiment_command(
    name: Annotated[str, typer.Argument(help="The experiment: napi-modes.", show_default=False)],
    out: Annotated[
        Path,
        typer.Option("-o", "--out", help="Folder for the table (parquet) and the HTML report."),
    ] = Path("runs/experiments"),
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the table as JSON on stdout.")
    ] = False,
    duration_ms: _PointDurationOption = 50,
    executor: _ExecutorOption = "process",
    workers: _WorkersOption = None,
) -> None:
    """Run a bundled experiment and write its table and HTML report.

    napi-modes: p99 latency and server CPU against offered load, up to and
    past saturation, for an interrupt-driven server, NAPI deferral, IRQ
    suspension and busy polling (open-loop request/response, xeon-modern,
    i210); a curve per mode and each mode's saturation throughput.
    """
    from holdoff import experiments

    if name != "napi-modes":
        _fail(f"unknown experiment {name!r}; allowed: napi-modes", 2)
    if executor not in ("serial", "process", "ray"):
        _fail(f"unknown executor {executor!r}; allowed: serial, process, ray", 2)
    _check_output_folder(out, "--out")
    loads = experiments.DEFAULT_LOADS
    with _stderr().status(
        f"napi-modes: running {len(experiments.MODES)} modes x {len(loads)} loads"
    ):
        table = experiments.run_napi_modes(
            loads,
            duration_ms=duration_ms,
            executor=executor,  # type: ignore[arg-type]
            workers=workers,
        )
    try:
        html = experiments.write_napi_modes(table, out)
    except OSError as err:
        _fail(f"cannot write the table and report to --out {out}: {err.strerror or err}", 1)
    if json_out:
        sys.stdout.write(table.to_json(orient="records") + "\n")
        return
    t = Table(title="p99 latency [µs] (server CPU busy) by offered load")
    t.add_column("offered req/s", justify="right")
    for mode in experiments.MODES:
        t.add_column(mode, justify="right")
    for load in loads:
        cells = []
        for mode in experiments.MODES:
            row = table[(table["mode"] == mode) & (table["offered_rps"] == load)].iloc[0]
            cells.append(f"{row['p99_us']:,.0f} ({row['server_cpu_busy']:.2f})")
        t.add_row(f"{load:,.0f}", *cells)
    _stdout().print(t)
    sat = Table(title="saturation throughput")
    sat.add_column("mode")
    sat.add_column("req/s", justify="right")
    for mode, rps in experiments.saturation(table).itertuples(index=False):
        sat.add_row(str(mode), f"{rps:,.0f}")
    _stdout().print(sat)
    _stderr().print(f"report saved to {html}")


# -- bundled examples ------------------------------------------------------------------
