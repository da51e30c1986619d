"""Moderators written in C (``kind = "c"``) from Python and the command line:
a crash or a loop in the C code ends that run only, with an error naming the
file and the function; ``holdoff replay-trace`` answers the min(rx, tx)
question of the ixgbe-style function on a bulk trace at 10 GbE.
Skipped when no C compiler is installed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import holdoff
from holdoff import ModeratorError, ScenarioError
from scenarios import inline_scenario

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    shutil.which("cc") is None, reason="no C compiler (cc) to build C moderators"
)

CRASH = """#include "kernel_shim.h"
struct st { u32 calls; };
void crashy(struct holdoff_ctx *ctx, const struct holdoff_sample *s)
{
    struct st *st = ctx->state;
    if (++st->calls == 5) {
        volatile u32 *p = NULL;
        *p = 1; /* null dereference at the fifth interrupt */
    }
}
HOLDOFF_MODERATOR(crashy, HOLDOFF_INVOKE_PER_INTERRUPT, 0, struct st, 0, 0);
"""

LOOP = """#include "kernel_shim.h"
void loopy(struct holdoff_ctx *ctx, const struct holdoff_sample *s)
{
    if (s->now_ns > 1000000)
        for (;;)
            __asm__ volatile("");
}
HOLDOFF_MODERATOR(loopy, HOLDOFF_INVOKE_PER_INTERRUPT, 0, int, 0, 0);
"""

BROKEN = """#include "kernel_shim.h"
void broken(struct holdoff_ctx *ctx, const struct holdoff_sample *s) { u32 x = ; }
"""


def scenario(source: str, entry: str, extra: str = "") -> str:
    base = inline_scenario(name="c-mod", duration_ms=50, rate_pps=20000)
    return (
        f'{base}\n[hosts.nics.moderation]\nkind = "c"\nsource = "{source}"\n'
        f'entry = "{entry}"\n{extra}\n'
    )


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def test_a_crash_ends_that_run_only_naming_file_function_and_signal(tmp_path: Path) -> None:
    write(tmp_path, "crashy.c", CRASH)
    (tmp_path / "s.toml").write_text(scenario("crashy.c", "crashy"))
    with pytest.raises(ModeratorError, match=r"crashy\.c:crashy crashed with SIGSEGV at t=\d+ ns"):
        holdoff.run(tmp_path / "s.toml")
    # The same process goes on: the next run (e1000-style C) completes.
    ok = scenario(str(ROOT / "moderators/c/e1000_style.c"), "e1000_style_update")
    result = holdoff.run(ok)
    assert result.report["summary"]["ports"][0]["moderation"] == "c"
    assert result.report["summary"]["ports"][0]["interrupts"] > 0


def test_a_call_that_does_not_return_is_ended_by_the_watchdog(tmp_path: Path) -> None:
    write(tmp_path, "loopy.c", LOOP)
    text = scenario("loopy.c", "loopy", "call_limit_ms = 300")
    (tmp_path / "s.toml").write_text(text)
    with pytest.raises(ModeratorError, match=r"loopy\.c:loopy did not return within 300 ms"):
        holdoff.run(tmp_path / "s.toml")


def test_cli_exit_codes(tmp_path: Path) -> None:
    write(tmp_path, "crashy.c", CRASH)
    write(tmp_path, "broken.c", BROKEN)
    (tmp_path / "crash.toml").write_text(scenario("crashy.c", "crashy"))
    (tmp_path / "broken.toml").write_text(scenario("broken.c", "broken"))
    cli = [sys.executable, "-m", "holdoff"]
    crash = subprocess.run(
        [*cli, "run", str(tmp_path / "crash.toml")], capture_output=True, text=True
    )
    assert crash.returncode == 1, crash.stderr
    assert "crashy.c:crashy crashed with SIGSEGV" in crash.stderr
    broken = subprocess.run(
        [*cli, "run", str(tmp_path / "broken.toml")], capture_output=True, text=True
    )
    assert broken.returncode == 2, broken.stderr
    # The compiler's own message, naming the file and the line.
    assert "broken.c does not compile" in broken.stderr
    assert "broken.c:2" in broken.stderr


def test_bad_tables_are_scenario_errors(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(scenario("absent.c", "f"))
    with pytest.raises(ScenarioError, match="moderation.source.*not found"):
        holdoff.run(tmp_path / "s.toml")
    write(tmp_path, "crashy.c", CRASH)
    (tmp_path / "s.toml").write_text(scenario("crashy.c", "nope"))
    with pytest.raises(ScenarioError, match="no exported function `nope`"):
        holdoff.run(tmp_path / "s.toml")


def bulk_trace_10g(path: Path) -> None:
    """A bulk receive at 10 GbE on the 82599 as `holdoff battery --trace` writes it:
    every NAPI completion 100 us apart (HZ 250: within a jiffy, so the gate never
    opens after the first call) sees 300 jumbo frames (9018 bytes) received and
    2 ACKs (66 bytes) sent."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 20
    cols = {
        "workload": ["bulk-10g"] * n,
        "vector": [0] * n,
        "t_ns": [1_000_000 + 100_000 * i for i in range(n)],
        "rx_packets": [300] * n,
        "rx_bytes": [300 * 9018] * n,
        "tx_packets": [2] * n,
        "tx_bytes": [2 * 66] * n,
        "interrupts": [1] * n,
    }
    meta = {
        "version": 1,
        "chip": "82599",
        "link_mbps": 10000,
        "throttle": "eitr-2048ns",
        "hz": 250,
        "vectors": 1,
    }
    schema = pa.schema(
        [("workload", pa.string()), *((c, pa.int64()) for c in list(cols)[1:])],
        metadata={"holdoff.trace": json.dumps(meta)},
    )
    pq.write_table(pa.table(cols, schema=schema), path)


