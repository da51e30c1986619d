"""Sweep tables: one row per run, the replicates' mean with its 95 % interval, atomic Parquet.

:func:`sweep_table` is the per-run table (one row per point and replicate).
:func:`replicate_table` aggregates the replicates of each parameter set
through :func:`holdoff.stats.ci95`: for every numeric metric ``m`` the
columns ``m`` (mean over seeds), ``m_ci95_lo`` and ``m_ci95_hi`` (its 95 %
interval; empty with one seed), and ``seeds`` (the count). Simplifies: a
metric that is NaN in some replicate (no latency recorded) is aggregated over
the replicates that have it, and ``seeds`` counts all of them. Units: each
metric's own.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from holdoff.stats import ci95, is_percentile
from holdoff.store import Scalar, canonical_json
from holdoff.sweep_paths import param_label

if TYPE_CHECKING:
    from holdoff.sweep_paths import SweepPoint

#: First columns of a sweep table; the sweep parameters come between
#: ``replicate`` and ``seed``, the metrics after ``scenario_hash``.
ID_COLUMNS = ["point", "replicate"]
KEY_COLUMNS = ["seed", "scenario_hash"]
#: Columns of a stored run that are not part of a sweep table (wall clock, provenance).
STORE_ONLY_COLUMNS = ("wall_time_s", "scenario_toml", "input_files")


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
    """The sweep-parameter columns of a sweep table: between ``replicate`` and
    ``seed`` in a per-run table, between ``point`` and ``seeds`` in a
    replicate summary (:func:`replicate_table`)."""
    cols = list(table.columns)
    if "replicate" in cols and "seed" in cols:
        return cols[cols.index("replicate") + 1 : cols.index("seed")]
    if cols[:1] == ["point"] and "seeds" in cols:
        return cols[1 : cols.index("seeds")]
    return []


def metric_columns(table: pd.DataFrame) -> list[str]:
    """The metric columns of a per-run sweep table (after ``scenario_hash``)."""
    cols = list(table.columns)
    return cols[cols.index("scenario_hash") + 1 :] if "scenario_hash" in cols else []


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def replicate_table(table: pd.DataFrame, points: Sequence[SweepPoint]) -> pd.DataFrame:
    """The replicates of each parameter set of a per-run ``table`` (row ``i``
    is ``points[i]``) as one row: ``point`` (the parameter set's index, in
    order), the parameters, ``seeds``, then for each numeric metric ``m``,
    ``m_ci95_lo`` and ``m_ci95_hi`` (:func:`holdoff.stats.ci95`: a bootstrap
    interval for percentiles, a t interval otherwise; both empty with one
    seed). A non-numeric metric is kept when every replicate agrees.
    """
    params = param_columns(table)
    metrics = metric_columns(table)
    groups: dict[str, list[int]] = {}
    for i, point in enumerate(points):
        groups.setdefault(canonical_json(point.params), []).append(i)
    records = table.to_dict("records")
    rows: list[dict[str, Any]] = []
    for index, members in enumerate(groups.values()):
        first = records[members[0]]
        row: dict[str, Any] = {"point": index, **{p: first[p] for p in params}}
        row["seeds"] = len(members)
        for m in metrics:
            values = [records[i][m] for i in members]
            if all(_is_number(v) for v in values):
                finite = [float(v) for v in values if math.isfinite(float(v))]
                if finite:
                    iv = ci95(finite, percentile=is_percentile(m))
                    row[m], row[f"{m}_ci95_lo"], row[f"{m}_ci95_hi"] = iv.mean, iv.lo, iv.hi
                else:
                    row[m], row[f"{m}_ci95_lo"], row[f"{m}_ci95_hi"] = math.nan, None, None
            elif all(v == values[0] for v in values):
                row[m] = values[0]
        rows.append(row)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    frame = pd.DataFrame.from_records(rows, columns=columns)
    for col in columns:
        if col.endswith(("_ci95_lo", "_ci95_hi")):
            frame[col] = frame[col].astype("float64")
    return frame


def replicate_records(summary: pd.DataFrame) -> list[dict[str, Any]]:
    """A replicate summary (:func:`replicate_table`) as JSON-ready dicts, one
    per parameter set: ``point``, ``params``, ``seeds``, then each metric
    ``m`` with ``m_ci95`` = ``[lo, hi]`` (``None`` without an interval); NaN
    becomes ``None``."""
    params = param_columns(summary)
    out: list[dict[str, Any]] = []
    for record in summary.to_dict("records"):
        item: dict[str, Any] = {
            "point": int(record["point"]),
            "params": {p: _json_value(record[p]) for p in params},
            "seeds": int(record["seeds"]),
        }
        for key, value in record.items():
            col = str(key)
            if col in item or col in params or col.endswith(("_ci95_lo", "_ci95_hi")):
                continue
            item[col] = _json_value(value)
            if f"{col}_ci95_lo" in record:
                lo = _json_value(record[f"{col}_ci95_lo"])
                hi = _json_value(record[f"{col}_ci95_hi"])
                ok = lo is not None and hi is not None
                item[f"{col}_ci95"] = [float(lo), float(hi)] if ok else None
        out.append(item)
    return out


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return _json_value(value.item())
    return value


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
