#!/usr/bin/env python3
# ruff: noqa: UP006, UP007, UP022, UP035, UP045
"""holdoff's host collector: what one Linux interface and its host look like
over N seconds, written as one JSON file for ``holdoff explain --from`` and
``holdoff tune --from``.

Runs on the machine in question with nothing of holdoff installed: Python 3.6
or later, standard library only (copy this one file there, or get it with
``holdoff collect --script > collect.py``)::

    python3 collect.py eth0 --seconds 10 -o host.json

It records the driver and NIC (``ethtool -i`` and the PCI ids in sysfs),
coalescing (``ethtool -c`` and ``ethtool --json -c``), rings (``-g``),
channels (``-l``), offloads (``-k``); per-vector interrupt counts from
``/proc/interrupts`` and per-CPU time (softirq, busy) from ``/proc/stat``,
both before and after the window; the interface's packet and byte counters
(``/sys/class/net/IFACE/statistics``) before and after; and the kernel's
``net.core.*`` and ``net.ipv4.tcp_*`` sysctls (read from ``/proc/sys``).
Nothing is changed on the host. A command or file that cannot be read is
recorded with its error and the rest goes on; a missing ``ethtool`` is one
such error.

Simplifies: one interface; vectors are the IRQs in the device's
``msi_irqs`` directory, or else the ``/proc/interrupts`` lines that name the
interface; text outputs are kept whole (up to 1 MiB each) so a reader can
parse them again.

Units: ``seconds`` and ``*_unix_s`` in s; ``/proc/stat`` times in USER_HZ
ticks (``clock_ticks_per_s``); counters in packets and bytes.
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional

SCHEMA = "holdoff-collect/1"
#: The longest window accepted [s].
MAX_SECONDS = 3600.0
#: The most bytes kept of one command's output or one file [bytes].
MAX_TEXT_BYTES = 1 << 20
#: The longest a command may run [s].
COMMAND_TIMEOUT_S = 10.0

#: (name in the JSON, ethtool arguments before the interface)
ETHTOOL_QUERIES = [
    ("driver", ["-i"]),
    ("coalesce", ["-c"]),
    ("coalesce_json", ["--json", "-c"]),
    ("rings", ["-g"]),
    ("channels", ["-l"]),
    ("offloads", ["-k"]),
]

Runner = Callable[[List[str]], Dict[str, Any]]


def run_command(argv: List[str]) -> Dict[str, Any]:
    """Run one command: its exit code and output, or the error that stopped it."""
    out: Dict[str, Any] = {"argv": argv, "rc": None, "stdout": "", "stderr": "", "error": None}
    try:
        proc = subprocess.run(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        out["error"] = f"{argv[0]} is not installed (not found on PATH)"
        return out
    except subprocess.TimeoutExpired:
        out["error"] = f"did not finish within {COMMAND_TIMEOUT_S:g} s"
        return out
    except OSError as err:
        out["error"] = f"could not run: {err}"
        return out
    out["rc"] = proc.returncode
    out["stdout"] = proc.stdout[:MAX_TEXT_BYTES].decode("utf-8", "replace")
    out["stderr"] = proc.stderr[:MAX_TEXT_BYTES].decode("utf-8", "replace")
    if proc.returncode != 0:
        out["error"] = (out["stderr"].strip() or out["stdout"].strip() or "failed")[:500]
    return out


class Host:
    """Where the collector reads from: the file system under ``root`` and a command runner."""

    def __init__(self, root: str = "/", runner: Optional[Runner] = None) -> None:
        self.root = root
        self.runner = runner or run_command
        self.errors: List[str] = []

    def path(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def read(self, path: str) -> Optional[str]:
        """The text of a file (bounded), or None with the error recorded."""
        try:
            with open(self.path(path), "rb") as f:
                return f.read(MAX_TEXT_BYTES).decode("utf-8", "replace")
        except OSError as err:
            self.errors.append(f"{path}: {err.strerror or err}")
            return None

    def listdir(self, path: str) -> List[str]:
        try:
            return sorted(os.listdir(self.path(path)))
        except OSError:
            return []

    def link_name(self, path: str) -> Optional[str]:
        try:
            return os.path.basename(os.readlink(self.path(path)))
        except OSError:
            return None


def parse_interrupts(text: str, irqs: List[str], iface: str) -> Dict[str, Dict[str, Any]]:
    """Per-vector counts from ``/proc/interrupts``: the lines of ``irqs`` (the
    device's MSI vectors), or else the lines whose name mentions ``iface``."""
    lines = text.splitlines()
    if not lines:
        return {}
    ncpu = len(lines[0].split())
    out: Dict[str, Dict[str, Any]] = {}
    for line in lines[1:]:
        m = re.match(r"^\s*(\w+):\s*(.*)$", line)
        if not m:
            continue
        irq, rest = m.group(1), m.group(2).split()
        counts = []
        for word in rest[:ncpu]:
            if not word.isdigit():
                break
            counts.append(int(word))
        name = " ".join(rest[len(counts) :])
        words = name.split()
        label = words[-1] if words else ""
        if (irqs and irq in irqs) or (not irqs and re.search(r"\b" + re.escape(iface), label)):
            out[irq] = {"name": name, "counts": counts}
    return out


def parse_stat(text: str) -> Dict[str, List[int]]:
    """Per-CPU times from ``/proc/stat`` (user nice system idle iowait irq
    softirq steal ...) [USER_HZ ticks]."""
    out: Dict[str, List[int]] = {}
    for line in text.splitlines():
        if line.startswith("cpu"):
            words = line.split()
            out[words[0]] = [int(w) for w in words[1:] if w.isdigit()]
    return out


def read_counters(host: Host, iface: str) -> Dict[str, int]:
    """The interface's statistics counters [packets, bytes]."""
    base = f"/sys/class/net/{iface}/statistics"
    out: Dict[str, int] = {}
    for name in host.listdir(base):
        text = host.read(base + "/" + name)
        if text is not None and text.strip().isdigit():
            out[name] = int(text.strip())
    return out


def read_sysctls(host: Host) -> Dict[str, str]:
    """``net.core.*`` and ``net.ipv4.tcp_*`` from ``/proc/sys``."""
    out: Dict[str, str] = {}
    for folder, prefix in (("/proc/sys/net/core", ""), ("/proc/sys/net/ipv4", "tcp_")):
        for name in host.listdir(folder):
            if not name.startswith(prefix) or os.path.isdir(host.path(folder + "/" + name)):
                continue
            text = host.read(folder + "/" + name)
            if text is not None:
                key = (folder[len("/proc/sys/") :] + "/" + name).replace("/", ".")
                out[key] = " ".join(text.split())
    return out


def device_info(host: Host, iface: str) -> Dict[str, Any]:
    """PCI ids, driver, link speed and MTU from sysfs (None where absent)."""
    base = f"/sys/class/net/{iface}"
    info: Dict[str, Any] = {"driver": host.link_name(base + "/device/driver")}
    for key, rel in (
        ("vendor", "device/vendor"),
        ("device", "device/device"),
        ("subsystem_vendor", "device/subsystem_vendor"),
        ("subsystem_device", "device/subsystem_device"),
        ("numa_node", "device/numa_node"),
        ("speed_mbps", "speed"),
        ("mtu", "mtu"),
        ("operstate", "operstate"),
        ("address", "address"),
    ):
        if not os.path.exists(host.path(base + "/" + rel)):
            info[key] = None
            continue
        text = host.read(base + "/" + rel)
        info[key] = None if text is None else text.strip()
    # virtio: the net device's parent is virtioN, whose PCI parent holds the vectors.
    info["msi_irqs"] = host.listdir(base + "/device/msi_irqs") or host.listdir(
        base + "/device/../msi_irqs"
    )
    info["device_name"] = host.link_name(base + "/device")
    return info


def snapshot(
    host: Host, iface: str, irqs: List[str], clock: Callable[[], float] = time.time
) -> Dict[str, Any]:
    """Interrupt counts, CPU times and counters at one instant."""
    interrupts = host.read("/proc/interrupts")
    stat = host.read("/proc/stat")
    return {
        "unix_s": clock(),
        "interrupts": {} if interrupts is None else parse_interrupts(interrupts, irqs, iface),
        "cpu_ticks": {} if stat is None else parse_stat(stat),
        "counters": read_counters(host, iface),
    }


def collect(
    iface: str,
    seconds: float,
    host: Optional[Host] = None,
    sleep: Callable[[float], None] = time.sleep,
    ethtool: str = "ethtool",
    clock: Callable[[], float] = time.time,
) -> Dict[str, Any]:
    """Everything the collector records for ``iface`` over ``seconds``."""
    host = host or Host()
    device = device_info(host, iface)
    commands: Dict[str, Dict[str, Any]] = {}
    for name, args in ETHTOOL_QUERIES:
        result = host.runner([ethtool] + args + [iface])
        commands[name] = result
        if result["error"] is not None:
            host.errors.append("{}: {}".format(" ".join(result["argv"]), result["error"]))
    before = snapshot(host, iface, device["msi_irqs"], clock)
    sleep(seconds)
    after = snapshot(host, iface, device["msi_irqs"], clock)
    try:
        ticks = os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError, AttributeError):
        ticks = 100
    return {
        "schema": SCHEMA,
        "iface": iface,
        "seconds": seconds,
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "clock_ticks_per_s": ticks,
        "device": device,
        "ethtool": commands,
        "before": before,
        "after": after,
        "sysctls": read_sysctls(host),
        "errors": host.errors,
    }


