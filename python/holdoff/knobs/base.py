"""Knob-model types, constants and the unit conversions, as the C code computes them."""

from __future__ import annotations

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
    "linux-mlx5",
    "linux-ena",
    "freebsd-em",
    "freebsd-igb",
    "openbsd-em",
    "linux-ice",
    "linux-i40e",
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
    #: "ixgbe2us" (82599 and later: bits 11:3 of a 256 ns count, 2.048 us
    #: steps, CNT_WDIS), "ixgbe256" (82598: 256 ns, restarted by a write),
    #: "itr2us" (Intel 700/800 Series: ITR in 2 us plus an INTRL in 4 us).
    #: "cq" (no throttle register: a period and count per completion queue,
    #: ConnectX under mlx5 and ENA).
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
            "Intel 82599 (10 GbE, 16 RSS queues)",
            "ixgbe2us",
            10_000,
            512,
            512,
            False,
            False,
            True,
            "82599",
        ),
        Chip(
            "x540",
            "Intel X540 (10GBASE-T, 16 RSS queues)",
            "ixgbe2us",
            10_000,
            512,
            512,
            False,
            False,
            True,
            "x540",
        ),
        Chip(
            "x550",
            "Intel X550 (10GBASE-T, 63 RSS queues, 512-entry RETA)",
            "ixgbe2us",
            10_000,
            512,
            512,
            False,
            False,
            True,
            "x550",
        ),
        # ice.h / i40e.h default rings (ICE_DFLT_NUM_RX_DESC 2048, TX 256;
        # I40E_DEFAULT_NUM_DESCRIPTORS 512).
        Chip(
            "e810-c",
            "Intel E810-C (100 GbE, ice)",
            "itr2us",
            100_000,
            2048,
            256,
            False,
            False,
            True,
            "e810-c",
        ),
        Chip(
            "e810-xxv",
            "Intel E810-XXV (25 GbE, ice)",
            "itr2us",
            25_000,
            2048,
            256,
            False,
            False,
            True,
            "e810-xxv",
        ),
        Chip(
            "x710",
            "Intel X710 (10 GbE, i40e)",
            "itr2us",
            10_000,
            512,
            512,
            False,
            False,
            True,
            "x710",
        ),
        Chip(
            "xl710",
            "Intel XL710 (40 GbE, i40e)",
            "itr2us",
            40_000,
            512,
            512,
            False,
            False,
            True,
            "xl710",
        ),
        Chip(
            "cx5", "NVIDIA ConnectX-5 (25 GbE)", "cq", 25_000, 1024, 1024, False, False, True, "cx5"
        ),
        Chip(
            "cx6",
            "NVIDIA ConnectX-6 Dx (100 GbE)",
            "cq",
            100_000,
            1024,
            1024,
            False,
            False,
            True,
            "cx6",
        ),
        Chip(
            "ena",
            "AWS ENA (c5n class, 25 Gb/s)",
            "cq",
            25_000,
            1024,
            1024,
            False,
            False,
            True,
            "ena",
        ),
    )
}

_E1000_CHIPS = ("82540", "82546")
_IGB_CHIPS = ("82576", "i350", "i210", "i211")

#: Per driver: the default chip and the chips it binds.
#: Host driver architectures whose handler re-enables no MSI-X vector after
#: the chip's auto-mask (the scenario validation refuses MSI-X under them):
#: e1000 5.x non-NAPI and OpenBSD em's MSI handler.
NO_MSIX_HOST_DRIVERS = ("linux-isr", "openbsd-intr")


def without_msix(nic: dict[str, Any]) -> dict[str, Any]:
    """A scenario NIC table in MSI mode if its chip would take MSI-X by
    default (for a host driver of :data:`NO_MSIX_HOST_DRIVERS`)."""
    chip = CHIPS.get(str(nic.get("chip")))
    if chip is not None and chip.msix and "interrupt_mode" not in nic:
        return {**nic, "interrupt_mode": "msi"}
    return nic


