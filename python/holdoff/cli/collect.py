"""`holdoff collect`: the host collector script, and running it on this machine."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from holdoff.cli.common import _Command, _fail, _stderr, app


@app.command("collect", cls=_Command)
def collect_command(
    iface: Annotated[
        str | None,
        typer.Argument(
            help="Interface to record on this machine (e.g. eth0); without it, say where the "
            "script is.",
            show_default=False,
        ),
    ] = None,
    seconds: Annotated[
        float, typer.Option("--seconds", help="Window over which rates are measured, in seconds.")
    ] = 10.0,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="JSON file to write (default: stdout)."),
    ] = None,
    script: Annotated[
        bool,
        typer.Option("--script", help="Print the collector script (to copy to another host)."),
    ] = False,
) -> None:
    """Record one interface's driver, coalescing, rings, channels, offloads, interrupts,
    CPU time, counters and network sysctls as JSON for explain/tune --from. The
    collector is one Python file that needs nothing of holdoff: --script prints it."""
    from holdoff import collect

    if script:
        sys.stdout.write(collect.script_text())
        return
    if iface is None:
        path = collect.script_path()
        sys.stdout.write(
            f"collector script: {path}\n"
            "on the host in question (Python 3.6 or later, nothing else needed):\n"
            "  holdoff collect --script > collect.py   # here; copy collect.py there\n"
            "  python3 collect.py eth0 --seconds 10 -o host.json\n"
            "then here: holdoff explain --from host.json  (or holdoff tune --from host.json)\n"
            "or on this machine: holdoff collect IFACE --seconds 10 -o host.json\n"
        )
        return
    import json

    try:
        data = collect.collect_local(iface, seconds, output)
    except collect.CollectError as err:
        _fail(str(err), 2)
    except KeyboardInterrupt:
        _stderr().print("interrupted: nothing written")
        raise typer.Exit(130) from None
    if output is None:
        sys.stdout.write(json.dumps(data, indent=1, sort_keys=True) + "\n")
        return
    errors = data["errors"]
    shown = "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)" if len(errors) > 3 else "")
    _stderr().print(f"wrote {output}" + (f"; could not read: {shown}" if errors else ""))
