"""``holdoff battery --trace``: each workload's moderation samples as Parquet.

One file per (moderator, chip): one row per call of the moderator on the
workload's port under test, in call order, with the sample it was handed
(crates/holdoff-core/src/moderation/mod.rs ``Sample``: counter changes
since the previous call on that vector). Columns: ``workload`` (str),
``vector``, ``t_ns``, ``rx_packets``, ``rx_bytes``, ``tx_packets``,
``tx_bytes``, ``interrupts`` (int64). Key-value metadata ``holdoff.trace``:
JSON ``{"version": 1, "chip", "link_mbps", "throttle", "hz", "vectors"}``
(``holdoff replay-trace`` reads this format).

Simplifies: the samples come from the first seed's run; the core keeps at
most 1 000 000 calls a run (the rest are counted and reported). Units: ns,
packets, bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from holdoff.battery import CHIPS, WORKLOADS
from holdoff.battery_run import CellKey, Plan

TRACE_VERSION = 1
COLUMNS = ("vector", "t_ns", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "interrupts")


def _link_mbps(link: str) -> int:
    return int(link.rstrip("G")) * 1000


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "moderator"


def write_traces(
    p: Plan, details: Mapping[CellKey, Mapping[str, Any]], folder: Path
) -> tuple[list[Path], list[str]]:
    """Writes one Parquet file per (moderator, chip) into ``folder``; returns
    the files and notes (calls the core did not keep)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    notes: list[str] = []
    for cand in p.candidates:
        for chip in p.chips:
            columns: dict[str, list[Any]] = {"workload": [], **{c: [] for c in COLUMNS}}
            vectors = 1
            for wl in p.workloads:
                d = details.get(CellKey(cand.label, chip, wl.name))
                if not d or not d.get("samples"):
                    continue
                ports = [q.get("port") for q in d.get("ports", [])]
                if WORKLOADS[wl.name].dut not in ports:
                    continue
                index = ports.index(WORKLOADS[wl.name].dut)
                vectors = max(vectors, int(d["ports"][index].get("vectors") or 1))
                s = d["samples"]
                keep = [i for i, port in enumerate(s["port"]) if port == index]
                columns["workload"].extend([wl.name] * len(keep))
                for c in COLUMNS:
                    col = s[c]
                    columns[c].extend(col[i] for i in keep)
                if s.get("dropped"):
                    notes.append(
                        f"{cand.label} on the {chip}, {wl.name}: {s['dropped']} calls past "
                        "the core's limit not recorded"
                    )
            if not columns["workload"]:
                continue
            env = CHIPS[chip]
            schema = pa.schema(
                [("workload", pa.string()), *((c, pa.int64()) for c in COLUMNS)],
                metadata={
                    "holdoff.trace": json.dumps(
                        {
                            "version": TRACE_VERSION,
                            "chip": chip,
                            "link_mbps": _link_mbps(env.link),
                            "throttle": env.throttle,
                            "hz": env.hz,
                            "vectors": vectors,
                        }
                    )
                },
            )
            table = pa.table(columns, schema=schema)
            path = folder / f"trace-{slug(cand.label)}-{chip}.parquet"
            pq.write_table(table, path)
            files.append(path)
    return files, notes
