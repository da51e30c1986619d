"""The ``holdoff`` command line: a thin layer over :mod:`holdoff.api`.

Exit codes: 0 success, 1 the simulation failed or the results could not be
written, 2 a usage error, a missing file or an invalid scenario. With
``--json`` stdout carries only JSON.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time
import tomllib
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from holdoff import _core
from holdoff.api import examples_dir, run_text, scenario_name, validate_text
from holdoff.result import RunResult
from holdoff.summary import SUMMARY_WIDTH, render_summary

BENCH_SCENARIO = "bench-64b-1g-itr8000-napi.toml"
# Simulated time of each run of `holdoff bench --hosts` [ms].
BENCH_HOSTS_DURATION_MS = 50


def _flags_without_metavar(params: Sequence[Any]) -> None:
    # Boolean flags take no value: show `--json`, not `--json <bool>`.
    for param in params:
        if getattr(param, "is_flag", False):
            param.metavar = ""


class _Command(TyperCommand):
    """A command whose help shows flags as flags (no `<bool>` after them)."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        _flags_without_metavar(params)
        return params


class _Group(TyperGroup):
    """The command group, with the same help habits as :class:`_Command`."""

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        _flags_without_metavar(params)
        return params


_CONTEXT = {"help_option_names": ["-h", "--help"]}

# Options shared by the commands that run many points (sweep, tune,
# experiment, calibrate): one declaration each.
_NoStoreOption = Annotated[
    bool, typer.Option("--no-store", help="Compute every point; store nothing.")
]
_ExecutorOption = Annotated[
    str, typer.Option("--executor", help="serial, process (local processes) or ray.")
]
_WorkersOption = Annotated[
    int | None,
    typer.Option("--workers", "-j", min=1, help="Worker processes.", show_default="all cores"),
]

app = typer.Typer(
    name="holdoff",
    help="A workbench for NIC interrupt moderation: run scenarios and sweeps, reproduce "
    "published measurements, write reports.",
    cls=_Group,
    context_settings=_CONTEXT,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version_callback(value: bool) -> None:
    if value:
        sys.stdout.write(f"holdoff {_core.version()}\n")
        raise typer.Exit()


@app.callback()
def _main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """A workbench for NIC interrupt moderation: run scenarios and sweeps, reproduce
    published measurements, write reports."""


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


def _toml_or_none(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _refuse_other_kind(file: Path, text: str, want: str) -> None:
    """Exit 2 pointing at the right command when a sweep file is run or a scenario swept."""
    data = _toml_or_none(text)
    if data is None:
        return
    is_sweep = "base" in data and ("grid" in data or "points" in data or "set" in data)
    is_scenario = "base" not in data and ("hosts" in data or "generators" in data)
    if want == "scenario" and is_sweep:
        _fail(
            f"{file} is a sweep file (it has `base` and a grid of fields), not a scenario; "
            f"run it with `holdoff sweep {file}`",
            2,
        )
    if want == "sweep" and is_scenario:
        _fail(
            f"{file} is a scenario file, not a sweep (it has no `base`); "
            f"run it with `holdoff run {file}`",
            2,
        )


def _apply_assignments(text: str, assignments: list[str]) -> str:
    """``text`` with every ``--set path=value`` applied; errors name the path and exit 2."""
    import tomli_w

    from holdoff import sweeps as sw

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        _fail(f"the scenario is not valid TOML: {err}", 2)
    for item in assignments:
        try:
            path, value = sw.parse_assignment(item)
            sw.set_path(doc, path, value)
        except sw.SweepError as err:
            _fail(f"--set {err}", 2)
    return tomli_w.dumps(doc)


def _run(
    text: str,
    seed: int | None,
    progress: _ProgressLine | None = None,
    base_dir: Path | None = None,
) -> RunResult:
    """Runs ``text``; scenario errors exit 2, simulation errors exit 1.

    ``base_dir``: the scenario file's directory (relative capture paths)."""
    try:
        return run_text(text, seed=seed, progress=progress, base_dir=base_dir)
    except _core.ScenarioError as err:
        _fail(str(err), 2)
    except _core.SimulationError as err:
        _fail(str(err), 1)
    finally:
        if progress is not None:
            progress.clear()


class _ProgressLine:
    """One updating line on stderr: simulated time, speed and ETA of a run.

    On a terminal the line is rewritten in place; elsewhere (``--progress``
    into a file or pipe) a new line is written about once a second.
    """

    def __init__(self, terminal: bool) -> None:
        self.started = time.perf_counter()
        self.terminal = terminal
        self.shown = False
        self.last_line = 0.0

    def __call__(self, now_ns: int, end_ns: int, events: int) -> None:
        wall = max(time.perf_counter() - self.started, 1e-9)
        if wall < 0.5:
            return  # short runs show nothing
        speed = now_ns / 1e9 / wall  # simulated seconds per wall second
        eta = (end_ns - now_ns) / 1e9 / speed if speed > 0 else float("inf")
        line = (
            f"t = {now_ns / 1e6:,.1f} / {end_ns / 1e6:,.1f} ms simulated "
            f"({100 * now_ns / max(end_ns, 1):.0f}%), {speed:.3g}x real time, "
            f"{events:,} events, ETA {_duration(eta)}"
        )
        if self.terminal:
            sys.stderr.write("\r" + line + "\x1b[K")
            self.shown = True
        elif wall - self.last_line >= 1.0 or not self.last_line:
            sys.stderr.write(line + "\n")
            self.last_line = wall
        sys.stderr.flush()

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.shown = False


def _duration(seconds: float) -> str:
    if seconds == float("inf"):
        return "?"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} m {secs:02d} s" if minutes else f"{secs} s"


SeedOption = Annotated[
    int | None,
    typer.Option("--seed", min=0, max=2**64 - 1, help="Override the scenario's seed."),
]


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


@contextlib.contextmanager
def _store_warnings() -> Iterator[None]:
    """Prints each corrupt-store-entry warning as one ``warning:`` line on stderr."""
    from holdoff.store import CorruptEntryWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CorruptEntryWarning)
        try:
            yield
        finally:
            for w in caught:
                if issubclass(w.category, CorruptEntryWarning):
                    line = Text(f"warning: {w.message}", style="yellow")
                    _stderr().print(line, soft_wrap=True)
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _this_command() -> str:
    """The command line that started this process, as ``holdoff ...``."""
    import shlex

    return shlex.join(["holdoff", *sys.argv[1:]])


