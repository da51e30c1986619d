"""Registers -> knob values, and a setting -> the lines to paste."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from holdoff.knobs.base import Decoded, ints_to_itr
from holdoff.knobs.bsd import _freebsd_rate_reg
from holdoff.knobs.cq_drivers import cq_commands
from holdoff.knobs.intel_itr import intel_itr_line
from holdoff.knobs.tables import _E1000_TIMER_KNOBS, chip_for, defaults

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
    elif driver in ("linux-dim", "linux-mlx5", "linux-ena"):
        # The CQ period (or ENA's RX delay at a 1 us resolution) in us.
        if eitr_us is not None:
            out["adaptive-rx"] = 0
            out["rx-usecs"] = eitr_us
    elif driver in ("linux-ice", "linux-i40e"):
        if eitr_us is not None:
            # The ITR counts 2 us: the even value at or below, within ITR_MAX.
            even = min(eitr_us - eitr_us % 2, 8160)
            out.update({"adaptive-rx": 0, "adaptive-tx": 0, "rx-usecs": even, "tx-usecs": even})
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
    elif d in ("linux-ice", "linux-i40e"):
        lines.append(intel_itr_line(s, iface))
    elif d in ("linux-mlx5", "linux-ena"):
        lines += cq_commands(decoded, iface, set(changed))
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
