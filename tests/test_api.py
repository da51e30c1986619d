"""The Python API: running, determinism, inputs, DataFrames and saved files."""

from __future__ import annotations

import json
import math
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import holdoff
from holdoff.result import (
    APP_COLUMNS,
    GENERATOR_COLUMNS,
    HOST_COLUMNS,
    LATENCY_COLUMNS,
    PORT_COLUMNS,
    TIMESERIES_LONG_COLUMNS,
    VECTOR_COLUMNS,
)
from scenarios import EXAMPLES, inline_scenario

PERF_KEYS = {
    "wall_time_s",
    "events_processed",
    "sim_packets",
    "events_per_s",
    "packets_per_s",
    "peak_queued_events",
    "queued_event_bytes",
    "scheduled_groups",
    "train_events",
    "peak_rss_bytes",
}


@pytest.fixture(scope="module")
def result() -> holdoff.RunResult:
    return holdoff.run(EXAMPLES / "quickstart.toml")


def assert_ledger_balanced(report: dict) -> None:
    ledger = report["summary"]["ledger"]
    assert ledger["balanced"] is True
    assert ledger["injected"] == ledger["delivered"] + ledger["dropped"] + ledger["in_flight"]
    assert ledger["dropped"] == sum(report["summary"]["drops"].values())


def test_quickstart_runs_and_accounts_for_every_packet(result: holdoff.RunResult) -> None:
    report = result.report
    assert set(report) >= {"holdoff_version", "scenario", "seed", "config", "summary"}
    assert report["holdoff_version"] == holdoff.__version__
    assert_ledger_balanced(report)
    assert result.ledger["injected"] > 0
    assert result.sim_time_ns > 0
    assert result.summary["events_processed"] > 0


def test_perf_is_kept_out_of_the_report(result: holdoff.RunResult) -> None:
    assert set(result.perf) == PERF_KEYS
    assert result.perf["wall_time_s"] > 0
    assert result.perf["events_processed"] == result.summary["events_processed"]
    assert result.perf["sim_packets"] == result.ledger["injected"]
    assert "wall_time_s" not in result.to_json()
    # This process has at least the extension and the interpreter resident.
    assert result.perf["peak_rss_bytes"] > 1_000_000
    # Events are pending during the run (samples, generators, timers); an
    # event entry holds at least its time and sequence number (2 x 8 bytes).
    assert result.perf["peak_queued_events"] > 0
    assert result.perf["queued_event_bytes"] >= 16


def test_same_seed_gives_byte_identical_report() -> None:
    first = holdoff.run(EXAMPLES / "quickstart.toml", seed=42)
    second = holdoff.run(EXAMPLES / "quickstart.toml", seed=42)
    assert first.to_json() == second.to_json()


def test_different_seed_gives_different_report() -> None:
    first = holdoff.run(EXAMPLES / "quickstart.toml", seed=1)
    second = holdoff.run(EXAMPLES / "quickstart.toml", seed=2)
    assert first.seed == 1
    assert second.seed == 2
    assert first.to_json() != second.to_json()


def test_seed_defaults_to_the_scenario_seed() -> None:
    text = (EXAMPLES / "quickstart.toml").read_text()
    assert holdoff.run(text).seed == tomllib.loads(text)["seed"]


def test_path_string_text_and_dict_are_the_same_scenario() -> None:
    path = EXAMPLES / "quickstart.toml"
    text = path.read_text()
    reports = {
        "path": holdoff.run(path).to_json(),
        "str path": holdoff.run(str(path)).to_json(),
        "text": holdoff.run(text).to_json(),
        "dict": holdoff.run(tomllib.loads(text)).to_json(),
    }
    assert len(set(reports.values())) == 1, reports.keys()


def test_parallel_runs_match_serial_runs() -> None:
    seeds = [3, 4, 5, 6]
    serial = [holdoff.run(inline_scenario(), seed=s).to_json() for s in seeds]
    with ThreadPoolExecutor(max_workers=2) as pool:
        parallel = list(pool.map(lambda s: holdoff.run(inline_scenario(), seed=s).to_json(), seeds))
    assert parallel == serial


def test_run_releases_the_gil() -> None:
    """Another Python thread keeps running while the core simulates."""
    text = (EXAMPLES / "bench-64b-1g-itr8000-napi.toml").read_text()
    stop = threading.Event()
    longest_pause = [0.0]

    def spin() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            longest_pause[0] = max(longest_pause[0], now - last)
            last = now

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        result = holdoff.run(text)
    finally:
        stop.set()
        spinner.join()
    # Holding the GIL would freeze the spinner for the whole simulation.
    assert result.perf["wall_time_s"] > 0.02, "scenario too short to tell"
    assert longest_pause[0] < result.perf["wall_time_s"] / 2


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**64 - 1))
def test_any_seed_runs_balanced_and_is_echoed(seed: int) -> None:
    result = holdoff.run(inline_scenario(), seed=seed)
    assert result.seed == seed
    assert_ledger_balanced(result.report)


SCENARIO_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.toml") if not p.name.startswith("sweep-"))


@pytest.mark.parametrize("path", SCENARIO_EXAMPLES, ids=lambda p: p.name)
def test_every_example_validates_runs_and_balances(path: Path) -> None:
    holdoff.validate(path)
    result = holdoff.run(path)
    assert_ledger_balanced(result.report)
    assert holdoff.summary_text(result)


def test_examples_are_shipped_with_the_package() -> None:
    shipped = holdoff.examples_dir()
    assert (shipped / "quickstart.toml").is_file()
    assert (shipped / "bench-64b-1g-itr8000-napi.toml").is_file()


def test_schema_is_a_json_schema() -> None:
    schema = holdoff.schema()
    assert "$schema" in schema or "properties" in schema


