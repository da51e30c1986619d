"""The tuner: which setting of *this* driver meets *this* budget on *this* traffic.

``holdoff tune`` takes a workload (a capture replayed into the host, an
open-loop request/response, bulk or forwarding mix, or any scenario file), a
host profile, a chip and a driver, and searches the moderation knobs that
driver really exposes (:mod:`holdoff.knobs`: static rates and ``rx-usecs``,
adaptive modes, FreeBSD ``enable_aim`` and ``max_interrupt_rate``,
RDTR/RADV/TIDV/TADV, the NAPI ``gro_flush_timeout``,
``napi_defer_hard_irqs`` and ``irq_suspend_timeout``). Every candidate is
decoded into the registers and the simulator table the driver would write,
run on the model, and scored:

- ``p99<=100us`` (or ``p50<=...``): least CPU among the settings whose
  latency is within the budget, with no drops and within 2 % of the best
  throughput such settings reach (so a setting cannot save CPU by doing
  less work);
- ``cpu<=30%``: least p99 among the settings within the CPU budget, no
  drops, within 2 % of the best throughput;
- ``max-throughput``: the most throughput (no drops), then least CPU among
  the settings within 0.5 % of it;
- ``pareto``: the whole front of (p99, CPU, interrupt rate, throughput); the
  recommendation is the front point nearest the ideal corner in p99 and CPU,
  each scaled to the front's range.

Candidates whose knobs decode to the same registers are run once (the
others are listed as equivalent). Small grids are run exhaustively; larger
ones by Optuna (TPE for the budget objectives, NSGA-II for the front),
seeded, so a tune is reproducible. Points run on the sweep executors and
land in the result store, so a killed tune run again resumes where it
stopped (the sampler replays the same sequence and finds its points stored).

Measured quantities (what ``--json`` and the report call them):
``p50_us``/``p99_us`` -- the latency application's percentiles (a NetPIPE
run: the median and the largest of its small-message times, sizes up to
64 B, as NetPIPE prints them); ``cpu_util`` -- busy fraction of the tuned
hosts' cores (the busiest tuned host; ``mpstat``'s ``all`` line);
``interrupts_per_s`` -- all vectors of the tuned hosts' ports;
``throughput_bps`` -- the applications' goodput (NetPIPE: the mean over its
sizes of 1 KiB and more; forwarding: frames out of the router);
``drops`` -- frames lost to a setting-dependent cause (rings, backlog,
socket buffers; not frames over the MTU or to no listener).

Simplifies: one setting for every tuned port (as ``ethtool -C`` sets one
interface); the workload's own traffic is fixed (a capture cannot react to
the setting; TCP in a scenario does); one seed per point (common random
numbers: every point sees the same arrivals), so the ranking is the model's,
not a confidence statement. The recommendation inherits every model error
(``holdoff reproduce`` lists the published checks the model misses).
"""

from __future__ import annotations

import copy
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holdoff import knobs
from holdoff.store import DEFAULT_STORE, ResultStore, Scalar
from holdoff.sweeps import Executor, SweepError, run_sweep

#: Relative throughput a budget objective may give up against the best
#: throughput of the settings that meet the budget.
THROUGHPUT_FLOOR = 0.98
#: Throughput within this fraction of the best counts as tied (max-throughput).
THROUGHPUT_TIE = 0.995
#: The grid size up to which ``--search auto`` runs every point.
GRID_MAX = 400
#: Trials of an Optuna search by default.
DEFAULT_TRIALS = 96

#: The host driver architecture the simulator runs for each tuned driver.
HOST_DRIVER: dict[str, str] = {
    "linux-e1000": "napi",
    "linux-e1000-5x": "linux-isr",
    "linux-e1000e": "napi",
    "linux-igb": "napi",
    "linux-dim": "napi",
    # FreeBSD em/igb (iflib): the interrupt filter masks the queue and a task
    # cleans with a budget, modelled with the NAPI mechanics (as the
    # freebsd-2024-aim case does).
    "freebsd-em": "napi",
    "freebsd-igb": "napi",
    "openbsd-em": "openbsd-intr",
}

#: Drop reasons that no moderation setting changes.
STATIC_DROPS = ("frame_over_mtu", "no_listener")

MIXES: tuple[str, ...] = ("rr", "bulk", "mixed", "forwarding")


