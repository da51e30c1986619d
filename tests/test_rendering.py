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
WARNING = {"field": RADV, "message": "the i210 has no RADV register; the value is ignored"}


@pytest.fixture(scope="module")
def quickstart_report() -> dict[str, Any]:
    data = tomllib.loads(QUICKSTART.read_text())
    data["duration_ms"] = 20
    report: dict[str, Any] = holdoff.run(data).report
    return report


@pytest.fixture(scope="module")
def with_registers(quickstart_report: dict[str, Any]) -> RunResult:
    """A real run's report into which the registers and a warning are inserted.

    The core emits ``summary.warnings`` and ``summary.ports[i].registers`` from
    the integration step on; until then the keys are added here by hand, with
    the values a chip without RADV and with a two-vector EITR would report.
    """
    report = json.loads(json.dumps(quickstart_report))
    report["summary"]["warnings"] = [WARNING]
    ports = report["summary"]["ports"]
    ports[0]["registers"] = {
        "itr_256ns": None,
        "eitr_us": [125, 250],
        "rdtr_1024ns": 0,
        "radv_1024ns": None,
        "tidv_1024ns": 8,
        "tadv_1024ns": 32,
        "ide": False,
    }
    for port in ports[1:]:
        port["registers"] = {
            "itr_256ns": 488,
            "eitr_us": None,
            "rdtr_1024ns": 0,
            "radv_1024ns": 8,
            "tidv_1024ns": 8,
            "tadv_1024ns": 32,
            "ide": True,
        }
    return RunResult.from_report(report, {})


def test_registers_frame(with_registers: RunResult) -> None:
    frame = with_registers.registers
    assert list(frame.columns) == REGISTER_COLUMNS
    first = with_registers.summary["ports"][0]["port"]
    mine = frame[frame["port"] == first].set_index(["register", "vector"], drop=False)
    # Seven registers, EITR one row per vector: 8 rows.
    assert len(mine) == 8
    radv = frame[(frame["port"] == first) & (frame["register"] == "radv_1024ns")].iloc[0]
    assert not radv["in_effect"] and pd.isna(radv["value"])
    eitr = frame[(frame["port"] == first) & (frame["register"] == "eitr_us")]
    assert list(eitr["vector"]) == [0, 1] and list(eitr["value"]) == [125, 250]
    ide = frame[(frame["port"] == first) & (frame["register"] == "ide")].iloc[0]
    assert ide["in_effect"] and ide["value"] == 0
    # The registers are not repeated as columns of the ports frame.
    assert not [c for c in with_registers.ports.columns if c.startswith("registers")]


def test_absent_registers_and_warnings_render_nothing(quickstart_report: dict[str, Any]) -> None:
    plain = RunResult.from_report(quickstart_report, {})
    assert plain.warnings == []
    assert plain.registers.empty and list(plain.registers.columns) == REGISTER_COLUMNS
    text = holdoff.summary_text(plain)
    assert "Registers in effect" not in text and "WARNING" not in text
    html = build_report(ReportInputs(runs=[("plain", plain)]))
    assert 'class="registers"' not in html and 'class="warnings"' not in html


def test_summary_shows_registers_and_every_warning(with_registers: RunResult) -> None:
    assert with_registers.warnings == [WARNING]
    text = holdoff.summary_text(with_registers)
    lines = text.splitlines()
    # The warnings come first, right under the header line.
    assert lines[1].startswith("WARNINGS (1)")
    assert RADV in text and WARNING["message"].split(";")[0] in text
    first, second = (p["port"] for p in with_registers.summary["ports"][:2])
    row = next(line for line in lines if line.startswith(f"│ {first} ") and "—" in line)
    # ITR and RADV absent on this chip, EITR per vector, RDTR 0, TIDV 8, TADV 32, IDE off.
    cells = [c.strip() for c in row.strip("│").split("│")]
    assert cells == [first, "—", "v0 125", "0", "—", "8", "32", "off"]
    other = next(line for line in lines if line.startswith(f"│ {second} ") and "488" in line)
    assert [c.strip() for c in other.strip("│").split("│")] == [
        second, "488", "—", "0", "8", "8", "32", "on"
    ]  # fmt: skip
    assert "not in effect" in text


def test_html_report_shows_registers_and_warnings_near_the_top(with_registers: RunResult) -> None:
    html = build_report(ReportInputs(runs=[("w", with_registers)]))
    warnings_at = html.index('<div class="warnings">')
    assert warnings_at < html.index('<table class="ports">')
    assert RADV in html[warnings_at:] and '<span class="warn">1 warning</span>' in html
    registers = html.split('<table class="registers">', 1)[1].split("</table>", 1)[0]
    assert registers.count("<tr>") == 1 + len(with_registers.summary["ports"])
    assert "v0 125<br>v1 250" in registers
    assert registers.count("—") == 2 + 1 * (len(with_registers.summary["ports"]) - 1)


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
