"""Moderation algorithms written in Python, run inside the simulation.

Subclass :class:`Moderator`, then name the class in a scenario::

    [hosts.nics.moderation]
    kind = "python"
    class = "mypackage.mymodule:HalfRate"   # or a key of run(..., moderators=)
    params = { floor_per_s = 2000 }          # keyword arguments of __init__

One instance is made per interrupt vector. ``initial()`` gives the register
values written at interface up; ``on_sample(sample)`` is called at every
invocation (``invocation`` = ``"per_interrupt"``, ``"per_poll"``,
``"periodic"`` with ``period_us``, or ``"never"``) with the traffic since the
previous call, and returns ``None`` (keep the registers) or a dict of new
register values in hardware units: ``itr_256ns`` (ITR, 256 ns units),
``eitr_us`` (82576+ EITR interval, µs), ``rdtr_1024ns``, ``radv_1024ns``,
``tidv_1024ns``, ``tadv_1024ns`` (1.024 µs units).

If the class misbehaves (raises, returns another type, an unknown key or a
value out of range) the run stops at that moment and
:class:`ModeratorError` is raised; its ``result`` holds the report of the run
up to then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from holdoff._core import SimulationError

REGISTER_KEYS = (
    "itr_256ns",
    "eitr_us",
    "rdtr_1024ns",
    "radv_1024ns",
    "tidv_1024ns",
    "tadv_1024ns",
)


@dataclass(frozen=True)
class Sample:
    """Counters of one interrupt vector since the previous call."""

    now_ns: int
    rx_packets: int
    rx_bytes: int
    tx_packets: int
    tx_bytes: int
    interrupts: int


class Moderator:
    """Base class of Python moderation algorithms (override what you need)."""

    name: ClassVar[str] = "python"
    invocation: ClassVar[str] = "per_interrupt"
    period_us: ClassVar[int] = 2_000_000

    def initial(self) -> dict[str, int] | None:
        """Register values written at interface up (None: all zero)."""
        return None

    def on_sample(self, sample: Sample) -> dict[str, int] | None:
        """New register values, or None to keep the current ones."""
        return None


class ModeratorError(SimulationError):
    """A Python moderation algorithm misbehaved; ``result`` has the partial run."""

    def __init__(self, message: str, result: Any) -> None:
        super().__init__(message)
        self.result = result
