"""The HTML report: inputs, content, the command line, and rendering in headless Chromium."""

from __future__ import annotations

import html
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

import holdoff
from browser import SKIP_NO_CHROMIUM, chromium_page
from holdoff import reproduce
from holdoff.cli import main
from holdoff.report import ReportInputs, build_report, load_inputs, write_report
from holdoff.sweeps import write_table
from scenarios import QUICKSTART

RATE = "generators[0].rate_pps"


def cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def short_run() -> holdoff.RunResult:
    data = tomllib.loads(QUICKSTART.read_text())
    data["duration_ms"] = 100
    return holdoff.run(data)


@pytest.fixture(scope="module")
def small_sweep() -> Any:
    data = tomllib.loads(QUICKSTART.read_text())
    spec = {
        "name": "small",
        "base": data,
        "set": {"duration_ms": 50},
        "grid": {
            "hosts[0].nics[0].moderation": [
                {"kind": "static", "itr_per_s": 4000},
                {"kind": "e1000-5x"},
            ],
            RATE: [50000, 200000],
        },
    }
    return holdoff.sweep(spec, store=None, executor="serial")


@pytest.fixture(scope="module")
def case_result() -> reproduce.CaseResult:
    return reproduce.run_case(reproduce.load_case("linux-2004-ditr"))


def test_report_shows_runs_sweeps_and_every_miss(
    short_run: holdoff.RunResult, small_sweep: Any, case_result: reproduce.CaseResult
) -> None:
    text = build_report(
        ReportInputs(
            runs=[("short", short_run.report)], sweeps=[("small", small_sweep)], cases=[case_result]
        )
    )
    # Self-contained: no script is loaded from elsewhere, the plotting library is inline once.
    assert not re.search(r"<script[^>]*\ssrc=", text)
    assert text.count('id="plotly-gz"') == 1
    assert text.count('class="plot"') >= 5
    misses = [c for c in case_result.checks if not c.ok]
    plumbing = [c for c in case_result.checks if not c.scored]
    checks_table = text.split('<table class="checks">', 1)[1].split("</table>", 1)[0]
    assert checks_table.count('<span class="miss">MISS</span>') == len(misses)
    assert checks_table.count('<span class="pass">pass</span>') == len(
        [c for c in case_result.checks if c.ok and c.scored]
    )
    # Plumbing checks are shown apart, not as passes.
    assert checks_table.count('<span class="plumbing">plumbing ok</span>') == len(
        [c for c in plumbing if c.ok]
    )
    for check in case_result.checks:
        assert html.escape(reproduce.expected_number(check)) in checks_table
    # The banner counts as the score line does: scored checks only, plumbing apart.
    scored = [c for c in case_result.checks if c.scored]
    scored_misses = [c for c in scored if not c.ok]
    assert f"{len(scored_misses)} of {len(scored)} scored checks MISS" in text
    assert f"{len(case_result.checks)} checks" not in text
    sweep_table = text.split('<table class="sweep-table">', 1)[1].split("</table>", 1)[0]
    assert sweep_table.count("<tr>") == len(small_sweep) + 1
    # Same inputs, same bytes (plot ids are numbered, not random).
    again = build_report(
        ReportInputs(
            runs=[("short", short_run.report)], sweeps=[("small", small_sweep)], cases=[case_result]
        )
    )
    assert again == text


def test_load_inputs_recognises_each_kind(
    tmp_path: Path, short_run: holdoff.RunResult, small_sweep: Any
) -> None:
    short_run.save(tmp_path / "run")
    write_table(small_sweep, tmp_path / "sweep.parquet")
    (tmp_path / "repro.json").write_text(
        json.dumps({"cases": [{"case": "c", "ok": True, "checks": []}]})
    )
    inputs = load_inputs([tmp_path / "run", tmp_path / "sweep.parquet", tmp_path / "repro.json"])
    assert [run.seed for _, run in inputs.runs] == [short_run.seed]
    assert inputs.runs[0][1].to_json() == short_run.to_json()
    assert [name for name, _ in inputs.sweeps] == ["sweep"]
    assert len(inputs.sweeps[0][1]) == len(small_sweep)
    assert [c["case"] for c in inputs.cases] == ["c"]
    # A case from `reproduce --json` has no runs: its tables only, and a pointer to --report.
    text = build_report(inputs)
    assert "Reproduction: c" in text and "need the runs themselves" in text
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(ValueError, match="not a run report"):
        load_inputs([tmp_path / "other.json"])


