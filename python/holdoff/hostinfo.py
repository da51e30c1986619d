"""Reading a host file written by ``holdoff collect`` (:mod:`holdoff.collect_host`).

:func:`read_host` takes the JSON and returns a :class:`HostInfo`: holdoff's
driver name for the ethtool driver (``igb`` -> ``linux-igb``), the chip from
the PCI device id where holdoff models it (else None with the reason in
:attr:`HostInfo.messages`), the coalescing settings as knob values (read by
:func:`holdoff.knobs.parse` from ``ethtool --json -c``, or from ``ethtool -c``
text when the JSON form failed), ring sizes, queue count, and the window's
packet and byte rates, mean packet sizes, per-vector interrupt rates and
per-CPU busy and softirq shares.

Simplifies: rates are averages over the window (after minus before, divided
by the elapsed wall time the collector recorded); mlx5_core and ena map to
their own models (``linux-mlx5``, ``linux-ena``); another driver that uses
the kernel's DIM library (bnxt_en) maps to ``linux-dim``; ice and i40e to
their own; a driver holdoff has no model of maps to None, and virtio_net
(a paravirtual NIC, :data:`UNMODELLED`) to None with its reason.

Sources: PCI device ids from the Linux drivers' id tables (``e1000_hw.h``,
``igb/e1000_hw.h``, ``ixgbe_type.h``: ``E1000_DEV_ID_*``, ``IXGBE_DEV_ID_*``;
``ice_devids.h``, ``i40e_devids.h``; mlx5_core's ``mlx5_core_pci_table``;
``ena_pci_id_tbl.h``). A ConnectX port's preset is chosen by its link speed.
Units: rates per second, bits per second (``_bps``), sizes in bytes,
shares in percent (``_pct``), rings in descriptors.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from holdoff import inputs, knobs
from holdoff.knobs.ethtool_text import Parsed, parse_ethtool_text

SCHEMA = "holdoff-collect/1"

#: ethtool's driver name -> holdoff's driver model.
DRIVER_MAP: dict[str, str] = {
    "e1000": "linux-e1000",
    "e1000e": "linux-e1000e",
    "igb": "linux-igb",
    "ixgbe": "linux-ixgbe",
    "mlx5_core": "linux-mlx5",
    "ena": "linux-ena",
    "bnxt_en": "linux-dim",
    "ice": "linux-ice",
    "i40e": "linux-i40e",
}

#: Drivers that are deliberately not mapped, with the reason shown instead.
#: virtio_net (Linux drivers/net/virtio_net.c): a paravirtual NIC whose
#: notifications the hypervisor's device moderates; `ethtool -C` reaches it
#: only when the device offers VIRTIO_NET_F_NOTF_COAL / VQ_NOTF_COAL, and its
#: net_dim (``rx_dim_enabled``) stays off until `adaptive-rx on` is set.
UNMODELLED: dict[str, str] = {
    "virtio_net": (
        "a paravirtual NIC: the hypervisor's device moderates its interrupts, not NIC "
        "hardware holdoff models (ethtool -C reaches the device only where it offers "
        "notification coalescing, VIRTIO_NET_F_NOTF_COAL, and its net_dim is off until "
        "adaptive-rx on); give --driver and --chip of the physical NIC to study"
    ),
}

#: Intel (vendor 0x8086) PCI device ids -> holdoff chip names.
PCI_CHIPS: dict[int, str] = {
    **dict.fromkeys((0x100E, 0x1015, 0x1016, 0x1017), "82540"),
    **dict.fromkeys(
        (0x1010, 0x1012, 0x101D, 0x1079, 0x107A, 0x107B, 0x108A, 0x1099, 0x10B5), "82546"
    ),
    **dict.fromkeys((0x10D3, 0x10F6), "82574"),
    **dict.fromkeys((0x10C9, 0x10E6, 0x10E7, 0x10E8, 0x150A, 0x150D, 0x1518, 0x1526), "82576"),
    **dict.fromkeys((0x1521, 0x1522, 0x1523, 0x1524), "i350"),
    **dict.fromkeys((0x1533, 0x1536, 0x1537, 0x1538, 0x157B, 0x157C), "i210"),
    0x1539: "i211",
    **dict.fromkeys(
        (0x10B6, 0x10C6, 0x10C7, 0x10C8, 0x10DB, 0x10DD, 0x10E1, 0x10EC, 0x10F1, 0x10F4, 0x150B),
        "82598",
    ),
    **dict.fromkeys(
        (
            0x10F7,
            0x10F8,
            0x10F9,
            0x10FB,
            0x10FC,
            0x1514,
            0x1517,
            0x151C,
            0x1529,
            0x152A,
            0x154D,
            0x1557,
        ),  # fmt: skip
        "82599",
    ),
    # ixgbe_type.h: IXGBE_DEV_ID_X540T 0x1528, X540T1 0x1560; X550T 0x1563, X550T1 0x15D1.
    **dict.fromkeys((0x1528, 0x1560), "x540"),
    **dict.fromkeys((0x1563, 0x15D1), "x550"),
    # ice_devids.h: ICE_DEV_ID_E810C_BACKPLANE/QSFP/SFP 0x1591-0x1593 (100 Gb/s);
    # ICE_DEV_ID_E810_XXV_BACKPLANE/QSFP/SFP 0x1599-0x159B (25 Gb/s).
    **dict.fromkeys((0x1591, 0x1592, 0x1593), "e810-c"),
    **dict.fromkeys((0x1599, 0x159A, 0x159B), "e810-xxv"),
    # i40e_devids.h: i40e_is_40G_device() is QSFP_A/B/C 0x1583-0x1585 (XL710);
    # the 10 Gb/s X710 parts: SFP_XL710 0x1572, KX_C 0x1581, 10G_BASE_T 0x1586,
    # 10G_BASE_T4 0x1589, 10G_BASE_T_BC 0x15FF, 10G_SFP 0x104E, 10G_B 0x104F.
    # Not mapped: KX_B 0x1580 and the 20 and 25 Gb/s parts (no preset).
    **dict.fromkeys((0x1583, 0x1584, 0x1585), "xl710"),
    **dict.fromkeys((0x1572, 0x1581, 0x1586, 0x1589, 0x15FF, 0x104E, 0x104F), "x710"),
}

#: mlx5_core's PCI table (vendor 0x15B3): ConnectX-5 (0x1017, Ex 0x1019, their
#: VFs 0x1018, 0x101A) and ConnectX-6 (0x101B, Dx 0x101D, Lx 0x101F, VFs 0x101C,
#: 0x101E), by family. holdoff's two mlx5 presets differ in their link rate
#: (cx5 25 Gb/s, cx6 100 Gb/s), so the port's speed chooses between them.
MELLANOX_FAMILIES: dict[int, str] = {
    **dict.fromkeys((0x1017, 0x1018, 0x1019, 0x101A), "ConnectX-5"),
    **dict.fromkeys((0x101B, 0x101C, 0x101D, 0x101E, 0x101F), "ConnectX-6"),
}

#: ena_pci_id_tbl.h (vendor 0x1D0F): ENA_PF 0x0EC2, LLQ_PF 0x1EC2, VF 0xEC20,
#: LLQ_VF 0xEC21, RESRV0 0x0051: holdoff's one ENA preset.
ENA_DEVICES = frozenset((0x0EC2, 0x1EC2, 0xEC20, 0xEC21, 0x0051))


class HostInfoError(ValueError):
    """A host file that cannot be read: names the file and what is wrong."""


@dataclass
class HostInfo:
    """What a collector file says about one interface and its host."""

    iface: str
    #: The driver ethtool -i (or sysfs) reports, e.g. ``igb``.
    ethtool_driver: str | None
    #: holdoff's driver model (``linux-igb``), or None (see ``messages``).
    driver: str | None
    #: holdoff's chip name (``i210``), or None (see ``messages``).
    chip: str | None
    #: PCI vendor and device id as sysfs shows them (``0x8086``, ``0x1533``).
    pci_id: tuple[str | None, str | None]
    #: The knob values in effect, as holdoff's driver model names them.
    settings: dict[str, int]
    rx_ring: int | None
    tx_ring: int | None
    rx_ring_max: int | None
    tx_ring_max: int | None
    #: Queues (combined channels, else RX channels) in use.
    queues: int | None
    speed_mbps: int | None
    #: The window [s] (the collector's elapsed wall time).
    seconds: float
    rx_pps: float | None
    tx_pps: float | None
    rx_bps: float | None
    tx_bps: float | None
    mean_rx_packet_bytes: float | None
    mean_tx_packet_bytes: float | None
    #: Interrupts per second of each vector (its /proc/interrupts name).
    interrupts_per_s: dict[str, float]
    #: Per CPU: busy and softirq shares of the window [%].
    cpu_busy_pct: dict[str, float]
    cpu_softirq_pct: dict[str, float]
    sysctls: dict[str, str]
    #: Everything that could not be read or mapped, in words.
    messages: list[str] = field(default_factory=list)
    #: The parsed coalescing text (notes, unsupported fields), when there was one.
    parsed: Parsed | None = None
    #: The interface's MAC address (sysfs ``address``), "aa:bb:cc:dd:ee:ff", when read.
    mac: str | None = None
    #: The interface's MTU (sysfs ``mtu``) [bytes], when read.
    mtu: int | None = None

    def why_no_driver(self) -> str:
        """Why no driver model was taken: the driver's own message, else the last two."""
        mine = [m for m in self.messages if m.startswith("driver ")]
        return "; ".join(mine or self.messages[-2:])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (without the parse details)."""
        out = asdict(self)
        out.pop("parsed")
        return out


def read_host(path: str | os.PathLike[str], flag: str = "--from") -> HostInfo:
    """The :class:`HostInfo` of a collector file; :class:`HostInfoError`
    (naming ``flag`` and the file) for a missing, non-regular, oversized,
    non-JSON, too deeply nested or wrong-shaped file."""
    try:
        data = inputs.read_json(path, f"{flag} host file")
    except inputs.InputError as err:
        raise HostInfoError(str(err)) from None
    return host_from_dict(data, f"{flag} {inputs.printable(os.fspath(path))}")


def host_from_dict(data: Any, where: str = "host file") -> HostInfo:
    """The :class:`HostInfo` of an already loaded collector document."""
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise HostInfoError(
            f"{where}: not a holdoff collect file (expected an object with "
            f'"schema": "{SCHEMA}"); run holdoff collect IFACE -o host.json'
        )
    try:
        return _host(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise HostInfoError(f"{where}: a field is missing or of the wrong type ({err!r})") from None


def _obj(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, dict):
        raise TypeError(f"{key} is not an object")
    return value


def _stdout(commands: dict[str, Any], name: str) -> str | None:
    result = commands.get(name)
    if not isinstance(result, dict) or result.get("rc") != 0:
        return None
    text = result.get("stdout")
    return text if isinstance(text, str) and text.strip() else None


def _int(text: Any) -> int | None:
    try:
        return int(str(text).strip(), 0)
    except ValueError:
        return None


def _host(data: dict[str, Any]) -> HostInfo:
    messages: list[str] = [str(e) for e in data.get("errors") or []][:20]
    commands = _obj(data, "ethtool")
    device = _obj(data, "device")
    iface = str(data["iface"])
    try:
        knobs.check_iface(iface, "iface")
    except knobs.KnobError as err:
        raise ValueError(err.message) from None
    ethtool_driver = device.get("driver")
    info = _stdout(commands, "driver")
    if info:
        for line in info.splitlines():
            if line.startswith("driver:"):
                ethtool_driver = line.split(":", 1)[1].strip() or ethtool_driver
    driver = DRIVER_MAP.get(str(ethtool_driver)) if ethtool_driver else None
    if driver is None and str(ethtool_driver) in UNMODELLED:
        messages.append(f"driver {ethtool_driver}: {UNMODELLED[str(ethtool_driver)]}")
    elif driver is None:
        messages.append(
            f"driver {ethtool_driver or 'unknown'}: holdoff has no model of it "
            f"(models: {', '.join(sorted(set(DRIVER_MAP)))}); give --driver"
        )
    speed = _int(device.get("speed_mbps"))
    speed = speed if speed is not None and speed > 0 else None
    chip = _chip(device, driver, messages, speed)
    parsed = _coalesce(commands, driver, messages)
    rings = Parsed()
    ring_text = _stdout(commands, "rings")
    if ring_text:
        parse_ethtool_text(ring_text, driver or "linux-dim", {}, rings)
    else:
        messages.append("rings: ethtool -g gave nothing; the driver's defaults are assumed")
    before, after = _obj(data, "before"), _obj(data, "after")
    elapsed = float(after.get("unix_s", 0)) - float(before.get("unix_s", 0))
    seconds = elapsed if elapsed > 0 else float(data.get("seconds") or 0)
    rates = _rates(_obj(before, "counters"), _obj(after, "counters"), seconds)
    if seconds <= 0:
        messages.append("the window is 0 s: no rates")
    return HostInfo(
        iface=iface,
        ethtool_driver=None if ethtool_driver is None else str(ethtool_driver),
        driver=driver,
        chip=chip,
        pci_id=(device.get("vendor"), device.get("device")),
        settings=dict(parsed.settings) if parsed else {},
        rx_ring=rings.rx_ring,
        tx_ring=rings.tx_ring,
        rx_ring_max=rings.rx_ring_max,
        tx_ring_max=rings.tx_ring_max,
        queues=_queues(_stdout(commands, "channels")),
        speed_mbps=speed,
        seconds=seconds,
        interrupts_per_s=_irq_rates(_obj(before, "interrupts"), _obj(after, "interrupts"), seconds),
        cpu_busy_pct=_cpu(before, after, busy=True),
        cpu_softirq_pct=_cpu(before, after, busy=False),
        sysctls={str(k): str(v) for k, v in _obj(data, "sysctls").items()},
        messages=messages,
        parsed=parsed,
        mac=_mac(device.get("address")),
        mtu=_int(device.get("mtu")),
        **rates,
    )


def _mac(text: Any) -> str | None:
    """A unicast MAC address as ``aa:bb:cc:dd:ee:ff`` (None for anything else)."""
    parts = str(text or "").strip().lower().split(":")
    if len(parts) != 6 or not all(len(p) == 2 for p in parts):
        return None
    try:
        first = int(parts[0], 16)
        for p in parts[1:]:
            int(p, 16)
    except ValueError:
        return None
    return None if first & 1 else ":".join(parts)


def _mellanox_chip(family: str, speed: int | None, messages: list[str]) -> str:
    """The mlx5 preset for a ConnectX port: by its link speed, the preset of
    that rate (25 Gb/s and below cx5, above cx6); without one, the family's."""
    if speed is None:
        chip = "cx5" if family == "ConnectX-5" else "cx6"
        rate = "25 Gb/s" if chip == "cx5" else "100 Gb/s"
        messages.append(
            f"chip: {family} with no link speed read: taken as the {chip} preset ({rate}); "
            "give --chip cx5 (25 Gb/s) or cx6 (100 Gb/s) for the port's rate"
        )
        return chip
    chip = "cx5" if speed <= 25000 else "cx6"
    mbps = 25000 if chip == "cx5" else 100000
    if speed != mbps:
        messages.append(
            f"chip: {family} at {speed} Mb/s: the nearest preset is {chip} "
            f"({mbps // 1000} Gb/s); its link rate is not the port's"
        )
    return chip


