"""The tuner's choice among the evaluated points: the objectives' rules, the
Pareto front, ties; see :mod:`holdoff.tune`.

Units: latency [us], CPU [fraction], interrupts [1/s], throughput [bit/s].
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from holdoff.tune.space import Candidate, PointMetrics, overloaded
from holdoff.tune.workloads import THROUGHPUT_FLOOR, THROUGHPUT_TIE, Objective

# -- choosing ---------------------------------------------------------------------------------


@dataclass
class Point:
    """One evaluated setting."""

    candidate: Candidate
    metrics: PointMetrics
    key: str
    #: Other knob settings that decode to the same registers.
    equivalent: list[dict[str, int]] = field(default_factory=list)

    def to_dict(self, iface: str = "eth0") -> dict[str, Any]:
        d = self.candidate.decoded
        return {
            "settings": dict(self.candidate.settings),
            "changed": _changed(self.candidate),
            "commands": self.candidate.commands(iface),
            "mode": d.mode,
            "registers": {r.name: r.value for r in d.registers},
            **self.metrics.to_dict(),
            "scenario_hash": self.key,
        }


def _changed(c: Candidate) -> dict[str, int]:
    """The knobs ``c`` changes from the driver's defaults (port knobs included)."""
    return c.changed()


def _valid(p: Point) -> bool:
    """Without drops, with CPU measured, and not overloaded (a core that
    needed more time than the traffic lasted: :func:`space.overloaded`)."""
    m = p.metrics
    return m.drops == 0 and not math.isnan(m.cpu_util) and not overloaded(m)


#: Throughputs that differ by less than this fraction count as equal in the
#: front (an open-loop workload's goodput moves by a few frames between
#: settings, which is not a trade-off).
FRONT_THROUGHPUT_RESOLUTION = 0.01


def pareto_front(
    points: Sequence[Point], dims: Sequence[str] = ("p99", "cpu", "irq", "thr")
) -> list[Point]:
    """Points no other point beats in every one of ``dims`` -- p99, CPU,
    interrupt rate (lower is better) and throughput (higher, compared at
    :data:`FRONT_THROUGHPUT_RESOLUTION`) -- among the points without drops.
    A quantity the workload does not measure (NaN) is left out."""
    # Settings with exactly the same results (a knob without effect here)
    # are one point of the front: the one that changes fewest knobs.
    same: dict[tuple[float, ...], Point] = {}
    for p in points:
        if not _valid(p):
            continue
        m = p.metrics
        k = (m.p50_us, m.p99_us, m.cpu_util, m.interrupts_per_s, m.throughput_bps)
        if k not in same or _simplicity(p) < _simplicity(same[k]):
            same[k] = p
    pts = list(same.values())
    if not pts:
        return []
    top = max((p.metrics.throughput_bps for p in pts), default=0.0)
    step = top * FRONT_THROUGHPUT_RESOLUTION if top > 0 else 1.0

    def vec(p: Point) -> list[float]:
        m = p.metrics
        values = {
            "p99": m.p99_us,
            "cpu": m.cpu_util,
            "irq": m.interrupts_per_s,
            "thr": -math.floor(m.throughput_bps / step)
            if not math.isnan(m.throughput_bps)
            else math.nan,
        }
        return [values[d] for d in dims if not math.isnan(values[d])]

    vecs = [vec(p) for p in pts]
    front = []
    for i, p in enumerate(pts):
        b = vecs[i]
        dominated = any(
            j != i
            and len(a) == len(b)
            and all(x <= y for x, y in zip(a, b, strict=True))
            and any(x < y for x, y in zip(a, b, strict=True))
            for j, a in enumerate(vecs)
        )
        if not dominated:
            front.append(p)
    return sorted(front, key=lambda p: (p.metrics.cpu_util, _nan_last(p.metrics.p99_us)))


def _simplicity(p: Point) -> int:
    """How many knobs a point changes from the driver's defaults."""
    return len(_changed(p.candidate))


def _nan_last(x: float) -> float:
    return math.inf if math.isnan(x) else x


