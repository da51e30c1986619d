"""The scaling benchmark behind ``holdoff bench --hosts N``.

A scenario (by default the packaged bench scenario: 64-byte frames at 1 Gb/s
line rate into one host with the full model: NIC delay timers, throttle,
host costs, NAPI) is replicated into N independent copies: every host,
generator, link and application is repeated with its name suffixed by the
copy's index, so the copies share nothing but the event queue. Each host
count runs in a child process of its own, so that its peak resident memory
is its own (a later, smaller run does not inherit an earlier one's peak).

Every run does the same work: the simulated time given is the largest
count's, and a smaller count simulates as much longer as it has fewer hosts.
The counts are measured in interleaved rounds: every child stays up, and
each round runs every count once (in an order rotated each round), so that
a drift of the machine's speed during the call moves all counts of a round
alike. The cost of a count is the median over rounds of the round's ratio
(wall time per packet against the first count of the same round), with its
range; medians of whole separate runs moved 30 % between two calls
(BENCHMARKS.md, sixth sitting).

Reported per host count: simulated packets per wall-clock second (best and
median of the repeats), the cost against the first count, events per
simulated packet, the event queue's peak length, and the child's peak
resident set size (``VmHWM`` on Linux) next to its resident size just before
the first run (the interpreter and libraries), so that ``peak - base`` is
what the simulated hosts cost.

Units: times [s], memory [bytes], rates [per wall-clock second].
"""

from __future__ import annotations

import copy
import json
import statistics
import subprocess
import sys
import tomllib
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import tomli_w

# Largest host count accepted (the core indexes hosts, ports and generators
# with 16 bits; two link endpoints per copy).
MAX_HOSTS = 4096
#: Most repeats of one measurement (``--repeat``): the median of more adds nothing.
MAX_REPEAT = 100
#: Longest simulated time of one bench run [ms] (``--duration-ms``): ten minutes.
MAX_DURATION_MS = 600_000
#: Most worker counts one ``bench --sweep`` compares (``--workers 1,2,...``).
MAX_WORKER_COUNTS = 16


class BenchError(Exception):
    """A scaling benchmark could not run (bad scenario, child failure)."""


def check_bench_options(repeat: int, duration_ms: int | None) -> None:
    """Refuses (``ValueError`` naming the flag) a repeat count or simulated
    time above its limit (:data:`MAX_REPEAT`, :data:`MAX_DURATION_MS`)."""
    if not 1 <= repeat <= MAX_REPEAT:
        raise ValueError(f"--repeat must be between 1 and {MAX_REPEAT}; got {repeat}")
    if duration_ms is not None and not 1 <= duration_ms <= MAX_DURATION_MS:
        raise ValueError(
            f"--duration-ms must be between 1 and {MAX_DURATION_MS:,} (ten minutes simulated); "
            f"got {duration_ms:,}"
        )


def parse_worker_counts(text: str, most: int) -> list[int]:
    """``--workers 1,2`` of ``bench --sweep``: each count 1..``most``, at most
    :data:`MAX_WORKER_COUNTS` of them; ``ValueError`` naming the flag."""
    try:
        counts = [int(w) for w in text.split(",") if w.strip()]
    except ValueError:
        raise ValueError(f"--workers must be comma-separated integers, got {text[:60]!r}") from None
    if not counts or len(counts) > MAX_WORKER_COUNTS:
        raise ValueError(f"--workers must list 1 to {MAX_WORKER_COUNTS} worker counts")
    bad = [n for n in counts if not 1 <= n <= most]
    if bad:
        raise ValueError(
            f"--workers counts must be between 1 and {most} (four per core); got {bad[0]}"
        )
    return counts


