"""The tuner's search space: the values searched per knob, each candidate setting
decoded into scenario changes, and the measured quantities of one point; see
:mod:`holdoff.tune`.

Units: latency [us], CPU [fraction], interrupts [1/s], throughput [bit/s].
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from holdoff import knobs, stats
from holdoff.store import Scalar
from holdoff.tune import ports
from holdoff.tune.workloads import HOST_DRIVER, STATIC_DROPS, TuneError, Workload, check_driver

# -- the search space ----------------------------------------------------------------


def space(driver: str, workload: Workload) -> tuple[dict[str, list[int]], list[str]]:
    """The values searched per knob (the default first), and the knobs left
    out with the reason."""
    d = knobs.defaults(driver)
    skipped: list[str] = []
    grid: dict[str, list[int]]
    napi = {
        "gro_flush_timeout": [0, 10_000, 20_000, 50_000, 200_000],
        "napi_defer_hard_irqs": [0, 1, 2, 4],
    }
    if driver in ("linux-e1000", "linux-e1000e"):
        grid = {
            "rx-usecs": [3, 1, 4, 0, 10, 20, 30, 50, 62, 100, 125, 250, 500],
            "RxIntDelay": [0, 8, 32],
            "RxAbsIntDelay": [8, 32, 128],
            "TxIntDelay": [8, 64],
            "TxAbsIntDelay": [32, 64],
            **napi,
        }
    elif driver == "linux-e1000-5x":
        grid = {
            "InterruptThrottleRate": [1, 0, 2000, 4000, 6000, 8000, 10000, 15000, 20000, 30000],
            "RxIntDelay": [0, 8, 64],
            "TxIntDelay": [64, 8],
        }
        skipped.append(
            "RxAbsIntDelay, TxAbsIntDelay: held at their defaults (they cap the packet timers "
            "searched)"
        )
    elif driver == "linux-igb":
        grid = {
            "rx-usecs": [3, 1, 0, 10, 20, 30, 40, 50, 62, 75, 100, 125, 150, 200, 250, 500],
            **napi,
        }
        skipped.append("tx-usecs: igb refuses it with queue pairs (the default)")
    elif driver == "linux-dim":
        grid = {
            "adaptive-rx": [1, 0],
            "rx-usecs": [8, 16, 32, 64, 128],
            "rx-frames": [0, 32, 64],
            "cqe-mode-rx": [0, 1],
            **napi,
        }
    elif driver == "linux-ixgbe":
        # rx-usecs: off, adaptive, and static values from 10 us (below it a
        # change resets the interface, ixgbe_set_coalesce) to 250 us; 84 and
        # 126 are the adaptive bulk ceilings discussed upstream.
        grid = {"rx-usecs": [1, 0, 10, 20, 50, 84, 126, 250]}
        skipped.append("tx-usecs: ixgbe refuses it with queue pairs (the default)")
        skipped.append(
            "gro_flush_timeout, napi_defer_hard_irqs: held at their defaults so the queue and "
            "core search stays small (tune them for the chosen queues with a scenario file)"
        )
    elif driver in ("linux-ice", "linux-i40e"):
        # adaptive on, or a static ITR from 20 us to 250 us (the tuning guides
        # start at 84/80 and 62 us); tx-usecs follows rx-usecs and adaptive-tx
        # follows adaptive-rx (canonical_settings), as one ethtool -C line sets them.
        grid = {"adaptive-rx": [1, 0], "rx-usecs": [50, 20, 62, 84, 126, 250]}
        skipped.append(
            "rx-usecs-high: the rate limit is not searched (at saturation it only caps what "
            "rx-usecs already sets; give it with --knob to compare)"
        )
    elif driver == "linux-mlx5":
        # DIM on and off (RX; TX DIM kept at its default), the static CQ
        # period and count in both period modes.
        grid = {
            "adaptive-rx": [1, 0],
            "rx-usecs": [8, 3, 16, 32, 64, 128],
            "rx-frames": [128, 32, 64, 256],
            "cqe-mode-rx": [1, 0],
        }
        skipped.append("adaptive-tx, tx-usecs, tx-frames, cqe-mode-tx: held at their defaults")
        skipped.append(
            "gro_flush_timeout, napi_defer_hard_irqs: held at their defaults so the queue and "
            "core search stays small (tune them for the chosen queues with a scenario file)"
        )
    elif driver == "linux-ena":
        grid = {
            "adaptive-rx": [0, 1],
            "rx-usecs": [0, 8, 16, 32, 64, 128, 256],
            "tx-usecs": [64, 0, 128],
            **napi,
        }
    elif driver in ("freebsd-em", "freebsd-igb"):
        grid = {
            "enable_aim": [1, 0, 2, 3],
            "max_interrupt_rate": [8000, 2000, 4000, 10000, 16000, 20000, 30000, 50000, 70000],
        }
        if driver == "freebsd-em":
            skipped.append(
                "rx_int_delay, rx_abs_int_delay, tx_int_delay, tx_abs_int_delay: the "
                "simulator's freebsd-aim model runs the delay timers at 0"
            )
    elif driver == "openbsd-em":
        grid = {
            "EM_TIDV": [64, 0, 16, 32, 128, 150, 220, 256],
            "EM_TADV": [64, 0, 32, 128, 150, 256],
            "EM_RDTR": [0, 8, 32],
            "EM_RADV": [64, 0, 128],
            "MAX_INTS_PER_SEC": [8000, 4000, 10000, 20000, 50000],
        }
    else:
        check_driver(driver)
        raise AssertionError(driver)
    if driver.startswith("linux-") and driver not in (
        "linux-e1000-5x",
        "linux-ixgbe",
        "linux-ice",
        "linux-i40e",
        "linux-mlx5",
    ):
        busy = any(
            isinstance(a, dict) and a.get("server_prefer_busy_poll")
            for a in workload.scenario.get("apps", [])
        )
        if busy:
            grid["irq_suspend_timeout"] = [0, 100_000, 1_000_000]
        else:
            skipped.append(
                "irq_suspend_timeout: acts only under a busy-polling application with "
                "prefer_busy_poll; this workload has none"
            )
    for key, values in grid.items():
        if values[0] != d[key]:
            values.remove(d[key]) if d[key] in values else None
            values.insert(0, d[key])
    grid.update(ports.grid(driver, host_cores(workload)))
    return grid, skipped


def host_cores(workload: Workload) -> int:
    """The cores of the first tuned host (the scenario's default 1)."""
    hosts = workload.scenario.get("hosts", [])
    for hi in workload.hosts:
        return int(hosts[hi].get("cores", 1))
    return 1


def grid_size(grid: Mapping[str, Sequence[int]]) -> int:
    n = 1
    for values in grid.values():
        n *= len(values)
    return n


def grid_points(grid: Mapping[str, Sequence[int]]) -> list[dict[str, int]]:
    """Every combination, the first knob varying slowest."""
    combos: list[dict[str, int]] = [{}]
    for key, values in grid.items():
        combos = [{**c, key: v} for c in combos for v in values]
    return combos


# -- candidates -> scenario changes ----------------------------------------------------


@dataclass
class Candidate:
    """One setting: the knobs, what the driver does with them, the scenario changes."""

    settings: dict[str, int]
    decoded: knobs.Decoded
    changes: dict[str, Any]
    #: The port knobs (queues, cores, rings, RSS fields; :mod:`holdoff.tune.ports`)
    #: and their defaults on the tuned host; empty for a driver without them.
    port: dict[str, int] = field(default_factory=dict)
    port_default: dict[str, int] = field(default_factory=dict)

    def changed(self) -> dict[str, int]:
        """The knobs that differ from the driver's (and the port's) defaults."""
        dflt = knobs.defaults(self.decoded.driver)
        out = {k: v for k, v in self.decoded.settings.items() if v != dflt.get(k)}
        return {**out, **ports.changed(self.port, self.port_default)}

    def commands(self, iface: str = "eth0") -> list[str]:
        """The lines that set this candidate: coalescing, then the port."""
        return knobs.commands(self.decoded, iface) + ports.commands(
            self.port, self.port_default, iface, self.decoded.driver
        )


def candidate(
    driver: str, settings: Mapping[str, int], workload: Workload, chip: str | None
) -> Candidate:
    """Decode ``settings`` for every tuned port and collect the field changes."""
    drv, port = ports.split(settings)
    cores = host_cores(workload)
    port_default = ports.defaults(driver, cores)
    unknown = [k for k in port if k not in port_default]
    if unknown:
        raise TuneError("--knob", f"{unknown[0]} is not a knob of {driver}")
    if port_default:
        # Knobs not given stay at the port's defaults (written into the scenario
        # too, so the workload's own NIC fields do not decide them).
        port = ports.canonical(port, port_default)
        try:
            ports.check(port, cores, driver)
        except ValueError as err:
            raise TuneError("--knob", str(err)) from err
    settings = {**canonical_settings(driver, drv, chip or _first_chip(workload)), **port}
    changes: dict[str, Any] = {}
    decoded: knobs.Decoded | None = None
    hosts = workload.scenario.get("hosts", [])
    for hi in workload.hosts:
        host = hosts[hi]
        nics = host.get("nics", [])
        for ni, nic in enumerate(nics):
            nic_chip = chip or nic.get("chip") or None
            d = knobs.decode(driver, drv_of(settings), nic_chip)
            if d.scenario is None:
                raise TuneError("--driver", d.scenario_note or f"{driver} has no simulator model")
            decoded = decoded or d
            base = f"hosts[{hi}].nics[{ni}]"
            for key, value in d.scenario.items():
                if key == "napi":
                    continue
                changes[f"{base}.{key}"] = value
            changes.update(ports.changes(port, base))
        if HOST_DRIVER.get(driver) == "napi" and decoded is not None:
            napi = dict(host.get("napi", {}))
            table = (decoded.scenario or {}).get("napi", {})
            for key in ("defer_hard_irqs", "gro_flush_timeout_ns", "irq_suspend_timeout_ns"):
                napi[key] = int(table.get(key, 0))
            changes[f"hosts[{hi}].napi"] = napi
    if decoded is None:
        raise TuneError("--host", "the tuned hosts have no NICs")
    return Candidate(dict(settings), decoded, changes, dict(port), port_default)


def drv_of(settings: Mapping[str, int]) -> dict[str, int]:
    """The driver's own knobs of a setting (without the port knobs)."""
    return ports.split(settings)[0]


def _first_chip(workload: Workload) -> str | None:
    hosts = workload.scenario.get("hosts", [])
    for hi in workload.hosts:
        for nic in hosts[hi].get("nics", []):
            if nic.get("chip"):
                return str(nic["chip"])
    return None


def canonical_settings(
    driver: str, settings: Mapping[str, int], chip: str | None
) -> dict[str, int]:
    """``settings`` with every knob the driver ignores in this combination
    (a delay timer bypassed in MSI-X mode, RADV with RDTR 0, a NAPI deferral
    without its timer) put back to its default: the same registers, and the
    lines to paste change only what acts."""
    dflt = knobs.defaults(driver)
    out = dict(settings)
    if driver in ("linux-ice", "linux-i40e"):
        # One ethtool -C line: adaptive-tx and tx-usecs follow the RX side, and
        # while adaptive the static values stay at the default the driver
        # requires (it refuses a changed one).
        out["adaptive-tx"] = out.get("adaptive-rx", dflt["adaptive-rx"])
        if out["adaptive-tx"]:
            out["rx-usecs"] = dflt["rx-usecs"]
            if driver == "linux-ice":
                out["rx-usecs-high"] = dflt["rx-usecs-high"]
        out["tx-usecs"] = out.get("rx-usecs", dflt["rx-usecs"])
    for _ in range(3):
        d = knobs.decode(driver, out, chip)
        ignored = {
            n.key
            for n in d.notes
            if n.kind == "ignored" and n.key in dflt and out.get(n.key) != dflt[n.key]
        }
        if not ignored:
            break
        for key in ignored:
            out[key] = dflt[key]
    return out


def _check_host_drivers(driver: str, workload: Workload) -> list[str]:
    """Notes on tuned hosts whose driver architecture differs from the tuned driver's."""
    want = HOST_DRIVER[driver]
    notes = []
    for hi in workload.hosts:
        host = workload.scenario["hosts"][hi]
        have = host.get("driver", "napi")
        if have != want:
            notes.append(
                f"host {host.get('name')} runs driver = {have!r}; {driver} is usually "
                f"{want!r} (kept as the scenario says)"
            )
    return notes


# -- metrics of one point ----------------------------------------------------------------


#: The metrics a point reports (means over seeds), in table order.
METRICS = (
    "p50_us",
    "p99_us",
    "p50_all_us",
    "p99_all_us",
    "cpu_util",
    "interrupts_per_s",
    "throughput_bps",
    "drops",
    "busiest_core",
)


@dataclass
class PointMetrics:
    """One setting's quantities: the mean over ``seeds`` runs, with each
    metric's 95 % interval (:func:`holdoff.stats.ci95`) in ``intervals`` and
    the runs' own values in ``per_seed`` (one seed: no intervals).

    With ``--latency-of``, ``p50_us``/``p99_us`` are the selected traffic's
    and ``p50_all_us``/``p99_all_us`` all traffic's (NaN otherwise)."""

    p50_us: float
    p99_us: float
    cpu_util: float
    interrupts_per_s: float
    throughput_bps: float
    drops: float
    p50_all_us: float = math.nan
    p99_all_us: float = math.nan
    #: The tuned hosts' busiest core: its CPU time over the time the traffic
    #: lasted (a replayed capture's span, else the run). Above 1 the core
    #: needs more time than the traffic gives it: the run ends with a
    #: backlog that only its end drains, so the setting does not carry the
    #: traffic sustained, whatever its drops (:func:`overloaded`).
    busiest_core: float = math.nan
    seeds: int = 1
    intervals: dict[str, stats.Interval] = field(default_factory=dict)
    per_seed: list[dict[str, float]] = field(default_factory=list)

    def value(self, name: str) -> float:
        return float(getattr(self, name))

    def interval(self, name: str) -> stats.Interval:
        """``name``'s interval (a point without an interval for one seed)."""
        iv = self.intervals.get(name)
        return iv if iv is not None else stats.Interval(self.value(name), None, None, self.seeds)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in METRICS:
            v = self.value(name)
            if name in ("p50_all_us", "p99_all_us") and math.isnan(v):
                continue
            out[name] = int(v) if name == "drops" and v == int(v) else _clean(v)
            iv = self.intervals.get(name)
            lohi = None if iv is None else iv.as_list()
            out[f"{name}_ci95"] = None if lohi is None else [_clean(x) for x in lohi]
        out["seeds"] = self.seeds
        return out


def aggregate(runs: Sequence[PointMetrics]) -> PointMetrics:
    """The mean of one setting's runs over seeds, with 95 % intervals (a
    bootstrap for the percentiles, a t interval for the rest; a metric NaN
    in any run stays NaN)."""
    if len(runs) == 1:
        one = runs[0]
        one.per_seed = [{n: one.value(n) for n in METRICS}]
        return one
    per_seed = [{n: r.value(n) for n in METRICS} for r in runs]
    means: dict[str, float] = {}
    intervals: dict[str, stats.Interval] = {}
    for name in METRICS:
        values = [row[name] for row in per_seed]
        if any(math.isnan(v) for v in values):
            means[name] = math.nan
            continue
        iv = stats.ci95(values, percentile=stats.is_percentile(name))
        means[name] = iv.mean
        intervals[name] = iv
    return PointMetrics(**means, seeds=len(runs), intervals=intervals, per_seed=per_seed)


def _clean(x: float) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)


