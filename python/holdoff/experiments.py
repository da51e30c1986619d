"""Bundled experiments: a sweep built in code, its table and its report.

``napi-modes``: p99 latency and CPU against offered load for a request/
response server (``rpc_open``: open-loop Poisson arrivals over 32 TCP
connections, 64-byte requests and responses, 10 µs of service per request,
one epoll thread) on a modern Xeon with an I210, one RX queue and no
interrupt throttle (``eitr_us = 0``), in four modes of Linux's receive path:

- ``irq``: interrupt driven (no deferral);
- ``defer``: NAPI deferral, ``napi_defer_hard_irqs = 2`` and
  ``gro_flush_timeout = 20 µs``;
- ``suspend``: IRQ suspension, the deferral above plus
  ``irq_suspend_timeout = 20 ms`` with an epoll thread busy-polling for up to
  200 µs with ``prefer_busy_poll`` (Linux 6.13);
- ``busy``: full busy polling, the epoll thread never sleeps
  (``busy_poll_usecs`` = 1 s, ``prefer_busy_poll``) and IRQs stay deferred
  (``napi_defer_hard_irqs = 100``, ``gro_flush_timeout = 200 µs``), the
  busy-polling setup of the kernel's NAPI documentation.

The mechanisms behind the curves are in ``docs/models/napi-modes.md``. Runs go
through the sweep executors (:func:`holdoff.sweeps.run_sweep`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from holdoff import sweeps

#: Offered loads [requests/s]: up to and past saturation.
DEFAULT_LOADS = (10_000, 30_000, 50_000, 60_000, 70_000, 80_000, 90_000, 110_000)
REQUEST_BYTES = 64
RESPONSE_BYTES = 64

_DEFER = {"defer_hard_irqs": 2, "gro_flush_timeout_ns": 20_000}
#: Mode -> (server host's ``napi`` table, rpc_open fields).
MODES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "irq": ({}, {}),
    "defer": (dict(_DEFER), {}),
    "suspend": (
        {**_DEFER, "irq_suspend_timeout_ns": 20_000_000},
        {"server_busy_poll_usecs": 200, "server_prefer_busy_poll": True},
    ),
    "busy": (
        {"defer_hard_irqs": 100, "gro_flush_timeout_ns": 200_000},
        {"server_busy_poll_usecs": 1_000_000, "server_prefer_busy_poll": True},
    ),
}


def _host(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "profile": "xeon-modern",
        "driver": "napi",
        "cores": 2,
        "nics": [
            {
                "name": "eth0",
                "chip": "i210",
                "queues": 1,
                "moderation": {"kind": "static", "eitr_us": 0},
            }
        ],
    }


def napi_modes_base(duration_ms: int = 50) -> dict[str, Any]:
    """The scenario every point of the experiment starts from."""
    return {
        "name": "napi-modes",
        "description": "open-loop request/response: p99 and CPU against load per NAPI mode",
        "seed": 1,
        "duration_ms": duration_ms,
        "hosts": [_host("client"), _host("server")],
        "links": [{"a": "client.eth0", "b": "server.eth0", "rate": "1G"}],
        "apps": [
            {
                "kind": "rpc_open",
                "name": "load",
                "host": "client",
                "to": "server",
                "rate_rps": 10_000.0,
                "connections": 32,
                "request_bytes": REQUEST_BYTES,
                "response_bytes": RESPONSE_BYTES,
                "service_ns": 10_000,
                "max_outstanding": 4096,
            }
        ],
    }


def napi_modes_sweep(
    loads: Sequence[float] = DEFAULT_LOADS, duration_ms: int = 50
) -> dict[str, Any]:
    """The experiment as a sweep: one point per (mode, load)."""
    points = []
    for napi, app in MODES.values():
        for load in loads:
            point: dict[str, Any] = {"hosts[1].napi": napi or {"defer_hard_irqs": 0}}
            for key in ("server_busy_poll_usecs", "server_prefer_busy_poll"):
                point[f"apps[0].{key}"] = app.get(key, 0 if key.endswith("usecs") else False)
            point["apps[0].rate_rps"] = float(load)
            points.append(point)
    return {"name": "napi-modes", "base": napi_modes_base(duration_ms), "points": points}


def run_napi_modes(
    loads: Sequence[float] = DEFAULT_LOADS,
    *,
    duration_ms: int = 50,
    executor: sweeps.Executor = "process",
    workers: int | None = None,
    store: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Runs the experiment; one row per (mode, offered load).

    Columns: ``mode``, ``offered_rps``, then ``achieved_rps`` (completed
    requests per second), ``p50_us``, ``p99_us``, ``server_cpu_busy`` (both
    cores, fraction), ``server_interrupts_per_s``, and the sweep's metric
    columns.
    """
    run = sweeps.run_sweep(
        napi_modes_sweep(loads, duration_ms), store=store, executor=executor, workers=workers
    )
    t = run.table
    bits = (REQUEST_BYTES + RESPONSE_BYTES) * 8
    out = pd.DataFrame(
        {
            # Points are in order: every load of the first mode, then the next.
            "mode": [list(MODES)[int(p) // len(loads)] for p in t["point"]],
            "offered_rps": t["apps[0].rate_rps"].astype(float),
            "achieved_rps": t["load/throughput_bps"].astype(float) / bits,
            "p50_us": t["load/latency_us_p50"].astype(float),
            "p99_us": t["load/latency_us_p99"].astype(float),
            "server_cpu_busy": t["server/cpu_util_busy"].astype(float),
            "server_interrupts_per_s": t["server.eth0/interrupts_per_s"].astype(float),
        }
    )
    return out


def saturation(table: pd.DataFrame) -> pd.DataFrame:
    """Per mode: the largest achieved rate [requests/s] over the loads tried."""
    sat = table.groupby("mode", sort=False)["achieved_rps"].max()
    return pd.DataFrame({"mode": sat.index, "saturation_rps": sat.to_numpy()})


def napi_modes_html(table: pd.DataFrame, title: str = "holdoff experiment napi-modes") -> str:
    """The HTML report: p99, p50, CPU and interrupt rate against offered
    load, one line per mode, and each mode's saturation throughput."""
    from holdoff import report
    from holdoff.sweeps import ID_COLUMNS, KEY_COLUMNS

    # A sweep-shaped table (parameters mode and offered_rps) so that the
    # report's sweep section draws one curve per mode against the load.
    frame = pd.DataFrame({"point": range(len(table)), "replicate": 0})
    frame["mode"] = table["mode"].to_numpy()
    frame["offered_rps"] = table["offered_rps"].to_numpy()
    frame["seed"] = 1
    frame["scenario_hash"] = ""
    frame["load/latency_us_p99"] = table["p99_us"].to_numpy()
    frame["load/latency_us_p50"] = table["p50_us"].to_numpy()
    frame["load/throughput_bps"] = (
        table["achieved_rps"].to_numpy() * (REQUEST_BYTES + RESPONSE_BYTES) * 8
    )
    frame["server/cpu_util_busy"] = table["server_cpu_busy"].to_numpy()
    frame["server.eth0/interrupts_per_s"] = table["server_interrupts_per_s"].to_numpy()
    assert list(frame.columns[: len(ID_COLUMNS)]) == list(ID_COLUMNS)
    assert all(k in frame.columns for k in KEY_COLUMNS)
    html = report.build_report(report.ReportInputs(sweeps=[("napi-modes", frame)]), title=title)
    rows = "".join(
        f"<tr><td>{m}</td><td>{r:,.0f}</td></tr>"
        for m, r in saturation(table).itertuples(index=False)
    )
    sat = (
        '<section id="saturation"><h2>Saturation throughput</h2>'
        "<table><thead><tr><th>mode</th><th>requests/s</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
        '<p class="meta">the largest achieved rate over the offered loads; '
        "mechanisms: docs/models/napi-modes.md</p></section>\n"
    )
    return html.replace("<nav>", sat + "<nav>", 1)


def write_napi_modes(table: pd.DataFrame, out: str | os.PathLike[str]) -> Path:
    """Writes ``napi-modes.parquet`` and ``napi-modes.html`` to folder ``out``."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    table.to_parquet(folder / "napi-modes.parquet", index=False)
    path = folder / "napi-modes.html"
    path.write_text(napi_modes_html(table), encoding="utf-8")
    return path
