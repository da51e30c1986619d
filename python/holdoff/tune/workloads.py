"""The tuner's inputs: the objective, the workload (a capture, a built-in mix or a
scenario file) and the drivers it can run; see :mod:`holdoff.tune`.

Units: latency budgets [us], CPU [fraction of the cores], times [ms] where named.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holdoff import capture as cap
from holdoff import inputs, knobs

#: Relative throughput a budget objective may give up against the best
#: throughput of the settings that meet the budget.
THROUGHPUT_FLOOR = 0.98
#: Throughput within this fraction of the best counts as tied (max-throughput).
THROUGHPUT_TIE = 0.995
#: The grid size up to which ``--search auto`` runs every point.
GRID_MAX = 400
#: Trials of an Optuna search by default.
DEFAULT_TRIALS = 96
#: The most trials an Optuna search accepts; it also stops once every
#: distinct setting of the grid has been tried (a trial asks for one).
MAX_TRIALS = 100_000
#: Runs per setting by default (seed, seed + 1, ...): see docs/tune.md for
#: how often the choice changed with 1, 3 and 5.
DEFAULT_SEEDS = 3

#: The host driver architecture the simulator runs for each tuned driver.
HOST_DRIVER: dict[str, str] = {
    "linux-e1000": "napi",
    "linux-e1000-5x": "linux-isr",
    "linux-e1000e": "napi",
    "linux-igb": "napi",
    "linux-ixgbe": "napi",
    "linux-dim": "napi",
    "linux-ice": "napi",
    "linux-i40e": "napi",
    "linux-mlx5": "napi",
    "linux-ena": "napi",
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
            f"{driver}: the tuner has no simulator model for it (holdoff explain decodes its "
            "knobs)",
        )


# -- objectives ---------------------------------------------------------------------


@dataclass(frozen=True)
class Objective:
    """What the tuner optimises: ``kind`` is "latency", "cpu", "throughput", "cores"
    (the fewest interrupt cores with no drops, within a latency budget when
    ``bound`` is set) or "pareto"."""

    kind: str
    #: The budget: latency [us] (metric ``p50``/``p99``) or CPU [fraction].
    bound: float = math.nan
    metric: str = "p99"
    text: str = ""


_TIME_UNITS = {"ns": 1e-3, "us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}


def _latency_budget_us(number: str, unit: str) -> float:
    """A latency budget of an objective [us]; it must be above 0."""
    bound = float(number) * _TIME_UNITS[unit]
    if bound <= 0:
        raise TuneError("--objective", "the latency budget must be above 0")
    return bound


def parse_objective(text: str) -> Objective:
    """``p99<=100us``, ``p50<=1ms``, ``cpu<=30%``, ``max-throughput`` or ``pareto``."""
    t = text.strip().lower().replace(" ", "")
    if t == "pareto":
        return Objective("pareto", text=text)
    if t in ("max-throughput", "throughput"):
        return Objective("throughput", text=text)
    m = re.fullmatch(
        r"(?:fewest-cores|cores|min-cores)(?:,(p50|p99)<=([0-9]*\.?[0-9]+)(ns|us|µs|ms|s))?", t
    )
    if m:
        if m.group(1) is None:
            return Objective("cores", text=text)
        return Objective("cores", _latency_budget_us(m.group(2), m.group(3)), m.group(1), text)
    m = re.fullmatch(r"(p50|p99)<=([0-9]*\.?[0-9]+)(ns|us|µs|ms|s)?", t)
    if m:
        if m.group(3) is None:
            raise TuneError("--objective", f"{text!r} has no unit: write e.g. p99<=100us")
        return Objective("latency", _latency_budget_us(m.group(2), m.group(3)), m.group(1), text)
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
        "cpu<=30% (least p99 within a CPU budget), max-throughput, fewest-cores (the fewest "
        "interrupt cores that carry the load with no drops; fewest-cores,p99<=100us adds a "
        "latency budget) or pareto",
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
    #: A capture workload: what of the capture is simulated.
    coverage: cap.Coverage | None = None
    #: ``--latency-of`` as given (the table shows that traffic's latency first).
    latency_of: str | None = None
    #: What the output should say about the workload (a replay cut short).
    notes: list[str] = field(default_factory=list)


def _host(name: str, profile: str, driver: str, chip: str, nics: Sequence[str]) -> dict[str, Any]:
    host_driver = HOST_DRIVER[driver]
    tables = [{"name": n, "chip": chip} for n in nics]
    if host_driver in knobs.NO_MSIX_HOST_DRIVERS:
        # openbsd-em on an i210 or 82574: one MSI vector (em_enable_msix = 0).
        tables = [knobs.without_msix(t) for t in tables]
    return {
        "name": name,
        "profile": profile,
        "driver": host_driver,
        "nics": tables,
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
    span: str | None = None,
    speed: float = 1.0,
    latency_of: str | None = None,
    only_to: str | None = None,
    host_mac: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    mtu: int | None = None,
) -> Workload:
    """The capture replayed at its own times into one host (a UDP sink takes
    every frame and measures its latency from the wire to the application).

    ``only_to``: replay only the frames to this IP or MAC address (``"all"``:
    every frame). Without it, a capture that holds a host's sent frames
    beside those it received (:attr:`holdoff.capture.Directions.two_way`:
    taken on the host) is refused with the addresses to choose from: its
    sent frames would be replayed into the host as received traffic; with
    ``host_mac`` (the tuned interface's address, from a host file) such a
    capture keeps the frames to that address instead.

    ``mtu``: the link's MTU [bytes] (68 to 9000; default 1500): frames
    longer than MTU + 18 are dropped, TCP offload aggregates are cut into
    segments of this MTU, and the host's NIC takes it.

    What is simulated is read from the file (:func:`holdoff.capture.plan`):
    its whole span plus a drain allowance, or exactly the window asked
    (``span``, ``"START:END"``) or the first ``duration_ms``. A capture with
    no frames is refused."""
    path = Path(capture)
    if duration_ms is not None and span is not None:
        raise TuneError("--span", "give --span or --duration-ms, not both")
    window = parse_span(span) if span is not None else None
    selector = parse_latency_of(latency_of) if latency_of is not None else None
    if mtu is not None and not MIN_MTU <= mtu <= MAX_MTU:
        raise TuneError("--mtu", f"got {mtu}; allowed: {MIN_MTU} to {MAX_MTU} bytes")
    link_mtu = mtu or cap.DEFAULT_MTU
    keep = None if only_to is None or only_to.strip().lower() == "all" else only_to.strip()
    if keep is not None:
        try:
            cap.parse_only_to(keep)
        except ValueError as err:
            raise TuneError(
                "--only-to", f"{keep!r} is neither an IP nor a MAC address, nor 'all'"
            ) from err
    try:
        cov = cap.plan(
            path,
            speed=speed,
            only_to=keep,
            span_ns=window,
            duration_ns=None if duration_ms is None else duration_ms * 1_000_000,
            mtu=link_mtu,
            progress=progress,
        )
    except cap.CaptureFileError as err:
        raise TuneError("--capture", str(err)) from err
    except ValueError as err:
        raise TuneError("--span", f"{span!r} {err}") from err
    dirs = cov.info.directions
    mixed = dirs is not None and (dirs.two_way or dirs.many_receivers)
    if only_to is None and host_mac is not None and dirs is not None and mixed:
        # Taken on (or beside) the host whose address the host file gives:
        # keep what it received.
        if not any(h.mac == host_mac for h in (*dirs.hosts, *dirs.receivers)):
            hosts = "".join(
                f"\n  {h.name}: received {h.received:,}, sent {h.sent:,}" for h in dirs.hosts
            )
            raise TuneError(
                "--capture",
                f"{path.name} holds frames both ways or to several hosts, but not of the host "
                "file's interface "
                f"address {host_mac}:{hosts}\nIs it a capture of this interface? Name the "
                "host to tune with --only-to (its IP or MAC address), or --only-to all",
            )
        work = capture_workload(
            capture,
            driver=driver,
            chip=chip,
            profile=profile,
            duration_ms=duration_ms,
            span=span,
            speed=speed,
            latency_of=latency_of,
            only_to=host_mac,
            progress=progress,
            mtu=mtu,
        )
        work.description += (
            ": the host file's interface address, the capture holding other traffic too"
        )
        return work
    if cov.info.frames == 0 and keep is not None:
        seen = f" ({dirs.text()})" if dirs is not None and dirs.hosts else ""
        raise TuneError("--only-to", f"no frame of {path.name} is addressed to {keep}{seen}")
    if cov.info.frames == 0:
        raise TuneError("--capture", f"{capture} has no frames: there is no traffic to tune on")
    if only_to is None and dirs is not None and not dirs.two_way and dirs.many_receivers:
        got = "".join(
            f"\n  {h.name}: received {h.received:,} ({cap.pct(h.received / dirs.unicast_frames)})"
            for h in dirs.receivers
        )
        first = dirs.receivers[0]
        raise TuneError(
            "--capture",
            f"{path.name} holds several hosts' traffic: no address received "
            f"{cap.pct(cap.ONE_RECEIVER_SHARE)} of its {dirs.unicast_frames:,} unicast frames "
            f"(a switch or router port):{got}\nA replay sends every frame into one host. Name "
            f"the host to tune with --only-to (e.g. --only-to {first.ip or first.mac}), or "
            "give --only-to all to replay every frame",
        )
    if only_to is None and dirs is not None and dirs.two_way:
        example = dirs.capture_host or dirs.hosts[0]
        hosts = "".join(
            f"\n  {h.name}: received {h.received:,}, sent {h.sent:,}" for h in dirs.hosts
        )
        raise TuneError(
            "--capture",
            f"{path.name} holds frames both ways (unicast frames per address):{hosts}\n"
            "A replay sends every frame into the simulated host as received traffic, so a "
            "host's own sent frames would be taken for traffic it received.\n"
            "Name the host to tune with --only-to, its IP or MAC address (e.g. --only-to "
            f"{example.ip or example.mac} replays the frames it received), or give "
            "--only-to all to replay every frame",
        )
    if cov.info.window_frames == 0:
        flag = "--span" if window is not None else "--duration-ms"
        raise TuneError(flag, f"no frame of {path.name} falls inside the simulated window")
    host = _host("host", _profile_value(profile), driver, chip, ["eth0"])
    link_mbps = _link_mbps(driver, chip)
    lag = cap.wire_lag_ns(cov, link_mbps * 1e6)
    if lag > max(LAG_REFUSED_NS, LAG_REFUSED_SHARE * cov.traffic_ns):
        frames = cov.info.frames if cov.whole else cov.info.window_frames
        rate = (
            (cov.info.wire_bytes if cov.whole else cov.info.window_wire_bytes)
            * 8e3
            / max(cov.traffic_ns, 1)
        )
        raise TuneError(
            "--capture",
            f"{path.name} carries {rate:,.0f} Mb/s on average over the "
            f"{cov.traffic_ns / 1e6:,.3f} ms simulated ({frames:,} frames), more than the "
            f"{chip or 'NIC'}'s {link_mbps:,} Mb/s line: a replay sends no faster than the "
            f"line, so it would fall {lag / 1e6:,.3f} ms behind the capture and its latency "
            "and drops would be of other traffic.\nIt was not captured on a link of this "
            f"speed: give --driver and --chip of a NIC at the capture's speed{_faster(rate)}, "
            "or --span a part that fits",
        )
    # A 10 GbE port runs a queue per core: give the host room for 8 queue cores.
    host["cores"] = 8 if link_mbps >= 10_000 else 4
    gen: dict[str, Any] = {
        "name": "capture",
        "pattern": "replay",
        "capture": str(path.resolve()),
        "speed": speed,
        "loops": 1,
    }
    if cov.start_ns:
        gen["start_us"] = cov.start_ns // 1000
    if selector is not None:
        gen["latency_of"] = selector
    if keep is not None:
        gen["only_to"] = keep
    if link_mtu != cap.DEFAULT_MTU:
        gen["mtu_bytes"] = link_mtu
        for nic in host["nics"]:
            nic["mtu_bytes"] = link_mtu
    scen = {
        "name": f"tune-{path.stem}",
        "seed": 1,
        "duration_ms": max(1, math.ceil(cov.simulated_ns / 1e6)),
        "hosts": [host],
        "generators": [gen],
        "links": [{"a": "capture", "b": "host.eth0", "rate": _rate(link_mbps)}],
        "apps": [{"kind": "udp_sink", "name": "sink", "host": "host"}],
    }
    return Workload(
        f"capture {path.name}",
        scen,
        [0],
        "sink",
        description=f"{path.name} replayed at its captured times into one host"
        + (
            f" (only the frames to {keep})"
            if keep is not None
            else " (every frame, both ways, as --only-to all asks)"
            if dirs is not None and dirs.two_way
            else ""
        ),
        coverage=cov,
        latency_of=latency_of,
    )


#: ``--mtu`` bounds [bytes] (the replay's ``mtu_bytes``).
MIN_MTU, MAX_MTU = 68, 9000

#: A capture whose replay must fall behind by more than this at its end is
#: refused [ns] (and by more than this share of its span): a burst at a
#: faster port's spacing that drains before the end leaves no lag, a window
#: cut inside one leaves a few frame times (40 full frames 12 us apart at
#: 1 Gb/s: 12 us), a sustained excess is traffic the link cannot carry.
LAG_REFUSED_NS = cap.LAG_WARN_NS
LAG_REFUSED_SHARE = cap.LAG_WARN_SHARE


def _faster(rate_mbps: float) -> str:
    """An example driver and chip whose link carries ``rate_mbps`` (the
    slowest that does), as " (e.g. --driver D --chip C, N Mb/s)"; "" if none."""
    fits = sorted(
        (knobs.CHIPS[c].link_mbps, d, c)
        for d, (_, chips) in knobs.DRIVER_CHIPS.items()
        for c in chips
        if knobs.CHIPS[c].link_mbps >= rate_mbps
    )
    if not fits:
        return ""
    mbps, driver, chip = fits[0]
    return f" (e.g. --driver {driver} --chip {chip}, {mbps:,} Mb/s)"


def _link_mbps(driver: str, chip: str) -> int:
    """The chip's link speed [Mb/s] (the driver's default chip without one)."""
    try:
        return knobs.chip_for(driver, chip or None).link_mbps
    except knobs.KnobError:
        return 1000


def _rate(mbps: int) -> str:
    return f"{mbps // 1000}G" if mbps % 1000 == 0 else f"{mbps}M"


#: ``--span`` time units [ns].
_SPAN_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def parse_span(text: str) -> tuple[int, int]:
    """``START:END`` in ms (``2000:5000``) or with units (``2s:5s``,
    ``1500ms:3.5s``), capture time after the capture's first record, as [ns]."""
    parts = text.strip().split(":")
    if len(parts) != 2:
        raise TuneError("--span", f"{text!r} is not START:END (e.g. 2000:5000 in ms, or 2s:5s)")
    out = []
    for part in parts:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s)?\s*", part)
        if not m:
            raise TuneError(
                "--span", f"{part!r} in {text!r} is not a time (a number of ms, or 2s, 500ms)"
            )
        value = float(m.group(1)) * _SPAN_UNITS[m.group(2) or "ms"]
        if not math.isfinite(value) or value > 86_400e9:
            raise TuneError("--span", f"{part!r} is over a day")
        out.append(int(round(value)))
    if out[1] <= out[0]:
        raise TuneError("--span", f"{text!r}: the end must be after the start")
    return out[0], out[1]


