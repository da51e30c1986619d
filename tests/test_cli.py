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


def test_validate_lists_every_problem(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Two hosts with a bad field each: both are named in one pass, with the
    # count, so a file with several mistakes is mended in one round.
    bad = tmp_path / "bad.toml"
    body = (
        'name = "two"\nduration_ms = 1\n'
        + "".join(
            f'[[hosts]]\nname = "h{i}"\nprofile = "ideal"\ncores = 0\n'
            f'[[hosts.nics]]\nname = "eth0"\nchip = "82546"\n'
            for i in range(2)
        )
        + "".join(f'[[generators]]\nname = "g{i}"\nrate_pps = 1000\n' for i in range(2))
        + "".join(f'[[links]]\na = "g{i}"\nb = "h{i}.eth0"\n' for i in range(2))
    )
    bad.write_text(body)
    code, out, err = cli(capsys, "validate", bad)
    text_err = " ".join(err.split())
    assert code == 2 and out == ""
    assert "hosts[0].cores" in text_err and "hosts[1].cores" in text_err
    assert "2 problems" in text_err


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


def test_bench_hosts_json_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(
        capsys, "bench", "--hosts", "1,3", "--duration-ms", "2", "-n", "2", "--json"
    )
    assert code == 0, err
    rows = json.loads(out)["results"]
    assert [r["hosts"] for r in rows] == [1, 3]
    one, three = rows
    # One generator at 1 Gb/s line rate: a 64-byte frame every 672 ns from
    # t = 0, so 2 ms carry floor(2e6 / 672) + 1 = 2977 frames per host, and
    # the copies are independent: three hosts inject three times as many.
    # The one-host run does the three-host run's work: 3 x 2 = 6 ms, i.e.
    # floor(6e6 / 672) + 1 = 8929 frames.
    assert (one["duration_ms"], three["duration_ms"]) == (6, 2)
    assert one["sim_packets"] == 8929
    assert three["sim_packets"] == 3 * 2977
    # The cost is a ratio to the first count taken round by round, so the
    # first count's is its own rate over itself in every round.
    assert one["cost_vs_first"] == 1.0 and one["cost_vs_first_range"] == [1.0, 1.0]
    low, high = three["cost_vs_first_range"]
    assert 0 < low <= three["cost_vs_first"] <= high
    for row in rows:
        assert row["repeat"] == 2
        best, median = row["packets_per_s"]["best"], row["packets_per_s"]["median"]
        assert best >= median > 0
        # At least the generator emission, the wire arrival and the DMA
        # completion of every frame are events.
        assert row["events_per_packet"] >= 3.0
        # Each host keeps its generator's next emission queued at least.
        assert row["peak_queue_len"] >= row["hosts"]
        if sys.platform.startswith("linux"):
            assert row["peak_rss_bytes"] >= row["base_rss_bytes"] > 0


def test_bench_one_host_count_gives_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "bench", "--hosts", "2", "--duration-ms", "1", "-n", "1", "--json")
    assert code == 0, err
    report = json.loads(out)
    for field in ("packets_per_s", "events_per_packet", "peak_rss_bytes", "peak_queue_len"):
        assert field in report
    assert report["hosts"] == 2


def test_bench_hosts_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "bench", "--hosts", "1", "--duration-ms", "1", "-n", "1")
    assert code == 0, err
    assert "events/pkt" in out and "peak RSS" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--hosts", "0"], "between 1 and"),
        (["--hosts", "many"], "comma-separated integers"),
        (["--hosts", ","], "must list host counts"),
        (["--hosts", "100000"], "between 1 and"),
        (["--duration-ms", "5"], "use it with --hosts"),
        (["--hosts", "2", "--sweep", "x.toml"], "give one of them"),
    ],
)
def test_bench_hosts_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = cli(capsys, "bench", *argv)
    assert code == 2
    assert message in " ".join(err.split())


def test_replicated_scenario_renames_every_copy() -> None:
    import tomllib

    from holdoff import benchscale

    text = (holdoff.examples_dir() / BENCH_SCENARIO).read_text()
    doc = tomllib.loads(benchscale.replicate(text, 3, 7))
    assert doc["duration_ms"] == 7
    assert [h["name"] for h in doc["hosts"]] == ["dut-0", "dut-1", "dut-2"]
    assert [(link["a"], link["b"]) for link in doc["links"]] == [
        (f"gen-{i}", f"dut-{i}.eth0") for i in range(3)
    ]
    assert [(a["name"], a["host"]) for a in doc["apps"]] == [
        (f"sink-{i}", f"dut-{i}") for i in range(3)
    ]


def test_replicated_poisson_copies_are_de_phased_and_constant_ones_in_step() -> None:
    # Each generator draws from a random stream of its own (one master seed,
    # a stream per component), so two copies of a Poisson generator draw
    # different gaps and send different numbers of frames in 5 ms; a
    # constant-rate generator draws nothing, so its copies send the same
    # frames at the same instants (the in-step case `holdoff bench --hosts`
    # measures by default).
    from holdoff import benchscale
    from holdoff.api import run_text

    def sent(name: str) -> list[int]:
        text = (holdoff.examples_dir() / name).read_text()
        report = run_text(benchscale.replicate(text, 2, 5)).report
        return [g["sent_packets"] for g in report["summary"]["generators"]]

    poisson = sent("bench-64b-1g-itr8000-napi-poisson.toml")
    constant = sent(BENCH_SCENARIO)
    assert poisson[0] != poisson[1]
    assert constant[0] == constant[1]
    # 90 % and 100 % of 1.488 Mframes/s over 5 ms, within Poisson spread.
    assert all(abs(n - 6696) < 400 for n in poisson), poisson
    assert abs(constant[0] - 7440) <= 2, constant


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
