"""The numeric warnings of a setting: ring fill and drain times, a sender's TSQ budget."""

from __future__ import annotations

from holdoff.knobs.base import (
    MAX_FRAME_WIRE_BYTES,
    MIN_FRAME_WIRE_BYTES,
    TSQ_BYTES_DEFAULT,
    Decoded,
    Warning,
)

# -- checks -----------------------------------------------------------------------------


def wire_ns(frames: int, wire_bytes: int, speed_mbps: int) -> float:
    """Time to carry ``frames`` frames of ``wire_bytes`` at ``speed_mbps`` [ns]."""
    return frames * wire_bytes * 8 * 1000 / speed_mbps


def check(
    decoded: Decoded,
    *,
    speed_mbps: int | None = None,
    rx_ring: int | None = None,
    tx_ring: int | None = None,
    tsq_bytes: int = TSQ_BYTES_DEFAULT,
) -> list[Warning]:
    """The numeric warnings of a setting.

    - RX: the longest time a received frame can wait for its interrupt (the
      throttle interval, or the RX delay timer if longer) against the time
      frames at line rate take to fill the RX ring;
    - TX: the longest TX completion delay against the time the TX ring lasts
      at line rate, and against a Linux sender's TSQ budget (``tsq_bytes``
      at line rate: TCP stops when that much sits below it and waits for
      completions).

    A queue that raises its event after a count of completions whatever its
    timers (mlx5's CQ count: ``rx_frames_cap``, ``tx_frames_cap``) holds a
    frame at line rate no longer than that many frames take to arrive.

    A static interval is checked with minimum-size frames (the worst case).
    An adaptive mode picks its shortest interval for small packets and its
    longest for bulk traffic, so its shortest interval is checked with
    64-byte frames and its longest with full-size ones (and against TSQ)."""
    c = decoded.chip
    speed = speed_mbps or c.link_mbps
    rx_ring = rx_ring or c.rx_ring
    tx_ring = tx_ring or c.tx_ring
    key = _main_key(decoded.driver)
    lo, hi = decoded.throttle_ns or (0, 0)
    if decoded.mode == "adaptive":
        cases = [
            (lo, MIN_FRAME_WIRE_BYTES, "64-byte", "the adaptive mode's shortest interval"),
            (hi, MAX_FRAME_WIRE_BYTES, "full-size", "the adaptive mode's longest interval"),
        ]
    else:
        cases = [(hi, MIN_FRAME_WIRE_BYTES, "64-byte", "the interval")]
    out: list[Warning] = []
    for interval, wire, size, what in cases:
        rx_timer = max(interval, decoded.rx_delay_ns)
        rx_hold = _capped(rx_timer, decoded.rx_frames_cap, wire, speed)
        rx_what = "the RX delay timer" if decoded.rx_delay_ns > interval else what
        if rx_hold < rx_timer:
            rx_what = f"the count of {decoded.rx_frames_cap} completions at line rate"
        fill = wire_ns(rx_ring, wire, speed)
        if rx_hold > fill:
            frames = int(rx_hold // wire_ns(1, wire, speed))
            out.append(
                Warning(
                    "rx-frames" if rx_hold < rx_timer else key,
                    f"RX: {rx_what} ({rx_hold / 1000:.1f} us) is longer than the "
                    f"{fill / 1000:.1f} us in which {size} frames at {speed} Mb/s fill the "
                    f"{rx_ring}-descriptor RX ring: {frames} frames arrive per interval, so a "
                    "line-rate burst overruns the ring",
                )
            )
        tx_timer = max(interval, decoded.tx_delay_ns)
        tx_hold = _capped(tx_timer, decoded.tx_frames_cap, wire, speed)
        drain = wire_ns(tx_ring, wire, speed)
        if tx_hold > drain:
            tx_what = "the TX delay timer" if decoded.tx_delay_ns > interval else what
            if tx_hold < tx_timer:
                tx_what = f"the count of {decoded.tx_frames_cap} completions at line rate"
            out.append(
                Warning(
                    key,
                    f"TX: completions can wait {tx_hold / 1000:.1f} us ({tx_what}), longer than "
                    f"the {drain / 1000:.1f} us the {tx_ring}-descriptor TX ring lasts with "
                    f"{size} frames at {speed} Mb/s: a sender runs out of descriptors before "
                    "they are reclaimed",
                )
            )
    tx_hold = _capped(
        max(hi, decoded.tx_delay_ns), decoded.tx_frames_cap, MAX_FRAME_WIRE_BYTES, speed
    )
    tsq = tsq_bytes * 8 * 1000 / speed
    if tx_hold > tsq:
        out.append(
            Warning(
                key,
                f"TX: completions can wait {tx_hold / 1000:.1f} us, longer than the "
                f"{tsq / 1000:.1f} us a Linux sender's output limit covers at {speed} Mb/s "
                f"(tcp_limit_output_bytes {tsq_bytes} B): a single TCP flow stalls between "
                "completions",
            )
        )
    return out


def _capped(hold_ns: float, cap: int, wire_bytes: int, speed_mbps: int) -> float:
    """``hold_ns``, or the time ``cap`` frames of ``wire_bytes`` take at line
    rate if that is shorter (``cap`` 0: no count)."""
    if cap <= 0:
        return hold_ns
    return min(hold_ns, wire_ns(cap, wire_bytes, speed_mbps))


def _main_key(driver: str) -> str:
    return {
        "freebsd-em": "enable_aim",
        "freebsd-igb": "enable_aim",
        "openbsd-em": "MAX_INTS_PER_SEC",
        "linux-dim": "adaptive-rx",
        "linux-e1000-5x": "InterruptThrottleRate",
    }.get(driver, "rx-usecs")