# -- DataFrames ---------------------------------------------------------------


def leading(frame: pd.DataFrame, columns: list[str]) -> list[str]:
    return list(frame.columns[: len(columns)])


def test_ports_frame(result: holdoff.RunResult) -> None:
    ports = result.summary["ports"]
    frame = result.ports
    assert leading(frame, PORT_COLUMNS) == PORT_COLUMNS
    assert list(frame["port"]) == [p["port"] for p in ports]
    assert list(frame["n_vectors"]) == [len(p["vectors"]) for p in ports]
    for row, port in zip(frame.itertuples(), ports, strict=True):
        assert row.interrupts_per_s == pytest.approx(
            sum(v["interrupts_per_s"] for v in port["vectors"])
        )
    vectors = result.vectors
    assert leading(vectors, VECTOR_COLUMNS) == VECTOR_COLUMNS
    assert len(vectors) == sum(len(p["vectors"]) for p in ports)


def test_hosts_frame_flattens_cpu(result: holdoff.RunResult) -> None:
    frame = result.hosts
    assert leading(frame, HOST_COLUMNS) == HOST_COLUMNS
    assert len(frame) == len(result.summary["hosts"])
    for host, row in zip(result.summary["hosts"], frame.to_dict("records"), strict=True):
        assert row["cpu_util_busy"] == pytest.approx(host["cpu_util"]["busy"])
        assert row["cpu_ns_idle"] == host["cpu_ns"]["idle"]
        assert 0.0 <= row["cpu_util_busy"] <= 1.0


def test_apps_frame_flattens_latency(result: holdoff.RunResult) -> None:
    frame = result.apps
    assert leading(frame, APP_COLUMNS) == APP_COLUMNS
    for app, row in zip(result.summary["apps"], frame.to_dict("records"), strict=True):
        assert row["app"] == app["app"]
        if app["latency_us"] is None:
            assert math.isnan(row["latency_us_p99"])
        else:
            assert row["latency_us_p99"] == pytest.approx(app["latency_us"]["p99"])
            assert row["latency_us_p50"] <= row["latency_us_p99"] <= row["latency_us_max"]


def test_generators_frame(result: holdoff.RunResult) -> None:
    frame = result.generators
    assert leading(frame, GENERATOR_COLUMNS) == GENERATOR_COLUMNS
    assert len(frame) == len(result.summary["generators"])


def test_timeseries_wide_and_long(result: holdoff.RunResult) -> None:
    section = result.report["timeseries"]
    wide = result.timeseries
    assert wide.index.name == "t_us"
    assert wide.index.dtype == "float64"
    assert list(wide.index) == [t / 1000 for t in section["t_ns"]]
    assert list(wide.columns) == list(section["series"])
    long = result.timeseries_long()
    assert list(long.columns) == TIMESERIES_LONG_COLUMNS
    assert len(long) == wide.size
    keys = set(long["entity"] + "/" + long["metric"])
    assert keys == set(section["series"])


def test_latency_histograms(result: holdoff.RunResult) -> None:
    frame = result.latency
    assert list(frame.columns) == LATENCY_COLUMNS
    histograms = result.report["histograms"]
    assert set(frame["app"]) == {app for app, buckets in histograms.items() if buckets}
    for app, buckets in histograms.items():
        assert frame.loc[frame["app"] == app, "count"].sum() == sum(c for _, c in buckets)


# -- output -------------------------------------------------------------------


def test_save_writes_all_files(result: holdoff.RunResult, tmp_path: Path) -> None:
    files = result.save(tmp_path / "run")
    names = {p.name for p in (tmp_path / "run").iterdir()}
    assert names == {"report.json", "summary.txt", "timeseries.csv", "perf.json"}
    assert files["report"].read_text() == result.to_json()
    assert json.loads(files["perf"].read_text()) == result.perf
    assert files["summary"].read_text() == holdoff.summary_text(result)
    csv = pd.read_csv(files["timeseries"], index_col="t_us")
    assert list(csv.columns) == list(result.timeseries.columns)
    assert len(csv) == len(result.timeseries)


def test_save_parquet(result: holdoff.RunResult, tmp_path: Path) -> None:
    files = result.save(tmp_path, timeseries_format="parquet")
    frame = pd.read_parquet(files["timeseries"])
    pd.testing.assert_frame_equal(frame, result.timeseries, check_names=False)


def test_summary_text_names_everything(result: holdoff.RunResult) -> None:
    text = holdoff.summary_text(result)
    assert result.scenario in text
    assert f"seed {result.seed}" in text
    for entity in (
        [p["port"] for p in result.summary["ports"]]
        + [h["host"] for h in result.summary["hosts"]]
        + [a["app"] for a in result.summary["apps"]]
    ):
        assert entity in text
    assert "ledger:" in text
    assert "balanced" in text
    assert "drops:" in text
    assert "simulated packets per wall second" in text


def test_summary_shows_napi_counters_only_when_used(result: holdoff.RunResult) -> None:
    # The quickstart uses no busy polling or deferral: no NAPI table.
    assert "NAPI (" not in holdoff.summary_text(result)
    busy = holdoff.run(EXAMPLES / "rpc-busy-poll-irq-suspend.toml")
    text = holdoff.summary_text(busy)
    assert "NAPI (busy polling, IRQ suspension, deferral)" in text
    row = next(line for line in text.splitlines() if "server.eth0 v0" in line)
    vector = busy.vectors.set_index("port").loc["server.eth0"]
    # The table shows the report's counters for the busy-polled vector.
    for column in ("napi_busy_polls", "napi_busy_poll_packets", "napi_irq_suspends"):
        assert f"{int(vector[column]):,}" in row
    assert int(vector["napi_irq_suspends"]) > 0
