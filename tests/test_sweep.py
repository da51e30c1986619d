"""Sweeps: expansion, seeds, validation, the result store, executors and the CLI."""

from __future__ import annotations

import copy
import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pandas.testing as pdt
import pytest

import holdoff
from holdoff.cli import main
from holdoff.store import ResultStore, scenario_hash
from holdoff.sweeps import SweepError, expand, load_sweep, run_sweep, sweep, write_table
from scenarios import REPO, inline_scenario

RATE = "generators[0].rate_pps"
CHIP = "hosts[0].nics[0].chip"


def base() -> dict[str, Any]:
    return tomllib.loads(inline_scenario(duration_ms=5))


def small_sweep(**extra: Any) -> dict[str, Any]:
    return {"name": "small", "base": base(), "seed": 7, "grid": {RATE: [1000, 4000]}, **extra}


def cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_grid_is_the_cartesian_product_last_field_fastest() -> None:
    spec = load_sweep(small_sweep(grid={RATE: [1000, 4000], CHIP: ["82546", "82574"]}))
    points = expand(spec)
    assert [(p.params[RATE], p.params[CHIP]) for p in points] == [
        (1000, "82546"),
        (1000, "82574"),
        (4000, "82546"),
        (4000, "82574"),
    ]
    for p in points:
        assert p.scenario["generators"][0]["rate_pps"] == p.params[RATE]
        assert p.scenario["hosts"][0]["nics"][0]["chip"] == p.params[CHIP]
        assert p.scenario["seed"] == p.seed
        assert p.key == scenario_hash(p.scenario, holdoff.__version__)
    assert len({p.seed for p in points}) == 4
    assert len({p.key for p in points}) == 4


def test_adding_points_never_changes_the_seeds_of_others() -> None:
    before = {p.params[RATE]: p.seed for p in expand(load_sweep(small_sweep()))}
    grown = small_sweep(grid={RATE: [500, 1000, 2000, 4000]})
    after = {p.params[RATE]: p.seed for p in expand(load_sweep(grown))}
    assert {r: after[r] for r in before} == before
    other_base_seed = {p.params[RATE]: p.seed for p in expand(load_sweep(small_sweep(seed=8)))}
    assert other_base_seed.keys() == before.keys()
    assert all(other_base_seed[r] != before[r] for r in before)


def test_replicates_give_distinct_seeds_per_point() -> None:
    points = expand(load_sweep(small_sweep(replicates=3)))
    assert [(p.params[RATE], p.replicate) for p in points] == [
        (1000, 0),
        (1000, 1),
        (1000, 2),
        (4000, 0),
        (4000, 1),
        (4000, 2),
    ]
    assert len({p.seed for p in points}) == 6


def test_star_paths_whole_tables_and_explicit_points() -> None:
    data = tomllib.loads((REPO / "examples" / "quickstart.toml").read_text())
    spec = load_sweep(
        {
            "base": data,
            "set": {"duration_ms": 20},
            "grid": {
                "hosts[*].profile": ["ideal", "apu2"],
                "hosts[0].nics[0].moderation": [
                    {"kind": "static", "itr_per_s": 4000},
                    {"kind": "e1000-5x"},
                ],
            },
            "points": [{"hosts[*].profile": "xeon-modern", "generators[0].rate_pps": 1000}],
        }
    )
    points = expand(spec)
    assert len(points) == 5
    for p in points:
        assert p.scenario["duration_ms"] == 20
        profiles = {h["profile"] for h in p.scenario["hosts"]}
        assert profiles == {p.params["hosts[*].profile"]}
    assert points[1].scenario["hosts"][0]["nics"][0]["moderation"] == {"kind": "e1000-5x"}
    assert points[4].scenario["generators"][0]["rate_pps"] == 1000
    table = sweep(spec, store=None, executor="serial")
    assert list(table["hosts[0].nics[0].moderation"][:2]) == ["static, itr_per_s=4000", "e1000-5x"]
    # The explicit point has no moderation parameter: an empty cell, not a guess.
    assert table["hosts[0].nics[0].moderation"].isna().tolist() == [False] * 4 + [True]


