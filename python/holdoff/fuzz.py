"""A scenario fuzzer: no input may crash, hang or exhaust holdoff.

Cases come from two sources:

- *mutations* of every bundled example and reproduction-case scenario: one to
  three leaves of the scenario are replaced by edge values (0, -1, 2**32 - 1,
  2**63 - 1, huge floats, NaN, empty or unknown strings, a value of another
  type), deleted, or a table is duplicated;
- *schema cases*: a bundled scenario with one component (a moderation table,
  a NIC, an application, a generator, ...) replaced by a document drawn from
  that component's definition in the JSON Schema that ``holdoff schema``
  prints, at and around the bounds it states, so that every field and variant
  the schema allows is tried inside an otherwise valid scenario.

Each case is validated and, if valid, run with its simulated duration capped
at :data:`MAX_DURATION_MS` in a worker process that has an address-space limit
(:data:`MEMORY_LIMIT_BYTES`) and a wall-time limit (:data:`TIMEOUT_S`). The
invariant: a clean :class:`holdoff.ScenarioError`, or a run whose packet
ledger balances; never a panic, abort, hang or Python traceback. A worker
that dies or stops answering is replaced and the case is recorded as a
failure with its TOML, so that it can become a regression test.

Deterministic: the same ``seed`` and ``cases`` give the same cases in the same
order. ``python -m holdoff.fuzz --cases 300 --seed 1`` runs it from a shell,
followed by the command-line fuzzer of :mod:`holdoff.fuzz_cli` (``--cli-cases``,
``--mutations``): special files, sizes, encodings, nesting, ``--set``
injection, control characters in names and damaged stores, each case a real
``python -m holdoff`` process.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import resource
import select
import subprocess
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

MAX_DURATION_MS = 20
"""Every case's simulated duration is capped at this [ms] (brief runs)."""

TIMEOUT_S = 20.0
"""A case that takes longer than this [s] of wall time counts as a hang."""

MEMORY_LIMIT_BYTES = 3 * 2**30
"""Address-space limit of a worker process [bytes]."""

_EDGE_INTS: list[Any] = [
    0,
    1,
    -1,
    2,
    63,
    64,
    65535,
    65536,
    2**31 - 1,
    2**32 - 1,
    2**32,
    2**63 - 1,
    -(2**63),
]
_EDGE_FLOATS: list[Any] = [0.0, -1.0, 0.5, 1e-9, 1e9, 1e300, math.inf, -math.inf, math.nan]
_EDGE_STRINGS: list[Any] = ["", "x", "unknown", "0", "-1", "1T", "9999999G", "a.b", " "]


@dataclass
class Outcome:
    """What happened to one case."""

    label: str
    kind: str  # "invalid" | "ran" | "guarded" | "failure"
    detail: str = ""
    toml: str = ""


@dataclass
class Report:
    """Counts over a fuzz run, and every failure with its scenario."""

    counts: Counter[str] = field(default_factory=Counter)
    failures: list[Outcome] = field(default_factory=list)

    def line(self) -> str:
        c = self.counts
        return (
            f"{sum(c.values())} cases: {c['invalid']} rejected with a clear error, "
            f"{c['ran']} ran with a balanced ledger, {c['guarded']} stopped by the run guard "
            f"with a clear error, {c['failure']} failures"
        )


# ------------------------------------------------------------------ cases


def seed_scenarios() -> list[tuple[str, dict[str, Any]]]:
    """Every bundled example and case scenario (sweep files aside), parsed."""
    root = Path(__file__).resolve().parent
    files = sorted((root / "examples").glob("*.toml")) + sorted((root / "cases").glob("*/*.toml"))
    out = []
    for f in files:
        if f.name == "case.toml":
            continue
        doc = tomllib.loads(f.read_text(encoding="utf-8"))
        if "base" in doc:
            continue
        out.append((f"{f.parent.name}/{f.stem}", doc))
    return out


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for i, v in enumerate(node):
            yield from _leaves(v, (*path, i))
    else:
        yield path, node


