"""`holdoff reproduce`: cases, metrics, the JSON shape and the NetPIPE plot."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from holdoff import reproduce as rp
from holdoff.cli import main


def test_bundled_cases_load_and_reference_their_runs() -> None:
    ids = rp.list_cases()
    assert "linux-2004-ditr" in ids
    for cid in ids:
        case = rp.load_case(cid)
        assert case.checks, cid
        for r in case.runs:
            assert r.scenario.is_file(), r.scenario
        for c in case.checks:
            assert c.tolerance_rel <= 0.15
            assert c.source


def test_unknown_case_lists_the_available_ones() -> None:
    with pytest.raises(rp.CaseError, match="linux-2004-ditr"):
        rp.load_case("no-such-case")


def _check(**kw: object) -> rp.Check:
    base: dict[str, object] = {
        "name": "x",
        "run": "r",
        "unit": "u",
        "published": 1.0,
        "tolerance_rel": 0.1,
        "source": "s",
    }
    base.update(kw)
    return rp.Check(**base)  # type: ignore[arg-type]


def test_metrics_read_the_documented_report_fields() -> None:
    report = {
        "summary": {
            "apps": [
                {"netpipe": [{"bytes": 1, "t_us": 250.0, "np_mbps": 0.03}]},
                {"kind": "netpipe_receiver"},
            ],
            "ports": [
                {
                    "port": "a.eth0",
                    "moderation_trace": [
                        {"t_ns": 0, "values": {"goc": 0, "rate_per_s": 8000}},
                        {"t_ns": 1, "values": {"goc": 10, "rate_per_s": 2000}},
                        {"t_ns": 2, "values": {"goc": 12, "rate_per_s": 2200}},
                        {"t_ns": 3, "values": {"goc": 11, "rate_per_s": 2100}},
                    ],
                }
            ],
        }
    }
    assert rp.metric(report, _check(metric="netpipe.t_us", bytes=1)) == 250.0
    assert rp.metric(report, _check(metric="netpipe.t_us", bytes=2)) is None
    # Idle decisions (goc = 0) are left out: median of 2000, 2100, 2200.
    med = rp.metric(report, _check(metric="moderation.median.rate_per_s", port="a.eth0"))
    assert med == 2100.0
    with pytest.raises(rp.CaseError):
        rp.metric(report, _check(metric="bogus.x"))


@pytest.fixture(scope="module")
def ditr_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict, Path]:
    plots = tmp_path_factory.mktemp("plots")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["reproduce", "linux-2004-ditr", "--strict", "--json", "--plots", str(plots)])
    return code, json.loads(buf.getvalue()), plots


def test_reproduce_json_has_every_published_check(ditr_json: tuple[int, dict, Path]) -> None:
    code, data, _ = ditr_json
    case_file = tomllib.loads((rp.cases_dir() / "linux-2004-ditr" / "case.toml").read_text())
    (case,) = data["cases"]
    assert case["case"] == "linux-2004-ditr"
    assert [c["name"] for c in case["checks"]] == [c["name"] for c in case_file["checks"]]
    for c, spec in zip(case["checks"], case_file["checks"], strict=True):
        assert set(c) >= {"name", "unit", "published", "simulated", "tolerance_rel", "ok"}
        assert c["published"] == spec["published"]
        assert c["simulated"] is not None
        within = abs(c["simulated"] - c["published"]) <= c["tolerance_rel"] * c["published"]
        assert c["ok"] == within
    # With --strict the exit code says whether every check passed.
    assert code == (0 if all(c["ok"] for c in case["checks"]) else 1)


def test_reproduce_saves_the_netpipe_curve(ditr_json: tuple[int, dict, Path]) -> None:
    _, _, plots = ditr_json
    png = plots / "linux-2004-ditr-netpipe.png"
    assert png.is_file()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_strict_misses_do_not_fail_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["reproduce", "freebsd-2024-aim", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    assert json.loads(out)["cases"][0]["case"] == "freebsd-2024-aim"
