"""Reading what an operator has (ethtool, sysctl, module-parameter, sysfs and
#define text) and the whole explanation of it.

:func:`parse` takes any of: ``ethtool -c``/``-g`` text of every version and
``--json -c`` (read by :mod:`holdoff.knobs.ethtool_text`), FreeBSD sysctl
dumps (``sysctl dev.em.0``, ``sysctl -a | grep``, loader.conf lines), Linux
module parameters (``options e1000e ...`` lines, ``modprobe e1000e K=V``,
``KEY=VALUE`` lines, ``/sys/module/*/parameters`` listings and values),
sysfs NAPI files and OpenBSD ``#define`` lines. A key the driver does not have
is reported and skipped; only an input with nothing usable left is an error.
The interface the input names is kept (:attr:`Parsed.iface`) and every printed
command uses it.

:func:`explain` bounds ring sizes to the driver's descriptor range
(:data:`RING_RANGE`, from each driver's header) before any warning is
computed on them.

Units: ring sizes in descriptors; the rest as :mod:`holdoff.knobs` states.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from holdoff.knobs.base import TSQ_BYTES_DEFAULT, KnobError, Note
from holdoff.knobs.check import check
from holdoff.knobs.decode import decode
from holdoff.knobs.encode import commands
from holdoff.knobs.ethtool_text import (
    ETHTOOL_COALESCE_KEYS,
    Parsed,
    check_json_depth,
    is_ethtool_text,
    parse_ethtool_json,
    parse_ethtool_text,
    value_of,
)
from holdoff.knobs.tables import _check_driver, defaults, knobs

__all__ = [
    "ETHTOOL_COALESCE_KEYS",
    "RING_RANGE",
    "Parsed",
    "check_iface",
    "check_ring",
    "explain",
    "parse",
    "parse_ring",
]

_SYSCTL_PREFIX = re.compile(r"^(?:dev\.(em|igb|lem)\.(\d+)\.|hw\.(?:em|igb)\.)")
_SYSFS_PREFIX = re.compile(r"^/sys/(?:class/net/[^/]+|module/[^/]+/parameters)/")
_LISTING = re.compile(r"/sys/module/([\w-]+)/parameters/?\s*$")

#: The descriptor counts each driver accepts for a ring, lowest and highest
#: (``ethtool -G`` is refused outside them) [descriptors].
RING_RANGE: dict[str, tuple[int, int, str]] = {
    "linux-e1000": (48, 4096, "e1000.h E1000_MIN_RXD 48, E1000_MAX_82544_RXD 4096"),
    "linux-e1000-5x": (80, 4096, "e1000.h of the 5.x driver: E1000_MIN_RXD 80, 82544+ 4096"),
    "linux-e1000e": (64, 4096, "e1000e.h E1000_MIN_RXD 64, E1000_MAX_RXD 4096"),
    "linux-igb": (64, 4096, "igb.h IGB_MIN_RXD (80; 64 after the 2023 change), IGB_MAX_RXD 4096"),
    "linux-ixgbe": (64, 4096, "ixgbe.h IXGBE_MIN_RXD 64, IXGBE_MAX_RXD 4096"),
    "linux-dim": (64, 8192, "mlx5 en.h: 2^6 to 2^13 descriptors (the DIM model's reference)"),
    "linux-mlx5": (64, 8192, "mlx5 en.h MLX5E_PARAMS_{MINIMUM,MAXIMUM}_LOG_SQ_SIZE 0x6, 0xd"),
    "linux-ena": (256, 16384, "ena_netdev.h ENA_MIN_RING_SIZE 256; up to 16K per the ENA guide"),
    "freebsd-em": (80, 4096, "if_em.h EM_MIN_RXD 80, EM_MAX_RXD 4096 (hw.em.rxd)"),
    "freebsd-igb": (80, 4096, "if_em.h IGB_MIN_RXD 80, IGB_MAX_RXD 4096 (hw.igb.rxd)"),
    "openbsd-em": (256, 4096, "OpenBSD if_em.h EM_MIN_RXD 256, EM_MAX_RXD 4096"),
    "linux-ice": (64, 8160, "ice.h ICE_MIN_NUM_DESC 64, ICE_MAX_NUM_DESC 8160"),
    "linux-i40e": (
        64,
        8160,
        "i40e.h I40E_MIN_NUM_DESCRIPTORS 64, I40E_MAX_NUM_DESCRIPTORS_XL710 8160",
    ),
}


def parse(text: str, driver: str) -> Parsed:
    """Knob values (and the interface, rings, unsupported fields) from an
    operator's text. Keys that are not knobs of ``driver`` are reported in
    :attr:`Parsed.skipped` and the notes; :class:`KnobError` only for a value
    that is not a number, or when nothing usable is left."""
    _check_driver(driver)
    known = defaults(driver)
    out = Parsed()
    stripped = text.strip()
    if not stripped:
        raise KnobError(
            "input", "is empty: give ethtool -c output, sysctl lines or key=value lines"
        )
    if stripped[0] in "[{":
        parse_ethtool_json(stripped, driver, known, out)
    elif is_ethtool_text(text):
        parse_ethtool_text(text, driver, known, out)
    else:
        _parse_lines(text, driver, known, out)
    if not out.usable:
        keys = ", ".join(out.skipped[:8]) or "the input"
        raise KnobError(
            out.skipped[0] if len(out.skipped) == 1 else "input",
            f"nothing usable: {keys} is not a knob of {driver}; its knobs: {', '.join(known)}",
        )
    return out


def _parse_lines(text: str, driver: str, known: Mapping[str, int], out: Parsed) -> None:
    """sysctl, module-parameter, sysfs and #define lines."""
    listing: str | None = None
    listed: list[str] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("$") or stripped.startswith("# "):
            m = _LISTING.search(stripped)
            if m:
                listing = m.group(1)
                out.recognised = True
                out.formats.append(f"/sys/module/{listing}/parameters listing")
            continue
        line = stripped.split("#", 1)[0].strip() if not stripped.startswith("#define") else stripped
        if not line:
            continue
        if listing is not None and re.fullmatch(r"[\w-]+", line):
            listed.append(line)
            continue
        for key, value in _line_pairs(line):
            _take(key, value, known, out)
    if listing is not None:
        _listing_notes(driver, listing, listed, known, out)


