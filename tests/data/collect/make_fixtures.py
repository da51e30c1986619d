"""Writes the two host-file fixtures by running the collector's own reading code
(holdoff.collect_host.collect) on recorded text, so the fixtures have exactly
the shape a real run writes. See README.md in this folder for what is real and
what is constructed. Run from the repository root:

    .venv/bin/python tests/data/collect/make_fixtures.py

Units: seconds [s]; /proc/stat in USER_HZ ticks (100 a second).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from holdoff.collect_host import Host, collect

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "ethtool"
SRC = HERE / "src"
WINDOW_S = 10.0


def _ok(text: str) -> dict[str, Any]:
    return {"rc": 0, "stdout": text, "stderr": "", "error": None}


def _failed(text: str) -> dict[str, Any]:
    return {"rc": 1, "stdout": "", "stderr": text, "error": text.strip()}


def _interrupts(ncpu: int, vectors: list[tuple[int, str]], counts: list[list[int]]) -> str:
    head = "".join(f"{'CPU' + str(i):>11}" for i in range(ncpu))
    lines = [head]
    for (irq, name), row in zip(vectors, counts, strict=True):
        cells = "".join(f"{c:>11}" for c in row)
        lines.append(f"{irq:>4}:{cells}  PCI-MSI-edge      {name}")
    return "\n".join(lines) + "\n"


def _stat(rows: list[list[int]]) -> str:
    total = [sum(col) for col in zip(*rows, strict=True)]
    out = ["cpu  " + " ".join(map(str, total))]
    out += [f"cpu{i} " + " ".join(map(str, r)) for i, r in enumerate(rows)]
    return "\n".join(out) + "\nintr 0\n"


def build(name: str, spec: dict[str, Any]) -> None:
    root = Path(tempfile.mkdtemp())
    iface = spec["iface"]
    net = root / "sys/class/net" / iface
    (net / "statistics").mkdir(parents=True)
    dev = root / "sys/devices/pci" / spec["bus"]
    (dev / "msi_irqs").mkdir(parents=True)
    drv = root / "sys/bus/pci/drivers" / spec["driver"]
    drv.mkdir(parents=True)
    (dev / "driver").symlink_to(drv)
    (net / "device").symlink_to(dev)
    for key, value in spec["sysfs"].items():
        (dev / key).write_text(value + "\n")
    for key in ("speed", "mtu", "operstate"):
        (net / key).write_text(spec[key] + "\n")
    for irq, _ in spec["vectors"]:
        (dev / "msi_irqs" / str(irq)).write_text("msix\n")
    core = root / "proc/sys/net/core"
    core.mkdir(parents=True)
    ipv4 = root / "proc/sys/net/ipv4"
    ipv4.mkdir(parents=True)
    for key, value in spec["sysctls"].items():
        folder = core if key.startswith("net.core.") else ipv4
        (folder / key.rsplit(".", 1)[1]).write_text(value + "\n")

    def state(which: int) -> None:
        (root / "proc").mkdir(exist_ok=True)
        (root / "proc/interrupts").write_text(
            _interrupts(spec["ncpu"], spec["vectors"], spec["irq_counts"][which])
        )
        (root / "proc/stat").write_text(_stat(spec["cpu_ticks"][which]))
        for key, value in spec["counters"][which].items():
            (net / "statistics" / key).write_text(f"{value}\n")

    outputs = spec["ethtool"]

    def runner(argv: list[str]) -> dict[str, Any]:
        key = " ".join(argv[1:-1])
        return {"argv": argv, **outputs.get(key, _failed("not recorded for this fixture"))}

    times = iter([1_700_000_000.0, 1_700_000_000.0 + WINDOW_S])
    state(0)
    data = collect(
        iface,
        WINDOW_S,
        host=Host(str(root), runner),
        sleep=lambda _s: state(1),
        clock=lambda: next(times),
    )
    data.update(kernel=spec["kernel"], machine="x86_64", cpus=spec["ncpu"], clock_ticks_per_s=100)
    shutil.rmtree(root)
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    (HERE / name).write_text(text.replace(str(root), ""))


#: A CPU's times when the window opens [ticks]: user nice system idle iowait irq softirq ...
BASE_TICKS = [50_000, 0, 10_000, 900_000, 100, 0, 2_000, 0, 0, 0]


def _ticks(busy: int, softirq: int) -> list[int]:
    """The times at the window's end: 10 s at 100 ticks/s, ``busy`` of them not idle."""
    window = [busy - softirq, 0, 0, 1000 - busy, 0, 0, softirq, 0, 0, 0]
    return [a + b for a, b in zip(BASE_TICKS, window, strict=True)]


