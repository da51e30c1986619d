"""Moderator specs on the command line: ``KIND[:key=val,...]``,
``file.py:Class[:key=val,...]`` or ``file.c:entry[:key=val,...]``.

One string names a moderation algorithm with its settings, the way
``holdoff replay-trace`` and ``holdoff battery`` take them:

- a built-in kind with fields of its scenario table:
  ``ixgbe:rx_usecs=1``, ``freebsd-aim:enable_aim=2``, ``dim``;
- a Python class in a file, with constructor keyword arguments:
  ``my_aim.py:MyAim:target=8000`` (the file is imported by path, so no
  ``PYTHONPATH`` is needed);
- a C function in a file (``kind = "c"``, docs/models/c-moderators.md), with
  values for its ``params``: ``my_itr.c:my_update_itr:low=10``.

Values are read as TOML values (``1`` an integer, ``1.5`` a float,
``true`` a boolean, anything that is not a TOML value a string). Relative
file paths resolve against ``base`` (the working directory on the command
line); the table a spec gives names the file by its absolute path, so it can
be put into a scenario anywhere.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ModSpecError(ValueError):
    """A moderator spec that cannot be read; the message names the spec and the fix."""


@dataclass(frozen=True)
class ModSpec:
    """One moderator spec, parsed.

    Attributes:
        label: the spec as the user wrote it (for table headers).
        kind: the scenario ``kind`` (``"ixgbe"``, ``"python"``, ``"c"`` ...).
        fields: for built-ins, the table's other fields; for ``python`` and
            ``c``, the keys of the table besides ``params``.
        params: constructor arguments (``python``) or ``params`` (``c``).
        classes: for ``python``: the class keyed by its ``class`` string,
            to pass as ``holdoff.run(..., moderators=spec.classes)``.
    """

    label: str
    kind: str
    fields: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    classes: dict[str, type] = field(default_factory=dict)

    def moderation_table(self) -> dict[str, Any]:
        """The scenario ``moderation`` table (``hosts[].nics[].moderation``) of this spec."""
        table: dict[str, Any] = {"kind": self.kind, **self.fields}
        if self.kind in ("python", "c") and self.params:
            table["params"] = dict(self.params)
        return table


def _value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _settings(spec: str, text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, val = part.partition("=")
        if not sep or not key.strip():
            raise ModSpecError(
                f"moderator spec {spec!r}: setting {part!r} is not key=value "
                "(write e.g. ixgbe:rx_usecs=1 or file.c:entry:low=10,high=20)"
            )
        out[key.strip()] = _value(val.strip())
    return out


def _file_and_rest(spec: str, suffix: str) -> tuple[str, str] | None:
    """``(file, rest)`` when ``spec`` starts with a path ending in ``suffix`` followed by ``:``."""
    marker = f"{suffix}:"
    at = spec.find(marker)
    if at < 0:
        return None
    return spec[: at + len(suffix)], spec[at + len(marker) :]


def parse_moderator(spec: str, base: Path) -> ModSpec:
    """Parse one moderator spec; relative files resolve against ``base``.

    Raises:
        ModSpecError: the spec is malformed, names no entry or class, names a
            file that does not exist, or a Python class that is not in its file.
    """
    spec = spec.strip()
    if not spec:
        raise ModSpecError(
            "empty moderator spec: write KIND[:key=val], file.py:Class or file.c:entry"
        )
    for suffix, kind in ((".c", "c"), (".py", "python")):
        found = _file_and_rest(spec, suffix)
        if found is None:
            if spec.endswith(suffix):
                what = "entry function" if kind == "c" else "class"
                raise ModSpecError(
                    f"moderator spec {spec!r} names no {what}: write {spec}:NAME[:key=val,...]"
                )
            continue
        file, rest = found
        name, _, settings = rest.partition(":")
        name = name.strip()
        if not name:
            raise ModSpecError(f"moderator spec {spec!r}: the name after {file!r}: is empty")
        path = Path(file)
        if not path.is_absolute():
            path = (base / path).resolve()
        if not path.is_file():
            raise ModSpecError(f"moderator spec {spec!r}: file not found: {path}")
        params = _settings(spec, settings)
        if kind == "c":
            return ModSpec(spec, "c", {"source": str(path), "entry": name}, params)
        cls = _load_class(spec, path, name)
        key = f"{path.stem}:{name}"
        return ModSpec(spec, "python", {"class": key}, params, {key: cls})
    kind, _, settings = spec.partition(":")
    kind = kind.strip()
    if not kind or "/" in kind or "." in kind:
        raise ModSpecError(
            f"moderator spec {spec!r}: expected a built-in kind (ixgbe, dim, freebsd-aim ...), "
            "file.py:Class or file.c:entry"
        )
    return ModSpec(spec, kind, _settings(spec, settings))


def _load_class(spec: str, path: Path, name: str) -> type:
    module_name = f"holdoff_modspec_{path.stem}_{abs(hash(str(path))):x}"
    module = sys.modules.get(module_name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise ModSpecError(f"moderator spec {spec!r}: cannot import {path}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as err:
            del sys.modules[module_name]
            raise ModSpecError(
                f"moderator spec {spec!r}: importing {path} failed: {type(err).__name__}: {err}"
            ) from err
    cls = getattr(module, name, None)
    if not isinstance(cls, type):
        raise ModSpecError(f"moderator spec {spec!r}: {path} has no class {name!r}")
    return cls