class TuneError(ValueError):
    """A bad tune argument; ``field`` names the option or scenario field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def check_driver(driver: str) -> None:
    """Refuse a driver the tuner cannot run, naming why."""
    if driver not in knobs.DRIVERS:
        raise TuneError(
            "--driver", f"unknown driver {driver!r}; choose one of {', '.join(HOST_DRIVER)}"
        )
    if driver not in HOST_DRIVER:
        raise TuneError(
            "--driver",
            f"{driver}: holdoff has no 10 GbE chip or ixgbe adaptive model, so it cannot "
            "run a tune for it (holdoff explain decodes its knobs)",
        )


# -- objectives ---------------------------------------------------------------------


@dataclass(frozen=True)
class Objective:
    """What the tuner optimises: ``kind`` is "latency", "cpu", "throughput" or "pareto"."""

    kind: str
    #: The budget: latency [us] (metric ``p50``/``p99``) or CPU [fraction].
    bound: float = math.nan
    metric: str = "p99"
    text: str = ""


_TIME_UNITS = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}


def parse_objective(text: str) -> Objective:
    """``p99<=100us``, ``p50<=1ms``, ``cpu<=30%``, ``max-throughput`` or ``pareto``."""
    t = text.strip().lower().replace(" ", "")
    if t == "pareto":
        return Objective("pareto", text=text)
    if t in ("max-throughput", "throughput"):
        return Objective("throughput", text=text)
    m = re.fullmatch(r"(p50|p99)<=([0-9]*\.?[0-9]+)(ns|us|µs|ms|s)?", t)
    if m:
        if m.group(3) is None:
            raise TuneError("--objective", f"{text!r} has no unit: write e.g. p99<=100us")
        bound = float(m.group(2)) * _TIME_UNITS[m.group(3)]
        if bound <= 0:
            raise TuneError("--objective", "the latency budget must be above 0")
        return Objective("latency", bound, m.group(1), text)
    m = re.fullmatch(r"cpu<=([0-9]*\.?[0-9]+)(%)?", t)
    if m:
        value = float(m.group(1))
        bound = value / 100 if m.group(2) else value
        if not 0 < bound <= 1:
            raise TuneError("--objective", f"CPU budget {text!r} must be above 0 and at most 100%")
        return Objective("cpu", bound, "p99", text)
    raise TuneError(
        "--objective",
        f"cannot read {text!r}; use p99<=100us (least CPU within a latency budget), "
        "cpu<=30% (least p99 within a CPU budget), max-throughput or pareto",
    )


# -- workloads ----------------------------------------------------------------------


@dataclass
class Workload:
    """A scenario to tune on and which of its hosts take the setting."""

    name: str
    scenario: dict[str, Any]
    hosts: list[int]
    #: The application whose latency counts (None: the first that measures it).
    app: str | None = None
    #: Frames per second out of a forwarding mix's router are read from this
    #: generator's received count, with this frame size [B].
    forward_sink: tuple[str, int] | None = None
    description: str = ""


def _host(name: str, profile: str, driver: str, chip: str, nics: Sequence[str]) -> dict[str, Any]:
    return {
        "name": name,
        "profile": profile,
        "driver": HOST_DRIVER[driver],
        "nics": [{"name": n, "chip": chip} for n in nics],
    }


def _peer() -> dict[str, Any]:
    # The load's other end: a modern host with no interrupt throttle, so its
    # own delay adds little and does not depend on the setting under tune.
    return {
        "name": "peer",
        "profile": "xeon-modern",
        "driver": "napi",
        "cores": 2,
        "nics": [{"name": "eth0", "chip": "i210", "moderation": {"kind": "static", "eitr_us": 0}}],
    }


def _profile_value(profile: str) -> str:
    p = Path(profile)
    if profile.endswith(".toml"):
        if not p.is_file():
            raise TuneError("--profile", f"profile file {profile} not found")
        return str(p.resolve())
    return profile


def capture_workload(
    capture: str | os.PathLike[str],
    *,
    driver: str,
    chip: str,
    profile: str,
    duration_ms: int | None = None,
    speed: float = 1.0,
) -> Workload:
    """The capture replayed at its own times into one host (a UDP sink takes
    every frame and measures its latency from the wire to the application)."""
    path = Path(capture)
    if not path.is_file():
        raise TuneError("--capture", f"file {capture} not found")
    host = _host("host", _profile_value(profile), driver, chip, ["eth0"])
    host["cores"] = 4
    scen = {
        "name": f"tune-{path.stem}",
        "seed": 1,
        "duration_ms": duration_ms or 0,
        "hosts": [host],
        "generators": [
            {
                "name": "capture",
                "pattern": "replay",
                "capture": str(path.resolve()),
                "speed": speed,
                "loops": 1,
            }
        ],
        "links": [{"a": "capture", "b": "host.eth0", "rate": "1G"}],
        "apps": [{"kind": "udp_sink", "name": "sink", "host": "host"}],
    }
    if not duration_ms:
        scen["duration_ms"] = _capture_duration_ms(scen, speed)
    return Workload(
        f"capture {path.name}",
        scen,
        [0],
        "sink",
        description=f"{path.name} replayed at its captured times into one host",
    )


def _capture_duration_ms(scen: dict[str, Any], speed: float) -> int:
    """The capture's span (read by the core) plus 10 ms for the last frames."""
    from holdoff.api import run

    probe = copy.deepcopy(scen)
    probe["duration_ms"] = 1
    report = run(probe).report
    cap = report["summary"]["generators"][0].get("capture") or {}
    span_ns = float(cap.get("duration_ns") or 0) / max(speed, 1e-9)
    return int(math.ceil(span_ns / 1e6)) + 10


