"""Everything ``holdoff explain`` reads, gathered into one setting.

The command hands over what the operator gave: a host file from ``holdoff
collect`` (:class:`holdoff.hostinfo.HostInfo`), any number of texts
(ethtool output, sysctl dumps, module-parameter lines ...) and ``--set``
assignments, in that order (later values win). :func:`gather` returns the
merged :class:`Gathered` (settings, interface, unit, rings, notes, and the
queues and flow control of ``ethtool -l``/``-a`` sections, read by
:mod:`holdoff.knobs.channels`); :func:`report` turns it into the
explanation with the persistent forms, the queues and vectors, and the
driver's side-effect warnings (:mod:`holdoff.knobs.ixgbe_warnings`).

Simplifies: a ring size read from an input that lies outside the driver's
range (a CAN controller's 20 descriptors explained as ``linux-dim``) is noted
and not used; a ring size given as a flag is checked and refused.
Units: ring sizes in descriptors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from holdoff.hostinfo import HostInfo
from holdoff.knobs.base import TSQ_BYTES_DEFAULT, KnobError, Note
from holdoff.knobs.channels import Channels, Pause, split_sections
from holdoff.knobs.decode import decode
from holdoff.knobs.ethtool_text import Parsed
from holdoff.knobs.ixgbe_warnings import ixgbe_warnings
from holdoff.knobs.parse import RING_RANGE, check_iface, explain, parse
from holdoff.knobs.persist import persistent_forms


@dataclass
class Gathered(Parsed):
    """:class:`Parsed` with the channel counts (``ethtool -l``) and the pause
    setting (``ethtool -a``) when an input held them."""

    channels: Channels | None = None
    pause: Pause | None = None


def gather(
    driver: str,
    texts: Iterable[str],
    assignments: Iterable[str] = (),
    host: HostInfo | None = None,
) -> Gathered:
    """The merged reading of a host file, input texts and ``KEY=VALUE``
    assignments. An input may hold ``ethtool -l`` and ``ethtool -a`` output
    beside (or instead of) ``ethtool -c``/``-g``: those sections are read into
    :attr:`Gathered.channels` and :attr:`Gathered.pause`."""
    out = Gathered()
    if host is not None:
        if host.parsed is not None:
            out.merge(host.parsed)
        out.settings.update(host.settings)
        out.iface = host.iface
        for name in ("rx_ring", "tx_ring", "rx_ring_max", "tx_ring_max"):
            setattr(out, name, getattr(host, name))
        out.formats.append("holdoff collect host file")
        if host.queues:
            out.channels = Channels(combined=host.queues, source="holdoff collect host file")
    for text in texts:
        sections = split_sections(text)
        if sections.channels is not None:
            out.channels = sections.channels
            out.formats.append(sections.channels.source)
            out.iface = out.iface or sections.channels.iface
            out.recognised = True
        if sections.pause is not None:
            out.pause = sections.pause
            out.formats.append(sections.pause.source)
            out.iface = out.iface or sections.pause.iface
            out.recognised = True
        if sections.channels is None and sections.pause is None:
            out.merge(parse(text, driver))
        elif sections.rest.strip():
            out.merge(parse(sections.rest, driver))
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise KnobError("--set", f"{item!r}: expected KEY=VALUE, e.g. rx-usecs=50")
        one = parse(f"{key.strip()}={value}", driver)
        if not one.settings:
            raise KnobError(key.strip(), f"is not a knob of {driver}; see holdoff explain -h")
        out.settings.update(one.settings)
    _drop_rings_out_of_range(driver, out)
    return out


def _drop_rings_out_of_range(driver: str, parsed: Parsed) -> None:
    lo, hi, _ = RING_RANGE[driver]
    for name in ("rx_ring", "tx_ring"):
        value = getattr(parsed, name)
        if value is not None and not lo <= value <= hi:
            parsed.notes.append(
                Note(
                    "info",
                    name.replace("_", "-"),
                    f"the input's {value} descriptors are outside {driver}'s range {lo} to {hi}; "
                    "the driver's default is assumed",
                )
            )
            setattr(parsed, name, None)


def report(
    driver: str,
    parsed: Parsed | Gathered,
    *,
    chip: str | None = None,
    speed_mbps: int | None = None,
    rx_ring: int | None = None,
    tx_ring: int | None = None,
    tsq_bytes: int = TSQ_BYTES_DEFAULT,
    iface: str | None = None,
) -> dict[str, Any]:
    """The explanation of ``parsed`` (flags win over what the inputs said),
    with what was skipped, what the driver does not report, and the
    persistent forms of the setting."""
    if iface is None and parsed.iface is not None:
        check_iface(parsed.iface, "input")
    name = iface or parsed.iface
    out = explain(
        driver,
        parsed.settings,
        chip=chip,
        extra_notes=parsed.notes,
        speed_mbps=speed_mbps,
        rx_ring=rx_ring if rx_ring is not None else parsed.rx_ring,
        tx_ring=tx_ring if tx_ring is not None else parsed.tx_ring,
        tsq_bytes=tsq_bytes,
        iface=name,
        unit=parsed.unit,
    )
    out["iface_from"] = "--iface" if iface else ("input" if parsed.iface else "default")
    channels = getattr(parsed, "channels", None)
    pause = getattr(parsed, "pause", None)
    out["channels"] = None if channels is None else channels.to_dict()
    out["pause"] = None if pause is None else pause.to_dict()
    rate = out["max_interrupts_per_s_per_vector"]
    if channels is not None and rate is not None:
        # Each queue vector has its own EITR: the port's ceiling is the sum.
        out["max_interrupts_per_s_all_queue_vectors"] = round(rate * channels.queue_vectors, 1)
    if driver == "linux-ixgbe":
        decoded = decode(driver, parsed.settings, chip)
        extra = ixgbe_warnings(decoded, channels, pause)
        out["warnings"] += [{"key": w.key, "message": w.message} for w in extra]
    out["skipped"] = parsed.skipped
    out["unsupported"] = parsed.unsupported
    out["inputs"] = parsed.formats
    forms = persistent_forms(
        driver, out["iface"], parsed.settings, chip=chip, unit=parsed.unit or 0
    )
    out["persistent"] = [f.to_dict() for f in forms]
    return out
