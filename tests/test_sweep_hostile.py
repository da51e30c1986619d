"""Sweeps given hostile input: two spellings of one field, huge grids, names leaving their folder.

Each case is refused before any point is built or run, with a message naming
the field or the limit (issue 29: a grid of 10^9 points was a MemoryError
even with --dry-run; two spellings of one field wrote a column that never
ran; a name with ../ wrote its table outside runs/sweeps/).
"""

from __future__ import annotations

import json
import time
import tomllib
import tracemalloc
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from holdoff import sweeps as sw
from holdoff.cli import main
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


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, " ".join(captured.err.split())


def sweep_file(folder: Path, body: str, name: str = "s.toml") -> Path:
    (folder / "base.toml").write_text(inline_scenario(duration_ms=5), encoding="utf-8")
    path = folder / name
    path.write_text('base = "base.toml"\n' + body, encoding="utf-8")
    return path


GRID = f'[grid]\n"{RATE}" = [1000, 2000]\n'


@pytest.mark.parametrize(
    ("body", "args", "words"),
    [
        ('name = "two"\n' + GRID + '"generators[*].rate_pps" = [3000, 4000]\n', [], ["same field"]),
        ('name = "../escape"\n' + GRID, [], ["`name`", "`/`"]),
        ('name = "a\\u0000b"\n' + GRID, ["--dry-run"], ["`name`", "\\x00"]),
        (
            'name = "big"\n[grid]\n'
            + "".join(f'"generators[0].x{i}" = [0,1,2,3,4,5,6,7,8,9]\n' for i in range(9)),
            ["--dry-run"],
            ["1,000,000,000 runs", "the limit is 100,000"],
        ),
        ('name = "r"\nreplicates = 1000000000\n' + GRID, ["--dry-run"], ["`replicates`"]),
        ('name = "s"\n' + GRID, ["--seeds", "0"], ["--seeds", "between 1 and 1000"]),
        ('name = "s"\n' + GRID, ["--seeds", "1001"], ["--seeds", "between 1 and 1000"]),
        ('name = "s"\n' + GRID, ["--seeds", "many"], ["--seeds", "integer"]),
        ('name = "s"\n' + GRID, ["--workers", "0"], ["--workers"]),
        ('name = "s"\n' + GRID, ["--workers", "100000"], ["--workers 100000", "four per core"]),
        ('name = "s"\n' + GRID, ["--executor", "cluster"], ["serial, process, ray"]),
    ],
)
def test_cli_refuses_bad_sweeps_and_flags_with_exit_2(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    body: str,
    args: list[str],
    words: list[str],
) -> None:
    path = sweep_file(tmp_path, body)
    code, out, err = cli(capsys, "sweep", path, "--store", tmp_path / "store", *args)
    assert (code, out) == (2, ""), err
    assert "Traceback" not in err
    for word in words:
        assert word in err, f"{word!r} not in {err!r}"
    assert not (tmp_path / "store").exists()
    assert not (tmp_path.parent / "escape.parquet").exists()


def test_cli_refuses_a_store_that_is_a_file_and_an_out_that_is_a_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = sweep_file(tmp_path, 'name = "s"\n' + GRID)
    (tmp_path / "file").write_text("x")
    code, _, err = cli(capsys, "sweep", path, "--store", tmp_path / "file")
    assert code == 2 and "--store" in err and "not a folder" in err
    (tmp_path / "t.parquet").mkdir()
    code, _, err = cli(capsys, "sweep", path, "--no-store", "-o", tmp_path / "t.parquet")
    assert code == 2 and "--out" in err and "is a folder" in err


def test_cli_seeds_writes_means_and_the_per_replicate_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = sweep_file(tmp_path, 'name = "s"\n' + GRID)
    out = tmp_path / "t.parquet"
    code, stdout, err = cli(
        capsys, "sweep", path, "--no-store", "-o", out, "--seeds", "3", "--json"
    )
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["replicates"] == 3 and summary["points"] == 6
    assert summary["replicates_table"] == str(tmp_path / "t.replicates.parquet")
    assert [p["params"] for p in summary["point_means"]] == [{RATE: 1000}, {RATE: 2000}]
    assert all(p["seeds"] == 3 for p in summary["point_means"])
    assert "sink/received_ci95" in summary["point_means"][0]
    means, per_run = pd.read_parquet(out), pd.read_parquet(tmp_path / "t.replicates.parquet")
    assert len(means) == 2 and len(per_run) == 6
    assert {"sink/received", "sink/received_ci95_lo", "sink/received_ci95_hi", "seeds"} <= set(
        means.columns
    )
    for i, rate in enumerate((1000, 2000)):
        runs = per_run.loc[per_run[RATE] == rate, "sink/received"].astype(float)
        assert means["sink/received"][i] == pytest.approx(runs.mean())


def test_a_capture_that_is_a_fifo_or_a_device_is_refused_not_read(tmp_path: Path) -> None:
    """The store key covers a capture's contents, but a FIFO would block a
    read until a writer came and a device never ends. The core's validation
    refuses them by name before any key is taken (and the key's digest
    opens regular files only). Run in a child process with a time limit, so
    that a hang fails the test instead of the suite."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "cap.pcap"
    os.mkfifo(fifo)
    for capture in (str(fifo), "/dev/zero"):
        base = inline_scenario(duration_ms=5).replace(
            "rate_pps = 10000\nframe_bytes = 64", f'pattern = "replay"\ncapture = "{capture}"'
        )
        (tmp_path / "base.toml").write_text(base, encoding="utf-8")
        (tmp_path / "s.toml").write_text('name = "f"\nbase = "base.toml"\n', encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "holdoff", "sweep", str(tmp_path / "s.toml"), "--dry-run"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        text = " ".join(done.stderr.split())
        assert done.returncode == 2, text
        assert "generators[0].capture" in text and "regular file" in text, text
