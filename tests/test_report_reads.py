"""Reports that read right: one test per finding of a person reading them.

Sweep panels (categorical axes, titles with units, SI throughput, no empty
panels, coinciding series, error bars), the reproduce report (folded
warnings, one way of counting checks, pass marks and the ledger recomputed
from their numbers, published points on every plot that has them, a legible
NetPIPE PNG), the first DITR interval as the model runs it, and damaged
report inputs refused with the file named. Expected values come from the
tables the tests construct, closed forms, or the case files' published
numbers; none is copied from the simulator's output.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import holdoff
from browser import SKIP_NO_CHROMIUM, chromium_page
from holdoff import plots, reproduce
from holdoff.cli import main
from holdoff.report import ReportInputs, build_report
from holdoff.report.page import fold_warnings, warnings_block
from holdoff.report.run import ledger_state
from holdoff.report.sweep import short_labels
from scenarios import REPO, inline_scenario

PING_A = "ping, name=w, host=a, to=b, interval_us=200000"
PING_B = "ping, name=w, host=a, to=b, interval_us=1000"
RPC = "rpc, name=w, host=a, to=b"


def figures(text: str) -> list[dict[str, Any]]:
    """The plotly figures packed in a report, in page order."""
    packed = re.search(r'id="figures-gz">([^<]*)</script>', text)
    assert packed, "the report has no figures"
    data = json.loads(gzip.decompress(base64.b64decode(packed.group(1))))
    return list(data["figures"].values())


def titled(figs: list[dict[str, Any]], title: str) -> dict[str, Any]:
    found = [f for f in figs if f["layout"]["title"]["text"] == title]
    assert len(found) == 1, [f["layout"]["title"]["text"] for f in figs]
    return found[0]


def sweep_table(params: dict[str, list[Any]], metrics: dict[str, list[Any]]) -> pd.DataFrame:
    """A table shaped as the sweep writes one: point, replicate, the swept
    fields, seed and scenario_hash, then metric columns."""
    n = len(next(iter(metrics.values())))
    frame = pd.DataFrame({"point": range(n), "replicate": 0})
    for name, values in params.items():
        frame[name] = values
    frame["seed"] = 1
    frame["scenario_hash"] = ""
    for name, values in metrics.items():
        frame[name] = values
    return frame


def sweep_figures(table: pd.DataFrame) -> tuple[str, list[dict[str, Any]]]:
    text = build_report(ReportInputs(sweeps=[("s", table)]))
    return text, figures(text)


# -- sweeps ---------------------------------------------------------------------------


def test_a_sweep_over_workloads_is_points_side_by_side_with_short_labels() -> None:
    table = sweep_table(
        {"apps[0]": [PING_A, RPC, PING_B]}, {"w/latency_us_p99": [132.0, 250.0, 57.0]}
    )
    _, figs = sweep_figures(table)
    fig = titled(figs, "latency p99 [us], app w")
    # Categories are not joined by lines: markers only, grouped per category.
    assert [t["mode"] for t in fig["data"]] == ["markers"]
    assert fig["layout"]["xaxis"]["type"] == "category"
    assert fig["layout"]["scattermode"] == "group"
    # The parts every workload shares (name=w, host=a, to=b) are left out, no rotation.
    assert sorted(fig["data"][0]["x"]) == [
        "ping, interval_us=1000",
        "ping, interval_us=200000",
        "rpc",
    ]
    assert fig["layout"]["xaxis"]["tickangle"] == 0
    # The full category is still in the hover text.
    assert set(fig["data"][0]["hovertext"]) == {PING_A, RPC, PING_B}


def test_short_labels_keep_labels_whole_when_leaving_parts_out_would_merge_them() -> None:
    assert short_labels([PING_A, RPC]) == {PING_A: "ping, interval_us=200000", RPC: "rpc"}
    # A leading kind stays, shared or not.
    assert short_labels(["static, itr=1", "static, itr=1, x=2"]) == {
        "static, itr=1": "static",
        "static, itr=1, x=2": "static, x=2",
    }
    # Leaving the shared parts out would empty both: they stay whole.
    assert short_labels(["x=1, y=2", "y=2, x=1"]) == {
        "x=1, y=2": "x=1, y=2",
        "y=2, x=1": "y=2, x=1",
    }


def test_panel_titles_are_words_with_units_and_throughput_is_in_si_units() -> None:
    table = sweep_table(
        {"generators[0].rate_pps": [1000, 2000, 3000]},
        {
            "w/throughput_bps": [2e8, 5e8, 8e8],
            "a/cpu_util_busy": [0.1, 0.2, 0.25],
            "a.eth0/interrupts_per_s": [1000.0, 2000.0, 8000.0],
        },
    )
    text, figs = sweep_figures(table)
    throughput = titled(figs, "throughput [Mb/s], app w")
    # 8e8 bit/s is 800 Mb/s: the ticks are numbers in the named unit, never "0.8B".
    assert throughput["data"][0]["y"] == pytest.approx([200.0, 500.0, 800.0])
    assert throughput["layout"]["yaxis"]["exponentformat"] == "none"
    cpu = titled(figs, "CPU busy [% of the host's cores], host a")
    assert cpu["data"][0]["y"] == pytest.approx([10.0, 20.0, 25.0])
    titled(figs, "interrupt rate [interrupts/s], port a.eth0")
    # No raw column name is a title.
    raw = [c for c in table.columns if "/" in c]
    assert not [f for f in figs for c in raw if c in f["layout"]["title"]["text"]]
    assert "w/throughput_bps</" not in text


def test_a_metric_empty_or_the_same_wherever_defined_is_text_not_a_panel() -> None:
    table = sweep_table(
        {"generators[0].rate_pps": [1000, 2000, 3000, 4000]},
        {
            "w/latency_us_p99": [10.0, 20.0, 30.0, 40.0],
            # An rpc server: no throughput of its own (NaN) or zero.
            "w.server/throughput_bps": [math.nan, 0.0, math.nan, 0.0],
            "x/latency_us_p50": [math.nan] * 4,
        },
    )
    text, figs = sweep_figures(table)
    assert len(figs) == 1
    assert "w.server" not in json.dumps(figs)
    same = text.split("the same at every point:", 1)[1].split("</p>", 1)[0]
    assert "<code>w.server</code> = 0.00 b/s (where defined)" in same


def test_coinciding_series_differ_in_marker_size_dash_and_width() -> None:
    table = sweep_table(
        {"apps[0]": [PING_A, PING_A, PING_B, PING_B], "itr_per_s": [8000, 20000] * 2},
        {"w/latency_us_p99": [132.0, 57.0, 132.0, 57.0]},
    )
    _, figs = sweep_figures(table)
    first, second = titled(figs, "latency p99 [us], app w")["data"]
    assert first["y"] == second["y"]  # they coincide
    assert first["marker"]["symbol"] != second["marker"]["symbol"]
    assert first["marker"]["size"] > second["marker"]["size"]  # the later one sits inside
    assert first["line"]["dash"] != second["line"]["dash"]
    assert first["line"]["width"] > second["line"]["width"]
    assert [first["name"], second["name"]] == ["ping, interval_us=200000", "ping, interval_us=1000"]


def test_error_bars_come_from_the_tables_ci95_columns() -> None:
    table = sweep_table(
        {"generators[0].rate_pps": [1000, 2000]},
        {
            "w/latency_us_p99": [100.0, 200.0],
            "w/latency_us_p99_ci95_lo": [90.0, 150.0],
            "w/latency_us_p99_ci95_hi": [120.0, 210.0],
        },
    )
    _, figs = sweep_figures(table)
    assert len(figs) == 1  # the interval columns are not panels of their own
    error = figs[0]["data"][0]["error_y"]
    assert error["array"] == pytest.approx([20.0, 10.0])
    assert error["arrayminus"] == pytest.approx([10.0, 50.0])


def test_error_bars_over_replicates_are_the_t_interval() -> None:
    from scipy import stats as sps

    table = sweep_table(
        {"generators[0].rate_pps": [1000, 1000, 1000]}, {"w/throughput_bps": [10.0, 12.0, 14.0]}
    )
    table["replicate"] = [0, 1, 2]
    table = pd.concat(
        [table, table.assign(**{"generators[0].rate_pps": 2000, "w/throughput_bps": 20.0})]
    )
    _, figs = sweep_figures(table)
    trace = titled(figs, "throughput [b/s], app w")["data"][0]
    # Mean 12, sample standard deviation 2, n 3: half width t(0.975, 2) * 2 / sqrt(3).
    half = sps.t.ppf(0.975, 2) * 2 / math.sqrt(3)
    assert trace["y"] == pytest.approx([12.0, 20.0])
    assert trace["error_y"]["array"] == pytest.approx([half, 0.0])
    assert trace["error_y"]["arrayminus"] == pytest.approx([half, 0.0])


def test_percentile_error_bars_over_many_replicated_points_are_bounded() -> None:
    from holdoff.report.sweep import MAX_BOOTSTRAPS

    # Two seeds at each of 160 loads, two percentile panels: 320 bootstrap
    # intervals, over the bound; the t intervals of the mean stay.
    loads = [1000 + 10 * i for i in range(160)]
    n = 2 * len(loads)
    assert 2 * len(loads) > MAX_BOOTSTRAPS
    table = sweep_table(
        {"generators[0].rate_pps": loads * 2},
        {
            "w/latency_us_p99": [100.0 + (i % 7) for i in range(n)],
            "w/latency_us_p50": [50.0 + (i % 5) for i in range(n)],
            "w/throughput_bps": [10.0 + (i % 3) for i in range(n)],
        },
    )
    text, figs = sweep_figures(table)
    assert "percentile error bars left out" in text
    assert titled(figs, "latency p99 [us], app w")["data"][0].get("error_y") is None
    assert titled(figs, "throughput [b/s], app w")["data"][0]["error_y"]["array"]


def test_a_sweeps_replicate_summary_is_a_report_input_with_error_bars(tmp_path: Path) -> None:
    from holdoff.report import load_inputs

    # The shape `holdoff sweep` writes with replicates: point, the swept
    # fields, seeds, then each metric with its interval; no run columns.
    summary = pd.DataFrame(
        {
            "point": [0, 1],
            "generators[0].rate_pps": [1000, 2000],
            "seeds": [3, 3],
            "w/latency_us_p99": [100.0, 200.0],
            "w/latency_us_p99_ci95_lo": [80.0, 190.0],
            "w/latency_us_p99_ci95_hi": [130.0, 215.0],
            "latency_us_p99_max": [100.0, 200.0],
            "latency_us_p99_max_ci95_lo": [80.0, 190.0],
            "latency_us_p99_max_ci95_hi": [130.0, 215.0],
        }
    )
    summary.to_parquet(tmp_path / "s.parquet")
    inputs = load_inputs([tmp_path / "s.parquet"])
    text = build_report(inputs)
    error = titled(figures(text), "latency p99 [us], app w")["data"][0]["error_y"]
    assert error["array"] == pytest.approx([30.0, 15.0])
    assert error["arrayminus"] == pytest.approx([20.0, 10.0])
    table = text.split('<table class="sweep-table">', 1)[1].split("</table>", 1)[0]
    assert '100.00 <span class="meta">(80.00 to 130.00)</span>' in table


# -- the reproduce report ----------------------------------------------------------------


def check(name: str, published: float, simulated: float | None, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "unit": "usec",
        "published": published,
        "simulated": simulated,
        "tolerance_rel": 0.1,
        "source": "s",
        "run": "r",
        **extra,
    }


def test_checks_are_counted_one_way_with_plumbing_apart() -> None:
    case = {
        "case": "c",
        "checks": [
            check("near", 100.0, 105.0, ok=True),
            check("far", 100.0, 150.0, ok=False),
            check("wired", 5.0, 5.0, ok=True, plumbing="cannot fail: the same number"),
        ],
    }
    text = build_report(ReportInputs(cases=[case]))
    assert "1 of 2 scored checks MISS" in text
    assert "and 1 plumbing check, shown and not scored" in text
    assert "1 of 2 checks pass (+1 plumbing, not scored)" in text  # the overview
    assert " of 3 " not in text  # plumbing is never added to the scored count
    result = reproduce.CaseResult(
        reproduce.Case("c", "", "", Path(), [], []),
        [reproduce.CheckResult(**c) for c in case["checks"]],  # type: ignore[arg-type]
    )
    assert reproduce.score_line([result]).endswith("; 1 plumbing check printed, not scored)")


def test_pass_marks_are_recomputed_from_the_numbers_not_the_label() -> None:
    case = {"case": "c", "checks": [check("said pass", 100.0, 50.0, ok=True)]}
    text = build_report(ReportInputs(cases=[case]))
    table = text.split('<table class="checks">', 1)[1].split("</table>", 1)[0]
    assert '<span class="miss">MISS</span>' in table
    assert '<span class="pass">pass</span>' not in table
    assert "The input marked this check pass; its numbers say MISS" in text
    assert "1 of 1 scored check MISS" in text


def test_a_case_without_checks_passes_nothing() -> None:
    text = build_report(ReportInputs(cases=[{"case": "empty", "checks": []}]))
    assert "no scored checks" in text
    assert "0 of 0" not in text and "all pass" not in text


def test_repeated_warnings_fold_to_one_line_with_a_count() -> None:
    message = "RADV = 64 [radv_1024ns]: RDTR = 0 raises RXT0 for every packet"
    runs = [f"run{i}" for i in range(7)]
    warnings = [
        (run, f"hosts[0].nics[{n}].moderation.radv_1024ns", message) for run in runs for n in (0, 1)
    ]
    # The same warning with another value, and one other warning.
    warnings.append(
        ("run7", "hosts[0].nics[0].moderation.radv_1024ns", message.replace("64", "150"))
    )
    warnings.append(("run7", "hosts[0].nics[0].moderation.itr_256ns", "ITR = 488: ignored"))
    groups = fold_warnings(warnings)
    assert [(count, len(wheres), field, varies) for count, wheres, field, _, varies in groups] == [
        (15, 8, "hosts[0].nics[*].moderation.radv_1024ns", True),
        (1, 1, "hosts[0].nics[0].moderation.itr_256ns", False),
    ]
    block = warnings_block(warnings)
    assert block.count("<li>") == 2
    assert "16 warnings of 2 kinds" in block and "<b>15×</b>" in block


def test_the_ledger_is_recomputed_from_its_numbers() -> None:
    ledger = {"injected": 5, "delivered": 1, "dropped": 0, "in_flight": 0, "balanced": True}
    ok, text = ledger_state(ledger)
    assert not ok
    assert text.startswith("injected 5 ≠ delivered 1 + dropped 0 + in flight 0 (= 1)")
    assert "the input says balanced" in text
    assert ledger_state({**ledger, "delivered": 4, "dropped": 1}) == (
        True,
        "injected 5 = delivered 4 + dropped 1 + in flight 0",
    )
    assert ledger_state({"injected": 5})[0] is False
    # In the report: the overview and the run's section say NOT balanced.
    data = tomllib.loads(inline_scenario(duration_ms=5))
    report = json.loads(holdoff.run(data).to_json())
    report["summary"]["ledger"] = ledger
    text = build_report(ReportInputs(runs=[("forged", report)]))
    assert text.count('<span class="miss">NOT balanced</span>') == 2
    assert "ledger balanced" not in text


def test_the_forwarding_plot_shows_the_published_rates_and_bound() -> None:
    case = reproduce.load_case("freebsd-2006-fastintr")
    text = build_report(ReportInputs(cases=[reproduce.run_case(case)]))
    fig = titled(figures(text), "freebsd-2006-fastintr: forwarded against offered load")
    published = {
        t["name"]: (t["x"][0], t["y"][0])
        for t in fig["data"]
        if t["name"].startswith("published: ")
    }
    # The case file's published rates (kpps), at their runs' offered load: 64-byte
    # frames at 1 Gb/s line rate, 1e9 / ((64 + 20) * 8) = 1 488 095 frames/s.
    line_rate_kpps = 1e9 / ((64 + 20) * 8) / 1e3
    wanted = {
        c.run: c.published / 1e3
        for c in case.checks
        if c.unit == "packets/s" and c.op == "approx" and c.divide_by_run is None
    }
    labels = {r.id: r.label for r in case.runs}
    assert {name: y for name, (_, y) in published.items()} == {
        f"published: {labels[run]}": y for run, y in wanted.items()
    }
    for x, _ in published.values():
        assert x == pytest.approx(line_rate_kpps, rel=0.01)
    bounds = [t for t in fig["data"] if t["name"].startswith("published bound")]
    assert [t["y"] for t in bounds] == [[800.0, 800.0]]


def test_the_netpipe_png_has_one_legend_entry_per_run_and_no_stacked_labels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import matplotlib.pyplot as plt

    kept: list[Any] = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig: (kept.append(fig), close(fig)))
    curves = {
        "dynamic": [(1, 0.1), (1024, 100.0), (65536, 400.0)],
        "static": [(1, 0.2), (65536, 800.0)],
    }
    published = {
        "dynamic": [(32768, 341.0), (32771, 341.4), (49152, 451.0)],
        "static": [(65536, 891.0)],
    }
    path = plots.netpipe_png(tmp_path / "np.png", title="t", curves=curves, published=published)
    assert path.stat().st_size > 10_000
    ax = kept[0].axes[0]
    assert len(ax.texts) == 0  # nothing written beside the points
    entries = [t.get_text() for t in ax.get_legend().get_texts()]
    assert entries == [
        "simulated: dynamic",
        "simulated: static",
        "published: dynamic",
        "published: static",
    ]
    lines = {line.get_label(): line for line in ax.get_lines()}
    for run in curves:
        assert lines[f"published: {run}"].get_color() == lines[f"simulated: {run}"].get_color()


def test_a_netpipe_runs_report_draws_its_curve() -> None:
    data = tomllib.loads((REPO / "examples/netpipe-ditr.toml").read_text())
    result = holdoff.run(data)
    text = build_report(ReportInputs(runs=[("np", result)]))
    figs = figures(text)
    for metric, title in (("np_mbps", "throughput"), ("t_us", "latency")):
        fig = titled(figs, f"np: NetPIPE {title} against message size")
        (trace,) = fig["data"]
        assert trace["name"] == "simulated: NPtcp"
        # Every point the run's summary holds, in its order.
        assert trace["x"] == list(result.netpipe["bytes"])
        assert trace["y"] == pytest.approx(list(result.netpipe[metric]))


# -- the first DITR interval -------------------------------------------------------------


def test_dynamic_itr_is_unthrottled_until_the_first_watchdog_run_as_the_docs_say() -> None:
    data = tomllib.loads(inline_scenario(duration_ms=2500, rate_pps=1000))
    data["hosts"][0]["nics"][0]["moderation"] = {"kind": "e1000-5x"}
    data["sample_interval_us"] = 1000
    result = holdoff.run(data)
    first = result.summary["ports"][0]["moderation_trace"][0]
    series = result.report["timeseries"]
    throttle = series["series"]["dut.eth0.v0/throttle_interval_ns"]
    before = {v for t, v in zip(series["t_ns"], throttle, strict=True) if t < first["t_ns"]}
    after = {v for t, v in zip(series["t_ns"], throttle, strict=True) if t > first["t_ns"] + 1e6}
    # e1000 5.x writes ITR at configure time only for a static rate: 0 (no throttle).
    assert before == {0.0}
    # One-directional traffic: dif = goc, rate = 6000 + 2000 = 8000/s, ITR 488 x 256 ns.
    assert first["values"]["rate_per_s"] == 8000
    assert after == {488 * 256.0}
    model = (REPO / "docs/models/e1000-5x-ditr.md").read_text()
    knobs = (REPO / "docs/knobs.md").read_text()
    row = next(line for line in knobs.splitlines() if "`InterruptThrottleRate` unset" in line)
    for text in (model, row):
        assert "unthrottled" in text
    assert "8000/s (488) until its first run" not in row


# -- damaged inputs ----------------------------------------------------------------------


def _damaged(tmp_path: Path, kind: str) -> Path:
    if kind == "truncated.parquet":
        path = tmp_path / kind
        sweep_table({"x": [1, 2]}, {"w/latency_us_p99": [1.0, 2.0]}).to_parquet(path)
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        return path
    contents = {
        "garbage.parquet": bytes(range(256)) * 8,
        "text.parquet": b"point,scenario_hash\n0,x\n",
        "list.json": b"[1, 2]",
        "string.json": b'"a case"',
        "case-not-object.json": b'{"cases": [1]}',
        "check-no-published.json": json.dumps(
            {"cases": [{"case": "c", "checks": [{"name": "x", "unit": "us"}]}]}
        ).encode(),
        "check-wrong-type.json": json.dumps(
            {"cases": [{"case": "c", "checks": [check("x", 1.0, "fast")]}]}
        ).encode(),
        "deep.json": b"[" * 20_000 + b"]" * 20_000,
        "run-damaged.json": b'{"summary": {"ports": 5, "ledger": []}, "config": {}}',
        "binary.json": b"\x00\xff" * 100,
    }
    path = tmp_path / kind
    path.write_bytes(contents[kind])
    return path


DAMAGED = [
    "truncated.parquet",
    "garbage.parquet",
    "text.parquet",
    "list.json",
    "string.json",
    "case-not-object.json",
    "check-no-published.json",
    "check-wrong-type.json",
    "deep.json",
    "run-damaged.json",
    "binary.json",
]


@pytest.mark.parametrize("kind", DAMAGED)
def test_a_damaged_report_input_is_refused_naming_the_file(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _damaged(tmp_path, kind)
    code = main(["report", str(path), "-o", str(tmp_path / "r.html")])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert kind in captured.err
    assert "Traceback" not in captured.err + captured.out
    assert not (tmp_path / "r.html").exists()


# -- as a person sees it ----------------------------------------------------------------


@SKIP_NO_CHROMIUM
def test_workload_labels_read_level_and_apart_in_chromium(tmp_path: Path) -> None:
    from holdoff.report import write_report

    table = sweep_table(
        {"apps[0]": [PING_A, RPC, PING_B] * 2, "itr_per_s": [8000] * 3 + [20000] * 3},
        {"w/latency_us_p99": [132.0, 250.0, 57.0, 57.0, 100.0, 57.0]},
    )
    table = table.drop(columns=["itr_per_s"])  # one categorical axis, two seeds a point
    path = write_report(tmp_path / "r.html", ReportInputs(sweeps=[("workloads", table)]))
    with chromium_page() as page:
        page.goto(path.as_uri())
        page.wait_for_function(
            "document.querySelectorAll('.js-plotly-plot .xtick text').length > 0", timeout=30000
        )
        ticks = page.evaluate(
            """() => Array.from(document.querySelectorAll('.js-plotly-plot .xtick text'))
              .map(t => {const r = t.getBoundingClientRect();
                return [t.textContent, r.left, r.right, t.getAttribute('transform') || ''];})"""
        )
        bars = page.locator(".js-plotly-plot .errorbar").count()
    labels = sorted(text for text, *_ in ticks)
    assert labels == ["ping, interval_us=1000", "ping, interval_us=200000", "rpc"]
    assert not [t for t in ticks if "rotate" in t[3]]
    spans = sorted((left, right) for _, left, right, _ in ticks)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))  # no overlap
    assert bars == 3  # one error bar per category (two seeds each)
