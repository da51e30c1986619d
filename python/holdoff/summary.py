"""The human-readable summary of a run, for terminals (rich) and text files."""

from __future__ import annotations

import io
import math
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from holdoff.result import RunResult

#: Width of the plain-text summary (summary.txt) in columns.
SUMMARY_WIDTH = 100


def render_summary(result: RunResult) -> Group:
    """The summary as a rich renderable: header, tables, drops, ledger, performance."""
    summary = result.summary
    parts: list[RenderableType] = [_header(result)]
    parts.extend(
        table
        for table in (
            _ports_table(summary.get("ports", [])),
            _napi_table(summary.get("ports", [])),
            _hosts_table(summary.get("hosts", [])),
            _apps_table(summary.get("apps", [])),
            _generators_table(summary.get("generators", [])),
        )
        if table is not None
    )
    parts.append(_drops_line(result.drops))
    parts.append(_ledger_line(result.ledger))
    parts.append(_perf_line(summary, result.perf))
    return Group(*parts)


def summary_text(result: RunResult, *, width: int = SUMMARY_WIDTH) -> str:
    """The summary as plain text (no colours), ``width`` columns wide."""
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=width, no_color=True, color_system=None, force_terminal=False
    )
    console.print(render_summary(result))
    return "".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines())


# -- pieces -------------------------------------------------------------------


def _header(result: RunResult) -> Text:
    text = Text()
    text.append("holdoff ", style="bold")
    text.append(result.version or "?")
    text.append("  scenario ", style="bold")
    text.append(result.scenario, style="cyan")
    text.append("  seed ", style="bold")
    text.append(str(result.seed))
    text.append("  simulated ", style="bold")
    text.append(f"{_num(result.sim_time_ns / 1e6, 3)} ms")
    return text


def _row(table: Table, *cells: str) -> None:
    # Text cells: names from the scenario are shown as they are, never as markup.
    table.add_row(*(Text(cell) for cell in cells))


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", header_style="bold")
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right", no_wrap=i == 0)
    return table


def _ports_table(ports: list[dict[str, Any]]) -> Table | None:
    if not ports:
        return None
    table = _table(
        "NIC ports",
        "port",
        "chip",
        "moderation",
        "rx pkts",
        "tx pkts",
        "interrupts",
        "int/s per vector",
        "ring max",
    )
    for port in ports:
        per_vector = "\n".join(
            f"v{v.get('vector')} {_int(v.get('interrupts_per_s'))}" for v in port.get("vectors", [])
        )
        _row(
            table,
            str(port.get("port")),
            str(port.get("chip", "-")),
            str(port.get("moderation", "-")),
            _int(port.get("rx_packets")),
            _int(port.get("tx_packets")),
            _int(port.get("interrupts")),
            per_vector or "-",
            _int(port.get("rx_ring_max_occupancy")),
        )
    return table


#: NAPI counters of a vector, in report order, with their column titles.
_NAPI_COLUMNS = (
    ("busy_polls", "busy polls"),
    ("busy_poll_packets", "busy pkts"),
    ("irq_suspends", "suspends"),
    ("irq_resumes", "resumes"),
    ("suspend_timer_expiries", "suspend expiries"),
    ("defer_timer_polls", "defer polls"),
)


def _napi_table(ports: list[dict[str, Any]]) -> Table | None:
    """Busy polling, IRQ suspension and deferral counters, for the vectors that
    used any (the table is left out when none did)."""
    rows = [
        (f"{port.get('port')} v{vector.get('vector')}", napi)
        for port in ports
        for vector in port.get("vectors", [])
        if any((napi := vector.get("napi") or {}).get(key) for key, _ in _NAPI_COLUMNS)
    ]
    if not rows:
        return None
    table = _table(
        "NAPI (busy polling, IRQ suspension, deferral)", "vector", *(t for _, t in _NAPI_COLUMNS)
    )
    for name, napi in rows:
        _row(table, name, *(_int(napi.get(key)) for key, _ in _NAPI_COLUMNS))
    return table


