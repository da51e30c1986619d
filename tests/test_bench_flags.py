"""`holdoff bench` given bad flags: exit 2 naming the flag and its limit, nothing run.

Each limit is checked before any run starts (a repeat count of 10^9 or a
simulated hour per run would otherwise run for days).
"""

from __future__ import annotations

import pytest

from holdoff import benchscale
from holdoff.cli import main
from scenarios import EXAMPLES

SWEEP = EXAMPLES / "sweep-bench.toml"


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--repeat", "1000000000"], ["--repeat", f"1 and {benchscale.MAX_REPEAT}"]),
        (["--repeat", "0"], ["--repeat"]),
        (["--hosts", "1", "--duration-ms", "100000000000"], ["--duration-ms", "600,000"]),
        (["--hosts", "99999"], ["--hosts", str(benchscale.MAX_HOSTS)]),
        (["--sweep", SWEEP, "--workers", "1,999999"], ["--workers", "999999", "four per core"]),
        (["--sweep", SWEEP, "--workers", "two"], ["--workers", "integers", "'two'"]),
        (["--sweep", SWEEP, "--workers", ",".join(["1"] * 17)], ["--workers", "1 to 16"]),
        (["--sweep", SWEEP, "--hosts", "2"], ["--hosts and --sweep"]),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(
    capsys: pytest.CaptureFixture[str], args: list[object], words: list[str]
) -> None:
    code = main(["bench", *(str(a) for a in args)])
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert (code, captured.out) == (2, ""), err
    assert "Traceback" not in err
    for word in words:
        assert word in err, f"{word!r} not in {err!r}"


@pytest.mark.parametrize(
    ("counts", "round_index", "order"),
    [
        ([1, 64, 1024], 0, [1, 64, 1024]),
        ([1, 64, 1024], 1, [64, 1024, 1]),
        ([1, 64, 1024], 2, [1024, 1, 64]),
        ([1, 64, 1024], 3, [1, 64, 1024]),
        ([7], 5, [7]),
    ],
)
def test_rounds_rotate_the_order_of_the_host_counts(
    counts: list[int], round_index: int, order: list[int]
) -> None:
    # Rotated each round, so no count always runs first (on a cold cache)
    # or last (after the machine drifted the most).
    assert benchscale.round_order(counts, round_index) == order


def test_round_costs_are_ratios_within_each_round() -> None:
    # Packets per wall second of counts (1, 64) in three rounds; the machine
    # ran at half speed during round 2. Cost = wall time per packet against
    # the first count of the same round = pps[0] / pps[i]: 1.25 in every
    # round, where the 64-host run of round 2 set against the 1-host run of
    # round 1 would read 2.5.
    pps = [[20e6, 16e6], [10e6, 8e6], [20e6, 16e6]]
    assert benchscale.round_costs(pps) == [[1.0, 1.25], [1.0, 1.25], [1.0, 1.25]]


@pytest.mark.parametrize(
    ("duration_ms", "hosts", "largest", "expected"),
    [
        (50, 1024, 1024, 50),  # the largest count runs the time given
        (50, 64, 1024, 800),  # 16 times fewer hosts, 16 times longer
        (50, 1, 1024, 51_200),
        (2, 2, 3, 3),  # 2 x 3 / 2 = 3
        (5, 2, 3, 8),  # 7.5, rounded up: never less work than the largest
        (600_000, 1, 4, benchscale.MAX_DURATION_MS),  # capped at ten minutes
    ],
)
def test_smaller_host_counts_simulate_longer_for_equal_work(
    duration_ms: int, hosts: int, largest: int, expected: int
) -> None:
    assert benchscale.equal_work_ms(duration_ms, hosts, largest) == expected
