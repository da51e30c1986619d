"""The tuner's port knobs beside moderation: how many queues, on which cores, how
long the rings, and which fields RSS hashes -- for drivers with several queues
(Linux ``linux-ixgbe``, ``linux-ice``, ``linux-i40e``, ``linux-mlx5``).

A knob here is not a coalescing register but a port setting the operator
changes with ``ethtool -L``, ``ethtool -G``, ``ethtool -N`` and
``/proc/irq/N/smp_affinity_list``; each maps to fields of the scenario's NIC:

- ``combined``: queue pairs (RX/TX) -> ``queues``; ``ethtool -L IFACE combined N``;
- ``irq-cores``: the cores taking the queue vectors, K -> ``irq_cores`` (vector i
  on core i mod K); ``echo C > /proc/irq/IRQ/smp_affinity_list`` per vector;
- ``ring``: RX and TX descriptors -> ``rx_ring``, ``tx_ring``;
  ``ethtool -G IFACE rx N tx N``;
- ``udp4-sdfn``: 0 hashes UDP over IPv4 on the addresses (``sd``, the default),
  1 on addresses and ports (``sdfn``) -> ``rx_flow_hash_udp4``;
  ``ethtool -N IFACE rx-flow-hash udp4 sdfn``.

Sources: Linux ``ixgbe_ethtool.c`` (``ixgbe_set_channels``: combined channels
only, at most ``ixgbe_max_channels``; ``ixgbe_set_ringparam``: 64 to 4096
descriptors, ``IXGBE_MIN_RXD``/``IXGBE_MAX_RXD``; ``ixgbe_set_rss_hash_opt``:
UDP over IPv4 hashes the ports only with ``sdfn``), ``ixgbe_lib.c``
(``ixgbe_set_rss_queues``: the default queue count is the online CPUs, capped
by the RSS limit), ``Documentation/networking/scaling.rst`` ("Each receive
queue has a separate IRQ"; irqbalance "may override any manual settings"; "the
smallest number of receive queues where no receive queue overflows") and
``Documentation/core-api/irq/irq-affinity.rst`` (``smp_affinity_list``).
For ice and i40e the same knobs with the drivers' ring facts (ice.h
``ICE_DFLT_NUM_RX_DESC`` 2048, ``ICE_MAX_NUM_DESC`` 8160; i40e.h
``I40E_DEFAULT_NUM_DESCRIPTORS`` 512, ``I40E_MAX_NUM_DESCRIPTORS_XL710`` 8160)
and vector names (ice ``ice_vsi_req_irq_msix``: ``ice-PCI_ADDRESS-TxRx-N``;
i40e ``i40e_vsi_request_irq_msix``: ``i40e-IFACE-TxRx-N``). For mlx5: rings
64 to 8192, 1024 by default (``en.h``
``MLX5E_PARAMS_{MINIMUM,DEFAULT,MAXIMUM}_LOG_SQ_SIZE``), UDP over IPv4 hashed
on addresses and ports by default (``mlx5e_rss_get_default_tt_config``:
``MLX5_TT_IPV4_UDP`` with ``MLX5_HASH_IP_L4PORTS``), completion vectors named
``mlx5_compN@pci:PCI_ADDRESS`` (the ``mlx5_irq`` names).

Simplifies: vectors are placed on the first K cores (vector i on core i mod
K); interrupt numbers are the machine's, so the lines find them by the vector
name ixgbe gives (``IFACE-TxRx-N``, ``ixgbe_request_msix_irqs``), the folder
the kernel makes for it under ``/proc/irq/N/``; a combined count above the
host's cores is not searched.
Units: counts (queues, cores, descriptors).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from holdoff.knobs.persist import Form, link_match, link_naming_note

#: Drivers whose tune searches the port knobs.
PORT_DRIVERS = ("linux-ixgbe", "linux-ice", "linux-i40e", "linux-mlx5")

#: The port knobs, in table order.
KEYS = ("combined", "irq-cores", "ring", "udp4-sdfn")

#: ixgbe.h: default descriptors per ring, and the range ``ethtool -G`` accepts.
IXGBE_DEFAULT_RING = 512
IXGBE_RING_RANGE = (64, 4096)

#: Per driver: (default descriptors per ring, (fewest, most) ``ethtool -G`` accepts).
RINGS: dict[str, tuple[int, tuple[int, int]]] = {
    "linux-ixgbe": (IXGBE_DEFAULT_RING, IXGBE_RING_RANGE),
    "linux-ice": (2048, (64, 8160)),
    "linux-i40e": (512, (64, 8160)),
    "linux-mlx5": (1024, (64, 8192)),
}

#: Drivers that hash UDP over IPv4 on addresses and ports by default.
UDP_PORTS_BY_DEFAULT = ("linux-mlx5",)

#: The most queue pairs searched (the tuned host's cores bound it too).
MAX_COMBINED = 8


def has_ports(driver: str) -> bool:
    return driver in PORT_DRIVERS


def defaults(driver: str, cores: int) -> dict[str, int]:
    """The port as the driver brings it up on a host with ``cores`` cores:
    one queue pair per core (``ixgbe_set_rss_queues``), one vector per core,
    512-descriptor rings, UDP hashed on addresses. Empty for other drivers."""
    if not has_ports(driver):
        return {}
    n = max(1, min(cores, MAX_COMBINED))
    udp = int(driver in UDP_PORTS_BY_DEFAULT)
    return {"combined": n, "irq-cores": n, "ring": RINGS[driver][0], "udp4-sdfn": udp}


def grid(driver: str, cores: int) -> dict[str, list[int]]:
    """The values searched per port knob (the default first)."""
    if not has_ports(driver):
        return {}
    d = defaults(driver, cores)
    counts = [n for n in (1, 2, 4, 8) if n <= d["combined"]]
    out = {
        "combined": counts,
        "irq-cores": list(counts),
        "ring": [RINGS[driver][0], 4096],
        "udp4-sdfn": [0, 1],
    }
    for key, values in out.items():
        if d[key] in values:
            values.remove(d[key])
        values.insert(0, d[key])
    return out


def split(settings: Mapping[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """(driver knobs, port knobs) of one setting."""
    drv = {k: int(v) for k, v in settings.items() if k not in KEYS}
    port = {k: int(v) for k, v in settings.items() if k in KEYS}
    return drv, port


def canonical(port: Mapping[str, int], dflt: Mapping[str, int]) -> dict[str, int]:
    """``port`` with what cannot act put back: no more cores than vectors, and
    the UDP hash choice with one queue (every flow lands on it) as the default."""
    out = {**dflt, **port}
    if not out:
        return {}
    out["irq-cores"] = max(1, min(out["irq-cores"], out["combined"]))
    if out["combined"] == 1:
        out["udp4-sdfn"] = dflt.get("udp4-sdfn", 0)
    return out


def check(port: Mapping[str, int], cores: int, driver: str = "linux-ixgbe") -> None:
    """Refuse a port setting the driver or the host cannot take."""
    lo, hi = RINGS[driver][1]
    if port and not lo <= port["ring"] <= hi:
        raise ValueError(f"ring: {port['ring']} descriptors is outside {lo} to {hi}")
    if port and not 1 <= port["combined"] <= cores:
        raise ValueError(f"combined: {port['combined']} queue pairs on a {cores}-core host")


def irq_cores(port: Mapping[str, int]) -> list[int]:
    """The core of each queue vector: vector i on core i mod K."""
    return [i % port["irq-cores"] for i in range(port["combined"])]


def changes(port: Mapping[str, int], base: str) -> dict[str, Any]:
    """The scenario field changes of ``port`` for the NIC at path ``base``."""
    if not port:
        return {}
    return {
        f"{base}.queues": port["combined"],
        f"{base}.irq_cores": irq_cores(port),
        f"{base}.rx_ring": port["ring"],
        f"{base}.tx_ring": port["ring"],
        f"{base}.rx_flow_hash_udp4": "sdfn" if port["udp4-sdfn"] else "sd",
    }


def changed(port: Mapping[str, int], dflt: Mapping[str, int]) -> dict[str, int]:
    return {k: v for k, v in port.items() if v != dflt.get(k)}


def vector_name(driver: str, iface: str, i: int) -> str:
    """The name the driver gives queue vector ``i`` (its folder under ``/proc/irq/N/``);
    ice names it after the PCI address, read from the interface's device link."""
    if driver == "linux-ice":
        return f"ice-$(basename $(readlink /sys/class/net/{iface}/device))-TxRx-{i}"
    if driver == "linux-i40e":
        return f"i40e-{iface}-TxRx-{i}"
    if driver == "linux-mlx5":
        return f"mlx5_comp{i}@pci:$(basename $(readlink /sys/class/net/{iface}/device))"
    return f"{iface}-TxRx-{i}"


