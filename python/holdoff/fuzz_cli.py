"""The command-line fuzzer: hostile inputs where users put them, each run as a user runs it.

:mod:`holdoff.fuzz` mutates scenario fields inside one process; this module
goes where most hostile inputs live: the file system, sizes, text encodings
and every command's file arguments and options. Each case is one real
``python -m holdoff ...`` in a subprocess of its own (own session, own
working folder, stdin from ``/dev/null`` unless the case gives one), with a
wall-time limit (:data:`TIMEOUT_S`), an address-space limit
(:data:`ADDRESS_SPACE_LIMIT_BYTES`, set with ``prlimit`` right after the
start) and a peak-RSS bound read from ``wait4`` (:data:`PEAK_RSS_LIMIT_BYTES`).

Simplification: the address-space limit is 4 GiB, not 1.5: DuckDB (``holdoff
results``) reserves about 3 GiB of address space it never touches; the 1.5 GiB
bound is on resident memory, measured after the case.

Each case is classified (:func:`classify`):

- ``refused``: exit 2 with one ``error:`` line (or the option parser's usage
  box) and no traceback: a clean refusal;
- ``ran``: exit 0, no traceback;
- ``failure``: anything else: a traceback, another exit code, a signal (an
  abort), no exit within the time limit, a peak RSS over the bound, or a raw
  control character (other than tab and newline) in the output, which a name
  from the input could use to forge lines or send terminal escape sequences.

The cases are made by :mod:`holdoff.fuzz_cases`. Kinds of cases (the
``kind`` of each :class:`~holdoff.fuzz_cases.CliCase`): ``file`` (a special or
damaged file in a command's file slot: directory, FIFO, device, symlink loop,
sparse 8 GiB file, UTF-16, invalid UTF-8, BOM, NUL, deep TOML/JSON, damaged
Parquet/JSON, ...), ``set`` (injection and depth in ``--set``), ``option``
(option values at and past their bounds), ``name`` (control characters in
scenario names), ``store`` (damaged result stores), ``size`` (inputs larger
than the model can hold) and ``mutation`` (a valid file with random bytes
changed, for ``make fuzz``). Deterministic: the same seed gives the same
cases in the same order.
"""

from __future__ import annotations

import os
import random
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from holdoff.fuzz_cases import CliCase, all_cases

TIMEOUT_S = 20.0
"""A case with no exit after this [s] of wall time counts as a hang."""

ADDRESS_SPACE_LIMIT_BYTES = 4 * 2**30
"""Address-space limit of each case's process [bytes] (a safety net; see the module doc)."""

PEAK_RSS_LIMIT_BYTES = 1536 * 2**20
"""Largest peak resident memory of a case [bytes]."""

# C0 controls but tab and newline, DEL and C1 controls (UTF-8 encoded). JSON
# output must escape only C0 controls (DEL and C1 are valid JSON text).
_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
_CONTROL_JSON = re.compile(rb"[\x00-\x08\x0b-\x1f]")


@dataclass
class CliOutcome:
    """What one case did."""

    case: CliCase
    result: str  # "refused" | "ran" | "failure"
    detail: str = ""
    seconds: float = 0.0
    peak_rss_bytes: int = 0
    code: int | None = None
    stdout: str = ""  # the first 64 KiB of each stream, decoded
    stderr: str = ""


@dataclass
class CliReport:
    """Counts over a run of the command-line fuzzer, and every failure."""

    counts: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: list[CliOutcome] = field(default_factory=list)
    peak_rss_bytes: int = 0
    slowest_s: float = 0.0

    def add(self, outcome: CliOutcome) -> None:
        self.counts[outcome.result] += 1
        self.by_kind[(outcome.case.kind, outcome.result)] += 1
        self.peak_rss_bytes = max(self.peak_rss_bytes, outcome.peak_rss_bytes)
        self.slowest_s = max(self.slowest_s, outcome.seconds)
        if outcome.result == "failure":
            self.failures.append(outcome)

    def line(self) -> str:
        c = self.counts
        return (
            f"{sum(c.values())} command-line cases: {c['refused']} refused cleanly (exit 2), "
            f"{c['ran']} ran (exit 0), {c['failure']} failures; peak RSS "
            f"{self.peak_rss_bytes / 2**20:,.0f} MiB, slowest case {self.slowest_s:.1f} s"
        )


