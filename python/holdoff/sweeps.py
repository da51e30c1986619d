"""Sweeps: one base scenario run over a grid (or a list) of changed fields.

A sweep file (TOML)::

    name = "itr-x-load"
    base = "quickstart.toml"          # relative to the sweep file; or an inline [base] table
    seed = 1                          # base of the per-point seeds (default: the base's seed)
    replicates = 1                    # seeds per point

    [set]                             # fields changed at every point (not parameters)
    duration_ms = 200

    [grid]                            # every combination, the last field varying fastest
    "hosts[0].nics[0].moderation" = [{kind = "static", itr_per_s = 8000}, {kind = "e1000-5x"}]
    "generators[0].rate_pps" = [100000, 300000]
    "hosts[*].profile" = ["p4-xeon-2004", "xeon-modern"]   # [*]: every element

    [[points]]                        # explicit points, after the grid's
    "generators[0].rate_pps" = 600000

A field path is names and list indices (``hosts[0].nics[0].moderation.itr_per_s``);
``[*]`` applies to every element of a list; a value may be a whole table.
Each point's seed is derived from (sweep seed, the point's parameters,
replicate index) by a hash, so adding or removing points never changes the
seeds of the others; a point that sets ``seed`` itself keeps it.

A host profile file (``hosts[].profile = "my-host.toml"``) and a replayed
capture (``generators[].capture``) are found relative to the scenario file
that names them (the base scenario's folder, or the sweep file's for values
the sweep file sets); the store key covers the files' contents, so a
recalibrated profile or a capture taken again under the same name is run
again, not read from the store.

Every point's scenario is validated by the core before any run starts. Runs
go to a :class:`~holdoff.store.ResultStore` keyed by the scenario's hash, so a
sweep run again (or resumed after being killed) computes only the points the
store does not hold yet. The result is one tidy table: one row per point (in
point order) with the sweep parameters, the seed, the scenario hash and the
run's metrics (see :func:`metrics_record`).
"""

from __future__ import annotations

import copy
import hashlib
import os
import stat
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, Unpack

import pandas as pd

from holdoff import _core, inputs
from holdoff.api import _without_none
from holdoff.stats import MAX_SEEDS
from holdoff.store import (
    DEFAULT_STORE,
    ResultStore,
    Scalar,
    canonical_json,
    normalize,
    normalized_hash,
)
from holdoff.sweep_exec import execute
from holdoff.sweep_metrics import (
    NETPIPE_BULK_BYTES,
    NETPIPE_SMALL_BYTES,
    compute_point,
    metrics_record,
)
from holdoff.sweep_paths import (
    SweepError,
    SweepPoint,
    Token,
    check_distinct,
    check_path,
    param_label,
    parse_assignment,
    parse_path,
    set_path,
    short_names,
)
from holdoff.sweep_table import (
    ID_COLUMNS,
    KEY_COLUMNS,
    STORE_ONLY_COLUMNS,
    param_columns,
    replicate_table,
    sweep_table,
    write_table,
)

__all__ = [
    "EXECUTORS",
    "ID_COLUMNS",
    "KEY_COLUMNS",
    "DEFAULT_TABLES",
    "MAX_NAME_CHARS",
    "MAX_REPLICATES",
    "MAX_SWEEP_RUNS",
    "NETPIPE_BULK_BYTES",
    "NETPIPE_SMALL_BYTES",
    "STORE_ONLY_COLUMNS",
    "Executor",
    "SweepError",
    "SweepPoint",
    "SweepRun",
    "SweepSpec",
    "Token",
    "check_name",
    "combinations",
    "compute_point",
    "count_points",
    "max_workers",
    "replicates_path",
    "derive_seed",
    "expand",
    "load_sweep",
    "metrics_record",
    "param_columns",
    "param_label",
    "parse_assignment",
    "parse_path",
    "replicate_table",
    "run_sweep",
    "set_path",
    "short_names",
    "sweep",
    "sweep_table",
    "table_path",
    "write_table",
]

Executor = Literal["serial", "process", "ray"]
EXECUTORS: tuple[str, ...] = ("serial", "process", "ray")
Progress = Callable[[int, int], None]
"""Called with (points finished in this call, points to compute in this call)."""

