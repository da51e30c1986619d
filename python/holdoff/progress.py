"""The progress line of a long ``holdoff run``: simulated time reached, speed
(simulated seconds per wall second) and ETA, on stderr.

Simplifies: the ETA assumes the speed so far holds for the rest of the run.
Units: simulated time in ns in, shown in ms; wall time in s.
"""

from __future__ import annotations

import sys
import time


class ProgressLine:
    """One updating line on stderr: simulated time, speed and ETA of a run.

    On a terminal the line is rewritten in place; elsewhere (``--progress``
    into a file or pipe) a new line is written about once a second.
    """

    def __init__(self, terminal: bool) -> None:
        self.started = time.perf_counter()
        self.terminal = terminal
        self.shown = False
        self.last_line = 0.0

    def __call__(self, now_ns: int, end_ns: int, events: int) -> None:
        wall = max(time.perf_counter() - self.started, 1e-9)
        if wall < 0.5:
            return  # short runs show nothing
        speed = now_ns / 1e9 / wall  # simulated seconds per wall second
        eta = (end_ns - now_ns) / 1e9 / speed if speed > 0 else float("inf")
        line = (
            f"t = {now_ns / 1e6:,.1f} / {end_ns / 1e6:,.1f} ms simulated "
            f"({100 * now_ns / max(end_ns, 1):.0f}%), {speed:.3g}x real time, "
            f"{events:,} events, ETA {format_duration(eta)}"
        )
        if self.terminal:
            sys.stderr.write("\r" + line + "\x1b[K")
            self.shown = True
        elif wall - self.last_line >= 1.0 or not self.last_line:
            sys.stderr.write(line + "\n")
            self.last_line = wall
        sys.stderr.flush()

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.shown = False


def format_duration(seconds: float) -> str:
    """``3 s``, ``2 m 05 s``, or ``?`` for an unknown (infinite) time."""
    if seconds == float("inf"):
        return "?"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} m {secs:02d} s" if minutes else f"{secs} s"