def mix_workload(
    mix: str,
    *,
    driver: str,
    chip: str,
    profile: str,
    rate: float | None = None,
    duration_ms: int | None = None,
) -> Workload:
    """A built-in traffic mix against one tuned host (``dut``).

    - ``rr``: open-loop request/response, ``rate`` requests/s (default 20 000,
      Poisson) over 16 connections, 64 B each way, 10 us of service per
      request; latency is the client's, from each request's intended send;
    - ``bulk``: one TCP stream into the host plus a 1 ms ping beside it
      (latency under load);
    - ``mixed``: both, request/response at ``rate`` (default 10 000/s);
    - ``forwarding``: 64-byte frames at ``rate`` frames/s (default 300 000)
      forwarded from eth0 to eth1; no latency is measured.
    """
    if mix not in MIXES:
        raise TuneError("--mix", f"unknown mix {mix!r}; choose one of {', '.join(MIXES)}")
    if rate is not None and not rate > 0:
        raise TuneError("--rate", f"must be above 0, got {rate}")
    prof = _profile_value(profile)
    if mix == "forwarding":
        pps = rate or 300_000.0
        if pps > 1_488_095:
            raise TuneError("--rate", f"{pps:.0f} frames/s is above 64-byte line rate (1488095)")
        host = _host("dut", prof, driver, chip, ["eth0", "eth1"])
        host["forward"] = [{"from": "eth0", "to": "eth1"}]
        scen: dict[str, Any] = {
            "name": "tune-forwarding",
            "seed": 1,
            "duration_ms": duration_ms or 100,
            "hosts": [host],
            "generators": [
                {"name": "source", "pattern": "constant", "rate_pps": pps},
                {"name": "out", "pattern": "constant", "rate_pps": 1, "start_us": 10**9},
            ],
            "links": [
                {"a": "source", "b": "dut.eth0", "rate": "1G"},
                {"a": "dut.eth1", "b": "out", "rate": "1G"},
            ],
        }
        return Workload(
            "forwarding",
            scen,
            [0],
            None,
            ("out", 64),
            f"64-byte frames at {pps:.0f}/s forwarded eth0 -> eth1",
        )
    host = _host("dut", prof, driver, chip, ["eth0"])
    host["cores"] = 2
    apps: list[dict[str, Any]] = []
    app = None
    parts = []
    if mix in ("rr", "mixed"):
        rps = rate or (20_000.0 if mix == "rr" else 10_000.0)
        apps.append(
            {
                "kind": "rpc_open",
                "name": "rr",
                "host": "peer",
                "to": "dut",
                "rate_rps": rps,
                "arrivals": "poisson",
                "connections": 16,
                "request_bytes": 64,
                "response_bytes": 64,
                "service_ns": 10_000,
                "server_threads": 1,
                "max_outstanding": 1024,
            }
        )
        app = "rr"
        parts.append(f"open-loop request/response at {rps:.0f}/s")
    if mix in ("bulk", "mixed"):
        apps.append({"kind": "iperf", "name": "bulk", "host": "peer", "to": "dut"})
        parts.append("one TCP stream into the host")
        if mix == "bulk":
            apps.append(
                {"kind": "ping", "name": "ping", "host": "peer", "to": "dut", "interval_us": 1000}
            )
            app = "ping"
            parts.append("1 ms ping")
    scen = {
        "name": f"tune-{mix}",
        "seed": 1,
        "duration_ms": duration_ms or 200,
        "hosts": [_peer(), host],
        "links": [{"a": "peer.eth0", "b": "dut.eth0", "rate": "1G"}],
        "apps": apps,
    }
    return Workload(mix, scen, [1], app, description=", ".join(parts))


