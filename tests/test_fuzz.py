"""The fuzzer's invariant, in CI: no input crashes, hangs or exhausts holdoff.

Every case is either refused with a clear scenario error or runs with a
balanced packet ledger (see :mod:`holdoff.fuzz`). The regression scenarios in
``tests/fuzz_regressions/`` are inputs that once broke a run (a panic, an
abort on a multi-GiB allocation, unbounded memory growth, a hang); each must
now give a clear error naming the field. ``make fuzz`` runs more cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from holdoff import _core, fuzz, fuzz_cases, fuzz_cli

REGRESSIONS = sorted((Path(__file__).parent / "fuzz_regressions").glob("*.toml"))

# The field each regression must be refused on (the bound that now covers it).
EXPECTED_FIELD = {
    "iperf-streams-4g": "streams",
    "iperf-streams-980k": "streams",
    "netpipe-schema-drawn": "start_bytes",
    "netpipe-start-after-end": "end_bytes",
    "polling-poll-hz-4g": "poll_hz",
    "rpc-response-zero": "response_bytes",
}


def test_every_regression_has_an_expected_field() -> None:
    assert {p.stem for p in REGRESSIONS} == set(EXPECTED_FIELD)


@pytest.mark.parametrize("path", REGRESSIONS, ids=lambda p: p.stem)
def test_regression_is_refused_with_the_field(path: Path) -> None:
    with pytest.raises(_core.ScenarioError) as e:
        _core.validate_toml(path.read_text())
    assert EXPECTED_FIELD[path.stem] in str(e.value)


def test_fuzz_finds_no_failure() -> None:
    report = fuzz.fuzz(cases=300, seed=1)
    print(report.line())
    assert not report.failures, "\n".join(f"{f.label}: {f.detail}" for f in report.failures)
    # The cases must reach both outcomes, or the fuzzer tests nothing.
    assert report.counts["invalid"] > 30
    assert report.counts["ran"] > 30


def test_fuzz_is_deterministic() -> None:
    a = list(fuzz.mutation_cases(3, 20)) + list(fuzz.schema_cases(3, 20))
    b = list(fuzz.mutation_cases(3, 20)) + list(fuzz.schema_cases(3, 20))
    assert a == b


def test_fuzz_detects_a_crash() -> None:
    # The harness itself must be able to fail: a worker killed by a signal
    # (as an abort on a failed allocation would) is reported, not hidden.
    pool = fuzz._Pool()
    try:
        answer = pool.run("name = 'x'\n")  # warm the worker up
        assert answer["kind"] == "invalid"
        assert pool.proc is not None
        pool.proc.kill()
        pool.proc.wait()
        died = pool._died()
        assert died["kind"] == "failure"
        assert "worker died" in died["detail"]
    finally:
        pool.close()


# -- the command-line fuzzer (holdoff.fuzz_cli) ------------------------------------------


def test_cli_fuzz_finds_no_failure() -> None:
    # A few hundred real command lines: every --set, option, name and store
    # case, and file kinds spread over every command's file slots. Issue
    # 29's oversized inputs are left to tests/test_hostile.py (one each).
    # 240 cases: 153 s on 2 cores shared with other work (load average 1.4 to 4).
    report = fuzz_cli.run(240, seed=1, jobs=2, skip=("size",))
    fuzz_cli.print_report(report)
    assert sum(report.counts.values()) == 240
    assert not report.failures, "\n".join(
        f"[{f.case.kind}] {f.case.label}: {f.detail}" for f in report.failures
    )
    # Both clean outcomes are reached, or the cases test nothing.
    assert report.counts["refused"] > 100
    assert report.counts["ran"] > 10


def test_cli_cases_are_deterministic(tmp_path: Path) -> None:
    def shape(root: Path) -> list[tuple[str, list[str]]]:
        cases = fuzz_cases.all_cases(root, seed=4, mutations=10)
        return [(c.label, [a.replace(str(root), "ROOT") for a in c.args]) for c in cases]

    a, b = shape(tmp_path / "a"), shape(tmp_path / "b")
    assert a == b
    assert len({label for label, _ in a}) == len(a)


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "timed_out", "rss", "expected"),
    [
        (2, b"", b"error: scenario file x: is a FIFO\n", False, 0, "refused"),
        (2, b"", b"Usage: holdoff run\n Error: Invalid value\n", False, 0, "refused"),
        (0, b"ok\n", b"", False, 0, "ran"),
        (1, b"", b"Traceback (most recent call last):\nValueError: x\n", False, 0, "failure"),
        (2, b"", b"Traceback (most recent call last):\nerror: x\n", False, 0, "failure"),
        (1, b"", b"error: simulation failed\n", False, 0, "failure"),
        (-6, b"", b"memory allocation failed\n", False, 0, "failure"),
        (None, b"", b"", True, 0, "failure"),
        (0, b"", b"", False, 2 * 2**30, "failure"),
        (0, b"name \x1b[2J\n", b"", False, 0, "failure"),
        (0, b"name \xc2\x9b2J\n", b"", False, 0, "failure"),
        (2, b"", b"error: a\nerror: b\n", False, 0, "failure"),
    ],
    ids=[
        "refusal",
        "usage",
        "ran",
        "traceback",
        "traceback-exit-2",
        "exit-1",
        "abort",
        "hang",
        "rss",
        "escape",
        "c1",
        "two-errors",
    ],
)
def test_cli_classify(
    code: int | None, stdout: bytes, stderr: bytes, timed_out: bool, rss: int, expected: str
) -> None:
    result, _ = fuzz_cli.classify(code, stdout, stderr, timed_out=timed_out, peak_rss_bytes=rss)
    assert result == expected


def test_cli_harness_detects_a_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The harness must be able to fail: a run longer than the time limit is
    # killed (with its session) and reported as a hang.
    monkeypatch.setattr(fuzz_cli, "TIMEOUT_S", 1.0)
    files = fuzz_cases.make_fixtures(tmp_path / "files")
    case = fuzz_cases.CliCase(
        "long run", "test", ["run", files["valid scenario"], "--set", "duration_ms=600000"]
    )
    out = fuzz_cli.run_case(case, tmp_path / "work")
    assert out.result == "failure"
    assert out.detail.startswith("hang")
