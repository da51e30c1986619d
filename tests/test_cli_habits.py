"""CLI habits: -h, --version, flags shown as flags, defaults shown, run --set,
run/sweep pointing at each other, bundled examples, readable sweep and results
tables."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import typer

import holdoff
from holdoff.cli import main
from holdoff.store import differing_parameters, scenario_leaves
from holdoff.sweeps import SweepError, parse_assignment, short_names
from scenarios import REPO, inline_scenario

RATE = "generators[0].rate_pps"


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_short_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "-h")
    assert code == 0 and "Usage: holdoff" in out and "reproduce" in out
    code, out, _ = cli(capsys, "run", "-h")
    assert code == 0 and "--set" in out
    code, out, _ = cli(capsys, "--version")
    assert (code, out) == (0, f"holdoff {holdoff.__version__}\n")


def test_command_list_lines_are_whole_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    # `explain`, `collect` and `replay-trace` have help paragraphs written
    # over several source lines, and the rich help keeps a docstring's line
    # breaks: the command list showed "... registers and units, the" and
    # "interval and ..." on lines of their own. Each command's line is its
    # first paragraph as one run of words, which the panel wraps at its
    # width.
    from holdoff.cli.common import app as typer_app

    group = typer.main.get_group(typer_app)
    for name, cmd in group.commands.items():
        # What the command list shows: the short help, else the help's
        # first paragraph.
        shown = cmd.short_help or inspect.cleandoc(cmd.help or "").split("\n\n")[0]
        assert shown and "\n" not in shown, name
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    flat = " ".join(ln.strip("│ ") for ln in out.splitlines())
    assert "registers and units, the interval and highest interrupt rate" in " ".join(flat.split())
    assert not re.search(r"units, the\s*│\n│\s+interval", out)


@pytest.mark.parametrize("command", ["run", "sweep", "results", "reproduce", "bench"])
def test_boolean_flags_take_no_value_in_the_help(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    code, out, _ = cli(capsys, command, "--help")
    assert code == 0
    assert "<bool>" not in out
    assert re.search(r"--json\s", out)


def test_sweep_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = cli(capsys, "sweep", "--help")
    flat = " ".join(out.split())
    assert "runs/sweeps/NAME.parquet" in flat
    assert "all cores" in flat
    assert "runs/store" in flat


def test_run_and_sweep_point_at_each_other(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "run", REPO / "examples" / "sweep-itr.toml")
    flat = " ".join(err.split())
    assert code == 2 and out == ""
    assert "holdoff sweep" in flat and "unknown field" not in flat
    code, out, err = cli(capsys, "sweep", REPO / "examples" / "quickstart.toml")
    assert code == 2 and out == ""
    assert "holdoff run" in " ".join(err.split())


def test_parse_assignment_reads_toml_literals() -> None:
    assert parse_assignment("generators[0].rate_pps=150000") == (RATE, 150000)
    assert parse_assignment("a.b = true") == ("a.b", True)
    assert parse_assignment('m={ kind = "static", itr_per_s = 8000 }') == (
        "m",
        {"kind": "static", "itr_per_s": 8000},
    )
    # A bare word that is not a TOML value is a string.
    assert parse_assignment("hosts[*].profile=xeon-modern") == ("hosts[*].profile", "xeon-modern")
    for bad in ("no-equals-sign", "=5", "x=", "hosts[0.x=1", "x=[1,"):
        with pytest.raises(SweepError):
            parse_assignment(bad)


def test_run_set_changes_fields_and_validates_like_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(inline_scenario(duration_ms=5))
    # duration_ms = 20 simulates exactly 20 ms instead of 5 ms.
    code, out, err = cli(capsys, "run", scenario, "--json", "--set", "duration_ms=20")
    assert code == 0, err
    assert json.loads(out)["summary"]["sim_time_ns"] == 20_000_000
    code, out, err = cli(
        capsys, "run", scenario, "--json", "--set", "duration_ms=20", "--set", f"{RATE}=4000"
    )
    assert code == 0, err
    gens = json.loads(out)["summary"]["generators"]
    # 4000 frames/s for 20 ms: 80 frames sent (constant rate, first frame at t = 0).
    assert gens[0]["sent_packets"] == 80
    # Errors name the path: a missing list element, then a value the core refuses.
    code, _, err = cli(capsys, "run", scenario, "--set", "hosts[7].cores=2")
    assert code == 2 and "hosts[7]" in err
    code, _, err = cli(capsys, "run", scenario, "--set", f"{RATE}=-5")
    assert code == 2 and RATE in err


def test_examples_list_and_copy_outside_the_repository(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = cli(capsys, "examples")
    assert code == 0, err
    for path in (REPO / "examples").glob("*.toml"):
        assert path.stem in out
    assert "python_moderator.py" in out
    code, out, err = cli(capsys, "examples", "copy", "sweep-itr")
    assert code == 0, err
    # A sweep brings its base scenario, so it runs from the new folder.
    assert (tmp_path / "sweep-itr.toml").is_file() and (tmp_path / "quickstart.toml").is_file()
    # The same file again (quickstart is the sweep's base): kept, not refused.
    code, out, err = cli(capsys, "examples", "copy", "quickstart")
    assert code == 0 and "kept quickstart.toml" in out, err
    # A changed file is refused, and a refused copy writes nothing: the sweep
    # is not written without its base.
    (tmp_path / "quickstart.toml").write_text("# mine\n", encoding="utf-8")
    (tmp_path / "sweep-itr.toml").unlink()
    code, _, err = cli(capsys, "examples", "copy", "sweep-itr")
    assert code == 2 and "quickstart.toml exists and differs" in err and "--force" in err
    assert not (tmp_path / "sweep-itr.toml").exists()
    assert (tmp_path / "quickstart.toml").read_text(encoding="utf-8") == "# mine\n"
    code, _, err = cli(capsys, "examples", "copy", "sweep-itr", "--force")
    assert code == 0, err
    assert (tmp_path / "quickstart.toml").read_bytes() == (
        REPO / "examples" / "quickstart.toml"
    ).read_bytes()
    code, _, err = cli(capsys, "examples", "copy", "nope")
    assert code == 2 and "quickstart" in err
    code, _, err = cli(capsys, "validate", "quickstart.toml")
    assert code == 0, err


def test_short_names_are_unique_tails() -> None:
    paths = [
        "hosts[*].nics[0].moderation.itr_per_s",
        "generators[0].rate_pps",
        "hosts[0].nics[0].moderation",
        "hosts[1].nics[0].moderation",
    ]
    assert short_names(paths) == {
        "hosts[*].nics[0].moderation.itr_per_s": "itr_per_s",
        "generators[0].rate_pps": "rate_pps",
        "hosts[0].nics[0].moderation": "hosts[0].nics[0].moderation",
        "hosts[1].nics[0].moderation": "hosts[1].nics[0].moderation",
    }
    assert short_names(["a.x.k", "b.x.k", "c.y.k"]) == {
        "a.x.k": "a.x.k",
        "b.x.k": "b.x.k",
        "c.y.k": "y.k",
    }


def test_differing_parameters() -> None:
    a = {"name": "q", "seed": 1, "hosts": [{"nics": [{"moderation": {"itr_per_s": 8000}}]}]}
    b = {"name": "q", "seed": 2, "hosts": [{"nics": [{"moderation": {"kind": "dim"}}]}]}
    assert scenario_leaves(a) == {
        "name": "q",
        "seed": 1,
        "hosts[0].nics[0].moderation.itr_per_s": 8000,
    }
    assert differing_parameters([a, b]) == {
        "hosts[0].nics[0].moderation.itr_per_s": [8000, None],
        "hosts[0].nics[0].moderation.kind": [None, "dim"],
    }
    assert differing_parameters([a, a]) == {}


def test_sweep_table_and_results_are_readable(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    (tmp_path / "base.toml").write_text(inline_scenario(duration_ms=5))
    sweep_file = tmp_path / "s.toml"
    sweep_file.write_text(f'name = "cli"\nbase = "base.toml"\n[grid]\n"{RATE}" = [1000, 3000]\n')
    store = tmp_path / "store"
    code, out, err = cli(capsys, "sweep", sweep_file, "--store", store, "-o", tmp_path / "t.pq")
    assert code == 0, err
    assert "rate_pps" in out and RATE not in out
    code, out, err = cli(capsys, "results", "--store", store, "--name", "inline")
    assert code == 0, err
    rows = json.loads(cli(capsys, "results", "--store", store, "--json")[1])
    for row in rows:
        assert str(row["seed"]) in out  # full seeds
        assert row[RATE] in (1000, 3000)
    assert "rate_pps" in out
    code, _, err = cli(capsys, "results", "--store", store, "--name", "no-such-scenario")
    assert code == 2 and "no-such-scenario" in err
