"""What every ``holdoff`` command shares: the app, its help habits, console
helpers, the exit-code conventions, reading a scenario, running one with
progress, and the option declarations used by more than one command.

Exit codes: 0 success, 1 the simulation failed or the results could not be
written, 2 a usage error, a missing file or an invalid scenario, 130
interrupted. With ``--json`` stdout carries only JSON.
"""

from __future__ import annotations

import contextlib
import inspect
import sys
import tomllib
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from holdoff import _core, inputs, sweep_paths
from holdoff.api import run_text
from holdoff.inputs import printable, shorten
from holdoff.knobs.base import DRIVER_CHIPS
from holdoff.progress import ProgressLine
from holdoff.result import RunResult
from holdoff.summary import render_summary
from holdoff.termtable import FittingConsole

if TYPE_CHECKING:
    from holdoff.hostinfo import HostInfo

BENCH_SCENARIO = "bench-64b-1g-itr8000-napi.toml"
# Simulated time of each run of `holdoff bench --hosts` [ms].
BENCH_HOSTS_DURATION_MS = 50


def _flags_without_metavar(params: Sequence[Any]) -> None:
    # Boolean flags take no value: show `--json`, not `--json <bool>`.
    for param in params:
        if getattr(param, "is_flag", False):
            param.metavar = ""