def _chip(
    device: dict[str, Any], driver: str | None, messages: list[str], speed: int | None = None
) -> str | None:
    vendor, dev = _int(device.get("vendor")), _int(device.get("device"))
    if vendor == 0x15B3 and dev in MELLANOX_FAMILIES:
        chip: str | None = _mellanox_chip(MELLANOX_FAMILIES[dev], speed, messages)
    elif vendor == 0x1D0F and dev in ENA_DEVICES:
        chip = "ena"
    elif vendor != 0x8086 or dev is None:
        messages.append(
            f"chip: PCI id {device.get('vendor')}:{device.get('device')} is not a "
            "controller holdoff models; give --chip"
        )
        return None
    else:
        chip = PCI_CHIPS.get(dev)
    if chip is None:
        messages.append(f"chip: Intel device id {dev:#06x} is not one holdoff models; give --chip")
        return None
    if driver is not None and chip not in knobs.DRIVER_CHIPS[driver][1]:
        messages.append(f"chip: {chip} is not a chip holdoff's {driver} drives; give --chip")
        return None
    return chip


def _coalesce(commands: dict[str, Any], driver: str | None, messages: list[str]) -> Parsed | None:
    text = _stdout(commands, "coalesce_json") or _stdout(commands, "coalesce")
    if text is None:
        messages.append("coalescing: neither ethtool --json -c nor ethtool -c gave output")
        return None
    if driver is None:
        return None
    try:
        return knobs.parse(text, driver)
    except knobs.KnobError as err:
        messages.append(f"coalescing: {err}")
        return None


