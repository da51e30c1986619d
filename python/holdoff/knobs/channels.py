"""Reading ``ethtool -l`` (channels) and ``ethtool -a`` (pause) output: how many
queues and interrupt vectors a port runs, and whether it sends PAUSE frames.

``ethtool -l IFACE`` prints the driver's ``get_channels`` answer: per kind
(``RX``, ``TX``, ``Other``, ``Combined``) the maximum ("Pre-set maximums") and
the count in use ("Current hardware settings"). Linux ixgbe
(``ixgbe_ethtool.c`` ``ixgbe_get_channels``) reports only ``Combined`` (each
combined channel is one RX queue and one TX queue on one MSI-X vector, named
``IFACE-TxRx-N`` by ``ixgbe_request_msix_irqs``) and ``Other`` 1 with MSI-X
(``NON_Q_VECTORS``: the vector for link and other causes, no queue); the
maximum is ``ixgbe_max_channels`` (the RSS or Flow Director queue limit,
at most the online CPUs since Linux 5.16). ``ethtool -a IFACE`` prints the
pause (802.3x flow control) setting: ``Autonegotiate``, ``RX``, ``TX`` and,
from netlink ethtool with autonegotiation on and the link up, the negotiated
``RX negotiated`` / ``TX negotiated``.

Formats read: ioctl-era text (fields the driver does not report printed as
``0``), netlink text (``n/a``), ``ethtool --json -l`` / ``--json -a``
(``combined-count``, ``combined-max``, ``autonegotiate``, ``rx``, ``tx``),
alone or inside a longer input with ``ethtool -c``/``-g`` sections and shell
prompts (:func:`split_sections` cuts the channel and pause sections out, so
the coalescing reader sees the rest).

Simplifies: one interface per input; queue vectors counted as ethtool
reports channels (a combined channel is one vector; RX-only and TX-only
channels one vector each), plus the ``Other`` vectors.
Units: counts (queues, vectors).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from holdoff.knobs.base import KnobError

_HEADER = re.compile(r"^(?:\[[^\]]*\][$#]|[$#%>])?\s*(\w[\w ]*?) parameters for (\S+?):\s*$")
_PROMPT = re.compile(r"^(?:\[[^\]]*\][$#]|[$#%>])\s*")
_COMMAND = re.compile(r"^(?:sudo\s+)?(?:/\S*/)?ethtool\s")
_KINDS = {"rx": "rx", "tx": "tx", "other": "other", "combined": "combined"}
_ON_OFF = {"on": True, "off": False, "true": True, "false": False}


@dataclass
class Channels:
    """``ethtool -l``: counts in use and maxima per channel kind (None: not reported)."""

    iface: str | None = None
    combined: int | None = None
    rx: int | None = None
    tx: int | None = None
    other: int | None = None
    max_combined: int | None = None
    max_rx: int | None = None
    max_tx: int | None = None
    max_other: int | None = None
    #: What the input was (``ethtool -l text``, ``ethtool --json -l``).
    source: str = ""

    @property
    def rx_queues(self) -> int:
        """RX queues in use: combined channels plus RX-only ones (at least 1)."""
        return max(1, (self.combined or 0) + (self.rx or 0))

    @property
    def queue_vectors(self) -> int:
        """MSI-X vectors that carry queues: one per channel (at least 1)."""
        return max(1, (self.combined or 0) + (self.rx or 0) + (self.tx or 0))

    @property
    def paired(self) -> bool:
        """Whether RX and TX queues share vectors (combined channels only)."""
        return bool(self.combined) and not self.rx and not self.tx

    def to_dict(self) -> dict[str, Any]:
        return {
            "combined": self.combined,
            "rx": self.rx,
            "tx": self.tx,
            "other": self.other,
            "max_combined": self.max_combined,
            "max_rx": self.max_rx,
            "max_tx": self.max_tx,
            "max_other": self.max_other,
            "rx_queues": self.rx_queues,
            "queue_vectors": self.queue_vectors,
            "vectors": self.queue_vectors + (self.other or 0),
            "paired": self.paired,
            "source": self.source,
        }


@dataclass
class Pause:
    """``ethtool -a``: the pause setting, and what autonegotiation settled if printed."""

    iface: str | None = None
    autoneg: bool | None = None
    rx: bool | None = None
    tx: bool | None = None
    rx_negotiated: bool | None = None
    tx_negotiated: bool | None = None
    source: str = ""

    @property
    def sends_pause(self) -> bool | None:
        """Whether the port sends PAUSE frames (TX pause): the negotiated value
        when printed, else the setting (None: not said)."""
        return self.tx_negotiated if self.tx_negotiated is not None else self.tx

    def to_dict(self) -> dict[str, Any]:
        return {
            "autoneg": self.autoneg,
            "rx": self.rx,
            "tx": self.tx,
            "rx_negotiated": self.rx_negotiated,
            "tx_negotiated": self.tx_negotiated,
            "sends_pause": self.sends_pause,
            "source": self.source,
        }


@dataclass
class Sections:
    """An input split: the channel and pause sections read, the rest as text."""

    rest: str
    channels: Channels | None = None
    pause: Pause | None = None
    notes: list[str] = field(default_factory=list)


def _count(key: str, value: str) -> int | None:
    v = value.strip()
    if v == "n/a":
        return None
    if not v.isdigit():
        raise KnobError(key, f"ethtool -l value {value.strip()!r} is not a count (or n/a)")
    return int(v)


def _flag(key: str, value: str) -> bool:
    v = value.strip().lower()
    if v not in _ON_OFF:
        raise KnobError(key, f"ethtool -a value {value.strip()!r} is not on or off")
    return _ON_OFF[v]


def split_sections(text: str) -> Sections:
    """Cut the ``Channel parameters`` and ``Pause parameters`` sections out of
    ``text`` (read into :class:`Channels` and :class:`Pause`); the other lines
    stay in :attr:`Sections.rest`. A JSON input holding ``ethtool --json -l``
    or ``-a`` output is read whole (its rest is empty)."""
    stripped = text.strip()
    if stripped[:1] in "[{":
        return _split_json(stripped, text)
    rest: list[str] = []
    channels: Channels | None = None
    pause: Pause | None = None
    section = ""
    part = ""
    for raw in text.splitlines():
        line = _PROMPT.sub("", raw.strip())
        m = _HEADER.match(raw.strip())
        if m:
            kind = m.group(1).lower()
            if kind == "channel":
                section, part = "channel", ""
                channels = channels or Channels(iface=m.group(2), source="ethtool -l text")
                continue
            if kind == "pause":
                section = "pause"
                pause = pause or Pause(iface=m.group(2), source="ethtool -a text")
                continue
            section = ""
        elif _COMMAND.match(line) or raw.strip().startswith(("$", "#")):
            section = ""
        if section == "channel" and channels is not None:
            if line.startswith("Pre-set maximums"):
                part = "max"
                continue
            if line.startswith("Current hardware settings"):
                part = "current"
                continue
            key, sep, value = line.partition(":")
            name = _KINDS.get(key.strip().lower())
            if sep and name and part:
                attr = f"max_{name}" if part == "max" else name
                setattr(channels, attr, _count(f"ethtool -l {key.strip()}", value))
            continue
        if section == "pause" and pause is not None:
            key, sep, value = line.partition(":")
            k = key.strip().lower()
            flag = {
                "autonegotiate": "autoneg",
                "rx": "rx",
                "tx": "tx",
                "rx negotiated": "rx_negotiated",
                "tx negotiated": "tx_negotiated",
            }.get(k)
            if sep and flag:
                setattr(pause, flag, _flag(f"ethtool -a {key.strip()}", value))
            continue
        rest.append(raw)
    return Sections("\n".join(rest), channels, pause)


def _split_json(stripped: str, text: str) -> Sections:
    try:
        data = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return Sections(text)  # the coalescing reader reports it
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        return Sections(text)
    iface = data.get("ifname") if isinstance(data.get("ifname"), str) else None
    if any(k in data for k in ("combined-count", "combined-max", "rx-count", "other-count")):
        ch = Channels(iface=iface, source="ethtool --json -l")
        for kind in _KINDS:
            for suffix, attr in (("-count", kind), ("-max", f"max_{kind}")):
                v = data.get(f"{kind}{suffix}")
                if v is not None:
                    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                        raise KnobError(f"{kind}{suffix}", f"{v!r} is not a count")
                    setattr(ch, attr, v)
        return Sections("", ch)
    if "autonegotiate" in data:
        p = Pause(iface=iface, source="ethtool --json -a")
        for key, attr in (
            ("autonegotiate", "autoneg"),
            ("rx", "rx"),
            ("tx", "tx"),
            ("rx-negotiated", "rx_negotiated"),
            ("tx-negotiated", "tx_negotiated"),
        ):
            v = data.get(key)
            if isinstance(v, bool):
                setattr(p, attr, v)
        return Sections("", None, p)
    return Sections(text)


__all__ = ["Channels", "Pause", "Sections", "split_sections"]
