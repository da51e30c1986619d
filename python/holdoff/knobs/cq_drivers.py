"""The knobs of the Linux drivers whose NICs moderate per completion queue:
``linux-mlx5`` (NVIDIA ConnectX-5/6) and ``linux-ena`` (AWS ENA).

Each decode states what the device then holds (the CQ period and count per
direction, or ENA's delay fields), which keys the driver refuses and with
which message, what it quantises or ignores, and the simulator's table
(``kind = "mlx5"`` / ``"ena"``, chips ``cx5``, ``cx6``, ``ena``).

Sources: Linux ``drivers/net/ethernet/mellanox/mlx5/core/en_ethtool.c``
(``mlx5e_ethtool_set_coalesce``, ``mlx5e_ethtool_get_coalesce``), ``en.h``
(the ``MLX5E_PARAMS_DEFAULT_*_CQ_MODERATION_*`` defaults), ``en_main.c``
(``mlx5e_build_nic_params``), ``lib/dim/net_dim.c`` (the profiles);
``drivers/net/ethernet/amazon/ena/ena_ethtool.c`` (``ena_set_coalesce``,
``supported_coalesce_params``), ``ena_com.c``
(``ena_com_update_nonadaptive_moderation_interval``), ``ena_eth_com.h``
(``ena_com_update_intr_reg``), ``ena_netdev.h`` (the defaults). The
mapping is written out in ``docs/knobs.md``.

Units: usecs [us], frames [completions]; register values in the device's
units (ENA: ``intr_delay_resolution``).
"""

from __future__ import annotations

from typing import Any

from holdoff.knobs.base import Decoded, Knob, KnobError, Register, _Ctx

#: ``MLX5E_MAX_COAL_TIME`` (``MLX5_MAX_CQ_PERIOD``) [us], ``MLX5E_MAX_COAL_FRAMES``.
MLX5_MAX_COAL_TIME = (1 << 12) - 1
MLX5_MAX_COAL_FRAMES = (1 << 16) - 1
#: lib/dim/net_dim.c profiles {usec, pkts}.
DIM_PROFILES: dict[str, tuple[tuple[int, int], ...]] = {
    "rx-eqe": ((1, 256), (8, 256), (64, 256), (128, 256), (256, 256)),
    "rx-cqe": ((2, 256), (8, 128), (16, 64), (32, 64), (64, 64)),
    "tx-eqe": ((1, 128), (8, 128), (32, 128), (64, 128), (128, 128)),
    "tx-cqe": ((5, 128), (8, 64), (16, 32), (32, 32), (64, 32)),
}
#: ENA: ``ENA_INTR_INITIAL_TX_INTERVAL_USECS``, the 15-bit delay fields
#: (``ENA_ETH_IO_INTR_REG_RX_INTR_DELAY_MASK`` GENMASK(14, 0)), and the
#: resolution the model's ``ena`` chip reports (``ENA_DEFAULT_INTR_DELAY_RESOLUTION``).
ENA_TX_USECS = 64
ENA_DELAY_MASK = 0x7FFF
ENA_RESOLUTION_US = 1
#: What netlink ethtool answers for a key outside a driver's
#: ``supported_coalesce_params`` (amzn/amzn-drivers issue 214).
UNSUPPORTED = "netlink error: cannot modify an unsupported parameter"
ENA_SUPPORTED = ("adaptive-rx", "rx-usecs", "tx-usecs")

_ONOFF = "on, off"


def _ethtool(key: str, unit: str, default: int, valid: str, meaning: str, source: str) -> Knob:
    return Knob(key, "ethtool -C", unit, default, valid, meaning, source)


