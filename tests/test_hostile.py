"""Issue 29's hostile inputs, each a regression case run as a user runs it.

Every example the issue lists is here with its exact input, run as a real
``python -m holdoff ...`` process by the command-line fuzzer's harness
(:func:`holdoff.fuzz_cli.run_case`: own session and folder, 20 s wall-time
limit, address-space limit, peak RSS bounded at 1.5 GiB). What each case
must give follows from the issue's "What it must show": a clean refusal
(exit 2, one ``error:`` line, no traceback) whose message names the file,
flag or limit, or a bounded run (exit 0); never a traceback, an abort, a
hang or a raw control character in the output.

The inputs are made with OS calls (a FIFO, a sparse ``truncate``d file,
``/dev/zero``, symlinks) by :func:`holdoff.fuzz_cases.make_fixtures` and
:func:`holdoff.fuzz_cases.size_inputs`; the expected message fragments are the
words for what each path is, not copies of the program's output.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from holdoff import fuzz_cases, fuzz_cli
from holdoff.fuzz_cases import CliCase
from holdoff.fuzz_cli import CliOutcome


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("hostile")
    f = fuzz_cases.make_fixtures(root / "files")
    (root / "sizes").mkdir()
    for label, args in fuzz_cases.size_inputs(root / "sizes", f["valid scenario"]).items():
        f["size: " + label] = json.dumps(args)
    # A profile file reached through a symbolic link (the issue: refused, must run).
    examples = Path(fuzz_cli.__file__).resolve().parent / "examples"
    profile = examples / "calibrate" / "apu2-seed004.toml"
    (root / "profile-link.toml").symlink_to(profile)
    f["symlinked profile"] = str(root / "profile-link.toml")
    # A sweep whose base is each special file.
    for kind in ("/dev/zero", "FIFO", "directory", "sparse 8 GiB file"):
        path = root / f"sweep-base-{len(f)}.toml"
        path.write_text(
            f'name = "b"\nbase = "{f[kind]}"\n[grid]\n"seed" = [1, 2]\n', encoding="utf-8"
        )
        f[f"sweep with base {kind}"] = str(path)
    # One field in two spellings; a name that climbs out of runs/sweeps.
    base = f["valid scenario"]
    (root / "two-spellings.toml").write_text(
        f'name = "two"\nbase = "{base}"\n[grid]\n'
        '"generators[0].rate_pps" = [1000, 2000]\n"generators[*].rate_pps" = [3000, 4000]\n',
        encoding="utf-8",
    )
    f["two spellings"] = str(root / "two-spellings.toml")
    (root / "escape.toml").write_text(
        f'name = "../../escaped"\nbase = "{base}"\n[grid]\n"seed" = [1, 2]\n', encoding="utf-8"
    )
    f["name with .."] = str(root / "escape.toml")
    # A capture with no frames: a pcap global header only (24 bytes: magic,
    # version 2.4, zone, sigfigs, snaplen, link type 1 = Ethernet).
    empty = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    (root / "empty.pcap").write_bytes(empty)
    f["empty capture"] = str(root / "empty.pcap")
    # NaN in an [[at]] value.
    text = Path(base).read_text(encoding="utf-8")
    (root / "at-nan.toml").write_text(
        text + '\n[[at]]\nt_ms = 5\nset = { "hosts[0].nics[0].moderation.itr_per_s" = nan }\n',
        encoding="utf-8",
    )
    f["at nan"] = str(root / "at-nan.toml")
    # A calibration CSV with one column twice.
    sizes = root / "sizes"
    (sizes / "dup.csv").write_text(
        "scenario,cpu_pct,cpu_pct\nudp-rx.toml,50,60\n", encoding="utf-8"
    )
    f["duplicated CSV column"] = str(sizes / "dup.csv")
    return f


def _run(files: dict[str, str], args: list[str], tmp_path: Path) -> CliOutcome:
    filled = []
    for a in args:
        if a.startswith("@"):
            a = files[a[1:]]
        elif '"@' in a:  # a --set value naming a file
            name = a.split('"@', 1)[1].rstrip('"')
            a = a.replace(f"@{name}", files[name])
        filled.append(a)
    return fuzz_cli.run_case(CliCase(" ".join(args), "hostile", filled), tmp_path / "work")


def _check(out: CliOutcome, expect: str, words: tuple[str, ...], absent: tuple[str, ...]) -> None:
    shown = f"{out.case.args[:6]}: {out.result} {out.detail}\n{out.stderr[-2000:]}"
    if expect == "clean":
        assert out.result in ("refused", "ran"), shown
    else:
        assert out.result == expect, shown
    for w in words:
        # Errors and warnings before a run go to stderr; a run's own report
        # warnings are in its summary on stdout.
        said = " ".join((out.stderr + out.stdout).split())
        assert w in said, f"{w!r} not in the message; {shown}"
    for w in absent:
        assert w not in out.stderr, f"{w!r} in the message; {shown}"


# (id, args, expected result, words the message must have, words it must not)
SPECIAL = [("/dev/zero", "device"), ("FIFO", "FIFO"), ("directory", "directory")]
SPECIAL += [("sparse 8 GiB file", "8")]

CASES: list[tuple[str, list[str], str, tuple[str, ...], tuple[str, ...]]] = []
for kind, word in SPECIAL:
    CASES += [
        (f"scenario is {kind}", ["run", f"@{kind}"], "refused", (word,), ("not found",)),
        (
            f"profile file is {kind}",
            ["run", "@valid scenario", "--set", f'hosts[0].profile="@{kind}"'],
            "refused",
            (),
            ("not found", "empty file", "/dev/zero.toml"),
        ),
        (
            f"capture is {kind}",
            ["tune", "--capture", f"@{kind}", "--driver", "linux-igb", "--chip", "i210"],
            "refused",
            () if kind.startswith("sparse") else (word,),  # a capture has no size limit
            ("not found",),
        ),
        (
            f"replayed capture is {kind}",
            ["run", "@replay scenario", "--set", f'generators[0].capture="@{kind}"'],
            "refused",
            (),
            ("not found", "empty file"),
        ),
        (
            f"calibration CSV is {kind}",
            ["calibrate", f"@{kind}", "--profile", "xeon-modern"],
            "refused",
            (word,),
            ("not found",),
        ),
        (
            f"explain input is {kind}",
            ["explain", "--driver", "linux-igb", f"@{kind}"],
            "refused",
            (word,),
            ("not found",),
        ),
        (
            f"sweep base is {kind}",
            ["sweep", f"@sweep with base {kind}", "--dry-run"],
            "refused",
            (),
            ("not found", "empty file"),
        ),
    ]
CASES += [
    (
        "symlinked profile file runs",
        ["run", "@valid scenario", "--set", 'hosts[0].profile="@symlinked profile"'],
        "ran",
        (),
        (),
    ),
    # Nesting and recursion.
    ("TOML array 20 000 deep", ["run", "@deep TOML array"], "refused", ("64",), ()),
    ("TOML inline table 20 000 deep", ["run", "@deep TOML inline table"], "refused", ("64",), ()),
    ("TOML dotted keys 10 000 deep", ["run", "@deep TOML dotted keys"], "refused", ("64",), ()),
    (
        "JSON array 20 000 deep to explain --json",
        ["explain", "--driver", "linux-e1000", "--json", "@deep JSON"],
        "refused",
        ("64",),
        (),
    ),
    ("JSON array 20 000 deep as a report input", ["report", "@deep JSON"], "refused", ("64",), ()),
    (
        "--set path of 10 000 segments",
        ["run", "@valid scenario", "--set", "a" + ".a" * 10_000 + "=1"],
        "refused",
        ("--set", "64"),
        (),
    ),
    # Sizes the model cannot hold: a limit named before work, or a bounded run.
    *(
        (label, [f"@size: {label}"], "clean", (), ())
        for label in (
            "run <- 100 000 hosts",
            "run <- 1 us samples over 20 s",
            "run <- 10 000 [[at]] changes on 1 000 hosts",
            "sweep --dry-run <- 10^9 grid points",
            "sweep --dry-run <- 10^9 replicates",
            "calibrate <- 100 000 rows",
        )
    ),
    (
        "tune --trials 10 000 000",
        [
            *("tune", "--mix", "rr", "--driver", "linux-igb", "--search", "optuna"),
            *("--trials", "10000000", "--duration-ms", "2", "--no-store"),
        ],
        "clean",
        (),
        (),
    ),
    # Text that is not one value.
    (
        "--set with a table header after a newline",
        ["run", "@valid scenario", "--set", 'name="x"\n[[hosts]]'],
        "refused",
        ("--set", "text after the value"),
        (),
    ),
    (
        "--set with a second key after a newline",
        ["run", "@valid scenario", "--set", 'name="x"\nseed=7'],
        "refused",
        ("--set", "text after the value"),
        (),
    ),
    (
        "calibration cell 100000 and a newline",
        ["@size: calibrate <- a cell with a newline"],
        "refused",
        ("row",),
        (),
    ),
    (
        "NUL in a name",
        ["run", "@valid scenario", "--set", 'name="a\\u0000b"'],
        "refused",
        ("name",),
        (),
    ),
    (
        "escape sequences in the scenario name",
        ["run", "@valid scenario", "--set", 'name="\\u001b[2J\\u001b[31mforged"'],
        "clean",
        (),
        (),
    ),
    (
        "a forged summary line in a host name",
        ["run", "@valid scenario", "--set", 'hosts[0].nics[0].name="e\\nrun finished"'],
        "clean",
        (),
        (),
    ),
    # Silently wrong results.
    (
        "one sweep field in two spellings",
        ["sweep", "@two spellings", "--dry-run"],
        "refused",
        ("rate_pps",),
        (),
    ),
    (
        "tune a capture with no frames",
        ["tune", "--capture", "@empty capture", "--driver", "linux-igb", "--chip", "i210"],
        "refused",
        (),
        (),
    ),
    (
        "run a capture with no frames",
        ["run", "@replay scenario", "--set", 'generators[0].capture="@empty capture"'],
        "ran",
        ("replayed no frames",),
        (),
    ),
    (
        "explain a ring of -8",
        ["explain", "--driver", "linux-igb", "--rx-ring", "-8"],
        "refused",
        (),
        (),
    ),
    (
        "explain a ring of 10^21",
        ["explain", "--driver", "linux-igb", "--rx-ring", str(10**21)],
        "refused",
        (),
        (),
    ),
    # Escaping the output folder.
    ("sweep name with ../", ["sweep", "@name with ..", "--no-store"], "refused", ("name",), ()),
    # Tracebacks on damaged inputs.
    ("report a truncated Parquet file", ["report", "@truncated Parquet"], "refused", (), ()),
    ("report a garbage Parquet file", ["report", "@garbage Parquet"], "refused", (), ()),
    ("report a text-only Parquet file", ["report", "@text-only Parquet"], "refused", (), ()),
    ("report a JSON list", ["report", "@JSON list"], "refused", (), ()),
    ("report a JSON string", ["report", "@JSON string"], "refused", (), ()),
    (
        "examples copy --to a regular file",
        ["examples", "copy", "quickstart", "--to", "@valid scenario"],
        "refused",
        ("--to",),
        (),
    ),
    # Messages that mislead.
    (
        "a CPU budget over 100 %",
        ["tune", "--mix", "rr", "--driver", "linux-igb", "--objective", "cpu<=300"],
        "refused",
        ("100%",),
        (),
    ),
    ("NaN in an [[at]] value", ["validate", "@at nan"], "refused", (), ("one of ['nan']",)),
    (
        "a duplicated CSV column",
        ["calibrate", "@duplicated CSV column", "--profile", "xeon-modern"],
        "refused",
        ("cpu_pct",),
        ("cpu_pct.1",),
    ),
    # Every other special file and encoding as a scenario.
    ("scenario is a symlink loop", ["run", "@symlink loop"], "refused", ("loop",), ()),
    ("scenario is UTF-16", ["run", "@UTF-16 text"], "refused", ("UTF-16",), ()),
    ("scenario is not UTF-8", ["run", "@invalid UTF-8"], "refused", ("offset",), ()),
    ("scenario has a NUL byte", ["run", "@NUL byte"], "refused", ("NUL",), ()),
    ("scenario has a UTF-8 BOM", ["validate", "@UTF-8 BOM"], "ran", (), ()),
]


@pytest.mark.parametrize(
    ("args", "expect", "words", "absent"),
    [pytest.param(a, e, w, n, id=i) for i, a, e, w, n in CASES],
)
def test_hostile_input(
    files: dict[str, str],
    tmp_path: Path,
    args: list[str],
    expect: str,
    words: tuple[str, ...],
    absent: tuple[str, ...],
) -> None:
    if len(args) == 1 and args[0].startswith("@size: "):
        args = json.loads(files[args[0][1:]])
    out = _run(files, args, tmp_path)
    _check(out, expect, words, absent)


def test_a_toml_error_does_not_echo_the_input(files: dict[str, str], tmp_path: Path) -> None:
    out = _run(files, ["run", "@40 KB line"], tmp_path)
    _check(out, "refused", (), ())
    assert len(out.stderr) < 2000, len(out.stderr)


def test_report_recomputes_the_ledger(files: dict[str, str], tmp_path: Path) -> None:
    # The ledger: injected 5 = delivered 1 + dropped 0 + in flight 0,
    # labelled balanced. 1 + 0 + 0 != 5, so the report must not call it balanced.
    ran = _run(files, ["run", "@valid scenario", "--json"], tmp_path)
    assert ran.result == "ran", ran.detail
    report = json.loads(ran.stdout)
    report["summary"]["ledger"].update(
        injected=5, delivered=1, dropped=0, in_flight=0, balanced=True
    )
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    html = tmp_path / "out.html"
    written = _run(files, ["report", str(path), "-o", str(html)], tmp_path)
    assert written.result == "ran", written.detail
    page = html.read_text(encoding="utf-8")
    assert "NOT balanced" in page


def _session_pids(sid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == sid:
                    pids.append(int(entry))
            except (ProcessLookupError, PermissionError):
                continue
    return pids


def _slow_sweep(tmp_path: Path, base: str) -> Path:
    # Eight points of about 3 s each (60 s simulated of the quickstart host).
    rates = [100_000 * (i + 1) for i in range(8)]
    path = tmp_path / "slow.toml"
    path.write_text(
        f'name = "slow"\nbase = "{base}"\n[set]\nduration_ms = 60000\n'
        f'[grid]\n"generators[0].rate_pps" = {rates}\n',
        encoding="utf-8",
    )
    return path


def _start_in_session(cmd: list[str], cwd: Path, *, stderr: int) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in a session of its own (so its whole group can be signalled)."""
    return subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True
    )


