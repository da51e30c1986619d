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

A ``"package.module:Class"`` path is imported from Python's path, else from
the scenario file's folder, else from the working directory, with no
``PYTHONPATH`` needed (:func:`import_classes`); a module that is in none of
them is a :class:`~holdoff.ScenarioError` that names the field and the
folders looked in.
"""

from __future__ import annotations

import importlib
import os
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from holdoff._core import ScenarioError, SimulationError

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


# -- finding the classes a scenario names ---------------------------------------------


def class_fields(data: Any, field: str = "") -> Iterator[tuple[str, str]]:
    """``(field, class path)`` of every ``kind = "python"`` table in a parsed scenario."""
    if isinstance(data, Mapping):
        if data.get("kind") == "python" and isinstance(data.get("class"), str):
            yield f"{field}.class".lstrip("."), data["class"]
        for key, value in data.items():
            yield from class_fields(value, f"{field}.{key}".lstrip("."))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from class_fields(value, f"{field}[{i}]")


def import_classes(
    text: str,
    base_dir: str | os.PathLike[str] | None = None,
    given: Mapping[str, type] | None = None,
) -> dict[str, type]:
    """The classes of the scenario's ``"package.module:Class"`` paths (those
    not in ``given``), imported from Python's path, else the scenario's folder
    ``base_dir``, else the working directory. The folder a module was found in
    stays on ``sys.path``, as ``PYTHONPATH`` would have put it, so that the
    module's own imports keep working.

    A path without ``:`` and a module without the class are left to the core,
    which names them. Raises :class:`~holdoff.ScenarioError` (naming the field
    and where it looked) when the module is in none of those places or fails
    to import.
    """
    if '"python"' not in text and "'python'" not in text:
        return {}
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}  # the core reports where the TOML is broken
    folders = [Path(base_dir).resolve()] if base_dir is not None else []
    folders.append(Path.cwd())
    found: dict[str, type] = {}
    for field, path in class_fields(data):
        module, sep, name = path.partition(":")
        if (given and path in given) or path in found or not (sep and module and name):
            continue
        cls = getattr(_import(module, field, folders), name, None)
        if isinstance(cls, type):
            found[path] = cls
    return found


def _missing(module: str, err: ModuleNotFoundError) -> bool:
    """Whether ``err`` says ``module`` itself (or its package) is not there."""
    return bool(err.name) and (module == err.name or module.startswith(f"{err.name}."))


def _import(module: str, field: str, folders: list[Path]) -> Any:
    def failed(err: BaseException) -> ScenarioError:
        error = ScenarioError(
            f"invalid scenario field `{field}`: cannot import {module!r}: "
            f"{type(err).__name__}: {err}"
        )
        error.field = field
        return error

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if not _missing(module, err):
            raise failed(err) from err
        absent = err.name or module
    except Exception as err:  # the module's own code failed
        raise failed(err) from err
    for folder in folders:
        if str(folder) in sys.path:
            continue
        sys.path.append(str(folder))
        importlib.invalidate_caches()
        try:
            return importlib.import_module(module)
        except ModuleNotFoundError as err:
            sys.path.remove(str(folder))
            if not _missing(module, err):
                raise failed(err) from err
        except Exception as err:
            raise failed(err) from err
    places = [f"in the scenario's folder {folders[0]}"] * (len(folders) > 1)
    places.append(f"in the working directory {folders[-1]}")
    error = ScenarioError(
        f"invalid scenario field `{field}`: cannot import {module!r}: no module {absent!r} "
        f"on Python's path (installed packages), {' or '.join(places)}; "
        f"put {absent!r} in one of those folders or install it"
    )
    error.field = field
    raise error
