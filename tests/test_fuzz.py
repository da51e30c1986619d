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

from holdoff import _core, fuzz

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