def test_sigterm_stops_a_sweep_and_its_workers(files: dict[str, str], tmp_path: Path) -> None:
    sweep = _slow_sweep(tmp_path, files["valid scenario"])
    store = tmp_path / "store"
    cmd = [sys.executable, "-m", "holdoff", "sweep", str(sweep), "--store", str(store)]
    proc = _start_in_session([*cmd, "--workers", "2"], tmp_path, stderr=subprocess.PIPE)
    try:
        time.sleep(4)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        # As Ctrl-C, but by SIGTERM: exit 143, and no worker left behind.
        assert proc.returncode == 143, err.decode()[-1000:]
        assert b"Traceback" not in err
        time.sleep(1)
        assert _session_pids(proc.pid) == []
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # SIGKILL mid-sweep, then the same sweep again: it resumes cleanly.
    killed = _start_in_session([*cmd, "--workers", "2"], tmp_path, stderr=subprocess.DEVNULL)
    time.sleep(4)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    again = subprocess.run([*cmd, "--workers", "1"], cwd=tmp_path, capture_output=True, timeout=600)
    assert again.returncode == 0, again.stderr.decode()[-1000:]
    assert b"Traceback" not in again.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["report", "@run report", "-o", "{fifo}"],
        ["sweep", "@valid sweep", "--no-store", "--out", "{fifo}"],
        ["tune", "--mix", "rr", "--driver", "linux-igb", "--report", "{fifo}"],
    ],
    ids=["report -o", "sweep --out", "tune --report"],
)
def test_an_output_that_is_a_device_is_not_replaced(
    files: dict[str, str], tmp_path: Path, args: list[str]
) -> None:
    # An HTML report or a sweep table is written to a temporary file renamed
    # over the output path: given a device (as root, /dev/null) the rename
    # replaced the device with a file. A FIFO stands in for the device here;
    # it must be refused and left a FIFO.
    ran = _run(files, ["run", "@valid scenario", "--json"], tmp_path)
    report = tmp_path / "report.json"
    report.write_text(ran.stdout, encoding="utf-8")
    fifo = tmp_path / "device"
    os.mkfifo(fifo)
    filled = [str(report) if a == "@run report" else a.replace("{fifo}", str(fifo)) for a in args]
    out = _run(files, filled, tmp_path)
    _check(out, "refused", ("FIFO",), ())
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
