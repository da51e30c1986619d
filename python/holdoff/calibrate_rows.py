"""Calibration rows: reading the measurements CSV into scenarios set up as the machine was.

One CSV row is one measurement (see :mod:`holdoff.calibrate` for the
columns). The file is read through :mod:`holdoff.inputs` (a regular file of
at most 64 MB) and parsed here with the standard ``csv`` module, so that:

- every cell holds exactly one value: a measured cell is one decimal number
  (``100000``, ``1.5e5``), a setup cell one TOML value (as ``--set``);
  anything after the value (``100000\\n...``, ``8000 9000``) is an error
  naming the row and the column;
- NaN and infinite cells are refused by name;
- a column named twice is refused by the name it has in the file;
- at most :data:`MAX_ROWS` rows (counted while parsing, before any scenario is read).

Comments: a line whose first non-blank character is ``#``, and anything from a
``#`` outside double quotes to the end of its line; blank lines are skipped.
Rows are numbered from 1 in file order, comments and blank lines not counted.
Units: as the measured columns' (``MEASURED``).
"""

from __future__ import annotations

import copy
import csv
import io
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from holdoff import _core, inputs, sweep_paths
from holdoff.api import validate_text
from holdoff.sweeps import SweepError, set_path

#: Measured columns: name -> (unit, what it is).
MEASURED: dict[str, tuple[str, str]] = {
    "throughput_mbps": ("Mb/s", "application goodput"),
    "interrupts_per_s": ("1/s", "interrupts of the host's NICs, all vectors"),
    "cpu_pct": ("%", "busy CPU in percent of one core (summed over cores)"),
    "cpu_pct_all": ("%", "busy CPU in percent of all cores"),
    "rx_pps": ("1/s", "frames received by the host's NICs"),
    "latency_us": ("us", "application latency, median"),
    "latency_p99_us": ("us", "application latency, 99th percentile"),
}
#: Top-level scenario fields a setup column may name without a `.` or `[`.
SETUP_FIELDS: tuple[str, ...] = ("duration_ms", "seed", "sample_interval_us")
#: The other columns.
OTHER_COLUMNS: tuple[str, ...] = ("scenario", "weight", "app", "label")

#: The most rows one calibration reads. A fit runs every row at each of its
#: evaluations (the cost count plus one per step, tens of steps): 1 000 rows
#: of 0.1 s are hours on a workstation, and real measurement sets have tens.
MAX_ROWS = 1_000
#: A measured cell: one decimal number, nothing before or after it.
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_NOT_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


class CalibrationError(ValueError):
    """The rows, the options or the fit cannot give a profile (the message says
    which row, column or cost, and what to change)."""


@dataclass
class Row:
    """One measurement: a scenario set up as the machine was, and what was measured."""

    number: int
    label: str
    scenario_file: Path
    doc: dict[str, Any] = field(repr=False)
    host_index: int
    host: str
    app: str | None
    measured: dict[str, float]
    weight: float

    @property
    def base_dir(self) -> str:
        return str(self.scenario_file.resolve().parent)


# -- reading the rows ---------------------------------------------------------------


def known_columns() -> str:
    return (
        f"{', '.join(OTHER_COLUMNS)}, the measured columns {', '.join(MEASURED)}, "
        f"and setup columns: a scenario field path (with `.` or `[`, e.g. "
        f"generators[0].rate_pps) or {', '.join(SETUP_FIELDS)}"
    )


def _is_setup(column: str) -> bool:
    return "." in column or "[" in column or column in SETUP_FIELDS


