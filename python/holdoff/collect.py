"""``holdoff collect``: where the host collector is, its text, and running it here.

The collector itself is :mod:`holdoff.collect_host`, one standard-library file
an operator copies to the machine in question (nothing of holdoff needs to be
installed there). This module finds it in the installed package
(:func:`script_path`, :func:`script_text`) and runs it on this machine
(:func:`collect_local`), checking the interface and the window first.

Simplifies: a local run calls the collector in this process (same code as the
copied script); the interface must exist in ``/sys/class/net``.
Units: seconds [s].
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from holdoff import collect_host

#: The interface names the kernel accepts: at most 15 bytes (IFNAMSIZ - 1), no '/' or spaces.
_IFACE = re.compile(r"^[\w.:@-]{1,15}$")


class CollectError(ValueError):
    """A bad argument to ``holdoff collect``: names the flag and the fix."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"{flag}: {message}")
        self.flag = flag
        self.message = message


def script_path() -> Path:
    """The shipped collector script (a file of the installed package)."""
    return Path(collect_host.__file__).resolve()


def script_text() -> str:
    """The collector's source, to copy to another machine."""
    return script_path().read_text(encoding="utf-8")


def interfaces(sys_class_net: str = "/sys/class/net") -> list[str]:
    """The interfaces this machine has (empty where sysfs is absent)."""
    try:
        return sorted(os.listdir(sys_class_net))
    except OSError:
        return []


def check_args(iface: str, seconds: float, sys_class_net: str = "/sys/class/net") -> None:
    """Refuse an interface this machine lacks or a window outside 0 to
    :data:`holdoff.collect_host.MAX_SECONDS`, naming the argument."""
    if not seconds == seconds or not 0 <= seconds <= collect_host.MAX_SECONDS:
        raise CollectError(
            "--seconds", f"{seconds:g}: give 0 to {collect_host.MAX_SECONDS:g} seconds"
        )
    names = interfaces(sys_class_net)
    if not _IFACE.match(iface) or iface not in names:
        raise CollectError(
            "IFACE",
            f"no interface {iface!r} on this machine; interfaces: "
            f"{', '.join(names) or f'none found in {sys_class_net}'}",
        )


def collect_local(iface: str, seconds: float, output: Path | None = None) -> dict[str, Any]:
    """Run the collector on this machine for ``iface`` over ``seconds`` and
    write its JSON to ``output`` (if given); the collected document."""
    check_args(iface, seconds)
    data = collect_host.collect(iface, seconds)
    if output is not None:
        try:
            output.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        except OSError as err:
            raise CollectError("-o", f"{output}: {err.strerror or err}") from None
    return data