def affinity_lines(port: Mapping[str, int], iface: str, driver: str = "linux-ixgbe") -> list[str]:
    """One ``smp_affinity_list`` line per queue vector. The kernel lists each
    handler as a folder of its interrupt (``/proc/irq/97/eth0-TxRx-0``,
    ``register_handler_proc`` in ``kernel/irq/proc.c``), so ``dirname`` of
    that folder is the interrupt's without knowing its number (and the line
    needs no quotes, so a unit's ``sh -c '...'`` can hold it)."""
    return [
        f"echo {core} > $(dirname /proc/irq/*/{vector_name(driver, iface, i)})/smp_affinity_list"
        for i, core in enumerate(irq_cores(port))
    ]


IRQBALANCE_NOTE = (
    "irqbalance rewrites smp_affinity as it rebalances and may override these lines "
    "(Documentation/networking/scaling.rst): stop it (systemctl disable --now irqbalance), "
    "or keep it off these cores and vectors: IRQBALANCE_BANNED_CPUS (a hex mask of the "
    "cores) in /etc/sysconfig/irqbalance or /etc/default/irqbalance keeps its other "
    "interrupts away, and --banirq=IRQ per vector in IRQBALANCE_ARGS leaves these vectors "
    "where the lines put them"
)


def commands(
    port: Mapping[str, int], dflt: Mapping[str, int], iface: str, driver: str = "linux-ixgbe"
) -> list[str]:
    """The lines that set ``port`` where it differs from ``dflt`` (queues
    first: ``ethtool -L`` renumbers the vectors the affinity lines name)."""
    diff = changed(port, dflt)
    if not diff:
        return []
    lines: list[str] = []
    if "combined" in diff:
        lines.append(f"ethtool -L {iface} combined {port['combined']}")
    if "ring" in diff:
        lines.append(f"ethtool -G {iface} rx {port['ring']} tx {port['ring']}")
    if "udp4-sdfn" in diff:
        lines.append(
            f"ethtool -N {iface} rx-flow-hash udp4 {'sdfn' if port['udp4-sdfn'] else 'sd'}"
        )
    if "combined" in diff or "irq-cores" in diff:
        lines.append(f"# {IRQBALANCE_NOTE}")
        lines.append("systemctl disable --now irqbalance")
        lines.extend(affinity_lines(port, iface, driver))
    return lines


