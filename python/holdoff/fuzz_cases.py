"""The cases of the command-line fuzzer (:mod:`holdoff.fuzz_cli`): inputs and command lines.

:func:`make_fixtures` makes every input file with OS calls (a FIFO, symlinks,
a sparse ``truncate``d 8 GiB file that costs no disk, files in other
encodings, deeply nested TOML and JSON, damaged Parquet and JSON);
:func:`all_cases` builds the command lines that put them where users put
them: every file kind in every command's file slot (:data:`FILE_SLOTS`,
:data:`FILE_KINDS`), ``--set`` injection and depth, option values at and past
their bounds, control characters in names, damaged result stores, issue 29's
oversized inputs (:func:`size_inputs`) and random byte mutations of valid
inputs. Deterministic: the same seed gives the same cases in the same order.
"""

from __future__ import annotations

import math
import os
import random
import shutil
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import tomli_w

DURATION_MS = 20
"""Simulated time of the valid scenarios the cases start from [ms]."""


@dataclass
class CliCase:
    """One command line to run: ``args`` after ``python -m holdoff``."""

    label: str
    kind: str
    args: list[str]
    stdin: bytes | None = None
    #: A FIFO given as an output path, which must still be a FIFO after the run.
    fifo_kept: str | None = None


# ------------------------------------------------------------------ fixtures


def _examples() -> Path:
    return Path(__file__).resolve().parent / "examples"


def _capped(doc: dict[str, object]) -> dict[str, object]:
    doc = dict(doc)
    doc["duration_ms"] = DURATION_MS
    doc.pop("sample_interval_us", None)
    return doc


def _deep_toml_array(depth: int) -> str:
    return "a = " + "[" * depth + "]" * depth + "\n"