def _num(rec: Mapping[str, Scalar], key: str) -> float:
    v = rec.get(key)
    if v is None or isinstance(v, str):
        return math.nan
    return float(v)


def point_metrics(rec: Mapping[str, Scalar], workload: Workload) -> PointMetrics:
    """The tune's quantities from a run's metrics record (:func:`holdoff.sweeps.metrics_record`)."""
    hosts = [workload.scenario["hosts"][i] for i in workload.hosts]
    names = [str(h.get("name")) for h in hosts]
    cpu = max((_num(rec, f"{n}/cpu_util_busy") for n in names), default=math.nan)
    irqs = 0.0
    for h in hosts:
        for nic in h.get("nics", []):
            irqs += _num(rec, f"{h.get('name')}.{nic.get('name')}/interrupts_per_s") or 0.0
    apps = [a for a in workload.scenario.get("apps", []) if isinstance(a, dict)]
    p50 = p99 = p50_all = p99_all = math.nan
    latency_apps = [workload.app] if workload.app else [str(a.get("name")) for a in apps]
    for name in latency_apps:
        if not math.isnan(_num(rec, f"{name}/netpipe_latency_us")):
            p50 = _num(rec, f"{name}/netpipe_latency_us")
            p99 = _num(rec, f"{name}/netpipe_latency_us_max")
            break
        if not math.isnan(_num(rec, f"{name}/latency_us_p99")):
            p50 = _num(rec, f"{name}/latency_us_p50")
            p99 = _num(rec, f"{name}/latency_us_p99")
            if workload.latency_of is not None:
                # The objective counts the selected frames; all traffic's beside.
                p50_all, p99_all = p50, p99
                p50 = _num(rec, f"{name}/latency_selected_us_p50")
                p99 = _num(rec, f"{name}/latency_selected_us_p99")
            break
    # Every application of the report (a bulk sender's receiving side
    # included), plus NetPIPE's own mean, which its app row does not carry.
    thr = _num(rec, "throughput_bps_total")
    thr = 0.0 if math.isnan(thr) else thr
    for a in apps:
        mean = _num(rec, f"{a.get('name')}/netpipe_mbit_mean")
        if not math.isnan(mean):
            thr += mean * 1e6
    cov = workload.coverage
    secs = _num(rec, "sim_time_ns") / 1e9
    if cov is not None and cov.traffic_ns > 0 and secs > 0:
        # The sink's rate is over the whole simulated time, which includes
        # the drain after the last frame: state it over the time the
        # replayed frames span, as the capture's mean rate is.
        thr = thr * secs / (cov.traffic_ns / 1e9)
        if cov.traffic_ns >= SPAN_JUDGED_NS:
            # The CPU and the interrupt rate too: over the simulated time
            # they count the idle drain, which put the 8.9-ms many-flow
            # capture (19 ms simulated) at 9.1 % of the host and 18 300
            # interrupts/s instead of the 19.3 % and 38 800/s of the time
            # the traffic lasted.
            cpu = cpu * secs / (cov.traffic_ns / 1e9)
            irqs = irqs * secs / (cov.traffic_ns / 1e9)
    if workload.forward_sink is not None:
        gen, frame = workload.forward_sink
        secs = _num(rec, "sim_time_ns") / 1e9
        thr = _num(rec, f"{gen}/rx_packets") * frame * 8 / secs if secs > 0 else math.nan
    drops = 0
    for key, value in rec.items():
        if key.startswith("drops_") and key.removeprefix("drops_") not in STATIC_DROPS:
            drops += int(value or 0)
    span_ns = _num(rec, "sim_time_ns")
    if cov is not None and cov.traffic_ns > 0:
        span_ns = float(cov.traffic_ns)
    busiest = max((_num(rec, f"{n}/busiest_core_ns") for n in names), default=math.nan)
    # Not judged over less than SPAN_JUDGED_NS: the last interrupt's fixed
    # cost (a few us) would be a visible share of the span.
    busiest = busiest / span_ns if span_ns >= SPAN_JUDGED_NS else math.nan
    return PointMetrics(p50, p99, cpu, irqs, thr, drops, p50_all, p99_all, busiest)


#: The shortest traffic span whose busiest core is judged [ns]: over 1 ms
#: one interrupt's entry, ICR read and poll (2-5 us in the host profiles)
#: are below 0.5 % of the span. The run's replay warning uses the same bound
#: (``scenario/report/warnings.rs``).
SPAN_JUDGED_NS = 1_000_000


def overloaded(m: PointMetrics) -> bool:
    """Whether a point's busiest core needed more CPU time than the traffic
    lasted (``busiest_core`` above 1): its receive backlog grows while the
    traffic lasts, so sustained traffic of this kind would overflow the ring
    even where the run (a capture that ends) dropped nothing."""
    return m.busiest_core > 1.0
