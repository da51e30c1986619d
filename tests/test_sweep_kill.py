"""A sweep stopped part way: SIGTERM behaves as Ctrl-C, SIGKILL then a rerun resumes.

- SIGTERM after the first points are stored: exit 143, every worker process
  gone (their pids checked), the finished points kept, a rerun computes only
  the rest.
- SIGKILL part way: the workers die with the sweep, and a rerun resumes
  without recomputing finished points.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pandas.testing as pdt

from holdoff.store import ResultStore
from scenarios import inline_scenario

POINTS = 24


def write_sweep(folder: Path) -> Path:
    # ~0.1 s per point: 1 Mpps of 64-byte frames for 300 ms, 6 ITR settings x 4 loads.
    (folder / "base.toml").write_text(inline_scenario(rate_pps=1_000_000, duration_ms=300))
    sweep = folder / "kill.toml"
    sweep.write_text(
        'name = "kill"\nbase = "base.toml"\nseed = 3\n[grid]\n'
        '"hosts[0].nics[0].moderation" = ['
        + ", ".join(
            f'{{ kind = "static", itr_per_s = {itr} }}'
            for itr in (1000, 2000, 4000, 8000, 16000, 32000)
        )
        + "]\n"
        '"generators[0].rate_pps" = [400000, 600000, 800000, 1000000]\n'
    )
    return sweep


def sweep_cmd(sweep: Path, store: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "holdoff",
        "sweep",
        str(sweep),
        "--store",
        str(store),
        "--out",
        str(out),
        "--json",
        *extra,
    ]


def children(pid: int) -> list[int]:
    """The pids whose parent is ``pid`` (from /proc: Linux)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its new parent) is gone as a worker.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def stop_when(
    cmd: list[str], ready: Callable[[int], bool], signum: int
) -> tuple[int, str, set[int]]:
    """Starts ``cmd`` in a session of its own, waits until ``ready(pid)`` (at
    most 120 s, collecting the pids of its worker processes), sends
    ``signum`` to it alone, waits for it to end, then up to 10 s for each
    worker to be gone. Returns (exit status, stderr, the workers seen);
    anything left of the session (started here) is killed."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    try:
        while not ready(proc.pid):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the command was not ready in time"
            workers.update(children(proc.pid))
            time.sleep(0.005)
        workers.update(children(proc.pid))
        os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=60)
        gone_by = time.monotonic() + 10
        while [pid for pid in workers if alive(pid)] and time.monotonic() < gone_by:
            time.sleep(0.05)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if proc.poll() is None:
            proc.communicate()
    return proc.returncode, err, workers


def rerun(cmd: list[str]) -> dict[str, Any]:
    """Runs a sweep command to its end; its JSON summary (it must succeed)."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    summary: dict[str, Any] = json.loads(done.stdout)
    return summary


def stored(store: Path) -> dict[str, tuple[int, int]]:
    """Visible results: name -> (inode, mtime_ns)."""
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in store.glob("*.parquet")
        if not p.name.startswith(".")
    }


def test_killed_sweep_resumes_without_recomputing(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path)
    store = tmp_path / "store"
    code, _, workers = stop_when(
        sweep_cmd(sweep, store, tmp_path / "killed.parquet", "--workers", "2"),
        lambda _: len(stored(store)) >= POINTS // 4,
        signal.SIGKILL,
    )
    assert code == -signal.SIGKILL
    # The parent could not end its workers; they die with it (Linux:
    # PR_SET_PDEATHSIG), not left waiting forever under init.
    assert len(workers) >= 2
    assert not [pid for pid in workers if alive(pid)], "workers outlived a killed sweep"
    assert not (tmp_path / "killed.parquet").exists()

    before = stored(store)
    assert POINTS // 4 <= len(before) < POINTS, "kill the sweep part way, not at the end"
    # Every visible result is complete and readable; anything half-written is hidden.
    results = ResultStore(store)
    for key in results.keys():
        assert results.get(key)["scenario_hash"] == key
    assert sorted(results.keys()) == sorted(n.removesuffix(".parquet") for n in before)

    summary = rerun(sweep_cmd(sweep, store, tmp_path / "resumed.parquet"))
    assert summary["points"] == POINTS
    assert summary["cached"] == len(before)
    assert summary["computed"] == POINTS - len(before)
    after = stored(store)
    assert len(after) == POINTS
    # Finished points were neither recomputed nor rewritten: same inode, same mtime.
    assert {name: after[name] for name in before} == before
    assert not [p for p in store.iterdir() if p.name.startswith(".")], "temporary files remain"

    clean = rerun(
        sweep_cmd(sweep, tmp_path / "clean-store", tmp_path / "clean.parquet", "--workers", "1")
    )
    assert clean["computed"] == POINTS
    resumed_table = pd.read_parquet(tmp_path / "resumed.parquet")
    assert len(resumed_table) == POINTS
    pdt.assert_frame_equal(resumed_table, pd.read_parquet(tmp_path / "clean.parquet"))


def test_sigterm_stops_the_workers_keeps_finished_points_and_exits_143(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path)
    store = tmp_path / "store"
    code, err, workers = stop_when(
        sweep_cmd(sweep, store, tmp_path / "termed.parquet", "--workers", "2"),
        lambda _: len(stored(store)) >= 2,
        signal.SIGTERM,
    )
    assert code == 143, err
    assert "Traceback" not in err
    assert "interrupted" in err and "kept in the store" in err
    # Two workers were running points; none outlives the sweep.
    assert len(workers) >= 2
    assert not [pid for pid in workers if alive(pid)], "worker processes left running"
    kept = stored(store)
    assert 2 <= len(kept) < POINTS
    assert not (tmp_path / "termed.parquet").exists()

    summary = rerun(sweep_cmd(sweep, store, tmp_path / "resumed.parquet"))
    assert summary["cached"] == len(kept)
    assert summary["computed"] == POINTS - len(kept)