def _queues(text: str | None) -> int | None:
    if text is None:
        return None
    current = text.split("Current hardware settings", 1)[-1]
    got: dict[str, int] = {}
    for line in current.splitlines():
        key, _, value = line.partition(":")
        v = _int(value)
        if v is not None:
            got[key.strip()] = v
    return got.get("Combined") or got.get("RX") or None


def _rates(before: dict[str, Any], after: dict[str, Any], seconds: float) -> dict[str, Any]:
    def delta(key: str) -> int | None:
        a, b = before.get(key), after.get(key)
        return b - a if isinstance(a, int) and isinstance(b, int) and b >= a else None

    out: dict[str, Any] = {}
    for side in ("rx", "tx"):
        packets, octets = delta(f"{side}_packets"), delta(f"{side}_bytes")
        ok = seconds > 0
        out[f"{side}_pps"] = packets / seconds if ok and packets is not None else None
        out[f"{side}_bps"] = octets * 8 / seconds if ok and octets is not None else None
        out[f"mean_{side}_packet_bytes"] = (
            octets / packets if packets and octets is not None else None
        )
    return out


def _irq_rates(before: dict[str, Any], after: dict[str, Any], seconds: float) -> dict[str, float]:
    out: dict[str, float] = {}
    if seconds <= 0:
        return out
    for irq, b in after.items():
        a = before.get(irq)
        if not isinstance(a, dict) or not isinstance(b, dict):
            continue
        name = str(b.get("name", irq)).split()[-1] if b.get("name") else str(irq)
        out[name] = (sum(b.get("counts", [])) - sum(a.get("counts", []))) / seconds
    return out


def _cpu(before: dict[str, Any], after: dict[str, Any], *, busy: bool) -> dict[str, float]:
    out: dict[str, float] = {}
    b0, b1 = _obj(before, "cpu_ticks"), _obj(after, "cpu_ticks")
    for cpu, t1 in b1.items():
        t0 = b0.get(cpu)
        if not isinstance(t0, list) or not isinstance(t1, list) or len(t0) < 7 or len(t1) < 7:
            continue
        d = [y - x for x, y in zip(t0, t1, strict=False)]
        total = sum(d[:8])
        if total <= 0:
            continue
        # fields: user nice system idle iowait irq softirq steal
        part = total - d[3] - d[4] if busy else d[6]
        out[cpu] = 100.0 * part / total
    return out
