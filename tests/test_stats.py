"""The confidence intervals every ``--seeds`` output uses (holdoff.stats).

Expected values are closed forms: the Student t interval of a sample with a
known mean and standard deviation, and the bootstrap's bound by the data's range.
"""

from __future__ import annotations

import math

import pytest

from holdoff import stats


def test_t_interval_closed_form() -> None:
    # 1, 2, 3, 4, 5: mean 3, sample sd sqrt(2.5); t(0.975, 4) = 2.7764451...
    iv = stats.ci95([1, 2, 3, 4, 5])
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)
    assert iv.mean == 3.0
    assert iv.lo == pytest.approx(3.0 - half, rel=1e-9)
    assert iv.hi == pytest.approx(3.0 + half, rel=1e-9)
    assert iv.half_width == pytest.approx(half, rel=1e-9)


def test_one_seed_has_no_interval_and_equal_values_zero_width() -> None:
    one = stats.ci95([7.0])
    assert (one.mean, one.lo, one.hi, one.n) == (7.0, None, None, 1)
    same = stats.ci95([4.0, 4.0, 4.0], percentile=True)
    assert (same.lo, same.hi) == (4.0, 4.0)


def test_bootstrap_is_deterministic_and_inside_the_data() -> None:
    # The percentile-method interval of a resampled mean lies within [min, max].
    xs = [250.0, 125.0, 125.0, 130.0, 240.0]
    a = stats.ci95(xs, percentile=True)
    b = stats.ci95(xs, percentile=True)
    assert a == b
    assert a.lo is not None and a.hi is not None
    assert min(xs) <= a.lo < a.mean < a.hi <= max(xs)


def test_overlap_is_a_tie() -> None:
    a = stats.Interval(10.0, 9.0, 11.0, 3)
    b = stats.Interval(11.5, 10.5, 12.5, 3)
    c = stats.Interval(13.0, 12.0, 14.0, 3)
    assert a.overlaps(b) and b.overlaps(a)
    assert not a.overlaps(c)


def test_summarize_follows_the_naming_convention() -> None:
    rows = [{"p99_us": 10.0, "cpu": 1.0, "name": "x"}, {"p99_us": 12.0, "cpu": 3.0, "name": "x"}]
    out = stats.summarize(rows)
    assert out["cpu"] == 2.0 and out["seeds"] == 2 and out["name"] == "x"
    assert out["cpu_ci95"] is not None and out["cpu_ci95"][0] < 2.0 < out["cpu_ci95"][1]
    assert out["p99_us"] == 11.0 and len(out["p99_us_ci95"]) == 2


@pytest.mark.parametrize("bad", [[], [1.0, math.nan], [math.inf]])
def test_bad_values_are_refused(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        stats.ci95(bad)


@pytest.mark.parametrize("bad", [0, -1, stats.MAX_SEEDS + 1])
def test_seed_count_bounds(bad: int) -> None:
    with pytest.raises(ValueError, match="--seeds"):
        stats.parse_seeds(bad)


def test_percentile_names() -> None:
    assert stats.is_percentile("p99_us") and stats.is_percentile("latency_p50")
    assert not stats.is_percentile("cpu_util") and not stats.is_percentile("packets")
