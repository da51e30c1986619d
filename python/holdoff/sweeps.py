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

A host profile file (``hosts[].profile = "my-host.toml"``) is found relative
to the scenario file that names it (the base scenario's folder, or the sweep
file's for values the sweep file sets); the store key covers the file's
contents, so a recalibrated profile is run again, not read from the store.

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
import math
import os
import re
import signal
import time
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import tomli_w

from holdoff import _core
from holdoff.api import _without_none, run_text
from holdoff.store import (
    DEFAULT_STORE,
    ResultStore,
    Scalar,
    canonical_json,
    normalize,
    normalized_hash,
)

Executor = Literal["serial", "process", "ray"]
EXECUTORS: tuple[str, ...] = ("serial", "process", "ray")
Progress = Callable[[int, int], None]
"""Called with (points finished in this call, points to compute in this call)."""

SWEEP_FIELDS = ("name", "description", "base", "set", "seed", "replicates", "grid", "points")
#: First columns of a sweep table; the sweep parameters come between
#: ``replicate`` and ``seed``, the metrics after ``scenario_hash``.
ID_COLUMNS = ["point", "replicate"]
KEY_COLUMNS = ["seed", "scenario_hash"]
#: Columns of a stored run that are not part of a sweep table (wall clock, provenance).
STORE_ONLY_COLUMNS = ("wall_time_s", "scenario_toml")
_MAX_SEED = 2**63 - 1

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


@dataclass(frozen=True)
class SweepPoint:
    """One run of a sweep: parameters, seed, the full scenario and its store key."""

    index: int
    replicate: int
    params: dict[str, Any]
    seed: int
    scenario: dict[str, Any]
    key: str

    @property
    def text(self) -> str:
        """The point's scenario as TOML text."""
        return tomli_w.dumps(self.scenario)

    @property
    def label(self) -> str:
        """The parameters as ``path=value`` pairs."""
        return ", ".join(f"{k}={param_label(v)}" for k, v in self.params.items()) or "base"


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
        return path.read_text(encoding="utf-8"), path
    if isinstance(source, str):
        stripped = source.strip()
        if "\n" not in stripped and (stripped.endswith(".toml") or Path(stripped).is_file()):
            path = Path(stripped)
            return path.read_text(encoding="utf-8"), path
        return source, None
    raise TypeError(f"sweep must be a path, TOML text or a dict, not {type(source).__name__}")


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
        _check_path(path, f"set.{path}")
        set_path(base, path, _absolute_profile(path, value, folder))
    name = data.get("name", fallback_name)
    if not isinstance(name, str) or not name:
        raise SweepError("sweep field `name` must be a non-empty string", "name")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise SweepError("sweep field `description` must be a string", "description")
    seed = data.get("seed", base.get("seed", 0))
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MAX_SEED:
        raise SweepError(f"sweep field `seed` must be an integer 0..2**63-1, got {seed!r}", "seed")
    replicates = data.get("replicates", 1)
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise SweepError(
            f"sweep field `replicates` must be an integer of at least 1, got {replicates!r}",
            "replicates",
        )
    grid_data = data.get("grid", {})
    if not isinstance(grid_data, Mapping):
        raise SweepError("sweep field `grid` must be a table of field path = [values]", "grid")
    grid: dict[str, list[Any]] = {}
    for path, values in grid_data.items():
        _check_path(path, f"grid.{path}")
        if not isinstance(values, list) or not values:
            raise SweepError(
                f"grid `{path}`: expected a non-empty list of values, got {values!r}", path
            )
        grid[path] = [_absolute_profile(path, v, folder) for v in values]
    points_data = data.get("points", [])
    if not isinstance(points_data, list) or not all(isinstance(p, Mapping) for p in points_data):
        raise SweepError(
            "sweep field `points` must be a list of tables ([[points]] with field path = value)",
            "points",
        )
    points: list[dict[str, Any]] = []
    for i, point in enumerate(points_data):
        for path in point:
            _check_path(path, f"points[{i}].{path}")
        points.append({k: _absolute_profile(k, v, folder) for k, v in point.items()})
    return SweepSpec(
        name=name,
        base=base,
        grid=grid,
        points=points,
        seed=seed,
        replicates=replicates,
        description=description,
    )


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
        if not path.is_file():
            raise FileNotFoundError(f"base scenario of the sweep not found: {path}")
        try:
            loaded = tomllib.loads(path.read_text(encoding="utf-8"))
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
    ``profile`` made absolute against ``folder`` (the sweep file's)."""
    if path.endswith(".profile") and _is_profile_file(value) and not Path(value).is_absolute():
        return str((folder / value).resolve())
    return value


def _absolute_profiles(scenario: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``scenario`` with each host's relative profile file made absolute
    against ``folder`` (the scenario file's), in place: the points run from
    TOML text, away from the file."""
    hosts = scenario.get("hosts")
    if isinstance(hosts, list):
        for host in hosts:
            if isinstance(host, dict):
                host["profile"] = _absolute_profile(".profile", host.get("profile"), folder)
    return scenario


def _profile_file_digests(scenario: Mapping[str, Any]) -> dict[str, str]:
    """sha256 of each profile file the scenario's hosts name, by path (empty
    when every host uses a preset): part of the store key."""
    out: dict[str, str] = {}
    for host in scenario.get("hosts") or []:
        profile = host.get("profile") if isinstance(host, Mapping) else None
        if _is_profile_file(profile):
            try:
                out[str(profile)] = hashlib.sha256(Path(str(profile)).read_bytes()).hexdigest()
            except OSError:
                out[str(profile)] = ""
    return out


# -- field paths ------------------------------------------------------------------

Token = tuple[Literal["key"], str] | tuple[Literal["index"], int] | tuple[Literal["all"], None]


def parse_path(path: str) -> list[Token]:
    """Splits ``hosts[0].nics[*].name`` into key, index and all-elements tokens."""
    if not isinstance(path, str) or not _PATH_RE.fullmatch(path):
        raise SweepError(f"`{path}` is not a field path: {_PATH_HELP}", str(path))
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
    _check_path(path, path)
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


def _check_path(path: Any, where: str) -> None:
    if not isinstance(path, str) or not _PATH_RE.fullmatch(path):
        raise SweepError(f"{where}: `{path}` is not a field path: {_PATH_HELP}", str(path))


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
                )
            )
    return points


def _params_label(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={param_label(v)}" for k, v in params.items()) or "base"


# -- metrics of one run -----------------------------------------------------------

_PORT_METRICS = ("interrupts", "rx_packets", "tx_packets", "rx_missed", "rx_ring_max_occupancy")
_HOST_METRICS = ("hardirq", "softirq", "app", "busy")
_APP_LATENCY = ("p50", "p99", "mean", "max")


def metrics_record(report: Mapping[str, Any]) -> dict[str, Scalar]:
    """One flat row of a run's report: identity, totals, then per-entity metrics.

    Totals: ``interrupts_per_s_total`` (all ports), ``cpu_util_busy_max``
    (busiest host), ``throughput_bps_total`` (all apps), ``latency_us_p99_max``
    (worst app), ``dropped``. Per entity, ``<entity>/<metric>``: ports
    ``interrupts``, ``interrupts_per_s`` (all vectors), ``rx_packets``,
    ``tx_packets``, ``rx_missed``, ``rx_ring_max_occupancy``; hosts
    ``cpu_util_{hardirq,softirq,app,busy}``; apps ``received``,
    ``throughput_bps``, ``latency_us_{p50,p99,mean,max}`` (NaN without
    latency); NetPIPE apps also ``netpipe_latency_us`` (median of its
    small-message times, sizes up to 64 B, as NetPIPE prints them: half a
    round trip), ``netpipe_latency_us_max`` and ``netpipe_mbit_mean`` (mean
    Mbit/s over its sizes of 1 KiB and more); generators ``offered_bps``,
    ``sent_packets``, ``rx_packets``; then ``ledger_*`` and ``drops_<reason>``.
    """
    summary = report.get("summary", {})
    ports = summary.get("ports", [])
    hosts = summary.get("hosts", [])
    apps = summary.get("apps", [])
    ledger = summary.get("ledger", {})
    p99s = [_num((a.get("latency_us") or {}).get("p99")) for a in apps]
    p99s = [v for v in p99s if not math.isnan(v)]
    rec: dict[str, Scalar] = {
        "holdoff_version": str(report.get("holdoff_version", "")),
        "scenario": str(report.get("scenario", "")),
        "seed": int(report.get("seed", 0)),
        "sim_time_ns": int(summary.get("sim_time_ns", 0)),
        "events_processed": int(summary.get("events_processed", 0)),
        "interrupts_per_s_total": float(sum(_port_rate(p) for p in ports)),
        "cpu_util_busy_max": max(
            (_num((h.get("cpu_util") or {}).get("busy")) for h in hosts), default=math.nan
        ),
        "throughput_bps_total": float(sum(_num(a.get("throughput_bps")) for a in apps)),
        "latency_us_p99_max": max(p99s, default=math.nan),
        "dropped": int(ledger.get("dropped", 0)),
    }
    for port in ports:
        name = port.get("port")
        rec[f"{name}/interrupts_per_s"] = _port_rate(port)
        for metric in _PORT_METRICS:
            rec[f"{name}/{metric}"] = int(port.get(metric) or 0)
    for host in hosts:
        util = host.get("cpu_util") or {}
        for metric in _HOST_METRICS:
            rec[f"{host.get('host')}/cpu_util_{metric}"] = _num(util.get(metric))
    for app in apps:
        name = app.get("app")
        latency = app.get("latency_us") or {}
        rec[f"{name}/received"] = int(app.get("received") or 0)
        rec[f"{name}/throughput_bps"] = _num(app.get("throughput_bps"))
        for stat in _APP_LATENCY:
            rec[f"{name}/latency_us_{stat}"] = _num(latency.get(stat))
        if app.get("netpipe"):
            rec.update(_netpipe_columns(name, app["netpipe"]))
    for gen in summary.get("generators", []):
        name = gen.get("generator")
        rec[f"{name}/offered_bps"] = _num(gen.get("offered_bps"))
        rec[f"{name}/sent_packets"] = int(gen.get("sent_packets") or 0)
        rec[f"{name}/rx_packets"] = int(gen.get("rx_packets") or 0)
    for key in ("injected", "delivered", "dropped", "in_flight"):
        rec[f"ledger_{key}"] = int(ledger.get(key, 0))
    rec["ledger_balanced"] = bool(ledger.get("balanced", False))
    for reason, count in summary.get("drops", {}).items():
        rec[f"drops_{reason}"] = int(count)
    return rec


#: NetPIPE sizes counted as small messages (latency) and as bulk (throughput) [B].
NETPIPE_SMALL_BYTES = 64
NETPIPE_BULK_BYTES = 1024


def _netpipe_columns(name: Any, rows: Sequence[Mapping[str, Any]]) -> dict[str, Scalar]:
    small = sorted(
        _num(r.get("t_us")) for r in rows if int(r.get("bytes", 0)) <= NETPIPE_SMALL_BYTES
    )
    bulk = [_num(r.get("mbit_per_s")) for r in rows if int(r.get("bytes", 0)) >= NETPIPE_BULK_BYTES]
    mid = len(small) // 2
    median = (
        math.nan
        if not small
        else (small[mid] if len(small) % 2 else (small[mid - 1] + small[mid]) / 2)
    )
    return {
        f"{name}/netpipe_latency_us": median,
        f"{name}/netpipe_latency_us_max": max(small, default=math.nan),
        f"{name}/netpipe_mbit_mean": sum(bulk) / len(bulk) if bulk else math.nan,
    }


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)


def _port_rate(port: Mapping[str, Any]) -> float:
    return float(sum(_num(v.get("interrupts_per_s")) for v in port.get("vectors", [])))


def compute_point(text: str) -> dict[str, Scalar]:
    """Runs one scenario (TOML text) and returns its :func:`metrics_record` plus wall time.

    A plain module-level function so that process pools and Ray can ship it.
    """
    result = run_text(text)
    record = metrics_record(result.report)
    record["wall_time_s"] = float(result.perf.get("wall_time_s", math.nan))
    return record


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
    if workers is not None and workers < 1:
        raise SweepError(f"workers must be at least 1, got {workers}", "workers")
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
    try:
        for point, record in _execute(pending, executor, workers, address):
            full: dict[str, Scalar] = {"scenario_hash": point.key, **record}
            full["scenario_toml"] = point.text
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
    table = sweep_table(points, records)
    return SweepRun(
        spec=spec,
        points=points,
        table=table,
        computed=len(pending),
        cached=cached,
        wall_time_s=time.perf_counter() - started,
        records=records,
    )


def sweep(
    sweep: SweepSource,
    *,
    store: str | os.PathLike[str] | ResultStore | None = DEFAULT_STORE,
    executor: Executor = "process",
    workers: int | None = None,
    address: str | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """Runs a sweep (see :func:`run_sweep`) and returns its tidy table.

    One row per point in point order: ``point``, ``replicate``, one column per
    sweep parameter (its path), ``seed``, ``scenario_hash``, then the run's
    metrics (:func:`metrics_record`). Serial, process and Ray runs of the same
    sweep give identical tables.
    """
    return run_sweep(
        sweep,
        store=store,
        executor=executor,
        workers=workers,
        address=address,
        progress=progress,
    ).table


def sweep_table(
    points: Sequence[SweepPoint], records: Mapping[str, Mapping[str, Scalar]]
) -> pd.DataFrame:
    """The tidy table of ``points`` from their records (keyed by scenario hash)."""
    param_names = list(dict.fromkeys(k for p in points for k in p.params))
    param_cols = {name: [param_label(p.params.get(name)) for p in points] for name in param_names}
    for name, values in param_cols.items():
        kinds = {_kind(v) for v in values if v is not None}
        if len(kinds) > 1:
            param_cols[name] = [None if v is None else _text(v) for v in values]
    rows: list[dict[str, Any]] = []
    metric_names: dict[str, None] = {}
    for i, point in enumerate(points):
        record = records[point.key]
        row: dict[str, Any] = {"point": point.index, "replicate": point.replicate}
        for name in param_names:
            row[name] = param_cols[name][i]
        row["seed"] = point.seed
        row["scenario_hash"] = point.key
        for key, value in record.items():
            if key in row or key in STORE_ONLY_COLUMNS:
                continue
            row[key] = value
            metric_names.setdefault(key)
        rows.append(row)
    columns = [*ID_COLUMNS, *param_names, *KEY_COLUMNS, *metric_names]
    return pd.DataFrame.from_records(rows, columns=columns)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return "text"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def param_columns(table: pd.DataFrame) -> list[str]:
    """The sweep-parameter columns of a sweep table (between ``replicate`` and ``seed``)."""
    cols = list(table.columns)
    if "replicate" not in cols or "seed" not in cols:
        return []
    return cols[cols.index("replicate") + 1 : cols.index("seed")]


def write_table(table: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Writes a sweep table as Parquet atomically (temporary file, then ``os.replace``)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        table.to_parquet(tmp, index=False)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


# -- executors --------------------------------------------------------------------


def _execute(
    pending: list[SweepPoint], executor: str, workers: int | None, address: str | None
) -> Iterator[tuple[SweepPoint, dict[str, Scalar]]]:
    if not pending:
        return iter(())
    if executor == "serial":
        return _serial(pending)
    if executor == "ray":
        return _ray(pending, address)
    return _processes(pending, workers)


def _serial(pending: list[SweepPoint]) -> Iterator[tuple[SweepPoint, dict[str, Scalar]]]:
    for point in pending:
        yield point, _guarded(point, partial(compute_point, point.text))


def _guarded(point: SweepPoint, call: Callable[[], dict[str, Scalar]]) -> dict[str, Scalar]:
    try:
        return call()
    except _core.HoldoffError as err:
        raise _core.SimulationError(f"sweep point {point.index} ({point.label}): {err}") from err


def _processes(
    pending: list[SweepPoint], workers: int | None
) -> Iterator[tuple[SweepPoint, dict[str, Scalar]]]:
    n = min(workers or os.cpu_count() or 1, len(pending))
    # Workers ignore SIGINT: Ctrl-C reaches the parent, which stops them.
    pool = ProcessPoolExecutor(max_workers=n, initializer=_ignore_sigint)
    try:
        futures: dict[Future[dict[str, Scalar]], SweepPoint] = {
            pool.submit(compute_point, p.text): p for p in pending
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
        _terminate_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        if process.is_alive():
            process.terminate()


def _ray_get(ray: Any, ref: Any) -> dict[str, Scalar]:
    return dict(ray.get(ref))


def _ray(
    pending: list[SweepPoint], address: str | None
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
        remote = ray.remote(num_cpus=1)(compute_point)
        refs = {remote.remote(p.text): p for p in pending}
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:
                point = refs.pop(ref)
                yield point, _guarded(point, partial(_ray_get, ray, ref))
    finally:
        if started_here:
            ray.shutdown()