def _interrupted_run(err: KeyboardInterrupt, json_output: bool) -> NoReturn:
    """Ctrl-C during ``holdoff run``: the partial summary, then exit 130."""
    partial: RunResult | None = getattr(err, "result", None)
    at_ns = getattr(err, "interrupted_at_ns", None)
    when = f"{at_ns / 1e6:,.3f} ms" if isinstance(at_ns, int) else "an unknown time"
    if partial is not None:
        if json_output:
            sys.stdout.write(partial.to_json() + "\n")
            sys.stdout.flush()
        else:
            _stdout().print(render_summary(partial))
    _stderr().print(Text(f"interrupted at t = {when} simulated", style="yellow"), soft_wrap=True)
    raise typer.Exit(130)


@app.command("explain", cls=_Command)
def explain_command(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="What the host shows: ethtool --json -c or ethtool -c output, sysctl lines "
            "(dev.em.0.enable_aim: 1), module-parameter, sysfs or #define lines; - reads stdin.",
            show_default=False,
        ),
    ] = None,
    driver: Annotated[
        str,
        typer.Option(
            "--driver",
            "-d",
            help="One of linux-e1000, linux-e1000-5x, linux-e1000e, linux-igb, linux-ixgbe, "
            "linux-dim, freebsd-em, freebsd-igb, openbsd-em.",
            show_default=False,
        ),
    ] = "",
    chip: Annotated[
        str | None,
        typer.Option(
            "--chip", help="Controller, e.g. 82546, 82574, i210 (default: the driver's usual one)."
        ),
    ] = None,
    assignments: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            "-s",
            metavar="KEY=VALUE",
            help="A knob value (repeatable), e.g. rx-usecs=50; applied after the files.",
            show_default=False,
        ),
    ] = None,
    speed: Annotated[
        int | None,
        typer.Option(
            "--speed",
            min=10,
            help="Link speed in Mb/s for the ring and TSQ checks (default: the chip's).",
        ),
    ] = None,
    rx_ring: Annotated[
        int | None,
        typer.Option("--rx-ring", min=8, help="RX descriptors in use (default: the driver's)."),
    ] = None,
    tx_ring: Annotated[
        int | None,
        typer.Option("--tx-ring", min=8, help="TX descriptors in use (default: the driver's)."),
    ] = None,
    ring_file: Annotated[
        Path | None,
        typer.Option("--ring", help="ethtool -g (or --json -g) output giving the ring sizes."),
    ] = None,
    tsq_bytes: Annotated[
        int,
        typer.Option(
            "--tsq-bytes", min=1, help="A Linux sender's tcp_limit_output_bytes, in bytes."
        ),
    ] = 1 << 20,
    iface: Annotated[
        str, typer.Option("--iface", help="Interface name in the printed commands.")
    ] = "eth0",
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the explanation as JSON.")
    ] = False,
) -> None:
    """Say what the NIC applies for a driver's settings: registers and units, the
    interval and highest interrupt rate per vector, the keys the driver ignores or
    rounds, the values that select an adaptive mode, and warnings with numbers."""
    from holdoff import knobs

    if not driver:
        _fail(f"--driver is required: one of {', '.join(knobs.DRIVERS)}", 2)
    try:
        knobs.chip_for(driver, chip)
        parsed = knobs.Parsed()
        for file in files or []:
            text = sys.stdin.read() if str(file) == "-" else _read_input(file)
            one = knobs.parse(text, driver)
            parsed.settings.update(one.settings)
            parsed.skipped += one.skipped
            parsed.notes += one.notes
        for item in assignments or []:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                _fail(f"--set {item!r}: expected KEY=VALUE, e.g. rx-usecs=50", 2)
            parsed.settings.update(knobs.parse(f"{key.strip()}={value}", driver).settings)
        if ring_file is not None:
            ring_rx, ring_tx = knobs.parse_ring(_read_input(ring_file))
            rx_ring = rx_ring or ring_rx
            tx_ring = tx_ring or ring_tx
        report = knobs.explain(
            driver,
            parsed.settings,
            chip=chip,
            extra_notes=parsed.notes,
            speed_mbps=speed,
            rx_ring=rx_ring,
            tx_ring=tx_ring,
            tsq_bytes=tsq_bytes,
            iface=iface,
        )
    except knobs.KnobError as err:
        _fail(f"{err.key}: {err.message}", 2)
    except (ValueError, KeyError, IndexError) as err:
        _fail(f"cannot read the input: {err}", 2)
    report["skipped"] = parsed.skipped
    if json_output:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    from holdoff.explain_view import render_explain

    _stdout().print(render_explain(report))