def scenario_workload(
    file: str | os.PathLike[str],
    *,
    hosts: Sequence[str] = (),
    app: str | None = None,
    duration_ms: int | None = None,
) -> Workload:
    """A scenario file as the workload; ``hosts`` names the tuned hosts
    (default: every host). Relative capture and profile paths are made
    absolute (they are relative to the file)."""
    path = Path(file)
    if not path.is_file():
        raise TuneError("SCENARIO", f"file {file} not found")
    try:
        scen = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise TuneError("SCENARIO", f"{file} is not valid TOML: {err}") from err
    folder = path.resolve().parent
    for gen in scen.get("generators", []):
        if isinstance(gen, dict) and isinstance(gen.get("capture"), str):
            gen["capture"] = str((folder / gen["capture"]).resolve())
    names = [str(h.get("name")) for h in scen.get("hosts", []) if isinstance(h, dict)]
    for h in scen.get("hosts", []):
        if isinstance(h, dict) and str(h.get("profile", "")).endswith(".toml"):
            h["profile"] = str((folder / h["profile"]).resolve())
    if not names:
        raise TuneError("SCENARIO", f"{file} has no [[hosts]]: nothing to tune")
    if hosts:
        unknown = [h for h in hosts if h not in names]
        if unknown:
            raise TuneError(
                "--host", f"no host {unknown[0]!r} in {file}; its hosts: {', '.join(names)}"
            )
        idx = [names.index(h) for h in hosts]
    else:
        idx = list(range(len(names)))
    if duration_ms:
        scen["duration_ms"] = duration_ms
    return Workload(
        path.stem,
        scen,
        idx,
        app,
        description=f"{path.name}, tuned hosts {', '.join(str(names[i]) for i in idx)}",
    )


#: Application kinds that measure a latency.
LATENCY_APPS = ("ping", "rpc", "rpc_open", "udp_sink", "netpipe")


def _measures_latency(workload: Workload) -> bool:
    apps = [a for a in workload.scenario.get("apps", []) if isinstance(a, dict)]
    if workload.app is not None:
        apps = [a for a in apps if a.get("name") == workload.app]
    return any(a.get("kind") in LATENCY_APPS for a in apps)


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
    if driver.startswith("linux-") and driver != "linux-e1000-5x":
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
    return grid, skipped


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


def candidate(
    driver: str, settings: Mapping[str, int], workload: Workload, chip: str | None
) -> Candidate:
    """Decode ``settings`` for every tuned port and collect the field changes."""
    settings = canonical_settings(driver, settings, chip or _first_chip(workload))
    changes: dict[str, Any] = {}
    decoded: knobs.Decoded | None = None
    hosts = workload.scenario.get("hosts", [])
    for hi in workload.hosts:
        host = hosts[hi]
        nics = host.get("nics", [])
        for ni, nic in enumerate(nics):
            nic_chip = chip or nic.get("chip") or None
            d = knobs.decode(driver, dict(settings), nic_chip)
            if d.scenario is None:
                raise TuneError("--driver", d.scenario_note or f"{driver} has no simulator model")
            decoded = decoded or d
            base = f"hosts[{hi}].nics[{ni}]"
            for key, value in d.scenario.items():
                if key == "napi":
                    continue
                changes[f"{base}.{key}"] = value
        if HOST_DRIVER.get(driver) == "napi" and decoded is not None:
            napi = dict(host.get("napi", {}))
            table = (decoded.scenario or {}).get("napi", {})
            for key in ("defer_hard_irqs", "gro_flush_timeout_ns", "irq_suspend_timeout_ns"):
                napi[key] = int(table.get(key, 0))
            changes[f"hosts[{hi}].napi"] = napi
    if decoded is None:
        raise TuneError("--host", "the tuned hosts have no NICs")
    return Candidate(dict(settings), decoded, changes)


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


@dataclass
class PointMetrics:
    p50_us: float
    p99_us: float
    cpu_util: float
    interrupts_per_s: float
    throughput_bps: float
    drops: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "p50_us": _clean(self.p50_us),
            "p99_us": _clean(self.p99_us),
            "cpu_util": _clean(self.cpu_util),
            "interrupts_per_s": _clean(self.interrupts_per_s),
            "throughput_bps": _clean(self.throughput_bps),
            "drops": self.drops,
        }


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
    p50 = p99 = math.nan
    latency_apps = [workload.app] if workload.app else [str(a.get("name")) for a in apps]
    for name in latency_apps:
        if not math.isnan(_num(rec, f"{name}/netpipe_latency_us")):
            p50 = _num(rec, f"{name}/netpipe_latency_us")
            p99 = _num(rec, f"{name}/netpipe_latency_us_max")
            break
        if not math.isnan(_num(rec, f"{name}/latency_us_p99")):
            p50 = _num(rec, f"{name}/latency_us_p50")
            p99 = _num(rec, f"{name}/latency_us_p99")
            break
    # Every application of the report (a bulk sender's receiving side
    # included), plus NetPIPE's own mean, which its app row does not carry.
    thr = _num(rec, "throughput_bps_total")
    thr = 0.0 if math.isnan(thr) else thr
    for a in apps:
        mean = _num(rec, f"{a.get('name')}/netpipe_mbit_mean")
        if not math.isnan(mean):
            thr += mean * 1e6
    if workload.forward_sink is not None:
        gen, frame = workload.forward_sink
        secs = _num(rec, "sim_time_ns") / 1e9
        thr = _num(rec, f"{gen}/rx_packets") * frame * 8 / secs if secs > 0 else math.nan
    drops = 0
    for key, value in rec.items():
        if key.startswith("drops_") and key.removeprefix("drops_") not in STATIC_DROPS:
            drops += int(value or 0)
    return PointMetrics(p50, p99, cpu, irqs, thr, drops)


