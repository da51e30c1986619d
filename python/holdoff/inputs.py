"""One way to open an input file: checked, bounded, and named in every error.

Every command reads its file arguments through this module. A path must be a
regular file (symlinks are followed; ``-`` means stdin where a command says
so). Before a byte is read the path is ``stat``-ed: a directory, a device, a
FIFO, a socket, a symlink loop or a missing file is refused with a message
that says which of these it is, and a file larger than the limit for its kind
(:data:`LIMITS_BYTES`) is refused with its size and the limit. A FIFO is never
opened (opening one for reading waits for a writer). The read itself stops at
the limit plus one byte, so a file that grows while it is read, or whose size
``stat`` misreports (``/proc``, network file systems), is still bounded.

Text must be UTF-8 (a UTF-8 byte-order mark is dropped); UTF-16 text, invalid
UTF-8 and NUL bytes are refused with the byte offset. TOML and JSON texts are
scanned for their bracket and brace nesting before they are parsed, because
Python's readers are recursive and fail deep inside with a ``RecursionError``
(:data:`MAX_DEPTH`); the error names the line and never echoes the input.

Every refusal is one :class:`InputError` (a ``ValueError``) whose message
names the kind of input, the path and the fix; the command line prints it and
exits 2. :func:`printable` escapes control characters in names before they
are printed; :func:`check_set` checks one ``--set path=value`` as exactly one
value. ``docs/limits.md`` lists every limit.

Units: sizes in bytes (``_BYTES``), depths in nesting levels.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MIB = 2**20

LIMITS_BYTES: dict[str, int] = {
    "scenario file": 16 * MIB,
    "sweep file": 16 * MIB,
    "profile file": 16 * MIB,
    "explain input file": 16 * MIB,
    "calibration CSV": 64 * MIB,
    "CSV file": 64 * MIB,
    "store entry": 64 * MIB,
    "report input": 256 * MIB,
}
"""The largest file accepted for each kind of input [bytes] (captures are streamed: none)."""

DEFAULT_LIMIT_BYTES = 16 * MIB
"""The limit for a kind not in :data:`LIMITS_BYTES` [bytes]."""

MAX_DEPTH = 64
"""Deepest nesting of arrays and tables (inline or dotted) in a TOML or JSON input [levels]."""

MAX_SET_PATH_SEGMENTS = 64
"""Most names and indexes in one ``--set`` path (``hosts[0].nics[0].chip`` has 5)."""

MAX_PARQUET_UNCOMPRESSED_BYTES = 2**30
"""Largest uncompressed size of a Parquet report input or store entry [bytes]."""

_SHOWN_CHARS = 120  # the longest piece of user text quoted back in a message


class InputError(ValueError):
    """An input that cannot be read: ``what`` (its kind), ``path`` and what is wrong."""

    def __init__(self, what: str, path: str | os.PathLike[str] | None, message: str) -> None:
        self.what = what
        self.path = None if path is None else str(path)
        self.message = message
        shown = None if self.path is None else shorten(printable(self.path), 400)
        if shown is not None and message == "not found":
            text = f"{what} not found: {shown}"
        elif shown is not None:
            text = f"{what} {shown}: {message}"
        else:
            text = f"{what}: {message}"
        super().__init__(text)


# ------------------------------------------------------------------ printing


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# C0 controls, DEL, C1 controls; bidirectional overrides and isolates and the
# Unicode line and paragraph separators (they reorder or break printed lines).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    c = match.group()
    if c in _ESCAPES:
        return _ESCAPES[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def printable(text: str | None) -> str:
    """``text`` with control characters escaped (``\\n``, ``\\t``, ``\\x1b``, ``\\u202e``).

    For names from a scenario or a file that reach a terminal, a CSV or HTML:
    a name can then neither forge a line nor send an escape sequence.
    """
    if text is None:
        return ""
    return _CONTROL.sub(_escape, text)


def shorten(text: str, limit: int = _SHOWN_CHARS) -> str:
    """``text`` cut to about ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}... ({len(text) - limit + 20:,} more characters)"