def make_fixtures(root: Path) -> dict[str, str]:
    """Every input file the cases use, made under ``root``: name -> path.

    Made with OS calls only (``mkfifo``, ``symlink``, a sparse ``truncate``,
    which costs no disk).
    """
    root.mkdir(parents=True, exist_ok=True)
    f: dict[str, str] = {}

    def put(name: str, data: bytes | str) -> str:
        path = root / name
        if isinstance(data, str):
            data = data.encode("utf-8")
        path.write_bytes(data)
        return str(path)

    quick = tomllib.loads((_examples() / "quickstart.toml").read_text(encoding="utf-8"))
    valid = tomli_w.dumps(_capped(quick))
    f["valid scenario"] = put("valid.toml", valid)
    link = root / "valid-link.toml"
    link.symlink_to(root / "valid.toml")
    f["symlink to a valid scenario"] = str(link)
    replay = tomllib.loads((_examples() / "replay-office.toml").read_text(encoding="utf-8"))
    for gen in replay.get("generators", []):
        if isinstance(gen, dict) and "capture" in gen:
            gen["capture"] = str(_examples() / str(gen["capture"]))
    f["replay scenario"] = put("replay.toml", tomli_w.dumps(_capped(replay)))
    f["valid sweep"] = put(
        "sweep.toml",
        f'name = "fz"\nbase = "{root / "valid.toml"}"\nseed = 3\n[grid]\n'
        '"hosts[0].nics[0].moderation.itr_per_s" = [4000, 8000]\n',
    )
    f["valid ethtool -c"] = str(_examples() / "explain" / "e1000-rx-usecs-3.json")
    f["calibration rows"] = str(_examples() / "calibrate" / "apu2-seed004.csv")
    f["valid capture"] = str(_examples() / "captures" / "office.pcapng")

    f["broken C moderator"] = put(
        "broken.c", '#include "kernel_shim.h"\nvoid f(struct holdoff_ctx *c) { u32 x = ; }\n'
    )
    f["missing file"] = str(root / "no-such-file.toml")
    (root / "folder").mkdir()
    f["directory"] = str(root / "folder")
    os.mkfifo(root / "fifo")
    f["FIFO"] = str(root / "fifo")
    # The same behind a name with the expected suffix (a profile file must end in .toml).
    os.mkfifo(root / "fifo.toml")
    f["FIFO named .toml"] = str(root / "fifo.toml")
    (root / "zero.toml").symlink_to("/dev/zero")
    f["link.toml to /dev/zero"] = str(root / "zero.toml")
    f["/dev/zero"] = "/dev/zero"
    f["/dev/null"] = "/dev/null"
    (root / "loop-a").symlink_to(root / "loop-b")
    (root / "loop-b").symlink_to(root / "loop-a")
    f["symlink loop"] = str(root / "loop-a")
    (root / "dangling").symlink_to(root / "gone.toml")
    f["dangling symlink"] = str(root / "dangling")
    with open(root / "sparse-8g.toml", "wb") as h:
        h.truncate(8 * 2**30)
    f["sparse 8 GiB file"] = str(root / "sparse-8g.toml")
    f["empty file"] = put("empty.toml", b"")
    f["file as a folder"] = str(root / "valid.toml" / "x.toml")
    f["long path"] = str(root / ("x" * 250) / ("y" * 250) / "z.toml")
    f["newline in the name"] = put("new\nline\x1b[31m.toml", valid)

    f["UTF-16 text"] = put("utf16.toml", valid.encode("utf-16"))
    f["invalid UTF-8"] = put("latin1.toml", valid.encode("utf-8") + b"# caf\xe9\n")
    f["UTF-8 BOM"] = put("bom.toml", b"\xef\xbb\xbf" + valid.encode("utf-8"))
    f["NUL byte"] = put("nul.toml", valid.replace("[[hosts]]", "\0[[hosts]]", 1))
    f["binary garbage"] = put(
        "garbage.bin", bytes(random.Random(7).randrange(256) for _ in range(4096))
    )
    f["deep TOML array"] = put("deep-array.toml", _deep_toml_array(20_000))
    f["deep TOML inline table"] = put(
        "deep-table.toml", "a = " + "{ b = " * 20_000 + "1" + " }" * 20_000 + "\n"
    )
    f["deep TOML dotted keys"] = put("deep-dotted.toml", "a." * 10_000 + "b = 1\n")
    f["40 KB line"] = put("long-line.toml", 'name = "' + "x" * 40_000 + "\n")
    f["deep JSON"] = put("deep.json", "[" * 20_000 + "]" * 20_000)
    f["JSON list"] = put("list.json", "[1, 2, 3]")
    f["JSON string"] = put("string.json", '"report"')
    f["truncated JSON"] = put("truncated.json", '{"summary": {"ledger": ')
    f["JSON with NaN"] = put("nan.json", '{"summary": NaN, "seed": NaN}')

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"scenario": ["fz"], "seed": [1], "latency_us_p99_max": [3.0]})
    pq.write_table(table, root / "good.parquet")
    whole = (root / "good.parquet").read_bytes()
    f["truncated Parquet"] = put("truncated.parquet", whole[: len(whole) // 2])
    f["garbage Parquet"] = put("garbage.parquet", b"PAR1" + bytes(200) + b"PAR1")
    f["text-only Parquet"] = put("text.parquet", "scenario,seed\nfz,1\n")
    return f


# Command lines with a slot ``{}`` for the file under test.
FILE_SLOTS: list[tuple[str, list[str]]] = [
    ("validate", ["validate", "{}"]),
    ("run", ["run", "{}"]),
    ("run --json", ["run", "{}", "--json"]),
    ("sweep --dry-run", ["sweep", "{}", "--dry-run"]),
    ("tune scenario", ["tune", "{}", "--driver", "linux-e1000", "--duration-ms", "5"]),
    ("tune --capture", ["tune", "--capture", "{}", "--driver", "linux-igb", "--chip", "i210"]),
    ("explain", ["explain", "--driver", "linux-e1000", "{}"]),
    ("explain --ring", ["explain", "--driver", "linux-e1000", "--ring", "{}"]),
    ("calibrate", ["calibrate", "{}", "--profile", "ideal"]),
    ("report", ["report", "{}", "-o", "out.html"]),
    ("results --store", ["results", "--store", "{}"]),
    ("examples copy --to", ["examples", "copy", "quickstart", "--to", "{}"]),
    ("profile file", ["run", "@valid scenario", "--set", 'hosts[0].profile="{}"']),
    ("capture", ["run", "@replay scenario", "--set", 'generators[0].capture="{}"']),
]

# Kinds tried in every slot; the valid ones check that a good input still works.
FILE_KINDS = [
    "missing file",
    "directory",
    "FIFO",
    "FIFO named .toml",
    "/dev/zero",
    "link.toml to /dev/zero",
    "/dev/null",
    "symlink loop",
    "dangling symlink",
    "sparse 8 GiB file",
    "empty file",
    "file as a folder",
    "long path",
    "newline in the name",
    "UTF-16 text",
    "invalid UTF-8",
    "UTF-8 BOM",
    "NUL byte",
    "binary garbage",
    "deep TOML array",
    "deep TOML inline table",
    "deep TOML dotted keys",
    "40 KB line",
    "deep JSON",
    "JSON list",
    "JSON string",
    "truncated JSON",
    "JSON with NaN",
    "truncated Parquet",
    "garbage Parquet",
    "text-only Parquet",
    "symlink to a valid scenario",
]


def _fill(args: list[str], fixtures: dict[str, str], value: str) -> list[str]:
    out = []
    for a in args:
        if a.startswith("@"):
            out.append(fixtures[a[1:]])
        else:
            out.append(a.replace("{}", value))
    return out


def file_cases(fixtures: dict[str, str]) -> list[CliCase]:
    """Every file kind in every file slot."""
    cases = []
    for slot, args in FILE_SLOTS:
        for kind in FILE_KINDS:
            value = fixtures[kind]
            if "{}" in "".join(args) and '"{}"' in "".join(args):
                value = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
                value = value.replace("\x1b", "\\u001b")
            cases.append(CliCase(f"{slot} <- {kind}", "file", _fill(args, fixtures, value)))
    return cases


def set_cases(fixtures: dict[str, str]) -> list[CliCase]:
    """Injection and depth through ``--set`` (the examples of issue 29 among them)."""
    v = fixtures["valid scenario"]
    values = {
        "newline then a table header": 'name="x"\n[[hosts]]',
        "newline then a second key": 'name="x"\nseed=7',
        "CR LF then a second key": 'name="x"\r\nseed=7',
        "comment then a second key": 'name="x" # c\nseed=7',
        "10 000-segment path": "a" + ".a" * 10_000 + "=1",
        "10 000-deep value": "name=" + "[" * 10_000 + "]" * 10_000,
        "deep inline table value": "name=" + "{a=" * 5_000 + "1" + "}" * 5_000,
        "no value": "name=",
        "no path": "=1",
        "no equals sign": "name",
        "NaN seed": "seed=nan",
        "huge seed": "seed=" + "9" * 40,
        "negative seed": "seed=-1",
        "float duration": "duration_ms=1e300",
        "escape sequence in the name": 'name="\\u001b[2J\\u001b[31mforged"',
        "newline in the name": 'name="a\\nrun finished: 0 drops"',
        "NUL in the name": 'name="a\\u0000b"',
        "bidi override in the name": 'name="abc\\u202edef"',
        "host name with escapes": 'hosts[0].name="h\\u001b]0;title\\u0007"',
        "index past the end": "hosts[99].name=x",
        "negative index": "hosts[-1].name=x",
        "star index": "hosts[*].name=x",
        "control character in the path": "na\x1bme=1",
        "unicode path": "nämé=1",
        "very long value": 'name="' + "x" * 100_000 + '"',
    }
    # Bad `kind = "c"` tables: no such file, no entry, an entry that is no C
    # name, params that are not integers, a file that does not compile.
    mod = "hosts[0].nics[0].moderation="
    broken = fixtures["broken C moderator"].replace("\\", "\\\\").replace('"', '\\"')
    values |= {
        "C moderator, missing source": mod + '{ kind = "c", source = "absent.c", entry = "f" }',
        "C moderator, no entry": mod + f'{{ kind = "c", source = "{broken}" }}',
        "C moderator, entry not a C name": mod
        + f'{{ kind = "c", source = "{broken}", entry = "f;x" }}',
        "C moderator, string param": mod
        + f'{{ kind = "c", source = "{broken}", entry = "f", params = {{ a = "x" }} }}',
        "C moderator, compile error": mod + f'{{ kind = "c", source = "{broken}", entry = "f" }}',
    }
    return [CliCase(f"run --set <- {k}", "set", ["run", v, "--set", s]) for k, s in values.items()]


def option_cases(fixtures: dict[str, str]) -> list[CliCase]:
    """Option values at and past their bounds, on commands that read no hostile file."""
    v, sw = fixtures["valid scenario"], fixtures["valid sweep"]
    lines: dict[str, list[str]] = {
        "run --seed -1": ["run", v, "--seed", "-1"],
        "run --seed 2**64": ["run", v, "--seed", str(2**64)],
        "run --seed 2**64-1": ["run", v, "--seed", str(2**64 - 1)],
        "run --seed text": ["run", v, "--seed", "x"],
        "run --out a file": ["run", v, "--out", v],
        "run --out /dev/null": ["run", v, "--out", "/dev/null"],
        "sweep --workers 0": ["sweep", sw, "--workers", "0", "--no-store"],
        "sweep --workers 10**9 --dry-run": ["sweep", sw, "--workers", "1000000000", "--dry-run"],
        "sweep --executor nope": ["sweep", sw, "--executor", "nope"],
        "sweep --out into /dev/null/x": ["sweep", sw, "--out", "/dev/null/x.parquet", "--no-store"],
        "results --limit 0": ["results", "--limit", "0"],
        "results --query garbage": ["results", "--store", ".", "--query", "SELEC * FROM"],
        "tune --trials 0": ["tune", "--mix", "rr", "--driver", "linux-igb", "--trials", "0"],
        "tune --trials -5": ["tune", "--mix", "rr", "--driver", "linux-igb", "--trials", "-5"],
        "tune --trials 10**7": [
            *("tune", "--mix", "rr", "--driver", "linux-igb", "--search", "optuna"),
            *("--trials", "10000000", "--duration-ms", "2", "--no-store"),
        ],
        "tune --objective %": ["tune", "--mix", "rr", "--driver", "linux-igb", "-O", "cpu<=300"],
        "tune --objective garbage": ["tune", "--mix", "rr", "--driver", "linux-igb", "-O", "p99"],
        "tune --rate nan": ["tune", "--mix", "rr", "--driver", "linux-igb", "--rate", "nan"],
        "tune --rate inf": ["tune", "--mix", "rr", "--driver", "linux-igb", "--rate", "inf"],
        "tune --rate -1": ["tune", "--mix", "rr", "--driver", "linux-igb", "--rate", "-1"],
        "tune --span garbage": [
            *("tune", "--capture", fixtures["valid capture"], "--driver", "linux-igb"),
            *("--chip", "i210", "--span", "9:1"),
        ],
        "tune --only-to garbage": [
            *("tune", "--capture", fixtures["valid capture"], "--driver", "linux-igb"),
            *("--chip", "i210", "--only-to", "eth0\x1b[2J"),
        ],
        "tune --only-to nobody": [
            *("tune", "--capture", fixtures["valid capture"], "--driver", "linux-igb"),
            *("--chip", "i210", "--only-to", "203.0.113.9"),
        ],
        "tune --mtu 0": [
            *("tune", "--capture", fixtures["valid capture"], "--driver", "linux-igb"),
            *("--chip", "i210", "--mtu", "0"),
        ],
        "tune --mtu 10**12": [
            *("tune", "--capture", fixtures["valid capture"], "--driver", "linux-igb"),
            *("--chip", "i210", "--mtu", str(10**12)),
        ],
        "tune --mtu without a capture": [
            *("tune", "--mix", "rr", "--driver", "linux-igb", "--mtu", "9000"),
        ],
        "explain ring -8": ["explain", "--driver", "linux-e1000", "--rx-ring", "-8"],
        "explain ring 10**21": ["explain", "--driver", "linux-e1000", "--rx-ring", str(10**21)],
        "explain --set newline": ["explain", "--driver", "linux-e1000", "--set", "rx-usecs=3\nx=1"],
        "explain --set nan": ["explain", "--driver", "linux-e1000", "--set", "rx-usecs=nan"],
        "explain --iface escapes": ["explain", "--driver", "linux-e1000", "--iface", "e\x1b[2Jx"],
        "explain unknown driver": ["explain", "--driver", "nope"],
        "reproduce unknown case": ["reproduce", "no-such-case"],
        "examples copy unknown": ["examples", "copy", "no-such-example"],
        "report no inputs": ["report"],
        "report -o into a folder": ["report", fixtures["valid scenario"], "-o", "/"],
        "experiment unknown": ["experiment", "no-such-experiment"],
        "experiment --out a file": ["experiment", "napi-modes", "--out", v],
        "experiment --duration-ms 10**6": ["experiment", "napi-modes", "--duration-ms", "1000000"],
        "livelock --duration-ms 10**9": ["livelock", "--duration-ms", "1000000000"],
        "livelock --out a folder": ["livelock", "--out", "/"],
        "battery --seeds 0": ["battery", "static", "--seeds", "0", "--no-store"],
        "battery --seeds 10**9": ["battery", "static", "--seeds", "1000000000", "--no-store"],
        "battery unknown kind": ["battery", "no-such-kind", "--no-store"],
        "battery missing file": ["battery", "/nonexistent/m.py:M", "--no-store"],
        "battery --chips nope": ["battery", "static", "--chips", "nope", "--no-store"],
        "battery --workers 0": ["battery", "static", "--workers", "0", "--no-store"],
        "unknown command": ["frobnicate"],
    }
    explain = ["explain", "--driver", "linux-e1000", "-"]
    stdin = {
        "explain - <- 17 MiB on stdin": b"rx-usecs: 3\n" * (17 * 2**20 // 12),
        "explain - <- deep JSON on stdin": b"[" * 20_000 + b"]" * 20_000,
        "explain - <- invalid UTF-8 on stdin": b"rx-usecs: 3\n\xff\n",
        "explain - <- NUL on stdin": b"rx-usecs: 3\x00\n",
    }
    return [CliCase(k, "option", a) for k, a in lines.items()] + [
        CliCase(k, "option", explain, stdin=data) for k, data in stdin.items()
    ]


def _sparse(path: Path, size_bytes: int) -> None:
    with open(path, "wb") as h:
        h.truncate(size_bytes)


def store_cases(root: Path) -> list[CliCase]:
    """``holdoff results`` over stores with damaged entries of every kind."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    good = {
        "holdoff_version": "0.0.0-fuzz",
        "scenario": "fz",
        "seed": 1,
        "sim_time_ns": 1_000_000,
        "interrupts_per_s_total": 1000.0,
        "dropped": 0,
        "scenario_toml": 'name = "fz"\n',
    }
    damage: dict[str, Callable[[Path, str], object]] = {
        "no sim_time_ns": lambda p, k: pq.write_table(
            pa.Table.from_pylist([{"scenario_hash": k, "seed": 1}]), p
        ),
        "NaN seed": lambda p, k: pq.write_table(
            pa.Table.from_pylist([{**good, "scenario_hash": k, "seed": math.nan}]), p
        ),
        "truncated entry": lambda p, k: p.write_bytes(b"PAR1\x15\x04"),
        "garbage entry": lambda p, k: p.write_bytes(bytes(range(256))),
        "text-only entry": lambda p, k: p.write_text("scenario_hash,seed\n"),
        "empty entry": lambda p, k: p.write_bytes(b""),
        "deep scenario_toml": lambda p, k: pq.write_table(
            pa.Table.from_pylist(
                [{**good, "scenario_hash": k, "scenario_toml": _deep_toml_array(20_000)}]
            ),
            p,
        ),
        "escape sequence in the scenario name": lambda p, k: pq.write_table(
            pa.Table.from_pylist([{**good, "scenario_hash": k, "scenario": "x\x1b[2Jy\nz"}]), p
        ),
        "entry is a FIFO": lambda p, k: os.mkfifo(p),
        "entry is a folder": lambda p, k: p.mkdir(),
        "entry links to /dev/zero": lambda p, k: p.symlink_to("/dev/zero"),
        "entry is a sparse 8 GiB file": lambda p, k: _sparse(p, 8 * 2**30),
    }
    cases = []
    for i, (label, make) in enumerate(damage.items()):
        folder = root / f"store-{i}"
        folder.mkdir()
        keep = "1" * 64
        pq.write_table(
            pa.Table.from_pylist([{**good, "scenario_hash": keep}]), folder / f"{keep}.parquet"
        )
        key = f"{i + 10:x}".rjust(64, "a")
        make(folder / f"{key}.parquet", key)
        for extra in ([], ["--json"]):
            cases.append(
                CliCase(
                    f"results <- {label}{' --json' if extra else ''}",
                    "store",
                    ["results", "--store", str(folder), *extra],
                )
            )
    return cases


def name_cases(root: Path, fixtures: dict[str, str]) -> list[CliCase]:
    """Scenarios whose names carry control characters, printed by ``run``."""
    doc = tomllib.loads(Path(fixtures["valid scenario"]).read_text(encoding="utf-8"))
    names = {
        "escape sequence": "q\x1b[2J\x1b[31mforged",
        "newline and a forged line": "q\nrun finished: 0 drops",
        "carriage return": "q\roverwritten",
        "bell and backspace": "q\x07\x08\x08x",
        "C1 control": "q\x9bK",
        "DEL": "q\x7f",
        "bidi override": "abc\u202edef",
    }
    cases = []
    for i, (label, name) in enumerate(names.items()):
        for where in ("scenario", "host", "nic"):
            d = tomllib.loads(tomli_w.dumps(doc))
            if where == "scenario":
                d["name"] = name
            elif where == "host":
                old = d["hosts"][0]["name"]
                d["hosts"][0]["name"] = name
                for link in d.get("links", []):
                    for end in ("a", "b"):
                        if isinstance(link.get(end), str) and link[end].split(".")[0] == old:
                            link[end] = name + link[end][len(old) :]
                for gen in d.get("generators", []):
                    if gen.get("host") == old:
                        gen["host"] = name
                for app in d.get("apps", []):
                    if app.get("host") == old:
                        app["host"] = name
            else:
                d["hosts"][0]["nics"][0]["name"] = name
            path = root / f"name-{i}-{where}.toml"
            path.write_text(tomli_w.dumps(d), encoding="utf-8")
            for extra in ([], ["--json"]):
                cases.append(
                    CliCase(
                        f"run <- {label} in the {where} name{' --json' if extra else ''}",
                        "name",
                        ["run", str(path), *extra],
                    )
                )
    return cases


def size_inputs(root: Path, valid: str) -> dict[str, list[str]]:
    """Command lines with inputs larger than the model can hold (issue 29's examples).

    Files are written under ``root``; ``valid`` is a valid scenario file.
    """
    doc = tomllib.loads(Path(valid).read_text(encoding="utf-8"))
    host = doc["hosts"][-1]

    def hosts(n: int) -> list[dict[str, object]]:
        return [{**host, "name": f"h{i}"} for i in range(n)]

    many = {**doc, "hosts": doc["hosts"] + hosts(100_000)}
    (root / "hosts-100k.toml").write_text(tomli_w.dumps(many), encoding="utf-8")
    at = [
        {"t_ms": 1 + (i * 18) // 10_000, "set": {"hosts[0].nics[0].moderation.itr_per_s": 4000 + i}}
        for i in range(10_000)
    ]
    changes = {**doc, "hosts": doc["hosts"] + hosts(1_000), "at": at}
    (root / "at-10k-1k-hosts.toml").write_text(tomli_w.dumps(changes), encoding="utf-8")
    field = "hosts[0].nics[0].moderation.itr_per_s"
    (root / "grid-1e9.toml").write_text(
        f'name = "huge"\nbase = "{valid}"\n[grid]\n'
        f'"{field}" = {list(range(1000, 2000))}\n'
        f'"generators[0].rate_pps" = {list(range(1000, 2000))}\n'
        f'"generators[0].frame_bytes" = {list(range(64, 1064))}\n',
        encoding="utf-8",
    )
    (root / "replicates-1e9.toml").write_text(
        f'name = "reps"\nbase = "{valid}"\nreplicates = 1000000000\n'
        f'[grid]\n"{field}" = [4000, 8000]\n',
        encoding="utf-8",
    )
    shutil.copy(_examples() / "calibrate" / "udp-rx.toml", root / "udp-rx.toml")
    rows = "".join(f"udp-rx.toml,{10_000 + i},50\n" for i in range(100_000))
    header = "scenario,generators[0].rate_pps,cpu_pct\n"
    (root / "rows-100k.csv").write_text(header + rows, encoding="utf-8")
    (root / "rows-cell.csv").write_text(header + 'udp-rx.toml,"100000\n...",50\n', encoding="utf-8")
    return {
        "run <- 100 000 hosts": ["run", str(root / "hosts-100k.toml")],
        "run <- 1 us samples over 20 s": [
            *("run", valid, "--set", "sample_interval_us=1", "--set", "duration_ms=20000"),
        ],
        "run <- 10 000 [[at]] changes on 1 000 hosts": ["run", str(root / "at-10k-1k-hosts.toml")],
        "sweep --dry-run <- 10^9 grid points": ["sweep", str(root / "grid-1e9.toml"), "--dry-run"],
        "sweep --dry-run <- 10^9 replicates": [
            *("sweep", str(root / "replicates-1e9.toml"), "--dry-run"),
        ],
        "calibrate <- 100 000 rows": [
            *("calibrate", str(root / "rows-100k.csv"), "--profile", "xeon-modern"),
        ],
        "calibrate <- a cell with a newline": [
            *("calibrate", str(root / "rows-cell.csv"), "--profile", "xeon-modern"),
        ],
    }


def size_cases(root: Path, fixtures: dict[str, str]) -> list[CliCase]:
    """Inputs larger than the model can hold (the examples of issue 29)."""
    inputs = size_inputs(root, fixtures["valid scenario"])
    return [CliCase(label, "size", args) for label, args in inputs.items()]


def mutation_cases(fixtures: dict[str, str], seed: int, n: int, root: Path) -> Iterator[CliCase]:
    """``n`` valid inputs with random bytes changed, in random slots (for ``make fuzz``)."""
    rng = random.Random(seed ^ 0xC11)
    sources = [
        ("valid scenario", ["validate", "{}"]),
        ("valid scenario", ["run", "{}"]),
        ("valid sweep", ["sweep", "{}", "--dry-run"]),
        ("valid ethtool -c", ["explain", "--driver", "linux-e1000", "{}"]),
        ("replay scenario", ["validate", "{}"]),
    ]
    inserts = [
        b"\0",
        b"\xff",
        b"\x1b[2J",
        b"[" * 200,
        b"{a=" * 100,
        b"\n[[hosts]]\n",
        b'"',
        b"'''",
        b"\r",
    ]
    for i in range(n):
        source, args = sources[rng.randrange(len(sources))]
        data = bytearray(Path(fixtures[source]).read_bytes())
        for _ in range(rng.choice([1, 1, 2, 4])):
            op = rng.random()
            pos = rng.randrange(len(data) + 1)
            if op < 0.3:
                data[pos:pos] = rng.choice(inserts)
            elif op < 0.5 and pos < len(data):
                data[pos] = rng.randrange(256)
            elif op < 0.7:
                del data[pos:]
            elif op < 0.85:
                end = min(len(data), pos + rng.randrange(1, 64))
                data[pos:pos] = data[pos:end] * rng.choice([2, 50, 1000])
            else:
                data[pos:pos] = str(rng.choice([-1, 0, 2**64, 10**30, "nan", "inf"])).encode()
        path = root / f"mutation-{i}{Path(fixtures[source]).suffix}"
        path.write_bytes(bytes(data))
        yield CliCase(
            f"mutation {i}: {source} ({args[0]})", "mutation", _fill(args, fixtures, str(path))
        )


# Commands with an output path in the slot ``{}``.
OUTPUT_SLOTS: list[tuple[str, list[str]]] = [
    ("run --out", ["run", "@valid scenario", "--out", "{}"]),
    ("sweep --out", ["sweep", "@valid sweep", "--no-store", "--out", "{}"]),
    ("tune --report", ["tune", "--mix", "rr", "--driver", "linux-igb", "--report", "{}"]),
    ("examples copy --to", ["examples", "copy", "quickstart", "--to", "{}"]),
    ("livelock --out", ["livelock", "--duration-ms", "10", "--out", "{}"]),
    ("experiment --out", ["experiment", "napi-modes", "--duration-ms", "10", "--out", "{}"]),
    ("calibrate -o", ["calibrate", "@calibration rows", "--profile", "apu2", "-o", "{}"]),
]


def output_cases(root: Path, fixtures: dict[str, str]) -> list[CliCase]:
    """Output paths that are not files: a FIFO (which a rename would replace), a
    directory, a symlink loop, a path under a file. Never a real device: a
    regression would replace it for the whole machine."""
    root.mkdir(parents=True, exist_ok=True)
    cases = []
    for i, (slot, args) in enumerate(OUTPUT_SLOTS):
        fifo = root / f"out-{i}.fifo"
        os.mkfifo(fifo)
        for kind, value in (
            ("FIFO", str(fifo)),
            ("directory", fixtures["directory"]),
            ("symlink loop", fixtures["symlink loop"]),
            ("file as a folder", fixtures["file as a folder"]),
        ):
            if kind == "directory" and slot in ("examples copy --to", "run --out"):
                continue  # a folder is what these take
            if kind == "directory" and slot == "experiment --out":
                continue
            kept = str(fifo) if kind == "FIFO" else None
            filled = _fill(args, fixtures, value)
            cases.append(CliCase(f"{slot} -> {kind}", "output", filled, fifo_kept=kept))
    return cases


def all_cases(root: Path, *, seed: int = 1, mutations: int = 0) -> list[CliCase]:
    """Every systematic case, then ``mutations`` random ones; deterministic in ``seed``."""
    fixtures = make_fixtures(root / "files")
    (root / "stores").mkdir()
    (root / "names").mkdir()
    (root / "sizes").mkdir()
    (root / "mutations").mkdir()
    cases = (
        set_cases(fixtures)
        + option_cases(fixtures)
        + name_cases(root / "names", fixtures)
        + store_cases(root / "stores")
        + size_cases(root / "sizes", fixtures)
        + output_cases(root / "outputs", fixtures)
        + file_cases(fixtures)
    )
    cases += list(mutation_cases(fixtures, seed, mutations, root / "mutations"))
    return cases
