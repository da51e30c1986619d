"""`holdoff battery`: the scorecard against published numbers, its statistics,
failing moderators, resuming from the store and the trace format.

Expected values: the FreeBSD AIM case's published numbers with the case's
own tolerances (read from cases/freebsd-2024-aim/case.toml, not copied);
the Welch interval's closed form; the ping workload's packet counts (ten
echo requests, ten replies); the register-to-rate conversions.
"""

from __future__ import annotations

import json
import math
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

from holdoff.battery_score import welch
from holdoff.cli import main
from holdoff.report.run import decision_rate

ROOT = Path(__file__).resolve().parents[1]
MY_AIM = f"{ROOT / 'examples' / 'moderators' / 'my_aim.py'}:MyAim"
CASE = ROOT / "cases" / "freebsd-2024-aim" / "case.toml"


def battery(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code = main(["battery", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def row(doc: dict[str, Any], workload: str, chip: str, metric: str) -> dict[str, Any]:
    found = [
        r
        for r in doc["rows"]
        if r["workload"] == workload and r["chip"] == chip and r["metric"] == metric
    ]
    assert len(found) == 1, (workload, chip, metric)
    return found[0]["results"]


def case_check(name: str) -> dict[str, Any]:
    checks = tomllib.loads(CASE.read_text())["checks"]
    return next(c for c in checks if c["name"] == name)


def test_ping_and_idle_readback_agree_with_the_published_case(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The acceptance command's ping-idle rows on the case's chip (82546), the
    # workload where the battery and cases/freebsd-2024-aim overlap.
    code, doc, _ = battery(
        capsys, "freebsd-aim:enable_aim=1", "freebsd-aim:enable_aim=2", MY_AIM,
        "--seeds", 5, "--chips", "82546", "--workloads", "ping-idle", "--store", tmp_path,
    )  # fmt: skip
    assert code == 0
    readback = row(doc, "ping-idle", "82546", "b.eth0/readback_per_s")
    for aim in (1, 2):
        check = case_check(f"idle interrupt_rate after ping, enable_aim={aim}")
        got = readback[f"freebsd-aim:enable_aim={aim}"]
        assert got["seeds"] == 5
        assert math.isclose(got["mean"], check["published"], rel_tol=check["tolerance_rel"]), (
            aim,
            got,
        )
    # 'the round trip latency from ping shows significant improvement between
    # enable_aim value 1 and 2': p50 of 2 over 1 below 1.0, and the battery
    # marks the difference as larger than the spread.
    check = case_check("ping RTT p50, enable_aim=2 relative to 1 (lower)")
    assert check["op"] == "lt"
    p50 = row(doc, "ping-idle", "82546", "ping/latency_us_p50")
    one, two = p50["freebsd-aim:enable_aim=1"], p50["freebsd-aim:enable_aim=2"]
    assert two["mean"] / one["mean"] < check["published"]
    assert two["diff"]["marked"] and two["diff"]["ci95"][1] < 0


def test_welch_interval_is_the_closed_form() -> None:
    # a = 1, 2, 3 and b = 4, 5, 6: difference -3, both variances 1, standard
    # error sqrt(1/3 + 1/3); Welch-Satterthwaite df = (2/3)^2 / (2 (1/3)^2 / 2)
    # = 4; t(0.975, 4) = 2.776445 (any t table).
    d = welch([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    half = 2.7764451051977987 * math.sqrt(2 / 3)
    assert d.diff == -3.0
    assert d.lo is not None and d.hi is not None
    assert math.isclose(d.lo, -3.0 - half) and math.isclose(d.hi, -3.0 + half)
    assert d.marked
    # Overlapping samples: the interval holds zero, nothing is marked.
    assert not welch([1.0, 2.0, 3.0], [1.5, 2.5, 3.5]).marked
    # One seed: no interval, never marked.
    assert welch([1.0], [2.0]).lo is None and not welch([1.0], [2.0]).marked


RAISES = """
import holdoff

class Boom(holdoff.Moderator):
    def on_sample(self, s):
        if s.rx_packets + s.tx_packets > 0:
            raise RuntimeError("boom in on_sample")
        return None
"""


def test_a_failing_moderator_is_an_error_cell_the_rest_finishes_and_resumes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "boom.py").write_text(RAISES)
    store = tmp_path / "store"
    args = (
        "freebsd-aim:enable_aim=1", f"{tmp_path / 'boom.py'}:Boom", "--seeds", 2,
        "--chips", "82546", "--workloads", "ping-idle,iperf", "--store", store,
        "--executor", "serial",
    )  # fmt: skip
    code, doc, _ = battery(capsys, *args)
    assert code == 1
    boom = f"{tmp_path / 'boom.py'}:Boom"
    cell = row(doc, "iperf", "82546", "iperf.receiver/throughput_bps")[boom]
    assert "error" in cell and boom in cell["error"] and "boom in on_sample" in cell["error"]
    assert any("boom in on_sample" in e for e in doc["errors"])
    # The baseline's 2 workloads x 2 seeds finished and are stored; the
    # failed runs are not.
    assert doc["runs"] == {"computed": 8, "stored": 0}
    assert len(list(store.rglob("*.parquet"))) == 4
    base = row(doc, "iperf", "82546", "iperf.receiver/throughput_bps")["freebsd-aim:enable_aim=1"]
    assert base["seeds"] == 2
    # The same command again: the four stored runs are read back, the failed
    # ones tried again.
    code, doc, _ = battery(capsys, *args)
    assert code == 1
    assert doc["runs"] == {"computed": 4, "stored": 4}


CRASHES = """#include "kernel_shim.h"
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


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) to build C moderators")
def test_a_c_moderator_that_crashes_is_an_error_cell_the_rest_finishes_and_resumes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Issue 32: a null dereference in C ends that run only (it runs in a child
    # process), with an error naming the file, the function and the signal;
    # the baseline's runs finish and are stored, the exit status is 1.
    (tmp_path / "crashy.c").write_text(CRASHES)
    store = tmp_path / "store"
    spec = f"{tmp_path / 'crashy.c'}:crashy"
    args = (
        "freebsd-aim:enable_aim=1", spec, "--seeds", 2, "--chips", "82546",
        "--workloads", "ping-idle,iperf", "--store", store, "--executor", "serial",
    )  # fmt: skip
    code, doc, _ = battery(capsys, *args)
    assert code == 1
    cell = row(doc, "iperf", "82546", "iperf.receiver/throughput_bps")[spec]
    assert "error" in cell and "crashy.c:crashy crashed with SIGSEGV" in cell["error"]
    assert len(list(store.rglob("*.parquet"))) == 4
    base = row(doc, "iperf", "82546", "iperf.receiver/throughput_bps")["freebsd-aim:enable_aim=1"]
    assert base["seeds"] == 2
    code, doc, _ = battery(capsys, *args)
    assert code == 1
    assert doc["runs"] == {"computed": 4, "stored": 4}


def test_a_moderator_that_does_not_fit_a_chip_is_skipped_with_the_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, doc, _ = battery(
        capsys, "e1000-5x", "--seeds", 1, "--chips", "82546,i210", "--workloads", "ping-idle",
        "--no-store", "--executor", "serial",
    )  # fmt: skip
    assert code == 0
    cells = row(doc, "ping-idle", "i210", "ping/latency_us_p50")
    assert "ITR" in cells["e1000-5x"]["skipped"] and "i210" in cells["e1000-5x"]["skipped"]
    assert any("e1000-5x on the i210" in s for s in doc["skipped"])
    assert "mean" in row(doc, "ping-idle", "82546", "ping/latency_us_p50")["e1000-5x"]


def test_trace_parquet_has_the_replay_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    code, doc, _ = battery(
        capsys, "freebsd-aim:enable_aim=1", "--seeds", 1, "--chips", "82546",
        "--workloads", "ping-idle", "--no-store", "--trace", "--out", out,
        "--executor", "serial", "--html", tmp_path / "battery.html",
    )  # fmt: skip
    assert code == 0
    page = (tmp_path / "battery.html").read_text()
    assert 'aria-label="ping-idle on the 82546: decisions on the timeline (seed 1)"' in page
    (path,) = map(Path, doc["traces"])
    table = pq.read_table(path)
    assert table.schema.field("workload").type == pa.string()
    for name in ("vector", "t_ns", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes"):
        assert table.schema.field(name).type == pa.int64()
    assert table.schema.field("interrupts").type == pa.int64()
    meta = json.loads(table.schema.metadata[b"holdoff.trace"])
    assert meta == {
        "version": 1, "chip": "82546", "link_mbps": 1000, "throttle": "Itr256ns",
        "hz": 1000, "vectors": 1,
    }  # fmt: skip
    rows = table.to_pylist()
    assert {r["workload"] for r in rows} == {"ping-idle"}
    # b.eth0 receives the ten echo requests and sends the ten replies, one a
    # second: each request raises an RX interrupt and each reply's
    # completion a TX interrupt (FreeBSD AIM is called at every interrupt,
    # and the idle second between pings leaves nothing pending), so the
    # samples hold 20 calls, one interrupt each, and add up to 10 and 10.
    assert len(rows) == 20
    assert sum(r["rx_packets"] for r in rows) == 10
    assert sum(r["tx_packets"] for r in rows) == 10
    assert all(r["interrupts"] == 1 and r["vector"] == 0 for r in rows)
    assert [r["t_ns"] for r in rows] == sorted(r["t_ns"] for r in rows)
    assert (out / "scorecard.json").is_file()


def test_python_moderator_decisions_become_rates() -> None:
    # A Python moderator's trace row holds the registers it returned: ITR in
    # 256 ns (195 -> 1e9 / (195 * 256) = 20032/s), EITR in us (50 -> 20000/s).
    assert decision_rate({"itr_256ns": 195}) == pytest.approx(1e9 / (195 * 256))
    assert decision_rate({"eitr_us": 50}) == pytest.approx(20_000)
    assert decision_rate({"rate_per_s": 4000, "itr_256ns": 976}) == 4000
    assert decision_rate({"itr_256ns": 0}) is None
    assert decision_rate({"rdtr_1024ns": 8}) is None


def test_bad_inputs_name_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, flag in (
        (["battery", "static", "--chips", "82598"], "--chips"),
        (["battery", "static", "--workloads", "nope"], "--workloads"),
        (["battery", "static", "--baseline", "igb"], "--baseline"),
        (["battery", "static", "static"], "twice"),
    ):
        assert main(argv) == 2, argv
        assert flag in capsys.readouterr().err


def test_a_python_moderators_decisions_are_drawn_on_the_run_timeline() -> None:
    # examples/python_moderator.py: HalfRate returns {"itr_256ns": 976 or 195}
    # at every interrupt; its trace rows hold those registers and no
    # rate_per_s, and each becomes a marker at 1e9 / (976 * 256) = 4002/s or
    # 1e9 / (195 * 256) = 20032/s.
    import importlib.util

    import holdoff
    from holdoff.report.page import Doc
    from holdoff.report.run import timeline

    path = ROOT / "examples" / "python_moderator.py"
    spec = importlib.util.spec_from_file_location("python_moderator_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    scenario = {**example.SCENARIO, "duration_ms": 20}
    result = holdoff.run(scenario, moderators={"half": example.HalfRate})
    doc = Doc()
    timeline(doc, result, "py")
    (figure,) = doc._figures.values()
    marks = [t for t in figure["data"] if t.get("name") == "dut.eth0 decisions"]
    assert len(marks) == 1
    rates = {round(y) for y in marks[0]["y"]}
    assert rates <= {4002, 20032} and rates


def test_a_stopped_battery_keeps_its_finished_runs_and_resumes(tmp_path: Path) -> None:
    # Ctrl-C arrives (here: raised from the progress callback) after the
    # third finished run: those three are in the store, the exception says
    # how many finished and how many are left, and the next run of the same
    # plan reads the three back and computes only the rest.
    from holdoff import battery as bt
    from holdoff import battery_run as br
    from holdoff.store import ResultStore

    def plan() -> br.Plan:
        cand = br.resolve("freebsd-aim:enable_aim=1", ROOT)
        return br.plan([cand], ["82546"], [bt.WORKLOADS["ping-idle"]], 5)

    store = ResultStore(tmp_path / "store")

    def stop(done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        br.run_plan(plan(), store, executor="serial", progress=stop)
    assert (info.value.finished, info.value.remaining) == (3, 2)  # type: ignore[attr-defined]
    assert len(store) == 3
    again = plan()
    assert br.run_plan(again, store, executor="serial") == (2, 3)
    (cell,) = again.cells.values()
    assert sorted(cell.records) == [1, 2, 3, 4, 5]


def test_the_terminal_scorecard_fits_80_columns_without_cutting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Long moderator names become column letters with a legend; numbers are
    # never cut with an ellipsis (holdoff.termtable), at 80 columns too.
    monkeypatch.setenv("COLUMNS", "80")
    code = main(
        ["battery", "freebsd-aim:enable_aim=1", MY_AIM, "--seeds", "2", "--chips", "82546",
         "--workloads", "ping-idle,iperf", "--no-store", "--executor", "serial"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "…" not in out
    table_lines = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and all(len(line) <= 80 for line in table_lines)
    assert f"B = {MY_AIM}" in out
    # The ping row: A's mean, B's mean and, under it, B minus A.
    assert "ping RTT p50 [us]" in out
