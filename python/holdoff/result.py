"""The result of one run: the core's report plus pandas views of it.

The report (``RunResult.report``) is the parsed JSON the core returns; it is
deterministic (same scenario and seed give the same bytes, see
:meth:`RunResult.to_json`). Wall-clock numbers are kept apart in
``RunResult.perf`` because they differ from run to run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from holdoff.moderator import REGISTER_KEYS
from holdoff.summary import summary_text

#: Columns of :attr:`RunResult.ports` (one row per NIC port).
PORT_COLUMNS = [
    "port",
    "rx_packets",
    "rx_bytes",
    "tx_packets",
    "tx_bytes",
    "interrupts",
    "interrupts_per_s",
    "n_vectors",
    "rx_ring_max_occupancy",
]
#: Columns of :attr:`RunResult.vectors` (one row per interrupt vector).
VECTOR_COLUMNS = ["port", "vector", "interrupts", "interrupts_per_s", "throttle_interval_ns"]
#: Columns of :attr:`RunResult.hosts` (one row per host; CPU time per class).
HOST_COLUMNS = [
    "host",
    "profile",
    "driver",
    "cores",
    "cpu_ns_hardirq",
    "cpu_ns_softirq",
    "cpu_ns_app",
    "cpu_ns_idle",
    "cpu_util_hardirq",
    "cpu_util_softirq",
    "cpu_util_app",
    "cpu_util_busy",
]
LATENCY_STATS = ["count", "min", "mean", "p50", "p90", "p99", "p999", "max"]
#: Columns of :attr:`RunResult.apps` (one row per application; latency NaN if none).
APP_COLUMNS = [
    "app",
    "kind",
    "host",
    "sent",
    "received",
    "rx_bytes",
    "throughput_bps",
    *(f"latency_us_{stat}" for stat in LATENCY_STATS),
    "tx_bytes",
    "transactions",
    "transactions_per_s",
]
#: Columns of :attr:`RunResult.tcp` (one row per side of every TCP connection).
TCP_COLUMNS = [
    "conn",
    "app",
    "host",
    "segs_out",
    "data_segs_out",
    "acks_out",
    "delayed_acks",
    "retransmits",
    "fast_retransmits",
    "timeouts",
    "bytes_acked",
    "bytes_received",
    "cwnd",
    "sndbuf",
]
#: Columns of :attr:`RunResult.netpipe` (one row per NetPIPE point).
NETPIPE_COLUMNS = ["app", "index", "bytes", "nrepeat", "t_us", "np_mbps", "mbit_per_s"]
#: Columns of :attr:`RunResult.generators` (one row per traffic generator).
GENERATOR_COLUMNS = ["generator", "sent_packets", "sent_bytes", "offered_bps"]
#: Columns of :attr:`RunResult.registers` (one row per register of every port,
#: EITR one row per vector).
REGISTER_COLUMNS = ["port", "register", "vector", "value", "in_effect"]
#: The registers a port reports (``summary.ports[i].registers``), in datasheet order.
REGISTERS = ("itr_256ns", "eitr_256ns", *REGISTER_KEYS[1:], "ide")
#: Registers that the delay-timer unit drives (bypassed in MSI-X mode).
DELAY_TIMERS = ("rdtr_1024ns", "radv_1024ns", "tidv_1024ns", "tadv_1024ns")
#: Columns of :meth:`RunResult.timeseries_long`.
TIMESERIES_LONG_COLUMNS = ["t_us", "entity", "metric", "value"]
#: Columns of :attr:`RunResult.changes` (one row per ``[[at]]`` path applied).
CHANGE_COLUMNS = ["t_ns", "t_ms", "path", "value"]
#: Columns of :attr:`RunResult.latency`.
LATENCY_COLUMNS = ["app", "value_us", "count"]

REPORT_FILE = "report.json"
SUMMARY_FILE = "summary.txt"
PERF_FILE = "perf.json"


class RunResult:
    """One finished run.

    Attributes:
        report: the parsed report (``holdoff_version``, ``scenario``, ``seed``,
            ``config``, ``summary``, ``timeseries``, ``histograms``).
        perf: wall-clock performance of the run (``wall_time_s``,
            ``events_processed``, ``sim_packets``, ``events_per_s``,
            ``packets_per_s``, ``peak_rss_bytes``, ``peak_queued_events``,
            ``queued_event_bytes``, ``scheduled_groups``, ``train_events``; see docs/outputs.md);
            not part of the deterministic report.
    """

    def __init__(self, report_json: str, perf: Mapping[str, float | int]) -> None:
        self._report_json = report_json
        self.report: dict[str, Any] = json.loads(report_json)
        self.perf: dict[str, float | int] = dict(perf)

    @classmethod
    def from_report(
        cls, report: Mapping[str, Any], perf: Mapping[str, float | int] | None = None
    ) -> RunResult:
        """A result from an already parsed report (e.g. a saved ``report.json``).

        :meth:`to_json` then gives the report re-serialised, not the core's bytes.
        """
        return cls(json.dumps(report), perf or {})

    def __repr__(self) -> str:
        ledger = self.summary.get("ledger", {})
        return (
            f"RunResult(scenario={self.scenario!r}, seed={self.seed}, "
            f"sim_time_ms={self.sim_time_ns / 1e6:g}, balanced={ledger.get('balanced')})"
        )

    # -- plain values -------------------------------------------------------

    @property
    def scenario(self) -> str:
        """The scenario's name."""
        return str(self.report.get("scenario", ""))

    @property
    def seed(self) -> int:
        """The seed the run used (the override if one was given)."""
        return int(self.report.get("seed", 0))

    @property
    def version(self) -> str:
        """The holdoff version that produced the report."""
        return str(self.report.get("holdoff_version", ""))

    @property
    def config(self) -> dict[str, Any]:
        """The validated scenario as the core understood it (defaults filled in)."""
        return _section(self.report, "config")

    @property
    def summary(self) -> dict[str, Any]:
        """The report's ``summary`` section."""
        return _section(self.report, "summary")

    @property
    def sim_time_ns(self) -> int:
        """Simulated time [ns]."""
        return int(self.summary.get("sim_time_ns", 0))

    @property
    def ledger(self) -> dict[str, Any]:
        """Packet accounting: injected, delivered, dropped, in_flight, balanced."""
        return _section(self.summary, "ledger")

    @property
    def drops(self) -> dict[str, int]:
        """Dropped packets by reason."""
        return _section(self.summary, "drops")

    @property
    def warnings(self) -> list[dict[str, str]]:
        """Configured values the chip or driver ignores or clamps.

        Each is ``{"field": "hosts[0].nics[0].moderation.radv_1024ns", "message": ...}``;
        empty when there are none (or the core that made the report emits none).
        """
        warnings: list[dict[str, str]] = self.summary.get("warnings") or []
        return warnings

    def to_json(self) -> str:
        """The report exactly as the core returned it (deterministic)."""
        return self._report_json

    @cached_property
    def changes(self) -> pd.DataFrame:
        """The ``[[at]]`` changes applied during the run, in time order; see
        :data:`CHANGE_COLUMNS`. ``value`` is the value as written (a number,
        a string, a table as a dict); empty when the scenario has none."""
        rows = [
            {
                "t_ns": int(c["t_ns"]),
                "t_ms": c["t_ns"] / 1e6,
                "path": c["path"],
                "value": c["value"],
            }
            for c in self.report.get("changes") or []
        ]
        return _frame(rows, CHANGE_COLUMNS)

    # -- tables -------------------------------------------------------------

    @cached_property
    def ports(self) -> pd.DataFrame:
        """One row per NIC port; see :data:`PORT_COLUMNS`.

        ``interrupts_per_s`` is the sum over the port's vectors and
        ``n_vectors`` their number; :attr:`vectors` has them one by one.
        """
        rows = []
        for port in self.summary.get("ports", []):
            vectors = port.get("vectors", [])
            row = _flatten({k: v for k, v in port.items() if k != "registers"})
            row["n_vectors"] = len(vectors)
            row["interrupts_per_s"] = float(sum(v.get("interrupts_per_s", 0.0) for v in vectors))
            rows.append(row)
        return _frame(rows, PORT_COLUMNS)

    @cached_property
    def vectors(self) -> pd.DataFrame:
        """One row per interrupt vector of every port; see :data:`VECTOR_COLUMNS`."""
        rows = [
            {"port": port.get("port"), **_flatten(vector)}
            for port in self.summary.get("ports", [])
            for vector in port.get("vectors", [])
        ]
        return _frame(rows, VECTOR_COLUMNS)

    @cached_property
    def registers(self) -> pd.DataFrame:
        """The moderation registers as each port's chip holds them at the end of the run.

        One row per (port, register) of :data:`REGISTERS`, EITR one row per
        vector (``vector`` is NA for the port-wide registers); see
        :data:`REGISTER_COLUMNS`. ``value`` is in the register's own unit
        (its name says which; ``ide`` is 1 when set). ``in_effect`` is False,
        with ``value`` NA, for a register the chip does not have, and False
        with the value held for a delay timer that the port's interrupt mode
        bypasses (MSI-X: ``delay_timers_active`` false in the report). Empty
        when the report carries no registers.
        """
        rows = []
        for port in self.summary.get("ports", []):
            registers = port.get("registers")
            if not isinstance(registers, Mapping):
                continue
            timers_act = bool(registers.get("delay_timers_active", True))
            for name in REGISTERS:
                value = registers.get(name)
                acts = timers_act or name not in DELAY_TIMERS
                values = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
                for vector, item in values:
                    rows.append(
                        {
                            "port": port.get("port"),
                            "register": name,
                            "vector": vector,
                            "value": None if item is None else int(item),
                            "in_effect": item is not None and acts,
                        }
                    )
        frame = pd.DataFrame.from_records(rows, columns=REGISTER_COLUMNS)
        return frame.astype(
            {"port": "object", "register": "object", "vector": "Int64", "value": "Int64"}
        ).astype({"in_effect": "bool"})

    @cached_property
    def hosts(self) -> pd.DataFrame:
        """One row per host, see :data:`HOST_COLUMNS`.

        The CPU dicts are flattened (``cpu_util_hardirq``, ``cpu_ns_idle``...);
        ``cpu_util_*`` are fractions of the host's total CPU time (0..1).
        """
        return _frame((_flatten(h) for h in self.summary.get("hosts", [])), HOST_COLUMNS)

    @cached_property
    def apps(self) -> pd.DataFrame:
        """One row per application; latency flattened (``latency_us_p99``...), see
        :data:`APP_COLUMNS`. Latency columns are NaN for apps that measure none.

        ``transactions_per_s``: rpc_open its ``achieved_rps`` (completed
        requests over the time from its ``start_us``); other apps that
        completed transactions, ``transactions`` over the simulated time (the
        span the core's rpc ``throughput_bps`` is taken over); NA otherwise.
        """
        seconds = self.sim_time_ns / 1e9
        rows = []
        for app in self.summary.get("apps", []):
            row = _flatten(app)
            done = row.get("transactions") or 0
            if row.get("rpc_open_achieved_rps") is not None:
                row["transactions_per_s"] = row["rpc_open_achieved_rps"]
            elif done and seconds > 0:
                row["transactions_per_s"] = done / seconds
            rows.append(row)
        return _frame(rows, APP_COLUMNS)

    @cached_property
    def tcp(self) -> pd.DataFrame:
        """One row per side (``host``) of every TCP connection, its counters at
        the end of the run; see :data:`TCP_COLUMNS` (``tsq_throttles`` and
        ``rcvbuf`` follow when the report has them). Empty without TCP."""
        rows = [
            {"conn": conn.get("conn"), "app": conn.get("app"), **side}
            for conn in self.summary.get("tcp") or []
            for side in conn.get("sides") or []
        ]
        return _frame(rows, TCP_COLUMNS)

    @cached_property
    def netpipe(self) -> pd.DataFrame:
        """NetPIPE points, one row per (app, point); see :data:`NETPIPE_COLUMNS`:
        message size [bytes], repetitions, ``t_us`` (the least half round trip
        over the trials, µs), ``np_mbps`` (NetPIPE's Mbps, 2^20 bit/s) and
        ``mbit_per_s`` (10^6 bit/s). Empty without a NetPIPE application."""
        rows = [
            {"app": app.get("app"), **point}
            for app in self.summary.get("apps", [])
            for point in app.get("netpipe") or []
        ]
        return _frame(rows, NETPIPE_COLUMNS)

    @cached_property
    def generators(self) -> pd.DataFrame:
        """One row per traffic generator; see :data:`GENERATOR_COLUMNS`."""
        rows = (_flatten(g) for g in self.summary.get("generators", []))
        return _frame(rows, GENERATOR_COLUMNS)

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        """Time series, wide: index ``t_us`` (float, µs), one column per ``entity/metric`` key."""
        section = self.report.get("timeseries") or {}
        t_us = pd.Index([t / 1000.0 for t in section.get("t_ns", [])], dtype="float64", name="t_us")
        series = section.get("series", {})
        frame = pd.DataFrame(
            {key: pd.Series(values, index=t_us, dtype="float64") for key, values in series.items()},
            index=t_us,
        )
        frame.columns.name = "series"
        return frame

    def timeseries_long(self) -> pd.DataFrame:
        """Time series, tidy: columns ``t_us, entity, metric, value``.

        A key ``"host.nic/interrupts_per_s"`` is split at its last ``/`` into
        entity ``host.nic`` and metric ``interrupts_per_s``.
        """
        wide = self.timeseries
        if wide.columns.empty:
            return pd.DataFrame(
                {
                    "t_us": pd.Series(dtype="float64"),
                    "entity": pd.Series(dtype="str"),
                    "metric": pd.Series(dtype="str"),
                    "value": pd.Series(dtype="float64"),
                }
            )
        long = wide.reset_index().melt(id_vars="t_us", var_name="series", value_name="value")
        keys = long.pop("series").astype("str")
        parts = keys.str.rpartition("/")
        long.insert(1, "entity", parts[0])
        long.insert(2, "metric", parts[2])
        return long[TIMESERIES_LONG_COLUMNS]

    @cached_property
    def latency(self) -> pd.DataFrame:
        """Latency histograms: one row per (app, bucket) with ``value_us`` and ``count``."""
        rows = [
            {"app": app, "value_us": value_ns / 1000.0, "count": count}
            for app, buckets in (self.report.get("histograms") or {}).items()
            for value_ns, count in buckets
        ]
        frame = pd.DataFrame(rows, columns=LATENCY_COLUMNS)
        return frame.astype({"value_us": "float64", "count": "int64"})

    # -- output -------------------------------------------------------------

    def save(
        self, directory: str | Path, *, timeseries_format: Literal["csv", "parquet"] = "csv"
    ) -> dict[str, Path]:
        """Writes the run to ``directory`` (created if needed) and returns the files.

        Files: ``report.json`` (exactly :meth:`to_json`), ``summary.txt`` (the
        human summary), ``timeseries.csv`` or ``timeseries.parquet`` (wide,
        index ``t_us``) and ``perf.json`` (wall-clock numbers).
        """
        if timeseries_format not in ("csv", "parquet"):
            raise ValueError(
                f"timeseries_format must be 'csv' or 'parquet', not {timeseries_format!r}"
            )
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        files = {
            "report": out / REPORT_FILE,
            "summary": out / SUMMARY_FILE,
            "timeseries": out / f"timeseries.{timeseries_format}",
            "perf": out / PERF_FILE,
        }
        files["report"].write_text(self._report_json, encoding="utf-8")
        files["summary"].write_text(summary_text(self), encoding="utf-8")
        if timeseries_format == "csv":
            self.timeseries.to_csv(files["timeseries"])
        else:
            self.timeseries.to_parquet(files["timeseries"])
        files["perf"].write_text(json.dumps(self.perf, indent=2, sort_keys=True) + "\n", "utf-8")
        return files


def _section(report: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A nested section of the report; empty if the report has none."""
    value = report.get(key)
    return value if isinstance(value, dict) else {}


def _flatten(record: Mapping[str, Any]) -> dict[str, Any]:
    """Flattens nested dicts one level (``cpu_util: {busy: x}`` → ``cpu_util_busy``).

    Lists are left out (they have their own tables) and a nested dict that is
    ``None`` (e.g. ``latency_us`` of an app that measures none) gives no columns.
    """
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, Mapping):
            for sub, inner in value.items():
                flat[f"{key}_{sub}"] = inner
        elif isinstance(value, list) or value is None:
            continue
        else:
            flat[key] = value
    return flat


def _frame(rows: Iterable[Mapping[str, Any]], columns: list[str]) -> pd.DataFrame:
    """A DataFrame with the documented ``columns`` first, then any others the core added."""
    records = list(rows)
    extra = [k for r in records for k in r if k not in columns]
    ordered = columns + list(dict.fromkeys(extra))
    return pd.DataFrame.from_records(records, columns=ordered)
