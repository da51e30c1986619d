"""Knob values -> what the device applies, for every driver."""

from __future__ import annotations

from collections.abc import Mapping

from holdoff.knobs.base import Decoded, KnobError, _Ctx
from holdoff.knobs.bsd import _decode_freebsd, _decode_openbsd
from holdoff.knobs.cq_drivers import ENA_SUPPORTED, UNSUPPORTED, decode_ena, decode_mlx5
from holdoff.knobs.intel_itr import decode_intel_itr
from holdoff.knobs.linux import (
    _decode_dim,
    _decode_e1000,
    _decode_e1000_5x,
    _decode_igb,
    _decode_ixgbe,
    _napi,
)
from holdoff.knobs.tables import chip_for, defaults


def decode(driver: str, settings: Mapping[str, int], chip: str | None = None) -> Decoded:
    """Knob values -> what the device applies. Keys not given take the driver's
    default; an unknown key or a value the driver refuses raises :class:`KnobError`."""
    c = chip_for(driver, chip)
    known = defaults(driver)
    for key in settings:
        if (
            driver == "linux-ena"
            and key not in known
            and key.startswith(("rx-", "tx-", "adaptive", "cqe"))
        ):
            raise KnobError(
                key,
                f"{UNSUPPORTED}: ena's supported_coalesce_params are USECS | USE_ADAPTIVE_RX "
                f"({', '.join(ENA_SUPPORTED)}); drop {key}",
            )
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
    elif driver in ("linux-ice", "linux-i40e"):
        out = decode_intel_itr(ctx)
    elif driver == "linux-mlx5":
        out = decode_mlx5(ctx)
    elif driver == "linux-ena":
        out = decode_ena(ctx)
    elif driver in ("freebsd-em", "freebsd-igb"):
        out = _decode_freebsd(ctx)
    else:
        out = _decode_openbsd(ctx)
    if driver.startswith("linux-") and driver != "linux-e1000-5x":
        _napi(ctx, out)
    return out
