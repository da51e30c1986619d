"""MyAim: a small adaptive interrupt moderation written in Python, for ``holdoff battery``.

A variant of FreeBSD em's AIM (``em_newitr`` in sys/dev/e1000/if_em.c, review
D46768): the same three rates, 70 000/s for latency, 20 000/s in between and
4 000/s for bulk, but chosen from a smoothed estimate instead of one step per
interrupt. At every interrupt it takes the bytes and packets since the
previous one (the larger of RX and TX, as em_newitr does), keeps an
exponentially weighted average of bytes per interrupt (weight 1/4 for the new
sample), and picks:

- bulk (4 000/s) when the average is above 12 000 bytes an interrupt;
- latency (70 000/s) when it is below 1 000 bytes (a few small packets);
- 20 000/s otherwise.

An idle interval (no bytes) keeps the register, so an idle port reads back
the last rate chosen. The register is the ITR in 256 ns units (1e9 / (rate *
256): 55, 195, 976); the model converts it for chips that count in other
units. Try it::

    holdoff battery freebsd-aim:enable_aim=1 freebsd-aim:enable_aim=2 \
        examples/moderators/my_aim.py:MyAim --seeds 5
"""

from __future__ import annotations

import holdoff

#: Rate -> ITR [256 ns units], 1e9 / (rate * 256), truncated as EM_INTS_TO_ITR.
ITR_LATENCY = 55  # 70 000/s
ITR_LOW = 195  # 20 000/s
ITR_BULK = 976  # 4 000/s


class MyAim(holdoff.Moderator):
    """Smoothed bytes per interrupt -> one of three interrupt rates."""

    name = "my-aim"
    invocation = "per_interrupt"

    def __init__(self, weight_shift: int = 2) -> None:
        self.shift = weight_shift
        self.avg_bytes = 0
        self.itr = ITR_LOW

    def initial(self) -> dict[str, int]:
        return {"itr_256ns": self.itr}

    def on_sample(self, s: holdoff.Sample) -> dict[str, int] | None:
        nbytes = max(s.rx_bytes, s.tx_bytes)
        if nbytes == 0:
            return None  # idle: keep the register (the readback stays)
        # avg += (new - avg) / 2**shift, in integers as a driver would.
        self.avg_bytes += (nbytes - self.avg_bytes) >> self.shift
        if self.avg_bytes > 12_000:
            itr = ITR_BULK
        elif self.avg_bytes < 1_000:
            itr = ITR_LATENCY
        else:
            itr = ITR_LOW
        if itr == self.itr:
            return None
        self.itr = itr
        return {"itr_256ns": itr}