# -- choosing ---------------------------------------------------------------------------------


@dataclass
class Point:
    """One evaluated setting."""

    candidate: Candidate
    metrics: PointMetrics
    key: str
    #: Other knob settings that decode to the same registers.
    equivalent: list[dict[str, int]] = field(default_factory=list)

    def to_dict(self, iface: str = "eth0") -> dict[str, Any]:
        d = self.candidate.decoded
        return {
            "settings": dict(self.candidate.settings),
            "changed": _changed(d),
            "commands": knobs.commands(d, iface),
            "mode": d.mode,
            "registers": {r.name: r.value for r in d.registers},
            **self.metrics.to_dict(),
            "scenario_hash": self.key,
        }


def _changed(d: knobs.Decoded) -> dict[str, int]:
    dflt = knobs.defaults(d.driver)
    return {k: v for k, v in d.settings.items() if v != dflt.get(k)}


def _valid(p: Point) -> bool:
    m = p.metrics
    return m.drops == 0 and not math.isnan(m.cpu_util)


#: Throughputs that differ by less than this fraction count as equal in the
#: front (an open-loop workload's goodput moves by a few frames between
#: settings, which is not a trade-off).
FRONT_THROUGHPUT_RESOLUTION = 0.01


def pareto_front(
    points: Sequence[Point], dims: Sequence[str] = ("p99", "cpu", "irq", "thr")
) -> list[Point]:
    """Points no other point beats in every one of ``dims`` -- p99, CPU,
    interrupt rate (lower is better) and throughput (higher, compared at
    :data:`FRONT_THROUGHPUT_RESOLUTION`) -- among the points without drops.
    A quantity the workload does not measure (NaN) is left out."""
    # Settings with exactly the same results (a knob without effect here)
    # are one point of the front: the one that changes fewest knobs.
    same: dict[tuple[float, ...], Point] = {}
    for p in points:
        if not _valid(p):
            continue
        m = p.metrics
        k = (m.p50_us, m.p99_us, m.cpu_util, m.interrupts_per_s, m.throughput_bps)
        if k not in same or _simplicity(p) < _simplicity(same[k]):
            same[k] = p
    pts = list(same.values())
    if not pts:
        return []
    top = max((p.metrics.throughput_bps for p in pts), default=0.0)
    step = top * FRONT_THROUGHPUT_RESOLUTION if top > 0 else 1.0

    def vec(p: Point) -> list[float]:
        m = p.metrics
        values = {
            "p99": m.p99_us,
            "cpu": m.cpu_util,
            "irq": m.interrupts_per_s,
            "thr": -math.floor(m.throughput_bps / step)
            if not math.isnan(m.throughput_bps)
            else math.nan,
        }
        return [values[d] for d in dims if not math.isnan(values[d])]

    vecs = [vec(p) for p in pts]
    front = []
    for i, p in enumerate(pts):
        b = vecs[i]
        dominated = any(
            j != i
            and len(a) == len(b)
            and all(x <= y for x, y in zip(a, b, strict=True))
            and any(x < y for x, y in zip(a, b, strict=True))
            for j, a in enumerate(vecs)
        )
        if not dominated:
            front.append(p)
    return sorted(front, key=lambda p: (p.metrics.cpu_util, _nan_last(p.metrics.p99_us)))


def _simplicity(p: Point) -> int:
    """How many knobs a point changes from the driver's defaults."""
    return len(_changed(p.candidate.decoded))


def _nan_last(x: float) -> float:
    return math.inf if math.isnan(x) else x


