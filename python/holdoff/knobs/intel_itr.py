"""Linux ice (Intel E810) and i40e (Intel X710/XL710) coalescing knobs: what
``ethtool -C adaptive-rx, adaptive-tx, rx-usecs, tx-usecs, rx-usecs-high``
becomes in the ITR and INTRL registers.

Models: ``ice_set_rc_coalesce`` (torvalds/linux
``drivers/net/ethernet/intel/ice/ice_ethtool.c``) and ``__i40e_set_coalesce``
(``i40e/i40e_ethtool.c``): the values each refuses with its message, what it
rounds (ice rounds an odd ``rx-usecs`` down, ``ITR_REG_ALIGN`` = ``& 0x1FFE``;
i40e rounds it up, ``__ALIGN_MASK(x, ~0x1FFE)``; i40e rounds
``rx-usecs-high`` down to 4 us), and how one field acts on another (a static
``rx-usecs`` is refused while adaptive is on, unless unchanged; ice refuses a
changed ``rx-usecs-high`` while either adaptive mode is on; i40e's rate limit
is independent of adaptive). Registers: ITR in 2 us (``__ice_write_itr``,
``i40e_buildreg_itr``), INTRL in 4 us (``ice_write_intrl``,
``i40e_intrl_usec_to_reg``).

Simplifies: a decode starts from the interface defaults (adaptive on, 50 us,
INTRL 0), as one ``ethtool -C`` line on a fresh interface; per-queue settings
are one setting for all queues. Units: us, register counts of 2 and 4 us.
"""

from __future__ import annotations

from typing import Any

from holdoff.knobs.base import Decoded, Knob, KnobError, Register, _Ctx

#: ICE_DFLT_RX_ITR / I40E_ITR_20K [us].
DFLT_ITR_US = 50
#: ICE_ITR_MAX / I40E_MAX_ITR [us].
ITR_MAX_US = 8160
#: ICE_MAX_INTRL; i40e INTRL_REG_TO_USEC(I40E_MAX_INTRL) = 0x3B << 2 [us].
MAX_INTRL_US = 236
#: The part's INTRL granularity as ice_get_itr_intrl_gran reads it [us].
ICE_INTRL_GRAN = {"e810-c": 4, "e810-xxv": 8}


def _common_knobs(driver: str) -> list[Knob]:
    ice = driver == "linux-ice"
    setc = (
        "Linux ice_ethtool.c ice_set_rc_coalesce"
        if ice
        else "Linux i40e_ethtool.c __i40e_set_coalesce"
    )
    rounding = "odd values round down (ITR_REG_ALIGN)" if ice else "odd values round up"
    high = (
        "0 or 4..236 (8..236 on 25G parts, ice_get_itr_intrl_gran); only with "
        "adaptive-rx and adaptive-tx off"
        if ice
        else "0..236, rounded down to 4 us; independent of adaptive"
    )
    return [
        Knob(
            "adaptive-rx",
            "ethtool -C",
            "on/off",
            1,
            "on, off",
            "on: the driver's adaptive moderation picks the RX ITR"
            + (" (DIM with ITR/INTRL profile pairs)" if ice else " (i40e_update_itr)"),
            setc,
        ),
        Knob(
            "adaptive-tx",
            "ethtool -C",
            "on/off",
            1,
            "on, off",
            "the same for the TX ITR (ITR index 1)",
            setc,
        ),
        Knob(
            "rx-usecs",
            "ethtool -C",
            "us",
            DFLT_ITR_US,
            f"0..{ITR_MAX_US}; {rounding}; only the current value while adaptive-rx is on",
            "the RX ITR (index 0): minimum interval between interrupts, in 2 us steps",
            setc,
        ),
        Knob(
            "tx-usecs",
            "ethtool -C",
            "us",
            DFLT_ITR_US,
            f"0..{ITR_MAX_US}; {rounding}; only the current value while adaptive-tx is on",
            "the TX ITR (index 1)",
            setc,
        ),
        Knob(
            "rx-usecs-high",
            "ethtool -C",
            "us",
            0,
            high,
            "the vector's interrupt rate limit (INTRL): interrupts no closer than this",
            setc,
        ),
    ]


def ice_knobs() -> list[Knob]:
    """The knobs of Linux ice."""
    return _common_knobs("linux-ice")


def i40e_knobs() -> list[Knob]:
    """The knobs of Linux i40e."""
    return _common_knobs("linux-i40e")


def intel_itr_line(s: dict[str, int], iface: str) -> str:
    """The one ``ethtool -C`` line for an ice/i40e setting. The adaptive flags go
    in the same command as the static values: both drivers check a changed
    ``rx-usecs`` against the adaptive flag of the same request."""
    line = f"ethtool -C {iface}"
    for d in ("rx", "tx"):
        line += f" adaptive-{d} {'on' if s[f'adaptive-{d}'] else 'off'}"
    for d in ("rx", "tx"):
        if not s[f"adaptive-{d}"]:
            line += f" {d}-usecs {s[f'{d}-usecs']}"
    if s["rx-usecs-high"]:
        line += f" rx-usecs-high {s['rx-usecs-high']}"
    return line


def _onoff(ctx: _Ctx, key: str) -> bool:
    v = ctx.s[key]
    if v not in (0, 1):
        raise KnobError(key, f"got {v}; allowed: on (1) or off (0)")
    return bool(v)


def _i40e_align(us: int) -> int:
    """i40e ``ITR_REG_ALIGN``: ``(us + ~0x1FFE) & 0x1FFE`` (rounds up to even)."""
    return (us + 0xFFFF_E001) & 0x1FFE


