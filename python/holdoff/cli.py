"""The ``holdoff`` command line: a thin layer over :mod:`holdoff.api`.

Exit codes: 0 success, 1 the simulation failed or the results could not be
written, 2 a usage error, a missing file or an invalid scenario. With
``--json`` stdout carries only JSON.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from holdoff import _core
from holdoff.api import examples_dir, run_text, scenario_name, validate_text
from holdoff.result import RunResult
from holdoff.summary import SUMMARY_WIDTH, render_summary

BENCH_SCENARIO = "bench-64b-1g-itr8000-napi.toml"

app = typer.Typer(
    name="holdoff",
    help="A workbench for NIC interrupt moderation: run scenarios, validate them, benchmark.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _stdout() -> Console:
    console = Console(highlight=False, markup=False)
    if not console.is_terminal:
        # Piped or redirected: as wide as summary.txt instead of rich's 80 columns.
        console.width = max(console.width, SUMMARY_WIDTH)
    return console


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, markup=False)


def _fail(message: str, code: int) -> NoReturn:
    _stderr().print(Text(f"error: {message}", style="red"))
    raise typer.Exit(code)


def _read(file: Path) -> str:
    """The scenario text of ``file``; a missing or unreadable file exits 2."""
    if not file.exists():
        _fail(f"scenario file not found: {file}", 2)
    if file.is_dir():
        _fail(f"scenario path is a folder, not a file: {file}", 2)
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        _fail(f"cannot read scenario file {file}: {err}", 2)


def _run(text: str, seed: int | None) -> RunResult:
    """Runs ``text``; scenario errors exit 2, simulation errors exit 1."""
    try:
        return run_text(text, seed=seed)
    except _core.ScenarioError as err:
        _fail(str(err), 2)
    except _core.SimulationError as err:
        _fail(str(err), 1)


SeedOption = Annotated[
    int | None,
    typer.Option("--seed", min=0, max=2**64 - 1, help="Override the scenario's seed."),
]


@app.command("run")
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
) -> None:
    """Run a scenario and print its summary (or its JSON report)."""
    result = _run(_read(file), seed)
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


@app.command("validate")
def validate_command(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)],
) -> None:
    """Check a scenario file without running it."""
    text = _read(file)
    try:
        validate_text(text)
    except _core.ScenarioError as err:
        _fail(str(err), 2)
    _stdout().print(Text(f"ok: {scenario_name(text) or file.stem}", style="green"))


@app.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of scenario files."""
    sys.stdout.write(_core.schema_json().rstrip("\n") + "\n")


@app.command("version")
def version_command() -> None:
    """Print the version."""
    sys.stdout.write(f"holdoff {_core.version()}\n")


@app.command("bench")
def bench_command(
    repeat: Annotated[int, typer.Option("--repeat", "-n", min=1, help="Number of runs.")] = 3,
    scenario: Annotated[
        Path | None,
        typer.Option(
            "--scenario", help=f"Scenario file to run (default: the packaged {BENCH_SCENARIO})."
        ),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the measurements as JSON on stdout.")
    ] = False,
) -> None:
    """Run a fixed scenario several times and report simulated packets per wall second."""
    if scenario is None:
        try:
            scenario = examples_dir() / BENCH_SCENARIO
        except FileNotFoundError as err:
            _fail(str(err), 2)
    text = _read(scenario)
    runs: list[dict[str, Any]] = []
    name = ""
    for _ in range(repeat):
        result = _run(text, None)
        name = result.scenario
        runs.append(dict(result.perf))
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
        "repeat": len(runs),
        "sim_packets": runs[0]["sim_packets"] if runs else 0,
        "events_processed": runs[0]["events_processed"] if runs else 0,
        "packets_per_s": best_and_median("packets_per_s", max),
        "events_per_s": best_and_median("events_per_s", max),
        "wall_time_s": best_and_median("wall_time_s", min),
        "runs": runs,
    }


def _bench_table(report: dict[str, Any]) -> Table:
    table = Table(
        title=f"bench: {report['scenario']}",
        caption=f"{report['repeat']} run{'s' if report['repeat'] != 1 else ''} of "
        f"{report['sim_packets']:,} simulated packets, "
        f"{report['events_processed']:,} events",
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
        ("wall time (s)", "wall_time_s", "{:.4f}"),
    )
    for label, key, fmt in rows:
        table.add_row(label, fmt.format(report[key]["best"]), fmt.format(report[key]["median"]))
    return table


@app.command("reproduce")
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
) -> None:
    """Run bundled reproduction cases and compare with the published numbers.

    For every published number: the published value, its source, the
    simulated value, the tolerance and pass/fail. Exit code 0 if every check
    passes, 1 if any misses.
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
    wanted = cases or ids
    unknown = [c for c in wanted if c not in ids]
    if unknown:
        _fail(f"unknown case {', '.join(unknown)}; available: {', '.join(ids)}", 2)
    err_console = _stderr()
    results = []
    for cid in wanted:
        case = rp.load_case(cid)
        with err_console.status(f"{cid}: running {len(case.runs)} scenario(s)") as status:
            try:
                res = rp.run_case(case, progress=lambda m: status.update(m))
            except (_core.ScenarioError, _core.SimulationError) as err:
                _fail(f"{cid}: {err}", 1)
        results.append(res)
        png = rp.plot_netpipe(res, plots / f"{cid}-netpipe.png")
        if png is not None and not json_out:
            err_console.print(f"{cid}: NetPIPE curves saved to {png}")
    if json_out:
        sys.stdout.write(json.dumps(rp.to_json(results), indent=2) + "\n")
    else:
        out = _stdout()
        for res in results:
            out.print(_reproduce_table(res))
            out.print(_reproduce_sources(res))
    if not all(r.ok for r in results):
        raise typer.Exit(1)


def _reproduce_table(res: Any) -> Table:
    t = Table(title=f"{res.case.id}: {res.case.title}", caption=res.case.source)
    for col in ["#", "check", "published", "simulated", "unit", "tolerance", "result"]:
        t.add_column(col, justify="right" if col in ("published", "simulated") else "left")
    for i, c in enumerate(res.checks, start=1):
        sim = "n/a" if c.simulated is None else f"{c.simulated:,.2f}"
        dev = c.deviation_rel
        verdict = "pass" if c.ok else "MISS"
        if dev is not None:
            verdict += f" ({dev:+.1%})"
        t.add_row(
            str(i),
            c.name,
            f"{c.published:,.2f}",
            sim,
            c.unit,
            f"±{c.tolerance_rel:.0%}",
            Text(verdict, style="green" if c.ok else "red"),
        )
    return t


def _reproduce_sources(res: Any) -> str:
    lines = [
        f"  [{i}] {c.source}" + (f"\n      note: {c.note}" if c.note else "")
        for i, c in enumerate(res.checks, start=1)
    ]
    return "sources:\n" + "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI with ``argv`` (default: ``sys.argv[1:]``) and returns the exit code."""
    args = list(argv) if argv is not None else sys.argv[1:]
    try:
        app(args=args, prog_name="holdoff")
    except SystemExit as exit_:
        code = exit_.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