def mlx5_knobs() -> list[Knob]:
    """``linux-mlx5``: the ``ethtool -C`` fields ``mlx5e_ethtool_set_coalesce`` takes.
    The usecs/frames defaults are what ``ethtool -c`` shows with DIM on (the
    default profile the CQs start at)."""
    src = "Linux mlx5/core/en_ethtool.c mlx5e_ethtool_set_coalesce"
    return [
        _ethtool(
            "adaptive-rx", "on/off", 1, _ONOFF, "DIM (net_dim) on each RX CQ", f"{src}; en_main.c"
        ),
        _ethtool("adaptive-tx", "on/off", 1, _ONOFF, "DIM on each TX CQ", src),
        _ethtool(
            "cqe-mode-rx",
            "on/off",
            1,
            _ONOFF,
            "RX CQ period restarts at each completion (CQE-based) rather than at each "
            "event; DIM uses the CQE profiles (default on where the device has "
            "cq_period_start_from_cqe)",
            f"{src}; en_main.c mlx5e_build_rx_cq_param",
        ),
        _ethtool(
            "cqe-mode-tx", "on/off", 0, _ONOFF, "TX CQ period mode (EQE since 48bfc39791b8)", src
        ),
        _ethtool(
            "rx-usecs",
            "us",
            8,
            f"0..{MLX5_MAX_COAL_TIME}",
            "RX CQ period (cq_period); held while adaptive-rx is off",
            src,
        ),
        _ethtool(
            "rx-frames",
            "completions",
            128,
            f"0..{MLX5_MAX_COAL_FRAMES}",
            "RX CQ count (cq_max_count); held while adaptive-rx is off",
            src,
        ),
        _ethtool("tx-usecs", "us", 8, f"0..{MLX5_MAX_COAL_TIME}", "TX CQ period", src),
        _ethtool("tx-frames", "completions", 128, f"0..{MLX5_MAX_COAL_FRAMES}", "TX CQ count", src),
    ]


def ena_knobs() -> list[Knob]:
    """``linux-ena``: ``supported_coalesce_params`` = USECS | USE_ADAPTIVE_RX."""
    src = "Linux amazon/ena/ena_ethtool.c ena_set_coalesce"
    return [
        _ethtool(
            "adaptive-rx",
            "on/off",
            0,
            _ONOFF,
            "DIM on RX (EQE profiles); off by default in the driver (78cb421d185c), on by "
            "default on some instance types (the device's choice)",
            f"{src}; ena_com.c ena_com_init_interrupt_moderation",
        ),
        _ethtool(
            "rx-usecs",
            "us",
            0,
            "0..4294967295 (kept as usecs / intr_delay_resolution, masked to 15 bits)",
            "RX interrupt delay while adaptive-rx is off",
            f"{src}; ena_com.c ena_com_update_nonadaptive_moderation_interval_rx",
        ),
        _ethtool(
            "tx-usecs",
            "us",
            ENA_TX_USECS,
            "0..4294967295 (as rx-usecs)",
            "TX interrupt delay (ENA_INTR_INITIAL_TX_INTERVAL_USECS 64 since 05785adf6e57)",
            f"{src}; ena_com.c ena_com_update_nonadaptive_moderation_interval_tx",
        ),
    ]


def _onoff(ctx: _Ctx, *keys: str) -> None:
    for key in keys:
        if ctx.s[key] not in (0, 1):
            raise KnobError(key, f"got {ctx.s[key]}; allowed: on, off")


def _cq_regs(ctx: _Ctx, way: str, usec: int, pkts: int | None, mode: str, how: str) -> None:
    ctx.regs.append(
        Register(f"{way} CQ period", usec, "1 us", usec * 1000, note=f"cq_period, {mode}; {how}")
    )
    if pkts is not None:
        ctx.regs.append(Register(f"{way} CQ count", pkts, "completions", None, note="cq_max_count"))


