"""Sweep field paths: parsing, setting a path in a scenario, and reading two spellings as one.

A field path is names and list indices (``hosts[0].nics[0].moderation.itr_per_s``);
``[*]`` applies to every element of a list. :func:`concrete_paths` resolves a
path against a scenario (``[*]`` becomes each index), so that two spellings
of one field (``generators[0].rate_pps`` and ``generators[*].rate_pps``) are
seen to name the same place. Simplifies: a path names a place in the dict the
scenario file reads into; nothing here knows what the fields mean. No units.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Literal

import tomli_w

from holdoff import inputs
from holdoff.store import Scalar, canonical_json

_PATH_RE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_-]*(\[(\d+|\*)\])*(\.[A-Za-z_][A-Za-z0-9_-]*(\[(\d+|\*)\])*)*"
)
_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*|\[(?:\d+|\*)\]")
_PATH_HELP = (
    "a field path is names and list indices, e.g. hosts[0].nics[0].moderation.itr_per_s, "
    "generators[0].rate_pps or hosts[*].profile"
)


class SweepError(ValueError):
    """A sweep file or one of its points is not valid.

    ``field`` names the sweep field or parameter path at fault, when known.
    """

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


#: The longest field path accepted [characters] (a scenario's deepest real
#: path is under 100; a longer one is a mistake, and each segment is a step
#: of recursion when it is set).
MAX_PATH_CHARS = 512

# -- field paths ------------------------------------------------------------------

Token = tuple[Literal["key"], str] | tuple[Literal["index"], int] | tuple[Literal["all"], None]


def parse_path(path: str) -> list[Token]:
    """Splits ``hosts[0].nics[*].name`` into key, index and all-elements tokens."""
    check_path(path, "field path")
    tokens: list[Token] = []
    for raw in _TOKEN_RE.findall(path):
        if raw == "[*]":
            tokens.append(("all", None))
        elif raw.startswith("["):
            tokens.append(("index", int(raw[1:-1])))
        else:
            tokens.append(("key", raw))
    return tokens


def parse_assignment(text: str) -> tuple[str, Any]:
    """``path=value`` (``holdoff run --set``) as (path, value).

    The path has the sweep syntax (:func:`parse_path`); the value is a TOML
    literal (``8000``, ``true``, ``"e1000-5x"``, ``{ kind = "static" }``, ``[1, 2]``),
    and a bare word that is not one (``e1000-5x``) is read as a string.
    Raises :class:`SweepError` naming the path.
    """
    path, sep, raw = text.partition("=")
    path = path.strip()
    raw = raw.strip()
    if not sep or not path:
        raise SweepError(f"`{text}`: expected path=value, e.g. generators[0].rate_pps=150000")
    check_path(path, path)
    if not raw:
        raise SweepError(f"`{path}`: no value after `=`", path)
    try:
        return path, tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError as err:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:-]*", raw):
            return path, raw
        raise SweepError(f"`{path}`: `{raw}` is not a TOML value ({err})", path) from err


def short_names(paths: Sequence[str]) -> dict[str, str]:
    """A short column name for each field path, unique among ``paths``.

    The last dotted part when that is unique (``hosts[*].nics[0].moderation.itr_per_s``
    -> ``itr_per_s``), else the shortest unique tail (``moderation.itr_per_s``),
    else the whole path.
    """
    parts = {p: p.split(".") for p in paths}
    names: dict[str, str] = {}
    for p in paths:
        for n in range(1, len(parts[p]) + 1):
            tail = ".".join(parts[p][-n:])
            clashes = [q for q in paths if q != p and ".".join(parts[q][-n:]) == tail]
            if not clashes:
                names[p] = tail
                break
        else:
            names[p] = p
    return names


def check_path(path: Any, where: str) -> None:
    """Refuses (:class:`SweepError`) anything that is not a field path."""
    if isinstance(path, str) and len(path) > MAX_PATH_CHARS:
        raise SweepError(
            f"{where}: a field path of {len(path)} characters; the limit is {MAX_PATH_CHARS}",
            path[:40] + "...",
        )
    if not isinstance(path, str) or not _PATH_RE.fullmatch(path):
        shown = path if isinstance(path, str) else repr(path)
        raise SweepError(
            f"{where}: `{shown.encode('unicode_escape').decode()}` is not a field path: "
            f"{_PATH_HELP}",
            str(path),
        )


def _same_place(a: Token, b: Token) -> bool:
    if a[0] == "key" or b[0] == "key":
        return a == b
    # Two list positions: `[*]` is every index, so it meets any index.
    return a[0] == "all" or b[0] == "all" or a[1] == b[1]


def overlap(a: str, b: str) -> bool:
    """Whether field paths ``a`` and ``b`` set the same field or one inside the other.

    ``generators[0].rate_pps`` and ``generators[*].rate_pps`` overlap (two
    spellings of one field), as do ``hosts[0].nics[0].moderation`` and
    ``hosts[*].nics[0].moderation.itr_per_s`` (a table and a field of it);
    ``hosts[0].profile`` and ``hosts[1].profile`` do not.
    """
    ta, tb = parse_path(a), parse_path(b)
    return all(_same_place(x, y) for x, y in zip(ta, tb, strict=False))


def check_distinct(paths: Sequence[str], where: str) -> None:
    """Refuses two of ``paths`` that set one field (:func:`overlap`): the
    later would silently overwrite the earlier, and the table would report a
    value that never ran."""
    for i, a in enumerate(paths):
        for b in paths[i + 1 :]:
            if overlap(a, b):
                raise SweepError(
                    f"{where}: `{a}` and `{b}` set the same field (two spellings of one "
                    f"field, or a table and a field inside it); the later would overwrite "
                    f"the earlier at every point and the table would show a value that never "
                    f"ran: give each field once",
                    b,
                )


def set_path(doc: dict[str, Any], path: str, value: Any) -> None:
    """Sets ``path`` in the scenario dict ``doc`` to (a copy of) ``value``, in place.

    A missing last name (or missing tables on the way) is created; a list
    index must exist in ``doc``. Raises :class:`SweepError` naming the path.
    """
    _assign(doc, parse_path(path), value, "", path)


def _assign(node: Any, tokens: list[Token], value: Any, done: str, path: str) -> None:
    kind, arg = tokens[0]
    last = len(tokens) == 1
    if kind == "key":
        assert isinstance(arg, str)
        here = f"{done}.{arg}" if done else arg
        if not isinstance(node, dict):
            raise SweepError(
                f"`{path}`: `{done}` is a {_type_name(node)}, not a table, so it has no `{arg}`",
                path,
            )
        if last:
            node[arg] = copy.deepcopy(value)
            return
        if arg not in node:
            if tokens[1][0] != "key":
                raise SweepError(f"`{path}`: the base scenario has no `{here}` list to index", path)
            node[arg] = {}
        _assign(node[arg], tokens[1:], value, here, path)
        return
    if not isinstance(node, list):
        raise SweepError(
            f"`{path}`: `{done}` is a {_type_name(node)}, not a list, so it cannot be indexed",
            path,
        )
    if kind == "all":
        if not node:
            raise SweepError(f"`{path}`: `{done}` is an empty list in the base scenario", path)
        indices = list(range(len(node)))
    else:
        assert isinstance(arg, int)
        if arg >= len(node):
            raise SweepError(
                f"`{path}`: index {arg} is out of range; the base scenario's `{done}` has "
                f"{len(node)} element{'s' if len(node) != 1 else ''} (indices 0..{len(node) - 1})",
                path,
            )
        indices = [arg]
    for i in indices:
        if last:
            node[i] = copy.deepcopy(value)
        else:
            _assign(node[i], tokens[1:], value, f"{done}[{i}]", path)


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "table"
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def param_label(value: Any) -> Scalar:
    """The table cell of a parameter value: scalars as they are, tables and lists as text.

    A table with a ``kind`` reads ``kind, key=value, ...``
    (``static, itr_per_s=8000``); other tables and lists are canonical JSON.
    """
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        items = [f"{k}={_label_part(v)}" for k, v in value.items() if k != "kind"]
        if "kind" in value:
            return ", ".join([str(value["kind"]), *items])
        return ", ".join(items) if items else "{}"
    return canonical_json(value)


def _label_part(value: Any) -> str:
    if isinstance(value, str):
        return value
    return canonical_json(value)


@dataclass(frozen=True)
class SweepPoint:
    """One run of a sweep: parameters, seed, the full scenario and its store
    key, and the sha256 of each file the scenario reads (profile files and
    captures, by path; part of the key)."""

    index: int
    replicate: int
    params: dict[str, Any]
    seed: int
    scenario: dict[str, Any]
    key: str
    files: dict[str, str] = dc_field(default_factory=dict)

    @property
    def files_text(self) -> str:
        """``files`` as ``sha256  path`` lines (the store's ``input_files``)."""
        return "\n".join(f"{d}  {p}" for p, d in sorted(self.files.items()))

    @property
    def text(self) -> str:
        """The point's scenario as TOML text."""
        return tomli_w.dumps(self.scenario)

    @property
    def label(self) -> str:
        """The parameters as ``path=value`` pairs."""
        return ", ".join(f"{k}={param_label(v)}" for k, v in self.params.items()) or "base"


def parse_set(item: str, flag: str = "--set") -> tuple[str, Any]:
    """One ``--set path=value`` as (path, value): checked by
    :func:`holdoff.inputs.check_set` (exactly one TOML value, bounded path
    and depth), then parsed; errors are :class:`holdoff.inputs.InputError`
    naming ``flag``."""
    inputs.check_set(item, flag)
    try:
        return parse_assignment(item)
    except SweepError as err:
        raise inputs.InputError(
            flag, None, inputs.shorten(inputs.printable(str(err)), 300)
        ) from None