#: The most runs (parameter sets x replicates) of one sweep: each run keeps its
#: scenario (a few kB to a few MB) and its table row in memory until the table
#: is written, and 100 000 runs of 0.1 s are hours on a workstation.
MAX_SWEEP_RUNS = 100_000
#: The most replicates (seeds) of one parameter set (as ``--seeds``).
MAX_REPLICATES = MAX_SEEDS
#: The longest sweep name [characters] (it is a file name).
MAX_NAME_CHARS = 128
#: Where a sweep's table goes unless ``--out`` says otherwise.
DEFAULT_TABLES = Path("runs/sweeps")

SWEEP_FIELDS = ("name", "description", "base", "set", "seed", "replicates", "grid", "points")
_MAX_SEED = 2**63 - 1

# -- the sweep file ------------------------------------------------------------


@dataclass(frozen=True)
class SweepSpec:
    """A parsed sweep file."""

    name: str
    base: dict[str, Any]
    grid: dict[str, list[Any]] = field(default_factory=dict)
    points: list[dict[str, Any]] = field(default_factory=list)
    seed: int = 0
    replicates: int = 1
    description: str = ""


SweepSource = str | os.PathLike[str] | Mapping[str, Any] | SweepSpec


def load_sweep(source: SweepSource) -> SweepSpec:
    """Reads a sweep from a file path, TOML text, a dict shaped like the file, or a spec.

    A relative ``base`` path is resolved against the sweep file's folder (the
    current folder for text or a dict).

    Raises:
        SweepError: the sweep is malformed (the message names the field).
        FileNotFoundError: the sweep file or its base scenario does not exist.
    """
    if isinstance(source, SweepSpec):
        return source
    folder = Path.cwd()
    fallback_name = "sweep"
    if isinstance(source, Mapping):
        data: dict[str, Any] = dict(source)
    else:
        text, path = _sweep_text(source)
        if path is not None:
            folder = path.resolve().parent
            fallback_name = path.stem
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise SweepError(f"sweep file is not valid TOML: {err}") from err
    return _parse(data, folder, fallback_name)


def _sweep_text(source: str | os.PathLike[str]) -> tuple[str, Path | None]:
    if isinstance(source, os.PathLike):
        path = Path(source)
        return _read_toml(path, "sweep file"), path
    if isinstance(source, str):
        stripped = source.strip()
        if "\n" not in stripped and (stripped.endswith(".toml") or Path(stripped).is_file()):
            path = Path(stripped)
            return _read_toml(path, "sweep file"), path
        try:
            inputs.check_toml_text(source, "sweep text", None)
        except inputs.InputError as err:
            raise SweepError(str(err)) from None
        return source, None
    raise TypeError(f"sweep must be a path, TOML text or a dict, not {type(source).__name__}")


def _read_toml(path: Path, what: str) -> str:
    """The text of a sweep or base file through :mod:`holdoff.inputs` (regular
    file, size limit, nesting depth); a missing file stays ``FileNotFoundError``."""
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(f"{what} not found: {path}")
    try:
        return inputs.read_toml_text(path, what)
    except inputs.InputError as err:
        raise SweepError(str(err), "base" if what != "sweep file" else None) from None