def decode_mlx5(ctx: _Ctx) -> Decoded:
    """What ``mlx5e_ethtool_set_coalesce`` and the CQs make of a setting."""
    c, s = ctx.chip, ctx.s
    _onoff(ctx, "adaptive-rx", "adaptive-tx", "cqe-mode-rx", "cqe-mode-tx")
    if s["rx-usecs"] > MLX5_MAX_COAL_TIME or s["tx-usecs"] > MLX5_MAX_COAL_TIME:
        key = "rx-usecs" if s["rx-usecs"] > MLX5_MAX_COAL_TIME else "tx-usecs"
        raise KnobError(
            key,
            f"Max coalesce time {MLX5_MAX_COAL_TIME} usecs, tx-usecs ({s['tx-usecs']}) "
            f"rx-usecs ({s['rx-usecs']}) (mlx5e_ethtool_set_coalesce returns -ERANGE)",
        )
    if s["rx-frames"] > MLX5_MAX_COAL_FRAMES or s["tx-frames"] > MLX5_MAX_COAL_FRAMES:
        key = "rx-frames" if s["rx-frames"] > MLX5_MAX_COAL_FRAMES else "tx-frames"
        raise KnobError(
            key,
            f"Max coalesce frames {MLX5_MAX_COAL_FRAMES}, tx-frames ({s['tx-frames']}) "
            f"rx-frames ({s['rx-frames']}) (mlx5e_ethtool_set_coalesce returns -ERANGE)",
        )
    rng: tuple[int, int] | None = None
    rx_delay = tx_delay = 0
    # The CQ count of the setting that holds a completion longest: the CQ
    # raises its event after that many completions whatever the period.
    caps = {"RX": 0, "TX": 0}
    mode, adaptive = "static", ""
    parts = []
    for way, key_a, key_c, key_u, key_f in (
        ("RX", "adaptive-rx", "cqe-mode-rx", "rx-usecs", "rx-frames"),
        ("TX", "adaptive-tx", "cqe-mode-tx", "tx-usecs", "tx-frames"),
    ):
        cqe = bool(s[key_c])
        period_mode = "CQE-based" if cqe else "EQE-based"
        if s[key_a]:
            table = DIM_PROFILES[f"{way.lower()}-{'cqe' if cqe else 'eqe'}"]
            usec, pkts = table[1]
            for key in (key_u, key_f):
                if key in ctx.given:
                    ctx.note(
                        "ignored",
                        key,
                        f"{key_a} is on: the CQ holds DIM's profile; mlx5e_ethtool_set_coalesce "
                        f"keeps {s[key]} for when {key_a} goes off",
                    )
            _cq_regs(ctx, way, usec, pkts, period_mode, "DIM's default profile at start")
            parts.append(
                f"{way}: net_dim over the {period_mode} profiles "
                + ", ".join(f"{u} us/{p}" for u, p in table)
                + " (index 1 at start), decided at NAPI completion every 64 events and "
                "written by mlx5e_" + way.lower() + "_dim_work from the work queue"
            )
            caps[way] = table[-1][1]
            if way == "RX":
                mode = "adaptive"
                if cqe:
                    rx_delay = table[-1][0] * 1000
                else:
                    rng = (table[0][0] * 1000, table[-1][0] * 1000)
            else:
                # DIM's longest TX profile: a completion waits up to its period.
                tx_delay = table[-1][0] * 1000
        else:
            usec, pkts = s[key_u], s[key_f]
            caps[way] = pkts
            _cq_regs(ctx, way, usec, pkts, period_mode, "mlx5_core_modify_cq_moderation")
            if way == "RX":
                if usec == 0:
                    mode = "off"
                elif cqe:
                    # The period restarts at each completion: no rate cap, a
                    # delay of up to usec after the last packet of a burst.
                    rx_delay = usec * 1000
                else:
                    rng = (usec * 1000, usec * 1000)
            else:
                tx_delay = usec * 1000
            if usec and cqe:
                ctx.note(
                    "info",
                    key_u,
                    f"{period_mode}: the {usec} us period restarts at every completion, so a "
                    f"steady stream is cut only by {key_f} {pkts}"
                    + (" (0: never)" if not pkts else "")
                    + f", and a lone packet waits the whole {usec} us (commit 9908aa292971)",
                )
    adaptive = "; ".join(parts)
    mod: dict[str, Any] = {
        "kind": "mlx5",
        "adaptive_rx": bool(s["adaptive-rx"]),
        "adaptive_tx": bool(s["adaptive-tx"]),
        "cqe_mode_rx": bool(s["cqe-mode-rx"]),
        "cqe_mode_tx": bool(s["cqe-mode-tx"]),
        "rx_usecs": s["rx-usecs"],
        "rx_frames": s["rx-frames"],
        "tx_usecs": s["tx-usecs"],
        "tx_frames": s["tx-frames"],
    }
    return ctx.result(
        mode,
        adaptive,
        rng,
        rx_delay,
        tx_delay,
        {"chip": c.sim, "moderation": mod},
        frames_cap=(caps["RX"], caps["TX"]),
    )


