"""The tables of a run, once, for every place that shows them.

The terminal summary (:mod:`holdoff.summary`) and the HTML report
(:mod:`holdoff.report`) show the same tables; both take them from here, built
from the :class:`~holdoff.result.RunResult` DataFrames (``ports``,
``vectors``, ``registers``, ``hosts``, ``apps``, ``generators``,
``changes``). A table is a list of :class:`Column` (the frame's column key, a
readable header with its unit, a formatter) and rows of already formatted
text cells; a header or a cell may hold several lines (one per vector),
separated by ``"\\n"``.

Units: latencies are µs; a register is shown as the chip holds it, its unit
under its name (ITR counts 256 ns units, EITR µs, RDTR/RADV/TIDV/TADV
1.024 µs units, the 8254x/8257x datasheets' timer granularity); rates are per second;
throughput is in Mb/s (10^6 bit/s); CPU shares are percent of the host's
total CPU time.

This module depends on pandas only: it reads a run through the small
:class:`RunView` interface, so that :mod:`holdoff.result` can render its own
summary without an import cycle.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from holdoff.inputs import printable

#: The text of a value that is missing (no latency measured, no such register).
MISSING = "–"
#: The text of a register the chip does not have.
NOT_IN_EFFECT = "—"


class RunView(Protocol):
    """What the tables read from a run (:class:`~holdoff.result.RunResult` has it all)."""

    @property
    def scenario(self) -> str: ...
    @property
    def seed(self) -> int: ...
    @property
    def version(self) -> str: ...
    @property
    def sim_time_ns(self) -> int: ...
    @property
    def ledger(self) -> dict[str, Any]: ...
    @property
    def drops(self) -> dict[str, int]: ...
    @property
    def warnings(self) -> list[dict[str, str]]: ...
    @property
    def perf(self) -> dict[str, float | int]: ...
    @property
    def ports(self) -> pd.DataFrame: ...
    @property
    def vectors(self) -> pd.DataFrame: ...
    @property
    def registers(self) -> pd.DataFrame: ...
    @property
    def hosts(self) -> pd.DataFrame: ...
    @property
    def apps(self) -> pd.DataFrame: ...
    @property
    def generators(self) -> pd.DataFrame: ...
    @property
    def changes(self) -> pd.DataFrame: ...
    @property
    def netpipe(self) -> pd.DataFrame: ...
    @property
    def tcp(self) -> pd.DataFrame: ...


# -- number formatting ----------------------------------------------------------------


def is_missing(value: Any) -> bool:
    """None, NaN and pandas' NA are missing."""
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def text(value: Any) -> str:
    """A name as it is shown: control characters escaped (a scenario's names
    can neither forge a line nor send an escape sequence)."""
    return MISSING if is_missing(value) else printable(str(value))


def lines(value: Any) -> str:
    """A cell this module built, one line per vector (shown as it is, not escaped)."""
    return MISSING if is_missing(value) else str(value)


def count(value: Any) -> str:
    """An integer with thousands separators: ``146,424``."""
    return MISSING if is_missing(value) else f"{round(float(value)):,}"


def fixed(digits: int) -> Callable[[Any], str]:
    """A formatter with ``digits`` decimals and thousands separators."""

    def fmt(value: Any) -> str:
        return MISSING if is_missing(value) else f"{float(value):,.{digits}f}"

    return fmt


def percent(value: Any) -> str:
    """A fraction (0..1) as a percentage: ``0.651`` → ``65.1 %``."""
    return MISSING if is_missing(value) else f"{100.0 * float(value):.1f} %"


def mbps(value: Any) -> str:
    """bit/s as Mb/s (10^6 bit/s), two decimals."""
    return MISSING if is_missing(value) else f"{float(value) / 1e6:,.2f}"


def register(value: Any) -> str:
    """A register value; a register the chip does not have reads ``—``."""
    if is_missing(value):
        return NOT_IN_EFFECT
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{int(value):,}"


def duration(seconds: Any) -> str:
    """A wall-clock duration in a readable unit: ``36.4 ms``."""
    if is_missing(seconds):
        return MISSING
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def si(value: Any) -> str:
    """A large number with an SI prefix: ``12.65 M``."""
    if is_missing(value):
        return MISSING
    for factor, suffix in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= factor:
            return f"{value / factor:.2f}{suffix}"
    return f"{value:.0f}"


# -- the table model ------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """One column: the frame's column ``key``, a readable ``header`` and a formatter."""

    key: str
    header: str
    fmt: Callable[[Any], str] = text
    #: Names (left-aligned) rather than numbers (right-aligned).
    label: bool = False


@dataclass(frozen=True)
class Table:
    """A table ready to render: formatted text cells, one list per row."""

    name: str
    title: str
    columns: tuple[Column, ...]
    rows: list[list[str]]
    note: str = ""

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns]