#: ``--latency-of`` kinds and the replay's ``latency_of`` key each sets.
LATENCY_OF_KINDS = {"port": "port", "addr": "address", "dscp": "dscp", "size": "size"}


def parse_latency_of(text: str) -> dict[str, Any]:
    """``port:5000``, ``addr:10.0.0.2``, ``dscp:46``, ``size:64-300`` (several
    joined by ``,`` must all match) as the replay's ``latency_of`` table."""
    out: dict[str, Any] = {}
    usage = "use port:5000, addr:10.0.0.2, dscp:46 or size:64-300 (several joined by ,)"
    for item in text.split(","):
        kind, sep, value = item.strip().partition(":")
        kind, value = kind.strip().lower(), value.strip()
        if not sep or kind not in LATENCY_OF_KINDS or not value:
            raise TuneError("--latency-of", f"cannot read {item.strip()!r}: {usage}")
        key = LATENCY_OF_KINDS[kind]
        if key in out:
            raise TuneError("--latency-of", f"{kind} is given twice in {text!r}")
        if kind in ("port", "dscp"):
            top = 65_535 if kind == "port" else 63
            if not value.isdigit() or int(value) > top:
                raise TuneError("--latency-of", f"{kind} {value!r}: a whole number from 0 to {top}")
            out[key] = int(value)
        elif kind == "addr":
            try:
                out[key] = str(ipaddress.ip_address(value))
            except ValueError:
                raise TuneError(
                    "--latency-of", f"addr {value!r} is not an IPv4 or IPv6 address"
                ) from None
        else:
            m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", value)
            if not m or int(m.group(1)) > int(m.group(2)) or int(m.group(2)) > 65_535:
                raise TuneError(
                    "--latency-of",
                    f"size {value!r}: LOW-HIGH frame lengths in bytes, LOW <= HIGH <= 65535 "
                    "(as the capture records them, without FCS)",
                )
            out[key] = [int(m.group(1)), int(m.group(2))]
    return out


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
    mbps = _link_mbps(driver, chip)
    if mbps >= 10_000:
        raise TuneError(
            "--mix",
            f"the built-in mixes are 1 GbE workloads; for {driver} ({mbps // 1000} Gb/s) give "
            f"--capture FILE or a scenario file with {mbps // 1000} Gb/s links",
        )
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
        scen = inputs.loads_toml(inputs.read_text(path, "scenario file"), "scenario file", path)
    except inputs.InputError as err:
        raise TuneError("SCENARIO", str(err)) from None
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
        # A replay that the run ends before (or that has no frames) is said.
        notes=cap.replay_warnings(scen, folder),
    )


#: Application kinds that measure a latency.
LATENCY_APPS = ("ping", "rpc", "rpc_open", "udp_sink", "netpipe")


def _measures_latency(workload: Workload) -> bool:
    apps = [a for a in workload.scenario.get("apps", []) if isinstance(a, dict)]
    if workload.app is not None:
        apps = [a for a in apps if a.get("name") == workload.app]
    return any(a.get("kind") in LATENCY_APPS for a in apps)
