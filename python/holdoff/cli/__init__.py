"""The ``holdoff`` command line: a thin layer over the library.

One module per command group (``run``, ``explain``, ``collect``, ``tune``, ``misc``,
``bench``, ``sweep``, ``battery``, ``results``, ``reproduce``, ``experiments``,
``examples``, ``calibrate``, ``replay_trace``); what they share is in
:mod:`holdoff.cli.common`.
Importing this package registers every command on :data:`app`, in the order
``holdoff -h`` lists them.

Exit codes: 0 success, 1 the simulation failed or the results could not be
written, 2 a usage error, a missing file or an invalid scenario, 130
interrupted (Ctrl-C), 143 stopped by SIGTERM (handled as Ctrl-C). With
``--json`` stdout carries only JSON.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from holdoff.cli.common import BENCH_SCENARIO, app
from holdoff.inputs import InputError, printable
from holdoff.interrupt import sigterm_as_interrupt

#: The command modules, in the order ``holdoff -h`` lists their commands
#: (importing a module registers its commands on ``app``).
COMMAND_MODULES = (
    "run",
    "explain",
    "collect",
    "tune",
    "misc",
    "bench",
    "sweep",
    "battery",
    "results",
    "reproduce",
    "experiments",
    "examples",
    "calibrate",
    "replay_trace",
)
for _module in COMMAND_MODULES:
    importlib.import_module(f"holdoff.cli.{_module}")


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the CLI with ``argv`` (default: ``sys.argv[1:]``) and returns the exit code."""
    args = list(argv) if argv is not None else sys.argv[1:]
    # SIGTERM stops a command as Ctrl-C does (workers ended, results kept); exit 143.
    with sigterm_as_interrupt() as signals:
        try:
            app(args=args, prog_name="holdoff")
        except InputError as err:
            # A safety net: every command checks its inputs itself, naming the flag.
            print(f"error: {printable(str(err))}", file=sys.stderr)
            return signals.exit_code(2)
        except SystemExit as exit_:
            code = exit_.code
            if code is None:
                return 0
            if isinstance(code, int):
                return signals.exit_code(code)
            print(code, file=sys.stderr)
            return signals.exit_code(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["BENCH_SCENARIO", "app", "main"]