def test_sweep_file_base_is_relative_to_the_sweep_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "base.toml").write_text(inline_scenario(duration_ms=5))
    (tmp_path / "sub" / "s.toml").write_text(f'base = "base.toml"\n[grid]\n"{RATE}" = [1000]\n')
    spec = load_sweep(tmp_path / "sub" / "s.toml")
    assert spec.name == "s"
    assert spec.base["generators"][0]["rate_pps"] == 10000


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"grid": {"hosts[3].profile": ["ideal"]}}, "hosts[3].profile", ["index 3", "0..0"]),
        ({"grid": {"hosts[0]..x": [1]}}, "hosts[0]..x", ["not a field path"]),
        ({"grid": {RATE: 5}}, RATE, ["non-empty list"]),
        ({"grids": {}}, "grids", ["unknown sweep field", "allowed"]),
        ({"replicates": 0}, "replicates", ["from 1 to"]),
        ({"grid": {"duration_ms.x": [1]}}, "duration_ms.x", ["not a table"]),
        ({"grid": {"hosts[0].profile": ["ideal", "pentium-9"]}}, "hosts[0].profile", ["allowed"]),
    ],
)
def test_errors_name_the_field_and_nothing_runs(
    tmp_path: Path, change: dict[str, Any], field: str, words: list[str]
) -> None:
    store = tmp_path / "store"
    with pytest.raises(SweepError) as info:
        run_sweep({**small_sweep(), **change}, store=store, executor="serial")
    assert info.value.field == field
    for word in words:
        assert word in str(info.value)
    assert not store.exists() or not list(store.iterdir())


def test_invalid_point_is_reported_with_its_parameters() -> None:
    spec = load_sweep(small_sweep(grid={CHIP: ["82546", "82598"]}))
    with pytest.raises(SweepError, match=r"point 1 \(hosts\[0\]\.nics\[0\]\.chip=82598\)"):
        expand(spec)


def test_table_rows_match_single_runs_of_each_point() -> None:
    spec = load_sweep(small_sweep())
    table = sweep(spec, store=None, executor="serial")
    points = expand(spec)
    assert list(table.columns[:5]) == ["point", "replicate", RATE, "seed", "scenario_hash"]
    assert table["point"].tolist() == [0, 1]
    for p, row in zip(points, table.to_dict("records"), strict=True):
        result = holdoff.run(p.scenario)
        port = result.ports.set_index("port").loc["dut.eth0"]
        assert row["seed"] == p.seed == result.seed
        assert row["dut.eth0/interrupts"] == port["interrupts"]
        assert row["dut.eth0/interrupts_per_s"] == port["interrupts_per_s"]
        assert row["sink/received"] == result.apps.set_index("app").loc["sink", "received"]
        assert row["ledger_injected"] == result.ledger["injected"]
        assert (
            row["dut/cpu_util_busy"] == result.hosts.set_index("host").loc["dut", "cpu_util_busy"]
        )


def test_store_key_is_over_the_validated_scenario() -> None:
    # Writing out a default (the NAPI weight is 64 unless set) describes the
    # same run, so it must find the same stored result; changing a value must not.
    version = holdoff.__version__
    plain = {**base(), "seed": 3}
    explicit = copy.deepcopy(plain)
    explicit["hosts"][0]["napi"] = {"weight": 64}
    changed = copy.deepcopy(plain)
    changed["hosts"][0]["napi"] = {"weight": 32}
    assert scenario_hash(explicit, version) == scenario_hash(plain, version)
    assert scenario_hash(changed, version) != scenario_hash(plain, version)
    assert scenario_hash(plain, "0.0.0-other") != scenario_hash(plain, version)
    with pytest.raises(holdoff.ScenarioError):
        scenario_hash({**plain, "duration_ms": 0}, version)


def test_store_skips_finished_points_and_recomputes_missing_ones(tmp_path: Path) -> None:
    spec = load_sweep(small_sweep(grid={RATE: [1000, 2000, 4000]}))
    first = run_sweep(spec, store=tmp_path, executor="serial")
    assert (first.computed, first.cached) == (3, 0)
    store = ResultStore(tmp_path)
    assert store.keys() == sorted(p.key for p in first.points)
    again = run_sweep(spec, store=tmp_path, executor="serial")
    assert (again.computed, again.cached) == (0, 3)
    pdt.assert_frame_equal(first.table, again.table)
    store.path(first.points[1].key).unlink()
    third = run_sweep(spec, store=tmp_path, executor="process", workers=2)
    assert (third.computed, third.cached) == (1, 2)
    pdt.assert_frame_equal(first.table, third.table)


def test_store_writes_are_atomic_and_stale_temporaries_are_removed(tmp_path: Path) -> None:
    store = ResultStore(tmp_path)
    key = "ab" * 32
    store.put(key, {"scenario_hash": key, "x": 1.5})
    assert [p.name for p in tmp_path.iterdir()] == [f"{key}.parquet"]
    assert store.get(key) == {"scenario_hash": key, "x": 1.5}
    # A writer killed mid-write leaves only a hidden temporary file, never a result.
    dead_pid = 2**22 + 12345
    stale = tmp_path / f".{'cd' * 32}.parquet.{dead_pid}.tmp"
    stale.write_bytes(b"PAR1 half")
    assert store.keys() == [key]
    assert store.cleanup() == [stale]
    assert not stale.exists()


