"""Rendering: the tables the terminal summary and the HTML report share, registers in
effect and warnings, plot helpers, and the package's import structure."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import holdoff
from holdoff import tables
from holdoff.report import ReportInputs, build_report, downsample, y_axis
from holdoff.result import REGISTER_COLUMNS, RunResult
from scenarios import QUICKSTART

PACKAGE = Path(holdoff.__file__).resolve().parent
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))


# -- import structure ---------------------------------------------------------------


def _imports(module: str) -> set[str]:
    """The package's own modules that ``module`` imports (anywhere in the file)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse((PACKAGE / f"{module}.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "holdoff":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("holdoff."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[1] for a in node.names if a.name.startswith("holdoff.")}
    return found & set(MODULES)


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
    # the rendering model depends on no other module of the package.
    assert graph["tables"] == set()
    assert graph["summary"] == {"tables"}
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