def _parse(data: dict[str, Any], folder: Path, fallback_name: str) -> SweepSpec:
    unknown = [k for k in data if k not in SWEEP_FIELDS]
    if unknown:
        raise SweepError(
            f"unknown sweep field `{unknown[0]}`; allowed: {', '.join(SWEEP_FIELDS)}", unknown[0]
        )
    base = _load_base(data.get("base"), folder)
    fixed = data.get("set", {})
    if not isinstance(fixed, Mapping):
        raise SweepError("sweep field `set` must be a table of field path = value", "set")
    for path, value in fixed.items():
        check_path(path, f"set.{path}")
        set_path(base, path, _absolute_profile(path, value, folder))
    name = check_name(data.get("name", fallback_name))
    description = data.get("description", "")
    if not isinstance(description, str):
        raise SweepError("sweep field `description` must be a string", "description")
    seed = data.get("seed", base.get("seed", 0))
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MAX_SEED:
        raise SweepError(f"sweep field `seed` must be an integer 0..2**63-1, got {seed!r}", "seed")
    replicates = data.get("replicates", 1)
    if (
        isinstance(replicates, bool)
        or not isinstance(replicates, int)
        or not 1 <= replicates <= MAX_REPLICATES
    ):
        raise SweepError(
            f"sweep field `replicates` must be an integer from 1 to {MAX_REPLICATES} "
            f"(each replicate is a whole run), got {_shown(replicates)}",
            "replicates",
        )
    grid_data = data.get("grid", {})
    if not isinstance(grid_data, Mapping):
        raise SweepError("sweep field `grid` must be a table of field path = [values]", "grid")
    grid: dict[str, list[Any]] = {}
    for path, values in grid_data.items():
        check_path(path, f"grid.{path}")
        if not isinstance(values, list) or not values:
            raise SweepError(
                f"grid `{path}`: expected a non-empty list of values, got {_shown(values)}", path
            )
        grid[path] = [_absolute_profile(path, v, folder) for v in values]
    check_distinct(list(grid), "grid")
    points_data = data.get("points", [])
    if not isinstance(points_data, list) or not all(isinstance(p, Mapping) for p in points_data):
        raise SweepError(
            "sweep field `points` must be a list of tables ([[points]] with field path = value)",
            "points",
        )
    points: list[dict[str, Any]] = []
    for i, point in enumerate(points_data):
        for path in point:
            check_path(path, f"points[{i}]")
        check_distinct(list(point), f"points[{i}]")
        points.append({k: _absolute_profile(k, v, folder) for k, v in point.items()})
    spec = SweepSpec(
        name=name,
        base=base,
        grid=grid,
        points=points,
        seed=seed,
        replicates=replicates,
        description=description,
    )
    count_points(spec)
    return spec


