"""`holdoff explain`: what the NIC applies for a driver's settings, and how to keep them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from holdoff.cli.common import (
    ChipOption,
    DriverOption,
    EmitOption,
    EmitToOption,
    HostFileOption,
    IfaceOption,
    _Command,
    _fail,
    _read_host_file,
    _read_input,
    _stderr,
    _stdout,
    app,
)


@app.command("explain", cls=_Command)
def explain_command(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            help="What the host shows: ethtool -c / --json -c / -g output (any version), "
            "sysctl dumps (sysctl dev.em.0), module-parameter lines, /sys/module listings, "
            "sysfs or #define lines; - reads stdin.",
            show_default=False,
        ),
    ] = None,
    driver: DriverOption = "",
    chip: ChipOption = None,
    host_file: HostFileOption = None,
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
        typer.Option("--rx-ring", help="RX descriptors in use (default: the driver's)."),
    ] = None,
    tx_ring: Annotated[
        int | None,
        typer.Option("--tx-ring", help="TX descriptors in use (default: the driver's)."),
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
    iface: IfaceOption = None,
    emit_kind: EmitOption = None,
    emit_to: EmitToOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the explanation as JSON.")
    ] = False,
) -> None:
    """Say what the NIC applies for a driver's settings: registers and units, the
    interval and highest interrupt rate per vector, the keys the driver ignores or
    rounds, the values that select an adaptive mode, warnings with numbers, the
    commands to set it now and the forms that keep it after a reboot."""
    from holdoff import knobs
    from holdoff.explain_gather import gather, report

    if emit_to is not None and emit_kind is None:
        _fail("--emit-to needs --emit KIND (networkd, nm, tuned, ...)", 2)
    host = _read_host_file(host_file)
    driver = driver or (host.driver if host and host.driver else "")
    if not driver:
        why = f"\nhost file: {host.why_no_driver()}" if host and host.messages else ""
        _fail(f"--driver is required: one of {', '.join(knobs.DRIVERS)}{why}", 2)
    chip = chip or (host.chip if host else None)
    try:
        knobs.chip_for(driver, chip)
        texts = [_read_input(file) for file in files or []]
        parsed = gather(driver, texts, assignments or [], host)
        if ring_file is not None:
            ring_rx, ring_tx = knobs.parse_ring(_read_input(ring_file, "ring file"))
            rx_ring = rx_ring if rx_ring is not None else ring_rx
            tx_ring = tx_ring if tx_ring is not None else ring_tx
        speed = speed or (host.speed_mbps if host else None)
        out = report(
            driver,
            parsed,
            chip=chip,
            speed_mbps=speed,
            rx_ring=rx_ring,
            tx_ring=tx_ring,
            tsq_bytes=tsq_bytes,
            iface=iface,
        )
        form = None
        if emit_kind is not None:
            form = knobs.emit(
                emit_kind, driver, out["iface"], parsed.settings, chip=chip, unit=parsed.unit or 0
            )
    except knobs.KnobError as err:
        _fail(f"{err.key}: {err.message}", 2)
    if host is not None:
        out["host"] = {k: v for k, v in host.to_dict().items() if k != "sysctls"}
    if form is not None:
        _write_form(form, emit_to)
        return
    if json_output:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    from holdoff.explain_view import render_explain

    _stdout().print(render_explain(out))


def _write_form(form: object, emit_to: Path | None) -> None:
    """One persistent form to stdout, or to ``--emit-to`` with where it belongs on stderr."""
    from rich.text import Text

    from holdoff.knobs import Form

    assert isinstance(form, Form)
    if emit_to is None:
        sys.stdout.write(form.text)
        sys.stdout.flush()
        if form.note:
            # On stderr: stdout stays the file's text alone, to redirect.
            _stderr().print(Text(f"note: {form.note}"), soft_wrap=True)
        return
    if emit_to.exists() and not emit_to.is_file():
        _fail(f"--emit-to {emit_to}: not a regular file; give a file name", 2)
    try:
        emit_to.write_text(form.text, encoding="utf-8")
    except OSError as err:
        _fail(f"--emit-to {emit_to}: {err.strerror or err}", 2)
    target = f"; it belongs in {form.path}" if form.path else ""
    _stderr().print(
        Text(f"wrote {emit_to} ({form.kind}{target}; needs: {form.needs})"), soft_wrap=True
    )
    if form.note:
        _stderr().print(Text(f"note: {form.note}"), soft_wrap=True)