# ------------------------------------------------------------------ running


def classify(
    code: int | None,
    stdout: bytes,
    stderr: bytes,
    *,
    timed_out: bool,
    peak_rss_bytes: int,
    json_output: bool = False,
) -> tuple[str, str]:
    """The result of one case: (``refused`` | ``ran`` | ``failure``, detail)."""
    err = stderr.decode("utf-8", "replace")
    last = next((ln for ln in reversed(err.strip().splitlines()) if ln.strip()), "")
    if timed_out:
        return "failure", f"hang: no exit within {TIMEOUT_S:.0f} s"
    if code is None or code < 0:
        sig = -(code or 0)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else sig
        return "failure", f"killed by signal {name}: {last[:200]}"
    if "Traceback (most recent call last)" in err:
        return "failure", f"traceback (exit {code}): {last[:200]}"
    if peak_rss_bytes > PEAK_RSS_LIMIT_BYTES:
        return "failure", f"peak RSS {peak_rss_bytes / 2**20:,.0f} MiB over the bound"
    for stream, data in (("stdout", stdout), ("stderr", stderr)):
        m = (_CONTROL_JSON if json_output and stream == "stdout" else _CONTROL).search(data)
        if m:
            return "failure", f"raw control character 0x{m.group().hex()} in {stream}"
    if code == 0:
        return "ran", ""
    if code == 2:
        errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
        usage = "Usage: holdoff" in err and "Error" in err
        if len(errors) == 1 or (usage and not errors):
            return "refused", (errors[0] if errors else last)[:200]
        return "failure", f"exit 2 with {len(errors)} error lines: {last[:200]}"
    return "failure", f"exit {code}: {last[:200]}"


def run_case(case: CliCase, workdir: Path) -> CliOutcome:
    """Runs one case in ``workdir`` (made empty first) and classifies it."""
    if workdir.exists():
        shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    out_path, err_path = workdir / ".stdout", workdir / ".stderr"
    started = time.perf_counter()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        stdin: int | None = subprocess.DEVNULL
        in_file = None
        if case.stdin is not None:
            in_file = workdir / ".stdin"
            in_file.write_bytes(case.stdin)
        with open(in_file, "rb") if in_file else open(os.devnull, "rb") as inp:
            stdin = inp.fileno()
            env = {**os.environ, "PYTHONFAULTHANDLER": "1", "COLUMNS": "120"}
            env.pop("FORCE_COLOR", None)
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "holdoff", *case.args],
                    stdin=stdin,
                    stdout=out,
                    stderr=err,
                    cwd=workdir,
                    env=env,
                    start_new_session=True,
                )
            except OSError as e:  # the case itself is impossible (an argument too long)
                return CliOutcome(case, "failure", f"the case cannot start: {e}")
            try:
                limit = (ADDRESS_SPACE_LIMIT_BYTES, ADDRESS_SPACE_LIMIT_BYTES)
                resource.prlimit(proc.pid, resource.RLIMIT_AS, limit)
            except (OSError, ValueError):
                pass  # exited already
            code, rss, timed_out = _wait(proc, started)
    outcome = CliOutcome(case, "failure", seconds=time.perf_counter() - started, peak_rss_bytes=rss)
    stdout, stderr = out_path.read_bytes(), err_path.read_bytes()
    outcome.code = code
    outcome.stdout = stdout[: 64 * 1024].decode("utf-8", "replace")
    outcome.stderr = stderr[: 64 * 1024].decode("utf-8", "replace")
    outcome.result, outcome.detail = classify(
        code,
        stdout,
        stderr,
        timed_out=timed_out,
        peak_rss_bytes=rss,
        json_output="--json" in case.args,
    )
    if case.fifo_kept is not None and not _is_fifo(case.fifo_kept):
        outcome.result = "failure"
        outcome.detail = f"the output FIFO {case.fifo_kept} was replaced by another file"
    shutil.rmtree(workdir, ignore_errors=True)
    return outcome


