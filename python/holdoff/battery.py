"""The standard battery: the workloads a reviewer of a moderation change asks for.

Models: each workload is a scenario the project already runs elsewhere
(the FreeBSD AIM reproduction case, the bundled examples, ``holdoff
livelock``), rebuilt around the moderator under test on one of four chip
environments: the 82546 (ITR, 256 ns; Pentium-4-era Xeon, as the case), the
82574 (EITR, 256 ns), the I210 (EITR, 1 us) and the 82599 (EITR, 2.048 us
steps, 10 GbE), the last three on the modern Xeon profile. Every workload
names its source (:attr:`Workload.source`); docs/howto-test-moderation.md
lists them with their metrics.

Simplifies: run lengths are cut to what shows the behaviour (a few hundred
ms of bulk TCP, tens of ms of open-loop load and forwarding), not the
published run lengths; ``quick`` keeps the workloads marked quick. A
moderator that one chip's register cannot hold (its scenario fails to
validate there) is skipped on that chip with the reason.

Units: in the metric names (``_us``, ``_per_s``, ``_bps``); CPU as a
fraction of the host's cores, shown in %.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from holdoff import knobs
from holdoff.store import Scalar
from holdoff.sweep_metrics import metrics_record


@dataclass(frozen=True)
class ChipEnv:
    """One chip with the host profile and link it is tested on."""

    chip: str
    profile: str
    link: str
    #: Line rate of 64-byte frames on the link [frames/s]: 1e9 / ((64 + 20) * 8).
    line_rate_64b_pps: int
    #: The chip's throttle register, as the core names it (moderation::Throttle).
    throttle: str
    #: The profile kernel's HZ (host `hz` default: 1000 for the 2004 Linux
    #: 2.6.6 host, 250 for a modern Linux, the Kconfig default) [1/s].
    hz: int


#: The four chips of the battery. The 82546 row is the FreeBSD AIM case's
#: machine (review D46768: Pentium-4-era Xeons, 82546EB); the others take
#: the modern profile their drivers run on today.
CHIPS: dict[str, ChipEnv] = {
    "82546": ChipEnv("82546", "p4-xeon-2004", "1G", 1_488_095, "Itr256ns", 1000),
    "82574": ChipEnv("82574", "xeon-modern", "1G", 1_488_095, "Eitr256ns", 250),
    "i210": ChipEnv("i210", "xeon-modern", "1G", 1_488_095, "Eitr1us", 250),
    "82599": ChipEnv("82599", "xeon-modern", "10G", 14_880_952, "Eitr2048ns", 250),
}


@dataclass(frozen=True)
class Metric:
    """One scorecard row: a column of the point's record."""

    #: Record column, ``<entity>/<metric>`` (:func:`battery_point`).
    key: str
    label: str
    unit: str
    #: Which way is better: "lower", "higher", or "" (neither: a readback).
    better: str = ""
    #: Shown value = stored value x scale (bit/s -> Mb/s, fraction -> %).
    scale: float = 1.0


@dataclass(frozen=True)
class Workload:
    """A scenario around the moderator under test, and what to read from it."""

    name: str
    title: str
    #: Where the workload comes from (a case, an example, a paper).
    source: str
    #: The scenario for (chip environment, moderation table).
    build: Callable[[ChipEnv, dict[str, Any]], dict[str, Any]]
    metrics: tuple[Metric, ...]
    #: The port whose moderator decisions are drawn and whose samples are traced.
    dut: str
    quick: bool = True
    #: Moderation tables this workload cannot take, with the reason (None: any).
    refuse: Callable[[dict[str, Any]], str | None] = field(default=lambda _m: None)


def _nic(env: ChipEnv, moderation: Mapping[str, Any], name: str = "eth0") -> dict[str, Any]:
    return {"name": name, "chip": env.chip, "moderation": copy.deepcopy(dict(moderation))}