def main(argv: Optional[List[str]] = None) -> int:
    """Command line: ``collect.py IFACE [--seconds N] [-o FILE]``; exit 2 on bad input."""
    parser = argparse.ArgumentParser(
        prog="collect.py",
        description="Record one interface's driver, coalescing, rings, interrupts, CPU time "
        "and counters over a window, as JSON for holdoff explain/tune --from.",
    )
    parser.add_argument("iface", help="the interface, e.g. eth0 (see /sys/class/net)")
    parser.add_argument("--seconds", type=float, default=10.0, help="window length [s]")
    parser.add_argument("-o", "--output", default="-", help="JSON file to write (- : stdout)")
    parser.add_argument("--ethtool", default="ethtool", help="the ethtool program to run")
    args = parser.parse_args(argv)
    if not (0 <= args.seconds <= MAX_SECONDS):
        parser.exit(2, f"collect.py: --seconds {args.seconds:g}: give 0 to {MAX_SECONDS:g} s\n")
    names = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else []
    if not re.match(r"^[\w.:@-]{1,15}$", args.iface) or args.iface not in names:
        parser.exit(
            2,
            "collect.py: no interface {!r} on this host; interfaces: {}\n".format(
                args.iface, ", ".join(names) or "none found in /sys/class/net"
            ),
        )
    data = collect(args.iface, args.seconds, ethtool=args.ethtool)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        try:
            with open(args.output, "w") as f:
                f.write(text)
        except OSError as err:
            parser.exit(2, f"collect.py: -o {args.output}: {err.strerror or err}\n")
        sys.stderr.write(
            "wrote {} ({} errors recorded{})\n".format(
                args.output,
                len(data["errors"]),
                ": " + "; ".join(data["errors"][:3]) if data["errors"] else "",
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
