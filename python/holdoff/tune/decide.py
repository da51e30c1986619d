"""The tuner's answer over seeds: ties within the interval, the default first,
what a change costs to apply, and only the lines that change something.

:func:`holdoff.tune.choose.choose` finds the best point by the objective's
means. :func:`settle` then treats as ties every setting the objective
accepts whose 95 % interval on the objective's quantity overlaps the best's
(or whose mean is within :data:`RESOLUTION` of it) and takes, among them, the
one closest to the driver's default: the default itself, else a setting that
needs no reboot or interface reset, else the fewest knobs changed. So a
change is recommended only when it buys a difference larger than the
interval, and a change that needs a reboot only when no setting without one
is tied with it.

With no budget (`pareto`) a current setting that no other beats on both
p99 and CPU beyond the intervals (:func:`dominated`) stays: every other point
of the front trades one for the other, and which trade is the operator's. The
front's point nearest the ideal corner is then given as ``alternative``, with
its difference and lines. When settings do beat it on both, the pick is the
one of those nearest the ideal corner (not the whole front's, which may trade
against the current setting).

The difference a change buys is stated from the per-seed differences between
the recommendation and the current setting (every setting runs the same
seeds, so the differences are paired), each with its 95 % interval
(:func:`holdoff.stats.ci95`).

Simplifies: "current setting" is the driver's default; the resolution
floor is the model's, not the machine's (a replayed capture's arrivals do not
depend on the seed, so its intervals can be zero wide; the floor keeps a
0.01-point CPU difference from counting as a gain).

Units: CPU in points of percent of the tuned host's cores, latency [us],
throughput [Mb/s], interrupts [1/s].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from holdoff import knobs, stats
from holdoff.knobs.ixgbe_warnings import resets
from holdoff.tune.choose import (
    Point,
    _changed,
    _simplicity,
    _valid,
    choose,
    fewest_cores,
    pareto_front,
)
from holdoff.tune.workloads import THROUGHPUT_FLOOR, THROUGHPUT_TIE, Objective

#: Differences of means at or below these are ties whatever the intervals:
#: CPU [fraction] (0.1 point of percent), latency [us], throughput [fraction
#: of the larger].
RESOLUTION = {"cpu_util": 0.001, "p50_us": 1.0, "p99_us": 1.0, "throughput_bps": 0.005}

_WORDS = {"cpu_util": "CPU", "p99_us": "p99", "p50_us": "p50", "throughput_bps": "throughput"}

#: Where a knob is set -> what applying it needs (None: takes effect at once).
DISRUPTION = {
    "ixgbe rx-usecs": "an interface reset (ixgbe_set_coalesce resets when RSC or the TX "
    "write-back threshold changes)",
    "ethtool -L": "an interface reset (ixgbe_set_channels restarts the port)",
    "ethtool -G": "an interface reset (ixgbe_set_ringparam restarts the port)",
    "ethtool -L/-G": "an interface reset (ixgbe_set_channels and ixgbe_set_ringparam restart "
    "the port)",
    "loader.conf": "a reboot",
    "#define (kernel rebuild)": "a kernel rebuild and a reboot",
    "module parameter": "a driver reload (the interface resets)",
}

#: Port knobs (:mod:`holdoff.tune.ports`) and where they are set.
PORT_WHERE = {"combined": "ethtool -L", "ring": "ethtool -G"}


def objective_metric(objective: Objective) -> str | None:
    """The quantity the objective optimises (None for the Pareto front)."""
    if objective.kind == "latency":
        return "cpu_util"
    if objective.kind == "cpu":
        return "p99_us" if objective.metric == "p99" else "p50_us"
    if objective.kind in ("throughput",):
        return "throughput_bps"
    if objective.kind == "cores":
        return "cpu_util"
    return None


def disruption(point: Point) -> str | None:
    """What applying ``point`` needs beyond a runtime command (the worst of its
    changed knobs), or None."""
    where = {k.key: k.where for k in knobs.knobs(point.candidate.decoded.driver)}
    where.update(PORT_WHERE)
    changed = _changed(point.candidate)
    places = {where.get(k) for k in changed}
    if {"ethtool -L", "ethtool -G"} <= places:
        # Both restart the port: name both functions in one reason.
        places -= {"ethtool -L", "ethtool -G"}
        places.add("ethtool -L/-G")
    needs = [DISRUPTION[w] for w in places if w in DISRUPTION]
    if point.candidate.decoded.driver == "linux-ixgbe" and resets(point.candidate.decoded):
        needs.append(DISRUPTION["ixgbe rx-usecs"])
    order = list(DISRUPTION.values())
    return max(needs, key=order.index) if needs else None


def eligible(points: Sequence[Point], objective: Objective) -> list[Point]:
    """The settings the objective chooses among (as :func:`choose` filters)."""
    valid = [p for p in points if _valid(p)]
    if not valid:
        return []
    if objective.kind == "throughput":
        best = max(p.metrics.throughput_bps for p in valid)
        return [p for p in valid if p.metrics.throughput_bps >= THROUGHPUT_TIE * best]
    if objective.kind == "pareto":
        front = pareto_front(valid)
        return [p for p in front if not math.isnan(p.metrics.p99_us)] or front
    if objective.kind == "cores":
        return fewest_cores(valid, objective)
    if objective.kind == "latency":
        name = "p99_us" if objective.metric == "p99" else "p50_us"
        ok = [p for p in valid if p.metrics.value(name) <= objective.bound]
    else:
        ok = [p for p in valid if p.metrics.cpu_util <= objective.bound]
    if not ok:
        return []
    top = max(p.metrics.throughput_bps for p in ok)
    return [p for p in ok if p.metrics.throughput_bps >= THROUGHPUT_FLOOR * top]


def tied(a: Point, b: Point, metric: str) -> bool:
    """Whether ``a`` and ``b`` cannot be told apart on ``metric``: their
    intervals overlap, or their means differ by no more than the resolution."""
    ia, ib = a.metrics.interval(metric), b.metrics.interval(metric)
    if math.isnan(ia.mean) or math.isnan(ib.mean):
        return math.isnan(ia.mean) and math.isnan(ib.mean)
    if ia.overlaps(ib):
        return True
    res = RESOLUTION.get(metric, 0.0)
    if metric == "throughput_bps":
        res *= max(abs(ia.mean), abs(ib.mean))
    return abs(ia.mean - ib.mean) <= res


@dataclass
class Decision:
    """The recommendation and what the output says first."""

    pick: Point | None
    reason: str
    #: Whether the current setting (the default) meets the objective.
    current_meets: bool
    #: Settings tied with the best on the objective (the pick among them).
    ties: int
    #: "saves 0.9 ± 0.2 points of CPU, costs 21 ± 4 us of p99" (empty: no change).
    difference: str
    #: What applying the pick needs (None: a runtime command).
    needs: str | None
    #: The lines to paste: only those that change the current setting.
    paste: list[str]
    #: `pareto` with the current setting on the front: the front's point
    #: nearest the ideal corner, shown beside it as a trade (not chosen).
    alternative: Point | None = None
    #: What the alternative buys and costs against the current setting.
    alternative_difference: str = ""
    #: The alternative's lines to paste.
    alternative_paste: list[str] | None = None


def settle(
    points: Sequence[Point],
    objective: Objective,
    current: Point,
    iface: str = "eth0",
    default: Point | None = None,
) -> Decision:
    """Choose with ties and the current setting first, then the default (see
    the module doc); ``current`` is the setting in effect (default: the
    driver's default)."""
    dflt = current if default is None else default
    best, reason = choose(points, objective)
    pool = eligible(points, objective)
    meets = any(p.key == current.key for p in pool)
    if best is None:
        return Decision(None, reason, False, 0, "", None, [])
    if objective.kind == "pareto" and best.key != current.key:
        cur = next((p for p in points if p.key == current.key), current)
        if _valid(cur) and not math.isnan(cur.metrics.p99_us):
            better = [q for q in points if beats(q, cur)]
            if not better:
                # A move along the front trades p99 for CPU or back: which
                # trade is the operator's to make, so the current setting
                # stays and the front's knee is shown beside it.
                return Decision(
                    cur,
                    f"no setting beats the current one on both p99 and CPU {_margin(cur)}, "
                    "so it stays: any other point of the front trades one "
                    'for the other. Give a budget (--objective "p99<=..." or '
                    '"cpu<=...") to choose a trade',
                    True,
                    1,
                    "",
                    None,
                    [],
                    alternative=best,
                    alternative_difference=difference(best, cur),
                    alternative_paste=paste_lines(best, cur, iface),
                )
            if not any(q.key == best.key for q in better):
                # The front's knee trades against the current setting; of the
                # settings better on both, the one nearest the ideal corner.
                knee, _ = choose(better, objective)
                if knee is not None:
                    best = knee
                    reason = (
                        f"{len(better)} settings beat the current one on both p99 and CPU "
                        f"{_margin(cur)}; of those, the one nearest the ideal "
                        "corner (each scaled to their range)"
                    )
    metric = objective_metric(objective)
    if metric is None:
        ties = [p for p in pool if tied(p, best, "p99_us") and tied(p, best, "cpu_util")]
    else:
        ties = [p for p in pool if tied(p, best, metric)]
    ties = ties or [best]

    def closeness(p: Point) -> tuple[bool, bool, bool, int, float]:
        v = p.metrics.value(metric) if metric else 0.0
        v = -v if metric == "throughput_bps" else v
        return (
            p.key != current.key,
            p.key != dflt.key,
            disruption(p) is not None,
            _simplicity(p),
            v,
        )

    pick = min(ties, key=closeness)
    if pick is not best and len(ties) > 1:
        what = _WORDS.get(metric, metric) if metric else "p99 and CPU"
        reason += (
            f"; {len(ties)} settings are within the interval of the best on {what}, and "
            "this one is the closest to the driver's default"
        )
    if pick.key == current.key:
        return Decision(pick, reason, meets, len(ties), "", None, [])
    return Decision(
        pick,
        reason,
        meets,
        len(ties),
        difference(pick, current),
        disruption(pick),
        paste_lines(pick, current, iface),
    )


def _margin(p: Point) -> str:
    """How "beats" was judged: beyond the 95 % intervals over seeds, or with
    one seed (no interval) beyond the resolution alone."""
    if p.metrics.seeds > 1:
        return "beyond their 95 % intervals"
    return "beyond the resolution (one seed: no interval)"


def beats(q: Point, p: Point) -> bool:
    """Whether ``q`` (without drops) is better than ``p`` on both p99 and CPU,
    each by more than the intervals (and the resolution): :func:`tied` on
    neither."""
    if q.key == p.key or not _valid(q):
        return False
    if math.isnan(q.metrics.p99_us) or math.isnan(p.metrics.p99_us):
        return False
    return (
        q.metrics.p99_us < p.metrics.p99_us
        and q.metrics.cpu_util < p.metrics.cpu_util
        and not tied(q, p, "p99_us")
        and not tied(q, p, "cpu_util")
    )


def dominated(p: Point, points: Sequence[Point]) -> bool:
    """Whether a setting of ``points`` :func:`beats` ``p``."""
    return any(beats(q, p) for q in points)


def _paired(pick: Point, current: Point, name: str, scale: float = 1.0) -> stats.Interval | None:
    a, b = pick.metrics.per_seed, current.metrics.per_seed
    if not a or len(a) != len(b):
        return None
    diffs = [(x[name] - y[name]) * scale for x, y in zip(a, b, strict=True)]
    if any(math.isnan(d) for d in diffs):
        return None
    return stats.ci95(diffs, percentile=stats.is_percentile(name))


def difference(pick: Point, current: Point) -> str:
    """What ``pick`` buys and costs against ``current``: CPU, p99, interrupt
    rate and throughput, each a paired mean difference ± its half-interval;
    differences within the resolution are left out."""
    parts = []
    for name, scale, unit, fmt in (
        ("cpu_util", 100.0, "points of CPU", "{:.2f}"),
        ("p99_us", 1.0, "us of p99", "{:.1f}"),
        ("interrupts_per_s", 1.0, "interrupts/s", "{:,.0f}"),
        ("throughput_bps", 1e-6, "Mb/s of throughput", "{:.2f}"),
    ):
        iv = _paired(pick, current, name, scale)
        if iv is None:
            continue
        res = RESOLUTION.get(name, 0.0) * scale
        if name == "throughput_bps":
            res *= max(pick.metrics.throughput_bps, current.metrics.throughput_bps)
        if name == "interrupts_per_s":
            res = 0.005 * max(pick.metrics.interrupts_per_s, current.metrics.interrupts_per_s)
        if abs(iv.mean) <= res:
            continue
        lower_is_better = name != "throughput_bps"
        gain = (iv.mean < 0) == lower_is_better
        size = stats.Interval(abs(iv.mean), iv.lo, iv.hi, iv.n)
        parts.append(f"{'saves' if gain else 'costs'} {stats.format_pm(size, fmt)} {unit}")
    return ", ".join(parts)


#: Commands that set one value; a line of these the current setting already
#: prints sets nothing new.
_SETTERS = ("sysctl ", "ethtool ", "echo ", "#define ")


def paste_lines(pick: Point, current: Point, iface: str = "eth0") -> list[str]:
    """``pick``'s lines without those that set what ``current`` already has."""
    have = set(current.candidate.commands(iface))
    return [
        line
        for line in pick.candidate.commands(iface)
        if not (line in have and line.startswith(_SETTERS))
    ]


__all__ = [
    "DISRUPTION",
    "RESOLUTION",
    "Decision",
    "difference",
    "disruption",
    "eligible",
    "objective_metric",
    "paste_lines",
    "settle",
    "tied",
]