def _two_hosts(
    env: ChipEnv, moderation: Mapping[str, Any], name: str, duration_ms: int, **extra: Any
) -> dict[str, Any]:
    """Hosts ``a`` and ``b``, both ports moderated, on one link (the case's layout)."""
    hosts = []
    for h in ("a", "b"):
        host: dict[str, Any] = {
            "name": h,
            "profile": env.profile,
            "driver": "napi",
            # FreeBSD TCP and modern Linux autotune receive buffers: no 2.6 truesize rule.
            "tcp": {"skb_truesize_bytes": 0},
            "nics": [_nic(env, moderation)],
        }
        hosts.append(host)
    return {
        "name": f"battery-{name}",
        "seed": 1,
        "duration_ms": duration_ms,
        "sample_interval_us": extra.pop("sample_interval_us", 10_000),
        "hosts": hosts,
        "links": [{"a": "a.eth0", "b": "b.eth0", "rate": env.link}],
        **extra,
    }


def ping_idle(env: ChipEnv, moderation: dict[str, Any]) -> dict[str, Any]:
    # cases/freebsd-2024-aim/ping-aim*.toml: ping at the default 1/s, 10
    # echoes, both hosts set; the link then idles and the readback is taken.
    s = _two_hosts(env, moderation, "ping-idle", 10_500, sample_interval_us=100_000)
    s["apps"] = [{"kind": "ping", "name": "ping", "host": "a", "to": "b", "interval_us": 1_000_000}]
    s["apps"][0]["count"] = 10
    return s


def netpipe(env: ChipEnv, moderation: dict[str, Any]) -> dict[str, Any]:
    # examples/netpipe-ditr.toml (NPtcp's size schedule), cut at 16 KiB.
    s = _two_hosts(env, moderation, "netpipe", 60_000, sample_interval_us=100_000)
    s["apps"] = [{"kind": "netpipe", "name": "np", "host": "a", "to": "b", "end_bytes": 16_384}]
    return s


def iperf(env: ChipEnv, moderation: dict[str, Any]) -> dict[str, Any]:
    # cases/freebsd-2024-aim/iperf-aim*.toml without siftr: bulk TCP a -> b.
    s = _two_hosts(env, moderation, "iperf", 300)
    s["apps"] = [{"kind": "iperf", "name": "iperf", "host": "a", "to": "b"}]
    return s


def iperf_loaded(env: ChipEnv, moderation: dict[str, Any]) -> dict[str, Any]:
    # The case's "loaded siftr" sender (packet_hook_ns = 10990, fitted there
    # to 570 Mbit/s) and a CPU-bound process on the receiver's core
    # (docs/models/host-load.md).
    s = iperf(env, moderation)
    s["name"] = "battery-iperf-loaded"
    s["hosts"][0]["load"] = {"packet_hook_ns": 10_990}
    s["hosts"][1]["load"] = {"cpu_hogs": [0]}
    return s


def rpc_open(rate_rps: int) -> Callable[[ChipEnv, dict[str, Any]], dict[str, Any]]:
    def build(env: ChipEnv, moderation: dict[str, Any]) -> dict[str, Any]:
        # examples/rpc-open-loop.toml: Poisson requests over 64 connections,
        # 10 us of service each, one server thread; the rate is the step.
        s = _two_hosts(env, moderation, f"rpc-open-{rate_rps // 1000}k", 50)
        for host in s["hosts"]:
            host["cores"] = 2
        s["apps"] = [
            {
                "kind": "rpc_open",
                "name": "load",
                "host": "a",
                "to": "b",
                "rate_rps": rate_rps,
                "arrivals": "poisson",
                "connections": 64,
                "request_bytes": 64,
                "response_bytes": 64,
                "service_ns": 10_000,
                "server_threads": 1,
                "max_outstanding": 1024,
            }
        ]
        return s

    return build