def parse_hosts(text: str) -> list[int]:
    """``"1,16,64"`` -> ``[1, 16, 64]``; raises ``ValueError`` with a message
    naming the accepted form."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError(f"--hosts must list host counts, e.g. 1,16,64; got {text!r}")
    counts: list[int] = []
    for item in items:
        try:
            n = int(item)
        except ValueError:
            raise ValueError(
                f"--hosts must be comma-separated integers, e.g. 1,16,64; got {text!r}"
            ) from None
        if not 1 <= n <= MAX_HOSTS:
            raise ValueError(f"--hosts values must be between 1 and {MAX_HOSTS}; got {n}")
        counts.append(n)
    return counts


def _rename(value: Any, names: dict[str, str]) -> Any:
    """``value`` with every string that names a host, a generator or a
    ``host.nic`` endpoint replaced by the copy's name."""
    if isinstance(value, str):
        if value in names:
            return names[value]
        head, dot, tail = value.partition(".")
        if dot and head in names:
            return f"{names[head]}.{tail}"
        return value
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _rename(v, names) for k, v in value.items()}
    return value


def replicate(text: str, hosts: int, duration_ms: int | None = None) -> str:
    """The scenario ``text`` with its hosts, generators, links and
    applications repeated ``hosts`` times (names suffixed ``-0``, ``-1``,
    ...), optionally with ``duration_ms`` replaced."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise BenchError(f"the scenario is not valid TOML: {err}") from None
    if duration_ms is not None:
        doc["duration_ms"] = duration_ms
    tables = ("hosts", "generators", "links", "apps")
    originals = {key: doc.get(key, []) for key in tables}
    own = [t.get("name") for key in ("hosts", "generators") for t in originals[key]]
    for key in tables:
        doc[key] = []
    for i in range(hosts):
        names = {n: f"{n}-{i}" for n in own if isinstance(n, str)}
        for key in tables:
            for table in originals[key]:
                t = copy.deepcopy(table)
                if key == "apps" and isinstance(t.get("name"), str):
                    t["name"] = f"{t['name']}-{i}"
                doc[key].append(_rename(t, names))
    for key in tables:
        if not doc[key]:
            del doc[key]
    return tomli_w.dumps(doc)


def _rss_bytes(field: str) -> int:
    """A memory figure of this process from ``/proc/self/status`` [bytes]
    (``VmHWM``: peak resident, ``VmRSS``: resident now); 0 where absent."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    if field == "VmHWM":
        import resource

        # Linux reports kilobytes; macOS bytes.
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)
    return 0