DRIVER_CHIPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "linux-e1000": ("82546", _E1000_CHIPS),
    "linux-e1000-5x": ("82546", _E1000_CHIPS),
    "linux-e1000e": ("82574", ("82574",)),
    "linux-igb": ("i210", _IGB_CHIPS),
    "linux-ixgbe": ("82599", ("82598", "82599", "x540", "x550")),
    "linux-dim": ("i210", _IGB_CHIPS),
    "linux-mlx5": ("cx5", ("cx5", "cx6")),
    "linux-ena": ("ena", ("ena",)),
    "freebsd-em": ("82574", (*_E1000_CHIPS, "82574")),
    "freebsd-igb": ("i210", _IGB_CHIPS),
    "openbsd-em": ("i210", (*_E1000_CHIPS, "82574", *_IGB_CHIPS)),
    "linux-ice": ("e810-c", ("e810-c", "e810-xxv")),
    "linux-i40e": ("x710", ("x710", "xl710")),
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
    #: Completions after which the queue raises its event whatever the
    #: timers (mlx5's CQ count of the setting that holds longest; 0: none).
    #: At line rate it bounds how long a frame waits (``knobs.check``).
    rx_frames_cap: int = 0
    tx_frames_cap: int = 0
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
            "rx_frames_cap": self.rx_frames_cap,
            "tx_frames_cap": self.tx_frames_cap,
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


def e1000_timer_idle(reg: str, ticks: int, *, msix: bool, rdtr: int, ide: bool, tx_key: str) -> str:
    """Why an 8254x/8257x delay-timer register (RDTR, RADV, TIDV, TADV) holding a
    non-zero ``ticks`` never runs, or ``""`` when it runs or holds 0: an 82574 in
    MSI-X mode bypasses the timers; RADV never runs while RDTR = 0 raises every
    frame at once (8254x SDM §13.4.31); TIDV/TADV never run without the IDE bit on
    the TX descriptors, which the drivers set only when ``tx_key`` (their TX packet
    delay knob) is not 0."""
    if not ticks:
        return ""
    if msix:
        return "MSI-X mode (82574) bypasses the delay timers"
    if reg == "RADV" and not rdtr:
        return "RDTR = 0 raises every frame at once, so RADV never runs (8254x SDM §13.4.31)"
    if reg in ("TIDV", "TADV") and not ide:
        return (
            f"{tx_key} = 0: the driver sets no IDE bit on the descriptors, so TX timers never run"
        )
    return ""


def e1000_timer_delays_ns(
    rdtr: int, radv: int, tidv: int, tadv: int, *, msix: bool, ide: bool
) -> tuple[int, int]:
    """The longest RX and TX cause delays [ns] of the four delay timers [1.024 us
    ticks]: the absolute timer when set, else the packet timer; no RX delay with
    RDTR = 0, no TX delay without IDE, neither in MSI-X mode."""
    if msix:
        return 0, 0
    rx_delay = ticks_ns(radv or rdtr) if rdtr else 0
    tx_delay = ticks_ns(tadv or tidv) if ide else 0
    return rx_delay, tx_delay


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
    """ixgbe ``ixgbe_write_eitr``: ``itr & IXGBE_MAX_EITR`` (0xFF8), a count
    of 256 ns. On the 82599 and later only bits 11:3 exist
    (``IXGBE_EITR_ITR_INT_MASK``), so the interval moves in 2.048 us steps
    (``IXGBE_MAX_INT_RATE`` 488281 = 1 s / 2.048 us); the driver's
    "microsecond values shifted by 2" (ixgbe.h) treat a step as 2 us, 2.4 %
    short. The 82598 counts the same 256 ns (82598 datasheet, EITR). As the
    simulator's 82599/X540/X550 presets hold it."""
    _ = chip
    return (itr & IXGBE_MAX_EITR) * 256


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

    def result(
        self,
        mode: str,
        adaptive: str,
        throttle_ns: tuple[int, int] | None,
        rx_delay_ns: int = 0,
        tx_delay_ns: int = 0,
        scenario: dict[str, Any] | None = None,
        scenario_note: str = "",
        frames_cap: tuple[int, int] = (0, 0),
    ) -> Decoded:
        """The decode's outcome: this context's registers and notes with the
        mode, the throttle range, the delays, the RX and TX completion caps
        and the simulator's tables."""
        return Decoded(
            self.driver,
            self.chip,
            self.s,
            self.given,
            self.regs,
            self.notes,
            mode,
            adaptive,
            throttle_ns,
            rx_delay_ns,
            tx_delay_ns,
            frames_cap[0],
            frames_cap[1],
            scenario,
            scenario_note,
        )
