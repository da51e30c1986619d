"""A sweep with replicates: each parameter set's mean over seeds with its 95 % interval.

Expected values are closed forms of the per-replicate rows (the arithmetic
mean; the Student t interval mean +- t(0.975, n-1) s / sqrt(n) with t from
the published table), never the aggregate's own output.
"""

from __future__ import annotations

import math
import tomllib
from typing import Any

import pytest

from holdoff import sweeps as sw
from holdoff.sweep_table import replicate_records
from scenarios import inline_scenario

RATE = "generators[0].rate_pps"
#: t(0.975, 2): the two-sided 95 % quantile of Student's t with 2 degrees of
#: freedom (any statistics table: 4.303).
T_975_2 = 4.302652729911275


def replicated(replicates: int) -> dict[str, Any]:
    base = tomllib.loads(inline_scenario(duration_ms=5, rate_pps=2000))
    # Poisson arrivals: each seed gives a different count of frames.
    base["generators"][0]["pattern"] = "poisson"
    return {
        "name": "reps",
        "base": base,
        "seed": 11,
        "replicates": replicates,
        "grid": {RATE: [20000, 40000]},
    }


@pytest.fixture(scope="module")
def run3() -> sw.SweepRun:
    return sw.run_sweep(replicated(3), store=None, executor="serial")


def test_summary_has_one_row_per_parameter_set_with_mean_and_interval(run3: sw.SweepRun) -> None:
    table, summary = run3.table, run3.summary
    assert summary is not None
    assert len(table) == 6 and len(summary) == 2
    assert summary["point"].tolist() == [0, 1]
    assert summary[RATE].tolist() == [20000, 40000]
    assert summary["seeds"].tolist() == [3, 3]
    assert sw.param_columns(summary) == [RATE]
    metric = "sink/received"
    for i, rate in enumerate((20000, 40000)):
        values = table.loc[table[RATE] == rate, metric].astype(float).tolist()
        # Poisson arrivals: the three seeds differ, so the interval has width.
        assert len(set(values)) > 1
        mean = sum(values) / 3
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 2)
        half = T_975_2 * sd / math.sqrt(3)
        row = summary.iloc[i]
        assert row[metric] == pytest.approx(mean)
        assert row[f"{metric}_ci95_lo"] == pytest.approx(mean - half)
        assert row[f"{metric}_ci95_hi"] == pytest.approx(mean + half)


def test_percentile_metrics_get_an_interval_inside_the_replicates_range(run3: sw.SweepRun) -> None:
    summary = run3.summary
    assert summary is not None
    metric = "sink/latency_us_p99"
    for i, rate in enumerate((20000, 40000)):
        values = run3.table.loc[run3.table[RATE] == rate, metric].astype(float).tolist()
        row = summary.iloc[i]
        assert row[metric] == pytest.approx(sum(values) / 3)
        # A bootstrap mean of three values cannot leave their range.
        assert min(values) <= row[f"{metric}_ci95_lo"] <= row[metric]
        assert row[metric] <= row[f"{metric}_ci95_hi"] <= max(values)


def test_json_records_carry_m_and_m_ci95(run3: sw.SweepRun) -> None:
    assert run3.summary is not None
    records = replicate_records(run3.summary)
    assert [r["params"] for r in records] == [{RATE: 20000}, {RATE: 40000}]
    first = records[0]
    assert first["seeds"] == 3
    lo, hi = first["sink/received_ci95"]
    assert lo <= first["sink/received"] <= hi
    assert not any(k.endswith(("_ci95_lo", "_ci95_hi")) for k in first)


def test_one_replicate_has_no_summary_and_one_seed_no_interval() -> None:
    one = sw.run_sweep(replicated(1), store=None, executor="serial")
    assert one.summary is None
    summary = sw.replicate_table(one.table, one.points)
    assert summary["seeds"].tolist() == [1, 1]
    assert summary["sink/received_ci95_lo"].isna().all()
    assert replicate_records(summary)[0]["sink/received_ci95"] is None
