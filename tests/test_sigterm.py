"""SIGTERM stops `holdoff run` as Ctrl-C does: the partial summary, exit 143, no traceback.

(Sweeps and calibration: tests/test_sweep_kill.py, tests/test_calibrate_seeds.py.)
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from holdoff.interrupt import Terminated, sigterm_as_interrupt
from scenarios import inline_scenario
from test_sweep_kill import stop_when


def _catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (the SigCgt mask of
    /proc/PID/status, bit signum - 1)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time process ``pid`` has used so far (/proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_sigterm_of_a_run_prints_the_partial_summary_and_exits_143(tmp_path: Path) -> None:
    # 60 s simulated at 500 000 frames/s: minutes of CPU time. The signal goes
    # once the CLI catches SIGTERM and has computed for 2 s of CPU time (the
    # run is under way: start-up takes ~0.75 s), whatever else loads the
    # machine. A fixed wall-clock delay sent it before the handler existed on
    # a loaded machine (exit -15).
    scenario = tmp_path / "long.toml"
    scenario.write_text(inline_scenario(duration_ms=60_000, rate_pps=500_000), encoding="utf-8")
    code, err, _ = stop_when(
        [sys.executable, "-m", "holdoff", "run", str(scenario)],
        lambda pid: _catches(pid, signal.SIGTERM) and _cpu_seconds(pid) > 2.0,
        signal.SIGTERM,
    )
    assert code == 143, err
    assert "Traceback" not in err
    assert "interrupted at t = " in err


def test_sigterm_raises_terminated_once_and_the_handler_is_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with sigterm_as_interrupt() as state:
        assert state.exit_code(130) == 130  # nothing arrived yet
        with pytest.raises(KeyboardInterrupt) as info:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs before this returns
        assert isinstance(info.value, Terminated)
        # A second SIGTERM while the first is handled raises nothing.
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)
        assert state.terminated == 2
        # 128 + 15 for a failing status; success stays success.
        assert (state.exit_code(130), state.exit_code(1), state.exit_code(0)) == (143, 143, 0)
    assert signal.getsignal(signal.SIGTERM) == before
