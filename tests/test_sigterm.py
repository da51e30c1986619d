"""SIGTERM stops `holdoff run` as Ctrl-C does: the partial summary, exit 143, no traceback.

(Sweeps and calibration: tests/test_sweep_kill.py, tests/test_calibrate_seeds.py.)
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

from scenarios import inline_scenario
from test_sweep_kill import stop_when


def test_sigterm_of_a_run_prints_the_partial_summary_and_exits_143(tmp_path: Path) -> None:
    # 60 s simulated at 500 000 frames/s: minutes of wall time, stopped after 1.5 s.
    scenario = tmp_path / "long.toml"
    scenario.write_text(inline_scenario(duration_ms=60_000, rate_pps=500_000), encoding="utf-8")
    started = time.monotonic()
    code, err, _ = stop_when(
        [sys.executable, "-m", "holdoff", "run", str(scenario)],
        lambda _: time.monotonic() - started > 1.5,
        signal.SIGTERM,
    )
    assert code == 143, err
    assert "Traceback" not in err
    assert "interrupted at t = " in err