def ena_field(usecs: int, resolution_us: int = ENA_RESOLUTION_US) -> int:
    """The delay field the driver writes: ``usecs / resolution``, masked to 15 bits."""
    return (usecs // max(resolution_us, 1)) & ENA_DELAY_MASK


def decode_ena(ctx: _Ctx) -> Decoded:
    """What ``ena_set_coalesce`` and the device make of a setting."""
    c, s = ctx.chip, ctx.s
    _onoff(ctx, "adaptive-rx")
    res = ENA_RESOLUTION_US
    fields = {}
    for key, way in (("rx-usecs", "RX"), ("tx-usecs", "TX")):
        f = ena_field(s[key], res)
        fields[key] = f
        if f * res != s[key]:
            ctx.note(
                "rounded",
                key,
                f"{s[key]} us -> {s[key]} / intr_delay_resolution ({res} us) = "
                f"{s[key] // res}, masked to the 15-bit field: {f} ({f * res} us applied)",
            )
        ctx.regs.append(
            Register(
                f"{way} interrupt delay",
                f,
                f"{res} us (intr_delay_resolution)",
                f * res * 1000,
                note="written with every unmask (ena_com_update_intr_reg)",
            )
        )
    if s["adaptive-rx"]:
        mode = "adaptive"
        table = DIM_PROFILES["rx-eqe"]
        adaptive = (
            "RX: net_dim over the EQE profiles "
            + ", ".join(f"{u} us" for u, _ in table)
            + " (usec only: ENA has no completion count), decided at NAPI completion "
            "(ena_adjust_adaptive_rx_intr_moderation) and stored by ena_dim_work; the "
            "profile's usec goes into the delay field as is"
        )
        rng: tuple[int, int] | None = (table[0][0] * 1000, table[-1][0] * 1000)
        if "rx-usecs" in ctx.given:
            ctx.note(
                "ignored",
                "rx-usecs",
                "adaptive-rx is on: ena_set_coalesce stores the value for when adaptive-rx "
                "goes off; the RX delay is DIM's",
            )
    else:
        mode = "static" if fields["rx-usecs"] else "off"
        adaptive = ""
        ns = fields["rx-usecs"] * res * 1000
        rng = (ns, ns) if ns else None
        if s["rx-usecs"]:
            ctx.note(
                "info",
                "rx-usecs",
                "some instance types apply coarser steps than the resolution they report "
                "(amzn/amzn-drivers issue 290: 0..8 -> 8 us, 64 -> 50 us, 128 -> 90 us); the "
                "model applies field x resolution",
            )
    ctx.note(
        "info",
        "tx-usecs",
        "one MSI-X vector per queue pair: the RX and TX delays moderate the same "
        "interrupt (ENA_Linux_Best_Practices.rst)",
    )
    mod: dict[str, Any] = {
        "kind": "ena",
        "adaptive_rx": bool(s["adaptive-rx"]),
        "rx_usecs": s["rx-usecs"],
        "tx_usecs": s["tx-usecs"],
    }
    return ctx.result(
        mode, adaptive, rng, 0, fields["tx-usecs"] * res * 1000, {"chip": c.sim, "moderation": mod}
    )


def cq_commands(d: Decoded, iface: str, changed: set[str]) -> list[str]:
    """The ``ethtool -C`` line of a ``linux-mlx5`` or ``linux-ena`` setting."""
    s = d.settings

    def onoff(k: str) -> str:
        return "on" if s[k] else "off"

    if d.driver == "linux-ena":
        parts = [f"adaptive-rx {onoff('adaptive-rx')}"]
        if not s["adaptive-rx"]:
            parts.append(f"rx-usecs {s['rx-usecs']}")
        parts.append(f"tx-usecs {s['tx-usecs']}")
        return [f"ethtool -C {iface} " + " ".join(parts)]
    parts = [f"adaptive-rx {onoff('adaptive-rx')}", f"adaptive-tx {onoff('adaptive-tx')}"]
    for key in ("cqe-mode-rx", "cqe-mode-tx"):
        if key in changed:
            parts.append(f"{key} {onoff(key)}")
    if not s["adaptive-rx"]:
        parts += [f"rx-usecs {s['rx-usecs']}", f"rx-frames {s['rx-frames']}"]
    if not s["adaptive-tx"]:
        parts += [f"tx-usecs {s['tx-usecs']}", f"tx-frames {s['tx-frames']}"]
    return [f"ethtool -C {iface} " + " ".join(parts)]
