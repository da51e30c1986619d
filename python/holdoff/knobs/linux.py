"""Linux drivers: knob values -> the registers e1000 (7.x and 5.x), e1000e, igb,
ixgbe and DIM write."""

from __future__ import annotations

from typing import Any

from holdoff.knobs.base import (
    CNT_IGNR,
    IGB_EITR_MASK,
    IXGBE_MAX_EITR,
    TICKS_MAX,
    Decoded,
    KnobError,
    Note,
    Register,
    _Ctx,
    e1000_timer_delays_ns,
    e1000_timer_idle,
    igb_eitr_us,
    ints_to_itr,
    itr_ns,
    ixgbe_eitr_ns,
    ticks_ns,
)
from holdoff.knobs.tables import _E1000_TIMER_KNOBS


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
    drv = "e1000" if d == "linux-e1000" else "e1000e"
    rate = {0: 0}.get(setting, setting if setting in (1, 3, 4) else itr)
    mod: dict[str, Any] = {"kind": "e1000-itr", "driver": drv, "interrupt_throttle_rate": rate}
    if d == "linux-e1000" and setting == 0 and itr == 3:
        mod["interrupt_throttle_rate"] = s["InterruptThrottleRate"]
    return _e1000_with_timers(ctx, mode, adaptive, rng, mod)


def _e1000_with_timers(
    ctx: _Ctx, mode: str, adaptive: str, rng: tuple[int, int] | None, mod: dict[str, Any]
) -> Decoded:
    """The end that the e1000 decoders share: the delay timers (``e1000_configure_rx``
    and ``_tx``; IDE only when TxIntDelay != 0) appended to ``ctx`` after the ITR
    register, their values added to the moderation ``mod``, and the result."""
    s = ctx.s
    ide = s["TxIntDelay"] != 0
    rx_delay, tx_delay = _e1000_timer_registers(ctx, ide)
    for key, _, _ in _E1000_TIMER_KNOBS:
        mod[_SNAKE[key]] = s[key]
    scen: dict[str, Any] = {"chip": ctx.chip.sim, "moderation": mod, "set_ide": ide}
    return ctx.result(mode, adaptive, rng, rx_delay, tx_delay, scen)


def _e1000_timer_registers(ctx: _Ctx, ide: bool) -> tuple[int, int]:
    """The four delay-timer registers of e1000/e1000e (``e1000_configure_rx``
    and ``_tx``; IDE only when TxIntDelay != 0), appended to ``ctx``; returns
    the longest RX and TX cause delays [ns]."""
    s, c = ctx.s, ctx.chip
    for key, _reg, _ in _E1000_TIMER_KNOBS:
        if s[key] > TICKS_MAX:
            raise KnobError(key, f"got {s[key]}; allowed 0..65535 (a 16-bit register field)")
    for key, reg, _ in _E1000_TIMER_KNOBS:
        v = s[key]
        why = e1000_timer_idle(
            reg, v, msix=c.msix, rdtr=s["RxIntDelay"], ide=ide, tx_key="TxIntDelay"
        )
        ctx.regs.append(Register(reg, v, "1.024 us", ticks_ns(v), acts=not why, note=why))
        if why and key in ctx.given:
            ctx.note("ignored", key, why)
    timers = (s[key] for key, _, _ in _E1000_TIMER_KNOBS)
    return e1000_timer_delays_ns(*timers, msix=c.msix, ide=ide)


def _decode_e1000_5x(ctx: _Ctx) -> Decoded:
    """e1000 5.x (2004): ``e1000_check_options`` reads InterruptThrottleRate
    (0 off, 1 dynamic, 100..100000 static, anything else the default 8000 of
    the static range) and ``e1000_watchdog`` retunes a dynamic ITR every 2 s
    between 2000 and 8000 interrupts/s (the simulator's ``e1000-5x``)."""
    s = ctx.s
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
            "from the good-octet counts; ITR 0 (unthrottled) until its first run, "
            "at the port's own phase within 2 s; an idle first window gives 8000/s (488)"
        )
        ctx.note("adaptive", "InterruptThrottleRate", f"{knob} selects the dynamic mode")
    else:
        value = ints_to_itr(v)
        rng = (itr_ns(value), itr_ns(value))
    ctx.regs.append(Register("ITR", value, "256 ns", itr_ns(value), note="ITR 0x000C4"))
    mod: dict[str, Any] = {"kind": "e1000-5x", "interrupt_throttle_rate": v}
    return _e1000_with_timers(ctx, mode, adaptive, rng, mod)


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
    return ctx.result(mode, adaptive, rng, 0, 0, scen)


#: ixgbe.h [raw, us << 2]: IXGBE_MIN_RSC_ITR 24, IXGBE_20K_ITR 200, IXGBE_12K_ITR 336.
_IXGBE_20K, _IXGBE_12K, _IXGBE_MIN_RSC = 200, 336, 24
#: ixgbe.h [us]: IXGBE_ITR_ADAPTIVE_MIN_USECS, IXGBE_ITR_ADAPTIVE_MAX_USECS.
_IXGBE_ADAPTIVE_MIN_US, _IXGBE_ADAPTIVE_MAX_US = 10, 126


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
    if "tx-usecs" in ctx.given and s["tx-usecs"]:
        raise KnobError(
            "tx-usecs",
            f"got {s['tx-usecs']}; allowed: 0 only. Each vector serves an RX and a TX ring "
            "(the default), and ixgbe_set_coalesce returns EINVAL for any non-zero "
            "tx-usecs on such vectors ('reject Tx specific changes in case of mixed RxTx "
            "vectors'): rx-usecs moderates both directions; drop tx-usecs (ethtool -c "
            "shows it as 0)",
        )
    mode, adaptive = "static", ""
    unit = "256 ns" if c.throttle == "ixgbe256" else "256 ns (bits 11:3: 2.048 us steps)"
    if setting == 1:
        mode = "adaptive"
        itr = _IXGBE_20K
        # ixgbe_update_itr keeps each container within
        # IXGBE_ITR_ADAPTIVE_MIN_USECS 10 and IXGBE_ITR_ADAPTIVE_MAX_USECS 126,
        # written as usecs << 2 (as the simulator's moderation kind "ixgbe").
        rng: tuple[int, int] | None = (
            ixgbe_eitr_ns(_IXGBE_ADAPTIVE_MIN_US << 2, c),
            ixgbe_eitr_ns(_IXGBE_ADAPTIVE_MAX_US << 2, c),
        )
        adaptive = (
            "adaptive: at each NAPI completion ixgbe_set_itr runs ixgbe_update_itr on the TX "
            "and RX rings (packet-count bands, average-size curve, latency flag, 1-jiffy gate) "
            "and writes EITR = min(rx, tx) << 2, from 10 to 126 us, starting at IXGBE_20K_ITR "
            '= 200 (51.2 us as held); the simulator runs it (moderation kind "ixgbe")'
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
                f"field holds {(setting & IXGBE_MAX_EITR) >> 3} steps of 2.048 us, so {u} us is "
                f"applied as {ns / 1000:.3f} us",
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
    if c.sim is None:
        return ctx.result(
            mode, adaptive, rng, 0, 0, None, f"holdoff has no {c.name} chip preset (82598)"
        )
    scen: dict[str, Any] = {
        "chip": c.sim,
        "moderation": {"kind": "ixgbe", "rx_usecs": u},
    }
    return ctx.result(mode, adaptive, rng, 0, 0, scen)


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
    return ctx.result(
        mode,
        adaptive,
        rng,
        0,
        0,
        {"chip": c.sim, "moderation": mod},
    )
