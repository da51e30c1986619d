"""A result store: one Parquet file per finished run, keyed by the scenario's hash.

The key of a run is :func:`scenario_hash`: the SHA-256 of the holdoff version
and the canonical JSON (sorted keys, no whitespace, the seed included) of the
scenario as the core reads it, validated and with every default filled in.
The same scenario run by the same version therefore finds its stored result
whether or not a default is written out, and a new version never reuses an
old one.

Layout of a store folder (default ``runs/store``)::

    runs/store/<hash>.parquet     one row: hash, version, scenario, seed, metrics

Every write goes to a hidden temporary file in the same folder
(``.<hash>.parquet.<pid>.tmp``), is flushed to disk, and is then renamed over
the final name with :func:`os.replace`, which is atomic: a reader (or a sweep
killed at any moment) sees either no file or a complete one, never half of
one. Temporary files left by a killed writer are never read as results and
are removed by the next :meth:`ResultStore.cleanup`. Two sweeps may write
one store at once: their temporary names differ (the writer's pid) and the
last rename of a key wins with a complete file (both hold the same run).

An entry that cannot be read (truncated, overwritten with other bytes by
something outside holdoff, text, larger than the store-entry limit of
:mod:`holdoff.inputs`) or that does not hold one complete run (not one row; a
``scenario_hash`` other than its file name; a missing or non-integer
``seed`` or ``sim_time_ns``, e.g. a NaN seed; a metric column holding text)
is skipped with a :class:`CorruptEntryWarning` naming the file and what is
wrong: :meth:`ResultStore.read` returns None for it, so the next sweep
recomputes it and replaces the file, and :meth:`ResultStore.query` leaves it
out, so that one damaged entry never hides the others.

:meth:`ResultStore.query` runs SQL (DuckDB) over every stored file through a
view named ``runs``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import tomli_w

from holdoff import _core, inputs
from holdoff.api import _without_none

DEFAULT_STORE = Path("runs/store")
SUFFIX = ".parquet"
_TMP_SUFFIX = ".tmp"

Scalar = str | int | float | bool | None

# What a complete entry holds (a sweep writes every one): column -> kind.
REQUIRED_COLUMNS = {
    "scenario_hash": "text",
    "holdoff_version": "text",
    "scenario": "text",
    "seed": "integer",
    "sim_time_ns": "integer",
}
_TEXT_COLUMNS = {
    "scenario_hash",
    "holdoff_version",
    "scenario",
    "scenario_toml",
    "warnings",
    "input_files",
}


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON: sorted keys, no whitespace, UTF-8, no NaN."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def scenario_hash(scenario: Mapping[str, Any], version: str) -> str:
    """The store key of a scenario (a dict shaped like the scenario file) for ``version``.

    ``sha256("holdoff <version>\\n" + canonical_json(normalized))`` as 64 hex
    digits, where ``normalized`` is the scenario as the core reads it: validated,
    with every default filled in. Spelling out a default therefore keeps the
    key; an invalid scenario raises :class:`holdoff.ScenarioError` here.
    """
    return normalized_hash(normalize(scenario), version)


def normalize(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario as the core reads it (validated, every default filled in).

    Raises :class:`holdoff.ScenarioError` if it is not valid.
    """
    normalized: dict[str, Any] = json.loads(
        _core.normalize_toml(tomli_w.dumps(_without_none(scenario)))
    )
    return normalized


def normalized_hash(normalized: Mapping[str, Any], version: str) -> str:
    """:func:`scenario_hash` of a scenario already passed through :func:`normalize`."""
    payload = f"holdoff {version}\n{canonical_json(normalized)}"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class CorruptEntryWarning(UserWarning):
    """A stored entry cannot be read; it is ignored and recomputed by the next sweep."""