def choose(points: Sequence[Point], objective: Objective) -> tuple[Point | None, str]:
    """The recommended point and one sentence on why (or why none)."""
    valid = [p for p in points if _valid(p)]
    if not valid:
        return None, "every setting tried drops frames or measured no CPU"
    if objective.kind == "throughput":
        best = max(p.metrics.throughput_bps for p in valid)
        tied = [p for p in valid if p.metrics.throughput_bps >= THROUGHPUT_TIE * best]
        pick = min(
            tied, key=lambda p: (p.metrics.cpu_util, p.metrics.interrupts_per_s, _simplicity(p))
        )
        return pick, (
            f"the most throughput ({best / 1e6:.1f} Mb/s); of the {len(tied)} settings within "
            f"{(1 - THROUGHPUT_TIE) * 100:.1f} % of it, the least CPU"
        )
    if objective.kind == "pareto":
        front = pareto_front(valid)
        usable = [p for p in front if not math.isnan(p.metrics.p99_us)] or front
        lat = [p.metrics.p99_us for p in usable]
        cpu = [p.metrics.cpu_util for p in usable]

        def scaled(x: float, xs: list[float]) -> float:
            if math.isnan(x):
                return 0.0
            lo, hi = min(xs), max(xs)
            return 0.0 if hi <= lo else (x - lo) / (hi - lo)

        pick = min(
            usable,
            key=lambda p: math.hypot(
                scaled(p.metrics.p99_us, lat), scaled(p.metrics.cpu_util, cpu)
            ),
        )
        return pick, (
            f"the front has {len(front)} points; this one is nearest the ideal corner "
            "(lowest p99 and lowest CPU, each scaled to the front's range)"
        )
    metric = objective.metric
    lat_of: Callable[[Point], float] = (
        (lambda p: p.metrics.p99_us) if metric == "p99" else (lambda p: p.metrics.p50_us)
    )
    if objective.kind == "latency":
        ok = [p for p in valid if lat_of(p) <= objective.bound]
        if not ok:
            low = min(valid, key=lambda p: _nan_last(lat_of(p)))
            return None, (
                f"no setting meets {metric} <= {objective.bound:g} us without drops; the "
                f"lowest {metric} is {lat_of(low):.1f} us ({_settings_text(low)})"
            )
        top = max(p.metrics.throughput_bps for p in ok)
        keep = [p for p in ok if p.metrics.throughput_bps >= THROUGHPUT_FLOOR * top]
        pick = min(keep, key=lambda p: (round(p.metrics.cpu_util, 6), lat_of(p), _simplicity(p)))
        return pick, (
            f"{len(ok)} settings meet {metric} <= {objective.bound:g} us with no drops; of "
            f"those within {(1 - THROUGHPUT_FLOOR) * 100:.0f} % of their best throughput, the "
            "least CPU"
        )
    ok = [p for p in valid if p.metrics.cpu_util <= objective.bound]
    if not ok:
        least = min(valid, key=lambda p: p.metrics.cpu_util)
        return None, (
            f"no setting stays within {objective.bound * 100:g} % CPU without drops; the least "
            f"is {least.metrics.cpu_util * 100:.1f} % ({_settings_text(least)})"
        )
    top = max(p.metrics.throughput_bps for p in ok)
    keep = [p for p in ok if p.metrics.throughput_bps >= THROUGHPUT_FLOOR * top]
    pick = min(keep, key=lambda p: (_nan_last(lat_of(p)), p.metrics.cpu_util, _simplicity(p)))
    return pick, (
        f"{len(ok)} settings stay within {objective.bound * 100:g} % CPU with no drops; of "
        f"those within {(1 - THROUGHPUT_FLOOR) * 100:.0f} % of their best throughput, the "
        f"lowest {metric}"
    )


def _settings_text(p: Point) -> str:
    changed = _changed(p.candidate.decoded)
    return ", ".join(f"{k}={v}" for k, v in changed.items()) or "the defaults"


def _score(m: PointMetrics, objective: Objective) -> float:
    """A single number for a budget objective's sampler (lower is better):
    the quantity minimised when the budget holds, else a penalty above any
    feasible value growing with the excess."""
    if m.drops or math.isnan(m.cpu_util):
        return 1e6 + m.drops
    if objective.kind == "throughput":
        return -m.throughput_bps / 1e9 + m.cpu_util * 1e-3
    lat = m.p99_us if objective.metric == "p99" else m.p50_us
    if objective.kind == "latency":
        if math.isnan(lat):
            return 1e6
        return m.cpu_util if lat <= objective.bound else 10.0 + lat / objective.bound
    if m.cpu_util > objective.bound:
        return 1e5 + m.cpu_util / objective.bound
    return lat if not math.isnan(lat) else 1e6


# -- the run ----------------------------------------------------------------------------------


@dataclass
class TuneResult:
    driver: str
    chip: str
    workload: Workload
    objective: Objective
    search: str
    grid_size: int
    points: list[Point]
    default: Point
    recommended: Point | None
    reason: str
    front: list[Point]
    skipped: list[str]
    notes: list[str]
    computed: int
    cached: int
    #: Knob settings tried (several may share one run: same registers).
    tried: int = 0
    iface: str = "eth0"

    def to_dict(self) -> dict[str, Any]:
        return {
            "driver": self.driver,
            "chip": self.chip,
            "workload": self.workload.name,
            "workload_description": self.workload.description,
            "objective": self.objective.text,
            "search": self.search,
            "grid_size": self.grid_size,
            "settings_tried": self.tried,
            "evaluated": len(self.points),
            "computed": self.computed,
            "cached": self.cached,
            "recommended": None
            if self.recommended is None
            else self.recommended.to_dict(self.iface),
            "reason": self.reason,
            "default": self.default.to_dict(self.iface),
            "front": [p.to_dict(self.iface) for p in self.front],
            # The front in the report's plane: p99 (or throughput) against CPU.
            "front_2d": [
                p.to_dict(self.iface)
                for p in pareto_front(
                    self.points,
                    ("p99", "cpu")
                    if any(not math.isnan(q.metrics.p99_us) for q in self.points)
                    else ("thr", "cpu"),
                )
            ],
            "points": [p.to_dict(self.iface) for p in self.points],
            "not_searched": self.skipped,
            "notes": self.notes,
        }