def _read_input(file: Path) -> str:
    """The text of an explain input; a missing or unreadable file exits 2."""
    if not file.exists():
        _fail(f"file not found: {file}", 2)
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        _fail(f"cannot read {file}: {err}", 2)


@app.command("tune", cls=_Command)
def tune_command(
    scenario: Annotated[
        Path | None,
        typer.Argument(
            help="A scenario file as the workload (instead of --capture or --mix).",
            show_default=False,
        ),
    ] = None,
    capture: Annotated[
        Path | None,
        typer.Option("--capture", help="A pcap/pcapng replayed at its own times into the host."),
    ] = None,
    mix: Annotated[
        str | None,
        typer.Option("--mix", help="A built-in workload: rr, bulk, mixed or forwarding."),
    ] = None,
    driver: Annotated[
        str,
        typer.Option(
            "--driver",
            "-d",
            help="linux-e1000, linux-e1000-5x, linux-e1000e, linux-igb, linux-dim, freebsd-em, "
            "freebsd-igb or openbsd-em.",
            show_default=False,
        ),
    ] = "",
    chip: Annotated[
        str | None,
        typer.Option("--chip", help="Controller, e.g. 82546, 82574, i210 (default: the driver's)."),
    ] = None,
    profile: Annotated[
        str,
        typer.Option(
            "--profile", help="Host profile: a preset name or a profile file (holdoff calibrate)."
        ),
    ] = "xeon-modern",
    objective: Annotated[
        str,
        typer.Option(
            "--objective",
            "-O",
            help='"p99<=100us" (least CPU within a latency budget), "cpu<=30%" (least p99 '
            'within a CPU budget), "max-throughput" or "pareto".',
        ),
    ] = "pareto",
    hosts: Annotated[
        list[str] | None,
        typer.Option(
            "--host",
            help="With a scenario: the host that takes the setting (repeatable; default all).",
            show_default=False,
        ),
    ] = None,
    app_name: Annotated[
        str | None,
        typer.Option("--app", help="The application whose latency counts (default: the first)."),
    ] = None,
    rate: Annotated[
        float | None,
        typer.Option("--rate", help="Offered load of --mix: requests/s (rr, mixed), frames/s."),
    ] = None,
    duration_ms: Annotated[
        int | None,
        typer.Option(
            "--duration-ms", min=1, help="Simulated time per point (default: the workload's)."
        ),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--knob",
            help="Search only this knob (repeatable); the others stay at the driver's defaults.",
            show_default=False,
        ),
    ] = None,
    search: Annotated[
        str, typer.Option("--search", help="auto (grid when small), grid or optuna.")
    ] = "auto",
    trials: Annotated[
        int, typer.Option("--trials", min=1, help="Points of an Optuna search.")
    ] = 96,
    seed: Annotated[int, typer.Option("--seed", min=0, help="The Optuna sampler's seed.")] = 1,
    store: Annotated[
        Path, typer.Option("--store", help="Result store folder (a killed tune resumes).")
    ] = Path("runs/store"),
    no_store: _NoStoreOption = False,
    executor: _ExecutorOption = "process",
    workers: _WorkersOption = None,
    iface: Annotated[
        str, typer.Option("--iface", help="Interface name in the printed commands.")
    ] = "eth0",
    report_file: Annotated[
        Path | None, typer.Option("--report", help="Write an HTML report of the tune here.")
    ] = None,
    json_output: Annotated[
        bool,
        typer.Option("--json", help="Print recommended, default and front as JSON, nothing else."),
    ] = False,
) -> None:
    """Search a driver's real moderation knobs on a workload and print the lines to paste.

    Every candidate is decoded into the registers the driver writes and run on
    the model; the recommendation is printed next to the driver's default with
    its expected p50/p99 latency, CPU, interrupt rate and throughput. Points
    go to the result store, so a stopped tune resumes. Progress goes to stderr.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from holdoff import knobs
    from holdoff import sweeps as sw
    from holdoff import tune as tn

    if not driver:
        _fail(f"--driver is required: one of {', '.join(knobs.DRIVERS)}", 2)
    given = [x for x in (scenario, capture, mix) if x is not None]
    if len(given) != 1:
        _fail("give exactly one workload: a SCENARIO file, --capture FILE or --mix NAME", 2)
    if executor not in sw.EXECUTORS:
        _fail(f"unknown executor {executor!r}; allowed: {', '.join(sw.EXECUTORS)}", 2)
    try:
        obj = tn.parse_objective(objective)
        tn.check_driver(driver)
        chip_name = knobs.chip_for(driver, chip).name if chip or scenario is None else None
        if scenario is not None:
            work = tn.scenario_workload(
                scenario, hosts=hosts or (), app=app_name, duration_ms=duration_ms
            )
        elif capture is not None:
            work = tn.capture_workload(
                capture,
                driver=driver,
                chip=chip_name or "",
                profile=profile,
                duration_ms=duration_ms,
            )
        else:
            work = tn.mix_workload(
                mix or "",
                driver=driver,
                chip=chip_name or "",
                profile=profile,
                rate=rate,
                duration_ms=duration_ms,
            )
        if app_name:
            work.app = app_name
    except (tn.TuneError, knobs.KnobError) as err:
        _fail(str(err), 2)
    except _core.HoldoffError as err:
        _fail(f"the workload cannot run: {err}", 2)
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[best]}"),
        console=_stderr(),
        transient=False,
    )
    task_id = progress.add_task(f"tune {driver}", total=None, best="")

    def on_progress(done: int, total: int, best: str) -> None:
        progress.update(task_id, completed=done, total=total, best=f"best: {best}" if best else "")

    try:
        with progress, _store_warnings():
            result = tn.tune(
                work,
                driver=driver,
                objective=obj,
                chip=chip_name,
                search=search,
                trials=trials,
                seed=seed,
                store=None if no_store else store,
                executor=executor,  # type: ignore[arg-type]
                workers=workers,
                progress=on_progress,
                iface=iface,
                only=only or (),
            )
    except KeyboardInterrupt:
        kept = "not stored (--no-store)" if no_store else f"kept in the store {store}"
        _stderr().print(Text(f"interrupted; finished points {kept}"))
        if not no_store:
            _stderr().print(
                Text(f"resume with the same command: {_this_command()}"), soft_wrap=True
            )
        raise typer.Exit(130) from None
    except (tn.TuneError, knobs.KnobError) as err:
        _fail(str(err), 2)
    except sw.SweepError as err:
        _fail(f"a tune point is not valid: {err}", 2)
    except _core.SimulationError as err:
        _fail(str(err), 1)
    data = result.to_dict()
    if report_file is not None:
        from holdoff import report as rp

        _write_report(report_file, rp.ReportInputs(tunes=[data]), f"holdoff tune: {driver}")
    if json_output:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    _print_tune(data)


def _print_tune(data: dict[str, Any]) -> None:
    console = _stdout()
    console.print(
        Text(
            f"tune {data['driver']} ({data['chip']}) on {data['workload_description']}; "
            f"objective {data['objective']}; {data['settings_tried']} settings tried "
            f"({data['search']}), {data['evaluated']} distinct runs ({data['computed']} run "
            f"now, {data['cached']} from the store)"
        )
    )
    table = Table(title="expected, by the model")
    for col in ("", "setting", "p50 us", "p99 us", "CPU %", "int/s", "Mb/s", "drops"):
        table.add_column(col, justify="left" if col in ("", "setting") else "right")

    def add(label: str, p: dict[str, Any]) -> None:
        def f(v: Any, fmt: str, scale: float = 1.0) -> str:
            return "-" if v is None else fmt.format(v * scale)

        changed = ", ".join(f"{k}={v}" for k, v in p["changed"].items()) or "defaults"
        table.add_row(
            label,
            changed,
            f(p["p50_us"], "{:.1f}"),
            f(p["p99_us"], "{:.1f}"),
            f(p["cpu_util"], "{:.2f}", 100),
            f(p["interrupts_per_s"], "{:,.0f}"),
            f(p["throughput_bps"], "{:.1f}", 1e-6),
            str(p["drops"]),
        )

    add("default", data["default"])
    rec = data["recommended"]
    if rec is not None:
        add("recommended", rec)
    _print_wide(table)
    console.print(Text(data["reason"]))
    if rec is None:
        return
    if rec["settings"] == data["default"]["settings"]:
        console.print(Text("The driver's default is the recommendation: nothing to change."))
    console.print(Text("Paste:"))
    for line in rec["commands"]:
        console.print(Text("  " + line), soft_wrap=True)
    for note in data["not_searched"] + data["notes"]:
        console.print(Text("note: " + note), style="dim", soft_wrap=True)


@app.command("validate", cls=_Command)
def validate_command(
    file: Annotated[Path, typer.Argument(help="Scenario file (TOML).", show_default=False)],
) -> None:
    """Check a scenario file without running it."""
    text = _read(file)
    try:
        validate_text(text, base_dir=file.resolve().parent)
    except _core.ScenarioError as err:
        _fail(str(err), 2)
    _stdout().print(Text(f"ok: {scenario_name(text) or file.stem}", style="green"))


@app.command("schema", cls=_Command)
def schema_command() -> None:
    """Print the JSON Schema of scenario files."""
    sys.stdout.write(_core.schema_json().rstrip("\n") + "\n")


@app.command("version", cls=_Command)
def version_command() -> None:
    """Print the version."""
    sys.stdout.write(f"holdoff {_core.version()}\n")


@app.command("bench", cls=_Command)
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
        typer.Option(
            "--duration-ms",
            min=1,
            help="With --hosts: simulated time of each run [ms] (default "
            f"{BENCH_HOSTS_DURATION_MS}).",
        ),
    ] = None,
) -> None:
    """Run a fixed scenario several times and report simulated packets per wall second.

    With --hosts N[,N...]: the same scenario replicated over N independent
    hosts (one JSON object with --json for one count, {"results": [...]} for
    several). With --sweep FILE: run the sweep with each worker count (a
    fresh store each time) and report points per second and the speedup.
    """
    if hosts is not None and sweep_file is not None:
        _fail("--hosts and --sweep measure different things: give one of them", 2)
    if duration_ms is not None and hosts is None:
        _fail("--duration-ms applies to the scaling benchmark: use it with --hosts", 2)
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
    rows: list[dict[str, Any]] = []
    for n in counts:
        try:
            row = benchscale.measure(text, n, repeat, ms)
        except benchscale.BenchError as err:
            _fail(str(err), 1)
        row.update({"scenario": scenario_name(text) or "", "file": path, "duration_ms": ms})
        rows.append(row)
    base = rows[0]["packets_per_s"]["median"]
    for row in rows:
        # Wall time per packet relative to the first host count.
        row["cost_vs_first"] = base / max(row["packets_per_s"]["median"], 1e-9)
    if json_output:
        report: dict[str, Any] = rows[0] if len(rows) == 1 else {"results": rows}
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    table = Table(
        title=f"bench --hosts: {rows[0]['scenario']}",
        caption=f"{ms} ms simulated per run, {repeat} run{'s' if repeat != 1 else ''} per "
        f"host count (best / median), each count in its own process; cost = wall time per "
        f"packet relative to {rows[0]['hosts']} host{'s' if rows[0]['hosts'] != 1 else ''}",
        title_justify="left",
        caption_justify="left",
        header_style="bold",
    )
    for col in (
        "hosts",
        "sim packets",
        "M pkt/s best",
        "M pkt/s median",
        "cost",
        "events/pkt",
        "peak queue",
        "peak RSS (MB)",
    ):
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(
            str(row["hosts"]),
            f"{row['sim_packets']:,}",
            f"{row['packets_per_s']['best'] / 1e6:.2f}",
            f"{row['packets_per_s']['median'] / 1e6:.2f}",
            f"{row['cost_vs_first']:.2f}x",
            f"{row['events_per_packet']:.3f}",
            f"{row['peak_queue_len']:,}",
            f"{row['peak_rss_bytes'] / 1e6:.0f}",
        )
    _stdout().print(table)


def _bench_sweep(file: Path, workers_text: str, repeat: int, json_output: bool) -> None:
    import tempfile

    from holdoff import sweeps as sw

    try:
        counts = [int(w) for w in workers_text.split(",") if w.strip()]
    except ValueError:
        _fail(f"--workers must be comma-separated integers, got {workers_text!r}", 2)
    if not counts or min(counts) < 1:
        _fail(f"--workers must list worker counts of at least 1, got {workers_text!r}", 2)
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
    table = Table(
        title=f"sweep bench: {spec.name}",
        caption=f"{rows[0]['points']} points per run, best of {repeat}, {_cpus()} cores; "
        "each run with a fresh result store",
        title_justify="left",
        caption_justify="left",
        header_style="bold",
    )
    for col in ("workers", "wall time (s)", "points / s", "speedup"):
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(
            str(row["workers"]),
            f"{row['wall_time_s']['best']:.3f}",
            f"{row['points_per_s']['best']:.1f}",
            f"{row['speedup']:.2f}x",
        )
    _stdout().print(table)


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


# -- sweeps, stored results, reports -------------------------------------------------


def _load_sweep_or_exit(file: Path) -> Any:
    from holdoff import sweeps as sw

    if not file.exists():
        _fail(f"sweep file not found: {file}", 2)
    if file.is_dir():
        _fail(f"sweep path is a folder, not a file: {file}", 2)
    try:
        _refuse_other_kind(file, file.read_text(encoding="utf-8"), want="sweep")
        return sw.load_sweep(file)
    except sw.SweepError as err:
        _fail(f"{file}: {err}", 2)
    except (OSError, UnicodeDecodeError) as err:
        _fail(f"{file}: {err}", 2)


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


_LIST_TOTALS = (
    ("interrupts_per_s_total", "int/s", "{:,.0f}"),
    ("cpu_util_busy_max", "CPU busy", "{:.1%}"),
    ("throughput_bps_total", "Mb/s", "M{:,.2f}"),
    ("latency_us_p99_max", "p99 us", "{:,.1f}"),
    ("dropped", "dropped", "{:,.0f}"),
)


def _fmt_cell(value: Any, fmt: str) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    if fmt.startswith("M"):
        return fmt[1:].format(float(value) / 1e6)
    try:
        return fmt.format(value)
    except (TypeError, ValueError):
        return str(value)


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


@app.command("results", cls=_Command)
def results_command(
    store: Annotated[Path, typer.Option("--store", help="Result store folder.")] = Path(
        "runs/store"
    ),
    query: Annotated[
        str | None,
        typer.Option("--query", "-q", help="SQL (DuckDB) over the stored runs, a view named runs."),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", "-n", help="Only the runs of this scenario name."),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the rows as JSON on stdout.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Rows to print.")] = 100,
) -> None:
    """List and query stored runs: hash, scenario, seed, the parameters that differ, metrics.

    Without --query every stored run is listed (--name keeps one scenario's),
    with a column for every scenario field whose value differs between the
    listed runs.
    """
    import duckdb
    import pandas as pd

    from holdoff.store import ResultStore, differing_parameters
    from holdoff.sweeps import short_names

    rs = ResultStore(store)
    try:
        with _store_warnings():
            frame = rs.query(query)
    except FileNotFoundError as err:
        _fail(str(err), 2)
    except duckdb.Error as err:
        _fail(f"query failed: {err}", 2)
    if name is not None:
        if "scenario" not in frame.columns:
            _fail("--name needs a `scenario` column in the rows", 2)
        frame = frame[frame["scenario"] == name].reset_index(drop=True)
        if frame.empty:
            _fail(f"no stored run of scenario {name!r} in {store}", 2)
    params: dict[str, list[Any]] = {}
    common: list[str] = []
    if query is None:
        shown = frame.head(limit)
        if "scenario_toml" in shown.columns:
            params = differing_parameters(
                [_toml_or_none(str(s)) or {} for s in shown["scenario_toml"]]
            )
        cols = ["scenario_hash", "scenario", "seed", "holdoff_version", "sim_time_ns"]
        cols += [c for c, _, _ in _LIST_TOTALS]
        frame = frame[[c for c in cols if c in frame.columns]]
        if not json_output and len(frame) > 1:
            # Columns with one value for every listed run go to the title.
            for col, what in (
                ("scenario", "scenario {}"),
                ("holdoff_version", "version {}"),
                ("sim_time_ns", "{} simulated"),
            ):
                if col in frame and frame[col].nunique(dropna=False) == 1:
                    value = frame[col].iloc[0]
                    common.append(
                        what.format(f"{value / 1e6:g} ms" if col == "sim_time_ns" else value)
                    )
                    frame = frame.drop(columns=[col])
        if params:
            insert_at = list(frame.columns).index("seed") + 1 if "seed" in frame else 0
            frame = frame.copy()
            for i, (path, values) in enumerate(params.items()):
                values += [None] * (len(frame) - len(values))
                frame.insert(insert_at + i, path, pd.Series(values, dtype=object))
    if json_output:
        sys.stdout.write(frame.head(limit).to_json(orient="records", indent=2) + "\n")
        return
    t = Table(
        title=f"{len(frame)} row{'s' if len(frame) != 1 else ''}"
        + ("" if query else f" stored in {store}")
        + (f"; all {', '.join(common)}" if common else ""),
        title_justify="left",
        header_style="bold",
    )
    formats = {c: f for c, _, f in _LIST_TOTALS}
    labels = {c: lbl for c, lbl, _ in _LIST_TOTALS}
    labels.update(short_names(list(params)))
    if query is None:
        labels.update(scenario_hash="hash", holdoff_version="version", sim_time_ns="simulated")
    for col in frame.columns:
        numeric = frame[col].dtype != object and col not in params
        t.add_column(
            labels.get(col, str(col)),
            justify="right" if numeric else "left",
            overflow="fold",
            no_wrap=col in ("scenario_hash", "seed"),
        )
    for record in frame.head(limit).to_dict("records"):
        cells = []
        for col in frame.columns:
            value = record[col]
            if col == "scenario_hash" and query is None:
                cells.append(str(value)[:12])
            elif col == "sim_time_ns" and query is None:
                cells.append(f"{value / 1e6:g} ms")
            elif col in formats and query is None:
                cells.append(_fmt_cell(value, formats[col]))
            elif value is None:
                cells.append("-")
            else:
                cells.append(str(value))
        t.add_row(*(Text(c) for c in cells))
    if len(frame) > limit:
        t.caption = f"first {limit} rows"
    elif params and query is None:
        t.caption = "parameters that differ between these runs: " + ", ".join(params)
    _print_wide(t)


def _print_wide(table: Table) -> None:
    """Print ``table`` on stdout; piped output gets the table's natural width."""
    console = _stdout()
    if not console.is_terminal:
        wide = console.options.update_width(10_000)
        console.width = max(console.width, console.measure(table, options=wide).maximum)
    console.print(table)


@app.command("report", cls=_Command)
def report_command(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="Run reports (report.json or a --out folder), sweep tables (.parquet) "
            "or reproduce JSON.",
            show_default=False,
        ),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")] = Path(
        "report.html"
    ),
    title: Annotated[str, typer.Option("--title", help="Title of the report.")] = (
        "holdoff report"
    ),
) -> None:
    """Write one self-contained HTML report (plots inline, opens offline)."""
    from holdoff import report as rp

    try:
        inputs = rp.load_inputs(results)
    except FileNotFoundError as err:
        _fail(str(err), 2)
    except rp.ReportInputError as err:
        _fail(str(err), 2)
    _write_report(output, inputs, title)