def choose(points: Sequence[Point], objective: Objective) -> tuple[Point | None, str]:
    """The recommended point and one sentence on why (or why none), with
    how many settings were left out as overloaded."""
    pick, why = _choose(points, objective)
    return pick, why + overload_note(points)


def overload_note(points: Sequence[Point]) -> str:
    """A clause on the settings without drops left out because a core
    needed more time than the traffic lasted ('' when none was)."""
    over = [p for p in points if p.metrics.drops == 0 and overloaded(p.metrics)]
    if not over:
        return ""
    worst = max(p.metrics.busiest_core for p in over)
    return (
        f"; {len(over)} setting{'s' if len(over) != 1 else ''} without drops left out: "
        f"a core needed up to {worst:.2f}x the traffic's span in CPU time, a backlog "
        f"that only the capture's end drained (sustained, the ring would overflow)"
    )


def _choose(points: Sequence[Point], objective: Objective) -> tuple[Point | None, str]:
    valid = [p for p in points if _valid(p)]
    if not valid:
        return None, (
            "every setting tried drops frames, measured no CPU, or left a core more work "
            "than the traffic's span (busiest_core above 1: it would not carry this "
            "traffic sustained)"
        )
    if objective.kind == "throughput":
        best = max(p.metrics.throughput_bps for p in valid)
        tied = [p for p in valid if p.metrics.throughput_bps >= THROUGHPUT_TIE * best]
        pick = min(
            tied, key=lambda p: (p.metrics.cpu_util, p.metrics.interrupts_per_s, _simplicity(p))
        )
        return pick, (
            f"the most throughput ({best / 1e6:.1f} Mb/s); of the {len(tied)} settings within "
            f"{(1 - THROUGHPUT_TIE) * 100:.1f} % of it, the least CPU"
        )
    if objective.kind == "cores":
        same = fewest_cores(valid, objective)
        if not same:
            low = min(valid, key=lambda p: _nan_last(_latency(p, objective)))
            return None, (
                f"no setting meets {objective.metric} <= {objective.bound:g} us without drops; "
                f"the lowest {objective.metric} is {_latency(low, objective):.1f} us "
                f"({_settings_text(low)})"
            )
        k = irq_cores_of(same[0])
        pick = min(
            same,
            key=lambda p: (
                round(p.metrics.cpu_util, 6),
                _nan_last(p.metrics.p99_us),
                _simplicity(p),
            ),
        )
        budget = (
            f" and {objective.metric} <= {objective.bound:g} us"
            if not math.isnan(objective.bound)
            else ""
        )
        return pick, (
            f"{k} interrupt core{'s' if k != 1 else ''} carry the load with no drops{budget} "
            f"({len(same)} settings, within {(1 - THROUGHPUT_FLOOR) * 100:.0f} % of the best "
            "throughput); of those, the least CPU"
        )
    if objective.kind == "pareto":
        front = pareto_front(valid)
        usable = [p for p in front if not math.isnan(p.metrics.p99_us)] or front
        lat = [p.metrics.p99_us for p in usable]
        cpu = [p.metrics.cpu_util for p in usable]

        def scaled(x: float, xs: list[float]) -> float:
            if math.isnan(x):
                return 0.0
            lo, hi = min(xs), max(xs)
            return 0.0 if hi <= lo else (x - lo) / (hi - lo)

        pick = min(
            usable,
            key=lambda p: math.hypot(
                scaled(p.metrics.p99_us, lat), scaled(p.metrics.cpu_util, cpu)
            ),
        )
        return pick, (
            f"the front has {len(front)} points; this one is nearest the ideal corner "
            "(lowest p99 and lowest CPU, each scaled to the front's range)"
        )
    metric = objective.metric
    lat_of: Callable[[Point], float] = (
        (lambda p: p.metrics.p99_us) if metric == "p99" else (lambda p: p.metrics.p50_us)
    )
    if objective.kind == "latency":
        ok = [p for p in valid if lat_of(p) <= objective.bound]
        if not ok:
            low = min(valid, key=lambda p: _nan_last(lat_of(p)))
            return None, (
                f"no setting meets {metric} <= {objective.bound:g} us without drops; the "
                f"lowest {metric} is {lat_of(low):.1f} us ({_settings_text(low)})"
            )
        top = max(p.metrics.throughput_bps for p in ok)
        keep = [p for p in ok if p.metrics.throughput_bps >= THROUGHPUT_FLOOR * top]
        pick = min(keep, key=lambda p: (round(p.metrics.cpu_util, 6), lat_of(p), _simplicity(p)))
        return pick, (
            f"{len(ok)} settings meet {metric} <= {objective.bound:g} us with no drops; of "
            f"those within {(1 - THROUGHPUT_FLOOR) * 100:.0f} % of their best throughput, the "
            "least CPU"
        )
    ok = [p for p in valid if p.metrics.cpu_util <= objective.bound]
    if not ok:
        least = min(valid, key=lambda p: p.metrics.cpu_util)
        return None, (
            f"no setting stays within {objective.bound * 100:g} % CPU without drops; the least "
            f"is {least.metrics.cpu_util * 100:.1f} % ({_settings_text(least)})"
        )
    top = max(p.metrics.throughput_bps for p in ok)
    keep = [p for p in ok if p.metrics.throughput_bps >= THROUGHPUT_FLOOR * top]
    pick = min(keep, key=lambda p: (_nan_last(lat_of(p)), p.metrics.cpu_util, _simplicity(p)))
    return pick, (
        f"{len(ok)} settings stay within {objective.bound * 100:g} % CPU with no drops; of "
        f"those within {(1 - THROUGHPUT_FLOOR) * 100:.0f} % of their best throughput, the "
        f"lowest {metric}"
    )


