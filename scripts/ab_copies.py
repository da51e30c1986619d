"""Compare two builds of a benchmark program, each run from several copies.

On the development machine two byte-identical copies of one binary ran 1.2x
apart for as long as the first stayed in the page cache (BENCHMARKS.md,
fifth round): where a file's pages landed, not its contents, set the speed.
A before/after ratio taken from one file a side can be that trap's doing.
This script copies each program to ``--copies`` fresh files, runs them
alternated (``a1 b1 a2 b2 ...``) for ``--rounds`` rounds, reads one figure
from each run's output, and prints each side's median and the median of the
pair ratios ``b / a``.

Usage::

    python scripts/ab_copies.py BEFORE AFTER [--copies 4] [--rounds 5] \
        [--pattern REGEX] -- ARGS...

``ARGS`` are passed to both programs. ``--pattern`` is a regular expression
whose first group is the figure (default: the ``bench_hosts`` example's
``12.345 M packets/s``; its runs print one line each, and the median of a
run's figures is taken). A higher figure is faster.

Example (the run loop at 64 hosts, 50 ms simulated, one run a call)::

    cargo build --release -p holdoff-core --example bench_hosts
    cp target/release/examples/bench_hosts /tmp/after
    # ... build the other revision, copy it to /tmp/before ...
    python scripts/ab_copies.py /tmp/before /tmp/after -- 64 50 1
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_PATTERN = r"([0-9]+(?:\.[0-9]+)?) M packets/s"


def figure(output: str, pattern: re.Pattern[str]) -> float:
    """The median of every match of ``pattern``'s first group in ``output``.

    Raises ``ValueError`` naming the pattern when nothing matches.
    """
    found = [float(m.group(1)) for m in pattern.finditer(output)]
    if not found:
        raise ValueError(f"no figure matching {pattern.pattern!r} in the output:\n{output}")
    return statistics.median(found)


def summarise(a: list[float], b: list[float]) -> dict[str, float]:
    """Each side's median and the median pair ratio ``b / a`` (pairs in run order)."""
    if not a or len(a) != len(b):
        raise ValueError("need the same, non-zero number of runs on both sides")
    ratios = [y / x for x, y in zip(a, b, strict=True)]
    return {
        "a_median": statistics.median(a),
        "b_median": statistics.median(b),
        "ratio_median": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
    }


def copies(program: Path, n: int, where: Path, tag: str) -> list[Path]:
    """``n`` fresh copies of ``program`` in ``where``, executable."""
    out = []
    for i in range(n):
        dst = where / f"{tag}{i + 1}-{program.name}"
        shutil.copy2(program, dst)
        out.append(dst)
    return out


def run_one(cmd: list[str], pattern: re.Pattern[str]) -> float:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr}")
    return figure(done.stdout, pattern)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog="arguments after -- go to both programs"
    )
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--copies", type=int, default=4, help="copies of each program (1 to 16)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds over all copies (1 to 100)")
    ap.add_argument("--pattern", default=DEFAULT_PATTERN, help="regex; group 1 is the figure")
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after "--" goes to the programs, unparsed.
    cut = argv.index("--") if "--" in argv else len(argv)
    ns = ap.parse_args(argv[:cut])
    ns.args = argv[cut + 1 :]
    for side in (ns.before, ns.after):
        if not side.is_file():
            ap.error(f"{side} is not a file; give the two programs to compare")
    if not 1 <= ns.copies <= 16:
        ap.error(f"--copies must be 1 to 16; got {ns.copies}")
    if not 1 <= ns.rounds <= 100:
        ap.error(f"--rounds must be 1 to 100; got {ns.rounds}")
    try:
        pattern = re.compile(ns.pattern)
    except re.error as e:
        ap.error(f"--pattern is not a regular expression: {e}")
    if pattern.groups < 1:
        ap.error("--pattern needs a group around the figure, e.g. '([0-9.]+) M packets/s'")
    a: list[float] = []
    b: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ab-copies-") as tmp:
        where = Path(tmp)
        ca = copies(ns.before, ns.copies, where, "a")
        cb = copies(ns.after, ns.copies, where, "b")
        for r in range(ns.rounds):
            for pa, pb in zip(ca, cb, strict=True):
                a.append(run_one([str(pa), *ns.args], pattern))
                b.append(run_one([str(pb), *ns.args], pattern))
            print(f"round {r + 1}/{ns.rounds}: before {a[-ns.copies :]} after {b[-ns.copies :]}")
    s = summarise(a, b)
    print(
        f"before median {s['a_median']:.4g}, after median {s['b_median']:.4g}; "
        f"after/before per pair: median {s['ratio_median']:.3f} "
        f"[{s['ratio_min']:.3f}-{s['ratio_max']:.3f}] over {len(a)} pairs "
        f"({ns.copies} copies a side)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