def _write_report(output: Path, inputs: Any, title: str) -> None:
    from holdoff import report as rp

    try:
        path = rp.write_report(output, inputs, title=title)
    except OSError as err:
        _fail(f"cannot write the report to {output}: {err}", 1)
    _stderr().print(f"report written to {path}")


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
    wanted = cases or ids
    unknown = [c for c in wanted if c not in ids]
    if unknown:
        _fail(f"unknown case {', '.join(unknown)}; available: {', '.join(ids)}", 2)
    err_console = _stderr()
    results = []
    cases_to_run = [rp.load_case(cid) for cid in wanted]
    total_runs = sum(len(c.runs) for c in cases_to_run)
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
                    res = rp.run_case(case, progress=on_run)
                except (_core.ScenarioError, _core.SimulationError) as err:
                    _fail(f"{case.id}: {err}", 1)
                results.append(res)
                png = rp.plot_netpipe(res, plots / f"{case.id}-netpipe.png")
                line = (
                    f"[{n}/{len(cases_to_run)}] {case.id}: {len(case.runs)} runs in "
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
        for res in results:
            out.print(_reproduce_table(res))
            out.print(_reproduce_sources(res))
            out.print()
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
            rp.display_number(c.simulated, c.unit),
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


@app.command("livelock", cls=_Command)
def livelock_command(
    out: Annotated[
        Path, typer.Option("-o", "--out", help="PNG file for the delivered-vs-offered plot.")
    ] = Path("runs/livelock.png"),
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the curves as JSON on stdout.")
    ] = False,
    duration_ms: Annotated[
        int, typer.Option("--duration-ms", min=10, help="Simulated time per point.")
    ] = 100,
) -> None:
    """Receive livelock: forwarded rate against offered load for four designs.

    Interrupt per packet, static ITR, fast interrupt + taskqueue and polling
    with a quota, on one 2006 Opteron core forwarding 64-byte frames between
    two 82546 ports; the plot is saved as a PNG.
    """
    from holdoff import livelock

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
    duration_ms: Annotated[
        int, typer.Option("--duration-ms", min=10, max=10_000, help="Simulated time per point.")
    ] = 50,
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
    html = experiments.write_napi_modes(table, out)
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