def make_table(
    name: str, title: str, columns: Sequence[Column], frame: pd.DataFrame, note: str = ""
) -> Table:
    """Formats ``frame``'s columns (a column the frame lacks reads as missing)."""
    records = frame.to_dict("records")
    rows = [[c.fmt(record.get(c.key)) for c in columns] for record in records]
    return Table(name, title, tuple(columns), rows, note)


def without_empty(table: Table) -> Table:
    """``table`` without the number columns that are missing in every row (and
    without its note, which explains the missing mark, when none is left)."""
    keep = [
        i
        for i, c in enumerate(table.columns)
        if c.label or any(row[i] != MISSING for row in table.rows)
    ]
    rows = [[row[i] for i in keep] for row in table.rows]
    note = table.note if any(MISSING in row for row in rows) else ""
    return Table(table.name, table.title, tuple(table.columns[i] for i in keep), rows, note)


def columns(
    labels: Sequence[str], *numbers: tuple[str, str, Callable[[Any], str]]
) -> tuple[Column, ...]:
    """Name columns (header = key), then ``(key, header, formatter)`` number columns."""
    return (
        *(Column(key, key, label=True) for key in labels),
        *(Column(key, header, fmt) for key, header, fmt in numbers),
    )


PORT_TABLE = columns(
    ["port", "chip", "moderation"],
    ("rx_packets", "rx pkts", count),
    ("tx_packets", "tx pkts", count),
    ("interrupts", "interrupts", count),
    ("vector_rates", "int/s per vector", lines),
    ("rx_ring_max_occupancy", "ring max", count),
)

#: The registers of a port, in datasheet order, each with its unit under its name.
REGISTER_TABLE = columns(
    ["port"],
    ("itr_256ns", "ITR\n×256 ns", register),
    ("eitr_256ns", "EITR\n×256 ns", register),
    ("eitr_us", "EITR\nµs", register),
    *(
        (f"{r.lower()}_1024ns", f"{r}\n×1.024 µs", register)
        for r in ("RDTR", "RADV", "TIDV", "TADV")
    ),
    ("ide", "IDE", register),
)
REGISTER_NOTE = (
    f"values as the chip holds them at the end of the run; {NOT_IN_EFFECT} = the chip has "
    "no such register, not in effect; (held) = the chip holds the value but it does not act "
    "(MSI-X bypasses the delay timers)"
)

#: Busy polling, IRQ suspension and deferral counters of a vector (``napi_*`` columns).
NAPI_TABLE = columns(
    ["vector"],
    *(
        (f"napi_{key}", header, count)
        for key, header in (
            ("busy_polls", "busy polls"),
            ("busy_poll_packets", "busy pkts"),
            ("irq_suspends", "suspends"),
            ("irq_resumes", "resumes"),
            ("suspend_timer_expiries", "suspend expiries"),
            ("defer_timer_polls", "defer polls"),
        )
    ),
)

HOST_TABLE = columns(
    ["host", "profile", "driver"],
    ("cores", "cores", count),
    *((f"cpu_util_{c}", c, percent) for c in ("hardirq", "softirq", "app", "busy")),
)

APP_TABLE = columns(
    ["app", "kind", "host"],
    ("sent", "sent", count),
    ("received", "received", count),
    ("rx_bytes", "rx bytes", count),
    ("tx_bytes", "tx bytes", count),
    ("throughput_bps", "Mb/s", mbps),
    ("transactions_per_s", "trans/s", fixed(1)),
)
APP_NOTE = f"{MISSING} = not counted for this kind of application"

#: Per column, the kinds of application the core does not count it for (its
#: report holds 0 there; crates/holdoff-core/src/scenario/report.rs): shown as missing.
_STREAMS = {"netpipe", "netpipe_receiver", "iperf", "iperf_receiver"}
_SERVERS = {"rpc_server", "rpc_open_server"}
UNCOUNTED = {
    "sent": frozenset({*_STREAMS, *_SERVERS, "udp_sink"}),
    "received": frozenset({*_STREAMS, *_SERVERS, "udp_send"}),
    "rx_bytes": frozenset({"netpipe", "netpipe_receiver", "iperf", *_SERVERS, "udp_send"}),
    "tx_bytes": frozenset(
        {"udp_sink", "udp_send", "ping", "rpc", "netpipe", "netpipe_receiver", "iperf_receiver"}
        | _SERVERS
    ),
    "throughput_bps": frozenset({"netpipe", "netpipe_receiver", "iperf", *_SERVERS, "udp_send"}),
}

