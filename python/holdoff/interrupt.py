"""SIGTERM handled as Ctrl-C: the same stop, the same kept results, exit status 143.

A service manager, ``timeout`` or ``kill`` ends a process with SIGTERM; by
default Python then dies at once, leaving a sweep's worker processes running
(reparented to init) and its progress unsaid. Inside
:func:`sigterm_as_interrupt` the first SIGTERM raises :class:`Terminated`, a
``KeyboardInterrupt``, wherever the main thread is (the core's run loop
checks for signals every few milliseconds), so every path that handles Ctrl-C
handles it: workers ended and waited for, finished points kept in the store,
the partial summary printed. The command line then exits with 143 (128 +
SIGTERM, the shell's convention) instead of Ctrl-C's 130.

Simplifies: a second SIGTERM while the first is being handled is recorded
but raises nothing, so the clean-up (ending workers, at most a few seconds)
runs to its end; SIGKILL is the way to stop without it. Worker processes
take SIGTERM's default action (:func:`holdoff.sweep_exec.worker_signals`).
Main thread only (Python runs signal handlers there).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

#: Exit status of a command stopped by SIGTERM (128 + 15).
EXIT_SIGTERM = 128 + signal.SIGTERM
#: Exit status of a command stopped by Ctrl-C (128 + 2).
EXIT_SIGINT = 128 + signal.SIGINT


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived; handled wherever Ctrl-C is."""


@dataclass
class SignalState:
    """What :func:`sigterm_as_interrupt` saw: how many SIGTERMs arrived."""

    terminated: int = 0

    def exit_code(self, code: int) -> int:
        """``code`` as the process should exit: a failing status after a
        SIGTERM becomes :data:`EXIT_SIGTERM`; anything else is unchanged."""
        return EXIT_SIGTERM if self.terminated and code != 0 else code


@contextmanager
def sigterm_as_interrupt() -> Iterator[SignalState]:
    """Within the block, SIGTERM raises :class:`Terminated` (once) in the main thread.

    The previous handler is restored on leaving. Outside the main thread
    (where handlers cannot be installed) the block runs unchanged.
    """
    state = SignalState()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    owner = os.getpid()

    def handler(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:
            # A forked worker that has not reset its handlers yet: die as
            # SIGTERM's default would, with no traceback.
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        state.terminated += 1
        if state.terminated == 1:
            raise Terminated(f"terminated by signal {signum} (SIGTERM)")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield state
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = [
    "EXIT_SIGINT",
    "EXIT_SIGTERM",
    "SignalState",
    "Terminated",
    "sigterm_as_interrupt",
]
