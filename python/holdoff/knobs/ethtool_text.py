"""Reading what ``ethtool`` prints: ``-c`` text of every version, ``--json -c``,
``-g`` rings, ``-C`` command lines and netlink error text.

Formats read (the corpus in ``tests/data/ethtool/`` has a real or constructed
file of each, with its source):

- ioctl era (ethtool 2.x to 5.x without netlink): every field printed, the
  unsupported ones as ``0``; the old spellings ``rx-frame-low``,
  ``rx-frame-high`` (and ``tx-``) for ``rx-frames-low`` ...;
- netlink (ethtool 5.7 and later): ``n/a`` for a field the driver does not
  report, tab-aligned values, ``Adaptive RX: n/a  TX: n/a``;
- ethtool 5.15 and later: ``CQE mode RX: on  TX: off``; 6.4 to 6.13 print
  ``tx-aggr-time-usecs`` without its colon (fixed in 6.14);
- ``--json -c``: one object per device (``"ifname"``); before 6.14 the
  adaptive and CQE booleans were both printed as ``"rx"``/``"tx"`` (the same
  key twice, adaptive first), so the object is read as a list of pairs;
- ``-g`` rings (``Current hardware settings``), ``ethtool -C IFACE k v ...``
  lines, ``netlink error: ...`` lines and shell prompts around them.

Simplifies: one device per input (a JSON list of several is refused); the
interface name of the first header (or ``-C`` line) is the input's.
Units: as ethtool prints them (us, frames, descriptors).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from holdoff import inputs
from holdoff.knobs.base import KnobError, Note
from holdoff.knobs.cq_drivers import ENA_SUPPORTED, UNSUPPORTED

#: Drivers whose ``supported_coalesce_params`` holdoff knows: netlink
#: ethtool refuses every other coalescing key for them.
NETLINK_SUPPORTED: dict[str, tuple[str, ...]] = {"linux-ena": ENA_SUPPORTED}

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

#: The text spellings ethtool prints that differ from the JSON/``-C`` names.
_TEXT_SPELLING = {
    "rx-frame-low": "rx-frames-low",
    "tx-frame-low": "tx-frames-low",
    "rx-frame-high": "rx-frames-high",
    "tx-frame-high": "tx-frames-high",
}

#: Fields a driver reports that are not interrupt-moderation knobs, with what they are.
REPORTED_FIELDS: dict[str, dict[str, str]] = {
    "linux-igb": {
        "tx-frames-irq": "igb's TX work limit (tx_work_limit: TX descriptors cleaned per poll, "
        "default IGB_DEFAULT_TX_WORK 128), reported and set through this field by "
        "igb_get_coalesce/igb_set_coalesce; it bounds the work of one poll, not when the "
        "interrupt fires",
    },
    "linux-ixgbe": {
        "tx-frames-irq": "ixgbe's TX work limit (tx_work_limit, default IXGBE_DEFAULT_TX_WORK "
        "256), reported and set through this field by ixgbe_get_coalesce/ixgbe_set_coalesce; "
        "not an interrupt-moderation knob",
    },
    "linux-i40e": {
        "tx-frames-irq": "i40e's work limit (vsi->work_limit, default I40E_DEFAULT_IRQ_WORK "
        "256), reported and set through this field by __i40e_get_coalesce/__i40e_set_coalesce; "
        "not an interrupt-moderation knob",
        "tx-usecs-high": "i40e reports the vector's rate limit here too and refuses a "
        "different value ('tx-usecs-high is not used, please program rx-usecs-high')",
    },
}

#: ``ethtool --json -g`` keys -> :class:`Parsed` fields.
_JSON_RING = {"rx": "rx_ring", "tx": "tx_ring", "rx-max": "rx_ring_max", "tx-max": "tx_ring_max"}
_TRUE = {"on": 1, "true": 1, "yes": 1, "off": 0, "false": 0, "no": 0}
_HEADER = re.compile(r"^(Coalesce|Ring|Channel) parameters for (\S+?):\s*$")
_PAIR_LINE = re.compile(r"^(Adaptive|CQE mode) RX:\s*(\S+)\s+TX:\s*(\S+)")
_FIELD = re.compile(r"^([A-Za-z][\w-]*(?: [A-Za-z][\w-]*)*):?\s+(\S+)")
_PROMPT = re.compile(r"^(?:\[[^\]]*\][$#]|[$#%>])\s*")
_SET_LINE = re.compile(r"^(?:sudo\s+)?(?:/\S*/)?ethtool\s+(?:-C|--coalesce)\s+(\S+)\s*(.*)$")
_GET_LINE = re.compile(r"^(?:sudo\s+)?(?:/\S*/)?ethtool\s+(?:--json\s+)?(-\w|--[\w-]+)\s+(\S+)")


@dataclass
class Parsed:
    """Knob values read from an operator's text, and everything else it said."""

    settings: dict[str, int] = field(default_factory=dict)
    #: Keys read but not moderation knobs (a sysctl dump's other lines).
    skipped: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    #: The interface the input names (``Coalesce parameters for enp3s0:``,
    #: ``"ifname"``, ``dev.em.1.`` -> ``em1``), or None.
    iface: str | None = None
    #: A FreeBSD sysctl unit (``dev.em.1.`` -> 1), or None.
    unit: int | None = None
    #: ethtool fields printed ``n/a``: the driver does not report them.
    unsupported: list[str] = field(default_factory=list)
    #: ethtool fields the driver reports that are not moderation knobs.
    reported: dict[str, int] = field(default_factory=dict)
    #: ``netlink error: ...`` text in the input.
    errors: list[str] = field(default_factory=list)
    #: Ring sizes in use and their maxima (``ethtool -g``) [descriptors].
    rx_ring: int | None = None
    tx_ring: int | None = None
    rx_ring_max: int | None = None
    tx_ring_max: int | None = None
    #: What the input was recognised as (``ethtool -c text``, ``sysctl`` ...).
    formats: list[str] = field(default_factory=list)
    #: The input had a recognised structure (an ethtool header, a listing).
    recognised: bool = False

    @property
    def usable(self) -> bool:
        """Whether anything was read: a setting, an ethtool field, a ring, an error."""
        return bool(
            self.settings
            or self.unsupported
            or self.reported
            or self.errors
            or self.rx_ring is not None
            or self.tx_ring is not None
            or self.recognised
        )

    def merge(self, other: Parsed) -> None:
        """Add what ``other`` read (later values win; the first interface name stays)."""
        self.settings.update(other.settings)
        self.skipped += other.skipped
        self.notes += other.notes
        self.unsupported += [k for k in other.unsupported if k not in self.unsupported]
        self.reported.update(other.reported)
        self.errors += other.errors
        self.formats += [f for f in other.formats if f not in self.formats]
        if other.iface and self.iface and other.iface != self.iface:
            self.notes.append(
                Note(
                    "info",
                    "interface",
                    f"the inputs name {self.iface} and {other.iface}; commands use {self.iface}",
                )
            )
        self.iface = self.iface or other.iface
        self.recognised = self.recognised or other.recognised
        self.unit = self.unit if self.unit is not None else other.unit
        for name in ("rx_ring", "tx_ring", "rx_ring_max", "tx_ring_max"):
            if getattr(other, name) is not None:
                setattr(self, name, getattr(other, name))