def _number(cell: str, where: str, *, positive: bool = False) -> float:
    if _NOT_FINITE.fullmatch(cell):
        raise CalibrationError(
            f"{where}: `{cell}` is not a finite number (NaN or infinite); give the measured "
            f"value, or leave the cell empty if it was not measured"
        )
    if not _NUMBER.fullmatch(cell):
        raise CalibrationError(
            f"{where}: `{inputs.shorten(inputs.printable(cell), 60)}` is not one number; a cell "
            f"holds one value and nothing after it (e.g. 100000 or 1.5e5)"
        )
    v = float(cell)
    if not math.isfinite(v):
        raise CalibrationError(f"{where}: `{cell}` is not a finite number (too large)")
    if v < 0:
        raise CalibrationError(f"{where}: {cell} is negative; measurements and weights are >= 0")
    if positive and v == 0:
        raise CalibrationError(
            f"{where}: 0 gives no relative residual; leave the cell empty if it was not measured"
        )
    return v


def _uncommented(text: str) -> Iterator[str]:
    """The lines of ``text`` (lazily) with comments cut (``#`` outside double
    quotes, to the end of the line), blank and comment-only lines left out."""
    quoted = False
    for raw in io.StringIO(text):
        line = raw.rstrip("\r\n")
        if "#" in line or '"' in line or quoted:
            kept: list[str] = []
            for ch in line:
                if ch == '"':
                    quoted = not quoted
                elif ch == "#" and not quoted:
                    break
                kept.append(ch)
            line = "".join(kept)
        if line.strip() or quoted:
            yield line + "\n"


def read_csv(csv_file: Path) -> tuple[list[str], list[dict[str, str]]]:
    """The header and the rows (column -> stripped cell) of a calibration CSV.

    Raises :class:`CalibrationError` for a file that cannot be read (what it
    is, its size against the limit), no header, a column without a name or
    named twice, a row with more cells than the header, or more than
    :data:`MAX_ROWS` rows (the file is parsed row by row and parsing stops
    there, so a huge file never becomes a huge list).
    """
    try:
        text = inputs.read_text(csv_file, "calibration CSV")
    except inputs.InputError as err:
        raise CalibrationError(str(err)) from None
    records: list[list[str]] = []
    try:
        for record in csv.reader(_uncommented(text)):
            if not any(cell.strip() for cell in record):
                continue
            records.append(record)
            if len(records) > MAX_ROWS + 1:
                raise CalibrationError(
                    f"{csv_file} has more than {MAX_ROWS:,} rows; the limit is {MAX_ROWS:,} "
                    f"rows (each is run at every step of the fit): fit to a subset"
                )
    except csv.Error as err:
        raise CalibrationError(f"{csv_file} is not a CSV file: {err}") from None
    if not records:
        raise CalibrationError(
            f"{csv_file} has no rows: write a header line of column names, then one line per "
            f"measurement (docs/calibrate.md)"
        )
    header = [c.strip() for c in records[0]]
    seen: set[str] = set()
    for c in header:
        if not c:
            raise CalibrationError(f"{csv_file}: a column has no name; name every column")
        shown = inputs.shorten(inputs.printable(c), 60)
        if c in seen:
            raise CalibrationError(
                f"{csv_file}: column `{shown}` appears twice in the header; keep one"
            )
        seen.add(c)
        if c not in MEASURED and c not in OTHER_COLUMNS and not _is_setup(c):
            raise CalibrationError(
                f"{csv_file}: unknown column `{shown}`; the columns are {known_columns()}"
            )
    body = records[1:]
    rows: list[dict[str, str]] = []
    for number, record in enumerate(body, start=1):
        if len(record) > len(header):
            raise CalibrationError(
                f"row {number}: {len(record)} cells for {len(header)} columns; quote a cell "
                f'that holds a comma ("...")'
            )
        cells = [c.strip() for c in record] + [""] * (len(header) - len(record))
        rows.append(dict(zip(header, cells, strict=True)))
    return header, rows