#: What each kind's latency measures (docs/outputs.md, the core's apps modules).
LATENCY_MEANS = {
    "udp_sink": "one way: generator emission to application read",
    "ping": "round trip: send call to reply read",
    "rpc": "transaction: request write call to whole response read",
    "rpc_open": "from the request's intended send time (its arrival) to response read",
}

LATENCY_TABLE = columns(
    ["app", "measures"],
    ("latency_us_count", "count", count),
    *((f"latency_us_{p}", f"{p} [µs]", fixed(1)) for p in ("p50", "p99", "max")),
)

#: An open-loop load's requests (``rpc_open_*`` columns of the apps).
OPEN_LOOP_TABLE = columns(
    ["app"],
    ("rpc_open_offered_rps", "offered/s", fixed(1)),
    ("rpc_open_achieved_rps", "done/s", fixed(1)),
    *(
        (f"rpc_open_{key}", key, count)
        for key in ("issued", "completed", "dropped", "timeouts", "outstanding")
    ),
)

#: TCP counters summed over an application's connections, per side (host).
TCP_TABLE = columns(
    ["app", "host"],
    ("connections", "conns", count),
    ("segs_out", "segs out", count),
    ("retransmits", "retrans", count),
    ("fast_retransmits", "fast retrans", count),
    ("timeouts", "RTOs", count),
    ("tsq_throttles", "TSQ holds", count),
)

NETPIPE_TABLE = (
    Column("index", "#", count),
    Column("bytes", "bytes", count),
    Column("nrepeat", "times", count),
    Column("t_us", "t [µs]", fixed(2)),
    Column("mbit_per_s", "Mb/s", fixed(2)),
)
NETPIPE_NOTE = (
    "t = the least half round trip over the trials, as NPtcp prints it; "
    "Mb/s = 10^6 bit/s (NPtcp's Mbps are 2^20 bit/s)"
)

CHANGE_TABLE = (
    Column("t_ms", "t [ms]", fixed(3)),
    Column("path", "path", label=True),
    Column("value", "value", label=True),
)

GENERATOR_TABLE = columns(
    ["generator"],
    ("sent_packets", "sent packets", count),
    ("sent_bytes", "sent bytes", count),
    ("offered_bps", "offered Mb/s", mbps),
    ("rx_packets", "rx packets", count),
)


def run_tables(run: RunView) -> list[Table]:
    """The tables of a run, in the order both renderings show them; empty ones left out."""
    tables = [
        _ports(run),
        _registers(run.registers),
        _napi(run.vectors),
        make_table("hosts", "Hosts (CPU time per class)", HOST_TABLE, run.hosts),
        without_empty(make_table("apps", "Applications", APP_TABLE, _apps(run.apps), APP_NOTE)),
        make_table("latency", "Latency", LATENCY_TABLE, _latency(run.apps)),
        *_netpipe(run.netpipe),
        make_table("open_loop", "Open-loop requests", OPEN_LOOP_TABLE, _open_loop(run.apps)),
        without_empty(
            make_table("tcp", "TCP, summed per application and side", TCP_TABLE, _tcp(run.tcp))
        ),
        make_table("generators", "Traffic generators", GENERATOR_TABLE, run.generators),
        make_table("changes", "Changes during the run ([[at]])", CHANGE_TABLE, _changes(run)),
    ]
    return [t for t in tables if t.rows]


def _apps(apps: pd.DataFrame) -> pd.DataFrame:
    """The apps with the counters the core does not keep for their kind as missing."""
    frame = apps.astype({key: "object" for key in UNCOUNTED})
    for key, kinds in UNCOUNTED.items():
        frame.loc[frame["kind"].isin(kinds), key] = None
    return frame


def _latency(apps: pd.DataFrame) -> pd.DataFrame:
    """The apps that measured a latency, each with what it measures, and
    below each sink its replay-selected frames (``latency_selected``)."""
    rows = []
    for app in apps.to_dict("records"):
        if not is_missing(app.get("latency_us_count")):
            rows.append({**app, "measures": LATENCY_MEANS.get(app["kind"], app["kind"])})
        selector = app.get("latency_selected_selector")
        if isinstance(selector, str):
            latency = app.get("latency_selected_latency_us") or {}
            rows.append(
                {
                    "app": app["app"],
                    "measures": f"one way, only the frames of {selector}",
                    "latency_us_count": app.get("latency_selected_packets"),
                    **{f"latency_us_{p}": latency.get(p) for p in ("p50", "p99", "max")},
                }
            )
    return pd.DataFrame(rows)


def _open_loop(apps: pd.DataFrame) -> pd.DataFrame:
    """The rpc_open apps (their ``rpc_open_*`` counters)."""
    return apps[apps["kind"] == "rpc_open"] if "rpc_open_issued" in apps else apps[:0]


