"""Receive livelock: delivered forwarding rate against offered load.

One router (a single 2006 Opteron core, two 82546 ports) forwards 64-byte
frames from a generator to a counting port while the offered load rises from
a trickle to line rate (1.488 Mframes/s). Four designs:

- ``interrupt per packet``: the Linux non-NAPI handler with no throttling.
  The handler does the driver's share of every packet in interrupt context
  and queues it to the backlog; forwarding happens in the NET_RX softirq,
  which every new interrupt preempts. Past the load the handler alone can
  take, the softirq starves and output collapses (receive livelock,
  "Eliminating receive livelock in an interrupt-driven kernel", 1997).
- ``static ITR 8000/s``: the same driver with the interrupt rate capped.
- ``fast interrupt + taskqueue``: FreeBSD 2006 em (mask in the NIC, task
  with rx_process_limit 100).
- ``polling with a quota``: no interrupts; each clock tick (1000 Hz) every
  device is polled for up to ``poll_burst`` packets.

Nothing here is tuned to produce a collapse: the designs share the host and
chip presets; only the driver architecture differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from holdoff import plots
from holdoff.api import run

LINE_RATE_PPS = 1_488_095

DESIGNS: dict[str, dict[str, Any]] = {
    "interrupt per packet": {"driver": "linux-isr", "moderation": {"kind": "static"}},
    "static ITR 8000/s": {
        "driver": "linux-isr",
        "moderation": {"kind": "static", "itr_per_s": 8000},
    },
    "fast interrupt + taskqueue": {
        "driver": "freebsd-taskqueue",
        "moderation": {"kind": "static", "itr_per_s": 8000},
    },
    "polling with a quota": {
        "driver": "polling",
        "moderation": {"kind": "static"},
        "bsd": {"poll_hz": 1000, "poll_burst": 500},
    },
}

DEFAULT_LOADS_KPPS = [50, 100, 200, 300, 400, 500, 600, 700, 800, 1000, 1200, 1488]


def scenario(design: str, offered_pps: float, duration_ms: int = 100) -> dict[str, Any]:
    d = DESIGNS[design]
    host: dict[str, Any] = {
        "name": "router",
        "profile": "opteron-2006",
        "cores": 1,
        "driver": d["driver"],
        "forward": [{"from": "em0", "to": "em1"}],
        "nics": [
            {"name": "em0", "chip": "82546", "moderation": d["moderation"]},
            {"name": "em1", "chip": "82546", "moderation": d["moderation"]},
        ],
    }
    if "bsd" in d:
        host["bsd"] = d["bsd"]
    return {
        "name": f"livelock-{d['driver']}",
        "seed": 1,
        "duration_ms": duration_ms,
        "sample_interval_us": 10_000,
        "hosts": [host],
        "generators": [
            {"name": "source", "pattern": "constant", "rate_pps": min(offered_pps, LINE_RATE_PPS)},
            {"name": "sink", "pattern": "constant", "rate_pps": 1, "start_us": 10**9},
        ],
        "links": [
            {"a": "source", "b": "router.em0", "rate": "1G"},
            {"a": "router.em1", "b": "sink", "rate": "1G"},
        ],
    }


def curves(
    loads_kpps: list[float] | None = None, duration_ms: int = 100
) -> dict[str, list[tuple[float, float]]]:
    """Per design: (offered, delivered) forwarding rates [packets/s]."""
    out: dict[str, list[tuple[float, float]]] = {}
    for design in DESIGNS:
        rows = []
        for k in loads_kpps or DEFAULT_LOADS_KPPS:
            r = run(scenario(design, k * 1000.0, duration_ms))
            s = r.summary
            secs = s["sim_time_ns"] / 1e9
            gens = {g["generator"]: g for g in s["generators"]}
            rows.append((gens["source"]["sent_packets"] / secs, gens["sink"]["rx_packets"] / secs))
        out[design] = rows
    return out


def plot(data: dict[str, list[tuple[float, float]]], path: Path) -> Path:
    """Save the curves as a PNG."""
    with plots.png(
        path,
        title="Receive livelock: one 2006 Opteron core forwarding between two 82546 ports",
        xlabel="offered load [kpackets/s, 64-byte frames]",
        ylabel="forwarded [kpackets/s]",
    ) as ax:
        for i, (design, rows) in enumerate(data.items()):
            xs = [x / 1000 for x, _ in rows]
            ys = [y / 1000 for _, y in rows]
            # Later designs smaller and thinner on top: where curves coincide
            # (below saturation) every design stays visible.
            ax.plot(
                xs,
                ys,
                label=design,
                color=plots.COLOURS[i % len(plots.COLOURS)],
                marker=plots.MARKERS[i % len(plots.MARKERS)],
                markersize=max(3.0, 10.0 - 2.0 * i),
                linestyle=plots.LINESTYLES[i % len(plots.LINESTYLES)],
                linewidth=max(1.0, 3.0 - 0.6 * i),
            )
        top = max(x for rows in data.values() for x, _ in rows) / 1000
        ax.plot([0, top], [0, top], color="grey", linestyle=":", label="delivered = offered")
    return path