def irq_cores_of(p: Point) -> int:
    """The cores taking a point's queue vectors (1 for a single-vector port)."""
    return int(p.candidate.port.get("irq-cores", 1))


def _latency(p: Point, objective: Objective) -> float:
    return p.metrics.p99_us if objective.metric == "p99" else p.metrics.p50_us


def fewest_cores(valid: Sequence[Point], objective: Objective) -> list[Point]:
    """Of the settings without drops that keep the best throughput (within
    :data:`THROUGHPUT_FLOOR`) and meet the objective's latency budget (if it
    has one), those on the fewest interrupt cores (none: nothing meets it)."""
    if not math.isnan(objective.bound):
        valid = [p for p in valid if _latency(p, objective) <= objective.bound]
    if not valid:
        return []
    top = max(p.metrics.throughput_bps for p in valid)
    keep = [p for p in valid if p.metrics.throughput_bps >= THROUGHPUT_FLOOR * top]
    k = min(irq_cores_of(p) for p in keep)
    return [p for p in keep if irq_cores_of(p) == k]


def _settings_text(p: Point) -> str:
    changed = _changed(p.candidate)
    return ", ".join(f"{k}={v}" for k, v in changed.items()) or "the defaults"


def _score(m: PointMetrics, objective: Objective, cores: int = 1) -> float:
    """A single number for a budget objective's sampler (lower is better):
    the quantity minimised when the budget holds, else a penalty above any
    feasible value growing with the excess; ``cores``: the point's interrupt
    cores (the fewest-cores objective counts them first)."""
    if m.drops or math.isnan(m.cpu_util):
        return 1e6 + m.drops
    if overloaded(m):
        return 1e6 + m.busiest_core
    if objective.kind == "throughput":
        return -m.throughput_bps / 1e9 + m.cpu_util * 1e-3
    if objective.kind == "cores":
        lat = m.p99_us if objective.metric == "p99" else m.p50_us
        if not math.isnan(objective.bound) and not lat <= objective.bound:
            return 100.0 + (lat / objective.bound if not math.isnan(lat) else 1e3)
        return float(cores) + (m.cpu_util if not math.isnan(m.cpu_util) else 1.0)
    lat = m.p99_us if objective.metric == "p99" else m.p50_us
    if objective.kind == "latency":
        if math.isnan(lat):
            return 1e6
        return m.cpu_util if lat <= objective.bound else 10.0 + lat / objective.bound
    if m.cpu_util > objective.bound:
        return 1e5 + m.cpu_util / objective.bound
    return lat if not math.isnan(lat) else 1e6
