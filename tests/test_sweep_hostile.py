"""Sweeps given hostile input: two spellings of one field, huge grids, names leaving their folder.

Each case is refused before any point is built or run, with a message naming
the field or the limit (issue 29: a grid of 10^9 points was a MemoryError
even with --dry-run; two spellings of one field wrote a column that never
ran; a name with ../ wrote its table outside runs/sweeps/).
"""

from __future__ import annotations

import time
import tomllib
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from holdoff import sweeps as sw
from holdoff.sweep_paths import overlap
from scenarios import inline_scenario

RATE = "generators[0].rate_pps"


def spec(**extra: Any) -> dict[str, Any]:
    base = tomllib.loads(inline_scenario(duration_ms=5))
    return {"name": "hostile", "base": base, "grid": {RATE: [1000, 2000]}, **extra}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        # [*] is every index, so it meets index 0: one field, two spellings.
        ("generators[0].rate_pps", "generators[*].rate_pps", True),
        # A table and a field inside it: the later overwrites part of the earlier.
        ("hosts[0].nics[0].moderation", "hosts[*].nics[0].moderation.itr_per_s", True),
        ("hosts[0].profile", "hosts[1].profile", False),
        ("generators[0].rate_pps", "generators[0].frame_bytes", False),
        ("hosts[*].nics[1].chip", "hosts[0].nics[0].chip", False),
    ],
)
def test_overlap_reads_two_spellings_as_one_field(a: str, b: str, same: bool) -> None:
    assert overlap(a, b) is same
    assert overlap(b, a) is same


def test_two_spellings_of_one_field_are_refused_in_the_grid_and_in_points() -> None:
    grid = {RATE: [1000, 2000], "generators[*].rate_pps": [3000, 4000]}
    with pytest.raises(sw.SweepError) as info:
        sw.load_sweep(spec(grid=grid))
    assert "generators[0].rate_pps" in str(info.value)
    assert "generators[*].rate_pps" in str(info.value)
    assert "same field" in str(info.value)
    point = {RATE: 1000, "generators[*].rate_pps": 3000}
    with pytest.raises(sw.SweepError, match=r"points\[0\].*same field"):
        sw.load_sweep(spec(grid={}, points=[point]))
    # One spelling in the grid and another in a separate explicit point is
    # fine: each row's column holds what that row ran.
    ok = sw.load_sweep(spec(points=[{"generators[*].rate_pps": 3000}]))
    assert len(sw.expand(ok)) == 3


def test_a_grid_of_ten_billion_points_is_refused_before_it_is_built() -> None:
    # 10 fields of 10 values: 10^10 combinations. Counting is a product of
    # list lengths; building them would need terabytes.
    grid = {f"generators[0].x{i}": list(range(10)) for i in range(10)}
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(sw.SweepError) as info:
            sw.load_sweep(spec(grid=grid))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 5
    assert peak < 50 * 2**20
    message = str(info.value)
    assert "10,000,000,000 runs" in message
    assert f"{sw.MAX_SWEEP_RUNS:,}" in message
    assert info.value.field == "grid"


def test_runs_count_replicates_and_explicit_points() -> None:
    # 2 grid values + 3 explicit points = 5 parameter sets, x 4 replicates.
    points = [{RATE: r} for r in (5000, 6000, 7000)]
    loaded = sw.load_sweep(spec(points=points, replicates=4))
    assert sw.count_points(loaded) == 20
    assert len(sw.expand(loaded)) == 20
    # At the limit exactly: accepted; one more set: refused.
    side = sw.MAX_SWEEP_RUNS // 10
    at_limit = spec(grid={RATE: list(range(side)), "duration_ms": list(range(1, 11))})
    assert sw.count_points(sw.load_sweep(at_limit)) == sw.MAX_SWEEP_RUNS
    with pytest.raises(sw.SweepError, match="limit"):
        sw.load_sweep({**at_limit, "points": [{RATE: 1}]})


@pytest.mark.parametrize("replicates", [10**9, sw.MAX_REPLICATES + 1, 0, -1, 2.5, True])
def test_replicates_beyond_the_limit_are_refused(replicates: Any) -> None:
    with pytest.raises(sw.SweepError) as info:
        sw.load_sweep(spec(replicates=replicates))
    assert info.value.field == "replicates"
    assert f"1 to {sw.MAX_REPLICATES}" in str(info.value)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("../escape", "`/`"),
        ("a/b", "`/`"),
        ("/tmp/abs", "`/`"),
        ("a\\b", "`\\\\`"),
        ("x\x00y", "`\\x00`"),
        ("line\nbreak", "`\\n`"),
        ("..", "leading `.`"),
        (".hidden", "leading `.`"),
        ("x" * (sw.MAX_NAME_CHARS + 1), "the limit is"),
        ("", "non-empty"),
        (7, "non-empty string"),
    ],
)
def test_names_that_would_leave_the_sweeps_folder_are_refused(name: Any, words: str) -> None:
    with pytest.raises(sw.SweepError) as info:
        sw.load_sweep(spec(name=name))
    assert info.value.field == "name"
    assert words in str(info.value)
    assert "\x00" not in str(info.value) and "\n" not in str(info.value)


def test_table_path_stays_in_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "sweeps"
    assert sw.table_path("itr-x-load.v2", folder) == folder / "itr-x-load.v2.parquet"
    for name in ("../x", "a/../../b", ".."):
        with pytest.raises(sw.SweepError):
            sw.table_path(name, folder)


def test_a_sweep_file_that_is_not_a_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(sw.SweepError, match="is a directory"):
        sw.load_sweep(folder)
    base = tmp_path / "s.toml"
    base.write_text('name = "s"\nbase = "/dev/zero"\n[grid]\nduration_ms = [1]\n')
    with pytest.raises(sw.SweepError, match="device") as info:
        sw.load_sweep(base)
    assert info.value.field == "base"
    deep = tmp_path / "deep.toml"
    deep.write_text('name = "d"\n[base]\nx = ' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(sw.SweepError, match="deep"):
        sw.load_sweep(deep)
