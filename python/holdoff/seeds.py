"""One scenario run with several seeds, and each metric's mean and 95 %
interval over them (``holdoff run --seeds N``, :func:`holdoff.run_seeds`).

The seeds are the scenario's own (or the one given) and the next ones:
``seed, seed + 1, ...``; each run is independent and deterministic, so the
spread is the model's run-to-run variation (:mod:`holdoff.stats` states how
the interval is computed). Units: each metric's own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from holdoff import stats
from holdoff.api import _MAX_SEED, Scenario, run_text, scenario_dir, scenario_text
from holdoff.result import RunResult
from holdoff.sweep_metrics import metrics_record


@dataclass
class SeedsResult:
    """One scenario run with several seeds: each run, and the summary over them.

    ``seeds`` are the scenario's seed (or the one given) and the next ones:
    ``seed, seed + 1, ...``. ``records`` holds each run's flat metrics
    (:func:`holdoff.sweep_metrics.metrics_record`, without its ``seed``);
    ``summary`` every numeric metric's mean ``m`` with ``m_ci95`` = ``[lo,
    hi]`` beside it and ``seeds`` (:func:`holdoff.stats.summarize`).
    """

    seeds: list[int]
    runs: list[RunResult]
    records: list[dict[str, Any]]
    summary: dict[str, Any]

    @property
    def warnings(self) -> list[dict[str, Any]]:
        """The runs' report warnings, each once (first-seen order), with the
        seeds whose run gave it: ``{"field", "message", "seeds": [...]}``."""
        seen: dict[tuple[str, str], list[int]] = {}
        for s, run in zip(self.seeds, self.runs, strict=True):
            for w in run.warnings:
                seen.setdefault((w["field"], w["message"]), []).append(s)
        return [{"field": f, "message": m, "seeds": ss} for (f, m), ss in seen.items()]

    def to_dict(self) -> dict[str, Any]:
        """``{"seeds": N, "seed_list": [...], "metrics": summary, "per_seed":
        records, "warnings": [...]}``."""
        return {
            "seeds": len(self.seeds),
            "seed_list": list(self.seeds),
            "metrics": self.summary,
            "per_seed": [{"seed": s, **r} for s, r in zip(self.seeds, self.records, strict=True)],
            "warnings": self.warnings,
        }


def run_seeds(
    scenario: Scenario,
    *,
    seeds: int,
    seed: int | None = None,
    moderators: Mapping[str, type] | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> SeedsResult:
    """Runs ``scenario`` with ``seeds`` seeds and summarises each metric's
    mean and 95 % interval (:mod:`holdoff.stats`).

    The seeds are ``seed`` (default: the scenario's own) and the next
    ``seeds - 1`` integers. ``base_dir``: where relative capture paths are
    resolved (default: the scenario file's directory). Raises ``ValueError``
    for a seed count outside 1..:data:`holdoff.stats.MAX_SEEDS`, and what
    :func:`run` raises.
    """
    stats.parse_seeds(seeds, "seeds")
    text = scenario_text(scenario)
    if base_dir is None:
        base_dir = scenario_dir(scenario)
    first = run_text(text, seed=seed, moderators=moderators, base_dir=base_dir)
    base = int(first.report.get("seed", seed or 0))
    if base + seeds - 1 > _MAX_SEED:
        raise ValueError(f"seeds {base} to {base + seeds - 1} pass 2**64-1")
    runs = [first] + [
        run_text(text, seed=base + k, moderators=moderators, base_dir=base_dir)
        for k in range(1, seeds)
    ]
    records = []
    for r in runs:
        rec = dict(metrics_record(r.report))
        rec.pop("seed", None)
        records.append(rec)
    return SeedsResult([base + k for k in range(seeds)], runs, records, stats.summarize(records))