def read_rows(
    csv_file: Path,
    *,
    scenario: Path | None = None,
    profile: str,
    host: str | None = None,
    app: str | None = None,
    assignments: Sequence[str] = (),
) -> list[Row]:
    """The rows of ``csv_file``, each with its scenario set up and checked.

    ``profile``: the base profile (a preset name, or a profile file relative to
    the working directory); ``host``: the calibrated host's name (default: the
    one host whose profile is ``profile``). ``assignments``: ``path=value``
    changes applied to every row's scenario before its own setup columns.
    """
    header, records = read_csv(csv_file)
    if not records:
        raise CalibrationError(f"{csv_file} has a header but no rows")
    if "scenario" not in header and scenario is None:
        raise CalibrationError(
            f"{csv_file}: no `scenario` column; add one (the scenario file of each row, "
            f"relative to the CSV) or give --scenario FILE for every row"
        )
    global_changes = []
    for item in assignments:
        try:
            global_changes.append(sweep_paths.parse_set(item, "--set"))
        except inputs.InputError as err:
            raise CalibrationError(str(err)) from None
    rows = []
    loaded: dict[Path, dict[str, Any]] = {}
    folder = csv_file.resolve().parent
    for i, record in enumerate(records):
        rows.append(
            _row(
                i + 1,
                record,
                folder,
                scenario=scenario,
                profile=profile,
                host=host,
                app=app,
                changes=global_changes,
                loaded=loaded,
            )
        )
    return rows


def _row(
    number: int,
    cells: dict[str, str],
    folder: Path,
    *,
    scenario: Path | None,
    profile: str,
    host: str | None,
    app: str | None,
    changes: Sequence[tuple[str, Any]],
    loaded: dict[Path, dict[str, Any]],
) -> Row:
    where = f"row {number}"
    measured: dict[str, float] = {}
    for col in MEASURED:
        cell = cells.get(col, "")
        if cell:
            measured[col] = _number(cell, f"{where}, column {col}", positive=True)
    if not measured:
        raise CalibrationError(
            f"{where}: no measured value; fill at least one of {', '.join(MEASURED)}"
        )
    weight = 1.0
    if cells.get("weight"):
        weight = _number(cells["weight"], f"{where}, column weight", positive=True)
    if cells.get("scenario"):
        path = Path(cells["scenario"])
        scenario_file = path if path.is_absolute() else folder / path
    elif scenario is not None:
        scenario_file = scenario
    else:
        raise CalibrationError(f"{where}, column scenario: empty; name the row's scenario file")
    doc = _scenario_doc(scenario_file, f"{where}, column scenario", loaded)
    setup = [(c, v) for c, v in cells.items() if _is_setup(c) and v]
    for field_path, value in changes:
        try:
            set_path(doc, field_path, value)
        except SweepError as err:
            raise CalibrationError(f"{where}: --set {err}") from None
    for col, cell in setup:
        try:
            field_path, value = sweep_paths.parse_set(f"{col}={cell}", f"{where}, column {col}")
            set_path(doc, field_path, value)
        except inputs.InputError as err:
            raise CalibrationError(str(err)) from None
        except SweepError as err:
            raise CalibrationError(f"{where}, column {col}: {err}") from None
    hosts: list[Any] = doc["hosts"] if isinstance(doc.get("hosts"), list) else []
    index = _host_index(hosts, host, profile, scenario_file, where)
    doc["hosts"][index]["profile"] = _profile_value(profile)
    base_dir = str(scenario_file.resolve().parent)
    try:
        validate_text(tomli_w.dumps(doc), base_dir=base_dir)
    except _core.ScenarioError as err:
        raise CalibrationError(f"{where} (scenario {scenario_file}): {err}") from None
    label = cells.get("label") or ", ".join(
        [scenario_file.stem] + [f"{c.rsplit('.', 1)[-1]}={v}" for c, v in setup]
    )
    return Row(
        number=number,
        label=label,
        scenario_file=scenario_file,
        doc=doc,
        host_index=index,
        host=str(doc["hosts"][index].get("name")),
        app=cells.get("app") or app,
        measured=measured,
        weight=weight,
    )


