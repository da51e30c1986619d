"""Runs scenarios whose moderation is written in C in a child process.

A ``kind = "c"`` moderator is the user's C code, loaded into the process
that runs the simulation (docs/models/c-moderators.md). A null dereference
in it would kill that process, and a loop would hang it, so
:func:`holdoff.run` runs such a scenario in a child process
(``python -m holdoff.cmod``) and maps how the child ended:

- it finished: its result (or its ``ScenarioError``/``SimulationError``, or
  ``ModeratorError`` with the partial result when the moderator wrote a bad
  register value), exactly as an in-process run gives them;
- it died of a signal (SIGSEGV ...): ``ModeratorError("my_itr.c:my_update_itr
  crashed with SIGSEGV at t=... ns in run NAME (seed S)")``, ``result`` None;
- the loader's watchdog ended a call that overran ``call_limit_ms``:
  ``ModeratorError("my_itr.c:my_update_itr did not return within 2000 ms at
  t=... ns in run ...")``, ``result`` None.

Nothing else of the caller is lost: a sweep or battery records the error for
that run and goes on. Python classes passed as ``moderators=`` objects do
not cross the process boundary; the child imports them by their
``"module:Class"`` path (from the scenario's folder or the working
directory). The ``progress`` callback is not called for a child run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any

#: Exit status of a child whose C moderator call overran its limit (holdoff-cabi).
CALL_TIMEOUT_EXIT = 86
_FAULT = "holdoff-c-fault: "


def c_tables(data: Any) -> Iterator[Mapping[str, Any]]:
    """Every ``kind = "c"`` moderation table of a parsed scenario."""
    if isinstance(data, Mapping):
        if data.get("kind") == "c":
            yield data
        for value in data.values():
            yield from c_tables(value)
    elif isinstance(data, list):
        for value in data:
            yield from c_tables(value)


def has_c(text: str) -> bool:
    """Whether the scenario TOML ``text`` has a C moderator."""
    if '"c"' not in text and "'c'" not in text:
        return False
    try:
        return any(True for _ in c_tables(tomllib.loads(text)))
    except tomllib.TOMLDecodeError:
        return False


def _labels(text: str) -> str:
    try:
        tables = list(c_tables(tomllib.loads(text)))
    except tomllib.TOMLDecodeError:
        return "a C moderator"
    names = sorted(
        {f"{os.path.basename(str(t.get('source', '?')))}:{t.get('entry', '?')}" for t in tables}
    )
    return ", ".join(names) or "a C moderator"


def run_in_child(
    text: str, seed: int | None, base_dir: str | None
) -> tuple[str, dict[str, Any], str | None]:
    """``_core.run_toml``'s ``(report_json, perf, aborted)`` from a child process.

    Raises what the child raised (``ScenarioError``, ``SimulationError``), or
    :class:`holdoff.ModeratorError` when the child died of a signal or its
    watchdog ended a call.
    """
    from holdoff.inputs import scenario_name

    run_name = f"run {scenario_name(text) or '(unnamed)'}" + (
        f" (seed {seed})" if seed is not None else ""
    )
    request = {"text": text, "seed": seed, "base_dir": base_dir}
    answer = _call_child(request, _labels(text), run_name)
    return answer["report_json"], answer["perf"], answer["aborted"]


def replay_in_child(
    label: str, table: str, port: str, vector: int, rows: list[tuple[int, ...]]
) -> str:
    """``_core.replay``'s JSON from a child process (errors as :func:`run_in_child`)."""
    request = {
        "op": "replay",
        "table": table,
        "port": port,
        "vector": vector,
        "rows": [list(r) for r in rows],
    }
    return str(_call_child(request, label, "replay")["replay"])


def _call_child(request: dict[str, Any], labels: str, run_name: str) -> dict[str, Any]:
    from holdoff import _core
    from holdoff.moderator import ModeratorError

    env = {**os.environ, "HOLDOFF_C_CHILD": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "holdoff.cmod"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode == 0:
        try:
            answer = json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            answer = None
        if isinstance(answer, dict) and answer.get("ok"):
            return answer
        if isinstance(answer, dict):
            cls = getattr(_core, str(answer.get("type")), _core.SimulationError)
            err = cls(answer.get("message", "the child run failed"))
            if answer.get("field") is not None:
                err.field = answer["field"]  # type: ignore[union-attr]
            raise err
    fault = [ln[len(_FAULT) :] for ln in proc.stderr.splitlines() if ln.startswith(_FAULT)]
    if fault:
        message = f"{fault[-1]} in {run_name}"
    elif proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        message = f"{labels} crashed with {name} in {run_name}"
    elif proc.returncode == CALL_TIMEOUT_EXIT:
        message = f"{labels} did not return within its call limit in {run_name}"
    else:
        tail = proc.stderr.strip()[-2000:]
        message = f"{labels} ended with exit status {proc.returncode} in {run_name}: {tail}"
    raise ModeratorError(message, None)


def _child() -> None:
    """The child's side: one run (or replay) from a JSON request on stdin, JSON on stdout."""
    from holdoff import _core
    from holdoff.moderator import import_classes

    request = json.loads(sys.stdin.read())
    answer: dict[str, Any]
    try:
        if request.get("op") == "replay":
            out = _core.replay(
                request["table"],
                request["port"],
                request["vector"],
                [tuple(r) for r in request["rows"]],
                None,
            )
            answer = {"ok": True, "replay": out}
        else:
            text, seed, base = request["text"], request["seed"], request["base_dir"]
            classes = import_classes(text, base) or None
            report_json, perf, aborted = _core.run_toml(text, seed, classes, None, base)
            answer = {
                "ok": True,
                "report_json": report_json,
                "perf": dict(perf),
                "aborted": aborted,
            }
    except _core.HoldoffError as err:
        answer = {
            "ok": False,
            "type": type(err).__name__,
            "message": str(err),
            "field": getattr(err, "field", None),
        }
    sys.stdout.write("\n" + json.dumps(answer) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    _child()
