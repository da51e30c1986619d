"""`holdoff tune`: search a driver's knobs on the model; print the recommendation."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from holdoff import _core, stats
from holdoff.cli.common import (
    ChipOption,
    DriverOption,
    EmitOption,
    EmitToOption,
    HostFileOption,
    IfaceOption,
    SeedsOption,
    _check_file,
    _check_output_file,
    _Command,
    _duration_ms_option,
    _ExecutorOption,
    _fail,
    _NoStoreOption,
    _print_wide,
    _read,
    _read_host_file,
    _stderr,
    _stdout,
    _store_warnings,
    _this_command,
    _WorkersOption,
    _write_report,
    app,
)


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
    driver: DriverOption = "",
    chip: ChipOption = None,
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
            'within a CPU budget), "max-throughput", "fewest-cores" (linux-ixgbe: the fewest '
            'interrupt cores with no drops; "fewest-cores,p99<=100us" with a latency budget) '
            'or "pareto".',
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
        _duration_ms_option(
            "Simulated time per point (default: the workload's; a capture's whole span)."
        ),
    ] = None,
    span: Annotated[
        str | None,
        typer.Option(
            "--span",
            help="With --capture: simulate only this part, START:END after its first frame, "
            "in ms or with units (2000:5000, 2s:5s).",
            show_default=False,
        ),
    ] = None,
    latency_of: Annotated[
        str | None,
        typer.Option(
            "--latency-of",
            help="With --capture: the frames whose latency the objective counts: port:5000, "
            "addr:10.0.0.2, dscp:46 or size:64-300 (join several with ,).",
            show_default=False,
        ),
    ] = None,
    only_to: Annotated[
        str | None,
        typer.Option(
            "--only-to",
            help="With --capture: replay only the frames to this host (its IP or MAC "
            "address), or 'all'. Needed when the capture holds a host's sent frames "
            "beside those it received (taken on the host).",
            show_default=False,
        ),
    ] = None,
    mtu: Annotated[
        int | None,
        typer.Option(
            "--mtu",
            help="With --capture: the link's MTU in bytes, 68 to 9000 (default: the --from "
            "file's, else 1500); TCP aggregates are cut to it, longer frames dropped.",
            show_default=False,
        ),
    ] = None,
    seeds: SeedsOption = 3,
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
        int,
        typer.Option(
            "--trials",
            help="Points of an Optuna search (at most 100 000; it stops once every distinct "
            "setting is tried).",
        ),
    ] = 96,
    seed: Annotated[int, typer.Option("--seed", min=0, help="The Optuna sampler's seed.")] = 1,
    store: Annotated[
        Path, typer.Option("--store", help="Result store folder (a killed tune resumes).")
    ] = Path("runs/store"),
    no_store: _NoStoreOption = False,
    executor: _ExecutorOption = "process",
    workers: _WorkersOption = None,
    iface: IfaceOption = None,
    host_file: HostFileOption = None,
    emit_kind: EmitOption = None,
    emit_to: EmitToOption = None,
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
    from holdoff.knobs import persist

    if emit_to is not None and emit_kind is None:
        _fail("--emit-to needs --emit KIND (networkd, nm, tuned, ...)", 2)
    kinds = (*persist.KINDS, "systemd-unit")
    if emit_kind is not None and emit_kind not in kinds:
        _fail(f"--emit: unknown kind {emit_kind!r}; choose one of {', '.join(kinds)}", 2)
    host = _read_host_file(host_file)
    if host is not None:
        driver = driver or host.driver or ""
        chip = chip or host.chip
        iface = iface or host.iface
        # What the host file could not read, and is assumed instead.
        for message in host.messages:
            _stderr().print(Text(f"host file: {message}", style="yellow"), soft_wrap=True)
    iface_named = bool(iface)
    iface = iface or "eth0"
    if not driver:
        why = f"\nhost file: {host.why_no_driver()}" if host and host.messages else ""
        _fail(f"--driver is required: one of {', '.join(knobs.DRIVERS)}{why}", 2)
    given = [x for x in (scenario, capture, mix) if x is not None]
    if len(given) != 1:
        _fail("give exactly one workload: a SCENARIO file, --capture FILE or --mix NAME", 2)
    if executor not in sw.EXECUTORS:
        _fail(f"unknown executor {executor!r}; allowed: {', '.join(sw.EXECUTORS)}", 2)
    capture_flags = {"--span": span, "--latency-of": latency_of, "--only-to": only_to, "--mtu": mtu}
    given_flags = [k for k, v in capture_flags.items() if v is not None]
    if given_flags and capture is None:
        flag = given_flags[0]
        _fail(f"{flag} applies to a --capture workload", 2)
    try:
        stats.parse_seeds(seeds)
    except ValueError as err:
        _fail(str(err), 2)
    if scenario is not None:
        _read(scenario)  # kind, size, encoding and nesting checked before the tune reads it
    if capture is not None:
        _check_file(capture, "capture", limit=0)  # streamed: no size limit
    if report_file is not None:
        _check_output_file(report_file, "--report")
    try:
        obj = tn.parse_objective(objective)
        tn.check_driver(driver)
        chip_name = knobs.chip_for(driver, chip).name if chip or scenario is None else None
        if scenario is not None:
            work = tn.scenario_workload(
                scenario, hosts=hosts or (), app=app_name, duration_ms=duration_ms
            )
        elif capture is not None:
            scan_bar = Progress(
                TextColumn("reading {task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>3.0f} %"),
                console=_stderr(),
                transient=True,
            )
            scan_task = scan_bar.add_task(Path(capture).name, total=None)

            def on_scan(done: int, total: int) -> None:
                if not scan_bar.live.is_started:
                    scan_bar.start()
                scan_bar.update(scan_task, completed=done, total=total)

            try:
                work = tn.capture_workload(
                    capture,
                    driver=driver,
                    chip=chip_name or "",
                    profile=profile,
                    duration_ms=duration_ms,
                    span=span,
                    latency_of=latency_of,
                    only_to=only_to,
                    host_mac=host.mac if host is not None else None,
                    progress=on_scan,
                    mtu=mtu if mtu is not None else _host_mtu(host),
                )
                if mtu is None and _host_mtu(host) is not None:
                    _stderr().print(
                        Text(
                            f"host file: MTU {_host_mtu(host)} of {iface} taken for the "
                            "capture's link (--mtu to change)",
                            style="yellow",
                        ),
                        soft_wrap=True,
                    )
            finally:
                scan_bar.stop()
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
    current = _current(host, driver, work)
    current_source = "the driver's default" if host_file is None else host_file.name
    if host is not None and not current:
        # Nothing read from the host: the table's current setting is the
        # driver's default, which the host may not run; say so.
        current, current_source = None, "the driver's default"
        _stderr().print(
            Text(
                "host file: no setting was read from it: the current setting below is "
                f"{driver}'s default, not necessarily what {iface} runs",
                style="bold yellow",
            ),
            soft_wrap=True,
        )

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
                seeds=seeds,
                current=current,
                current_source=current_source,
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
    if not iface_named:
        # The lines name eth0, a placeholder; matched as a kernel name it
        # would not find a udev-named interface (enp3s0) after a reboot.
        data["iface_note"] = (
            "no interface named (--iface NAME, or --from a host file): the lines below "
            "use eth0; give your interface's name to have them name it"
        )
    if emit_kind is not None:
        if not iface_named:
            _stderr().print(Text(f"note: {data['iface_note']}"), soft_wrap=True)
        _emit(result, emit_kind, emit_to)
        return
    if report_file is not None:
        from holdoff import report as rp

        _write_report(report_file, rp.ReportInputs(tunes=[data]), f"holdoff tune: {driver}")
    if json_output:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    _print_tune(data)


def _current(host: Any, driver: str, work: Any) -> dict[str, int] | None:
    """The setting in effect from a host file: its knobs, and for a driver
    with port knobs its queue count when the tuned host has the cores."""
    from holdoff.tune import ports
    from holdoff.tune.space import host_cores

    if host is None:
        return None
    current = dict(host.settings)
    if ports.has_ports(driver) and host.queues and host.queues <= host_cores(work):
        current["combined"] = int(host.queues)
    return current


def _emit(result: Any, kind: str, emit_to: Path | None) -> None:
    """``--emit KIND``: the recommendation's persistent form alone."""
    from holdoff.cli.explain import _write_form

    rec, cur = result.recommended, result.current or result.default
    if rec is None or rec.key == cur.key:
        why = result.reason if rec is None else "the current setting is the recommendation"
        _stderr().print(Text(f"--emit {kind}: nothing to write: {why}"), soft_wrap=True)
        return
    forms = result.forms(rec)
    form = next((f for f in forms if f.kind == kind), None)
    if form is None:
        have = ", ".join(f.kind for f in forms) or "none"
        _fail(f"--emit: {kind} does not apply to this recommendation; the forms that do: {have}", 2)
    _write_form(form, emit_to)


def _print_tune(data: dict[str, Any]) -> None:
    from holdoff.tune import view

    console = _stdout()
    for line in view.header_lines(data):
        console.print(Text(line), soft_wrap=True)
    _print_wide(view.table(data))
    for line in view.footer_lines(data):
        console.print(Text(line), soft_wrap=True)
    for note in data["not_searched"] + data["notes"]:
        console.print(Text("note: " + note), style="dim", soft_wrap=True)


def _host_mtu(host: Any) -> int | None:
    """The host file's interface MTU when it is a jumbo one the replay can take
    (1501 to 9000). A smaller one is not taken: a capture from another link
    would have its full-size frames cut as if they were offload aggregates,
    and one from this link holds no frame above its MTU anyway."""
    from holdoff.tune.workloads import MAX_MTU

    m = getattr(host, "mtu", None)
    return m if isinstance(m, int) and 1500 < m <= MAX_MTU else None
