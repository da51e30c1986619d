"""The knobs each driver exposes, with defaults, ranges and sources."""

from __future__ import annotations

from holdoff.knobs.base import CHIPS, DRIVER_CHIPS, DRIVERS, Chip, Knob, KnobError
from holdoff.knobs.cq_drivers import ena_knobs, mlx5_knobs
from holdoff.knobs.intel_itr import i40e_knobs, ice_knobs

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
    source = f"Linux {param} {mod}_check_options; written in {mod}_configure_rx/tx"
    return knobs + _e1000_timer_knobs(_E1000_TIMER_DEFAULTS, source) + list(_NAPI_KNOBS)


def _e1000_timer_knobs(defaults: dict[str, int], source: str) -> list[Knob]:
    """The four delay-timer module parameters of an e1000 driver [1.024 us], with
    that driver's ``defaults`` and the ``source`` that reads and writes them."""
    return [
        Knob(
            key, "module parameter", "1.024 us", defaults[key], "0..65535", f"{reg}: {what}", source
        )
        for key, reg, what in _E1000_TIMER_KNOBS
    ]


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
    source = "Linux e1000 5.x e1000_param.c; written in e1000_configure_rx/tx"
    return knobs + _e1000_timer_knobs(_E1000_5X_TIMER_DEFAULTS, source)


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
            "0..1022; only 0 on RX/TX vectors (the default; else EINVAL)",
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
    if driver == "linux-ice":
        return [*ice_knobs(), *_NAPI_KNOBS]
    if driver == "linux-i40e":
        return [*i40e_knobs(), *_NAPI_KNOBS]
    if driver == "linux-mlx5":
        return [*mlx5_knobs(), *_NAPI_KNOBS]
    if driver == "linux-ena":
        return [*ena_knobs(), *_NAPI_KNOBS]
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
