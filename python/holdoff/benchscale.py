"""The scaling benchmark behind ``holdoff bench --hosts N``.

A scenario (by default the packaged bench scenario: 64-byte frames at 1 Gb/s
line rate into one host with the full model: NIC delay timers, throttle,
host costs, NAPI) is replicated into N independent copies: every host,
generator, link and application is repeated with its name suffixed by the
copy's index, so the copies share nothing but the event queue. Each host
count runs in a child process of its own, so that its peak resident memory
is its own (a later, smaller run does not inherit an earlier one's peak).

Reported per host count: simulated packets per wall-clock second (best and
median of the repeats), events per simulated packet, the event queue's peak
length, and the child's peak resident set size (``VmHWM`` on Linux) next to
its resident size just before the first run (the interpreter and libraries),
so that ``peak - base`` is what the simulated hosts cost.

Units: times [s], memory [bytes], rates [per wall-clock second].
"""

from __future__ import annotations

import copy
import json
import statistics
import subprocess
import sys
import tomllib
from typing import Any

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
    """Child process: run the scenario text from stdin ``repeat`` times and
    print the perf figures of every run and the memory figures as JSON."""
    repeat = int(argv[0])
    text = sys.stdin.read()
    from holdoff import _core

    base = _rss_bytes("VmRSS")
    runs = []
    for _ in range(repeat):
        try:
            _report, perf, _aborted = _core.run_toml(text)
        except (_core.ScenarioError, _core.SimulationError) as err:
            sys.stdout.write(json.dumps({"error": str(err)}) + "\n")
            return 1
        runs.append(dict(perf))
    out = {"runs": runs, "peak_rss_bytes": _rss_bytes("VmHWM"), "base_rss_bytes": base}
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


def measure(text: str, hosts: int, repeat: int, duration_ms: int | None) -> dict[str, Any]:
    """Run the scenario replicated over ``hosts`` hosts ``repeat`` times in
    a child process; the row of the report for that host count."""
    scenario = replicate(text, hosts, duration_ms)
    proc = subprocess.run(
        [sys.executable, "-m", "holdoff.benchscale", str(repeat)],
        input=scenario,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        out = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise BenchError(
            f"the benchmark child for {hosts} hosts failed (exit {proc.returncode}): "
            f"{proc.stderr.strip()[-2000:]}"
        ) from None
    if "error" in out:
        raise BenchError(f"{hosts} hosts: {out['error']}")
    runs: list[dict[str, Any]] = out["runs"]

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
        "peak_queue_len": max(int(r["peak_queued_events"]) for r in runs),
        "peak_rss_bytes": int(out["peak_rss_bytes"]),
        "base_rss_bytes": int(out["base_rss_bytes"]),
    }


def main() -> None:
    sys.exit(child_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