examples_app = typer.Typer(
    cls=_Group,
    context_settings=_CONTEXT,
    add_completion=False,
    help="List the bundled examples, or copy one to the current folder.",
)
app.add_typer(examples_app, name="examples")


def _example_files() -> list[Path]:
    try:
        folder = examples_dir()
    except FileNotFoundError as err:
        _fail(str(err), 2)
    return sorted(p for p in folder.iterdir() if p.suffix in (".toml", ".py") and p.is_file())


def _example_description(path: Path) -> str:
    """The first sentence of an example's opening comment (or docstring)."""
    text = path.read_text(encoding="utf-8")
    lines: list[str] = []
    if path.suffix == ".py":
        body = text.split('"""')
        lines = body[1].strip().splitlines() if len(body) > 2 else []
    else:
        data = _toml_or_none(text) or {}
        if isinstance(data.get("description"), str) and data["description"]:
            lines = [data["description"]]
        else:
            for line in text.splitlines():
                if not line.startswith("#"):
                    break
                lines.append(line.lstrip("#").strip())
    joined = " ".join(line for line in lines if line)
    for end in (". ", ": "):
        if end in joined:
            joined = joined.split(end, 1)[0]
    return joined.rstrip(".")


def _example_name(path: Path) -> str:
    return path.stem if path.suffix == ".toml" else path.name


