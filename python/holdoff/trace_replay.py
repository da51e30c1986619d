"""Replay a moderator over a recorded sample trace, without a simulation.

``holdoff battery --trace`` writes each workload's moderation samples as
Parquet (one row per call: ``workload``, ``vector``, ``t_ns``,
``rx_packets``, ``rx_bytes``, ``tx_packets``, ``tx_bytes``, ``interrupts``;
key-value metadata ``holdoff.trace`` = JSON ``{"version": 1, "chip",
"link_mbps", "throttle", "hz", "vectors"}``). :func:`replay_trace` feeds the
samples of each (workload, vector) to a fresh moderator, in order, and
returns its register writes per call (``scenario::replay`` in the core).

Built-in and C moderators run in the core; a C moderator runs in a child
process (:mod:`holdoff.cmod`), so a crash or a loop in it is a
:class:`~holdoff.ModeratorError` naming the file and function. A Python
moderator (``file.py:Class``) runs here: its ``initial()`` and
``on_sample()`` are called as the simulation calls them.

Simplified: nothing feeds back (the samples were recorded under another
moderator's registers); work items run at their time before the next
sample; the trace's ``throttle`` is taken from the chip preset.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holdoff.modspec import ModSpec

TRACE_VERSION = 1
COLUMNS = ("t_ns", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "interrupts")
REGISTERS = ("itr_256ns", "eitr_us", "rdtr_1024ns", "radv_1024ns", "tidv_1024ns", "tadv_1024ns")


class TraceError(ValueError):
    """A trace file that cannot be read; the message names the file and the fix."""


@dataclass
class Trace:
    """A sample trace: its port and its samples per (workload, vector)."""

    port: dict[str, Any]
    series: dict[tuple[str, int], list[tuple[int, ...]]]


def read_trace(path: Path) -> Trace:
    """Read a trace file (Parquet, the ``holdoff battery --trace`` format)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as err:
        raise TraceError(f"{path}: not a readable Parquet trace: {err}") from err
    meta_raw = (table.schema.metadata or {}).get(b"holdoff.trace")
    if meta_raw is None:
        raise TraceError(
            f"{path}: no holdoff.trace metadata; record traces with `holdoff battery --trace`"
        )
    try:
        meta = json.loads(meta_raw)
    except ValueError as err:
        raise TraceError(f"{path}: holdoff.trace metadata is not JSON: {err}") from err
    if not isinstance(meta, dict) or meta.get("version") != TRACE_VERSION:
        raise TraceError(
            f"{path}: trace version {meta.get('version') if isinstance(meta, dict) else '?'}; "
            f"this holdoff reads version {TRACE_VERSION}"
        )
    missing = [k for k in ("chip", "link_mbps", "hz", "vectors") if k not in meta]
    missing += [c for c in ("workload", "vector", *COLUMNS) if c not in table.column_names]
    if missing:
        raise TraceError(f"{path}: missing {', '.join(missing)}")
    cols = {c: table.column(c).to_pylist() for c in ("workload", "vector", *COLUMNS)}
    series: dict[tuple[str, int], list[tuple[int, ...]]] = {}
    for i in range(table.num_rows):
        values = [cols[c][i] for c in COLUMNS]
        if any(not isinstance(v, int) or v < 0 for v in values) or cols["vector"][i] is None:
            raise TraceError(f"{path}: row {i} has a missing or negative counter")
        key = (str(cols["workload"][i]), int(cols["vector"][i]))
        series.setdefault(key, []).append(tuple(values))
    port = {
        "chip": str(meta["chip"]),
        "link_mbps": int(meta["link_mbps"]),
        "hz": int(meta["hz"]),
        "vectors": int(meta["vectors"]),
        "work_delay_ns": int(meta.get("work_delay_ns", 0)),
    }
    return Trace(port, series)


def _python_steps(spec: ModSpec, rows: list[tuple[int, ...]]) -> dict[str, Any]:
    from holdoff.moderator import Sample

    cls = next(iter(spec.classes.values()))
    m = cls(**spec.params)
    initial = m.initial() if hasattr(m, "initial") else None
    steps: list[dict[str, Any]] = [
        {"sample": None, "t_ns": 0, "call": "initial", **(initial or {}), "trace": []}
    ]
    for i, r in enumerate(rows):
        try:
            out = m.on_sample(Sample(*r))
        except Exception as err:  # the user's class failed
            return {
                "steps": steps,
                "failure": f"{spec.label} at t={r[0]} ns: {type(err).__name__}: {err}",
            }
        steps.append({"sample": i, "t_ns": r[0], "call": "sample", **(out or {}), "trace": []})
    return {"steps": steps, "failure": None}


def replay_series(
    spec: ModSpec, port: dict[str, Any], vector: int, rows: list[tuple[int, ...]]
) -> dict[str, Any]:
    """One moderator over one sample series: ``{"steps": [...], "failure": ...}``.

    Raises:
        holdoff.ScenarioError: the moderator's table is not valid for the port.
        holdoff.ModeratorError: a C moderator crashed or did not return.
    """
    if spec.kind == "python":
        return _python_steps(spec, rows)
    table = json.dumps(spec.moderation_table())
    port_json = json.dumps(port)
    if spec.kind == "c":
        from holdoff import cmod

        out = cmod.replay_in_child(spec.label, table, port_json, vector, rows)
    else:
        from holdoff import _core

        six = [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows]
        out = _core.replay(table, port_json, vector, six, os.getcwd())
    result: dict[str, Any] = json.loads(out)
    return result


def effective(steps: list[dict[str, Any]]) -> list[dict[str, int | None]]:
    """The register values in force after each sample (writes carried forward)."""
    held: dict[str, int | None] = dict.fromkeys(REGISTERS)
    out: list[dict[str, int | None]] = []
    for s in steps:
        for k in REGISTERS:
            if s.get(k) is not None:
                held[k] = s[k]
        if s.get("call") == "sample":
            out.append(dict(held))
    return out