def _is_fifo(path: str) -> bool:
    try:
        return stat.S_ISFIFO(os.lstat(path).st_mode)
    except OSError:
        return False


def _wait(proc: subprocess.Popen[bytes], started: float) -> tuple[int | None, int, bool]:
    """Waits for ``proc``, killing its session after :data:`TIMEOUT_S`.

    Returns its exit code, its peak RSS [bytes] and whether it hung."""
    timed_out = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > TIMEOUT_S:
            timed_out = True
            _kill_session(proc.pid)
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    _kill_session(proc.pid)  # workers a command left behind
    return code, usage.ru_maxrss * 1024, timed_out


def _kill_session(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def fuzz_cli(
    cases: list[CliCase],
    *,
    jobs: int = 2,
    progress: Callable[[int, int, CliReport], None] | None = None,
) -> CliReport:
    """Runs ``cases`` (``jobs`` at a time) and counts their results."""
    report = CliReport()
    with tempfile.TemporaryDirectory(prefix="holdoff-fuzz-cli-run-") as tmp:
        work = Path(tmp)
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            futures = [pool.submit(run_case, c, work / f"case-{i}") for i, c in enumerate(cases)]
            for done, fut in enumerate(futures, 1):
                report.add(fut.result())
                if progress is not None:
                    progress(done, len(futures), report)
    return report


def select(cases: list[CliCase], n: int, seed: int, skip: tuple[str, ...] = ()) -> list[CliCase]:
    """``n`` of ``cases``: every non-file case, then file cases spread over kinds and slots.

    ``skip``: kinds left out (CI leaves out ``size``, whose cases
    ``tests/test_hostile.py`` runs one by one).
    """
    cases = [c for c in cases if c.kind not in skip]
    fixed = [c for c in cases if c.kind not in ("file", "mutation")]
    files = [c for c in cases if c.kind == "file"]
    rng = random.Random(seed)
    rng.shuffle(files)
    rest = [c for c in cases if c.kind == "mutation"]
    return (fixed + files + rest)[: max(n, 0)] if n < len(cases) else cases


def run(
    n: int,
    seed: int = 1,
    *,
    mutations: int = 0,
    jobs: int = 2,
    skip: tuple[str, ...] = (),
    progress: Callable[[int, int, CliReport], None] | None = None,
) -> CliReport:
    """Makes the inputs, picks ``n`` cases (:func:`select`) plus ``mutations`` and runs them."""
    with tempfile.TemporaryDirectory(prefix="holdoff-fuzz-cli-") as tmp:
        cases = all_cases(Path(tmp), seed=seed, mutations=mutations)
        systematic = [c for c in cases if c.kind != "mutation"]
        chosen = select(systematic, n, seed, skip) + [c for c in cases if c.kind == "mutation"]
        return fuzz_cli(chosen, jobs=jobs, progress=progress)


def print_report(report: CliReport, out: Path | None = None) -> None:
    """Prints every failure, a count per kind, and the summary line."""
    for f in report.failures:
        print(f"FAIL [{f.case.kind}] {f.case.label}: {f.detail}")
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            with open(out / "cli-failures.txt", "a", encoding="utf-8") as h:
                h.write(f"{f.case.label}\t{f.detail}\t{f.case.args!r}\n")
    kinds = sorted({k for k, _ in report.by_kind})
    for kind in kinds:
        parts = [f"{report.by_kind[(kind, r)]} {r}" for r in ("refused", "ran", "failure")]
        print(f"  {kind}: " + ", ".join(parts))
    print(report.line())