@examples_app.callback(invoke_without_command=True)
def examples_command(ctx: typer.Context) -> None:
    """List the bundled examples (scenarios, sweeps, a Python moderator) with a line each."""
    if ctx.invoked_subcommand is not None:
        return
    t = Table(
        title="bundled examples (holdoff examples copy NAME writes one here)",
        title_justify="left",
        header_style="bold",
    )
    t.add_column("name", no_wrap=True)
    t.add_column("what it shows")
    for path in _example_files():
        t.add_row(_example_name(path), _example_description(path))
    _stdout().print(t)


@examples_app.command("copy", cls=_Command)
def examples_copy_command(
    name: Annotated[
        str, typer.Argument(help="Example name (see `holdoff examples`).", show_default=False)
    ],
    to: Annotated[Path, typer.Option("--to", help="Folder to write to.")] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", "-f", help="Overwrite an existing file.")
    ] = False,
) -> None:
    """Copy a bundled example to the current folder (a sweep brings its base scenario)."""
    files = {_example_name(p): p for p in _example_files()}
    files.update({p.name: p for p in files.values()})
    source = files.get(name)
    if source is None:
        _fail(
            f"unknown example {name!r}; available: "
            + ", ".join(sorted({_example_name(p) for p in files.values()})),
            2,
        )
    # (file, path relative to the target folder)
    wanted = [(source, Path(source.name))]
    data = _toml_or_none(source.read_text(encoding="utf-8")) or {}
    base = data.get("base")
    if isinstance(base, str) and (source.parent / base).is_file():
        wanted.append((source.parent / base, Path(Path(base).name)))
    # A replay example brings its capture, at the same relative path.
    for gen in data.get("generators", []) if isinstance(data.get("generators"), list) else []:
        capture = gen.get("capture") if isinstance(gen, dict) else None
        if isinstance(capture, str) and not Path(capture).is_absolute():
            path = (source.parent / capture).resolve()
            if path.is_file() and path.is_relative_to(source.parent.resolve()):
                wanted.append((path, Path(capture)))
    to.mkdir(parents=True, exist_ok=True)
    for path, rel in wanted:
        target = to / rel
        if target.exists() and not force:
            _fail(f"{target} exists; use --force to overwrite it", 2)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
        _stdout().print(f"wrote {target}")


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
            rows.add_row(
                str(r["row"]) if i == 0 else "",
                r["label"] if i == 0 else "",
                v["column"],
                _calibration_number(v["measured"]),
                _calibration_number(v["model"]),
                f"{v['residual_pct']:+.2f} %",
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
        typer.Option(
            "--set",
            "-s",
            metavar="PATH=VALUE",
            help="Change a field in every row's scenario (repeatable), e.g. duration_ms=300.",
            show_default=False,
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
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the fit as JSON on stdout, nothing else.")
    ] = False,
) -> None:
    from holdoff import calibrate as cb

    err_console = _stderr()
    shown = False

    def progress(message: str) -> None:
        # One line rewritten in place on a terminal (no thread: the fit
        # forks its worker processes).
        nonlocal shown
        err_console.file.write(f"\rcalibrating: {message}\x1b[K")
        err_console.file.flush()
        shown = True

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
            progress=progress if err_console.is_terminal else None,
        )
    except cb.CalibrationError as err:
        if shown:
            err_console.file.write("\r\x1b[K")
        _fail(str(err), 2)
    if shown:
        err_console.file.write("\r\x1b[K")
        err_console.file.flush()
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
