"""`holdoff explain`: what the NIC applies for a driver's settings."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from holdoff.cli.common import (
    _Command,
    _fail,
    _read_input,
    _stdout,
    app,
)


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
            text = _read_input(file)
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
