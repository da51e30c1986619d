"""`holdoff calibrate` and host profile files.

- A known profile is recovered (each fitted cost within 5 % of the preset's
  value) from rows the model made with it, starting 30 % off; the written
  file runs in a scenario.
- On the apu2's own setups, costs chosen by the test (not the preset's) are
  recovered from rows the model made with them. The fit to the two published
  rows of openbsd-tech 2025-05-19 (TX 600, RX 334 Mb/s at EM_TIDV = EM_TADV =
  64) is a fitter-agreement check: it meets its inputs and lands where
  scripts/calibrate_apu2.py put the preset.
- Rows that cannot identify a cost, or tell two apart, are refused naming
  the cost(s) and a row that would; every kind of bad input exits 2 naming
  the row and column.
- Profile files work from `holdoff run`, `validate` and sweeps, relative to
  the scenario that names them.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomli_w

import holdoff
from holdoff import calibrate as cb
from holdoff import calibrate_model
from holdoff.calibrate import observe
from holdoff.cli import main
from holdoff.sweeps import expand, load_sweep, set_path
from scenarios import REPO

#: The receive (rx.toml) and send (tx.toml) scenarios the rows set up; the
#: host under calibration is `dut`, whose profile each test chooses.
DATA = Path(__file__).resolve().parent / "data" / "calibrate"

RATE = "generators[0].rate_pps"
ITR = "hosts[0].nics[0].moderation.itr_per_s"
FRAME = "generators[0].frame_bytes"

#: Rows that identify each of the four costs below: the same packet rate at
#: two interrupt rates (per-interrupt cost), a receive row at full-size
#: frames (per-byte copy against per-packet receive), a send row (per-packet
#: transmit).
SETUPS: list[tuple[str, dict[str, int]]] = [
    ("rx.toml", {RATE: 20000, ITR: 0}),
    ("rx.toml", {RATE: 20000, ITR: 4000}),
    ("rx.toml", {RATE: 50000, FRAME: 1500}),
    ("tx.toml", {}),
]
KNOWN = "xeon-modern"
FITTED = ("irq_entry_exit_ns", "rx_packet_ns", "copy_ps_per_byte", "tx_packet_ns")


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, " ".join(captured.err.split())


def scenario_doc(name: str, profile: str) -> dict[str, Any]:
    """The shared scenario ``name`` (rx.toml, tx.toml) with its `dut` host on ``profile``."""
    doc = tomllib.loads((DATA / name).read_text(encoding="utf-8"))
    set_path(doc, "hosts[0].profile", profile)
    return doc


def write_scenarios(folder: Path, profile: str = KNOWN) -> None:
    """rx.toml and tx.toml in ``folder``, their `dut` host on ``profile``."""
    for name in ("rx.toml", "tx.toml"):
        doc = scenario_doc(name, profile)
        (folder / name).write_text(tomli_w.dumps(doc), encoding="utf-8")


def model_rows(folder: Path, columns: tuple[str, ...] = ("cpu_pct", "interrupts_per_s")) -> Path:
    """rows.csv with what the model measures on the `dut` host for each
    setup of SETUPS, run with the KNOWN profile as it is."""
    lines = [",".join(["scenario", RATE, ITR, FRAME, *columns])]
    for name, setup in SETUPS:
        doc = tomllib.loads((folder / name).read_text(encoding="utf-8"))
        for path, value in setup.items():
            set_path(doc, path, value)
        seen = observe(holdoff.run(doc).report["summary"], "dut")
        cells = [str(setup.get(k, "")) for k in (RATE, ITR, FRAME)]
        values = [repr(seen[c]) if seen[c] else "" for c in columns]  # 0: not measured
        lines.append(",".join([name, *cells, *values]))
    rows = folder / "rows.csv"
    rows.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return rows


def test_recovers_a_known_profile_within_5_percent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rows are what the model measures with the KNOWN preset; the fit
    # must find that preset's costs again (the expected values are the
    # preset's, not simulator output).
    write_scenarios(tmp_path)
    rows = model_rows(tmp_path)
    known = cb.profile_costs(KNOWN)
    # Start 30 % above or 25 % below each known cost, from a profile file.
    start = {c: round(known[c] * (1.3 if i % 2 == 0 else 0.75)) for i, c in enumerate(FITTED)}
    (tmp_path / "start.toml").write_text(
        tomli_w.dumps({"base": KNOWN, "costs": start}), encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    code, out, err = cli(
        capsys, "calibrate", rows.name, "--profile", "start.toml", "--host", "dut",
        "--costs", ",".join(FITTED), "-o", "fitted.toml", "--json",
    )  # fmt: skip
    assert code == 0, err
    fit = json.loads(out)
    for c in fit["costs"]:
        assert c["start"] == start[c["cost"]]
        assert c["fitted"] == pytest.approx(known[c["cost"]], rel=0.05), c
    # The file: base, name from the file name, the fitted costs over the
    # start file's, provenance; and it runs where a scenario names it.
    written = tomllib.loads((tmp_path / "fitted.toml").read_text(encoding="utf-8"))
    assert written["base"] == KNOWN and written["name"] == "fitted"
    assert written["costs"] == {c["cost"]: c["fitted"] for c in fit["costs"]}
    assert written["fit"]["rows_file"] == "rows.csv" and len(written["fit"]["rows"]) == 4
    # Row 2's setup in another folder, naming the file relatively, run from
    # a third: the same CPU as the fit's model value for that row (the
    # same costs, as a file instead of overrides).
    sub = tmp_path / "elsewhere"
    sub.mkdir()
    doc = scenario_doc("rx.toml", "../fitted.toml")
    for path, value in SETUPS[1][1].items():
        set_path(doc, path, value)
    (sub / "row2.toml").write_text(tomli_w.dumps(doc), encoding="utf-8")
    monkeypatch.chdir(REPO)
    got = observe(holdoff.run(sub / "row2.toml").report["summary"], "dut")["cpu_pct"]
    row2 = fit["rows"][1]["values"]
    assert got == next(v["model"] for v in row2 if v["column"] == "cpu_pct")


#: The apu2 fit's arguments (scripts/calibrate_apu2.py's start: 60 % of each
#: published row's all-in CPU budget per segment), 300-ms runs.
APU2_FIT = [
    "--profile", "apu2", "--costs", "tx_packet_ns,rx_packet_ns",
    "--start", "tx_packet_ns=6950", "--start", "rx_packet_ns=12490",
    "--set", "duration_ms=300",
]  # fmt: skip
APU2_CASE = REPO / "cases" / "openbsd-2025-txmit"


def test_the_apu2_fit_recovers_known_costs_from_rows_the_model_made(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Fitter agreement on the apu2's own setups (the case's TX and RX runs at
    # TIDV/TADV 64): rows made by the model with costs chosen here, unlike the
    # preset's (8000 and 15000 ns against 7220 and 16910), must give those
    # costs back from the fit's usual start. The expected values are these
    # inputs, not simulator output.
    known = {"tx_packet_ns": 8000, "rx_packet_ns": 15000}
    lines = ["label,scenario,throughput_mbps,cpu_pct"]
    for name in ("tx-64", "rx-64"):
        doc = tomllib.loads((APU2_CASE / f"{name}.toml").read_text(encoding="utf-8"))
        doc["duration_ms"] = 300
        doc["hosts"][0]["profile_overrides"] = known
        seen = observe(holdoff.run(doc).report["summary"], "apu2")
        (mbps,) = [a["throughput_mbps"] for a in seen["apps"].values() if a["throughput_mbps"]]
        lines.append(f"{name},{APU2_CASE / name}.toml,{mbps!r},{seen['cpu_pct']!r}")
    rows = tmp_path / "known.csv"
    rows.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = cli(capsys, "calibrate", rows, *APU2_FIT, "-o", tmp_path / "k.toml", "--json")
    assert code == 0, err
    fitted = {c["cost"]: c["fitted"] for c in json.loads(out)["costs"]}
    assert fitted["tx_packet_ns"] == pytest.approx(known["tx_packet_ns"], rel=0.02)
    assert fitted["rx_packet_ns"] == pytest.approx(known["rx_packet_ns"], rel=0.02)


def test_the_apu2_preset_is_what_the_fit_to_the_published_rows_gives(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A fitter-agreement check, not evidence of the model: the two published
    # rows of openbsd-tech 2025-05-19 (TX 600, RX 334 Mb/s at TIDV = TADV = 64)
    # are this fit's inputs (examples/calibrate/apu2-seed004.csv). It checks
    # that the fit meets them (residuals far inside the case's 15 %: two costs,
    # two throughputs, an exact solution exists) and that it lands where
    # scripts/calibrate_apu2.py put the preset (7220 / 16910 ns, from 1000-ms
    # runs; these are 300 ms), so that the preset and this command agree.
    rows = REPO / "examples" / "calibrate" / "apu2-seed004.csv"
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
    code, out, err = cli(
        capsys, "calibrate", rows, *APU2_FIT, "-o", tmp_path / "a" / "fit.toml", "--json"
    )
    assert code == 0, err
    fit = json.loads(out)
    for row in fit["rows"]:
        thr = next(v for v in row["values"] if v["column"] == "throughput_mbps")
        assert thr["model"] == pytest.approx(thr["measured"], rel=0.01)
    fitted = {c["cost"]: c["fitted"] for c in fit["costs"]}
    preset = cb.profile_costs("apu2")
    assert fitted["tx_packet_ns"] == pytest.approx(preset["tx_packet_ns"], rel=0.02)
    assert fitted["rx_packet_ns"] == pytest.approx(preset["rx_packet_ns"], rel=0.02)
    # Deterministic: the same inputs write the same file.
    code, _, err = cli(capsys, "calibrate", rows, *APU2_FIT, "-o", tmp_path / "b" / "fit.toml")
    assert code == 0, err
    assert (tmp_path / "a" / "fit.toml").read_bytes() == (tmp_path / "b" / "fit.toml").read_bytes()


def test_a_cost_no_row_depends_on_is_refused_with_a_hint(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A UDP flood below what the host can take: the received rate and the
    # interrupt rate follow the generator and the ITR, not the CPU costs.
    write_scenarios(tmp_path)
    rows = model_rows(tmp_path, columns=("rx_pps", "interrupts_per_s"))
    code, out, err = cli(
        capsys, "calibrate", rows, "--profile", KNOWN, "--host", "dut",
        "--costs", "context_switch_ns",
    )  # fmt: skip
    assert (code, out) == (2, "")
    assert "cost `context_switch_ns` is not identified by these rows at the start costs" in err
    assert "blocking receiver application" in err
    # With CPU measured, a cost that no path of these rows pays (forwarding).
    rows = model_rows(tmp_path)
    code, _, err = cli(
        capsys, "calibrate", rows, "--profile", KNOWN, "--host", "dut",
        "--costs", "rx_packet_ns,forward_packet_ns",
    )  # fmt: skip
    assert code == 2
    assert "cost `forward_packet_ns` is not identified" in err and "hosts[].forward" in err


def test_two_costs_that_move_together_are_refused_naming_both(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Receive rows at one frame size: every packet pays rx_packet_ns and
    # the copy of its payload, so CPU moves with both in the same proportion.
    write_scenarios(tmp_path)
    (tmp_path / "rows.csv").write_text(
        f"scenario,{RATE},{FRAME},cpu_pct\nrx.toml,20000,1500,3.0\nrx.toml,60000,1500,7.0\n",
        encoding="utf-8",
    )
    code, _, err = cli(
        capsys, "calibrate", tmp_path / "rows.csv", "--profile", KNOWN,
        "--costs", "rx_packet_ns,copy_ps_per_byte",
    )  # fmt: skip
    assert code == 2
    assert "costs `rx_packet_ns` and `copy_ps_per_byte` cannot be told apart" in err
    assert "two frame sizes" in err
    # Fewer measured values than costs.
    (tmp_path / "one.csv").write_text("scenario,cpu_pct\nrx.toml,3.0\n", encoding="utf-8")
    code, _, err = cli(
        capsys, "calibrate", tmp_path / "one.csv", "--profile", KNOWN,
        "--costs", "rx_packet_ns,tx_packet_ns",
    )  # fmt: skip
    assert code == 2 and "1 measured value(s) cannot determine 2 costs" in err


GOOD_HEAD = f"scenario,{RATE},cpu_pct\n"


@pytest.mark.parametrize(
    ("rows", "args", "words"),
    [
        (None, [], ["calibration CSV not found"]),
        (b"\x89PNG\r\n\x1a\n\x00\xff\xfe" * 20, [], ["calibration CSV", "not UTF-8 text"]),
        ("scenario,cpu\nrx.toml,3\n", [], ["unknown column `cpu`", "cpu_pct", "generators[0]"]),
        (
            GOOD_HEAD + "rx.toml,20000,high\n",
            [],
            ["row 1, column cpu_pct", "`high` is not one number"],
        ),
        # One value per cell: text after the value is an error, not dropped.
        (
            GOOD_HEAD + 'rx.toml,20000,"100000\n..."\n',
            [],
            ["row 1, column cpu_pct", "`100000\\n...` is not one number", "nothing after it"],
        ),
        (GOOD_HEAD + "rx.toml,20000,3 4\n", [], ["row 1, column cpu_pct", "not one number"]),
        (
            GOOD_HEAD + 'rx.toml,"20000\nseed=7",3\n',
            [],
            ["row 1, column generators[0].rate_pps", "text after the value"],
        ),
        (GOOD_HEAD + "rx.toml,20000,NaN\n", [], ["row 1, column cpu_pct", "NaN or infinite"]),
        (GOOD_HEAD + "rx.toml,20000,-inf\n", [], ["row 1, column cpu_pct", "NaN or infinite"]),
        (GOOD_HEAD + "rx.toml,20000,1e400\n", [], ["row 1, column cpu_pct", "too large"]),
        # A duplicated column by the name it has in the file (not `cpu_pct.1`).
        (
            "scenario,cpu_pct,cpu_pct\nrx.toml,3,4\n",
            [],
            ["column `cpu_pct` appears twice"],
        ),
        (GOOD_HEAD + "rx.toml,20000,3,9\n", [], ["row 1: 4 cells for 3 columns"]),
        (
            "scenario,cpu_pct\n" + "rx.toml,3\n" * (cb.MAX_ROWS + 1),
            [],
            [f"more than {cb.MAX_ROWS:,} rows", f"the limit is {cb.MAX_ROWS:,} rows"],
        ),
        (
            "scenario,throughput_mbps\nrx.toml,5\nrx.toml,-5\n",
            [],
            ["row 2, column throughput_mbps", "negative"],
        ),
        (GOOD_HEAD + "rx.toml,20000,0\n", [], ["row 1, column cpu_pct", "leave the cell empty"]),
        (GOOD_HEAD + "rx.toml,20000,\n", [], ["row 1: no measured value", "cpu_pct"]),
        (
            GOOD_HEAD + "none.toml,20000,3\n",
            [],
            ["row 1, column scenario", "not found", "none.toml"],
        ),
        (
            "scenario,hosts[0].nics[0].chip,cpu_pct\nrx.toml,nope,3\n",
            [],
            ["row 1", "hosts[0].nics[0].chip", "nope"],
        ),
        ("scenario,hosts[3].cores,cpu_pct\nrx.toml,2,3\n", [], ["row 1, column hosts[3].cores"]),
        (f"{RATE},cpu_pct\n20000,3\n", [], ["no `scenario` column", "--scenario"]),
        ("scenario,cpu_pct\ntx.toml,3\n", ["--profile", "xeon-modern"], ["2 hosts", "--host"]),
        ("scenario,cpu_pct\nrx.toml,3\n", ["--profile", "apu2"], ["no host", "--host"]),
        (
            "scenario,cpu_pct\nrx.toml,3\n",
            ["--costs", "rx_pkt_ns"],
            ["`rx_pkt_ns`", "rx_packet_ns"],
        ),
        ("scenario,cpu_pct\nrx.toml,3\n", ["--start", "rx_packet_ns"], ["--start", "cost=value"]),
        ("scenario,cpu_pct\nrx.toml,3\n", ["--profile", "pentium"], ["--profile", "pentium"]),
        ("scenario,cpu_pct\nrx.toml,3\n", ["--seeds", "0"], ["--seeds", "between 1 and"]),
        ("scenario,cpu_pct\nrx.toml,3\n", ["--seeds", "x"], ["--seeds", "integer"]),
        (
            "scenario,cpu_pct\nrx.toml,3\n",
            ["--set", 'name="x"\nseed=7'],
            ["--set", "text after the value"],
        ),
        ("scenario,cpu_pct\nrx.toml,3\n", ["-o", "."], ["--output", "is a folder"]),
        ("scenario,cpu_pct\n", [], ["header but no rows"]),
        ("", [], ["has no rows"]),
        (
            "scenario,latency_us\nrx.toml,50\n",
            ["--app", "nope", "--costs", "rx_packet_ns"],
            ["row 1", "no application 'nope'", "sink"],
        ),
    ],
)
def test_bad_input_exits_2_naming_the_row_and_column(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    rows: str | bytes | None,
    args: list[str],
    words: list[str],
) -> None:
    write_scenarios(tmp_path)
    csv = tmp_path / "rows.csv"
    if isinstance(rows, bytes):
        csv.write_bytes(rows)
    elif rows is not None:
        csv.write_text(rows, encoding="utf-8")
    if "--profile" not in args:
        args = ["--profile", KNOWN, *args]
    code, out, err = cli(capsys, "calibrate", csv, *args)
    assert (code, out) == (2, "")
    for w in words:
        assert w in err, f"{w!r} not in {err!r}"


def test_a_row_the_model_cannot_run_names_the_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The core refusing to run (its resource guard) is passed on with the
    # row; replaced here by a stand-in that fails for the 60 kpps row.
    write_scenarios(tmp_path)
    (tmp_path / "rows.csv").write_text(
        f"{GOOD_HEAD}rx.toml,20000,3\nrx.toml,60000,7\n", encoding="utf-8"
    )
    real = calibrate_model.run_text

    def failing(text: str, **kw: object) -> holdoff.RunResult:
        if "60000" in text:
            raise holdoff.SimulationError("run guard: too many events at one instant")
        return real(text, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate_model, "run_text", failing)
    with pytest.raises(cb.CalibrationError) as err:
        cb.calibrate(tmp_path / "rows.csv", profile=KNOWN, costs=["rx_packet_ns"], jobs=1)
    assert "row 2" in str(err.value) and "cannot run" in str(err.value)
    assert "too many events" in str(err.value)


def test_profile_files_work_in_run_validate_and_sweeps(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Scenario in scen/, profile in scen/profiles/; commands run from
    # elsewhere: the path is the scenario file's, not the working folder's.
    scen = tmp_path / "scen"
    (scen / "profiles").mkdir(parents=True)
    profile = scen / "profiles" / "mine.toml"
    profile.write_text('base = "xeon-modern"\n[costs]\nrx_packet_ns = 5000\n', encoding="utf-8")
    write_scenarios(scen, "profiles/mine.toml")
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "validate", scen / "rx.toml")[0] == 0
    code, out, err = cli(capsys, "run", scen / "rx.toml", "--json")
    assert code == 0, err
    host = json.loads(out)["summary"]["hosts"][0]
    # 20 000 packets/s x 5 us more than the preset's 0.9 us: at least 10 %
    # of the core on receive work alone.
    assert host["profile"] == "mine" and host["cpu_util"]["busy"] > 0.10
    assert holdoff.run(scen / "rx.toml").report["summary"]["hosts"][0]["profile"] == "mine"
    # A sweep over the scenario, from a sweep file in another folder.
    (tmp_path / "sweep.toml").write_text(
        f'base = "scen/rx.toml"\n[grid]\n"{RATE}" = [10000, 20000]\n', encoding="utf-8"
    )
    keys = [p.key for p in expand(load_sweep(tmp_path / "sweep.toml"))]
    code, _, err = cli(capsys, "sweep", tmp_path / "sweep.toml", "--store", tmp_path / "store")
    assert code == 0, err
    # A recalibrated file gives new store keys (its runs are not reused).
    profile.write_text('base = "xeon-modern"\n[costs]\nrx_packet_ns = 6000\n', encoding="utf-8")
    assert keys != [p.key for p in expand(load_sweep(tmp_path / "sweep.toml"))]
    # Errors name the host's field and the file.
    profile.write_text('base = "xeon-modern"\n[costs]\nrx = 1\n', encoding="utf-8")
    code, _, err = cli(capsys, "validate", scen / "rx.toml")
    assert code == 2 and "hosts[0].profile" in err and "`costs.rx`" in err


def test_help_documents_the_columns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "calibrate", "--help")
    flat = " ".join(out.split())
    assert code == 0
    for word in ("scenario", "throughput_mbps", "interrupts_per_s", "cpu_pct_all", "mpstat",
                 "latency_p99_us", "weight", "--costs", "--profile", "-o"):  # fmt: skip
        assert word in flat, word
