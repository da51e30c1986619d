"""`holdoff calibrate`: fit a host profile's costs to measured rows."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from holdoff.cli.common import (
    _check_file,
    _Command,
    _fail,
    _field_set_option,
    _read,
    _stderr,
    _stdout,
    _WorkersOption,
    app,
)
from holdoff.inputs import printable
from holdoff.stats import parse_seeds

_CALIBRATE_HELP = """Fit a host profile's costs to measurements of your machine.

ROWS.csv holds one measurement per row (`#` starts a comment). Columns:
`scenario` (the scenario file that sets the measurement up, relative to the
CSV; or --scenario for all rows); setup columns named by a scenario field path
(`generators[0].rate_pps`, `hosts[0].nics[0].moderation.itr_per_s`, or
duration_ms, seed, sample_interval_us); measured columns, any subset per row
(empty = not measured): throughput_mbps (an app's goodput, iperf), 
interrupts_per_s (the host's NICs, all vectors), cpu_pct (busy CPU in % of ONE
core: mpstat -P ALL per-core busy summed, top), cpu_pct_all (% of all cores:
mpstat's `all` line), rx_pps (frames received), latency_us (an app's p50,
sockperf/ping), latency_p99_us; optional `weight`, `app` and `label`.

The fit (scipy least squares on model/measured - 1) writes a profile file
that scenarios name as profile = "my-host.toml", and prints the residual per
row. Rows that cannot identify a cost are refused, naming the cost and the
row that would identify it. See docs/calibrate.md.
"""


def _calibration_number(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def _calibration_table(cal: Any) -> tuple[Table, Table]:
    rows = Table(title="rows: measured vs model")
    for col, justify in (("row", "right"), ("label", "left"), ("column", "left")):
        rows.add_column(col, justify=justify)  # type: ignore[arg-type]
    for col in ("measured", "model", "residual"):
        rows.add_column(col, justify="right")
    for r in cal.rows:
        for i, v in enumerate(r["values"]):
            model, residual = _calibration_number(v["model"]), f"{v['residual_pct']:+.2f} %"
            if v.get("model_ci95"):
                lo, hi = v["model_ci95"]
                model += f" ± {_calibration_number((hi - lo) / 2)}"
                rlo, rhi = v["residual_pct_ci95"]
                residual = f"{v['residual_pct']:+.2f} ± {(rhi - rlo) / 2:.2f} %"
            rows.add_row(
                str(r["row"]) if i == 0 else "",
                Text(printable(r["label"])) if i == 0 else "",
                v["column"],
                _calibration_number(v["measured"]),
                model,
                residual,
            )
    costs = Table(title=f"costs of {cal.name} (base {cal.base})")
    costs.add_column("cost")
    for col in ("base", "start", "fitted", "fitted / base"):
        costs.add_column(col, justify="right")
    for c, v in cal.fitted.items():
        b = cal.base_costs[c]
        costs.add_row(c, f"{b:,}", f"{cal.start[c]:,}", f"{v:,}", f"{v / b:.3f}" if b else "-")
    return rows, costs


@app.command("calibrate", cls=_Command, help=_CALIBRATE_HELP)
def calibrate_command(
    rows_file: Annotated[
        Path, typer.Argument(metavar="ROWS.csv", help="The measurements (CSV).", show_default=False)
    ],
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="The profile to start from: a preset (apu2, xeon-modern, ...) or a profile "
            "file. Default: the --host's profile in the first row's scenario.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Write the fitted profile file (TOML) here."),
    ] = None,
    costs: Annotated[
        str | None,
        typer.Option(
            "--costs",
            help="Costs to fit, comma-separated.",
            show_default="irq_entry_exit_ns, rx_packet_ns, tx_packet_ns, copy_ps_per_byte, "
            "context_switch_ns",
        ),
    ] = None,
    scenario: Annotated[
        Path | None,
        typer.Option("--scenario", help="Scenario file of rows without a `scenario` cell."),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option(
            "--host",
            help="The calibrated host (it runs with --profile in every row).",
            show_default="the one host whose profile is --profile",
        ),
    ] = None,
    app_name: Annotated[
        str | None,
        typer.Option(
            "--app",
            help="Application whose throughput/latency the rows measured.",
            show_default="the one that reports it",
        ),
    ] = None,
    start: Annotated[
        list[str] | None,
        typer.Option(
            "--start",
            metavar="COST=VALUE",
            help="Start a fitted cost here instead of at the profile's value (repeatable).",
            show_default=False,
        ),
    ] = None,
    assignments: Annotated[
        list[str] | None,
        _field_set_option(
            "Change a field in every row's scenario (repeatable), e.g. duration_ms=300."
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="Name of the written profile.",
            show_default="the output file's stem, else <base>-calibrated",
        ),
    ] = None,
    workers: _WorkersOption = None,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            help="Run the fitted costs at N seeds per row: each model value is then the mean "
            "with its 95 % interval, and so is the residual (the fit itself uses each row's "
            "seed).",
        ),
    ] = 1,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the fit as JSON on stdout, nothing else.")
    ] = False,
) -> None:
    from holdoff import calibrate as cb

    err_console = _stderr()
    progress = cb.ProgressLines(err_console.file, terminal=err_console.is_terminal)
    if output is not None and output.is_dir():
        _fail(f"--output {printable(str(output))}: is a folder; give a file name (.toml)", 2)
    try:
        parse_seeds(seeds)
    except ValueError as err:
        _fail(str(err), 2)
    _check_file(rows_file, "calibration CSV")
    if scenario is not None:
        _read(scenario)  # kind, size, encoding and nesting checked before the fit reads it
    try:
        if profile is None:
            if host is None:
                raise cb.CalibrationError(
                    "give --profile (the preset or profile file to start from) or --host"
                )
            profile = cb.profile_of_host(rows_file, host, scenario)
        cal = cb.calibrate(
            rows_file,
            profile=profile,
            costs=cb.parse_costs(costs),
            scenario=scenario,
            host=host,
            app=app_name,
            start=cb.parse_start(start or []),
            assignments=assignments or [],
            name=name or (output.stem if output is not None else None),
            jobs=workers,
            progress=progress,
            seeds=seeds,
        )
    except cb.CalibrationError as err:
        progress.clear()
        _fail(str(err), 2)
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the workers are ended; nothing was written.
        progress.clear()
        err_console.print(Text("interrupted: the fit was stopped; no profile written"))
        raise typer.Exit(130) from None
    progress.clear()
    if output is not None:
        try:
            output.write_text(cal.to_toml(), encoding="utf-8")
        except OSError as err:
            _fail(f"cannot write {output}: {err}", 1)
    if json_output:
        sys.stdout.write(json.dumps(cal.to_json(), sort_keys=True) + "\n")
        return
    console = _stdout()
    for t in _calibration_table(cal):
        console.print(t)
    console.print(
        f"rms residual {cal.rms_residual_pct:.2f} %, {cal.evaluations} model evaluations "
        f"({cal.status})"
    )
    if output is not None:
        console.print(Text(f"wrote {output}", style="dim"))
