"""Changes during a run (``[[at]]``): the same paths as ``--set``, the CLI, the
result's ``changes`` frame, and the markers of the HTML timeline."""

from __future__ import annotations

import base64
import gzip
import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

import holdoff
from holdoff import _core
from holdoff import sweeps as sw
from holdoff.cli import main
from holdoff.report import ReportInputs, change_labels, write_report
from scenarios import EXAMPLES

AIM_TOGGLE = EXAMPLES / "aim-toggle.toml"
CHROMIUM = Path("/usr/bin/chromium")


def cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def base_doc() -> dict[str, Any]:
    """The example without its ``[[at]]`` tables."""
    doc = tomllib.loads(AIM_TOGGLE.read_text())
    del doc["at"]
    return doc


@pytest.fixture(scope="module")
def toggled() -> holdoff.RunResult:
    return holdoff.run(AIM_TOGGLE)


# Paths of every kind that can change, written as --set and as [[at]].
SAME_PATHS: list[tuple[str, Any]] = [
    ("hosts[0].nics[0].moderation.enable_aim", 2),
    ("hosts[*].nics[*].moderation.enable_aim", 1),
    ("hosts[0].nics[0].moderation", {"kind": "freebsd-aim", "enable_aim": 2}),
    ("hosts[0].tcp.delack_us", 1000),  # no [hosts.tcp] table in the file: created
    ("generators[0].rate_pps", 12345.5),
    ("generators[0].enabled", False),
]


@pytest.mark.parametrize(("path", "value"), SAME_PATHS, ids=[p for p, _ in SAME_PATHS])
def test_set_and_at_paths_mean_the_same(path: str, value: Any) -> None:
    # --set: the Python path on the file's document, then the core's reading.
    doc = base_doc()
    sw.set_path(doc, path, value)
    with_set = _core.normalize_toml(tomli_w.dumps(doc))
    # [[at]] t_ms = 0: the core's path on the scenario, the scenario after it.
    doc = base_doc()
    doc["at"] = [{"t_ms": 0, "set": {path: value}}]
    with_at = _core.normalize_toml_after_changes(tomli_w.dumps(doc))
    assert json.loads(with_at) == json.loads(with_set)


BAD_PATHS: list[tuple[str, Any]] = [
    ("hosts[3].nics[0].moderation.enable_aim", 1),  # index out of range
    ("name.x", 1),  # a string is not a table
    ("hosts[0]..x", 1),  # not a path
    ("generators.rate_pps", 1),  # a list is not a table
]


@pytest.mark.parametrize(("path", "value"), BAD_PATHS, ids=[p for p, _ in BAD_PATHS])
def test_paths_refused_by_set_are_refused_by_at(path: str, value: Any) -> None:
    with pytest.raises(sw.SweepError):
        sw.set_path(base_doc(), path, value)
    doc = base_doc()
    doc["at"] = [{"t_ms": 1, "set": {path: value}}]
    with pytest.raises(_core.ScenarioError) as err:
        _core.validate_toml(tomli_w.dumps(doc))
    assert f'at[0].set."{path}"' in str(err.value)


def test_run_lists_the_changes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "run", AIM_TOGGLE)
    assert code == 0, err
    assert "Changes during the run" in out
    rows = [line for line in out.splitlines() if "moderation.enable_aim" in line]
    assert [row.split()[1] for row in rows] == ["100.000", "200.000", "300.000"]
    assert [row.split()[-2] for row in rows] == ["1", "2", "0"]


def test_validate_names_the_path_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = base_doc()
    doc["at"] = [{"t_ms": 50, "set": {"hosts[0].nics[0].rx_ring": 512}}]
    bad = tmp_path / "bad.toml"
    bad.write_text(tomli_w.dumps(doc))
    code, _, err = cli(capsys, "validate", bad)
    assert code == 2
    assert 'at[0].set."hosts[0].nics[0].rx_ring"' in err
    assert "cannot change during a run" in err


def test_result_changes_frame(toggled: holdoff.RunResult) -> None:
    frame = toggled.changes
    assert list(frame.columns) == ["t_ns", "t_ms", "path", "value"]
    assert frame["t_ms"].tolist() == [100.0, 200.0, 300.0]
    assert frame["value"].tolist() == [1, 2, 0]
    assert set(frame["path"]) == {"hosts[0].nics[0].moderation.enable_aim"}
    # A run without [[at]] has an empty frame and no `changes` in its report.
    plain = holdoff.run(EXAMPLES / "ping.toml")
    assert plain.changes.empty
    assert "changes" not in plain.report


def test_timeline_marks_each_change(toggled: holdoff.RunResult, tmp_path: Path) -> None:
    assert change_labels(toggled) == [
        (100.0, "enable_aim = 1"),
        (200.0, "enable_aim = 2"),
        (300.0, "enable_aim = 0"),
    ]
    path = write_report(tmp_path / "r.html", ReportInputs(runs=[("aim", toggled.report)]))
    text = path.read_text()
    assert "Changes during the run" in text
    # The figures travel gzip-compressed and base64-encoded in the page.
    packed = re.search(r'<script type="application/octet-stream" id="figures-gz">([^<]*)<', text)
    assert packed is not None
    figures = json.loads(gzip.decompress(base64.b64decode(packed.group(1))))["figures"]
    (timeline,) = [
        f for f in figures.values() if f["layout"]["title"]["text"].endswith("timelines")
    ]
    layout = timeline["layout"]
    assert [(s["x0"], s["yref"]) for s in layout["shapes"]] == [
        (100.0, "paper"),
        (200.0, "paper"),
        (300.0, "paper"),
    ]
    labels = [a["text"] for a in layout["annotations"] if a["text"].startswith("enable_aim")]
    assert labels == ["enable_aim = 1", "enable_aim = 2", "enable_aim = 0"]


@pytest.mark.skipif(not CHROMIUM.is_file(), reason="needs Debian's chromium (/usr/bin/chromium)")
def test_timeline_markers_render_in_headless_chromium(
    toggled: holdoff.RunResult, tmp_path: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    path = write_report(tmp_path / "r.html", ReportInputs(runs=[("aim", toggled.report)]))
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(path.as_uri())
            page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
            page.wait_for_function(
                "Array.from(document.querySelectorAll('.js-plotly-plot'))"
                ".some(p => (p.layout.title.text || '').endsWith('timelines')"
                " && p.querySelector('.main-svg'))",
                timeout=30000,
            )
            drawn = page.evaluate(
                """() => Array.from(document.querySelectorAll('.js-plotly-plot'))
                  .filter(p => (p.layout.title.text || '').endsWith('timelines'))
                  .map(p => ({
                    x: p.layout.shapes.map(s => s.x0),
                    lines: p.querySelectorAll('.shapelayer path').length,
                    labels: Array.from(p.querySelectorAll('.annotation-text'))
                      .map(a => a.textContent)
                      .filter(t => t.startsWith('enable_aim'))}))"""
            )
        finally:
            browser.close()
    assert drawn == [
        {
            "x": [100, 200, 300],
            "lines": 3,
            "labels": ["enable_aim = 1", "enable_aim = 2", "enable_aim = 0"],
        }
    ]
