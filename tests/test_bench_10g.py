"""`holdoff bench --ten-gbe`: the packaged 10 GbE scenario and the ratio to real time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import holdoff
from holdoff.cli import main
from holdoff.cli.bench import BENCH_10G_SCENARIO
from scenarios import INLINE_DEFAULTS, inline_scenario


def cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ten_gbe_scenario_is_packaged_and_valid() -> None:
    path = holdoff.examples_dir() / BENCH_10G_SCENARIO
    text = path.read_text(encoding="utf-8")
    holdoff.api.validate_text(text)
    # 64-byte frames at line rate on 8 queues, as the issue asks.
    assert 'rate = "10G"' in text and "queues = 8" in text and "frame_bytes = 64" in text


def test_bench_reports_simulated_seconds_per_wall_second(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(inline_scenario(name="small-bench"))
    code, out, err = cli(capsys, "bench", "-n", "1", "--scenario", scenario, "--json")
    assert code == 0, err
    report = json.loads(out)
    run = report["runs"][0]
    # The ratio is the run's simulated time over its wall time.
    sim_s = int(INLINE_DEFAULTS["duration_ms"]) / 1000
    assert run["realtime_ratio"] == pytest.approx(sim_s / run["wall_time_s"])
    assert report["realtime_ratio"]["best"] == run["realtime_ratio"]


def test_ten_gbe_and_scenario_together_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(inline_scenario())
    code, _out, err = cli(capsys, "bench", "--ten-gbe", "--scenario", scenario)
    assert code == 2
    assert "--ten-gbe" in err