class ResultStore:
    """A folder of stored runs (see the module documentation)."""

    def __init__(self, root: str | os.PathLike[str] = DEFAULT_STORE) -> None:
        self.root = Path(root)
        #: Files found corrupt by this store object (each warned about once).
        self.corrupt: list[Path] = []

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r})"

    def path(self, key: str) -> Path:
        """The file holding the run ``key`` (which may not exist)."""
        if not key or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a scenario hash: {key!r}")
        return self.root / f"{key}{SUFFIX}"

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.path(key).is_file()

    def keys(self) -> list[str]:
        """The hashes of every stored run, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(p.name[: -len(SUFFIX)] for p in self._files())

    def __len__(self) -> int:
        return len(self.keys())

    def get(self, key: str) -> dict[str, Scalar]:
        """The stored row of run ``key``; ``KeyError`` if there is none."""
        path = self.path(key)
        if not os.path.lexists(path):
            raise KeyError(key)
        table = inputs.read_parquet_table(path, "store entry")
        problem = entry_problem(table, key, complete=False)
        if problem is not None:
            raise ValueError(f"{path}: {problem}")
        rows = table.to_pylist()
        return {str(k): _scalar(v) for k, v in rows[0].items()}

    def read(self, key: str) -> dict[str, Scalar] | None:
        """The stored row of run ``key``, or None if there is none or it is corrupt.

        A corrupt entry (see the module documentation) gives a
        :class:`CorruptEntryWarning` naming the file.
        """
        path = self.path(key)
        try:
            if not os.path.lexists(path):
                return None
            table = inputs.read_parquet_table(path, "store entry")
            problem = entry_problem(table, key, complete=True)
            if problem is not None:
                raise ValueError(problem)
            row = table.to_pylist()[0]
        except (OSError, ValueError, pa.ArrowException) as err:
            self._report_corrupt(path, err)
            return None
        return {str(k): _scalar(v) for k, v in row.items()}

    def readable(self) -> list[Path]:
        """Every stored file that reads as one complete row (corrupt ones warned about)."""
        good: list[Path] = []
        if not self.root.is_dir():
            return good
        for path in sorted(self._files()):
            try:
                if not path.exists():
                    continue  # replaced or removed meanwhile
                table = inputs.read_parquet_table(path, "store entry")
                problem = entry_problem(table, path.name[: -len(SUFFIX)], complete=True)
                if problem is not None:
                    raise ValueError(problem)
            except (OSError, ValueError, pa.ArrowException) as err:
                self._report_corrupt(path, err)
                continue
            good.append(path)
        return good

    def _report_corrupt(self, path: Path, err: BaseException) -> None:
        if path in self.corrupt:
            return
        self.corrupt.append(path)
        reason = str(err.message) if isinstance(err, inputs.InputError) else str(err)
        prefix = f"{path}: "
        if reason.startswith(prefix):
            reason = reason[len(prefix) :]
        reason = inputs.shorten(inputs.printable(reason), 200)
        warnings.warn(
            f"{path}: damaged result store entry ({reason}); ignored, the next sweep "
            "that needs it recomputes it",
            CorruptEntryWarning,
            stacklevel=3,
        )

    def put(self, key: str, record: Mapping[str, Scalar]) -> Path:
        """Writes one run atomically (temporary file, fsync, ``os.replace``)."""
        path = self.path(key)
        self.root.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([dict(record)])
        tmp = self.root / f".{path.name}.{os.getpid()}{_TMP_SUFFIX}"
        try:
            with open(tmp, "wb") as handle:
                pq.write_table(table, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(self.root)
        return path

    def cleanup(self) -> list[Path]:
        """Removes temporary files left by writers that no longer run; returns them."""
        removed: list[Path] = []
        if not self.root.is_dir():
            return removed
        for tmp in self.root.glob(f".*{SUFFIX}.*{_TMP_SUFFIX}"):
            pid_text = tmp.name[: -len(_TMP_SUFFIX)].rsplit(".", 1)[-1]
            if pid_text.isdigit() and _alive(int(pid_text)):
                continue
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
        return removed

    def query(self, sql: str | None = None) -> pd.DataFrame:
        """Runs ``sql`` (DuckDB) with a view ``runs`` over every stored run.

        Without ``sql``: every run, newest version first, by scenario and seed.
        Corrupt entries are left out (with a :class:`CorruptEntryWarning`).
        Raises ``FileNotFoundError`` if the store holds no readable run.
        """
        import duckdb

        files = self.readable()
        if not files:
            raise FileNotFoundError(f"no stored runs in {self.root}")
        listed = ", ".join("'" + str(p.resolve()).replace("'", "''") + "'" for p in files)
        con = duckdb.connect(":memory:")
        try:
            con.execute(
                f"CREATE VIEW runs AS SELECT * FROM read_parquet([{listed}], union_by_name = true)"
            )
            if sql is None:
                sql = "SELECT * FROM runs ORDER BY holdoff_version DESC, scenario, seed"
            frame: pd.DataFrame = con.execute(sql).df()
        finally:
            con.close()
        return frame

    def _files(self) -> Iterator[Path]:
        # Hidden temporary files never match: their names start with a dot.
        return (p for p in self.root.glob(f"[0-9a-f]*{SUFFIX}") if p.is_file())


def entry_problem(table: pa.Table, key: str, *, complete: bool) -> str | None:
    """What makes ``table`` not one stored run of ``key``, or None if nothing does.

    Always: one row; ``scenario_hash`` (if present) is ``key``; ``seed`` and
    ``sim_time_ns`` (if present) are integers with a value. With ``complete``
    also: every column of :data:`REQUIRED_COLUMNS` is present, text columns
    hold text and every other column a number, a truth value or nothing.
    """
    if table.num_rows != 1:
        return f"expected one row, found {table.num_rows}"
    names = set(table.column_names)
    if complete:
        missing = [c for c in REQUIRED_COLUMNS if c not in names]
        if missing:
            return "no " + ", ".join(f"`{c}`" for c in missing) + " column"
    for field in table.schema:
        kind = field.type
        if field.name in ("seed", "sim_time_ns"):
            if not pa.types.is_integer(kind) or table.column(field.name).null_count:
                value = table.column(field.name)[0].as_py()
                return f"`{field.name}` is {value!r} ({kind}), expected an integer"
        elif field.name in _TEXT_COLUMNS:
            if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
                return f"`{field.name}` is {kind}, expected text"
        elif complete and not (
            pa.types.is_integer(kind)
            or pa.types.is_floating(kind)
            or pa.types.is_boolean(kind)
            or pa.types.is_null(kind)
        ):
            return f"metric `{inputs.printable(field.name)}` is {kind}, expected a number"
    if "scenario_hash" in names:
        stored = table.column("scenario_hash")[0].as_py()
        if stored != key:
            return f"`scenario_hash` is {str(stored)[:16]!r}..., not the file's name"
    return None


def scenario_leaves(value: Any, prefix: str = "") -> dict[str, Scalar]:
    """Every leaf of a scenario (dict) as field path -> value, in sweep path syntax.

    ``{"hosts": [{"nics": [{"chip": "82546"}]}]}`` gives
    ``{"hosts[0].nics[0].chip": "82546"}``; lists of scalars are one leaf.
    """
    leaves: dict[str, Scalar] = {}
    if isinstance(value, Mapping):
        for key, item in value.items():
            leaves.update(scenario_leaves(item, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list) and any(isinstance(v, Mapping | list) for v in value):
        for i, item in enumerate(value):
            leaves.update(scenario_leaves(item, f"{prefix}[{i}]"))
    elif isinstance(value, list):
        leaves[prefix] = canonical_json(value)
    else:
        leaves[prefix] = _scalar(value)
    return leaves


def differing_parameters(
    scenarios: list[Mapping[str, Any]], ignore: tuple[str, ...] = ("name", "seed")
) -> dict[str, list[Scalar]]:
    """The field paths whose values differ between ``scenarios``, with each one's values.

    A field missing from a scenario counts as ``None``. ``ignore`` lists
    top-level fields shown elsewhere (the scenario name and the seed).
    """
    leaves = [scenario_leaves(s) for s in scenarios]
    paths: list[str] = []
    for lv in leaves:
        paths.extend(p for p in lv if p not in paths and p not in ignore)
    return {
        p: [lv.get(p) for lv in leaves]
        for p in paths
        if len({repr(lv.get(p)) for lv in leaves}) > 1
    }


def _scalar(value: Any) -> Scalar:
    if isinstance(value, float) and math.isnan(value):
        return math.nan
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
