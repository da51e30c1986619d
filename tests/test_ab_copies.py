"""``scripts/ab_copies.py``: the before/after comparison that runs each side
from several copies of its program (BENCHMARKS.md, fifth round)."""

from __future__ import annotations

import re
import stat
from pathlib import Path
from types import ModuleType

import pytest

from scenarios import load_script


def _script() -> ModuleType:
    return load_script("ab_copies")


def _program(path: Path, rates: list[float]) -> Path:
    """A stand-in for the bench_hosts example: prints one line a run, and
    records each call's own file name (so the test sees which copy ran)."""
    lines = "".join(f'echo "hosts 1 sim 1 ms: {r:.3f} M packets/s, wall 0.1 s"\n' for r in rates)
    path.write_text(f'#!/bin/sh\necho "$(basename "$0") $*" >> "{path.parent}/calls"\n{lines}')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_figure_is_the_median_of_the_runs_lines() -> None:
    ab = _script()
    pat = re.compile(ab.DEFAULT_PATTERN)
    out = "x: 10.000 M packets/s\nx: 30.000 M packets/s\nx: 12.500 M packets/s\n"
    assert ab.figure(out, pat) == 12.5
    with pytest.raises(ValueError, match="no figure matching"):
        ab.figure("nothing here", pat)


def test_summary_ratios_are_taken_pair_by_pair() -> None:
    ab = _script()
    # Pairs (10, 12) and (20, 20): ratios 1.2 and 1.0, median 1.1; the
    # ratio of the medians (16 / 15) would differ.
    s = ab.summarise([10.0, 20.0], [12.0, 20.0])
    assert s["ratio_median"] == pytest.approx(1.1)
    assert (s["ratio_min"], s["ratio_max"]) == (pytest.approx(1.0), pytest.approx(1.2))
    assert (s["a_median"], s["b_median"]) == (15.0, 16.0)
    with pytest.raises(ValueError):
        ab.summarise([1.0], [])


def test_runs_each_side_from_fresh_copies_alternated(tmp_path, capsys) -> None:
    ab = _script()
    before = _program(tmp_path / "before", [10.0])
    after = _program(tmp_path / "after", [11.0, 13.0])  # median 12
    assert ab.main([str(before), str(after), "--copies", "2", "--rounds", "3", "--", "7", "9"]) == 0
    out = capsys.readouterr().out
    assert "median 1.200" in out and "over 6 pairs (2 copies a side)" in out
    calls = (tmp_path / "calls").read_text().split("\n")[:-1]
    # Alternated a1 b1 a2 b2 per round, every call with the arguments, and
    # never the original files.
    names = [c.split()[0] for c in calls]
    assert names == ["a1-before", "b1-after", "a2-before", "b2-after"] * 3
    assert all(c.split()[1:] == ["7", "9"] for c in calls)


def test_bad_input_is_refused_with_the_field_named(tmp_path, capsys) -> None:
    ab = _script()
    prog = _program(tmp_path / "p", [1.0])
    for argv, words in [
        ([str(prog), str(tmp_path / "missing")], "is not a file"),
        ([str(prog), str(prog), "--copies", "0"], "--copies must be 1 to 16"),
        ([str(prog), str(prog), "--rounds", "101"], "--rounds must be 1 to 100"),
        ([str(prog), str(prog), "--pattern", "("], "--pattern is not a regular expression"),
        ([str(prog), str(prog), "--pattern", "M packets"], "needs a group"),
    ]:
        with pytest.raises(SystemExit) as e:
            ab.main(argv)
        assert e.value.code == 2
        assert words in capsys.readouterr().err