#: (points done, points planned, best so far as text) -> None.
TuneProgress = Callable[[int, int, str], None]


def tune(
    workload: Workload,
    *,
    driver: str,
    objective: Objective,
    chip: str | None = None,
    search: str = "auto",
    trials: int = DEFAULT_TRIALS,
    seed: int = 1,
    store: str | os.PathLike[str] | ResultStore | None = DEFAULT_STORE,
    executor: Executor = "process",
    workers: int | None = None,
    progress: TuneProgress | None = None,
    iface: str = "eth0",
    only: Sequence[str] = (),
) -> TuneResult:
    """Search ``driver``'s knobs on ``workload`` for ``objective``; ``only``
    restricts the search to those knobs (the others stay at the driver's
    defaults)."""
    check_driver(driver)
    if search not in ("auto", "grid", "optuna"):
        raise TuneError("--search", f"unknown search {search!r}; use auto, grid or optuna")
    if trials < 1:
        raise TuneError("--trials", f"must be at least 1, got {trials}")
    if chip is not None:
        knobs.chip_for(driver, chip)
    needs_latency = objective.kind in ("latency", "cpu")
    if needs_latency and not _measures_latency(workload):
        raise TuneError(
            "--objective",
            f"{objective.text!r} needs a latency, and this workload measures none (no ping, "
            "request/response, UDP sink or NetPIPE application): use max-throughput or pareto",
        )
    grid, skipped = space(driver, workload)
    if only:
        unknown = [k for k in only if k not in grid]
        if unknown:
            raise TuneError(
                "--knob",
                f"{unknown[0]!r} is not a knob the tuner searches for {driver}; "
                f"those are: {', '.join(grid)}",
            )
        held = [k for k in grid if k not in only]
        if held:
            skipped.append(f"{', '.join(held)}: held at the driver's defaults (--knob)")
        grid = {k: v for k, v in grid.items() if k in only}
    notes = _check_host_drivers(driver, workload)
    n = grid_size(grid)
    mode = search if search != "auto" else ("grid" if n <= GRID_MAX else "optuna")
    evaluator = _Evaluator(workload, driver, chip, store, executor, workers)
    default_settings = {k: v[0] for k, v in grid.items()}
    if mode == "grid":
        planned = grid_points(grid)
        if progress is not None:
            evaluator.progress = lambda done: progress(
                done, len(planned), evaluator.best_text(objective)
            )
        evaluator.evaluate(planned)
        if progress is not None:
            progress(len(planned), len(planned), evaluator.best_text(objective))
    else:
        _optuna_search(evaluator, grid, default_settings, objective, trials, seed, progress)
    points = evaluator.points()
    default = evaluator.point_of(default_settings)
    recommended, reason = choose(points, objective)
    if needs_latency and all(math.isnan(p.metrics.p99_us) for p in points):
        raise TuneError(
            "--objective",
            f"{objective.text!r} needs a latency, and no run of this workload measured one "
            "(did its latency application receive anything?): use max-throughput or pareto",
        )
    return TuneResult(
        driver=driver,
        chip=default.candidate.decoded.chip.name,
        workload=workload,
        objective=objective,
        search=mode if mode == "grid" else f"optuna ({trials} trials, seed {seed})",
        grid_size=n,
        points=points,
        default=default,
        recommended=recommended,
        reason=reason,
        front=pareto_front(points),
        skipped=skipped,
        notes=notes,
        computed=evaluator.computed,
        cached=evaluator.cached,
        tried=len(evaluator.tried),
        iface=iface,
    )