def _shown(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters (an error never echoes a whole input)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_name(name: Any) -> str:
    """A sweep name that is safe as a file name (it names ``runs/sweeps/NAME.parquet``).

    Refused: not a string, empty, longer than :data:`MAX_NAME_CHARS`, a
    ``/`` or ``\\``, a NUL or other control character, or a leading ``.``
    (``..``, hidden files): a name must not lead out of its folder.
    """
    if not isinstance(name, str) or not name:
        raise SweepError("sweep field `name` must be a non-empty string", "name")
    shown = name[:60].encode("unicode_escape").decode()
    if len(name) > MAX_NAME_CHARS:
        raise SweepError(
            f"sweep field `name` is {len(name)} characters; the limit is {MAX_NAME_CHARS}", "name"
        )
    bad = [c for c in name if c in "/\\" or ord(c) < 32 or ord(c) == 127]
    if bad or name.startswith("."):
        what = "a leading `.`" if not bad else f"`{bad[0].encode('unicode_escape').decode()}`"
        raise SweepError(
            f"sweep field `name` = `{shown}` has {what}: the name is a file name in the "
            f"sweeps folder, so it may not contain `/`, `\\`, control characters or NUL, "
            f"nor start with `.`; use letters, digits, `-`, `_` and `.`",
            "name",
        )
    return name


def table_path(name: str, folder: str | os.PathLike[str] = DEFAULT_TABLES) -> Path:
    """``folder/NAME.parquet``, the default table of sweep ``name``; refuses a
    name that would place it anywhere but directly in ``folder``."""
    check_name(name)
    path = Path(folder) / f"{name}.parquet"
    if path.parent != Path(folder) or path.resolve().parent != Path(folder).resolve():
        raise SweepError(f"sweep name `{name}` leads out of {folder}", "name")
    return path


def max_workers() -> int:
    """The most worker processes a sweep starts: four per core (more only
    add memory, about 100 MB each, and no speed)."""
    return 4 * (os.cpu_count() or 1)


def replicates_path(table: str | os.PathLike[str]) -> Path:
    """Where the per-replicate rows go beside a summary table: ``NAME.replicates.parquet``."""
    path = Path(table)
    return path.with_name(f"{path.name.removesuffix('.parquet')}.replicates.parquet")


def count_points(spec: SweepSpec) -> int:
    """The number of runs of a sweep (parameter sets x replicates), counted
    without building any point; refuses more than :data:`MAX_SWEEP_RUNS`."""
    sets = 0 if spec.points and not spec.grid else 1
    for values in spec.grid.values():
        sets *= len(values)
    sets += len(spec.points)
    if not 1 <= spec.replicates <= MAX_REPLICATES:
        raise SweepError(
            f"replicates = {spec.replicates}: the limit is 1 to {MAX_REPLICATES}", "replicates"
        )
    runs = sets * spec.replicates
    if runs > MAX_SWEEP_RUNS:
        sizes = " x ".join(str(len(v)) for v in spec.grid.values()) or "0"
        raise SweepError(
            f"the sweep has {runs:,} runs (grid {sizes}, {len(spec.points)} explicit points, "
            f"{spec.replicates} replicates); the limit is {MAX_SWEEP_RUNS:,} runs: split it "
            f"into several sweeps or use fewer values",
            "grid",
        )
    return runs


def _load_base(base: Any, folder: Path) -> dict[str, Any]:
    if base is None:
        raise SweepError(
            'sweep field `base` is missing: give a scenario file (base = "file.toml", '
            "relative to the sweep file) or an inline [base] table",
            "base",
        )
    if isinstance(base, Mapping):
        return _absolute_profiles(copy.deepcopy(dict(base)), folder)
    if isinstance(base, str | os.PathLike):
        path = Path(base)
        if not path.is_absolute():
            path = folder / path
        if not path.exists() and not path.is_symlink():
            raise FileNotFoundError(f"base scenario of the sweep not found: {path}")
        try:
            loaded = tomllib.loads(_read_toml(path, "scenario file"))
        except tomllib.TOMLDecodeError as err:
            raise SweepError(f"base scenario {path} is not valid TOML: {err}", "base") from err
        return _absolute_profiles(loaded, path.resolve().parent)
    raise SweepError(
        f"sweep field `base` must be a file name or a table, got {type(base).__name__}", "base"
    )


def _is_profile_file(value: Any) -> bool:
    return isinstance(value, str) and value.endswith(".toml")


def _absolute_profile(path: str, value: Any, folder: Path) -> Any:
    """A sweep value for ``path``: a relative profile file set on a host's
    ``profile``, or a relative capture set on a generator's ``capture``,
    made absolute against ``folder`` (the sweep file's)."""
    relative = isinstance(value, str) and value != "" and not Path(value).is_absolute()
    if path.endswith(".profile") and _is_profile_file(value) and relative:
        return str((folder / value).resolve())
    if path.endswith(".capture") and relative:
        return str((folder / value).resolve())
    return value


def _absolute_profiles(scenario: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``scenario`` with each host's relative profile file and each
    generator's relative capture made absolute against ``folder`` (the
    scenario file's), in place: the points run from TOML text, away from the
    file (as ``holdoff run FILE`` finds them)."""
    hosts = scenario.get("hosts")
    if isinstance(hosts, list):
        for host in hosts:
            if isinstance(host, dict) and "profile" in host:
                host["profile"] = _absolute_profile(".profile", host.get("profile"), folder)
    gens = scenario.get("generators")
    if isinstance(gens, list):
        for gen in gens:
            if isinstance(gen, dict) and "capture" in gen:
                gen["capture"] = _absolute_profile(".capture", gen.get("capture"), folder)
    return scenario


#: Digests of capture files already read: (path, size, mtime [ns]) -> sha256.
_CAPTURE_DIGESTS: dict[tuple[str, int, int], str] = {}


def _capture_file_digests(scenario: Mapping[str, Any]) -> dict[str, str]:
    """sha256 of each capture file the scenario's replays read, by path
    (empty without a replay): part of the store key, so that a capture taken
    again under the same name is run again, not read from the store. Each
    file is read once a process while its size and time stay the same."""
    out: dict[str, str] = {}
    for gen in scenario.get("generators") or []:
        cap = gen.get("capture") if isinstance(gen, Mapping) else None
        if not isinstance(cap, str) or not cap:
            continue
        try:
            st = os.stat(cap)
        except OSError:
            out[cap] = ""  # the core names the missing file
            continue
        if not stat.S_ISREG(st.st_mode):
            # A FIFO would block the read, a device never end: never opened
            # here; the core refuses them by name.
            out[cap] = ""
            continue
        memo = (cap, st.st_size, st.st_mtime_ns)
        if memo not in _CAPTURE_DIGESTS:
            try:
                with open(cap, "rb") as f:
                    _CAPTURE_DIGESTS[memo] = hashlib.file_digest(f, "sha256").hexdigest()
            except OSError:
                _CAPTURE_DIGESTS[memo] = ""  # the core names what is wrong
        out[cap] = _CAPTURE_DIGESTS[memo]
    return out


def _profile_file_digests(scenario: Mapping[str, Any]) -> dict[str, str]:
    """sha256 of each profile file the scenario's hosts name, by path (empty
    when every host uses a preset): part of the store key."""
    out: dict[str, str] = {}
    for host in scenario.get("hosts") or []:
        profile = host.get("profile") if isinstance(host, Mapping) else None
        if _is_profile_file(profile):
            try:
                data = inputs.read_bytes(str(profile), "profile file")
            except inputs.InputError as err:
                if not Path(str(profile)).exists():
                    out[str(profile)] = ""  # the core names the missing file
                    continue
                raise SweepError(str(err), "profile") from None
            out[str(profile)] = hashlib.sha256(data).hexdigest()
    return out


# -- points -----------------------------------------------------------------------


def derive_seed(base_seed: int, params: Mapping[str, Any], replicate: int) -> int:
    """The seed of one point: a hash of (sweep seed, parameters, replicate), below 2**63."""
    payload = canonical_json({"seed": base_seed, "params": dict(params), "replicate": replicate})
    digest = hashlib.sha256(payload.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def combinations(spec: SweepSpec) -> list[dict[str, Any]]:
    """The parameter sets of a sweep: the grid's (last field fastest), then ``points``."""
    combos: list[dict[str, Any]] = [{}]
    for path, values in spec.grid.items():
        combos = [{**c, path: v} for c in combos for v in values]
    if not spec.grid:
        combos = [] if spec.points else [{}]
    combos.extend(dict(p) for p in spec.points)
    return combos


def expand(spec: SweepSpec) -> list[SweepPoint]:
    """Every point of a sweep, in order (parameter set, then replicate).

    Every point's scenario is checked by the core while its store key is taken
    (the key is over the validated scenario, every default filled in).

    Raises:
        SweepError: a path does not fit the base scenario, two points have the
            same parameters, or a point's scenario is not valid (the message
            names the point, its parameters and the field).
    """
    count_points(spec)
    version = _core.version()
    seen: dict[str, int] = {}
    points: list[SweepPoint] = []
    for combo_index, params in enumerate(combinations(spec)):
        canon = canonical_json(params)
        if canon in seen:
            raise SweepError(
                f"parameter sets {seen[canon]} and {combo_index} are the same: "
                f"{_params_label(params)}"
            )
        seen[canon] = combo_index
        scenario = copy.deepcopy(spec.base)
        for path, value in params.items():
            set_path(scenario, path, value)
        scenario = _without_none(scenario)
        try:
            # Keys are taken over the validated scenario: this checks it, once
            # per parameter set (replicates differ only in the seed).
            normalized = normalize(scenario)
        except _core.ScenarioError as err:
            raise SweepError(
                f"point {len(points)} ({_params_label(params)}): {err}",
                err.field,
            ) from err
        digests = _profile_file_digests(scenario)
        if digests:
            normalized = {**normalized, "profile_files": digests}
        captures = _capture_file_digests(scenario)
        if captures:
            normalized = {**normalized, "capture_files": captures}
        for replicate in range(spec.replicates):
            if "seed" in params and spec.replicates == 1:
                seed = int(params["seed"])
            else:
                seed = derive_seed(spec.seed, params, replicate)
            point_scenario = {**scenario, "seed": seed}
            key = normalized_hash({**normalized, "seed": seed}, version)
            points.append(
                SweepPoint(
                    index=len(points),
                    replicate=replicate,
                    params=params,
                    seed=seed,
                    scenario=point_scenario,
                    key=key,
                    files={**digests, **captures},
                )
            )
    return points


def _params_label(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={param_label(v)}" for k, v in params.items()) or "base"


# -- running ----------------------------------------------------------------------


@dataclass
class SweepRun:
    """The outcome of :func:`run_sweep`."""

    spec: SweepSpec
    points: list[SweepPoint]
    table: pd.DataFrame
    computed: int
    cached: int
    wall_time_s: float
    #: Each point's stored record (metrics, scenario hash), by store key.
    records: dict[str, dict[str, Scalar]] = field(default_factory=dict)
    #: With replicates: one row per parameter set, each metric's mean over the
    #: replicates and its 95 % interval (:func:`replicate_table`); else None.
    summary: pd.DataFrame | None = None


def run_sweep(
    sweep: SweepSource,
    *,
    store: str | os.PathLike[str] | ResultStore | None = DEFAULT_STORE,
    executor: Executor = "process",
    workers: int | None = None,
    address: str | None = None,
    progress: Progress | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> SweepRun:
    """Runs every point of a sweep that the store does not hold yet; returns the table.

    Args:
        sweep: a sweep file path, TOML text, a dict shaped like the file, or a spec.
        store: the result store folder (``None``: keep results in memory only).
        executor: ``"serial"`` (this process), ``"process"`` (local worker
            processes, the default) or ``"ray"`` (a Ray cluster; needs the
            ``ray`` extra).
        workers: worker processes for ``"process"`` (default: every core).
        address: the Ray cluster to connect to (default: the one already
            initialised in this process, else a new local one).
        progress: called with (finished, total) as points to compute finish.
        on_start: called once with (points to compute, points found in the store).

    Raises:
        SweepError: the sweep or one of its points is not valid.
        SimulationError: a point failed while running (the message names it).
        KeyboardInterrupt: Ctrl-C; the workers are stopped, every point
            finished before it is in the store (running the sweep again
            resumes), and the exception carries ``finished``, ``remaining``
            and ``cached`` (point counts).
    """
    if executor not in EXECUTORS:
        raise SweepError(
            f"unknown executor {executor!r}; allowed: {', '.join(EXECUTORS)}", "executor"
        )
    if workers is not None and not 1 <= workers <= max_workers():
        raise SweepError(
            f"workers must be from 1 to {max_workers()} (four per core), got {workers}", "workers"
        )
    started = time.perf_counter()
    spec = load_sweep(sweep)
    points = expand(spec)
    result_store = store if isinstance(store, ResultStore) or store is None else ResultStore(store)
    records: dict[str, dict[str, Scalar]] = {}
    pending: list[SweepPoint] = []
    queued: set[str] = set()
    if result_store is not None:
        result_store.cleanup()
    for point in points:
        if point.key in records or point.key in queued:
            continue
        stored = result_store.read(point.key) if result_store is not None else None
        if stored is not None:
            records[point.key] = stored
        else:
            # Not stored yet, or stored corrupt (warned about): compute it.
            pending.append(point)
            queued.add(point.key)
    cached = len(points) - len(pending)
    if on_start is not None:
        on_start(len(pending), cached)
    done = 0
    results = execute(pending, executor, workers, address)
    try:
        for point, record in results:
            full: dict[str, Scalar] = {"scenario_hash": point.key, **record}
            full["scenario_toml"] = point.text
            if point.files:
                full["input_files"] = point.files_text
            if result_store is not None:
                result_store.put(point.key, full)
                full = result_store.get(point.key)
            records[point.key] = full
            done += 1
            if progress is not None:
                progress(done, len(pending))
    except KeyboardInterrupt as err:
        # Every point finished so far is in the store; the workers are stopped.
        err.finished = done  # type: ignore[attr-defined]
        err.remaining = len(pending) - done  # type: ignore[attr-defined]
        err.cached = cached  # type: ignore[attr-defined]
        raise
    finally:
        # Ends the workers now (not when the generator is collected).
        results.close()
    table = sweep_table(points, records)
    return SweepRun(
        summary=replicate_table(table, points) if spec.replicates > 1 else None,
        spec=spec,
        points=points,
        table=table,
        computed=len(pending),
        cached=cached,
        wall_time_s=time.perf_counter() - started,
        records=records,
    )


class SweepOptions(TypedDict, total=False):
    """The keyword options :func:`sweep` passes on to :func:`run_sweep`."""

    store: str | os.PathLike[str] | ResultStore | None
    executor: Executor
    workers: int | None
    address: str | None
    progress: Progress | None


def sweep(sweep: SweepSource, **options: Unpack[SweepOptions]) -> pd.DataFrame:
    """Runs a sweep (see :func:`run_sweep`, whose defaults the options take)
    and returns its tidy table.

    One row per point in point order: ``point``, ``replicate``, one column per
    sweep parameter (its path), ``seed``, ``scenario_hash``, then the run's
    metrics (:func:`metrics_record`). Serial, process and Ray runs of the same
    sweep give identical tables.
    """
    return run_sweep(sweep, **options).table
