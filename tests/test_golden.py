"""Golden results: the model's output for every bundled scenario, pinned.

Every example scenario (sweep files aside) and every scenario of every bundled
reproduction case is run with its own seed. Its JSON report, serialised
canonically (sorted keys, the ``holdoff_version`` field removed), is hashed
with SHA-256 and compared with ``tests/golden/reports.json``; the report's
``summary`` section is also kept in full under ``tests/golden/summaries/`` so
that a change can be read, not only detected. ``holdoff reproduce --json`` is
pinned by its numbers (case, check, run, published, simulated, pass), which is
what a reader of the score relies on; wording is not pinned.

These files change only on purpose: a commit that changes the model's results
regenerates them with ``HOLDOFF_BLESS=1 pytest tests/test_golden.py`` and says
in its message which mechanism changed which numbers. A refactor must leave
them byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

import holdoff
from holdoff import reproduce
from holdoff.api import run_text

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
BLESS = os.environ.get("HOLDOFF_BLESS") == "1"


def _scenario_files() -> list[Path]:
    files = sorted((ROOT / "examples").glob("*.toml"))
    files += sorted((ROOT / "python" / "holdoff" / "cases").glob("*/*.toml"))
    out = []
    for f in files:
        if f.name == "case.toml":
            continue
        if "\nbase" in "\n" + f.read_text() or "[base]" in f.read_text():
            continue  # a sweep file, not a scenario
        out.append(f)
    return out


def _name(f: Path) -> str:
    rel = f.relative_to(ROOT)
    parts = rel.parts
    if parts[0] == "examples":
        return "examples/" + f.stem
    return "cases/" + parts[-2] + "/" + f.stem


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def _report_digest(report: dict[str, Any]) -> str:
    pinned = {k: v for k, v in report.items() if k != "holdoff_version"}
    return hashlib.sha256(_canonical(pinned).encode()).hexdigest()


def _load(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


def _write(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, sort_keys=True, indent=1) + "\n")


SCENARIOS = _scenario_files()


def test_golden_covers_every_bundled_scenario() -> None:
    # The list is built from the folders, so a new example is pinned as soon
    # as it is blessed; an unblessed one fails the test below.
    assert len(SCENARIOS) >= 20
    names = {_name(f) for f in SCENARIOS}
    assert "examples/quickstart" in names
    assert "cases/linux-2004-ditr/ditr" in names


@pytest.mark.parametrize("path", SCENARIOS, ids=_name)
def test_report_is_golden(path: Path) -> None:
    name = _name(path)
    report = holdoff.run(path).report
    digest = _report_digest(report)
    digests_path = GOLDEN / "reports.json"
    summary_path = GOLDEN / "summaries" / (name.replace("/", "__") + ".json")
    if BLESS:
        digests = _load(digests_path) or {}
        digests[name] = digest
        _write(digests_path, digests)
        _write(summary_path, report["summary"])
        return
    digests = _load(digests_path) or {}
    assert name in digests, (
        f"{name} has no golden digest: bless it with HOLDOFF_BLESS=1 pytest tests/test_golden.py"
    )
    expected_summary = _load(summary_path)
    # The summary first: its diff says what changed.
    assert json.loads(_canonical(report["summary"])) == expected_summary, (
        f"{name}: the summary differs from tests/golden/summaries (a behaviour change)"
    )
    assert digest == digests[name], (
        f"{name}: the report (time series or histograms) differs from its golden digest"
    )


def _run_without_variance(path: Path) -> dict[str, Any]:
    """The scenario at ``path`` run with every host's ``variance = "none"``."""
    doc = tomllib.loads(path.read_text())
    for h in doc.get("hosts", []):
        h["variance"] = "none"
    report: dict[str, Any] = run_text(tomli_w.dumps(doc), base_dir=path.parent).report
    # The report echoes the scenario: drop the added key, so that the digest
    # is comparable with reports.json.
    for h in report["config"]["hosts"]:
        del h["variance"]
    return report


@pytest.mark.parametrize("path", SCENARIOS, ids=_name)
def test_report_without_variance_is_golden(path: Path) -> None:
    # Service-time variance (host::variance) switched off on every host must
    # give the results the model gave before variance existed: these digests
    # were blessed when every profile's variance was "none" (then equal to
    # reports.json) and stay as they are when the profiles gain variance.
    name = _name(path)
    digest = _report_digest(_run_without_variance(path))
    digests_path = GOLDEN / "novariance.json"
    if BLESS:
        digests = _load(digests_path) or {}
        digests[name] = digest
        _write(digests_path, digests)
        return
    digests = _load(digests_path) or {}
    assert name in digests, f"{name} has no no-variance digest: bless it"
    assert digest == digests[name], (
        f"{name}: with variance none the report differs from the model without variance"
    )


def _reproduce_numbers() -> list[dict[str, Any]]:
    results = [reproduce.run_case(reproduce.load_case(c)) for c in reproduce.list_cases()]
    rows: list[dict[str, Any]] = []
    for case in reproduce.to_json(results)["cases"]:
        for c in case["checks"]:
            rows.append(
                {
                    "case": case["case"],
                    "check": c["name"],
                    "run": c.get("run"),
                    "published": c.get("published"),
                    "simulated": c.get("simulated"),
                    "ok": c.get("ok"),
                }
            )
    return rows


def test_reproduce_is_golden() -> None:
    rows = _reproduce_numbers()
    path = GOLDEN / "reproduce.json"
    if BLESS:
        _write(path, rows)
        return
    assert json.loads(_canonical(rows)) == _load(path)
