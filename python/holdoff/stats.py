"""Run-to-run spread: a metric's mean over seeds and its 95 % confidence interval.

Every figure holdoff prints for a set of seeds (``--seeds N`` on ``run``,
``sweep`` replicates, ``tune``, ``calibrate``, ``reproduce``) goes through
:func:`ci95`, so the whole project states spread one way:

- a metric that is itself a mean or a rate (throughput, CPU, interrupt rate,
  drops): the Student t interval of the per-seed values
  (``scipy.stats.t``), the textbook interval for the mean of a small sample;
- a metric that is a percentile of a distribution (``p50``, ``p99``): a
  bootstrap interval of the mean of the per-seed percentiles
  (``scipy.stats.bootstrap``, percentile method, seeded, so the interval is
  deterministic), since a percentile's sampling distribution is not normal.

Simplifies: each seed is one independent replicate (the model is
deterministic given its seed, so the spread is the model's own run-to-run
variation from arrivals and jitter, not the real machine's); with one seed
there is no interval (``lo`` and ``hi`` are ``None``); identical values give a
zero-width interval.

Naming convention (every output follows it): a metric ``m`` aggregated over
seeds is reported as ``m`` (the mean) with ``m_ci95`` = ``[lo, hi]`` beside it
in JSON, and as columns ``m``, ``m_ci95_lo``, ``m_ci95_hi`` in tables, with
``seeds`` (the count) once per row.

Units: whatever the metric's own.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Seed of the bootstrap's resampling (fixed: the same inputs give the same interval).
BOOTSTRAP_SEED = 20041
#: Bootstrap resamples (enough for a stable 95 % percentile interval).
BOOTSTRAP_RESAMPLES = 2000
#: The largest seed count a command accepts (each seed is a whole run).
MAX_SEEDS = 1000


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` seeds with its 95 % interval (``None`` for ``n < 2``)."""

    mean: float
    lo: float | None
    hi: float | None
    n: int

    @property
    def half_width(self) -> float | None:
        """Half the interval's width (the ``±`` figure), or ``None``."""
        if self.lo is None or self.hi is None:
            return None
        return (self.hi - self.lo) / 2.0

    def overlaps(self, other: Interval) -> bool:
        """Whether the two intervals share a point (a tie at 95 %).

        Without an interval on either side the means must be equal to tie.
        """
        if None in (self.lo, self.hi, other.lo, other.hi):
            return self.mean == other.mean
        assert self.lo is not None and self.hi is not None
        assert other.lo is not None and other.hi is not None
        return self.lo <= other.hi and other.lo <= self.hi

    def as_list(self) -> list[float] | None:
        """``[lo, hi]`` for JSON, or ``None`` without an interval."""
        if self.lo is None or self.hi is None:
            return None
        return [self.lo, self.hi]


def is_percentile(metric: str) -> bool:
    """Whether a metric name names a percentile (``p50_us``, ``latency_p99``...)."""
    name = metric.lower()
    for part in name.replace("/", "_").split("_"):
        if len(part) >= 2 and part[0] == "p" and part[1:].replace(".", "").isdigit():
            return True
    return False


def ci95(values: Iterable[float], *, percentile: bool = False) -> Interval:
    """The mean of ``values`` (one per seed) and its 95 % interval.

    ``percentile=True`` uses the seeded bootstrap (the values are per-seed
    percentiles); otherwise the Student t interval. Non-finite values are an
    error: a NaN would make every interval meaningless.
    """
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("no values to summarise")
    if any(not math.isfinite(x) for x in xs):
        raise ValueError("a value is not finite (NaN or infinite)")
    n = len(xs)
    mean = math.fsum(xs) / n
    if n < 2:
        return Interval(mean, None, None, n)
    if max(xs) == min(xs):
        return Interval(mean, mean, mean, n)
    from scipy import stats as sps

    if percentile:
        res = sps.bootstrap(
            (xs,),
            _mean,
            confidence_level=0.95,
            n_resamples=BOOTSTRAP_RESAMPLES,
            method="percentile",
            random_state=BOOTSTRAP_SEED,
        )
        lo = float(res.confidence_interval.low)
        hi = float(res.confidence_interval.high)
        # A resampled mean cannot leave the data's range.
        return Interval(mean, max(lo, min(xs)), min(hi, max(xs)), n)
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = float(sps.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def _mean(sample: Sequence[float], axis: int = -1) -> Any:
    import numpy as np

    return np.mean(sample, axis=axis)


def summarize(
    per_seed: Sequence[Mapping[str, Any]], metrics: Iterable[str] | None = None
) -> dict[str, Any]:
    """Aggregate one dict of metrics per seed into the JSON convention.

    Returns ``{m: mean, m_ci95: [lo, hi] | None, ..., "seeds": n}`` for every
    numeric metric present in every seed's dict (or those named in
    ``metrics``). Non-numeric values are taken from the first seed when all
    seeds agree, and left out otherwise.
    """
    if not per_seed:
        raise ValueError("no seeds to summarise")
    names = list(metrics) if metrics is not None else list(per_seed[0])
    out: dict[str, Any] = {}
    for name in names:
        vals = [row.get(name) for row in per_seed]
        if all(_is_number(v) for v in vals):
            iv = ci95([float(v) for v in vals], percentile=is_percentile(name))  # type: ignore[arg-type]
            out[name] = iv.mean
            out[f"{name}_ci95"] = iv.as_list()
        elif all(v == vals[0] for v in vals):
            out[name] = vals[0]
    out["seeds"] = len(per_seed)
    return out


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def format_pm(iv: Interval, fmt: str = "{:.1f}") -> str:
    """``12.3 ± 0.4`` (or just ``12.3`` without an interval)."""
    half = iv.half_width
    if half is None:
        return fmt.format(iv.mean)
    return f"{fmt.format(iv.mean)} ± {fmt.format(half)}"


def parse_seeds(value: int, flag: str = "--seeds") -> int:
    """Check a seed count: 1..MAX_SEEDS, else ``ValueError`` naming the flag."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{flag} takes a whole number of seeds, got {value!r}")
    if not 1 <= value <= MAX_SEEDS:
        raise ValueError(f"{flag} must be between 1 and {MAX_SEEDS} (each seed is a whole run)")
    return value


__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "MAX_SEEDS",
    "Interval",
    "ci95",
    "format_pm",
    "is_percentile",
    "parse_seeds",
    "summarize",
]
