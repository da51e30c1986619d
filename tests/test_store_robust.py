"""The result store survives concurrent writers and corrupt entries."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from holdoff.store import CorruptEntryWarning, ResultStore
from scenarios import inline_scenario

RATES = [50_000 * (i + 1) for i in range(12)]


def write_sweep(folder: Path, name: str, rates: list[int]) -> Path:
    base = folder / "base.toml"
    if not base.exists():
        base.write_text(inline_scenario(duration_ms=20))
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nbase = "base.toml"\nseed = 5\n[grid]\n'
        f'"generators[0].rate_pps" = {rates}\n'
    )
    return path


def sweep_cmd(sweep: Path, store: Path, *extra: str) -> list[str]:
    out = sweep.with_suffix(".parquet")
    return [
        sys.executable,
        *("-m", "holdoff", "sweep", str(sweep), "--store", str(store), "--out", str(out)),
        "--json",
        *extra,
    ]


def test_two_sweeps_writing_one_store_at_once_lose_nothing(tmp_path: Path) -> None:
    # Overlapping point sets: the middle four rates are in both sweeps, with
    # the same base and seed, so both sweeps compute and write those keys.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write_sweep(tmp_path / "a", "both", RATES[:8])
    second = write_sweep(tmp_path / "b", "both", RATES[4:])
    store = tmp_path / "store"
    procs = [
        subprocess.Popen(
            sweep_cmd(sweep, store, "--workers", "1"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for sweep in (first, second)
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    tables = [json.loads(out) for out, _ in outputs]
    assert [t["points"] for t in tables] == [8, 8]
    results = ResultStore(store)
    # 12 distinct points in all; every one present and readable.
    assert len(results.keys()) == len(RATES)
    seen_rates = set()
    for key in results.keys():
        row = results.get(key)
        assert row["scenario_hash"] == key
        seen_rates.add(row["scenario_toml"])
    assert len(seen_rates) == len(RATES)
    assert not [p for p in store.iterdir() if p.name.startswith(".")], "temporary files remain"


def test_corrupt_entries_are_reported_skipped_and_recomputed(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path, "corrupt", RATES[:4])
    store = tmp_path / "store"
    first = subprocess.run(sweep_cmd(sweep, store), capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    files = sorted(store.glob("*.parquet"))
    assert len(files) == 4
    truncated, garbage = files[0], files[1]
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    garbage.write_bytes(b"not a parquet file\n" * 10)

    # The Python API: a warning naming each file; the readable rows remain.
    with pytest.warns(CorruptEntryWarning) as caught:
        frame = ResultStore(store).query()
    assert len(frame) == 2
    messages = " ".join(str(w.message) for w in caught)
    assert str(truncated) in messages and str(garbage) in messages

    # The CLI: results works and warns.
    listed = subprocess.run(
        [sys.executable, "-m", "holdoff", "results", "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    assert truncated.name in listed.stderr and garbage.name in listed.stderr
    assert "warning:" in listed.stderr

    # The next sweep recomputes exactly the two broken entries.
    again = subprocess.run(sweep_cmd(sweep, store), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["cached"], summary["computed"]) == (2, 2)
    assert truncated.name in again.stderr
    results = ResultStore(store)
    for key in results.keys():
        assert results.get(key)["scenario_hash"] == key