def _line_pairs(line: str) -> list[tuple[str, str]]:
    m = re.match(r"^#define\s+(\w+)\s+(\S+)", line)
    if m:
        return [(m.group(1), m.group(2))]
    m = re.match(r"^(?:options|(?:sudo\s+)?(?:modprobe|insmod))\s+\S+\s+(.*)$", line)
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


def _take(key: str, value: str, known: Mapping[str, int], out: Parsed) -> None:
    m = _SYSCTL_PREFIX.match(key)
    if m and m.group(2) is not None:
        unit = int(m.group(2))
        if out.unit is None:
            out.unit = unit
            out.iface = f"{m.group(1)}{unit}"
            out.formats.append("sysctl")
    k = _canonical(key, known)
    if k in known:
        out.settings[k] = value_of(k, value)
        if "," in value:
            out.notes.append(
                Note("info", k, f"one value per port ({value.strip()}); the first is used")
            )
        return
    out.skipped.append(key)
    if not m:
        out.notes.append(Note("info", key, "not a knob of this driver; skipped"))


def _listing_notes(
    driver: str, module: str, listed: list[str], known: Mapping[str, int], out: Parsed
) -> None:
    """What a ``ls /sys/module/MOD/parameters`` listing says about the knobs."""
    params = [k.key for k in knobs(driver) if k.where == "module parameter"]
    missing = [p for p in params if p not in listed]
    for name in listed:
        if name not in known:
            out.skipped.append(name)
    if missing:
        out.notes.append(
            Note(
                "info",
                f"/sys/module/{module}/parameters",
                f"lists {', '.join(listed) or 'nothing'}; {', '.join(missing)} are not there: "
                f"{module} registers them with permission 0 (module_param_array_named(..., 0) "
                "in its param.c), so sysfs cannot show their values; ethtool -c shows "
                "rx-usecs, the runtime form of InterruptThrottleRate",
            )
        )
    else:
        out.notes.append(Note("info", f"/sys/module/{module}/parameters", "listing read"))