class _Evaluator:
    """Runs candidates through the sweep machinery (store, executors), once per
    distinct scenario."""

    def __init__(
        self,
        workload: Workload,
        driver: str,
        chip: str | None,
        store: str | os.PathLike[str] | ResultStore | None,
        executor: Executor,
        workers: int | None,
    ) -> None:
        self.workload = workload
        self.driver = driver
        self.chip = chip
        self.store = (
            store if isinstance(store, ResultStore) or store is None else ResultStore(store)
        )
        self.executor = executor
        self.workers = workers
        self.by_changes: dict[str, Point] = {}
        self.by_settings: dict[str, Point] = {}
        self.order: list[str] = []
        #: Knob settings asked for (before canonicalisation).
        self.tried: set[str] = set()
        self.computed = 0
        self.cached = 0
        self.done = 0
        self.progress: Callable[[int], None] | None = None

    def _id(self, obj: Any) -> str:
        from holdoff.store import canonical_json

        return canonical_json(obj)

    def evaluate(self, settings_list: Sequence[Mapping[str, int]]) -> list[Point]:
        """Points for ``settings_list`` (in order), running only scenarios not run yet."""
        new: dict[str, Candidate] = {}
        ids: list[tuple[str, str]] = []
        for settings in settings_list:
            sid = self._id(dict(settings))
            self.tried.add(sid)
            if sid in self.by_settings:
                ids.append((sid, ""))
                continue
            try:
                cand = candidate(self.driver, settings, self.workload, self.chip)
            except knobs.KnobError as err:
                raise TuneError(err.key, err.message) from err
            cid = self._id(cand.changes)
            ids.append((sid, cid))
            if cid not in self.by_changes:
                new.setdefault(cid, cand)
        if new:
            self._run(new)
        out = []
        for (sid, cid), settings in zip(ids, settings_list, strict=True):
            if sid not in self.by_settings:
                point = self.by_changes[cid]
                if point.candidate.settings != dict(settings):
                    point.equivalent.append(dict(settings))
                self.by_settings[sid] = point
            out.append(self.by_settings[sid])
        return out

    def _run(self, new: Mapping[str, Candidate]) -> None:
        base = copy.deepcopy(self.workload.scenario)
        seed = int(base.get("seed", 1))
        sweep = {
            "name": f"tune-{self.workload.name}",
            "base": base,
            "seed": seed,
            "points": [{**c.changes, "seed": seed} for c in new.values()],
        }
        start = self.done

        def step(done: int, total: int) -> None:
            self.done = start + done
            if self.progress is not None:
                self.progress(self.done)

        try:
            result = run_sweep(
                sweep,
                store=self.store,
                executor=self.executor if len(new) > 1 else "serial",
                workers=self.workers,
                progress=step,
            )
        except SweepError as err:
            raise TuneError(err.field or "scenario", str(err)) from err
        self.computed += result.computed
        self.cached += result.cached
        self.done = start + len(new)
        if self.progress is not None:
            self.progress(self.done)
        for (cid, cand), sp in zip(new.items(), result.points, strict=True):
            metrics = point_metrics(result.records[sp.key], self.workload)
            point = Point(cand, metrics, sp.key)
            self.by_changes[cid] = point
            self.by_settings[self._id(cand.settings)] = point
            self.order.append(cid)

    def points(self) -> list[Point]:
        return [self.by_changes[c] for c in self.order]

    def point_of(self, settings: Mapping[str, int]) -> Point:
        return self.evaluate([settings])[0]

    def best_text(self, objective: Objective) -> str:
        pts = self.points()
        if not pts:
            return ""
        pick, _ = choose(pts, objective)
        if pick is None:
            return "none meets the objective yet"
        m = pick.metrics
        lat = "" if math.isnan(m.p99_us) else f"p99 {m.p99_us:.1f} us, "
        return f"{_settings_text(pick)}: {lat}CPU {m.cpu_util * 100:.1f} %"


def _optuna_search(
    ev: _Evaluator,
    grid: Mapping[str, Sequence[int]],
    default: Mapping[str, int],
    objective: Objective,
    trials: int,
    seed: int,
    progress: TuneProgress | None,
) -> None:
    """Seeded Optuna search in batches (one batch runs in parallel on the
    executor); the default setting is the first trial."""
    try:
        import optuna
    except ImportError as err:  # pragma: no cover - a declared dependency
        raise TuneError("--search", "the optuna search needs Optuna: pip install optuna") from err
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if objective.kind == "pareto":
        sampler: Any = optuna.samplers.NSGAIISampler(seed=seed, population_size=16)
        study = optuna.create_study(
            directions=["minimize", "minimize", "minimize", "maximize"], sampler=sampler
        )
    else:
        sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=16, multivariate=True)
        study = optuna.create_study(direction="minimize", sampler=sampler)
    study.enqueue_trial(dict(default))
    batch = max(2, (ev.workers or os.cpu_count() or 1) * 2)
    done = 0
    while done < trials:
        n = min(batch, trials - done)
        asked = [study.ask() for _ in range(n)]
        settings = [
            {k: int(t.suggest_categorical(k, list(values))) for k, values in grid.items()}
            for t in asked
        ]
        points = ev.evaluate(settings)
        for t, p in zip(asked, points, strict=True):
            m = p.metrics
            if objective.kind == "pareto":
                big = 1e12
                study.tell(
                    t,
                    [
                        big if math.isnan(m.p99_us) or m.drops else m.p99_us,
                        big if math.isnan(m.cpu_util) or m.drops else m.cpu_util,
                        big if m.drops else m.interrupts_per_s,
                        0.0 if m.drops or math.isnan(m.throughput_bps) else m.throughput_bps,
                    ],
                )
            else:
                study.tell(t, _score(m, objective))
        done += n
        if progress is not None:
            progress(done, trials, ev.best_text(objective))
