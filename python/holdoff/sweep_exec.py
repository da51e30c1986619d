"""Sweep executors: this process, local worker processes, or a Ray cluster.

Each yields (point, metrics) as points finish. Worker processes ignore
SIGINT and take SIGTERM's default action (the parent, not the worker, turns
Ctrl-C or SIGTERM into a stop): when the parent is interrupted it ends every
worker and waits for each to be gone, so none is left running; on Linux a
worker also dies with its parent (a parent killed with SIGKILL). Simplifies:
a point's result is whole or absent; nothing partial crosses back.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from functools import partial
from typing import TYPE_CHECKING, Any

from holdoff import _core
from holdoff.store import Scalar
from holdoff.sweep_metrics import compute_point
from holdoff.sweep_paths import SweepError

if TYPE_CHECKING:
    from holdoff.sweep_paths import SweepPoint


#: What runs one point: its scenario's TOML text in, its flat metrics out (a
#: module-level function, so that process pools and Ray can ship it).
Compute = Callable[[str], dict[str, Scalar]]


def execute(
    pending: list[SweepPoint],
    executor: str,
    workers: int | None,
    address: str | None,
    compute: Compute = compute_point,
) -> Generator[tuple[SweepPoint, dict[str, Scalar]], None, None]:
    """Runs ``pending`` on ``executor``; yields each point with its metrics as it finishes.

    ``compute`` runs one point (default :func:`compute_point`; ``holdoff
    battery`` adds its own metrics). Close the generator (or let an exception
    leave the loop over it) to stop the workers: closing ends every running
    point.
    """
    if not pending:
        return
    if executor == "serial":
        yield from _serial(pending, compute)
    elif executor == "ray":
        yield from _ray(pending, address, compute)
    else:
        yield from _processes(pending, workers, compute)


def _serial(
    pending: list[SweepPoint], compute: Compute
) -> Iterator[tuple[SweepPoint, dict[str, Scalar]]]:
    for point in pending:
        yield point, _guarded(point, partial(compute, point.text))


def _guarded(point: SweepPoint, call: Callable[[], dict[str, Scalar]]) -> dict[str, Scalar]:
    try:
        return call()
    except _core.HoldoffError as err:
        raise _core.SimulationError(f"sweep point {point.index} ({point.label}): {err}") from err


def _processes(
    pending: list[SweepPoint], workers: int | None, compute: Compute
) -> Iterator[tuple[SweepPoint, dict[str, Scalar]]]:
    n = min(workers or os.cpu_count() or 1, len(pending))
    # Workers ignore SIGINT and die of SIGTERM: the parent turns either into
    # a stop and ends them.
    pool = ProcessPoolExecutor(max_workers=n, initializer=worker_signals, initargs=(os.getpid(),))
    try:
        futures: dict[Future[dict[str, Scalar]], SweepPoint] = {
            pool.submit(compute, p.text): p for p in pending
        }
        remaining = set(futures)
        while remaining:
            finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: futures[f].index):
                point = futures[future]
                yield point, _guarded(point, future.result)
    except BaseException:
        # Interrupted (or a point failed): stop the running points now; their
        # results were never stored, so nothing partial is left behind.
        terminate_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def worker_signals(parent: int | None = None) -> None:
    """A worker's signals: SIGINT ignored (Ctrl-C reaches the whole
    foreground group; the parent decides), SIGTERM the default (the worker
    ends at once; a forked worker would otherwise inherit the parent's
    handler and carry on), and on Linux the worker is killed when its parent
    dies (``prctl(PR_SET_PDEATHSIG)``): a parent killed with SIGKILL cannot
    end its workers, and they would otherwise wait forever, reparented to
    init. ``parent``: the parent's pid, to catch a parent that died before
    this ran."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            return
        if parent is not None and os.getppid() != parent:
            os._exit(1)


#: ``PR_SET_PDEATHSIG`` of ``<linux/prctl.h>``: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1


#: How long a stopped worker may take to exit before it is killed [s].
WORKER_EXIT_S = 5.0


def terminate_workers(pool: ProcessPoolExecutor) -> None:
    """Ends every worker process of ``pool`` and waits until each is gone
    (SIGTERM, then SIGKILL for one still alive after :data:`WORKER_EXIT_S`)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(WORKER_EXIT_S)
        if process.is_alive():
            process.kill()
            process.join(WORKER_EXIT_S)


def _ray_get(ray: Any, ref: Any) -> dict[str, Scalar]:
    return dict(ray.get(ref))


def _ray(
    pending: list[SweepPoint], address: str | None, compute: Compute
) -> Iterator[tuple[SweepPoint, dict[str, Scalar]]]:
    try:
        import ray
    except ImportError as err:
        raise SweepError(
            "the ray executor needs Ray: pip install 'holdoff[ray]'", "executor"
        ) from err
    started_here = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started_here = True
    try:
        remote = ray.remote(num_cpus=1)(compute)
        refs = {remote.remote(p.text): p for p in pending}
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                point = refs.pop(ref)
                yield point, _guarded(point, partial(_ray_get, ray, ref))
    finally:
        if started_here:
            ray.shutdown()