def forward_64b(env: ChipEnv, moderation: dict[str, Any]) -> dict[str, Any]:
    # holdoff livelock (python/holdoff/livelock.py): one core forwarding
    # 64-byte frames between two ports, offered at 1 GbE line rate (1.488
    # Mframes/s, past what one core forwards, on every chip so that the rows
    # compare); the Linux non-NAPI handler, whose softirq starves when
    # interrupts win.
    return {
        "name": "battery-forward-64b",
        "seed": 1,
        "duration_ms": 20,
        "sample_interval_us": 1_000,
        "hosts": [
            {
                "name": "router",
                "profile": env.profile,
                "cores": 1,
                "driver": "linux-isr",
                "forward": [{"from": "eth0", "to": "eth1"}],
                # The non-NAPI handler re-enables no MSI-X vector: the MSI-X
                # chips run one MSI vector per port (scenario validation).
                "nics": [
                    knobs.without_msix(_nic(env, moderation, "eth0")),
                    knobs.without_msix(_nic(env, moderation, "eth1")),
                ],
            }
        ],
        "generators": [
            {"name": "source", "pattern": "constant", "rate_pps": CHIPS["82546"].line_rate_64b_pps},
            {"name": "sink", "pattern": "constant", "rate_pps": 1, "start_us": 10**9},
        ],
        "links": [
            {"a": "source", "b": "router.eth0", "rate": env.link},
            {"a": "router.eth1", "b": "sink", "rate": env.link},
        ],
    }


def tx_frames(frame_bytes: int) -> Callable[[ChipEnv, dict[str, Any]], dict[str, Any]]:
    def build(env: ChipEnv, moderation: dict[str, Any]) -> dict[str, Any]:
        # A UDP blaster (iperf -u) offering line rate: the TX ring is refilled
        # only as completions are reaped, which the moderation paces.
        s = _two_hosts(env, moderation, f"tx-{frame_bytes}b", 20, sample_interval_us=1_000)
        rate = env.line_rate_64b_pps * 84 / (frame_bytes + 20)
        s["apps"] = [
            {
                "kind": "udp_send",
                "name": "send",
                "host": "a",
                "to": "b",
                "frame_bytes": frame_bytes,
                "rate_pps": round(rate, 1),
            },
            {"kind": "udp_sink", "name": "sink", "host": "b"},
        ]
        return s

    return build


#: The kinds' own defaults are what a setting is changed from mid-run.
def _live_keys(moderation: Mapping[str, Any]) -> str | None:
    if moderation.get("kind") in ("python", "c"):
        return "a Python or C moderator has no run-time setting to change"
    if len(moderation) < 2:
        return "the moderator sets no field to change during the run"
    return None


def mid_change(env: ChipEnv, moderation: dict[str, Any]) -> dict[str, Any]:
    # examples/aim-toggle.toml (review D46768's tester changing enable_aim
    # under traffic): 64-byte frames at 30 000/s into one port; the run
    # starts with the kind's defaults and at 100 ms sets the moderator's
    # fields, as `sysctl` or `ethtool -C` would.
    start = {"kind": moderation["kind"]}
    return {
        "name": "battery-mid-change",
        "seed": 1,
        "duration_ms": 200,
        "sample_interval_us": 10_000,
        "hosts": [
            {"name": "dut", "profile": env.profile, "driver": "napi", "nics": [_nic(env, start)]}
        ],
        "generators": [{"name": "tester", "rate_pps": 30_000, "frame_bytes": 64}],
        "links": [{"a": "tester", "b": "dut.eth0", "rate": env.link}],
        "apps": [{"kind": "udp_sink", "name": "sink", "host": "dut"}],
        "at": [
            {
                "t_ms": 100,
                "set": {
                    f"hosts[0].nics[0].moderation.{k}": v
                    for k, v in moderation.items()
                    if k != "kind"
                },
            }
        ],
    }


