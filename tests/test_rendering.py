"""Rendering: the tables the terminal summary and the HTML report share, registers in
effect and warnings, plot helpers, and the package's import structure."""

from __future__ import annotations

import ast
import io
import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from rich.console import Console
from rich.table import Table

import holdoff
from holdoff import tables
from holdoff.cli import main
from holdoff.report import ReportInputs, build_report, downsample, y_axis
from holdoff.result import REGISTER_COLUMNS, RunResult
from holdoff.termtable import Fitted
from scenarios import EXAMPLES, QUICKSTART, inline_scenario

PACKAGE = Path(holdoff.__file__).resolve().parent
# The package's modules and its sub-packages (cli, knobs, report, tune), each
# sub-package one node of the import graph.
MODULES = sorted(
    [p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__")]
    + [p.parent.name for p in PACKAGE.glob("*/__init__.py")]
)


def _sources(module: str) -> list[Path]:
    folder = PACKAGE / module
    return sorted(folder.glob("*.py")) if folder.is_dir() else [PACKAGE / f"{module}.py"]


# -- import structure ---------------------------------------------------------------


def _imports(module: str) -> set[str]:
    """The package's own modules that ``module`` imports (anywhere in the file)."""
    found: set[str] = set()
    nodes = (n for f in _sources(module) for n in ast.walk(ast.parse(f.read_text())))
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "holdoff":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("holdoff."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("holdoff.")}
    return (found & set(MODULES)) - {module}


def test_package_has_no_import_cycles() -> None:
    # Every import counts, also those inside functions and under TYPE_CHECKING:
    # a cycle that only a lazy import hides is still a cycle in the design.
    graph = {module: _imports(module) for module in MODULES}
    cycles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        for dep in sorted(graph[module]):
            if dep in path:
                cycles.append([*path[path.index(dep) :], dep])
            elif len(path) < len(MODULES):
                visit(dep, [*path, dep])

    for module in MODULES:
        visit(module, [module])
    assert cycles == []
    # The layering the tables rely on: results render their own summary, and
    # the rendering model depends on no other module of the package but the
    # leaf that escapes names for printing (inputs imports none of ours).
    assert graph["inputs"] == set() and graph["termtable"] == set()
    assert graph["tables"] <= {"inputs"}
    assert graph["summary"] <= {"tables", "termtable", "inputs"}
    assert "summary" in graph["result"]


@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports_on_its_own(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import holdoff.{module}"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


# -- registers in effect and warnings -----------------------------------------------

RADV = "hosts[0].nics[0].moderation.radv_1024ns"

# Two ports of one host: an i210 (igb class; its register map has EITR as the
# only moderation register, no ITR, RADV or TADV) and an 82546 (8254x: ITR
# and all four delay timers), both given RADV = 64. Expected from the maps:
# the i210 drops RADV (one warning naming the field), the 82546 holds it
# (RDTR is non-zero, so RADV can act) and warns about nothing.
TWO_CHIPS: dict[str, Any] = {
    "name": "two-chips",
    "seed": 1,
    "duration_ms": 20,
    "hosts": [
        {
            "name": "dut",
            "profile": "xeon-modern",
            "driver": "napi",
            "nics": [
                {
                    "name": "eth0",
                    "chip": "i210",
                    "moderation": {"kind": "static", "eitr_us": 125, "radv_1024ns": 64},
                },
                {
                    "name": "eth1",
                    "chip": "82546",
                    "moderation": {
                        "kind": "static",
                        "itr_256ns": 488,
                        "rdtr_1024ns": 8,
                        "radv_1024ns": 64,
                    },
                },
            ],
        }
    ],
    "generators": [
        {"name": f"g{i}", "pattern": "constant", "rate_pps": 50000, "frame_bytes": 64}
        for i in range(2)
    ],
    "links": [
        {"a": "g0", "b": "dut.eth0", "rate": "1G"},
        {"a": "g1", "b": "dut.eth1", "rate": "1G"},
    ],
    "apps": [{"kind": "udp_sink", "name": "sink", "host": "dut"}],
}


@pytest.fixture(scope="module")
def quickstart_report() -> dict[str, Any]:
    data = tomllib.loads(QUICKSTART.read_text())
    data["duration_ms"] = 20
    report: dict[str, Any] = holdoff.run(data).report
    return report


@pytest.fixture(scope="module")
def with_registers() -> RunResult:
    return holdoff.run(TWO_CHIPS)


def test_registers_frame(with_registers: RunResult) -> None:
    frame = with_registers.registers
    assert list(frame.columns) == REGISTER_COLUMNS
    i210 = frame[frame["port"] == "dut.eth0"].set_index("register")
    # Eight registers, one EITR vector (MSI-X, one queue): 8 rows.
    assert len(i210) == 8
    assert not i210.loc["radv_1024ns", "in_effect"] and pd.isna(i210.loc["radv_1024ns", "value"])
    assert not i210.loc["itr_256ns", "in_effect"]
    assert i210.loc["eitr_us", "value"] == 125 and i210.loc["eitr_us", "in_effect"]
    # MSI-X bypasses the delay timers: RDTR is held (0) but not in effect.
    assert i210.loc["rdtr_1024ns", "value"] == 0 and not i210.loc["rdtr_1024ns", "in_effect"]
    e1000 = frame[frame["port"] == "dut.eth1"].set_index("register")
    assert e1000.loc["itr_256ns", "value"] == 488
    assert e1000.loc["radv_1024ns", "value"] == 64 and e1000.loc["radv_1024ns", "in_effect"]
    # The registers are not repeated as columns of the ports frame.
    assert not [c for c in with_registers.ports.columns if c.startswith("registers")]


def test_absent_registers_and_warnings_render_nothing(quickstart_report: dict[str, Any]) -> None:
    # A report written before the core emitted registers and warnings.
    old = json.loads(json.dumps(quickstart_report))
    old["summary"].pop("warnings")
    for port in old["summary"]["ports"]:
        port.pop("registers")
    plain = RunResult.from_report(old, {})
    assert plain.warnings == []
    assert plain.registers.empty and list(plain.registers.columns) == REGISTER_COLUMNS
    text = holdoff.summary_text(plain)
    assert "Registers in effect" not in text and "WARNING" not in text
    html = build_report(ReportInputs(runs=[("plain", plain)]))
    assert 'class="registers"' not in html and 'class="warnings"' not in html


def test_summary_shows_registers_and_every_warning(with_registers: RunResult) -> None:
    assert [w["field"] for w in with_registers.warnings] == [RADV]
    text = holdoff.summary_text(with_registers)
    lines = text.splitlines()
    # The warnings come first, right under the header line.
    assert lines[1].startswith("WARNINGS (1)")
    assert RADV in text
    row = next(line for line in lines if line.startswith("│ dut.eth0 ") and "—" in line)
    cells = [c.strip() for c in row.strip("│").split("│")]
    # ITR, EITR[256 ns] absent; EITR 125 us; RDTR held but bypassed (MSI-X);
    # RADV, TIDV, TADV and the IDE bit absent on the i210 (its transmit
    # registers go from TDT to TXDCTL; advanced descriptors have no IDE).
    assert cells == ["dut.eth0", "—", "—", "125", "0 (held)", "—", "—", "—", "—"]
    other = next(line for line in lines if line.startswith("│ dut.eth1 ") and "488" in line)
    cells = [c.strip() for c in other.strip("│").split("│")]
    assert cells[:6] == ["dut.eth1", "488", "—", "—", "8", "64"]
    assert "not in effect" in text


def test_html_report_shows_registers_and_warnings_near_the_top(with_registers: RunResult) -> None:
    html = build_report(ReportInputs(runs=[("w", with_registers)]))
    warnings_at = html.index('<div class="warnings">')
    assert warnings_at < html.index('<table class="ports">')
    assert RADV in html[warnings_at:] and '<span class="warn">1 warning</span>' in html
    registers = html.split('<table class="registers">', 1)[1].split("</table>", 1)[0]
    assert registers.count("<tr>") == 1 + len(with_registers.summary["ports"])


def test_summary_and_report_share_the_tables(with_registers: RunResult) -> None:
    """Both renderings show every table of :func:`tables.run_tables` with the same headers."""
    text = holdoff.summary_text(with_registers, width=200)
    html = build_report(ReportInputs(runs=[("w", with_registers)]))
    for table in tables.run_tables(with_registers):
        assert table.title in text and f"<h3>{table.title}</h3>" in html
        for header in table.headers:
            for part in header.split("\n"):
                assert part in text
                assert part in html


# -- plot helpers -------------------------------------------------------------------


def test_downsample_keeps_spikes_and_bounds_the_size() -> None:
    n = 100_000
    x = [float(i) for i in range(n)]
    y: list[float | None] = [1.0] * n
    y[12_345] = 50.0  # one spike
    y[70_001] = -3.0  # one dip
    xs, ys = downsample(x, y, limit=2000)
    assert len(xs) == len(ys) <= 2000 + 2
    assert 50.0 in ys and -3.0 in ys
    assert xs == sorted(xs)
    assert xs[ys.index(50.0)] == 12_345.0
    # Short series are left as they are.
    assert downsample([1.0, 2.0], [3.0, None]) == ([1.0, 2.0], [3.0, None])


def test_y_axis_does_not_magnify_flat_signals() -> None:
    # A static 8000/s throttle with sampling noise: the axis starts at zero
    # instead of spanning 8004..8005.5.
    assert y_axis([8004.0, 8005.5, 8004.2]) == {"rangemode": "tozero"}
    # A flat negative signal is padded by 10 % of its level (100.5) on each side.
    assert y_axis([-100.0, -100.5])["range"] == pytest.approx([-100.5 - 10.05, -100.0 + 10.05])
    # Three decades on a log axis when asked for.
    assert y_axis([10.0, 10_000.0], log_ratio=30)["type"] == "log"
    assert y_axis([None, float("nan")]) == {}


# -- every number whole, at 80 and 200 columns and piped ------------------------------
#
# The text a command prints is a rendering of what its --json prints, so every
# number the JSON holds for the text must appear in the text whole: formatted
# the way the text formats it, not touching another digit, and never next to
# rich's "…" (how rich cuts a cell that does not fit). "pipe" is stdout
# redirected with no COLUMNS: output as wide as it needs.

WIDTHS = ["80", "200", "pipe"]


def _whole(number: str, text: str) -> bool:
    return re.search(rf"(?<![\d.,]){re.escape(number)}(?!\d|[.,]\d)", text) is not None


def _assert_whole(numbers: Iterable[str], text: str) -> None:
    missing = sorted({n for n in numbers if not _whole(n, text)})
    assert not missing, f"numbers not shown whole: {missing}\n{text}"
    assert not re.search(r"\d…|…\d", text), text


def _cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: str, *argv: object
) -> str:
    if width == "pipe":
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", width)
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    if width != "pipe":
        # Every table line fits the width (trailing blanks aside).
        lines = [line.rstrip() for line in out.splitlines() if re.search("[│┃━─]", line)]
        assert max(map(len, lines), default=0) <= int(width), out
    return out


def _run_numbers(report: dict[str, Any]) -> set[str]:
    """The run's numbers as the summary formats them (counts with thousands
    separators, Mb/s and percentages two and one decimals, µs one decimal)."""
    s = report["summary"]
    nums = set()
    for port in s["ports"]:
        nums |= {f"{port[k]:,}" for k in ("rx_packets", "tx_packets", "interrupts")}
        nums.add(f"{port['rx_ring_max_occupancy']:,}")
        nums |= {f"{round(v['interrupts_per_s']):,}" for v in port["vectors"]}
    for host in s["hosts"]:
        nums |= {f"{100 * v:.1f}" for v in host["cpu_util"].values()}
    for app in s["apps"]:
        # A counter the core keeps is non-zero; 0 is what it holds for the others.
        nums |= {f"{app[k]:,}" for k in ("sent", "received", "rx_bytes", "tx_bytes") if app[k]}
        if app["throughput_bps"]:
            nums.add(f"{app['throughput_bps'] / 1e6:,.2f}")
        for latency in (app["latency_us"], (app.get("latency_selected") or {}).get("latency_us")):
            if latency:
                nums.add(f"{latency['count']:,}")
                nums |= {f"{latency[p]:,.1f}" for p in ("p50", "p99", "max")}
        if app.get("rpc_open"):
            load = app["rpc_open"]
            nums |= {f"{load[k]:,.1f}" for k in ("offered_rps", "achieved_rps")}
            nums |= {f"{load[k]:,}" for k in ("issued", "completed", "dropped", "outstanding")}
        elif app["transactions"]:
            nums.add(f"{app['transactions'] / (s['sim_time_ns'] / 1e9):,.1f}")
        for point in app.get("netpipe") or []:
            nums |= {f"{point['bytes']:,}", f"{point['nrepeat']:,}"}
            nums |= {f"{point['t_us']:,.2f}", f"{point['mbit_per_s']:,.2f}"}
    for gen in s["generators"]:
        nums |= {f"{gen[k]:,}" for k in ("sent_packets", "sent_bytes", "rx_packets")}
        nums.add(f"{gen['offered_bps'] / 1e6:,.2f}")
    nums |= {f"{s['ledger'][k]:,}" for k in ("injected", "delivered", "dropped", "in_flight")}
    # TCP: each counter summed over an application's connections, per side.
    sums: dict[tuple[str, str, str], int] = {}
    for conn in s.get("tcp") or []:
        for side in conn["sides"]:
            for key in ("segs_out", "retransmits", "timeouts", "tsq_throttles"):
                if key in side:
                    where = (conn["app"], side["host"], key)
                    sums[where] = sums.get(where, 0) + side[key]
    nums |= {f"{n:,}" for n in sums.values()}
    return nums


# Short runs of every bundled example: what each is about happens in them.
SHORT = {
    "netpipe-ditr.toml": ["duration_ms=5000", "apps[0].start_us=0", "apps[0].end_bytes=64"],
    "bench-64b-1g-itr8000-napi.toml": ["duration_ms=20"],
    "bench-64b-1g-itr8000-napi-poisson.toml": ["duration_ms=20"],
    "tsq-tx-usecs.toml": ["duration_ms=50"],
    "ping.toml": ["duration_ms=200"],
    "quickstart.toml": ["duration_ms=50"],
    "udp-sink-poisson.toml": ["duration_ms=50"],
    # Small frames' latency apart (a replay's latency_of selector).
    "replay-office.toml": ["generators[0].latency_of={ size = [64, 300] }"],
}
RUNNABLE = sorted(
    p.name for p in EXAMPLES.glob("*.toml") if "base" not in tomllib.loads(p.read_text())
)


@pytest.mark.parametrize("example", RUNNABLE)
def test_run_prints_every_number_whole(
    example: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv: list[object] = ["run", EXAMPLES / example]
    for assignment in SHORT.get(example, []):
        argv += ["--set", assignment]
    report = json.loads(_cli(capsys, monkeypatch, "pipe", *argv, "--json"))
    numbers = _run_numbers(report)
    if example == "netpipe-ditr.toml":
        assert report["summary"]["apps"][0]["netpipe"], "the short NetPIPE run has points"
        numbers.add("NetPIPE points")
    # What each latency measures, in words (docs/outputs.md).
    means = {"udp_sink": "one way", "ping": "round trip", "rpc": "transaction"}
    means["rpc_open"] = "intended send time"
    said = [means[a["kind"]] for a in report["summary"]["apps"] if a["latency_us"]]
    for width in WIDTHS:
        out = _cli(capsys, monkeypatch, width, *argv)
        _assert_whole(numbers, out)
        # The examples' names hold no control characters: an escaped one would
        # be a cell's own line break (one line per vector) shown as text.
        assert "\\n" not in out, out
        flat = " ".join(out.split())
        assert all(words in flat for words in said), out
        if any(a["transactions"] for a in report["summary"]["apps"]):
            assert "trans/s" in out


def test_reproduce_prints_every_number_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from holdoff import reproduce as rp

    argv = ["reproduce", "freebsd-2024-aim", "--plots", tmp_path]
    data = json.loads(_cli(capsys, monkeypatch, "pipe", *argv, "--json"))
    checks = [c for case in data["cases"] for c in case["checks"]]
    numbers = {
        rp.display_number(c[k], c["unit"]) for c in checks for k in ("published", "simulated")
    }
    names = {c["name"] for c in checks}
    for width in WIDTHS:
        out = _cli(capsys, monkeypatch, width, *argv)
        _assert_whole(numbers, out)
        # Every check is named: each word of its name is there (a name may wrap).
        words = set(re.split(r"[\s│┃]+", out))
        assert all(set(n.split()) <= words for n in names), out


def test_tune_prints_every_number_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["tune", "--mix", "rr", "-d", "linux-igb", "--knob", "rx-usecs", "--duration-ms", 5]
    argv += ["--no-store", "--executor", "serial"]
    data = json.loads(_cli(capsys, monkeypatch, "pipe", *argv, "--json"))
    values = []
    for point in (data["default"], data["recommended"]):
        values += [point["p50_us"], point["p99_us"], 100 * point["cpu_util"]]
        values += [point["interrupts_per_s"], point["throughput_bps"] / 1e6]
    for width in WIDTHS:
        out = _cli(capsys, monkeypatch, width, *argv)
        # Each value whole at one of the precisions the table prints (0 to 2 decimals).
        shown = [v for v in values if any(_whole(f"{v:,.{d}f}", out) for d in (0, 1, 2))]
        assert shown == values, out
        _assert_whole([], out)


def test_explain_prints_every_number_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["explain", "-d", "linux-igb", EXAMPLES / "explain" / "igb-rx-usecs-50.json"]
    data = json.loads(_cli(capsys, monkeypatch, "pipe", *argv, "--json"))
    numbers = {f"{r['value']:,}" for r in data["registers"]}
    numbers |= {f"{r['interval_us']:g}" for r in data["registers"]}
    numbers.add(f"{data['max_interrupts_per_s_per_vector']:,.0f}")
    for width in WIDTHS:
        _assert_whole(numbers, _cli(capsys, monkeypatch, width, *argv))


def test_results_prints_every_number_whole(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "base.toml").write_text(inline_scenario(duration_ms=5))
    sweep = tmp_path / "s.toml"
    sweep.write_text(
        'name = "w"\nbase = "base.toml"\n[grid]\n"generators[0].rate_pps" = [1000, 3000]\n'
    )
    store = tmp_path / "store"
    _cli(capsys, monkeypatch, "pipe", "sweep", sweep, "--store", store, "-o", tmp_path / "t.pq")
    rows = json.loads(_cli(capsys, monkeypatch, "pipe", "results", "--store", store, "--json"))
    numbers = {str(row["seed"]) for row in rows}
    numbers |= {f"{row['interrupts_per_s_total']:,.0f}" for row in rows}
    numbers |= {f"{row['throughput_bps_total'] / 1e6:,.2f}" for row in rows}
    numbers |= {f"{row['latency_us_p99_max']:,.1f}" for row in rows}
    for width in WIDTHS:
        _assert_whole(numbers, _cli(capsys, monkeypatch, width, "results", "--store", store))


# -- the fitting itself ---------------------------------------------------------------


def _fit_text(table: Table, width: int) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, no_color=True, force_terminal=False)
    console.print(Fitted(table))
    return buffer.getvalue()


def test_fitted_table_wraps_names_then_stacks() -> None:
    table = Table(title="t")
    table.add_column("name")
    table.add_column("packets", justify="right")
    table.add_row("a rather long name that can wrap at its spaces", "149,024,117")
    # Natural width: 64 columns (name 47, number 11, padding 4, borders 3).
    assert "149,024,117" in _fit_text(table, 64)
    narrow = _fit_text(table, 40)
    assert "149,024,117" in narrow and "a rather long" in narrow
    assert max(len(line) for line in narrow.splitlines()) <= 40
    # Without borders it needs 20 columns (11 + 6, the longest word "rather",
    # + 2 padding + 1 rule), without the blanks beside the rule 18; below that
    # it stacks.
    assert "│ 149,024,117" in _fit_text(table, 20)
    assert "│149,024,117" in _fit_text(table, 18)
    stacked = " ".join(_fit_text(table, 17).split())
    assert "packets: 149,024,117" in stacked and "name: a rather long" in stacked


def test_names_from_the_scenario_are_printed_with_control_characters_escaped() -> None:
    data = tomllib.loads(QUICKSTART.read_text())
    data["duration_ms"] = 5
    data["name"] = "q\x07s"
    data["apps"][0]["name"] = "si\x1b[2Jnk\nforged line"
    text = holdoff.summary_text(holdoff.run(data))
    # No bell, no escape sequence, and the newline cannot start a line of its own.
    assert "\x07" not in text and "\x1b" not in text
    assert "scenario q\\x07s" in text and "si\\x1b[2Jnk\\nforged line" in text
    assert not any(line.startswith("forged line") for line in text.splitlines())