def parse_ring(text: str) -> tuple[int | None, int | None]:
    """(RX, TX) ring sizes in use from ``ethtool -g`` text or ``--json`` output."""
    out = Parsed()
    stripped = text.strip()
    if stripped[:1] in "[{":
        check_json_depth(stripped, "--ring")
        try:
            data = json.loads(stripped)
        except (json.JSONDecodeError, RecursionError) as err:
            raise KnobError("--ring", f"looks like JSON but does not parse: {err}") from None
        if isinstance(data, list) and data:
            data = data[0]
        if not isinstance(data, dict):
            raise KnobError("--ring", "the JSON is not ethtool --json -g output (an object)")
        return _opt_int(data.get("rx")), _opt_int(data.get("tx"))
    if "Ring parameters" in text or "Current hardware settings" in text:
        parse_ethtool_text(text, "linux-igb", {}, out)
        return out.rx_ring, out.tx_ring
    rx = re.search(r"^\s*RX:\s*(\d+)", text, re.M)
    tx = re.search(r"^\s*TX:\s*(\d+)", text, re.M)
    return (int(rx.group(1)) if rx else None, int(tx.group(1)) if tx else None)


def _opt_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


#: An interface name safe to print into a command: the kernel's 15 bytes
#: (IFNAMSIZ - 1), without the shell's special characters.
_IFACE_NAME = re.compile(r"^[A-Za-z0-9_.@+-]{1,15}$")


def check_iface(name: str, flag: str) -> None:
    """Refuse an interface name that cannot be pasted safely into a command."""
    if not _IFACE_NAME.match(name) or name in (".", ".."):
        raise KnobError(
            flag,
            f"{name[:40]!r} is not an interface name (1 to 15 letters, digits, . _ - @ +); "
            "give --iface NAME",
        )


def check_ring(driver: str, flag: str, value: int | None) -> None:
    """Refuse a ring size outside the driver's descriptor range, naming ``flag``."""
    if value is None:
        return
    lo, hi, source = RING_RANGE[driver]
    if not lo <= value <= hi:
        raise KnobError(
            flag,
            f"{value} descriptors is outside {driver}'s range {lo} to {hi} ({source}); "
            "give the ring size ethtool -g shows under 'Current hardware settings'",
        )


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
    iface: str | None = None,
    unit: int | None = None,
) -> dict[str, Any]:
    """Everything ``holdoff explain`` reports, JSON-ready: the decode, the
    warnings, the assumptions (link speed, rings, TSQ) and the commands
    (for ``iface``, default ``eth0``; FreeBSD sysctls for ``unit``)."""
    _check_driver(driver)
    check_ring(driver, "--rx-ring", rx_ring)
    check_ring(driver, "--tx-ring", tx_ring)
    name = iface or "eth0"
    check_iface(name, "--iface")
    d = decode(driver, settings, chip)
    d.notes[:0] = list(extra_notes)
    c = d.chip
    warnings = check(
        d, speed_mbps=speed_mbps, rx_ring=rx_ring, tx_ring=tx_ring, tsq_bytes=tsq_bytes
    )
    out = d.to_dict()
    out["iface"] = name
    out["assumptions"] = {
        "speed_mbps": speed_mbps or c.link_mbps,
        "rx_ring": rx_ring or c.rx_ring,
        "tx_ring": tx_ring or c.tx_ring,
        "tsq_bytes": tsq_bytes,
    }
    out["warnings"] = [{"key": w.key, "message": w.message} for w in warnings]
    out["commands"] = commands(d, name, unit if unit is not None else 0)
    return out
