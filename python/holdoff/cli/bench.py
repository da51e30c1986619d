"""`holdoff bench`: simulated packets per wall second, host scaling, sweep points per second."""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from holdoff import _core
from holdoff.api import examples_dir
from holdoff.cli.common import (
    BENCH_HOSTS_DURATION_MS,
    BENCH_SCENARIO,
    _Command,
    _cpus,
    _duration_ms_option,
    _fail,
    _load_sweep_or_exit,
    _read,
    _run,
    _stderr,
    _stdout,
    app,
)
from holdoff.inputs import scenario_name

# The 10 GbE benchmark (`holdoff bench --ten-gbe`): 64-byte frames at
# 14.88 Mframes/s on 8 RSS queues.
BENCH_10G_SCENARIO = "bench-64b-10g-8q-napi.toml"


@app.command("bench", cls=_Command)
def bench_command(
    repeat: Annotated[int, typer.Option("--repeat", "-n", min=1, help="Number of runs.")] = 3,
    scenario: Annotated[
        Path | None,
        typer.Option(
            "--scenario", help=f"Scenario file to run (default: the packaged {BENCH_SCENARIO})."
        ),
    ] = None,
    ten_gbe: Annotated[
        bool,
        typer.Option(
            "--ten-gbe",
            help=f"Run the packaged 10 GbE scenario ({BENCH_10G_SCENARIO}: 64-byte frames "
            "at 14.88 Mframes/s from 1024 flows on 8 RSS queues) instead of the default.",
        ),
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the measurements as JSON on stdout.")
    ] = False,
    sweep_file: Annotated[
        Path | None,
        typer.Option(
            "--sweep",
            help="Measure sweep throughput instead: points per second of this sweep file "
            "on local worker processes (e.g. examples/sweep-bench.toml).",
        ),
    ] = None,
    workers: Annotated[
        str, typer.Option("--workers", help="With --sweep: worker counts to compare, e.g. 1,2.")
    ] = "1,2",
    hosts: Annotated[
        str | None,
        typer.Option(
            "--hosts",
            help="Scaling benchmark: replicate the scenario over N independent hosts (a "
            "comma-separated list runs each count, e.g. 1,16,64), each count in a child "
            "process; reports packets/s, events per packet, peak queue length and peak RSS.",
        ),
    ] = None,
    duration_ms: Annotated[
        int | None,
        _duration_ms_option(
            "With --hosts: simulated time of each run of the largest host count [ms] "
            f"(default {BENCH_HOSTS_DURATION_MS}); a count with k times fewer hosts "
            "simulates k times longer, so every run does the same work."
        ),
    ] = None,
) -> None:
    """Run a fixed scenario several times and report simulated packets per wall second.

    Also reported: the ratio to real time (simulated seconds per wall second;
    above 1 the simulation runs faster than the modelled machine would).

    With --hosts N[,N...]: the same scenario replicated over N independent
    hosts (one JSON object with --json for one count, {"results": [...]} for
    several). With --sweep FILE: run the sweep with each worker count (a
    fresh store each time) and report points per second and the speedup.
    """
    if hosts is not None and sweep_file is not None:
        _fail("--hosts and --sweep measure different things: give one of them", 2)
    if ten_gbe and scenario is not None:
        _fail("--ten-gbe picks the packaged 10 GbE scenario: give it or --scenario, not both", 2)
    if ten_gbe:
        try:
            scenario = examples_dir() / BENCH_10G_SCENARIO
        except FileNotFoundError as err:
            _fail(str(err), 2)
    if duration_ms is not None and hosts is None:
        _fail("--duration-ms applies to the scaling benchmark: use it with --hosts", 2)
    from holdoff import benchscale

    try:
        benchscale.check_bench_options(repeat, duration_ms)
    except ValueError as err:
        _fail(str(err), 2)
    try:
        _bench_command(repeat, scenario, json_output, sweep_file, workers, hosts, duration_ms)
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the sweep's workers or the child run are ended.
        _stderr().print("interrupted: the benchmark was stopped; nothing measured is printed")
        raise typer.Exit(130) from None