def human_size(n_bytes: int) -> str:
    """``n_bytes`` in binary units: ``512 B``, ``16 MiB``, ``8.0 GiB``."""
    size = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            if unit == "B" or size == int(size):
                return f"{int(size)} {unit}"
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{n_bytes} B"  # not reached


# ------------------------------------------------------------------ opening


def limit_for(what: str) -> int:
    """The size limit for inputs of kind ``what`` [bytes]."""
    return LIMITS_BYTES.get(what, DEFAULT_LIMIT_BYTES)


def _not_regular(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISCHR(mode):
        return "is a character device"
    if stat.S_ISBLK(mode):
        return "is a block device"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is not a regular file"


def _os_message(err: OSError, path: str) -> str:
    if err.errno == errno.ENOENT:
        if os.path.lexists(path):
            return f"is a symbolic link to {printable(os.readlink(path))}, which does not exist"
        return "not found"
    if err.errno == errno.ELOOP:
        return "is a symbolic link loop (a link that leads back to itself)"
    if err.errno == errno.ENOTDIR:
        return "not found (a part of the path is a file, not a directory)"
    if err.errno == errno.EACCES:
        return "permission denied"
    if err.errno == errno.ENAMETOOLONG:
        return "the path is too long"
    return f"cannot be read ({err.strerror or err})"


def _output_stat(name: str, *, dangling_link_refused: bool) -> os.stat_result | str | None:
    """An output path's stat (symlinks followed), None where nothing is there
    yet, or why the path cannot be used."""
    try:
        return os.stat(name)
    except FileNotFoundError:
        if dangling_link_refused and os.path.lexists(name):
            return _os_message(FileNotFoundError(errno.ENOENT, "missing"), name)
        return None
    except OSError as err:
        return _os_message(err, name)
    except ValueError:
        return "the path contains a NUL character"


def _parent_problem(name: str) -> str | None:
    """Why a path that does not exist yet cannot be made: its nearest existing
    ancestor is not a folder."""
    for parent in Path(name).absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{printable(str(parent))} is not a folder"
            break
    return None


def output_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be written as a regular file, or None if it can.

    A directory, a device, a FIFO or a socket at ``path`` (symlinks followed)
    is refused: a writer that renames a temporary file over its target would
    replace a device such as ``/dev/null`` with a file. So is a path under
    something that is not a folder.
    """
    name = os.fspath(path)
    st = _output_stat(name, dangling_link_refused=False)
    if isinstance(st, str):
        return st
    if st is not None:
        wrong = _not_regular(st.st_mode)
        return None if wrong is None else f"{wrong}; give the path of a file to write"
    return _parent_problem(name)


def output_folder_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be used as an output folder (made if missing), or None."""
    name = os.fspath(path)
    st = _output_stat(name, dangling_link_refused=True)
    if isinstance(st, str):
        return st
    if st is not None:
        return None if stat.S_ISDIR(st.st_mode) else "is a file, not a folder; give a folder"
    return _parent_problem(name)


def check_file(path: str | os.PathLike[str], what: str, limit: int | None = None) -> int:
    """The size of ``path`` [bytes], after checking it is a regular file within ``limit``.

    Symlinks are followed. Raises :class:`InputError` saying what the path is.
    ``limit``: bytes (default: :func:`limit_for` ``what``); ``0`` checks no size.
    """
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as err:
        raise InputError(what, name, _os_message(err, name)) from None
    except ValueError:  # an embedded NUL
        raise InputError(what, name, "the path contains a NUL character") from None
    wrong = _not_regular(st.st_mode)
    if wrong is not None:
        raise InputError(what, name, f"{wrong}; give a regular file")
    cap = limit_for(what) if limit is None else limit
    if cap and st.st_size > cap:
        raise InputError(
            what,
            name,
            f"is {human_size(st.st_size)}, the limit for a {what} is {human_size(cap)}",
        )
    return st.st_size


def read_bytes(
    path: str | os.PathLike[str],
    what: str,
    *,
    limit: int | None = None,
    allow_stdin: bool = False,
) -> bytes:
    """The bytes of ``path`` (a checked regular file, or stdin for ``-`` if allowed).

    At most ``limit`` bytes (default :func:`limit_for` ``what``) are accepted,
    and at most ``limit + 1`` are ever read.
    """
    cap = limit_for(what) if limit is None else limit
    name = os.fspath(path)
    if allow_stdin and name == "-":
        raw = getattr(sys.stdin, "buffer", None)  # a text stream in tests has none
        data = raw.read(cap + 1) if raw is not None else sys.stdin.read(cap + 1).encode()
        if len(data) > cap:
            raise InputError(what, "<stdin>", f"is over the limit for a {what}, {human_size(cap)}")
        return data
    check_file(name, what, cap)
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO since the stat, the
        # open must not wait for a writer; the fstat below then refuses it.
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise InputError(what, name, _os_message(err, name)) from None
    try:
        wrong = _not_regular(os.fstat(fd).st_mode)
        if wrong is not None:
            raise InputError(what, name, f"{wrong}; give a regular file")
        chunks: list[bytes] = []
        got = 0
        while got <= cap:
            chunk = os.read(fd, min(cap + 1 - got, 4 * MIB))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as err:
        raise InputError(what, name, f"cannot be read ({err.strerror or err})") from None
    finally:
        os.close(fd)
    if got > cap:
        raise InputError(
            what, name, f"grew past the limit for a {what}, {human_size(cap)}, while being read"
        )
    return b"".join(chunks)


def decode(data: bytes, what: str, path: str | os.PathLike[str] | None) -> str:
    """``data`` as UTF-8 text; UTF-16, invalid UTF-8 and NUL bytes are refused with the offset."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (
        len(data) >= 4 and data[1:4:2] == b"\0\0" and data[0:4:2] != b"\0\0"
    ):
        raise InputError(what, path, "is UTF-16 text; save it as UTF-8")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(
            what,
            path,
            f"is not UTF-8 text: byte 0x{data[err.start]:02x} at offset {err.start} "
            f"(line {line}); save it as UTF-8",
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise InputError(
            what, path, f"contains a NUL character at line {line}; a text file has none"
        )
    return text


def read_text(path: str | os.PathLike[str], what: str, *, allow_stdin: bool = False) -> str:
    """The UTF-8 text of ``path``, read through :func:`read_bytes` and :func:`decode`."""
    name = os.fspath(path)
    data = read_bytes(name, what, allow_stdin=allow_stdin)
    return decode(data, what, "<stdin>" if allow_stdin and name == "-" else name)


# ------------------------------------------------------------------ nesting

_TOML_TOKENS = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)'  # multi-line basic string
    r"|'''(?:[^']|'(?!''))*(?:'''|\Z)"  # multi-line literal string
    r'|"(?:[^"\\\n]|\\.)*(?:"|$)'  # basic string
    r"|'[^'\n]*(?:'|$)"  # literal string
    r"|#[^\n]*"  # comment
    r"|[\[\]{}]",
    re.DOTALL | re.MULTILINE,
)
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\Z)|[\[\]{}]', re.DOTALL)


def _max_depth(text: str, tokens: re.Pattern[str], limit: int) -> tuple[int, int] | None:
    """The offset and depth where ``text`` first nests deeper than ``limit``, or None."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for m in tokens.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > limit:
                return m.start(), depth
        elif c in "]}":
            depth = max(depth - 1, 0)
    return None


def check_depth(
    text: str, what: str, path: str | os.PathLike[str] | None, *, syntax: str = "toml"
) -> None:
    """Refuses ``text`` (TOML or JSON) nested deeper than :data:`MAX_DEPTH`, before parsing."""
    found = _max_depth(text, _JSON_TOKENS if syntax == "json" else _TOML_TOKENS, MAX_DEPTH)
    if found is not None:
        offset, _ = found
        line = text.count("\n", 0, offset) + 1
        raise InputError(
            what,
            path,
            f"nests arrays or tables more than {MAX_DEPTH} levels deep (line {line}); "
            f"the limit is {MAX_DEPTH}",
        )


def _nodes(doc: Any) -> Iterator[tuple[Any, int]]:
    stack = [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def check_doc_depth(doc: Any, what: str, path: str | os.PathLike[str] | None) -> None:
    """Refuses a parsed document nested deeper than :data:`MAX_DEPTH` (dotted keys too)."""
    for _, depth in _nodes(doc):
        if depth > MAX_DEPTH:
            raise InputError(
                what,
                path,
                f"nests tables or arrays more than {MAX_DEPTH} levels deep "
                f"(dotted keys count); the limit is {MAX_DEPTH}",
            )


def check_toml_text(text: str, what: str, path: str | os.PathLike[str] | None) -> None:
    """Refuses TOML text nested too deep, by brackets or by dotted keys.

    Text that is not valid TOML passes (the scenario reader reports it with
    its line); only the nesting is judged here.
    """
    check_depth(text, what, path, syntax="toml")
    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return
    check_doc_depth(doc, what, path)


def read_toml_text(path: str | os.PathLike[str], what: str) -> str:
    """The text of a TOML input (scenario, sweep, profile), checked for size and nesting."""
    text = read_text(path, what)
    check_toml_text(text, what, path)
    return text


def loads_toml(text: str, what: str, path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """``text`` parsed as TOML; syntax and nesting errors are an :class:`InputError`."""
    check_depth(text, what, path, syntax="toml")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(what, path, f"is not valid TOML: {shorten(str(err), 200)}") from None
    check_doc_depth(doc, what, path)
    return doc


def read_toml(path: str | os.PathLike[str], what: str) -> dict[str, Any]:
    """A TOML input parsed, every error an :class:`InputError`."""
    return loads_toml(read_text(path, what), what, path)


def loads_json(text: str, what: str, path: str | os.PathLike[str] | None) -> Any:
    """``text`` parsed as JSON; syntax and nesting errors are an :class:`InputError`."""
    check_depth(text, what, path, syntax="json")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(what, path, f"is not valid JSON: {err}") from None
    except RecursionError:  # not reached after check_depth; kept as a guard
        raise InputError(what, path, f"nests more than {MAX_DEPTH} levels deep") from None


def read_json(
    path: str | os.PathLike[str], what: str = "report input", *, allow_stdin: bool = False
) -> Any:
    """A JSON input parsed (any JSON value: the caller checks its shape)."""
    name = os.fspath(path)
    text = read_text(name, what, allow_stdin=allow_stdin)
    return loads_json(text, what, "<stdin>" if allow_stdin and name == "-" else name)


def read_json_object(path: str | os.PathLike[str], what: str = "report input") -> dict[str, Any]:
    """A JSON input that must be an object (``{...}``)."""
    data = read_json(path, what)
    if not isinstance(data, dict):
        raise InputError(
            what, path, f"holds a JSON {_json_type(data)}, expected an object ({{...}})"
        )
    return data


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def read_parquet(path: str | os.PathLike[str], what: str = "report input") -> Any:
    """A Parquet file as a ``pandas.DataFrame``; any damage is an :class:`InputError`.

    Checked before decoding: the size limit for ``what``, the ``PAR1`` marks
    at both ends, and the uncompressed size its footer states
    (:data:`MAX_PARQUET_UNCOMPRESSED_BYTES`).
    """
    import pyarrow as pa

    table = read_parquet_table(path, what)
    try:
        return table.to_pandas()
    except (pa.ArrowException, ValueError, TypeError) as err:
        raise InputError(what, path, f"cannot be read as a table ({shorten(str(err))})") from None


def read_parquet_table(path: str | os.PathLike[str], what: str = "report input") -> Any:
    """A Parquet file as a ``pyarrow.Table``, checked as :func:`read_parquet` says."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = os.fspath(path)
    size = check_file(name, what)
    if size < 12:
        raise InputError(what, name, f"is {size} bytes, too short for a Parquet file")
    try:
        with open(name, "rb") as f:
            head = f.read(4)
            f.seek(-4, os.SEEK_END)
            tail = f.read(4)
    except OSError as err:
        raise InputError(what, name, _os_message(err, name)) from None
    if head != b"PAR1":
        raise InputError(what, name, "is not a Parquet file (it does not start with PAR1)")
    if tail != b"PAR1":
        raise InputError(what, name, "is a truncated or damaged Parquet file (no PAR1 at its end)")
    try:
        meta = pq.read_metadata(name)
        unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if unpacked > MAX_PARQUET_UNCOMPRESSED_BYTES:
            raise InputError(
                what,
                name,
                f"holds {human_size(unpacked)} uncompressed, the limit is "
                f"{human_size(MAX_PARQUET_UNCOMPRESSED_BYTES)}",
            )
        return pq.read_table(name)
    except InputError:
        raise
    except (pa.ArrowException, OSError, ValueError, TypeError) as err:
        raise InputError(
            what, name, f"is a damaged Parquet file ({shorten(printable(str(err)))})"
        ) from None


# ------------------------------------------------------------------ --set

_SEGMENT = re.compile(r"\.|\[")


def _newline_outside_strings(raw: str) -> bool:
    rest = _TOML_TOKENS.sub(lambda m: "" if m.group() in "[]{}" else "S", raw)
    return "\n" in rest or "\r" in rest


def check_set(item: str, flag: str = "--set") -> None:
    """Check one ``path=value`` assignment: the value must be exactly one TOML value.

    Anything after the value (``name="x"\\nseed=7``: a second key; a newline
    outside a string; a table header) is refused, as are paths of more than
    :data:`MAX_SET_PATH_SEGMENTS` parts and values nested deeper than
    :data:`MAX_DEPTH`. A bare word that is not a TOML value (``e1000-5x``) is
    a string, as before. Raises :class:`InputError` naming the flag and the
    assignment. :func:`holdoff.sweep_paths.parse_set` checks and parses.
    """
    shown = shorten(printable(item), 80)
    path, sep, raw = item.partition("=")
    segments = len(_SEGMENT.findall(path)) + 1
    if segments > MAX_SET_PATH_SEGMENTS:
        raise InputError(
            flag,
            None,
            f"`{shown}`: the path has {segments:,} parts, the limit is {MAX_SET_PATH_SEGMENTS}",
        )
    if sep:
        value = raw.strip()
        if _newline_outside_strings(value):
            raise InputError(
                flag,
                None,
                f"`{shown}`: text after the value (a line break outside a string); "
                "give one value per --set, e.g. --set name=x --set seed=7",
            )
        found = _max_depth(value, _TOML_TOKENS, MAX_DEPTH)
        if found is not None:
            raise InputError(
                flag, None, f"`{shown}`: the value nests more than {MAX_DEPTH} levels deep"
            )
        try:
            table = tomllib.loads(f"v = {value}")
        except tomllib.TOMLDecodeError:
            pass  # a bare word, or an error parse_assignment reports
        else:
            extra = [k for k in table if k != "v"]
            if extra:
                raise InputError(
                    flag,
                    None,
                    f"`{shown}`: text after the value ({', '.join(extra)}); "
                    "give one value per --set",
                )


def scenario_name(text: str) -> str | None:
    """The ``name`` of a scenario given as TOML text, if it has one."""
    try:
        name = tomllib.loads(text).get("name")
    except tomllib.TOMLDecodeError:
        return None
    return name if isinstance(name, str) else None
