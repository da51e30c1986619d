"""Reading what an operator has (ethtool, sysctl, module-parameter, sysfs and
#define text) and the whole explanation of it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from holdoff.knobs.base import TSQ_BYTES_DEFAULT, KnobError, Note
from holdoff.knobs.check import check
from holdoff.knobs.decode import decode
from holdoff.knobs.encode import commands
from holdoff.knobs.tables import _check_driver, defaults

# -- parsing what the operator has ------------------------------------------------------

#: Every field ``ethtool -c`` reports (ethtool 6.x), in the JSON spelling.
ETHTOOL_COALESCE_KEYS = frozenset(
    {
        "adaptive-rx",
        "adaptive-tx",
        "stats-block-usecs",
        "sample-interval",
        "pkt-rate-low",
        "pkt-rate-high",
        "rx-usecs",
        "rx-frames",
        "rx-usecs-irq",
        "rx-frames-irq",
        "tx-usecs",
        "tx-frames",
        "tx-usecs-irq",
        "tx-frames-irq",
        "rx-usecs-low",
        "rx-frames-low",
        "tx-usecs-low",
        "tx-frames-low",
        "rx-usecs-high",
        "rx-frames-high",
        "tx-usecs-high",
        "tx-frames-high",
        "cqe-mode-rx",
        "cqe-mode-tx",
        "tx-aggr-max-bytes",
        "tx-aggr-max-frames",
        "tx-aggr-time-usecs",
        "rx-profile",
        "tx-profile",
    }
)

_SYSCTL_PREFIX = re.compile(r"^(?:dev\.(?:em|igb|lem)\.\d+\.|hw\.(?:em|igb)\.)")
_SYSFS_PREFIX = re.compile(r"^/sys/class/net/[^/]+/")
_TRUE = {"on": 1, "true": 1, "yes": 1, "off": 0, "false": 0, "no": 0}


@dataclass
class Parsed:
    """Knob values read from an operator's text, and what was skipped."""

    settings: dict[str, int] = field(default_factory=dict)
    #: Keys read but not moderation knobs (a sysctl dump's other lines).
    skipped: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


def parse(text: str, driver: str) -> Parsed:
    """Knob values from ``ethtool --json -c`` output, ``ethtool -c`` text,
    sysctl lines (``dev.em.0.enable_aim: 1`` or ``=1``, loader.conf lines),
    module-parameter lines (``InterruptThrottleRate=3,3`` or an ``options``
    line), sysfs lines or ``#define`` lines. Raises :class:`KnobError` for a
    value that is not a number or a key the driver does not have."""
    _check_driver(driver)
    known = defaults(driver)
    out = Parsed()
    stripped = text.strip()
    if not stripped:
        raise KnobError(
            "input", "is empty: give ethtool -c output, sysctl lines or key=value lines"
        )
    if stripped[0] in "[{":
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as err:
            raise KnobError("input", f"looks like JSON but does not parse: {err}") from None
        _parse_ethtool_json(data, known, out)
        return out
    if "Coalesce parameters" in text or re.search(r"^Adaptive RX:", text, re.M):
        _parse_ethtool_text(text, known, out)
        return out
    for raw in text.splitlines():
        line = (
            raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#define") else raw.strip()
        )
        if not line:
            continue
        for key, value in _line_pairs(line):
            _take(key, value, known, out, lenient=bool(_SYSCTL_PREFIX.match(key)))
    return out


def _line_pairs(line: str) -> list[tuple[str, str]]:
    m = re.match(r"^#define\s+(\w+)\s+(\S+)", line)
    if m:
        return [(m.group(1), m.group(2))]
    m = re.match(r"^options\s+\S+\s+(.*)$", line)
    if m:
        pairs = [p.split("=", 1) for p in m.group(1).split() if "=" in p]
        return [(k, v) for k, v in pairs]
    m = re.match(r"^([^\s:=]+)\s*[:=]\s*(.*)$", line)
    if m:
        return [(m.group(1), m.group(2))]
    m = re.match(r"^(\S+)\s+(\S+)$", line)
    if m:
        return [(m.group(1), m.group(2))]
    raise KnobError(line, "is not a 'key: value', 'key=value' or '#define KEY VALUE' line")


def _canonical(key: str, known: Mapping[str, int]) -> str:
    k = _SYSFS_PREFIX.sub("", _SYSCTL_PREFIX.sub("", key.strip()))
    if k in known:
        return k
    k2 = k.replace("_", "-")
    if k2 in known:
        return k2
    return k