def value_of(key: str, text: str) -> int:
    """An integer (or on/off, true/false) as an operator writes it."""
    v = text.strip().strip('"').strip("'").split(",")[0].strip().lower()
    if v in _TRUE:
        return _TRUE[v]
    try:
        return int(v, 0)
    except ValueError:
        raise KnobError(key, f"value {text.strip()!r} is not an integer (or on/off)") from None


def is_ethtool_text(text: str) -> bool:
    """Whether ``text`` is ethtool output (or ethtool command lines and their errors)."""
    for raw in text.splitlines():
        line = _PROMPT.sub("", raw.strip())
        if (
            _HEADER.match(line)
            or _PAIR_LINE.match(line)
            or line.startswith("netlink error:")
            or _SET_LINE.match(line)
            or _GET_LINE.match(line)
        ):
            return True
    return False


def _field_note(driver: str, key: str, v: int, known: Mapping[str, int], out: Parsed) -> None:
    """Record one ethtool field with a value: a knob setting, or what it is."""
    if key in known:
        out.settings[key] = v
        return
    what = REPORTED_FIELDS.get(driver, {}).get(key)
    if what is not None:
        out.reported[key] = v
        out.notes.append(Note("info", key, f"{v}: {what}"))
    elif key not in ETHTOOL_COALESCE_KEYS:
        out.skipped.append(key)
        out.notes.append(Note("info", key, "not an ethtool -c field; skipped"))
    elif driver in NETLINK_SUPPORTED and v:
        out.notes.append(
            Note(
                "refused",
                key,
                f"{v}: {UNSUPPORTED} ({driver}'s supported_coalesce_params: "
                f"{', '.join(NETLINK_SUPPORTED[driver])}; ioctl-era ethtool printed it as 0)",
            )
        )
    elif v:
        out.notes.append(
            Note("ignored", key, f"{v}: holdoff's model of {driver} has no such knob; not used")
        )
    # A 0 for a field that is no knob here: ioctl-era ethtool prints unsupported fields as 0.


