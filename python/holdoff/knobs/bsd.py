"""FreeBSD em/igb and OpenBSD em: knob values -> the registers the drivers write."""

from __future__ import annotations

from typing import Any

from holdoff.knobs.base import (
    CNT_IGNR,
    IGB_EITR_MASK,
    TICKS_MAX,
    Chip,
    Decoded,
    KnobError,
    Register,
    _Ctx,
    e1000_timer_delays_ns,
    e1000_timer_idle,
    em_ticks_to_usecs,
    em_usecs_to_ticks,
    ints_to_itr,
    itr_ns,
    ticks_ns,
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
            why = e1000_timer_idle(
                reg, v, msix=c.msix, rdtr=s["rx_int_delay"], ide=ide, tx_key="tx_int_delay"
            )
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
        timers = (s[key] for key, _ in regmap)
        rx_delay, tx_delay = e1000_timer_delays_ns(*timers, msix=c.msix, ide=ide)
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
    return ctx.result(
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
    return ctx.result(
        "static" if itr else "off",
        "",
        (itr_ns(itr), itr_ns(itr)) if itr else None,
        rx_delay,
        tx_delay,
        scen,
    )