_PCT = 100.0
_MBPS = 1e-6
_WORKLOADS: tuple[Workload, ...] = (
    Workload(
        "ping-idle",
        "ping 1/s, both hosts set, then idle: RTT and the interrupt-rate readback",
        "FreeBSD review D46768 'e1000: Re-add AIM' (2024); cases/freebsd-2024-aim/ping-aim*.toml",
        ping_idle,
        (
            Metric("ping/latency_us_p50", "ping RTT p50", "us", "lower"),
            Metric("b.eth0/readback_per_s", "idle readback (1e9 / interval)", "int/s"),
        ),
        dut="b.eth0",
    ),
    Workload(
        "netpipe",
        "NetPIPE NPtcp ping-pong, 1 B to 16 KiB",
        "NetPIPE 3.x NPtcp size schedule; examples/netpipe-ditr.toml",
        netpipe,
        (
            Metric("np/netpipe_latency_us", "small-message latency", "us", "lower"),
            Metric("np/netpipe_mbit_mean", "mean throughput >= 1 KiB", "Mbit/s", "higher"),
        ),
        dut="b.eth0",
        # NPtcp's repeats take ~20 s simulated, ~3-5 s of wall time a run.
        quick=False,
    ),
    Workload(
        "iperf",
        "bulk TCP (iperf3), 300 ms",
        "D46768 iperf3 runs; cases/freebsd-2024-aim/iperf-aim*.toml",
        iperf,
        (
            Metric("iperf.receiver/throughput_bps", "goodput", "Mbit/s", "higher", _MBPS),
            Metric("a/cpu_util_busy", "sender CPU", "%", "lower", _PCT),
            Metric("b/cpu_util_busy", "receiver CPU", "%", "lower", _PCT),
            Metric("b.eth0/interrupts_per_s", "receiver interrupts", "1/s", "lower"),
        ),
        dut="b.eth0",
    ),
    Workload(
        "iperf-loaded",
        "bulk TCP on loaded hosts: a per-packet hook on the sender, a CPU-bound process "
        "on the receiver",
        "D46768 'under loaded siftr module' (packet_hook_ns fitted in the case); host-load model",
        iperf_loaded,
        (
            Metric("iperf.receiver/throughput_bps", "goodput", "Mbit/s", "higher", _MBPS),
            Metric("a/cpu_util_busy", "sender CPU", "%", "lower", _PCT),
            Metric("b/cpu_util_busy", "receiver CPU", "%", "lower", _PCT),
        ),
        dut="a.eth0",
    ),
    *(
        Workload(
            f"rpc-open-{rate // 1000}k",
            f"open-loop request/response, {rate // 1000} k requests/s",
            "examples/rpc-open-loop.toml (memcached-style open-loop load, no coordinated omission)",
            rpc_open(rate),
            (
                Metric("load/latency_us_p50", "latency p50", "us", "lower"),
                Metric("load/latency_us_p99", "latency p99", "us", "lower"),
                Metric("b/cpu_util_busy", "server CPU", "%", "lower", _PCT),
            ),
            dut="b.eth0",
            quick=True,
        )
        for rate in (10_000, 40_000, 100_000)
    ),
    Workload(
        "forward-64b",
        "64-byte forwarding at line rate, one core (receive livelock)",
        "'Eliminating receive livelock in an interrupt-driven kernel' (ACM TOCS, 1997); "
        "holdoff livelock",
        forward_64b,
        (
            Metric("sink/rx_per_s", "forwarded", "frames/s", "higher"),
            Metric("router.eth0/interrupts_per_s", "RX port interrupts", "1/s", "lower"),
        ),
        dut="router.eth0",
    ),
    *(
        Workload(
            f"tx-{size}b",
            f"UDP transmit at line rate, {size}-byte frames (ring refill)",
            "iperf -u style blaster; TX completions reaped by the moderated interrupt",
            tx_frames(size),
            (
                Metric("send/sent_per_s", "frames sent", "frames/s", "higher"),
                Metric("a/cpu_util_busy", "sender CPU", "%", "lower", _PCT),
                Metric("a.eth0/interrupts_per_s", "sender interrupts", "1/s", "lower"),
            ),
            dut="a.eth0",
            quick=True,
        )
        for size in (64, 9018)
    ),
    Workload(
        "mid-change",
        "the moderator's fields set at 100 ms under 30 kframes/s (from the kind's defaults)",
        "examples/aim-toggle.toml (D46768's tester changing enable_aim under traffic)",
        mid_change,
        (
            Metric("dut.eth0/interrupts_per_s_before", "interrupts before", "1/s"),
            Metric("dut.eth0/interrupts_per_s_after", "interrupts after", "1/s"),
            Metric("dut.eth0/readback_per_s", "readback at the end", "int/s"),
        ),
        dut="dut.eth0",
        refuse=_live_keys,
    ),
)