def decode_intel_itr(ctx: _Ctx) -> Decoded:
    """ice or i40e: the refusals and roundings of the driver's set_coalesce,
    the ITR and INTRL registers, the interval range and the simulator's table."""
    ice = ctx.driver == "linux-ice"
    s, c = ctx.s, ctx.chip
    fn = "ice_set_rc_coalesce" if ice else "__i40e_set_coalesce"
    ad_rx, ad_tx = _onoff(ctx, "adaptive-rx"), _onoff(ctx, "adaptive-tx")
    high = s["rx-usecs-high"]
    gran = ICE_INTRL_GRAN.get(c.name, 4) if ice else 4
    if ice and (high > MAX_INTRL_US or (high and high < gran)):
        raise KnobError(
            "rx-usecs-high",
            f"got {high}; {fn} says 'Invalid value, rx-usecs-high valid values are 0 "
            f"(disabled), {gran}-{MAX_INTRL_US}' on a {c.name}",
        )
    if not ice and high > MAX_INTRL_US:
        raise KnobError(
            "rx-usecs-high",
            f"got {high}; {fn} says 'Invalid value, rx-usecs-high range is 0-{MAX_INTRL_US}'",
        )
    if ice and high and (ad_rx or ad_tx):
        raise KnobError(
            "rx-usecs-high",
            f"got {high}; {fn} refuses it: 'Invalid value, rx-usecs-high cannot be changed "
            "if adaptive-tx or adaptive-rx is enabled': add adaptive-rx off adaptive-tx off",
        )
    itrs: dict[str, int] = {}
    for key, on, d in (("rx-usecs", ad_rx, "rx"), ("tx-usecs", ad_tx, "tx")):
        u = s[key]
        if on and u != DFLT_ITR_US:
            what = "interrupt throttling" if ice else "interrupt moderation"
            shown = d if ice else d.upper()
            raise KnobError(
                key,
                f"got {u}; {fn} refuses it: '{shown} {what} cannot be changed if "
                f"adaptive-{d} is enabled': add adaptive-{d} off to the same command",
            )
        if u > ITR_MAX_US:
            raise KnobError(
                key, f"got {u}; {fn} says 'Invalid value, {d}-usecs range is 0-{ITR_MAX_US}'"
            )
        held = u & 0x1FFE if ice else _i40e_align(u)
        if held != u:
            how = (
                f"'device only supports even values. Rounding down': {u} -> {held} us"
                if ice
                else f"ITR_REG_ALIGN rounds {u} up to {held} us"
            )
            ctx.note("rounded", key, how)
        itrs[d] = held
    intrl = high // 4 * 4
    if intrl != high:
        ctx.note(
            "rounded",
            "rx-usecs-high",
            f"ice_write_intrl writes {high} / 4 = {high // 4} (4 us counts): {intrl} us acts"
            if ice
            else f"'Interrupt rate limit rounded down to {intrl}'",
        )
    for d, idx in (("rx", 0), ("tx", 1)):
        on = ad_rx if d == "rx" else ad_tx
        ctx.regs.append(
            Register(
                f"ITR{idx} ({d.upper()})",
                itrs[d] // 2,
                "2 us",
                itrs[d] * 1000,
                acts=not on,
                note="set by the adaptive algorithm while adaptive is on"
                if on
                else ("times the vector" if d == "rx" else "TX index: traced, not a throttle"),
            )
        )
    ice_dyn = ice and (ad_rx or ad_tx)
    ctx.regs.append(
        Register(
            "INTRL",
            intrl // 4,
            "4 us",
            intrl * 1000,
            acts=not ice_dyn,
            note="written by the DIM work items from the profile pairs while adaptive"
            if ice_dyn
            else ("0: no rate limit" if intrl == 0 else "interrupts at most 1e6 / value per s"),
        )
    )
    mode, adaptive = "static", ""
    rng: tuple[int, int] | None
    if ad_rx:
        mode = "adaptive"
        if ice:
            adaptive = (
                "adaptive: at each NAPI completion ice_net_dim feeds net_dim (EQE) per ring "
                "container; a new profile index writes the pair {ITR, INTRL}: RX {2,10} {8,16} "
                "{32,0} {96,0} {128,0} us, TX {2,10} {8,16} {64,0} {128,0} {256,0} us; a "
                'measurement older than 1 s restarts; the simulator runs it (kind "ice")'
            )
            rng = (2_000, 128_000)
        else:
            adaptive = (
                "adaptive: at each NAPI completion i40e_update_itr moves target_itr (2..126 us, "
                "packet bands, average-size curve, latency flag, 1-jiffy gate) and "
                "i40e_update_enable_itr writes at most one ITR per poll; the simulator runs it "
                '(kind "i40e")'
            )
            rng = (2_000, 126_000)
    else:
        rx_ns = itrs["rx"] * 1000
        spacing = max(rx_ns, intrl * 1000)
        rng = None if spacing == 0 else (spacing, spacing)
        if spacing == 0:
            mode = "off"
    if intrl and rng is not None:
        rng = (max(rng[0], intrl * 1000), max(rng[1], intrl * 1000))
    elif intrl and rng is None:
        rng = (intrl * 1000, intrl * 1000)
    mod: dict[str, Any] = {
        "kind": "ice" if ice else "i40e",
        "adaptive_rx": ad_rx,
        "adaptive_tx": ad_tx,
        "rx_usecs": s["rx-usecs"],
        "tx_usecs": s["tx-usecs"],
        "rx_usecs_high": high,
    }
    return ctx.result(mode, adaptive, rng, 0, 0, {"chip": c.sim, "moderation": mod})
