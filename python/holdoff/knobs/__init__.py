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
simulator's job, :mod:`holdoff.api`); an ixgbe setting's scenario table uses
the simulator's 82599/X540/X550 presets and its ``ixgbe`` moderation kind (the
82598 has no preset).

Modules: ``base`` (types, register constants, unit conversions),
``tables`` (each driver's knobs), ``linux`` and ``bsd`` (the per-driver
decoders), ``decode`` (the entry point), ``encode`` (registers -> knobs and
the lines to paste), ``check`` (the warnings), ``ethtool_text`` (ethtool
output of every version), ``parse`` (operator text and :func:`explain`),
``persist`` (the forms that survive a reboot). Import from ``holdoff.knobs``.

Units: intervals in ns (``*_ns``) inside, shown in us; rates per second;
register values in their hardware units (names end in the unit).
"""

from __future__ import annotations

from holdoff.knobs.base import (
    CHIPS,
    CNT_IGNR,
    DRIVER_CHIPS,
    DRIVERS,
    IGB_EITR_MASK,
    IXGBE_MAX_EITR,
    MAX_FRAME_WIRE_BYTES,
    MIN_FRAME_WIRE_BYTES,
    NO_MSIX_HOST_DRIVERS,
    TICKS_MAX,
    TSQ_BYTES_DEFAULT,
    Chip,
    Decoded,
    Knob,
    KnobError,
    Note,
    NoteKind,
    Register,
    Warning,
    em_ticks_to_usecs,
    em_usecs_to_ticks,
    igb_eitr_us,
    ints_to_itr,
    itr_ns,
    ixgbe_eitr_ns,
    ticks_ns,
    without_msix,
)
from holdoff.knobs.check import (
    check,
    wire_ns,
)
from holdoff.knobs.decode import (
    decode,
)
from holdoff.knobs.encode import (
    commands,
    encode,
)
from holdoff.knobs.linux import (
    DIM_RX_CQE,
    DIM_RX_EQE,
)
from holdoff.knobs.parse import (
    ETHTOOL_COALESCE_KEYS,
    RING_RANGE,
    Parsed,
    check_iface,
    check_ring,
    explain,
    parse,
    parse_ring,
)
from holdoff.knobs.persist import (
    Form,
    emit,
    persistent_forms,
)
from holdoff.knobs.tables import (
    chip_for,
    defaults,
    knobs,
)

__all__ = [
    "NO_MSIX_HOST_DRIVERS",
    "without_msix",
    "CHIPS",
    "CNT_IGNR",
    "Chip",
    "DIM_RX_CQE",
    "DIM_RX_EQE",
    "DRIVERS",
    "DRIVER_CHIPS",
    "Decoded",
    "Form",
    "ETHTOOL_COALESCE_KEYS",
    "IGB_EITR_MASK",
    "IXGBE_MAX_EITR",
    "Knob",
    "KnobError",
    "MAX_FRAME_WIRE_BYTES",
    "MIN_FRAME_WIRE_BYTES",
    "Note",
    "NoteKind",
    "Parsed",
    "RING_RANGE",
    "Register",
    "TICKS_MAX",
    "TSQ_BYTES_DEFAULT",
    "Warning",
    "check",
    "check_iface",
    "check_ring",
    "chip_for",
    "commands",
    "decode",
    "defaults",
    "em_ticks_to_usecs",
    "em_usecs_to_ticks",
    "emit",
    "encode",
    "explain",
    "igb_eitr_us",
    "ints_to_itr",
    "itr_ns",
    "ixgbe_eitr_ns",
    "knobs",
    "parse",
    "parse_ring",
    "persistent_forms",
    "ticks_ns",
    "wire_ns",
]