WORKLOADS: dict[str, Workload] = {w.name: w for w in _WORKLOADS}


def workloads(quick: bool) -> list[Workload]:
    return [w for w in _WORKLOADS if w.quick or not quick]


# -- one point ------------------------------------------------------------------------


def battery_point(text: str) -> dict[str, Scalar]:
    """Runs one battery scenario (TOML text): :func:`metrics_record` plus the
    battery's own columns (:func:`extra_metrics`) and the wall time. A run
    that fails (a moderator raised, crashed or looped) returns ``error`` with
    the message instead, so the rest of the battery carries on; errors are
    not stored."""
    from holdoff import _core
    from holdoff.api import run_text

    try:
        result = run_text(text)
    except _core.HoldoffError as err:
        return {"error": str(err)}
    record = metrics_record(result.report)
    record.update(extra_metrics(result.report))
    record["wall_time_s"] = float(result.perf.get("wall_time_s", math.nan))
    return record


def extra_metrics(report: Mapping[str, Any]) -> dict[str, Scalar]:
    """The battery's columns beyond the sweep's:

    - ``<port>/readback_per_s``: vector 0's throttle interval at the end as a
      rate, 1e9 / interval_ns (what FreeBSD em's ``interrupt_rate`` sysctl
      computes from the register); NaN when throttling is off;
    - ``<port>/interrupts_per_s_before`` and ``_after``: the port's
      interrupt rate over the first and second half of the run (the series'
      samples ending in each half);
    - ``<generator>/rx_per_s``, ``<app>/sent_per_s``: counts over the run.
    """
    summary = report.get("summary", {})
    secs = max(float(summary.get("sim_time_ns", 0)) / 1e9, 1e-12)
    out: dict[str, Scalar] = {}
    for port in summary.get("ports", []):
        vectors = port.get("vectors") or []
        interval = vectors[0].get("throttle_interval_ns") if vectors else None
        out[f"{port['port']}/readback_per_s"] = 1e9 / interval if interval else math.nan
    out.update(_halves(report))
    for gen in summary.get("generators", []):
        out[f"{gen['generator']}/rx_per_s"] = float(gen.get("rx_packets") or 0) / secs
    for app in summary.get("apps", []):
        if "sent" in app:
            out[f"{app['app']}/sent_per_s"] = float(app.get("sent") or 0) / secs
    return out


def _halves(report: Mapping[str, Any]) -> dict[str, Scalar]:
    ts = report.get("timeseries") or {}
    t_ns = ts.get("t_ns") or []
    series = ts.get("series") or {}
    end = float((report.get("summary") or {}).get("sim_time_ns", 0))
    out: dict[str, Scalar] = {}
    if not t_ns or end <= 0:
        return out
    ports: dict[str, list[list[float]]] = {}
    for key, values in series.items():
        entity, _, metric = key.rpartition("/")
        if metric != "interrupts_per_s":
            continue
        port = re.sub(r"\.v\d+$", "", entity)
        ports.setdefault(port, []).append([v or 0.0 for v in values])
    for port, per_vector in ports.items():
        total = [sum(col) for col in zip(*per_vector, strict=True)]
        before = [v for t, v in zip(t_ns, total, strict=True) if t <= end / 2]
        after = [v for t, v in zip(t_ns, total, strict=True) if t > end / 2]
        out[f"{port}/interrupts_per_s_before"] = sum(before) / len(before) if before else math.nan
        out[f"{port}/interrupts_per_s_after"] = sum(after) / len(after) if after else math.nan
    return out