def forms(
    port: Mapping[str, int], dflt: Mapping[str, int], iface: str, driver: str = "linux-ixgbe"
) -> list[Form]:
    """The persistent forms of the port knobs that changed: the ``.link`` keys
    systemd.link(5) has (``CombinedChannels=``, ``RxBufferSize=``,
    ``TxBufferSize=``), and a unit that runs the lines without one (the UDP
    hash, the affinity) once the interface is up."""
    diff = changed(port, dflt)
    out: list[Form] = []
    link = []
    if "combined" in diff:
        link.append(f"CombinedChannels={port['combined']}")
    if "ring" in diff:
        link += [f"RxBufferSize={port['ring']}", f"TxBufferSize={port['ring']}"]
    if link:
        out.append(
            Form(
                "networkd",
                f"/etc/systemd/network/50-holdoff-{iface}.link",
                "\n".join(link_match(iface) + link) + "\n",
                "interface reset",
                f"udevadm control --reload && udevadm trigger --action=add /sys/class/net/{iface}",
                "The same file as the coalescing keys: put these [Link] lines beside them. "
                + link_naming_note(iface),
            )
        )
    run = []
    if "udp4-sdfn" in diff:
        run.append(f"ethtool -N {iface} rx-flow-hash udp4 {'sdfn' if port['udp4-sdfn'] else 'sd'}")
    if "combined" in diff or "irq-cores" in diff:
        run += affinity_lines(port, iface, driver)
    if run:
        script = "; ".join(line.replace("$", "$$") for line in run)
        unit = (
            "[Unit]\n"
            f"Description=holdoff: RSS hash and interrupt affinity of {iface}\n"
            f"After=sys-subsystem-net-devices-{iface}.device irqbalance.service\n"
            f"BindsTo=sys-subsystem-net-devices-{iface}.device\n\n"
            "[Service]\n"
            "Type=oneshot\n"
            f"ExecStart=/bin/sh -c '{script}'\n\n"
            "[Install]\n"
            f"WantedBy=sys-subsystem-net-devices-{iface}.device\n"
        )
        out.append(
            Form(
                "systemd-unit",
                f"/etc/systemd/system/holdoff-{iface}-queues.service",
                unit,
                "nothing",
                f"systemctl daemon-reload && systemctl enable --now holdoff-{iface}-queues",
                "systemd.link has no key for the RSS hash fields or the interrupt affinity; "
                "the unit runs the lines when the interface appears. " + IRQBALANCE_NOTE + ".",
            )
        )
    return out


__all__ = [
    "IRQBALANCE_NOTE",
    "KEYS",
    "MAX_COMBINED",
    "PORT_DRIVERS",
    "affinity_lines",
    "canonical",
    "changed",
    "changes",
    "check",
    "commands",
    "defaults",
    "forms",
    "grid",
    "has_ports",
    "irq_cores",
    "split",
    "vector_name",
]