def _scenario_doc(
    scenario_file: Path, where: str, loaded: dict[Path, dict[str, Any]]
) -> dict[str, Any]:
    """A row's scenario as a dict (a copy: the row changes it), each file read
    once through :mod:`holdoff.inputs` (``loaded`` keeps them by path)."""
    key = scenario_file.resolve()
    if key not in loaded:
        try:
            loaded[key] = inputs.read_toml(scenario_file, "scenario file")
        except inputs.InputError as err:
            raise CalibrationError(f"{where}: {err}") from None
    return copy.deepcopy(loaded[key])


def _profile_value(profile: str) -> str:
    """A profile as a row's scenario names it: a file absolute (rows live elsewhere)."""
    if profile.endswith(".toml"):
        return str(Path(profile).resolve())
    return profile


def _host_index(
    hosts: list[Any], host: str | None, profile: str, scenario_file: Path, where: str
) -> int:
    names = [str(h.get("name")) for h in hosts if isinstance(h, dict)]
    if host is not None:
        if host not in names:
            raise CalibrationError(
                f"{where}: scenario {scenario_file} has no host {host!r}; "
                f"its hosts: {', '.join(names) or 'none'}"
            )
        return names.index(host)
    want = _profile_value(profile)
    found = []
    for i, h in enumerate(hosts):
        p = str(h.get("profile", ""))
        if p.endswith(".toml") and not Path(p).is_absolute():
            p = str((scenario_file.resolve().parent / p).resolve())
        if p == want:
            found.append(i)
    if len(found) != 1:
        what = "no host" if not found else f"{len(found)} hosts"
        raise CalibrationError(
            f"{where}: {what} of scenario {scenario_file} use profile {profile!r}; name the "
            f"calibrated host with --host (its hosts: {', '.join(names) or 'none'})"
        )
    return found[0]


def profile_of_host(csv_file: Path, host: str, scenario: Path | None) -> str:
    """The profile ``host`` has in the first row's scenario (the default
    ``--profile``); a profile file comes back relative to the working
    directory."""
    rows = read_rows_head(csv_file)
    cell = rows.get("scenario", "")
    if cell:
        path = Path(cell)
        scenario_file = path if path.is_absolute() else csv_file.resolve().parent / path
    elif scenario is not None:
        scenario_file = scenario
    else:
        raise CalibrationError("row 1, column scenario: empty; name the row's scenario file")
    doc = _scenario_doc(scenario_file, "row 1, column scenario", {})
    for h in doc.get("hosts") or []:
        if isinstance(h, dict) and h.get("name") == host:
            p = str(h.get("profile", ""))
            if p.endswith(".toml") and not Path(p).is_absolute():
                return str(scenario_file.resolve().parent / p)
            return p
    raise CalibrationError(f"row 1: scenario {scenario_file} has no host {host!r}")


def read_rows_head(csv_file: Path) -> dict[str, str]:
    """The first row's cells (for defaults), or an error naming the file."""
    _, records = read_csv(csv_file)
    if not records:
        raise CalibrationError(f"{csv_file} has a header but no rows")
    return records[0]


def parse_costs(text: str | None) -> list[str] | None:
    """``a,b,c`` as a list (None: the default costs)."""
    if text is None:
        return None
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise CalibrationError("--costs: name at least one cost, e.g. --costs rx_packet_ns")
    return names


def parse_start(items: Sequence[str]) -> dict[str, int]:
    """``cost=value`` items (``--start``) as a dict."""
    out: dict[str, int] = {}
    for item in items:
        for part in item.split(","):
            name, sep, value = part.partition("=")
            if not sep or not name.strip():
                raise CalibrationError(
                    f"--start `{part}`: expected cost=value, e.g. rx_packet_ns=2000"
                )
            try:
                out[name.strip()] = int(value)
            except ValueError:
                raise CalibrationError(
                    f"--start {name.strip()}: `{value}` is not an integer"
                ) from None
    return out