def _unsupported(key: str, known: Mapping[str, int], out: Parsed) -> None:
    out.unsupported.append(key)
    if key in known:
        out.notes.append(
            Note(
                "info",
                key,
                "ethtool shows n/a: this device's driver does not report it (check --driver); "
                "the default is assumed",
            )
        )


def parse_ethtool_text(text: str, driver: str, known: Mapping[str, int], out: Parsed) -> None:
    """Read ``ethtool -c``/``-g`` text, ``-C`` lines and netlink errors into ``out``."""
    section = "coalesce"
    ring_part = ""
    pending_set: dict[str, int] = {}
    out.formats.append("ethtool text")
    for raw in text.splitlines():
        line = _PROMPT.sub("", raw.strip())
        if not line:
            continue
        m = _HEADER.match(line)
        if m:
            section = m.group(1).lower()
            out.iface = out.iface or m.group(2)
            out.recognised = True
            continue
        if line.startswith("netlink error:") or line.startswith("Cannot get device coalesce"):
            out.errors.append(line)
            if pending_set:
                out.notes.append(
                    Note(
                        "refused",
                        ", ".join(pending_set),
                        f"the driver refused the ethtool -C line before it ({line})",
                    )
                )
                for k in pending_set:
                    out.settings.pop(k, None)
                pending_set = {}
            else:
                out.notes.append(
                    Note(
                        "refused",
                        "ethtool -c",
                        f"{line}: the device reports no coalescing parameters, so its "
                        "interrupts follow the driver's fixed behaviour",
                    )
                )
            continue
        m = _SET_LINE.match(line)
        if m:
            out.iface = out.iface or m.group(1)
            pending_set = _set_line(m.group(2), driver, known, out)
            continue
        if _GET_LINE.match(line):
            section = "coalesce"
            continue
        if section == "ring":
            ring_part = _ring_line(line, ring_part, out)
            continue
        if section == "channel":
            continue
        m = _PAIR_LINE.match(line)
        if m:
            base = "adaptive" if m.group(1) == "Adaptive" else "cqe-mode"
            for key, v in ((f"{base}-rx", m.group(2)), (f"{base}-tx", m.group(3))):
                if v == "n/a":
                    _unsupported(key, known, out)
                else:
                    _field_note(driver, key, value_of(key, v), known, out)
            continue
        m = _FIELD.match(line)
        if not m or " " in m.group(1):
            out.skipped.append(line[:80])
            continue
        key = _TEXT_SPELLING.get(m.group(1), m.group(1))
        if m.group(2) == "n/a":
            _unsupported(key, known, out)
            continue
        try:
            v = value_of(key, m.group(2))
        except KnobError:
            if key in known:
                raise
            out.skipped.append(line[:80])
            continue
        _field_note(driver, key, v, known, out)


