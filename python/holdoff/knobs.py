"""What an operator types, and what the NIC then applies: driver knobs <-> registers.

For each driver holdoff knows (``linux-e1000``, ``linux-e1000-5x`` (the
2004 5.x driver), ``linux-e1000e``,
``linux-igb``, ``linux-ixgbe``, ``linux-dim``, ``freebsd-em``,
``freebsd-igb``, ``openbsd-em``) this module lists the moderation knobs the
driver really exposes (``ethtool -C`` fields, module parameters, sysctls,
loader tunables, ``#define``s, the Linux NAPI sysfs/netlink settings) and
implements, in integer arithmetic as the C code does:

- knob -> registers (:func:`decode`): the register values the driver writes
  (ITR and 82574 EITR in 256 ns units, igb-class EITR in 1 us with the
  0.25 us raw encoding, ixgbe EITR in 2 us steps, RDTR/RADV/TIDV/TADV in
  1.024 us), which values select an adaptive mode instead of a time, and the
  keys the driver ignores, rejects or rounds;
- registers -> knob (:func:`encode`): the setting that makes the driver write
  a register value, or the nearest one it can write (with the rounding named);
- knob -> the simulator's ``moderation`` table (:attr:`Decoded.scenario`) and
  -> the lines to paste (:func:`commands`);
- the numeric warnings :func:`check` derives: the interrupt interval against
  the time to fill the RX ring (or drain the TX ring) at line rate, and the
  TX completion delay against a Linux sender's TSQ budget.

Every rule cites the driver source (file and function) it comes from; the
mapping is written out, with its sources, in ``docs/knobs.md``.

Simplifies: one port, every vector with the same setting; adaptive modes are
described by the registers they can write (their decisions are the
simulator's job, :mod:`holdoff.api`); ixgbe's adaptive algorithm and 10 GbE
chips have no simulator model, so an ixgbe setting has no scenario table.

Units: intervals in ns (``*_ns``) inside, shown in us; rates per second;
register values in their hardware units (names end in the unit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: The drivers, in the order the docs and ``--help`` list them.
DRIVERS: tuple[str, ...] = (
    "linux-e1000",
    "linux-e1000-5x",
    "linux-e1000e",
    "linux-igb",
    "linux-ixgbe",
    "linux-dim",
    "freebsd-em",
    "freebsd-igb",
    "openbsd-em",
)

#: Wire bytes of a minimum frame: 64 B + 8 B preamble/SFD + 12 B gap.
MIN_FRAME_WIRE_BYTES = 84
#: Wire bytes of a full-size frame: 1518 B + 20 B.
MAX_FRAME_WIRE_BYTES = 1538
#: Linux ``tcp_limit_output_bytes`` default from 2018 (commit c73e5807e4f6,
#: "tcp: tsq: no longer use limit_output_bytes for paced flows": 16 * 65536)
#: until a 2025 net-next change raised it to 4 MB [bytes].
TSQ_BYTES_DEFAULT = 1 << 20

# Register constants (sources in the functions that use them).
CNT_IGNR = 0x8000_0000
IGB_EITR_MASK = 0x7FFC
IXGBE_MAX_EITR = 0x0FF8
TICKS_MAX = 0xFFFF

NoteKind = Literal["ignored", "rounded", "adaptive", "refused", "info"]


class KnobError(ValueError):
    """A key or value the driver does not accept: names the key and the fix."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.message = message


@dataclass(frozen=True)
class Chip:
    """The register facts of one controller, as the drivers program it."""

    name: str
    description: str
    #: "itr" (ITR, 256 ns), "eitr256" (82574 EITR in MSI-X mode, 256 ns),
    #: "eitr1us" (igb class: interval field bits 14:2 in 1 us),
    #: "ixgbe2us" (82599 and later: bits 11:3, 2 us), "ixgbe256" (82598).
    throttle: str
    link_mbps: int
    #: The drivers' default descriptor counts [descriptors].
    rx_ring: int
    tx_ring: int
    #: RDTR and TIDV exist; RADV/TADV too (82540 and later).
    delay_timers: bool
    #: The TX descriptors the drivers use on this chip have the IDE bit.
    tx_ide: bool
    #: MSI-X is what the Linux/FreeBSD drivers use here (delay timers bypassed).
    msix: bool
    #: The simulator's chip preset, if it has one.
    sim: str | None


CHIPS: dict[str, Chip] = {
    c.name: c
    for c in (
        Chip(
            "82540", "Intel 82540EM (8254x, PCI)", "itr", 1000, 256, 256, True, True, False, "82540"
        ),
        Chip(
            "82546",
            "Intel 82546EB/GB (8254x, PCI-X)",
            "itr",
            1000,
            256,
            256,
            True,
            True,
            False,
            "82546",
        ),
        Chip(
            "82574",
            "Intel 82574L (PCIe, MSI-X)",
            "eitr256",
            1000,
            256,
            256,
            True,
            True,
            True,
            "82574",
        ),
        Chip(
            "82576",
            "Intel 82576 (igb class)",
            "eitr1us",
            1000,
            256,
            256,
            False,
            False,
            True,
            "82576",
        ),
        Chip(
            "i350", "Intel I350 (igb class)", "eitr1us", 1000, 256, 256, False, False, True, "i350"
        ),
        Chip(
            "i210", "Intel I210 (igb class)", "eitr1us", 1000, 256, 256, False, False, True, "i210"
        ),
        Chip(
            "i211", "Intel I211 (igb class)", "eitr1us", 1000, 256, 256, False, False, True, "i211"
        ),
        Chip(
            "82598",
            "Intel 82598EB (10 GbE)",
            "ixgbe256",
            10_000,
            512,
            512,
            False,
            False,
            True,
            None,
        ),
        Chip(
            "82599",
            "Intel 82599 / X540 / X550 (10 GbE)",
            "ixgbe2us",
            10_000,
            512,
            512,
            False,
            False,
            True,
            None,
        ),
    )
}

_E1000_CHIPS = ("82540", "82546")
_IGB_CHIPS = ("82576", "i350", "i210", "i211")

#: Per driver: the default chip and the chips it binds.
DRIVER_CHIPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "linux-e1000": ("82546", _E1000_CHIPS),
    "linux-e1000-5x": ("82546", _E1000_CHIPS),
    "linux-e1000e": ("82574", ("82574",)),
    "linux-igb": ("i210", _IGB_CHIPS),
    "linux-ixgbe": ("82599", ("82598", "82599")),
    "linux-dim": ("i210", _IGB_CHIPS),
    "freebsd-em": ("82574", (*_E1000_CHIPS, "82574")),
    "freebsd-igb": ("i210", _IGB_CHIPS),
    "openbsd-em": ("i210", (*_E1000_CHIPS, "82574", *_IGB_CHIPS)),
}


@dataclass(frozen=True)
class Knob:
    """One setting a driver exposes."""

    key: str
    #: Where it is set: "ethtool -C", "module parameter", "sysctl",
    #: "loader.conf", "sysfs", "netlink", "#define (kernel rebuild)".
    where: str
    unit: str
    default: int
    valid: str
    meaning: str
    source: str


@dataclass(frozen=True)
class Register:
    """One register value as the device holds it after the driver wrote it."""

    name: str
    #: The value in the register's own unit (``unit``); for EITR on igb the
    #: interval field in us (the raw word is in ``word``).
    value: int
    unit: str
    #: The interval it sets [ns]; None: not an interval (a count, a flag).
    interval_ns: int | None
    #: The whole register word written, when it differs from ``value``.
    word: int | None = None
    #: False: the register does not act (absent, bypassed, no IDE).
    acts: bool = True
    note: str = ""


@dataclass(frozen=True)
class Note:
    """A key the driver ignores, rejects, rounds, or turns into an adaptive mode."""

    kind: NoteKind
    key: str
    message: str


@dataclass(frozen=True)
class Warning:
    """A setting that costs something measurable, with the numbers."""

    key: str
    message: str


