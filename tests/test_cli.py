"""The command line, through its real entry point `holdoff.cli.main(argv)`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import holdoff
from holdoff.cli import BENCH_SCENARIO, main
from scenarios import inline_scenario


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_run_json_prints_only_the_report(capsys: pytest.CaptureFixture[str], quickstart: Path):
    code, out, err = cli(capsys, "run", quickstart, "--json")
    assert code == 0, err
    report = json.loads(out)
    ledger = report["summary"]["ledger"]
    assert ledger["balanced"] is True
    assert ledger["injected"] == ledger["delivered"] + ledger["dropped"] + ledger["in_flight"]
    assert out == holdoff.run(quickstart).to_json() + "\n"


def test_run_json_is_deterministic(capsys: pytest.CaptureFixture[str], quickstart: Path) -> None:
    _, first, _ = cli(capsys, "run", quickstart, "--json", "--seed", "9")
    _, second, _ = cli(capsys, "run", quickstart, "--json", "--seed", "9")
    _, other, _ = cli(capsys, "run", quickstart, "--json", "--seed", "10")
    assert first == second
    assert first != other
    assert json.loads(first)["seed"] == 9


def test_run_prints_a_readable_summary(capsys: pytest.CaptureFixture[str], quickstart: Path):
    code, out, err = cli(capsys, "run", quickstart)
    assert code == 0, err
    report = holdoff.run(quickstart).report
    assert report["scenario"] in out
    for port in report["summary"]["ports"]:
        assert port["port"] in out
    assert "ledger:" in out and "balanced" in out
    assert "simulated packets per wall second" in out


def test_run_out_writes_all_files(
    capsys: pytest.CaptureFixture[str], quickstart: Path, tmp_path: Path
) -> None:
    out_dir = tmp_path / "out"
    code, out, err = cli(capsys, "run", quickstart, "--json", "--out", out_dir)
    assert code == 0, err
    assert {p.name for p in out_dir.iterdir()} == {
        "report.json",
        "summary.txt",
        "timeseries.csv",
        "perf.json",
    }
    assert (out_dir / "report.json").read_text() + "\n" == out
    assert "ledger:" in (out_dir / "summary.txt").read_text()
    perf = json.loads((out_dir / "perf.json").read_text())
    ledger = json.loads(out)["summary"]["ledger"]
    # perf counts the frames the ledger counts as injected ...
    assert perf["sim_packets"] == ledger["injected"]
    # ... which are the generator's Poisson 300 kframes/s for 0.5 s (mean
    # 150 000, sd 387) plus 50 pings and their 50 replies; 5 sd.
    assert abs(perf["sim_packets"] - 150_100) < 5 * 387


def test_invalid_scenario_exits_2_with_the_message(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(inline_scenario(chip="99999"))
    code, out, err = cli(capsys, "run", bad, "--json")
    assert code == 2
    assert out == ""
    assert err.startswith("error: ")
    assert "chip" in err and "99999" in err
    assert "Traceback" not in err


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = cli(capsys, "run", tmp_path / "missing.toml")
    assert code == 2
    assert out == ""
    assert "error: scenario file not found" in err
    assert "missing.toml" in err


def test_validate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(inline_scenario(name="checked"))
    code, out, _ = cli(capsys, "validate", good)
    assert (code, out.strip()) == (0, "ok: checked")
    bad = tmp_path / "bad.toml"
    bad.write_text(inline_scenario(driver="no-such-driver"))
    code, out, err = cli(capsys, "validate", bad)
    assert code == 2
    assert out == ""
    assert "error: " in err and "driver" in err


def test_schema_prints_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "schema")
    assert code == 0
    schema = json.loads(out)
    assert "$schema" in schema or "properties" in schema


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "version")
    assert code == 0
    assert out.strip() == f"holdoff {holdoff.__version__}"


def test_bench_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(inline_scenario(name="small-bench"))
    code, out, err = cli(capsys, "bench", "--repeat", "2", "--scenario", scenario, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["scenario"] == "small-bench"
    assert report["repeat"] == len(report["runs"]) == 2
    best, median = report["packets_per_s"]["best"], report["packets_per_s"]["median"]
    assert best >= median > 0
    assert report["wall_time_s"]["best"] <= report["wall_time_s"]["median"]


def test_bench_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    scenario = tmp_path / "small.toml"
    scenario.write_text(inline_scenario())
    code, out, err = cli(capsys, "bench", "-n", "1", "--scenario", scenario)
    assert code == 0, err
    assert "simulated packets / wall s" in out
    assert "events / s" in out


def test_bench_default_scenario_is_found() -> None:
    assert (holdoff.examples_dir() / BENCH_SCENARIO).is_file()


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = cli(capsys, "run")
    assert code == 2
    code, _, _ = cli(capsys, "no-such-command")
    assert code == 2


def test_console_entry_point_in_a_subprocess(tmp_path: Path, quickstart: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(inline_scenario(chip="99999"))
    proc = subprocess.run(
        [sys.executable, "-m", "holdoff", "run", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert "Traceback" not in proc.stderr
    ok = subprocess.run(
        [sys.executable, "-m", "holdoff", "run", str(quickstart), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(ok.stdout)["summary"]["ledger"]["balanced"] is True