def child_main(argv: list[str]) -> int:
    """Child process (``serve``): read the scenario text (one JSON string on
    the first line of stdin), say it is ready with its resident size, then
    run it once per ``run`` line, printing that run's perf figures, until
    ``quit``, which prints the peak resident size. One JSON object a line."""
    if argv != ["serve"]:
        sys.stderr.write("usage: python -m holdoff.benchscale serve\n")
        return 2
    text = json.loads(sys.stdin.readline())
    from holdoff import _core

    def say(obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    say({"ready": True, "base_rss_bytes": _rss_bytes("VmRSS")})
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            break
        try:
            _report, perf, _aborted = _core.run_toml(text)
        except (_core.ScenarioError, _core.SimulationError) as err:
            say({"error": str(err)})
            return 1
        say({"perf": dict(perf)})
    say({"peak_rss_bytes": _rss_bytes("VmHWM")})
    return 0


class _Child:
    """One host count's child process (``child_main``), kept up for every
    round."""

    def __init__(self, hosts: int, scenario: str) -> None:
        self.hosts = hosts
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "holdoff.benchscale", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._send(json.dumps(scenario))
        self.base_rss = int(self._answer("ready")["base_rss_bytes"])
        self.runs: list[dict[str, Any]] = []

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self._fail()

    def _answer(self, key: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        try:
            out: dict[str, Any] = json.loads(line)
        except json.JSONDecodeError:
            self._fail()
        if "error" in out:
            self.close()
            raise BenchError(f"{self.hosts} hosts: {out['error']}")
        if key not in out:
            self._fail()
        return out

    def _fail(self) -> NoReturn:
        self.proc.kill()
        _out, err = self.proc.communicate()
        raise BenchError(
            f"the benchmark child for {self.hosts} hosts failed (exit {self.proc.returncode}): "
            f"{(err or '').strip()[-2000:]}"
        )

    def run(self) -> dict[str, Any]:
        """One run; its perf figures (also kept in ``runs``)."""
        self._send("run")
        perf: dict[str, Any] = self._answer("perf")["perf"]
        self.runs.append(perf)
        return perf

    def finish(self) -> int:
        """Stop the child; its peak resident size [bytes]."""
        self._send("quit")
        peak = int(self._answer("peak_rss_bytes")["peak_rss_bytes"])
        self.proc.communicate()
        return peak

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def round_order(counts: Sequence[int], round_index: int) -> list[int]:
    """The order in which round ``round_index`` runs the host counts: the
    list rotated by the round's index, so that no count is always first."""
    k = round_index % len(counts)
    return list(counts[k:]) + list(counts[:k])


def round_costs(pps: Sequence[Sequence[float]]) -> list[list[float]]:
    """Per round, each count's wall time per packet relative to the first
    count's in the same round: ``pps[r][0] / pps[r][i]`` (packets per wall
    second, so the inverse ratio of the rates)."""
    return [[row[0] / max(v, 1e-9) for v in row] for row in pps]


def equal_work_ms(duration_ms: int, hosts: int, largest: int) -> int:
    """Simulated time [ms] of a run over ``hosts`` hosts that does the work
    of ``duration_ms`` over ``largest`` hosts: ``duration_ms * largest /
    hosts``, rounded up, at most :data:`MAX_DURATION_MS`. A cost per packet
    compares runs of equal work: a one-host run of the 1024-host run's 50 ms
    lasts about 5 ms of wall time, too short to time against a warm-up."""
    return min(-(-duration_ms * largest // hosts), MAX_DURATION_MS)


def measure_counts(
    text: str,
    counts: Sequence[int],
    repeat: int,
    duration_ms: int | None,
    progress: Callable[[int, int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the scenario replicated over each host count, ``repeat`` rounds
    of every count (one child per count, kept up; the order rotated each
    round); one report row per count (with ``duration_ms``, the simulated
    time of its runs). With ``duration_ms`` given it is the largest count's
    simulated time, and every smaller count simulates as much longer as it
    has fewer hosts (:func:`equal_work_ms`), so that every run does the same
    work. ``progress(round, rounds, hosts)`` is called before each run."""
    largest = max(counts)
    durations = [
        None if duration_ms is None else equal_work_ms(duration_ms, n, largest) for n in counts
    ]
    children: list[_Child] = []
    try:
        for n, ms in zip(counts, durations, strict=True):
            children.append(_Child(n, replicate(text, n, ms)))
        pps: list[list[float]] = []
        for r in range(repeat):
            got: dict[int, float] = {}
            for i in round_order(range(len(counts)), r):
                if progress is not None:
                    progress(r, repeat, counts[i])
                got[i] = float(children[i].run()["packets_per_s"])
            pps.append([got[i] for i in range(len(counts))])
        peaks = [c.finish() for c in children]
    finally:
        for c in children:
            c.close()
    costs = round_costs(pps)
    rows = [
        _row(c.hosts, c.runs, peak, c.base_rss, [row[i] for row in costs])
        for i, (c, peak) in enumerate(zip(children, peaks, strict=True))
    ]
    for row, ms in zip(rows, durations, strict=True):
        row["duration_ms"] = ms
    return rows


def _row(
    hosts: int, runs: list[dict[str, Any]], peak: int, base: int, costs: list[float]
) -> dict[str, Any]:
    """The report row of one host count."""

    def best_and_median(key: str, best: Any) -> dict[str, float]:
        values = [float(r[key]) for r in runs]
        return {"best": float(best(values)), "median": float(statistics.median(values))}

    packets = int(runs[0]["sim_packets"])
    events = int(runs[0]["events_processed"])
    return {
        "hosts": hosts,
        "repeat": len(runs),
        "sim_packets": packets,
        "events_processed": events,
        "events_per_packet": events / max(packets, 1),
        "packets_per_s": best_and_median("packets_per_s", max),
        "events_per_s": best_and_median("events_per_s", max),
        "wall_time_s": best_and_median("wall_time_s", min),
        # Wall time per packet against the first count, round by round.
        "cost_vs_first": float(statistics.median(costs)),
        "cost_vs_first_range": [float(min(costs)), float(max(costs))],
        "peak_queue_len": max(int(r["peak_queued_events"]) for r in runs),
        "peak_rss_bytes": peak,
        "base_rss_bytes": base,
    }


def main() -> None:
    sys.exit(child_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