@dataclass
class Decoded:
    """What a driver does with a set of knob values on one chip."""

    driver: str
    chip: Chip
    #: The knob values in effect (defaults filled in), canonical keys.
    settings: dict[str, int]
    #: The keys the caller gave (the rest are defaults).
    given: tuple[str, ...]
    registers: list[Register]
    notes: list[Note]
    #: "static", "adaptive" or "off" (no throttle).
    mode: str
    #: What the adaptive mode does, when ``mode == "adaptive"``.
    adaptive: str = ""
    #: The throttle intervals the driver can program, shortest and longest
    #: [ns] (equal when static; None: no throttle).
    throttle_ns: tuple[int, int] | None = None
    #: The longest RX and TX cause delays of the delay timers [ns] (0: none).
    rx_delay_ns: int = 0
    tx_delay_ns: int = 0
    #: The simulator's tables for this setting (``moderation``, and NIC or
    #: NAPI fields), or None with the reason in ``scenario_note``.
    scenario: dict[str, Any] | None = None
    scenario_note: str = ""

    @property
    def max_rate_per_s(self) -> float | None:
        """The highest interrupt rate per vector the throttle allows [1/s]."""
        if self.throttle_ns is None or self.throttle_ns[0] == 0:
            return None
        return 1e9 / self.throttle_ns[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``holdoff explain --json``)."""
        rate = self.max_rate_per_s
        return {
            "driver": self.driver,
            "chip": self.chip.name,
            "settings": dict(self.settings),
            "given": list(self.given),
            "mode": self.mode,
            "adaptive": self.adaptive,
            "registers": [
                {
                    "register": r.name,
                    "value": r.value,
                    "unit": r.unit,
                    "interval_us": None if r.interval_ns is None else r.interval_ns / 1000,
                    "word": r.word,
                    "acts": r.acts,
                    "note": r.note,
                }
                for r in self.registers
            ],
            "interval_us": None
            if self.throttle_ns is None
            else {"min": self.throttle_ns[0] / 1000, "max": self.throttle_ns[1] / 1000},
            "max_interrupts_per_s_per_vector": None if rate is None else round(rate, 1),
            "rx_delay_us": self.rx_delay_ns / 1000,
            "tx_delay_us": self.tx_delay_ns / 1000,
            "notes": [{"kind": n.kind, "key": n.key, "message": n.message} for n in self.notes],
            "scenario": self.scenario,
            "scenario_note": self.scenario_note,
        }


# -- unit conversions (integer, truncating as the C code does) ------------------------


def ints_to_itr(rate: int) -> int:
    """ITR for a rate: ``1e9 / (rate * 256)`` (e1000 ``e1000_configure_rx``,
    e1000e ``e1000e_write_itr``, FreeBSD ``EM_INTS_TO_ITR``); 0 for rate 0."""
    return 1_000_000_000 // (rate * 256) if rate else 0


def itr_ns(itr: int) -> int:
    """The interval of an ITR/82574-EITR value: 256 ns units (8254x SDM §13.4.18)."""
    return itr * 256


def ticks_ns(ticks: int) -> int:
    """The delay of an RDTR/RADV/TIDV/TADV value: 1.024 us units (8254x SDM §13.4.30)."""
    return ticks * 1024


def em_usecs_to_ticks(usecs: int) -> int:
    """FreeBSD ``EM_USECS_TO_TICKS(u) = (1000 u + 512) / 1024`` (if_em.c)."""
    return (1000 * usecs + 512) // 1024


def em_ticks_to_usecs(ticks: int) -> int:
    """FreeBSD ``EM_TICKS_TO_USECS(t) = (1024 t + 500) / 1000`` (if_em.c)."""
    return (1024 * ticks + 500) // 1000


def igb_eitr_us(itr_val: int) -> int:
    """igb ``igb_write_itr``: raw ``itr_val & 0x7FFC`` (0 written as 4), the
    interval field (bits 14:2) in us is raw >> 2 (I210 datasheet §8.8.14)."""
    raw = itr_val & IGB_EITR_MASK
    return (raw or 4) >> 2


def ixgbe_eitr_ns(itr: int, chip: Chip) -> int:
    """ixgbe ``ixgbe_write_eitr``: ``itr & IXGBE_MAX_EITR`` (0xFF8). 82599 and
    later: bits 11:3 count 2 us ("microsecond values ... shifted by 2 to fit
    itr register with the first 3 bits reserved 0", ixgbe.h), so the interval
    is (itr & 0xFF8) / 4 us; 82598: the value counts 256 ns (82598 datasheet,
    EITR)."""
    reg = itr & IXGBE_MAX_EITR
    if chip.throttle == "ixgbe256":
        return reg * 256
    return (reg >> 2) * 1000


# -- knob tables ------------------------------------------------------------------------

_NAPI_KNOBS = (
    Knob(
        "gro_flush_timeout",
        "sysfs",
        "ns",
        0,
        "0..10000000000 (0: off)",
        "with napi_defer_hard_irqs > 0: after a poll that did work, keep the IRQ masked "
        "and re-poll from a timer this long",
        "Linux net/core/dev.c napi_complete_done; /sys/class/net/IF/gro_flush_timeout "
        "(per NAPI via netlink napi-set since 6.13)",
    ),
    Knob(
        "napi_defer_hard_irqs",
        "sysfs",
        "polls",
        0,
        "0..2147483647 (0: off)",
        "empty polls before NAPI re-enables the device IRQ (commit 6f8b12d661d0)",
        "Linux net/core/dev.c napi_complete_done; /sys/class/net/IF/napi_defer_hard_irqs",
    ),
    Knob(
        "irq_suspend_timeout",
        "netlink",
        "ns",
        0,
        "0..10000000000 (0: off)",
        "while epoll busy-polls with prefer_busy_poll and finds events, keep the IRQ "
        "suspended up to this long (Linux >= 6.13, commit 5dc51ec86df6)",
        "Linux net/core/dev.c busy_poll_stop; netdev netlink napi-set irq-suspend-timeout",
    ),
)

_E1000_TIMER_KNOBS = (
    ("RxIntDelay", "RDTR", "RX packet timer (restarted per frame)"),
    ("RxAbsIntDelay", "RADV", "RX absolute timer (from the first frame)"),
    ("TxIntDelay", "TIDV", "TX packet timer (descriptors with IDE)"),
    ("TxAbsIntDelay", "TADV", "TX absolute timer"),
)

#: Linux e1000 >= 7.3 and e1000e timer defaults [1.024 us] (e1000_param.c /
#: e1000e param.c DEFAULT_RDTR 0, DEFAULT_RADV 8, DEFAULT_TIDV 8, DEFAULT_TADV 32).
_E1000_TIMER_DEFAULTS = {"RxIntDelay": 0, "RxAbsIntDelay": 8, "TxIntDelay": 8, "TxAbsIntDelay": 32}


def _e1000_knobs(driver: str) -> list[Knob]:
    mod = "e1000" if driver == "linux-e1000" else "e1000e"
    param = "e1000_param.c" if mod == "e1000" else "e1000e/param.c"
    knobs = [
        Knob(
            "rx-usecs",
            "ethtool -C",
            "us",
            3,
            "0 (off), 1 (dynamic), 3 (dynamic conservative), 4 (simplified), 10..10000",
            "sets itr_setting and itr: 0/1/3/4 select modes, N >= 10 a static "
            "1000000/N interrupts/s",
            f"Linux {mod} ethtool.c {mod}_set_coalesce".replace("e1000e_set", "e1000_set"),
        ),
        Knob(
            "InterruptThrottleRate",
            "module parameter",
            "int/s or mode",
            3,
            "0, 1, 3, 4, 100..100000",
            "the same state at module load: 0 off, 1 dynamic, 3 dynamic conservative, "
            "4 simplified, else a static rate",
            f"Linux {param} {mod}_check_options",
        ),
    ]
    for key, reg, what in _E1000_TIMER_KNOBS:
        knobs.append(
            Knob(
                key,
                "module parameter",
                "1.024 us",
                _E1000_TIMER_DEFAULTS[key],
                "0..65535",
                f"{reg}: {what}",
                f"Linux {param} {mod}_check_options; written in {mod}_configure_rx/tx",
            )
        )
    return knobs + list(_NAPI_KNOBS)


#: Linux e1000 5.x (2004) timer defaults [1.024 us]: e1000_param.c of the
#: 5.x driver (DEFAULT_RDTR 0, DEFAULT_RADV 128, DEFAULT_TIDV 64,
#: DEFAULT_TADV 64), the defaults of the simulator's ``e1000-5x`` model.
_E1000_5X_TIMER_DEFAULTS = {
    "RxIntDelay": 0,
    "RxAbsIntDelay": 128,
    "TxIntDelay": 64,
    "TxAbsIntDelay": 64,
}


def _e1000_5x_knobs() -> list[Knob]:
    """e1000 5.x: module parameters only (no ethtool coalescing call), read at
    load; the default build is non-NAPI, so no NAPI knobs."""
    knobs = [
        Knob(
            "InterruptThrottleRate",
            "module parameter",
            "int/s or mode",
            1,
            "0 (off), 1 (dynamic, the default when unset), 100..100000; other values: 8000",
            "1: the 2-s watchdog sets 2000..8000 interrupts/s from the good-octet counts; "
            "N: a static ITR of 1e9/(N*256)",
            "Linux e1000 5.x e1000_param.c e1000_check_options; e1000_watchdog (dynamic ITR)",
        )
    ]
    for key, reg, what in _E1000_TIMER_KNOBS:
        knobs.append(
            Knob(
                key,
                "module parameter",
                "1.024 us",
                _E1000_5X_TIMER_DEFAULTS[key],
                "0..65535",
                f"{reg}: {what}",
                "Linux e1000 5.x e1000_param.c; written in e1000_configure_rx/tx",
            )
        )
    return knobs


def _igb_knobs() -> list[Knob]:
    return [
        Knob(
            "rx-usecs",
            "ethtool -C",
            "us",
            3,
            "0, 1 (dynamic), 3 (dynamic conservative), 10..10000",
            "rx_itr_setting: 1 and 3 select the adaptive modes, N >= 10 a static EITR of N us, "
            "0 writes EITR 1 us",
            "Linux igb_ethtool.c igb_set_coalesce",
        ),
        Knob(
            "tx-usecs",
            "ethtool -C",
            "us",
            0,
            "as rx-usecs; only without queue pairs (else EINVAL)",
            "tx_itr_setting of TX-only vectors",
            "Linux igb_ethtool.c igb_set_coalesce (IGB_FLAG_QUEUE_PAIRS)",
        ),
        *_NAPI_KNOBS,
    ]


def _ixgbe_knobs() -> list[Knob]:
    return [
        Knob(
            "rx-usecs",
            "ethtool -C",
            "us",
            1,
            "0..1022 (IXGBE_MAX_EITR 0xFF8 >> 2); 1 = adaptive",
            "rx_itr_setting = N << 2 for N > 1; 1 selects the adaptive ITR, 0 no throttle",
            "Linux ixgbe_ethtool.c ixgbe_set_coalesce",
        ),
        Knob(
            "tx-usecs",
            "ethtool -C",
            "us",
            1,
            "0..1022; only for TX-only vectors (else EINVAL)",
            "tx_itr_setting of TX-only vectors",
            "Linux ixgbe_ethtool.c ixgbe_set_coalesce",
        ),
        *_NAPI_KNOBS,
    ]


def _dim_knobs() -> list[Knob]:
    return [
        Knob(
            "adaptive-rx",
            "ethtool -C",
            "on/off",
            1,
            "on, off",
            "on: net_dim picks the RX profile {usec, pkts} per measurement; "
            "off: rx-usecs/rx-frames",
            "Linux lib/dim/net_dim.c net_dim; the driver's set_coalesce (e.g. mlx5e)",
        ),
        Knob(
            "rx-usecs",
            "ethtool -C",
            "us",
            8,
            "0..8191 (the model's EITR field)",
            "static CQ moderation period while adaptive-rx is off; ignored while on",
            "the driver's set_coalesce",
        ),
        Knob(
            "rx-frames",
            "ethtool -C",
            "completions",
            0,
            "0..65535",
            "static CQ moderation count while adaptive-rx is off",
            "the driver's set_coalesce",
        ),
        Knob(
            "cqe-mode-rx",
            "ethtool -C",
            "on/off",
            0,
            "on, off",
            "the period restarts at each completion (CQE profiles) instead of each event",
            "Linux lib/dim/net_dim.c rx_profile[DIM_CQ_PERIOD_MODE_START_FROM_CQE]",
        ),
        *_NAPI_KNOBS,
    ]


def _freebsd_knobs(driver: str) -> list[Knob]:
    dev = "em" if driver == "freebsd-em" else "igb"
    knobs = [
        Knob(
            "enable_aim",
            "sysctl",
            "mode",
            1,
            "0 (static max_interrupt_rate), 1 (AIM up to 20000/s), 2 (AIM up to 70000/s)",
            f"dev.{dev}.N.enable_aim (tunable hw.em.enable_aim)",
            "FreeBSD sys/dev/e1000/if_em.c em_add_device_sysctls, em_newitr (2024, D46768)",
        ),
        Knob(
            "max_interrupt_rate",
            "loader.conf",
            "int/s",
            8000,
            "> 0 (0 or less: 8000); the simulator takes 100..100000",
            "the static rate (enable_aim=0) and the boot value: hw.em.max_interrupt_rate",
            "FreeBSD if_em.c em_max_interrupt_rate (CTLFLAG_RDTUN), em_if_attach_pre",
        ),
    ]
    if driver == "freebsd-em":
        for key, reg, dflt in (
            ("rx_int_delay", "RDTR", 0),
            ("rx_abs_int_delay", "RADV", 66),
            ("tx_int_delay", "TIDV", 66),
            ("tx_abs_int_delay", "TADV", 66),
        ):
            knobs.append(
                Knob(
                    key,
                    "sysctl",
                    "us",
                    dflt,
                    "0..67108 (EM_TICKS_TO_USECS(65535))",
                    f"{reg}; dev.em.N.{key}, tunable hw.em.{key}",
                    "FreeBSD if_em.c em_sysctl_int_delay, em_initialize_receive_unit / "
                    "em_initialize_transmit_unit",
                )
            )
        knobs.append(
            Knob(
                "itr",
                "sysctl",
                "us",
                488,
                "0..67108; older trees only",
                "ITR written as EM_USECS_TO_TICKS(us) * 4; "
                "reads back 488 (DEFAULT_ITR) until written",
                "FreeBSD if_em.c em_sysctl_int_delay ('units are 256ns here'), removed in "
                "current trees",
            )
        )
    return knobs


_OPENBSD_DEFAULTS = {
    "EM_TIDV": 64,
    "EM_TADV": 64,
    "EM_RDTR": 0,
    "EM_RADV": 64,
    "MAX_INTS_PER_SEC": 8000,
}


def _openbsd_knobs() -> list[Knob]:
    regs = {"EM_TIDV": "TIDV", "EM_TADV": "TADV", "EM_RDTR": "RDTR", "EM_RADV": "RADV"}
    knobs = [
        Knob(
            key,
            "#define (kernel rebuild)",
            "1.024 us",
            _OPENBSD_DEFAULTS[key],
            "0..65535",
            f"{reg}, written at interface init",
            "OpenBSD sys/dev/pci/if_em.h; em_initialize_receive_unit / em_initialize_transmit_unit",
        )
        for key, reg in regs.items()
    ]
    knobs.append(
        Knob(
            "MAX_INTS_PER_SEC",
            "#define (kernel rebuild)",
            "int/s",
            8000,
            "16..3906250 (ITR is 16 bits)",
            "DEFAULT_ITR = 1e9 / (MAX_INTS_PER_SEC * 256) written to ITR (0x000C4) on every MAC",
            "OpenBSD sys/dev/pci/if_em.c em_initialize_receive_unit",
        )
    )
    return knobs


def knobs(driver: str) -> list[Knob]:
    """The knobs ``driver`` exposes, with defaults, ranges and sources."""
    _check_driver(driver)
    if driver in ("linux-e1000", "linux-e1000e"):
        return _e1000_knobs(driver)
    if driver == "linux-e1000-5x":
        return _e1000_5x_knobs()
    if driver == "linux-igb":
        return _igb_knobs()
    if driver == "linux-ixgbe":
        return _ixgbe_knobs()
    if driver == "linux-dim":
        return _dim_knobs()
    if driver in ("freebsd-em", "freebsd-igb"):
        return _freebsd_knobs(driver)
    return _openbsd_knobs()


def defaults(driver: str) -> dict[str, int]:
    """The driver's default value of every knob."""
    return {k.key: k.default for k in knobs(driver)}


def chip_for(driver: str, chip: str | None) -> Chip:
    """The chip ``chip`` (default: the driver's usual one), checked against the driver."""
    _check_driver(driver)
    default, allowed = DRIVER_CHIPS[driver]
    name = chip or default
    if name not in allowed:
        raise KnobError(
            "--chip",
            f"{driver} does not drive a {name!r}; choose one of {', '.join(allowed)}",
        )
    return CHIPS[name]


def _check_driver(driver: str) -> None:
    if driver not in DRIVERS:
        raise KnobError(
            "--driver", f"unknown driver {driver!r}; choose one of {', '.join(DRIVERS)}"
        )


# -- decoding ------------------------------------------------------------------------------


@dataclass
class _Ctx:
    """Working state of one decode."""

    driver: str
    chip: Chip
    s: dict[str, int]
    given: tuple[str, ...]
    notes: list[Note] = field(default_factory=list)
    regs: list[Register] = field(default_factory=list)

    def note(self, kind: NoteKind, key: str, message: str) -> None:
        self.notes.append(Note(kind, key, message))


def decode(driver: str, settings: Mapping[str, int], chip: str | None = None) -> Decoded:
    """Knob values -> what the device applies. Keys not given take the driver's
    default; an unknown key or a value the driver refuses raises :class:`KnobError`."""
    c = chip_for(driver, chip)
    known = defaults(driver)
    for key in settings:
        if key not in known:
            raise KnobError(key, f"{driver} has no such knob; its knobs: {', '.join(known)}")
    s = {**known, **{k: int(v) for k, v in settings.items()}}
    for key, value in s.items():
        if value < 0:
            raise KnobError(key, f"got {value}; the value cannot be negative")
    ctx = _Ctx(driver, c, s, tuple(settings))
    if driver in ("linux-e1000", "linux-e1000e"):
        out = _decode_e1000(ctx)
    elif driver == "linux-e1000-5x":
        out = _decode_e1000_5x(ctx)
    elif driver == "linux-igb":
        out = _decode_igb(ctx)
    elif driver == "linux-ixgbe":
        out = _decode_ixgbe(ctx)
    elif driver == "linux-dim":
        out = _decode_dim(ctx)
    elif driver in ("freebsd-em", "freebsd-igb"):
        out = _decode_freebsd(ctx)
    else:
        out = _decode_openbsd(ctx)
    if driver.startswith("linux-") and driver != "linux-e1000-5x":
        _napi(ctx, out)
    return out


def _napi(ctx: _Ctx, out: Decoded) -> None:
    """The NAPI knobs: not registers, but the scenario's ``napi`` table."""
    s = ctx.s
    napi = {
        "defer_hard_irqs": s["napi_defer_hard_irqs"],
        "gro_flush_timeout_ns": s["gro_flush_timeout"],
        "irq_suspend_timeout_ns": s["irq_suspend_timeout"],
    }
    for key, limit in (
        ("gro_flush_timeout", 10_000_000_000),
        ("irq_suspend_timeout", 10_000_000_000),
        ("napi_defer_hard_irqs", 2_147_483_647),
    ):
        if s[key] > limit:
            raise KnobError(key, f"got {s[key]}; allowed 0..{limit}")
    if s["napi_defer_hard_irqs"] and not s["gro_flush_timeout"]:
        out.notes.append(
            Note(
                "ignored",
                "napi_defer_hard_irqs",
                "has no effect while gro_flush_timeout is 0: the deferral re-polls from a "
                "timer of that length (napi_complete_done)",
            )
        )
    if out.scenario is not None and any(napi.values()):
        out.scenario["napi"] = {k: v for k, v in napi.items() if v}


def _e1000_option(driver: str, s: dict[str, int], ctx: _Ctx) -> tuple[int, int]:
    """(itr_setting, itr) from rx-usecs (ethtool, applied after load) or the
    module parameter. ethtool: ``e1000_set_coalesce`` / e1000e
    ``e1000_set_coalesce``; parameter: ``e1000_check_options``."""
    usecs_given = "rx-usecs" in ctx.given
    param_given = "InterruptThrottleRate" in ctx.given
    if usecs_given:
        u = s["rx-usecs"]
        if u > 10_000 or 4 < u < 10 or u == 2:
            raise KnobError(
                "rx-usecs",
                f"got {u}; {driver.removeprefix('linux-')}_set_coalesce returns EINVAL for 2, "
                "5..9 and above 10000 (E1000_MIN/MAX_ITR_USECS); allowed: 0, 1, 3, 4, 10..10000",
            )
        if param_given:
            ctx.note(
                "ignored",
                "InterruptThrottleRate",
                "rx-usecs set through ethtool replaces the module parameter's setting",
            )
        if u == 4:
            return 4, 4
        if u <= 3:
            return u, 20_000
        itr = 1_000_000 // u
        return itr & ~3, itr
    v = s["InterruptThrottleRate"]
    if v in (0, 1, 3, 4):
        return (0, 0) if v == 0 else ((4, 4) if v == 4 else (v, 20_000))
    if 100 <= v <= 100_000:
        return v & ~3, v
    if driver == "linux-e1000":
        ctx.note(
            "refused",
            "InterruptThrottleRate",
            f"{v} is outside 0, 1, 3, 4, 100..100000: e1000_validate_option replaces it by the "
            "default 3 and e1000_check_options then keeps itr_setting = 3 & ~3 = 0, so the "
            "throttle is OFF (e1000_param.c)",
        )
        return 0, 3
    ctx.note(
        "refused",
        "InterruptThrottleRate",
        f"{v} is invalid: e1000e falls back to the default 3, dynamic conservative (param.c)",
    )
    return 3, 20_000


def _decode_e1000(ctx: _Ctx) -> Decoded:
    d, c, s = ctx.driver, ctx.chip, ctx.s
    setting, itr = _e1000_option(d, s, ctx)
    key = "InterruptThrottleRate" if "rx-usecs" not in ctx.given else "rx-usecs"
    knob = f"{key} {s[key]}"
    reg_name = "EITR" if c.throttle == "eitr256" else "ITR"
    where = (
        "EITR_82574(n), every vector (e1000e_write_itr, MSI-X)"
        if reg_name == "EITR"
        else "ITR 0x000C4"
    )
    mode = "static"
    adaptive = ""
    rng: tuple[int, int] | None
    if setting == 0:
        value, mode, rng = 0, "off", None
        ctx.note("info", key, f"{knob}: the driver writes ITR = 0, no throttle")
    elif setting in (1, 3):
        value = ints_to_itr(20_000)
        mode = "adaptive"
        rates = (70_000, 20_000, 4_000) if setting == 1 else (20_000, 4_000)
        rng = (itr_ns(ints_to_itr(rates[0])), itr_ns(ints_to_itr(rates[-1])))
        adaptive = (
            f"{'dynamic' if setting == 1 else 'dynamic conservative'}: after each interrupt "
            "e1000_set_itr classifies the traffic and writes ITR for "
            + "/".join(str(r) for r in rates)
            + " interrupts/s ("
            + "/".join(str(ints_to_itr(r)) for r in rates)
            + "), starting from 20000/s (195)"
        )
        ctx.note(
            "adaptive",
            key,
            f"{knob} selects an adaptive mode, not a time (itr_setting {setting})",
        )
    elif setting == 4:
        value = (1_000_000_000 // (4 * 256)) & 0xFFFF
        mode = "adaptive"
        rng = (itr_ns(ints_to_itr(8_000)), itr_ns(ints_to_itr(2_000)))
        adaptive = (
            "simplified: the 2-s watchdog sets 2000..8000 interrupts/s from the TX/RX byte "
            "ratio (ITR 1953..488); until its first run ITR holds 1e9/(4*256) & 0xFFFF = 59058"
        )
        ctx.note("adaptive", key, f"{knob} selects the simplified mode, not a time")
    else:
        value = ints_to_itr(itr)
        rng = (itr_ns(value), itr_ns(value))
        if "rx-usecs" in ctx.given:
            u = s["rx-usecs"]
            if itr_ns(value) != u * 1000:
                ctx.note(
                    "rounded",
                    "rx-usecs",
                    f"{u} us -> itr = 1000000/{u} = {itr}/s -> {reg_name} = 1e9/({itr}*256) = "
                    f"{value} ({itr_ns(value) / 1000:.3f} us, truncated twice)",
                )
    ctx.regs.append(Register(reg_name, value, "256 ns", itr_ns(value), note=where if value else ""))
    if value > 0xFFFF:
        ctx.note("rounded", key, f"{reg_name} keeps the low 16 bits")
    # Delay timers (e1000_configure_rx/tx; IDE only when TxIntDelay != 0).
    ide = s["TxIntDelay"] != 0
    rx_delay, tx_delay = _e1000_timer_registers(ctx, ide)
    drv = "e1000" if d == "linux-e1000" else "e1000e"
    rate = {0: 0}.get(setting, setting if setting in (1, 3, 4) else itr)
    mod: dict[str, Any] = {"kind": "e1000-itr", "driver": drv, "interrupt_throttle_rate": rate}
    if d == "linux-e1000" and setting == 0 and itr == 3:
        mod["interrupt_throttle_rate"] = s["InterruptThrottleRate"]
    for key, _, _ in _E1000_TIMER_KNOBS:
        mod[_SNAKE[key]] = s[key]
    scen: dict[str, Any] = {"chip": c.sim, "moderation": mod, "set_ide": ide}
    return Decoded(
        d,
        c,
        s,
        ctx.given,
        ctx.regs,
        ctx.notes,
        mode,
        adaptive,
        rng,
        rx_delay,
        tx_delay,
        scen,
    )


def _e1000_timer_registers(ctx: _Ctx, ide: bool) -> tuple[int, int]:
    """The four delay-timer registers of e1000/e1000e (``e1000_configure_rx``
    and ``_tx``; IDE only when TxIntDelay != 0), appended to ``ctx``; returns
    the longest RX and TX cause delays [ns]."""
    s, c = ctx.s, ctx.chip
    for key, _reg, _ in _E1000_TIMER_KNOBS:
        if s[key] > TICKS_MAX:
            raise KnobError(key, f"got {s[key]}; allowed 0..65535 (a 16-bit register field)")
    bypass = c.msix
    regs_acting = {
        "RDTR": not bypass,
        "RADV": not bypass and s["RxIntDelay"] != 0,
        "TIDV": not bypass and ide,
        "TADV": not bypass and ide,
    }
    for key, reg, _ in _E1000_TIMER_KNOBS:
        v = s[key]
        why = ""
        if bypass and v:
            why = "MSI-X mode bypasses the delay timers (82574)"
        elif reg == "RADV" and v and not s["RxIntDelay"]:
            why = "RDTR = 0 raises every frame at once, so RADV never runs (8254x SDM §13.4.31)"
        elif reg in ("TIDV", "TADV") and v and not ide:
            why = "TxIntDelay = 0: the driver sets no IDE bit, so TX timers never run"
        ctx.regs.append(
            Register(reg, v, "1.024 us", ticks_ns(v), acts=regs_acting[reg] or not v, note=why)
        )
        if why and key in ctx.given:
            ctx.note("ignored", key, why)
    rx_delay = 0
    if regs_acting["RDTR"] and s["RxIntDelay"]:
        rx_delay = ticks_ns(s["RxAbsIntDelay"] or s["RxIntDelay"])
    tx_delay = ticks_ns(s["TxAbsIntDelay"] or s["TxIntDelay"]) if regs_acting["TIDV"] else 0
    return rx_delay, tx_delay


def _decode_e1000_5x(ctx: _Ctx) -> Decoded:
    """e1000 5.x (2004): ``e1000_check_options`` reads InterruptThrottleRate
    (0 off, 1 dynamic, 100..100000 static, anything else the default 8000 of
    the static range) and ``e1000_watchdog`` retunes a dynamic ITR every 2 s
    between 2000 and 8000 interrupts/s (the simulator's ``e1000-5x``)."""
    c, s = ctx.chip, ctx.s
    v = s["InterruptThrottleRate"]
    knob = f"InterruptThrottleRate {v}"
    mode, adaptive = "static", ""
    rng: tuple[int, int] | None
    if v not in (0, 1) and not 100 <= v <= 100_000:
        ctx.note(
            "refused",
            "InterruptThrottleRate",
            f"{v} is outside 0, 1, 100..100000: e1000_validate_option falls back to 8000",
        )
        v = 8000
    if v == 0:
        value, mode, rng = 0, "off", None
        ctx.note("info", "InterruptThrottleRate", f"{knob}: ITR = 0, no throttle")
    elif v == 1:
        value = ints_to_itr(8000)
        mode = "adaptive"
        rng = (itr_ns(ints_to_itr(8000)), itr_ns(ints_to_itr(2000)))
        adaptive = (
            "dynamic: every 2 s e1000_watchdog sets 2000..8000 interrupts/s (ITR 1953..488) "
            "from the good-octet counts; ITR holds 8000/s (488) until its first run"
        )
        ctx.note("adaptive", "InterruptThrottleRate", f"{knob} selects the dynamic mode")
    else:
        value = ints_to_itr(v)
        rng = (itr_ns(value), itr_ns(value))
    ctx.regs.append(Register("ITR", value, "256 ns", itr_ns(value), note="ITR 0x000C4"))
    ide = s["TxIntDelay"] != 0
    rx_delay, tx_delay = _e1000_timer_registers(ctx, ide)
    mod: dict[str, Any] = {"kind": "e1000-5x", "interrupt_throttle_rate": v}
    for key, _, _ in _E1000_TIMER_KNOBS:
        mod[_SNAKE[key]] = s[key]
    scen: dict[str, Any] = {"chip": c.sim, "moderation": mod, "set_ide": ide}
    return Decoded(
        ctx.driver,
        c,
        s,
        ctx.given,
        ctx.regs,
        ctx.notes,
        mode,
        adaptive,
        rng,
        rx_delay,
        tx_delay,
        scen,
    )


_SNAKE = {
    "RxIntDelay": "rx_int_delay",
    "RxAbsIntDelay": "rx_abs_int_delay",
    "TxIntDelay": "tx_int_delay",
    "TxAbsIntDelay": "tx_abs_int_delay",
}

#: igb constants, igb.h [raw 0.25 us]: IGB_START_ITR 648, IGB_70K_ITR 56,
#: IGB_20K_ITR 196, IGB_4K_ITR 980.
_IGB_RAW = {"start": 648, "70k": 56, "20k": 196, "4k": 980}


def _igb_setting(key: str, u: int) -> int:
    """``igb_set_coalesce``: validation and the setting (1/3 kept, else u << 2)."""
    if u > 10_000 or 3 < u < 10 or u == 2:
        raise KnobError(
            key,
            f"got {u}; igb_set_coalesce returns EINVAL for 2, 4..9 and above 10000 "
            "(IGB_MIN/MAX_ITR_USECS); allowed: 0, 1, 3, 10..10000",
        )
    return u if u in (1, 3) else u << 2


def _decode_igb(ctx: _Ctx) -> Decoded:
    c, s = ctx.chip, ctx.s
    setting = _igb_setting("rx-usecs", s["rx-usecs"])
    if s["tx-usecs"]:
        _igb_setting("tx-usecs", s["tx-usecs"])
        ctx.note(
            "refused",
            "tx-usecs",
            "with queue pairs (the default: one vector per RX/TX pair) igb_set_coalesce returns "
            "EINVAL for any non-zero tx-usecs; the RX setting drives the pair",
        )
    mode, adaptive = "static", ""
    if setting in (1, 3):
        mode = "adaptive"
        lo = _IGB_RAW["70k"] if setting == 1 else _IGB_RAW["20k"]
        rng: tuple[int, int] | None = (
            igb_eitr_us(lo) * 1000,
            igb_eitr_us(_IGB_RAW["4k"]) * 1000,
        )
        value = igb_eitr_us(_IGB_RAW["start"])
        adaptive = (
            f"{'dynamic' if setting == 1 else 'dynamic conservative'}: at each NAPI completion "
            "igb_set_itr (one vector) or igb_update_ring_itr (several) picks the next EITR, "
            "written at the start of the next interrupt: "
            + ("14/" if setting == 1 else "")
            + "49/245 us (raw "
            + ("56/" if setting == 1 else "")
            + "196/980); the first interrupt writes IGB_START_ITR 648 = 162 us, EITR is 0 "
            "(no throttle) until then"
        )
        ctx.note(
            "adaptive",
            "rx-usecs",
            f"{setting} selects an adaptive mode (rx_itr_setting {setting}), not {setting} us",
        )
    else:
        value = igb_eitr_us(setting)
        rng = (value * 1000, value * 1000)
        if setting > IGB_EITR_MASK:
            ctx.note(
                "rounded",
                "rx-usecs",
                f"{s['rx-usecs']} us does not fit the 13-bit interval field: igb_write_itr "
                f"masks raw {setting} with 0x7FFC to {setting & IGB_EITR_MASK}, an interval of "
                f"{value} us (rx-usecs above 8191 wrap)",
            )
        if setting == 0:
            ctx.note(
                "rounded",
                "rx-usecs",
                "0 does not turn the throttle off: igb_write_itr writes itr_val 0 as 4, "
                "an EITR interval of 1 us (up to 1000000 interrupts/s per vector)",
            )
    raw = (value << 2) | CNT_IGNR
    ctx.regs.append(
        Register(
            "EITR",
            value,
            "1 us (bits 14:2)",
            value * 1000,
            word=raw,
            note="every queue vector; written with CNT_IGNR (bit 31) by igb_write_itr",
        )
    )
    mod: dict[str, Any] = {"kind": "igb", "rx_usecs": s["rx-usecs"]}
    scen = {"chip": c.sim, "moderation": mod}
    return Decoded(
        ctx.driver, c, s, ctx.given, ctx.regs, ctx.notes, mode, adaptive, rng, 0, 0, scen
    )


#: ixgbe.h [raw, us << 2]: IXGBE_MIN_RSC_ITR 24, IXGBE_20K_ITR 200, IXGBE_12K_ITR 336.
_IXGBE_20K, _IXGBE_12K, _IXGBE_MIN_RSC = 200, 336, 24


def _decode_ixgbe(ctx: _Ctx) -> Decoded:
    c, s = ctx.chip, ctx.s
    for key in ("rx-usecs", "tx-usecs"):
        if s[key] > IXGBE_MAX_EITR >> 2:
            raise KnobError(
                key,
                f"got {s[key]}; ixgbe_set_coalesce returns EINVAL above IXGBE_MAX_EITR >> 2: "
                "allowed 0..1022",
            )
    u = s["rx-usecs"]
    setting = u << 2 if u > 1 else u
    if "tx-usecs" in ctx.given and s["tx-usecs"] and s["tx-usecs"] != 1:
        ctx.note(
            "refused",
            "tx-usecs",
            "with mixed RX/TX vectors (the default) ixgbe_set_coalesce returns EINVAL for a "
            "non-zero tx-usecs; the RX setting drives each vector",
        )
    mode, adaptive = "static", ""
    unit = "256 ns" if c.throttle == "ixgbe256" else "2 us (bits 11:3)"
    if setting == 1:
        mode = "adaptive"
        itr = _IXGBE_20K
        rng: tuple[int, int] | None = None
        adaptive = (
            "adaptive: ixgbe_update_itr/ixgbe_set_itr choose EITR from the traffic, starting at "
            "IXGBE_20K_ITR = 200 (50 us) for RX vectors; the range is not modelled here"
        )
        ctx.note("adaptive", "rx-usecs", "1 selects the adaptive ITR, not 1 us")
    else:
        itr = setting
        ns = ixgbe_eitr_ns(itr, c)
        rng = None if ns == 0 else (ns, ns)
        if setting == 0:
            mode = "off"
        elif c.throttle == "ixgbe2us" and ns != u * 1000:
            ctx.note(
                "rounded",
                "rx-usecs",
                f"{u} us -> raw {setting} & 0xFF8 = {setting & IXGBE_MAX_EITR}: the interval "
                f"field counts 2 us, so {u} us is applied as {ns // 1000} us",
            )
    if setting != 1 and setting <= _IXGBE_MIN_RSC:
        ctx.note(
            "info",
            "rx-usecs",
            f"rx-usecs {u} (setting {setting} <= IXGBE_MIN_RSC_ITR 24) switches hardware LRO "
            "(RSC) off when it is on (ixgbe_update_rsc: 'rx-usecs set too low')",
        )
    reg = itr & IXGBE_MAX_EITR
    word = reg | (reg << 16) if c.throttle == "ixgbe256" else reg | 0x8000_0000
    shown = reg if c.throttle == "ixgbe256" else reg >> 3
    ctx.regs.append(
        Register(
            "EITR",
            shown,
            unit,
            ixgbe_eitr_ns(itr, c),
            word=word,
            note="ixgbe_write_eitr: 82598 writes the value in both halves, later MACs set "
            "CNT_WDIS (bit 31)",
        )
    )
    return Decoded(
        ctx.driver,
        c,
        s,
        ctx.given,
        ctx.regs,
        ctx.notes,
        mode,
        adaptive,
        rng,
        0,
        0,
        None,
        "holdoff has no 10 GbE chip or ixgbe adaptive model",
    )


#: lib/dim/net_dim.c profiles {usec, pkts} (as crates/holdoff-core/src/moderation/dim.rs).
DIM_RX_EQE = ((1, 256), (8, 256), (64, 256), (128, 256), (256, 256))
DIM_RX_CQE = ((2, 256), (8, 128), (16, 64), (32, 64), (64, 64))


def _decode_dim(ctx: _Ctx) -> Decoded:
    c, s = ctx.chip, ctx.s
    for key in ("adaptive-rx", "cqe-mode-rx"):
        if s[key] not in (0, 1):
            raise KnobError(key, f"got {s[key]}; allowed: on, off")
    if s["rx-usecs"] > 8191:
        raise KnobError("rx-usecs", f"got {s['rx-usecs']}; the model's EITR field takes 0..8191 us")
    if s["rx-frames"] > 0xFFFF:
        raise KnobError("rx-frames", f"got {s['rx-frames']}; allowed 0..65535")
    cqe = bool(s["cqe-mode-rx"])
    table = DIM_RX_CQE if cqe else DIM_RX_EQE
    if s["adaptive-rx"]:
        usec, pkts = table[1]
        for key in ("rx-usecs", "rx-frames"):
            if key in ctx.given:
                ctx.note(
                    "ignored",
                    key,
                    "adaptive-rx is on: net_dim's profile overwrites the period and count at its "
                    "next decision",
                )
        mode = "adaptive"
        adaptive = (
            f"net_dim hill-climbs over the {'CQE' if cqe else 'EQE'} RX profiles "
            + ", ".join(f"{u} us/{p}" for u, p in table)
            + " (index 1 at start)"
        )
        rng: tuple[int, int] | None = (table[0][0] * 1000, table[-1][0] * 1000)
        mod: dict[str, Any] = {"kind": "dim", "profile": "rx-cqe" if cqe else "rx-eqe"}
    else:
        usec, pkts = s["rx-usecs"], s["rx-frames"]
        mode = "static" if usec else "off"
        adaptive = ""
        rng = (usec * 1000, usec * 1000) if usec else None
        mod = {"kind": "static", "eitr_us": usec}
        if pkts:
            ctx.note(
                "info",
                "rx-frames",
                "the completion count has no e1000/igb equivalent: the simulator applies the "
                "period only",
            )
    ctx.regs.append(Register("CQ period", usec, "1 us", usec * 1000, note="EITR in the model"))
    ctx.regs.append(Register("CQ count", pkts, "completions", None, note="not modelled"))
    return Decoded(
        ctx.driver,
        c,
        s,
        ctx.given,
        ctx.regs,
        ctx.notes,
        mode,
        adaptive,
        rng,
        0,
        0,
        {"chip": c.sim, "moderation": mod},
    )


def _freebsd_rate_reg(rate: int, c: Chip) -> tuple[str, int, int, int]:
    """(register, value, interval_ns, word) for a rate: em ``EM_INTS_TO_ITR``
    (ITR, or EITR_82574 in MSI-X mode), igb ``IGB_INTS_TO_EITR`` =
    ``((1e6 / r) << 2) & 0x7FFC`` with CNT_IGNR (if_em.c em_newitr)."""
    if c.throttle == "eitr1us":
        raw = ((1_000_000 // rate) << 2) & IGB_EITR_MASK
        return "EITR", raw >> 2, (raw >> 2) * 1000, raw | CNT_IGNR
    itr = ints_to_itr(rate)
    name = "EITR" if c.throttle == "eitr256" else "ITR"
    return name, itr, itr_ns(itr), itr


def _decode_freebsd(ctx: _Ctx) -> Decoded:
    d, c, s = ctx.driver, ctx.chip, ctx.s
    aim = s["enable_aim"]
    rate = s["max_interrupt_rate"]
    if rate <= 0:
        ctx.note("refused", "max_interrupt_rate", "0 or less: em_if_attach_pre uses 8000")
        rate = 8000
    if aim > 2:
        ctx.note(
            "rounded",
            "enable_aim",
            f"{aim} acts as 2: em_newitr tests only enable_aim != 0 and == 1",
        )
    name, value, ns, word = _freebsd_rate_reg(rate, c)
    if aim == 0:
        mode, adaptive = "static", ""
        rng: tuple[int, int] | None = (ns, ns)
    else:
        mode = "adaptive"
        top = 70_000 if aim >= 2 else 20_000
        lo_ns = _freebsd_rate_reg(top, c)[2]
        hi_ns = _freebsd_rate_reg(4_000, c)[2]
        rng = (min(lo_ns, ns), max(hi_ns, ns))
        classes = [top] + ([20_000] if top != 20_000 else []) + [4_000]
        adaptive = (
            f"AIM {'low latency' if aim >= 2 else 'normal'}: at every interrupt em_newitr moves "
            "one latency class and writes "
            + "/".join(f"{r}" for r in classes)
            + f" interrupts/s ({name} "
            + "/".join(str(_freebsd_rate_reg(r, c)[1]) for r in classes)
            + f"); until the first busy interrupt the boot value {value} "
            f"({rate}/s) stays"
        )
        ctx.note(
            "adaptive",
            "enable_aim",
            f"{aim}: the AIM rewrites {name} per interrupt; max_interrupt_rate is only the "
            "boot value",
        )
    ctx.regs.append(
        Register(
            name,
            value,
            "1 us (bits 14:2)" if name == "EITR" and c.throttle == "eitr1us" else "256 ns",
            ns,
            word=word if word != value else None,
        )
    )
    rx_delay = tx_delay = 0
    ide = False
    if d == "freebsd-em":
        ide = s["tx_int_delay"] > 0
        for key in ("rx_int_delay", "rx_abs_int_delay", "tx_int_delay", "tx_abs_int_delay", "itr"):
            if s[key] > em_ticks_to_usecs(TICKS_MAX):
                raise KnobError(
                    key,
                    f"got {s[key]}; em_sysctl_int_delay returns EINVAL above "
                    f"EM_TICKS_TO_USECS(65535): allowed 0..{em_ticks_to_usecs(TICKS_MAX)} us",
                )
        regmap = (
            ("rx_int_delay", "RDTR"),
            ("rx_abs_int_delay", "RADV"),
            ("tx_int_delay", "TIDV"),
            ("tx_abs_int_delay", "TADV"),
        )
        for key, reg in regmap:
            v = s[key]
            why = ""
            if c.msix and v:
                why = "MSI-X mode (82574) bypasses the delay timers"
            elif reg == "RADV" and v and not s["rx_int_delay"]:
                why = "RDTR = 0 raises every frame at once, so RADV never runs"
            elif reg in ("TIDV", "TADV") and v and not ide:
                why = "tx_int_delay = 0 clears IDE on the descriptors: TX timers never run"
            ctx.regs.append(
                Register(
                    reg,
                    v,
                    "1.024 us",
                    ticks_ns(v),
                    acts=not why,
                    note=why or "the us value written as ticks at interface init",
                )
            )
            if v and key in ctx.given:
                ctx.note(
                    "rounded",
                    key,
                    f"{v} us: em_initialize_*_unit writes the value itself into the 1.024-us "
                    f"register ({v} ticks = {ticks_ns(v) / 1000:.1f} us); a run-time sysctl write "
                    f"converts it instead (EM_USECS_TO_TICKS = {em_usecs_to_ticks(v)} ticks) until "
                    "the next interface reinit",
                )
            if why and key in ctx.given:
                ctx.note("ignored", key, why)
        if not c.msix:
            if s["rx_int_delay"]:
                rx_delay = ticks_ns(s["rx_abs_int_delay"] or s["rx_int_delay"])
            if ide:
                tx_delay = ticks_ns(s["tx_abs_int_delay"] or s["tx_int_delay"])
        if "itr" in ctx.given:
            v = s["itr"]
            if v == 488:
                ctx.note(
                    "info",
                    "itr",
                    "488 is the boot readback: DEFAULT_ITR in 256 ns units (125 us), not us; "
                    "writing 488 back would set EM_USECS_TO_TICKS(488) * 4 = 1904 (487 us)",
                )
            else:
                itr = em_usecs_to_ticks(v) * 4
                ctx.note(
                    "rounded",
                    "itr",
                    f"{v} us -> ITR = EM_USECS_TO_TICKS({v}) * 4 = {itr} "
                    f"({itr * 256 / 1000:.1f} us); "
                    "the AIM (enable_aim != 0) overwrites it at the next busy interrupt",
                )
    else:
        for key in s:
            if key.endswith("int_delay") and key in ctx.given:
                ctx.note("ignored", key, "igb-class MACs have no such sysctl or register")
    scen: dict[str, Any]
    if aim == 0 and d == "freebsd-em":
        scen = {
            "chip": c.sim,
            "moderation": {
                "kind": "static",
                "itr_256ns": value,
                "rdtr_1024ns": s["rx_int_delay"],
                "radv_1024ns": s["rx_abs_int_delay"],
                "tidv_1024ns": s["tx_int_delay"],
                "tadv_1024ns": s["tx_abs_int_delay"],
            },
            "set_ide": ide,
        }
    else:
        scen = {
            "chip": c.sim,
            "moderation": {
                "kind": "freebsd-aim",
                "enable_aim": min(aim, 2),
                "max_interrupt_rate": rate,
            },
        }
        if d == "freebsd-em":
            scen["set_ide"] = ide
    note = ""
    if scen["moderation"]["kind"] == "freebsd-aim" and not 100 <= rate <= 100_000:
        note = f"max_interrupt_rate {rate} is outside the simulator's 100..100000"
        scen_out: dict[str, Any] | None = None
    else:
        scen_out = scen
        if (
            d == "freebsd-em"
            and aim
            and any(
                s[k]
                for k in ("rx_int_delay", "rx_abs_int_delay", "tx_int_delay", "tx_abs_int_delay")
            )
        ):
            note = "kind freebsd-aim carries no delay timers: the model runs them at 0"
    return Decoded(
        d,
        c,
        s,
        ctx.given,
        ctx.regs,
        ctx.notes,
        mode,
        adaptive,
        rng,
        rx_delay,
        tx_delay,
        scen_out,
        note,
    )


def _decode_openbsd(ctx: _Ctx) -> Decoded:
    c, s = ctx.chip, ctx.s
    for key in ("EM_TIDV", "EM_TADV", "EM_RDTR", "EM_RADV"):
        if s[key] > TICKS_MAX:
            raise KnobError(key, f"got {s[key]}; allowed 0..65535 (a 16-bit register field)")
    rate = s["MAX_INTS_PER_SEC"]
    if not 16 <= rate <= 3_906_250:
        raise KnobError(
            "MAX_INTS_PER_SEC",
            f"got {rate}; DEFAULT_ITR = 1e9/(rate*256) must fit ITR's 16 bits and be > 0: "
            "allowed 16..3906250",
        )
    itr = ints_to_itr(rate)
    note = "legacy ITR 0x000C4 on every MAC (em_initialize_receive_unit)"
    if c.throttle == "eitr1us":
        note += (
            "; the I210 datasheet lists EITR[0] for INTx/MSI, whether 0x000C4 reaches it is "
            "not settled (scenario field legacy_itr)"
        )
    ctx.regs.append(Register("ITR", itr, "256 ns", itr_ns(itr), note=note))
    igb = c.throttle == "eitr1us"
    ide = c.tx_ide
    rdtr = s["EM_RDTR"]
    for key, reg in (
        ("EM_RDTR", "RDTR"),
        ("EM_RADV", "RADV"),
        ("EM_TIDV", "TIDV"),
        ("EM_TADV", "TADV"),
    ):
        v = s[key]
        why = ""
        if igb and reg != "RDTR":
            why = f"{c.name} has no {reg} register (igb class), the write is dropped"
        elif igb and v:
            why = (
                f"{c.name} has no RDTR register (igb class); the simulator applies it as a what-if"
            )
        elif reg in ("TIDV", "TADV") and not ide:
            why = "no IDE on this MAC's TX descriptors"
        elif reg == "RADV" and not rdtr:
            why = "not written while EM_RDTR is 0 (every frame is an immediate cause)"
        ctx.regs.append(Register(reg, v, "1.024 us", ticks_ns(v), acts=not why or not v, note=why))
        if why and v and key in ctx.given:
            ctx.note("ignored", key, why)
    if igb and any(k in ctx.given for k in ("EM_TIDV", "EM_TADV")):
        ctx.note(
            "info",
            "EM_TIDV",
            "em(4) sets IDE only outside 82575/82576/82580/i210/i350 ('lack the IDE bit'): on "
            f"an {c.name} no TX delay value changes when TX completions are raised",
        )
    rx_delay = ticks_ns(s["EM_RADV"] or rdtr) if rdtr else 0
    tx_delay = ticks_ns(s["EM_TADV"] or s["EM_TIDV"]) if ide and not igb else 0
    mod = {
        "kind": "static",
        "itr_256ns": itr,
        "rdtr_1024ns": rdtr,
        "radv_1024ns": s["EM_RADV"] if rdtr else 0,
        "tidv_1024ns": s["EM_TIDV"],
        "tadv_1024ns": s["EM_TADV"],
    }
    scen: dict[str, Any] = {"chip": c.sim, "moderation": mod, "set_ide": ide}
    if c.msix:
        scen["interrupt_mode"] = "msi"
    ctx.note(
        "info",
        "MAX_INTS_PER_SEC",
        "em(4) knobs are compile-time: edit sys/dev/pci/if_em.h and rebuild the kernel",
    )
    return Decoded(
        ctx.driver,
        c,
        s,
        ctx.given,
        ctx.regs,
        ctx.notes,
        "static" if itr else "off",
        "",
        (itr_ns(itr), itr_ns(itr)) if itr else None,
        rx_delay,
        tx_delay,
        scen,
    )


# -- registers -> knobs -----------------------------------------------------------------


def encode(driver: str, registers: Mapping[str, int], chip: str | None = None) -> dict[str, int]:
    """Register values -> the knob values that make the driver write them,
    or the nearest ones it can write. Keys: ``ITR`` (256 ns units, also the
    82574's EITR), ``EITR_us`` (igb class / ixgbe interval in us), ``RDTR``,
    ``RADV``, ``TIDV``, ``TADV`` (1.024 us units). The result holds only the
    knobs the registers determine; :func:`decode` of it gives back the
    registers, rounded where the knob's granularity is coarser."""
    c = chip_for(driver, chip)
    out: dict[str, int] = {}
    itr = registers.get("ITR")
    eitr_us = registers.get("EITR_us")
    if driver in ("linux-e1000", "linux-e1000e"):
        if itr is not None:
            out["rx-usecs"] = _nearest(
                itr, range(10, 10_001), lambda u: ints_to_itr(1_000_000 // u), zero_key=0
            )
        for key, reg, _ in _E1000_TIMER_KNOBS:
            if reg in registers:
                out[key] = registers[reg]
    elif driver == "linux-e1000-5x":
        if itr is not None:
            out["InterruptThrottleRate"] = (
                0 if itr == 0 else _nearest(itr, range(100, 100_001), ints_to_itr, zero_key=None)
            )
        for key, reg, _ in _E1000_TIMER_KNOBS:
            if reg in registers:
                out[key] = registers[reg]
    elif driver == "linux-igb":
        if eitr_us is not None:
            out["rx-usecs"] = 0 if eitr_us <= 1 else min(max(eitr_us, 10), 10_000)
    elif driver == "linux-ixgbe":
        if eitr_us is not None:
            even = eitr_us - eitr_us % 2 if c.throttle == "ixgbe2us" else eitr_us
            out["rx-usecs"] = min(even, 1022) if even != 1 else 2
    elif driver == "linux-dim":
        if eitr_us is not None:
            out["adaptive-rx"] = 0
            out["rx-usecs"] = eitr_us
    elif driver in ("freebsd-em", "freebsd-igb"):
        value = eitr_us if c.throttle == "eitr1us" else itr
        if value is not None:
            out["enable_aim"] = 0
            out["max_interrupt_rate"] = _nearest(
                value,
                range(100, 100_001),
                lambda r: _freebsd_rate_reg(r, c)[1],
                zero_key=None,
            )
        if driver == "freebsd-em":
            for key, reg in (
                ("rx_int_delay", "RDTR"),
                ("rx_abs_int_delay", "RADV"),
                ("tx_int_delay", "TIDV"),
                ("tx_abs_int_delay", "TADV"),
            ):
                if reg in registers:
                    out[key] = registers[reg]
    else:
        if itr is not None:
            out["MAX_INTS_PER_SEC"] = _nearest(
                itr, range(16, 3_906_251), ints_to_itr, zero_key=None
            )
        for key, reg in (
            ("EM_RDTR", "RDTR"),
            ("EM_RADV", "RADV"),
            ("EM_TIDV", "TIDV"),
            ("EM_TADV", "TADV"),
        ):
            if reg in registers:
                out[key] = registers[reg]
    return out


def _nearest(
    target: int,
    domain: range,
    forward: Callable[[int], int],
    *,
    zero_key: int | None,
) -> int:
    """The knob in ``domain`` whose register (``forward``, monotonic in the
    knob) equals ``target``, preferring the roundest such knob (most trailing
    decimal zeros: 8000 rather than 7989 for ITR 488); if none does, the knob
    whose register is nearest (ties: the smaller knob). ``zero_key``: the
    knob for a register of 0 (throttle off), if the driver has one."""
    if target == 0 and zero_key is not None:
        return zero_key
    lo, hi = domain.start, domain.stop - 1
    sign = 1 if forward(hi) >= forward(lo) else -1

    def first(pred: Callable[[int], bool]) -> int:
        a, b = lo, hi + 1
        while a < b:
            mid = (a + b) // 2
            if pred(mid):
                b = mid
            else:
                a = mid + 1
        return a

    a = first(lambda k: sign * forward(k) >= sign * target)
    b = first(lambda k: sign * forward(k) > sign * target)
    if a < b:
        p: int = int(10 ** len(str(hi)))
        while p >= 1:
            m = -(-a // p) * p
            if m < b:
                return m
            p //= 10
    cands = [k for k in (a - 1, a, a + 1) if lo <= k <= hi]
    return min(cands, key=lambda k: (abs(forward(k) - target), k))


# -- commands ---------------------------------------------------------------------------


def commands(decoded: Decoded, iface: str = "eth0", unit: int = 0) -> list[str]:
    """The lines that set ``decoded``'s knobs (only those different from the
    default, plus the main throttle knob always), for pasting."""
    d, s = decoded.driver, decoded.settings
    dflt = defaults(d)
    changed = {k: v for k, v in s.items() if v != dflt[k]}
    lines: list[str] = []
    if d in ("linux-e1000", "linux-e1000e"):
        mod = d.removeprefix("linux-")
        if "InterruptThrottleRate" in decoded.given and "rx-usecs" not in decoded.given:
            params = ["InterruptThrottleRate"]
        else:
            params = []
            lines.append(f"ethtool -C {iface} rx-usecs {s['rx-usecs']}")
        params += [k for k, _, _ in _E1000_TIMER_KNOBS if k in changed]
        if params:
            opts = " ".join(f"{k}={s[k]}" for k in params)
            lines.append(f"echo 'options {mod} {opts}' > /etc/modprobe.d/{mod}.conf")
            lines.append(f"modprobe -r {mod} && modprobe {mod}")
    elif d == "linux-e1000-5x":
        params = ["InterruptThrottleRate"]
        params += [k for k, _, _ in _E1000_TIMER_KNOBS if k in changed]
        opts = " ".join(f"{k}={s[k]}" for k in params)
        lines.append(f"echo 'options e1000 {opts}' >> /etc/modprobe.conf")
        lines.append("rmmod e1000 && modprobe e1000  # module parameters are read at load")
    elif d in ("linux-igb", "linux-ixgbe"):
        lines.append(f"ethtool -C {iface} rx-usecs {s['rx-usecs']}")
    elif d == "linux-dim":
        if s["adaptive-rx"]:
            lines.append(f"ethtool -C {iface} adaptive-rx on")
        else:
            line = f"ethtool -C {iface} adaptive-rx off rx-usecs {s['rx-usecs']}"
            if s["rx-frames"]:
                line += f" rx-frames {s['rx-frames']}"
            lines.append(line)
        if "cqe-mode-rx" in changed:
            lines.append(f"ethtool -C {iface} cqe-mode-rx {'on' if s['cqe-mode-rx'] else 'off'}")
    elif d in ("freebsd-em", "freebsd-igb"):
        dev = "em" if d == "freebsd-em" else "igb"
        lines.append(f"sysctl dev.{dev}.{unit}.enable_aim={s['enable_aim']}")
        if "max_interrupt_rate" in changed:
            lines.append(
                f"echo 'hw.em.max_interrupt_rate=\"{s['max_interrupt_rate']}\"' >> "
                "/boot/loader.conf  # read at boot: reboot"
            )
        for key in ("rx_int_delay", "rx_abs_int_delay", "tx_int_delay", "tx_abs_int_delay"):
            if key in changed and key in s:
                lines.append(f"sysctl dev.{dev}.{unit}.{key}={s[key]}")
                lines.append(f"echo 'hw.em.{key}=\"{s[key]}\"' >> /boot/loader.conf")
    else:
        lines.append("# sys/dev/pci/if_em.h, then rebuild and install the kernel and reboot:")
        for key in ("EM_TIDV", "EM_TADV", "EM_RDTR", "EM_RADV"):
            lines.append(f"#define {key} {s[key]}")
        if "MAX_INTS_PER_SEC" in changed:
            lines.append(f"#define MAX_INTS_PER_SEC {s['MAX_INTS_PER_SEC']}")
        lines.append(
            "cd /sys/arch/$(machine)/compile/GENERIC.MP && make obj && make config && make "
            "&& make install"
        )
    if d.startswith("linux-"):
        for key in ("gro_flush_timeout", "napi_defer_hard_irqs"):
            if key in changed:
                lines.append(f"echo {s[key]} > /sys/class/net/{iface}/{key}")
        if "irq_suspend_timeout" in changed:
            lines.append(
                "ynl --family netdev --do napi-set --json "
                f'\'{{"id": NAPI_ID, "irq-suspend-timeout": {s["irq_suspend_timeout"]}}}\''
                "  # NAPI_ID: ynl --family netdev --dump napi-get"
            )
    return lines


# -- checks -----------------------------------------------------------------------------


def wire_ns(frames: int, wire_bytes: int, speed_mbps: int) -> float:
    """Time to carry ``frames`` frames of ``wire_bytes`` at ``speed_mbps`` [ns]."""
    return frames * wire_bytes * 8 * 1000 / speed_mbps


def check(
    decoded: Decoded,
    *,
    speed_mbps: int | None = None,
    rx_ring: int | None = None,
    tx_ring: int | None = None,
    tsq_bytes: int = TSQ_BYTES_DEFAULT,
) -> list[Warning]:
    """The numeric warnings of a setting.

    - RX: the longest time a received frame can wait for its interrupt (the
      throttle interval, or the RX delay timer if longer) against the time
      frames at line rate take to fill the RX ring;
    - TX: the longest TX completion delay against the time the TX ring lasts
      at line rate, and against a Linux sender's TSQ budget (``tsq_bytes``
      at line rate: TCP stops when that much sits below it and waits for
      completions).

    A static interval is checked with minimum-size frames (the worst case).
    An adaptive mode picks its shortest interval for small packets and its
    longest for bulk traffic, so its shortest interval is checked with
    64-byte frames and its longest with full-size ones (and against TSQ)."""
    c = decoded.chip
    speed = speed_mbps or c.link_mbps
    rx_ring = rx_ring or c.rx_ring
    tx_ring = tx_ring or c.tx_ring
    key = _main_key(decoded.driver)
    lo, hi = decoded.throttle_ns or (0, 0)
    if decoded.mode == "adaptive":
        cases = [
            (lo, MIN_FRAME_WIRE_BYTES, "64-byte", "the adaptive mode's shortest interval"),
            (hi, MAX_FRAME_WIRE_BYTES, "full-size", "the adaptive mode's longest interval"),
        ]
    else:
        cases = [(hi, MIN_FRAME_WIRE_BYTES, "64-byte", "the interval")]
    out: list[Warning] = []
    for interval, wire, size, what in cases:
        rx_hold = max(interval, decoded.rx_delay_ns)
        rx_what = "the RX delay timer" if decoded.rx_delay_ns > interval else what
        fill = wire_ns(rx_ring, wire, speed)
        if rx_hold > fill:
            frames = int(rx_hold // wire_ns(1, wire, speed))
            out.append(
                Warning(
                    key,
                    f"RX: {rx_what} ({rx_hold / 1000:.1f} us) is longer than the "
                    f"{fill / 1000:.1f} us in which {size} frames at {speed} Mb/s fill the "
                    f"{rx_ring}-descriptor RX ring: {frames} frames arrive per interval, so a "
                    "line-rate burst overruns the ring",
                )
            )
        tx_hold = max(interval, decoded.tx_delay_ns)
        drain = wire_ns(tx_ring, wire, speed)
        if tx_hold > drain:
            tx_what = "the TX delay timer" if decoded.tx_delay_ns > interval else what
            out.append(
                Warning(
                    key,
                    f"TX: completions can wait {tx_hold / 1000:.1f} us ({tx_what}), longer than "
                    f"the {drain / 1000:.1f} us the {tx_ring}-descriptor TX ring lasts with "
                    f"{size} frames at {speed} Mb/s: a sender runs out of descriptors before "
                    "they are reclaimed",
                )
            )
    tx_hold = max(hi, decoded.tx_delay_ns)
    tsq = tsq_bytes * 8 * 1000 / speed
    if tx_hold > tsq:
        out.append(
            Warning(
                key,
                f"TX: completions can wait {tx_hold / 1000:.1f} us, longer than the "
                f"{tsq / 1000:.1f} us a Linux sender's output limit covers at {speed} Mb/s "
                f"(tcp_limit_output_bytes {tsq_bytes} B): a single TCP flow stalls between "
                "completions",
            )
        )
    return out


def _main_key(driver: str) -> str:
    return {
        "freebsd-em": "enable_aim",
        "freebsd-igb": "enable_aim",
        "openbsd-em": "MAX_INTS_PER_SEC",
        "linux-dim": "adaptive-rx",
        "linux-e1000-5x": "InterruptThrottleRate",
    }.get(driver, "rx-usecs")


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
