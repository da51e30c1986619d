"""The side effects of a Linux ixgbe setting that ``holdoff explain`` warns about:
the interface resets that ``ethtool -C rx-usecs`` can trigger, and the per-queue
drop rule that several queues bring.

Sources (Linux ``drivers/net/ethernet/intel/ixgbe/``):

- RSC: ``ixgbe_ethtool.c`` ``ixgbe_update_rsc`` keeps hardware receive-side
  coalescing (RSC, shown as LRO) on only while ``rx_itr_setting`` is 1
  (adaptive) or above ``IXGBE_MIN_RSC_ITR`` 24 (``ixgbe.h``), i.e. rx-usecs 7
  or more; a setting that turns it off (or back on) makes ``ixgbe_set_coalesce``
  call ``ixgbe_do_reset``. RSC exists on the 82599 and later, not on the
  82598 (``IXGBE_FLAG2_RSC_CAPABLE``), and only matters while LRO is on.
- TX write-back: with ``CONFIG_BQL``, ``ixgbe_configure_tx_ring`` writes
  ``TXDCTL.WTHRESH`` 1 when the vector's ``itr`` is below ``IXGBE_100K_ITR``
  40 (under 10 us, off included) and 8 otherwise; ``ixgbe_set_coalesce`` resets
  the interface when a new setting crosses that boundary (from adaptive or 10 us
  and above to below 10 us, or back).
- DROP_EN: ``ixgbe_main.c`` ``ixgbe_set_rx_drop_en`` sets ``SRRCTL.DROP_EN`` on
  every RX queue when SR-IOV is on, or when there is more than one RX queue and
  the port sends no PAUSE frames (``fc.current_mode`` without TX pause) and PFC
  is off: a full ring then drops its own frames instead of holding them in the
  shared packet buffer, which would back-pressure every queue.

Simplifies: SR-IOV and PFC (DCB) are taken as off; whether LRO is on is not
known from ``ethtool -c`` (the warning says how to check); the previous
setting is taken as the driver's default (adaptive) unless the caller gives it.
Units: rx-usecs [us]; ``itr`` values in the driver's ``usecs << 2`` encoding.
"""

from __future__ import annotations

from holdoff.knobs.base import Decoded, Warning
from holdoff.knobs.channels import Channels, Pause

#: ixgbe.h: the RSC floor and the 100K-interrupts/s boundary [usecs << 2].
IXGBE_MIN_RSC_ITR = 24
IXGBE_100K_ITR = 40


def itr_setting(rx_usecs: int) -> int:
    """``ixgbe_set_coalesce``: ``rx_itr_setting`` = usecs << 2 above 1, else usecs."""
    return rx_usecs << 2 if rx_usecs > 1 else rx_usecs


def rsc_on(setting: int) -> bool:
    """``ixgbe_update_rsc``: whether RSC stays on at ``rx_itr_setting``."""
    return setting == 1 or setting > IXGBE_MIN_RSC_ITR


def wthresh_one(setting: int) -> bool:
    """Whether TX write-back runs one descriptor at a time (WTHRESH 1) under BQL:
    the setting is not adaptive and below ``IXGBE_100K_ITR`` (under 10 us)."""
    return setting != 1 and setting < IXGBE_100K_ITR


def resets(decoded: Decoded, previous_rx_usecs: int = 1) -> bool:
    """Whether ``ixgbe_set_coalesce`` resets the interface going from
    ``previous_rx_usecs`` to ``decoded``'s rx-usecs (RSC on/off on the 82599
    and later while LRO is on; the TX write-back threshold with BQL)."""
    if decoded.driver != "linux-ixgbe":
        return False
    new = itr_setting(decoded.settings.get("rx-usecs", 1))
    old = itr_setting(previous_rx_usecs)
    rsc = decoded.chip.name != "82598" and rsc_on(new) != rsc_on(old)
    return rsc or wthresh_one(new) != wthresh_one(old)


def ixgbe_warnings(
    decoded: Decoded,
    channels: Channels | None = None,
    pause: Pause | None = None,
    *,
    previous_rx_usecs: int = 1,
) -> list[Warning]:
    """The reset and drop-rule warnings of ``decoded`` (a ``linux-ixgbe``
    decode; other drivers get none), against ``previous_rx_usecs``."""
    if decoded.driver != "linux-ixgbe":
        return []
    out: list[Warning] = []
    u = decoded.settings.get("rx-usecs", 1)
    new, old = itr_setting(u), itr_setting(previous_rx_usecs)
    if decoded.chip.name != "82598" and rsc_on(new) != rsc_on(old):
        turns = "off" if not rsc_on(new) else "back on"
        out.append(
            Warning(
                "rx-usecs",
                f"rx-usecs {u} turns RSC (hardware LRO) {turns}: ixgbe keeps it only with "
                "adaptive (1) or 7 us and more (ixgbe_update_rsc: setting above "
                "IXGBE_MIN_RSC_ITR 24); when LRO is on (ethtool -k IFACE: "
                "large-receive-offload: on) ixgbe_set_coalesce then resets the interface "
                "(ixgbe_do_reset: the link drops and traffic stops for the reset)",
            )
        )
    if wthresh_one(new) != wthresh_one(old):
        side = "below" if wthresh_one(new) else "back to or above"
        how = (
            "one at a time (TXDCTL.WTHRESH 1)"
            if wthresh_one(new)
            else "in batches of 8 (TXDCTL.WTHRESH 8)"
        )
        out.append(
            Warning(
                "rx-usecs",
                f"rx-usecs {u} moves the interval {side} 10 us (IXGBE_100K_ITR): with BQL "
                "(CONFIG_BQL, on in distribution kernels) ixgbe writes TX descriptors back "
                f"{how} and ixgbe_set_coalesce resets the interface to apply it (ixgbe_do_reset)",
            )
        )
    if channels is not None and channels.rx_queues > 1:
        n = channels.rx_queues
        sends = None if pause is None else pause.sends_pause
        if sends is False:
            out.append(
                Warning(
                    "queues",
                    f"{n} RX queues and no TX flow control (ethtool -a: TX off): "
                    "ixgbe_set_rx_drop_en sets DROP_EN on every queue, so a queue whose "
                    "ring is full drops its own frames while the other queues keep "
                    "receiving; a core that falls behind loses its queue's share",
                )
            )
        elif sends is True:
            out.append(
                Warning(
                    "queues",
                    f"{n} RX queues with TX flow control on (ethtool -a: TX on): DROP_EN stays "
                    "off (ixgbe_set_rx_drop_en), so one full ring holds frames in the shared "
                    "packet buffer; when that fills the port sends PAUSE and every queue "
                    "waits (head-of-line blocking), or the buffer drops for all queues",
                )
            )
        else:
            out.append(
                Warning(
                    "queues",
                    f"{n} RX queues: whether a full ring drops alone depends on flow control "
                    "(ixgbe_set_rx_drop_en sets DROP_EN on every queue when the port sends no "
                    "PAUSE frames); give ethtool -a IFACE output to know which",
                )
            )
    return out


__all__ = [
    "IXGBE_100K_ITR",
    "IXGBE_MIN_RSC_ITR",
    "itr_setting",
    "ixgbe_warnings",
    "resets",
    "rsc_on",
    "wthresh_one",
]
