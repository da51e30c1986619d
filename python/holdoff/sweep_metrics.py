"""One run's metrics as a flat row: the columns of a sweep table and a store entry.

Totals first (interrupt rate, busiest host's CPU, throughput, worst p99,
drops), then per port, host, application and generator, then the ledger; a
sweep's row also has its wall time and its run's report warnings as text.
Simplifies: a metric the run does not report is NaN (never 0). Units are in
the column names (``_bps``, ``_us``, ``_per_s``); CPU is a fraction of one core.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from holdoff.api import run_text
from holdoff.store import Scalar

_PORT_METRICS = ("interrupts", "rx_packets", "tx_packets", "rx_missed", "rx_ring_max_occupancy")
_HOST_METRICS = ("hardirq", "softirq", "app", "busy")
_APP_LATENCY = ("p50", "p99", "mean", "max")


def metrics_record(report: Mapping[str, Any]) -> dict[str, Scalar]:
    """One flat row of a run's report: identity, totals, then per-entity metrics.

    Totals: ``interrupts_per_s_total`` (all ports), ``cpu_util_busy_max``
    (busiest host), ``throughput_bps_total`` (all apps), ``latency_us_p99_max``
    (worst app), ``dropped``. Per entity, ``<entity>/<metric>``: ports
    ``interrupts``, ``interrupts_per_s`` (all vectors), ``rx_packets``,
    ``tx_packets``, ``rx_missed``, ``rx_ring_max_occupancy``; hosts
    ``cpu_util_{hardirq,softirq,app,busy}`` and ``busiest_core_ns``; apps ``received``,
    ``throughput_bps``, ``latency_us_{p50,p99,mean,max}`` (NaN without
    latency), with a replay's ``latency_of`` also
    ``latency_selected_us_{p50,p99,mean,max}`` and ``latency_selected_packets``;
    NetPIPE apps also ``netpipe_latency_us`` (median of its
    small-message times, sizes up to 64 B, as NetPIPE prints them: half a
    round trip), ``netpipe_latency_us_max`` and ``netpipe_mbit_mean`` (mean
    Mbit/s over its sizes of 1 KiB and more); generators ``offered_bps``,
    ``sent_packets``, ``rx_packets``; then ``ledger_*`` and ``drops_<reason>``.
    """
    summary = report.get("summary", {})
    ports = summary.get("ports", [])
    hosts = summary.get("hosts", [])
    apps = summary.get("apps", [])
    ledger = summary.get("ledger", {})
    p99s = [_num((a.get("latency_us") or {}).get("p99")) for a in apps]
    p99s = [v for v in p99s if not math.isnan(v)]
    rec: dict[str, Scalar] = {
        "holdoff_version": str(report.get("holdoff_version", "")),
        "scenario": str(report.get("scenario", "")),
        "seed": int(report.get("seed", 0)),
        "sim_time_ns": int(summary.get("sim_time_ns", 0)),
        "events_processed": int(summary.get("events_processed", 0)),
        "interrupts_per_s_total": float(sum(_port_rate(p) for p in ports)),
        "cpu_util_busy_max": max(
            (_num((h.get("cpu_util") or {}).get("busy")) for h in hosts), default=math.nan
        ),
        "throughput_bps_total": float(sum(_num(a.get("throughput_bps")) for a in apps)),
        "latency_us_p99_max": max(p99s, default=math.nan),
        "dropped": int(ledger.get("dropped", 0)),
    }
    for port in ports:
        name = port.get("port")
        rec[f"{name}/interrupts_per_s"] = _port_rate(port)
        for metric in _PORT_METRICS:
            rec[f"{name}/{metric}"] = int(port.get(metric) or 0)
    for host in hosts:
        util = host.get("cpu_util") or {}
        for metric in _HOST_METRICS:
            rec[f"{host.get('host')}/cpu_util_{metric}"] = _num(util.get(metric))
        rec[f"{host.get('host')}/busiest_core_ns"] = _num(host.get("busiest_core_ns"))
    for app in apps:
        name = app.get("app")
        latency = app.get("latency_us") or {}
        rec[f"{name}/received"] = int(app.get("received") or 0)
        rec[f"{name}/throughput_bps"] = _num(app.get("throughput_bps"))
        for stat in _APP_LATENCY:
            rec[f"{name}/latency_us_{stat}"] = _num(latency.get(stat))
        selected = app.get("latency_selected")
        if isinstance(selected, Mapping):
            sel = selected.get("latency_us") or {}
            rec[f"{name}/latency_selected_packets"] = int(selected.get("packets") or 0)
            for stat in _APP_LATENCY:
                rec[f"{name}/latency_selected_us_{stat}"] = _num(sel.get(stat))
        if app.get("netpipe"):
            rec.update(_netpipe_columns(name, app["netpipe"]))
    for gen in summary.get("generators", []):
        name = gen.get("generator")
        rec[f"{name}/offered_bps"] = _num(gen.get("offered_bps"))
        rec[f"{name}/sent_packets"] = int(gen.get("sent_packets") or 0)
        rec[f"{name}/rx_packets"] = int(gen.get("rx_packets") or 0)
    for key in ("injected", "delivered", "dropped", "in_flight"):
        rec[f"ledger_{key}"] = int(ledger.get(key, 0))
    rec["ledger_balanced"] = bool(ledger.get("balanced", False))
    for reason, count in summary.get("drops", {}).items():
        rec[f"drops_{reason}"] = int(count)
    return rec


#: NetPIPE sizes counted as small messages (latency) and as bulk (throughput) [B].
NETPIPE_SMALL_BYTES = 64
NETPIPE_BULK_BYTES = 1024


def _netpipe_columns(name: Any, rows: Sequence[Mapping[str, Any]]) -> dict[str, Scalar]:
    small = sorted(
        _num(r.get("t_us")) for r in rows if int(r.get("bytes", 0)) <= NETPIPE_SMALL_BYTES
    )
    bulk = [_num(r.get("mbit_per_s")) for r in rows if int(r.get("bytes", 0)) >= NETPIPE_BULK_BYTES]
    mid = len(small) // 2
    median = (
        math.nan
        if not small
        else (small[mid] if len(small) % 2 else (small[mid - 1] + small[mid]) / 2)
    )
    return {
        f"{name}/netpipe_latency_us": median,
        f"{name}/netpipe_latency_us_max": max(small, default=math.nan),
        f"{name}/netpipe_mbit_mean": sum(bulk) / len(bulk) if bulk else math.nan,
    }


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)


def _port_rate(port: Mapping[str, Any]) -> float:
    return float(sum(_num(v.get("interrupts_per_s")) for v in port.get("vectors", [])))


def compute_point(text: str) -> dict[str, Scalar]:
    """Runs one scenario (TOML text) and returns its :func:`metrics_record`
    plus wall time and the run's report warnings (:func:`warnings_text`).

    A plain module-level function so that process pools and Ray can ship it.
    """
    result = run_text(text)
    record = metrics_record(result.report)
    record["wall_time_s"] = float(result.perf.get("wall_time_s", math.nan))
    record["warnings"] = warnings_text(result.warnings)
    return record


def warnings_text(warnings: list[dict[str, str]]) -> str:
    """A run's report warnings as one table cell: ``field: message`` lines
    ("" without any)."""
    return "\n".join(f"{w['field']}: {w['message']}" for w in warnings)


def warnings_of_runs(points: Iterable[Any], cells: Iterable[Any]) -> list[tuple[str, str, str]]:
    """Every line of a sweep table's ``warnings`` cells (one cell per run)
    as ``("point N", field, message)``, in table order. Cells that are not
    text (runs stored before the column) hold none."""
    out: list[tuple[str, str, str]] = []
    for point, cell in zip(points, cells, strict=True):
        if isinstance(cell, str) and cell:
            for line in cell.split("\n"):
                field, _, message = line.partition(": ")
                out.append((f"point {point}", field, message))
    return out