def test_replay_trace_ixgbe_style_keeps_the_bulk_value_through_min(tmp_path: Path) -> None:
    bulk_trace_10g(tmp_path / "bulk.parquet")
    spec = f"{ROOT / 'moderators/c/ixgbe_style.c'}:ixgbe_style_poll_done"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "holdoff",
            "replay-trace",
            spec,
            str(tmp_path / "bulk.parquet"),
            "--against",
            "ixgbe:rx_usecs=1",
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    (series,) = doc["series"]
    c, builtin = series["in_force"]
    # Expected, from ixgbe_style.c (the 2017 ixgbe_update_itr):
    # call 1: both containers take the gate (never updated): 10 | 0x80 each,
    #   min = 0x8A, flag cleared: 10 us -> EITR 10 << 2 = 40.
    # later calls, within a jiffy of the previous one:
    #   RX: 300 packets >= 256 -> bulk (0x00); average 9014 bytes (FCS off)
    #       >= 1968 -> 32256; 10G: DIV_ROUND_UP(32256, 512) = 63 steps of 2:
    #       126 (0x7E).
    #   TX: 2 packets < 4 and 124 bytes < 9000 -> latency (0x80); average 62
    #       -> 62 * 40 + 2720 = 5200, halved in latency mode: 2600;
    #       DIV_ROUND_UP(2600, 512) = 6 steps of 2: 0x80 + 12 = 140.
    #   min(126, 140) = 126: the bulk value survives because the latency
    #   value carries its 0x80 flag into min(); EITR = 126 << 2 = 504.
    #   (Had the flag been cleared first, min(126, 12) = 12 would win: 48.)
    assert c[0]["itr_256ns"] == 40
    assert [r["itr_256ns"] for r in c[1:]] == [504] * 19
    assert c == builtin
    # The terminal table names both moderators and says they agree.
    table = subprocess.run(
        [
            sys.executable,
            "-m",
            "holdoff",
            "replay-trace",
            spec,
            str(tmp_path / "bulk.parquet"),
            "--against",
            "ixgbe:rx_usecs=1",
        ],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "COLUMNS": "200"},
    )
    assert table.returncode == 0, table.stderr
    assert "504" in table.stdout and "differ after 0 of them" in table.stdout


def test_replay_trace_names_a_crash_and_exits_1(tmp_path: Path) -> None:
    bulk_trace_10g(tmp_path / "bulk.parquet")
    write(tmp_path, "crashy.c", CRASH.replace("PER_INTERRUPT", "NAPI_COMPLETE"))
    out = subprocess.run(
        [sys.executable, "-m", "holdoff", "replay-trace", "crashy.c:crashy", "bulk.parquet"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 1
    assert "crashy.c:crashy crashed with SIGSEGV at t=1400000 ns" in out.stderr