def _roundtrip(table: pd.DataFrame, path: Path) -> pd.DataFrame:
    write_table(table, path)
    return pd.read_parquet(path)


def test_serial_and_parallel_tables_are_identical(tmp_path: Path) -> None:
    spec = load_sweep(small_sweep(grid={RATE: [1000, 2000, 4000], CHIP: ["82546", "82574"]}))
    serial = sweep(spec, store=None, executor="serial")
    parallel = sweep(spec, store=tmp_path / "store", executor="process", workers=2)
    pdt.assert_frame_equal(_roundtrip(serial, tmp_path / "a.parquet"), serial)
    pdt.assert_frame_equal(
        _roundtrip(serial, tmp_path / "a.parquet"), _roundtrip(parallel, tmp_path / "b.parquet")
    )


def test_ray_table_is_identical_to_serial(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    spec = load_sweep(small_sweep(grid={RATE: [1000, 2000, 4000], CHIP: ["82546", "82574"]}))
    serial = sweep(spec, store=None, executor="serial")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        on_ray = run_sweep(spec, store=tmp_path / "store", executor="ray")
        nodes = ray.nodes()
    finally:
        ray.shutdown()
    assert on_ray.computed == 6
    assert len(nodes) == 1
    pdt.assert_frame_equal(
        _roundtrip(serial, tmp_path / "a.parquet"), _roundtrip(on_ray.table, tmp_path / "b.parquet")
    )


def test_cli_sweep_results_and_dry_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "base.toml").write_text(inline_scenario(duration_ms=5))
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(f'name = "cli"\nbase = "base.toml"\n[grid]\n"{RATE}" = [1000, 3000]\n')
    store, out = tmp_path / "store", tmp_path / "t.parquet"
    code, stdout, err = cli(capsys, "sweep", sweep_file, "--store", store, "-o", out, "--json")
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary | {"wall_time_s": 0} == {
        "sweep": "cli",
        "points": 2,
        "computed": 2,
        "cached": 0,
        "store": str(store),
        "table": str(out),
        "executor": "process",
        "wall_time_s": 0,
        "replicates": 1,
        "warnings": [],
    }
    table = pd.read_parquet(out)
    assert table[RATE].tolist() == [1000, 3000]
    code, stdout, err = cli(capsys, "sweep", sweep_file, "--store", store, "-o", out, "--json")
    assert json.loads(stdout)["cached"] == 2
    pdt.assert_frame_equal(pd.read_parquet(out), table)

    code, stdout, err = cli(capsys, "results", "--store", store, "--json")
    assert code == 0, err
    rows = json.loads(stdout)
    assert sorted(r["scenario_hash"] for r in rows) == sorted(table["scenario_hash"])
    assert {r["holdoff_version"] for r in rows} == {holdoff.__version__}
    code, stdout, err = cli(
        capsys,
        "results",
        "--store",
        store,
        "--json",
        "--query",
        'SELECT seed, "sink/received" AS got FROM runs ORDER BY seed',
    )
    assert code == 0, err
    expected = table.sort_values("seed")[["seed", "sink/received"]].values.tolist()
    assert [[r["seed"], r["got"]] for r in json.loads(stdout)] == expected
    code, _, err = cli(capsys, "results", "--store", store, "--query", "SELECT nope FROM runs")
    assert code == 2 and "query failed" in err
    code, _, err = cli(capsys, "results", "--store", tmp_path / "empty")
    assert code == 2 and "no stored runs" in err

    code, stdout, err = cli(capsys, "sweep", sweep_file, "--dry-run", "--json")
    assert code == 0, err
    listed = json.loads(stdout)["points"]
    assert [p["hash"] for p in listed] == table["scenario_hash"].tolist()


def test_cli_sweep_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[base]\nname = "x"\n[grid]\nduration_ms = [1, 2]\n')
    code, out, err = cli(capsys, "sweep", bad, "--store", tmp_path / "s")
    assert code == 2 and out == ""
    assert "error:" in err and "point 0" in err
    code, _, err = cli(capsys, "sweep", tmp_path / "missing.toml")
    assert code == 2 and "not found" in err
    code, _, err = cli(capsys, "sweep", bad, "--executor", "cluster")
    assert code == 2 and "serial, process, ray" in err


def test_example_sweep_is_valid() -> None:
    for path in sorted((REPO / "examples").glob("sweep-*.toml")):
        points = expand(load_sweep(path))
        # 16 points each (grids of 8 x 2 or 4 x 4), but the 64-point timing
        # sweep of BENCHMARKS.md (16 ITR settings x 4 frame sizes).
        expected = 64 if path.stem == "sweep-bench-64" else 16
        assert len(points) == expected, path
        assert os.path.basename(path).removesuffix(".toml") == load_sweep(path).name