def _tcp(sides: pd.DataFrame) -> pd.DataFrame:
    """Per (app, host): connections and the counters summed over them."""
    if sides.empty:
        return sides
    sums = [c for c in ("segs_out", "retransmits", "fast_retransmits", "timeouts") if c in sides]
    if "tsq_throttles" in sides:
        sums.append("tsq_throttles")
    grouped = sides.groupby(["app", "host"], sort=False)
    frame = grouped[sums].sum(min_count=1).join(grouped["conn"].nunique().rename("connections"))
    return frame.reset_index()


def _netpipe(points: pd.DataFrame) -> list[Table]:
    """One table of points per NetPIPE application."""
    return [
        make_table("netpipe", f"NetPIPE points ({text(app)})", NETPIPE_TABLE, group, NETPIPE_NOTE)
        for app, group in points.groupby("app", sort=False)
    ]


def _changes(run: RunView) -> pd.DataFrame:
    frame = run.changes.copy()
    frame["value"] = [change_value(v) for v in frame["value"]]
    return frame


def change_value(value: Any) -> str:
    """A changed value as TOML would write it inline (``2``, ``"e1000-5x"``, ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {change_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(change_value(v) for v in value) + "]"
    return text(value)


def _per_vector(vectors: pd.DataFrame, key: str, fmt: Callable[[Any], str]) -> dict[Any, str]:
    """Per port: one line per vector, ``v0 8,006``."""
    lines: dict[Any, list[str]] = {}
    for record in vectors.to_dict("records"):
        lines.setdefault(record["port"], []).append(f"v{record['vector']} {fmt(record[key])}")
    return {port: "\n".join(rows) for port, rows in lines.items()}


def _ports(run: RunView) -> Table:
    frame = run.ports.copy()
    rates = _per_vector(run.vectors, "interrupts_per_s", count)
    frame["vector_rates"] = [rates.get(port, MISSING) for port in frame["port"]]
    return make_table("ports", "NIC ports", PORT_TABLE, frame)


def _registers(registers: pd.DataFrame) -> Table:
    """One row per port, one column per register (EITR: one line per vector)."""
    cells: dict[Any, dict[str, list[tuple[Any, str]]]] = {}
    for record in registers.to_dict("records"):
        value = record["value"]
        if record["register"] == "ide" and not is_missing(value):
            value = bool(value)
        shown = register(value)
        if not record["in_effect"] and not is_missing(value):
            shown += " (held)"
        port = cells.setdefault(record["port"], {})
        port.setdefault(record["register"], []).append((record["vector"], shown))
    rows = [
        [text(name), *(_register_cell(port.get(c.key, [])) for c in REGISTER_TABLE[1:])]
        for name, port in cells.items()
    ]
    return Table("registers", "Registers in effect", REGISTER_TABLE, rows, REGISTER_NOTE)


def _register_cell(values: list[tuple[Any, str]]) -> str:
    if not values:
        return MISSING
    if len(values) == 1:
        return values[0][1]
    return "\n".join(f"v{vector} {shown}" for vector, shown in values)


def _napi(vectors: pd.DataFrame) -> Table:
    """Busy polling, IRQ suspension and deferral counters of the vectors that used any."""
    keys = [c.key for c in NAPI_TABLE[1:] if c.key in vectors]
    used = vectors[vectors[keys].fillna(0).astype(bool).any(axis=1)] if keys else vectors[:0]
    names = [f"{printable(p)} v{v}" for p, v in zip(used["port"], used["vector"], strict=True)]
    frame = used.assign(vector=names)
    return make_table("napi", "NAPI (busy polling, IRQ suspension, deferral)", NAPI_TABLE, frame)


# -- lines below the tables -----------------------------------------------------------


def header_text(run: RunView) -> list[tuple[str, str]]:
    """The run's identity as (label, value) pairs."""
    return [
        ("holdoff", run.version or "?"),
        ("scenario", text(run.scenario)),
        ("seed", str(run.seed)),
        ("simulated", f"{run.sim_time_ns / 1e6:,.3f} ms"),
    ]


def drops_text(drops: Mapping[str, int]) -> str:
    """Dropped packets by reason, ``none`` when nothing was dropped."""
    nonzero = [f"{reason} {count(n)}" for reason, n in drops.items() if n]
    return ", ".join(nonzero) or "none"


def ledger_text(ledger: Mapping[str, Any]) -> str:
    """The packet account: ``injected N = delivered + dropped + in flight``."""
    return (
        f"injected {count(ledger.get('injected'))} = delivered {count(ledger.get('delivered'))}"
        f" + dropped {count(ledger.get('dropped'))} + in flight {count(ledger.get('in_flight'))}"
    )


def warning_lines(warnings: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Each warning as (field, message)."""
    return [(text(w.get("field", "")), text(w.get("message", ""))) for w in warnings]
