"""Ctrl-C: a run stops within about a second with its partial result; a sweep
stops its workers, keeps every finished point and says how to resume."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest

import holdoff
from holdoff.store import ResultStore
from scenarios import EXAMPLES, inline_scenario

# One simulated hour of the quickstart takes minutes of wall time: still
# running when the signal comes.
HOUR_MS = 3_600_000


def long_quickstart(folder: Path) -> Path:
    text = (EXAMPLES / "quickstart.toml").read_text()
    text = re.sub(r"(?m)^duration_ms = \d+$", f"duration_ms = {HOUR_MS}", text)
    path = folder / "hour.toml"
    path.write_text(text)
    return path


def holdoff_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "holdoff", *args]


def wait_for_progress(stream: IO[str]) -> str:
    """The first progress line of a ``--progress`` run (the run is under way)."""
    line = stream.readline()
    assert "ms simulated" in line, line
    return line


def interrupt_now(proc: subprocess.Popen[str]) -> float:
    """Sends SIGINT; returns how long the process took to exit."""
    assert proc.poll() is None, "finished before the signal"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return time.monotonic() - sent


def test_sigint_stops_holdoff_run_with_the_partial_summary(tmp_path: Path) -> None:
    scenario = long_quickstart(tmp_path)
    proc = subprocess.Popen(
        holdoff_cmd("run", str(scenario), "--progress"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    # The run has gone on for half a second of wall time at least.
    first = wait_for_progress(proc.stderr)
    time.sleep(0.5)
    took = interrupt_now(proc)
    out, err = proc.communicate()
    err = first + err
    assert proc.returncode == 130, err
    assert took < 2.0, f"exited {took:.2f} s after SIGINT"
    m = re.search(r"interrupted at t = ([\d,.]+) ms simulated", err)
    assert m, err
    at_ms = float(m.group(1).replace(",", ""))
    assert 0 < at_ms < HOUR_MS
    # The partial summary: the simulated time reached and a balanced ledger.
    assert f"simulated {m.group(1)} ms" in out, out
    assert "ledger: balanced" in out


def test_sigint_in_python_raises_keyboardinterrupt_with_the_partial_result(
    tmp_path: Path,
) -> None:
    scenario = long_quickstart(tmp_path)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            holdoff.run(scenario)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 5
    result = info.value.result  # type: ignore[attr-defined]
    at_ns = info.value.interrupted_at_ns  # type: ignore[attr-defined]
    assert isinstance(result, holdoff.RunResult)
    assert 0 < at_ns < HOUR_MS * 1_000_000
    assert result.sim_time_ns == at_ns
    assert result.summary["aborted"]["reason"].startswith("interrupted")
    assert result.ledger["balanced"] is True
    assert result.perf["peak_rss_bytes"] > 0


def test_progress_callback_sees_simulated_time_advance_and_may_stop_the_run(
    tmp_path: Path,
) -> None:
    seen: list[tuple[int, int, int]] = []

    class Enough(Exception):
        pass

    def progress(now_ns: int, end_ns: int, events: int) -> None:
        seen.append((now_ns, end_ns, events))
        if len(seen) == 3:
            raise Enough

    with pytest.raises(Enough) as info:
        holdoff.run(long_quickstart(tmp_path), progress=progress)
    assert len(seen) == 3
    assert all(end == HOUR_MS * 1_000_000 for _, end, _ in seen)
    assert [n for n, _, _ in seen] == sorted(n for n, _, _ in seen)
    assert [e for _, _, e in seen] == sorted(e for _, _, e in seen)
    # The run stopped at the instant of the third call.
    assert info.value.interrupted_at_ns == seen[-1][0]  # type: ignore[attr-defined]


def test_sigint_stops_a_sweep_keeps_finished_points_and_says_how_to_resume(
    tmp_path: Path,
) -> None:
    # 16 points of ~0.1-0.2 s each on 2 workers: several finish within 1.5 s.
    (tmp_path / "base.toml").write_text(inline_scenario(rate_pps=1_000_000, duration_ms=300))
    sweep = tmp_path / "int.toml"
    sweep.write_text(
        'name = "int"\nbase = "base.toml"\nseed = 3\n[grid]\n'
        '"generators[0].rate_pps" = ['
        + ", ".join(str(100_000 * (i + 1)) for i in range(16))
        + "]\n"
    )
    store = tmp_path / "store"
    cmd = holdoff_cmd(
        "sweep", str(sweep), "--store", str(store), "--out", str(tmp_path / "t.parquet")
    )
    proc = subprocess.Popen(
        [*cmd, "--workers", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while len(list(store.glob("[0-9a-f]*.parquet"))) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the sweep stored nothing in time"
        time.sleep(0.01)
    sent = time.monotonic()
    # Ctrl-C in a terminal signals the whole foreground process group.
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    _, err = proc.communicate()
    assert proc.returncode == 130, err
    assert time.monotonic() - sent < 5
    assert "interrupted:" in err and "resume with the same command: holdoff sweep" in err, err
    kept = ResultStore(store)
    finished = kept.keys()
    assert 2 <= len(finished) < 16
    for key in finished:
        assert kept.get(key)["scenario_hash"] == key
    assert not [p for p in store.iterdir() if p.name.startswith(".")], "temporary files remain"
    resumed = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["cached"] == len(finished)
    assert summary["computed"] == 16 - len(finished)


def test_a_long_run_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        holdoff_cmd("run", str(long_quickstart(tmp_path))),
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
    )
    os.close(slave)
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed with the process
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.monotonic() + 60
    try:
        while b"ETA" not in b"".join(chunks):
            assert proc.poll() is None and time.monotonic() < deadline, b"".join(chunks)
            time.sleep(0.05)
        interrupt_now(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
        reader.join(timeout=10)
        os.close(master)
    shown = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 130
    # "\rt = 12,345.6 / 3,600,000.0 ms simulated (0%), 25.1x real time, ..., ETA 2 m 23 s"
    assert re.search(
        r"\rt = [\d,.]+ / 3,600,000\.0 ms simulated \(\d+%\), [\d.e+]+x real time", shown
    ), shown
    assert "interrupted at t = " in shown