def _tables(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths of arrays of tables (``[[hosts]]``, ``[[apps]]``, ...)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                yield (*path, k)
                for i, x in enumerate(v):
                    yield from _tables(x, (*path, k, i))
            else:
                yield from _tables(v, (*path, k))


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _edge_value(rng: random.Random, old: Any) -> Any:
    pick = rng.random()
    if isinstance(old, bool) or pick < 0.1:
        return rng.choice([True, False, 0, "yes", [], {}])
    if isinstance(old, int):
        if pick < 0.7:
            return rng.choice(_EDGE_INTS)
        if pick < 0.85:
            return old * rng.choice([0, 2, 10, 1000, 10**6]) + rng.choice([-1, 0, 1])
        return rng.choice(_EDGE_FLOATS + _EDGE_STRINGS)
    if isinstance(old, float):
        if pick < 0.8:
            return rng.choice(_EDGE_FLOATS)
        return rng.choice(_EDGE_INTS + _EDGE_STRINGS)
    if isinstance(old, str):
        if pick < 0.6:
            return rng.choice(_EDGE_STRINGS)
        if pick < 0.8:
            return old + rng.choice(["x", "0", ".", "G"])
        return rng.choice(_EDGE_INTS)
    if isinstance(old, list):
        return rng.choice([[], [0], old * 3, "x"])
    return rng.choice(_EDGE_INTS + _EDGE_STRINGS)


def mutate(rng: random.Random, doc: dict[str, Any]) -> dict[str, Any]:
    """One to three random edits of a copy of ``doc``."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.choice([1, 1, 2, 3])):
        every = [(p, v) for p, v in _leaves(doc) if p]
        # Numbers are where the model's limits are: edit them most often.
        numeric = [p for p, v in every if isinstance(v, int | float) and not isinstance(v, bool)]
        leaves = numeric if numeric and rng.random() < 0.7 else [p for p, _ in every]
        op = rng.random()
        if op < 0.75 and leaves:
            path = rng.choice(leaves)
            parent = _get(doc, path[:-1])
            parent[path[-1]] = _edge_value(rng, parent[path[-1]])
        elif op < 0.88 and leaves:
            path = rng.choice(leaves)
            parent = _get(doc, path[:-1])
            if isinstance(parent, dict):
                del parent[path[-1]]
        else:
            tables = list(_tables(doc))
            if tables:
                arr = _get(doc, rng.choice(tables))
                arr.append(copy.deepcopy(rng.choice(arr)))
    return doc


def _cap_duration(doc: dict[str, Any]) -> None:
    d = doc.get("duration_ms")
    if isinstance(d, int) and not isinstance(d, bool) and d > MAX_DURATION_MS:
        doc["duration_ms"] = MAX_DURATION_MS
    elif d is None:
        doc["duration_ms"] = MAX_DURATION_MS


def _to_toml(doc: dict[str, Any]) -> str | None:
    try:
        return tomli_w.dumps(doc)
    except (TypeError, ValueError):
        return None


def mutation_cases(seed: int, n: int) -> Iterator[tuple[str, str]]:
    """``n`` mutated scenarios, deterministic in ``seed``."""
    rng = random.Random(seed)
    seeds = seed_scenarios()
    made = 0
    while made < n:
        name, doc = seeds[made % len(seeds)]
        m = mutate(rng, doc)
        _cap_duration(m)
        text = _to_toml(m)
        if text is None:
            continue
        made += 1
        yield f"mutation {made}: {name}", text


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def draw(rng: random.Random, schema: dict[str, Any], node: dict[str, Any], depth: int = 0) -> Any:
    """A random document that the schema ``node`` describes (mostly in bounds).

    Integers are drawn at and around the schema's ``minimum``/``maximum`` as
    often as inside them, so that the edges the schema states are tried.
    """
    node = _resolve(schema, node)
    for key in ("oneOf", "anyOf"):
        if key in node:
            return draw(rng, schema, rng.choice(node[key]), depth + 1)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return rng.choice(node["enum"])
    types = node.get("type", "object")
    if isinstance(types, list):
        types = [t for t in types if t != "null"] or ["null"]
        t = rng.choice(types)
    else:
        t = types
    if t == "null":
        return None
    if t == "boolean":
        return rng.random() < 0.5
    if t in ("integer", "number"):
        lo = node.get("minimum", -(2**31))
        hi = node.get("maximum", 2**32 - 1)
        choices = [lo, hi, lo + 1, hi - 1, rng.randint(int(lo), int(min(hi, lo + 10**6)))]
        if rng.random() < 0.15:
            choices += [lo - 1, hi + 1]
        v = rng.choice(choices)
        return int(v) if t == "integer" else float(v)
    if t == "string":
        return rng.choice(["", "x", "1G", "100M", "a", "82546", "i210"])
    if t == "array":
        if depth > 6:
            return []
        item = node.get("items", {})
        return [draw(rng, schema, item, depth + 1) for _ in range(rng.choice([0, 1, 2]))]
    if t == "object":
        props = node.get("properties", {})
        required = set(node.get("required", []))
        out = {}
        for k, sub in props.items():
            if k in required or rng.random() < 0.5:
                v = draw(rng, schema, sub, depth + 1) if depth < 8 else None
                if v is not None:
                    out[k] = v
        return out
    return None


# Where a component lives in a scenario, and its schema definition.
_SPLICES = [
    (("hosts", "*", "nics", "*", "moderation"), "ModerationCfg"),
    (("hosts", "*", "nics", "*"), "NicCfg"),
    (("hosts", "*", "napi"), "NapiConfig"),
    (("hosts", "*", "bsd"), "BsdConfig"),
    (("hosts", "*", "tcp"), "TcpSysctls"),
    (("apps", "*"), "AppCfg"),
    (("generators", "*"), "GeneratorCfg"),
    (("links", "*"), "LinkCfg"),
]


def _splice(
    rng: random.Random,
    doc: dict[str, Any],
    path: tuple[str, ...],
    value: Any,
    *,
    keep_strings: bool,
) -> bool:
    """Put ``value`` at ``path`` (``*``: a random element of an array).

    With ``keep_strings``, string fields of the replaced table (names, hosts,
    chips, link ends) keep their old values, so that references still resolve.
    """

    def merged(old: Any) -> Any:
        if keep_strings and isinstance(old, dict) and isinstance(value, dict):
            strings = {k: v for k, v in old.items() if isinstance(v, str) and k != "kind"}
            if value.get("kind", old.get("kind")) != old.get("kind"):
                strings = {k: v for k, v in strings.items() if k in ("name", "host", "to")}
            return {**value, **strings}
        return value

    node: Any = doc
    for i, key in enumerate(path):
        last = i == len(path) - 1
        if key == "*":
            if not isinstance(node, list) or not node:
                return False
            idx = rng.randrange(len(node))
            if last:
                node[idx] = merged(node[idx])
                return True
            node = node[idx]
        else:
            if not isinstance(node, dict):
                return False
            if last:
                node[key] = merged(node.get(key))
                return True
            if key not in node:
                return False
            node = node[key]
    return False


def schema_cases(seed: int, n: int) -> Iterator[tuple[str, str]]:
    """``n`` scenarios with one component drawn from the JSON Schema.

    A bundled scenario has one of its components (a moderation table, a NIC,
    NAPI/BSD/TCP settings, an application, a generator, a link) replaced by a
    document drawn from that component's schema definition, so that every
    variant and field the schema allows meets a scenario that is otherwise
    valid. Deterministic in ``seed``.
    """
    from holdoff import _core

    schema = json.loads(_core.schema_json())
    rng = random.Random(seed + 0x5C4E)
    seeds = seed_scenarios()
    made = 0
    while made < n:
        name, base = seeds[rng.randrange(len(seeds))]
        doc = copy.deepcopy(base)
        path, definition = rng.choice(_SPLICES)
        if definition not in schema["$defs"]:
            continue
        value = draw(rng, schema, schema["$defs"][definition])
        if not _splice(rng, doc, path, value, keep_strings=rng.random() < 0.8):
            continue
        _cap_duration(doc)
        text = _to_toml(doc)
        if text is None:
            continue
        made += 1
        yield f"schema {made}: {name} with {definition}", text


# ---------------------------------------------------------------- running


def _worker() -> None:
    """Worker loop: one JSON case per stdin line, one JSON answer per line."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT_BYTES, MEMORY_LIMIT_BYTES))
    from holdoff import _core

    for line in sys.stdin:
        text = json.loads(line)["toml"]
        try:
            _core.validate_toml(text)
        except _core.ScenarioError as e:
            msg = str(e)
            ok = bool(msg.strip())
            answer = {"kind": "invalid" if ok else "failure", "detail": msg or "empty error"}
        except BaseException as e:  # noqa: BLE001 - anything else is a failure
            answer = {"kind": "failure", "detail": f"validate raised {type(e).__name__}: {e}"}
        else:
            answer = _run_one(_core, text)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


def _run_one(core: Any, text: str) -> dict[str, str]:
    try:
        report_json, _perf, _aborted = core.run_toml(text)
    except core.ScenarioError as e:
        # Found only when building the world (e.g. a Python moderator class).
        return {"kind": "invalid", "detail": str(e)}
    except core.SimulationError as e:
        # The run guard stopping a run with a clear error that names the
        # limit and the likely field is a clean outcome, not a crash.
        if "resource guard" in str(e):
            return {"kind": "guarded", "detail": str(e)}
        return {"kind": "failure", "detail": f"run raised SimulationError: {e}"}
    except BaseException as e:  # noqa: BLE001 - a valid scenario must run
        return {"kind": "failure", "detail": f"run raised {type(e).__name__}: {e}"}
    ledger = json.loads(report_json)["summary"]["ledger"]
    if not ledger.get("balanced"):
        return {"kind": "failure", "detail": f"ledger not balanced: {ledger}"}
    return {"kind": "ran", "detail": ""}


class _Pool:
    """One worker process, replaced when it dies or hangs."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        env = dict(os.environ, PYTHONUNBUFFERED="1", RUST_BACKTRACE="0")
        return subprocess.Popen(
            [sys.executable, "-m", "holdoff.fuzz", "--worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    def run(self, text: str) -> dict[str, str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        p = self.proc
        assert p.stdin is not None and p.stdout is not None
        try:
            p.stdin.write(json.dumps({"toml": text}) + "\n")
            p.stdin.flush()
        except BrokenPipeError:
            return self._died()
        ready, _, _ = select.select([p.stdout], [], [], TIMEOUT_S)
        if not ready:
            _reap(p)
            self.proc = None
            return {"kind": "failure", "detail": f"hang: no answer within {TIMEOUT_S:.0f} s"}
        line = p.stdout.readline()
        if not line:
            return self._died()
        answer: dict[str, str] = json.loads(line)
        return answer

    def _died(self) -> dict[str, str]:
        assert self.proc is not None
        p = self.proc
        p.wait()
        err = p.stderr.read() if p.stderr else ""
        _reap(p)
        self.proc = None
        tail = err.strip().splitlines()[-3:]
        return {
            "kind": "failure",
            "detail": f"worker died (exit {p.returncode}): " + " | ".join(tail),
        }

    def close(self) -> None:
        if self.proc is not None:
            _reap(self.proc)
            self.proc = None


def _reap(p: subprocess.Popen[str]) -> None:
    """Kill a worker (if still running), wait for it and close its pipes."""
    if p.poll() is None:
        p.kill()
    p.wait()
    for f in (p.stdin, p.stdout, p.stderr):
        if f is not None:
            try:
                f.close()
            except BrokenPipeError:
                pass


def fuzz(
    cases: int = 300,
    seed: int = 1,
    *,
    schema_share: float = 0.4,
    progress: Any = None,
) -> Report:
    """Run ``cases`` cases (a ``schema_share`` of them from the schema)."""
    n_schema = int(cases * schema_share)
    stream = list(mutation_cases(seed, cases - n_schema)) + list(schema_cases(seed, n_schema))
    report = Report()
    pool = _Pool()
    try:
        for i, (label, text) in enumerate(stream):
            answer = pool.run(text)
            kind = answer["kind"]
            report.counts[kind] += 1
            if kind == "failure":
                report.failures.append(Outcome(label, kind, answer["detail"], text))
            if progress is not None:
                progress(i + 1, len(stream), report)
    finally:
        pool.close()
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m holdoff.fuzz", description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=300, help="number of cases (default 300)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the case generator (default 1)")
    ap.add_argument("--out", type=Path, help="folder to write each failing scenario to")
    ap.add_argument(
        "--cli-cases",
        type=int,
        default=300,
        help="command-line cases (default 300; 0: none; more than there are: all)",
    )
    ap.add_argument(
        "--mutations",
        type=int,
        default=0,
        help="command-line cases made by changing bytes of valid inputs (default 0)",
    )
    ap.add_argument("--jobs", type=int, default=2, help="command-line cases run at once")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker()
        return 0

    def show(done: int, total: int, rep: Report) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r{done}/{total} cases, {rep.counts['failure']} failures")
            sys.stderr.flush()

    rep = fuzz(args.cases, args.seed, progress=show)
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    for f in rep.failures:
        print(f"FAIL {f.label}: {f.detail}")
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            name = f.label.replace(" ", "_").replace("/", "_").replace(":", "")
            (args.out / f"{name}.toml").write_text(f.toml)
    print(rep.line())
    failed = bool(rep.failures)
    if args.cli_cases > 0 or args.mutations > 0:
        from holdoff import fuzz_cli

        def show_cli(done: int, total: int, r: fuzz_cli.CliReport) -> None:
            if sys.stderr.isatty():
                sys.stderr.write(
                    f"\r{done}/{total} command-line cases, {r.counts['failure']} failures"
                )
                sys.stderr.flush()

        cli = fuzz_cli.run(
            args.cli_cases, args.seed, mutations=args.mutations, jobs=args.jobs, progress=show_cli
        )
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        fuzz_cli.print_report(cli, args.out)
        failed = failed or bool(cli.failures)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
