"""Every moderation algorithm side by side on the same three workloads.

Workloads (two hosts, modern Xeon profile, 1 Gb/s link, NAPI):
  ping  - ICMP echo once per second (ping -i 1), 64-byte payload
  rr    - TCP request/response, 64-byte request and response, back to back
  bulk  - iperf-like bulk TCP transfer
For each algorithm and workload: latency p50/p99 (ping RTT or transaction
time), throughput (ping: replies/s, rr: transactions/s, bulk: goodput),
interrupt rate of the receiving port, and CPU of both hosts.

Run:  python experiments/compare_algorithms.py [--json] [--duration-ms N]

To compare moderators with error bars (seeds, 95 % intervals, the difference
to a baseline) on the standard battery and four chips, without copying this
file, use the installed command instead: ``holdoff battery MODERATOR...``
(docs/howto-test-moderation.md); it takes built-ins with settings
(``freebsd-aim:enable_aim=2``), Python classes (``file.py:Class``) and C files.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import holdoff

# (label, chip, moderation table). e1000-family algorithms drive the 82546's
# ITR; igb-class algorithms drive the I210's per-vector EITR.
ALGORITHMS: list[tuple[str, str, dict[str, Any]]] = [
    ("none", "82546", {"kind": "static"}),
    ("static 8000/s", "82546", {"kind": "static", "itr_per_s": 8000}),
    ("e1000 5.x dynamic", "82546", {"kind": "e1000-5x"}),
    ("e1000 7.x mode 1", "82546", {"kind": "e1000-itr", "interrupt_throttle_rate": 1}),
    ("e1000 7.x mode 3", "82546", {"kind": "e1000-itr", "interrupt_throttle_rate": 3}),
    ("igb dynamic conservative", "i210", {"kind": "igb"}),
    ("ixl dynamic", "i210", {"kind": "ixl"}),
]

# Optional algorithms (present when their modules are built in).
OPTIONAL: list[tuple[str, str, dict[str, Any]]] = [
    ("FreeBSD AIM 1", "82546", {"kind": "freebsd-aim", "enable_aim": 1}),
    ("FreeBSD AIM 2", "82546", {"kind": "freebsd-aim", "enable_aim": 2}),
    ("Linux DIM", "i210", {"kind": "dim"}),
]


def scenario(workload: str, chip: str, moderation: dict[str, Any], duration_ms: int) -> dict:
    nic = {"name": "eth0", "chip": chip, "moderation": moderation}
    # Modern Linux autotunes its receive buffer (not modelled) instead of
    # stopping the window at half the space as 2.6 did with 2 KB buffers:
    # payload accounting offers the whole window, the same for every algorithm.
    tcp = {"skb_truesize_bytes": 0}
    hosts = [
        {"name": h, "profile": "xeon-modern", "driver": "napi", "tcp": tcp, "nics": [dict(nic)]}
        for h in ("a", "b")
    ]
    if workload == "ping":
        app = {"kind": "ping", "name": "w", "host": "a", "to": "b", "interval_us": 1_000_000}
        duration_ms = max(duration_ms, 5000)
    elif workload == "rr":
        app = {"kind": "rpc", "name": "w", "host": "a", "to": "b"}
    else:
        app = {"kind": "iperf", "name": "w", "host": "a", "to": "b"}
    return {
        "name": f"compare-{workload}",
        "seed": 1,
        "duration_ms": duration_ms,
        "sample_interval_us": 100_000,
        "hosts": hosts,
        "links": [{"a": "a.eth0", "b": "b.eth0", "rate": "1G"}],
        "apps": [app],
    }


def measure(workload: str, r: holdoff.RunResult, duration_ms: float) -> dict[str, Any]:
    s = r.summary
    secs = s["sim_time_ns"] / 1e9
    apps = {a["kind"]: a for a in s["apps"]}
    if workload == "ping":
        a = apps["ping"]
        lat, thr, unit = a["latency_us"], a["received"] / secs, "replies/s"
    elif workload == "rr":
        a = apps["rpc"]
        lat, thr, unit = a["latency_us"], a["transactions"] / secs, "trans/s"
    else:
        a = apps["iperf_receiver"]
        lat, thr, unit = None, a["throughput_bps"] / 1e6, "Mb/s"
    rx_port = next(p for p in s["ports"] if p["port"] == "b.eth0")
    return {
        "p50_us": lat["p50"] if lat else None,
        "p99_us": lat["p99"] if lat else None,
        "throughput": thr,
        "unit": unit,
        "irq_per_s": rx_port["interrupts"] / secs,
        "cpu_a": s["hosts"][0]["cpu_util"]["busy"],
        "cpu_b": s["hosts"][1]["cpu_util"]["busy"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--json", action="store_true", help="print rows as JSON")
    ap.add_argument("--duration-ms", type=int, default=500, help="simulated time per rr/bulk run")
    args = ap.parse_args(argv)
    schema_kinds = json.dumps(holdoff.schema())
    algos = ALGORITHMS + [a for a in OPTIONAL if f'"{a[2]["kind"]}"' in schema_kinds]
    rows = []
    for label, chip, mod in algos:
        for workload in ("ping", "rr", "bulk"):
            r = holdoff.run(scenario(workload, chip, mod, args.duration_ms))
            rows.append(
                {
                    "algorithm": label,
                    "chip": chip,
                    "workload": workload,
                    **measure(workload, r, args.duration_ms),
                }
            )
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title="moderation algorithms x workloads (receiver: host b)")
    for col in [
        "algorithm",
        "chip",
        "workload",
        "p50 us",
        "p99 us",
        "throughput",
        "irq/s (b)",
        "CPU a",
        "CPU b",
    ]:
        t.add_column(col, justify="left" if col in ("algorithm", "chip", "workload") else "right")
    for row in rows:
        f = lambda v: "-" if v is None else f"{v:,.1f}"  # noqa: E731
        t.add_row(
            row["algorithm"],
            row["chip"],
            row["workload"],
            f(row["p50_us"]),
            f(row["p99_us"]),
            f"{row['throughput']:,.1f} {row['unit']}",
            f"{row['irq_per_s']:,.0f}",
            f"{row['cpu_a']:.1%}",
            f"{row['cpu_b']:.1%}",
        )
    Console().print(t)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