def _set_line(args: str, driver: str, known: Mapping[str, int], out: Parsed) -> dict[str, int]:
    """The settings of one ``ethtool -C IFACE key value ...`` line."""
    words = args.split()
    got: dict[str, int] = {}
    for key, v in zip(words[0::2], words[1::2], strict=False):
        value = value_of(key, v)
        _field_note(driver, key, value, known, out)
        if key in known or (driver in NETLINK_SUPPORTED and key in ETHTOOL_COALESCE_KEYS):
            # A key netlink refuses stays pending too, so the error line after
            # it is read as that refusal.
            got[key] = value
    if len(words) % 2:
        raise KnobError(words[-1], "has no value in the ethtool -C line (KEY VALUE pairs)")
    out.formats.append("ethtool -C line")
    return got


def _ring_line(line: str, part: str, out: Parsed) -> str:
    if line.startswith("Pre-set maximums"):
        return "max"
    if line.startswith("Current hardware settings"):
        return "current"
    m = re.match(r"^(RX|TX):\s*(\d+)\s*$", line)
    if m and part:
        name = ("rx" if m.group(1) == "RX" else "tx") + ("_ring_max" if part == "max" else "_ring")
        setattr(out, name, int(m.group(2)))
    return part


def parse_ethtool_json(text: str, driver: str, known: Mapping[str, int], out: Parsed) -> None:
    """Read ``ethtool --json -c`` (or ``-g``) output into ``out``."""
    check_json_depth(text, "input")
    try:
        data = json.loads(text, object_pairs_hook=_Pairs)
    except json.JSONDecodeError as err:
        raise KnobError("input", f"looks like JSON but does not parse: {err}") from None
    except RecursionError:
        raise KnobError("input", "the JSON nests too deep") from None
    if isinstance(data, list) and not isinstance(data, _Pairs):
        if len(data) != 1 or not isinstance(data[0], _Pairs):
            raise KnobError(
                "input", "ethtool --json -c prints a list with one object per device; give one"
            )
        data = data[0]
    if not isinstance(data, _Pairs):
        raise KnobError("input", "the JSON is not ethtool --json -c output (an object)")
    out.formats.append("ethtool --json")
    seen: set[str] = set()
    for key, value in data:
        if key == "ifname":
            if isinstance(value, str):
                out.iface = out.iface or value
                out.recognised = True
            continue
        if key in ("rx", "tx") and isinstance(value, bool):
            # ethtool 6.10-6.13 printed adaptive, then CQE mode, both as "rx"/"tx".
            base = "cqe-mode" if key in seen else "adaptive"
            seen.add(key)
            key = f"{base}-{key}"
        elif key in _JSON_RING and isinstance(value, int):
            setattr(out, _JSON_RING[key], value)
            continue
        if isinstance(value, bool | int):
            _field_note(driver, key, int(value), known, out)
        elif isinstance(value, str):
            _field_note(driver, key, value_of(key, value), known, out)
        elif key in known:
            raise KnobError(key, f"value {value!r} is not a number")
        else:
            out.skipped.append(key)
            out.notes.append(Note("info", key, "not a number; skipped"))


class _Pairs(list[tuple[str, Any]]):
    """A JSON object kept as its key/value pairs in order (keys may repeat)."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)


def check_json_depth(text: str, what: str) -> None:
    """Refuse JSON nested deeper than :data:`holdoff.inputs.MAX_DEPTH` before a
    recursive reader sees it (a :class:`KnobError` naming ``what``)."""
    try:
        inputs.check_depth(text, what, None, syntax="json")
    except inputs.InputError as err:
        raise KnobError(what, err.message) from None
