"""``holdoff experiment napi-modes``: the four receive modes against load.

Expectations come from the mechanisms (docs/models/napi-modes.md), not from
the simulator's own numbers: a server computing 10 µs per request serves at
most 100 000 requests/s; deferral replaces interrupts by timer polls; IRQ
suspension keeps the IRQ masked while the busy-polling thread finds
requests; a busy-polling thread keeps its core busy whatever the load.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from holdoff import experiments
from holdoff.cli import main

LOW, HIGH = 20_000, 130_000


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return experiments.run_napi_modes((LOW, HIGH), duration_ms=40, executor="serial")


def _row(table: pd.DataFrame, mode: str, load: int) -> pd.Series:
    return table[(table["mode"] == mode) & (table["offered_rps"] == load)].iloc[0]


def test_every_mode_keeps_up_at_low_load_and_saturates_below_capacity(table: pd.DataFrame) -> None:
    for mode in experiments.MODES:
        low, high = _row(table, mode, LOW), _row(table, mode, HIGH)
        # Poisson count over 40 ms at 20 000/s: mean 800, sd 28; 5 sd.
        assert abs(low["achieved_rps"] - LOW) < 5 * 28 / 0.04, mode
        # 10 µs of service per request: at most 100 000 requests/s.
        assert high["achieved_rps"] <= 100_000, mode
        assert high["achieved_rps"] < HIGH * 0.8, mode
        # Past saturation requests queue: latency is far above the unloaded one.
        assert high["p99_us"] > 10 * low["p99_us"], mode


def test_the_modes_differ_by_mechanism(table: pd.DataFrame) -> None:
    irq, defer = _row(table, "irq", HIGH), _row(table, "defer", HIGH)
    # Deferral: a poll that found work re-arms the gro_flush_timeout timer
    # instead of unmasking the IRQ, so a loaded server takes fewer interrupts.
    assert defer["server_interrupts_per_s"] < irq["server_interrupts_per_s"] / 2
    # IRQ suspension: while epoll keeps finding requests the IRQ stays masked.
    assert _row(table, "suspend", HIGH)["server_interrupts_per_s"] < 1_000
    # Busy polling spins on its core whatever the load: one of the server's
    # two cores at low load already, where the interrupt-driven server idles.
    assert _row(table, "busy", LOW)["server_cpu_busy"] > 0.45
    assert _row(table, "irq", LOW)["server_cpu_busy"] < 0.2


def test_report_has_a_curve_per_mode_and_the_saturation_table(
    table: pd.DataFrame, tmp_path: Path
) -> None:
    html = experiments.write_napi_modes(table, tmp_path).read_text()
    assert "Saturation throughput" in html
    for mode in experiments.MODES:
        assert f"<td>{mode}</td>" in html
    assert (tmp_path / "napi-modes.parquet").is_file()


def test_unknown_experiment_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["experiment", "nope"]) == 2
    assert "napi-modes" in capsys.readouterr().err