def _device(iface: str, driver: str, bus: str, pci: str, link: str, ncpu: int) -> dict[str, Any]:
    """The sysfs facts of a fixture: PCI ``vendor:device``, ``link`` as "speed/mtu/kernel"."""
    vendor, device = pci.split(":")
    speed, mtu, kernel = link.split("/")
    return {
        "iface": iface,
        "driver": driver,
        "bus": bus,
        "sysfs": {"vendor": vendor, "device": device},
        "speed": speed,
        "mtu": mtu,
        "operstate": "up",
        "kernel": kernel,
        "ncpu": ncpu,
    }


TG3 = {
    **_device("eth0", "tg3", "0000:01:00.0", "0x14e4:0x1686", "1000/9000/5.3.6-gentoo", 2),
    "vectors": [(16, "eth0-0"), (17, "eth0-rx-1"), (18, "eth0-rx-2"), (19, "eth0-rx-3")],
    "irq_counts": [
        [[1000, 0], [5000, 0], [0, 5000], [7000, 0]],
        [[1200, 0], [45000, 0], [0, 25000], [17000, 0]],
    ],
    "cpu_ticks": [[BASE_TICKS, BASE_TICKS], [_ticks(300, 120), _ticks(200, 60)]],
    "counters": [
        {
            "rx_packets": 13844854,
            "tx_packets": 14831625,
            "rx_bytes": 2298858755,
            "tx_bytes": 75684684566,
        },
        {
            "rx_packets": 13844854 + 400000,
            "tx_packets": 14831625 + 200000,
            "rx_bytes": 2298858755 + 400000 * 300,
            "tx_bytes": 75684684566 + 200000 * 1500,
        },
    ],
    "sysctls": {
        "net.core.netdev_budget": "300",
        "net.core.netdev_budget_usecs": "2000",
        "net.ipv4.tcp_limit_output_bytes": "1048576",
    },
    "ethtool": {
        "-i": _ok((SRC / "tg3-ethtool-i.txt").read_text()),
        "-c": _ok((CORPUS / "tg3-eth0-c.txt").read_text()),
        "--json -c": _failed((SRC / "json-refused.txt").read_text()),
        "-g": _ok((CORPUS / "tg3-eth0-g.txt").read_text()),
        "-l": _ok((SRC / "tg3-ethtool-l.txt").read_text()),
        "-k": _ok((SRC / "tg3-ethtool-k.txt").read_text()),
    },
}

IXGBE = {
    **_device("eno1", "ixgbe", "0000:61:00.0", "0x8086:0x1563", "10000/1500/6.5.0-35-generic", 4),
    "vectors": [(100 + i, f"eno1-TxRx-{i}") for i in range(4)] + [(104, "eno1")],
    "irq_counts": [
        [[0] * 4 for _ in range(5)],
        [[30000, 0, 0, 0], [0, 30000, 0, 0], [0, 0, 30000, 0], [0, 0, 0, 30000], [1, 0, 0, 0]],
    ],
    "cpu_ticks": [[BASE_TICKS] * 4, [_ticks(250, 100)] * 4],
    "counters": [
        {"rx_packets": 0, "tx_packets": 0, "rx_bytes": 0, "tx_bytes": 0},
        {
            "rx_packets": 1_000_000,
            "tx_packets": 500_000,
            "rx_bytes": 1_000_000 * 1000,
            "tx_bytes": 500_000 * 100,
        },
    ],
    "sysctls": {"net.core.netdev_budget": "300", "net.ipv4.tcp_rmem": "4096\t131072\t6291456"},
    "ethtool": {
        "-i": _ok((SRC / "eno1-ethtool-i.txt").read_text()),
        "-c": _ok((CORPUS / "eno1-aggr-c.txt").read_text()),
        "--json -c": _failed((SRC / "json-refused.txt").read_text()),
        "-g": _ok((CORPUS / "eno1-aggr-g.txt").read_text()),
        "-l": _ok((SRC / "eno1-ethtool-l.txt").read_text()),
    },
}


if __name__ == "__main__":
    build("tg3-eth0.json", TG3)
    build("ixgbe-eno1.json", IXGBE)
