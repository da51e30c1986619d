"""`calibrate --seeds N`: the fitted model's value per row as a mean over seeds with its interval.

The fit runs each row at its own seed; ``seeds`` then runs the fitted costs
at N seeds per row. Expected values: the mean of N runs the test makes
itself at the fitted costs and the same seeds (the mechanism), and the
residual interval as ``100 (bound / measured - 1)`` of the model interval.
"""

from __future__ import annotations

import io
import signal
import sys
import tomllib
from pathlib import Path

import pytest

import holdoff
from holdoff import calibrate as cb
from holdoff.sweeps import derive_seed, set_path
from test_calibrate import KNOWN, RATE, write_scenarios
from test_sweep_kill import alive, children, stop_when

PATTERN = "generators[0].pattern"


def rows_file(folder: Path) -> Path:
    write_scenarios(folder)
    rows = folder / "rows.csv"
    # Poisson arrivals, so each seed gives a different CPU; measured values
    # near what the model gives (the fit moves rx_packet_ns only).
    rows.write_text(
        f"scenario,{RATE},{PATTERN},cpu_pct\nrx.toml,20000,poisson,4.5\nrx.toml,40000,poisson,9\n",
        encoding="utf-8",
    )
    return rows


def test_seeds_report_the_mean_and_interval_of_the_fitted_model(tmp_path: Path) -> None:
    rows = rows_file(tmp_path)
    cal = cb.calibrate(rows, profile=KNOWN, costs=["rx_packet_ns"], jobs=1, seeds=3)
    fitted = cal.fitted["rx_packet_ns"]
    for row, rate in zip(cal.rows, (20000, 40000), strict=True):
        (value,) = row["values"]
        assert value["seeds"] == 3
        lo, hi = value["model_ci95"]
        assert lo < value["model"] < hi
        meas = value["measured"]
        assert value["residual_pct"] == pytest.approx(100 * (value["model"] / meas - 1))
        assert value["residual_pct_ci95"] == pytest.approx(
            [100 * (lo / meas - 1), 100 * (hi / meas - 1)]
        )
        # The same three runs made here: the row's own seed, then two derived.
        doc = tomllib.loads((tmp_path / "rx.toml").read_text(encoding="utf-8"))
        set_path(doc, RATE, rate)
        set_path(doc, PATTERN, "poisson")
        doc["hosts"][0]["profile_overrides"] = {"rx_packet_ns": fitted}
        seeds = [doc["seed"]] + [derive_seed(doc["seed"], {"row": row["row"]}, k) for k in (1, 2)]
        cpu = [
            cb.observe(holdoff.run({**doc, "seed": s}).report["summary"], "dut")["cpu_pct"]
            for s in seeds
        ]
        assert len(set(cpu)) == 3
        assert value["model"] == pytest.approx(sum(cpu) / 3)


def test_one_seed_has_no_interval_and_bad_seed_counts_are_refused(tmp_path: Path) -> None:
    rows = rows_file(tmp_path)
    cal = cb.calibrate(rows, profile=KNOWN, costs=["rx_packet_ns"], jobs=1)
    assert "model_ci95" not in cal.rows[0]["values"][0]
    for bad in (0, -1, 10**9):
        with pytest.raises(cb.CalibrationError, match="--seeds"):
            cb.calibrate(rows, profile=KNOWN, costs=["rx_packet_ns"], jobs=1, seeds=bad)


def test_progress_off_a_terminal_is_a_line_every_few_seconds() -> None:
    out = io.StringIO()
    now = [0.0]
    lines = cb.ProgressLines(out, terminal=False, every_s=5.0, clock=lambda: now[0])
    for t in (0.0, 1.0, 4.9, 5.0, 7.0, 10.5):
        now[0] = t
        lines(f"t={t}")
    lines.clear()
    # Shown at 0 (the first at once), 5.0 (5 s after) and 10.5 (5.5 s after 5.0).
    assert out.getvalue() == "calibrating: t=0.0\ncalibrating: t=5.0\ncalibrating: t=10.5\n"
    term = io.StringIO()
    live = cb.ProgressLines(term, terminal=True)
    live("a")
    live("b")
    live.clear()
    assert term.getvalue() == "\rcalibrating: a\x1b[K\rcalibrating: b\x1b[K\r\x1b[K"


def test_sigterm_stops_a_fit_and_its_workers_with_exit_143(tmp_path: Path) -> None:
    rows = rows_file(tmp_path)
    out = tmp_path / "fitted.toml"
    # 2 s of simulated traffic per row: each evaluation takes a while, so
    # the fit is still running when it is told to stop. Off a terminal the
    # progress lines come on stderr, the first at once.
    fit = ["--profile", KNOWN, "--costs", "rx_packet_ns", "--set", "duration_ms=2000"]
    cmd = [sys.executable, "-m", "holdoff", "calibrate", str(rows), *fit, "-j2", "-o", str(out)]
    code, err, workers = stop_when(cmd, lambda pid: len(children(pid)) >= 2, signal.SIGTERM)
    assert code == 143, err
    assert err.startswith("calibrating: ")
    assert "Traceback" not in err and "interrupted" in err
    assert len(workers) >= 2
    assert not [pid for pid in workers if alive(pid)], "worker processes left running"
    assert not out.exists()