def test_cli_report_and_reproduce_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, short_run: holdoff.RunResult
) -> None:
    short_run.save(tmp_path / "run")
    code, out, err = cli(capsys, "report", tmp_path / "run", "-o", tmp_path / "r.html")
    assert code == 0, err
    assert out == ""
    assert (tmp_path / "r.html").read_text().startswith("<!DOCTYPE html>")
    code, _, err = cli(capsys, "report", tmp_path / "nothing.json", "-o", tmp_path / "x.html")
    assert code == 2 and "not found" in err

    # The bundled cases have misses: with --strict reproduce exits 1, and the
    # report is written anyway.
    code, out, err = cli(
        capsys,
        "reproduce",
        "--strict",
        "--json",
        "--plots",
        tmp_path,
        "--report",
        tmp_path / "repro.html",
    )
    cases = json.loads(out)["cases"]
    assert code == (0 if all(c["ok"] for c in cases) else 1)
    html_text = (tmp_path / "repro.html").read_text()
    n_miss = sum(1 for c in cases for check in c["checks"] if not check["ok"])
    assert html_text.count('<span class="miss">MISS</span>') == n_miss
    assert "NetPIPE throughput against message size" in html_text


@SKIP_NO_CHROMIUM
def test_report_renders_in_headless_chromium(
    tmp_path: Path,
    short_run: holdoff.RunResult,
    small_sweep: Any,
    case_result: reproduce.CaseResult,
) -> None:
    path = write_report(
        tmp_path / "report.html",
        ReportInputs(
            runs=[("short", short_run.report)], sweeps=[("small", small_sweep)], cases=[case_result]
        ),
    )
    text = path.read_text()
    n_plots = text.count('class="plot"')
    errors: list[str] = []
    external: list[str] = []
    with chromium_page() as page:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))

        def block(route: Any) -> None:
            if not route.request.url.startswith(("file:", "data:", "blob:")):
                external.append(route.request.url)
                route.abort()
            else:
                route.continue_()

        page.route("**/*", block)
        page.goto(path.as_uri())
        sections = page.locator("section > details[open] > summary h2").count()
        closed = page.locator("details:not([open])").count()
        page.wait_for_function(
            "document.querySelectorAll('.js-plotly-plot .main-svg').length > 0",
            timeout=30000,
        )
        drawn_before = page.locator(".js-plotly-plot").count()
        # Unfold everything: the plots inside are drawn on the toggle.
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        page.wait_for_function(
            f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {n_plots}",
            timeout=30000,
        )
        plots = page.locator(".js-plotly-plot")
        assert plots.count() == n_plots
        for i in range(n_plots):
            plot = plots.nth(i)
            assert plot.locator("svg.main-svg").count() >= 1
            assert plot.locator(".scatterlayer .trace").count() >= 1, f"plot {i} has no lines"
        # Every timeline has one legend per subplot.
        legends_per_subplot = page.evaluate(
            """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
              .filter(p => (p.layout.title.text || '').endsWith('timelines'))
              .map(p => [
                Array.from(p.querySelectorAll('g')).filter(
                  g => /^legend\\d*$/.test(g.getAttribute('class') || '')).length,
                p.querySelectorAll('.cartesianlayer .subplot').length])"""
        )
        body = page.inner_text("body")
        checks = page.inner_text("table.checks")
        ports = page.inner_text("table.ports")
        sweep_rows = page.locator("table.sweep-table tbody tr").count()
        scrolls = page.evaluate(
            "getComputedStyle(document.querySelector('table.sweep-table').parentElement).overflowX"
        )
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert errors == []
    assert external == []
    # Key numbers are in the tables.
    assert checks.count("MISS") == sum(1 for c in case_result.checks if not c.ok)
    for check in case_result.checks:
        assert reproduce.expected_number(check) in checks
        assert reproduce.display_number(check.simulated, check.unit) in checks
    for port in short_run.summary["ports"]:
        assert re.search(rf"{re.escape(port['port'])}\s", ports)
        assert f"{port['interrupts']:,}" in ports
    assert sweep_rows == len(small_sweep)
    assert f"injected {short_run.ledger['injected']:,}" in body
    # One folding section per input (case, sweep, run); timelines of case runs start folded.
    assert sections == 3
    assert closed == len(case_result.case.runs)
    assert drawn_before < n_plots
    assert legends_per_subplot and all(n == m and n >= 2 for n, m in legends_per_subplot)
    assert scrolls == "auto"
    shot = tmp_path / "report.png"
    assert shot.stat().st_size > 50_000