class _Command(TyperCommand):
    """A command whose help shows flags as flags (no `<bool>` after them) and
    whose line in `holdoff --help` is its help's first paragraph as one
    sentence (the rich help keeps a docstring's line breaks, which cut the
    command list's lines mid-sentence)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.short_help is None and self.help:
            first = inspect.cleandoc(self.help).split("\n\n")[0]
            self.short_help = " ".join(first.split())

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
    # Tables fit the terminal with every number whole; piped output without
    # COLUMNS is as wide as what it prints (holdoff.termtable).
    return FittingConsole(highlight=False, markup=False)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, markup=False)


# The longest line of an error message printed whole [characters]: a parser
# that quotes the offending line must not echo a 40 KB line back.
_MESSAGE_LINE_CHARS = 400


def _fail(message: str, code: int) -> NoReturn:
    lines = [shorten(printable(line), _MESSAGE_LINE_CHARS) for line in message.split("\n")]
    _stderr().print(Text("error: " + "\n".join(lines), style="red"), soft_wrap=True)
    raise typer.Exit(code)


def _read(file: Path, what: str = "scenario file") -> str:
    """The TOML text of ``file`` (checked by :mod:`holdoff.inputs`); any refusal exits 2."""
    try:
        return inputs.read_toml_text(file, what)
    except inputs.InputError as err:
        _fail(str(err), 2)


def _check_file(file: Path, what: str, limit: int | None = None) -> None:
    """Exit 2 unless ``file`` is a regular file within the size limit for ``what``.

    For inputs a library function reads itself (``limit=0``: no size limit,
    for streamed inputs such as captures).
    """
    try:
        inputs.check_file(file, what, limit)
    except inputs.InputError as err:
        _fail(str(err), 2)


def _check_output_file(file: Path, flag: str) -> None:
    """Exit 2 unless ``file`` can be written as a regular file (not a folder or a device)."""
    problem = inputs.output_problem(file)
    if problem is not None:
        _fail(f"{flag} {file}: {problem}", 2)


def _check_output_folder(folder: Path, flag: str) -> None:
    """Exit 2 unless ``folder`` is a folder or can be made as one."""
    problem = inputs.output_folder_problem(folder)
    if problem is not None:
        _fail(f"{flag} {folder}: {problem}", 2)


def _toml_or_none(text: Any) -> dict[str, Any] | None:
    """``text`` parsed as TOML, or None if it is not TOML text (or nests too deep)."""
    if not isinstance(text, str):
        return None
    try:
        return inputs.loads_toml(text, "TOML text", None)
    except inputs.InputError:
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
            path, value = sweep_paths.parse_set(item)
            sw.set_path(doc, path, value)
        except inputs.InputError as err:
            _fail(str(err), 2)
        except sw.SweepError as err:
            _fail(f"--set {err}", 2)
    return tomli_w.dumps(doc)


def _run(
    text: str,
    seed: int | None,
    progress: ProgressLine | None = None,
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


SeedOption = Annotated[
    int | None,
    typer.Option("--seed", min=0, max=2**64 - 1, help="Override the scenario's seed."),
]

SeedsOption = Annotated[
    int,
    typer.Option(
        "--seeds",
        help="Runs per scenario or setting: its seed (or --seed) and the next N-1; figures "
        "are the mean ± half the 95 % interval (1 to 1000).",
    ),
]


def _field_set_option(help: str) -> Any:
    """The repeatable ``--set``/``-s PATH=VALUE`` option of the commands that change
    scenario fields (a field path as in sweep files and a TOML value); ``help`` says
    which scenario it changes."""
    return typer.Option("--set", "-s", metavar="PATH=VALUE", help=help, show_default=False)


def _duration_ms_option(help: str) -> Any:
    """The ``--duration-ms`` option (simulated time [ms], at least 1) of the commands
    whose default comes from elsewhere; ``help`` says of what and the default."""
    return typer.Option("--duration-ms", min=1, help=help)


DriverOption = Annotated[
    str,
    typer.Option(
        "--driver",
        "-d",
        help=f"One of {', '.join(DRIVER_CHIPS)} (default: the --from file's).",
        show_default=False,
    ),
]

ChipOption = Annotated[
    str | None,
    typer.Option(
        "--chip",
        help="Controller, e.g. 82546, 82574, i210 (default: the --from file's, else the "
        "driver's usual one).",
    ),
]

HostFileOption = Annotated[
    Path | None,
    typer.Option(
        "--from",
        help="A host file from holdoff collect: driver, chip, the settings in effect, rings and "
        "interface.",
        show_default=False,
    ),
]

IfaceOption = Annotated[
    str | None,
    typer.Option(
        "--iface",
        help="Interface name in the printed commands.",
        show_default="the input's or --from file's, else eth0",
    ),
]

EmitOption = Annotated[
    str | None,
    typer.Option(
        "--emit",
        help="Print only the persistent form of this kind: networkd, nm, tuned, udev, "
        "modprobe, sysctl, loader, openbsd-kernel.",
        show_default=False,
    ),
]

EmitToOption = Annotated[
    Path | None,
    typer.Option("--emit-to", help="Write the --emit form to this file instead of stdout."),
]


def _read_host_file(host_file: Path | None) -> HostInfo | None:
    """The ``--from`` host file of explain and tune, read and checked (None without one);
    exits 2 on a bad one."""
    from holdoff.hostinfo import HostInfoError, read_host

    if host_file is None:
        return None
    try:
        return read_host(host_file)
    except HostInfoError as err:
        _fail(str(err), 2)


# Damaged store entries named one line each, up to this many; the rest are counted.
_STORE_WARNINGS_SHOWN = 10


@contextlib.contextmanager
def _store_warnings() -> Iterator[None]:
    """Prints each corrupt-store-entry warning as one ``warning:`` line on stderr."""
    from holdoff.store import CorruptEntryWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CorruptEntryWarning)
        try:
            yield
        finally:
            shown = 0
            for w in caught:
                if not issubclass(w.category, CorruptEntryWarning):
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
                elif shown < _STORE_WARNINGS_SHOWN:
                    line = Text(f"warning: {w.message}", style="yellow")
                    _stderr().print(line, soft_wrap=True)
                    shown += 1
            folded = sum(issubclass(w.category, CorruptEntryWarning) for w in caught) - shown
            if folded:
                more = (
                    f"warning: and {folded:,} more damaged result store entries, ignored likewise"
                )
                _stderr().print(Text(more, style="yellow"), soft_wrap=True)


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


def _read_input(file: Path, what: str = "explain input file") -> str:
    """The text of an input file (``-``: stdin), checked by :mod:`holdoff.inputs`; exits 2."""
    try:
        text = inputs.read_text(file, what, allow_stdin=True)
        # An explain input may be JSON (a JSON reader recurses): bound its nesting.
        inputs.check_depth(text, what, file, syntax="json")
    except inputs.InputError as err:
        _fail(str(err), 2)
    return text


def _cpus() -> int:
    import os

    return os.cpu_count() or 1


# -- sweeps, stored results, reports -------------------------------------------------


def _print_wide(table: Table) -> None:
    """Print ``table`` on stdout (fitted; piped output gets its natural width)."""
    _stdout().print(table)


def _write_report(output: Path, inputs: Any, title: str) -> None:
    from holdoff import report as rp

    _check_output_file(output, "--output")
    try:
        path = rp.write_report(output, inputs, title=title)
    except OSError as err:
        _fail(f"cannot write the report to {output}: {err}", 1)
    _stderr().print(f"report written to {path}")


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


def _load_sweep_or_exit(file: Path) -> Any:
    from holdoff import sweeps as sw

    text = _read(file, "sweep file")
    try:
        _refuse_other_kind(file, text, want="sweep")
        return sw.load_sweep(file)
    except sw.SweepError as err:
        _fail(f"{file}: {err}", 2)
    except (OSError, UnicodeDecodeError) as err:
        _fail(f"{file}: {err}", 2)
