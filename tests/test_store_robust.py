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


def _results_json(store: Path) -> subprocess.CompletedProcess[str]:
    """``holdoff results --store STORE --json`` in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "holdoff", "results", "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )


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
    listed = _results_json(store)
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


# -- damaged entries of every kind ------------------------------------------------------


def _record(key: str, seed: int = 3) -> dict[str, object]:
    # A complete entry as a sweep writes it: the required columns and a few metrics.
    return {
        "scenario_hash": key,
        "holdoff_version": "0.0.0-test",
        "scenario": "s",
        "seed": seed,
        "sim_time_ns": 5_000_000,
        "interrupts_per_s_total": 1000.0,
        "dropped": 0,
        "scenario_toml": 'name = "s"\n',
    }


def _damage(kind: str, path: Path, key: str) -> None:
    import math

    import pyarrow as pa
    import pyarrow.parquet as pq

    good = _record(key)
    if kind == "truncated":
        ResultStore(path.parent).put(key, good)
        path.write_bytes(path.read_bytes()[:-40])
        return
    raw = {
        "garbage": bytes(range(256)) * 2,
        "text-only": b"scenario_hash,seed\nab,1\n",
        "empty": b"",
    }
    if kind in raw:
        path.write_bytes(raw[kind])
        return
    edits: dict[str, object] = {
        "no-sim_time_ns": {k: v for k, v in good.items() if k != "sim_time_ns"},
        "nan-seed": {**good, "seed": math.nan},
        "text-seed": {**good, "seed": "x"},
        "null-sim_time_ns": {**good, "sim_time_ns": None},
        "other-hash": {**good, "scenario_hash": "ab" * 32},
        "text-metric": {**good, "dropped": "lots"},
    }
    if kind == "two-rows":
        pq.write_table(pa.Table.from_pylist([good, good]), path)
    else:
        pq.write_table(pa.Table.from_pylist([edits[kind]]), path)  # type: ignore[list-item]


DAMAGE = [
    ("truncated", "no PAR1 at its end"),
    ("garbage", "not a Parquet file"),
    ("text-only", "not a Parquet file"),
    ("empty", "too short for a Parquet file"),
    ("no-sim_time_ns", "no `sim_time_ns` column"),
    ("nan-seed", "`seed` is nan (double), expected an integer"),
    ("text-seed", "`seed` is 'x' (string), expected an integer"),
    ("null-sim_time_ns", "`sim_time_ns` is None"),
    ("other-hash", "not the file's name"),
    ("text-metric", "metric `dropped` is string, expected a number"),
    ("two-rows", "expected one row, found 2"),
]


@pytest.mark.parametrize(("kind", "reason"), DAMAGE, ids=[k for k, _ in DAMAGE])
def test_a_damaged_entry_is_named_and_the_others_listed(
    tmp_path: Path, kind: str, reason: str
) -> None:
    store = ResultStore(tmp_path)
    good = ["1" * 64, "2" * 64]
    for i, key in enumerate(good):
        store.put(key, _record(key, seed=i))
    bad = "c" * 64
    _damage(kind, store.path(bad), bad)
    with pytest.warns(CorruptEntryWarning) as caught:
        frame = store.query()
    assert sorted(frame["scenario_hash"]) == good
    message = " ".join(str(w.message) for w in caught)
    assert bad in message and reason in message, message
    # A sweep asking for the damaged key gets None (and recomputes it).
    with pytest.warns(CorruptEntryWarning):
        assert ResultStore(tmp_path).read(bad) is None


def test_results_lists_good_entries_and_folds_many_damaged(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    store.put("1" * 64, _record("1" * 64))
    _damage("no-sim_time_ns", store.path("a" * 64), "a" * 64)
    for i in range(14):
        store.path(f"{i:x}".rjust(64, "b")).write_bytes(b"junk")
    listed = _results_json(tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr
    assert [r["scenario_hash"] for r in json.loads(listed.stdout)] == ["1" * 64]
    lines = listed.stderr.strip().splitlines()
    # 15 damaged entries: 10 named, one line counting the other 5.
    assert len(lines) == 11, listed.stderr
    assert lines[-1] == "warning: and 5 more damaged result store entries, ignored likewise"


def test_a_store_of_only_damaged_entries_is_a_clean_error(tmp_path: Path) -> None:
    (tmp_path / ("d" * 64 + ".parquet")).write_bytes(b"junk")
    listed = subprocess.run(
        [sys.executable, "-m", "holdoff", "results", "--store", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 2
    assert "Traceback" not in listed.stderr
    assert "no stored runs" in listed.stderr
