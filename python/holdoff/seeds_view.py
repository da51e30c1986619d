"""Terminal text for runs over several seeds, and a run's warnings about its replays.

``holdoff run --seeds N`` prints one line saying which seeds ran and a table
of every numeric metric as ``mean ± half-width`` of its 95 % interval
(:mod:`holdoff.stats`: a t interval, a seeded bootstrap for percentiles).
:func:`scenario_replay_warnings` reads a scenario's replays' captures
(:func:`holdoff.capture.replay_warnings`) before the run: a ``duration_ms``
that ends before the capture, with the value that covers it (the run's
report says the rest).

Simplifies: metrics are the flat record of :func:`holdoff.sweeps.metrics_record`
(a metric that is NaN in any seed is left out).

Units: each metric's own (its name carries it).
"""

from __future__ import annotations

import os
import tomllib
from typing import Any

from rich.table import Table

from holdoff import capture, stats
from holdoff.seeds import SeedsResult


def scenario_replay_warnings(text: str, base_dir: str | os.PathLike[str] | None) -> list[str]:
    """Warnings about the replays of a scenario given as TOML text that its
    run's report will not carry (none if it does not parse: the run names
    that error): a ``duration_ms`` that ends before a capture, with the
    value that covers it."""
    try:
        data: dict[str, Any] = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    return capture.replay_warnings(data, base_dir, reported=True)


def seeds_warnings(res: SeedsResult) -> list[dict[str, str]]:
    """The runs' warnings, each once; one that not every seed's run gave
    names the seeds that did."""
    out = []
    for w in res.warnings:
        seeds = w["seeds"]
        tail = "" if len(seeds) == len(res.seeds) else f" (seeds {', '.join(map(str, seeds))})"
        out.append({"field": w["field"], "message": w["message"] + tail})
    return out


def seeds_header(res: SeedsResult) -> str:
    seeds = res.seeds
    return (
        f"{len(seeds)} runs, seeds {seeds[0]} to {seeds[-1]} (the scenario's seed and the next "
        f"{len(seeds) - 1}); each metric is the mean ± half its 95 % interval (t interval; "
        "percentiles: a seeded bootstrap)"
    )


def _fmt(v: float) -> str:
    a = abs(v)
    if a == 0 or 1e-3 <= a < 1e15:
        return f"{v:,.4g}" if a < 1e4 else f"{v:,.0f}"
    return f"{v:.4g}"


def seeds_table(res: SeedsResult) -> Table:
    """Every numeric metric: mean ± half-width, then the interval."""
    t = Table(title=f"over {len(res.seeds)} seeds")
    for col in ("metric", "mean ± half-width", "95 % interval"):
        t.add_column(col, justify="left" if col == "metric" else "right")
    s = res.summary
    for name, value in s.items():
        if name == "seeds" or name.endswith("_ci95") or not isinstance(value, int | float):
            continue
        ci = s.get(f"{name}_ci95")
        lo, hi = (float(ci[0]), float(ci[1])) if ci else (None, None)
        iv = stats.Interval(float(value), lo, hi, len(res.seeds))
        half = iv.half_width
        t.add_row(
            name,
            _fmt(iv.mean) + ("" if half is None else f" ± {_fmt(half)}"),
            "-" if ci is None else f"{_fmt(ci[0])} to {_fmt(ci[1])}",
        )
    return t


__all__ = ["scenario_replay_warnings", "seeds_header", "seeds_table", "seeds_warnings"]