def _hosts_table(hosts: list[dict[str, Any]]) -> Table | None:
    if not hosts:
        return None
    table = _table(
        "Hosts (CPU utilisation)",
        "host",
        "profile",
        "driver",
        "cores",
        "hardirq",
        "softirq",
        "app",
        "busy",
    )
    for host in hosts:
        util = host.get("cpu_util") or {}
        _row(
            table,
            str(host.get("host")),
            str(host.get("profile")),
            str(host.get("driver")),
            _int(host.get("cores")),
            _pct(util.get("hardirq")),
            _pct(util.get("softirq")),
            _pct(util.get("app")),
            _pct(util.get("busy")),
        )
    return table


def _apps_table(apps: list[dict[str, Any]]) -> Table | None:
    if not apps:
        return None
    table = _table(
        "Applications",
        "app",
        "kind",
        "host",
        "sent",
        "received",
        "Mb/s",
        "p50 us",
        "p99 us",
        "max us",
    )
    for app in apps:
        latency = app.get("latency_us") or {}
        _row(
            table,
            str(app.get("app")),
            str(app.get("kind")),
            str(app.get("host")),
            _int(app.get("sent")),
            _int(app.get("received")),
            _num(_scaled(app.get("throughput_bps"), 1e-6), 2),
            _num(latency.get("p50"), 1),
            _num(latency.get("p99"), 1),
            _num(latency.get("max"), 1),
        )
    return table


def _generators_table(generators: list[dict[str, Any]]) -> Table | None:
    if not generators:
        return None
    table = _table("Traffic generators", "generator", "sent pkts", "sent bytes", "offered Mb/s")
    for gen in generators:
        _row(
            table,
            str(gen.get("generator")),
            _int(gen.get("sent_packets")),
            _int(gen.get("sent_bytes")),
            _num(_scaled(gen.get("offered_bps"), 1e-6), 2),
        )
    return table


def _drops_line(drops: dict[str, int]) -> Text:
    text = Text("drops: ", style="bold")
    nonzero = {reason: n for reason, n in drops.items() if n}
    if not nonzero:
        text.append("none")
    else:
        text.append(", ".join(f"{reason} {_int(n)}" for reason, n in nonzero.items()), "yellow")
    return text


def _ledger_line(ledger: dict[str, Any]) -> Text:
    text = Text("ledger: ", style="bold")
    if ledger.get("balanced"):
        text.append("balanced", style="green")
    else:
        text.append("NOT BALANCED", style="bold red")
    text.append(
        f"  injected {_int(ledger.get('injected'))} = delivered {_int(ledger.get('delivered'))}"
        f" + dropped {_int(ledger.get('dropped'))} + in flight {_int(ledger.get('in_flight'))}"
    )
    return text


def _perf_line(summary: dict[str, Any], perf: dict[str, float | int]) -> Text:
    text = Text("performance: ", style="bold")
    text.append(
        f"{_int(summary.get('events_processed'))} events in "
        f"{_duration(perf.get('wall_time_s'))} wall, {_si(perf.get('events_per_s'))} events/s\n"
    )
    text.append("speed: ", style="bold")
    text.append(f"{_si(perf.get('packets_per_s'))} simulated packets per wall second")
    return text


# -- number formatting ------------------------------------------------------


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _int(value: Any) -> str:
    return "-" if _missing(value) else f"{round(value):,}"


def _num(value: Any, digits: int) -> str:
    return "-" if _missing(value) else f"{value:,.{digits}f}"


def _pct(value: Any) -> str:
    return "-" if _missing(value) else f"{100.0 * value:.1f}%"


def _scaled(value: Any, factor: float) -> float | None:
    return None if _missing(value) else float(value) * factor


def _duration(seconds: Any) -> str:
    if _missing(seconds):
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def _si(value: Any) -> str:
    if _missing(value):
        return "-"
    for factor, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= factor:
            return f"{value / factor:.2f}{suffix}"
    return f"{value:.0f}"