def test_each_runs_report_warnings_are_in_the_table_and_the_cli_groups_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A replay of a 100 ms capture of a server's requests and replies at
    two durations: every run holds frames both ways (its report says so),
    the 50 ms run also ends before the capture. The table's `warnings` cell
    of each row is that run's report warnings, as a single run gives them;
    the command line counts them by field."""
    import capture_gen

    cap = tmp_path / "both.pcap"
    capture_gen.server_both_ways(cap, seconds=0.1)
    (tmp_path / "base.toml").write_text(
        f"""name = "both"
duration_ms = 50
[[hosts]]
name = "dut"
profile = "xeon-modern"
nics = [{{ name = "eth0", chip = "82574" }}]
[[generators]]
name = "cap"
pattern = "replay"
capture = "{cap.name}"
[[links]]
a = "cap"
b = "dut.eth0"
[[apps]]
kind = "udp_sink"
name = "sink"
host = "dut"
""",
        encoding="utf-8",
    )
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text('name = "w"\nbase = "base.toml"\n[grid]\nduration_ms = [50, 150]\n')
    spec = load_sweep(sweep_file)
    table = sweep(spec, store=None, executor="serial")
    for p, row in zip(expand(spec), table.to_dict("records"), strict=True):
        single = holdoff.run(p.scenario).warnings
        assert row["warnings"] == "\n".join(f"{w['field']}: {w['message']}" for w in single)
    # The capture's path as the point runs it (made absolute beside the base).
    assert (
        f"generators[0].only_to: the capture {cap} holds frames both ways" in (table["warnings"][1])
    )
    assert table["warnings"][0].startswith("duration_ms: the run ended before")
    assert "duration_ms" not in table["warnings"][1]

    out = tmp_path / "t.parquet"
    code, stdout, err = cli(capsys, "sweep", sweep_file, "--no-store", "-o", out, "--json")
    assert code == 0, err
    by_field = {w["field"]: w["runs"] for w in json.loads(stdout)["warnings"]}
    assert by_field == {"duration_ms": 1, "generators[0].only_to": 2}
    code, stdout, err = cli(capsys, "sweep", sweep_file, "--no-store", "-o", out)
    text = " ".join(stdout.split())
    assert code == 0 and "2 of 2" in text and "1 of 2" in text, stdout

    # The HTML report of the table lists them with the points that gave them.
    from holdoff.report import load_inputs, write_report

    page = tmp_path / "r.html"
    write_report(page, load_inputs([out]))
    html = page.read_text(encoding="utf-8")
    assert "3 warnings of 2 kinds" in html
    assert "holds frames both ways" in html and "2 runs: point 0, point 1" in html


def test_a_capture_is_found_beside_its_scenario_and_keyed_by_its_contents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The base scenario names its capture relative to its own folder (as
    `holdoff run FILE` finds it), whatever the working directory; and a
    capture written again under the same name is run again, not read from
    the store (the key covers the file's contents, as for profile files)."""
    import capture_gen

    folder = tmp_path / "study"
    folder.mkdir()
    capture_gen.server_both_ways(folder / "cap.pcap", seconds=0.02)
    (folder / "base.toml").write_text(
        inline_scenario(duration_ms=30).replace(
            "rate_pps = 10000\nframe_bytes = 64", 'pattern = "replay"\ncapture = "cap.pcap"'
        ),
        encoding="utf-8",
    )
    (folder / "s.toml").write_text('name = "c"\nbase = "base.toml"\n', encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    store = tmp_path / "store"
    first = run_sweep(load_sweep(folder / "s.toml"), store=store, executor="serial")
    assert (first.computed, first.cached) == (1, 0)
    again = run_sweep(load_sweep(folder / "s.toml"), store=store, executor="serial")
    assert (again.computed, again.cached) == (0, 1)
    # 0.02 s of requests and replies: 100 of each. Taken again for 0.01 s: 50.
    assert first.table["ledger_injected"][0] == 200
    capture_gen.server_both_ways(folder / "cap.pcap", seconds=0.01)
    retaken = run_sweep(load_sweep(folder / "s.toml"), store=store, executor="serial")
    assert (retaken.computed, retaken.cached) == (1, 0)
    assert retaken.table["ledger_injected"][0] == 100
    # The store lists the two runs apart by the capture's contents (the
    # scenario text is the same), not as two identical rows.
    code, stdout, err = cli(capsys, "results", "--store", store, "--json")
    assert code == 0, err
    rows = json.loads(stdout)
    column = f"contents of {(folder / 'cap.pcap').resolve()}"
    assert len(rows) == 2 and len({r[column] for r in rows}) == 2, rows[0].keys()
    assert "input_files" not in retaken.table.columns