def _value(key: str, text: str) -> int:
    v = text.strip().strip('"').strip("'").split(",")[0].strip().lower()
    if v in _TRUE:
        return _TRUE[v]
    try:
        return int(v, 0)
    except ValueError:
        raise KnobError(key, f"value {text.strip()!r} is not an integer (or on/off)") from None


def _take(key: str, value: str, known: Mapping[str, int], out: Parsed, *, lenient: bool) -> None:
    k = _canonical(key, known)
    if k in known:
        out.settings[k] = _value(k, value)
        if "," in value:
            out.notes.append(
                Note("info", k, f"one value per port ({value.strip()}); the first is used")
            )
        return
    if lenient:
        out.skipped.append(key)
        return
    raise KnobError(key, f"is not a knob of this driver; its knobs: {', '.join(known)}")


def _parse_ethtool_json(data: Any, known: Mapping[str, int], out: Parsed) -> None:
    if isinstance(data, list):
        if len(data) != 1 or not isinstance(data[0], dict):
            raise KnobError(
                "input", "ethtool --json -c prints a list with one object per device; give one"
            )
        data = data[0]
    if not isinstance(data, dict):
        raise KnobError("input", "the JSON is not ethtool --json -c output (an object)")
    for key, value in data.items():
        if key == "ifname":
            continue
        _ethtool_field(key, value, known, out)


def _ethtool_field(key: str, value: Any, known: Mapping[str, int], out: Parsed) -> None:
    if key not in ETHTOOL_COALESCE_KEYS and key not in known:
        raise KnobError(key, "is not an ethtool -c field")
    if isinstance(value, bool):
        v = int(value)
    elif isinstance(value, int):
        v = value
    elif isinstance(value, str):
        v = _value(key, value)
    else:
        raise KnobError(key, f"value {value!r} is not a number")
    if key in known:
        out.settings[key] = v
    elif v:
        out.notes.append(
            Note("ignored", key, f"{v}: this driver does not support the field (ethtool shows n/a)")
        )


def _parse_ethtool_text(text: str, known: Mapping[str, int], out: Parsed) -> None:
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("Coalesce parameters"):
            continue
        m = re.match(r"^Adaptive RX:\s*(\S+)\s+TX:\s*(\S+)", line)
        if m:
            for key, v in (("adaptive-rx", m.group(1)), ("adaptive-tx", m.group(2))):
                if v != "n/a":
                    _ethtool_field(key, v, known, out)
            continue
        m = re.match(r"^([\w-]+):\s*(\S+)", line)
        if not m:
            raise KnobError(line, "is not an ethtool -c line ('key: value')")
        if m.group(2) == "n/a":
            continue
        _ethtool_field(m.group(1), m.group(2), known, out)


def parse_ring(text: str) -> tuple[int | None, int | None]:
    """(RX, TX) ring sizes in use from ``ethtool -g`` text or ``--json`` output."""
    stripped = text.strip()
    if stripped[:1] in "[{":
        data = json.loads(stripped)
        if isinstance(data, list):
            data = data[0]
        return _opt_int(data.get("rx")), _opt_int(data.get("tx"))
    current = text.split("Current hardware settings", 1)
    part = current[1] if len(current) == 2 else text
    rx = re.search(r"^\s*RX:\s*(\d+)", part, re.M)
    tx = re.search(r"^\s*TX:\s*(\d+)", part, re.M)
    return (int(rx.group(1)) if rx else None, int(tx.group(1)) if tx else None)


def _opt_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def explain(
    driver: str,
    settings: Mapping[str, int],
    *,
    chip: str | None = None,
    extra_notes: Iterable[Note] = (),
    speed_mbps: int | None = None,
    rx_ring: int | None = None,
    tx_ring: int | None = None,
    tsq_bytes: int = TSQ_BYTES_DEFAULT,
    iface: str = "eth0",
) -> dict[str, Any]:
    """Everything ``holdoff explain`` reports, JSON-ready: the decode, the
    warnings, the assumptions (link speed, rings, TSQ) and the commands."""
    d = decode(driver, settings, chip)
    d.notes[:0] = list(extra_notes)
    c = d.chip
    warnings = check(
        d, speed_mbps=speed_mbps, rx_ring=rx_ring, tx_ring=tx_ring, tsq_bytes=tsq_bytes
    )
    out = d.to_dict()
    out["assumptions"] = {
        "speed_mbps": speed_mbps or c.link_mbps,
        "rx_ring": rx_ring or c.rx_ring,
        "tx_ring": tx_ring or c.tx_ring,
        "tsq_bytes": tsq_bytes,
    }
    out["warnings"] = [{"key": w.key, "message": w.message} for w in warnings]
    out["commands"] = commands(d, iface)
    return out
