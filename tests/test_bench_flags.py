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