def _bench_command(
    repeat: int,
    scenario: Path | None,
    json_output: bool,
    sweep_file: Path | None,
    workers: str,
    hosts: str | None,
    duration_ms: int | None,
) -> None:
    if sweep_file is not None:
        _bench_sweep(sweep_file, workers, repeat, json_output)
        return
    if scenario is None:
        try:
            scenario = examples_dir() / BENCH_SCENARIO
        except FileNotFoundError as err:
            _fail(str(err), 2)
    text = _read(scenario)
    if hosts is not None:
        _bench_hosts(text, str(scenario), hosts, repeat, duration_ms, json_output)
        return
    runs: list[dict[str, Any]] = []
    name = ""
    for _ in range(repeat):
        result = _run(text, None)
        name = result.scenario
        perf = dict(result.perf)
        wall = float(perf.get("wall_time_s", 0.0))
        # Simulated seconds per wall second.
        perf["realtime_ratio"] = result.sim_time_ns / 1e9 / wall if wall > 0 else 0.0
        runs.append(perf)
    report = _bench_report(name, str(scenario), runs)
    if json_output:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    _stdout().print(_bench_table(report))


def _bench_report(name: str, path: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    def best_and_median(key: str, best: Any) -> dict[str, float]:
        values = [float(r[key]) for r in runs]
        return {"best": float(best(values)), "median": float(statistics.median(values))}

    return {
        "scenario": name,
        "file": path,
        # `profile-guided` (make install) or `plain`: figures differ by ~10 %.
        "build": _core.build(),
        "repeat": len(runs),
        "sim_packets": runs[0]["sim_packets"] if runs else 0,
        "events_processed": runs[0]["events_processed"] if runs else 0,
        "packets_per_s": best_and_median("packets_per_s", max),
        "events_per_s": best_and_median("events_per_s", max),
        "realtime_ratio": best_and_median("realtime_ratio", max),
        "wall_time_s": best_and_median("wall_time_s", min),
        "runs": runs,
    }


def _numbers_table(
    title: str, caption: str, columns: Sequence[str], cells: Iterable[Sequence[str]]
) -> Table:
    """A table of right-aligned figures, one row per measured run."""
    table = Table(
        title=title,
        caption=caption,
        title_justify="left",
        caption_justify="left",
        header_style="bold",
    )
    for col in columns:
        table.add_column(col, justify="right")
    for row in cells:
        table.add_row(*row)
    return table


def _bench_table(report: dict[str, Any]) -> Table:
    table = Table(
        title=f"bench: {report['scenario']}",
        caption=f"{report['repeat']} run{'s' if report['repeat'] != 1 else ''} of "
        f"{report['sim_packets']:,} simulated packets, "
        f"{report['events_processed']:,} events; {report['build']} build of the core",
        title_justify="left",
        caption_justify="left",
        header_style="bold",
    )
    table.add_column("measure")
    table.add_column("best", justify="right")
    table.add_column("median", justify="right")
    rows = (
        ("simulated packets / wall s", "packets_per_s", "{:,.0f}"),
        ("events / s", "events_per_s", "{:,.0f}"),
        ("simulated s / wall s", "realtime_ratio", "{:.3f}"),
        ("wall time (s)", "wall_time_s", "{:.4f}"),
    )
    for label, key, fmt in rows:
        table.add_row(label, fmt.format(report[key]["best"]), fmt.format(report[key]["median"]))
    return table


def _bench_hosts(
    text: str,
    path: str,
    hosts_text: str,
    repeat: int,
    duration_ms: int | None,
    json_output: bool,
) -> None:
    from holdoff import benchscale

    try:
        counts = benchscale.parse_hosts(hosts_text)
    except ValueError as err:
        _fail(str(err), 2)
    ms = duration_ms if duration_ms is not None else BENCH_HOSTS_DURATION_MS
    try:
        _core.validate_toml(benchscale.replicate(text, 1, ms))
    except benchscale.BenchError as err:
        _fail(str(err), 2)
    except _core.ScenarioError as err:
        _fail(str(err), 2)
    err_console = _stderr()

    def progress(round_index: int, rounds: int, hosts: int) -> None:
        if not json_output or err_console.is_terminal:
            err_console.print(f"round {round_index + 1}/{rounds}: {hosts} hosts", highlight=False)

    try:
        rows = benchscale.measure_counts(text, counts, repeat, ms, progress)
    except benchscale.BenchError as err:
        _fail(str(err), 1)
    for row in rows:
        row.update({"scenario": scenario_name(text) or "", "file": path, "build": _core.build()})
    if json_output:
        report: dict[str, Any] = rows[0] if len(rows) == 1 else {"results": rows}
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    first = f"{rows[0]['hosts']} host{'s' if rows[0]['hosts'] != 1 else ''}"
    caption = (
        f"{ms} ms simulated per run at {max(counts)} hosts "
        f"(fewer hosts simulate longer: the same work per run), "
        f"{repeat} round{'s' if repeat != 1 else ''} of every "
        f"host count (best / median), each count in its own process; cost = wall time per "
        f"packet relative to {first} in the same round, median of the rounds (range); "
        f"{_core.build()} build of the core"
    )
    columns = (
        "hosts",
        "sim ms",
        "sim packets",
        "M pkt/s best",
        "M pkt/s median",
        "cost",
        "events/pkt",
        "peak queue",
        "peak RSS (MB)",
    )
    cells = [
        (
            str(row["hosts"]),
            f"{row['duration_ms']:,}",
            f"{row['sim_packets']:,}",
            f"{row['packets_per_s']['best'] / 1e6:.2f}",
            f"{row['packets_per_s']['median'] / 1e6:.2f}",
            f"{row['cost_vs_first']:.2f}x ({row['cost_vs_first_range'][0]:.2f}-"
            f"{row['cost_vs_first_range'][1]:.2f})",
            f"{row['events_per_packet']:.3f}",
            f"{row['peak_queue_len']:,}",
            f"{row['peak_rss_bytes'] / 1e6:.0f}",
        )
        for row in rows
    ]
    title = f"bench --hosts: {rows[0]['scenario']}"
    _stdout().print(_numbers_table(title, caption, columns, cells))


def _bench_sweep(file: Path, workers_text: str, repeat: int, json_output: bool) -> None:
    import tempfile

    from holdoff import benchscale
    from holdoff import sweeps as sw

    try:
        counts = benchscale.parse_worker_counts(workers_text, sw.max_workers())
    except ValueError as err:
        _fail(str(err), 2)
    spec = _load_sweep_or_exit(file)
    rows: list[dict[str, Any]] = []
    for n in counts:
        walls = []
        points = 0
        for _ in range(repeat):
            with tempfile.TemporaryDirectory(prefix="holdoff-bench-") as tmp:
                try:
                    res = sw.run_sweep(spec, store=tmp, executor="process", workers=n)
                except (_core.ScenarioError, _core.SimulationError, sw.SweepError) as err:
                    _fail(str(err), 1)
            walls.append(res.wall_time_s)
            points = len(res.points)
        best = min(walls)
        rows.append(
            {
                "workers": n,
                "points": points,
                "wall_time_s": {"best": best, "median": statistics.median(walls)},
                "points_per_s": {
                    "best": points / best,
                    "median": points / statistics.median(walls),
                },
            }
        )
    base = rows[0]["points_per_s"]["best"]
    for row in rows:
        row["speedup"] = row["points_per_s"]["best"] / base
    report = {
        "sweep": spec.name,
        "file": str(file),
        "repeat": repeat,
        "cpus": _cpus(),
        "runs": rows,
    }
    if json_output:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    caption = (
        f"{rows[0]['points']} points per run, best of {repeat}, {_cpus()} cores; "
        "each run with a fresh result store"
    )
    cells = [
        (
            str(row["workers"]),
            f"{row['wall_time_s']['best']:.3f}",
            f"{row['points_per_s']['best']:.1f}",
            f"{row['speedup']:.2f}x",
        )
        for row in rows
    ]
    columns = ("workers", "wall time (s)", "points / s", "speedup")
    _stdout().print(_numbers_table(f"sweep bench: {spec.name}", caption, columns, cells))
